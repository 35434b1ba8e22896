//! Partitions of a large network, so a run can take its events a few nodes at a time.
//!
//! On a large fabric, events that follow each other in time belong to nodes far apart: each one
//! reads a port, a queue, a flow and a packet that the previous thousand events pushed out of
//! the caches (a k = 24 fat-tree's state is about 100 MB; the L2 cache holds 2). Within one link
//! delay, though, what happens in one pod cannot depend on what happens in another: anything
//! that crosses between them rides a link. So a run can serve every event of one pod in a window
//! as long as the shortest link between partitions, then the next pod's, and so on (the
//! conservative window of parallel discrete-event simulation, here run on one core for locality
//! rather than across cores): the pod's ports, queues, flows and packets stay in cache for the
//! window. A partition's events keep their time order; events of different partitions in the
//! same window cannot affect each other, so serving them partition by partition computes a run
//! that is as valid as the global order, though equal-time events are not taken in the same
//! order as in an unpartitioned run, and the two runs' results differ as two tie-breaking rules
//! do.
//!
//! A partition is a group of whole pods: the network without its top tier of switches (a
//! fat-tree's core, a leaf-spine's spines) falls apart into pods, consecutive pods are merged
//! until each partition holds enough hosts, and the top tier's switches are dealt round-robin.
//!
//! When every link, not only those between partitions, is at least a window long, the same
//! holds node by node: within a window each switch's and host's events depend on its own state
//! alone, and a partition's window is served a node at a time (`sim/node_batch.rs`), so a
//! node's ports, queues and flows stay in the fastest caches for all its events of the window.
//! Equal-time events that reach one node from two others are then taken node by node.

use irn_core::Duration;

use crate::config::SimConfig;
use crate::forwarding::LoadBalancing;
use crate::ids::NodeId;
use crate::topology::{NodeKind, Topology};

/// How a run orders its events (`[run] partitions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PartitionRule {
    /// Large fabrics (at least [`AUTO_MIN_PARTS`] partitions of [`AUTO_MIN_HOSTS`] hosts or
    /// more) are partitioned, into at most [`AUTO_MAX_PARTS`], if their links between
    /// partitions are long enough ([`AUTO_MIN_WINDOW_FRAMES`]); other networks are not.
    #[default]
    Auto,
    /// Every event in one global time order.
    Off,
    /// At most this many partitions of whole pods, whatever the size (at least 2).
    At(u16),
}

/// The fewest hosts `Auto` puts in a partition: fewer would serve too few events per window.
pub const AUTO_MIN_HOSTS: usize = 128;
/// The fewest partitions `Auto` makes use of.
pub const AUTO_MIN_PARTS: usize = 4;
/// The most partitions `Auto` makes: each has its own event queue (about 230 KB).
pub const AUTO_MAX_PARTS: usize = 64;
/// The shortest window `Auto` partitions with, in full frames at the fastest link: shorter
/// windows hold too few events of a partition to pay for turning from one to the next. A k =
/// 24 fat-tree at 100 Gb/s (a frame 87 ns) with 100 µs of arrivals ran slower partitioned with
/// links of 50 ns (2.58 s against 2.13 s) and 200 ns (2.56 against 2.35), faster with 1 µs
/// (2.66 against 2.98), and either way with 500 ns (one run each).
pub const AUTO_MIN_WINDOW_FRAMES: u64 = 8;

/// A network's nodes grouped into partitions, and the window they may run apart for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partitioning {
    /// Each node's partition.
    pub node_part: Vec<u16>,
    pub count: usize,
    /// The shortest delay of a link between two partitions: nothing one partition does reaches
    /// another sooner.
    pub lookahead: Duration,
    /// Every link, within partitions too, is at least `lookahead` long: within a window each
    /// node's events depend on its own state alone, and a partition's window is served node by
    /// node.
    pub by_node: bool,
}

impl Partitioning {
    /// The partitions `cfg`'s run takes its events by: its topology's under its rule, unless
    /// it has what ties nodes together at an instant rather than over a link: flows that start
    /// when others finish, verbs queue pairs (one object drives both ends), ConWeave's reorder
    /// queues, or credit flow control (a link's two ends share its counters). `Auto` also
    /// leaves a run unpartitioned when its window would be shorter than
    /// [`AUTO_MIN_WINDOW_FRAMES`] full frames.
    pub fn for_run(cfg: &SimConfig) -> Option<Partitioning> {
        Self::try_for_run(cfg).ok()
    }

    /// [`Partitioning::for_run`], or why the run takes its events in one order, for an error
    /// that names the reason that applies.
    pub fn try_for_run(cfg: &SimConfig) -> Result<Partitioning, &'static str> {
        let tied = if cfg.dag.is_some() {
            Some("its flows wait for others")
        } else if cfg.flows.iter().any(|f| f.verb.is_some()) {
            Some("it has verbs, whose queue pairs drive both ends")
        } else if matches!(cfg.load_balancing, LoadBalancing::ConWeave(_)) {
            Some("ConWeave's reorder queues tie nodes together")
        } else if cfg.credits.is_some() {
            Some("a link's two ends share its credits")
        } else {
            None
        };
        if let Some(why) = tied {
            return Err(why);
        }
        let p = Self::try_of(&cfg.topology, cfg.partitions)?;
        let frame = cfg.fastest_frame_time().unwrap_or(Duration::ZERO);
        let short = p.lookahead.as_ps() < frame.as_ps().saturating_mul(AUTO_MIN_WINDOW_FRAMES);
        if cfg.partitions == PartitionRule::Auto && short {
            return Err("its links between pods are too short for a window of a few frames");
        }
        Ok(p)
    }

    /// `topo`'s partitions under `rule`; `None` when the run takes its events in one order
    /// (the rule says so, the network is too small or has no pods, or a link between two
    /// partitions has no delay).
    pub fn of(topo: &Topology, rule: PartitionRule) -> Option<Partitioning> {
        Self::try_of(topo, rule).ok()
    }

    fn try_of(topo: &Topology, rule: PartitionRule) -> Result<Partitioning, &'static str> {
        let hosts = topo.hosts().len();
        let (max_parts, min_hosts, min_parts) = match rule {
            PartitionRule::Off => return Err("run.partitions is \"off\""),
            PartitionRule::Auto => (AUTO_MAX_PARTS, AUTO_MIN_HOSTS, AUTO_MIN_PARTS),
            PartitionRule::At(n) => (usize::from(n), 1, 2),
        };
        let pods = pods(topo).ok_or(
            "its network has no pods: the switches farthest from the hosts are the hosts' own",
        )?;
        let per_part = min_hosts.max(hosts.div_ceil(max_parts.max(1)));
        // Consecutive pods, merged until each partition has `per_part` hosts (a short last one
        // joins the one before).
        let mut pod_part = vec![0u16; pods.hosts.len()];
        let (mut count, mut held) = (0usize, 0usize);
        for (pod, &h) in pods.hosts.iter().enumerate() {
            if held >= per_part {
                count += 1;
                held = 0;
            }
            pod_part[pod] = count as u16;
            held += h;
        }
        if held < per_part && count > 0 {
            for p in pod_part.iter_mut().filter(|p| usize::from(**p) == count) {
                *p -= 1;
            }
        } else {
            count += 1;
        }
        if count < min_parts {
            return Err(if min_parts == 2 {
                "its network has one pod"
            } else {
                "its network has too few pods of enough hosts"
            });
        }
        let mut top = 0;
        let node_part: Vec<u16> = (pods.of_node.iter())
            .map(|pod| match pod {
                Some(pod) => pod_part[*pod as usize],
                None => {
                    top += 1;
                    ((top - 1) % count) as u16
                }
            })
            .collect();
        let lookahead = (topo.ports().iter())
            .filter(|p| {
                let peer = topo.ports()[p.peer.index()].node;
                node_part[p.node.index()] != node_part[peer.index()]
            })
            .map(|p| p.delay)
            .min()
            .ok_or("no link joins its pods")?;
        if lookahead == Duration::ZERO {
            return Err(
                "a link between its pods has no delay, the window partitions run apart for",
            );
        }
        let by_node = topo.ports().iter().all(|p| p.delay >= lookahead);
        Ok(Partitioning {
            node_part,
            count,
            lookahead,
            by_node,
        })
    }
}

/// The network's pods: each node's (`None` for the top tier) and each pod's hosts.
struct Pods {
    of_node: Vec<Option<u32>>,
    hosts: Vec<usize>,
}

/// Splits `topo` into pods: the connected parts left once the switches farthest from any host
/// are taken out, numbered by their first node. `None` when the farthest switches are the
/// hosts' own (a star, or a single tier of switches).
fn pods(topo: &Topology) -> Option<Pods> {
    let n = topo.node_count();
    let neighbours = |node: NodeId| {
        (topo.node_ports(node)).map(|p| topo.ports()[topo.ports()[p as usize].peer.index()].node)
    };
    // Hops from the nearest host, breadth first.
    let mut level = vec![u32::MAX; n];
    let mut frontier: Vec<NodeId> = topo.hosts().to_vec();
    for &h in &frontier {
        level[h.index()] = 0;
    }
    let mut depth = 0;
    while !frontier.is_empty() {
        depth += 1;
        let mut next = Vec::new();
        for &node in &frontier {
            for peer in neighbours(node) {
                if level[peer.index()] == u32::MAX {
                    level[peer.index()] = depth;
                    next.push(peer);
                }
            }
        }
        frontier = next;
    }
    let top = level.iter().copied().filter(|&l| l != u32::MAX).max()?;
    if top < 2 {
        return None;
    }
    let mut of_node: Vec<Option<u32>> = vec![None; n];
    let mut hosts = Vec::new();
    for start in 0..n {
        if of_node[start].is_some() || level[start] >= top {
            continue;
        }
        let pod = hosts.len() as u32;
        let mut count = 0;
        let mut stack = vec![NodeId(start as u32)];
        of_node[start] = Some(pod);
        while let Some(node) = stack.pop() {
            count += usize::from(topo.kind(node) == NodeKind::Host);
            for peer in neighbours(node) {
                if of_node[peer.index()].is_none() && level[peer.index()] < top {
                    of_node[peer.index()] = Some(pod);
                    stack.push(peer);
                }
            }
        }
        hosts.push(count);
    }
    Some(Pods { of_node, hosts })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::LinkSpec;
    use irn_core::Bandwidth;

    fn fat_tree(k: u32) -> Topology {
        Topology::fat_tree(k, Bandwidth::from_gbps(100), Duration::from_us(1)).unwrap()
    }

    #[test]
    fn a_fat_tree_splits_into_its_pods_with_the_core_dealt_round_robin() {
        // k = 8: 4 pods of 16 hosts (and 4 edge + 4 aggregation switches), 16 core switches.
        let topo = fat_tree(8);
        let p = Partitioning::of(&topo, PartitionRule::At(8)).unwrap();
        assert_eq!(p.count, 8);
        assert_eq!(p.lookahead, Duration::from_us(1));
        let (hosts, edges, cores) = (128, 32, 16);
        for h in 0..hosts {
            assert_eq!(p.node_part[h], (h / 16) as u16, "host {h}");
        }
        for e in 0..edges {
            assert_eq!(p.node_part[hosts + e], (e / 4) as u16, "edge {e}");
            assert_eq!(p.node_part[hosts + edges + e], (e / 4) as u16, "agg {e}");
        }
        for c in 0..cores {
            assert_eq!(
                p.node_part[hosts + 2 * edges + c],
                (c % 8) as u16,
                "core {c}"
            );
        }
        // Two pods a partition when at most four are asked for.
        let p = Partitioning::of(&topo, PartitionRule::At(4)).unwrap();
        assert_eq!(p.count, 4);
        assert_eq!(
            (p.node_part[0], p.node_part[32], p.node_part[127]),
            (0, 1, 3)
        );
    }

    #[test]
    fn nodes_take_their_window_apart_only_when_every_link_is_that_long() {
        // Uniform links: within a window, no node reaches another.
        let p = Partitioning::of(&fat_tree(8), PartitionRule::At(4)).unwrap();
        assert!(p.by_node);
        // Four leaves of two hosts under two spines, the hosts on 100 ns links: the partitions
        // (a leaf each) still run 1 us apart, but a leaf reaches its hosts within the window.
        let (hosts, leaves) = (8u32, 4u32);
        let link = |a: u32, b: u32, delay: Duration| LinkSpec {
            a: NodeId(a),
            b: NodeId(b),
            rate: Bandwidth::from_gbps(100),
            delay,
        };
        let mut links: Vec<LinkSpec> = (0..hosts)
            .map(|h| link(h, hosts + h / 2, Duration::from_ns(100)))
            .collect();
        for l in 0..leaves {
            for s in 0..2 {
                links.push(link(hosts + l, hosts + leaves + s, Duration::from_us(1)));
            }
        }
        let mut kinds = vec![NodeKind::Host; hosts as usize];
        kinds.extend([NodeKind::Switch; 6]);
        let topo = Topology::from_links(kinds, links).unwrap();
        let p = Partitioning::of(&topo, PartitionRule::At(4)).unwrap();
        assert_eq!((p.count, p.lookahead), (4, Duration::from_us(1)));
        assert!(!p.by_node);
    }

    #[test]
    fn auto_partitions_only_large_fabrics() {
        assert_eq!(Partitioning::of(&fat_tree(8), PartitionRule::Auto), None);
        assert_eq!(Partitioning::of(&fat_tree(8), PartitionRule::Off), None);
        // k = 16: 8 pods of 128 hosts.
        let p = Partitioning::of(&fat_tree(16), PartitionRule::Auto).unwrap();
        assert_eq!(p.count, 8);
        // k = 24: 24 pods of 144.
        assert_eq!(
            Partitioning::of(&fat_tree(24), PartitionRule::Auto)
                .unwrap()
                .count,
            24
        );
    }

    #[test]
    fn a_leaf_spine_groups_whole_leaves_and_a_star_has_no_pods() {
        let ls = Topology::leaf_spine(
            8,
            8,
            16,
            Bandwidth::from_gbps(100),
            Bandwidth::from_gbps(100),
            Duration::from_us(1),
        )
        .unwrap();
        // 8 leaves of 16 hosts: too few hosts for `Auto`, two leaves a partition when asked.
        assert_eq!(Partitioning::of(&ls, PartitionRule::Auto), None);
        let p = Partitioning::of(&ls, PartitionRule::At(4)).unwrap();
        assert_eq!(p.count, 4);
        for h in 0..128 {
            assert_eq!(p.node_part[h], (h / 32) as u16);
        }
        let star = Topology::star(8, Bandwidth::from_gbps(100), Duration::from_us(1)).unwrap();
        assert_eq!(Partitioning::of(&star, PartitionRule::At(4)), None);
    }
}
