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
    bdp_cap_packets, pfc_headroom_bytes, EcnConfig, InitialPsn, PfcConfig, PfcThreshold, SimConfig,
    SwitchConfig, SwitchModel, DEFAULT_FCT_SIZE_BUCKETS,
};
use crate::ids::{HostIdx, NodeId};
use crate::topology::Topology;
use crate::units::Bytes;
use crate::workload::{self, Cdf, FlowSpec, SizeDist, VerbMix};

mod load_balancing;
mod ordering;

pub use load_balancing::{BalancerKind, LoadBalancingSection};
pub use ordering::{Cap, OrderingKind, OrderingSection};

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

/// The network's shape. Keys that do not apply to the chosen `kind` are rejected.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologySection {
    /// Default: `"ns3"` when `file` is given, `"fat-tree"` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<TopologyKind>,
    /// fat-tree: switch radix (IRN default 6: 54 hosts, 45 switches).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub k: Option<u32>,
    /// star: hosts on the one switch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts: Option<u32>,
    /// dumbbell: hosts on each side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub right: Option<u32>,
    /// leaf-spine: leaf switches (default 8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaves: Option<u32>,
    /// leaf-spine: spine switches, each linked once to every leaf (default 8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spines: Option<u32>,
    /// leaf-spine: hosts on each leaf (default 16).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts_per_leaf: Option<u32>,
    /// Every link's rate (not for ns3 files, which give each link's own). Default 40Gbps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_rate: Option<String>,
    /// Every link's propagation delay (not for ns3 files). Default 2us.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_delay: Option<String>,
    /// dumbbell: the middle link's rate (default: `link_rate`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bottleneck_rate: Option<String>,
    /// leaf-spine: the leaf-spine links' rate (default: `link_rate`, which then sets only
    /// the host links').
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spine_link_rate: Option<String>,
    /// ns3: a topology file in the HPCC/ConWeave format (MODEL.md §8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyKind {
    /// Al-Fares k-ary fat-tree.
    #[default]
    FatTree,
    /// Hosts on one switch.
    Star,
    /// Two switches joined by one link.
    Dumbbell,
    /// Leaves with hosts, every leaf linked to every spine (Eunomia's Clos).
    LeafSpine,
    /// Any graph, from an ns-3 topology file.
    Ns3,
}

fn default_rate() -> String {
    "40Gbps".into()
}
fn default_delay() -> String {
    "2us".into()
}

impl Default for TopologySection {
    fn default() -> Self {
        TopologySection {
            kind: Some(TopologyKind::FatTree),
            k: Some(6),
            hosts: None,
            left: None,
            right: None,
            leaves: None,
            spines: None,
            hosts_per_leaf: None,
            link_rate: Some(default_rate()),
            link_delay: Some(default_delay()),
            bottleneck_rate: None,
            spine_link_rate: None,
            file: None,
        }
    }
}

impl TopologySection {
    /// Fills the kind's defaults; rejects keys of other kinds and missing required ones.
    fn normalize(&mut self, file: &str) -> Result<(), ScenarioError> {
        let k = *self.kind.get_or_insert(if self.file.is_some() {
            TopologyKind::Ns3
        } else {
            TopologyKind::FatTree
        });
        let kind = match k {
            TopologyKind::FatTree => "fat-tree",
            TopologyKind::Star => "star",
            TopologyKind::Dumbbell => "dumbbell",
            TopologyKind::LeafSpine => "leaf-spine",
            TopologyKind::Ns3 => "ns3",
        };
        let uniform = k != TopologyKind::Ns3;
        let keys = [
            ("k", self.k.is_some(), k == TopologyKind::FatTree),
            ("hosts", self.hosts.is_some(), k == TopologyKind::Star),
            ("left", self.left.is_some(), k == TopologyKind::Dumbbell),
            ("right", self.right.is_some(), k == TopologyKind::Dumbbell),
            (
                "bottleneck_rate",
                self.bottleneck_rate.is_some(),
                k == TopologyKind::Dumbbell,
            ),
            (
                "leaves",
                self.leaves.is_some(),
                k == TopologyKind::LeafSpine,
            ),
            (
                "spines",
                self.spines.is_some(),
                k == TopologyKind::LeafSpine,
            ),
            (
                "hosts_per_leaf",
                self.hosts_per_leaf.is_some(),
                k == TopologyKind::LeafSpine,
            ),
            (
                "spine_link_rate",
                self.spine_link_rate.is_some(),
                k == TopologyKind::LeafSpine,
            ),
            ("link_rate", self.link_rate.is_some(), uniform),
            ("link_delay", self.link_delay.is_some(), uniform),
            ("file", self.file.is_some(), !uniform),
        ];
        check_keys(file, ("topology", "kind"), kind, &keys)?;
        if uniform {
            self.link_rate.get_or_insert_with(default_rate);
            self.link_delay.get_or_insert_with(default_delay);
        }
        match k {
            TopologyKind::FatTree => {
                self.k.get_or_insert(6);
            }
            TopologyKind::Star => require(file, "topology.hosts", kind, self.hosts.is_some())?,
            TopologyKind::Dumbbell => {
                require(file, "topology.left", kind, self.left.is_some())?;
                require(file, "topology.right", kind, self.right.is_some())?;
            }
            TopologyKind::LeafSpine => {
                self.leaves.get_or_insert(8);
                self.spines.get_or_insert(8);
                self.hosts_per_leaf.get_or_insert(16);
            }
            TopologyKind::Ns3 => require(file, "topology.file", kind, self.file.is_some())?,
        }
        Ok(())
    }
}

/// Rejects keys set for a kind they do not apply to: (key, is set, applies). The kind is the
/// value of `section.selector` (`kind`, or the switch's `model`).
fn check_keys(
    file: &str,
    (section, selector): (&str, &str),
    kind: &str,
    keys: &[(&str, bool, bool)],
) -> Result<(), ScenarioError> {
    match keys.iter().find(|(_, set, applies)| *set && !applies) {
        Some((key, _, _)) => Err(invalid(
            file,
            &format!("{section}.{key}"),
            "(set)",
            &format!(
                "does not apply to {section}.{selector} = \"{kind}\" (a [[compare]] variant or \
                 --set that changes the {selector} can replace the whole section: \
                 \"{section}\" = {{ {selector} = \"{kind}\" }})"
            ),
        )),
        None => Ok(()),
    }
}

fn require(file: &str, key: &str, kind: &str, present: bool) -> Result<(), ScenarioError> {
    if present {
        Ok(())
    } else {
        Err(invalid(
            file,
            key,
            "(missing)",
            &format!("required for kind = \"{kind}\""),
        ))
    }
}

/// Switch buffers and PFC (IRN §4.1).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchSection {
    /// `"input-queued"` (the IRN paper's) or `"shared-buffer"` (Eunomia's, the ns-3 models').
    pub model: SwitchModelKind,
    /// Buffer per input port (input-queued, default 240KB) or per switch (shared-buffer,
    /// default 9MB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer: Option<String>,
    /// shared-buffer: the dynamic threshold's factor (a queue or input share may use up to
    /// `alpha` × the free shared buffer). Default 0.125.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    pub pfc: bool,
    /// `"auto"` (buffer minus the upstream link's round trip, two frames and a PAUSE frame) or a
    /// size.
    pub pfc_threshold: String,
    /// Resume when this far below the threshold; `"auto"` is two full frames.
    pub pfc_resume_gap: String,
    /// ECN marking on output queues: `"auto"` (DCQCN's RED with DCQCN, DCTCP's step with DCTCP,
    /// none otherwise), `"off"`, `"dcqcn"` or `"dctcp"`.
    pub ecn: String,
    /// Override the marking's lower threshold (a size).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn_kmin: Option<String>,
    /// Override the marking's upper threshold (a size).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn_kmax: Option<String>,
    /// Override the marking probability at the upper threshold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn_pmax: Option<f64>,
}

impl Default for SwitchSection {
    fn default() -> Self {
        SwitchSection {
            model: SwitchModelKind::InputQueued,
            buffer: Some("240KB".into()),
            alpha: None,
            pfc: false,
            pfc_threshold: "auto".into(),
            pfc_resume_gap: "auto".into(),
            ecn: "auto".into(),
            ecn_kmin: None,
            ecn_kmax: None,
            ecn_pmax: None,
        }
    }
}

/// How switches buffer packets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SwitchModelKind {
    #[default]
    InputQueued,
    SharedBuffer,
}

impl SwitchSection {
    /// Fills the model's defaults; rejects keys of the other model.
    fn normalize(&mut self, file: &str) -> Result<(), ScenarioError> {
        let shared = self.model == SwitchModelKind::SharedBuffer;
        let kind = if shared {
            "shared-buffer"
        } else {
            "input-queued"
        };
        check_keys(
            file,
            ("switch", "model"),
            kind,
            &[("alpha", self.alpha.is_some(), shared)],
        )?;
        if shared && self.pfc_threshold != "auto" {
            return Err(invalid(
                file,
                "switch.pfc_threshold",
                &format!("{:?}", self.pfc_threshold),
                "the shared-buffer switch pauses by its dynamic threshold; leave pfc_threshold at \"auto\"",
            ));
        }
        self.buffer
            .get_or_insert_with(|| if shared { "9MB" } else { "240KB" }.into());
        if shared {
            self.alpha.get_or_insert(DEFAULT_ALPHA);
        }
        Ok(())
    }
}

/// The shared-buffer switch's default dynamic-threshold factor: 1/8, i.e. the ns-3 RDMA models'
/// `pfc_a_shift = 3`.
const DEFAULT_ALPHA: f64 = 0.125;

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

/// A scenario that could not be loaded. Each message is whole, cause included, so no variant
/// also reports it as a `source()` (an error chain would print it twice).
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("{file}: cannot read: {error}")]
    Read { file: String, error: std::io::Error },
    #[error("{file}: {message}")]
    Syntax { file: String, message: String },
    #[error("{file}: {key} = {value}: {allowed}")]
    Invalid {
        file: String,
        key: String,
        value: String,
        allowed: String,
    },
}

impl ScenarioError {
    /// A value error, said to come from `[[compare]]` variant `name`.
    fn in_variant(self, name: &str) -> Self {
        match self {
            ScenarioError::Invalid {
                file,
                key,
                value,
                allowed,
            } => ScenarioError::Invalid {
                file,
                key: format!("variant `{name}`: {key}"),
                value,
                allowed,
            },
            other => other,
        }
    }
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

/// Splits `a.b=value`; the value is read as TOML (`true`, `8`, `0.5`, `"x"`), falling back to a
/// plain string (`40Gbps`).
fn parse_override(o: &str) -> Result<(String, toml::Value), String> {
    let (key, value) = o.split_once('=').ok_or("expected key=value")?;
    let key = key.trim();
    if key.is_empty() {
        return Err("empty key".into());
    }
    let value = value.trim();
    let parsed = toml::from_str::<toml::Table>(&format!("v = {value}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(value.to_string()));
    Ok((key.to_string(), parsed))
}

fn set_dotted(table: &mut toml::Table, key: &str, value: toml::Value) -> Result<(), String> {
    let mut parts: Vec<&str> = key.split('.').collect();
    let last = parts.pop().ok_or("empty key")?;
    let mut t = table;
    for p in parts {
        let entry = t
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        t = entry
            .as_table_mut()
            .ok_or_else(|| format!("`{p}` is not a table"))?;
    }
    t.insert(last.to_string(), value);
    Ok(())
}

fn invalid(file: &str, key: &str, value: &str, allowed: &str) -> ScenarioError {
    ScenarioError::Invalid {
        file: file.to_string(),
        key: key.to_string(),
        value: value.to_string(),
        allowed: allowed.to_string(),
    }
}

/// Parses a unit-bearing value, naming the key on failure.
fn parse_key<T: std::str::FromStr>(file: &str, key: &str, value: &str) -> Result<T, ScenarioError>
where
    T::Err: std::fmt::Display,
{
    value
        .parse()
        .map_err(|e: T::Err| invalid(file, key, &format!("{value:?}"), &e.to_string()))
}

/// Builds `kind = "leaf-spine"`, checking each count against the switch port limit first so
/// the error names the key to change.
fn leaf_spine(
    tp: &TopologySection,
    file: &str,
    rate: Bandwidth,
    delay: Duration,
) -> Result<Topology, ScenarioError> {
    let spine_rate = match &tp.spine_link_rate {
        Some(r) => parse_key::<Bandwidth>(file, "topology.spine_link_rate", r)?,
        None => rate,
    };
    let leaves = tp.leaves.unwrap_or(8);
    let spines = tp.spines.unwrap_or(8);
    let per_leaf = tp.hosts_per_leaf.unwrap_or(16);
    let max = crate::topology::MAX_SWITCH_PORTS as u32;
    let checks = [
        (
            "topology.leaves",
            leaves,
            (1..=max).contains(&leaves),
            format!("between 1 and {max} (a spine has one port per leaf, at most {max} ports)"),
        ),
        (
            "topology.hosts_per_leaf",
            per_leaf,
            (1..max).contains(&per_leaf),
            format!("between 1 and {} (a leaf has at most {max} ports)", max - 1),
        ),
        (
            "topology.spines",
            spines,
            spines >= 1 && spines.saturating_add(per_leaf) <= max,
            format!(
                "between 1 and {} (a leaf has hosts_per_leaf = {per_leaf} host ports plus one \
                 port per spine, at most {max} ports)",
                max.saturating_sub(per_leaf)
            ),
        ),
        (
            "topology.hosts_per_leaf",
            per_leaf,
            u64::from(leaves) * u64::from(per_leaf) >= 2,
            format!("at least 2 with leaves = {leaves} (the network needs at least 2 hosts)"),
        ),
    ];
    if let Some((key, value, _, allowed)) = checks.iter().find(|c| !c.2) {
        return Err(invalid(file, key, &value.to_string(), allowed));
    }
    Topology::leaf_spine(leaves, spines, per_leaf, rate, spine_rate, delay)
        .map_err(|e| invalid(file, "topology", "leaf-spine", &e.to_string()))
}

/// Largest flow: the RDMA message limit (2 GiB).
const MAX_FLOW_BYTES: u64 = 1 << 31;

/// Turns a resolved, normalized scenario into a runnable configuration.
fn validate(s: &ScenarioFile, file: &str, base_dir: &Path) -> Result<SimConfig, ScenarioError> {
    let tp = &s.topology;
    let rate = parse_key::<Bandwidth>(
        file,
        "topology.link_rate",
        tp.link_rate.as_deref().unwrap_or("40Gbps"),
    )?;
    let delay = parse_key::<Duration>(
        file,
        "topology.link_delay",
        tp.link_delay.as_deref().unwrap_or("2us"),
    )?;
    let topology = match tp.kind.unwrap_or_default() {
        TopologyKind::Ns3 => {
            let name = tp.file.as_deref().unwrap_or("");
            crate::topology::ns3::read_topology(&resolve(base_dir, name))
                .map_err(|e| invalid(file, "topology.file", &format!("{name:?}"), &e.to_string()))?
        }
        TopologyKind::FatTree => {
            let k = tp.k.unwrap_or(6);
            if k > 24 {
                return Err(invalid(
                    file,
                    "topology.k",
                    &k.to_string(),
                    "at most 24 (3456 hosts)",
                ));
            }
            Topology::fat_tree(k, rate, delay)
                .map_err(|e| invalid(file, "topology.k", &k.to_string(), &e.to_string()))?
        }
        TopologyKind::Star => {
            let hosts = tp.hosts.unwrap_or(0);
            if !(2..=63).contains(&hosts) {
                return Err(invalid(
                    file,
                    "topology.hosts",
                    &hosts.to_string(),
                    "between 2 and 63 (a switch has at most 64 ports)",
                ));
            }
            Topology::star(hosts, rate, delay)
                .map_err(|e| invalid(file, "topology.hosts", &hosts.to_string(), &e.to_string()))?
        }
        TopologyKind::Dumbbell => {
            let bottleneck = match &tp.bottleneck_rate {
                Some(b) => parse_key::<Bandwidth>(file, "topology.bottleneck_rate", b)?,
                None => rate,
            };
            let (left, right) = (tp.left.unwrap_or(0), tp.right.unwrap_or(0));
            for (key, n) in [("topology.left", left), ("topology.right", right)] {
                if !(1..=63).contains(&n) {
                    return Err(invalid(file, key, &n.to_string(), "between 1 and 63"));
                }
            }
            Topology::dumbbell(left, right, rate, bottleneck, delay)
                .map_err(|e| invalid(file, "topology", "dumbbell", &e.to_string()))?
        }
        TopologyKind::LeafSpine => leaf_spine(tp, file, rate, delay)?,
    };

    let buffer_text = s.switch.buffer.as_deref().unwrap_or("240KB");
    let buffer = parse_key::<Bytes>(file, "switch.buffer", buffer_text)?.0;
    let model = match s.switch.model {
        SwitchModelKind::InputQueued => SwitchModel::InputQueued,
        SwitchModelKind::SharedBuffer => {
            let alpha = s.switch.alpha.unwrap_or(DEFAULT_ALPHA);
            // Switches apply alpha in 16.16 fixed point.
            if !((1.0 / 65536.0..=65536.0).contains(&alpha)) {
                return Err(invalid(
                    file,
                    "switch.alpha",
                    &alpha.to_string(),
                    "a number between 1/65536 and 65536",
                ));
            }
            SwitchModel::SharedBuffer { alpha }
        }
    };
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
    if buffer < max_frame {
        return Err(invalid(
            file,
            "switch.buffer",
            &format!("{buffer_text:?}"),
            &format!("must hold at least one full frame ({max_frame}B)"),
        ));
    }
    // Why PFC can drop packets, when it can: then timeouts must stay on.
    let mut pfc_drops = None;
    // Shared-buffer switches with PFC: the most headroom one switch reserves, and the switch.
    let mut shared_reserved = None;
    let pfc = if s.switch.pfc {
        let threshold = match s.switch.pfc_threshold.as_str() {
            "auto" => PfcThreshold::Auto,
            v => {
                let b = parse_key::<Bytes>(file, "switch.pfc_threshold", v)?.0;
                if b == 0 || b >= buffer {
                    return Err(invalid(
                        file,
                        "switch.pfc_threshold",
                        &format!("{v:?}"),
                        "\"auto\" or a size between 0 and the buffer",
                    ));
                }
                PfcThreshold::Bytes(b)
            }
        };
        let resume_gap_bytes = match s.switch.pfc_resume_gap.as_str() {
            "auto" => 2 * max_frame,
            v => parse_key::<Bytes>(file, "switch.pfc_resume_gap", v)?.0,
        };
        match model {
            // A threshold closer to the buffer's end than what the upstream link can deliver
            // after a pause loses packets.
            SwitchModel::InputQueued => {
                let worst = (topology.ports().iter())
                    .map(|p| (pfc_headroom_bytes(p, max_frame), p))
                    .max_by_key(|&(headroom, _)| headroom);
                match (threshold, worst) {
                    (PfcThreshold::Auto, Some((headroom, link))) if headroom >= buffer => {
                        return Err(invalid(
                            file,
                            "switch.buffer",
                            &format!("{buffer_text:?}"),
                            &format!(
                                "too small for PFC headroom: an input on a {}, {} link needs \
                                 more than {}B (the link round trip, two frames and a PAUSE \
                                 frame); enlarge it or set switch.pfc_threshold",
                                link.rate, link.delay, headroom
                            ),
                        ));
                    }
                    (PfcThreshold::Bytes(b), Some((headroom, link))) if b + headroom > buffer => {
                        pfc_drops = Some(format!(
                            "switch.pfc_threshold = {:?} lets PFC drop packets: an input on a \
                             {}, {} link can still receive {headroom}B after it pauses (the link \
                             round trip, two frames and a PAUSE frame), and {b}B + {headroom}B is \
                             more than the {buffer}B buffer",
                            s.switch.pfc_threshold, link.rate, link.delay
                        ));
                    }
                    _ => {}
                }
            }
            // Every input reserves its headroom out of the one buffer. Were the rest, the shared
            // pool, smaller than a frame, every packet would land in headroom and pause its
            // sender: the buffer must hold all the headrooms and a frame besides.
            SwitchModel::SharedBuffer { .. } => {
                let reserved = |n: NodeId| -> u64 {
                    let ports = topology.node_ports(n);
                    topology.ports()[ports.start as usize..ports.end as usize]
                        .iter()
                        .map(|p| pfc_headroom_bytes(p, max_frame))
                        .sum()
                };
                let worst = topology.switches().iter().map(|&n| (reserved(n), n)).max();
                if let Some((reserved, node)) = worst.filter(|&(r, _)| r + max_frame > buffer) {
                    let ports = topology.node_ports(node).len();
                    return Err(invalid(
                        file,
                        "switch.buffer",
                        &format!("{buffer_text:?}"),
                        &format!(
                            "too small for PFC headroom: switch node {node}'s {ports} inputs \
                             reserve {reserved}B (each its link's round trip, two frames and a \
                             PAUSE frame), and the shared pool must hold a {max_frame}B frame \
                             besides; at least {}B",
                            reserved + max_frame
                        ),
                    ));
                }
                shared_reserved = worst;
            }
        }
        Some(PfcConfig {
            threshold,
            resume_gap_bytes,
        })
    } else {
        None
    };

    // A full frame must fit under the dynamic threshold of an empty pool, or no packet ever
    // passes through the shared pool: without PFC each is dropped, with PFC each lands in
    // headroom and pauses its sender.
    if let SwitchModel::SharedBuffer { alpha } = model {
        let (reserved, node) = shared_reserved.unwrap_or((0, NodeId(0)));
        let pool = buffer - reserved;
        let threshold = crate::switch::shared::empty_pool_threshold(pool, alpha);
        if threshold < max_frame {
            // The least alpha on the switches' 1/65536 grid, rounded up to 6 decimals.
            let least = ((max_frame << 16).div_ceil(pool) as f64 / 65536.0 * 1e6).ceil() / 1e6;
            let (what, outcome) = if s.switch.pfc {
                (
                    format!(
                        "the shared pool (the {buffer}B buffer less the {reserved}B switch node \
                         {node}'s inputs reserve for PFC headroom)"
                    ),
                    "every packet would land in headroom and pause its sender",
                )
            } else {
                (
                    format!("the {buffer}B buffer"),
                    "every full-size packet would be dropped and no flow would finish",
                )
            };
            return Err(invalid(
                file,
                "switch.alpha",
                &alpha.to_string(),
                &format!(
                    "alpha × {what} is {threshold}B, less than a full frame ({max_frame}B): \
                     {outcome}; use an alpha of at least {least} or a larger buffer"
                ),
            ));
        }
    }

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
            model,
            buffer_bytes: buffer,
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
    Flag(&'a mut bool),
    /// One of a fixed set of names (listed, quoted, in the `String`); the function stores the
    /// value named, `false` if none is.
    Choice(Box<dyn FnMut(&str) -> bool + 'a>, String),
    /// Read before the others (a preset the others override); listed so it is allowed.
    Applied,
}

/// A [`Param::Choice`] for the enum field `field`, whose values are named by
/// [`Named::NAMES`](irn_core::cc::Named).
fn choice<T: irn_core::cc::Named>(field: &mut T) -> Param<'_> {
    let names: Vec<String> = T::NAMES.iter().map(|(n, _)| format!("\"{n}\"")).collect();
    Param::Choice(
        Box::new(move |v| T::from_name(v).map(|x| *field = x).is_some()),
        names.join(" or "),
    )
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
            Param::Flag(b) => match value.as_bool() {
                Some(v) => **b = v,
                None => return Err(invalid(file, &full, &value.to_string(), "true or false")),
            },
            Param::Choice(set, names) => {
                if !value.as_str().is_some_and(set) {
                    return Err(invalid(file, &full, &value.to_string(), names));
                }
            }
            Param::Applied => {}
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
            use irn_core::cc::DcqcnParams;
            let table = t.dcqcn.as_ref().unwrap_or(&empty);
            // The preset first, so the table's other keys override it whatever their order.
            let mut p = match table.get("preset") {
                None => DcqcnParams::default(),
                Some(v) => v.as_str().and_then(DcqcnParams::preset).ok_or_else(|| {
                    let names: Vec<String> = DcqcnParams::PRESETS
                        .iter()
                        .map(|(n, _)| format!("\"{n}\""))
                        .collect();
                    invalid(
                        file,
                        "transport.dcqcn.preset",
                        &v.to_string(),
                        &names.join(" or "),
                    )
                })?,
            };
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
                ("clamp_target_rate", Param::Flag(&mut p.clamp_target_rate)),
                ("increase_stages", choice(&mut p.increase_stages)),
                ("alpha_update", choice(&mut p.alpha_update)),
                ("rate_decrease", choice(&mut p.rate_decrease)),
                ("cnp_on_nack", Param::Flag(&mut p.cnp_on_nack)),
                ("preset", Param::Applied),
            ];
            apply_params(file, "transport.dcqcn", table, params)?;
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

    fn one(text: &str) -> Result<Run, ScenarioError> {
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
    fn dcqcn_preset_then_its_overrides() {
        use irn_core::cc::{AlphaUpdate, DcqcnParams, IncreaseStages, RateDecrease};
        let dcqcn = |table: &str| {
            let run = one(&format!(
                "[transport]\ncc = \"dcqcn\"\n[transport.dcqcn]\n{table}"
            ));
            match run.unwrap().config.transport.cc {
                CcConfig::Dcqcn(p) => p,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(dcqcn(""), DcqcnParams::dcqcn_paper());
        assert_eq!(
            dcqcn("preset = \"dcqcn-paper\"\n"),
            DcqcnParams::dcqcn_paper()
        );
        assert_eq!(dcqcn("preset = \"mlx\"\n"), DcqcnParams::mlx());
        // Keys override the preset, written before or after it.
        let p = dcqcn("additive_increase = \"20Mbps\"\npreset = \"mlx\"\ncnp_on_nack = false\n");
        assert_eq!(
            p,
            DcqcnParams {
                additive_increase: Bandwidth::from_bps(20_000_000),
                cnp_on_nack: false,
                ..DcqcnParams::mlx()
            }
        );
        // And the ConnectX's behaviours one at a time on the paper's values.
        let p = dcqcn(
            "clamp_target_rate = false\nincrease_stages = \"timer\"\nalpha_update = \"periodic\"\n\
             rate_decrease = \"periodic\"\n",
        );
        assert_eq!(
            p,
            DcqcnParams {
                clamp_target_rate: false,
                increase_stages: IncreaseStages::Timer,
                alpha_update: AlphaUpdate::Periodic,
                rate_decrease: RateDecrease::Periodic,
                ..DcqcnParams::dcqcn_paper()
            }
        );
    }

    #[test]
    fn leaf_spine_keys_defaults_and_errors() {
        let t = one("[topology]\nkind = \"leaf-spine\"\nlink_rate = \"100Gbps\"\n")
            .unwrap()
            .config
            .topology;
        assert_eq!((t.hosts().len(), t.switches().len()), (128, 16));
        let t = one(
            "[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 3\nhosts_per_leaf = 4\n\
             spine_link_rate = \"100Gbps\"\n",
        )
        .unwrap()
        .config
        .topology;
        assert_eq!((t.hosts().len(), t.switches().len()), (8, 5));
        // Leaf 0 (node 8): 4 host ports at link_rate's default, then 3 spine ports.
        let rates: Vec<_> = t
            .node_ports(NodeId(8))
            .map(|p| t.ports()[p as usize].rate.to_string())
            .collect();
        assert_eq!(
            rates,
            ["40Gbps"; 4]
                .into_iter()
                .chain(["100Gbps"; 3])
                .collect::<Vec<_>>()
        );

        let cases = [
            (
                "leaves = 0",
                "t.toml: topology.leaves = 0: between 1 and 64",
            ),
            (
                "leaves = 65",
                "topology.leaves = 65: between 1 and 64 (a spine has one port per leaf",
            ),
            ("spines = 0", "topology.spines = 0: between 1 and 48"),
            (
                "spines = 49",
                "topology.spines = 49: between 1 and 48 (a leaf has hosts_per_leaf = 16 host ports",
            ),
            (
                "hosts_per_leaf = 0",
                "topology.hosts_per_leaf = 0: between 1 and 63",
            ),
            (
                "hosts_per_leaf = 64",
                "topology.hosts_per_leaf = 64: between 1 and 63",
            ),
            (
                "leaves = 1\nhosts_per_leaf = 1",
                "topology.hosts_per_leaf = 1: at least 2 with leaves = 1",
            ),
            (
                "spine_link_rate = \"fast\"",
                "t.toml: topology.spine_link_rate = \"fast\"",
            ),
            (
                "k = 4",
                "topology.k = (set): does not apply to topology.kind = \"leaf-spine\"",
            ),
        ];
        for (keys, want) in cases {
            let err = one(&format!("[topology]\nkind = \"leaf-spine\"\n{keys}\n"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{keys}: {err}");
        }
        for key in [
            "leaves = 2",
            "spines = 2",
            "hosts_per_leaf = 2",
            "spine_link_rate = \"1Gbps\"",
        ] {
            let err = one(&format!("[topology]\nkind = \"fat-tree\"\n{key}\n"))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("does not apply to topology.kind = \"fat-tree\""),
                "{key}: {err}"
            );
        }
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
    fn an_input_buffer_must_exceed_its_links_pfc_headroom() {
        // 40 Gb/s, 10 us: 2 × 50 000 B of round trip + 2 × 1086 B + 64 B = 102 236 B.
        let text = |buffer: &str| {
            format!(
                "[topology]\nkind = \"star\"\nhosts = 4\nlink_delay = \"10us\"\n\
                 [switch]\nbuffer = \"{buffer}\"\npfc = true\n"
            )
        };
        let err = one(&text("102236B")).unwrap_err().to_string();
        assert!(
            err.contains("too small for PFC headroom: an input on a 40Gbps, 10us link needs more than 102236B"),
            "{err}"
        );
        assert!(one(&text("102237B")).is_ok());
        // A fixed threshold is the user's to choose.
        let fixed = text("102236B") + "pfc_threshold = \"50KB\"\n";
        assert!(one(&fixed).is_ok());
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

    #[test]
    fn a_shared_buffer_must_hold_every_inputs_pfc_headroom_and_a_frame() {
        // One switch with 4 ports of 100 Gb/s, 1 us: each input reserves 2 × 12 500 B of round
        // trip + 2 × 1086 B frames + a 64 B PAUSE = 27 236 B; with a 1086 B frame besides, the
        // buffer needs 110 030 B.
        let text = |buffer: &str| {
            format!(
                "[topology]\nkind = \"star\"\nhosts = 4\nlink_rate = \"100Gbps\"\n\
                 link_delay = \"1us\"\n[switch]\nmodel = \"shared-buffer\"\nbuffer = \"{buffer}\"\n\
                 alpha = 1\npfc = true\n"
            )
        };
        let err = one(&text("110029B")).unwrap_err().to_string();
        assert!(
            err.contains("switch.buffer = \"110029B\": too small for PFC headroom: switch node 4's 4 inputs reserve 108944B"),
            "{err}"
        );
        assert!(err.contains("at least 110030B"), "{err}");
        assert!(one(&text("110030B")).is_ok());
        // Without PFC there is no headroom to reserve.
        assert!(one(&text("2KB").replace("pfc = true", "pfc = false")).is_ok());
    }

    #[test]
    fn a_frame_must_fit_under_the_dynamic_threshold_of_an_empty_shared_pool() {
        // A star of 4 hosts at 100 Gb/s, 1 us: with PFC each input reserves 27 236 B (see the
        // test above), 108 944 B in all, so a 118 944 B buffer leaves a 10 000 B pool and a
        // 115 944 B one 7 000 B.
        let text = |buffer: &str, alpha: &str, pfc: bool| {
            format!(
                "[topology]\nkind = \"star\"\nhosts = 4\nlink_rate = \"100Gbps\"\n\
                 link_delay = \"1us\"\n[switch]\nmodel = \"shared-buffer\"\nbuffer = \"{buffer}\"\n\
                 alpha = {alpha}\npfc = {pfc}\n"
            )
        };
        // (buffer, alpha, PFC, the error, or None). alpha × pool must reach 1086 B: the least
        // alpha on the 1/65536 grid is ceil(1086 × 65536 / pool) / 65536.
        let cases: &[(&str, &str, bool, Option<&str>)] = &[
            ("115944B", "0.125", true, Some(
                "switch.alpha = 0.125: alpha × the shared pool (the 115944B buffer less the \
                 108944B switch node 4's inputs reserve for PFC headroom) is 875B",
            )),
            ("118944B", "0.1", true, Some(
                "is 1000B, less than a full frame (1086B): every packet would land in headroom \
                 and pause its sender; use an alpha of at least 0.108613 or a larger buffer",
            )),
            ("118944B", "0.108613", true, None),
            ("10000B", "0.1", false, Some(
                "switch.alpha = 0.1: alpha × the 10000B buffer is 1000B, less than a full frame \
                 (1086B): every full-size packet would be dropped and no flow would finish",
            )),
            ("10000B", "0.108613", false, None),
            // 0.0001 applies as 7/65536: 9 000 000 × 7 / 65536 = 961.3.
            ("9MB", "0.0001", false, Some("is 961B, less than a full frame")),
            ("9MB", "0.125", true, None),
        ];
        for &(buffer, alpha, pfc, want) in cases {
            let got = one(&text(buffer, alpha, pfc)).map(|_| ());
            match want {
                None => assert!(got.is_ok(), "{buffer} {alpha} {pfc}: {got:?}"),
                Some(want) => {
                    let err = got.unwrap_err().to_string();
                    assert!(err.contains(want), "{buffer} {alpha} {pfc}: {err}");
                }
            }
        }
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
                "[transport]\ncc = \"dcqcn\"\n[transport.dcqcn]\npreset = \"ns-3\"\n",
                "transport.dcqcn.preset = \"ns-3\": \"dcqcn-paper\" or \"mlx\"",
            ),
            (
                "[transport]\ncc = \"dcqcn\"\n[transport.dcqcn]\nrate_decrease = \"tick\"\n",
                "transport.dcqcn.rate_decrease = \"tick\": \"on-cnp\" or \"periodic\"",
            ),
            (
                "[transport]\ncc = \"dcqcn\"\n[transport.dcqcn]\nincrease_stages = 1\n",
                "transport.dcqcn.increase_stages = 1: \"timer-and-bytes\" or \"timer\"",
            ),
            (
                "[transport]\ncc = \"dcqcn\"\n[transport.dcqcn]\ncnp_on_nack = \"yes\"\n",
                "transport.dcqcn.cnp_on_nack = \"yes\": true or false",
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
