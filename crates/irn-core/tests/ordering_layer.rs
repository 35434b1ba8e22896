//! The ordering layer under RoCE and IRN receivers, over a channel that reorders data packets
//! (and, in the property test, drops some): reordering alone never makes the sender recover
//! under a layer, every message completes exactly once and in order, and a packet the layer
//! cannot track is NACKed and recovered.

mod common;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use common::*;
use irn_core::ordering::{
    MemoryController, OrderedReceiver, OrderingConfig, OrderingMode, WriteLast,
};
use irn_core::transport::TransportConfig;
use irn_core::{Duration, Packet, PacketKind, Sender, Time};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const SERIALIZATION: Duration = Duration::from_ps(200_000);
const LATENCY: Duration = Duration::from_us(2);

/// What one exchange did.
#[derive(Debug)]
struct Outcome {
    receiver_completions: Vec<(u64, u64)>,
    sender_completions: usize,
    recoveries: u64,
    retransmissions: u64,
    sacks: u64,
    dropped: u64,
    /// Blocks still held once every message completed: none, since the layer gives them back
    /// at each message's last packet (garbage collection, §3.5.3).
    pool_blocks_in_use: u32,
    /// Last packets sent while the cumulative ACK was still behind them.
    last_sent_early: u64,
}

/// Sends `messages` from a sender to a receiver under `mode`: each data packet is delayed by up
/// to `jitter` more (so packets overtake each other) and, before `heal_at`, dropped with
/// probability `drop_permille`/1000. Control packets go straight back in order.
fn exchange(
    cfg: TransportConfig,
    mode: OrderingMode,
    ordering: OrderingConfig,
    messages: &[u64],
    (jitter, drop_permille, heal_at): (Duration, u32, Time),
    seed: u64,
) -> Outcome {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut tx: Sender = sender(cfg, 0xFF_FFF0);
    let mut rx = OrderedReceiver::new(receiver(cfg, 0xFF_FFF0), mode, &ordering);
    let mut pool = MemoryController::new(ordering).unwrap();
    for &m in messages {
        tx.post(m).unwrap();
    }
    // (arrival, sequence, to the receiver?, packet)
    let mut wire: BinaryHeap<Reverse<(Time, u64, bool, PacketOrd)>> = BinaryHeap::new();
    let mut seq = 0;
    let mut now = Time::ZERO;
    let mut next_tx = Time::ZERO;
    let mut receiver_completions = Vec::new();
    let mut sender_completions = 0;
    let mut last_sent_early = 0;
    let limit = Time::ZERO + Duration::from_ms(200);
    while sender_completions < messages.len() && now < limit {
        // Send while the link is free.
        if now >= next_tx {
            if let Some(p) = tx.poll_transmit(now) {
                next_tx = now + SERIALIZATION;
                if matches!(p.kind, PacketKind::Data { last: true, .. })
                    && tx.cumulative_ack() != p.psn
                {
                    last_sent_early += 1;
                }
                let lost = now < heal_at && rng.random_range(0..1000) < drop_permille;
                if !lost {
                    let extra = Duration::from_ps(rng.random_range(0..=jitter.as_ps()));
                    seq += 1;
                    wire.push(Reverse((now + LATENCY + extra, seq, true, PacketOrd(p))));
                }
                continue;
            }
        }
        let next_arrival = wire.peek().map(|Reverse((t, ..))| *t);
        let candidates = [
            next_arrival,
            tx.poll_timeout(),
            Some(next_tx).filter(|&t| t > now),
        ];
        let Some(t) = candidates.into_iter().flatten().min() else {
            break;
        };
        now = now.max(t);
        if tx.poll_timeout().is_some_and(|d| d <= now) {
            tx.handle_timeout(now);
        }
        while let Some(Reverse((t, _, to_rx, PacketOrd(p)))) = wire.peek().copied() {
            if t > now {
                break;
            }
            wire.pop();
            if to_rx {
                rx.handle_packet(now, &p, Some(&mut pool));
                while let Some(reply) = rx.poll_transmit(now) {
                    seq += 1;
                    wire.push(Reverse((now + LATENCY, seq, false, PacketOrd(reply))));
                }
                while let Some(c) = rx.poll_completion() {
                    receiver_completions.push((c.msg.0, c.bytes));
                }
            } else {
                tx.handle_packet(now, &p);
                while tx.poll_completion().is_some() {
                    sender_completions += 1;
                }
            }
        }
    }
    let layer = *rx.layer_stats();
    Outcome {
        receiver_completions,
        sender_completions,
        recoveries: tx.stats().recoveries,
        retransmissions: tx.stats().retransmissions,
        sacks: layer.sacks_sent,
        dropped: layer.dropped,
        pool_blocks_in_use: pool.blocks_in_use(),
        last_sent_early,
    }
}

/// A packet in the heap: ordered by the heap's other fields only.
#[derive(Clone, Copy, Debug)]
struct PacketOrd(Packet);
impl PartialEq for PacketOrd {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for PacketOrd {}
impl PartialOrd for PacketOrd {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for PacketOrd {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

fn in_posting_order(messages: &[u64]) -> Vec<(u64, u64)> {
    messages
        .iter()
        .enumerate()
        .map(|(i, &m)| (i as u64, m))
        .collect()
}

const JITTER: Duration = Duration::from_us(3);

#[test]
fn reordering_alone_makes_the_bare_transports_recover_and_no_layer_does() {
    let messages = [300_000];
    for cfg in [TransportConfig::roce(true), TransportConfig::irn()] {
        let bare = exchange(
            cfg,
            OrderingMode::None,
            OrderingConfig::default(),
            &messages,
            (JITTER, 0, Time::ZERO),
            1,
        );
        assert!(
            bare.recoveries > 0 && bare.retransmissions > 0,
            "{cfg:?}: {bare:?}"
        );
        assert_eq!(bare.receiver_completions, in_posting_order(&messages));
        for mode in [
            OrderingMode::Ideal,
            OrderingMode::Static { bits: 512 },
            OrderingMode::Eunomia,
        ] {
            let o = exchange(
                cfg,
                mode,
                OrderingConfig::default(),
                &messages,
                (JITTER, 0, Time::ZERO),
                1,
            );
            assert_eq!(
                (o.recoveries, o.retransmissions),
                (0, 0),
                "{cfg:?} {mode:?}: {o:?}"
            );
            assert!(o.sacks > 0, "{mode:?}: the jitter reorders");
            assert_eq!(o.receiver_completions, in_posting_order(&messages));
            assert_eq!(o.sender_completions, 1);
            assert_eq!(o.pool_blocks_in_use, 0);
        }
    }
}

#[test]
fn a_packet_beyond_a_small_bitmap_is_nacked_recovered_and_the_message_completes() {
    let messages = [200_000, 8, 50_000];
    for cfg in [TransportConfig::roce(true), TransportConfig::irn()] {
        for mode in [OrderingMode::Static { bits: 4 }, OrderingMode::Eunomia] {
            // Eunomia capped at one 16-bit block: a 10 µs jitter reorders over ~50 packets.
            let ordering = OrderingConfig {
                cap_bits: 16,
                ..OrderingConfig::default()
            };
            let jitter = Duration::from_us(10);
            let o = exchange(cfg, mode, ordering, &messages, (jitter, 0, Time::ZERO), 2);
            assert!(o.dropped > 0, "{cfg:?} {mode:?}: {o:?}");
            assert!(o.recoveries > 0);
            assert_eq!(o.receiver_completions, in_posting_order(&messages));
            assert_eq!(o.sender_completions, messages.len());
            assert_eq!(o.pool_blocks_in_use, 0);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Reordering and, for a while, loss: every message completes exactly once, in order, under
    /// every layer and both transports, and Eunomia's pool is empty at the end.
    #[test]
    fn every_message_completes_once_in_order(
        roce in any::<bool>(),
        mode in prop_oneof![
            Just(OrderingMode::None),
            Just(OrderingMode::Ideal),
            (1u32..64).prop_map(|bits| OrderingMode::Static { bits }),
            Just(OrderingMode::Eunomia),
        ],
        cap_blocks in 1u32..=16,
        pool_blocks in 1u32..64,
        messages in prop::collection::vec(1u64..60_000, 1..5),
        jitter_us in 0u64..8,
        drop_permille in 0u32..30,
        seed in any::<u64>(),
    ) {
        // RoCE without PFC keeps its timeout: a dropped packet is recovered by it.
        let cfg = if roce { TransportConfig::roce(false) } else { TransportConfig::irn() };
        let ordering = OrderingConfig {
            cap_bits: 16 * cap_blocks,
            pool_blocks,
            // A record is at most 24 blocks and needs a bitmap block after it: smaller pools
            // keep it beside them.
            records_in_pool: pool_blocks > 24,
            ..OrderingConfig::default()
        };
        let heal = Time::ZERO + Duration::from_us(200);
        let o = exchange(cfg, mode, ordering, &messages, (Duration::from_us(jitter_us), drop_permille, heal), seed);
        prop_assert_eq!(&o.receiver_completions, &in_posting_order(&messages), "{:?}", o);
        prop_assert_eq!(o.sender_completions, messages.len());
        prop_assert_eq!(o.pool_blocks_in_use, 0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Eunomia's WRITE rule under reordering and loss: no message's last packet ever leaves
    /// before the cumulative ACK reaches it, and every message still completes once, in order.
    #[test]
    fn a_held_last_packet_never_leaves_early_and_every_write_completes(
        roce in any::<bool>(),
        mode in prop_oneof![
            Just(OrderingMode::Ideal),
            (1u32..64).prop_map(|bits| OrderingMode::Static { bits }),
            Just(OrderingMode::Eunomia),
        ],
        messages in prop::collection::vec(1u64..60_000, 1..5),
        jitter_us in 0u64..8,
        drop_permille in 0u32..30,
        seed in any::<u64>(),
    ) {
        let cfg = if roce { TransportConfig::roce(false) } else { TransportConfig::irn() };
        let cfg = TransportConfig { hold_last_packet: true, ..cfg };
        let heal = Time::ZERO + Duration::from_us(200);
        let o = exchange(cfg, mode, OrderingConfig::default(), &messages, (Duration::from_us(jitter_us), drop_permille, heal), seed);
        prop_assert_eq!(o.last_sent_early, 0);
        prop_assert_eq!(&o.receiver_completions, &in_posting_order(&messages), "{:?}", o);
        prop_assert_eq!(o.sender_completions, messages.len());
        prop_assert_eq!(o.pool_blocks_in_use, 0);
    }
}

#[test]
fn without_the_hold_a_last_packet_leaves_ahead_of_its_acknowledgement() {
    // The exchange's check itself: with no hold, a multi-packet message's last packet leaves
    // with the rest.
    let o = exchange(
        TransportConfig::irn(),
        OrderingMode::Eunomia,
        OrderingConfig::default(),
        &[10_000, 20_000],
        (JITTER, 0, Time::ZERO),
        3,
    );
    assert_eq!(o.last_sent_early, 2, "{o:?}");
}

/// Feeds `psns` (of a 3-packet message 0, 1, 2) to a receiver under `mode` and `write_last`;
/// returns the placement delay taken at its completion and the staged count.
fn staged(mode: OrderingMode, write_last: WriteLast, psns: [u32; 3]) -> (Duration, u64) {
    let cfg = TransportConfig::irn();
    let ordering = OrderingConfig::default();
    let mut pool = MemoryController::new(ordering).unwrap();
    let mut rx =
        OrderedReceiver::new(receiver(cfg, 0), mode, &ordering).with_write_last(write_last);
    let now = us(1);
    for psn in psns {
        rx.handle_packet(now, &data(psn, 1024, psn == 0, psn == 2), Some(&mut pool));
    }
    assert_eq!(completions(&mut rx), vec![(0, 3 * 1024)]);
    let delay = rx.take_placement_delay();
    assert_eq!(rx.take_placement_delay(), Duration::ZERO, "taken once");
    (delay, rx.layer_stats().staged_last)
}

fn completions(rx: &mut OrderedReceiver) -> Vec<(u64, u64)> {
    std::iter::from_fn(|| rx.poll_completion())
        .map(|c| (c.msg.0, c.bytes))
        .collect()
}

#[test]
fn a_last_packet_that_arrives_out_of_order_is_staged_and_placed_late() {
    let d = Duration::from_us(2);
    let receiver = WriteLast::Receiver { placement_delay: d };
    for mode in [
        OrderingMode::Ideal,
        OrderingMode::Static { bits: 8 },
        OrderingMode::Eunomia,
    ] {
        let cases = [
            // (write_last, arrival order, delay at completion, staged)
            (receiver, [0, 2, 1], d, 1),
            (receiver, [2, 0, 1], d, 1),
            (receiver, [1, 0, 2], Duration::ZERO, 0), // the last packet came in order
            (receiver, [0, 1, 2], Duration::ZERO, 0),
            (WriteLast::Off, [0, 2, 1], Duration::ZERO, 0),
            (WriteLast::Sender, [0, 2, 1], Duration::ZERO, 0),
        ];
        for (write_last, psns, delay, count) in cases {
            assert_eq!(
                staged(mode, write_last, psns),
                (delay, count),
                "{mode:?} {write_last:?} {psns:?}"
            );
        }
    }
}

#[test]
fn sacks_and_drop_nacks_are_control_frames() {
    let echo = irn_core::packet::Echo::default();
    for kind in [
        PacketKind::Sack {
            sacked: irn_core::Psn::new(3),
            echo,
        },
        PacketKind::DropNack {
            dropped: irn_core::Psn::new(3),
            echo,
        },
    ] {
        let p = Packet {
            dest_qp: irn_core::Qpn::new(1),
            psn: irn_core::Psn::new(1),
            kind,
        };
        assert_eq!(p.wire_len(), 64);
        let mut buf = [0u8; 64];
        let n = p.emit(&mut buf).unwrap();
        assert_eq!(Packet::parse(&buf[..n]).unwrap(), p);
    }
}

/// What a connection's ordering memory counts, by hand (the layer's module doc): 24 packets of
/// one message, packet 20 first, then the rest in order.
#[test]
fn footprint_counts_bitmap_and_state_as_the_paper_does() {
    let cfg = TransportConfig::irn();
    let ordering = OrderingConfig::default();
    let arrivals = std::iter::once(20).chain((0..24).filter(|&p| p != 20));
    let packet = |p: u32| data(p, MTU as u16, p == 0, p == 23);
    // (mode, before any packet, with packet 20 held, all delivered, the peak; the bitmap alone
    // at the same three moments)
    let cases = [
        // 16 B of bitmap + 9 B of head, last and head index, whatever arrives.
        (
            OrderingMode::Static { bits: 128 },
            25,
            25,
            25,
            25,
            [16, 16, 16],
        ),
        // 9 B of state; packet 20 held needs 21 bits (3 B); nothing held at the end.
        (OrderingMode::Ideal, 9, 9 + 3, 9, 9 + 3, [0, 3, 0]),
        // The 4 B DBA; packet 20 opens the 48 B record with a circular block for 0..15 and a
        // linear one for 16..31 (2 B each); record and blocks are freed at Last Seq.
        (
            OrderingMode::Eunomia,
            4,
            4 + 48 + 2 * 2,
            4,
            4 + 48 + 2 * 2,
            [0, 2 * 2, 0],
        ),
    ];
    for (mode, before, held, delivered, peak, bitmap) in cases {
        let mut rx = OrderedReceiver::new(receiver(cfg, 0), mode, &ordering);
        let mut pool = MemoryController::new(ordering).unwrap();
        let mut seen = vec![rx.footprint_bytes()];
        let mut bitmaps = vec![rx.bitmap_bytes()];
        for p in arrivals.clone() {
            rx.handle_packet(Time::ZERO, &packet(p), Some(&mut pool));
            while rx.poll_transmit(Time::ZERO).is_some() {}
            if p == 20 || p == 23 {
                seen.push(rx.footprint_bytes());
                bitmaps.push(rx.bitmap_bytes());
            }
        }
        assert!(rx.poll_completion().is_some(), "{mode:?}");
        assert_eq!(seen, [before, held, delivered], "{mode:?}");
        assert_eq!(bitmaps, bitmap, "{mode:?}");
        assert_eq!(rx.layer_stats().peak_bytes, peak, "{mode:?}");
        rx.release(Some(&mut pool));
        assert_eq!(
            (rx.footprint_bytes(), pool.bytes_in_use()),
            (0, 0),
            "{mode:?}"
        );
    }
}
