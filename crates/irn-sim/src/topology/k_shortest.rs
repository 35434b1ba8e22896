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

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};

use irn_core::time::Duration;
use rayon::prelude::*;

use super::routing::Wiring;
use super::up_down::{UpDown, UpDownSearch};
use super::{NodeKind, TopologyError};
use crate::ids::{HostIdx, PortId};

/// Marks a switch without hosts (no edge index).
const NONE: u32 = u32::MAX;

/// What [`crate::progress`] is told of the search: pairs of edge switches done.
fn progress(done: u64, total: u64) {
    crate::progress::report(crate::progress::SetupProgress {
        what: "computing k shortest paths",
        unit: "pairs",
        done,
        total,
    });
}

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
        Self::build_with(w, Wanted::Shortest(k))
    }

    /// Yen's `k` shortest up*/down* paths (see [`super::up_down`]) from every edge switch to
    /// every other: paths that cannot deadlock PFC, on any graph.
    pub(super) fn build_up_down(w: &Wiring<'_>, k: usize) -> Result<KShortestPaths, TopologyError> {
        debug_assert!((1..=MAX_PATHS).contains(&k));
        Self::build_with(w, Wanted::UpDown(k))
    }

    /// Every shortest path (in switch hops) from every edge switch to every other: the paths
    /// ECMP's next-hop sets spread over, one by one, as ConWeave's source ToR names them. Errors
    /// when a pair has more than [`MAX_PATHS`].
    pub(super) fn build_all_shortest(w: &Wiring<'_>) -> Result<KShortestPaths, TopologyError> {
        Self::build_with(w, Wanted::AllShortest)
    }

    /// The tables of the `wanted` paths between every ordered pair of edge switches.
    ///
    /// The paths into each destination are found together (they share its hop counts, see
    /// [`Search`]), one destination per task on rayon's threads; the tables are then laid out
    /// by source, so they are the same whatever the number of threads.
    fn build_with(w: &Wiring<'_>, wanted: Wanted) -> Result<KShortestPaths, TopologyError> {
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

        let up_down = match wanted {
            Wanted::UpDown(_) => {
                let switches: Vec<u32> = w.switches.iter().map(|s| s.0).collect();
                Some(UpDown::new(&adjacency, &switches))
            }
            _ => None,
        };
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
        let pairs = (edges * edges.saturating_sub(1)) as u64;
        let done = AtomicU64::new(0);
        progress(0, pairs);
        let columns: Vec<Result<Column, (usize, TopologyError)>> = (edge_nodes.par_iter())
            .map(|&to| {
                let column = Column::find(&adjacency, to, &edge_nodes, (wanted, &up_down));
                let now = done.fetch_add(edges as u64 - 1, Ordering::Relaxed) + edges as u64 - 1;
                progress(now, pairs);
                column
            })
            .collect();
        // The error of the first pair by source, then destination, as a serial search meets it.
        let first_error = (columns.iter().enumerate())
            .filter_map(|(b, c)| c.as_ref().err().map(|(a, e)| ((*a, b), e)))
            .min_by_key(|&(pair, _)| pair);
        if let Some((_, e)) = first_error {
            return Err(e.clone());
        }
        let columns: Vec<Column> = columns.into_iter().filter_map(Result::ok).collect();

        let mut pair_start = Vec::with_capacity(edges * edges + 1);
        let mut path_start = Vec::new();
        let mut hops = Vec::new();
        let mut max_path_propagation = host_delay.iter().copied().max().unwrap_or_default() * 2;
        for a in 0..edges {
            for (b, column) in columns.iter().enumerate() {
                pair_start.push(index(path_start.len(), "k-shortest paths")?);
                for nodes in column.paths_from(a) {
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
                debug_assert!(a == b || *pair_start.last().unwrap() < path_start.len() as u32);
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

    /// The most switches on any path: one more than its switch-to-switch ports.
    pub(super) fn max_path_switches(&self) -> u32 {
        let ends = self.path_start.iter().skip(1).copied();
        let ends = ends.chain([self.hops.len() as u32]);
        let longest = self.path_start.iter().zip(ends).map(|(s, e)| e - s).max();
        longest.unwrap_or(0) + 1
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

/// Which paths a table holds between two edge switches.
#[derive(Clone, Copy, Debug)]
enum Wanted {
    /// Yen's `k` shortest loopless paths.
    Shortest(usize),
    /// Every shortest path (at most [`MAX_PATHS`]).
    AllShortest,
    /// Yen's `k` shortest up*/down* paths.
    UpDown(usize),
}

/// The paths from every edge switch into one destination, as node sequences one after another.
struct Column {
    /// The paths' nodes, each path from its source edge switch to the destination.
    nodes: Vec<u32>,
    /// Where each path ends in `nodes`.
    path_end: Vec<u32>,
    /// Where each source's paths end in `path_end`, by edge index.
    source_end: Vec<u32>,
}

impl Column {
    /// The `wanted` paths from each of `sources` (in order) to `to` (up*/down* ones in the
    /// order given with them); an error names the index of the source whose paths broke a
    /// limit.
    fn find(
        adjacency: &[Vec<u32>],
        to: u32,
        sources: &[u32],
        (wanted, up_down): (Wanted, &Option<UpDown>),
    ) -> Result<Column, (usize, TopologyError)> {
        match (wanted, up_down) {
            (Wanted::Shortest(k), _) => {
                let mut search = Search::new(adjacency, to);
                Column::collect(to, sources, |_, from| Ok(yen(&mut search, from, k)))
            }
            (Wanted::AllShortest, _) => {
                let search = Search::new(adjacency, to);
                Column::collect(to, sources, |a, from| {
                    let paths = all_shortest(adjacency, &search.hops_to, from);
                    if paths.len() > MAX_PATHS {
                        let what = "shortest paths between two edge switches";
                        let count = paths.len();
                        return Err((a, TopologyError::TooLarge { what, count }));
                    }
                    Ok(paths)
                })
            }
            (Wanted::UpDown(k), Some(order)) => {
                let mut search = UpDownSearch::new(adjacency, order, to);
                Column::collect(to, sources, |_, from| Ok(yen(&mut search, from, k)))
            }
            (Wanted::UpDown(_), None) => unreachable!("up*/down* paths come with their order"),
        }
    }

    /// The paths `paths_of(a, from)` gives from each of `sources` (`from`, the `a`-th) to `to`.
    fn collect(
        to: u32,
        sources: &[u32],
        mut paths_of: impl FnMut(usize, u32) -> Result<Vec<Vec<u32>>, (usize, TopologyError)>,
    ) -> Result<Column, (usize, TopologyError)> {
        let mut column = Column {
            nodes: Vec::new(),
            path_end: Vec::new(),
            source_end: Vec::with_capacity(sources.len()),
        };
        for (a, &from) in sources.iter().enumerate() {
            if from != to {
                for path in paths_of(a, from)? {
                    column.nodes.extend_from_slice(&path);
                    column.path_end.push(column.nodes.len() as u32);
                }
            }
            column.source_end.push(column.path_end.len() as u32);
        }
        Ok(column)
    }

    /// The paths from the source with edge index `a`, shortest first.
    fn paths_from(&self, a: usize) -> impl Iterator<Item = &[u32]> {
        let first = if a == 0 {
            0
        } else {
            self.source_end[a - 1] as usize
        };
        let ends = &self.path_end[first..self.source_end[a] as usize];
        let mut start = if first == 0 {
            0
        } else {
            self.path_end[first - 1] as usize
        };
        ends.iter().map(move |&end| {
            let path = &self.nodes[start..end as usize];
            start = end as usize;
            path
        })
    }
}

/// Shortest-path searches towards one destination with some nodes and edges removed: Yen's
/// spur searches.
///
/// The hop counts to the destination over the whole graph bound those with anything removed
/// from below, so a search walks from the spur node only to neighbours that can still arrive
/// in the hops left (iterative deepening from the bound, with the (node, hops left) pairs that
/// failed remembered). On a Jellyfish that visits a few nodes per hop where a breadth-first
/// search visits the whole graph. The path found is the one a breadth-first search with
/// neighbours in ascending order finds (`pathfinding`'s `bfs`, which this replaced and which
/// the tests compare it with; [`Search::breadth_first`], the fallback when the removals
/// lengthen the path by more than [`SLACK`] hops): among the shortest, the least node
/// sequence. Candidates longer than any Yen could still choose are not looked for
/// (`max_hops`), which spares most searches that would fail.
struct Search<'a> {
    adjacency: &'a [Vec<u32>],
    to: u32,
    /// Hops from each node to `to` over the whole graph; `u32::MAX` if it cannot reach it.
    hops_to: Vec<u32>,
    /// `blocked[n] == epoch`: node `n` is removed in the current search.
    blocked: Vec<u32>,
    /// `failed[n] = (epoch, bits)`: bit `r` set if no walk of exactly `r` hops leads from `n`
    /// to `to` in the current search.
    failed: Vec<(u32, u64)>,
    epoch: u32,
    /// The breadth-first search's queue (node, hops) and each reached node's parent.
    queue: Vec<(u32, u32)>,
    parent: Vec<u32>,
}

/// Yen's spur search: the shortest path from a spur node to the destination the search was
/// made for, given the root of the path before the spur node.
pub(super) trait SpurSearch {
    /// The shortest path from `spur` to the destination that avoids the nodes `root` and the
    /// edges from `spur` to `taken` (ties broken the same way every time), or `None`; `None`
    /// too if it is longer than `max_hops` (if a path within it exists, it is the one
    /// returned).
    fn tail(&mut self, spur: u32, root: &[u32], taken: &[u32], max_hops: u32) -> Option<Vec<u32>>;
}

/// How many hops beyond the whole graph's count a spur search deepens before it falls back to
/// a breadth-first search.
const SLACK: u32 = 3;

impl<'a> Search<'a> {
    fn new(adjacency: &'a [Vec<u32>], to: u32) -> Search<'a> {
        // Links join switches both ways, so the hops to `to` are those from it.
        let mut hops_to = vec![u32::MAX; adjacency.len()];
        hops_to[to as usize] = 0;
        let mut frontier = std::collections::VecDeque::from([to]);
        while let Some(n) = frontier.pop_front() {
            for &m in &adjacency[n as usize] {
                if hops_to[m as usize] == u32::MAX {
                    hops_to[m as usize] = hops_to[n as usize] + 1;
                    frontier.push_back(m);
                }
            }
        }
        Search {
            adjacency,
            to,
            hops_to,
            blocked: vec![0; adjacency.len()],
            failed: vec![(0, 0); adjacency.len()],
            epoch: 0,
            queue: Vec::new(),
            parent: vec![0; adjacency.len()],
        }
    }

    /// The path [`tail`](SpurSearch::tail) looks for, by breadth-first search from `spur` (blocked
    /// with the root already) in ascending neighbour order, as `pathfinding`'s `bfs` did.
    fn breadth_first(&mut self, spur: u32, taken: &[u32], max_hops: u32) -> Option<Vec<u32>> {
        // Each reached node's parent; `blocked` marks them reached.
        let (queue, parent) = (&mut self.queue, &mut self.parent);
        queue.clear();
        queue.push((spur, 0));
        let mut next = 0;
        while let Some(&(at, hops)) = queue.get(next) {
            next += 1;
            if hops == max_hops {
                break;
            }
            for &m in &self.adjacency[at as usize] {
                let n = m as usize;
                if self.blocked[n] == self.epoch || at == spur && taken.contains(&m) {
                    continue;
                }
                parent[n] = at;
                if m == self.to {
                    let mut path = vec![m];
                    while *path.last().expect("not empty") != spur {
                        path.push(parent[*path.last().expect("not empty") as usize]);
                    }
                    path.reverse();
                    return Some(path);
                }
                self.blocked[n] = self.epoch;
                queue.push((m, hops + 1));
            }
        }
        None
    }

    /// Extends `path` (ending at `at`) by a walk of exactly `hops` to the destination through
    /// nodes not blocked, trying neighbours in ascending order; `taken` are the edges removed
    /// from the spur node (`path`'s first). Returns whether it found one.
    fn walk(&mut self, at: u32, hops: u32, taken: &[u32], path: &mut Vec<u32>) -> bool {
        if at == self.to {
            return hops == 0;
        }
        if hops == 0 {
            return false;
        }
        let left = hops - 1;
        let adjacency = self.adjacency;
        let from_spur = path.len() == 1;
        for &m in &adjacency[at as usize] {
            let n = m as usize;
            let failed = self.failed[n].0 == self.epoch && self.failed[n].1 >> left & 1 == 1;
            if self.blocked[n] == self.epoch
                || self.hops_to[n] > left
                || failed
                || from_spur && taken.contains(&m)
            {
                continue;
            }
            path.push(m);
            if self.walk(m, left, taken, path) {
                return true;
            }
            path.pop();
        }
        let failed = &mut self.failed[at as usize];
        if failed.0 != self.epoch {
            *failed = (self.epoch, 0);
        }
        failed.1 |= 1 << hops;
        false
    }
}

impl SpurSearch for Search<'_> {
    /// Deepens from the whole graph's hop count (see [`Search`]), then falls back to a
    /// breadth-first search.
    fn tail(&mut self, spur: u32, root: &[u32], taken: &[u32], max_hops: u32) -> Option<Vec<u32>> {
        let least = self.hops_to[spur as usize];
        if least > max_hops {
            return None;
        }
        self.epoch += 1;
        for &n in root {
            self.blocked[n as usize] = self.epoch;
        }
        // A shortest path never comes back to its start.
        self.blocked[spur as usize] = self.epoch;
        let mut path = vec![spur];
        let deepest = (least + SLACK).min(u64::BITS - 1);
        for hops in least..=deepest.min(max_hops) {
            if self.walk(spur, hops, taken, &mut path) {
                return Some(path);
            }
        }
        if max_hops <= deepest {
            return None;
        }
        self.breadth_first(spur, taken, max_hops)
    }
}

/// Yen's k shortest loopless paths from `from` to `search`'s destination in hops, shortest
/// first; ties are broken by the lower node sequence, so the result depends on the graph alone.
///
/// Written here rather than taken from `pathfinding::yen`, which (4.16) moves every candidate
/// of the new path's cost into the result at once and so may skip paths the skipped spurs
/// would have found: on a 6-switch graph it returns hop counts 2, 3, 3, 4 where 2, 3, 3, 3
/// exist (the brute-force test below).
///
/// A spur search looks only for paths that could still be chosen: once the candidates hold as
/// many paths as are still wanted, a path longer than the last of them never will be.
fn yen(search: &mut impl SpurSearch, from: u32, k: usize) -> Vec<Vec<u32>> {
    let Some(first) = search.tail(from, &[], &[], u32::MAX) else {
        return Vec::new();
    };
    let mut found = vec![first];
    // Candidates by (hops, nodes): the next shortest, ties to the lower sequence.
    let mut candidates: BTreeSet<(usize, Vec<u32>)> = BTreeSet::new();
    let mut taken = Vec::new();
    while found.len() < k {
        let last = found.last().expect("one path at least");
        for i in 0..last.len() - 1 {
            let (root, spur) = (&last[..i], last[i]);
            // Edges out of the spur node that found paths sharing this root already take.
            taken.clear();
            taken.extend(
                (found.iter())
                    .filter(|p| p.len() > i + 1 && p[..=i] == last[..=i])
                    .map(|p| p[i + 1]),
            );
            // The longest path (in nodes) that could still be chosen.
            let longest = match candidates.iter().nth(k - found.len() - 1) {
                Some(&(nodes, _)) => nodes,
                None => usize::MAX,
            };
            let max_hops = u32::try_from(longest.saturating_sub(i + 1)).unwrap_or(u32::MAX);
            if let Some(tail) = search.tail(spur, root, &taken, max_hops) {
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

/// Every shortest path from `from` to the destination `hops_to` counts hops to, over
/// `adjacency` (each node's neighbours, ascending), in increasing node sequence: a depth-first
/// walk that only steps one hop closer to the destination.
fn all_shortest(adjacency: &[Vec<u32>], hops_to: &[u32], from: u32) -> Vec<Vec<u32>> {
    let mut paths = Vec::new();
    if hops_to[from as usize] == u32::MAX {
        return paths;
    }
    let mut path = vec![from];
    walk(adjacency, hops_to, &mut path, &mut paths);
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

    /// Yen's algorithm as first written, each spur search `pathfinding`'s breadth-first search
    /// over the graph with the root and taken edges filtered out: the reference [`Search`]
    /// must agree with path for path.
    fn reference_yen(adjacency: &[Vec<u32>], from: u32, to: u32, k: usize) -> Vec<Vec<u32>> {
        use pathfinding::directed::bfs::bfs;
        let neighbours = |n: &u32| adjacency[*n as usize].iter().copied();
        let Some(first) = bfs(&from, |n| neighbours(n), |&n| n == to) else {
            return Vec::new();
        };
        let mut found = vec![first];
        let mut candidates: BTreeSet<(usize, Vec<u32>)> = BTreeSet::new();
        while found.len() < k {
            let last = found.last().unwrap();
            for i in 0..last.len() - 1 {
                let (root, spur) = (&last[..i], last[i]);
                let taken: Vec<u32> = (found.iter())
                    .filter(|p| p.len() > i + 1 && p[..=i] == last[..=i])
                    .map(|p| p[i + 1])
                    .collect();
                let onward = |n: &u32| {
                    let spur_edge = *n == spur;
                    neighbours(n)
                        .filter(|m| !(root.contains(m) || spur_edge && taken.contains(m)))
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

    /// Switch adjacency as the tables are built from it.
    fn adjacency(t: &Topology) -> Vec<Vec<u32>> {
        (0..t.node_count() as u32)
            .map(|n| {
                let mut next: Vec<u32> = (t.node_ports(NodeId(n)))
                    .map(|p| t.ports()[t.ports()[p as usize].peer.index()].node)
                    .filter(|&m| t.kind(m) == NodeKind::Switch)
                    .map(|m| m.0)
                    .collect();
                next.sort_unstable();
                next.dedup();
                next
            })
            .collect()
    }

    /// Every switch pair's paths by [`yen`] and by [`reference_yen`] are the same paths in
    /// the same order.
    fn same_as_reference(t: &Topology, k: usize) -> Result<(), TestCaseError> {
        let adjacency = adjacency(t);
        for &to in t.switches() {
            let mut search = Search::new(&adjacency, to.0);
            for &from in t.switches() {
                if from != to {
                    let want = reference_yen(&adjacency, from.0, to.0, k);
                    prop_assert_eq!(yen(&mut search, from.0, k), want, "{:?} to {:?}", from, to);
                }
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// On random connected graphs of up to 12 switches, the pruned spur searches find the
        /// paths breadth-first search does, so routes did not change with the faster search.
        #[test]
        fn spur_searches_find_the_breadth_first_paths(
            n in 3u32..=12,
            extra in proptest::collection::vec((0u32..12, 0u32..12), 0..24),
            k in 1usize..=12,
        ) {
            let extra: Vec<_> = extra.into_iter().filter(|&(a, b)| a < n && b < n && a != b).collect();
            same_as_reference(&graph(n, &extra), k)?;
        }
    }

    #[test]
    fn jellyfish_paths_are_the_breadth_first_ones() {
        let link = (Bandwidth::from_gbps(100), Duration::from_us(1));
        for (switches, k) in [(40, 8), (24, 64)] {
            let t = Topology::jellyfish(switches, 8, switches * 8 / 5, link, 7).unwrap();
            same_as_reference(&t, k).unwrap();
        }
    }

    /// The tables, k shortest and up*/down*, are the same on one thread and on several.
    #[test]
    fn tables_do_not_depend_on_the_thread_count() {
        let link = (Bandwidth::from_gbps(100), Duration::from_us(1));
        let t = Topology::jellyfish(60, 8, 96, link, 3).unwrap();
        let build = |threads| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| KShortestPaths::build(&t.wiring(), 8).unwrap())
        };
        let (one, four) = (build(1), build(4));
        assert_eq!(one.pair_start, four.pair_start);
        assert_eq!(one.path_start, four.path_start);
        assert_eq!(one.hops, four.hops);
        assert_eq!(one.max_path_propagation, four.max_path_propagation);
        let up_down = |threads| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| KShortestPaths::build_up_down(&t.wiring(), 8).unwrap())
        };
        let (one, four) = (up_down(1), up_down(4));
        assert_eq!(one.pair_start, four.pair_start);
        assert_eq!(one.path_start, four.path_start);
        assert_eq!(one.hops, four.hops);
    }

    /// A 128-switch Jellyfish with 8 paths per pair: 16,256 pairs, each searched in
    /// microseconds (Yen with a breadth-first search over the whole graph per spur took
    /// seconds here, and grew 8× per doubling of the switches).
    #[test]
    fn a_large_jellyfish_is_routed() {
        let link = (Bandwidth::from_gbps(100), Duration::from_us(1));
        let t = Topology::jellyfish(128, 8, 204, link, 1).unwrap();
        let t = t.with_k_shortest_paths(8).unwrap();
        let (a, dst) = (0, HostIdx(203));
        assert_eq!(t.route_starts(a, dst).len(), 8);
    }

    #[test]
    fn the_longest_path_sizes_the_propagation_bound_and_path_takes_the_shortest() {
        // Switches 3-4-5 in a chain plus 3-5 directly: hosts 0 and 2 have a 1-hop and a 2-hop
        // path. Links in order: host links 100, 200, 300 ns; 3-4 400 ns, 4-5 500 ns, 3-5 600 ns.
        let t = graph(3, &[(0, 2)]);
        let shortest = t.max_path_propagation();
        assert_eq!(t.max_path_switches(), 2, "3-5 directly");
        let t = t.with_k_shortest_paths(2).unwrap();
        assert_eq!(t.max_path_switches(), 3, "3-4-5, the second path");
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
