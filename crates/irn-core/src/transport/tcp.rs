//! A TCP-style requester: the iWARP baseline of IRN §4.6.
//!
//! iWARP puts a full TCP stack on the NIC; IRN §4.6 compares IRN against it (with the INET
//! simulator's TCP) and credits IRN's edge to BDP-FC replacing slow start. [`TcpSender`] is that
//! baseline reduced to what differs from IRN: the sender's loss recovery and congestion window,
//! counted in packets rather than bytes. It has the same API as [`Sender`](super::Sender) and
//! works against the unchanged selective-repeat [`Receiver`](super::Receiver), so a simulation can
//! swap one for the other on the same queue pair.
//!
//! | TCP mechanism | RFC | here |
//! | --- | --- | --- |
//! | initial window of 10 segments | RFC 6928 | [`INITIAL_WINDOW`](TcpSender::INITIAL_WINDOW) packets |
//! | slow start, congestion avoidance | RFC 5681 §3.1 | +1 per acked packet below `ssthresh` (at most [`ABC_LIMIT`](TcpSender::ABC_LIMIT) per ACK, RFC 3465), then +1 per window of acked packets |
//! | fast retransmit / fast recovery | RFC 5681 §3.2, RFC 6675 §5 | on the 3rd duplicate ACK or a SACK-detected loss: `ssthresh = cwnd = max(FlightSize / 2, 2)`, resend the cumulative-ACK packet at once |
//! | SACK scoreboard, `IsLost`, `pipe`, `NextSeg` rules 1–2 | RFC 6675 §4 | a [`RingBitmap`] of SACKed packets; lost = unSACKed with [`DUP_THRESH`](TcpSender::DUP_THRESH) SACKed packets above it |
//! | limited transmit | RFC 3042 | implied: SACKed packets leave `pipe`, so early duplicate ACKs release new packets |
//! | RTO from SRTT/RTTVAR, backoff | RFC 6298 | every echoed timestamp is a sample (like RFC 7323 timestamps: no Karn ambiguity); backoff up to [`MAX_BACKOFF`](TcpSender::MAX_BACKOFF)× |
//! | timeout recovery | RFC 5681 §3.1, RFC 6675 §5.1 | `cwnd = 1`, go back to the cumulative ACK, no fast recovery until the recovery point is acked |
//!
//! # How the IRN receiver's replies read as TCP ACKs
//!
//! The receiver answers every data packet: an in-order arrival with a cumulative ACK, an
//! out-of-order one with a NACK carrying the cumulative ACK and the PSN that triggered it. Here
//! any ACK or NACK whose cumulative value equals the sender's (and so does not advance it) is a
//! *duplicate ACK* (RFC 5681 §2), and a NACK's `sack` is a SACK block one packet long (RFC 2018).
//! With an ACK per packet, every arrival is reported exactly once. Real TCP repeats the three or
//! four most recent SACK blocks in every ACK so that losing an ACK loses no SACK information
//! (RFC 2018 §4); here a lost NACK's SACK is gone for good, and what it would have told the
//! sender is learned only from later SACKs, the next cumulative ACK, or, failing those, the RTO.
//!
//! # Simplifications and choices
//!
//! - Packets, not bytes: `cwnd`, `ssthresh`, `pipe` and the IW count MTU-sized packets. A
//!   message's short last packet counts as one.
//! - `cfg.cc` is ignored: TCP's own AIMD is the congestion control. CNPs are counted and ignored;
//!   ECN echoes are ignored (no RFC 3168 reaction), so use a drop-tail network.
//! - `cfg.recovery` is ignored: the sender always runs SACK recovery. Pair it with a receiver
//!   configured for selective repeat; a go-back-N receiver discards out-of-order packets and
//!   NACKs once per episode, which leaves most recovery to the RTO.
//! - The receive window is the receiver's bitmap: no new packet goes more than `cfg.window()`
//!   (the BDP cap if set, else the tracking window) past the cumulative ACK, and `cwnd` is
//!   clamped to it (like Linux's `snd_cwnd_clamp`). So `cfg.bdp_cap`, when set, bounds the window
//!   as `min(cwnd, bdp_cap)` and also as IRN's BDP-FC does.
//! - Every ACK or NACK whose cumulative value equals the sender's counts as a duplicate ACK, as in
//!   RFC 5681, including those answering network duplicates or spurious retransmissions (RFC
//!   6675 would count only ACKs bringing new SACK information); such ACKs can start a spurious
//!   fast recovery, as they can in TCP.
//! - RTO bounds from `cfg.rto`: the minimum RTO, which is also the RTO before the first sample,
//!   is `low` for [`RtoPolicy::Dual`] (IRN's RTO_low; the RTO_high extension is not used), the
//!   value of [`RtoPolicy::Fixed`], and [`MIN_RTO`](TcpSender::MIN_RTO) for
//!   [`RtoPolicy::Disabled`] (TCP always runs its timer). RFC 6298's 1 s floor and 1 s initial
//!   RTO are far too long for a datacenter; these are the datacenter values. Every ACK/NACK is an
//!   RTT sample, each weighted by RFC 6298's α and β (RFC 7323 §4.2 would scale them down for
//!   many samples per window). The backoff is cleared when the cumulative ACK advances.
//! - No proportional rate reduction (RFC 6937), no RFC 6675 `NextSeg` rules 3–4 (rescue
//!   retransmissions), no F-RTO/RACK, no delayed ACKs: losses of retransmissions and lost tails
//!   are repaired by the RTO.
//! - On an RTO the SACK scoreboard is discarded (RFC 2018 §8: a receiver may renege; RFC 6675
//!   §5.1 allows keeping it, which our never-reneging receiver would permit) and every packet
//!   from the cumulative ACK to the highest sent is treated as lost and resent in order under
//!   slow start. SACKs arriving after the timeout are recorded again and skip packets the
//!   receiver already holds; the first resent packet usually makes the cumulative ACK jump over
//!   everything the receiver kept.

use super::config::{RtoPolicy, TransportConfig};
use super::outbox::{Outbox, PostError};
use super::sender::SenderStats;
use super::{Completion, MessageId};
use crate::bitmap::RingBitmap;
use crate::packet::{since_timestamp, Packet, PacketKind, Qpn};
use crate::seq::Psn;
use crate::time::{Bandwidth, Duration, Time};

/// Initial congestion window in packets (RFC 6928's IW10).
const INITIAL_WINDOW: u32 = 10;
/// Duplicate ACKs, or SACKed packets above a hole, that declare the hole lost (RFC 5681 §3.2,
/// RFC 6675 `DupThresh`).
const DUP_THRESH: u32 = 3;
/// Most packets slow start adds to `cwnd` for one ACK (RFC 3465's L = 2·SMSS), so a stretch ACK
/// after a repaired hole does not release a burst.
const ABC_LIMIT: u32 = 2;
/// Minimum RTO when `cfg.rto` gives none ([`RtoPolicy::Disabled`]): IRN's RTO_low (§4.1).
const MIN_RTO: Duration = Duration::from_us(100);
/// Most the RTO is multiplied by after consecutive timeouts (2^6).
const MAX_BACKOFF: u32 = 64;
/// Clock granularity G of RFC 6298: the echoed timestamps count nanoseconds.
const CLOCK_GRANULARITY: Duration = Duration::from_ns(1);

/// A TCP sender (Reno-style AIMD with SACK-based loss recovery) driving an IRN receiver.
///
/// The driver API is [`Sender`](super::Sender)'s: [`post`](Self::post) messages;
/// [`handle_packet`](Self::handle_packet) each ACK/NACK and
/// [`handle_timeout`](Self::handle_timeout) when [`poll_timeout`](Self::poll_timeout) passes;
/// [`poll_transmit`](Self::poll_transmit) whenever the link is free and
/// [`poll_completion`](Self::poll_completion) for acknowledged messages.
///
/// Packet numbers are `u64` counts from the initial PSN; `una ≤ high ≤ end` always holds, and
/// new packets always go out at `high` (a timeout rewinds the retransmission pointer, not `high`).
#[derive(Debug, Clone)]
pub struct TcpSender {
    cfg: TransportConfig,
    /// Posted messages: what each packet number carries, and completions.
    outbox: Outbox,
    /// Oldest unacknowledged packet (RFC 6675 `HighACK`, RFC 793 `SND.UNA`).
    una: u64,
    /// One past the highest packet sent (RFC 6675 `HighData` + 1, RFC 793 `SND.NXT`).
    high: u64,
    /// The receive window: the receiver's bitmap size (the BDP cap, or the tracking window).
    rwnd: u64,
    /// Congestion window in packets, `1..=rwnd`.
    cwnd: u32,
    /// Packets acknowledged in congestion avoidance since `cwnd` last grew (RFC 3465).
    cwnd_cnt: u32,
    /// Slow-start threshold; `u32::MAX` stands for "infinite".
    ssthresh: u32,
    state: State,
    /// SACKed packets, offset from `una`.
    sacked: RingBitmap,
    /// Bits set in `sacked`.
    sacked_count: u64,
    /// The highest SACKed packets, highest first; the last one of a full array bounds the
    /// packets `IsLost` declares lost. Entries below `una` are harmless: they bound nothing.
    top_sacks: [u64; DUP_THRESH as usize],
    top_len: usize,
    /// Duplicate ACKs since the cumulative ACK last advanced.
    dupacks: u32,
    /// In recovery or after a timeout: every unSACKed packet below this is lost.
    lost_to: u64,
    /// In recovery or after a timeout: lost packets below this have been resent in this episode
    /// (RFC 6675 `HighRxt` + 1).
    rxt_next: u64,
    /// The next retransmission goes out even if `pipe ≥ cwnd`: the fast retransmit on entering
    /// recovery (RFC 6675 step 4.3) and the retransmission on a timeout (RFC 6298 step 5.4).
    force_rxt: bool,
    rtt: RttEstimator,
    /// Consecutive timeouts without progress, capped at log2(MAX_BACKOFF).
    backoff: u32,
    /// The retransmission timer's deadline, running while packets are outstanding.
    timer: Option<Time>,
    stats: SenderStats,
}

/// Congestion state, in the spirit of Linux's `tcp_ca_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// No loss known; `cwnd` grows.
    Open,
    /// Fast recovery (RFC 6675 §5) until the cumulative ACK reaches `point`; `cwnd` stays at
    /// `ssthresh`.
    Recovery { point: u64 },
    /// After a timeout, until the cumulative ACK reaches `point` (RFC 6675 §5.1): resend from the
    /// cumulative ACK in slow start; no fast recovery may start.
    Loss { point: u64 },
}

/// RFC 6298's smoothed RTT estimator.
#[derive(Debug, Clone, Copy)]
struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    /// Floor of the RTO, and the RTO before any sample.
    min_rto: Duration,
}

impl RttEstimator {
    fn new(min_rto: Duration) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Duration::ZERO,
            min_rto,
        }
    }

    /// RFC 6298 §2.2–2.3 with α = 1/8, β = 1/4 (RTTVAR first, from the old SRTT).
    fn sample(&mut self, r: Duration) {
        let r_ps = r.as_ps();
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = Duration::from_ps(r_ps / 2);
            }
            Some(srtt) => {
                let s = srtt.as_ps();
                let err = s.abs_diff(r_ps);
                self.rttvar = Duration::from_ps((3 * self.rttvar.as_ps() + err) / 4);
                self.srtt = Some(Duration::from_ps((7 * s + r_ps) / 8));
            }
        }
    }

    /// RTO = SRTT + max(G, 4·RTTVAR), at least the minimum (RFC 6298 §2.2–2.4).
    fn rto(&self) -> Duration {
        match self.srtt {
            None => self.min_rto,
            Some(srtt) => (srtt + CLOCK_GRANULARITY.max(self.rttvar * 4)).max(self.min_rto),
        }
    }
}

impl TcpSender {
    /// Initial congestion window in packets (RFC 6928's IW10).
    pub const INITIAL_WINDOW: u32 = INITIAL_WINDOW;
    /// Duplicate ACKs, or SACKed packets above a hole, that declare the hole lost (RFC 5681
    /// §3.2, RFC 6675 `DupThresh`).
    pub const DUP_THRESH: u32 = DUP_THRESH;
    /// Most packets slow start adds to `cwnd` for one ACK (RFC 3465's L = 2·SMSS).
    pub const ABC_LIMIT: u32 = ABC_LIMIT;
    /// Minimum RTO when `cfg.rto` gives none ([`RtoPolicy::Disabled`]): IRN's RTO_low (§4.1).
    pub const MIN_RTO: Duration = MIN_RTO;
    /// Most the RTO is multiplied by after consecutive timeouts.
    pub const MAX_BACKOFF: u32 = MAX_BACKOFF;
    /// Clock granularity G of RFC 6298: the echoed timestamps count nanoseconds.
    pub const CLOCK_GRANULARITY: Duration = CLOCK_GRANULARITY;

    /// A sender whose first packet carries `isn` and whose packets go to the peer QP `peer`.
    ///
    /// # Panics
    /// If `cfg` fails [`TransportConfig::validate`]; validate configurations at load time.
    pub fn new(cfg: TransportConfig, peer: Qpn, isn: Psn) -> Self {
        if let Err(e) = cfg.validate() {
            panic!("invalid transport configuration: {e}");
        }
        let min_rto = match cfg.rto {
            RtoPolicy::Disabled => MIN_RTO,
            RtoPolicy::Fixed(rto) => rto,
            RtoPolicy::Dual { low, .. } => low,
        };
        let rwnd = cfg.window();
        TcpSender {
            outbox: Outbox::new(cfg.mtu, peer, isn),
            cfg,
            una: 0,
            high: 0,
            rwnd: u64::from(rwnd),
            cwnd: INITIAL_WINDOW.min(rwnd),
            cwnd_cnt: 0,
            ssthresh: u32::MAX,
            state: State::Open,
            sacked: RingBitmap::new(rwnd),
            sacked_count: 0,
            top_sacks: [0; DUP_THRESH as usize],
            top_len: 0,
            dupacks: 0,
            lost_to: 0,
            rxt_next: 0,
            force_rxt: false,
            rtt: RttEstimator::new(min_rto),
            backoff: 0,
            timer: None,
            stats: SenderStats::default(),
        }
    }

    // ----- getters -----

    pub fn config(&self) -> &TransportConfig {
        &self.cfg
    }

    /// Counters; `recoveries` counts fast-recovery episodes, `timeouts` RTO expiries,
    /// `min_window` the smallest `cwnd` a packet was sent under.
    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }

    /// The cumulative acknowledgement: the oldest PSN not yet acknowledged.
    pub fn cumulative_ack(&self) -> Psn {
        self.psn(self.una)
    }

    /// Packets sent and not cumulatively acknowledged, SACKed ones included (RFC 5681's
    /// FlightSize; what BDP-FC bounds).
    pub fn in_flight(&self) -> u64 {
        self.high - self.una
    }

    /// Packets RFC 6675 estimates to be in the network: outstanding, not SACKed, and not known
    /// lost unless already resent. New packets go only while this is below the window.
    pub fn pipe(&self) -> u64 {
        self.high - self.una - self.sacked_count - self.pending_lost()
    }

    /// Whether a loss episode is under way: fast recovery, or the retransmissions after a
    /// timeout, until the cumulative ACK reaches the recovery point.
    pub fn in_recovery(&self) -> bool {
        self.state != State::Open
    }

    /// Always `None`: TCP is window-based and unpaced.
    pub fn rate(&self) -> Option<Bandwidth> {
        None
    }

    /// The congestion window in packets.
    pub fn window(&self) -> Option<u32> {
        Some(self.cwnd)
    }

    /// The slow-start threshold in packets; `None` while it is still infinite.
    pub fn ssthresh(&self) -> Option<u32> {
        (self.ssthresh != u32::MAX).then_some(self.ssthresh)
    }

    /// The smoothed RTT, once there is a sample.
    pub fn srtt(&self) -> Option<Duration> {
        self.rtt.srtt
    }

    /// The retransmission timeout the timer is armed with, backoff included.
    pub fn rto(&self) -> Duration {
        self.rtt.rto() * (1u64 << self.backoff)
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

    /// An ACK or NACK arrived (RFC 6675 §5 steps 1–4, RFC 5681 §3).
    ///
    /// Every acknowledgement gives an RTT sample from its echoed timestamp. A cumulative value
    /// ahead of the sender's acknowledges packets: completions, `cwnd` growth (not during fast
    /// recovery), the timer restarted, and the end of a loss episode at its recovery point. One
    /// equal to the sender's is a duplicate ACK. A NACK's SACK goes into the scoreboard. The
    /// third duplicate ACK, or [`DUP_THRESH`](Self::DUP_THRESH) SACKed packets above a hole,
    /// starts fast recovery; inside an episode they only mark more packets lost. ACKs behind the
    /// sender's are stale (their SACK is still used); ACKs for packets never sent are ignored and
    /// counted.
    pub fn handle_packet(&mut self, now: Time, pkt: &Packet) {
        let (sack, echo) = match pkt.kind {
            PacketKind::Ack { echo, .. } => (None, echo),
            PacketKind::Nack { sack, echo, .. } => (Some(sack), echo),
            // No ordering layer runs under TCP (scenarios refuse the combination).
            PacketKind::Sack { .. } | PacketKind::DropNack { .. } => {
                self.stats.invalid_packets += 1;
                return;
            }
            PacketKind::Cnp => {
                self.stats.cnps_received += 1;
                return;
            }
            PacketKind::Data { .. } => {
                self.stats.invalid_packets += 1;
                return;
            }
        };
        let cumulative = match self.number_at_or_after_una(pkt.psn) {
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
        self.rtt.sample(since_timestamp(now, echo.ts));

        let was_in_fast_recovery = matches!(self.state, State::Recovery { .. });
        let mut newly_acked = 0;
        match cumulative {
            Some(c) if c > self.una => {
                newly_acked = c - self.una;
                self.advance(c);
            }
            Some(_) if self.high > self.una => self.dupacks += 1,
            _ => {}
        }
        if let Some(sack) = sack {
            self.record_sack(sack);
        }

        match self.state {
            State::Recovery { point } | State::Loss { point } if self.una >= point => {
                // RFC 5681 §3.2 step 6: deflate to ssthresh (fast recovery kept it there).
                if was_in_fast_recovery {
                    self.set_cwnd(self.ssthresh);
                }
                self.state = State::Open;
            }
            _ => {}
        }
        if newly_acked > 0 && !was_in_fast_recovery {
            self.grow(newly_acked);
        }

        let sack_lost_to = self.sack_lost_to();
        match self.state {
            State::Open => {
                let sack_loss = sack_lost_to > self.una
                    && self
                        .sacked
                        .first_zero(0, (sack_lost_to - self.una) as u32)
                        .is_some();
                if self.dupacks >= DUP_THRESH || sack_loss {
                    self.enter_recovery(sack_lost_to);
                }
            }
            State::Recovery { .. } | State::Loss { .. } => {
                self.lost_to = self.lost_to.max(sack_lost_to);
                if self.dupacks >= DUP_THRESH && self.una < self.high {
                    self.lost_to = self.lost_to.max(self.una + 1);
                }
            }
        }

        if newly_acked > 0 {
            // RFC 6298 §5.2–5.3: stop when all is acknowledged, else restart.
            self.timer = (self.una < self.high).then(|| now + self.rto());
        }
    }

    /// The retransmission timer expired (RFC 6298 §5.4–5.6, RFC 5681 §3.1); earlier or repeated
    /// calls do nothing.
    ///
    /// `ssthresh = max(FlightSize / 2, 2)` (held on a repeated timeout of the same packet),
    /// `cwnd = 1`, the SACK scoreboard is discarded, every outstanding packet is considered lost
    /// and resent in order from the cumulative ACK, the RTO doubles (up to
    /// [`MAX_BACKOFF`](Self::MAX_BACKOFF)×) and the timer restarts.
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
        if self.backoff == 0 {
            self.ssthresh = (self.in_flight() / 2).max(2) as u32;
        }
        self.set_cwnd(1);
        self.backoff = (self.backoff + 1).min(MAX_BACKOFF.trailing_zeros());
        self.sacked.clear();
        self.sacked_count = 0;
        self.top_len = 0;
        self.dupacks = 0;
        self.state = State::Loss { point: self.high };
        self.lost_to = self.high;
        self.rxt_next = self.una;
        self.force_rxt = true;
        self.timer = Some(now + self.rto());
    }

    // ----- outputs -----

    /// The link is free for this QP; returns the packet to send, if any (RFC 6675 `NextSeg`
    /// rules 1–2 gated by `pipe < cwnd`).
    ///
    /// First the lost packets of the current episode, each once and in order, then new packets
    /// while the receive window (BDP cap) allows. The fast retransmit on entering recovery and the
    /// first retransmission after a timeout go out regardless of `pipe`.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        let (n, retransmission) = self.next_to_send()?;
        self.stats.packets_sent += 1;
        if retransmission {
            self.stats.retransmissions += 1;
        }
        let w = self.cwnd;
        self.stats.min_window = Some(self.stats.min_window.map_or(w, |m| m.min(w)));
        if self.timer.is_none() {
            // RFC 6298 §5.1.
            self.timer = Some(now + self.rto());
        }
        Some(self.outbox.data_packet(now, n, retransmission))
    }

    /// When [`handle_timeout`](Self::handle_timeout) must next be called: the retransmission
    /// timer's deadline, while packets are outstanding.
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

    fn psn(&self, n: u64) -> Psn {
        self.outbox.psn(n)
    }

    /// The packet number of `psn`, if it is not behind `una` in serial order.
    fn number_at_or_after_una(&self, psn: Psn) -> Option<u64> {
        match psn.serial_diff(self.psn(self.una)) {
            Some(d) if d >= 0 => Some(self.una + d as u64),
            _ => None,
        }
    }

    /// SACKed packets in `[una, una + off)`.
    fn sacked_below(&self, off: u64) -> u64 {
        u64::from(self.sacked.count_ones(off as u32))
    }

    /// Lost packets not yet resent in this episode: unSACKed ones in `[rxt_next, lost_to)`.
    fn pending_lost(&self) -> u64 {
        if self.state == State::Open {
            return 0;
        }
        let from = self.rxt_next.max(self.una);
        let to = self.lost_to.min(self.high);
        if from >= to {
            return 0;
        }
        let sacked = self.sacked_below(to - self.una) - self.sacked_below(from - self.una);
        to - from - sacked
    }

    /// RFC 6675 `IsLost` as a bound: every unSACKed packet below the
    /// [`DUP_THRESH`](Self::DUP_THRESH)-th highest SACKed packet has that many SACKed packets
    /// above it.
    fn sack_lost_to(&self) -> u64 {
        if self.top_len == DUP_THRESH as usize {
            self.top_sacks[self.top_len - 1]
        } else {
            0
        }
    }

    fn record_sack(&mut self, sack: Psn) {
        let Some(n) = self.number_at_or_after_una(sack).filter(|&n| n < self.high) else {
            return;
        };
        // n - una < high - una ≤ rwnd ≤ the bitmap's capacity.
        if self.sacked.set((n - self.una) as u32) != Ok(false) {
            return;
        }
        self.sacked_count += 1;
        // Insert into the highest-first list, dropping the lowest if it is full.
        let at = self.top_sacks[..self.top_len]
            .iter()
            .position(|&t| t < n)
            .unwrap_or(self.top_len);
        if at < self.top_sacks.len() {
            self.top_len = (self.top_len + 1).min(self.top_sacks.len());
            self.top_sacks.copy_within(at..self.top_len - 1, at + 1);
            self.top_sacks[at] = n;
        }
    }

    /// The cumulative ACK moved forward to `c` (`una < c ≤ high`).
    fn advance(&mut self, c: u64) {
        let shift = c - self.una;
        self.sacked_count -= self.sacked_below(shift);
        // shift ≤ high - una ≤ the bitmap's capacity.
        self.sacked.advance(shift as u32);
        self.una = c;
        self.dupacks = 0;
        self.backoff = 0;
        self.outbox.acknowledge(c);
    }

    /// RFC 5681 §3.1 with RFC 3465 packet counting: slow start adds one packet per packet
    /// acknowledged (at most [`ABC_LIMIT`](Self::ABC_LIMIT) per ACK) up to `ssthresh`;
    /// congestion avoidance adds one packet per `cwnd` packets acknowledged (at most one per ACK).
    fn grow(&mut self, newly_acked: u64) {
        let mut acked = newly_acked.min(u64::from(u32::MAX)) as u32;
        if self.cwnd < self.ssthresh {
            let inc = acked.min(ABC_LIMIT).min(self.ssthresh - self.cwnd);
            self.cwnd += inc;
            acked = if self.cwnd >= self.ssthresh {
                acked - inc
            } else {
                0
            };
        }
        if acked > 0 {
            self.cwnd_cnt = self.cwnd_cnt.saturating_add(acked);
            if self.cwnd_cnt >= self.cwnd {
                self.cwnd_cnt -= self.cwnd;
                self.cwnd += 1;
                self.cwnd_cnt = self.cwnd_cnt.min(self.cwnd - 1);
            }
        }
        if u64::from(self.cwnd) >= self.rwnd {
            self.set_cwnd(self.cwnd);
        }
    }

    /// Sets `cwnd`, clamped to `1..=rwnd`, and restarts congestion-avoidance counting.
    fn set_cwnd(&mut self, cwnd: u32) {
        self.cwnd = u64::from(cwnd).clamp(1, self.rwnd) as u32;
        self.cwnd_cnt = 0;
    }

    /// RFC 6675 §5 step 4 (RFC 5681 §3.2 steps 2–3): halve, and resend the cumulative-ACK
    /// packet.
    fn enter_recovery(&mut self, sack_lost_to: u64) {
        self.stats.recoveries += 1;
        self.ssthresh = (self.in_flight() / 2).max(2) as u32;
        self.set_cwnd(self.ssthresh);
        self.state = State::Recovery { point: self.high };
        self.rxt_next = self.una;
        self.lost_to = sack_lost_to.max(self.una + 1);
        self.force_rxt = true;
    }

    fn next_to_send(&mut self) -> Option<(u64, bool)> {
        let force = std::mem::take(&mut self.force_rxt);
        if !force && self.pipe() >= u64::from(self.cwnd) {
            return None;
        }
        if self.state != State::Open {
            let from = self.rxt_next.max(self.una);
            let to = self.lost_to.min(self.high);
            if from < to {
                let off = self
                    .sacked
                    .first_zero((from - self.una) as u32, (to - self.una) as u32);
                match off {
                    Some(off) => {
                        let n = self.una + u64::from(off);
                        self.rxt_next = n + 1;
                        return Some((n, true));
                    }
                    // Everything lost so far is SACKed after all: skip the range.
                    None => self.rxt_next = to,
                }
            }
        }
        // Nothing to resend: the forced send, if any, is void; new data obeys the window.
        if force && self.pipe() >= u64::from(self.cwnd) {
            return None;
        }
        if self.high >= self.outbox.end() || self.high - self.una >= self.rwnd {
            return None;
        }
        let n = self.high;
        self.high += 1;
        Some((n, false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{timestamp, Echo, Ecn};
    use crate::transport::MAX_OUTSTANDING_PACKETS;

    /// The receiver's QP (data goes to it) and the sender's (ACKs go to it).
    const RECEIVER_QP: Qpn = Qpn::new(0x22);
    const SENDER_QP: Qpn = Qpn::new(0x11);
    const KB: u64 = 1024;

    fn us(n: u64) -> Time {
        Time::ZERO + Duration::from_us(n)
    }

    /// IRN's settings without a BDP cap: 16384-packet receive window, RTO_low = 100 µs as the
    /// minimum RTO.
    fn open_cfg() -> TransportConfig {
        TransportConfig::irn_without_bdp_fc()
    }

    fn tcp(cfg: TransportConfig, isn: u32) -> TcpSender {
        TcpSender::new(cfg, RECEIVER_QP, Psn::new(isn))
    }

    /// An ACK for everything before `cumulative`, echoing a packet sent at `sent`.
    fn ack(cumulative: u32, sent: Time) -> Packet {
        Packet {
            dest_qp: SENDER_QP,
            psn: Psn::new(cumulative),
            kind: PacketKind::Ack {
                msn: 0,
                echo: Echo {
                    ts: timestamp(sent),
                    ece: false,
                },
            },
        }
    }

    /// A NACK: cumulative ACK plus the one out-of-order PSN that triggered it.
    fn nack(cumulative: u32, sack: u32, sent: Time) -> Packet {
        Packet {
            dest_qp: SENDER_QP,
            psn: Psn::new(cumulative),
            kind: PacketKind::Nack {
                msn: 0,
                sack: Psn::new(sack),
                echo: Echo {
                    ts: timestamp(sent),
                    ece: false,
                },
            },
        }
    }

    /// (PSN, retransmission) of a data packet.
    fn tx(p: &Packet) -> (u32, bool) {
        match p.kind {
            PacketKind::Data { retransmission, .. } => (p.psn.value(), retransmission),
            _ => panic!("sender sent control: {p:?}"),
        }
    }

    fn new(psn: u32) -> (u32, bool) {
        (psn, false)
    }

    fn re(psn: u32) -> (u32, bool) {
        (psn, true)
    }

    /// Everything the sender sends right now.
    fn drain(s: &mut TcpSender, now: Time) -> Vec<(u32, bool)> {
        std::iter::from_fn(|| s.poll_transmit(now))
            .map(|p| tx(&p))
            .collect()
    }

    fn completions(s: &mut TcpSender) -> Vec<(u64, u64)> {
        std::iter::from_fn(|| s.poll_completion())
            .map(|c| (c.msg.0, c.bytes))
            .collect()
    }

    #[test]
    fn segments_like_the_irn_sender() {
        let mut s = tcp(open_cfg(), 0);
        s.post(2500).unwrap();
        s.post(0).unwrap();
        let pkts: Vec<Packet> = std::iter::from_fn(|| s.poll_transmit(us(3))).collect();
        let shape: Vec<_> = pkts
            .iter()
            .map(|p| match p.kind {
                PacketKind::Data {
                    payload_len,
                    first,
                    last,
                    retransmission,
                    ecn,
                    ts,
                    ..
                } => {
                    assert_eq!((retransmission, ecn, ts), (false, Ecn::Ect0, 3_000));
                    assert_eq!(p.dest_qp, RECEIVER_QP);
                    (p.psn.value(), payload_len, first, last)
                }
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(
            shape,
            vec![
                (0, 1024, true, false),
                (1, 1024, false, false),
                (2, 452, false, true),
                (3, 0, true, true),
            ]
        );
        assert_eq!(s.stats().packets_sent, 4);
        assert_eq!(s.poll_timeout(), Some(us(103)));
        s.handle_packet(us(5), &ack(3, us(3)));
        assert_eq!(completions(&mut s), vec![(0, 2500)]);
        assert!(!s.is_idle());
        s.handle_packet(us(5), &ack(4, us(3)));
        assert_eq!(completions(&mut s), vec![(1, 0)]);
        assert!(s.is_idle());
        assert_eq!(s.poll_timeout(), None);
    }

    #[test]
    fn slow_start_doubles_the_window_every_round_trip() {
        let mut s = tcp(open_cfg(), 0);
        s.post(2000 * KB).unwrap();
        assert_eq!(s.window(), Some(INITIAL_WINDOW));
        assert_eq!(s.ssthresh(), None);
        let mut sent_at = us(0);
        let mut round = drain(&mut s, sent_at);
        assert_eq!(round, (0..10).map(new).collect::<Vec<_>>());
        for (k, want) in [20u32, 40, 80, 160, 320].into_iter().enumerate() {
            let now = us(10 * (k as u64 + 1));
            let mut next = Vec::new();
            for &(psn, _) in &round {
                s.handle_packet(now, &ack(psn + 1, sent_at));
                next.extend(drain(&mut s, now));
            }
            assert_eq!(s.window(), Some(want), "round {k}");
            assert_eq!(next.len(), want as usize, "round {k}");
            assert!(next.iter().all(|&(_, retx)| !retx));
            assert_eq!(s.in_flight(), u64::from(want));
            round = next;
            sent_at = now;
        }
        assert_eq!(s.stats().recoveries, 0);
        assert_eq!(s.stats().acks_received, 10 + 20 + 40 + 80 + 160);
    }

    #[test]
    fn stretch_acks_grow_slow_start_by_at_most_two() {
        let mut s = tcp(open_cfg(), 0);
        s.post(100 * KB).unwrap();
        drain(&mut s, us(0));
        s.handle_packet(us(10), &ack(5, us(0))); // five packets in one ACK: +2 (RFC 3465 L = 2)
        assert_eq!(s.window(), Some(12));
        assert_eq!(drain(&mut s, us(10)).len(), 7);
    }

    /// Packets 0..10 leave; 2 is lost; 3, 4, 5 arrive and are SACKed.
    fn after_triple_dupack() -> TcpSender {
        let mut s = tcp(open_cfg(), 0);
        s.post(40 * KB).unwrap();
        let t0 = us(0);
        assert_eq!(drain(&mut s, t0).len(), 10);
        let t = us(10);
        s.handle_packet(t, &ack(1, t0));
        assert_eq!(drain(&mut s, t), vec![new(10), new(11)]);
        s.handle_packet(t, &ack(2, t0));
        assert_eq!(drain(&mut s, t), vec![new(12), new(13)]);
        assert_eq!(s.window(), Some(12));
        // Duplicate ACKs: SACKed packets leave the pipe, so each releases a new packet
        // (limited transmit, RFC 3042).
        s.handle_packet(t, &nack(2, 3, t0));
        assert_eq!(drain(&mut s, t), vec![new(14)]);
        s.handle_packet(t, &nack(2, 4, t0));
        assert_eq!(drain(&mut s, t), vec![new(15)]);
        assert!(!s.in_recovery());
        s.handle_packet(t, &nack(2, 5, t0));
        s
    }

    #[test]
    fn third_duplicate_ack_fast_retransmits_the_hole_and_halves_the_window() {
        let mut s = after_triple_dupack();
        let t = us(10);
        assert!(s.in_recovery());
        assert_eq!(s.stats().recoveries, 1);
        // FlightSize 14 (2..16): ssthresh = cwnd = 7.
        assert_eq!(s.ssthresh(), Some(7));
        assert_eq!(s.window(), Some(7));
        // Exactly the hole, at once, though pipe (11) is above cwnd.
        assert_eq!(drain(&mut s, t), vec![re(2)]);
        assert_eq!(s.pipe(), 11);
        // Each further SACK shrinks pipe; at pipe < 7 new packets flow, one per SACK.
        for sack in 6..=9 {
            s.handle_packet(t, &nack(2, sack, t));
            assert_eq!(drain(&mut s, t), vec![], "SACK {sack}");
        }
        s.handle_packet(t, &nack(2, 10, t));
        assert_eq!(drain(&mut s, t), vec![new(16)]);
        s.handle_packet(t, &nack(2, 11, t));
        assert_eq!(drain(&mut s, t), vec![new(17)]);
        let st = s.stats();
        assert_eq!((st.retransmissions, st.nacks_received), (1, 9));
    }

    #[test]
    fn recovery_exits_at_the_recovery_point() {
        let mut s = after_triple_dupack();
        let t = us(20);
        assert_eq!(drain(&mut s, t), vec![re(2)]);
        for sack in 6..=11 {
            s.handle_packet(t, &nack(2, sack, t));
        }
        assert_eq!(drain(&mut s, t), vec![new(16), new(17)]);
        // The retransmission arrives: the receiver had 3..=11, so the ACK jumps to 12 — a partial
        // ACK, below the recovery point 16.
        s.handle_packet(us(30), &ack(12, t));
        assert!(s.in_recovery());
        assert_eq!(s.window(), Some(7), "no growth during fast recovery");
        assert_eq!(drain(&mut s, us(30)), vec![new(18)]);
        for c in 13..=15 {
            s.handle_packet(us(30), &ack(c, t));
            assert!(s.in_recovery());
            assert_eq!(drain(&mut s, us(30)), vec![new(c + 6)]);
        }
        s.handle_packet(us(30), &ack(16, t));
        assert!(!s.in_recovery());
        assert_eq!(s.window(), Some(7));
        assert_eq!(drain(&mut s, us(30)), vec![new(22)]);
        // Congestion avoidance: one packet more per window of ACKs.
        for c in 17..=23 {
            s.handle_packet(us(40), &ack(c, t));
        }
        assert_eq!(s.window(), Some(8));
        assert_eq!(s.stats().recoveries, 1);
        assert_eq!(s.stats().retransmissions, 1);
    }

    #[test]
    fn sacks_above_a_second_hole_mark_it_lost_during_recovery() {
        let mut s = after_triple_dupack();
        let t = us(20);
        assert_eq!(drain(&mut s, t), vec![re(2)]);
        // 6 is lost as well: once 7, 8, 9 are SACKed it is marked lost, and it goes out as soon
        // as pipe < cwnd, ahead of new packets.
        for sack in [7, 8, 9] {
            s.handle_packet(t, &nack(2, sack, t));
        }
        assert_eq!(s.lost_to, 7);
        // Outstanding 2..16 less 6 SACKed less 6 (lost, not yet resent).
        assert_eq!(s.pipe(), 7);
        assert_eq!(drain(&mut s, t), vec![]);
        s.handle_packet(t, &nack(2, 10, t));
        assert_eq!(drain(&mut s, t), vec![re(6)]);
        s.handle_packet(t, &nack(2, 11, t));
        assert_eq!(drain(&mut s, t), vec![new(16)]);
        // More SACKs never resend 2 or 6 again in this episode; 12 becomes lost once three
        // packets above it are SACKed.
        for sack in [13, 14] {
            s.handle_packet(t, &nack(2, sack, t));
            assert_eq!(drain(&mut s, t), vec![new(sack + 4)]);
        }
        s.handle_packet(t, &nack(2, 15, t));
        assert_eq!(drain(&mut s, t), vec![re(12), new(19)]);
        assert_eq!(s.stats().retransmissions, 3);
    }

    #[test]
    fn timeout_resends_from_una_with_cwnd_one_and_backs_off() {
        let mut s = tcp(open_cfg(), 0);
        s.post(30 * KB).unwrap();
        assert_eq!(drain(&mut s, us(0)).len(), 10);
        assert_eq!(s.poll_timeout(), Some(us(100)));
        s.handle_timeout(us(99)); // early: nothing
        assert_eq!(s.stats().timeouts, 0);
        s.handle_timeout(us(100));
        assert_eq!(s.stats().timeouts, 1);
        assert!(s.in_recovery());
        assert_eq!(s.window(), Some(1));
        assert_eq!(s.ssthresh(), Some(5));
        assert_eq!(drain(&mut s, us(100)), vec![re(0)]);
        // Doubling on each consecutive timeout, up to 64×; ssthresh is held (RFC 5681 §3.1).
        let mut now = us(100);
        for gap in [200, 400, 800, 1600, 3200, 6400, 6400] {
            assert_eq!(s.poll_timeout(), Some(now + Duration::from_us(gap)));
            now += Duration::from_us(gap);
            s.handle_timeout(now);
            assert_eq!(drain(&mut s, now), vec![re(0)]);
            assert_eq!(s.ssthresh(), Some(5));
        }
        assert_eq!(s.stats().timeouts, 8);
        assert_eq!(s.stats().recoveries, 0);
        // Progress resets the backoff and grows cwnd in slow start; go-back continues at 1.
        let t = now + Duration::from_us(10);
        s.handle_packet(t, &ack(1, now));
        assert_eq!(s.poll_timeout(), Some(t + Duration::from_us(100)));
        assert_eq!(s.window(), Some(2));
        assert_eq!(drain(&mut s, t), vec![re(1), re(2)]);
        // The receiver held 3..=9: the next ACK jumps past the recovery point.
        s.handle_packet(t, &ack(10, now));
        assert!(!s.in_recovery());
        assert_eq!(s.window(), Some(4));
        assert_eq!(drain(&mut s, t), (10..14).map(new).collect::<Vec<_>>());
    }

    #[test]
    fn no_fast_recovery_until_the_timeout_recovery_point_is_acked() {
        let mut s = tcp(open_cfg(), 0);
        s.post(30 * KB).unwrap();
        drain(&mut s, us(0));
        s.handle_timeout(us(100));
        assert_eq!(drain(&mut s, us(100)), vec![re(0)]);
        // Duplicate ACKs and SACKs for the originals of 1..=5 (0 was lost): no new episode.
        for sack in 1..=5 {
            s.handle_packet(us(105), &nack(0, sack, us(0)));
        }
        assert_eq!(s.stats().recoveries, 0);
        // 0 was already resent in this episode, and 1..=5 are SACKed: nothing to send at
        // cwnd 1 with the retransmission of 0 in the pipe.
        assert_eq!(s.pipe(), 1);
        assert_eq!(drain(&mut s, us(105)), vec![]);
        // The resent 0 fills the hole: a stretch ACK, +2 in slow start (cwnd 3).
        s.handle_packet(us(110), &ack(6, us(100)));
        assert_eq!(s.window(), Some(3));
        assert_eq!(drain(&mut s, us(110)), vec![re(6), re(7), re(8)]);
    }

    #[test]
    fn rto_follows_rfc_6298_from_echoed_timestamps() {
        let cfg = TransportConfig {
            rto: RtoPolicy::Fixed(Duration::from_us(1)),
            ..open_cfg()
        };
        let mut s = tcp(cfg, 0);
        s.post(30 * KB).unwrap();
        assert_eq!(
            s.rto(),
            Duration::from_us(1),
            "before any sample: the minimum"
        );
        assert_eq!(s.srtt(), None);
        drain(&mut s, us(0));
        // R = 100: SRTT 100, RTTVAR 50, RTO 100 + 4·50 = 300.
        s.handle_packet(us(100), &ack(1, us(0)));
        assert_eq!(s.srtt(), Some(Duration::from_us(100)));
        assert_eq!(s.rtt.rttvar, Duration::from_us(50));
        assert_eq!(s.rto(), Duration::from_us(300));
        assert_eq!(s.poll_timeout(), Some(us(400)));
        // R = 60: RTTVAR 3/4·50 + 1/4·40 = 47.5, SRTT 7/8·100 + 1/8·60 = 95, RTO 285.
        s.handle_packet(us(160), &ack(2, us(100)));
        assert_eq!(s.rtt.rttvar, Duration::from_ns(47_500));
        assert_eq!(s.srtt(), Some(Duration::from_us(95)));
        assert_eq!(s.rto(), Duration::from_us(285));
        assert_eq!(s.poll_timeout(), Some(us(445)));
        // R = 200 from a duplicate ACK: RTTVAR 3/4·47.5 + 1/4·105 = 61.875,
        // SRTT 7/8·95 + 1/8·200 = 108.125, RTO 108.125 + 247.5 = 355.625. A duplicate ACK does
        // not restart the timer.
        s.handle_packet(us(400), &ack(2, us(200)));
        assert_eq!(s.rtt.rttvar, Duration::from_ns(61_875));
        assert_eq!(s.srtt(), Some(Duration::from_ns(108_125)));
        assert_eq!(s.rto(), Duration::from_ns(355_625));
        assert_eq!(s.poll_timeout(), Some(us(445)));
        // The minimum still applies: IRN's RTO_low of 100 µs over 2 µs samples.
        let mut s = tcp(open_cfg(), 0);
        s.post(KB).unwrap();
        drain(&mut s, us(0));
        s.handle_packet(us(2), &ack(0, us(0)));
        assert_eq!(s.srtt(), Some(Duration::from_us(2)));
        assert_eq!(s.rto(), Duration::from_us(100));
        // No timeout configured: TCP still runs its timer, with MIN_RTO.
        let s = tcp(TransportConfig::roce(true), 0);
        assert_eq!(s.rto(), MIN_RTO);
    }

    #[test]
    fn psn_wraps_at_2_pow_24() {
        let isn = (1 << 24) - 3;
        let psn = |n: u32| Psn::new(isn).add(n).value();
        let mut s = tcp(open_cfg(), isn);
        s.post(10 * KB).unwrap();
        let t0 = us(0);
        assert_eq!(
            drain(&mut s, t0),
            (0..10).map(|n| new(psn(n))).collect::<Vec<_>>()
        );
        // Packet 3 (PSN 0) is lost.
        let t = us(10);
        s.handle_packet(t, &ack(psn(3), t0));
        assert_eq!(s.cumulative_ack(), Psn::new(0));
        for n in 4..=6 {
            s.handle_packet(t, &nack(psn(3), psn(n), t0));
        }
        assert!(s.in_recovery());
        assert_eq!(drain(&mut s, t), vec![re(0)]);
        s.handle_packet(us(20), &ack(psn(10), t));
        assert!(!s.in_recovery());
        assert_eq!(s.cumulative_ack(), Psn::new(7));
        assert_eq!(completions(&mut s), vec![(0, 10 * KB)]);
        assert_eq!(s.poll_timeout(), None);
    }

    #[test]
    fn bdp_cap_bounds_the_window() {
        let cfg = TransportConfig {
            bdp_cap: Some(4),
            ..TransportConfig::irn()
        };
        let mut s = tcp(cfg, 0);
        s.post(10 * KB).unwrap();
        assert_eq!(s.window(), Some(4));
        assert_eq!(drain(&mut s, us(0)), (0..4).map(new).collect::<Vec<_>>());
        s.handle_packet(us(10), &ack(2, us(0)));
        assert_eq!(s.window(), Some(4));
        assert_eq!(drain(&mut s, us(10)), vec![new(4), new(5)]);
        // SACKs free pipe but not the receive window: 6 is 4 past the cumulative ACK.
        s.handle_packet(us(10), &nack(2, 3, us(0)));
        assert_eq!(drain(&mut s, us(10)), vec![]);
    }

    #[test]
    fn stale_invalid_and_cnp_packets() {
        let mut s = tcp(open_cfg(), 0);
        s.post(4 * KB).unwrap();
        drain(&mut s, us(0));
        s.handle_packet(us(1), &ack(3, us(0)));
        s.handle_packet(us(1), &nack(1, 2, us(0))); // reordered: stale, not a duplicate ACK
        s.handle_packet(us(1), &ack(9, us(0))); // acknowledges packets never sent
        s.handle_packet(
            us(1),
            &Packet {
                dest_qp: SENDER_QP,
                psn: Psn::ZERO,
                kind: PacketKind::Cnp,
            },
        );
        let mut data = s.clone();
        let pkt = data.poll_transmit(us(1));
        assert!(pkt.is_none());
        s.handle_packet(
            us(1),
            &Packet {
                dest_qp: SENDER_QP,
                psn: Psn::ZERO,
                kind: PacketKind::Data {
                    payload_len: 8,
                    first: true,
                    last: true,
                    retransmission: false,
                    ecn: Ecn::Ect0,
                    ts: 0,
                    entropy: 0,
                },
            },
        );
        let st = s.stats();
        assert_eq!(
            (
                st.acks_received,
                st.nacks_received,
                st.stale_acks,
                st.invalid_packets,
                st.cnps_received
            ),
            (1, 1, 1, 2, 1)
        );
        assert_eq!(s.cumulative_ack(), Psn::new(3));
        assert!(!s.in_recovery());
        assert_eq!(s.window(), Some(12));
    }

    #[test]
    fn posting_is_bounded() {
        let mut s = tcp(open_cfg(), 0);
        let mtu = u64::from(open_cfg().mtu);
        s.post(MAX_OUTSTANDING_PACKETS * mtu).unwrap();
        assert_eq!(
            s.post(1),
            Err(PostError::Backlog {
                outstanding: MAX_OUTSTANDING_PACKETS,
                requested: 1,
                limit: MAX_OUTSTANDING_PACKETS,
            })
        );
    }
}
