//! Fabrics of AI clusters: the three-tier Clos of large datacenters and the rail-optimized
//! fabric of GPU clusters.
//!
//! **Three-tier Clos** ([`Topology::clos3`]): `pods` pods, each a two-tier leaf-spine of
//! `leaves` leaves (each with `hosts_per_leaf` hosts) and `spines` spines, every leaf linked to
//! every spine of its pod; above them `spines` planes of `super_spines` super-spines, spine `s`
//! of every pod linked to every super-spine of plane `s`. Each tier's oversubscription is
//! set by its port split: a leaf's `hosts_per_leaf` down to `spines` up, a spine's `leaves`
//! down to `super_spines` up. A super-spine has one port per pod.
//!
//! **Rail-optimized** ([`Topology::rail`]): `groups` groups of `servers` servers with `rails`
//! NICs each (one host per NIC, as a GPU has its own NIC). NIC `i` of every server of a group
//! hangs off the group's rail leaf `i`, so a collective among the same GPU index of every
//! server of a group crosses one switch; every rail leaf is linked to every one of `spines`
//! spines, which join the rails and the groups.
//!
//! Shortest paths in both go up to the lowest common tier and down again: they never turn up
//! after going down, so PFC cannot deadlock on them (no cycle of links waits on another).
//!
//! Numbering, as the other builders: hosts first, then switches tier by tier, lowest first.
//! Three-tier: hosts pod-major then leaf-major; leaves pod-major; spines pod-major;
//! super-spines plane-major. Rail: hosts group-major, then server-major (a server's NICs are
//! consecutive hosts: host `(g * servers + s) * rails + i`); leaves group-major then by rail;
//! then the spines. A switch lists its down-links first, in ascending neighbour order.

use irn_core::time::{Bandwidth, Duration};

use super::{LinkSpec, NodeKind, TierRun, Topology, TopologyError, MAX_SWITCH_PORTS};
use crate::ids::NodeId;

/// The counts of a three-tier Clos ([`Topology::clos3`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clos3 {
    pub pods: u32,
    /// Leaves per pod.
    pub leaves: u32,
    pub hosts_per_leaf: u32,
    /// Spines per pod, and planes of super-spines.
    pub spines: u32,
    /// Super-spines per plane.
    pub super_spines: u32,
}

/// The counts of a rail-optimized fabric ([`Topology::rail`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rail {
    pub groups: u32,
    /// Servers per group.
    pub servers: u32,
    /// NICs per server, and rail leaves per group.
    pub rails: u32,
    pub spines: u32,
}

/// Links at host rate `host` (host to leaf) and `fabric` (between switches), all with `delay`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClosLinks {
    pub host: Bandwidth,
    pub fabric: Bandwidth,
    pub delay: Duration,
}

impl Topology {
    /// A three-tier Clos (see the module docs). Every count must be at least 1 and every switch
    /// have at most [`MAX_SWITCH_PORTS`] ports: a leaf `hosts_per_leaf + spines`, a spine
    /// `leaves + super_spines`, a super-spine `pods`.
    pub fn clos3(c: Clos3, links: ClosLinks) -> Result<Topology, TopologyError> {
        let counts = [
            ("pod", c.pods),
            ("leaf per pod", c.leaves),
            ("host per leaf", c.hosts_per_leaf),
            ("spine per pod", c.spines),
            ("super-spine per plane", c.super_spines),
        ];
        check_counts("clos3", &counts)?;
        let leaves = u64::from(c.pods) * u64::from(c.leaves);
        let hosts = leaves * u64::from(c.hosts_per_leaf);
        let spines = u64::from(c.pods) * u64::from(c.spines);
        let supers = u64::from(c.spines) * u64::from(c.super_spines);
        // Radix checks first: with every switch within it, the counts below fit in u32.
        check_ports(hosts, u64::from(c.hosts_per_leaf) + u64::from(c.spines))?;
        check_ports(
            hosts + leaves,
            u64::from(c.leaves) + u64::from(c.super_spines),
        )?;
        check_ports(hosts + leaves + spines, u64::from(c.pods))?;
        let switches = leaves + spines + supers;
        super::routing::check_size(switches as usize, leaves as usize)?;
        let pod_links = u64::from(c.leaves) + u64::from(c.super_spines);
        super::routing::check_search(leaves as usize, switches as usize, spines * pod_links)?;
        let (hosts, leaves, spines, supers) =
            (hosts as u32, leaves as u32, spines as u32, supers as u32);
        let leaf = |pod: u32, l: u32| NodeId(hosts + pod * c.leaves + l);
        let spine = |pod: u32, s: u32| NodeId(hosts + leaves + pod * c.spines + s);
        let super_spine =
            |plane: u32, x: u32| NodeId(hosts + leaves + spines + plane * c.super_spines + x);

        let mut kinds = vec![NodeKind::Host; hosts as usize];
        kinds.resize(
            (hosts + leaves + spines + supers) as usize,
            NodeKind::Switch,
        );
        let link = |a, b, rate| LinkSpec {
            a,
            b,
            rate,
            delay: links.delay,
        };
        let mut all = Vec::new();
        for h in 0..hosts {
            let l = h / c.hosts_per_leaf;
            all.push(link(
                NodeId(h),
                leaf(l / c.leaves, l % c.leaves),
                links.host,
            ));
        }
        for pod in 0..c.pods {
            for l in 0..c.leaves {
                for s in 0..c.spines {
                    all.push(link(leaf(pod, l), spine(pod, s), links.fabric));
                }
            }
        }
        for pod in 0..c.pods {
            for s in 0..c.spines {
                for x in 0..c.super_spines {
                    all.push(link(spine(pod, s), super_spine(s, x), links.fabric));
                }
            }
        }
        Ok(Topology::from_links(kinds, all)?.with_tier_runs(vec![
            tier("leaf", leaves),
            tier("spine", spines),
            tier("super-spine", supers),
        ]))
    }

    /// A rail-optimized fabric (see the module docs). Every count must be at least 1, with 2
    /// hosts in all, and every switch have at most [`MAX_SWITCH_PORTS`] ports: a rail leaf
    /// `servers + spines`, a spine `groups * rails`.
    pub fn rail(r: Rail, links: ClosLinks) -> Result<Topology, TopologyError> {
        let counts = [
            ("group", r.groups),
            ("server per group", r.servers),
            ("rail", r.rails),
            ("spine", r.spines),
        ];
        check_counts("rail", &counts)?;
        let leaves = u64::from(r.groups) * u64::from(r.rails);
        let hosts = leaves * u64::from(r.servers);
        check_ports(hosts, u64::from(r.servers) + u64::from(r.spines))?;
        check_ports(hosts + leaves, leaves)?;
        let switches = (leaves + u64::from(r.spines)) as usize;
        super::routing::check_size(switches, leaves as usize)?;
        super::routing::check_search(leaves as usize, switches, leaves * u64::from(r.spines))?;
        let (hosts, leaves) = (hosts as u32, leaves as u32);
        let leaf = |g: u32, i: u32| NodeId(hosts + g * r.rails + i);
        let spine = |s: u32| NodeId(hosts + leaves + s);

        let mut kinds = vec![NodeKind::Host; hosts as usize];
        kinds.resize((hosts + leaves + r.spines) as usize, NodeKind::Switch);
        let link = |a, b, rate| LinkSpec {
            a,
            b,
            rate,
            delay: links.delay,
        };
        let mut all = Vec::new();
        for h in 0..hosts {
            let (server, nic) = (h / r.rails, h % r.rails);
            all.push(link(NodeId(h), leaf(server / r.servers, nic), links.host));
        }
        for l in 0..leaves {
            for s in 0..r.spines {
                all.push(link(NodeId(hosts + l), spine(s), links.fabric));
            }
        }
        Ok(Topology::from_links(kinds, all)?
            .with_tier_runs(vec![tier("rail", leaves), tier("spine", r.spines)]))
    }
}

/// A run of `switches` switches of tier `name`.
fn tier(name: &'static str, switches: u32) -> TierRun {
    TierRun {
        site: None,
        name,
        switches,
    }
}

/// Fails on the first count of zero.
fn check_counts(kind: &'static str, counts: &[(&'static str, u32)]) -> Result<(), TopologyError> {
    match counts.iter().find(|c| c.1 == 0) {
        Some(&(what, _)) => Err(TopologyError::TierEmpty { kind, what }),
        None => Ok(()),
    }
}

/// Fails if the switch numbered `first` (the first of its tier) would have more than
/// [`MAX_SWITCH_PORTS`] ports.
fn check_ports(first: u64, ports: u64) -> Result<(), TopologyError> {
    if ports > MAX_SWITCH_PORTS as u64 {
        return Err(TopologyError::TooManyPorts {
            switch: NodeId(first.min(u64::from(u32::MAX)) as u32),
            ports: ports as usize,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::HostIdx;

    const LINKS: ClosLinks = ClosLinks {
        host: Bandwidth::from_gbps(100),
        fabric: Bandwidth::from_gbps(400),
        delay: Duration::from_us(1),
    };

    /// The nodes a lone packet visits from `src` to `dst`, first candidates all the way.
    fn walk(t: &Topology, src: u32, dst: u32) -> Vec<u32> {
        let node = |p: crate::ids::PortId| t.ports()[t.ports()[p.index()].peer.index()].node;
        let mut p = t.host_port(HostIdx(src));
        let mut at = vec![];
        loop {
            let n = node(p);
            at.push(n.0);
            if n == t.host_node(HostIdx(dst)) {
                return at;
            }
            p = t.next_hops(n, HostIdx(dst))[0];
        }
    }

    /// 2 pods of 2 leaves of 2 hosts, 2 spines per pod, 3 super-spines per plane: hosts 0..8,
    /// leaves 8..12, spines 12..16, super-spines 16..22 (plane 0: 16..19, plane 1: 19..22).
    fn small_clos3() -> Topology {
        let c = Clos3 {
            pods: 2,
            leaves: 2,
            hosts_per_leaf: 2,
            spines: 2,
            super_spines: 3,
        };
        Topology::clos3(c, LINKS).unwrap()
    }

    #[test]
    fn clos3_counts_ports_and_tiers() {
        let t = small_clos3();
        assert_eq!((t.hosts().len(), t.switches().len()), (8, 14));
        let ports = |n: u32| t.node_ports(NodeId(n)).len();
        assert_eq!([ports(8), ports(12), ports(16)], [4, 5, 2]);
        assert_eq!(t.node_label(NodeId(9)).to_string(), "leaf 1");
        assert_eq!(t.node_label(NodeId(15)).to_string(), "spine 3");
        assert_eq!(t.node_label(NodeId(21)).to_string(), "super-spine 5");
        assert_eq!(t.max_path_switches(), 5);
    }

    #[test]
    fn clos3_routes_by_hand_checked_paths() {
        let t = small_clos3();
        // Same leaf: through it alone.
        assert_eq!(walk(&t, 0, 1), [8, 1]);
        // Same pod: leaf, its first spine, the other leaf.
        assert_eq!(walk(&t, 0, 2), [8, 12, 9, 2]);
        // Across pods: leaf 8, spine 12 (pod 0's first), super-spine 16 (plane 0's first),
        // spine 14 (pod 1's plane-0 spine), leaf 10, host 4.
        assert_eq!(walk(&t, 0, 4), [8, 12, 16, 14, 10, 4]);
        // ECMP: 2 spines up from a leaf, 3 super-spines up from a spine, one way down.
        let h4 = HostIdx(4);
        assert_eq!(t.next_hops(NodeId(8), h4).len(), 2);
        assert_eq!(t.next_hops(NodeId(12), h4).len(), 3);
        assert_eq!(t.next_hops(NodeId(16), h4).len(), 1);
        assert_eq!(t.next_hops(NodeId(14), h4).len(), 1);
        assert_eq!(t.path(HostIdx(0), h4).hops, 6);
    }

    /// 2 groups of 3 servers with 2 NICs, 2 spines: hosts 0..12 (server `s`'s NICs `2s` and
    /// `2s + 1`), rail leaves 12..16 (group 0: 12 rail 0, 13 rail 1), spines 16, 17.
    fn small_rail() -> Topology {
        let r = Rail {
            groups: 2,
            servers: 3,
            rails: 2,
            spines: 2,
        };
        Topology::rail(r, LINKS).unwrap()
    }

    #[test]
    fn rail_puts_each_nic_on_its_rail_leaf() {
        let t = small_rail();
        assert_eq!((t.hosts().len(), t.switches().len()), (12, 6));
        let ports = |n: u32| t.node_ports(NodeId(n)).len();
        assert_eq!([ports(12), ports(16)], [5, 4]);
        // NIC 0 of servers 0..3 on leaf 12; NIC 1 of server 4 (host 9) on leaf 15.
        assert_eq!(walk(&t, 0, 4), [12, 4]);
        assert_eq!(walk(&t, 9, 11), [15, 11]);
        assert_eq!(t.node_label(NodeId(15)).to_string(), "rail 3");
        assert_eq!(t.node_label(NodeId(17)).to_string(), "spine 1");
    }

    #[test]
    fn rail_crosses_a_spine_between_rails_and_groups() {
        let t = small_rail();
        // Two NICs of one server: rail 0 up to the first spine, down to rail 1.
        assert_eq!(walk(&t, 0, 1), [12, 16, 13, 1]);
        // The same rail in the other group.
        assert_eq!(walk(&t, 0, 6), [12, 16, 14, 6]);
        assert_eq!(t.next_hops(NodeId(12), HostIdx(6)).len(), 2);
        assert_eq!(t.max_path_switches(), 3);
    }

    #[test]
    fn empty_tiers_and_wide_switches_are_refused() {
        let c = Clos3 {
            pods: 0,
            ..Clos3 {
                pods: 1,
                leaves: 1,
                hosts_per_leaf: 1,
                spines: 1,
                super_spines: 1,
            }
        };
        let e = Topology::clos3(c, LINKS).unwrap_err();
        assert_eq!(e.to_string(), "clos3: there must be at least 1 pod");
        let r = Rail {
            groups: 2,
            servers: 500,
            rails: 1,
            spines: 13,
        };
        let e = Topology::rail(r, LINKS).unwrap_err();
        assert!(e.to_string().contains("has 513 ports"), "{e}");
    }

    /// A fabric whose routing searches would take minutes is refused before it is built, with
    /// the count: 9,000 leaves' searches over 28,000 switches and 1.8 M links (a first run of
    /// it took almost five minutes and 2 GB to validate). A fabric just below runs.
    #[test]
    fn fabrics_whose_routing_would_take_minutes_are_refused() {
        let c = Clos3 {
            pods: 90,
            leaves: 100,
            hosts_per_leaf: 2,
            spines: 100,
            super_spines: 100,
        };
        let e = Topology::clos3(c, LINKS).unwrap_err().to_string();
        let want = "9000 searches over 28000 switches and 1800000 switch-to-switch links, \
                    32652000000 steps; at most 8589934592";
        assert!(e.contains(want), "{e}");
        let r = Rail {
            groups: 64,
            servers: 256,
            rails: 8,
            spines: 256,
        };
        // 512 leaves x (768 switches + 2 x 131,072 links): 134 M steps.
        assert!(Topology::rail(r, LINKS).is_ok());
    }
}
