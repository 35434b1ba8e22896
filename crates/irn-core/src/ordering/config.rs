//! The ordering layer's sizes: bitmap block, cap per connection, and the NIC's block pool.

/// Sizes of Eunomia's on-NIC ordering layer, shared by every connection of one NIC.
///
/// The defaults are the paper's evaluation settings: 16-bit blocks, a 256-bit cap (§3.4, §4),
/// a pool of 1024 blocks (the FPGA memory controller's `master_array` of 1024 two-byte
/// blocks, §4) that holds the state records too, and 256 tracked connections (§4's one-byte
/// connection IDs). A [`MemoryController`](super::MemoryController) is built only from a configuration
/// that passes [`validate`](Self::validate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OrderingConfig {
    /// Bits per bitmap block: the unit a connection's bitmap grows by (§3.3.2) and the memory
    /// controller allocates (§3.4).
    pub block_bits: u32,
    /// Largest bitmap one connection may hold, in bits (§3.3.2: no connection may starve the
    /// others). A multiple of `block_bits`.
    pub cap_bits: u32,
    /// Blocks in the NIC's pool, shared by all connections.
    pub pool_blocks: u32,
    /// Connections one NIC tracks at once: the entries of the memory controller's
    /// `metadata_start_index` (§4), one per connection holding a state record. A connection
    /// that would open a record past it is refused (its packet dropped and NACKed).
    pub max_connections: u32,
    /// Whether each connection's state record ([`metadata_bytes`](Self::metadata_bytes)) is
    /// carved out of the pool, as the FPGA's `master_array` holds it (§4): records from the
    /// pool's tail, bitmap blocks from its head, so the pool bounds records and blocks
    /// together. `false` keeps the records beside the pool (counted in the footprint, never
    /// refused for room), so `pool_blocks` bounds bitmap blocks alone.
    pub records_in_pool: bool,
}

impl Default for OrderingConfig {
    fn default() -> Self {
        OrderingConfig {
            block_bits: Self::DEFAULT_BLOCK_BITS,
            cap_bits: Self::DEFAULT_CAP_BITS,
            pool_blocks: Self::DEFAULT_POOL_BLOCKS,
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            records_in_pool: true,
        }
    }
}

impl OrderingConfig {
    /// Eunomia §4/§5: "a 16-bit block size".
    pub const DEFAULT_BLOCK_BITS: u32 = 16;
    /// Eunomia §4/§5: "the maximum bitmap size is set to 256 bits".
    pub const DEFAULT_CAP_BITS: u32 = 256;
    /// Eunomia §4: the FPGA's master array holds 1024 blocks.
    pub const DEFAULT_POOL_BLOCKS: u32 = 1024;
    /// Eunomia §4: `metadata_start_index` names a connection by one byte, so it tracks at most
    /// 256 at once.
    pub const DEFAULT_MAX_CONNECTIONS: u32 = 256;
    /// Most connections a NIC may be configured to track: record addresses are two bytes.
    pub const MAX_CONNECTIONS: u32 = 1 << 16;
    /// Most blocks one connection can hold: the fixed length of its block address table.
    pub const MAX_BLOCKS_PER_CONNECTION: u32 = 64;
    /// Most blocks in a pool: block addresses are two bytes (§3.4, Fig. 7).
    pub const MAX_POOL_BLOCKS: u32 = 1 << 16;

    /// Bytes of per-connection state besides the block addresses (Table 1, Fig. 7): Head, Tail
    /// and Last Seq (4 B each), Head BM ID, Head BM Index, Circular BM Size and Dynamic Size
    /// (1 B each).
    pub const STATE_BYTES: u32 = 16;
    /// Bytes per entry of a connection's block address table (Fig. 7: "2 bytes" per block).
    pub const BLOCK_ADDR_BYTES: u32 = 2;
    /// Bytes every connection keeps in its own context, reordering or not: the Dynamic BM
    /// Address (DBA) pointing at its state in the memory controller (§3.4), NULL until needed.
    pub const DBA_BYTES: u32 = 4;

    /// Checks the sizes can work together. Each error names the field, its value and what is
    /// allowed.
    pub fn validate(&self) -> Result<(), OrderingConfigError> {
        if !matches!(self.block_bits, 8 | 16 | 32 | 64) {
            return Err(OrderingConfigError::BlockBits(self.block_bits));
        }
        let max_cap = self.block_bits * Self::MAX_BLOCKS_PER_CONNECTION;
        if self.cap_bits == 0
            || !self.cap_bits.is_multiple_of(self.block_bits)
            || self.cap_bits > max_cap
        {
            return Err(OrderingConfigError::CapBits {
                cap_bits: self.cap_bits,
                block_bits: self.block_bits,
                max: max_cap,
            });
        }
        if self.pool_blocks == 0 || self.pool_blocks > Self::MAX_POOL_BLOCKS {
            return Err(OrderingConfigError::PoolBlocks(self.pool_blocks));
        }
        if self.max_connections == 0 || self.max_connections > Self::MAX_CONNECTIONS {
            return Err(OrderingConfigError::MaxConnections(self.max_connections));
        }
        // A record opens only with room for the bitmap block that follows it: a pool of one
        // record's blocks alone would refuse every connection.
        if self.records_in_pool && self.record_blocks() >= self.pool_blocks {
            return Err(OrderingConfigError::RecordTooLarge {
                pool_blocks: self.pool_blocks,
                record_blocks: self.record_blocks(),
            });
        }
        Ok(())
    }

    /// Blocks one connection may hold: `cap_bits / block_bits`.
    pub const fn blocks_per_connection(&self) -> u32 {
        self.cap_bits / self.block_bits
    }

    /// Bytes of one bitmap block.
    pub const fn block_bytes(&self) -> u32 {
        self.block_bits / 8
    }

    /// Bytes the memory controller reserves for a connection's state when its first
    /// out-of-order packet arrives (Fig. 7): [`STATE_BYTES`](Self::STATE_BYTES) plus a two-byte
    /// address for every block the connection might ever hold. The table is sized by the cap,
    /// not by the blocks in use, because it is a fixed record. With the defaults this is
    /// 16 + 2 × 256/16 = 48 bytes, the "additional 48 bytes per connection for metadata" of §4.
    pub const fn metadata_bytes(&self) -> u32 {
        Self::STATE_BYTES + Self::BLOCK_ADDR_BYTES * self.blocks_per_connection()
    }

    /// Consecutive pool blocks one state record takes when records are in the pool: 24 with
    /// the defaults, the FPGA's "24 blocks" (§4). Rounded up when the record is not a whole
    /// number of blocks.
    pub const fn record_blocks(&self) -> u32 {
        self.metadata_bytes().div_ceil(self.block_bytes())
    }
}

/// An [`OrderingConfig`] that cannot work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum OrderingConfigError {
    #[error("block_bits = {0}: must be 8, 16, 32 or 64 (a block is at most one machine word)")]
    BlockBits(u32),
    #[error(
        "cap_bits = {cap_bits}: must be a positive multiple of block_bits = {block_bits}, \
         at most {max} (64 blocks)"
    )]
    CapBits {
        cap_bits: u32,
        block_bits: u32,
        max: u32,
    },
    #[error("pool_blocks = {0}: must be between 1 and 65536 (block addresses are 2 bytes)")]
    PoolBlocks(u32),
    #[error("max_connections = {0}: must be between 1 and 65536")]
    MaxConnections(u32),
    #[error(
        "pool_blocks = {pool_blocks}: too small for one connection's state record \
         ({record_blocks} blocks) and its first bitmap block with records_in_pool = true: at \
         least {} blocks", record_blocks + 1
    )]
    RecordTooLarge {
        pool_blocks: u32,
        record_blocks: u32,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_papers_and_cost_48_bytes_of_metadata() {
        let cfg = OrderingConfig::default();
        assert_eq!(cfg.validate(), Ok(()));
        assert_eq!(
            (cfg.block_bits, cfg.cap_bits, cfg.pool_blocks),
            (16, 256, 1024)
        );
        assert_eq!(cfg.blocks_per_connection(), 16);
        assert_eq!(cfg.block_bytes(), 2);
        assert_eq!(cfg.metadata_bytes(), 48);
        assert_eq!((cfg.record_blocks(), cfg.max_connections), (24, 256));
        assert!(cfg.records_in_pool);
        // §3.4.1: bigger blocks need fewer addresses for the same cap.
        let b32 = OrderingConfig {
            block_bits: 32,
            ..cfg
        };
        let b64 = OrderingConfig {
            block_bits: 64,
            ..cfg
        };
        assert_eq!((b32.metadata_bytes(), b64.metadata_bytes()), (32, 24));
    }

    #[test]
    fn rejects_nonsense_naming_the_field() {
        let ok = OrderingConfig::default();
        let bad = [
            (
                OrderingConfig {
                    block_bits: 12,
                    ..ok
                },
                OrderingConfigError::BlockBits(12),
            ),
            (
                OrderingConfig {
                    block_bits: 128,
                    ..ok
                },
                OrderingConfigError::BlockBits(128),
            ),
            (
                OrderingConfig { cap_bits: 0, ..ok },
                OrderingConfigError::CapBits {
                    cap_bits: 0,
                    block_bits: 16,
                    max: 1024,
                },
            ),
            (
                OrderingConfig {
                    cap_bits: 250,
                    ..ok
                },
                OrderingConfigError::CapBits {
                    cap_bits: 250,
                    block_bits: 16,
                    max: 1024,
                },
            ),
            (
                OrderingConfig {
                    cap_bits: 1040,
                    ..ok
                },
                OrderingConfigError::CapBits {
                    cap_bits: 1040,
                    block_bits: 16,
                    max: 1024,
                },
            ),
            (
                OrderingConfig {
                    pool_blocks: 0,
                    ..ok
                },
                OrderingConfigError::PoolBlocks(0),
            ),
            (
                OrderingConfig {
                    pool_blocks: 65537,
                    ..ok
                },
                OrderingConfigError::PoolBlocks(65537),
            ),
            (
                OrderingConfig {
                    max_connections: 0,
                    ..ok
                },
                OrderingConfigError::MaxConnections(0),
            ),
            (
                OrderingConfig {
                    pool_blocks: 23,
                    ..ok
                },
                OrderingConfigError::RecordTooLarge {
                    pool_blocks: 23,
                    record_blocks: 24,
                },
            ),
            // One record's blocks and nothing for its bitmap: every connection refused.
            (
                OrderingConfig {
                    pool_blocks: 24,
                    ..ok
                },
                OrderingConfigError::RecordTooLarge {
                    pool_blocks: 24,
                    record_blocks: 24,
                },
            ),
        ];
        let outside = OrderingConfig {
            pool_blocks: 23,
            records_in_pool: false,
            ..ok
        };
        assert_eq!(outside.validate(), Ok(()), "records outside need no room");
        for (cfg, want) in bad {
            assert_eq!(cfg.validate(), Err(want), "{cfg:?}");
        }
        let msg = OrderingConfigError::BlockBits(12).to_string();
        assert!(msg.starts_with("block_bits = 12:"), "{msg}");
    }
}
