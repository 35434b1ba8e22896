//! Eunomia's memory controller (§3.4, §4): one fixed pool of bitmap blocks shared by every
//! connection of a NIC, handed out one block at a time as connections face reordering.
//!
//! On the FPGA the controller keeps a `master_array` of small blocks and a one-bit-per-block
//! `block_alloc_bitmap`; a new block is the first free one from the start of the array, and a
//! finished connection's blocks are returned by clearing their allocation bits (§4). This type
//! is that controller in software: the pool is sized once, at construction, and never grows;
//! running out is a typed error ([`PoolExhausted`]) that the receiver turns into a NACK.
//!
//! A block is named by a [`BlockId`], its two-byte index in the pool. The paper stores one
//! absolute address per connection and two-byte addresses *relative* to it for the other blocks
//! (§3.4); an index into the pool is the same two bytes without the subtraction, so the
//! footprint accounting below is unchanged.
//!
//! # Footprint accounting
//!
//! [`bytes_in_use`](MemoryController::bytes_in_use) is what the NIC spends on ordering state
//! right now: for every connection with an open bitmap, its fixed state record
//! ([`OrderingConfig::metadata_bytes`], 48 B with the defaults: Table 1's 16 B of variables plus
//! a two-byte address for each of the 16 blocks the cap allows, Fig. 7), plus
//! [`OrderingConfig::block_bytes`] for every block allocated. The records are counted here but
//! not carved out of the block pool: the paper's FPGA keeps them in the same array (24 two-byte
//! blocks each), but §3.4 only requires that they exist once per reordering connection, and
//! keeping the pool for bitmaps makes `pool_blocks` mean exactly "bitmap memory". The four-byte
//! DBA pointer every connection carries in its own context is not the controller's memory;
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

/// Every block of the pool is allocated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("all {pool_blocks} bitmap blocks are in use")]
pub struct PoolExhausted {
    pub pool_blocks: u32,
}

/// Counters the controller keeps about its pool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryStats {
    /// Blocks allocated now.
    pub blocks_in_use: u32,
    /// Most blocks ever allocated at once.
    pub peak_blocks: u32,
    /// Connections whose bitmap state is open now (they faced reordering and are not done).
    pub states_in_use: u32,
    pub peak_states: u32,
    /// Most bytes ever in use at once (see [`MemoryController::bytes_in_use`]).
    pub peak_bytes: u32,
    /// Requests that found too few free blocks.
    pub exhausted: u64,
}

/// The fixed pool of bitmap blocks and its allocation bitmap.
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

    pub fn free_blocks(&self) -> u32 {
        self.cfg.pool_blocks - self.stats.blocks_in_use
    }

    /// Bytes of ordering state held now: a state record per open connection plus the blocks.
    pub fn bytes_in_use(&self) -> u32 {
        self.stats.states_in_use * self.cfg.metadata_bytes()
            + self.stats.blocks_in_use * self.cfg.block_bytes()
    }

    /// Records that a request found too few free blocks (and was granted none of them).
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

    /// A connection's state record is reserved (its first out-of-order packet).
    pub(crate) fn open_state(&mut self) {
        self.stats.states_in_use += 1;
        self.stats.peak_states = self.stats.peak_states.max(self.stats.states_in_use);
        self.note_bytes();
    }

    /// A connection's state record is released (garbage collection, §3.5.3).
    pub(crate) fn close_state(&mut self) {
        debug_assert!(self.stats.states_in_use > 0, "state record closed twice");
        self.stats.states_in_use = self.stats.states_in_use.saturating_sub(1);
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

    fn pool(pool_blocks: u32) -> MemoryController {
        MemoryController::new(OrderingConfig {
            pool_blocks,
            ..OrderingConfig::default()
        })
        .expect("valid configuration")
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
        m.open_state();
        let a = m.alloc().expect("free block");
        let b = m.alloc().expect("free block");
        assert_eq!(m.bytes_in_use(), 48 + 2 * 2);
        m.open_state();
        let c = m.alloc().expect("free block");
        assert_eq!(m.bytes_in_use(), 2 * 48 + 3 * 2);
        for id in [a, b, c] {
            m.free(id);
        }
        m.close_state();
        m.close_state();
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
