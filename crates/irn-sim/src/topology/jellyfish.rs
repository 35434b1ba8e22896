//! Jellyfish (Singla et al., NSDI'12): a random regular graph of switches, servers attached.
//!
//! Each switch has `ports` ports; its servers take some, the rest face other switches. The
//! graph is built as the paper does: join random pairs of switches that both have a free port
//! and are not yet linked, until no such pair is left; then, while free ports remain, break a
//! random existing link (x, y) and join its ends to the switches holding the free ports. Every
//! switch then uses all its ports, except one port when the switch-facing ports add up to an odd
//! number (a link needs two). The draws come from the scenario's seeded stream
//! ([`Purpose::Topology`]), so a seed names one graph; a disconnected result (possible when
//! switches have only 2 switch-facing ports: a union of cycles) is redrawn from the same stream,
//! and refused after `ATTEMPTS` tries.
//!
//! Numbering: hosts first (`0..hosts`), then the switches. Servers are spread evenly: every
//! switch has `hosts / switches` of them and the first `hosts % switches` one more, in host
//! order (switch 0 has hosts 0, 1, ..., then switch 1), so each switch lists its server ports
//! first.

use irn_core::time::{Bandwidth, Duration};
use rand::rngs::StdRng;
use rand::Rng;

use super::{LinkSpec, NodeKind, Topology, TopologyError, MAX_SWITCH_PORTS};
use crate::ids::NodeId;
use crate::rng::{stream, Purpose};

/// Tries at a connected graph before a seed is refused.
pub const ATTEMPTS: u32 = 100;

/// Random draws at a step before its valid choices are listed and one drawn among them: draws
/// are cheap while many choices are valid, the list only near the end.
const DRAWS: u32 = 64;

impl Topology {
    /// A Jellyfish of `switches` switches with `ports` ports each and `hosts` servers spread
    /// evenly over them (see the module docs), every link at `rate` and `delay`, its graph drawn
    /// from `seed`. Fails with [`TopologyError::Jellyfish`] on impossible parameters and
    /// [`TopologyError::JellyfishDisconnected`] when no connected graph was drawn in
    /// `ATTEMPTS` tries.
    pub fn jellyfish(
        switches: u32,
        ports: u32,
        hosts: u32,
        (rate, delay): (Bandwidth, Duration),
        seed: u64,
    ) -> Result<Topology, TopologyError> {
        let free = switch_ports(switches, ports, hosts)?;
        let mut rng = stream(seed, Purpose::Topology, 0);
        let graph = (0..ATTEMPTS)
            .map(|_| random_regular(&free, &mut rng))
            .find(|g| connected(switches as usize, g))
            .ok_or(TopologyError::JellyfishDisconnected { attempts: ATTEMPTS })?;
        let switch = |s: u32| NodeId(hosts + s);
        let mut kinds = vec![NodeKind::Host; hosts as usize];
        kinds.resize((hosts + switches) as usize, NodeKind::Switch);
        let mut links = Vec::with_capacity(hosts as usize + graph.len());
        let (base, extra) = (hosts / switches, hosts % switches);
        let mut h = 0;
        for s in 0..switches {
            for _ in 0..base + u32::from(s < extra) {
                links.push(LinkSpec {
                    a: NodeId(h),
                    b: switch(s),
                    rate,
                    delay,
                });
                h += 1;
            }
        }
        for &(a, b) in &graph {
            links.push(LinkSpec {
                a: switch(a),
                b: switch(b),
                rate,
                delay,
            });
        }
        Topology::from_links(kinds, links)
    }
}

/// Each switch's switch-facing ports, after checking the parameters can make a network.
fn switch_ports(switches: u32, ports: u32, hosts: u32) -> Result<Vec<u32>, TopologyError> {
    let refuse = |why: String| Err(TopologyError::Jellyfish { why });
    if switches < 3 {
        return refuse(format!("{switches} switches: at least 3 are needed"));
    }
    if ports as usize > MAX_SWITCH_PORTS {
        return refuse(format!("{ports} ports: at most {MAX_SWITCH_PORTS}"));
    }
    if hosts < 2 {
        return refuse(format!("{hosts} hosts: at least 2 are needed"));
    }
    let (base, extra) = (hosts / switches, hosts % switches);
    let most = base + u32::from(extra > 0);
    if ports < most + 2 {
        return refuse(format!(
            "{hosts} hosts on {switches} switches put {most} on a switch, leaving {} of its \
             {ports} ports for other switches; at least 2 are needed",
            ports.saturating_sub(most)
        ));
    }
    if ports - base > switches - 1 {
        return refuse(format!(
            "a switch with {base} hosts has {} ports for other switches, but there are only {} \
             other switches (no two links join the same pair)",
            ports - base,
            switches - 1
        ));
    }
    Ok((0..switches)
        .map(|s| ports - base - u32::from(s < extra))
        .collect())
}

/// One draw of the graph: switch pairs, each switch in at most `free[s]` of them, no self-loop,
/// no pair twice.
fn random_regular(free: &[u32], rng: &mut StdRng) -> Vec<(u32, u32)> {
    let mut g = Graph {
        free: free.to_vec(),
        adjacent: vec![Vec::new(); free.len()],
        links: Vec::new(),
    };
    // The switches with a free port, ascending, kept as links are drawn (collecting them for
    // every draw made a 4,096-switch graph of 512 ports take minutes).
    let mut open: Vec<u32> = (0..free.len() as u32)
        .filter(|&s| free[s as usize] > 0)
        .collect();
    while let Some((a, b)) = g.draw_pair(&open, rng) {
        g.join(a, b);
        for s in [a, b] {
            if g.free[s as usize] == 0 {
                if let Ok(i) = open.binary_search(&s) {
                    open.remove(i);
                }
            }
        }
    }
    while let Some((a, b)) = g.free_ends() {
        let Some(i) = g.draw_link_to_break(a, b, rng) else {
            break;
        };
        let (x, y) = g.links.swap_remove(i);
        g.forget(x, y);
        g.free[x as usize] += 1;
        g.free[y as usize] += 1;
        g.join(a, x);
        g.join(b, y);
    }
    g.links
}

/// The graph while it is drawn.
struct Graph {
    free: Vec<u32>,
    /// Each switch's neighbours (at most 64).
    adjacent: Vec<Vec<u32>>,
    links: Vec<(u32, u32)>,
}

impl Graph {
    fn linked(&self, a: u32, b: u32) -> bool {
        self.adjacent[a as usize].contains(&b)
    }

    fn join(&mut self, a: u32, b: u32) {
        debug_assert!(a != b && !self.linked(a, b) && self.free[a as usize] > 0);
        self.free[a as usize] -= 1;
        self.free[b as usize] -= 1;
        self.adjacent[a as usize].push(b);
        self.adjacent[b as usize].push(a);
        self.links.push((a, b));
    }

    fn forget(&mut self, a: u32, b: u32) {
        for (u, v) in [(a, b), (b, a)] {
            let list = &mut self.adjacent[u as usize];
            let at = list.iter().position(|&w| w == v).expect("linked");
            list.swap_remove(at);
        }
    }

    /// A random pair of distinct, unlinked switches of `open` (those with a free port), if any.
    fn draw_pair(&self, open: &[u32], rng: &mut StdRng) -> Option<(u32, u32)> {
        let valid = |&(a, b): &(u32, u32)| a != b && !self.linked(a, b);
        if open.len() < 2 {
            return None;
        }
        for _ in 0..DRAWS {
            let pair = (
                open[rng.random_range(0..open.len())],
                open[rng.random_range(0..open.len())],
            );
            if valid(&pair) {
                return Some(pair);
            }
        }
        let pairs: Vec<(u32, u32)> = (open.iter().enumerate())
            .flat_map(|(i, &a)| open[i + 1..].iter().map(move |&b| (a, b)))
            .filter(valid)
            .collect();
        (!pairs.is_empty()).then(|| pairs[rng.random_range(0..pairs.len())])
    }

    /// The switches a broken link's ends will join: one with two free ports (twice), else the
    /// first two with one each; `None` when fewer than two ports are free.
    fn free_ends(&self) -> Option<(u32, u32)> {
        let mut open = (0..self.free.len() as u32).filter(|&s| self.free[s as usize] > 0);
        let first = open.next()?;
        if self.free[first as usize] >= 2 {
            return Some((first, first));
        }
        if let Some(w) = (0..self.free.len() as u32).find(|&s| self.free[s as usize] >= 2) {
            return Some((w, w));
        }
        open.next().map(|second| (first, second))
    }

    /// A random link (x, y) that `a` can join x and `b` can join y across once it is broken
    /// (no self-loop, no pair twice), as an index into `links`; `None` if there is none.
    fn draw_link_to_break(&self, a: u32, b: u32, rng: &mut StdRng) -> Option<usize> {
        let fits = |i: usize| {
            let (x, y) = self.links[i];
            let apart = |s: u32| s != a && s != b;
            apart(x) && apart(y) && !self.linked(a, x) && !self.linked(b, y)
        };
        if self.links.is_empty() {
            return None;
        }
        for _ in 0..DRAWS {
            let i = rng.random_range(0..self.links.len());
            if fits(i) {
                return Some(i);
            }
        }
        let all: Vec<usize> = (0..self.links.len()).filter(|&i| fits(i)).collect();
        (!all.is_empty()).then(|| all[rng.random_range(0..all.len())])
    }
}

/// Whether the switch graph is connected (breadth-first from switch 0).
fn connected(switches: usize, links: &[(u32, u32)]) -> bool {
    let mut adjacent = vec![Vec::new(); switches];
    for &(a, b) in links {
        adjacent[a as usize].push(b);
        adjacent[b as usize].push(a);
    }
    let mut seen = vec![false; switches];
    let mut stack = vec![0u32];
    seen[0] = true;
    while let Some(u) = stack.pop() {
        for &v in &adjacent[u as usize] {
            if !std::mem::replace(&mut seen[v as usize], true) {
                stack.push(v);
            }
        }
    }
    seen.iter().all(|&s| s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(switches: u32, ports: u32, hosts: u32, seed: u64) -> Topology {
        let link = (Bandwidth::from_gbps(100), Duration::from_us(1));
        Topology::jellyfish(switches, ports, hosts, link, seed).unwrap()
    }

    /// Switch pairs of the graph, each sorted, in link order.
    fn switch_links(t: &Topology) -> Vec<(u32, u32)> {
        let kinds = |l: &LinkSpec| (t.kind(l.a), t.kind(l.b));
        (t.links().iter())
            .filter(|l| kinds(l) == (NodeKind::Switch, NodeKind::Switch))
            .map(|l| (l.a.0.min(l.b.0), l.a.0.max(l.b.0)))
            .collect()
    }

    #[test]
    fn every_port_is_used_but_one_when_the_switch_ports_are_odd() {
        // The Eunomia paper's network, and smaller ones with odd and even port sums.
        for (switches, ports, hosts) in [(80, 8, 128), (20, 6, 30), (15, 5, 16), (9, 4, 9)] {
            for seed in 1..6 {
                let t = build(switches, ports, hosts, seed);
                let idle: u32 = (t.switches().iter())
                    .map(|&s| ports - t.node_ports(s).len() as u32)
                    .sum();
                let (base, extra) = (hosts / switches, hosts % switches);
                let facing = switches * (ports - base) - extra;
                assert_eq!(idle, facing % 2, "{switches} {ports} {hosts} seed {seed}");
                let mut pairs = switch_links(&t);
                pairs.sort_unstable();
                let n = pairs.len();
                pairs.dedup();
                assert_eq!(pairs.len(), n, "no duplicate link");
                assert!(pairs.iter().all(|&(a, b)| a != b));
            }
        }
    }

    #[test]
    fn servers_are_spread_evenly_and_first() {
        let t = build(80, 8, 128, 1);
        assert_eq!((t.hosts().len(), t.switches().len()), (128, 80));
        let servers: Vec<usize> = (t.switches().iter())
            .map(|&s| {
                let ports = t.node_ports(s);
                let ports = ports.map(|p| t.ports()[t.ports()[p as usize].peer.index()].node);
                let kinds: Vec<_> = ports.map(|n| t.kind(n)).collect();
                let n = kinds.iter().take_while(|&&k| k == NodeKind::Host).count();
                assert!(kinds[n..].iter().all(|&k| k == NodeKind::Switch));
                n
            })
            .collect();
        assert_eq!(servers[..48], [2; 48]);
        assert_eq!(servers[48..], [1; 32]);
    }

    #[test]
    fn a_seed_names_one_graph() {
        let a = switch_links(&build(80, 8, 128, 7));
        assert_eq!(a, switch_links(&build(80, 8, 128, 7)));
        assert_ne!(a, switch_links(&build(80, 8, 128, 8)));
    }

    #[test]
    fn the_graph_is_connected_even_with_two_switch_ports() {
        // Degree 2: unions of cycles are likely, and redrawn.
        for seed in 0..20 {
            let t = build(12, 3, 12, seed);
            assert!(connected(
                12,
                &(switch_links(&t).iter())
                    .map(|&(a, b)| (a - 12, b - 12))
                    .collect::<Vec<_>>()
            ));
        }
    }

    #[test]
    fn impossible_parameters_are_refused() {
        let link = (Bandwidth::from_gbps(100), Duration::from_us(1));
        for ((s, p, h), want) in [
            ((2, 8, 4), "at least 3 are needed"),
            ((10, 513, 4), "at most 512"),
            ((10, 8, 1), "1 hosts: at least 2"),
            ((10, 4, 30), "leaving 1 of its 4 ports"),
            ((4, 8, 4), "only 3 other switches"),
        ] {
            let err = Topology::jellyfish(s, p, h, link, 1)
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{s} {p} {h}: {err}");
        }
    }
}
