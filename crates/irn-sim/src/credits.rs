//! InfiniBand link-level credit flow control (IBA vol. 1 §7.9, as the NRL slides' backup
//! summarizes it), an alternative to PFC (`[switch] credits = true`).
//!
//! A switch input's buffer is counted in 64-byte *blocks*. Per link:
//!
//! - the **sender** keeps FCTBS, the blocks it has sent, and the last FCCL, the credit limit it
//!   received; it starts a data packet of `b` blocks only if `(FCCL − (FCTBS + b)) mod M ≤ M/2`
//!   (the limit is ahead of what would have been sent);
//! - the **receiver** keeps ABR, the blocks it has received, and advertises
//!   `FCCL = ABR + min(free blocks, window)` in *flow-control packets*, which also carry the
//!   port's own FCTBS, from which the far end resynchronizes its ABR (`ABR := FCTBS`).
//!
//! Counters are `counter_bits` wide, modulo `M = 2^counter_bits`: 12 bits, modulo 4096, in the
//! standard, whose window is 2,048 blocks (128 KiB). A window caps a link at one window per round
//! trip (credit travels back a link delay after the data that used it): 128 KiB per round trip
//! is 105 Gb/s over a 10 µs round trip but 1 Gb/s over 1 ms, which is why the slides say IB
//! needs adjusting for the WAN. irn lets the window grow with the counters (`counter_bits` up
//! to 24, the window at most half the modulus, so the comparison above stays unambiguous).
//!
//! Since every limit is what the receiver had room for when it sent it, and the link delivers
//! in order, an input never receives more than its buffer holds: no packet is dropped for lack
//! of buffer. irn's choices:
//!
//! - A port starts a data packet only while its credit covers the largest data frame of the run
//!   (so it may wait with credit for a smaller one; nearly every data packet is full-size). A
//!   port waiting for credit counts as paused (`paused_time_us`, the pause fractions).
//! - Links into switch inputs are credit-limited, from switches and NICs alike; links into hosts
//!   are not (NIC receive buffers are modelled as infinite). Control packets (ACK, NACK, CNP)
//!   are not credit-limited: they travel in a separate class, as under PFC.
//! - Flow-control packets are 64 B control frames that take no data bandwidth (like PAUSE
//!   frames here) but leave after the packet being serialized, so each carries the FCTBS of
//!   exactly the packets ahead of it. Every port sends one every `interval` (by default the
//!   time to send a whole window at its link's rate: the longest the standard allows; 10.5 µs
//!   at 100 Gb/s), and a switch input sends one as soon as the credit it could grant has grown
//!   by `update_blocks` since its last (credit freed by packets leaving it).
//! - The WAN variant is the same with a shorter `interval` and a wider window.
//!
//! **The slides' rule for long links** ([`CreditRule::PauseEquivalent`]): "sending a certain
//! number of credits is equivalent to sending the max size pause minus that number of
//! credits". One pause quantum is 512 bit times, 64 bytes at any rate: exactly one block. So
//! a long link's receiving input, every interval of its `[[pause_control]]` rule, computes the
//! PAUSE that rule would send (`p` quanta, 0 if none) and grants instead
//! [`pause_equivalent_grant`]: the interval's quanta minus `p`, in blocks, the data the sender
//! could send in the un-paused part of the interval. The grant is not the buffer's free space
//! (the slides: "not strictly equal to buffer available"): it is a byte allowance that
//! *replaces* the sender's previous one, as a newer PAUSE replaces the running timer, so
//! credit the sender did not use in one interval is not saved for the next. No counter wraps
//! (a grant is at most 65,535 blocks, the interval being at most the longest pause), so the
//! window does not cap the link: a link under this rule carries up to its line rate at any
//! round trip. Like pause control, it is lossless only with the buffer the rule needs: with
//! on-off, the threshold plus rate × (round trip + interval), see `crate::pause` control.

use irn_core::{Bandwidth, Duration};

use crate::pause::{PauseFrame, MAX_QUANTA, QUANTUM_BITS};

/// Bytes in a credit block.
pub const BLOCK_BYTES: u64 = 64;

/// The standard's counter width (FCTBS, FCCL, ABR).
pub const STANDARD_COUNTER_BITS: u8 = 12;

/// The standard's window: half the 12-bit modulus, 2,048 blocks (128 KiB).
pub const STANDARD_WINDOW_BLOCKS: u32 = 2048;

/// The widest counters irn allows: a counter travels in three bytes of an event.
pub const MAX_COUNTER_BITS: u8 = 24;

/// Blocks a packet of `bytes` occupies (rounded up).
pub fn blocks(bytes: u64) -> u32 {
    u32::try_from(bytes.div_ceil(BLOCK_BYTES)).unwrap_or(u32::MAX)
}

/// Whole free blocks in `bytes` of free buffer (rounded down).
pub fn free_blocks(bytes: u64) -> u32 {
    u32::try_from(bytes / BLOCK_BYTES).unwrap_or(u32::MAX)
}

/// `[switch] credits`, resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreditConfig {
    /// The most credit a receiver grants beyond what it has received, in blocks.
    pub window_blocks: u32,
    pub counter_bits: u8,
    /// How often every port sends a flow-control packet; `None`: the time to send a window at
    /// the port's rate.
    pub interval: Option<Duration>,
    /// A switch input sends a flow-control packet as soon as the limit it could advertise is this
    /// many blocks past the last one it sent.
    pub update_blocks: u32,
    /// How the inputs under a `[[pause_control]]` rule grant credit; every other input grants
    /// the standard way.
    pub rule: CreditRule,
}

/// `[switch] credit_rule`: how long links' receiving inputs grant credit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CreditRule {
    /// Every input grants `ABR + min(free, window)` (IBA); `[[pause_control]]` is refused.
    #[default]
    Standard,
    /// The inputs `[[pause_control]]` selects grant, every interval of their rule, the
    /// interval's quanta minus the PAUSE the rule would send, as a byte allowance
    /// ([`pause_equivalent_grant`]); the other inputs grant the standard way.
    PauseEquivalent,
}

/// The slides' credit for one interval of `interval_quanta` pause quanta (one quantum is one
/// 64-byte block): the part of the interval the PAUSE `pause` would not cover, in blocks.
/// No PAUSE grants the whole interval; a PAUSE as long as the interval or longer grants none.
pub fn pause_equivalent_grant(interval_quanta: u16, pause: Option<PauseFrame>) -> u16 {
    match pause {
        None => interval_quanta,
        Some(PauseFrame::Quanta(q)) => interval_quanta.saturating_sub(q),
        Some(PauseFrame::Xoff) => 0,
    }
}

/// Whole pause quanta (64-byte blocks) a link of `rate` sends in `interval`, at most
/// [`MAX_QUANTA`] (the scenario keeps an interval at most the longest pause).
pub fn interval_quanta(rate: Bandwidth, interval: Duration) -> u16 {
    // ps × bits/s / (512 × 10^12 ps/s), rounded down.
    let bits = u128::from(interval.as_ps()) * u128::from(rate.as_bps());
    let per_quantum = u128::from(QUANTUM_BITS) * 1_000_000_000_000;
    u16::try_from(bits / per_quantum).unwrap_or(MAX_QUANTA)
}

impl Default for CreditConfig {
    /// The standard: 12-bit counters, a 2,048-block window, packets every window time; an
    /// update whenever 64 blocks (4 KiB, about four full frames) are freed.
    fn default() -> Self {
        CreditConfig {
            window_blocks: STANDARD_WINDOW_BLOCKS,
            counter_bits: STANDARD_COUNTER_BITS,
            interval: None,
            update_blocks: 64,
            rule: CreditRule::Standard,
        }
    }
}

impl CreditConfig {
    /// The counters' arithmetic.
    pub fn counters(&self) -> Counters {
        Counters::new(self.counter_bits)
    }

    /// How often a port on a link of `rate` sends flow-control packets.
    pub fn interval_at(&self, rate: Bandwidth) -> Duration {
        self.interval
            .unwrap_or_else(|| rate.serialization(u64::from(self.window_blocks) * BLOCK_BYTES))
    }
}

/// InfiniBand flow-control timing at a data rate: the NRL slides' table "InfiniBand
/// Equivalent" (bit time, flow control block time, max send time) and the flow-control
/// packets per second it implies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowControlTiming {
    pub bit_ps: f64,
    /// One 64-byte credit block on the wire.
    pub block_ns: f64,
    /// A window of credit on the wire: the longest a sender can go on one grant, so the
    /// longest interval between flow-control packets that keeps a link busy.
    pub window_us: f64,
    /// Flow-control packets per second at one per window time.
    pub packets_per_s: f64,
}

/// [`FlowControlTiming`] at `rate` with a window of `window_blocks` (the standard's 2,048).
pub fn flow_control_timing(rate: Bandwidth, window_blocks: u32) -> FlowControlTiming {
    let bit_s = 1.0 / rate.as_bps() as f64;
    let block_s = bit_s * (BLOCK_BYTES * 8) as f64;
    let window_s = block_s * f64::from(window_blocks);
    FlowControlTiming {
        bit_ps: bit_s * 1e12,
        block_ns: block_s * 1e9,
        window_us: window_s * 1e6,
        packets_per_s: 1.0 / window_s,
    }
}

/// Counters modulo `2^bits`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counters {
    mask: u32,
}

impl Counters {
    /// # Panics
    /// Unless `1 <= bits <= 24` (the scenario checks it).
    pub fn new(bits: u8) -> Self {
        assert!(
            (1..=MAX_COUNTER_BITS).contains(&bits),
            "{bits} counter bits"
        );
        Counters {
            mask: (1u32 << bits) - 1,
        }
    }

    /// `a + b` modulo the counters' modulus.
    pub fn add(self, a: u32, b: u32) -> u32 {
        a.wrapping_add(b) & self.mask
    }

    /// `a − b` modulo the counters' modulus.
    pub fn sub(self, a: u32, b: u32) -> u32 {
        a.wrapping_sub(b) & self.mask
    }

    /// Half the modulus: 2,048 for 12 bits.
    pub fn half(self) -> u32 {
        self.mask / 2 + 1
    }

    /// The sender's rule: a packet of `blocks` may start after `fctbs` blocks sent under the limit
    /// `fccl` if `(FCCL − (FCTBS + blocks)) mod M ≤ M/2`.
    pub fn may_send(self, fccl: u32, fctbs: u32, blocks: u32) -> bool {
        self.sub(fccl, self.add(fctbs, blocks)) <= self.half()
    }

    /// The receiver's limit: `ABR + min(free blocks, window)`.
    pub fn limit(self, abr: u32, free_blocks: u32, window_blocks: u32) -> u32 {
        self.add(abr, free_blocks.min(window_blocks))
    }
}

/// A counter as a flow-control packet carries it: three bytes, so the packet fits in an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wire([u8; 3]);

impl Wire {
    pub fn new(counter: u32) -> Self {
        debug_assert!(counter < 1 << MAX_COUNTER_BITS);
        let [a, b, c, _] = counter.to_le_bytes();
        Wire([a, b, c])
    }

    pub fn get(self) -> u32 {
        let [a, b, c] = self.0;
        u32::from_le_bytes([a, b, c, 0])
    }
}

/// One credit-limited link: the sender's counters and the receiver's.
#[derive(Debug, Clone, Copy, Default)]
pub struct CreditLink {
    /// Sender: flow control total blocks sent.
    pub fctbs: u32,
    /// Sender: the last credit limit received.
    pub fccl: u32,
    /// Receiver: adjusted blocks received.
    pub abr: u32,
    /// Receiver: the last limit it sent.
    pub advertised: u32,
    /// Sender under the pause-equivalent rule: the blocks it may still send, until the next
    /// grant replaces them.
    pub allowance: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    #[test]
    fn the_standard_rule_at_the_wrap() {
        let c = Counters::new(12);
        assert_eq!(c.half(), 2048);
        // (FCCL, FCTBS, blocks, may send)
        let cases = [
            (100, 0, 100, true),     // exactly up to the limit
            (100, 0, 101, false),    // one block past it
            (5, 4090, 11, true),     // limit wrapped past 0: 4090 + 11 = 4101 ≡ 5
            (5, 4090, 12, false),    // 4102 ≡ 6 is past 5
            (2048, 0, 0, true),      // a full window ahead
            (0, 4095, 1, true),      // FCTBS + 1 wraps onto the limit
            (4095, 4095, 1, false),  // no credit at all
            (1000, 3100, 17, true),  // limit 1996 blocks ahead, across the wrap
            (1000, 3000, 17, false), // 2096 "ahead" is more than half: read as behind
            (3000, 1000, 17, true),  // limit 1983 ahead
            (3000, 3100, 17, false), // sent past the limit: never allowed
        ];
        for (fccl, fctbs, b, want) in cases {
            assert_eq!(c.may_send(fccl, fctbs, b), want, "{fccl} {fctbs} {b}");
        }
        assert_eq!(c.limit(4000, 300, 2048), 204);
        assert_eq!(c.limit(4000, 5000, 2048), (4000 + 2048) % 4096);
    }

    #[test]
    fn blocks_round_the_right_way_and_wire_counters_round_trip() {
        assert_eq!((blocks(64), blocks(65), blocks(1086)), (1, 2, 17));
        assert_eq!((free_blocks(63), free_blocks(30_000)), (0, 468));
        for v in [0, 1, 4095, 0xAB_CDEF, (1 << 24) - 1] {
            assert_eq!(Wire::new(v).get(), v);
        }
    }

    #[test]
    fn the_default_interval_is_a_window_at_the_rate() {
        let cfg = CreditConfig::default();
        // 131,072 B at 100 Gb/s: 10.49 µs.
        let t = cfg.interval_at(Bandwidth::from_gbps(100));
        assert_eq!(t.as_ps(), 10_485_760);
    }

    /// The slides' table at SDR to EDR (their data rates), to the three digits they print. Their
    /// flow control block times at DDR and QDR (0.5 ns, 0.25 ns) are typos for 32 ns and 16 ns
    /// (64 B at 16 and 32 Gb/s; the max send times they print, 2,048 blocks, agree), and the
    /// max send time is a standard window, 2,048 blocks (2^11, half the 12-bit modulus), not
    /// the `symbol × 2^12` of their heading.
    #[test]
    fn the_slides_infiniband_table() {
        // (name, Gb/s, bit time ps, block ns, max send µs)
        let rows = [
            ("SDR", 8.0, 125.0, 64.0, 131.0),
            ("DDR", 16.0, 62.5, 32.0, 65.5),
            ("QDR", 32.0, 31.25, 16.0, 32.8),
            ("FDR", 54.3, 18.4, 9.43, 19.3),
            ("EDR", 108.6, 9.2, 4.71, 9.65),
        ];
        // Three significant digits.
        let close = |got: f64, want: f64| (got - want).abs() <= want * 0.005;
        for (name, gbps, bit, block, send) in rows {
            let rate = Bandwidth::from_bps((gbps * 1e9) as u64);
            let t = flow_control_timing(rate, STANDARD_WINDOW_BLOCKS);
            assert!(close(t.bit_ps, bit), "{name}: {t:?}");
            assert!(close(t.block_ns, block), "{name}: {t:?}");
            assert!(close(t.window_us, send), "{name}: {t:?}");
        }
        // "About 104K Flow Control Packets/second for EDR".
        let edr = flow_control_timing(Bandwidth::from_bps(108_600_000_000), 2048);
        assert!(
            (103_000.0..104_500.0).contains(&edr.packets_per_s),
            "{edr:?}"
        );
    }

    /// One quantum is one block, and the grant is the interval's un-paused part: at 100 Gb/s
    /// the longest pause (335.5 µs) is 65,535 blocks, 4,194,240 B.
    #[test]
    fn a_pause_equivalent_grant_is_the_interval_a_pause_would_not_cover() {
        assert_eq!(QUANTUM_BITS / 8, BLOCK_BYTES);
        let rate = Bandwidth::from_gbps(100);
        let longest = crate::pause::quanta_time(rate, MAX_QUANTA);
        assert_eq!(interval_quanta(rate, longest), MAX_QUANTA);
        assert_eq!(interval_quanta(rate, Duration::from_us(100)), 19_531);
        assert_eq!(interval_quanta(rate, Duration::from_ms(1)), MAX_QUANTA);
        // (interval quanta, pause, grant)
        let cases = [
            (MAX_QUANTA, None, MAX_QUANTA),
            (MAX_QUANTA, Some(PauseFrame::Quanta(MAX_QUANTA)), 0),
            (MAX_QUANTA, Some(PauseFrame::Quanta(3277)), 62_258),
            (19_531, Some(PauseFrame::Quanta(32_768)), 0),
            (19_531, Some(PauseFrame::Quanta(531)), 19_000),
            (19_531, Some(PauseFrame::Xoff), 0),
        ];
        for (interval, pause, want) in cases {
            assert_eq!(pause_equivalent_grant(interval, pause), want, "{pause:?}");
        }
    }

    /// One link in a proptest: a sender with endless packets of random sizes, a FIFO link, a
    /// receiver buffer drained at random, flow-control packets sent and delivered at random
    /// (in order). Unwrapped totals stand beside the wrapped counters.
    struct Link {
        c: Counters,
        window: u32,
        capacity: u32,
        state: CreditLink,
        /// Data in flight (blocks), and flow-control packets in flight (FCCL).
        data: VecDeque<u32>,
        credit: VecDeque<u32>,
        buffered: u32,
        sent: u64,
        received: u64,
    }

    impl Link {
        fn new(bits: u8, window: u32, capacity: u32) -> Self {
            let c = Counters::new(bits);
            let fccl = c.limit(0, capacity, window);
            Link {
                c,
                window,
                capacity,
                state: CreditLink {
                    fccl,
                    advertised: fccl,
                    ..CreditLink::default()
                },
                data: VecDeque::new(),
                credit: VecDeque::new(),
                buffered: 0,
                sent: 0,
                received: 0,
            }
        }

        fn step(&mut self, op: u8, arg: u32) {
            let s = &mut self.state;
            match op {
                0 => {
                    let b = arg % 40 + 1;
                    if self.c.may_send(s.fccl, s.fctbs, b) {
                        s.fctbs = self.c.add(s.fctbs, b);
                        self.sent += u64::from(b);
                        self.data.push_back(b);
                    }
                }
                1 => {
                    if let Some(b) = self.data.pop_front() {
                        s.abr = self.c.add(s.abr, b);
                        self.received += u64::from(b);
                        self.buffered += b;
                    }
                }
                2 => self.buffered -= self.buffered.min(arg % 64),
                3 => {
                    let free = self.capacity.saturating_sub(self.buffered);
                    s.advertised = self.c.limit(s.abr, free, self.window);
                    self.credit.push_back(s.advertised);
                }
                _ => {
                    if let Some(fccl) = self.credit.pop_front() {
                        s.fccl = fccl;
                    }
                }
            }
        }

        fn check(&self) {
            let in_flight: u32 = self.data.iter().sum();
            assert!(self.buffered <= self.capacity, "overflow");
            assert!(
                self.buffered + in_flight <= self.capacity,
                "sent past the limit"
            );
            let m = u64::from(self.c.mask) + 1;
            assert_eq!(u64::from(self.state.fctbs), self.sent % m);
            assert_eq!(u64::from(self.state.abr), self.received % m);
            // The sender is never more than a window short of the limit, nor past it.
            let ahead = self.c.sub(self.state.fccl, self.state.fctbs);
            assert!(ahead <= self.window, "{ahead} ahead");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Over random traffic that wraps the counters many times, the receiver's buffer never
        /// overflows: the sender never sends beyond the limit, counters wrap modulo 2^bits.
        #[test]
        fn never_beyond_the_credit_limit(
            bits in 8u8..=16,
            window_frac in 1u32..=64,
            capacity in 40u32..3000,
            ops in proptest::collection::vec((0u8..5, any::<u32>()), 1..4000),
        ) {
            let c = Counters::new(bits);
            let window = (c.half() * window_frac / 64).max(40);
            prop_assume!(window <= c.half());
            let mut link = Link::new(bits, window, capacity);
            for (op, arg) in ops {
                link.step(op, arg);
                link.check();
            }
        }
    }

    /// The property above wraps 12-bit counters: a long run of full exchanges moves far more
    /// than 4096 blocks, and every packet sent fits.
    #[test]
    fn twelve_bit_counters_wrap_many_times() {
        let mut link = Link::new(12, 2048, 500);
        for i in 0..20_000u32 {
            for op in 0..5 {
                link.step(op, i);
                link.check();
            }
        }
        assert!(link.sent > 10 * 4096, "{}", link.sent);
    }
}
