//! Eunomia's receiver-side agent (§3.5), packet by packet: the ordering layer under a RoCE and
//! an IRN receiver, with the ACK/SACK/NACK each arrival produces, how far the in-order prefix
//! the transport has been given reaches, how many bitmap blocks the connection holds
//! afterwards, and the steps at which a message completes and its memory goes back to the pool.
//! Every case runs under both transports: under the layer they see only in-order packets, so
//! they must answer alike.

mod common;

use common::*;
use irn_core::ordering::{MemoryController, OrderedReceiver, OrderingConfig, OrderingMode};
use irn_core::transport::TransportConfig;
use irn_core::Time;
use Reply::{Ack, DropNack, Sack};

/// One arrival and what must follow it.
struct Step {
    psn: u32,
    last: bool,
    reply: Reply,
    /// The first PSN the transport has not been given in order, afterwards.
    expected: u32,
    /// Blocks the connection holds afterwards (the pool holds exactly these).
    blocks: u32,
}

/// A packet that is not its message's last.
const fn pkt(psn: u32, reply: Reply, expected: u32, blocks: u32) -> Step {
    Step {
        psn,
        last: false,
        reply,
        expected,
        blocks,
    }
}

/// A message's last packet (Eunomia's last bit).
const fn last(psn: u32, reply: Reply, expected: u32, blocks: u32) -> Step {
    Step {
        psn,
        last: true,
        reply,
        expected,
        blocks,
    }
}

struct Case {
    name: &'static str,
    cfg: OrderingConfig,
    /// The connection's first PSN.
    head: u32,
    steps: Vec<Step>,
    /// The step after which each message completes, in order.
    completions: Vec<usize>,
}

const fn cfg(block_bits: u32, cap_bits: u32, pool_blocks: u32) -> OrderingConfig {
    OrderingConfig {
        block_bits,
        cap_bits,
        pool_blocks,
        max_connections: OrderingConfig::DEFAULT_MAX_CONNECTIONS,
        records_in_pool: false,
    }
}

/// 8-bit blocks, a 32-bit cap: traces short enough to read.
const SMALL: OrderingConfig = cfg(8, 32, 64);

fn t(i: usize) -> Time {
    Time::from_ps(i as u64 * 1_000_000)
}

fn transports() -> [(&'static str, TransportConfig); 2] {
    [
        ("RoCE", TransportConfig::roce(true)),
        ("IRN", TransportConfig::irn()),
    ]
}

/// IRN's or RoCE's receiver from `head` under Eunomia's layer.
fn eunomia(transport: TransportConfig, head: u32, cfg: &OrderingConfig) -> OrderedReceiver {
    OrderedReceiver::new(receiver(transport, head), OrderingMode::Eunomia, cfg)
}

/// Feeds one full-MTU data packet and returns the replies.
fn arrive(
    rx: &mut OrderedReceiver,
    pool: &mut MemoryController,
    now: Time,
    psn: u32,
    last: bool,
) -> Vec<Reply> {
    rx.handle_packet(now, &data(psn, MTU as u16, false, last), Some(pool));
    std::iter::from_fn(|| rx.poll_transmit(now))
        .map(|p| reply(&p))
        .collect()
}

fn run(cases: Vec<Case>) {
    for (transport, config) in transports() {
        for case in &cases {
            let name = format!("{transport}: {}", case.name);
            let mut pool = MemoryController::new(case.cfg).expect("valid configuration");
            let mut rx = eunomia(config, case.head, &case.cfg);
            let mut completed = Vec::new();
            for (i, step) in case.steps.iter().enumerate() {
                let at = format!("{name}: step {i} (PSN {})", step.psn);
                let replies = arrive(&mut rx, &mut pool, t(i), step.psn, step.last);
                assert_eq!(replies, [step.reply], "{at}");
                assert_eq!(
                    rx.receiver().expected_psn().value(),
                    step.expected,
                    "{at}: in order"
                );
                completed.extend(std::iter::from_fn(|| rx.poll_completion()).map(|_| i));
                let blocks = rx.bitmap().map(|b| b.blocks());
                assert_eq!(blocks, Some(step.blocks), "{at}: blocks");
                assert_eq!(pool.blocks_in_use(), step.blocks, "{at}: pool");
                if step.blocks == 0 {
                    assert_eq!(pool.bytes_in_use(), 0, "{at}: memory freed");
                    assert_eq!(pool.stats().states_in_use, 0, "{at}: state record freed");
                }
            }
            assert_eq!(completed, case.completions, "{name}: completions");
        }
    }
}

#[test]
fn acknowledgments_completions_and_memory() {
    run(vec![
        Case {
            name: "in order: an ACK per packet, no memory ever, completion at the last packet",
            cfg: OrderingConfig::default(),
            head: 100,
            steps: vec![
                pkt(100, Ack(101), 101, 0),
                pkt(101, Ack(102), 102, 0),
                last(102, Ack(103), 103, 0),
            ],
            completions: vec![2],
        },
        Case {
            name: "one gap filled later: SACKs while it is open, one ACK covers the run",
            cfg: OrderingConfig::default(),
            head: 0,
            steps: vec![
                pkt(0, Ack(1), 1, 0),
                pkt(2, Sack(1, 2), 1, 1),
                pkt(3, Sack(1, 3), 1, 1),
                pkt(1, Ack(4), 4, 1), // blocks stay until Last Seq (§3.5.3)
                last(4, Ack(5), 5, 0),
            ],
            completions: vec![4],
        },
        Case {
            name: "growth across block boundaries, one 16-bit block per boundary crossed",
            cfg: OrderingConfig::default(),
            head: 0,
            steps: vec![
                pkt(5, Sack(0, 5), 0, 1),
                pkt(15, Sack(0, 15), 0, 1),
                pkt(16, Sack(0, 16), 0, 2),
                pkt(31, Sack(0, 31), 0, 2),
                pkt(32, Sack(0, 32), 0, 3),
                pkt(100, Sack(0, 100), 0, 7), // four boundaries at once: all four blocks
                pkt(255, Sack(0, 255), 0, 16), // the cap: 256 bits
                pkt(0, Ack(1), 1, 16),
            ],
            completions: vec![],
        },
        Case {
            name: "beyond the cap: NACK and drop; the base stays frozen until the circular part flushes",
            cfg: SMALL,
            head: 0,
            steps: vec![
                pkt(31, Sack(0, 31), 0, 4),
                pkt(32, DropNack(0, 32), 0, 4),
                pkt(0, Ack(1), 1, 4),
                pkt(32, DropNack(1, 32), 1, 4), // Head moved, but the linear part pins the base
                pkt(1, Ack(2), 2, 4),
                pkt(2, Ack(3), 3, 4),
                pkt(3, Ack(4), 4, 4),
                pkt(4, Ack(5), 5, 4),
                pkt(5, Ack(6), 6, 4),
                pkt(6, Ack(7), 7, 4),
                pkt(7, Ack(8), 8, 4), // circular part flushed: absorbed, base = 8
                pkt(32, Sack(8, 32), 8, 4),
                pkt(40, DropNack(8, 40), 8, 4),
            ],
            completions: vec![],
        },
        Case {
            name: "pool exhausted: NACK and drop, nothing half-allocated; in order needs no memory",
            cfg: cfg(8, 32, 2),
            head: 0,
            steps: vec![
                pkt(20, DropNack(0, 20), 0, 0), // needs 3 blocks, the pool has 2
                pkt(5, Sack(0, 5), 0, 1),
                pkt(12, Sack(0, 12), 0, 2),
                pkt(16, DropNack(0, 16), 0, 2),
                pkt(0, Ack(1), 1, 2),
                pkt(1, Ack(2), 2, 2),
                pkt(2, Ack(3), 3, 2),
            ],
            completions: vec![],
        },
        Case {
            name: "Figs. 5 and 6: size 8 → 16 when 11 arrives, absorbed when 1–7 flush the ring",
            cfg: cfg(8, 64, 16),
            head: 0,
            steps: vec![
                pkt(0, Ack(1), 1, 0),
                pkt(6, Sack(1, 6), 1, 1),
                pkt(8, Sack(1, 8), 1, 1),
                pkt(11, Sack(1, 11), 1, 2),
                pkt(15, Sack(1, 15), 1, 2),
                pkt(1, Ack(2), 2, 2),
                pkt(2, Ack(3), 3, 2),
                pkt(3, Ack(4), 4, 2),
                pkt(4, Ack(5), 5, 2),
                pkt(5, Ack(7), 7, 2),
                pkt(7, Ack(9), 9, 2), // flushed: one 16-bit ring from 9
                pkt(20, Sack(9, 20), 9, 2), // wraps into row 0: no growth
                pkt(9, Ack(10), 10, 2),
                pkt(10, Ack(12), 12, 2),
                pkt(12, Ack(13), 13, 2),
                pkt(13, Ack(14), 14, 2),
                pkt(14, Ack(16), 16, 2),
                pkt(16, Ack(17), 17, 2),
                pkt(17, Ack(18), 18, 2),
                pkt(18, Ack(19), 19, 2),
                pkt(19, Ack(21), 21, 2),
                last(21, Ack(22), 22, 0),
            ],
            completions: vec![21],
        },
        Case {
            name: "duplicates: behind Head re-ACKed, held ones re-SACKed, after completion re-ACKed",
            cfg: OrderingConfig::default(),
            head: 0,
            steps: vec![
                pkt(0, Ack(1), 1, 0),
                pkt(0, Ack(1), 1, 0),
                pkt(2, Sack(1, 2), 1, 1),
                pkt(2, Sack(1, 2), 1, 1),
                pkt(1, Ack(3), 3, 1),
                pkt(2, Ack(3), 3, 1),
                last(3, Ack(4), 4, 0),
                last(3, Ack(4), 4, 0),
                pkt(1, Ack(4), 4, 0),
            ],
            completions: vec![6],
        },
        Case {
            name: "PSN wrap across 2^24",
            cfg: OrderingConfig::default(),
            head: 0xFF_FFFE,
            steps: vec![
                pkt(0xFF_FFFE, Ack(0xFF_FFFF), 0xFF_FFFF, 0),
                pkt(1, Sack(0xFF_FFFF, 1), 0xFF_FFFF, 1),
                pkt(0, Sack(0xFF_FFFF, 0), 0xFF_FFFF, 1),
                pkt(0xFF_FFFF, Ack(2), 2, 1),
                last(2, Ack(3), 3, 0),
                pkt(0xFF_FFFE, Ack(3), 3, 0),
            ],
            completions: vec![4],
        },
        Case {
            name: "last packet first: completion and GC exactly when Last Seq is reached in order",
            cfg: OrderingConfig::default(),
            head: 7,
            steps: vec![
                last(10, Sack(7, 10), 7, 1),
                pkt(8, Sack(7, 8), 7, 1),
                pkt(9, Sack(7, 9), 7, 1),
                pkt(7, Ack(11), 11, 0),
            ],
            completions: vec![3],
        },
        Case {
            name: "messages back to back: GC at each Last Seq with nothing held beyond it",
            cfg: OrderingConfig::default(),
            head: 0,
            steps: vec![
                // Messages 0..=2 and 3..=4.
                pkt(1, Sack(0, 1), 0, 1),
                last(2, Sack(0, 2), 0, 1),
                pkt(3, Sack(0, 3), 0, 1),
                pkt(0, Ack(4), 4, 0), // the run passes Last Seq 2 and holds nothing more
                last(4, Ack(5), 5, 0),
                // Messages 5..=6 and 7..=8: the second's last packet is held when the first
                // completes, so the bitmap stays until it is in order too.
                last(8, Sack(5, 8), 5, 1),
                last(6, Sack(5, 6), 5, 1),
                pkt(5, Ack(7), 7, 1),
                pkt(7, Ack(9), 9, 0),
            ],
            completions: vec![3, 4, 7, 8],
        },
    ]);
}

/// What the pool's counter tells apart: a NACK for want of memory from one beyond the cap.
#[test]
fn nacks_for_want_of_memory_are_counted_by_the_pool() {
    let cfg = cfg(8, 16, 1);
    let mut pool = MemoryController::new(cfg).expect("valid configuration");
    let mut rx = eunomia(TransportConfig::irn(), 0, &cfg);
    let replies: Vec<Reply> = [3, 9, 20]
        .into_iter()
        .flat_map(|psn| arrive(&mut rx, &mut pool, Time::ZERO, psn, false))
        .collect();
    // 9 needs a second block, which the pool lacks; 20 is past the 16-bit cap.
    assert_eq!(replies, [Sack(0, 3), DropNack(0, 9), DropNack(0, 20)]);
    let st = *rx.layer_stats();
    assert_eq!((st.sacks_sent, st.dropped), (1, 2));
    assert_eq!(pool.stats().exhausted, 1);
}

/// Two connections share a pool of 3 blocks: while the first holds them all, the second's
/// out-of-order packet is NACKed; once the first completes, the retransmission is tracked.
#[test]
fn a_shared_pool_is_freed_by_completion() {
    let cfg = cfg(8, 32, 3);
    let mut pool = MemoryController::new(cfg).expect("valid configuration");
    let (mut a, mut b) = (
        eunomia(TransportConfig::irn(), 0, &cfg),
        eunomia(TransportConfig::irn(), 500, &cfg),
    );
    let now = Time::ZERO;
    assert_eq!(arrive(&mut a, &mut pool, now, 20, true), [Sack(0, 20)]);
    assert_eq!(pool.blocks_in_use(), 3);
    // State record: 16 B + 2 B × 4 block addresses; three 1-byte blocks; the DBA pointer.
    assert_eq!(pool.bytes_in_use(), 24 + 3);
    assert_eq!(a.footprint_bytes(), 4 + 24 + 3);
    assert_eq!(b.footprint_bytes(), 4);
    assert_eq!(
        arrive(&mut b, &mut pool, now, 501, false),
        [DropNack(500, 501)]
    );
    assert_eq!(arrive(&mut b, &mut pool, now, 500, false), [Ack(501)]);
    for psn in 0..19 {
        assert_eq!(arrive(&mut a, &mut pool, now, psn, false), [Ack(psn + 1)]);
    }
    assert_eq!(pool.blocks_in_use(), 3);
    assert_eq!(arrive(&mut a, &mut pool, now, 19, false), [Ack(21)]);
    let done = a.poll_completion().expect("the message is complete");
    assert_eq!(done.bytes, 21 * u64::from(MTU));
    assert_eq!((pool.blocks_in_use(), a.footprint_bytes()), (0, 4));
    assert_eq!(arrive(&mut b, &mut pool, now, 502, false), [Sack(501, 502)]);
    assert_eq!(pool.blocks_in_use(), 1);
    let st = *pool.stats();
    assert_eq!((st.peak_blocks, st.peak_states, st.peak_bytes), (3, 1, 27));
    b.release(Some(&mut pool));
    assert_eq!((pool.blocks_in_use(), pool.bytes_in_use()), (0, 0));
    // A released connection counts nothing, not even its pointer.
    assert_eq!(b.footprint_bytes(), 0);
    assert_eq!(
        b.receiver().expected_psn().value(),
        501,
        "the transport keeps its place"
    );
}

#[test]
fn the_footprint_of_a_full_bitmap_is_84_bytes_with_the_defaults() {
    let cfg = OrderingConfig::default();
    let mut pool = MemoryController::new(cfg).expect("valid configuration");
    let mut rx = eunomia(TransportConfig::irn(), 0, &cfg);
    assert_eq!(
        arrive(&mut rx, &mut pool, Time::ZERO, 255, false),
        [Sack(0, 255)]
    );
    assert_eq!(rx.bitmap().map(|b| b.blocks()), Some(16));
    assert_eq!(rx.footprint_bytes(), 4 + 48 + 16 * 2);
    assert_eq!(pool.bytes_in_use(), 48 + 16 * 2);
}

/// The other layers hold no pool memory: the ideal one its 9 B of state and the smallest
/// bitmap covering what it holds, a static bitmap its bytes and 9 B of state for the
/// connection's life.
#[test]
fn other_layers_footprints() {
    let cfg = OrderingConfig::default();
    let mut pool = MemoryController::new(cfg).expect("valid configuration");
    // (mode, before, with packet 5 held: 6 bits, 1 B of bitmap)
    for (mode, before, held) in [
        (OrderingMode::None, 0, 0),
        (OrderingMode::Ideal, 9, 9 + 1),
        (OrderingMode::Static { bits: 100 }, 13 + 9, 13 + 9),
    ] {
        let mut rx = OrderedReceiver::new(receiver(TransportConfig::irn(), 0), mode, &cfg);
        assert_eq!(rx.footprint_bytes(), before, "{mode:?}");
        arrive(&mut rx, &mut pool, Time::ZERO, 5, false);
        assert_eq!(rx.footprint_bytes(), held, "{mode:?}");
        assert!(rx.bitmap().is_none());
    }
    assert_eq!(pool.stats().peak_blocks, 0);
}

/// Eunomia §3.2.1: 33 bits of metadata per data packet, five whole bytes on the wire.
#[test]
fn every_layer_adds_five_bytes_of_metadata() {
    assert_eq!(OrderingMode::METADATA_BITS, 33);
    for (mode, bytes) in [
        (OrderingMode::None, 0),
        (OrderingMode::Ideal, 5),
        (OrderingMode::Static { bits: 128 }, 5),
        (OrderingMode::Eunomia, 5),
    ] {
        assert_eq!(mode.metadata_bytes(), bytes, "{mode:?}");
    }
}

/// The records live in the pool (the default): two connections that each hold a record and a
/// block leave no run of 24 blocks for a third, which is NACKed for the pool; with room in the
/// pool but a limit of two connections, the third is NACKed for the limit. Completion gives
/// the record back and the third connection's retransmission is tracked.
#[test]
fn a_pool_full_of_records_refuses_a_new_connection_and_says_why() {
    let pool_full = OrderingConfig {
        pool_blocks: 2 * 25 + 20,
        ..OrderingConfig::default()
    };
    let limited = OrderingConfig {
        max_connections: 2,
        ..OrderingConfig::default()
    };
    for (cfg, by_limit) in [(pool_full, false), (limited, true)] {
        let mut pool = MemoryController::new(cfg).expect("valid configuration");
        let now = Time::ZERO;
        let mut conns: Vec<OrderedReceiver> = (0..3)
            .map(|i| eunomia(TransportConfig::irn(), 1000 * i, &cfg))
            .collect();
        for (i, rx) in conns.iter_mut().take(2).enumerate() {
            let head = 1000 * i as u32;
            assert_eq!(
                arrive(rx, &mut pool, now, head + 1, true),
                [Sack(head, head + 1)]
            );
        }
        assert_eq!(pool.stats().states_in_use, 2);
        assert_eq!(
            arrive(&mut conns[2], &mut pool, now, 2001, true),
            [DropNack(2000, 2001)]
        );
        let (layer, st) = (*conns[2].layer_stats(), *pool.stats());
        let want = if by_limit { (1, 0) } else { (0, 1) };
        assert_eq!(
            (layer.refused_connections, layer.refused_pool),
            want,
            "{cfg:?}"
        );
        assert_eq!((st.connection_limit, st.exhausted_records), want, "{cfg:?}");
        // The first connection completes: its record and block go back.
        assert_eq!(arrive(&mut conns[0], &mut pool, now, 0, false), [Ack(2)]);
        assert!(conns[0].poll_completion().is_some());
        conns[0].release(Some(&mut pool));
        assert_eq!(pool.stats().states_in_use, 1);
        assert_eq!(
            arrive(&mut conns[2], &mut pool, now, 2001, true),
            [Sack(2000, 2001)]
        );
    }
}
