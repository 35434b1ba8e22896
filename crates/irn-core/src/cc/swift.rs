//! Swift (Kumar et al., "Swift: Delay is Simple and Effective for Congestion Control in the
//! Datacenter", SIGCOMM 2020): a window-based controller that compares each ACK's RTT with a
//! target delay.
//!
//! # The rule (the paper's Algorithm 1 and §3.1–3.3)
//!
//! ```text
//! target = base_target + hops·hop_scaling + fs(cwnd)
//! fs(cwnd) = clamp(α/√cwnd + β', 0, fs_range),  α = fs_range / (1/√fs_min_cwnd − 1/√fs_max_cwnd),
//!                                               β' = −α/√fs_max_cwnd
//! on an ACK acknowledging n packets, with RTT delay:
//!   if delay < target:  cwnd += ai·n/cwnd   (cwnd ≥ 1)    or   cwnd += ai·n   (cwnd < 1)
//!   elif a decrease is allowed:  cwnd ×= max(1 − β·(delay − target)/delay, 1 − max_mdf)
//! on a loss (a NACK starting recovery, or a timeout), if a decrease is allowed:
//!   cwnd ×= 1 − max_mdf
//! a decrease is allowed once the last one is an RTT (the latest sample) old
//! cwnd clamped to [min_cwnd, max_cwnd]
//! cwnd < 1: one packet every RTT/cwnd (paced)
//! ```
//!
//! * The delay is the whole RTT the echoed timestamp gives (the paper separates fabric from
//!   host delay; irn's hosts add none).
//! * `hops` is the flow's path's switch count, set per flow from the topology (the paper reads
//!   it from the IP TTL of the ACK's data packet).
//! * Not modelled: the paper's reset of cwnd to `min_cwnd` after repeated timeouts
//!   (`RETX_RESET_THRESHOLD`), and separate fabric and endpoint windows.
//!
//! # Where the defaults come from
//!
//! The paper names its parameters (Algorithm 1, §3.5) without publishing the values Google
//! deploys. The defaults here are those of htsim's Swift (github Broadcom/csg-htsim,
//! `sim/swift.cpp`, `SwiftSrc`'s constructor), the public simulator model the Swift
//! comparisons of later work run, which marks most of them as its own estimates: ai = 1 packet,
//! β = 0.8, max_mdf = 0.5, fs_min_cwnd = 0.1 and fs_max_cwnd = 100 packets, and flow scaling's
//! range five times the base target (a scenario's `fs_range = "auto"`). Where this differs:
//!
//! * The base target: htsim's is a fixed 20 µs; scenarios here take the longest path's
//!   unloaded round trip (`base_target = "auto"`), which already counts every hop.
//! * `hop_scaling`: htsim adds the base target / 6.55 per hop on top of its fixed target; 0 here,
//!   since the base target already covers the longest path.
//! * `min_cwnd`: htsim's is 10 bytes; 0.001 packets here (a byte at the default MTU).
//! * The window in packets is ⌊cwnd⌋, at least 1; below 1 the sender paces at
//!   cwnd·MTU/RTT instead.

use super::AckEvent;
use crate::time::{Bandwidth, Duration, Time};

/// Swift's parameters; see the module documentation for where each default comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SwiftParams {
    /// The target delay of a path with no switch (and before flow scaling).
    pub base_target: Duration,
    /// Added to the target per switch on the flow's path.
    pub hop_scaling: Duration,
    /// The flow's switches (set per flow).
    pub hops: u32,
    /// The most flow scaling adds to the target (reached at `fs_min_cwnd`).
    pub fs_range: Duration,
    /// The window at which flow scaling is largest, packets. 0.1 (htsim).
    pub fs_min_cwnd: f64,
    /// The window at which flow scaling is 0, packets. 100 (htsim).
    pub fs_max_cwnd: f64,
    /// Additive increase per RTT, packets. 1 (htsim).
    pub ai: f64,
    /// β, the multiplicative decrease's gain on the relative excess delay. 0.8 (htsim).
    pub beta: f64,
    /// The most one decrease takes off the window, as a fraction. 0.5 (htsim).
    pub max_mdf: f64,
    /// The window never goes below this, packets.
    pub min_cwnd: f64,
    /// The window a flow starts with, packets; `None`: one base target's worth of line rate
    /// (a flow starts at line rate). The paper does not give one.
    pub initial_window: Option<u32>,
}

impl SwiftParams {
    /// Flow scaling's range as a multiple of the base target: 5 (htsim's `_fs_range`).
    pub const FS_RANGE_PER_BASE_TARGET: u64 = 5;
}

impl Default for SwiftParams {
    fn default() -> Self {
        SwiftParams {
            base_target: Duration::from_us(10),
            hop_scaling: Duration::ZERO,
            hops: 0,
            fs_range: Duration::from_us(50),
            fs_min_cwnd: 0.1,
            fs_max_cwnd: 100.0,
            ai: 1.0,
            beta: 0.8,
            max_mdf: 0.5,
            min_cwnd: 0.001,
            initial_window: None,
        }
    }
}

/// Swift for one queue pair.
#[derive(Debug, Clone)]
pub struct Swift {
    p: SwiftParams,
    /// Packets.
    cwnd: f64,
    /// Packets: the transport's window.
    max_cwnd: f64,
    /// Flow scaling's α and β', in picoseconds.
    fs_alpha: f64,
    fs_beta: f64,
    /// The latest RTT sample, ps; `None` before the first.
    rtt: Option<u64>,
    /// When the window was last cut.
    last_decrease: Option<Time>,
    /// Bits of a full packet on the wire, for the pacing rate below one packet.
    packet_bits: f64,
    /// The NIC's line rate.
    line: Bandwidth,
}

impl Swift {
    /// Swift on a NIC of `line_rate` with packets of `mtu` payload bytes, never above
    /// `max_window` packets (the transport's BDP cap or tracking window), starting at line rate:
    /// one base target's worth of packets (rounded up), within that.
    pub fn new(p: SwiftParams, line_rate: Bandwidth, max_window: u32, mtu: u32) -> Self {
        let range = p.fs_range.as_ps() as f64;
        let span = 1.0 / p.fs_min_cwnd.sqrt() - 1.0 / p.fs_max_cwnd.sqrt();
        let fs_alpha = if span > 0.0 { range / span } else { 0.0 };
        let max_cwnd = f64::from(max_window.max(1));
        let bdp = line_rate
            .bdp_bytes(p.base_target)
            .div_ceil(u64::from(mtu.max(1)));
        let start = p.initial_window.map_or(bdp as f64, f64::from);
        Swift {
            p,
            cwnd: start.clamp(1.0, max_cwnd),
            max_cwnd,
            fs_alpha,
            fs_beta: -fs_alpha / p.fs_max_cwnd.sqrt(),
            rtt: None,
            last_decrease: None,
            packet_bits: f64::from(mtu.max(1)) * 8.0,
            line: line_rate,
        }
    }

    /// The window in packets, fractional.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// The window the sender keeps in flight: ⌊cwnd⌋, at least 1.
    pub fn window(&self) -> u32 {
        (self.cwnd as u32).max(1)
    }

    /// The pacing rate below one packet per RTT (cwnd·MTU/RTT); line rate otherwise.
    pub fn rate(&self) -> Bandwidth {
        match self.rtt {
            Some(rtt) if self.cwnd < 1.0 => {
                let bps = self.cwnd * self.packet_bits * 1e12 / rtt.max(1) as f64;
                Bandwidth::from_bps((bps as u64).clamp(1, self.line.as_bps()))
            }
            _ => self.line,
        }
    }

    /// The target delay at the current window.
    pub fn target(&self) -> Duration {
        let fs = (self.fs_alpha / self.cwnd.sqrt() + self.fs_beta)
            .clamp(0.0, self.p.fs_range.as_ps() as f64);
        let base = self.p.base_target + self.p.hop_scaling * u64::from(self.p.hops);
        base + Duration::from_ps(fs as u64)
    }

    /// An ACK with an RTT sample: additive increase below the target, else a decrease at most
    /// once per RTT.
    pub fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        let Some(delay) = ack.rtt else {
            return;
        };
        self.rtt = Some(delay.as_ps());
        let target = self.target();
        let n = ack.newly_acked as f64;
        if delay < target {
            let step = if self.cwnd >= 1.0 {
                self.p.ai * n / self.cwnd
            } else {
                self.p.ai * n
            };
            self.set(self.cwnd + step);
        } else if self.may_decrease(now) {
            let d = delay.as_ps() as f64;
            let excess = (d - target.as_ps() as f64) / d;
            let factor = (1.0 - self.p.beta * excess).max(1.0 - self.p.max_mdf);
            self.decrease(now, factor);
        }
    }

    /// A loss: the largest decrease, at most once per RTT.
    pub fn on_loss(&mut self, now: Time) {
        if self.may_decrease(now) {
            self.decrease(now, 1.0 - self.p.max_mdf);
        }
    }

    fn may_decrease(&self, now: Time) -> bool {
        match (self.last_decrease, self.rtt) {
            (Some(last), Some(rtt)) => now.saturating_since(last).as_ps() >= rtt,
            _ => true,
        }
    }

    fn decrease(&mut self, now: Time, factor: f64) {
        self.set(self.cwnd * factor);
        self.last_decrease = Some(now);
    }

    fn set(&mut self, cwnd: f64) {
        self.cwnd = cwnd.clamp(self.p.min_cwnd.min(self.max_cwnd), self.max_cwnd);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 100 Gb/s, 1000-byte packets, base target 10 µs: starting at 125 packets' BDP, capped at
    /// the 100-packet window; no hop or flow scaling unless a test says.
    fn swift(p: SwiftParams) -> Swift {
        Swift::new(p, Bandwidth::from_gbps(100), 100, 1000)
    }

    fn flat() -> SwiftParams {
        SwiftParams {
            fs_range: Duration::ZERO,
            ..SwiftParams::default()
        }
    }

    fn ack(s: &mut Swift, at_us: u64, rtt_us: u64, acked: u64) {
        let event = AckEvent {
            newly_acked: acked,
            rtt: Some(Duration::from_us(rtt_us)),
            ..AckEvent::default()
        };
        s.on_ack(Time::from_ps(at_us * 1_000_000), &event);
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn the_target_adds_hop_and_flow_scaling() {
        let p = SwiftParams {
            hop_scaling: Duration::from_us(1),
            hops: 3,
            fs_range: Duration::from_us(10),
            ..SwiftParams::default()
        };
        // fs_range 10 µs between windows 0.1 and 100: α = 10 µs / (1/√0.1 − 1/√100)
        // = 10 / 3.0623 = 3.2655 µs, β' = −α/10. At cwnd 100, fs = 0: 10 + 3·1 = 13 µs.
        let mut s = swift(p);
        assert_eq!(s.target(), Duration::from_us(13));
        // At cwnd 1: fs = α − α/10 = 0.9·3.2655 = 2.939 µs.
        s.cwnd = 1.0;
        let alpha = 10e6 / (1.0 / 0.1f64.sqrt() - 0.1);
        let want = 13e6 + 0.9 * alpha;
        assert!(
            (s.target().as_ps() as f64 - want).abs() < 1.0,
            "{}",
            s.target()
        );
        // At cwnd 0.01 (below fs_min_cwnd), capped at fs_range: 23 µs.
        s.cwnd = 0.01;
        assert_eq!(s.target(), Duration::from_us(23));
    }

    #[test]
    fn the_window_starts_at_one_base_target_of_line_rate() {
        // 100 Gb/s × 10 µs = 125 000 B: 125 packets, capped at the transport's 100.
        assert!(close(swift(flat()).cwnd(), 100.0));
        let s = Swift::new(flat(), Bandwidth::from_gbps(100), 1000, 1000);
        assert!(close(s.cwnd(), 125.0));
        // 10 Gb/s: 12.5 packets, rounded up.
        let s = Swift::new(flat(), Bandwidth::from_gbps(10), 1000, 1000);
        assert!(close(s.cwnd(), 13.0));
        // A window of its own, within the transport's.
        for (set, want) in [(1, 1.0), (4, 4.0), (100, 100.0), (500, 100.0)] {
            let p = SwiftParams {
                initial_window: Some(set),
                ..flat()
            };
            assert!(close(swift(p).cwnd(), want), "{set}");
        }
    }

    #[test]
    fn below_the_target_the_window_grows_by_ai_per_window() {
        let mut s = swift(flat());
        s.cwnd = 50.0;
        // 5 packets acknowledged below the target: + 1·5/50.
        ack(&mut s, 1, 8, 5);
        assert!(close(s.cwnd(), 50.1));
        // Below one packet the step is ai per packet: 0.5 + 1·1 → 1.5.
        s.cwnd = 0.5;
        ack(&mut s, 2, 8, 1);
        assert!(close(s.cwnd(), 1.5));
        // Never above the initial window.
        s.cwnd = 99.99;
        ack(&mut s, 3, 8, 10);
        assert!(close(s.cwnd(), 100.0));
    }

    #[test]
    fn above_the_target_one_bounded_decrease_per_rtt() {
        let mut s = swift(flat());
        // RTT 20 µs against 10 µs: 1 − 0.8·(20 − 10)/20 = 0.6; 100 → 60.
        ack(&mut s, 100, 20, 1);
        assert!(close(s.cwnd(), 60.0));
        // 10 µs later, less than an RTT: no second cut.
        ack(&mut s, 110, 20, 1);
        assert!(close(s.cwnd(), 60.0));
        // RTT 100 µs, 30 µs after the cut: the new sample is the RTT, too soon again.
        ack(&mut s, 130, 100, 1);
        assert!(close(s.cwnd(), 60.0));
        // 100 µs after it: 1 − 0.8·0.9 = 0.28, bounded by max_mdf at 0.5: 30.
        ack(&mut s, 200, 100, 1);
        assert!(close(s.cwnd(), 30.0));
    }

    #[test]
    fn a_loss_cuts_by_max_mdf_once_per_rtt() {
        let mut s = swift(flat());
        ack(&mut s, 0, 8, 0);
        s.on_loss(Time::from_ps(1_000_000));
        assert!(close(s.cwnd(), 50.0));
        s.on_loss(Time::from_ps(2_000_000));
        assert!(close(s.cwnd(), 50.0), "within the 8 µs RTT");
        s.on_loss(Time::from_ps(9_000_000));
        assert!(close(s.cwnd(), 25.0));
    }

    #[test]
    fn below_one_packet_the_sender_paces() {
        let mut s = swift(flat());
        ack(&mut s, 0, 20, 0);
        assert_eq!((s.window(), s.rate()), (60, Bandwidth::from_gbps(100)));
        s.cwnd = 0.25;
        // One 1000-byte packet every 20 µs / 0.25 = 80 µs: 100 Mb/s.
        assert_eq!(s.window(), 1);
        assert_eq!(s.rate(), Bandwidth::from_bps(100_000_000));
        // The window never goes below min_cwnd.
        s.set(0.0);
        assert!(close(s.cwnd(), 0.001));
    }
}
