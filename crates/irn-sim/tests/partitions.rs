//! Partitioned runs (`[run] partitions`): a fat-tree's pods take their events a window at a
//! time. Each run here is built the way a user builds it, from `--set` overrides. Under `cargo
//! test` the event queue checks that nothing crosses into another partition, or reaches the
//! whole network, before the window being served ends; these runs exercise that check with
//! each feature that schedules across nodes. They also check that a partitioned run finishes
//! its flows, repeats itself, and agrees with the global order: exactly where no two events
//! of different pods tie, closely where they do.

use std::path::Path;

use irn_sim::config::SimConfig;
use irn_sim::metrics::RunResult;
use irn_sim::partition::Partitioning;
use irn_sim::scenario;
use irn_sim::sim::trace::TraceRow;

/// The run of a k = 4 fat-tree (4 pods of 4 hosts), or of the topology `keys` name, with `keys`,
/// under `partitions`.
fn run(keys: &str, partitions: &str) -> RunResult {
    irn_sim::run(&config(keys, partitions), &mut |_| {})
}

fn config(keys: &str, partitions: &str) -> SimConfig {
    let topology = if keys.contains("topology.kind") {
        ""
    } else {
        "topology.kind=fat-tree topology.k=4"
    };
    let mut set: Vec<String> = "workload.duration=500us workload.load=0.6 run.warmup=0us \
                                run.drain_limit=20ms"
        .split_whitespace()
        .chain(topology.split_whitespace())
        .chain(keys.split_whitespace())
        .map(String::from)
        .collect();
    set.push(format!("run.partitions={partitions}"));
    let mut sc = scenario::parse("", "partitions.toml", Path::new("."), &set).unwrap();
    sc.runs.swap_remove(0).config
}

fn flows(r: &RunResult) -> Vec<String> {
    r.flows.iter().map(|f| format!("{f:?}")).collect()
}

#[test]
fn each_feature_runs_partitioned_to_the_end_and_repeats_itself() {
    let features = [
        "transport.kind=irn",
        "transport.kind=roce switch.pfc=true",
        "transport.kind=roce transport.cc=dcqcn switch.pfc=true switch.model=shared-buffer",
        "transport.kind=irn transport.cc=hpcc",
        "transport.kind=irn load_balancing.kind=spray ordering.kind=eunomia",
        "transport.kind=irn monitor.interval=5us",
        "transport.kind=irn topology.loss_rate=0.001",
        "transport.kind=irn failures.fraction=0.1 failures.interval=30us",
        "transport.kind=roce switch.pfc=true pauses.hosts=[0] pauses.gap=20us pauses.length=2us",
        // A flow's later packets overtake its earlier ones, whose late duplicates then reach
        // receivers after the end: the receiver answers whether or not its partition has seen
        // the end yet, as in one global order.
        "transport.kind=irn switch.model=shared-buffer switch.scheduling=srpt-per-packet",
        // The three-tier Clos's pods, and a rail-optimized fabric's rail leaves with their NICs.
        "transport.kind=roce switch.pfc=true topology.kind=clos3 topology.pods=4 \
         topology.leaves=2 topology.spines=2 topology.hosts_per_leaf=4 topology.super_spines=2",
        "transport.kind=irn topology.kind=rail topology.groups=2 topology.servers=4 \
         topology.rails=4 topology.spines=2",
    ];
    for keys in features {
        let (a, b) = (run(keys, "4"), run(keys, "4"));
        assert_eq!(a.summary.flows_incomplete, 0, "{keys}");
        assert!(a.flows.len() > 50, "{keys}: {} flows", a.flows.len());
        assert_eq!(
            flows(&a),
            flows(&b),
            "{keys}: a partitioned run repeats itself"
        );
        let global = run(keys, "off");
        // Two packets reach a switch at the same picosecond from two other nodes, and are
        // taken in another order than one global queue takes them (the window is served node
        // by node): with spraying, the spray's turn goes to the other one first, and 106
        // flows end a few ns apart; with lossy links, failures and the rail fabric, one
        // packet waits behind another for a frame's time (12.8 ns), and where that moves a
        // loss or a timeout, a flow ends differently (2, 5 and 1 flows of 144, 144 and 255;
        // the failures' mean FCT moves by 4.2 %, from two flows that time out 2 and 5 times).
        let tolerance = if keys.contains("failures") {
            Some(0.10)
        } else if ["spray", "loss_rate", "rail"]
            .iter()
            .any(|k| keys.contains(k))
        {
            Some(0.01)
        } else {
            None
        };
        match tolerance {
            Some(tolerance) => {
                let fct = |r: &RunResult| r.summary.avg_fct_us.unwrap();
                let (p, g) = (fct(&a), fct(&global));
                assert!(
                    (p / g - 1.0).abs() < tolerance,
                    "{keys}: mean FCT {p} partitioned, {g} not"
                );
            }
            None => assert_eq!(flows(&a), flows(&global), "{keys}: as in one global order"),
        }
    }
}

#[test]
fn with_links_shorter_than_the_window_a_partition_runs_in_time_order() {
    // Eight leaves of four hosts under four spines, the hosts on 200 ns links and the fabric
    // on 2 us ones: the partitions (two leaves each) run 2 us apart, but within one a leaf
    // reaches its hosts sooner, so its events are served in time order, not node by node.
    let dir = std::env::temp_dir().join(format!("irn-partitions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("short_host_links.txt");
    let (hosts, leaves, spines) = (32, 8, 4);
    let mut text = format!(
        "{} {} {}\n",
        hosts + leaves + spines,
        leaves + spines,
        hosts + leaves * spines
    );
    text += &(hosts..hosts + leaves + spines)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(" ");
    text += "\n";
    for h in 0..hosts {
        text += &format!("{h} {} 100Gbps 200ns 0\n", hosts + h / 4);
    }
    for l in 0..leaves {
        for s in 0..spines {
            text += &format!("{} {} 100Gbps 2000ns 0\n", hosts + l, hosts + leaves + s);
        }
    }
    std::fs::write(&file, text).unwrap();
    let keys = format!(
        "transport.kind=irn topology.kind=ns3 topology.file={}",
        file.display()
    );
    let p = Partitioning::for_run(&config(&keys, "4")).unwrap();
    assert_eq!((p.count, p.by_node), (4, false));
    let by_node = Partitioning::for_run(&config("transport.kind=irn", "4")).unwrap();
    assert!(
        by_node.by_node,
        "a fat-tree's links are all one window long"
    );
    let (a, b) = (run(&keys, "4"), run(&keys, "4"));
    assert_eq!(a.summary.flows_incomplete, 0);
    assert!(a.flows.len() > 50, "{} flows", a.flows.len());
    assert_eq!(flows(&a), flows(&b), "a partitioned run repeats itself");
    assert_eq!(
        flows(&a),
        flows(&run(&keys, "off")),
        "as in one global order"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn without_ties_between_pods_a_partitioned_run_is_the_global_one() {
    // IRN without PFC: measured to take no two events of different pods at one instant on
    // this network, so every flow ends exactly as in one global order.
    let keys = "transport.kind=irn";
    assert_eq!(flows(&run(keys, "4")), flows(&run(keys, "off")));
    assert_eq!(flows(&run(keys, "2")), flows(&run(keys, "off")));
}

#[test]
fn a_partitioned_trace_is_in_time_order_and_changes_nothing() {
    // Flows between pods, traced from both ends: their rows come from several partitions in
    // each window.
    let keys = "transport.kind=roce transport.cc=dcqcn switch.pfc=true switch.model=shared-buffer";
    let cfg = config(keys, "4");
    let mut rows: Vec<TraceRow> = Vec::new();
    let traced = irn_sim::run_traced(
        &cfg,
        &[0, 1, 2, 3, 4, 5],
        |r| rows.push(*r),
        &mut |_| {},
        None,
    );
    assert!(rows.len() > 1000, "{} rows", rows.len());
    assert!(rows.windows(2).all(|w| w[0].time <= w[1].time));
    assert_eq!(flows(&traced), flows(&run(keys, "4")));
}

#[test]
fn auto_partitions_large_fabrics_with_long_enough_links() {
    let parts = |keys: &str| {
        let set: Vec<String> = keys.split_whitespace().map(String::from).collect();
        let sc = scenario::parse("", "p.toml", Path::new("."), &set).unwrap();
        Partitioning::for_run(&sc.runs[0].config).map(|p| p.count)
    };
    let k16 = "topology.kind=fat-tree topology.k=16 workload.duration=1us";
    assert_eq!(parts(k16), Some(8));
    // 2 us links (the default) hold 23 full frames at 100 Gb/s, 500 ns only 5.8: too short a
    // window for "auto", not for a count.
    assert_eq!(parts(&format!("{k16} topology.link_delay=500ns")), None);
    assert_eq!(
        parts(&format!("{k16} topology.link_delay=500ns run.partitions=8")),
        Some(8)
    );
    assert_eq!(parts(&format!("{k16} run.partitions=\"off\"")), None);
    assert_eq!(parts("topology.kind=fat-tree topology.k=8"), None);
}

#[test]
fn partitions_are_refused_where_a_run_cannot_be_split() {
    let err = |keys: &str| {
        let set: Vec<String> = keys.split_whitespace().map(String::from).collect();
        match scenario::parse("", "p.toml", Path::new("."), &set) {
            Ok(_) => String::from("accepted"),
            Err(e) => e.to_string(),
        }
    };
    for (keys, want) in [
        (
            "topology.kind=star topology.hosts=4 run.partitions=4",
            "p.toml: run.partitions = 4: \"auto\" or \"off\" here: this run cannot be \
             partitioned, since its network has no pods: the switches farthest from the hosts \
             are the hosts' own",
        ),
        (
            "topology.kind=fat-tree topology.k=4 topology.link_delay=0ns run.partitions=4",
            "cannot be partitioned, since a link between its pods has no delay",
        ),
        (
            "topology.kind=fat-tree topology.k=4 run.partitions=1",
            "p.toml: run.partitions = 1: \"auto\" (large fabrics are partitioned), \"off\"",
        ),
        (
            "topology.kind=fat-tree topology.k=4 run.partitions=\"of\"",
            "p.toml: run.partitions = \"of\": \"auto\"",
        ),
        (
            "topology.kind=fat-tree topology.k=4 run.partitions=true",
            "p.toml: run.partitions = true: \"auto\"",
        ),
        (
            "topology.kind=fat-tree topology.k=4 run.partitions=1e308",
            "p.toml: run.partitions = 1e308: \"auto\"",
        ),
        (
            "topology.kind=fat-tree topology.k=4 load_balancing.kind=conweave run.partitions=4",
            "cannot be partitioned, since ConWeave's reorder queues tie nodes together",
        ),
        (
            "topology.kind=fat-tree topology.k=4 switch.credits=true run.partitions=4",
            "cannot be partitioned, since a link's two ends share its credits",
        ),
    ] {
        let got = err(keys);
        assert!(got.contains(want), "{keys}: {got}");
    }
    assert_eq!(
        err("topology.kind=fat-tree topology.k=4 run.partitions=\"off\""),
        "accepted"
    );
}
