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

/// A flow's path as an INT controller sees it: L, the records the previous ACK echoed, per
/// hop, and the records the ACK being handled echoes. HPCC and PowerTCP both compare each
/// hop's new record with its L.
#[derive(Debug, Clone)]
pub struct EchoedPath {
    last: [IntHop; MAX_INT_HOPS],
    echoed: [IntHop; MAX_INT_HOPS],
    echoed_len: usize,
}

impl EchoedPath {
    /// No record yet.
    pub const fn new() -> Self {
        EchoedPath {
            last: [IntHop::ZERO; MAX_INT_HOPS],
            echoed: [IntHop::ZERO; MAX_INT_HOPS],
            echoed_len: 0,
        }
    }

    /// The records the next ACK echoes, handed over just before it.
    pub fn hand_over(&mut self, hops: &[IntHop]) {
        let n = hops.len().min(MAX_INT_HOPS);
        self.echoed[..n].copy_from_slice(&hops[..n]);
        self.echoed_len = n;
    }

    /// How many records the ACK now handled echoed; the hand-over is used up.
    pub fn take(&mut self) -> usize {
        std::mem::take(&mut self.echoed_len)
    }

    /// The first `n` echoed records become L (the first ACK: nothing to compare yet).
    pub fn remember(&mut self, n: usize) {
        self.last[..n].copy_from_slice(&self.echoed[..n]);
    }

    /// Hop `i`'s new record and its L.
    pub fn hop(&self, i: usize) -> (IntHop, IntHop) {
        (self.echoed[i], self.last[i])
    }

    /// Hop `i`'s new record becomes its L.
    pub fn keep(&mut self, i: usize) {
        self.last[i] = self.echoed[i];
    }
}

impl Default for EchoedPath {
    fn default() -> Self {
        Self::new()
    }
}

/// The bytes INT adds to a packet carrying `hops` records (header included).
pub const fn wire_bytes(hops: usize) -> u32 {
    INT_HEADER_BYTES + INT_HOP_BYTES * hops as u32
}
