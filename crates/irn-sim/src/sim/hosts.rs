//! A host's side of the packet path: its NIC (control packets first, then the ready flows
//! round-robin), the flows' `irn-core` endpoints (a sender and a receiver per message flow, or
//! a verbs queue pair on each host), their timers, and what a flow leaves behind when it ends.

use std::collections::VecDeque;

use irn_core::ordering::{OrderingLayer, WriteLast};
use irn_core::packet::Qpn;
use irn_core::transport::{Acks, Requester, TransportConfig};
use irn_core::{Packet, Receiver, Time};

use super::flow_timer::FlowTimer;
use super::telemetry::IntTable;
use super::trace::Trace;
use super::Simulation;
use crate::config::SimConfig;
use crate::engine::Event;
use crate::ids::{FlowId, HostIdx, PortId};
use crate::metrics::ControlBytes;
use crate::packet::SimPacket;
use crate::packets::{Fifo, PacketId, Packets};
use crate::verbs_flow::{self, Side, VerbsFlow, VerbsPackets};

/// A host's NIC: one port, control packets first, then the flows that may send, round-robin.
/// In a cache line of its own: at 48 bytes, half the NICs spanned two lines.
#[derive(Debug)]
#[repr(align(64))]
pub(super) struct Nic {
    pub(super) port: PortId,
    /// ACKs, NACKs and CNPs waiting in the packet slab.
    pub(super) control: Fifo,
    /// Flows that may have a packet to send, in round-robin order.
    pub(super) ready: VecDeque<FlowId>,
}

/// A flow's two ends while it runs. Always boxed (in [`Flow::qp`]), so its size costs nothing
/// in the flow table; the verbs variant, four times the size of the other, is boxed again so a
/// message flow allocates only what it uses.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub(super) enum Endpoints {
    /// One message on the transport alone: the sender at the source, the receiver at the
    /// destination.
    Message {
        sender: Requester,
        receiver: Receiver,
    },
    /// One verb between a verbs queue pair on each host.
    Verbs(Box<VerbsFlow>),
}

/// What the packet path reads and writes of a flow, in one cache line; the rest of its
/// description is its [`FlowSpec`](crate::workload::FlowSpec) in the configuration, and its
/// counters are in [`FlowCounts`], written once when it ends.
#[derive(Debug)]
#[repr(align(64))]
pub(super) struct Flow {
    /// Live from the flow's start until it has ended and none of its data packets is left in
    /// the network ([`in_flight`](Self::in_flight)); then dropped to free its bitmaps.
    pub(super) qp: Option<Box<Endpoints>>,
    /// Its live timer event (an early one re-reads the sender's deadline; others are stale and
    /// ignored).
    pub(super) timer: FlowTimer,
    pub(super) received_at: When,
    pub(super) acked_at: When,
    pub(super) src: HostIdx,
    pub(super) dst: HostIdx,
    /// On its source's (index 0) and destination's (index 1) NIC ready list.
    pub(super) in_ready: [bool; 2],
    /// Traced (`--trace-flow`): its packets are marked so in the slab when they are made.
    pub(super) traced: bool,
    /// Both ends are done: the sender is gone (what comes for it is dropped), while the
    /// receiver still answers the data packets that reach it, as a receive queue pair does.
    pub(super) ended: bool,
    /// Its data packets sent and neither delivered nor dropped yet. An ended flow keeps its
    /// endpoints until none is left: the receiver's answer to a late duplicate then depends
    /// only on what reached it, never on when the sender, possibly in another partition of
    /// the run, saw the end.
    pub(super) in_flight: u32,
}

const _: () = assert!(std::mem::size_of::<Flow>() == 64);

impl Flow {
    /// Started and not yet ended (a flow whose transport refused its message never runs).
    pub(super) fn running(&self) -> bool {
        self.qp.is_some() && !self.ended
    }
}

/// A flow's endpoints `qp` for what its sender does, which ends with the flow (`ended`): what
/// comes for the sender after that is dropped. A function of the fields, so the rest of the
/// flow stays free to borrow.
#[inline(always)]
pub(super) fn sender_side(qp: &mut Option<Box<Endpoints>>, ended: bool) -> Option<&mut Endpoints> {
    if ended {
        None
    } else {
        qp.as_deref_mut()
    }
}

/// An instant that may not have come yet, in the 8 bytes of a [`Time`] (an `Option<Time>`
/// takes 16, which the flow's line has no room for).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct When(Time);

impl When {
    pub(super) const NOT_YET: When = When(Time::MAX);

    pub(super) fn get(self) -> Option<Time> {
        (self != Self::NOT_YET).then_some(self.0)
    }

    pub(super) fn is_some(self) -> bool {
        self != Self::NOT_YET
    }

    pub(super) fn is_none(self) -> bool {
        self == Self::NOT_YET
    }

    pub(super) fn set(&mut self, at: Time) {
        debug_assert!(at != Time::MAX, "an instant before the end of time");
        self.0 = at;
    }

    /// [`set`](Self::set) unless it is set already.
    pub(super) fn set_once(&mut self, at: Time) {
        if self.is_none() {
            self.set(at);
        }
    }
}

/// A flow's counters, taken from its endpoints when they go away.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct FlowCounts {
    pub(super) retransmissions: u64,
    pub(super) timeouts: u64,
    pub(super) min_rate_bps: Option<u64>,
    pub(super) min_window: Option<u32>,
    pub(super) out_of_order: u64,
    pub(super) max_reorder_distance: u64,
    pub(super) recoveries: u64,
    pub(super) nacks: u64,
    /// Packets its ordering layer dropped because the NIC's connection limit, or its pool,
    /// refused the connection's state record or blocks.
    pub(super) refused_connections: u64,
    pub(super) refused_pool: u64,
}

impl<T: Trace> Simulation<'_, T> {
    /// [`try_send`](Self::try_send) for host `h`'s NIC port `p`.
    #[inline]
    pub(super) fn nic_send(&mut self, p: PortId, h: HostIdx) {
        if self.now < self.ports[p.index()].busy_until {
            return self.wake_when_done(p);
        }
        if let Some(pkt) = self.nic_next(h) {
            let nic = &self.nics[h.index()];
            // A NIC with ready flows may have more; finding out costs a poll, so just wake.
            let more = !nic.control.is_empty() || !nic.ready.is_empty();
            self.transmit(p, pkt, more);
        }
    }

    /// The NIC's next packet: control first, then (unless paused) the ready flows round-robin.
    #[inline]
    pub(super) fn nic_next(&mut self, h: HostIdx) -> Option<PacketId> {
        let nic = &mut self.nics[h.index()];
        if let Some(p) = self.packets.pop(&mut nic.control) {
            return Some(p);
        }
        if self.ports[nic.port.index()].paused {
            return None;
        }
        let now = self.now;
        for _ in 0..nic.ready.len() {
            let f = nic.ready.pop_front()?;
            let flow = &mut self.flows[f.index()];
            let side = if flow.src == h { Side::Src } else { Side::Dst };
            let sent = match sender_side(&mut flow.qp, flow.ended) {
                None => None,
                Some(Endpoints::Message { sender, .. }) => {
                    sender.poll_transmit(now).map(|pkt| SimPacket {
                        wire_bytes: self.cfg.framing.wire_len(&pkt) + self.cfg.extra_header_bytes,
                        pkt,
                        flow: f,
                        dst: flow.dst,
                        verbs: None,
                    })
                }
                Some(Endpoints::Verbs(v)) => v.qp_mut(side).poll_transmit(now).map(|pkt| {
                    let to = if side == Side::Src {
                        flow.dst
                    } else {
                        flow.src
                    };
                    wrap_verbs(&mut self.verbs_packets, self.cfg, pkt, f, to)
                }),
            };
            match sent {
                Some(sim) => {
                    nic.ready.push_back(f);
                    if sim.is_data() {
                        self.counters.data_packets_sent += 1;
                        flow.in_flight += 1;
                    }
                    let traced = T::ON && flow.traced;
                    let data = sim.is_data();
                    self.sync_timer(f);
                    let id = self.packets.alloc(sim, traced);
                    if T::INT && data {
                        self.int_start(id);
                    }
                    return Some(id);
                }
                None => flow.in_ready[side as usize] = false,
            }
        }
        None
    }

    /// Put a flow on the NIC of its `side`'s host and kick the NIC. Out of line: inlined into
    /// the event loop (which a new event's arm tipped it into) the leaf-spine benchmark's first
    /// 200 µs took 1.7 % more instructions.
    #[inline(never)]
    pub(super) fn make_ready(&mut self, f: FlowId, side: Side) {
        let flow = &mut self.flows[f.index()];
        let host = match side {
            Side::Src => flow.src,
            Side::Dst => flow.dst,
        };
        if !flow.in_ready[side as usize] {
            flow.in_ready[side as usize] = true;
            self.nics[host.index()].ready.push_back(f);
        }
        self.nic_send(self.nics[host.index()].port, host);
    }

    #[inline]
    pub(super) fn host_receive(&mut self, h: HostIdx, pkt: SimPacket) {
        let f = pkt.flow;
        let now = self.now;
        let flow = &mut self.flows[f.index()];
        let verbs = pkt.verbs.and_then(|slot| self.verbs_packets.take(slot));
        if pkt.is_data() {
            flow.in_flight -= 1;
        }
        let Some(ends) = flow.qp.as_deref_mut() else {
            // A verbs flow that ended: a late duplicate or spurious retransmission.
            return;
        };
        let nic = &mut self.nics[h.index()];
        match ends {
            Endpoints::Message { sender, receiver } => {
                if pkt.is_data() {
                    if self.ordered {
                        return self.ordered_receive(h, pkt);
                    }
                    receiver.handle_packet(now, &pkt.pkt);
                    while let Some(reply) = receiver.poll_transmit(now) {
                        let to = (f, flow.src, T::ON && flow.traced);
                        let control = (&mut self.packets, &mut self.counters.control_bytes);
                        let id = queue_reply(
                            control,
                            &mut nic.control,
                            reply,
                            self.cfg.framing.reply,
                            to,
                        );
                        if T::INT {
                            let control = (&mut self.packets, &mut self.counters.control_bytes);
                            echo_int(self.int.as_deref_mut(), control, id);
                        }
                    }
                    let received = receiver.poll_completion().is_some();
                    if received {
                        flow.received_at.set(now);
                    }
                    let port = nic.port;
                    self.nic_send(port, h);
                    if received && self.releases.is_some() {
                        self.flow_received(f, now);
                    }
                } else {
                    if flow.ended {
                        return; // the sender is gone
                    }
                    if let Some(table) = self.int.as_deref().filter(|_| T::INT) {
                        sender.handle_telemetry(table.arrived());
                    }
                    sender.handle_packet(now, &pkt.pkt);
                    if sender.poll_completion().is_some() {
                        flow.acked_at.set(now);
                    }
                    self.sync_timer(f);
                    self.make_ready(f, Side::Src);
                }
            }
            Endpoints::Verbs(v) => {
                let Some(mut verbs) = verbs else { return };
                verbs_flow::take_marks(&pkt.pkt, &mut verbs);
                let (side, peer) = if h == flow.src {
                    (Side::Src, flow.dst)
                } else {
                    (Side::Dst, flow.src)
                };
                let qp = v.qp_mut(side);
                qp.handle_packet(now, &verbs);
                while let Some(reply) = qp.poll_control() {
                    let reply = wrap_verbs(&mut self.verbs_packets, self.cfg, reply, f, peer);
                    if reply.pkt.is_data() {
                        flow.in_flight += 1;
                    } else {
                        self.counters
                            .control_bytes
                            .add(&reply.pkt, reply.wire_bytes);
                    }
                    let id = self.packets.alloc(reply, T::ON && flow.traced);
                    self.packets.push(&mut nic.control, id);
                }
                let (received, acked) = v.progress();
                let newly_received = received && flow.received_at.is_none();
                if newly_received {
                    flow.received_at.set(now);
                }
                if acked {
                    flow.acked_at.set_once(now);
                }
                self.sync_timer(f);
                self.make_ready(f, side);
                if newly_received && self.releases.is_some() {
                    self.flow_received(f, now);
                }
            }
        }
        self.finish_if_done(f, h);
    }

    /// [`host_receive`](Self::host_receive) of a data packet when the NICs run an ordering
    /// layer: it goes to the flow's layer, with this NIC's ordering memory, which is given back
    /// once the message is complete (Eunomia's garbage collection, §3.5.3). Out of line, so
    /// runs without a layer keep the packet path they had.
    #[cold]
    #[inline(never)]
    fn ordered_receive(&mut self, h: HostIdx, pkt: SimPacket) {
        let (f, now) = (pkt.flow, self.now);
        let flow = &mut self.flows[f.index()];
        let (Some(Endpoints::Message { receiver, .. }), Some(layer)) = (
            flow.qp.as_deref_mut(),
            self.layers[f.index()].as_deref_mut(),
        ) else {
            unreachable!("a message flow with data in flight keeps its endpoints and layer");
        };
        let nic = &mut self.nics[h.index()];
        let mut pool = self.ordering_pools.get_mut(h.index());
        layer.handle_packet(now, &pkt.pkt, receiver, pool.as_deref_mut());
        while let Some(reply) = layer.poll_transmit(now, receiver) {
            let to = (f, flow.src, T::ON && flow.traced);
            let control = (&mut self.packets, &mut self.counters.control_bytes);
            let id = queue_reply(control, &mut nic.control, reply, self.cfg.framing.reply, to);
            if T::INT {
                let control = (&mut self.packets, &mut self.counters.control_bytes);
                echo_int(self.int.as_deref_mut(), control, id);
            }
        }
        let mut received = None;
        if receiver.poll_completion().is_some() {
            // A WRITE's last packet staged in host memory is placed this much later.
            let at = now + layer.take_placement_delay();
            flow.received_at.set(at);
            received = Some(at);
            layer.release(pool);
        }
        let port = nic.port;
        self.nic_send(port, h);
        if let Some(at) = received.filter(|_| self.releases.is_some()) {
            self.flow_received(f, at);
        }
        self.finish_if_done(f, h);
    }

    #[inline]
    pub(super) fn timer(&mut self, f: FlowId) {
        let flow = &mut self.flows[f.index()];
        let Some(pending) = flow.timer.fire(self.now) else {
            return; // superseded
        };
        match sender_side(&mut flow.qp, flow.ended) {
            None => return,
            Some(Endpoints::Message { sender, .. }) => sender.handle_timeout(self.now),
            Some(Endpoints::Verbs(v)) => {
                v.handle_timeout(self.now);
                self.make_ready(f, Side::Dst);
            }
        }
        self.sync_timer_after(f, pending);
        self.make_ready(f, Side::Src);
        let flow = &self.flows[f.index()];
        if T::ON && flow.traced {
            // A timeout that sent nothing is traced now.
            self.trace_observe(f, flow.src);
        }
    }

    /// Make sure a timer event is pending no later than the flow's next deadline.
    #[inline]
    pub(super) fn sync_timer(&mut self, f: FlowId) {
        self.sync_timer_after(f, FlowTimer::NONE);
    }

    /// [`sync_timer`](Self::sync_timer) after the flow's timer event ran, with `pending` the
    /// superseded event it may take up ([`FlowTimer::fire`]).
    #[inline]
    fn sync_timer_after(&mut self, f: FlowId, pending: Time) {
        let flow = &mut self.flows[f.index()];
        let deadline = match sender_side(&mut flow.qp, flow.ended).map(|ends| &*ends) {
            None => None,
            Some(Endpoints::Message { sender, .. }) => sender.poll_timeout(),
            Some(Endpoints::Verbs(v)) => v.poll_timeout(),
        };
        let Some(deadline) = deadline else {
            return;
        };
        let deadline = deadline.max(self.now);
        if flow.timer.sync(deadline, pending) {
            self.queue.schedule(deadline, Event::Timer(f));
        }
    }

    /// Starts the next flow of the arrival chain and schedules the one after.
    ///
    /// Out of line: it runs once per flow, and inlined into the event loop its bulk (building
    /// a sender, a receiver and an ordering layer) made the loop keep its own state on the
    /// stack, which cost every event (+1 % instructions on the leaf-spine benchmark).
    #[inline(never)]
    pub(super) fn start_next_flow(&mut self) {
        let i = self.next_flow;
        self.next_flow = self.next_root(i + 1);
        if let Some(next) = self.cfg.flows.get(self.next_flow) {
            self.queue.schedule(next.start, Event::FlowArrival);
        }
        self.start_flow(i);
    }

    /// Starts flow `f` of a partitioned run and schedules the next flow of its partition.
    #[inline(never)]
    pub(super) fn start_in_partition(&mut self, f: FlowId) {
        let next = self.chains.next[f.index()];
        if let Some(spec) = self.cfg.flows.get(next as usize) {
            self.queue
                .schedule(spec.start, Event::FlowStart(FlowId(next)));
        }
        self.start_flow(f.index());
    }

    /// Starts flow `i`: its endpoints, its ordering layer if any, its first packets.
    #[inline(never)]
    pub(super) fn start_flow(&mut self, i: usize) {
        self.flows_started += 1;
        if self.flows_started == self.flows.len() {
            self.delivered_at_last_arrival = Some(self.delivered_by_running_flows());
        }
        if (self.arrivals.as_ref()).is_some_and(|w| i == w.first || i == w.last) {
            let delivered = self.delivered_now();
            if let Some(w) = self.arrivals.as_mut() {
                w.mark(i, self.now, delivered);
            }
        }
        self.note_start(i);
        let qpn = Qpn::new(i as u32);
        let spec = self.cfg.flows[i];
        let cfg = self.cfg.flow_transport(&spec);
        // Sizes (and verbs) are validated when the configuration is built.
        let isn = |space| self.cfg.initial_psn.psn(self.cfg.seed, i, space);
        let (ends, first) = match spec.verb {
            None => {
                let write_last = self.cfg.ordering.write_last;
                let hold = TransportConfig {
                    hold_last_packet: write_last == WriteLast::Sender,
                    ..cfg
                };
                let mut sender = Requester::new(hold, qpn, isn(0));
                if sender.post(spec.size_bytes).is_err() {
                    return;
                }
                let receiver = Receiver::new(cfg, qpn, isn(0));
                if let Some(layer) = self.layers.get_mut(i) {
                    let ordering = &self.cfg.ordering;
                    let mode = ordering.mode;
                    *layer = Some(Box::new(
                        OrderingLayer::new(mode, &receiver, &ordering.config)
                            .with_write_last(write_last)
                            .with_feedback(ordering.feedback),
                    ));
                }
                (Endpoints::Message { sender, receiver }, Side::Src)
            }
            Some(verb) => {
                let Ok(flow) = VerbsFlow::new(cfg, qpn, &spec, [isn(0), isn(1), isn(2), isn(3)])
                else {
                    return;
                };
                let requester = if verb.requester_at_dst() {
                    Side::Dst
                } else {
                    Side::Src
                };
                (Endpoints::Verbs(Box::new(flow)), requester)
            }
        };
        self.flows[i].qp = Some(Box::new(ends));
        if T::ON && self.flows[i].traced {
            self.trace_start(FlowId(i as u32));
        }
        self.make_ready(FlowId(i as u32), first);
    }

    /// Ends flow `f` if both its ends are done: a check on every packet a host receives, so
    /// inlined, with the rare ending apart. (An ended flow comes here too, when its receiver
    /// took a late data packet: its endpoints may then go.)
    /// A traced flow's transport is looked at here, once the packet has been handled (and
    /// before its endpoints go).
    #[inline(always)]
    pub(super) fn finish_if_done(&mut self, f: FlowId, at: HostIdx) {
        if T::ON && self.flows[f.index()].traced {
            self.trace_observe(f, at);
        }
        let flow = &self.flows[f.index()];
        // Without ACKs (`transport.acks = "none"`) the sender never learns: the receiver's
        // completion ends the flow. Read only once the receiver is done.
        if flow.received_at.is_some()
            && (flow.acked_at.is_some() || self.cfg.transport.acks == Acks::None)
        {
            self.end_flow(f);
        }
    }

    /// Flow `f` is done at both ends: the sender goes, and the endpoints with it once none of
    /// its data packets is left to reach the receiver (at once for a verbs flow, whose one
    /// object drives both ends and which is never split across partitions).
    #[inline(never)]
    pub(super) fn end_flow(&mut self, f: FlowId) {
        let flow = &mut self.flows[f.index()];
        if !flow.ended {
            flow.ended = true;
            self.flows_finished += 1;
            if T::PARTS && self.queue.is_partitioned() {
                self.last_end = self.last_end.max(self.now);
                if self.flows_finished == self.flows.len() {
                    // The other partitions run up to the last end, as one global order would.
                    self.queue.stop_before(self.last_end);
                }
            }
        }
        let flow = &self.flows[f.index()];
        if flow.in_flight == 0 || matches!(flow.qp.as_deref(), Some(Endpoints::Verbs(_))) {
            self.release_flow(f);
        }
    }

    /// Frees packet `id`, which leaves the network without reaching its destination (dropped
    /// or lost). An ended flow's endpoints go with its last data packet.
    #[inline]
    pub(super) fn discard(&mut self, id: PacketId) {
        let pkt = self.packets.free(id);
        if let Some(slot) = pkt.verbs {
            self.verbs_packets.take(slot);
        }
        if pkt.is_data() {
            let flow = &mut self.flows[pkt.flow.index()];
            flow.in_flight -= 1;
            if flow.ended && flow.in_flight == 0 {
                self.release_flow(pkt.flow);
            }
        }
    }

    /// Takes ended flow `f`'s counters and frees its endpoints, and drops what else it held
    /// (its ConWeave entry, its ordering layer).
    #[cold]
    #[inline(never)]
    fn release_flow(&mut self, f: FlowId) {
        let Some(ends) = self.flows[f.index()].qp.take() else {
            return;
        };
        self.absorb_stats(f, &ends, true);
        if let Some(cw) = self.conweave.as_deref_mut() {
            cw.release_entry(f);
        }
        self.drop_layer(f);
    }

    /// The bytes each running message flow's receiver has accepted so far, by flow index:
    /// packets kept × MTU, at most the size (a verbs flow counts only once finished, so it is
    /// left out).
    fn delivered_by_running_flows(&self) -> Vec<(usize, u64)> {
        let mtu = u64::from(self.cfg.transport.mtu);
        (self.flows.iter().enumerate())
            .filter(|(_, flow)| !flow.ended)
            .filter_map(|(i, flow)| match flow.qp.as_deref() {
                Some(Endpoints::Message { receiver, .. }) => {
                    let size = self.cfg.flows[i].size_bytes;
                    Some((i, (receiver.stats().packets_accepted * mtu).min(size)))
                }
                _ => None,
            })
            .collect()
    }

    /// The payload every flow's receiver has accepted so far: the flows gone (their counted
    /// `delivered_bytes`), each ended flow whose endpoints are still kept (its late packets in
    /// flight) at its size, and each running message flow's packets kept × MTU (a verbs flow
    /// counts only once finished, as in `delivered_bytes`).
    pub(super) fn delivered_now(&self) -> u64 {
        let mtu = u64::from(self.cfg.transport.mtu);
        let live: u64 = (self.flows.iter().enumerate())
            .map(|(i, flow)| {
                let size = self.cfg.flows[i].size_bytes;
                match flow.qp.as_deref() {
                    Some(_) if flow.ended => size,
                    Some(Endpoints::Message { receiver, .. }) => {
                        (receiver.stats().packets_accepted * mtu).min(size)
                    }
                    _ => 0,
                }
            })
            .sum();
        self.counters.delivered_bytes + live
    }

    /// Jain's index of what the flows still running now delivered since the last flow
    /// arrived (`summary.json`'s `jain_index`); `None` before the last arrival or with fewer
    /// than two such flows.
    pub(super) fn jain_index(&self) -> Option<f64> {
        let before = self.delivered_at_last_arrival.as_deref()?;
        let shares: Vec<u64> = (self.delivered_by_running_flows().into_iter())
            .map(|(i, now)| {
                let then =
                    (before.binary_search_by_key(&i, |&(j, _)| j).ok()).map_or(0, |k| before[k].1);
                now.saturating_sub(then)
            })
            .collect();
        crate::metrics::jain_index(&shares)
    }

    /// Takes a flow's counters when its endpoints go away; a finished verbs flow also has its
    /// data checked.
    #[inline]
    pub(super) fn absorb_stats(&mut self, f: FlowId, ends: &Endpoints, finished: bool) {
        let flow = &mut self.counts[f.index()];
        let duplicates = match ends {
            Endpoints::Message { sender, receiver } => {
                let s = sender.stats();
                flow.retransmissions = s.retransmissions;
                flow.timeouts = s.timeouts;
                flow.min_rate_bps = s.min_rate_bps;
                flow.min_window = s.min_window;
                flow.recoveries = s.recoveries;
                let r = receiver.stats();
                let size = self.cfg.flows[f.index()].size_bytes;
                self.counters.delivered_bytes += if finished {
                    size
                } else {
                    (r.packets_accepted * u64::from(self.cfg.transport.mtu)).min(size)
                };
                (flow.out_of_order, flow.max_reorder_distance) =
                    (r.out_of_order, r.max_reorder_distance);
                flow.nacks = r.nacks_sent;
                // Reordering an ordering layer absorbed never reached the transport, and the
                // NACKs of packets it could not hold are its own.
                if let Some(Some(layer)) = self.layers.get(f.index()) {
                    let l = layer.stats();
                    flow.out_of_order += l.out_of_order;
                    flow.max_reorder_distance =
                        flow.max_reorder_distance.max(l.max_reorder_distance);
                    flow.nacks += l.dropped;
                    if let Some(drops) = self.counters.ordering_drops.as_mut() {
                        *drops += l.dropped;
                    }
                    flow.refused_connections = l.refused_connections;
                    flow.refused_pool = l.refused_pool;
                }
                self.counters.cnps += r.cnps_sent;
                r.duplicates
            }
            Endpoints::Verbs(v) => {
                let c = v.counts();
                flow.retransmissions = c.retransmissions;
                flow.timeouts = c.timeouts;
                flow.min_rate_bps = c.min_rate_bps;
                flow.min_window = c.min_window;
                (flow.out_of_order, flow.max_reorder_distance) =
                    (c.out_of_order, c.max_reorder_distance);
                (flow.recoveries, flow.nacks) = (c.recoveries, c.nacks);
                if finished && !v.data_ok() {
                    self.counters.verbs_data_errors += 1;
                }
                if finished {
                    self.counters.delivered_bytes += self.cfg.flows[f.index()].size_bytes;
                }
                self.counters.cnps += c.cnps;
                c.duplicates
            }
        };
        self.counters.retransmissions += flow.retransmissions;
        self.counters.timeouts += flow.timeouts;
        self.counters.duplicates += duplicates;
        self.counters.out_of_order += flow.out_of_order;
        self.counters.recoveries += flow.recoveries;
        self.counters.nacks += flow.nacks;
    }
}

/// Queues a message flow's receiver's `reply` (ACK, NACK, SACK, CNP), a frame of `bytes`, on
/// its NIC's `control` queue, for flow `f` back to its source `to`, `traced` or not, and counts
/// its bytes; returns its slot.
#[inline(always)]
fn queue_reply(
    (packets, sent): (&mut Packets, &mut ControlBytes),
    control: &mut Fifo,
    reply: Packet,
    bytes: u32,
    (f, to, traced): (FlowId, HostIdx, bool),
) -> PacketId {
    sent.add(&reply, bytes);
    let packet = SimPacket {
        wire_bytes: bytes,
        pkt: reply,
        flow: f,
        dst: to,
        verbs: None,
    };
    let id = packets.alloc(packet, traced);
    packets.push(control, id);
    id
}

/// Reply `id` echoes the INT records of the data packet that triggered it, if the run has
/// any (`table`), and grows by their bytes on the wire, which count as its own.
#[inline(always)]
fn echo_int(
    table: Option<&mut IntTable>,
    (packets, sent): (&mut Packets, &mut ControlBytes),
    id: PacketId,
) {
    if let Some(table) = table {
        let bytes = table.echo(id.index());
        let reply = packets.get_mut(id);
        reply.wire_bytes += bytes;
        sent.add(&reply.pkt, bytes);
    }
}

/// Parks a verbs packet in `slab` and wraps its network view for the trip to host `to`.
fn wrap_verbs(
    slab: &mut VerbsPackets,
    cfg: &SimConfig,
    pkt: irn_core::verbs::VerbsPacket,
    flow: FlowId,
    to: HostIdx,
) -> SimPacket {
    SimPacket {
        wire_bytes: verbs_flow::wire_bytes(&pkt, cfg.verbs_irn_headers),
        pkt: verbs_flow::network_view(&pkt),
        flow,
        dst: to,
        verbs: Some(slab.insert(pkt)),
    }
}
