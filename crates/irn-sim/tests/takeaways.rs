//! The IRN paper's three takeaways (§4.2) on the shipped default scenario, shortened:
//! 1. IRN without PFC beats RoCE with PFC;
//! 2. IRN does not need PFC: enabling it makes IRN worse;
//! 3. RoCE needs PFC: disabling it makes RoCE worse.
//!
//! The run is a few milliseconds of arrivals, far from steady state (MODEL §4); docs/reproduce-irn.md shows
//! the ratios from a longer run next to the paper's. On a window this short the 99th-percentile
//! FCT of takeaway 2 is dominated by a handful of the largest flows and flips with the seed, so
//! for takeaway 2 this test asserts the two averages and leaves the tail to the longer run.

use std::path::Path;

use irn_sim::metrics::Summary;
use irn_sim::scenario;

const DEFAULT: &str = include_str!("../../../scenarios/default.toml");

fn run_all() -> Vec<(String, Summary)> {
    let overrides = [
        "workload.duration=6ms".to_string(),
        "run.warmup=1ms".to_string(),
    ];
    let sc = scenario::parse(
        DEFAULT,
        "scenarios/default.toml",
        Path::new("."),
        &overrides,
    )
    .unwrap();
    let names: Vec<String> = sc.runs.iter().map(|r| r.name.clone()).collect();
    assert_eq!(names, ["IRN", "RoCE+PFC", "IRN+PFC", "RoCE"]);
    std::thread::scope(|s| {
        let handles: Vec<_> = sc
            .runs
            .iter()
            .map(|r| s.spawn(|| (r.name.clone(), irn_sim::run(&r.config, &mut |_| {}).summary)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn worse(a: &Summary, b: &Summary) -> [(&'static str, f64); 3] {
    [
        (
            "avg slowdown",
            a.avg_slowdown.unwrap() / b.avg_slowdown.unwrap(),
        ),
        ("avg FCT", a.avg_fct_us.unwrap() / b.avg_fct_us.unwrap()),
        ("p99 FCT", a.p99_fct_us.unwrap() / b.p99_fct_us.unwrap()),
    ]
}

#[test]
fn the_three_takeaways_hold() {
    let results = run_all();
    let get = |name: &str| &results.iter().find(|(n, _)| n == name).unwrap().1;
    let (irn, roce_pfc, irn_pfc, roce) = (get("IRN"), get("RoCE+PFC"), get("IRN+PFC"), get("RoCE"));
    for (name, s) in &results {
        assert!(s.flows_measured > 3000, "{name}: {s:?}");
        // Go-back-N without PFC collapses under this load (most of what it sends is resent and
        // most of that is dropped), so some of its flows may still be unfinished at the drain
        // limit; they are left out of its FCTs, which only flatters it.
        if name != "RoCE" {
            assert_eq!(s.flows_incomplete, 0, "{name}: {s:?}");
        }
    }
    // PFC is lossless; without it, buffers overflow.
    assert_eq!(roce_pfc.drops, 0);
    assert_eq!(irn_pfc.drops, 0);
    assert!(roce_pfc.pause_frames > 0 && irn_pfc.pause_frames > 0);
    assert!(irn.drops > 0 && roce.drops > 0);

    for (metric, ratio) in worse(roce_pfc, irn) {
        assert!(
            ratio > 1.0,
            "takeaway 1: RoCE+PFC / IRN {metric} = {ratio:.3}"
        );
    }
    for (metric, ratio) in worse(irn_pfc, irn).into_iter().take(2) {
        assert!(
            ratio > 1.0,
            "takeaway 2: IRN+PFC / IRN {metric} = {ratio:.3}"
        );
    }
    for (metric, ratio) in worse(roce, roce_pfc) {
        assert!(
            ratio > 1.0,
            "takeaway 3: RoCE / RoCE+PFC {metric} = {ratio:.3}"
        );
    }
}
