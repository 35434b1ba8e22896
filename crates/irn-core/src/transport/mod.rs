//! Reliable-connected transports: the requester's [`Sender`] and the responder's [`Receiver`].
//!
//! One configurable state machine per side covers RoCE's go-back-N, IRN, and the variants the
//! IRN paper's factor analysis (§4.3) takes apart, because they differ along three independent
//! axes ([`TransportConfig`]):
//!
//! | transport | loss recovery | BDP-FC | timeout |
//! | --- | --- | --- | --- |
//! | RoCE (with PFC) | go-back-N | no | none |
//! | RoCE (without PFC) | go-back-N (optionally windowed, with slow restart and a NACK timer) | yes/no | RTO_high |
//! | IRN | selective repeat with SACK bitmap | yes | RTO_low / RTO_high |
//! | IRN with go-back-N | go-back-N | yes | RTO_low / RTO_high |
//! | IRN without BDP-FC | selective repeat with SACK bitmap | no | RTO_low / RTO_high |
//! | IRN without SACK bitmap | selective repeat, one hole per NACK | yes | RTO_low / RTO_high |
//! | TCP (iWARP, §4.6) | SACK recovery, congestion window ([`TcpSender`]) | no | from RTT, min RTO_low |
//! | MP-RDMA (Lu et al., NSDI'18) | per-packet virtual paths, ECN-clocked window, Δ-based loss detection ([`MpRdmaSender`]) | its L-packet bitmap | RTO_low / RTO_high |
//!
//! The four packet-processing modules IRN synthesised on an FPGA (§6.2) map onto this API:
//!
//! | IRN §6.2 module | here |
//! | --- | --- |
//! | receiveData: packet arrival at the responder, ACK/NACK out, MSN and WQE expiry | [`Receiver::handle_packet`] |
//! | txFree: the link is free, which PSN goes next (with the retransmission look-ahead) | [`Sender::poll_transmit`] |
//! | receiveAck: ACK/NACK arrival at the requester, SACK bitmap and cumulative ACK update | [`Sender::handle_packet`] |
//! | timeout: RTO_low expiry, extended to RTO_high when too many packets are in flight | [`Sender::handle_timeout`] |
//!
//! Inside, sequence numbers are 64-bit packet counts from the initial PSN, so no comparison in
//! the state machines has to think about the 24-bit wrap; PSNs are produced and interpreted only
//! at the packet boundary.

mod config;
mod detection;
mod fifo;
mod mp_rdma;
mod outbox;
mod receiver;
mod requester;
mod restart;
mod sender;
mod tcp;

pub use config::{Acks, ConfigError, LossRecovery, Resend, RtoBackoff, RtoPolicy, TransportConfig};
pub(crate) use fifo::Fifo;
pub use mp_rdma::{MpRdmaError, MpRdmaParams, MpRdmaSender, MpRdmaStats};
pub use outbox::{PostError, MAX_OUTSTANDING_PACKETS};
pub use receiver::{Receiver, ReceiverStats};
pub use requester::Requester;
pub use restart::{Growth, SlowRestart};
pub use sender::{Sender, SenderStats};
pub use tcp::TcpSender;

/// A message's place in its queue pair's posting order: 0, 1, 2, … Messages on one QP complete in
/// this order on both sides, so it doubles as the responder's message sequence number (MSN).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MessageId(pub u64);

/// A message finished: at the sender, every byte is acknowledged; at the receiver, every byte has
/// arrived and every earlier message has completed too.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Completion {
    pub msg: MessageId,
    pub bytes: u64,
}

/// Number of packets a message of `bytes` is cut into at `mtu` payload bytes per packet; a
/// zero-byte message still takes one packet.
pub fn packets_for(bytes: u64, mtu: u32) -> u64 {
    bytes.div_ceil(u64::from(mtu)).max(1)
}
