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

use irn_core::cc::CcConfig;
use irn_core::ordering::OrderingMode;
use irn_core::transport::{RtoBackoff, RtoPolicy, TransportConfig};
use irn_core::{Bandwidth, Duration, Time};
use serde::{Deserialize, Serialize};

use crate::config::{
    bdp_cap_packets, EcnConfig, InitialPsn, SimConfig, SwitchConfig, DEFAULT_FCT_SIZE_BUCKETS,
};
use crate::ids::HostIdx;
use crate::units::Bytes;
use crate::workload::{self, Cdf, FlowSpec, SizeDist, VerbMix};

mod error;
mod load_balancing;
mod ordering;
mod overrides;
mod switch;
mod topology;

pub use error::ScenarioError;
pub use load_balancing::{BalancerKind, LoadBalancingSection};
pub use ordering::{Cap, OrderingKind, OrderingSection};
pub use switch::{SwitchModelKind, SwitchSection};
pub use topology::{TopologyKind, TopologySection};

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

/// Which congestion controller every flow runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CcKind {
    #[default]
    None,
    Dcqcn,
    Timely,
    Dctcp,
    Aimd,
}

/// Which NIC transport every flow uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TransportKind {
    Irn,
    Roce,
    IrnGoBackN,
    IrnWithoutBdpFc,
    IrnWithoutSack,
    /// TCP as iWARP NICs run it (IRN §4.6).
    Tcp,
}

impl TransportKind {
    /// The name scenario files use.
    pub fn name(self) -> &'static str {
        match self {
            TransportKind::Irn => "irn",
            TransportKind::Roce => "roce",
            TransportKind::IrnGoBackN => "irn-go-back-n",
            TransportKind::IrnWithoutBdpFc => "irn-without-bdp-fc",
            TransportKind::IrnWithoutSack => "irn-without-sack",
            TransportKind::Tcp => "tcp",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TransportSection {
    pub kind: TransportKind,
    /// Payload bytes per packet.
    pub mtu: u32,
    /// BDP-FC cap in packets; absent = computed from the topology's longest path (§3.2).
    pub bdp_cap: Option<u32>,
    pub rto_low: String,
    pub rto_high: String,
    /// N: RTO_low applies while at most this many packets are in flight.
    pub rto_low_packets: u32,
    /// `"auto"`: off when PFC is on (IRN §4.1), on otherwise. Or `"on"` / `"off"`.
    pub timeouts: String,
    /// `"exponential"`: each timeout with no progress since the last doubles the next (up to
    /// 1024×), as ConnectX's adaptive retransmission and TCP do; `"constant"`: every timeout
    /// waits the same, as in the IRN paper. See `irn_core::transport::RtoBackoff`.
    pub rto_backoff: String,
    /// Extra header bytes on every data packet (IRN §6.3 worst case: "16B").
    pub header_overhead: String,
    /// A retransmission may leave only this long after its loss was detected (IRN §6.3's
    /// worst case: "2us").
    pub retransmit_delay: String,
    /// Congestion control: `"none"`, `"dcqcn"`, `"timely"`, `"dctcp"` or `"aimd"`.
    pub cc: CcKind,
    /// `[transport.dcqcn]`: DCQCN parameter overrides (see `scenarios/example.toml`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dcqcn: Option<toml::Table>,
    /// `[transport.timely]`: Timely parameter overrides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timely: Option<toml::Table>,
    /// `[transport.dctcp]`: DCTCP parameter overrides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dctcp: Option<toml::Table>,
    /// `[transport.aimd]`: AIMD parameter overrides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aimd: Option<toml::Table>,
}

impl Default for TransportSection {
    fn default() -> Self {
        TransportSection {
            kind: TransportKind::Irn,
            mtu: TransportConfig::DEFAULT_MTU,
            bdp_cap: None,
            rto_low: "100us".into(),
            rto_high: "320us".into(),
            rto_low_packets: TransportConfig::DEFAULT_RTO_LOW_N,
            timeouts: "auto".into(),
            rto_backoff: "exponential".into(),
            header_overhead: "0B".into(),
            retransmit_delay: "0us".into(),
            cc: CcKind::None,
            dcqcn: None,
            timely: None,
            dctcp: None,
            aimd: None,
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
    if !(64..=4096).contains(&t.mtu) {
        return Err(invalid(
            file,
            "transport.mtu",
            &t.mtu.to_string(),
            "between 64 and 4096 bytes",
        ));
    }
    let extra_header_bytes =
        parse_key::<Bytes>(file, "transport.header_overhead", &t.header_overhead)?.0;
    if extra_header_bytes > 256 {
        return Err(invalid(
            file,
            "transport.header_overhead",
            &format!("{:?}", t.header_overhead),
            "at most 256B",
        ));
    }
    let extra_header_bytes = extra_header_bytes as u32;
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
    let rto_low = parse_key::<Duration>(file, "transport.rto_low", &t.rto_low)?;
    let rto_high = parse_key::<Duration>(file, "transport.rto_high", &t.rto_high)?;
    // A timer shorter than a frame's serialization fires on every packet before it is out: the
    // run would do little but time out (a "1ns" RTO never finished).
    let host_rate = topology.min_host_rate();
    let frame_time = host_rate.serialization(max_frame);
    if rto_low < frame_time {
        return Err(invalid(
            file,
            "transport.rto_low",
            &format!("{:?}", t.rto_low),
            &format!(
                "shorter than sending one full frame ({:.1}ns at {host_rate}): every packet \
                 would time out before it is out",
                frame_time.as_ps() as f64 / 1e3
            ),
        ));
    }
    if rto_high < rto_low {
        return Err(invalid(
            file,
            "transport.rto_high",
            &format!("{:?}", t.rto_high),
            &format!("must be at least rto_low ({})", t.rto_low),
        ));
    }
    // Without timeouts a dropped packet whose loss no later packet reveals is never resent and
    // its flow never finishes: only a network that cannot drop may run without them. Nor one
    // that reorders with no ordering layer at the NICs: a go-back-N receiver NACKs once per
    // episode, so a resent packet overtaken again is never asked for again.
    let reorders =
        s.load_balancing.to_balancing(file)?.per_packet() && s.ordering.kind == OrderingKind::None;
    let no_timeouts = pfc_drops.clone().or_else(|| {
        reorders.then(|| {
            format!(
                "load_balancing.kind = \"{}\" reorders packets and no [ordering] layer puts them \
                 back in order",
                s.load_balancing.to_balancing(file).map_or("", |b| b.name())
            )
        })
    });
    let timeouts = match t.timeouts.as_str() {
        "auto" => !s.switch.pfc || no_timeouts.is_some(),
        "on" => true,
        "off" => {
            if let Some(why) = &no_timeouts {
                return Err(invalid(
                    file,
                    "transport.timeouts",
                    "\"off\"",
                    &format!(
                        "{why}; without timeouts a lost packet may never be resent and its flow \
                         never finish: use \"on\" or \"auto\" (which turns them on here){}",
                        if pfc_drops.is_some() {
                            ", or pfc_threshold = \"auto\", which leaves the headroom free"
                        } else {
                            ", or an [ordering] layer"
                        }
                    ),
                ));
            }
            false
        }
        v => {
            return Err(invalid(
                file,
                "transport.timeouts",
                &format!("{v:?}"),
                "\"auto\", \"on\" or \"off\"",
            ))
        }
    };
    let base = match t.kind {
        TransportKind::Irn => TransportConfig::irn(),
        TransportKind::Roce => TransportConfig::roce(s.switch.pfc),
        TransportKind::IrnGoBackN => TransportConfig::irn_go_back_n(),
        TransportKind::IrnWithoutBdpFc => TransportConfig::irn_without_bdp_fc(),
        TransportKind::IrnWithoutSack => TransportConfig::irn_without_sack(),
        TransportKind::Tcp => TransportConfig::tcp(),
    };
    if t.kind == TransportKind::Tcp && t.retransmit_delay.trim() != "0us" {
        return Err(invalid(
            file,
            "transport.retransmit_delay",
            &format!("{:?}", t.retransmit_delay),
            "models an RDMA NIC refetching a lost packet; TCP (kind = \"tcp\") does not use it",
        ));
    }
    let rto_backoff =
        match t.rto_backoff.as_str() {
            "exponential" => RtoBackoff::Exponential,
            "constant" if t.kind == TransportKind::Tcp => return Err(invalid(
                file,
                "transport.rto_backoff",
                "\"constant\"",
                "TCP (kind = \"tcp\") always backs off its timeout (RFC 6298); use \"exponential\"",
            )),
            "constant" => RtoBackoff::Constant,
            v => {
                return Err(invalid(
                    file,
                    "transport.rto_backoff",
                    &format!("{v:?}"),
                    "\"exponential\" or \"constant\"",
                ))
            }
        };
    if t.kind == TransportKind::Tcp && t.cc != CcKind::None {
        return Err(invalid(
            file,
            "transport.cc",
            &format!("{:?}", t.cc).to_lowercase(),
            "TCP runs its own congestion control (slow start, AIMD); use cc = \"none\" with kind = \"tcp\", or cc = \"aimd\" with kind = \"irn\"",
        ));
    }
    let rto = if !timeouts {
        RtoPolicy::Disabled
    } else if t.kind == TransportKind::Roce {
        RtoPolicy::Fixed(rto_high)
    } else {
        RtoPolicy::Dual {
            low: rto_low,
            high: rto_high,
            n: t.rto_low_packets,
        }
    };
    let auto_cap = bdp_cap_packets(
        topology.min_host_rate(),
        topology.max_path_propagation(),
        t.mtu,
        extra_header_bytes,
    );
    let bdp_cap = match (t.kind, t.bdp_cap) {
        (TransportKind::Roce | TransportKind::IrnWithoutBdpFc, Some(c)) => {
            return Err(invalid(
                file,
                "transport.bdp_cap",
                &c.to_string(),
                "BDP-FC is not part of this transport; use kind = \"irn\" or \"irn-go-back-n\"",
            ))
        }
        (_, Some(c)) if c == 0 || c > TransportConfig::MAX_WINDOW => {
            return Err(invalid(
                file,
                "transport.bdp_cap",
                &c.to_string(),
                "between 1 and 4194304 packets",
            ))
        }
        (_, Some(c)) => Some(c),
        (_, None) => base.bdp_cap.map(|_| auto_cap),
    };
    let cc = cc_config(t, file)?;
    let transport = TransportConfig {
        bdp_cap,
        rto,
        rto_backoff,
        mtu: t.mtu,
        cc,
        line_rate: topology.min_host_rate(),
        retransmit_delay: parse_key::<Duration>(
            file,
            "transport.retransmit_delay",
            &t.retransmit_delay,
        )?,
        ..base
    };
    let ecn = ecn_config(s, file, topology.min_host_rate(), max_frame)?;
    if let Err(e) = transport.validate() {
        return Err(invalid(
            file,
            "transport",
            &format!("{:?}", t.kind),
            &e.to_string(),
        ));
    }

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

/// A parameter a `[transport.<cc>]` table may set, and where its value goes.
enum Param<'a> {
    Time(&'a mut Duration),
    Rate(&'a mut Bandwidth),
    Real(&'a mut f64),
    Count(&'a mut u32),
    Size(&'a mut u64),
}

/// Applies a `[transport.<cc>]` table's overrides to `params`, rejecting unknown keys and values
/// of the wrong kind.
fn apply_params(
    file: &str,
    section: &str,
    table: &toml::Table,
    mut params: Vec<(&str, Param)>,
) -> Result<(), ScenarioError> {
    let allowed: Vec<&str> = params.iter().map(|(k, _)| *k).collect();
    let allowed = allowed.join(", ");
    for (key, value) in table {
        let full = format!("{section}.{key}");
        let Some((_, param)) = params.iter_mut().find(|(k, _)| k == key) else {
            return Err(invalid(
                file,
                &full,
                "(set)",
                &format!("unknown parameter; allowed: {allowed}"),
            ));
        };
        let text = match value {
            toml::Value::String(v) => v.clone(),
            other => other.to_string(),
        };
        let number = value
            .as_float()
            .or_else(|| value.as_integer().map(|i| i as f64));
        match param {
            Param::Time(d) => **d = parse_key::<Duration>(file, &full, &text)?,
            Param::Rate(r) => **r = parse_key::<Bandwidth>(file, &full, &text)?,
            Param::Size(b) => **b = parse_key::<Bytes>(file, &full, &text)?.0,
            Param::Real(x) => match number {
                Some(v) if v.is_finite() && v >= 0.0 => **x = v,
                _ => return Err(invalid(file, &full, &text, "a number, zero or more")),
            },
            Param::Count(n) => match value.as_integer().and_then(|i| u32::try_from(i).ok()) {
                Some(v) if v > 0 => **n = v,
                _ => {
                    return Err(invalid(
                        file,
                        &full,
                        &text,
                        "a whole number greater than zero",
                    ))
                }
            },
        }
    }
    Ok(())
}

/// The congestion controller with its parameters: the papers' defaults (see `irn_core::cc`),
/// then the scenario's `[transport.<cc>]` overrides.
fn cc_config(t: &TransportSection, file: &str) -> Result<CcConfig, ScenarioError> {
    let tables = [
        ("dcqcn", &t.dcqcn, CcKind::Dcqcn),
        ("timely", &t.timely, CcKind::Timely),
        ("dctcp", &t.dctcp, CcKind::Dctcp),
        ("aimd", &t.aimd, CcKind::Aimd),
    ];
    for (name, table, kind) in &tables {
        if table.is_some() && t.cc != *kind {
            return Err(invalid(
                file,
                &format!("transport.{name}"),
                "(set)",
                &format!("applies only with transport.cc = \"{name}\""),
            ));
        }
    }
    let empty = toml::Table::new();
    Ok(match t.cc {
        CcKind::None => CcConfig::None,
        CcKind::Dcqcn => {
            let mut p = irn_core::cc::DcqcnParams::default();
            let params = vec![
                ("cnp_interval", Param::Time(&mut p.cnp_interval)),
                ("g", Param::Real(&mut p.g)),
                (
                    "alpha_update_period",
                    Param::Time(&mut p.alpha_update_period),
                ),
                (
                    "rate_decrease_period",
                    Param::Time(&mut p.rate_decrease_period),
                ),
                (
                    "rate_increase_period",
                    Param::Time(&mut p.rate_increase_period),
                ),
                ("byte_counter", Param::Size(&mut p.byte_counter)),
                (
                    "fast_recovery_steps",
                    Param::Count(&mut p.fast_recovery_steps),
                ),
                ("additive_increase", Param::Rate(&mut p.additive_increase)),
                ("hyper_increase", Param::Rate(&mut p.hyper_increase)),
                ("min_rate", Param::Rate(&mut p.min_rate)),
            ];
            apply_params(
                file,
                "transport.dcqcn",
                t.dcqcn.as_ref().unwrap_or(&empty),
                params,
            )?;
            CcConfig::Dcqcn(p)
        }
        CcKind::Timely => {
            let mut p = irn_core::cc::TimelyParams::default();
            let params = vec![
                ("ewma_alpha", Param::Real(&mut p.ewma_alpha)),
                ("beta", Param::Real(&mut p.beta)),
                ("t_low", Param::Time(&mut p.t_low)),
                ("t_high", Param::Time(&mut p.t_high)),
                ("min_rtt", Param::Time(&mut p.min_rtt)),
                ("additive_step", Param::Rate(&mut p.additive_step)),
                ("hai_threshold", Param::Count(&mut p.hai_threshold)),
                ("hai_multiplier", Param::Count(&mut p.hai_multiplier)),
                ("min_rate", Param::Rate(&mut p.min_rate)),
            ];
            apply_params(
                file,
                "transport.timely",
                t.timely.as_ref().unwrap_or(&empty),
                params,
            )?;
            CcConfig::Timely(p)
        }
        CcKind::Dctcp => {
            let mut p = irn_core::cc::DctcpParams::default();
            let params = vec![
                ("g", Param::Real(&mut p.g)),
                ("min_window", Param::Count(&mut p.min_window)),
                ("initial_alpha", Param::Real(&mut p.initial_alpha)),
            ];
            apply_params(
                file,
                "transport.dctcp",
                t.dctcp.as_ref().unwrap_or(&empty),
                params,
            )?;
            CcConfig::Dctcp(p)
        }
        CcKind::Aimd => {
            let mut p = irn_core::cc::AimdParams::default();
            let params = vec![
                ("additive_increase", Param::Real(&mut p.additive_increase)),
                ("decrease_factor", Param::Real(&mut p.decrease_factor)),
                ("min_window", Param::Count(&mut p.min_window)),
            ];
            apply_params(
                file,
                "transport.aimd",
                t.aimd.as_ref().unwrap_or(&empty),
                params,
            )?;
            CcConfig::Aimd(p)
        }
    })
}

/// The switches' ECN marking: a preset chosen by `switch.ecn` (or by the congestion control),
/// with any thresholds overridden.
fn ecn_config(
    s: &ScenarioFile,
    file: &str,
    rate: Bandwidth,
    frame: u64,
) -> Result<Option<EcnConfig>, ScenarioError> {
    let sw = &s.switch;
    let preset = match (sw.ecn.as_str(), s.transport.cc) {
        ("off", _) | ("auto", CcKind::None | CcKind::Timely | CcKind::Aimd) => None,
        ("dcqcn", _) | ("auto", CcKind::Dcqcn) => Some(EcnConfig::DCQCN),
        ("dctcp", _) | ("auto", CcKind::Dctcp) => Some(EcnConfig::dctcp(rate, frame)),
        (v, _) => {
            return Err(invalid(
                file,
                "switch.ecn",
                &format!("{v:?}"),
                "\"auto\", \"off\", \"dcqcn\" or \"dctcp\"",
            ))
        }
    };
    let overridden = sw.ecn_kmin.is_some() || sw.ecn_kmax.is_some() || sw.ecn_pmax.is_some();
    let Some(mut red) = preset else {
        if overridden {
            return Err(invalid(
                file,
                "switch.ecn",
                &format!("{:?}", sw.ecn),
                "marking is off, so ecn_kmin/ecn_kmax/ecn_pmax do not apply; set switch.ecn",
            ));
        }
        return Ok(None);
    };
    if let Some(k) = &sw.ecn_kmin {
        red.kmin_bytes = parse_key::<Bytes>(file, "switch.ecn_kmin", k)?.0;
    }
    if let Some(k) = &sw.ecn_kmax {
        red.kmax_bytes = parse_key::<Bytes>(file, "switch.ecn_kmax", k)?.0;
    }
    if let Some(p) = sw.ecn_pmax {
        if !(p > 0.0 && p <= 1.0) {
            return Err(invalid(
                file,
                "switch.ecn_pmax",
                &p.to_string(),
                "a probability in (0, 1]",
            ));
        }
        red.pmax = p;
    }
    if red.kmax_bytes < red.kmin_bytes {
        return Err(invalid(
            file,
            "switch.ecn_kmax",
            &red.kmax_bytes.to_string(),
            &format!("at least ecn_kmin ({} B)", red.kmin_bytes),
        ));
    }
    Ok(Some(red))
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
    fn congestion_control_parameters_override_the_papers_defaults() {
        let run = one("[transport]\ncc = \"dcqcn\"\n[transport.dcqcn]\nmin_rate = \"1Gbps\"\ng = 0.5\nbyte_counter = \"1MB\"\n").unwrap();
        let CcConfig::Dcqcn(p) = run.config.transport.cc else {
            panic!("{:?}", run.config.transport.cc)
        };
        assert_eq!(p.min_rate, Bandwidth::from_gbps(1));
        assert_eq!(p.g, 0.5);
        assert_eq!(p.byte_counter, 1_000_000);
        assert_eq!(
            p.cnp_interval,
            irn_core::cc::DcqcnParams::default().cnp_interval
        );
        // DCQCN turns on DCQCN's RED marking by default.
        assert_eq!(run.config.switch.ecn, Some(EcnConfig::DCQCN));
        let run = one("[transport]\ncc = \"timely\"\n[transport.timely]\nt_low = \"20us\"\nhai_threshold = 3\n").unwrap();
        let CcConfig::Timely(p) = run.config.transport.cc else {
            panic!()
        };
        assert_eq!((p.t_low, p.hai_threshold), (Duration::from_us(20), 3));
        assert_eq!(run.config.switch.ecn, None);
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
    fn a_timeout_must_outlast_sending_a_frame() {
        // 1024 B of payload + 62 B of framing at 40 Gb/s: 217.2 ns.
        let err = one("[transport]\nrto_low = \"217ns\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("transport.rto_low = \"217ns\": shorter than sending one full frame (217.2ns at 40Gbps)"),
            "{err}"
        );
        assert!(one("[transport]\nrto_low = \"218ns\"\n").is_ok());
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

    /// The default link (40 Gb/s, 2 us) and frame: an input can still receive 22 236 B after it
    /// pauses, so a 240 KB input buffer is lossless with a threshold up to 217 764 B.
    #[test]
    fn timeouts_stay_on_while_the_network_reorders_without_an_ordering_layer() {
        let on = |lb: &str, ordering: &str, timeouts: &str| {
            one(&format!(
                "[switch]\npfc = true\n[load_balancing]\nkind = \"{lb}\"\n[ordering]\n\
                 kind = \"{ordering}\"\n[transport]\nkind = \"roce\"\ntimeouts = \"{timeouts}\"\n"
            ))
            .map(|r| r.config.transport.rto != RtoPolicy::Disabled)
            .map_err(|e| e.to_string())
        };
        // (balancer, layer, timeouts, resolved to on?)
        for (lb, ordering, timeouts, want) in [
            ("ecmp", "none", "auto", false),
            ("drill", "none", "auto", true),
            ("letflow", "none", "auto", true),
            ("drill", "eunomia", "auto", false),
            ("spray", "ideal", "off", false),
            ("spray", "none", "on", true),
        ] {
            assert_eq!(
                on(lb, ordering, timeouts),
                Ok(want),
                "{lb} {ordering} {timeouts}"
            );
        }
        let err = on("spray", "none", "off").unwrap_err();
        assert!(
            err.contains(
                "transport.timeouts = \"off\": load_balancing.kind = \"spray\" reorders \
                          packets and no [ordering] layer"
            ),
            "{err}"
        );
    }

    #[test]
    fn timeouts_stay_on_whenever_pfc_can_drop() {
        let text = |threshold: &str, timeouts: &str| {
            format!(
                "[switch]\npfc = true\npfc_threshold = \"{threshold}\"\n\
                 [transport]\nkind = \"roce\"\ntimeouts = \"{timeouts}\"\n"
            )
        };
        let on = |threshold: &str, timeouts: &str| {
            one(&text(threshold, timeouts))
                .map(|r| r.config.transport.rto != RtoPolicy::Disabled)
                .map_err(|e| e.to_string())
        };
        // (threshold, timeouts, resolved to on?)
        for (threshold, timeouts, want) in [
            ("auto", "auto", false),
            ("217764B", "auto", false),
            ("217765B", "auto", true),
            ("220KB", "auto", true),
            ("100KB", "off", false),
            ("220KB", "on", true),
        ] {
            assert_eq!(on(threshold, timeouts), Ok(want), "{threshold} {timeouts}");
        }
        let err = on("220KB", "off").unwrap_err();
        assert!(
            err.contains(
                "t.toml: transport.timeouts = \"off\": switch.pfc_threshold = \"220KB\" lets PFC \
                 drop packets: an input on a 40Gbps, 2us link can still receive 22236B after it \
                 pauses (the link round trip, two frames and a PAUSE frame), and 220000B + \
                 22236B is more than the 240000B buffer; without timeouts"
            ),
            "{err}"
        );
        // The shared-buffer switch reserves the headroom: it never drops with PFC.
        let shared =
            "[switch]\nmodel = \"shared-buffer\"\npfc = true\n[transport]\ntimeouts = \"off\"\n";
        assert!(one(shared).is_ok());
    }

    #[test]
    fn congestion_control_parameters_are_checked() {
        let cases = [
            (
                "[transport]\ncc = \"dcqcn\"\n[transport.dcqcn]\nalpha = 1\n",
                "transport.dcqcn.alpha = (set): unknown parameter; allowed: cnp_interval, g,",
            ),
            (
                "[transport]\ncc = \"timely\"\n[transport.dcqcn]\ng = 0.5\n",
                "transport.dcqcn = (set): applies only with transport.cc = \"dcqcn\"",
            ),
            (
                "[transport]\ncc = \"timely\"\n[transport.timely]\nt_low = \"fast\"\n",
                "transport.timely.t_low = \"fast\"",
            ),
            (
                "[transport]\ncc = \"aimd\"\n[transport.aimd]\nmin_window = 0\n",
                "transport.aimd.min_window = 0: a whole number greater than zero",
            ),
            (
                "[transport]\ncc = \"dctcp\"\n[transport.dctcp]\ng = -1\n",
                "transport.dctcp.g = -1: a number, zero or more",
            ),
            (
                "[switch]\nalpha = 0.5\n",
                "switch.alpha = (set): does not apply to switch.model = \"input-queued\"",
            ),
            (
                "[switch]\necn = \"off\"\necn_kmin = \"5KB\"\n",
                "switch.ecn = \"off\": marking is off",
            ),
            (
                "[switch]\necn = \"dcqcn\"\necn_kmax = \"1KB\"\n",
                "switch.ecn_kmax = 1000: at least ecn_kmin",
            ),
        ];
        for (text, want) in cases {
            let err = one(text).unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }
}
