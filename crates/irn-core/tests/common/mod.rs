//! Helpers shared by the transport tests: packet templates and a compact view of what a sender
//! or receiver emits, so each test reads like a protocol trace.

#![allow(dead_code)] // each test binary uses a different subset

use irn_core::packet::{Echo, Ecn, Packet, PacketKind, Qpn};
use irn_core::transport::Requester;
use irn_core::{Psn, Receiver, Sender, Time, TransportConfig};

/// The sender's QP (ACKs are addressed to it) and the receiver's (data is addressed to it).
pub const SENDER_QP: Qpn = Qpn::new(0x11);
pub const RECEIVER_QP: Qpn = Qpn::new(0x22);
pub const MTU: u32 = 1024;

pub fn sender(cfg: TransportConfig, isn: u32) -> Sender {
    Sender::new(cfg, RECEIVER_QP, Psn::new(isn))
}

/// The requester for any transport: the RDMA [`Sender`] or, for TCP, the `TcpSender`.
pub fn requester(cfg: TransportConfig, isn: u32) -> Requester {
    Requester::new(cfg, RECEIVER_QP, Psn::new(isn))
}

pub fn receiver(cfg: TransportConfig, isn: u32) -> Receiver {
    Receiver::new(cfg, SENDER_QP, Psn::new(isn))
}

/// A data packet as a sender would emit it.
pub fn data(psn: u32, payload_len: u16, first: bool, last: bool) -> Packet {
    Packet {
        dest_qp: RECEIVER_QP,
        psn: Psn::new(psn),
        kind: PacketKind::Data {
            payload_len,
            first,
            last,
            retransmission: false,
            ecn: Ecn::Ect0,
            ts: 0,
            entropy: 0,
        },
    }
}

/// A full-MTU middle packet.
pub fn mid(psn: u32) -> Packet {
    data(psn, MTU as u16, false, false)
}

/// A single-packet message.
pub fn only(psn: u32, len: u16) -> Packet {
    data(psn, len, true, true)
}

pub fn ack(cumulative: u32) -> Packet {
    Packet {
        dest_qp: SENDER_QP,
        psn: Psn::new(cumulative),
        kind: PacketKind::Ack {
            msn: 0,
            echo: Echo::default(),
        },
    }
}

pub fn nack(cumulative: u32, sack: u32) -> Packet {
    Packet {
        dest_qp: SENDER_QP,
        psn: Psn::new(cumulative),
        kind: PacketKind::Nack {
            msn: 0,
            sack: Psn::new(sack),
            echo: Echo::default(),
        },
    }
}

/// What a receiver answered, without the MSN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    Ack(u32),
    Nack(u32, u32),
    /// An ordering layer's SACK (cumulative, sacked) and NACK for a dropped packet.
    Sack(u32, u32),
    DropNack(u32, u32),
}

pub fn reply(p: &Packet) -> Reply {
    match p.kind {
        PacketKind::Ack { .. } => Reply::Ack(p.psn.value()),
        PacketKind::Nack { sack, .. } => Reply::Nack(p.psn.value(), sack.value()),
        PacketKind::Sack { sacked, .. } => Reply::Sack(p.psn.value(), sacked.value()),
        PacketKind::DropNack { dropped, .. } => Reply::DropNack(p.psn.value(), dropped.value()),
        PacketKind::Data { .. } | PacketKind::Cnp => panic!("receiver sent {p:?}"),
    }
}

/// What a sender transmitted: PSN and whether it flagged a retransmission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tx {
    pub psn: u32,
    pub retx: bool,
}

pub const fn new(psn: u32) -> Tx {
    Tx { psn, retx: false }
}

pub const fn re(psn: u32) -> Tx {
    Tx { psn, retx: true }
}

pub fn tx(p: &Packet) -> Tx {
    match p.kind {
        PacketKind::Data { retransmission, .. } => Tx {
            psn: p.psn.value(),
            retx: retransmission,
        },
        _ => panic!("sender sent control: {p:?}"),
    }
}

/// Every packet the sender will send right now, in order.
pub fn drain_tx(s: &mut Sender, now: Time) -> Vec<Tx> {
    std::iter::from_fn(|| s.poll_transmit(now))
        .map(|p| tx(&p))
        .collect()
}

/// Up to `n` packets the sender sends right now.
pub fn take_tx(s: &mut Sender, now: Time, n: usize) -> Vec<Tx> {
    std::iter::from_fn(|| s.poll_transmit(now))
        .take(n)
        .map(|p| tx(&p))
        .collect()
}

/// Feed one packet to a receiver and return its replies.
pub fn recv(r: &mut Receiver, now: Time, p: Packet) -> Vec<Reply> {
    r.handle_packet(now, &p);
    std::iter::from_fn(|| r.poll_transmit(now))
        .map(|p| reply(&p))
        .collect()
}

pub fn completions_sender(s: &mut Sender) -> Vec<(u64, u64)> {
    std::iter::from_fn(|| s.poll_completion())
        .map(|c| (c.msg.0, c.bytes))
        .collect()
}

pub fn completions_receiver(r: &mut Receiver) -> Vec<(u64, u64)> {
    std::iter::from_fn(|| r.poll_completion())
        .map(|c| (c.msg.0, c.bytes))
        .collect()
}

pub fn us(n: u64) -> Time {
    Time::from_ps(n * 1_000_000)
}
