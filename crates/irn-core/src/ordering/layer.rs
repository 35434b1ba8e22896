//! The ordering layer between the wire and a transport's receiver: the NIC of Eunomia §3.5 (and
//! §2.1's ideal layer, and the fixed bitmaps of Fig. 17a) under an unchanged RoCE or IRN
//! receiver.
//!
//! A data packet that arrives ahead of the expected one is tracked (its data placed, its arrival
//! remembered) and answered with a SACK, which the sender never takes for loss; once the gap
//! before it fills, the transport's receiver is handed the whole run in order and answers with
//! one cumulative ACK, as Eunomia's receiver does. A packet the layer cannot track — beyond a
//! static bitmap, past the HD bitmap's cap, or with the NIC's ordering memory exhausted — is
//! dropped and answered with a NACK ([`PacketKind::DropNack`]), which starts the sender's own
//! loss recovery. The transport itself sees only in-order packets (and old duplicates, which
//! it re-ACKs), so reordering alone never makes it NACK or rewind.
//!
//! What Eunomia's receiver-side agent does (§3.5), and where it happens here:
//! - **answers**: every reply carries the cumulative acknowledgement (the first PSN not yet in
//!   order) in its PSN field; a SACK also names the packet held, a NACK the packet dropped. An
//!   in-order arrival, or a run the gap's filling releases, gets the transport's own ACK; an old
//!   duplicate is re-ACKed by the transport, a duplicate of a held packet SACKed again.
//! - **completion at Last Seq**: the transport completes a message when its last packet reaches
//!   it, which under the layer is only once every packet before it is in order, so the
//!   completion notification is held exactly as long as §3.5.2 asks, with no state of its own.
//! - **garbage collection** (§3.5.3): once a message's last packet is handed over in order and
//!   nothing is held beyond it, Eunomia's bitmap gives every block and its state record back to
//!   the pool. *Choice:* the paper's connection carries one message; a transport connection here
//!   may carry several back to back, so Last Seq is each message's last packet, and the memory
//!   stays while packets of the next message are already held.
//!
//! Simulation stand-in: the tracked packets themselves are kept here ([`OrderedReceiver`]'s
//! held run) so they can be replayed to the transport, where a NIC has already placed their
//! data; only the bitmap and its state are NIC memory ([`OrderedReceiver::footprint_bytes`]).
//!
//! # What a connection's ordering memory counts
//!
//! The paper's accounting (§5.7 and its memory-utilization experiment, §3.4.2's Table 2), per
//! connection from its start until its receiver completes the message (then it is given back):
//!
//! | kind | bytes |
//! | --- | --- |
//! | static bitmap | the bitmap + 9 B of state (head and last PSN, 4 B each; the head's index, 1 B) |
//! | Eunomia | the 4 B DBA pointer every connection carries, plus, once it faced reordering, its 48 B state record and its blocks |
//! | ideal | *choice:* the static bitmap that would hold what it holds now — 9 B of state plus a bitmap from the expected packet to the furthest one held (nothing while none is) |
//!
//! The ideal layer is unbounded by definition; counting the buffered packets' bytes would
//! measure data, which every kind places in host memory, so it is counted as the bitmap it
//! needs at each instant instead, which is what a static bitmap would have to be to match it.

use std::collections::VecDeque;

use super::config::OrderingConfig;
use super::hd_bitmap::{HdBitmap, Placement, Untracked};
use super::memory::MemoryController;
use crate::packet::{Echo, Ecn, Packet, PacketKind};
use crate::time::{Duration, Time};
use crate::transport::{Completion, Fifo, Receiver, ReceiverStats};

/// Which ordering layer a NIC runs under its transport.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OrderingMode {
    /// None: the transport sees packets in arrival order, as on today's RDMA NICs.
    #[default]
    None,
    /// §2.1's ideal layer: it tracks any number of packets ahead of the expected one, so nothing
    /// is ever dropped for want of room. *Choice:* it answers SACKs as Eunomia does (§2.1 leaves
    /// what it answers open).
    Ideal,
    /// A fixed bitmap of `bits` per connection (Fig. 17a): a packet `bits` or more ahead of the
    /// expected one is dropped and NACKed. Its memory is held for the connection's life.
    Static { bits: u32 },
    /// Eunomia's HD bitmap: blocks from the NIC's [`MemoryController`] as reordering demands, up
    /// to the configuration's cap.
    Eunomia,
}

impl OrderingMode {
    /// Bits Eunomia appends to every data packet (§3.2.1): the connection's first PSN (*Head*,
    /// 32 bits in the paper) and a bit marking its last packet. A [`Packet`] does not carry them
    /// as fields: the layer takes Head from the transport receiver it is built under (both start
    /// at the connection's first PSN), and the last bit is the data packet's `last` flag, which
    /// RDMA's BTH already has. They still cost wire bytes ([`metadata_bytes`](Self::metadata_bytes)).
    pub const METADATA_BITS: u32 = 33;

    /// Bytes the per-packet metadata ([`METADATA_BITS`](Self::METADATA_BITS)) adds to every
    /// data packet, rounded up to whole bytes; none without a layer.
    pub fn metadata_bytes(self) -> u32 {
        match self {
            OrderingMode::None => 0,
            _ => Self::METADATA_BITS.div_ceil(8),
        }
    }
}

/// When the congestion feedback of a data packet the layer takes (holds ahead of a gap, or
/// drops for want of room) is given: its CE mark counted and, with DCQCN, its CNP paced.
///
/// The layer's SACK or NACK echoes the mark at once either way; this is about the CNP, DCQCN's
/// only feedback. About a third of a per-packet balancer's packets arrive out of order, so
/// delayed or lost CNPs fall exactly on the variants an ordering layer is there to help.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Feedback {
    /// On arrival, as a NIC's notification point sees every packet (the default): a held
    /// packet's mark is taken when it comes in, a dropped packet's mark is not lost.
    #[default]
    Arrival,
    /// When the transport's receiver gets the packet: a held packet's CNP waits until the gap
    /// before it fills, and a dropped packet (or its unmarked retransmission) gives none. The
    /// model of a layer that sits wholly in front of the NIC's notification point.
    Delivery,
}

/// How a one-sided WRITE's last packet is kept from reaching the application ahead of the
/// data before it (Eunomia §3.5.2, appendix A.1).
///
/// A WRITE has no completion for the layer to hold back: the remote application reads the data
/// once the last packet (with its synchronisation flag) is placed, so a layer that places
/// packets out of order could expose a message before all of it is there. Without a choice
/// ([`Off`](Self::Off)) every message is treated as a SEND, whose completion the layer already
/// holds until everything is in order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WriteLast {
    /// Messages are SENDs: the completion waits for order, at no cost beyond it.
    #[default]
    Off,
    /// Eunomia's rule: the sender holds each message's last packet until the cumulative ACK
    /// reaches it ([`TransportConfig::hold_last_packet`](crate::TransportConfig)), one round
    /// trip more per message.
    Sender,
    /// Appendix A.1's proposal: a last packet that arrives out of order is kept in host memory
    /// and placed in the application's once everything before it is in order, which takes
    /// `placement_delay` more (a PCIe round trip to read it back and write it again).
    Receiver { placement_delay: Duration },
}

/// Counters of one connection's ordering layer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LayerStats {
    /// Packets tracked ahead of the expected one.
    pub held: u64,
    /// Most packets held at once.
    pub peak_held: u32,
    pub sacks_sent: u64,
    /// Packets dropped (and NACKed) for want of room, for any of the reasons below or beyond
    /// the bitmap's reach (a static bitmap's size, Eunomia's cap).
    pub dropped: u64,
    /// Of `dropped`, refused because the NIC already tracked as many connections as it may
    /// ([`OrderingConfig::max_connections`]) when this one needed a state record.
    pub refused_connections: u64,
    /// Of `dropped`, refused because the NIC's pool had no room for the record or the blocks.
    pub refused_pool: u64,
    /// Arrivals ahead of the expected packet, held or dropped: the reordering the network
    /// caused, which the transport behind the layer never sees.
    pub out_of_order: u64,
    /// The most packets by which an arrival was ahead of the expected one.
    pub max_reorder_distance: u64,
    /// Last packets that arrived out of order and were kept in host memory
    /// ([`WriteLast::Receiver`]).
    pub staged_last: u64,
    /// Most bytes of ordering memory the connection held at once
    /// ([`OrderingLayer::footprint_bytes`]), exact: taken whenever it grows.
    pub peak_bytes: u32,
}

/// The ordering layer of one connection, under the transport [`Receiver`] passed to each call
/// (always the same one). [`OrderedReceiver`] bundles the two.
#[derive(Debug, Clone)]
pub struct OrderingLayer {
    mode: OrderingMode,
    /// `held[i]` is the packet `i + 1` ahead of the expected one, once it has arrived.
    held: VecDeque<Option<Packet>>,
    held_count: u32,
    /// Eunomia's bitmap (its blocks live in the NIC's pool).
    bitmap: Option<HdBitmap>,
    /// The layer's own answers (SACKs, NACKs), and the transport's ACKs and CNPs it passed on.
    control: Fifo<Packet>,
    /// [`WriteLast::Receiver`]'s placement delay; `None` under any other choice.
    staging: Option<Duration>,
    /// The held last packet is in host memory: the message's completion comes `staging` late.
    last_staged: bool,
    /// When a held or dropped packet's CE mark counts.
    feedback: Feedback,
    stats: LayerStats,
    /// The message is complete and the memory given back ([`release`](Self::release)).
    released: bool,
}

impl OrderingLayer {
    /// Bytes a static bitmap needs besides its bits (Eunomia's memory-utilization experiment:
    /// "4 bytes each for the head and last packet and 1 byte for the head index").
    pub const STATIC_STATE_BYTES: u32 = 9;

    /// A layer of kind `mode` under `receiver`; `ordering` sizes Eunomia's bitmap.
    pub fn new(mode: OrderingMode, receiver: &Receiver, ordering: &OrderingConfig) -> Self {
        let bitmap = (mode == OrderingMode::Eunomia)
            .then(|| HdBitmap::new(receiver.expected_psn(), ordering));
        let mut layer = OrderingLayer {
            mode,
            held: VecDeque::new(),
            held_count: 0,
            bitmap,
            control: Fifo::new(),
            staging: None,
            last_staged: false,
            feedback: Feedback::Arrival,
            stats: LayerStats::default(),
            released: false,
        };
        layer.stats.peak_bytes = layer.footprint_bytes();
        layer
    }

    /// The same layer, handling a WRITE's last packet as `write_last` says; only
    /// [`WriteLast::Receiver`] is the layer's business (the sender's hold is the transport's).
    pub fn with_write_last(mut self, write_last: WriteLast) -> Self {
        self.staging = match write_last {
            WriteLast::Receiver { placement_delay } => Some(placement_delay),
            WriteLast::Off | WriteLast::Sender => None,
        };
        self
    }

    /// The same layer, giving a held or dropped packet's congestion feedback as `feedback`
    /// says.
    pub fn with_feedback(mut self, feedback: Feedback) -> Self {
        self.feedback = feedback;
        self
    }

    /// How long after the transport's completion the application may read the message: the
    /// placement delay if its last packet arrived out of order and waited in host memory
    /// ([`WriteLast::Receiver`]), zero otherwise. Clears the mark, so ask once per completion.
    /// A connection carries one WRITE at a time here (the simulator's message flows): the mark
    /// belongs to the message whose completion follows.
    pub fn take_placement_delay(&mut self) -> Duration {
        match self.staging {
            Some(delay) if core::mem::take(&mut self.last_staged) => delay,
            _ => Duration::ZERO,
        }
    }

    pub fn stats(&self) -> &LayerStats {
        &self.stats
    }

    /// Ordering memory this connection holds now, as the module doc counts it; nothing once
    /// released, nor without a layer.
    pub fn footprint_bytes(&self) -> u32 {
        if self.released {
            return 0;
        }
        match self.mode {
            OrderingMode::Static { bits } => bits.div_ceil(8) + Self::STATIC_STATE_BYTES,
            OrderingMode::Eunomia => {
                OrderingConfig::DBA_BYTES
                    + self.bitmap.as_ref().map_or(0, HdBitmap::footprint_bytes)
            }
            OrderingMode::Ideal => {
                // `held` ends at the furthest packet held: that many bits past the expected
                // one's, as a static bitmap of `bits` holds packets less than `bits` ahead.
                let bits = match self.held.len() {
                    0 => 0,
                    furthest => furthest as u32 + 1,
                };
                bits.div_ceil(8) + Self::STATIC_STATE_BYTES
            }
            OrderingMode::None => 0,
        }
    }

    /// The bitmap alone, without its state (Eunomia Fig. 17c counts "the bytes taken by all
    /// bitmaps"): a static bitmap's size, Eunomia's blocks, the ideal layer's smallest bitmap
    /// covering what it holds; nothing once released, nor without a layer.
    pub fn bitmap_bytes(&self) -> u32 {
        if self.released {
            return 0;
        }
        match self.mode {
            OrderingMode::Static { bits } => bits.div_ceil(8),
            OrderingMode::Eunomia => self
                .bitmap
                .as_ref()
                .map_or(0, |b| (b.circular_bits() + b.linear_bits()).div_ceil(8)),
            OrderingMode::Ideal => self.footprint_bytes() - Self::STATIC_STATE_BYTES,
            OrderingMode::None => 0,
        }
    }

    /// The message is complete and the connection's memory given back.
    pub fn is_released(&self) -> bool {
        self.released
    }

    /// Eunomia's bitmap (its Table 1 state: Head, Tail, blocks, reach); `None` under any other
    /// layer.
    pub fn bitmap(&self) -> Option<&HdBitmap> {
        self.bitmap.as_ref()
    }

    /// A packet arrived from the wire for `receiver`. `pool` is the NIC's ordering memory
    /// (Eunomia only).
    pub fn handle_packet(
        &mut self,
        now: Time,
        pkt: &Packet,
        receiver: &mut Receiver,
        pool: Option<&mut MemoryController>,
    ) {
        let PacketKind::Data { ecn, ts, last, .. } = pkt.kind else {
            return receiver.handle_packet(now, pkt);
        };
        if self.mode == OrderingMode::None {
            return receiver.handle_packet(now, pkt);
        }
        let expected = receiver.expected_psn();
        let ahead = match pkt.psn.serial_diff(expected) {
            Some(d) if d > 0 => d as u32,
            Some(0) => return self.deliver_run(now, pkt, receiver, pool),
            // An old duplicate: the transport re-ACKs it.
            _ => return receiver.handle_packet(now, pkt),
        };
        self.stats.out_of_order += 1;
        self.stats.max_reorder_distance = self.stats.max_reorder_distance.max(u64::from(ahead));
        let echo = Echo {
            ts,
            ece: ecn == Ecn::Ce,
        };
        let room = self.room_for(ahead, pkt, pool);
        let kind = if room.is_ok() {
            let i = ahead as usize - 1;
            if self.held.len() <= i {
                self.held.resize(i + 1, None);
            }
            if self.held[i].is_none() {
                self.held[i] = Some(*pkt);
                self.held_count += 1;
                self.stats.held += 1;
                self.stats.peak_held = self.stats.peak_held.max(self.held_count);
                if last && self.staging.is_some() {
                    self.last_staged = true;
                    self.stats.staged_last += 1;
                }
                self.stats.peak_bytes = self.stats.peak_bytes.max(self.footprint_bytes());
            }
            self.stats.sacks_sent += 1;
            PacketKind::Sack {
                sacked: pkt.psn,
                echo,
            }
        } else {
            self.stats.dropped += 1;
            match room {
                Err(Refusal::ConnectionLimit) => self.stats.refused_connections += 1,
                Err(Refusal::Pool) => self.stats.refused_pool += 1,
                Err(Refusal::Reach) | Ok(()) => {}
            }
            PacketKind::DropNack {
                dropped: pkt.psn,
                echo,
            }
        };
        self.control.push(Packet {
            dest_qp: receiver.peer(),
            psn: expected,
            kind,
        });
        if echo.ece && self.feedback == Feedback::Arrival {
            // The CNP follows the SACK or NACK, as a transport's follows its ACK.
            receiver.note_mark(now);
            while let Some(cnp) = receiver.poll_transmit(now) {
                self.control.push(cnp);
            }
        }
    }

    /// Whether a packet `ahead` of the expected one can be tracked, and why not; Eunomia's
    /// bitmap takes the blocks it needs now.
    fn room_for(
        &mut self,
        ahead: u32,
        pkt: &Packet,
        pool: Option<&mut MemoryController>,
    ) -> Result<(), Refusal> {
        match self.mode {
            OrderingMode::None | OrderingMode::Ideal => Ok(()),
            OrderingMode::Static { bits } => (ahead < bits).then_some(()).ok_or(Refusal::Reach),
            OrderingMode::Eunomia => match (&mut self.bitmap, pool) {
                (Some(bitmap), Some(pool)) => match bitmap.insert(pkt.psn, pool) {
                    Ok(_) => Ok(()),
                    Err(Untracked::BeyondCap { .. }) => Err(Refusal::Reach),
                    Err(Untracked::ConnectionLimit { .. }) => Err(Refusal::ConnectionLimit),
                    Err(Untracked::NoMemory(_)) => Err(Refusal::Pool),
                },
                _ => Err(Refusal::Reach),
            },
        }
    }

    /// The expected packet arrived: the transport gets it and the run held behind it, in order.
    /// Only the last of the ACKs it answers with is sent (one ACK per arrival, as Eunomia's
    /// receiver); its CNPs all go. If the run passed a message's last packet and nothing is held
    /// beyond it, Eunomia's bitmap is garbage-collected (§3.5.3).
    fn deliver_run(
        &mut self,
        now: Time,
        pkt: &Packet,
        receiver: &mut Receiver,
        mut pool: Option<&mut MemoryController>,
    ) {
        if let (Some(bitmap), Some(pool)) = (&mut self.bitmap, pool.as_deref_mut()) {
            let placed = bitmap.insert(pkt.psn, pool);
            debug_assert!(
                matches!(placed, Ok(Placement::InOrder { .. })),
                "{placed:?}"
            );
        }
        receiver.handle_packet(now, pkt);
        let mut last_seq_passed = is_last(pkt);
        let mut last_ack = None;
        loop {
            while let Some(reply) = receiver.poll_transmit(now) {
                match reply.kind {
                    PacketKind::Cnp => self.control.push(reply),
                    _ => last_ack = Some(reply),
                }
            }
            match self.held.pop_front() {
                Some(Some(next)) => {
                    self.held_count -= 1;
                    last_seq_passed |= is_last(&next);
                    match self.feedback {
                        Feedback::Arrival => receiver.handle_noted(now, &next),
                        Feedback::Delivery => receiver.handle_packet(now, &next),
                    }
                }
                // The slot of the packet now expected, still missing.
                Some(None) | None => break,
            }
        }
        if let Some(ack) = last_ack {
            self.control.push(ack);
        }
        // Garbage collection at Last Seq (§3.5.3): the bitmap's blocks go back to the pool;
        // the connection itself (a static bitmap, its state) lives until the driver releases it.
        if last_seq_passed && self.held_count == 0 {
            if let (Some(bitmap), Some(pool)) = (&mut self.bitmap, pool) {
                bitmap.release(pool);
            }
        }
    }

    /// The next packet to send back: the layer's SACKs and NACKs and the transport's ACKs and
    /// CNPs, in the order they were produced.
    pub fn poll_transmit(&mut self, now: Time, receiver: &mut Receiver) -> Option<Packet> {
        self.control.pop().or_else(|| receiver.poll_transmit(now))
    }

    /// The connection ends: its ordering memory goes back to the NIC's pool and what it held is
    /// forgotten (Eunomia's blocks were already freed at Last Seq unless the connection is torn
    /// down before its last packet is in order); it counts no memory from now on.
    pub fn release(&mut self, pool: Option<&mut MemoryController>) {
        if let (Some(bitmap), Some(pool)) = (&mut self.bitmap, pool) {
            bitmap.release(pool);
        }
        self.held.clear();
        self.held_count = 0;
        self.released = true;
    }
}

/// Why the layer could not track a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    /// Beyond the bitmap's reach: a static bitmap's size or Eunomia's cap.
    Reach,
    /// The NIC's connection limit refused the connection's state record.
    ConnectionLimit,
    /// The NIC's pool had no room for the record or the blocks.
    Pool,
}

/// Whether `pkt` is a message's last data packet (Eunomia's last bit).
fn is_last(pkt: &Packet) -> bool {
    matches!(pkt.kind, PacketKind::Data { last: true, .. })
}

/// A transport receiver with an ordering layer under it: the same inputs and outputs as
/// [`Receiver`], plus the NIC's [`MemoryController`] for [`OrderingMode::Eunomia`].
#[derive(Debug, Clone)]
pub struct OrderedReceiver {
    receiver: Receiver,
    layer: OrderingLayer,
}

impl OrderedReceiver {
    /// `receiver` under a layer of kind `mode`; `ordering` sizes Eunomia's bitmap.
    pub fn new(receiver: Receiver, mode: OrderingMode, ordering: &OrderingConfig) -> Self {
        let layer = OrderingLayer::new(mode, &receiver, ordering);
        OrderedReceiver { receiver, layer }
    }

    /// See [`OrderingLayer::with_write_last`].
    pub fn with_write_last(mut self, write_last: WriteLast) -> Self {
        self.layer = self.layer.with_write_last(write_last);
        self
    }

    /// See [`OrderingLayer::with_feedback`].
    pub fn with_feedback(mut self, feedback: Feedback) -> Self {
        self.layer = self.layer.with_feedback(feedback);
        self
    }

    /// See [`OrderingLayer::take_placement_delay`].
    pub fn take_placement_delay(&mut self) -> Duration {
        self.layer.take_placement_delay()
    }

    pub fn receiver(&self) -> &Receiver {
        &self.receiver
    }

    pub fn stats(&self) -> &ReceiverStats {
        self.receiver.stats()
    }

    pub fn layer_stats(&self) -> &LayerStats {
        self.layer.stats()
    }

    /// See [`OrderingLayer::footprint_bytes`].
    pub fn footprint_bytes(&self) -> u32 {
        self.layer.footprint_bytes()
    }

    /// See [`OrderingLayer::bitmap_bytes`].
    pub fn bitmap_bytes(&self) -> u32 {
        self.layer.bitmap_bytes()
    }

    /// See [`OrderingLayer::bitmap`].
    pub fn bitmap(&self) -> Option<&HdBitmap> {
        self.layer.bitmap()
    }

    /// A packet arrived from the wire. `pool` is the NIC's ordering memory (Eunomia only).
    pub fn handle_packet(&mut self, now: Time, pkt: &Packet, pool: Option<&mut MemoryController>) {
        self.layer.handle_packet(now, pkt, &mut self.receiver, pool);
    }

    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        self.layer.poll_transmit(now, &mut self.receiver)
    }

    /// The next message complete in order.
    pub fn poll_completion(&mut self) -> Option<Completion> {
        self.receiver.poll_completion()
    }

    /// See [`OrderingLayer::release`].
    pub fn release(&mut self, pool: Option<&mut MemoryController>) {
        self.layer.release(pool);
    }
}
