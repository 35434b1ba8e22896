//! # irn-core: RDMA NIC transports as sans-IO protocol code
//!
//! The transport logic of RoCE NICs (go-back-N) and of IRN (selective repeat with a BDP cap,
//! Mittal et al., SIGCOMM 2018), and Eunomia's on-NIC ordering layer for networks that reorder
//! heavily (Mahmood, Lu, Ghorbani), written so that the same code can be driven packet by packet by
//! a test, by the `irn-sim` network simulator, or by a real datagram socket. Nothing here owns a
//! clock, a socket, a timer wheel or a random number generator: time is passed in as `now`, and
//! every output is pulled by a `poll_*` call.
//!
//! | module | holds |
//! | --- | --- |
//! | [`time`] | picosecond [`Time`]/[`Duration`] and [`Bandwidth`] newtypes |
//! | [`seq`] | 24-bit [`Psn`] with serial (wrapping) comparison |
//! | [`bitmap`] | the BDP-sized [`RingBitmap`] (find-first-zero, popcount, advance) |
//! | [`packet`] | the [`Packet`] the transports exchange, and its size on the wire |
//! | [`wire`] | a RoCEv2-style byte encoding of packets (BTH, AETH, IRN SACK extension) |
//! | [`transport`] | the [`Sender`] and [`Receiver`] state machines and their configuration |
//! | [`verbs`] | RDMA verbs (Write, Read, Send, Atomic) over IRN's out-of-order transport (§5) |
//! | [`ordering`] | Eunomia's ordering layer: the hybrid-dynamic bitmap, its memory controller, the receiver agent (ACK/SACK/NACK) and the sender's reaction rules |

pub mod bitmap;
pub mod cc;
pub mod ordering;
pub mod packet;
pub mod seq;
pub mod time;
pub mod transport;
pub mod verbs;
pub mod wire;

pub use bitmap::RingBitmap;
pub use packet::{Ecn, Packet, PacketKind, Qpn};
pub use seq::Psn;
pub use time::{Bandwidth, Duration, Time};
pub use transport::{Completion, MessageId, Receiver, Sender, TransportConfig};
