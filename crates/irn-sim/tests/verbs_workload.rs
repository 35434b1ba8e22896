//! The verbs workload (IRN §5) in the simulator: every verb alone has the analytic FCT, and a
//! mix of all verbs under loss, PFC or go-back-N finishes with every byte in place.

use irn_core::transport::TransportConfig;
use irn_core::{Bandwidth, Duration, Time};
use irn_sim::config::{SimConfig, SwitchConfig, SwitchModel};
use irn_sim::ids::HostIdx;
use irn_sim::scenario;
use irn_sim::topology::Topology;
use irn_sim::workload::{FlowClass, FlowSpec, Verb};
use std::path::Path;

const RATE: Bandwidth = Bandwidth::from_gbps(40);
const DELAY: Duration = Duration::from_us(2);
/// Picoseconds to serialize `bytes` at 40 Gb/s.
const fn ser(bytes: u64) -> u64 {
    bytes * 200
}

fn one_flow(verb: Verb, size_bytes: u64, transport: TransportConfig, irn: bool) -> SimConfig {
    SimConfig {
        seed: 1,
        drain_limit: Duration::from_ms(10),
        verbs_irn_headers: irn,
        ..SimConfig::new(
            Topology::star(2, RATE, DELAY).unwrap(),
            SwitchConfig {
                model: SwitchModel::InputQueued,
                buffer_bytes: 240_000,
                pfc: None,
                ecn: None,
            },
            transport,
            vec![FlowSpec {
                src: HostIdx(0),
                dst: HostIdx(1),
                size_bytes,
                start: Time::ZERO,
                class: FlowClass::Regular,
                verb: Some(verb),
            }],
        )
    }
}

#[test]
fn each_verb_alone_has_the_analytic_fct() {
    // Two hops (host → switch → host), 2 µs each, store-and-forward at the switch; 62 B framing.
    // (verb, size, transport has IRN headers, expected FCT in ps).
    let two_hops = |wire: u64| 2 * ser(wire) + 4_000_000;
    let cases: &[(Verb, u64, bool, u64)] = &[
        // One Write packet: 100 B payload + 62 B framing + 16 B RETH.
        (Verb::Write, 100, true, two_hops(178)),
        // RoCE carries no per-packet RETH.
        (Verb::Write, 100, false, two_hops(162)),
        // Three Write packets of 1024 + 78 B: all three at the NIC, the last again at the switch.
        (Verb::Write, 3 * 1024, true, 4 * ser(1102) + 4_000_000),
        // Send: 6 B of recv_WQE_SN and offset per packet.
        (Verb::Send, 100, true, two_hops(168)),
        // Write-with-immediate: its last packet also carries the 3 B recv_WQE_SN.
        (Verb::WriteImm, 100, true, two_hops(181)),
        (
            Verb::WriteImm,
            2048,
            true,
            ser(1102) + 2 * ser(1105) + 4_000_000,
        ),
        // Read: the request (62 + 3 B) crosses first; the responder's NIC sends its 64 B ACK of
        // the request, then the 100 B response (no extra header).
        (
            Verb::Read,
            100,
            true,
            two_hops(65) + ser(64) + two_hops(162),
        ),
        // Atomic: done when the request (62 + 3 B) reaches the responder.
        (Verb::Atomic, 8, true, two_hops(65)),
    ];
    for &(verb, size, irn, want_ps) in cases {
        let transport = if irn {
            TransportConfig::irn()
        } else {
            TransportConfig::roce(true)
        };
        let r = irn_sim::run(&one_flow(verb, size, transport, irn), &mut |_| {});
        let f = &r.flows[0];
        let want_us = want_ps as f64 / 1e6;
        assert_eq!(f.fct_us, Some(want_us), "{verb:?} of {size} B");
        assert_eq!(f.ideal_fct_us, want_us, "ideal of {verb:?} of {size} B");
        assert_eq!(f.slowdown, Some(1.0));
        assert!(
            f.sender_fct_us.unwrap() > want_us,
            "{verb:?}: the sender learns later"
        );
        assert_eq!(f.verb, Some(verb.name()));
        assert_eq!(r.summary.verbs_data_errors, Some(0));
        assert_eq!(r.summary.retransmissions, 0);
    }
}

/// A small fat-tree with tiny buffers at high load: plenty of drops without PFC.
fn mix_scenario(transport: &str, pfc: bool) -> SimConfig {
    mix_scenario_with(transport, pfc, "none", "")
}

fn mix_scenario_with(transport: &str, pfc: bool, cc: &str, switch: &str) -> SimConfig {
    let text = format!(
        r#"
seed = 3
[topology]
kind = "fat-tree"
k = 4
[switch]
buffer = "30KB"
pfc = {pfc}
{switch}
[transport]
kind = "{transport}"
cc = "{cc}"
[workload]
kind = "poisson"
load = 0.8
duration = "300us"
sizes = {{ uniform = ["1B", "60KB"] }}
verbs = {{ write = 2, write_imm = 1, read = 2, send = 1, atomic = 1 }}
[run]
warmup = "0us"
"#
    );
    let sc = scenario::parse(&text, "verbs-mix.toml", Path::new("."), &[]).unwrap();
    sc.runs.into_iter().next().unwrap().config
}

#[test]
fn a_mix_of_all_verbs_places_every_byte_under_loss_pfc_and_go_back_n() {
    for (transport, pfc, lossy) in [
        ("irn", false, true),
        ("irn-go-back-n", false, true),
        ("irn-without-sack", false, true),
        ("roce", true, false),
        ("irn", true, false),
    ] {
        let cfg = mix_scenario(transport, pfc);
        for verb in Verb::ALL {
            assert!(
                cfg.flows.iter().any(|f| f.verb == Some(verb)),
                "the mix draws {verb:?}"
            );
        }
        let r = irn_sim::run(&cfg, &mut |_| {});
        let s = &r.summary;
        let what = format!("{transport} pfc={pfc}");
        assert_eq!(s.flows_incomplete, 0, "{what}");
        assert_eq!(s.verbs_data_errors, Some(0), "{what}");
        assert!(r.flows.iter().all(|f| f.verb.is_some()), "{what}");
        if lossy {
            assert!(s.drops > 50 && s.retransmissions > 0, "{what}: {s:?}");
        } else {
            assert_eq!(s.drops, 0, "{what}");
        }
        // Same scenario, same seed: the same flows, to the picosecond.
        let again = irn_sim::run(&cfg, &mut |_| {});
        let fcts = |r: &irn_sim::RunResult| r.flows.iter().map(|f| f.fct_us).collect::<Vec<_>>();
        assert_eq!(fcts(&r), fcts(&again), "{what}");
    }
}

#[test]
fn verbs_mixes_that_cannot_work_are_rejected_by_name() {
    let base = "[workload]\nkind = \"poisson\"\nduration = \"100us\"\n";
    let cases: &[(&str, &str)] = &[
        (
            "verbs = { write = 0, read = 0 }",
            "give at least one verb a positive weight",
        ),
        (
            "verbs = { write = -1 }",
            "workload.verbs.write = -1: a relative weight between 0 and 1e9",
        ),
        ("verbs = { writes = 1 }", "unknown field"),
        (
            "verbs = { read = 1 }\n[transport]\nkind = \"tcp\"",
            "needs an RDMA transport",
        ),
        (
            "verbs = { read = 1 }\n[transport]\nheader_overhead = \"16B\"",
            "real headers",
        ),
    ];
    for (extra, want) in cases {
        let text = format!("{base}{extra}\n");
        let err = match scenario::parse(&text, "bad.toml", Path::new("."), &[]) {
            Ok(_) => panic!("accepted: {text}"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains("bad.toml"), "{err}");
        assert!(err.contains(want), "{text}\n→ {err}");
    }
}

#[test]
fn dcqcn_and_dctcp_run_over_verbs() {
    // DCTCP's default step (65 packets per 10 Gb/s) is beyond these 30 KB buffers.
    for (transport, pfc, cc, switch) in [
        ("roce", true, "dcqcn", ""),
        (
            "irn",
            false,
            "dctcp",
            "ecn_kmin = \"10KB\"\necn_kmax = \"10KB\"",
        ),
    ] {
        let cfg = mix_scenario_with(transport, pfc, cc, switch);
        let r = irn_sim::run(&cfg, &mut |_| {});
        let s = &r.summary;
        let what = format!("{transport} with {cc}");
        assert_eq!(s.flows_incomplete, 0, "{what}");
        assert_eq!(s.verbs_data_errors, Some(0), "{what}");
        assert!(s.ecn_marks > 0, "{what}: switches mark verbs packets");
        if cc == "dcqcn" {
            // Marked requests and responses come back as CNPs that cut rates.
            assert!(s.cnps > 0, "{what}");
            assert!(s.cc_avg_min_rate_gbps.unwrap() < 40.0, "{what}: {s:?}");
        } else {
            assert!(s.cc_avg_min_window_packets.is_some(), "{what}");
        }
    }
}
