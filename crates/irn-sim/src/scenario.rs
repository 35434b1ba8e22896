//! Scenario files: TOML in, validated [`SimConfig`]s out.
//!
//! A scenario describes one network and workload, and optionally a list of `[[compare]]`
//! variants that each override a few keys (e.g. IRN without PFC against RoCE with PFC). Keys
//! can also be overridden from the command line (`--set transport.kind=roce`). Every key has a
//! default from the IRN paper's default case, so an empty file is a valid scenario.
//!
//! Checking happens in two passes: serde with `deny_unknown_fields` catches misspelled keys and
//! wrong types (with the line in the user's file), then validation turns strings like `"40Gbps"`
//! into typed values and checks ranges, naming the file, key, value and what is allowed.

use std::path::{Path, PathBuf};

use irn_core::ordering::OrderingMode;
use irn_core::{Bandwidth, Duration, Time};
use serde::{Deserialize, Serialize};

use crate::config::{InitialPsn, SimConfig, SwitchConfig, DEFAULT_FCT_SIZE_BUCKETS};
use crate::ids::HostIdx;
use crate::units::Bytes;
use crate::workload::{self, Cdf, FlowSpec, SizeDist, VerbMix};

mod error;
mod load_balancing;
mod ordering;
mod overrides;
mod switch;
mod topology;
mod transport;

pub use error::ScenarioError;
pub use load_balancing::{BalancerKind, LoadBalancingSection};
pub use ordering::{Cap, OrderingKind, OrderingSection};
pub use switch::{SwitchModelKind, SwitchSection};
pub use topology::{TopologyKind, TopologySection};
pub use transport::{CcKind, TransportKind, TransportSection};

use error::{check_keys, invalid, parse_key, require};
use overrides::{parse_override, set_dotted};

/// A scenario as written, every key defaulted. Serialized back into `summary.json` as the
/// resolved scenario.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScenarioFile {
    pub name: String,
    /// Seeds every random stream of the run.
    pub seed: u64,
    pub topology: TopologySection,
    pub switch: SwitchSection,
    pub load_balancing: LoadBalancingSection,
    pub ordering: OrderingSection,
    pub transport: TransportSection,
    pub workload: WorkloadSection,
    pub run: RunSection,
    /// Variants to compare; each overrides keys of the scenario above.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compare: Vec<VariantSection>,
}

impl Default for ScenarioFile {
    fn default() -> Self {
        ScenarioFile {
            name: "scenario".into(),
            seed: 1,
            topology: TopologySection::default(),
            switch: SwitchSection::default(),
            load_balancing: LoadBalancingSection::default(),
            ordering: OrderingSection::default(),
            transport: TransportSection::default(),
            workload: WorkloadSection::default(),
            run: RunSection::default(),
            compare: Vec::new(),
        }
    }
}

/// Where flows come from. Keys that do not apply to the chosen `kind` are rejected.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSection {
    #[serde(default)]
    pub kind: WorkloadKind,
    /// poisson: offered load as a fraction of each host's line rate (default 0.7).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    /// poisson: flow sizes (default the IRN distribution).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sizes: Option<SizesSection>,
    /// poisson: arrivals happen during this long (default 5ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
    /// incast: how many hosts send.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub senders: Option<u32>,
    /// incast: bytes striped over the senders (default 150MB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<String>,
    /// incast: the receiving host's index (default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receiver: Option<u32>,
    /// incast: cross traffic — Poisson arrivals of the IRN sizes at this load around the incast
    /// (IRN §4.4.3 uses 0.5); none by default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background_load: Option<f64>,
    /// incast: how long the cross traffic's arrivals last (default 10ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background_duration: Option<String>,
    /// trace: a CSV file with columns `src,dst,size_bytes,start_ns`; ns3: an ns-3 flow file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Any kind: make every flow one RDMA verb on verbs queue pairs, drawn with these weights
    /// (IRN §5); without it, every flow is one message on the transport alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verbs: Option<VerbsMixSection>,
}

/// `workload.verbs`: relative weights of the verbs; missing ones are 0.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerbsMixSection {
    #[serde(default)]
    pub write: f64,
    #[serde(default)]
    pub write_imm: f64,
    #[serde(default)]
    pub read: f64,
    #[serde(default)]
    pub send: f64,
    #[serde(default)]
    pub atomic: f64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadKind {
    /// Poisson arrivals at every host, uniform random destinations (IRN §4.1).
    #[default]
    Poisson,
    /// `senders` hosts send `total` bytes between them to one receiver (IRN §4.4.3).
    Incast,
    /// Replay a CSV trace.
    Trace,
    /// Replay an ns-3 flow file (HPCC 6-column or ConWeave 5-column; node ids as in the
    /// topology file).
    Ns3,
}

impl Default for WorkloadSection {
    fn default() -> Self {
        WorkloadSection {
            kind: WorkloadKind::Poisson,
            load: Some(0.7),
            sizes: Some(SizesSection::IrnDefault),
            duration: Some("5ms".into()),
            senders: None,
            total: None,
            receiver: None,
            background_load: None,
            background_duration: None,
            file: None,
            verbs: None,
        }
    }
}

impl WorkloadSection {
    /// Fills the kind's defaults; rejects keys of other kinds and missing required ones.
    fn normalize(&mut self, file: &str) -> Result<(), ScenarioError> {
        let (poisson, incast, trace) = (
            self.kind == WorkloadKind::Poisson,
            self.kind == WorkloadKind::Incast,
            matches!(self.kind, WorkloadKind::Trace | WorkloadKind::Ns3),
        );
        let kind = match self.kind {
            WorkloadKind::Poisson => "poisson",
            WorkloadKind::Incast => "incast",
            WorkloadKind::Trace => "trace",
            WorkloadKind::Ns3 => "ns3",
        };
        let keys = [
            ("load", self.load.is_some(), poisson),
            ("sizes", self.sizes.is_some(), poisson),
            ("duration", self.duration.is_some(), poisson),
            ("senders", self.senders.is_some(), incast),
            ("total", self.total.is_some(), incast),
            ("receiver", self.receiver.is_some(), incast),
            ("background_load", self.background_load.is_some(), incast),
            (
                "background_duration",
                self.background_duration.is_some(),
                incast && self.background_load.is_some(),
            ),
            ("file", self.file.is_some(), trace),
        ];
        check_keys(file, ("workload", "kind"), kind, &keys)?;
        match self.kind {
            WorkloadKind::Poisson => {
                self.load.get_or_insert(0.7);
                self.sizes.get_or_insert(SizesSection::IrnDefault);
                self.duration.get_or_insert_with(|| "5ms".into());
            }
            WorkloadKind::Incast => {
                require(file, "workload.senders", kind, self.senders.is_some())?;
                self.total.get_or_insert_with(|| "150MB".into());
                self.receiver.get_or_insert(0);
                if self.background_load.is_some() {
                    self.background_duration
                        .get_or_insert_with(|| "10ms".into());
                }
            }
            WorkloadKind::Trace | WorkloadKind::Ns3 => {
                require(file, "workload.file", kind, self.file.is_some())?
            }
        }
        Ok(())
    }
}

/// A flow-size distribution.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SizesSection {
    /// The IRN default heavy-tailed distribution (`data/cdf/irn_default.txt`).
    #[default]
    IrnDefault,
    /// A CDF file (HPCC percent or TLT fraction format).
    Cdf(String),
    /// Uniform between two sizes, e.g. `["500KB", "5MB"]`.
    Uniform([String; 2]),
    /// Every flow the same size.
    Fixed(String),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunSection {
    /// Flows starting before this are simulated but not measured.
    pub warmup: String,
    /// Stop this long after the last flow starts even if flows remain (reported incomplete).
    pub drain_limit: String,
    /// Upper edges of `summary.json`'s `fct_by_size` buckets, increasing sizes such as
    /// `["10KB", "100KB", "1MB"]`; absent: those, [`DEFAULT_FCT_SIZE_BUCKETS`]. Left out of
    /// the resolved scenario when absent, so runs of earlier versions still resume.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fct_size_buckets: Option<Vec<String>>,
}

impl Default for RunSection {
    fn default() -> Self {
        RunSection {
            warmup: "0us".into(),
            drain_limit: "100ms".into(),
            fct_size_buckets: None,
        }
    }
}

/// One `[[compare]]` entry.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantSection {
    pub name: String,
    /// Dotted keys and their values, e.g. `{ "switch.pfc" = true }`.
    #[serde(default)]
    pub set: toml::Table,
}

/// A loaded, validated run: one per `[[compare]]` variant (or one for a plain scenario).
#[derive(Debug)]
pub struct Run {
    /// The variant's name, or the scenario's when there are no variants.
    pub name: String,
    /// The scenario with every default filled in and every override applied.
    pub resolved: ScenarioFile,
    pub config: SimConfig,
}

/// The scenario's name and its runs.
#[derive(Debug)]
pub struct Scenario {
    pub name: String,
    pub runs: Vec<Run>,
}

/// Loads a scenario file, applying `overrides` (`key=value`) to every run, after (and so
/// over) each variant's own settings.
pub fn load(path: &Path, overrides: &[String]) -> Result<Scenario, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|error| ScenarioError::Read {
        file: path.display().to_string(),
        error,
    })?;
    let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    parse(&text, &path.display().to_string(), &base_dir, overrides)
}

/// Parses scenario text. `file` names it in errors; relative data paths resolve against `base_dir`.
pub fn parse(
    text: &str,
    file: &str,
    base_dir: &Path,
    overrides: &[String],
) -> Result<Scenario, ScenarioError> {
    let syntax = |message: String| ScenarioError::Syntax {
        file: file.to_string(),
        message,
    };
    // First pass on the text as written, so misspelled keys are reported at their line.
    let mut written: ScenarioFile = toml::from_str(text).map_err(|e| syntax(e.to_string()))?;
    let mut table: toml::Table = toml::from_str(text).map_err(|e| syntax(e.to_string()))?;
    table.remove("compare");
    let overrides = overrides
        .iter()
        .map(|o| parse_override(o).map_err(|m| syntax(format!("--set {o}: {m}"))))
        .collect::<Result<Vec<_>, _>>()?;
    for (key, value) in &overrides {
        // The variants are read from the file before any override applies.
        if key == "compare" || key.starts_with("compare.") {
            return Err(syntax(format!(
                "--set {key}: the variants are the file's [[compare]] tables; --set cannot \
                 change them (it applies to every variant)"
            )));
        }
        // The name also names the results folder, and a plain scenario's one run.
        if key == "name" {
            written.name = value
                .as_str()
                .ok_or_else(|| syntax(format!("--set name: expected a string, got {value}")))?
                .to_string();
        }
    }
    let compare = !written.compare.is_empty();
    let variants = if !compare {
        vec![VariantSection {
            name: written.name.clone(),
            set: toml::Table::new(),
        }]
    } else {
        written.compare.clone()
    };
    // The file's table with a variant's keys, then the command line's (which win over the
    // file, variants included), checked and built.
    let build =
        |name: &str, set: &toml::Table| -> Result<(ScenarioFile, SimConfig), ScenarioError> {
            let mut t = table.clone();
            for (key, value) in set {
                set_dotted(&mut t, key, value.clone())
                    .map_err(|m| syntax(format!("variant `{name}`: {key}: {m}")))?;
            }
            for (key, value) in &overrides {
                set_dotted(&mut t, key, value.clone())
                    .map_err(|m| syntax(format!("--set {key}: {m}")))?;
            }
            // The merged table has no source text to point into, so an error names the key's path
            // instead (a value set by a variant or by `--set` has no line of its own).
            let mut resolved: ScenarioFile =
                serde_path_to_error::deserialize(toml::Value::Table(t)).map_err(|e| {
                    let at = e.path().to_string();
                    let message = format!("{at}: {}", e.into_inner().message());
                    if compare {
                        syntax(format!("variant `{name}`: {message}"))
                    } else {
                        syntax(message)
                    }
                })?;
            resolved.topology.normalize(file)?;
            resolved.switch.normalize(file)?;
            resolved.load_balancing.normalize(file)?;
            resolved.ordering.normalize(file)?;
            resolved.workload.normalize(file)?;
            let config = validate(&resolved, file, base_dir)?;
            Ok((resolved, config))
        };
    let mut seen = std::collections::BTreeSet::new();
    let mut runs = Vec::with_capacity(variants.len());
    for v in variants {
        if !seen.insert(v.name.clone()) {
            return Err(invalid(
                file,
                "compare.name",
                &v.name,
                "variant names must be unique",
            ));
        }
        let (resolved, config) = match build(&v.name, &v.set) {
            Ok(built) => built,
            // A value only this variant makes invalid (a key its transport does not take,
            // say) names the variant; one every variant shares is reported as it is.
            Err(e @ ScenarioError::Invalid { .. })
                if compare && build(&v.name, &toml::Table::new()).is_ok() =>
            {
                return Err(e.in_variant(&v.name));
            }
            Err(e) => return Err(e),
        };
        runs.push(Run {
            name: v.name,
            resolved,
            config,
        });
    }
    Ok(Scenario {
        name: written.name,
        runs,
    })
}

/// Largest flow: the RDMA message limit (2 GiB).
const MAX_FLOW_BYTES: u64 = 1 << 31;

/// Turns a resolved, normalized scenario into a runnable configuration.
fn validate(s: &ScenarioFile, file: &str, base_dir: &Path) -> Result<SimConfig, ScenarioError> {
    let topology = topology::build(&s.topology, file, base_dir)?;
    let buffer = switch::buffer(s, file)?;
    let t = &s.transport;
    let extra_header_bytes = transport::extra_header_bytes(t, file)?;
    let verbs = verbs_mix(s, file, extra_header_bytes)?;
    let ordering = s.ordering.to_ordering(file)?;
    if ordering.mode != OrderingMode::None {
        let kind = format!("\"{}\"", s.ordering.kind_name());
        if t.kind == TransportKind::Tcp {
            return Err(invalid(file, "ordering.kind", &kind,
                "an ordering layer runs under the RDMA transports (irn, roce and their variants), not tcp"));
        }
        if verbs.is_some() {
            return Err(invalid(
                file,
                "ordering.kind",
                &kind,
                "not yet with workload.verbs: the ordering layer sits under message flows only",
            ));
        }
    }
    // The layer's per-packet metadata travels like any extra header.
    let extra_header_bytes = extra_header_bytes + ordering.mode.metadata_bytes();
    let verbs_irn_headers = t.kind != TransportKind::Roce;
    let max_frame = crate::config::max_frame_bytes(
        t.mtu,
        extra_header_bytes,
        verbs.is_some() && verbs_irn_headers,
    );
    let (pfc, pfc_drops) = switch::pfc(s, file, &topology, &buffer, max_frame)?;
    let (transport, ecn) =
        transport::build(s, file, &topology, extra_header_bytes, max_frame, pfc_drops)?;
    let host_rate = topology.min_host_rate();
    let hosts = topology.hosts().len() as u32;
    let w = &s.workload;
    let flows = match w.kind {
        WorkloadKind::Poisson => {
            let load = w.load.unwrap_or(0.7);
            if !(load > 0.0 && load <= 1.0) {
                return Err(invalid(
                    file,
                    "workload.load",
                    &load.to_string(),
                    "a fraction of line rate in (0, 1]",
                ));
            }
            let duration_text = w.duration.as_deref().unwrap_or("5ms");
            let duration = parse_key::<Duration>(file, "workload.duration", duration_text)?;
            if duration == Duration::ZERO {
                return Err(invalid(
                    file,
                    "workload.duration",
                    &format!("{duration_text:?}"),
                    "must be longer than zero",
                ));
            }
            let dist = size_dist(
                w.sizes.as_ref().unwrap_or(&SizesSection::IrnDefault),
                file,
                base_dir,
            )?;
            check_flow_count(
                file,
                ("workload.duration", duration_text),
                (hosts, host_rate, load),
                &dist,
                duration,
            )?;
            let flows = workload::poisson(hosts, host_rate, load, &dist, duration, s.seed);
            require_flows(
                file,
                ("workload.duration", duration_text),
                "no flow starts within it at this load; lengthen it",
                flows,
            )?
        }
        WorkloadKind::Incast => {
            let senders = w.senders.unwrap_or(0);
            let total = w.total.as_deref().unwrap_or("150MB");
            let receiver = w.receiver.unwrap_or(0);
            let total_bytes = parse_key::<Bytes>(file, "workload.total", total)?.0;
            if receiver >= hosts {
                return Err(invalid(
                    file,
                    "workload.receiver",
                    &receiver.to_string(),
                    &format!("a host index below {hosts}"),
                ));
            }
            let mut flows = workload::incast(
                hosts,
                HostIdx(receiver),
                senders,
                total_bytes,
                Time::ZERO,
                s.seed,
            )
            .map_err(|e| {
                invalid(
                    file,
                    "workload.senders",
                    &senders.to_string(),
                    &e.to_string(),
                )
            })?;
            if let Some(load) = w.background_load {
                if !(load > 0.0 && load <= 1.0) {
                    return Err(invalid(
                        file,
                        "workload.background_load",
                        &load.to_string(),
                        "a fraction of line rate in (0, 1]",
                    ));
                }
                let text = w.background_duration.as_deref().unwrap_or("10ms");
                let duration = parse_key::<Duration>(file, "workload.background_duration", text)?;
                let sizes = SizeDist::Cdf(Cdf::irn_default());
                check_flow_count(
                    file,
                    ("workload.background_duration", text),
                    (hosts, host_rate, load),
                    &sizes,
                    duration,
                )?;
                flows.extend(workload::poisson(
                    hosts, host_rate, load, &sizes, duration, s.seed,
                ));
                flows.sort_by_key(|f| f.start);
            }
            flows
        }
        WorkloadKind::Trace => {
            let trace = w.file.as_deref().unwrap_or("");
            let flows = workload::trace_csv(&resolve(base_dir, trace), hosts).map_err(|e| {
                invalid(file, "workload.file", &format!("{trace:?}"), &e.to_string())
            })?;
            require_flows(
                file,
                ("workload.file", trace),
                "the file lists no flows",
                flows,
            )?
        }
        WorkloadKind::Ns3 => {
            let name = w.file.as_deref().unwrap_or("");
            let flows =
                workload::ns3::read_flows(&resolve(base_dir, name), &topology).map_err(|e| {
                    invalid(file, "workload.file", &format!("{name:?}"), &e.to_string())
                })?;
            require_flows(
                file,
                ("workload.file", name),
                "the file lists no flows",
                flows,
            )?
        }
    };
    if let Some(big) = flows.iter().find(|f| f.size_bytes > MAX_FLOW_BYTES) {
        return Err(invalid(
            file,
            "workload",
            &format!("a flow of {} bytes", big.size_bytes),
            "flows are at most 2 GiB (the RDMA message limit)",
        ));
    }
    let mut flows = flows;
    if let Some(mix) = verbs {
        mix.assign(&mut flows, s.seed);
    }

    let warmup = parse_key::<Duration>(file, "run.warmup", &s.run.warmup)?;
    let drain_limit = parse_key::<Duration>(file, "run.drain_limit", &s.run.drain_limit)?;
    let fct_size_buckets = fct_size_buckets(file, s.run.fct_size_buckets.as_deref())?;
    Ok(SimConfig {
        seed: s.seed,
        topology,
        switch: SwitchConfig {
            model: buffer.model,
            buffer_bytes: buffer.bytes,
            pfc,
            ecn,
        },
        transport,
        flows,
        warmup,
        drain_limit,
        extra_header_bytes,
        verbs_irn_headers,
        initial_psn: InitialPsn::Seeded,
        load_balancing: s.load_balancing.to_balancing(file)?,
        fct_size_buckets,
        ordering,
    })
}

/// `run.fct_size_buckets` as byte edges: positive and increasing.
fn fct_size_buckets(file: &str, edges: Option<&[String]>) -> Result<Vec<u64>, ScenarioError> {
    let Some(edges) = edges else {
        return Ok(DEFAULT_FCT_SIZE_BUCKETS.to_vec());
    };
    let key = "run.fct_size_buckets";
    let mut bytes: Vec<u64> = Vec::with_capacity(edges.len());
    for text in edges {
        let b = parse_key::<Bytes>(file, key, text)?.0;
        if b == 0 || bytes.last().is_some_and(|&prev| b <= prev) {
            return Err(invalid(
                file,
                key,
                &format!("{edges:?}"),
                "sizes above 0 B in increasing order (each a bucket's largest flow)",
            ));
        }
        bytes.push(b);
    }
    Ok(bytes)
}

/// `workload.verbs`, checked against the rest of the scenario: verbs run on the RDMA transports
/// and count their real headers.
fn verbs_mix(
    s: &ScenarioFile,
    file: &str,
    extra_header_bytes: u32,
) -> Result<Option<VerbMix>, ScenarioError> {
    let Some(m) = s.workload.verbs else {
        return Ok(None);
    };
    let t = &s.transport;
    let key = "workload.verbs";
    let shown = format!(
        "{{ write = {}, write_imm = {}, read = {}, send = {}, atomic = {} }}",
        m.write, m.write_imm, m.read, m.send, m.atomic
    );
    let mix = VerbMix::new([m.write, m.write_imm, m.read, m.send, m.atomic])
        .map_err(|e| invalid(file, key, &shown, &e.to_string()))?;
    if t.kind == TransportKind::Tcp {
        return Err(invalid(file, "transport.kind", "\"tcp\"",
            "workload.verbs needs an RDMA transport (irn, roce, irn-go-back-n, irn-without-bdp-fc, irn-without-sack)"));
    }
    if extra_header_bytes != 0 {
        return Err(invalid(file, "transport.header_overhead", &format!("{:?}", t.header_overhead),
            "\"0B\" with workload.verbs, whose packets carry IRN's real headers (16 B RETH per Write packet, 6 B per Send packet)"));
    }
    Ok(Some(mix))
}

fn resolve(base_dir: &Path, p: &str) -> PathBuf {
    let path = Path::new(p);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base_dir.join(path)
    }
}

/// `flows`, unless there are none: a run without flows measures nothing, so the key that
/// left it empty (written `text`) is named, with `why`.
fn require_flows(
    file: &str,
    (key, text): (&str, &str),
    why: &str,
    flows: Vec<FlowSpec>,
) -> Result<Vec<FlowSpec>, ScenarioError> {
    if flows.is_empty() {
        return Err(invalid(file, key, &format!("{text:?}"), why));
    }
    Ok(flows)
}

/// Rejects a Poisson workload of too many flows before generating it
/// ([`workload::poisson::too_many_flows`]), naming its duration `key` (written `text`): a
/// slip of unit there is the usual cause.
fn check_flow_count(
    file: &str,
    (key, text): (&str, &str),
    (hosts, host_rate, load): (u32, Bandwidth, f64),
    sizes: &SizeDist,
    duration: Duration,
) -> Result<(), ScenarioError> {
    match workload::poisson::too_many_flows(hosts, host_rate, load, sizes, duration) {
        Some(why) => Err(invalid(file, key, &format!("{text:?}"), &why)),
        None => Ok(()),
    }
}

fn size_dist(s: &SizesSection, file: &str, base_dir: &Path) -> Result<SizeDist, ScenarioError> {
    Ok(match s {
        SizesSection::IrnDefault => SizeDist::Cdf(Cdf::irn_default()),
        SizesSection::Cdf(p) => {
            SizeDist::Cdf(Cdf::from_file(&resolve(base_dir, p)).map_err(|e| {
                invalid(
                    file,
                    "workload.sizes.cdf",
                    &format!("{p:?}"),
                    &e.to_string(),
                )
            })?)
        }
        SizesSection::Uniform([lo, hi]) => {
            let lo_b = parse_key::<Bytes>(file, "workload.sizes.uniform", lo)?.0;
            let hi_b = parse_key::<Bytes>(file, "workload.sizes.uniform", hi)?.0;
            if lo_b == 0 || hi_b < lo_b {
                return Err(invalid(
                    file,
                    "workload.sizes.uniform",
                    &format!("[{lo}, {hi}]"),
                    "two sizes, 0 < low <= high",
                ));
            }
            SizeDist::Uniform { lo: lo_b, hi: hi_b }
        }
        SizesSection::Fixed(v) => {
            let b = parse_key::<Bytes>(file, "workload.sizes.fixed", v)?.0;
            if b == 0 {
                return Err(invalid(
                    file,
                    "workload.sizes.fixed",
                    &format!("{v:?}"),
                    "greater than zero",
                ));
            }
            SizeDist::Fixed(b)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scenario's one run, its arrivals cut to 10 us so the test builds few flows.
    pub(super) fn one(text: &str) -> Result<Run, ScenarioError> {
        let overrides = ["workload.duration=10us".to_string()];
        parse(text, "t.toml", Path::new("."), &overrides).map(|mut s| s.runs.remove(0))
    }

    #[test]
    fn fct_size_buckets_are_increasing_sizes() {
        let default = one("").unwrap();
        assert_eq!(default.config.fct_size_buckets, DEFAULT_FCT_SIZE_BUCKETS);
        let set = one("[run]\nfct_size_buckets = [\"1KB\", \"64KiB\", \"2MB\"]\n").unwrap();
        assert_eq!(set.config.fct_size_buckets, [1_000, 65_536, 2_000_000]);
        assert_eq!(
            one("[run]\nfct_size_buckets = []\n")
                .unwrap()
                .config
                .fct_size_buckets,
            [0u64; 0]
        );
        let cases = [
            ("[\"10KB\", \"10KB\"]", "t.toml: run.fct_size_buckets = [\"10KB\", \"10KB\"]: sizes above 0 B in increasing order (each a bucket's largest flow)"),
            ("[\"1MB\", \"100KB\"]", "increasing order"),
            ("[\"0B\"]", "sizes above 0 B"),
            ("[\"10 parsecs\"]", "t.toml: run.fct_size_buckets = \"10 parsecs\": "),
        ];
        for (value, want) in cases {
            let err = one(&format!("[run]\nfct_size_buckets = {value}\n"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{value}: {err}");
        }
    }

    #[test]
    fn incast_with_cross_traffic() {
        let text = "[topology]\nkind = \"star\"\nhosts = 8\n[workload]\nkind = \"incast\"\nsenders = 3\ntotal = \"300KB\"\nbackground_load = 0.3\nbackground_duration = \"200us\"\n";
        let run = parse(text, "t.toml", Path::new("."), &[])
            .unwrap()
            .runs
            .remove(0);
        let flows = &run.config.flows;
        let incast = flows
            .iter()
            .filter(|f| f.class == crate::workload::FlowClass::Incast)
            .count();
        assert_eq!(incast, 3);
        assert!(flows.len() > 10, "background flows too: {}", flows.len());
        assert!(flows.windows(2).all(|w| w[0].start <= w[1].start));
        let result = crate::run(&run.config, &mut |_| {});
        let s = &result.summary;
        assert!(
            s.background_avg_slowdown.is_some() && s.background_p99_fct_us.is_some(),
            "{s:?}"
        );
        // The RCT covers the incast flows only: at least 300 KB through one 40 Gb/s link.
        assert!(s.rct_us.is_some_and(|rct| rct >= 60.0), "{s:?}");
        let err = parse(
            "[workload]\nkind = \"incast\"\nsenders = 3\nbackground_duration = \"1ms\"\n",
            "t.toml",
            Path::new("."),
            &[],
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("workload.background_duration = (set)"),
            "{err}"
        );
    }

    #[test]
    fn a_workload_of_more_than_ten_million_flows_is_refused_before_it_is_generated() {
        // The default's 54 hosts at 70 % of 40 Gb/s with a 200 kB mean start about 940 000
        // flows a second: 11 s is over the limit, 10 s under it (not generated here).
        let parse_with = |set: &[&str]| {
            let overrides: Vec<String> = set.iter().map(|s| s.to_string()).collect();
            parse("", "t.toml", Path::new("."), &overrides).map(|_| ())
        };
        let err = parse_with(&["workload.duration=\"11s\""])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("t.toml: workload.duration = \"11s\": would start about 10.4 million flows (54 hosts at 0.7 of 40Gbps"),
            "{err}"
        );
        assert!(err.contains("at most 10 million per run"), "{err}");
        let err = parse_with(&[
            "workload.kind=\"incast\"",
            "workload.senders=3",
            "workload.background_load=0.5",
            "workload.background_duration=\"1000s\"",
        ])
        .unwrap_err()
        .to_string();
        assert!(
            err.contains(
                "workload.background_duration = \"1000s\": would start about 672.6 million flows"
            ),
            "{err}"
        );
    }

    #[test]
    fn set_renames_the_scenario_but_cannot_change_its_variants() {
        let set = |o: &[&str]| {
            let o: Vec<String> = o.iter().map(|s| s.to_string()).collect();
            parse("name = \"a\"\n", "t.toml", Path::new("."), &o)
        };
        let sc = set(&["workload.duration=\"20us\"", "name=\"b\""]).unwrap();
        assert_eq!(sc.name, "b");
        assert_eq!(sc.runs[0].name, "b");
        for key in ["compare=[]", "compare.name=\"x\""] {
            let err = set(&[key]).unwrap_err().to_string();
            assert!(err.contains("--set cannot change them"), "{key}: {err}");
        }
        let err = set(&["name=5"]).unwrap_err().to_string();
        assert!(
            err.contains("--set name: expected a string, got 5"),
            "{err}"
        );
    }

    #[test]
    fn an_error_of_one_variants_making_names_the_variant() {
        let text = "[[compare]]\nname = \"irn\"\n[[compare]]\nname = \"roce\"\n\
                    set = { \"transport.kind\" = \"roce\" }\n";
        let set = |o: &str| {
            let o = ["workload.duration=\"20us\"".to_string(), o.to_string()];
            parse(text, "t.toml", Path::new("."), &o)
                .unwrap_err()
                .to_string()
        };
        let err = set("transport.bdp_cap=5");
        assert!(
            err.starts_with("t.toml: variant `roce`: transport.bdp_cap = 5: BDP-FC is not part"),
            "{err}"
        );
        let err = set("workload.load=2");
        assert!(err.starts_with("t.toml: workload.load = 2: "), "{err}");
    }

    #[test]
    fn a_workload_without_flows_is_an_error() {
        let err = parse(
            "",
            "t.toml",
            Path::new("."),
            &["workload.duration=\"1ns\"".into()],
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("t.toml: workload.duration = \"1ns\": no flow starts within it"),
            "{err}"
        );
        let dir = std::env::temp_dir().join(format!("irn-empty-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("t.csv"), "src,dst,size_bytes,start_ns\n").unwrap();
        std::fs::write(dir.join("f.txt"), "0\n").unwrap();
        let topo = "3 1 2\n0\n1 0 100Gbps 1us 0\n2 0 100Gbps 1us 0\n";
        std::fs::write(dir.join("topo.txt"), topo).unwrap();
        for (kind, name) in [("trace", "t.csv"), ("ns3", "f.txt")] {
            let mut text = format!("[workload]\nkind = \"{kind}\"\nfile = \"{name}\"\n");
            if kind == "ns3" {
                text += "[topology]\nfile = \"topo.txt\"\n";
            }
            let err = parse(&text, "t.toml", &dir, &[]).unwrap_err().to_string();
            assert!(
                err.contains(&format!(
                    "workload.file = \"{name}\": the file lists no flows"
                )),
                "{err}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
