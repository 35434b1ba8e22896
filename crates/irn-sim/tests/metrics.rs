//! The summary's statistics and `fct.txt` on runs small enough to work out by hand: an incast
//! cut off by the drain limit (no RCT, censored statistics), a run without single-packet flows,
//! utilization of a trace that starts late, the measured flows between a warm-up and a
//! cool-down, and ns-3's FCT semantics.
//!
//! Summary values are read from the JSON `summary.json` is written from, where a missing value
//! is `null` rather than a zero.

use irn_core::transport::TransportConfig;
use irn_core::{Bandwidth, Duration, Time};
use irn_sim::config::{PfcConfig, PfcThreshold, SimConfig, SwitchConfig, SwitchModel};
use irn_sim::ids::{HostIdx, NodeId};
use irn_sim::topology::{LinkSpec, NodeKind, Topology};
use irn_sim::workload::{FlowClass, FlowSpec};
use irn_sim::RunResult;
use serde_json::Value;

const RATE: Bandwidth = Bandwidth::from_gbps(40);
const DELAY: Duration = Duration::from_us(2);

/// RoCE with PFC (no retransmission timer, so no event after the last packet) on an
/// input-queued switch with room for everything.
fn config(topology: Topology, flows: Vec<FlowSpec>) -> SimConfig {
    SimConfig {
        seed: 7,
        ..SimConfig::new(
            topology,
            SwitchConfig {
                model: SwitchModel::InputQueued,
                buffer_bytes: 240_000,
                pfc: Some(PfcConfig {
                    threshold: PfcThreshold::Auto,
                    resume_gap_bytes: 2 * 1086,
                    frames: Default::default(),
                }),
                ecn: None,
            },
            TransportConfig::roce(true),
            flows,
        )
    }
}

fn flow(src: u32, dst: u32, size_bytes: u64, start: Time, class: FlowClass) -> FlowSpec {
    FlowSpec {
        src: HostIdx(src),
        dst: HostIdx(dst),
        size_bytes,
        start,
        class,
        verb: None,
    }
}

fn run(cfg: &SimConfig) -> RunResult {
    irn_sim::run(cfg, &mut |_| {})
}

fn metrics(r: &RunResult) -> Value {
    serde_json::to_value(&r.summary).unwrap()
}

/// Host A (0) and host B (1) on 40 Gb/s links to a switch (3), host C (2) on a 10 Mb/s link
/// from it, every link 2 µs long: a 100 B packet to C takes 129.6 µs on its last link.
fn fast_and_slow() -> Topology {
    let link = |a, b, rate| LinkSpec {
        a: NodeId(a),
        b: NodeId(b),
        rate,
        delay: DELAY,
    };
    Topology::from_links(
        vec![
            NodeKind::Host,
            NodeKind::Host,
            NodeKind::Host,
            NodeKind::Switch,
        ],
        vec![
            link(0, 3, RATE),
            link(1, 3, RATE),
            link(3, 2, Bandwidth::from_bps(10_000_000)),
        ],
    )
    .unwrap()
}

#[test]
fn an_incast_cut_off_by_the_drain_limit_has_no_rct_and_its_censored_statistics_are_exact() {
    // Two 100 B incast flows from A at t = 0: to B (done at 4.0648 µs: 162 B at 40 Gb/s twice,
    // 32.4 ns each, plus 4 µs; its 64 B ACK is back at A at 8.0904 µs) and to C, which the
    // drain limit (50 µs) cuts off while the slow link serializes it (until 131.6972 µs). The
    // run's last event is the ACK's arrival, so the run ends at 8.0904 µs.
    let flows = vec![
        flow(0, 1, 100, Time::ZERO, FlowClass::Incast),
        flow(0, 2, 100, Time::ZERO, FlowClass::Incast),
    ];
    let mut cfg = config(fast_and_slow(), flows);
    cfg.drain_limit = Duration::from_us(50);
    let r = run(&cfg);
    let m = metrics(&r);
    assert_eq!(m["sim_time_us"], 8.0904, "{m:#}");
    // Link crossings: the packet to B and its ACK, two links each, and the packet to C's
    // first link (the slow one still serializes it).
    assert_eq!(r.packet_hops, 5);
    assert_eq!(
        (m["flows_measured"].as_u64(), m["flows_incomplete"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(r.flows[0].fct_us, Some(4.0648));
    assert_eq!(m["avg_fct_us"], 4.0648);
    assert_eq!(m["avg_slowdown"], 1.0);

    // One incast flow is unfinished: the request's completion is unknown.
    assert!(m["rct_us"].is_null(), "{m:#}");
    // The flow to C alone: 162 B at 10 Mb/s (129.6 µs) + 32.4 ns store-and-forward at 40 Gb/s
    // + 4 µs.
    let ideal_ps = 129_600_000 + 32_400 + 4_000_000;
    let ideal = ideal_ps as f64 / 1e6;
    assert_eq!(r.flows[1].ideal_fct_us, ideal);
    // Censored: the request at the run's end, 8.0904 − 0 µs; the unfinished flow at the larger
    // of that and its ideal FCT, since it cannot finish sooner than alone (a slowdown of 1):
    // lower bounds.
    assert_eq!(m["censored_rct_us"], 8.0904);
    assert_eq!(m["censored_avg_fct_us"], (4.0648 + ideal) / 2.0);
    assert_eq!(m["censored_p99_fct_us"], ideal);
    assert_eq!(m["censored_avg_slowdown"], 1.0);
}

/// A run that stops before any flow finishes has no statistics of finished flows (`null`, not
/// 0), and its censored slowdowns are never below 1.
#[test]
fn a_run_with_no_finished_flow_has_null_statistics() {
    let mut cfg = config(
        fast_and_slow(),
        vec![flow(0, 2, 100, Time::ZERO, FlowClass::Regular)],
    );
    cfg.drain_limit = Duration::ZERO;
    let r = run(&cfg);
    let m = metrics(&r);
    assert_eq!(m["flows_incomplete"], 1, "{m:#}");
    for key in [
        "avg_slowdown",
        "p50_slowdown",
        "p99_slowdown",
        "avg_fct_us",
        "p99_fct_us",
    ] {
        assert!(m[key].is_null(), "{key}: {m:#}");
    }
    assert_eq!(m["censored_avg_slowdown"], 1.0, "{m:#}");
    assert_eq!(m["censored_avg_fct_us"], r.flows[0].ideal_fct_us);
}

#[test]
fn censored_statistics_equal_the_plain_ones_when_every_flow_finishes() {
    let flows = vec![
        flow(0, 1, 100, Time::ZERO, FlowClass::Incast),
        flow(0, 1, 3000, Time::ZERO, FlowClass::Incast),
    ];
    let m = metrics(&run(&config(fast_and_slow(), flows)));
    assert_eq!(m["flows_incomplete"], 0);
    for (plain, censored) in [
        ("avg_slowdown", "censored_avg_slowdown"),
        ("avg_fct_us", "censored_avg_fct_us"),
        ("p99_fct_us", "censored_p99_fct_us"),
        ("rct_us", "censored_rct_us"),
    ] {
        assert!(m[plain].as_f64().unwrap() > 0.0, "{plain}: {m:#}");
        assert_eq!(m[plain], m[censored], "{plain}");
    }
}

#[test]
fn single_packet_statistics_are_null_without_single_packet_flows() {
    let keys = [
        "single_packet_avg_fct_us",
        "single_packet_p90_fct_us",
        "single_packet_p95_fct_us",
        "single_packet_p99_fct_us",
        "single_packet_p999_fct_us",
    ];
    let star = || Topology::star(2, RATE, DELAY).unwrap();
    let two_packets = flow(0, 1, 1025, Time::ZERO, FlowClass::Regular);
    let m = metrics(&run(&config(star(), vec![two_packets])));
    assert_eq!(m["single_packet_flows"], 0);
    for key in keys {
        assert!(m[key].is_null(), "{key}: {m:#}");
    }
    // One MTU is one packet: 1086 B at 40 Gb/s twice (217.2 ns each) + 4 µs.
    let one_packet = flow(0, 1, 1024, Time::ZERO, FlowClass::Regular);
    let m = metrics(&run(&config(star(), vec![one_packet])));
    assert_eq!(m["single_packet_flows"], 1);
    for key in keys {
        assert_eq!(m[key], 4.4344, "{key}");
    }
}

/// Three one-packet flows at 0, 10 and 20 µs: a warm-up leaves out the flows that start
/// before it, a cool-down (`measure_until`) those that start at or after it; both still run.
#[test]
fn the_warm_up_and_the_cool_down_bound_the_measured_flows() {
    let star = || Topology::star(2, RATE, DELAY).unwrap();
    let at = |us| Time::ZERO + Duration::from_us(us);
    let flows: Vec<_> = [0, 10, 20]
        .into_iter()
        .map(|us| flow(0, 1, 1024, at(us), FlowClass::Regular))
        .collect();
    // (warm-up, measure until) → which flows are measured.
    for (warmup_us, until_us, measured) in [
        (0, None, [true, true, true]),
        (10, None, [false, true, true]),
        (0, Some(20), [true, true, false]),
        (5, Some(15), [false, true, false]),
        (0, Some(21), [true, true, true]),
    ] {
        let mut cfg = config(star(), flows.clone());
        cfg.warmup = Duration::from_us(warmup_us);
        cfg.measure_until = until_us.map(Duration::from_us);
        let r = run(&cfg);
        let case = format!("warm-up {warmup_us} us, until {until_us:?} us");
        assert_eq!(
            r.flows.iter().map(|f| f.measured).collect::<Vec<_>>(),
            measured,
            "{case}"
        );
        let m = metrics(&r);
        let n = measured.iter().filter(|&&b| b).count();
        assert_eq!(m["flows_measured"], n, "{case}");
        assert_eq!(m["flows_incomplete"], 0, "{case}: every flow still runs");
    }
}

#[test]
fn utilization_is_measured_from_the_first_arrival() {
    // The same two flows, at 0 and 3 µs, then 2 s later (as ns-3 flow files start them).
    let flows = |offset: Duration| {
        vec![
            flow(0, 1, 10 * 1024, Time::ZERO + offset, FlowClass::Regular),
            flow(
                0,
                1,
                100,
                Time::from_ps(3_000_000) + offset,
                FlowClass::Regular,
            ),
        ]
    };
    let star = || Topology::star(2, RATE, DELAY).unwrap();
    let at_zero = run(&config(star(), flows(Duration::ZERO))).summary;
    let late = run(&config(star(), flows(Duration::from_ms(2000)))).summary;
    // The simulated clock still counts from 0.
    assert!((late.sim_time_us - at_zero.sim_time_us - 2e6).abs() < 1e-6);
    assert!(at_zero.link_utilization > 0.05, "{at_zero:?}");
    assert_eq!(late.link_utilization, at_zero.link_utilization);
}

#[test]
fn fct_txt_has_ns3s_sender_side_fct_ideal_and_start() {
    // ns-3 prints a flow when its sender has every byte acknowledged; irn's flows.csv keeps
    // the receiver's FCT. Starts print as ns-3 holds them, rounded down: 1 µs as 999 ns (the
    // nearest double to 0.000001 is below it), 20 µs as 19999 ns (ns-3 keeps 64 bits of the
    // double's fraction of a second, a little less than 0.00002).
    let start = Time::from_ps(1_000_000);
    let flows = vec![
        flow(0, 1, 100, start, FlowClass::Regular),
        flow(
            0,
            1,
            10 * 1024,
            Time::from_ps(20_000_000),
            FlowClass::Regular,
        ),
    ];
    let r = run(&config(Topology::star(2, RATE, DELAY).unwrap(), flows));
    // 100 B: 162 B at 40 Gb/s twice + 4 µs; the 64 B ACK takes 2 × 12.8 ns + 4 µs back.
    assert_eq!(r.flows[0].fct_us, Some(4.0648));
    assert_eq!(r.flows[0].sender_fct_us, Some(8.0904));
    // 10 packets: 11 × 217.2 ns + 4 µs, and the ACK's 4.0256 µs.
    assert_eq!(r.flows[1].sender_fct_us, Some(10.4148));
    assert_eq!(r.fct.len(), 2);
    let lines: Vec<(u64, u64, u64)> = r
        .fct
        .iter()
        .map(|f| (f.start_ns, f.fct_ns, f.ideal_fct_ns))
        .collect();
    // ns-3's ideal: base RTT = 2 × 4000 ns of links + per hop floor(1024 B × 8 / 40 Gb/s) =
    // 204 ns twice = 8408 ns, plus (size + packets × 62 B) × 8 / 40 Gb/s, rounded down:
    // 162 B → 32 ns, 10240 + 620 B → 2172 ns.
    assert_eq!(
        lines,
        vec![(999, 8090, 8408 + 32), (19_999, 10_415, 8408 + 2172)]
    );
}

#[test]
fn fct_txt_leaves_out_a_flow_whose_sender_saw_no_last_ack() {
    // The flow to B is received at 4.0648 µs, but the drain limit (5 µs after the last start)
    // ends the run before its ACK is back (8.0904 µs): ns-3 would not print it either.
    let flows = vec![flow(0, 1, 100, Time::ZERO, FlowClass::Regular)];
    let mut cfg = config(fast_and_slow(), flows);
    cfg.drain_limit = Duration::from_us(5);
    let r = run(&cfg);
    assert_eq!(r.flows[0].fct_us, Some(4.0648));
    assert_eq!(r.flows[0].sender_fct_us, None);
    assert!(r.fct.is_empty(), "{:?}", r.fct);
}
