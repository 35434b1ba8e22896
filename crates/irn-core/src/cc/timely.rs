//! Timely (Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter",
//! SIGCOMM 2015): a rate-based controller driven by RTT samples, which IRN runs "with the same
//! parameters as specified in \[29\]" as a NIC-based implementation (IRN §4.1, §4.2.4).
//!
//! # The variant implemented here (the paper's Algorithm 1, once per update)
//!
//! ```text
//! new_rtt_diff = rtt − prev_rtt;  prev_rtt = rtt
//! rtt_diff     = (1 − α)·rtt_diff + α·new_rtt_diff      (α weights the NEW sample)
//! gradient     = rtt_diff / min_rtt
//! if rtt < T_low:        rate += δ
//! elif rtt > T_high:     rate ← rate·(1 − β·(1 − T_high/rtt))
//! elif gradient ≤ 0:     rate += N·δ, N = 5 after 5 consecutive such steps, else 1
//! else:                  rate ← rate·(1 − β·gradient)
//! rate clamped to [min_rate, line_rate]
//! ```
//!
//! * The EWMA: Algorithm 1 of the paper writes `rtt_diff ← (1 − α)·rtt_diff + α·new_rtt_diff`,
//!   so α is the weight of the newest sample; with the paper's α = 0.875 the filter mostly
//!   follows the latest difference (the ns-3 RDMA models' Timely applies 0.875 the same way).
//!   The code the authors published alongside the paper weights the new sample the same way but
//!   suggests α = 0.02; [`TimelyParams::ewma_alpha`] makes it configurable.
//! * The first sample only records `prev_rtt` (there is no difference yet); the rate is unchanged.
//! * How often it runs ([`TimelyUpdate`]): the paper runs Algorithm 1 once per *completion event*,
//!   the acknowledgement of a 16–64 KB segment (16 KB in its evaluation, §5), and the ns-3 RDMA
//!   models (HPCC's `RdmaHw::HandleAckTimely`) once per round trip; running it on every ACK of
//!   1 KB packets applies the additive step 16–64× as often. Between updates ACKs are ignored:
//!   `prev_rtt` is the sample of the previous *update*, so the gradient spans one update.
//! * Hyper-active increase (HAI): a counter of consecutive gradient ≤ 0 increases, read *before*
//!   it is incremented, so increases 1–5 add δ and the 6th and later add N·δ = 5δ. Any decrease
//!   (the T_high rule or a positive gradient) resets it; the T_low rule adds δ and leaves it
//!   alone (Algorithm 1: only the gradient branch calls the HAI rule).
//! * [`TimelyParams::low_counts_as_increase`] (off): the rule of the ns-3 RDMA models (HPCC's
//!   `RdmaHw::UpdateRateTimely`, which ConWeave's ns-3 runs), where an RTT below T_low is an
//!   increase like a gradient ≤ 0 one: it reads and advances the same counter, so after five
//!   such updates it adds N·δ. On a trace replayed in both, irn's flows over 1 MB took
//!   1.4–1.5× ns-3's time under the paper's rule (datacenter RTTs sit mostly below T_low).
//! * The multiplicative factor is floored at 0 before the clamp (a gradient above 1/β would
//!   otherwise make it negative); the clamp then holds the rate at `min_rate`.
//! * Not included: the authors' published code also scales steps by the time since the last
//!   update (capped at one `min_rtt`); Algorithm 1 does not, and neither does this.
//!
//! Timely holds no clock: `now` is accepted for symmetry with the other controllers.

use super::{AckEvent, Named};
use crate::time::{Bandwidth, Duration, Time};

/// Which ACKs run Timely's update; the others are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimelyUpdate {
    /// Every ACK carrying an RTT sample.
    PerAck,
    /// The paper's completion events: one update each time another `bytes` have been
    /// acknowledged cumulatively, counting every acknowledged packet as a full MTU (a message's
    /// short last packet is counted full; the error is under one MTU per message). A jump past
    /// several segments makes one update; the remainder carries over.
    PerSegment { bytes: u64 },
    /// Once per round trip, as the ns-3 RDMA models do: an ACK updates when its cumulative ACK
    /// passes `nxt` as it was at the previous update (the first ACK that acknowledges anything
    /// makes the first).
    PerRtt,
}

/// How often Timely updates unless the scenario says otherwise: on every ACK, irn's behaviour
/// before the choice existed, kept because the paper's per-segment updates, with the paper's
/// δ = 10 Mb/s at 40 Gb/s, starve flows. In Fig. 9's incast every flow falls to `min_rate`
/// whatever the granularity; per segment it then updates once per 16 KiB acknowledged, every
/// 1.3 ms at 100 Mb/s, so climbing back by δ (5δ once hyper-active) per update takes tens of
/// milliseconds where per-ACK updates take one per packet: Fig. 9's Timely incast (10–50
/// senders, 150 MB) took 49–91 ms instead of 33–37 ms, and one of its 30 runs left a flow
/// unfinished at the 100 ms drain limit; Fig. 4's average FCT grew 4×. Per-RTT updates (ns-3's)
/// finish everything (Fig. 9: 35–47 ms) but change every Timely result docs/reproduce-irn.md reports.
pub const DEFAULT_UPDATE: TimelyUpdate = TimelyUpdate::PerAck;

const DEFAULT_SEGMENT: TimelyUpdate = TimelyUpdate::PerSegment {
    bytes: TimelyUpdate::PAPER_SEGMENT_BYTES,
};

impl TimelyUpdate {
    /// The Timely paper's evaluation's segment: 16 KB (its range is 16–64 KB).
    pub const PAPER_SEGMENT_BYTES: u64 = 16 * 1024;
}

/// The scenario's names; `"per-segment"` names the paper's 16 KB segment (a scenario's
/// `segment` key sets another).
impl Named for TimelyUpdate {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("per-segment", DEFAULT_SEGMENT),
        ("per-rtt", TimelyUpdate::PerRtt),
        ("per-ack", TimelyUpdate::PerAck),
    ];
}

/// Timely's parameters; the defaults are the Timely paper's (MODEL §7; the same defaults as
/// HPCC's ns-3 `RdmaHw` attributes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimelyParams {
    /// EWMA weight α of the newest RTT difference (see the module documentation). 0.875 (Timely
    /// paper, as MODEL §7 lists it).
    pub ewma_alpha: f64,
    /// Multiplicative-decrease factor β. 0.8 (Timely paper).
    pub beta: f64,
    /// Below this RTT the rate only grows additively, whatever the gradient. 50 µs (Timely paper).
    pub t_low: Duration,
    /// Above this RTT the rate is cut by β·(1 − T_high/rtt), whatever the gradient. 500 µs
    /// (Timely paper).
    pub t_high: Duration,
    /// The minimum network RTT that normalises the gradient. 20 µs (Timely paper).
    pub min_rtt: Duration,
    /// Additive step δ. 10 Mb/s (Timely paper).
    pub additive_step: Bandwidth,
    /// Consecutive gradient ≤ 0 increases before hyper-active increase starts. 5 (Timely paper).
    pub hai_threshold: u32,
    /// N: each hyper-active increase adds N·δ. 5 (Timely paper).
    pub hai_multiplier: u32,
    /// The rate never drops below this. 100 Mb/s: irn's choice (the paper leaves a minimum rate
    /// optional); the same floor as DCQCN's `min_rate` and the ns-3 RDMA models' `MinRate`.
    pub min_rate: Bandwidth,
    /// Which ACKs update the rate: [`DEFAULT_UPDATE`] (every ACK) unless a scenario says.
    pub update: TimelyUpdate,
    /// An RTT below T_low counts as an increase for hyper-active increase, as in the ns-3 RDMA
    /// models (see the module documentation). False: Algorithm 1's rule, δ only.
    pub low_counts_as_increase: bool,
}

impl Default for TimelyParams {
    fn default() -> Self {
        TimelyParams {
            ewma_alpha: 0.875,
            beta: 0.8,
            t_low: Duration::from_us(50),
            t_high: Duration::from_us(500),
            min_rtt: Duration::from_us(20),
            additive_step: Bandwidth::from_bps(10_000_000),
            hai_threshold: 5,
            hai_multiplier: 5,
            min_rate: Bandwidth::from_bps(100_000_000),
            update: DEFAULT_UPDATE,
            low_counts_as_increase: false,
        }
    }
}

/// Timely for one queue pair: turns RTT samples into the rate the sender paces at (see the
/// module documentation for the exact rules).
#[derive(Debug, Clone)]
pub struct Timely {
    p: TimelyParams,
    /// Line rate in bit/s: the starting rate and the cap.
    line: u64,
    /// Floor in bit/s: `min_rate`, but never above line rate.
    floor: u64,
    /// Current rate, bit/s.
    rate: u64,
    /// The previous sample, in picoseconds; `None` before the first.
    prev_rtt: Option<u64>,
    /// EWMA of successive RTT differences, in picoseconds.
    rtt_diff: f64,
    /// Consecutive gradient ≤ 0 increases (the HAI counter).
    neg_steps: u32,
    /// Payload bytes a full packet carries (per-segment counting).
    mtu: u64,
    /// Per-segment: bytes acknowledged since the last update. Per-RTT: `nxt` at the last update
    /// (the next update waits for the cumulative ACK to pass it).
    gate: u64,
}

impl Timely {
    /// Timely on a port of `line_rate` with packets of `mtu` payload bytes, starting at line
    /// rate as every flow does (IRN §4.1).
    pub fn new(p: TimelyParams, line_rate: Bandwidth, mtu: u32) -> Self {
        let line = line_rate.as_bps();
        Timely {
            p,
            line,
            floor: p.min_rate.as_bps().min(line),
            rate: line,
            prev_rtt: None,
            rtt_diff: 0.0,
            neg_steps: 0,
            mtu: u64::from(mtu),
            gate: 0,
        }
    }

    /// The current rate, which the sender paces its packets at.
    pub fn rate(&self) -> Bandwidth {
        Bandwidth::from_bps(self.rate)
    }

    /// The smoothed RTT difference divided by `min_rtt`: what the last update acted on.
    pub fn gradient(&self) -> f64 {
        self.rtt_diff / self.p.min_rtt.as_ps().max(1) as f64
    }

    /// An ACK arrived: an update if [`TimelyParams::update`] says this ACK is one.
    pub fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        let due = match self.p.update {
            TimelyUpdate::PerAck => true,
            TimelyUpdate::PerSegment { bytes } => {
                self.gate += ack.newly_acked * self.mtu;
                let due = self.gate >= bytes;
                if due {
                    self.gate %= bytes;
                }
                due
            }
            TimelyUpdate::PerRtt => {
                let due = ack.una > self.gate;
                if due {
                    self.gate = ack.nxt;
                }
                due
            }
        };
        if let Some(rtt) = ack.rtt.filter(|_| due) {
            self.on_rtt(now, rtt);
        }
    }

    /// One update (Algorithm 1) with the RTT sample of the ACK that triggered it.
    fn on_rtt(&mut self, _now: Time, rtt: Duration) {
        let sample = rtt.as_ps();
        let Some(prev) = self.prev_rtt.replace(sample) else {
            return;
        };
        let new_diff = sample as f64 - prev as f64;
        let a = self.p.ewma_alpha;
        self.rtt_diff = (1.0 - a) * self.rtt_diff + a * new_diff;
        let gradient = self.gradient();
        let rate = self.rate as f64;
        let delta = self.p.additive_step.as_bps() as f64;
        let new_rate = if rtt < self.p.t_low && !self.p.low_counts_as_increase {
            rate + delta
        } else if rtt < self.p.t_low {
            rate + self.increase_steps() * delta
        } else if rtt > self.p.t_high {
            self.neg_steps = 0;
            let t_high = self.p.t_high.as_ps() as f64;
            rate * (1.0 - self.p.beta * (1.0 - t_high / sample as f64)).max(0.0)
        } else if gradient <= 0.0 {
            rate + self.increase_steps() * delta
        } else {
            self.neg_steps = 0;
            rate * (1.0 - self.p.beta * gradient).max(0.0)
        };
        self.rate = (new_rate.round() as u64).clamp(self.floor, self.line);
    }

    /// A counted increase: N once the HAI counter has reached its threshold, else 1; the
    /// counter advances.
    fn increase_steps(&mut self) -> f64 {
        let n = if self.neg_steps >= self.p.hai_threshold {
            f64::from(self.p.hai_multiplier)
        } else {
            1.0
        };
        self.neg_steps = self.neg_steps.saturating_add(1);
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G40: u64 = 40_000_000_000;

    fn us(t: u64) -> Duration {
        Duration::from_us(t)
    }

    fn at(k: u64) -> Time {
        Time::from_ps(k)
    }

    /// A Timely instance already below line rate, so increases are visible.
    fn timely_at(rate: u64) -> Timely {
        let mut t = Timely::new(TimelyParams::default(), Bandwidth::from_bps(G40), 1024);
        t.rate = rate;
        t
    }

    #[test]
    fn defaults_are_the_papers() {
        let p = TimelyParams::default();
        assert_eq!(p.ewma_alpha, 0.875);
        assert_eq!(p.beta, 0.8);
        assert_eq!(p.t_low, us(50));
        assert_eq!(p.t_high, us(500));
        assert_eq!(p.min_rtt, us(20));
        assert_eq!(p.additive_step.as_bps(), 10_000_000);
        assert_eq!((p.hai_threshold, p.hai_multiplier), (5, 5));
        assert_eq!(p.min_rate.as_bps(), 100_000_000);
    }

    #[test]
    fn first_sample_only_initialises() {
        let mut t = timely_at(10_000_000_000);
        t.on_rtt(at(0), us(400)); // would be a T_low/T_high/gradient step otherwise
        assert_eq!(t.rate().as_bps(), 10_000_000_000);
        assert_eq!(t.gradient(), 0.0);
    }

    #[test]
    fn rising_rtt_cuts_by_the_gradient() {
        // Samples 100, 110, 120 µs: each difference is 10 µs.
        let mut t = timely_at(20_000_000_000);
        t.on_rtt(at(0), us(100));
        t.on_rtt(at(1), us(110));
        // rtt_diff = 0.875·10 µs = 8.75 µs; gradient 0.4375; factor 1 − 0.8·0.4375 = 0.65.
        let r1 = (20e9 * (1.0 - 0.8 * 0.4375f64)).round();
        assert_eq!(r1, 13e9);
        assert_eq!(t.rate().as_bps(), r1 as u64);
        t.on_rtt(at(2), us(120));
        // rtt_diff = 0.125·8.75 + 0.875·10 = 9.84375 µs; gradient 0.4921875; factor 0.60625.
        let g2 = (0.125 * 8.75 + 0.875 * 10.0) / 20.0;
        assert!((t.gradient() - g2).abs() < 1e-12);
        let r2 = r1 * (1.0 - 0.8 * g2); // ≈ 7.88 Gb/s
        assert!((t.rate().as_bps() as f64 - r2).abs() <= 1.0);
    }

    #[test]
    fn falling_rtt_additive_then_hyperactive() {
        // Decreasing RTTs inside [T_low, T_high]: gradient < 0 every step.
        let mut t = timely_at(10_000_000_000);
        t.on_rtt(at(0), us(300));
        let mut want = 10_000_000_000u64;
        for k in 1..=8u64 {
            t.on_rtt(at(k), us(300 - 10 * k));
            assert!(t.gradient() < 0.0);
            // Steps 1–5 add δ = 10 Mb/s; from the 6th, N·δ = 50 Mb/s.
            want += if k <= 5 { 10_000_000 } else { 50_000_000 };
            assert_eq!(t.rate().as_bps(), want, "step {k}");
        }
        // A rising sample (positive gradient) resets the HAI counter.
        t.on_rtt(at(9), us(300));
        assert!(t.gradient() > 0.0);
        let after_cut = t.rate().as_bps();
        assert!(after_cut < want);
        t.on_rtt(at(10), us(100)); // big fall: gradient < 0 again
        assert!(t.gradient() < 0.0);
        assert_eq!(t.rate().as_bps(), after_cut + 10_000_000);
    }

    #[test]
    fn flat_rtt_counts_as_non_positive_gradient() {
        let mut t = timely_at(10_000_000_000);
        for k in 0..=7 {
            t.on_rtt(at(k), us(100));
        }
        // 7 steps at gradient 0: 5·δ + 2·5δ.
        assert_eq!(
            t.rate().as_bps(),
            10_000_000_000 + 5 * 10_000_000 + 2 * 50_000_000
        );
    }

    #[test]
    fn below_t_low_adds_delta_whatever_the_gradient() {
        let mut t = timely_at(10_000_000_000);
        t.on_rtt(at(0), us(20));
        t.on_rtt(at(1), us(45)); // steep rise, but under T_low = 50 µs
        assert!(t.gradient() > 0.0);
        assert_eq!(t.rate().as_bps(), 10_010_000_000);
        for k in 2..10 {
            t.on_rtt(at(k), us(30));
        }
        // Never hyper-active under T_low: 9 steps of δ.
        assert_eq!(t.rate().as_bps(), 10_090_000_000);
    }

    #[test]
    fn below_t_low_counts_towards_hai_under_the_ns3_rule() {
        // (RTT µs, rate after, paper's rule, ns-3's rule) from 10 Gb/s: the first sample only
        // records. Paper: δ each time below T_low. ns-3: increases 1–5 add δ, the 6th on
        // N·δ = 50 Mb/s; a decrease (here the gradient of a rise to 60 µs) resets the counter
        // in both.
        let table: &[(u64, u64, u64)] = &[
            (30, 10_000, 10_000),
            (30, 10_010, 10_010),
            (30, 10_020, 10_020),
            (30, 10_030, 10_030),
            (30, 10_040, 10_040),
            (30, 10_050, 10_050),
            (30, 10_060, 10_100),
            (30, 10_070, 10_150),
        ];
        let mut paper = timely_at(10_000_000_000);
        let mut ns3 = timely_at(10_000_000_000);
        ns3.p.low_counts_as_increase = true;
        for (k, &(rtt, want_paper, want_ns3)) in table.iter().enumerate() {
            paper.on_rtt(at(k as u64), us(rtt));
            ns3.on_rtt(at(k as u64), us(rtt));
            assert_eq!(
                paper.rate().as_bps(),
                want_paper * 1_000_000,
                "paper, row {k}"
            );
            assert_eq!(ns3.rate().as_bps(), want_ns3 * 1_000_000, "ns-3, row {k}");
        }
        // A rise to 60 µs: gradient 0.875·30/20 > 1/β, the rate drops to the floor, and the
        // counter starts again: the next T_low update adds δ.
        ns3.on_rtt(at(20), us(60));
        assert_eq!(ns3.rate().as_bps(), 100_000_000);
        ns3.on_rtt(at(21), us(30));
        assert_eq!(ns3.rate().as_bps(), 110_000_000);
    }

    #[test]
    fn above_t_high_uses_the_t_high_rule() {
        let mut t = timely_at(20_000_000_000);
        t.on_rtt(at(0), us(900));
        t.on_rtt(at(1), us(800)); // falling, but above T_high
                                  // factor 1 − 0.8·(1 − 500/800) = 1 − 0.8·0.375 = 0.7
        assert_eq!(t.rate().as_bps(), 14_000_000_000);
        t.on_rtt(at(2), us(1000));
        // factor 1 − 0.8·0.5 = 0.6
        assert_eq!(t.rate().as_bps(), 8_400_000_000);
    }

    #[test]
    fn clamped_to_line_rate_and_min_rate() {
        let mut t = Timely::new(TimelyParams::default(), Bandwidth::from_bps(G40), 1024);
        t.on_rtt(at(0), us(10));
        t.on_rtt(at(1), us(10));
        // +δ, capped at line rate.
        assert_eq!(t.rate().as_bps(), G40);
        // A gradient above 1/β floors the factor at 0: the rate falls to min_rate. Here
        // rtt_diff = 0.875·50 µs, gradient 2.1875.
        t.on_rtt(at(2), us(60));
        assert_eq!(t.rate().as_bps(), 100_000_000);
        t.on_rtt(at(3), us(400));
        assert_eq!(t.rate().as_bps(), 100_000_000);
        // And a huge RTT cannot go below it either.
        t.on_rtt(at(4), us(100_000));
        assert_eq!(t.rate().as_bps(), 100_000_000);
    }

    /// An ACK with `newly` packets newly acknowledged, the cumulative ACK at `una`, `nxt`
    /// the next new packet, echoing an RTT of `rtt_us`.
    fn ack(newly: u64, una: u64, nxt: u64, rtt_us: u64) -> AckEvent {
        AckEvent {
            newly_acked: newly,
            rtt: Some(us(rtt_us)),
            ece: false,
            una,
            nxt,
        }
    }

    fn gated(update: TimelyUpdate) -> Timely {
        let p = TimelyParams {
            update,
            ..TimelyParams::default()
        };
        let mut t = Timely::new(p, Bandwidth::from_bps(G40), 1024);
        t.rate = 10_000_000_000;
        t
    }

    #[test]
    fn per_rtt_updates_when_the_cumulative_ack_passes_nxt_of_the_last_update() {
        let mut t = gated(TimelyUpdate::PerRtt);
        // The first ACK that acknowledges anything is the first update: it records 100 µs.
        t.on_ack(at(0), &ack(1, 1, 10, 100));
        assert_eq!(t.rate().as_bps(), 10_000_000_000);
        // Until the cumulative ACK passes 10 (nxt then), nothing happens, whatever the RTT.
        t.on_ack(at(1), &ack(4, 5, 12, 300));
        t.on_ack(at(2), &ack(5, 10, 14, 200));
        assert_eq!(t.rate().as_bps(), 10_000_000_000);
        assert_eq!(t.gradient(), 0.0);
        // una 11 > 10: an update, whose difference is against the last update's 100 µs (not
        // the ignored 200 µs): 10 µs, rtt_diff 8.75 µs, gradient 0.4375, rate × 0.65.
        t.on_ack(at(3), &ack(1, 11, 20, 110));
        assert!((t.gradient() - 0.4375).abs() < 1e-12);
        assert_eq!(t.rate().as_bps(), 6_500_000_000);
        // The next waits for una > 20; then −10 µs: rtt_diff 0.125·8.75 − 0.875·10 < 0, +δ.
        t.on_ack(at(4), &ack(9, 20, 25, 100));
        assert_eq!(t.rate().as_bps(), 6_500_000_000);
        t.on_ack(at(5), &ack(1, 21, 25, 100));
        assert!((t.gradient() - (0.125 * 8.75 - 8.75) / 20.0).abs() < 1e-12);
        assert_eq!(t.rate().as_bps(), 6_510_000_000);
    }

    #[test]
    fn per_segment_updates_once_per_16_kb_acknowledged() {
        // 16 KB of 1024 B packets: every 16 packets acknowledged.
        let mut t = gated(TimelyUpdate::PerSegment { bytes: 16_384 });
        t.on_ack(at(0), &ack(10, 10, 40, 100));
        assert!(t.prev_rtt.is_none(), "10 packets are not a segment");
        t.on_ack(at(1), &ack(6, 16, 40, 100)); // 16 packets: the first update records 100 µs
        assert_eq!(t.prev_rtt, Some(us(100).as_ps()));
        t.on_ack(at(2), &ack(15, 31, 40, 500)); // 15 more: ignored, T_high or not
        assert_eq!(t.rate().as_bps(), 10_000_000_000);
        // 18 packets since the last update: one update (2 carried over), +10 µs against the
        // last update's 100 µs: rate × 0.65.
        t.on_ack(at(3), &ack(3, 34, 40, 110));
        assert_eq!(t.rate().as_bps(), 6_500_000_000);
        // A jump of 40 packets (42 counted) is one update, 10 carried over: gradient < 0, +δ.
        t.on_ack(at(4), &ack(40, 74, 80, 100));
        assert_eq!(t.rate().as_bps(), 6_510_000_000);
        // 6 more reach the next segment; duplicates (0 newly acknowledged) count nothing.
        t.on_ack(at(5), &ack(0, 74, 80, 900));
        assert_eq!(t.rate().as_bps(), 6_510_000_000);
        t.on_ack(at(6), &ack(6, 80, 80, 100));
        assert_eq!(t.rate().as_bps(), 6_520_000_000);
    }

    #[test]
    fn per_ack_updates_on_every_ack() {
        let mut t = gated(TimelyUpdate::PerAck);
        t.on_ack(at(0), &ack(0, 0, 10, 100));
        t.on_ack(at(1), &ack(0, 0, 10, 110));
        assert_eq!(t.rate().as_bps(), 6_500_000_000);
    }
}
