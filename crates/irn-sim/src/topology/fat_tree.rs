//! The Al-Fares k-ary fat-tree, the IRN paper's datacenter (MODEL.md §2; k = 6 by default,
//! also 8 and 10).
//!
//! k pods, each with k/2 edge and k/2 aggregation switches; each edge switch has k/2 hosts and
//! links to every aggregation switch of its pod; aggregation switch `a` of every pod links to
//! core switches `a*k/2 .. (a+1)*k/2`. Every switch has k ports: k/2 down, k/2 up.
//!
//! Numbering (so that tests and users can reason about ids): hosts first (`NodeId`s
//! `0..k^3/4`, hosts of the same edge switch consecutive, pods in order), then edge, aggregation
//! and core switches. Since hosts come first, host `i`'s NIC port is `PortId(i)`. A switch's
//! ports are its down-links first, then its up-links, each in ascending neighbour order.
//!
//! Its switches route by arithmetic on that numbering (a host's pod and edge switch, a
//! switch's tier), not by a routing table: none is built (what routing reconverges to after
//! link failures is a table of its own).

use irn_core::time::{Bandwidth, Duration};

use super::{LinkSpec, NodeKind, RoutingTable, TierRun, Topology, TopologyError, MAX_SWITCH_PORTS};
use crate::ids::NodeId;

impl Topology {
    /// Al-Fares k-ary fat-tree: k^3/4 hosts, k^2/2 edge, k^2/2 aggregation and k^2/4 core
    /// switches (k = 6: 54 hosts, 45 switches), every link at `rate` and `delay`. `k` must be
    /// even, at least 2 and at most [`MAX_SWITCH_PORTS`]. See the module docs for the numbering.
    pub fn fat_tree(k: u32, rate: Bandwidth, delay: Duration) -> Result<Topology, TopologyError> {
        let (kinds, links) = Self::fat_tree_wiring(k, rate, delay)?;
        let (half, edges) = (k / 2, k * k / 2);
        let tier = |name, switches| TierRun {
            site: None,
            name,
            switches,
        };
        let t = Topology::from_links_routed(kinds, links, |w| {
            Ok(RoutingTable::for_fat_tree(w, k, delay))
        })?;
        Ok(t.with_tier_runs(vec![
            tier("edge", edges),
            tier("agg", edges),
            tier("core", half * half),
        ]))
    }

    /// The nodes and links of [`fat_tree`](Self::fat_tree), before routing.
    fn fat_tree_wiring(
        k: u32,
        rate: Bandwidth,
        delay: Duration,
    ) -> Result<(Vec<NodeKind>, Vec<LinkSpec>), TopologyError> {
        if k < 2 || !k.is_multiple_of(2) {
            return Err(TopologyError::FatTreeK { k });
        }
        if k as usize > MAX_SWITCH_PORTS {
            return Err(TopologyError::FatTreeTooLarge { k });
        }
        let half = k / 2;
        let pods = k;
        let hosts = k * k * k / 4;
        let edges = k * k / 2;
        let aggs = edges;
        let cores = half * half;
        super::routing::check_size((edges + aggs + cores) as usize, edges as usize)?;

        let host = |pod: u32, edge: u32, i: u32| NodeId((pod * half + edge) * half + i);
        let edge = |pod: u32, e: u32| NodeId(hosts + pod * half + e);
        let agg = |pod: u32, a: u32| NodeId(hosts + edges + pod * half + a);
        let core = |c: u32| NodeId(hosts + edges + aggs + c);

        let mut kinds = vec![NodeKind::Host; hosts as usize];
        kinds.resize((hosts + edges + aggs + cores) as usize, NodeKind::Switch);

        let link = |a: NodeId, b: NodeId| LinkSpec { a, b, rate, delay };
        let mut links = Vec::with_capacity(3 * hosts as usize);
        // Layer by layer, so each switch lists its down-links before its up-links.
        for pod in 0..pods {
            for e in 0..half {
                for i in 0..half {
                    links.push(link(host(pod, e, i), edge(pod, e)));
                }
            }
        }
        for pod in 0..pods {
            for e in 0..half {
                for a in 0..half {
                    links.push(link(edge(pod, e), agg(pod, a)));
                }
            }
        }
        for pod in 0..pods {
            for a in 0..half {
                for j in 0..half {
                    links.push(link(agg(pod, a), core(a * half + j)));
                }
            }
        }
        Ok((kinds, links))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{HostIdx, PortId};

    const RATE: Bandwidth = Bandwidth::from_gbps(40);
    const DELAY: Duration = Duration::from_us(2);

    fn k6() -> Topology {
        Topology::fat_tree(6, RATE, DELAY).unwrap()
    }

    /// The first core switch's node id in a fat-tree of `k`.
    fn first_core(k: u32) -> u32 {
        k * k * k / 4 + k * k
    }

    #[test]
    fn k6_has_the_irn_default_size() {
        let t = k6();
        assert_eq!(t.hosts().len(), 54);
        assert_eq!(t.switches().len(), 45);
        assert_eq!(t.node_count(), 99);
        assert_eq!(t.links().len(), 162);
        assert_eq!(t.ports().len(), 2 * 162);
        for &s in t.switches() {
            assert_eq!(t.node_ports(s).len(), 6, "switch {s}");
            assert_eq!(t.kind(s), NodeKind::Switch);
        }
        for (i, &h) in t.hosts().iter().enumerate() {
            assert_eq!(h, NodeId(i as u32), "hosts are numbered first");
            assert_eq!(t.kind(h), NodeKind::Host);
            assert_eq!(t.host_index(h), Some(HostIdx(i as u32)));
            assert_eq!(t.host_port(HostIdx(i as u32)), PortId(i as u32));
            assert_eq!(t.node_ports(h).len(), 1);
        }
        assert_eq!(t.host_index(NodeId(54)), None);
    }

    #[test]
    fn larger_trees_of_the_robustness_sweep() {
        for (k, hosts, switches) in [(2, 2, 5), (8, 128, 80), (10, 250, 125)] {
            let t = Topology::fat_tree(k, RATE, DELAY).unwrap();
            assert_eq!(t.hosts().len(), hosts, "k = {k}");
            assert_eq!(t.switches().len(), switches, "k = {k}");
            assert_eq!(t.links().len(), 3 * hosts, "k = {k}");
            for &s in t.switches() {
                assert_eq!(t.node_ports(s).len(), k as usize, "k = {k}, switch {s}");
            }
            assert_eq!(t.max_path_propagation(), DELAY * 6, "k = {k}");
            assert_eq!(t.max_path_switches(), 5, "k = {k}");
        }
    }

    #[test]
    fn hosts_of_one_edge_switch_are_consecutive() {
        let t = k6();
        for h in 0..54u32 {
            let port = t.ports()[t.host_port(HostIdx(h)).index()];
            let edge = t.ports()[port.peer.index()].node;
            assert_eq!(edge, NodeId(54 + h / 3), "host {h}");
        }
    }

    #[test]
    fn ecmp_fan_out_per_layer() {
        let t = k6();
        let edge0 = NodeId(54); // hosts 0, 1, 2; pod 0 = hosts 0..9
        let agg0 = NodeId(54 + 18);
        let core0 = NodeId(first_core(6));

        // Edge switch: 1 way down to its own hosts, k/2 ways up otherwise.
        assert_eq!(t.next_hops(edge0, HostIdx(1)).len(), 1);
        assert_eq!(t.next_hops(edge0, HostIdx(5)).len(), 3, "same pod");
        assert_eq!(t.next_hops(edge0, HostIdx(40)).len(), 3, "other pod");
        // Its own host's port is the host link.
        let down = t.next_hops(edge0, HostIdx(1))[0];
        assert_eq!(
            t.ports()[t.ports()[down.index()].peer.index()].node,
            NodeId(1)
        );

        // Aggregation switch: 1 way down into its pod, k/2 ways up to other pods.
        assert_eq!(t.next_hops(agg0, HostIdx(0)).len(), 1);
        assert_eq!(t.next_hops(agg0, HostIdx(8)).len(), 1);
        assert_eq!(t.next_hops(agg0, HostIdx(40)).len(), 3);

        // Core switch: exactly one way to any host.
        for h in 0..54 {
            assert_eq!(t.next_hops(core0, HostIdx(h)).len(), 1, "host {h}");
        }
        // Candidates are sorted and belong to the switch.
        for &s in t.switches() {
            for h in 0..54 {
                let c = t.next_hops(s, HostIdx(h));
                assert!(c.windows(2).all(|w| w[0] < w[1]));
                assert!(c.iter().all(|p| t.node_ports(s).contains(&p.0)));
            }
        }
    }

    /// The routes computed from the numbering are the table's, entry by entry and in order
    /// (so ECMP's hash picks the same port), for every switch and host of trees up to k = 12;
    /// the table itself is not kept.
    #[test]
    fn computed_routes_are_the_tables() {
        for k in (2..=12).step_by(2) {
            let t = Topology::fat_tree(k, RATE, DELAY).unwrap();
            let (kinds, links) = Topology::fat_tree_wiring(k, RATE, DELAY).unwrap();
            let table = Topology::from_links(kinds, links).unwrap();
            // The computed routes' topology has no table (which outweighs the computed
            // routes' list of ports from k = 8 on), and the same longest path.
            assert!(k < 8 || t.heap_bytes() < table.heap_bytes(), "k = {k}");
            assert_eq!(t.max_path_propagation(), table.max_path_propagation());
            assert_eq!(t.max_path_switches(), table.max_path_switches());
            for row in 0..t.switches().len() {
                for h in 0..t.hosts().len() as u32 {
                    assert_eq!(
                        t.routing.next_hops_at_row(row, HostIdx(h)),
                        table.routing.looked_up(row, HostIdx(h)),
                        "k = {k}, switch row {row}, host {h}"
                    );
                }
            }
        }
    }

    #[test]
    fn path_lengths_by_locality() {
        let t = k6();
        let same_edge = t.path(HostIdx(0), HostIdx(2));
        assert_eq!(same_edge.hops, 2);
        assert_eq!(same_edge.propagation, Duration::from_us(4));

        let same_pod = t.path(HostIdx(0), HostIdx(8));
        assert_eq!(same_pod.hops, 4);
        assert_eq!(same_pod.propagation, Duration::from_us(8));

        let other_pod = t.path(HostIdx(0), HostIdx(53));
        assert_eq!(other_pod.hops, 6);
        assert_eq!(other_pod.propagation, Duration::from_us(12));
        assert_eq!(other_pod.bottleneck, RATE);
        assert_eq!(other_pod.rates, vec![RATE; 6]);

        assert_eq!(t.max_path_propagation(), Duration::from_us(12));
        assert_eq!(t.min_host_rate(), RATE);
    }

    #[test]
    fn bad_k_is_rejected_with_its_value() {
        for k in [0, 1, 5, 7] {
            let err = Topology::fat_tree(k, RATE, DELAY).unwrap_err();
            assert_eq!(err, TopologyError::FatTreeK { k });
            assert_eq!(
                err.to_string(),
                format!("fat-tree k = {k}: k must be even and at least 2")
            );
        }
        let err = Topology::fat_tree(514, RATE, DELAY).unwrap_err();
        assert!(err.to_string().contains("k = 514"), "{err}");
        assert!(err.to_string().contains("512"), "{err}");
        assert!(Topology::fat_tree(u32::MAX - 1, RATE, DELAY).is_err());
    }

    #[test]
    fn k16_routing_table_stays_small() {
        let t = Topology::fat_tree(16, RATE, DELAY).unwrap();
        assert_eq!(t.hosts().len(), 1024);
        assert_eq!(t.switches().len(), 320);
        assert!(t.heap_bytes() < 8 << 20, "{} bytes", t.heap_bytes());
    }

    /// Build time of the 1024-host fat-tree. Run with
    /// `cargo test --release -p irn-sim k16_build_time -- --ignored --nocapture`.
    #[test]
    #[ignore = "timing; run by hand in release mode"]
    fn k16_build_time() {
        let start = std::time::Instant::now();
        let t = Topology::fat_tree(16, RATE, DELAY).unwrap();
        let elapsed = start.elapsed();
        println!(
            "fat_tree(16): {} hosts, {} switches, built in {elapsed:?}, {} KiB",
            t.hosts().len(),
            t.switches().len(),
            t.heap_bytes() / 1024
        );
    }
}
