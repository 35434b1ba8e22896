//! Every packet in the network, in one slab, threaded into FIFOs by index.
//!
//! A packet is written once, when its NIC sends or queues it, and stays in its slot until it
//! reaches its destination host or is dropped. NIC control queues, links and switch queues hold
//! only its index: a [`Fifo`] is a (head, tail) pair, and the link to the next packet lives in
//! the slot itself, since a packet is in at most one queue or link at a time (htsim's packet
//! pool). So a hop moves a 4-byte index, not the 40-byte packet, nothing is allocated once the
//! slab has grown to the most packets in flight at once, and freed slots are reused last-in
//! first-out so the packets in flight stay in few cache lines.

use irn_core::Time;

use crate::packet::SimPacket;
use crate::topology::MAX_SWITCH_PORTS;

/// No packet: the end of a list.
const NIL: u32 = u32::MAX;

/// A packet's route cursor before its first switch has chosen a path.
pub const UNROUTED: u32 = u32::MAX;

/// A packet's slot in [`Packets`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PacketId(u32);

impl PacketId {
    /// Its slot's index: side tables kept beside the slab (ConWeave's) are indexed by it.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A FIFO of packets in a [`Packets`] slab; empty by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fifo {
    head: u32,
    tail: u32,
}

impl Default for Fifo {
    fn default() -> Self {
        Fifo {
            head: NIL,
            tail: NIL,
        }
    }
}

impl Fifo {
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }
}

/// A FIFO of packets held by its tail alone, whose link points back to the head: half a
/// [`Fifo`], for queues kept per pair of ports (an input-queued switch's `voq[input][output]`,
/// 262,144 of them on a 512-port switch, nearly all empty at any time), at the price of reading
/// the tail's slot to find the head. Empty by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ring {
    tail: u32,
}

impl Default for Ring {
    fn default() -> Self {
        Ring { tail: NIL }
    }
}

/// One cache line: a packet touches one line per hop, never two.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct Slot {
    pkt: SimPacket,
    /// On a link: when the packet behind it on the link arrives, in picoseconds. Written when
    /// that packet is sent, while this one is still hot in cache, so the link's next arrival is
    /// scheduled without touching the next packet.
    ///
    /// In an SRPT switch queue: the packet's rank (its flow's remaining bytes). A packet is
    /// never on a link and in a switch queue at once, so the two uses share these bytes; a
    /// field of its own would cost every packet of every FIFO run a store when it is made.
    word: u64,
    /// The next packet of its FIFO, or the next free slot.
    next: u32,
    /// Under source routing, the cursor of its next egress port in the topology's paths
    /// (`Topology::route_hop`); `UNROUTED` until its first switch picks a path.
    route: u32,
    /// In a switch queue: the local input port it came in on (buffers are accounted per input).
    input: u16,
    /// Times DIBS has deflected it (bounded by the TTL).
    deflected: u8,
    /// What ConWeave's side table holds for it (`crate::sim::conweaving`): 0, nothing. Reset
    /// with the slot, so a reused slot never inherits a freed packet's entry.
    conweave: u8,
    /// Its flow is traced (`--trace-flow`): each hop checks this byte of a line it reads
    /// anyway, and only a traced packet leaves the packet path for the trace's cold code.
    traced: bool,
}

const _: () = assert!(std::mem::size_of::<Slot>() == 64);

/// The slab of packets in flight.
#[derive(Debug)]
pub struct Packets {
    slots: Vec<Slot>,
    /// Head of the list of free slots.
    free: u32,
}

impl Default for Packets {
    fn default() -> Self {
        Packets {
            slots: Vec::new(),
            free: NIL,
        }
    }
}

impl Packets {
    /// Stores a new packet, of a `traced` flow or not.
    #[inline]
    pub fn alloc(&mut self, pkt: SimPacket, traced: bool) -> PacketId {
        let slot = Slot {
            pkt,
            word: 0,
            next: NIL,
            route: UNROUTED,
            input: 0,
            deflected: 0,
            conweave: 0,
            traced,
        };
        if self.free != NIL {
            let i = self.free;
            self.free = self.slots[i as usize].next;
            self.slots[i as usize] = slot;
            PacketId(i)
        } else {
            self.slots.push(slot);
            PacketId((self.slots.len() - 1) as u32)
        }
    }

    /// Removes a packet that left the network (delivered or dropped), returning it.
    #[inline]
    pub fn free(&mut self, id: PacketId) -> SimPacket {
        let slot = &mut self.slots[id.0 as usize];
        slot.next = self.free;
        self.free = id.0;
        slot.pkt
    }

    /// Packet `id`'s route cursor: [`UNROUTED`] until a switch sets it.
    #[inline(always)]
    pub fn route(&self, id: PacketId) -> u32 {
        self.slots[id.0 as usize].route
    }

    #[inline(always)]
    pub fn set_route(&mut self, id: PacketId, cursor: u32) {
        self.slots[id.0 as usize].route = cursor;
    }

    /// Times packet `id` has been deflected.
    #[inline]
    pub fn deflected(&self, id: PacketId) -> u8 {
        self.slots[id.0 as usize].deflected
    }

    #[inline]
    pub fn set_deflected(&mut self, id: PacketId, times: u8) {
        self.slots[id.0 as usize].deflected = times;
    }

    /// Whether packet `id` belongs to a traced flow.
    #[inline(always)]
    pub fn traced(&self, id: PacketId) -> bool {
        self.slots[id.0 as usize].traced
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &SimPacket {
        &self.slots[id.0 as usize].pkt
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut SimPacket {
        &mut self.slots[id.0 as usize].pkt
    }

    /// Asks the CPU to bring packet `id`'s slot into cache: it will be read soon.
    #[inline(always)]
    pub fn prefetch(&self, id: PacketId) {
        if let Some(slot) = self.slots.get(id.0 as usize) {
            crate::prefetch::prefetch(slot);
        }
    }

    /// [`prefetch`](Self::prefetch)es the front of `q`, if any, without a branch on whether
    /// there is one.
    #[inline(always)]
    pub fn prefetch_front(&self, q: &Fifo) {
        // An empty FIFO's NIL head is clamped to the last slot, a harmless hint.
        let last = self.slots.len().saturating_sub(1) as u32;
        self.prefetch(PacketId(q.head.min(last)));
    }

    /// Appends packet `id`, which arrives at `arrives`, to the link `q`.
    #[inline]
    pub fn push_link(&mut self, q: &mut Fifo, id: PacketId, arrives: Time) {
        if q.tail != NIL {
            self.slots[q.tail as usize].word = arrives.as_ps();
        }
        self.push(q, id);
    }

    /// Removes the packet at the front of link `q` (it arrived), returning it and when the next
    /// one arrives, if there is one.
    #[inline]
    pub fn pop_link(&mut self, q: &mut Fifo) -> Option<(PacketId, Option<Time>)> {
        let id = self.pop(q)?;
        let next = (!q.is_empty()).then(|| Time::from_ps(self.slots[id.0 as usize].word));
        Some((id, next))
    }

    /// The local input port the packet came in on, in a switch queue.
    #[inline]
    pub fn input(&self, id: PacketId) -> usize {
        usize::from(self.slots[id.0 as usize].input)
    }

    #[inline]
    pub fn set_input(&mut self, id: PacketId, input: usize) {
        debug_assert!(
            input < MAX_SWITCH_PORTS,
            "switches have at most {MAX_SWITCH_PORTS} ports"
        );
        self.slots[id.0 as usize].input = input as u16;
    }

    /// The rank an SRPT switch queue gave packet `id` (see `crate::switch::srpt`).
    #[inline]
    pub fn rank(&self, id: PacketId) -> u64 {
        self.slots[id.0 as usize].word
    }

    /// Ranks packet `id`, which is joining an SRPT switch queue.
    #[inline]
    pub fn set_rank(&mut self, id: PacketId, rank: u64) {
        self.slots[id.0 as usize].word = rank;
    }

    /// What ConWeave's side table holds for packet `id` (0: nothing).
    #[inline]
    pub fn conweave(&self, id: PacketId) -> u8 {
        self.slots[id.0 as usize].conweave
    }

    /// Marks packet `id` for ConWeave's side table.
    #[inline]
    pub fn set_conweave(&mut self, id: PacketId, mark: u8) {
        self.slots[id.0 as usize].conweave = mark;
    }

    /// The packet after `id` in its FIFO, if any.
    #[inline]
    pub fn next(&self, id: PacketId) -> Option<PacketId> {
        let next = self.slots[id.0 as usize].next;
        (next != NIL).then_some(PacketId(next))
    }

    /// Removes the run of packets `first..=last` from `q`, where it follows `prev` (`None`: it
    /// is the front); the packets stay in the slab, still linked to each other. An SRPT queue
    /// reorders and evicts from its middle.
    pub fn unlink_run(&mut self, q: &mut Fifo, prev: Option<PacketId>, run: (PacketId, PacketId)) {
        let (first, last) = run;
        let next = self.slots[last.0 as usize].next;
        match prev {
            None => {
                debug_assert_eq!(q.head, first.0);
                q.head = next;
            }
            Some(prev) => {
                debug_assert_eq!(self.slots[prev.0 as usize].next, first.0);
                self.slots[prev.0 as usize].next = next;
            }
        }
        if q.tail == last.0 {
            q.tail = prev.map_or(NIL, |p| p.0);
        }
    }

    /// Inserts the linked run of packets `first..=last` (in no FIFO) into `q` after `prev`
    /// (`None`: at the front).
    pub fn insert_run(&mut self, q: &mut Fifo, prev: Option<PacketId>, run: (PacketId, PacketId)) {
        let (first, last) = run;
        let next = match prev {
            None => std::mem::replace(&mut q.head, first.0),
            Some(prev) => std::mem::replace(&mut self.slots[prev.0 as usize].next, first.0),
        };
        self.slots[last.0 as usize].next = next;
        if next == NIL {
            q.tail = last.0;
        }
    }

    /// Appends packet `id` (in no other FIFO) to `q`.
    #[inline]
    pub fn push(&mut self, q: &mut Fifo, id: PacketId) {
        self.slots[id.0 as usize].next = NIL;
        if q.tail == NIL {
            q.head = id.0;
        } else {
            self.slots[q.tail as usize].next = id.0;
        }
        q.tail = id.0;
    }

    /// The front of `q`.
    #[inline]
    pub fn front(&self, q: &Fifo) -> Option<PacketId> {
        (q.head != NIL).then_some(PacketId(q.head))
    }

    /// Removes and returns the front of `q`; the packet stays in the slab.
    #[inline]
    pub fn pop(&mut self, q: &mut Fifo) -> Option<PacketId> {
        if q.head == NIL {
            return None;
        }
        let i = q.head;
        q.head = self.slots[i as usize].next;
        if q.head == NIL {
            q.tail = NIL;
        }
        Some(PacketId(i))
    }

    /// Appends packet `id` to ring `q`.
    #[inline]
    pub fn push_ring(&mut self, q: &mut Ring, id: PacketId) {
        let head = match q.tail {
            NIL => id.0,
            tail => std::mem::replace(&mut self.slots[tail as usize].next, id.0),
        };
        self.slots[id.0 as usize].next = head;
        q.tail = id.0;
    }

    /// The front of ring `q`.
    #[inline]
    pub fn front_ring(&self, q: &Ring) -> Option<PacketId> {
        (q.tail != NIL).then(|| PacketId(self.slots[q.tail as usize].next))
    }

    /// Removes and returns the front of ring `q`; the packet stays in the slab.
    #[inline]
    pub fn pop_ring(&mut self, q: &mut Ring) -> Option<PacketId> {
        let head = self.front_ring(q)?;
        if head.0 == q.tail {
            q.tail = NIL;
        } else {
            self.slots[q.tail as usize].next = self.slots[head.0 as usize].next;
        }
        Some(head)
    }

    /// Packets stored (in flight or queued).
    #[cfg(test)]
    fn live(&self) -> usize {
        let mut free = 0;
        let mut i = self.free;
        while i != NIL {
            free += 1;
            i = self.slots[i as usize].next;
        }
        self.slots.len() - free
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::test_packet;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    proptest! {
        /// Rings behave like `VecDeque`s too, among FIFOs over the same slab.
        #[test]
        fn rings_match_vecdeques(ops in prop::collection::vec((0usize..4, any::<bool>(), any::<u16>()), 0..300)) {
            let mut packets = Packets::default();
            let mut rings = [Ring::default(); 3];
            let mut fifo = Fifo::default();
            let mut reference: [VecDeque<u16>; 4] = Default::default();
            for (q, push, item) in ops {
                if push {
                    let id = packets.alloc(test_packet(u32::from(item), 100), false);
                    match rings.get_mut(q) {
                        Some(ring) => packets.push_ring(ring, id),
                        None => packets.push(&mut fifo, id),
                    }
                    reference[q].push_back(item);
                } else {
                    let id = match rings.get_mut(q) {
                        Some(ring) => packets.pop_ring(ring),
                        None => packets.pop(&mut fifo),
                    };
                    let got = id.map(|id| packets.free(id).flow.0);
                    prop_assert_eq!(got, reference[q].pop_front().map(u32::from));
                }
                let front = match rings.get(q) {
                    Some(ring) => packets.front_ring(ring),
                    None => packets.front(&fifo),
                };
                prop_assert_eq!(front.map(|id| packets.get(id).flow.0), reference[q].front().map(|&i| u32::from(i)));
            }
            prop_assert_eq!(packets.live(), reference.iter().map(VecDeque::len).sum::<usize>());
        }

        /// Many FIFOs over one slab behave like as many `VecDeque`s, and the slab grows only to
        /// the most packets held at once.
        #[test]
        fn matches_vecdeques(ops in prop::collection::vec((0usize..4, any::<bool>(), any::<u16>()), 0..300)) {
            let mut packets = Packets::default();
            let mut fifos = [Fifo::default(); 4];
            let mut reference: [VecDeque<u16>; 4] = Default::default();
            let mut peak = 0;
            for (q, push, item) in ops {
                if push {
                    let id = packets.alloc(test_packet(u32::from(item), 100), false);
                    packets.push(&mut fifos[q], id);
                    reference[q].push_back(item);
                } else {
                    let got = packets.pop(&mut fifos[q]).map(|id| packets.free(id).flow.0);
                    prop_assert_eq!(got, reference[q].pop_front().map(u32::from));
                }
                prop_assert_eq!(fifos[q].is_empty(), reference[q].is_empty());
                let front = packets.front(&fifos[q]).map(|id| packets.get(id).flow.0);
                prop_assert_eq!(front, reference[q].front().map(|&i| u32::from(i)));
                let held = reference.iter().map(VecDeque::len).sum::<usize>();
                prop_assert_eq!(packets.live(), held);
                peak = peak.max(held);
            }
            prop_assert_eq!(packets.slots.len(), peak);
        }
    }

    #[test]
    fn a_packet_moves_between_fifos_without_copying_its_slot() {
        let mut packets = Packets::default();
        let (mut link, mut queue) = (Fifo::default(), Fifo::default());
        let id = packets.alloc(test_packet(7, 100), false);
        let behind = packets.alloc(test_packet(9, 100), false);
        packets.push_link(&mut link, id, Time::from_ps(42));
        packets.push_link(&mut link, behind, Time::from_ps(50));
        assert_eq!(
            packets.pop_link(&mut link),
            Some((id, Some(Time::from_ps(50)))),
            "the head knows when the packet behind it arrives"
        );
        assert_eq!(packets.pop_link(&mut link), Some((behind, None)));
        assert_eq!(packets.free(behind).flow.0, 9);
        packets.set_input(id, 3);
        packets.push(&mut queue, id);
        assert!(link.is_empty());
        assert_eq!(packets.pop(&mut queue), Some(id));
        assert_eq!(packets.input(id), 3);
        assert_eq!(packets.free(id).flow.0, 7);
        assert_eq!(
            packets.alloc(test_packet(8, 100), false),
            id,
            "freed slots are reused"
        );
    }
}
