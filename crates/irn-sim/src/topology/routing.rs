//! Shortest-path (hop count) routing with ECMP, precomputed into a flat table.
//!
//! Switches look up their egress candidates once per packet, so the lookup must be a couple of
//! array reads: no hashing, no allocation. The table is built once with one breadth-first search
//! per destination host (MODEL.md §1: "shortest paths; ECMP picks one per flow"). Hosts are
//! never transit nodes: a search does not expand through a host other than its destination.
//!
//! Layout: one [`Span`] per (switch, destination host), rows grouped by switch so that one
//! switch's routes are contiguous in memory, pointing into a shared `Vec<PortId>` of candidates.
//! Consecutive destinations of the same switch often share the same candidate list (in a
//! fat-tree an edge switch sends every remote host to the same uplinks), so a list equal to the
//! switch's previous one is stored once; this keeps the candidate array small.

use irn_core::time::Duration;

use super::{NodeKind, Port, TopologyError};
use crate::ids::{HostIdx, NodeId, PortId};

/// Marks a node a search has not reached, and a node that is not a switch.
const NONE: u32 = u32::MAX;

/// Where one ECMP candidate list lives in [`RoutingTable::candidates`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Span {
    start: u32,
    len: u32,
}

/// Per-(switch, destination host) ECMP candidates, plus facts derived while computing them.
#[derive(Clone, Debug)]
pub(crate) struct RoutingTable {
    /// Number of hosts: the row length of `spans`.
    hosts: usize,
    /// For each node, its row in `spans` if it is a switch, else `NONE`.
    switch_row: Vec<u32>,
    /// `spans[row * hosts + host]`.
    spans: Vec<Span>,
    /// Egress ports, each list in ascending `PortId` order.
    candidates: Vec<PortId>,
    /// The largest sum of link delays along a first-candidate path between two hosts.
    max_path_propagation: Duration,
    /// The most switches on a shortest path between two hosts; 0 for a source-routed
    /// topology's transit table, whose routes say.
    max_path_switches: u32,
}

/// The wiring a routing table is computed from (everything `Topology` holds but the routes).
pub(super) struct Wiring<'a> {
    pub kinds: &'a [NodeKind],
    pub hosts: &'a [NodeId],
    pub switches: &'a [NodeId],
    pub ports: &'a [Port],
    /// `node_ports(n) == port_base[n]..port_base[n + 1]`.
    pub port_base: &'a [u32],
}

impl RoutingTable {
    /// Runs one BFS per destination host and records, for every switch, the ports whose far end
    /// is one hop closer. Fails if some host or switch cannot reach some host.
    pub(super) fn build(w: &Wiring<'_>) -> Result<RoutingTable, TopologyError> {
        Self::build_avoiding(w, None)
    }

    /// [`build`](Self::build) over the links whose ports are not `down` (both ends of a failed
    /// link are), as routing reconverges after link failures. With `down` given, a switch that
    /// can no longer reach a host gets an empty list for it (the packet path drops such
    /// packets) instead of an error.
    pub(super) fn build_avoiding(
        w: &Wiring<'_>,
        down: Option<&[bool]>,
    ) -> Result<RoutingTable, TopologyError> {
        let up = |p: u32| down.is_none_or(|d| !d[p as usize]);
        let nodes = w.kinds.len();
        let hosts = w.hosts.len();

        let mut switch_row = vec![NONE; nodes];
        for (row, s) in w.switches.iter().enumerate() {
            switch_row[s.index()] = row as u32;
        }
        // The node at the far end of each port, so the searches read one array instead of two.
        let peer_node: Vec<u32> = w
            .ports
            .iter()
            .map(|p| w.ports[p.peer.index()].node.0)
            .collect();

        let mut spans = vec![Span::default(); w.switches.len() * hosts];
        let mut candidates: Vec<PortId> = Vec::new();
        // Each switch's most recently stored list, for de-duplication.
        let mut last = vec![Span { start: 0, len: 0 }; w.switches.len()];

        let mut dist = vec![NONE; nodes];
        let mut order: Vec<u32> = Vec::with_capacity(nodes);
        // Delay from each node to the current destination along first candidates.
        let mut prop = vec![Duration::ZERO; nodes];
        let mut max_path_propagation = Duration::ZERO;
        let mut max_path_switches = 0;

        for (h, &dst) in w.hosts.iter().enumerate() {
            bfs(w, (&peer_node, &up), dst, &mut dist, &mut order);
            if down.is_none() {
                check_reached(w, dst, &dist)?;
            }

            prop[dst.index()] = Duration::ZERO;
            // BFS order visits nodes by non-decreasing distance, so every switch's next hop
            // (one hop closer) has its `prop` set before the switch itself.
            for &u in &order[1..] {
                let row = switch_row[u as usize];
                if row == NONE {
                    continue;
                }
                let d = dist[u as usize];
                let start = candidates.len();
                let ports = w.port_base[u as usize]..w.port_base[u as usize + 1];
                for p in ports {
                    let m = peer_node[p as usize];
                    let closer = dist[m as usize] == d - 1 && up(p);
                    let may_enter = m == dst.0 || w.kinds[m as usize] == NodeKind::Switch;
                    if closer && may_enter {
                        candidates.push(PortId(p));
                    }
                }
                let len = candidates.len() - start;
                // The BFS parent of `u` is always a candidate.
                debug_assert!(len > 0, "switch {u} has no route to host node {dst}");

                let prev = last[row as usize];
                let span = if prev.len as usize == len
                    && candidates[prev.start as usize..][..len] == candidates[start..]
                {
                    candidates.truncate(start);
                    prev
                } else {
                    let start = u32::try_from(start).map_err(|_| TopologyError::TooLarge {
                        what: "routing candidates",
                        count: start,
                    })?;
                    let span = Span {
                        start,
                        len: len as u32,
                    };
                    last[row as usize] = span;
                    span
                };
                spans[row as usize * hosts + h] = span;

                let first = candidates[span.start as usize];
                let next = peer_node[first.index()] as usize;
                prop[u as usize] = w.ports[first.index()].delay + prop[next];
            }

            for &src in w.hosts {
                if src == dst || dist[src.index()] == NONE {
                    continue;
                }
                let p = w.port_base[src.index()] as usize;
                let next = peer_node[p] as usize;
                let total = w.ports[p].delay + prop[next];
                max_path_propagation = max_path_propagation.max(total);
                // Links from host to host: one more than the switches between.
                max_path_switches = max_path_switches.max(dist[src.index()] - 1);
            }
        }

        if u32::try_from(candidates.len()).is_err() {
            return Err(TopologyError::TooLarge {
                what: "routing candidates",
                count: candidates.len(),
            });
        }
        candidates.shrink_to_fit();

        Ok(RoutingTable {
            hosts,
            switch_row,
            spans,
            candidates,
            max_path_propagation,
            max_path_switches,
        })
    }

    /// The table of source-routed forwarding (`routing = "k-shortest"`): at each switch a
    /// host of its own has its one port, and every other host has all the switch-facing ports,
    /// listed twice when there is only one. A packet's route picks among them, so the lists only
    /// need to send every packet bound elsewhere to the route: two entries or more keep the
    /// single-candidate shortcut of the packet path from skipping it.
    pub(super) fn transit(w: &Wiring<'_>, max_path_propagation: Duration) -> RoutingTable {
        let hosts = w.hosts.len();
        let mut switch_row = vec![NONE; w.kinds.len()];
        let mut spans = Vec::with_capacity(w.switches.len() * hosts);
        let mut candidates = Vec::new();
        let peer = |p: u32| w.ports[w.ports[p as usize].peer.index()].node;
        let mut host_of = vec![NONE; w.kinds.len()];
        for (h, n) in w.hosts.iter().enumerate() {
            host_of[n.index()] = h as u32;
        }
        for (row, s) in w.switches.iter().enumerate() {
            switch_row[s.index()] = row as u32;
            let ports = w.port_base[s.index()]..w.port_base[s.index() + 1];
            let start = candidates.len() as u32;
            candidates.extend(
                (ports.clone())
                    .filter(|&p| w.kinds[peer(p).index()] == NodeKind::Switch)
                    .map(PortId),
            );
            if candidates.len() == start as usize + 1 {
                candidates.push(candidates[start as usize]);
            }
            let onward = Span {
                start,
                len: candidates.len() as u32 - start,
            };
            let row_start = spans.len();
            spans.resize(row_start + hosts, onward);
            for p in ports {
                let h = host_of[peer(p).index()];
                if h != NONE {
                    spans[row_start + h as usize] = Span {
                        start: candidates.len() as u32,
                        len: 1,
                    };
                    candidates.push(PortId(p));
                }
            }
        }
        RoutingTable {
            hosts,
            switch_row,
            spans,
            candidates,
            max_path_propagation,
            max_path_switches: 0,
        }
    }

    /// ECMP candidates at `switch` towards `dst`, in ascending `PortId` order.
    ///
    /// # Panics
    /// If `switch` is not a switch or `dst` is not a host of this topology.
    #[inline(always)]
    pub(super) fn next_hops(&self, switch: NodeId, dst: HostIdx) -> &[PortId] {
        let row = self.switch_row[switch.index()];
        assert!(row != NONE, "next_hops: node {switch} is not a switch");
        self.next_hops_at_row(row as usize, dst)
    }

    /// [`next_hops`](Self::next_hops) at the switch of row `row` (its index among switches).
    #[inline(always)]
    pub(crate) fn next_hops_at_row(&self, row: usize, dst: HostIdx) -> &[PortId] {
        assert!(
            dst.index() < self.hosts,
            "next_hops: host index {dst} out of range (the topology has {} hosts)",
            self.hosts
        );
        let span = self.spans[row * self.hosts + dst.index()];
        &self.candidates[span.start as usize..][..span.len as usize]
    }

    pub(super) fn max_path_propagation(&self) -> Duration {
        self.max_path_propagation
    }

    pub(super) fn max_path_switches(&self) -> u32 {
        self.max_path_switches
    }

    /// Bytes held by the table, for capacity planning and tests.
    pub(super) fn heap_bytes(&self) -> usize {
        self.switch_row.capacity() * size_of::<u32>()
            + self.spans.capacity() * size_of::<Span>()
            + self.candidates.capacity() * size_of::<PortId>()
    }
}

/// Breadth-first search from `dst`: fills `dist` (hops to `dst`, `NONE` if unreached) and
/// `order` (nodes in visiting order, `dst` first). Hosts other than `dst` are reached but never
/// expanded, because a host does not forward.
fn bfs(
    w: &Wiring<'_>,
    (peer_node, up): (&[u32], &impl Fn(u32) -> bool),
    dst: NodeId,
    dist: &mut [u32],
    order: &mut Vec<u32>,
) {
    dist.fill(NONE);
    order.clear();
    dist[dst.index()] = 0;
    order.push(dst.0);
    let mut head = 0;
    while head < order.len() {
        let u = order[head] as usize;
        head += 1;
        if u != dst.index() && w.kinds[u] == NodeKind::Host {
            continue;
        }
        for p in (w.port_base[u]..w.port_base[u + 1]).filter(|&p| up(p)) {
            let m = peer_node[p as usize] as usize;
            if dist[m] == NONE {
                dist[m] = dist[u] + 1;
                order.push(m as u32);
            }
        }
    }
}

/// Names one host, else one switch, that the search towards `dst` did not reach.
fn check_reached(w: &Wiring<'_>, dst: NodeId, dist: &[u32]) -> Result<(), TopologyError> {
    if let Some(&from) = w.hosts.iter().find(|h| dist[h.index()] == NONE) {
        return Err(TopologyError::Disconnected { from, to: dst });
    }
    if let Some(&switch) = w.switches.iter().find(|s| dist[s.index()] == NONE) {
        return Err(TopologyError::UnreachableSwitch { switch, host: dst });
    }
    Ok(())
}
