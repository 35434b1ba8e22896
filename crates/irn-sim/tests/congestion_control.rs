//! The IRN paper's results with congestion control (§4.2.4, §4.5, §4.6), on the shipped
//! scenarios `scenarios/paper/fig04.toml` … `fig11.toml`, shortened to a few milliseconds:
//! - Fig. 4: with Timely and with DCQCN, IRN without PFC beats RoCE with PFC;
//! - Fig. 5: with Timely or DCQCN, enabling PFC changes IRN only a little;
//! - Fig. 6: with Timely or DCQCN, RoCE still needs PFC;
//! - Fig. 10: IRN without congestion control beats Resilient RoCE (RoCE + DCQCN, no PFC) on
//!   FCTs (see docs/reproduce-irn.md for its average slowdown);
//! - Fig. 11: IRN's FCTs are comparable to TCP's (iWARP); IRN + AIMD beats TCP.
//!
//! Two of the paper's directions do not hold for irn's average slowdown, IRN (no CC) against
//! Resilient RoCE and against TCP; docs/reproduce-irn.md shows and discusses them. They are not asserted.
//!
//! Variants shared between figures (e.g. IRN+Timely in Figs. 4 and 5) run once.

use std::collections::BTreeMap;
use std::path::Path;

use irn_sim::metrics::Summary;
use irn_sim::scenario;

const FIGURES: [&str; 5] = ["fig04", "fig05", "fig06", "fig10", "fig11"];

/// Every variant of every figure, run once each: name → summary.
fn run_figures() -> BTreeMap<String, Summary> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/paper");
    let overrides = [
        "workload.duration=5ms".to_string(),
        "run.warmup=1ms".to_string(),
    ];
    let mut runs = BTreeMap::new();
    for fig in FIGURES {
        let sc = scenario::load(&dir.join(format!("{fig}.toml")), &overrides).unwrap();
        for run in sc.runs {
            runs.entry(run.name.clone()).or_insert(run);
        }
    }
    let runs: Vec<_> = runs.into_values().collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(BTreeMap::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(run) = runs.get(i) else { break };
                let summary = irn_sim::run(&run.config, &mut |_| {}).summary;
                results.lock().unwrap().insert(run.name.clone(), summary);
            });
        }
    });
    results.into_inner().unwrap()
}

type Metric = fn(&Summary) -> f64;
const AVG_SLOWDOWN: (&str, Metric) = ("avg slowdown", |s| s.avg_slowdown.unwrap());
const AVG_FCT: (&str, Metric) = ("avg FCT", |s| s.avg_fct_us.unwrap());
const P99_FCT: (&str, Metric) = ("p99 FCT", |s| s.p99_fct_us.unwrap());

#[test]
fn congestion_control_results_hold() {
    let r = run_figures();
    let get = |name: &str| {
        r.get(name)
            .unwrap_or_else(|| panic!("no run named {name}: {:?}", r.keys()))
    };
    let ratio = |a: &str, b: &str, (metric, f): (&str, Metric)| {
        let v = f(get(a)) / f(get(b));
        eprintln!("{a} / {b} {metric}: {v:.3}");
        v
    };
    for (name, s) in &r {
        assert_eq!(s.flows_incomplete, 0, "{name}: {s:?}");
        assert!(s.flows_measured > 2000, "{name}: {s:?}");
    }
    for cc in ["Timely", "DCQCN"] {
        let (irn, irn_pfc) = (format!("IRN+{cc}"), format!("IRN+PFC+{cc}"));
        let (roce, roce_pfc) = (format!("RoCE+{cc}"), format!("RoCE+PFC+{cc}"));
        assert!(get(&irn).cnps + get(&irn).ecn_marks > 0 || cc == "Timely");
        assert!(
            get(&irn).cc_avg_min_rate_gbps.is_some_and(|r| r < 40.0),
            "{cc} never slowed a flow"
        );
        // Fig. 4
        for m in [AVG_SLOWDOWN, AVG_FCT, P99_FCT] {
            assert!(ratio(&roce_pfc, &irn, m) > 1.0, "Fig. 4 with {cc}: {}", m.0);
        }
        // Fig. 5: the paper sees at most 1 % better and 3.4 % worse; a short run is noisier.
        for m in [AVG_SLOWDOWN, AVG_FCT] {
            let v = ratio(&irn_pfc, &irn, m);
            assert!(
                (0.9..1.1).contains(&v),
                "Fig. 5 with {cc}: PFC moved IRN's {} by {v:.3}",
                m.0
            );
        }
        // Fig. 6
        for m in [AVG_SLOWDOWN, AVG_FCT] {
            assert!(
                ratio(&roce, &roce_pfc, m) > 1.0,
                "Fig. 6 with {cc}: {}",
                m.0
            );
        }
    }
    // Fig. 10
    for m in [AVG_FCT, P99_FCT] {
        assert!(ratio("Resilient RoCE", "IRN", m) > 1.0, "Fig. 10: {}", m.0);
    }
    // Fig. 11
    assert!(
        ratio("TCP (iWARP)", "IRN", AVG_SLOWDOWN) > 1.0,
        "Fig. 11: IRN vs TCP slowdown"
    );
    assert!(
        ratio("IRN+AIMD", "IRN", AVG_SLOWDOWN) < 1.0,
        "Fig. 11: AIMD should help IRN"
    );
    for m in [AVG_SLOWDOWN, AVG_FCT] {
        assert!(
            ratio("TCP (iWARP)", "IRN+AIMD", m) > 1.0,
            "Fig. 11: IRN+AIMD vs TCP {}",
            m.0
        );
    }
    assert!(get("TCP (iWARP)").cc_avg_min_window_packets.is_some());
}
