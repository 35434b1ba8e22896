//! Pause control at the receiving end of a long link, worked by hand.
//!
//! Host 0 — switch A — a long link — switch B — host 1: the source's and the long link's rate
//! is 1 Gb/s, the sink's 0.5 Gb/s (the slides' 2:1), so switch B's input from the long link
//! fills at 0.5 Gb/s while switch A sends. One longest pause at 1 Gb/s (65,535 quanta) is
//! 33.55 ms; the long link's one-way delay is two of them, its round trip four. Switch B's
//! long-link input runs the rule; switch A's input from the source has ordinary PFC, so what
//! B's pauses hold back waits at A and then at the source. RoCE sends at line rate.
//!
//! Once B's input passes the threshold, a rule reacts at its next check (threshold: at once),
//! the PAUSE takes a link delay to reach A, and what A sent meanwhile takes another: the input
//! peaks at threshold + 0.5 Gb/s × (wait for the check + round trip). The slides' sizing,
//! rate × round trip + threshold, covers that when the wait is under a round trip (it is a
//! longest pause at most here, a quarter of it).

mod common;

use common::{flow, long_line};
use irn_core::transport::{RtoPolicy, TransportConfig};
use irn_core::{Bandwidth, Duration};
use irn_sim::config::{PfcConfig, PfcThreshold, SimConfig, SwitchConfig, SwitchModel};
use irn_sim::ids::PortId;
use irn_sim::pause::{quanta_time, PauseControl, PauseFrames, PauseRule, MAX_QUANTA};
use irn_sim::RunResult;

const GBPS: u64 = 1_000_000_000;
/// A full frame on the wire: 1024 B of payload and 62 B of framing.
const FRAME: u64 = 1086;

fn longest_pause() -> Duration {
    quanta_time(Bandwidth::from_gbps(1), MAX_QUANTA)
}

/// The long link's one-way delay: two longest pauses.
fn delay() -> Duration {
    longest_pause() * 2
}

/// Switch B's port on the long link: hosts 0 and 1 have ports 0 and 1, switch A ports 2 (to
/// host 0) and 3 (the long link), switch B ports 4 (the long link) and 5 (to host 1).
const LONG_INPUT: PortId = PortId(4);

/// The network with every input buffer `buffer` bytes, B's long input under `rule`, one flow
/// that outlasts the run, and the run cut off at `end`.
fn world(rule: PauseRule, buffer: u64, end: Duration) -> SimConfig {
    let topology = long_line(
        Bandwidth::from_gbps(1),
        Bandwidth::from_bps(GBPS / 2),
        Duration::from_us(1),
        delay(),
    );
    let switch = SwitchConfig {
        model: SwitchModel::InputQueued,
        buffer_bytes: buffer,
        pfc: Some(PfcConfig {
            threshold: PfcThreshold::Auto,
            resume_gap_bytes: 2 * FRAME,
            frames: PauseFrames::XoffXon,
        }),
        ecn: None,
    };
    let mut transport = TransportConfig::roce(true);
    transport.rto = RtoPolicy::Disabled;
    let mut cfg = SimConfig::new(topology, switch, transport, vec![flow(0, 1, 1 << 30)]);
    cfg.drain_limit = end;
    cfg.pause_control = vec![PauseControl {
        port: LONG_INPUT,
        rule,
        interval: longest_pause(),
    }];
    cfg
}

fn run(cfg: &SimConfig) -> RunResult {
    irn_sim::run(cfg, &mut |_| {})
}

/// Bytes that arrive at 0.5 Gb/s net in `d`.
fn net_fill(d: Duration) -> u64 {
    Bandwidth::from_bps(GBPS / 2).bdp_bytes(d)
}

const THRESHOLD: u64 = 5 * 4_194_240; // the slides' 5 longest pauses of data

/// The three rules; time-based with the buffer as its height (its default) and the slides'
/// lower constant.
fn rules(buffer: u64) -> [(&'static str, PauseRule); 3] {
    [
        (
            "threshold",
            PauseRule::Threshold {
                pause_at: THRESHOLD,
                resume_below: THRESHOLD - 2 * FRAME,
                frames: PauseFrames::Timed {
                    quanta: MAX_QUANTA,
                    refresh: None,
                },
            },
        ),
        (
            "on-off",
            PauseRule::OnOff {
                threshold: THRESHOLD,
            },
        ),
        (
            "time-based",
            PauseRule::TimeBased {
                threshold: THRESHOLD,
                height: buffer,
                constant: 2 * 4_194_240,
            },
        ),
    ]
}

/// With rate × round trip + threshold of buffer, no rule drops anything over ten round trips,
/// and the input stays within it.
#[test]
fn the_slides_buffer_loses_nothing_at_two_to_one() {
    let rtt = delay() * 2;
    let needed = Bandwidth::from_gbps(1).bdp_bytes(rtt) + THRESHOLD;
    for (name, rule) in rules(needed) {
        let r = run(&world(rule, needed, rtt * 10));
        assert_eq!(r.summary.drops, 0, "{name}");
        assert!(r.summary.peak_buffer_bytes <= needed, "{name}");
        // The sink was kept busy: its link carried at least 90 % of 0.5 Gb/s after the
        // first data arrived.
        let delivered = r.summary.delivered_bytes;
        let busy = (rtt * 10) - delay();
        assert!(
            delivered as f64 >= 0.9 * net_fill(busy) as f64,
            "{name}: {delivered}"
        );
    }
}

/// The first overshoot by the arithmetic: data reaches B's input after one link delay (and two
/// frames' serialization) and crosses the threshold `THRESHOLD / 0.5 Gb/s` later. The threshold
/// rule pauses at once; on-off at its next check, a multiple of the longest pause. The input
/// then keeps filling for a round trip (the PAUSE going up, the data already sent coming down).
/// With a buffer a megabyte short of that peak, what is dropped is that megabyte (to a few
/// frames).
#[test]
fn the_first_overshoot_and_its_drops_by_the_arithmetic() {
    let threshold = rules(u64::MAX)[0].1;
    let on_off = PauseRule::OnOff {
        threshold: THRESHOLD,
    };
    let first_arrival =
        delay() + Duration::from_us(2) + Bandwidth::from_gbps(1).serialization(2 * FRAME);
    let crossing = first_arrival.as_ps()
        + Bandwidth::from_bps(GBPS / 2)
            .serialization(THRESHOLD)
            .as_ps();
    let check = crossing.div_ceil(longest_pause().as_ps()) * longest_pause().as_ps();
    // (rule, when it sends its first PAUSE)
    for (rule, sent) in [(threshold, crossing), (on_off, check)] {
        let wait = Duration::from_ps(sent - crossing);
        let peak = THRESHOLD + net_fill(wait + delay() * 2);
        // Just past the first overshoot: before any resent packet comes back.
        let end = Duration::from_ps(sent) + delay() * 2 + Duration::from_ms(1);
        let roomy = run(&world(rule, 2 * peak, end));
        assert_eq!(roomy.summary.drops, 0, "{rule:?}");
        let got = roomy.summary.peak_buffer_bytes;
        assert!(
            got.abs_diff(peak) <= 3 * FRAME,
            "{rule:?}: peak {got} B, by hand {peak} B"
        );

        let short = 1_000_000;
        let tight = run(&world(rule, peak - short, end));
        let dropped = tight.summary.drops * FRAME;
        assert!(
            dropped.abs_diff(short) <= 3 * FRAME,
            "{rule:?}: dropped {dropped} B, by hand {short} B"
        );
    }
}

/// `rule = "none"` on the long input: the sites keep PFC, the long link does not pause, so its
/// input drops what does not fit and no PAUSE is ever sent (the switch A side never fills).
#[test]
fn a_long_input_that_never_pauses_drops_instead() {
    let r = run(&world(PauseRule::Off, 10_000_000, delay() * 4));
    assert!(r.summary.drops > 0);
    assert_eq!(r.summary.pause_frames, 0);
    assert!(r.summary.peak_buffer_bytes <= 10_000_000);
}
