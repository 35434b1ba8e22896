//! Flows that wait for others (`cfg.dag`): a flow whose parents have all finished starts after
//! the latest of them plus its edge's delay.
//!
//! A flow *finishes* here when its receiver holds the whole message (its `received_at`, the
//! end of its FCT): that is when the data a collective's next step needs is at the rank. The
//! work is per finished flow (one pass over its children), never per packet; a run without a
//! graph never gets here.

use irn_core::Time;

use super::trace::Trace;
use super::Simulation;
use crate::engine::Event;
use crate::ids::FlowId;
use crate::workload::FlowDag;

/// What releases the flows that wait for others.
#[derive(Debug)]
pub(super) struct Releases {
    /// Per flow: parents not yet finished.
    left: Vec<u32>,
    /// Per flow: the latest of its finished parents' finishes plus their edges' delays.
    ready_at: Vec<Time>,
    /// Per flow: when it started; [`Releases::NOT_STARTED`] until then.
    pub(super) started_at: Vec<Time>,
    /// No flow at or past this index has started.
    started_below: usize,
}

impl Releases {
    pub(super) const NOT_STARTED: Time = Time::MAX;

    pub(super) fn new(dag: &FlowDag) -> Self {
        let n = dag.len();
        Releases {
            left: (0..n).map(|f| dag.parents(f)).collect(),
            ready_at: vec![Time::ZERO; n],
            started_at: vec![Self::NOT_STARTED; n],
            started_below: 0,
        }
    }
}

impl<T: Trace> Simulation<'_, T> {
    /// The first flow at or after `from` that starts by itself (all of them without a graph).
    pub(super) fn next_root(&self, from: usize) -> usize {
        match self.cfg.dag.as_deref() {
            None => from,
            Some(dag) => (from..dag.len())
                .find(|&f| dag.is_root(f))
                .unwrap_or(dag.len()),
        }
    }

    /// No flow at or past this index has started: flows start in order, except those a graph
    /// releases.
    pub(super) fn started_below(&self) -> usize {
        self.releases
            .as_deref()
            .map_or(self.next_flow, |r| r.started_below.max(self.next_flow))
    }

    /// Whether flow `f` (below [`started_below`](Self::started_below)) has started.
    pub(super) fn has_started(&self, f: usize) -> bool {
        (self.releases.as_deref()).is_none_or(|r| r.started_at[f] != Releases::NOT_STARTED)
    }

    /// Notes that flow `f` starts now.
    pub(super) fn note_start(&mut self, f: usize) {
        if let Some(r) = self.releases.as_deref_mut() {
            r.started_at[f] = self.now;
            r.started_below = r.started_below.max(f + 1);
        }
    }

    /// Flow `f`'s receiver has the whole message at `at`: each child it was the last parent of
    /// is scheduled to start after its latest parent plus its delay, and the run's horizon
    /// moves to leave it the drain limit (and random link failures are planned that far).
    #[cold]
    #[inline(never)]
    pub(super) fn flow_received(&mut self, f: FlowId, at: Time) {
        let (Some(dag), Some(r)) = (self.cfg.dag.as_deref(), self.releases.as_deref_mut()) else {
            return;
        };
        for &(child, delay) in dag.children(f.index()) {
            let c = child.index();
            r.ready_at[c] = r.ready_at[c].max(at + delay);
            r.left[c] -= 1;
            if r.left[c] == 0 {
                let start = r.ready_at[c].max(self.now);
                self.horizon = self.horizon.max(start + self.cfg.drain_limit);
                self.queue.schedule(start, Event::FlowRelease(child));
            }
        }
        if self
            .failures
            .as_deref()
            .is_some_and(|f| f.timeline.ends_before(self.horizon))
        {
            self.extend_failures();
        }
    }
}
