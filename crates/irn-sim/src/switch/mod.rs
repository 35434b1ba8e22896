//! Switch models: what happens to a packet between arriving on one port and leaving on another.
//!
//! | model | module | buffers | drop / pause decision |
//! | --- | --- | --- | --- |
//! | input-queued with virtual output queues (the IRN paper's, §4.1) | [`voq`] | one per input port | the input's occupancy |
//! | output-queued with one shared buffer (Eunomia §5, the ns-3 RDMA models') | [`shared`] | one per switch | dynamic thresholds: egress queue (lossy), ingress share (PFC) |
//!
//! Both serve control packets (ACK/NACK/CNP) first in a class that is never paused or dropped,
//! and both mark ECN on the output's queue as a packet leaves. The simulation moves packets in
//! and out and sends the PFC frames they ask for.

pub mod shared;
pub mod voq;

use irn_core::packet::{Ecn, PacketKind};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::config::EcnConfig;
use crate::packet::SimPacket;

pub use shared::SharedSwitch;
pub use voq::VoqSwitch;

/// What admitting a packet led to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    Queued,
    /// Queued, and the input crossed its pause threshold: send PAUSE upstream.
    QueuedAndPause,
    /// No room: the packet is dropped.
    Dropped,
}

/// RED/step ECN marking with its own seeded random stream.
#[derive(Debug)]
pub struct EcnMarker {
    cfg: EcnConfig,
    rng: SmallRng,
    /// Data packets marked CE.
    pub marks: u64,
}

impl EcnMarker {
    pub fn new(cfg: EcnConfig, seed: u64) -> Self {
        EcnMarker {
            cfg,
            rng: SmallRng::seed_from_u64(seed),
            marks: 0,
        }
    }

    /// Marks `p` CE with the probability its queue of `queue_bytes` calls for, if it is an
    /// ECN-capable data packet.
    pub fn mark(&mut self, queue_bytes: u64, p: &mut SimPacket) {
        if let PacketKind::Data {
            ecn: ecn @ (Ecn::Ect0 | Ecn::Ect1),
            ..
        } = &mut p.pkt.kind
        {
            let prob = self.cfg.probability(queue_bytes);
            if prob >= 1.0 || (prob > 0.0 && self.rng.random::<f64>() < prob) {
                *ecn = Ecn::Ce;
                self.marks += 1;
            }
        }
    }
}

/// One switch, of either model; ports are local numbers (0..ports).
#[derive(Debug)]
pub enum Switch {
    Voq(VoqSwitch),
    Shared(SharedSwitch),
}

macro_rules! delegate {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            Switch::Voq($s) => $e,
            Switch::Shared($s) => $e,
        }
    };
}

impl Switch {
    /// A data packet arrived on `input` and is routed to `output`.
    #[inline]
    pub fn admit_data(&mut self, input: usize, output: usize, p: SimPacket) -> Admit {
        delegate!(self, s => s.admit_data(input, output, p))
    }

    /// A control packet to send on `output`.
    #[inline]
    pub fn admit_control(&mut self, output: usize, p: SimPacket) {
        delegate!(self, s => s.admit_control(output, p))
    }

    /// The next packet `output` should send (control first; data unless `paused`), and a mask of
    /// the inputs whose upstream neighbours may now be resumed.
    #[inline]
    pub fn dequeue(&mut self, output: usize, paused: bool) -> Option<(SimPacket, u64)> {
        delegate!(self, s => s.dequeue(output, paused))
    }

    /// Whether `output` has anything it could send (ignoring pause for data).
    #[inline]
    pub fn has_work(&self, output: usize) -> bool {
        delegate!(self, s => s.has_work(output))
    }

    /// Data packets marked CE here.
    pub fn ecn_marks(&self) -> u64 {
        delegate!(self, s => s.ecn.as_ref().map_or(0, |m| m.marks))
    }

    /// The most bytes one buffer held at once (an input's, or the shared one).
    pub fn peak_occupancy(&self) -> u64 {
        delegate!(self, s => s.peak_occupancy)
    }
}

/// A data packet of `flow` with `bytes` on the wire, for the switch models' tests.
#[cfg(test)]
pub(crate) fn test_packet(flow: u32, bytes: u32) -> SimPacket {
    use crate::ids::{FlowId, HostIdx};
    use irn_core::packet::Qpn;
    use irn_core::{Packet, Psn};
    SimPacket {
        pkt: Packet {
            dest_qp: Qpn::new(flow),
            psn: Psn::ZERO,
            kind: PacketKind::Data {
                payload_len: 0,
                first: true,
                last: true,
                retransmission: false,
                ecn: Ecn::Ect0,
                ts: 0,
            },
        },
        flow: FlowId(flow),
        dst: HostIdx(0),
        verbs: None,
        wire_bytes: bytes,
    }
}
