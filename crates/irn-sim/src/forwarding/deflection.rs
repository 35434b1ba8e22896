//! DIBS deflection (Zarifis et al., EuroSys'14; Eunomia §5.5): a data packet whose output has
//! no room leaves by another switch-facing port that has room instead of being dropped, and
//! finds its way from wherever it lands. Deflection reorders a flow's packets, which is why
//! Eunomia pairs it with an ordering layer.
//!
//! The run-time state is a list of each switch's switch-facing ports, one random generator per
//! switch and the counts: it exists only when deflection is configured, and the packet path
//! reaches it only for a packet its switch would otherwise drop.

use crate::rng::{stream_seed, Purpose, SplitMix};
use crate::topology::{NodeKind, Topology, MAX_SWITCH_PORTS};

/// `[switch] deflection = "dibs"`: deflect instead of dropping, up to `ttl` times per packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deflection {
    /// Deflections a packet may take; the next one drops it instead.
    pub ttl: u8,
}

impl Deflection {
    /// DIBS's TTL in its paper and in Eunomia's evaluation: 250.
    pub const DIBS: Deflection = Deflection { ttl: 250 };
}

/// What deflecting needs at run time, for every switch at once.
#[derive(Debug)]
pub struct Deflector {
    ttl: u8,
    /// Each switch's switch-facing local ports: `ports[starts[s]..starts[s + 1]]`.
    ports: Vec<u16>,
    starts: Vec<u32>,
    /// One generator per switch, so one switch's draws never shift another's.
    rngs: Vec<SplitMix>,
    /// Packets deflected (each deflection counted once).
    pub deflections: u64,
    /// Packets dropped because they had been deflected `ttl` times.
    pub ttl_drops: u64,
}

impl Deflector {
    pub fn new(cfg: Deflection, topology: &Topology, seed: u64) -> Self {
        let mut ports = Vec::new();
        let mut starts = vec![0];
        let all = topology.ports();
        for &node in topology.switches() {
            let range = topology.node_ports(node);
            let first = range.start;
            ports.extend(
                range
                    .filter(|&p| {
                        topology.kind(all[all[p as usize].peer.index()].node) == NodeKind::Switch
                    })
                    .map(|p| (p - first) as u16),
            );
            starts.push(ports.len() as u32);
        }
        let rngs = (0..topology.switches().len())
            .map(|s| SplitMix::new(stream_seed(seed, Purpose::Deflection, s as u64)))
            .collect();
        Deflector {
            ttl: cfg.ttl,
            ports,
            starts,
            rngs,
            deflections: 0,
            ttl_drops: 0,
        }
    }

    /// Whether a packet deflected `times` times already may be deflected again.
    #[inline]
    pub fn may_deflect(&self, times: u8) -> bool {
        times < self.ttl
    }

    /// Switch `s`'s switch-facing local ports other than `refused`, in a uniformly random
    /// order, into `order`; how many. Tried in this order, the first with room is a uniform
    /// choice among those with room, as DIBS picks.
    pub fn candidates(
        &mut self,
        s: usize,
        refused: usize,
        order: &mut [u16; MAX_SWITCH_PORTS],
    ) -> usize {
        let mine = &self.ports[self.starts[s] as usize..self.starts[s + 1] as usize];
        let mut n = 0;
        for &p in mine.iter().filter(|&&p| usize::from(p) != refused) {
            order[n] = p;
            n += 1;
        }
        // Fisher-Yates.
        let rng = &mut self.rngs[s];
        for i in (1..n).rev() {
            order.swap(i, rng.below(i + 1));
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use irn_core::time::{Bandwidth, Duration};

    use super::*;
    use crate::ids::NodeId;
    use crate::topology::LinkSpec;

    /// Hosts 0, 1 on switch 2; switch 2 linked to switches 3 and 4; host 5 on switch 3.
    fn net() -> Topology {
        let link = |a, b| LinkSpec {
            a: NodeId(a),
            b: NodeId(b),
            rate: Bandwidth::from_gbps(10),
            delay: Duration::from_us(1),
        };
        let kinds = [0, 0, 1, 1, 1, 0].map(|k| {
            if k == 0 {
                NodeKind::Host
            } else {
                NodeKind::Switch
            }
        });
        Topology::from_links(
            kinds.to_vec(),
            vec![
                link(0, 2),
                link(1, 2),
                link(2, 3),
                link(2, 4),
                link(3, 5),
                link(3, 4),
            ],
        )
        .unwrap()
    }

    #[test]
    fn candidates_are_the_other_switch_facing_ports_in_random_order() {
        let t = net();
        let mut d = Deflector::new(Deflection::DIBS, &t, 1);
        let mut order = [0; MAX_SWITCH_PORTS];
        // Switch 2 (index 0): locals 0, 1 face hosts, 2 and 3 face switches.
        let mut seen = [0; 2];
        for _ in 0..200 {
            let n = d.candidates(0, 9, &mut order);
            assert_eq!(n, 2);
            let mut got = order[..2].to_vec();
            seen[usize::from(got[0] == 3)] += 1;
            got.sort_unstable();
            assert_eq!(got, [2, 3], "never a host port");
        }
        assert!(seen.iter().all(|&c| c > 70), "both orders: {seen:?}");
        // The refused output is never offered.
        assert_eq!(d.candidates(0, 2, &mut order), 1);
        assert_eq!(order[0], 3);
        // Switch 3 (index 1): locals 0 (to 2), 1 (host 5), 2 (to 4).
        let n = d.candidates(1, 9, &mut order);
        let mut got = order[..n].to_vec();
        got.sort_unstable();
        assert_eq!(got, [0, 2]);
    }

    #[test]
    fn the_ttl_bounds_deflections() {
        let d = Deflector::new(Deflection { ttl: 2 }, &net(), 1);
        assert!(d.may_deflect(0) && d.may_deflect(1));
        assert!(!d.may_deflect(2));
    }
}
