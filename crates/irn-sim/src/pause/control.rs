//! Pause control at the receiving end of a long-haul link: what PAUSE frames a switch input
//! sends upstream, given how full its buffer is (the NRL slides, seed 003).
//!
//! One PAUSE lasts at most 65,535 quanta (0.335 ms at 100 Gb/s), far less than a WAN round
//! trip, so XOFF/XON at a level cannot stop a long link in time unless the buffer holds a round
//! trip of data besides the threshold. The slides keep the standard frame and change when it
//! is sent: every *interval* (by default the longest pause at the link's rate) the input looks
//! at its occupancy and
//!
//! - **on-off**: sends a maximum PAUSE if it is above the threshold, nothing otherwise;
//! - **time-based**: sends a PAUSE of `occupancy / (height − constant)` of the maximum (at most
//!   all of it), nothing below the threshold. The constant trades latency (high: the buffer is
//!   held lower) against starvation (low: the source is paused less).
//!
//! **none** never pauses: the input drops what does not fit (a lossy long link between sites
//! that run PFC inside).
//!
//! **threshold** is standard PFC at a level of its own (XOFF above, XON below the resume level,
//! the frames `[switch] pfc_frames` says), decided on every packet like PFC, not by interval.
//!
//! # Sizing
//!
//! The slides ask for a buffer of rate × round trip + threshold. That is exact for the
//! threshold rule only; [`PauseRule::lossless_buffer`] gives each rule's buffer that no sink,
//! not even one that stops for good, can overflow, and says why in each rule's terms. With
//! rate *R*, the long link's round trip *RTT*, the PAUSE frame's serialization *s* (64 B), the
//! check interval *I*, the largest data frame *F* and the threshold *T*:
//!
//! - threshold: `T + R × (RTT + s) + 2F`;
//! - on-off: `T + R × (RTT + s + I) + 2F` (the crossing can wait up to an interval for a check);
//! - time-based: `L + overshoot` with `L = max(T, height − constant)`, where the overshoot is
//!   up to a round trip of data the source sent under partial pauses (see the method).
//!
//! At 100 Gb/s and a 50 ms round trip (149 longest pauses) with the slides' threshold (5
//! longest pauses) and 4 KB frames that is 645,979,581 B for threshold (the slides'
//! 645,971,200 B, a PAUSE frame and two frames), 650,173,821 B for on-off (an interval,
//! 4,194,240 B, more) and 856,809,042 B (204.3 longest pauses) for time-based with the slides'
//! height 110 and C = 2: the round trip and an interval (150 longest pauses) are longer than
//! the 103 the occupancy takes to climb from the threshold to height − constant, so 47 of them
//! are sent unpaused, and the climb's partial pauses let 49 more through.
//!
//! Periodic rules tile time with their pauses only if the interval is at most the longest
//! pause: with a longer one the sender runs between pauses, and a sink that stops for good
//! overflows any buffer. At exactly the longest pause (the default) each refresh reaches the
//! sender as the pause it renews ends, a tie: on a link whose one-way delay is shorter than the
//! interval irn lets a frame through each time ([`ControlLoop::tiled`]).
//!
//! # Stability of the time-based rule
//!
//! Time-based control is a delayed proportional loop. In longest pauses (of time and of data at
//! the link's rate), with the sink taking a steady share and `S = height − constant`, a small
//! deviation `y` of the occupancy from where it settles evolves as `y'(t) = −y(t − τ) / S`: the
//! pause a check asks for now acts on what arrives a delay `τ` later (the round trip plus the
//! pause frame, and half an interval for holding a sample for a whole interval). Its modes
//! `e^{λt}` solve `λ = −e^{−λτ} / S`; one crosses into the right half-plane, `λ = iω`, when
//! `cos ωτ = 0` and `ω = 1/S`, first at `ωτ = π/2`: the loop settles only if `τ / S < π/2`,
//! and past that the buffer swings, at the edge with a period of `2π/ω = 4τ` (the slides'
//! height 110 with C = 20 at their round trip of 150, 50 ms at 100 Gb/s: τ / S = 149.5 / 90 =
//! 1.66, and the buffer swings between nearly empty and 97 units).
//! [`PauseRule::time_based_delay_ratio`] gives `τ / S`.

use irn_core::packet::CONTROL_FRAME_BYTES;
use irn_core::{Bandwidth, Duration};

use super::{quanta_time, PauseFrame, PauseFrames, MAX_QUANTA};
use crate::ids::PortId;

/// How an input decides its PAUSE frames.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PauseRule {
    /// Never pause: the input drops what does not fit, whatever `switch.pfc` says (a lossy
    /// long link between lossless sites).
    Off,
    /// XOFF when the input holds more than `pause_at` bytes, XON once below `resume_below`,
    /// with these frames.
    Threshold {
        pause_at: u64,
        resume_below: u64,
        frames: PauseFrames,
    },
    /// Every interval: a maximum PAUSE above `threshold` bytes, nothing otherwise.
    OnOff { threshold: u64 },
    /// Every interval: nothing below `threshold` bytes, otherwise a PAUSE of
    /// `occupancy / (height − constant)` of the maximum, at most the maximum.
    TimeBased {
        threshold: u64,
        height: u64,
        constant: u64,
    },
}

impl PauseRule {
    /// The frame a periodic rule sends at an interval when its input holds `occupancy` bytes,
    /// if any; `None` for [`PauseRule::Threshold`], which is not periodic.
    pub fn at_interval(self, occupancy: u64) -> Option<PauseFrame> {
        match self {
            PauseRule::Off | PauseRule::Threshold { .. } => None,
            PauseRule::OnOff { threshold } => {
                (occupancy > threshold).then_some(PauseFrame::Quanta(MAX_QUANTA))
            }
            PauseRule::TimeBased {
                threshold,
                height,
                constant,
            } => {
                if occupancy < threshold {
                    return None;
                }
                let span = u128::from(height.saturating_sub(constant).max(1));
                let quanta = (u128::from(occupancy) * u128::from(MAX_QUANTA)).div_ceil(span);
                let quanta = u16::try_from(quanta).unwrap_or(MAX_QUANTA);
                (quanta > 0).then_some(PauseFrame::Quanta(quanta))
            }
        }
    }

    /// Whether the rule is checked every interval (rather than on every packet).
    pub fn periodic(self) -> bool {
        matches!(self, PauseRule::OnOff { .. } | PauseRule::TimeBased { .. })
    }

    /// The input buffer this rule keeps lossless on `link` whatever the sink downstream does,
    /// stopping for good included; `None` if no buffer does (`Off`, or a periodic rule whose
    /// pauses leave the sender gaps, [`ControlLoop::tiled`]).
    ///
    /// The input decides to pause at some moment; its PAUSE takes its own serialization and
    /// the link delay to reach the sender, which finishes the frame it is sending, and what
    /// the sender sent before takes the link delay back. So the input keeps receiving at the
    /// link's rate for `reaction = RTT + s` (plus up to a frame) after it decided, and it
    /// decided when it held up to a frame more than the level it reacts to:
    ///
    /// - threshold decides on the packet that passes the threshold: `T + R × reaction + 2F`.
    ///   Timed XOFFs are refreshed at half their time, before they run out.
    /// - on-off decides at the first check after the crossing, up to an interval later:
    ///   `T + R × (reaction + I) + 2F`. Its pauses, a longest one per interval, cover the
    ///   sender without a gap when `I` ≤ the longest pause.
    /// - time-based pauses a share `min(1, x / S_I)` of each interval, where `S_I =
    ///   (height − constant) × I / longest pause` (a pause longer than the interval is cut
    ///   short by the next check's), nothing below `T`. Above `L = max(T, S_I)` it pauses the
    ///   whole interval, so the occupancy only grows past `L` by what the sender sent under
    ///   the partial pauses of the checks of the last `reaction + I` before it crossed `L`
    ///   (those still on the way). The occupancy rises at most at the link's rate, so a check
    ///   `u` before the crossing saw at least `L − R·u` and let through at most
    ///   `g(R·u)` of its interval, `g(b) = clamp((b − (L − S_I)) / S_I, 0, 1)` while
    ///   `L − b ≥ T` and 1 below `T`. Summed over the window (`w = R × (reaction + I) + F`
    ///   bytes, `a = L − T` of them before the threshold is reached going back) that is at
    ///   most `∫₀ʷ g = min(w, a)² / (2 S_I) + max(0, w − a)` when `L = S_I`, `w` when `L = T`,
    ///   plus a frame per interval in the window for the frame each pause lets finish. When
    ///   the occupancy climbs from `T` to `L` unpaused within the window (`w ≥ a`; e.g. a sink
    ///   that stops for good while the source sends at full rate) the input peaks within about
    ///   half an interval's data of the bound: the checks sample the climb once an interval,
    ///   the integral does not.
    pub fn lossless_buffer(self, link: ControlLoop) -> Option<u64> {
        let frame = link.max_frame;
        match self {
            PauseRule::Off => None,
            PauseRule::Threshold { pause_at, .. } => {
                Some(pause_at + link.bytes(link.reaction()) + 2 * frame)
            }
            PauseRule::OnOff { threshold } => link
                .tiled()
                .then(|| threshold + link.bytes(link.reaction() + link.interval) + 2 * frame),
            PauseRule::TimeBased {
                threshold,
                height,
                constant,
            } => link.tiled().then(|| {
                let span = link.span(height - constant);
                let t = threshold as f64;
                let level = span.max(t);
                let ramp = (level - t).max(0.0);
                let window = (link.bytes(link.reaction() + link.interval) + frame) as f64;
                let overshoot = if level > span {
                    window
                } else {
                    window.min(ramp).powi(2) / (2.0 * span) + (window - ramp).max(0.0)
                };
                let checks = (link.reaction() + link.interval)
                    .as_ps()
                    .div_ceil(link.interval.as_ps())
                    + 1;
                // Saturating: a height near the largest size a file can write (a time-based
                // rule that all but never pauses) needs more than any buffer, not a wrapped
                // sum below the one it has.
                ((level + overshoot).ceil() as u64).saturating_add((checks + 1) * frame)
            }),
        }
    }

    /// A time-based rule's loop delay over its proportional span, `τ / S` (see the module):
    /// it settles below π/2 and swings past it. `None` for the other rules.
    pub fn time_based_delay_ratio(self, link: ControlLoop) -> Option<f64> {
        let PauseRule::TimeBased {
            height, constant, ..
        } = self
        else {
            return None;
        };
        Some(link.loop_delay_bytes() / link.span(height - constant))
    }
}

/// One switch input under a pause rule: the switch port at the receiving end of the link, and
/// how often a periodic rule looks at it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PauseControl {
    pub port: PortId,
    pub rule: PauseRule,
    pub interval: Duration,
}

/// What a pause rule's loop runs on: the long link and how often a periodic rule looks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ControlLoop {
    pub rate: Bandwidth,
    /// The long link's round trip: twice its delay.
    pub round_trip: Duration,
    pub interval: Duration,
    /// The largest data frame on the link, framing included.
    pub max_frame: u64,
}

impl ControlLoop {
    /// From an input's decision to pause to the last byte its sender sent before stopping
    /// arriving (but the frame the sender finishes): the PAUSE's serialization and the round
    /// trip.
    pub fn reaction(self) -> Duration {
        self.round_trip + self.rate.serialization(u64::from(CONTROL_FRAME_BYTES))
    }

    /// Whether a periodic rule's pauses cover the sender without a gap while its input stays
    /// full: its interval is shorter than the longest pause, or as long and each refresh is
    /// handled before the pause it renews runs out. The refresh reaches the sender exactly as
    /// that pause ends; irn handles first whichever it scheduled first, the refresh if it was
    /// sent before the previous frame arrived (the one-way delay and a PAUSE frame longer than
    /// the interval), else the pause's end, and the sender slips a frame through each interval.
    pub fn tiled(self) -> bool {
        let longest = quanta_time(self.rate, MAX_QUANTA);
        let one_way = self.reaction() - Duration::from_ps(self.round_trip.as_ps() / 2);
        self.interval < longest || (self.interval == longest && one_way > self.interval)
    }

    /// The time-based loop's delay in bytes at the link's rate: the reaction and half an
    /// interval (a check's sample holds for the whole interval).
    pub fn loop_delay_bytes(self) -> f64 {
        let ps = self.reaction().as_ps() as f64 + self.interval.as_ps() as f64 / 2.0;
        ps * self.rate.as_bps() as f64 / 8e12
    }

    /// The least time-based height (bytes) whose loop settles with `constant` on this link:
    /// just above `constant + τ / (π/2)` in the rule's own scale.
    pub fn settling_height(self, constant: u64) -> u64 {
        let per_interval = self.longest_pause_ps() / self.interval.as_ps() as f64;
        let span = self.loop_delay_bytes() * per_interval / std::f64::consts::FRAC_PI_2;
        // Saturating, as `lossless_buffer`: a constant near the largest size.
        constant.saturating_add(span.floor() as u64 + 1)
    }

    /// The occupancy at which a time-based check pauses its whole interval, for a span
    /// (`height − constant`) of `bytes`: its PAUSE of `x / span` of the longest pause covers
    /// `x × longest pause / (span × interval)` of the interval (the next check's frame cuts a
    /// longer one short).
    fn span(self, bytes: u64) -> f64 {
        bytes as f64 * self.interval.as_ps() as f64 / self.longest_pause_ps()
    }

    fn longest_pause_ps(self) -> f64 {
        quanta_time(self.rate, MAX_QUANTA).as_ps() as f64
    }

    /// What the link carries in `d`, rounded up.
    fn bytes(self, d: Duration) -> u64 {
        self.rate.bdp_bytes(d) + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rule_at_an_interval() {
        let on_off = PauseRule::OnOff { threshold: 500 };
        // Height 110, constant 10: a PAUSE of occupancy / 100 of the maximum.
        let timed = PauseRule::TimeBased {
            threshold: 5,
            height: 110,
            constant: 10,
        };
        let max = Some(PauseFrame::Quanta(MAX_QUANTA));
        // (rule, occupancy, frame)
        let cases = [
            (on_off, 0, None),
            (on_off, 500, None),
            (on_off, 501, max),
            (on_off, u64::MAX, max),
            (timed, 4, None),
            (timed, 5, Some(PauseFrame::Quanta(3277))), // 5/100 of 65535, rounded up
            (timed, 50, Some(PauseFrame::Quanta(32768))),
            (timed, 100, max),
            (timed, 1000, max),
        ];
        for (rule, occupancy, want) in cases {
            assert_eq!(rule.at_interval(occupancy), want, "{rule:?} at {occupancy}");
        }
        let threshold = PauseRule::Threshold {
            pause_at: 1,
            resume_below: 0,
            frames: PauseFrames::XoffXon,
        };
        assert_eq!(threshold.at_interval(100), None);
        assert!(!threshold.periodic() && on_off.periodic() && timed.periodic());
        assert_eq!(PauseRule::Off.at_interval(u64::MAX), None);
        assert!(!PauseRule::Off.periodic());
    }

    /// The worked numbers of the module's doc: 100 Gb/s, a 50 ms round trip, the slides'
    /// threshold, 4 KB frames.
    #[test]
    fn each_rules_bound_at_100_gbps_and_50_ms() {
        let rate = Bandwidth::from_gbps(100);
        let unit = 4_194_240;
        let link = ControlLoop {
            rate,
            round_trip: Duration::from_ms(50),
            interval: quanta_time(rate, MAX_QUANTA),
            max_frame: 4158,
        };
        let threshold = PauseRule::Threshold {
            pause_at: 5 * unit,
            resume_below: 0,
            frames: PauseFrames::XoffXon,
        };
        let on_off = PauseRule::OnOff {
            threshold: 5 * unit,
        };
        let timed = |constant| PauseRule::TimeBased {
            threshold: 5 * unit,
            height: 110 * unit,
            constant: constant * unit,
        };
        // The slides' rate × RTT + threshold, a PAUSE frame's 64 B (+ 1 rounding up), 2 frames.
        assert_eq!(
            threshold.lossless_buffer(link),
            Some(645_971_200 + 65 + 2 * 4158)
        );
        assert_eq!(on_off.lossless_buffer(link), Some(650_173_821));
        assert_eq!(timed(2).lossless_buffer(link), Some(856_809_042));
        assert_eq!(PauseRule::Off.lossless_buffer(link), None);
        // Loop delay 149.5 longest pauses over 108 settles, over 90 swings.
        let ratio = |c| timed(c).time_based_delay_ratio(link).unwrap();
        assert!((ratio(2) - 1.384).abs() < 1e-3, "{}", ratio(2));
        assert!((ratio(20) - 1.661).abs() < 1e-3, "{}", ratio(20));
        assert_eq!(on_off.time_based_delay_ratio(link), None);
        // The least height that settles with C = 20: 20 + 149.5 / (π/2) = 115.2 pauses.
        let settles = link.settling_height(20 * unit);
        assert_eq!(settles / (unit / 10), 1151);
        let at = |height| PauseRule::TimeBased {
            threshold: 5 * unit,
            height,
            constant: 20 * unit,
        };
        assert!(at(settles).time_based_delay_ratio(link).unwrap() < std::f64::consts::FRAC_PI_2);
        assert!(
            at(settles - 1).time_based_delay_ratio(link).unwrap() >= std::f64::consts::FRAC_PI_2
        );
    }

    /// A height and a constant as large as a file can write (`"18446744073709551615B"`, or
    /// 1e30 longest pauses) give bounds that saturate, not sums that wrap below the buffer and
    /// silence the warnings (or panic where overflow is checked).
    #[test]
    fn bounds_saturate_at_the_largest_sizes() {
        let rate = Bandwidth::from_gbps(100);
        let link = ControlLoop {
            rate,
            round_trip: Duration::from_ms(1),
            interval: quanta_time(rate, MAX_QUANTA),
            max_frame: 4158,
        };
        let rule = |constant| PauseRule::TimeBased {
            threshold: 4_194_240,
            height: u64::MAX,
            constant,
        };
        assert_eq!(rule(2).lossless_buffer(link), Some(u64::MAX));
        assert_eq!(link.settling_height(u64::MAX - 10), u64::MAX);
        // Just under the largest height: a span of 10 bytes swings, its bound saturates.
        let ratio = rule(u64::MAX - 10).time_based_delay_ratio(link).unwrap();
        assert!(ratio > std::f64::consts::FRAC_PI_2, "{ratio}");
    }

    /// Pauses cover the sender without a gap with an interval shorter than the longest pause,
    /// or as long on a link longer than it one way; a longer interval never does.
    #[test]
    fn when_periodic_pauses_leave_no_gap() {
        let rate = Bandwidth::from_gbps(100);
        let longest = quanta_time(rate, MAX_QUANTA);
        let link = |one_way: Duration, interval| ControlLoop {
            rate,
            round_trip: one_way * 2,
            interval,
            max_frame: 1086,
        };
        let on_off = PauseRule::OnOff { threshold: 1 };
        // (one-way delay, interval, tiled)
        let cases = [
            (Duration::from_us(100), longest, false),
            (Duration::from_us(100), longest - Duration::from_ps(1), true),
            (Duration::from_us(400), longest, true),
            (Duration::from_ms(10), longest + Duration::from_ps(1), false),
        ];
        for (one_way, interval, tiled) in cases {
            let l = link(one_way, interval);
            assert_eq!(l.tiled(), tiled, "{one_way} {interval}");
            assert_eq!(
                on_off.lossless_buffer(l).is_some(),
                tiled,
                "{one_way} {interval}"
            );
        }
    }

    /// A higher constant pauses longer at the same occupancy (holds the buffer lower).
    #[test]
    fn a_higher_constant_pauses_longer() {
        let rule = |constant| PauseRule::TimeBased {
            threshold: 5,
            height: 110,
            constant,
        };
        let quanta = |c| match rule(c).at_interval(40) {
            Some(PauseFrame::Quanta(q)) => q,
            other => panic!("{other:?}"),
        };
        assert!(quanta(20) > quanta(2), "{} vs {}", quanta(20), quanta(2));
    }
}
