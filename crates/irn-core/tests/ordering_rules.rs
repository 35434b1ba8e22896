//! Eunomia's receiver-side agent, packet by packet: the ACK/SACK/NACK each arrival produces,
//! how many packets it puts in order, how many bitmap blocks the connection holds afterwards,
//! and the step at which the connection completes and gives its memory back.

use irn_core::ordering::{
    Acknowledgment, DataPacket, Delivery, MemoryController, OrderingConfig, ReceiverAgent,
};
use irn_core::{Psn, Time};

/// An acknowledgment, PSNs as plain numbers: `Ack(expected)`, `Sack(expected, sacked)`,
/// `Nack(expected, dropped)`; `Silent` when the packet is discarded unanswered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reply {
    Ack(u32),
    Sack(u32, u32),
    Nack(u32, u32),
    Silent,
}
use Reply::{Ack, Nack, Sack, Silent};

fn reply(a: Acknowledgment) -> Reply {
    match a {
        Acknowledgment::Ack { expected } => Ack(expected.value()),
        Acknowledgment::Sack { expected, sacked } => Sack(expected.value(), sacked.value()),
        Acknowledgment::Nack { expected, dropped } => Nack(expected.value(), dropped.value()),
    }
}

/// One arrival and what must follow it.
struct Step {
    psn: u32,
    last: bool,
    reply: Reply,
    /// Packets newly in order.
    delivered: u32,
    /// Blocks the connection holds afterwards (the pool holds exactly these).
    blocks: u32,
}

/// A packet that is not the connection's last.
const fn pkt(psn: u32, reply: Reply, delivered: u32, blocks: u32) -> Step {
    Step {
        psn,
        last: false,
        reply,
        delivered,
        blocks,
    }
}

/// The connection's last packet.
const fn last(psn: u32, reply: Reply, delivered: u32, blocks: u32) -> Step {
    Step {
        psn,
        last: true,
        reply,
        delivered,
        blocks,
    }
}

struct Case {
    name: &'static str,
    cfg: OrderingConfig,
    /// The connection's first PSN, carried by every packet.
    head: u32,
    steps: Vec<Step>,
    /// The step after which the completion is reported, if any.
    complete_at: Option<usize>,
}

const fn cfg(block_bits: u32, cap_bits: u32, pool_blocks: u32) -> OrderingConfig {
    OrderingConfig {
        block_bits,
        cap_bits,
        pool_blocks,
    }
}

/// 8-bit blocks, a 32-bit cap: traces short enough to read.
const SMALL: OrderingConfig = cfg(8, 32, 64);

fn t(i: usize) -> Time {
    Time::from_ps(i as u64 * 1_000_000)
}

fn run(cases: Vec<Case>) {
    for case in cases {
        let mut pool = MemoryController::new(case.cfg).expect("valid configuration");
        let mut agent = ReceiverAgent::new();
        let mut completed_at = None;
        for (i, step) in case.steps.iter().enumerate() {
            let p = DataPacket {
                psn: Psn::new(step.psn),
                head: Psn::new(case.head),
                last: step.last,
            };
            agent.handle_packet(t(i), p, &mut pool);
            let replies: Vec<Reply> = std::iter::from_fn(|| agent.poll_transmit(t(i)))
                .map(reply)
                .collect();
            let got = match replies[..] {
                [] => Silent,
                [r] => r,
                _ => panic!("{}: step {i}: several replies {replies:?}", case.name),
            };
            assert_eq!(
                got, step.reply,
                "{}: step {i} (PSN {})",
                case.name, step.psn
            );
            let mut delivered = 0;
            while let Some(d) = agent.poll_completion() {
                match d {
                    Delivery::InOrder { packets, next } => {
                        assert!(
                            completed_at.is_none(),
                            "{}: delivery after completion",
                            case.name
                        );
                        assert_eq!(Some(next), agent.expected(), "{}: step {i}", case.name);
                        delivered += packets;
                    }
                    Delivery::Complete { .. } => {
                        assert_eq!(completed_at, None, "{}: completed twice", case.name);
                        completed_at = Some(i);
                    }
                }
            }
            assert_eq!(
                delivered, step.delivered,
                "{}: step {i} delivered",
                case.name
            );
            assert_eq!(
                agent.blocks(),
                step.blocks,
                "{}: step {i} blocks",
                case.name
            );
            assert_eq!(
                pool.blocks_in_use(),
                step.blocks,
                "{}: step {i} pool",
                case.name
            );
        }
        assert_eq!(completed_at, case.complete_at, "{}: completion", case.name);
        assert_eq!(
            agent.is_complete(),
            case.complete_at.is_some(),
            "{}",
            case.name
        );
        if agent.is_complete() {
            assert_eq!(pool.bytes_in_use(), 0, "{}: memory freed", case.name);
            assert_eq!(pool.stats().states_in_use, 0, "{}", case.name);
        }
    }
}

#[test]
fn acknowledgments_and_memory() {
    run(vec![
        Case {
            name: "in order: an ACK per packet, no memory ever, completion at the last packet",
            cfg: OrderingConfig::default(),
            head: 100,
            steps: vec![
                pkt(100, Ack(101), 1, 0),
                pkt(101, Ack(102), 1, 0),
                last(102, Ack(103), 1, 0),
            ],
            complete_at: Some(2),
        },
        Case {
            name: "one gap filled later: SACKs while it is open, one ACK covers the run",
            cfg: OrderingConfig::default(),
            head: 0,
            steps: vec![
                pkt(0, Ack(1), 1, 0),
                pkt(2, Sack(1, 2), 0, 1),
                pkt(3, Sack(1, 3), 0, 1),
                pkt(1, Ack(4), 3, 1),
                last(4, Ack(5), 1, 0),
            ],
            complete_at: Some(4),
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
            complete_at: None,
        },
        Case {
            name: "beyond the cap: NACK and drop; the base stays frozen until the circular part flushes",
            cfg: SMALL,
            head: 0,
            steps: vec![
                pkt(31, Sack(0, 31), 0, 4),
                pkt(32, Nack(0, 32), 0, 4),
                pkt(0, Ack(1), 1, 4),
                pkt(32, Nack(1, 32), 0, 4), // Head moved, but the linear part pins the base
                pkt(1, Ack(2), 1, 4),
                pkt(2, Ack(3), 1, 4),
                pkt(3, Ack(4), 1, 4),
                pkt(4, Ack(5), 1, 4),
                pkt(5, Ack(6), 1, 4),
                pkt(6, Ack(7), 1, 4),
                pkt(7, Ack(8), 1, 4), // circular part flushed: absorbed, base = 8
                pkt(32, Sack(8, 32), 0, 4),
                pkt(40, Nack(8, 40), 0, 4),
            ],
            complete_at: None,
        },
        Case {
            name: "pool exhausted: NACK and drop, nothing half-allocated; in order needs no memory",
            cfg: cfg(8, 32, 2),
            head: 0,
            steps: vec![
                pkt(20, Nack(0, 20), 0, 0), // needs 3 blocks, the pool has 2
                pkt(5, Sack(0, 5), 0, 1),
                pkt(12, Sack(0, 12), 0, 2),
                pkt(16, Nack(0, 16), 0, 2),
                pkt(0, Ack(1), 1, 2),
                pkt(1, Ack(2), 1, 2),
                pkt(2, Ack(3), 1, 2),
            ],
            complete_at: None,
        },
        Case {
            name: "Figs. 5 and 6: size 8 → 16 when 11 arrives, absorbed when 1–7 flush the ring",
            cfg: cfg(8, 64, 16),
            head: 0,
            steps: vec![
                pkt(0, Ack(1), 1, 0),
                pkt(6, Sack(1, 6), 0, 1),
                pkt(8, Sack(1, 8), 0, 1),
                pkt(11, Sack(1, 11), 0, 2),
                pkt(15, Sack(1, 15), 0, 2),
                pkt(1, Ack(2), 1, 2),
                pkt(2, Ack(3), 1, 2),
                pkt(3, Ack(4), 1, 2),
                pkt(4, Ack(5), 1, 2),
                pkt(5, Ack(7), 2, 2),
                pkt(7, Ack(9), 2, 2), // flushed: one 16-bit ring from 9
                pkt(20, Sack(9, 20), 0, 2), // wraps into row 0: no growth
                pkt(9, Ack(10), 1, 2),
                pkt(10, Ack(12), 2, 2),
                pkt(12, Ack(13), 1, 2),
                pkt(13, Ack(14), 1, 2),
                pkt(14, Ack(16), 2, 2),
                pkt(16, Ack(17), 1, 2),
                pkt(17, Ack(18), 1, 2),
                pkt(18, Ack(19), 1, 2),
                pkt(19, Ack(21), 2, 2),
                last(21, Ack(22), 1, 0),
            ],
            complete_at: Some(21),
        },
        Case {
            name: "duplicates: behind Head re-ACKed, held ones re-SACKed, after completion re-ACKed",
            cfg: OrderingConfig::default(),
            head: 0,
            steps: vec![
                pkt(0, Ack(1), 1, 0),
                pkt(0, Ack(1), 0, 0),
                pkt(2, Sack(1, 2), 0, 1),
                pkt(2, Sack(1, 2), 0, 1),
                pkt(1, Ack(3), 2, 1),
                pkt(2, Ack(3), 0, 1),
                last(3, Ack(4), 1, 0),
                last(3, Ack(4), 0, 0),
                pkt(1, Ack(4), 0, 0),
            ],
            complete_at: Some(6),
        },
        Case {
            name: "PSN wrap across 2^24",
            cfg: OrderingConfig::default(),
            head: 0xFF_FFFE,
            steps: vec![
                pkt(0xFF_FFFE, Ack(0xFF_FFFF), 1, 0),
                pkt(1, Sack(0xFF_FFFF, 1), 0, 1),
                pkt(0, Sack(0xFF_FFFF, 0), 0, 1),
                pkt(0xFF_FFFF, Ack(2), 3, 1),
                last(2, Ack(3), 1, 0),
                pkt(0xFF_FFFE, Ack(3), 0, 0),
            ],
            complete_at: Some(4),
        },
        Case {
            name: "last packet first: completion and GC exactly when Last Seq is reached in order",
            cfg: OrderingConfig::default(),
            head: 7,
            steps: vec![
                last(10, Sack(7, 10), 0, 1),
                pkt(8, Sack(7, 8), 0, 1),
                pkt(9, Sack(7, 9), 0, 1),
                pkt(7, Ack(11), 4, 0),
            ],
            complete_at: Some(3),
        },
        Case {
            name: "packets past Last Seq, or a second last packet, are discarded unanswered",
            cfg: OrderingConfig::default(),
            head: 0,
            steps: vec![
                last(2, Sack(0, 2), 0, 1),
                pkt(3, Silent, 0, 1),
                last(1, Silent, 0, 1),
                pkt(0, Ack(1), 1, 1),
                pkt(1, Ack(3), 2, 0),
            ],
            complete_at: Some(4),
        },
    ]);
}

#[test]
fn nacks_are_counted_by_cause() {
    let mut pool = MemoryController::new(cfg(8, 16, 1)).expect("valid configuration");
    let mut a = ReceiverAgent::new();
    let head = Psn::ZERO;
    for psn in [3, 9, 20] {
        let p = DataPacket {
            psn: Psn::new(psn),
            head,
            last: false,
        };
        a.handle_packet(Time::ZERO, p, &mut pool);
    }
    let st = *a.stats();
    assert_eq!((st.sacks_sent, st.nacks_sent), (1, 2));
    assert_eq!((st.no_memory, st.beyond_cap), (1, 1)); // 9 needs a second block; 20 > cap
    assert_eq!(pool.stats().exhausted, 1);
}

/// Two connections share a pool of 3 blocks: while the first holds them all, the second's
/// out-of-order packet is NACKed; once the first completes, the retransmission is tracked.
#[test]
fn a_shared_pool_is_freed_by_completion() {
    let mut pool = MemoryController::new(cfg(8, 32, 3)).expect("valid configuration");
    let (mut a, mut b) = (ReceiverAgent::new(), ReceiverAgent::new());
    let send = |agent: &mut ReceiverAgent, pool: &mut MemoryController, head, psn, last| {
        let p = DataPacket {
            psn: Psn::new(psn),
            head: Psn::new(head),
            last,
        };
        agent.handle_packet(Time::ZERO, p, pool);
        agent.poll_transmit(Time::ZERO).map(reply)
    };
    assert_eq!(send(&mut a, &mut pool, 0, 20, true), Some(Sack(0, 20)));
    assert_eq!(pool.blocks_in_use(), 3);
    // State record: 16 B + 2 B × 4 block addresses; three 1-byte blocks.
    assert_eq!(pool.bytes_in_use(), 24 + 3);
    assert_eq!(a.footprint_bytes(), 4 + 24 + 3);
    assert_eq!(b.footprint_bytes(), 4);
    assert_eq!(
        send(&mut b, &mut pool, 500, 501, false),
        Some(Nack(500, 501))
    );
    assert_eq!(send(&mut b, &mut pool, 500, 500, false), Some(Ack(501)));
    for psn in 0..19 {
        assert_eq!(send(&mut a, &mut pool, 0, psn, false), Some(Ack(psn + 1)));
    }
    assert_eq!(pool.blocks_in_use(), 3);
    assert_eq!(send(&mut a, &mut pool, 0, 19, false), Some(Ack(21)));
    assert_eq!(
        a.poll_completion(),
        Some(Delivery::InOrder {
            packets: 21,
            next: Psn::new(21)
        })
    );
    assert_eq!(
        a.poll_completion(),
        Some(Delivery::Complete { packets: 21 })
    );
    assert_eq!((pool.blocks_in_use(), a.footprint_bytes()), (0, 4));
    assert_eq!(
        send(&mut b, &mut pool, 500, 502, false),
        Some(Sack(501, 502))
    );
    assert_eq!(pool.blocks_in_use(), 1);
    let st = *pool.stats();
    assert_eq!((st.peak_blocks, st.peak_states, st.peak_bytes), (3, 1, 27));
    b.release(&mut pool);
    assert_eq!((pool.blocks_in_use(), pool.bytes_in_use()), (0, 0));
    assert_eq!(
        b.expected(),
        None,
        "released: the next packet starts afresh"
    );
}

#[test]
fn the_footprint_of_a_full_bitmap_is_84_bytes_with_the_defaults() {
    let mut pool = MemoryController::new(OrderingConfig::default()).expect("valid configuration");
    let mut a = ReceiverAgent::new();
    let p = DataPacket {
        psn: Psn::new(255),
        head: Psn::ZERO,
        last: false,
    };
    a.handle_packet(Time::ZERO, p, &mut pool);
    assert_eq!(a.blocks(), 16);
    assert_eq!(a.footprint_bytes(), 4 + 48 + 16 * 2);
    assert_eq!(pool.bytes_in_use(), 48 + 16 * 2);
}
