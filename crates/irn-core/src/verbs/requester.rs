//! The requester half of a verbs queue pair: turns send WQEs into request packets, collects read
//! and atomic responses, and completes WQEs in posting order.
//!
//! Two PSN spaces (IRN §5.4):
//! - **sPSN**, the request packets it sends: one per MTU of a Write or Send, one per Read or
//!   Atomic request. A [`Sender`] runs them — BDP-FC, RTO_low/RTO_high, selective repeat or
//!   go-back-N, exactly as for plain messages — one sender message per WQE.
//! - **rPSN**, the read-response packets it receives: one per MTU of a Read (one for an empty
//!   Read), one per Atomic. [`Arrivals`] tracks them with a BDP-sized bitmap, places each
//!   response's bytes where the Read asked as soon as it arrives, and answers every one with a
//!   read ACK or read NACK (IRN §5.2).
//!
//! Both ends number responses the same way without telling each other: the responder executes
//! Reads and Atomics in request order, so the n-th response packet belongs to the Read whose
//! cumulative response count first exceeds n.

use std::borrow::Cow;
use std::collections::VecDeque;

use super::arrivals::{Arrivals, NotFresh, Rejected};
use super::marks::MarkEcho;
use super::memory::{fits, MemoryRegion};
use super::packet::{wrap24, Ext, Imm, Opcode, Reth, VerbsPacket};
use super::wqe::{SendCqe, SendOp, SendWqe, Side, VerbsError, WqeId};
use super::Cqe;
use crate::packet::{Echo, Ecn, Packet, PacketKind, Qpn};
use crate::seq::Psn;
use crate::time::Time;
use crate::transport::{packets_for, PostError, Sender, SenderStats, TransportConfig};

/// Longest message a WQE may describe: InfiniBand's 2^31 bytes.
pub const MAX_MESSAGE_BYTES: u32 = 1 << 31;
/// Most request (or response) packets a requester keeps posted and unfinished: the transport's
/// limit, well under 2^23, so every PSN and WQE sequence number either end sees is unambiguous.
pub use crate::transport::MAX_OUTSTANDING_PACKETS;

/// Counters about the requester half.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequesterStats {
    /// Read and atomic response packets handled, whatever became of them.
    pub responses_received: u64,
    /// Responses that had arrived before (network duplicates, spurious retransmissions).
    pub response_duplicates: u64,
    /// Fresh responses that arrived ahead of the expected rPSN (kept, or discarded under
    /// go-back-N).
    pub responses_out_of_order: u64,
    pub read_acks_sent: u64,
    pub read_nacks_sent: u64,
    /// Responses that match no outstanding Read/Atomic, or disagree with it; dropped.
    pub invalid_packets: u64,
    /// Highest MSN an ACK reported (messages the responder has completed), modulo 2^24.
    pub peer_msn: u32,
    /// Response packets that arrived CE-marked.
    pub ecn_marked: u64,
    /// CNPs sent to the peer's response sender (DCQCN).
    pub cnps_sent: u64,
}

#[derive(Debug, Clone)]
struct Outstanding {
    id: WqeId,
    op: SendOp,
    fence: bool,
    /// First request packet (sPSN packet number); set when handed to the sender.
    s_first: u64,
    s_packets: u64,
    /// First response packet (rPSN packet number) and how many; none for Writes and Sends.
    r_first: u64,
    r_packets: u64,
    /// `recv_WQE_SN` of a Send or Write-with-immediate.
    recv_sn: u64,
    /// `read_WQE_SN` of a Read or Atomic.
    read_sn: u64,
    /// Given to the sender (`s_first` is valid).
    handed: bool,
    /// Every request packet is cumulatively acknowledged.
    acked: bool,
    atomic_original: Option<u64>,
}

#[derive(Debug, Clone)]
pub(super) struct RequestSide {
    mtu: u32,
    peer: Qpn,
    /// Size of the peer's memory region: remote addresses are checked against it at post time.
    remote_len: u64,
    /// The sPSN space, and its packet number 0.
    sender: Sender,
    s_isn: Psn,
    /// Posted WQEs not yet both completed and acknowledged, in posting order. A prefix of
    /// `handed` of them has been given to the sender, a prefix of `emitted` has its CQE out
    /// (`emitted ≤ handed`).
    wqes: VecDeque<Outstanding>,
    handed: usize,
    emitted: usize,
    /// Next sPSN packet number to assign (at hand-off) and next rPSN one (at post).
    s_end: u64,
    r_end: u64,
    next_id: u64,
    next_recv_sn: u64,
    next_read_sn: u64,
    /// Request and response packets of the WQEs in `wqes`.
    queued_requests: u64,
    queued_responses: u64,
    /// The rPSN space.
    responses: Arrivals,
    control: VecDeque<VerbsPacket>,
    marks: MarkEcho,
    stats: RequesterStats,
}

impl RequestSide {
    /// `request_isn`: this side's first sPSN; `response_isn`: the first rPSN the peer sends.
    pub fn new(
        cfg: &TransportConfig,
        peer: Qpn,
        remote_len: u64,
        request_isn: Psn,
        response_isn: Psn,
    ) -> Self {
        RequestSide {
            mtu: cfg.mtu,
            peer,
            remote_len,
            sender: Sender::new(*cfg, peer, request_isn),
            s_isn: request_isn,
            wqes: VecDeque::new(),
            handed: 0,
            emitted: 0,
            s_end: 0,
            r_end: 0,
            next_id: 0,
            next_recv_sn: 0,
            next_read_sn: 0,
            queued_requests: 0,
            queued_responses: 0,
            responses: Arrivals::new(cfg, response_isn, false),
            control: VecDeque::new(),
            marks: MarkEcho::new(cfg),
            stats: RequesterStats::default(),
        }
    }

    pub fn stats(&self) -> &RequesterStats {
        &self.stats
    }

    pub fn sender_stats(&self) -> &SenderStats {
        self.sender.stats()
    }

    /// The most packets by which a read response arrived ahead of the expected rPSN.
    pub fn max_ahead(&self) -> u32 {
        self.responses.max_ahead()
    }

    /// Send WQEs posted and not yet completed.
    pub fn outstanding(&self) -> usize {
        self.wqes.len() - self.emitted
    }

    /// Every WQE completed and acknowledged, no read ACK waiting to go.
    pub fn is_idle(&self) -> bool {
        self.wqes.is_empty() && self.control.is_empty()
    }

    /// The oldest request PSN not yet acknowledged.
    pub fn cumulative_ack(&self) -> Psn {
        self.sender.cumulative_ack()
    }

    /// The next read-response PSN expected in order.
    pub fn expected_response_psn(&self) -> Psn {
        self.responses.expected_psn()
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        self.sender.poll_timeout()
    }

    pub fn handle_timeout(&mut self, now: Time) {
        self.sender.handle_timeout(now);
    }

    pub fn poll_control(&mut self) -> Option<VerbsPacket> {
        self.control.pop_front()
    }

    // ----- commands -----

    pub fn post(&mut self, wqe: SendWqe, local: &MemoryRegion) -> Result<WqeId, VerbsError> {
        self.validate(&wqe.op, local)?;
        let mtu = self.mtu;
        let (s_packets, r_packets) = match wqe.op {
            SendOp::Write { len, .. } | SendOp::WriteImm { len, .. } | SendOp::Send { len, .. } => {
                (packets_for(u64::from(len), mtu), 0)
            }
            SendOp::Read { len, .. } => (1, packets_for(u64::from(len), mtu)),
            SendOp::Atomic { .. } => (1, 1),
        };
        for (queued, more) in [
            (self.queued_requests, s_packets),
            (self.queued_responses, r_packets),
        ] {
            if queued + more > MAX_OUTSTANDING_PACKETS {
                return Err(VerbsError::Backlog(PostError::Backlog {
                    outstanding: queued,
                    requested: more,
                    limit: MAX_OUTSTANDING_PACKETS,
                }));
            }
        }
        let id = WqeId(self.next_id);
        self.next_id += 1;
        let mut w = Outstanding {
            id,
            op: wqe.op,
            fence: wqe.fence,
            s_first: 0,
            s_packets,
            r_first: self.r_end,
            r_packets,
            recv_sn: 0,
            read_sn: 0,
            handed: false,
            acked: false,
            atomic_original: None,
        };
        if wqe.op.consumes_recv() {
            w.recv_sn = self.next_recv_sn;
            self.next_recv_sn += 1;
        }
        if wqe.op.has_response() {
            w.read_sn = self.next_read_sn;
            self.next_read_sn += 1;
        }
        self.r_end += r_packets;
        self.queued_requests += s_packets;
        self.queued_responses += r_packets;
        self.wqes.push_back(w);
        self.feed();
        Ok(id)
    }

    fn validate(&self, op: &SendOp, local: &MemoryRegion) -> Result<(), VerbsError> {
        let len = op.len();
        if len > MAX_MESSAGE_BYTES {
            return Err(VerbsError::MessageTooLong {
                len,
                max: MAX_MESSAGE_BYTES,
            });
        }
        let (local_addr, remote_addr) = match *op {
            SendOp::Write { local, remote, .. }
            | SendOp::WriteImm { local, remote, .. }
            | SendOp::Read { local, remote, .. }
            | SendOp::Atomic { local, remote, .. } => (local, Some(remote)),
            SendOp::Send { local, .. } => (local, None),
        };
        local
            .range(local_addr, u64::from(len))
            .map_err(|bounds| VerbsError::OutOfBounds {
                side: Side::Local,
                bounds,
            })?;
        if let Some(remote) = remote_addr {
            fits(remote, u64::from(len), self.remote_len).map_err(|bounds| {
                VerbsError::OutOfBounds {
                    side: Side::Remote,
                    bounds,
                }
            })?;
            if matches!(op, SendOp::Atomic { .. }) && remote % 8 != 0 {
                return Err(VerbsError::MisalignedAtomic { addr: remote });
            }
        }
        Ok(())
    }

    /// Hands WQEs to the sender in posting order, stopping at a fenced one while any earlier WQE
    /// is incomplete.
    fn feed(&mut self) {
        while let Some(w) = self.wqes.get_mut(self.handed) {
            if w.fence && self.emitted < self.handed {
                break;
            }
            let bytes = match w.op {
                SendOp::Read { .. } | SendOp::Atomic { .. } => 0,
                op => u64::from(op.len()),
            };
            // Cannot fail: `post` keeps the queued packets, a superset of the sender's
            // outstanding ones, under the sender's own limit.
            match self.sender.post(bytes) {
                Ok(msg) => debug_assert_eq!(msg.0, w.id.0, "one sender message per WQE"),
                Err(_) => break,
            }
            w.s_first = self.s_end;
            w.handed = true;
            self.s_end += w.s_packets;
            self.handed += 1;
        }
    }

    // ----- inputs -----

    /// IRN §6.2 *receiveAck*: an ACK or NACK of request packets.
    pub fn on_ack(&mut self, now: Time, pkt: &VerbsPacket, cq: &mut VecDeque<Cqe>) {
        let kind = match pkt.ext {
            Ext::Ack { msn, sack, echo } => {
                if msn.wrapping_sub(self.stats.peer_msn) & 0xFF_FFFF < 1 << 23 {
                    self.stats.peer_msn = msn;
                }
                match sack {
                    None => PacketKind::Ack { msn, echo },
                    Some(sack) => PacketKind::Nack { msn, sack, echo },
                }
            }
            Ext::Cnp => PacketKind::Cnp,
            _ => return,
        };
        self.sender.handle_packet(
            now,
            &Packet {
                dest_qp: self.peer,
                psn: pkt.psn,
                kind,
            },
        );
        while let Some(c) = self.sender.poll_completion() {
            let front = self.wqes.front().map_or(0, |w| w.id.0);
            if let Some(w) = c
                .msg
                .0
                .checked_sub(front)
                .and_then(|i| self.wqes.get_mut(i as usize))
            {
                w.acked = true;
            }
        }
        self.complete(cq);
    }

    /// A read or atomic response arrived: place it, and answer with a read ACK or NACK.
    pub fn on_response(
        &mut self,
        now: Time,
        pkt: &VerbsPacket,
        memory: &mut MemoryRegion,
        cq: &mut VecDeque<Cqe>,
    ) {
        self.stats.responses_received += 1;
        let echo = MarkEcho::echo(pkt);
        let (n, offset) = match self.responses.classify(pkt.psn).fresh(pkt.psn) {
            Ok(fresh) => fresh,
            Err(Rejected { why, reply }) => {
                self.note_mark(now, pkt);
                *match why {
                    NotFresh::Duplicate => &mut self.stats.response_duplicates,
                    NotFresh::OutOfOrder => &mut self.stats.responses_out_of_order,
                    NotFresh::OutOfWindow => &mut self.stats.invalid_packets,
                } += 1;
                if let Some(sack) = reply {
                    self.read_ack(sack, echo);
                }
                return;
            }
        };
        if !self.place_response(n, pkt, memory) {
            self.stats.invalid_packets += 1;
            return;
        }
        self.note_mark(now, pkt);
        let advance = self.responses.accept(offset, pkt.opcode.is_last());
        if advance.packets > 0 {
            self.read_ack(None, echo);
            self.complete(cq);
        } else {
            self.stats.responses_out_of_order += 1;
            self.read_ack(Some(pkt.psn), echo);
        }
    }

    /// Counts a response's CE mark and queues the read CNP it paces, if one is due.
    fn note_mark(&mut self, now: Time, pkt: &VerbsPacket) {
        let cnp = self.marks.on_accepted(
            now,
            pkt,
            (self.peer, Opcode::ReadCnp),
            &mut self.stats.ecn_marked,
            &mut self.stats.cnps_sent,
        );
        self.control.extend(cnp);
    }

    /// Checks response packet `n` against the Read or Atomic it belongs to and places it.
    fn place_response(&mut self, n: u64, pkt: &VerbsPacket, memory: &mut MemoryRegion) -> bool {
        let i = self.wqes.partition_point(|w| w.r_first + w.r_packets <= n);
        let mtu = u64::from(self.mtu);
        let Some(w) = self.wqes.get_mut(i) else {
            return false;
        };
        if w.r_packets == 0 || n < w.r_first {
            return false;
        }
        let idx = n - w.r_first;
        match (w.op, pkt.ext) {
            (SendOp::Read { local, len, .. }, Ext::ReadResponse) => {
                let last = idx + 1 == w.r_packets;
                let want_len = if last {
                    u64::from(len) - idx * mtu
                } else {
                    mtu
                };
                if pkt.opcode != Opcode::read_response(idx == 0, last)
                    || pkt.payload.len() as u64 != want_len
                {
                    return false;
                }
                // In bounds: checked when the Read was posted.
                memory.write(local + idx * mtu, &pkt.payload).is_ok()
            }
            (SendOp::Atomic { local, .. }, Ext::AtomicResponse { original }) => {
                w.atomic_original = Some(original);
                memory.write_u64(local, original).is_ok()
            }
            _ => false,
        }
    }

    fn read_ack(&mut self, sack: Option<Psn>, echo: Echo) {
        match sack {
            None => self.stats.read_acks_sent += 1,
            Some(_) => self.stats.read_nacks_sent += 1,
        }
        self.control.push_back(VerbsPacket {
            dest_qp: self.peer,
            opcode: if sack.is_some() {
                Opcode::ReadNack
            } else {
                Opcode::ReadAck
            },
            psn: self.responses.expected_psn(),
            retransmission: false,
            ts: 0,
            ecn: Ecn::NotEct,
            ext: Ext::ReadAck { sack, echo },
            payload: Vec::new(),
        });
    }

    /// Emits CQEs for the WQEs at the head of the queue that are done, in posting order: Writes
    /// and Sends once acknowledged, Reads and Atomics once every response packet has arrived.
    /// Then forgets WQEs that are both completed and acknowledged, and feeds fenced ones.
    fn complete(&mut self, cq: &mut VecDeque<Cqe>) {
        while self.emitted < self.handed {
            let w = &self.wqes[self.emitted];
            let done = if w.op.has_response() {
                w.r_first + w.r_packets <= self.responses.expected()
            } else {
                w.acked
            };
            if !done {
                break;
            }
            cq.push_back(Cqe::Send(SendCqe {
                id: w.id,
                kind: w.op.kind(),
                byte_len: w.op.len(),
                atomic_original: w.atomic_original,
            }));
            self.emitted += 1;
        }
        while self.emitted > 0 && self.wqes.front().is_some_and(|w| w.acked) {
            if let Some(w) = self.wqes.pop_front() {
                self.emitted -= 1;
                self.handed -= 1;
                self.queued_requests -= w.s_packets;
                self.queued_responses -= w.r_packets;
            }
        }
        self.feed();
    }

    // ----- outputs -----

    /// IRN §6.2 *txFree* for the sPSN space: the next request packet, new or retransmitted.
    pub fn poll_transmit(&mut self, now: Time, memory: &MemoryRegion) -> Option<VerbsPacket> {
        let pkt = self.sender.poll_transmit(now)?;
        let PacketKind::Data {
            payload_len,
            first,
            last,
            retransmission,
            ts,
            ecn,
            ..
        } = pkt.kind
        else {
            return None;
        };
        // The sender only emits packets at or after its cumulative ACK, which lies in the first
        // outstanding WQE or later (WQEs are forgotten only once acknowledged).
        let front = self.wqes.front()?;
        let n = front.s_first + u64::from(pkt.psn.since(self.s_isn.add(front.s_first as u32)));
        let at = self
            .wqes
            .partition_point(|w| w.handed && w.s_first + w.s_packets <= n);
        if at >= self.handed {
            return None;
        }
        let w = &self.wqes[at];
        let idx = n - w.s_first;
        let mtu = u64::from(self.mtu);
        let bytes = |addr: u64| {
            memory
                .read(addr + idx * mtu, u64::from(payload_len))
                .map(Cow::into_owned)
                .unwrap_or_else(|_| vec![0; usize::from(payload_len)])
        };
        let (opcode, ext, payload) = match w.op {
            SendOp::Write { local, remote, len } => (
                Opcode::write(first, last, false),
                Ext::Write {
                    reth: Reth {
                        addr: remote + idx * mtu,
                        len,
                    },
                    imm: None,
                },
                bytes(local),
            ),
            SendOp::WriteImm {
                local,
                remote,
                len,
                imm,
            } => (
                Opcode::write(first, last, true),
                Ext::Write {
                    reth: Reth {
                        addr: remote + idx * mtu,
                        len,
                    },
                    imm: last.then_some(Imm {
                        data: imm,
                        recv_wqe_sn: wrap24(w.recv_sn),
                    }),
                },
                bytes(local),
            ),
            SendOp::Send { local, .. } => (
                Opcode::send(first, last),
                Ext::Send {
                    recv_wqe_sn: wrap24(w.recv_sn),
                    offset: idx as u32,
                },
                bytes(local),
            ),
            SendOp::Read { remote, len, .. } => (
                Opcode::ReadRequest,
                Ext::ReadRequest {
                    reth: Reth { addr: remote, len },
                    read_wqe_sn: wrap24(w.read_sn),
                },
                Vec::new(),
            ),
            SendOp::Atomic { remote, op, .. } => (
                Opcode::AtomicRequest,
                Ext::AtomicRequest {
                    addr: remote,
                    op,
                    read_wqe_sn: wrap24(w.read_sn),
                },
                Vec::new(),
            ),
        };
        Some(VerbsPacket {
            dest_qp: self.peer,
            opcode,
            psn: pkt.psn,
            retransmission,
            ts,
            ecn,
            ext,
            payload,
        })
    }
}
