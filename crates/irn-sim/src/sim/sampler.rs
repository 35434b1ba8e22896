//! What the run looks like over time: samplers, each one event per interval, scheduled
//! only when configured, so a run without one has neither the event nor a branch on its packet
//! path. Every sample's handler is out of line; the event loop keeps a call.
//!
//! Two samplers share the machinery ([`Schedule`], the handler, the running-connection cursor):
//!
//! - **Ordering memory** ([`OrderingMemory`], with an ordering layer): every NIC's ordering-layer
//!   memory at `[ordering] sample_interval` (Eunomia Fig. 17c), summed up as it goes into a
//!   mean and a peak for the summary. Its times are the multiples of the interval from the end
//!   of the warm-up (or the first flow's arrival, if later) to the last flow's arrival
//!   ([`Schedule::of_arrivals`]): the window in which the workload offers its load and the
//!   measured flows start. Warm-up samples would see a network still filling, drain samples one
//!   emptying, so neither counts (nor is taken). With flows that wait for others the window runs
//!   to the end of the run, since they arrive as it goes.
//! - **`[monitor]`** ([`Monitor`]): the selected ports, every NIC and the selected flows at
//!   `[monitor] interval`, handed row by row to a [`SeriesSink`] (nothing kept but each port's
//!   counters at the previous sample). Its times are the multiples of the interval from the
//!   first flow's arrival until the run ends ([`Schedule::of_run`]); it stops early once nothing
//!   else is left to happen, so it never keeps a finished run going.
//!
//! A sample reads every *running connection*: a flow from its start until its receiver has the
//! whole message, counted at its destination's NIC, where the ordering layer sits. Its bytes
//! are [`OrderingLayer::footprint_bytes`] (the bitmap and its state as the paper counts them);
//! a NIC's bytes are the sum over its running connections. Nothing here allocates after setup,
//! but for what a sink does with a row.

use irn_core::ordering::{OrderingLayer, OrderingMode};
use irn_core::{Duration, Time};

use super::hosts::Endpoints;
use super::releasing::Releases;
use super::trace::Trace;
use super::Simulation;
use crate::config::SimConfig;
use crate::engine::Sampler;
use crate::ids::{FlowId, PortId};
use crate::metrics::{BottleneckSummary, SampledMemory};
use crate::port::{OwnerKind, Port, PortExtra};
use crate::series::{FlowSample, NicSample, NodeName, PortSample, SeriesSink};
use crate::switch::{Queues, Switch};
use crate::topology::PortLabel;

/// When samples are taken: every multiple of `interval` in `from..=until`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Schedule {
    interval: Duration,
    from: Time,
    until: Time,
}

impl Schedule {
    /// The window of `cfg`'s measured arrivals: from the end of its warm-up (or its first
    /// arrival, if later) to its last arrival (or the start of its cool-down, if earlier), or
    /// to the end of the run when flows wait for others (they arrive as the run goes).
    fn of_arrivals(cfg: &SimConfig, interval: Duration) -> Self {
        let first = cfg.flows.first().map_or(Time::ZERO, |f| f.start);
        let last = match cfg.dag {
            Some(_) => Time::MAX,
            None => cfg.flows.last().map_or(Time::ZERO, |f| f.start),
        };
        let cooldown = cfg.measure_until.map_or(Time::MAX, |end| Time::ZERO + end);
        Schedule {
            interval,
            from: first.max(Time::ZERO + cfg.warmup),
            until: last.min(cooldown),
        }
    }

    /// The run from its first arrival to `horizon`, the latest it may stop.
    fn of_run(cfg: &SimConfig, interval: Duration, horizon: Time) -> Self {
        Schedule {
            interval,
            from: cfg.flows.first().map_or(Time::ZERO, |f| f.start),
            until: horizon,
        }
    }

    /// The first sample: the first multiple of the interval (after t = 0) not before `from`.
    pub(super) fn first(&self) -> Option<Time> {
        let step = self.interval.as_ps();
        let k = self.from.as_ps().div_ceil(step).max(1);
        let t = Time::from_ps(k.checked_mul(step)?);
        (t <= self.until).then_some(t)
    }

    /// The sample after the one at `t`.
    pub(super) fn after(&self, t: Time) -> Option<Time> {
        let next = t + self.interval;
        (next <= self.until).then_some(next)
    }
}

/// Why `cfg`'s ordering memory will have no sample, if it runs a layer whose
/// `sample_interval` has no multiple in the window of measured arrivals: the summary's sampled
/// memory would be empty, with nothing to say why.
pub(crate) fn unsampled_ordering(cfg: &SimConfig) -> Option<String> {
    if cfg.ordering.mode == OrderingMode::None {
        return None;
    }
    let schedule = Schedule::of_arrivals(cfg, cfg.ordering.sample_interval);
    if schedule.first().is_some() {
        return None;
    }
    let us = |t: Time| t.as_ps() as f64 / 1e6;
    Some(format!(
        "ordering.sample_interval = {}: no multiple of it falls in the window of measured \
         arrivals ({:.3} us to {:.3} us), so the ordering layer's memory is never sampled and \
         summary.json's sampled ordering memory stays empty; a shorter interval samples it \
         (ordering_peak_bytes, exact, is kept either way)",
        cfg.ordering.sample_interval,
        us(schedule.from),
        us(schedule.until)
    ))
}

/// Every NIC's ordering memory: the latest sample, and the sums the summary needs.
#[derive(Debug, Clone)]
pub(super) struct OrderingMemory {
    pub(super) schedule: Schedule,
    /// Per NIC (host index): its bytes at the latest sample.
    nic_bytes: Vec<u64>,
    samples: u64,
    /// Over every sample and NIC: the sum and the largest of the NIC's bytes.
    nic_bytes_sum: u64,
    nic_bytes_peak: u64,
    /// Over every sample: the bytes of the bitmaps alone, on every NIC together.
    bitmap_bytes_sum: u64,
    /// Over every sample: the running connections it read.
    connections: u64,
    /// Every flow before this one has released its layer (or never had one): where a sample
    /// starts reading.
    first_running: usize,
    /// Per flow: the most bytes its connection ever held (exact, not sampled), once its layer
    /// has gone.
    flow_peak_bytes: Vec<u32>,
}

impl OrderingMemory {
    /// The sampler for `cfg`, which runs an ordering layer.
    pub(super) fn new(cfg: &SimConfig) -> Self {
        OrderingMemory {
            schedule: Schedule::of_arrivals(cfg, cfg.ordering.sample_interval),
            nic_bytes: vec![0; cfg.topology.hosts().len()],
            samples: 0,
            nic_bytes_sum: 0,
            nic_bytes_peak: 0,
            bitmap_bytes_sum: 0,
            connections: 0,
            first_running: 0,
            flow_peak_bytes: vec![0; cfg.flows.len()],
        }
    }

    /// Reads the running connections among the first `started` flows (`layers`, each flow's
    /// ordering layer while it runs; `cfg`, where their destinations are).
    fn take(&mut self, cfg: &SimConfig, layers: &[Option<Box<OrderingLayer>>], started: Started) {
        let (bitmap_bytes, connections) = read_layers(
            cfg,
            layers,
            &mut self.first_running,
            started,
            &mut self.nic_bytes,
        );
        self.bitmap_bytes_sum += bitmap_bytes;
        self.connections += connections;
        self.samples += 1;
        self.nic_bytes_sum += self.nic_bytes.iter().sum::<u64>();
        let peak = self.nic_bytes.iter().copied().max().unwrap_or(0);
        self.nic_bytes_peak = self.nic_bytes_peak.max(peak);
    }

    /// Keeps flow `f`'s peak before its layer goes.
    pub(super) fn flow_ended(&mut self, f: usize, layer: &OrderingLayer) {
        self.flow_peak_bytes[f] = layer.stats().peak_bytes;
    }

    /// Flow `f`'s peak ordering bytes (0 if it never started).
    pub(super) fn flow_peak_bytes(&self, f: usize) -> u32 {
        self.flow_peak_bytes[f]
    }

    /// The means and the peak over every sample taken.
    pub(super) fn summary(&self) -> SampledMemory {
        let nic_samples = self.samples * self.nic_bytes.len() as u64;
        SampledMemory {
            samples: self.samples,
            avg_nic_bytes: (nic_samples > 0)
                .then(|| self.nic_bytes_sum as f64 / nic_samples as f64),
            peak_nic_bytes: (self.samples > 0).then_some(self.nic_bytes_peak),
            avg_nic_bitmap_bytes: (nic_samples > 0)
                .then(|| self.bitmap_bytes_sum as f64 / nic_samples as f64),
            avg_connection_bytes: (self.connections > 0)
                .then(|| self.nic_bytes_sum as f64 / self.connections as f64),
        }
    }
}

/// Which flows may have started: none at or past the index; below it, those whose start time
/// is set (with dependent flows; all of them without).
type Started<'a> = (usize, Option<&'a [Time]>);

/// Sets `nic_bytes` to each NIC's ordering memory now: the footprints of the running
/// connections among the `started` flows, at their destinations. `first_running` is the
/// caller's cursor: every flow before it has released its layer (or never had one), so a
/// sample starts reading there. Returns the bytes of the bitmaps alone and the connections
/// read.
fn read_layers(
    cfg: &SimConfig,
    layers: &[Option<Box<OrderingLayer>>],
    first_running: &mut usize,
    (started, started_at): Started,
    nic_bytes: &mut [u64],
) -> (u64, u64) {
    let running = |l: &Option<Box<OrderingLayer>>| l.as_ref().is_some_and(|l| !l.is_released());
    // A flow that waits for others has no layer yet either: the scan stops at it.
    let waiting = |f: usize| started_at.is_some_and(|s| s[f] == Releases::NOT_STARTED);
    while *first_running < started && !running(&layers[*first_running]) && !waiting(*first_running)
    {
        *first_running += 1;
    }
    nic_bytes.fill(0);
    let (mut bitmap_bytes, mut connections) = (0, 0);
    for (layer, spec) in layers[*first_running..started]
        .iter()
        .zip(&cfg.flows[*first_running..started])
    {
        if let Some(layer) = layer.as_deref().filter(|l| !l.is_released()) {
            nic_bytes[spec.dst.index()] += u64::from(layer.footprint_bytes());
            bitmap_bytes += u64::from(layer.bitmap_bytes());
            connections += 1;
        }
    }
    (bitmap_bytes, connections)
}

/// A sampled port's counters, cumulative since the run began: a sample writes the difference
/// from the previous one.
#[derive(Debug, Clone, Copy, Default)]
struct PortCounts {
    bytes_sent: u64,
    paused: Duration,
    pause_sent: u64,
    pause_received: u64,
    pause_quanta_sent: u64,
    ecn_marks: u64,
    drops: u64,
    link_losses: u64,
}

impl PortCounts {
    /// Port `port`'s counts at `now` (`switch`: its switch, if it has one, and its number
    /// there). Bytes count as sent as they are serialized: a packet half out at `now` counts
    /// half, so a window never holds more than its link could carry.
    /// `link_losses`: what the port's link has lost so far.
    fn read(
        port: &Port,
        extra: &PortExtra,
        switch: Option<(&Switch, usize)>,
        link_losses: u64,
        now: Time,
    ) -> Self {
        let unsent = extra.rate.bdp_bytes(port.sending_after(now));
        PortCounts {
            bytes_sent: port.bytes_sent.saturating_sub(unsent),
            paused: extra.pauses.until(now, port.paused),
            pause_sent: extra.pauses.sent,
            pause_received: extra.pauses.received,
            pause_quanta_sent: extra.pauses.quanta_sent,
            ecn_marks: switch.map_or(0, |(s, local)| s.ecn_marks_at(local)),
            drops: switch.map_or(0, |(s, local)| s.drops_at(local)),
            link_losses,
        }
    }
}

/// A port `[monitor]` samples: what its rows say about it, and its counts at the last sample.
#[derive(Debug, Clone)]
struct Watched {
    port: PortId,
    node: NodeName,
    peer: NodeName,
    tier: u32,
    peer_tier: u32,
    /// Its node's and peer's tier names and indices, made once here.
    label: PortLabel,
    last: PortCounts,
    /// Its samples from `monitor.summary_from` on, summed for the summary's `bottleneck`.
    tally: Tally,
}

/// A switch port's samples from `monitor.summary_from` on, summed as they are taken.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    samples: u64,
    queue_sum: u128,
    queue_peak: u64,
    bytes_sent: u64,
    /// What its link could carry in those samples' windows.
    capacity: u64,
    drops: u64,
}

impl Tally {
    /// Counts one sample of a switch port.
    fn add(&mut self, queue: u64, bytes_sent: u64, capacity: u64, drops: u64) {
        self.samples += 1;
        self.queue_sum += u128::from(queue);
        self.queue_peak = self.queue_peak.max(queue);
        self.bytes_sent += bytes_sent;
        self.capacity += capacity;
        self.drops += drops;
    }

    fn summary(&self, port: PortId) -> BottleneckSummary {
        let share = |n: f64, d: f64| if d > 0.0 { n / d } else { 0.0 };
        BottleneckSummary {
            port: port.0,
            samples: self.samples,
            avg_queue_bytes: share(self.queue_sum as f64, self.samples as f64),
            peak_queue_bytes: self.queue_peak,
            utilization: share(self.bytes_sent as f64, self.capacity as f64),
            drops: self.drops,
        }
    }
}

/// The summary's `bottleneck` from `ports`' tallies: the switch port that sent the most
/// bytes in its counted samples (the first of equals, in port order); `None` when no switch
/// port was sampled from `monitor.summary_from` on.
fn busiest(ports: &[Watched]) -> Option<BottleneckSummary> {
    let counted = ports.iter().filter(|w| w.tally.samples > 0);
    let most = counted.fold(None::<&Watched>, |best, w| match best {
        Some(b) if b.tally.bytes_sent >= w.tally.bytes_sent => Some(b),
        _ => Some(w),
    })?;
    Some(most.tally.summary(most.port))
}

/// `[monitor]`'s sampler: rows go to the sink as they are read.
pub(super) struct Monitor<'a> {
    pub(super) schedule: Schedule,
    sink: &'a mut dyn SeriesSink,
    ports: Vec<Watched>,
    nics: bool,
    /// Per NIC: flows running with it as source and as destination, and its ordering bytes
    /// (empty without a layer).
    sending: Vec<u32>,
    receiving: Vec<u32>,
    ordering_bytes: Vec<u64>,
    /// Every flow before this one has ended: where counting running flows starts.
    first_active: usize,
    /// [`read_layers`]' cursor.
    first_layer: usize,
    /// The selected flows, and whether their last row (the first once done) is written.
    flows: Vec<(FlowId, bool)>,
    /// Samples taken: left out of the summary's event count, which then reads the same with
    /// and without a monitor.
    pub(super) samples: u64,
    /// Samples from this time on count in the summary's `bottleneck` (`None`: none do).
    summary_from: Option<Time>,
}

impl std::fmt::Debug for Monitor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Monitor")
            .field("schedule", &self.schedule)
            .field("ports", &self.ports.len())
            .finish_non_exhaustive()
    }
}

impl<'a> Monitor<'a> {
    /// The sampler of `cfg.monitor` over `ports` (the simulation's), writing to `sink`; the run
    /// stops by `horizon` at the latest.
    pub(super) fn new(
        cfg: &SimConfig,
        m: &crate::config::Monitor,
        ports: &[Port],
        horizon: Time,
        sink: &'a mut dyn SeriesSink,
    ) -> Self {
        let tiers = crate::scenario::node_tiers(&cfg.topology);
        let name = |p: &Port| match p.owner.kind() {
            OwnerKind::Host(h) => NodeName {
                switch: false,
                index: h.0,
            },
            OwnerKind::Switch(s) => NodeName {
                switch: true,
                index: s as u32,
            },
        };
        let hosts = cfg.topology.hosts().len();
        Monitor {
            schedule: Schedule::of_run(cfg, m.interval, horizon),
            sink,
            ports: (m.ports.iter())
                .map(|&p| {
                    let port = &ports[p.index()];
                    let peer = &ports[port.peer.index()];
                    let node_of = |p: PortId| cfg.topology.ports()[p.index()].node.index();
                    Watched {
                        port: p,
                        node: name(port),
                        peer: name(peer),
                        tier: tiers[node_of(p)],
                        peer_tier: tiers[node_of(port.peer)],
                        label: cfg.topology.port_label(p),
                        last: PortCounts::default(),
                        tally: Tally::default(),
                    }
                })
                .collect(),
            nics: m.nics,
            sending: vec![0; hosts],
            receiving: vec![0; hosts],
            ordering_bytes: vec![0; hosts],
            first_active: 0,
            first_layer: 0,
            flows: m.flows.iter().map(|&f| (f, false)).collect(),
            samples: 0,
            summary_from: m.summary_from.map(|d| Time::ZERO + d),
        }
    }

    /// The summary's `bottleneck`: the busiest sampled switch port from
    /// `monitor.summary_from` on.
    pub(super) fn bottleneck(&self) -> Option<BottleneckSummary> {
        busiest(&self.ports)
    }
}

impl<T: Trace> Simulation<'_, T> {
    /// [`Event::Sample`](crate::engine::Event::Sample) or
    /// [`Event::Monitor`](crate::engine::Event::Monitor): `which` sampler takes its sample and
    /// schedules its next one. Out of line: the event loop keeps only a call.
    #[cold]
    #[inline(never)]
    pub(super) fn sample(&mut self, which: Sampler) {
        match which {
            Sampler::Ordering => {
                let below = self.started_below();
                let Some(memory) = self.memory.as_mut() else {
                    return;
                };
                let started_at = self.releases.as_deref().map(|r| &r.started_at[..]);
                memory.take(self.cfg, &self.layers, (below, started_at));
                // As the monitor's: with nothing else pending, another sample only prolongs
                // the run (its schedule runs to the end with dependent flows).
                if let Some(next) = memory.schedule.after(self.now) {
                    if !self.queue.is_empty() {
                        self.queue.schedule(next, Sampler::Ordering.event());
                    }
                }
            }
            Sampler::Monitor => {
                let Some(mut monitor) = self.monitor.take() else {
                    return;
                };
                self.monitor_ports(&mut monitor);
                if monitor.nics {
                    self.monitor_nics(&mut monitor);
                }
                self.monitor_flows(&mut monitor);
                monitor.samples += 1;
                // Nothing else pending: the run is over, and another sample would only
                // prolong it; a full sink takes no more.
                if let Some(next) = monitor.schedule.after(self.now) {
                    if !self.queue.is_empty() && !monitor.sink.full() {
                        self.queue.schedule(next, Sampler::Monitor.event());
                    }
                }
                self.monitor = Some(monitor);
            }
        }
    }

    /// A row for each sampled port.
    fn monitor_ports(&self, m: &mut Monitor) {
        let now = self.now;
        let time_us = now.as_ps() as f64 / 1e6;
        let interval = m.schedule.interval;
        let counted = m.summary_from.is_some_and(|from| now >= from);
        for w in &mut m.ports {
            let p = w.port.index();
            let (port, extra) = (&self.ports[p], &self.extra[p]);
            let switch = match port.owner.kind() {
                OwnerKind::Switch(s) => Some((&self.switches[s], usize::from(port.local))),
                OwnerKind::Host(_) => None,
            };
            let lost = self.loss.get(p).map_or(0, |d| d.lost);
            let now_counts = PortCounts::read(port, extra, switch, lost, now);
            let last = std::mem::replace(&mut w.last, now_counts);
            let bytes_sent = now_counts.bytes_sent - last.bytes_sent;
            let capacity = extra.rate.bdp_bytes(interval);
            let queue_bytes = switch.map_or(0, |(s, local)| s.queued_bytes(local));
            let drops = now_counts.drops - last.drops;
            if counted && switch.is_some() {
                w.tally.add(queue_bytes, bytes_sent, capacity, drops);
            }
            let capacity = capacity as f64;
            m.sink.port(&PortSample {
                time_us,
                port: w.port.0,
                node: w.node,
                local: port.local,
                peer: w.peer,
                tier: w.tier,
                peer_tier: w.peer_tier,
                queue_bytes,
                buffer_bytes: switch.map(|(s, local)| s.buffer_bytes(local)),
                paused: u8::from(port.paused),
                paused_us: (now_counts.paused - last.paused).as_us_f64(),
                pause_sent: now_counts.pause_sent - last.pause_sent,
                pause_received: now_counts.pause_received - last.pause_received,
                bytes_sent,
                utilization: if capacity > 0.0 {
                    bytes_sent as f64 / capacity
                } else {
                    0.0
                },
                ecn_marks: now_counts.ecn_marks - last.ecn_marks,
                drops,
                link_losses: now_counts.link_losses - last.link_losses,
                node_label: w.label.node,
                peer_label: w.label.peer,
                pause_quanta_sent: now_counts.pause_quanta_sent - last.pause_quanta_sent,
            });
        }
    }

    /// A row for each NIC: its running flows, and its ordering memory.
    fn monitor_nics(&self, m: &mut Monitor) {
        let time_us = self.now.as_ps() as f64 / 1e6;
        let started = self.started_below();
        while m.first_active < started
            && !self.flows[m.first_active].running()
            && self.has_started(m.first_active)
        {
            m.first_active += 1;
        }
        m.sending.fill(0);
        m.receiving.fill(0);
        for flow in &self.flows[m.first_active..started] {
            if flow.running() {
                m.sending[flow.src.index()] += 1;
                m.receiving[flow.dst.index()] += 1;
            }
        }
        let ordered = !self.layers.is_empty();
        if ordered {
            read_layers(
                self.cfg,
                &self.layers,
                &mut m.first_layer,
                (started, self.releases.as_deref().map(|r| &r.started_at[..])),
                &mut m.ordering_bytes,
            );
        }
        for h in 0..m.sending.len() {
            m.sink.nic(&NicSample {
                time_us,
                host: h as u32,
                flows_sending: m.sending[h],
                flows_receiving: m.receiving[h],
                ordering_bytes: ordered.then_some(m.ordering_bytes[h]),
            });
        }
    }

    /// A row for each selected flow that has started, until the first sample after it is
    /// received.
    fn monitor_flows(&self, m: &mut Monitor) {
        let time_us = self.now.as_ps() as f64 / 1e6;
        let mtu = u64::from(self.cfg.transport.mtu);
        for (f, finished) in &mut m.flows {
            if *finished || f.index() >= self.started_below() || !self.has_started(f.index()) {
                continue;
            }
            let flow = &self.flows[f.index()];
            let size = self.cfg.flows[f.index()].size_bytes;
            let done = flow.received_at.is_some();
            let (delivered, rate, window) = match flow.qp.as_deref().filter(|_| !flow.ended) {
                Some(Endpoints::Message { sender, receiver }) => (
                    Some(if done {
                        size
                    } else {
                        (receiver.stats().packets_accepted * mtu).min(size)
                    }),
                    sender.rate().map(|r| r.as_bps() as f64 / 1e9),
                    sender.window(),
                ),
                Some(Endpoints::Verbs(_)) => (None, None, None),
                None => (done.then_some(size), None, None),
            };
            m.sink.flow(&FlowSample {
                time_us,
                flow: f.0,
                delivered_bytes: delivered,
                rate_gbps: rate,
                window_packets: window,
                done: u8::from(done),
            });
            *finished = done;
        }
    }

    /// Drops flow `f`'s ordering layer (its flow has ended), keeping its peak.
    pub(super) fn drop_layer(&mut self, f: FlowId) {
        if let Some(slot) = self.layers.get_mut(f.index()) {
            if let (Some(memory), Some(layer)) = (self.memory.as_mut(), slot.as_deref()) {
                memory.flow_ended(f.index(), layer);
            }
            *slot = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_fall_on_multiples_of_the_interval_inside_the_window() {
        let us = |n| Time::ZERO + Duration::from_us(n);
        // (from, until, interval, the samples)
        let cases: [(u64, u64, u64, &[u64]); 6] = [
            (0, 35, 10, &[10, 20, 30]),
            (10, 35, 10, &[10, 20, 30]),
            (11, 40, 10, &[20, 30, 40]),
            (0, 9, 10, &[]),
            (25, 25, 5, &[25]),
            (26, 29, 5, &[]),
        ];
        for (from, until, interval, want) in cases {
            let s = Schedule {
                interval: Duration::from_us(interval),
                from: us(from),
                until: us(until),
            };
            let got: Vec<Time> = std::iter::successors(s.first(), |&t| s.after(t)).collect();
            let want: Vec<Time> = want.iter().map(|&t| us(t)).collect();
            assert_eq!(got, want, "{from}..={until} every {interval}");
        }
    }
}
