//! DCTCP (Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010; RFC 8257): a window-based
//! controller that cuts its window in proportion to the fraction of ECN-marked packets, one of
//! the window-based schemes IRN was also run with (IRN §4.4.4).
//!
//! # The variant implemented here
//!
//! * **Observation windows.** A window of data starts with the first ACK and ends once the
//!   cumulative ACK reaches the `nxt` recorded when it started (Linux's `next_seq` rule: one RTT
//!   of data). Within it every ACK or NACK counts once, and marked ones (`ece`) count once: the
//!   receiver acknowledges every data packet and `ece` echoes that one packet's CE bit, so
//!   F = marked ACKs / ACKs is the fraction of marked packets (the paper's F). Counting
//!   `newly_acked` instead would misweigh the cumulative jump that ends a loss episode, which
//!   carries only one packet's mark.
//! * **At the end of a window:** α ← (1 − g)·α + g·F; if any ACK in it was marked,
//!   cwnd ← max(min_window, cwnd·(1 − α/2)), so at most one ECN cut per window, using the α
//!   that includes this window.
//! * **Additive increase:** each unmarked ACK adds `newly_acked / cwnd` (one packet per window
//!   of ACKs); a marked ACK adds nothing (RFC 3168: no increase on a congestion echo).
//! * **Loss** ([`Dctcp::on_loss`]): cwnd ← max(min_window, cwnd/2), as conventional TCP
//!   (RFC 8257 §3.5).
//! * **Once per window of data, whatever the signal** (RFC 3168 §6.1.2): a cut, by loss or by
//!   ECN, records the `nxt` of that moment; no further cut happens until the cumulative ACK
//!   reaches it. An ECN cut that falls in that span is skipped (α is still updated).
//! * **α starts at 1** ([`DctcpParams::initial_alpha`]), as Linux does (`dctcp_alpha_on_init`
//!   defaults to the maximum): the first marked window halves the window, the conservative
//!   choice for flows that start at a full BDP. The DCTCP paper does not fix it.
//! * No slow start: IRN's flows start at line rate with a BDP window (IRN §4.1): the
//!   transport's flight limit (a go-back-N transmit window or BDP-FC's cap, else the tracking
//!   window), unless [`DctcpParams::initial_window`] names one. A window that started above
//!   the flight limit would not bind, and its first ECN cuts would change nothing until it
//!   fell below (from 16,384 packets to 104, eight halvings); ns-3's RDMA DCTCP (`HAS_WIN`,
//!   `VAR_WIN`) starts at one BDP, so its first cut takes effect at once.
//!
//! The window is kept as an `f64` so the per-ACK increase accumulates; [`Dctcp::window`] rounds
//! it down.

use super::AckEvent;
use crate::time::Time;

/// DCTCP's sender parameters. The switch marking threshold K belongs to the switch configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DctcpParams {
    /// Gain g of the α moving average. 1/16 (DCTCP paper §3.4 and its evaluation; RFC 8257).
    pub g: f64,
    /// The window never drops below this many packets. 1 (irn's choice: a window-limited QP
    /// always keeps one packet in flight).
    pub min_window: u32,
    /// α before any observation window ends. 1.0 (Linux DCTCP's default; see the module
    /// documentation).
    pub initial_alpha: f64,
    /// The window a flow starts with, in packets; `None`: the transport's flight limit (its
    /// transmit window or BDP-FC's cap, else its tracking window).
    pub initial_window: Option<u32>,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams {
            g: 1.0 / 16.0,
            min_window: 1,
            initial_alpha: 1.0,
            initial_window: None,
        }
    }
}

/// DCTCP for one queue pair: turns ACKs with ECN echoes, and losses, into the window of packets
/// the sender may have in flight (see the module documentation for the exact rules).
#[derive(Debug, Clone)]
pub struct Dctcp {
    p: DctcpParams,
    cwnd: f64,
    alpha: f64,
    /// ACKs in the current observation window.
    acks: u64,
    /// Marked ACKs in the current observation window.
    marked: u64,
    /// The cumulative ACK that ends the current observation window; `None` before the first ACK.
    window_end: Option<u64>,
    /// No cut until the cumulative ACK reaches this (the `nxt` at the last cut).
    cut_until: Option<u64>,
}

impl Dctcp {
    /// DCTCP starting with a window of `initial_window` packets (a BDP: flows start at line
    /// rate), or of [`DctcpParams::initial_window`] when that is set.
    pub fn new(p: DctcpParams, initial_window: u32) -> Self {
        let start = p.initial_window.unwrap_or(initial_window);
        Dctcp {
            p,
            cwnd: f64::from(start.max(p.min_window).max(1)),
            alpha: p.initial_alpha,
            acks: 0,
            marked: 0,
            window_end: None,
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

    /// α, the moving average of the marked fraction.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// An ACK or NACK arrived.
    pub fn on_ack(&mut self, _now: Time, ack: &AckEvent) {
        self.acks += 1;
        if ack.ece {
            self.marked += 1;
        } else if ack.newly_acked > 0 {
            self.cwnd += ack.newly_acked as f64 / self.cwnd;
        }
        let end = *self.window_end.get_or_insert(ack.nxt);
        if ack.una >= end {
            let f = self.marked as f64 / self.acks as f64;
            self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g * f;
            if self.marked > 0 && self.may_cut(ack.una) {
                self.cut(self.cwnd * (1.0 - self.alpha / 2.0), ack.nxt);
            }
            self.acks = 0;
            self.marked = 0;
            self.window_end = Some(ack.nxt);
        }
    }

    /// The sender detected a loss with cumulative ACK `una` and next new packet `nxt`: halve the
    /// window, unless a cut already happened for this window of data.
    pub fn on_loss(&mut self, _now: Time, una: u64, nxt: u64) {
        if self.may_cut(una) {
            self.cut(self.cwnd / 2.0, nxt);
        }
    }

    fn may_cut(&self, una: u64) -> bool {
        self.cut_until.is_none_or(|end| una >= end)
    }

    fn cut(&mut self, to: f64, nxt: u64) {
        self.cwnd = to.max(f64::from(self.p.min_window)).max(1.0);
        self.cut_until = Some(nxt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds one ACK for packet `una − 1` (newly acking one packet), the sender having filled its
    /// window (nxt = una + window before the ACK).
    fn ack(c: &mut Dctcp, una: u64, ece: bool) {
        let nxt = una + u64::from(c.window());
        ack_with(c, una, nxt, ece);
    }

    /// Feeds one ACK newly acking one packet, with the sender's `una` and `nxt` after it.
    fn ack_with(c: &mut Dctcp, una: u64, nxt: u64, ece: bool) {
        c.on_ack(
            Time::ZERO,
            &AckEvent {
                newly_acked: 1,
                rtt: None,
                ece,
                una,
                nxt,
            },
        );
    }

    #[test]
    fn defaults() {
        let p = DctcpParams::default();
        assert_eq!(p.g, 1.0 / 16.0);
        assert_eq!(p.min_window, 1);
        assert_eq!(p.initial_alpha, 1.0);
        assert_eq!(p.initial_window, None);
        let c = Dctcp::new(p, 110);
        assert_eq!(c.window(), 110);
        assert_eq!(Dctcp::new(p, 0).window(), 1);
    }

    #[test]
    fn alpha_converges_to_the_marked_fraction() {
        // The sender keeps 10 packets ahead (nxt = una + 10), and 3 of every 10 ACKs are marked.
        // The first window ends at una = 11; every later one spans 10 ACKs holding 3 marks, so
        // F = 0.3 and α − 0.3 shrinks by 15/16 per window: within 1e-3 after the ~200 here.
        let mut c = Dctcp::new(DctcpParams::default(), 10);
        for una in 1..=2001u64 {
            c.on_ack(
                Time::ZERO,
                &AckEvent {
                    newly_acked: 1,
                    rtt: None,
                    ece: (una - 1) % 10 < 3,
                    una,
                    nxt: una + 10,
                },
            );
        }
        assert!((c.alpha() - 0.3).abs() < 1e-3, "alpha {}", c.alpha());
    }

    #[test]
    fn alpha_follows_the_ewma_exactly() {
        // One ACK per window (nxt = una): α_n = (1 − g)·α_{n−1} + g·F with F ∈ {0, 1}.
        let mut c = Dctcp::new(DctcpParams::default(), 100);
        let g = 1.0 / 16.0;
        let mut want = 1.0;
        for (k, ece) in [false, false, true, false, true, true]
            .into_iter()
            .enumerate()
        {
            let una = k as u64 + 1;
            c.on_ack(
                Time::ZERO,
                &AckEvent {
                    newly_acked: 1,
                    rtt: None,
                    ece,
                    una,
                    nxt: una,
                },
            );
            want = (1.0 - g) * want + g * if ece { 1.0 } else { 0.0 };
            assert!((c.alpha() - want).abs() < 1e-15, "window {k}");
        }
    }

    #[test]
    fn no_marks_grow_one_packet_per_window() {
        let mut c = Dctcp::new(DctcpParams::default(), 100);
        // One ACK: +1/100 exactly.
        ack(&mut c, 1, false);
        assert!((c.cwnd() - 100.01).abs() < 1e-12);
        // Five windows of ACKs (⌊cwnd⌋ each): each adds Σ 1/cwnd over its ACKs, a little under
        // one packet (between ⌊cwnd⌋/(cwnd + 1) and ⌊cwnd⌋/cwnd ≤ 1).
        let mut una = 1;
        for _ in 0..5 {
            let before = c.cwnd();
            for _ in 0..c.window() {
                una += 1;
                ack(&mut c, una, false);
            }
            let gain = c.cwnd() - before;
            assert!(gain > 0.98 && gain <= 1.0, "gain {gain}");
        }
        assert_eq!(c.window(), 104);
        // α decayed from 1 by 15/16 per (unmarked) observation window: (15/16)^5 after five.
        assert!(
            (c.alpha() - (15.0f64 / 16.0).powi(5)).abs() < 1e-12,
            "alpha {}",
            c.alpha()
        );
    }

    #[test]
    fn all_marked_halves_once_per_window() {
        // α starts at 1 and stays 1 under F = 1, so each window halves the window.
        let mut c = Dctcp::new(DctcpParams::default(), 64);
        let mut una = 0;
        let mut cuts = Vec::new();
        let mut last = c.window();
        while cuts.len() < 6 {
            una += 1;
            ack(&mut c, una, true);
            assert_eq!(c.alpha(), 1.0);
            if c.window() != last {
                last = c.window();
                cuts.push((una, last));
            }
            assert!(una < 1000);
        }
        // The first window opened with nxt = 1 + 64 = 65 and ends at una = 65. At that cut the
        // sender had sent up to 65 + 64 = 129: the next window ends there; then 129 + 32, …
        assert_eq!(
            cuts,
            [(65, 32), (129, 16), (161, 8), (177, 4), (185, 2), (189, 1)]
        );
        // The floor holds.
        for _ in 0..20 {
            una += 1;
            ack(&mut c, una, true);
        }
        assert_eq!(c.window(), 1);
    }

    #[test]
    fn partial_marking_cuts_by_alpha_over_two() {
        // α = 0 from the start, one window of 10 ACKs with 5 marked: α = g·0.5 = 1/32, cut by 1/64.
        let p = DctcpParams {
            initial_alpha: 0.0,
            ..DctcpParams::default()
        };
        let mut c = Dctcp::new(p, 100);
        for i in 1..=10u64 {
            c.on_ack(
                Time::ZERO,
                &AckEvent {
                    newly_acked: 1,
                    rtt: None,
                    ece: i % 2 == 0,
                    una: i,
                    nxt: 10,
                },
            );
        }
        assert_eq!(c.alpha(), 1.0 / 32.0);
        // 5 unmarked ACKs grew the window first: 100 → ≈100.05, then × (1 − 1/64).
        let mut grown = 100.0;
        for _ in 0..5 {
            grown += 1.0 / grown;
        }
        assert!((c.cwnd() - grown * (1.0 - 1.0 / 64.0)).abs() < 1e-9);
        assert_eq!(c.window(), 98);
    }

    #[test]
    fn loss_halves_once_per_window_of_data() {
        let mut c = Dctcp::new(DctcpParams::default(), 64);
        c.on_loss(Time::ZERO, 0, 64);
        assert_eq!(c.window(), 32);
        // More losses before una reaches 64: ignored.
        c.on_loss(Time::ZERO, 10, 70);
        c.on_loss(Time::ZERO, 63, 90);
        assert_eq!(c.window(), 32);
        // A marked window ending inside that span does not cut either.
        ack_with(&mut c, 40, 40, true);
        assert_eq!(c.window(), 32);
        // Once una reaches 64, the next loss cuts again.
        c.on_loss(Time::ZERO, 64, 100);
        assert_eq!(c.window(), 16);
        for k in 0..10 {
            c.on_loss(Time::ZERO, 1000 + 2000 * k, 2000 + 2000 * k);
        }
        assert_eq!(c.window(), 1);
    }

    /// A window that starts above the flight limit absorbs the first cuts: from the 16,384
    /// packets of the tracking window it takes eight halvings (α stays 1 while every window is
    /// marked) to fall below a 104-packet transmit window, while one that starts at 104 is cut
    /// by the first marked window.
    #[test]
    fn initial_window_sets_where_the_cuts_start() {
        // (initial_window, transport's window, window after 1, 7 and 8 marked windows)
        let table: &[(Option<u32>, u32, [u32; 3])] = &[
            (None, 16_384, [8192, 128, 64]),
            (Some(104), 16_384, [52, 1, 1]),
            (None, 104, [52, 1, 1]),
            (Some(16_384), 104, [8192, 128, 64]),
            (Some(0), 104, [1, 1, 1]),
        ];
        for &(initial_window, transport, after) in table {
            let p = DctcpParams {
                initial_window,
                ..DctcpParams::default()
            };
            let mut c = Dctcp::new(p, transport);
            let start = initial_window.unwrap_or(transport).max(1);
            assert_eq!(c.window(), start, "{initial_window:?}, {transport}");
            // One marked ACK per window of data: each ends a window and may cut.
            let mut got = Vec::new();
            for una in 1..=8u64 {
                ack_with(&mut c, una, una, true);
                if [1, 7, 8].contains(&una) {
                    got.push(c.window());
                }
            }
            assert_eq!(got, after, "{initial_window:?}, {transport}");
        }
    }
}
