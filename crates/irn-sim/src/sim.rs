//! The simulated world: hosts, switches and links wired by a topology, driven by the event queue.
//!
//! Every packet hop is one or two events: the link's `Arrive` (propagation over, the last bit is
//! in; store-and-forward), and the sending port's `TxDone` (serialization over) when the port has
//! more to send. Hosts run one
//! `irn-core` sender and receiver per flow — or, for a verbs workload, one verbs queue pair per
//! flow on each host ([`crate::verbs_flow`]); the simulator only moves their packets and timers.

use std::collections::VecDeque;
use std::hint;

use irn_core::packet::Qpn;
use irn_core::transport::Requester;
use irn_core::{Duration, Receiver, Time};

use crate::config::{pfc_headroom_bytes, SimConfig, SwitchModel};
use crate::engine::{Event, EventQueue};
use crate::ids::{FlowId, HostIdx, NodeId, PortId};
use crate::metrics::{FlowRecord, NetworkCounters, RunResult};
use crate::packet::SimPacket;
use crate::packets::{Fifo, PacketId, Packets};
use crate::port::{Owner, OwnerKind, PauseLog, Port, PortExtra};
use crate::rng::{stream, Purpose};
use crate::switch::{Admit, EcnMarker, Queues, SharedSwitch, Switch, VoqSwitch};
use crate::topology::NodeKind;
use crate::verbs_flow::{self, Side, VerbsFlow, VerbsPackets};

use rand::Rng;

/// How far a run has got, for progress bars.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub now: Time,
    /// The time by which the run will surely have stopped (last arrival + drain limit).
    pub horizon: Time,
    pub flows_started: usize,
    pub flows_finished: usize,
    pub flows_total: usize,
    pub events: u64,
    /// This is the run's last report.
    pub done: bool,
}

/// Report progress every this many events.
const PROGRESS_EVERY: u64 = 1 << 16;

/// A host's NIC: one port, control packets first, then the flows that may send, round-robin.
#[derive(Debug)]
struct Nic {
    port: PortId,
    /// ACKs, NACKs and CNPs waiting in the packet slab.
    control: Fifo,
    /// Flows that may have a packet to send, in round-robin order.
    ready: VecDeque<FlowId>,
}

/// A flow's two ends while it runs. Always boxed (in [`Flow::qp`]), so its size costs nothing
/// in the flow table; the verbs variant, four times the size of the other, is boxed again so a
/// message flow allocates only what it uses.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
enum Endpoints {
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
struct Flow {
    /// Live from the flow's start until both ends complete; then dropped to free its bitmaps.
    qp: Option<Box<Endpoints>>,
    /// The time of the timer event scheduled for this flow, or [`Flow::NO_TIMER`]. Later events
    /// for the flow are stale and ignored; an early one re-reads the sender's deadline.
    timer_at: Time,
    received_at: Option<Time>,
    acked_at: Option<Time>,
    src: HostIdx,
    dst: HostIdx,
    /// On its source's (index 0) and destination's (index 1) NIC ready list.
    in_ready: [bool; 2],
}

const _: () = assert!(std::mem::size_of::<Flow>() == 64);

impl Flow {
    const NO_TIMER: Time = Time::MAX;
}

/// A flow's counters, taken from its endpoints when they go away.
#[derive(Debug, Clone, Copy, Default)]
struct FlowCounts {
    retransmissions: u64,
    timeouts: u64,
    min_rate_bps: Option<u64>,
    min_window: Option<u32>,
}

/// One simulation run.
pub struct Simulation<'a> {
    cfg: &'a SimConfig,
    now: Time,
    queue: EventQueue,
    /// Every port, one cache line each: what the packet path needs to know about it.
    ports: Vec<Port>,
    /// Per port: what the packet path rarely needs (exact rate, pause log).
    extra: Vec<PortExtra>,
    /// Every packet waiting in a NIC control queue, on a link or in a switch queue.
    packets: Packets,
    switches: Vec<Switch>,
    nics: Vec<Nic>,
    flows: Vec<Flow>,
    counts: Vec<FlowCounts>,
    next_flow: usize,
    flows_finished: usize,
    counters: NetworkCounters,
    horizon: Time,
    /// Mixed with flow ids for ECMP.
    salt: u32,
    verbs_packets: VerbsPackets,
}

/// 32-bit finalizer of MurmurHash3: spreads flow ids and switch ids over ECMP choices.
fn mix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

impl<'a> Simulation<'a> {
    pub fn new(cfg: &'a SimConfig) -> Self {
        let topo = &cfg.topology;
        let mut owners = Vec::with_capacity(topo.node_count());
        let mut first_port = Vec::with_capacity(topo.node_count());
        let mut switches = Vec::new();
        let mut nics = Vec::new();
        let max_frame = cfg.max_frame_bytes();
        for n in 0..topo.node_count() {
            let node = NodeId(n as u32);
            let range = topo.node_ports(node);
            first_port.push(range.start);
            match topo.kind(node) {
                NodeKind::Host => {
                    let h = topo
                        .host_index(node)
                        .expect("every host node has a host index");
                    owners.push(Owner::host(h));
                    nics.push(Nic {
                        port: PortId(range.start),
                        control: Fifo::default(),
                        ready: VecDeque::new(),
                    });
                }
                NodeKind::Switch => {
                    owners.push(Owner::switch(switches.len()));
                    let ports = &topo.ports()[range.start as usize..range.end as usize];
                    let pfc = cfg.switch.pfc;
                    let buffer = cfg.switch.buffer_bytes;
                    let ecn = cfg.switch.ecn.map(|red| {
                        let seed =
                            stream(cfg.seed, Purpose::EcnMarking, switches.len() as u64).random();
                        EcnMarker::new(red, seed)
                    });
                    switches.push(match cfg.switch.model {
                        SwitchModel::InputQueued => Switch::Voq(VoqSwitch::new(
                            ports.len(),
                            buffer,
                            |i| {
                                pfc.map(|pfc| {
                                    let pause = pfc.threshold.resolve(buffer, &ports[i], max_frame);
                                    (pause, pause.saturating_sub(pfc.resume_gap_bytes))
                                })
                            },
                            ecn,
                        )),
                        SwitchModel::SharedBuffer { alpha } => {
                            let headroom = |i: usize| pfc_headroom_bytes(&ports[i], max_frame);
                            let pfc = pfc
                                .map(|p| (&headroom as &dyn Fn(usize) -> u64, p.resume_gap_bytes));
                            Switch::Shared(SharedSwitch::new(ports.len(), buffer, alpha, pfc, ecn))
                        }
                    });
                }
            }
        }
        // Hosts were pushed in node order; the topology numbers hosts in the same order.
        debug_assert!(topo
            .hosts()
            .iter()
            .enumerate()
            .all(|(i, &n)| topo.host_index(n) == Some(HostIdx(i as u32))));
        // Switches too: the packet path routes by switch index.
        debug_assert!(topo
            .switches()
            .iter()
            .enumerate()
            .all(|(i, &n)| owners[n.index()] == Owner::switch(i)));
        let salt: u32 = stream(cfg.seed, Purpose::EcmpSalt, 0).random();
        let flows = cfg
            .flows
            .iter()
            .map(|spec| Flow {
                qp: None,
                timer_at: Flow::NO_TIMER,
                received_at: None,
                acked_at: None,
                src: spec.src,
                dst: spec.dst,
                in_ready: [false; 2],
            })
            .collect();
        let last_start = cfg.flows.last().map_or(Time::ZERO, |f| f.start);
        // Less than one event per bucket, so few inserts land out of order: a 512th of the
        // fastest link's full-frame time for up to 1024 ports, narrower in proportion for more
        // ports, whose events come that much more densely (a k = 16 fat-tree's 6144 ports spent
        // 9 % of the time sorting crowded buckets at 1/256). Measured on the leaf-spine
        // benchmark: 1/64 cost more than 1/256, and 1/256 2–3 % more than 1/512 (8 % of its
        // inserts went out of order); 1/1024 gained nothing more.
        let frame = topo
            .ports()
            .iter()
            .map(|p| p.rate.serialization(max_frame))
            .min()
            .unwrap_or(Duration::from_ns(100));
        let per_frame = (topo.ports().len().next_power_of_two() / 2).max(512) as u64;
        let bucket_width = Duration::from_ps(frame.as_ps() / per_frame);
        Simulation {
            cfg,
            now: Time::ZERO,
            queue: EventQueue::new(bucket_width),
            ports: topo
                .ports()
                .iter()
                .enumerate()
                .map(|(id, port)| {
                    let node = port.node.index();
                    let local = id - first_port[node] as usize;
                    let far = topo.ports()[port.peer.index()].node.index();
                    let far_local = port.peer.index() - first_port[far] as usize;
                    Port::new(
                        port.node,
                        owners[node],
                        local,
                        (port.peer, owners[far], far_local),
                        port.rate,
                        port.delay,
                    )
                })
                .collect(),
            extra: topo
                .ports()
                .iter()
                .map(|port| PortExtra {
                    rate: port.rate,
                    pauses: PauseLog::default(),
                })
                .collect(),
            packets: Packets::default(),
            switches,
            nics,
            flows,
            counts: vec![FlowCounts::default(); cfg.flows.len()],
            next_flow: 0,
            flows_finished: 0,
            counters: NetworkCounters::default(),
            horizon: last_start + cfg.drain_limit,
            salt,
            verbs_packets: VerbsPackets::default(),
        }
    }

    /// Runs until every flow has finished or the drain limit passes, reporting progress every
    /// 65 536 events.
    pub fn run(mut self, progress: &mut dyn FnMut(Progress)) -> RunResult {
        if let Some(first) = self.cfg.flows.first() {
            self.queue.schedule(first.start, Event::FlowArrival);
        }
        while self.flows_finished < self.flows.len() {
            let Some((t, event)) = self.queue.pop() else {
                break;
            };
            if t > self.horizon {
                break;
            }
            self.now = t;
            self.look_ahead();
            match event {
                Event::TxDone(p) => {
                    let port = &mut self.ports[p.index()];
                    // A wake superseded by a later one is stale.
                    if port.wake_at == t {
                        port.wake_at = Port::NO_WAKE;
                        self.try_send(p);
                    }
                }
                Event::Arrive(p) => self.arrive(p),
                Event::Pfc { port, pause } => {
                    let state = &mut self.ports[port.index()];
                    self.extra[port.index()]
                        .pauses
                        .record(self.now, state.paused, pause);
                    state.paused = pause;
                    if !pause {
                        self.try_send(port);
                    }
                }
                Event::Timer(f) => self.timer(f),
                Event::FlowArrival => self.start_next_flow(),
            }
            if self.queue.processed().is_multiple_of(PROGRESS_EVERY) {
                progress(self.progress(false));
            }
        }
        progress(self.progress(true));
        self.finish()
    }

    /// Asks for what the next event will read, while this one runs.
    ///
    /// The next event's packet is likely out of cache (a link's first packet was last touched a
    /// propagation delay ago). Without a branch: whether the next event is an arrival is a coin
    /// toss for the branch predictor, so for any other event port 0's link is looked at, for
    /// nothing.
    ///
    /// An arrival at a host will also read its flow's line, one of thousands. Its packet,
    /// prefetched when it became its link's head a serialization ago, is normally in cache by
    /// now, so its flow id is read without waiting, and that flow's line is asked for too (flow
    /// 0's for an arrival at a switch: whether the link ends at a host is another coin toss).
    /// Measured on the leaf-spine: host arrivals take 5–10 % fewer cycles, the whole run 2–4 %
    /// less time; with a branch on the host instead of the select, no gain. Asking for the NIC's
    /// next flow, for the flow's transport state behind its line, or for a switch-bound
    /// packet's routing entry did not pay.
    #[inline(always)]
    fn look_ahead(&self) {
        let next = match self.queue.peek_near() {
            Event::Arrive(p) => p.index(),
            _ => 0,
        };
        let port = &self.ports[next];
        self.packets.prefetch_front(&port.in_flight);
        if let Some(head) = self.packets.front(&port.in_flight) {
            let to_host = matches!(port.peer_owner.kind(), OwnerKind::Host(_));
            let f = hint::select_unpredictable(to_host, self.packets.get(head).flow.index(), 0);
            if let Some(flow) = self.flows.get(f) {
                crate::prefetch::prefetch(flow);
            }
        }
    }

    fn progress(&self, done: bool) -> Progress {
        Progress {
            now: self.now,
            horizon: self.horizon,
            flows_started: self.next_flow,
            flows_finished: self.flows_finished,
            flows_total: self.flows.len(),
            events: self.queue.processed(),
            done,
        }
    }

    // ----- ports and links -----

    /// If the port is idle, start sending whatever its node has for it; if it is busy, make sure
    /// it wakes up when it is done.
    fn try_send(&mut self, p: PortId) {
        let port = &self.ports[p.index()];
        match port.owner.kind() {
            OwnerKind::Host(h) => self.nic_send(p, h),
            OwnerKind::Switch(s) => self.switch_send(p, s, usize::from(port.local)),
        }
    }

    /// Makes a busy port wake up when its current packet is out.
    #[inline(always)]
    fn wake_when_done(&mut self, p: PortId) {
        let port = &mut self.ports[p.index()];
        if port.wake_at != port.busy_until {
            port.wake_at = port.busy_until;
            self.queue.schedule(port.busy_until, Event::TxDone(p));
        }
    }

    /// [`try_send`](Self::try_send) for host `h`'s NIC port `p`.
    fn nic_send(&mut self, p: PortId, h: HostIdx) {
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

    /// [`try_send`](Self::try_send) for port `p`, local port `local` of switch `s`.
    #[inline(always)]
    fn switch_send(&mut self, p: PortId, s: usize, local: usize) {
        let port = &self.ports[p.index()];
        if self.now < port.busy_until {
            return self.wake_when_done(p);
        }
        let paused = port.paused;
        let Some((pkt, resume, more)) =
            self.switches[s].dequeue_more(&mut self.packets, local, paused)
        else {
            return;
        };
        self.resume_inputs(p, local, resume);
        self.transmit(p, pkt, more);
    }

    /// Resumes the upstream neighbours of the inputs in `mask`, on the switch whose local port
    /// `local` is `p`.
    #[inline(always)]
    fn resume_inputs(&mut self, p: PortId, local: usize, mut mask: u64) {
        let first = p.0 - local as u32;
        while mask != 0 {
            let input = mask.trailing_zeros();
            mask &= mask - 1;
            self.send_pfc(PortId(first + input), false);
        }
    }

    #[inline(always)]
    fn transmit(&mut self, p: PortId, pkt: PacketId, more: bool) {
        let port = &mut self.ports[p.index()];
        let wire_bytes = self.packets.get(pkt).wire_bytes;
        let done = self.now + port.serialization(wire_bytes, &self.extra[p.index()]);
        port.busy_until = done;
        port.bytes_sent += u64::from(wire_bytes);
        let arrives = done + port.delay;
        let first_on_link = port.in_flight.is_empty();
        self.packets.push_link(&mut port.in_flight, pkt, arrives);
        if more && port.wake_at != done {
            port.wake_at = done;
            self.queue.schedule(done, Event::TxDone(p));
        }
        if first_on_link {
            self.queue.schedule(arrives, Event::Arrive(p));
        }
    }

    /// The head packet of the link leaving `p` reaches the other end.
    fn arrive(&mut self, p: PortId) {
        let port = &mut self.ports[p.index()];
        let Some((pkt, next)) = self.packets.pop_link(&mut port.in_flight) else {
            return;
        };
        let (ingress, owner, input) = (port.peer, port.peer_owner, usize::from(port.peer_local));
        if let Some(next) = next {
            self.queue.schedule(next, Event::Arrive(p));
            // The new head arrives a serialization time from now: bring it into cache.
            if let Some(head) = self.packets.front(&port.in_flight) {
                self.packets.prefetch(head);
            }
        }
        match owner.kind() {
            OwnerKind::Host(h) => {
                let pkt = self.packets.free(pkt);
                self.host_receive(h, pkt)
            }
            OwnerKind::Switch(s) => self.switch_receive(s, ingress, input, pkt),
        }
    }

    /// A PFC frame from the switch port `from` to the port upstream of it. Pause frames do not
    /// queue behind data (they preempt) and take their own serialization plus the link delay.
    fn send_pfc(&mut self, from: PortId, pause: bool) {
        let port = &self.ports[from.index()];
        let frame = irn_core::packet::CONTROL_FRAME_BYTES;
        let at = self.now + port.serialization(frame, &self.extra[from.index()]) + port.delay;
        if pause {
            self.counters.pause_frames += 1;
        } else {
            self.counters.resume_frames += 1;
        }
        self.queue.schedule(
            at,
            Event::Pfc {
                port: port.peer,
                pause,
            },
        );
    }

    // ----- switches -----

    /// Packet `id` arrived at switch `s` on its port `ingress`, local number `input`.
    fn switch_receive(&mut self, s: usize, ingress: PortId, input: usize, id: PacketId) {
        let pkt = self.packets.get(id);
        let hops = self.cfg.topology.next_hops_at_switch(s, pkt.dst);
        let out = if hops.len() == 1 {
            hops[0]
        } else {
            let hash = mix32(pkt.flow.0 ^ self.salt);
            let node = self.cfg.topology.switches()[s];
            hops[mix32(hash ^ node.0.wrapping_mul(0x9E37_79B9)) as usize % hops.len()]
        };
        // Ports are numbered contiguously per node.
        let output = (out.0 - (ingress.0 - input as u32)) as usize;
        let switch = &mut self.switches[s];
        let is_data = pkt.is_data();
        let port = &self.ports[out.index()];
        // Most packets find their output idle with nothing queued (59 % on the leaf-spine
        // benchmark): they go straight on, as queueing and dequeuing them would do.
        if self.now >= port.busy_until && !switch.has_work(output) && !(is_data && port.paused) {
            if is_data {
                let (admit, resume) = switch.cut_through(&mut self.packets, input, output, id);
                if !self.admitted(admit, ingress, id) {
                    return;
                }
                self.resume_inputs(out, output, resume);
            }
            return self.transmit(out, id, false);
        }
        if is_data {
            let admit = switch.admit_data(&mut self.packets, input, output, id);
            if !self.admitted(admit, ingress, id) {
                return;
            }
        } else {
            switch.admit_control(&mut self.packets, output, id);
        }
        self.switch_send(out, s, output);
    }

    /// Acts on a data packet's admission at the switch port `ingress`: pause upstream, or free a
    /// dropped packet. False when it was dropped.
    #[inline(always)]
    fn admitted(&mut self, admit: Admit, ingress: PortId, id: PacketId) -> bool {
        match admit {
            Admit::Queued => true,
            Admit::QueuedAndPause => {
                self.send_pfc(ingress, true);
                true
            }
            Admit::Dropped => {
                self.counters.drops += 1;
                if let Some(slot) = self.packets.free(id).verbs {
                    self.verbs_packets.take(slot);
                }
                false
            }
        }
    }

    // ----- hosts -----

    /// The NIC's next packet: control first, then (unless paused) the ready flows round-robin.
    fn nic_next(&mut self, h: HostIdx) -> Option<PacketId> {
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
            let sent = match flow.qp.as_deref_mut() {
                None => None,
                Some(Endpoints::Message { sender, .. }) => {
                    sender.poll_transmit(now).map(|pkt| SimPacket {
                        wire_bytes: pkt.wire_len() + self.cfg.extra_header_bytes,
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
                    }
                    self.sync_timer(f);
                    return Some(self.packets.alloc(sim));
                }
                None => flow.in_ready[side as usize] = false,
            }
        }
        None
    }

    /// Put a flow on the NIC of its `side`'s host and kick the NIC.
    fn make_ready(&mut self, f: FlowId, side: Side) {
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

    fn host_receive(&mut self, h: HostIdx, pkt: SimPacket) {
        let f = pkt.flow;
        let now = self.now;
        let flow = &mut self.flows[f.index()];
        let verbs = pkt.verbs.and_then(|slot| self.verbs_packets.take(slot));
        let Some(ends) = flow.qp.as_deref_mut() else {
            // The flow already finished: a late duplicate or spurious retransmission.
            return;
        };
        let nic = &mut self.nics[h.index()];
        match ends {
            Endpoints::Message { sender, receiver } => {
                if pkt.is_data() {
                    receiver.handle_packet(now, &pkt.pkt);
                    while let Some(reply) = receiver.poll_transmit(now) {
                        let id = self.packets.alloc(SimPacket {
                            wire_bytes: reply.wire_len(),
                            pkt: reply,
                            flow: f,
                            dst: flow.src,
                            verbs: None,
                        });
                        self.packets.push(&mut nic.control, id);
                    }
                    if receiver.poll_completion().is_some() {
                        flow.received_at = Some(now);
                    }
                    let port = nic.port;
                    self.nic_send(port, h);
                } else {
                    sender.handle_packet(now, &pkt.pkt);
                    if sender.poll_completion().is_some() {
                        flow.acked_at = Some(now);
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
                    let id = self.packets.alloc(reply);
                    self.packets.push(&mut nic.control, id);
                }
                let (received, acked) = v.progress();
                if received {
                    flow.received_at.get_or_insert(now);
                }
                if acked {
                    flow.acked_at.get_or_insert(now);
                }
                self.sync_timer(f);
                self.make_ready(f, side);
            }
        }
        self.finish_if_done(f);
    }

    fn timer(&mut self, f: FlowId) {
        let flow = &mut self.flows[f.index()];
        if flow.timer_at != self.now {
            return; // superseded
        }
        flow.timer_at = Flow::NO_TIMER;
        match flow.qp.as_deref_mut() {
            None => return,
            Some(Endpoints::Message { sender, .. }) => sender.handle_timeout(self.now),
            Some(Endpoints::Verbs(v)) => {
                v.handle_timeout(self.now);
                self.make_ready(f, Side::Dst);
            }
        }
        self.sync_timer(f);
        self.make_ready(f, Side::Src);
    }

    /// Make sure a timer event is pending no later than the flow's next deadline.
    fn sync_timer(&mut self, f: FlowId) {
        let flow = &mut self.flows[f.index()];
        let deadline = match flow.qp.as_deref() {
            None => None,
            Some(Endpoints::Message { sender, .. }) => sender.poll_timeout(),
            Some(Endpoints::Verbs(v)) => v.poll_timeout(),
        };
        let Some(deadline) = deadline else {
            return;
        };
        let deadline = deadline.max(self.now);
        if deadline < flow.timer_at {
            flow.timer_at = deadline;
            self.queue.schedule(deadline, Event::Timer(f));
        }
    }

    fn start_next_flow(&mut self) {
        let i = self.next_flow;
        self.next_flow += 1;
        if let Some(next) = self.cfg.flows.get(self.next_flow) {
            self.queue.schedule(next.start, Event::FlowArrival);
        }
        let cfg = self.cfg.transport;
        let qpn = Qpn::new(i as u32);
        let spec = self.cfg.flows[i];
        // Sizes (and verbs) are validated when the configuration is built.
        let isn = |space| self.cfg.initial_psn.psn(self.cfg.seed, i, space);
        let (ends, first) = match spec.verb {
            None => {
                let mut sender = Requester::new(cfg, qpn, isn(0));
                if sender.post(spec.size_bytes).is_err() {
                    return;
                }
                let receiver = Receiver::new(cfg, qpn, isn(0));
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
        self.make_ready(FlowId(i as u32), first);
    }

    /// Ends flow `f` if both its ends are done: a check on every packet a host receives, so
    /// inlined, with the rare ending apart.
    #[inline(always)]
    fn finish_if_done(&mut self, f: FlowId) {
        let flow = &self.flows[f.index()];
        if flow.received_at.is_some() && flow.acked_at.is_some() {
            self.end_flow(f);
        }
    }

    #[inline(never)]
    fn end_flow(&mut self, f: FlowId) {
        if let Some(ends) = self.flows[f.index()].qp.take() {
            self.absorb_stats(f, &ends, true);
            self.flows_finished += 1;
        }
    }

    /// Takes a flow's counters when its endpoints go away; a finished verbs flow also has its
    /// data checked.
    fn absorb_stats(&mut self, f: FlowId, ends: &Endpoints, finished: bool) {
        let flow = &mut self.counts[f.index()];
        let duplicates = match ends {
            Endpoints::Message { sender, receiver } => {
                let s = sender.stats();
                flow.retransmissions = s.retransmissions;
                flow.timeouts = s.timeouts;
                flow.min_rate_bps = s.min_rate_bps;
                flow.min_window = s.min_window;
                self.counters.cnps += receiver.stats().cnps_sent;
                receiver.stats().duplicates
            }
            Endpoints::Verbs(v) => {
                let c = v.counts();
                flow.retransmissions = c.retransmissions;
                flow.timeouts = c.timeouts;
                flow.min_rate_bps = c.min_rate_bps;
                flow.min_window = c.min_window;
                if finished && !v.data_ok() {
                    self.counters.verbs_data_errors += 1;
                }
                self.counters.cnps += c.cnps;
                c.duplicates
            }
        };
        self.counters.retransmissions += flow.retransmissions;
        self.counters.timeouts += flow.timeouts;
        self.counters.duplicates += duplicates;
    }

    fn finish(mut self) -> RunResult {
        // Flows cut off by the drain limit still report what they did.
        for i in 0..self.flows.len() {
            if let Some(ends) = self.flows[i].qp.take() {
                self.absorb_stats(FlowId(i as u32), &ends, false);
            }
        }
        let end = self.now;
        // Utilization is measured from the first arrival (flows are sorted by start): nothing is
        // sent before it, and a trace starting at 2 s (as ns-3's do) must not read as idle.
        let first_arrival = self.cfg.flows.first().map_or(Time::ZERO, |f| f.start);
        let topo = &self.cfg.topology;
        let mut link_busy_fraction_sum = 0.0;
        let mut paused_total = Duration::ZERO;
        for (p, port) in self.ports.iter().enumerate() {
            let rate = topo.ports()[p].rate;
            let capacity_bytes = rate.bdp_bytes(end.saturating_since(first_arrival)) as f64;
            // A run cut off by the drain limit may stop while a port is still serializing: what
            // it sends after the end is not part of the run.
            let unsent = rate.bdp_bytes(port.busy_until.saturating_since(end));
            if capacity_bytes > 0.0 {
                link_busy_fraction_sum +=
                    port.bytes_sent.saturating_sub(unsent) as f64 / capacity_bytes;
            }
            paused_total = paused_total + self.extra[p].pauses.until(end, port.paused);
        }
        self.counters.paused_time = paused_total;
        self.counters.link_utilization = link_busy_fraction_sum / self.ports.len().max(1) as f64;
        self.counters.ecn_marks = self.switches.iter().map(|s| s.ecn_marks()).sum();
        self.counters.peak_buffer_bytes = self
            .switches
            .iter()
            .map(|s| s.peak_occupancy())
            .max()
            .unwrap_or(0);
        self.counters.events = self.queue.processed();
        self.counters.sim_time = end - Time::ZERO;
        let records = (self.flows.iter().zip(&self.counts))
            .zip(&self.cfg.flows)
            .enumerate()
            .map(|(i, ((f, counts), spec))| FlowRecord {
                id: i as u32,
                src: spec.src,
                dst: spec.dst,
                size_bytes: spec.size_bytes,
                start: spec.start,
                received_at: f.received_at,
                acked_at: f.acked_at,
                retransmissions: counts.retransmissions,
                timeouts: counts.timeouts,
                min_rate_bps: counts.min_rate_bps,
                min_window: counts.min_window,
                class: spec.class,
                verb: spec.verb,
            })
            .collect();
        RunResult::new(self.cfg, records, self.counters)
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
