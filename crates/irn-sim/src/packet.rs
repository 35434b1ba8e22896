//! A packet as the network sees it: the transport's packet plus what switches route on.

use irn_core::Packet;

use crate::ids::{FlowId, HostIdx};
use crate::verbs_flow::PacketSlot;

/// Moved by value through every queue and link, so it stays small and `Copy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimPacket {
    /// The transport's packet; for a verbs packet, its network view (class, PSN, flags) while
    /// the packet itself waits in `verbs`.
    pub pkt: Packet,
    /// The flow (queue pair) it belongs to: hosts index their flow table with it directly, and
    /// switches hash it for ECMP, so a flow keeps its path.
    pub flow: FlowId,
    /// The host it travels to: switches route on it.
    pub dst: HostIdx,
    /// Where a verbs packet waits (`crate::verbs_flow::VerbsPackets`); `None` for transport
    /// packets.
    pub verbs: Option<PacketSlot>,
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

    /// The flow as switches hash it (ECMP, flowlet tables): its id, mixed with the UDP source
    /// port when the transport chose one for this packet (MP-RDMA's virtual paths). A packet
    /// without one, as every packet of every other transport is, hashes as its flow alone.
    #[inline(always)]
    pub fn hash_flow(&self) -> FlowId {
        FlowId(self.flow.0 ^ u32::from(self.pkt.entropy()).wrapping_mul(0x9E37_79B1))
    }
}
