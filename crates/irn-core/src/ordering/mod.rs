//! Eunomia's on-NIC ordering layer (Mahmood, Lu, Ghorbani: "Orderly Management of Packets in
//! RDMA by Eunomia", §3), sans-IO.
//!
//! Eunomia lets RDMA NICs absorb heavy packet reordering (packet spraying, DRILL, deflection,
//! expander topologies) without mistaking it for loss. Data is placed in application memory as
//! it arrives; the NIC only tracks *which* packets arrived, in a per-connection bitmap that
//! starts empty and grows a small block at a time from one shared pool, and it reports data to
//! the application only in order.
//!
//! | module | holds | paper |
//! | --- | --- | --- |
//! | `config` | [`OrderingConfig`]: block size, cap, pool size; validated | §3.3.2, §3.4.1, §4 |
//! | `memory` | [`MemoryController`]: the fixed block pool, first-fit allocation, footprint counters | §3.4, §4 |
//! | `hd_bitmap` | [`HdBitmap`]: circular part + linear extension blocks, Head/Tail, growth and absorption | §3.3 |
//! | `agent` | [`ReceiverAgent`]: ACK/SACK/NACK, in-order delivery, completion at Last Seq, garbage collection | §3.5 |
//! | `sender` | [`react`]: SACKs never trigger recovery, NACKs do; the WRITE last-packet rule | §3.2, §3.5.2 |
//! | `layer` | [`OrderingLayer`] and [`OrderedReceiver`]: a transport receiver under an ordering layer ([`OrderingMode`]: none, ideal, static bitmap, Eunomia), SACK/NACK on the wire, in-order replay; [`WriteLast`]: a WRITE's last packet held at the sender or staged in host memory | §2.1, §3.5, Fig. 17a, A.1 |
//!
//! Where the paper's per-connection state (Table 1, Fig. 7) lives here:
//!
//! | Table 1 | here |
//! | --- | --- |
//! | HD Bitmap Addr (DBA) | the agent owning an [`HdBitmap`]; counted as [`OrderingConfig::DBA_BYTES`] |
//! | Head, Tail | [`HdBitmap::head`], [`HdBitmap::tail`] |
//! | Last Seq | the [`ReceiverAgent`]'s state |
//! | Head BM ID, Head BM Index | [`HdBitmap::head_position`] |
//! | Circular BM Size, Dynamic Size | [`HdBitmap::circular_bits`], [`HdBitmap::blocks`] |
//! | Bitmap Blocks Relative Addr | the bitmap's fixed table of [`BlockId`]s (two bytes each) |
//!
//! A NIC owns one [`MemoryController`]; each connection owns a [`ReceiverAgent`] and passes the
//! controller to every call. Nothing here allocates per packet: blocks come from the pool, and a
//! connection's block table is a fixed array sized for the largest cap.

mod agent;
mod config;
mod hd_bitmap;
mod layer;
mod memory;
mod sender;

pub use agent::{Acknowledgment, AgentStats, DataPacket, Delivery, ReceiverAgent};
pub use config::{OrderingConfig, OrderingConfigError};
pub use hd_bitmap::{HdBitmap, Placement, Untracked};
pub use layer::{LayerStats, OrderedReceiver, OrderingLayer, OrderingMode, WriteLast};
pub use memory::{BlockId, MemoryController, MemoryStats, PoolExhausted};
pub use sender::{react, write_last_may_leave, Reaction, Recovery};
