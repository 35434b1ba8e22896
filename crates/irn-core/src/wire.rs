//! A RoCEv2-style byte encoding of [`Packet`]s: the InfiniBand BTH, the AETH, and IRN's one-packet
//! SACK extension.
//!
//! The simulator never needs bytes, but tools that capture, replay or fuzz irn's traffic do, and
//! pinning the encoding down here keeps them from each inventing one. Only the transport headers
//! are encoded: the Ethernet, IPv4 and UDP framing (and the ICRC and FCS) is counted in
//! [`Packet::wire_len`] but never emitted, since nothing in irn routes on it.
//!
//! The module follows smoltcp's two-layer design:
//! 1. **Views** over bytes: [`Bth`], [`Aeth`] and [`SackExt`] wrap any `T: AsRef<[u8]>` and read
//!    (or, with `T: AsMut<[u8]>`, write) individual header fields in place. They know nothing
//!    about which combinations of fields make sense.
//! 2. **Representation**: [`Packet::parse`], [`Packet::buffer_len`] and [`Packet::emit`] convert
//!    between the views and the high-level [`Packet`], and are where the rules about what a
//!    well-formed irn packet is are enforced.
//!
//! # Layout
//!
//! | packet | bytes | contents |
//! | --- | --- | --- |
//! | data | 16 + payload | BTH (opcode RDMA WRITE FIRST/MIDDLE/LAST/ONLY), timestamp, payload (≤ 4096) |
//! | ACK | 20 | BTH (opcode ACKNOWLEDGE), AETH (syndrome `0x1F`), echoed timestamp |
//! | NACK | 24 | BTH (opcode ACKNOWLEDGE), AETH (syndrome `0x60`), echoed timestamp, SACK extension |
//! | CNP | 28 | BTH (opcode `0x81`, RoCEv2's congestion notification), 16 reserved bytes |
//!
//! The timestamp extension (4 bytes, big-endian nanoseconds modulo 2^32) stands for the NIC
//! timestamps RTT-based congestion control relies on: a data packet carries its send time and
//! the ACK/NACK it triggers echoes it. An ACK/NACK's BECN bit echoes the CE mark of the data packet
//! that triggered it (DCTCP's ECN-Echo).
//!
//! The BTH is the InfiniBand one, big-endian, with two irn uses of bits that the real header
//! does not give them, both because irn does not encode the layers that would carry them:
//! - byte 4, bits 1..0 (reserved in InfiniBand) hold the IP ECN code point of a data packet, since
//!   the IP header, where RoCEv2 really carries it, is not emitted;
//! - byte 8, bit 0 (reserved) marks a data packet as a retransmission. Real NICs do not mark
//!   retransmissions at all; irn does so that captures and metrics can tell them apart.
//!
//! # No-panic contract
//!
//! [`Packet::parse`] accepts any byte slice, however short, long or malformed, and returns either
//! `Ok` or a [`WireError`] saying what was wrong; it never panics. [`Packet::emit`] likewise
//! returns an error instead of panicking when the buffer is too small or the packet cannot be
//! encoded. The views' accessors index their buffer directly (as smoltcp's do), so a view built
//! with `new_unchecked` over a buffer shorter than its header panics on access: untrusted bytes
//! must go through `new_checked`, which is what `parse` does.

use crate::packet::{Echo, Ecn, Packet, PacketKind, Qpn};
use crate::seq::Psn;

/// Length of the Base Transport Header.
pub const BTH_LEN: usize = field::bth::PAYLOAD;
/// Length of the ACK Extended Transport Header.
pub const AETH_LEN: usize = field::aeth::PAYLOAD;
/// Length of irn's SACK extension header.
pub const SACK_EXT_LEN: usize = field::sack::PAYLOAD;
/// Length of irn's timestamp extension.
pub const TS_EXT_LEN: usize = 4;
/// Length of an encoded ACK: BTH + AETH + timestamp.
pub const ACK_LEN: usize = BTH_LEN + AETH_LEN + TS_EXT_LEN;
/// Length of an encoded NACK: BTH + AETH + timestamp + SACK extension.
pub const NACK_LEN: usize = ACK_LEN + SACK_EXT_LEN;
/// Length of an encoded CNP: BTH + 16 reserved bytes (RoCEv2 Annex A17).
pub const CNP_LEN: usize = BTH_LEN + 16;
/// Largest data payload: the largest RoCE path MTU. Anything longer cannot have come from a
/// conforming sender, so `parse` rejects it rather than silently truncating to `u16`.
pub const MAX_PAYLOAD: usize = 4096;

/// The P_Key irn emits: the default partition, full membership, which every port accepts.
pub const DEFAULT_P_KEY: u16 = 0xFFFF;

/// AETH syndrome of an ACK: top bits `000` (ACK) and credit count `11111`, which InfiniBand
/// defines as "invalid", i.e. no end-to-end credit limit; irn does flow control with BDP-FC
/// instead.
pub const SYNDROME_ACK: u8 = 0b000_11111;
/// AETH syndrome of a NACK: top bits `011` (NAK) and code `00000` (PSN sequence error), the NAK a
/// receiver sends when a packet arrives out of order, which is exactly when IRN NACKs.
pub const SYNDROME_NAK_PSN_SEQUENCE_ERROR: u8 = 0b011_00000;
/// irn's encoding of Eunomia's NACK (a packet the receiver's ordering layer could not track and
/// dropped), which the paper does not specify: a NAK with code 5, reserved in the InfiniBand
/// specification, followed by the SACK extension naming the dropped PSN. Eunomia's SACK is an
/// ACK syndrome followed by the SACK extension (a plain ACK has none).
pub const SYNDROME_NAK_UNTRACKED: u8 = 0b011_00101;

/// Why bytes could not be parsed into a [`Packet`], or a [`Packet`] could not be emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum WireError {
    /// The bytes end before a header (or fixed-size packet) does; the length is from the start of
    /// the packet.
    #[error("truncated packet: needed {needed} bytes, got {got}")]
    Truncated { needed: usize, got: usize },
    /// The BTH opcode is not one irn sends: only RC RDMA WRITE (FIRST/MIDDLE/LAST/ONLY) and RC
    /// ACKNOWLEDGE carry irn traffic.
    #[error("unknown BTH opcode {0:#04x}")]
    UnknownOpcode(u8),
    /// The AETH syndrome is neither an ACK nor a PSN-sequence-error NAK (e.g. an RNR NAK or a
    /// remote access error), which irn never sends and cannot represent.
    #[error("unsupported AETH syndrome {0:#04x}")]
    BadSyndrome(u8),
    /// A data payload is longer than the largest RoCE MTU ([`MAX_PAYLOAD`]).
    #[error("payload of {len} bytes exceeds the {max}-byte maximum")]
    PayloadTooLong { len: usize, max: usize },
    /// The buffer given to [`Packet::emit`] is shorter than [`Packet::buffer_len`].
    #[error("buffer too small: needed {needed} bytes, got {got}")]
    BufferTooSmall { needed: usize, got: usize },
    /// An ACK or NACK is followed by extra bytes. Control packets have a fixed size, so extra
    /// bytes mean the packet is not what its headers say it is.
    #[error("control packet of {got} bytes, expected exactly {expected}")]
    TrailingBytes { expected: usize, got: usize },
}

/// Byte offsets of every header field, in one place so the layout can be read off at a glance.
mod field {
    pub type Field = core::ops::Range<usize>;

    /// Base Transport Header (InfiniBand Architecture Specification, vol. 1, §9.2).
    pub mod bth {
        use super::Field;

        pub const OPCODE: usize = 0;
        /// SE (bit 7), MigReq (bit 6), PadCnt (bits 5..4), TVer (bits 3..0).
        pub const FLAGS: usize = 1;
        pub const P_KEY: Field = 2..4;
        /// FECN (bit 7), BECN (bit 6), reserved (bits 5..0); irn: ECN code point in bits 1..0.
        pub const CN: usize = 4;
        pub const DEST_QP: Field = 5..8;
        /// AckReq (bit 7), reserved (bits 6..0); irn: retransmission in bit 0.
        pub const ACK_REQ: usize = 8;
        pub const PSN: Field = 9..12;
        pub const PAYLOAD: usize = 12;

        pub const SE_BIT: u8 = 0x80;
        pub const MIG_REQ_BIT: u8 = 0x40;
        pub const PAD_CNT_SHIFT: u8 = 4;
        pub const PAD_CNT_MASK: u8 = 0b11 << PAD_CNT_SHIFT;
        pub const TVER_MASK: u8 = 0x0F;
        pub const FECN_BIT: u8 = 0x80;
        pub const BECN_BIT: u8 = 0x40;
        pub const ECN_MASK: u8 = 0b11;
        pub const ACK_REQ_BIT: u8 = 0x80;
        pub const RETRANSMISSION_BIT: u8 = 0x01;
    }

    /// ACK Extended Transport Header (§9.3.5).
    pub mod aeth {
        use super::Field;

        pub const SYNDROME: usize = 0;
        pub const MSN: Field = 1..4;
        pub const PAYLOAD: usize = 4;
    }

    /// irn's SACK extension: the PSN whose out-of-order arrival triggered a NACK.
    pub mod sack {
        use super::Field;

        pub const RESERVED: usize = 0;
        pub const SACK_PSN: Field = 1..4;
        pub const PAYLOAD: usize = 4;
    }
}

/// Reads a 24-bit big-endian value from a 3-byte field.
fn read_u24(bytes: &[u8]) -> u32 {
    u32::from_be_bytes([0, bytes[0], bytes[1], bytes[2]])
}

/// Writes the low 24 bits of `value`, big-endian, into a 3-byte field.
fn write_u24(bytes: &mut [u8], value: u32) {
    let [_, b0, b1, b2] = value.to_be_bytes();
    bytes.copy_from_slice(&[b0, b1, b2]);
}

/// Reads the 4-byte timestamp extension at the start of `bytes`, or `None` if it is too short.
fn read_ts(bytes: &[u8]) -> Option<u32> {
    Some(u32::from_be_bytes(
        bytes.get(..TS_EXT_LEN)?.try_into().ok()?,
    ))
}

/// Sets or clears `mask` in `byte`.
fn set_bits(byte: &mut u8, mask: u8, on: bool) {
    if on {
        *byte |= mask;
    } else {
        *byte &= !mask;
    }
}

/// A BTH opcode, as far as irn is concerned; every other value is kept as `Unknown` so that a view
/// can report it rather than fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Opcode {
    /// RC RDMA WRITE First: the first packet of a multi-packet message.
    WriteFirst,
    /// RC RDMA WRITE Middle.
    WriteMiddle,
    /// RC RDMA WRITE Last: the last packet of a multi-packet message.
    WriteLast,
    /// RC RDMA WRITE Only: a message that fits in one packet.
    WriteOnly,
    /// RC ACKNOWLEDGE: both ACKs and NACKs, told apart by the AETH syndrome.
    Acknowledge,
    /// RoCEv2 congestion notification packet.
    Cnp,
    Unknown(u8),
}

impl Opcode {
    const WRITE_FIRST: u8 = 0x06;
    const WRITE_MIDDLE: u8 = 0x07;
    const WRITE_LAST: u8 = 0x08;
    const WRITE_ONLY: u8 = 0x0A;
    const ACKNOWLEDGE: u8 = 0x11;
    const CNP: u8 = 0x81;

    /// The RDMA WRITE opcode for a data packet at this position in its message.
    pub const fn write(first: bool, last: bool) -> Opcode {
        match (first, last) {
            (true, false) => Opcode::WriteFirst,
            (false, false) => Opcode::WriteMiddle,
            (false, true) => Opcode::WriteLast,
            (true, true) => Opcode::WriteOnly,
        }
    }

    /// For an RDMA WRITE opcode, the packet's `(first, last)` position in its message; `None`
    /// for any other opcode.
    pub const fn write_position(self) -> Option<(bool, bool)> {
        match self {
            Opcode::WriteFirst => Some((true, false)),
            Opcode::WriteMiddle => Some((false, false)),
            Opcode::WriteLast => Some((false, true)),
            Opcode::WriteOnly => Some((true, true)),
            Opcode::Acknowledge | Opcode::Cnp | Opcode::Unknown(_) => None,
        }
    }
}

impl From<u8> for Opcode {
    fn from(value: u8) -> Opcode {
        match value {
            Opcode::WRITE_FIRST => Opcode::WriteFirst,
            Opcode::WRITE_MIDDLE => Opcode::WriteMiddle,
            Opcode::WRITE_LAST => Opcode::WriteLast,
            Opcode::WRITE_ONLY => Opcode::WriteOnly,
            Opcode::ACKNOWLEDGE => Opcode::Acknowledge,
            Opcode::CNP => Opcode::Cnp,
            other => Opcode::Unknown(other),
        }
    }
}

impl From<Opcode> for u8 {
    fn from(value: Opcode) -> u8 {
        match value {
            Opcode::WriteFirst => Opcode::WRITE_FIRST,
            Opcode::WriteMiddle => Opcode::WRITE_MIDDLE,
            Opcode::WriteLast => Opcode::WRITE_LAST,
            Opcode::WriteOnly => Opcode::WRITE_ONLY,
            Opcode::Acknowledge => Opcode::ACKNOWLEDGE,
            Opcode::Cnp => Opcode::CNP,
            Opcode::Unknown(other) => other,
        }
    }
}

/// A view of a Base Transport Header at the start of a buffer, and of the bytes that follow it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bth<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Bth<T> {
    /// Wraps `buffer` without checking its length.
    ///
    /// # Panics
    /// The accessors panic if `buffer` is shorter than [`BTH_LEN`]; use [`Bth::new_checked`] for
    /// bytes that have not been checked.
    pub const fn new_unchecked(buffer: T) -> Bth<T> {
        Bth { buffer }
    }

    /// Wraps `buffer`, failing with [`WireError::Truncated`] if it cannot hold a BTH, so that
    /// no accessor can panic.
    pub fn new_checked(buffer: T) -> Result<Bth<T>, WireError> {
        let bth = Bth::new_unchecked(buffer);
        bth.check_len()?;
        Ok(bth)
    }

    /// Checks that the buffer holds a whole BTH.
    pub fn check_len(&self) -> Result<(), WireError> {
        let got = self.buffer.as_ref().len();
        if got < BTH_LEN {
            Err(WireError::Truncated {
                needed: BTH_LEN,
                got,
            })
        } else {
            Ok(())
        }
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn opcode(&self) -> Opcode {
        Opcode::from(self.buffer.as_ref()[field::bth::OPCODE])
    }

    /// Solicited Event: ask the responder to raise a completion event. irn does not use it.
    pub fn solicited_event(&self) -> bool {
        self.buffer.as_ref()[field::bth::FLAGS] & field::bth::SE_BIT != 0
    }

    /// Migration request (automatic path migration). irn does not use it.
    pub fn mig_req(&self) -> bool {
        self.buffer.as_ref()[field::bth::FLAGS] & field::bth::MIG_REQ_BIT != 0
    }

    /// Bytes of padding at the end of the payload to reach a multiple of four. irn does not pad.
    pub fn pad_count(&self) -> u8 {
        (self.buffer.as_ref()[field::bth::FLAGS] & field::bth::PAD_CNT_MASK)
            >> field::bth::PAD_CNT_SHIFT
    }

    /// Transport header version; 0 is the only one defined.
    pub fn tver(&self) -> u8 {
        self.buffer.as_ref()[field::bth::FLAGS] & field::bth::TVER_MASK
    }

    pub fn p_key(&self) -> u16 {
        let b = &self.buffer.as_ref()[field::bth::P_KEY];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// Forward explicit congestion notification (InfiniBand's own, not the IP ECN). irn emits 0.
    pub fn fecn(&self) -> bool {
        self.buffer.as_ref()[field::bth::CN] & field::bth::FECN_BIT != 0
    }

    /// Backward explicit congestion notification. irn emits 0.
    pub fn becn(&self) -> bool {
        self.buffer.as_ref()[field::bth::CN] & field::bth::BECN_BIT != 0
    }

    /// irn extension: the IP ECN code point of a data packet, kept in reserved bits because the IP
    /// header is not encoded.
    pub fn ecn(&self) -> Ecn {
        Ecn::from_bits(self.buffer.as_ref()[field::bth::CN] & field::bth::ECN_MASK)
    }

    pub fn dest_qp(&self) -> Qpn {
        Qpn::new(read_u24(&self.buffer.as_ref()[field::bth::DEST_QP]))
    }

    /// Acknowledge request: the responder must acknowledge this packet.
    pub fn ack_req(&self) -> bool {
        self.buffer.as_ref()[field::bth::ACK_REQ] & field::bth::ACK_REQ_BIT != 0
    }

    /// irn extension: this data packet was sent before. Kept in a reserved bit; real NICs do not
    /// mark retransmissions.
    pub fn retransmission(&self) -> bool {
        self.buffer.as_ref()[field::bth::ACK_REQ] & field::bth::RETRANSMISSION_BIT != 0
    }

    /// The packet's PSN; for an ACKNOWLEDGE, irn's cumulative ACK (the PSN the receiver expects).
    pub fn psn(&self) -> Psn {
        Psn::new(read_u24(&self.buffer.as_ref()[field::bth::PSN]))
    }

    /// The bytes after the BTH: a data payload, or the AETH of an ACKNOWLEDGE.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::bth::PAYLOAD..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Bth<T> {
    pub fn set_opcode(&mut self, value: Opcode) {
        self.buffer.as_mut()[field::bth::OPCODE] = value.into();
    }

    pub fn set_solicited_event(&mut self, value: bool) {
        set_bits(
            &mut self.buffer.as_mut()[field::bth::FLAGS],
            field::bth::SE_BIT,
            value,
        );
    }

    pub fn set_mig_req(&mut self, value: bool) {
        set_bits(
            &mut self.buffer.as_mut()[field::bth::FLAGS],
            field::bth::MIG_REQ_BIT,
            value,
        );
    }

    /// Sets the pad count from the low 2 bits of `value`.
    pub fn set_pad_count(&mut self, value: u8) {
        let byte = &mut self.buffer.as_mut()[field::bth::FLAGS];
        *byte = (*byte & !field::bth::PAD_CNT_MASK)
            | ((value << field::bth::PAD_CNT_SHIFT) & field::bth::PAD_CNT_MASK);
    }

    /// Sets the transport header version from the low 4 bits of `value`.
    pub fn set_tver(&mut self, value: u8) {
        let byte = &mut self.buffer.as_mut()[field::bth::FLAGS];
        *byte = (*byte & !field::bth::TVER_MASK) | (value & field::bth::TVER_MASK);
    }

    pub fn set_p_key(&mut self, value: u16) {
        self.buffer.as_mut()[field::bth::P_KEY].copy_from_slice(&value.to_be_bytes());
    }

    pub fn set_fecn(&mut self, value: bool) {
        set_bits(
            &mut self.buffer.as_mut()[field::bth::CN],
            field::bth::FECN_BIT,
            value,
        );
    }

    pub fn set_becn(&mut self, value: bool) {
        set_bits(
            &mut self.buffer.as_mut()[field::bth::CN],
            field::bth::BECN_BIT,
            value,
        );
    }

    /// irn extension: see [`Bth::ecn`].
    pub fn set_ecn(&mut self, value: Ecn) {
        let byte = &mut self.buffer.as_mut()[field::bth::CN];
        *byte = (*byte & !field::bth::ECN_MASK) | (value as u8 & field::bth::ECN_MASK);
    }

    pub fn set_dest_qp(&mut self, value: Qpn) {
        write_u24(
            &mut self.buffer.as_mut()[field::bth::DEST_QP],
            value.value(),
        );
    }

    pub fn set_ack_req(&mut self, value: bool) {
        set_bits(
            &mut self.buffer.as_mut()[field::bth::ACK_REQ],
            field::bth::ACK_REQ_BIT,
            value,
        );
    }

    /// irn extension: see [`Bth::retransmission`].
    pub fn set_retransmission(&mut self, value: bool) {
        set_bits(
            &mut self.buffer.as_mut()[field::bth::ACK_REQ],
            field::bth::RETRANSMISSION_BIT,
            value,
        );
    }

    pub fn set_psn(&mut self, value: Psn) {
        write_u24(&mut self.buffer.as_mut()[field::bth::PSN], value.value());
    }

    /// The bytes after the BTH, for writing.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::bth::PAYLOAD..]
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Bth<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// A view of an ACK Extended Transport Header at the start of a buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aeth<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Aeth<T> {
    /// Wraps `buffer` without checking its length.
    ///
    /// # Panics
    /// The accessors panic if `buffer` is shorter than [`AETH_LEN`]; use [`Aeth::new_checked`]
    /// for bytes that have not been checked.
    pub const fn new_unchecked(buffer: T) -> Aeth<T> {
        Aeth { buffer }
    }

    /// Wraps `buffer`, failing with [`WireError::Truncated`] if it cannot hold an AETH, so that
    /// no accessor can panic.
    pub fn new_checked(buffer: T) -> Result<Aeth<T>, WireError> {
        let aeth = Aeth::new_unchecked(buffer);
        aeth.check_len()?;
        Ok(aeth)
    }

    /// Checks that the buffer holds a whole AETH.
    pub fn check_len(&self) -> Result<(), WireError> {
        let got = self.buffer.as_ref().len();
        if got < AETH_LEN {
            Err(WireError::Truncated {
                needed: AETH_LEN,
                got,
            })
        } else {
            Ok(())
        }
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The raw syndrome: ACK, RNR NAK or NAK in the top 3 bits, a credit count, timer or NAK code
    /// in the low 5. See [`SYNDROME_ACK`] and [`SYNDROME_NAK_PSN_SEQUENCE_ERROR`].
    pub fn syndrome(&self) -> u8 {
        self.buffer.as_ref()[field::aeth::SYNDROME]
    }

    /// Message sequence number: messages the responder has completed, modulo 2^24.
    pub fn msn(&self) -> u32 {
        read_u24(&self.buffer.as_ref()[field::aeth::MSN])
    }

    /// The bytes after the AETH: irn's SACK extension in a NACK.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::aeth::PAYLOAD..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Aeth<T> {
    pub fn set_syndrome(&mut self, value: u8) {
        self.buffer.as_mut()[field::aeth::SYNDROME] = value;
    }

    /// Sets the MSN from the low 24 bits of `value` (the field wraps, as the count does).
    pub fn set_msn(&mut self, value: u32) {
        write_u24(&mut self.buffer.as_mut()[field::aeth::MSN], value);
    }

    /// The bytes after the AETH, for writing.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::aeth::PAYLOAD..]
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Aeth<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// A view of irn's SACK extension header at the start of a buffer.
///
/// IRN (§4.1) makes a NACK carry both the cumulative ACK and the one PSN whose out-of-order
/// arrival triggered it, so the sender learns of the loss and of the packet that did arrive. No
/// InfiniBand header carries the second PSN, so irn appends this 4-byte header after the AETH:
/// one reserved byte (keeping the PSN in the low 24 bits of a 32-bit word, like the BTH's) and the
/// SACKed PSN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SackExt<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> SackExt<T> {
    /// Wraps `buffer` without checking its length.
    ///
    /// # Panics
    /// The accessors panic if `buffer` is shorter than [`SACK_EXT_LEN`]; use
    /// [`SackExt::new_checked`] for bytes that have not been checked.
    pub const fn new_unchecked(buffer: T) -> SackExt<T> {
        SackExt { buffer }
    }

    /// Wraps `buffer`, failing with [`WireError::Truncated`] if it cannot hold the extension, so
    /// that no accessor can panic.
    pub fn new_checked(buffer: T) -> Result<SackExt<T>, WireError> {
        let sack = SackExt::new_unchecked(buffer);
        sack.check_len()?;
        Ok(sack)
    }

    /// Checks that the buffer holds a whole SACK extension.
    pub fn check_len(&self) -> Result<(), WireError> {
        let got = self.buffer.as_ref().len();
        if got < SACK_EXT_LEN {
            Err(WireError::Truncated {
                needed: SACK_EXT_LEN,
                got,
            })
        } else {
            Ok(())
        }
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The reserved byte; irn emits 0 and ignores it on parse, leaving room for later use.
    pub fn reserved(&self) -> u8 {
        self.buffer.as_ref()[field::sack::RESERVED]
    }

    /// The PSN whose out-of-order arrival triggered the NACK.
    pub fn sack_psn(&self) -> Psn {
        Psn::new(read_u24(&self.buffer.as_ref()[field::sack::SACK_PSN]))
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> SackExt<T> {
    pub fn set_reserved(&mut self, value: u8) {
        self.buffer.as_mut()[field::sack::RESERVED] = value;
    }

    pub fn set_sack_psn(&mut self, value: Psn) {
        write_u24(
            &mut self.buffer.as_mut()[field::sack::SACK_PSN],
            value.value(),
        );
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for SackExt<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// What an AETH syndrome says, for the syndromes irn accepts.
enum Syndrome {
    Ack,
    Nack,
    /// Eunomia's NACK for a packet the receiver could not track (see [`SYNDROME_NAK_UNTRACKED`]).
    DropNack,
}

impl Syndrome {
    /// Classifies a syndrome. Any credit count is accepted on an ACK, since irn ignores credits
    /// and another sender might advertise them; the only NAK accepted is PSN sequence error.
    fn classify(syndrome: u8) -> Result<Syndrome, WireError> {
        match (syndrome >> 5, syndrome & 0b1_1111) {
            (0b000, _) => Ok(Syndrome::Ack),
            (0b011, 0) => Ok(Syndrome::Nack),
            (0b011, code) if code == SYNDROME_NAK_UNTRACKED & 0b1_1111 => Ok(Syndrome::DropNack),
            _ => Err(WireError::BadSyndrome(syndrome)),
        }
    }
}

impl Packet {
    /// Decodes a packet from its transport headers (and payload, for data).
    ///
    /// Fields irn does not use (SE, MigReq, PadCnt, TVer, P_Key, FECN, BECN, AckReq, reserved
    /// bits, the SACK extension's reserved byte) are ignored, so that headers from other senders
    /// parse; the payload bytes themselves are not kept, only their count.
    ///
    /// Never panics, whatever `bytes` holds (see the module documentation).
    pub fn parse(bytes: &[u8]) -> Result<Packet, WireError> {
        let got = bytes.len();
        let bth = Bth::new_checked(bytes)?;
        let dest_qp = bth.dest_qp();
        let psn = bth.psn();
        let kind = match bth.opcode() {
            Opcode::Unknown(raw) => return Err(WireError::UnknownOpcode(raw)),
            Opcode::Acknowledge => {
                if got < ACK_LEN {
                    return Err(WireError::Truncated {
                        needed: ACK_LEN,
                        got,
                    });
                }
                let aeth = Aeth::new_checked(bth.payload())?;
                let msn = aeth.msn();
                let rest = aeth.payload();
                let echo = Echo {
                    ts: read_ts(rest).ok_or(WireError::Truncated {
                        needed: ACK_LEN,
                        got,
                    })?,
                    ece: bth.becn(),
                };
                match Syndrome::classify(aeth.syndrome())? {
                    Syndrome::Ack if got == ACK_LEN => PacketKind::Ack { msn, echo },
                    syndrome => {
                        // Every other kind carries the SACK extension.
                        if got < NACK_LEN {
                            return Err(WireError::Truncated {
                                needed: NACK_LEN,
                                got,
                            });
                        }
                        if got > NACK_LEN {
                            return Err(WireError::TrailingBytes {
                                expected: NACK_LEN,
                                got,
                            });
                        }
                        let psn = SackExt::new_checked(&rest[TS_EXT_LEN..])?.sack_psn();
                        match syndrome {
                            Syndrome::Ack => PacketKind::Sack { sacked: psn, echo },
                            Syndrome::Nack => PacketKind::Nack {
                                msn,
                                sack: psn,
                                echo,
                            },
                            Syndrome::DropNack => PacketKind::DropNack { dropped: psn, echo },
                        }
                    }
                }
            }
            Opcode::Cnp => {
                if got < CNP_LEN {
                    return Err(WireError::Truncated {
                        needed: CNP_LEN,
                        got,
                    });
                }
                if got > CNP_LEN {
                    return Err(WireError::TrailingBytes {
                        expected: CNP_LEN,
                        got,
                    });
                }
                PacketKind::Cnp
            }
            write => {
                // Every opcode that is neither unknown nor ACKNOWLEDGE is an RDMA WRITE; fall back
                // to UnknownOpcode rather than panic should that ever stop being true.
                let (first, last) = write
                    .write_position()
                    .ok_or(WireError::UnknownOpcode(write.into()))?;
                let ts = read_ts(bth.payload()).ok_or(WireError::Truncated {
                    needed: BTH_LEN + TS_EXT_LEN,
                    got,
                })?;
                let len = bth.payload().len() - TS_EXT_LEN;
                let too_long = WireError::PayloadTooLong {
                    len,
                    max: MAX_PAYLOAD,
                };
                if len > MAX_PAYLOAD {
                    return Err(too_long);
                }
                PacketKind::Data {
                    payload_len: u16::try_from(len).map_err(|_| too_long)?,
                    first,
                    last,
                    retransmission: bth.retransmission(),
                    ecn: bth.ecn(),
                    ts,
                    entropy: 0,
                }
            }
        };
        Ok(Packet { dest_qp, psn, kind })
    }

    /// Bytes [`Packet::emit`] writes: the transport headers plus, for data, the payload. (Compare
    /// [`Packet::wire_len`], which also counts the framing that is not emitted.)
    pub fn buffer_len(&self) -> usize {
        match self.kind {
            PacketKind::Data { payload_len, .. } => BTH_LEN + TS_EXT_LEN + usize::from(payload_len),
            PacketKind::Ack { .. } => ACK_LEN,
            PacketKind::Nack { .. } | PacketKind::Sack { .. } | PacketKind::DropNack { .. } => {
                NACK_LEN
            }
            PacketKind::Cnp => CNP_LEN,
        }
    }

    /// Encodes the packet at the start of `buf` and returns the number of bytes written,
    /// [`Packet::buffer_len`]. A data payload is written as zeros, since a [`Packet`] carries only
    /// its length; bytes of `buf` past the packet are left alone.
    ///
    /// Fails, without panicking, with [`WireError::PayloadTooLong`] for a payload over
    /// [`MAX_PAYLOAD`] and [`WireError::BufferTooSmall`] if `buf` is shorter than the packet.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let len = self.buffer_len();
        if let PacketKind::Data { payload_len, .. } = self.kind {
            if usize::from(payload_len) > MAX_PAYLOAD {
                return Err(WireError::PayloadTooLong {
                    len: usize::from(payload_len),
                    max: MAX_PAYLOAD,
                });
            }
        }
        let got = buf.len();
        let buf = buf
            .get_mut(..len)
            .ok_or(WireError::BufferTooSmall { needed: len, got })?;
        // Start from zeros so reserved bits, unused fields and the payload are all zero.
        buf.fill(0);

        let mut bth = Bth::new_checked(buf)?;
        bth.set_p_key(DEFAULT_P_KEY);
        bth.set_dest_qp(self.dest_qp);
        bth.set_psn(self.psn);
        match self.kind {
            PacketKind::Data {
                first,
                last,
                retransmission,
                ecn,
                ts,
                ..
            } => {
                bth.set_opcode(Opcode::write(first, last));
                bth.set_ecn(ecn);
                // irn acknowledges every data packet, so every one asks for it.
                bth.set_ack_req(true);
                bth.set_retransmission(retransmission);
                bth.payload_mut()[..TS_EXT_LEN].copy_from_slice(&ts.to_be_bytes());
            }
            PacketKind::Ack { msn, echo } => {
                bth.set_opcode(Opcode::Acknowledge);
                bth.set_becn(echo.ece);
                let mut aeth = Aeth::new_checked(bth.payload_mut())?;
                aeth.set_syndrome(SYNDROME_ACK);
                aeth.set_msn(msn);
                aeth.payload_mut()[..TS_EXT_LEN].copy_from_slice(&echo.ts.to_be_bytes());
            }
            PacketKind::Nack { msn, sack, echo } => {
                emit_sack(&mut bth, SYNDROME_NAK_PSN_SEQUENCE_ERROR, msn, sack, echo)?;
            }
            // Eunomia's acknowledgements carry no MSN: zero on the wire.
            PacketKind::Sack { sacked, echo } => {
                emit_sack(&mut bth, SYNDROME_ACK, 0, sacked, echo)?;
            }
            PacketKind::DropNack { dropped, echo } => {
                emit_sack(&mut bth, SYNDROME_NAK_UNTRACKED, 0, dropped, echo)?;
            }
            PacketKind::Cnp => bth.set_opcode(Opcode::Cnp),
        }
        Ok(len)
    }
}

/// An acknowledgement that carries the SACK extension: the AETH with `syndrome`, the echoed
/// timestamp, then `psn` in the extension.
fn emit_sack(
    bth: &mut Bth<&mut [u8]>,
    syndrome: u8,
    msn: u32,
    psn: Psn,
    echo: Echo,
) -> Result<(), WireError> {
    bth.set_opcode(Opcode::Acknowledge);
    bth.set_becn(echo.ece);
    let mut aeth = Aeth::new_checked(bth.payload_mut())?;
    aeth.set_syndrome(syndrome);
    aeth.set_msn(msn);
    let rest = aeth.payload_mut();
    rest[..TS_EXT_LEN].copy_from_slice(&echo.ts.to_be_bytes());
    SackExt::new_checked(&mut rest[TS_EXT_LEN..])?.set_sack_psn(psn);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seq::PSN_SPACE;
    use proptest::prelude::*;

    const ECNS: [Ecn; 4] = [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce];

    fn data(payload_len: u16, first: bool, last: bool, retransmission: bool, ecn: Ecn) -> Packet {
        Packet {
            dest_qp: Qpn::new(0x12_3456),
            psn: Psn::new(0xAB_CDEF),
            kind: PacketKind::Data {
                payload_len,
                first,
                last,
                retransmission,
                ecn,
                ts: 0x1122_3344,
                entropy: 0,
            },
        }
    }

    fn ack() -> Packet {
        Packet {
            dest_qp: Qpn::new(0x00_0102),
            psn: Psn::new(0x00_0304),
            kind: PacketKind::Ack {
                msn: 0x05_0607,
                echo: Echo {
                    ts: 0xA1B2_C3D4,
                    ece: true,
                },
            },
        }
    }

    fn nack() -> Packet {
        Packet {
            dest_qp: Qpn::new(0xFE_DCBA),
            psn: Psn::new(0xFF_FFFF),
            kind: PacketKind::Nack {
                msn: 0x08_090A,
                sack: Psn::new(0x0B_0C0D),
                echo: Echo {
                    ts: 0x0102_0304,
                    ece: false,
                },
            },
        }
    }

    fn emit_vec(p: &Packet) -> Vec<u8> {
        let mut buf = vec![0xEE; p.buffer_len()];
        assert_eq!(p.emit(&mut buf), Ok(p.buffer_len()));
        buf
    }

    #[test]
    fn exact_bytes_pin_the_layout() {
        let cases: Vec<(Packet, Vec<u8>)> = vec![
            (
                data(4, true, true, true, Ecn::Ce),
                vec![
                    0x0A, 0x00, 0xFF, 0xFF, // WRITE_ONLY, flags, P_Key
                    0x03, 0x12, 0x34, 0x56, // ECN = CE, QP
                    0x81, 0xAB, 0xCD, 0xEF, // AckReq | retransmission, PSN
                    0x11, 0x22, 0x33, 0x44, // timestamp
                    0x00, 0x00, 0x00, 0x00, // payload
                ],
            ),
            (
                data(0, true, false, false, Ecn::Ect0),
                vec![
                    0x06, 0x00, 0xFF, 0xFF, 0x02, 0x12, 0x34, 0x56, 0x80, 0xAB, 0xCD, 0xEF, 0x11,
                    0x22, 0x33, 0x44,
                ],
            ),
            (
                data(1, false, false, false, Ecn::NotEct),
                vec![
                    0x07, 0x00, 0xFF, 0xFF, 0x00, 0x12, 0x34, 0x56, 0x80, 0xAB, 0xCD, 0xEF, 0x11,
                    0x22, 0x33, 0x44, 0x00,
                ],
            ),
            (
                data(2, false, true, true, Ecn::Ect1),
                vec![
                    0x08, 0x00, 0xFF, 0xFF, 0x01, 0x12, 0x34, 0x56, 0x81, 0xAB, 0xCD, 0xEF, 0x11,
                    0x22, 0x33, 0x44, 0x00, 0x00,
                ],
            ),
            (
                ack(),
                vec![
                    0x11, 0x00, 0xFF, 0xFF, // ACKNOWLEDGE, flags, P_Key
                    0x40, 0x00, 0x01, 0x02, // BECN (ECN-Echo), QP
                    0x00, 0x00, 0x03, 0x04, // no AckReq, cumulative ACK
                    0x1F, 0x05, 0x06, 0x07, // AETH: ACK syndrome, MSN
                    0xA1, 0xB2, 0xC3, 0xD4, // echoed timestamp
                ],
            ),
            (
                nack(),
                vec![
                    0x11, 0x00, 0xFF, 0xFF, // ACKNOWLEDGE, flags, P_Key
                    0x00, 0xFE, 0xDC, 0xBA, // no ECN, QP
                    0x00, 0xFF, 0xFF, 0xFF, // no AckReq, cumulative ACK
                    0x60, 0x08, 0x09, 0x0A, // AETH: NAK PSN sequence error, MSN
                    0x01, 0x02, 0x03, 0x04, // echoed timestamp
                    0x00, 0x0B, 0x0C, 0x0D, // SACK extension: reserved, SACKed PSN
                ],
            ),
            (
                Packet {
                    dest_qp: Qpn::new(0x00_0009),
                    psn: Psn::new(0x00_0001),
                    kind: PacketKind::Cnp,
                },
                vec![
                    0x81, 0x00, 0xFF, 0xFF, // CNP, flags, P_Key
                    0x00, 0x00, 0x00, 0x09, // QP
                    0x00, 0x00, 0x00, 0x01, // PSN
                    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // reserved
                ],
            ),
        ];
        for (packet, expected) in cases {
            assert_eq!(emit_vec(&packet), expected, "{packet:?}");
            assert_eq!(Packet::parse(&expected), Ok(packet));
        }
    }

    #[test]
    fn every_data_variant_round_trips() {
        let positions = [
            (true, false, 0x06),
            (false, false, 0x07),
            (false, true, 0x08),
            (true, true, 0x0A),
        ];
        for (first, last, opcode) in positions {
            for retransmission in [false, true] {
                for ecn in ECNS {
                    for payload_len in [0, 1, 1024, 4096] {
                        let p = data(payload_len, first, last, retransmission, ecn);
                        let bytes = emit_vec(&p);
                        assert_eq!(bytes.len(), 16 + usize::from(payload_len));
                        assert_eq!(bytes[0], opcode);
                        assert_eq!(bytes[4], ecn as u8);
                        assert_eq!(bytes[8], 0x80 | u8::from(retransmission));
                        assert!(bytes[16..].iter().all(|&b| b == 0));
                        assert_eq!(Packet::parse(&bytes), Ok(p), "{p:?}");
                    }
                }
            }
        }
        for p in [ack(), nack()] {
            assert_eq!(Packet::parse(&emit_vec(&p)), Ok(p));
        }
    }

    #[test]
    fn msn_is_truncated_to_24_bits() {
        let echo = Echo::default();
        let p = Packet {
            kind: PacketKind::Ack {
                msn: 0x0100_0005,
                echo,
            },
            ..ack()
        };
        let bytes = emit_vec(&p);
        assert_eq!(&bytes[13..16], &[0x00, 0x00, 0x05]);
        assert_eq!(
            Packet::parse(&bytes).map(|p| p.kind),
            Ok(PacketKind::Ack { msn: 5, echo })
        );
    }

    #[test]
    fn ignored_fields_do_not_affect_parse() {
        let p = data(3, false, true, false, Ecn::Ect0);
        let mut bytes = emit_vec(&p);
        bytes[1] = 0xFF; // SE, MigReq, PadCnt, TVer
        bytes[2] = 0x12; // P_Key
        bytes[3] = 0x34;
        bytes[4] |= 0xFC; // FECN, BECN, reserved
        bytes[8] = 0x7E; // AckReq clear, reserved set, retransmission clear
        assert_eq!(Packet::parse(&bytes), Ok(p));

        let n = nack();
        let mut bytes = emit_vec(&n);
        bytes[4] = 0xBF; // FECN and ECN bits on a control packet (BECN is the ECN-Echo)
        bytes[8] = 0xFF; // AckReq, retransmission bit on a control packet
        bytes[20] = 0xAA; // SACK extension's reserved byte
        assert_eq!(Packet::parse(&bytes), Ok(n));
    }

    #[test]
    fn any_ack_credit_count_is_an_ack() {
        let mut bytes = emit_vec(&ack());
        for syndrome in 0x00..=0x1F {
            bytes[12] = syndrome;
            assert_eq!(Packet::parse(&bytes), Ok(ack()), "syndrome {syndrome:#x}");
        }
    }

    #[test]
    fn malformed_inputs_are_rejected() {
        let ack_bytes = emit_vec(&ack());
        let nack_bytes = emit_vec(&nack());
        let cnp_bytes = emit_vec(&Packet {
            kind: PacketKind::Cnp,
            ..ack()
        });
        let with_syndrome = |syndrome: u8| {
            let mut b = nack_bytes.clone();
            b[12] = syndrome;
            b
        };
        let with_opcode = |opcode: u8| {
            let mut b = emit_vec(&data(8, true, true, false, Ecn::Ect0));
            b[0] = opcode;
            b
        };
        let mut long_payload = emit_vec(&data(4096, true, true, false, Ecn::Ect0));
        long_payload.push(0);
        // Longer than a u16 can count: must not wrap into a plausible length.
        let mut huge_payload = vec![0; 16 + 70_000];
        huge_payload[0] = 0x07;

        let cases: Vec<(&str, Vec<u8>, WireError)> = vec![
            ("empty", vec![], WireError::Truncated { needed: 12, got: 0 }),
            (
                "11 bytes",
                vec![0x0A; 11],
                WireError::Truncated {
                    needed: 12,
                    got: 11,
                },
            ),
            (
                "opcode 0x00",
                with_opcode(0x00),
                WireError::UnknownOpcode(0x00),
            ),
            (
                "SEND ONLY",
                with_opcode(0x04),
                WireError::UnknownOpcode(0x04),
            ),
            (
                "RDMA READ request",
                with_opcode(0x0C),
                WireError::UnknownOpcode(0x0C),
            ),
            (
                "opcode 0xFF",
                with_opcode(0xFF),
                WireError::UnknownOpcode(0xFF),
            ),
            (
                "bare BTH ACK",
                ack_bytes[..12].to_vec(),
                WireError::Truncated {
                    needed: 20,
                    got: 12,
                },
            ),
            (
                "ACK without its timestamp",
                ack_bytes[..16].to_vec(),
                WireError::Truncated {
                    needed: 20,
                    got: 16,
                },
            ),
            (
                "ACK 19 bytes",
                ack_bytes[..19].to_vec(),
                WireError::Truncated {
                    needed: 20,
                    got: 19,
                },
            ),
            (
                // Longer than an ACK, an ACK syndrome is an ordering layer's SACK, cut short.
                "ACK 21 bytes",
                [&ack_bytes[..], &[0]].concat(),
                WireError::Truncated {
                    needed: 24,
                    got: 21,
                },
            ),
            (
                "SACK 25 bytes",
                [&ack_bytes[..], &[0; 5]].concat(),
                WireError::TrailingBytes {
                    expected: 24,
                    got: 25,
                },
            ),
            (
                "NACK 20 bytes",
                nack_bytes[..20].to_vec(),
                WireError::Truncated {
                    needed: 24,
                    got: 20,
                },
            ),
            (
                "NACK 23 bytes",
                nack_bytes[..23].to_vec(),
                WireError::Truncated {
                    needed: 24,
                    got: 23,
                },
            ),
            (
                "NACK 25 bytes",
                [&nack_bytes[..], &[0]].concat(),
                WireError::TrailingBytes {
                    expected: 24,
                    got: 25,
                },
            ),
            (
                "data without its timestamp",
                with_opcode(0x0A)[..14].to_vec(),
                WireError::Truncated {
                    needed: 16,
                    got: 14,
                },
            ),
            (
                "CNP 27 bytes",
                cnp_bytes[..27].to_vec(),
                WireError::Truncated {
                    needed: 28,
                    got: 27,
                },
            ),
            (
                "CNP 29 bytes",
                [&cnp_bytes[..], &[0]].concat(),
                WireError::TrailingBytes {
                    expected: 28,
                    got: 29,
                },
            ),
            ("RNR NAK", with_syndrome(0x20), WireError::BadSyndrome(0x20)),
            (
                "NAK invalid request",
                with_syndrome(0x61),
                WireError::BadSyndrome(0x61),
            ),
            (
                "reserved syndrome",
                with_syndrome(0xC0),
                WireError::BadSyndrome(0xC0),
            ),
            (
                "NAK remote op error",
                with_syndrome(0x63),
                WireError::BadSyndrome(0x63),
            ),
            (
                "syndrome 0xFF",
                with_syndrome(0xFF),
                WireError::BadSyndrome(0xFF),
            ),
            (
                "payload 4097 bytes",
                long_payload,
                WireError::PayloadTooLong {
                    len: 4097,
                    max: 4096,
                },
            ),
            (
                "payload 70000 bytes",
                huge_payload,
                WireError::PayloadTooLong {
                    len: 70_000,
                    max: 4096,
                },
            ),
        ];
        for (name, bytes, expected) in cases {
            assert_eq!(Packet::parse(&bytes), Err(expected), "{name}");
        }
    }

    #[test]
    fn emit_rejects_short_buffers_and_long_payloads() {
        for p in [data(100, true, false, false, Ecn::Ect0), ack(), nack()] {
            let needed = p.buffer_len();
            for got in [0, 1, 11, 12, needed - 1] {
                let mut buf = vec![0xEE; got];
                assert_eq!(
                    p.emit(&mut buf),
                    Err(WireError::BufferTooSmall { needed, got })
                );
                assert!(
                    buf.iter().all(|&b| b == 0xEE),
                    "emit wrote into a short buffer"
                );
            }
            // A longer buffer is fine, and its tail is left alone.
            let mut buf = vec![0xEE; needed + 3];
            assert_eq!(p.emit(&mut buf), Ok(needed));
            assert_eq!(&buf[needed..], &[0xEE; 3]);
            assert_eq!(Packet::parse(&buf[..needed]), Ok(p));
        }
        let too_long = data(4097, true, true, false, Ecn::Ect0);
        assert_eq!(too_long.buffer_len(), 16 + 4097);
        let mut buf = vec![0; 8192];
        assert_eq!(
            too_long.emit(&mut buf),
            Err(WireError::PayloadTooLong {
                len: 4097,
                max: 4096
            })
        );
    }

    #[test]
    fn views_read_and_write_every_field() {
        let mut buf = [0u8; BTH_LEN + 2];
        let mut bth = Bth::new_checked(&mut buf[..]).expect("long enough");
        bth.set_opcode(Opcode::WriteMiddle);
        bth.set_solicited_event(true);
        bth.set_mig_req(true);
        bth.set_pad_count(3);
        bth.set_tver(0xF);
        bth.set_p_key(0x8001);
        bth.set_fecn(true);
        bth.set_becn(true);
        bth.set_ecn(Ecn::Ect1);
        bth.set_dest_qp(Qpn::new(0xFF_FFFF));
        bth.set_ack_req(true);
        bth.set_retransmission(true);
        bth.set_psn(Psn::MAX);
        bth.payload_mut().copy_from_slice(&[1, 2]);
        assert_eq!(bth.opcode(), Opcode::WriteMiddle);
        assert!(bth.solicited_event() && bth.mig_req() && bth.fecn() && bth.becn());
        assert_eq!((bth.pad_count(), bth.tver(), bth.p_key()), (3, 0xF, 0x8001));
        assert_eq!(bth.ecn(), Ecn::Ect1);
        assert_eq!(bth.dest_qp(), Qpn::new(0xFF_FFFF));
        assert!(bth.ack_req() && bth.retransmission());
        assert_eq!(bth.psn(), Psn::MAX);
        assert_eq!(bth.payload(), &[1, 2]);
        // Clearing one bit leaves its neighbours alone.
        bth.set_solicited_event(false);
        bth.set_becn(false);
        bth.set_retransmission(false);
        bth.set_pad_count(0);
        assert!(!bth.solicited_event() && bth.mig_req() && bth.tver() == 0xF);
        assert!(bth.fecn() && !bth.becn() && bth.ecn() == Ecn::Ect1);
        assert!(bth.ack_req() && !bth.retransmission());
        assert_eq!(bth.into_inner()[..4], [0x07, 0x4F, 0x80, 0x01]);

        let mut buf = [0u8; AETH_LEN + SACK_EXT_LEN];
        let mut aeth = Aeth::new_checked(&mut buf[..]).expect("long enough");
        aeth.set_syndrome(SYNDROME_NAK_PSN_SEQUENCE_ERROR);
        aeth.set_msn(0xFFFF_FFFF);
        let mut sack = SackExt::new_checked(aeth.payload_mut()).expect("long enough");
        sack.set_reserved(9);
        sack.set_sack_psn(Psn::new(0x12_3456));
        assert_eq!((sack.reserved(), sack.sack_psn()), (9, Psn::new(0x12_3456)));
        assert_eq!((aeth.syndrome(), aeth.msn()), (0x60, 0xFF_FFFF));
        assert_eq!(buf, [0x60, 0xFF, 0xFF, 0xFF, 9, 0x12, 0x34, 0x56]);
    }

    #[test]
    fn checked_views_reject_short_buffers() {
        assert_eq!(
            Bth::new_checked(&[0u8; 11][..]).map(|_| ()),
            Err(WireError::Truncated {
                needed: 12,
                got: 11
            })
        );
        assert_eq!(
            Aeth::new_checked(&[0u8; 3][..]).map(|_| ()),
            Err(WireError::Truncated { needed: 4, got: 3 })
        );
        assert_eq!(
            SackExt::new_checked(&[][..]).map(|_| ()),
            Err(WireError::Truncated { needed: 4, got: 0 })
        );
    }

    #[test]
    fn opcodes_convert_both_ways() {
        for raw in 0..=u8::MAX {
            assert_eq!(u8::from(Opcode::from(raw)), raw);
        }
        for (first, last) in [(true, false), (false, false), (false, true), (true, true)] {
            assert_eq!(
                Opcode::write(first, last).write_position(),
                Some((first, last))
            );
        }
        assert_eq!(Opcode::Acknowledge.write_position(), None);
    }

    #[test]
    fn errors_say_what_was_wrong() {
        assert_eq!(
            WireError::Truncated {
                needed: 16,
                got: 15
            }
            .to_string(),
            "truncated packet: needed 16 bytes, got 15"
        );
        assert_eq!(
            WireError::UnknownOpcode(4).to_string(),
            "unknown BTH opcode 0x04"
        );
        assert_eq!(
            WireError::BadSyndrome(0x61).to_string(),
            "unsupported AETH syndrome 0x61"
        );
    }

    fn arb_ecn() -> impl Strategy<Value = Ecn> {
        (0u8..4).prop_map(Ecn::from_bits)
    }

    fn arb_kind() -> impl Strategy<Value = PacketKind> {
        prop_oneof![
            (
                0..=MAX_PAYLOAD as u16,
                any::<bool>(),
                any::<bool>(),
                any::<bool>(),
                arb_ecn(),
                any::<u32>(),
            )
                .prop_map(|(payload_len, first, last, retransmission, ecn, ts)| {
                    PacketKind::Data {
                        payload_len,
                        first,
                        last,
                        retransmission,
                        ecn,
                        ts,
                        entropy: 0,
                    }
                }),
            (0..PSN_SPACE, arb_echo()).prop_map(|(msn, echo)| PacketKind::Ack { msn, echo }),
            (0..PSN_SPACE, arb_echo()).prop_map(|(p, echo)| PacketKind::Sack {
                sacked: Psn::new(p),
                echo
            }),
            (0..PSN_SPACE, arb_echo()).prop_map(|(p, echo)| PacketKind::DropNack {
                dropped: Psn::new(p),
                echo
            }),
            (0..PSN_SPACE, 0..PSN_SPACE, arb_echo()).prop_map(|(msn, sack, echo)| {
                PacketKind::Nack {
                    msn,
                    sack: Psn::new(sack),
                    echo,
                }
            }),
            Just(PacketKind::Cnp),
        ]
    }

    fn arb_echo() -> impl Strategy<Value = Echo> {
        (any::<u32>(), any::<bool>()).prop_map(|(ts, ece)| Echo { ts, ece })
    }

    fn arb_packet() -> impl Strategy<Value = Packet> {
        (0u32..1 << 24, 0..PSN_SPACE, arb_kind()).prop_map(|(qpn, psn, kind)| Packet {
            dest_qp: Qpn::new(qpn),
            psn: Psn::new(psn),
            kind,
        })
    }

    /// Whatever `parse` accepts must re-encode to the same length and parse back the same, so a
    /// fuzzed success is also a consistent one.
    fn check_parse(bytes: &[u8]) -> Result<(), TestCaseError> {
        if let Ok(p) = Packet::parse(bytes) {
            prop_assert_eq!(p.buffer_len(), bytes.len());
            let mut buf = vec![0; bytes.len()];
            prop_assert_eq!(p.emit(&mut buf), Ok(bytes.len()));
            prop_assert_eq!(Packet::parse(&buf), Ok(p));
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
            check_parse(&bytes)?;
        }

        #[test]
        fn parse_never_panics_past_the_opcode(
            opcode in prop::sample::select(vec![0x06u8, 0x07, 0x08, 0x0A, 0x11]),
            rest in proptest::collection::vec(any::<u8>(), 0..2000),
        ) {
            let bytes = [&[opcode][..], &rest].concat();
            check_parse(&bytes)?;
        }

        #[test]
        fn parse_never_panics_past_the_syndrome(
            header in proptest::collection::vec(any::<u8>(), 11),
            syndrome in prop_oneof![
                Just(SYNDROME_ACK), Just(SYNDROME_NAK_PSN_SEQUENCE_ERROR), any::<u8>()
            ],
            rest in proptest::collection::vec(any::<u8>(), 0..12),
        ) {
            let bytes = [&[0x11][..], &header, &[syndrome], &rest].concat();
            check_parse(&bytes)?;
        }

        #[test]
        fn round_trip(p in arb_packet()) {
            let mut buf = vec![0; p.buffer_len()];
            prop_assert_eq!(p.emit(&mut buf), Ok(p.buffer_len()));
            prop_assert_eq!(Packet::parse(&buf), Ok(p));
        }

        #[test]
        fn emit_never_panics(p in arb_packet(), len in 0usize..4200) {
            let mut buf = vec![0; len];
            let expected = if len >= p.buffer_len() {
                Ok(p.buffer_len())
            } else {
                Err(WireError::BufferTooSmall { needed: p.buffer_len(), got: len })
            };
            prop_assert_eq!(p.emit(&mut buf), expected);
        }
    }
}
