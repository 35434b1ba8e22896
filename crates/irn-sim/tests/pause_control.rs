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
use irn_sim::config::Monitor;
use irn_sim::config::{PfcConfig, PfcThreshold, SimConfig, SwitchConfig, SwitchModel};
use irn_sim::ids::PortId;
use irn_sim::pause::{quanta_time, PauseControl, PauseFrames, PauseRule, MAX_QUANTA};
use irn_sim::series::{FlowSample, NicSample, PortSample, SeriesSink};
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

/// The highest buffer a `[monitor]` saw.
struct PeakBuffer(u64);

impl SeriesSink for PeakBuffer {
    fn port(&mut self, row: &PortSample) {
        self.0 = self.0.max(row.buffer_bytes.unwrap_or(0));
    }
    fn nic(&mut self, _: &NicSample) {}
    fn flow(&mut self, _: &FlowSample) {}
}

/// Switch B's long input under time-based control, as a fluid worked out step by step: every
/// interval (from the first, at one interval) the input asks for a pause of
/// `min(1, occupancy / (height − constant))` of an interval, none below the threshold; a link
/// delay later switch A holds back that much of the interval and sends the rest at 1 Gb/s,
/// which reaches B a link delay after that; B drains at 0.5 Gb/s and drops what would pass its
/// buffer. Returns the peak occupancy and the bytes dropped by `end`.
fn time_based_fluid(rule: PauseRule, buffer: u64, end: Duration) -> (f64, f64) {
    let PauseRule::TimeBased {
        threshold,
        height,
        constant,
    } = rule
    else {
        unreachable!()
    };
    let interval = longest_pause().as_ps() as f64;
    let one_way = delay().as_ps() as f64;
    let (rate, drain) = (1e9 / 8.0 / 1e12, 0.5e9 / 8.0 / 1e12); // bytes per ps
    let steps_per_interval = 2000;
    let dt = interval / steps_per_interval as f64;
    // The pause fraction each check asked for, in check order.
    let mut asked: Vec<f64> = Vec::new();
    let sending_at = |t: f64, asked: &[f64]| -> bool {
        // A's pause from check k (at (k + 1) intervals) covers [check + D, check + D + f·I).
        (asked.iter().enumerate()).all(|(k, f)| {
            let from = (k + 1) as f64 * interval + one_way;
            !(t >= from && t < from + f * interval)
        })
    };
    let (mut occupancy, mut peak, mut dropped) = (0.0_f64, 0.0_f64, 0.0_f64);
    let total = (end.as_ps() as f64 / dt) as usize;
    for step in 0..total {
        let t = step as f64 * dt;
        if step > 0 && step % steps_per_interval == 0 {
            let f = if occupancy < threshold as f64 {
                0.0
            } else {
                (occupancy / (height - constant) as f64).min(1.0)
            };
            asked.push(f);
        }
        let arriving = t >= one_way && sending_at(t - one_way, &asked);
        occupancy += (if arriving { rate } else { 0.0 }) * dt;
        occupancy = (occupancy - drain * dt).max(0.0);
        if occupancy > buffer as f64 {
            dropped += occupancy - buffer as f64;
            occupancy = buffer as f64;
        }
        peak = peak.max(occupancy);
    }
    (peak, dropped)
}

/// Time-based control against the fluid above: with the slides' buffer its peak, and with 60 %
/// of it what it drops, agree with the packet simulation to within 0.1 % (measured: 0.003 %;
/// packets, the pause frame's own serialization, quanta rounding and sampling are what the
/// fluid leaves out).
#[test]
fn time_based_overshoot_and_drops_by_a_fluid_model() {
    let rtt = delay() * 2;
    let needed = Bandwidth::from_gbps(1).bdp_bytes(rtt) + THRESHOLD;
    let end = rtt * 6;
    for buffer in [needed, needed * 6 / 10] {
        // A threshold the input crosses between two checks (5 units is crossed exactly at one,
        // where a packet's worth decides which check sees it).
        let rule = PauseRule::TimeBased {
            threshold: THRESHOLD + 2_000_000,
            height: needed,
            constant: 2 * 4_194_240,
        };
        let (peak, dropped) = time_based_fluid(rule, buffer, end);
        // B's long input alone (switch A's input fills too while A is paused), sampled finely.
        let mut cfg = world(rule, buffer, end);
        cfg.monitor = Some(Monitor {
            interval: Duration::from_us(10),
            ports: vec![LONG_INPUT],
            flows: Vec::new(),
            nics: false,
        });
        let mut b = PeakBuffer(0);
        let r = irn_sim::run_monitored(&cfg, &mut |_| {}, &mut b);
        let got_dropped = (r.summary.drops * FRAME) as f64;
        let got_peak = b.0 as f64;
        assert!(
            (got_peak - peak).abs() <= 0.001 * peak,
            "peak {got_peak} B, fluid {peak} B"
        );
        assert!(
            (got_dropped - dropped).abs() <= 0.001 * dropped.max(1e6),
            "dropped {got_dropped} B, fluid {dropped} B"
        );
    }
}
