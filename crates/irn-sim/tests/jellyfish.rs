//! Jellyfish end to end: the Eunomia §5.3 network (80 switches of 8 ports, 128 servers) with
//! short Poisson runs finishes every flow under IRN, under RoCE + PFC, and under per-packet
//! balancing with Eunomia's ordering layer, over shortest paths and over k shortest paths
//! (FKSP, power of two); the same seed repeats a run exactly.

use std::path::Path;

use irn_sim::scenario;

const BASE: &str = r#"
seed = 3
[topology]
kind = "jellyfish"
link_rate = "100Gbps"
link_delay = "1us"
[workload]
load = 0.4
duration = "100us"
"#;

fn run(extra: &str) -> irn_sim::RunResult {
    let text = format!("{BASE}{extra}");
    // A balancer named for k shortest paths needs them (`routing = "k-shortest"`).
    let routed = extra.contains("fksp") || extra.contains("# k-shortest");
    let set = ["topology.routing=\"k-shortest\"".to_string()];
    let set: &[String] = if routed { &set } else { &[] };
    let sc = scenario::parse(&text, "jellyfish.toml", Path::new("."), set).unwrap();
    irn_sim::run(&sc.runs[0].config, &mut |_| {})
}

#[test]
fn every_flow_finishes_on_a_jellyfish_under_each_transport_and_ordering() {
    for extra in [
        "[transport]\nkind = \"irn\"\n",
        "[transport]\nkind = \"roce\"\n[switch]\npfc = true\n",
        "[transport]\nkind = \"irn\"\n[load_balancing]\nkind = \"power-of-two\"\n\
         [ordering]\nkind = \"eunomia\"\n",
        "[transport]\nkind = \"roce\"\n[switch]\npfc = true\n[load_balancing]\n\
         kind = \"spray\"\n[ordering]\nkind = \"ideal\"\n",
        // Source-routed over 8 shortest paths: FKSP, and power of two with Eunomia.
        "[transport]\nkind = \"irn\"\n[load_balancing]\nkind = \"fksp\"\n",
        "# k-shortest\n[transport]\nkind = \"irn\"\n[load_balancing]\nkind = \"power-of-two\"\n\
         [ordering]\nkind = \"eunomia\"\n",
    ] {
        let r = run(extra);
        assert!(
            r.summary.flows_total > 100,
            "{extra}: {}",
            r.summary.flows_total
        );
        assert_eq!(r.summary.flows_incomplete, 0, "{extra}");
        assert!(r.flows.iter().all(|f| f.fct_us.is_some()), "{extra}");
    }
}

#[test]
fn a_jellyfish_run_repeats_itself() {
    let extra = "[load_balancing]\nkind = \"power-of-two\"\n[ordering]\nkind = \"eunomia\"\n";
    let (a, b) = (run(extra), run(extra));
    let fcts = |r: &irn_sim::RunResult| r.flows.iter().map(|f| f.fct_us).collect::<Vec<_>>();
    assert_eq!(fcts(&a), fcts(&b));
}

/// RoCE + PFC on a Jellyfish deadlocks under load: pauses wait on each other around cycles of
/// the random graph (no up-down order), flows stay unfinished until the drain limit, and the
/// summary counts the ports still paused, which `irn run` turns into a warning. Without PFC
/// (IRN) the same traffic finishes.
#[test]
fn a_pfc_deadlock_on_a_jellyfish_is_reported() {
    let text = format!(
        "{BASE}[switch]\nmodel = \"shared-buffer\"\nbuffer = \"1MB\"\n[run]\ndrain_limit = \"2ms\"\n"
    );
    let set = |kind: &str, pfc: bool| {
        vec![
            "workload.load=0.8".to_string(),
            "workload.duration=1ms".to_string(),
            "seed=1".to_string(),
            format!("transport.kind=\"{kind}\""),
            format!("switch.pfc={pfc}"),
        ]
    };
    let run = |kind, pfc| {
        let sc = scenario::parse(&text, "jellyfish.toml", Path::new("."), &set(kind, pfc)).unwrap();
        irn_sim::run(&sc.runs[0].config, &mut |_| {}).summary
    };
    let stuck = run("roce", true);
    assert!(stuck.flows_incomplete > 0);
    assert!(
        stuck.ports_paused_at_end.is_some_and(|n| n > 10),
        "{:?}",
        stuck.ports_paused_at_end
    );
    // The deadlock itself: paused ports around a cycle, each waiting on the next.
    let cycle = stuck.pause_cycle.as_ref().expect("a cycle of paused ports");
    assert!(cycle.len() >= 2, "{cycle:?}");
    assert!(cycle.iter().all(|p| p.starts_with("switch:")), "{cycle:?}");
    let by = stuck.ports_paused_at_end_by.expect("paused ports by cause");
    assert_eq!((by.hosts, by.credit), (0, 0));
    let lossy = run("irn", false);
    assert_eq!(lossy.ports_paused_at_end, None);
    assert_eq!(lossy.pause_cycle, None);
}
