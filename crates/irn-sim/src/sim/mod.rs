//! The simulated world: hosts, switches and links wired by a topology, driven by the event queue.
//!
//! Every packet hop is one or two events: the link's `Arrive` (propagation over, the last bit is
//! in; store-and-forward), and the sending port's `TxDone` (serialization over) when the port has
//! more to send. Hosts run one
//! `irn-core` sender and receiver per flow — or, for a verbs workload, one verbs queue pair per
//! flow on each host ([`crate::verbs_flow`]); the simulator only moves their packets and timers.

use std::collections::VecDeque;
use std::sync::Arc;

use irn_core::ordering::{MemoryController, OrderingLayer, OrderingMode};
use irn_core::{Duration, Time};

use self::conweaving::ConWeaveState;
use crate::config::{
    alpha_at_rate, ecn_scale_q16, pfc_headroom_bytes, Scheduling, SimConfig, SwitchModel,
};
use crate::engine::{Event, Sampler};
use crate::failures::FailureState;
use crate::forwarding::{Balancer, Deflector, LoadBalancing};
use crate::ids::{FlowId, HostIdx, NodeId, PortId};
use crate::loss::LossDraw;
use crate::metrics::{FlowRecord, NetworkCounters, RunResult};
use crate::packets::{Fifo, Packets};
use crate::partition::Partitioning;
use crate::pause::{PauseFrames, PauseRule, PauseSource};
use crate::port::{Owner, OwnerKind, PauseTimers, Port, PortExtra};
use crate::rng::{stream, Purpose};
use crate::series::SeriesSink;
use crate::switch::{EcnMarker, FlowRanks, SharedSwitch, Switch, VoqSwitch};
use crate::topology::{NodeKind, RoutingTable};
use crate::verbs_flow::VerbsPackets;

use rand::Rng;

/// How far a run has got, for progress bars.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub now: Time,
    /// The time by which the run will surely have stopped (last arrival + drain limit).
    pub horizon: Time,
    /// The last flow's arrival: the end of the window in which the workload offers its load.
    pub last_arrival: Time,
    pub flows_started: usize,
    pub flows_finished: usize,
    pub flows_total: usize,
    /// Data packets sent so far, retransmissions included: the work done, which a flow's
    /// packets measure better than its count (the flows a drain waits for are the large ones).
    pub packets_sent: u64,
    /// Every flow's data packets once (its size in MTUs): the work a run without losses does.
    pub packets_total: u64,
    pub events: u64,
    /// This is the run's last report.
    pub done: bool,
}

/// Report progress every this many events.
const PROGRESS_EVERY: u64 = 1 << 16;

mod arrivals;
mod calendar;
mod conweaving;
mod crediting;
mod deadlock;
mod failing;
mod flow_timer;
mod footprint;
pub use footprint::Footprint;
mod hosts;
mod links;
mod node_batch;
mod pausing;
mod releasing;
mod sampler;
pub(crate) use sampler::unsampled_ordering;
mod switches;
mod telemetry;
pub mod trace;

use calendar::Calendar;
use crediting::Credits;
use flow_timer::FlowTimer;
use hosts::{Flow, FlowCounts, Nic, When};
use releasing::Releases;
use sampler::{Monitor, OrderingMemory};
use telemetry::IntTable;
use trace::Trace;

/// One simulation run.
pub struct Simulation<'a, T: Trace> {
    cfg: &'a SimConfig,
    now: Time,
    queue: Calendar<T>,
    /// In a partitioned run, each partition's chain of flow starts; empty otherwise.
    chains: FlowChains,
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
    /// The next flow the arrival chain starts (the next root, with dependent flows).
    next_flow: usize,
    flows_started: usize,
    flows_finished: usize,
    /// In a partitioned run: the latest instant a flow ended.
    last_end: Time,
    /// What starts the flows that wait for others; `None` when every flow starts at its start.
    releases: Option<Box<Releases>>,
    /// The bytes each running flow had delivered when the last flow arrived, by flow index
    /// (increasing): where `summary.json`'s `jain_index` counts the long-lived flows' shares
    /// from. `None` until the last flow starts.
    delivered_at_last_arrival: Option<Vec<(usize, u64)>>,
    /// The flows whose starts bound the measured arrivals, for `arrival_goodput_gbps`.
    arrivals: Option<arrivals::ArrivalWindow>,
    counters: NetworkCounters,
    horizon: Time,
    /// Every flow's data packets once, for [`Progress::packets_total`].
    packets_total: u64,
    /// The routes switches forward by: the topology's, replaced by a recomputed table each
    /// time routing reconverges after link failures.
    routing: Arc<RoutingTable>,
    /// Link failures' timeline and state; `None` when every link stays up.
    failures: Option<Box<FailureState>>,
    /// Every switch's load balancer state.
    balancer: Balancer,
    /// DIBS: where a packet its output has no room for goes instead; `None` drops it.
    deflector: Option<Box<Deflector>>,
    /// ConWeave's ToR state; `None` without it.
    conweave: Option<Box<ConWeaveState>>,
    /// Switches schedule SRPT, whose outputs may evict queued packets for a refused one.
    evicting: bool,
    /// The NICs run an ordering layer under their transports (`[ordering]`).
    ordered: bool,
    /// Each message flow's ordering layer while it runs; empty without one.
    layers: Vec<Option<Box<OrderingLayer>>>,
    /// Each host NIC's ordering memory (Eunomia's pool of bitmap blocks); empty without it.
    ordering_pools: Vec<MemoryController>,
    /// Every NIC's ordering memory, sampled over time; `None` without a layer.
    memory: Option<OrderingMemory>,
    /// `[monitor]`'s sampler and where its rows go; `None` without one (or without a sink).
    monitor: Option<Monitor<'a>>,
    verbs_packets: VerbsPackets,
    /// The hosts that pause their switch at random (`[pauses]`); empty without.
    pause_sources: Vec<PauseSource>,
    /// Per `[[pause_control]]`: its input has held data at a check (its checks count in
    /// [`NetworkCounters::pause_control`] from then on).
    pause_control_fed: Vec<bool>,
    /// Per port: its pause timers and the PFC frames its input sends.
    pause_timers: Vec<PauseTimers>,
    /// Credit flow control's counters per link; `None` without credits.
    credits: Option<Box<Credits>>,
    /// Per port, its link's loss draws and losses; empty when no link loses packets
    /// (`cfg.link_loss`), and only looked at when the trace type compiles loss in
    /// ([`Trace::LOSS`](trace::Trace::LOSS)).
    loss: Vec<LossDraw>,
    /// Every packet's in-band telemetry records; `None` unless the controller reads them.
    int: Option<Box<IntTable>>,
    /// The flow trace (`--trace-flow`): [`NoTrace`](trace::NoTrace), which compiles every
    /// hook away, or a [`Tracer`](trace::Tracer).
    trace: T,
}

impl<'a, T: Trace> Simulation<'a, T> {
    /// The world of `cfg`, its flows traced by `trace`; its `[monitor]`, if any, is sampled
    /// into `series` (not without one).
    pub fn new(cfg: &'a SimConfig, series: Option<&'a mut dyn SeriesSink>, trace: T) -> Self {
        let topo = &cfg.topology;
        let mut owners = Vec::with_capacity(topo.node_count());
        let mut first_port = Vec::with_capacity(topo.node_count());
        let mut switches = Vec::new();
        // SRPT switches' table of flows, built for the first and shared.
        let mut flow_ranks: Option<Arc<FlowRanks>> = None;
        let mut nics = Vec::new();
        let max_frame = cfg.max_frame_bytes();
        let nic_rate = topo.nic_rate();
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
                        let marker = EcnMarker::new(red, seed);
                        match nic_rate {
                            Some(nic) if red.per_rate => marker
                                .with_output_scales(ports.len(), |i| {
                                    ecn_scale_q16(ports[i].rate, nic)
                                }),
                            _ => marker,
                        }
                    });
                    switches.push(match cfg.switch.model {
                        SwitchModel::InputQueued => Switch::Voq(VoqSwitch::new(
                            ports.len(),
                            |i| topo.input_buffer(PortId(range.start + i as u32), buffer),
                            |i| match control_of(cfg, PortId(range.start + i as u32)) {
                                Some(PauseRule::Threshold {
                                    pause_at,
                                    resume_below,
                                    ..
                                }) => Some((pause_at, resume_below)),
                                // A periodic rule decides this input's frames alone.
                                Some(_) => None,
                                None => pfc.map(|pfc| {
                                    let buffer =
                                        topo.input_buffer(PortId(range.start + i as u32), buffer);
                                    let pause = pfc.threshold.resolve(buffer, &ports[i], max_frame);
                                    (pause, pause.saturating_sub(pfc.resume_gap_bytes))
                                }),
                            },
                            ecn,
                        )),
                        SwitchModel::SharedBuffer {
                            ingress_alpha,
                            egress_alpha,
                            scheduling,
                            pfc_headroom,
                            alpha_per_rate,
                        } => {
                            let headroom = |i: usize| pfc_headroom_bytes(&ports[i], max_frame);
                            let pfc = pfc
                                .map(|p| (&headroom as &dyn Fn(usize) -> u64, p.resume_gap_bytes));
                            let pool = topo.shared_pool(node, buffer);
                            let switch = SharedSwitch::new(
                                ports.len(),
                                pool,
                                ingress_alpha,
                                egress_alpha,
                                pfc,
                                ecn,
                            )
                            .with_pfc_headroom(pfc_headroom);
                            let switch = match nic_rate {
                                Some(nic) if alpha_per_rate => switch.with_input_alphas(|i| {
                                    alpha_at_rate(ingress_alpha, ports[i].rate, nic)
                                }),
                                _ => switch,
                            };
                            Switch::Shared(match scheduling {
                                Scheduling::Fifo => switch,
                                Scheduling::Srpt | Scheduling::SrptPerPacket => switch.with_srpt(
                                    Arc::clone(
                                        flow_ranks.get_or_insert_with(|| flow_ranks_of(cfg)),
                                    ),
                                    scheduling == Scheduling::SrptPerPacket,
                                ),
                            })
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
        // ECMP's salt has its own stream, so ECMP paths stay where they were.
        let salt: u32 = stream(cfg.seed, Purpose::EcmpSalt, 0).random();
        let balancer = Balancer::new(
            cfg.load_balancing,
            (topo.switches().len(), topo.hosts().len()),
            topo.source_routed(),
            cfg.seed,
            salt,
        )
        .with_control(cfg.control_balancing, topo.source_routed());
        let flows = cfg
            .flows
            .iter()
            .map(|spec| Flow {
                qp: None,
                timer: FlowTimer::IDLE,
                received_at: When::NOT_YET,
                acked_at: When::NOT_YET,
                src: spec.src,
                dst: spec.dst,
                in_ready: [false; 2],
                traced: false,
                ended: false,
                in_flight: 0,
            })
            .collect();
        let last_start = cfg.flows.last().map_or(Time::ZERO, |f| f.start);
        // Less than one event per bucket, so few inserts land out of order: a 512th of the
        // fastest link's full-frame time for up to 1024 ports, narrower in proportion for more
        // ports, whose events come that much more densely (a k = 16 fat-tree's 6144 ports spent
        // 9 % of the time sorting crowded buckets at 1/256). Measured on the leaf-spine
        // benchmark: 1/64 cost more than 1/256, and 1/256 2–3 % more than 1/512 (8 % of its
        // inserts went out of order); 1/1024 gained nothing more.
        let frame = cfg.fastest_frame_time().unwrap_or(Duration::from_ns(100));
        let per_frame = (topo.ports().len().next_power_of_two() / 2).max(512) as u64;
        let bucket_width = Duration::from_ps(frame.as_ps() / per_frame);
        // Nearly every event is scheduled a few frames ahead (on a k = 24 fat-tree at 30 %
        // load, 96 % within six frames): the wheel's ring reaches past eight, so they skip the
        // overflow heap however narrow the buckets are.
        let horizon = Duration::from_ps(frame.as_ps() * 8);
        let mut queue = Calendar::new(bucket_width, horizon);
        if let Some(parts) = Partitioning::for_run(cfg).filter(|_| T::PARTS) {
            // A partition's events come as sparsely as a network of its size's.
            let per_part = (topo.ports().len() / parts.count).next_power_of_two() / 2;
            let width = Duration::from_ps(frame.as_ps() / per_part.max(512) as u64);
            let last = last_start + cfg.drain_limit;
            queue = Calendar::partitioned(queue, &parts, (width, horizon), topo, &cfg.flows, last);
        }
        let chains = if queue.by_node() {
            // Each host's flows in a chain of their own: a flow start is its host's event.
            let hosts = topo.hosts().len();
            FlowChains::new(cfg.flows.iter().map(|f| f.src.index() as u32), hosts)
        } else {
            let parts = queue.flow_parts();
            FlowChains::new(parts.iter().map(|&p| u32::from(p)), queue.count())
        };
        let mut sim = Simulation {
            cfg,
            now: Time::ZERO,
            queue,
            chains,
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
                .map(|port| PortExtra::new(port.rate))
                .collect(),
            packets: Packets::default(),
            switches,
            nics,
            flows,
            counts: vec![FlowCounts::default(); cfg.flows.len()],
            next_flow: 0,
            flows_started: 0,
            flows_finished: 0,
            last_end: Time::ZERO,
            releases: cfg.dag.as_deref().map(|d| Box::new(Releases::new(d))),
            delivered_at_last_arrival: None,
            arrivals: arrivals::ArrivalWindow::new(cfg),
            counters: NetworkCounters {
                ordering_drops: (cfg.ordering.mode != OrderingMode::None).then_some(0),
                ..NetworkCounters::default()
            },
            horizon: last_start + cfg.drain_limit,
            packets_total: (cfg.flows.iter())
                .map(|f| f.size_bytes.div_ceil(u64::from(cfg.transport.mtu.max(1))))
                .sum(),
            routing: Arc::clone(topo.routing()),
            failures: (cfg.failures.clone())
                .map(|t| Box::new(FailureState::new(t, topo.ports().len(), cfg.flows.len()))),
            balancer,
            deflector: (cfg.deflection).map(|d| Box::new(Deflector::new(d, topo, cfg.seed))),
            conweave: match cfg.load_balancing {
                LoadBalancing::ConWeave(params) => {
                    let hosts: Vec<_> = cfg.flows.iter().map(|f| (f.src, f.dst)).collect();
                    Some(Box::new(ConWeaveState::new(params, topo, &hosts)))
                }
                _ => None,
            },
            evicting: matches!(
                cfg.switch.model,
                SwitchModel::SharedBuffer { scheduling, .. } if scheduling.is_srpt()
            ),
            ordered: cfg.ordering.mode != OrderingMode::None,
            layers: match cfg.ordering.mode {
                OrderingMode::None => Vec::new(),
                _ => (0..cfg.flows.len()).map(|_| None).collect(),
            },
            // Each NIC's pool built afresh rather than cloned from one: a fresh pool's blocks
            // are zeroed memory the system hands out untouched, so a pool takes memory only
            // for the blocks its NIC uses. Clones copied every block: 66 MB for 128 NICs of
            // 65,536 blocks, most never used.
            ordering_pools: match cfg.ordering.mode {
                OrderingMode::Eunomia => (topo.hosts().iter())
                    .map(|_| {
                        MemoryController::new(cfg.ordering.config)
                            .expect("validated with the scenario")
                    })
                    .collect(),
                _ => Vec::new(),
            },
            memory: (cfg.ordering.mode != OrderingMode::None).then(|| OrderingMemory::new(cfg)),
            monitor: None,
            verbs_packets: VerbsPackets::default(),
            pause_sources: Self::pause_sources(cfg),
            pause_control_fed: vec![false; cfg.pause_control.len()],
            pause_timers: (0..topo.ports().len())
                .map(|i| PauseTimers::new(pause_frames(cfg, PortId(i as u32))))
                .collect(),
            credits: None,
            loss: if cfg.link_loss.is_none() {
                Vec::new()
            } else {
                (0..topo.ports().len())
                    .map(|p| LossDraw::new(cfg.seed, PortId(p as u32), &cfg.link_loss))
                    .collect()
            },
            int: (T::INT && cfg.transport.cc.wants_int())
                .then(|| Box::new(IntTable::new(topo.max_path_switches()))),
            trace,
        }
        .mark_traced();
        if let Some(credits) = cfg.credits {
            assert!(
                T::CREDITS,
                "a run with credits is compiled with their hooks (crate::run)"
            );
            sim.setup_credits(credits);
        }
        if let (Some(m), Some(sink)) = (&cfg.monitor, series) {
            sim.monitor = Some(Monitor::new(cfg, m, &sim.ports, sim.horizon, sink));
        }
        sim
    }

    /// Runs until every flow has finished or the drain limit passes, reporting progress every
    /// 65 536 events.
    pub fn run(mut self, progress: &mut dyn FnMut(Progress)) -> RunResult {
        if self.queue.is_partitioned() {
            // Each partition's first flow; each starts the next of its partition.
            for i in 0..self.chains.first.len() {
                let f = self.chains.first[i];
                if let Some(spec) = self.cfg.flows.get(f as usize) {
                    self.queue.schedule(spec.start, Event::FlowStart(FlowId(f)));
                }
            }
        } else {
            self.next_flow = self.next_root(0);
            if let Some(first) = self.cfg.flows.get(self.next_flow) {
                self.queue.schedule(first.start, Event::FlowArrival);
            }
        }
        if let Some(t) = self.memory.as_ref().and_then(|m| m.schedule.first()) {
            self.queue.schedule(t, Sampler::Ordering.event());
        }
        if let Some(t) = self.monitor.as_ref().and_then(|m| m.schedule.first()) {
            self.queue.schedule(t, Sampler::Monitor.event());
        }
        self.schedule_pausing();
        self.schedule_credits();
        self.schedule_failures();
        // A partitioned run whose last flow ended goes on until every partition has run up to
        // that instant (`Calendar::stop_before`).
        while self.flows_finished < self.flows.len() || self.queue.stopping() {
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
                Event::Pfc { .. }
                | Event::PauseEnd(_)
                | Event::PauseRefresh(_)
                | Event::PauseControl(_)
                | Event::PauseSource(_) => self.pause_event(event),
                // Only runs compiled with credits schedule these.
                Event::CreditLimit { port, fccl } if T::CREDITS => self.credit_limit(port, fccl),
                Event::CreditSync { port, fctbs } if T::CREDITS => self.credit_sync(port, fctbs),
                Event::CreditTick(port) if T::CREDITS => self.credit_tick(port),
                Event::CreditGrant { port, blocks } if T::CREDITS => {
                    self.credit_grant(port, blocks)
                }
                Event::CreditLimit { .. }
                | Event::CreditSync { .. }
                | Event::CreditTick(_)
                | Event::CreditGrant { .. } => {}
                Event::Timer(f) => self.timer(f),
                Event::FlowArrival => self.start_next_flow(),
                Event::FlowStart(f) => self.start_in_partition(f),
                Event::FlowRelease(f) => self.start_flow(f.index()),
                Event::Sample => self.sample(Sampler::Ordering),
                Event::Monitor => self.sample(Sampler::Monitor),
                Event::LinkChange => self.change_links(),
                Event::Reorder(flow) => self.conweave_flush(flow),
            }
            if self.queue.processed().is_multiple_of(PROGRESS_EVERY) {
                progress(self.progress(false));
            }
        }
        // A partitioned run cut off (by the drain limit, or with nothing left to do) ends at
        // the latest instant any partition reached; one whose flows all ended, at the last end.
        if self.flows_finished < self.flows.len() {
            self.now = self.queue.latest().map_or(self.now, |t| t.max(self.now));
        } else if self.queue.stopping() {
            self.now = self.last_end;
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
    /// Only the packet's slot is asked for, through its port's line. Asking also for a
    /// host-bound arrival's flow line (read from the packet, selected without a branch) took
    /// 2–4 % off the leaf-spine benchmark when measured on another machine; on an Intel VM with
    /// the heap on huge pages it cost 2.5–2.8 % of the instructions and gained nothing (without
    /// it: 0.96–0.99x CPU on the leaf-spine benchmark, a 1,024-host fat-tree unpartitioned, and
    /// k = 24 partitioned). Asking for the NIC's next flow, for the flow's transport state, or
    /// for a switch-bound packet's routing entry did not pay either.
    ///
    /// A switch-bound packet is not read here. It was prefetched when it became its link's
    /// head a serialization ago, which on a small network keeps it in cache; on a k = 24
    /// fat-tree, thousands of events later, it is out of cache again, and reading it here would
    /// wait for the line the prefetch just asked for instead of letting this event's work
    /// overlap the wait (about 5 % of a k = 24 run's time).
    #[inline(always)]
    fn look_ahead(&self) {
        let next = match self.queue.peek_near() {
            Event::Arrive(p) => p.index(),
            _ => 0,
        };
        self.packets.prefetch_front(&self.ports[next].in_flight);
    }

    fn progress(&self, done: bool) -> Progress {
        Progress {
            now: self.now,
            horizon: self.horizon,
            last_arrival: self.cfg.flows.last().map_or(Time::ZERO, |f| f.start),
            flows_started: self.flows_started,
            flows_finished: self.flows_finished,
            flows_total: self.flows.len(),
            packets_sent: self.counters.data_packets_sent,
            packets_total: self.packets_total,
            events: self.queue.processed(),
            done,
        }
    }

    fn finish(mut self) -> RunResult {
        self.trace.flush(self.now);
        self.counters.jain_index = self.jain_index();
        self.counters.arrival_goodput_gbps =
            (self.arrivals.as_ref()).and_then(arrivals::ArrivalWindow::goodput_gbps);
        // Flows cut off by the drain limit still report what they did, and those that ended
        // with data packets still out, all they did.
        for i in 0..self.flows.len() {
            let ended = self.flows[i].ended;
            if let Some(ends) = self.flows[i].qp.take() {
                self.absorb_stats(FlowId(i as u32), &ends, ended);
                if let Some(cw) = self.conweave.as_deref_mut().filter(|_| ended) {
                    cw.release_entry(FlowId(i as u32));
                }
                self.drop_layer(FlowId(i as u32));
            }
        }
        let end = self.now;
        // Utilization is measured from the first arrival (flows are sorted by start): nothing is
        // sent before it, and a trace starting at 2 s (as ns-3's do) must not read as idle.
        let first_arrival = self.cfg.flows.first().map_or(Time::ZERO, |f| f.start);
        let topo = &self.cfg.topology;
        let mut link_busy_fraction_sum = 0.0;
        let mut paused_total = Duration::ZERO;
        let interval = end.saturating_since(first_arrival);
        // Per kind of owner (switch, host): the sum of paused fractions and how many ports.
        let mut pause_fraction = [(0.0, 0usize); 2];
        for (p, port) in self.ports.iter().enumerate() {
            let rate = topo.ports()[p].rate;
            let capacity_bytes = rate.bdp_bytes(end.saturating_since(first_arrival)) as f64;
            // A run cut off by the drain limit may stop while a port is still serializing: what
            // it sends after the end is not part of the run.
            let unsent = rate.bdp_bytes(port.sending_after(end));
            if capacity_bytes > 0.0 {
                link_busy_fraction_sum +=
                    port.bytes_sent.saturating_sub(unsent) as f64 / capacity_bytes;
            }
            let paused = self.extra[p].pauses.until(end, port.paused);
            paused_total = paused_total + paused;
            let kind =
                &mut pause_fraction[usize::from(matches!(port.owner.kind(), OwnerKind::Host(_)))];
            if interval.as_ps() > 0 {
                kind.0 += paused.as_ps() as f64 / interval.as_ps() as f64;
            }
            kind.1 += 1;
        }
        self.counters.paused_time = paused_total;
        [
            self.counters.pause_fraction_switch_ports,
            self.counters.pause_fraction_host_ports,
        ] = pause_fraction.map(|(sum, ports)| (ports > 0).then(|| sum / ports as f64));
        self.counters.link_utilization = link_busy_fraction_sum / self.ports.len().max(1) as f64;
        if interval.as_ps() > 0 {
            self.counters.goodput_gbps =
                self.counters.delivered_bytes as f64 * 8.0 / (interval.as_ps() as f64 / 1e3);
        }
        self.counters.link_losses =
            (!self.loss.is_empty()).then(|| self.loss.iter().map(|d| d.lost).sum());
        let paused = self.ports.iter().filter(|p| p.paused).count() as u64;
        let unfinished = self.flows_finished < self.flows.len();
        self.counters.paused_at_end = (unfinished && paused > 0).then_some(paused);
        let mut pause_cycle = None;
        if unfinished && paused > 0 {
            let (by, cycle) = self.paused_at_end();
            self.counters.paused_at_end_by = Some(by);
            pause_cycle = cycle;
        }
        self.counters.failures = self
            .failures
            .as_deref()
            .map(|f| (f.link_failures, f.packets_lost, f.packets_held));
        self.counters.deflections = self.deflector.as_deref().map(|d| d.deflections);
        self.counters.conweave = self.conweave.as_deref().map(|c| c.summary);
        self.counters.ttl_drops = self.deflector.as_deref().map(|d| d.ttl_drops);
        self.counters.ecn_marks = self.switches.iter().map(|s| s.ecn_marks()).sum();
        self.counters.peak_buffer_bytes = self
            .switches
            .iter()
            .map(|s| s.peak_occupancy())
            .max()
            .unwrap_or(0);
        let pools = (!self.ordering_pools.is_empty()).then_some(&self.ordering_pools);
        self.counters.ordering_peak_bytes =
            pools.and_then(|p| p.iter().map(|m| u64::from(m.stats().peak_bytes)).max());
        self.counters.ordering_blocks_at_end =
            pools.map(|p| p.iter().map(|m| u64::from(m.blocks_in_use())).sum());
        self.counters.ordering_peak_records =
            pools.and_then(|p| p.iter().map(|m| u64::from(m.stats().peak_states)).max());
        self.counters.ordering_memory = self.memory.as_ref().map(OrderingMemory::summary);
        let samples = self.monitor.as_ref().map_or(0, |m| m.samples);
        self.counters.bottleneck = self.monitor.as_ref().and_then(Monitor::bottleneck);
        self.counters.events = self.queue.processed() - samples;
        self.counters.sim_time = end - Time::ZERO;
        let records = (self.flows.iter().zip(&self.counts))
            .zip(self.cfg.flows.iter())
            .enumerate()
            .map(|(i, ((f, counts), spec))| FlowRecord {
                id: i as u32,
                src: spec.src,
                dst: spec.dst,
                size_bytes: spec.size_bytes,
                start: (self.releases.as_deref())
                    .map(|r| r.started_at[i])
                    .filter(|&t| t != Releases::NOT_STARTED)
                    .unwrap_or(spec.start),
                started: self.has_started(i),
                received_at: f.received_at.get(),
                acked_at: f.acked_at.get(),
                retransmissions: counts.retransmissions,
                timeouts: counts.timeouts,
                min_rate_bps: counts.min_rate_bps,
                min_window: counts.min_window,
                out_of_order: counts.out_of_order,
                max_reorder_distance: counts.max_reorder_distance,
                recoveries: counts.recoveries,
                nacks: counts.nacks,
                ordering_peak_bytes: self.memory.as_ref().map(|m| m.flow_peak_bytes(i)),
                ordering_refused: self
                    .ordered
                    .then_some((counts.refused_connections, counts.refused_pool)),
                failure_affected: self.failures.as_deref().is_some_and(|f| f.affected[i]),
                class: spec.class,
                verb: spec.verb,
            })
            .collect();
        // The network's state (packets, queues, flows' transports) is freed before the results
        // are built beside the records: the run's peak memory would otherwise be the two at once.
        let (cfg, counters) = (self.cfg, self.counters);
        drop(self);
        let mut result = RunResult::new(cfg, records, counters);
        result.summary.pause_cycle = pause_cycle;
        result
    }
}

/// Each partition's flows in start order, as a chain: a partitioned run starts each flow at its
/// start and schedules the next of its partition then.
#[derive(Default)]
struct FlowChains {
    /// Each partition's first flow (`u32::MAX` for none).
    first: Vec<u32>,
    /// Each flow's successor in its partition (`u32::MAX` for the last).
    next: Vec<u32>,
}

impl FlowChains {
    /// The chains of `count` partitions whose flows start in `parts` (by flow, sorted by
    /// start); empty without partitions.
    fn new(parts: impl ExactSizeIterator<Item = u32>, count: usize) -> Self {
        if parts.len() == 0 {
            return FlowChains::default();
        }
        let mut chains = FlowChains {
            first: vec![u32::MAX; count],
            next: vec![u32::MAX; parts.len()],
        };
        let mut last = vec![u32::MAX; count];
        for (f, part) in parts.enumerate() {
            let prev = std::mem::replace(&mut last[part as usize], f as u32);
            match chains.next.get_mut(prev as usize) {
                Some(prev) => *prev = f as u32,
                None => chains.first[part as usize] = f as u32,
            }
        }
        chains
    }
}

/// The rule `[[pause_control]]` gives the input behind switch port `p`, if any.
fn control_of(cfg: &SimConfig, p: PortId) -> Option<PauseRule> {
    (cfg.pause_control.iter())
        .find(|c| c.port == p)
        .map(|c| c.rule)
}

/// The PFC frames the input behind port `p` sends: its threshold rule's, else `[switch]`'s.
fn pause_frames(cfg: &SimConfig, p: PortId) -> PauseFrames {
    match control_of(cfg, p) {
        Some(PauseRule::Threshold { frames, .. }) => frames,
        _ => cfg.switch.pfc.map(|pfc| pfc.frames).unwrap_or_default(),
    }
}

/// Each flow's size, first PSN and payload per full packet: what SRPT switches rank its packets
/// by, as its sending NIC would (`crate::switch::shared::srpt`).
fn flow_ranks_of(cfg: &SimConfig) -> Arc<FlowRanks> {
    Arc::new(FlowRanks::new(cfg.flows.iter().enumerate().map(
        |(i, spec)| {
            let mtu = cfg.flow_transport(spec).mtu;
            (spec.size_bytes, cfg.initial_psn.psn(cfg.seed, i, 0), mtu)
        },
    )))
}
