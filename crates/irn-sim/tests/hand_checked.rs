//! Small networks whose outcomes can be worked out by hand: exact FCTs, PFC that never drops,
//! tail drop that IRN recovers from, and byte-identical reruns.

mod common;

use common::{flow, input_queued_switch};
use irn_core::transport::{RtoPolicy, TransportConfig};
use irn_core::Psn;
use irn_core::{Bandwidth, Duration};
use irn_sim::config::{InitialPsn, PfcHeadroom, Scheduling, SimConfig, SwitchModel};
use irn_sim::ids::NodeId;
use irn_sim::topology::{LinkSpec, NodeKind, Topology};
use irn_sim::workload::FlowSpec;
use irn_sim::RunResult;

const RATE: Bandwidth = Bandwidth::from_gbps(40);
const DELAY: Duration = Duration::from_us(2);

fn config(
    topology: Topology,
    transport: TransportConfig,
    buffer_bytes: u64,
    pfc: bool,
    flows: Vec<FlowSpec>,
) -> SimConfig {
    SimConfig {
        seed: 7,
        ..SimConfig::new(
            topology,
            input_queued_switch(buffer_bytes, pfc),
            transport,
            flows,
        )
    }
}

fn run(cfg: &SimConfig) -> RunResult {
    irn_sim::run(cfg, &mut |_| {})
}

/// 1086 B (1024 B payload + 62 B framing) at 40 Gb/s.
const FULL: u64 = 217_200;

#[test]
fn one_flow_through_one_switch_has_the_analytic_fct() {
    // (size, expected FCT in ps): every packet is serialized at the sender, the last one once
    // more at the switch (store-and-forward), plus two link delays.
    let cases: &[(u64, u64)] = &[
        // 10 full packets: 10 × 217.2 ns at the NIC, +217.2 ns at the switch, +2 × 2 us.
        (10 * 1024, 11 * FULL + 4_000_000),
        // One 100 B packet (162 B on the wire): 32.4 ns twice, + 4 us.
        (100, 2 * 32_400 + 4_000_000),
        // 2 packets, the last 476 B (538 B on the wire): the switch is still sending the first
        // packet when the second arrives, so it goes out right after it.
        (1500, FULL + 107_600 + FULL + 4_000_000 - 107_600 + 107_600),
    ];
    for transport in [
        TransportConfig::irn(),
        TransportConfig::roce(true),
        TransportConfig::roce(false),
    ] {
        for &(size, want_ps) in cases {
            let cfg = config(
                Topology::star(2, RATE, DELAY).unwrap(),
                transport,
                240_000,
                false,
                vec![flow(0, 1, size)],
            );
            let r = run(&cfg);
            let f = &r.flows[0];
            let want_us = want_ps as f64 / 1e6;
            assert_eq!(f.fct_us, Some(want_us), "{size} B over {transport:?}");
            assert_eq!(f.ideal_fct_us, want_us, "ideal FCT of {size} B");
            assert_eq!(f.slowdown, Some(1.0));
            // The last ACK (64 B) comes back over two hops after the last data packet arrives.
            let ack_ps = 2 * 12_800 + 4_000_000;
            assert_eq!(f.sender_fct_us, Some((want_ps + ack_ps) as f64 / 1e6));
            assert_eq!(r.summary.drops, 0);
            assert_eq!(r.summary.retransmissions, 0);
        }
    }
}

#[test]
fn two_flows_share_a_bottleneck_round_robin() {
    // Two 100-packet flows from different hosts into one: the switch output alternates between
    // the two inputs, so both finish at about twice the time of one.
    let flows = vec![flow(0, 2, 100 * 1024), flow(1, 2, 100 * 1024)];
    let cfg = config(
        Topology::star(3, RATE, DELAY).unwrap(),
        TransportConfig::irn(),
        10_000_000,
        false,
        flows,
    );
    let r = run(&cfg);
    let fcts: Vec<f64> = r.flows.iter().map(|f| f.fct_us.unwrap()).collect();
    // All 200 packets cross the bottleneck back to back after the first arrives at the switch.
    let last_done_ps = FULL + 200 * FULL + 4_000_000;
    assert_eq!(
        fcts.iter().cloned().fold(0.0, f64::max),
        last_done_ps as f64 / 1e6
    );
    // Round-robin: the other flow finishes one packet earlier.
    assert_eq!(
        fcts.iter().cloned().fold(f64::MAX, f64::min),
        (last_done_ps - FULL) as f64 / 1e6
    );
}

/// `n` senders, each with `per_sender` flows of 300 KB, into host 0.
fn incast(
    n: u32,
    per_sender: u32,
    transport: TransportConfig,
    buffer: u64,
    pfc: bool,
) -> RunResult {
    let flows = (1..=n)
        .flat_map(|s| (0..per_sender).map(move |_| flow(s, 0, 300_000)))
        .collect();
    let cfg = config(
        Topology::star(n + 1, RATE, DELAY).unwrap(),
        transport,
        buffer,
        pfc,
        flows,
    );
    run(&cfg)
}

#[test]
fn incast_with_pfc_drops_nothing_and_pauses() {
    // IRN's BDP cap keeps one flow under the threshold (110 × 1086 B < 218 KB), so its senders
    // run three flows each.
    for transport in [TransportConfig::roce(true), TransportConfig::irn()] {
        let r = incast(8, 3, transport, 240_000, true);
        let s = &r.summary;
        assert_eq!(s.drops, 0, "{transport:?}");
        assert!(s.pause_frames > 0, "{transport:?}: {s:?}");
        assert!(s.resume_frames > 0);
        assert!(s.paused_time_us > 0.0);
        assert_eq!(s.flows_incomplete, 0);
        assert!(s.peak_buffer_bytes <= 240_000);
        // 24 × 300 KB through one 40 Gb/s link takes at least 1440 us.
        assert!(s.p99_fct_us.unwrap() > 1440.0, "{s:?}");
    }
}

#[test]
fn incast_without_pfc_drops_and_irn_still_completes() {
    for transport in [
        TransportConfig::irn(),
        TransportConfig::irn_go_back_n(),
        TransportConfig::irn_without_sack(),
        TransportConfig::irn_without_bdp_fc(),
        TransportConfig::roce(false),
    ] {
        let r = incast(8, 1, transport, 30_000, false);
        let s = &r.summary;
        assert!(s.drops > 0, "{transport:?}: {s:?}");
        assert!(s.retransmissions > 0);
        assert_eq!(s.pause_frames, 0);
        assert_eq!(s.flows_incomplete, 0, "{transport:?}: {s:?}");
        assert!(r
            .flows
            .iter()
            .all(|f| f.fct_us.is_some() && f.sender_fct_us.is_some()));
    }
}

#[test]
fn where_psns_start_changes_nothing_even_across_the_wrap() {
    // A lossy incast: drops, NACKs, go-back-N rewinds, selective retransmissions and timeouts,
    // with every flow's 293 packets starting at 0, just below the 24-bit wrap, or seeded.
    for transport in [
        TransportConfig::irn(),
        TransportConfig::irn_go_back_n(),
        TransportConfig::irn_without_sack(),
        TransportConfig::roce(false),
        TransportConfig::tcp(),
    ] {
        let results: Vec<RunResult> = [
            InitialPsn::Fixed(Psn::ZERO),
            InitialPsn::Fixed(Psn::new(0xFF_FF00)),
            InitialPsn::Seeded,
        ]
        .into_iter()
        .map(|initial_psn| {
            let flows = (1..=8).map(|s| flow(s, 0, 300_000)).collect();
            let topology = Topology::star(9, RATE, DELAY).unwrap();
            let mut cfg = config(topology, transport, 30_000, false, flows);
            cfg.initial_psn = initial_psn;
            run(&cfg)
        })
        .collect();
        let s = &results[0].summary;
        assert!(s.drops > 0 && s.retransmissions > 0, "{transport:?}: {s:?}");
        assert_eq!(s.flows_incomplete, 0, "{transport:?}");
        for r in &results[1..] {
            assert_eq!(r.summary, results[0].summary, "{transport:?}");
            assert_eq!(format!("{:?}", r.flows), format!("{:?}", results[0].flows));
        }
    }
}

#[test]
fn same_seed_same_results() {
    let build = || {
        let topo = Topology::fat_tree(4, RATE, DELAY).unwrap();
        let hosts = topo.hosts().len() as u32;
        let dist = irn_sim::workload::SizeDist::Cdf(irn_sim::workload::Cdf::irn_default());
        let flows = irn_sim::workload::poisson(hosts, RATE, 0.7, &dist, Duration::from_us(300), 11);
        config(topo, TransportConfig::irn(), 60_000, false, flows)
    };
    let (a, b) = (run(&build()), run(&build()));
    assert!(
        a.summary.drops > 0,
        "the test should exercise loss: {:?}",
        a.summary
    );
    assert_eq!(a.summary, b.summary);
    let rows = |r: &RunResult| format!("{:?}", r.flows);
    assert_eq!(rows(&a), rows(&b));
}

/// The shared-buffer switch: the same incast into one output of a star.
fn shared_incast(transport: TransportConfig, buffer: u64, pfc: bool) -> RunResult {
    let flows = (1..=8)
        .flat_map(|s| (0..3).map(move |_| flow(s, 0, 300_000)))
        .collect();
    let mut cfg = config(
        Topology::star(9, RATE, DELAY).unwrap(),
        transport,
        buffer,
        pfc,
        flows,
    );
    cfg.switch.model = SwitchModel::SharedBuffer {
        ingress_alpha: 0.125,
        egress_alpha: (!pfc).then_some(0.125),
        scheduling: Scheduling::Fifo,
        pfc_headroom: PfcHeadroom::OnPause,
        alpha_per_rate: false,
    };
    run(&cfg)
}

#[test]
fn shared_buffer_switch_with_pfc_is_lossless() {
    for transport in [TransportConfig::roce(true), TransportConfig::irn()] {
        let r = shared_incast(transport, 1_000_000, true);
        let s = &r.summary;
        assert_eq!(s.drops, 0, "{transport:?}: {s:?}");
        assert!(
            s.pause_frames > 0 && s.resume_frames > 0,
            "{transport:?}: {s:?}"
        );
        assert_eq!(s.flows_incomplete, 0);
        assert!(s.peak_buffer_bytes <= 1_000_000);
        // 24 × 300 KB through one 40 Gb/s link takes at least 1440 us.
        assert!(s.p99_fct_us.unwrap() > 1440.0, "{s:?}");
    }
}

#[test]
fn shared_buffer_switch_without_pfc_drops_and_irn_recovers() {
    for transport in [TransportConfig::irn(), TransportConfig::roce(false)] {
        let r = shared_incast(transport, 1_000_000, false);
        let s = &r.summary;
        assert!(s.drops > 0, "{transport:?}: {s:?}");
        assert_eq!(s.pause_frames, 0);
        assert_eq!(s.flows_incomplete, 0, "{transport:?}: {s:?}");
        // The dynamic threshold keeps one queue to alpha / (1 + alpha) of the buffer.
        assert!(s.peak_buffer_bytes <= 1_000_000 / 9 + 1086, "{s:?}");
    }
}

/// Host 0 — switch — host 1, where host 0's link has `delay` at [`RATE`] and host 1's is a
/// 10 Mb/s link that barely drains the switch (a full frame takes 869 µs).
fn slow_exit(delay: Duration) -> Topology {
    let link = |a, b, rate, delay| LinkSpec {
        a: NodeId(a),
        b: NodeId(b),
        rate,
        delay,
    };
    Topology::from_links(
        vec![NodeKind::Host, NodeKind::Host, NodeKind::Switch],
        vec![
            link(0, 2, RATE, delay),
            link(2, 1, Bandwidth::from_bps(10_000_000), DELAY),
        ],
    )
    .unwrap()
}

#[test]
fn a_run_cut_off_mid_frame_counts_only_what_it_sent_by_the_end() {
    // The drain limit (50 µs) stops the run after its last event, the last of 100 frames
    // reaching the switch at 23.72 µs, while the slow port is 21.5 µs into an 869 µs frame.
    let mut cfg = config(
        slow_exit(DELAY),
        TransportConfig::roce(true),
        240_000,
        true,
        vec![flow(0, 1, 100 * 1024)],
    );
    cfg.drain_limit = Duration::from_us(50);
    let s = run(&cfg).summary;
    assert_eq!((s.flows_incomplete, s.sim_time_us), (1, 23.72));
    // Host 0's port sent for 21.72 µs, the slow port from 2.2172 µs on, the other two (towards
    // host 0, no ACK having come back yet, and host 1's) not at all. Counted in whole bytes:
    // one byte is 3 % of what the slow port can send in 23.72 µs.
    let want = (21.72 + (23.72 - 2.2172)) / 23.72 / 4.0;
    assert!(
        (s.link_utilization - want).abs() < 0.01,
        "{} vs {want}: {s:?}",
        s.link_utilization
    );
}

/// PFC's worst case, on both switch models: the input barely drains, the upstream NIC sends
/// full frames back to back, and the link delay is set so that the NIC starts a frame half a
/// PAUSE-frame time before the PAUSE lands, which it then finishes. Over every buffer size
/// across one frame (so the frame that crosses the threshold overshoots it by every amount),
/// nothing may be dropped. Without the PAUSE frame's 64 B in the headroom, the input-queued
/// switch drops a frame at the worst of them.
#[test]
fn pfc_headroom_covers_the_worst_phase() {
    // 40 Gb/s: a 1086 B frame takes 217.2 ns and the 64 B PAUSE 12.8 ns. After the frame that
    // crosses the threshold, the NIC starts the frames that begin before the PAUSE reaches it,
    // 2 × delay + 12.8 ns later: ten of them when 2 × delay is 9 frame times less 6.4 ns.
    let topology = slow_exit(Duration::from_ps((9 * FULL - 6_400) / 2));
    for model in [
        SwitchModel::InputQueued,
        SwitchModel::SharedBuffer {
            ingress_alpha: 1.0,
            egress_alpha: None,
            scheduling: Scheduling::Fifo,
            pfc_headroom: PfcHeadroom::OnPause,
            alpha_per_rate: false,
        },
    ] {
        for buffer in 40_000..40_000 + 1086 {
            let mut cfg = config(
                topology.clone(),
                TransportConfig::roce(true),
                buffer,
                true,
                vec![flow(0, 1, 100 * 1024)],
            );
            cfg.switch.model = model;
            cfg.drain_limit = Duration::from_us(50);
            let s = run(&cfg).summary;
            assert!(s.pause_frames > 0, "{model:?}, {buffer} B: {s:?}");
            assert_eq!(s.drops, 0, "{model:?}, {buffer} B: {s:?}");
        }
    }
}

/// A late duplicate, one that reaches the receiver after its flow has ended, is answered and
/// counted: the receiver stays until none of its flow's data packets is left in the network.
///
/// Host 0 sends 3 packets (1086, 1086 and 1014 B on the wire) to host 2 over 2 µs links, with
/// IRN's RTO_low cut to 5 µs, under the 8.88 µs round trip: the last packet reaches host 2 at
/// 0.6372 + 2 + 0.2028 (behind the second at the switch until 2.6516) + 2 = 4.8544 µs, its
/// ACK (12.8 ns a hop) is back at 8.88 µs, when the flow ends. The timeout at 5 µs resent the
/// first packet, which reaches host 2 at 5 + 0.2172 + 2 + 0.2172 + 2 = 9.4344 µs, after the
/// end. Host 1 sends 100 packets to host 3 over 100 ns links meanwhile, so the run goes on.
#[test]
fn a_late_duplicate_after_the_flows_end_is_answered() {
    let link = |a, b, delay| LinkSpec {
        a: NodeId(a),
        b: NodeId(b),
        rate: RATE,
        delay,
    };
    let short = Duration::from_ns(100);
    let topology = Topology::from_links(
        [vec![NodeKind::Host; 4], vec![NodeKind::Switch]].concat(),
        vec![
            link(0, 4, DELAY),
            link(2, 4, DELAY),
            link(1, 4, short),
            link(3, 4, short),
        ],
    )
    .unwrap();
    let with_rto_low = |low| {
        let transport = TransportConfig {
            rto: RtoPolicy::Dual {
                low,
                high: TransportConfig::DEFAULT_RTO_HIGH,
                n: TransportConfig::DEFAULT_RTO_LOW_N,
            },
            ..TransportConfig::irn()
        };
        let flows = vec![flow(0, 2, 3000), flow(1, 3, 100 * 1024)];
        run(&config(topology.clone(), transport, 240_000, false, flows))
    };
    let (late, none) = (with_rto_low(Duration::from_us(5)), with_rto_low(DELAY * 50));
    for r in [&late, &none] {
        assert_eq!(r.flows[0].fct_us, Some(4.8544));
        assert_eq!(r.flows[0].sender_fct_us, Some(8.88));
        assert_eq!(r.summary.flows_incomplete, 0);
    }
    assert_eq!(
        (late.flows[0].retransmissions, late.flows[0].timeouts),
        (1, 1)
    );
    assert_eq!(none.flows[0].retransmissions, 0);
    let other = |r: &RunResult| format!("{:?}", r.flows[1]);
    assert_eq!(other(&late), other(&none), "the other flow's path is apart");
    // Received at 9.4344 µs, counted as a duplicate and answered with one ACK more.
    assert!(late.summary.sim_time_us > 9.4344);
    assert_eq!(
        (
            late.summary.duplicate_packets,
            none.summary.duplicate_packets
        ),
        (1, 0)
    );
    let acks = |r: &RunResult| r.summary.control_bytes.ack;
    assert_eq!(acks(&late), acks(&none) + 64);
}
