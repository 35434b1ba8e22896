//! Another simulator's frame accounting (ns-3's RDMA models: 48 B per data packet, 60 B per
//! ACK) on a network worked out by hand: what each frame costs on the wire, and what a lone
//! flow's FCT and ideal FCT become.

mod common;

use irn_core::transport::TransportConfig;
use irn_core::{Bandwidth, Duration};
use irn_sim::config::{Framing, SimConfig};
use irn_sim::topology::Topology;

const NS3: Framing = Framing {
    data: 48,
    reply: 60,
};

/// Ten full packets from host 0 to host 1 through one switch: 40 Gb/s links of 2 µs.
fn lone_flow(framing: Framing, transport: TransportConfig) -> irn_sim::RunResult {
    let topology = Topology::star(2, Bandwidth::from_gbps(40), Duration::from_us(2)).unwrap();
    let cfg = SimConfig {
        framing,
        ..SimConfig::new(
            topology,
            common::lossy_switch(),
            transport,
            vec![common::flow(0, 1, 10 * 1024)],
        )
    };
    irn_sim::run(&cfg, &mut |_| {})
}

#[test]
fn a_lone_flow_costs_its_frames_and_no_more() {
    let transport = TransportConfig::roce(false);
    for (framing, data, reply) in [(Framing::default(), 1086, 64), (NS3, 1072, 60)] {
        let r = lone_flow(framing, transport);
        let flow = &r.flows[0];
        // Two links' propagation, ten frames at the bottleneck, one more to store and forward:
        // 4 µs + 11 × frame × 0.2 ns.
        let fct_ps = 4_000_000 + 11 * data * 200;
        assert_eq!(flow.fct_us, Some(fct_ps as f64 / 1e6), "{framing:?}");
        assert_eq!(flow.ideal_fct_us, fct_ps as f64 / 1e6, "{framing:?}");
        assert_eq!(r.summary.control_bytes.ack, 10 * reply, "{framing:?}");
    }
}

#[test]
fn a_paced_sender_spaces_packets_by_the_frames_the_links_carry() {
    // A rate-paced sender spaces its packets by `data_framing` + payload (irn-core's
    // `pacing_spaces_packets_by_their_frames`); the extra header bytes (IRN §6.3's RETH, an
    // ordering layer's metadata, INT's header) are on the wire too, so they are in it.
    for (framing, extra, expected) in [
        (Framing::default(), 0, 62),
        (Framing::default(), 16, 78),
        (NS3, 5, 53),
    ] {
        let topology = Topology::star(2, Bandwidth::from_gbps(40), Duration::from_us(2)).unwrap();
        let cfg = SimConfig {
            framing,
            extra_header_bytes: extra,
            ..SimConfig::new(
                topology,
                common::lossy_switch(),
                TransportConfig::roce(false),
                vec![common::flow(0, 1, 10 * 1024)],
            )
        };
        let paced = cfg.flow_transport(&cfg.flows[0]).data_framing;
        assert_eq!(paced, expected, "{framing:?} + {extra} B");
    }
}
