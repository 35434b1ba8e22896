//! ConWeave in the network (`load_balancing.kind = "conweave"`): the simulation's side of
//! `crate::forwarding::conweave`'s state machines.
//!
//! - A data packet of a flow between two ToRs gets its ConWeave header at the source ToR, which
//!   names its path among every shortest path to the destination ToR (the topology's source
//!   routes, `Topology::with_shortest_paths`); later switches follow the path.
//! - At the destination ToR the header is read: the packet goes on towards its host or waits in
//!   its flow's reorder queue, a FIFO in the packet slab, until a `Reorder` event moves it to
//!   its output queue. A held packet is charged to the buffer when it arrives, as in the P4
//!   switch, whose reorder queues are queues of the switch: it can pause its input (PFC), and
//!   it is dropped on arrival if there is no room. With `hold_outside_buffer` it is kept
//!   apart and admitted when its queue flushes, as ConWeave's ns-3 does, where a burst can be
//!   dropped even under PFC.
//! - The destination ToR's RTT replies, CLEARs and NOTIFYs are packets of their own, 64 B on the
//!   wire in the control class (never paused or dropped), addressed to the flow's source host
//!   and taken off the network by its ToR.
//!
//! A packet's header lives in a side table indexed by its slot, marked in the slot itself
//! ([`Packets::conweave`](crate::packets::Packets::conweave)), so a reused slot starts clean.
//! Flows between hosts of one ToR are left alone, as in ConWeave.
//!
//! Choices, as ConWeave's ns-3: data packets carry no extra wire bytes (its header is a
//! simulator tag; the hardware adds 4 B); the base RTT a reply is due within is the
//! propagation over the ToR-to-ToR path, there and back.

use irn_core::packet::{Ecn, PacketKind};
use irn_core::{Duration, Packet, Time};

use super::switches::Paths;
use super::trace::Trace;
use super::Simulation;
use crate::engine::Event;
use crate::forwarding::conweave::{
    candidate_queues, pick, ConWeaveParams, Reply, RxFlow, Tag, TagKind, TxFlow, Verdict,
};
use crate::forwarding::Balancer;
use crate::ids::{FlowId, HostIdx, PortId};
use crate::metrics::ConWeaveSummary;
use crate::packet::SimPacket;
use crate::packets::{Fifo, PacketId};
use crate::switch::{Admit, Queues};
use crate::topology::Topology;

/// A flow whose hosts share a ToR (ConWeave leaves it alone).
const LOCAL: u32 = u32::MAX;

/// Bytes of a reply or NOTIFY on the wire (ConWeave's ns-3 pads them to 64).
pub const CONTROL_BYTES: u32 = 64;

/// What a packet slot's ConWeave mark says its side-table entry is.
const DATA: u8 = 1;
const REPLY: u8 = 2;
const NOTIFY: u8 = 3;

/// A side-table entry: a data packet's header, a reply, or a NOTIFY's path.
#[derive(Debug, Clone, Copy)]
enum Entry {
    Data(Tag),
    Reply(Reply),
    Notify(u8),
}

/// ConWeave's state in a run.
#[derive(Debug)]
pub(super) struct ConWeaveState {
    params: ConWeaveParams,
    /// Each flow's source and destination ToR (switch indices); `LOCAL` for both when they
    /// are one switch.
    tors: Vec<(u32, u32)>,
    /// Each flow's base RTT: the propagation between its ToRs, there and back.
    base_rtt: Vec<Duration>,
    tx: Vec<TxFlow>,
    rx: Vec<RxFlow>,
    /// Each flow's reorder queue at its destination ToR...
    held: Vec<Fifo>,
    /// ...when it flushes (`Time::MAX`: not held)...
    flush_at: Vec<Time>,
    /// ...and whether its TAIL set that.
    tail_flush: Vec<bool>,
    /// With a limit of reorder queues per port: each port's queues, taken or not...
    queue_taken: Vec<bool>,
    /// ...and the queue each flow holds, among its port's.
    flow_queue: Vec<u16>,
    /// Packet slots' entries, grown with the slab.
    entries: Vec<Entry>,
    /// When each path (by its first route cursor) stops being busy.
    busy_until: Vec<Time>,
    /// With a flow-table limit: entries in use per source ToR (switch index)...
    table_used: Vec<u32>,
    /// ...and whether each flow holds one.
    has_entry: Vec<bool>,
    pub(super) summary: ConWeaveSummary,
}

impl ConWeaveState {
    pub(super) fn new(
        params: ConWeaveParams,
        topology: &Topology,
        flows: &[(HostIdx, HostIdx)],
    ) -> Self {
        // Each host's ToR, by its index among switches.
        let mut row = vec![u32::MAX; topology.node_count()];
        for (i, n) in topology.switches().iter().enumerate() {
            row[n.index()] = i as u32;
        }
        let tors_of_hosts: Vec<u32> = (topology.hosts().iter())
            .map(|&h| {
                let port = topology.node_ports(h).start as usize;
                let switch = topology.ports()[topology.ports()[port].peer.index()].node;
                row[switch.index()]
            })
            .collect();
        let tor = |h: HostIdx| tors_of_hosts[h.index()];
        let tors: Vec<(u32, u32)> = flows
            .iter()
            .map(|&(src, dst)| match (tor(src), tor(dst)) {
                (a, b) if a == b => (LOCAL, LOCAL),
                pair => pair,
            })
            .collect();
        // The ToR-to-ToR propagation, there and back, over the first shortest path.
        let base_rtt = (tors.iter().zip(flows))
            .map(|(&(src_tor, _), &(_, dst))| match src_tor {
                LOCAL => Duration::ZERO,
                _ => {
                    let start = topology.route_starts(src_tor as usize, dst)[0];
                    let one_way = (topology.route_ports(start).iter())
                        .map(|p| topology.ports()[p.index()].delay)
                        .fold(Duration::ZERO, |a, b| a + b);
                    one_way + one_way
                }
            })
            .collect();
        let n = flows.len();
        let routes = topology.route_hop_count();
        ConWeaveState {
            params,
            tors,
            base_rtt,
            tx: vec![TxFlow::default(); n],
            rx: vec![RxFlow::default(); n],
            held: vec![Fifo::default(); n],
            flush_at: vec![Time::MAX; n],
            tail_flush: vec![false; n],
            queue_taken: match params.reorder_queues {
                Some(q) => vec![false; topology.ports().len() * usize::from(q)],
                None => Vec::new(),
            },
            flow_queue: match params.reorder_queues {
                Some(_) => vec![0; n],
                None => Vec::new(),
            },
            entries: Vec::new(),
            busy_until: vec![Time::ZERO; routes],
            table_used: match params.flow_table {
                Some(_) => vec![0; topology.switches().len()],
                None => Vec::new(),
            },
            has_entry: match params.flow_table {
                Some(_) => vec![false; n],
                None => Vec::new(),
            },
            summary: ConWeaveSummary::default(),
        }
    }

    /// A flow's first packet at its source ToR `s`, under a flow-table limit: whether it gets
    /// an entry; if not, ConWeave leaves it alone for good, as a flow between hosts of one ToR.
    fn take_entry(&mut self, s: usize, flow: usize) -> bool {
        let limit = self.params.flow_table.expect("a limit");
        if self.table_used[s] == limit {
            self.tors[flow] = (LOCAL, LOCAL);
            self.summary.flows_untracked += 1;
            return false;
        }
        self.table_used[s] += 1;
        self.has_entry[flow] = true;
        true
    }

    /// Flow `flow`'s next packet at its source ToR `s` at `now`, with only the `live` paths
    /// up: if its path is down, routing moves it to a random live one, unknown to ConWeave.
    #[cold]
    fn leave_failed_path(
        &mut self,
        s: usize,
        flow: usize,
        (now, live): (Time, Paths),
        balancer: &mut Balancer,
    ) {
        let tx = &mut self.tx[flow];
        if !live.has(usize::from(tx.path())) {
            let path = live.nth(balancer.draw(s, live.len())) as u8;
            self.summary.failovers += u64::from(tx.move_off_failed(now, &self.params, path));
        }
    }

    /// Flow `flow` ended: its entry, if it holds one, is free for another flow.
    pub(super) fn release_entry(&mut self, flow: FlowId) {
        if let Some(held) = self.has_entry.get_mut(flow.index()) {
            if std::mem::take(held) {
                self.table_used[self.tors[flow.index()].0 as usize] -= 1;
            }
        }
    }

    fn set(&mut self, id: PacketId, entry: Entry) {
        let i = id.index();
        if i >= self.entries.len() {
            self.entries.resize(i + 1, Entry::Notify(0));
        }
        self.entries[i] = entry;
    }
}

impl<T: Trace> Simulation<'_, T> {
    /// The source ToR `s` routes data packet `id` of its flow: the index of its path among
    /// `starts` (the route cursors of the paths to the destination ToR), which the packet
    /// carries in its header, taken among the `live` ones (the paths up; `None`: all). `None` when
    /// ConWeave does not route it (not data, or not from this ToR), to leave the choice to the
    /// balancer.
    #[inline(never)]
    pub(super) fn conweave_route(
        &mut self,
        s: usize,
        id: PacketId,
        starts: &[u32],
        live: Option<Paths>,
    ) -> Option<usize> {
        let pkt = *self.packets.get(id);
        let cw = self.conweave.as_deref_mut()?;
        let (flow, now) = (pkt.flow.index(), self.now);
        if !pkt.is_data() || cw.tors[flow].0 != s as u32 {
            return None;
        }
        if cw.params.flow_table.is_some() && !cw.tx[flow].is_known() && !cw.take_entry(s, flow) {
            return None;
        }
        let live = live.filter(|_| !cw.params.static_paths);
        if let Some(live) = live {
            cw.leave_failed_path(s, flow, (now, live), &mut self.balancer);
        }
        let base_rtt = cw.base_rtt[flow];
        let balancer = &mut self.balancer;
        let mut draw = || match live {
            None => balancer.draw(s, starts.len()),
            Some(live) => live.nth(balancer.draw(s, live.len())),
        };
        let tx = &mut cw.tx[flow];
        let busy = &cw.busy_until;
        let choose = || pick((draw(), draw()), |i| busy[starts[i] as usize] <= now);
        let tag = tx.on_data(now, &cw.params, base_rtt, choose);
        let next_path = tx.path();
        match tag.kind {
            TagKind::Init => cw.summary.epochs += 1,
            TagKind::Tail => cw.summary.reroutes += 1,
            TagKind::Data => {}
        }
        cw.set(id, Entry::Data(tag));
        self.packets.set_conweave(id, DATA);
        if T::ON && tag.kind == TagKind::Tail && self.packets.traced(id) {
            self.trace_reroute(s, id, (tag.path, next_path), tag.epoch);
        }
        Some(usize::from(tag.path))
    }

    /// Packet `id` arrived at switch `s` on `ingress` (local `input`): whether ConWeave took
    /// it: a reply or NOTIFY reaching its source ToR (consumed), or a data packet its
    /// destination ToR holds. A data packet it lets go on is answered first, as due.
    #[inline(never)]
    pub(super) fn conweave_intercepts(
        &mut self,
        s: usize,
        (ingress, input): (PortId, usize),
        id: PacketId,
    ) -> bool {
        let mark = self.packets.conweave(id);
        if mark == 0 {
            return false;
        }
        let pkt = *self.packets.get(id);
        let flow = pkt.flow.index();
        let now = self.now;
        let cw = self.conweave.as_deref_mut().expect("ConWeave runs");
        let (src_tor, dst_tor) = cw.tors[flow];
        let entry = cw.entries[id.index()];
        match (mark, entry) {
            (REPLY, Entry::Reply(reply)) if src_tor == s as u32 => {
                cw.tx[flow].on_reply(now, reply);
            }
            (NOTIFY, Entry::Notify(path)) if src_tor == s as u32 => {
                let dst = self.cfg.flows[flow].dst;
                let start = self.cfg.topology.route_starts(s, dst)[usize::from(path)];
                cw.busy_until[start as usize] = now + cw.params.path_busy;
            }
            (DATA, Entry::Data(tag)) if dst_tor == s as u32 => {
                self.packets.set_conweave(id, 0);
                return self.conweave_arrive(s, (ingress, input), id, tag);
            }
            _ => return false,
        }
        self.packets.free(id);
        true
    }

    /// Data packet `id` of a flow reached its destination ToR `s` with header `tag`: answered,
    /// then held or let go (false).
    fn conweave_arrive(&mut self, s: usize, from: (PortId, usize), id: PacketId, tag: Tag) -> bool {
        let pkt = *self.packets.get(id);
        let flow = pkt.flow;
        let cw = self.conweave.as_deref_mut().expect("ConWeave runs");
        let mut verdict = cw.rx[flow.index()].on_data(self.now, &cw.params, &tag);
        // The packet that opens a reorder queue is the one held with a deadline.
        let opens = verdict.hold && verdict.flush_at.is_some();
        if opens && cw.params.reorder_queues.is_some() {
            verdict = self.conweave_take_queue(s, from, id, verdict);
        }
        let cw = self.conweave.as_deref_mut().expect("ConWeave runs");
        if let Some(at) = verdict.flush_at {
            cw.flush_at[flow.index()] = at;
            cw.tail_flush[flow.index()] = tag.kind == TagKind::Tail;
            self.queue.schedule(at, Event::Reorder(flow));
        }
        let outside = cw.params.hold_outside_buffer;
        if verdict.hold && (outside || self.conweave_charge(s, from, id)) {
            let cw = self.conweave.as_deref_mut().expect("ConWeave runs");
            cw.summary.held_packets += 1;
            self.packets.set_input(id, from.1);
            self.packets.push(&mut cw.held[flow.index()], id);
            if T::ON && self.packets.traced(id) {
                let flush_at = cw.flush_at[flow.index()];
                let (out, _) = self.host_output(s, from.0 .0 - from.1 as u32, id);
                self.trace_hold(out, id, flush_at);
            }
        }
        if let Some(reply) = verdict.reply {
            self.conweave_send(s, from, (pkt, Entry::Reply(reply)));
        }
        let marked = matches!(pkt.pkt.kind, PacketKind::Data { ecn: Ecn::Ce, .. });
        if verdict.may_notify && marked {
            self.conweave_send(s, from, (pkt, Entry::Notify(tag.path)));
        }
        verdict.hold
    }

    /// The first packet of a reorder queue at switch `s`, under a limit of queues per port:
    /// takes one of its output's queues, or, when none is free, goes on out of order, the
    /// flow's reordering given up as if flushed (the P4 switch's fallback: it resets the flow's
    /// reorder state and forwards the packet).
    fn conweave_take_queue(
        &mut self,
        s: usize,
        (ingress, input): (PortId, usize),
        id: PacketId,
        mut verdict: Verdict,
    ) -> Verdict {
        let (out, _) = self.host_output(s, ingress.0 - input as u32, id);
        let flow = self.packets.get(id).flow.index();
        let cw = self.conweave.as_deref_mut().expect("ConWeave runs");
        let limit = usize::from(cw.params.reorder_queues.expect("a limit"));
        let taken = &mut cw.queue_taken[out.index() * limit..][..limit];
        let free = match cw.params.reorder_queue_groups {
            None => taken.iter().position(|&t| !t),
            Some(groups) => candidate_queues(flow, limit, groups).find(|&q| !taken[q]),
        };
        if let Some(q) = free {
            taken[q] = true;
            cw.flow_queue[flow] = q as u16;
            return verdict;
        }
        cw.summary.queues_exhausted += 1;
        cw.rx[flow].on_flush();
        verdict.hold = false;
        verdict.flush_at = None;
        verdict
    }

    /// Charges data packet `id`, about to be held at switch `s`, to the buffer of the input it
    /// came in on (`from`) and its output to the host: whether it fits (else it is dropped, as
    /// an arrival without room is, and counted; a pause is sent if its input needs one).
    fn conweave_charge(
        &mut self,
        s: usize,
        (ingress, input): (PortId, usize),
        id: PacketId,
    ) -> bool {
        let (out, output) = self.host_output(s, ingress.0 - input as u32, id);
        let bytes = u64::from(self.packets.get(id).wire_bytes);
        let admit = self.switches[s].charge(input, output, bytes);
        if T::ON && admit == Admit::Dropped && self.packets.traced(id) {
            self.trace_drop(out, id);
        }
        self.admitted(admit, ingress, id)
    }

    /// Packet `id`'s output port at its destination ToR `s` (ports from `first`), and its
    /// local number.
    fn host_output(&self, s: usize, first: u32, id: PacketId) -> (PortId, usize) {
        let out = self.routing.next_hops_at_row(s, self.packets.get(id).dst)[0];
        (out, (out.0 - first) as usize)
    }

    /// The destination ToR `s` answers data packet `data` with `entry`, a packet of its own
    /// to the flow's source host, entering `s`'s forwarding as if it had come in `from`.
    #[inline(never)]
    fn conweave_send(
        &mut self,
        s: usize,
        from: (PortId, usize),
        (data, entry): (SimPacket, Entry),
    ) {
        let flow = data.flow;
        let packet = SimPacket {
            pkt: Packet {
                dest_qp: data.pkt.dest_qp,
                psn: data.pkt.psn,
                kind: PacketKind::Cnp,
            },
            flow,
            dst: self.cfg.flows[flow.index()].src,
            verbs: None,
            wire_bytes: CONTROL_BYTES,
        };
        let id = self.packets.alloc(packet, false);
        let cw = self.conweave.as_deref_mut().expect("ConWeave runs");
        let mark = match entry {
            Entry::Notify(_) => {
                cw.summary.notifies += 1;
                NOTIFY
            }
            _ => {
                cw.summary.replies += 1;
                REPLY
            }
        };
        cw.summary.control_bytes += u64::from(CONTROL_BYTES);
        cw.set(id, entry);
        self.packets.set_conweave(id, mark);
        self.switch_forward(s, from.0, from.1, id);
    }

    /// `Event::Reorder`: `flow`'s reorder queue flushes if this is still its time: its
    /// packets go on from its destination ToR in the order they came.
    pub(super) fn conweave_flush(&mut self, flow: FlowId) {
        let cw = self.conweave.as_deref_mut().expect("ConWeave runs");
        let f = flow.index();
        if cw.flush_at[f] != self.now {
            return;
        }
        cw.flush_at[f] = Time::MAX;
        let by = if cw.tail_flush[f] {
            cw.summary.flushed_by_tail += 1;
            "tail"
        } else {
            cw.summary.flushed_by_timer += 1;
            "timer"
        };
        cw.rx[f].on_flush();
        let mut held = std::mem::take(&mut cw.held[f]);
        let s = cw.tors[f].1 as usize;
        let topology = &self.cfg.topology;
        let first = topology.node_ports(topology.switches()[s]).start;
        if let Some(limit) = cw.params.reorder_queues {
            // The queue the flow took at its host's port (its first held packet's output).
            let dst = self.cfg.flows[f].dst;
            let out = self.routing.next_hops_at_row(s, dst)[0];
            let q = out.index() * usize::from(limit) + usize::from(cw.flow_queue[f]);
            cw.queue_taken[q] = false;
        }
        let outside = cw.params.hold_outside_buffer;
        let mut to = None;
        while let Some(id) = self.packets.pop(&mut held) {
            let input = self.packets.input(id);
            let (out, output) = self.host_output(s, first, id);
            if T::ON && self.packets.traced(id) {
                self.trace_release(out, id, by);
            }
            if outside {
                // Admitted now, as it would have been on arrival: it may be dropped, or pause
                // its input.
                let switch = &mut self.switches[s];
                let admit = switch.admit_data(&mut self.packets, input, output, id);
                self.trace_admission(admit, out, id);
                if !self.admitted(admit, PortId(first + input as u32), id) {
                    continue;
                }
            } else {
                self.switches[s].enqueue_charged(&mut self.packets, input, output, id);
            }
            if T::ON && self.packets.traced(id) {
                self.trace_enqueue(s, out, output, id);
            }
            to = Some((out, output));
        }
        // A flow's packets all leave for its host.
        if let Some((out, output)) = to {
            self.switch_send(out, s, output);
        }
    }
}
