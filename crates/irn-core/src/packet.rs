//! The packets a transport exchanges, as plain `Copy` values.
//!
//! A [`Packet`] is what the simulator moves between NICs: small (it is copied through every queue
//! and link), carrying only what the transports and the network act on. Its byte encoding, for
//! tools that want real headers, lives in [`crate::wire`]; its size on the wire is
//! [`Packet::wire_len`].

use crate::seq::Psn;

/// Bytes of framing around every data packet's payload: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 +
/// ICRC 4 + FCS 4 (MODEL §1).
pub const DATA_FRAMING_BYTES: u32 = 62;
/// Size on the wire of an ACK, NACK or CNP: a minimum Ethernet frame (MODEL §1, a choice: the
/// headers of an IRN NACK add up to 70 B, but the IRN paper counts control packets as minimum
/// frames).
pub const CONTROL_FRAME_BYTES: u32 = 64;
/// Extra bytes when every data packet carries a RETH (IRN §6.3's worst-case header overhead).
pub const RETH_BYTES: u32 = 16;

/// A queue pair number: 24 bits on the wire, as in the BTH's destination QP field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Qpn(u32);

impl Qpn {
    /// A QPN from the low 24 bits of `value`.
    pub const fn new(value: u32) -> Self {
        Qpn(value & 0xFF_FFFF)
    }
    pub const fn value(self) -> u32 {
        self.0
    }
}

/// The IP ECN code point a data packet carries (RFC 3168).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Ecn {
    /// The sender does not do ECN; switches drop instead of marking.
    #[default]
    NotEct = 0b00,
    Ect1 = 0b01,
    /// ECN-capable; what RoCEv2 NICs send.
    Ect0 = 0b10,
    /// Congestion experienced: marked by a switch.
    Ce = 0b11,
}

impl Ecn {
    /// The code point from its two bits.
    pub const fn from_bits(bits: u8) -> Ecn {
        match bits & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
}

/// What the receiver reports back about the data packet that triggered an ACK or NACK.
///
/// The timestamp lets the sender take an RTT sample from every acknowledgement (Timely, TCP);
/// the congestion mark lets it react to ECN without CNPs (DCTCP's ECN-Echo).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Echo {
    /// The triggering data packet's `ts`.
    pub ts: u32,
    /// The triggering data packet arrived marked CE.
    pub ece: bool,
}

/// What kind of packet this is, with the fields only that kind has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PacketKind {
    /// A data segment of a message.
    Data {
        /// Payload bytes; every packet but a message's last carries exactly one MTU.
        payload_len: u16,
        /// First packet of its message.
        first: bool,
        /// Last packet of its message.
        last: bool,
        /// Sent before; set by the sender so the network and metrics can tell.
        retransmission: bool,
        ecn: Ecn,
        /// The sender's clock when it sent the packet, in nanoseconds modulo 2^32 (a NIC
        /// timestamp), echoed back in the ACK/NACK it triggers.
        ts: u32,
        /// The UDP source port the sender chose for this packet, which switches' ECMP hashes
        /// along with the flow: MP-RDMA's virtual path ([`MpRdmaSender`]). 0, what every other
        /// transport sends, leaves the flow's own hash (and so its one path) unchanged. Part of
        /// the UDP header, not of the transport headers [`crate::wire`] encodes.
        ///
        /// [`MpRdmaSender`]: crate::transport::MpRdmaSender
        entropy: u16,
    },
    /// Cumulative acknowledgement: every PSN before `Packet::psn` has arrived.
    Ack {
        /// Messages the receiver has completed, modulo 2^24 (the AETH's MSN).
        msn: u32,
        echo: Echo,
    },
    /// Negative acknowledgement: `Packet::psn` is the cumulative ACK (the PSN the receiver expects)
    /// and `sack` the out-of-order PSN whose arrival triggered it (IRN's one-packet SACK).
    Nack { msn: u32, sack: Psn, echo: Echo },
    /// An ordering layer's selective acknowledgement (Eunomia §3.5.1): `Packet::psn` is the
    /// cumulative ACK and `sacked` arrived out of order and is held. Unlike a
    /// [`Nack`](PacketKind::Nack), it never starts loss recovery: the reordering it reports is not loss.
    /// It carries no MSN: it completes nothing (and so `Packet` keeps its 24 bytes).
    Sack { sacked: Psn, echo: Echo },
    /// An ordering layer's NACK (Eunomia §3.5.1): `Packet::psn` is the cumulative ACK and
    /// `dropped` arrived but could not be tracked (the bitmap's cap or the NIC's ordering memory
    /// ran out) and was discarded; the sender starts its loss recovery.
    DropNack { dropped: Psn, echo: Echo },
    /// Congestion notification (DCQCN): the receiver saw CE-marked packets of this QP.
    Cnp,
}

/// A NIC timestamp: nanoseconds modulo 2^32, as carried in [`PacketKind::Data::ts`].
pub fn timestamp(now: crate::Time) -> u32 {
    (now.as_ps() / 1_000) as u32
}

/// The time elapsed since timestamp `ts` was taken, if `now` is at most ~4.3 s later.
pub fn since_timestamp(now: crate::Time, ts: u32) -> crate::Duration {
    crate::Duration::from_ns(u64::from(timestamp(now).wrapping_sub(ts)))
}

/// One packet of a reliable-connected queue pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Packet {
    /// The queue pair this packet is addressed to.
    pub dest_qp: Qpn,
    /// For data, the packet's own PSN; for ACK/NACK, the cumulative acknowledgement (the next PSN
    /// the receiver expects). InfiniBand ACKs carry that value minus one; irn uses the expected
    /// PSN for both so ACK and NACK read alike.
    pub psn: Psn,
    pub kind: PacketKind,
}

const _: () = assert!(core::mem::size_of::<Packet>() <= 24);

impl Packet {
    /// Bytes this packet occupies on an Ethernet link (excluding preamble and inter-frame gap).
    pub fn wire_len(&self) -> u32 {
        self.framed_len(DATA_FRAMING_BYTES, CONTROL_FRAME_BYTES)
    }

    /// Bytes on the wire when a data frame adds `data_framing` to its payload and a reply is
    /// `reply_frame` long: RoCEv2's in [`wire_len`](Self::wire_len), or a simulator's own.
    #[inline]
    pub fn framed_len(&self, data_framing: u32, reply_frame: u32) -> u32 {
        match self.kind {
            PacketKind::Data { payload_len, .. } => data_framing + u32::from(payload_len),
            PacketKind::Ack { .. }
            | PacketKind::Nack { .. }
            | PacketKind::Sack { .. }
            | PacketKind::DropNack { .. }
            | PacketKind::Cnp => reply_frame,
        }
    }

    /// Whether this is a data packet (as opposed to an ACK or NACK).
    pub fn is_data(&self) -> bool {
        matches!(self.kind, PacketKind::Data { .. })
    }

    /// The UDP source port switches hash with the flow ([`PacketKind::Data::entropy`]); 0 for
    /// control packets, which follow the flow's own path.
    #[inline(always)]
    pub fn entropy(&self) -> u16 {
        match self.kind {
            PacketKind::Data { entropy, .. } => entropy,
            _ => 0,
        }
    }

    /// Payload bytes carried (zero for control packets).
    pub fn payload_len(&self) -> u32 {
        match self.kind {
            PacketKind::Data { payload_len, .. } => u32::from(payload_len),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_on_the_wire() {
        let data = Packet {
            dest_qp: Qpn::new(1),
            psn: Psn::ZERO,
            kind: PacketKind::Data {
                payload_len: 1024,
                first: true,
                last: true,
                retransmission: false,
                ecn: Ecn::Ect0,
                ts: 0,
                entropy: 0,
            },
        };
        assert_eq!(data.wire_len(), 1086);
        let nack = Packet {
            kind: PacketKind::Nack {
                msn: 0,
                sack: Psn::new(3),
                echo: Echo::default(),
            },
            ..data
        };
        assert_eq!(nack.wire_len(), 64);
        assert_eq!(nack.payload_len(), 0);
    }

    #[test]
    fn qpn_and_ecn_keep_their_field_widths() {
        assert_eq!(Qpn::new(0x0123_4567).value(), 0x23_4567);
        for e in [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce] {
            assert_eq!(Ecn::from_bits(e as u8), e);
        }
    }
}
