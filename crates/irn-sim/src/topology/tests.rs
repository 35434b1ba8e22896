//! Tests of the generic builder: validation messages, port wiring and routing on arbitrary
//! graphs. Generator-specific tests live beside their generators.

use proptest::prelude::*;
use proptest::sample::Index;

use super::*;

const RATE: Bandwidth = Bandwidth::from_gbps(40);
const US: Duration = Duration::from_us(1);

fn link(a: u32, b: u32) -> LinkSpec {
    LinkSpec {
        a: NodeId(a),
        b: NodeId(b),
        rate: RATE,
        delay: US,
    }
}

fn kinds(hosts: usize, switches: usize) -> Vec<NodeKind> {
    let mut k = vec![NodeKind::Host; hosts];
    k.extend(vec![NodeKind::Switch; switches]);
    k
}

fn err(kinds: Vec<NodeKind>, links: Vec<LinkSpec>) -> String {
    Topology::from_links(kinds, links).unwrap_err().to_string()
}

#[test]
fn too_few_hosts() {
    let e = err(kinds(0, 2), vec![link(0, 1)]);
    assert!(e.contains("0 host"), "{e}");
    let e = err(kinds(1, 1), vec![link(0, 1)]);
    assert!(e.contains("1 host"), "{e}");
    assert!(e.contains("at least 2"), "{e}");
}

#[test]
fn node_out_of_range() {
    let e = err(kinds(2, 1), vec![link(0, 2), link(1, 7)]);
    assert!(e.contains("link 1 names node 7"), "{e}");
    assert!(e.contains("3 nodes"), "{e}");
}

#[test]
fn self_loop() {
    let e = err(kinds(2, 2), vec![link(0, 2), link(1, 2), link(3, 3)]);
    assert!(e.contains("link 2 joins node 3 to itself"), "{e}");
}

#[test]
fn zero_rate() {
    let mut l = link(1, 2);
    l.rate = Bandwidth::from_bps(0);
    let e = err(kinds(2, 1), vec![link(0, 2), l]);
    assert!(e.contains("link 1"), "{e}");
    assert!(e.contains("0bps"), "{e}");
    assert!(e.contains("greater than zero"), "{e}");
}

#[test]
fn host_with_two_links() {
    let e = err(
        kinds(8, 2),
        (0..8)
            .map(|h| link(h, 8))
            .chain([link(7, 9), link(8, 9)])
            .collect(),
    );
    assert_eq!(e, "host 7 has 2 links; a host has exactly one NIC port");
    let e = err(kinds(3, 1), vec![link(0, 3), link(1, 3)]);
    assert!(e.contains("host 2 has 0 links"), "{e}");
}

#[test]
fn switch_with_513_ports() {
    let e = err(kinds(513, 1), (0..513).map(|h| link(h, 513)).collect());
    assert!(e.contains("switch 513 has 513 ports"), "{e}");
    assert!(e.contains("at most 512"), "{e}");
    let star = (0..512).map(|h| link(h, 512)).collect();
    assert!(Topology::from_links(kinds(512, 1), star).is_ok());
}

#[test]
fn disconnected_names_a_pair() {
    // Hosts 0, 1 on switch 4; hosts 2, 3 on switch 5; no link between the switches.
    let e = err(
        kinds(4, 2),
        vec![link(0, 4), link(1, 4), link(2, 5), link(3, 5)],
    );
    assert!(e.contains("host 2 cannot reach host 0"), "{e}");
    assert!(e.contains("disconnected"), "{e}");
}

#[test]
fn isolated_switch_is_rejected() {
    let e = err(kinds(2, 2), vec![link(0, 2), link(1, 2)]);
    assert!(e.contains("switch 3 cannot reach host 0"), "{e}");
}

#[test]
fn ports_follow_link_order() {
    // Switch 3's links appear as (0-3), (3-4), (1-3), (2-4), so its ports lead to 0, 4, 1.
    let t = Topology::from_links(
        vec![
            NodeKind::Host,
            NodeKind::Host,
            NodeKind::Host,
            NodeKind::Switch,
            NodeKind::Switch,
        ],
        vec![link(0, 3), link(3, 4), link(1, 3), link(2, 4)],
    )
    .unwrap();
    let far = |p: u32| t.ports()[t.ports()[p as usize].peer.index()].node;
    let ports: Vec<NodeId> = t.node_ports(NodeId(3)).map(far).collect();
    assert_eq!(ports, vec![NodeId(0), NodeId(4), NodeId(1)]);
    assert_eq!(t.node_ports(NodeId(0)), 0..1);
    assert_eq!(t.node_ports(NodeId(3)), 3..6);
    assert_eq!(t.node_ports(NodeId(4)), 6..8);
    assert_eq!(t.path(HostIdx(0), HostIdx(2)).hops, 3);
}

#[test]
fn parallel_links_are_both_ecmp_candidates() {
    let t = Topology::from_links(
        kinds(2, 2),
        vec![link(0, 2), link(1, 3), link(2, 3), link(2, 3)],
    )
    .unwrap();
    let hops: Vec<u32> = t
        .next_hops(NodeId(2), HostIdx(1))
        .iter()
        .map(|p| p.0)
        .collect();
    assert_eq!(hops, vec![3, 4]);
}

#[test]
fn longest_propagation_uses_real_delays() {
    // Three hosts on one switch with 1, 2 and 5 us links: the longest path is host 1 - host 2.
    let mut links: Vec<LinkSpec> = (0..3).map(|h| link(h, 3)).collect();
    links[1].delay = US * 2;
    links[2].delay = US * 5;
    links[0].rate = Bandwidth::from_gbps(100);
    let t = Topology::from_links(kinds(3, 1), links).unwrap();
    assert_eq!(t.max_path_propagation(), US * 7);
    assert_eq!(t.path(HostIdx(0), HostIdx(2)).propagation, US * 6);
    assert_eq!(t.min_host_rate(), RATE);
}

#[test]
fn hosts_may_be_linked_directly() {
    let t = Topology::from_links(kinds(2, 0), vec![link(0, 1)]).unwrap();
    let p = t.path(HostIdx(1), HostIdx(0));
    assert_eq!((p.hops, p.propagation), (1, US));
}

/// Structural invariants every topology must satisfy.
fn check_ports(t: &Topology) {
    for (i, port) in t.ports().iter().enumerate() {
        let peer = t.ports()[port.peer.index()];
        assert_eq!(peer.peer, PortId(i as u32), "port {i}");
        assert_ne!(peer.node, port.node, "port {i}");
        assert_eq!((peer.rate, peer.delay), (port.rate, port.delay), "port {i}");
        assert!(t.node_ports(port.node).contains(&(i as u32)), "port {i}");
    }
    let mut next = 0;
    for n in 0..t.node_count() as u32 {
        let r = t.node_ports(NodeId(n));
        assert_eq!(r.start, next);
        next = r.end;
    }
    assert_eq!(next as usize, t.ports().len());
}

#[test]
fn port_peers_are_symmetric() {
    check_ports(&Topology::fat_tree(4, RATE, US).unwrap());
    check_ports(&Topology::star(5, RATE, US).unwrap());
    check_ports(&Topology::dumbbell(3, 2, RATE, RATE, US).unwrap());
}

/// Hop distances to host `dst` computed independently of the routing module: BFS over the
/// link list, never passing through a host other than `dst`.
fn reference_distances(kinds: &[NodeKind], links: &[LinkSpec], dst: NodeId) -> Vec<Option<u32>> {
    let mut adj = vec![Vec::new(); kinds.len()];
    for l in links {
        adj[l.a.index()].push(l.b.index());
        adj[l.b.index()].push(l.a.index());
    }
    let mut dist = vec![None; kinds.len()];
    dist[dst.index()] = Some(0);
    let mut queue = std::collections::VecDeque::from([dst.index()]);
    while let Some(u) = queue.pop_front() {
        if u != dst.index() && kinds[u] == NodeKind::Host {
            continue;
        }
        for &m in &adj[u] {
            if dist[m].is_none() {
                dist[m] = Some(dist[u].unwrap() + 1);
                queue.push_back(m);
            }
        }
    }
    dist
}

/// A random connected network: a random spanning tree over the switches, extra random
/// switch-switch links (parallel links allowed), hosts on random switches, node ids shuffled,
/// and random rates and delays.
fn arb_network() -> impl Strategy<Value = (Vec<NodeKind>, Vec<LinkSpec>)> {
    (1usize..8, 2usize..10).prop_flat_map(|(switches, hosts)| {
        let nodes = switches + hosts;
        (
            prop::collection::vec(any::<Index>(), switches - 1),
            prop::collection::vec((any::<Index>(), any::<Index>()), 0..10),
            prop::collection::vec(any::<Index>(), hosts),
            Just((0..nodes as u32).collect::<Vec<u32>>()).prop_shuffle(),
            prop::collection::vec((1u64..=4, 1u64..=5), 32),
        )
            .prop_map(move |(parents, extra, attach, perm, params)| {
                // Logical switches are 0..switches, logical hosts follow; `perm` renames them.
                let mut kinds = vec![NodeKind::Switch; nodes];
                for h in switches..nodes {
                    kinds[perm[h] as usize] = NodeKind::Host;
                }
                let mut pairs = Vec::new();
                for (i, p) in parents.iter().enumerate() {
                    pairs.push((i + 1, p.index(i + 1)));
                }
                for (a, b) in &extra {
                    let (a, b) = (a.index(switches), b.index(switches));
                    if a != b {
                        pairs.push((a, b));
                    }
                }
                for (j, s) in attach.iter().enumerate() {
                    pairs.push((switches + j, s.index(switches)));
                }
                let links = pairs
                    .iter()
                    .enumerate()
                    .map(|(i, &(a, b))| {
                        let (gbps, us) = params[i % params.len()];
                        LinkSpec {
                            a: NodeId(perm[a]),
                            b: NodeId(perm[b]),
                            rate: Bandwidth::from_gbps(10 * gbps),
                            delay: Duration::from_us(us),
                        }
                    })
                    .collect();
                (kinds, links)
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn routes_are_shortest_paths(
        (kinds, links) in arb_network(),
        choices in prop::collection::vec(any::<Index>(), 1..16),
    ) {
        let t = Topology::from_links(kinds.clone(), links.clone()).unwrap();
        check_ports(&t);
        let far = |p: PortId| t.ports()[t.ports()[p.index()].peer.index()].node;
        let mut longest = Duration::ZERO;

        for (h, &dst) in t.hosts().iter().enumerate() {
            let dst_idx = HostIdx(h as u32);
            let dist = reference_distances(&kinds, &links, dst);

            for &s in t.switches() {
                let ds = dist[s.index()].unwrap();
                // Exactly the ports one hop closer, hosts only if they are the destination.
                let expected: Vec<PortId> = t
                    .node_ports(s)
                    .map(PortId)
                    .filter(|&p| {
                        let m = far(p);
                        dist[m.index()] == Some(ds - 1)
                            && (m == dst || t.kind(m) == NodeKind::Switch)
                    })
                    .collect();
                prop_assert!(!expected.is_empty());
                prop_assert_eq!(t.next_hops(s, dst_idx), &expected[..]);

                // Any choice of candidates reaches dst in exactly `ds` steps.
                let mut at = s;
                let mut steps = 0;
                while at != dst {
                    prop_assert!(steps < ds, "walk from {} overran", s);
                    let c = t.next_hops(at, dst_idx);
                    at = far(c[choices[steps as usize % choices.len()].index(c.len())]);
                    steps += 1;
                }
                prop_assert_eq!(steps, ds);
            }

            for src in 0..t.hosts().len() as u32 {
                if src == h as u32 {
                    continue;
                }
                let p = t.path(HostIdx(src), dst_idx);
                let src_node = t.host_node(HostIdx(src));
                prop_assert_eq!(p.hops, dist[src_node.index()].unwrap());
                prop_assert_eq!(p.rates.len(), p.hops as usize);
                prop_assert_eq!(Some(p.bottleneck), p.rates.iter().copied().min());

                // Recompute delay and rates along the first candidates.
                let mut port = t.host_port(HostIdx(src));
                let mut delay = Duration::ZERO;
                let mut rates = Vec::new();
                loop {
                    delay = delay + t.ports()[port.index()].delay;
                    rates.push(t.ports()[port.index()].rate);
                    let next = far(port);
                    if next == dst {
                        break;
                    }
                    port = t.next_hops(next, dst_idx)[0];
                }
                prop_assert_eq!(p.propagation, delay);
                prop_assert_eq!(&p.rates, &rates);
                longest = longest.max(delay);
            }
        }
        prop_assert_eq!(t.max_path_propagation(), longest);
        let min_host = t
            .hosts()
            .iter()
            .map(|&n| t.ports()[t.node_ports(n).start as usize].rate)
            .min();
        prop_assert_eq!(Some(t.min_host_rate()), min_host);
    }
}
