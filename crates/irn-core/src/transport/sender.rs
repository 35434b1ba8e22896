//! The requester: segments messages into packets, decides what to (re)send, runs the timer.

use super::config::{LossRecovery, Resend, RtoBackoff, RtoPolicy, TransportConfig};
use super::detection::Detection;
use super::outbox::{Outbox, PostError};
use super::restart::RestartWindow;
use super::{Completion, MessageId};
use crate::bitmap::RingBitmap;
use crate::cc::{AckEvent, CcConfig, CnpCarrier, CongestionControl};
use crate::packet::{since_timestamp, Packet, PacketKind, Qpn, CONTROL_FRAME_BYTES};
use crate::seq::Psn;
use crate::time::{Duration, Time};

/// The requester half of a reliable-connected queue pair.
///
/// Methods come in the order a driver uses them (as in quinn-proto's `Connection`):
/// - **commands**: [`post`](Self::post) a message;
/// - **inputs**: [`handle_packet`](Self::handle_packet) for each ACK/NACK that arrives (IRN §6.2
///   *receiveAck*), [`handle_timeout`](Self::handle_timeout) when the deadline from
///   [`poll_timeout`](Self::poll_timeout) passes (*timeout*);
/// - **outputs**: [`poll_transmit`](Self::poll_transmit) each time the link is free for this QP
///   (*txFree*), then [`poll_timeout`](Self::poll_timeout) for the next deadline and
///   [`poll_completion`](Self::poll_completion) for acknowledged messages.
///
/// Packet numbers are `u64` counts from the initial PSN; `una ≤ nxt ≤ high ≤ outbox.end()`
/// always holds.
///
/// `repr(C)` keeps the fields in the order written: what every packet reads and writes comes
/// first, packed into as few cache lines as it fits, since a simulator's many queue pairs are
/// rarely in cache; the congestion controller and the configuration come last.
#[derive(Debug, Clone)]
#[repr(C)]
pub struct Sender {
    /// What [`poll_timeout`](Self::poll_timeout) reports, recomputed whenever an input or an
    /// output changes the state it depends on.
    deadline: Option<Time>,
    /// The latest `now` seen, so deadlines already past are not reported.
    last_now: Time,
    /// Oldest unacknowledged packet: the cumulative ACK.
    una: u64,
    /// Next packet the in-sequence path sends. Go-back-N rewinds it to `una`; selective repeat
    /// keeps it equal to `high`.
    nxt: u64,
    /// One past the highest packet ever sent; packets below it that go out again are
    /// retransmissions.
    high: u64,
    /// Most packets allowed between `una` and a new packet: the BDP cap, or for selective
    /// repeat without BDP-FC the bitmap's tracking window; for go-back-N the smaller of the BDP
    /// cap and the transmit window, `u64::MAX` (no limit) without either, and under slow
    /// restart its current window (which [`RestartWindow`] moves, so sending reads one limit).
    flight_limit: u64,
    /// With [`TransportConfig::hold_last_packet`]: the last packet of the oldest message whose
    /// last packet has not been sent; it may not leave before `una` reaches it (Eunomia's WRITE
    /// rule). `u64::MAX`, which no packet number equals, when the hold is off or nothing is
    /// held, so the in-sequence path pays one comparison for it.
    hold_at: u64,
    /// The retransmission timer's deadline, while it runs.
    timer: Option<Time>,
    /// How long the timer runs when armed: RTO_low for [`RtoPolicy::Dual`], the fixed RTO, or
    /// `None` when timeouts are disabled.
    rto_armed: Option<Duration>,
    /// Rate-based congestion control: the next packet may not leave before this.
    next_tx_at: Time,
    /// When go-back-N last rewound (a NACK or a timeout): every packet sent before then and
    /// not yet acknowledged is being sent again.
    rewound_at: Time,
    /// For [`RtoPolicy::Dual`]: the running timer was already extended from RTO_low to RTO_high.
    timer_extended: bool,
    /// Doublings of the timeout ([`RtoBackoff::Exponential`]): timeouts since the cumulative
    /// ACK last moved, at most log2 of [`TransportConfig::MAX_RTO_BACKOFF`].
    backoff: u8,
    /// `cc` is a controller at all. Without one (the common case) it has nothing to learn or
    /// say, and the per-packet path skips it without reading it.
    cc_active: bool,
    /// DCQCN with [`CnpCarrier::Ack`]: a reply's `ece` (BECN) is a CNP.
    cnp_in_echo: bool,
    loss: Loss,
    /// Posted messages: what each packet number carries, and completions.
    outbox: Outbox,
    stats: SenderStats,
    /// With a retransmission delay (IRN §6.3): when each lost packet was detected, so it leaves
    /// no earlier than the delay after. `None` (nothing to check) when the delay is zero.
    detection: Option<Box<Detection>>,
    /// Slow restart's window (go-back-N with [`TransportConfig::slow_restart`]); `None` when
    /// off, so it costs a check per cumulative ACK and loss episode, nothing per packet sent.
    restart: Option<RestartWindow>,
    cc: CongestionControl,
    cfg: TransportConfig,
}

/// Loss-recovery state, by recovery scheme.
#[derive(Debug, Clone)]
enum Loss {
    GoBackN,
    Selective(Selective),
}

#[derive(Debug, Clone)]
struct Selective {
    /// Selectively acknowledged packets, offset from `una`; `None` for the no-SACK variant.
    sacked: Option<RingBitmap>,
    /// One past the highest selectively acknowledged packet.
    sack_high: u64,
    recovery: Option<Recovery>,
}

/// An ongoing loss-recovery episode (IRN §3.1).
#[derive(Debug, Clone, Copy)]
struct Recovery {
    /// Recovery ends when the cumulative ACK reaches this: one past the recovery sequence (the
    /// last new packet sent before recovery began).
    point: u64,
    /// Where the look-ahead for the next hole resumes (the "sequence to be retransmitted" of
    /// IRN §6.1).
    next: u64,
    /// A packet to resend before any hole: the cumulative-ACK PSN on entering recovery, or, with
    /// no SACK bitmap, the PSN the latest NACK asked for.
    pending: Option<u64>,
    /// Every unSACKed packet below this is lost too, whatever the highest SACK: `point` after a
    /// timeout under [`Resend::Unsacked`] or a NACK under [`Resend::Unsacked`], else
    /// 0 (only the highest SACK decides).
    lost_below: u64,
}

/// Counters a sender keeps about itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Data packets handed out by `poll_transmit`, retransmissions included.
    pub packets_sent: u64,
    pub retransmissions: u64,
    pub acks_received: u64,
    /// NACKs: IRN's and RoCE's, and an ordering layer's for a packet it dropped.
    pub nacks_received: u64,
    /// An ordering layer's SACKs (Eunomia): reordering reported, never a recovery.
    pub sacks_received: u64,
    /// ACK/NACKs whose cumulative value was behind the sender's: reordered or duplicated.
    pub stale_acks: u64,
    /// ACK/NACKs acknowledging packets never sent, and data packets sent to a sender; ignored.
    pub invalid_packets: u64,
    /// Loss-recovery episodes entered on a NACK (selective repeat) or go-backs (go-back-N).
    pub recoveries: u64,
    pub timeouts: u64,
    /// RTO_low expiries extended to RTO_high because more than N packets were in flight.
    pub rto_extensions: u64,
    pub cnps_received: u64,
    /// Lowest pacing rate rate-based congestion control set while packets were sent.
    pub min_rate_bps: Option<u64>,
    /// Smallest window window-based congestion control allowed while packets were sent.
    pub min_window: Option<u32>,
}

/// What an acknowledgement tells the sender, beyond its cumulative ACK.
#[derive(Clone, Copy)]
enum Signal {
    Ack,
    /// IRN's or RoCE's NACK: `sack` arrived out of order, and a loss is assumed.
    Nack(Psn),
    /// An ordering layer holds this packet (Eunomia's SACK): no loss.
    Sack(Psn),
    /// An ordering layer dropped this packet (Eunomia's NACK): recover.
    Dropped(Psn),
}

impl Sender {
    /// A sender whose first packet carries `isn` and whose packets go to the peer QP `peer`.
    ///
    /// # Panics
    /// If `cfg` fails [`TransportConfig::validate`] (validate configurations at load time), or
    /// asks for TCP, which [`TcpSender`](super::TcpSender) serves ([`Requester`](super::Requester)
    /// picks the right one).
    pub fn new(cfg: TransportConfig, peer: Qpn, isn: Psn) -> Self {
        if let Err(e) = cfg.validate() {
            panic!("invalid transport configuration: {e}");
        }
        let (loss, flight_limit) = match cfg.recovery {
            LossRecovery::Tcp => panic!("TCP is served by TcpSender, not Sender"),
            LossRecovery::MpRdma(_) => panic!("MP-RDMA is served by MpRdmaSender, not Sender"),
            LossRecovery::GoBackN => (
                Loss::GoBackN,
                cfg.go_back_n_window().map_or(u64::MAX, u64::from),
            ),
            LossRecovery::SelectiveRepeat { sack_bitmap } => (
                Loss::Selective(Selective {
                    sacked: sack_bitmap.then(|| RingBitmap::new(cfg.window())),
                    sack_high: 0,
                    recovery: None,
                }),
                u64::from(cfg.window()),
            ),
        };
        // A window-based controller starts at what the sender may have in flight: a larger
        // window would absorb its first cuts without effect (ns-3's RDMA windows start at the
        // transmit window, one BDP).
        let initial_window = u32::try_from(flight_limit)
            .unwrap_or(u32::MAX)
            .min(cfg.bdp_cap.unwrap_or(cfg.tracking_window));
        let cc = CongestionControl::new(&cfg.cc, cfg.line_rate, initial_window, cfg.mtu);
        Sender {
            deadline: None,
            last_now: Time::ZERO,
            una: 0,
            nxt: 0,
            high: 0,
            flight_limit,
            hold_at: u64::MAX,
            timer: None,
            rto_armed: match cfg.rto {
                RtoPolicy::Disabled => None,
                RtoPolicy::Fixed(rto) => Some(rto),
                RtoPolicy::Dual { low, .. } => Some(low),
            },
            next_tx_at: Time::ZERO,
            rewound_at: Time::ZERO,
            timer_extended: false,
            backoff: 0,
            cc_active: !matches!(cc, CongestionControl::None),
            cnp_in_echo: matches!(cfg.cc, CcConfig::Dcqcn(p) if p.cnp_carrier == CnpCarrier::Ack),
            loss,
            outbox: Outbox::new(cfg.mtu, peer, isn),
            stats: SenderStats::default(),
            detection: (cfg.retransmit_delay > Duration::ZERO)
                .then(|| Box::new(Detection::new(cfg.retransmit_delay))),
            // `validate` made sure slow restart has a window.
            restart: cfg
                .slow_restart
                .zip(cfg.go_back_n_window())
                .map(|(rule, full)| RestartWindow::new(rule, full)),
            cc,
            cfg,
        }
    }

    // ----- getters -----

    pub fn config(&self) -> &TransportConfig {
        &self.cfg
    }

    #[inline]
    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }

    /// The cumulative acknowledgement: the oldest PSN not yet acknowledged.
    pub fn cumulative_ack(&self) -> Psn {
        self.psn(self.una)
    }

    /// Packets sent and not cumulatively acknowledged (selectively acknowledged ones included):
    /// what BDP-FC bounds and what the RTO_low rule counts.
    pub fn in_flight(&self) -> u64 {
        self.high - self.una
    }

    /// Whether a loss-recovery episode is under way (selective repeat only).
    pub fn in_recovery(&self) -> bool {
        matches!(
            &self.loss,
            Loss::Selective(Selective {
                recovery: Some(_),
                ..
            })
        )
    }

    /// The in-band telemetry records the ACK handled next echoes, for controllers that read
    /// them (`crate::cc::int`); drivers hand them over just before that ACK.
    pub fn handle_telemetry(&mut self, hops: &[crate::cc::int::IntHop]) {
        if self.cc_active {
            self.cc.on_telemetry(hops);
        }
    }

    /// The congestion controller's current pacing rate, if it is rate-based.
    pub fn rate(&self) -> Option<crate::Bandwidth> {
        self.cc.rate()
    }

    /// The congestion controller's current window in packets, if it is window-based.
    pub fn window(&self) -> Option<u32> {
        self.cc.window()
    }

    /// Slow restart's current window in packets, if slow restart is on.
    pub fn restart_window(&self) -> Option<u32> {
        self.restart.as_ref().map(RestartWindow::window)
    }

    /// Every posted message is fully acknowledged.
    #[inline]
    pub fn is_idle(&self) -> bool {
        self.outbox.is_empty()
    }

    // ----- commands -----

    /// Queues a message of `bytes` bytes after those already posted.
    pub fn post(&mut self, bytes: u64) -> Result<MessageId, PostError> {
        let id = self.outbox.post(bytes, self.una)?;
        if self.cfg.hold_last_packet && self.hold_at == u64::MAX {
            // Every earlier last packet has left: this message's is the next to hold.
            self.hold_at = self.outbox.end() - 1;
        }
        self.refresh_deadline();
        Ok(id)
    }

    // ----- inputs -----

    /// IRN §6.2 *receiveAck*: an ACK or NACK arrived.
    ///
    /// The cumulative part advances the window (shifting the SACK bitmap, completing messages,
    /// restarting the timer, and ending recovery once it passes the recovery point). A NACK's
    /// SACK marks its packet; a NACK then starts loss recovery, or for go-back-N rewinds to the
    /// cumulative ACK (a loss episode: under slow restart the window drops, and each cumulative
    /// ACK regrows it). ACKs that are behind are harmless; ones that acknowledge unsent packets are
    /// ignored and counted. Under DCQCN with [`CnpCarrier::Ack`], a reply whose echo has `ece`
    /// set also carries a CNP.
    pub fn handle_packet(&mut self, now: Time, pkt: &Packet) {
        self.last_now = now;
        self.receive_ack(now, pkt);
        self.refresh_deadline();
    }

    /// [`handle_packet`](Self::handle_packet) but for the deadline.
    fn receive_ack(&mut self, now: Time, pkt: &Packet) {
        let (signal, echo) = match pkt.kind {
            PacketKind::Ack { echo, .. } => (Signal::Ack, echo),
            PacketKind::Nack { sack, echo, .. } => (Signal::Nack(sack), echo),
            PacketKind::Sack { sacked, echo } => (Signal::Sack(sacked), echo),
            PacketKind::DropNack { dropped, echo } => (Signal::Dropped(dropped), echo),
            PacketKind::Cnp => {
                self.stats.cnps_received += 1;
                self.cc.on_cnp(now);
                return;
            }
            PacketKind::Data { .. } => {
                self.stats.invalid_packets += 1;
                return;
            }
        };
        // `None` when the ACK is behind `una` (stale).
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
        let cumulative = cumulative.or_else(|| self.unrepaired_drop(now, signal, echo.ts));
        match signal {
            Signal::Ack => self.stats.acks_received += 1,
            Signal::Nack(_) | Signal::Dropped(_) => self.stats.nacks_received += 1,
            Signal::Sack(_) => self.stats.sacks_received += 1,
        }
        if self.cnp_in_echo && echo.ece {
            self.stats.cnps_received += 1;
            self.cc.on_cnp(now);
        }
        let una_before = self.una;
        if let Some(c) = cumulative.filter(|&c| c > self.una) {
            self.advance(now, c);
        }
        if self.cc_active {
            self.cc.on_ack(
                now,
                &AckEvent {
                    newly_acked: self.una - una_before,
                    rtt: Some(since_timestamp(now, echo.ts)),
                    ece: echo.ece,
                    una: self.una,
                    nxt: self.high,
                },
            );
        }
        if let Signal::Ack = signal {
            if self.una > una_before {
                self.partial_ack(now);
            }
            return;
        }
        let recovering = match signal {
            Signal::Ack => return,
            Signal::Nack(sack) => {
                self.mark_sacked(sack);
                self.start_recovery(now, cumulative)
            }
            // Eunomia (§3.2.2): the packet is held at the receiver, so it is never resent, but
            // the reordering that put it there is not loss.
            Signal::Sack(sacked) => {
                self.mark_sacked(sacked);
                return;
            }
            // Eunomia: the receiver dropped this packet: it is a hole to resend, and recovery
            // starts as on a NACK.
            Signal::Dropped(dropped) => {
                self.mark_lost(dropped);
                self.start_recovery(now, cumulative)
            }
        };
        if recovering {
            self.cc.on_loss(now, self.una, self.high);
        }
        if recovering || matches!(self.loss, Loss::Selective(_)) {
            self.detected(now, recovering);
        }
    }

    /// Selective repeat without a SACK bitmap (IRN §4.3): an ACK that moves the cumulative ACK
    /// during recovery without ending it names the next hole, which is resent at once, as
    /// NewReno does on a partial ACK (RFC 6582). Without this a hole whose NACKs have all
    /// arrived waits for a timeout; the paper describes this variant as taking a round trip per
    /// hole. Holes already resent in this episode are not resent again.
    fn partial_ack(&mut self, now: Time) {
        let Loss::Selective(s) = &mut self.loss else {
            return;
        };
        if s.sacked.is_some() {
            return;
        }
        if let Some(r) = &mut s.recovery {
            if self.una >= r.next {
                r.pending = Some(self.una);
                self.detected(now, false);
            }
        }
    }

    /// Records what a loss signal detected (IRN §6.3's retransmission delay): a new episode
    /// (`episode`: a recovery, a go-back-N rewind, a timeout) detects every packet it will
    /// resend, from the cumulative ACK up; otherwise a higher SACK or a newly named hole
    /// detects what lies below it. Nothing to do without a delay.
    fn detected(&mut self, now: Time, episode: bool) {
        let Some(d) = self.detection.as_deref_mut() else {
            return;
        };
        let boundary = match &self.loss {
            Loss::GoBackN => self.high,
            Loss::Selective(s) => {
                let pending = s.recovery.and_then(|r| r.pending).map_or(0, |p| p + 1);
                let lost_below = s.recovery.map_or(0, |r| r.lost_below);
                s.sack_high.max(pending).max(lost_below).max(self.una + 1)
            }
        };
        if episode {
            d.episode(now, self.una, boundary);
        } else {
            d.raise(now, boundary);
        }
    }

    /// IRN §6.2 *timeout*: call when `now` reaches [`poll_timeout`](Self::poll_timeout); earlier
    /// or repeated calls do nothing.
    ///
    /// Under [`RtoPolicy::Dual`] an RTO_low expiry with more than N packets in flight only
    /// extends the timer to RTO_high. A real expiry resends from the cumulative ACK: go-back-N
    /// rewinds (cutting slow restart's window), selective repeat (re)starts loss recovery.
    pub fn handle_timeout(&mut self, now: Time) {
        self.last_now = now;
        self.expire(now);
        self.refresh_deadline();
    }

    /// [`handle_timeout`](Self::handle_timeout) but for the deadline.
    fn expire(&mut self, now: Time) {
        if self.cc.poll_timeout().is_some_and(|t| t <= now) {
            self.cc.handle_timeout(now);
        }
        let Some(deadline) = self.timer else { return };
        if now < deadline {
            return;
        }
        if let RtoPolicy::Dual { low, high, n } = self.cfg.rto {
            if !self.timer_extended && self.in_flight() > u64::from(n) {
                self.timer = Some(deadline + (high - low) * (1u64 << self.backoff));
                self.timer_extended = true;
                self.stats.rto_extensions += 1;
                return;
            }
        }
        self.stats.timeouts += 1;
        if self.cfg.rto_backoff == RtoBackoff::Exponential
            && (1u32 << self.backoff) < TransportConfig::MAX_RTO_BACKOFF
        {
            self.backoff += 1;
        }
        match &mut self.loss {
            Loss::GoBackN => {
                self.nxt = self.una;
                self.rewound_at = now;
                self.slow_restart();
            }
            Loss::Selective(s) => {
                let mut r = Recovery::start(self.una, self.high);
                if self.cfg.timeout_resend == Resend::Unsacked {
                    r.lost_below = self.high;
                }
                s.recovery = Some(r);
            }
        }
        self.cc.on_loss(now, self.una, self.high);
        self.detected(now, true);
        self.arm_timer(now);
    }

    // ----- outputs -----

    /// IRN §6.2 *txFree*: the link is free for this QP; returns the packet to send, if any.
    ///
    /// In loss recovery, first the cumulative-ACK packet, then every unSACKed packet below the
    /// highest SACK (the look-ahead), and only then new packets. New packets go only while the
    /// flight limit (BDP-FC) allows. Go-back-N resends everything from its rewind point. With
    /// [`TransportConfig::hold_last_packet`], a message's last packet (and what follows it)
    /// waits until the cumulative ACK reaches it.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        self.last_now = now;
        let pkt = self.transmit(now);
        self.refresh_deadline();
        pkt
    }

    /// When [`handle_timeout`](Self::handle_timeout) must next be called: the retransmission
    /// timer, the congestion controller's timers, and the time a packet held back (by pacing,
    /// or by a retransmission being fetched again) may leave, whichever is first.
    #[inline]
    pub fn poll_timeout(&self) -> Option<Time> {
        self.deadline
    }

    /// The next fully acknowledged message, in posting order.
    #[inline]
    pub fn poll_completion(&mut self) -> Option<Completion> {
        self.outbox.poll_completion()
    }

    // ----- internals -----

    /// [`poll_transmit`](Self::poll_transmit) but for the deadline.
    fn transmit(&mut self, now: Time) -> Option<Packet> {
        if now < self.next_tx_at {
            return None;
        }
        let (n, retransmission) = self.next_to_send(now)?;
        self.stats.packets_sent += 1;
        if retransmission {
            self.stats.retransmissions += 1;
        }
        if self.timer.is_none() {
            self.arm_timer(now);
        }
        let pkt = self.outbox.data_packet(now, n, retransmission);
        if self.cc_active {
            let bytes = pkt.framed_len(self.cfg.data_framing, CONTROL_FRAME_BYTES);
            self.sent_with_cc(now, u64::from(bytes));
        }
        Some(pkt)
    }

    /// A data packet of `bytes` on the wire left at `now`: tell the controller, record its
    /// lowest rate or window, and pace the next packet.
    fn sent_with_cc(&mut self, now: Time, bytes: u64) {
        self.cc.on_sent(now, bytes);
        let rate = self.cc.rate();
        if let Some(rate) = rate {
            let r = rate.as_bps();
            self.stats.min_rate_bps = Some(self.stats.min_rate_bps.map_or(r, |m| m.min(r)));
        }
        if let Some(w) = self.cc.window() {
            self.stats.min_window = Some(self.stats.min_window.map_or(w, |m| m.min(w)));
        }
        if let Some(rate) = rate.filter(|&r| r < self.cfg.line_rate) {
            self.next_tx_at = now + rate.serialization(bytes);
        }
    }

    /// Recomputes `deadline` after the state changed. Drivers ask for it
    /// after every packet in and out, so it is worked out here once per change rather than on
    /// every ask.
    fn refresh_deadline(&mut self) {
        let mut next = self.timer;
        if self.cc_active {
            if let Some(t) = self.cc.poll_timeout() {
                next = Some(earliest(next, t));
            }
        }
        if self.next_tx_at > self.last_now && self.has_data_to_send() {
            next = Some(earliest(next, self.next_tx_at));
        }
        if let Some(d) = self.detection.as_deref() {
            if self.in_recovery() || self.nxt < self.high {
                if let Some(t) = d.next_ready(self.last_now) {
                    next = Some(earliest(next, t));
                }
            }
        }
        self.deadline = next;
    }

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

    /// Something is waiting to go: new data, or a retransmission in recovery.
    fn has_data_to_send(&self) -> bool {
        self.nxt < self.outbox.end() || self.in_recovery()
    }

    fn next_to_send(&mut self, now: Time) -> Option<(u64, bool)> {
        if let Some(p) = self.next_hole(now) {
            return Some((p, true));
        }
        if self.nxt >= self.outbox.end() {
            return None;
        }
        // BDP-FC (or the tracking window) and a window-based controller's window.
        let mut limit = self.flight_limit;
        if self.cc_active {
            if let Some(w) = self.cc.window() {
                limit = limit.min(u64::from(w));
            }
        }
        if self.nxt - self.una >= limit {
            return None;
        }
        let n = self.nxt;
        if n < self.high && !fetched(&mut self.detection, now, n) {
            // Go-back-N resends in order: nothing overtakes a retransmission being fetched.
            return None;
        }
        if n == self.hold_at {
            self.release_last(n)?;
        }
        self.nxt += 1;
        let retransmission = n < self.high;
        self.high = self.high.max(self.nxt);
        Some((n, retransmission))
    }

    /// Selective repeat in recovery: the next packet to resend (the pending one, then the
    /// look-ahead's next hole below the highest SACK), if it has been fetched again (IRN §6.3).
    /// One still being fetched stays next; new packets, which the NIC prefetches, may go
    /// meanwhile.
    fn next_hole(&mut self, now: Time) -> Option<u64> {
        let Loss::Selective(s) = &mut self.loss else {
            return None;
        };
        let r = s.recovery.as_mut()?;
        if let Some(p) = r.pending.filter(|&p| p >= self.una && p < self.high) {
            if !fetched(&mut self.detection, now, p) {
                return None;
            }
            r.pending = None;
            r.next = p + 1;
            return Some(p);
        }
        r.pending = None;
        let from = r.next.max(self.una);
        let lost_below = s.sack_high.max(r.lost_below);
        if from >= lost_below {
            return None;
        }
        let first_zero = match s.sacked.as_ref() {
            Some(sacked) => {
                sacked.first_zero((from - self.una) as u32, (lost_below - self.una) as u32)
            }
            // Without a bitmap nothing is known to have arrived: only a timeout's range is lost.
            None => Some((from - self.una) as u32),
        };
        match first_zero {
            Some(off) => {
                let p = self.una + u64::from(off);
                if !fetched(&mut self.detection, now, p) {
                    return None;
                }
                r.next = p + 1;
                Some(p)
            }
            // Everything up to the highest SACK is acknowledged: skip the range.
            None => {
                r.next = lost_below;
                None
            }
        }
    }

    /// The in-sequence path reached `n`, a message's held last packet (Eunomia §3.5.2, appendix
    /// A.1): it may leave only once the cumulative ACK shows every packet before it arrived in
    /// order, and then the next message's last packet is the one held. Packets after `n` wait
    /// behind it, so PSNs still leave in order. Out of line: reached once per message.
    #[cold]
    #[inline(never)]
    fn release_last(&mut self, n: u64) -> Option<()> {
        if self.una < n {
            return None;
        }
        self.hold_at = self.outbox.last_packet_after(n).unwrap_or(u64::MAX);
        Some(())
    }

    /// The cumulative ACK moved forward to `c` (`una < c ≤ high`).
    fn advance(&mut self, now: Time, c: u64) {
        if let Loss::Selective(s) = &mut self.loss {
            if let Some(sacked) = &mut s.sacked {
                // c - una ≤ high - una ≤ the bitmap's window.
                sacked.advance((c - self.una) as u32);
            }
            if s.recovery.is_some_and(|r| c >= r.point) {
                s.recovery = None;
            }
        }
        if let Some(r) = &mut self.restart {
            self.flight_limit = u64::from(r.on_acked(c - self.una));
        }
        self.una = c;
        // Go-back-N: acknowledgements for packets sent before a rewind.
        self.nxt = self.nxt.max(c);
        self.outbox.acknowledge(c);
        // Progress: the next timeout waits the configured RTO again.
        self.backoff = 0;
        if self.una < self.high {
            self.arm_timer(now);
        } else {
            self.timer = None;
        }
    }

    /// The SACK and loss-detection half of a NACK; `cumulative` is `None` for a stale NACK.
    /// Returns whether the NACK started a loss episode (recovery, or a go-back-N rewind).
    /// Selective repeat: `sack` arrived at the receiver, so recovery never resends it (go-back-N
    /// keeps no per-packet state and ignores SACKs).
    fn mark_sacked(&mut self, sack: Psn) {
        let sacked_n = self.number_at_or_after_una(sack).filter(|&s| s < self.high);
        if let (Loss::Selective(s), Some(sn)) = (&mut self.loss, sacked_n) {
            if let Some(bitmap) = &mut s.sacked {
                // sn - una < high - una ≤ window, so the offset is in range.
                let _ = bitmap.set((sn - self.una) as u32);
                s.sack_high = s.sack_high.max(sn + 1);
            }
        }
    }

    /// Selective repeat: `dropped` was discarded by the receiver's ordering layer. Recovery
    /// resends the unSACKed packets below the highest SACK, so that mark moves past `dropped`
    /// (without SACKing it). *Choice:* unSACKed packets between the old mark and `dropped` are
    /// resent too, although some may still be on their way.
    /// An ordering layer's NACK that a later ACK overtook (their paths differ under per-packet
    /// balancing) is stale by its cumulative ACK, yet the packet it names may still be
    /// unacknowledged. The receiver discarded that copy and nothing else will say so (without
    /// timeouts, under PFC, the flow would never finish), so the NACK counts as one at the
    /// current cumulative ACK, unless go-back-N has rewound since the copy left (`ts`, echoed):
    /// the rewind is sending it again already. (An IRN or RoCE NACK's SACK is not a discarded
    /// packet of this kind, so its staleness stands.)
    fn unrepaired_drop(&self, now: Time, signal: Signal, ts: u32) -> Option<u64> {
        let Signal::Dropped(dropped) = signal else {
            return None;
        };
        let unacked = self
            .number_at_or_after_una(dropped)
            .is_some_and(|d| d < self.high);
        let sent_after_rewind = since_timestamp(now, ts) <= now.saturating_since(self.rewound_at);
        let repaired = matches!(self.loss, Loss::GoBackN) && !sent_after_rewind;
        (unacked && !repaired).then_some(self.una)
    }

    fn mark_lost(&mut self, dropped: Psn) {
        let dropped_n = self
            .number_at_or_after_una(dropped)
            .filter(|&d| d < self.high);
        if let (Loss::Selective(s), Some(dn)) = (&mut self.loss, dropped_n) {
            if s.sacked.is_some() {
                s.sack_high = s.sack_high.max(dn + 1);
            }
        }
    }

    /// A loss was signalled with cumulative ACK `cumulative` (`None` if stale): go-back-N
    /// rewinds, selective repeat enters recovery. True if a recovery started.
    fn start_recovery(&mut self, now: Time, cumulative: Option<u64>) -> bool {
        match &mut self.loss {
            Loss::GoBackN => {
                // A stale NACK names a loss already repaired: rewinding would resend for nothing.
                if cumulative.is_some() && self.nxt > self.una {
                    self.nxt = self.una;
                    self.rewound_at = now;
                    self.stats.recoveries += 1;
                    self.slow_restart();
                    return true;
                }
                false
            }
            Loss::Selective(s) => {
                // A stale NACK's SACK is still news, but it cannot start a recovery.
                let Some(c) = cumulative else { return false };
                match &mut s.recovery {
                    None => {
                        let mut r = Recovery::start(self.una, self.high);
                        if self.cfg.nack_resend == Resend::Unsacked {
                            r.lost_below = self.high;
                        }
                        s.recovery = Some(r);
                        self.stats.recoveries += 1;
                        true
                    }
                    Some(r) => {
                        if s.sacked.is_none() && c >= r.next {
                            r.pending = Some(c);
                        }
                        false
                    }
                }
            }
        }
    }

    /// A go-back-N loss episode began: under slow restart, the window drops.
    fn slow_restart(&mut self) {
        if let Some(r) = &mut self.restart {
            self.flight_limit = u64::from(r.on_loss());
        }
    }

    fn arm_timer(&mut self, now: Time) {
        let factor = 1u64 << self.backoff;
        self.timer = self.rto_armed.map(|rto| now + rto * factor);
        // Only read under the dual policy, where the timer starts at RTO_low.
        self.timer_extended = false;
    }
}

impl Recovery {
    /// A new episode: resend `una` first, look for holes from there, end once `high` is acked.
    fn start(una: u64, high: u64) -> Self {
        Recovery {
            point: high,
            next: una,
            pending: Some(una),
            lost_below: 0,
        }
    }
}

/// Whether packet `n`, about to be resent, has been fetched again (IRN §6.3): always, without a
/// retransmission delay. A free function so callers may hold other fields of the sender.
fn fetched(detection: &mut Option<Box<Detection>>, now: Time, n: u64) -> bool {
    detection.as_deref_mut().is_none_or(|d| d.ready(now, n))
}

/// The earlier of a deadline, if any, and `t`.
fn earliest(deadline: Option<Time>, t: Time) -> Time {
    deadline.map_or(t, |d| d.min(t))
}
