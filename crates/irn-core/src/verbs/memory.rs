//! Registered memory: the bytes a queue pair's verbs read from and place into.
//!
//! A real byte buffer rather than a byte count, so that out-of-order placement (IRN §5.3) can be
//! checked byte for byte against an in-order execution. Every access is bounds-checked and a bad
//! address is an [`OutOfBounds`] error, never a panic: addresses come from the application and,
//! at a responder, from packets.

use core::ops::Range;

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
#[derive(Clone, PartialEq, Eq)]
pub struct MemoryRegion {
    bytes: Vec<u8>,
}

impl core::fmt::Debug for MemoryRegion {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "MemoryRegion({} bytes)", self.bytes.len())
    }
}

impl MemoryRegion {
    /// A zero-filled region of `size` bytes.
    pub fn new(size: usize) -> Self {
        MemoryRegion {
            bytes: vec![0; size],
        }
    }

    /// A region holding `bytes`.
    pub fn from_vec(bytes: Vec<u8>) -> Self {
        MemoryRegion { bytes }
    }

    /// Size in bytes.
    pub fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The whole region.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The whole region, for the application to fill.
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        &mut self.bytes
    }

    /// The index range of `len` bytes at `addr`, if they lie inside the region.
    pub fn range(&self, addr: u64, len: u64) -> Result<Range<usize>, OutOfBounds> {
        fits(addr, len, self.len())?;
        // Both ends are at most `self.len()`, which came from a usize.
        Ok(addr as usize..(addr + len) as usize)
    }

    /// The `len` bytes at `addr`.
    pub fn read(&self, addr: u64, len: u64) -> Result<&[u8], OutOfBounds> {
        let r = self.range(addr, len)?;
        Ok(&self.bytes[r])
    }

    /// Copies `data` to `addr`.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), OutOfBounds> {
        let r = self.range(addr, data.len() as u64)?;
        self.bytes[r].copy_from_slice(data);
        Ok(())
    }

    /// The little-endian 64-bit word at `addr` (atomics operate on these).
    pub fn read_u64(&self, addr: u64) -> Result<u64, OutOfBounds> {
        let b = self.read(addr, 8)?;
        let mut w = [0u8; 8];
        w.copy_from_slice(b);
        Ok(u64::from_le_bytes(w))
    }

    /// Stores `value` little-endian at `addr`.
    pub fn write_u64(&mut self, addr: u64, value: u64) -> Result<(), OutOfBounds> {
        self.write(addr, &value.to_le_bytes())
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
        assert_eq!(m.read(10, 6), Ok(&[1u8, 2, 3, 4, 5, 6][..]));
        let e = OutOfBounds {
            addr: 11,
            len: 6,
            size: 16,
        };
        assert_eq!(m.write(11, &[0; 6]), Err(e));
        assert_eq!(m.read(11, 6), Err(e));
        assert!(m.read(u64::MAX, 2).is_err());
        assert_eq!(m.read(16, 0), Ok(&[][..]));
        assert!(m.read(17, 0).is_err());
        assert!(m.read_u64(9).is_err());
        m.write_u64(8, 0x0102_0304_0506_0708).unwrap();
        assert_eq!(m.read_u64(8), Ok(0x0102_0304_0506_0708));
        assert_eq!(m.as_bytes()[8], 0x08, "little-endian");
    }
}
