//! `transport.acks = "none"`, the IRN paper's RoCE baseline (§5.2), on networks worked by hand:
//! over PFC nothing crosses the network back to the senders, every flow still finishes, and a
//! flow's FCT is its receiver's (the sender, which never learns, has none).

mod common;

use common::{flow, input_queued_switch};
use irn_core::transport::{Acks, TransportConfig};
use irn_core::{Bandwidth, Duration};
use irn_sim::config::{Monitor, SimConfig};
use irn_sim::ids::PortId;
use irn_sim::series::{FlowSample, NicSample, PortSample, SeriesSink};
use irn_sim::topology::Topology;
use irn_sim::workload::FlowSpec;
use irn_sim::RunResult;

const RATE: Bandwidth = Bandwidth::from_gbps(40);
const DELAY: Duration = Duration::from_us(2);
/// 1086 B (1024 B payload + 62 B framing) at 40 Gb/s, in ps.
const FULL: u64 = 217_200;

fn roce(acks: Acks) -> TransportConfig {
    TransportConfig {
        acks,
        ..TransportConfig::roce(true)
    }
}

/// `flows` over a star of `hosts` with PFC, every port sampled each microsecond.
fn config(
    hosts: u32,
    buffer_bytes: u64,
    transport: TransportConfig,
    flows: Vec<FlowSpec>,
) -> SimConfig {
    let topology = Topology::star(hosts, RATE, DELAY).unwrap();
    let ports = (0..topology.ports().len() as u32).map(PortId).collect();
    SimConfig {
        monitor: Some(Monitor {
            interval: Duration::from_us(1),
            ports,
            flows: vec![],
            nics: false,
            summary_from: None,
        }),
        ..SimConfig::new(
            topology,
            input_queued_switch(buffer_bytes, true),
            transport,
            flows,
        )
    }
}

#[derive(Default)]
struct Ports(Vec<PortSample>);

impl SeriesSink for Ports {
    fn port(&mut self, row: &PortSample) {
        self.0.push(row.clone());
    }
    fn nic(&mut self, _: &NicSample) {}
    fn flow(&mut self, _: &FlowSample) {}
}

/// The run, and the bytes host `h`'s NIC put on its link over the whole run.
fn run(cfg: &SimConfig, h: u32) -> (RunResult, u64) {
    let mut ports = Ports::default();
    let r = irn_sim::run_monitored(cfg, &mut |_| {}, &mut ports);
    let name = format!("host:{h}");
    let sent = ports
        .0
        .iter()
        .filter(|p| p.node.to_string() == name)
        .map(|p| p.bytes_sent)
        .sum();
    (r, sent)
}

#[test]
fn one_flow_keeps_its_analytic_fct_and_the_receiver_sends_nothing() {
    // 10 full packets: 10 × 217.2 ns at the NIC, +217.2 ns at the switch, +2 × 2 us.
    let want_us = (11 * FULL + 4_000_000) as f64 / 1e6;
    let (acked, acks_bytes) = run(
        &config(
            2,
            240_000,
            roce(Acks::EveryPacket),
            vec![flow(0, 1, 10 * 1024)],
        ),
        1,
    );
    let (silent, silent_bytes) = run(
        &config(2, 240_000, roce(Acks::None), vec![flow(0, 1, 10 * 1024)]),
        1,
    );
    // Ten 64-byte ACKs, then none.
    assert_eq!((acks_bytes, silent_bytes), (10 * 64, 0));
    let (a, s) = (&acked.flows[0], &silent.flows[0]);
    assert!((a.fct_us.unwrap() - want_us).abs() < 1e-6, "{a:?}");
    assert_eq!(s.fct_us, a.fct_us);
    // The last ACK is back one link round trip (and an ACK's switch hop) later; without ACKs
    // the sender never knows.
    assert!(a.sender_fct_us.unwrap() > a.fct_us.unwrap() + 4.0);
    assert_eq!(s.sender_fct_us, None);
    assert_eq!(silent.summary.flows_incomplete, 0);
}

#[test]
fn an_incast_under_pfc_finishes_with_nothing_sent_back() {
    // Four senders, 300 KB each, into host 0 through 30 KB inputs: PFC pauses, drops nothing.
    let flows = (1..=4).map(|s| flow(s, 0, 300_000)).collect::<Vec<_>>();
    for (acks, back) in [(Acks::EveryPacket, 4 * 293 * 64), (Acks::None, 0)] {
        let (r, sent) = run(&config(5, 30_000, roce(acks), flows.clone()), 0);
        let s = &r.summary;
        assert_eq!((s.drops, s.flows_incomplete), (0, 0), "{acks:?}: {s:?}");
        assert!(s.pause_frames > 0, "{acks:?}");
        // 300 000 B is 293 packets: one ACK each, or nothing.
        assert_eq!(sent, back, "{acks:?}");
        assert!(r.flows.iter().all(|f| f.fct_us.is_some()));
        assert_eq!(
            r.flows.iter().all(|f| f.sender_fct_us.is_some()),
            acks == Acks::EveryPacket
        );
        assert_eq!(s.delivered_bytes, 4 * 300_000);
    }
}
