//! `[switch]`: how switches buffer packets, PFC and ECN marking's thresholds.
//!
//! ```toml
//! [switch]
//! model = "shared-buffer" # "input-queued" (default, the IRN paper's) or "shared-buffer"
//! buffer = "9MB"          # per input port (input-queued) or per switch (shared-buffer)
//! alpha = 0.125           # shared-buffer: the dynamic thresholds' factor...
//! ingress_alpha = 0.0625  # ...or PFC's input share's (default: alpha)...
//! egress_alpha = 1        # ...and the output queue's drop threshold's (default: alpha; with
//!                         # PFC only when set: then PFC can drop)
//! scheduling = "srpt"     # shared-buffer: "fifo" (default), "srpt" (pFabric's order) or
//!                         # "srpt-per-packet" (a flow's later packets may overtake)
//! pfc = true
//! pfc_frames = "timed"    # "xoff-xon" (default: no pause timer) or "timed" (802.1Qbb)
//! pfc_pause_quanta = 65535 # timed: each XOFF's pause time, in 512-bit-time quanta
//! pfc_refresh = "auto"    # timed: resend XOFF this often while paused (auto: half its time)
//! pfc_headroom = "pool-full" # shared-buffer: past its threshold an input takes "on-pause"
//!                         # (default) its headroom, or "pool-full" the pool still (ns-3's)
//! alpha_per_rate = true   # shared-buffer with PFC: an input's alpha doubles per doubling of
//!                         # its port's rate over the hosts' (HPCC's ns-3; default false)
//! ecn = "auto"            # "auto", "off", "dcqcn" or "dctcp"
//! ecn_per_rate = true     # thresholds scale with each port's rate over the hosts' (HPCC's
//!                         # ns-3; default false: the same on every port)
//! ecn_queue = "without-packet" # a leaving packet is marked by the queue without it (ns-3's);
//!                         # default "with-packet"
//! credits = false          # InfiniBand credits instead of PFC (see `super::credits`)
//! credit_rule = "standard" # or "pause-equivalent": long links' inputs grant by their
//!                          # [[pause_control]] rule
//! deflection = "dibs"     # "none" (default) or "dibs": deflect instead of dropping
//! deflection_ttl = 250    # dibs: deflections per packet before it is dropped
//! ```
//!
//! The marking itself is chosen with the congestion control (`transport::ecn_config`).

use serde::{Deserialize, Serialize};

use super::{
    auto_or_at_least, check_keys, invalid, min_frame_floor, parse_key, ScenarioError, ScenarioFile,
};
use crate::config::{
    pfc_headroom_bytes, Deflection, EcnConfig, PfcConfig, PfcHeadroom, PfcThreshold, Scheduling,
    SwitchModel,
};
use crate::ids::{NodeId, PortId};
use crate::pause::{quanta_time, PauseFrames, MAX_QUANTA};
use crate::topology::Topology;
use crate::units::Bytes;

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
    /// shared-buffer: the dynamic thresholds' factor (a queue or input share may use up to
    /// `alpha` × the free shared buffer). Default 0.125.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// shared-buffer with PFC: the factor of each input's share (its PFC threshold); default
    /// `alpha`. No effect without PFC, like the other PFC keys.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ingress_alpha: Option<f64>,
    /// shared-buffer: the factor of each output queue's drop threshold; default `alpha`. With
    /// PFC it applies only when set, as in ns-3's switch, and PFC can then drop packets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub egress_alpha: Option<f64>,
    /// shared-buffer: the order outputs send data packets in, `"fifo"` (arrival, the default)
    /// `"srpt"` (the flow with the fewest bytes left first; `crate::switch::shared::srpt`) or
    /// `"srpt-per-packet"` (each packet by its own bytes left, so a flow's later packets overtake
    /// its earlier ones).
    #[serde(skip_serializing_if = "SchedulingKind::is_fifo")]
    pub scheduling: SchedulingKind,
    pub pfc: bool,
    /// `"auto"` (buffer minus the upstream link's round trip, two frames and a PAUSE frame) or a
    /// size.
    pub pfc_threshold: String,
    /// Resume when this far below the threshold; `"auto"` is two full frames.
    pub pfc_resume_gap: String,
    /// `"xoff-xon"` (an XOFF holds until XON, no timer) or `"timed"` (802.1Qbb frames with a
    /// pause time, refreshed while the input stays paused).
    pub pfc_frames: PfcFramesKind,
    /// timed: the pause time each XOFF carries, in quanta of 512 bit times (1 to 65535, the
    /// default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pfc_pause_quanta: Option<u32>,
    /// timed: how often a paused input resends its XOFF: `"auto"` (half the pause time at the
    /// link's rate, the default) or a duration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pfc_refresh: Option<String>,
    /// shared-buffer with PFC: where an input's packets go once its share has passed its
    /// threshold, `"on-pause"` (its headroom, the default) or `"pool-full"` (the shared pool
    /// still, headroom only once the pool is full: ns-3's `SwitchMmu`).
    #[serde(skip_serializing_if = "PfcHeadroomKind::is_on_pause")]
    pub pfc_headroom: PfcHeadroomKind,
    /// shared-buffer with PFC: each input's ingress alpha doubles for every doubling of its
    /// port's rate over the hosts' link rate, up to 1 (HPCC's ns-3: 1/8 at 100 Gb/s, 1/2 at
    /// 400 Gb/s); false (the default): every input's is `ingress_alpha`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub alpha_per_rate: bool,
    /// InfiniBand link-level credit flow control into every switch input, instead of PFC
    /// (input-queued switches; [`crate::credits`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub credits: bool,
    /// credits: the window in 64-byte blocks (default 2048, the standard's 128 KiB), at most half
    /// the counters' modulus.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credit_window_blocks: Option<u32>,
    /// credits: the FCTBS/FCCL/ABR counters' width in bits, 12 (the standard, the default) to 24.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credit_counter_bits: Option<u8>,
    /// credits: how often every port sends a flow-control packet: `"auto"` (the time to send a
    /// window at its link's rate, the standard's longest) or a duration (the WAN variant: more
    /// often).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credit_interval: Option<String>,
    /// credits: a switch input also sends one as soon as this many blocks more credit are free
    /// than it last granted (default 64).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credit_update_blocks: Option<u32>,
    /// credits: how the inputs `[[pause_control]]` selects grant credit: `"standard"` (the
    /// default; then `[[pause_control]]` is refused) or `"pause-equivalent"` (the NRL slides'
    /// rule for long links, [`crate::credits::CreditRule`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credit_rule: Option<CreditRuleKind>,
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
    /// The marking thresholds are those of a port of the hosts' link rate, scaled for every
    /// other port by its rate (HPCC's ns-3 maps); false (the default): the same on every port.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ecn_per_rate: bool,
    /// The queue a leaving packet is marked by: `"with-packet"` (itself included, the default)
    /// or `"without-packet"` (taken out first, as ns-3's switch does).
    #[serde(skip_serializing_if = "EcnQueueKind::is_with_packet")]
    pub ecn_queue: EcnQueueKind,
    /// `"none"` (default): a packet its output has no room for is dropped; `"dibs"`: it is
    /// deflected out of another switch-facing port with room (shared-buffer only).
    pub deflection: DeflectionKind,
    /// dibs: deflections a packet may take before the next drops it (default 250).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deflection_ttl: Option<u8>,
}

/// `switch.deflection`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeflectionKind {
    #[default]
    None,
    Dibs,
}

impl Default for SwitchSection {
    fn default() -> Self {
        SwitchSection {
            model: SwitchModelKind::InputQueued,
            // Filled by `normalize`, by model: a default here would hide which model's applies.
            buffer: None,
            alpha: None,
            ingress_alpha: None,
            egress_alpha: None,
            scheduling: SchedulingKind::Fifo,
            pfc: false,
            pfc_threshold: "auto".into(),
            pfc_resume_gap: "auto".into(),
            pfc_frames: PfcFramesKind::XoffXon,
            pfc_pause_quanta: None,
            pfc_refresh: None,
            pfc_headroom: PfcHeadroomKind::OnPause,
            alpha_per_rate: false,
            credits: false,
            credit_window_blocks: None,
            credit_counter_bits: None,
            credit_interval: None,
            credit_update_blocks: None,
            credit_rule: None,
            ecn: "auto".into(),
            ecn_kmin: None,
            ecn_kmax: None,
            ecn_pmax: None,
            ecn_per_rate: false,
            ecn_queue: EcnQueueKind::WithPacket,
            deflection: DeflectionKind::None,
            deflection_ttl: None,
        }
    }
}

/// `switch.ecn_queue`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EcnQueueKind {
    #[default]
    WithPacket,
    WithoutPacket,
}

impl EcnQueueKind {
    /// The default, left out of the resolved scenario so that existing runs' results are
    /// unchanged.
    fn is_with_packet(&self) -> bool {
        *self == EcnQueueKind::WithPacket
    }
}

/// `switch.pfc_frames`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PfcFramesKind {
    #[default]
    XoffXon,
    Timed,
}

/// `switch.pfc_headroom`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PfcHeadroomKind {
    #[default]
    OnPause,
    PoolFull,
}

impl PfcHeadroomKind {
    /// The default, left out of the resolved scenario so that existing runs' results are
    /// unchanged.
    fn is_on_pause(&self) -> bool {
        *self == PfcHeadroomKind::OnPause
    }
}

/// `switch.credit_rule`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CreditRuleKind {
    #[default]
    Standard,
    PauseEquivalent,
}

/// `switch.scheduling`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulingKind {
    #[default]
    Fifo,
    Srpt,
    SrptPerPacket,
}

impl SchedulingKind {
    /// The default, left out of the resolved scenario so FIFO runs' results are unchanged.
    fn is_fifo(&self) -> bool {
        *self == SchedulingKind::Fifo
    }

    /// Its spelling in a scenario file.
    fn name(self) -> &'static str {
        match self {
            SchedulingKind::Fifo => "fifo",
            SchedulingKind::Srpt => "srpt",
            SchedulingKind::SrptPerPacket => "srpt-per-packet",
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
    pub(super) fn normalize(&mut self, file: &str) -> Result<(), ScenarioError> {
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
            &[
                ("alpha", self.alpha.is_some(), shared),
                ("ingress_alpha", self.ingress_alpha.is_some(), shared),
                ("egress_alpha", self.egress_alpha.is_some(), shared),
                (
                    "pfc_headroom",
                    self.pfc_headroom != PfcHeadroomKind::OnPause,
                    shared,
                ),
                ("alpha_per_rate", self.alpha_per_rate, shared),
            ],
        )?;
        let dibs = self.deflection == DeflectionKind::Dibs;
        check_keys(
            file,
            ("switch", "deflection"),
            if dibs { "dibs" } else { "none" },
            &[("deflection_ttl", self.deflection_ttl.is_some(), dibs)],
        )?;
        if dibs {
            if !shared {
                return Err(invalid(
                    file,
                    "switch.deflection",
                    "\"dibs\"",
                    "DIBS deflects to outputs with room, which needs output buffers: set \
                     switch.model = \"shared-buffer\" (an input-queued switch's room is its \
                     input's, the same for every output)",
                ));
            }
            if self.deflection_ttl == Some(0) {
                return Err(invalid(
                    file,
                    "switch.deflection_ttl",
                    "0",
                    "between 1 and 255 deflections per packet (DIBS: 250)",
                ));
            }
            self.deflection_ttl.get_or_insert(Deflection::DIBS.ttl);
        }
        let timed = self.pfc_frames == PfcFramesKind::Timed;
        check_keys(
            file,
            ("switch", "pfc_frames"),
            if timed { "timed" } else { "xoff-xon" },
            &[
                ("pfc_pause_quanta", self.pfc_pause_quanta.is_some(), timed),
                ("pfc_refresh", self.pfc_refresh.is_some(), timed),
            ],
        )?;
        if !shared && self.scheduling != SchedulingKind::Fifo {
            return Err(invalid(
                file,
                "switch.scheduling",
                &format!("{:?}", self.scheduling.name()),
                "\"fifo\" on the input-queued switch; \"srpt\" and \"srpt-per-packet\" need \
                 model = \"shared-buffer\"",
            ));
        }
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

/// `switch.deflection`, normalized; refused with source routing, whose route a deflected packet
/// would lose.
pub(super) fn deflection(
    s: &ScenarioFile,
    file: &str,
) -> Result<Option<Deflection>, ScenarioError> {
    if s.switch.deflection != DeflectionKind::Dibs {
        return Ok(None);
    }
    if let Some(routing) = s.topology.routing.filter(|r| r.source_routed()) {
        return Err(invalid(
            file,
            "switch.deflection",
            "\"dibs\"",
            &format!(
                "not with topology.routing = \"{}\": a deflected packet leaves its source route \
                 (use shortest-path routing with DIBS)",
                routing.name()
            ),
        ));
    }
    if s.load_balancing.kind == super::BalancerKind::Conweave {
        return Err(invalid(
            file,
            "switch.deflection",
            "\"dibs\"",
            "not with load_balancing.kind = \"conweave\": a deflected packet leaves the path its \
             source ToR named",
        ));
    }
    let ttl = s.switch.deflection_ttl.unwrap_or(Deflection::DIBS.ttl);
    Ok(Some(Deflection { ttl }))
}

/// A warning when DIBS can never act: with PFC and no `egress_alpha`, an output is never out of
/// room (packets are paused, not refused), so nothing is deflected and the key changes nothing.
pub(super) fn idle_deflection(s: &ScenarioFile) -> Option<String> {
    (s.switch.deflection == DeflectionKind::Dibs && s.switch.pfc && s.switch.egress_alpha.is_none())
        .then(|| {
            "switch.deflection = \"dibs\" with switch.pfc and no switch.egress_alpha: PFC pauses \
             packets rather than refusing them, so no output is ever out of room and nothing is \
             deflected; set egress_alpha (an output's drop threshold) for DIBS to act"
                .to_string()
        })
}

/// Thresholds asked to scale with each port's rate on a network whose switch ports all run at
/// the hosts' link rate, where every scale is 1: said, as a key that does nothing.
pub(super) fn uniform_rate_keys(s: &ScenarioFile, topology: &Topology) -> Option<String> {
    let sw = &s.switch;
    let keys: Vec<&str> = [
        ("ecn_per_rate", sw.ecn_per_rate),
        ("alpha_per_rate", sw.alpha_per_rate && sw.pfc),
    ]
    .into_iter()
    .filter_map(|(key, set)| set.then_some(key))
    .collect();
    let nic = topology.nic_rate()?;
    let uniform = (topology.switches().iter())
        .flat_map(|&n| topology.node_ports(n))
        .all(|p| topology.ports()[p as usize].rate == nic);
    (!keys.is_empty() && uniform).then(|| {
        format!(
            "switch.{} = true: every switch port runs at the hosts' {nic}, so nothing scales",
            keys.join(" and switch.")
        )
    })
}

/// PFC's keys set in a run without PFC, where nothing reads them (nor checks their values):
/// said, as a key that does nothing. `pfc_frames` is read too by a `[[pause_control]]` entry of
/// rule `"threshold"` that gives no `frames` of its own (the other rules send their own frames).
pub(super) fn inert_pfc_keys(s: &ScenarioFile) -> Option<String> {
    let sw = &s.switch;
    if sw.pfc {
        return None;
    }
    let mut keys = Vec::new();
    if sw.pfc_threshold != "auto" {
        keys.push(format!("pfc_threshold = {:?}", sw.pfc_threshold));
    }
    if sw.pfc_resume_gap != "auto" {
        keys.push(format!("pfc_resume_gap = {:?}", sw.pfc_resume_gap));
    }
    let frames_read = (s.pause_control.iter())
        .any(|c| c.rule == super::pause::RuleKind::Threshold && c.frames.is_none());
    if sw.pfc_frames == PfcFramesKind::Timed && !frames_read {
        keys.push("pfc_frames = \"timed\"".to_string());
    }
    if let Some(q) = sw.pfc_pause_quanta {
        keys.push(format!("pfc_pause_quanta = {q}"));
    }
    if let Some(r) = &sw.pfc_refresh {
        keys.push(format!("pfc_refresh = {r:?}"));
    }
    if sw.alpha_per_rate {
        keys.push("alpha_per_rate = true".to_string());
    }
    (!keys.is_empty()).then(|| {
        format!(
            "switch.{} with switch.pfc = false: PFC's keys change nothing in a run without it",
            keys.join(", switch.")
        )
    })
}

/// A marking threshold no output queue can reach, said (the run would not mark, or not as
/// configured, and look like one without the marking). The most an output queue can hold is
/// the buffer its switch lets it use: on the input-queued switch the buffers of every other
/// input (each may fill with packets for it), on the shared-buffer switch the whole pool. A
/// lower threshold `kmin` at or above that never marks a packet; an upper one `kmax` above it
/// never lets marking reach `ecn_pmax` (or, a step, certainty).
pub(super) fn unreachable_marking(
    s: &ScenarioFile,
    topology: &Topology,
    buf: &Buffer,
    ecn: Option<&EcnConfig>,
) -> Option<String> {
    let red = ecn?;
    let (held, how) = queue_bytes_max(topology, buf);
    let sw = &s.switch;
    // A threshold as the file gives it, or as the marking profile sets it.
    let profile = match (
        sw.ecn.as_str(),
        s.transport.kind == super::TransportKind::MpRdma,
    ) {
        ("auto", true) => "DCTCP's step, which switch.ecn = \"auto\" gives MP-RDMA's window".into(),
        ("auto", false) => format!(
            "the profile switch.ecn = \"auto\" gives transport.cc = {}",
            serde_json::to_value(s.transport.cc).map_or_else(|_| String::new(), |v| v.to_string())
        ),
        (name, _) => format!("switch.ecn = \"{name}\""),
    };
    let given = |key: &str, text: &Option<String>, bytes: u64| match text {
        Some(t) => format!("switch.{key} = {t:?} ({bytes} B)"),
        None => format!("switch.{key} = {bytes} B ({profile})"),
    };
    let reacts = match (s.transport.kind, s.transport.cc) {
        (super::TransportKind::MpRdma, _) => ", so MP-RDMA's window never shrinks",
        (_, super::CcKind::Dctcp) => ", so DCTCP never slows down",
        (_, super::CcKind::Dcqcn) => ", so DCQCN never slows down",
        _ => "",
    };
    let most = format!("at most {held} B ({how})");
    if red.kmin_bytes >= held {
        return Some(format!(
            "{}: no output queue can hold more than that, {most}: no packet is ever \
             marked{reacts}; a threshold below {held} B marks (switch.ecn_kmin, ecn_kmax)",
            given("ecn_kmin", &sw.ecn_kmin, red.kmin_bytes)
        ));
    }
    (red.kmax_bytes > held).then(|| {
        format!(
            "{}: no output queue can hold that much, {most}: marking never passes \
             probability {:.3} (at {held} B), where it was to reach {} at ecn_kmax; an \
             ecn_kmax of at most {held} B marks as configured",
            given("ecn_kmax", &sw.ecn_kmax, red.kmax_bytes),
            red.probability(held),
            if red.kmin_bytes == red.kmax_bytes {
                1.0
            } else {
                red.pmax
            }
        )
    })
}

/// The most bytes any switch output queue in `topology` can hold, with what bounds it.
fn queue_bytes_max(topology: &Topology, buf: &Buffer) -> (u64, String) {
    let inputs =
        |n: NodeId| (topology.node_ports(n)).map(|p| topology.input_buffer(PortId(p), buf.bytes));
    let text = buf.text;
    match buf.model {
        SwitchModel::InputQueued => {
            let held = (topology.switches().iter())
                .map(|&n| inputs(n).sum::<u64>() - inputs(n).min().unwrap_or(0))
                .max()
                .unwrap_or(0);
            let how = format!(
                "a switch's other inputs' buffers, switch.buffer = {text:?} each on the \
                 input-queued switch"
            );
            (held, how)
        }
        SwitchModel::SharedBuffer { .. } => {
            let held = (topology.switches().iter())
                .map(|&n| topology.shared_pool(n, buf.bytes))
                .max()
                .unwrap_or(0);
            let how = format!("the shared buffer of a switch, switch.buffer = {text:?}");
            (held, how)
        }
    }
}

/// The shared-buffer switch's default dynamic-threshold factor: 1/8, i.e. the ns-3 RDMA models'
/// `pfc_a_shift = 3`.
const DEFAULT_ALPHA: f64 = 0.125;

/// The switches' buffer, checked before the frame size is known (the transport's keys are
/// checked after it and before PFC, which needs the frame).
#[derive(Debug, Clone, Copy)]
pub(super) struct Buffer<'a> {
    pub(super) bytes: u64,
    /// As written, for errors.
    text: &'a str,
    pub(super) model: SwitchModel,
}

/// The largest switch buffer a scenario may give (per input or per switch): 16 GB.
pub(super) const MAX_BUFFER_BYTES: u64 = 16_000_000_000;

/// `switch.buffer` and the model that shares it.
pub(super) fn buffer<'a>(s: &'a ScenarioFile, file: &str) -> Result<Buffer<'a>, ScenarioError> {
    let buffer_text = s.switch.buffer.as_deref().unwrap_or("240KB");
    let buffer = parse_key::<Bytes>(file, "switch.buffer", buffer_text)?.0;
    if buffer > MAX_BUFFER_BYTES {
        return Err(invalid(
            file,
            "switch.buffer",
            &format!("{buffer_text:?}"),
            &format!(
                "at most {} (twice the 8 GB of a deep-buffer router's HBM)",
                Bytes(MAX_BUFFER_BYTES)
            ),
        ));
    }
    let model = match s.switch.model {
        SwitchModelKind::InputQueued => SwitchModel::InputQueued,
        SwitchModelKind::SharedBuffer => {
            let sw = &s.switch;
            // Switches apply alphas in 16.16 fixed point.
            let checked = |key: &str, alpha: f64| {
                if (1.0 / 65536.0..=65536.0).contains(&alpha) {
                    Ok(alpha)
                } else {
                    Err(invalid(
                        file,
                        &format!("switch.{key}"),
                        &super::real(alpha),
                        "a number between 1/65536 and 65536",
                    ))
                }
            };
            let alpha = checked("alpha", sw.alpha.unwrap_or(DEFAULT_ALPHA))?;
            let ingress_alpha = checked("ingress_alpha", sw.ingress_alpha.unwrap_or(alpha))?;
            let egress_alpha = match sw.egress_alpha {
                Some(a) => Some(checked("egress_alpha", a)?),
                None => (!sw.pfc).then_some(alpha),
            };
            SwitchModel::SharedBuffer {
                ingress_alpha,
                egress_alpha,
                scheduling: match sw.scheduling {
                    SchedulingKind::Fifo => Scheduling::Fifo,
                    SchedulingKind::Srpt => Scheduling::Srpt,
                    SchedulingKind::SrptPerPacket => Scheduling::SrptPerPacket,
                },
                pfc_headroom: match sw.pfc_headroom {
                    PfcHeadroomKind::OnPause => PfcHeadroom::OnPause,
                    PfcHeadroomKind::PoolFull => PfcHeadroom::PoolFull,
                },
                alpha_per_rate: sw.alpha_per_rate,
            }
        }
    };
    Ok(Buffer {
        bytes: buffer,
        text: buffer_text,
        model,
    })
}

/// PFC as configured, and why it can drop packets when it can (then timeouts must stay on):
/// the buffer must hold a full frame, each input its PFC headroom and the shared pool a frame
/// under its dynamic threshold.
///
/// Inputs under a `[[pause_control]]` rule (`controlled`) pause by it, not by PFC.
pub(super) fn pfc(
    s: &ScenarioFile,
    file: &str,
    topology: &Topology,
    buf: &Buffer,
    max_frame: u64,
    controlled: &[PortId],
) -> Result<(Option<PfcConfig>, Option<String>), ScenarioError> {
    let &Buffer {
        bytes: buffer,
        text: buffer_text,
        model,
    } = buf;
    if buffer < max_frame {
        return Err(invalid(
            file,
            "switch.buffer",
            &format!("{buffer_text:?}"),
            &format!("must hold at least one full frame ({max_frame}B)"),
        ));
    }
    // A long-haul input that cannot hold a frame drops every packet across the WAN.
    if let Some(long) = (topology.wan_info()).filter(|w| w.buffer_bytes() < max_frame) {
        return Err(invalid(
            file,
            "topology.wan.buffer",
            &long_haul_buffer(s, long.buffer_bytes()),
            &format!(
                "must hold at least one full frame ({max_frame}B): a long-haul input that \
                 cannot drops every packet crossing the WAN"
            ),
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
                        &format!(
                            "\"auto\" or a size above 0 and below the buffer ({buffer} B): an \
                             input full to the last byte before it pauses loses packets"
                        ),
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
                pfc_drops =
                    input_headroom(s, file, topology, buf, threshold, max_frame, controlled)?;
            }
            // Every input reserves its headroom out of the one buffer. Were the rest, the shared
            // pool, smaller than a frame, every packet would land in headroom and pause its
            // sender: the buffer must hold all the headrooms and a frame besides.
            SwitchModel::SharedBuffer { egress_alpha, .. } => {
                shared_reserved = shared_headroom(file, topology, buf, max_frame)?;
                pfc_drops = egress_alpha.map(|a| {
                    format!(
                        "switch.egress_alpha = {a}: the shared-buffer switch drops packets above \
                         the egress threshold, PFC or not"
                    )
                });
            }
        }
        let frames = pause_frames(s, file, topology)?;
        if let Some(lapse) = lapsing_pause(frames, topology) {
            pfc_drops.get_or_insert(lapse);
        }
        Some(PfcConfig {
            threshold,
            resume_gap_bytes,
            frames,
        })
    } else {
        None
    };
    shared_pool(s, file, topology, buf, max_frame, shared_reserved)?;
    Ok((pfc, pfc_drops))
}

/// `switch.pfc_frames` and its timed keys. A refresh is at least a minimum frame's time at the
/// slowest link: a paused input resending its XOFF more often than it can serialize one would
/// queue them without end (a "1ps" refresh filled 3.7 GB).
fn pause_frames(
    s: &ScenarioFile,
    file: &str,
    topology: &Topology,
) -> Result<PauseFrames, ScenarioError> {
    if s.switch.pfc_frames == PfcFramesKind::XoffXon {
        return Ok(PauseFrames::XoffXon);
    }
    let quanta = s.switch.pfc_pause_quanta.unwrap_or(u32::from(MAX_QUANTA));
    let quanta = u16::try_from(quanta)
        .ok()
        .filter(|&q| q > 0)
        .ok_or_else(|| {
            invalid(
                file,
                "switch.pfc_pause_quanta",
                &quanta.to_string(),
                "between 1 and 65535 (a 16-bit count of 512-bit-time quanta)",
            )
        })?;
    let slowest = topology.ports().iter().map(|p| p.rate).min();
    let floor = slowest.map(|rate| min_frame_floor(rate, "the slowest link"));
    let floor = floor.unwrap_or_default();
    let refresh = auto_or_at_least(
        file,
        "switch.pfc_refresh",
        s.switch.pfc_refresh.as_deref(),
        (floor.0, &floor.1),
    )?;
    Ok(PauseFrames::Timed { quanta, refresh })
}

/// Why timed pauses can lapse, if they can: a refresh that comes after the pause it renews has
/// run out lets the upstream port send into a full input for a while (then timeouts must stay
/// on).
fn lapsing_pause(frames: PauseFrames, topology: &Topology) -> Option<String> {
    let PauseFrames::Timed { quanta, .. } = frames else {
        return None;
    };
    topology.ports().iter().find_map(|p| {
        let every = frames.xoff(p.rate).1?;
        let lasts = quanta_time(p.rate, quanta);
        (every > lasts).then(|| {
            format!(
                "switch.pfc_refresh = {every} is longer than a pause of {quanta} quanta on a {} \
                 link ({lasts}): pauses lapse between refreshes and PFC can drop packets",
                p.rate
            )
        })
    })
}

/// `topology.wan.buffer`'s `bytes` as an error shows them, saying when they are its default.
pub(super) fn long_haul_buffer(s: &ScenarioFile, bytes: u64) -> String {
    let given = (s.topology.wan.as_ref()).is_some_and(|w| w.buffer.is_some());
    let default = match given {
        true => "",
        false => " (the default: twice the long link's bandwidth-delay product)",
    };
    format!("{bytes}B{default}")
}

/// An input-queued switch's PFC: why `threshold` can drop packets, if it can.
fn input_headroom(
    s: &ScenarioFile,
    file: &str,
    topology: &Topology,
    buf: &Buffer,
    threshold: PfcThreshold,
    max_frame: u64,
    controlled: &[PortId],
) -> Result<Option<String>, ScenarioError> {
    let &Buffer {
        bytes: switch_buffer,
        text: switch_text,
        ..
    } = buf;
    // The input short of the most room: a long link's input against its own buffer.
    let worst = (topology.ports().iter().enumerate())
        .map(|(i, p)| (PortId(i as u32), p))
        .filter(|(i, _)| !controlled.contains(i))
        .map(|(i, p)| {
            let buffer = topology.input_buffer(i, switch_buffer);
            (
                pfc_headroom_bytes(p, max_frame),
                p,
                buffer,
                topology.is_long_haul(i),
            )
        })
        .max_by_key(|&(headroom, _, buffer, _)| headroom as i128 - buffer as i128);
    let Some((headroom, link, buffer, long)) = worst else {
        return Ok(None);
    };
    let (key, text) = if long {
        ("topology.wan.buffer", long_haul_buffer(s, buffer))
    } else {
        ("switch.buffer", format!("{switch_text:?}"))
    };
    match threshold {
        PfcThreshold::Auto if headroom >= buffer => Err(invalid(
            file,
            key,
            &text,
            &format!(
                "too small for PFC headroom: an input on a {}, {} link needs \
                     more than {}B (the link round trip, two frames and a PAUSE \
                     frame); enlarge it, set switch.pfc_threshold or, for a long link, give \
                     its input a [[pause_control]] rule",
                link.rate, link.delay, headroom
            ),
        )),
        PfcThreshold::Bytes(b) if b + headroom > buffer => Ok(Some(format!(
            "switch.pfc_threshold = {:?} lets PFC drop packets: an input on a \
                 {}, {} link can still receive {headroom}B after it pauses (the link \
                 round trip, two frames and a PAUSE frame), and {b}B + {headroom}B is \
                 more than the {buffer}B buffer",
            s.switch.pfc_threshold, link.rate, link.delay
        ))),
        _ => Ok(None),
    }
}

/// A shared-buffer switch's PFC: the headroom reserved by the switch that leaves the least of
/// its pool (a border switch's holds its long-haul inputs' buffers too), and the switch.
fn shared_headroom(
    file: &str,
    topology: &Topology,
    buf: &Buffer,
    max_frame: u64,
) -> Result<Option<(u64, NodeId)>, ScenarioError> {
    let &Buffer {
        bytes: buffer,
        text: buffer_text,
        ..
    } = buf;
    let reserved = |n: NodeId| -> u64 {
        let ports = topology.node_ports(n);
        topology.ports()[ports.start as usize..ports.end as usize]
            .iter()
            .map(|p| pfc_headroom_bytes(p, max_frame))
            .sum()
    };
    // Long-haul inputs' own buffers in switch `n`'s pool.
    let long = |n: NodeId| topology.shared_pool(n, buffer) - buffer;
    let worst = (topology.switches().iter())
        .map(|&n| (reserved(n), n))
        .max_by_key(|&(r, n)| (i128::from(r) - i128::from(long(n)), n));
    if let Some((reserved, node)) = worst.filter(|&(r, n)| r + max_frame > buffer + long(n)) {
        let ports = topology.node_ports(node).len();
        let besides = match long(node) {
            0 => String::new(),
            b => format!(" (besides the {b}B of its long-haul inputs' topology.wan.buffer)"),
        };
        return Err(invalid(
            file,
            "switch.buffer",
            &format!("{buffer_text:?}"),
            &format!(
                "too small for PFC headroom: switch node {node}'s {ports} inputs \
                 reserve {reserved}B (each its link's round trip, two frames and a \
                 PAUSE frame), and the shared pool must hold a {max_frame}B frame \
                 besides; at least {}B{besides}",
                reserved + max_frame - long(node)
            ),
        ));
    }
    Ok(worst)
}

/// Refuses a shared pool in which no full frame fits under a dynamic threshold.
fn shared_pool(
    s: &ScenarioFile,
    file: &str,
    topology: &Topology,
    buf: &Buffer,
    max_frame: u64,
    shared_reserved: Option<(u64, NodeId)>,
) -> Result<(), ScenarioError> {
    let &Buffer {
        bytes: buffer,
        model,
        ..
    } = buf;
    let SwitchModel::SharedBuffer {
        ingress_alpha,
        egress_alpha,
        ..
    } = model
    else {
        return Ok(());
    };
    // The key that set an alpha, for the error: its own, or `alpha` it defaulted to.
    let key = |own: &str, set: Option<f64>| {
        if set.is_some() {
            format!("switch.{own}")
        } else {
            "switch.alpha".to_string()
        }
    };
    let pfc = s.switch.pfc;
    let (reserved, node) = shared_reserved.unwrap_or((0, NodeId(0)));
    let pool = topology.shared_pool(node, buffer) - reserved;
    let what = if pfc {
        format!(
            "the shared pool (the {}B buffer less the {reserved}B switch node {node}'s \
             inputs reserve for PFC headroom)",
            pool + reserved
        )
    } else {
        format!("the {buffer}B buffer")
    };
    // A full frame must fit under the dynamic threshold of an empty pool, or no packet ever
    // passes through the shared pool: above the egress threshold each is dropped, above PFC's
    // ingress one each lands in headroom and pauses its sender.
    let thresholds = [
        pfc.then(|| {
            (
                key("ingress_alpha", s.switch.ingress_alpha),
                ingress_alpha,
                "every packet would land in headroom and pause its sender",
            )
        }),
        egress_alpha.map(|a| {
            (
                key("egress_alpha", s.switch.egress_alpha),
                a,
                "every full-size packet would be dropped and no flow would finish",
            )
        }),
    ];
    for (key, alpha, outcome) in thresholds.into_iter().flatten() {
        let threshold = crate::switch::shared::empty_pool_threshold(pool, alpha);
        if threshold < max_frame {
            // The least alpha on the switches' 1/65536 grid, rounded up to 6 decimals.
            let least = ((max_frame << 16).div_ceil(pool) as f64 / 65536.0 * 1e6).ceil() / 1e6;
            return Err(invalid(
                file,
                &key,
                &super::real(alpha),
                &format!(
                    "alpha × {what} is {threshold}B, less than a full frame ({max_frame}B): \
                     {outcome}; use an alpha of at least {least} or a larger buffer"
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::pause::PauseFrames;
    use crate::scenario::tests::one;

    /// PFC's keys in a run without PFC are said to do nothing; at their defaults, with PFC, or
    /// `pfc_frames` read by a `[[pause_control]]` rule, they are not.
    #[test]
    fn pfc_keys_without_pfc_are_said_to_do_nothing() {
        let warned = |keys: &str| {
            let run = one(keys).unwrap();
            run.warnings
                .into_iter()
                .find(|w| w.contains("PFC's keys change nothing"))
        };
        assert_eq!(
            warned("[switch]\npfc_threshold = \"200KB\"\npfc_resume_gap = \"3KB\"\n").as_deref(),
            Some(
                "switch.pfc_threshold = \"200KB\", switch.pfc_resume_gap = \"3KB\" with \
                 switch.pfc = false: PFC's keys change nothing in a run without it"
            )
        );
        assert!(
            warned("[switch]\npfc_frames = \"timed\"\npfc_pause_quanta = 100\n")
                .is_some_and(|w| w
                    .starts_with("switch.pfc_frames = \"timed\", switch.pfc_pause_quanta = 100"))
        );
        // A `[[pause_control]]` rule reads pfc_frames only as a threshold rule's default.
        let star = "[topology]\nkind = \"star\"\nhosts = 2\n";
        let control = |entry: &str| {
            format!(
                "{star}[switch]\npfc_frames = \"timed\"\n[[pause_control]]\nports = \"switch\"\n\
                 threshold = \"100KB\"\n{entry}\n"
            )
        };
        for entry in [
            "rule = \"on-off\"",
            "rule = \"threshold\"\nframes = \"xoff-xon\"",
        ] {
            assert_eq!(
                warned(&control(entry)).as_deref(),
                Some(
                    "switch.pfc_frames = \"timed\" with switch.pfc = false: PFC's keys change \
                     nothing in a run without it"
                ),
                "{entry}"
            );
        }
        for quiet in [
            "[switch]\npfc_threshold = \"auto\"\npfc_frames = \"xoff-xon\"\n",
            "[switch]\npfc = true\npfc_threshold = \"200KB\"\n",
            &control("rule = \"threshold\""),
        ] {
            assert_eq!(warned(quiet), None, "{quiet}");
        }
    }

    /// A marking threshold no output queue can reach is warned of, naming the key, its value,
    /// the most a queue holds and what would mark; one a queue can reach is not.
    #[test]
    fn an_unreachable_marking_threshold_is_warned_of() {
        let star = "[topology]\nkind = \"star\"\nhosts = 2\n";
        let tree = "[topology]\nkind = \"fat-tree\"\nk = 4\n";
        let voq = "(a switch's other inputs' buffers, switch.buffer = \"240KB\" each on the \
                   input-queued switch)";
        for (keys, warned) in [
            // DCTCP's step at 40 Gb/s, 65 packets of 1086 B × 4: reachable in a fat-tree,
            // whose outputs gather three other inputs, not in a star of two hosts.
            (format!("{tree}[transport]\ncc = \"dctcp\""), None),
            (
                format!("{star}[transport]\ncc = \"dctcp\""),
                Some(format!(
                    "switch.ecn_kmin = 282360 B (the profile switch.ecn = \"auto\" gives \
                     transport.cc = \"dctcp\"): no output queue can hold more than that, at \
                     most 240000 B {voq}: no packet is ever marked, so DCTCP never slows down; \
                     a threshold below 240000 B marks (switch.ecn_kmin, ecn_kmax)"
                )),
            ),
            (
                format!("{star}[transport]\nkind = \"mp-rdma\""),
                Some(
                    "switch.ecn_kmin = 282360 B (DCTCP's step, which switch.ecn = \"auto\" \
                      gives MP-RDMA's window): no output queue can hold more than that"
                        .into(),
                ),
            ),
            (format!("{tree}[transport]\ncc = \"dcqcn\""), None),
            (
                format!("{tree}[transport]\ncc = \"dcqcn\"\n[switch]\necn_kmax = \"1MB\""),
                Some(format!(
                    "switch.ecn_kmax = \"1MB\" (1000000 B): no output queue can hold that \
                     much, at most 720000 B {voq}: marking never passes probability 0.007 (at \
                     720000 B), where it was to reach 0.01 at ecn_kmax; an ecn_kmax of at most \
                     720000 B marks as configured"
                )),
            ),
            (
                format!(
                    "{tree}[switch]\nmodel = \"shared-buffer\"\necn = \"dctcp\"\n\
                     ecn_kmin = \"10MB\"\necn_kmax = \"10MB\""
                ),
                Some(
                    "switch.ecn_kmin = \"10MB\" (10000000 B): no output queue can hold more \
                     than that, at most 9000000 B (the shared buffer of a switch, switch.buffer \
                     = \"9MB\"): no packet is ever marked; a threshold below"
                        .into(),
                ),
            ),
        ] {
            let warnings = one(&keys).unwrap().warnings;
            let marking: Vec<&String> = (warnings.iter())
                .filter(|w| w.contains("switch.ecn_k"))
                .collect();
            match warned {
                None => assert!(marking.is_empty(), "{keys}: {marking:?}"),
                Some(want) => assert!(
                    marking.len() == 1 && marking[0].starts_with(&want),
                    "{keys}: {marking:?}\nexpected {want}"
                ),
            }
        }
    }

    #[test]
    fn pfc_frames_keys_defaults_and_errors() {
        let frames = |keys: &str| {
            one(&format!("[switch]\npfc = true\n{keys}\n"))
                .map(|r| r.config.switch.pfc.expect("pfc on").frames)
                .map_err(|e| e.to_string())
        };
        assert_eq!(frames(""), Ok(PauseFrames::XoffXon));
        assert_eq!(
            frames("pfc_frames = \"timed\""),
            Ok(PauseFrames::Timed {
                quanta: 65535,
                refresh: None
            })
        );
        assert_eq!(
            frames("pfc_frames = \"timed\"\npfc_pause_quanta = 10\npfc_refresh = \"1us\""),
            Ok(PauseFrames::Timed {
                quanta: 10,
                refresh: Some(irn_core::Duration::from_us(1))
            })
        );
        for (keys, want) in [
            (
                "pfc_pause_quanta = 10",
                "switch.pfc_pause_quanta is set: does not apply to switch.pfc_frames = \"xoff-xon\"",
            ),
            ("pfc_refresh = \"1us\"", "switch.pfc_refresh is set"),
            (
                "pfc_frames = \"timed\"\npfc_pause_quanta = 0",
                "switch.pfc_pause_quanta = 0: between 1 and 65535",
            ),
            (
                "pfc_frames = \"timed\"\npfc_pause_quanta = 65536",
                "switch.pfc_pause_quanta = 65536",
            ),
            (
                "pfc_frames = \"timed\"\npfc_refresh = \"0s\"",
                "switch.pfc_refresh = \"0s\": \"auto\" or at least 16800ps (16.8ns) (one minimum \
                 frame, 64 B + 20 B of preamble and gap, at 40Gbps, the slowest link",
            ),
            (
                "pfc_frames = \"timed\"\npfc_refresh = \"1ps\"",
                "switch.pfc_refresh = \"1ps\": \"auto\" or at least 16800ps",
            ),
            ("pfc_frames = \"sometimes\"", "sometimes"),
        ] {
            let err = frames(keys).unwrap_err();
            assert!(err.contains(want), "{keys}: {err}");
        }
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

    #[test]
    fn a_shared_buffer_switch_without_a_buffer_gets_9_mb() {
        let bytes = |text: &str| one(text).unwrap().config.switch.buffer_bytes;
        assert_eq!(bytes("[switch]\nmodel = \"shared-buffer\"\n"), 9_000_000);
        assert_eq!(
            bytes("[switch]\nmodel = \"shared-buffer\"\npfc = true\n"),
            9_000_000
        );
        assert_eq!(bytes(""), 240_000);
        assert_eq!(bytes("[switch]\nmodel = \"input-queued\"\n"), 240_000);
    }

    #[test]
    fn ingress_and_egress_alphas_default_to_alpha() {
        use crate::config::SwitchModel;
        use irn_core::transport::RtoPolicy;
        let run = |keys: &str| {
            one(&format!(
                "[transport]\nkind = \"roce\"\n[switch]\nmodel = \"shared-buffer\"\n{keys}\n"
            ))
            .unwrap()
            .config
        };
        let alphas = |keys: &str| match run(keys).switch.model {
            SwitchModel::SharedBuffer {
                ingress_alpha,
                egress_alpha,
                ..
            } => (ingress_alpha, egress_alpha),
            other => panic!("{other:?}"),
        };
        // Lossy: the egress threshold drops, at alpha unless egress_alpha is set.
        assert_eq!(alphas(""), (0.125, Some(0.125)));
        assert_eq!(alphas("alpha = 0.5"), (0.5, Some(0.5)));
        assert_eq!(alphas("egress_alpha = 1"), (0.125, Some(1.0)));
        // PFC: the ingress threshold pauses; an egress one only when set.
        assert_eq!(alphas("pfc = true"), (0.125, None));
        assert_eq!(alphas("pfc = true\nalpha = 0.25"), (0.25, None));
        let conweave = "pfc = true\ningress_alpha = 0.0625\negress_alpha = 1";
        assert_eq!(alphas(conweave), (0.0625, Some(1.0)));
        // PFC that can drop keeps RoCE's timeout on.
        assert_eq!(run("pfc = true").transport.rto, RtoPolicy::Disabled);
        assert!(matches!(run(conweave).transport.rto, RtoPolicy::Fixed(_)));
        let err = one(&format!(
            "[transport]\nkind = \"roce\"\ntimeouts = \"off\"\n\
             [switch]\nmodel = \"shared-buffer\"\n{conweave}\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("switch.egress_alpha = 1: the shared-buffer switch drops packets"),
            "{err}"
        );
    }

    /// `pfc_headroom`: its two values on the shared-buffer switch, refused on the input-queued
    /// one and for a word it does not take.
    #[test]
    fn pfc_headroom_values_and_errors() {
        use crate::config::{PfcHeadroom, SwitchModel};
        let headroom = |model: &str, keys: &str| {
            one(&format!(
                "[switch]\nmodel = \"{model}\"\npfc = true\n{keys}\n"
            ))
            .map(|run| match run.config.switch.model {
                SwitchModel::SharedBuffer { pfc_headroom, .. } => Some(pfc_headroom),
                SwitchModel::InputQueued => None,
            })
            .map_err(|e| e.to_string())
        };
        // The rule a shared-buffer switch ends up with, or a part of the error.
        type Want = Result<Option<PfcHeadroom>, &'static str>;
        let cases: [(&str, &str, Want); 5] = [
            ("shared-buffer", "", Ok(Some(PfcHeadroom::OnPause))),
            (
                "shared-buffer",
                "pfc_headroom = \"on-pause\"",
                Ok(Some(PfcHeadroom::OnPause)),
            ),
            (
                "shared-buffer",
                "pfc_headroom = \"pool-full\"",
                Ok(Some(PfcHeadroom::PoolFull)),
            ),
            (
                "input-queued",
                "pfc_headroom = \"pool-full\"",
                Err(
                    "switch.pfc_headroom is set: does not apply to switch.model = \"input-queued\"",
                ),
            ),
            (
                "shared-buffer",
                "pfc_headroom = \"full\"",
                Err("pfc_headroom"),
            ),
        ];
        for (model, keys, want) in cases {
            match (headroom(model, keys), want) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{model} {keys}"),
                (Err(err), Err(want)) => assert!(err.contains(want), "{model} {keys}: {err}"),
                (got, want) => panic!("{model} {keys}: {got:?}, wanted {want:?}"),
            }
        }
        // The default stays out of the resolved scenario, so earlier runs' outputs are unchanged.
        let default = toml::to_string(&super::SwitchSection::default()).unwrap();
        assert!(!default.contains("pfc_headroom"), "{default}");
    }

    #[test]
    fn the_buffer_is_at_most_16_gb() {
        assert!(one("[switch]\nbuffer = \"16GB\"\n").is_ok());
        for v in ["16000000001B", "18446744073709551615B"] {
            let err = one(&format!("[switch]\nbuffer = \"{v}\"\n"))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(&format!(
                    "t.toml: switch.buffer = \"{v}\": at most 16GB (twice the 8 GB of a \
                     deep-buffer router's HBM)"
                )),
                "{err}"
            );
        }
    }

    #[test]
    fn bad_alphas_are_refused() {
        let shared = "[switch]\nmodel = \"shared-buffer\"\n";
        for (keys, want) in [
            (
                "ingress_alpha = 0",
                "switch.ingress_alpha = 0: a number between 1/65536 and 65536",
            ),
            (
                "egress_alpha = 1e6",
                "switch.egress_alpha = 1000000: a number between 1/65536",
            ),
            ("alpha = -1", "switch.alpha = -1: a number between"),
            // 1/65536 × 9 MB = 137 B: no frame fits under the egress threshold.
            (
                "egress_alpha = 0.0000153",
                "switch.egress_alpha = 0.0000153: alpha × the 9000000B buffer is 137B",
            ),
            (
                "pfc = true\ningress_alpha = 0.0000153",
                "switch.ingress_alpha = 0.0000153: alpha × the shared pool",
            ),
        ] {
            let err = one(&format!("{shared}{keys}\n")).unwrap_err().to_string();
            assert!(err.contains(want), "{keys}: {err}");
        }
        let err = one("[switch]\negress_alpha = 1\n").unwrap_err().to_string();
        assert!(
            err.contains(
                "switch.egress_alpha is set: does not apply to switch.model = \"input-queued\""
            ),
            "{err}"
        );
    }

    #[test]
    fn deflection_keys_defaults_and_errors() {
        use crate::config::Deflection;
        let shared = "[switch]\nmodel = \"shared-buffer\"\n";
        let deflection = |keys: &str| {
            one(&format!("{shared}{keys}\n"))
                .map(|r| r.config.deflection)
                .map_err(|e| e.to_string())
        };
        assert_eq!(deflection(""), Ok(None));
        assert_eq!(
            deflection("deflection = \"dibs\""),
            Ok(Some(Deflection::DIBS))
        );
        assert_eq!(
            deflection("deflection = \"dibs\"\ndeflection_ttl = 3"),
            Ok(Some(Deflection { ttl: 3 }))
        );
        for (keys, want) in [
            (
                "deflection = \"dibs\"\ndeflection_ttl = 0",
                "switch.deflection_ttl = 0: between 1 and 255",
            ),
            (
                "deflection = \"dibs\"\ndeflection_ttl = 256",
                "deflection_ttl",
            ),
            (
                "deflection_ttl = 9",
                "switch.deflection_ttl is set: does not apply to switch.deflection = \"none\"",
            ),
            ("deflection = \"dibz\"", "unknown variant `dibz`"),
        ] {
            let err = deflection(keys).unwrap_err();
            assert!(err.contains(want), "{keys}: {err}");
        }
        let err = one("[switch]\ndeflection = \"dibs\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("needs output buffers"), "{err}");
        let err = one(&format!(
            "[topology]\nrouting = \"k-shortest\"\n{shared}deflection = \"dibs\"\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("a deflected packet leaves its source route"),
            "{err}"
        );
    }
}
