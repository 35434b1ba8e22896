//! What the application posts (work queue elements) and what it gets back (completion queue
//! elements), IRN §5.1.

use super::memory::OutOfBounds;
use crate::transport::{ConfigError, PostError};

/// A send-queue WQE's place in its queue pair's posting order: 0, 1, 2, …
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WqeId(pub u64);

/// A receive WQE's place in its queue pair's posting order: 0, 1, 2, … This is also its
/// `recv_WQE_SN` (IRN §5.3.2): the n-th Send or Write-with-immediate consumes receive WQE n.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RecvId(pub u64);

/// The two atomic operations, each on one 8-byte-aligned little-endian 64-bit word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    /// Adds `add` (wrapping) to the word.
    FetchAdd { add: u64 },
    /// Stores `swap` if the word equals `compare`.
    CompareSwap { compare: u64, swap: u64 },
}

impl AtomicOp {
    /// The word after the operation, given the word before.
    pub fn apply(self, original: u64) -> u64 {
        match self {
            AtomicOp::FetchAdd { add } => original.wrapping_add(add),
            AtomicOp::CompareSwap { compare, swap } => {
                if original == compare {
                    swap
                } else {
                    original
                }
            }
        }
    }
}

/// What a send-queue WQE asks for. `local` addresses are in the poster's memory region,
/// `remote` ones in the peer's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SendOp {
    /// Copy `len` bytes from `local` to the peer's `remote`.
    Write { local: u64, remote: u64, len: u32 },
    /// A Write that also consumes the peer's next receive WQE, completing it with `imm`.
    WriteImm {
        local: u64,
        remote: u64,
        len: u32,
        imm: u32,
    },
    /// Copy `len` bytes from the peer's `remote` to `local`.
    Read { local: u64, remote: u64, len: u32 },
    /// Copy `len` bytes from `local` into the buffer of the peer's next receive WQE.
    Send { local: u64, len: u32 },
    /// Apply `op` to the peer's word at `remote` (8-byte aligned) and store the word's previous
    /// value at `local`.
    Atomic {
        local: u64,
        remote: u64,
        op: AtomicOp,
    },
}

impl SendOp {
    /// Bytes the operation moves (8 for atomics).
    pub fn len(&self) -> u32 {
        match *self {
            SendOp::Write { len, .. }
            | SendOp::WriteImm { len, .. }
            | SendOp::Read { len, .. }
            | SendOp::Send { len, .. } => len,
            SendOp::Atomic { .. } => 8,
        }
    }

    /// Whether it moves nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The operation's CQE opcode.
    pub fn kind(&self) -> SendKind {
        match self {
            SendOp::Write { .. } => SendKind::Write,
            SendOp::WriteImm { .. } => SendKind::WriteImm,
            SendOp::Read { .. } => SendKind::Read,
            SendOp::Send { .. } => SendKind::Send,
            SendOp::Atomic {
                op: AtomicOp::FetchAdd { .. },
                ..
            } => SendKind::FetchAdd,
            SendOp::Atomic {
                op: AtomicOp::CompareSwap { .. },
                ..
            } => SendKind::CompareSwap,
        }
    }

    /// Whether the peer answers with response packets (in the rPSN space, IRN §5.4).
    pub fn has_response(&self) -> bool {
        matches!(self, SendOp::Read { .. } | SendOp::Atomic { .. })
    }

    /// Whether it consumes one of the peer's receive WQEs.
    pub fn consumes_recv(&self) -> bool {
        matches!(self, SendOp::Send { .. } | SendOp::WriteImm { .. })
    }
}

/// A send-queue work request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SendWqe {
    pub op: SendOp,
    /// Do not start this WQE until every earlier WQE of the QP has completed.
    ///
    /// Out-of-order placement lets a later WQE's packets land before an earlier WQE has
    /// finished with the same bytes: a Write overtaking a Read (or Atomic) of the same location
    /// (InfiniBand's fence), and, new with IRN, a retransmitted packet of an older Write landing
    /// after a newer Write to the same bytes (IRN §5.3.4). The application (or driver) sets this
    /// on a WQE that touches bytes an outstanding earlier WQE touches, one of them writing.
    pub fence: bool,
}

impl SendWqe {
    pub fn new(op: SendOp) -> Self {
        SendWqe { op, fence: false }
    }

    pub fn write(local: u64, remote: u64, len: u32) -> Self {
        Self::new(SendOp::Write { local, remote, len })
    }

    pub fn write_imm(local: u64, remote: u64, len: u32, imm: u32) -> Self {
        Self::new(SendOp::WriteImm {
            local,
            remote,
            len,
            imm,
        })
    }

    pub fn read(local: u64, remote: u64, len: u32) -> Self {
        Self::new(SendOp::Read { local, remote, len })
    }

    pub fn send(local: u64, len: u32) -> Self {
        Self::new(SendOp::Send { local, len })
    }

    pub fn fetch_add(local: u64, remote: u64, add: u64) -> Self {
        Self::new(SendOp::Atomic {
            local,
            remote,
            op: AtomicOp::FetchAdd { add },
        })
    }

    pub fn compare_swap(local: u64, remote: u64, compare: u64, swap: u64) -> Self {
        Self::new(SendOp::Atomic {
            local,
            remote,
            op: AtomicOp::CompareSwap { compare, swap },
        })
    }

    /// The same WQE with the fence set.
    #[must_use]
    pub fn fenced(self) -> Self {
        SendWqe {
            fence: true,
            ..self
        }
    }
}

/// A receive-queue work request: where an incoming Send's bytes go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RecvWqe {
    pub addr: u64,
    pub len: u32,
}

/// What a send CQE completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SendKind {
    Write,
    WriteImm,
    Read,
    Send,
    FetchAdd,
    CompareSwap,
}

/// How a receive WQE ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecvStatus {
    Success,
    /// The Send was longer than the receive buffer; only the bytes that fit were placed.
    LengthError,
}

/// A send-queue WQE finished: every byte is acknowledged (Write, Send) or has arrived (Read,
/// Atomic), and every earlier send WQE has completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SendCqe {
    pub id: WqeId,
    pub kind: SendKind,
    pub byte_len: u32,
    /// For atomics: the word's value before the operation (also stored at the WQE's `local`).
    pub atomic_original: Option<u64>,
}

/// A receive WQE was consumed by a Send or a Write-with-immediate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RecvCqe {
    pub id: RecvId,
    /// Length of the Send, or of the Write-with-immediate's data.
    pub byte_len: u32,
    /// The immediate value, for a Write-with-immediate.
    pub imm: Option<u32>,
    pub status: RecvStatus,
}

/// A completion queue element. Send CQEs come in send-queue posting order, receive CQEs in
/// receive-queue posting order; the two streams interleave in the order they happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cqe {
    Send(SendCqe),
    Recv(RecvCqe),
}

/// Which memory region an address refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    Local,
    Remote,
}

/// Why a queue pair could not be created or a WQE not posted.
///
/// Each message is whole, with its cause in it, so no variant also reports the cause as a
/// `source()`: an error chain would print it twice.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerbsError {
    #[error("{side:?} {bounds}")]
    OutOfBounds { side: Side, bounds: OutOfBounds },
    #[error("atomic address {addr} is not 8-byte aligned")]
    MisalignedAtomic { addr: u64 },
    #[error("message of {len} bytes is longer than the {max}-byte limit")]
    MessageTooLong { len: u32, max: u32 },
    #[error("too many packets outstanding: {0}")]
    Backlog(PostError),
    #[error("invalid transport configuration: {0}")]
    Config(ConfigError),
    #[error("the verbs layer runs over RoCE/IRN loss recovery, not TCP or MP-RDMA")]
    UnsupportedRecovery,
    #[error("memory region of {0} bytes does not fit in this machine's address space")]
    MemoryTooLarge(u64),
}

impl From<PostError> for VerbsError {
    fn from(e: PostError) -> Self {
        VerbsError::Backlog(e)
    }
}

impl From<ConfigError> for VerbsError {
    fn from(e: ConfigError) -> Self {
        VerbsError::Config(e)
    }
}
