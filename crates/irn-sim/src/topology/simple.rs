//! Small networks whose behaviour can be worked out by hand: a star (n hosts on one switch)
//! and a dumbbell (two switches joined by one bottleneck link). They back the simulator's
//! hand-checkable tests (DESIGN.md, "Tests") and single-bottleneck experiments.

use irn_core::time::{Bandwidth, Duration};

use super::{LinkSpec, NodeKind, Topology, TopologyError, MAX_SWITCH_PORTS};
use crate::ids::NodeId;

impl Topology {
    /// `hosts` hosts on one switch, every link at `rate` and `delay`. Hosts are nodes
    /// `0..hosts` (host `i`'s port is `PortId(i)`), the switch is node `hosts`, and its port
    /// `i` leads to host `i`. Needs 2 to [`MAX_SWITCH_PORTS`] hosts.
    pub fn star(hosts: u32, rate: Bandwidth, delay: Duration) -> Result<Topology, TopologyError> {
        // Checked before allocating, so a huge count fails fast instead of exhausting memory.
        if hosts as usize > MAX_SWITCH_PORTS {
            return Err(TopologyError::TooManyPorts {
                switch: NodeId(hosts),
                ports: hosts as usize,
            });
        }
        let switch = NodeId(hosts);
        let mut kinds = vec![NodeKind::Host; hosts as usize];
        kinds.push(NodeKind::Switch);
        let links = (0..hosts)
            .map(|h| LinkSpec {
                a: NodeId(h),
                b: switch,
                rate,
                delay,
            })
            .collect();
        Topology::from_links(kinds, links)
    }

    /// Two switches joined by one link of rate `bottleneck`; `left` hosts on the first switch,
    /// `right` on the second, their links at `rate`. Every link has delay `delay`.
    ///
    /// Numbering: left hosts `0..left`, right hosts `left..left + right`, then the left switch
    /// (node `left + right`) and the right switch. Each switch's host ports come first, the
    /// bottleneck port last. Each side takes at most [`MAX_SWITCH_PORTS`]` - 1` hosts.
    pub fn dumbbell(
        left: u32,
        right: u32,
        rate: Bandwidth,
        bottleneck: Bandwidth,
        delay: Duration,
    ) -> Result<Topology, TopologyError> {
        let hosts = left as usize + right as usize;
        for (side, n) in [(0, left), (1, right)] {
            if n as usize + 1 > MAX_SWITCH_PORTS {
                return Err(TopologyError::TooManyPorts {
                    switch: NodeId((hosts + side) as u32),
                    ports: n as usize + 1,
                });
            }
        }
        let ls = NodeId(hosts as u32);
        let rs = NodeId(hosts as u32 + 1);
        let mut kinds = vec![NodeKind::Host; hosts];
        kinds.extend([NodeKind::Switch; 2]);
        let mut links: Vec<LinkSpec> = (0..hosts as u32)
            .map(|h| LinkSpec {
                a: NodeId(h),
                b: if h < left { ls } else { rs },
                rate,
                delay,
            })
            .collect();
        links.push(LinkSpec {
            a: ls,
            b: rs,
            rate: bottleneck,
            delay,
        });
        Topology::from_links(kinds, links)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{HostIdx, PortId};

    const RATE: Bandwidth = Bandwidth::from_gbps(40);
    const DELAY: Duration = Duration::from_us(1);

    #[test]
    fn star_of_two_is_hand_checkable() {
        let t = Topology::star(2, RATE, DELAY).unwrap();
        assert_eq!(t.node_count(), 3);
        assert_eq!(t.switches(), &[NodeId(2)]);
        assert_eq!(t.node_ports(NodeId(2)), 2..4);

        let p = t.path(HostIdx(0), HostIdx(1));
        assert_eq!(p.hops, 2);
        assert_eq!(p.propagation, Duration::from_us(2));
        assert_eq!(p.bottleneck, RATE);
        assert_eq!(p.rates, vec![RATE, RATE]);
        assert_eq!(t.max_path_propagation(), Duration::from_us(2));

        for h in 0..2 {
            let host_port = t.host_port(HostIdx(h));
            let switch_side = t.ports()[host_port.index()].peer;
            assert_eq!(t.next_hops(NodeId(2), HostIdx(h)), &[switch_side]);
            assert_eq!(switch_side, PortId(2 + h));
        }
    }

    #[test]
    fn star_size_limits() {
        let err = Topology::star(1, RATE, DELAY).unwrap_err();
        assert_eq!(err, TopologyError::TooFewHosts { hosts: 1 });
        assert!(err.to_string().contains("1 host"), "{err}");
        assert!(Topology::star(512, RATE, DELAY).is_ok());
        let err = Topology::star(513, RATE, DELAY).unwrap_err();
        assert!(err.to_string().contains("513 ports"), "{err}");
        assert!(Topology::star(u32::MAX, RATE, DELAY).is_err());
    }

    #[test]
    fn path_to_self_is_empty() {
        let t = Topology::star(3, RATE, DELAY).unwrap();
        let p = t.path(HostIdx(1), HostIdx(1));
        assert_eq!(p.hops, 0);
        assert_eq!(p.propagation, Duration::ZERO);
        assert_eq!(p.bottleneck, RATE);
        assert!(p.rates.is_empty());
    }

    #[test]
    fn dumbbell_crossing_sees_the_bottleneck() {
        let slow = Bandwidth::from_gbps(10);
        let t = Topology::dumbbell(2, 3, RATE, slow, DELAY).unwrap();
        assert_eq!(t.hosts().len(), 5);
        assert_eq!(t.switches(), &[NodeId(5), NodeId(6)]);

        let cross = t.path(HostIdx(0), HostIdx(4));
        assert_eq!(cross.hops, 3);
        assert_eq!(cross.rates, vec![RATE, slow, RATE]);
        assert_eq!(cross.bottleneck, slow);
        assert_eq!(cross.propagation, Duration::from_us(3));

        let local = t.path(HostIdx(2), HostIdx(3));
        assert_eq!(local.hops, 2);
        assert_eq!(local.bottleneck, RATE);

        // The left switch sends everything for the right side over its last port.
        let bottleneck_port = PortId(t.node_ports(NodeId(5)).end - 1);
        for h in 2..5 {
            assert_eq!(t.next_hops(NodeId(5), HostIdx(h)), &[bottleneck_port]);
        }
        assert_eq!(t.max_path_propagation(), Duration::from_us(3));
        assert_eq!(t.min_host_rate(), RATE);
    }

    #[test]
    fn dumbbell_may_have_an_empty_side() {
        let t = Topology::dumbbell(0, 2, RATE, RATE, DELAY).unwrap();
        assert_eq!(t.path(HostIdx(0), HostIdx(1)).hops, 2);
        let err = Topology::dumbbell(512, 1, RATE, RATE, DELAY).unwrap_err();
        assert!(err.to_string().contains("513 ports"), "{err}");
    }
}
