//! InfiniBand credit flow control in the simulator, on networks worked by hand: an incast that
//! loses nothing, an input that never holds more than its buffer, and a long link whose
//! throughput a window caps at one window per round trip.
//!
//! (The counters' arithmetic has its property test in `irn_sim::credits`; the debug builds these
//! tests run in also check, at every flow-control packet, that the receiver's ABR agrees with the
//! sender's FCTBS.)

mod common;

use common::{flow, long_line};
use irn_core::transport::TransportConfig;
use irn_core::{Bandwidth, Duration};
use irn_sim::config::{SimConfig, SwitchConfig, SwitchModel};
use irn_sim::credits::CreditConfig;
use irn_sim::ids::NodeId;
use irn_sim::topology::{LinkSpec, NodeKind, Topology};
use irn_sim::workload::FlowSpec;
use irn_sim::RunResult;

/// `flows` over `topology`, input-queued switches of `buffer` bytes per input, no PFC, `credits`.
fn config(
    topology: Topology,
    transport: TransportConfig,
    buffer: u64,
    credits: CreditConfig,
    flows: Vec<FlowSpec>,
) -> SimConfig {
    let switch = SwitchConfig {
        model: SwitchModel::InputQueued,
        buffer_bytes: buffer,
        pfc: None,
        ecn: None,
    };
    let mut cfg = SimConfig::new(topology, switch, transport, flows);
    cfg.credits = Some(credits);
    cfg
}

fn run(cfg: &SimConfig) -> RunResult {
    irn_sim::run(cfg, &mut |_| {})
}

fn link(a: u32, b: u32, rate: Bandwidth, delay: Duration) -> LinkSpec {
    LinkSpec {
        a: NodeId(a),
        b: NodeId(b),
        rate,
        delay,
    }
}

/// Eight senders of 300 KB into one host of a 40 Gb/s star, 30 KB per switch input (tail drop
/// loses packets there without credits): with credits nothing is lost, under every transport,
/// and each sender waits for credit.
#[test]
fn an_incast_with_credits_loses_nothing_and_finishes() {
    let star = || Topology::star(9, Bandwidth::from_gbps(40), Duration::from_us(2)).unwrap();
    let flows = || (1..=8).map(|s| flow(s, 0, 300_000)).collect::<Vec<_>>();
    for transport in [
        TransportConfig::irn(),
        TransportConfig::roce(true),
        TransportConfig::irn_go_back_n(),
    ] {
        let cfg = config(star(), transport, 30_000, CreditConfig::default(), flows());
        let s = run(&cfg).summary;
        let name = format!("{transport:?}");
        assert_eq!(
            (s.drops, s.retransmissions, s.timeouts),
            (0, 0, 0),
            "{name}"
        );
        assert_eq!(s.flows_incomplete, 0, "{name}");
        assert!(
            s.peak_buffer_bytes <= 30_000,
            "{name}: {}",
            s.peak_buffer_bytes
        );
        assert!(
            s.credit_frames > 0 && s.paused_time_us > 0.0,
            "{name}: {s:?}"
        );
        assert_eq!((s.pause_frames, s.resume_frames), (0, 0), "{name}");
        // 2.4 MB through one 40 Gb/s link: at least 8 × 293 frames of 217.2 ns.
        assert!(
            s.p99_fct_us.unwrap() > 8.0 * 293.0 * 0.2172,
            "{name}: {s:?}"
        );
    }
}

/// One sender at 40 Gb/s, 1 µs away, into a switch input of `blocks` 64-byte blocks whose output
/// is a 10 Gb/s link: the input never holds more than its buffer, and the flow's time is the
/// credit loop's.
///
/// A packet leaves the input when the slow link starts it, which frees its 17 blocks; the input
/// sends its limit at once (`update_blocks` = 17), 12.8 ns of 64 B frame and 1 µs away, and the
/// NIC's next frame takes 217.2 ns and 1 µs more: 2.23 µs from one departure to the next
/// arrival. An input of 17 blocks holds one frame, so each frame waits for that loop and 100
/// frames take 99 loops and the first frame's way. With room for five frames the loop is
/// covered (the slow link sends 2.57 frames in 2.23 µs), and the slow link never idles:
/// 100 × 868.8 ns.
#[test]
fn an_input_never_holds_more_than_its_buffer() {
    let topology = Topology::from_links(
        vec![NodeKind::Host, NodeKind::Host, NodeKind::Switch],
        vec![
            link(0, 2, Bandwidth::from_gbps(40), Duration::from_us(1)),
            link(2, 1, Bandwidth::from_gbps(10), Duration::from_ns(200)),
        ],
    )
    .unwrap();
    let slow = 100.0 * 0.8688;
    let first = 0.2172 + 1.0 + 0.8688 + 0.2;
    // (blocks, FCT at least, FCT at most, in µs)
    let cases = [
        (17u64, 99.0 * 2.23 + first, 99.0 * 2.23 + first + 3.0),
        (100, slow, slow + first + 1.0),
        (468, slow, slow + first + 1.0),
    ];
    for (blocks, low, high) in cases {
        let buffer = blocks * 64;
        let credits = CreditConfig {
            update_blocks: 17,
            ..CreditConfig::default()
        };
        let cfg = config(
            topology.clone(),
            TransportConfig::roce(true),
            buffer,
            credits,
            vec![flow(0, 1, 100 * 1024)],
        );
        let s = run(&cfg).summary;
        assert_eq!((s.drops, s.flows_incomplete), (0, 0), "{blocks} blocks");
        assert!(s.peak_buffer_bytes <= buffer, "{blocks} blocks: {s:?}");
        let fct = s.avg_fct_us.unwrap();
        assert!(
            (low..=high).contains(&fct),
            "{blocks} blocks: FCT {fct} µs, not in [{low}, {high}]"
        );
    }
}

/// One flow over a 100 Gb/s link with a 50 µs delay each way between two switches with large
/// buffers: every limit grants a window beyond what the input has received, and it comes back a
/// round trip (100 µs) after the data it answers left, so the link carries at most a window per
/// round trip: 2048 blocks = 128 KiB per 100 µs = 10.49 Gb/s on the wire. Data frames are 17
/// blocks (1088 B) carrying 1024 B, so goodput is at most 1024/1088 of it, 9.87 Gb/s. A window
/// four times as large (14-bit counters) carries four times as much.
#[test]
fn a_window_caps_a_long_link_at_one_window_per_round_trip() {
    let rate = Bandwidth::from_gbps(100);
    let one_way = Duration::from_us(50);
    let topology = long_line(rate, rate, Duration::from_ns(100), one_way);
    let end = Duration::from_ms(4);
    let goodput = |window_blocks: u32, counter_bits: u8| {
        let credits = CreditConfig {
            window_blocks,
            counter_bits,
            ..CreditConfig::default()
        };
        let mut cfg = config(
            topology.clone(),
            TransportConfig::roce(true),
            100_000_000,
            credits,
            vec![flow(0, 1, 1 << 30)],
        );
        cfg.drain_limit = end;
        let s = run(&cfg).summary;
        assert_eq!(s.drops, 0);
        s.goodput_gbps
    };
    let rtt_s = 2.0 * 50e-6;
    // Gb/s carried by a window of `blocks` per round trip, payload only.
    let cap = |blocks: f64| blocks * 64.0 * 8.0 / rtt_s / 1e9 * 1024.0 / 1088.0;
    // Nothing arrives in the first one-way delay of the 4 ms run.
    let first = (end.as_ps() - one_way.as_ps()) as f64 / end.as_ps() as f64;
    for (blocks, bits) in [(2048, 12), (8192, 14)] {
        let got = goodput(blocks, bits);
        let want = cap(f64::from(blocks));
        assert!(
            got <= want,
            "{blocks} blocks: {got} Gb/s above the cap {want}"
        );
        assert!(
            got > 0.97 * want * first,
            "{blocks} blocks: {got} Gb/s, far below one window per round trip ({want})"
        );
    }
}

/// Credits change nothing but the flow control: without them a run is what it was (the
/// outputs' byte-identity is checked on the shipped scenarios), and with them the same
/// scenario twice gives the same result.
#[test]
fn credit_runs_repeat_themselves() {
    let star = Topology::star(5, Bandwidth::from_gbps(40), Duration::from_us(1)).unwrap();
    let flows: Vec<FlowSpec> = (1..=4).map(|s| flow(s, 0, 100_000)).collect();
    let cfg = config(
        star,
        TransportConfig::irn(),
        20_000,
        CreditConfig::default(),
        flows,
    );
    let (a, b) = (run(&cfg), run(&cfg));
    assert_eq!(format!("{:?}", a.summary), format!("{:?}", b.summary));
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
}
