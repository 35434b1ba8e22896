//! Network topologies: which nodes exist, how their ports are wired, and where packets go.
//!
//! The simulator keeps every node's ports in one global array indexed by [`PortId`], so a
//! [`Topology`] hands it exactly that: the nodes and their [`NodeKind`], a contiguous range of
//! ports per node, and for each [`Port`] its peer at the other end of the link, the link's rate
//! and delay. Routing is shortest paths in hop count with ECMP over every equal-cost next hop
//! (MODEL.md §1), precomputed so a switch finds its candidates in O(1) ([`Topology::next_hops`]).
//!
//! | file | holds |
//! | --- | --- |
//! | `mod.rs` | the types, the generic builder [`Topology::from_links`], queries, [`PathInfo`] |
//! | `routing.rs` | the ECMP table: a BFS per destination switch, the host's port at its switch |
//! | `k_shortest.rs` | Yen's k shortest paths between edge switches, for source routing |
//! | `up_down.rs` | up*/down* order and legal-path searches: routes that cannot deadlock PFC |
//! | `fat_tree.rs` | the Al-Fares k-ary fat-tree of the IRN paper (MODEL.md §2) |
//! | `labels.rs` | nodes and ports named by tier and index ([`Topology::node_label`]) |
//! | `leaf_spine.rs` | the two-tier leaf-spine Clos of Eunomia |
//! | `clos.rs` | the three-tier Clos and the rail-optimized fabric of AI clusters |
//! | `jellyfish.rs` | Jellyfish: a random regular graph of switches with servers attached |
//! | `simple.rs` | hand-checkable star and dumbbell networks |
//! | `wan.rs` | two sites joined by long-haul links between border switches ([`Topology::wan`]) |
//! | `error.rs` | [`TopologyError`] |
//!
//! A topology is validated once, when built; afterwards every query is infallible and cheap.

mod clos;
mod error;
mod fat_tree;
mod jellyfish;
mod k_shortest;
mod labels;
mod leaf_spine;
pub mod ns3;
mod routing;
mod simple;
#[cfg(test)]
mod tests;
mod up_down;
mod wan;

use core::ops::Range;
use std::sync::Arc;

use irn_core::time::{Bandwidth, Duration};

pub use self::clos::{Clos3, ClosLinks, Rail};
pub use self::error::{TopologyError, MAX_SWITCH_PORTS};
use self::k_shortest::KShortestPaths;
pub use self::k_shortest::MAX_PATHS;
pub use self::labels::{NodeLabel, PortLabel, TierRun};
pub(crate) use self::routing::RoutingTable;
use self::routing::Wiring;
pub use self::wan::{Border, LongHaulLink, Site, Wan, WanLinks, WanSite};
use crate::ids::{HostIdx, NodeId, PortId};

/// The slowest and fastest link rate a network may have, whether a scenario generates it or an
/// ns-3 file gives it: 1 Mb/s, below any network RDMA runs over, and 10 Tb/s, six times the
/// fastest port shipping (1.6 Tb/s) while a byte still takes a whole picosecond or more.
pub const LINK_RATES: (Bandwidth, Bandwidth) = (
    Bandwidth::from_bps(1_000_000),
    Bandwidth::from_bps(10_000_000_000_000),
);

/// Why the bounds of [`LINK_RATES`] are what they are, for the errors that enforce them.
pub const LINK_RATES_WHY: &str =
    "1 Mb/s is slower than any RDMA network; 10 Tb/s is six times today's fastest ports";

/// What a node does: hosts send and receive traffic through one NIC port, switches forward.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Switch,
}

/// One full-duplex link between two nodes, as given to [`Topology::from_links`]. Both
/// directions have the same rate and delay.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkSpec {
    pub a: NodeId,
    pub b: NodeId,
    pub rate: Bandwidth,
    pub delay: Duration,
}

/// One end of a link. A packet sent out of this port arrives, after serialization at `rate` and
/// `delay` of propagation, at `peer` (the port at the other end, on another node).
#[derive(Clone, Copy, Debug)]
pub struct Port {
    /// The node this port belongs to.
    pub node: NodeId,
    /// The port at the other end of the link.
    pub peer: PortId,
    pub rate: Bandwidth,
    pub delay: Duration,
}

/// The path a lone flow takes, as [`Topology::path`] describes it: what the ideal (unloaded)
/// flow completion time is computed from (MODEL.md §5: bottleneck serialization + propagation +
/// one store-and-forward per extra hop).
#[derive(Clone, Debug, PartialEq)]
pub struct PathInfo {
    /// Links traversed; `hops == rates.len()`.
    pub hops: u32,
    /// Sum of the links' delays.
    pub propagation: Duration,
    /// The lowest link rate on the path.
    pub bottleneck: Bandwidth,
    /// Each link's rate, from the source host to the destination host.
    pub rates: Vec<Bandwidth>,
}

/// A validated network with its routing precomputed.
///
/// Nodes are numbered `0..node_count()` ([`NodeId`]); hosts are also numbered among themselves
/// ([`HostIdx`], in `NodeId` order), because workloads pick hosts, not nodes. Ports are numbered
/// globally ([`PortId`]), node by node in `NodeId` order, each node's ports contiguous and in the
/// order its links were given.
#[derive(Clone, Debug)]
pub struct Topology {
    kinds: Vec<NodeKind>,
    hosts: Vec<NodeId>,
    switches: Vec<NodeId>,
    /// For each node, its host index, or `u32::MAX` for a switch.
    host_of: Vec<u32>,
    /// `node_ports(n) == port_base[n]..port_base[n + 1]`.
    port_base: Vec<u32>,
    ports: Vec<Port>,
    links: Vec<LinkSpec>,
    /// Shared with the simulation, which replaces its copy when links fail.
    routing: Arc<RoutingTable>,
    /// Under `routing = "k-shortest"` or `"up-down"`, the paths packets are source-routed on;
    /// `routing` is then the transit table that hands every packet not for a local host to its
    /// route.
    source_routes: Option<Box<KShortestPaths>>,
    min_host_rate: Bandwidth,
    /// Its sites and long-haul links when built by [`Topology::wan`].
    wan: Option<Box<Wan>>,
    /// The switches' named tiers, for [`node_label`](Self::node_label); empty without.
    tier_runs: Vec<TierRun>,
}

impl Topology {
    /// Generic builder: node kinds (index = [`NodeId`]) and undirected full-duplex links. Each
    /// link creates two ports, one per end. A node's ports are numbered contiguously in the order
    /// its links appear in `links`, which lets a generator choose a meaningful port order (a
    /// fat-tree lists down-links before up-links).
    ///
    /// Rejects what the simulator cannot run: fewer than 2 hosts; a link naming a node out of
    /// range; a self-loop; a zero-rate link; a host with other than one link (a NIC has one
    /// port); a switch with more than [`MAX_SWITCH_PORTS`] ports; a host or switch that cannot
    /// reach some host. Parallel links between two switches are allowed (both are ECMP
    /// candidates).
    pub fn from_links(
        kinds: Vec<NodeKind>,
        links: Vec<LinkSpec>,
    ) -> Result<Topology, TopologyError> {
        Self::from_links_routed(kinds, links, RoutingTable::build)
    }

    /// [`from_links`](Self::from_links), with the routes computed by `route` (a structured
    /// topology's, known without a search) instead of a search from every edge switch.
    fn from_links_routed(
        kinds: Vec<NodeKind>,
        links: Vec<LinkSpec>,
        route: impl FnOnce(&Wiring<'_>) -> Result<RoutingTable, TopologyError>,
    ) -> Result<Topology, TopologyError> {
        let nodes = kinds.len();
        if u32::try_from(nodes).is_err() {
            return Err(TopologyError::TooLarge {
                what: "nodes",
                count: nodes,
            });
        }
        if links.len() > (u32::MAX / 2) as usize {
            return Err(TopologyError::TooLarge {
                what: "links",
                count: links.len(),
            });
        }

        let mut hosts = Vec::new();
        let mut switches = Vec::new();
        let mut host_of = vec![u32::MAX; nodes];
        for (i, kind) in kinds.iter().enumerate() {
            let id = NodeId(i as u32);
            match kind {
                NodeKind::Host => {
                    host_of[i] = hosts.len() as u32;
                    hosts.push(id);
                }
                NodeKind::Switch => switches.push(id),
            }
        }
        if hosts.len() < 2 {
            return Err(TopologyError::TooFewHosts { hosts: hosts.len() });
        }

        let mut degree = vec![0usize; nodes];
        for (i, l) in links.iter().enumerate() {
            for node in [l.a, l.b] {
                if node.index() >= nodes {
                    return Err(TopologyError::NodeOutOfRange {
                        link: i,
                        node,
                        nodes,
                    });
                }
            }
            if l.a == l.b {
                return Err(TopologyError::SelfLoop { link: i, node: l.a });
            }
            if l.rate.as_bps() == 0 {
                return Err(TopologyError::ZeroRate {
                    link: i,
                    a: l.a,
                    b: l.b,
                    rate: l.rate,
                });
            }
            degree[l.a.index()] += 1;
            degree[l.b.index()] += 1;
        }
        for (i, (&kind, &links)) in kinds.iter().zip(&degree).enumerate() {
            let node = NodeId(i as u32);
            match kind {
                NodeKind::Host if links != 1 => {
                    return Err(TopologyError::HostLinks { host: node, links })
                }
                NodeKind::Switch if links > MAX_SWITCH_PORTS => {
                    return Err(TopologyError::TooManyPorts {
                        switch: node,
                        ports: links,
                    })
                }
                _ => {}
            }
        }

        // Prefix sums of degrees give each node's first port; fill each node's slots in link order.
        let mut port_base = Vec::with_capacity(nodes + 1);
        let mut next = 0u32;
        for &d in &degree {
            port_base.push(next);
            next += d as u32;
        }
        port_base.push(next);
        let mut free: Vec<u32> = port_base[..nodes].to_vec();
        let placeholder = Port {
            node: NodeId(0),
            peer: PortId(0),
            rate: Bandwidth::from_bps(0),
            delay: Duration::ZERO,
        };
        let mut ports = vec![placeholder; next as usize];
        for l in &links {
            let pa = free[l.a.index()];
            let pb = free[l.b.index()];
            free[l.a.index()] += 1;
            free[l.b.index()] += 1;
            ports[pa as usize] = Port {
                node: l.a,
                peer: PortId(pb),
                rate: l.rate,
                delay: l.delay,
            };
            ports[pb as usize] = Port {
                node: l.b,
                peer: PortId(pa),
                rate: l.rate,
                delay: l.delay,
            };
        }

        let routing = route(&Wiring {
            kinds: &kinds,
            hosts: &hosts,
            switches: &switches,
            ports: &ports,
            port_base: &port_base,
        })?;
        let min_host_rate = hosts
            .iter()
            .map(|h| ports[port_base[h.index()] as usize].rate)
            .min()
            .expect("at least two hosts");

        Ok(Topology {
            kinds,
            hosts,
            switches,
            host_of,
            port_base,
            ports,
            links,
            routing: Arc::new(routing),
            source_routes: None,
            min_host_rate,
            wan: None,
            tier_runs: Vec::new(),
        })
    }

    /// Routes this network by source routing over up to `k` shortest loopless paths (Yen, in
    /// switch hops) between every pair of edge switches, instead of per-switch ECMP over
    /// shortest paths: the first switch picks a path per packet (its load balancer choosing
    /// among the paths) and later switches follow it. [`next_hops`](Self::next_hops) then
    /// gives the transit candidates, and [`path`](Self::path) a shortest of the paths.
    ///
    /// # Panics
    /// If `k` is not in `1..=MAX_PATHS` (the scenario layer checks it first).
    pub fn with_k_shortest_paths(mut self, k: usize) -> Result<Topology, TopologyError> {
        assert!((1..=MAX_PATHS).contains(&k), "k = {k} paths");
        let paths = KShortestPaths::build(&self.wiring(), k)?;
        let transit = RoutingTable::transit(&self.wiring(), paths.max_path_propagation());
        self.routing = Arc::new(transit);
        self.source_routes = Some(Box::new(paths));
        Ok(self)
    }

    /// Routes this network as [`with_k_shortest_paths`](Self::with_k_shortest_paths) does,
    /// over the `k` shortest up*/down* paths instead (Autonet: a breadth-first order from the
    /// most central switch; no path takes a link towards the root after one away from it). The
    /// links' dependencies then form no cycle, so PFC cannot deadlock, whatever the graph; the
    /// price is longer paths where the shortest ones turn back up.
    ///
    /// # Panics
    /// If `k` is not in `1..=MAX_PATHS` (the scenario layer checks it first).
    pub fn with_up_down_paths(mut self, k: usize) -> Result<Topology, TopologyError> {
        assert!((1..=MAX_PATHS).contains(&k), "k = {k} paths");
        let paths = KShortestPaths::build_up_down(&self.wiring(), k)?;
        let transit = RoutingTable::transit(&self.wiring(), paths.max_path_propagation());
        self.routing = Arc::new(transit);
        self.source_routes = Some(Box::new(paths));
        Ok(self)
    }

    /// Source routes over every shortest path between every pair of edge switches: the paths
    /// ECMP spreads flows over, each named, for a source ToR that picks them itself (ConWeave).
    /// Routing is as [`with_k_shortest_paths`](Self::with_k_shortest_paths) makes it.
    pub fn with_shortest_paths(mut self) -> Result<Topology, TopologyError> {
        let paths = KShortestPaths::build_all_shortest(&self.wiring())?;
        let transit = RoutingTable::transit(&self.wiring(), paths.max_path_propagation());
        self.routing = Arc::new(transit);
        self.source_routes = Some(Box::new(paths));
        Ok(self)
    }

    /// What routing tables are computed from.
    fn wiring(&self) -> Wiring<'_> {
        Wiring {
            kinds: &self.kinds,
            hosts: &self.hosts,
            switches: &self.switches,
            ports: &self.ports,
            port_base: &self.port_base,
        }
    }

    /// The routing table the simulation forwards by, shared.
    pub(crate) fn routing(&self) -> &Arc<RoutingTable> {
        &self.routing
    }

    /// The routing table over the links whose ports are not `down` (indexed by [`PortId`];
    /// a failed link has both ends down): what routing converges to after link failures. A
    /// switch cut off from a host has no next hop for it.
    pub(crate) fn routing_avoiding(&self, down: &[bool]) -> RoutingTable {
        RoutingTable::build_avoiding(&self.wiring(), Some(down))
            .expect("a tolerant build only fails on sizes the first build accepted")
    }

    /// Whether packets are source-routed ([`with_k_shortest_paths`](Self::with_k_shortest_paths)).
    pub fn source_routed(&self) -> bool {
        self.source_routes.is_some()
    }

    /// Under source routing, the route cursors of the paths from switch `switch` (its index
    /// among switches, which must have hosts) to host `dst`'s switch, shortest first; empty
    /// when `dst` hangs off `switch` or without source routing.
    #[inline]
    pub fn route_starts(&self, switch: usize, dst: HostIdx) -> &[u32] {
        self.source_routes
            .as_deref()
            .map_or(&[], |r| r.paths(switch, dst))
    }

    /// The egress port under route cursor `cursor` (from [`route_starts`](Self::route_starts),
    /// advanced by one per switch).
    ///
    /// # Panics
    /// Without source routing, or for a cursor past the last path.
    #[inline(always)]
    pub fn route_hop(&self, cursor: u32) -> PortId {
        self.source_routes
            .as_deref()
            .expect("source-routed")
            .hop(cursor)
    }

    /// How many route cursors there are (each path's hops, one after another); 0 without source
    /// routing.
    pub fn route_hop_count(&self) -> usize {
        self.source_routes.as_deref().map_or(0, |r| r.hop_count())
    }

    /// The switch-to-switch egress ports of the path whose cursor starts at `cursor`.
    pub fn route_ports(&self, cursor: u32) -> &[PortId] {
        self.source_routes
            .as_deref()
            .map_or(&[], |r| r.path_ports(cursor))
    }

    /// Number of nodes, hosts and switches together.
    pub fn node_count(&self) -> usize {
        self.kinds.len()
    }

    /// Whether `n` is a host or a switch. Panics if `n` is out of range.
    pub fn kind(&self, n: NodeId) -> NodeKind {
        self.kinds[n.index()]
    }

    /// The host nodes, indexed by [`HostIdx`]: workloads pick hosts by index, the network
    /// delivers to nodes.
    pub fn hosts(&self) -> &[NodeId] {
        &self.hosts
    }

    /// The host index of node `n`, or `None` if `n` is a switch.
    pub fn host_index(&self, n: NodeId) -> Option<HostIdx> {
        match self.host_of[n.index()] {
            u32::MAX => None,
            h => Some(HostIdx(h)),
        }
    }

    /// The node of host `h`. Panics if `h` is out of range.
    pub fn host_node(&self, h: HostIdx) -> NodeId {
        self.hosts[h.index()]
    }

    /// The switch nodes, in `NodeId` order.
    pub fn switches(&self) -> &[NodeId] {
        &self.switches
    }

    /// Every port, indexed by [`PortId`]; the simulator keeps its per-port state in parallel.
    pub fn ports(&self) -> &[Port] {
        &self.ports
    }

    /// The global [`PortId`]s of node `n`: contiguous, so per-node port state is a slice.
    pub fn node_ports(&self, n: NodeId) -> Range<u32> {
        self.port_base[n.index()]..self.port_base[n.index() + 1]
    }

    /// The rate that thresholds scaled per port rate are set for (`switch.ecn_per_rate`,
    /// `switch.alpha_per_rate`): the first host's link rate, as HPCC's ns-3 takes its
    /// `nic_rate`; `None` without hosts.
    pub fn nic_rate(&self) -> Option<Bandwidth> {
        let &h = self.hosts.first()?;
        Some(self.ports[self.port_base[h.index()] as usize].rate)
    }

    /// A host's single NIC port. Panics if `h` is out of range.
    pub fn host_port(&self, h: HostIdx) -> PortId {
        PortId(self.port_base[self.hosts[h.index()].index()])
    }

    /// The links as given to [`Topology::from_links`] (or generated), in order: useful to print
    /// or export the network.
    pub fn links(&self) -> &[LinkSpec] {
        &self.links
    }

    /// ECMP candidates at `switch` towards host `dst`: the switch's egress ports whose neighbour
    /// is one hop closer to `dst`, in ascending [`PortId`] order. Never empty. O(1): a lookup in
    /// a precomputed flat table, as it runs once per packet per switch.
    ///
    /// # Panics
    /// If `switch` is not a switch or `dst` is out of range.
    #[inline(always)]
    pub fn next_hops(&self, switch: NodeId, dst: HostIdx) -> &[PortId] {
        self.routing.next_hops(switch, dst)
    }

    /// [`next_hops`](Self::next_hops) at the switch with index `switch` among switches (the
    /// order of [`switches`](Self::switches)): the packet path knows that index already, and it
    /// saves a lookup per hop.
    ///
    /// # Panics
    /// If `switch` or `dst` is out of range.
    #[inline(always)]
    pub fn next_hops_at_switch(&self, switch: usize, dst: HostIdx) -> &[PortId] {
        self.routing.next_hops_at_row(switch, dst)
    }

    /// The path a lone flow `src -> dst` takes if every switch picks its first ECMP candidate
    /// (under source routing: the shortest of its paths):
    /// hop count, sum of link delays, lowest rate and per-hop rates. The ideal FCT used for
    /// slowdowns is computed from it. For `src == dst` the path is empty (0 hops, no delay) and
    /// its bottleneck is the host's link rate.
    ///
    /// # Panics
    /// If `src` or `dst` is out of range.
    pub fn path(&self, src: HostIdx, dst: HostIdx) -> PathInfo {
        let dst_node = self.hosts[dst.index()];
        let mut p = self.host_port(src);
        let mut rates = Vec::new();
        let mut propagation = Duration::ZERO;
        // Source-routed: the shortest path's ports, then the destination switch's host port.
        let edge = self.ports[self.ports[p.index()].peer.index()].node;
        let first = self.source_routes.as_deref().and_then(|r| {
            let row = self.switches.iter().position(|&s| s == edge)?;
            r.paths(row, dst).first().map(|&c| r.path_ports(c))
        });
        let mut route = first.unwrap_or(&[]).iter();
        if src != dst {
            loop {
                let port = self.ports[p.index()];
                rates.push(port.rate);
                propagation = propagation + port.delay;
                let next = self.ports[port.peer.index()].node;
                if next == dst_node {
                    break;
                }
                p = match route.next() {
                    Some(&q) => q,
                    None => self.next_hops(next, dst)[0],
                };
            }
        }
        let bottleneck = rates
            .iter()
            .copied()
            .min()
            .unwrap_or(self.ports[p.index()].rate);
        PathInfo {
            hops: rates.len() as u32,
            propagation,
            bottleneck,
            rates,
        }
    }

    /// The largest one-way propagation delay between two hosts along their (first-candidate)
    /// shortest paths: the "longest path" IRN §3.2/§4.1 sizes the BDP cap and RTO_high from
    /// (6 hops x 2 us = 12 us in the default fat-tree). Computed when the topology is built;
    /// under source routing, over every one of the k paths, as packets may take the longest.
    pub fn max_path_propagation(&self) -> Duration {
        self.routing.max_path_propagation()
    }

    /// The most switches a packet crosses between two hosts (the topology's diameter in
    /// switches): on shortest paths, or under source routing on the longest route. Bounds the
    /// in-band telemetry records a packet gathers.
    pub fn max_path_switches(&self) -> usize {
        let routed = self.source_routes.as_deref().map(|r| r.max_path_switches());
        routed.unwrap_or_else(|| self.routing.max_path_switches()) as usize
    }

    /// The lowest host link rate: flows start at line rate, so this bounds the BDP cap.
    pub fn min_host_rate(&self) -> Bandwidth {
        self.min_host_rate
    }

    /// The sites, borders and long-haul links of a topology built by [`Topology::wan`]; `None`
    /// for a single site.
    pub fn wan_info(&self) -> Option<&Wan> {
        self.wan.as_deref()
    }

    /// The long-haul links of a WAN ([`Wan::long_haul_links`]); none for a single site.
    pub fn long_haul_links(&self) -> &[LongHaulLink] {
        self.wan.as_deref().map_or(&[], Wan::long_haul_links)
    }

    /// Whether port `p` is one end of a long-haul link. A scan of those links: for setting up,
    /// not for the packet path.
    pub fn is_long_haul(&self, p: PortId) -> bool {
        (self.long_haul_links().iter()).any(|l| l.a == p || l.b == p)
    }

    /// The buffer of the switch input behind port `p`: a long-haul link's own
    /// (`[topology.wan] buffer`), otherwise `default`, the switches' buffer.
    pub fn input_buffer(&self, p: PortId, default: u64) -> u64 {
        match self.wan.as_deref() {
            Some(w) if self.is_long_haul(p) => w.buffer_bytes(),
            _ => default,
        }
    }

    /// A shared-buffer switch `n`'s pool: the switches' `buffer`, and on a border switch each
    /// long-haul input's own buffer besides (the docs' "it joins the border switch's pool").
    /// A sum, so that a long-haul buffer smaller than `buffer` still adds to the pool (taking
    /// `buffer` off per long link, as once done, wrapped below zero with two long links).
    pub fn shared_pool(&self, n: NodeId, buffer: u64) -> u64 {
        let long = (self.node_ports(n)).filter(|&p| self.is_long_haul(PortId(p)));
        buffer
            + long
                .map(|p| self.input_buffer(PortId(p), buffer))
                .sum::<u64>()
    }

    /// The WAN site host `h` belongs to; `None` for a single site.
    pub fn site_of(&self, h: HostIdx) -> Option<WanSite> {
        self.wan.as_deref().map(|w| w.site_of(h))
    }

    /// Approximate heap memory held by this topology, in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.kinds.capacity() * size_of::<NodeKind>()
            + (self.hosts.capacity() + self.switches.capacity()) * size_of::<NodeId>()
            + (self.host_of.capacity() + self.port_base.capacity()) * size_of::<u32>()
            + self.ports.capacity() * size_of::<Port>()
            + self.links.capacity() * size_of::<LinkSpec>()
            + self.routing.heap_bytes()
            + self
                .source_routes
                .as_deref()
                .map_or(0, KShortestPaths::heap_bytes)
            + self.wan.as_deref().map_or(0, Wan::heap_bytes)
            + self.tier_runs.capacity() * size_of::<TierRun>()
    }
}

/// Every node's hop distance from the nearest host (breadth-first from all hosts at once): its
/// tier (hosts 0, leaves or edges 1, spines or aggregation 2, cores 3).
pub fn node_tiers(topology: &Topology) -> Vec<u32> {
    let mut tier = vec![u32::MAX; topology.node_count()];
    let mut frontier: Vec<NodeId> = topology.hosts().to_vec();
    for &h in &frontier {
        tier[h.index()] = 0;
    }
    let ports = topology.ports();
    let mut depth = 0;
    while !frontier.is_empty() {
        depth += 1;
        let mut next = Vec::new();
        for n in frontier {
            for p in topology.node_ports(n) {
                let far = ports[ports[p as usize].peer.index()].node;
                if tier[far.index()] == u32::MAX {
                    tier[far.index()] = depth;
                    next.push(far);
                }
            }
        }
        frontier = next;
    }
    tier
}
