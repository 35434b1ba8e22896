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

use std::marker::PhantomData;

use irn_core::{Duration, Time};

use super::trace::Trace;
use crate::engine::{Event, EventQueue};
use crate::ids::NodeId;
use crate::partition::Partitioning;
use crate::topology::Topology;
use crate::workload::FlowSpec;

/// The event queue(s) of a run; only a run compiled with [`Trace::PARTS`] looks for partitions.
pub(super) struct Calendar<T> {
    /// Every event of an unpartitioned run; a partitioned run's global ones.
    global: EventQueue,
    parts: Option<Box<Parts>>,
    run: PhantomData<T>,
}

/// A partitioned run's queues and where it is.
struct Parts {
    queues: Vec<EventQueue>,
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
    /// Events served from the partitions' queues.
    popped: u64,
    /// The latest time served.
    latest: Time,
}

impl<T: Trace> Calendar<T> {
    /// One queue in time order, its buckets `width` wide, its ring reaching `horizon`.
    pub fn new(width: Duration, horizon: Duration) -> Self {
        Calendar {
            global: EventQueue::with_horizon(width, horizon),
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
        let queues = (0..p.count)
            .map(|_| EventQueue::with_horizon(per_part_width, horizon))
            .collect();
        Calendar {
            parts: Some(Box::new(Parts {
                queues,
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
                popped: 0,
                latest: Time::ZERO,
            })),
            ..global
        }
    }

    pub fn is_partitioned(&self) -> bool {
        self.parts.is_some()
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
            None => self.global.schedule(time, event),
            Some(parts) => parts.schedule(time, event, &mut self.global),
        }
    }

    /// The next event to serve, `None` once there is none up to the run's end.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        match self.parts.as_deref_mut().filter(|_| T::PARTS) {
            None => self.global.pop(),
            Some(parts) => parts.pop(&mut self.global),
        }
    }

    /// Probably the next event (a hint for prefetching: see [`EventQueue::peek_near`]).
    #[inline(always)]
    pub fn peek_near(&self) -> Event {
        match self.parts.as_deref().filter(|_| T::PARTS) {
            Some(p) if p.cur < p.queues.len() => p.queues[p.cur].peek_near(),
            _ => self.global.peek_near(),
        }
    }

    /// Events served so far.
    #[inline(always)]
    pub fn processed(&self) -> u64 {
        let parts = self.parts.as_deref().filter(|_| T::PARTS);
        self.global.processed() + parts.map_or(0, |p| p.popped)
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

    pub fn is_empty(&self) -> bool {
        self.global.is_empty()
            && (self.parts.as_deref()).is_none_or(|p| p.queues.iter().all(EventQueue::is_empty))
    }
}

impl Parts {
    /// The partition `event` happens in; `None` for the global queue.
    #[inline(always)]
    fn part_of(&self, event: Event) -> Option<usize> {
        let part = match event {
            Event::TxDone(p)
            | Event::Pfc { port: p, .. }
            | Event::PauseEnd(p)
            | Event::PauseRefresh(p)
            | Event::CreditTick(p)
            | Event::CreditLimit { port: p, .. }
            | Event::CreditGrant { port: p, .. } => self.port_part[p.index()],
            Event::Arrive(p) | Event::CreditSync { port: p, .. } => self.peer_part[p.index()],
            Event::Timer(f) | Event::FlowStart(f) => self.flow_part[f.index()],
            Event::PauseControl(_)
            | Event::PauseSource(_)
            | Event::FlowArrival
            | Event::FlowRelease(_)
            | Event::Sample
            | Event::Monitor
            | Event::LinkChange
            | Event::Reorder(_) => return None,
        };
        Some(usize::from(part))
    }

    #[inline(always)]
    fn schedule(&mut self, time: Time, event: Event, global: &mut EventQueue) {
        let part = self.part_of(event);
        // Another partition, or the whole network, may hear of this only after the window:
        // the partition being served cannot know their state before then.
        debug_assert!(
            time >= self.window_end || (part == Some(self.cur)),
            "{event:?} at {time:?} from partition {} before its window ends at {:?}",
            self.cur,
            self.window_end
        );
        match part {
            Some(p) => self.queues[p].schedule(time, event),
            None => global.schedule(time, event),
        }
    }

    #[inline(always)]
    fn pop(&mut self, global: &mut EventQueue) -> Option<(Time, Event)> {
        match self.take(self.cur) {
            Some(e) => Some(e),
            None => self.pop_slow(global),
        }
    }

    /// Partition `part`'s next event if it is in the window.
    #[inline(always)]
    fn take(&mut self, part: usize) -> Option<(Time, Event)> {
        let (t, e) = self.queues.get_mut(part)?.pop_before(self.window_end)?;
        self.popped += 1;
        self.latest = self.latest.max(t);
        Some((t, e))
    }

    /// [`pop`](Self::pop) when the partition being served has nothing more in its window: the
    /// next partition's events, or a global event, or the next window.
    #[inline(never)]
    fn pop_slow(&mut self, global: &mut EventQueue) -> Option<(Time, Event)> {
        loop {
            if self.cur + 1 < self.queues.len() {
                self.cur += 1;
                if let Some(e) = self.take(self.cur) {
                    return Some(e);
                }
                continue;
            }
            // Every partition has run up to the window's end: a global event due now runs
            // before the partitions' events of its instant; otherwise the next window opens.
            self.cur = self.queues.len();
            let parts = (self.queues.iter_mut()).filter_map(|q| q.next_time()).min();
            let next_global = global.next_time();
            if let Some(g) = next_global.filter(|&g| parts.is_none_or(|p| g <= p)) {
                if g >= self.stop {
                    return None;
                }
                (self.window_start, self.window_end) = (g, g);
                self.latest = self.latest.max(g);
                return global.pop();
            }
            let start = parts.filter(|&p| p < self.stop)?;
            let end = (start + self.lookahead).min(self.stop);
            self.window_start = start;
            self.window_end = next_global.map_or(end, |g| end.min(g));
            self.cur = 0;
            if let Some(e) = self.take(0) {
                return Some(e);
            }
        }
    }
}
