//! What a requester has posted and not yet seen acknowledged: messages cut into packets, and
//! completed in posting order as the cumulative acknowledgement passes them.
//!
//! Shared by every sender ([`Sender`](super::Sender), [`TcpSender`](super::TcpSender)): they
//! differ in what they send when, never in what a given packet number carries.

use std::collections::VecDeque;

use super::{packets_for, Completion, MessageId};
use crate::packet::{timestamp, Ecn, Packet, PacketKind, Qpn};
use crate::seq::Psn;
use crate::time::Time;

/// Most packets a sender may hold posted but unacknowledged. Keeping the outstanding span well
/// under 2^23 keeps every PSN the peer sees unambiguous in serial order.
pub const MAX_OUTSTANDING_PACKETS: u64 = 1 << 22;

/// Why a message could not be posted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PostError {
    #[error("{requested} more packets would leave {outstanding} + {requested} outstanding, over the limit of {limit}")]
    Backlog {
        outstanding: u64,
        requested: u64,
        limit: u64,
    },
}

#[derive(Debug, Clone, Copy)]
struct Outgoing {
    id: MessageId,
    first: u64,
    packets: u64,
    bytes: u64,
}

impl Outgoing {
    /// One past its last packet.
    fn end(&self) -> u64 {
        self.first + self.packets
    }
}

/// Posted messages, by packet number (counted from the initial PSN).
///
/// The per-packet questions (which message packet `n` belongs to, whether the cumulative ACK
/// completed one) are answered from fields kept inline, so they touch no heap memory unless a
/// message boundary is crossed; `repr(C)` keeps those fields first, in one cache line.
#[derive(Debug, Clone)]
#[repr(C)]
pub(super) struct Outbox {
    /// One past the last packet of the posted messages.
    end: u64,
    /// One past the last packet of the oldest message not yet acknowledged; `u64::MAX` when every
    /// posted message is.
    oldest_end: u64,
    /// The message the latest data packet came from: consecutive packets almost always belong
    /// to the same one, so it spares a search of `messages`.
    sending: Outgoing,
    mtu: u32,
    /// The receiver's queue pair, written in every data packet.
    peer: Qpn,
    /// PSN of packet number 0.
    isn: Psn,
    /// How many messages at the front of `messages` are acknowledged: the completions not yet
    /// polled.
    acked: usize,
    /// Posted messages from the oldest not yet polled as complete, in posting order.
    messages: VecDeque<Outgoing>,
    next_msg: u64,
}

impl Outbox {
    pub(super) fn new(mtu: u32, peer: Qpn, isn: Psn) -> Self {
        Outbox {
            end: 0,
            oldest_end: u64::MAX,
            // Covers no packet, so the first lookup searches.
            sending: Outgoing {
                id: MessageId(0),
                first: 0,
                packets: 0,
                bytes: 0,
            },
            mtu,
            peer,
            isn,
            acked: 0,
            messages: VecDeque::new(),
            next_msg: 0,
        }
    }

    /// The PSN of packet number `n`.
    #[inline]
    pub(super) fn psn(&self, n: u64) -> Psn {
        // Truncating first is exact: 2^24 divides 2^32.
        self.isn.add(n as u32)
    }

    /// One past the last packet posted.
    #[inline]
    pub(super) fn end(&self) -> u64 {
        self.end
    }

    /// Every posted message is acknowledged.
    pub(super) fn is_empty(&self) -> bool {
        self.acked == self.messages.len()
    }

    /// Queues a message of `bytes` after those already posted; `una` is the sender's cumulative
    /// acknowledgement, for the outstanding limit.
    pub(super) fn post(&mut self, bytes: u64, una: u64) -> Result<MessageId, PostError> {
        let packets = packets_for(bytes, self.mtu);
        let outstanding = self.end - una;
        if outstanding + packets > MAX_OUTSTANDING_PACKETS {
            return Err(PostError::Backlog {
                outstanding,
                requested: packets,
                limit: MAX_OUTSTANDING_PACKETS,
            });
        }
        let id = MessageId(self.next_msg);
        self.next_msg += 1;
        let m = Outgoing {
            id,
            first: self.end,
            packets,
            bytes,
        };
        if self.is_empty() {
            self.oldest_end = m.end();
        }
        self.messages.push_back(m);
        self.end += packets;
        Ok(id)
    }

    /// Data packet number `n` (which must be posted and not yet acknowledged), sent at `now`.
    pub(super) fn data_packet(&mut self, now: Time, n: u64, retransmission: bool) -> Packet {
        if !(self.sending.first..self.sending.end()).contains(&n) {
            let i = self.messages.partition_point(|m| m.end() <= n);
            self.sending = self.messages[i];
        }
        let m = &self.sending;
        let offset = n - m.first;
        let last = offset + 1 == m.packets;
        let mtu = u64::from(self.mtu);
        let payload_len = if last { m.bytes - offset * mtu } else { mtu };
        Packet {
            dest_qp: self.peer,
            psn: self.psn(n),
            kind: PacketKind::Data {
                payload_len: payload_len as u16,
                first: offset == 0,
                last,
                retransmission,
                ecn: Ecn::Ect0,
                ts: timestamp(now),
                entropy: 0,
            },
        }
    }

    /// The last packet of the first message that ends after packet `n`, if one is posted.
    /// Once per message, not per packet: [`Sender`](super::Sender) uses it for the WRITE
    /// last-packet hold.
    pub(super) fn last_packet_after(&self, n: u64) -> Option<u64> {
        let i = self.messages.partition_point(|m| m.end() <= n + 1);
        self.messages.get(i).map(|m| m.end() - 1)
    }

    /// The cumulative acknowledgement reached `una`: every message wholly below it completes.
    #[inline]
    pub(super) fn acknowledge(&mut self, una: u64) {
        if una >= self.oldest_end {
            self.complete_through(una);
        }
    }

    /// Marks complete the messages `una` passed, the oldest unacknowledged one at least.
    fn complete_through(&mut self, una: u64) {
        while let Some(m) = self.messages.get(self.acked) {
            if m.end() > una {
                self.oldest_end = m.end();
                return;
            }
            self.acked += 1;
        }
        self.oldest_end = u64::MAX;
    }

    /// The next fully acknowledged message, in posting order.
    #[inline]
    pub(super) fn poll_completion(&mut self) -> Option<Completion> {
        if self.acked == 0 {
            return None;
        }
        self.acked -= 1;
        let m = self.messages.pop_front()?;
        Some(Completion {
            msg: m.id,
            bytes: m.bytes,
        })
    }
}
