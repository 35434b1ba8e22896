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
//! # The reaction-point variant implemented here
//!
//! State: current rate RC, target rate RT, α, timer stage T and byte stage BC (increase events
//! of each kind since the last cut), bytes sent since the last byte-counter event.
//!
//! * A flow starts at line rate with α = 1 and no timer running (IRN §4.1: flows start at line
//!   rate; the reaction point only acts after its first cut).
//! * **CNP** at `now`: if no cut happened in the last `rate_decrease_period`: RT ← RC,
//!   RC ← max(min_rate, RC·(1 − α/2)), then α ← (1 − g)·α + g (the paper's order: the cut uses
//!   the α from before this CNP); T, BC and the byte counter restart from zero, and the α-update
//!   and rate-increase timers restart from `now`. A CNP inside the decrease period does not cut
//!   and does not raise α, but it is still congestion feedback: it restarts the α-update timer
//!   (α decays only after `alpha_update_period` *without* a CNP) and is counted
//!   ([`Dcqcn::cnps_ignored`]).
//! * **α-update timer** expiry: α ← (1 − g)·α, rearmed every `alpha_update_period`.
//! * **Rate-increase timer** expiry (every `rate_increase_period`) and **byte counter** (every
//!   `byte_counter` bytes sent): an increase event, judged on the stage counters *before* the
//!   event's own counter is incremented:
//!   - max(T, BC) < F — fast recovery: RC ← (RT + RC)/2;
//!   - min(T, BC) > F — hyper increase: RT ← RT + i·R_HAI with i = min(T, BC) − F, then
//!     RC ← (RT + RC)/2;
//!   - otherwise — additive increase: RT ← RT + R_AI, then RC ← (RT + RC)/2.
//!
//!   So one counter alone gives exactly F fast-recovery steps, then additive steps; hyper
//!   increase needs both counters past F (the QCN rule DCQCN inherits). RT and RC are capped at
//!   line rate; the halving rounds up so RC reaches RT instead of stalling one bit/s below it.
//! * Once RC is back at line rate the timers stop ([`Dcqcn::poll_timeout`] is `None`) and the
//!   byte counter stops counting. α keeps decaying lazily: the decays the stopped timer would
//!   have made are applied, in closed form (1 − g)ⁿ, at the next CNP.
//!
//! Rates are integer bits per second; α is an `f64`. No clock, no allocation.

use crate::time::{Bandwidth, Duration, Time};

/// DCQCN's parameters. The defaults are the DCQCN paper's values at 40 Gb/s, which the IRN paper
/// uses unchanged (IRN §4.1; MODEL §7).
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
    /// Bytes sent between two byte-counter increase events ("B"). 10 MB = 10 000 000 bytes
    /// (DCQCN paper).
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
}

impl Default for DcqcnParams {
    fn default() -> Self {
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
    /// Floor in bit/s: `min_rate`, but never above line rate.
    floor: u64,
    /// Current rate RC, bit/s.
    rc: u64,
    /// Target rate RT, bit/s.
    rt: u64,
    alpha: f64,
    /// Timer stage T: rate-increase timer events since the last cut.
    t_stage: u32,
    /// Byte stage BC: byte-counter events since the last cut.
    bc_stage: u32,
    /// Bytes sent since the last byte-counter event (or cut).
    bytes: u64,
    /// When α next decays; `None` before the first CNP. Kept while the timers are stopped, so the
    /// missed decays can be applied later.
    next_alpha_update: Option<Time>,
    /// When the rate-increase timer next fires; `None` when not recovering (before the first cut,
    /// or once back at line rate).
    next_increase: Option<Time>,
    last_cut: Option<Time>,
    cuts: u64,
    cnps_ignored: u64,
}

impl Dcqcn {
    /// A reaction point on a port of `line_rate`, starting at line rate with α = 1 and no timer
    /// running, as a new flow does (IRN §4.1).
    pub fn new(p: DcqcnParams, line_rate: Bandwidth) -> Self {
        let line = line_rate.as_bps();
        Dcqcn {
            p,
            line,
            floor: p.min_rate.as_bps().min(line),
            rc: line,
            rt: line,
            alpha: 1.0,
            t_stage: 0,
            bc_stage: 0,
            bytes: 0,
            next_alpha_update: None,
            next_increase: None,
            last_cut: None,
            cuts: 0,
            cnps_ignored: 0,
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

    /// α, the estimate of how congested the path is, as of the last event handled (decays due
    /// while the timers are stopped are applied at the next CNP).
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Rate cuts made so far, for statistics.
    pub fn cuts(&self) -> u64 {
        self.cuts
    }

    /// CNPs that arrived within `rate_decrease_period` of the last cut and so did not cut.
    pub fn cnps_ignored(&self) -> u64 {
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

    /// A CNP arrived: cut the rate unless the last cut is less than `rate_decrease_period` old.
    pub fn on_cnp(&mut self, now: Time) {
        self.catch_up_alpha(now);
        if self
            .last_cut
            .is_some_and(|t| now < t + self.p.rate_decrease_period)
        {
            self.cnps_ignored += 1;
            self.next_alpha_update = Some(now + self.p.alpha_update_period);
            return;
        }
        self.rt = self.rc;
        let cut = (self.rc as f64 * (1.0 - self.alpha / 2.0)).round() as u64;
        self.rc = cut.clamp(self.floor, self.line);
        self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g;
        self.t_stage = 0;
        self.bc_stage = 0;
        self.bytes = 0;
        self.last_cut = Some(now);
        self.cuts += 1;
        self.next_alpha_update = Some(now + self.p.alpha_update_period);
        self.next_increase = Some(now + self.p.rate_increase_period);
        if self.rc >= self.line {
            // Nothing to recover (a cut that could not lower the rate, e.g. min_rate = line).
            self.next_increase = None;
        }
    }

    /// When [`handle_timeout`](Self::handle_timeout) must next be called: the earlier of the
    /// α-update and rate-increase deadlines while recovering; `None` before the first CNP and once
    /// back at line rate.
    pub fn poll_timeout(&self) -> Option<Time> {
        let inc = self.next_increase?;
        Some(self.next_alpha_update.map_or(inc, |a| a.min(inc)))
    }

    /// Runs the timers due at or before `now`: α decays, and rate-increase timer events (several,
    /// in order, if `now` is late).
    pub fn handle_timeout(&mut self, now: Time) {
        if self.next_increase.is_none() {
            // Timers stopped: α decays lazily (see `catch_up_alpha`).
            return;
        }
        self.catch_up_alpha(now);
        while let Some(t) = self.next_increase.filter(|&t| t <= now) {
            self.next_increase = Some(t + self.p.rate_increase_period);
            self.increase(Stage::Timer);
        }
    }

    /// Applies every α decay due at or before `now`: n missed periods multiply α by (1 − g)ⁿ.
    fn catch_up_alpha(&mut self, now: Time) {
        let Some(due) = self.next_alpha_update.filter(|&t| t <= now) else {
            return;
        };
        let period = self.p.alpha_update_period.as_ps().max(1);
        let n = (now - due).as_ps() / period + 1;
        self.alpha *= powu(1.0 - self.p.g, n);
        self.next_alpha_update = Some(due + Duration::from_ps(period) * n);
    }

    /// One increase event from `stage` (see the module documentation).
    fn increase(&mut self, stage: Stage) {
        let f = self.p.fast_recovery_steps;
        let (t, bc) = (self.t_stage, self.bc_stage);
        if t.max(bc) < f {
            // Fast recovery: RT stays, RC halves its distance to it.
        } else if t.min(bc) > f {
            let i = u64::from(t.min(bc) - f);
            self.rt = self
                .rt
                .saturating_add(i.saturating_mul(self.p.hyper_increase.as_bps()));
        } else {
            self.rt = self.rt.saturating_add(self.p.additive_increase.as_bps());
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
/// arrivals produce a CNP, so a congested flow gets at most one CNP per `interval` however many
/// of its packets are marked (DCQCN paper: 50 µs).
#[derive(Debug, Clone)]
pub struct CnpPacer {
    interval: Duration,
    last: Option<Time>,
}

impl CnpPacer {
    /// A notification point sending at most one CNP per `interval`.
    pub fn new(interval: Duration) -> Self {
        CnpPacer {
            interval,
            last: None,
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
    fn cnp_pacer_steady_marking_gives_one_cnp_per_interval() {
        // A marked packet every 1 µs for 1 ms: 20 CNPs, at 0, 50, …, 950 µs.
        let mut p = CnpPacer::new(Duration::from_us(50));
        let sent: Vec<u64> = (0..1000).filter(|&t| p.on_marked(us(t))).collect();
        assert_eq!(sent, (0..20).map(|k| 50 * k).collect::<Vec<_>>());
    }
}
