//! Congestion feedback under an ordering layer, packet by packet: when a CE-marked packet the
//! layer holds or drops gives its DCQCN CNP. A NIC's notification point sees a packet when it
//! arrives ([`Feedback::Arrival`], the default); [`Feedback::Delivery`] waits until the
//! transport's receiver gets the packet in order, and a dropped packet then gives none.

mod common;

use common::*;
use irn_core::cc::{CcConfig, DcqcnParams};
use irn_core::ordering::{
    Feedback, MemoryController, OrderedReceiver, OrderingConfig, OrderingMode,
};
use irn_core::packet::{Ecn, Packet, PacketKind};
use irn_core::transport::TransportConfig;
use irn_core::{Duration, Time};

/// What the NIC sends back, CNPs included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Out {
    Ack(u32),
    Sack(u32, u32),
    DropNack(u32, u32),
    Cnp,
}

fn out(p: &Packet) -> Out {
    match p.kind {
        PacketKind::Cnp => Out::Cnp,
        _ => match reply(p) {
            Reply::Ack(c) => Out::Ack(c),
            Reply::Sack(c, s) => Out::Sack(c, s),
            Reply::DropNack(c, d) => Out::DropNack(c, d),
            Reply::Nack(..) => panic!("the transport NACKed under a layer: {p:?}"),
        },
    }
}

/// One arrival: at `at_us`, PSN `psn`, CE-marked or not, and what must leave at once.
struct Step {
    at_us: u64,
    psn: u32,
    marked: bool,
    replies: &'static [Out],
}

const fn step(at_us: u64, psn: u32, marked: bool, replies: &'static [Out]) -> Step {
    Step {
        at_us,
        psn,
        marked,
        replies,
    }
}

struct Case {
    name: &'static str,
    feedback: Feedback,
    steps: &'static [Step],
    /// The receiver's counts at the end: marks taken and CNPs sent.
    marked: u64,
    cnps: u64,
}

use Out::{Ack, Cnp, DropNack, Sack};

/// 8-bit blocks, a 32-bit cap: PSN 40 is past the cap while 0 is expected.
const SMALL: OrderingConfig = OrderingConfig {
    block_bits: 8,
    cap_bits: 32,
    pool_blocks: 64,
    max_connections: OrderingConfig::DEFAULT_MAX_CONNECTIONS,
    records_in_pool: false,
};

/// DCQCN's notification point paces one CNP per 50 µs.
const CASES: &[Case] = &[
    Case {
        name: "a held marked packet's CNP leaves on arrival, behind its SACK",
        feedback: Feedback::Arrival,
        steps: &[
            step(0, 1, true, &[Sack(0, 1), Cnp]),
            // The gap fills: the held packet's mark was taken, nothing more to pace.
            step(19, 0, false, &[Ack(2)]),
        ],
        marked: 1,
        cnps: 1,
    },
    Case {
        name: "on delivery, the CNP waits for the gap to fill",
        feedback: Feedback::Delivery,
        steps: &[
            step(0, 1, true, &[Sack(0, 1)]),
            step(19, 0, false, &[Cnp, Ack(2)]),
        ],
        marked: 1,
        cnps: 1,
    },
    Case {
        name: "a dropped marked packet still gives its CNP",
        feedback: Feedback::Arrival,
        steps: &[
            step(0, 40, true, &[DropNack(0, 40), Cnp]),
            step(1, 0, false, &[Ack(1)]),
        ],
        marked: 1,
        cnps: 1,
    },
    Case {
        name: "on delivery, a dropped marked packet gives none",
        feedback: Feedback::Delivery,
        steps: &[
            step(0, 40, true, &[DropNack(0, 40)]),
            step(1, 0, false, &[Ack(1)]),
        ],
        marked: 0,
        cnps: 0,
    },
    Case {
        name: "held marks are paced like in-order ones: one CNP per interval",
        feedback: Feedback::Arrival,
        steps: &[
            step(0, 2, true, &[Sack(0, 2), Cnp]),
            step(10, 1, true, &[Sack(0, 1)]),
            step(49, 3, true, &[Sack(0, 3)]),
            step(50, 4, true, &[Sack(0, 4), Cnp]),
            // Delivering the four held packets counts none of their marks again.
            step(60, 0, false, &[Ack(5)]),
        ],
        marked: 4,
        cnps: 2,
    },
    Case {
        name: "an in-order marked packet is the transport's own, as without a layer",
        feedback: Feedback::Arrival,
        steps: &[step(0, 0, true, &[Cnp, Ack(1)])],
        marked: 1,
        cnps: 1,
    },
];

fn dcqcn_irn() -> TransportConfig {
    TransportConfig {
        cc: CcConfig::Dcqcn(DcqcnParams::default()),
        ..TransportConfig::irn()
    }
}

fn marked(psn: u32) -> Packet {
    let mut p = mid(psn);
    if let PacketKind::Data { ecn, .. } = &mut p.kind {
        *ecn = Ecn::Ce;
    }
    p
}

#[test]
fn a_held_or_dropped_packets_cnp_follows_the_feedback_choice() {
    assert_eq!(
        DcqcnParams::default().cnp_interval,
        Duration::from_us(50),
        "the cases assume DCQCN's 50 us pacing"
    );
    for case in CASES {
        let mut pool = MemoryController::new(SMALL).expect("valid configuration");
        let mut rx = OrderedReceiver::new(receiver(dcqcn_irn(), 0), OrderingMode::Eunomia, &SMALL)
            .with_feedback(case.feedback);
        for (i, s) in case.steps.iter().enumerate() {
            let now = Time::ZERO + Duration::from_us(s.at_us);
            let pkt = if s.marked { marked(s.psn) } else { mid(s.psn) };
            rx.handle_packet(now, &pkt, Some(&mut pool));
            let replies: Vec<Out> = std::iter::from_fn(|| rx.poll_transmit(now))
                .map(|p| out(&p))
                .collect();
            assert_eq!(
                replies, s.replies,
                "{}: step {i} (PSN {})",
                case.name, s.psn
            );
        }
        let stats = rx.stats();
        assert_eq!(stats.ecn_marked, case.marked, "{}: marks", case.name);
        assert_eq!(stats.cnps_sent, case.cnps, "{}: CNPs", case.name);
    }
}
