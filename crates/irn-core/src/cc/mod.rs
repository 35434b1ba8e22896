//! Congestion control, sans-IO: controllers that turn events (packets sent, ACKs with RTT
//! samples and ECN echoes, CNPs, losses, timer expiries) into a sending rate or a window.
//!
//! IRN decouples loss recovery from congestion control (§3): any transport can run with any
//! controller, or none. Rate-based controllers (DCQCN, Timely) pace the queue pair's packets;
//! window-based ones (DCTCP, AIMD) bound its packets in flight, on top of BDP-FC when that is on;
//! HPCC and PowerTCP do both; Swift keeps a window and paces when it falls below one packet.
//!
//! | controller | signal | output | module |
//! | --- | --- | --- | --- |
//! | DCQCN (Zhu et al., SIGCOMM 2015) | CNPs from the receiver's notification point | rate | [`dcqcn`] |
//! | Timely (Mittal et al., SIGCOMM 2015) | RTT samples from echoed timestamps | rate | [`timely`] |
//! | DCTCP (Alizadeh et al., SIGCOMM 2010) | ECN-Echo on ACKs | window | [`dctcp`] |
//! | AIMD (TCP Reno style) | losses | window | [`aimd`] |
//! | HPCC (Li et al., SIGCOMM 2019) | in-band telemetry ([`int`]) echoed on ACKs | window and rate | [`hpcc`] |
//! | Swift (Kumar et al., SIGCOMM 2020) | RTT samples against a target delay | window (paced below one packet) | [`swift`] |
//! | PowerTCP (Addanki et al., NSDI 2022) | in-band telemetry, or RTT samples (θ-PowerTCP) | window and rate | [`powertcp`] |

pub mod aimd;
pub mod dcqcn;
pub mod dctcp;
pub mod hpcc;
pub mod int;
pub mod powertcp;
pub mod swift;
pub mod timely;

use crate::time::{Bandwidth, Duration, Time};

pub use aimd::{Aimd, AimdParams};
pub use dcqcn::{
    AlphaUpdate, CnpCarrier, CnpPacer, Dcqcn, DcqcnParams, IncreaseStages, Named, RateDecrease,
};
pub use dctcp::{Dctcp, DctcpParams};
pub use hpcc::{Hpcc, HpccParams};
pub use powertcp::{Powertcp, PowertcpParams, PowertcpVariant};
pub use swift::{Swift, SwiftParams};
pub use timely::{Timely, TimelyParams, TimelyUpdate};

/// Which controller a queue pair runs, with its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum CcConfig {
    /// No congestion control: flows send at line rate within their flow control (IRN §4.2.1).
    #[default]
    None,
    Dcqcn(DcqcnParams),
    Timely(TimelyParams),
    Dctcp(DctcpParams),
    Aimd(AimdParams),
    Hpcc(HpccParams),
    Swift(SwiftParams),
    Powertcp(PowertcpParams),
}

impl CcConfig {
    /// Whether the controller steers by in-band network telemetry ([`int`]): then data
    /// packets gather a record per switch and ACKs echo them.
    pub fn wants_int(&self) -> bool {
        match self {
            CcConfig::Hpcc(_) => true,
            CcConfig::Powertcp(p) => p.wants_int(),
            _ => false,
        }
    }
}

/// What an acknowledgement told the sender, for the controllers that learn from ACKs.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct AckEvent {
    /// Packets newly acknowledged cumulatively by this ACK (0 for a duplicate or a NACK).
    pub newly_acked: u64,
    /// RTT measured from the echoed timestamp, if the echoed packet was not a retransmission.
    pub rtt: Option<Duration>,
    /// The data packet that triggered this ACK was CE-marked (ECN-Echo).
    pub ece: bool,
    /// The sender's cumulative ACK after this ACK (packet number since the initial PSN).
    pub una: u64,
    /// The next new packet the sender would send (packet number since the initial PSN).
    pub nxt: u64,
}

/// A queue pair's controller.
#[derive(Debug, Clone)]
pub enum CongestionControl {
    None,
    Dcqcn(Dcqcn),
    Timely(Timely),
    Dctcp(Dctcp),
    Aimd(Aimd),
    /// Boxed: its per-hop state is a kilobyte, which the other controllers' queue pairs should
    /// not carry.
    Hpcc(Box<Hpcc>),
    /// Boxed for the same reason: the other controllers' queue pairs keep their layout.
    Swift(Box<Swift>),
    /// Boxed as HPCC is, for its per-hop records.
    Powertcp(Box<Powertcp>),
}

impl CongestionControl {
    /// A controller for a queue pair on a port of `line_rate` sending packets of `mtu` payload
    /// bytes, whose window-based controllers start at `initial_window` packets (flows start at
    /// line rate: one BDP); Swift starts at its base target's BDP, within that.
    pub fn new(cfg: &CcConfig, line_rate: Bandwidth, initial_window: u32, mtu: u32) -> Self {
        match cfg {
            CcConfig::None => CongestionControl::None,
            CcConfig::Dcqcn(p) => CongestionControl::Dcqcn(Dcqcn::new(*p, line_rate)),
            CcConfig::Timely(p) => CongestionControl::Timely(Timely::new(*p, line_rate, mtu)),
            CcConfig::Dctcp(p) => CongestionControl::Dctcp(Dctcp::new(*p, initial_window)),
            CcConfig::Aimd(p) => CongestionControl::Aimd(Aimd::new(*p, initial_window)),
            CcConfig::Hpcc(p) => CongestionControl::Hpcc(Box::new(Hpcc::new(*p, line_rate, mtu))),
            CcConfig::Swift(p) => {
                CongestionControl::Swift(Box::new(Swift::new(*p, line_rate, initial_window, mtu)))
            }
            CcConfig::Powertcp(p) => {
                CongestionControl::Powertcp(Box::new(Powertcp::new(*p, line_rate, mtu)))
            }
        }
    }

    /// The rate to pace packets at, for rate-based controllers.
    ///
    /// Inlined, as is [`window`](Self::window) and [`on_ack`](Self::on_ack): the sender asks
    /// on every packet, and out of line (LLVM's choice once HPCC and Swift added their arms)
    /// the leaf-spine benchmark ran 0.5 % more instructions.
    #[inline(always)]
    pub fn rate(&self) -> Option<Bandwidth> {
        match self {
            CongestionControl::Dcqcn(c) => Some(c.rate()),
            CongestionControl::Timely(c) => Some(c.rate()),
            CongestionControl::Hpcc(c) => Some(c.rate()),
            CongestionControl::Swift(c) => Some(c.rate()),
            CongestionControl::Powertcp(c) => Some(c.rate()),
            _ => None,
        }
    }

    /// Packets allowed in flight, for window-based controllers.
    #[inline(always)]
    pub fn window(&self) -> Option<u32> {
        match self {
            CongestionControl::Dctcp(c) => Some(c.window()),
            CongestionControl::Aimd(c) => Some(c.window()),
            CongestionControl::Hpcc(c) => Some(c.window()),
            CongestionControl::Swift(c) => Some(c.window()),
            CongestionControl::Powertcp(c) => Some(c.window()),
            _ => None,
        }
    }

    /// A data packet of `bytes` on the wire left at `now`.
    pub fn on_sent(&mut self, now: Time, bytes: u64) {
        if let CongestionControl::Dcqcn(c) = self {
            c.on_sent(now, bytes);
        }
    }

    /// An ACK or NACK arrived.
    #[inline(always)]
    pub fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        match self {
            CongestionControl::Timely(c) => c.on_ack(now, ack),
            CongestionControl::Dctcp(c) => c.on_ack(now, ack),
            CongestionControl::Aimd(c) => c.on_ack(now, ack),
            CongestionControl::Hpcc(c) => c.on_ack(now, ack),
            CongestionControl::Swift(c) => c.on_ack(now, ack),
            CongestionControl::Powertcp(c) => c.on_ack(now, ack),
            _ => {}
        }
    }

    /// The INT records the next ACK echoes ([`int`]), handed over just before it.
    pub fn on_telemetry(&mut self, hops: &[int::IntHop]) {
        match self {
            CongestionControl::Hpcc(c) => c.on_telemetry(hops),
            CongestionControl::Powertcp(c) => c.on_telemetry(hops),
            _ => {}
        }
    }

    /// The sender detected a loss (a NACK starting recovery, or a timeout): window-based
    /// controllers cut their window, once per window of data.
    pub fn on_loss(&mut self, now: Time, una: u64, nxt: u64) {
        match self {
            CongestionControl::Dctcp(c) => c.on_loss(now, una, nxt),
            CongestionControl::Aimd(c) => c.on_loss(now, una, nxt),
            CongestionControl::Swift(c) => c.on_loss(now),
            _ => {}
        }
    }

    /// A congestion notification packet arrived.
    pub fn on_cnp(&mut self, now: Time) {
        if let CongestionControl::Dcqcn(c) = self {
            c.on_cnp(now);
        }
    }

    /// When `handle_timeout` must next be called, for controllers with timers.
    pub fn poll_timeout(&self) -> Option<Time> {
        match self {
            CongestionControl::Dcqcn(c) => c.poll_timeout(),
            _ => None,
        }
    }

    pub fn handle_timeout(&mut self, now: Time) {
        if let CongestionControl::Dcqcn(c) = self {
            c.handle_timeout(now);
        }
    }
}
