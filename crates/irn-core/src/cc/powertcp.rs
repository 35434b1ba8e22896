//! PowerTCP (Addanki, Michel and Schmid, "PowerTCP: Pushing the Performance Limits of
//! Datacenter Networks", NSDI 2022): a window- and rate-based controller that reacts to the
//! *power* of the most loaded hop, the product of its "current" (the rate bytes arrive at it:
//! the queue's gradient plus its transmission rate) and its "voltage" (its queue plus one
//! bandwidth-delay product), normalised by the power of a full link with an empty queue.
//! Two variants:
//!
//! * [`PowertcpVariant::Int`], the paper's PowerTCP, reads both from in-band network telemetry
//!   ([`super::int`]), as HPCC does ([`super::hpcc`]).
//! * [`PowertcpVariant::Theta`], the paper's θ-PowerTCP, needs no switch support: the RTT
//!   stands for the voltage and its gradient for the current, so its packets carry no INT.
//!
//! # The rule (the paper's Algorithm 1)
//!
//! ```text
//! on each ACK:
//!   INT, for each hop i (L = the records the previous ACK echoed, B_i its rate):
//!     Δt_i = ack.ts_i − L.ts_i
//!     λ_i  = (ack.qlen_i − L.qlen_i)/Δt_i + (ack.tx_i − L.tx_i)/Δt_i   (current: q̇ + txRate)
//!     λ_i  = max(λ_i, B_i/2)
//!     Γ_i  = λ_i · (ack.qlen_i + B_i·T) / (B_i²·T)                      (current × voltage)
//!   Γ, Δt = the largest Γ_i and its hop's Δt_i
//!   θ (from RTT samples; τ = the least RTT seen, at most T):
//!     Δt = the time since the previous sample
//!     λ  = max((rtt − previous rtt)/Δt + 1, 1/2)
//!     Γ  = λ · rtt / τ
//!   Δt = min(Δt, T)
//!   Γs = (Γs·(T − Δt) + Γ·Δt) / T                     (the smoothed normalised power)
//!   W  = γ·(Wc / (Γs/η) + β) + (1 − γ)·W
//!   once per RTT (the ACK acknowledges past snd_nxt of the last such update): Wc = W
//!   L = the ACK's records
//! pace at R = W / T, with at most W bytes in flight
//! ```
//!
//! W is clamped to [`min_rate`·T, B_nic·T], as HPCC's is. T is the base round trip
//! (`base_rtt`), B_nic the NIC's line rate; W starts at B_nic·T (flows start at line rate) and
//! Γs at 1.
//!
//! # Where each piece comes from
//!
//! The rule above is the paper's Algorithm 1: the normalised power, its smoothing over the
//! time the records span (at most one T), and the window update from the window of one RTT
//! before (Wc) blended with the current one by γ. What the paper leaves to its code follows the
//! authors' ns-3 models (github inet-tub/ns3-datacenter: `RdmaHw::UpdateRatePower` for RDMA,
//! `TcpAdvanced::UpdateRatePowertcp` and `UpdateRateThetaPowertcp` for TCP):
//!
//! * The floors on the current (B/2, and 1/2 for θ's normalised gradient), which bound one
//!   update's growth to about 2× (both models).
//! * η, the target: power is divided by η before it divides the window (both models, with the
//!   PowerTCP scripts' `TargetUtil` = 0.95). θ's normalised power cannot fall below 1 with an
//!   RTT at its minimum, so its target is above 1: the RDMA model divides by 1.05·τ, which is
//!   η = 1.05 here (the RTT may exceed its minimum by 5 %).
//! * γ: 0.9 for PowerTCP (paper and both models), 0.7 for θ (the RDMA model).
//! * β, the additive step: the RDMA model's 150 Mb/s, over T (the TCP model's default is
//!   50 Mb/s).
//! * ACKs between the once-per-RTT updates update W from Wc (the RDMA model's fast reaction);
//!   [`PowertcpParams::fast_react`] off ignores them. On for PowerTCP; off for θ, as the TCP
//!   model leaves θ's fast reaction out: between two ACKs a packet apart, one packet's
//!   serialization of RTT jitter is a gradient of ±1, and on an 8→1 incast per-ACK θ updates
//!   left the last flow at 1.7× line rate's completion time against 1.1× once per RTT. θ's
//!   gradient then spans one RTT.
//! * θ's τ: the least RTT sampled, starting from T (the RDMA model's `m_baseRtt`); the first
//!   sample only records.
//! * The first ACK of the INT variant only records L (there is nothing to take differences
//!   from), as HPCC's; a hop whose two records share a timestamp adds no rate terms.
//!
//! # ns-3 differences
//!
//! * The RDMA model blends with Wc, `γ·(Wc/(Γs/η) + β) + (1 − γ)·Wc`; the paper (and this)
//!   with the current W. With many ACKs per RTT, each moving W by γ = 0.9 of the way, the two
//!   differ by under (1 − γ) of one update.
//! * The RDMA model's current is the transmission rate alone, without the queue's gradient
//!   (its comment calls them the same); the TCP model and the paper add the gradient, as here.
//! * ns-3 quantizes the records (see [`super::int`]); here they are exact.

use super::int::{EchoedPath, IntHop};
use super::{AckEvent, Named};
use crate::time::{Bandwidth, Duration, Time};

/// Which PowerTCP runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PowertcpVariant {
    /// The paper's PowerTCP, from in-band telemetry.
    Int,
    /// θ-PowerTCP, from RTT samples alone.
    Theta,
}

impl Named for PowertcpVariant {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("int", PowertcpVariant::Int),
        ("theta", PowertcpVariant::Theta),
    ];
}

/// PowerTCP's parameters; see the module documentation for where each default comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PowertcpParams {
    pub variant: PowertcpVariant,
    /// η, the normalised power aimed at. 0.95 (INT: ns-3 `TargetUtil` in the authors' scripts);
    /// 1.05 (θ: the RDMA model's 1.05·τ).
    pub eta: f64,
    /// γ, the weight of the new window against the current one. 0.9 (INT: paper, ns-3); 0.7
    /// (θ: the RDMA model).
    pub gamma: f64,
    /// β in bytes; `None`: the RDMA model's 150 Mb/s over one base RTT.
    pub beta_bytes: Option<u64>,
    /// T, the base round trip. Scenarios set it from the topology (`base_rtt = "auto"`); 10 µs
    /// here.
    pub base_rtt: Duration,
    /// The rate never drops below this. 100 Mb/s (ns-3 `MinRate`).
    pub min_rate: Bandwidth,
    /// ACKs between once-per-RTT updates update W too. True for INT (the RDMA model's
    /// `FastReact`); false for θ (the TCP model's).
    pub fast_react: bool,
}

impl PowertcpParams {
    /// The RDMA model's additive step, bit/s.
    const BETA_RATE_BPS: f64 = 150e6;

    /// The defaults of `variant`.
    pub fn new(variant: PowertcpVariant) -> Self {
        let (eta, gamma) = match variant {
            PowertcpVariant::Int => (0.95, 0.9),
            PowertcpVariant::Theta => (1.05, 0.7),
        };
        PowertcpParams {
            variant,
            eta,
            gamma,
            beta_bytes: None,
            base_rtt: Duration::from_us(10),
            min_rate: Bandwidth::from_bps(100_000_000),
            fast_react: variant == PowertcpVariant::Int,
        }
    }

    /// β in bytes.
    pub fn beta(&self) -> f64 {
        match self.beta_bytes {
            Some(b) => b as f64,
            None => Self::BETA_RATE_BPS * self.base_rtt.as_ps() as f64 / 8e12,
        }
    }

    /// Whether the variant reads in-band telemetry.
    pub fn wants_int(&self) -> bool {
        self.variant == PowertcpVariant::Int
    }
}

impl Default for PowertcpParams {
    fn default() -> Self {
        PowertcpParams::new(PowertcpVariant::Int)
    }
}

/// θ's memory of the previous RTT sample.
#[derive(Debug, Clone, Copy)]
struct Sample {
    at_ps: f64,
    rtt_ps: f64,
}

/// PowerTCP for one queue pair (see the module documentation for the exact rules).
#[derive(Debug, Clone)]
pub struct Powertcp {
    p: PowertcpParams,
    /// T in picoseconds.
    t_ps: f64,
    /// β, bytes.
    beta: f64,
    /// The window's bounds, bytes: `min_rate`·T and B_nic·T.
    w_min: f64,
    w_max: f64,
    /// Payload bytes per packet, for the window in packets.
    mtu: f64,
    /// W and Wc, bytes.
    w: f64,
    wc: f64,
    /// Γs, the smoothed normalised power.
    power: f64,
    /// `snd_nxt` at the last once-per-RTT update; `None` before the first ACK.
    last_update: Option<u64>,
    /// θ: the previous sample, and τ, the least RTT seen (ps).
    prev: Option<Sample>,
    tau_ps: f64,
    /// INT: each hop's L and the records the ACK being handled echoes.
    path: EchoedPath,
}

impl Powertcp {
    /// PowerTCP on a NIC of `line_rate` sending packets of `mtu` payload bytes, starting at
    /// W = line rate × T.
    pub fn new(p: PowertcpParams, line_rate: Bandwidth, mtu: u32) -> Self {
        let t_ps = p.base_rtt.as_ps().max(1) as f64;
        let bytes = |rate: Bandwidth| rate.as_bps() as f64 * t_ps / 8e12;
        let w_max = bytes(line_rate);
        Powertcp {
            p,
            t_ps,
            beta: p.beta(),
            w_min: bytes(p.min_rate).min(w_max),
            w_max,
            mtu: f64::from(mtu.max(1)),
            w: w_max,
            wc: w_max,
            power: 1.0,
            last_update: None,
            prev: None,
            tau_ps: t_ps,
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

    /// Wc in bytes: the window of the last once-per-RTT update.
    pub fn reference_window(&self) -> f64 {
        self.wc
    }

    /// Γs, the smoothed normalised power.
    pub fn power(&self) -> f64 {
        self.power
    }

    /// The records the next ACK echoes (INT only; θ ignores them).
    pub fn on_telemetry(&mut self, hops: &[IntHop]) {
        self.path.hand_over(hops);
    }

    /// An ACK arrived: with the records [`on_telemetry`](Self::on_telemetry) handed over
    /// (INT), or its RTT sample (θ).
    pub fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        let n = self.path.take();
        let sample = match self.p.variant {
            PowertcpVariant::Int => None,
            PowertcpVariant::Theta => match ack.rtt {
                Some(rtt) => Some(rtt),
                None => return,
            },
        };
        let Some(last_update) = self.last_update else {
            self.last_update = Some(ack.nxt);
            self.path.remember(n);
            self.prev = sample.map(|rtt| self.record(now, rtt));
            return;
        };
        let per_rtt = ack.una > last_update;
        if !per_rtt && !self.p.fast_react {
            return;
        }
        let measured = match sample {
            None => self.int_power(n),
            Some(rtt) => self.theta_power(now, rtt),
        };
        if let Some((power, dt)) = measured {
            self.update(power, dt, per_rtt);
        }
        if per_rtt {
            self.last_update = Some(ack.nxt.max(last_update));
        }
    }

    /// The most loaded hop's normalised power and the time its records span (ps); L becomes
    /// the new records. `None` without records.
    fn int_power(&mut self, n: usize) -> Option<(f64, f64)> {
        let mut most: Option<(f64, f64)> = None;
        for i in 0..n {
            let (new, old) = self.path.hop(i);
            self.path.keep(i);
            let b = new.rate.as_bps().max(1) as f64;
            let dt = new.ts.as_ps().saturating_sub(old.ts.as_ps()) as f64;
            let current = match dt > 0.0 {
                true => {
                    let dq = new.qlen_bytes as f64 - old.qlen_bytes as f64;
                    let tx = new.tx_bytes.saturating_sub(old.tx_bytes) as f64;
                    (dq + tx) * 8e12 / dt
                }
                false => 0.0,
            };
            let voltage = new.qlen_bytes as f64 * 8.0 + b * self.t_ps / 1e12;
            let power = current.max(b / 2.0) * voltage / (b * b * self.t_ps / 1e12);
            if most.is_none_or(|(m, _)| power > m) {
                most = Some((power, dt));
            }
        }
        most
    }

    /// θ's normalised power from an RTT sample at `now`, and the time since the previous one.
    fn theta_power(&mut self, now: Time, rtt: Duration) -> Option<(f64, f64)> {
        let next = self.record(now, rtt);
        let prev = self.prev.replace(next)?;
        let dt = next.at_ps - prev.at_ps;
        let gradient = match dt > 0.0 {
            true => (next.rtt_ps - prev.rtt_ps) / dt,
            false => 0.0,
        };
        let current = (gradient + 1.0).max(0.5);
        Some((current * next.rtt_ps / self.tau_ps, dt))
    }

    /// θ: a sample, and τ lowered to it.
    fn record(&mut self, now: Time, rtt: Duration) -> Sample {
        let rtt_ps = rtt.as_ps().max(1) as f64;
        self.tau_ps = self.tau_ps.min(rtt_ps);
        Sample {
            at_ps: now.as_ps() as f64,
            rtt_ps,
        }
    }

    /// Smooths `power` measured over `dt` ps into Γs and sets W; Wc too `per_rtt`.
    fn update(&mut self, power: f64, dt: f64, per_rtt: bool) {
        let dt = dt.min(self.t_ps);
        self.power = (self.power * (self.t_ps - dt) + power * dt) / self.t_ps;
        let target = self.wc / (self.power / self.p.eta) + self.beta;
        let w = self.p.gamma * target + (1.0 - self.p.gamma) * self.w;
        self.w = w.clamp(self.w_min, self.w_max);
        if per_rtt {
            self.wc = self.w;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 100 Gb/s, T = 10 µs: W starts at B·T = 125 000 B; β = 500 B.
    fn powertcp(variant: PowertcpVariant) -> Powertcp {
        let p = PowertcpParams {
            beta_bytes: Some(500),
            ..PowertcpParams::new(variant)
        };
        Powertcp::new(p, Bandwidth::from_gbps(100), 1000)
    }

    /// B·T in bytes at 100 Gb/s and 10 µs.
    const BT: u64 = 125_000;

    /// A 100 Gb/s hop's record at `us` microseconds.
    fn rec(us: u64, tx_bytes: u64, qlen_bytes: u64) -> IntHop {
        IntHop {
            qlen_bytes,
            tx_bytes,
            ts: Time::from_ps(us * 1_000_000),
            rate: Bandwidth::from_gbps(100),
        }
    }

    fn ack(c: &mut Powertcp, hops: &[IntHop], una: u64, nxt: u64) {
        c.on_telemetry(hops);
        let event = AckEvent {
            una,
            nxt,
            ..AckEvent::default()
        };
        c.on_ack(Time::ZERO, &event);
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6 * b.abs().max(1.0)
    }

    #[test]
    fn defaults_name_their_sources() {
        let int = PowertcpParams::default();
        assert_eq!(
            (int.variant, int.eta, int.gamma),
            (PowertcpVariant::Int, 0.95, 0.9)
        );
        let theta = PowertcpParams::new(PowertcpVariant::Theta);
        assert_eq!((theta.eta, theta.gamma), (1.05, 0.7));
        assert!(int.fast_react && !theta.fast_react);
        // 150 Mb/s over 10 µs: 187.5 B.
        assert!(close(int.beta(), 187.5));
        assert!(int.wants_int() && !theta.wants_int());
    }

    #[test]
    fn a_full_link_with_an_empty_queue_has_power_one() {
        let mut c = powertcp(PowertcpVariant::Int);
        ack(&mut c, &[rec(0, 0, 0)], 0, 1);
        assert_eq!(c.window_bytes(), 125_000.0, "the first ACK only records");
        // T later, B·T sent, no queue: current B, voltage B·T, Γ = 1, and Γs = 1 (Δt = T).
        // W = 0.9·(125 000·0.95/1 + 500) + 0.1·125 000 = 119 825.
        ack(&mut c, &[rec(10, BT, 0)], 2, 3);
        assert!(close(c.power(), 1.0));
        assert!(close(c.window_bytes(), 119_825.0), "{}", c.window_bytes());
        assert!(close(c.reference_window(), 119_825.0));
        assert_eq!(c.window(), 120);
        assert_eq!(
            c.rate().as_bps(),
            (119_825.0f64 * 8.0 / 10e-6).round() as u64
        );
    }

    #[test]
    fn a_growing_queue_adds_its_gradient_to_the_current_and_itself_to_the_voltage() {
        let mut c = powertcp(PowertcpVariant::Int);
        ack(&mut c, &[rec(0, 0, 0)], 0, 1);
        // T later: B·T sent (txRate = B) and the queue grew 0 → 25 000 B (q̇ = 0.2·B):
        // current 1.2·B; voltage 25 000 + 125 000 B = 1.2·B·T. Γ = 1.44.
        ack(&mut c, &[rec(10, BT, 25_000)], 2, 3);
        assert!(close(c.power(), 1.44));
        let w = 0.9 * (125_000.0 * 0.95 / 1.44 + 500.0) + 0.1 * 125_000.0;
        assert!(close(c.window_bytes(), w), "{}", c.window_bytes());
        // A draining queue (25 000 → 0 B over T with B·T sent) lowers the current to 0.8·B,
        // and the voltage is one B·T: Γ = 0.8.
        ack(&mut c, &[rec(20, 2 * BT, 0)], 4, 5);
        assert!(close(c.power(), 0.8));
    }

    #[test]
    fn records_closer_than_t_move_the_smoothed_power_by_their_share_of_t() {
        let mut c = powertcp(PowertcpVariant::Int);
        ack(&mut c, &[rec(0, 0, 0)], 0, 1);
        // 1 µs (T/10): 2·B worth sent, no queue: Γ = 2. Γs = 0.9·1 + 0.1·2 = 1.1.
        ack(&mut c, &[rec(1, BT / 5, 0)], 2, 3);
        assert!(close(c.power(), 1.1));
        let w = 0.9 * (125_000.0 * 0.95 / 1.1 + 500.0) + 0.1 * 125_000.0;
        assert!(close(c.window_bytes(), w));
    }

    /// (Δtx over T, queue, ACK within the RTT?, W after, Wc after), records T apart.
    type Row = (u64, u64, bool, f64, f64);

    fn run_table(rows: &[Row]) {
        let mut c = powertcp(PowertcpVariant::Int);
        ack(&mut c, &[rec(0, 0, 0)], 0, 1);
        let (mut una, mut nxt, mut tx) = (1, 1, 0);
        for (k, &(sent, qlen, within, w, wc)) in rows.iter().enumerate() {
            if !within {
                una = nxt + 1;
                nxt = una + 10;
            }
            tx += sent;
            ack(&mut c, &[rec(10 * (k as u64 + 1), tx, qlen)], una, nxt);
            let got = (c.window_bytes(), c.reference_window());
            assert!(close(got.0, w), "row {k}: W {} ≠ {w}", got.0);
            assert!(close(got.1, wc), "row {k}: Wc {} ≠ {wc}", got.1);
        }
    }

    #[test]
    fn the_window_blends_the_last_rtts_window_over_power_with_the_current_one() {
        // Row 0: 2·B: Γ = 2. 0.9·(125 000·0.95/2 + 500) + 0.1·125 000 = 66 387.5, kept as Wc.
        // Row 1: an idle link (0.1·B) counts as B/2: Γ = 0.5.
        //   0.9·(66 387.5·0.95/0.5 + 500) + 0.1·66 387.5 = 120 611.375.
        // Rows 2–3, within the RTT, Γ = 1: X = 120 611.375·0.95 + 500 = 115 080.806 25 from
        //   Wc each time, blended with the moving W: 0.9·X + 0.1·120 611.375 = 115 633.863 125,
        //   then 0.9·X + 0.1·115 633.863 125 = 115 136.111 937 5; Wc stays.
        let rows: &[Row] = &[
            (2 * BT, 0, false, 66_387.5, 66_387.5),
            (BT / 10, 0, false, 120_611.375, 120_611.375),
            (BT, 0, true, 115_633.863_125, 120_611.375),
            (BT, 0, true, 115_136.111_937_5, 120_611.375),
        ];
        run_table(rows);
    }

    #[test]
    fn the_most_powerful_hop_decides_and_the_window_stays_within_its_bounds() {
        let mut c = powertcp(PowertcpVariant::Int);
        ack(&mut c, &[rec(0, 0, 0), rec(0, 0, 0)], 0, 1);
        // Hop 0 at B: Γ = 1; hop 1 at 10·B with no queue: Γ = 10.
        // 0.9·(125 000·0.95/10 + 500) + 0.1·125 000 = 23 637.5.
        ack(&mut c, &[rec(10, BT, 0), rec(10, 10 * BT, 0)], 2, 3);
        assert!(close(c.power(), 10.0));
        assert!(close(c.window_bytes(), 23_637.5));
        // Idle hops: Γ = 0.5 (the floor) lets W grow, but never past B·T.
        for k in 2..6 {
            ack(
                &mut c,
                &[rec(10 * k, BT, 0), rec(10 * k, 10 * BT, 0)],
                2 * k,
                2 * k + 1,
            );
        }
        assert_eq!(c.window_bytes(), 125_000.0);
        // And never below min_rate·T = 125 B: a thousand-fold power without β takes W to
        // about a tenth each RTT (the (1 − γ)·W term), down to the floor.
        let p = PowertcpParams {
            beta_bytes: Some(0),
            ..PowertcpParams::default()
        };
        let mut c = Powertcp::new(p, Bandwidth::from_gbps(100), 1000);
        ack(&mut c, &[rec(0, 0, 0)], 0, 1);
        ack(&mut c, &[rec(10, 1000 * BT, 0)], 2, 3);
        assert!(close(c.window_bytes(), 0.9 * 118.75 + 12_500.0));
        for k in 2..6 {
            ack(&mut c, &[rec(10 * k, 1000 * k * BT, 0)], 2 * k, 2 * k + 1);
        }
        assert_eq!((c.window_bytes(), c.window()), (125.0, 1));
    }

    #[test]
    fn without_fast_react_acks_within_the_rtt_change_nothing() {
        let p = PowertcpParams {
            fast_react: false,
            beta_bytes: Some(500),
            ..PowertcpParams::default()
        };
        let mut c = Powertcp::new(p, Bandwidth::from_gbps(100), 1000);
        ack(&mut c, &[rec(0, 0, 0)], 0, 10);
        ack(&mut c, &[rec(10, 2 * BT, 0)], 5, 12);
        assert_eq!(c.window_bytes(), 125_000.0);
        ack(&mut c, &[rec(10, 2 * BT, 0)], 11, 20);
        assert!(close(c.window_bytes(), 66_387.5));
    }

    fn theta_ack(c: &mut Powertcp, at_us: u64, rtt_us: u64, una: u64) {
        let event = AckEvent {
            rtt: Some(Duration::from_us(rtt_us)),
            una,
            nxt: una,
            ..AckEvent::default()
        };
        c.on_ack(Time::from_ps(at_us * 1_000_000), &event);
    }

    #[test]
    fn theta_takes_power_from_the_rtt_and_its_gradient() {
        let mut c = powertcp(PowertcpVariant::Theta);
        // Each ACK past the previous one's snd_nxt: every update is once-per-RTT (Wc = W).
        theta_ack(&mut c, 0, 10, 1);
        assert_eq!(c.window_bytes(), 125_000.0, "the first sample only records");
        // Flat at τ = T = 10 µs, 1 µs apart: current 1, Γ = 1, Γs = 1; W wants
        // 125 000·1.05 + 500: held at line rate.
        theta_ack(&mut c, 1, 10, 2);
        assert!(close(c.power(), 1.0));
        assert_eq!(c.window_bytes(), 125_000.0);
        // RTT 12 µs, 2 µs more over 1 µs: current 3, Γ = 3·12/10 = 3.6;
        // Γs = (1·9 + 3.6·1)/10 = 1.26. W = 0.7·(125 000·1.05/1.26 + 500) + 0.3·125 000.
        theta_ack(&mut c, 2, 12, 3);
        assert!(close(c.power(), 1.26));
        let w1 = 0.7 * (125_000.0 * 1.05 / 1.26 + 500.0) + 0.3 * 125_000.0;
        assert!(close(c.window_bytes(), w1));
        // RTT 11 µs: gradient −1, current 0 floored at 1/2; Γ = 0.5·11/10 = 0.55;
        // Γs = (1.26·9 + 0.55)/10 = 1.189.
        theta_ack(&mut c, 3, 11, 4);
        assert!(close(c.power(), 1.189));
        let w2 = 0.7 * (w1 * 1.05 / 1.189 + 500.0) + 0.3 * w1;
        assert!(close(c.window_bytes(), w2));
        // RTT 8 µs, below T: τ becomes 8 µs. Current floored at 1/2: Γ = 0.5·8/8 = 0.5;
        // Γs = (1.189·9 + 0.5)/10 = 1.1201.
        theta_ack(&mut c, 4, 8, 5);
        assert!(close(c.power(), 1.1201));
    }

    #[test]
    fn theta_ignores_telemetry_and_acks_without_an_rtt_sample() {
        let mut c = powertcp(PowertcpVariant::Theta);
        theta_ack(&mut c, 0, 10, 1);
        // Records that would mean Γ = 10 to the INT variant change nothing.
        c.on_telemetry(&[rec(0, 0, 0)]);
        c.on_telemetry(&[rec(10, 10 * BT, 0)]);
        let event = AckEvent {
            una: 2,
            nxt: 2,
            ..AckEvent::default()
        };
        c.on_ack(Time::from_ps(1_000_000), &event);
        assert_eq!((c.power(), c.window_bytes()), (1.0, 125_000.0));
        theta_ack(&mut c, 1, 10, 3);
        assert_eq!((c.power(), c.window_bytes()), (1.0, 125_000.0));
    }
}
