//! Property tests: a sender and a receiver joined by a seeded channel that drops, duplicates and
//! reorders any packet in either direction (data, retransmissions, ACKs, NACKs, last packets).
//!
//! For every transport and variant, each random exchange checks, TigerBeetle-style, safety while
//! faults are on and liveness once the channel heals:
//! - every message completes exactly once on each side, in posting order, with its own size;
//! - the receiver completes a message only after every packet of it and of all earlier messages
//!   has reached it (no out-of-order delivery to the application), and the sender only after
//!   the receiver did (no spurious completion);
//! - BDP-FC: no new packet leaves more than the cap ahead of the cumulative ACK;
//! - once faults stop, everything completes within a bound — a lost tail (last packet or last
//!   ACK) is recovered by the timeout, since no NACK can report it.
//!
//! A failure prints the proptest seed and the scenario; rerun it with `PROPTEST_CASES=1` and
//! the persisted regression file.

mod common;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use common::*;
use irn_core::transport::{packets_for, TransportConfig};
use irn_core::{Duration, Packet, Psn, Receiver, Sender, Time};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// How the channel misbehaves until `heal_at`; after that it delivers everything, in order.
#[derive(Debug, Clone)]
struct Faults {
    /// Per-mille probabilities.
    drop_data: u32,
    drop_control: u32,
    duplicate: u32,
    /// Extra random delay up to this much: reorders packets in flight.
    jitter: Duration,
    heal_at: Time,
}

#[derive(Debug, Clone)]
struct Scenario {
    messages: Vec<u64>,
    isn: u32,
    faults: Faults,
    seed: u64,
}

/// Which way a packet travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Dir {
    ToReceiver,
    ToSender,
}

/// Per-packet serialization on the simulated link (1 KB at ~40 Gb/s) and one-way latency.
const SERIALIZATION: Duration = Duration::from_ps(200_000);
const LATENCY: Duration = Duration::from_us(2);
/// After the channel heals, everything must finish within this.
const SETTLE: Duration = Duration::from_ms(5);

struct Pair {
    s: Sender,
    r: Receiver,
    cfg: TransportConfig,
    sc: Scenario,
    rng: StdRng,
    now: Time,
    /// Packets in flight: (arrival, tie-break sequence, direction, packet).
    wire: BinaryHeap<Reverse<(Time, u64, Dir, PacketKey)>>,
    packets: Vec<Packet>,
    seq: u64,
    /// When the sender's link is next free.
    link_free: Time,
    /// Packet numbers (from the ISN) that have reached the receiver at least once.
    arrived: Vec<bool>,
    /// First packet number of each message, plus the end.
    bounds: Vec<u64>,
    recv_done: usize,
    send_done: usize,
}

/// Index into `Pair::packets` (packets themselves are not `Ord`).
type PacketKey = usize;

impl Pair {
    fn new(cfg: TransportConfig, sc: Scenario) -> Self {
        let mut s = sender(cfg, sc.isn);
        let r = receiver(cfg, sc.isn);
        let mut bounds = vec![0];
        for &bytes in &sc.messages {
            s.post(bytes).unwrap();
            bounds.push(bounds.last().unwrap() + packets_for(bytes, cfg.mtu));
        }
        let total = *bounds.last().unwrap() as usize;
        Pair {
            s,
            r,
            cfg,
            rng: StdRng::seed_from_u64(sc.seed),
            sc,
            now: Time::ZERO,
            wire: BinaryHeap::new(),
            packets: Vec::new(),
            seq: 0,
            link_free: Time::ZERO,
            arrived: vec![false; total],
            bounds,
            recv_done: 0,
            send_done: 0,
        }
    }

    fn chance(&mut self, per_mille: u32) -> bool {
        self.now < self.sc.faults.heal_at && self.rng.random_range(0..1000) < per_mille
    }

    fn put_on_wire(&mut self, depart: Time, dir: Dir, pkt: Packet) {
        let drop = match dir {
            Dir::ToReceiver => self.sc.faults.drop_data,
            Dir::ToSender => self.sc.faults.drop_control,
        };
        if self.chance(drop) {
            return;
        }
        let copies = if self.chance(self.sc.faults.duplicate) {
            2
        } else {
            1
        };
        for _ in 0..copies {
            let jitter =
                if self.now < self.sc.faults.heal_at && self.sc.faults.jitter > Duration::ZERO {
                    Duration::from_ps(self.rng.random_range(0..=self.sc.faults.jitter.as_ps()))
                } else {
                    Duration::ZERO
                };
            self.packets.push(pkt);
            self.seq += 1;
            self.wire.push(Reverse((
                depart + LATENCY + jitter,
                self.seq,
                dir,
                self.packets.len() - 1,
            )));
        }
    }

    /// Let both ends send whatever they have now, checking BDP-FC on every data packet.
    fn transmit(&mut self) -> Result<(), TestCaseError> {
        while let Some(pkt) = self.s.poll_transmit(self.now) {
            if let Some(cap) = self.cfg.bdp_cap {
                let ahead = pkt.psn.since(self.s.cumulative_ack());
                prop_assert!(
                    ahead < cap,
                    "BDP-FC: PSN {} is {ahead} ahead of the cumulative ACK (cap {cap})",
                    pkt.psn
                );
                prop_assert!(self.s.in_flight() <= u64::from(cap));
            }
            let depart = self.link_free.max(self.now) + SERIALIZATION;
            self.link_free = depart;
            self.put_on_wire(depart, Dir::ToReceiver, pkt);
        }
        while let Some(pkt) = self.r.poll_transmit(self.now) {
            self.put_on_wire(self.now, Dir::ToSender, pkt);
        }
        Ok(())
    }

    /// Check completions as they appear.
    fn collect(&mut self) -> Result<(), TestCaseError> {
        while let Some(c) = self.r.poll_completion() {
            let i = self.recv_done;
            prop_assert!(
                i < self.sc.messages.len(),
                "receiver completed more messages than posted: {c:?}"
            );
            prop_assert_eq!(c.msg.0, i as u64, "receiver completions out of order");
            prop_assert_eq!(
                c.bytes,
                self.sc.messages[i],
                "receiver completed message {} with the wrong size",
                i
            );
            let missing = (0..self.bounds[i + 1]).find(|&n| !self.arrived[n as usize]);
            prop_assert!(
                missing.is_none(),
                "message {i} completed before packet {missing:?} arrived"
            );
            self.recv_done += 1;
        }
        while let Some(c) = self.s.poll_completion() {
            let i = self.send_done;
            prop_assert!(
                i < self.sc.messages.len(),
                "sender completed more messages than posted: {c:?}"
            );
            prop_assert_eq!(c.msg.0, i as u64, "sender completions out of order");
            prop_assert_eq!(c.bytes, self.sc.messages[i]);
            prop_assert!(
                self.recv_done > i,
                "sender completed message {i} before the receiver had it"
            );
            self.send_done += 1;
        }
        Ok(())
    }

    fn finished(&self) -> bool {
        self.recv_done == self.sc.messages.len() && self.send_done == self.sc.messages.len()
    }

    /// Run until both sides complete everything, or fail if that does not happen in time.
    fn run(mut self) -> Result<Self, TestCaseError> {
        let deadline = self.sc.faults.heal_at + SETTLE;
        loop {
            self.transmit()?;
            self.collect()?;
            if self.finished() {
                return Ok(self);
            }
            let next_packet = self.wire.peek().map(|Reverse((t, ..))| *t);
            let next = match (next_packet, self.s.poll_timeout()) {
                (Some(a), Some(b)) => a.min(b),
                (Some(a), None) => a,
                (None, Some(b)) => b,
                (None, None) => Time::MAX,
            };
            prop_assert!(
                next <= deadline,
                "stuck at {}: {}/{} messages received, {}/{} acknowledged; sender {:?}, receiver {:?}",
                self.now,
                self.recv_done,
                self.sc.messages.len(),
                self.send_done,
                self.sc.messages.len(),
                self.s.stats(),
                self.r.stats()
            );
            self.now = next;
            if self.s.poll_timeout().is_some_and(|t| t <= self.now) {
                self.s.handle_timeout(self.now);
            }
            while let Some(Reverse((t, _, dir, key))) = self.wire.peek().copied() {
                if t > self.now {
                    break;
                }
                self.wire.pop();
                let pkt = self.packets[key];
                match dir {
                    Dir::ToReceiver => {
                        let n = pkt.psn.since(Psn::new(self.sc.isn)) as usize;
                        self.arrived[n] = true;
                        self.r.handle_packet(self.now, &pkt);
                    }
                    Dir::ToSender => self.s.handle_packet(self.now, &pkt),
                }
                // Let each arrival be answered before the next, as a NIC would.
                self.transmit()?;
                self.collect()?;
            }
        }
    }
}

fn message_sizes() -> impl Strategy<Value = Vec<u64>> {
    let size = prop_oneof![
        4 => 0u64..=1024,          // single-packet RPCs
        3 => 1025u64..=16 * 1024,  // a few packets
        1 => 16 * 1024u64..=160 * 1024, // more than a BDP cap of packets
    ];
    prop::collection::vec(size, 1..8)
}

fn isn() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..(1 << 24), ((1u32 << 24) - 64)..(1 << 24)]
}

fn faults(lossy: bool) -> impl Strategy<Value = Faults> {
    let (drops, dup, jitter) = if lossy {
        (0u32..=300, 0u32..=100, 0u64..=20)
    } else {
        (0..=0, 0..=0, 0..=0)
    };
    (drops.clone(), drops, dup, jitter, 0u64..=3).prop_map(
        |(drop_data, drop_control, duplicate, jitter_us, heal_ms)| Faults {
            drop_data,
            drop_control,
            duplicate,
            jitter: Duration::from_us(jitter_us),
            heal_at: Time::ZERO + Duration::from_ms(heal_ms) + Duration::from_us(500),
        },
    )
}

fn scenario(lossy: bool) -> impl Strategy<Value = Scenario> {
    (message_sizes(), isn(), faults(lossy), any::<u64>()).prop_map(
        |(messages, isn, faults, seed)| Scenario {
            messages,
            isn,
            faults,
            seed,
        },
    )
}

/// A smaller BDP cap than the default keeps multi-cap messages cheap to simulate.
fn small_cap(cfg: TransportConfig) -> TransportConfig {
    TransportConfig {
        bdp_cap: cfg.bdp_cap.map(|_| 24),
        ..cfg
    }
}

const CASES: u32 = 1500;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn irn_survives_any_faults(sc in scenario(true)) {
        Pair::new(small_cap(TransportConfig::irn()), sc).run()?;
    }

    #[test]
    fn irn_default_cap_survives_any_faults(sc in scenario(true)) {
        Pair::new(TransportConfig::irn(), sc).run()?;
    }

    /// IRN §6.3's worst case: every retransmission waits 2 us to be fetched again.
    #[test]
    fn irn_with_refetch_delay_survives_any_faults(sc in scenario(true)) {
        let cfg = TransportConfig { retransmit_delay: Duration::from_us(2), ..small_cap(TransportConfig::irn()) };
        Pair::new(cfg, sc).run()?;
    }

    #[test]
    fn irn_go_back_n_survives_any_faults(sc in scenario(true)) {
        Pair::new(small_cap(TransportConfig::irn_go_back_n()), sc).run()?;
    }

    #[test]
    fn irn_without_bdp_fc_survives_any_faults(sc in scenario(true)) {
        Pair::new(TransportConfig::irn_without_bdp_fc(), sc).run()?;
    }

    #[test]
    fn irn_without_sack_survives_any_faults(sc in scenario(true)) {
        Pair::new(small_cap(TransportConfig::irn_without_sack()), sc).run()?;
    }

    #[test]
    fn roce_without_pfc_survives_any_faults(sc in scenario(true)) {
        Pair::new(TransportConfig::roce(false), sc).run()?;
    }

    /// With PFC the network is lossless and in order, and RoCE runs without a timer.
    #[test]
    fn roce_with_pfc_completes_on_a_lossless_channel(sc in scenario(false)) {
        let pair = Pair::new(TransportConfig::roce(true), sc).run()?;
        prop_assert_eq!(pair.s.stats().retransmissions, 0);
    }
}

/// Drop exactly the first transmission of one chosen packet (data or control) and nothing
/// else. When it is the last packet of the exchange, or the ACK for it, no later arrival can
/// report the loss: only the timeout can recover it.
fn drop_one(cfg: TransportConfig, messages: Vec<u64>, victim: Dir) -> (Sender, Receiver) {
    let total: u64 = messages.iter().map(|&b| packets_for(b, cfg.mtu)).sum();
    let mut pair = Pair::new(
        cfg,
        Scenario {
            messages,
            isn: 0,
            faults: Faults {
                drop_data: 0,
                drop_control: 0,
                duplicate: 0,
                jitter: Duration::ZERO,
                heal_at: Time::ZERO,
            },
            seed: 0,
        },
    );
    let mut dropped = false;
    let deadline = Time::ZERO + SETTLE;
    loop {
        while let Some(pkt) = pair.s.poll_transmit(pair.now) {
            let last = u64::from(pkt.psn.value()) + 1 == total;
            if victim == Dir::ToReceiver && last && !dropped {
                dropped = true;
                continue;
            }
            pair.put_on_wire(pair.now, Dir::ToReceiver, pkt);
        }
        while let Some(pkt) = pair.r.poll_transmit(pair.now) {
            let last = u64::from(pkt.psn.value()) == total;
            if victim == Dir::ToSender && last && !dropped {
                dropped = true;
                continue;
            }
            pair.put_on_wire(pair.now, Dir::ToSender, pkt);
        }
        pair.collect().unwrap();
        if pair.finished() {
            assert!(dropped);
            return (pair.s, pair.r);
        }
        let next = [
            pair.wire.peek().map(|Reverse((t, ..))| *t),
            pair.s.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min();
        let next = next.unwrap_or(Time::MAX);
        assert!(
            next <= deadline,
            "lost tail never recovered: {:?}",
            pair.s.stats()
        );
        pair.now = next;
        if pair.s.poll_timeout().is_some_and(|t| t <= pair.now) {
            pair.s.handle_timeout(pair.now);
        }
        while let Some(Reverse((t, _, dir, key))) = pair.wire.peek().copied() {
            if t > pair.now {
                break;
            }
            pair.wire.pop();
            let pkt = pair.packets[key];
            match dir {
                Dir::ToReceiver => {
                    pair.arrived[pkt.psn.value() as usize] = true;
                    pair.r.handle_packet(pair.now, &pkt);
                }
                Dir::ToSender => pair.s.handle_packet(pair.now, &pkt),
            }
        }
    }
}

#[test]
fn a_lost_tail_is_recovered_by_the_timeout() {
    let lossy = [
        ("RoCE without PFC", TransportConfig::roce(false)),
        ("IRN", TransportConfig::irn()),
        ("IRN go-back-N", TransportConfig::irn_go_back_n()),
        ("IRN without BDP-FC", TransportConfig::irn_without_bdp_fc()),
        ("IRN without SACK", TransportConfig::irn_without_sack()),
    ];
    for (name, cfg) in lossy {
        for victim in [Dir::ToReceiver, Dir::ToSender] {
            for messages in [vec![100], vec![5000, 20_000]] {
                let (s, _) = drop_one(cfg, messages.clone(), victim);
                assert!(
                    s.stats().timeouts >= 1,
                    "{name}, {victim:?}, {messages:?}: {:?}",
                    s.stats()
                );
            }
        }
    }
}

#[test]
fn a_lost_single_packet_message_waits_rto_low_for_irn_and_rto_high_for_roce() {
    for (cfg, rto) in [
        (TransportConfig::irn(), 100),
        (TransportConfig::roce(false), 320),
    ] {
        let mut s = sender(cfg, 0);
        s.post(64).unwrap();
        assert!(s.poll_transmit(us(0)).is_some());
        assert_eq!(s.poll_timeout(), Some(us(rto)));
    }
}
