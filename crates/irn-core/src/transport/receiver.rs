//! The responder: accepts data, answers every packet with an ACK or NACK (only NACKs with
//! `acks = none`), completes messages.

use std::collections::VecDeque;

use super::config::{Acks, LossRecovery, TransportConfig};
use super::fifo::Fifo;
use super::{Completion, MessageId};
use crate::bitmap::RingBitmap;
use crate::cc::{CcConfig, CnpCarrier, CnpPacer};
use crate::packet::{Echo, Ecn, Packet, PacketKind, Qpn};
use crate::seq::Psn;
use crate::time::{Duration, Time};

/// The responder half of a reliable-connected queue pair.
///
/// Inputs: [`handle_packet`](Self::handle_packet) for every data packet (IRN §6.2
/// *receiveData*). Outputs: [`poll_transmit`](Self::poll_transmit) for the ACK/NACKs to send,
/// [`poll_completion`](Self::poll_completion) for messages complete in order.
///
/// The responder never delivers out of order: a message completes only once every packet up to
/// its last has arrived, and messages complete in posting order.
///
/// `repr(C)` keeps the fields in the order written: what every data packet reads and writes
/// comes first, packed into as few cache lines as it fits, since a simulator's many queue pairs
/// are rarely in cache.
#[derive(Debug, Clone)]
#[repr(C)]
pub struct Receiver {
    /// The next packet expected in order: everything before it has arrived.
    expected: u64,
    /// Messages completed so far: the MSN.
    msn: u64,
    /// PSN of packet number 0.
    isn: Psn,
    /// The sender's queue pair, written in every ACK/NACK.
    peer: Qpn,
    mtu: u32,
    /// What the ACK/NACK for the packet being handled echoes back.
    echo: Echo,
    /// [`Acks::EveryPacket`]: in-order packets and duplicates are ACKed.
    acks: bool,
    control: Fifo<Packet>,
    order: Ordering,
    stats: ReceiverStats,
    /// First packet of the message now being received.
    msg_first: u64,
    completions: Fifo<Completion>,
    /// Premature completions (IRN §5.3.3): (packet number, payload bytes) of each last packet
    /// that arrived ahead of `expected`, in packet order, released when `expected` passes them.
    premature: VecDeque<(u64, u32)>,
    /// DCQCN's notification point: at most one CNP per interval while CE-marked packets (and,
    /// with `cnp_on_nack`, NACKs) arrive.
    cnp: Option<CnpPacer>,
    /// [`CnpCarrier::Ack`]: a CNP sets the BECN bit of the next reply instead of being a frame.
    cnp_on_reply: bool,
    /// A CNP is waiting for the next reply to carry it.
    cnp_pending: bool,
}

/// What happens to a packet that arrives ahead of the expected one.
#[derive(Debug, Clone)]
enum Ordering {
    /// Go-back-N: discard it, and NACK once per loss episode (until the expected packet comes),
    /// or with a NACK timer again each time `renack_at` has passed.
    InOrder {
        nack_sent: bool,
        /// [`TransportConfig::nack_interval`].
        nack_interval: Option<Duration>,
        /// When the episode's next out-of-order packet is NACKed again.
        renack_at: Time,
    },
    /// Selective repeat: keep it (placed directly in application memory) and NACK it.
    Selective {
        /// The 2-bitmap of IRN §5.3.3, offset from `expected`: packets that arrived...
        arrived: RingBitmap,
        /// ...and which of those end a message (and so bump the MSN when reached in order).
        last: RingBitmap,
    },
}

/// Counters a receiver keeps about itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// Data packets handled, whatever became of them.
    pub packets_received: u64,
    /// Packets that arrived for the first time and were kept: each counts once.
    pub packets_accepted: u64,
    /// Packets that had already arrived: spurious retransmissions and network duplicates.
    pub duplicates: u64,
    /// Packets that arrived ahead of the expected one (kept or, for go-back-N, discarded).
    pub out_of_order: u64,
    /// The most packets by which any arrival was ahead of the expected one (0: never out of
    /// order): how far the network reordered this flow (Eunomia Fig. 4b's reorder degree).
    /// Window drops count too: they were that far ahead.
    pub max_reorder_distance: u64,
    /// Packets too far ahead for the bitmap (a sender ignoring BDP-FC); discarded unanswered.
    pub window_drops: u64,
    /// Data packets with a payload longer than the MTU, or a non-final packet shorter than it;
    /// and control packets sent to a receiver. Discarded.
    pub invalid_packets: u64,
    pub acks_sent: u64,
    pub nacks_sent: u64,
    /// Data packets that arrived CE-marked.
    pub ecn_marked: u64,
    pub cnps_sent: u64,
}

impl ReceiverStats {
    /// An arrival `ahead` packets ahead of the expected one.
    fn note_reordered(&mut self, ahead: u64) {
        self.max_reorder_distance = self.max_reorder_distance.max(ahead);
    }
}

impl Receiver {
    /// A receiver expecting `isn` first and answering the peer QP `peer`.
    ///
    /// # Panics
    /// If `cfg` fails [`TransportConfig::validate`]; validate configurations at load time.
    pub fn new(cfg: TransportConfig, peer: Qpn, isn: Psn) -> Self {
        if let Err(e) = cfg.validate() {
            panic!("invalid transport configuration: {e}");
        }
        let order = match cfg.recovery {
            LossRecovery::GoBackN => Ordering::InOrder {
                nack_sent: false,
                nack_interval: cfg.nack_interval,
                renack_at: Time::ZERO,
            },
            LossRecovery::SelectiveRepeat { .. } | LossRecovery::Tcp | LossRecovery::MpRdma(_) => {
                Ordering::Selective {
                    arrived: RingBitmap::new(cfg.window()),
                    last: RingBitmap::new(cfg.window()),
                }
            }
        };
        Receiver {
            expected: 0,
            msn: 0,
            isn,
            peer,
            mtu: cfg.mtu,
            echo: Echo::default(),
            acks: cfg.acks == Acks::EveryPacket,
            control: Fifo::new(),
            order,
            stats: ReceiverStats::default(),
            msg_first: 0,
            completions: Fifo::new(),
            premature: VecDeque::new(),
            cnp: match cfg.cc {
                CcConfig::Dcqcn(p) => Some(CnpPacer::for_params(&p)),
                _ => None,
            },
            cnp_on_reply: matches!(cfg.cc, CcConfig::Dcqcn(p) if p.cnp_carrier == CnpCarrier::Ack),
            cnp_pending: false,
        }
    }

    #[inline]
    pub fn stats(&self) -> &ReceiverStats {
        &self.stats
    }

    /// The queue pair its replies go to.
    pub fn peer(&self) -> Qpn {
        self.peer
    }

    /// The next PSN expected in order (what the next ACK will carry).
    pub fn expected_psn(&self) -> Psn {
        self.psn(self.expected)
    }

    /// IRN §6.2 *receiveData*: a data packet arrived.
    ///
    /// In order, it (and any out-of-order packets it joins up with) advances the expected PSN,
    /// completes the messages whose last packets are passed (popcount of the last-packet bitmap),
    /// and is answered with a cumulative ACK (unless ACKs are off). Out of order, go-back-N
    /// discards it and NACKs once per episode (again each `nack_interval`, if set); selective
    /// repeat keeps it and NACKs it with itself as the SACK. Duplicates
    /// below the expected PSN are re-ACKed. Every reply echoes the packet's timestamp and CE mark;
    /// with DCQCN, CE-marked packets also trigger CNPs (at most one per interval), and with
    /// `cnp_on_nack` so do NACKs of unmarked packets (the CNP follows the NACK). With
    /// [`CnpCarrier::Ack`] a CNP is no frame: the next ACK or NACK carries it in its echo's
    /// `ece` (the BECN bit), which then no longer echoes the packet's own mark.
    #[inline]
    pub fn handle_packet(&mut self, now: Time, pkt: &Packet) {
        self.receive(now, pkt, true);
    }

    /// [`handle_packet`](Self::handle_packet) of a packet an ordering layer held and whose CE
    /// mark was already taken on arrival ([`note_mark`](Self::note_mark)): the mark still sets
    /// the echo the next reply carries, but is not counted or paced again.
    pub fn handle_noted(&mut self, now: Time, pkt: &Packet) {
        self.receive(now, pkt, false);
    }

    /// A CE-marked data packet reached the NIC and an ordering layer took it before this
    /// receiver could (held it ahead of a gap, or dropped it for want of room). A NIC's
    /// notification point sees the mark when the packet arrives, so the mark is counted and,
    /// with DCQCN, a CNP paced now, not when (or whether) the packet is handed over in order.
    pub fn note_mark(&mut self, now: Time) {
        self.stats.ecn_marked += 1;
        self.pace_cnp(now);
    }

    /// DCQCN's notification point: a CNP for a marked packet, at most one per interval.
    fn pace_cnp(&mut self, now: Time) {
        if self.cnp.as_mut().is_some_and(|c| c.on_marked(now)) {
            self.send_cnp();
        }
    }

    /// A CNP goes: as a frame, or with [`CnpCarrier::Ack`] on the next reply.
    fn send_cnp(&mut self) {
        self.stats.cnps_sent += 1;
        if self.cnp_on_reply {
            self.cnp_pending = true;
        } else {
            self.control.push(Packet {
                dest_qp: self.peer,
                psn: self.psn(self.expected),
                kind: PacketKind::Cnp,
            });
        }
    }

    /// What the next reply echoes: the packet's timestamp, and its CE mark or, with
    /// [`CnpCarrier::Ack`], whether a CNP rides along (which the reply then delivers).
    fn reply_echo(&mut self) -> Echo {
        if self.cnp_on_reply {
            Echo {
                ts: self.echo.ts,
                ece: std::mem::take(&mut self.cnp_pending),
            }
        } else {
            self.echo
        }
    }

    #[inline]
    fn receive(&mut self, now: Time, pkt: &Packet, count_mark: bool) {
        let PacketKind::Data {
            payload_len,
            last,
            ecn,
            ts,
            ..
        } = pkt.kind
        else {
            self.stats.invalid_packets += 1;
            return;
        };
        // A malformed packet is discarded before anything reads it: it must not set the echo
        // the next reply carries, count as a mark or pace a CNP.
        let len = u32::from(payload_len);
        if len > self.mtu || (!last && len != self.mtu) {
            self.stats.invalid_packets += 1;
            return;
        }
        let marked = ecn == Ecn::Ce;
        self.echo = Echo { ts, ece: marked };
        if marked && count_mark {
            self.note_mark(now);
        }
        self.stats.packets_received += 1;
        let ahead = match pkt.psn.serial_diff(self.psn(self.expected)) {
            Some(d) if d >= 0 => d as u64,
            _ => {
                self.stats.duplicates += 1;
                self.send_ack();
                return;
            }
        };
        // The reorder distance is recorded on the out-of-order paths below only: an in-order
        // arrival (nearly all of them) cannot raise it.
        match &mut self.order {
            Ordering::InOrder {
                nack_sent,
                nack_interval,
                renack_at,
            } => {
                if ahead > 0 {
                    self.stats.note_reordered(ahead);
                    self.stats.out_of_order += 1;
                    // ns-3's rule (`ReceiverCheckSeq`): NACK if the expected PSN is not the one
                    // last NACKed, or the NACK timer has expired; then rearm it.
                    if !*nack_sent || (nack_interval.is_some() && now >= *renack_at) {
                        *nack_sent = true;
                        if let Some(i) = *nack_interval {
                            *renack_at = now + i;
                        }
                        self.send_nack(now, pkt.psn);
                    }
                    return;
                }
                *nack_sent = false;
                self.stats.packets_accepted += 1;
                self.expected += 1;
                if last {
                    self.complete(self.expected - 1, len);
                }
                self.send_ack();
            }
            Ordering::Selective {
                arrived,
                last: last_bits,
            } => {
                if ahead >= u64::from(arrived.capacity()) {
                    self.stats.note_reordered(ahead);
                    self.stats.window_drops += 1;
                    return;
                }
                let offset = ahead as u32;
                if offset > 0 {
                    self.stats.note_reordered(ahead);
                    if arrived.set(offset) == Ok(true) {
                        // IRN NACKs every out-of-order arrival, duplicates included.
                        self.stats.duplicates += 1;
                    } else {
                        self.stats.packets_accepted += 1;
                        self.stats.out_of_order += 1;
                        if last {
                            let _ = last_bits.set(offset);
                            let n = self.expected + ahead;
                            let at = self.premature.partition_point(|&(m, _)| m < n);
                            self.premature.insert(at, (n, len));
                        }
                    }
                    self.send_nack(now, pkt.psn);
                    return;
                }
                // The expected packet: it joins up with the run of packets already behind it.
                // Its own bits are never set; bit 0 stands for it.
                self.stats.packets_accepted += 1;
                let cap = arrived.capacity();
                let joined = arrived.first_zero(1, cap).unwrap_or(cap);
                let finished = if joined > 1 {
                    last_bits.count_ones(joined)
                } else {
                    0
                };
                arrived.advance(joined);
                last_bits.advance(joined);
                self.expected += u64::from(joined);
                if last {
                    self.complete(self.expected - u64::from(joined), len);
                }
                for _ in 0..finished {
                    // One premature completion was stored per last bit.
                    if let Some((n, len)) = self.premature.pop_front() {
                        debug_assert!(n < self.expected);
                        self.complete(n, len);
                    }
                }
                self.send_ack();
            }
        }
    }

    /// The next ACK or NACK to send.
    #[inline]
    pub fn poll_transmit(&mut self, _now: Time) -> Option<Packet> {
        self.control.pop()
    }

    /// The next message complete in order.
    #[inline]
    pub fn poll_completion(&mut self) -> Option<Completion> {
        self.completions.pop()
    }

    fn psn(&self, n: u64) -> Psn {
        self.isn.add(n as u32)
    }

    /// The message ending with packet `last` (of `len` payload bytes) is complete.
    fn complete(&mut self, last: u64, len: u32) {
        let bytes = (last - self.msg_first) * u64::from(self.mtu) + u64::from(len);
        self.completions.push(Completion {
            msg: MessageId(self.msn),
            bytes,
        });
        self.msn += 1;
        self.msg_first = last + 1;
    }

    fn msn24(&self) -> u32 {
        (self.msn & 0xFF_FFFF) as u32
    }

    #[inline]
    fn send_ack(&mut self) {
        if !self.acks {
            return;
        }
        self.stats.acks_sent += 1;
        let echo = self.reply_echo();
        self.control.push(Packet {
            dest_qp: self.peer,
            psn: self.psn(self.expected),
            kind: PacketKind::Ack {
                msn: self.msn24(),
                echo,
            },
        });
    }

    fn send_nack(&mut self, now: Time, sack: Psn) {
        self.stats.nacks_sent += 1;
        // A marked packet already had its chance at a CNP: one packet paces at most one. A CNP
        // frame follows the NACK; a CNP on the reply rides this NACK.
        let cnp = !self.echo.ece && self.cnp.as_mut().is_some_and(|c| c.on_nack(now));
        if cnp && self.cnp_on_reply {
            self.send_cnp();
        }
        let echo = self.reply_echo();
        self.control.push(Packet {
            dest_qp: self.peer,
            psn: self.psn(self.expected),
            kind: PacketKind::Nack {
                msn: self.msn24(),
                sack,
                echo,
            },
        });
        if cnp && !self.cnp_on_reply {
            self.send_cnp();
        }
    }
}
