//! What distinguishes one transport from another: loss recovery, BDP-FC and timeouts.

use super::mp_rdma::MpRdmaParams;
use super::restart::SlowRestart;
use crate::cc::{CcConfig, CnpCarrier};
use crate::packet::DATA_FRAMING_BYTES;
use crate::time::{Bandwidth, Duration};

/// How lost packets are detected and resent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LossRecovery {
    /// RoCE (§2.1): the receiver drops out-of-order packets and NACKs once per loss episode; the
    /// sender resends everything from the NACKed PSN on.
    GoBackN,
    /// IRN (§3.1): the receiver keeps out-of-order packets and NACKs each one with a one-packet
    /// SACK; the sender resends only what is lost.
    ///
    /// With `sack_bitmap: false` the sender keeps no SACK bitmap (§4.3 "do we need SACKs?"): it
    /// resends the cumulatively acknowledged PSN each time a NACK names a new one, so several
    /// losses in one window take one round trip each.
    SelectiveRepeat { sack_bitmap: bool },
    /// TCP's congestion window and SACK-based recovery (RFC 5681, 6675, 6298), as iWARP NICs
    /// run it (IRN §4.6): served by [`TcpSender`](super::TcpSender); the receiver keeps
    /// out-of-order packets and acknowledges every packet, as for selective repeat.
    Tcp,
    /// MP-RDMA (Lu et al., NSDI'18): one window over many virtual paths, ECN-clocked per ACK,
    /// with a small reordering bitmap at the receiver; served by
    /// [`MpRdmaSender`](super::MpRdmaSender), whose receiver is the selective-repeat one with
    /// the bitmap as its window.
    MpRdma(MpRdmaParams),
}

/// When the sender's retransmission timer fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RtoPolicy {
    /// No timeout: RoCE with PFC, where the network is lossless (§4.1).
    Disabled,
    /// One fixed timeout: RoCE without PFC uses RTO_high (§4.1).
    Fixed(Duration),
    /// IRN (§3.1, §6.2): the timer runs with `low` and, on expiry, fires only if at most `n`
    /// packets are in flight; otherwise it is extended to `high` (measured from when it was armed).
    Dual {
        low: Duration,
        high: Duration,
        n: u32,
    },
}

impl core::fmt::Display for RtoPolicy {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            RtoPolicy::Disabled => write!(f, "no timeout"),
            RtoPolicy::Fixed(rto) => write!(f, "RTO {}", Readable(*rto)),
            RtoPolicy::Dual { low, high, n } => write!(
                f,
                "RTO_low {} (≤ {n} in flight), RTO_high {}",
                Readable(*low),
                Readable(*high)
            ),
        }
    }
}

/// A timer for people: exact when it is a whole number of microseconds, else to 0.1 µs (a
/// derived RTO_high of 561055040 ps reads 561.1us).
struct Readable(Duration);

impl core::fmt::Display for Readable {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.0.as_ps().is_multiple_of(1_000_000) {
            write!(f, "{}", self.0)
        } else {
            write!(f, "{:.1}us", self.0.as_us_f64())
        }
    }
}

/// What consecutive retransmission timeouts do to the next one.
///
/// A go-back-N sender without a window or congestion control resends its whole remaining
/// message at line rate after every timeout. On a deterministic network two such senders into one
/// congested port can lock into a cycle with the timeout's period: each one's first packet (the
/// one the receiver waits for) arrives when the other's burst keeps the queue at its threshold and
/// is dropped, every time, and a go-back-N receiver NACKs only once per loss episode, so nothing
/// but the next timeout ever resends it (a 2:1 dumbbell incast made no progress in
/// 1 s). Backing off breaks any such cycle: a sender that makes no progress sends at most its
/// remaining packets once per timeout, so as its timeout doubles its share of every port's time
/// shrinks to nothing; once the backed-off timeouts of the stuck senders outlast their bursts,
/// the first of them to fire resends into a quiet port, where a packet is admitted, and its
/// cumulative ACK moves. Real NICs do this: ConnectX's adaptive retransmission doubles the
/// current timeout on consecutive timeouts and lowers it again on forward progress, and TCP
/// backs off (RFC 6298 §5.5; [`TcpSender`](super::TcpSender)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum RtoBackoff {
    /// Every timeout waits the configured RTO, as the IRN paper's model does.
    Constant,
    /// Each timeout doubles the wait for the next one (RTO_low and its extension to RTO_high
    /// alike), up to [`TransportConfig::MAX_RTO_BACKOFF`] times the configured RTO, until the
    /// cumulative ACK moves, which restores the configured RTO. Outputs differ from
    /// [`Constant`](Self::Constant) only where a queue pair times out twice without progress in
    /// between.
    #[default]
    Exponential,
}

/// What selective repeat resends when it starts over: after a retransmission timeout
/// (`timeout_resend`) and when a NACK starts loss recovery (`nack_resend`).
///
/// IRN §3.1 gives the recovery rule (the cumulative-ACK packet first, then a packet counts as
/// lost only once a higher one has been SACKed) but not what a timeout resends. With the rule
/// alone, a tail of consecutive losses with nothing SACKed above it comes back one packet per
/// timeout: each timeout resends the head, its ACK shows nothing above, and the next head
/// waits for the next timeout (an incast of Fig. 9 left one flow 6.5 ms, 23 timeouts of
/// RTO_high, behind the others this way). On a NACK, ConWeave's ns-3 IRN
/// (`RdmaHw::ReceiveAck` → `RecoverQueue`) rewinds to the cumulative ACK and resends every
/// packet not SACKed, those still in flight above the highest SACK included; where losses are
/// rare and reordering common (per-packet load balancing) that resends much more: on
/// ConWeave's leaf-spine under DRILL, about 4 times as many packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Resend {
    /// The recovery rule: the cumulative-ACK packet, then every unSACKed packet below the
    /// highest SACK; packets above it are taken to be still in flight.
    #[default]
    Holes,
    /// Every packet not SACKed, up to the highest sent: what TCP does after a timeout (RFC 6675
    /// §5.1: what was in flight is gone), and what ConWeave's ns-3 does on a NACK.
    Unsacked,
}

/// Whether the receiver acknowledges what arrives in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Acks {
    /// An ACK for every in-order packet (and every duplicate), as IRN and RoCE run by default.
    #[default]
    EveryPacket,
    /// No ACKs at all; NACKs still go. The IRN paper's RoCE baseline with PFC (§5.2) ran so:
    /// over a lossless network nothing waits for an ACK. Only for go-back-N without timeouts,
    /// window, or an ACK-clocked controller ([`TransportConfig::validate`]); the sender then never
    /// completes a message, and the receiver's completion is the message's end.
    None,
}

/// A transport's behaviour, shared by the sender and the receiver of a queue pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransportConfig {
    pub recovery: LossRecovery,
    /// BDP-FC (§3.2): at most this many packets between the cumulative ACK and the next new PSN.
    /// `None` disables BDP-FC.
    pub bdp_cap: Option<u32>,
    /// How many packets past the cumulative ACK the selective-repeat bitmaps can track when
    /// BDP-FC is off. With BDP-FC on, the bitmaps are sized at the cap and this is unused.
    /// A sender never runs further ahead than its bitmap can track, so without BDP-FC this is
    /// the only bound on packets in flight; the default is far above what any path buffers.
    pub tracking_window: u32,
    pub rto: RtoPolicy,
    /// Whether consecutive timeouts without progress wait longer each time.
    pub rto_backoff: RtoBackoff,
    /// Payload bytes per packet (the QP's path MTU); every packet but a message's last is full.
    pub mtu: u32,
    /// Congestion control, independent of loss recovery (IRN §3); the receiver side of DCQCN
    /// (CNP generation) runs when this is DCQCN.
    pub cc: CcConfig,
    /// The NIC port's rate: where rate-based congestion control starts, and its ceiling.
    pub line_rate: Bandwidth,
    /// Bytes a data packet adds to its payload on the wire, which a rate-paced sender spaces
    /// its packets by: [`DATA_FRAMING_BYTES`] (RoCEv2 over Ethernet) unless a simulator counts
    /// frames otherwise.
    pub data_framing: u32,
    /// IRN §6.3's worst case: a packet detected as lost may be resent only this long after the
    /// detection (the time to fetch it over PCIe again; the paper uses 2 µs). Zero by default.
    pub retransmit_delay: Duration,
    /// Eunomia's rule for one-sided WRITEs (§3.5.2, appendix A.1): a message's last packet (the
    /// one whose arrival tells the remote application the data is there) is not sent until the
    /// cumulative ACK reaches it, so a receiver that places packets out of order never exposes
    /// it before the data in front of it. Costs a round trip per message; off by default.
    pub hold_last_packet: bool,
    /// Go-back-N's transmit window (ConnectX's `roce_tx_window_en`): at most this many packets
    /// beyond the cumulative ACK. `None`: no window (the IRN paper's RoCE, §2.1). With BDP-FC
    /// on too, the smaller limit holds.
    pub tx_window: Option<u32>,
    /// Go-back-N's slow restart (ConnectX's `roce_slow_restart_en`): each loss episode (a
    /// NACK that rewinds, a timeout) cuts the window, which regrows as ACKs come. It needs a
    /// window to cut: the transmit window or the BDP cap, whichever is smaller, is the full
    /// window it regrows to. `None`: off.
    pub slow_restart: Option<SlowRestart>,
    /// A go-back-N receiver's NACK timer (ns-3's `NACKGenerationInterval` in HPCC's and
    /// ConWeave's `rdma-hw.cc`): an out-of-order packet is NACKed when it starts a loss
    /// episode, or when this long has passed since the episode's last NACK, so a resent packet
    /// lost again is asked for again. `None`: one NACK per episode (§2.1).
    pub nack_interval: Option<Duration>,
    /// Whether the receiver sends ACKs.
    pub acks: Acks,
    /// What selective repeat resends after a timeout. Go-back-N and TCP resend every
    /// unacknowledged (unSACKed) packet whatever this says.
    pub timeout_resend: Resend,
    /// What selective repeat resends when a NACK starts loss recovery. Go-back-N rewinds and
    /// TCP follows RFC 6675 whatever this says.
    pub nack_resend: Resend,
}

/// IRN §4.1 default values.
impl TransportConfig {
    /// RoCE's 1 KB MTU (§4.1).
    pub const DEFAULT_MTU: u32 = 1024;
    /// BDP of the default fat-tree's longest path over the wire size of a full packet:
    /// 120 000 B / 1086 B ≈ 110 (§4.1).
    pub const DEFAULT_BDP_CAP: u32 = 110;
    pub const DEFAULT_RTO_LOW: Duration = Duration::from_us(100);
    pub const DEFAULT_RTO_HIGH: Duration = Duration::from_us(320);
    pub const DEFAULT_RTO_LOW_N: u32 = 3;
    /// The IRN default case's 40 Gb/s links (§4.1).
    pub const DEFAULT_LINE_RATE: Bandwidth = Bandwidth::from_gbps(40);
    /// Most a backed-off timeout exceeds the configured one: 1024× (10 doublings), so RTO_high's
    /// 320 µs backs off to 328 ms at most, longer than a go-back-N sender takes to resend
    /// 400 MB at 10 Gb/s; the backoff's progress argument ([`RtoBackoff`]) holds for the bursts
    /// below that.
    pub const MAX_RTO_BACKOFF: u32 = 1024;
    /// Tracking window without BDP-FC: 16384 packets, ~17 MB at a 1 KB MTU.
    pub const DEFAULT_TRACKING_WINDOW: u32 = 16_384;

    fn dual_rto() -> RtoPolicy {
        RtoPolicy::Dual {
            low: Self::DEFAULT_RTO_LOW,
            high: Self::DEFAULT_RTO_HIGH,
            n: Self::DEFAULT_RTO_LOW_N,
        }
    }

    /// RoCE go-back-N. With PFC (`pfc = true`) timeouts are off; without, it uses RTO_high.
    pub fn roce(pfc: bool) -> Self {
        TransportConfig {
            recovery: LossRecovery::GoBackN,
            bdp_cap: None,
            tracking_window: Self::DEFAULT_TRACKING_WINDOW,
            rto: if pfc {
                RtoPolicy::Disabled
            } else {
                RtoPolicy::Fixed(Self::DEFAULT_RTO_HIGH)
            },
            rto_backoff: RtoBackoff::Exponential,
            mtu: Self::DEFAULT_MTU,
            cc: CcConfig::None,
            line_rate: Self::DEFAULT_LINE_RATE,
            data_framing: DATA_FRAMING_BYTES,
            retransmit_delay: Duration::ZERO,
            hold_last_packet: false,
            tx_window: None,
            slow_restart: None,
            nack_interval: None,
            acks: Acks::EveryPacket,
            timeout_resend: Resend::Holes,
            nack_resend: Resend::Holes,
        }
    }

    /// IRN: selective repeat with a SACK bitmap, BDP-FC, RTO_low/RTO_high.
    pub fn irn() -> Self {
        TransportConfig {
            recovery: LossRecovery::SelectiveRepeat { sack_bitmap: true },
            bdp_cap: Some(Self::DEFAULT_BDP_CAP),
            tracking_window: Self::DEFAULT_TRACKING_WINDOW,
            rto: Self::dual_rto(),
            rto_backoff: RtoBackoff::Exponential,
            mtu: Self::DEFAULT_MTU,
            cc: CcConfig::None,
            line_rate: Self::DEFAULT_LINE_RATE,
            data_framing: DATA_FRAMING_BYTES,
            retransmit_delay: Duration::ZERO,
            hold_last_packet: false,
            tx_window: None,
            slow_restart: None,
            nack_interval: None,
            acks: Acks::EveryPacket,
            timeout_resend: Resend::Holes,
            nack_resend: Resend::Holes,
        }
    }

    /// IRN with go-back-N loss recovery instead of selective repeat (§4.3, Fig. 7).
    pub fn irn_go_back_n() -> Self {
        TransportConfig {
            recovery: LossRecovery::GoBackN,
            ..Self::irn()
        }
    }

    /// IRN without BDP-FC (§4.3, Fig. 7).
    pub fn irn_without_bdp_fc() -> Self {
        TransportConfig {
            bdp_cap: None,
            ..Self::irn()
        }
    }

    /// TCP as iWARP NICs run it (§4.6): slow start, congestion avoidance, SACK recovery, RTO
    /// from RTT estimates (minimum RTO_low), no BDP-FC.
    pub fn tcp() -> Self {
        TransportConfig {
            recovery: LossRecovery::Tcp,
            bdp_cap: None,
            ..Self::irn()
        }
    }

    /// MP-RDMA with `params`: its bitmap is the receiver's window, no BDP-FC (the bitmap bounds
    /// what is in flight), IRN's timers.
    pub fn mp_rdma(params: MpRdmaParams) -> Self {
        TransportConfig {
            recovery: LossRecovery::MpRdma(params),
            bdp_cap: None,
            tracking_window: params.bitmap,
            ..Self::irn()
        }
    }

    /// IRN selective retransmission without a SACK bitmap at the sender (§4.3).
    pub fn irn_without_sack() -> Self {
        TransportConfig {
            recovery: LossRecovery::SelectiveRepeat { sack_bitmap: false },
            ..Self::irn()
        }
    }

    /// Largest BDP cap or tracking window: half the PSN space would make serial comparison of
    /// PSNs ambiguous.
    pub const MAX_WINDOW: u32 = 1 << 22;
    /// Largest MTU RoCE allows.
    pub const MAX_MTU: u32 = 4096;

    /// Checks the values make sense together; every queue pair built from an unchecked config
    /// calls this first.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.mtu == 0 || self.mtu > Self::MAX_MTU {
            return Err(ConfigError::Mtu(self.mtu));
        }
        if let Some(cap) = self.bdp_cap {
            if cap == 0 || cap > Self::MAX_WINDOW {
                return Err(ConfigError::BdpCap(cap));
            }
        }
        if self.tracking_window == 0 || self.tracking_window > Self::MAX_WINDOW {
            return Err(ConfigError::TrackingWindow(self.tracking_window));
        }
        match self.rto {
            RtoPolicy::Disabled => {}
            RtoPolicy::Fixed(rto) => {
                if rto == Duration::ZERO {
                    return Err(ConfigError::ZeroRto);
                }
            }
            RtoPolicy::Dual { low, high, .. } => {
                if low == Duration::ZERO {
                    return Err(ConfigError::ZeroRto);
                }
                if high < low {
                    return Err(ConfigError::RtoOrder { low, high });
                }
            }
        }
        if self.hold_last_packet && self.recovery == LossRecovery::Tcp {
            return Err(ConfigError::HoldLastWithTcp);
        }
        if let LossRecovery::MpRdma(p) = self.recovery {
            p.validate()?;
            if self.bdp_cap.is_some() || self.tracking_window != p.bitmap {
                return Err(ConfigError::MpRdmaWindow(p.bitmap));
            }
        }
        self.validate_cnp_carrier()?;
        self.validate_go_back_n()
    }

    /// DCQCN's CNPs on replies need a reply for every packet, from the RDMA receiver to the
    /// RDMA sender (TCP and MP-RDMA read the ECN-Echo as the packet's own mark).
    fn validate_cnp_carrier(&self) -> Result<(), ConfigError> {
        let CcConfig::Dcqcn(p) = self.cc else {
            return Ok(());
        };
        if p.cnp_carrier != CnpCarrier::Ack {
            return Ok(());
        }
        if self.acks == Acks::None {
            return Err(ConfigError::CnpOnReplies("acks = none"));
        }
        match self.recovery {
            LossRecovery::Tcp => Err(ConfigError::CnpOnReplies("TCP recovery")),
            LossRecovery::MpRdma(_) => Err(ConfigError::CnpOnReplies("MP-RDMA")),
            LossRecovery::GoBackN | LossRecovery::SelectiveRepeat { .. } => Ok(()),
        }
    }

    /// The checks of go-back-N's options: the transmit window, slow restart, the NACK timer
    /// and the receiver's ACKs.
    fn validate_go_back_n(&self) -> Result<(), ConfigError> {
        let go_back_n = self.recovery == LossRecovery::GoBackN;
        for (set, option) in [
            (self.tx_window.is_some(), "tx_window"),
            (self.slow_restart.is_some(), "slow_restart"),
            (self.nack_interval.is_some(), "nack_interval"),
            (self.acks == Acks::None, "acks = none"),
        ] {
            if set && !go_back_n {
                return Err(ConfigError::GoBackNOnly(option));
            }
        }
        if let Some(w) = self.tx_window {
            if w == 0 || w > Self::MAX_WINDOW {
                return Err(ConfigError::TxWindow(w));
            }
        }
        if let Some(r) = self.slow_restart {
            if !(r.factor > 0.0 && r.factor < 1.0) {
                return Err(ConfigError::SlowRestartFactor(r.factor.to_string()));
            }
            if self.go_back_n_window().is_none() {
                return Err(ConfigError::SlowRestartWithoutWindow);
            }
        }
        if self.nack_interval == Some(Duration::ZERO) {
            return Err(ConfigError::ZeroNackInterval);
        }
        if self.acks == Acks::None {
            let waits = if self.rto != RtoPolicy::Disabled {
                Some("timeouts")
            } else if self.go_back_n_window().is_some() {
                Some("a transmit window or BDP-FC")
            } else if self.hold_last_packet {
                Some("hold_last_packet")
            } else if matches!(
                self.cc,
                CcConfig::Timely(_)
                    | CcConfig::Dctcp(_)
                    | CcConfig::Aimd(_)
                    | CcConfig::Hpcc(_)
                    | CcConfig::Swift(_)
                    | CcConfig::Powertcp(_)
            ) {
                Some("ACK-clocked congestion control")
            } else {
                None
            };
            if let Some(what) = waits {
                return Err(ConfigError::NoAcks(what));
            }
        }
        Ok(())
    }

    /// Go-back-N's limit on packets beyond the cumulative ACK: the smaller of the transmit
    /// window and the BDP cap, if either is set.
    pub fn go_back_n_window(&self) -> Option<u32> {
        match (self.tx_window, self.bdp_cap) {
            (Some(w), Some(c)) => Some(w.min(c)),
            (w, c) => w.or(c),
        }
    }

    /// Packets the selective-repeat bitmaps must cover: the BDP cap, or the tracking window.
    pub fn window(&self) -> u32 {
        self.bdp_cap.unwrap_or(self.tracking_window)
    }
}

/// A transport configuration that cannot work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("mtu = {0}: must be between 1 and 4096 bytes")]
    Mtu(u32),
    #[error("bdp_cap = {0}: must be between 1 and 4194304 packets")]
    BdpCap(u32),
    #[error("tracking_window = {0}: must be between 1 and 4194304 packets")]
    TrackingWindow(u32),
    #[error("a retransmission timeout must be longer than zero")]
    ZeroRto,
    #[error("rto_high = {high} is shorter than rto_low = {low}")]
    RtoOrder { low: Duration, high: Duration },
    #[error("hold_last_packet = true: the WRITE last-packet hold belongs to the RDMA sender (go-back-N or selective repeat), not TCP")]
    HoldLastWithTcp,
    #[error("MP-RDMA's receiver window is its bitmap ({0} packets): no BDP cap, and a tracking window equal to the bitmap")]
    MpRdmaWindow(u32),
    #[error("{0}")]
    MpRdma(#[from] super::mp_rdma::MpRdmaError),
    #[error("{0} is a go-back-N option (RoCE); this transport recovers otherwise")]
    GoBackNOnly(&'static str),
    #[error("tx_window = {0}: must be between 1 and 4194304 packets")]
    TxWindow(u32),
    #[error("slow_restart factor = {0}: must be above 0 and below 1")]
    SlowRestartFactor(String),
    #[error("slow_restart needs a window to cut and regrow: set tx_window (or BDP-FC)")]
    SlowRestartWithoutWindow,
    #[error("nack_interval must be longer than zero")]
    ZeroNackInterval,
    #[error("acks = none: {0} wait(s) for ACKs; without ACKs only go-back-N with no timeouts, no window and no ACK-clocked congestion control (DCQCN is fine) can work")]
    NoAcks(&'static str),
    #[error("cnp_carrier = \"ack\" does not work with {0}: a CNP rides the RDMA receiver's next ACK or NACK, so it needs go-back-N or selective repeat with an ACK for every packet; use cnp_carrier = \"frame\"")]
    CnpOnReplies(&'static str),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_valid_and_differ_on_one_axis_each() {
        let irn = TransportConfig::irn();
        for cfg in [
            TransportConfig::roce(true),
            TransportConfig::roce(false),
            irn,
            TransportConfig::irn_go_back_n(),
            TransportConfig::irn_without_bdp_fc(),
            TransportConfig::irn_without_sack(),
        ] {
            assert_eq!(cfg.validate(), Ok(()));
        }
        assert_eq!(
            TransportConfig::irn_go_back_n().recovery,
            LossRecovery::GoBackN
        );
        assert_eq!(TransportConfig::irn_without_bdp_fc().bdp_cap, None);
        assert_eq!(TransportConfig::irn_without_bdp_fc().window(), 16_384);
        assert_eq!(irn.window(), 110);
        assert_eq!(TransportConfig::roce(true).rto, RtoPolicy::Disabled);
    }

    #[test]
    fn rejects_nonsense() {
        let irn = TransportConfig::irn();
        let bad = [
            (TransportConfig { mtu: 0, ..irn }, ConfigError::Mtu(0)),
            (TransportConfig { mtu: 9000, ..irn }, ConfigError::Mtu(9000)),
            (
                TransportConfig {
                    bdp_cap: Some(0),
                    ..irn
                },
                ConfigError::BdpCap(0),
            ),
            (
                TransportConfig {
                    tracking_window: 1 << 23,
                    ..irn
                },
                ConfigError::TrackingWindow(1 << 23),
            ),
            (
                TransportConfig {
                    rto: RtoPolicy::Fixed(Duration::ZERO),
                    ..irn
                },
                ConfigError::ZeroRto,
            ),
            (
                TransportConfig {
                    rto: RtoPolicy::Dual {
                        low: Duration::from_us(5),
                        high: Duration::from_us(4),
                        n: 3,
                    },
                    ..irn
                },
                ConfigError::RtoOrder {
                    low: Duration::from_us(5),
                    high: Duration::from_us(4),
                },
            ),
            (
                TransportConfig {
                    hold_last_packet: true,
                    ..TransportConfig::tcp()
                },
                ConfigError::HoldLastWithTcp,
            ),
        ];
        for (cfg, want) in bad {
            assert_eq!(cfg.validate(), Err(want));
        }
    }

    #[test]
    fn go_back_n_options_are_checked() {
        use crate::cc::{DcqcnParams, DctcpParams};
        let lossy = TransportConfig::roce(false);
        let pfc = TransportConfig::roce(true);
        let restart = Some(SlowRestart::DEFAULT);
        let ok = [
            TransportConfig {
                tx_window: Some(8),
                slow_restart: restart,
                nack_interval: Some(Duration::from_us(4)),
                ..lossy
            },
            // BDP-FC is a window slow restart can cut.
            TransportConfig {
                slow_restart: restart,
                ..TransportConfig::irn_go_back_n()
            },
            TransportConfig {
                acks: Acks::None,
                cc: CcConfig::Dcqcn(DcqcnParams::default()),
                ..pfc
            },
        ];
        for cfg in ok {
            assert_eq!(cfg.validate(), Ok(()), "{cfg:?}");
        }
        assert_eq!(
            TransportConfig {
                tx_window: Some(200),
                ..TransportConfig::irn_go_back_n()
            }
            .go_back_n_window(),
            Some(110)
        );
        let bad = [
            (
                TransportConfig {
                    nack_interval: Some(Duration::from_us(4)),
                    ..TransportConfig::irn()
                },
                ConfigError::GoBackNOnly("nack_interval"),
            ),
            (
                TransportConfig {
                    tx_window: Some(0),
                    ..lossy
                },
                ConfigError::TxWindow(0),
            ),
            (
                TransportConfig {
                    slow_restart: restart,
                    ..lossy
                },
                ConfigError::SlowRestartWithoutWindow,
            ),
            (
                TransportConfig {
                    tx_window: Some(8),
                    slow_restart: Some(SlowRestart {
                        factor: 1.0,
                        ..SlowRestart::DEFAULT
                    }),
                    ..lossy
                },
                ConfigError::SlowRestartFactor("1".into()),
            ),
            (
                TransportConfig {
                    nack_interval: Some(Duration::ZERO),
                    ..lossy
                },
                ConfigError::ZeroNackInterval,
            ),
            (
                TransportConfig {
                    acks: Acks::None,
                    ..lossy
                },
                ConfigError::NoAcks("timeouts"),
            ),
            (
                TransportConfig {
                    acks: Acks::None,
                    tx_window: Some(8),
                    ..pfc
                },
                ConfigError::NoAcks("a transmit window or BDP-FC"),
            ),
            (
                TransportConfig {
                    acks: Acks::None,
                    cc: CcConfig::Dctcp(DctcpParams::default()),
                    ..pfc
                },
                ConfigError::NoAcks("ACK-clocked congestion control"),
            ),
        ];
        for (cfg, want) in bad {
            assert_eq!(cfg.validate(), Err(want));
        }
    }
}
