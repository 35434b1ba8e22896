//! The BDP-sized ring bitmap at the heart of IRN's loss tracking (IRN §6.2).
//!
//! Bit `i` stands for the packet `i` places after the head: the receiver's expected PSN, or the
//! sender's cumulative acknowledgement. The storage is fixed when the queue pair is created and
//! never grows: with BDP-FC no sender has more than the cap outstanding, so a bit beyond the
//! window is a protocol violation reported as [`OutOfWindow`], not a reason to reallocate.
//!
//! IRN's hardware reduces all its bitmap work to three operations, and this type offers exactly
//! those, each over 64-bit words (the FPGA design used 32-bit chunks in parallel):
//! - **find first zero** ([`RingBitmap::first_zero`]): the next expected PSN in receiveData, the
//!   next hole to retransmit in txFree;
//! - **popcount** ([`RingBitmap::count_ones`]): how many messages complete when the head advances;
//! - **advance the head** ([`RingBitmap::advance`]): a shift, in receiveData and receiveAck.

/// A bit was addressed beyond the window the bitmap covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("offset {offset} is outside the {capacity}-packet window")]
pub struct OutOfWindow {
    pub offset: u32,
    pub capacity: u32,
}

/// A fixed-capacity circular bitmap addressed by offset from its head.
///
/// It also counts its set bits: in the common case, packets arriving and being acknowledged in
/// order, the bitmap is empty, and then every operation is answered without reading the words
/// (which live on the heap, away from the rest of the queue pair's state).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RingBitmap {
    words: Box<[u64]>,
    /// Physical bit index of logical offset 0.
    head: u32,
    /// Number of set bits.
    ones: u32,
}

impl RingBitmap {
    /// A bitmap covering at least `window` packets (rounded up to whole 64-bit words, and at least
    /// one word; at most 2^32 - 64, so the capacity fits a `u32`).
    pub fn new(window: u32) -> Self {
        let words = window.div_ceil(64).clamp(1, u32::MAX / 64);
        RingBitmap {
            words: vec![0; words as usize].into_boxed_slice(),
            head: 0,
            ones: 0,
        }
    }

    /// How many packets past the head the bitmap can track.
    #[inline]
    pub fn capacity(&self) -> u32 {
        // `new` keeps this within a `u32`.
        self.words.len() as u32 * 64
    }

    fn check(&self, offset: u32) -> Result<(), OutOfWindow> {
        if offset < self.capacity() {
            Ok(())
        } else {
            Err(OutOfWindow {
                offset,
                capacity: self.capacity(),
            })
        }
    }

    /// Physical (word, bit) of a logical offset already known to be in the window.
    fn locate(&self, offset: u32) -> (usize, u32) {
        let mut phys = self.head + offset;
        if phys >= self.capacity() {
            phys -= self.capacity();
        }
        ((phys / 64) as usize, phys % 64)
    }

    /// Whether the bit `offset` places after the head is set.
    pub fn get(&self, offset: u32) -> Result<bool, OutOfWindow> {
        self.check(offset)?;
        let (w, b) = self.locate(offset);
        Ok(self.words[w] >> b & 1 == 1)
    }

    /// Sets the bit `offset` places after the head; returns whether it was already set.
    pub fn set(&mut self, offset: u32) -> Result<bool, OutOfWindow> {
        self.check(offset)?;
        let (w, b) = self.locate(offset);
        let was = self.words[w] >> b & 1 == 1;
        self.words[w] |= 1 << b;
        self.ones += u32::from(!was);
        Ok(was)
    }

    /// The 64 logical bits starting at `offset` (bits past the window read as the wrapped-around
    /// start of the ring; callers mask them off).
    fn window64(&self, offset: u32) -> u64 {
        let (w, b) = self.locate(offset);
        let lo = self.words[w] >> b;
        if b == 0 {
            lo
        } else {
            let next = if w + 1 == self.words.len() { 0 } else { w + 1 };
            lo | self.words[next] << (64 - b)
        }
    }

    /// The first clear bit in `from..to` (offsets from the head, `to` clamped to the capacity),
    /// or `None` if every bit in the range is set.
    #[inline]
    pub fn first_zero(&self, from: u32, to: u32) -> Option<u32> {
        let to = to.min(self.capacity());
        if self.ones == 0 {
            return (from < to).then_some(from);
        }
        self.scan_zero(from, to)
    }

    /// [`first_zero`](Self::first_zero) over the words, `to` already clamped.
    fn scan_zero(&self, from: u32, to: u32) -> Option<u32> {
        let mut at = from;
        while at < to {
            let span = (to - at).min(64);
            let mut zeros = !self.window64(at);
            if span < 64 {
                zeros &= (1u64 << span) - 1;
            }
            if zeros != 0 {
                return Some(at + zeros.trailing_zeros());
            }
            at += span;
        }
        None
    }

    /// Number of set bits in `0..n` (offsets from the head, `n` clamped to the capacity).
    pub fn count_ones(&self, n: u32) -> u32 {
        if self.ones == 0 {
            return 0;
        }
        let n = n.min(self.capacity());
        let mut at = 0;
        let mut ones = 0;
        while at < n {
            let span = (n - at).min(64);
            let mut bits = self.window64(at);
            if span < 64 {
                bits &= (1u64 << span) - 1;
            }
            ones += bits.count_ones();
            at += span;
        }
        ones
    }

    /// Moves the head `n` packets forward, clearing the bits it passes so they can stand for the
    /// packets that enter the far end of the window.
    #[inline]
    pub fn advance(&mut self, n: u32) {
        if n >= self.capacity() {
            self.clear();
            return;
        }
        if self.ones != 0 {
            self.clear_front(n);
        }
        self.head += n;
        if self.head >= self.capacity() {
            self.head -= self.capacity();
        }
    }

    /// Clears the bits at offsets `0..n` (`n` below the capacity).
    fn clear_front(&mut self, n: u32) {
        let mut cleared = 0;
        while cleared < n {
            let (w, b) = self.locate(cleared);
            let span = (64 - b).min(n - cleared);
            let mask = if span == 64 {
                u64::MAX
            } else {
                ((1u64 << span) - 1) << b
            };
            self.ones -= (self.words[w] & mask).count_ones();
            self.words[w] &= !mask;
            cleared += span;
        }
    }

    /// Clears every bit and resets the head.
    pub fn clear(&mut self) {
        if self.ones != 0 {
            self.words.fill(0);
            self.ones = 0;
        }
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    #[test]
    fn capacity_rounds_up_to_words() {
        assert_eq!(RingBitmap::new(110).capacity(), 128);
        assert_eq!(RingBitmap::new(128).capacity(), 128);
        assert_eq!(RingBitmap::new(0).capacity(), 64);
    }

    #[test]
    fn out_of_window_is_an_error_not_a_resize() {
        let mut b = RingBitmap::new(64);
        assert_eq!(
            b.set(64),
            Err(OutOfWindow {
                offset: 64,
                capacity: 64
            })
        );
        assert_eq!(
            b.get(1000),
            Err(OutOfWindow {
                offset: 1000,
                capacity: 64
            })
        );
        assert_eq!(b.capacity(), 64);
    }

    #[test]
    fn first_zero_popcount_and_advance_across_the_ring_edge() {
        let mut b = RingBitmap::new(128);
        b.advance(120); // head near the physical end, so the window wraps
        for off in [0, 1, 2, 3, 5, 9, 70] {
            assert_eq!(b.set(off), Ok(false));
        }
        assert_eq!(b.set(3), Ok(true));
        assert_eq!(b.first_zero(0, 128), Some(4));
        assert_eq!(b.first_zero(5, 128), Some(6));
        assert_eq!(b.first_zero(0, 4), None);
        assert_eq!(b.count_ones(6), 5);
        assert_eq!(b.count_ones(128), 7);
        b.advance(4);
        assert_eq!(b.get(1), Ok(true)); // old offset 5
        assert_eq!(b.get(0), Ok(false));
        assert_eq!(b.count_ones(128), 3);
        // Bits that left at the head come back clear at the far end.
        assert_eq!(b.get(127), Ok(false));
        b.advance(1000);
        assert_eq!(b.count_ones(128), 0);
    }

    /// Reference model: a deque of bools, shifted on advance.
    #[derive(Debug, Clone)]
    enum Op {
        Set(u32),
        Advance(u32),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![3 => (0u32..200).prop_map(Op::Set), 1 => (0u32..150).prop_map(Op::Advance)]
    }

    proptest! {
        #[test]
        fn matches_a_deque_of_bools(window in 1u32..200, ops in prop::collection::vec(op(), 0..200)) {
            let mut b = RingBitmap::new(window);
            let cap = b.capacity();
            let mut model: VecDeque<bool> = VecDeque::from(vec![false; cap as usize]);
            for op in ops {
                match op {
                    Op::Set(off) => {
                        let r = b.set(off);
                        if off < cap {
                            prop_assert_eq!(r, Ok(model[off as usize]));
                            model[off as usize] = true;
                        } else {
                            prop_assert!(r.is_err());
                        }
                    }
                    Op::Advance(n) => {
                        b.advance(n);
                        for _ in 0..n.min(cap) {
                            model.pop_front();
                            model.push_back(false);
                        }
                    }
                }
                let from = cap / 3;
                let want_zero = (from..cap).find(|&i| !model[i as usize]);
                prop_assert_eq!(b.first_zero(from, cap), want_zero);
                let want_ones = model.iter().take((cap / 2) as usize).filter(|&&x| x).count() as u32;
                prop_assert_eq!(b.count_ones(cap / 2), want_ones);
                prop_assert_eq!(b.count_ones(cap), model.iter().filter(|&&x| x).count() as u32);
            }
        }
    }
}
