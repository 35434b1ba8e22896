//! Dependent flows: `[workload] kind = "collective"` and `kind = "dag"`, on networks worked by
//! hand.

use std::path::Path;

use irn_sim::metrics::FlowRow;
use irn_sim::scenario::parse;
use irn_sim::RunResult;

/// A 4-host star at 40 Gb/s with 2 us links, lossless (PFC) RoCE without ACKs and without
/// congestion control: nothing but the flows' own data crosses any link, so each flow's FCT
/// is computed by hand exactly.
const STAR: &str = r#"
[topology]
kind = "star"
hosts = 4
link_rate = "40Gbps"
link_delay = "2us"
[switch]
pfc = true
[transport]
kind = "roce"
acks = "none"
cc = "none"
"#;

fn run(text: &str) -> RunResult {
    let s = parse(text, "c.toml", Path::new("."), &[]).unwrap();
    irn_sim::run(&s.runs[0].config, &mut |_| {})
}

fn error(text: &str, dir: &Path) -> String {
    parse(text, "c.toml", dir, &[]).unwrap_err().to_string()
}

/// A ring all-reduce of N = 4 ranks over S = 400 000 B on the idle star takes 2(N − 1) = 6
/// steps, each a chunk of S/N = 100 000 B from every rank to the next, all at once: every
/// host's uplink and downlink carry one flow, so no flow waits for another, and a step at a
/// rank starts the instant the step before has arrived there. Each step takes one chunk's
/// FCT alone on its path:
///
/// - serialization at 40 Gb/s (200 ps a byte) of its wire bytes: 98 packets (97 of
///   1024 B and one of 672 B), each with 62 B of headers: 100 000 + 98 × 62 = 106 076 B,
///   21 215 200 ps;
/// - the propagation of both links, 2 × 2 us = 4 000 000 ps;
/// - the store-and-forward of one full packet (1086 B, 217 200 ps) at the switch: its
///   output falls a full packet behind the input (the last, shorter packet waits for the
///   full one before it).
///
/// A step is 25 432 400 ps, the collective 6 × that = 152.5944 us.
#[test]
fn a_ring_all_reduce_on_an_idle_star_takes_the_time_computed_by_hand() {
    let step_ps: u64 = 106_076 * 200 + 2 * 2_000_000 + 1086 * 200;
    assert_eq!(step_ps, 25_432_400);
    let r = run(&format!(
        "{STAR}[workload]\nkind = \"collective\"\n[[workload.job]]\nop = \"all-reduce\"\n\
         size = \"400000B\"\nranks = 4\n"
    ));
    assert_eq!(r.flows.len(), 6 * 4);
    let step_us = step_ps as f64 / 1e6;
    for f in &r.flows {
        // Every flow is alone on its path: its FCT is the ideal, which says the same.
        assert!((f.fct_us.unwrap() - step_us).abs() < 1e-9, "{f:?}");
        assert!((f.ideal_fct_us - step_us).abs() < 1e-9, "{f:?}");
    }
    let c = &r.summary.collectives.as_ref().unwrap()[0];
    let want = 6.0 * step_us;
    assert!((c.time_us.unwrap() - want).abs() < 1e-9, "{c:?}");
    assert_eq!(c.total_time_us, c.time_us);
    assert_eq!((c.completed_iterations, c.steps.len()), (1, 6));
    for s in &c.steps {
        assert!((s.time_us.unwrap() - step_us).abs() < 1e-9, "{s:?}");
        assert!((s.slowest_fct_us.unwrap() - step_us).abs() < 1e-9, "{s:?}");
    }
    // algbw: S over the time, in GB/s (bytes per ns).
    let algbw = 400_000.0 / (want * 1e3);
    assert!(
        (c.algbw_gbytes_per_s.unwrap() - algbw).abs() < 1e-12,
        "{c:?}"
    );
}

/// nccl-tests' bus bandwidth: algbw × 2(N−1)/N for an all-reduce, × (N−1)/N for the others;
/// with iterations, the time is their mean, and each iteration waits for the one before
/// (plus the compute gap) at every rank.
#[test]
fn busbw_scales_algbw_by_the_operations_factor() {
    let jobs = "[[workload.job]]\nop = \"all-reduce\"\nsize = \"40000B\"\nranks = 2\n\
                iterations = 3\ncompute_gap = \"5us\"\n\
                [[workload.job]]\nop = \"all-gather\"\nsize = \"40000B\"\nranks = 2\n";
    let r = run(&format!("{STAR}[workload]\nkind = \"collective\"\n{jobs}"));
    let c = r.summary.collectives.as_ref().unwrap();
    let (reduce, gather) = (&c[0], &c[1]);
    let factor = |c: &irn_sim::metrics::CollectiveSummary| {
        c.busbw_gbytes_per_s.unwrap() / c.algbw_gbytes_per_s.unwrap()
    };
    // N = 2: all-reduce 2 × 1/2 = 1, all-gather 1/2.
    assert!((factor(reduce) - 1.0).abs() < 1e-12, "{reduce:?}");
    assert!((factor(gather) - 0.5).abs() < 1e-12, "{gather:?}");
    let n = 4.0;
    assert_eq!(
        irn_sim::workload::collective::Op::AllReduce.bus_factor(4),
        2.0 * (n - 1.0) / n
    );
    // The jobs ran on hosts 0–1 and 2–3 apart: three iterations of the same time.
    let times: Vec<f64> = reduce
        .iteration_times_us
        .iter()
        .map(|t| t.unwrap())
        .collect();
    assert!(
        times.iter().all(|t| (t - times[0]).abs() < 1e-9),
        "{times:?}"
    );
    let total = reduce.total_time_us.unwrap();
    assert!(
        (total - (3.0 * times[0] + 2.0 * 5.0)).abs() < 1e-9,
        "{reduce:?}"
    );
}

/// The flow of `flows.csv` from `src` to `dst`.
fn flow(rows: &[FlowRow], src: u32, dst: u32) -> &FlowRow {
    rows.iter().find(|f| (f.src, f.dst) == (src, dst)).unwrap()
}

/// A diamond: `a` (0 → 1); `b` (1 → 2) after it; `c` (1 → 3) 500 ns after it; `d` (2 → 3)
/// 200 ns after the later of `b` and `c`. Each starts exactly when its last parent's receiver
/// has the whole message, plus the delay.
#[test]
fn a_diamond_starts_each_flow_when_its_last_parent_finishes() {
    let csv = "id,src,dst,size_bytes,start_ns,after,delay_ns\\n\
               a,0,1,20000,1000,,\\n\
               b,1,2,5000,,a,\\n\
               c,1,3,30000,,a,500\\n\
               d,2,3,1000,,b c,200\\n";
    let r = run(&format!(
        "{STAR}[workload]\nkind = \"dag\"\ncsv = \"{csv}\"\n"
    ));
    let end = |f: &FlowRow| f.start_us.unwrap() + f.fct_us.unwrap();
    let (a, b, c, d) = (
        flow(&r.flows, 0, 1),
        flow(&r.flows, 1, 2),
        flow(&r.flows, 1, 3),
        flow(&r.flows, 2, 3),
    );
    assert_eq!(a.start_us, Some(1.0));
    assert!((b.start_us.unwrap() - end(a)).abs() < 1e-9, "{b:?}");
    assert!((c.start_us.unwrap() - (end(a) + 0.5)).abs() < 1e-9, "{c:?}");
    // c carries more and starts later: it is d's last parent.
    assert!(end(c) > end(b));
    assert!((d.start_us.unwrap() - (end(c) + 0.2)).abs() < 1e-9, "{d:?}");
    assert_eq!(r.summary.flows_incomplete, 0);
    // flows.csv names each flow by its id in the file.
    let ids: Vec<Option<&str>> = [a, b, c, d]
        .iter()
        .map(|f| f.dag_id.as_ref().unwrap().as_deref())
        .collect();
    assert_eq!(ids, [Some("a"), Some("b"), Some("c"), Some("d")]);
}

/// The diamond as a JSON file (found by its extension, or by `format` whatever its name) runs
/// as the CSV does, flow for flow.
/// A flow whose parent is cut off by the drain limit never starts: `flows.csv` leaves its
/// start empty rather than saying when it could have started.
#[test]
fn a_flow_whose_parent_never_finishes_has_no_start() {
    let csv = "id,src,dst,size_bytes,start_ns,after,delay_ns\\n\
               a,0,1,10000000,1000,,\\n\
               b,1,2,5000,,a,\\n";
    let r = run(&format!(
        "{STAR}[workload]\nkind = \"dag\"\ncsv = \"{csv}\"\n[run]\ndrain_limit = \"20us\"\n"
    ));
    let (a, b) = (flow(&r.flows, 0, 1), flow(&r.flows, 1, 2));
    assert_eq!((a.start_us, a.fct_us), (Some(1.0), None));
    assert_eq!((b.start_us, b.fct_us), (None, None), "{b:?}");
    assert_eq!(r.summary.flows_incomplete, 2);
    // Censored: a cut off at the end of the run, b (which never ran) at its ideal FCT.
    let s_a = ((r.summary.sim_time_us - 1.0) / a.ideal_fct_us).max(1.0);
    let censored = r.summary.censored_avg_slowdown.unwrap();
    assert!(
        (censored - (s_a + 1.0) / 2.0).abs() < 1e-9,
        "{censored} {s_a}"
    );
}

#[test]
fn a_json_dag_runs_as_its_csv() {
    let dir = std::env::temp_dir().join(format!("irn-json-dag-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = "id,src,dst,size_bytes,start_ns,after,delay_ns\\n\
               a,0,1,20000,1000,,\\n\
               b,1,2,5000,,a,\\n\
               c,1,3,30000,,a,500\\n\
               d,2,3,1000,,b c,200\\n";
    let json = r#"[
        {"id": "a", "src": 0, "dst": 1, "size_bytes": 20000, "start_ns": 1000},
        {"id": "b", "src": 1, "dst": 2, "size_bytes": 5000, "after": ["a"]},
        {"id": "c", "src": 1, "dst": 3, "size_bytes": 30000, "after": ["a"], "delay_ns": 500},
        {"id": "d", "src": 2, "dst": 3, "size_bytes": 1000, "after": ["b", "c"], "delay_ns": 200}
    ]"#;
    std::fs::write(dir.join("dag.json"), json).unwrap();
    std::fs::write(dir.join("dag.txt"), json).unwrap();
    let from_csv = run(&format!(
        "{STAR}[workload]\nkind = \"dag\"\ncsv = \"{csv}\"\n"
    ));
    let from_file = |keys: &str| {
        let s = parse(
            &format!("{STAR}[workload]\nkind = \"dag\"\n{keys}"),
            "c.toml",
            &dir,
            &[],
        )
        .unwrap();
        irn_sim::run(&s.runs[0].config, &mut |_| {})
    };
    let rows = |r: &RunResult| format!("{:?}", r.flows);
    assert_eq!(rows(&from_file("file = \"dag.json\"\n")), rows(&from_csv));
    assert_eq!(
        rows(&from_file("file = \"dag.txt\"\nformat = \"json\"\n")),
        rows(&from_csv)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bad graphs and placements are refused before anything runs, naming the scenario, the key,
/// and for a DAG file its line and the value at fault.
#[test]
fn bad_dags_and_placements_name_the_line_or_the_key() {
    let dir = std::env::temp_dir().join(format!("irn-bad-dag-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let header = "id,src,dst,size_bytes,start_ns,after,delay_ns\n";
    let files = [
        (
            "cycle.csv",
            format!("{header}a,0,1,10,0,,\nb,1,2,10,,c,\nc,2,3,10,,b,\n"),
            "cycle.csv:3: the flows wait for each other in a cycle of 2: b waits for c waits for b",
        ),
        (
            "parent.csv",
            format!("{header}a,0,1,10,0,,\nb,1,2,10,,x,\n"),
            "parent.csv:3: flow `b` waits for `x`, which no line of the file defines",
        ),
        (
            "host.csv",
            format!("{header}a,0,1,10,0,,\nb,1,4,10,,a,\n"),
            "host.csv:3: dst 4 is not a host: there are 4 hosts, numbered 0 to 3",
        ),
        (
            "twice.csv",
            format!("{header}a,0,1,10,0,,\na,1,2,10,0,,\n"),
            "twice.csv:3: id `a` is already the flow of line 2",
        ),
        (
            "huge.csv",
            format!("{header}a,0,1,4294967296,0,,\n"),
            "huge.csv:2: size_bytes 4294967296 is above the flow-size limit",
        ),
    ];
    let flow = |id: &str, rest: &str| {
        format!(r#"{{"id": "{id}", "src": 0, "dst": 1, "size_bytes": 10{rest}}}"#)
    };
    let json = [
        (
            "cycle.json",
            format!(
                "[{}, {}, {}]",
                flow("a", r#", "start_ns": 0"#),
                flow("b", r#", "after": ["c"]"#),
                flow("c", r#", "after": ["b"]"#)
            ),
            "cycle.json: flow at index 1: the flows wait for each other in a cycle of 2: b waits for \
             c waits for b",
        ),
        (
            "parent.json",
            format!("[{}]", flow("b", r#", "after": ["x"]"#)),
            "parent.json: flow at index 0: flow `b` waits for `x`, which no flow of the file \
             defines",
        ),
        (
            "host.json",
            r#"[{"id": "a", "src": 9, "dst": 1, "size_bytes": 10, "start_ns": 0}]"#.to_string(),
            "host.json: flow at index 0: src 9 is not a host: there are 4 hosts, numbered 0 to 3",
        ),
        (
            "twice.json",
            format!(
                "[{}, {}]",
                flow("a", r#", "start_ns": 0"#),
                flow("a", r#", "start_ns": 5"#)
            ),
            "twice.json: flow at index 1: id `a` is already the flow of index 0",
        ),
    ];
    for (name, text, want) in files.into_iter().chain(json) {
        std::fs::write(dir.join(name), text).unwrap();
        let err = error(
            &format!("{STAR}[workload]\nkind = \"dag\"\nfile = \"{name}\"\n"),
            &dir,
        );
        assert!(
            err.starts_with(&format!("c.toml: workload.file = \"{name}\": ")) && err.contains(want),
            "{err}"
        );
    }
    let keys = [
        (
            "kind = \"dag\"\ncsv = \"x\"\nformat = \"json\"\n",
            "c.toml: workload.format = \"json\": \"csv\" with an inline workload.csv",
        ),
        (
            "kind = \"trace\"\nfile = \"t.csv\"\nformat = \"csv\"\n",
            "workload.format",
        ),
    ];
    for (keys, want) in keys {
        let err = error(&format!("{STAR}[workload]\n{keys}"), &dir);
        assert!(err.contains(want), "{keys}: {err}");
    }
    let job = |keys: &str| {
        format!(
            "{STAR}[workload]\nkind = \"collective\"\n[[workload.job]]\nop = \"all-reduce\"\n\
             size = \"1MB\"\n{keys}"
        )
    };
    let cases = [
        (
            "ranks = 5\n",
            "workload.job[0].ranks = 5: 2 to 4 (the hosts no earlier job took, of 4)",
        ),
        (
            "placement = [0, 7]\n",
            "workload.job[0].placement = [0, 7]: host indices below 4; 7 is not a host",
        ),
        (
            "placement = [1, 1]\n",
            "workload.job[0].placement = [1, 1]: distinct hosts; host 1 is listed twice",
        ),
        // One host is one rank, never zero: the list's length is the rank count, so a rank
        // count it does not match is named only when written.
        (
            "placement = [0]\n",
            "workload.job[0].placement = [0]: at least 2 hosts (one per rank)",
        ),
        (
            "placement = []\n",
            "workload.job[0].placement = []: at least 2 hosts (one per rank)",
        ),
        (
            "ranks = 3\nplacement = [0, 1]\n",
            "placement = [0, 1]: exactly one host per rank: ranks = 3 needs 3 hosts, the list has 2",
        ),
        // An index no host has, even one past a u32, is named.
        (
            "placement = [0, 99999999999]\n",
            "placement = [0, 99999999999]: host indices below 4; 99999999999 is not a host",
        ),
        (
            "ranks = 3\nalgorithm = \"pairwise\"\n",
            "algorithm \"pairwise\" runs all-to-all only, not all-reduce",
        ),
        ("", "workload.job[0].ranks = (missing)"),
    ];
    for (keys, want) in cases {
        let err = error(&job(keys), &dir);
        assert!(err.contains(want), "{keys}: {err}");
    }
    let two = format!(
        "{}ranks = 3\n[[workload.job]]\nop = \"all-gather\"\nsize = \"1MB\"\nranks = 2\n",
        job("")
    );
    let err = error(&two, &dir);
    assert!(
        err.contains(
            "workload.job[1].ranks = 2: at least 2, but the earlier jobs took 3 of the 4 hosts"
        ),
        "{err}"
    );
    // A flow past the message limit names its job's size, the key to change.
    let big = format!(
        "{}ranks = 2\n[[workload.job]]\nop = \"all-gather\"\nsize = \"500GB\"\nranks = 2\n",
        job("")
    );
    let err = error(&big, &dir);
    assert!(
        err.contains("workload.job[1].size = \"500GB\": flow ")
            && err.contains("would carry 250000000000 bytes: at most 2GiB"),
        "{err}"
    );
    // Jobs run on hosts of their own: a list that names an earlier job's host is refused (two
    // jobs on one NIC once ran without a word).
    let shared = format!(
        "{}ranks = 2\n[[workload.job]]\nop = \"all-gather\"\nsize = \"1MB\"\n\
         placement = [1, 2]\n",
        job("")
    );
    let err = error(&shared, &dir);
    assert!(
        err.contains(
            "workload.job[1].placement = [1, 2]: hosts no earlier job has (each job runs on hosts \
             of its own); host 1 is an earlier job's"
        ),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same scenario and seed give the same flows, background and random placement included;
/// another seed places the ranks elsewhere.
#[test]
fn collectives_are_deterministic() {
    let text = |seed: u64| {
        format!(
            "seed = {seed}\n[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 2\n\
             hosts_per_leaf = 4\n[workload]\nkind = \"collective\"\nbackground_load = 0.2\n\
             background_duration = \"50us\"\n[[workload.job]]\nop = \"all-to-all\"\n\
             size = \"64KB\"\nranks = 4\nplacement = \"random\"\nchannels = 2\n\
             [[workload.job]]\nop = \"all-reduce\"\nalgorithm = \"double-binary-tree\"\n\
             size = \"64KB\"\nranks = 4\niterations = 2\n"
        )
    };
    let rows = |r: &RunResult| format!("{:?}", r.flows);
    let a = run(&text(1));
    // flows.csv names a job's flows by job, iteration, (tree,) step, channel and ranks, and
    // leaves the background's unnamed.
    let ids: Vec<Option<&str>> = (a.flows.iter())
        .map(|f| f.dag_id.as_ref().unwrap().as_deref())
        .collect();
    assert!(ids.contains(&Some("j0/i0/s0/c1/r0>r1")), "{ids:?}");
    assert!(ids.contains(&Some("j1/i1/t1/s0/c0/r0>r2")), "{ids:?}");
    assert!(ids.contains(&None), "{ids:?}");
    assert_eq!(rows(&a), rows(&run(&text(1))));
    assert_ne!(rows(&a), rows(&run(&text(2))));
    assert_eq!(a.summary.flows_incomplete, 0);
    // The background's statistics are its own flows' alone, as around an incast.
    let background: Vec<f64> = (a.flows.iter())
        .filter(|f| f.measured && f.dag_id == Some(None))
        .filter_map(|f| f.fct_us)
        .collect();
    assert!(!background.is_empty());
    let mean = background.iter().sum::<f64>() / background.len() as f64;
    let got = a.summary.background_avg_fct_us.unwrap();
    assert!((got - mean).abs() <= 1e-9 * mean, "{got} against {mean}");
    assert!(a.summary.background_p99_fct_us.is_some());
    let c = a.summary.collectives.as_ref().unwrap();
    assert_eq!(
        (c[0].algorithm.as_str(), c[1].completed_iterations),
        ("pairwise", 2)
    );
}

/// Random link failures go on for as long as a DAG runs, not only until its last root's start
/// plus the drain limit (all that is known before the run): a chain of 40 flows of 1 MB, each
/// released by the one before, outlives that 500 us horizon several times over, and a new set
/// of links fails every interval until its last flow finishes. Scheduled failures after that
/// horizon apply too.
#[test]
fn failures_keep_coming_while_a_dag_runs() {
    let mut csv = String::from("id,src,dst,size_bytes,start_ns,after,delay_ns\\n");
    for i in 0..40 {
        let (src, dst) = if i % 2 == 0 { (0, 2) } else { (2, 0) };
        if i == 0 {
            csv.push_str(&format!("f0,{src},{dst},1000000,0,,\\n"));
        } else {
            csv.push_str(&format!("f{i},{src},{dst},1000000,,f{},\\n", i - 1));
        }
    }
    let text = |failures: &str| {
        format!(
            "[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\n\
             [switch]\npfc = false\n[transport]\nkind = \"irn\"\n\
             [workload]\nkind = \"dag\"\ncsv = \"{csv}\"\n[run]\ndrain_limit = \"500us\"\n\
             [failures]\n{failures}"
        )
    };
    let r = run(&text("fraction = 0.25\ninterval = \"100us\"\n"));
    assert_eq!(r.summary.flows_incomplete, 0);
    let end_us = r
        .flows
        .iter()
        .map(|f| f.start_us.unwrap() + f.fct_us.unwrap())
        .fold(0.0, f64::max);
    assert!(end_us > 2000.0, "the chain runs {end_us} us");
    // One of the 4 leaf-spine links fails every 100 us from 0 until the run ends.
    let failed = r.summary.failures.as_ref().unwrap().link_failures;
    assert!(
        failed as f64 >= (end_us / 100.0).floor() - 1.0,
        "{failed} failures in {end_us} us"
    );
    // The same run twice: the same failures, the same flows.
    let again = run(&text("fraction = 0.25\ninterval = \"100us\"\n"));
    assert_eq!(format!("{:?}", again.flows), format!("{:?}", r.flows));
    // A failure scheduled at 1.5 ms, long after the 500 us known before the run, happens.
    let r = run(&text(
        "[[failures.link]]\nnodes = [4, 6]\nat = \"1500us\"\nfor = \"100us\"\n",
    ));
    assert_eq!(r.summary.failures.as_ref().unwrap().link_failures, 1);
}
