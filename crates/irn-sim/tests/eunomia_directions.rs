//! Eunomia's first finding (its Fig. 1, and Fig. 12's pauses) on the shipped `eunomia.toml`,
//! shortened: on a 2:1 Clos with PFC and DCQCN, per-packet load balancing without an ordering
//! layer is far worse than ECMP (reordering read as loss), and with Eunomia's layer it is far
//! better, with fewer PFC pauses. docs/reproduce-eunomia.md gives the full numbers beside the paper's.

use std::path::Path;

use irn_sim::metrics::Summary;
use irn_sim::scenario;

const EUNOMIA: &str = include_str!("../../../scenarios/eunomia.toml");

fn run_all() -> Vec<(String, Summary)> {
    let overrides = ["workload.duration=1ms".to_string()];
    let scenarios = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let sc = scenario::parse(EUNOMIA, "scenarios/eunomia.toml", &scenarios, &overrides).unwrap();
    std::thread::scope(|s| {
        let handles: Vec<_> = sc
            .runs
            .iter()
            .map(|r| s.spawn(|| (r.name.clone(), irn_sim::run(&r.config, &mut |_| {}).summary)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn fine_grained_balancing_needs_an_ordering_layer() {
    let runs = run_all();
    let names: Vec<&str> = runs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["ECMP", "DRILL", "DRILL+Eunomia", "spray+Eunomia"]);
    let s = |i: usize| &runs[i].1;
    for (_, r) in &runs {
        assert_eq!(r.flows_incomplete, 0, "{r:?}");
    }
    let (ecmp, drill, drill_eunomia, spray_eunomia) = (s(0), s(1), s(2), s(3));
    // Without ordering, DRILL's reordering makes go-back-N resend (Fig. 1c's "GBN triggers").
    assert_eq!(ecmp.recoveries, 0);
    assert!(drill.recoveries > 1000, "{}", drill.recoveries);
    // With the ConnectX's DCQCN (ConWeave's values) the gap is smaller than with the paper's
    // rule (1.5x here on 1 ms, 4.9x with `dcqcn-paper`), but it is there.
    assert!(
        drill.avg_fct_us.unwrap() > 1.2 * ecmp.avg_fct_us.unwrap(),
        "{drill:?}"
    );
    // With Eunomia, both fine-grained balancers beat ECMP on average and tail FCT.
    for lb in [drill_eunomia, spray_eunomia] {
        assert!(
            lb.avg_fct_us.unwrap() < 0.9 * ecmp.avg_fct_us.unwrap(),
            "{lb:?} against {ecmp:?}"
        );
        assert!(lb.p99_fct_us.unwrap() < ecmp.p99_fct_us.unwrap(), "{lb:?}");
        assert!(lb.pause_frames <= ecmp.pause_frames, "{lb:?}");
        assert_eq!(lb.ordering_blocks_at_end, Some(0));
    }
}

const FIG10: &str = include_str!("../../../scenarios/paper/eunomia/fig10.toml");

/// DRILL's tie rule on Fig. 10's Clos at 50 % (1 ms from an empty network): when a remembered
/// next hop keeps every tie (ConWeave's ns-3), a destination's packets keep one path while the
/// leaves' queues tie, flows reorder further than Eunomia's bitmap reaches, and the layer
/// refuses packets that go-back-N then resends; when samples win ties, DRILL reorders as
/// power of two does and nothing is refused (docs/reproduce-eunomia.md, "DRILL's ties").
#[test]
fn drill_keeping_ties_in_memory_reorders_beyond_the_layer() {
    // Fig. 10's setting without its variants.
    let base = FIG10.split("[[compare]]").next().unwrap();
    let scenarios = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let config = |balancing: &str| {
        let overrides = [
            "workload.load=0.25",
            "workload.duration=1ms",
            "run.warmup=0us",
            "ordering.kind=\"eunomia\"",
            "ordering.pool_blocks=65536",
            &format!("load_balancing={{ {balancing} }}"),
        ]
        .map(String::from);
        let sc = scenario::parse(base, "fig10.toml", &scenarios, &overrides).unwrap();
        sc.runs.into_iter().next().unwrap().config
    };
    let configs = [
        config("kind = \"drill\""),
        config("kind = \"drill\", ties = \"sample\""),
        config("kind = \"power-of-two\""),
    ];
    let [memory, sample, two]: [Summary; 3] = std::thread::scope(|s| {
        let runs: Vec<_> = (configs.iter())
            .map(|c| s.spawn(|| irn_sim::run(c, &mut |_| {}).summary))
            .collect();
        let done: Vec<Summary> = runs.into_iter().map(|h| h.join().unwrap()).collect();
        done.try_into().unwrap()
    });
    let refused = |s: &Summary| s.ordering_drops.unwrap_or(0);
    assert!(refused(&memory) > 100, "{memory:?}");
    assert!(memory.retransmissions > refused(&memory), "{memory:?}");
    for other in [&sample, &two] {
        assert_eq!((refused(other), other.retransmissions), (0, 0), "{other:?}");
        assert!(
            memory.out_of_order_packets as f64 > 1.15 * other.out_of_order_packets as f64,
            "{memory:?} against {other:?}"
        );
    }
    let (a, b) = (
        sample.out_of_order_packets as f64,
        two.out_of_order_packets as f64,
    );
    assert!(
        (a / b - 1.0).abs() < 0.1,
        "sample {a} against power of two {b}"
    );
}
