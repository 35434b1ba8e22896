//! txFree, receiveAck and timeout, packet by packet: each case is a trace of steps a driver takes
//! against one sender, with what the sender must transmit, complete and schedule.

mod common;

use common::*;
use irn_core::transport::{Growth, Resend, RtoBackoff, RtoPolicy, SlowRestart, TransportConfig};
use Step::*;

#[derive(Debug)]
enum Step {
    /// Post a message of this many bytes.
    Post(u64),
    /// Move the clock to this many microseconds.
    At(u64),
    /// Drain `poll_transmit`: exactly these packets, then nothing.
    Send(Vec<Tx>),
    /// An ACK/NACK arrives.
    In(irn_core::Packet),
    /// `handle_timeout(now)`.
    Timeout,
    /// `poll_timeout()` in microseconds.
    Timer(Option<u64>),
    /// `poll_completion()` drained: (message, bytes).
    Done(Vec<(u64, u64)>),
    Recovering(bool),
    /// `restart_window()`: slow restart's window.
    Window(Option<u32>),
}

fn run(name: &str, cfg: TransportConfig, isn: u32, steps: Vec<Step>) {
    let mut s = sender(cfg, isn);
    let mut now = us(0);
    for (i, step) in steps.into_iter().enumerate() {
        let at = format!("{name}: step {i} {step:?}");
        match step {
            Post(bytes) => {
                s.post(bytes).expect(&at);
            }
            At(t) => now = us(t),
            Send(want) => assert_eq!(drain_tx(&mut s, now), want, "{at}"),
            In(p) => s.handle_packet(now, &p),
            Timeout => s.handle_timeout(now),
            Timer(want) => assert_eq!(s.poll_timeout(), want.map(us), "{at}"),
            Done(want) => assert_eq!(completions_sender(&mut s), want, "{at}"),
            Recovering(want) => assert_eq!(s.in_recovery(), want, "{at}"),
            Window(want) => assert_eq!(s.restart_window(), want, "{at}"),
        }
    }
}

fn irn_cap(cap: u32) -> TransportConfig {
    TransportConfig {
        bdp_cap: Some(cap),
        ..TransportConfig::irn()
    }
}

const KB: u64 = 1024;

#[test]
fn irn_bdp_fc_caps_packets_in_flight() {
    run(
        "BDP-FC",
        irn_cap(4),
        0,
        vec![
            Post(10 * KB),
            Send(vec![new(0), new(1), new(2), new(3)]),
            In(ack(2)),
            Send(vec![new(4), new(5)]),
            In(nack(2, 3)), // in recovery, still capped: 2 is resent, nothing new fits
            Send(vec![re(2)]),
        ],
    );
}

#[test]
fn irn_loss_recovery_order() {
    run(
        "cumulative-ACK PSN first, then holes below the highest SACK, then new packets",
        irn_cap(8),
        0,
        vec![
            Post(12 * KB),
            Send((0..8).map(new).collect()),
            Recovering(false),
            In(nack(2, 4)), // 0, 1 and 4 arrived
            Recovering(true),
            Send(vec![re(2), re(3), new(8), new(9)]), // 4 is SACKed: not resent; cap 8 from 2
            In(nack(2, 6)),
            Send(vec![re(5)]), // look-ahead resumes past 4 and finds 5; 6 is SACKed
            In(nack(2, 7)),
            Send(vec![]), // nothing unSACKed below 7 that was not already resent
            In(ack(7)),   // 7 < recovery point 8: still recovering
            Recovering(true),
            Send(vec![new(10), new(11)]),
            In(ack(8)), // passes the recovery sequence (7)
            Recovering(false),
            In(ack(12)),
            Done(vec![(0, 12 * KB)]),
            Timer(None),
        ],
    );
}

#[test]
fn what_a_nack_resends() {
    // Eight packets out; 2 is late (reordered) and 4 arrived first: the NACK names 2 and SACKs 4.
    for resend in [Resend::Holes, Resend::Unsacked] {
        let cfg = TransportConfig {
            nack_resend: resend,
            ..irn_cap(8)
        };
        run(
            &format!("{resend:?}"),
            cfg,
            0,
            vec![
                Post(8 * KB),
                Send((0..8).map(new).collect()),
                In(nack(2, 4)),
                Recovering(true),
                Send(match resend {
                    // IRN: the cumulative-ACK packet and the holes below the highest SACK
                    Resend::Holes => vec![re(2), re(3)],
                    // ns-3: every packet not SACKed, those above the highest SACK included
                    Resend::Unsacked => [2, 3, 5, 6, 7].into_iter().map(re).collect(),
                }),
                In(nack(2, 5)),
                Send(vec![]), // 5 is not resent again in this episode
                In(ack(8)),
                Recovering(false),
                Done(vec![(0, 8 * KB)]),
            ],
        );
    }
}

#[test]
fn irn_new_nack_during_recovery_only_adds_sacks() {
    run(
        "a second NACK does not restart recovery",
        irn_cap(16),
        0,
        vec![
            Post(6 * KB),
            Send((0..6).map(new).collect()),
            In(nack(0, 1)),
            Send(vec![re(0)]),
            In(nack(0, 2)), // the retransmission of 0 is not yet back: 0 is not resent again
            Send(vec![]),
            In(nack(0, 5)), // holes 3 and 4 are below the new highest SACK
            Send(vec![re(3), re(4)]),
        ],
    );
}

#[test]
fn irn_timeouts_rto_low_and_rto_high() {
    // RTO_low = 100 us with at most N = 3 in flight; otherwise extended to RTO_high = 320 us.
    run(
        "few packets in flight: RTO_low",
        TransportConfig::irn(),
        0,
        vec![
            Post(2 * KB),
            Timer(None),
            Send(vec![new(0), new(1)]),
            Timer(Some(100)),
            At(99),
            Timeout, // early: nothing happens
            Send(vec![]),
            At(100),
            Timeout,
            Recovering(true),
            Send(vec![re(0)]), // timeout recovery starts at the cumulative ACK
            Timer(Some(300)),  // backed off: 2 × RTO_low
            In(ack(1)),        // progress restarts the timer with RTO_low
            Timer(Some(200)),
            Recovering(true),
            At(150),
            In(ack(2)),
            Recovering(false),
            Timer(None),
            Done(vec![(0, 2 * KB)]),
        ],
    );
    run(
        "many packets in flight: extended to RTO_high",
        TransportConfig::irn(),
        0,
        vec![
            Post(5 * KB),
            Send((0..5).map(new).collect()),
            At(100),
            Timeout,
            Recovering(false),
            Timer(Some(320)),
            At(320),
            Timeout,
            Send(vec![re(0)]),
            Timer(Some(520)), // re-armed with RTO_low, backed off once: 2 × 100 us
            At(330),
            In(nack(0, 2)), // SACKs after a timeout guide the same recovery
            Send(vec![re(1)]),
        ],
    );
    run(
        "at exactly N in flight the low timeout fires",
        TransportConfig::irn(),
        0,
        vec![
            Post(3 * KB),
            Send(vec![new(0), new(1), new(2)]),
            At(100),
            Timeout,
            Send(vec![re(0)]),
        ],
    );
}

#[test]
fn irn_stale_and_invalid_acks() {
    run(
        "a NACK for a PSN already acked starts nothing",
        irn_cap(8),
        0,
        vec![
            Post(4 * KB),
            Send((0..4).map(new).collect()),
            In(ack(3)),
            In(nack(1, 2)), // reordered: older than the ACK for 3
            Recovering(false),
            Send(vec![]),
            In(nack(1, 3)), // stale, but its SACK of 3 is news: still no recovery
            Recovering(false),
            Send(vec![]),
            In(ack(9)), // acknowledges packets never sent: ignored
            Done(vec![]),
            In(ack(4)),
            Done(vec![(0, 4 * KB)]),
        ],
    );
    let mut s = sender(irn_cap(8), 0);
    s.post(4 * KB).unwrap();
    drain_tx(&mut s, us(0));
    s.handle_packet(us(1), &nack(1, 2));
    s.handle_packet(us(1), &ack(0));
    s.handle_packet(us(1), &ack(9));
    s.handle_packet(us(1), &only(0, 8));
    let st = s.stats();
    assert_eq!(
        (
            st.acks_received,
            st.nacks_received,
            st.stale_acks,
            st.invalid_packets
        ),
        (1, 1, 1, 2)
    );
}

#[test]
fn irn_psn_wraps_at_2_pow_24() {
    run(
        "wrap",
        irn_cap(8),
        0xFF_FFFE,
        vec![
            Post(4 * KB),
            Send(vec![new(0xFF_FFFE), new(0xFF_FFFF), new(0), new(1)]),
            In(nack(0xFF_FFFF, 1)), // 0xFF_FFFE and 1 arrived
            Send(vec![re(0xFF_FFFF), re(0)]),
            In(ack(2)),
            Recovering(false),
            Done(vec![(0, 4 * KB)]),
        ],
    );
}

#[test]
fn irn_without_sack_bitmap_resends_one_hole_per_nack() {
    run(
        "no SACK bitmap",
        TransportConfig {
            bdp_cap: Some(8),
            ..TransportConfig::irn_without_sack()
        },
        0,
        vec![
            Post(8 * KB),
            Send((0..8).map(new).collect()),
            In(nack(1, 3)),    // 1 and 2 lost
            Send(vec![re(1)]), // no look-ahead: 2 is not known to be lost
            In(nack(1, 4)),
            Send(vec![]),   // 1 is already resent in this episode
            In(nack(2, 5)), // after 1 arrives, the receiver's next NACK names 2
            Send(vec![re(2)]),
            In(ack(8)),
            Recovering(false),
            Done(vec![(0, 8 * KB)]),
        ],
    );
}

#[test]
fn irn_without_bdp_fc_sends_the_whole_message() {
    let mut s = sender(TransportConfig::irn_without_bdp_fc(), 0);
    s.post(500 * KB).unwrap();
    assert_eq!(drain_tx(&mut s, us(0)).len(), 500);
}

#[test]
fn go_back_n_sender() {
    for (name, cfg) in [
        ("RoCE", TransportConfig::roce(false)),
        ("IRN go-back-N", TransportConfig::irn_go_back_n()),
    ] {
        run(
            name,
            cfg,
            0,
            vec![
                Post(6 * KB),
                Send((0..6).map(new).collect()),
                In(nack(2, 3)), // everything from 2 goes again
                Send(vec![re(2), re(3), re(4), re(5)]),
                In(ack(4)),
                In(nack(1, 3)), // stale: no rewind
                Send(vec![]),
                In(ack(6)),
                Done(vec![(0, 6 * KB)]),
                Timer(None),
            ],
        );
    }
    run(
        "an ACK past the rewind point skips what it acknowledges",
        TransportConfig::roce(false),
        0,
        vec![
            Post(6 * KB),
            Send((0..6).map(new).collect()),
            In(nack(2, 3)),
            In(ack(5)),
            Send(vec![re(5)]),
        ],
    );
}

#[test]
fn go_back_n_timeouts() {
    run(
        "RoCE without PFC: fixed RTO_high, then go back to the cumulative ACK",
        TransportConfig::roce(false),
        0,
        vec![
            Post(3 * KB),
            Send(vec![new(0), new(1), new(2)]),
            Timer(Some(320)),
            In(ack(1)),
            Timer(Some(320)),
            At(100),
            In(ack(1)), // no progress: the timer keeps its deadline
            Timer(Some(320)),
            At(320),
            Timeout,
            Send(vec![re(1), re(2)]),
            Timer(Some(960)), // backed off: 2 × 320 us
        ],
    );
    run(
        "RoCE with PFC: no timer at all",
        TransportConfig::roce(true),
        0,
        vec![
            Post(3 * KB),
            Send(vec![new(0), new(1), new(2)]),
            Timer(None),
            At(10_000),
            Timeout,
            Send(vec![]),
        ],
    );
    run(
        "IRN go-back-N: BDP cap and RTO_low/RTO_high",
        TransportConfig {
            bdp_cap: Some(4),
            ..TransportConfig::irn_go_back_n()
        },
        0,
        vec![
            Post(10 * KB),
            Send((0..4).map(new).collect()),
            In(nack(1, 2)),
            Send(vec![re(1), re(2), re(3), new(4)]),
            Timer(Some(100)),
            At(100),
            Timeout, // 4 in flight > N = 3: extended
            Send(vec![]),
            At(320),
            Timeout,
            Send(vec![re(1), re(2), re(3), re(4)]),
        ],
    );
}

#[test]
fn segmentation_and_completions_in_order() {
    let mut s = sender(irn_cap(8), 0);
    for bytes in [1500, 10, 0] {
        s.post(bytes).unwrap();
    }
    let pkts: Vec<_> = std::iter::from_fn(|| s.poll_transmit(us(0))).collect();
    let shape: Vec<_> = pkts
        .iter()
        .map(|p| match p.kind {
            irn_core::PacketKind::Data {
                payload_len,
                first,
                last,
                ..
            } => (p.psn.value(), payload_len, first, last),
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(
        shape,
        vec![
            (0, 1024, true, false),
            (1, 476, false, true),
            (2, 10, true, true),
            (3, 0, true, true)
        ]
    );
    assert!(pkts.iter().all(|p| p.dest_qp == RECEIVER_QP));
    s.handle_packet(us(1), &ack(1));
    assert_eq!(completions_sender(&mut s), vec![]);
    s.handle_packet(us(1), &ack(2));
    assert_eq!(completions_sender(&mut s), vec![(0, 1500)]);
    s.handle_packet(us(1), &ack(4));
    assert_eq!(completions_sender(&mut s), vec![(1, 10), (2, 0)]);
    assert!(s.is_idle());
}

#[test]
fn posting_is_bounded() {
    let mut s = sender(TransportConfig::irn(), 0);
    assert!(s.post(2 * 1024 * 1024 * 1024).is_ok()); // 2 GiB: the RDMA message limit
    let err = s.post(3 * 1024 * 1024 * 1024).unwrap_err();
    assert!(err.to_string().contains("limit"), "{err}");
}

#[test]
fn rto_policy_is_configurable() {
    let cfg = TransportConfig {
        rto: RtoPolicy::Dual {
            low: irn_core::Duration::from_us(10),
            high: irn_core::Duration::from_us(50),
            n: 1,
        },
        ..irn_cap(8)
    };
    run(
        "custom RTO",
        cfg,
        0,
        vec![
            Post(2 * KB),
            Send(vec![new(0), new(1)]),
            Timer(Some(10)),
            At(10),
            Timeout,
            Timer(Some(50)),
            At(50),
            Timeout,
            Send(vec![re(0)]),
        ],
    );
}

#[test]
fn retransmissions_wait_for_the_refetch_delay() {
    // IRN §6.3: a packet detected as lost may leave only 2 us after the detection.
    let cfg = TransportConfig {
        retransmit_delay: irn_core::Duration::from_us(2),
        ..irn_cap(4)
    };
    run(
        "retransmit delay",
        cfg,
        0,
        vec![
            Post(8 * KB),
            Send((0..4).map(new).collect()),
            At(10),
            In(nack(1, 2)),
            Send(vec![new(4)]), // 1 is being fetched again; new packets are prefetched
            Timer(Some(12)),
            At(12),
            Send(vec![re(1)]),
            At(20),
            In(nack(1, 4)), // reveals 3 as lost: fetched again from now
            Send(vec![]),
            Timer(Some(22)),
            At(21),
            In(nack(1, 2)), // old news: delays nothing
            At(22),
            Send(vec![re(3)]),
        ],
    );
    run(
        "go-back-N with a retransmit delay",
        TransportConfig {
            retransmit_delay: irn_core::Duration::from_us(2),
            ..TransportConfig::roce(false)
        },
        0,
        vec![
            Post(3 * KB),
            Send(vec![new(0), new(1), new(2)]),
            At(5),
            In(nack(1, 2)),
            Send(vec![]),
            At(7),
            Send(vec![re(1), re(2)]),
        ],
    );
}

#[test]
fn a_stream_of_nacks_does_not_delay_a_retransmission_further() {
    // One loss, then 40 NACKs, one a microsecond, each SACKing the next packet: none of them
    // reveals a new hole, so packet 0 leaves exactly 2 us after its detection (IRN §6.3).
    let mut steps = vec![Post(64 * KB), Send((0..64).map(new).collect())];
    for k in 1..=40u32 {
        let t = 9 + u64::from(k);
        steps.extend([At(t), In(nack(0, k))]);
        steps.push(Send(if t == 12 { vec![re(0)] } else { vec![] }));
        if t < 12 {
            steps.push(Timer(Some(12)));
        }
    }
    run(
        "NACK stream",
        TransportConfig {
            retransmit_delay: irn_core::Duration::from_us(2),
            ..irn_cap(64)
        },
        0,
        steps,
    );
}

#[test]
fn without_a_sack_bitmap_a_partial_ack_resends_the_next_hole() {
    run(
        "no SACK bitmap, partial ACK",
        TransportConfig {
            bdp_cap: Some(8),
            ..TransportConfig::irn_without_sack()
        },
        0,
        vec![
            Post(8 * KB),
            Send((0..8).map(new).collect()),
            In(nack(1, 3)), // 1 and 2 lost
            Send(vec![re(1)]),
            In(nack(1, 4)),
            In(nack(1, 7)),
            Send(vec![]), // every NACK has arrived; only the retransmission of 1 is left
            In(ack(2)),   // 1 arrived: the receiver's cumulative ACK stops at the next hole
            Send(vec![re(2)]), // resent now, not after a timeout
            In(ack(2)),   // a duplicate: 2 is already resent in this episode
            Send(vec![]),
            In(ack(8)),
            Recovering(false),
            Done(vec![(0, 8 * KB)]),
        ],
    );
}

#[test]
fn what_a_timeout_resends() {
    // Eight packets out; 0 and the tail 5-7 lost, 1-4 SACKed; then nothing until RTO_high.
    let tail_loss = |resend: Resend| {
        vec![
            Post(8 * KB),
            Send((0..8).map(new).collect()),
            At(10),
            In(nack(0, 1)),
            In(nack(0, 2)),
            In(nack(0, 3)),
            In(nack(0, 4)),
            Send(vec![re(0)]), // NACK recovery: the head; nothing unSACKed below the SACK
            At(100),
            Timeout, // more than N in flight: extended to RTO_high
            At(320),
            Timeout,
            Send(match resend {
                // the recovery rule again: 5-7 are taken to be still in flight
                Resend::Holes => vec![re(0)],
                // every packet not SACKed, up to the highest sent
                Resend::Unsacked => [0, 5, 6, 7].into_iter().map(re).collect(),
            }),
            In(ack(5)),
            Send(vec![]),
            In(ack(8)),
            Recovering(false),
            Done(vec![(0, 8 * KB)]),
        ]
    };
    for resend in [Resend::Holes, Resend::Unsacked] {
        let cfg = TransportConfig {
            timeout_resend: resend,
            rto_backoff: RtoBackoff::Constant,
            ..TransportConfig::irn()
        };
        run(&format!("{resend:?}"), cfg, 0, tail_loss(resend));
    }
    // Without a SACK bitmap, `Unsacked` resends everything sent after a timeout.
    run(
        "no SACK bitmap",
        TransportConfig {
            timeout_resend: Resend::Unsacked,
            ..TransportConfig::irn_without_sack()
        },
        0,
        vec![
            Post(4 * KB),
            Send((0..4).map(new).collect()),
            At(100),
            Timeout,
            At(320),
            Timeout,
            Send((0..4).map(re).collect()),
            In(ack(4)),
            Done(vec![(0, 4 * KB)]),
        ],
    );
}

#[test]
fn timeouts_back_off_until_the_cumulative_ack_moves() {
    run(
        "go-back-N: each timeout without progress doubles the next; progress restores RTO_high",
        TransportConfig::roce(false),
        0,
        vec![
            Post(3 * KB),
            Send(vec![new(0), new(1), new(2)]),
            Timer(Some(320)),
            At(320),
            Timeout,
            Send(vec![re(0), re(1), re(2)]),
            Timer(Some(960)), // 320 + 2 × 320
            At(960),
            Timeout,
            Send(vec![re(0), re(1), re(2)]),
            Timer(Some(2240)), // 960 + 4 × 320
            At(1000),
            In(nack(0, 0)), // a NACK that acknowledges nothing is no progress
            Send(vec![re(0), re(1), re(2)]),
            Timer(Some(2240)),
            At(1100),
            In(ack(1)), // progress: the timer restarts with RTO_high
            Timer(Some(1420)),
            At(1420),
            Timeout,
            Send(vec![re(1), re(2)]),
            Timer(Some(2060)), // 1420 + 2 × 320
        ],
    );
    run(
        "IRN: RTO_low and its extension to RTO_high both back off",
        TransportConfig::irn(),
        0,
        vec![
            Post(5 * KB),
            Send((0..5).map(new).collect()),
            At(100),
            Timeout, // 5 in flight > N: extended to RTO_high, not a timeout
            Timer(Some(320)),
            At(320),
            Timeout,
            Send(vec![re(0)]),
            Timer(Some(520)), // 320 + 2 × RTO_low
            At(520),
            Timeout, // still 5 in flight: extended by 2 × (RTO_high - RTO_low)
            Timer(Some(960)),
            At(960),
            Timeout,
            Send(vec![re(0)]),
            Timer(Some(1360)), // 960 + 4 × RTO_low
        ],
    );
}

#[test]
fn timeout_backoff_stops_at_the_cap_and_can_be_turned_off() {
    // The k-th timeout (k = 1, 2, ...) arms the next one 320 us × 2^min(k, 10) later.
    let mut steps = vec![Post(KB), Send(vec![new(0)]), Timer(Some(320))];
    let mut at = 320;
    for k in 1..=12u32 {
        at_timeout(&mut steps, at);
        at += 320 * u64::from(TransportConfig::MAX_RTO_BACKOFF.min(1 << k));
        steps.push(Timer(Some(at)));
    }
    assert_eq!(
        at,
        320 * (2 + 4 + 8 + 16 + 32 + 64 + 128 + 256 + 512 + 1024 * 3) + 320
    );
    run(
        "capped at 1024 × RTO_high",
        TransportConfig::roce(false),
        0,
        steps,
    );

    let constant = TransportConfig {
        rto_backoff: RtoBackoff::Constant,
        ..TransportConfig::roce(false)
    };
    let mut steps = vec![Post(KB), Send(vec![new(0)])];
    for k in 1..=3 {
        steps.push(Timer(Some(320 * k)));
        at_timeout(&mut steps, 320 * k);
    }
    steps.push(Timer(Some(1280)));
    run("constant: every timeout waits RTO_high", constant, 0, steps);
}

/// A timeout at `t` us that resends packet 0, the only one.
fn at_timeout(steps: &mut Vec<Step>, t: u64) {
    steps.extend([At(t), Timeout, Send(vec![re(0)])]);
}

/// `cfg` with Eunomia's WRITE rule: each message's last packet waits for the cumulative ACK.
fn hold(cfg: TransportConfig) -> TransportConfig {
    TransportConfig {
        hold_last_packet: true,
        ..cfg
    }
}

#[test]
fn a_held_last_packet_leaves_right_after_the_cumulative_ack_reaches_it() {
    for (name, cfg) in [
        ("IRN", TransportConfig::irn()),
        ("RoCE", TransportConfig::roce(true)),
        ("IRN go-back-N", TransportConfig::irn_go_back_n()),
    ] {
        run(
            name,
            hold(cfg),
            0,
            vec![
                Post(4 * KB),
                Send(vec![new(0), new(1), new(2)]), // 3 is the last packet: held
                In(ack(2)),
                Send(vec![]), // 2 is not acknowledged yet
                In(ack(3)),
                Send(vec![new(3)]),
                In(ack(4)),
                Done(vec![(0, 4 * KB)]),
                Timer(None),
            ],
        );
    }
    run(
        "without the hold the last packet goes with the rest",
        TransportConfig::irn(),
        0,
        vec![Post(4 * KB), Send((0..4).map(new).collect())],
    );
    run(
        "a one-packet message has nothing before it: it leaves at once",
        hold(TransportConfig::irn()),
        0,
        vec![Post(100), Send(vec![new(0)])],
    );
}

#[test]
fn each_message_holds_its_own_last_packet_and_what_follows_waits() {
    run(
        "messages of 2, 1 and 2 packets",
        hold(TransportConfig::irn()),
        0,
        vec![
            Post(2 * KB),
            Post(KB),
            Post(2 * KB),
            Send(vec![new(0)]),
            In(ack(1)),
            Send(vec![new(1)]), // message 1's last packet: 2 waits behind it
            In(ack(2)),
            Send(vec![new(2), new(3)]), // message 2's only packet, then message 3's first
            In(ack(4)),
            Send(vec![new(4)]),
            In(ack(5)),
            Done(vec![(0, 2 * KB), (1, KB), (2, 2 * KB)]),
        ],
    );
    run(
        "a message posted after the last one left holds its own last packet",
        hold(TransportConfig::irn()),
        0,
        vec![
            Post(KB),
            Send(vec![new(0)]),
            In(ack(1)),
            Post(2 * KB),
            Send(vec![new(1)]),
            In(ack(2)),
            Send(vec![new(2)]),
        ],
    );
}

#[test]
fn recovery_resends_before_a_held_last_packet_and_never_it_early() {
    run(
        "go-back-N rewinds up to the held packet",
        hold(TransportConfig::roce(false)),
        0,
        vec![
            Post(5 * KB),
            Send((0..4).map(new).collect()),
            In(nack(1, 2)),
            Send(vec![re(1), re(2), re(3)]), // 4 still waits
            In(ack(4)),
            Send(vec![new(4)]),
        ],
    );
    run(
        "IRN resends the holes, then waits for the cumulative ACK",
        hold(TransportConfig::irn()),
        0,
        vec![
            Post(5 * KB),
            Send((0..4).map(new).collect()),
            In(nack(1, 3)),
            Recovering(true),
            Send(vec![re(1), re(2)]), // 3 is SACKed; 4 is held
            In(ack(4)),
            Recovering(false),
            Send(vec![new(4)]),
        ],
    );
    run(
        "a timeout resends what precedes the held packet",
        hold(TransportConfig::roce(false)),
        0,
        vec![
            Post(3 * KB),
            Send(vec![new(0), new(1)]), // both lost
            Timer(Some(320)),
            At(320),
            Timeout,
            Send(vec![re(0), re(1)]),
            At(330),
            In(ack(2)),
            Send(vec![new(2)]),
        ],
    );
}

#[test]
fn a_lost_last_packet_is_recovered_by_the_timeout() {
    for (name, cfg, rto) in [
        ("RoCE", TransportConfig::roce(false), 320),
        ("IRN", TransportConfig::irn(), 100),
    ] {
        run(
            name,
            hold(cfg),
            0,
            vec![
                Post(2 * KB),
                Send(vec![new(0)]),
                At(10),
                In(ack(1)),
                Send(vec![new(1)]), // lost
                Timer(Some(10 + rto)),
                At(10 + rto),
                Timeout,
                Send(vec![re(1)]),
                In(ack(2)),
                Done(vec![(0, 2 * KB)]),
                Timer(None),
            ],
        );
    }
}

/// RoCE without PFC (RTO_high = 320 µs) with a transmit window of `window` packets and, if
/// `growth` is given, slow restart by half.
fn windowed(window: u32, growth: Option<Growth>) -> TransportConfig {
    TransportConfig {
        tx_window: Some(window),
        slow_restart: growth.map(|growth| SlowRestart {
            factor: 0.5,
            growth,
        }),
        ..TransportConfig::roce(false)
    }
}

#[test]
fn go_back_n_transmit_window_caps_packets_beyond_the_cumulative_ack() {
    run(
        "tx_window = 4",
        windowed(4, None),
        0,
        vec![
            Post(10 * KB),
            Send((0..4).map(new).collect()),
            In(ack(2)),
            Send(vec![new(4), new(5)]),
            // The rewind resends from 2, four at most: the window does not shrink.
            In(nack(2, 4)),
            Send(vec![re(2), re(3), re(4), re(5)]),
            Window(None),
            In(ack(6)),
            Send((6..10).map(new).collect()),
        ],
    );
}

#[test]
fn slow_restart_on_a_nack() {
    run(
        "additive: 8 → 4, then +1 per window's worth of ACKed packets",
        windowed(8, Some(Growth::Additive)),
        0,
        vec![
            Post(20 * KB),
            Send((0..8).map(new).collect()),
            Window(Some(8)),
            In(nack(2, 3)), // 0 and 1 arrived; a full window does not grow
            Window(Some(4)),
            Send(vec![re(2), re(3), re(4), re(5)]),
            In(nack(1, 3)), // stale: no rewind, no cut
            Window(Some(4)),
            Send(vec![]),
            In(ack(4)), // 2 of the 4 needed for +1
            Window(Some(4)),
            Send(vec![re(6), re(7)]),
            In(ack(6)), // 4 ACKed: 5
            Window(Some(5)),
            Send(vec![new(8), new(9), new(10)]),
            In(ack(11)), // 5 more: 6
            Window(Some(6)),
            Send((11..17).map(new).collect()),
        ],
    );
    run(
        "slow start: 8 → 4, then +1 per ACKed packet",
        windowed(8, Some(Growth::SlowStart)),
        0,
        vec![
            Post(20 * KB),
            Send((0..8).map(new).collect()),
            In(nack(2, 3)),
            Window(Some(4)),
            Send(vec![re(2), re(3), re(4), re(5)]),
            In(ack(4)), // +2
            Window(Some(6)),
            Send(vec![re(6), re(7), new(8), new(9)]),
            In(ack(6)), // +2: full again
            Window(Some(8)),
            Send((10..14).map(new).collect()),
            In(nack(6, 8)), // a new episode cuts the full window again
            Window(Some(4)),
            Send(vec![re(6), re(7), re(8), re(9)]),
        ],
    );
}

#[test]
fn slow_restart_on_a_timeout() {
    run(
        "additive",
        windowed(8, Some(Growth::Additive)),
        0,
        vec![
            Post(20 * KB),
            Send((0..8).map(new).collect()),
            Timer(Some(320)),
            At(320),
            Timeout,
            Window(Some(4)),
            Send(vec![re(0), re(1), re(2), re(3)]),
            In(ack(4)), // 4 ACKed: 5
            Window(Some(5)),
            Send(vec![re(4), re(5), re(6), re(7), new(8)]),
        ],
    );
    run(
        "slow start, and a second timeout cuts the regrown window",
        windowed(8, Some(Growth::SlowStart)),
        0,
        vec![
            Post(20 * KB),
            Send((0..8).map(new).collect()),
            At(320),
            Timeout,
            Window(Some(4)),
            Send(vec![re(0), re(1), re(2), re(3)]),
            In(ack(3)), // +3
            Window(Some(7)),
            Send(vec![re(4), re(5), re(6), re(7), new(8), new(9)]),
            In(ack(10)), // +7, capped at the transmit window
            Window(Some(8)),
            Send((10..18).map(new).collect()),
            Timer(Some(640)),
            At(640),
            Timeout,
            Window(Some(4)),
            Send(vec![re(10), re(11), re(12), re(13)]),
        ],
    );
}

/// A window-based controller starts at what the sender may have in flight: RoCE's transmit
/// window when set (else its tracking window), IRN's BDP cap, whichever bounds; DCTCP's own
/// `initial_window` overrides it.
#[test]
fn a_window_controller_starts_at_the_flight_limit() {
    use irn_core::cc::{AimdParams, CcConfig, DctcpParams};
    let dctcp = CcConfig::Dctcp(DctcpParams::default());
    let aimd = CcConfig::Aimd(AimdParams::default());
    let told = CcConfig::Dctcp(DctcpParams {
        initial_window: Some(40),
        ..DctcpParams::default()
    });
    let tracking = TransportConfig::DEFAULT_TRACKING_WINDOW;
    // (case, transport, controller, its first window)
    let table = [
        (
            "RoCE, no transmit window",
            TransportConfig::roce(true),
            dctcp,
            tracking,
        ),
        ("RoCE, tx_window = 104", windowed(104, None), dctcp, 104),
        (
            "RoCE, tx_window = 104, AIMD",
            windowed(104, None),
            aimd,
            104,
        ),
        (
            "RoCE, tx_window = 104, initial_window = 40",
            windowed(104, None),
            told,
            40,
        ),
        ("IRN, BDP cap 110", irn_cap(110), dctcp, 110),
        (
            "RoCE, tx_window above the tracking window",
            windowed(tracking, None),
            dctcp,
            tracking,
        ),
    ];
    for (case, transport, cc, first) in table {
        let s = sender(TransportConfig { cc, ..transport }, 0);
        assert_eq!(s.window(), Some(first), "{case}");
    }
}

/// A rate-paced sender spaces its packets by their frames on the wire: after DCQCN's first cut
/// (α = 1: half of 40 Gb/s), a full packet's frame at 20 Gb/s, with RoCEv2's 62 B of framing
/// or another simulator's 48 B.
#[test]
fn pacing_spaces_packets_by_their_frames() {
    use irn_core::cc::{CcConfig, DcqcnParams};
    use irn_core::packet::PacketKind;
    for (framing, gap_ps) in [(62, 1086 * 400), (48, 1072 * 400)] {
        let cfg = TransportConfig {
            cc: CcConfig::Dcqcn(DcqcnParams::default()),
            data_framing: framing,
            ..TransportConfig::roce(true)
        };
        let mut s = sender(cfg, 0);
        let cnp = irn_core::Packet {
            kind: PacketKind::Cnp,
            ..ack(0)
        };
        s.handle_packet(us(0), &cnp);
        s.post(4 * u64::from(MTU)).unwrap();
        assert_eq!(take_tx(&mut s, us(0), 4), vec![new(0)], "{framing}");
        let next = s.poll_timeout().expect("the next packet's time");
        assert_eq!(
            next,
            us(0) + irn_core::Duration::from_ps(gap_ps),
            "{framing}"
        );
    }
}
