//! k-shortest-path source routing (`[topology] routing = "k-shortest"`): Yen's loopless paths
//! between every pair of edge switches, precomputed into flat tables.
//!
//! Jellyfish is routed this way (Singla et al., NSDI'12; Eunomia §2.2): its shortest paths are
//! too few to spread load, and paths of different lengths cannot be written as per-switch
//! next-hop sets. So the packet's first switch (the source host's edge switch) chooses one of
//! the k paths and writes a cursor into the packet; every later switch takes the port under the
//! cursor and advances it. The destination's edge switch delivers as usual.
//!
//! Layout: for each ordered pair of edge switches (switches with hosts), a run of path starts
//! in `path_start`, each pointing at the path's first egress port in `hops`; a path's ports run
//! on until the destination edge switch (no terminator is read: that switch sends to the host
//! by its ordinary one-entry route). The cursor is an index into `hops`, 4 bytes in the packet.
//!
//! Paths are counted in switch-to-switch hops. Between two switches joined by parallel links a
//! path takes the lower-numbered port.

use irn_core::time::Duration;
use std::collections::BTreeSet;

use pathfinding::directed::bfs::bfs;

use super::routing::Wiring;
use super::{NodeKind, TopologyError};
use crate::ids::{HostIdx, PortId};

/// Marks a switch without hosts (no edge index).
const NONE: u32 = u32::MAX;

/// The most paths per pair: the first switch compares the paths' first hops on its stack.
pub const MAX_PATHS: usize = 64;

/// Every edge-switch pair's k shortest loopless paths, as egress ports.
#[derive(Clone, Debug)]
pub(super) struct KShortestPaths {
    /// Edge switches: the row length of `pair_start`.
    edges: usize,
    /// For each switch (by its index among switches), its edge index, or `NONE`.
    edge_of_switch: Vec<u32>,
    /// For each host, the edge index of its switch.
    edge_of_host: Vec<u32>,
    /// Pair `(a, b)`'s paths are `path_start[pair_start[a * edges + b]..pair_start[.. + 1]]`.
    pair_start: Vec<u32>,
    /// Each path's first port in `hops`: the cursor a packet starts with.
    path_start: Vec<u32>,
    /// The paths' egress ports, one path after another.
    hops: Vec<PortId>,
    /// The largest host-to-host propagation delay over every path (the "longest path" the BDP
    /// cap and RTO_high are sized from).
    max_path_propagation: Duration,
}

impl KShortestPaths {
    /// Runs Yen's algorithm (hop count) from every edge switch to every other, keeping up to `k`
    /// paths each (fewer where fewer loopless paths exist).
    pub(super) fn build(w: &Wiring<'_>, k: usize) -> Result<KShortestPaths, TopologyError> {
        debug_assert!((1..=MAX_PATHS).contains(&k));
        Self::build_with(w, |adjacency, from, to| Ok(yen(adjacency, from, to, k)))
    }

    /// Every shortest path (in switch hops) from every edge switch to every other: the paths
    /// ECMP's next-hop sets spread over, one by one, as ConWeave's source ToR names them. Errors
    /// when a pair has more than [`MAX_PATHS`].
    pub(super) fn build_all_shortest(w: &Wiring<'_>) -> Result<KShortestPaths, TopologyError> {
        Self::build_with(w, |adjacency, from, to| {
            let paths = all_shortest(adjacency, from, to);
            if paths.len() > MAX_PATHS {
                return Err(TopologyError::TooLarge {
                    what: "shortest paths between two edge switches",
                    count: paths.len(),
                });
            }
            Ok(paths)
        })
    }

    /// The tables of the paths `paths_of(adjacency, from, to)` finds between every ordered
    /// pair of edge switches (as node sequences).
    fn build_with(
        w: &Wiring<'_>,
        paths_of: impl Fn(&[Vec<u32>], u32, u32) -> Result<Vec<Vec<u32>>, TopologyError>,
    ) -> Result<KShortestPaths, TopologyError> {
        let nodes = w.kinds.len();
        let peer_node = |p: u32| w.ports[w.ports[p as usize].peer.index()].node.0;
        // Neighbouring switches of each node, each once, ascending.
        let adjacency: Vec<Vec<u32>> = (0..nodes)
            .map(|n| {
                let mut next: Vec<u32> = (w.port_base[n]..w.port_base[n + 1])
                    .map(peer_node)
                    .filter(|&m| w.kinds[m as usize] == NodeKind::Switch)
                    .collect();
                next.sort_unstable();
                next.dedup();
                next
            })
            .collect();

        let mut switch_row = vec![NONE; nodes];
        for (row, s) in w.switches.iter().enumerate() {
            switch_row[s.index()] = row as u32;
        }
        let mut edge_of_switch = vec![NONE; w.switches.len()];
        let mut edge_nodes = Vec::new();
        // The longest host link at each edge switch, for the host-to-host delay bound.
        let mut host_delay = Vec::new();
        let mut edge_of_host = Vec::with_capacity(w.hosts.len());
        for h in w.hosts {
            let p = w.port_base[h.index()] as usize;
            let edge = w.ports[w.ports[p].peer.index()].node;
            let row = switch_row[edge.index()] as usize;
            if edge_of_switch[row] == NONE {
                edge_of_switch[row] = edge_nodes.len() as u32;
                edge_nodes.push(edge.0);
                host_delay.push(Duration::ZERO);
            }
            let e = edge_of_switch[row] as usize;
            host_delay[e] = host_delay[e].max(w.ports[p].delay);
            edge_of_host.push(edge_of_switch[row]);
        }

        let edges = edge_nodes.len();
        let mut pair_start = Vec::with_capacity(edges * edges + 1);
        let mut path_start = Vec::new();
        let mut hops = Vec::new();
        let mut max_path_propagation = host_delay.iter().copied().max().unwrap_or_default() * 2;
        for (a, &from) in edge_nodes.iter().enumerate() {
            for (b, &to) in edge_nodes.iter().enumerate() {
                pair_start.push(index(path_start.len(), "k-shortest paths")?);
                if a == b {
                    continue;
                }
                for nodes in paths_of(&adjacency, from, to)? {
                    path_start.push(index(hops.len(), "k-shortest path hops")?);
                    let mut delay = host_delay[a] + host_delay[b];
                    for pair in nodes.windows(2) {
                        let p = (w.port_base[pair[0] as usize]..w.port_base[pair[0] as usize + 1])
                            .find(|&p| peer_node(p) == pair[1])
                            .expect("consecutive nodes of a path are linked");
                        hops.push(PortId(p));
                        delay = delay + w.ports[p as usize].delay;
                    }
                    max_path_propagation = max_path_propagation.max(delay);
                }
                // The topology's routing already found every host reachable from every other.
                debug_assert!(*pair_start.last().unwrap() < path_start.len() as u32);
            }
        }
        pair_start.push(index(path_start.len(), "k-shortest paths")?);
        index(hops.len(), "k-shortest path hops")?;
        Ok(KShortestPaths {
            edges,
            edge_of_switch,
            edge_of_host,
            pair_start,
            path_start,
            hops,
            max_path_propagation,
        })
    }

    /// The cursors of the paths from switch `switch` (its index among switches, an edge
    /// switch) to host `dst`'s edge switch: one per path, shortest first. Empty when `dst` is
    /// on `switch` itself.
    #[inline]
    pub(super) fn paths(&self, switch: usize, dst: HostIdx) -> &[u32] {
        let a = self.edge_of_switch[switch] as usize;
        debug_assert!(a != NONE as usize, "switch {switch} has no hosts");
        let pair = a * self.edges + self.edge_of_host[dst.index()] as usize;
        let range = self.pair_start[pair] as usize..self.pair_start[pair + 1] as usize;
        &self.path_start[range]
    }

    /// The egress port under `cursor`.
    #[inline(always)]
    pub(super) fn hop(&self, cursor: u32) -> PortId {
        self.hops[cursor as usize]
    }

    /// The switch-to-switch egress ports of the path whose first port is under `cursor`: for
    /// setting up and tests.
    pub(super) fn path_ports(&self, cursor: u32) -> &[PortId] {
        let at = self.path_start.partition_point(|&s| s <= cursor);
        let end = self
            .path_start
            .get(at)
            .map_or(self.hops.len(), |&e| e as usize);
        &self.hops[cursor as usize..end]
    }

    pub(super) fn hop_count(&self) -> usize {
        self.hops.len()
    }

    pub(super) fn max_path_propagation(&self) -> Duration {
        self.max_path_propagation
    }

    pub(super) fn heap_bytes(&self) -> usize {
        (self.edge_of_switch.capacity()
            + self.edge_of_host.capacity()
            + self.pair_start.capacity()
            + self.path_start.capacity())
            * size_of::<u32>()
            + self.hops.capacity() * size_of::<PortId>()
    }
}

/// Yen's k shortest loopless paths from `from` to `to` in hops over `adjacency` (each node's
/// neighbours, ascending), shortest first; ties are broken by the lower node sequence, so the
/// result depends on the graph alone. Each spur path is a breadth-first search.
///
/// Written here rather than taken from `pathfinding::yen`, which (4.16) moves every candidate
/// of the new path's cost into the result at once and so may skip paths the skipped spurs
/// would have found: on a 6-switch graph it returns hop counts 2, 3, 3, 4 where 2, 3, 3, 3
/// exist (the brute-force test below).
fn yen(adjacency: &[Vec<u32>], from: u32, to: u32, k: usize) -> Vec<Vec<u32>> {
    let neighbours = |n: &u32| adjacency[*n as usize].iter().copied();
    let Some(first) = bfs(&from, |n| neighbours(n), |&n| n == to) else {
        return Vec::new();
    };
    let mut found = vec![first];
    // Candidates by (hops, nodes): the next shortest, ties to the lower sequence.
    let mut candidates: BTreeSet<(usize, Vec<u32>)> = BTreeSet::new();
    while found.len() < k {
        let last = found.last().expect("one path at least");
        for i in 0..last.len() - 1 {
            let (root, spur) = (&last[..i], last[i]);
            // Edges out of the spur node that found paths sharing this root already take.
            let taken: Vec<u32> = (found.iter())
                .filter(|p| p.len() > i + 1 && p[..=i] == last[..=i])
                .map(|p| p[i + 1])
                .collect();
            let taken = &taken;
            let onward = |n: &u32| {
                let spur_edge = *n == spur;
                neighbours(n)
                    .filter(move |m| !(root.contains(m) || spur_edge && taken.contains(m)))
                    .collect::<Vec<_>>()
            };
            if let Some(tail) = bfs(&spur, onward, |&n| n == to) {
                let path: Vec<u32> = root.iter().copied().chain(tail).collect();
                if !found.contains(&path) {
                    candidates.insert((path.len(), path));
                }
            }
        }
        match candidates.pop_first() {
            Some((_, path)) => found.push(path),
            None => break,
        }
    }
    found
}

/// Every shortest path from `from` to `to` over `adjacency` (each node's neighbours, ascending),
/// in increasing node sequence: a depth-first walk that only steps one hop closer to `to`.
fn all_shortest(adjacency: &[Vec<u32>], from: u32, to: u32) -> Vec<Vec<u32>> {
    // Hops to `to` from every node, by a breadth-first search back from it.
    let mut hops = vec![u32::MAX; adjacency.len()];
    hops[to as usize] = 0;
    let mut frontier = std::collections::VecDeque::from([to]);
    while let Some(n) = frontier.pop_front() {
        for &m in &adjacency[n as usize] {
            if hops[m as usize] == u32::MAX {
                hops[m as usize] = hops[n as usize] + 1;
                frontier.push_back(m);
            }
        }
    }
    let mut paths = Vec::new();
    if hops[from as usize] == u32::MAX {
        return paths;
    }
    let mut path = vec![from];
    walk(adjacency, &hops, &mut path, &mut paths);
    paths
}

/// Extends `path` one hop closer to the destination (0 hops) in every way, collecting each
/// complete path in `paths`.
fn walk(adjacency: &[Vec<u32>], hops: &[u32], path: &mut Vec<u32>, paths: &mut Vec<Vec<u32>>) {
    let at = *path.last().expect("a path has a start");
    if hops[at as usize] == 0 {
        paths.push(path.clone());
        return;
    }
    for &m in &adjacency[at as usize] {
        if hops[m as usize] + 1 == hops[at as usize] {
            path.push(m);
            walk(adjacency, hops, path, paths);
            path.pop();
        }
    }
}

/// `n` as a `u32` table index, or the error naming the table that outgrew it.
fn index(n: usize, what: &'static str) -> Result<u32, TopologyError> {
    u32::try_from(n).map_err(|_| TopologyError::TooLarge { what, count: n })
}

#[cfg(test)]
mod tests {
    use irn_core::time::Bandwidth;
    use proptest::prelude::*;

    use super::*;
    use crate::ids::NodeId;
    use crate::topology::{LinkSpec, Topology};

    /// `n` switches (nodes `n..2n`), each with one host (node `i` on switch `n + i`), a chain
    /// joining them in order and the `extra` switch pairs on top; delays grow with the link's
    /// index so path delays differ.
    fn graph(n: u32, extra: &[(u32, u32)]) -> Topology {
        let kinds = (0..2 * n)
            .map(|i| {
                if i < n {
                    NodeKind::Host
                } else {
                    NodeKind::Switch
                }
            })
            .collect();
        let pairs = (0..n).map(|i| (i, n + i));
        let chain = (1..n).map(|i| (n + i - 1, n + i));
        let extra = extra.iter().map(|&(a, b)| (n + a, n + b));
        let links = (pairs.chain(chain).chain(extra))
            .enumerate()
            .map(|(i, (a, b))| LinkSpec {
                a: NodeId(a),
                b: NodeId(b),
                rate: Bandwidth::from_gbps(100),
                delay: Duration::from_ns(100 * (i as u64 + 1)),
            })
            .collect();
        Topology::from_links(kinds, links).unwrap()
    }

    /// Every loopless switch path from `from` to `to`, by depth-first search: its hop counts.
    fn brute_force_lengths(t: &Topology, from: NodeId, to: NodeId) -> Vec<usize> {
        fn walk(
            t: &Topology,
            at: NodeId,
            to: NodeId,
            seen: &mut Vec<NodeId>,
            out: &mut Vec<usize>,
        ) {
            if at == to {
                out.push(seen.len() - 1);
                return;
            }
            let mut next: Vec<NodeId> = (t.node_ports(at))
                .map(|p| t.ports()[t.ports()[p as usize].peer.index()].node)
                .filter(|&m| t.kind(m) == NodeKind::Switch && !seen.contains(&m))
                .collect();
            // Parallel links are one hop between the same switches.
            next.sort_unstable();
            next.dedup();
            for m in next {
                seen.push(m);
                walk(t, m, to, seen, out);
                seen.pop();
            }
        }
        let mut out = Vec::new();
        walk(t, from, to, &mut vec![from], &mut out);
        out.sort_unstable();
        out
    }

    /// Checks `t`'s path table against brute force for every pair of switches: the paths'
    /// lengths are `want` of all loopless paths' lengths (ascending).
    fn check(t: &Topology, want: impl Fn(&[usize]) -> &[usize]) -> Result<(), TestCaseError> {
        let r = t.source_routes.as_deref().unwrap();
        let n = t.switches().len();
        for a in 0..n {
            for b in 0..n {
                let (from, to) = (t.switches()[a], t.switches()[b]);
                let dst = t.host_index(NodeId(b as u32)).unwrap();
                let starts = r.paths(a, dst);
                if a == b {
                    prop_assert!(starts.is_empty());
                    continue;
                }
                let lengths = brute_force_lengths(t, from, to);
                let want = want(&lengths);
                let mut got = Vec::new();
                let mut seen_paths = Vec::new();
                for &c in starts {
                    let ports = r.path_ports(c);
                    let mut nodes = vec![from];
                    for &p in ports {
                        let port = t.ports()[p.index()];
                        prop_assert_eq!(port.node, *nodes.last().unwrap(), "a path is a walk");
                        nodes.push(t.ports()[port.peer.index()].node);
                    }
                    prop_assert_eq!(*nodes.last().unwrap(), to);
                    let mut sorted = nodes.clone();
                    sorted.sort_unstable();
                    sorted.dedup();
                    prop_assert_eq!(sorted.len(), nodes.len(), "loopless: {:?}", nodes);
                    prop_assert!(!seen_paths.contains(&nodes), "distinct: {:?}", nodes);
                    seen_paths.push(nodes);
                    got.push(ports.len());
                }
                prop_assert_eq!(&got[..], want, "switch {} to {}", a, b);
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// On random connected graphs of up to 7 switches, each pair's paths are the k
        /// shortest loopless ones brute force finds (by hop count), shortest first, each a
        /// distinct loopless walk ending at the destination's switch.
        #[test]
        fn paths_are_the_k_shortest_loopless_ones(
            n in 3u32..=7,
            extra in proptest::collection::vec((0u32..7, 0u32..7), 0..10),
            k in 1usize..=6,
        ) {
            let extra: Vec<_> = extra.into_iter().filter(|&(a, b)| a < n && b < n && a != b).collect();
            let t = graph(n, &extra).with_k_shortest_paths(k).unwrap();
            check(&t, |lengths| &lengths[..lengths.len().min(k)])?;
        }

        /// On the same graphs, the all-shortest table holds every shortest path, each once.
        #[test]
        fn all_shortest_paths_are_every_minimal_one(
            n in 3u32..=7,
            extra in proptest::collection::vec((0u32..7, 0u32..7), 0..10),
        ) {
            let extra: Vec<_> = extra.into_iter().filter(|&(a, b)| a < n && b < n && a != b).collect();
            let t = graph(n, &extra).with_shortest_paths().unwrap();
            check(&t, |lengths| {
                let shortest = lengths.iter().take_while(|&&l| l == lengths[0]).count();
                &lengths[..shortest]
            })?;
        }
    }

    #[test]
    fn the_longest_path_sizes_the_propagation_bound_and_path_takes_the_shortest() {
        // Switches 3-4-5 in a chain plus 3-5 directly: hosts 0 and 2 have a 1-hop and a 2-hop
        // path. Links in order: host links 100, 200, 300 ns; 3-4 400 ns, 4-5 500 ns, 3-5 600 ns.
        let t = graph(3, &[(0, 2)]);
        let shortest = t.max_path_propagation();
        let t = t.with_k_shortest_paths(2).unwrap();
        // Longest host-to-host path: 300 + 400 + 500 + 300 ns (the bound takes each edge
        // switch's longest host link on both ends).
        assert_eq!(t.max_path_propagation(), Duration::from_ns(1500));
        assert!(t.max_path_propagation() > shortest);
        let p = t.path(HostIdx(0), HostIdx(2));
        assert_eq!(p.hops, 3, "host, the direct 3-5 link, host");
        assert_eq!(p.propagation, Duration::from_ns(100 + 600 + 300));
        // Transit: switch 4 (row 1) towards host 0 offers both its switch ports; towards its
        // own host, that host's port alone.
        assert_eq!(t.next_hops_at_switch(1, HostIdx(0)).len(), 2);
        assert_eq!(
            t.next_hops_at_switch(1, HostIdx(1)),
            &[PortId(t.node_ports(NodeId(4)).start)]
        );
    }
}
