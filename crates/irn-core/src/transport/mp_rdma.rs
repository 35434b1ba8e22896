//! MP-RDMA (Lu et al., "Multi-Path Transport for RDMA in Datacenters", NSDI'18): one queue pair
//! spread over many paths, with a reordering bitmap small enough for NIC memory.
//!
//! A *virtual path* (VP) is a UDP source port: switches hash it with the flow
//! ([`PacketKind::Data::entropy`]), so each VP is an ECMP path, chosen per packet by the sender.
//! [`MpRdmaSender`] has the API of [`Sender`](super::Sender) and runs against the unchanged
//! selective-repeat [`Receiver`](super::Receiver) whose window is the bitmap (L packets): an
//! arrival more than L − 1 packets ahead of the expected one is discarded and counted
//! (`window_drops`).
//!
//! | MP-RDMA mechanism | here |
//! | --- | --- |
//! | one congestion window for all VPs, ECN-driven per ACK | unmarked ACK: `cwnd += 1/cwnd`; CE-echoing ACK: `cwnd −= 1/2` (at least 1, at most L) |
//! | multi-path ACK clocking: an ACK's VP carries the packets it releases | an unmarked ACK returns its VP to a queue of reusable VPs; each packet sent takes the oldest one |
//! | congestion-aware distribution: a marked path is not reused | a CE-echoing ACK returns no VP; what it releases goes on a new random VP |
//! | new paths probed at random | a packet with no reusable VP (the first window, what window growth adds) takes a random VP, and any packet does with probability `probe` (1 %) |
//! | burst bound per ACK | each ACK lets at most [`max_burst`](MpRdmaParams::max_burst) (2) packets out |
//! | out-of-order aware path selection | an ACK for packet m when a packet ≥ m + Δ was already acknowledged: m's path lags by Δ or more, its VP is pruned (not reused) |
//! | L-packet bitmap | no packet goes L or more past the cumulative ACK (`snd_una + L`) |
//! | synchronise mechanism | with `synchronise` (or [`hold_last_packet`](super::TransportConfig::hold_last_packet)) a message's last packet waits until every earlier packet is acknowledged |
//! | loss recovery | an unacknowledged packet Δ or more below the highest acknowledged one is lost: resent once per episode on a fresh VP, `cwnd` halved once per episode; a timeout resends every unacknowledged packet |
//!
//! # How the receiver's replies read
//!
//! The receiver answers every data packet: in order with a cumulative ACK, out of order with a
//! NACK naming the packet (a one-packet SACK). MP-RDMA's ACK carries the acknowledged packet's
//! VP; here the sender remembers the VP each outstanding packet left on (one `u16` per bitmap
//! slot) and finds it from the packet the reply is about: a NACK's SACK, or for a cumulative
//! ACK that moves the window the oldest unacknowledged packet, the one whose arrival an ACK
//! reports (replies follow one path, so they arrive in the order they were sent).
//!
//! # Simplifications and choices
//!
//! - `cwnd` is a real number of packets; the sender sends while the packets it believes in the
//!   network number fewer than `⌊cwnd⌋`, as a window-based NIC would.
//! - The paper delays a synchronise packet by Δt = α·(Δ/cwnd)·RTT and lets the receiver drop
//!   one that still arrives early. Here it waits for the acknowledgement of everything before
//!   it: never early, one round trip per message, like Eunomia's WRITE rule.
//! - The paper's loss recovery and timeout values are not modelled exactly: the Δ rule declares
//!   loss, retransmissions go on fresh VPs, and the timer is IRN's (RTO_low while at most N
//!   packets are in flight, RTO_high otherwise; [`RtoPolicy::Disabled`] runs RTO_high anyway,
//!   since a packet dropped past the bitmap is repaired by nothing else), doubling on
//!   consecutive timeouts up to 64×.
//! - A cumulative ACK or SACK does not say whether the original or a resend arrived: a packet
//!   Δ behind is judged by the VP it last left on, so a resend that arrives (necessarily late)
//!   prunes its fresh VP too.
//! - `cfg.cc` is ignored: MP-RDMA's own ECN rule is the congestion control. CNPs are counted
//!   and ignored.
//! - VPs are drawn from 1..=65535 with a generator seeded from [`MpRdmaParams::seed`], the peer
//!   QPN and the initial PSN, so runs repeat exactly.

use super::config::{RtoPolicy, TransportConfig};
use super::outbox::{Outbox, PostError};
use super::sender::SenderStats;
use super::{Completion, MessageId};
use crate::bitmap::RingBitmap;
use crate::packet::{Packet, PacketKind, Qpn};
use crate::seq::Psn;
use crate::time::{Bandwidth, Duration, Time};

/// MP-RDMA's parameters, at the paper's defaults ([`MpRdmaParams::PAPER`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MpRdmaParams {
    /// L: the receiver's reordering bitmap in packets, and how far past the cumulative ACK the
    /// sender may go. A multiple of 64 (one machine word per 64 packets), 64 to 4096.
    pub bitmap: u32,
    /// Δ: the out-of-order degree a path may cause before its VP is pruned, and the distance
    /// below the highest acknowledged packet at which an unacknowledged one is lost. 1 to L − 1.
    pub delta: u32,
    /// Probability, in millionths, that a packet takes a new random VP although a reusable one
    /// is waiting (path probing).
    pub probe_ppm: u32,
    /// Most packets one ACK may let out (at least 1).
    pub max_burst: u32,
    /// Congestion window at the start, in packets (1 to L).
    pub initial_window: u32,
    /// The synchronise rule for every message's last packet.
    pub synchronise: bool,
    /// Seeds the VP draws (mixed with each queue pair's QPN and initial PSN).
    pub seed: u64,
}

impl MpRdmaParams {
    /// The paper's settings: L = 64, Δ = 32, 1 % probing, two packets per ACK; the first window
    /// is the whole bitmap (RDMA starts at line rate).
    pub const PAPER: MpRdmaParams = MpRdmaParams {
        bitmap: 64,
        delta: 32,
        probe_ppm: 10_000,
        max_burst: 2,
        initial_window: 64,
        synchronise: false,
        seed: 0,
    };
    /// Largest bitmap accepted.
    pub const MAX_BITMAP: u32 = 4096;

    /// Checks the ranges given on each field.
    pub fn validate(&self) -> Result<(), MpRdmaError> {
        if self.bitmap < 64 || self.bitmap > Self::MAX_BITMAP || !self.bitmap.is_multiple_of(64) {
            return Err(MpRdmaError::Bitmap(self.bitmap));
        }
        if self.delta == 0 || self.delta >= self.bitmap {
            return Err(MpRdmaError::Delta {
                delta: self.delta,
                bitmap: self.bitmap,
            });
        }
        if self.probe_ppm > 1_000_000 {
            return Err(MpRdmaError::Probe(self.probe_ppm));
        }
        if self.max_burst == 0 {
            return Err(MpRdmaError::Burst);
        }
        if self.initial_window == 0 || self.initial_window > self.bitmap {
            return Err(MpRdmaError::InitialWindow {
                window: self.initial_window,
                bitmap: self.bitmap,
            });
        }
        Ok(())
    }
}

impl Default for MpRdmaParams {
    fn default() -> Self {
        Self::PAPER
    }
}

/// An MP-RDMA parameter out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MpRdmaError {
    #[error("mp_rdma bitmap = {0}: must be a multiple of 64 packets from 64 to 4096")]
    Bitmap(u32),
    #[error("mp_rdma delta = {delta}: must be between 1 and the bitmap less one ({})", bitmap - 1)]
    Delta { delta: u32, bitmap: u32 },
    #[error("mp_rdma probe = {0} ppm: a probability is at most 1 (1000000 ppm)")]
    Probe(u32),
    #[error("mp_rdma max_burst must be at least 1 packet per ACK")]
    Burst,
    #[error("mp_rdma initial_window = {window}: must be between 1 and the bitmap ({bitmap})")]
    InitialWindow { window: u32, bitmap: u32 },
}

/// Counters only MP-RDMA keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MpRdmaStats {
    /// ACKs whose packet lagged Δ or more behind the highest acknowledged one: VPs pruned.
    pub pruned: u64,
    /// CE-echoing ACKs: VPs not reused for congestion.
    pub marked: u64,
    /// Packets sent on a new random VP (first window, growth, probing, after marks and prunes).
    pub new_vps: u64,
    /// Packets held by the bitmap bound (`snd_una + L`) when the window had room.
    pub bitmap_stalls: u64,
}

/// Multiplies the retransmission timeout after consecutive timeouts, at most 2^6.
const MAX_BACKOFF_SHIFT: u32 = 6;

/// The VPs acknowledged packets returned for reuse, oldest first, in a fixed ring (never more
/// than L: one per packet in flight).
#[derive(Debug, Clone)]
struct VpQueue {
    ring: Box<[u16]>,
    head: usize,
    len: usize,
}

impl VpQueue {
    fn new(capacity: usize) -> Self {
        VpQueue {
            ring: vec![0; capacity].into_boxed_slice(),
            head: 0,
            len: 0,
        }
    }

    /// Adds `vp`; when full, the oldest one is forgotten.
    fn push(&mut self, vp: u16) {
        let cap = self.ring.len();
        if self.len == cap {
            self.head = (self.head + 1) % cap;
            self.len -= 1;
        }
        self.ring[(self.head + self.len) % cap] = vp;
        self.len += 1;
    }

    fn pop(&mut self) -> Option<u16> {
        if self.len == 0 {
            return None;
        }
        let vp = self.ring[self.head];
        self.head = (self.head + 1) % self.ring.len();
        self.len -= 1;
        Some(vp)
    }
}

/// An MP-RDMA requester (the module docs give the rules).
///
/// The driver API is [`Sender`](super::Sender)'s: [`post`](Self::post) messages;
/// [`handle_packet`](Self::handle_packet) each ACK/NACK and
/// [`handle_timeout`](Self::handle_timeout) when [`poll_timeout`](Self::poll_timeout) passes;
/// [`poll_transmit`](Self::poll_transmit) whenever the link is free and
/// [`poll_completion`](Self::poll_completion) for acknowledged messages.
///
/// Packet numbers are `u64` counts from the initial PSN; `una ≤ high ≤ una + L` always holds.
#[derive(Debug, Clone)]
pub struct MpRdmaSender {
    cfg: TransportConfig,
    p: MpRdmaParams,
    outbox: Outbox,
    /// Oldest unacknowledged packet (`snd_una`).
    una: u64,
    /// Next new packet (`snd_nxt`).
    high: u64,
    /// One past the highest acknowledged packet (`snd_ooh` + 1).
    ooh: u64,
    /// Congestion window in packets, `1..=L`.
    cwnd: f64,
    /// Packets acknowledged out of order, offset from `una`.
    acked: RingBitmap,
    /// Bits set in `acked`.
    acked_count: u64,
    /// The VP each packet in `una..una + L` last left on, at `n % L`.
    sent_vp: Box<[u16]>,
    reuse: VpQueue,
    /// Packets the latest ACK may still let out; `None` before the first ACK and whenever
    /// nothing is in flight (no ACK is coming to clock packets out).
    burst: Option<u32>,
    /// Unacknowledged packets below this are lost.
    lost_to: u64,
    /// Lost packets below this were resent in this episode.
    rxt_next: u64,
    /// In a loss episode until the cumulative ACK reaches this.
    recovery_point: Option<u64>,
    rng: u64,
    backoff: u32,
    timer: Option<Time>,
    stats: SenderStats,
    mp: MpRdmaStats,
}

impl MpRdmaSender {
    /// A sender whose first packet carries `isn` and whose packets go to the peer QP `peer`.
    ///
    /// # Panics
    /// If `cfg` fails [`TransportConfig::validate`] or is not MP-RDMA; validate configurations
    /// at load time.
    pub fn new(cfg: TransportConfig, peer: Qpn, isn: Psn) -> Self {
        if let Err(e) = cfg.validate() {
            panic!("invalid transport configuration: {e}");
        }
        let super::LossRecovery::MpRdma(p) = cfg.recovery else {
            panic!("MpRdmaSender needs an MP-RDMA configuration");
        };
        let l = p.bitmap as usize;
        MpRdmaSender {
            outbox: Outbox::new(cfg.mtu, peer, isn),
            cfg,
            p,
            una: 0,
            high: 0,
            ooh: 0,
            cwnd: f64::from(p.initial_window),
            acked: RingBitmap::new(p.bitmap),
            acked_count: 0,
            sent_vp: vec![0; l].into_boxed_slice(),
            reuse: VpQueue::new(l),
            burst: None,
            lost_to: 0,
            rxt_next: 0,
            recovery_point: None,
            rng: p.seed ^ (u64::from(peer.value()) << 24 | u64::from(isn.value())),
            backoff: 0,
            timer: None,
            stats: SenderStats::default(),
            mp: MpRdmaStats::default(),
        }
    }

    // ----- getters -----

    pub fn config(&self) -> &TransportConfig {
        &self.cfg
    }

    /// Counters; `recoveries` counts loss episodes, `min_window` the smallest `⌊cwnd⌋` a packet
    /// was sent under.
    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }

    /// Counters of the multipath rules.
    pub fn mp_stats(&self) -> &MpRdmaStats {
        &self.mp
    }

    /// The cumulative acknowledgement: the oldest PSN not yet acknowledged.
    pub fn cumulative_ack(&self) -> Psn {
        self.outbox.psn(self.una)
    }

    /// The congestion window, in (fractional) packets.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// Packets sent and neither acknowledged nor known lost and awaiting their resend.
    pub fn pipe(&self) -> u64 {
        self.high - self.una - self.acked_count - self.pending_lost()
    }

    pub fn in_recovery(&self) -> bool {
        self.recovery_point.is_some()
    }

    /// Always `None`: MP-RDMA is window-based and unpaced.
    pub fn rate(&self) -> Option<Bandwidth> {
        None
    }

    /// `⌊cwnd⌋`.
    pub fn window(&self) -> Option<u32> {
        Some(self.cwnd as u32)
    }

    /// Every posted message is fully acknowledged.
    pub fn is_idle(&self) -> bool {
        self.outbox.is_empty()
    }

    // ----- commands -----

    /// Queues a message of `bytes` bytes after those already posted.
    pub fn post(&mut self, bytes: u64) -> Result<MessageId, PostError> {
        self.outbox.post(bytes, self.una)
    }

    // ----- inputs -----

    /// An ACK or NACK arrived: the packet it reports adjusts `cwnd` and, unless marked or
    /// pruned, returns its VP for reuse; the cumulative value and the SACK update the
    /// scoreboard; packets Δ below the highest acknowledged one become lost.
    pub fn handle_packet(&mut self, now: Time, pkt: &Packet) {
        let (sack, ece) = match pkt.kind {
            PacketKind::Ack { echo, .. } => (None, echo.ece),
            PacketKind::Nack { sack, echo, .. } => (Some(sack), echo.ece),
            PacketKind::Cnp => {
                self.stats.cnps_received += 1;
                return;
            }
            PacketKind::Data { .. } | PacketKind::Sack { .. } | PacketKind::DropNack { .. } => {
                self.stats.invalid_packets += 1;
                return;
            }
        };
        let cumulative = match self.at_or_after_una(pkt.psn) {
            Some(c) if c > self.high => {
                self.stats.invalid_packets += 1;
                return;
            }
            Some(c) => Some(c),
            None => {
                self.stats.stale_acks += 1;
                None
            }
        };
        match sack {
            None => self.stats.acks_received += 1,
            Some(_) => self.stats.nacks_received += 1,
        }
        // The packet this reply reports, if it is news.
        let reported = match sack {
            Some(s) => self
                .at_or_after_una(s)
                .filter(|&n| n < self.high && self.acked.get((n - self.una) as u32) == Ok(false)),
            None => cumulative.filter(|&c| c > self.una).map(|_| self.una),
        };
        if let Some(m) = reported {
            self.on_delivery(m, ece);
        }
        if let Some(c) = cumulative.filter(|&c| c > self.una) {
            self.advance(now, c);
        }
        if let Some(n) = sack.and(reported) {
            if n >= self.una && self.acked.set((n - self.una) as u32) == Ok(false) {
                self.acked_count += 1;
            }
        }
        self.detect_loss();
    }

    /// The retransmission timer expired: every unacknowledged packet is lost, `cwnd` halves,
    /// the timeout doubles (up to 64×). Earlier or repeated calls do nothing.
    pub fn handle_timeout(&mut self, now: Time) {
        let Some(deadline) = self.timer else { return };
        if now < deadline {
            return;
        }
        if self.una == self.high {
            self.timer = None;
            return;
        }
        self.stats.timeouts += 1;
        self.cwnd = (self.cwnd / 2.0).max(1.0);
        self.lost_to = self.high;
        self.rxt_next = self.una;
        self.recovery_point = Some(self.high);
        self.burst = None;
        self.backoff = (self.backoff + 1).min(MAX_BACKOFF_SHIFT);
        self.timer = Some(now + self.rto());
    }

    // ----- outputs -----

    /// The link is free for this QP: the next lost packet, else the next new one, if the window,
    /// the burst bound, the bitmap and the synchronise rule let it go; on the VP chosen.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        let (n, retransmission) = self.next_to_send()?;
        let vp = self.choose_vp();
        self.sent_vp[(n % u64::from(self.p.bitmap)) as usize] = vp;
        self.stats.packets_sent += 1;
        if retransmission {
            self.stats.retransmissions += 1;
        }
        let w = self.cwnd as u32;
        self.stats.min_window = Some(self.stats.min_window.map_or(w, |m| m.min(w)));
        if let Some(b) = &mut self.burst {
            *b = b.saturating_sub(1);
        }
        if self.timer.is_none() {
            self.timer = Some(now + self.rto());
        }
        let mut pkt = self.outbox.data_packet(now, n, retransmission);
        if let PacketKind::Data { entropy, .. } = &mut pkt.kind {
            *entropy = vp;
        }
        Some(pkt)
    }

    /// When [`handle_timeout`](Self::handle_timeout) must next be called.
    #[inline]
    pub fn poll_timeout(&self) -> Option<Time> {
        self.timer
    }

    /// The next fully acknowledged message, in posting order.
    #[inline]
    pub fn poll_completion(&mut self) -> Option<Completion> {
        self.outbox.poll_completion()
    }

    // ----- internals -----

    /// The packet number of `psn`, if it is not behind `una` in serial order.
    fn at_or_after_una(&self, psn: Psn) -> Option<u64> {
        match psn.serial_diff(self.outbox.psn(self.una)) {
            Some(d) if d >= 0 => Some(self.una + d as u64),
            _ => None,
        }
    }

    /// Packet `m` arrived (first report): the window rule, the VP rules, `snd_ooh`.
    fn on_delivery(&mut self, m: u64, ece: bool) {
        let l = f64::from(self.p.bitmap);
        let lagging = m + u64::from(self.p.delta) < self.ooh;
        if ece {
            self.mp.marked += 1;
            self.cwnd = (self.cwnd - 0.5).max(1.0);
        } else {
            self.cwnd = (self.cwnd + 1.0 / self.cwnd).min(l);
        }
        if lagging {
            self.mp.pruned += 1;
        } else if !ece {
            self.reuse
                .push(self.sent_vp[(m % u64::from(self.p.bitmap)) as usize]);
        }
        self.ooh = self.ooh.max(m + 1);
        self.burst = Some(self.p.max_burst);
    }

    /// The cumulative ACK moved forward to `c` (`una < c ≤ high`).
    fn advance(&mut self, now: Time, c: u64) {
        let shift = c - self.una;
        self.acked_count -= u64::from(self.acked.count_ones(shift as u32));
        self.acked.advance(shift as u32);
        self.una = c;
        self.ooh = self.ooh.max(c);
        self.backoff = 0;
        self.outbox.acknowledge(c);
        if self.recovery_point.is_some_and(|p| c >= p) {
            self.recovery_point = None;
        }
        self.timer = (self.una < self.high).then(|| now + self.rto());
    }

    /// Unacknowledged packets Δ or more below the highest acknowledged one are lost; the first
    /// such loss outside an episode starts one and halves `cwnd`.
    fn detect_loss(&mut self) {
        let to = self
            .ooh
            .saturating_sub(u64::from(self.p.delta))
            .min(self.high);
        if to <= self.lost_to.max(self.una) {
            return;
        }
        self.lost_to = to;
        if self.recovery_point.is_none() && self.pending_lost() > 0 {
            self.stats.recoveries += 1;
            self.cwnd = (self.cwnd / 2.0).max(1.0);
            self.recovery_point = Some(self.high);
        }
    }

    /// Lost packets not yet resent in this episode: unacknowledged ones in
    /// `[rxt_next, lost_to)`.
    fn pending_lost(&self) -> u64 {
        let from = self.rxt_next.max(self.una);
        let to = self.lost_to.min(self.high);
        if from >= to {
            return 0;
        }
        let acked = self.acked.count_ones((to - self.una) as u32)
            - self.acked.count_ones((from - self.una) as u32);
        to - from - u64::from(acked)
    }

    fn next_to_send(&mut self) -> Option<(u64, bool)> {
        let pipe = self.pipe();
        if pipe == 0 {
            self.burst = None;
        }
        if pipe >= (self.cwnd as u64).max(1) || self.burst == Some(0) {
            return None;
        }
        let from = self.rxt_next.max(self.una);
        let to = self.lost_to.min(self.high);
        if from < to {
            let first = (from - self.una) as u32;
            match self.acked.first_zero(first, (to - self.una) as u32) {
                Some(off) => {
                    let n = self.una + u64::from(off);
                    self.rxt_next = n + 1;
                    return Some((n, true));
                }
                None => self.rxt_next = to,
            }
        }
        if self.high >= self.outbox.end() {
            return None;
        }
        if self.high >= self.una + u64::from(self.p.bitmap) {
            self.mp.bitmap_stalls += 1;
            return None;
        }
        let synchronise = self.p.synchronise || self.cfg.hold_last_packet;
        if synchronise
            && self.high > self.una
            && self.outbox.last_packet_after(self.high - 1) == Some(self.high)
        {
            return None;
        }
        let n = self.high;
        self.high += 1;
        Some((n, false))
    }

    /// A reusable VP, unless this packet probes (or none is waiting): then a new random one.
    fn choose_vp(&mut self) -> u16 {
        let probe =
            self.p.probe_ppm > 0 && self.next_random() % 1_000_000 < u64::from(self.p.probe_ppm);
        match self.reuse.pop() {
            Some(vp) if !probe => vp,
            _ => {
                self.mp.new_vps += 1;
                // 1..=65535: 0 means "no entropy" to the network.
                (self.next_random() % 65_535) as u16 + 1
            }
        }
    }

    /// SplitMix64: one step of the queue pair's own generator.
    fn next_random(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The timeout: IRN's RTO_low while at most N packets are in flight, else RTO_high; with
    /// timeouts disabled, the default RTO_high. Doubled per consecutive timeout.
    fn rto(&self) -> Duration {
        let base = match self.cfg.rto {
            RtoPolicy::Disabled => TransportConfig::DEFAULT_RTO_HIGH,
            RtoPolicy::Fixed(rto) => rto,
            RtoPolicy::Dual { low, high, n } => {
                if self.high - self.una <= u64::from(n) {
                    low
                } else {
                    high
                }
            }
        };
        base * (1u64 << self.backoff)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{timestamp, Echo, Ecn};
    use crate::transport::{ConfigError, Receiver};

    const RECEIVER_QP: Qpn = Qpn::new(0x22);
    const SENDER_QP: Qpn = Qpn::new(0x11);

    fn us(n: u64) -> Time {
        Time::ZERO + Duration::from_us(n)
    }

    fn cfg(p: MpRdmaParams) -> TransportConfig {
        TransportConfig::mp_rdma(p)
    }

    /// No probing, so every VP choice is by the rules alone.
    fn params(initial_window: u32) -> MpRdmaParams {
        MpRdmaParams {
            probe_ppm: 0,
            initial_window,
            ..MpRdmaParams::PAPER
        }
    }

    fn sender(p: MpRdmaParams) -> MpRdmaSender {
        MpRdmaSender::new(cfg(p), RECEIVER_QP, Psn::ZERO)
    }

    fn ack(cumulative: u32, ece: bool) -> Packet {
        Packet {
            dest_qp: SENDER_QP,
            psn: Psn::new(cumulative),
            kind: PacketKind::Ack {
                msn: 0,
                echo: Echo {
                    ts: timestamp(us(0)),
                    ece,
                },
            },
        }
    }

    fn nack(cumulative: u32, sack: u32, ece: bool) -> Packet {
        Packet {
            dest_qp: SENDER_QP,
            psn: Psn::new(cumulative),
            kind: PacketKind::Nack {
                msn: 0,
                sack: Psn::new(sack),
                echo: Echo {
                    ts: timestamp(us(0)),
                    ece,
                },
            },
        }
    }

    /// (PSN, VP, retransmission) of everything the sender sends now.
    fn drain(s: &mut MpRdmaSender, now: Time) -> Vec<(u32, u16, bool)> {
        std::iter::from_fn(|| s.poll_transmit(now))
            .map(|p| match p.kind {
                PacketKind::Data {
                    retransmission,
                    entropy,
                    ..
                } => (p.psn.value(), entropy, retransmission),
                _ => panic!("sender sent control: {p:?}"),
            })
            .collect()
    }

    fn psns(sent: &[(u32, u16, bool)]) -> Vec<u32> {
        sent.iter().map(|&(psn, ..)| psn).collect()
    }

    #[test]
    fn paper_defaults_are_valid_and_ranges_are_checked() {
        assert_eq!(MpRdmaParams::PAPER.validate(), Ok(()));
        assert_eq!(cfg(MpRdmaParams::PAPER).validate(), Ok(()));
        let p = MpRdmaParams::PAPER;
        for (bad, err) in [
            (MpRdmaParams { bitmap: 48, ..p }, MpRdmaError::Bitmap(48)),
            (
                MpRdmaParams { bitmap: 8192, ..p },
                MpRdmaError::Bitmap(8192),
            ),
            (
                MpRdmaParams { delta: 64, ..p },
                MpRdmaError::Delta {
                    delta: 64,
                    bitmap: 64,
                },
            ),
            (
                MpRdmaParams { delta: 0, ..p },
                MpRdmaError::Delta {
                    delta: 0,
                    bitmap: 64,
                },
            ),
            (
                MpRdmaParams {
                    probe_ppm: 1_000_001,
                    ..p
                },
                MpRdmaError::Probe(1_000_001),
            ),
            (MpRdmaParams { max_burst: 0, ..p }, MpRdmaError::Burst),
            (
                MpRdmaParams {
                    initial_window: 65,
                    ..p
                },
                MpRdmaError::InitialWindow {
                    window: 65,
                    bitmap: 64,
                },
            ),
        ] {
            assert_eq!(bad.validate(), Err(err));
        }
        // The receiver's window must be the bitmap.
        let mut c = cfg(p);
        c.bdp_cap = Some(110);
        assert_eq!(c.validate(), Err(ConfigError::MpRdmaWindow(64)));
    }

    /// The first window goes out on new random VPs, all distinct here; each unmarked ACK then
    /// grows `cwnd` by 1/cwnd and lends its VP to the packet it releases.
    #[test]
    fn unmarked_acks_grow_the_window_and_clock_packets_out_on_their_path() {
        let mut s = sender(params(4));
        s.post(100 * 1024).unwrap();
        let first = drain(&mut s, us(0));
        assert_eq!(psns(&first), vec![0, 1, 2, 3]);
        assert_eq!(s.mp_stats().new_vps, 4);
        assert!(first.iter().all(|&(_, vp, retx)| vp != 0 && !retx));
        // Each ACK: cwnd += 1/cwnd (4 → 4.25 → 4.485 → 4.708 → 4.921), one packet released,
        // on the acknowledged packet's VP.
        let vp = |i: usize| first[i].1;
        let mut cwnd = 4.0f64;
        for (k, c) in (1..=4).enumerate() {
            s.handle_packet(us(10), &ack(c, false));
            cwnd += 1.0 / cwnd;
            assert!(
                (s.cwnd() - cwnd).abs() < 1e-12,
                "after ACK {c}: {}",
                s.cwnd()
            );
            let out = drain(&mut s, us(10));
            assert_eq!(out, vec![(c + 3, vp(k), false)], "after ACK {c}");
        }
        assert!((s.cwnd() - 4.920_64).abs() < 1e-5);
        // cwnd crosses 5 on the next ACK: it releases two packets, the second on a new VP.
        s.handle_packet(us(20), &ack(5, false));
        assert!(s.cwnd() > 5.0);
        let out = drain(&mut s, us(20));
        assert_eq!(psns(&out), vec![8, 9]);
        assert_eq!(out[0].1, vp(0), "packet 4 went on packet 0's VP");
        assert_eq!(s.mp_stats().new_vps, 5);
        assert_eq!(s.window(), Some(5));
    }

    /// A CE-echoing ACK takes half a packet off `cwnd` and returns no VP: two marked ACKs
    /// release one packet between them, on a new VP.
    #[test]
    fn marked_acks_halve_a_packet_each_and_retire_their_path() {
        let mut s = sender(params(8));
        s.post(100 * 1024).unwrap();
        let first = drain(&mut s, us(0));
        assert_eq!(first.len(), 8);
        // Rows: (ACK's cumulative value, ECE, cwnd after, packets released).
        for (c, ece, cwnd, released) in [
            (1, true, 7.5, 0),
            (2, true, 7.0, 1),
            (3, true, 6.5, 0),
            (4, true, 6.0, 1),
            (5, false, 6.0 + 1.0 / 6.0, 1),
        ] {
            s.handle_packet(us(10), &ack(c, ece));
            assert!(
                (s.cwnd() - cwnd).abs() < 1e-9,
                "after ACK {c}: {}",
                s.cwnd()
            );
            let out = drain(&mut s, us(10));
            assert_eq!(out.len(), released, "after ACK {c}");
        }
        assert_eq!(s.mp_stats().marked, 4);
        // The two packets released by marked ACKs went on new VPs, the last on packet 4's.
        assert_eq!(s.mp_stats().new_vps, 8 + 2);
        // The window never drops below one packet.
        let mut s = sender(params(1));
        s.post(10 * 1024).unwrap();
        drain(&mut s, us(0));
        s.handle_packet(us(10), &ack(1, true));
        assert_eq!(s.cwnd(), 1.0);
    }

    /// Packet 0 is late: by the time its ACK comes, packet 40 (Δ = 32 beyond) has been
    /// acknowledged, so packet 0's path is pruned; and an unacknowledged packet Δ below the
    /// highest acknowledged one is lost and resent.
    #[test]
    fn a_path_lagging_by_delta_is_pruned_and_its_packet_resent() {
        let mut s = sender(params(64));
        s.post(64 * 1024).unwrap();
        let first = drain(&mut s, us(0));
        assert_eq!(first.len(), 64);
        // 1..=32 arrive out of order: nothing is lost yet (32 is only 32 past 0 — exactly Δ
        // behind counts as lost only once something at 0 + Δ is acknowledged).
        for n in 1..=31 {
            s.handle_packet(us(10), &nack(0, n, false));
        }
        assert_eq!(s.stats().recoveries, 0);
        s.handle_packet(us(10), &nack(0, 32, false));
        assert_eq!(s.stats().recoveries, 1, "0 is Δ = 32 behind 32");
        assert_eq!(s.cwnd() as u32, 32, "halved once for the episode");
        let out = drain(&mut s, us(10));
        assert_eq!(out[0].0, 0);
        assert!(out[0].2, "a retransmission");
        // The original packet 0 arrives after all: its ACK moves the window; packet 0 lagged
        // 33 packets behind the highest acknowledged one (32), so its VP is pruned.
        s.handle_packet(us(20), &ack(33, false));
        assert_eq!(s.mp_stats().pruned, 1);
        assert_eq!(s.cumulative_ack(), Psn::new(33));
    }

    /// Nothing goes L = 64 or more past the cumulative ACK, however large the window; the
    /// receiver drops (and counts) a packet that does.
    #[test]
    fn the_bitmap_bounds_the_sender_and_the_receiver_drops_beyond_it() {
        let mut s = sender(params(64));
        s.post(200 * 1024).unwrap();
        assert_eq!(drain(&mut s, us(0)).len(), 64);
        // Out-of-order ACKs for 1..=20 shrink the pipe; but PSN 64 is past snd_una + L.
        for n in 1..=20 {
            s.handle_packet(us(10), &nack(0, n, false));
            assert!(drain(&mut s, us(10)).is_empty());
        }
        assert!(s.mp_stats().bitmap_stalls > 0);
        // The receiver's side: a 64-packet bitmap keeps 63 ahead and drops 64 ahead.
        let c = cfg(MpRdmaParams::PAPER);
        let mut r = Receiver::new(c, SENDER_QP, Psn::ZERO);
        let data = |psn: u32| Packet {
            dest_qp: RECEIVER_QP,
            psn: Psn::new(psn),
            kind: PacketKind::Data {
                payload_len: 1024,
                first: false,
                last: false,
                retransmission: false,
                ecn: Ecn::Ect0,
                ts: 0,
                entropy: 7,
            },
        };
        r.handle_packet(us(0), &data(63));
        r.handle_packet(us(0), &data(64));
        r.handle_packet(us(0), &data(100));
        let st = r.stats();
        assert_eq!((st.packets_accepted, st.window_drops), (1, 2));
    }

    /// Each ACK lets at most `max_burst` packets out, even when a stretch ACK frees more.
    #[test]
    fn one_ack_releases_at_most_two_packets() {
        let mut s = sender(params(8));
        s.post(100 * 1024).unwrap();
        assert_eq!(drain(&mut s, us(0)).len(), 8);
        // 1..=5 arrive ahead of 0; each NACK frees one slot.
        for n in 1..=5 {
            s.handle_packet(us(10), &nack(0, n, false));
            assert_eq!(drain(&mut s, us(10)).len(), 1);
        }
        // 0 arrives: the ACK jumps to 6, nothing more is freed than the slot of 0, ...
        s.handle_packet(us(20), &ack(6, false));
        assert_eq!(drain(&mut s, us(20)).len(), 1);
        // ... and after 8 unmarked ACKs cwnd ≈ 8.9: a stretch ACK covering 6..=10 frees five
        // slots but releases two.
        s.handle_packet(us(30), &ack(11, false));
        assert_eq!(drain(&mut s, us(30)).len(), 2);
    }

    /// With the synchronise rule a message's last packet waits for everything before it.
    #[test]
    fn synchronise_holds_a_last_packet_until_the_rest_is_acknowledged() {
        let p = MpRdmaParams {
            synchronise: true,
            ..params(8)
        };
        let mut s = sender(p);
        s.post(3 * 1024).unwrap();
        s.post(1024).unwrap();
        assert_eq!(psns(&drain(&mut s, us(0))), vec![0, 1]);
        s.handle_packet(us(10), &ack(1, false));
        assert!(drain(&mut s, us(10)).is_empty());
        s.handle_packet(us(10), &ack(2, false));
        // 2 ends message 0; 3 is the single-packet message 1, whose last packet waits for 2.
        assert_eq!(psns(&drain(&mut s, us(10))), vec![2]);
        s.handle_packet(us(20), &ack(3, false));
        assert_eq!(psns(&drain(&mut s, us(20))), vec![3]);
    }

    /// A timeout resends every unacknowledged packet and halves the window.
    #[test]
    fn a_timeout_resends_what_is_unacknowledged() {
        let mut s = sender(params(4));
        s.post(4 * 1024).unwrap();
        assert_eq!(drain(&mut s, us(0)).len(), 4);
        s.handle_packet(us(5), &nack(0, 2, false));
        // Armed with RTO_low by the first packet (at most N = 3 in flight then).
        assert_eq!(s.poll_timeout(), Some(us(100)));
        s.handle_timeout(us(99));
        assert_eq!(s.stats().timeouts, 0);
        s.handle_timeout(us(100));
        assert_eq!(s.stats().timeouts, 1);
        let out = drain(&mut s, us(100));
        assert_eq!(
            out.iter().map(|&(p, _, r)| (p, r)).collect::<Vec<_>>(),
            vec![(0, true), (1, true)],
            "cwnd 2: 0 and 1; 3 waits (2 is acknowledged)"
        );
        // Re-armed at once: RTO_high (4 in flight), doubled.
        assert_eq!(s.poll_timeout(), Some(us(100 + 640)));
    }

    /// Same seed, same VPs; another queue pair draws others.
    #[test]
    fn vp_draws_repeat_per_seed_and_differ_per_queue_pair() {
        let p = MpRdmaParams::PAPER;
        let run = |peer: u32| {
            let mut s = MpRdmaSender::new(cfg(p), Qpn::new(peer), Psn::ZERO);
            s.post(16 * 1024).unwrap();
            drain(&mut s, us(0))
        };
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }
}
