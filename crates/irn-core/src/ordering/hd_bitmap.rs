//! The hybrid-dynamic (HD) reordering bitmap of one connection (Eunomia §3.3).
//!
//! A connection's bitmap is a table of fixed-size blocks (rows) taken from the NIC's
//! [`MemoryController`]. Bit *i* stands for a packet that arrived ahead of the first missing one
//! (*Head*). The table has two parts:
//!
//! - the **circular part**, the first rows, managed as a ring anchored at Head: Head sits at bit
//!   `head_bit` (Table 1's *Head BM ID* × block size + *Head BM Index*) and PSN `Head + d` at
//!   `(head_bit + d) mod circular size`. *Tail* is the last PSN it covers; while there is no
//!   linear part Tail moves with Head (`Head + circular size − 1`);
//! - the **linear part**, rows added after the circular ones when a packet lands past Tail: its
//!   first bit is `Tail + 1`, its bit *l* is `Tail + 1 + l`. While it exists, Tail is frozen so
//!   the linear bits keep their meaning, and the circular slots Head leaves behind stay unused.
//!
//! Growing a plain ring would change every bit's position (Fig. 5a) and need a pass over the whole
//! bitmap; appending linear rows changes nothing already stored (Fig. 5b). Once Head passes
//! Tail, every circular bit is clear ("flushed") and the linear rows are **absorbed**: the ring
//! becomes all the rows, anchored where Head now sits inside the old linear part, so again no bit
//! moves (Fig. 6c).
//!
//! Choices where the paper leaves room:
//! - A connection starts with **no blocks**; its first out-of-order packet opens its state record
//!   and one circular block (§3.3.4: "creates an HD bitmap ... which consists of a single row"),
//!   so in-order connections never touch the pool.
//! - A packet that lands more than one block past the end gets **all the linear blocks it needs
//!   at once**, one block at a time and each the same fixed size (§3.3.2), or none: if the cap or
//!   the pool cannot cover it the bitmap is left unchanged and the packet is refused.
//! - The cap bounds the **bits allocated**, so the span a bitmap can track is counted from its
//!   *base*: Head, or, while a linear part exists, the Head the circular part had when it stopped
//!   moving (`Tail + 1 − circular size`). A packet less than `cap_bits` past the current Head can
//!   therefore still be refused while a linear part exists; [`HdBitmap::reach`] is the exact
//!   limit.
//! - Blocks are kept until the connection completes (§3.5.3), even when every bit is clear.

use super::config::OrderingConfig;
use super::memory::{BlockId, MemoryController, PoolExhausted, Refused};
use crate::seq::Psn;

const MAX_ROWS: usize = OrderingConfig::MAX_BLOCKS_PER_CONNECTION as usize;

/// What became of a packet the bitmap accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Placement {
    /// It was Head: Head moved `advanced` packets on (this one and the run of packets already
    /// held right behind it).
    InOrder { advanced: u32 },
    /// It is ahead of Head and is now tracked.
    OutOfOrder,
    /// It had already arrived: behind Head, or its bit was already set.
    Duplicate,
}

/// Why a packet could not be tracked: the receiver drops it and NACKs (§3.5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Untracked {
    /// Tracking it would take the bitmap past its cap; `reach` is the last PSN it can track.
    #[error("PSN {psn} is beyond the bitmap's reach ({reach})")]
    BeyondCap { psn: Psn, reach: Psn },
    /// The NIC already tracks as many connections as it may, and this one has no record yet.
    #[error("the NIC already tracks {max_connections} connections")]
    ConnectionLimit { max_connections: u32 },
    /// The pool has no room for the connection's record or for the blocks the bitmap needs.
    #[error(transparent)]
    NoMemory(#[from] PoolExhausted),
}

impl From<Refused> for Untracked {
    fn from(r: Refused) -> Self {
        match r {
            Refused::ConnectionLimit { max_connections } => {
                Untracked::ConnectionLimit { max_connections }
            }
            Refused::Pool(p) => Untracked::NoMemory(p),
        }
    }
}

/// One connection's HD bitmap: the Table 1 state plus its block address table.
///
/// The blocks live in the [`MemoryController`] passed to each call; always pass the same one,
/// and call [`release`](Self::release) before dropping a bitmap that holds blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HdBitmap {
    cfg: OrderingConfig,
    /// First missing PSN.
    head: Psn,
    /// Last PSN the circular part covers (meaningless while there are no blocks).
    tail: Psn,
    /// Bit of the circular part that stands for Head.
    head_bit: u32,
    circular_rows: u8,
    /// All rows, circular then linear (Table 1's *Dynamic Size*, in blocks).
    rows_len: u8,
    /// The block of each row; only the first `rows_len` are meaningful.
    rows: [BlockId; MAX_ROWS],
    /// The state record's first block in the pool, while the record is open and in the pool.
    record: Option<BlockId>,
}

impl HdBitmap {
    /// A bitmap with no blocks, waiting for `head` (the connection's first PSN, or the
    /// transport's expected PSN).
    pub fn new(head: Psn, cfg: &OrderingConfig) -> Self {
        HdBitmap {
            cfg: *cfg,
            head,
            tail: head,
            head_bit: 0,
            circular_rows: 0,
            rows_len: 0,
            rows: [BlockId::default(); MAX_ROWS],
            record: None,
        }
    }

    /// The first missing PSN: every PSN before it has arrived.
    pub fn head(&self) -> Psn {
        self.head
    }

    /// The last PSN the circular part covers, once there are blocks.
    pub fn tail(&self) -> Option<Psn> {
        (self.rows_len > 0).then_some(self.tail)
    }

    /// Blocks held (circular and linear).
    pub fn blocks(&self) -> u32 {
        u32::from(self.rows_len)
    }

    /// Size of the circular part, in bits (Table 1's *Circular BM Size*).
    pub fn circular_bits(&self) -> u32 {
        u32::from(self.circular_rows) * self.cfg.block_bits
    }

    /// Size of the linear part, in bits.
    pub fn linear_bits(&self) -> u32 {
        u32::from(self.rows_len - self.circular_rows) * self.cfg.block_bits
    }

    /// Where Head sits: (row, bit in that row), Table 1's *Head BM ID* and *Head BM Index*.
    pub fn head_position(&self) -> (u32, u32) {
        (
            self.head_bit / self.cfg.block_bits,
            self.head_bit % self.cfg.block_bits,
        )
    }

    /// The last PSN this bitmap could track if the pool has the blocks; anything later is
    /// [`Untracked::BeyondCap`].
    pub fn reach(&self) -> Psn {
        let base = if self.rows_len == 0 {
            self.head
        } else {
            self.tail.next().sub(self.circular_bits())
        };
        base.add(self.cfg.cap_bits - 1)
    }

    /// Bytes this connection's ordering state occupies in the memory controller: nothing before
    /// its first out-of-order packet, then its state record plus its blocks (see
    /// [`MemoryController::bytes_in_use`]).
    pub fn footprint_bytes(&self) -> u32 {
        if self.rows_len == 0 {
            0
        } else {
            self.cfg.metadata_bytes() + self.blocks() * self.cfg.block_bytes()
        }
    }

    /// PSNs after Head the circular part covers: Head..=Tail.
    fn circular_span(&self) -> u32 {
        if self.rows_len == 0 {
            0
        } else {
            self.tail.since(self.head) + 1
        }
    }

    /// The row and bit that stand for `Head + d`, and how many of the following PSNs sit next
    /// to it in the same row; `None` past the last block.
    fn segment(&self, d: u32) -> Option<(usize, u32, u32)> {
        let b = self.cfg.block_bits;
        let span = self.circular_span();
        if d < span {
            let c = self.circular_bits();
            let mut phys = self.head_bit + d;
            if phys >= c {
                phys -= c;
            }
            let bit = phys % b;
            Some(((phys / b) as usize, bit, (b - bit).min(span - d)))
        } else {
            let l = d - span;
            (l < self.linear_bits()).then(|| {
                (
                    (u32::from(self.circular_rows) + l / b) as usize,
                    l % b,
                    b - l % b,
                )
            })
        }
    }

    /// Whether `psn` is held ahead of Head.
    pub fn contains(&self, psn: Psn, pool: &MemoryController) -> bool {
        match psn.serial_diff(self.head) {
            Some(d) if d > 0 => self
                .segment(d as u32)
                .is_some_and(|(row, bit, _)| pool.word(self.rows[row]) >> bit & 1 == 1),
            _ => false,
        }
    }

    /// Packets held ahead of Head.
    pub fn held(&self, pool: &MemoryController) -> u32 {
        self.rows[..usize::from(self.rows_len)]
            .iter()
            .map(|&id| pool.word(id).count_ones())
            .sum()
    }

    /// A data packet arrived: place it (§3.3.4).
    ///
    /// At Head it moves Head past every packet already held behind it, clearing their bits, and
    /// absorbs the linear part if that flushed the circular one. Ahead of Head it sets the
    /// packet's bit, first growing the bitmap if the packet lies past the last block. Behind
    /// Head, or already set, it is a duplicate. Refused packets leave the bitmap unchanged.
    pub fn insert(
        &mut self,
        psn: Psn,
        pool: &mut MemoryController,
    ) -> Result<Placement, Untracked> {
        debug_assert_eq!(&self.cfg, pool.config(), "a bitmap must stay with its pool");
        let d = match psn.serial_diff(self.head) {
            Some(d) if d >= 0 => d as u32,
            _ => return Ok(Placement::Duplicate),
        };
        if d == 0 {
            return Ok(Placement::InOrder {
                advanced: self.advance(pool),
            });
        }
        if d >= self.circular_span() + self.linear_bits() {
            self.grow(psn, d, pool)?;
        }
        let (row, bit, _) = self
            .segment(d)
            .expect("the bitmap was grown to cover the packet");
        let word = pool.word_mut(self.rows[row]);
        if *word >> bit & 1 == 1 {
            return Ok(Placement::Duplicate);
        }
        *word |= 1 << bit;
        Ok(Placement::OutOfOrder)
    }

    /// Adds the blocks that make `Head + d` trackable: the first circular block if there is
    /// none yet, then linear blocks. All of them or none.
    fn grow(&mut self, psn: Psn, d: u32, pool: &mut MemoryController) -> Result<(), Untracked> {
        let b = self.cfg.block_bits;
        let opening = self.rows_len == 0;
        let new_rows = if opening {
            // One circular block covering Head..Head+b, and linear blocks for the rest.
            1 + if d < b { 0 } else { (d - b) / b + 1 }
        } else {
            let linear_needed = (d - self.circular_span()) / b + 1;
            linear_needed - u32::from(self.rows_len - self.circular_rows)
        };
        if u32::from(self.rows_len) + new_rows > self.cfg.blocks_per_connection() {
            return Err(Untracked::BeyondCap {
                psn,
                reach: self.reach(),
            });
        }
        if opening {
            // The record first (from the pool's tail), and only if the blocks can follow it.
            self.record = pool.open_record(new_rows)?;
            self.circular_rows = 1;
            self.head_bit = 0;
            self.tail = self.head.add(b - 1);
        } else if pool.free_blocks() < new_rows {
            return Err(pool.note_exhausted().into());
        }
        for _ in 0..new_rows {
            self.rows[usize::from(self.rows_len)] = pool.alloc()?;
            self.rows_len += 1;
        }
        Ok(())
    }

    /// Head arrived: move it past the run of held packets behind it; returns how far it moved.
    fn advance(&mut self, pool: &mut MemoryController) -> u32 {
        if self.rows_len == 0 {
            self.head = self.head.next();
            return 1;
        }
        // Head's own bit is never set; count the set bits after it, a block segment at a time.
        let mut run = 1;
        while let Some((row, bit, len)) = self.segment(run) {
            let ones = (!(pool.word(self.rows[row]) >> bit))
                .trailing_zeros()
                .min(len);
            run += ones;
            if ones < len {
                break;
            }
        }
        // Clear the bits Head passes, so the ring can reuse them (§3.3.4: "resets the
        // consecutive bitmap entries with value = 1").
        let mut d = 0;
        while let Some((row, bit, len)) = self.segment(d).filter(|_| d < run) {
            let k = len.min(run - d);
            let mask = if k == 64 {
                !0
            } else {
                ((1u64 << k) - 1) << bit
            };
            *pool.word_mut(self.rows[row]) &= !mask;
            d += k;
        }
        let c = self.circular_bits();
        self.head = self.head.add(run);
        if self.circular_rows == self.rows_len {
            self.head_bit = (self.head_bit + run) % c;
            self.tail = self.head.add(c - 1);
        } else if self.head.serial_diff(self.tail).is_some_and(|x| x > 0) {
            // The circular part is flushed: absorb the linear part (§3.3.3). Head lies `k`
            // bits into the old linear rows, which follow the circular ones, so it sits at bit
            // c + k of the new ring and every held bit keeps its place.
            let k = self.head.since(self.tail.next());
            self.circular_rows = self.rows_len;
            let whole = self.circular_bits();
            self.head_bit = (c + k) % whole;
            self.tail = self.head.add(whole - 1);
        } else {
            self.head_bit = (self.head_bit + run) % c;
        }
        run
    }

    /// Returns every block and the state record to the pool (garbage collection, §3.5.3). Head
    /// stays where it is.
    pub fn release(&mut self, pool: &mut MemoryController) {
        for &id in &self.rows[..usize::from(self.rows_len)] {
            pool.free(id);
        }
        if self.rows_len > 0 {
            pool.close_record(self.record.take());
        }
        self.rows_len = 0;
        self.circular_rows = 0;
        self.head_bit = 0;
        self.tail = self.head;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    /// The defaults with the records kept outside the pool: these tests count bitmap blocks.
    fn bitmaps_only() -> OrderingConfig {
        OrderingConfig {
            records_in_pool: false,
            ..OrderingConfig::default()
        }
    }

    fn setup(block_bits: u32, cap_bits: u32, pool_blocks: u32) -> (HdBitmap, MemoryController) {
        let cfg = OrderingConfig {
            block_bits,
            cap_bits,
            pool_blocks,
            ..bitmaps_only()
        };
        let pool = MemoryController::new(cfg).expect("valid configuration");
        (HdBitmap::new(Psn::ZERO, &cfg), pool)
    }

    fn put(
        bm: &mut HdBitmap,
        pool: &mut MemoryController,
        psn: u32,
    ) -> Result<Placement, Untracked> {
        bm.insert(Psn::new(psn), pool)
    }

    /// Eunomia Figs. 5 and 6 with 8-bit blocks: packets 0, 6, 8 (a), then 11 and 15 (b), then
    /// 1–5 and 7 (c).
    #[test]
    fn figures_5_and_6() {
        let (mut bm, mut pool) = setup(8, 64, 16);
        assert_eq!(
            put(&mut bm, &mut pool, 0),
            Ok(Placement::InOrder { advanced: 1 })
        );
        assert_eq!(bm.blocks(), 0, "in order: no bitmap yet");
        // (a) 6 and 8 open a one-block circular bitmap covering 1..=8.
        assert_eq!(put(&mut bm, &mut pool, 6), Ok(Placement::OutOfOrder));
        assert_eq!(put(&mut bm, &mut pool, 8), Ok(Placement::OutOfOrder));
        assert_eq!((bm.circular_bits(), bm.linear_bits()), (8, 0));
        assert_eq!(bm.tail(), Some(Psn::new(8)));
        // (b) 11 does not fit: the size goes 8 → 16 with a linear block for 9..=16.
        assert_eq!(put(&mut bm, &mut pool, 11), Ok(Placement::OutOfOrder));
        assert_eq!((bm.circular_bits(), bm.linear_bits()), (8, 8));
        assert_eq!(bm.tail(), Some(Psn::new(8)), "Tail stays put");
        assert_eq!(put(&mut bm, &mut pool, 15), Ok(Placement::OutOfOrder));
        assert_eq!(bm.blocks(), 2, "15 fits the linear block");
        // Physically: row 0 holds 6 and 8 (bits 5, 7), row 1 holds 11 and 15 (bits 2, 6).
        assert_eq!(pool.word(bm.rows[0]), 1 << 5 | 1 << 7);
        assert_eq!(pool.word(bm.rows[1]), 1 << 2 | 1 << 6);
        // (c) 1..=5 come in order; 7 then joins 8 and flushes the circular part.
        for psn in 1..=4 {
            assert_eq!(
                put(&mut bm, &mut pool, psn),
                Ok(Placement::InOrder { advanced: 1 })
            );
        }
        assert_eq!(
            put(&mut bm, &mut pool, 5),
            Ok(Placement::InOrder { advanced: 2 })
        );
        assert_eq!(bm.head(), Psn::new(7));
        assert_eq!(
            (bm.circular_bits(), bm.linear_bits()),
            (8, 8),
            "not flushed yet"
        );
        assert_eq!(
            put(&mut bm, &mut pool, 7),
            Ok(Placement::InOrder { advanced: 2 })
        );
        assert_eq!(bm.head(), Psn::new(9));
        // Absorbed: one 16-bit ring, Head at row 1 bit 0, Tail = 9 + 15.
        assert_eq!((bm.circular_bits(), bm.linear_bits()), (16, 0));
        assert_eq!(bm.head_position(), (1, 0));
        assert_eq!(bm.tail(), Some(Psn::new(24)));
        assert_eq!(pool.word(bm.rows[0]), 0);
        assert_eq!(pool.word(bm.rows[1]), 1 << 2 | 1 << 6, "no bit moved");
        assert!(bm.contains(Psn::new(11), &pool) && bm.contains(Psn::new(15), &pool));
        // The ring now wraps: 20 lands in row 0 without growth.
        assert_eq!(put(&mut bm, &mut pool, 20), Ok(Placement::OutOfOrder));
        assert_eq!(pool.word(bm.rows[0]), 1 << 3);
        assert_eq!(bm.blocks(), 2);
        assert_eq!(bm.held(&pool), 3);
    }

    #[test]
    fn refusals_leave_the_bitmap_unchanged() {
        let (mut bm, mut pool) = setup(16, 64, 3);
        assert_eq!(put(&mut bm, &mut pool, 40), Ok(Placement::OutOfOrder)); // 3 blocks
        assert_eq!(bm.blocks(), 3);
        let before = bm.clone();
        // 4 blocks would cover 0..=63, but the pool is empty.
        assert_eq!(
            put(&mut bm, &mut pool, 50),
            Err(Untracked::NoMemory(PoolExhausted { pool_blocks: 3 }))
        );
        assert_eq!(bm, before);
        assert_eq!(bm.reach(), Psn::new(63));
        assert_eq!(
            put(&mut bm, &mut pool, 64),
            Err(Untracked::BeyondCap {
                psn: Psn::new(64),
                reach: Psn::new(63)
            })
        );
        assert_eq!(bm, before);
        bm.release(&mut pool);
        assert_eq!((pool.blocks_in_use(), pool.bytes_in_use()), (0, 0));
    }

    #[test]
    fn a_linear_part_freezes_the_base_until_absorbed() {
        let (mut bm, mut pool) = setup(16, 32, 8);
        assert_eq!(put(&mut bm, &mut pool, 5), Ok(Placement::OutOfOrder));
        assert_eq!(put(&mut bm, &mut pool, 20), Ok(Placement::OutOfOrder)); // linear block
        for psn in 0..5 {
            assert!(put(&mut bm, &mut pool, psn).is_ok());
        }
        // Head is 6, yet the circular slots behind it are not reusable: reach is still 0 + 31.
        assert_eq!(bm.head(), Psn::new(6));
        assert_eq!(bm.reach(), Psn::new(31));
        assert!(matches!(
            put(&mut bm, &mut pool, 32),
            Err(Untracked::BeyondCap { .. })
        ));
        for psn in 6..16 {
            assert!(put(&mut bm, &mut pool, psn).is_ok());
        }
        // Flushed and absorbed: a 32-bit ring from Head = 16.
        assert_eq!((bm.head(), bm.circular_bits()), (Psn::new(16), 32));
        assert_eq!(bm.reach(), Psn::new(47));
        assert_eq!(put(&mut bm, &mut pool, 40), Ok(Placement::OutOfOrder));
        assert_eq!(bm.blocks(), 2);
    }

    #[test]
    fn wraps_across_the_psn_space() {
        let cfg = OrderingConfig {
            block_bits: 8,
            cap_bits: 32,
            pool_blocks: 4,
            ..bitmaps_only()
        };
        let mut pool = MemoryController::new(cfg).expect("valid configuration");
        let mut bm = HdBitmap::new(Psn::new(0xFF_FFFC), &cfg);
        assert_eq!(bm.insert(Psn::new(5), &mut pool), Ok(Placement::OutOfOrder));
        assert_eq!(bm.blocks(), 2);
        assert_eq!(bm.reach(), Psn::new(27));
        for psn in [0xFF_FFFC, 0xFF_FFFD, 0xFF_FFFE, 0xFF_FFFF, 0, 1, 2, 3] {
            assert_eq!(
                bm.insert(Psn::new(psn), &mut pool),
                Ok(Placement::InOrder { advanced: 1 })
            );
        }
        assert_eq!(
            bm.insert(Psn::new(4), &mut pool),
            Ok(Placement::InOrder { advanced: 2 })
        );
        assert_eq!(bm.head(), Psn::new(6));
        assert_eq!(
            bm.insert(Psn::new(0xFF_FFFE), &mut pool),
            Ok(Placement::Duplicate)
        );
    }

    proptest! {
        /// Against a set of received PSNs: every placement is classified as the set says, Head
        /// is the first missing PSN, every packet within reach is tracked while the pool has
        /// blocks, and the block count never passes the cap.
        #[test]
        fn matches_a_set_of_received_psns(
            block_bits in prop::sample::select(vec![8u32, 16, 32, 64]),
            cap_blocks in 1u32..=8,
            pool_blocks in 1u32..=8,
            start in 0u32..crate::seq::PSN_SPACE,
            arrivals in prop::collection::vec(0u32..300, 0..300),
        ) {
            let cfg = OrderingConfig {
                block_bits, cap_bits: cap_blocks * block_bits, pool_blocks, ..bitmaps_only()
            };
            let mut pool = MemoryController::new(cfg).expect("valid configuration");
            let start = Psn::new(start);
            let mut bm = HdBitmap::new(start, &cfg);
            let mut received = BTreeSet::new();
            let mut head = 0u32;
            for off in arrivals {
                let psn = start.add(off);
                let (reach, free, blocks) = (bm.reach().since(start), pool.free_blocks(), bm.blocks());
                let before = bm.clone();
                let got = bm.insert(psn, &mut pool);
                if got.is_err() {
                    prop_assert_eq!(&bm, &before, "a refusal changed the bitmap");
                }
                if off < head || received.contains(&off) {
                    prop_assert_eq!(got, Ok(Placement::Duplicate));
                } else if off == head {
                    received.insert(off);
                    while received.contains(&head) {
                        head += 1;
                    }
                    prop_assert_eq!(got, Ok(Placement::InOrder { advanced: head - off }));
                } else {
                    match got {
                        Ok(p) => {
                            prop_assert_eq!(p, Placement::OutOfOrder);
                            prop_assert!(off <= reach);
                            received.insert(off);
                        }
                        Err(Untracked::BeyondCap { .. }) => prop_assert!(off > reach),
                        Err(Untracked::ConnectionLimit { .. }) => {
                            prop_assert!(false, "one connection is within any limit");
                        }
                        Err(Untracked::NoMemory(_)) => {
                            // Refused only for want of the blocks the cap still allows.
                            prop_assert!(off <= reach);
                            prop_assert!(free < cap_blocks - blocks);
                        }
                    }
                }
                prop_assert_eq!(bm.head(), start.add(head));
                prop_assert!(bm.blocks() <= cap_blocks && bm.blocks() == pool.blocks_in_use());
                let held = received.range(head..).count() as u32;
                prop_assert_eq!(bm.held(&pool), held);
                for &r in received.range(head..) {
                    prop_assert!(bm.contains(start.add(r), &pool));
                }
            }
            bm.release(&mut pool);
            prop_assert_eq!(pool.blocks_in_use(), 0);
        }
    }
}
