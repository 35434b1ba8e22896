//! Eunomia's sender-side rules (§3.2.2, §3.5.2): how a requester reacts to each kind of
//! [`Acknowledgment`], so the transport's own loss recovery runs only when a packet was really
//! dropped.
//!
//! The transport underneath keeps its recovery machinery (go-back-N or selective repeat) and its
//! timeout (§3.2.3: a packet lost in the network is never SACKed or NACKed, so the timeout is
//! what recovers it). Eunomia only filters what reaches that machinery.

use super::agent::Acknowledgment;
use crate::seq::Psn;

/// The loss recovery the transport under Eunomia runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Recovery {
    /// Resend everything from the cumulative acknowledgement (RoCE).
    GoBackN,
    /// Resend only what is not marked received (IRN-style selective repeat).
    SelectiveRepeat,
}

/// What the sender does with one acknowledgment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reaction {
    /// Every PSN before this one has arrived in order: advance the cumulative acknowledgement.
    pub cumulative: Psn,
    /// Mark this PSN received so recovery never resends it (selective repeat only: go-back-N
    /// keeps no per-packet state and ignores SACKs, §3.2.2).
    pub mark_received: Option<Psn>,
    /// Start the transport's loss recovery from `cumulative`. Only a NACK does this: the
    /// receiver dropped a packet it could not track.
    pub recover: bool,
}

/// The sender's reaction to `ack` (§3.2.2): an ACK advances; a SACK advances and, under
/// selective repeat, marks the SACKed packet received, but never triggers recovery; a NACK
/// advances and triggers recovery (the dropped packet is not marked, so it is resent).
pub fn react(ack: Acknowledgment, recovery: Recovery) -> Reaction {
    match ack {
        Acknowledgment::Ack { expected } => Reaction {
            cumulative: expected,
            mark_received: None,
            recover: false,
        },
        Acknowledgment::Sack { expected, sacked } => Reaction {
            cumulative: expected,
            mark_received: match recovery {
                Recovery::SelectiveRepeat => Some(sacked),
                Recovery::GoBackN => None,
            },
            recover: false,
        },
        Acknowledgment::Nack { expected, .. } => Reaction {
            cumulative: expected,
            mark_received: None,
            recover: true,
        },
    }
}

/// Whether the last packet of a one-sided WRITE may leave (§3.5.2): WRITEs have no completion
/// notification to hold back, and the application reads the data once the last packet (with its
/// synchronisation flag) lands, so Eunomia's sender holds that packet until the cumulative
/// acknowledgement shows everything before it arrived in order. Costs one RTT (Appendix A.1).
pub fn write_last_may_leave(cumulative: Psn, last: Psn) -> bool {
    cumulative == last
}

#[cfg(test)]
mod tests {
    use super::*;
    use Acknowledgment::{Ack, Nack, Sack};
    use Recovery::{GoBackN, SelectiveRepeat};

    #[test]
    fn only_nacks_trigger_recovery() {
        let p = Psn::new;
        let cases = [
            (Ack { expected: p(5) }, GoBackN, (p(5), None, false)),
            (Ack { expected: p(5) }, SelectiveRepeat, (p(5), None, false)),
            (
                Sack {
                    expected: p(5),
                    sacked: p(9),
                },
                GoBackN,
                (p(5), None, false),
            ),
            (
                Sack {
                    expected: p(5),
                    sacked: p(9),
                },
                SelectiveRepeat,
                (p(5), Some(p(9)), false),
            ),
            (
                Nack {
                    expected: p(5),
                    dropped: p(300),
                },
                GoBackN,
                (p(5), None, true),
            ),
            (
                Nack {
                    expected: p(5),
                    dropped: p(300),
                },
                SelectiveRepeat,
                (p(5), None, true),
            ),
        ];
        for (ack, recovery, (cumulative, mark_received, recover)) in cases {
            let want = Reaction {
                cumulative,
                mark_received,
                recover,
            };
            assert_eq!(react(ack, recovery), want, "{ack:?} under {recovery:?}");
        }
    }

    #[test]
    fn a_write_holds_its_last_packet_until_the_rest_is_in_order() {
        assert!(!write_last_may_leave(Psn::new(8), Psn::new(9)));
        assert!(write_last_may_leave(Psn::new(9), Psn::new(9)));
        assert!(write_last_may_leave(Psn::ZERO, Psn::ZERO));
        assert!(!write_last_may_leave(Psn::MAX, Psn::ZERO));
    }
}
