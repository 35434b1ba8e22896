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
//!
//! A sink that stops for good is the worst case each rule's own bound
//! (`PauseRule::lossless_buffer`) is for: `each_rules_bound_holds_when_the_sink_stops_for_good`.

mod common;

use common::{flow, long_line};
use irn_core::transport::{RtoPolicy, TransportConfig};
use irn_core::{Bandwidth, Duration};
use irn_sim::config::Monitor;
use irn_sim::config::{PfcConfig, PfcThreshold, SimConfig, SwitchConfig, SwitchModel};
use irn_sim::ids::{HostIdx, PortId};
use irn_sim::pause::{
    quanta_time, ControlLoop, PauseControl, PauseFrames, PauseRule, PauseSourceConfig, MAX_QUANTA,
};
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

/// Runs `cfg` with switch B's long input sampled every `every`, into `sink`.
fn run_sampling_long_input(
    mut cfg: SimConfig,
    every: Duration,
    sink: &mut impl SeriesSink,
) -> RunResult {
    cfg.monitor = Some(Monitor {
        interval: every,
        ports: vec![LONG_INPUT],
        flows: Vec::new(),
        nics: false,
        summary_from: None,
    });
    irn_sim::run_monitored(&cfg, &mut |_| {}, sink)
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
        let mut b = PeakBuffer(0);
        let r = run_sampling_long_input(world(rule, buffer, end), Duration::from_us(10), &mut b);
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

/// The sink-stops-for-good world: source, long link (`delay` one way) and sink at 100 Gb/s, and
/// host 1 pausing its switch from the start to the end of the run: switch B's long input keeps
/// all it receives.
fn stopped_sink(rule: PauseRule, delay: Duration, buffer: u64, end: Duration) -> SimConfig {
    let rate = Bandwidth::from_gbps(100);
    let topology = long_line(rate, rate, Duration::from_us(1), delay);
    let mut cfg = world(rule, buffer, end);
    cfg.topology = topology;
    cfg.pause_control[0].interval = quanta_time(rate, MAX_QUANTA);
    cfg.pause_sources = vec![PauseSourceConfig {
        host: HostIdx(1),
        start: Duration::ZERO,
        gap: (Duration::ZERO, Duration::ZERO),
        length: (end, end),
    }];
    cfg
}

/// Each rule's bound (`PauseRule::lossless_buffer`) against a sink that stops for good: with the
/// bound as buffer nothing is dropped, and the input's peak comes within a few frames of it
/// (threshold: 313 B, on-off: 2,185 B) or, time-based, within 0.6 longest pauses (measured 0.46:
/// the bound integrates what the checks only sample, one per interval), so a buffer that much
/// below drops. On-off's threshold is crossed just after a check, the longest wait for the next;
/// time-based's occupancy climbs from its threshold (1.6 longest pauses) to `height − constant`
/// (20) in less than its round trip (20.9), the case the bound is reached in, on a longer link.
#[test]
fn each_rules_bound_holds_when_the_sink_stops_for_good() {
    let rate = Bandwidth::from_gbps(100);
    let unit = 4_194_240;
    let interval = quanta_time(rate, MAX_QUANTA);
    // Data first reaches B's long input after the source's and the long link's delays and
    // two frames' serialization; on-off's threshold is crossed 2 frames after the third check.
    let first = |delay| delay + Duration::from_us(1) + rate.serialization(2 * FRAME);
    let short = Duration::from_us(500);
    let long = Duration::from_us(3500);
    // Crossed 2 frames after a check: the longest wait for the next.
    let after_check = |k, delay| rate.bdp_bytes(interval * k - first(delay)) + 2 * FRAME;
    // (rule, one-way delay, how far below the bound the input peaks at most, in bytes)
    let cases = [
        (
            PauseRule::Threshold {
                pause_at: unit,
                resume_below: unit - 2 * FRAME,
                frames: PauseFrames::XoffXon,
            },
            short,
            3 * FRAME,
        ),
        (
            PauseRule::OnOff {
                threshold: after_check(3, short),
            },
            short,
            3 * FRAME,
        ),
        (
            PauseRule::TimeBased {
                threshold: after_check(12, long),
                height: 22 * unit,
                constant: 2 * unit,
            },
            long,
            unit * 6 / 10,
        ),
    ];
    for (rule, delay, slack) in cases {
        let link = ControlLoop {
            rate,
            round_trip: delay * 2,
            interval,
            max_frame: FRAME,
        };
        let bound = rule.lossless_buffer(link).unwrap();
        let end = first(delay) + rate.serialization(bound) + delay * 2 + interval * 2;
        // Nothing leaves B's long input, so its last sample is its peak.
        let cfg = stopped_sink(rule, delay, bound, end);
        let mut b = PeakBuffer(0);
        let at = run_sampling_long_input(cfg, Duration::from_us(10), &mut b);
        assert_eq!(at.summary.drops, 0, "{rule:?} at its bound {bound} B");
        let peak = b.0;
        assert!(
            bound - peak <= slack,
            "{rule:?}: peak {peak} B, bound {bound} B"
        );
        let below = run(&stopped_sink(rule, delay, bound - slack - FRAME, end));
        assert!(
            below.summary.drops > 0,
            "{rule:?} {} B below its bound",
            slack + FRAME
        );
    }
}

/// B's long input's lowest and highest sample from `from_us` on.
struct Swing {
    from_us: f64,
    low: u64,
    high: u64,
}

impl SeriesSink for Swing {
    fn port(&mut self, row: &PortSample) {
        if row.time_us >= self.from_us {
            let b = row.buffer_bytes.unwrap_or(0);
            (self.low, self.high) = (self.low.min(b), self.high.max(b));
        }
    }
    fn nic(&mut self, _: &NicSample) {}
    fn flow(&mut self, _: &FlowSample) {}
}

/// The time-based loop past its stability bound swings, inside it settles: at 2:1 (100 Gb/s
/// into a 50 Gb/s sink) over a 1 ms link (a round trip of 6 longest pauses, a loop delay of
/// 6.5), `height − constant` of 2.5 longest pauses (delay ratio 2.6, past π/2) still swings
/// between empty and 1.5 times it after 10 round trips, 8 (ratio 0.81) holds within 4 % of it
/// around its level `(1 − ½) × 8`. (Measured at this link over 20 to 40 round trips: the swing
/// decays at ratios 1.30 and 1.45 and persists at 1.55, 1.65 and 1.80.)
#[test]
fn the_time_based_loop_swings_past_its_stability_bound() {
    let rate = Bandwidth::from_gbps(100);
    let unit = 4_194_240;
    let delay = Duration::from_ms(1);
    let end = delay * 2 * 14;
    let swing = |span: u64| {
        let rule = PauseRule::TimeBased {
            threshold: unit / 4,
            height: span + unit,
            constant: unit,
        };
        let mut cfg = world(rule, 100 * unit, end);
        cfg.topology = long_line(rate, Bandwidth::from_gbps(50), Duration::from_us(1), delay);
        cfg.pause_control[0].interval = quanta_time(rate, MAX_QUANTA);
        let link = ControlLoop {
            rate,
            round_trip: delay * 2,
            interval: cfg.pause_control[0].interval,
            max_frame: FRAME,
        };
        let ratio = rule.time_based_delay_ratio(link).unwrap();
        let mut s = Swing {
            from_us: (delay * 2 * 10).as_us_f64(),
            low: u64::MAX,
            high: 0,
        };
        let r = run_sampling_long_input(cfg, Duration::from_us(20), &mut s);
        assert_eq!(r.summary.drops, 0);
        (ratio, (s.high - s.low) as f64 / span as f64)
    };
    let (past, wide) = swing(unit * 5 / 2);
    let (inside, narrow) = swing(8 * unit);
    assert!(past > std::f64::consts::FRAC_PI_2 && inside < 1.0);
    assert!(
        wide > 0.5 && narrow < 0.2,
        "swing over the span: {wide:.2} past, {narrow:.2} inside"
    );
}

/// Every PAUSE frame's quanta, as `[monitor]` counts them at the long input.
#[derive(Default)]
struct PauseAsked {
    frames: u64,
    quanta: u64,
}

impl SeriesSink for PauseAsked {
    fn port(&mut self, row: &PortSample) {
        self.frames += row.pause_sent;
        self.quanta += row.pause_quanta_sent;
    }
    fn nic(&mut self, _: &NicSample) {}
    fn flow(&mut self, _: &FlowSample) {}
}

/// The summary's `pause_control` and the series' `pause_quanta_sent`, by the rules' own terms:
/// ON/OFF asks a longest pause with every frame; at 2:1 with a sink that never pauses neither
/// rule lets the input run dry once it has data (no starvation), and the mean depth at the
/// checks lies between the threshold's neighbourhood and the peak.
#[test]
fn pause_control_reports_its_depth_starvation_and_the_pause_it_asked() {
    let rtt = delay() * 2;
    let buffer = Bandwidth::from_gbps(1).bdp_bytes(rtt) + THRESHOLD;
    let end = rtt * 10;
    for (name, rule) in rules(buffer).into_iter().skip(1) {
        let mut asked = PauseAsked::default();
        let r = run_sampling_long_input(world(rule, buffer, end), longest_pause(), &mut asked);
        let pc = r.summary.pause_control.expect("a periodic rule reports");
        // Data first reaches B after a link delay (two intervals); every check after counts.
        assert!(pc.checks >= 35, "{name}: {pc:?}");
        assert_eq!(pc.starved_fraction, Some(0.0), "{name}: {pc:?}");
        let avg = pc.avg_buffer_bytes.unwrap();
        assert!(
            avg > 0.0 && avg <= r.summary.peak_buffer_bytes as f64,
            "{name}: {pc:?}"
        );
        assert!(asked.frames > 0, "{name}");
        let max = u64::from(MAX_QUANTA);
        if name == "on-off" {
            assert_eq!(asked.quanta, asked.frames * max, "{name}");
        } else {
            // Time-based asks a fraction of the longest pause: the 2:1 input settles near
            // half of height − constant, so its frames ask about half a longest pause.
            assert!(asked.quanta < asked.frames * max, "{name}");
            assert!(asked.quanta > asked.frames * max / 4, "{name}");
        }
    }
    // No periodic rule, no section.
    let threshold = rules(buffer)[0].1;
    assert_eq!(
        run(&world(threshold, buffer, end)).summary.pause_control,
        None
    );
}
