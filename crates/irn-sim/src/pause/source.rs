//! A host that pauses its switch now and then, as a busy end system does: the NRL slides' "end
//! cluster", which pauses the WAN's receiving side at random (uniform) intervals for random
//! (uniform) lengths.
//!
//! A pause longer than one frame can ask for (65,535 quanta) is kept up by resending: a frame
//! of the longest pause every half of it, then one for what is left, as a switch refreshes its
//! PFC. Each pause begins a uniform gap after the previous one ended.

use irn_core::{Bandwidth, Duration};
use rand::rngs::StdRng;
use rand::Rng;

use super::{quanta_for, quanta_time, PauseFrame, MAX_QUANTA};
use crate::ids::HostIdx;

/// `[pauses]` for one host, resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PauseSourceConfig {
    pub host: HostIdx,
    /// The first pause's gap is counted from here.
    pub start: Duration,
    /// Time from one pause's end to the next one's start: uniform in `[gap.0, gap.1]`.
    pub gap: (Duration, Duration),
    /// A pause's length: uniform in `[length.0, length.1]`.
    pub length: (Duration, Duration),
}

/// One host's pauses as they go.
#[derive(Debug)]
pub struct PauseSource {
    cfg: PauseSourceConfig,
    rng: StdRng,
    /// What is left of the pause in progress.
    left: Duration,
}

impl PauseSource {
    pub fn new(cfg: PauseSourceConfig, rng: StdRng) -> Self {
        PauseSource {
            cfg,
            rng,
            left: Duration::ZERO,
        }
    }

    pub fn host(&self) -> HostIdx {
        self.cfg.host
    }

    /// When the first pause begins, after the start.
    pub fn first(&mut self) -> Duration {
        self.cfg.start + draw(&mut self.rng, self.cfg.gap)
    }

    /// The frame to send now on a link of `rate` (a pause beginning or going on), and how long
    /// until this source acts again.
    pub fn next(&mut self, rate: Bandwidth) -> (PauseFrame, Duration) {
        if self.left == Duration::ZERO {
            self.left = draw(&mut self.rng, self.cfg.length);
        }
        let longest = quanta_time(rate, MAX_QUANTA);
        if self.left > longest {
            // Resend before it runs out; the new frame restarts the timer from its arrival.
            let half = Duration::from_ps(longest.as_ps() / 2);
            self.left = self.left - half;
            return (PauseFrame::Quanta(MAX_QUANTA), half);
        }
        let frame = PauseFrame::Quanta(quanta_for(rate, self.left));
        let this = std::mem::replace(&mut self.left, Duration::ZERO);
        (frame, this + draw(&mut self.rng, self.cfg.gap))
    }
}

/// A uniform draw in `[lo, hi]` (picosecond resolution).
fn draw(rng: &mut StdRng, (lo, hi): (Duration, Duration)) -> Duration {
    if hi <= lo {
        return lo;
    }
    Duration::from_ps(rng.random_range(lo.as_ps()..=hi.as_ps()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn source(gap: (u64, u64), length: (u64, u64)) -> PauseSource {
        let us = Duration::from_us;
        PauseSource::new(
            PauseSourceConfig {
                host: HostIdx(1),
                start: us(10),
                gap: (us(gap.0), us(gap.1)),
                length: (us(length.0), us(length.1)),
            },
            StdRng::seed_from_u64(1),
        )
    }

    #[test]
    fn fixed_pauses_one_frame_each() {
        let rate = Bandwidth::from_gbps(100);
        let mut s = source((20, 20), (5, 5));
        assert_eq!(s.first(), Duration::from_us(30));
        for _ in 0..3 {
            let (frame, wait) = s.next(rate);
            // 5 µs at 100 Gb/s: 976.5625 quanta, rounded up.
            assert_eq!(frame, PauseFrame::Quanta(977));
            assert_eq!(wait, Duration::from_us(25));
        }
    }

    /// A pause of 1 ms at 100 Gb/s (almost three longest pauses) is resent every half of the
    /// longest pause, the last frame covering what is left; the next pause follows the gap.
    #[test]
    fn long_pauses_are_resent_until_covered() {
        let rate = Bandwidth::from_gbps(100);
        let longest = quanta_time(rate, MAX_QUANTA);
        let half = Duration::from_ps(longest.as_ps() / 2);
        let mut s = source((0, 0), (1000, 1000));
        let mut covered = Duration::ZERO;
        loop {
            let (frame, wait) = s.next(rate);
            if frame == PauseFrame::Quanta(MAX_QUANTA) && s.left > Duration::ZERO {
                assert_eq!(wait, half);
                covered = covered + wait;
                continue;
            }
            let PauseFrame::Quanta(q) = frame else {
                panic!("{frame:?}")
            };
            // The last frame pauses for the rest: 1 ms in all, to the quantum.
            let end = covered + quanta_time(rate, q);
            assert!(end >= Duration::from_ms(1) && end < Duration::from_ms(1) + half);
            assert_eq!(covered + wait, Duration::from_ms(1));
            break;
        }
    }

    #[test]
    fn uniform_draws_stay_in_range_and_repeat_with_the_seed() {
        let rate = Bandwidth::from_gbps(10);
        let run = || {
            let mut s = source((1, 100), (1, 50));
            (0..200).map(|_| s.next(rate)).collect::<Vec<_>>()
        };
        let a = run();
        assert_eq!(a, run());
        for (frame, wait) in a {
            let PauseFrame::Quanta(q) = frame else {
                panic!()
            };
            let length = quanta_time(rate, q);
            assert!(length >= Duration::from_us(1) && length <= Duration::from_us(51));
            assert!(wait >= Duration::from_us(2) && wait <= Duration::from_us(150));
        }
    }
}
