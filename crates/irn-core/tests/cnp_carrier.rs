//! DCQCN's CNPs as frames (RoCEv2 NICs) or as the BECN bit of the next reply (ns-3's RDMA
//! models), arrival by arrival: what the receiver answers, and what the sender does with it.

mod common;

use common::*;
use irn_core::cc::{CcConfig, CnpCarrier, DcqcnParams};
use irn_core::packet::{Echo, Ecn, Packet, PacketKind};
use irn_core::transport::{Acks, ConfigError};
use irn_core::{Time, TransportConfig};

/// A reply with its BECN bit, or a CNP frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Out {
    Ack(u32, bool),
    Nack(u32, bool),
    Cnp,
}
use Out::{Ack, Cnp, Nack};

fn marked(mut p: Packet) -> Packet {
    if let PacketKind::Data { ecn, .. } = &mut p.kind {
        *ecn = Ecn::Ce;
    }
    p
}

fn with(base: TransportConfig, params: DcqcnParams, carrier: CnpCarrier) -> TransportConfig {
    TransportConfig {
        cc: CcConfig::Dcqcn(DcqcnParams {
            cnp_carrier: carrier,
            ..params
        }),
        ..base
    }
}

fn answer(r: &mut irn_core::Receiver, now: Time, p: Packet) -> Vec<Out> {
    r.handle_packet(now, &p);
    std::iter::from_fn(|| r.poll_transmit(now))
        .map(|p| match p.kind {
            PacketKind::Ack { echo, .. } => Ack(p.psn.value(), echo.ece),
            PacketKind::Nack { echo, .. } => Nack(p.psn.value(), echo.ece),
            PacketKind::Cnp => Cnp,
            _ => panic!("receiver sent {p:?}"),
        })
        .collect()
}

struct Case {
    name: &'static str,
    cfg: TransportConfig,
    /// Arrival time in µs, the packet, and what the receiver answers.
    steps: Vec<(u64, Packet, Vec<Out>)>,
    cnps_sent: u64,
}

#[test]
fn the_receiver_sends_a_cnp_as_a_frame_or_on_the_next_reply() {
    let roce = TransportConfig::roce(false);
    let irn = TransportConfig::irn();
    let mlx = DcqcnParams::mlx();
    let paper = DcqcnParams::dcqcn_paper();
    let cases = vec![
        Case {
            name: "frame: the CNP precedes the ACK, whose BECN echoes the packet's mark",
            cfg: with(roce, mlx, CnpCarrier::Frame),
            steps: vec![
                (0, marked(only(0, 8)), vec![Cnp, Ack(1, true)]),
                (1, only(1, 8), vec![Ack(2, false)]),
            ],
            cnps_sent: 1,
        },
        Case {
            name: "ack: no frame; the marked packet's ACK carries the CNP",
            cfg: with(roce, mlx, CnpCarrier::Ack),
            steps: vec![
                (0, marked(only(0, 8)), vec![Ack(1, true)]),
                (1, only(1, 8), vec![Ack(2, false)]),
                (2, marked(only(2, 8)), vec![Ack(3, true)]),
            ],
            cnps_sent: 2,
        },
        Case {
            name: "ack: a mark inside the CNP interval sets no BECN (it is the CNP, not the mark)",
            cfg: with(irn, paper, CnpCarrier::Ack),
            steps: vec![
                (0, marked(only(0, 8)), vec![Ack(1, true)]),
                (10, marked(only(1, 8)), vec![Ack(2, false)]),
                (50, marked(only(2, 8)), vec![Ack(3, true)]),
            ],
            cnps_sent: 2,
        },
        Case {
            name: "ack, go-back-N: a CNP paced by a discarded packet rides the next reply",
            cfg: with(roce, paper, CnpCarrier::Ack),
            steps: vec![
                (0, only(1, 8), vec![Nack(0, false)]),
                (1, marked(only(2, 8)), vec![]),
                (2, only(0, 8), vec![Ack(1, true)]),
                (3, only(1, 8), vec![Ack(2, false)]),
            ],
            cnps_sent: 1,
        },
        Case {
            name: "frame, cnp_on_nack: an unmarked NACK is followed by a CNP",
            cfg: with(irn, mlx, CnpCarrier::Frame),
            steps: vec![(0, only(1, 8), vec![Nack(0, false), Cnp])],
            cnps_sent: 1,
        },
        Case {
            name: "ack, cnp_on_nack: the NACK itself carries the CNP",
            cfg: with(irn, mlx, CnpCarrier::Ack),
            steps: vec![
                (0, only(1, 8), vec![Nack(0, true)]),
                (1, only(0, 8), vec![Ack(2, false)]),
            ],
            cnps_sent: 1,
        },
        Case {
            name: "ack, cnp_on_nack: a marked NACKed packet paces one CNP, not two",
            cfg: with(irn, mlx, CnpCarrier::Ack),
            steps: vec![(0, marked(only(1, 8)), vec![Nack(0, true)])],
            cnps_sent: 1,
        },
    ];
    for case in cases {
        let mut r = receiver(case.cfg, 0);
        for (i, (at, pkt, want)) in case.steps.into_iter().enumerate() {
            assert_eq!(answer(&mut r, us(at), pkt), want, "{}: step {i}", case.name);
        }
        assert_eq!(r.stats().cnps_sent, case.cnps_sent, "{}", case.name);
    }
}

/// An ACK for `cumulative` whose BECN bit is `ece`.
fn ack_with(cumulative: u32, ece: bool) -> Packet {
    let mut p = ack(cumulative);
    if let PacketKind::Ack { echo, .. } = &mut p.kind {
        *echo = Echo { ts: 0, ece };
    }
    p
}

#[test]
fn the_sender_reads_becn_as_a_cnp_only_when_cnps_ride_replies() {
    for (carrier, cuts) in [(CnpCarrier::Frame, false), (CnpCarrier::Ack, true)] {
        let cfg = with(TransportConfig::irn(), DcqcnParams::default(), carrier);
        let mut s = sender(cfg, 0);
        s.post(4 * u64::from(MTU)).unwrap();
        let line = s.rate().expect("DCQCN paces");
        take_tx(&mut s, us(0), 2);
        s.handle_packet(us(5), &ack_with(1, true));
        let cut = s.rate().expect("DCQCN paces") < line;
        assert_eq!(cut, cuts, "{carrier:?}");
        assert_eq!(s.stats().cnps_received, u64::from(cuts), "{carrier:?}");
        // A plain ACK is not a CNP either way.
        s.handle_packet(us(6), &ack_with(2, false));
        assert_eq!(s.stats().cnps_received, u64::from(cuts), "{carrier:?}");
    }
}

#[test]
fn cnps_on_replies_need_an_rdma_receiver_that_acks_every_packet() {
    let ack_carrier = |base| with(base, DcqcnParams::mlx(), CnpCarrier::Ack);
    assert!(ack_carrier(TransportConfig::roce(false)).validate().is_ok());
    assert!(ack_carrier(TransportConfig::irn()).validate().is_ok());
    // RoCE with PFC runs without ACKs (no timeouts, no window).
    let no_acks = TransportConfig {
        acks: Acks::None,
        ..TransportConfig::roce(true)
    };
    let tcp = TransportConfig::tcp();
    for (cfg, why) in [(no_acks, "acks = none"), (tcp, "TCP")] {
        let e = ack_carrier(cfg).validate().unwrap_err();
        assert!(matches!(e, ConfigError::CnpOnReplies(_)), "{e}");
        assert!(e.to_string().contains(why), "{e}");
        let frames = with(cfg, DcqcnParams::mlx(), CnpCarrier::Frame);
        assert_eq!(frames.validate(), Ok(()), "{why}");
    }
}
