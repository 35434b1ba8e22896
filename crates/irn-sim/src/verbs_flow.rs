//! A flow that is one RDMA verb: an `irn_core::verbs` queue pair on each of its two hosts, with
//! real memory regions, and the network's view of the packets they exchange.
//!
//! The source host's region holds a byte pattern (generated as it is read, so it costs no
//! memory: `MemoryRegion::pattern`); the verb moves it into the destination
//! host's region (a Read pulls it, the others push it), and when the flow finishes the two are
//! compared byte for byte — so every verbs run checks, end to end, that out-of-order placement
//! (IRN §5.3) put every byte where it belongs. An atomic adds a per-flow value to a zeroed word
//! and checks the word and the returned original.
//!
//! Verbs packets carry payload bytes (`VerbsPacket` owns a `Vec`), so while one crosses the
//! network it waits in a [`VerbsPackets`] slab and the network moves a small `Copy` stand-in.

use std::num::NonZeroU32;

use irn_core::packet::{Echo, PacketKind, Qpn};
use irn_core::verbs::{
    Cqe, Flow as PacketFlow, MemoryRegion, QpEndpoint, QueuePair, RecvWqe, SendWqe, VerbsError,
    VerbsPacket,
};
use irn_core::{Packet, Psn, Time, TransportConfig};

use crate::workload::verbs::ATOMIC_BYTES;
use crate::workload::{FlowSpec, Verb};

/// Which of a flow's two hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Src = 0,
    Dst = 1,
}

impl Side {
    pub fn other(self) -> Side {
        match self {
            Side::Src => Side::Dst,
            Side::Dst => Side::Src,
        }
    }
}

/// A verb in progress between two queue pairs.
#[derive(Debug)]
pub struct VerbsFlow {
    verb: Verb,
    /// Indexed by [`Side`].
    qps: [QueuePair; 2],
    /// The responder has every request packet once its expected PSN reaches this.
    request_end: Psn,
    /// The requester's send CQE has been polled.
    requester_done: bool,
    /// What an atomic adds: distinct per flow, so a misplaced or doubled add shows.
    add: u64,
}

impl VerbsFlow {
    /// Sets up both queue pairs for `spec`'s verb, gives the source its pattern and posts the
    /// WQEs. `isn` holds the first PSN of the source's requests, the destination's requests, the
    /// source's responses and the destination's responses.
    pub fn new(
        cfg: TransportConfig,
        qpn: Qpn,
        spec: &FlowSpec,
        isn: [Psn; 4],
    ) -> Result<Self, VerbsError> {
        let verb = spec.verb.unwrap_or(Verb::Write);
        let len = u32::try_from(spec.size_bytes).unwrap_or(u32::MAX);
        let endpoint = |memory_bytes, (request_isn, response_isn)| QpEndpoint {
            qpn,
            request_isn,
            response_isn,
            memory_bytes,
        };
        let bytes = if verb == Verb::Atomic {
            ATOMIC_BYTES
        } else {
            spec.size_bytes
        };
        let (src_end, dst_end) = (
            endpoint(bytes, (isn[0], isn[2])),
            endpoint(bytes, (isn[1], isn[3])),
        );
        let mut qps = [
            QueuePair::new(cfg, src_end, dst_end)?,
            QueuePair::new(cfg, dst_end, src_end)?,
        ];
        let add = u64::from(qpn.value()) + 1;
        if verb != Verb::Atomic {
            // Generated as it is read: the source costs no memory (it is never written).
            *qps[0].memory_mut() = MemoryRegion::pattern(bytes as usize, qpn.value());
        }
        let (requester, wqe) = match verb {
            Verb::Write => (Side::Src, SendWqe::write(0, 0, len)),
            Verb::WriteImm => (Side::Src, SendWqe::write_imm(0, 0, len, qpn.value())),
            Verb::Send => (Side::Src, SendWqe::send(0, len)),
            Verb::Read => (Side::Dst, SendWqe::read(0, 0, len)),
            Verb::Atomic => (Side::Src, SendWqe::fetch_add(0, 0, add)),
        };
        if matches!(verb, Verb::Send | Verb::WriteImm) {
            let buffer = if verb == Verb::Send { len } else { 0 };
            qps[1].post_recv(RecvWqe {
                addr: 0,
                len: buffer,
            })?;
        }
        qps[requester as usize].post_send(wqe)?;
        let request_packets = match verb {
            Verb::Read | Verb::Atomic => 1,
            _ => len.div_ceil(cfg.mtu).max(1),
        };
        Ok(VerbsFlow {
            verb,
            qps,
            // Only the source's requests are counted this way (a Read's are not).
            request_end: isn[0].add(request_packets),
            requester_done: false,
            add,
        })
    }

    pub fn qp(&self, side: Side) -> &QueuePair {
        &self.qps[side as usize]
    }

    pub fn qp_mut(&mut self, side: Side) -> &mut QueuePair {
        &mut self.qps[side as usize]
    }

    /// The earliest deadline of either queue pair.
    pub fn poll_timeout(&self) -> Option<Time> {
        min_some(self.qps[0].poll_timeout(), self.qps[1].poll_timeout())
    }

    pub fn handle_timeout(&mut self, now: Time) {
        for qp in &mut self.qps {
            qp.handle_timeout(now);
        }
    }

    /// Drains completions; returns (every byte is at the destination, the verb's sender knows
    /// it is done) — a flow's `received_at` and `acked_at`.
    pub fn progress(&mut self) -> (bool, bool) {
        let requester = if self.verb.requester_at_dst() {
            Side::Dst
        } else {
            Side::Src
        };
        for side in [Side::Src, Side::Dst] {
            while let Some(cqe) = self.qps[side as usize].poll_completion() {
                if side == requester && matches!(cqe, Cqe::Send(_)) {
                    self.requester_done = true;
                }
            }
        }
        match self.verb {
            // The data comes back to the requester: it holds every byte when the Read
            // completes, and the responder is done when every response is read-acknowledged.
            Verb::Read => (
                self.requester_done,
                self.requester_done && self.qps[0].is_idle(),
            ),
            _ => (
                self.qps[1].expected_request_psn() == self.request_end,
                self.requester_done,
            ),
        }
    }

    /// Whether the destination holds exactly what the verb should have put there.
    pub fn data_ok(&self) -> bool {
        let (src, dst) = (self.qps[0].memory(), self.qps[1].memory());
        match self.verb {
            Verb::Atomic => dst.read_u64(0) == Ok(self.add) && src.read_u64(0) == Ok(0),
            _ => src == dst,
        }
    }

    /// Counters over both queue pairs and both packet senders (requests and responses).
    pub fn counts(&self) -> VerbsCounts {
        let mut c = VerbsCounts::default();
        for qp in &self.qps {
            let s = qp.stats();
            c.duplicates += s.responder.duplicates + s.requester.response_duplicates;
            c.cnps += s.responder.cnps_sent + s.requester.cnps_sent;
            c.out_of_order += s.responder.out_of_order + s.requester.responses_out_of_order;
            c.max_reorder_distance = c.max_reorder_distance.max(s.max_reorder_distance);
            c.nacks += s.responder.nacks_sent + s.requester.read_nacks_sent;
            for sender in [s.requests, s.responses] {
                c.recoveries += sender.recoveries;
                c.retransmissions += sender.retransmissions;
                c.timeouts += sender.timeouts;
                c.min_rate_bps = min_some(c.min_rate_bps, sender.min_rate_bps);
                c.min_window = min_some(c.min_window, sender.min_window);
            }
        }
        c
    }
}

/// What a finished verbs flow reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VerbsCounts {
    pub retransmissions: u64,
    pub timeouts: u64,
    pub duplicates: u64,
    /// CNPs this flow's two receive halves sent (DCQCN).
    pub cnps: u64,
    pub min_rate_bps: Option<u64>,
    pub min_window: Option<u32>,
    /// Request and read-response packets that arrived ahead of the expected one.
    pub out_of_order: u64,
    /// The most packets by which one of them was ahead.
    pub max_reorder_distance: u64,
    /// Loss-recovery episodes (go-back-N rewinds, selective-repeat recoveries) of both ends'
    /// request and response senders.
    pub recoveries: u64,
    /// NACKs both receive halves sent (responders' and read requesters').
    pub nacks: u64,
}

fn min_some<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Bytes `pkt` occupies on a link. `irn_headers` counts IRN's extension headers (§6.3: a RETH
/// in every Write packet, `recv_WQE_SN` and offset in every Send packet); RoCE has none.
pub fn wire_bytes(pkt: &VerbsPacket, irn_headers: bool) -> u32 {
    if irn_headers || is_control(pkt) {
        pkt.wire_len()
    } else {
        pkt.wire_len() - pkt.header_bytes()
    }
}

fn is_control(pkt: &VerbsPacket) -> bool {
    matches!(
        pkt.opcode.flow(),
        PacketFlow::RequestAck | PacketFlow::ResponseAck
    )
}

/// What switches see of a verbs packet: its class (requests and responses are data, subject to
/// buffers and PFC; (read) ACKs and CNPs are control), PSN, flags and ECN field. A switch's CE
/// mark is copied back with [`take_marks`] on delivery.
pub fn network_view(pkt: &VerbsPacket) -> Packet {
    let kind = if is_control(pkt) {
        PacketKind::Ack {
            msn: 0,
            echo: Echo::default(),
        }
    } else {
        PacketKind::Data {
            payload_len: pkt.payload.len() as u16,
            first: pkt.opcode.is_first(),
            last: pkt.opcode.is_last(),
            retransmission: pkt.retransmission,
            ecn: pkt.ecn,
            ts: pkt.ts,
            entropy: 0,
        }
    };
    Packet {
        dest_qp: pkt.dest_qp,
        psn: pkt.psn,
        kind,
    }
}

/// Copies what the network did to `view` (a CE mark) into the packet it stood in for.
pub fn take_marks(view: &Packet, pkt: &mut VerbsPacket) {
    if let PacketKind::Data { ecn, .. } = view.kind {
        pkt.ecn = ecn;
    }
}

/// Where a verbs packet waits while the network carries its stand-in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketSlot(NonZeroU32);

/// The verbs packets in flight, in reusable slots.
#[derive(Debug, Default)]
pub struct VerbsPackets {
    slots: Vec<Option<VerbsPacket>>,
    free: Vec<PacketSlot>,
}

impl VerbsPackets {
    pub fn insert(&mut self, pkt: VerbsPacket) -> PacketSlot {
        if let Some(slot) = self.free.pop() {
            self.slots[slot.0.get() as usize - 1] = Some(pkt);
            return slot;
        }
        self.slots.push(Some(pkt));
        PacketSlot(NonZeroU32::new(self.slots.len() as u32).expect("slot numbers start at 1"))
    }

    /// Takes the packet out of `slot` and frees the slot.
    pub fn take(&mut self, slot: PacketSlot) -> Option<VerbsPacket> {
        let pkt = self.slots[slot.0.get() as usize - 1].take();
        if pkt.is_some() {
            self.free.push(slot);
        }
        pkt
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::HostIdx;

    fn spec(verb: Verb, size_bytes: u64) -> FlowSpec {
        FlowSpec {
            src: HostIdx(0),
            dst: HostIdx(1),
            size_bytes,
            start: Time::ZERO,
            class: Default::default(),
            verb: Some(verb),
        }
    }

    /// Runs a flow over a perfect wire, both directions at once, and returns how many packets
    /// crossed it.
    fn run(verb: Verb, size: u64) -> (VerbsFlow, u32) {
        let cfg = TransportConfig::irn();
        // Every packet space starts a few packets below the 24-bit wrap, so each verb crosses it.
        let isn = [0xFF_FFFE, 0xFF_FFF0, 0xFF_FFFF, 0xFF_FFFD].map(Psn::new);
        let mut f = VerbsFlow::new(cfg, Qpn::new(5), &spec(verb, size), isn).unwrap();
        let mut packets = 0;
        let now = Time::ZERO;
        loop {
            let mut moved = false;
            for side in [Side::Src, Side::Dst] {
                while let Some(p) = f.qp_mut(side).poll_transmit(now) {
                    f.qp_mut(side.other()).handle_packet(now, &p);
                    packets += 1;
                    moved = true;
                }
            }
            if !moved {
                break;
            }
        }
        (f, packets)
    }

    #[test]
    fn every_verb_completes_and_places_its_bytes() {
        for verb in Verb::ALL {
            let size = if verb == Verb::Atomic { 8 } else { 5000 };
            let (mut f, packets) = run(verb, size);
            assert_eq!(f.progress(), (true, true), "{verb:?}");
            assert!(f.data_ok(), "{verb:?}");
            assert!(packets >= 2, "{verb:?}: {packets}");
        }
    }

    #[test]
    fn a_missing_byte_is_caught() {
        let (mut f, _) = run(Verb::Write, 3000);
        f.qp_mut(Side::Dst).memory_mut().as_bytes_mut()[2999] ^= 0xff;
        assert!(!f.data_ok());
    }

    #[test]
    fn slots_are_reused() {
        let (mut f, _) = run(Verb::Write, 1);
        f.qp_mut(Side::Src)
            .post_send(SendWqe::write(0, 0, 1))
            .unwrap();
        let pkt = f.qp_mut(Side::Src).poll_transmit(Time::ZERO).unwrap();
        let mut slab = VerbsPackets::default();
        let a = slab.insert(pkt.clone());
        let b = slab.insert(pkt.clone());
        assert_ne!(a, b);
        assert_eq!(slab.take(a), Some(pkt.clone()));
        assert_eq!(slab.take(a), None);
        assert_eq!(slab.insert(pkt.clone()), a);
        let c = slab.insert(pkt);
        assert!(c != a && c != b);
    }

    #[test]
    fn roce_packets_carry_no_irn_headers() {
        let cfg = TransportConfig::irn();
        let mut f =
            VerbsFlow::new(cfg, Qpn::new(1), &spec(Verb::Write, 100), [Psn::ZERO; 4]).unwrap();
        let pkt = f.qp_mut(Side::Src).poll_transmit(Time::ZERO).unwrap();
        assert_eq!(wire_bytes(&pkt, true), wire_bytes(&pkt, false) + 16);
        assert!(network_view(&pkt).is_data());
    }
}
