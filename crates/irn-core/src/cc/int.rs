//! In-band network telemetry (INT): what each switch on a data packet's path writes into it when
//! the packet starts leaving the switch, and what the receiver echoes back in the ACK, for the
//! controllers that steer by it (HPCC, PowerTCP).
//!
//! On the wire, as in HPCC's ns-3 model (`int-header.h`): a 2-byte header (the hop count) that
//! the sending NIC adds to every data packet, and an 8-byte record per hop (ns-3 packs the four
//! fields into 64 bits: 24 bits of time, 20 of transmitted bytes in 128-byte units, 17 of queue
//! length in 80-byte units, 3 of rate code). Records here keep the exact values; only their
//! size on the wire is ns-3's. ns-3 reserves room for its 5 records in every packet from the
//! start (42 bytes); here a packet grows by 8 bytes at each switch, as a real INT header does.

use crate::time::{Bandwidth, Time};

/// Bytes of the INT header every data packet of a flow that asks for telemetry carries from its
/// NIC on (the hop count; ns-3's `nhop`).
pub const INT_HEADER_BYTES: u32 = 2;

/// Bytes one hop's record adds to the packet on the wire (ns-3's `IntHop`).
pub const INT_HOP_BYTES: u32 = 8;

/// The most switches a path may cross for its packets to carry every hop's record: a bound on
/// the controllers' per-hop state; scenarios whose topology's paths are longer are refused.
pub const MAX_INT_HOPS: usize = 16;

/// One switch egress's record, written when the packet starts its transmission there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntHop {
    /// Bytes queued at that egress behind the packet, once it was dequeued.
    pub qlen_bytes: u64,
    /// Bytes the egress port had transmitted before this packet, since the run began.
    pub tx_bytes: u64,
    /// When the packet started its transmission.
    pub ts: Time,
    /// The egress link's rate.
    pub rate: Bandwidth,
}

impl IntHop {
    /// No record yet: what a controller's per-hop state starts from.
    pub const ZERO: IntHop = IntHop {
        qlen_bytes: 0,
        tx_bytes: 0,
        ts: Time::ZERO,
        rate: Bandwidth::from_bps(0),
    };
}

/// The bytes INT adds to a packet carrying `hops` records (header included).
pub const fn wire_bytes(hops: usize) -> u32 {
    INT_HEADER_BYTES + INT_HOP_BYTES * hops as u32
}
