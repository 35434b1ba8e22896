//! A packet as the network sees it: the transport's packet plus what switches route on.

use irn_core::Packet;

use crate::ids::{FlowId, HostIdx};

/// Moved by value through every queue and link, so it stays small and `Copy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimPacket {
    pub pkt: Packet,
    /// The flow (queue pair) it belongs to: hosts index their flow table with it directly.
    pub flow: FlowId,
    /// The host it travels to: switches route on it.
    pub dst: HostIdx,
    /// Per-flow hash for ECMP, fixed for the flow's lifetime so a flow keeps its path.
    pub hash: u32,
    /// Bytes on the wire, including framing and any extra headers.
    pub wire_bytes: u32,
}

const _: () = assert!(std::mem::size_of::<SimPacket>() <= 40);

impl SimPacket {
    /// Data packets are subject to buffers and PFC; ACK/NACKs travel in a separate
    /// high-priority class that is never paused (MODEL §1, a choice).
    pub fn is_data(&self) -> bool {
        self.pkt.is_data()
    }
}
