//! The run's events: one queue in time order, or one per partition served a window at a time
//! ([`crate::partition`]).
//!
//! A partitioned run serves windows as long as the partitions' lookahead: partition 0's events
//! of the window in time order, then partition 1's, and so on. An event goes to the partition
//! of the node it happens at (a port's wake-up to the port's node, a link arrival to the far
//! end's, a sender's timer and a flow's start to its source host's). What reads or changes the
//! whole network at an instant (samples, link failures, PAUSE sources and rules, the workload's
//! global arrival chain) goes to a global queue, whose events are served between windows: a
//! window ends at the next of them, so every partition has run up to that instant.
//!
//! When every link is at least a window long ([`Partitioning::by_node`]), a partition's turn
//! takes its window's events from its wheel at once and serves them node by node
//! ([`NodeBatch`]); what a node then schedules for itself within the window goes to the batch,
//! everything else to the wheels as before. Flows then start in one chain per host, not per
//! partition, so that a flow's start is its own host's event.

use std::marker::PhantomData;

use irn_core::{Duration, Time};

use super::node_batch::NodeBatch;
use super::trace::Trace;
use crate::engine::{Event, EventQueue, Place};
use crate::ids::NodeId;
use crate::partition::Partitioning;
use crate::topology::Topology;
use crate::workload::FlowSpec;

/// The event queue(s) of a run; only a run compiled with [`Trace::PARTS`] looks for partitions.
pub(super) struct Calendar<T> {
    /// The queue events are popped from: every event of an unpartitioned run; in a partitioned
    /// run, the queue of partition [`Parts::held`], swapped in for its turn. So the hot path pops
    /// a field of the simulation as an unpartitioned run does, not a vector's element behind two
    /// pointers, which LLVM reloaded at every step (83 instructions a pop instead of 27).
    served: EventQueue,
    /// Events served from elsewhere than `served` (the other queues, a node batch), less those
    /// `served` counts as popped but were not served yet (drained into a node batch): only its
    /// sum with `served`'s count means anything, hence wrapping arithmetic.
    others_popped: u64,
    parts: Option<Box<Parts>>,
    run: PhantomData<T>,
}

/// A partitioned run's queues and where it is.
struct Parts {
    /// Each partition's queue, except partition `held`'s, which is in [`Calendar::served`]: in
    /// its place, an empty queue that is never used.
    queues: Vec<EventQueue>,
    held: usize,
    /// Each partition's first event when the window opened (`Time::MAX` when it had none).
    due: Vec<Time>,
    /// Samples, link changes, PAUSE sources and rules: served between windows.
    global: EventQueue,
    /// Per port: its node's partition, and its peer's.
    port_part: Vec<u16>,
    peer_part: Vec<u16>,
    /// Per flow: its source host's partition.
    flow_part: Vec<u16>,
    lookahead: Duration,
    /// The partition being served, and its window (the end exclusive).
    cur: usize,
    window_start: Time,
    window_end: Time,
    /// Nothing at or after this is served.
    stop: Time,
    /// The latest time served.
    latest: Time,
    /// [`stop`](Self::stop) was brought forward: the run ends once every partition has run
    /// up to it.
    stopping: bool,
    /// The partition's window served node by node (when every link is a window long).
    batch: Option<NodeBatch>,
}

impl<T: Trace> Calendar<T> {
    /// One queue in time order, its buckets `width` wide, its ring reaching `horizon`.
    pub fn new(width: Duration, horizon: Duration) -> Self {
        Calendar {
            served: EventQueue::with_horizon(width, horizon),
            others_popped: 0,
            parts: None,
            run: PhantomData,
        }
    }

    /// One queue per partition of `p` besides the global one, each as [`new`](Self::new) but
    /// with buckets `per_part_width` wide (only in a run compiled with [`Trace::PARTS`]), for
    /// the flows `flows` on `topo`, serving nothing after `last`.
    pub fn partitioned(
        global: Self,
        p: &Partitioning,
        (per_part_width, horizon): (Duration, Duration),
        topo: &Topology,
        flows: &[FlowSpec],
        last: Time,
    ) -> Self {
        let node_part = |n: NodeId| p.node_part[n.index()];
        let (port_part, peer_part) = (topo.ports().iter())
            .map(|port| {
                (
                    node_part(port.node),
                    node_part(topo.ports()[port.peer.index()].node),
                )
            })
            .unzip();
        let mut queues: Vec<_> = (0..p.count)
            .map(|_| EventQueue::with_horizon(per_part_width, horizon))
            .collect();
        let served = std::mem::replace(&mut queues[0], EventQueue::new(per_part_width));
        Calendar {
            served,
            others_popped: 0,
            parts: Some(Box::new(Parts {
                queues,
                held: 0,
                due: vec![Time::MAX; p.count],
                global: global.served,
                port_part,
                peer_part,
                flow_part: flows
                    .iter()
                    .map(|f| node_part(topo.hosts()[f.src.index()]))
                    .collect(),
                lookahead: p.lookahead,
                cur: p.count,
                window_start: Time::ZERO,
                window_end: Time::ZERO,
                stop: last + Duration::from_ps(1),
                latest: Time::ZERO,
                stopping: false,
                batch: p.by_node.then(|| NodeBatch::new(p, topo, flows)),
            })),
            run: PhantomData,
        }
    }

    pub fn is_partitioned(&self) -> bool {
        self.parts.is_some()
    }

    /// A partition's window is served node by node.
    pub fn by_node(&self) -> bool {
        self.parts.as_deref().is_some_and(|p| p.batch.is_some())
    }

    /// The partition each flow starts in; empty when unpartitioned.
    pub fn flow_parts(&self) -> &[u16] {
        self.parts.as_deref().map_or(&[], |p| &p.flow_part)
    }

    /// How many partitions (1 when unpartitioned).
    pub fn count(&self) -> usize {
        self.parts.as_deref().map_or(1, |p| p.queues.len())
    }

    /// Schedules `event` at `time`, which must not be before the event being served.
    #[inline(always)]
    pub fn schedule(&mut self, time: Time, event: Event) {
        match self.parts.as_deref_mut().filter(|_| T::PARTS) {
            None => self.served.schedule(time, event),
            Some(parts) => {
                let part = parts.part_of(event);
                // Another partition, or the whole network, may hear of this only after the
                // window: the partition being served cannot know their state before then.
                debug_assert!(
                    time >= parts.window_end || (part == Some(parts.cur)),
                    "{event:?} at {time:?} from partition {} before its window ends at {:?}",
                    parts.cur,
                    parts.window_end
                );
                match part {
                    Some(p) if p == parts.held => match parts.batch.as_mut() {
                        Some(b) if time < parts.window_end => b.push(time, event),
                        _ => self.served.schedule(time, event),
                    },
                    Some(p) => parts.queues[p].schedule(time, event),
                    None => parts.global.schedule(time, event),
                }
            }
        }
    }

    /// The next event to serve, `None` once there is none up to the run's end.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        match self.parts.as_deref_mut().filter(|_| T::PARTS) {
            None => self.served.pop(),
            Some(parts) if parts.cur == parts.held => {
                if parts.batch.is_some() {
                    return match parts.pop_batch(&mut self.others_popped) {
                        Some(got) => Some(got),
                        None => self.pop_slow(),
                    };
                }
                match self.served.pop_before(parts.window_end) {
                    Some((t, e)) => {
                        parts.latest = parts.latest.max(t);
                        Some((t, e))
                    }
                    None => self.pop_slow(),
                }
            }
            Some(_) => self.pop_slow(),
        }
    }

    /// Probably the next event (a hint for prefetching: see [`EventQueue::peek_near`]).
    #[inline(always)]
    pub fn peek_near(&self) -> Event {
        if T::PARTS {
            if let Some(b) = self.parts.as_deref().and_then(|p| p.batch.as_ref()) {
                return b.peek();
            }
        }
        self.served.peek_near()
    }

    /// Events served so far.
    #[inline(always)]
    pub fn processed(&self) -> u64 {
        (self.served.processed()).wrapping_add(if T::PARTS { self.others_popped } else { 0 })
    }

    /// The latest time served, which in a partitioned run may be later than the event just
    /// served (another partition's window went further); `None` when unpartitioned.
    pub fn latest(&self) -> Option<Time> {
        self.parts.as_deref().map(|p| p.latest)
    }

    /// Nothing served from now on will be earlier than this: the start of the window being
    /// served (when unpartitioned, the events come in time order: the end of time).
    pub fn settled(&self) -> Time {
        self.parts.as_deref().map_or(Time::MAX, |p| p.window_start)
    }

    /// Serves nothing at or after `t`: once every partition has run up to it, the queue is
    /// done. A partitioned run's last flow can end in one partition while those served after
    /// it in the window have yet to run up to that instant.
    pub fn stop_before(&mut self, t: Time) {
        if let Some(parts) = self.parts.as_deref_mut() {
            parts.stop = parts.stop.min(t);
            parts.window_end = parts.window_end.min(t);
            parts.stopping = true;
        }
    }

    /// [`stop_before`](Self::stop_before) was called: the run goes on until the queue is done.
    pub fn stopping(&self) -> bool {
        T::PARTS && self.parts.as_deref().is_some_and(|p| p.stopping)
    }

    pub fn is_empty(&self) -> bool {
        self.served.is_empty()
            && (self.parts.as_deref()).is_none_or(|p| {
                p.global.is_empty()
                    && p.queues.iter().all(EventQueue::is_empty)
                    && p.batch.as_ref().is_none_or(NodeBatch::is_empty)
            })
    }

    /// Puts partition `p`'s queue in [`served`](Self::served), and the one there back.
    fn hold(&mut self, p: usize) {
        let parts = self.parts.as_deref_mut().expect("a partitioned run");
        if p != parts.held {
            let old = parts.held;
            self.others_popped = self.others_popped.wrapping_add(self.served.processed());
            std::mem::swap(&mut self.served, &mut parts.queues[old]);
            std::mem::swap(&mut self.served, &mut parts.queues[p]);
            self.others_popped = self.others_popped.wrapping_sub(self.served.processed());
            self.served.prefetch_window(parts.window_end);
            parts.held = p;
        }
    }

    /// [`pop`](Self::pop) when the partition being served has nothing more in its window: the
    /// next partition's events, or a global event, or the next window.
    #[inline(never)]
    fn pop_slow(&mut self) -> Option<(Time, Event)> {
        loop {
            let parts = self.parts.as_deref_mut().expect("a partitioned run");
            if parts.cur + 1 < parts.queues.len() {
                parts.cur += 1;
            } else {
                // Every partition has run up to the window's end: a global event due now runs
                // before the partitions' events of its instant; otherwise the next window opens.
                parts.cur = parts.queues.len();
                // Each partition's first event: a partition with none in the window gets
                // none during it (what others schedule for it lands after the window).
                for (p, q) in parts.queues.iter_mut().enumerate() {
                    let q = if p == parts.held { &mut self.served } else { q };
                    parts.due[p] = q.next_time().unwrap_or(Time::MAX);
                }
                let next = parts.due.iter().copied().min().filter(|&t| t != Time::MAX);
                let next_global = parts.global.next_time();
                if let Some(g) = next_global.filter(|&g| next.is_none_or(|p| g <= p)) {
                    if g >= parts.stop {
                        return None;
                    }
                    (parts.window_start, parts.window_end) = (g, g);
                    parts.latest = parts.latest.max(g);
                    self.others_popped = self.others_popped.wrapping_add(1);
                    return parts.global.pop();
                }
                let start = next.filter(|&p| p < parts.stop)?;
                let end = (start + parts.lookahead).min(parts.stop);
                parts.window_start = start;
                parts.window_end = next_global.map_or(end, |g| end.min(g));
                parts.cur = 0;
            }
            let (cur, end) = (parts.cur, parts.window_end);
            if parts.due[cur] >= end {
                continue;
            }
            self.hold(cur);
            let parts = self.parts.as_deref_mut().expect("a partitioned run");
            if let Some(b) = parts.batch.as_mut() {
                let drained = b.fill(&mut self.served, end);
                self.others_popped = self.others_popped.wrapping_sub(drained as u64);
                match parts.pop_batch(&mut self.others_popped) {
                    Some(got) => return Some(got),
                    None => continue,
                }
            }
            if let Some((t, e)) = self.served.pop_before(end) {
                let parts = self.parts.as_deref_mut().expect("a partitioned run");
                parts.latest = parts.latest.max(t);
                return Some((t, e));
            }
        }
    }
}

impl Parts {
    /// The node batch's next event in the window, counted as served (`others` is
    /// [`Calendar::others_popped`]).
    #[inline(always)]
    fn pop_batch(&mut self, others: &mut u64) -> Option<(Time, Event)> {
        let (t, e) = self.batch.as_mut()?.pop(self.window_end)?;
        self.latest = self.latest.max(t);
        *others = others.wrapping_add(1);
        Some((t, e))
    }

    /// The partition `event` happens in; `None` for the global queue.
    #[inline(always)]
    fn part_of(&self, event: Event) -> Option<usize> {
        let part = match event.place()? {
            Place::Port(p) => self.port_part[p.index()],
            Place::Peer(p) => self.peer_part[p.index()],
            Place::Source(f) => self.flow_part[f.index()],
        };
        Some(usize::from(part))
    }
}
