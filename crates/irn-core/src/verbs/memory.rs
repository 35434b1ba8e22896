//! Registered memory: the bytes a queue pair's verbs read from and place into.
//!
//! A real byte buffer rather than a byte count, so that out-of-order placement (IRN §5.3) can be
//! checked byte for byte against an in-order execution. Every access is bounds-checked and a bad
//! address is an [`OutOfBounds`] error, never a panic: addresses come from the application and,
//! at a responder, from packets.

use core::ops::Range;
use std::borrow::Cow;

/// An access that does not fit in the memory region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("bytes {addr}..{addr}+{len} are outside the {size}-byte memory region")]
pub struct OutOfBounds {
    pub addr: u64,
    pub len: u64,
    pub size: u64,
}

/// One queue pair's memory region, addressed from 0.
///
/// irn models one region per QP and no keys: a remote address is an offset into the peer's
/// region, whose size both ends learn when the connection is set up (as applications exchange
/// address, length and rkey of a registered region).
///
/// A region is stored bytes, or a [`pattern`](Self::pattern) that is generated as it is read and
/// stored only once something writes to it: a simulator's source buffers then cost no memory,
/// which halves what a workload of large messages holds.
#[derive(Clone)]
pub struct MemoryRegion {
    contents: Contents,
}

#[derive(Clone)]
enum Contents {
    Bytes(Vec<u8>),
    /// `len` bytes, byte `i` being [`pattern_byte`]`(i, seed)`.
    Pattern {
        len: u64,
        seed: u32,
    },
}

/// Byte `i` of the pattern with `seed`: it differs between seeds and along the region (and is
/// never zero, so it cannot pass for untouched memory).
pub fn pattern_byte(i: u64, seed: u32) -> u8 {
    (i as u32).wrapping_mul(131).wrapping_add(seed) as u8 | 1
}

impl core::fmt::Debug for MemoryRegion {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.contents {
            Contents::Bytes(ref b) => write!(f, "MemoryRegion({} bytes)", b.len()),
            Contents::Pattern { len, seed } => {
                write!(f, "MemoryRegion({len} bytes of pattern {seed})")
            }
        }
    }
}

/// Regions are equal when their bytes are, however they are held. Compared a chunk at a time,
/// so a pattern is never generated whole.
impl PartialEq for MemoryRegion {
    fn eq(&self, other: &Self) -> bool {
        const CHUNK: u64 = 1 << 16;
        let len = self.len();
        len == other.len()
            && (0..len).step_by(CHUNK as usize).all(|at| {
                let n = CHUNK.min(len - at);
                self.read(at, n) == other.read(at, n)
            })
    }
}

impl Eq for MemoryRegion {}

impl MemoryRegion {
    /// A zero-filled region of `size` bytes.
    pub fn new(size: usize) -> Self {
        Self::from_vec(vec![0; size])
    }

    /// A region holding `bytes`.
    pub fn from_vec(bytes: Vec<u8>) -> Self {
        MemoryRegion {
            contents: Contents::Bytes(bytes),
        }
    }

    /// A region of `size` bytes holding the pattern [`pattern_byte`]`(i, seed)`, generated when
    /// read; the first write stores it.
    pub fn pattern(size: usize, seed: u32) -> Self {
        MemoryRegion {
            contents: Contents::Pattern {
                len: size as u64,
                seed,
            },
        }
    }

    /// Size in bytes.
    pub fn len(&self) -> u64 {
        match self.contents {
            Contents::Bytes(ref b) => b.len() as u64,
            Contents::Pattern { len, .. } => len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The whole region.
    pub fn contents(&self) -> Cow<'_, [u8]> {
        self.read(0, self.len())
            .expect("the whole region fits in the region")
    }

    /// The whole region, for the application to fill (a pattern is stored first).
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        self.stored()
    }

    /// The index range of `len` bytes at `addr`, if they lie inside the region.
    pub fn range(&self, addr: u64, len: u64) -> Result<Range<usize>, OutOfBounds> {
        fits(addr, len, self.len())?;
        // Both ends are at most `self.len()`, which came from a usize.
        Ok(addr as usize..(addr + len) as usize)
    }

    /// The `len` bytes at `addr`: borrowed when stored, generated from a pattern.
    pub fn read(&self, addr: u64, len: u64) -> Result<Cow<'_, [u8]>, OutOfBounds> {
        let r = self.range(addr, len)?;
        Ok(match self.contents {
            Contents::Bytes(ref b) => Cow::Borrowed(&b[r]),
            Contents::Pattern { seed, .. } => Cow::Owned(
                (r.start as u64..r.end as u64)
                    .map(|i| pattern_byte(i, seed))
                    .collect(),
            ),
        })
    }

    /// Copies `data` to `addr`.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), OutOfBounds> {
        let r = self.range(addr, data.len() as u64)?;
        self.stored()[r].copy_from_slice(data);
        Ok(())
    }

    /// The little-endian 64-bit word at `addr` (atomics operate on these).
    pub fn read_u64(&self, addr: u64) -> Result<u64, OutOfBounds> {
        let b = self.read(addr, 8)?;
        let mut w = [0u8; 8];
        w.copy_from_slice(&b);
        Ok(u64::from_le_bytes(w))
    }

    /// Stores `value` little-endian at `addr`.
    pub fn write_u64(&mut self, addr: u64, value: u64) -> Result<(), OutOfBounds> {
        self.write(addr, &value.to_le_bytes())
    }

    /// The bytes, stored from the pattern if they were not yet.
    fn stored(&mut self) -> &mut [u8] {
        if let Contents::Pattern { .. } = self.contents {
            self.contents = Contents::Bytes(self.contents().into_owned());
        }
        match self.contents {
            Contents::Bytes(ref mut b) => b,
            Contents::Pattern { .. } => unreachable!("just stored"),
        }
    }
}

/// Whether `len` bytes at `addr` fit in a region of `size` bytes (without overflowing).
pub(crate) fn fits(addr: u64, len: u64, size: u64) -> Result<(), OutOfBounds> {
    match addr.checked_add(len) {
        Some(end) if end <= size => Ok(()),
        _ => Err(OutOfBounds { addr, len, size }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accesses_are_bounds_checked_not_panicking() {
        let mut m = MemoryRegion::new(16);
        assert_eq!(m.write(10, &[1, 2, 3, 4, 5, 6]), Ok(()));
        assert_eq!(m.read(10, 6).unwrap(), &[1u8, 2, 3, 4, 5, 6][..]);
        let e = OutOfBounds {
            addr: 11,
            len: 6,
            size: 16,
        };
        assert_eq!(m.write(11, &[0; 6]), Err(e));
        assert_eq!(m.read(11, 6), Err(e));
        assert!(m.read(u64::MAX, 2).is_err());
        assert_eq!(m.read(16, 0).unwrap(), &[][..]);
        assert!(m.read(17, 0).is_err());
        assert!(m.read_u64(9).is_err());
        m.write_u64(8, 0x0102_0304_0506_0708).unwrap();
        assert_eq!(m.read_u64(8), Ok(0x0102_0304_0506_0708));
        assert_eq!(m.contents()[8], 0x08, "little-endian");
    }

    #[test]
    fn a_pattern_reads_as_its_bytes_and_is_stored_on_the_first_write() {
        let bytes: Vec<u8> = (0..40).map(|i| pattern_byte(i, 7)).collect();
        let mut m = MemoryRegion::pattern(40, 7);
        assert_eq!(m, MemoryRegion::from_vec(bytes.clone()));
        assert_eq!(m.read(3, 5).unwrap(), &bytes[3..8]);
        assert!(
            matches!(m.read(3, 5), Ok(Cow::Owned(_))),
            "generated, not stored"
        );
        assert!(m.read(36, 5).is_err());
        assert_ne!(m, MemoryRegion::pattern(40, 8));
        m.write_u64(8, 0).unwrap();
        assert!(matches!(m.read(3, 5), Ok(Cow::Borrowed(_))), "stored now");
        assert_eq!(m.read(0, 8).unwrap(), &bytes[..8]);
        assert_eq!(m.read_u64(8), Ok(0));
        assert_eq!(m.read(16, 24).unwrap(), &bytes[16..]);
        assert!(bytes.iter().all(|&b| b != 0));
        // Compared a chunk at a time: a difference past the first chunk still counts.
        let big = MemoryRegion::pattern(200_000, 3);
        let mut copy = MemoryRegion::from_vec(big.contents().into_owned());
        assert_eq!(big, copy);
        copy.as_bytes_mut()[150_000] ^= 1;
        assert_ne!(big, copy);
    }
}
