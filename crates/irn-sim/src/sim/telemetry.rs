//! In-band network telemetry (`irn_core::cc::int`) on the packet path, for runs whose controller
//! asks for it (HPCC): each switch egress appends a record to the data packet it starts sending,
//! the receiver's ACK echoes the records, and the sender's controller reads them.
//!
//! Records live beside the packet slab, in a table indexed by packet slot with room for the
//! topology's longest path: a packet is in one slot from its NIC to its destination, so its
//! records need no pointer and no allocation of their own. The table grows with the slab (to
//! the most packets in flight at once), never per packet. A slot's hop count is reset when a
//! data packet is made in it and set when an ACK is, so a slot reused after a drop never hands
//! on records.
//!
//! Every hook runs only when the trace type compiles INT in ([`Trace::INT`]) and the run has a
//! table: runs without INT carry none of this code.

use irn_core::cc::int::{self, IntHop};

use super::trace::Trace;
use super::Simulation;
use crate::ids::PortId;
use crate::packets::PacketId;
use crate::port::OwnerKind;
use crate::switch::Queues;

/// Every packet's INT records, by slot.
#[derive(Debug)]
pub(super) struct IntTable {
    /// Records a packet can hold: the most switches on any path.
    max_hops: usize,
    /// `hops[slot * max_hops + i]`: hop `i`'s record of the packet in `slot`.
    hops: Vec<IntHop>,
    /// Records the packet in each slot carries.
    counts: Vec<u8>,
    /// The records of the packet that last reached a host, taken before its slot was freed:
    /// a data packet's for the ACK it triggers, an ACK's for its sender.
    arrived: [IntHop; int::MAX_INT_HOPS],
    arrived_count: usize,
}

impl IntTable {
    /// Slots the table has room for before its first growth.
    const INITIAL_SLOTS: usize = 1024;

    /// A table for paths of at most `max_hops` switches (at most [`int::MAX_INT_HOPS`]: the
    /// scenario refuses longer paths).
    pub(super) fn new(max_hops: usize) -> IntTable {
        let max_hops = max_hops.clamp(1, int::MAX_INT_HOPS);
        IntTable {
            max_hops,
            hops: vec![IntHop::ZERO; Self::INITIAL_SLOTS * max_hops],
            counts: vec![0; Self::INITIAL_SLOTS],
            arrived: [IntHop::ZERO; int::MAX_INT_HOPS],
            arrived_count: 0,
        }
    }

    /// Makes room for slot `slot`, doubling: the slab grows the same way.
    fn reach(&mut self, slot: usize) {
        if slot >= self.counts.len() {
            let slots = (slot + 1).next_power_of_two();
            self.counts.resize(slots, 0);
            self.hops.resize(slots * self.max_hops, IntHop::ZERO);
        }
    }

    /// A data packet was made in `slot`: it carries no record yet.
    pub(super) fn start(&mut self, slot: usize) {
        self.reach(slot);
        self.counts[slot] = 0;
    }

    /// Appends `hop` to the packet in `slot`; false (nothing written) when it already holds
    /// a record per switch of the longest path, which only a path rerouted around failed
    /// links can exceed.
    pub(super) fn push(&mut self, slot: usize, hop: IntHop) -> bool {
        self.reach(slot);
        let n = usize::from(self.counts[slot]);
        if n >= self.max_hops {
            return false;
        }
        self.hops[slot * self.max_hops + n] = hop;
        self.counts[slot] += 1;
        true
    }

    /// The records of the packet in `slot`.
    pub(super) fn records(&self, slot: usize) -> &[IntHop] {
        let n = self.counts.get(slot).map_or(0, |&n| usize::from(n));
        &self.hops[slot * self.max_hops..][..n]
    }

    /// Keeps the records of the packet in `slot`, which reached its host and is about to be
    /// freed.
    pub(super) fn take(&mut self, slot: usize) {
        let n = self.records(slot).len();
        self.arrived[..n].copy_from_slice(&self.hops[slot * self.max_hops..][..n]);
        self.arrived_count = n;
    }

    /// The records [`take`](Self::take) kept.
    pub(super) fn arrived(&self) -> &[IntHop] {
        &self.arrived[..self.arrived_count]
    }

    /// The reply in `slot` echoes the records [`take`](Self::take) kept; returns the bytes they
    /// add to it on the wire.
    pub(super) fn echo(&mut self, slot: usize) -> u32 {
        self.reach(slot);
        let n = self.arrived_count;
        self.hops[slot * self.max_hops..][..n].copy_from_slice(&self.arrived[..n]);
        self.counts[slot] = n as u8;
        int::wire_bytes(n)
    }
}

impl<T: Trace> Simulation<'_, T> {
    /// Data packet `id` leaves its NIC: it starts with no record.
    #[inline(always)]
    pub(super) fn int_start(&mut self, id: PacketId) {
        if let Some(table) = self.int.as_deref_mut() {
            table.start(id.index());
        }
    }

    /// Packet `id` starts its transmission on port `p`: a data packet leaving a switch gets
    /// the egress's record, and grows by its bytes on the wire.
    #[inline(always)]
    pub(super) fn int_egress(&mut self, p: PortId, id: PacketId) {
        let Some(table) = self.int.as_deref_mut() else {
            return;
        };
        let port = &self.ports[p.index()];
        let OwnerKind::Switch(s) = port.owner.kind() else {
            return;
        };
        if !self.packets.get(id).is_data() {
            return;
        }
        let hop = IntHop {
            qlen_bytes: self.switches[s].queued_bytes(usize::from(port.local)),
            tx_bytes: port.bytes_sent,
            ts: self.now,
            rate: self.extra[p.index()].rate,
        };
        if table.push(id.index(), hop) {
            self.packets.get_mut(id).wire_bytes += int::INT_HOP_BYTES;
        }
    }

    /// Packet `id` reached a host and is about to be freed: its records are kept for the ACK
    /// it triggers, or for its sender.
    #[inline(always)]
    pub(super) fn int_arrive(&mut self, id: PacketId) {
        if let Some(table) = self.int.as_deref_mut() {
            table.take(id.index());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use irn_core::{Bandwidth, Time};

    fn hop(q: u64) -> IntHop {
        IntHop {
            qlen_bytes: q,
            tx_bytes: 10 * q,
            ts: Time::from_ps(q),
            rate: Bandwidth::from_gbps(100),
        }
    }

    /// A packet gathers one record per switch up to the longest path, an ACK echoes them, and
    /// a data packet made in a reused slot starts with none.
    #[test]
    fn records_follow_the_packet_and_its_ack() {
        let mut t = IntTable::new(3);
        t.start(5);
        assert!(t.push(5, hop(1)) && t.push(5, hop(2)) && t.push(5, hop(3)));
        assert!(!t.push(5, hop(4)), "no room past the longest path");
        assert_eq!(t.records(5), &[hop(1), hop(2), hop(3)]);
        t.take(5);
        // The ACK reuses the slot the data packet was freed from, as the slab does.
        assert_eq!(t.echo(5), 2 + 3 * 8);
        assert_eq!(t.records(5), &[hop(1), hop(2), hop(3)]);
        t.take(5);
        assert_eq!(t.arrived(), &[hop(1), hop(2), hop(3)]);
        t.start(5);
        assert!(t.records(5).is_empty());
        // Far slots grow the table; it never shrinks.
        t.start(5000);
        assert!(t.push(5000, hop(7)));
        assert_eq!(t.records(5000), &[hop(7)]);
        assert!(t.counts.len() >= 5001 && t.hops.len() == t.counts.len() * 3);
    }
}
