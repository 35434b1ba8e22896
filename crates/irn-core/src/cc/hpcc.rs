//! HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019): a window- and
//! rate-based controller driven by in-band network telemetry ([`super::int`]). Every switch
//! egress on a data packet's path writes its queue length, its transmitted bytes, a timestamp
//! and its rate; the ACK echoes them, and the sender sizes its window from the most loaded hop.
//!
//! # The rule (the paper's Algorithm 1)
//!
//! ```text
//! on each ACK:
//!   for each hop i (L = the records the previous ACK echoed):
//!     txRate_i = (ack.tx_i − L.tx_i) / (ack.ts_i − L.ts_i)
//!     u_i      = min(ack.qlen_i, L.qlen_i) / (B_i·T) + txRate_i / B_i
//!   u, τ = the largest u_i and its hop's ts_i − L.ts_i;   τ = min(τ, T)
//!   U = (1 − τ/T)·U + (τ/T)·u                          (the normalised inflight, an EWMA)
//!   if U ≥ η or incStage ≥ maxStage:  W = Wc / (U/η) + W_AI    (multiplicative step)
//!   else:                             W = Wc + W_AI            (additive stage)
//!   once per RTT (the ACK acknowledges past snd_nxt of the last such update):
//!     Wc = W; incStage = 0 after a multiplicative step, + 1 after an additive one
//!   L = the ACK's records
//! pace at R = W / T, with at most W bytes in flight
//! ```
//!
//! W is clamped to [`min_rate`·T, B_nic·T] before it is used or kept as Wc, as ns-3 clamps its
//! rate. T is the base round trip (`base_rtt`), B_nic the NIC's line rate; the window starts at
//! W_init = B_nic·T (flows start at line rate).
//!
//! # What the paper leaves open, taken from HPCC's ns-3 model (`RdmaHw::UpdateRateHp`)
//!
//! * The first ACK only records L (there is no previous record to take differences from) and
//!   marks the first RTT's end at the sender's `snd_nxt`; every later ACK updates.
//! * U starts at 1 (ns-3's `hp.u = 1`), so the first updates lean towards a full link.
//! * A hop whose two records share a timestamp adds no rate term (ns-3 would divide by zero).
//! * The window in packets is W over the MTU, rounded up, at least 1 (ns-3 counts bytes).
//!
//! # ns-3 differences, each an option
//!
//! * [`HpccParams::fast_react`] (ns-3 `FastReact`, on): ACKs between the once-per-RTT updates
//!   compute W from Wc. Off, they are ignored (L is not updated either), as ns-3 does.
//! * [`HpccParams::sample_feedback`] (ns-3 `SampleFeedback`, off in its `run.py`): those ACKs
//!   skip hops with an empty queue.
//! * [`HpccParams::per_hop`] (ns-3 `MultiRate`: its attribute's default is on, its `run.py`
//!   turns it off): each hop keeps its own U, Wc and stage, and W is the smallest hop's W.
//! * [`HpccParams::max_stage`]: the paper's 5; HPCC's `run.py` runs with `MI_THRESH = 0`
//!   (every update multiplicative).
//! * ns-3 quantizes the records (80-byte queue units, 128-byte byte units, 24-bit time) and
//!   computes with rates (R = Rc/(U/η) + R_AI): the same rule, since W = R·T; here the records
//!   are exact.

use super::int::{EchoedPath, IntHop, MAX_INT_HOPS};
use super::AckEvent;
use crate::time::{Bandwidth, Duration, Time};

/// HPCC's parameters; see the module documentation for where each default comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HpccParams {
    /// η, the target utilisation. 0.95 (paper, ns-3 `TargetUtil`).
    pub eta: f64,
    /// Additive stages before a multiplicative step is forced. 5 (paper; ns-3 `MiThresh`).
    pub max_stage: u32,
    /// W_AI in bytes; `None`: ns-3 `run.py`'s additive rate (10 Mb/s per 25 Gb/s of line rate)
    /// over one base RTT.
    pub w_ai_bytes: Option<u64>,
    /// T, the base round trip the window is a product of. Scenarios set it from the topology
    /// (`base_rtt = "auto"`); 10 µs here.
    pub base_rtt: Duration,
    /// The rate never drops below this. 100 Mb/s (ns-3 `MinRate`).
    pub min_rate: Bandwidth,
    /// ACKs between once-per-RTT updates react too. True (paper, ns-3 `FastReact`).
    pub fast_react: bool,
    /// Those ACKs skip hops with an empty queue. False (ns-3 `SampleFeedback`, as `run.py`).
    pub sample_feedback: bool,
    /// A U, Wc and stage per hop, W the least of the hops'. False (paper; ns-3 `MultiRate` as
    /// `run.py` sets it).
    pub per_hop: bool,
}

impl Default for HpccParams {
    fn default() -> Self {
        HpccParams {
            eta: 0.95,
            max_stage: 5,
            w_ai_bytes: None,
            base_rtt: Duration::from_us(10),
            min_rate: Bandwidth::from_bps(100_000_000),
            fast_react: true,
            sample_feedback: false,
            per_hop: false,
        }
    }
}

impl HpccParams {
    /// ns-3 `run.py`'s additive rate step per bit/s of line rate: 10 Mb/s at 25 Gb/s.
    const AI_PER_LINE_RATE: f64 = 10e6 / 25e9;

    /// W_AI in bytes on a NIC of `line_rate`.
    pub fn w_ai(&self, line_rate: Bandwidth) -> f64 {
        match self.w_ai_bytes {
            Some(b) => b as f64,
            None => {
                let rate = line_rate.as_bps() as f64 * Self::AI_PER_LINE_RATE;
                rate * self.base_rtt.as_ps() as f64 / 8e12
            }
        }
    }
}

/// The reference state one update works from: the aggregate, or one hop's under `per_hop`.
#[derive(Debug, Clone, Copy)]
struct Reference {
    /// U, the EWMA of the normalised inflight.
    u: f64,
    /// Wc, bytes.
    wc: f64,
    /// Additive stages since the last multiplicative step.
    stage: u32,
}

/// HPCC for one queue pair (see the module documentation for the exact rules).
#[derive(Debug, Clone)]
pub struct Hpcc {
    p: HpccParams,
    /// T in picoseconds.
    t_ps: f64,
    /// W_AI, bytes.
    w_ai: f64,
    /// The window's bounds, bytes: `min_rate`·T and B_nic·T.
    w_min: f64,
    w_max: f64,
    /// Payload bytes per packet, for the window in packets.
    mtu: f64,
    /// W, bytes.
    w: f64,
    /// The aggregate reference (the paper's), or unused under `per_hop`.
    agg: Reference,
    /// Per hop, under `per_hop`.
    hop_ref: [Reference; MAX_INT_HOPS],
    /// `snd_nxt` at the last once-per-RTT update; `None` before the first ACK.
    last_update: Option<u64>,
    /// INT: each hop's L and the records the ACK being handled echoes.
    path: EchoedPath,
}

impl Hpcc {
    /// HPCC on a NIC of `line_rate` sending packets of `mtu` payload bytes, starting at
    /// W_init = line rate × T.
    pub fn new(p: HpccParams, line_rate: Bandwidth, mtu: u32) -> Self {
        let t_ps = p.base_rtt.as_ps().max(1) as f64;
        let bytes = |rate: Bandwidth| rate.as_bps() as f64 * t_ps / 8e12;
        let w_max = bytes(line_rate);
        let w_min = bytes(p.min_rate).min(w_max);
        let start = Reference {
            u: 1.0,
            wc: w_max,
            stage: 0,
        };
        Hpcc {
            p,
            t_ps,
            w_ai: p.w_ai(line_rate),
            w_min,
            w_max,
            mtu: f64::from(mtu.max(1)),
            w: w_max,
            agg: start,
            hop_ref: [start; MAX_INT_HOPS],
            last_update: None,
            path: EchoedPath::new(),
        }
    }

    /// The pacing rate, W / T.
    pub fn rate(&self) -> Bandwidth {
        Bandwidth::from_bps((self.w * 8e12 / self.t_ps).round() as u64)
    }

    /// The window in packets: W over the MTU, rounded up, at least 1.
    pub fn window(&self) -> u32 {
        ((self.w / self.mtu).ceil() as u32).max(1)
    }

    /// W in bytes.
    pub fn window_bytes(&self) -> f64 {
        self.w
    }

    /// Wc in bytes (the aggregate's; under `per_hop`, the least hop's).
    pub fn reference_window(&self) -> f64 {
        match self.p.per_hop {
            false => self.agg.wc,
            true => (self.hop_ref.iter()).fold(self.w_max, |m, r| m.min(r.wc)),
        }
    }

    /// U, the aggregate normalised inflight.
    pub fn utilisation(&self) -> f64 {
        self.agg.u
    }

    /// The records the next ACK echoes.
    pub fn on_telemetry(&mut self, hops: &[IntHop]) {
        self.path.hand_over(hops);
    }

    /// An ACK arrived, with the records [`on_telemetry`](Self::on_telemetry) handed over.
    pub fn on_ack(&mut self, _now: Time, ack: &AckEvent) {
        let n = self.path.take();
        let Some(last_update) = self.last_update else {
            self.last_update = Some(ack.nxt);
            self.path.remember(n);
            return;
        };
        let per_rtt = ack.una > last_update;
        if !per_rtt && !self.p.fast_react {
            return;
        }
        if n > 0 {
            let updated = match self.p.per_hop {
                false => self.update_aggregate(n, per_rtt),
                true => self.update_per_hop(n, per_rtt),
            };
            if let Some(w) = updated {
                self.w = w;
            }
        }
        if per_rtt {
            self.last_update = Some(ack.nxt.max(last_update));
        }
    }

    /// Hop `i`'s normalised inflight from its new record and L, with the time between them
    /// (ps); `None` for a hop `sample_feedback` skips. L becomes the new record.
    fn measure(&mut self, i: usize, per_rtt: bool) -> Option<(f64, f64)> {
        let (new, old) = self.path.hop(i);
        if self.p.sample_feedback && !per_rtt && new.qlen_bytes == 0 {
            return None;
        }
        self.path.keep(i);
        let b = new.rate.as_bps().max(1) as f64;
        let tau = new.ts.as_ps().saturating_sub(old.ts.as_ps()) as f64;
        let tx_rate = match tau > 0.0 {
            true => new.tx_bytes.saturating_sub(old.tx_bytes) as f64 * 8e12 / tau,
            false => 0.0,
        };
        let qlen = new.qlen_bytes.min(old.qlen_bytes) as f64 * 8e12;
        Some((qlen / (b * self.t_ps) + tx_rate / b, tau))
    }

    /// The paper's rule: the most loaded hop feeds one U and one Wc.
    fn update_aggregate(&mut self, n: usize, per_rtt: bool) -> Option<f64> {
        let mut most: Option<(f64, f64)> = None;
        for i in 0..n {
            if let Some((u, tau)) = self.measure(i, per_rtt) {
                if most.is_none_or(|(m, _)| u > m) {
                    most = Some((u, tau));
                }
            }
        }
        let (u, tau) = most?;
        let mut r = self.agg;
        let w = self.step(&mut r, u, tau, per_rtt);
        self.agg = r;
        Some(w)
    }

    /// ns-3's `MultiRate`: each hop its own U, Wc and stage; W is the least hop's.
    fn update_per_hop(&mut self, n: usize, per_rtt: bool) -> Option<f64> {
        let mut w = self.w_max;
        let mut any = false;
        for i in 0..n {
            let mut r = self.hop_ref[i];
            match self.measure(i, per_rtt) {
                Some((u, tau)) => {
                    any = true;
                    w = w.min(self.step(&mut r, u, tau, per_rtt));
                    self.hop_ref[i] = r;
                }
                None => w = w.min(r.wc),
            }
        }
        any.then_some(w)
    }

    /// One update of reference `r` with the normalised inflight `u` measured over `tau` ps:
    /// the new W, kept as Wc (with the stage) only `per_rtt`.
    fn step(&self, r: &mut Reference, u: f64, tau: f64, per_rtt: bool) -> f64 {
        let tau = tau.min(self.t_ps);
        r.u = (1.0 - tau / self.t_ps) * r.u + tau / self.t_ps * u;
        let multiplicative = r.u >= self.p.eta || r.stage >= self.p.max_stage;
        let w = match multiplicative {
            true => r.wc / (r.u / self.p.eta) + self.w_ai,
            false => r.wc + self.w_ai,
        };
        let w = w.clamp(self.w_min, self.w_max);
        if per_rtt {
            r.wc = w;
            r.stage = if multiplicative { 0 } else { r.stage + 1 };
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 100 Gb/s, T = 10 µs: W_init = 125 000 B; W_AI = 500 B.
    fn hpcc(p: HpccParams) -> Hpcc {
        let p = HpccParams {
            w_ai_bytes: Some(500),
            ..p
        };
        Hpcc::new(p, Bandwidth::from_gbps(100), 1000)
    }

    /// A 100 Gb/s hop's record at `us` microseconds.
    fn rec(us: u64, tx_bytes: u64, qlen_bytes: u64) -> IntHop {
        IntHop {
            qlen_bytes,
            tx_bytes,
            ts: Time::from_ps(us * 1_000_000),
            rate: Bandwidth::from_gbps(100),
        }
    }

    fn ack(h: &mut Hpcc, hops: &[IntHop], una: u64, nxt: u64) {
        h.on_telemetry(hops);
        let event = AckEvent {
            una,
            nxt,
            ..AckEvent::default()
        };
        h.on_ack(Time::ZERO, &event);
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6 * b.abs().max(1.0)
    }

    /// B·T = 125 000 B, so with records T apart (τ/T = 1, U = u) a hop's u is (Δtx + the
    /// smaller queue) / 125 000.
    const BT: u64 = 125_000;

    #[test]
    fn the_first_ack_only_records_and_the_second_updates() {
        let mut h = hpcc(HpccParams::default());
        ack(&mut h, &[rec(1, 0, 50_000)], 1, 10);
        assert_eq!(h.window_bytes(), 125_000.0, "nothing to compare with yet");
        // 1 µs later: 12 500 B sent (100 Gb/s: txRate/B = 1), queue 25 000 B (the smaller of
        // the two: 25 000·8 / (100 Gb/s · 10 µs) = 0.2). u = 1.2, τ/T = 0.1, U from 1:
        // U = 0.9·1 + 0.1·1.2 = 1.02 ≥ η: W = 125 000 / (1.02/0.95) + 500 = 116 921.568…
        ack(&mut h, &[rec(2, 12_500, 25_000)], 11, 20);
        assert!(close(h.utilisation(), 1.02));
        let w = 125_000.0 * 0.95 / 1.02 + 500.0;
        assert!(close(h.window_bytes(), w), "{}", h.window_bytes());
        assert!(close(h.reference_window(), w), "past snd_nxt: Wc moves");
        // R = W / T; window = ⌈W / 1000⌉ packets.
        assert_eq!(h.rate().as_bps(), (w * 8.0 / 10e-6).round() as u64);
        assert_eq!(h.window(), 117);
    }

    /// (u, ACK within the RTT?, W after, Wc after) with records T apart, so U = u.
    type Row = (u64, bool, f64, f64);

    fn run_table(p: HpccParams, rows: &[Row]) {
        let mut h = hpcc(p);
        ack(&mut h, &[rec(0, 0, 0)], 0, 1);
        let (mut una, mut nxt, mut tx) = (1, 1, 0);
        for (k, &(inflight, within, w, wc)) in rows.iter().enumerate() {
            if !within {
                una = nxt + 1;
                nxt = una + 10;
            }
            tx += inflight;
            let t = 10 * (k as u64 + 1);
            ack(&mut h, &[rec(t, tx, 0)], una, nxt);
            assert!(
                close(h.window_bytes(), w),
                "row {k}: W {} ≠ {w}",
                h.window_bytes()
            );
            assert!(
                close(h.reference_window(), wc),
                "row {k}: Wc {}",
                h.reference_window()
            );
        }
    }

    #[test]
    fn a_loaded_link_cuts_multiplicatively_then_additive_stages_lead_to_a_forced_step() {
        // u = 1.9 (Δtx = 1.9·B·T): W = 125 000·0.95/1.9 + 500 = 63 000. Then u = 0.5 < η:
        // five additive stages of 500 B, then stage 5 ≥ maxStage forces the multiplicative
        // rule: 65 500·0.95/0.5 + 500 = 124 950.
        let rows: &[Row] = &[
            (19 * BT / 10, false, 63_000.0, 63_000.0),
            (BT / 2, false, 63_500.0, 63_500.0),
            (BT / 2, false, 64_000.0, 64_000.0),
            (BT / 2, false, 64_500.0, 64_500.0),
            (BT / 2, false, 65_000.0, 65_000.0),
            (BT / 2, false, 65_500.0, 65_500.0),
            (BT / 2, false, 124_950.0, 124_950.0),
        ];
        run_table(HpccParams::default(), rows);
    }

    #[test]
    fn the_reference_window_moves_once_per_rtt() {
        // After the cut to 63 000, ACKs within the same RTT compute W from Wc and leave it:
        // each is 63 000 + 500, not a growing sum; the next RTT's first ACK keeps its W.
        let rows: &[Row] = &[
            (19 * BT / 10, false, 63_000.0, 63_000.0),
            (BT / 2, true, 63_500.0, 63_000.0),
            (BT / 2, true, 63_500.0, 63_000.0),
            (BT / 2, false, 63_500.0, 63_500.0),
            // A loaded hop within the RTT cuts at once, from Wc: 63 500·0.95/1.9 + 500.
            (19 * BT / 10, true, 32_250.0, 63_500.0),
        ];
        run_table(HpccParams::default(), rows);
    }

    #[test]
    fn without_fast_react_acks_within_the_rtt_change_nothing() {
        let p = HpccParams {
            fast_react: false,
            ..HpccParams::default()
        };
        let rows: &[Row] = &[
            (19 * BT / 10, false, 63_000.0, 63_000.0),
            (19 * BT / 10, true, 63_000.0, 63_000.0),
        ];
        run_table(p, rows);
    }

    #[test]
    fn max_stage_zero_makes_every_update_multiplicative() {
        // HPCC's run.py (MI_THRESH = 0): u = 0.5 grows W by η/U at once, up to line rate.
        let p = HpccParams {
            max_stage: 0,
            ..HpccParams::default()
        };
        let rows: &[Row] = &[
            (19 * BT / 10, false, 63_000.0, 63_000.0),
            (BT / 2, false, 120_200.0, 120_200.0),
            (BT / 2, false, 125_000.0, 125_000.0),
        ];
        run_table(p, rows);
    }

    #[test]
    fn the_most_loaded_hop_decides_and_the_queue_counts_its_smaller_sample() {
        let mut h = hpcc(HpccParams::default());
        let first = [rec(0, 0, 40_000), rec(0, 0, 12_500)];
        ack(&mut h, &first, 0, 1);
        // Hop 0: idle link, queue 40 000 then 62 500: u = 40 000/125 000 = 0.32. Hop 1: full
        // link (Δtx = B·T) and a queue of 12 500 twice: u = 1.1. U = 1.1:
        // W = 125 000·0.95/1.1 + 500.
        ack(&mut h, &[rec(10, 0, 62_500), rec(10, BT, 12_500)], 2, 3);
        assert!(close(h.utilisation(), 1.1));
        assert!(close(h.window_bytes(), 125_000.0 * 0.95 / 1.1 + 500.0));
    }

    #[test]
    fn the_window_stays_between_min_rate_and_line_rate() {
        // u = 100: W = 125 000·0.95/100 + 500 = 1 687.5 B, above 100 Mb/s·10 µs = 125 B.
        let rows: &[Row] = &[(100 * BT, false, 1_687.5, 1_687.5)];
        run_table(HpccParams::default(), rows);
        // Without W_AI, u = 10 000 gives 11.875 B: held at 125 B, one packet, 100 Mb/s.
        let p = HpccParams {
            w_ai_bytes: Some(0),
            ..HpccParams::default()
        };
        let mut h = Hpcc::new(p, Bandwidth::from_gbps(100), 1000);
        ack(&mut h, &[rec(0, 0, 0)], 0, 1);
        ack(&mut h, &[rec(10, 10_000 * BT, 0)], 2, 3);
        assert!(close(h.window_bytes(), 125.0), "{}", h.window_bytes());
        assert_eq!(h.window(), 1);
        assert_eq!(h.rate(), Bandwidth::from_bps(100_000_000));
    }

    #[test]
    fn per_hop_keeps_a_reference_per_hop_and_takes_the_least() {
        let mut h = hpcc(HpccParams {
            per_hop: true,
            ..HpccParams::default()
        });
        ack(&mut h, &[rec(0, 0, 0), rec(0, 0, 0)], 0, 1);
        // Hop 0 at u = 1.9: 63 000; hop 1 at u = 0.5: its first additive stage, 125 500
        // clamped to 125 000. W is the least.
        ack(
            &mut h,
            &[rec(10, 19 * BT / 10, 0), rec(10, BT / 2, 0)],
            2,
            3,
        );
        assert!(close(h.window_bytes(), 63_000.0));
        assert_eq!(h.hop_ref[1].stage, 1);
        assert!(close(h.hop_ref[1].wc, 125_000.0));
    }

    #[test]
    fn sample_feedback_skips_empty_queues_within_the_rtt() {
        let mut h = hpcc(HpccParams {
            sample_feedback: true,
            ..HpccParams::default()
        });
        ack(&mut h, &[rec(0, 0, 0)], 0, 10);
        // Within the first RTT, a loaded link with an empty queue is skipped: no change.
        ack(&mut h, &[rec(10, 19 * BT / 10, 0)], 2, 10);
        assert_eq!(h.window_bytes(), 125_000.0);
        // Past snd_nxt it counts (L is still the first record: Δtx = 1.9·B·T over T).
        ack(&mut h, &[rec(10, 19 * BT / 10, 0)], 11, 20);
        assert!(close(h.window_bytes(), 63_000.0));
    }

    #[test]
    fn the_default_additive_step_is_ns3s_rate_over_one_rtt() {
        // 10 Mb/s per 25 Gb/s: 40 Mb/s at 100 Gb/s, over 10 µs: 50 B.
        let p = HpccParams::default();
        assert!(close(p.w_ai(Bandwidth::from_gbps(100)), 50.0));
    }
}
