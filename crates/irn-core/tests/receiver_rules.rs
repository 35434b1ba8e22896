//! receiveData, packet by packet: what each receiver answers to each arrival, for go-back-N
//! (RoCE, and IRN's go-back-N variant) and for selective repeat (IRN and its other variants).

mod common;

use common::*;
use irn_core::TransportConfig;
use Reply::{Ack, Nack};

/// One case: packets in arrival order, the replies each produces, and the completions at the end.
struct Case {
    name: &'static str,
    cfg: TransportConfig,
    isn: u32,
    steps: Vec<(irn_core::Packet, Vec<Reply>)>,
    completions: Vec<(u64, u64)>,
}

fn run(cases: Vec<Case>) {
    for case in cases {
        let mut r = receiver(case.cfg, case.isn);
        for (i, (pkt, want)) in case.steps.into_iter().enumerate() {
            let got = recv(&mut r, us(i as u64), pkt);
            assert_eq!(got, want, "{}: step {i} ({pkt:?})", case.name);
        }
        assert_eq!(
            completions_receiver(&mut r),
            case.completions,
            "{}: completions",
            case.name
        );
    }
}

#[test]
fn go_back_n_receiver() {
    let roce = TransportConfig::roce(false);
    let irn_gbn = TransportConfig::irn_go_back_n();
    let mut cases = Vec::new();
    for cfg in [roce, irn_gbn] {
        cases.extend([
            Case {
                name: "in order: one cumulative ACK per packet, completion at the last packet",
                cfg,
                isn: 0,
                steps: vec![
                    (data(0, 1024, true, false), vec![Ack(1)]),
                    (mid(1), vec![Ack(2)]),
                    (data(2, 10, false, true), vec![Ack(3)]),
                ],
                completions: vec![(0, 2058)],
            },
            Case {
                name: "a gap: discard what follows, NACK once per episode",
                cfg,
                isn: 0,
                steps: vec![
                    (only(0, 8), vec![Ack(1)]),
                    (only(2, 8), vec![Nack(1, 2)]),
                    (only(3, 8), vec![]),
                    (only(4, 8), vec![]),
                    (only(1, 8), vec![Ack(2)]),
                    (only(3, 8), vec![Nack(2, 3)]), // a new episode: 2 is still missing
                    (only(2, 8), vec![Ack(3)]),
                    (only(3, 8), vec![Ack(4)]),
                ],
                completions: vec![(0, 8), (1, 8), (2, 8), (3, 8)],
            },
            Case {
                name: "a duplicate of an accepted packet is re-ACKed",
                cfg,
                isn: 0,
                steps: vec![(only(0, 8), vec![Ack(1)]), (only(0, 8), vec![Ack(1)])],
                completions: vec![(0, 8)],
            },
            Case {
                name: "PSN wrap-around at 2^24",
                cfg,
                isn: 0xFF_FFFE,
                steps: vec![
                    (data(0xFF_FFFE, 1024, true, false), vec![Ack(0xFF_FFFF)]),
                    (mid(0xFF_FFFF), vec![Ack(0)]),
                    (mid(1), vec![Nack(0, 1)]),
                    (mid(0), vec![Ack(1)]),
                    (data(1, 1, false, true), vec![Ack(2)]),
                    (mid(0xFF_FFFF), vec![Ack(2)]), // behind, across the wrap: a duplicate
                ],
                completions: vec![(0, 3073)],
            },
        ]);
    }
    run(cases);
}

#[test]
fn selective_repeat_receiver() {
    let mut cases = Vec::new();
    for cfg in [
        TransportConfig::irn(),
        TransportConfig::irn_without_bdp_fc(),
        TransportConfig::irn_without_sack(),
    ] {
        cases.extend([
            Case {
                name: "out of order: keep it and NACK every arrival with itself as SACK",
                cfg,
                isn: 0,
                steps: vec![
                    (only(0, 8), vec![Ack(1)]),
                    (only(2, 8), vec![Nack(1, 2)]),
                    (only(3, 8), vec![Nack(1, 3)]),
                    (only(5, 8), vec![Nack(1, 5)]),
                    (only(1, 8), vec![Ack(4)]), // joins 2 and 3
                    (only(4, 8), vec![Ack(6)]), // joins 5
                ],
                completions: vec![(0, 8), (1, 8), (2, 8), (3, 8), (4, 8), (5, 8)],
            },
            Case {
                name: "duplicates: below expected re-ACK, above expected re-NACK",
                cfg,
                isn: 0,
                steps: vec![
                    (only(0, 8), vec![Ack(1)]),
                    (only(0, 8), vec![Ack(1)]),
                    (only(2, 8), vec![Nack(1, 2)]),
                    (only(2, 8), vec![Nack(1, 2)]),
                    (only(1, 8), vec![Ack(3)]),
                ],
                completions: vec![(0, 8), (1, 8), (2, 8)],
            },
            Case {
                name: "the last packet first: completion waits for the whole message",
                cfg,
                isn: 0,
                steps: vec![
                    (data(2, 100, false, true), vec![Nack(0, 2)]),
                    (mid(1), vec![Nack(0, 1)]),
                    (data(0, 1024, true, false), vec![Ack(3)]),
                ],
                completions: vec![(0, 2148)],
            },
            Case {
                name: "two messages complete together, in order, with their own sizes",
                cfg,
                isn: 0,
                steps: vec![
                    (only(2, 30), vec![Nack(0, 2)]),
                    (data(1, 20, false, true), vec![Nack(0, 1)]),
                    (data(0, 1024, true, false), vec![Ack(3)]),
                ],
                completions: vec![(0, 1044), (1, 30)],
            },
            Case {
                name: "PSN wrap-around at 2^24",
                cfg,
                isn: 0xFF_FFFE,
                steps: vec![
                    (mid(0), vec![Nack(0xFF_FFFE, 0)]),
                    (data(1, 1, false, true), vec![Nack(0xFF_FFFE, 1)]),
                    (mid(0xFF_FFFF), vec![Nack(0xFF_FFFE, 0xFF_FFFF)]),
                    (data(0xFF_FFFE, 1024, true, false), vec![Ack(2)]),
                    (mid(0xFF_FFFF), vec![Ack(2)]),
                ],
                completions: vec![(0, 3073)],
            },
        ]);
    }
    run(cases);
}

#[test]
fn packets_beyond_the_bitmap_are_dropped_unanswered() {
    let cfg = TransportConfig::irn(); // BDP cap 110: a 128-bit bitmap
    let mut r = receiver(cfg, 0);
    assert_eq!(recv(&mut r, us(0), only(127, 8)), vec![Nack(0, 127)]);
    assert_eq!(recv(&mut r, us(1), only(128, 8)), vec![]);
    assert_eq!(r.stats().window_drops, 1);
}

#[test]
fn malformed_data_is_discarded() {
    for cfg in [TransportConfig::roce(true), TransportConfig::irn()] {
        let mut r = receiver(cfg, 0);
        // Longer than the MTU; a non-final packet shorter than the MTU; an ACK sent to a receiver.
        assert_eq!(recv(&mut r, us(0), only(0, 1025)), vec![]);
        assert_eq!(recv(&mut r, us(0), data(0, 1000, true, false)), vec![]);
        assert_eq!(recv(&mut r, us(0), ack(0)), vec![]);
        assert_eq!(r.stats().invalid_packets, 3);
        assert_eq!(recv(&mut r, us(1), only(0, 1024)), vec![Ack(1)]);
    }
}

#[test]
fn a_malformed_marked_packet_neither_paces_a_cnp_nor_sets_the_echo() {
    use irn_core::cc::{CcConfig, DcqcnParams};
    use irn_core::packet::{Ecn, PacketKind};
    let marked = |mut p: irn_core::Packet| {
        if let PacketKind::Data { ecn, .. } = &mut p.kind {
            *ecn = Ecn::Ce;
        }
        p
    };
    for base in [TransportConfig::roce(false), TransportConfig::irn()] {
        let cfg = TransportConfig {
            cc: CcConfig::Dcqcn(DcqcnParams::default()),
            ..base
        };
        let mut r = receiver(cfg, 0);
        // Longer than the MTU, and CE-marked: discarded before its mark is read.
        r.handle_packet(us(0), &marked(only(0, 1025)));
        assert!(r.poll_transmit(us(0)).is_none(), "no CNP, no reply");
        assert_eq!((r.stats().ecn_marked, r.stats().cnps_sent), (0, 0));
        // The next valid, unmarked packet's ACK echoes its own (absent) mark.
        r.handle_packet(us(1), &only(0, 8));
        let ack = r.poll_transmit(us(1)).expect("an ACK");
        let PacketKind::Ack { echo, .. } = ack.kind else {
            panic!("expected an ACK, got {ack:?}")
        };
        assert!(!echo.ece);
        // A valid marked packet still paces a CNP.
        r.handle_packet(us(2), &marked(only(1, 8)));
        let kinds: Vec<_> = std::iter::from_fn(|| r.poll_transmit(us(2)))
            .map(|p| matches!(p.kind, PacketKind::Cnp))
            .collect();
        assert!(kinds.contains(&true), "{kinds:?}");
    }
}

#[test]
fn zero_byte_messages_take_one_packet() {
    let mut r = receiver(TransportConfig::irn(), 0);
    assert_eq!(recv(&mut r, us(0), only(0, 0)), vec![Ack(1)]);
    assert_eq!(completions_receiver(&mut r), vec![(0, 0)]);
}

#[test]
fn acks_carry_the_message_sequence_number() {
    let mut r = receiver(TransportConfig::irn(), 0);
    r.handle_packet(us(0), &only(1, 8));
    r.handle_packet(us(0), &only(0, 8));
    let msns: Vec<u32> = std::iter::from_fn(|| r.poll_transmit(us(0)))
        .map(|p| match p.kind {
            irn_core::PacketKind::Ack { msn, .. } | irn_core::PacketKind::Nack { msn, .. } => msn,
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(msns, vec![0, 2]);
}

#[test]
fn max_reorder_distance_is_the_farthest_arrival_ahead_of_the_expected_packet() {
    // Packet numbers in arrival order, and the largest lead over the expected packet.
    let cases: &[(&str, &[u32], u64)] = &[
        ("in order", &[0, 1, 2, 3], 0),
        // 3 arrives while 1 is expected: 2 ahead; 2 arrives while 1 is still expected: 1.
        ("a late packet", &[0, 3, 2, 1], 2),
        // Duplicates and old packets are behind the expected one: they never count.
        ("duplicates", &[0, 1, 0, 1, 2], 0),
        // Ahead of the expected packet 0 by 5, then by 1.
        ("first packet late", &[5, 1, 0], 5),
    ];
    for cfg in [TransportConfig::roce(false), TransportConfig::irn()] {
        for &(name, order, want) in cases {
            let mut r = receiver(cfg, 0);
            for (i, &n) in order.iter().enumerate() {
                recv(&mut r, us(i as u64), only(n, 8));
            }
            assert_eq!(r.stats().max_reorder_distance, want, "{name} ({cfg:?})");
        }
    }
    // Beyond the bitmap: dropped, yet it arrived that far ahead.
    let mut r = receiver(TransportConfig::irn(), 0);
    recv(&mut r, us(0), only(200, 8));
    assert_eq!(r.stats().max_reorder_distance, 200);
}

/// A go-back-N receiver at explicit times (µs): each arrival and the replies it produces.
fn timed(cfg: TransportConfig, steps: &[(u64, irn_core::Packet, Vec<Reply>)]) {
    let mut r = receiver(cfg, 0);
    for (i, (t, pkt, want)) in steps.iter().enumerate() {
        assert_eq!(&recv(&mut r, us(*t), *pkt), want, "step {i} at {t} us");
    }
}

#[test]
fn go_back_n_renacks_when_the_nack_timer_expires() {
    let renack = TransportConfig {
        nack_interval: Some(irn_core::Duration::from_us(4)),
        ..TransportConfig::roce(false)
    };
    // (time in µs, arrival, replies with a 4 µs NACK timer, replies with one NACK per episode)
    let stream = [
        (0, only(0, 8), vec![Ack(1)], vec![Ack(1)]),
        (1, only(2, 8), vec![Nack(1, 2)], vec![Nack(1, 2)]), // an episode: timer to 5
        (2, only(3, 8), vec![], vec![]),
        (5, only(4, 8), vec![Nack(1, 4)], vec![]), // the timer expired: again, timer to 9
        (8, only(5, 8), vec![], vec![]),
        (9, only(2, 8), vec![Nack(1, 2)], vec![]), // timer to 13
        (10, only(1, 8), vec![Ack(2)], vec![Ack(2)]),
        (11, only(3, 8), vec![Nack(2, 3)], vec![Nack(2, 3)]), // a new expected PSN: at once
        (12, only(4, 8), vec![], vec![]),
        (13, only(2, 8), vec![Ack(3)], vec![Ack(3)]),
    ];
    let with_timer: Vec<_> = stream
        .iter()
        .map(|(t, p, w, _)| (*t, *p, w.clone()))
        .collect();
    let once: Vec<_> = stream
        .iter()
        .map(|(t, p, _, w)| (*t, *p, w.clone()))
        .collect();
    timed(renack, &with_timer);
    timed(TransportConfig::roce(false), &once);
}

#[test]
fn without_acks_only_nacks_go() {
    let cfg = TransportConfig {
        acks: irn_core::transport::Acks::None,
        ..TransportConfig::roce(true)
    };
    run(vec![Case {
        name: "acks = none",
        cfg,
        isn: 0,
        steps: vec![
            (only(0, 8), vec![]),
            (only(2, 8), vec![Nack(1, 2)]),
            (only(3, 8), vec![]),
            (only(1, 8), vec![]),
            (only(1, 8), vec![]), // a duplicate is not re-ACKed either
            (only(2, 8), vec![]),
        ],
        completions: vec![(0, 8), (1, 8), (2, 8)],
    }]);
}
