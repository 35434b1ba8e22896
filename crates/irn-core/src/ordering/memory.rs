//! Eunomia's memory controller (§3.4, §4): one fixed pool of blocks shared by every connection
//! of a NIC, holding the bitmaps' blocks and, by default, the connections' state records.
//!
//! On the FPGA the controller keeps a `master_array` of small blocks and a one-bit-per-block
//! `block_alloc_bitmap` (§4). A connection's first out-of-order packet opens its state record:
//! the controller searches the array *backward from its tail* for enough consecutive free
//! blocks (24 two-byte blocks for the 48-byte record). A bitmap block is the first free one
//! *from the head*. A finished connection's record and blocks are returned by clearing their
//! allocation bits. This type is that controller in software: the pool is sized once, at
//! construction, and never grows.
//!
//! Two limits refuse a connection, counted apart ([`MemoryStats`]):
//! - the **connection limit** ([`OrderingConfig::max_connections`]): the controller's
//!   `metadata_start_index` has one entry per record, so a NIC tracks at most that many
//!   connections at once ([`Refused::ConnectionLimit`]);
//! - the **pool** ([`Refused::Pool`]): no run of free blocks long enough for a record, or too
//!   few free blocks for the bitmap blocks that must come with it (or, for a connection that
//!   already has a record, for its bitmap to grow).
//!
//! The receiver turns either into a NACK. With
//! [`records_in_pool`](OrderingConfig::records_in_pool) off, records live beside the pool
//! (counted, bounded by the connection limit alone) and the pool holds bitmap blocks only.
//!
//! A block is named by a [`BlockId`], its two-byte index in the pool. The paper stores one
//! absolute address per connection and two-byte addresses *relative* to it for the other blocks
//! (§3.4); an index into the pool is the same two bytes without the subtraction, so the
//! footprint accounting below is unchanged.
//!
//! # Footprint accounting
//!
//! [`bytes_in_use`](MemoryController::bytes_in_use) is what the NIC spends on ordering state
//! right now: for every connection with an open record, the record
//! ([`OrderingConfig::metadata_bytes`], 48 B with the defaults: Table 1's 16 B of variables plus
//! a two-byte address for each of the 16 blocks the cap allows, Fig. 7), plus
//! [`OrderingConfig::block_bytes`] for every bitmap block allocated. The four-byte DBA pointer
//! every connection carries in its own context is not the controller's memory;
//! [`OrderingLayer::footprint_bytes`](super::OrderingLayer::footprint_bytes) adds it per
//! connection.

use super::config::{OrderingConfig, OrderingConfigError};

/// A block's index in the pool: the two-byte block address of Fig. 7.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId(u16);

impl BlockId {
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// The pool has no room for what was asked: a state record's run of blocks, or bitmap blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the pool of {pool_blocks} blocks has no room")]
pub struct PoolExhausted {
    pub pool_blocks: u32,
}

/// Why the controller refused to open a connection's state record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The NIC already tracks [`OrderingConfig::max_connections`] connections.
    #[error("the NIC already tracks {max_connections} connections")]
    ConnectionLimit { max_connections: u32 },
    /// No room in the pool for the record and the blocks that must come with it.
    #[error(transparent)]
    Pool(#[from] PoolExhausted),
}

/// Counters the controller keeps about its pool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryStats {
    /// Bitmap blocks allocated now (records not included).
    pub blocks_in_use: u32,
    /// Most bitmap blocks ever allocated at once.
    pub peak_blocks: u32,
    /// Connections whose state record is open now (they faced reordering and are not done).
    pub states_in_use: u32,
    pub peak_states: u32,
    /// Most bytes ever in use at once (see [`MemoryController::bytes_in_use`]).
    pub peak_bytes: u32,
    /// Requests the pool could not serve: a record's run of blocks or bitmap blocks
    /// ([`Refused::Pool`]).
    pub exhausted: u64,
    /// Of `exhausted`, new records refused (the connection's first out-of-order packet).
    pub exhausted_records: u64,
    /// New records refused by the connection limit ([`Refused::ConnectionLimit`]).
    pub connection_limit: u64,
}

/// The fixed pool of blocks and its allocation bitmap.
#[derive(Debug, Clone)]
pub struct MemoryController {
    cfg: OrderingConfig,
    /// One word per block; only the low `block_bits` bits are used.
    blocks: Box<[u64]>,
    /// One bit per block: set while allocated (the FPGA's `block_alloc_bitmap`).
    allocated: Box<[u64]>,
    /// No word of `allocated` before this one has a free block: where the first-fit search
    /// starts.
    first_free_word: usize,
    stats: MemoryStats,
}

impl MemoryController {
    /// A pool of `cfg.pool_blocks` blocks, all free.
    pub fn new(cfg: OrderingConfig) -> Result<Self, OrderingConfigError> {
        cfg.validate()?;
        let words = cfg.pool_blocks.div_ceil(64) as usize;
        let mut allocated = vec![0u64; words].into_boxed_slice();
        // Bits past the pool's end read as allocated, so the search never returns them.
        let tail = cfg.pool_blocks % 64;
        if tail != 0 {
            allocated[words - 1] = !((1u64 << tail) - 1);
        }
        Ok(MemoryController {
            cfg,
            blocks: vec![0; cfg.pool_blocks as usize].into_boxed_slice(),
            allocated,
            first_free_word: 0,
            stats: MemoryStats::default(),
        })
    }

    pub fn config(&self) -> &OrderingConfig {
        &self.cfg
    }

    pub fn stats(&self) -> &MemoryStats {
        &self.stats
    }

    pub fn blocks_in_use(&self) -> u32 {
        self.stats.blocks_in_use
    }

    /// Blocks neither a bitmap nor a record holds.
    pub fn free_blocks(&self) -> u32 {
        self.cfg.pool_blocks - self.stats.blocks_in_use - self.record_blocks_in_use()
    }

    /// Blocks the open records hold (none with records outside the pool).
    fn record_blocks_in_use(&self) -> u32 {
        if self.cfg.records_in_pool {
            self.stats.states_in_use * self.cfg.record_blocks()
        } else {
            0
        }
    }

    /// Bytes of ordering state held now: a state record per open connection plus the blocks.
    pub fn bytes_in_use(&self) -> u32 {
        self.stats.states_in_use * self.cfg.metadata_bytes()
            + self.stats.blocks_in_use * self.cfg.block_bytes()
    }

    /// Records that a request found too little room (and was granted none of it).
    pub(crate) fn note_exhausted(&mut self) -> PoolExhausted {
        self.stats.exhausted += 1;
        PoolExhausted {
            pool_blocks: self.cfg.pool_blocks,
        }
    }

    /// The first free block, cleared. Never grows the pool.
    pub fn alloc(&mut self) -> Result<BlockId, PoolExhausted> {
        let Some(w) =
            (self.first_free_word..self.allocated.len()).find(|&w| self.allocated[w] != !0)
        else {
            self.first_free_word = self.allocated.len();
            return Err(self.note_exhausted());
        };
        self.first_free_word = w;
        let bit = (!self.allocated[w]).trailing_zeros();
        self.allocated[w] |= 1 << bit;
        let index = w * 64 + bit as usize;
        self.blocks[index] = 0;
        self.stats.blocks_in_use += 1;
        self.stats.peak_blocks = self.stats.peak_blocks.max(self.stats.blocks_in_use);
        self.note_bytes();
        // The pool has at most 2^16 blocks (validated), so the index fits two bytes.
        Ok(BlockId(index as u16))
    }

    /// Returns a block to the pool. Its bits are left as they are (the FPGA does not erase a
    /// freed block either); [`alloc`](Self::alloc) clears a block when it hands it out again.
    pub fn free(&mut self, id: BlockId) {
        let (w, bit) = (id.index() / 64, id.index() % 64);
        let was = self.allocated[w] >> bit & 1 == 1;
        debug_assert!(was, "block {id:?} freed twice");
        if was {
            self.allocated[w] &= !(1 << bit);
            self.first_free_word = self.first_free_word.min(w);
            self.stats.blocks_in_use -= 1;
        }
    }

    /// Opens a connection's state record (its first out-of-order packet) if `then_blocks`
    /// bitmap blocks can follow it: all of it or nothing. In the pool, the record is the
    /// highest run of [`record_blocks`](OrderingConfig::record_blocks) free blocks (the
    /// FPGA's backward search from the tail); its first block names it. Outside the pool
    /// there is no block to name (`None`).
    pub fn open_record(&mut self, then_blocks: u32) -> Result<Option<BlockId>, Refused> {
        if self.stats.states_in_use >= self.cfg.max_connections {
            self.stats.connection_limit += 1;
            return Err(Refused::ConnectionLimit {
                max_connections: self.cfg.max_connections,
            });
        }
        let first = if self.cfg.records_in_pool {
            let n = self.cfg.record_blocks();
            let start = self
                .highest_free_run(n)
                .filter(|_| self.free_blocks() >= n + then_blocks);
            let Some(start) = start else {
                self.stats.exhausted_records += 1;
                return Err(self.note_exhausted().into());
            };
            for i in start..start + n {
                self.allocated[i as usize / 64] |= 1 << (i % 64);
            }
            // The pool has at most 2^16 blocks (validated), so the index fits two bytes.
            Some(BlockId(start as u16))
        } else {
            if self.free_blocks() < then_blocks {
                return Err(self.note_exhausted().into());
            }
            None
        };
        self.stats.states_in_use += 1;
        self.stats.peak_states = self.stats.peak_states.max(self.stats.states_in_use);
        self.note_bytes();
        Ok(first)
    }

    /// Releases a connection's state record (garbage collection, §3.5.3); `first` is what
    /// [`open_record`](Self::open_record) returned.
    pub fn close_record(&mut self, first: Option<BlockId>) {
        debug_assert!(self.stats.states_in_use > 0, "state record closed twice");
        self.stats.states_in_use = self.stats.states_in_use.saturating_sub(1);
        if let Some(first) = first {
            let start = first.index();
            for i in start..start + self.cfg.record_blocks() as usize {
                self.allocated[i / 64] &= !(1 << (i % 64));
            }
            self.first_free_word = self.first_free_word.min(start / 64);
        }
    }

    /// The first block of the highest run of `n` consecutive free blocks, searching from the
    /// pool's tail towards its head; whole words are skipped at once.
    fn highest_free_run(&self, n: u32) -> Option<u32> {
        let (mut run, mut end, mut i) = (0, self.cfg.pool_blocks, self.cfg.pool_blocks);
        while i > 0 {
            let (w, bit) = ((i - 1) as usize / 64, (i - 1) % 64);
            let word = self.allocated[w];
            if bit == 63 && word == !0 {
                (run, i) = (0, i - 64);
                end = i;
                continue;
            }
            if bit == 63 && word == 0 {
                (run, i) = (run + 64, i - 64);
            } else if word >> bit & 1 == 0 {
                (run, i) = (run + 1, i - 1);
            } else {
                (run, i) = (0, i - 1);
                end = i;
                continue;
            }
            if run >= n {
                return Some(end - n);
            }
        }
        None
    }

    fn note_bytes(&mut self) {
        self.stats.peak_bytes = self.stats.peak_bytes.max(self.bytes_in_use());
    }

    /// The bits of an allocated block.
    pub(crate) fn word(&self, id: BlockId) -> u64 {
        self.blocks[id.index()]
    }

    pub(crate) fn word_mut(&mut self, id: BlockId) -> &mut u64 {
        &mut self.blocks[id.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A pool of bitmap blocks only (records kept beside it).
    fn pool(pool_blocks: u32) -> MemoryController {
        MemoryController::new(OrderingConfig {
            pool_blocks,
            records_in_pool: false,
            ..OrderingConfig::default()
        })
        .expect("valid configuration")
    }

    /// A pool that holds the records too: 8-bit blocks and a 32-bit cap make a 24-byte
    /// record of 24 blocks.
    fn shared(pool_blocks: u32, max_connections: u32) -> MemoryController {
        MemoryController::new(OrderingConfig {
            block_bits: 8,
            cap_bits: 32,
            pool_blocks,
            max_connections,
            records_in_pool: true,
        })
        .expect("valid configuration")
    }

    /// What a step of [`records_and_blocks_share_the_pool`] does.
    #[derive(Debug, Clone, Copy)]
    enum Op {
        /// Open a record that `then` bitmap blocks must follow.
        Open {
            then: u32,
        },
        /// Close the `n`th record opened (counting from 0).
        Close(usize),
        Alloc,
        /// Free the `n`th block allocated.
        Free(usize),
    }

    /// What the step gave: a record's first block or a block, or the refusal.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Got {
        Record(u16),
        Block(u16),
        Refused(Refused),
        Done,
    }

    const LIMIT: Refused = Refused::ConnectionLimit { max_connections: 2 };
    const FULL: Refused = Refused::Pool(PoolExhausted { pool_blocks: 64 });

    /// Records from the tail, blocks first-fit from the head, the limit and the pool refusing
    /// apart, and freeing giving both back; a pool of 64 blocks holds two 24-block records.
    #[test]
    fn records_and_blocks_share_the_pool() {
        use Got::*;
        use Op::*;
        struct Case {
            name: &'static str,
            max_connections: u32,
            steps: Vec<(Op, Got)>,
            /// Counters at the end: (exhausted, exhausted_records, connection_limit).
            refusals: (u64, u64, u64),
        }
        let cases = [
            Case {
                name: "a record from the tail, a block from the head",
                max_connections: 8,
                steps: vec![(Open { then: 1 }, Record(40)), (Alloc, Block(0))],
                refusals: (0, 0, 0),
            },
            Case {
                name: "a pool full of records refuses a new connection: the pool",
                max_connections: 8,
                steps: vec![
                    (Open { then: 0 }, Record(40)),
                    (Open { then: 0 }, Record(16)),
                    (Open { then: 0 }, Refused(FULL)),
                ],
                refusals: (1, 1, 0),
            },
            Case {
                name: "the connection limit refuses before the pool is full",
                max_connections: 2,
                steps: vec![
                    (Open { then: 0 }, Record(40)),
                    (Open { then: 0 }, Record(16)),
                    (Close(0), Done),
                    (Open { then: 0 }, Record(40)),
                    (Open { then: 0 }, Refused(LIMIT)),
                ],
                refusals: (0, 0, 1),
            },
            Case {
                name: "a record whose blocks cannot follow is not opened",
                max_connections: 8,
                steps: vec![
                    (Open { then: 1 }, Record(40)),
                    (Alloc, Block(0)),
                    // 39 free blocks: a run of 24 fits, the 16 blocks after it do not.
                    (Open { then: 16 }, Refused(FULL)),
                    (Open { then: 15 }, Record(16)),
                ],
                refusals: (1, 1, 0),
            },
            Case {
                name: "blocks fill the head, then a record needs a run, not a count",
                max_connections: 8,
                steps: [(Open { then: 0 }, Record(40))]
                    .into_iter()
                    .chain((0..17).map(|i| (Alloc, Block(i))))
                    .chain([
                        // 23 free blocks (17..40): no run of 24.
                        (Open { then: 0 }, Refused(FULL)),
                        // 24 free, but block 0 is not next to the others.
                        (Free(0), Done),
                        (Open { then: 0 }, Refused(FULL)),
                        (Free(16), Done),
                        (Open { then: 0 }, Record(16)),
                    ])
                    .collect(),
                refusals: (2, 2, 0),
            },
            Case {
                name: "freeing returns both",
                max_connections: 8,
                steps: vec![
                    (Open { then: 0 }, Record(40)),
                    (Open { then: 0 }, Record(16)),
                    (Alloc, Block(0)),
                    (Close(0), Done),
                    (Close(1), Done),
                    (Free(0), Done),
                    (Open { then: 0 }, Record(40)),
                    (Alloc, Block(0)),
                ],
                refusals: (0, 0, 0),
            },
        ];
        for case in cases {
            let mut m = shared(64, case.max_connections);
            let (mut records, mut blocks) = (Vec::new(), Vec::new());
            for (i, (op, want)) in case.steps.into_iter().enumerate() {
                let got = match op {
                    Open { then } => match m.open_record(then) {
                        Ok(first) => {
                            let first = first.expect("records are in the pool");
                            records.push(first);
                            Record(first.0)
                        }
                        Err(r) => Refused(r),
                    },
                    Close(n) => {
                        m.close_record(Some(records[n]));
                        Done
                    }
                    Alloc => match m.alloc() {
                        Ok(id) => {
                            blocks.push(id);
                            Block(id.0)
                        }
                        Err(e) => Refused(e.into()),
                    },
                    Free(n) => {
                        m.free(blocks[n]);
                        Done
                    }
                };
                assert_eq!(got, want, "{}: step {i} ({op:?})", case.name);
            }
            let st = *m.stats();
            assert_eq!(
                (st.exhausted, st.exhausted_records, st.connection_limit),
                case.refusals,
                "{}: refusals",
                case.name
            );
        }
    }

    #[test]
    fn closing_every_record_and_block_frees_the_whole_pool() {
        let mut m = shared(64, 8);
        let a = m.open_record(2).expect("room");
        let ids = [m.alloc().expect("room"), m.alloc().expect("room")];
        assert_eq!(m.free_blocks(), 64 - 24 - 2);
        assert_eq!(m.bytes_in_use(), 24 + 2);
        m.close_record(a);
        for id in ids {
            m.free(id);
        }
        assert_eq!((m.free_blocks(), m.bytes_in_use()), (64, 0));
        // The whole pool is one run again: all its blocks can be bitmap blocks.
        assert!((0..64).all(|_| m.alloc().is_ok()));
    }

    #[test]
    fn rejects_an_invalid_configuration() {
        let cfg = OrderingConfig {
            pool_blocks: 0,
            ..OrderingConfig::default()
        };
        assert_eq!(
            MemoryController::new(cfg).err(),
            Some(OrderingConfigError::PoolBlocks(0))
        );
    }

    #[test]
    fn first_fit_until_exhausted_then_a_typed_error() {
        let mut m = pool(70); // two allocation words, the second partly past the pool's end
        let ids: Vec<BlockId> = (0..70).map(|_| m.alloc().expect("free block")).collect();
        assert_eq!(ids, (0..70).map(BlockId).collect::<Vec<_>>());
        assert_eq!(m.alloc(), Err(PoolExhausted { pool_blocks: 70 }));
        assert_eq!((m.blocks_in_use(), m.free_blocks()), (70, 0));
        m.free(BlockId(66));
        m.free(BlockId(3));
        assert_eq!(m.alloc(), Ok(BlockId(3)), "lowest free block first");
        assert_eq!(m.alloc(), Ok(BlockId(66)));
        assert_eq!(m.alloc(), Err(PoolExhausted { pool_blocks: 70 }));
        let st = *m.stats();
        assert_eq!(
            (st.blocks_in_use, st.peak_blocks, st.exhausted),
            (70, 70, 2)
        );
    }

    #[test]
    fn a_reused_block_comes_back_clear() {
        let mut m = pool(1);
        let id = m.alloc().expect("free block");
        *m.word_mut(id) = 0xBEEF;
        m.free(id);
        let again = m.alloc().expect("free block");
        assert_eq!((again, m.word(again)), (id, 0));
    }

    #[test]
    fn footprint_counts_state_records_and_blocks() {
        let mut m = pool(8);
        assert_eq!(m.bytes_in_use(), 0);
        let r1 = m.open_record(2).expect("room");
        assert_eq!(r1, None, "records outside the pool have no block");
        let a = m.alloc().expect("free block");
        let b = m.alloc().expect("free block");
        assert_eq!(m.bytes_in_use(), 48 + 2 * 2);
        let r2 = m.open_record(1).expect("room");
        let c = m.alloc().expect("free block");
        assert_eq!(m.bytes_in_use(), 2 * 48 + 3 * 2);
        assert_eq!(m.free_blocks(), 5, "records outside take no block");
        for id in [a, b, c] {
            m.free(id);
        }
        m.close_record(r1);
        m.close_record(r2);
        assert_eq!(m.bytes_in_use(), 0);
        let st = *m.stats();
        assert_eq!((st.peak_bytes, st.peak_states, st.peak_blocks), (102, 2, 3));
    }

    proptest! {
        /// Against a set of held blocks: no block is handed out twice, first fit, exact counts.
        #[test]
        fn never_hands_out_a_held_block(
            pool_blocks in 1u32..200,
            ops in prop::collection::vec(any::<(bool, u16)>(), 0..400),
        ) {
            let mut m = pool(pool_blocks);
            let mut held = std::collections::BTreeSet::new();
            for (alloc, pick) in ops {
                if alloc || held.is_empty() {
                    match m.alloc() {
                        Ok(id) => {
                            let lowest_free = (0..pool_blocks as u16).find(|i| !held.contains(i));
                            prop_assert_eq!(Some(id.0), lowest_free);
                            prop_assert!(held.insert(id.0));
                        }
                        Err(_) => prop_assert_eq!(held.len() as u32, pool_blocks),
                    }
                } else {
                    let &victim = held.iter().nth(usize::from(pick) % held.len()).expect("non-empty");
                    held.remove(&victim);
                    m.free(BlockId(victim));
                }
                prop_assert_eq!(m.blocks_in_use(), held.len() as u32);
                prop_assert!(m.stats().peak_blocks <= pool_blocks);
            }
        }
    }
}
