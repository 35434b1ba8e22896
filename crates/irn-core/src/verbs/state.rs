//! The NIC state IRN adds to a RoCE queue pair (IRN §6.1), for a given transport configuration.
//!
//! The paper's figures, and where each piece lives in this module:
//!
//! | state | IRN §6.1 | here |
//! | --- | --- | --- |
//! | transport variables, requester | 52 bits: 24-bit PSN to retransmit, 24-bit recovery PSN, 4 flag bits | the request [`Sender`](crate::Sender)'s `Recovery { next, point }` and its recovery / timer-extended flags |
//! | transport variables, responder | 52 bits, the same for the read responses it sends | the response [`Sender`](crate::Sender) of the responder |
//! | read timeout and in-progress read, responder | 56 bits | the response sender's timer; the Read WQE buffer's head (`read_base`) |
//! | bitmaps | 5 BDP-sized: 2 for the responder's 2-bitmap, 1 for read responses at the requester, 1 SACK bitmap at each end | `Arrivals { arrived, last }` at the responder, `Arrivals { arrived }` for rPSNs at the requester, each sender's SACK bitmap |
//! | bitmaps at a 128-packet BDP cap | 640 bits | `state_bits(&cfg).bitmap_bits_total()` with `bdp_cap = Some(128)` |
//! | per WQE | 3 bytes: a 24-bit `recv_WQE_SN` or `read_WQE_SN` | `Outstanding::{recv_sn, read_sn}` |
//! | shared across QPs | 10 bytes: BDP cap, RTO_low, N | [`TransportConfig`] |
//! | host memory, not NIC | WQE SN counters, premature CQEs | `RequestSide::next_*_sn`, `ResponseSide::premature` |
//!
//! Go-back-N keeps no bitmaps and no recovery variables (RoCE NICs already hold what it needs);
//! the responder's read timeout and in-progress read remain, because this verbs layer always
//! acknowledges and times out read responses (IRN §5.2). Without a SACK bitmap the senders'
//! two bitmaps go away. The bitmaps are sized at the BDP cap, or at the tracking window when
//! BDP-FC is off; [`StateAccounting::bitmap_storage_bits`] gives what [`crate::RingBitmap`]
//! actually allocates (whole 64-bit words).

use crate::transport::{LossRecovery, TransportConfig};

/// IRN §6.1's transport variables per side: two 24-bit PSNs and 4 flag bits.
pub const TRANSPORT_STATE_BITS: u32 = 24 + 24 + 4;
/// IRN §6.1: the responder's read timer and its pointer to the in-progress Read.
pub const READ_TIMEOUT_STATE_BITS: u32 = 56;
/// IRN §6.1: a 24-bit WQE sequence number per WQE.
pub const PER_WQE_BITS: u32 = 24;
/// IRN §6.1: BDP cap, RTO_low and N, shared by every QP of a NIC.
pub const SHARED_BITS: u32 = 10 * 8;

/// The state one verbs queue pair adds over RoCE, in bits (IRN §6.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StateAccounting {
    /// Bits in each bitmap as §6.1 counts them: one per packet of the BDP cap.
    pub bitmap_bits: u32,
    /// Bits each bitmap occupies in this implementation (whole 64-bit words).
    pub bitmap_storage_bits: u32,
    /// Requester bitmaps: the request sender's SACK bitmap, the read-response arrivals.
    pub requester_bitmaps: u32,
    /// Responder bitmaps: the 2-bitmap, the response sender's SACK bitmap.
    pub responder_bitmaps: u32,
    /// Transport variables at the requester.
    pub requester_state_bits: u32,
    /// Transport variables, read timer and in-progress read at the responder.
    pub responder_state_bits: u32,
    /// Per posted WQE.
    pub per_wqe_bits: u32,
    /// Per NIC, shared by all QPs.
    pub shared_bits: u32,
}

impl StateAccounting {
    pub fn bitmaps(&self) -> u32 {
        self.requester_bitmaps + self.responder_bitmaps
    }

    /// Bitmap bits per QP as §6.1 counts them (640 for IRN at a 128-packet cap).
    pub fn bitmap_bits_total(&self) -> u32 {
        self.bitmaps() * self.bitmap_bits
    }

    /// State-variable bits per QP (160 for IRN).
    pub fn state_bits_total(&self) -> u32 {
        self.requester_state_bits + self.responder_state_bits
    }

    /// Everything IRN adds per QP, in bits (800 for IRN at a 128-packet cap).
    pub fn per_qp_bits(&self) -> u32 {
        self.bitmap_bits_total() + self.state_bits_total()
    }
}

/// The per-QP, per-WQE and shared state a verbs queue pair configured with `cfg` adds over a
/// RoCE NIC (IRN §6.1).
pub fn state_bits(cfg: &TransportConfig) -> StateAccounting {
    let window = cfg.window();
    let (transport, sack, arrivals) = match cfg.recovery {
        LossRecovery::GoBackN => (0, 0, 0),
        LossRecovery::SelectiveRepeat { sack_bitmap } => {
            (TRANSPORT_STATE_BITS, u32::from(sack_bitmap), 1)
        }
        // Not served by the verbs layer; counted as selective repeat with SACKs.
        LossRecovery::Tcp | LossRecovery::MpRdma(_) => (TRANSPORT_STATE_BITS, 1, 1),
    };
    StateAccounting {
        bitmap_bits: window,
        bitmap_storage_bits: window.div_ceil(64).max(1) * 64,
        // SACK bitmap for sPSNs + arrivals for rPSNs.
        requester_bitmaps: sack + arrivals,
        // 2-bitmap (arrived, last) + SACK bitmap for rPSNs.
        responder_bitmaps: 2 * arrivals + sack,
        requester_state_bits: transport,
        responder_state_bits: transport + READ_TIMEOUT_STATE_BITS,
        per_wqe_bits: PER_WQE_BITS,
        shared_bits: SHARED_BITS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn irn_at_a_128_packet_cap_matches_section_6_1() {
        let cfg = TransportConfig {
            bdp_cap: Some(128),
            ..TransportConfig::irn()
        };
        let s = state_bits(&cfg);
        assert_eq!(s.bitmaps(), 5);
        assert_eq!(s.bitmap_bits_total(), 640);
        assert_eq!(s.requester_state_bits, 52);
        assert_eq!(s.responder_state_bits, 108);
        assert_eq!(s.state_bits_total(), 160);
        assert_eq!(s.per_qp_bits(), 800);
        assert_eq!(s.per_wqe_bits, 24);
        assert_eq!(s.shared_bits, 80);
    }

    #[test]
    fn variants_drop_what_they_do_not_keep() {
        let irn = state_bits(&TransportConfig::irn());
        assert_eq!((irn.bitmap_bits, irn.bitmap_storage_bits), (110, 128));
        assert_eq!(irn.bitmap_bits_total(), 550);
        let no_sack = state_bits(&TransportConfig::irn_without_sack());
        assert_eq!(no_sack.bitmaps(), 3);
        let gbn = state_bits(&TransportConfig::irn_go_back_n());
        assert_eq!(gbn.bitmaps(), 0);
        assert_eq!(gbn.state_bits_total(), READ_TIMEOUT_STATE_BITS);
    }
}
