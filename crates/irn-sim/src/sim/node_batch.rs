//! A partition's window served node by node.
//!
//! Partitions ([`crate::partition`]) keep a pod's state in cache for a window; within the pod,
//! consecutive events still belong to any of its switches and hosts, so each finds its node's
//! ports, queues and flows evicted by the others'. When every link, not only those between
//! partitions, is at least a window long, nothing a node does within the window reaches
//! another node before the window ends: each node's events of the window depend on its own
//! state alone, and can be served node after node, each node's in their time order. The
//! partition's events of the window are taken from its wheel at once, grouped by node (a
//! counting sort, which keeps each node's in time order), and served a node at a time; what a
//! node schedules for itself within the window waits in a small heap merged with its drained
//! events. Every node sees its events in the order one global queue gives them; only events
//! that reach a node at the same picosecond from two others may be taken in another order
//! (as between partitions).

use std::collections::VecDeque;

use irn_core::Time;

use crate::engine::{Event, EventQueue, Place};
use crate::ids::NodeId;
use crate::partition::Partitioning;
use crate::topology::Topology;
use crate::workload::FlowSpec;

/// A partition's events of one window, served one node at a time.
///
/// Every link being at least a window long, what a node does within the window reaches no
/// other node before the window ends: each node's events of the window depend on its own state
/// alone. Served node after node (each node's in its own time order), a node's ports, queues
/// and flows stay in cache for all its events instead of being evicted by the partition's
/// other nodes between two of them.
pub(super) struct NodeBatch {
    /// Each port's node, its peer's and each flow's source host, as an index among the nodes
    /// of its partition.
    port_node: Vec<u32>,
    peer_node: Vec<u32>,
    flow_node: Vec<u32>,
    /// The window's events drained from the partition's wheel (time order), with their node.
    drained: Vec<(u32, Time, Event)>,
    /// The same, grouped by node (each node's still in time order).
    events: Vec<(Time, Event)>,
    /// Where each node's events start in `events`, then (once grouped) where they end: an
    /// entry per node of the largest partition.
    starts: Vec<u32>,
    /// The next event of `events` to serve, and the end of the current node's.
    pos: usize,
    node_end: usize,
    /// Events the current node schedules for itself within the window, in (time, scheduling)
    /// order: each goes behind those of its time or earlier, nearly always at the back (a node
    /// schedules forward in time), and is taken after the drained ones of its time (scheduled
    /// earlier).
    local: VecDeque<(Time, Event)>,
}

impl NodeBatch {
    pub(super) fn new(p: &Partitioning, topo: &Topology, flows: &[FlowSpec]) -> Self {
        let mut held = vec![0u32; p.count];
        let local: Vec<u32> = (p.node_part.iter())
            .map(|&part| {
                let n = &mut held[usize::from(part)];
                *n += 1;
                *n - 1
            })
            .collect();
        let most = held.iter().copied().max().unwrap_or(0);
        let node = |n: NodeId| local[n.index()];
        NodeBatch {
            port_node: topo.ports().iter().map(|port| node(port.node)).collect(),
            peer_node: (topo.ports().iter())
                .map(|port| node(topo.ports()[port.peer.index()].node))
                .collect(),
            flow_node: flows
                .iter()
                .map(|f| node(topo.hosts()[f.src.index()]))
                .collect(),
            drained: Vec::new(),
            events: Vec::new(),
            starts: vec![0; most as usize],
            pos: 0,
            node_end: 0,
            local: VecDeque::new(),
        }
    }

    /// The node `event` happens at, among its partition's.
    #[inline(always)]
    fn node_of(&self, event: Event) -> u32 {
        match event.place() {
            Some(Place::Port(p)) => self.port_node[p.index()],
            Some(Place::Peer(p)) => self.peer_node[p.index()],
            Some(Place::Source(f)) => self.flow_node[f.index()],
            // The whole network's: never in a partition's queue.
            None => 0,
        }
    }

    /// Takes `queue`'s events before `end` and groups them by node.
    pub(super) fn fill(&mut self, queue: &mut EventQueue, end: Time) -> usize {
        self.drained.clear();
        while let Some((t, e)) = queue.pop_before(end) {
            self.drained.push((self.node_of(e), t, e));
        }
        self.starts.fill(0);
        for &(n, _, _) in &self.drained {
            self.starts[n as usize] += 1;
        }
        let mut at = 0;
        for s in self.starts.iter_mut() {
            let n = *s;
            *s = at;
            at += n;
        }
        self.events.clear();
        self.events
            .resize(self.drained.len(), (Time::ZERO, Event::FlowArrival));
        for &(n, t, e) in &self.drained {
            let s = &mut self.starts[n as usize];
            self.events[*s as usize] = (t, e);
            *s += 1;
        }
        self.pos = 0;
        self.node_end = 0;
        self.drained.len()
    }

    /// The current node's next event before `end`, or the next node's first; `None` once the
    /// window's events are all served.
    #[inline(always)]
    pub(super) fn pop(&mut self, end: Time) -> Option<(Time, Event)> {
        loop {
            let head = self
                .events
                .get(self.pos)
                .filter(|_| self.pos < self.node_end);
            let next = match (head, self.local.front()) {
                (Some(&(t, _)), Some(&(l, _))) if l < t => self.local.pop_front(),
                (Some(&h), _) => {
                    self.pos += 1;
                    Some(h)
                }
                (None, Some(_)) => self.local.pop_front(),
                (None, None) => {
                    if self.pos >= self.events.len() {
                        return None;
                    }
                    // The next node's turn: grouped, `starts` holds where each node's events end.
                    let n = self.node_of(self.events[self.pos].1);
                    self.node_end = self.starts[n as usize] as usize;
                    continue;
                }
            };
            match next {
                Some((t, e)) if t < end => return Some((t, e)),
                // The run stops short of the window's end (its last flow ended): what is left
                // of the window is not served.
                _ => continue,
            }
        }
    }

    /// Probably the next event (a hint for prefetching): the next drained one.
    #[inline(always)]
    pub(super) fn peek(&self) -> Event {
        self.events
            .get(self.pos)
            .map_or(Event::FlowArrival, |e| e.1)
    }

    /// Schedules `event` at `time`, within the window, for the node being served.
    #[inline(always)]
    pub(super) fn push(&mut self, time: Time, event: Event) {
        debug_assert!(
            self.pos > 0 && self.node_of(event) == self.node_of(self.events[self.pos - 1].1),
            "{event:?} at {time:?} reaches another node within the window"
        );
        match self.local.back() {
            Some(&(t, _)) if t > time => {
                let at = (self.local.iter().rposition(|&(t, _)| t <= time)).map_or(0, |i| i + 1);
                self.local.insert(at, (time, event));
            }
            _ => self.local.push_back((time, event)),
        }
    }

    /// Every event of the window has been served.
    pub(super) fn is_empty(&self) -> bool {
        self.pos >= self.events.len() && self.local.is_empty()
    }
}
