//! DIBS deflection in the simulator: an output with no room deflects packets out of another
//! switch-facing port instead of dropping them, a packet out of TTL is dropped and counted,
//! and flows still finish; without deflection the same run drops.

mod common;

use irn_core::transport::TransportConfig;
use irn_core::{Bandwidth, Duration};
use irn_sim::config::{Deflection, PfcHeadroom, Scheduling, SimConfig, SwitchConfig, SwitchModel};
use irn_sim::ids::NodeId;
use irn_sim::topology::{LinkSpec, NodeKind, Topology};

/// Hosts 0, 1, 2 on switch 4, host 3 on switch 5; switch 4 reaches 5 directly and through
/// switch 6: three senders share the direct link (3:1) and the detour has room.
fn triangle() -> Topology {
    let link = |a, b| LinkSpec {
        a: NodeId(a),
        b: NodeId(b),
        rate: Bandwidth::from_gbps(10),
        delay: Duration::from_us(1),
    };
    let kinds = [0, 0, 0, 0, 1, 1, 1].map(|k| match k {
        0 => NodeKind::Host,
        _ => NodeKind::Switch,
    });
    let links = vec![
        link(0, 4),
        link(1, 4),
        link(2, 4),
        link(3, 5),
        link(4, 5),
        link(4, 6),
        link(6, 5),
    ];
    Topology::from_links(kinds.to_vec(), links).unwrap()
}

/// A 3-to-1 incast of `size` bytes each through 60 KB shared-buffer switches (each output may hold
/// half the free pool), with `deflection`.
fn incast(
    size: u64,
    deflection: Option<Deflection>,
    transport: TransportConfig,
) -> irn_sim::RunResult {
    let switch = SwitchConfig {
        model: SwitchModel::SharedBuffer {
            ingress_alpha: 0.5,
            egress_alpha: Some(0.5),
            scheduling: Scheduling::Fifo,
            pfc_headroom: PfcHeadroom::OnPause,
            alpha_per_rate: false,
        },
        buffer_bytes: 60_000,
        pfc: None,
        ecn: None,
    };
    let flows = (0..3).map(|src| common::flow(src, 3, size)).collect();
    let cfg = SimConfig {
        seed: 7,
        deflection,
        ..SimConfig::new(triangle(), switch, transport, flows)
    };
    irn_sim::run(&cfg, &mut |_| {})
}

/// Small enough that the incast fits in the buffers of both paths together.
const SIZE: u64 = 15_000;

#[test]
fn a_full_output_deflects_instead_of_dropping() {
    let irn = TransportConfig::irn();
    let dropping = incast(SIZE, None, irn).summary;
    assert!(
        dropping.drops > 0,
        "the incast overflows the direct link's queue"
    );
    assert_eq!(
        dropping.deflections, None,
        "no deflection counts without DIBS"
    );

    let dibs = incast(SIZE, Some(Deflection::DIBS), irn).summary;
    let deflections = dibs.deflections.expect("counted under DIBS");
    assert!(deflections > 0);
    // The burst (45 KB) fits in the switches' buffers once spread over both paths: every
    // packet the direct link's queue refused went round by switch 6 instead (13 drops without
    // DIBS, none with it on this seed).
    assert_eq!(dibs.drops, 0, "{dibs:?}");
    assert!(
        deflections >= dropping.drops,
        "{deflections} < {}",
        dropping.drops
    );
    assert_eq!(
        dibs.ttl_drops,
        Some(0),
        "a TTL of 250 is never used up here"
    );
    assert_eq!(dibs.flows_incomplete, 0);
}

#[test]
fn a_packet_out_of_ttl_is_dropped_and_counted() {
    let one = Deflection { ttl: 1 };
    for transport in [TransportConfig::irn(), TransportConfig::roce(false)] {
        let s = incast(200_000, Some(one), transport).summary;
        let ttl_drops = s.ttl_drops.expect("counted under DIBS");
        // Deflected once onto the detour, a packet that meets a full output again is dropped.
        assert!(ttl_drops > 0, "{transport:?}");
        assert!(s.drops >= ttl_drops, "TTL drops are drops: {s:?}");
        assert_eq!(s.flows_incomplete, 0, "{transport:?}");
    }
}

#[test]
fn deflection_repeats_itself() {
    let run = || incast(200_000, Some(Deflection::DIBS), TransportConfig::irn());
    let (a, b) = (run(), run());
    let fcts = |r: &irn_sim::RunResult| r.flows.iter().map(|f| f.fct_us).collect::<Vec<_>>();
    assert_eq!(fcts(&a), fcts(&b));
    assert_eq!(a.summary.deflections, b.summary.deflections);
}
