//! SRPT scheduling on the shared-buffer switch (`[switch] scheduling = "srpt"`): on a small
//! network, and its key.

mod common;

use std::path::Path;

use common::{flow, lossy_switch};
use irn_core::transport::TransportConfig;
use irn_core::{Bandwidth, Duration, Time};
use irn_sim::config::{PfcHeadroom, Scheduling, SimConfig, SwitchModel};
use irn_sim::scenario;
use irn_sim::topology::Topology;
use irn_sim::workload::FlowSpec;

/// Hosts 0 and 1 send to host 2 through one switch at 40 Gb/s, all at t = 0: a 1 MB flow
/// from host 0 and a 30 KB one from host 1, so both queue at the output to host 2. IRN
/// without congestion control; a 9 MB shared buffer that drops nothing.
fn two_flows(scheduling: Scheduling) -> irn_sim::RunResult {
    let mut switch = lossy_switch();
    switch.buffer_bytes = 9_000_000;
    switch.model = SwitchModel::SharedBuffer {
        ingress_alpha: 1.0,
        egress_alpha: Some(1.0),
        scheduling,
        pfc_headroom: PfcHeadroom::OnPause,
        alpha_per_rate: false,
    };
    let topology = Topology::star(3, Bandwidth::from_gbps(40), Duration::from_us(1)).unwrap();
    let cfg = SimConfig {
        seed: 3,
        ..SimConfig::new(
            topology,
            switch,
            TransportConfig::irn(),
            vec![flow(0, 2, 1_000_000), flow(1, 2, 30_000)],
        )
    };
    irn_sim::run(&cfg, &mut |_| {})
}

/// FIFO serves the two flows' packets alternately, so the short flow takes about twice its
/// own transmission time (30 frames of 217.2 ns at 40 Gb/s, 6.5 µs, twice 13 µs). SRPT sends
/// the short flow's packets as soon as they are queued, ahead of the long flow's: it finishes
/// near its ideal time, and the long flow, whose packets still leave in order, finishes with
/// no retransmission and no later than the short flow's time behind FIFO's.
#[test]
fn the_short_flow_overtakes_the_long_one_and_the_long_one_stays_in_order() {
    let (fifo, srpt) = (two_flows(Scheduling::Fifo), two_flows(Scheduling::Srpt));
    let fct = |r: &irn_sim::RunResult, i: usize| r.flows[i].fct_us.expect("finished");
    let short_ideal = srpt.flows[1].ideal_fct_us;
    assert!(fct(&fifo, 1) > 1.7 * short_ideal, "{}", fct(&fifo, 1));
    assert!(
        fct(&srpt, 1) < 1.2 * short_ideal,
        "{} vs {short_ideal}",
        fct(&srpt, 1)
    );
    for r in [&fifo, &srpt] {
        assert_eq!(r.summary.drops, 0);
        assert_eq!(r.flows[0].retransmissions, 0);
    }
    assert_eq!(srpt.summary.out_of_order_packets, 0);
    assert!(fct(&srpt, 0) <= fct(&fifo, 0) + 0.5);
}

/// Ranked per packet, the long flow's queued packets leave newest first whenever the short
/// flow's make them queue: its receiver sees them out of order, and every flow still finishes.
/// The short flow's packets, best ranked, leave as early as under per-flow SRPT.
#[test]
fn ranked_per_packet_the_long_flow_arrives_out_of_order() {
    let (flow, packet) = (
        two_flows(Scheduling::Srpt),
        two_flows(Scheduling::SrptPerPacket),
    );
    assert!(packet.flows.iter().all(|f| f.fct_us.is_some()));
    assert_eq!(flow.summary.out_of_order_packets, 0);
    assert!(
        packet.summary.out_of_order_packets > 10,
        "{}",
        packet.summary.out_of_order_packets
    );
    let short = |r: &irn_sim::RunResult| r.flows[1].fct_us.expect("finished");
    assert!(short(&packet) < 1.2 * packet.flows[1].ideal_fct_us);
}

/// Hosts 0 and 1 send 1 MB each and host 2 sends 20 KB to host 3 through one switch, all at
/// t = 0 (the short flow at 20 µs, once the buffer is full), into a 60 KB lossy shared buffer,
/// under IRN. FIFO drops the arrivals that do not fit, the short flow's among them (seed 5: 20
/// of them, and it waits for timeouts, 5.8 ms); SRPT evicts the long flows' packets for the
/// short flow's, so it loses none and finishes in 6.7 µs, first, and the long flows recover
/// what they lost.
fn incast(scheduling: Scheduling) -> irn_sim::RunResult {
    let mut switch = lossy_switch();
    switch.buffer_bytes = 60_000;
    switch.model = SwitchModel::SharedBuffer {
        ingress_alpha: 1.0,
        egress_alpha: None,
        scheduling,
        pfc_headroom: PfcHeadroom::OnPause,
        alpha_per_rate: false,
    };
    let topology = Topology::star(4, Bandwidth::from_gbps(40), Duration::from_us(1)).unwrap();
    let flows = vec![
        flow(0, 3, 1_000_000),
        flow(1, 3, 1_000_000),
        FlowSpec {
            start: Time::ZERO + Duration::from_us(20),
            ..flow(2, 3, 20_000)
        },
    ];
    let cfg = SimConfig {
        seed: 5,
        ..SimConfig::new(topology, switch, TransportConfig::irn(), flows)
    };
    irn_sim::run(&cfg, &mut |_| {})
}

#[test]
fn evictions_are_drops_the_short_flow_never_suffers() {
    let (fifo, srpt) = (incast(Scheduling::Fifo), incast(Scheduling::Srpt));
    for r in [&fifo, &srpt] {
        assert!(r.flows.iter().all(|f| f.fct_us.is_some()));
        assert!(r.summary.drops > 0, "{}", r.summary.drops);
    }
    assert!(fifo.flows[2].retransmissions > 0);
    assert_eq!(srpt.flows[2].retransmissions, 0);
    let fct = |r: &irn_sim::RunResult, i: usize| r.flows[i].fct_us.expect("finished");
    assert!(
        fct(&srpt, 2) < fct(&fifo, 2) / 2.0,
        "{} {}",
        fct(&srpt, 2),
        fct(&fifo, 2)
    );
    assert!(fct(&srpt, 2) < fct(&srpt, 0).min(fct(&srpt, 1)));
    // The same run again: the same results.
    let again = incast(Scheduling::Srpt);
    assert_eq!(again.summary, srpt.summary);
}

fn parse(text: &str) -> Result<SimConfig, String> {
    scenario::parse(text, "t.toml", Path::new("."), &[])
        .map(|mut sc| sc.runs.remove(0).config)
        .map_err(|e| e.to_string())
}

const BASE: &str = "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nkind = \"incast\"\n\
                    senders = 3\ntotal = \"300KB\"\n[switch]\nmodel = \"shared-buffer\"\n\
                    buffer = \"100KB\"\n";

/// `scheduling = "fifo"` written out is the default: the same results to the byte.
#[test]
fn explicit_fifo_is_the_default() {
    let default = parse(BASE).unwrap();
    let fifo = parse(&format!("{BASE}scheduling = \"fifo\"\n")).unwrap();
    let (a, b) = (
        irn_sim::run(&default, &mut |_| {}),
        irn_sim::run(&fifo, &mut |_| {}),
    );
    assert_eq!(a.summary, b.summary);
    let json = |r: &irn_sim::RunResult| serde_json::to_string(&r.flows).unwrap();
    assert_eq!(json(&a), json(&b));
    // And the same incast through the small buffer under either SRPT completes.
    for kind in ["srpt", "srpt-per-packet"] {
        let srpt = parse(&format!("{BASE}scheduling = \"{kind}\"\n")).unwrap();
        let r = irn_sim::run(&srpt, &mut |_| {});
        assert!(r.flows.iter().all(|f| f.fct_us.is_some()), "{kind}");
    }
}

#[test]
fn scheduling_errors_name_the_file_key_value_and_what_is_allowed() {
    let cases = [
        (
            "[switch]\nscheduling = \"srpt\"\n",
            &["t.toml", "switch.scheduling", "srpt", "shared-buffer"][..],
        ),
        (
            "[switch]\nscheduling = \"srpt-per-packet\"\n",
            &[
                "t.toml",
                "switch.scheduling",
                "srpt-per-packet",
                "shared-buffer",
            ][..],
        ),
        (
            "[switch]\nmodel = \"shared-buffer\"\nscheduling = \"lifo\"\n",
            &[
                "t.toml",
                "scheduling",
                "lifo",
                "fifo",
                "srpt",
                "srpt-per-packet",
            ][..],
        ),
        (
            "[switch]\nmodel = \"shared-buffer\"\nscheduling = 1\n",
            &["t.toml", "scheduling"][..],
        ),
    ];
    for (text, wanted) in cases {
        let err = parse(text)
            .err()
            .unwrap_or_else(|| panic!("{text} accepted"));
        for w in wanted {
            assert!(err.contains(w), "{w} missing from: {err}");
        }
    }
}
