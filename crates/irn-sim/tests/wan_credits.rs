//! The NRL slides' credit rule for InfiniBand over the WAN (`[switch] credit_rule =
//! "pause-equivalent"`), worked by hand on a two-site WAN: host 0 in site A sends to host 2 in
//! site B over one 100 Gb/s long-haul link; the inputs inside the sites use standard credits
//! (1 MB each), the long link's inputs grant by an on-off rule every longest pause
//! (I = 65,535 quanta = 335.5 µs at 100 Gb/s) above a threshold T. RoCE sends at line rate.
//!
//! Why the bound: the input checks its buffer every I. A check that finds it at most T grants
//! the whole interval, which keeps the sender going at line rate R until the next grant reaches
//! it; the first check that finds it above T grants nothing, which stops the sender a link
//! delay later, and what the sender sent until then lands a link delay after that. So after
//! passing T the input fills, at R less the sink's rate S, for at least a round trip and at
//! most a round trip plus the wait for the check:
//!
//! `T + (R − S) × RTT  ≤  peak  ≤  T + (R − S) × (RTT + I)`  (plus a frame or two),
//!
//! which is the slides' "line rate × RTT plus threshold" with the check's wait added, as for
//! ON/OFF PAUSE control. The threshold in turn keeps the sink busy if it holds what the sink
//! takes between a check that finds the input at most T and the data that check's grant lets
//! through: `T ≥ S × (RTT + I)`.

use std::path::Path;

use irn_sim::metrics::Summary;
use irn_sim::scenario;

/// 4,096 B of payload in 4,158 B on the wire.
const FRAME: u64 = 4_158;
const GBPS: f64 = 1e9;
/// Above 50 Gb/s × (1 ms + I) = 8.35 MB: the sink at 50 Gb/s never starves.
const THRESHOLD: f64 = 10e6;
/// The longest pause at 100 Gb/s, in seconds.
const INTERVAL_S: f64 = 65_535.0 * 512.0 / 100e9;

/// The scenario: a long link of `one_way` delay, site B's links at `sink`, the long link's
/// inputs holding `wan_buffer`, the run cut at `end`, and `flow_control` (the `[switch]`
/// credit keys and any `[[pause_control]]`).
fn scenario(one_way: &str, sink: &str, wan_buffer: u64, end: &str, flow_control: &str) -> String {
    format!(
        r#"
[topology]
kind = "wan"
[topology.site]
kind = "star"
hosts = 2
link_rate = "100Gbps"
link_delay = "1us"
[topology.site_b]
kind = "star"
hosts = 2
link_rate = "{sink}"
link_delay = "1us"
[topology.wan]
rate = "100Gbps"
delay = "{one_way}"
buffer = "{wan_buffer}B"
[switch]
buffer = "1MB"
{flow_control}
[transport]
kind = "roce"
mtu = 4096
rto_high = "2s"
[workload]
kind = "trace"
csv = """
src,dst,size_bytes,start_ns
0,2,2000000000,0
0,2,2000000000,0
"""
[run]
drain_limit = "{end}"
"#
    )
}

/// The slides' rule, on-off at threshold T, on both long-haul inputs.
const PAUSE_EQUIVALENT: &str = "credits = true\ncredit_rule = \"pause-equivalent\"\n\
    [[pause_control]]\nports = \"long-haul\"\nrule = \"on-off\"\nthreshold = \"10MB\"\n";

fn run(text: &str) -> Summary {
    let s = scenario::parse(text, "t.toml", Path::new("."), &[]).unwrap();
    irn_sim::run(&s.runs[0].config, &mut |_| {}).summary
}

/// Site B's hosts at half the long link's rate: the long input fills at 50 Gb/s while the
/// sender runs. With the bound's buffer (RTT 1 ms: T + 50 Gb/s × 1.3355 ms = 18.35 MB) it loses
/// nothing, peaks between the bound's two ends and keeps the sink busy; with half a round
/// trip's fill besides T it overflows.
#[test]
fn the_rule_is_lossless_with_the_buffer_it_needs_and_overflows_with_less() {
    let net = (100.0 - 50.0) * GBPS / 8.0;
    let rtt = 1e-3;
    let low = THRESHOLD + net * rtt;
    let high = THRESHOLD + net * (rtt + INTERVAL_S) + 2.0 * FRAME as f64;
    let needed = high as u64;
    let s = run(&scenario(
        "500us",
        "50Gbps",
        needed,
        "10ms",
        PAUSE_EQUIVALENT,
    ));
    assert_eq!(s.drops, 0, "{s:?}");
    let peak = s.peak_buffer_bytes as f64;
    assert!(
        (low..=high).contains(&peak),
        "peak {peak}, not in [{low}, {high}]"
    );
    assert!(s.credit_frames > 0 && s.paused_time_us > 0.0, "{s:?}");
    assert_eq!(s.pause_frames, 0, "grants, not PAUSE frames");
    // The sink's link (50 Gb/s, 4,096 of every 4,158 B) is busy from the first arrival,
    // 0.5 ms in, to the end.
    let sink = 50.0 * 4096.0 / 4158.0 * (10.0 - 0.5) / 10.0;
    assert!(s.goodput_gbps > 0.97 * sink, "{} vs {sink}", s.goodput_gbps);

    let short = (THRESHOLD + net * rtt / 2.0) as u64;
    let s = run(&scenario(
        "500us",
        "50Gbps",
        short,
        "10ms",
        PAUSE_EQUIVALENT,
    ));
    assert!(s.drops > 0, "{short} B should overflow: {s:?}");
}

/// At equal rates the input never fills: the long link carries what it would with no flow
/// control at all (and a buffer that never fills).
#[test]
fn at_equal_rates_the_rule_costs_nothing() {
    let with = run(&scenario(
        "500us",
        "100Gbps",
        20_000_000,
        "5ms",
        PAUSE_EQUIVALENT,
    ));
    let without = run(&scenario("500us", "100Gbps", 1 << 30, "5ms", ""));
    assert_eq!((with.drops, without.drops), (0, 0));
    let ratio = with.goodput_gbps / without.goodput_gbps;
    assert!(
        ratio > 0.99,
        "{} vs {}",
        with.goodput_gbps,
        without.goodput_gbps
    );
}

/// Standard credits with 24-bit counters cap a link at one window (2^23 blocks, 536.9 MB) per
/// round trip; the slides' rule has no window. Over a 50 ms round trip at 100 Gb/s a window
/// lasts 42.9 ms of line rate. With standard credits the sender sends its first window, waits
/// for the credit that comes back a round trip after it began, sends the next, and so on: by
/// the end of a 150 ms run the sink has what was sent by 125 ms, two windows and 25 ms of line
/// rate (110.9 ms' worth), where the slides' rule sends all 125 ms: a ratio of 0.887. (Over a
/// long run it tends to 42.9 / 50 = 0.859.)
#[test]
fn a_24_bit_window_caps_a_long_link_where_the_rule_does_not() {
    let standard = "credits = true\ncredit_counter_bits = 24\ncredit_window_blocks = 8388608\n";
    let capped = run(&scenario("25ms", "100Gbps", 600_000_000, "150ms", standard));
    let free = run(&scenario(
        "25ms",
        "100Gbps",
        600_000_000,
        "150ms",
        PAUSE_EQUIVALENT,
    ));
    assert_eq!((capped.drops, free.drops), (0, 0));
    // A window's time at line rate, in ms: blocks are 64 B, a 65-block frame takes 4,158 B.
    let window_ms = 8_388_608.0 / 65.0 * 4158.0 * 8.0 / 100e9 * 1e3;
    let want = (2.0 * window_ms + 25.0) / 125.0;
    let ratio = capped.goodput_gbps / free.goodput_gbps;
    assert!(
        (ratio - want).abs() < 0.02,
        "{} / {} = {ratio}, want {want}",
        capped.goodput_gbps,
        free.goodput_gbps
    );
}
