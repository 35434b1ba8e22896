//! AIMD (TCP Reno's congestion avoidance, RFC 5681): a window that grows by a constant per
//! window of ACKs and shrinks by a factor on loss. IRN §4.4.4 and §4.6 run IRN with "TCP's AIMD",
//! which uses losses as its congestion signal (one reason IRN gains most from dropping PFC then).
//!
//! # The variant implemented here
//!
//! * Each ACK adds `additive_increase · newly_acked / cwnd` packets: `additive_increase` packets
//!   per window of ACKs (RFC 5681 §3.1's per-ACK form). NACKs and duplicates (`newly_acked` = 0)
//!   add nothing.
//! * A loss sets cwnd ← max(min_window, cwnd · `decrease_factor`), at most once per window of
//!   data: the cut records the `nxt` of that moment, and losses reported before the cumulative
//!   ACK reaches it are the same congestion event (RFC 5681 / RFC 6582 recovery point).
//! * No slow start: IRN's flows start at line rate with a BDP window (IRN §4.1).
//!
//! The window is kept as an `f64` so the per-ACK increase accumulates; [`Aimd::window`] rounds it
//! down.

use super::AckEvent;
use crate::time::Time;

/// AIMD's parameters (TCP Reno's values, RFC 5681).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AimdParams {
    /// Packets added per window of ACKs. 1 (RFC 5681 congestion avoidance: one segment per RTT).
    pub additive_increase: f64,
    /// Factor the window is multiplied by on loss. 0.5 (RFC 5681: halve).
    pub decrease_factor: f64,
    /// The window never drops below this many packets. 1 (RFC 5681's loss window).
    pub min_window: u32,
}

impl Default for AimdParams {
    fn default() -> Self {
        AimdParams {
            additive_increase: 1.0,
            decrease_factor: 0.5,
            min_window: 1,
        }
    }
}

/// AIMD for one queue pair: turns ACKs and losses into the window of packets the sender may have
/// in flight (see the module documentation for the exact rules).
#[derive(Debug, Clone)]
pub struct Aimd {
    p: AimdParams,
    cwnd: f64,
    /// No cut until the cumulative ACK reaches this (the `nxt` at the last cut).
    cut_until: Option<u64>,
}

impl Aimd {
    /// AIMD starting with a window of `initial_window` packets (a BDP: flows start at line rate).
    pub fn new(p: AimdParams, initial_window: u32) -> Self {
        Aimd {
            p,
            cwnd: f64::from(initial_window.max(p.min_window).max(1)),
            cut_until: None,
        }
    }

    /// Packets allowed in flight: the window rounded down, at least one.
    pub fn window(&self) -> u32 {
        (self.cwnd.floor() as u32).max(self.p.min_window).max(1)
    }

    /// The window before rounding, in packets.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// An ACK or NACK arrived: additive increase for the packets it newly acknowledges.
    pub fn on_ack(&mut self, _now: Time, ack: &AckEvent) {
        if ack.newly_acked > 0 {
            self.cwnd += self.p.additive_increase * ack.newly_acked as f64 / self.cwnd;
        }
    }

    /// The sender detected a loss with cumulative ACK `una` and next new packet `nxt`: cut the
    /// window, unless a cut already happened for this window of data.
    pub fn on_loss(&mut self, _now: Time, una: u64, nxt: u64) {
        if self.cut_until.is_some_and(|end| una < end) {
            return;
        }
        self.cwnd = (self.cwnd * self.p.decrease_factor)
            .max(f64::from(self.p.min_window))
            .max(1.0);
        self.cut_until = Some(nxt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acked(c: &mut Aimd, newly_acked: u64) {
        c.on_ack(
            Time::ZERO,
            &AckEvent {
                newly_acked,
                ..AckEvent::default()
            },
        );
    }

    #[test]
    fn defaults() {
        let p = AimdParams::default();
        assert_eq!(p.additive_increase, 1.0);
        assert_eq!(p.decrease_factor, 0.5);
        assert_eq!(p.min_window, 1);
        assert_eq!(Aimd::new(p, 110).window(), 110);
        assert_eq!(Aimd::new(p, 0).window(), 1);
    }

    #[test]
    fn one_packet_per_window_of_acks() {
        let mut c = Aimd::new(AimdParams::default(), 100);
        // One ACK covering a whole window adds exactly one packet.
        acked(&mut c, 100);
        assert_eq!(c.cwnd(), 101.0);
        // Per-packet ACKs: n windows of ⌊cwnd⌋ ACKs add a little under n (⌊cwnd⌋/cwnd ≤ 1 each).
        for n in 1..=5 {
            let before = c.cwnd();
            for _ in 0..c.window() {
                acked(&mut c, 1);
            }
            let gain = c.cwnd() - before;
            assert!(gain > 0.98 && gain <= 1.0, "window {n}: gain {gain}");
        }
        assert_eq!(c.window(), 105);
        // NACKs and duplicates (nothing newly acked) do not grow it.
        acked(&mut c, 0);
        assert_eq!(c.window(), 105);
    }

    #[test]
    fn additive_step_scales() {
        let p = AimdParams {
            additive_increase: 4.0,
            ..AimdParams::default()
        };
        let mut c = Aimd::new(p, 50);
        acked(&mut c, 50);
        assert_eq!(c.cwnd(), 54.0);
    }

    #[test]
    fn loss_multiplies_once_per_window_of_data() {
        let mut c = Aimd::new(AimdParams::default(), 100);
        c.on_loss(Time::ZERO, 0, 100);
        assert_eq!(c.cwnd(), 50.0);
        // Further losses before una reaches 100 are the same event.
        c.on_loss(Time::ZERO, 0, 100);
        c.on_loss(Time::ZERO, 99, 140);
        assert_eq!(c.cwnd(), 50.0);
        // Growth in between is kept; the next event cuts what is there.
        acked(&mut c, 50);
        assert_eq!(c.cwnd(), 51.0);
        c.on_loss(Time::ZERO, 100, 160);
        assert_eq!(c.cwnd(), 25.5);
        assert_eq!(c.window(), 25);
    }

    #[test]
    fn loss_respects_min_window() {
        let p = AimdParams {
            min_window: 2,
            ..AimdParams::default()
        };
        let mut c = Aimd::new(p, 8);
        for k in 0..10 {
            c.on_loss(Time::ZERO, 10 * k, 10 * k + 10);
        }
        assert_eq!(c.cwnd(), 2.0);
        assert_eq!(c.window(), 2);
    }
}
