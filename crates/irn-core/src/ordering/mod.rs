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
//! | `memory` | [`MemoryController`]: the fixed block pool, records from its tail and bitmap blocks first-fit from its head, the connection limit, footprint and refusal counters | §3.4, §4 |
//! | `hd_bitmap` | [`HdBitmap`]: circular part + linear extension blocks, Head/Tail, growth and absorption | §3.3 |
//! | `layer` | the receiver-side agent: [`OrderingLayer`] and [`OrderedReceiver`], a transport receiver under an ordering layer ([`OrderingMode`]: none, ideal, static bitmap, Eunomia); ACK/SACK/NACK on the wire, in-order replay, completion at Last Seq, garbage collection; the 33 bits of per-packet metadata ([`OrderingMode::METADATA_BITS`]); [`WriteLast`]: a WRITE's last packet held at the sender or staged in host memory; [`Feedback`]: a held or dropped packet's CE mark taken on arrival (a CNP then) or on delivery | §2.1, §3.2.1, §3.5, Fig. 17a, A.1 |
//!
//! The sender-side agent (§3.2.2) is the transport's own [`Sender`](crate::Sender), which reads
//! the layer's replies: a SACK ([`PacketKind::Sack`](crate::PacketKind)) marks the packet
//! received under selective repeat (go-back-N ignores it) and never starts recovery; a NACK
//! ([`PacketKind::DropNack`](crate::PacketKind)) names the dropped packet, which is resent, and
//! starts the transport's own recovery (go-back-N rewinds, selective repeat recovers the holes
//! up to it); timeouts still recover packets the network lost. Eunomia's WRITE rule (§3.5.2) is
//! [`TransportConfig::hold_last_packet`](crate::TransportConfig): a message's last packet leaves
//! once the cumulative ACK reaches it.
//!
//! Where the paper's per-connection state (Table 1, Fig. 7) lives here:
//!
//! | Table 1 | here |
//! | --- | --- |
//! | HD Bitmap Addr (DBA) | the [`OrderingLayer`]'s bitmap; counted as [`OrderingConfig::DBA_BYTES`] in [`OrderingLayer::footprint_bytes`] |
//! | Head, Tail | [`HdBitmap::head`], [`HdBitmap::tail`] |
//! | Last Seq | each data packet's last bit: the transport's [`Receiver`](crate::Receiver) completes the message there, and the layer collects its bitmap |
//! | Head BM ID, Head BM Index | [`HdBitmap::head_position`] |
//! | Circular BM Size, Dynamic Size | [`HdBitmap::circular_bits`], [`HdBitmap::blocks`] |
//! | Bitmap Blocks Relative Addr | the bitmap's fixed table of [`BlockId`]s (two bytes each) |
//!
//! A NIC owns one [`MemoryController`]; each connection owns an [`OrderingLayer`] (or an
//! [`OrderedReceiver`]) and passes the controller to every call. Nothing here allocates per
//! packet: blocks come from the pool, a connection's block table is a fixed array sized for the
//! largest cap, and the queue of held packets grows only to the largest reordering seen and keeps
//! its capacity.

mod config;
mod hd_bitmap;
mod layer;
mod memory;

pub use config::{OrderingConfig, OrderingConfigError};
pub use hd_bitmap::{HdBitmap, Placement, Untracked};
pub use layer::{Feedback, LayerStats, OrderedReceiver, OrderingLayer, OrderingMode, WriteLast};
pub use memory::{BlockId, MemoryController, MemoryStats, PoolExhausted, Refused};
