//! What a run measures beyond FCT, on networks small enough to work out by hand: reordering and
//! recovery per flow (sprayed over two unequal paths, and not under ECMP), the fraction of the
//! run ports spend paused by kind of port (an incast on a star), and FCT by flow-size bucket.

mod common;

use irn_core::transport::TransportConfig;
use irn_core::{Bandwidth, Duration, Time};
use irn_sim::config::{LoadBalancing, PfcConfig, PfcThreshold, SimConfig};
use irn_sim::ids::{HostIdx, NodeId};
use irn_sim::topology::{LinkSpec, NodeKind, Topology};
use irn_sim::workload::{FlowClass, FlowSpec};
use irn_sim::RunResult;
use serde_json::{json, Value};

const RATE: Bandwidth = Bandwidth::from_gbps(40);

fn config(topology: Topology, transport: TransportConfig, flows: Vec<FlowSpec>) -> SimConfig {
    SimConfig {
        seed: 3,
        ..SimConfig::new(topology, common::lossy_switch(), transport, flows)
    }
}

fn link(a: u32, b: u32, delay_us: u64) -> LinkSpec {
    LinkSpec {
        a: NodeId(a),
        b: NodeId(b),
        rate: RATE,
        delay: Duration::from_us(delay_us),
    }
}

/// Host 0 — switch 2 — two parallel links (1 µs and 3 µs) — switch 3 — host 1.
fn two_paths() -> Topology {
    Topology::from_links(
        vec![
            NodeKind::Host,
            NodeKind::Host,
            NodeKind::Switch,
            NodeKind::Switch,
        ],
        vec![link(0, 2, 1), link(2, 3, 1), link(2, 3, 3), link(3, 1, 1)],
    )
    .unwrap()
}

/// Hosts 0, 1 and 2 on 40 Gb/s, 2 µs links to switch 3.
fn star() -> Topology {
    Topology::from_links(
        vec![
            NodeKind::Host,
            NodeKind::Host,
            NodeKind::Host,
            NodeKind::Switch,
        ],
        vec![link(0, 3, 2), link(1, 3, 2), link(2, 3, 2)],
    )
    .unwrap()
}

fn flow(src: u32, dst: u32, size_bytes: u64, start_us: u64) -> FlowSpec {
    FlowSpec {
        src: HostIdx(src),
        dst: HostIdx(dst),
        size_bytes,
        start: Time::ZERO + Duration::from_us(start_us),
        class: FlowClass::Regular,
        verb: None,
    }
}

fn run(cfg: &SimConfig) -> RunResult {
    irn_sim::run(cfg, &mut |_| {})
}

fn metrics(r: &RunResult) -> Value {
    serde_json::to_value(&r.summary).unwrap()
}

#[test]
fn spraying_counts_reordering_recoveries_and_nacks_and_ecmp_counts_none() {
    for transport in [TransportConfig::roce(false), TransportConfig::irn()] {
        let mut cfg = config(two_paths(), transport, vec![flow(0, 1, 100_000, 0)]);
        let ecmp = run(&cfg);
        let f = &ecmp.flows[0];
        assert_eq!(
            (
                f.out_of_order,
                f.max_reorder_distance,
                f.recoveries,
                f.nacks
            ),
            (0, 0, 0, 0),
            "{transport:?}"
        );
        let s = &ecmp.summary;
        assert_eq!((s.out_of_order_packets, s.recoveries, s.nacks), (0, 0, 0));

        cfg.load_balancing = LoadBalancing::Spray;
        let sprayed = run(&cfg);
        let f = &sprayed.flows[0];
        let s = &sprayed.summary;
        assert_eq!(s.flows_incomplete, 0);
        assert_eq!(s.drops, 0);
        assert!(
            f.out_of_order > 0 && f.recoveries > 0 && f.nacks > 0,
            "{f:?}"
        );
        // One flow: the summary's totals are its counts.
        assert_eq!(
            (s.out_of_order_packets, s.recoveries, s.nacks),
            (f.out_of_order, f.recoveries, f.nacks)
        );
        assert!(f.max_reorder_distance >= 1, "{f:?}");
        if transport == TransportConfig::irn() {
            // Nothing is lost and IRN keeps every out-of-order packet, so the expected packet
            // is always a first transmission still on its way. A packet overtakes it only if it
            // reaches switch 3 first: sent less than the paths' 2 µs difference after it. The
            // host sends a 1086 B frame per 217.2 ns at 40 Gb/s, so fewer than
            // 2000 / 217.2 + 1 = 10.2 new packets leave in that time: at most 10 ahead.
            assert!(f.max_reorder_distance <= 10, "{f:?}");
        }
    }
}

#[test]
fn an_incast_pauses_the_senders_nics_and_no_switch_port() {
    // Hosts 0 and 1 send 1 MB each to host 2 through the switch: its input buffers fill and
    // PFC pauses the two senders' NIC ports. Nothing pauses a switch port: hosts send no PFC.
    let flows = vec![flow(0, 2, 1_000_000, 0), flow(1, 2, 1_000_000, 0)];
    let mut cfg = config(star(), TransportConfig::roce(true), flows);
    cfg.switch.pfc = Some(PfcConfig {
        threshold: PfcThreshold::Auto,
        resume_gap_bytes: 2 * 1086,
        frames: Default::default(),
    });
    let r = run(&cfg);
    let s = &r.summary;
    assert_eq!(s.flows_incomplete, 0);
    assert!(s.pause_frames > 0, "{s:?}");
    assert_eq!(s.pause_fraction_switch_ports, Some(0.0));
    // The measured interval starts at the first arrival, t = 0, and ends with the run; the
    // switch ports paused for no time, so every paused microsecond is a host port's, and the
    // mean is over the three hosts' ports.
    let want = s.paused_time_us / (3.0 * s.sim_time_us);
    let got = s.pause_fraction_host_ports.unwrap();
    assert!(got > 0.0 && (got - want).abs() < 1e-12, "{got} vs {want}");

    // Without PFC nothing is paused.
    cfg.switch.pfc = None;
    let s = run(&cfg).summary;
    assert_eq!(
        (s.pause_fraction_switch_ports, s.pause_fraction_host_ports),
        (Some(0.0), Some(0.0))
    );
}

#[test]
fn fct_by_size_buckets_hold_the_flows_of_their_sizes() {
    // One flow at a time from host 0 to host 1, each alone. A single-packet flow of S bytes
    // crosses two 40 Gb/s hops of S + 62 B (0.2 ns a byte) and 4 µs of links: 100 B in
    // 4.0648 µs, 500 B in 4.2248 µs, 1000 B in 4.4248 µs. 3000 B is three frames (1086, 1086,
    // 1014 B), 217.2, 217.2 and 202.8 ns a hop: the switch sends each once it has arrived and
    // the one before has left, the last from 2651.6 to 2854.4 ns, so it lands at 4.8544 µs.
    let flows = vec![
        flow(0, 1, 100, 0),
        flow(0, 1, 500, 20),
        flow(0, 1, 1000, 40),
        flow(0, 1, 3000, 60),
    ];
    let mut cfg = config(star(), TransportConfig::roce(false), flows);
    cfg.fct_size_buckets = vec![600, 2_000, 5_000];
    let r = run(&cfg);
    let fcts: Vec<f64> = r.flows.iter().map(|f| f.fct_us.unwrap()).collect();
    let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
    for (got, want) in fcts.iter().zip([4.0648, 4.2248, 4.4248, 4.8544]) {
        assert!(near(*got, want), "{fcts:?}");
    }
    let m = metrics(&r);
    let buckets = m["fct_by_size"].as_array().unwrap();
    let keys = |b: &Value| {
        (
            b["min_bytes"].clone(),
            b["max_bytes"].clone(),
            b["flows"].clone(),
        )
    };
    let shape: Vec<_> = buckets.iter().map(keys).collect();
    assert_eq!(
        shape,
        [
            (json!(0), json!(600), json!(2)),
            (json!(601), json!(2000), json!(1)),
            (json!(2001), json!(5000), json!(1)),
            (json!(5001), Value::Null, json!(0)),
        ]
    );
    let stat = |i: usize, key: &str| buckets[i][key].as_f64().unwrap();
    assert!(near(stat(0, "avg_fct_us"), (4.0648 + 4.2248) / 2.0));
    assert!(near(stat(0, "p99_fct_us"), 4.2248));
    assert!(near(stat(1, "avg_fct_us"), 4.4248));
    assert!(near(stat(2, "p99_fct_us"), 4.8544));
    // Alone on its path each flow takes exactly its ideal FCT.
    for i in 0..3 {
        assert!(near(stat(i, "avg_slowdown"), 1.0), "{m:#}");
    }
    // An empty bucket has no statistics.
    for key in ["avg_fct_us", "p99_fct_us", "avg_slowdown"] {
        assert!(buckets[3][key].is_null(), "{key}: {m:#}");
    }
}

#[test]
fn jain_index_counts_the_unfinished_flows_shares_after_the_last_arrival() {
    // Two 10 MB flows on disjoint paths (0 → 2 from 0 µs, 1 → 0 from 50 µs), cut off 200 µs
    // after the second arrives: each sends at line rate, so from the last arrival both deliver
    // about 200 µs of line rate (the second a few microseconds less, its first packet still on
    // its way), and the index is close to 1.
    let flows = vec![flow(0, 2, 10_000_000, 0), flow(1, 0, 10_000_000, 50)];
    let mut cfg = config(star(), TransportConfig::irn(), flows);
    cfg.drain_limit = Duration::from_us(200);
    let r = run(&cfg);
    assert_eq!(r.summary.flows_incomplete, 2);
    let jain = r.summary.jain_index.unwrap();
    assert!(jain > 0.999 && jain <= 1.0, "{jain}");
    assert!(metrics(&r).get("jain_index").is_some());

    // Every flow finishes: no long-lived flows, no index, and no key in summary.json.
    let flows = vec![flow(0, 2, 100_000, 0), flow(1, 0, 100_000, 50)];
    let r = run(&config(star(), TransportConfig::irn(), flows));
    assert_eq!(r.summary.jain_index, None);
    assert!(metrics(&r).get("jain_index").is_none());
}

/// `arrival_goodput_gbps` counts what is delivered between the first and the last measured
/// arrival, not the drain: a 10 KB flow at 0 and a 1 B flow at 100 µs, both done long before a
/// last 1 B flow at 300 µs, are 10,001 B in 300 µs exactly, whatever the drain after;
/// `goodput_gbps` divides all three by the whole run. With the warm-up past the first flow, the
/// window runs between the other two.
#[test]
fn arrival_goodput_counts_the_window_of_arrivals_not_the_drain() {
    let flows = || {
        vec![
            flow(0, 1, 10_000, 0),
            flow(2, 1, 1, 100),
            flow(0, 2, 1, 300),
        ]
    };
    let cfg = || config(star(), TransportConfig::irn(), flows());
    let r = run(&cfg());
    // The third flow starts at 300 µs: the window is 0 to 300 µs, 10,001 B.
    let s = &r.summary;
    assert_eq!(s.arrival_goodput_gbps, Some(10_001.0 * 8.0 / 300_000.0));
    let end_ns = s.sim_time_us * 1e3;
    assert!(
        (s.goodput_gbps - 10_002.0 * 8.0 / end_ns).abs() < 1e-12,
        "{s:?}"
    );
    let late = SimConfig {
        warmup: Duration::from_us(50),
        ..cfg()
    };
    // From the 1 B flow at 100 µs to the last at 300 µs: the 1 B is delivered in between.
    assert_eq!(
        run(&late).summary.arrival_goodput_gbps,
        Some(8.0 / 200_000.0)
    );
    // One measured arrival has no window.
    let single = SimConfig {
        warmup: Duration::from_us(200),
        ..cfg()
    };
    assert_eq!(run(&single).summary.arrival_goodput_gbps, None);
    assert!(metrics(&run(&single)).get("arrival_goodput_gbps").is_none());
}
