//! Property tests of Eunomia's ordering layer: connections whose packets arrive permuted within
//! a reordering window, duplicated, and — when the receiver NACKs them — retransmitted a little
//! later, as the sender's recovery would (§3.2.2).
//!
//! For every random run, each connection's checks, TigerBeetle-style:
//! - safety: every PSN is reported to the application exactly once, in order, and only after it
//!   arrived; the completion comes once, last, with the connection's length; SACKs only for
//!   packets ahead of the expected one;
//! - memory: a connection never holds more than `cap / block` blocks; the pool's count is the
//!   sum of the connections' and never exceeds the pool; everything is back in the pool, with no
//!   state record open, once the connections complete;
//! - no needless NACK: a packet is NACKed only when it lies beyond the bitmap's reach (the cap
//!   counted from its base) or the pool lacks the blocks the cap would still allow, and never
//!   when it is less than one block ahead of the expected PSN with those blocks free;
//! - liveness: every connection completes within a bound.
//!
//! A failure prints the proptest seed and the scenario; rerun it with the persisted regression
//! file.

use std::collections::VecDeque;

use irn_core::ordering::{
    Acknowledgment, DataPacket, Delivery, MemoryController, OrderingConfig, ReceiverAgent,
};
use irn_core::seq::PSN_SPACE;
use irn_core::{Psn, Time};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// One connection: its packets in flight and what the application has been told.
struct Conn {
    first: Psn,
    packets: u32,
    agent: ReceiverAgent,
    /// Offsets (from `first`) still to arrive, in arrival order.
    in_flight: VecDeque<u32>,
    /// Offsets the receiver accepted (ACKed or SACKed).
    arrived: Vec<bool>,
    /// Offsets reported in order so far.
    delivered: u32,
    completed: bool,
    /// The cumulative acknowledgement last sent, as an offset.
    acked: u32,
}

impl Conn {
    /// A connection of `packets` packets starting at `first`: packet `i` arrives in the order of
    /// `i + U(0, window)`, and each arrival is duplicated with probability `dup_permille`, the
    /// copy landing up to `window` places earlier.
    fn new(first: Psn, packets: u32, window: u32, dup_permille: u32, rng: &mut StdRng) -> Self {
        let mut keyed: Vec<(u32, u32)> = (0..packets)
            .map(|i| (i + rng.random_range(0..window), i))
            .collect();
        keyed.sort_unstable();
        let mut in_flight = VecDeque::with_capacity(keyed.len() * 2);
        for (_, i) in keyed {
            in_flight.push_back(i);
            if rng.random_range(0..1000) < dup_permille {
                let len = in_flight.len();
                let at = rng.random_range(len.saturating_sub(window as usize)..=len);
                in_flight.insert(at, i);
            }
        }
        Conn {
            first,
            packets,
            agent: ReceiverAgent::new(),
            in_flight,
            arrived: vec![false; packets as usize],
            delivered: 0,
            completed: false,
            acked: 0,
        }
    }

    /// Delivers the next packet in flight and checks everything that follows from it.
    fn step(
        &mut self,
        pool: &mut MemoryController,
        window: u32,
        rng: &mut StdRng,
    ) -> Result<(), TestCaseError> {
        let cfg = *pool.config();
        let cap_blocks = cfg.blocks_per_connection();
        let Some(off) = self.in_flight.pop_front() else {
            return Ok(());
        };
        let psn = self.first.add(off);
        let before = (
            self.agent.expected().unwrap_or(self.first),
            self.agent.bitmap().map(|b| b.reach()),
            pool.free_blocks(),
            self.agent.blocks(),
        );
        let (expected, reach, free, blocks) = before;
        let pkt = DataPacket {
            psn,
            head: self.first,
            last: off + 1 == self.packets,
        };
        self.agent.handle_packet(Time::ZERO, pkt, pool);
        let ack = self.agent.poll_transmit(Time::ZERO);
        prop_assert!(
            self.agent.poll_transmit(Time::ZERO).is_none(),
            "one reply per packet"
        );
        let ahead = psn.since(expected);
        match ack {
            Some(Acknowledgment::Ack { .. }) => {
                prop_assert!(psn <= expected, "ACK for {psn} ahead of {expected}");
                self.arrived[off as usize] = true;
            }
            Some(Acknowledgment::Sack { sacked, .. }) => {
                prop_assert_eq!(sacked, psn);
                prop_assert!(psn > expected, "SACK for {psn}, not ahead of {expected}");
                self.arrived[off as usize] = true;
            }
            Some(Acknowledgment::Nack { dropped, .. }) => {
                prop_assert_eq!(dropped, psn);
                prop_assert!(psn > expected);
                let reach = reach.unwrap_or(expected.add(cfg.cap_bits - 1));
                let room = free >= cap_blocks - blocks;
                prop_assert!(
                    psn > reach || !room,
                    "NACK for {psn}: reach {reach}, {free} blocks free, {blocks} held"
                );
                prop_assert!(
                    ahead >= cfg.block_bits || !room,
                    "NACK for {psn}, only {ahead} ahead of {expected}"
                );
                prop_assert_eq!(self.agent.blocks(), blocks, "a refused packet kept blocks");
                // The sender's recovery resends it later, behind at least a window of arrivals.
                let len = self.in_flight.len();
                let at = rng.random_range(len.min(window as usize)..=len);
                self.in_flight.insert(at, off);
            }
            None => prop_assert!(false, "no reply to {psn}"),
        }
        let got = ack.map(|a| a.expected()).unwrap_or(expected);
        prop_assert!(got >= expected, "the cumulative ACK went back");
        self.acked = got.since(self.first);
        while let Some(d) = self.agent.poll_completion() {
            prop_assert!(!self.completed, "report after completion");
            match d {
                Delivery::InOrder { packets, next } => {
                    prop_assert!(packets > 0);
                    self.delivered += packets;
                    prop_assert_eq!(next, self.first.add(self.delivered));
                    prop_assert!(self.delivered <= self.packets);
                    for i in 0..self.delivered {
                        prop_assert!(self.arrived[i as usize], "{i} reported before it arrived");
                    }
                }
                Delivery::Complete { packets } => {
                    prop_assert_eq!(packets, self.packets);
                    prop_assert_eq!(
                        self.delivered,
                        self.packets,
                        "completed before all in order"
                    );
                    self.completed = true;
                }
            }
        }
        prop_assert!(self.agent.blocks() <= cap_blocks);
        if self.completed {
            prop_assert_eq!(self.agent.blocks(), 0, "memory not freed at completion");
        }
        Ok(())
    }

    fn done(&self) -> bool {
        self.in_flight.is_empty()
    }
}

fn config() -> impl Strategy<Value = OrderingConfig> {
    (prop::sample::select(vec![8u32, 16, 32, 64]), 1u32..=16).prop_map(|(block_bits, blocks)| {
        OrderingConfig {
            block_bits,
            cap_bits: block_bits * blocks,
            pool_blocks: blocks,
        }
    })
}

/// Anywhere in the PSN space, often just before the wrap.
fn first_psn() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..PSN_SPACE, PSN_SPACE - 400..PSN_SPACE]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// One connection with a pool of exactly its cap: only the cap can refuse a packet.
    #[test]
    fn one_connection_delivers_every_packet_once_in_order(
        cfg in config(),
        first in first_psn(),
        packets in 1u32..600,
        window_per_cap in 1u32..=200,
        dup_permille in prop_oneof![Just(0u32), 0u32..300],
        seed in any::<u64>(),
    ) {
        // Windows from a hundredth of the cap to twice it.
        let window = (cfg.cap_bits * window_per_cap / 100).max(1);
        let mut rng = StdRng::seed_from_u64(seed);
        let mut pool = MemoryController::new(cfg).expect("valid configuration");
        let mut c = Conn::new(Psn::new(first), packets, window, dup_permille, &mut rng);
        let mut steps = 0u64;
        while !c.done() {
            c.step(&mut pool, window, &mut rng)?;
            prop_assert_eq!(pool.blocks_in_use(), c.agent.blocks());
            steps += 1;
            prop_assert!(steps < 100 * u64::from(packets) + 1000, "no progress");
        }
        prop_assert!(c.completed && c.agent.is_complete());
        prop_assert_eq!(c.acked, packets);
        prop_assert_eq!(c.agent.stats().no_memory, 0);
        prop_assert_eq!(pool.blocks_in_use(), 0);
        prop_assert_eq!(pool.bytes_in_use(), 0);
        prop_assert_eq!(pool.stats().states_in_use, 0);
        prop_assert!(pool.stats().peak_blocks <= cfg.blocks_per_connection());
    }

    /// Connections sharing one small pool, their arrivals interleaved at random.
    #[test]
    fn a_shared_pool_never_over_allocates_and_ends_empty(
        block_bits in prop::sample::select(vec![8u32, 16]),
        cap_blocks in 1u32..=8,
        pool_blocks in 1u32..=24,
        sizes in prop::collection::vec((first_psn(), 1u32..200), 2..=8),
        window in 1u32..=160,
        dup_permille in 0u32..200,
        seed in any::<u64>(),
    ) {
        let cfg = OrderingConfig { block_bits, cap_bits: block_bits * cap_blocks, pool_blocks };
        let mut rng = StdRng::seed_from_u64(seed);
        let mut pool = MemoryController::new(cfg).expect("valid configuration");
        let mut conns: Vec<Conn> = sizes
            .iter()
            .map(|&(first, n)| Conn::new(Psn::new(first), n, window, dup_permille, &mut rng))
            .collect();
        let total: u64 = sizes.iter().map(|&(_, n)| u64::from(n)).sum();
        let mut steps = 0u64;
        loop {
            let busy: Vec<usize> = (0..conns.len()).filter(|&i| !conns[i].done()).collect();
            if busy.is_empty() {
                break;
            }
            let i = busy[rng.random_range(0..busy.len())];
            conns[i].step(&mut pool, window, &mut rng)?;
            let held: u32 = conns.iter().map(|c| c.agent.blocks()).sum();
            prop_assert_eq!(pool.blocks_in_use(), held);
            prop_assert!(held <= pool_blocks);
            steps += 1;
            prop_assert!(steps < 100 * total + 1000, "no progress");
        }
        for c in &conns {
            prop_assert!(c.completed);
        }
        prop_assert_eq!(pool.blocks_in_use(), 0);
        prop_assert_eq!(pool.bytes_in_use(), 0);
        prop_assert_eq!(pool.stats().states_in_use, 0);
        prop_assert!(pool.stats().peak_blocks <= pool_blocks);
    }
}
