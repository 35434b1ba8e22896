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
    /// Plans `f` on `t` up to `horizon` (no change after it is needed), drawing random sets
    /// from `seed`.
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
        }
        if let Some(r) = f.random {
            if r.links as usize > links.len() {
                return Err(FailureError::TooFew {
                    want: r.links,
                    have: links.len(),
                });
            }
            let mut rng = SplitMix::new(stream_seed(seed, Purpose::Failures, 0));
            let mut order: Vec<u32> = (0..links.len() as u32).collect();
            let mut at = r.start;
            while at <= horizon {
                if changes.len() > MAX_CHANGES {
                    return Err(FailureError::TooMany {
                        changes: changes.len(),
                        horizon,
                    });
                }
                // A partial Fisher-Yates shuffle: the first `links` entries are a uniform set.
                for i in 0..r.links as usize {
                    let j = i + rng.below(order.len() - i);
                    order.swap(i, j);
                    changes.push((at, Change::Fail(order[i])));
                    changes.push((at + r.interval, Change::Restore(order[i])));
                }
                at += r.interval;
            }
        }
        let mut instants: Vec<Time> = changes.iter().map(|c| c.0).collect();
        instants.dedup();
        changes.extend(
            instants
                .into_iter()
                .map(|t| (t + f.reconvergence, Change::Reconverge)),
        );
        changes.sort_unstable();
        changes.dedup();
        Ok(Timeline {
            links,
            changes,
            to_failed: f.to_failed,
        })
    }
}

/// The run-time state of failures: the timeline's cursor, which links and ports are down, and
/// what the failures cost.
#[derive(Debug)]
pub struct FailureState {
    pub timeline: Timeline,
    /// The next change to apply.
    pub next: usize,
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
