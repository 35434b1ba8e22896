//! Link failures (`[failures]`; Eunomia §2.3, §5.6): switch-to-switch links that go down for an
//! interval and come back, and routing that reconverges around them.
//!
//! A failed link loses what is on it and what waits in the queues of its two ends, and every
//! packet sent to it until routing reconverges; those losses are counted apart from buffer drops
//! and mark the flow they belonged to as *affected*. `reconvergence` after each change (default
//! 0) switches recompute their shortest paths over the links that are up, so balancers stop
//! using failed ports and ECMP rehashes flows over the surviving next hops. A restored link
//! carries traffic again once routing reconverges.
//!
//! Under source routing (k-shortest paths, ConWeave) the routes are fixed: after reconvergence
//! the first switch skips routes through links that are down, and a packet already on such a
//! route is lost where it meets the failed link.
//!
//! Everything here is planned before the run: the whole timeline of failures and restorations
//! (random sets drawn from the seed's `Failures` stream, scheduled ones as given) is one sorted
//! list the simulation walks with a single event kind, so a run without failures pays nothing.
//! The one exception: a workload whose flows wait for others (a DAG, collectives) runs for as
//! long as its flows keep being released, which no plan knows in advance, so the random sets
//! are drawn further, from the same stream, whenever the run's horizon moves past the plan
//! ([`Timeline::extend`]); a run gets the sets it would have got from a plan to its end.

use irn_core::time::{Duration, Time};

use crate::ids::{NodeId, PortId};
use crate::rng::{stream_seed, Purpose, SplitMix};
use crate::topology::{NodeKind, Topology};

/// `[failures]` as the simulation takes it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Failures {
    /// Repeated random failures, if any.
    pub random: Option<RandomFailures>,
    /// Failures at given times.
    pub scheduled: Vec<ScheduledFailure>,
    /// How long after each change routing converges to the links that are up.
    pub reconvergence: Duration,
    /// What a switch does with a packet it routes to a failed link.
    pub to_failed: ToFailed,
}

/// What a switch does with a packet it routes to a failed link (`failures.to_failed_link`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ToFailed {
    /// Drops it, as a switch does with a frame for a port whose link is down.
    #[default]
    Drop,
    /// Queues it, charged to the buffer, to be sent when the link comes back: ns-3's
    /// behaviour (HPCC's and ConWeave's simulators), whose failed device keeps what it is given
    /// and never sends it; under PFC those packets pause the inputs they came in on.
    Hold,
}

/// Every `interval` from `start`, the previous set of failed links comes back and a new random
/// set of `links` switch-to-switch links fails (Eunomia's experiment: 100 ms).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RandomFailures {
    /// How many links fail at once.
    pub links: u32,
    pub interval: Duration,
    pub start: Time,
}

/// The link between `nodes` fails `at`, for `duration`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScheduledFailure {
    pub at: Time,
    pub nodes: (NodeId, NodeId),
    pub duration: Duration,
}

/// What happens at one instant of the timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Change {
    /// A link comes back (listed before failures at the same instant, so a link failed again
    /// by the next random set stays down).
    Restore(u32),
    /// A link (index into [`Timeline::links`]) goes down.
    Fail(u32),
    /// Routing converges to the links up now.
    Reconverge,
}

/// Every switch-to-switch link that can fail, and the run's sorted changes.
#[derive(Clone, Debug)]
pub struct Timeline {
    /// Each link's two ports, the lower first, in port order.
    pub links: Vec<(PortId, PortId)>,
    pub changes: Vec<(Time, Change)>,
    pub to_failed: ToFailed,
    /// How long after each change routing reconverges.
    reconvergence: Duration,
    /// The random sets not drawn yet; `None` without random failures.
    random: Option<RandomPlan>,
}

/// Where the drawing of random sets stands: the next set's time and the stream it comes from.
#[derive(Clone, Debug)]
struct RandomPlan {
    failures: RandomFailures,
    rng: SplitMix,
    /// The links, shuffled in part by every set drawn.
    order: Vec<u32>,
    /// When the next set fails.
    next_at: Time,
}

/// Why a `[failures]` setting cannot be planned on this topology.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FailureError {
    #[error("there is no link between node {0} and node {1}")]
    NoLink(NodeId, NodeId),
    #[error("node {0} is a host: only links between two switches fail")]
    HostLink(NodeId),
    #[error("node {0} is not a node of the topology ({1} nodes)")]
    NoNode(NodeId, usize),
    #[error("the topology has {have} links between switches, fewer than the {want} asked for")]
    TooFew { want: u32, have: usize },
    #[error(
        "{changes} link changes before the run's horizon ({horizon}): more than {MAX_CHANGES}; \
         use a longer interval"
    )]
    TooMany { changes: usize, horizon: Time },
}

/// The most changes a timeline may plan: bounds its memory (16 B each).
pub const MAX_CHANGES: usize = 10_000_000;

/// The switch-to-switch links of `t`, each as its two ports.
pub fn switch_links(t: &Topology) -> Vec<(PortId, PortId)> {
    let ports = t.ports();
    let switch = |p: PortId| t.kind(ports[p.index()].node) == NodeKind::Switch;
    (0..ports.len() as u32)
        .map(PortId)
        .filter(|&p| p < ports[p.index()].peer && switch(p) && switch(ports[p.index()].peer))
        .map(|p| (p, ports[p.index()].peer))
        .collect()
}

/// The index in `links` of the (first) link between `a` and `b`.
pub fn find_link(
    t: &Topology,
    links: &[(PortId, PortId)],
    (a, b): (NodeId, NodeId),
) -> Result<u32, FailureError> {
    for n in [a, b] {
        if n.index() >= t.node_count() {
            return Err(FailureError::NoNode(n, t.node_count()));
        }
        if t.kind(n) == NodeKind::Host {
            return Err(FailureError::HostLink(n));
        }
    }
    let node = |p: PortId| t.ports()[p.index()].node;
    (links.iter())
        .position(|&(p, q)| (node(p), node(q)) == (a, b) || (node(p), node(q)) == (b, a))
        .map(|i| i as u32)
        .ok_or(FailureError::NoLink(a, b))
}

impl Timeline {
    /// Plans `f` on `t` up to `horizon` (no change after it is needed, unless [`extend`]ed),
    /// drawing random sets from `seed`.
    ///
    /// [`extend`]: Self::extend
    pub fn plan(
        f: &Failures,
        t: &Topology,
        seed: u64,
        horizon: Time,
    ) -> Result<Timeline, FailureError> {
        let links = switch_links(t);
        let mut changes = Vec::new();
        for s in &f.scheduled {
            let l = find_link(t, &links, s.nodes)?;
            changes.push((s.at, Change::Fail(l)));
            changes.push((s.at + s.duration, Change::Restore(l)));
            changes.push((s.at + f.reconvergence, Change::Reconverge));
            changes.push((s.at + s.duration + f.reconvergence, Change::Reconverge));
        }
        let random = match f.random {
            Some(r) if r.links as usize > links.len() => {
                return Err(FailureError::TooFew {
                    want: r.links,
                    have: links.len(),
                })
            }
            Some(r) => Some(RandomPlan {
                failures: r,
                rng: SplitMix::new(stream_seed(seed, Purpose::Failures, 0)),
                order: (0..links.len() as u32).collect(),
                next_at: r.start,
            }),
            None => None,
        };
        let mut timeline = Timeline {
            links,
            changes,
            to_failed: f.to_failed,
            reconvergence: f.reconvergence,
            random,
        };
        timeline.extend(horizon, 0)?;
        Ok(timeline)
    }

    /// Sorts the changes from `from` on, each once.
    fn sort_from(&mut self, from: usize) {
        let mut tail = self.changes.split_off(from);
        tail.sort_unstable();
        tail.dedup();
        self.changes.append(&mut tail);
    }

    /// Whether random sets due by `horizon` are still to be drawn.
    #[inline]
    pub fn ends_before(&self, horizon: Time) -> bool {
        self.random.as_ref().is_some_and(|r| r.next_at <= horizon)
    }

    /// Draws the random sets due by `horizon` (each failing its links and restoring them an
    /// interval later, routing reconverging after both) and sorts them among the changes from
    /// `from` on, the ones not applied yet.
    pub fn extend(&mut self, horizon: Time, from: usize) -> Result<(), FailureError> {
        let Some(r) = self.random.as_mut() else {
            self.sort_from(from);
            return Ok(());
        };
        let RandomFailures {
            links, interval, ..
        } = r.failures;
        while r.next_at <= horizon {
            if self.changes.len() > MAX_CHANGES {
                return Err(FailureError::TooMany {
                    changes: self.changes.len(),
                    horizon,
                });
            }
            let at = r.next_at;
            // A partial Fisher-Yates shuffle: the first `links` entries are a uniform set.
            for i in 0..links as usize {
                let j = i + r.rng.below(r.order.len() - i);
                r.order.swap(i, j);
                self.changes.push((at, Change::Fail(r.order[i])));
                self.changes
                    .push((at + interval, Change::Restore(r.order[i])));
            }
            self.changes
                .push((at + self.reconvergence, Change::Reconverge));
            (self.changes).push((at + interval + self.reconvergence, Change::Reconverge));
            r.next_at += interval;
        }
        self.sort_from(from);
        Ok(())
    }
}

/// The run-time state of failures: the timeline's cursor, which links and ports are down, and
/// what the failures cost.
#[derive(Debug)]
pub struct FailureState {
    pub timeline: Timeline,
    /// The next change to apply.
    pub next: usize,
    /// When the pending `LinkChange` event is; [`Time::MAX`] with none. An event at another
    /// time is stale (an extension scheduled an earlier one) and does nothing.
    pub due: Time,
    /// Per link, how many failures hold it down (scheduled ones may overlap random ones).
    pub holds: Vec<u16>,
    /// Per port: its link is down.
    pub port_down: Vec<bool>,
    /// Per port: its link was down when routing last converged. Source routes (k-shortest,
    /// ConWeave) keep their tables and read this instead: a route through such a port is not
    /// taken.
    pub routed_down: Vec<bool>,
    /// Per link: no packet sent before it failed is still due after this (its ports' last
    /// transmissions plus the link delay); a restored link sends nothing earlier, so no stale
    /// arrival event meets a new packet.
    pub quiet_until: Vec<Time>,
    /// Links that went down.
    pub link_failures: u64,
    /// Packets lost to failures: on a failed link, queued for it, or sent to it before routing
    /// reconverged, or with no route left.
    pub packets_lost: u64,
    /// Packets routed to a failed link and held in its queue (`ToFailed::Hold`).
    pub packets_held: u64,
    /// Per flow: it lost a packet (data or control) to a failure, or had one held for one.
    pub affected: Vec<bool>,
}

impl FailureState {
    pub fn new(timeline: Timeline, ports: usize, flows: usize) -> Self {
        let links = timeline.links.len();
        FailureState {
            timeline,
            next: 0,
            due: Time::MAX,
            holds: vec![0; links],
            port_down: vec![false; ports],
            routed_down: vec![false; ports],
            quiet_until: vec![Time::ZERO; links],
            link_failures: 0,
            packets_lost: 0,
            packets_held: 0,
            affected: vec![false; flows],
        }
    }
}
