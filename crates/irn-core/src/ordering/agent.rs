//! Eunomia's receiver-side agent (§3.5): one connection's ordering state at the responder NIC.

use std::collections::VecDeque;

use super::config::OrderingConfig;
use super::hd_bitmap::{HdBitmap, Placement, Untracked};
use super::memory::MemoryController;
use crate::seq::Psn;
use crate::time::Time;

/// What the ordering layer needs of a data packet: its PSN (already in the BTH) and Eunomia's
/// 33 bits of metadata (§3.2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DataPacket {
    pub psn: Psn,
    /// The connection's first PSN (*Head* in §3.2.1). The paper gives it 32 bits; irn's PSNs
    /// are 24 bits, so a [`Psn`] carries it.
    pub head: Psn,
    /// This is the connection's last packet.
    pub last: bool,
}

impl DataPacket {
    /// Bits Eunomia appends to every data packet: the 32-bit Head and the last bit.
    pub const METADATA_BITS: u32 = 33;
}

/// The receiver's answer to a data packet (§3.5.1). Every kind carries the cumulative
/// acknowledgement: `expected`, the first PSN not yet received in order.
///
/// irn's [`PacketKind`](crate::PacketKind) has no room for this: its NACK, IRN's SACK-carrying
/// loss signal, always means "recover", while Eunomia needs one kind that reports an
/// out-of-order packet without recovery (SACK) and another that asks for it (NACK). Encoding
/// these on the wire is left to whoever wires the agent into a transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Acknowledgment {
    /// The packet was in order (or an old duplicate): everything before `expected` arrived.
    Ack { expected: Psn },
    /// `sacked` arrived out of order and is held; the sender must not start recovery.
    Sack { expected: Psn, sacked: Psn },
    /// `dropped` could not be tracked (beyond the cap, or no free memory) and was discarded;
    /// the sender recovers.
    Nack { expected: Psn, dropped: Psn },
}

impl Acknowledgment {
    /// The cumulative acknowledgement it carries.
    pub fn expected(&self) -> Psn {
        match *self {
            Acknowledgment::Ack { expected }
            | Acknowledgment::Sack { expected, .. }
            | Acknowledgment::Nack { expected, .. } => expected,
        }
    }
}

/// What the application may now see (§3.5.2): data is placed in memory as it arrives, but only
/// the in-order prefix is reported, and the completion waits for Last Seq.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Delivery {
    /// `packets` more packets are in order: every PSN before `next` may be read.
    InOrder { packets: u32, next: Psn },
    /// Every packet up to Last Seq has arrived: the completion notification. `packets` is the
    /// connection's length.
    Complete { packets: u32 },
}

/// Counters an agent keeps about its connection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AgentStats {
    /// Data packets handled, whatever became of them.
    pub packets: u64,
    pub in_order: u64,
    /// Packets tracked ahead of the expected one.
    pub out_of_order: u64,
    pub duplicates: u64,
    /// Dropped and NACKed: the bitmap's cap would be exceeded.
    pub beyond_cap: u64,
    /// Dropped and NACKed: the pool had too few free blocks.
    pub no_memory: u64,
    /// Past the connection's known last packet, or a second, different last packet: a sender
    /// bug, discarded unanswered.
    pub invalid: u64,
    pub acks_sent: u64,
    pub sacks_sent: u64,
    pub nacks_sent: u64,
}

#[derive(Debug, Clone)]
enum State {
    /// No packet yet: the connection's first PSN arrives as metadata with its first packet.
    Idle,
    Receiving {
        first: Psn,
        /// Last Seq, once the packet carrying the last bit has been accepted.
        last: Option<Psn>,
        bitmap: HdBitmap,
    },
    /// Everything up to `last` arrived; the ordering memory is freed.
    Complete { first: Psn, last: Psn },
}

/// The receiver-side agent of one connection, sans-IO.
///
/// Input: [`handle_packet`](Self::handle_packet) for every data packet, with the NIC's shared
/// [`MemoryController`]. Outputs, to poll after each input:
/// [`poll_transmit`](Self::poll_transmit) for the ACK/SACK/NACK it produced, then
/// [`poll_completion`](Self::poll_completion) for what the application may now see. Drained
/// after every packet, the agent never allocates.
///
/// Until the first out-of-order packet the agent holds no ordering memory; from then its
/// [`HdBitmap`] takes blocks from the pool as reordering demands, and all of them go back when
/// Last Seq is reached in order (garbage collection, §3.5.3) or when the connection is
/// [released](Self::release).
#[derive(Debug, Clone)]
pub struct ReceiverAgent {
    state: State,
    acks: VecDeque<Acknowledgment>,
    /// In-order packets not yet reported by `poll_completion`.
    unreported: u32,
    completion_due: bool,
    stats: AgentStats,
}

impl Default for ReceiverAgent {
    fn default() -> Self {
        Self::new()
    }
}

impl ReceiverAgent {
    pub fn new() -> Self {
        ReceiverAgent {
            state: State::Idle,
            acks: VecDeque::with_capacity(2),
            unreported: 0,
            completion_due: false,
            stats: AgentStats::default(),
        }
    }

    pub fn stats(&self) -> &AgentStats {
        &self.stats
    }

    /// The first PSN not yet received in order (`None` before the first packet).
    pub fn expected(&self) -> Option<Psn> {
        match &self.state {
            State::Idle => None,
            State::Receiving { bitmap, .. } => Some(bitmap.head()),
            State::Complete { last, .. } => Some(last.next()),
        }
    }

    /// Everything up to Last Seq has arrived.
    pub fn is_complete(&self) -> bool {
        matches!(self.state, State::Complete { .. })
    }

    /// The connection's bitmap while it is receiving.
    pub fn bitmap(&self) -> Option<&HdBitmap> {
        match &self.state {
            State::Receiving { bitmap, .. } => Some(bitmap),
            State::Idle | State::Complete { .. } => None,
        }
    }

    /// Blocks this connection holds in the pool.
    pub fn blocks(&self) -> u32 {
        self.bitmap().map_or(0, HdBitmap::blocks)
    }

    /// Bytes of NIC memory this connection costs for ordering: the DBA pointer every connection
    /// carries ([`OrderingConfig::DBA_BYTES`]), plus its state record and blocks while it has a
    /// bitmap. With the defaults: 4 B for a connection without reordering, up to
    /// 4 + 48 + 16 × 2 = 84 B.
    pub fn footprint_bytes(&self) -> u32 {
        OrderingConfig::DBA_BYTES + self.bitmap().map_or(0, HdBitmap::footprint_bytes)
    }

    /// A data packet arrived (§3.5): track it, answer it, and release in-order data.
    ///
    /// - at the expected PSN: ACK the new expected PSN; report the packets now in order; at
    ///   Last Seq, complete and free the connection's memory;
    /// - ahead of it and tracked in the bitmap: SACK it (a duplicate of a held packet is
    ///   SACKed again);
    /// - ahead of it but beyond the cap or the free memory: drop it and NACK it;
    /// - behind it (a duplicate, also after completion): ACK the expected PSN again.
    pub fn handle_packet(&mut self, _now: Time, pkt: DataPacket, pool: &mut MemoryController) {
        self.stats.packets += 1;
        if let State::Idle = self.state {
            self.state = State::Receiving {
                first: pkt.head,
                last: None,
                bitmap: HdBitmap::new(pkt.head, pool.config()),
            };
        }
        let (first, last, bitmap) = match &mut self.state {
            State::Receiving {
                first,
                last,
                bitmap,
            } => (*first, last, bitmap),
            State::Complete { last, .. } => {
                self.stats.duplicates += 1;
                let expected = last.next();
                self.send(Acknowledgment::Ack { expected });
                return;
            }
            State::Idle => unreachable!("an idle agent was just given a bitmap"),
        };
        if let Some(l) = *last {
            if pkt.psn > l || (pkt.last && pkt.psn != l) {
                self.stats.invalid += 1;
                return;
            }
        }
        let expected = bitmap.head();
        let ack = match bitmap.insert(pkt.psn, pool) {
            Ok(Placement::InOrder { advanced }) => {
                self.stats.in_order += 1;
                if pkt.last {
                    *last = Some(pkt.psn);
                }
                self.unreported += advanced;
                let expected = bitmap.head();
                if let Some(l) = last.filter(|&l| expected > l) {
                    bitmap.release(pool);
                    self.state = State::Complete { first, last: l };
                    self.completion_due = true;
                }
                Acknowledgment::Ack { expected }
            }
            Ok(Placement::OutOfOrder) => {
                self.stats.out_of_order += 1;
                if pkt.last {
                    *last = Some(pkt.psn);
                }
                Acknowledgment::Sack {
                    expected,
                    sacked: pkt.psn,
                }
            }
            Ok(Placement::Duplicate) => {
                self.stats.duplicates += 1;
                if pkt.psn > expected {
                    Acknowledgment::Sack {
                        expected,
                        sacked: pkt.psn,
                    }
                } else {
                    Acknowledgment::Ack { expected }
                }
            }
            Err(e) => {
                match e {
                    Untracked::BeyondCap { .. } => self.stats.beyond_cap += 1,
                    Untracked::NoMemory(_) => self.stats.no_memory += 1,
                }
                Acknowledgment::Nack {
                    expected,
                    dropped: pkt.psn,
                }
            }
        };
        self.send(ack);
    }

    fn send(&mut self, ack: Acknowledgment) {
        match ack {
            Acknowledgment::Ack { .. } => self.stats.acks_sent += 1,
            Acknowledgment::Sack { .. } => self.stats.sacks_sent += 1,
            Acknowledgment::Nack { .. } => self.stats.nacks_sent += 1,
        }
        self.acks.push_back(ack);
    }

    /// The next acknowledgment to send.
    pub fn poll_transmit(&mut self, _now: Time) -> Option<Acknowledgment> {
        self.acks.pop_front()
    }

    /// What the application may see next: the packets now in order (all arrivals since the last
    /// poll, in one report), then, once, the connection's completion.
    pub fn poll_completion(&mut self) -> Option<Delivery> {
        if self.unreported > 0 {
            let packets = std::mem::take(&mut self.unreported);
            let next = self.expected()?;
            return Some(Delivery::InOrder { packets, next });
        }
        if self.completion_due {
            self.completion_due = false;
            if let State::Complete { first, last } = self.state {
                return Some(Delivery::Complete {
                    packets: last.since(first) + 1,
                });
            }
        }
        None
    }

    /// Frees the connection's ordering memory without completing it (the connection was torn
    /// down). A later packet starts a new connection.
    pub fn release(&mut self, pool: &mut MemoryController) {
        if let State::Receiving { bitmap, .. } = &mut self.state {
            bitmap.release(pool);
        }
        self.state = State::Idle;
        self.unreported = 0;
        self.completion_due = false;
    }
}
