//! One endpoint of a reliable connection: requester and responder at once, as an RC queue pair.

use std::collections::VecDeque;

use super::memory::MemoryRegion;
use super::packet::{Flow, VerbsPacket};
use super::requester::{RequestSide, RequesterStats};
use super::responder::{ResponderStats, ResponseSide};
use super::wqe::{Cqe, RecvId, RecvWqe, SendWqe, Side, VerbsError, WqeId};
use crate::packet::Qpn;
use crate::seq::Psn;
use crate::time::Time;
use crate::transport::{LossRecovery, SenderStats, TransportConfig};

/// What each end of a connection tells the other when it is set up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QpEndpoint {
    pub qpn: Qpn,
    /// The first PSN of the requests this end sends (its sPSN space).
    pub request_isn: Psn,
    /// The first PSN of the read/atomic responses this end sends (the peer's rPSN space).
    pub response_isn: Psn,
    /// Size of this end's memory region.
    pub memory_bytes: u64,
}

/// Counters about a queue pair.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VerbsStats {
    pub requester: RequesterStats,
    pub responder: ResponderStats,
    /// The request packets' sender (sPSN).
    pub requests: SenderStats,
    /// The read-response packets' sender (rPSN).
    pub responses: SenderStats,
    /// Packets for another QP, or malformed ([`VerbsPacket::check`]); dropped.
    pub invalid_packets: u64,
    /// The most packets by which a request (sPSN) or read response (rPSN) arrival was ahead
    /// of the expected one: how far the network reordered this queue pair's traffic.
    pub max_reorder_distance: u64,
}

/// A verbs queue pair over IRN's out-of-order transport (IRN §5), sans-IO.
///
/// Methods, in the order a driver uses them (quinn-proto's shape):
/// - **getters**: [`memory`](Self::memory), [`memory_mut`](Self::memory_mut),
///   [`stats`](Self::stats), [`is_idle`](Self::is_idle), …
/// - **commands**: [`post_send`](Self::post_send) a Write, Write-with-immediate, Read, Send or
///   Atomic; [`post_recv`](Self::post_recv) a receive buffer for the peer's Sends;
/// - **inputs**: [`handle_packet`](Self::handle_packet) for every arriving packet,
///   [`handle_timeout`](Self::handle_timeout) once `now` reaches
///   [`poll_timeout`](Self::poll_timeout) (earlier or repeated calls are harmless);
/// - **outputs**: after any command or input, drain [`poll_transmit`](Self::poll_transmit)
///   (each time the link is free), then ask [`poll_timeout`](Self::poll_timeout) for the next
///   deadline and drain [`poll_completion`](Self::poll_completion).
///
/// Inside are the two halves of IRN §5: the requester (sPSN and rPSN spaces, §5.4) and the
/// responder (2-bitmap, Read WQE buffer, premature CQEs, read timeouts, §5.2–5.3). Nothing here
/// has a clock: time comes in as `now`.
#[derive(Debug, Clone)]
pub struct QueuePair {
    cfg: TransportConfig,
    local: QpEndpoint,
    peer: QpEndpoint,
    memory: MemoryRegion,
    requester: RequestSide,
    responder: ResponseSide,
    cq: VecDeque<Cqe>,
    /// Which of the two data senders `poll_transmit` asks first; alternates so that a long
    /// stream of responses cannot starve this side's requests, or the reverse.
    responses_first: bool,
    invalid_packets: u64,
}

impl QueuePair {
    /// The `local` end of a connection to `peer`, with a zeroed memory region of
    /// `local.memory_bytes`.
    pub fn new(
        cfg: TransportConfig,
        local: QpEndpoint,
        peer: QpEndpoint,
    ) -> Result<Self, VerbsError> {
        cfg.validate()?;
        if matches!(cfg.recovery, LossRecovery::Tcp | LossRecovery::MpRdma(_)) {
            return Err(VerbsError::UnsupportedRecovery);
        }
        let size = usize::try_from(local.memory_bytes)
            .map_err(|_| VerbsError::MemoryTooLarge(local.memory_bytes))?;
        Ok(QueuePair {
            requester: RequestSide::new(
                &cfg,
                peer.qpn,
                peer.memory_bytes,
                local.request_isn,
                peer.response_isn,
            ),
            responder: ResponseSide::new(&cfg, peer.qpn, peer.request_isn, local.response_isn),
            cfg,
            local,
            peer,
            memory: MemoryRegion::new(size),
            cq: VecDeque::new(),
            responses_first: false,
            invalid_packets: 0,
        })
    }

    // ----- getters -----

    pub fn config(&self) -> &TransportConfig {
        &self.cfg
    }

    pub fn local(&self) -> &QpEndpoint {
        &self.local
    }

    pub fn peer(&self) -> &QpEndpoint {
        &self.peer
    }

    pub fn memory(&self) -> &MemoryRegion {
        &self.memory
    }

    /// The memory region, for the application to fill or inspect. Bytes a posted WQE reads must
    /// not change until it completes, and bytes it writes are not defined until then.
    pub fn memory_mut(&mut self) -> &mut MemoryRegion {
        &mut self.memory
    }

    pub fn stats(&self) -> VerbsStats {
        VerbsStats {
            requester: *self.requester.stats(),
            responder: *self.responder.stats(),
            requests: *self.requester.sender_stats(),
            responses: *self.responder.sender_stats(),
            invalid_packets: self.invalid_packets,
            max_reorder_distance: u64::from(
                (self.requester.max_ahead()).max(self.responder.max_ahead()),
            ),
        }
    }

    /// Send WQEs posted and not yet completed.
    pub fn outstanding_sends(&self) -> usize {
        self.requester.outstanding()
    }

    /// Receive WQEs posted and not yet consumed.
    pub fn posted_recvs(&self) -> usize {
        self.responder.posted_recvs()
    }

    /// The oldest request PSN not yet acknowledged (sPSN).
    pub fn request_cumulative_ack(&self) -> Psn {
        self.requester.cumulative_ack()
    }

    /// The next response PSN expected in order (rPSN).
    pub fn expected_response_psn(&self) -> Psn {
        self.requester.expected_response_psn()
    }

    /// The next request PSN the responder expects in order.
    pub fn expected_request_psn(&self) -> Psn {
        self.responder.expected_request_psn()
    }

    /// Nothing left to do: every send WQE completed and acknowledged, every response
    /// acknowledged, no ACK waiting to go. Receive WQEs may still be posted.
    pub fn is_idle(&self) -> bool {
        self.requester.is_idle() && self.responder.is_idle()
    }

    // ----- commands -----

    /// Queues a send WQE after those already posted. Addresses are checked here — local ones
    /// against this memory region, remote ones against the peer's size, atomics for 8-byte
    /// alignment — so a WQE that is accepted never faults later.
    pub fn post_send(&mut self, wqe: SendWqe) -> Result<WqeId, VerbsError> {
        self.requester.post(wqe, &self.memory)
    }

    /// Posts a receive buffer; the peer's n-th Send (or Write-with-immediate) consumes the n-th
    /// receive WQE.
    pub fn post_recv(&mut self, wqe: RecvWqe) -> Result<RecvId, VerbsError> {
        self.memory
            .range(wqe.addr, u64::from(wqe.len))
            .map_err(|bounds| VerbsError::OutOfBounds {
                side: Side::Local,
                bounds,
            })?;
        Ok(self.responder.post_recv(wqe))
    }

    // ----- inputs -----

    /// A packet arrived from the peer.
    pub fn handle_packet(&mut self, now: Time, pkt: &VerbsPacket) {
        if pkt.dest_qp != self.local.qpn || pkt.check(self.cfg.mtu).is_err() {
            self.invalid_packets += 1;
            return;
        }
        match pkt.opcode.flow() {
            Flow::Request => self
                .responder
                .on_request(now, pkt, &mut self.memory, &mut self.cq),
            Flow::ResponseAck => self.responder.on_read_ack(now, pkt),
            Flow::RequestAck => self.requester.on_ack(now, pkt, &mut self.cq),
            Flow::Response => self
                .requester
                .on_response(now, pkt, &mut self.memory, &mut self.cq),
        }
    }

    /// Runs whichever timers are due: the requester's retransmission timer and the responder's
    /// read-response timer (IRN §5.2), each RTO_low/RTO_high as configured.
    pub fn handle_timeout(&mut self, now: Time) {
        self.requester.handle_timeout(now);
        self.responder.handle_timeout(now);
    }

    // ----- outputs -----

    /// The next ACK, NACK, read ACK or read NACK waiting to go. A driver that sends control
    /// packets ahead of data (as a NIC's separate priority class does) drains this after every
    /// [`handle_packet`](Self::handle_packet); [`poll_transmit`](Self::poll_transmit) returns
    /// them first anyway.
    pub fn poll_control(&mut self) -> Option<VerbsPacket> {
        self.responder
            .poll_control()
            .or_else(|| self.requester.poll_control())
    }

    /// The next packet to send: ACKs and read ACKs first, then requests and responses in turn.
    pub fn poll_transmit(&mut self, now: Time) -> Option<VerbsPacket> {
        if let Some(p) = self.poll_control() {
            return Some(p);
        }
        for turn in 0..2 {
            let responses = (turn == 0) == self.responses_first;
            let pkt = if responses {
                self.responder.poll_transmit(now, &self.memory)
            } else {
                self.requester.poll_transmit(now, &self.memory)
            };
            if pkt.is_some() {
                self.responses_first = !responses;
                return pkt;
            }
        }
        None
    }

    /// When [`handle_timeout`](Self::handle_timeout) must next be called.
    pub fn poll_timeout(&self) -> Option<Time> {
        match (self.requester.poll_timeout(), self.responder.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The next completion: send CQEs in send-queue order, receive CQEs in receive-queue order.
    pub fn poll_completion(&mut self) -> Option<Cqe> {
        self.cq.pop_front()
    }
}
