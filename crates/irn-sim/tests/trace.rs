//! Flow traces (`irn run --trace-flow`) on a network worked out by hand: host 0 sends to host 1
//! through one switch whose exit link runs at half the rate, so packets queue there; every row
//! of the traced flow is checked. Tracing changes no result, and repeats itself.

use irn_core::transport::TransportConfig;
use irn_core::{Bandwidth, Duration, Psn, Time};
use irn_sim::config::{EcnConfig, InitialPsn, SimConfig, SwitchConfig, SwitchModel};
use irn_sim::ids::{HostIdx, NodeId};
use irn_sim::sim::trace::{check_flows, TraceRow, HEADER};
use irn_sim::topology::{LinkSpec, NodeKind, Topology};
use irn_sim::workload::{FlowClass, FlowSpec};

/// Host 0 → switch (node 2) at 40 Gb/s, switch → host 1 at 20 Gb/s, 1 µs each: a full frame
/// (1086 B) takes 217.2 ns in, 434.4 ns out.
fn network() -> Topology {
    let link = |a, b, gbps| LinkSpec {
        a: NodeId(a),
        b: NodeId(b),
        rate: Bandwidth::from_gbps(gbps),
        delay: Duration::from_us(1),
    };
    Topology::from_links(
        vec![NodeKind::Host, NodeKind::Host, NodeKind::Switch],
        vec![link(0, 2, 40), link(2, 1, 20)],
    )
    .unwrap()
}

/// Three full packets from host 0 to host 1 (and, with `second`, one more flow from host 1 to
/// host 0 that is not traced), IRN, PSNs from 0.
fn config(buffer_bytes: u64, ecn: Option<EcnConfig>, second: bool) -> SimConfig {
    let flow = |src, dst| FlowSpec {
        src: HostIdx(src),
        dst: HostIdx(dst),
        size_bytes: 3 * 1024,
        start: Time::ZERO,
        class: FlowClass::Regular,
        verb: None,
    };
    let mut flows = vec![flow(0, 1)];
    if second {
        flows.push(flow(1, 0));
    }
    let cfg = SimConfig::new(
        network(),
        SwitchConfig {
            model: SwitchModel::InputQueued,
            buffer_bytes,
            pfc: None,
            ecn,
        },
        TransportConfig::irn(),
        flows,
    );
    SimConfig {
        initial_psn: InitialPsn::Fixed(Psn::new(0)),
        ..cfg
    }
}

fn trace(cfg: &SimConfig, ids: &[u32]) -> (Vec<String>, String) {
    let mut rows = Vec::new();
    let mut sink = |row: &TraceRow| rows.push(row.to_string());
    let result = irn_sim::run_traced(cfg, ids, &mut sink, &mut |_| {}, None);
    (rows, format!("{:?}", result.flows))
}

#[test]
fn a_dropped_packet_is_traced_through_its_timeout_and_retransmission() {
    // A 2000 B input buffer holds one queued frame: packet 0 goes straight through the idle
    // exit, packet 1 waits behind it, packet 2 (arriving as packet 0 leaves) finds 1086 B
    // queued and no room. ACKs (64 B) take 25.6 ns at 20 Gb/s, 12.8 ns at 40 Gb/s. Packet 2
    // waits for the sender's RTO_low, 100 µs after the last ACK re-armed the timer.
    let (rows, _) = trace(&config(2000, None, false), &[0]);
    let want = [
        "0.000000,0,host0,,start,,3072,",
        "0.000000,0,host0,0,send,0,1086,data",
        "0.217200,0,host0,0,send,1,1086,data",
        "0.434400,0,host0,0,send,2,1086,data",
        // 0.2172 + 1 µs: at the switch, whose exit (its port 1) is idle.
        "1.217200,0,switch0,1,enqueue,0,1086,queue_bytes=0",
        "1.217200,0,switch0,1,dequeue,0,1086,",
        "1.434400,0,switch0,1,enqueue,1,1086,queue_bytes=0",
        // Packet 2 arrives as packet 0 is out (1.2172 + 0.4344): 2 × 1086 B > 2000 B.
        "1.651600,0,switch0,1,drop,2,1086,",
        "1.651600,0,switch0,1,dequeue,1,1086,",
        // + 1 µs: packet 0 at host 1, which acknowledges it at once.
        "2.651600,0,host1,0,arrive,0,1086,data",
        "2.651600,0,host1,0,send,1,64,ack",
        // 1.6516 + 0.4344 + 1.
        "3.086000,0,host1,0,arrive,1,1086,data",
        "3.086000,0,host1,0,send,2,64,ack",
        // 2.6516 + 0.0256 + 1.
        "3.677200,0,switch0,0,enqueue,1,64,queue_bytes=0",
        "3.677200,0,switch0,0,dequeue,1,64,",
        "4.111600,0,switch0,0,enqueue,2,64,queue_bytes=0",
        "4.111600,0,switch0,0,dequeue,2,64,",
        // + 0.0128 + 1.
        "4.690000,0,host0,0,arrive,1,64,ack",
        "5.124400,0,host0,0,arrive,2,64,ack",
        // 5.1244 + 100: a timeout starts a recovery that flows.csv does not count (NACKs do).
        "105.124400,0,host0,,timeout,,,timeouts=1",
        "105.124400,0,host0,,recovery_enter,,,recoveries=0",
        "105.124400,0,host0,0,send,2,1086,data retransmission",
        "106.341600,0,switch0,1,enqueue,2,1086,queue_bytes=0",
        "106.341600,0,switch0,1,dequeue,2,1086,",
        "107.776000,0,host1,0,arrive,2,1086,data retransmission",
        "107.776000,0,host1,,received,,,",
        "107.776000,0,host1,0,send,3,64,ack",
        "108.801600,0,switch0,0,enqueue,3,64,queue_bytes=0",
        "108.801600,0,switch0,0,dequeue,3,64,",
        "109.814400,0,host0,0,arrive,3,64,ack",
        "109.814400,0,host0,,recovery_exit,,,",
        "109.814400,0,host0,,acked,,,",
    ];
    assert_eq!(rows, want, "\n{}", rows.join("\n"));
}

#[test]
fn ecn_marks_and_queueing_are_traced_per_hop() {
    // Marking at any queue at all (0 B thresholds): every data packet is marked as it leaves
    // the switch, so each arrives with CE and its ACK echoes it.
    let ecn = EcnConfig {
        kmin_bytes: 0,
        kmax_bytes: 0,
        pmax: 1.0,
        per_rate: false,
        counts_departing: true,
    };
    let (rows, _) = trace(&config(1_000_000, Some(ecn), false), &[0]);
    let hop: Vec<&str> = rows
        .iter()
        .map(String::as_str)
        .filter(|r| r.contains(",switch0,1,") || r.contains(",arrive,") && r.contains("data"))
        .collect();
    assert_eq!(
        hop,
        [
            "1.217200,0,switch0,1,enqueue,0,1086,queue_bytes=0",
            "1.217200,0,switch0,1,dequeue,0,1086,",
            "1.217200,0,switch0,1,ecn_mark,0,1086,",
            "1.434400,0,switch0,1,enqueue,1,1086,queue_bytes=0",
            "1.651600,0,switch0,1,enqueue,2,1086,queue_bytes=1086",
            "1.651600,0,switch0,1,dequeue,1,1086,",
            "1.651600,0,switch0,1,ecn_mark,1,1086,",
            "2.086000,0,switch0,1,dequeue,2,1086,",
            "2.086000,0,switch0,1,ecn_mark,2,1086,",
            "2.651600,0,host1,0,arrive,0,1086,data ce",
            "3.086000,0,host1,0,arrive,1,1086,data ce",
            "3.520400,0,host1,0,arrive,2,1086,data ce",
        ],
        "\n{}",
        rows.join("\n")
    );
}

#[test]
fn tracing_changes_no_result_and_repeats_itself() {
    for cfg in [config(2000, None, true), config(1_000_000, None, true)] {
        let plain = format!("{:?}", irn_sim::run(&cfg, &mut |_| {}).flows);
        let (once, flows) = trace(&cfg, &[0, 1]);
        let (again, _) = trace(&cfg, &[0, 1]);
        assert_eq!(flows, plain);
        assert_eq!(once, again);
        // Both flows, in time order.
        assert!(once.iter().any(|r| r.contains(",1,host1,,start,")));
        let times: Vec<f64> = once
            .iter()
            .map(|r| r.split(',').next().unwrap().parse().unwrap())
            .collect();
        assert!(times.is_sorted(), "{once:#?}");
        // Untraced flows leave no rows.
        let (only0, _) = trace(&cfg, &[0]);
        assert!(only0.iter().all(|r| r.split(',').nth(1) == Some("0")));
    }
}

#[test]
fn rows_have_the_documented_columns_and_unknown_flows_are_named() {
    assert_eq!(HEADER, "time_us,flow,node,port,event,psn,bytes,detail");
    let (rows, _) = trace(&config(2000, None, false), &[0]);
    assert!(rows.iter().all(|r| r.split(',').count() == 8), "{rows:#?}");
    assert_eq!(check_flows(&[0, 2], 3), Ok(()));
    assert_eq!(
        check_flows(&[0, 3], 3),
        Err(
            "flow 3 does not exist: the run's flows are 0 to 2 (the `flow_id` column of flows.csv)"
                .into()
        )
    );
    assert_eq!(
        check_flows(&[0], 0),
        Err("flow 0 does not exist: the run has no flows".into())
    );
}

/// A packet lost on a lossy link's wire is traced as `lost` with `cause=wire`, at the port
/// whose link lost it; traced for every flow, the rows count the summary's link losses.
#[test]
fn a_packet_lost_on_the_wire_says_so() {
    let text = "[topology]\nkind = \"star\"\nhosts = 4\nloss_rate = 0.02\n\
                [workload]\nload = 0.5\nduration = \"100us\"\n";
    let sc = irn_sim::scenario::parse(text, "t.toml", std::path::Path::new("."), &[]).unwrap();
    let cfg = &sc.runs[0].config;
    let ids: Vec<u32> = (0..cfg.flows.len() as u32).collect();
    let (rows, _) = trace(cfg, &ids);
    let lost: Vec<&String> = rows.iter().filter(|r| r.contains(",lost,")).collect();
    assert!(!lost.is_empty());
    assert!(lost.iter().all(|r| r.ends_with(",cause=wire")), "{lost:?}");
    let summary = irn_sim::run(cfg, &mut |_| {}).summary;
    assert_eq!(Some(lost.len() as u64), summary.link_losses);
}

/// A packet held for a failed link (`to_failed_link = "hold"`) is enqueued `held`; traced for
/// every flow, those rows count the summary's held packets.
#[test]
fn a_packet_held_for_a_failed_link_says_so() {
    let text = "[topology]\nkind = \"fat-tree\"\nk = 4\n[switch]\npfc = true\n\
                [transport]\nkind = \"roce\"\n[workload]\nload = 0.5\nduration = \"150us\"\n\
                [failures]\nto_failed_link = \"hold\"\nreconvergence = \"1ms\"\n\
                [[failures.link]]\nnodes = [16, 24]\nat = \"50us\"\nfor = \"50us\"\n";
    let sc = irn_sim::scenario::parse(text, "t.toml", std::path::Path::new("."), &[]).unwrap();
    let cfg = &sc.runs[0].config;
    let ids: Vec<u32> = (0..cfg.flows.len() as u32).collect();
    let (rows, _) = trace(cfg, &ids);
    let held = rows
        .iter()
        .filter(|r| r.contains(",enqueue,") && r.ends_with(" held"));
    let summary = irn_sim::run(cfg, &mut |_| {}).summary;
    let failures = summary.failures.unwrap();
    assert!(failures.packets_held > 0);
    assert_eq!(held.count() as u64, failures.packets_held);
}
