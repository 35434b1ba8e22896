//! 24-bit packet sequence numbers with serial-number arithmetic.
//!
//! RoCE's BTH carries a 24-bit PSN that wraps from `0xFF_FFFF` to `0`. Two PSNs are compared the
//! way RFC 1982 compares serial numbers: `a < b` when `b` is less than half the space (2^23)
//! ahead of `a`. Transports never hold more than a BDP of packets outstanding, far below 2^23, so
//! every comparison they make is well defined across the wrap.

use core::cmp::Ordering;
use core::fmt;

/// Number of distinct PSNs.
pub const PSN_SPACE: u32 = 1 << 24;
const PSN_MASK: u32 = PSN_SPACE - 1;
const HALF: u32 = PSN_SPACE / 2;

/// A packet sequence number: 24 bits, wrapping.
///
/// `PartialOrd` is serial comparison: it is only a partial order (`a` and `a + 2^23` are
/// incomparable), so `Psn` deliberately does not implement `Ord`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Psn(u32);

impl Psn {
    pub const ZERO: Psn = Psn(0);
    /// The largest PSN, just before the wrap.
    pub const MAX: Psn = Psn(PSN_MASK);

    /// A PSN from the low 24 bits of `value`.
    pub const fn new(value: u32) -> Self {
        Psn(value & PSN_MASK)
    }

    pub const fn value(self) -> u32 {
        self.0
    }

    /// The PSN `n` packets later, wrapping at 2^24.
    #[must_use]
    pub const fn add(self, n: u32) -> Psn {
        Psn(self.0.wrapping_add(n) & PSN_MASK)
    }

    /// The PSN `n` packets earlier, wrapping at 2^24.
    #[must_use]
    pub const fn sub(self, n: u32) -> Psn {
        Psn(self.0.wrapping_sub(n) & PSN_MASK)
    }

    /// The next PSN.
    #[must_use]
    pub const fn next(self) -> Psn {
        self.add(1)
    }

    /// How many packets `self` is ahead of `earlier`, modulo 2^24: `earlier.add(d) == self`.
    ///
    /// This is the forward distance, always in `0..2^24`; use it when `self` is known not to be
    /// behind `earlier` (e.g. the next PSN to send versus the cumulative ACK).
    pub const fn since(self, earlier: Psn) -> u32 {
        self.0.wrapping_sub(earlier.0) & PSN_MASK
    }

    /// Signed serial distance from `other` to `self`, in `-2^23..2^23`; `None` for the one
    /// ambiguous distance of exactly 2^23.
    pub const fn serial_diff(self, other: Psn) -> Option<i32> {
        let d = self.since(other);
        if d == HALF {
            None
        } else if d < HALF {
            Some(d as i32)
        } else {
            Some(d as i32 - PSN_SPACE as i32)
        }
    }

    /// True if `self` lies in the half-open window `[start, start + len)`.
    pub const fn in_window(self, start: Psn, len: u32) -> bool {
        self.since(start) < len
    }

    /// The later of two PSNs in serial order (`self` if they are incomparable).
    #[must_use]
    pub fn max_serial(self, other: Psn) -> Psn {
        if other > self {
            other
        } else {
            self
        }
    }
}

impl PartialOrd for Psn {
    fn partial_cmp(&self, other: &Psn) -> Option<Ordering> {
        self.serial_diff(*other).map(|d| d.cmp(&0))
    }
}

impl fmt::Display for Psn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn wraps_at_24_bits() {
        assert_eq!(Psn::MAX.next(), Psn::ZERO);
        assert_eq!(Psn::ZERO.sub(1), Psn::MAX);
        assert_eq!(Psn::new(0x0100_0005), Psn::new(5));
        assert_eq!(Psn::new(0xFF_FFFE).add(5), Psn::new(3));
    }

    #[test]
    fn serial_order_across_the_wrap() {
        let cases: &[(u32, u32, Option<Ordering>)] = &[
            (0, 1, Some(Ordering::Less)),
            (1, 0, Some(Ordering::Greater)),
            (7, 7, Some(Ordering::Equal)),
            (0xFF_FFFF, 0, Some(Ordering::Less)),
            (0, 0xFF_FFFF, Some(Ordering::Greater)),
            (0xFF_FFF0, 0x10, Some(Ordering::Less)),
            (0x10, 0xFF_FFF0, Some(Ordering::Greater)),
            (0, HALF - 1, Some(Ordering::Less)),
            (0, HALF, None),
            (0, HALF + 1, Some(Ordering::Greater)),
        ];
        for &(a, b, want) in cases {
            assert_eq!(Psn::new(a).partial_cmp(&Psn::new(b)), want, "{a} vs {b}");
        }
    }

    #[test]
    fn distances_across_the_wrap() {
        assert_eq!(Psn::new(2).since(Psn::MAX), 3);
        assert_eq!(Psn::new(2).serial_diff(Psn::MAX), Some(3));
        assert_eq!(Psn::MAX.serial_diff(Psn::new(2)), Some(-3));
        assert!(Psn::new(1).in_window(Psn::new(0xFF_FFFE), 4));
        assert!(!Psn::new(2).in_window(Psn::new(0xFF_FFFE), 4));
        assert_eq!(Psn::new(3).max_serial(Psn::MAX), Psn::new(3));
    }

    proptest! {
        #[test]
        fn add_then_since_is_identity(start in 0u32..PSN_SPACE, n in 0u32..PSN_SPACE) {
            let a = Psn::new(start);
            prop_assert_eq!(a.add(n).since(a), n);
            prop_assert_eq!(a.add(n).sub(n), a);
        }

        #[test]
        fn order_is_antisymmetric(a in 0u32..PSN_SPACE, b in 0u32..PSN_SPACE) {
            let (a, b) = (Psn::new(a), Psn::new(b));
            prop_assert_eq!(a.partial_cmp(&b).map(Ordering::reverse), b.partial_cmp(&a));
        }

        #[test]
        fn small_steps_are_always_later(a in 0u32..PSN_SPACE, n in 1u32..HALF) {
            let a = Psn::new(a);
            prop_assert!(a.add(n) > a);
            prop_assert!(a.sub(n) < a);
        }
    }
}
