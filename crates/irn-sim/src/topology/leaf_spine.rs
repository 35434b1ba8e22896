//! A two-tier leaf-spine Clos, Eunomia's datacenter (its default is 8 leaves of 16 hosts and
//! 8 spines at 100 Gb/s, 2:1 oversubscribed), so users can build it without an ns-3 file.
//!
//! Every leaf has its own hosts and one link to every spine. Numbering (the same node order as
//! `data/topology/leaf_spine_128_100G_OS2.txt`, so host indices and node ids agree with that
//! file's flow files): hosts first, leaf-major (leaf `l`'s hosts are `l*hosts_per_leaf ..
//! (l+1)*hosts_per_leaf`), then the leaves, then the spines. Host `i`'s NIC port is
//! `PortId(i)`; a leaf's ports are its host links first, then its spine links in spine order;
//! a spine's ports lead to the leaves in leaf order.

use irn_core::time::{Bandwidth, Duration};

use super::{LinkSpec, NodeKind, TierRun, Topology, TopologyError, MAX_SWITCH_PORTS};
use crate::ids::NodeId;

impl Topology {
    /// `leaves` leaf switches with `hosts_per_leaf` hosts each (links at `host_rate`), every
    /// leaf linked once to each of `spines` spine switches (links at `spine_rate`); every link
    /// has delay `delay`. Needs at least 1 leaf, spine and host per leaf and 2 hosts in all; a
    /// leaf's `hosts_per_leaf + spines` and a spine's `leaves` ports are at most
    /// [`MAX_SWITCH_PORTS`]. See the module docs for the numbering.
    pub fn leaf_spine(
        leaves: u32,
        spines: u32,
        hosts_per_leaf: u32,
        host_rate: Bandwidth,
        spine_rate: Bandwidth,
        delay: Duration,
    ) -> Result<Topology, TopologyError> {
        for (what, n) in [
            ("leaf", leaves),
            ("spine", spines),
            ("host per leaf", hosts_per_leaf),
        ] {
            if n == 0 {
                return Err(TopologyError::LeafSpineEmpty { what });
            }
        }
        // Checked before allocating, so huge counts fail fast instead of exhausting memory.
        let hosts = u64::from(leaves) * u64::from(hosts_per_leaf);
        let leaf_ports = u64::from(hosts_per_leaf) + u64::from(spines);
        if leaf_ports > MAX_SWITCH_PORTS as u64 {
            return Err(TopologyError::TooManyPorts {
                switch: NodeId(hosts.min(u64::from(u32::MAX)) as u32),
                ports: leaf_ports as usize,
            });
        }
        if leaves as usize > MAX_SWITCH_PORTS {
            return Err(TopologyError::TooManyPorts {
                switch: NodeId((hosts + u64::from(leaves)).min(u64::from(u32::MAX)) as u32),
                ports: leaves as usize,
            });
        }
        // Both counts are at most 512 here, so nothing below overflows.
        let hosts = hosts as u32;
        let leaf = |l: u32| NodeId(hosts + l);
        let spine = |s: u32| NodeId(hosts + leaves + s);

        let mut kinds = vec![NodeKind::Host; hosts as usize];
        kinds.resize((hosts + leaves + spines) as usize, NodeKind::Switch);

        let mut links = Vec::with_capacity((hosts + leaves * spines) as usize);
        // Host links before spine links, so each leaf lists its down-links first.
        for h in 0..hosts {
            links.push(LinkSpec {
                a: NodeId(h),
                b: leaf(h / hosts_per_leaf),
                rate: host_rate,
                delay,
            });
        }
        for l in 0..leaves {
            for s in 0..spines {
                links.push(LinkSpec {
                    a: leaf(l),
                    b: spine(s),
                    rate: spine_rate,
                    delay,
                });
            }
        }
        let tier = |name, switches| TierRun {
            site: None,
            name,
            switches,
        };
        Ok(Topology::from_links(kinds, links)?
            .with_tier_runs(vec![tier("leaf", leaves), tier("spine", spines)]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{HostIdx, PortId};

    const HOST_RATE: Bandwidth = Bandwidth::from_gbps(100);
    const SPINE_RATE: Bandwidth = Bandwidth::from_gbps(400);
    const DELAY: Duration = Duration::from_us(1);

    fn build(leaves: u32, spines: u32, per_leaf: u32) -> Result<Topology, TopologyError> {
        Topology::leaf_spine(leaves, spines, per_leaf, HOST_RATE, SPINE_RATE, DELAY)
    }

    /// The node a port's link leads to.
    fn peer_node(t: &Topology, port: PortId) -> NodeId {
        t.ports()[t.ports()[port.index()].peer.index()].node
    }

    #[test]
    fn counts_ports_and_rates() {
        // 3 leaves of 4 hosts, 2 spines: hosts 0..12, leaves 12..15, spines 15..17.
        let t = build(3, 2, 4).unwrap();
        assert_eq!(t.hosts().len(), 12);
        assert_eq!(t.switches().len(), 5);
        assert_eq!(t.links().len(), 12 + 3 * 2);
        for l in 12..15 {
            let ports = t.node_ports(NodeId(l));
            assert_eq!(ports.len(), 6, "leaf {l}");
            for (i, p) in ports.map(PortId).enumerate() {
                let port = &t.ports()[p.index()];
                let want = if i < 4 { HOST_RATE } else { SPINE_RATE };
                assert_eq!(port.rate, want, "leaf {l} port {i}");
                assert_eq!(port.delay, DELAY);
            }
        }
        for s in 15..17 {
            let ports = t.node_ports(NodeId(s));
            assert_eq!(ports.len(), 3, "spine {s}");
            for (l, p) in ports.map(PortId).enumerate() {
                assert_eq!(
                    peer_node(&t, p),
                    NodeId(12 + l as u32),
                    "spine {s} port {l}"
                );
                assert_eq!(t.ports()[p.index()].rate, SPINE_RATE);
            }
        }
        for h in 0..12u32 {
            assert_eq!(t.hosts()[h as usize], NodeId(h), "hosts are numbered first");
            let nic = t.host_port(HostIdx(h));
            assert_eq!(
                peer_node(&t, nic),
                NodeId(12 + h / 4),
                "host {h}: leaf-major"
            );
            assert_eq!(t.ports()[nic.index()].rate, HOST_RATE);
        }
    }

    #[test]
    fn ecmp_fan_out() {
        let t = build(3, 2, 4).unwrap();
        let (leaf0, spine0) = (NodeId(12), NodeId(15));
        assert_eq!(
            t.next_hops(leaf0, HostIdx(1)).len(),
            1,
            "own host: straight down"
        );
        assert_eq!(
            t.next_hops(leaf0, HostIdx(5)).len(),
            2,
            "remote host: every spine"
        );
        let down = t.next_hops(spine0, HostIdx(9));
        assert_eq!(down.len(), 1, "a spine has one way down");
        assert_eq!(peer_node(&t, down[0]), NodeId(14));
        assert_eq!(t.max_path_propagation(), DELAY * 4);
        assert_eq!(t.max_path_switches(), 3);
    }

    #[test]
    fn one_leaf_or_one_spine() {
        let t = build(1, 1, 2).unwrap();
        assert_eq!((t.hosts().len(), t.switches().len()), (2, 2));
        let t = build(2, 1, 1).unwrap();
        assert_eq!(t.next_hops(NodeId(2), HostIdx(1)).len(), 1);
    }

    #[test]
    fn rejected_sizes() {
        let e = |l, s, h| build(l, s, h).unwrap_err().to_string();
        assert!(e(0, 2, 4).contains("at least 1 leaf"), "{}", e(0, 2, 4));
        assert!(e(2, 0, 4).contains("at least 1 spine"), "{}", e(2, 0, 4));
        assert!(
            e(2, 2, 0).contains("at least 1 host per leaf"),
            "{}",
            e(2, 2, 0)
        );
        assert!(e(1, 1, 1).contains("at least 2 hosts"), "{}", e(1, 1, 1));
        // Leaf 0 is node 2 * 508 = 1016: 508 host ports and 5 spine ports.
        assert!(
            e(2, 5, 508).contains("switch 1016 has 513 ports"),
            "{}",
            e(2, 5, 508)
        );
        // The first spine is node 513 + 513: one port per leaf.
        assert!(
            e(513, 1, 1).contains("switch 1026 has 513 ports"),
            "{}",
            e(513, 1, 1)
        );
        assert!(build(512, 1, 3).is_ok());
    }
}
