//! Property tests of Eunomia's ordering layer under a transport receiver: connections whose
//! packets arrive permuted within a reordering window, duplicated, and — when the layer NACKs
//! them — retransmitted a little later, as the sender's recovery would (§3.2.2).
//!
//! For every random run, each connection's checks, TigerBeetle-style:
//! - safety: the transport is given every PSN exactly once, in order, and only after it
//!   arrived; the message completes once, last, with the connection's length; one reply per
//!   packet, whose cumulative acknowledgement never goes back; SACKs only for packets ahead of
//!   the expected one;
//! - memory: a connection never holds more than `cap / block` blocks; the pool's count is the
//!   sum of the connections' and never exceeds the pool; everything is back in the pool, with no
//!   state record open, once the connections complete (garbage collection at Last Seq, with no
//!   call from the driver);
//! - no needless NACK: a packet is NACKed only when it lies beyond the bitmap's reach (the cap
//!   counted from its base) or the pool lacks the blocks the cap would still allow, and never
//!   when it is less than one block ahead of the expected PSN with those blocks free;
//! - liveness: every connection completes within a bound.
//!
//! A failure prints the proptest seed and the scenario; rerun it with the persisted regression
//! file.

mod common;

use std::collections::VecDeque;

use common::{data, receiver, reply, Reply, MTU};
use irn_core::ordering::{MemoryController, OrderedReceiver, OrderingConfig, OrderingMode};
use irn_core::seq::PSN_SPACE;
use irn_core::transport::TransportConfig;
use irn_core::{Psn, Time};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// One connection: its packets in flight and what the transport has been given.
struct Conn {
    first: Psn,
    packets: u32,
    rx: OrderedReceiver,
    /// Offsets (from `first`) still to arrive, in arrival order.
    in_flight: VecDeque<u32>,
    /// Offsets the receiver accepted (ACKed or SACKed).
    arrived: Vec<bool>,
    /// Offsets given to the transport in order so far.
    delivered: u32,
    completed: bool,
    /// The cumulative acknowledgement last sent, as an offset.
    acked: u32,
}

impl Conn {
    /// A connection of `packets` packets starting at `first`, IRN's receiver (`irn`) or RoCE's
    /// under Eunomia's layer: packet `i` arrives in the order of `i + U(0, window)`, and each
    /// arrival is duplicated with probability `dup_permille`, the copy landing up to `window`
    /// places earlier.
    fn new(
        (first, packets, irn): (Psn, u32, bool),
        cfg: &OrderingConfig,
        window: u32,
        dup_permille: u32,
        rng: &mut StdRng,
    ) -> Self {
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
        let transport = if irn {
            TransportConfig::irn()
        } else {
            TransportConfig::roce(true)
        };
        let rx = receiver(transport, first.value());
        Conn {
            first,
            packets,
            rx: OrderedReceiver::new(rx, OrderingMode::Eunomia, cfg),
            in_flight,
            arrived: vec![false; packets as usize],
            delivered: 0,
            completed: false,
            acked: 0,
        }
    }

    /// Blocks this connection holds in the pool.
    fn blocks(&self) -> u32 {
        self.rx.bitmap().map_or(0, |b| b.blocks())
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
        let expected = self.rx.receiver().expected_psn();
        let reach = self.rx.bitmap().expect("Eunomia has a bitmap").reach();
        let (free, blocks) = (pool.free_blocks(), self.blocks());
        let pkt = data(psn.value(), MTU as u16, off == 0, off + 1 == self.packets);
        self.rx.handle_packet(Time::ZERO, &pkt, Some(pool));
        let replies: Vec<Reply> = std::iter::from_fn(|| self.rx.poll_transmit(Time::ZERO))
            .map(|p| reply(&p))
            .collect();
        let [answer] = replies[..] else {
            return Err(TestCaseError::fail(format!(
                "{psn}: one reply per packet, not {replies:?}"
            )));
        };
        let ahead = psn.since(expected);
        let cumulative = match answer {
            Reply::Ack(c) => {
                prop_assert!(psn <= expected, "ACK for {psn} ahead of {expected}");
                self.arrived[off as usize] = true;
                c
            }
            Reply::Sack(c, sacked) => {
                prop_assert_eq!(sacked, psn.value());
                prop_assert!(psn > expected, "SACK for {psn}, not ahead of {expected}");
                self.arrived[off as usize] = true;
                c
            }
            Reply::DropNack(c, dropped) => {
                prop_assert_eq!(dropped, psn.value());
                prop_assert!(psn > expected);
                let room = free >= cap_blocks - blocks;
                prop_assert!(
                    psn > reach || !room,
                    "NACK for {psn}: reach {reach}, {free} blocks free, {blocks} held"
                );
                prop_assert!(
                    ahead >= cfg.block_bits || !room,
                    "NACK for {psn}, only {ahead} ahead of {expected}"
                );
                prop_assert_eq!(self.blocks(), blocks, "a refused packet kept blocks");
                // The sender's recovery resends it later, behind at least a window of arrivals.
                let len = self.in_flight.len();
                let at = rng.random_range(len.min(window as usize)..=len);
                self.in_flight.insert(at, off);
                c
            }
            Reply::Nack(..) => {
                return Err(TestCaseError::fail(format!(
                    "the transport NACKed {psn} under the layer"
                )))
            }
        };
        let cumulative = Psn::new(cumulative);
        prop_assert!(cumulative >= expected, "the cumulative ACK went back");
        let now = self.rx.receiver().expected_psn();
        prop_assert_eq!(
            cumulative,
            now,
            "the reply carries the transport's expected PSN"
        );
        self.acked = cumulative.since(self.first);
        self.delivered = now.since(self.first);
        prop_assert!(self.delivered <= self.packets);
        for i in 0..self.delivered {
            prop_assert!(self.arrived[i as usize], "{i} given before it arrived");
        }
        while let Some(c) = self.rx.poll_completion() {
            prop_assert!(!self.completed, "completed twice");
            prop_assert_eq!(c.bytes, u64::from(self.packets) * u64::from(MTU));
            prop_assert_eq!(
                self.delivered,
                self.packets,
                "completed before all in order"
            );
            self.completed = true;
        }
        prop_assert!(self.blocks() <= cap_blocks);
        if self.completed {
            prop_assert_eq!(self.blocks(), 0, "memory not freed at completion");
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
            max_connections: OrderingConfig::DEFAULT_MAX_CONNECTIONS,
            records_in_pool: false,
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
        irn in any::<bool>(),
        seed in any::<u64>(),
    ) {
        // Windows from a hundredth of the cap to twice it.
        let window = (cfg.cap_bits * window_per_cap / 100).max(1);
        let mut rng = StdRng::seed_from_u64(seed);
        let mut pool = MemoryController::new(cfg).expect("valid configuration");
        let mut c = Conn::new((Psn::new(first), packets, irn), &cfg, window, dup_permille, &mut rng);
        let mut steps = 0u64;
        while !c.done() {
            c.step(&mut pool, window, &mut rng)?;
            prop_assert_eq!(pool.blocks_in_use(), c.blocks());
            steps += 1;
            prop_assert!(steps < 100 * u64::from(packets) + 1000, "no progress");
        }
        prop_assert!(c.completed);
        prop_assert_eq!(c.acked, packets);
        prop_assert_eq!(pool.stats().exhausted, 0);
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
        sizes in prop::collection::vec((first_psn(), 1u32..200, any::<bool>()), 2..=8),
        window in 1u32..=160,
        dup_permille in 0u32..200,
        seed in any::<u64>(),
    ) {
        let cfg = OrderingConfig {
            block_bits, cap_bits: block_bits * cap_blocks, pool_blocks, records_in_pool: false,
            ..OrderingConfig::default()
        };
        let mut rng = StdRng::seed_from_u64(seed);
        let mut pool = MemoryController::new(cfg).expect("valid configuration");
        let mut conns: Vec<Conn> = sizes
            .iter()
            .map(|&(first, n, irn)| Conn::new((Psn::new(first), n, irn), &cfg, window, dup_permille, &mut rng))
            .collect();
        let total: u64 = sizes.iter().map(|&(_, n, _)| u64::from(n)).sum();
        let mut steps = 0u64;
        loop {
            let busy: Vec<usize> = (0..conns.len()).filter(|&i| !conns[i].done()).collect();
            if busy.is_empty() {
                break;
            }
            let i = busy[rng.random_range(0..busy.len())];
            conns[i].step(&mut pool, window, &mut rng)?;
            let held: u32 = conns.iter().map(Conn::blocks).sum();
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
