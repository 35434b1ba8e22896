//! Lossy links by hand: a link that loses packets on the wire loses exactly the packets its
//! seeded stream says, counts them apart from buffer drops, and every transport still finishes;
//! an ns-3 file's `error_rate` reaches exactly its link; no loss changes nothing.

mod common;

use std::path::Path;

use common::{flow, input_queued_switch};
use irn_core::transport::TransportConfig;
use irn_core::{Bandwidth, Duration};
use irn_sim::config::SimConfig;
use irn_sim::ids::HostIdx;
use irn_sim::loss::{expected_losses, link_ports, LinkLoss};
use irn_sim::scenario;
use irn_sim::topology::ns3::parse_topology_with_loss;
use irn_sim::topology::Topology;
use irn_sim::workload::FlowSpec;
use irn_sim::RunResult;

const RATE: Bandwidth = Bandwidth::from_gbps(40);
const DELAY: Duration = Duration::from_us(2);
const MTU: u64 = 1024;

/// `flows` over a star of `hosts`, in a large buffer (no drops), the link leaving host 0 losing
/// each packet with probability `rate` (in that direction only).
fn star(hosts: u32, transport: TransportConfig, rate: f64, flows: Vec<FlowSpec>) -> SimConfig {
    let topology = Topology::star(hosts, RATE, DELAY).unwrap();
    let mut link_loss = LinkLoss::none();
    link_loss.set(&topology, topology.host_port(HostIdx(0)), rate);
    SimConfig {
        seed: 11,
        link_loss,
        ..SimConfig::new(
            topology,
            input_queued_switch(10_000_000, false),
            transport,
            flows,
        )
    }
}

fn run(cfg: &SimConfig) -> RunResult {
    irn_sim::run(cfg, &mut |_| {})
}

fn json(rows: &impl serde::Serialize) -> String {
    serde_json::to_string(rows).unwrap()
}

fn transports() -> [(&'static str, TransportConfig); 2] {
    [
        ("irn", TransportConfig::irn()),
        ("roce go-back-N", TransportConfig::roce(false)),
    ]
}

#[test]
fn a_lossy_link_loses_the_packets_its_stream_draws_and_flows_finish() {
    // 500 packets from host 0 to host 1: only data crosses host 0's link that way, so the
    // link's draws are one per data packet host 0 sends, retransmissions included.
    for (name, transport) in transports() {
        let cfg = star(2, transport, 0.02, vec![flow(0, 1, 500 * MTU)]);
        let r = run(&cfg);
        let s = &r.summary;
        assert_eq!(s.flows_incomplete, 0, "{name}");
        assert_eq!(s.drops, 0, "{name}: no buffer drop in a 10 MB buffer");
        let port = cfg.topology.host_port(HostIdx(0));
        let want = expected_losses(cfg.seed, port, 0.02, s.data_packets_sent);
        assert_eq!(s.link_losses, Some(want), "{name}");
        // 2 % of 500 packets and their retransmissions (go-back-N resends whole windows, so
        // its link carries many more): some, not hundreds.
        assert!((3..=60).contains(&want), "{name}: {want}");
        // Each loss is repaired by a retransmission (go-back-N resends more).
        assert!(s.retransmissions >= want, "{name}: {s:?}");
    }
}

#[test]
fn a_lossy_link_loses_acks_too_and_flows_finish() {
    // Loss on host 0's link with host 0 receiving: its ACKs to host 1 are lost, the data is not.
    for (name, transport) in transports() {
        let cfg = star(2, transport, 0.1, vec![flow(1, 0, 200 * MTU)]);
        let r = run(&cfg);
        assert_eq!(r.summary.flows_incomplete, 0, "{name}");
        assert!(r.summary.link_losses.unwrap() > 0, "{name}");
        assert_eq!(r.summary.drops, 0, "{name}");
    }
}

#[test]
fn losses_on_a_link_do_not_depend_on_other_links_traffic() {
    // Host 2 sends into host 1 beside host 0: host 0's link still loses exactly the packets
    // its own draws say, one draw per packet host 0 sent.
    for (name, transport) in transports() {
        let cfg = star(
            3,
            transport,
            0.02,
            vec![flow(0, 1, 300 * MTU), flow(2, 1, 300 * MTU)],
        );
        let r = run(&cfg);
        assert_eq!(r.summary.flows_incomplete, 0, "{name}");
        let sent_by_host_0 = 300 + r.flows[0].retransmissions;
        let port = cfg.topology.host_port(HostIdx(0));
        let want = expected_losses(cfg.seed, port, 0.02, sent_by_host_0);
        assert_eq!(r.summary.link_losses, Some(want), "{name}");
        assert_eq!(
            r.flows[1].retransmissions, 0,
            "{name}: host 2's link is clean"
        );
    }
}

#[test]
fn the_same_seed_repeats_a_lossy_run_and_another_seed_does_not() {
    let cfg = star(2, TransportConfig::irn(), 0.05, vec![flow(0, 1, 300 * MTU)]);
    let a = run(&cfg);
    let b = run(&cfg);
    assert_eq!(a.summary, b.summary);
    assert_eq!(json(&a.flows), json(&b.flows));
    let other = run(&SimConfig { seed: 12, ..cfg });
    assert_ne!(a.summary.link_losses, other.summary.link_losses);
}

#[test]
fn an_ns3_error_rate_applies_to_exactly_its_link() {
    // Hosts 0..3 on switch 3; only host 1's link loses.
    let text = "4 1 3\n3\n0 3 40Gbps 2us 0\n1 3 40Gbps 2us 0.25\n2 3 40Gbps 2us 0\n";
    let (topology, rates) = parse_topology_with_loss(text, "t.txt").unwrap();
    assert_eq!(rates, [0.0, 0.25, 0.0]);
    let loss = LinkLoss::per_link(&topology, &rates);
    let (host, switch) = link_ports(&topology, 1);
    assert_eq!(host, topology.host_port(HostIdx(1)));
    for p in 0..topology.ports().len() as u32 {
        let p = irn_sim::ids::PortId(p);
        let want = if p == host || p == switch { 0.25 } else { 0.0 };
        assert_eq!(loss.rate(p), want, "{p:?}");
    }

    // Through a scenario: the file's rate, and a flow over the lossy link loses packets.
    let dir = std::env::temp_dir().join(format!("irn-lossy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("topo.txt"), text).unwrap();
    let toml = "[topology]\nfile = \"topo.txt\"\n[workload]\nkind = \"incast\"\n\
                senders = 2\ntotal = \"100KB\"\n";
    let sc = scenario::parse(toml, "t.toml", &dir, &[]);
    std::fs::remove_dir_all(&dir).unwrap();
    let sc = sc.unwrap();
    let cfg = &sc.runs[0].config;
    assert_eq!(cfg.link_loss, loss);
}

#[test]
fn no_loss_changes_nothing() {
    // A zero rate is no loss at all: the same run as a configuration without the key, and
    // the summary has no `link_losses`.
    for (name, transport) in transports() {
        let clean = star(
            3,
            transport,
            0.0,
            vec![flow(0, 1, 300 * MTU), flow(2, 1, 300 * MTU)],
        );
        assert!(clean.link_loss.is_none());
        let r = run(&clean);
        assert_eq!(r.summary.link_losses, None, "{name}");
        let json = serde_json::to_string(&r.summary).unwrap();
        assert!(!json.contains("link_losses"), "{name}");
    }
    let base = "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nkind = \"incast\"\n\
                senders = 3\ntotal = \"150KB\"\n";
    let zero = base.replace("hosts = 4\n", "hosts = 4\nloss_rate = 0\n");
    let config = |text: &str| {
        let mut sc = scenario::parse(text, "t.toml", Path::new("."), &[]).unwrap();
        sc.runs.remove(0).config
    };
    let (a, b) = (run(&config(base)), run(&config(&zero)));
    assert_eq!(a.summary, b.summary);
    assert_eq!(json(&a.flows), json(&b.flows));
}

#[test]
fn loss_rate_errors_name_the_key_and_what_is_allowed() {
    let cases = [
        (
            "[topology]\nkind = \"star\"\nhosts = 4\nloss_rate = 1.0\n",
            "topology.loss_rate",
            "a probability in [0, 1)",
        ),
        (
            "[topology]\nkind = \"star\"\nhosts = 4\nloss_rate = -0.1\n",
            "topology.loss_rate",
            "a probability in [0, 1)",
        ),
        (
            "[topology]\nkind = \"star\"\nhosts = 4\nloss_rate = 0.01\n\
             [switch]\ncredits = true\n",
            "topology.loss_rate",
            "credit flow control",
        ),
    ];
    for (text, key, allowed) in cases {
        let err = scenario::parse(text, "t.toml", Path::new("."), &[])
            .err()
            .unwrap_or_else(|| panic!("{text} accepted"))
            .to_string();
        assert!(err.contains("t.toml"), "{err}");
        assert!(err.contains(key), "{err}");
        assert!(err.contains(allowed), "{err}");
    }
}
