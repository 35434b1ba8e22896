//! When each lost packet was detected, for IRN §6.3's retransmission delay.
//!
//! IRN §6.3 models a NIC that fetches a retransmission over PCIe only once it knows the packet
//! is lost ("when loss recovery is triggered or when a look-ahead is performed"): "the sender QP
//! is allowed to retransmit a packet only after 2 µs have elapsed since the packet was detected
//! as lost". The delay belongs to each packet, so one loss followed by a stream of NACKs must
//! not push its retransmission back each time, and new packets, which the NIC prefetches, are
//! not held by it.
//!
//! Packets are detected in order: an episode (a NACK's recovery, a timeout, a go-back-N rewind)
//! detects everything from the cumulative ACK up to a boundary at once, and each later SACK
//! that raises the highest SACK detects the holes below it. So the detection times are a
//! staircase over packet numbers — a few `(boundary, at)` steps, rising in both — and a packet
//! may leave once the first step above it is `delay` old. Steps older than `delay` are folded
//! into one mark below which every packet is ready, so only the steps of the last `delay` are
//! kept: a handful at any link rate, pushed as NACKs arrive, never per packet sent.

use std::collections::VecDeque;

use crate::time::{Duration, Time};

/// The detection staircase of one sender. Built only when the retransmission delay is not zero.
#[derive(Debug, Clone)]
pub(crate) struct Detection {
    delay: Duration,
    /// Every packet below this was detected at least `delay` ago (or never needs a fetch).
    ready_below: u64,
    /// `(boundary, at)`: packets below `boundary` not covered by an earlier step were detected
    /// at `at`. Both rise from front to back; every `at + delay` is still in the future once
    /// [`expire`](Self::expire) ran.
    steps: VecDeque<(u64, Time)>,
}

impl Detection {
    pub(crate) fn new(delay: Duration) -> Self {
        Detection {
            delay,
            ready_below: 0,
            steps: VecDeque::new(),
        }
    }

    /// A new episode at `now` detects `[from, boundary)`: packets detected before it must be
    /// fetched again too (a timeout resends what an earlier episode already resent).
    pub(crate) fn episode(&mut self, now: Time, from: u64, boundary: u64) {
        self.steps.clear();
        self.ready_below = from;
        self.raise(now, boundary);
    }

    /// A higher SACK at `now` detects the holes below `boundary` that were not detected yet.
    pub(crate) fn raise(&mut self, now: Time, boundary: u64) {
        let top = self.steps.back().map_or(self.ready_below, |&(b, _)| b);
        if boundary > top {
            self.steps.push_back((boundary, now));
        }
    }

    /// Whether packet `n` may be resent at `now`.
    pub(crate) fn ready(&mut self, now: Time, n: u64) -> bool {
        self.expire(now);
        n < self.ready_below
    }

    /// The first time after `now` at which a packet still being fetched may leave, if any is.
    pub(crate) fn next_ready(&self, now: Time) -> Option<Time> {
        self.steps
            .iter()
            .map(|&(_, at)| at + self.delay)
            .find(|&t| t > now)
    }

    /// Folds the steps that are `delay` old into `ready_below`.
    fn expire(&mut self, now: Time) {
        while let Some(&(boundary, at)) = self.steps.front() {
            if at + self.delay > now {
                break;
            }
            self.ready_below = self.ready_below.max(boundary);
            self.steps.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(t: u64) -> Time {
        Time::ZERO + Duration::from_us(t)
    }

    #[test]
    fn each_packet_waits_for_its_own_detection() {
        let mut d = Detection::new(Duration::from_us(2));
        d.episode(us(10), 5, 6); // 5 detected at 10
        d.raise(us(11), 9); // 6..9 at 11
        d.raise(us(11), 8); // nothing new
        assert_eq!(d.next_ready(us(10)), Some(us(12)));
        assert_eq!(d.next_ready(us(12)), Some(us(13)));
        // (now, packet, ready)
        let table = [
            (10, 4, true), // below the episode: already acknowledged or fetched
            (10, 5, false),
            (11, 5, false),
            (12, 5, true),
            (12, 6, false),
            (13, 8, true),
            (13, 9, false), // never detected
        ];
        for (now, n, want) in table {
            assert_eq!(d.ready(us(now), n), want, "packet {n} at {now} us");
        }
        assert_eq!(d.next_ready(us(13)), None);
    }

    #[test]
    fn a_new_episode_fetches_again() {
        let mut d = Detection::new(Duration::from_us(2));
        d.episode(us(0), 0, 4);
        assert!(d.ready(us(2), 3));
        d.episode(us(50), 0, 4); // a timeout: everything again
        assert!(!d.ready(us(51), 0));
        assert_eq!(d.next_ready(us(51)), Some(us(52)));
        assert!(d.ready(us(52), 3));
    }
}
