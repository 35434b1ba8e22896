//! Shortest-path (hop count) routing with ECMP, precomputed into a flat table.
//!
//! Switches look up their egress candidates once per packet, so the lookup must be a couple of
//! array reads: no hashing, no allocation. The table is built once with one breadth-first search
//! per destination switch (MODEL.md §1: "shortest paths; ECMP picks one per flow"). Hosts are
//! never transit nodes: a search does not expand through a host.
//!
//! Routes are kept per destination *switch* (a switch with hosts, a ToR), not per host: every
//! host has exactly one link, so every shortest path to a host runs through its switch, and a
//! switch's candidates towards a host are its candidates towards that host's switch. The host's
//! switch resolves the last hop with the port to the host. At 65,536 hosts under 2,048 ToRs
//! this makes the table 32 times smaller and the searches 32 times fewer.
//!
//! Layout: one [`Span`] per (switch, destination switch), rows grouped by switch so that one
//! switch's routes are contiguous in memory, pointing into a shared `Vec<PortId>` of candidates.
//! Consecutive destinations of the same switch often share the same candidate list (in a
//! fat-tree an edge switch sends every remote ToR to the same uplinks), so a list equal to the
//! switch's previous one is stored once; this keeps the candidate array small.
//!
//! A fat-tree's lookups skip the table ([`FatTreeRoutes`]): its lists follow from the
//! destination's address, and computing them costs less than the cache miss the table's entry
//! was on a large tree.

use irn_core::time::Duration;

use super::{NodeKind, Port, TopologyError};
use crate::ids::{HostIdx, NodeId, PortId};

/// Marks a node a search has not reached, and a node that is not a switch.
const NONE: u32 = u32::MAX;

/// The most (switch, destination switch) entries a table may hold: 2 GiB of [`Span`]s, more
/// than a 65,536-host fat-tree's 10.5 million.
pub(super) const MAX_ENTRIES: usize = 1 << 28;

/// The most steps the table's searches may take, one breadth-first search per switch with
/// hosts over every switch and switch-to-switch port: about a minute on one core (a three-tier
/// Clos of 64 pods of 64 leaves, 4.3 G steps, took 20 s). A fat-tree of any size is far below
/// (k = 64: 0.55 G).
pub(super) const MAX_SEARCH_STEPS: u64 = 8 << 30;

/// The most next-hop candidates the table may keep (1 GiB of ports): on a dense random graph
/// every (switch, destination) pair may have dozens of equal-cost next hops.
pub(super) const MAX_CANDIDATES: usize = 1 << 28;

/// Where one ECMP candidate list lives in [`RoutingTable::candidates`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Span {
    start: u32,
    len: u32,
}

/// Where a host hangs: what a lookup towards it reads before (or instead of) the span table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct HostRoute {
    /// The row of the host's switch, `NONE` if the host is linked to a host.
    row: u32,
    /// The column of the host's switch in `spans`.
    col: u32,
    /// The host's switch's port to the host: the one candidate there.
    port: PortId,
}

/// A k-ary fat-tree's routes, computed from the destination host's (pod, edge, host) address
/// and the switch's tier instead of read from the table: at k = 24 the table is 1.7 MB, and its
/// entry was a cache miss on most packet hops. Every candidate list of a fat-tree is a run of
/// consecutive ports of the switch (its uplinks, or one down port), the same list the table
/// holds in the same order, so ECMP picks the same port (the tests compare every entry).
///
/// Valid only for the wiring [`Topology::fat_tree`](super::Topology::fat_tree) builds, and only
/// as long as every link is up: a table recomputed after link failures, or a source-routed
/// topology's transit table, has none.
#[derive(Clone, Debug)]
struct FatTreeRoutes {
    /// k / 2: hosts per edge switch, edge and aggregation switches per pod, down ports of an
    /// edge or aggregation switch.
    half: u32,
    /// Ports per switch.
    k: u32,
    /// Edge switches (rows `0..edges`), as many aggregation switches after them, then cores.
    edges: u32,
    /// Every switch port's id, switch by switch in row order (`k` each): the candidate lists
    /// are slices of it.
    ports: Vec<PortId>,
}

impl FatTreeRoutes {
    /// The routes of the fat-tree of `k` whose first switch port is `first_port` (its hosts'
    /// count: each host has one port, and hosts are numbered first).
    fn new(k: u32, first_port: u32) -> FatTreeRoutes {
        let half = k / 2;
        let switches = k * k / 2 * 2 + half * half;
        FatTreeRoutes {
            half,
            k,
            edges: k * k / 2,
            ports: (first_port..first_port + switches * k)
                .map(PortId)
                .collect(),
        }
    }

    /// The candidates at the switch of row `row` towards host `dst`: an edge switch sends its
    /// own hosts' packets down and every other up; an aggregation switch sends its own pod's
    /// down to their edge switch and every other up; a core switch sends down to the host's pod.
    #[inline(always)]
    fn next_hops(&self, row: usize, dst: HostIdx) -> &[PortId] {
        let (half, row) = (self.half, row as u32);
        let edge = dst.0 / half;
        let pod = edge / half;
        let first = row * self.k;
        let up = (first + half, half);
        let (start, len) = if row < self.edges {
            if row == edge {
                (first + (dst.0 - edge * half), 1)
            } else {
                up
            }
        } else if row < 2 * self.edges {
            // Aggregation switch `row - edges` is in pod `(row - edges) / half`.
            if (row - self.edges).wrapping_sub(pod * half) < half {
                (first + (edge - pod * half), 1)
            } else {
                up
            }
        } else {
            (first + pod, 1)
        };
        &self.ports[start as usize..][..len as usize]
    }
}

/// Per-(switch, destination switch) ECMP candidates, plus facts derived while computing them.
#[derive(Clone, Debug)]
pub(crate) struct RoutingTable {
    /// Number of switches with hosts: the row length of `spans`.
    tors: usize,
    /// For each node, its row in `spans` if it is a switch, else `NONE`.
    switch_row: Vec<u32>,
    /// For each host, its switch's row and column and the port that reaches it.
    host_routes: Vec<HostRoute>,
    /// `spans[row * tors + col]`: candidates at the switch of row `row` towards the switch of
    /// column `col` (empty at that switch itself, which reads the host's port instead).
    spans: Vec<Span>,
    /// Egress ports, each list in ascending `PortId` order.
    candidates: Vec<PortId>,
    /// The largest sum of link delays along a first-candidate path between two hosts.
    max_path_propagation: Duration,
    /// The most switches on a shortest path between two hosts; 0 for a source-routed
    /// topology's transit table, whose routes say.
    max_path_switches: u32,
    /// A fat-tree's routes by arithmetic, which lookups take instead of `spans`; `None` for
    /// any other wiring.
    fat_tree: Option<FatTreeRoutes>,
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

/// The switches with hosts, numbered by their first host, and where each host hangs.
struct Tors {
    /// Column -> the switch node.
    nodes: Vec<NodeId>,
    /// Host index -> its route head.
    host_routes: Vec<HostRoute>,
}

impl Tors {
    /// Numbers the switches with hosts in the order of their first host.
    fn new(w: &Wiring<'_>, switch_row: &[u32]) -> Tors {
        let mut col_of = vec![NONE; w.kinds.len()];
        let mut nodes = Vec::new();
        let host_routes = (w.hosts.iter())
            .map(|h| {
                let up = w.ports[w.port_base[h.index()] as usize].peer;
                let tor = w.ports[up.index()].node;
                let row = switch_row[tor.index()];
                if row != NONE && col_of[tor.index()] == NONE {
                    col_of[tor.index()] = nodes.len() as u32;
                    nodes.push(tor);
                }
                let col = if row == NONE { 0 } else { col_of[tor.index()] };
                HostRoute { row, col, port: up }
            })
            .collect();
        Tors { nodes, host_routes }
    }

    /// The delays of the links from the hosts to each switch with hosts, per column.
    fn host_delays(&self, w: &Wiring<'_>) -> Vec<Vec<Duration>> {
        let mut delays = vec![Vec::new(); self.nodes.len()];
        for r in self.host_routes.iter().filter(|r| r.row != NONE) {
            delays[r.col as usize].push(w.ports[r.port.index()].delay);
        }
        delays
    }
}

/// The switch-to-switch ports of every switch, in port order, with the switch at the far end:
/// all that the searches read.
struct SwitchLinks {
    /// `links[base[row]..base[row + 1]]` are those of the switch of row `row`.
    base: Vec<u32>,
    /// (port, far switch's row).
    links: Vec<(PortId, u32)>,
}

impl SwitchLinks {
    fn new(w: &Wiring<'_>, switch_row: &[u32], up: impl Fn(u32) -> bool) -> SwitchLinks {
        let mut base = Vec::with_capacity(w.switches.len() + 1);
        let mut links = Vec::new();
        for s in w.switches {
            base.push(links.len() as u32);
            for p in w.port_base[s.index()]..w.port_base[s.index() + 1] {
                let far = switch_row[w.ports[w.ports[p as usize].peer.index()].node.index()];
                if far != NONE && up(p) {
                    links.push((PortId(p), far));
                }
            }
        }
        base.push(links.len() as u32);
        SwitchLinks { base, links }
    }

    fn of(&self, row: u32) -> &[(PortId, u32)] {
        &self.links[self.base[row as usize] as usize..self.base[row as usize + 1] as usize]
    }
}

impl RoutingTable {
    /// Runs one BFS per switch with hosts and records, for every switch, the ports whose far
    /// end is one hop closer. Fails if some host or switch cannot reach some host.
    pub(super) fn build(w: &Wiring<'_>) -> Result<RoutingTable, TopologyError> {
        Self::build_avoiding(w, None)
    }

    /// [`build`](Self::build) over the links whose ports are not `down` (both ends of a failed
    /// link are), as routing reconverges after link failures. With `down` given, a switch that
    /// can no longer reach a host gets an empty list for it (the packet path drops such
    /// packets) instead of an error. Only links between switches fail.
    pub(super) fn build_avoiding(
        w: &Wiring<'_>,
        down: Option<&[bool]>,
    ) -> Result<RoutingTable, TopologyError> {
        let up = |p: u32| down.is_none_or(|d| !d[p as usize]);
        if down.is_none() {
            check_connected(w)?;
        }
        let switch_row = switch_rows(w);
        let tors = Tors::new(w, &switch_row);
        let switches = w.switches.len();
        let cols = tors.nodes.len();
        check_size(switches, cols)?;
        let links = SwitchLinks::new(w, &switch_row, up);
        check_search(cols, switches, links.links.len() as u64 / 2)?;
        let delays = tors.host_delays(w);
        // Per column: its hosts' largest link delay, and the longest two-host path through it.
        let max_delay: Vec<Duration> = (delays.iter())
            .map(|d| d.iter().copied().max().unwrap_or(Duration::ZERO))
            .collect();

        let mut spans = vec![Span::default(); switches * cols];
        let mut candidates: Vec<PortId> = Vec::new();
        // Each switch's most recently stored list, for de-duplication.
        let mut last = vec![Span { start: 0, len: 0 }; switches];

        let mut dist = vec![NONE; switches];
        let mut order: Vec<u32> = Vec::with_capacity(switches);
        // Delay from each switch to the current destination switch along first candidates.
        let mut prop = vec![Duration::ZERO; switches];
        let mut max_path_propagation = direct_host_links(w, &tors);
        let mut max_path_switches = 0;

        for (col, &dst) in tors.nodes.iter().enumerate() {
            let dst_row = switch_row[dst.index()];
            bfs(&links, dst_row, &mut dist, &mut order);

            prop[dst_row as usize] = Duration::ZERO;
            // BFS order visits switches by non-decreasing distance, so every switch's next hop
            // (one hop closer) has its `prop` set before the switch itself.
            for &row in &order[1..] {
                let d = dist[row as usize];
                let start = candidates.len();
                for &(p, far) in links.of(row) {
                    if dist[far as usize] == d - 1 {
                        candidates.push(p);
                    }
                }
                let len = candidates.len() - start;
                if candidates.len() > MAX_CANDIDATES {
                    return Err(TopologyError::RoutingCandidates {
                        at_least: candidates.len(),
                        tors: cols,
                    });
                }
                // The BFS parent is always a candidate.
                debug_assert!(len > 0, "switch row {row} has no route to switch {dst}");

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
                spans[row as usize * cols + col] = span;

                let first = candidates[span.start as usize];
                let next = switch_row[w.ports[w.ports[first.index()].peer.index()].node.index()];
                prop[row as usize] = w.ports[first.index()].delay + prop[next as usize];
            }

            // Paths from every host under a reached switch to every host under `dst`: through
            // `dst` alone between two of its own hosts, else up, across and down.
            if let [.., second, first] = sorted(&delays[col])[..] {
                max_path_propagation = max_path_propagation.max(first + second);
                max_path_switches = max_path_switches.max(1);
            }
            for (src, &src_node) in tors.nodes.iter().enumerate() {
                let row = switch_row[src_node.index()] as usize;
                if src == col || dist[row] == NONE {
                    continue;
                }
                let total = max_delay[src] + prop[row] + max_delay[col];
                max_path_propagation = max_path_propagation.max(total);
                max_path_switches = max_path_switches.max(dist[row] + 1);
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
            tors: cols,
            switch_row,
            host_routes: tors.host_routes,
            spans,
            candidates,
            max_path_propagation,
            max_path_switches,
            fat_tree: None,
        })
    }

    /// The table of source-routed forwarding (`routing = "k-shortest"`): at each switch a
    /// host of its own has its one port, and every other host has all the switch-facing ports,
    /// listed twice when there is only one. A packet's route picks among them, so the lists only
    /// need to send every packet bound elsewhere to the route: two entries or more keep the
    /// single-candidate shortcut of the packet path from skipping it.
    pub(super) fn transit(w: &Wiring<'_>, max_path_propagation: Duration) -> RoutingTable {
        let switch_row = switch_rows(w);
        let tors = Tors::new(w, &switch_row);
        let cols = tors.nodes.len();
        let mut spans = Vec::with_capacity(w.switches.len() * cols);
        let mut candidates = Vec::new();
        let peer = |p: u32| w.ports[w.ports[p as usize].peer.index()].node;
        for s in w.switches {
            let ports = w.port_base[s.index()]..w.port_base[s.index() + 1];
            let start = candidates.len() as u32;
            candidates.extend(
                ports
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
            spans.resize(spans.len() + cols, onward);
        }
        RoutingTable {
            tors: cols,
            switch_row,
            host_routes: tors.host_routes,
            spans,
            candidates,
            max_path_propagation,
            max_path_switches: 0,
            fat_tree: None,
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
            dst.index() < self.host_routes.len(),
            "next_hops: host index {dst} out of range (the topology has {} hosts)",
            self.host_routes.len()
        );
        match &self.fat_tree {
            Some(routes) => routes.next_hops(row, dst),
            None => self.looked_up(row, dst),
        }
    }

    /// [`next_hops_at_row`](Self::next_hops_at_row) read from the table.
    #[inline(always)]
    pub(super) fn looked_up(&self, row: usize, dst: HostIdx) -> &[PortId] {
        let host = &self.host_routes[dst.index()];
        if row == host.row as usize {
            return core::slice::from_ref(&host.port);
        }
        let span = self.spans[row * self.tors + host.col as usize];
        &self.candidates[span.start as usize..][..span.len as usize]
    }

    /// The routes of the fat-tree of `k` whose links all have `delay`, as
    /// [`Topology::fat_tree`](super::Topology::fat_tree) wires it: by arithmetic on its
    /// numbering, without a table or the search from every edge switch that builds one (2 s
    /// at k = 64, and 84 MB of table). Its longest path is host, edge, aggregation, core,
    /// aggregation, edge, host: six links and five switches (a fat-tree has at least two pods).
    /// Routing after link failures builds a table of its own.
    pub(super) fn for_fat_tree(w: &Wiring<'_>, k: u32, delay: Duration) -> RoutingTable {
        let switch_row = switch_rows(w);
        let tors = Tors::new(w, &switch_row);
        let hosts = tors.host_routes.len() as u32;
        RoutingTable {
            tors: tors.nodes.len(),
            switch_row,
            host_routes: tors.host_routes,
            spans: Vec::new(),
            candidates: Vec::new(),
            max_path_propagation: delay * 6,
            max_path_switches: 5,
            fat_tree: Some(FatTreeRoutes::new(k, hosts)),
        }
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
            + self.host_routes.capacity() * size_of::<HostRoute>()
            + self.spans.capacity() * size_of::<Span>()
            + self.candidates.capacity() * size_of::<PortId>()
            + (self.fat_tree.as_ref()).map_or(0, |f| f.ports.capacity() * size_of::<PortId>())
    }
}

/// For each node, its index among switches, or `NONE` for a host.
fn switch_rows(w: &Wiring<'_>) -> Vec<u32> {
    let mut switch_row = vec![NONE; w.kinds.len()];
    for (row, s) in w.switches.iter().enumerate() {
        switch_row[s.index()] = row as u32;
    }
    switch_row
}

/// Fails if a table of `switches` rows of `tors` entries is too large to hold: builders check
/// this before they allocate their links.
pub(super) fn check_size(switches: usize, tors: usize) -> Result<(), TopologyError> {
    match switches.checked_mul(tors) {
        Some(n) if n <= MAX_ENTRIES => Ok(()),
        _ => Err(TopologyError::RoutingTooLarge { switches, tors }),
    }
}

/// Fails if one search per switch with hosts (`tors`) over `switches` switches and `links`
/// switch-to-switch links would take more than [`MAX_SEARCH_STEPS`]: builders check this before
/// they allocate their links.
pub(super) fn check_search(tors: usize, switches: usize, links: u64) -> Result<(), TopologyError> {
    let steps = (tors as u64).saturating_mul((switches as u64).saturating_add(2 * links));
    if steps > MAX_SEARCH_STEPS {
        return Err(TopologyError::RoutingTooSlow {
            tors,
            switches,
            links,
            steps,
        });
    }
    Ok(())
}

/// `v` sorted, ascending.
fn sorted(v: &[Duration]) -> Vec<Duration> {
    let mut v = v.to_vec();
    v.sort_unstable();
    v
}

/// The longest path between two hosts linked to each other (a network of two hosts and one
/// link), else zero.
fn direct_host_links(w: &Wiring<'_>, tors: &Tors) -> Duration {
    (tors.host_routes.iter())
        .filter(|r| r.row == NONE)
        .map(|r| w.ports[r.port.index()].delay)
        .max()
        .unwrap_or(Duration::ZERO)
}

/// Breadth-first search over switch-to-switch links from the switch of row `dst`: fills `dist`
/// (hops to `dst`, `NONE` if unreached) and `order` (rows in visiting order, `dst` first).
fn bfs(links: &SwitchLinks, dst: u32, dist: &mut [u32], order: &mut Vec<u32>) {
    dist.fill(NONE);
    order.clear();
    dist[dst as usize] = 0;
    order.push(dst);
    let mut head = 0;
    while head < order.len() {
        let u = order[head];
        head += 1;
        for &(_, far) in links.of(u) {
            if dist[far as usize] == NONE {
                dist[far as usize] = dist[u as usize] + 1;
                order.push(far);
            }
        }
    }
}

/// Names one host, else one switch, that cannot reach the first host. Hosts do not forward and
/// have one link each, so what reaches the first host reaches every host: the first host is the
/// first destination some node cannot reach, if any.
fn check_connected(w: &Wiring<'_>) -> Result<(), TopologyError> {
    let dst = w.hosts[0];
    let mut reached = vec![false; w.kinds.len()];
    reached[dst.index()] = true;
    let mut stack = vec![dst];
    while let Some(u) = stack.pop() {
        if u != dst && w.kinds[u.index()] == NodeKind::Host {
            continue;
        }
        for p in w.port_base[u.index()]..w.port_base[u.index() + 1] {
            let m = w.ports[w.ports[p as usize].peer.index()].node;
            if !reached[m.index()] {
                reached[m.index()] = true;
                stack.push(m);
            }
        }
    }
    if let Some(&from) = w.hosts.iter().find(|h| !reached[h.index()]) {
        return Err(TopologyError::Disconnected { from, to: dst });
    }
    if let Some(&switch) = w.switches.iter().find(|s| !reached[s.index()]) {
        return Err(TopologyError::UnreachableSwitch { switch, host: dst });
    }
    Ok(())
}
