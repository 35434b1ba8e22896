//! Which packets of one PSN space have arrived: the receive half shared by the responder (request
//! packets, sPSN) and the requester (read-response packets, rPSN).
//!
//! It only classifies and records; the caller decides what a packet does (place bytes, park a
//! Read, hold a premature CQE) between [`Arrivals::classify`] and [`Arrivals::accept`], and may
//! refuse a fresh packet (a Send with no receive WQE posted yet) by not accepting it.

use crate::bitmap::RingBitmap;
use crate::seq::Psn;
use crate::transport::{LossRecovery, TransportConfig};

/// What to do with an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Behind the expected PSN: it arrived before. Answer with a cumulative ACK.
    Stale,
    /// Ahead of the expected PSN and already recorded (selective repeat): answer with a NACK,
    /// as IRN NACKs every out-of-order arrival.
    Repeat,
    /// Ahead of the expected PSN under go-back-N: discard it; NACK only the first of an episode.
    Discard { nack: bool },
    /// Too far ahead for the bitmap (a peer ignoring the window): drop it unanswered.
    OutOfWindow,
    /// Not seen before: packet number `n`, `offset` packets past the expected one.
    Fresh { n: u64, offset: u32 },
}

/// Why a packet is not fresh, for the receive half's counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NotFresh {
    /// Arrived before ([`Verdict::Stale`], [`Verdict::Repeat`]).
    Duplicate,
    /// Ahead of the expected PSN under go-back-N ([`Verdict::Discard`]).
    OutOfOrder,
    /// Beyond the bitmap ([`Verdict::OutOfWindow`]).
    OutOfWindow,
}

/// A packet that is not fresh: why, and how the receive half answers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Rejected {
    pub why: NotFresh,
    /// `Some(None)`: a cumulative ACK; `Some(Some(psn))`: a NACK with `psn` as its SACK; `None`:
    /// no answer.
    pub reply: Option<Option<Psn>>,
}

impl Verdict {
    /// A fresh packet's (packet number, offset), or how to answer the packet `psn` instead.
    pub fn fresh(self, psn: Psn) -> Result<(u64, u32), Rejected> {
        let (why, reply) = match self {
            Verdict::Fresh { n, offset } => return Ok((n, offset)),
            Verdict::Stale => (NotFresh::Duplicate, Some(None)),
            Verdict::Repeat => (NotFresh::Duplicate, Some(Some(psn))),
            Verdict::Discard { nack } => (NotFresh::OutOfOrder, nack.then_some(Some(psn))),
            Verdict::OutOfWindow => (NotFresh::OutOfWindow, None),
        };
        Err(Rejected { why, reply })
    }
}

/// What accepting a packet did to the expected PSN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Advance {
    /// Packets the expected PSN moved past (0 for an out-of-order arrival).
    pub packets: u32,
    /// Of those, how many end a message: the MSN increment (popcount of the last-packet bitmap).
    pub messages: u32,
}

#[derive(Clone, Debug)]
enum Mode {
    /// Go-back-N (RoCE): only the expected packet is kept.
    InOrder { nack_sent: bool },
    /// IRN: out-of-order packets are kept and recorded, offset from the expected one.
    Selective {
        arrived: RingBitmap,
        /// The second bitmap of IRN §5.3.3's 2-bitmap: which arrivals end a message. Only the
        /// responder keeps it.
        last: Option<RingBitmap>,
    },
}

#[derive(Clone, Debug)]
pub(super) struct Arrivals {
    /// PSN of packet number 0.
    isn: Psn,
    /// Every packet before this one has arrived.
    expected: u64,
    mode: Mode,
    /// The most packets by which an arrival was ahead of the expected one.
    max_ahead: u32,
}

impl Arrivals {
    /// `two_bitmaps`: also track which packets end a message (the responder's 2-bitmap).
    pub fn new(cfg: &TransportConfig, isn: Psn, two_bitmaps: bool) -> Self {
        let mode = match cfg.recovery {
            LossRecovery::GoBackN => Mode::InOrder { nack_sent: false },
            LossRecovery::SelectiveRepeat { .. } | LossRecovery::Tcp | LossRecovery::MpRdma(_) => {
                Mode::Selective {
                    arrived: RingBitmap::new(cfg.window()),
                    last: two_bitmaps.then(|| RingBitmap::new(cfg.window())),
                }
            }
        };
        Arrivals {
            isn,
            expected: 0,
            mode,
            max_ahead: 0,
        }
    }

    /// The next packet number expected in order.
    pub fn expected(&self) -> u64 {
        self.expected
    }

    /// The most packets by which an arrival was ahead of the expected one (0: none was).
    pub fn max_ahead(&self) -> u32 {
        self.max_ahead
    }

    pub fn expected_psn(&self) -> Psn {
        self.psn(self.expected)
    }

    pub fn psn(&self, n: u64) -> Psn {
        self.isn.add(n as u32)
    }

    /// Sorts an arriving PSN; for go-back-N, notes that the episode's NACK is being sent.
    pub fn classify(&mut self, psn: Psn) -> Verdict {
        let ahead = match psn.serial_diff(self.expected_psn()) {
            Some(d) if d >= 0 => d as u32,
            _ => return Verdict::Stale,
        };
        self.max_ahead = self.max_ahead.max(ahead);
        match &mut self.mode {
            Mode::InOrder { nack_sent } => {
                if ahead == 0 {
                    Verdict::Fresh {
                        n: self.expected,
                        offset: 0,
                    }
                } else {
                    let nack = !*nack_sent;
                    *nack_sent = true;
                    Verdict::Discard { nack }
                }
            }
            Mode::Selective { arrived, .. } => match arrived.get(ahead) {
                Err(_) => Verdict::OutOfWindow,
                Ok(true) => Verdict::Repeat,
                Ok(false) => Verdict::Fresh {
                    n: self.expected + u64::from(ahead),
                    offset: ahead,
                },
            },
        }
    }

    /// Records a packet [`classify`](Self::classify) found fresh at `offset`. If it is the
    /// expected one, the expected PSN moves past it and past every recorded packet right behind
    /// it (find-first-zero, then advance — IRN §6.2 *receiveData*).
    pub fn accept(&mut self, offset: u32, ends_message: bool) -> Advance {
        match &mut self.mode {
            Mode::InOrder { nack_sent } => {
                debug_assert_eq!(offset, 0, "go-back-N accepts only the expected packet");
                *nack_sent = false;
                self.expected += 1;
                Advance {
                    packets: 1,
                    messages: u32::from(ends_message),
                }
            }
            Mode::Selective { arrived, last } => {
                // `classify` checked the offset is inside the window.
                let _ = arrived.set(offset);
                if ends_message {
                    if let Some(last) = last.as_mut() {
                        let _ = last.set(offset);
                    }
                }
                if offset > 0 {
                    return Advance {
                        packets: 0,
                        messages: 0,
                    };
                }
                let cap = arrived.capacity();
                let joined = arrived.first_zero(0, cap).unwrap_or(cap);
                let messages = match last.as_mut() {
                    Some(last) => {
                        let m = last.count_ones(joined);
                        last.advance(joined);
                        m
                    }
                    None => 0,
                };
                arrived.advance(joined);
                self.expected += u64::from(joined);
                Advance {
                    packets: joined,
                    messages,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selective_joins_runs_and_counts_message_ends() {
        let cfg = TransportConfig::irn();
        let mut a = Arrivals::new(&cfg, Psn::new(0xFF_FFFE), true);
        assert_eq!(a.classify(Psn::new(0)), Verdict::Fresh { n: 2, offset: 2 });
        assert_eq!(
            a.accept(2, true),
            Advance {
                packets: 0,
                messages: 0
            }
        );
        assert_eq!(a.classify(Psn::new(0)), Verdict::Repeat);
        assert_eq!(
            a.classify(Psn::new(0xFF_FFFF)),
            Verdict::Fresh { n: 1, offset: 1 }
        );
        a.accept(1, false);
        assert_eq!(
            a.classify(Psn::new(0xFF_FFFE)),
            Verdict::Fresh { n: 0, offset: 0 }
        );
        assert_eq!(
            a.accept(0, true),
            Advance {
                packets: 3,
                messages: 2
            }
        );
        assert_eq!(a.expected_psn(), Psn::new(1));
        assert_eq!(a.classify(Psn::new(0xFF_FFFF)), Verdict::Stale);
        assert_eq!(a.classify(Psn::new(1 + 200)), Verdict::OutOfWindow);
    }

    #[test]
    fn go_back_n_keeps_only_the_expected_and_nacks_once() {
        let mut a = Arrivals::new(&TransportConfig::irn_go_back_n(), Psn::ZERO, true);
        assert_eq!(a.classify(Psn::new(2)), Verdict::Discard { nack: true });
        assert_eq!(a.classify(Psn::new(3)), Verdict::Discard { nack: false });
        assert_eq!(a.classify(Psn::new(0)), Verdict::Fresh { n: 0, offset: 0 });
        assert_eq!(
            a.accept(0, true),
            Advance {
                packets: 1,
                messages: 1
            }
        );
        assert_eq!(a.classify(Psn::new(3)), Verdict::Discard { nack: true });
    }

    #[test]
    fn max_ahead_is_the_farthest_arrival_past_the_expected_packet() {
        for cfg in [TransportConfig::irn_go_back_n(), TransportConfig::irn()] {
            let mut a = Arrivals::new(&cfg, Psn::ZERO, false);
            assert_eq!(a.max_ahead(), 0);
            a.classify(Psn::new(3));
            a.classify(Psn::new(1));
            assert_eq!(a.max_ahead(), 3, "{cfg:?}");
            a.classify(Psn::new(0));
            a.accept(0, false);
            // Behind the expected packet now: stale, not ahead.
            a.classify(Psn::new(0));
            assert_eq!(a.max_ahead(), 3, "{cfg:?}");
        }
    }
}
