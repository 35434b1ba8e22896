//! Slow restart: a go-back-N sender's transmit window shrinks on every loss episode and regrows
//! as the cumulative ACK moves.
//!
//! ConnectX NICs in lossy mode ("Resilient RoCE") pair a transmit window (`roce_tx_window_en`)
//! with slow restart (`roce_slow_restart_en`): after a retransmission the sender's window (or
//! rate) drops and regrows, so a go-back-N sender stops resending a whole window at line rate
//! into the port that just dropped it. NVIDIA documents the switches (the `ROCE_ACCL` register)
//! but not the rule; this module is the rule irn chooses, TCP's two regrowths on a window cut
//! by a factor (RFC 5681's slow start and congestion avoidance, per packet counts).

/// How the window regrows after a cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Growth {
    /// +1 packet per window's worth of newly acknowledged packets: +1 per round trip.
    Additive,
    /// +1 packet per newly acknowledged packet: the window doubles per round trip.
    SlowStart,
}

/// [`TransportConfig::slow_restart`](super::TransportConfig::slow_restart): how far a loss
/// episode cuts the window, and how it regrows towards the full transmit window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlowRestart {
    /// The window after a loss episode is `max(1, ⌊factor × window⌋)`; in (0, 1).
    pub factor: f64,
    pub growth: Growth,
}

impl SlowRestart {
    /// Half the window, regrown by one packet per round trip.
    pub const DEFAULT: SlowRestart = SlowRestart {
        factor: 0.5,
        growth: Growth::Additive,
    };
}

/// A sender's slow-restart state: the window it may have in flight now.
#[derive(Debug, Clone)]
pub(super) struct RestartWindow {
    /// The transmit window the window regrows to.
    full: u32,
    window: u32,
    /// [`Growth::Additive`]: packets acknowledged towards the next +1.
    acked: u64,
    rule: SlowRestart,
}

impl RestartWindow {
    /// Starts at the full window `full` (≥ 1).
    pub(super) fn new(rule: SlowRestart, full: u32) -> Self {
        RestartWindow {
            full,
            window: full,
            acked: 0,
            rule,
        }
    }

    pub(super) fn window(&self) -> u32 {
        self.window
    }

    /// A loss episode (a NACK that rewinds, a timeout): cut the window; returns it.
    pub(super) fn on_loss(&mut self) -> u32 {
        let cut = (self.rule.factor * f64::from(self.window)) as u32;
        self.window = cut.max(1);
        self.acked = 0;
        self.window
    }

    /// The cumulative ACK moved `newly` packets: regrow towards the full window; returns it.
    pub(super) fn on_acked(&mut self, newly: u64) -> u32 {
        if self.window < self.full {
            match self.rule.growth {
                Growth::SlowStart => {
                    self.window = (u64::from(self.window) + newly).min(u64::from(self.full)) as u32
                }
                Growth::Additive => {
                    self.acked += newly;
                    while self.acked >= u64::from(self.window) && self.window < self.full {
                        self.acked -= u64::from(self.window);
                        self.window += 1;
                    }
                    if self.window == self.full {
                        self.acked = 0;
                    }
                }
            }
        }
        self.window
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_and_regrows_by_hand() {
        let additive = SlowRestart::DEFAULT;
        let mut w = RestartWindow::new(additive, 8);
        assert_eq!(w.on_loss(), 4);
        // +1 after 4 packets, the next +1 after 5 more, then 6, then 7: back to 8.
        assert_eq!(w.on_acked(3), 4);
        assert_eq!(w.on_acked(1), 5);
        assert_eq!(w.on_acked(5), 6);
        assert_eq!(w.on_acked(13), 8);
        assert_eq!(w.on_acked(100), 8);
        // One packet never cuts to nothing.
        let mut one = RestartWindow::new(additive, 1);
        assert_eq!(one.on_loss(), 1);
        let mut w = RestartWindow::new(
            SlowRestart {
                factor: 0.3,
                growth: Growth::SlowStart,
            },
            10,
        );
        assert_eq!(w.on_loss(), 3);
        assert_eq!(w.on_loss(), 1);
        assert_eq!(w.on_acked(1), 2);
        assert_eq!(w.on_acked(2), 4);
        assert_eq!(w.on_acked(7), 10);
    }
}
