//! PAUSE frames as IEEE 802.3 Annex 31B (PAUSE) and 802.1Qbb (PFC) define them.
//!
//! A frame asks the port that receives it to stop sending a priority for a time given in
//! *quanta* of 512 bit times at the link's rate, at most 65,535 quanta: 33.5 ms at 1 Gb/s,
//! 3.36 ms at 10 Gb/s, 0.84 ms at 40 Gb/s, 0.335 ms at 100 Gb/s. (The NRL slides' table gives
//! the 40 Gb/s quantum as 17.92 ns; 512 bits at 40 Gb/s are 12.8 ns, and their own max pause
//! time, 0.84 ms, is 65,535 × 12.8 ns: the 17.92 is a typo.) A newer frame overrides the running
//! timer, a time of 0 resumes at once, and a frame already being serialized finishes first
//! (a paused port only stops *starting* data packets).
//!
//! irn has one pausable class: data. Control packets (ACK, NACK, CNP, pause frames themselves)
//! travel in a class that is never paused, so a PFC frame here is a PAUSE for one priority.
//!
//! Switches send frames one of two ways ([`PauseFrames`]): `XoffXon`, irn's original model (and
//! htsim's): XOFF stops the upstream port until an XON, with no timer; or `Timed`, as switches
//! send them: each XOFF carries a pause time, the switch refreshes it before it runs out while
//! its input stays above the resume level, and sends a frame of time 0 (XON) below it. The two
//! agree as long as refreshes arrive in time; they differ when a refresh is late (the upstream
//! port resumes by itself) and across long links, where one pause lasts less than a round trip.
//!
//! | file | holds |
//! | --- | --- |
//! | `mod.rs` | frames, quanta, how switches send PFC frames ([`PauseFrames`]) |
//! | `control.rs` | pause control at a long link's receiving end: threshold, on-off, time-based |
//! | `source.rs` | a host pausing its switch at random, the slides' "end cluster" |

mod control;
mod source;

pub use control::{ControlLoop, PauseControl, PauseRule};
pub use source::{PauseSource, PauseSourceConfig};

use irn_core::{Bandwidth, Duration};

/// Bit times in one pause quantum.
pub const QUANTUM_BITS: u64 = 512;

/// The longest pause one frame can ask for, in quanta (the field is 16 bits).
pub const MAX_QUANTA: u16 = u16::MAX;

/// What a pause frame asks of the port that receives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PauseFrame {
    /// Stop until told otherwise (the `XoffXon` model's XOFF: no timer).
    Xoff,
    /// Stop for this many quanta at the link's rate, replacing any running pause; 0 resumes at
    /// once (an XON).
    Quanta(u16),
}

impl PauseFrame {
    /// The frame that resumes the receiver at once.
    pub const XON: PauseFrame = PauseFrame::Quanta(0);

    /// Whether the frame stops the receiver (anything but time 0).
    pub fn pauses(self) -> bool {
        self != Self::XON
    }

    /// The frame packed into an event's spare bytes: (quanta, whether it is an `Xoff`).
    pub fn to_parts(self) -> (u16, bool) {
        match self {
            PauseFrame::Xoff => (0, true),
            PauseFrame::Quanta(q) => (q, false),
        }
    }

    /// [`to_parts`](Self::to_parts) undone.
    pub fn from_parts(quanta: u16, xoff: bool) -> Self {
        if xoff {
            PauseFrame::Xoff
        } else {
            PauseFrame::Quanta(quanta)
        }
    }
}

/// How long `quanta` pause quanta last on a link of `rate`.
pub fn quanta_time(rate: Bandwidth, quanta: u16) -> Duration {
    rate.serialization(u64::from(quanta) * QUANTUM_BITS / 8)
}

/// The quanta that pause a link of `rate` for at least `time` (at most [`MAX_QUANTA`]).
pub fn quanta_for(rate: Bandwidth, time: Duration) -> u16 {
    // ps × bits/s / (512 × 10^12 ps/s), rounded up.
    let bits = u128::from(time.as_ps()) * u128::from(rate.as_bps());
    let per_quantum = u128::from(QUANTUM_BITS) * 1_000_000_000_000;
    u16::try_from(bits.div_ceil(per_quantum)).unwrap_or(MAX_QUANTA)
}

/// How switches send PFC frames (`[switch] pfc_frames`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PauseFrames {
    /// XOFF until XON, no timer: irn's model before pause times existed, and htsim's.
    #[default]
    XoffXon,
    /// 802.1Qbb as switches send it: XOFF with `quanta`, resent every `refresh` (or, if
    /// `None`, every half pause time at the link's rate) while the input stays above its resume
    /// level; XON (time 0) below it.
    Timed {
        quanta: u16,
        refresh: Option<Duration>,
    },
}

impl PauseFrames {
    /// The frame that pauses the upstream port of a link of `rate`, and when to send it again
    /// while the input stays paused (`None`: never, it holds until XON).
    pub fn xoff(self, rate: Bandwidth) -> (PauseFrame, Option<Duration>) {
        match self {
            PauseFrames::XoffXon => (PauseFrame::Xoff, None),
            PauseFrames::Timed { quanta, refresh } => {
                let half = || Duration::from_ps(quanta_time(rate, quanta).as_ps() / 2);
                let every = refresh.unwrap_or_else(half);
                (PauseFrame::Quanta(quanta), Some(every))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The standard's table (and the slides', with their 40 Gb/s quantum corrected).
    #[test]
    fn quanta_and_max_pause_at_each_rate() {
        // (Gb/s, one quantum in ps, max pause in ns)
        let table = [
            (1, 512_000, 33_553_920),
            (10, 51_200, 3_355_392),
            (40, 12_800, 838_848),
            (100, 5_120, 335_539),
            (400, 1_280, 83_884),
        ];
        for (gbps, quantum_ps, max_ns) in table {
            let rate = Bandwidth::from_gbps(gbps);
            assert_eq!(quanta_time(rate, 1).as_ps(), quantum_ps, "{gbps} Gb/s");
            assert_eq!(
                quanta_time(rate, MAX_QUANTA).as_ps() / 1000,
                max_ns,
                "{gbps} Gb/s"
            );
            assert_eq!(quanta_for(rate, quanta_time(rate, 777)), 777);
        }
        // Rounded up, capped at the field's width.
        let rate = Bandwidth::from_gbps(100);
        assert_eq!(quanta_for(rate, Duration::from_ps(5_121)), 2);
        assert_eq!(quanta_for(rate, Duration::from_ms(1)), MAX_QUANTA);
        assert_eq!(quanta_for(rate, Duration::ZERO), 0);
    }

    #[test]
    fn frames_pack_into_an_event_and_back() {
        for f in [
            PauseFrame::Xoff,
            PauseFrame::XON,
            PauseFrame::Quanta(1),
            PauseFrame::Quanta(MAX_QUANTA),
        ] {
            let (q, xoff) = f.to_parts();
            assert_eq!(PauseFrame::from_parts(q, xoff), f);
        }
        assert!(PauseFrame::Xoff.pauses() && PauseFrame::Quanta(3).pauses());
        assert!(!PauseFrame::XON.pauses());
    }

    #[test]
    fn timed_frames_refresh_at_half_the_pause_unless_told() {
        let rate = Bandwidth::from_gbps(100);
        assert_eq!(PauseFrames::XoffXon.xoff(rate), (PauseFrame::Xoff, None));
        let timed = PauseFrames::Timed {
            quanta: 1000,
            refresh: None,
        };
        assert_eq!(
            timed.xoff(rate),
            (PauseFrame::Quanta(1000), Some(Duration::from_ps(2_560_000)))
        );
        let timed = PauseFrames::Timed {
            quanta: 1000,
            refresh: Some(Duration::from_us(1)),
        };
        assert_eq!(timed.xoff(rate).1, Some(Duration::from_us(1)));
    }
}
