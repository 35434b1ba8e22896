//! Eunomia's sender-side agent (§3.2.2, §3.5.2) is the transport's own [`Sender`]: how it
//! reacts to each reply an ordering layer sends, packet by packet. An ACK advances; a SACK
//! advances and, under selective repeat, marks the packet received, but never starts recovery;
//! a NACK names a packet the receiver dropped, which is resent, and starts the transport's own
//! recovery (go-back-N rewinds; selective repeat resends the unSACKed packets up to it).

mod common;

use common::*;
use irn_core::packet::{Echo, Packet, PacketKind};
use irn_core::transport::TransportConfig;
use irn_core::Psn;

/// The layer's SACK: `sacked` is held; every PSN before `cumulative` arrived in order.
fn sack(cumulative: u32, sacked: u32) -> Packet {
    Packet {
        dest_qp: SENDER_QP,
        psn: Psn::new(cumulative),
        kind: PacketKind::Sack {
            sacked: Psn::new(sacked),
            echo: Echo::default(),
        },
    }
}

/// The layer's NACK: `dropped` could not be tracked and was discarded.
fn drop_nack(cumulative: u32, dropped: u32) -> Packet {
    Packet {
        dest_qp: SENDER_QP,
        psn: Psn::new(cumulative),
        kind: PacketKind::DropNack {
            dropped: Psn::new(dropped),
            echo: Echo::default(),
        },
    }
}

/// What the sender did with the replies: its cumulative ACK, recoveries started, SACKs and
/// NACKs counted, and the packets it resends once the refetch delay has passed.
#[derive(Debug, PartialEq, Eq)]
struct Reaction {
    cumulative: u32,
    recoveries: u64,
    sacks: u64,
    nacks: u64,
    resent: Vec<Tx>,
}

/// Ten packets 0..=9 of one message in flight, then `replies`.
fn react(cfg: TransportConfig, replies: &[Packet]) -> Reaction {
    let mut s = sender(cfg, 0);
    s.post(10 * u64::from(MTU)).unwrap();
    assert_eq!(
        drain_tx(&mut s, us(0)),
        (0..10).map(new).collect::<Vec<_>>()
    );
    for p in replies {
        s.handle_packet(us(1), p);
    }
    let st = *s.stats();
    Reaction {
        cumulative: s.cumulative_ack().value(),
        recoveries: st.recoveries,
        sacks: st.sacks_received,
        nacks: st.nacks_received,
        resent: drain_tx(&mut s, us(50)),
    }
}

fn reaction(cumulative: u32, recoveries: u64, sacks: u64, nacks: u64, resent: &[u32]) -> Reaction {
    Reaction {
        cumulative,
        recoveries,
        sacks,
        nacks,
        resent: resent.iter().map(|&p| re(p)).collect(),
    }
}

#[test]
fn only_nacks_trigger_recovery() {
    let go_back_n = TransportConfig::roce(true);
    let selective = TransportConfig::irn();
    let cases = [
        // (name, replies, under go-back-N, under selective repeat)
        (
            "an ACK advances",
            vec![ack(5)],
            reaction(5, 0, 0, 0, &[]),
            reaction(5, 0, 0, 0, &[]),
        ),
        (
            "a SACK advances and never recovers",
            vec![sack(5, 9)],
            reaction(5, 0, 1, 0, &[]),
            reaction(5, 0, 1, 0, &[]),
        ),
        (
            "many SACKs: reordering, still no recovery",
            vec![sack(0, 3), sack(0, 1), sack(0, 2), ack(4)],
            reaction(4, 0, 3, 0, &[]),
            reaction(4, 0, 3, 0, &[]),
        ),
        (
            "a NACK recovers: go-back-N from the cumulative ACK, selective repeat up to the dropped packet",
            vec![drop_nack(5, 7)],
            reaction(5, 1, 0, 1, &[5, 6, 7, 8, 9]),
            reaction(5, 1, 0, 1, &[5, 6, 7]),
        ),
        (
            "a SACKed packet is not resent by selective repeat; go-back-N ignores SACKs",
            vec![sack(5, 6), sack(5, 8), drop_nack(5, 9)],
            reaction(5, 1, 2, 1, &[5, 6, 7, 8, 9]),
            reaction(5, 1, 2, 1, &[5, 7, 9]),
        ),
        (
            "a NACK overtaken by an ACK still recovers the packet it names",
            vec![ack(7), drop_nack(5, 7)],
            reaction(7, 1, 0, 1, &[7, 8, 9]),
            reaction(7, 1, 0, 1, &[7]),
        ),
        (
            "a NACK overtaken by an ACK after a rewind: go-back-N is resending it already",
            vec![drop_nack(5, 6), ack(7), drop_nack(5, 8)],
            reaction(7, 1, 0, 2, &[7, 8, 9]),
            reaction(7, 1, 0, 2, &[7, 8]),
        ),
        (
            "a NACK naming a packet acknowledged since is stale",
            vec![ack(8), drop_nack(5, 7)],
            reaction(8, 0, 0, 1, &[]),
            reaction(8, 0, 0, 1, &[]),
        ),
    ];
    for (name, replies, want_gbn, want_sr) in cases {
        assert_eq!(react(go_back_n, &replies), want_gbn, "{name}: go-back-N");
        assert_eq!(
            react(selective, &replies),
            want_sr,
            "{name}: selective repeat"
        );
    }
}

/// Eunomia's WRITE rule (§3.5.2) across the PSN wrap: the sender counts packets in 64 bits, so
/// a last packet just past 2^24 still waits for its own cumulative ACK.
#[test]
fn a_held_last_packet_waits_for_its_ack_across_the_psn_wrap() {
    let cfg = TransportConfig {
        hold_last_packet: true,
        ..TransportConfig::irn()
    };
    let mut s = sender(cfg, 0xFF_FFFE);
    s.post(3 * u64::from(MTU)).unwrap();
    assert_eq!(drain_tx(&mut s, us(0)), [new(0xFF_FFFE), new(0xFF_FFFF)]);
    s.handle_packet(us(1), &ack(0xFF_FFFF));
    assert_eq!(drain_tx(&mut s, us(1)), vec![]);
    s.handle_packet(us(2), &ack(0));
    assert_eq!(drain_tx(&mut s, us(2)), [new(0)]);
}
