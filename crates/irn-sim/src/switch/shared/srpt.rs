//! SRPT scheduling on the shared-buffer switch (`[switch] scheduling = "srpt"`; pFabric,
//! SIGCOMM'13; Eunomia §5.4, Fig. 15).
//!
//! Every queued data packet has a rank: its flow's bytes from this packet on (pFabric's
//! "remaining flow size"), so a flow's rank falls as it progresses. An output sends the earliest
//! queued packet of the flow with the lowest rank among its queued data packets: the best flow
//! goes first, and its packets leave in the order they came (a retransmission, ranked by its own
//! place in the flow, does not overtake the rest). When a packet does not fit, the queued packets
//! of its output ranked higher (worse) than it are evicted, the worst first, until it fits; if
//! they are not enough, nothing is evicted and the arriving packet is dropped. Evicted packets
//! count as drops at their output and leave the buffer's accounting as a sent packet would: their
//! inputs' PFC shares and headroom shrink, and a paused input they free resumes. They are not
//! ECN-marked.
//!
//! Control packets (ACK/NACK/CNP) keep their own class, sent before any data, never ranked and
//! never evicted. PFC is unchanged: an input pauses and resumes on its share as under FIFO
//! (an eviction frees the evicted packets' inputs' room, and can resume them); a paused output
//! sends no data, whatever its ranks.
//!
//! Ranks are computed by the switch on admission, from the packet's PSN and a table of each
//! flow's size, first PSN and payload per packet ([`FlowRanks`]), rather than carried by the
//! packet from its NIC: the two give the same number, and FIFO runs never build the table. A
//! packet outside its flow's data PSNs (a verbs response, which has a PSN space of its own) is
//! ranked by its flow's whole size. The rank is kept in the packet's slot, in bytes a queued
//! packet does not otherwise use.
//!
//! With `scheduling = "srpt-per-packet"` each packet keeps its own rank instead: the queue is
//! sorted by packet rank (ties in arrival order), so a flow's later packets, which have fewer
//! bytes left, go before its earlier ones still queued — a burst leaves a congested queue in
//! reverse. This is SRPT as a priority queue of packets with no per-flow rule, the reordering
//! Eunomia's §5.4 reports ("large flows arriving in reverse order"); pFabric's own dequeue is
//! the per-flow rule above, which avoids it.
//!
//! An SRPT queue is kept in sending order (`runs.rs`), so an output pops its front as a FIFO one
//! does; an arrival walks the queue's flows instead. Eviction scans the queue's packets, as it
//! happens only when the buffer is full. FIFO switches carry only a `None`, tested on a queued
//! admission.

mod runs;

use self::runs::Runs;

use std::cmp::Reverse;
use std::sync::Arc;

use irn_core::Psn;

use super::{Admit, Input, SharedSwitch};
use crate::packet::SimPacket;
use crate::packets::{Fifo, PacketId, Packets};
use crate::switch::{Accounting, Resume};

/// What a flow's packets are ranked by.
#[derive(Debug, Clone, Copy)]
struct FlowRank {
    size: u64,
    first: Psn,
    payload: u32,
}

/// Every flow's size, first PSN and payload per packet: what SRPT switches rank packets by.
/// Built once per run and shared by its switches.
pub struct FlowRanks {
    flows: Vec<FlowRank>,
}

impl std::fmt::Debug for FlowRanks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FlowRanks({} flows)", self.flows.len())
    }
}

impl FlowRanks {
    /// From each flow's (size in bytes, first PSN, payload bytes per full packet), in flow order.
    pub fn new(flows: impl IntoIterator<Item = (u64, Psn, u32)>) -> Self {
        let flows = (flows.into_iter())
            .map(|(size, first, payload)| FlowRank {
                size,
                first,
                payload,
            })
            .collect();
        FlowRanks { flows }
    }

    /// The bytes of `p`'s flow from `p` on: its size less the full packets before it.
    pub fn rank(&self, p: &SimPacket) -> u64 {
        let Some(f) = self.flows.get(p.flow.index()) else {
            return u64::MAX;
        };
        let sent = u64::from(p.pkt.psn.since(f.first)) * u64::from(f.payload);
        if sent < f.size {
            f.size - sent
        } else {
            f.size
        }
    }
}

/// An SRPT switch's state: the ranks, each output's queue order, and scratch space for
/// evictions.
#[derive(Debug)]
pub(crate) struct Srpt {
    ranks: Arc<FlowRanks>,
    /// Each output's queue, indexed by run.
    outputs: Vec<Runs>,
    /// An eviction's candidates: (rank, place in the queue, packet). Kept to allocate once.
    victims: Vec<(u64, u32, PacketId)>,
    /// The inputs' accounting before a trial eviction, to undo it.
    saved: Vec<Input>,
}

impl Srpt {
    /// For a switch of `ports` ports; `per_packet`: each packet ranked alone.
    pub(crate) fn new(ranks: Arc<FlowRanks>, ports: usize, per_packet: bool) -> Self {
        Srpt {
            ranks,
            outputs: (0..ports).map(|_| Runs::new(per_packet)).collect(),
            victims: Vec::new(),
            saved: Vec::new(),
        }
    }

    /// Ranks packet `p` and queues it in `output`'s queue `q`, which holds `queued` data bytes
    /// with `p`, in SRPT's order.
    fn enqueue(
        &mut self,
        (packets, q): (&mut Packets, &mut Fifo),
        (output, queued): (usize, u64),
        p: PacketId,
    ) {
        let pkt = packets.get(p);
        let own = self.ranks.rank(pkt);
        let before = queued - u64::from(pkt.wire_bytes);
        self.outputs[output].enqueue((q, packets), before, p, own);
    }
}

/// An admission that evicted queued packets to make room.
#[derive(Debug)]
pub struct Eviction {
    /// The arriving packet's admission: queued, perhaps pausing its input.
    pub admit: Admit,
    /// The evicted packets, in queue order, out of every queue: to count, trace and free as
    /// drops.
    pub evicted: Fifo,
    /// Inputs the evictions let resume.
    pub resume: Resume,
}

impl SharedSwitch {
    /// Queues admitted data packet `p` for `output` in SRPT's order: out of line, so that FIFO
    /// switches' admission stays as short as it was.
    #[inline(never)]
    pub(super) fn enqueue_ranked(&mut self, packets: &mut Packets, output: usize, p: PacketId) {
        let out = &mut self.outputs[output];
        let srpt = self.srpt.as_deref_mut().expect("an SRPT switch");
        srpt.enqueue((packets, &mut out.data), (output, out.egress), p);
    }

    /// Data packet `p` from `input` was refused by `output` (and counted as its drop): on an SRPT
    /// switch, evicts `output`'s queued packets ranked worse than `p`, the worst first (the
    /// latest among equals), until `p` fits, and queues it. `None` (nothing changed, the drop
    /// stands) on a FIFO switch or when evicting every such packet would not make room.
    #[cold]
    #[inline(never)]
    pub fn make_room(
        &mut self,
        packets: &mut Packets,
        (input, output): (usize, usize),
        p: PacketId,
    ) -> Option<Eviction> {
        let srpt = self.srpt.as_deref_mut()?;
        let out = &self.outputs[output];
        let pkt = packets.get(p);
        let own = srpt.ranks.rank(pkt);
        let rank = srpt.outputs[output].rank((&out.data, packets), out.egress, (pkt.flow, own));
        let mut victims = std::mem::take(&mut srpt.victims);
        victims.clear();
        let mut cur = packets.front(&self.outputs[output].data);
        let mut place = 0;
        while let Some(id) = cur {
            if packets.rank(id) > rank {
                victims.push((packets.rank(id), place, id));
            }
            place += 1;
            cur = packets.next(id);
        }
        victims.sort_unstable_by_key(|&(rank, place, _)| Reverse((rank, place)));
        let taken = self.evict_until_fits(packets, (input, output), p, &victims);
        let eviction = taken.map(|(taken, admit)| {
            let mut evicted = Fifo::default();
            self.unlink_victims(packets, output, &victims[..taken], &mut evicted);
            // The arriving packet is no longer a drop; its victims are.
            self.drops[output] += taken as u64 - 1;
            packets.set_input(p, input);
            let srpt = self.srpt.as_deref_mut().expect("an SRPT switch");
            srpt.outputs[output].rebuild(&self.outputs[output].data, packets);
            self.enqueue_ranked(packets, output, p);
            Eviction {
                admit,
                evicted,
                resume: self.resumable(),
            }
        });
        if let Some(srpt) = self.srpt.as_deref_mut() {
            srpt.victims = victims;
        }
        eviction
    }

    /// Takes `victims` out of the accounting one by one until `p` fits: how many it took and
    /// `p`'s admission, or `None` with the accounting as it was.
    fn evict_until_fits(
        &mut self,
        packets: &Packets,
        (input, output): (usize, usize),
        p: PacketId,
        victims: &[(u64, u32, PacketId)],
    ) -> Option<(usize, Admit)> {
        let saved_inputs = {
            let srpt = self.srpt.as_deref_mut().expect("an SRPT switch");
            let mut saved = std::mem::take(&mut srpt.saved);
            saved.clone_from(&self.inputs);
            saved
        };
        let saved = (
            self.shared_used,
            self.headroom_used,
            self.outputs[output].egress,
        );
        let (pausing, peak) = (self.pausing, self.peak_occupancy);
        let bytes = u64::from(packets.get(p).wire_bytes);
        let mut fits = None;
        for (taken, &(_, _, v)) in victims.iter().enumerate() {
            let v_bytes = u64::from(packets.get(v).wire_bytes);
            self.outputs[output].egress -= v_bytes;
            self.unaccount_input(packets.input(v), v_bytes);
            let admit = self.charge(input, output, bytes);
            if admit != Admit::Dropped {
                fits = Some((taken + 1, admit));
                break;
            }
            // A trial's refusal is not a drop.
            self.drops[output] -= 1;
        }
        if fits.is_none() {
            self.inputs.clone_from(&saved_inputs);
            (
                self.shared_used,
                self.headroom_used,
                self.outputs[output].egress,
            ) = saved;
            (self.pausing, self.peak_occupancy) = (pausing, peak);
        }
        if let Some(srpt) = self.srpt.as_deref_mut() {
            srpt.saved = saved_inputs;
        }
        fits
    }

    /// Moves `victims` from `output`'s queue to `evicted`, in queue order.
    fn unlink_victims(
        &mut self,
        packets: &mut Packets,
        output: usize,
        victims: &[(u64, u32, PacketId)],
        evicted: &mut Fifo,
    ) {
        let q = &mut self.outputs[output].data;
        let mut prev = None;
        let mut cur = packets.front(q);
        while let Some(id) = cur {
            cur = packets.next(id);
            if victims.iter().any(|&(_, _, v)| v == id) {
                packets.unlink_run(q, prev, (id, id));
                packets.push(evicted, id);
            } else {
                prev = Some(id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::{test_packet, Queues};

    /// An SRPT switch with its own packets, admitting as the simulation does: a refused packet
    /// may evict (`make_room`), and evicted packets are freed.
    struct Bench {
        switch: SharedSwitch,
        packets: Packets,
    }

    /// What one admission did: its admission and the (flow, PSN) of the packets it evicted.
    type Outcome = (Admit, Vec<(u32, u32)>);

    impl Bench {
        /// Flow 0 is 10 000 B long, flow 1 is 2 000 B, flow 2 50 000 B; 1 000 B of payload per
        /// packet, first PSN 0, so packet `n` of a flow ranks `size - 1000 n`. Ranked per flow.
        fn new(switch: SharedSwitch) -> Self {
            Bench::ranked(switch, false)
        }

        fn ranked(switch: SharedSwitch, per_packet: bool) -> Self {
            let ranks = Arc::new(FlowRanks::new([
                (10_000, Psn::ZERO, 1_000),
                (2_000, Psn::ZERO, 1_000),
                (50_000, Psn::ZERO, 1_000),
            ]));
            Bench {
                switch: switch.with_srpt(ranks, per_packet),
                packets: Packets::default(),
            }
        }

        /// Lossy without an egress threshold: only a full buffer of `buffer` bytes drops.
        fn lossy(buffer: u64) -> Self {
            Bench::new(SharedSwitch::new(3, buffer, 1.0, None, None, None))
        }

        fn admit(&mut self, input: usize, flow: u32, n: u32) -> Outcome {
            let mut p = test_packet(flow, 100);
            p.pkt.psn = Psn::new(n);
            let id = self.packets.alloc(p, false);
            let admit = self.switch.admit_data(&mut self.packets, input, 2, id);
            if admit != Admit::Dropped {
                return (admit, vec![]);
            }
            let Some(mut e) = self.switch.make_room(&mut self.packets, (input, 2), id) else {
                self.packets.free(id);
                return (Admit::Dropped, vec![]);
            };
            assert_eq!(e.resume, Resume::NONE);
            (e.admit, free_all(&mut self.packets, &mut e.evicted))
        }

        /// Everything output 2 sends, as (flow, PSN).
        fn sent(&mut self) -> Vec<(u32, u32)> {
            let mut sent = vec![];
            while let Some((id, _)) = self.switch.dequeue(&mut self.packets, 2, false) {
                let p = self.packets.free(id);
                sent.push((p.flow.0, p.pkt.psn.value()));
            }
            sent
        }
    }

    /// Frees the packets of `q`, returning their (flow, PSN)s in order.
    fn free_all(packets: &mut Packets, q: &mut Fifo) -> Vec<(u32, u32)> {
        let mut gone = vec![];
        while let Some(v) = packets.pop(q) {
            let p = packets.free(v);
            gone.push((p.flow.0, p.pkt.psn.value()));
        }
        gone
    }

    #[test]
    fn ranks_are_the_bytes_left_from_the_packet_on() {
        let ranks = FlowRanks::new([(2_500, Psn::new(5), 1_000)]);
        let rank = |n| {
            let mut p = test_packet(0, 100);
            p.pkt.psn = Psn::new(n);
            ranks.rank(&p)
        };
        assert_eq!([rank(5), rank(6), rank(7)], [2_500, 1_500, 500]);
        // Outside the flow's PSNs (a verbs response): the whole flow.
        assert_eq!(rank(4), 2_500);
    }

    /// The long flow's packets 0..3 (ranks 10 000..7 000) queue first, then the short flow's
    /// two (2 000, 1 000): the short flow leaves first, then the long one in PSN order.
    #[test]
    fn the_short_flow_goes_first_and_the_long_one_stays_in_order() {
        let mut s = Bench::lossy(100_000);
        for (flow, n) in [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1)] {
            assert_eq!(
                s.admit(usize::from(flow == 1), flow, n),
                (Admit::Queued, vec![])
            );
        }
        assert_eq!(s.sent(), [(1, 0), (1, 1), (0, 0), (0, 1), (0, 2), (0, 3)]);
    }

    /// Ranked per packet, the same arrivals leave sorted by their own ranks: the short flow's
    /// packet 1 (1 000) before its packet 0 (2 000), then the long flow's in reverse, 3 (7 000)
    /// to 0 (10 000): each flow's burst leaves reversed.
    #[test]
    fn ranked_per_packet_a_flows_later_packets_overtake_its_earlier_ones() {
        let mut s = Bench::ranked(SharedSwitch::new(3, 100_000, 1.0, None, None, None), true);
        for (flow, n) in [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1)] {
            assert_eq!(
                s.admit(usize::from(flow == 1), flow, n),
                (Admit::Queued, vec![])
            );
        }
        assert_eq!(s.sent(), [(1, 1), (1, 0), (0, 3), (0, 2), (0, 1), (0, 0)]);
    }

    /// Ranked per packet, a retransmission keeps its own rank: the long flow's packet 0
    /// (10 000) in a full 300 B buffer behind its packets 1 and 2 (9 000, 8 000) and the short
    /// flow's 0 (2 000) ranks worst and is dropped, evicting nothing, where ranked per flow it
    /// would rank 8 000 and evict packet 1.
    #[test]
    fn ranked_per_packet_a_retransmission_keeps_its_own_rank() {
        let mut s = Bench::ranked(SharedSwitch::new(3, 300, 1.0, None, None, None), true);
        for (input, flow, n) in [(0, 0, 1), (0, 0, 2), (1, 1, 0)] {
            assert_eq!(s.admit(input, flow, n), (Admit::Queued, vec![]));
        }
        assert_eq!(s.admit(0, 0, 0), (Admit::Dropped, vec![]));
        assert_eq!(s.sent(), [(1, 0), (0, 2), (0, 1)]);
        let mut s = Bench::lossy(300);
        for (input, flow, n) in [(0, 0, 1), (0, 0, 2), (1, 1, 0)] {
            s.admit(input, flow, n);
        }
        assert_eq!(s.admit(0, 0, 0), (Admit::Queued, vec![(0, 1)]));
    }

    /// A flow is served by its best-ranked packet but sends its earliest: a retransmission of
    /// the long flow's packet 0 (rank 10 000) queued behind its packet 5 (5 000) leaves first.
    #[test]
    fn a_flow_sends_its_earliest_queued_packet() {
        let mut s = Bench::lossy(100_000);
        s.admit(0, 0, 5);
        s.admit(0, 0, 0);
        s.admit(1, 1, 0);
        assert_eq!(s.sent(), [(1, 0), (0, 5), (0, 0)]);
    }

    /// A 400 B buffer holds four 100 B packets. The long flow's packets 0..3 (ranks
    /// 10 000..7 000) fill it. The short flow's packet 0 (2 000) evicts the worst queued packet,
    /// the long flow's 0 (10 000); its packet 1 (1 000) evicts the long flow's 1 (9 000); each
    /// eviction is a drop. Flow 2's first packet (50 000) ranks below everything queued and is
    /// dropped itself, evicting nothing. A retransmission of the long flow's packet 0 ranks
    /// 7 000, not its own 10 000, as its flow's queued packets do (a flow's rank never rises):
    /// it evicts the long flow's packet 2 (8 000) and leaves last.
    #[test]
    fn a_full_buffer_drops_the_worst_ranked_packet() {
        let mut s = Bench::lossy(400);
        for n in 0..4 {
            assert_eq!(s.admit(0, 0, n), (Admit::Queued, vec![]));
        }
        assert_eq!(s.admit(1, 1, 0), (Admit::Queued, vec![(0, 0)]));
        assert_eq!(s.admit(1, 1, 1), (Admit::Queued, vec![(0, 1)]));
        assert_eq!(s.switch.drops[2], 2);
        assert_eq!(s.admit(0, 2, 0), (Admit::Dropped, vec![]));
        assert_eq!(s.switch.drops[2], 3);
        assert_eq!(s.admit(0, 0, 0), (Admit::Queued, vec![(0, 2)]));
        assert_eq!(s.switch.drops[2], 4);
        assert_eq!(s.switch.shared_used, 400);
        assert_eq!(s.sent(), [(1, 0), (1, 1), (0, 3), (0, 0)]);
        assert_eq!(s.switch.shared_used, 0);
    }

    /// A packet that needs two victims' room takes both, the worst first; one that would
    /// need more than all the worse-ranked packets hold changes nothing.
    #[test]
    fn eviction_takes_as_many_as_it_needs_or_none() {
        let mut s = Bench::lossy(300);
        // 100 B each: the long flow's 0 and 1, then the short flow's 0.
        for (input, flow, n) in [(0, 0, 0), (0, 0, 1), (1, 1, 0)] {
            assert_eq!(s.admit(input, flow, n), (Admit::Queued, vec![]));
        }
        // A 200 B packet of the short flow (rank 1 000) needs 200 B: both long packets go, and
        // the short flow's packet 0 (rank 2 000, also worse) stays.
        let mut big = test_packet(1, 200);
        big.pkt.psn = Psn::new(1);
        let id = s.packets.alloc(big, false);
        assert_eq!(
            s.switch.admit_data(&mut s.packets, 1, 2, id),
            Admit::Dropped
        );
        let e = s.switch.make_room(&mut s.packets, (1, 2), id).unwrap();
        assert_eq!(e.admit, Admit::Queued);
        let mut evicted = e.evicted;
        assert_eq!(free_all(&mut s.packets, &mut evicted), [(0, 0), (0, 1)]);
        assert_eq!(s.switch.shared_used, 300);
        // A 400 B packet can never fit in 300 B: nothing moves.
        let id = s.packets.alloc(test_packet(1, 400), false);
        assert_eq!(
            s.switch.admit_data(&mut s.packets, 1, 2, id),
            Admit::Dropped
        );
        assert!(s.switch.make_room(&mut s.packets, (1, 2), id).is_none());
        assert_eq!((s.switch.shared_used, s.switch.drops[2]), (300, 3));
        // The short flow sends its earliest queued packet first, whatever its ranks.
        assert_eq!(s.sent(), [(1, 0), (1, 1)]);
    }

    /// With PFC (300 B headroom per input, a 1 900 B buffer: a 1 000 B pool, alpha 1/8, so a
    /// share of at most 125 B), input 0's long-flow packets 0..3 take 100 B of share and 300 B
    /// of headroom (pausing at the second), so its headroom is full. Its short-flow packet
    /// evicts the long flow's packet 0: the input's room is given back and the packet takes
    /// it, and the accounting drains to zero.
    #[test]
    fn eviction_gives_the_evicted_packets_input_its_room_back() {
        let headroom = |_: usize| 300u64;
        let pfc = Some((&headroom as &dyn Fn(usize) -> u64, 50));
        let mut s = Bench::new(SharedSwitch::new(3, 1_900, 0.125, None, pfc, None));
        let admits: Vec<Outcome> = (0..4).map(|n| s.admit(0, 0, n)).collect();
        let queued = |a| (a, vec![]);
        assert_eq!(
            admits,
            [
                queued(Admit::Queued),
                queued(Admit::QueuedAndPause),
                queued(Admit::Queued),
                queued(Admit::Queued)
            ]
        );
        assert_eq!(s.switch.inputs[0].headroom_used, 300);
        assert_eq!(s.admit(0, 1, 0), (Admit::Queued, vec![(0, 0)]));
        assert_eq!(s.switch.inputs[0].headroom_used, 300);
        assert_eq!(s.switch.drops[2], 1);
        assert_eq!(s.sent(), [(1, 0), (0, 1), (0, 2), (0, 3)]);
        let inp = s.switch.inputs[0];
        assert_eq!(
            (inp.shared, inp.headroom_used, s.switch.shared_used),
            (0, 0, 0)
        );
    }

    /// Packets of four flows arrive and leave in any interleaving, through a buffer that never
    /// fills or one of ten packets; what leaves is what SRPT defines, checked against a direct
    /// model: the flow holding the best-ranked queued packet sends its earliest queued one, a
    /// packet ranks no worse than its flow's queued packets, and a full buffer evicts the
    /// worst-ranked packet (the latest among equals) if it ranks worse than the arrival, which
    /// is dropped otherwise. Ranked per packet, every packet keeps its own rank and the
    /// best-ranked packet leaves first (the earliest among equals). (Ranks never tie across
    /// flows: the flows' sizes differ by less than a packet.)
    #[test]
    fn the_queue_order_is_srpt() {
        use proptest::prelude::*;
        let op = prop_oneof![
            (0u32..4, 0u32..40).prop_map(Some),
            Just(None), // a dequeue
        ];
        let ops = prop::collection::vec(op, 1..150);
        proptest!(|(ops in ops, small in any::<bool>(), per_packet in any::<bool>())| {
            let sizes = [40_000, 40_003, 40_005, 40_007];
            let ranks = Arc::new(FlowRanks::new(sizes.map(|s| (s, Psn::ZERO, 1_000))));
            let buffer = if small { 1_000 } else { 1 << 30 };
            let mut s = SharedSwitch::new(3, buffer, 1.0, None, None, None)
                .with_srpt(ranks, per_packet);
            let mut packets = Packets::default();
            // The queue as the model sees it: (flow, PSN, rank), in arrival order.
            let mut model: Vec<(u32, u32, u64)> = vec![];
            for op in ops {
                if let Some((flow, n)) = op {
                    let mut p = test_packet(flow, 100);
                    p.pkt.psn = Psn::new(n);
                    let own = sizes[flow as usize] - 1_000 * u64::from(n);
                    let queued = model.iter().filter(|m| m.0 == flow).map(|m| m.2).min();
                    let rank = match queued {
                        Some(q) if !per_packet => q.min(own),
                        _ => own,
                    };
                    let mut want = (Admit::Queued, vec![]);
                    if 100 * (model.len() as u64 + 1) > buffer {
                        let worst = (0..model.len())
                            .filter(|&i| model[i].2 > rank)
                            .max_by_key(|&i| (model[i].2, i));
                        want = match worst {
                            Some(i) => (Admit::Queued, vec![(model[i].0, model[i].1)]),
                            None => (Admit::Dropped, vec![]),
                        };
                        if let Some(i) = worst {
                            model.remove(i);
                        }
                    }
                    if want.0 == Admit::Queued {
                        model.push((flow, n, rank));
                    }
                    let id = packets.alloc(p, false);
                    let mut got = (s.admit_data(&mut packets, 0, 2, id), vec![]);
                    if got.0 == Admit::Dropped {
                        match s.make_room(&mut packets, (0, 2), id) {
                            Some(mut e) => got = (e.admit, free_all(&mut packets, &mut e.evicted)),
                            None => drop(packets.free(id)),
                        }
                    }
                    prop_assert_eq!(got, want);
                    continue;
                }
                let got = s.dequeue(&mut packets, 2, false).map(|(id, _)| {
                    let p = packets.free(id);
                    (p.flow.0, p.pkt.psn.value())
                });
                let best = (0..model.len()).min_by_key(|&i| (model[i].2, i));
                let want = best.map(|i| {
                    // Per flow, the best packet's flow sends its earliest.
                    let flow = model[i].0;
                    let i = if per_packet {
                        i
                    } else {
                        model.iter().position(|m| m.0 == flow).unwrap()
                    };
                    let (flow, n, _) = model.remove(i);
                    (flow, n)
                });
                prop_assert_eq!(got, want);
            }
        });
    }

    /// A FIFO switch never evicts.
    #[test]
    fn fifo_switches_do_not_make_room() {
        let mut s = SharedSwitch::new(3, 100, 1.0, None, None, None);
        let mut packets = Packets::default();
        let id = packets.alloc(test_packet(0, 200), false);
        assert_eq!(s.admit_data(&mut packets, 0, 2, id), Admit::Dropped);
        assert!(s.make_room(&mut packets, (0, 2), id).is_none());
    }
}
