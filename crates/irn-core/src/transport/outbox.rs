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

/// Posted messages, by packet number (counted from the initial PSN).
#[derive(Debug, Clone)]
pub(super) struct Outbox {
    mtu: u32,
    /// The receiver's queue pair, written in every data packet.
    peer: Qpn,
    /// PSN of packet number 0.
    isn: Psn,
    messages: VecDeque<Outgoing>,
    next_msg: u64,
    /// One past the last packet of the posted messages.
    end: u64,
    completions: VecDeque<Completion>,
}

impl Outbox {
    pub(super) fn new(mtu: u32, peer: Qpn, isn: Psn) -> Self {
        Outbox {
            mtu,
            peer,
            isn,
            messages: VecDeque::new(),
            next_msg: 0,
            end: 0,
            completions: VecDeque::new(),
        }
    }

    /// The PSN of packet number `n`.
    pub(super) fn psn(&self, n: u64) -> Psn {
        // Truncating first is exact: 2^24 divides 2^32.
        self.isn.add(n as u32)
    }

    /// One past the last packet posted.
    pub(super) fn end(&self) -> u64 {
        self.end
    }

    /// Every posted message is acknowledged.
    pub(super) fn is_empty(&self) -> bool {
        self.messages.is_empty()
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
        self.messages.push_back(Outgoing {
            id,
            first: self.end,
            packets,
            bytes,
        });
        self.end += packets;
        Ok(id)
    }

    /// Data packet number `n` (which must be posted and not yet acknowledged), sent at `now`.
    pub(super) fn data_packet(&self, now: Time, n: u64, retransmission: bool) -> Packet {
        let i = self.messages.partition_point(|m| m.first + m.packets <= n);
        let m = &self.messages[i];
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
            },
        }
    }

    /// The cumulative acknowledgement reached `una`: every message wholly below it completes.
    pub(super) fn acknowledge(&mut self, una: u64) {
        while let Some(m) = self.messages.front().copied() {
            if m.first + m.packets > una {
                break;
            }
            self.messages.pop_front();
            self.completions.push_back(Completion {
                msg: m.id,
                bytes: m.bytes,
            });
        }
    }

    /// The next fully acknowledged message, in posting order.
    pub(super) fn poll_completion(&mut self) -> Option<Completion> {
        self.completions.pop_front()
    }
}
