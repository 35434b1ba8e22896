//! IRN §5 verbs, case by case: each test drives two queue pairs packet by packet, delivering
//! (or dropping) exactly the packets it names, in the order it names, and checks what lands in
//! memory, what each side sends back, and which completions appear when.

use irn_core::cc::{CcConfig, DcqcnParams};
use irn_core::transport::TransportConfig;
use irn_core::verbs::{
    Cqe, Ext, Opcode, QpEndpoint, QueuePair, RecvCqe, RecvId, RecvStatus, RecvWqe, SendCqe,
    SendKind, SendWqe, Side, VerbsError, VerbsPacket, WqeId,
};
use irn_core::{Duration, Ecn, Psn, Qpn, Time};

const MEM: u64 = 64 * 1024;
const MTU: u64 = 1024;

/// Both ends start their PSN spaces just before the 24-bit wrap, and differently, so every
/// test also crosses the wrap and would catch one space's PSNs used for the other.
fn endpoints() -> (QpEndpoint, QpEndpoint) {
    let a = QpEndpoint {
        qpn: Qpn::new(0xA),
        request_isn: Psn::new(0xFF_FFFE),
        response_isn: Psn::new(0x50),
        memory_bytes: MEM,
    };
    let b = QpEndpoint {
        qpn: Qpn::new(0xB),
        request_isn: Psn::new(0x1234),
        response_isn: Psn::new(0xFF_FFFF),
        memory_bytes: MEM,
    };
    (a, b)
}

/// Queue pairs A and B, each memory filled with a pattern distinct per end and per byte.
fn pair(cfg: TransportConfig) -> (QueuePair, QueuePair) {
    let (a, b) = endpoints();
    let mut qa = QueuePair::new(cfg, a, b).unwrap();
    let mut qb = QueuePair::new(cfg, b, a).unwrap();
    for (i, x) in qa.memory_mut().as_bytes_mut().iter_mut().enumerate() {
        *x = (i * 7 + 1) as u8;
    }
    for (i, x) in qb.memory_mut().as_bytes_mut().iter_mut().enumerate() {
        *x = (i * 13 + 5) as u8;
    }
    (qa, qb)
}

fn us(t: u64) -> Time {
    Time::ZERO + Duration::from_us(t)
}

fn drain(qp: &mut QueuePair, now: Time) -> Vec<VerbsPacket> {
    std::iter::from_fn(|| qp.poll_transmit(now)).collect()
}

fn deliver(qp: &mut QueuePair, now: Time, pkts: &[&VerbsPacket]) {
    for p in pkts {
        qp.handle_packet(now, p);
    }
}

fn cqes(qp: &mut QueuePair) -> Vec<Cqe> {
    std::iter::from_fn(|| qp.poll_completion()).collect()
}

fn opcodes(pkts: &[VerbsPacket]) -> Vec<Opcode> {
    pkts.iter().map(|p| p.opcode).collect()
}

fn psns(pkts: &[VerbsPacket]) -> Vec<u32> {
    pkts.iter().map(|p| p.psn.value()).collect()
}

fn bytes(qp: &QueuePair, addr: u64, len: u64) -> Vec<u8> {
    qp.memory().read(addr, len).unwrap().to_vec()
}

/// (ACK or NACK, cumulative PSN, SACK, MSN) of a request acknowledgement.
fn ack_of(p: &VerbsPacket) -> (Opcode, u32, Option<u32>, u32) {
    match p.ext {
        Ext::Ack { msn, sack, .. } => (p.opcode, p.psn.value(), sack.map(Psn::value), msn),
        _ => panic!("not an ACK: {p:?}"),
    }
}

fn send_cqe(id: u64, kind: SendKind, byte_len: u32, atomic_original: Option<u64>) -> Cqe {
    Cqe::Send(SendCqe {
        id: WqeId(id),
        kind,
        byte_len,
        atomic_original,
    })
}

fn recv_cqe(id: u64, byte_len: u32, imm: Option<u32>) -> Cqe {
    Cqe::Recv(RecvCqe {
        id: RecvId(id),
        byte_len,
        imm,
        status: RecvStatus::Success,
    })
}

const A_REQ: u32 = 0xFF_FFFE;

fn a_req(n: u32) -> u32 {
    Psn::new(A_REQ).add(n).value()
}

#[test]
fn write_last_packet_first_is_placed_at_once_and_completes_when_whole() {
    let (mut a, mut b) = pair(TransportConfig::irn());
    let src = bytes(&a, 0x1000, 3000);
    a.post_send(SendWqe::write(0x1000, 0x2000, 3000)).unwrap();
    let w = drain(&mut a, us(0));
    assert_eq!(
        opcodes(&w),
        [Opcode::WriteFirst, Opcode::WriteMiddle, Opcode::WriteLast]
    );
    assert_eq!(psns(&w), [a_req(0), a_req(1), a_req(2)]);
    for (i, p) in w.iter().enumerate() {
        // §5.3.1: every Write packet carries a RETH, so each can be placed alone.
        let Ext::Write { reth, imm: None } = p.ext else {
            panic!("{p:?}")
        };
        assert_eq!((reth.addr, reth.len), (0x2000 + i as u64 * MTU, 3000));
        assert_eq!(p.header_bytes(), 16);
    }

    deliver(&mut b, us(2), &[&w[2]]);
    assert_eq!(bytes(&b, 0x2000 + 2048, 952), src[2048..]);
    let r = drain(&mut b, us(2));
    assert_eq!(
        r.iter().map(ack_of).collect::<Vec<_>>(),
        [(Opcode::Nack, a_req(0), Some(a_req(2)), 0)]
    );

    deliver(&mut b, us(3), &[&w[0]]);
    deliver(&mut b, us(4), &[&w[1]]);
    assert_eq!(bytes(&b, 0x2000, 3000), src);
    let r2 = drain(&mut b, us(4));
    assert_eq!(
        r2.iter().map(ack_of).collect::<Vec<_>>(),
        [
            (Opcode::Ack, a_req(1), None, 0),
            (Opcode::Ack, a_req(3), None, 1)
        ]
    );

    deliver(&mut a, us(5), &[&r[0], &r2[0]]);
    assert_eq!(cqes(&mut a), [], "not every packet is acknowledged yet");
    deliver(&mut a, us(6), &[&r2[1]]);
    assert_eq!(cqes(&mut a), [send_cqe(0, SendKind::Write, 3000, None)]);
    assert!(a.is_idle());
}

#[test]
fn send_last_packet_first_fills_the_receive_buffer_and_completes_in_order() {
    let (mut a, mut b) = pair(TransportConfig::irn());
    let src = bytes(&a, 0x1000, 2500);
    b.post_recv(RecvWqe {
        addr: 0x8000,
        len: 4096,
    })
    .unwrap();
    a.post_send(SendWqe::send(0x1000, 2500)).unwrap();
    let s = drain(&mut a, us(0));
    assert_eq!(
        opcodes(&s),
        [Opcode::SendFirst, Opcode::SendMiddle, Opcode::SendLast]
    );
    for (i, p) in s.iter().enumerate() {
        assert_eq!(
            p.ext,
            Ext::Send {
                recv_wqe_sn: 0,
                offset: i as u32
            }
        );
        assert_eq!(p.header_bytes(), 6);
    }
    deliver(&mut b, us(1), &[&s[2]]);
    assert_eq!(bytes(&b, 0x8000 + 2048, 452), src[2048..]);
    deliver(&mut b, us(1), &[&s[0]]);
    assert_eq!(cqes(&mut b), [], "the middle packet is still missing");
    assert_eq!(b.stats().responder.premature_cqes, 1);
    deliver(&mut b, us(2), &[&s[1]]);
    assert_eq!(bytes(&b, 0x8000, 2500), src);
    assert_eq!(cqes(&mut b), [recv_cqe(0, 2500, None)]);
    assert_eq!(b.posted_recvs(), 0);
}

#[test]
fn read_request_overtaking_a_write_waits_and_returns_the_written_bytes() {
    let (mut a, mut b) = pair(TransportConfig::irn());
    let src = bytes(&a, 0x1000, 2000);
    assert_ne!(bytes(&b, 0x3000, 2000), src);
    a.post_send(SendWqe::write(0x1000, 0x3000, 2000)).unwrap();
    a.post_send(SendWqe::read(0x6000, 0x3000, 2000)).unwrap();
    let q = drain(&mut a, us(0));
    assert_eq!(
        opcodes(&q),
        [Opcode::WriteFirst, Opcode::WriteLast, Opcode::ReadRequest]
    );
    assert!(matches!(q[2].ext, Ext::ReadRequest { read_wqe_sn: 0, .. }));

    // The Read arrives first: it waits in the Read WQE buffer, and nothing is read yet.
    deliver(&mut b, us(1), &[&q[2]]);
    assert_eq!(opcodes(&drain(&mut b, us(1))), [Opcode::Nack]);
    deliver(&mut b, us(1), &[&q[1]]);
    assert_eq!(opcodes(&drain(&mut b, us(1))), [Opcode::Nack]);
    let st = b.stats().responder;
    assert_eq!((st.reads_parked, st.reads_executed), (1, 0));

    // The Write's first packet completes everything before the Read, which now runs.
    deliver(&mut b, us(2), &[&q[0]]);
    let r = drain(&mut b, us(2));
    assert_eq!(
        opcodes(&r),
        [
            Opcode::Ack,
            Opcode::ReadResponseFirst,
            Opcode::ReadResponseLast
        ]
    );
    assert_eq!(ack_of(&r[0]), (Opcode::Ack, a_req(3), None, 2));
    let data: Vec<u8> = r[1..].iter().flat_map(|p| p.payload.clone()).collect();
    assert_eq!(data, src);

    // Responses before the Write's ACK: the Read is done, but completes after the Write.
    deliver(&mut a, us(3), &[&r[2], &r[1]]);
    assert_eq!(bytes(&a, 0x6000, 2000), src);
    assert_eq!(cqes(&mut a), []);
    deliver(&mut a, us(3), &[&r[0]]);
    assert_eq!(
        cqes(&mut a),
        [
            send_cqe(0, SendKind::Write, 2000, None),
            send_cqe(1, SendKind::Read, 2000, None)
        ]
    );
}

#[test]
fn a_retransmitted_atomic_executes_once_and_its_result_is_replayed() {
    let (mut a, mut b) = pair(TransportConfig::irn());
    b.memory_mut().write_u64(0x100, 40).unwrap();
    a.post_send(SendWqe::fetch_add(0x200, 0x100, 2)).unwrap();
    a.post_send(SendWqe::compare_swap(0x208, 0x100, 42, 7))
        .unwrap();
    let q = drain(&mut a, us(0));
    assert_eq!(opcodes(&q), [Opcode::AtomicRequest, Opcode::AtomicRequest]);
    deliver(&mut b, us(1), &[&q[0], &q[1]]);
    assert_eq!(b.memory().read_u64(0x100), Ok(7));
    let lost = drain(&mut b, us(1));
    assert_eq!(
        opcodes(&lost),
        [
            Opcode::Ack,
            Opcode::Ack,
            Opcode::AtomicResponse,
            Opcode::AtomicResponse
        ]
    );
    // Every ACK and response is lost. The requester's timer resends the oldest request (IRN
    // resends the cumulative-ACK packet first; nothing is SACKed)...
    let t = a.poll_timeout().unwrap();
    assert_eq!(t, us(100), "RTO_low: at most N packets in flight");
    a.handle_timeout(t);
    let again = drain(&mut a, t);
    assert_eq!(psns(&again), [a_req(0)]);
    assert!(again[0].retransmission);
    // ...which the responder only re-acknowledges: the Atomic does not run again.
    deliver(&mut b, t, &[&again[0]]);
    let acks = drain(&mut b, t);
    assert_eq!(
        acks.iter().map(ack_of).collect::<Vec<_>>(),
        [(Opcode::Ack, a_req(2), None, 2)]
    );
    assert_eq!(b.memory().read_u64(0x100), Ok(7));
    assert_eq!(b.stats().responder.atomics_executed, 2);
    assert_eq!(b.stats().responder.duplicates, 1);
    deliver(&mut a, t, &[&acks[0]]);
    assert_eq!(cqes(&mut a), [], "acknowledged, but no result yet");

    // The responder's read timer resends the responses, one round each, with the results it
    // kept when the Atomics ran.
    let mut got = Vec::new();
    for original in [40, 42] {
        let t2 = b.poll_timeout().expect("the read timer runs");
        b.handle_timeout(t2);
        let replay = drain(&mut b, t2);
        assert_eq!(
            replay
                .iter()
                .map(|p| (p.opcode, p.ext, p.retransmission))
                .collect::<Vec<_>>(),
            [(
                Opcode::AtomicResponse,
                Ext::AtomicResponse { original },
                true
            )]
        );
        deliver(&mut a, t2, &[&replay[0]]);
        got.extend(cqes(&mut a));
        let read_ack = drain(&mut a, t2);
        assert_eq!(opcodes(&read_ack), [Opcode::ReadAck]);
        deliver(&mut b, t2, &[&read_ack[0]]);
    }
    assert_eq!(
        got,
        [
            send_cqe(0, SendKind::FetchAdd, 8, Some(40)),
            send_cqe(1, SendKind::CompareSwap, 8, Some(42))
        ]
    );
    assert_eq!(a.memory().read_u64(0x200), Ok(40));
    assert_eq!(a.memory().read_u64(0x208), Ok(42));
    assert_eq!(b.memory().read_u64(0x100), Ok(7));
    assert_eq!(b.stats().responder.atomics_executed, 2);
    assert!(a.is_idle() && b.is_idle());
}

#[test]
fn sends_arriving_out_of_order_fill_the_receive_wqes_their_recv_wqe_sn_names() {
    let (mut a, mut b) = pair(TransportConfig::irn());
    let r0 = RecvWqe {
        addr: 0x8000,
        len: 1000,
    };
    let r1 = RecvWqe {
        addr: 0x9000,
        len: 1000,
    };
    assert_eq!(b.post_recv(r0), Ok(RecvId(0)));
    assert_eq!(b.post_recv(r1), Ok(RecvId(1)));
    a.post_send(SendWqe::send(0x1000, 500)).unwrap();
    a.post_send(SendWqe::send(0x1400, 700)).unwrap();
    let s = drain(&mut a, us(0));
    assert_eq!(
        s.iter().map(|p| p.ext).collect::<Vec<_>>(),
        [
            Ext::Send {
                recv_wqe_sn: 0,
                offset: 0
            },
            Ext::Send {
                recv_wqe_sn: 1,
                offset: 0
            }
        ]
    );
    let untouched = bytes(&b, 0x8000, 1000);
    deliver(&mut b, us(1), &[&s[1]]);
    assert_eq!(bytes(&b, 0x9000, 700), bytes(&a, 0x1400, 700));
    assert_eq!(bytes(&b, 0x8000, 1000), untouched);
    assert_eq!(cqes(&mut b), []);
    deliver(&mut b, us(2), &[&s[0]]);
    assert_eq!(bytes(&b, 0x8000, 500), bytes(&a, 0x1000, 500));
    assert_eq!(
        cqes(&mut b),
        [recv_cqe(0, 500, None), recv_cqe(1, 700, None)]
    );
}

#[test]
fn premature_cqes_are_held_until_every_earlier_packet_arrives() {
    let (mut a, mut b) = pair(TransportConfig::irn());
    for i in 0..2 {
        b.post_recv(RecvWqe {
            addr: 0x8000 + i * 0x1000,
            len: 4096,
        })
        .unwrap();
    }
    a.post_send(SendWqe::write_imm(0x1000, 0x2000, 2000, 0xBEEF))
        .unwrap();
    a.post_send(SendWqe::send(0x3000, 100)).unwrap();
    let q = drain(&mut a, us(0));
    assert_eq!(
        opcodes(&q),
        [Opcode::WriteFirst, Opcode::WriteLastImm, Opcode::SendOnly]
    );
    // Only the last Write-with-immediate packet names (and consumes) a receive WQE.
    assert!(matches!(q[0].ext, Ext::Write { imm: None, .. }));
    assert!(
        matches!(q[1].ext, Ext::Write { imm: Some(i), .. } if i.data == 0xBEEF && i.recv_wqe_sn == 0)
    );
    assert_eq!(q[1].header_bytes(), 19);

    deliver(&mut b, us(1), &[&q[2], &q[1]]);
    assert_eq!(cqes(&mut b), []);
    assert_eq!(b.stats().responder.premature_cqes, 2);
    deliver(&mut b, us(2), &[&q[0]]);
    assert_eq!(
        cqes(&mut b),
        [recv_cqe(0, 2000, Some(0xBEEF)), recv_cqe(1, 100, None)]
    );
    assert_eq!(bytes(&b, 0x2000, 2000), bytes(&a, 0x1000, 2000));
}

#[test]
fn requests_and_read_responses_use_separate_psn_spaces() {
    let (mut a, mut b) = pair(TransportConfig::irn());
    a.post_send(SendWqe::write(0x1000, 0x2000, 1000)).unwrap();
    a.post_send(SendWqe::read(0x6000, 0x4000, 3000)).unwrap();
    a.post_send(SendWqe::write(0x1400, 0x2400, 1000)).unwrap();
    a.post_send(SendWqe::read(0x7000, 0x4000, 0)).unwrap();
    a.post_send(SendWqe::fetch_add(0x7100, 0x5000, 1)).unwrap();
    let q = drain(&mut a, us(0));
    // sPSN: one per request packet, whatever the Reads will bring back.
    assert_eq!(psns(&q), (0..5).map(a_req).collect::<Vec<_>>());
    deliver(&mut b, us(1), &q.iter().collect::<Vec<_>>());
    let r = drain(&mut b, us(1));
    let (acks, responses): (Vec<_>, Vec<_>) = r.iter().partition(|p| p.opcode == Opcode::Ack);
    assert_eq!(
        acks.last().map(|p| ack_of(p)),
        Some((Opcode::Ack, a_req(5), None, 5))
    );
    // rPSN: the responder's own space, one per response packet (3 + 1 + 1).
    let b_resp = Psn::new(0xFF_FFFF);
    assert_eq!(
        responses.iter().map(|p| p.psn).collect::<Vec<_>>(),
        (0..5).map(|i| b_resp.add(i)).collect::<Vec<_>>()
    );
    // Deliver the responses backwards: each is placed at once and read-NACKed.
    let backwards: Vec<&VerbsPacket> = responses.iter().rev().copied().collect();
    deliver(&mut a, us(2), &backwards);
    let ra = drain(&mut a, us(2));
    assert_eq!(
        opcodes(&ra),
        [
            Opcode::ReadNack,
            Opcode::ReadNack,
            Opcode::ReadNack,
            Opcode::ReadNack,
            Opcode::ReadAck
        ]
    );
    assert_eq!(ra[4].psn, b_resp.add(5));
    assert_eq!(a.expected_response_psn(), b_resp.add(5));
    assert_eq!(bytes(&a, 0x6000, 3000), bytes(&b, 0x4000, 3000));
    deliver(&mut a, us(3), &acks);
    assert_eq!(a.request_cumulative_ack(), Psn::new(a_req(5)));
    let kinds: Vec<_> = cqes(&mut a)
        .into_iter()
        .map(|c| match c {
            Cqe::Send(s) => (s.id.0, s.kind),
            Cqe::Recv(_) => panic!(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            (0, SendKind::Write),
            (1, SendKind::Read),
            (2, SendKind::Write),
            (3, SendKind::Read),
            (4, SendKind::FetchAdd)
        ]
    );
    // The read ACKs let the responder forget the responses.
    deliver(&mut b, us(4), &ra.iter().collect::<Vec<_>>());
    assert!(b.is_idle());
    assert!(a.is_idle());
}

#[test]
fn each_psn_space_has_its_own_bdp_window() {
    let cfg = TransportConfig {
        bdp_cap: Some(4),
        ..TransportConfig::irn()
    };
    let (mut a, mut b) = pair(cfg);
    a.post_send(SendWqe::read(0, 0, 10 * 1024)).unwrap();
    for i in 0..4 {
        a.post_send(SendWqe::write(0x4000, 0x4000 + i * 100, 100))
            .unwrap();
    }
    let q = drain(&mut a, us(0));
    assert_eq!(
        q.len(),
        4,
        "BDP-FC: 4 request packets, the Read's 10 responses aside"
    );
    deliver(&mut b, us(1), &q.iter().collect::<Vec<_>>());
    let r = drain(&mut b, us(1));
    let responses = r
        .iter()
        .filter(|p| p.opcode.flow() == irn_core::verbs::Flow::Response);
    assert_eq!(responses.count(), 4, "BDP-FC on the responses, separately");
}

#[test]
fn a_send_without_a_receive_wqe_is_dropped_until_one_is_posted() {
    let (mut a, mut b) = pair(TransportConfig::irn());
    a.post_send(SendWqe::send(0, 64)).unwrap();
    let s = drain(&mut a, us(0));
    deliver(&mut b, us(1), &[&s[0]]);
    assert_eq!(drain(&mut b, us(1)), [], "receiver not ready: no ACK");
    assert_eq!(b.stats().responder.rnr_drops, 1);
    b.post_recv(RecvWqe {
        addr: 0x100,
        len: 64,
    })
    .unwrap();
    let t = a.poll_timeout().unwrap();
    a.handle_timeout(t);
    let again = drain(&mut a, t);
    deliver(&mut b, t, &[&again[0]]);
    assert_eq!(cqes(&mut b), [recv_cqe(0, 64, None)]);
    let acks = drain(&mut b, t);
    deliver(&mut a, t, &[&acks[0]]);
    assert_eq!(cqes(&mut a), [send_cqe(0, SendKind::Send, 64, None)]);
}

#[test]
fn a_send_longer_than_its_buffer_places_what_fits() {
    let (mut a, mut b) = pair(TransportConfig::irn());
    b.post_recv(RecvWqe {
        addr: 0x100,
        len: 1500,
    })
    .unwrap();
    let after = bytes(&b, 0x100 + 1500, 600);
    a.post_send(SendWqe::send(0x1000, 2000)).unwrap();
    let s = drain(&mut a, us(0));
    deliver(&mut b, us(1), &s.iter().collect::<Vec<_>>());
    assert_eq!(bytes(&b, 0x100, 1500), bytes(&a, 0x1000, 1500));
    assert_eq!(bytes(&b, 0x100 + 1500, 600), after);
    assert_eq!(
        cqes(&mut b),
        [Cqe::Recv(RecvCqe {
            id: RecvId(0),
            byte_len: 2000,
            imm: None,
            status: RecvStatus::LengthError
        })]
    );
}

#[test]
fn go_back_n_discards_out_of_order_packets_and_resends_from_the_hole() {
    let (mut a, mut b) = pair(TransportConfig::irn_go_back_n());
    let before = bytes(&b, 0x2000, 3000);
    a.post_send(SendWqe::write(0x1000, 0x2000, 3000)).unwrap();
    let w = drain(&mut a, us(0));
    deliver(&mut b, us(1), &[&w[1], &w[2]]);
    assert_eq!(
        bytes(&b, 0x2000, 3000),
        before,
        "nothing placed out of order"
    );
    let nack = drain(&mut b, us(1));
    assert_eq!(
        nack.iter().map(ack_of).collect::<Vec<_>>(),
        [(Opcode::Nack, a_req(0), Some(a_req(1)), 0)],
        "one NACK per loss episode"
    );
    deliver(&mut b, us(2), &[&w[0]]);
    let ack = drain(&mut b, us(2));
    deliver(&mut a, us(3), &[&nack[0], &ack[0]]);
    let again = drain(&mut a, us(3));
    assert_eq!(psns(&again), [a_req(1), a_req(2)]);
    deliver(&mut b, us(4), &again.iter().collect::<Vec<_>>());
    assert_eq!(bytes(&b, 0x2000, 3000), bytes(&a, 0x1000, 3000));
}

#[test]
fn read_responses_under_go_back_n_are_taken_in_order_only() {
    let (mut a, mut b) = pair(TransportConfig::irn_go_back_n());
    a.post_send(SendWqe::read(0x6000, 0x4000, 3000)).unwrap();
    let q = drain(&mut a, us(0));
    deliver(&mut b, us(1), &[&q[0]]);
    let r = drain(&mut b, us(1));
    assert_eq!(r.len(), 4);
    let before = bytes(&a, 0x6000 + 1024, 1024);
    deliver(&mut a, us(2), &[&r[2], &r[3]]);
    assert_eq!(bytes(&a, 0x6000 + 1024, 1024), before);
    assert_eq!(opcodes(&drain(&mut a, us(2))), [Opcode::ReadNack]);
    deliver(&mut a, us(2), &[&r[1]]);
    assert_eq!(opcodes(&drain(&mut a, us(2))), [Opcode::ReadAck]);
    assert_eq!(cqes(&mut a), []);
}

#[test]
fn bad_work_requests_are_errors_not_panics() {
    let (mut a, _) = pair(TransportConfig::irn());
    let oob = |side| move |e: VerbsError| matches!(e, VerbsError::OutOfBounds { side: s, .. } if s == side);
    assert!(a
        .post_send(SendWqe::write(MEM - 10, 0, 11))
        .is_err_and(oob(Side::Local)));
    assert!(a
        .post_send(SendWqe::read(0, MEM - 10, 11))
        .is_err_and(oob(Side::Remote)));
    assert!(a
        .post_send(SendWqe::write(0, u64::MAX, 2))
        .is_err_and(oob(Side::Remote)));
    assert_eq!(
        a.post_send(SendWqe::fetch_add(0, 12, 1)),
        Err(VerbsError::MisalignedAtomic { addr: 12 })
    );
    assert!(a.post_send(SendWqe::send(0, u32::MAX)).is_err());
    assert!(a.post_recv(RecvWqe { addr: MEM, len: 1 }).is_err());
    assert_eq!(a.outstanding_sends(), 0);
    let (ea, eb) = endpoints();
    assert_eq!(
        QueuePair::new(TransportConfig::tcp(), ea, eb).err(),
        Some(VerbsError::UnsupportedRecovery)
    );
    assert!(QueuePair::new(
        TransportConfig {
            mtu: 0,
            ..TransportConfig::irn()
        },
        ea,
        eb
    )
    .is_err());
}

#[test]
fn misaddressed_and_malformed_packets_are_counted_and_dropped() {
    let (mut a, mut b) = pair(TransportConfig::irn());
    a.post_send(SendWqe::write(0x1000, 0x2000, 2048)).unwrap();
    let w = drain(&mut a, us(0));
    let before = bytes(&b, 0x2000, 2048);
    let mut wrong_qp = w[0].clone();
    wrong_qp.dest_qp = Qpn::new(0x77);
    let mut short = w[0].clone();
    short.payload.truncate(10);
    let mut swapped = w[0].clone();
    swapped.opcode = Opcode::SendFirst;
    deliver(&mut b, us(1), &[&wrong_qp, &short, &swapped]);
    assert_eq!(b.stats().invalid_packets, 3);
    assert_eq!(drain(&mut b, us(1)), []);
    assert_eq!(bytes(&b, 0x2000, 2048), before);
    // A response no Read asked for.
    let stray = VerbsPacket {
        dest_qp: Qpn::new(0xA),
        opcode: Opcode::ReadResponseOnly,
        psn: Psn::new(0xFF_FFFF),
        retransmission: false,
        ts: 0,
        ecn: Ecn::NotEct,
        ext: Ext::ReadResponse,
        payload: vec![1, 2, 3],
    };
    deliver(&mut a, us(1), &[&stray]);
    assert_eq!(a.stats().requester.invalid_packets, 1);
    assert_eq!(drain(&mut a, us(1)), []);
}

#[test]
fn a_fenced_wqe_waits_for_every_earlier_one() {
    let (mut a, mut b) = pair(TransportConfig::irn());
    a.post_send(SendWqe::read(0x6000, 0x4000, 100)).unwrap();
    a.post_send(SendWqe::write(0x1000, 0x4000, 100).fenced())
        .unwrap();
    let q = drain(&mut a, us(0));
    assert_eq!(opcodes(&q), [Opcode::ReadRequest]);
    deliver(&mut b, us(1), &[&q[0]]);
    let r = drain(&mut b, us(1));
    deliver(&mut a, us(2), &r.iter().collect::<Vec<_>>());
    assert_eq!(cqes(&mut a), [send_cqe(0, SendKind::Read, 100, None)]);
    let q2 = drain(&mut a, us(2));
    assert_eq!(opcodes(&q2), [Opcode::ReadAck, Opcode::WriteOnly]);
    assert_eq!(q2[1].psn.value(), a_req(1));
}

#[test]
fn ce_marks_are_echoed_and_dcqcn_sends_a_cnp_per_packet_space() {
    let cfg = TransportConfig {
        cc: CcConfig::Dcqcn(DcqcnParams::default()),
        ..TransportConfig::irn()
    };
    let (mut a, mut b) = pair(cfg);
    // A writes 2 packets to B and reads 1 packet from B.
    a.post_send(SendWqe::write(0, 0x100, 2 * MTU as u32))
        .unwrap();
    a.post_send(SendWqe::read(0x4000, 0x200, 100)).unwrap();
    let mut w = drain(&mut a, us(0));
    assert_eq!(
        opcodes(&w),
        [Opcode::WriteFirst, Opcode::WriteLast, Opcode::ReadRequest]
    );
    assert!(w.iter().all(|p| p.ecn == Ecn::Ect0), "requests are ECT");
    // A switch marks both Write packets: two ECN-echoes, one CNP (DCQCN paces them, 50 us).
    w[0].ecn = Ecn::Ce;
    w[1].ecn = Ecn::Ce;
    deliver(&mut b, us(1), &[&w[0], &w[1], &w[2]]);
    let back = drain(&mut b, us(1));
    assert_eq!(
        opcodes(&back),
        [
            Opcode::Cnp,
            Opcode::Ack,
            Opcode::Ack,
            Opcode::Ack,
            Opcode::ReadResponseOnly
        ]
    );
    let eces: Vec<bool> = back[1..4]
        .iter()
        .map(|p| match p.ext {
            Ext::Ack { echo, .. } => echo.ece,
            _ => panic!("{p:?}"),
        })
        .collect();
    assert_eq!(eces, [true, true, false]);
    assert_eq!(b.stats().responder.ecn_marked, 2);
    assert_eq!(b.stats().responder.cnps_sent, 1);
    // A marked response: a read ACK with the echo and a read CNP for B's response sender.
    let mut response = back[4].clone();
    assert_eq!(response.ecn, Ecn::Ect0);
    response.ecn = Ecn::Ce;
    deliver(
        &mut a,
        us(2),
        &[&back[0], &back[1], &back[2], &back[3], &response],
    );
    assert_eq!(a.stats().requests.cnps_received, 1);
    let reply = drain(&mut a, us(2));
    assert_eq!(opcodes(&reply), [Opcode::ReadCnp, Opcode::ReadAck]);
    assert!(matches!(reply[1].ext, Ext::ReadAck { echo, .. } if echo.ece));
    assert!(reply
        .iter()
        .all(|p| p.ecn == Ecn::NotEct && p.wire_len() == 64));
    deliver(&mut b, us(3), &[&reply[0], &reply[1]]);
    assert_eq!(b.stats().responses.cnps_received, 1);
    assert_eq!(
        cqes(&mut a),
        [
            send_cqe(0, SendKind::Write, 2048, None),
            send_cqe(1, SendKind::Read, 100, None)
        ]
    );
    assert_eq!(bytes(&a, 0x4000, 100), bytes(&b, 0x200, 100));
}

#[test]
fn a_malformed_marked_response_paces_no_read_cnp() {
    let cfg = TransportConfig {
        cc: CcConfig::Dcqcn(DcqcnParams::default()),
        ..TransportConfig::irn()
    };
    let (mut a, mut b) = pair(cfg);
    a.post_send(SendWqe::read(0x4000, 0x200, 100)).unwrap();
    let q = drain(&mut a, us(0));
    deliver(&mut b, us(1), &[&q[0]]);
    let back = drain(&mut b, us(1));
    let mut response = back
        .iter()
        .find(|p| p.opcode == Opcode::ReadResponseOnly)
        .expect("a read response")
        .clone();
    // CE-marked, and one byte short of the Read's length: discarded as if it had not arrived.
    response.ecn = Ecn::Ce;
    let mut short = response.clone();
    short.payload.pop();
    deliver(&mut a, us(2), &[&short]);
    assert_eq!(a.stats().requester.invalid_packets, 1);
    assert_eq!(
        (
            a.stats().requester.ecn_marked,
            a.stats().requester.cnps_sent
        ),
        (0, 0)
    );
    assert!(drain(&mut a, us(2))
        .iter()
        .all(|p| p.opcode != Opcode::ReadCnp));
    // The well-formed, marked response is counted and paces the read CNP.
    deliver(&mut a, us(3), &[&response]);
    assert_eq!(a.stats().requester.cnps_sent, 1);
    assert_eq!(cqes(&mut a), [send_cqe(0, SendKind::Read, 100, None)]);
}
