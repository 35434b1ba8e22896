//! The sending side of any transport, for drivers that run several kinds side by side.

use super::config::{LossRecovery, TransportConfig};
use super::{Completion, MessageId, MpRdmaSender, PostError, Sender, SenderStats, TcpSender};
use crate::packet::{Packet, Qpn};
use crate::seq::Psn;
use crate::time::{Bandwidth, Time};

/// A requester: the RDMA [`Sender`] (RoCE, IRN and variants), the [`TcpSender`] or the
/// [`MpRdmaSender`], chosen by the configuration's loss recovery. Static dispatch, same methods as both.
///
/// `repr(u8)` puts the variant tag right before the sender, whose per-packet fields come first,
/// so dispatching reads no extra cache line. The RDMA sender is the larger variant by some
/// 200 bytes; it is not boxed because every packet of every RDMA flow goes through it (a box
/// would add a pointer chase per packet), while the slack costs only TCP flows, whose
/// endpoints are boxed whole by the simulator anyway.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
#[repr(u8)]
pub enum Requester {
    Rdma(Sender),
    Tcp(TcpSender),
    MpRdma(MpRdmaSender),
}

macro_rules! delegate {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            Requester::Rdma($s) => $e,
            Requester::Tcp($s) => $e,
            Requester::MpRdma($s) => $e,
        }
    };
}

impl Requester {
    /// # Panics
    /// If `cfg` fails [`TransportConfig::validate`].
    pub fn new(cfg: TransportConfig, peer: Qpn, isn: Psn) -> Self {
        match cfg.recovery {
            LossRecovery::Tcp => Requester::Tcp(TcpSender::new(cfg, peer, isn)),
            LossRecovery::MpRdma(_) => Requester::MpRdma(MpRdmaSender::new(cfg, peer, isn)),
            LossRecovery::GoBackN | LossRecovery::SelectiveRepeat { .. } => {
                Requester::Rdma(Sender::new(cfg, peer, isn))
            }
        }
    }

    pub fn post(&mut self, bytes: u64) -> Result<MessageId, PostError> {
        delegate!(self, s => s.post(bytes))
    }

    #[inline]
    pub fn handle_packet(&mut self, now: Time, pkt: &Packet) {
        delegate!(self, s => s.handle_packet(now, pkt))
    }

    /// The in-band telemetry records the next ACK echoes (`crate::cc::int`): for the RDMA
    /// sender's controller; TCP and MP-RDMA run their own and ignore them.
    pub fn handle_telemetry(&mut self, hops: &[crate::cc::int::IntHop]) {
        if let Requester::Rdma(s) = self {
            s.handle_telemetry(hops);
        }
    }

    #[inline]
    pub fn handle_timeout(&mut self, now: Time) {
        delegate!(self, s => s.handle_timeout(now))
    }

    #[inline]
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        delegate!(self, s => s.poll_transmit(now))
    }

    #[inline]
    pub fn poll_timeout(&self) -> Option<Time> {
        delegate!(self, s => s.poll_timeout())
    }

    #[inline]
    pub fn poll_completion(&mut self) -> Option<Completion> {
        delegate!(self, s => s.poll_completion())
    }

    #[inline]
    pub fn stats(&self) -> &SenderStats {
        delegate!(self, s => s.stats())
    }

    /// Whether a loss-recovery episode is under way (selective repeat and TCP; a go-back-N
    /// rewind is over as soon as it starts).
    pub fn in_recovery(&self) -> bool {
        delegate!(self, s => s.in_recovery())
    }

    /// The congestion controller's current pacing rate, if it is rate-based.
    pub fn rate(&self) -> Option<Bandwidth> {
        delegate!(self, s => s.rate())
    }

    /// The congestion controller's current window in packets, if it is window-based.
    pub fn window(&self) -> Option<u32> {
        delegate!(self, s => s.window())
    }
}
