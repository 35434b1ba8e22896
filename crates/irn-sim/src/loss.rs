//! Lossy links: a packet lost on the wire, at random, apart from any buffer drop.
//!
//! A link may lose each packet it carries with some probability (the ns-3 topology files'
//! `error_rate`, `[topology] loss_rate`). The packet still occupies the link: it is serialized
//! and propagates, and vanishes at the far end as a frame failing its CRC would, so it is counted
//! as a *link loss*, never as a switch drop. What travels on the link can be lost: data packets
//! and the transports' ACKs, NACKs and CNPs. Link-level frames (PFC/PAUSE, credit updates) are
//! not packets on the link in irn (they preempt data and travel as events of their own), and
//! they are never lost: a lost XON would hang a lossless network, which is a failure of another
//! kind than the random bit errors modelled here.
//!
//! Each direction of a link draws from its own stream ([`Purpose::Faults`], indexed by the
//! sending port), one draw per packet in the order the packets leave that port. So whether the
//! n-th packet on a link is lost depends on the seed and n alone: not on other links' traffic,
//! on the order events of other links happen in, nor on threads.
//!
//! A run without loss keeps no `LossDraw` at all, and its event loop is compiled without the
//! arrival's loss check (`Trace::LOSS` in `sim/trace.rs`).

use crate::ids::{NodeId, PortId};
use crate::rng::{stream_seed, Purpose, SplitMix};
use crate::topology::Topology;

/// Per port (one direction of a link): the probability that a packet sent out of it is lost
/// on the wire. Empty when no link loses anything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LinkLoss {
    per_port: Vec<f64>,
}

impl LinkLoss {
    /// No loss anywhere.
    pub fn none() -> Self {
        LinkLoss::default()
    }

    /// Every link of `topology`, both directions, loses packets with probability `rate`.
    pub fn uniform(topology: &Topology, rate: f64) -> Self {
        let mut loss = LinkLoss::none();
        if rate > 0.0 {
            loss.per_port = vec![rate; topology.ports().len()];
        }
        loss
    }

    /// Link `i` of `topology.links()` loses packets with probability `rates[i]`, both
    /// directions.
    pub fn per_link(topology: &Topology, rates: &[f64]) -> Self {
        let mut loss = LinkLoss::none();
        if rates.iter().all(|&rate| rate == 0.0) {
            return loss;
        }
        for (&rate, (a, b)) in rates.iter().zip(every_link_ports(topology)) {
            if rate > 0.0 {
                loss.set(topology, a, rate);
                loss.set(topology, b, rate);
            }
        }
        loss
    }

    /// Each link's loss probability, in the order of `topology.links()`: what an ns-3
    /// topology file's `error_rate` holds. Both directions of a link lose alike (every way of
    /// making a `LinkLoss` but [`LinkLoss::set`] of one port says so); this is the rate of
    /// the link's `a` end.
    pub fn per_link_rates(&self, topology: &Topology) -> Vec<f64> {
        every_link_ports(topology)
            .into_iter()
            .map(|(a, _)| self.rate(a))
            .collect()
    }

    /// Packets sent out of port `p` are lost with probability `rate` (0 ≤ `rate` < 1).
    pub fn set(&mut self, topology: &Topology, p: PortId, rate: f64) {
        debug_assert!((0.0..1.0).contains(&rate), "loss rate {rate}");
        if self.per_port.is_empty() {
            if rate == 0.0 {
                return;
            }
            self.per_port = vec![0.0; topology.ports().len()];
        }
        self.per_port[p.index()] = rate;
    }

    /// No link loses anything.
    pub fn is_none(&self) -> bool {
        self.per_port.iter().all(|&r| r == 0.0)
    }

    /// The probability a packet sent out of `p` is lost.
    pub fn rate(&self, p: PortId) -> f64 {
        self.per_port.get(p.index()).copied().unwrap_or(0.0)
    }
}

/// The two ports of link `i` of `topology.links()`, the first at its `a` end: a node's ports
/// are numbered in the order its links were given ([`Topology::from_links`]).
pub fn link_ports(topology: &Topology, i: usize) -> (PortId, PortId) {
    let links = topology.links();
    let target = links[i];
    let nth = |node| {
        links[..i]
            .iter()
            .filter(|l| l.a == node || l.b == node)
            .count() as u32
    };
    let port = |node| PortId(topology.node_ports(node).start + nth(node));
    (port(target.a), port(target.b))
}

/// [`link_ports`] of every link of `topology.links()`, in their order, in one pass.
pub fn every_link_ports(topology: &Topology) -> Vec<(PortId, PortId)> {
    let mut taken = vec![0u32; topology.node_count()];
    let mut port = |node: NodeId| {
        let nth = taken[node.index()];
        taken[node.index()] += 1;
        PortId(topology.node_ports(node).start + nth)
    };
    topology
        .links()
        .iter()
        .map(|l| (port(l.a), port(l.b)))
        .collect()
}

/// The draws of one direction of a link at run time, and what it lost.
#[derive(Debug, Clone)]
pub(crate) struct LossDraw {
    /// A packet is lost when its draw is below this: the rate × 2⁶⁴; 0 for a clean link,
    /// which then draws nothing.
    threshold: u64,
    rng: SplitMix,
    /// Packets this direction has lost so far.
    pub lost: u64,
}

impl LossDraw {
    /// Port `p`'s draws under `loss`, seeded from the run's `seed`.
    pub fn new(seed: u64, p: PortId, loss: &LinkLoss) -> Self {
        // `as` saturates: a rate just below 1 gives at most u64::MAX.
        let threshold = (loss.rate(p) * 2f64.powi(64)) as u64;
        LossDraw {
            threshold,
            rng: SplitMix::new(stream_seed(seed, Purpose::Faults, u64::from(p.0))),
            lost: 0,
        }
    }

    /// Whether the next packet on this link is lost (counted if it is).
    #[inline]
    pub fn next_lost(&mut self) -> bool {
        let lost = self.threshold != 0 && self.rng.next_u64() < self.threshold;
        self.lost += u64::from(lost);
        lost
    }
}

/// The losses of the first `packets` packets a port with loss `rate` sends under `seed`: what a
/// run must count, computed apart from the simulation (for tests and for checking by hand).
pub fn expected_losses(seed: u64, p: PortId, rate: f64, packets: u64) -> u64 {
    let mut loss = LinkLoss::none();
    loss.per_port = vec![0.0; p.index() + 1];
    loss.per_port[p.index()] = rate;
    let mut draw = LossDraw::new(seed, p, &loss);
    (0..packets).for_each(|_| {
        draw.next_lost();
    });
    draw.lost
}

#[cfg(test)]
mod tests {
    use super::*;
    use irn_core::{Bandwidth, Duration};

    #[test]
    fn link_ports_follow_the_link_order() {
        let (rate, delay) = (Bandwidth::from_gbps(40), Duration::from_us(1));
        for topo in [
            Topology::star(3, rate, delay).unwrap(),
            Topology::fat_tree(4, rate, delay).unwrap(),
        ] {
            let every = every_link_ports(&topo);
            assert_eq!(every.len(), topo.links().len());
            for (i, &ports) in every.iter().enumerate() {
                let (a, b) = link_ports(&topo, i);
                assert_eq!(ports, (a, b));
                let ports = topo.ports();
                assert_eq!(ports[a.index()].peer, b);
                assert_eq!(ports[b.index()].peer, a);
                assert_eq!(ports[a.index()].node, topo.links()[i].a);
                assert_eq!(ports[b.index()].node, topo.links()[i].b);
            }
        }
    }

    #[test]
    fn the_loss_frequency_matches_the_rate() {
        let lost = expected_losses(9, PortId(3), 0.01, 1_000_000);
        assert!((9_700..10_300).contains(&lost), "{lost}");
        assert_eq!(expected_losses(9, PortId(3), 0.0, 1000), 0);
    }

    #[test]
    fn one_rate_or_none() {
        let topo = Topology::star(2, Bandwidth::from_gbps(40), Duration::from_us(1)).unwrap();
        assert!(LinkLoss::uniform(&topo, 0.0).is_none());
        assert!(LinkLoss::per_link(&topo, &[0.0, 0.0]).is_none());
        let one = LinkLoss::per_link(&topo, &[0.0, 0.5]);
        let (a, b) = link_ports(&topo, 1);
        assert_eq!((one.rate(a), one.rate(b)), (0.5, 0.5));
        let (c, _) = link_ports(&topo, 0);
        assert_eq!(one.rate(c), 0.0);
    }
}
