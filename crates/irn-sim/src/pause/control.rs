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
//! Sizing: the slides ask for a buffer of rate × round trip + threshold. That covers on-off and
//! threshold, whose input peaks at the threshold plus what arrives while the PAUSE travels and
//! the link empties (and, for on-off, the wait for the next check). Time-based pauses a source
//! by a fraction of each interval, so at a steady sink rate its input settles where that
//! fraction matches: `occupancy ≈ (1 − sink rate / source rate) × (height − constant)`; its
//! buffer must hold that too (with the default height, the buffer itself, it does whenever the
//! fraction needed is below `(buffer − constant) / buffer`).
//!
//! **none** never pauses: the input drops what does not fit (a lossy long link between sites
//! that run PFC inside).
//!
//! **threshold** is standard PFC at a level of its own (XOFF above, XON below the resume level,
//! the frames `[switch] pfc_frames` says), decided on every packet like PFC, not by interval.

use irn_core::Duration;

use super::{PauseFrame, PauseFrames, MAX_QUANTA};
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
}

/// One switch input under a pause rule: the switch port at the receiving end of the link, and
/// how often a periodic rule looks at it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PauseControl {
    pub port: PortId,
    pub rule: PauseRule,
    pub interval: Duration,
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
