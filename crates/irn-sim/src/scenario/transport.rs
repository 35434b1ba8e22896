//! `[transport]`: the NIC transport every flow runs, its timers and congestion control, and the
//! switches' ECN marking that congestion control chooses.
//!
//! ```toml
//! [transport]
//! kind = "irn"        # "irn" (default), "roce", "irn-go-back-n", "irn-without-bdp-fc",
//!                     # "irn-without-sack", "tcp", "mp-rdma"
//! rto_low = "100us"
//! rto_high = "auto"   # the longest round trip + draining a full buffer (IRN §4.1), or a duration
//! timeouts = "auto"   # off when PFC is on and cannot drop, on otherwise
//! cc = "dcqcn"        # "none" (default), "dcqcn", "timely", "dctcp", "aimd", "hpcc", "swift",
//!                     # "powertcp"
//! tx_window = "auto"  # go-back-N's options (`go_back_n.rs`): "off" (default), "auto", packets
//! [transport.dcqcn]   # the chosen controller's parameter overrides
//! min_rate = "1Gbps"
//! ```

use irn_core::cc::CcConfig;
use irn_core::transport::{
    LossRecovery, MpRdmaError, MpRdmaParams, Resend, RtoBackoff, RtoPolicy, TransportConfig,
};
use irn_core::{Bandwidth, Duration};
use serde::{Deserialize, Serialize};

mod go_back_n;

pub use go_back_n::TxWindow;

use super::error::{did_you_mean, written};
use super::switch::EcnQueueKind;
use super::{
    about, duration_in, invalid, min_frame_floor, parse_key, rate_in, real, OrderingKind,
    ScenarioError, ScenarioFile, SET,
};
use crate::config::{
    bdp_cap_packets, full_frame_bytes, BdpCapScope, BdpRoundTrip, EcnConfig, Framing,
};
use crate::topology::Topology;
use crate::units::Bytes;

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
    /// HPCC (Li et al., SIGCOMM'19), steered by in-band telemetry: `[transport.hpcc]`.
    Hpcc,
    /// Swift (Kumar et al., SIGCOMM'20), RTT against a target delay: `[transport.swift]`.
    Swift,
    /// PowerTCP (Addanki et al., NSDI'22), from in-band telemetry or (θ-PowerTCP) RTTs:
    /// `[transport.powertcp]`.
    Powertcp,
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
    /// MP-RDMA (Lu et al., NSDI'18): per-packet virtual paths, `[transport.mp_rdma]`.
    MpRdma,
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
            TransportKind::MpRdma => "mp-rdma",
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
    /// How the computed cap is taken: `"network"` (absent: the IRN paper's one cap for every
    /// flow, the longest path's BDP) or `"path"` (each flow its own path's BDP: its
    /// bottleneck rate × its round trip; for networks whose paths differ by orders of
    /// magnitude, such as a `wan`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bdp_cap_scope: Option<String>,
    /// Which round trip the computed cap covers: `"propagation"` (absent: IRN §3.2's, the
    /// path's propagation there and back) or `"idle"` (with every link's serialization of a
    /// full frame and an ACK, so that a lone flow keeps an idle path full).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bdp_cap_round_trip: Option<String>,
    pub rto_low: String,
    /// `"auto"` (the longest path's round trip plus draining the most one congested output can
    /// hold: `crate::config::rto_high_auto`) or a duration. RoCE without PFC waits it too.
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
    /// Bytes a data frame adds to its payload (absent: "62B", RoCEv2 over Ethernet).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_framing: Option<String>,
    /// Bytes of an ACK, NACK or CNP frame (absent: "64B", Ethernet's minimum).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply_frame: Option<String>,
    /// A retransmission may leave only this long after its loss was detected (IRN §6.3's
    /// worst case: "2us").
    pub retransmit_delay: String,
    /// Congestion control: `"none"`, `"dcqcn"`, `"timely"`, `"dctcp"`, `"aimd"`, `"hpcc"`,
    /// `"swift"` or `"powertcp"`.
    pub cc: CcKind,
    /// Go-back-N's transmit window (ConnectX): `"off"` (absent), `"auto"` (the BDP cap the
    /// topology gives) or a packet count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tx_window: Option<TxWindow>,
    /// Go-back-N's slow restart (ConnectX): each loss episode cuts the window, which regrows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slow_restart: Option<bool>,
    /// The window after a loss episode, as a fraction of the window before it (default 0.5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slow_restart_factor: Option<f64>,
    /// `"additive"` (default: +1 packet per round trip) or `"slow-start"` (doubling).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slow_restart_growth: Option<String>,
    /// A go-back-N receiver's NACK timer (ns-3's `NACKGenerationInterval`): `"off"` (absent:
    /// one NACK per loss episode) or a duration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nack_interval: Option<String>,
    /// `"every-packet"` (absent) or `"none"`: the IRN paper's RoCE-with-PFC baseline (§5.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acks: Option<String>,
    /// What selective repeat resends after a timeout: `"holes"` (absent: the recovery rule,
    /// the cumulative-ACK packet and the holes below the highest SACK) or `"unsacked"` (every
    /// packet not SACKed, as TCP and go-back-N always do; refused with those kinds and
    /// MP-RDMA, where it would change nothing). See `irn_core::transport::Resend`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_resend: Option<String>,
    /// What selective repeat resends when a NACK starts recovery: `"holes"` (absent: the
    /// cumulative-ACK packet and the holes below the highest SACK, IRN §3.1) or `"unsacked"`
    /// (every packet not SACKed, up to the highest sent: ConWeave's ns-3; refused with
    /// go-back-N, TCP and MP-RDMA, which recover otherwise). See
    /// `irn_core::transport::Resend`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nack_resend: Option<String>,
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
    /// `[transport.hpcc]`: HPCC parameter overrides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hpcc: Option<toml::Table>,
    /// `[transport.swift]`: Swift parameter overrides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swift: Option<toml::Table>,
    /// `[transport.powertcp]`: PowerTCP parameter overrides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub powertcp: Option<toml::Table>,
    /// `[transport.mp_rdma]`: MP-RDMA parameter overrides (`kind = "mp-rdma"` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mp_rdma: Option<toml::Table>,
}

impl Default for TransportSection {
    fn default() -> Self {
        TransportSection {
            kind: TransportKind::Irn,
            mtu: TransportConfig::DEFAULT_MTU,
            bdp_cap: None,
            bdp_cap_scope: None,
            bdp_cap_round_trip: None,
            rto_low: "100us".into(),
            rto_high: "auto".into(),
            rto_low_packets: TransportConfig::DEFAULT_RTO_LOW_N,
            timeouts: "auto".into(),
            rto_backoff: "exponential".into(),
            header_overhead: "0B".into(),
            data_framing: None,
            reply_frame: None,
            retransmit_delay: "0us".into(),
            tx_window: None,
            slow_restart: None,
            slow_restart_factor: None,
            slow_restart_growth: None,
            nack_interval: None,
            acks: None,
            timeout_resend: None,
            nack_resend: None,
            cc: CcKind::None,
            dcqcn: None,
            timely: None,
            dctcp: None,
            aimd: None,
            hpcc: None,
            swift: None,
            powertcp: None,
            mp_rdma: None,
        }
    }
}

/// `transport.mtu` and `transport.header_overhead`: the extra header bytes every data packet
/// carries.
pub(super) fn extra_header_bytes(t: &TransportSection, file: &str) -> Result<u32, ScenarioError> {
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
    Ok(extra_header_bytes as u32)
}

/// `transport.data_framing` and `transport.reply_frame`: what frames add on the wire, RoCEv2's
/// unless set; another accounting only for message flows (a verbs packet's headers are its
/// own).
pub(super) fn framing(
    t: &TransportSection,
    file: &str,
    verbs: bool,
) -> Result<Framing, ScenarioError> {
    let mut framing = Framing::default();
    for (key, value, field) in [
        ("transport.data_framing", &t.data_framing, &mut framing.data),
        ("transport.reply_frame", &t.reply_frame, &mut framing.reply),
    ] {
        let Some(v) = value else { continue };
        let bytes = parse_key::<Bytes>(file, key, v)?.0;
        if !(1..=u64::from(Framing::MAX_BYTES)).contains(&bytes) {
            let allowed = format!("between 1B and {}B", Framing::MAX_BYTES);
            return Err(invalid(file, key, &format!("{v:?}"), &allowed));
        }
        if verbs {
            return Err(invalid(
                file,
                key,
                &format!("{v:?}"),
                "not with a verbs workload (workload.verbs), whose packets carry their own headers",
            ));
        }
        *field = bytes as u32;
    }
    Ok(framing)
}

/// The transport every flow runs, the switches' ECN marking its congestion control wants, and a
/// warning when `rto_high = "auto"` had to be raised to RTO_low. `pfc_drops` says why PFC can
/// drop packets, if it can (then timeouts must stay on); `auto_rto_high` is the derived RTO_high
/// as (round trip, drain).
pub(super) fn build(
    s: &ScenarioFile,
    file: &str,
    topology: &Topology,
    (framing, extra_header_bytes, max_frame): (Framing, u32, u64),
    pfc_drops: Option<String>,
    auto_rto_high: (Duration, Duration),
) -> Result<(TransportConfig, Option<EcnConfig>, Vec<String>), ScenarioError> {
    let t = &s.transport;
    let lossy = pfc_drops.clone();
    let (rto, rto_warning) = rto(s, file, topology, max_frame, pfc_drops, auto_rto_high)?;
    let base = match t.kind {
        TransportKind::Irn => TransportConfig::irn(),
        // Credits are lossless like PFC.
        TransportKind::Roce => TransportConfig::roce(s.switch.pfc || s.switch.credits),
        TransportKind::IrnGoBackN => TransportConfig::irn_go_back_n(),
        TransportKind::IrnWithoutBdpFc => TransportConfig::irn_without_bdp_fc(),
        TransportKind::IrnWithoutSack => TransportConfig::irn_without_sack(),
        TransportKind::Tcp => TransportConfig::tcp(),
        TransportKind::MpRdma => TransportConfig::mp_rdma(mp_rdma_params(t, file, s.seed)?),
    };
    if t.mp_rdma.is_some() && t.kind != TransportKind::MpRdma {
        return Err(invalid(
            file,
            "transport.mp_rdma",
            SET,
            "applies only with transport.kind = \"mp-rdma\"",
        ));
    }
    let own_cc = matches!(t.kind, TransportKind::Tcp | TransportKind::MpRdma);
    if own_cc && t.retransmit_delay.trim() != "0us" {
        return Err(invalid(
            file,
            "transport.retransmit_delay",
            &format!("{:?}", t.retransmit_delay),
            &format!(
                "models an RDMA NIC refetching a lost packet; kind = \"{}\" does not use it",
                t.kind.name()
            ),
        ));
    }
    let rto_backoff = rto_backoff(t, file)?;
    let timeout_resend = resend(
        t.timeout_resend.as_deref(),
        "timeout_resend",
        t,
        &base,
        file,
    )?;
    let nack_resend = resend(t.nack_resend.as_deref(), "nack_resend", t, &base, file)?;
    if t.kind == TransportKind::Tcp && t.cc != CcKind::None {
        return Err(invalid(
            file,
            "transport.cc",
            &format!("{:?}", t.cc).to_lowercase(),
            "TCP runs its own congestion control (slow start, AIMD); use cc = \"none\" with kind = \"tcp\", or cc = \"aimd\" with kind = \"irn\"",
        ));
    }
    let covers = bdp_round_trip(t, file)?;
    let frame = full_frame_bytes(t.mtu, framing.data + extra_header_bytes);
    let longest = |covers: BdpRoundTrip| {
        let links = topology.max_path_switches() + 1;
        let rates = std::iter::repeat_n(topology.min_host_rate(), links);
        covers.of(
            topology.max_path_propagation(),
            rates,
            (frame, framing.reply),
        )
    };
    let auto_cap = bdp_cap_packets(topology.min_host_rate(), longest(covers), frame, covers);
    if base.bdp_cap.is_some() && t.bdp_cap.is_none() && auto_cap > TransportConfig::MAX_WINDOW {
        let (rate, rtt) = (topology.min_host_rate(), longest(covers));
        return Err(invalid(
            file,
            "topology",
            &format!("{rate} × {rtt} round trip"),
            &format!(
                "the longest path holds {auto_cap} full frames in flight, more than the {} a \
                 transport tracks: shorten its links or slow them, or set transport.bdp_cap",
                TransportConfig::MAX_WINDOW
            ),
        ));
    }
    let bdp_cap = bdp_cap(t, file, auto_cap, &base)?;
    // Said unless the round trip was chosen: writing "propagation" is knowing it.
    let computed = bdp_cap.is_some() && t.bdp_cap.is_none() && t.bdp_cap_round_trip.is_none();
    let short_cap = computed
        .then(|| short_cap_warning(topology, auto_cap, longest(BdpRoundTrip::Idle), frame))
        .flatten();
    let cc = cc_config(t, file, topology.min_host_rate(), || {
        longest_unloaded_rtt(topology, (max_frame, framing.reply))
    })?;
    // MP-RDMA's own ECN window is its congestion control: `cc` (checked all the same) is
    // ignored, so one scenario can compare MP-RDMA with DCQCN variants, and no CNPs are sent.
    let cc = match t.kind {
        TransportKind::MpRdma => CcConfig::None,
        _ => cc,
    };
    let transport = TransportConfig {
        bdp_cap,
        rto,
        rto_backoff,
        timeout_resend,
        nack_resend,
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
    let g = go_back_n::build(s, file, &transport, auto_cap, lossy.as_deref())?;
    let transport = TransportConfig {
        tx_window: g.tx_window,
        slow_restart: g.slow_restart,
        nack_interval: g.nack_interval,
        acks: g.acks,
        ..transport
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
    Ok((
        transport,
        ecn,
        rto_warning.into_iter().chain(short_cap).collect(),
    ))
}

/// The retransmission timers: checked against a frame's serialization, then on or off; with a
/// warning when the derived RTO_high is below RTO_low, which it is then raised to.
fn rto(
    s: &ScenarioFile,
    file: &str,
    topology: &Topology,
    max_frame: u64,
    pfc_drops: Option<String>,
    (rtt, drain): (Duration, Duration),
) -> Result<(RtoPolicy, Option<String>), ScenarioError> {
    let t = &s.transport;
    let rto_low = parse_key::<Duration>(file, "transport.rto_low", &t.rto_low)?;
    let mut warning = None;
    let rto_high = match t.rto_high.as_str() {
        "auto" if rtt + drain < rto_low => {
            warning = Some(format!(
                "transport.rto_high = \"auto\" is {} (the longest path's {} round trip + {} to \
                 drain a full buffer), less than rto_low = {rto_low}: RTO_high is raised to \
                 {rto_low}",
                about(rtt + drain),
                about(rtt),
                about(drain)
            ));
            rto_low
        }
        "auto" => rtt + drain,
        v => parse_key::<Duration>(file, "transport.rto_high", v)?,
    };
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
    let timeouts = timeouts(s, file, pfc_drops)?;
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
    Ok((rto, warning.filter(|_| rto != RtoPolicy::Disabled)))
}

/// `transport.timeouts` resolved: whether the timers run.
fn timeouts(
    s: &ScenarioFile,
    file: &str,
    pfc_drops: Option<String>,
) -> Result<bool, ScenarioError> {
    let t = &s.transport;
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
    Ok(match t.timeouts.as_str() {
        "auto" => !(s.switch.pfc || s.switch.credits) || no_timeouts.is_some(),
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
    })
}

/// `transport.rto_backoff`.
fn rto_backoff(t: &TransportSection, file: &str) -> Result<RtoBackoff, ScenarioError> {
    Ok(match t.rto_backoff.as_str() {
        "exponential" => RtoBackoff::Exponential,
        "constant" if t.kind == TransportKind::Tcp => {
            return Err(invalid(
                file,
                "transport.rto_backoff",
                "\"constant\"",
                "TCP (kind = \"tcp\") always backs off its timeout (RFC 6298); use \"exponential\"",
            ))
        }
        "constant" => RtoBackoff::Constant,
        v => {
            return Err(invalid(
                file,
                "transport.rto_backoff",
                &format!("{v:?}"),
                "\"exponential\" or \"constant\"",
            ))
        }
    })
}

/// `transport.timeout_resend` or `transport.nack_resend` (`key`): a selective-repeat choice.
/// Go-back-N rewinds, TCP and MP-RDMA follow their own rules, so `"unsacked"` with those kinds
/// would change nothing and is refused, as `tx_window` is where it does not apply; `"holes"`,
/// the default, is accepted with every kind, so a `[[compare]]` variant of another kind can
/// set it back.
fn resend(
    value: Option<&str>,
    key: &str,
    t: &TransportSection,
    base: &TransportConfig,
    file: &str,
) -> Result<Resend, ScenarioError> {
    let key = format!("transport.{key}");
    match value {
        None | Some("holes") => Ok(Resend::Holes),
        Some("unsacked") if matches!(base.recovery, LossRecovery::SelectiveRepeat { .. }) => {
            Ok(Resend::Unsacked)
        }
        Some("unsacked") => Err(invalid(
            file,
            &key,
            "\"unsacked\"",
            &format!(
                "a selective-repeat option (kind = \"irn\", \"irn-without-bdp-fc\" or \
                 \"irn-without-sack\"); kind = \"{}\" recovers otherwise",
                t.kind.name()
            ),
        )),
        Some(v) => Err(invalid(
            file,
            &key,
            &format!("{v:?}"),
            "\"holes\" or \"unsacked\" (IRN's holes below the highest SACK, or every packet \
             not SACKed)",
        )),
    }
}

/// `transport.bdp_cap_round_trip`, its value alone (where it applies is [`bdp_cap_rule`]'s).
fn bdp_round_trip(t: &TransportSection, file: &str) -> Result<BdpRoundTrip, ScenarioError> {
    match t.bdp_cap_round_trip.as_deref() {
        None | Some("propagation") => Ok(BdpRoundTrip::Propagation),
        Some("idle") => Ok(BdpRoundTrip::Idle),
        Some(other) => Err(invalid(
            file,
            "transport.bdp_cap_round_trip",
            &format!("{other:?}"),
            "\"propagation\" (IRN §3.2: the path's propagation there and back) or \"idle\" \
             (with every link's serialization of a full frame and an ACK)",
        )),
    }
}

/// A lone flow on an idle longest path kept below 90 % of its line rate by the default
/// computed cap, which covers only the propagation (`idle`: that path's idle round trip), said
/// with what to set; `None` when the cap fills at least 90 % of it. The paper's default case
/// fills 94 % (110 of 117.3 frames); an AI fabric's 1 µs links, 100 Gb/s and 4 KB frames 85 %.
fn short_cap_warning(topology: &Topology, cap: u32, idle: Duration, frame: u64) -> Option<String> {
    let rate = topology.min_host_rate();
    let needed = rate.bdp_bytes(idle) as f64 / frame as f64;
    let share = f64::from(cap) / needed;
    (share < 0.9).then(|| {
        format!(
            "transport.bdp_cap is {cap} packets, the longest path's propagation round trip \
             ({}) at {rate}, as IRN §3.2 defines it; with each link's serialization of a full \
             frame and an ACK an idle round trip is {} ({needed:.1} full frames), so a flow \
             alone reaches at most {:.0} % of line rate: transport.bdp_cap_round_trip = \
             \"idle\" covers it (or set transport.bdp_cap)",
            about(topology.max_path_propagation() * 2),
            about(idle),
            share * 100.0
        )
    })
}

/// `transport.bdp_cap_scope` and `transport.bdp_cap_round_trip`, checked against the transport
/// `transport` built: a cap per path, or over an idle round trip, needs BDP-FC and a computed
/// cap.
pub(super) fn bdp_cap_rule(
    t: &TransportSection,
    file: &str,
    transport: &TransportConfig,
) -> Result<(BdpCapScope, BdpRoundTrip), ScenarioError> {
    let covers = bdp_round_trip(t, file)?;
    if let Some(v) = &t.bdp_cap_round_trip {
        let why = match (transport.bdp_cap, t.bdp_cap) {
            (None, _) => Some(format!(
                "transport.kind = \"{}\" has no BDP-FC; a cap needs kind = \"irn\" or \
                 \"irn-go-back-n\"",
                t.kind.name()
            )),
            (_, Some(_)) => Some(
                "transport.bdp_cap sets the cap itself; leave it out to have it computed"
                    .to_string(),
            ),
            _ => None,
        };
        if let Some(why) = why {
            return Err(invalid(
                file,
                "transport.bdp_cap_round_trip",
                &format!("{v:?}"),
                &why,
            ));
        }
    }
    Ok((bdp_cap_scope(t, file, transport)?, covers))
}

/// `transport.bdp_cap_scope`, checked against the transport `transport` built: a cap per path
/// needs BDP-FC and a computed cap.
fn bdp_cap_scope(
    t: &TransportSection,
    file: &str,
    transport: &TransportConfig,
) -> Result<BdpCapScope, ScenarioError> {
    match t.bdp_cap_scope.as_deref() {
        None | Some("network") => Ok(BdpCapScope::Network),
        Some("path") if transport.bdp_cap.is_none() => Err(invalid(
            file,
            "transport.bdp_cap_scope",
            "\"path\"",
            &format!(
                "transport.kind = \"{}\" has no BDP-FC; a cap per path needs kind = \"irn\" \
                 or \"irn-go-back-n\"",
                t.kind.name()
            ),
        )),
        Some("path") if t.bdp_cap.is_some() => Err(invalid(
            file,
            "transport.bdp_cap_scope",
            "\"path\"",
            "transport.bdp_cap sets one cap for every flow; leave it out to take each path's",
        )),
        Some("path") => Ok(BdpCapScope::Path),
        Some(other) => Err(invalid(
            file,
            "transport.bdp_cap_scope",
            &format!("{other:?}"),
            "\"network\" (one cap, the longest path's) or \"path\" (each flow's own)",
        )),
    }
}

/// `transport.bdp_cap`, or `auto_cap`, the cap computed from the topology's longest path, for
/// the transports with BDP-FC.
fn bdp_cap(
    t: &TransportSection,
    file: &str,
    auto_cap: u32,
    base: &TransportConfig,
) -> Result<Option<u32>, ScenarioError> {
    Ok(match (t.kind, t.bdp_cap) {
        (TransportKind::MpRdma, Some(c)) => return Err(invalid(
            file,
            "transport.bdp_cap",
            &c.to_string(),
            "MP-RDMA bounds what is in flight by its bitmap; set transport.mp_rdma.bitmap instead",
        )),
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
    })
}

/// A parameter a `[transport.<cc>]` table may set, where its value goes, and its physical
/// range: every value outside it is refused, naming the range.
enum Param<'a> {
    /// A duration at least `.1` (with its reason).
    Time(&'a mut Duration, (Duration, String)),
    /// A rate above 0 and at most the hosts' line rate: a controller cannot send faster.
    Rate(&'a mut Bandwidth),
    /// A finite number in the range `.1`.
    Real(&'a mut f64, Reals),
    /// A whole number of at least 1 and at most `.1`.
    Count(&'a mut u32, u32),
    /// A whole number from 0 to `.1`.
    Whole(&'a mut u32, u32),
    Size(&'a mut u64),
    Flag(&'a mut bool),
    /// One of a fixed set of names (listed, quoted, in the `String`); the function stores the
    /// value named, `false` if none is.
    Choice(Box<dyn FnMut(&str) -> bool + 'a>, String),
    /// Read before the others (a preset the others override); listed so it is allowed.
    Applied,
}

/// The range of a real parameter: each end a bound and whether it is included.
#[derive(Debug, Clone, Copy)]
struct Reals {
    low: (f64, bool),
    high: (f64, bool),
    /// What the number is, for the error: "a gain", "a factor".
    what: &'static str,
}

impl Reals {
    /// A gain or weight of a moving average: (0, 1].
    const GAIN: Reals = Reals {
        low: (0.0, false),
        high: (1.0, true),
        what: "a gain",
    };
    /// A probability-like fraction: [0, 1].
    const FRACTION: Reals = Reals {
        low: (0.0, true),
        high: (1.0, true),
        what: "a fraction",
    };
    /// What a cut multiplies by: (0, 1).
    const CUT: Reals = Reals {
        low: (0.0, false),
        high: (1.0, false),
        what: "a factor below 1",
    };

    fn contains(&self, v: f64) -> bool {
        let above = if self.low.1 {
            v >= self.low.0
        } else {
            v > self.low.0
        };
        let below = if self.high.1 {
            v <= self.high.0
        } else {
            v < self.high.0
        };
        v.is_finite() && above && below
    }

    fn allowed(&self) -> String {
        format!(
            "{} in {}{}, {}{}",
            self.what,
            if self.low.1 { '[' } else { '(' },
            self.low.0,
            self.high.0,
            if self.high.1 { ']' } else { ')' }
        )
    }
}

/// PowerTCP's η, the normalised power aimed at: (0, 2] (θ-PowerTCP's default is above 1).
const TARGET: Reals = Reals {
    low: (0.0, false),
    high: (2.0, true),
    what: "a normalised power",
};

/// AIMD's additive increase: packets per window of ACKs, above 0 and at most the largest window.
const PER_WINDOW: Reals = Reals {
    low: (0.0, false),
    high: (TransportConfig::MAX_WINDOW as f64, true),
    what: "packets per window",
};

/// Timely's thresholds in order: below T_low the rate only grows, above T_high it is cut, so
/// T_low must be below T_high (equal, or both 0, leaves no band for the gradient to act in).
fn timely_order(
    file: &str,
    table: &toml::Table,
    p: &irn_core::cc::TimelyParams,
    line_rate: Bandwidth,
) -> Result<(), ScenarioError> {
    if p.t_low >= p.t_high {
        let (key, value, allowed) = if table.contains_key("t_high") {
            let t_low = p.t_low;
            ("t_high", p.t_high, format!("above t_low ({t_low})"))
        } else {
            let t_high = p.t_high;
            ("t_low", p.t_low, format!("below t_high ({t_high})"))
        };
        return Err(invalid(
            file,
            &format!("transport.timely.{key}"),
            &format!("\"{value}\""),
            &format!("{allowed}: the rate grows below t_low and is cut above t_high"),
        ));
    }
    let hyper = u128::from(p.additive_step.as_bps()) * u128::from(p.hai_multiplier);
    if hyper > u128::from(line_rate.as_bps()) {
        return Err(invalid(
            file,
            "transport.timely.hai_multiplier",
            &p.hai_multiplier.to_string(),
            &format!(
                "between 1 and {}: one hyper-active step, hai_multiplier × additive_step ({}), \
                 is at most the line rate ({line_rate})",
                line_rate.as_bps() / p.additive_step.as_bps(),
                p.additive_step
            ),
        ));
    }
    Ok(())
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
    line_rate: Bandwidth,
    section: &str,
    table: &toml::Table,
    mut params: Vec<(&str, Param)>,
) -> Result<(), ScenarioError> {
    let names: Vec<&str> = params.iter().map(|(k, _)| *k).collect();
    let allowed = names.join(", ");
    for (key, value) in table {
        let full = format!("{section}.{key}");
        let Some((_, param)) = params.iter_mut().find(|(k, _)| k == key) else {
            return Err(invalid(
                file,
                &full,
                SET,
                &format!(
                    "unknown parameter; allowed: {allowed}{}",
                    did_you_mean(key, names.iter().copied())
                ),
            ));
        };
        let text = match value {
            toml::Value::String(v) => v.clone(),
            other => written(other),
        };
        let number = value
            .as_float()
            .or_else(|| value.as_integer().map(|i| i as f64));
        match param {
            Param::Time(d, (floor, why)) => {
                **d = duration_in(file, &full, &text, (*floor, why.as_str()), None)?;
            }
            Param::Rate(r) => {
                **r = rate_in(
                    file,
                    &full,
                    &text,
                    (Bandwidth::from_bps(1), line_rate),
                    "the hosts' line rate: no sender goes faster",
                )?;
            }
            Param::Size(b) => **b = parse_key::<Bytes>(file, &full, &text)?.0,
            Param::Real(x, range) => match number {
                Some(v) if range.contains(v) => **x = v,
                _ => return Err(invalid(file, &full, &text, &range.allowed())),
            },
            Param::Count(n, max) => match value.as_integer().and_then(|i| u32::try_from(i).ok()) {
                Some(v) if v > 0 && v <= *max => **n = v,
                _ => {
                    return Err(invalid(
                        file,
                        &full,
                        &text,
                        &format!("a whole number between 1 and {max}"),
                    ))
                }
            },
            Param::Whole(n, max) => match value.as_integer().and_then(|i| u32::try_from(i).ok()) {
                Some(v) if v <= *max => **n = v,
                _ => {
                    return Err(invalid(
                        file,
                        &full,
                        &text,
                        &format!("a whole number between 0 and {max}"),
                    ))
                }
            },
            Param::Flag(b) => match value.as_bool() {
                Some(v) => **b = v,
                None => return Err(invalid(file, &full, &written(value), "true or false")),
            },
            Param::Choice(set, names) => {
                if !value.as_str().is_some_and(set) {
                    return Err(invalid(file, &full, &written(value), names));
                }
            }
            Param::Applied => {}
        }
    }
    Ok(())
}

/// The congestion controller with its parameters: the papers' defaults (see `irn_core::cc`),
/// then the scenario's `[transport.<cc>]` overrides, each in its range: gains in (0, 1], cuts
/// in (0, 1), rates up to `line_rate` (the hosts'), windows up to the largest a transport
/// tracks, and timers no shorter than a minimum frame at the line rate (a "0s" or "1ps" timer
/// fires without end and the run never finishes).
///
/// `auto_rtt` gives HPCC's `base_rtt = "auto"` (see [`longest_unloaded_rtt`]).
fn cc_config(
    t: &TransportSection,
    file: &str,
    line_rate: Bandwidth,
    auto_rtt: impl FnOnce() -> Duration,
) -> Result<CcConfig, ScenarioError> {
    let (floor, why) = min_frame_floor(line_rate, "the hosts' line rate");
    let floor = || (floor, why.clone());
    // A minimum gap rather than a timer (0: none), or a threshold: any duration.
    let any = || (Duration::ZERO, String::new());
    let window = TransportConfig::MAX_WINDOW;
    let tables = [
        ("dcqcn", &t.dcqcn, CcKind::Dcqcn),
        ("timely", &t.timely, CcKind::Timely),
        ("dctcp", &t.dctcp, CcKind::Dctcp),
        ("aimd", &t.aimd, CcKind::Aimd),
        ("hpcc", &t.hpcc, CcKind::Hpcc),
        ("swift", &t.swift, CcKind::Swift),
        ("powertcp", &t.powertcp, CcKind::Powertcp),
    ];
    for (name, table, kind) in &tables {
        // An empty table sets nothing, whatever runs: it is how the command line takes a
        // file's table away (`--set 'transport.dcqcn={}'`).
        if table.as_ref().is_some_and(|t| !t.is_empty()) && t.cc != *kind {
            return Err(invalid(
                file,
                &format!("transport.{name}"),
                SET,
                &format!(
                    "applies only with transport.cc = \"{name}\"; when variants change \
                     transport.cc, give the table only to those that run it, in their `set` \
                     (set = {{ \"transport.cc\" = \"{name}\", \"transport.{name}\" = {{ … }} }}); \
                     from the command line, --set 'transport.{name}={{}}' empties it"
                ),
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
                        &written(v),
                        &names.join(" or "),
                    )
                })?,
            };
            let params = vec![
                ("cnp_interval", Param::Time(&mut p.cnp_interval, any())),
                ("g", Param::Real(&mut p.g, Reals::GAIN)),
                (
                    "alpha_update_period",
                    Param::Time(&mut p.alpha_update_period, floor()),
                ),
                (
                    "rate_decrease_period",
                    Param::Time(&mut p.rate_decrease_period, floor()),
                ),
                (
                    "rate_increase_period",
                    Param::Time(&mut p.rate_increase_period, floor()),
                ),
                ("byte_counter", Param::Size(&mut p.byte_counter)),
                (
                    "fast_recovery_steps",
                    Param::Count(&mut p.fast_recovery_steps, u32::MAX),
                ),
                ("additive_increase", Param::Rate(&mut p.additive_increase)),
                ("hyper_increase", Param::Rate(&mut p.hyper_increase)),
                ("min_rate", Param::Rate(&mut p.min_rate)),
                ("clamp_target_rate", Param::Flag(&mut p.clamp_target_rate)),
                ("increase_stages", choice(&mut p.increase_stages)),
                ("alpha_update", choice(&mut p.alpha_update)),
                ("rate_decrease", choice(&mut p.rate_decrease)),
                ("cnp_on_nack", Param::Flag(&mut p.cnp_on_nack)),
                ("cnp_carrier", choice(&mut p.cnp_carrier)),
                ("preset", Param::Applied),
            ];
            apply_params(file, line_rate, "transport.dcqcn", table, params)?;
            CcConfig::Dcqcn(p)
        }
        CcKind::Timely => {
            use irn_core::cc::TimelyUpdate;
            let mut p = irn_core::cc::TimelyParams::default();
            let table = t.timely.as_ref().unwrap_or(&empty);
            let mut segment = TimelyUpdate::PAPER_SEGMENT_BYTES;
            let params = vec![
                ("ewma_alpha", Param::Real(&mut p.ewma_alpha, Reals::GAIN)),
                ("beta", Param::Real(&mut p.beta, Reals::GAIN)),
                ("t_low", Param::Time(&mut p.t_low, any())),
                ("t_high", Param::Time(&mut p.t_high, floor())),
                ("min_rtt", Param::Time(&mut p.min_rtt, floor())),
                ("additive_step", Param::Rate(&mut p.additive_step)),
                (
                    "hai_threshold",
                    Param::Count(&mut p.hai_threshold, u32::MAX),
                ),
                (
                    "hai_multiplier",
                    Param::Count(&mut p.hai_multiplier, u32::MAX),
                ),
                ("min_rate", Param::Rate(&mut p.min_rate)),
                ("update", choice(&mut p.update)),
                ("segment", Param::Size(&mut segment)),
                (
                    "low_counts_as_increase",
                    Param::Flag(&mut p.low_counts_as_increase),
                ),
            ];
            apply_params(file, line_rate, "transport.timely", table, params)?;
            timely_order(file, table, &p, line_rate)?;
            match &mut p.update {
                TimelyUpdate::PerSegment { bytes } if segment > 0 => *bytes = segment,
                TimelyUpdate::PerSegment { .. } => {
                    return Err(invalid(
                        file,
                        "transport.timely.segment",
                        &format!("{segment}B"),
                        "a size above 0",
                    ))
                }
                _ if table.contains_key("segment") => {
                    return Err(invalid(
                        file,
                        "transport.timely.segment",
                        SET,
                        "applies only with transport.timely.update = \"per-segment\"",
                    ))
                }
                _ => {}
            }
            CcConfig::Timely(p)
        }
        CcKind::Dctcp => {
            let mut p = irn_core::cc::DctcpParams::default();
            // 0: not set (the transport's own starting window); a set value is at least 1.
            let mut initial_window = 0;
            let params = vec![
                ("g", Param::Real(&mut p.g, Reals::GAIN)),
                ("min_window", Param::Count(&mut p.min_window, window)),
                (
                    "initial_alpha",
                    Param::Real(&mut p.initial_alpha, Reals::FRACTION),
                ),
                ("initial_window", Param::Count(&mut initial_window, window)),
            ];
            apply_params(
                file,
                line_rate,
                "transport.dctcp",
                t.dctcp.as_ref().unwrap_or(&empty),
                params,
            )?;
            p.initial_window = (initial_window > 0).then_some(initial_window);
            CcConfig::Dctcp(p)
        }
        CcKind::Aimd => {
            let mut p = irn_core::cc::AimdParams::default();
            let params = vec![
                (
                    "additive_increase",
                    Param::Real(&mut p.additive_increase, PER_WINDOW),
                ),
                (
                    "decrease_factor",
                    Param::Real(&mut p.decrease_factor, Reals::CUT),
                ),
                ("min_window", Param::Count(&mut p.min_window, window)),
            ];
            apply_params(
                file,
                line_rate,
                "transport.aimd",
                t.aimd.as_ref().unwrap_or(&empty),
                params,
            )?;
            CcConfig::Aimd(p)
        }
        CcKind::Hpcc => {
            let table = t.hpcc.as_ref().unwrap_or(&empty);
            CcConfig::Hpcc(hpcc_params(file, line_rate, table, auto_rtt)?)
        }
        CcKind::Swift => {
            let table = t.swift.as_ref().unwrap_or(&empty);
            CcConfig::Swift(swift_params(file, line_rate, table, auto_rtt)?)
        }
        CcKind::Powertcp => {
            let table = t.powertcp.as_ref().unwrap_or(&empty);
            CcConfig::Powertcp(powertcp_params(file, line_rate, table, auto_rtt)?)
        }
    })
}

/// `[transport.powertcp]`'s variant: `"int"` (absent) or `"theta"`.
fn powertcp_variant(
    file: &str,
    table: &toml::Table,
) -> Result<irn_core::cc::PowertcpVariant, ScenarioError> {
    use irn_core::cc::{Named, PowertcpVariant};
    match table.get("variant") {
        None => Ok(PowertcpVariant::Int),
        Some(v) => v
            .as_str()
            .and_then(PowertcpVariant::from_name)
            .ok_or_else(|| {
                invalid(
                    file,
                    "transport.powertcp.variant",
                    &written(v),
                    "\"int\" or \"theta\"",
                )
            }),
    }
}

/// Whether the run's controller reads in-band telemetry: HPCC, and PowerTCP but θ-PowerTCP.
/// A wrong variant is reported when the controller is built.
pub(super) fn wants_int(t: &TransportSection) -> bool {
    match t.cc {
        CcKind::Hpcc => true,
        CcKind::Powertcp => {
            let empty = toml::Table::new();
            let table = t.powertcp.as_ref().unwrap_or(&empty);
            powertcp_variant("", table).is_ok_and(|v| v == irn_core::cc::PowertcpVariant::Int)
        }
        _ => false,
    }
}

/// `[transport.powertcp]`: PowerTCP's parameters (`irn_core::cc::powertcp`), the variant's
/// defaults with the table's overrides; `base_rtt = "auto"` as HPCC's.
fn powertcp_params(
    file: &str,
    line_rate: Bandwidth,
    table: &toml::Table,
    auto_rtt: impl FnOnce() -> Duration,
) -> Result<irn_core::cc::PowertcpParams, ScenarioError> {
    // The variant first: it sets the other keys' defaults.
    let mut p = irn_core::cc::PowertcpParams::new(powertcp_variant(file, table)?);
    let params = vec![
        ("variant", Param::Applied),
        ("eta", Param::Real(&mut p.eta, TARGET)),
        ("gamma", Param::Real(&mut p.gamma, Reals::GAIN)),
        ("beta", Param::Applied),
        ("base_rtt", Param::Applied),
        ("min_rate", Param::Rate(&mut p.min_rate)),
        ("fast_react", Param::Flag(&mut p.fast_react)),
    ];
    apply_params(file, line_rate, "transport.powertcp", table, params)?;
    let auto = |key: &str| auto_value(file, "transport.powertcp", table, key);
    if let Some(v) = auto("beta")? {
        p.beta_bytes = Some(parse_key::<Bytes>(file, "transport.powertcp.beta", &v)?.0);
    }
    let (floor, why) = min_frame_floor(line_rate, "the hosts' line rate");
    p.base_rtt = match auto("base_rtt")? {
        Some(v) => duration_in(file, "transport.powertcp.base_rtt", &v, (floor, &why), None)?,
        None => auto_rtt().max(floor),
    };
    Ok(p)
}

/// `[transport.swift]`: Swift's parameters (`irn_core::cc::swift`) with the table's overrides;
/// `base_target = "auto"` is the longest path's unloaded round trip ([`longest_unloaded_rtt`]),
/// `fs_range = "auto"` five times the base target (htsim's, `irn_core::cc::swift`).
fn swift_params(
    file: &str,
    line_rate: Bandwidth,
    table: &toml::Table,
    auto_rtt: impl FnOnce() -> Duration,
) -> Result<irn_core::cc::SwiftParams, ScenarioError> {
    let mut p = irn_core::cc::SwiftParams::default();
    // 0: not set (one base target of line rate); a set value is at least 1.
    let mut initial_window = 0;
    let params = vec![
        ("base_target", Param::Applied),
        (
            "hop_scaling",
            Param::Time(&mut p.hop_scaling, (Duration::ZERO, String::new())),
        ),
        ("fs_range", Param::Applied),
        ("fs_min_cwnd", Param::Real(&mut p.fs_min_cwnd, PER_WINDOW)),
        ("fs_max_cwnd", Param::Real(&mut p.fs_max_cwnd, PER_WINDOW)),
        ("ai", Param::Real(&mut p.ai, PER_WINDOW)),
        ("beta", Param::Real(&mut p.beta, Reals::GAIN)),
        ("max_mdf", Param::Real(&mut p.max_mdf, Reals::CUT)),
        ("min_cwnd", Param::Real(&mut p.min_cwnd, PER_WINDOW)),
        (
            "initial_window",
            Param::Count(&mut initial_window, TransportConfig::MAX_WINDOW),
        ),
    ];
    apply_params(file, line_rate, "transport.swift", table, params)?;
    p.initial_window = (initial_window > 0).then_some(initial_window);
    let (floor, why) = min_frame_floor(line_rate, "the hosts' line rate");
    p.base_target = match auto_value(file, "transport.swift", table, "base_target")? {
        Some(v) => duration_in(file, "transport.swift.base_target", &v, (floor, &why), None)?,
        None => auto_rtt().max(floor),
    };
    p.fs_range = match auto_value(file, "transport.swift", table, "fs_range")? {
        Some(v) => duration_in(
            file,
            "transport.swift.fs_range",
            &v,
            (Duration::ZERO, ""),
            None,
        )?,
        None => p.base_target * irn_core::cc::SwiftParams::FS_RANGE_PER_BASE_TARGET,
    };
    if p.fs_min_cwnd >= p.fs_max_cwnd {
        return Err(invalid(
            file,
            "transport.swift.fs_min_cwnd",
            &real(p.fs_min_cwnd),
            &format!(
                "below fs_max_cwnd ({}): flow scaling falls from fs_min_cwnd to fs_max_cwnd",
                real(p.fs_max_cwnd)
            ),
        ));
    }
    Ok(p)
}

/// Key `key` of `section`'s `table`: `None` when absent or `"auto"`, else its text.
fn auto_value(
    file: &str,
    section: &str,
    table: &toml::Table,
    key: &str,
) -> Result<Option<String>, ScenarioError> {
    match table.get(key) {
        None => Ok(None),
        Some(toml::Value::String(v)) if v == "auto" => Ok(None),
        Some(toml::Value::String(v)) => Ok(Some(v.clone())),
        Some(other) => Err(invalid(
            file,
            &format!("{section}.{key}"),
            &written(other),
            "\"auto\" or a quoted value with its unit",
        )),
    }
}

/// `[transport.hpcc]`: HPCC's parameters, the paper's and ns-3's defaults
/// (`irn_core::cc::hpcc`) with the table's overrides.
fn hpcc_params(
    file: &str,
    line_rate: Bandwidth,
    table: &toml::Table,
    auto_rtt: impl FnOnce() -> Duration,
) -> Result<irn_core::cc::HpccParams, ScenarioError> {
    let mut p = irn_core::cc::HpccParams::default();
    let params = vec![
        ("eta", Param::Real(&mut p.eta, Reals::GAIN)),
        ("max_stage", Param::Whole(&mut p.max_stage, u32::MAX)),
        ("w_ai", Param::Applied),
        ("base_rtt", Param::Applied),
        ("min_rate", Param::Rate(&mut p.min_rate)),
        ("fast_react", Param::Flag(&mut p.fast_react)),
        ("sample_feedback", Param::Flag(&mut p.sample_feedback)),
        ("per_hop", Param::Flag(&mut p.per_hop)),
    ];
    apply_params(file, line_rate, "transport.hpcc", table, params)?;
    let auto = |key: &str| auto_value(file, "transport.hpcc", table, key);
    if let Some(v) = auto("w_ai")? {
        p.w_ai_bytes = Some(parse_key::<Bytes>(file, "transport.hpcc.w_ai", &v)?.0);
    }
    let (floor, why) = min_frame_floor(line_rate, "the hosts' line rate");
    p.base_rtt = match auto("base_rtt")? {
        Some(v) => duration_in(file, "transport.hpcc.base_rtt", &v, (floor, &why), None)?,
        None => auto_rtt().max(floor),
    };
    Ok(p)
}

/// HPCC's and PowerTCP's `base_rtt = "auto"` and Swift's `base_target = "auto"`: the longest path's round trip, its propagation both ways plus,
/// on each of its links at the hosts' rate, a full frame out and an ACK back (an ACK echoing a
/// record per switch): as HPCC's ns-3 scripts size T from the longest path.
pub(super) fn longest_unloaded_rtt(
    topology: &Topology,
    (max_frame, reply_frame): (u64, u32),
) -> Duration {
    use irn_core::cc::int;
    let switches = topology.max_path_switches();
    let ack = reply_frame + int::wire_bytes(switches);
    let rate = topology.min_host_rate();
    let per_link = rate.serialization(max_frame) + rate.serialization(u64::from(ack));
    topology.max_path_propagation() * 2 + per_link * (switches as u64 + 1)
}

/// `[transport.mp_rdma]`: MP-RDMA's parameters, the paper's defaults
/// ([`MpRdmaParams::PAPER`]) with the table's overrides, each in its range; VP draws are seeded
/// from the scenario's seed.
fn mp_rdma_params(
    t: &TransportSection,
    file: &str,
    seed: u64,
) -> Result<MpRdmaParams, ScenarioError> {
    let mut p = MpRdmaParams {
        seed: crate::rng::stream_seed(seed, crate::rng::Purpose::VirtualPaths, 0),
        ..MpRdmaParams::PAPER
    };
    let empty = toml::Table::new();
    let table = t.mp_rdma.as_ref().unwrap_or(&empty);
    let mut probe = f64::from(p.probe_ppm) / 1e6;
    let max = MpRdmaParams::MAX_BITMAP;
    let params = vec![
        ("bitmap", Param::Count(&mut p.bitmap, max)),
        ("delta", Param::Count(&mut p.delta, max)),
        ("probe", Param::Real(&mut probe, Reals::FRACTION)),
        ("max_burst", Param::Count(&mut p.max_burst, max)),
        ("initial_window", Param::Count(&mut p.initial_window, max)),
        ("synchronise", Param::Flag(&mut p.synchronise)),
    ];
    // The line rate bounds no MP-RDMA parameter.
    apply_params(
        file,
        Bandwidth::from_bps(1),
        "transport.mp_rdma",
        table,
        params,
    )?;
    p.probe_ppm = (probe * 1e6).round() as u32;
    p.validate().map_err(|e| {
        let (key, value) = match e {
            MpRdmaError::Bitmap(v) => ("bitmap", v),
            MpRdmaError::Delta { delta, .. } => ("delta", delta),
            MpRdmaError::Probe(v) => ("probe", v),
            MpRdmaError::Burst => ("max_burst", 0),
            MpRdmaError::InitialWindow { window, .. } => ("initial_window", window),
        };
        invalid(
            file,
            &format!("transport.mp_rdma.{key}"),
            &value.to_string(),
            &e.to_string(),
        )
    })?;
    Ok(p)
}

/// The switches' ECN marking: a preset chosen by `switch.ecn` (or by the congestion control,
/// or MP-RDMA's window), with any thresholds overridden.
fn ecn_config(
    s: &ScenarioFile,
    file: &str,
    rate: Bandwidth,
    frame: u64,
) -> Result<Option<EcnConfig>, ScenarioError> {
    let sw = &s.switch;
    let mp_rdma = s.transport.kind == TransportKind::MpRdma;
    let preset = match (sw.ecn.as_str(), s.transport.cc) {
        // MP-RDMA's window reacts to ECN as DCTCP's does: single-threshold marking.
        ("auto", _) if mp_rdma => Some(EcnConfig::dctcp(rate, frame)),
        ("off", _)
        | (
            "auto",
            CcKind::None
            | CcKind::Timely
            | CcKind::Aimd
            | CcKind::Hpcc
            | CcKind::Swift
            | CcKind::Powertcp,
        ) => None,
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
    let overridden = sw.ecn_kmin.is_some()
        || sw.ecn_kmax.is_some()
        || sw.ecn_pmax.is_some()
        || sw.ecn_per_rate
        || sw.ecn_queue != EcnQueueKind::WithPacket;
    let Some(mut red) = preset else {
        if overridden {
            return Err(invalid(
                file,
                "switch.ecn",
                &format!("{:?}", sw.ecn),
                "marking is off (\"auto\" marks only for a congestion control that reacts to \
                 ECN), so ecn_kmin/ecn_kmax/ecn_pmax/ecn_per_rate/ecn_queue do not apply; set switch.ecn = \"dcqcn\" \
                 or \"dctcp\" to mark anyway, or, when variants change transport.cc, give the \
                 thresholds only to those that mark, in their `set`",
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
                &real(p),
                "a probability in (0, 1]",
            ));
        }
        red.pmax = p;
    }
    red.per_rate = sw.ecn_per_rate;
    red.counts_departing = sw.ecn_queue == EcnQueueKind::WithPacket;
    if red.kmax_bytes < red.kmin_bytes {
        // Each as written where the file gives it, and in bytes.
        let shown = |text: &Option<String>, bytes: u64| match text {
            Some(t) => format!("{t:?}, {bytes} B"),
            None => format!("{bytes} B, the default"),
        };
        return Err(invalid(
            file,
            "switch.ecn_kmax",
            &(sw.ecn_kmax.as_ref()).map_or(red.kmax_bytes.to_string(), |t| format!("{t:?}")),
            &format!(
                "at least ecn_kmin ({}); kmax is {} B",
                shown(&sw.ecn_kmin, red.kmin_bytes),
                red.kmax_bytes
            ),
        ));
    }
    Ok(Some(red))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::tests::one;

    /// How the marking counts the queue, and its thresholds' scaling, reach the marker; without
    /// marking the keys are refused by name.
    #[test]
    fn ecn_queue_and_per_rate_reach_the_marking_or_are_refused() {
        let marking = |keys: &str| {
            let run = one(&format!("[switch]\necn = \"dcqcn\"\n{keys}")).unwrap();
            let red = run.config.switch.ecn.expect("marks");
            (red.counts_departing, red.per_rate)
        };
        assert_eq!(marking(""), (true, false));
        assert_eq!(marking("ecn_queue = \"with-packet\"\n"), (true, false));
        assert_eq!(marking("ecn_queue = \"without-packet\"\n"), (false, false));
        assert_eq!(marking("ecn_per_rate = true\n"), (true, true));
        for key in ["ecn_queue = \"without-packet\"", "ecn_per_rate = true"] {
            let err = one(&format!("[switch]\n{key}\n")).unwrap_err().to_string();
            assert!(
                err.contains("ecn_per_rate/ecn_queue do not apply"),
                "{key}: {err}"
            );
        }
        let err = one("[switch]\necn = \"dcqcn\"\necn_queue = \"without\"\n").unwrap_err();
        assert!(
            err.to_string()
                .contains("expected `with-packet` or `without-packet`"),
            "{err}"
        );
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
        let run = one("[transport]\ncc = \"timely\"\n[transport.timely]\nt_low = \"20us\"\nhai_threshold = 3\nlow_counts_as_increase = true\n").unwrap();
        let CcConfig::Timely(p) = run.config.transport.cc else {
            panic!()
        };
        assert_eq!((p.t_low, p.hai_threshold), (Duration::from_us(20), 3));
        assert!(p.low_counts_as_increase);
        assert!(!irn_core::cc::TimelyParams::default().low_counts_as_increase);
        assert_eq!(run.config.switch.ecn, None);
    }

    #[test]
    fn dctcp_initial_window_is_the_transports_unless_set() {
        let table: &[(&str, Option<u32>)] = &[
            ("", None),
            ("tx_window = 104\n", None),
            ("[transport.dctcp]\ninitial_window = 104\n", Some(104)),
            (
                "tx_window = 104\n[transport.dctcp]\ninitial_window = 104\n",
                Some(104),
            ),
            ("[transport.dctcp]\ninitial_window = 1\n", Some(1)),
        ];
        for &(keys, want) in table {
            let run = one(&format!(
                "[transport]\nkind = \"roce\"\ncc = \"dctcp\"\n{keys}"
            ))
            .unwrap();
            let CcConfig::Dctcp(p) = run.config.transport.cc else {
                panic!("{:?}", run.config.transport.cc)
            };
            assert_eq!(p.initial_window, want, "{keys}");
        }
    }

    #[test]
    fn hpcc_takes_its_keys_and_sizes_its_base_rtt_from_the_longest_path() {
        let hpcc = |keys: &str| one(&format!("[transport]\ncc = \"hpcc\"\n{keys}"));
        let run = hpcc("").unwrap();
        let CcConfig::Hpcc(p) = run.config.transport.cc else {
            panic!("{:?}", run.config.transport.cc)
        };
        let d = irn_core::cc::HpccParams::default();
        assert_eq!((p.eta, p.max_stage, p.w_ai_bytes), (0.95, 5, None));
        assert_eq!(
            (p.fast_react, p.sample_feedback, p.per_hop),
            (true, false, false)
        );
        assert_eq!(p.min_rate, d.min_rate);
        // INT's header is an extra header of every data packet; its records, one per switch
        // of the longest path, are in the largest frame that T is sized with.
        assert_eq!(run.config.extra_header_bytes, 2);
        let topo = &run.config.topology;
        assert_eq!(
            run.config.max_frame_bytes(),
            u64::from(run.config.transport.mtu + irn_core::packet::DATA_FRAMING_BYTES + 2)
                + 8 * topo.max_path_switches() as u64
        );
        assert_eq!(
            p.base_rtt,
            longest_unloaded_rtt(topo, (run.config.max_frame_bytes(), 64))
        );
        assert!(p.base_rtt > topo.max_path_propagation() * 2);
        assert_eq!(run.config.switch.ecn, None, "HPCC needs no marking");
        let keys = "[transport.hpcc]\neta = 0.9\nmax_stage = 0\nw_ai = \"80B\"\n\
                    base_rtt = \"9us\"\nper_hop = true\nfast_react = false\n";
        let CcConfig::Hpcc(p) = hpcc(keys).unwrap().config.transport.cc else {
            panic!()
        };
        assert_eq!((p.eta, p.max_stage, p.w_ai_bytes), (0.9, 0, Some(80)));
        assert_eq!(
            (p.base_rtt, p.per_hop, p.fast_react),
            (Duration::from_us(9), true, false)
        );
        let auto = "[transport.hpcc]\nw_ai = \"auto\"\nbase_rtt = \"auto\"\n";
        assert_eq!(
            hpcc(auto).unwrap().config.transport.cc,
            run.config.transport.cc
        );
        for (keys, wrong) in [
            ("base_rtt = 9", "transport.hpcc.base_rtt"),
            ("base_rtt = \"0us\"", "transport.hpcc.base_rtt"),
            ("max_stage = -1", "transport.hpcc.max_stage"),
            ("eta = 1.5", "transport.hpcc.eta"),
            ("w_ai = \"fast\"", "transport.hpcc.w_ai"),
        ] {
            let e = hpcc(&format!("[transport.hpcc]\n{keys}\n")).unwrap_err();
            assert!(e.to_string().contains(wrong), "{keys}: {e}");
        }
        let e = one("[transport]\ncc = \"dcqcn\"\n[transport.hpcc]\neta = 0.9\n").unwrap_err();
        assert!(e.to_string().contains("cc = \"hpcc\""), "{e}");
        let verbs = "[workload]\nverbs = { write = 1 }\n[transport]\ncc = \"hpcc\"\n";
        let e = one(verbs).unwrap_err();
        assert!(e.to_string().contains("verbs workload"), "{e}");
        // Without HPCC, no INT bytes anywhere.

        assert_eq!(one("").unwrap().config.extra_header_bytes, 0);
    }

    #[test]
    fn swift_takes_its_keys_and_each_flow_its_hops() {
        let swift = |keys: &str| one(&format!("[transport]\ncc = \"swift\"\n{keys}"));
        let run = swift("").unwrap();
        let CcConfig::Swift(p) = run.config.transport.cc else {
            panic!("{:?}", run.config.transport.cc)
        };
        let rtt = longest_unloaded_rtt(&run.config.topology, (run.config.max_frame_bytes(), 64));
        assert_eq!((p.base_target, p.fs_range), (rtt, rtt * 5));
        assert_eq!((p.beta, p.max_mdf, p.ai), (0.8, 0.5, 1.0));
        assert_eq!(p.initial_window, None);
        assert_eq!(run.config.switch.ecn, None);
        assert_eq!(run.config.extra_header_bytes, 0, "no INT");
        // Each flow's transport knows its path's switches.
        let spec = run.config.flows[0];
        let CcConfig::Swift(f) = run.config.flow_transport(&spec).cc else {
            panic!()
        };
        let path = run.config.topology.path(spec.src, spec.dst);
        assert_eq!(f.hops, path.hops - 1);
        let keys = "[transport.swift]\nbase_target = \"20us\"\nhop_scaling = \"1us\"\n\
                    fs_range = \"0us\"\nmax_mdf = 0.25\ninitial_window = 4\n";
        let CcConfig::Swift(p) = swift(keys).unwrap().config.transport.cc else {
            panic!()
        };
        assert_eq!(
            (p.base_target, p.hop_scaling),
            (Duration::from_us(20), Duration::from_us(1))
        );
        assert_eq!((p.fs_range, p.max_mdf), (Duration::ZERO, 0.25));
        assert_eq!(p.initial_window, Some(4));
        for (keys, wrong) in [
            ("initial_window = 0", "transport.swift.initial_window"),
            ("fs_min_cwnd = 200.0", "transport.swift.fs_min_cwnd"),
            ("max_mdf = 1.0", "transport.swift.max_mdf"),
            ("base_target = 5", "transport.swift.base_target"),
        ] {
            let e = swift(&format!("[transport.swift]\n{keys}\n")).unwrap_err();
            assert!(e.to_string().contains(wrong), "{keys}: {e}");
        }
    }

    #[test]
    fn powertcp_takes_its_variant_first_then_its_keys() {
        use irn_core::cc::{PowertcpParams, PowertcpVariant};
        let powertcp = |keys: &str| one(&format!("[transport]\ncc = \"powertcp\"\n{keys}"));
        let run = powertcp("").unwrap();
        let CcConfig::Powertcp(p) = run.config.transport.cc else {
            panic!("{:?}", run.config.transport.cc)
        };
        let topo = &run.config.topology;
        let rtt = longest_unloaded_rtt(topo, (run.config.max_frame_bytes(), 64));
        let int = PowertcpParams {
            base_rtt: rtt,
            ..PowertcpParams::new(PowertcpVariant::Int)
        };
        assert_eq!(p, int);
        assert_eq!(run.config.extra_header_bytes, 2, "INT's header");
        assert_eq!(run.config.switch.ecn, None);
        // θ: its own defaults, no telemetry; any key overrides them.
        let keys = "[transport.powertcp]\nvariant = \"theta\"\ngamma = 0.5\nbeta = \"1KB\"\n\
                    base_rtt = \"9us\"\nfast_react = true\n";
        let run = powertcp(keys).unwrap();
        let CcConfig::Powertcp(p) = run.config.transport.cc else {
            panic!()
        };
        assert_eq!(
            (p.variant, p.eta, p.gamma),
            (PowertcpVariant::Theta, 1.05, 0.5)
        );
        assert_eq!(
            (p.beta_bytes, p.base_rtt),
            (Some(1000), Duration::from_us(9))
        );
        assert!(p.fast_react);
        assert_eq!(run.config.extra_header_bytes, 0, "θ carries no INT");
        for (keys, wrong) in [
            ("variant = \"delay\"", "transport.powertcp.variant"),
            ("eta = 2.5", "transport.powertcp.eta"),
            ("gamma = 0.0", "transport.powertcp.gamma"),
            ("base_rtt = 5", "transport.powertcp.base_rtt"),
            ("pint = true", "transport.powertcp.pint"),
        ] {
            let e = powertcp(&format!("[transport.powertcp]\n{keys}\n")).unwrap_err();
            assert!(e.to_string().contains(wrong), "{keys}: {e}");
        }
    }

    #[test]
    fn mp_rdma_takes_the_papers_defaults_and_checks_its_ranges() {
        use irn_core::transport::{LossRecovery, MpRdmaParams};
        let params = |keys: &str| {
            one(&format!("[transport]\nkind = \"mp-rdma\"\n{keys}"))
                .map(|r| (r.config.transport, r.config.switch.ecn))
                .map_err(|e| e.to_string())
        };
        let (t, ecn) = params("").unwrap();
        let LossRecovery::MpRdma(p) = t.recovery else {
            panic!("{t:?}")
        };
        assert_eq!(
            p,
            MpRdmaParams {
                seed: p.seed,
                ..MpRdmaParams::PAPER
            }
        );
        assert_eq!(
            (t.bdp_cap, t.tracking_window, t.cc),
            (None, 64, CcConfig::None)
        );
        assert!(ecn.is_some(), "MP-RDMA's window needs ECN marks");
        // DCQCN settings stay valid but unused, so a variant can sit beside DCQCN ones.
        let (t, _) = params("cc = \"dcqcn\"\n[transport.dcqcn]\npreset = \"mlx\"").unwrap();
        assert_eq!(t.cc, CcConfig::None);
        let (t, _) = params(
            "[transport.mp_rdma]\nbitmap = 128\ndelta = 100\nprobe = 0.5\nsynchronise = true",
        )
        .unwrap();
        let LossRecovery::MpRdma(p) = t.recovery else {
            panic!()
        };
        assert_eq!(
            (p.bitmap, p.delta, p.probe_ppm, p.synchronise),
            (128, 100, 500_000, true)
        );
        assert_eq!(t.tracking_window, 128);
        for (keys, key, allowed) in [
            (
                "bitmap = 100",
                "transport.mp_rdma.bitmap",
                "a multiple of 64",
            ),
            (
                "delta = 64",
                "transport.mp_rdma.delta",
                "between 1 and the bitmap less one (63)",
            ),
            (
                "probe = 2",
                "transport.mp_rdma.probe",
                "a fraction in [0, 1]",
            ),
            (
                "initial_window = 65",
                "transport.mp_rdma.initial_window",
                "between 1 and the bitmap (64)",
            ),
            (
                "max_burst = 0",
                "transport.mp_rdma.max_burst",
                "a whole number between 1 and 4096",
            ),
            (
                "windows = 3",
                "transport.mp_rdma.windows",
                "allowed: bitmap, delta",
            ),
        ] {
            let e = params(&format!("[transport.mp_rdma]\n{keys}")).unwrap_err();
            assert!(e.contains(key) && e.contains(allowed), "{keys}: {e}");
        }
        let e = one("[transport.mp_rdma]\nbitmap = 64")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("transport.mp_rdma") && e.contains("kind = \"mp-rdma\""),
            "{e}"
        );
        let e = params("bdp_cap = 100").unwrap_err();
        assert!(
            e.contains("transport.bdp_cap") && e.contains("bitmap"),
            "{e}"
        );
        let e = params("[ordering]\nkind = \"ideal\"").unwrap_err();
        assert!(e.contains("ordering.kind") && e.contains("mp-rdma"), "{e}");
    }

    #[test]
    fn timeout_resend_is_a_selective_repeat_choice() {
        let resend = |keys: &str| {
            one(&format!("[transport]\n{keys}"))
                .map(|r| r.config.transport.timeout_resend)
                .map_err(|e| e.to_string())
        };
        assert_eq!(resend(""), Ok(Resend::Holes));
        assert_eq!(
            resend("timeout_resend = \"unsacked\""),
            Ok(Resend::Unsacked)
        );
        assert_eq!(
            resend("kind = \"irn-without-sack\"\ntimeout_resend = \"unsacked\""),
            Ok(Resend::Unsacked)
        );
        let e = resend("timeout_resend = \"all\"").unwrap_err();
        assert!(
            e.contains("transport.timeout_resend") && e.contains("\"holes\" or \"unsacked\""),
            "{e}"
        );
        inert_with_other_kinds("timeout_resend");
    }

    /// `key = "unsacked"` changes nothing where go-back-N, TCP or MP-RDMA recover, so it is
    /// refused there naming the kind; `"holes"` (the default) is accepted with every kind.
    fn inert_with_other_kinds(key: &str) {
        for (kind, holds) in [
            ("irn", true),
            ("irn-without-bdp-fc", true),
            ("irn-without-sack", true),
            ("roce", false),
            ("irn-go-back-n", false),
            ("tcp", false),
            ("mp-rdma", false),
        ] {
            let run = |v: &str| one(&format!("[transport]\nkind = \"{kind}\"\n{key} = \"{v}\""));
            assert!(run("holes").is_ok(), "{kind}");
            match run("unsacked") {
                Ok(_) => assert!(holds, "{kind}: {key} accepted"),
                Err(e) => {
                    let e = e.to_string();
                    assert!(!holds, "{kind}: {e}");
                    assert!(
                        e.contains(&format!("transport.{key} = \"unsacked\""))
                            && e.contains("a selective-repeat option")
                            && e.contains(&format!("kind = \"{kind}\" recovers otherwise")),
                        "{e}"
                    );
                }
            }
        }
    }

    #[test]
    fn nack_resend_is_a_selective_repeat_choice() {
        let resend = |keys: &str| {
            one(&format!("[transport]\n{keys}"))
                .map(|r| r.config.transport.nack_resend)
                .map_err(|e| e.to_string())
        };
        assert_eq!(resend(""), Ok(Resend::Holes));
        assert_eq!(resend("nack_resend = \"holes\""), Ok(Resend::Holes));
        assert_eq!(resend("nack_resend = \"unsacked\""), Ok(Resend::Unsacked));
        let e = resend("nack_resend = \"all\"").unwrap_err();
        assert!(
            e.contains("transport.nack_resend")
                && e.contains("\"holes\"")
                && e.contains("\"unsacked\""),
            "{e}"
        );
        inert_with_other_kinds("nack_resend");
    }

    #[test]
    fn timely_update_granularity() {
        use irn_core::cc::{TimelyParams, TimelyUpdate};
        let update = |keys: &str| {
            let run = one(&format!("[transport]\ncc = \"timely\"\n{keys}")).unwrap();
            let CcConfig::Timely(p) = run.config.transport.cc else {
                panic!()
            };
            p.update
        };
        assert_eq!(TimelyParams::default().update, TimelyUpdate::PerAck);
        assert_eq!(update(""), TimelyUpdate::PerAck);
        let table = "[transport.timely]\n";
        assert_eq!(
            update(&format!("{table}update = \"per-segment\"")),
            TimelyUpdate::PerSegment { bytes: 16_384 }
        );
        assert_eq!(
            update(&format!(
                "{table}update = \"per-segment\"\nsegment = \"64KB\""
            )),
            TimelyUpdate::PerSegment { bytes: 64_000 }
        );
        assert_eq!(
            update(&format!("{table}update = \"per-rtt\"")),
            TimelyUpdate::PerRtt
        );
        assert_eq!(
            update(&format!("{table}update = \"per-ack\"")),
            TimelyUpdate::PerAck
        );
    }

    #[test]
    fn rto_high_auto_is_derived_from_the_network() {
        use irn_core::transport::RtoPolicy;
        let us = Duration::from_us;
        let rto = |text: &str| one(text).unwrap().config.transport.rto;
        let dual = |high| RtoPolicy::Dual {
            low: us(100),
            high,
            n: 3,
        };
        // The default case: 24 us of round trip + 6 × 240 KB at 40 Gb/s (288 us).
        assert_eq!(rto(""), dual(us(312)));
        assert_eq!(
            rto("[transport]\nkind = \"roce\"\n"),
            RtoPolicy::Fixed(us(312))
        );
        assert_eq!(rto("[switch]\nbuffer = \"480KB\"\n"), dual(us(600)));
        assert_eq!(rto("[topology]\nlink_rate = \"10Gbps\"\n"), dual(us(1176)));
        // Explicit durations stay.
        assert_eq!(rto("[transport]\nrto_high = \"320us\"\n"), dual(us(320)));
        // 60 KB: 24 + 72 = 96 us, under RTO_low: raised to it, with a warning.
        let run = one("[switch]\nbuffer = \"60KB\"\n").unwrap();
        assert_eq!(run.config.transport.rto, dual(us(100)));
        assert_eq!(
            run.warnings,
            [
                "transport.rto_high = \"auto\" is 96us (the longest path's 24us round trip + 72us \
              to drain a full buffer), less than rto_low = 100us: RTO_high is raised to 100us"
            ]
        );
        // A drain time that is not a whole number of nanoseconds, to a tenth of a microsecond
        // (not 72001200ps).
        let run = one("[switch]\nbuffer = \"60001B\"\n").unwrap();
        assert_eq!(
            run.warnings,
            [
                "transport.rto_high = \"auto\" is 96.0us (the longest path's 24us round trip + \
                 72.0us to drain a full buffer), less than rto_low = 100us: RTO_high is raised \
                 to 100us"
            ]
        );
        // No timers, no warning.
        let run = one("[transport]\nkind = \"roce\"\n[switch]\nbuffer = \"60KB\"\npfc = true\n");
        assert_eq!(run.unwrap().warnings, Vec::<String>::new());
    }

    /// BDP-FC's computed cap covers the propagation round trip (IRN §3.2) unless told to cover
    /// an idle one; on an AI fabric's short, fast links with 4 KB frames the first holds a lone
    /// flow to 85 % of line rate, which is warned of until the round trip is chosen.
    #[test]
    fn bdp_cap_covers_a_round_trip_of_choice() {
        let fabric = "[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 2\n\
                      hosts_per_leaf = 2\nlink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n\
                      [transport]\nmtu = 4096\nrto_high = \"320us\"\n";
        let run = |keys: &str| one(&format!("{fabric}{keys}"));
        let ok = |keys: &str| {
            let r = run(keys).unwrap();
            (r.config.transport.bdp_cap, r.warnings)
        };
        let (cap, warnings) = ok("");
        assert_eq!(cap, Some(24));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with(
                "transport.bdp_cap is 24 packets, the longest path's propagation round trip \
                 (8us) at 100Gbps"
            ) && warnings[0]
                .contains("9.4us (28.1 full frames), so a flow alone reaches at most 85 %"),
            "{}",
            warnings[0]
        );
        assert_eq!(ok("bdp_cap_round_trip = \"idle\"\n"), (Some(29), vec![]));
        assert_eq!(
            ok("bdp_cap_round_trip = \"propagation\"\n"),
            (Some(24), vec![])
        );
        // The paper's default case fills 94 % of its round trip: 110, and no warning.
        let default = one("").unwrap();
        assert_eq!(default.config.transport.bdp_cap, Some(110));
        assert!(default.warnings.is_empty(), "{:?}", default.warnings);
        for (keys, want) in [
            (
                "bdp_cap_round_trip = \"idl\"\n",
                "transport.bdp_cap_round_trip = \"idl\": \"propagation\" (IRN §3.2",
            ),
            (
                "bdp_cap_round_trip = \"idle\"\nbdp_cap = 30\n",
                "transport.bdp_cap_round_trip = \"idle\": transport.bdp_cap sets the cap itself",
            ),
            (
                "bdp_cap_round_trip = \"idle\"\nkind = \"roce\"\n",
                "transport.bdp_cap_round_trip = \"idle\": transport.kind = \"roce\" has no BDP-FC",
            ),
        ] {
            let err = run(keys).unwrap_err().to_string();
            assert!(err.contains(want), "{keys}: {err}");
        }
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
    fn dcqcn_preset_then_its_overrides() {
        use irn_core::cc::{AlphaUpdate, CnpCarrier, DcqcnParams, IncreaseStages, RateDecrease};
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
        let p = dcqcn(
            "additive_increase = \"20Mbps\"\npreset = \"mlx\"\ncnp_on_nack = false\n\
             cnp_carrier = \"ack\"\n",
        );
        assert_eq!(
            p,
            DcqcnParams {
                additive_increase: Bandwidth::from_bps(20_000_000),
                cnp_on_nack: false,
                cnp_carrier: CnpCarrier::Ack,
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
    fn framing_sets_every_frame_a_run_sizes() {
        let run = one("[transport]\ndata_framing = \"48B\"\nreply_frame = \"60B\"\n").unwrap();
        let c = &run.config;
        assert_eq!((c.framing.data, c.framing.reply), (48, 60));
        assert_eq!(c.max_frame_bytes(), u64::from(c.transport.mtu) + 48);
        assert_eq!(one("").unwrap().config.framing, Framing::default());
        for (keys, wrong) in [
            (
                "data_framing = \"0B\"",
                "transport.data_framing = \"0B\": between 1B and 1024B",
            ),
            (
                "reply_frame = \"2KB\"",
                "transport.reply_frame = \"2KB\": between 1B and 1024B",
            ),
            ("reply_frame = \"sixty\"", "transport.reply_frame"),
            (
                "data_framing = \"48B\"\n[workload]\nverbs = { write = 1 }",
                "transport.data_framing = \"48B\": not with a verbs workload",
            ),
        ] {
            let e = one(&format!("[transport]\n{keys}\n"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(wrong), "{keys}: {e}");
        }
    }

    #[test]
    fn cnps_on_replies_need_the_rdma_receivers_own_acks() {
        let ack = "[transport.dcqcn]\npreset = \"mlx\"\ncnp_carrier = \"ack\"\n";
        let with = |extra: &str| one(&format!("[transport]\ncc = \"dcqcn\"\n{extra}\n{ack}"));
        assert!(with("").is_ok());
        for (extra, wants) in [
            ("[ordering]\nkind = \"ideal\"", "an ordering layer"),
            ("[workload]\nverbs = { write = 1 }", "a verbs workload"),
        ] {
            let e = with(extra).unwrap_err().to_string();
            assert!(
                e.contains("cnp_carrier") && e.contains(wants),
                "{extra}: {e}"
            );
        }
    }

    /// Every `[transport.<cc>]` parameter has its physical range (the default link is 40 Gb/s,
    /// whose minimum frame takes 16.8 ns); NaN and infinities are refused like any number out
    /// of it.
    #[test]
    fn congestion_control_parameters_have_physical_ranges() {
        let floor = "at least 16800ps (16.8ns) (one minimum frame, 64 B + 20 B of preamble and \
                     gap, at 40Gbps, the hosts' line rate";
        let line = "between 1bps and 40Gbps (the hosts' line rate: no sender goes faster)";
        let cases: &[(&str, &str, &str)] = &[
            (
                "dcqcn",
                "g = 1e308",
                "transport.dcqcn.g = 1e308: a gain in (0, 1]",
            ),
            ("dcqcn", "g = 0", "transport.dcqcn.g = 0: a gain in (0, 1]"),
            (
                "dcqcn",
                "g = nan",
                "transport.dcqcn.g = nan: a gain in (0, 1]",
            ),
            ("dcqcn", "alpha_update_period = \"0s\"", floor),
            ("dcqcn", "alpha_update_period = \"1ps\"", floor),
            ("dcqcn", "rate_increase_period = \"16799ps\"", floor),
            ("dcqcn", "rate_decrease_period = \"0s\"", floor),
            ("dcqcn", "min_rate = \"41Gbps\"", line),
            ("dcqcn", "additive_increase = \"1Tbps\"", line),
            ("dcqcn", "hyper_increase = \"999999Tbps\"", line),
            (
                "dcqcn",
                "fast_recovery_steps = -1",
                "a whole number between 1 and 4294967295",
            ),
            (
                "timely",
                "ewma_alpha = inf",
                "transport.timely.ewma_alpha = inf: a gain in (0, 1]",
            ),
            (
                "timely",
                "beta = 1.5",
                "transport.timely.beta = 1.5: a gain in (0, 1]",
            ),
            ("timely", "min_rtt = \"0s\"", floor),
            ("timely", "t_high = \"0s\"", floor),
            (
                "timely",
                "t_low = \"0s\"\nt_high = \"20ns\"\nmin_rtt = \"20ns\"",
                "",
            ),
            (
                "timely",
                "t_low = \"50us\"\nt_high = \"50us\"",
                "transport.timely.t_high = \"50us\": above t_low (50us): the rate grows below \
                 t_low and is cut above t_high",
            ),
            (
                "timely",
                "t_low = \"600us\"",
                "transport.timely.t_low = \"600us\": below t_high (500us)",
            ),
            ("timely", "additive_step = \"50Gbps\"", line),
            (
                "timely",
                "hai_multiplier = 4001",
                "transport.timely.hai_multiplier = 4001: between 1 and 4000: one hyper-active step",
            ),
            (
                "dctcp",
                "initial_alpha = 1.5",
                "transport.dctcp.initial_alpha = 1.5: a fraction in [0, 1]",
            ),
            ("dctcp", "min_window = 4194305", "between 1 and 4194304"),
            (
                "dctcp",
                "initial_window = 0",
                "transport.dctcp.initial_window = 0: a whole number between 1 and 4194304",
            ),
            (
                "aimd",
                "decrease_factor = 1e308",
                "transport.aimd.decrease_factor = 1e308: a factor below 1 in (0, 1)",
            ),
            ("aimd", "decrease_factor = 1", "a factor below 1 in (0, 1)"),
            (
                "aimd",
                "additive_increase = -inf",
                "transport.aimd.additive_increase = -inf: packets per window in (0, 4194304]",
            ),
        ];
        for &(cc, keys, want) in cases {
            let text = format!("[transport]\ncc = \"{cc}\"\n[transport.{cc}]\n{keys}\n");
            match one(&text) {
                Ok(_) => assert!(want.is_empty(), "{keys}: accepted"),
                Err(e) => {
                    let e = e.to_string();
                    assert!(!want.is_empty() && e.contains(want), "{keys}: {e}");
                }
            }
        }
    }

    #[test]
    fn congestion_control_parameters_are_checked() {
        let cases = [
            (
                "[transport]\ncc = \"dcqcn\"\n[transport.dcqcn]\nalpha = 1\n",
                "transport.dcqcn.alpha is set: unknown parameter; allowed: cnp_interval, g,",
            ),
            (
                "[transport]\ncc = \"timely\"\n[transport.dcqcn]\ng = 0.5\n",
                "transport.dcqcn is set: applies only with transport.cc = \"dcqcn\"",
            ),
            (
                "[transport]\ncc = \"timely\"\n[transport.timely]\nt_low = \"fast\"\n",
                "transport.timely.t_low = \"fast\"",
            ),
            (
                "[transport]\ncc = \"timely\"\n[transport.timely]\nupdate = \"per-packet\"\n",
                "transport.timely.update = \"per-packet\": \"per-segment\" or \"per-rtt\" or \"per-ack\"",
            ),
            (
                "[transport]\ncc = \"timely\"\n[transport.timely]\nupdate = \"per-segment\"\nsegment = \"0B\"\n",
                "transport.timely.segment = 0B: a size above 0",
            ),
            (
                "[transport]\ncc = \"timely\"\n[transport.timely]\nupdate = \"per-rtt\"\nsegment = \"64KB\"\n",
                "transport.timely.segment is set: applies only with transport.timely.update = \"per-segment\"",
            ),
            (
                "[transport]\ncc = \"aimd\"\n[transport.aimd]\nmin_window = 0\n",
                "transport.aimd.min_window = 0: a whole number between 1 and 4194304",
            ),
            (
                "[transport]\ncc = \"dctcp\"\n[transport.dctcp]\ng = -1\n",
                "transport.dctcp.g = -1: a gain in (0, 1]",
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
                "[transport]\ncc = \"dcqcn\"\n[transport.dcqcn]\ncnp_carrier = \"becn\"\n",
                "transport.dcqcn.cnp_carrier = \"becn\": \"frame\" or \"ack\"",
            ),
            (
                "[switch]\nalpha = 0.5\n",
                "switch.alpha is set: does not apply to switch.model = \"input-queued\"",
            ),
            (
                "[switch]\necn = \"off\"\necn_kmin = \"5KB\"\n",
                "switch.ecn = \"off\": marking is off",
            ),
            (
                "[switch]\necn = \"dcqcn\"\necn_kmax = \"1KB\"\n",
                "switch.ecn_kmax = \"1KB\": at least ecn_kmin (5000 B, the default); kmax is 1000 B",
            ),
        ];
        for (text, want) in cases {
            let err = one(text).unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
        }
        // An emptied table sets nothing, so a file's controller table can be taken away from
        // the command line with another controller (`--set 'transport.dcqcn={}'`).
        let emptied = "[transport]\ncc = \"timely\"\n[transport.dcqcn]\n";
        assert!(one(emptied).is_ok());
    }
}
