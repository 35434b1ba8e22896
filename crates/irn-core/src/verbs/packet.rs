//! The packets two verbs queue pairs exchange: a BTH-like opcode and PSN, the extension headers
//! IRN §5.3 requires, and the payload bytes.
//!
//! The payload is a `Vec<u8>` (one allocation per data packet, none for control packets): with
//! MTUs up to 4 KB an inline array would make every ACK 4 KB, and this layer is not on the
//! simulator's per-packet hot path. The simulator's hot path uses [`crate::Packet`].
//!
//! Which headers each opcode carries:
//!
//! | opcode | headers ([`Ext`]) | extra bytes over RoCE ([`VerbsPacket::header_bytes`]) |
//! | --- | --- | --- |
//! | Send First/Middle/Last/Only | `recv_WQE_SN`, relative offset | 6 (§6.3) |
//! | Write First/Middle/Last/Only | RETH in **every** packet (§5.3.1) | 16 (§6.3) |
//! | Write Last/Only with immediate | RETH, immediate, `recv_WQE_SN` | 16 + 3 |
//! | Read request | RETH, `read_WQE_SN` | 3 |
//! | Atomic request | AtomicETH, `read_WQE_SN` | 3 |
//! | Read response First/Middle/Last/Only | — | 0 (§6.3) |
//! | Atomic response | the original value (AtomicAckETH) | 0 |
//! | ACK / NACK | MSN, cumulative PSN, (NACK) one-packet SACK | 0 |
//! | read ACK / read NACK (new opcode, §5.2) | cumulative rPSN, (NACK) SACK | 0 |
//! | CNP / read CNP | — (DCQCN's notification for the request or the response sender) | 0 |
//!
//! Requests and responses carry the sender's ECN codepoint ([`VerbsPacket::ecn`]), which
//! switches may set to CE; the receiving half echoes the mark in its (read) ACK and, under
//! DCQCN, paces CNPs back to the sender that sent the marked packet.
//!
//! §6.3 gives 16 B per Write packet, 6 B per Send packet and 0 for read responses; the WQE
//! sequence numbers elsewhere are 3 B each, as §6.1 sizes them.

use super::wqe::AtomicOp;
use crate::packet::{Echo, Ecn, Qpn, CONTROL_FRAME_BYTES, DATA_FRAMING_BYTES, RETH_BYTES};
use crate::seq::Psn;

/// Extra bytes on every Send packet: 3 B `recv_WQE_SN` + 3 B relative offset (IRN §6.3).
pub const SEND_EXT_BYTES: u32 = 6;
/// Bytes of a 24-bit WQE sequence number in a header (IRN §6.1).
pub const WQE_SN_BYTES: u32 = 3;

/// The operation a packet belongs to and its place in the message, as in the BTH opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Opcode {
    SendFirst,
    SendMiddle,
    SendLast,
    SendOnly,
    WriteFirst,
    WriteMiddle,
    WriteLast,
    WriteOnly,
    WriteLastImm,
    WriteOnlyImm,
    ReadRequest,
    ReadResponseFirst,
    ReadResponseMiddle,
    ReadResponseLast,
    ReadResponseOnly,
    AtomicRequest,
    AtomicResponse,
    /// Cumulative acknowledgement of request packets (sPSN space).
    Ack,
    /// IRN NACK of request packets: cumulative PSN plus the one out-of-order PSN that triggered it.
    Nack,
    /// IRN §5.2's new opcode: the requester acknowledges read-response packets (rPSN space).
    ReadAck,
    ReadNack,
    /// DCQCN congestion notification for the request sender (a marked request arrived).
    Cnp,
    /// DCQCN congestion notification for the response sender (a marked response arrived).
    ReadCnp,
}

/// Which half of the receiving queue pair handles a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Flow {
    /// Requester → responder: Send, Write, Read and Atomic requests (sPSN).
    Request,
    /// Responder → requester: ACK/NACK of requests.
    RequestAck,
    /// Responder → requester: read and atomic responses (rPSN).
    Response,
    /// Requester → responder: read ACK/NACK of responses.
    ResponseAck,
}

impl Opcode {
    pub const fn flow(self) -> Flow {
        use Opcode::*;
        match self {
            SendFirst | SendMiddle | SendLast | SendOnly | WriteFirst | WriteMiddle | WriteLast
            | WriteOnly | WriteLastImm | WriteOnlyImm | ReadRequest | AtomicRequest => {
                Flow::Request
            }
            ReadResponseFirst | ReadResponseMiddle | ReadResponseLast | ReadResponseOnly
            | AtomicResponse => Flow::Response,
            Ack | Nack | Cnp => Flow::RequestAck,
            ReadAck | ReadNack | ReadCnp => Flow::ResponseAck,
        }
    }

    /// The first packet of its message.
    pub const fn is_first(self) -> bool {
        use Opcode::*;
        matches!(
            self,
            SendFirst
                | SendOnly
                | WriteFirst
                | WriteOnly
                | WriteOnlyImm
                | ReadRequest
                | AtomicRequest
                | ReadResponseFirst
                | ReadResponseOnly
                | AtomicResponse
        )
    }

    /// The packet that ends its message: at a responder, reaching it in order bumps the MSN
    /// (IRN §5.3.3) — Read and Atomic requests count as one-packet messages.
    pub const fn is_last(self) -> bool {
        use Opcode::*;
        matches!(
            self,
            SendLast
                | SendOnly
                | WriteLast
                | WriteOnly
                | WriteLastImm
                | WriteOnlyImm
                | ReadRequest
                | AtomicRequest
                | ReadResponseLast
                | ReadResponseOnly
                | AtomicResponse
        )
    }

    /// Whether packets with this opcode carry payload bytes.
    pub const fn carries_payload(self) -> bool {
        use Opcode::*;
        matches!(
            self,
            SendFirst
                | SendMiddle
                | SendLast
                | SendOnly
                | WriteFirst
                | WriteMiddle
                | WriteLast
                | WriteOnly
                | WriteLastImm
                | WriteOnlyImm
                | ReadResponseFirst
                | ReadResponseMiddle
                | ReadResponseLast
                | ReadResponseOnly
        )
    }

    pub(crate) const fn send(first: bool, last: bool) -> Opcode {
        match (first, last) {
            (true, true) => Opcode::SendOnly,
            (true, false) => Opcode::SendFirst,
            (false, false) => Opcode::SendMiddle,
            (false, true) => Opcode::SendLast,
        }
    }

    pub(crate) const fn write(first: bool, last: bool, imm: bool) -> Opcode {
        match (first, last, imm) {
            (true, true, false) => Opcode::WriteOnly,
            (true, true, true) => Opcode::WriteOnlyImm,
            (false, true, false) => Opcode::WriteLast,
            (false, true, true) => Opcode::WriteLastImm,
            (true, false, _) => Opcode::WriteFirst,
            (false, false, _) => Opcode::WriteMiddle,
        }
    }

    pub(crate) const fn read_response(first: bool, last: bool) -> Opcode {
        match (first, last) {
            (true, true) => Opcode::ReadResponseOnly,
            (true, false) => Opcode::ReadResponseFirst,
            (false, false) => Opcode::ReadResponseMiddle,
            (false, true) => Opcode::ReadResponseLast,
        }
    }
}

/// RDMA extended transport header: where a Write packet's bytes go, or what a Read fetches.
///
/// With IRN every Write packet carries one (§5.3.1), so each can be placed on its own. `addr` is
/// where this packet's first byte goes (the message's address advanced past the bytes before
/// it); `len` is the whole message's length, so the last Write-with-immediate packet can report
/// it in the receive CQE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reth {
    pub addr: u64,
    pub len: u32,
}

/// The immediate value of a Write-with-immediate, with the receive WQE its last packet consumes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Imm {
    pub data: u32,
    /// 24 bits on the wire.
    pub recv_wqe_sn: u32,
}

/// Headers beyond the BTH, by packet kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ext {
    /// Every Send packet (§5.3.2): which receive WQE it belongs to and its packet index within
    /// the message (the relative offset; its bytes go `offset × MTU` into the receive buffer).
    Send {
        recv_wqe_sn: u32,
        offset: u32,
    },
    /// Every Write packet; `imm` on the last packet of a Write-with-immediate only.
    Write {
        reth: Reth,
        imm: Option<Imm>,
    },
    /// `read_wqe_sn` indexes the responder's Read WQE buffer (§5.3.2).
    ReadRequest {
        reth: Reth,
        read_wqe_sn: u32,
    },
    AtomicRequest {
        addr: u64,
        op: AtomicOp,
        read_wqe_sn: u32,
    },
    ReadResponse,
    /// The word's value before the atomic executed.
    AtomicResponse {
        original: u64,
    },
    /// ACK (`sack: None`) or NACK of request packets. `msn` counts messages the responder has
    /// completed, modulo 2^24; the packet's PSN is the cumulative acknowledgement.
    Ack {
        msn: u32,
        sack: Option<Psn>,
        echo: Echo,
    },
    /// Read ACK (`sack: None`) or read NACK of response packets; the PSN is the cumulative rPSN.
    ReadAck {
        sack: Option<Psn>,
        echo: Echo,
    },
    /// A CNP (either opcode).
    Cnp,
}

/// One packet between two verbs queue pairs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VerbsPacket {
    /// The queue pair it is addressed to.
    pub dest_qp: Qpn,
    pub opcode: Opcode,
    /// Requests: the sPSN. Responses: the rPSN. (Read) ACK/NACK: the next PSN expected.
    pub psn: Psn,
    /// Sent before (set by the sender, for the network and metrics).
    pub retransmission: bool,
    /// Requests and responses: the sender's clock in ns modulo 2^32, echoed by the ACK.
    pub ts: u32,
    /// Requests and responses: the IP header's ECN field (ECT when the sender runs an
    /// ECN-based controller; switches may set CE). Control packets: not ECT.
    pub ecn: Ecn,
    pub ext: Ext,
    pub payload: Vec<u8>,
}

/// Why a packet is not one a queue pair can act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    #[error("opcode {0:?} with the wrong extension headers")]
    Headers(Opcode),
    #[error("{opcode:?} with {len} payload bytes (MTU {mtu})")]
    PayloadLength {
        opcode: Opcode,
        len: usize,
        mtu: u32,
    },
}

impl VerbsPacket {
    /// A CNP (`Opcode::Cnp` or `Opcode::ReadCnp`) to the queue pair `dest_qp`.
    pub fn cnp(dest_qp: Qpn, opcode: Opcode) -> Self {
        VerbsPacket {
            dest_qp,
            opcode,
            psn: Psn::ZERO,
            retransmission: false,
            ts: 0,
            ecn: Ecn::NotEct,
            ext: Ext::Cnp,
            payload: Vec::new(),
        }
    }

    /// IRN's extra header bytes on this packet over a RoCE packet of the same kind, as IRN §6.3
    /// counts them (16 B RETH on every Write packet, 6 B on every Send packet, nothing on read
    /// responses); see the module table.
    pub fn header_bytes(&self) -> u32 {
        match self.ext {
            Ext::Send { .. } => SEND_EXT_BYTES,
            Ext::Write { imm: None, .. } => RETH_BYTES,
            Ext::Write { imm: Some(_), .. } => RETH_BYTES + WQE_SN_BYTES,
            Ext::ReadRequest { .. } | Ext::AtomicRequest { .. } => WQE_SN_BYTES,
            Ext::ReadResponse
            | Ext::AtomicResponse { .. }
            | Ext::Ack { .. }
            | Ext::ReadAck { .. }
            | Ext::Cnp => 0,
        }
    }

    /// Bytes on an Ethernet link, in the accounting of [`crate::Packet::wire_len`]: framing,
    /// IRN's extra headers and the payload for requests and responses; a minimum frame for
    /// (read) ACKs and NACKs.
    pub fn wire_len(&self) -> u32 {
        match self.opcode.flow() {
            Flow::RequestAck | Flow::ResponseAck => CONTROL_FRAME_BYTES,
            Flow::Request | Flow::Response => {
                DATA_FRAMING_BYTES + self.header_bytes() + self.payload.len() as u32
            }
        }
    }

    /// Checks the opcode, headers and payload agree (smoltcp's `check_len` habit): a queue pair
    /// drops, and counts, any packet that fails.
    pub fn check(&self, mtu: u32) -> Result<(), Malformed> {
        use Opcode::*;
        let headers_ok = match (self.opcode, &self.ext) {
            (SendFirst | SendOnly, Ext::Send { offset, .. }) => *offset == 0,
            (SendMiddle | SendLast, Ext::Send { offset, .. }) => *offset > 0,
            (WriteFirst | WriteMiddle | WriteLast | WriteOnly, Ext::Write { imm, .. }) => {
                imm.is_none()
            }
            (WriteLastImm | WriteOnlyImm, Ext::Write { imm, .. }) => imm.is_some(),
            (ReadRequest, Ext::ReadRequest { .. }) | (AtomicRequest, Ext::AtomicRequest { .. }) => {
                true
            }
            (
                ReadResponseFirst | ReadResponseMiddle | ReadResponseLast | ReadResponseOnly,
                Ext::ReadResponse,
            ) => true,
            (AtomicResponse, Ext::AtomicResponse { .. }) => true,
            (Ack, Ext::Ack { sack, .. }) | (ReadAck, Ext::ReadAck { sack, .. }) => sack.is_none(),
            (Nack, Ext::Ack { sack, .. }) | (ReadNack, Ext::ReadAck { sack, .. }) => sack.is_some(),
            (Cnp | ReadCnp, Ext::Cnp) => true,
            _ => false,
        };
        if !headers_ok {
            return Err(Malformed::Headers(self.opcode));
        }
        let len = self.payload.len();
        let len_ok = if !self.opcode.carries_payload() {
            len == 0
        } else if self.opcode.is_last() {
            len <= mtu as usize
        } else {
            // Every packet but a message's last is full.
            len == mtu as usize
        };
        if !len_ok {
            return Err(Malformed::PayloadLength {
                opcode: self.opcode,
                len,
                mtu,
            });
        }
        Ok(())
    }
}

/// The 64-bit count nearest `base` whose low 24 bits are `value`: recovers a WQE sequence number
/// (or a packet number) from its 24-bit wire form, given one known to be within 2^23 of it.
pub(crate) fn unwrap24(value: u32, base: u64) -> Option<u64> {
    let d = Psn::new(value).serial_diff(Psn::new(base as u32))?;
    base.checked_add_signed(i64::from(d))
}

/// The 24-bit wire form of a sequence number.
pub(crate) fn wrap24(n: u64) -> u32 {
    (n & 0xFF_FFFF) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(opcode: Opcode, ext: Ext, payload: usize) -> VerbsPacket {
        VerbsPacket {
            dest_qp: Qpn::new(1),
            opcode,
            psn: Psn::ZERO,
            retransmission: false,
            ts: 0,
            ecn: Ecn::NotEct,
            ext,
            payload: vec![0; payload],
        }
    }

    const RETH: Reth = Reth { addr: 0, len: 3000 };

    #[test]
    fn header_bytes_follow_irn_section_6_3() {
        let send = Ext::Send {
            recv_wqe_sn: 0,
            offset: 0,
        };
        let write = Ext::Write {
            reth: RETH,
            imm: None,
        };
        let imm = Ext::Write {
            reth: RETH,
            imm: Some(Imm {
                data: 7,
                recv_wqe_sn: 0,
            }),
        };
        let cases = [
            (pkt(Opcode::SendFirst, send, 1024), 6),
            (pkt(Opcode::WriteFirst, write, 1024), 16),
            (pkt(Opcode::WriteMiddle, write, 1024), 16),
            (pkt(Opcode::WriteLastImm, imm, 10), 19),
            (
                pkt(
                    Opcode::ReadRequest,
                    Ext::ReadRequest {
                        reth: RETH,
                        read_wqe_sn: 0,
                    },
                    0,
                ),
                3,
            ),
            (pkt(Opcode::ReadResponseMiddle, Ext::ReadResponse, 1024), 0),
            (
                pkt(
                    Opcode::AtomicResponse,
                    Ext::AtomicResponse { original: 1 },
                    0,
                ),
                0,
            ),
        ];
        for (p, want) in cases {
            assert_eq!(p.header_bytes(), want, "{:?}", p.opcode);
            assert_eq!(p.check(1024), Ok(()), "{:?}", p.opcode);
        }
        assert_eq!(
            pkt(Opcode::WriteMiddle, write, 1024).wire_len(),
            62 + 16 + 1024
        );
        let ack = pkt(
            Opcode::Ack,
            Ext::Ack {
                msn: 0,
                sack: None,
                echo: Echo::default(),
            },
            0,
        );
        assert_eq!(ack.wire_len(), 64);
    }

    #[test]
    fn check_rejects_inconsistent_packets() {
        let write = Ext::Write {
            reth: RETH,
            imm: None,
        };
        assert!(pkt(Opcode::SendFirst, write, 1024).check(1024).is_err());
        assert!(pkt(Opcode::WriteMiddle, write, 1000).check(1024).is_err());
        assert!(pkt(Opcode::WriteLast, write, 1025).check(1024).is_err());
        assert!(pkt(Opcode::WriteLastImm, write, 10).check(1024).is_err());
        assert!(pkt(
            Opcode::SendMiddle,
            Ext::Send {
                recv_wqe_sn: 0,
                offset: 0
            },
            1024
        )
        .check(1024)
        .is_err());
        assert!(pkt(Opcode::ReadResponseOnly, Ext::ReadResponse, 0)
            .check(1024)
            .is_ok());
        assert!(pkt(
            Opcode::Nack,
            Ext::Ack {
                msn: 0,
                sack: None,
                echo: Echo::default()
            },
            0
        )
        .check(1024)
        .is_err());
    }

    #[test]
    fn wqe_sequence_numbers_unwrap_near_their_base() {
        assert_eq!(unwrap24(5, 5), Some(5));
        assert_eq!(unwrap24(3, (1 << 24) + 1), Some((1 << 24) + 3));
        assert_eq!(unwrap24(0xFF_FFFF, 1 << 24), Some((1 << 24) - 1));
        assert_eq!(unwrap24(0xFF_FFFF, 0), None);
        assert_eq!(wrap24((1 << 24) + 9), 9);
    }
}
