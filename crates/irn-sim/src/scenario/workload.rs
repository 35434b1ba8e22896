//! `[workload]`: where flows come from, and which RDMA verb each is.
//!
//! ```toml
//! [workload]
//! kind = "poisson"    # "poisson" (default), "incast", "queries", "trace", "ns3", "collective", "dag"
//! load = 0.7          # poisson: offered load, a fraction of each host's line rate
//! sizes = { cdf = "../data/cdf/irn_default.txt" } # or "irn-default", uniform, fixed
//! duration = "5ms"    # poisson: arrivals happen during this long
//! verbs = { write = 1, read = 1 } # any kind: every flow one verb, drawn with these weights
//!
//! [[workload.job]]    # collective: one entry per job
//! op = "all-reduce"
//! size = "64MB"
//! ranks = 16
//! ```

use std::path::Path;
use std::sync::Arc;

use irn_core::{Bandwidth, Duration, Time};
use serde::{Deserialize, Serialize};

use super::{
    check_keys, invalid, parse_key, require, resolve, ScenarioError, ScenarioFile, TransportKind,
    SET,
};
use crate::ids::HostIdx;
use crate::topology::Topology;
use crate::units::Bytes;
use crate::workload::collective::{self, Algorithm, Job, Op};
use crate::workload::dag::DagFormat;
use crate::workload::ns3::FctPorts;
use crate::workload::{self, BuiltinCdf, Cdf, Collectives, FlowDag, FlowSpec, SizeDist, VerbMix};

/// Where flows come from. Keys that do not apply to the chosen `kind` are rejected.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSection {
    #[serde(default)]
    pub kind: WorkloadKind,
    /// poisson: offered load as a fraction of each host's line rate (default 0.7). queries
    /// (required): the queries' traffic as a fraction of all hosts' line rate together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    /// poisson: flow sizes (default the IRN distribution).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sizes: Option<SizesSection>,
    /// poisson, queries: arrivals happen during this long (default 5ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
    /// incast: how many hosts send; queries: how many hosts answer each query (default 50).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub senders: Option<u32>,
    /// incast: bytes striped over the senders (default 150MB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<String>,
    /// incast: flows each sender opens to the receiver, its share split evenly between them
    /// (default 1): an incast of thousands of flows from a few hosts (Swift §5's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flows_per_sender: Option<u32>,
    /// queries: bytes each sender answers a query with (default 40KB, Eunomia §5.5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
    /// incast: the receiving host's index (default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receiver: Option<u32>,
    /// incast, queries: cross traffic — Poisson arrivals of the IRN sizes at this load around
    /// the incast or the queries (IRN §4.4.3 uses 0.5); none by default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background_load: Option<f64>,
    /// incast, queries: how long the cross traffic's arrivals last (default 10ms for incast,
    /// the queries' `duration` for queries).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background_duration: Option<String>,
    /// trace: a CSV file with columns `src,dst,size_bytes,start_ns`; ns3: an ns-3 flow file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// trace: the same CSV written in the scenario itself (instead of `file`), so a scenario
    /// of a few flows is one file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub csv: Option<String>,
    /// dag: how `file` is written, `"csv"` or `"json"` (default: JSON for a `.json` file, CSV
    /// otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<DagFormat>,
    /// Any kind: make every flow one RDMA verb on verbs queue pairs, drawn with these weights
    /// (IRN §5); without it, every flow is one message on the transport alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verbs: Option<VerbsMixSection>,
    /// collective (required): the jobs, `[[workload.job]]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<Vec<JobSection>>,
}

/// `[[workload.job]]`: one collective job.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobSection {
    /// The operation (required).
    pub op: Op,
    /// nccl-tests' size: the buffer each rank reduces, gathers into, scatters from or sends
    /// (required).
    pub size: String,
    /// How many ranks; required unless `placement` lists the hosts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranks: Option<u32>,
    /// Which hosts the ranks run on (default contiguous).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<PlacementSection>,
    /// How the data moves (default ring; pairwise for all-to-all).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<Algorithm>,
    /// Parallel pipelines, each `1/channels` of the data (default 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channels: Option<u32>,
    /// How many times the collective runs (default 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u32>,
    /// The computation between iterations, at each rank (default 0us).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compute_gap: Option<String>,
    /// When the first iteration starts (default 0us).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
}

/// `workload.job.placement`: a rule, or the hosts themselves (rank r on the r-th); anything
/// else is kept to be refused by name, with what is allowed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PlacementSection {
    Rule(Placement),
    Hosts(Vec<u32>),
    Other(toml::Value),
}

/// How a job's ranks are placed on the hosts no earlier job took.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// The first free hosts, in order (neighbours under the same switches).
    Contiguous,
    /// Free hosts spread evenly over the free ones (across switches).
    Strided,
    /// Free hosts drawn at random from the seed, ranks in the order drawn.
    Random,
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
    /// Incasts arriving as a Poisson process, each a query of `senders` flows of `size` bytes
    /// to a random receiver (Eunomia §5.5).
    Queries,
    /// Replay a CSV trace.
    Trace,
    /// Replay an ns-3 flow file (HPCC 6-column or ConWeave 5-column; node ids as in the
    /// topology file).
    Ns3,
    /// Collective jobs (`[[workload.job]]`): flows that wait for the step before.
    Collective,
    /// A CSV file of flows and the flows each waits for.
    Dag,
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
            flows_per_sender: None,
            size: None,
            receiver: None,
            background_load: None,
            background_duration: None,
            file: None,
            csv: None,
            format: None,
            verbs: None,
            job: None,
        }
    }
}

impl WorkloadSection {
    /// Fills the kind's defaults; rejects keys of other kinds and missing required ones.
    pub(super) fn normalize(&mut self, file: &str) -> Result<(), ScenarioError> {
        let (poisson, incast, queries, trace, collective, dag) = (
            self.kind == WorkloadKind::Poisson,
            self.kind == WorkloadKind::Incast,
            self.kind == WorkloadKind::Queries,
            matches!(self.kind, WorkloadKind::Trace | WorkloadKind::Ns3),
            self.kind == WorkloadKind::Collective,
            self.kind == WorkloadKind::Dag,
        );
        let kind = self.kind.name();
        let background = incast || queries || collective;
        let keys = [
            ("load", self.load.is_some(), poisson || queries),
            ("sizes", self.sizes.is_some(), poisson),
            ("duration", self.duration.is_some(), poisson || queries),
            ("senders", self.senders.is_some(), incast || queries),
            ("total", self.total.is_some(), incast),
            ("flows_per_sender", self.flows_per_sender.is_some(), incast),
            ("size", self.size.is_some(), queries),
            ("receiver", self.receiver.is_some(), incast),
            (
                "background_load",
                self.background_load.is_some(),
                background,
            ),
            (
                "background_duration",
                self.background_duration.is_some(),
                background,
            ),
            ("file", self.file.is_some(), trace || dag),
            (
                "csv",
                self.csv.is_some(),
                self.kind == WorkloadKind::Trace || dag,
            ),
            ("format", self.format.is_some(), dag),
            ("job", self.job.is_some(), collective),
        ];
        if self.file.is_some() && !(trace || dag) {
            // A file with no kind: the kind is not inferred (the same file name could be any
            // of three forms), so say which kinds read one.
            return Err(invalid(
                file,
                "workload.file",
                SET,
                &format!(
                    "does not apply to workload.kind = \"{kind}\": a file of flows is read with \
                     kind = \"ns3\" (an ns-3 flow file), \"trace\" (a CSV of flows) or \"dag\" \
                     (flows that wait for each other)"
                ),
            ));
        }
        check_keys(file, ("workload", "kind"), kind, &keys)?;
        if self.background_duration.is_some() && self.background_load.is_none() {
            return Err(invalid(
                file,
                "workload.background_duration",
                SET,
                "applies only with workload.background_load (the background traffic's load), \
                 which is not set",
            ));
        }
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
            WorkloadKind::Queries => {
                // No default load: an incast workload's load has no natural value, and a
                // scenario that forgot it would run one silently.
                require(file, "workload.load", kind, self.load.is_some())?;
                self.senders.get_or_insert(50);
                self.size.get_or_insert_with(|| "40KB".into());
                let duration = self.duration.get_or_insert_with(|| "5ms".into()).clone();
                if self.background_load.is_some() {
                    self.background_duration.get_or_insert(duration);
                }
            }
            WorkloadKind::Collective => {
                require(file, "workload.job", kind, self.job.is_some())?;
                for job in self.job.iter_mut().flatten() {
                    job.normalize();
                }
                if self.background_load.is_some() {
                    self.background_duration.get_or_insert_with(|| "1ms".into());
                }
            }
            WorkloadKind::Trace | WorkloadKind::Dag
                if self.file.is_some() && self.csv.is_some() =>
            {
                return Err(invalid(
                    file,
                    "workload.csv",
                    SET,
                    "give the flows in workload.file or in workload.csv, not both",
                ))
            }
            WorkloadKind::Dag if self.csv.is_some() && self.format == Some(DagFormat::Json) => {
                return Err(invalid(
                    file,
                    "workload.format",
                    "\"json\"",
                    "\"csv\" with an inline workload.csv (a JSON DAG goes in a file named by \
                     workload.file)",
                ))
            }
            WorkloadKind::Trace | WorkloadKind::Dag => {
                require(
                    file,
                    "workload.file",
                    kind,
                    self.file.is_some() || self.csv.is_some(),
                )?;
                if let (true, Some(name)) = (dag, &self.file) {
                    self.format
                        .get_or_insert_with(|| DagFormat::of(Path::new(name)));
                }
            }
            WorkloadKind::Ns3 => require(file, "workload.file", kind, self.file.is_some())?,
        }
        Ok(())
    }
}

impl WorkloadKind {
    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Poisson => "poisson",
            WorkloadKind::Incast => "incast",
            WorkloadKind::Queries => "queries",
            WorkloadKind::Trace => "trace",
            WorkloadKind::Ns3 => "ns3",
            WorkloadKind::Collective => "collective",
            WorkloadKind::Dag => "dag",
        }
    }
}

impl JobSection {
    /// Fills the defaults, so the resolved scenario shows what ran.
    fn normalize(&mut self) {
        self.algorithm.get_or_insert(self.op.default_algorithm());
        self.placement
            .get_or_insert(PlacementSection::Rule(Placement::Contiguous));
        if let (None, Some(PlacementSection::Hosts(hosts))) = (self.ranks, &self.placement) {
            self.ranks = Some(hosts.len() as u32);
        }
        self.channels.get_or_insert(1);
        self.iterations.get_or_insert(1);
        self.compute_gap.get_or_insert_with(|| "0us".into());
        self.start.get_or_insert_with(|| "0us".into());
    }
}

/// A flow-size distribution.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SizesSection {
    /// The IRN default heavy-tailed distribution (`data/cdf/irn_default.txt`).
    #[default]
    IrnDefault,
    /// Alibaba storage 2019 (`data/cdf/alistorage2019.txt`, ConWeave's default; Eunomia's
    /// "AliStorage"), built in.
    Alistorage,
    /// Facebook Hadoop 2015 (`data/cdf/fbhadoop2015_conweave.txt`; ConWeave's and Eunomia's
    /// "FB Hadoop"), built in.
    FbHadoop,
    /// Web search (`data/cdf/websearch_hpcc.txt`, the HPCC paper's), built in.
    Websearch,
    /// Facebook Hadoop as the HPCC paper ran it (`data/cdf/fbhadoop_hpcc.txt`), built in.
    FbHadoopHpcc,
    /// A CDF file (HPCC percent or TLT fraction format).
    Cdf(String),
    /// Uniform between two sizes, e.g. `["500KB", "5MB"]`.
    Uniform([String; 2]),
    /// Every flow the same size.
    Fixed(String),
}

use crate::workload::cdf::MAX_FLOW_BYTES;

/// The limit [`MAX_FLOW_BYTES`] is, for errors.
fn flow_limit() -> String {
    format!("flow-size limit ({MAX_FLOW_BYTES} B, the RDMA message limit)")
}

/// A workload as a run takes it: its flows, and which wait for which; shared by the runs that
/// take the same one.
#[derive(Clone)]
pub(super) struct Built {
    pub flows: Arc<[FlowSpec]>,
    pub dag: Option<Arc<FlowDag>>,
    pub collectives: Option<Arc<Collectives>>,
    pub fct_ports: FctPorts,
    /// The payload bytes the flows were drawn with, before a verbs mix made some of them 8-byte
    /// atomics: what a Poisson workload's arrivals were timed for.
    pub drawn_bytes: u64,
}

/// The workloads a scenario file's runs were given, each built once. The variants of a
/// comparison usually differ only in how the network carries the same flows, and a collective
/// workload of a million flows takes a second to build and a hundred megabytes to hold: eight
/// variants held eight copies.
#[derive(Default)]
pub(super) struct Workloads(Vec<(serde_json::Value, Option<VerbMix>, Built)>);

impl Workloads {
    /// The workload `s` describes over `topology`: one built before from the same inputs (its
    /// `[workload]`, `[topology]` and seed, and the verbs mix), or built now ([`build`]).
    pub fn get(
        &mut self,
        s: &ScenarioFile,
        (file, base_dir): (&str, &Path),
        topology: &Topology,
        verbs: Option<VerbMix>,
    ) -> Result<Built, ScenarioError> {
        let inputs = serde_json::json!([s.workload, s.topology, s.seed]);
        let found = (self.0.iter()).find(|(i, v, _)| *i == inputs && *v == verbs);
        if let Some((.., built)) = found {
            return Ok(built.clone());
        }
        let built = build((&s.workload, s.seed), file, base_dir, topology, verbs)?;
        self.0.push((inputs, verbs, built.clone()));
        Ok(built)
    }
}

/// The run's flows, each a verb when `verbs` is set. Reads only what [`Workloads::get`] tells
/// workloads apart by (the topology built from `[topology]` and the seed).
fn build(
    (w, seed): (&WorkloadSection, u64),
    file: &str,
    base_dir: &Path,
    topology: &Topology,
    verbs: Option<VerbMix>,
) -> Result<Built, ScenarioError> {
    let host_rate = topology.min_host_rate();
    let hosts = topology.hosts().len() as u32;
    let (mut dag, mut collectives) = (None, None);
    let mut fct_ports = FctPorts::ConWeave;
    let flows = match w.kind {
        WorkloadKind::Collective => {
            let (flows, graph, jobs) = collective_flows((w, seed), file, hosts, host_rate)?;
            (dag, collectives) = (Some(graph), Some(jobs));
            flows
        }
        WorkloadKind::Dag => {
            let (flows, graph) = dag_flows(w, file, base_dir, hosts)?;
            dag = Some(graph);
            flows
        }
        WorkloadKind::Poisson => poisson_flows((w, seed), file, base_dir, hosts, host_rate)?,
        WorkloadKind::Incast => incast_flows((w, seed), file, hosts, host_rate)?,
        WorkloadKind::Queries => query_flows((w, seed), file, hosts, host_rate)?,
        WorkloadKind::Trace if w.csv.is_some() => {
            let csv = w.csv.as_deref().unwrap_or("");
            let flows = workload::trace_text(csv, "workload.csv", hosts)
                .map_err(|e| invalid(file, "workload.csv", "(inline)", &e.to_string()))?;
            require_flows(
                file,
                ("workload.csv", "(inline)"),
                "it lists no flows",
                flows,
            )?
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
            let (flows, ports) = workload::ns3::read_flows(&resolve(base_dir, name), topology)
                .map_err(|e| {
                    invalid(file, "workload.file", &format!("{name:?}"), &e.to_string())
                })?;
            fct_ports = ports;
            require_flows(
                file,
                ("workload.file", name),
                "the file lists no flows",
                flows,
            )?
        }
    };
    if let Some((i, big)) = (flows.iter().enumerate()).find(|(_, f)| f.size_bytes > MAX_FLOW_BYTES)
    {
        // A collective's flow names its job, whose size is what to change.
        let tag = collectives
            .as_ref()
            .and_then(|c| c.tags.get(i).copied().flatten());
        let job = tag.and_then(|t| Some((t.job, w.job.as_ref()?.get(t.job as usize)?)));
        let (key, value, whose) = match (w.kind, job) {
            (WorkloadKind::Collective, Some((j, job))) => (
                format!("workload.job[{j}].size"),
                format!("{:?}", job.size),
                "; a flow carries a job's size split by its algorithm over its ranks and \
                 channels: use more channels or a smaller size",
            ),
            _ => ("workload".to_string(), String::new(), ""),
        };
        return Err(invalid(
            file,
            &key,
            &value,
            &format!(
                "flow {i} would carry {} bytes: at most 2GiB, the {}{whose}",
                big.size_bytes,
                flow_limit()
            ),
        ));
    }
    latest_start(w, file, &flows, (dag.as_ref(), collectives.as_ref()))?;
    let drawn_bytes = flows.iter().map(|f| f.size_bytes).sum();
    let mut flows = flows;
    if let Some(mix) = verbs {
        mix.assign(&mut flows, seed);
    }
    Ok(Built {
        flows: flows.into(),
        dag: dag.map(Arc::new),
        collectives: collectives.map(Arc::new),
        fct_ports,
        drawn_bytes,
    })
}

/// The latest a flow may start: half of irn's clock (2⁶³ ps, about 106 days), so that its end,
/// its timers and the drain limit after it are still times the clock can hold. A flow file's
/// start near the clock's end once ran with the clock stopped at its limit and the flow
/// reported unfinished "before the drain limit".
pub const LATEST_START: Time = Time::from_ps(1 << 63);

/// Refuses `flows` whose last start is past [`LATEST_START`], naming the flow's id in its DAG
/// file (`dag`) or its collective job (`collectives`), whose delays are what made it late.
fn latest_start(
    w: &WorkloadSection,
    file: &str,
    flows: &[FlowSpec],
    (dag, collectives): (Option<&FlowDag>, Option<&Collectives>),
) -> Result<(), ScenarioError> {
    let Some((i, late)) = (flows.iter().map(|f| f.start).enumerate()).max_by_key(|&(_, t)| t)
    else {
        return Ok(());
    };
    if late <= LATEST_START {
        return Ok(());
    }
    let tag = collectives.and_then(|c| c.tags.get(i).copied().flatten());
    let job_key;
    let key = match (w.kind, &w.csv, tag) {
        (WorkloadKind::Trace | WorkloadKind::Dag, Some(_), _) => "workload.csv",
        (WorkloadKind::Trace | WorkloadKind::Dag | WorkloadKind::Ns3, None, _) => "workload.file",
        (_, _, Some(t)) => {
            job_key = format!("workload.job[{}]", t.job);
            &job_key
        }
        _ => "workload",
    };
    // A flow with parents starts after them and their delays, not at a time of its own.
    let whose = match (dag.and_then(|d| d.name(i)), tag) {
        (Some(id), _) => format!("flow `{id}` (after its parents and their delay_ns)"),
        (None, Some(t)) => format!(
            "its iteration {}'s flows (after start and {} compute_gap{})",
            t.iteration,
            t.iteration,
            if t.iteration == 1 { "" } else { "s" }
        ),
        (None, None) => "a flow".to_string(),
    };
    let s = |t: Time| {
        let ps = t.as_ps();
        format!(
            "{}.{:09}",
            ps / 1_000_000_000_000,
            ps % 1_000_000_000_000 / 1000
        )
    };
    let named = match key {
        "workload.file" => format!("{:?}", w.file.as_deref().unwrap_or("")),
        _ => String::new(),
    };
    // Delays that add up past the clock's end stop there.
    let at = match late {
        Time::MAX => format!("past {} s, the clock's end", s(late)),
        _ => format!("at {} s", s(late)),
    };
    Err(invalid(
        file,
        key,
        &named,
        &format!(
            "{whose} would start {at}, later than irn's clock can run a flow to its end: starts \
             must be at most {} s (about 106 days)",
            s(LATEST_START)
        ),
    ))
}

/// `kind = "dag"`'s flows and graph, from `file` (CSV or JSON) or the inline `csv`.
fn dag_flows(
    w: &WorkloadSection,
    file: &str,
    base_dir: &Path,
    hosts: u32,
) -> Result<(Vec<FlowSpec>, FlowDag), ScenarioError> {
    let (key, shown, read) = match (&w.csv, &w.file) {
        (Some(csv), _) => (
            "workload.csv",
            "(inline)".to_string(),
            workload::dag::dag_text(csv, "workload.csv", hosts),
        ),
        (None, name) => {
            let name = name.as_deref().unwrap_or("");
            (
                "workload.file",
                format!("{name:?}"),
                workload::dag::dag_file(
                    &resolve(base_dir, name),
                    w.format.unwrap_or_default(),
                    hosts,
                ),
            )
        }
    };
    let (flows, dag) = read.map_err(|e| invalid(file, key, &shown, &e.to_string()))?;
    let flows = require_flows(
        file,
        (key, shown.trim_matches('"')),
        "it lists no flows",
        flows,
    )?;
    Ok((flows, dag))
}

/// The most channels a job may have (NCCL uses up to 32).
const MAX_CHANNELS: u32 = 64;

/// `kind = "collective"`'s flows (the jobs' and their cross traffic's), graph and jobs.
fn collective_flows(
    (w, seed): (&WorkloadSection, u64),
    file: &str,
    hosts: u32,
    host_rate: Bandwidth,
) -> Result<(Vec<FlowSpec>, FlowDag, Collectives), ScenarioError> {
    let sections = w.job.as_deref().unwrap_or_default();
    if sections.is_empty() {
        return Err(invalid(
            file,
            "workload.job",
            "[]",
            "at least one [[workload.job]]",
        ));
    }
    let mut taken = vec![false; hosts as usize];
    let mut jobs = Vec::with_capacity(sections.len());
    for (j, section) in sections.iter().enumerate() {
        jobs.push(job(section, file, j, (&mut taken, seed))?);
    }
    let generated = collective::generate(&jobs).map_err(|e| {
        let key = match e.key {
            Some(k) => format!("workload.job[{}].{k}", e.job),
            None => format!("workload.job[{}]", e.job),
        };
        invalid(file, &key, "", &e.why)
    })?;
    let mut background = Vec::new();
    add_background((w, seed), file, (hosts, host_rate), "1ms", &mut background)?;
    Ok(collective::finish(generated, jobs, background))
}

/// `[[workload.job]]` number `j`, its ranks placed on hosts no earlier job took (`taken`,
/// which it marks).
fn job(
    section: &JobSection,
    file: &str,
    j: usize,
    (taken, seed): (&mut [bool], u64),
) -> Result<Job, ScenarioError> {
    let key = |k: &str| format!("workload.job[{j}].{k}");
    let size_bytes = parse_key::<Bytes>(file, &key("size"), &section.size)?.0;
    let count = |k: &str, v: Option<u32>, most: u32| -> Result<u32, ScenarioError> {
        match v.unwrap_or(1) {
            n @ 1.. if n <= most => Ok(n),
            n => Err(invalid(
                file,
                &key(k),
                &n.to_string(),
                &format!("1 to {most}"),
            )),
        }
    };
    let channels = count("channels", section.channels, MAX_CHANNELS)?;
    let iterations = count("iterations", section.iterations, 1_000_000)?;
    let duration = |k: &str, v: &Option<String>| -> Result<Duration, ScenarioError> {
        parse_key::<Duration>(file, &key(k), v.as_deref().unwrap_or("0us"))
    };
    let compute_gap = duration("compute_gap", &section.compute_gap)?;
    let start = Time::ZERO + duration("start", &section.start)?;
    let hosts = place(section, file, j, taken, seed)?;
    let ranks = hosts.len() as u32;
    let algorithm = section
        .algorithm
        .unwrap_or_else(|| section.op.default_algorithm());
    if size_bytes < u64::from(ranks) {
        return Err(invalid(
            file,
            &key("size"),
            &format!("{:?}", section.size),
            &format!("at least one byte per rank ({ranks} B)"),
        ));
    }
    Ok(Job {
        op: section.op,
        algorithm,
        hosts,
        size_bytes,
        channels,
        iterations,
        compute_gap,
        start,
    })
}

/// Job `j`'s hosts, rank by rank: the listed ones, or `ranks` of the hosts not `taken` by the
/// rule; marks them taken.
fn place(
    section: &JobSection,
    file: &str,
    j: usize,
    taken: &mut [bool],
    seed: u64,
) -> Result<Vec<HostIdx>, ScenarioError> {
    let key = |k: &str| format!("workload.job[{j}].{k}");
    let total = taken.len();
    let rule = match &section.placement {
        Some(PlacementSection::Hosts(list)) => {
            let mut seen = vec![false; total];
            for &h in list {
                if h as usize >= total {
                    return Err(invalid(
                        file,
                        &key("placement"),
                        &format!("{list:?}"),
                        &format!("host indices below {total}; {h} is not a host"),
                    ));
                }
                if std::mem::replace(&mut seen[h as usize], true) {
                    return Err(invalid(
                        file,
                        &key("placement"),
                        &format!("{list:?}"),
                        &format!("distinct hosts; host {h} is listed twice"),
                    ));
                }
                if taken[h as usize] {
                    return Err(invalid(
                        file,
                        &key("placement"),
                        &format!("{list:?}"),
                        &format!(
                            "hosts no earlier job has (each job runs on hosts of its own); host \
                             {h} is an earlier job's"
                        ),
                    ));
                }
            }
            if list.len() < 2 {
                return Err(invalid(
                    file,
                    &key("placement"),
                    &format!("{list:?}"),
                    "at least 2 hosts (one per rank)",
                ));
            }
            if let Some(r) = section.ranks.filter(|&r| r as usize != list.len()) {
                return Err(invalid(
                    file,
                    &key("placement"),
                    &format!("{list:?}"),
                    &format!(
                        "exactly one host per rank: ranks = {r} needs {r} hosts, the list has {}",
                        list.len()
                    ),
                ));
            }
            for &h in list {
                taken[h as usize] = true;
            }
            return Ok(list.iter().map(|&h| HostIdx(h)).collect());
        }
        Some(PlacementSection::Rule(rule)) => *rule,
        Some(PlacementSection::Other(v)) => {
            let rules = r#""contiguous", "strided" or "random""#;
            // A list that is not host indices names its first entry that is not one.
            let not_a_host = (v.as_array().into_iter().flatten()).find(|h| {
                !h.as_integer()
                    .is_some_and(|h| (0..total as i64).contains(&h))
            });
            let allowed = match (v, not_a_host) {
                (toml::Value::String(_), _) => format!("one of {rules}"),
                (_, Some(h)) => format!("host indices below {total}; {h} is not a host"),
                _ => format!("{rules}, or a list of host indices"),
            };
            return Err(invalid(file, &key("placement"), &v.to_string(), &allowed));
        }
        None => Placement::Contiguous,
    };
    let mut free: Vec<u32> = (0..total as u32).filter(|&h| !taken[h as usize]).collect();
    let ranks = match section.ranks {
        Some(r) if r >= 2 && r as usize <= free.len() => r as usize,
        Some(r) => {
            return Err(invalid(
                file,
                &key("ranks"),
                &r.to_string(),
                &match free.len() {
                    0 | 1 => format!(
                        "at least 2, but the earlier jobs took {} of the {total} hosts",
                        total - free.len()
                    ),
                    n => format!("2 to {n} (the hosts no earlier job took, of {total})"),
                },
            ))
        }
        None => {
            return Err(invalid(
                file,
                &key("ranks"),
                "(missing)",
                "required unless placement lists the hosts",
            ))
        }
    };
    let hosts: Vec<u32> = match rule {
        Placement::Contiguous => free[..ranks].to_vec(),
        Placement::Strided => (0..ranks).map(|i| free[i * free.len() / ranks]).collect(),
        Placement::Random => {
            let mut rng = crate::rng::stream(seed, crate::rng::Purpose::Placement, j as u64);
            for i in 0..ranks {
                let k = rand::Rng::random_range(&mut rng, i..free.len());
                free.swap(i, k);
            }
            free[..ranks].to_vec()
        }
    };
    for &h in &hosts {
        taken[h as usize] = true;
    }
    Ok(hosts.into_iter().map(HostIdx).collect())
}

/// `kind = "poisson"`'s flows.
fn poisson_flows(
    (w, seed): (&WorkloadSection, u64),
    file: &str,
    base_dir: &Path,
    hosts: u32,
    host_rate: Bandwidth,
) -> Result<Vec<FlowSpec>, ScenarioError> {
    let load = w.load.unwrap_or(0.7);
    line_rate_fraction(file, "workload.load", load, "line rate")?;
    let duration_text = w.duration.as_deref().unwrap_or("5ms");
    let duration = arrivals_window(file, duration_text)?;
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
    let flows = workload::poisson(hosts, host_rate, load, &dist, duration, seed);
    require_flows(
        file,
        ("workload.duration", duration_text),
        "no flow starts within it at this load; lengthen it",
        flows,
    )
}

/// `kind = "incast"`'s flows, and its cross traffic's.
fn incast_flows(
    (w, seed): (&WorkloadSection, u64),
    file: &str,
    hosts: u32,
    host_rate: Bandwidth,
) -> Result<Vec<FlowSpec>, ScenarioError> {
    let senders = w.senders.unwrap_or(0);
    let total = w.total.as_deref().unwrap_or("150MB");
    let receiver = w.receiver.unwrap_or(0);
    let total_bytes = parse_key::<Bytes>(file, "workload.total", total)?.0;
    let per_sender = w.flows_per_sender.unwrap_or(1);
    let flows_total = u64::from(senders) * u64::from(per_sender);
    if per_sender == 0 || flows_total > MAX_INCAST_FLOWS {
        return Err(invalid(
            file,
            "workload.flows_per_sender",
            &per_sender.to_string(),
            &format!(
                "between 1 and {} ({senders} senders, at most {MAX_INCAST_FLOWS} flows in all)",
                MAX_INCAST_FLOWS / u64::from(senders.max(1))
            ),
        ));
    }
    // Each flow: at least a byte, at most the flow-size limit.
    let most = flows_total.max(1).saturating_mul(MAX_FLOW_BYTES);
    if total_bytes < flows_total || total_bytes > most {
        return Err(invalid(
            file,
            "workload.total",
            &format!("{total:?}"),
            &format!(
                "between {flows_total}B and {} ({flows_total} flows: {senders} senders, \
                 {per_sender} each, every flow at least a byte and at most 2GiB, the {})",
                Bytes(most),
                flow_limit()
            ),
        ));
    }
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
        seed,
    )
    .map_err(|e| {
        invalid(
            file,
            "workload.senders",
            &senders.to_string(),
            &e.to_string(),
        )
    })?;
    if per_sender > 1 {
        flows = workload::split(flows, per_sender);
    }
    add_background((w, seed), file, (hosts, host_rate), "10ms", &mut flows)?;
    Ok(flows)
}

/// The most flows an incast may have: a million, each a queue pair with its own state.
const MAX_INCAST_FLOWS: u64 = 1_000_000;

/// `kind = "queries"`'s flows, and its cross traffic's.
fn query_flows(
    (w, seed): (&WorkloadSection, u64),
    file: &str,
    hosts: u32,
    host_rate: Bandwidth,
) -> Result<Vec<FlowSpec>, ScenarioError> {
    let load = w.load.unwrap_or(0.0);
    line_rate_fraction(file, "workload.load", load, "all hosts' line rate")?;
    let senders = w.senders.unwrap_or(50);
    if senders == 0 || senders >= hosts {
        return Err(invalid(
            file,
            "workload.senders",
            &senders.to_string(),
            &format!(
                "between 1 and {} senders per query: the topology has {hosts} hosts and a \
                 query's receiver is not one of its senders",
                hosts.saturating_sub(1)
            ),
        ));
    }
    let size_text = w.size.as_deref().unwrap_or("40KB");
    let size_bytes = parse_key::<Bytes>(file, "workload.size", size_text)?.0;
    if size_bytes == 0 || size_bytes > MAX_FLOW_BYTES {
        return Err(invalid(
            file,
            "workload.size",
            &format!("{size_text:?}"),
            &format!("between 1B and 2GiB (the {})", flow_limit()),
        ));
    }
    let duration_text = w.duration.as_deref().unwrap_or("5ms");
    let duration = arrivals_window(file, duration_text)?;
    let q = workload::QueryLoad {
        load,
        senders,
        size_bytes,
        duration,
    };
    if let Some(why) = q.too_many_flows(hosts, host_rate) {
        return Err(invalid(
            file,
            "workload.duration",
            &format!("{duration_text:?}"),
            &why,
        ));
    }
    let flows = workload::queries(hosts, host_rate, &q, seed)
        .map_err(|e| invalid(file, "workload", "(queries)", &e.to_string()))?;
    let mut flows = require_flows(
        file,
        ("workload.duration", duration_text),
        "no query arrives within it at this load; lengthen it",
        flows,
    )?;
    add_background(
        (w, seed),
        file,
        (hosts, host_rate),
        duration_text,
        &mut flows,
    )?;
    Ok(flows)
}

/// `workload.duration`'s arrival window, which must be longer than zero.
fn arrivals_window(file: &str, text: &str) -> Result<Duration, ScenarioError> {
    let duration = parse_key::<Duration>(file, "workload.duration", text)?;
    if duration == Duration::ZERO {
        return Err(invalid(
            file,
            "workload.duration",
            &format!("{text:?}"),
            "must be longer than zero",
        ));
    }
    Ok(duration)
}

/// `key`'s load, which must be a fraction in (0, 1] of `of` (a host's line rate, or all
/// hosts' together).
fn line_rate_fraction(file: &str, key: &str, load: f64, of: &str) -> Result<(), ScenarioError> {
    if load > 0.0 && load <= 1.0 {
        return Ok(());
    }
    Err(invalid(
        file,
        key,
        &super::real(load),
        &format!("a fraction of {of} in (0, 1]"),
    ))
}

/// Adds `background_load`'s cross traffic, if set, to `flows` (an incast's or the queries'):
/// Poisson arrivals of the IRN sizes for `background_duration` (default `default_duration`),
/// merged by start; at equal starts the incast's flows come first (a stable sort).
fn add_background(
    (w, seed): (&WorkloadSection, u64),
    file: &str,
    (hosts, host_rate): (u32, Bandwidth),
    default_duration: &str,
    flows: &mut Vec<FlowSpec>,
) -> Result<(), ScenarioError> {
    let Some(load) = w.background_load else {
        return Ok(());
    };
    line_rate_fraction(file, "workload.background_load", load, "line rate")?;
    let key = "workload.background_duration";
    let text = w.background_duration.as_deref().unwrap_or(default_duration);
    let duration = parse_key::<Duration>(file, key, text)?;
    let sizes = SizeDist::Cdf(Cdf::irn_default());
    check_flow_count(
        file,
        (key, text),
        (hosts, host_rate, load),
        &sizes,
        duration,
    )?;
    // A window of 0 draws no arrival: the run went without its cross traffic and said nothing.
    // (A short window may draw none too, as a seed's chance, which is not refused: a sweep over
    // seeds would fail at some of them.)
    if duration == Duration::ZERO {
        return Err(invalid(
            file,
            key,
            &format!("{text:?}"),
            &format!(
                "longer than zero: no background flow arrives in it at background_load = \
                 {load}; leave background_load out for none"
            ),
        ));
    }
    let background = workload::poisson(hosts, host_rate, load, &sizes, duration, seed);
    flows.extend(background);
    flows.sort_by_key(|f| f.start);
    Ok(())
}

/// `workload.verbs`, checked against the rest of the scenario: verbs run on the RDMA transports
/// and count their real headers.
pub(super) fn verbs_mix(
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
        super::real(m.write),
        super::real(m.write_imm),
        super::real(m.read),
        super::real(m.send),
        super::real(m.atomic)
    );
    let weights = [
        ("write", m.write),
        ("write_imm", m.write_imm),
        ("read", m.read),
        ("send", m.send),
        ("atomic", m.atomic),
    ];
    if let Some((verb, w)) = weights.iter().find(|(_, w)| !(0.0..=1e9).contains(w)) {
        return Err(invalid(
            file,
            &format!("{key}.{verb}"),
            &super::real(*w),
            "a relative weight between 0 and 1e9 (NaN and infinities are no weights)",
        ));
    }
    let mix = VerbMix::new([m.write, m.write_imm, m.read, m.send, m.atomic])
        .map_err(|e| invalid(file, key, &shown, &e.to_string()))?;
    if matches!(t.kind, TransportKind::Tcp | TransportKind::MpRdma) {
        return Err(invalid(file, "transport.kind", &format!("\"{}\"", t.kind.name()),
            "workload.verbs needs an RDMA transport (irn, roce, irn-go-back-n, irn-without-bdp-fc, irn-without-sack)"));
    }
    if extra_header_bytes != 0 {
        return Err(invalid(file, "transport.header_overhead", &format!("{:?}", t.header_overhead),
            "\"0B\" with workload.verbs, whose packets carry IRN's real headers (16 B RETH per Write packet, 6 B per Send packet)"));
    }
    Ok(Some(mix))
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

/// `workload.sizes`: a distribution to draw flow sizes from.
fn size_dist(s: &SizesSection, file: &str, base_dir: &Path) -> Result<SizeDist, ScenarioError> {
    Ok(match s {
        SizesSection::IrnDefault => SizeDist::Cdf(Cdf::irn_default()),
        SizesSection::Alistorage => SizeDist::Cdf(Cdf::builtin(BuiltinCdf::Alistorage)),
        SizesSection::FbHadoop => SizeDist::Cdf(Cdf::builtin(BuiltinCdf::FbHadoop)),
        SizesSection::Websearch => SizeDist::Cdf(Cdf::builtin(BuiltinCdf::WebSearch)),
        SizesSection::FbHadoopHpcc => SizeDist::Cdf(Cdf::builtin(BuiltinCdf::FbHadoopHpcc)),
        SizesSection::Cdf(p) => {
            let key = "workload.sizes.cdf";
            let cdf = Cdf::from_file(&resolve(base_dir, p))
                .map_err(|e| invalid(file, key, &format!("{p:?}"), &e.to_string()))?;
            if let Some(why) = cdf.unusable() {
                return Err(invalid(file, key, &format!("{p:?}"), &why));
            }
            SizeDist::Cdf(cdf)
        }
        SizesSection::Uniform([lo, hi]) => {
            let lo_b = parse_key::<Bytes>(file, "workload.sizes.uniform", lo)?.0;
            let hi_b = parse_key::<Bytes>(file, "workload.sizes.uniform", hi)?.0;
            if lo_b == 0 || hi_b < lo_b || hi_b > MAX_FLOW_BYTES {
                return Err(invalid(
                    file,
                    "workload.sizes.uniform",
                    &format!("[{lo:?}, {hi:?}]"),
                    &format!("two sizes, 0 < low <= high <= 2GiB (the {})", flow_limit()),
                ));
            }
            SizeDist::Uniform { lo: lo_b, hi: hi_b }
        }
        SizesSection::Fixed(v) => {
            let b = parse_key::<Bytes>(file, "workload.sizes.fixed", v)?.0;
            if b == 0 || b > MAX_FLOW_BYTES {
                return Err(invalid(
                    file,
                    "workload.sizes.fixed",
                    &format!("{v:?}"),
                    &format!("between 1B and 2GiB (the {})", flow_limit()),
                ));
            }
            SizeDist::Fixed(b)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse;

    /// An incast's total is one flow per sender, each in the flow-size limit; a verb's weight is
    /// a finite number (a NaN or infinite weight would leave the draw meaningless).
    #[test]
    fn incast_totals_and_verb_weights_have_a_range() {
        let incast =
            "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nkind = \"incast\"\nsenders = 2\n";
        let cases = [
            (
                format!("{incast}total = \"1B\"\n"),
                "workload.total = \"1B\": between 2B and 4294967296B (2 flows: 2 senders, 1 each, \
                 every flow at least a byte and at most 2GiB",
            ),
            (
                format!("{incast}flows_per_sender = 3\ntotal = \"5B\"\n"),
                "workload.total = \"5B\": between 6B and 12884901888B (6 flows: 2 senders, 3 each",
            ),
            (
                format!("{incast}flows_per_sender = 0\n"),
                "workload.flows_per_sender = 0: between 1 and 500000 (2 senders, at most 1000000 \
                 flows in all)",
            ),
            (
                format!("{incast}total = \"18446744073709551615B\"\n"),
                "workload.total = \"18446744073709551615B\": between 2B and",
            ),
            (
                "[workload]\nverbs = { write = nan }\n".to_string(),
                "workload.verbs.write = nan: a relative weight between 0 and 1e9",
            ),
            (
                "[workload]\nverbs = { read = 1, atomic = 1e308 }\n".to_string(),
                "workload.verbs.atomic = 1e308: a relative weight",
            ),
        ];
        for (text, want) in cases {
            let err = parse(&text, "t.toml", Path::new("."), &[])
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{text}: {err}");
        }
    }

    /// Variants that change only how the flows are carried share one copy of them; a variant
    /// that changes the workload, the seed or the network gets its own, the same as a run of
    /// its own would build.
    #[test]
    fn variants_share_the_flows_they_have_in_common() {
        let text = "[topology]\nkind = \"star\"\nhosts = 8\n[workload]\nload = 0.5\n\
                    duration = \"50us\"\n\
                    [[compare]]\nname = \"irn\"\nset = { \"transport.kind\" = \"irn\" }\n\
                    [[compare]]\nname = \"roce\"\nset = { \"transport.kind\" = \"roce\" }\n\
                    [[compare]]\nname = \"load\"\nset = { \"workload.load\" = 0.3 }\n\
                    [[compare]]\nname = \"seed\"\nset = { seed = 2 }\n\
                    [[compare]]\nname = \"hosts\"\nset = { \"topology.hosts\" = 6 }\n\
                    [[compare]]\nname = \"verbs\"\nset = { \"workload.verbs\" = { read = 1 } }\n";
        let runs = parse(text, "t.toml", Path::new("."), &[]).unwrap().runs;
        let flows = |i: usize| &runs[i].config.flows;
        assert!(Arc::ptr_eq(flows(0), flows(1)));
        for (i, run) in runs.iter().enumerate().skip(2) {
            assert!(!Arc::ptr_eq(flows(0), flows(i)), "{}", run.name);
            let set = match run.name.as_str() {
                "load" => "workload.load=0.3",
                "seed" => "seed=2",
                "hosts" => "topology.hosts=6",
                _ => "workload.verbs={ read = 1 }",
            };
            let plain = "[topology]\nkind = \"star\"\nhosts = 8\n[workload]\nload = 0.5\n\
                         duration = \"50us\"\n";
            let alone = parse(plain, "t.toml", Path::new("."), &[set.to_string()]).unwrap();
            assert_eq!(*alone.runs[0].config.flows, **flows(i), "{set}");
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
        // A window no background flow arrives in is refused, not run without them.
        for (duration, want) in [("0us", "longer than zero"), ("0 ns", "longer than zero")] {
            let err = parse(
                &format!(
                    "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nkind = \"incast\"\n\
                     senders = 3\nbackground_load = 0.5\nbackground_duration = \"{duration}\"\n"
                ),
                "t.toml",
                Path::new("."),
                &[],
            )
            .unwrap_err();
            assert!(
                err.to_string().contains(&format!(
                    "workload.background_duration = \"{duration}\": {want}: no background \
                     flow arrives in it at background_load = 0.5"
                )),
                "{err}"
            );
        }
        let err = parse(
            "[workload]\nkind = \"incast\"\nsenders = 3\nbackground_duration = \"1ms\"\n",
            "t.toml",
            Path::new("."),
            &[],
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("workload.background_duration is set"),
            "{err}"
        );
    }

    /// A collective job's defaults, which `--set` cannot check (docs/scenario-reference.md):
    /// written out, they configure the run that leaving them out does; the algorithm's
    /// depends on the operation.
    #[test]
    fn a_jobs_defaults_are_the_documented_ones() {
        let config = |job: &str| {
            let text = format!(
                "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nkind = \"collective\"\n\
                 [[workload.job]]\nsize = \"1MB\"\nranks = 3\n{job}"
            );
            let run = parse(&text, "t.toml", Path::new("."), &[])
                .unwrap()
                .runs
                .remove(0);
            format!("{:?}", run.config)
        };
        for op in ["all-reduce", "all-to-all"] {
            let algorithm = if op == "all-to-all" {
                "pairwise"
            } else {
                "ring"
            };
            assert_eq!(
                config(&format!("op = \"{op}\"\n")),
                config(&format!(
                    "op = \"{op}\"\nplacement = \"contiguous\"\nalgorithm = \"{algorithm}\"\n\
                     channels = 1\niterations = 1\ncompute_gap = \"0us\"\nstart = \"0us\"\n"
                )),
                "{op}"
            );
        }
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

    /// A size distribution that cannot give a flow says what is wrong with it, not "lengthen
    /// workload.duration", which could never help.
    #[test]
    fn a_size_distribution_without_a_valid_flow_says_why() {
        let dir = std::env::temp_dir().join(format!("irn-bad-cdf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("zero.txt"), "0 0\n0 100\n").unwrap();
        std::fs::write(dir.join("huge.txt"), "3000000000 0\n4000000000 100\n").unwrap();
        let cases = [
            (
                "{ cdf = \"zero.txt\" }",
                "workload.sizes.cdf = \"zero.txt\": every size in it is 0 B: a flow carries at \
                 least one byte",
            ),
            (
                "{ cdf = \"huge.txt\" }",
                "workload.sizes.cdf = \"huge.txt\": its largest size, 4000000000 B, is above the \
                 flow-size limit (2147483648 B, the RDMA message limit)",
            ),
            (
                "{ fixed = \"3GB\" }",
                "workload.sizes.fixed = \"3GB\": between 1B and 2GiB (the flow-size limit",
            ),
            (
                "{ uniform = [\"1KB\", \"3GB\"] }",
                "workload.sizes.uniform = [\"1KB\", \"3GB\"]: two sizes, 0 < low <= high <= 2GiB",
            ),
        ];
        for (sizes, want) in cases {
            let text = format!("[workload]\nsizes = {sizes}\n");
            let err = parse(&text, "t.toml", &dir, &[]).unwrap_err().to_string();
            assert!(err.contains(want), "{sizes}: {err}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A start the clock could hold but not run a flow from to its end is refused (it ran with
    /// the clock stopped at its limit); the latest allowed start runs.
    #[test]
    fn a_flow_starting_past_the_clocks_reach_is_refused() {
        let trace = |start_ns: u64| {
            format!(
                "[workload]\nkind = \"trace\"\ncsv = \"src,dst,size_bytes,start_ns\\n0,1,1000,{start_ns}\\n\"\n"
            )
        };
        let latest_ns = LATEST_START.as_ps() / 1000;
        assert!(parse(&trace(latest_ns), "t.toml", Path::new("."), &[]).is_ok());
        let err = parse(&trace(latest_ns + 1), "t.toml", Path::new("."), &[])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "t.toml: workload.csv: a flow would start at 9223372.036854776 s, later than \
                 irn's clock"
            ) && err.contains("at most 9223372.036854775 s"),
            "{err}"
        );
        // Late through delays: the DAG flow or the collective job that is late, by name.
        let dag =
            "[workload]\nkind = \"dag\"\ncsv = \"id,src,dst,size_bytes,start_ns,after,delay_ns\\n\
                   a,0,1,1000,0,,\\nb,1,2,100,,a,18446744073709551\\n\
                   c,2,3,100,,b,18446744073709551\\n\"\n";
        let err = parse(dag, "t.toml", Path::new("."), &[])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "t.toml: workload.csv: flow `c` (after its parents and their delay_ns) would \
                 start past 18446744.073709551 s, the clock's end"
            ),
            "{err}"
        );
        let job = "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nkind = \"collective\"\n\
                   [[workload.job]]\nop = \"all-reduce\"\nsize = \"1KB\"\nranks = 2\n\
                   iterations = 3\ncompute_gap = \"5000000s\"\n";
        let err = parse(job, "t.toml", Path::new("."), &[])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "t.toml: workload.job[0]: its iteration 2's flows (after start and 2 \
                 compute_gaps) would start at 10000000.000000000 s, later than"
            ),
            "{err}"
        );
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
