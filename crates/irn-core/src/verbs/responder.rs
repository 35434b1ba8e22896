//! The responder half of a verbs queue pair: accepts request packets in any order, places their
//! bytes at once, executes Reads and Atomics in order, and sends (and resends) their responses.
//!
//! IRN §5.3 at the responder, piece by piece:
//! - **2-bitmap** (§5.3.3): [`Arrivals`] with the last-packet bitmap. When the expected PSN moves,
//!   the popcount of last bits it passed is the MSN increment (§6.2 *receiveData*).
//! - **direct placement** (§5.3.1–2): a Write packet's bytes go to its RETH address, a Send
//!   packet's to its receive WQE's buffer at `offset × MTU` — on arrival, in any order.
//! - **receive WQE matching** (§5.3.2): a Send packet, or the last packet of a
//!   Write-with-immediate, names its receive WQE by `recv_WQE_SN`. A Send packet whose receive
//!   WQE is not posted yet is dropped unanswered (the requester resends it, as after a
//!   receiver-not-ready NAK).
//! - **premature CQEs** (§5.3.3): the last packet of a Send or Write-with-immediate creates its
//!   CQE when it arrives; the CQE is held, in PSN order, until every earlier packet has arrived,
//!   and only then is the receive WQE expired and the CQE released.
//! - **Read WQE buffer** (§5.3.2): a Read or Atomic request waits in a slot indexed by
//!   `read_WQE_SN` until every packet before it has arrived, so it sees every earlier Write.
//!
//! Responses (§5.2) use their own PSN space (the requester's rPSN, §5.4) and their own
//! [`Sender`]: BDP-FC, read ACK/NACK-driven selective repeat (or go-back-N), and the responder's
//! read timeout. A Read's bytes are read from memory each time a response packet is
//! (re)transmitted, as a NIC DMAs them; an Atomic executes exactly once, when reached in order,
//! and its result is kept with its response and replayed on every retransmission. A duplicate
//! request is never executed again: it is only re-acknowledged.

use std::borrow::Cow;
use std::collections::VecDeque;

use super::arrivals::{Arrivals, NotFresh, Rejected};
use super::marks::MarkEcho;
use super::memory::MemoryRegion;
use super::packet::{unwrap24, Ext, Opcode, VerbsPacket};
use super::wqe::{AtomicOp, RecvCqe, RecvId, RecvStatus, RecvWqe};
use super::Cqe;
use crate::packet::{Echo, Ecn, Packet, PacketKind, Qpn};
use crate::seq::Psn;
use crate::time::Time;
use crate::transport::{packets_for, Sender, SenderStats, TransportConfig};

/// Counters about the responder half.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResponderStats {
    /// Request packets handled, whatever became of them.
    pub requests_received: u64,
    /// Request packets that had arrived before.
    pub duplicates: u64,
    /// Fresh request packets that arrived ahead of the expected PSN (kept, or discarded under
    /// go-back-N).
    pub out_of_order: u64,
    /// Request packets too far ahead for the bitmap; dropped unanswered.
    pub window_drops: u64,
    /// Send (or Write-with-immediate last) packets whose receive WQE was not posted yet;
    /// dropped unanswered.
    pub rnr_drops: u64,
    /// Requests that disagree with the responder's state (a `read_WQE_SN` or `recv_WQE_SN` out
    /// of range); dropped.
    pub invalid_packets: u64,
    /// Accepted requests naming bytes outside the memory region: nothing is placed or read (a
    /// Read answers zeros, an Atomic leaves memory alone). InfiniBand would NAK and fail the QP;
    /// requesters check bounds when a WQE is posted, so only a broken peer gets here.
    pub access_errors: u64,
    pub acks_sent: u64,
    /// Request packets that arrived CE-marked.
    pub ecn_marked: u64,
    /// CNPs sent to the peer's request sender (DCQCN).
    pub cnps_sent: u64,
    pub nacks_sent: u64,
    /// Read and Atomic requests that arrived ahead of earlier packets and waited in the Read
    /// WQE buffer.
    pub reads_parked: u64,
    pub reads_executed: u64,
    pub atomics_executed: u64,
    /// Receive CQEs created before every earlier packet had arrived, and held back.
    pub premature_cqes: u64,
    /// Messages completed in order: the MSN.
    pub msn: u64,
}

#[derive(Debug, Clone, Copy)]
struct PostedRecv {
    id: RecvId,
    wqe: RecvWqe,
    /// A Send packet did not fit in the buffer.
    length_error: bool,
}

#[derive(Debug, Clone, Copy)]
enum ReadOp {
    Read { addr: u64, len: u32 },
    Atomic { addr: u64, op: AtomicOp },
}

/// A Read or Atomic request in the Read WQE buffer.
#[derive(Debug, Clone, Copy)]
struct Parked {
    /// Its request packet number: it runs once the expected PSN is past it.
    n: u64,
    op: ReadOp,
}

/// A receive CQE created by a last packet, waiting for the packets before it.
#[derive(Debug, Clone, Copy)]
struct Premature {
    n: u64,
    recv_sn: u64,
    byte_len: u32,
    imm: Option<u32>,
}

#[derive(Debug, Clone, Copy)]
enum Response {
    /// Read the bytes at `addr` onwards, fetched again for every (re)transmission (the sender
    /// knows each packet's length).
    Read { addr: u64 },
    /// The executed Atomic's result, replayed on every (re)transmission.
    Atomic { original: u64 },
}

/// An executed Read or Atomic whose responses are not all acknowledged yet.
#[derive(Debug, Clone, Copy)]
struct Executed {
    r_first: u64,
    r_packets: u64,
    response: Response,
}

#[derive(Debug, Clone)]
pub(super) struct ResponseSide {
    mtu: u32,
    peer: Qpn,
    /// The peer's sPSN space, with the 2-bitmap.
    requests: Arrivals,
    /// Posted receive WQEs not yet consumed; the front one has `recv_WQE_SN` = `recv_base`.
    recvs: VecDeque<PostedRecv>,
    recv_base: u64,
    next_recv_id: u64,
    /// The Read WQE buffer: slot `i` holds the request with `read_WQE_SN` = `read_base + i`.
    reads: VecDeque<Option<Parked>>,
    read_base: u64,
    /// Bound on the Read WQE buffer: requests never run more than a window ahead.
    read_slots: u64,
    /// Held receive CQEs, in PSN order.
    premature: VecDeque<Premature>,
    /// The rPSN space, and its packet number 0.
    responses: Sender,
    r_isn: Psn,
    executed: VecDeque<Executed>,
    r_end: u64,
    control: VecDeque<VerbsPacket>,
    marks: MarkEcho,
    stats: ResponderStats,
}

impl ResponseSide {
    /// `request_isn`: the peer's first sPSN; `response_isn`: this side's first rPSN.
    pub fn new(cfg: &TransportConfig, peer: Qpn, request_isn: Psn, response_isn: Psn) -> Self {
        ResponseSide {
            mtu: cfg.mtu,
            peer,
            requests: Arrivals::new(cfg, request_isn, true),
            recvs: VecDeque::new(),
            recv_base: 0,
            next_recv_id: 0,
            reads: VecDeque::new(),
            read_base: 0,
            read_slots: u64::from(cfg.window()),
            premature: VecDeque::new(),
            responses: Sender::new(*cfg, peer, response_isn),
            r_isn: response_isn,
            executed: VecDeque::new(),
            r_end: 0,
            control: VecDeque::new(),
            marks: MarkEcho::new(cfg),
            stats: ResponderStats::default(),
        }
    }

    pub fn stats(&self) -> &ResponderStats {
        &self.stats
    }

    pub fn sender_stats(&self) -> &SenderStats {
        self.responses.stats()
    }

    /// The most packets by which a request arrived ahead of the expected PSN.
    pub fn max_ahead(&self) -> u32 {
        self.requests.max_ahead()
    }

    pub fn expected_request_psn(&self) -> Psn {
        self.requests.expected_psn()
    }

    /// Receive WQEs posted and not yet consumed.
    pub fn posted_recvs(&self) -> usize {
        self.recvs.len()
    }

    /// Every response acknowledged, no ACK waiting to go.
    pub fn is_idle(&self) -> bool {
        self.executed.is_empty() && self.control.is_empty()
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        self.responses.poll_timeout()
    }

    /// The responder's read timeout (IRN §5.2).
    pub fn handle_timeout(&mut self, now: Time) {
        self.responses.handle_timeout(now);
    }

    pub fn poll_control(&mut self) -> Option<VerbsPacket> {
        self.control.pop_front()
    }

    pub fn post_recv(&mut self, wqe: RecvWqe) -> RecvId {
        let id = RecvId(self.next_recv_id);
        self.next_recv_id += 1;
        self.recvs.push_back(PostedRecv {
            id,
            wqe,
            length_error: false,
        });
        id
    }

    // ----- inputs -----

    /// IRN §6.2 *receiveData*: a request packet arrived (already checked well-formed).
    pub fn on_request(
        &mut self,
        now: Time,
        pkt: &VerbsPacket,
        memory: &mut MemoryRegion,
        cq: &mut VecDeque<Cqe>,
    ) {
        self.stats.requests_received += 1;
        let echo = MarkEcho::echo(pkt);
        let (n, offset) = match self.requests.classify(pkt.psn).fresh(pkt.psn) {
            Ok(fresh) => fresh,
            // A duplicate is never executed or placed again (an Atomic is only re-acknowledged).
            Err(Rejected { why, reply }) => {
                self.note_mark(now, pkt);
                *match why {
                    NotFresh::Duplicate => &mut self.stats.duplicates,
                    NotFresh::OutOfOrder => &mut self.stats.out_of_order,
                    NotFresh::OutOfWindow => &mut self.stats.window_drops,
                } += 1;
                if let Some(sack) = reply {
                    self.ack(sack, echo);
                }
                return;
            }
        };
        if !self.take(n, offset, pkt, memory) {
            return;
        }
        self.note_mark(now, pkt);
        let advance = self.requests.accept(offset, pkt.opcode.is_last());
        if advance.packets > 0 {
            self.stats.msn += u64::from(advance.messages);
            self.release(memory, cq);
            self.ack(None, echo);
        } else {
            self.stats.out_of_order += 1;
            self.ack(Some(pkt.psn), echo);
        }
    }

    /// Counts a request's CE mark and queues the CNP it paces, if one is due.
    fn note_mark(&mut self, now: Time, pkt: &VerbsPacket) {
        let cnp = self.marks.on_accepted(
            now,
            pkt,
            (self.peer, Opcode::Cnp),
            &mut self.stats.ecn_marked,
            &mut self.stats.cnps_sent,
        );
        self.control.extend(cnp);
    }

    /// Does what a fresh request packet asks that can be done on arrival; `false` if the packet
    /// must be dropped as if it had not arrived.
    fn take(&mut self, n: u64, offset: u32, pkt: &VerbsPacket, memory: &mut MemoryRegion) -> bool {
        let mtu = u64::from(self.mtu);
        match pkt.ext {
            Ext::Write { reth, imm } => {
                let recv_sn = match imm {
                    Some(imm) => match self.recv_slot(imm.recv_wqe_sn) {
                        Some(sn) => Some((sn, imm.data)),
                        None => return false,
                    },
                    None => None,
                };
                if memory.write(reth.addr, &pkt.payload).is_err() {
                    self.stats.access_errors += 1;
                }
                if let Some((recv_sn, data)) = recv_sn {
                    self.hold(n, offset, recv_sn, reth.len, Some(data));
                }
            }
            Ext::Send {
                recv_wqe_sn,
                offset: index,
            } => {
                let Some(sn) = self.recv_slot(recv_wqe_sn) else {
                    return false;
                };
                let recv = &mut self.recvs[(sn - self.recv_base) as usize];
                let at = u64::from(index) * mtu;
                let room = u64::from(recv.wqe.len).saturating_sub(at);
                let fit = (pkt.payload.len() as u64).min(room) as usize;
                if fit < pkt.payload.len() {
                    recv.length_error = true;
                }
                if memory
                    .write(recv.wqe.addr + at, &pkt.payload[..fit])
                    .is_err()
                {
                    self.stats.access_errors += 1;
                }
                if pkt.opcode.is_last() {
                    let byte_len = (at + pkt.payload.len() as u64).min(u64::from(u32::MAX));
                    self.hold(n, offset, sn, byte_len as u32, None);
                }
            }
            Ext::ReadRequest { reth, read_wqe_sn } => {
                let op = ReadOp::Read {
                    addr: reth.addr,
                    len: reth.len,
                };
                return self.park(n, offset, read_wqe_sn, op);
            }
            Ext::AtomicRequest {
                addr,
                op,
                read_wqe_sn,
            } => {
                return self.park(n, offset, read_wqe_sn, ReadOp::Atomic { addr, op });
            }
            Ext::ReadResponse
            | Ext::AtomicResponse { .. }
            | Ext::Ack { .. }
            | Ext::ReadAck { .. }
            | Ext::Cnp => {
                self.stats.invalid_packets += 1;
                return false;
            }
        }
        true
    }

    /// The posted receive WQE a `recv_WQE_SN` names, as a full sequence number.
    fn recv_slot(&mut self, wire: u32) -> Option<u64> {
        let sn = unwrap24(wire, self.recv_base);
        match sn {
            Some(sn) if sn >= self.recv_base => {
                if sn - self.recv_base < self.recvs.len() as u64 {
                    Some(sn)
                } else {
                    // Receiver not ready: the requester will resend.
                    self.stats.rnr_drops += 1;
                    None
                }
            }
            _ => {
                self.stats.invalid_packets += 1;
                None
            }
        }
    }

    /// Keeps a receive CQE until every packet before `n` has arrived.
    fn hold(&mut self, n: u64, offset: u32, recv_sn: u64, byte_len: u32, imm: Option<u32>) {
        if offset > 0 {
            self.stats.premature_cqes += 1;
        }
        let at = self.premature.partition_point(|p| p.n < n);
        self.premature.insert(
            at,
            Premature {
                n,
                recv_sn,
                byte_len,
                imm,
            },
        );
    }

    /// Puts a Read or Atomic request in its Read WQE buffer slot.
    fn park(&mut self, n: u64, offset: u32, wire_sn: u32, op: ReadOp) -> bool {
        let slot = unwrap24(wire_sn, self.read_base)
            .and_then(|sn| sn.checked_sub(self.read_base))
            .filter(|&slot| slot < self.read_slots);
        let Some(slot) = slot else {
            self.stats.invalid_packets += 1;
            return false;
        };
        let slot = slot as usize;
        if self.reads.len() <= slot {
            self.reads.resize(slot + 1, None);
        }
        if self.reads[slot].is_some() {
            // Another request PSN already claimed this read_WQE_SN.
            self.stats.invalid_packets += 1;
            return false;
        }
        self.reads[slot] = Some(Parked { n, op });
        if offset > 0 {
            self.stats.reads_parked += 1;
        }
        true
    }

    /// The expected PSN moved: run the Reads and Atomics it passed, in `read_WQE_SN` order, and
    /// release the receive CQEs it passed, in PSN (= receive WQE) order.
    fn release(&mut self, memory: &mut MemoryRegion, cq: &mut VecDeque<Cqe>) {
        let expected = self.requests.expected();
        while let Some(Some(p)) = self.reads.front().copied() {
            if p.n >= expected {
                break;
            }
            self.reads.pop_front();
            self.read_base += 1;
            self.execute(p.op, memory);
        }
        while let Some(p) = self.premature.front().copied() {
            if p.n >= expected {
                break;
            }
            self.premature.pop_front();
            if p.recv_sn != self.recv_base {
                // A peer that numbered its receive WQEs out of order; nothing to complete.
                self.stats.invalid_packets += 1;
                continue;
            }
            let Some(recv) = self.recvs.pop_front() else {
                continue;
            };
            self.recv_base += 1;
            cq.push_back(Cqe::Recv(RecvCqe {
                id: recv.id,
                byte_len: p.byte_len,
                imm: p.imm,
                status: if recv.length_error {
                    RecvStatus::LengthError
                } else {
                    RecvStatus::Success
                },
            }));
        }
    }

    fn execute(&mut self, op: ReadOp, memory: &mut MemoryRegion) {
        let (response, bytes) = match op {
            ReadOp::Read { addr, len } => {
                self.stats.reads_executed += 1;
                if memory.range(addr, u64::from(len)).is_err() {
                    self.stats.access_errors += 1;
                }
                (Response::Read { addr }, u64::from(len))
            }
            ReadOp::Atomic { addr, op } => {
                self.stats.atomics_executed += 1;
                let original = match memory.read_u64(addr) {
                    Ok(original) if addr % 8 == 0 => {
                        let _ = memory.write_u64(addr, op.apply(original));
                        original
                    }
                    _ => {
                        self.stats.access_errors += 1;
                        0
                    }
                };
                (Response::Atomic { original }, 0)
            }
        };
        if self.responses.post(bytes).is_err() {
            // More responses outstanding than any requester keeps: a broken peer.
            self.stats.invalid_packets += 1;
            return;
        }
        let r_packets = packets_for(bytes, self.mtu);
        self.executed.push_back(Executed {
            r_first: self.r_end,
            r_packets,
            response,
        });
        self.r_end += r_packets;
    }

    /// A read ACK or NACK: feeds the response sender's receiveAck.
    pub fn on_read_ack(&mut self, now: Time, pkt: &VerbsPacket) {
        let kind = match pkt.ext {
            Ext::ReadAck { sack: None, echo } => PacketKind::Ack { msn: 0, echo },
            Ext::ReadAck {
                sack: Some(sack),
                echo,
            } => PacketKind::Nack { msn: 0, sack, echo },
            Ext::Cnp => PacketKind::Cnp,
            _ => return,
        };
        self.responses.handle_packet(
            now,
            &Packet {
                dest_qp: self.peer,
                psn: pkt.psn,
                kind,
            },
        );
        while self.responses.poll_completion().is_some() {
            self.executed.pop_front();
        }
    }

    fn ack(&mut self, sack: Option<Psn>, echo: Echo) {
        match sack {
            None => self.stats.acks_sent += 1,
            Some(_) => self.stats.nacks_sent += 1,
        }
        self.control.push_back(VerbsPacket {
            dest_qp: self.peer,
            opcode: if sack.is_some() {
                Opcode::Nack
            } else {
                Opcode::Ack
            },
            psn: self.requests.expected_psn(),
            retransmission: false,
            ts: 0,
            ecn: Ecn::NotEct,
            ext: Ext::Ack {
                msn: (self.stats.msn & 0xFF_FFFF) as u32,
                sack,
                echo,
            },
            payload: Vec::new(),
        });
    }

    // ----- outputs -----

    /// *txFree* for the rPSN space: the next read or atomic response, new or retransmitted.
    pub fn poll_transmit(&mut self, now: Time, memory: &MemoryRegion) -> Option<VerbsPacket> {
        let pkt = self.responses.poll_transmit(now)?;
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
        // The sender emits nothing before its cumulative ACK, which lies in the first entry.
        let front = self.executed.front()?;
        let n = front.r_first + u64::from(pkt.psn.since(self.r_isn.add(front.r_first as u32)));
        let i = self
            .executed
            .partition_point(|e| e.r_first + e.r_packets <= n);
        let e = self.executed.get(i)?;
        let (opcode, ext, payload) = match e.response {
            Response::Read { addr } => {
                let at = addr + (n - e.r_first) * u64::from(self.mtu);
                let payload = memory
                    .read(at, u64::from(payload_len))
                    .map(Cow::into_owned)
                    .unwrap_or_else(|_| vec![0; usize::from(payload_len)]);
                (
                    Opcode::read_response(first, last),
                    Ext::ReadResponse,
                    payload,
                )
            }
            Response::Atomic { original } => (
                Opcode::AtomicResponse,
                Ext::AtomicResponse { original },
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
