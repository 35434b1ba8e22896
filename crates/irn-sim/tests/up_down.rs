//! Up*/down* routing (`topology.routing = "up-down"`): the paths of a small graph worked out by
//! hand; on random Jellyfish graphs the links' dependencies under up*/down* paths form no cycle
//! where k shortest paths do; and RoCE + PFC on a Jellyfish, which deadlocks over k shortest
//! paths, finishes every flow over up*/down* ones.

use std::path::Path;

use irn_core::{Bandwidth, Duration};
use irn_sim::ids::{HostIdx, NodeId};
use irn_sim::scenario;
use irn_sim::topology::{LinkSpec, NodeKind, Topology};
use proptest::prelude::*;

/// Switches 0 to 4 (nodes 5 to 9) in a ring 0-1-2-3-4-0 with the chord 1-3, host `i` (node `i`)
/// on switch `i`.
fn ring_with_chord() -> Topology {
    let link = |a, b| LinkSpec {
        a: NodeId(a),
        b: NodeId(b),
        rate: Bandwidth::from_gbps(100),
        delay: Duration::from_us(1),
    };
    let mut kinds = vec![NodeKind::Host; 5];
    kinds.resize(10, NodeKind::Switch);
    let hosts = (0..5).map(|i| link(i, 5 + i));
    let switches = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (1, 3)];
    let ring = switches.iter().map(|&(a, b)| link(5 + a, 5 + b));
    Topology::from_links(kinds, hosts.chain(ring).collect()).unwrap()
}

/// The paths from switch `a` to switch `b` of a topology with host `i` on switch `i` (its
/// switches numbered from 0 among switches), as switch numbers.
fn paths(t: &Topology, a: usize, b: usize) -> Vec<Vec<u32>> {
    let first = t.switches()[0].0;
    (t.route_starts(a, HostIdx(b as u32)).iter())
        .map(|&c| {
            let ports = t.route_ports(c);
            let mut nodes = vec![a as u32];
            nodes.extend(ports.iter().map(|p| {
                let peer = t.ports()[p.index()].peer;
                t.ports()[peer.index()].node.0 - first
            }));
            nodes
        })
        .collect()
}

/// Every switch has eccentricity 2, so the root is switch 0; its order (hops from 0, then id)
/// is 0, 1, 4, 2, 3, and a link goes up towards the earlier switch: 1→0, 4→0, 2→1, 3→1,
/// 3→2, 3→4. Switch 3 has only up links and switch 0 only down links.
#[test]
fn a_ring_with_a_chord_is_routed_up_then_down() {
    let t = ring_with_chord().with_up_down_paths(4).unwrap();
    // 2-3-4 would go down (2→3), then up (3→4): the one legal path goes round by the root.
    assert_eq!(paths(&t, 2, 4), [vec![2, 1, 0, 4]]);
    assert_eq!(paths(&t, 4, 2), [vec![4, 0, 1, 2]]);
    // Up all the way: the shortest first, ties to the lower switch sequence.
    assert_eq!(
        paths(&t, 3, 0),
        [vec![3, 1, 0], vec![3, 4, 0], vec![3, 2, 1, 0]]
    );
    assert_eq!(
        paths(&t, 0, 3),
        [vec![0, 1, 3], vec![0, 4, 3], vec![0, 1, 2, 3]]
    );
    // 2-3-4-0 and 2-3-1-0 turn up after 2→3.
    assert_eq!(paths(&t, 2, 0), [vec![2, 1, 0]]);
    // k shortest paths take 2-3-4 first, and more besides.
    let shortest = ring_with_chord().with_k_shortest_paths(4).unwrap();
    assert_eq!(paths(&shortest, 2, 4)[0], [2, 3, 4]);
    assert_eq!(paths(&shortest, 2, 4).len(), 4);
    // The unloaded path of a flow (its ideal FCT) is the shortest legal one: host, 3 switch
    // links, host.
    assert_eq!(t.path(HostIdx(2), HostIdx(4)).hops, 5);
}

/// Whether the channel dependency graph of every path in `t`'s tables has a cycle: a vertex
/// per directed switch-to-switch link (its egress port), an edge from each link of a path to
/// the next. Host links start and end paths and are in no cycle, so they are left out.
fn dependencies_cycle(t: &Topology) -> bool {
    let mut next: Vec<Vec<u32>> = vec![Vec::new(); t.ports().len()];
    let edges = t.switches().len();
    for a in 0..edges {
        for b in (0..edges).filter(|&b| b != a) {
            for &c in t.route_starts(a, HostIdx(b as u32)) {
                for pair in t.route_ports(c).windows(2) {
                    next[pair[0].index()].push(pair[1].0);
                }
            }
        }
    }
    for n in &mut next {
        n.sort_unstable();
        n.dedup();
    }
    // Kahn's algorithm: a cycle leaves vertices that never lose all their incoming edges.
    let mut incoming = vec![0u32; next.len()];
    for &m in next.iter().flatten() {
        incoming[m as usize] += 1;
    }
    let mut ready: Vec<usize> = (0..next.len()).filter(|&p| incoming[p] == 0).collect();
    let mut removed = 0;
    while let Some(p) = ready.pop() {
        removed += 1;
        for &m in &next[p] {
            incoming[m as usize] -= 1;
            if incoming[m as usize] == 0 {
                ready.push(m as usize);
            }
        }
    }
    removed < next.len()
}

/// A Jellyfish of `switches` switches, one host on each (so every switch is an edge switch).
fn jellyfish(switches: u32, ports: u32, seed: u64) -> Topology {
    let link = (Bandwidth::from_gbps(100), Duration::from_us(1));
    Topology::jellyfish(switches, ports, switches, link, seed).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// On random Jellyfish graphs the links' dependencies under up*/down* paths have no cycle
    /// (PFC cannot deadlock), while under k shortest paths of the same graph they do; every
    /// pair of switches still has a path.
    #[test]
    fn up_down_paths_have_no_dependency_cycle_where_k_shortest_do(
        switches in 12u32..=32,
        ports in 5u32..=8,
        k in 4usize..=8,
        seed in 0u64..1000,
    ) {
        let g = jellyfish(switches, ports, seed);
        let up_down = g.clone().with_up_down_paths(k).unwrap();
        prop_assert!(!dependencies_cycle(&up_down));
        let n = switches as usize;
        for a in 0..n {
            for b in (0..n).filter(|&b| b != a) {
                let count = up_down.route_starts(a, HostIdx(b as u32)).len();
                prop_assert!((1..=k).contains(&count), "{} to {}: {} paths", a, b, count);
            }
        }
        prop_assert!(dependencies_cycle(&g.with_k_shortest_paths(k).unwrap()));
    }
}

/// The paper's Jellyfish (80 switches of 8 ports, 128 servers), 8 paths per pair: k shortest
/// paths make a dependency cycle, up*/down* paths none, and they are at most a little longer
/// on average.
#[test]
fn the_papers_jellyfish_has_no_dependency_cycle_under_up_down() {
    let link = (Bandwidth::from_gbps(100), Duration::from_us(1));
    let g = Topology::jellyfish(80, 8, 128, link, 1).unwrap();
    let up_down = g.clone().with_up_down_paths(8).unwrap();
    let shortest = g.with_k_shortest_paths(8).unwrap();
    assert!(!dependencies_cycle(&up_down));
    assert!(dependencies_cycle(&shortest));
    let (up, k) = (mean_hops(&up_down), mean_hops(&shortest));
    assert!(k < up && up < 1.5 * k, "{up} hops against {k}");
}

/// The mean switch-to-switch hops of the paths from every switch to every host elsewhere.
fn mean_hops(t: &Topology) -> f64 {
    let (mut hops, mut paths) = (0, 0);
    for a in 0..t.switches().len() {
        for h in (0..t.hosts().len() as u32).map(HostIdx) {
            for &c in t.route_starts(a, h) {
                hops += t.route_ports(c).len();
                paths += 1;
            }
        }
    }
    hops as f64 / paths as f64
}

const PFC_JELLYFISH: &str = r#"
seed = 1
[topology]
kind = "jellyfish"
link_rate = "100Gbps"
link_delay = "1us"
routing = "up-down"
[switch]
model = "shared-buffer"
buffer = "1MB"
pfc = true
[transport]
kind = "roce"
[load_balancing]
kind = "fksp"
[workload]
load = 0.5
duration = "200us"
[run]
drain_limit = "20ms"
"#;

/// RoCE + PFC at 50 % load on the paper's Jellyfish over up*/down* paths, one per flow
/// (FKSP): PFC pauses, and every flow finishes with nothing left paused. (Over k shortest
/// paths, shortest ones too, RoCE + PFC on this network deadlocks: `tests/jellyfish.rs`.)
#[test]
fn roce_with_pfc_finishes_every_flow_over_up_down_paths() {
    let sc = scenario::parse(PFC_JELLYFISH, "jellyfish.toml", Path::new("."), &[]).unwrap();
    let s = irn_sim::run(&sc.runs[0].config, &mut |_| {}).summary;
    assert!(s.flows_total > 500, "{}", s.flows_total);
    assert_eq!(s.flows_incomplete, 0);
    assert!(s.pause_frames > 0, "PFC was at work");
    assert_eq!(s.ports_paused_at_end, None);
}
