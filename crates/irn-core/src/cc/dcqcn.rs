//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015):
//! the rate-based controller of RoCEv2 NICs, which IRN runs "with the same parameters as
//! specified in \[38\]" (IRN §4.1) and evaluates in §4.2.4 and §4.5 (Resilient RoCE).
//!
//! Three parties: switches ECN-mark packets (the congestion point, configured with the switch);
//! the receiver's notification point ([`CnpPacer`]) turns marked packets into congestion
//! notification packets (CNPs), at most one per `cnp_interval` per queue pair; the sender's
//! reaction point ([`Dcqcn`]) cuts its rate on a CNP and climbs back with a timer and a byte
//! counter.
//!
//! # Two reaction points: the paper's and the ConnectX's
//!
//! The DCQCN paper's pseudo-code and the Mellanox ConnectX firmware (which the IRN paper's
//! simulator modelled, IRN §4.1, and which ns-3's RDMA models copy as "Mellanox's version of
//! DCQCN") differ in five places. Each is a field of [`DcqcnParams`]; the
//! [`DcqcnParams::dcqcn_paper`] preset (the default) takes the paper's side of all five,
//! [`DcqcnParams::mlx`] the ConnectX's as ns-3 models it:
//!
//! | behaviour | paper ([`DcqcnParams::dcqcn_paper`]) | ConnectX ([`DcqcnParams::mlx`]) |
//! | --- | --- | --- |
//! | RT on a cut ([`clamp_target_rate`](DcqcnParams::clamp_target_rate)) | RT ← RC on every cut | RT kept while cuts precede any increase |
//! | increase phase ([`increase_stages`](DcqcnParams::increase_stages)) | timer and byte stages (QCN) | timer stage alone |
//! | α ([`alpha_update`](DcqcnParams::alpha_update)) | raised at each cut, decays without CNPs | one update per period from the first CNP |
//! | cuts ([`rate_decrease`](DcqcnParams::rate_decrease)) | at the CNP, at most one per period | at the next period tick after a CNP |
//! | CNP on a NACK ([`cnp_on_nack`](DcqcnParams::cnp_on_nack)) | no | yes |
//!
//! A sixth choice is not the NIC's but the model's: how a CNP travels
//! ([`cnp_carrier`](DcqcnParams::cnp_carrier)). A RoCEv2 NIC sends each as a packet of its own;
//! ns-3's RDMA models set a flag on the ACK instead, which costs the reverse path nothing.
//!
//! # The reaction point
//!
//! State: current rate RC, target rate RT, α, timer stage T and byte stage BC (increase events
//! of each kind since the last cut), bytes sent since the last byte-counter event.
//!
//! * A flow starts at line rate with α = 1 and no timer running (IRN §4.1: flows start at line
//!   rate; the reaction point only acts after its first cut).
//! * **CNP** at `now`, with `rate_decrease = OnCnp`: if no cut happened in the last
//!   `rate_decrease_period`, a cut at `now`. A CNP inside the decrease period does not cut and,
//!   with `alpha_update = OnCut`, does not raise α, but it is still congestion feedback: it
//!   restarts the α-update timer (α decays only after `alpha_update_period` *without* a CNP)
//!   and is counted ([`Dcqcn::cnps_ignored`]).
//! * **CNP** with `rate_decrease = Periodic`: the cut happens at the next tick of a
//!   `rate_decrease_period` clock started by the flow's first CNP (so every cut falls on a
//!   tick); more CNPs before that tick join the same cut (and are counted as ignored).
//! * **Cut**: RT ← RC (always if `clamp_target_rate`, otherwise only if an increase event
//!   happened since the last cut), RC ← max(min_rate, RC·(1 − α/2)); with
//!   `alpha_update = OnCut` then α ← (1 − g)·α + g (the paper's order: the cut uses the α from
//!   before this CNP). T, BC and the byte counter restart from zero, and the rate-increase timer
//!   (and with `OnCut` the α-update timer) restarts from the cut.
//! * **α**: with `OnCut`, α ← (1 − g)·α at each `alpha_update_period` without a CNP. With
//!   `Periodic`, every `alpha_update_period` from the first CNP: α ← (1 − g)·α + g if a CNP
//!   arrived since the previous update (the first CNP itself does not count), else
//!   α ← (1 − g)·α.
//! * **Rate-increase timer** expiry (every `rate_increase_period`) and **byte counter** (every
//!   `byte_counter` bytes sent): an increase event, judged on the stage counters *before* the
//!   event's own counter is incremented. With `increase_stages = TimerAndBytes`:
//!   - max(T, BC) < F — fast recovery: RC ← (RT + RC)/2;
//!   - min(T, BC) > F — hyper increase: RT ← RT + i·R_HAI with i = min(T, BC) − F, then
//!     RC ← (RT + RC)/2;
//!   - otherwise — additive increase: RT ← RT + R_AI, then RC ← (RT + RC)/2.
//!
//!   So one counter alone gives exactly F fast-recovery steps, then additive steps; hyper
//!   increase needs both counters past F (the QCN rule DCQCN inherits), which with a 10 MB
//!   byte counter almost never happens. With `Timer`, T alone decides: T < F fast recovery,
//!   T = F one additive step, T > F hyper increase by one R_HAI per event. RT and RC are capped
//!   at line rate; the halving rounds up so RC reaches RT instead of stalling one bit/s below
//!   it.
//! * A rate-increase timer event and a pending cut due at the same instant: the increase comes
//!   first (ns-3 schedules the increase timer 300 µs ahead, the decrease check 4 µs ahead, and
//!   runs same-time events in the order they were scheduled).
//! * Once RC is back at line rate the timers stop ([`Dcqcn::poll_timeout`] is `None`) and the
//!   byte counter stops counting. α keeps decaying lazily: the updates the stopped timer would
//!   have made are applied, in closed form (1 − g)ⁿ, at the next CNP. With `Periodic` α needs
//!   no timer at all: every update is applied this way when α is next read or changed.
//!
//! Rates are integer bits per second; α is an `f64`. No clock, no allocation.

use crate::time::{Bandwidth, Duration, Time};

/// Which stage counters decide an increase event's phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncreaseStages {
    /// The DCQCN paper's (QCN's) rule: the timer stage T and the byte stage BC together;
    /// hyper increase only once both exceed F, by (min(T, BC) − F)·R_HAI.
    TimerAndBytes,
    /// The ConnectX as ns-3 models it (`RdmaHw::RateIncEventMlx` in HPCC's and ConWeave's
    /// `src/point-to-point/model/rdma-hw.cc`): the timer stage alone; T < F fast recovery,
    /// T = F additive increase, T > F hyper increase by one R_HAI.
    Timer,
}

/// How α moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlphaUpdate {
    /// The DCQCN paper: α rises at each cut and decays after `alpha_update_period` without a
    /// CNP.
    OnCut,
    /// The ConnectX (its `dce_tcp_rtt` period; ns-3's `RdmaHw::UpdateAlphaMlx`): one update per
    /// `alpha_update_period` from the flow's first CNP, up if a CNP arrived in the period, down
    /// otherwise.
    Periodic,
}

/// When a CNP cuts the rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateDecrease {
    /// The DCQCN paper: at the CNP, unless the last cut is less than `rate_decrease_period`
    /// old (then the CNP is ignored).
    OnCnp,
    /// The ConnectX (its `rate_reduce_monitor_period`; ns-3's `RdmaHw::CheckRateDecreaseMlx`):
    /// at the next tick of a `rate_decrease_period` clock started by the first CNP, if a CNP
    /// arrived since the previous tick.
    Periodic,
}

/// How the notification point's CNPs reach the sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CnpCarrier {
    /// Each CNP is a control frame of its own, as RoCEv2 NICs send them (the CNP opcode).
    Frame,
    /// A CNP sets the BECN bit of the receiver's next ACK or NACK and adds no frame, as ns-3's
    /// RDMA models carry it (the CNP flag of the ACK header, `RdmaHw::ReceiveUdp` in HPCC's and
    /// ConWeave's `rdma-hw.cc`). On a heavily loaded network the difference is visible: with
    /// no pacing, every marked packet's CNP is a 64 B frame on the reverse path.
    Ack,
}

/// The scenario names of a choice's values, in the order the documentation lists them.
pub trait Named: Sized + Copy + 'static {
    const NAMES: &'static [(&'static str, Self)];

    /// The value called `name`, if any.
    fn from_name(name: &str) -> Option<Self> {
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, v)| v)
    }
}

impl Named for IncreaseStages {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("timer-and-bytes", IncreaseStages::TimerAndBytes),
        ("timer", IncreaseStages::Timer),
    ];
}

impl Named for AlphaUpdate {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("on-cut", AlphaUpdate::OnCut),
        ("periodic", AlphaUpdate::Periodic),
    ];
}

impl Named for CnpCarrier {
    const NAMES: &'static [(&'static str, Self)] =
        &[("frame", CnpCarrier::Frame), ("ack", CnpCarrier::Ack)];
}

impl Named for RateDecrease {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("on-cnp", RateDecrease::OnCnp),
        ("periodic", RateDecrease::Periodic),
    ];
}

/// DCQCN's parameters. The defaults are the DCQCN paper's values at 40 Gb/s, which the IRN paper
/// uses unchanged (IRN §4.1; MODEL §7): the [`dcqcn_paper`](Self::dcqcn_paper) preset.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DcqcnParams {
    /// Notification point: minimum time between two CNPs for one queue pair. 50 µs (DCQCN paper,
    /// the NP's CNP generation interval).
    pub cnp_interval: Duration,
    /// Gain g of the α moving average. 1/256 (DCQCN paper).
    pub g: f64,
    /// α decays by (1 − g) after this long without a CNP ("K" in the DCQCN paper). 55 µs (DCQCN
    /// paper: K must exceed the 50 µs CNP interval; MODEL §7). HPCC's ns-3 "dcqcn_paper" set
    /// uses 50 µs here.
    pub alpha_update_period: Duration,
    /// Minimum time between two rate cuts; CNPs arriving sooner do not cut again. 50 µs (MODEL §7;
    /// the "dcqcn_paper" set of HPCC's ns-3 scripts; equal to the CNP interval, so with the
    /// paper's notification point every CNP of a flow cuts).
    pub rate_decrease_period: Duration,
    /// Period of the rate-increase timer ("timer T"). 55 µs (DCQCN paper).
    pub rate_increase_period: Duration,
    /// Bytes sent between two byte-counter increase events ("B"); 0 turns the byte counter off.
    /// 10 MB = 10 000 000 bytes (DCQCN paper).
    pub byte_counter: u64,
    /// Fast-recovery steps F before additive (one counter past F) or hyper (both past F)
    /// increase. 5 (DCQCN paper, from QCN).
    pub fast_recovery_steps: u32,
    /// Additive-increase step R_AI of the target rate. 40 Mb/s (DCQCN paper at 40 Gb/s).
    pub additive_increase: Bandwidth,
    /// Hyper-increase step R_HAI of the target rate. 200 Mb/s (MODEL §7, which attributes it to
    /// the DCQCN paper at 40 Gb/s; ns-3 models scale R_AI and R_HAI with link speed).
    pub hyper_increase: Bandwidth,
    /// The rate never drops below this. 100 Mb/s (MODEL §7; also the `MinRate` default of the
    /// ns-3 RDMA models).
    pub min_rate: Bandwidth,
    /// Every cut sets RT to RC (the DCQCN paper's pseudo-code; ns-3's `ClampTargetRate` true).
    /// When false, a cut keeps RT unless an increase event (timer or byte counter) happened
    /// since the last cut, so a flow cut several times in a row still recovers towards the
    /// rate it had before the first of those cuts: the ConnectX's rule as ns-3 models it
    /// (`RdmaHw::CheckRateDecreaseMlx` in `rdma-hw.cc`: clamp unless `m_rpTimeStage == 0`), which
    /// HPCC's and ConWeave's run scripts both select (`CLAMP_TARGET_RATE 0`). The firmware's
    /// `clamp_tgt_rate_after_time_inc` (on by default) is why a timer increase counts as well
    /// as a byte-counter one (comment in ConWeave's `scratch/network-load-balance.cc`).
    /// Default true.
    pub clamp_target_rate: bool,
    /// Which stage counters decide an increase event's phase. Default
    /// [`IncreaseStages::TimerAndBytes`] (the paper).
    pub increase_stages: IncreaseStages,
    /// How α moves. Default [`AlphaUpdate::OnCut`] (the paper).
    pub alpha_update: AlphaUpdate,
    /// When a CNP cuts the rate. Default [`RateDecrease::OnCnp`] (the paper).
    pub rate_decrease: RateDecrease,
    /// Notification point: a NACK is congestion feedback too, and paces a CNP (through the same
    /// `cnp_interval`) even when the packet that caused it was not CE-marked, as ConnectX NICs
    /// do (ConWeave's `RdmaHw::ReceiverCheckSeq` sets the CNP flag on every NACK it generates).
    /// Default false (the DCQCN paper's NP reacts to marks only).
    pub cnp_on_nack: bool,
    /// How a CNP reaches the sender. Default [`CnpCarrier::Frame`], in both presets: a real
    /// NIC's CNP is a packet; [`CnpCarrier::Ack`] reproduces ns-3's accounting. The BECN bit
    /// then means "CNP", so a reply's ECN-Echo no longer reports its own packet's mark (DCQCN
    /// does not read it), and a CNP paced while no reply goes out rides the next one.
    pub cnp_carrier: CnpCarrier,
}

impl Default for DcqcnParams {
    fn default() -> Self {
        Self::dcqcn_paper()
    }
}

/// Makes a preset's parameters.
pub type Preset = fn() -> DcqcnParams;

impl DcqcnParams {
    /// The presets by scenario name (`transport.dcqcn.preset`).
    pub const PRESETS: &'static [(&'static str, Preset)] = &[
        ("dcqcn-paper", DcqcnParams::dcqcn_paper),
        ("mlx", DcqcnParams::mlx),
    ];

    /// The preset called `name`, if any.
    pub fn preset(name: &str) -> Option<Self> {
        Self::PRESETS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, make)| make())
    }

    /// The DCQCN paper's reaction and notification points with its values at 40 Gb/s, as the
    /// IRN paper's text specifies them (each field's documentation gives its source).
    pub fn dcqcn_paper() -> Self {
        DcqcnParams {
            cnp_interval: Duration::from_us(50),
            g: 1.0 / 256.0,
            alpha_update_period: Duration::from_us(55),
            rate_decrease_period: Duration::from_us(50),
            rate_increase_period: Duration::from_us(55),
            byte_counter: 10_000_000,
            fast_recovery_steps: 5,
            additive_increase: Bandwidth::from_bps(40_000_000),
            hyper_increase: Bandwidth::from_bps(200_000_000),
            min_rate: Bandwidth::from_bps(100_000_000),
            clamp_target_rate: true,
            increase_stages: IncreaseStages::TimerAndBytes,
            alpha_update: AlphaUpdate::OnCut,
            rate_decrease: RateDecrease::OnCnp,
            cnp_on_nack: false,
            cnp_carrier: CnpCarrier::Frame,
        }
    }

    /// The ConnectX as ns-3 models it ("Mellanox's version of DCQCN", `CcMode 1`, in
    /// `src/point-to-point/model/rdma-hw.cc` of alibaba-edu/High-Precision-Congestion-Control
    /// and conweave-project/conweave-ns3), with the values of ConWeave's `run.py` for DCQCN at
    /// 100 Gb/s, which Eunomia took over:
    /// - α updated every 1 µs, cut checked every 4 µs, increase timer 300 µs, F = 1,
    ///   g = 1/256, target rate not clamped: `ALPHA_RESUME_INTERVAL 1`,
    ///   `RATE_DECREASE_INTERVAL 4`, `RP_TIMER 300`, `FAST_RECOVERY_TIMES 1`,
    ///   `EWMA_GAIN 0.00390625`, `CLAMP_TARGET_RATE 0` in both HPCC's and ConWeave's `run.py`;
    /// - R_AI 40 Mb/s, R_HAI 100 Mb/s, min rate 100 Mb/s: ConWeave's `ai = 10 * bw / 25`,
    ///   `hai = 25 * bw / 25` (Mb/s, `bw` in Gb/s) and `MIN_RATE 100Mb/s`. HPCC's `run.py` uses
    ///   `5 * bw / 25`, `50 * bw / 25` and `MIN_RATE 1000Mb/s` instead; both scale R_AI and
    ///   R_HAI with the link rate, so scale these for other rates;
    /// - no byte counter: the model has none (the firmware's `rpg_byte_reset` is listed as
    ///   not modelled in ConWeave's `scratch/network-load-balance.cc`);
    /// - a CNP with every NACK (ConWeave's `RdmaHw::ReceiverCheckSeq`; HPCC's model sends
    ///   none);
    /// - no notification-point pacing (`cnp_interval` 0): the models flag a CNP on the ACK of
    ///   every CE-marked packet (`RdmaHw::ReceiveUdp`) and let the 4 µs decrease check merge
    ///   them; this preset sends each CNP as its own frame, as the NIC does (set
    ///   `cnp_carrier` to [`CnpCarrier::Ack`] for the models' flag on the ACK).
    ///
    /// Where the model and irn agree there is no option: the rate on the first CNP (ns-3's
    /// `RateOnFirstCnp` is 1, unchanged, and neither script sets it; the firmware's
    /// `rate_to_set_on_first_cnp` is 0, off), α = 1 at the first CNP, the `MinRate` floor, and
    /// the cut RC·(1 − α/2).
    pub fn mlx() -> Self {
        DcqcnParams {
            cnp_interval: Duration::ZERO,
            g: 1.0 / 256.0,
            alpha_update_period: Duration::from_us(1),
            rate_decrease_period: Duration::from_us(4),
            rate_increase_period: Duration::from_us(300),
            byte_counter: 0,
            fast_recovery_steps: 1,
            additive_increase: Bandwidth::from_bps(40_000_000),
            hyper_increase: Bandwidth::from_bps(100_000_000),
            min_rate: Bandwidth::from_bps(100_000_000),
            clamp_target_rate: false,
            increase_stages: IncreaseStages::Timer,
            alpha_update: AlphaUpdate::Periodic,
            rate_decrease: RateDecrease::Periodic,
            cnp_on_nack: true,
            cnp_carrier: CnpCarrier::Frame,
        }
    }
}

/// Which counter produced an increase event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Timer,
    Bytes,
}

/// DCQCN's reaction point for one queue pair: turns CNPs, bytes sent and timer expiries into
/// the rate the sender paces at (see the module documentation for the exact rules).
#[derive(Debug, Clone)]
pub struct Dcqcn {
    p: DcqcnParams,
    /// Line rate in bit/s: the starting rate and the cap.
    line: u64,
    /// Current rate RC, bit/s.
    rc: u64,
    /// Target rate RT, bit/s.
    rt: u64,
    alpha: f64,
    /// Timer stage T: rate-increase timer events since the last cut.
    t_stage: u32,
    /// Byte stage BC: byte-counter events since the last cut.
    bc_stage: u32,
    cuts: u32,
    cnps_ignored: u32,
    /// `Periodic` α: a CNP arrived since the last α update.
    alpha_cnp: bool,
    /// Bytes sent since the last byte-counter event (or cut).
    bytes: u64,
    /// When α next changes (with `OnCut`, decays); `None` before the first CNP (so also what
    /// tells the first CNP from the others). Kept while the timers are stopped, so the missed
    /// updates can be applied later.
    next_alpha_update: Option<Time>,
    /// When the rate-increase timer next fires; `None` when not recovering (before the first cut,
    /// or once back at line rate).
    next_increase: Option<Time>,
    /// `Periodic` cuts: the tick at which a CNP already received cuts the rate.
    next_decrease: Option<Time>,
    /// The last cut; with `Periodic` cuts, a tick of the decrease-check clock.
    last_cut: Option<Time>,
}

impl Dcqcn {
    /// A reaction point on a port of `line_rate`, starting at line rate with α = 1 and no timer
    /// running, as a new flow does (IRN §4.1).
    pub fn new(p: DcqcnParams, line_rate: Bandwidth) -> Self {
        let line = line_rate.as_bps();
        Dcqcn {
            p,
            line,
            rc: line,
            rt: line,
            alpha: 1.0,
            t_stage: 0,
            bc_stage: 0,
            cuts: 0,
            cnps_ignored: 0,
            alpha_cnp: false,
            bytes: 0,
            next_alpha_update: None,
            next_increase: None,
            next_decrease: None,
            last_cut: None,
        }
    }

    /// The current rate RC, which the sender paces its packets at.
    pub fn rate(&self) -> Bandwidth {
        Bandwidth::from_bps(self.rc)
    }

    /// The target rate RT that increases move RC towards.
    pub fn target_rate(&self) -> Bandwidth {
        Bandwidth::from_bps(self.rt)
    }

    /// α, the estimate of how congested the path is, as of the last event handled (updates due
    /// while no timer runs are applied at the next CNP or cut).
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Rate cuts made so far, for statistics.
    pub fn cuts(&self) -> u32 {
        self.cuts
    }

    /// CNPs that did not cut: with `OnCnp`, those within `rate_decrease_period` of the last
    /// cut; with `Periodic`, those that found a cut already pending.
    pub fn cnps_ignored(&self) -> u32 {
        self.cnps_ignored
    }

    /// A data packet of `bytes` (wire bytes) left; every `byte_counter` bytes while recovering is
    /// a byte-stage increase event.
    ///
    /// Inlined into the sender's transmit path: called for every data packet, it usually returns
    /// at its first test, and as a call it cost that path more than its own work (1.9 M of the
    /// leaf-spine benchmark's instructions, when a growing caller made LLVM stop inlining it).
    #[inline]
    pub fn on_sent(&mut self, _now: Time, bytes: u64) {
        if self.next_increase.is_none() || self.p.byte_counter == 0 {
            return;
        }
        self.bytes += bytes;
        while self.bytes >= self.p.byte_counter && self.next_increase.is_some() {
            self.bytes -= self.p.byte_counter;
            self.increase(Stage::Bytes);
        }
    }

    /// A CNP arrived: cut the rate now or at the next decrease tick, or ignore it (see the
    /// module documentation).
    pub fn on_cnp(&mut self, now: Time) {
        self.catch_up_alpha(now);
        if self.p.alpha_update == AlphaUpdate::Periodic {
            if self.next_alpha_update.is_none() {
                // The first CNP starts α's clock but does not count in its first period
                // (ns-3's `cnp_received_mlx`).
                self.next_alpha_update = Some(now + self.p.alpha_update_period);
            } else {
                self.alpha_cnp = true;
            }
        }
        match self.p.rate_decrease {
            RateDecrease::OnCnp => {
                if self
                    .last_cut
                    .is_some_and(|t| now < t + self.p.rate_decrease_period)
                {
                    self.cnps_ignored += 1;
                    if self.p.alpha_update == AlphaUpdate::OnCut {
                        self.next_alpha_update = Some(now + self.p.alpha_update_period);
                    }
                    return;
                }
                self.cut(now);
            }
            RateDecrease::Periodic => {
                if self.p.alpha_update == AlphaUpdate::OnCut {
                    self.next_alpha_update = Some(now + self.p.alpha_update_period);
                }
                if self.next_decrease.is_some() {
                    self.cnps_ignored += 1;
                    return;
                }
                // The first tick strictly after `now` on the clock the first CNP started: every
                // cut falls on a tick, and with none pending and none made, this is the first.
                let t0 = self.last_cut.unwrap_or(now);
                let period = self.p.rate_decrease_period.as_ps().max(1);
                let ticks = (now - t0).as_ps() / period + 1;
                self.next_decrease = Some(t0 + Duration::from_ps(period * ticks));
            }
        }
    }

    /// When [`handle_timeout`](Self::handle_timeout) must next be called: the earliest of the
    /// pending cut's tick and, while recovering, the rate-increase deadline and (with `OnCut`)
    /// the α-update deadline; `None` with no cut pending and RC at line rate.
    pub fn poll_timeout(&self) -> Option<Time> {
        let recovering = self.next_increase.map(|inc| match self.p.alpha_update {
            AlphaUpdate::OnCut => self.next_alpha_update.map_or(inc, |a| a.min(inc)),
            AlphaUpdate::Periodic => inc,
        });
        match (recovering, self.next_decrease) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs the timers due at or before `now`, in time order: α updates, rate-increase timer
    /// events (several if `now` is late) and a pending cut.
    pub fn handle_timeout(&mut self, now: Time) {
        if self.next_increase.is_none() && self.next_decrease.is_none() {
            // Timers stopped: α catches up lazily (see `catch_up_alpha`).
            return;
        }
        loop {
            let inc = self.next_increase.filter(|&t| t <= now);
            let dec = self.next_decrease.filter(|&t| t <= now);
            match (inc, dec) {
                // At a tie the increase goes first (see the module documentation).
                (Some(t), d) if d.is_none_or(|d| t <= d) => {
                    self.next_increase = Some(t + self.p.rate_increase_period);
                    self.increase(Stage::Timer);
                }
                (_, Some(d)) => {
                    self.next_decrease = None;
                    self.catch_up_alpha(d);
                    self.cut(d);
                }
                _ => break,
            }
        }
        self.catch_up_alpha(now);
    }

    /// A rate cut at `at`.
    fn cut(&mut self, at: Time) {
        if self.p.clamp_target_rate || self.t_stage > 0 || self.bc_stage > 0 {
            self.rt = self.rc;
        }
        let cut = (self.rc as f64 * (1.0 - self.alpha / 2.0)).round() as u64;
        // The floor is `min_rate`, but never above line rate.
        let floor = self.p.min_rate.as_bps().min(self.line);
        self.rc = cut.clamp(floor, self.line);
        if self.p.alpha_update == AlphaUpdate::OnCut {
            self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g;
            self.next_alpha_update = Some(at + self.p.alpha_update_period);
        }
        self.t_stage = 0;
        self.bc_stage = 0;
        self.bytes = 0;
        self.last_cut = Some(at);
        self.cuts += 1;
        self.next_increase = Some(at + self.p.rate_increase_period);
        if self.rc >= self.line {
            // Nothing to recover (a cut that could not lower the rate, e.g. min_rate = line).
            self.next_increase = None;
        }
    }

    /// Applies every α update due at or before `now`. With `OnCut`, n missed decays multiply α
    /// by (1 − g)ⁿ; with `Periodic`, the first update due also sees whether a CNP arrived
    /// before it, and the n − 1 after it saw none.
    fn catch_up_alpha(&mut self, now: Time) {
        let Some(due) = self.next_alpha_update.filter(|&t| t <= now) else {
            return;
        };
        let period = self.p.alpha_update_period.as_ps().max(1);
        let n = (now - due).as_ps() / period + 1;
        let keep = 1.0 - self.p.g;
        match self.p.alpha_update {
            AlphaUpdate::OnCut => self.alpha *= powu(keep, n),
            AlphaUpdate::Periodic => {
                self.alpha = if self.alpha_cnp {
                    keep * self.alpha + self.p.g
                } else {
                    keep * self.alpha
                };
                self.alpha_cnp = false;
                self.alpha *= powu(keep, n - 1);
            }
        }
        self.next_alpha_update = Some(due + Duration::from_ps(period) * n);
    }

    /// One increase event from `stage` (see the module documentation).
    fn increase(&mut self, stage: Stage) {
        let f = self.p.fast_recovery_steps;
        let (t, bc) = (self.t_stage, self.bc_stage);
        // How many R_HAI steps (`Some(0)`: one R_AI step; `None`: fast recovery).
        let hyper_steps = match self.p.increase_stages {
            IncreaseStages::TimerAndBytes if t.max(bc) < f => None,
            IncreaseStages::TimerAndBytes if t.min(bc) > f => Some(u64::from(t.min(bc) - f)),
            IncreaseStages::TimerAndBytes => Some(0),
            IncreaseStages::Timer if t < f => None,
            IncreaseStages::Timer if t == f => Some(0),
            IncreaseStages::Timer => Some(1),
        };
        match hyper_steps {
            // Fast recovery: RT stays, RC halves its distance to it.
            None => {}
            Some(0) => self.rt = self.rt.saturating_add(self.p.additive_increase.as_bps()),
            Some(i) => {
                self.rt = self
                    .rt
                    .saturating_add(i.saturating_mul(self.p.hyper_increase.as_bps()))
            }
        }
        self.rt = self.rt.min(self.line);
        // Ceiling of the mean, so RC reaches RT.
        self.rc =
            (self.rt / 2 + self.rc / 2 + (self.rt % 2 + self.rc % 2).div_ceil(2)).min(self.line);
        match stage {
            Stage::Timer => self.t_stage = self.t_stage.saturating_add(1),
            Stage::Bytes => self.bc_stage = self.bc_stage.saturating_add(1),
        }
        if self.rc >= self.line {
            self.next_increase = None;
            self.bytes = 0;
        }
    }
}

/// DCQCN's notification point for one queue pair at the receiver: decides which CE-marked
/// arrivals (and, with `cnp_on_nack`, which NACKs) produce a CNP, so a congested flow gets at
/// most one CNP per `interval` however many of its packets are marked (DCQCN paper: 50 µs).
#[derive(Debug, Clone)]
pub struct CnpPacer {
    interval: Duration,
    last: Option<Time>,
    on_nack: bool,
}

impl CnpPacer {
    /// A notification point sending at most one CNP per `interval`, for marks only.
    pub fn new(interval: Duration) -> Self {
        CnpPacer {
            interval,
            last: None,
            on_nack: false,
        }
    }

    /// The notification point `p` describes: its interval, and whether NACKs pace CNPs.
    pub fn for_params(p: &DcqcnParams) -> Self {
        CnpPacer {
            on_nack: p.cnp_on_nack,
            ..CnpPacer::new(p.cnp_interval)
        }
    }

    /// A CE-marked data packet arrived at `now`; `true` if a CNP must be sent for it (the first
    /// marked packet, or the first one `interval` or more after the last CNP).
    pub fn on_marked(&mut self, now: Time) -> bool {
        if self.last.is_some_and(|t| now < t + self.interval) {
            return false;
        }
        self.last = Some(now);
        true
    }

    /// The receiver sent a NACK at `now` for a packet that was not CE-marked (a marked one was
    /// already judged by [`on_marked`](Self::on_marked)); `true` if a CNP must go with it:
    /// never unless `cnp_on_nack`, then as for a marked packet.
    pub fn on_nack(&mut self, now: Time) -> bool {
        self.on_nack && self.on_marked(now)
    }
}

/// `base`ⁿ by binary exponentiation, in plain IEEE-754 multiplications.
///
/// `f64::powi` is an LLVM intrinsic whose precision Rust leaves unspecified, so it may differ in
/// the last bit across platforms and compiler versions, and α feeds every rate cut. The product
/// order here is that of the runtime routine `powi` calls on x86-64 (compiler-rt's
/// `__powidf2`), so results are unchanged where they were computed before.
fn powu(mut base: f64, mut n: u64) -> f64 {
    let mut product = 1.0;
    loop {
        if n & 1 == 1 {
            product *= base;
        }
        n >>= 1;
        if n == 0 {
            return product;
        }
        base *= base;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G40: u64 = 40_000_000_000;

    fn us(t: u64) -> Time {
        Time::from_ps(t * 1_000_000)
    }

    #[test]
    fn powu_is_binary_exponentiation_in_ieee_multiplications() {
        assert_eq!(powu(0.5, 10), 1.0 / 1024.0);
        assert_eq!(powu(3.0, 0), 1.0);
        assert_eq!(powu(0.0, 0), 1.0);
        assert_eq!(powu(0.9, 1_000_000), 0.0); // underflows, as α may after a long idle time
                                               // The exact product order: x^5 = x · (x²)², not x · x · x · x · x.
        let x = 1.0 - 1.0 / 256.0f64;
        let square = x * x;
        assert_eq!(powu(x, 5).to_bits(), (x * (square * square)).to_bits());
        // Bits pinned (Python's IEEE doubles give the same), so a platform that computed them
        // differently would fail here.
        assert_eq!(powu(x, 7).to_bits(), 0x3fef_229b_a45d_60e0);
    }

    fn dcqcn() -> Dcqcn {
        Dcqcn::new(DcqcnParams::default(), Bandwidth::from_bps(G40))
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn defaults_are_the_papers() {
        let p = DcqcnParams::default();
        assert_eq!(p.cnp_interval, Duration::from_us(50));
        assert_eq!(p.g, 1.0 / 256.0);
        assert_eq!(p.alpha_update_period, Duration::from_us(55));
        assert_eq!(p.rate_decrease_period, Duration::from_us(50));
        assert_eq!(p.rate_increase_period, Duration::from_us(55));
        assert_eq!(p.byte_counter, 10_000_000);
        assert_eq!(p.fast_recovery_steps, 5);
        assert_eq!(p.additive_increase.as_bps(), 40_000_000);
        assert_eq!(p.hyper_increase.as_bps(), 200_000_000);
        assert_eq!(p.min_rate.as_bps(), 100_000_000);
        assert!(p.clamp_target_rate);
        assert_eq!(p.increase_stages, IncreaseStages::TimerAndBytes);
        assert_eq!(p.alpha_update, AlphaUpdate::OnCut);
        assert_eq!(p.rate_decrease, RateDecrease::OnCnp);
        assert!(!p.cnp_on_nack);
        assert_eq!(DcqcnParams::preset("dcqcn-paper"), Some(p));
    }

    #[test]
    fn mlx_preset_is_conweaves_run_script() {
        // ConWeave's run.py at bw = 100 (Gb/s): ALPHA_RESUME_INTERVAL 1, RATE_DECREASE_INTERVAL
        // 4, RP_TIMER 300, FAST_RECOVERY_TIMES 1, EWMA_GAIN 0.00390625, RATE_AI 10*bw/25,
        // RATE_HAI 25*bw/25, MIN_RATE 100Mb/s, CLAMP_TARGET_RATE 0.
        let p = DcqcnParams::preset("mlx").unwrap();
        assert_eq!(p, DcqcnParams::mlx());
        assert_eq!(p.alpha_update_period, Duration::from_us(1));
        assert_eq!(p.rate_decrease_period, Duration::from_us(4));
        assert_eq!(p.rate_increase_period, Duration::from_us(300));
        assert_eq!(p.fast_recovery_steps, 1);
        assert_eq!(p.g, 0.00390625);
        assert_eq!(p.additive_increase.as_bps(), 10 * 100 / 25 * 1_000_000);
        assert_eq!(p.hyper_increase.as_bps(), 25 * 100 / 25 * 1_000_000);
        assert_eq!(p.min_rate.as_bps(), 100_000_000);
        assert!(!p.clamp_target_rate);
        assert_eq!(
            (p.increase_stages, p.alpha_update, p.rate_decrease),
            (
                IncreaseStages::Timer,
                AlphaUpdate::Periodic,
                RateDecrease::Periodic
            )
        );
        assert_eq!((p.byte_counter, p.cnp_interval), (0, Duration::ZERO));
        assert!(p.cnp_on_nack);
        assert_eq!(DcqcnParams::preset("dcqcn"), None);
        assert_eq!(
            AlphaUpdate::from_name("periodic"),
            Some(AlphaUpdate::Periodic)
        );
        assert_eq!(RateDecrease::from_name("on-cnp"), Some(RateDecrease::OnCnp));
        assert_eq!(
            IncreaseStages::from_name("timer"),
            Some(IncreaseStages::Timer)
        );
        assert_eq!(IncreaseStages::from_name("bytes"), None);
    }

    /// Paper timing (cuts at most every 50 µs, increase timer 55 µs), α held at 1 (its decay
    /// period out of the way, and (1 − g)·1 + g = 1), so every cut halves RC.
    fn held_alpha(clamp_target_rate: bool) -> Dcqcn {
        let p = DcqcnParams {
            alpha_update_period: Duration::from_ms(100),
            clamp_target_rate,
            ..DcqcnParams::default()
        };
        Dcqcn::new(p, Bandwidth::from_bps(G40))
    }

    #[test]
    fn unclamped_cuts_keep_the_target_rate_until_an_increase() {
        const G: u64 = 1_000_000_000;
        enum Ev {
            Cnp(u64),
            Timer(u64),
        }
        // (event, (RT, RC) with clamping, (RT, RC) without), rates in Gb/s / 2 (so 2.5 G = 5).
        let steps = [
            // First cut: RC = 40 G before it, so RT = 40 G either way.
            (Ev::Cnp(0), (80, 40), (80, 40)),
            // Second cut before any increase: the paper sets RT = RC = 20 G; the ConnectX keeps
            // RT = 40 G.
            (Ev::Cnp(50), (40, 20), (80, 20)),
            // A fast-recovery step halves the distance to RT.
            (Ev::Timer(105), (40, 30), (80, 50)),
            // A cut after an increase: RT = RC in both.
            (Ev::Cnp(110), (30, 15), (50, 25)),
            // And cuts right after it keep RT again only without clamping.
            (Ev::Cnp(160), (15, 8), (50, 13)),
        ];
        let mut clamped = held_alpha(true);
        let mut kept = held_alpha(false);
        for (ev, want_clamped, want_kept) in steps {
            for (c, (rt, rc)) in [(&mut clamped, want_clamped), (&mut kept, want_kept)] {
                match ev {
                    Ev::Cnp(t) => c.on_cnp(us(t)),
                    Ev::Timer(t) => c.handle_timeout(us(t)),
                }
                let (got_rt, got_rc) = (c.target_rate().as_bps(), c.rate().as_bps());
                assert_eq!(got_rt, rt * G / 2, "RT, clamp = {}", c.p.clamp_target_rate);
                // 7.5 G / 2 and 12.5 G / 2 round up to whole halves in the table.
                assert_eq!(
                    got_rc.div_ceil(G / 2),
                    rc,
                    "RC, clamp = {}",
                    c.p.clamp_target_rate
                );
            }
        }
        assert_eq!(clamped.rate().as_bps(), 3_750_000_000);
        assert_eq!(kept.rate().as_bps(), 6_250_000_000);
    }

    #[test]
    fn timer_stages_alone_reach_hyper_increase() {
        // F = 1, no byte counter: after the cuts, the timer's 1st event is fast recovery, its
        // 2nd additive, every later one hyper. With both counters (the paper's rule) the byte
        // stage stays 0, so it is additive for ever.
        let p = DcqcnParams {
            alpha_update_period: Duration::from_ms(100),
            fast_recovery_steps: 1,
            byte_counter: 0,
            ..DcqcnParams::default()
        };
        let mlx_stages = DcqcnParams {
            increase_stages: IncreaseStages::Timer,
            ..p
        };
        let (ai, hai) = (40_000_000u64, 200_000_000u64);
        // (RT, RC) after each timer event, from RT = 20 G, RC = 10 G.
        let rt0 = 20_000_000_000u64;
        let timer_only = [
            (rt0, 15_000_000_000),
            (rt0 + ai, (rt0 + ai + 15_000_000_000) / 2),
            (rt0 + ai + hai, 0),
            (rt0 + ai + 2 * hai, 0),
        ];
        let both = [
            (rt0, 15_000_000_000),
            (rt0 + ai, 0),
            (rt0 + 2 * ai, 0),
            (rt0 + 3 * ai, 0),
        ];
        for (params, want) in [(mlx_stages, timer_only), (p, both)] {
            let mut c = Dcqcn::new(params, Bandwidth::from_bps(G40));
            c.on_cnp(us(0));
            c.on_cnp(us(50)); // RT = 20 G, RC = 10 G
            let mut rc = 10_000_000_000u64;
            for (k, (rt, want_rc)) in want.into_iter().enumerate() {
                c.handle_timeout(us(50 + 55 * (k as u64 + 1)));
                rc = (rt + rc).div_ceil(2);
                assert_eq!(
                    c.target_rate().as_bps(),
                    rt,
                    "{:?} event {k}",
                    params.increase_stages
                );
                assert_eq!(
                    c.rate().as_bps(),
                    rc,
                    "{:?} event {k}",
                    params.increase_stages
                );
                if want_rc != 0 {
                    assert_eq!(rc, want_rc);
                }
            }
        }
    }

    #[test]
    fn periodic_cuts_and_alpha_follow_the_connectx_clocks() {
        let ns = |t: u64| Time::from_ps(t * 1000);
        let g = 1.0 / 256.0;
        let k = 1.0 - g;
        let line = 100_000_000_000u64;
        let mut c = Dcqcn::new(DcqcnParams::mlx(), Bandwidth::from_bps(line));
        // The first CNP cuts nothing yet: the cut waits for the decrease clock's first tick.
        c.on_cnp(ns(0));
        assert_eq!(c.rate().as_bps(), line);
        assert_eq!(c.poll_timeout(), Some(ns(4000)));
        c.handle_timeout(ns(4000));
        // α ticked at 1, 2, 3 and 4 µs with no CNP counted (the first starts the clock).
        let mut alpha = k * k * k * k;
        let mut rc = (line as f64 * (1.0 - alpha / 2.0)).round() as u64;
        assert_eq!(c.cuts(), 1);
        assert_eq!(c.rate().as_bps(), rc);
        assert_eq!(c.target_rate().as_bps(), line);
        assert_eq!(c.alpha().to_bits(), alpha.to_bits());
        // Two more CNPs before the next tick make one cut, at 8 µs.
        c.on_cnp(ns(5500));
        c.on_cnp(ns(6500));
        assert_eq!(c.poll_timeout(), Some(ns(8000)));
        c.handle_timeout(ns(8000));
        // Ticks: 5 µs none, 6 µs the 5.5 µs CNP, 7 µs the 6.5 µs one, 8 µs none.
        alpha *= k;
        alpha = k * alpha + g;
        alpha = k * alpha + g;
        alpha *= k;
        rc = (rc as f64 * (1.0 - alpha / 2.0)).round() as u64;
        assert_eq!((c.cuts(), c.cnps_ignored()), (2, 1));
        assert_eq!(c.rate().as_bps(), rc);
        // No increase came between the cuts: the target rate is still line rate.
        assert_eq!(c.target_rate().as_bps(), line);
        // 300 µs after the last cut, the first increase: fast recovery halfway to line rate.
        assert_eq!(c.poll_timeout(), Some(ns(308_000)));
        c.handle_timeout(ns(308_000));
        rc = (line + rc).div_ceil(2);
        assert_eq!(c.rate().as_bps(), rc);
        // A cut after it sets RT to RC, at the tick after the CNP.
        c.on_cnp(ns(309_000));
        assert_eq!(c.poll_timeout(), Some(ns(312_000)));
        c.handle_timeout(ns(312_000));
        assert_eq!(c.target_rate().as_bps(), rc);
        assert!(c.rate().as_bps() < rc);
    }

    #[test]
    fn an_increase_due_with_a_cut_goes_first() {
        // mlx: the increase timer (300 µs) lands on a decrease tick (every 4 µs from the first
        // CNP). The increase runs first, so the cut sees it and clamps RT to the raised RC.
        let us_ = |t: u64| Time::from_ps(t * 1_000_000);
        let line = 100_000_000_000u64;
        let mut c = Dcqcn::new(DcqcnParams::mlx(), Bandwidth::from_bps(line));
        c.on_cnp(us_(0));
        c.handle_timeout(us_(4)); // cut; increase timer at 304 µs
        let cut = c.rate().as_bps();
        c.on_cnp(us_(302)); // cut pending at the 304 µs tick
        assert_eq!(c.poll_timeout(), Some(us_(304)));
        c.handle_timeout(us_(304));
        let raised = (line + cut).div_ceil(2);
        assert_eq!(c.target_rate().as_bps(), raised);
        assert_eq!(c.cuts(), 2);
    }

    #[test]
    fn starts_at_line_rate_with_no_timer() {
        let mut c = dcqcn();
        assert_eq!(c.rate().as_bps(), G40);
        assert_eq!(c.alpha(), 1.0);
        assert_eq!(c.poll_timeout(), None);
        // Sending before any CNP changes nothing.
        c.on_sent(us(1), 100_000_000);
        c.handle_timeout(us(1000));
        assert_eq!(c.rate().as_bps(), G40);
        assert_eq!(c.poll_timeout(), None);
    }

    #[test]
    fn cnps_spaced_beyond_the_decrease_period_each_cut() {
        // α stays exactly 1: (1 − 1/256)·1 + 1/256 = 1, so each cut halves.
        let mut c = dcqcn();
        let expected = [20_000_000_000, 10_000_000_000, 5_000_000_000, 2_500_000_000];
        for (k, want) in expected.into_iter().enumerate() {
            // 50 µs apart: exactly one decrease period, before any 55 µs timer fires.
            c.on_cnp(us(50 * k as u64));
            assert_eq!(c.rate().as_bps(), want, "after cut {}", k + 1);
            assert_eq!(c.alpha(), 1.0);
        }
        assert_eq!(c.cuts(), 4);
        assert_eq!(c.target_rate().as_bps(), 5_000_000_000);
        assert_eq!(c.poll_timeout(), Some(us(150 + 55)));
    }

    #[test]
    fn cut_uses_alpha_before_the_update() {
        // Let α decay once (one 55 µs period with no CNP), then cut with that α.
        let mut c = dcqcn();
        c.on_cnp(us(0));
        c.handle_timeout(us(55)); // α decay and one fast-recovery step together
        let g = 1.0 / 256.0;
        let a1 = 1.0 - g;
        assert!(close(c.alpha(), a1));
        let rc = c.rate().as_bps();
        assert_eq!(rc, 30_000_000_000); // (40 + 20) / 2
        c.on_cnp(us(60));
        assert_eq!(c.target_rate().as_bps(), rc);
        let want = (rc as f64 * (1.0 - a1 / 2.0)).round() as u64;
        assert_eq!(c.rate().as_bps(), want);
        assert!(close(c.alpha(), (1.0 - g) * a1 + g));
    }

    #[test]
    fn cnps_within_the_decrease_period_cut_once() {
        let mut c = dcqcn();
        c.on_cnp(us(0));
        for t in [1, 10, 30, 49] {
            c.on_cnp(us(t));
        }
        assert_eq!(c.rate().as_bps(), 20_000_000_000);
        assert_eq!(c.cuts(), 1);
        assert_eq!(c.cnps_ignored(), 4);
        // They held off α's decay: the α timer was restarted at 49 µs, not 0.
        c.handle_timeout(us(55)); // the rate-increase timer only
        assert_eq!(c.alpha(), 1.0);
        assert_eq!(c.poll_timeout(), Some(us(49 + 55)));
        // The next CNP after the period cuts again.
        c.on_cnp(us(60));
        assert_eq!(c.cuts(), 2);
    }

    #[test]
    fn alpha_decays_geometrically_without_cnps() {
        let p = DcqcnParams {
            // Keep the rate below line rate so the timers keep running.
            rate_increase_period: Duration::from_ms(100),
            ..DcqcnParams::default()
        };
        let mut c = Dcqcn::new(p, Bandwidth::from_bps(G40));
        c.on_cnp(us(0));
        let n = 20;
        for k in 1..=n {
            assert_eq!(c.poll_timeout(), Some(us(55 * k)));
            c.handle_timeout(us(55 * k));
        }
        assert!(close(c.alpha(), (1.0 - 1.0 / 256.0f64).powi(n as i32)));
        assert_eq!(c.rate().as_bps(), 20_000_000_000); // no increase happened
    }

    #[test]
    fn late_timeout_applies_every_missed_decay() {
        let p = DcqcnParams {
            rate_increase_period: Duration::from_ms(100),
            ..DcqcnParams::default()
        };
        let mut c = Dcqcn::new(p, Bandwidth::from_bps(G40));
        c.on_cnp(us(0));
        c.handle_timeout(us(55 * 7 + 3));
        assert!(close(c.alpha(), (1.0 - 1.0 / 256.0f64).powi(7)));
        assert_eq!(c.poll_timeout(), Some(us(55 * 8)));
    }

    #[test]
    fn timer_increases_fast_recovery_then_additive() {
        let p = DcqcnParams {
            // α timer out of the way so only increase events fire.
            alpha_update_period: Duration::from_ms(100),
            ..DcqcnParams::default()
        };
        let mut c = Dcqcn::new(p, Bandwidth::from_bps(G40));
        c.on_cnp(us(0)); // RT = 40 G, RC = 20 G
        c.on_cnp(us(50)); // RT = 20 G, RC = 10 G
        assert_eq!(c.target_rate().as_bps(), 20_000_000_000);
        // F = 5 fast-recovery steps: the gap to RT = 20 G halves each time (10 G → 5 → 2.5 …).
        let mut gap: u64 = 10_000_000_000;
        for k in 1..=5 {
            c.handle_timeout(us(50 + 55 * k));
            gap /= 2;
            assert_eq!(c.target_rate().as_bps(), 20_000_000_000);
            assert_eq!(c.rate().as_bps(), 20_000_000_000 - gap, "step {k}");
        }
        // Then additive increase: RT += 40 Mb/s, RC ← (RT + RC)/2.
        let mut rt: u64 = 20_000_000_000;
        let mut rc: u64 = 20_000_000_000 - gap; // 19.6875 G
        for k in 6..=9 {
            c.handle_timeout(us(50 + 55 * k));
            rt += 40_000_000;
            rc = (rt + rc).div_ceil(2);
            assert_eq!(c.target_rate().as_bps(), rt, "step {k}");
            assert_eq!(c.rate().as_bps(), rc, "step {k}");
        }
    }

    #[test]
    fn byte_counter_drives_increases_and_hyper_increase_needs_both() {
        let p = DcqcnParams {
            alpha_update_period: Duration::from_ms(100),
            ..DcqcnParams::default()
        };
        let mut c = Dcqcn::new(p, Bandwidth::from_bps(G40));
        c.on_cnp(us(0));
        c.on_cnp(us(50)); // RT = 20 G, RC = 10 G, timer next at 105 µs
                          // Bytes just short of the counter: nothing.
        c.on_sent(us(51), 9_999_999);
        assert_eq!(c.rate().as_bps(), 10_000_000_000);
        // Crossing it: one fast-recovery step (BC 0 → 1), the remainder carries over.
        c.on_sent(us(52), 2);
        assert_eq!(c.rate().as_bps(), 15_000_000_000);
        // Four more byte events in one go: BC reaches 5, RC within 10 G / 32 of RT.
        c.on_sent(us(53), 40_000_000);
        assert_eq!(c.rate().as_bps(), 20_000_000_000 - 312_500_000);
        // BC = 5, T = 0: next byte event is additive.
        c.on_sent(us(54), 10_000_000);
        assert_eq!(c.target_rate().as_bps(), 20_040_000_000);
        // Drive the timer through 6 events (T: 0 → 6) and bytes to BC = 7; then both exceed F.
        let mut rt: u64 = 20_040_000_000;
        let mut rc: u64 = c.rate().as_bps();
        for k in 1..=6u64 {
            c.handle_timeout(us(50 + 55 * k));
            // T before the event is k − 1 < 5 for k ≤ 5 but BC = 6 ≥ 5: additive, not fast
            // recovery (max(T, BC) ≥ F); at k = 6, T = 5, min(T, BC) = 5, still additive.
            rt += 40_000_000;
            rc = (rt + rc).div_ceil(2);
            assert_eq!(c.target_rate().as_bps(), rt, "timer event {k}");
            assert_eq!(c.rate().as_bps(), rc, "timer event {k}");
        }
        // BC = 6, T = 6: the next byte event has min(T, BC) = 6 > F: hyper, i = 1.
        c.on_sent(us(400), 10_000_000);
        rt += 200_000_000;
        rc = (rt + rc).div_ceil(2);
        assert_eq!(c.target_rate().as_bps(), rt);
        assert_eq!(c.rate().as_bps(), rc);
        // BC = 7, T = 6: the next timer event has min = 6 again: i = 1.
        c.handle_timeout(us(50 + 55 * 7));
        rt += 200_000_000;
        rc = (rt + rc).div_ceil(2);
        assert_eq!(c.target_rate().as_bps(), rt);
        // BC = 7, T = 7: i = 2.
        c.on_sent(us(500), 10_000_000);
        rt += 400_000_000;
        rc = (rt + rc).div_ceil(2);
        assert_eq!(c.target_rate().as_bps(), rt);
        assert_eq!(c.rate().as_bps(), rc);
    }

    #[test]
    fn min_rate_floor() {
        let mut c = dcqcn();
        for k in 0..20 {
            c.on_cnp(us(50 * k));
        }
        // 40 G / 2^9 = 78.125 Mb/s < 100 Mb/s: the floor holds from the 9th cut on.
        assert_eq!(c.rate().as_bps(), 100_000_000);
        assert_eq!(c.cuts(), 20);
    }

    #[test]
    fn recovers_to_line_rate_and_stops_its_timers() {
        let mut c = dcqcn();
        c.on_cnp(us(0));
        // RT = 40 G = line: every event moves RC halfway (RT capped), until RC = line.
        let mut t = us(0);
        let mut steps = 0;
        while let Some(next) = c.poll_timeout() {
            t = next;
            c.handle_timeout(t);
            steps += 1;
            assert!(c.rate().as_bps() <= G40 && c.target_rate().as_bps() <= G40);
            assert!(steps < 1000, "never reached line rate");
        }
        assert_eq!(c.rate().as_bps(), G40);
        assert_eq!(c.target_rate().as_bps(), G40);
        // Byte counter stops too.
        c.on_sent(t, 100_000_000);
        assert_eq!(c.poll_timeout(), None);
        // α kept decaying while the timers were stopped: a CNP much later sees the decay.
        let late = t + Duration::from_us(55 * 1000);
        c.on_cnp(late);
        let alpha_periods = (late.as_ps() - us(0).as_ps()) / Duration::from_us(55).as_ps();
        let decayed = (1.0 - 1.0 / 256.0f64).powi(alpha_periods as i32);
        assert!(close(
            c.alpha(),
            (1.0 - 1.0 / 256.0) * decayed + 1.0 / 256.0
        ));
        let want = (G40 as f64 * (1.0 - decayed / 2.0)).round() as u64;
        assert_eq!(c.rate().as_bps(), want);
    }

    #[test]
    fn target_rate_capped_at_line_rate() {
        let p = DcqcnParams {
            alpha_update_period: Duration::from_ms(100),
            ..DcqcnParams::default()
        };
        let mut c = Dcqcn::new(p, Bandwidth::from_bps(G40));
        c.on_cnp(us(0)); // RT = 40 G already: additive steps must not raise it.
        for k in 1..=8 {
            c.handle_timeout(us(55 * k));
            assert_eq!(c.target_rate().as_bps(), G40);
        }
    }

    #[test]
    fn cnp_pacer_one_per_interval() {
        let mut p = CnpPacer::new(Duration::from_us(50));
        assert!(p.on_marked(us(10)));
        assert!(!p.on_marked(us(10)));
        assert!(!p.on_marked(us(59)));
        assert!(p.on_marked(us(60))); // exactly one interval later
        assert!(!p.on_marked(us(100)));
        assert!(p.on_marked(us(500)));
    }

    #[test]
    fn cnp_pacer_paces_nacks_only_with_cnp_on_nack() {
        let mut marks_only = CnpPacer::new(Duration::from_us(50));
        assert!(!marks_only.on_nack(us(0)));
        assert!(marks_only.on_marked(us(1))); // the NACK did not use up the interval
        let p = DcqcnParams {
            cnp_on_nack: true,
            ..DcqcnParams::default()
        };
        let mut nacks = CnpPacer::for_params(&p);
        // NACKs and marks share one interval.
        assert!(nacks.on_nack(us(0)));
        assert!(!nacks.on_nack(us(10)));
        assert!(!nacks.on_marked(us(20)));
        assert!(nacks.on_nack(us(50)));
    }

    #[test]
    fn cnp_pacer_steady_marking_gives_one_cnp_per_interval() {
        // A marked packet every 1 µs for 1 ms: 20 CNPs, at 0, 50, …, 950 µs.
        let mut p = CnpPacer::new(Duration::from_us(50));
        let sent: Vec<u64> = (0..1000).filter(|&t| p.on_marked(us(t))).collect();
        assert_eq!(sent, (0..20).map(|k| 50 * k).collect::<Vec<_>>());
    }
}
