//! RDMA verbs over IRN's out-of-order transport (IRN §5), sans-IO.
//!
//! A [`QueuePair`] is one end of a reliable connection, requester and responder at once. The
//! application posts [`SendWqe`]s (Write, Write-with-immediate, Read, Send, Atomic) and
//! [`RecvWqe`]s, and polls [`Cqe`]s; the queue pair exchanges [`VerbsPacket`]s with its peer, and
//! places data straight into its [`MemoryRegion`], whatever order packets arrive in.
//!
//! Packet reliability is the existing [`Sender`](crate::Sender) — BDP-FC, RTO_low/RTO_high,
//! selective repeat or go-back-N from a [`TransportConfig`](crate::TransportConfig) — run twice
//! per queue pair, because IRN §5.4 splits the requester's PSNs in two: the requester's requests
//! (sPSN) and the responder's read responses (the requester's rPSN) each get a sender, a receive
//! bitmap at the other end, and ACK/NACKs (for responses, the new read ACK/NACK of §5.2).
//! What this module adds is what makes out-of-order delivery safe for RDMA semantics (§5.3):
//!
//! | IRN | problem | here |
//! | --- | --- | --- |
//! | §5.3.1 first packet | only a Write's first packet says where its bytes go | RETH in every Write packet ([`Ext::Write`]) |
//! | §5.3.2 WQE matching | an out-of-order Send packet cannot tell which receive WQE it is for | `recv_WQE_SN` and relative offset in every Send packet; the n-th Send consumes receive WQE n |
//! | §5.3.2 Read/Atomic | a Read must not run before earlier Writes land | the Read WQE buffer, indexed by `read_WQE_SN`; requests run when every earlier packet has arrived |
//! | §5.3.3 last packet | MSN and receive-WQE expiry hang on last packets | the responder's 2-bitmap; premature CQEs held and released in order |
//! | §5.3.4 overwrite | a late retransmission of an old Write lands on a newer Write | [`SendWqe::fence`], which the application or driver sets |
//! | §5.2 reads | read responses need ACKs and a timeout | read ACK/NACK opcodes; a response sender with its own timer at the responder |
//! | §5.2 atomics | an Atomic must not run twice | executed once when reached in order; its result kept and replayed |
//! | §5.4 PSN spaces | responses and requests share one PSN space in RoCE | sPSN and rPSN, each with its own bitmap and window |
//!
//! The responder's placement, bitmaps and release order map onto IRN §6.2's *receiveData*; the
//! two senders' `poll_transmit`, `handle_packet` and `handle_timeout` onto *txFree*,
//! *receiveAck* and *timeout*.
//!
//! # State (IRN §6.1)
//!
//! [`state_bits`] computes what a queue pair of a given configuration adds over RoCE. For IRN at
//! a 128-packet BDP cap, next to the paper:
//!
//! | per QP | IRN §6.1 | `state_bits` |
//! | --- | --- | --- |
//! | requester transport variables | 52 bits | 52 |
//! | responder transport variables + read timer + in-progress read | 52 + 56 bits | 108 |
//! | state variables total | 160 bits | 160 |
//! | bitmaps | 5 × 128 = 640 bits | 5 × 128 = 640 (2 requester, 3 responder) |
//! | per WQE | 3 bytes | 24 bits |
//! | shared by all QPs | 10 bytes | 80 bits |
//!
//! At the default 110-packet cap that is 5 × 110 = 550 bitmap bits as §6.1 counts them, 640 as
//! [`RingBitmap`](crate::RingBitmap) stores them. Go-back-N needs no bitmaps; see [`state`] for
//! the breakdown and where each piece lives.
//!
//! # Semantics and choices
//!
//! - Completions: a Write or Send completes when every packet is acknowledged; a Read or Atomic
//!   when every response packet has arrived and been placed; always in posting order. A receive
//!   WQE completes when every packet up to the last of its Send (or Write-with-immediate) has
//!   arrived.
//! - One memory region per QP, no keys: remote addresses are offsets into the peer's region,
//!   checked against its size at post time.
//! - Atomic words are little-endian; the original value goes to the WQE's local address and into
//!   the CQE.
//! - Request bytes (Write, Send) and Read bytes are read from memory when each packet is
//!   (re)transmitted, as a NIC DMAs them; the application must not change them before the WQE
//!   completes, and a Write that overwrites bytes an earlier Read or Atomic still needs must be
//!   fenced (InfiniBand's rule, which out-of-order placement makes matter more).
//! - Congestion control: both packet senders run the configured controller. Requests and
//!   responses are ECN-capable; the half that receives them echoes CE marks in its (read) ACKs
//!   and, under DCQCN, paces CNPs back — a CNP to the request sender, a read CNP to the response
//!   sender (one notification point per PSN space).
//! - A Send longer than its receive buffer places what fits and completes the receive WQE with
//!   [`RecvStatus::LengthError`]; a Send with no receive WQE posted is dropped unanswered and
//!   resent by the requester's recovery.

mod arrivals;
mod marks;
mod memory;
mod packet;
mod queue_pair;
mod requester;
mod responder;
pub mod state;
mod wqe;

pub use memory::{pattern_byte, MemoryRegion, OutOfBounds};
pub use packet::{
    Ext, Flow, Imm, Malformed, Opcode, Reth, VerbsPacket, SEND_EXT_BYTES, WQE_SN_BYTES,
};
pub use queue_pair::{QpEndpoint, QueuePair, VerbsStats};
pub use requester::{RequesterStats, MAX_MESSAGE_BYTES, MAX_OUTSTANDING_PACKETS};
pub use responder::ResponderStats;
pub use state::{state_bits, StateAccounting};
pub use wqe::{
    AtomicOp, Cqe, RecvCqe, RecvId, RecvStatus, RecvWqe, SendCqe, SendKind, SendOp, SendWqe, Side,
    VerbsError, WqeId,
};
