//! `[workload] kind = "queries"` (Eunomia §5.5): repeated incast queries and their completion
//! times (QCT = the last flow of a query received − the query's arrival).

use std::path::Path;

use irn_core::{Duration, Time};
use irn_sim::ids::HostIdx;
use irn_sim::scenario::parse;
use irn_sim::workload::{FlowClass, FlowSpec};

/// A 4-host star at 40 Gb/s, no PFC, IRN.
const STAR: &str = "[topology]\nkind = \"star\"\nhosts = 4\n";

fn config(text: &str) -> irn_sim::config::SimConfig {
    parse(text, "q.toml", Path::new("."), &[])
        .unwrap()
        .runs
        .remove(0)
        .config
}

fn query_flow(src: u32, dst: u32, size_bytes: u64, start: Time, id: u32) -> FlowSpec {
    FlowSpec {
        src: HostIdx(src),
        dst: HostIdx(dst),
        size_bytes,
        start,
        class: FlowClass::Query(id),
        verb: None,
    }
}

/// One query of two senders of different sizes to host 3, arriving at 10 µs: its QCT is the
/// slower flow's completion minus the arrival, which here is that flow's FCT.
#[test]
fn qct_is_the_slowest_flow_of_the_query() {
    let mut cfg = config(&format!(
        "{STAR}[workload]\nkind = \"queries\"\nload = 0.1\nsenders = 2\nsize = \"4KB\"\n"
    ));
    let arrival = Time::ZERO + Duration::from_us(10);
    cfg.flows = vec![
        query_flow(0, 3, 4_000, arrival, 0),
        query_flow(1, 3, 20_000, arrival, 0),
    ]
    .into();
    let result = irn_sim::run(&cfg, &mut |_| {});
    let fcts: Vec<f64> = result.flows.iter().map(|f| f.fct_us.unwrap()).collect();
    assert!(fcts[1] > fcts[0], "{fcts:?}");
    // Both flows share host 3's 40 Gb/s downlink: 24 kB of payload takes at least 4.8 µs.
    assert!(fcts[1] >= 4.8, "{fcts:?}");
    let q = result.summary.queries.clone().unwrap();
    assert_eq!((q.count, q.completed, q.unfinished), (1, 1, 0));
    assert_eq!(q.qct_mean_us, Some(fcts[1]));
    assert_eq!(q.qct_p99_us, Some(fcts[1]));
    assert!(result.flows.iter().all(|f| f.query == Some(Some(0))));
}

/// A query with a flow cut off by the drain limit is unfinished: counted, but left out of the
/// QCT statistics, which the completed query alone makes.
#[test]
fn an_unfinished_query_is_censored() {
    let mut cfg = config(&format!(
        "{STAR}[workload]\nkind = \"queries\"\nload = 0.1\nsenders = 2\n\
         [run]\ndrain_limit = \"50us\"\n"
    ));
    let t0 = Time::ZERO;
    cfg.flows = vec![
        query_flow(0, 3, 1_000, t0, 0),
        query_flow(1, 3, 1_000, t0, 0),
        // 10 MB takes 2 ms at 40 Gb/s: far beyond the drain limit.
        query_flow(0, 2, 1_000, t0, 1),
        query_flow(1, 2, 10_000_000, t0, 1),
    ]
    .into();
    let result = irn_sim::run(&cfg, &mut |_| {});
    let q = result.summary.queries.clone().unwrap();
    assert_eq!((q.count, q.completed, q.unfinished), (2, 1, 1));
    let first = result.flows[0]
        .fct_us
        .unwrap()
        .max(result.flows[1].fct_us.unwrap());
    assert_eq!(q.qct_mean_us, Some(first));
    assert!(result.flows[3].fct_us.is_none());
}

/// Same seed, same queries and the same results; another seed, other queries. Background
/// traffic is kept apart from the queries' flows in the summary.
#[test]
fn queries_are_seeded_and_background_is_summarised_apart() {
    let text = |seed: u64| {
        format!(
            "seed = {seed}\n[topology]\nkind = \"star\"\nhosts = 8\n[workload]\nkind = \
             \"queries\"\nload = 0.2\nsenders = 3\nsize = \"10KB\"\nduration = \"200us\"\n\
             background_load = 0.2\n"
        )
    };
    let a = config(&text(1));
    let b = config(&text(1));
    let c = config(&text(2));
    assert_eq!(a.flows, b.flows);
    assert_ne!(a.flows, c.flows);
    let queries = |cfg: &irn_sim::config::SimConfig| {
        cfg.flows
            .iter()
            .filter(|f| matches!(f.class, FlowClass::Query(_)))
            .count()
    };
    assert!(
        queries(&a) >= 3 && queries(&a) < a.flows.len(),
        "{}",
        a.flows.len()
    );
    let ra = irn_sim::run(&a, &mut |_| {});
    let rb = irn_sim::run(&b, &mut |_| {});
    assert_eq!(ra.summary, rb.summary);
    let q = ra.summary.queries.clone().unwrap();
    assert_eq!(q.count * 3, queries(&a));
    assert!(q.qct_mean_us.is_some() && q.qct_p99_us >= q.qct_mean_us);
    assert!(ra.summary.background_avg_fct_us.is_some());
    assert!(ra.flows.iter().any(|f| f.query == Some(None)));
}

#[test]
fn malformed_queries_are_refused_naming_file_key_and_value() {
    let err = |keys: &str| {
        parse(
            &format!("{STAR}[workload]\nkind = \"queries\"\n{keys}"),
            "q.toml",
            Path::new("."),
            &[],
        )
        .map(|_| ())
        .unwrap_err()
        .to_string()
    };
    for (keys, want) in [
        (
            "load = 0.1\nsenders = 4\n",
            "q.toml: workload.senders = 4: between 1 and 3 senders per query",
        ),
        (
            "load = 0.1\nsenders = 0\n",
            "q.toml: workload.senders = 0: between 1 and 3",
        ),
        // The default of 50 senders needs more hosts than a 4-host star has.
        (
            "load = 0.1\n",
            "q.toml: workload.senders = 50: between 1 and 3",
        ),
        (
            "senders = 2\n",
            "q.toml: workload.load = (missing): required for kind = \"queries\"",
        ),
        (
            "load = 1.5\nsenders = 2\n",
            "q.toml: workload.load = 1.5: a fraction",
        ),
        (
            "load = 0.1\nsenders = 2\nsize = \"0B\"\n",
            "q.toml: workload.size = \"0B\": between 1B and 2GiB",
        ),
        (
            "load = 0.1\nsenders = 2\ntotal = \"1MB\"\n",
            "q.toml: workload.total is set: does not apply",
        ),
        (
            "load = 0.1\nsenders = 2\nsizes = \"irn-default\"\n",
            "q.toml: workload.sizes is set: does not apply",
        ),
        (
            "load = 0.1\nsenders = 2\nbackground_duration = \"1ms\"\n",
            "workload.background_duration is set",
        ),
        (
            "load = 0.1\nsenders = 2\nreceivers = 3\n",
            "unknown field `receivers`",
        ),
        (
            "load = 0.001\nsenders = 2\nduration = \"1ns\"\n",
            "q.toml: workload.duration = \"1ns\": no query arrives",
        ),
    ] {
        let e = err(keys);
        assert!(e.contains(want), "{keys}: {e}");
    }
    // `size` belongs to queries alone.
    let e = parse(
        "[workload]\nsize = \"1KB\"\n",
        "q.toml",
        Path::new("."),
        &[],
    )
    .map(|_| ())
    .unwrap_err()
    .to_string();
    assert!(e.contains("workload.size is set: does not apply"), "{e}");
}
