//! k-shortest-path source routing in the simulator: FKSP keeps each flow on one of its paths
//! (so nothing is reordered) while spreading flows over paths of different lengths; per-packet
//! balancers over paths reorder a flow; every flow still finishes.

mod common;

use irn_core::transport::TransportConfig;
use irn_core::{Bandwidth, Duration, Time};
use irn_sim::config::{LoadBalancing, SimConfig};
use irn_sim::ids::{HostIdx, NodeId};
use irn_sim::topology::{LinkSpec, NodeKind, Topology};
use irn_sim::workload::{FlowClass, FlowSpec};

/// Host 0 on switch 2, host 1 on switch 3; switch 2 reaches switch 3 directly (one hop) or
/// through switch 4 (two hops). Shortest-path routing only knows the direct link; two
/// k-shortest paths are both.
fn triangle(paths: Option<usize>) -> Topology {
    let link = |a, b| LinkSpec {
        a: NodeId(a),
        b: NodeId(b),
        rate: Bandwidth::from_gbps(40),
        delay: Duration::from_us(1),
    };
    let t = Topology::from_links(
        vec![
            NodeKind::Host,
            NodeKind::Host,
            NodeKind::Switch,
            NodeKind::Switch,
            NodeKind::Switch,
        ],
        vec![link(0, 2), link(1, 3), link(2, 3), link(2, 4), link(4, 3)],
    )
    .unwrap();
    match paths {
        Some(k) => t.with_k_shortest_paths(k).unwrap(),
        None => t,
    }
}

/// `n` flows of `size` bytes from host 0 to host 1, 50 µs apart: each alone in the network.
fn apart(n: u32, size: u64) -> Vec<FlowSpec> {
    (0..n)
        .map(|i| FlowSpec {
            src: HostIdx(0),
            dst: HostIdx(1),
            size_bytes: size,
            start: Time::from_ps(u64::from(i) * 50_000_000),
            class: FlowClass::Regular,
            verb: None,
        })
        .collect()
}

fn run(
    t: Topology,
    lb: LoadBalancing,
    transport: TransportConfig,
    flows: Vec<FlowSpec>,
) -> irn_sim::RunResult {
    let cfg = SimConfig {
        seed: 5,
        load_balancing: lb,
        ..SimConfig::new(t, common::lossy_switch(), transport, flows)
    };
    irn_sim::run(&cfg, &mut |_| {})
}

/// The distinct FCTs of a run's flows, to the nanosecond.
fn distinct_fcts(r: &irn_sim::RunResult) -> Vec<u64> {
    let mut fcts: Vec<u64> = (r.flows.iter())
        .map(|f| (f.fct_us.expect("finished") * 1000.0).round() as u64)
        .collect();
    fcts.sort_unstable();
    fcts.dedup();
    fcts
}

#[test]
fn fksp_keeps_each_flow_on_one_path_and_spreads_flows_over_paths() {
    let roce = TransportConfig::roce(false);
    let shortest = run(triangle(None), LoadBalancing::Ecmp, roce, apart(40, 10_000));
    assert_eq!(
        distinct_fcts(&shortest).len(),
        1,
        "one path: the direct link"
    );

    let fksp = run(
        triangle(Some(2)),
        LoadBalancing::Ecmp,
        roce,
        apart(40, 10_000),
    );
    // Go-back-N retransmits on any reordering: none means every flow kept one path.
    assert_eq!(fksp.summary.retransmissions, 0);
    assert_eq!(fksp.summary.flows_incomplete, 0);
    let fcts = distinct_fcts(&fksp);
    assert_eq!(
        fcts.len(),
        2,
        "flows on the 1-hop and the 2-hop path: {fcts:?}"
    );
    assert_eq!(fcts[0], distinct_fcts(&shortest)[0]);
    // The longer path adds one link's delay and one store-and-forward of a 1 KB frame (0.2 µs
    // at 40 Gb/s) or so: between 1 and 2 µs.
    assert!((1_000..2_000).contains(&(fcts[1] - fcts[0])), "{fcts:?}");
}

#[test]
fn per_packet_balancers_over_paths_reorder_a_flow_and_an_ordering_layer_absorbs_it() {
    for lb in [LoadBalancing::PowerOfTwo, LoadBalancing::Spray] {
        let one = || apart(1, 200_000);
        let roce = run(triangle(Some(2)), lb, TransportConfig::roce(false), one());
        assert!(
            roce.summary.retransmissions > 0,
            "{lb:?}: reordered over two paths"
        );
        assert_eq!(roce.summary.flows_incomplete, 0, "{lb:?}");
        let irn = run(triangle(Some(2)), lb, TransportConfig::irn(), one());
        assert_eq!(irn.summary.flows_incomplete, 0, "{lb:?}");
        // One path only: the same balancer cannot reorder.
        let single = run(triangle(Some(1)), lb, TransportConfig::roce(false), one());
        assert_eq!(single.summary.retransmissions, 0, "{lb:?}");
    }
}
