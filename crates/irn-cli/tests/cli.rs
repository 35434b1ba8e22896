//! The `irn` binary end to end: results folders, determinism of their files, and errors that
//! name the file, key and value and leave nothing behind.

mod common;

use common::*;
use std::path::Path;
use std::process::{Command, Output};

const SMALL: &str = r#"
name = "small"
seed = 3

[topology]
kind = "fat-tree"
k = 4

[switch]
buffer = "60KB"

[workload]
kind = "poisson"
load = 0.6
duration = "300us"

[[compare]]
name = "IRN"
set = { "transport.kind" = "irn" }

[[compare]]
name = "RoCE+PFC"
set = { "transport.kind" = "roce", "switch.pfc" = true }
"#;

/// `summary.json` without its wall-clock `performance` block, the only part that may differ
/// between two runs of the same scenario and seed.
fn summary_without_performance(path: &Path) -> serde_json::Value {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let perf = v
        .as_object_mut()
        .unwrap()
        .remove("performance")
        .expect("a performance block");
    assert!(perf["wall_time_s"].as_f64().unwrap() > 0.0);
    v
}

#[test]
fn run_writes_results_and_reruns_are_identical() {
    let dir = scratch("determinism");
    std::fs::write(dir.join("small.toml"), SMALL).unwrap();
    for out in ["a", "b"] {
        let o = irn(&["run", "small.toml", "--out", out, "-j", "2"], &dir);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let table = String::from_utf8_lossy(&o.stdout);
        assert!(
            table.contains("avg slowdown")
                && table.contains("RoCE+PFC")
                && table.contains("ratio to IRN"),
            "{table}"
        );
    }
    for variant in ["IRN", "RoCE+PFC"] {
        let a = dir.join("a").join(variant);
        let b = dir.join("b").join(variant);
        let flows = std::fs::read(a.join("flows.csv")).unwrap();
        assert_eq!(
            flows,
            std::fs::read(b.join("flows.csv")).unwrap(),
            "{variant}: flows.csv differs"
        );
        assert!(flows.starts_with(b"flow_id,src,dst,size_bytes,start_us,fct_us,sender_fct_us,ideal_fct_us,slowdown,retransmissions,timeouts,measured,min_rate_gbps,min_window_packets,incast,verb,out_of_order,max_reorder_distance,recoveries,nacks\n"));
        assert!(flows.split(|&c| c == b'\n').count() > 50);
        let sa = summary_without_performance(&a.join("summary.json"));
        assert_eq!(
            sa,
            summary_without_performance(&b.join("summary.json")),
            "{variant}: summary.json differs"
        );
        assert_eq!(sa["variant"], variant);
        assert_eq!(sa["resolved_scenario"]["seed"], 3);
        assert!(sa["metrics"]["avg_slowdown"].as_f64().unwrap() >= 1.0);
    }
    let comparison = std::fs::read_to_string(dir.join("a/comparison.csv")).unwrap();
    assert!(
        comparison.starts_with("variant,flows_total,"),
        "{comparison}"
    );
    assert_eq!(comparison.lines().count(), 3);
    // Nothing is left behind but the two results folders and the scenario.
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    entries.sort();
    assert_eq!(entries, ["a", "b", "small.toml"]);
}

#[test]
fn bad_scenarios_name_file_key_and_value_and_write_nothing() {
    let dir = scratch("errors");
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "[topology]\nkind = \"fat-tree\"\nk = 5\n",
            &[],
            "bad.toml: topology.k = 5",
        ),
        ("[switch]\nbufer = \"1KB\"\n", &[], "unknown field `bufer`"),
        (
            "[switch]\nbuffer = \"lots\"\n",
            &[],
            "switch.buffer = \"lots\"",
        ),
        ("", &["--set", "workload.load=1.5"], "workload.load = 1.5"),
        // A value of the wrong type from the command line or a variant has no line to point
        // at: its key is named instead.
        (
            "",
            &["--set", "workload.load=lots"],
            "workload.load: invalid type: string \"lots\", expected a number",
        ),
        (
            "[[compare]]\nname = \"a\"\nset = { \"switch.pfc\" = 3 }\n",
            &[],
            "variant `a`: switch.pfc: invalid type: integer `3`",
        ),
        (
            "",
            &["--set", "transport.kind=quic"],
            "unknown variant `quic`",
        ),
        (
            "",
            &["--set", "transport.kind=tcp", "--set", "transport.cc=dcqcn"],
            "TCP runs its own congestion control",
        ),
        (
            "[topology]\nkind = \"star\"\nk = 4\n",
            &[],
            "topology.k is set: does not apply to topology.kind = \"star\"",
        ),
        (
            "[transport]\nrto_low = \"1ms\"\nrto_high = \"1us\"\n",
            &[],
            "transport.rto_high = \"1us\"",
        ),
        (
            "[workload]\nkind = \"poisson\"\nsizes = { cdf = \"missing.txt\" }\n",
            &[],
            "workload.sizes.cdf = \"missing.txt\"",
        ),
        (
            "[workload]\nkind = \"trace\"\nfile = \"nope.csv\"\n",
            &[],
            "workload.file = \"nope.csv\"",
        ),
        ("name = \n", &[], "bad.toml: TOML parse error at line 1"),
    ];
    for (text, extra, want) in cases {
        std::fs::write(dir.join("bad.toml"), text).unwrap();
        for cmd in ["validate", "run"] {
            let mut args = vec![cmd, "bad.toml"];
            args.extend_from_slice(extra);
            let o = irn(&args, &dir);
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(!o.status.success(), "{cmd} {text:?} should fail");
            assert!(
                err.contains(want),
                "{cmd} {text:?}: expected `{want}` in: {err}"
            );
            assert!(!err.contains("panicked"), "{err}");
        }
    }
    // A missing file, and a missing file named inside a command's options: the reason is
    // given once, not repeated by the error chain.
    for args in [
        &["run", "absent.toml"][..],
        &[
            "gen-flows",
            "--cdf",
            "absent.txt",
            "--load",
            "0.5",
            "--hosts",
            "4",
            "--duration",
            "1ms",
        ][..],
    ] {
        let o = irn(args, &dir);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(": cannot read: "), "{args:?}: {err}");
        assert_eq!(err.matches("os error").count(), 1, "{args:?}: {err}");
    }
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    entries.sort();
    assert_eq!(
        entries,
        ["bad.toml"],
        "no results folder may be left behind"
    );
}

#[test]
fn validate_describes_the_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for file in ["scenarios/default.toml", "scenarios/example.toml"] {
        let o = irn(&["validate", file], &root);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            out.contains("54 hosts, 45 switches") && out.contains("BDP cap 110 packets"),
            "{out}"
        );
    }
}

/// `irn validate` says when a workload's flows start: a Poisson window as the scenario gives
/// it, an incast's single instant, a collective's flows by what they wait for (none of them
/// "over 0 us").
#[test]
fn validate_says_when_the_flows_start() {
    let dir = scratch("validate-starts");
    let star = "[topology]\nkind = \"star\"\nhosts = 8\n";
    let cases = [
        (
            "[workload]\nduration = \"1ms\"\n",
            " flows arriving over 1ms; ",
        ),
        (
            "[workload]\nkind = \"incast\"\nsenders = 4\ntotal = \"400KB\"\n",
            "; 4 flows all starting at 0us; ",
        ),
    ];
    for (workload, want) in cases {
        std::fs::write(dir.join("w.toml"), format!("{star}{workload}")).unwrap();
        let out = ok(&irn(&["validate", "w.toml"], &dir));
        assert!(out.contains(want) && !out.contains(" over 0 us"), "{out}");
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let file = "scenarios/ai/allreduce_leafspine.toml";
    let out = ok(&irn(&["validate", file], &root));
    assert!(
        out.contains(
            "; 33248 flows (160 start at set times, the rest when the flows they wait \
                      for finish); "
        ),
        "{out}"
    );
}

/// A file with one `[[compare]]` entry writes the comparison layout the docs give for
/// `[[compare]]`: the variant's folder and `comparison.csv`, not a single run's files.
#[test]
fn one_compare_entry_writes_a_comparison() {
    let dir = scratch("one-variant");
    let parts: Vec<&str> = SMALL.split("[[compare]]").collect();
    std::fs::write(
        dir.join("one.toml"),
        format!("{}[[compare]]{}", parts[0], parts[2]),
    )
    .unwrap();
    let out = ok(&irn(&["run", "one.toml", "--out", "r"], &dir));
    // What the variant sets, as for several.
    assert!(
        out.contains(
            "\n  RoCE+PFC: roce, PFC on, cc none, load balancing ecmp, ordering none; sets \
             switch.pfc=true, transport.kind=roce\n"
        ),
        "{out}"
    );
    assert!(dir.join("r/RoCE+PFC/summary.json").is_file());
    assert!(dir.join("r/comparison.csv").is_file());
    assert!(!dir.join("r/summary.json").exists());
    // It reads back as a comparison of one.
    ok(&irn(&["plot", "r"], &dir));
    assert!(dir.join("r/report.html").is_file());
}

/// `irn reproduce --list` names every figure of the chosen paper with its title and runs
/// nothing.
#[test]
fn reproduce_lists_the_figures_it_can_run() {
    let dir = scratch("reproduce-list");
    let all = ok(&irn(&["reproduce", "--list"], &dir));
    for id in [
        "fig01",
        "robustness",
        "eunomia-fig18",
        "wan-credits",
        "swift-incast",
    ] {
        assert!(
            all.lines().any(|l| l.starts_with(id)),
            "{id} missing:\n{all}"
        );
    }
    let wan = ok(&irn(&["reproduce", "wan", "--list"], &dir));
    assert!(wan.lines().all(|l| l.starts_with("wan-")), "{wan}");
    assert!(wan.contains("wan-credits"), "{wan}");
    assert!(!dir.join("results").exists());
}

/// The help says what each command and option does: every paper `irn reproduce` reruns,
/// `--out`'s rule for the user's files, a description for every option.
#[test]
fn help_names_every_paper_and_describes_every_option() {
    let dir = scratch("help");
    let top = ok(&irn(&["--help"], &dir));
    let reproduce = top
        .lines()
        .find(|l| l.trim_start().starts_with("reproduce"));
    let reproduce = reproduce.expect("reproduce in the command list");
    for paper in ["IRN", "Eunomia", "ConWeave", "HPCC", "WAN"] {
        assert!(reproduce.contains(paper), "{reproduce}");
    }
    let run = ok(&irn(&["run", "--help"], &dir));
    assert!(
        run.contains("has irn's files replaced and yours in it kept"),
        "{run}"
    );
    let commands = [
        "run",
        "bench",
        "reproduce",
        "check",
        "sweep",
        "report",
        "gen-flows",
        "topology",
        "validate",
        "plot",
    ];
    for command in commands {
        let help = ok(&irn(&[command, "--help"], &dir));
        for line in help.lines().filter(|l| l.trim_start().starts_with('-')) {
            // `      --seed <SEED>      [default: 1]`: the option, then its description.
            let mut words = line.trim().split("  ").filter(|w| !w.trim().is_empty());
            let description = words.nth(1).map(str::trim).unwrap_or_default();
            assert!(
                !description.is_empty() && !description.starts_with('['),
                "irn {command} --help: no description: {line}"
            );
        }
    }
}

/// Every scenario and sweep file under `scenarios/`, at any depth (a sweep file with every
/// point of its grid).
#[test]
fn every_shipped_scenario_validates() {
    fn toml_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                toml_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "toml") {
                out.push(path);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    toml_files(&root.join("scenarios"), &mut files);
    let mut sweeps = 0;
    for path in &files {
        let o = irn(&["validate", path.to_str().unwrap()], &root);
        assert!(
            o.status.success(),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        sweeps += usize::from(String::from_utf8_lossy(&o.stdout).contains(": sweep `"));
    }
    assert!(files.len() >= 60, "{} files", files.len());
    assert!(sweeps >= 10, "{sweeps} sweep files");
}

/// A collective run, twice with the same seed: identical `flows.csv` and `summary.json`; the
/// table shows each job's time and bandwidths, `summary.json` its `collectives`.
#[test]
fn collective_runs_repeat_byte_for_byte_and_report_each_job() {
    let dir = scratch("collective");
    let scenario = r#"
seed = 4
[topology]
kind = "leaf-spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
[workload]
kind = "collective"
background_load = 0.1
background_duration = "50us"
[[workload.job]]
op = "all-reduce"
size = "256KB"
ranks = 4
placement = "random"
iterations = 2
compute_gap = "2us"
[[workload.job]]
op = "all-to-all"
size = "64KB"
ranks = 4
channels = 2
"#;
    std::fs::write(dir.join("c.toml"), scenario).unwrap();
    for out in ["a", "b"] {
        let table = ok(&irn(&["run", "c.toml", "--out", out], &dir));
        for label in [
            "job 0 time (us)",
            "job 0 algbw (GB/s)",
            "job 1 busbw (GB/s)",
        ] {
            let cells = row(&table, label);
            assert!(cells[0].parse::<f64>().unwrap() > 0.0, "{table}");
        }
    }
    let read = |out: &str, file: &str| std::fs::read(dir.join(out).join(file)).unwrap();
    assert_eq!(read("a", "flows.csv"), read("b", "flows.csv"));
    let summary = summary_without_performance(&dir.join("a/summary.json"));
    assert_eq!(
        summary,
        summary_without_performance(&dir.join("b/summary.json"))
    );
    let jobs = summary["metrics"]["collectives"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0]["op"], "all-reduce");
    assert_eq!(jobs[0]["completed_iterations"], 2);
    assert_eq!(jobs[1]["algorithm"], "pairwise");
    // flows.csv's last column names each job flow by job, iteration, step, channel and ranks.
    let flows = String::from_utf8(read("a", "flows.csv")).unwrap();
    assert!(
        flows.lines().next().unwrap().ends_with(",nacks,dag_id"),
        "{flows}"
    );
    assert!(flows.contains(",j0/i1/s0/c0/r0>r1\n"), "{flows}");
    assert!(flows.contains(",j1/i0/s2/c1/r3>r2\n"), "{flows}");
    // irn plot draws each job's bus bandwidth, iteration time and slowest step flow.
    ok(&irn(&["plot", "a"], &dir));
    for chart in [
        "collectives_busbw",
        "collectives_time",
        "collectives_slowest_flow",
    ] {
        let svg = std::fs::read_to_string(dir.join(format!("a/plots/{chart}.svg"))).unwrap();
        assert!(svg.contains("job 1: all-to-all ×4"), "{chart}: {svg}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sweeps_shard_resume_and_merge() {
    let dir = scratch("sweep");
    std::fs::write(dir.join("small.toml"), SMALL).unwrap();
    std::fs::write(
        dir.join("sweep.toml"),
        "name = \"loads\"\nscenario = \"small.toml\"\nset = { \"workload.duration\" = \"200us\" }\n[grid]\n\"workload.load\" = [0.3, 0.6]\n",
    )
    .unwrap();
    let ok = |o: Output| {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    // Two shards into two folders, then merged: four runs (2 loads × 2 variants).
    let first = ok(irn(
        &[
            "sweep",
            "sweep.toml",
            "--out",
            "s0",
            "--shard",
            "0/2",
            "-j",
            "2",
        ],
        &dir,
    ));
    assert!(
        first.contains("4 runs, 2 in this shard, 0 already done, 2 to run"),
        "{first}"
    );
    ok(irn(
        &["sweep", "sweep.toml", "--out", "s1", "--shard", "1/2"],
        &dir,
    ));
    ok(irn(&["report", "s0", "s1", "--out", "merged"], &dir));
    let merged = std::fs::read_to_string(dir.join("merged/sweep.csv")).unwrap();
    assert_eq!(merged.lines().count(), 5, "{merged}");
    assert!(merged.starts_with("point,variant,seed,workload.load,flows_total,"));
    // A folder that is not a sweep (here a run's own folder) is named, not skipped.
    let o = irn(&["report", "s0", "s0/workload.load_0.3/IRN"], &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("s0/workload.load_0.3/IRN: not a sweep results folder"),
        "{err}"
    );
    // A merged sweep folder plots from its tables alone.
    let plotted = ok(irn(&["plot", "merged"], &dir));
    assert!(plotted.contains("merged/report.html"), "{plotted}");
    // An interrupted sweep (here: one run's folder deleted, the temporary of a process that is
    // gone left) resumes, running only what is missing, and reproduces the same files.
    let before = std::fs::read(dir.join("s0/workload.load_0.3/IRN/flows.csv")).unwrap();
    std::fs::remove_dir_all(dir.join("s0/workload.load_0.3/IRN")).unwrap();
    let mut gone = Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let stale = format!("s0/workload.load_0.3/.IRN.tmp-{}", gone.id());
    std::fs::create_dir_all(dir.join(&stale)).unwrap();
    let again = ok(irn(
        &["sweep", "sweep.toml", "--out", "s0", "--shard", "0/2"],
        &dir,
    ));
    assert!(again.contains("1 already done, 1 to run"), "{again}");
    assert_eq!(
        std::fs::read(dir.join("s0/workload.load_0.3/IRN/flows.csv")).unwrap(),
        before
    );
    assert!(!dir.join(&stale).exists());
    // Bad shards and bad grids are clear errors.
    let o = irn(&["sweep", "sweep.toml", "--shard", "2/2"], &dir);
    assert!(String::from_utf8_lossy(&o.stderr).contains("need 0 <= I < N"));
    std::fs::write(
        dir.join("bad.toml"),
        "name = \"x\"\nscenario = \"small.toml\"\n[grid]\n\"workload.load\" = [3.0]\n",
    )
    .unwrap();
    let o = irn(&["sweep", "bad.toml"], &dir);
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("bad.toml: [grid] \"workload.load\" = 3.0: a fraction of line rate"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // An empty grid once ran every variant into the wrong folders, then found none of them.
    std::fs::write(
        dir.join("empty.toml"),
        "name = \"x\"\nscenario = \"small.toml\"\n[grid]\n",
    )
    .unwrap();
    let o = irn(&["sweep", "empty.toml", "--out", "e"], &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("empty.toml: [grid] is empty"), "{err}");
    assert!(!dir.join("e").exists());
}

#[test]
fn reproduce_quick_writes_a_report_with_the_papers_numbers() {
    let dir = scratch("reproduce");
    let o = irn(
        &["reproduce", "fig02", "--quick", "--out", "rq", "-j", "2"],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("fig02") && stdout.contains("direction") && stdout.contains("tally"),
        "{stdout}"
    );
    let html = std::fs::read_to_string(dir.join("rq/report.html")).unwrap();
    assert!(
        html.contains("<svg")
            && html.contains("Fig. 2: PFC makes IRN worse")
            && html.contains("1.5–2× (PFC raises each metric by about 1.5–2× (§4.2.2))")
            && html.contains("class=\"paper-band\""),
        "{html}"
    );
    assert!(html.contains("Quick run"));
    let md = std::fs::read_to_string(dir.join("rq/report.md")).unwrap();
    assert!(
        md.contains("# `irn reproduce --quick`")
            && md.contains("| ratio | metric | paper | irn | direction | magnitude | window |")
            && md.contains("| IRN+PFC / IRN | avg slowdown | 1.5–2× (PFC raises"),
        "{md}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("rq/reproduce.json")).unwrap())
            .unwrap();
    let outcomes = json[0]["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 3);
    assert!(outcomes.iter().all(|o| o["ours"].as_f64().unwrap() > 0.0));
    for variant in ["IRN", "IRN+PFC"] {
        assert!(dir
            .join("rq/fig02/4ms/all")
            .join(variant)
            .join("summary.json")
            .exists());
    }
    // A second run reads every run back instead of simulating it, and reports the same.
    let o = irn(
        &["reproduce", "fig02", "--quick", "--out", "rq", "-j", "2"],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("(2 runs reused)"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let again: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("rq/reproduce.json")).unwrap())
            .unwrap();
    assert_eq!(again[0]["outcomes"], json[0]["outcomes"]);
    // A run folder for another scenario is rerun; `--fresh` reruns everything.
    let summary = dir.join("rq/fig02/4ms/all/IRN/summary.json");
    let mut edited: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    edited["resolved_scenario"]["seed"] = 2.into();
    write_as_irns(&summary, &edited.to_string());
    let o = irn(&["reproduce", "fig02", "--quick", "--out", "rq"], &dir);
    assert!(String::from_utf8_lossy(&o.stdout).contains("(1 run reused)"));
    let o = irn(
        &["reproduce", "fig02", "--quick", "--out", "rq", "--fresh"],
        &dir,
    );
    assert!(o.status.success());
    assert!(!String::from_utf8_lossy(&o.stdout).contains("reused"));
    let o = irn(&["reproduce", "fig99", "--quick"], &dir);
    assert!(String::from_utf8_lossy(&o.stderr).contains(
        "unknown figure `fig99`; choose all, a paper (irn, eunomia, conweave, hpcc, wan) or a figure: fig01"
    ));
}

/// Eunomia's Fig. 9 and Table 2 need no network: no run folders, the same report twice, and
/// their checks against the paper's numbers (the crossover at 60 %, Table 2's entries).
#[test]
fn reproduce_computes_the_models_without_runs_and_alike_twice() {
    let dir = scratch("reproduce-model");
    let args = ["reproduce", "eunomia-fig09", "--out", "m", "-j", "1"];
    let o = irn(&args, &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let read = || std::fs::read_to_string(dir.join("m/reproduce.json")).unwrap();
    let first = read();
    let json: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(json[0]["model"], true);
    let outcomes = json[0]["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 11, "ten points and the crossover");
    assert!(outcomes.iter().all(|o| o["holds"] == true), "{first}");
    let crossover = &outcomes[10];
    assert_eq!(crossover["point"], "");
    assert!(
        (crossover["ours"].as_f64().unwrap() - 0.6).abs() < 0.09,
        "{crossover}"
    );
    assert!(
        !dir.join("m/eunomia-fig09").exists(),
        "a model writes no run folders"
    );
    let md = std::fs::read_to_string(dir.join("m/report.md")).unwrap();
    assert!(
        md.contains("no network") && md.contains("no window (a model)"),
        "{md}"
    );
    assert!(irn(&args, &dir).status.success());
    assert_eq!(read(), first, "deterministic");
    let o = irn(&["reproduce", "eunomia-table2", "--out", "t"], &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(dir.join("t/report.html")).unwrap();
    assert!(
        html.contains("<svg") && html.contains("<td>4-82 B</td><td>4-84 B</td>"),
        "{html}"
    );
}

/// Zero workers is refused, not quietly taken as one, in words that say what is allowed (clap's
/// own message, "invalid value '0' for '--jobs <N>'", did not); so is a number of threads that
/// would take minutes to start (`-j 100000` once did, with one run to do).
#[test]
fn zero_or_too_many_jobs_are_refused_saying_the_bounds() {
    let dir = scratch("jobs");
    for (n, want) in [
        ("0", "-j must be at least 1"),
        ("100000", "-j 100000: at most 1024 runs at once"),
    ] {
        for cmd in [
            &["run", "-j", n][..],
            &["reproduce", "-j", n],
            &["check", "x.toml", "--jobs", n],
            &["sweep", "x.toml", "-j", n],
        ] {
            let o = irn(cmd, &dir);
            assert!(!o.status.success());
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.contains(want), "{cmd:?}: {err}");
        }
    }
}

/// A sweep file given to `irn run`, or a scenario given to `irn sweep`, is named as what it is,
/// with the command that runs it, and nothing is written.
#[test]
fn a_sweep_file_and_a_scenario_given_to_each_others_command_say_which_command() {
    let dir = scratch("wrong-command");
    std::fs::write(dir.join("small.toml"), SMALL).unwrap();
    std::fs::write(
        dir.join("sweep.toml"),
        "name = \"loads\"\nscenario = \"small.toml\"\n[grid]\n\"workload.load\" = [0.3]\n",
    )
    .unwrap();
    for (cmd, says) in [
        (
            ["run", "sweep.toml"],
            "this is a sweep file (a `scenario` and its `[grid]`): run it with `irn sweep`",
        ),
        (
            ["sweep", "small.toml"],
            "this is a scenario file: run it with `irn run`",
        ),
    ] {
        let o = irn(&[cmd[0], cmd[1], "--out", "out"], &dir);
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(cmd[1]) && err.contains(says), "{cmd:?}: {err}");
        assert!(!dir.join("out").exists(), "{cmd:?} wrote its folder");
    }
    // A scenario with a misspelt key gets no such hint.
    std::fs::write(dir.join("typo.toml"), SMALL.replace("seed = 3", "sead = 3")).unwrap();
    let err = String::from_utf8_lossy(&irn(&["run", "typo.toml"], &dir).stderr).into_owned();
    assert!(
        err.contains("did you mean `seed`") && !err.contains("sweep"),
        "{err}"
    );
}

/// `irn bench` times every variant (the fastest of `--repeat` runs), with the same event counts
/// each time, its event and packet-hop rates, and reports peak memory; a repeat count of 0 is refused.
#[test]
fn bench_times_each_variant() {
    let dir = scratch("bench");
    std::fs::write(dir.join("small.toml"), SMALL).unwrap();
    let events = |out: &Output| -> Vec<(String, u64)> {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(text.contains("peak resident memory:"), "{text}");
        text.lines()
            .filter(|l| l.starts_with("IRN") || l.starts_with("RoCE+PFC"))
            .map(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                assert!(cols[1].parse::<f64>().unwrap() >= 0.0, "{l}");
                assert!(cols[3].parse::<f64>().unwrap() > 0.0, "{l}");
                assert!(cols[4].parse::<f64>().unwrap() > 0.0, "{l}");
                (cols[0].to_string(), cols[2].parse().unwrap())
            })
            .collect()
    };
    let once = events(&irn(&["bench", "small.toml"], &dir));
    let out = irn(&["bench", "small.toml", "--repeat", "2"], &dir);
    assert!(String::from_utf8_lossy(&out.stdout).contains("fastest of 2 runs"));
    let twice = events(&out);
    assert_eq!(once.len(), 2);
    assert_eq!(once, twice);

    for count in ["0", "101"] {
        let out = irn(&["bench", "small.toml", "--repeat", count], &dir);
        assert!(!out.status.success(), "--repeat {count}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--repeat") && err.contains("1..=100"), "{err}");
    }

    // With no file, the embedded ns-3 comparison runs from any folder (it once read
    // scenarios/bench/leafspine128.toml relative to where irn was started).
    let out = ok(&irn(&["bench", "--set", "workload.duration=20us"], &dir));
    for variant in ["RoCE+PFC ", "RoCE+PFC+DCQCN "] {
        assert!(out.lines().any(|l| l.starts_with(variant)), "{out}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn topology_writes_the_scenarios_graph_as_an_ns3_file_that_runs_as_the_same_network() {
    let dir = scratch("topology");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let scenario = root.join("scenarios/jellyfish.toml");
    let scenario = scenario.to_str().unwrap();
    ok(&irn(&["topology", scenario, "-o", "jf.txt"], &dir));
    let text = std::fs::read_to_string(dir.join("jf.txt")).unwrap();
    // 80 switches, 128 servers; 128 host links and (80 × 8 − 128) / 2 switch links.
    assert!(text.starts_with("208 80 384\n"), "{text}");
    // The same seed writes the same graph; another seed another.
    let again = ok(&irn(&["topology", scenario], &dir));
    assert_eq!(again, text);
    let other = ok(&irn(&["topology", scenario, "--set", "seed=2"], &dir));
    assert_ne!(other, text);
    // The file is a topology irn reads back.
    std::fs::write(
        dir.join("s.toml"),
        "[topology]\nfile = \"jf.txt\"\n[workload]\nduration = \"20us\"\n",
    )
    .unwrap();
    ok(&irn(&["validate", "s.toml"], &dir));
    // Lossy links keep their loss: the file's `error_rate`, a clean link's 0.
    std::fs::write(
        dir.join("lossy.toml"),
        "[topology]\nkind = \"star\"\nhosts = 3\nloss_rate = 0.001\n\
         [[topology.lossy_link]]\nnodes = [0, 3]\nrate = 0.05\n",
    )
    .unwrap();
    let lossy = ok(&irn(&["topology", "lossy.toml"], &dir));
    assert_eq!(
        lossy,
        "4 1 3\n3\n0 3 40Gbps 2000ns 0.05\n1 3 40Gbps 2000ns 0.001\n2 3 40Gbps 2000ns 0.001\n"
    );
    std::fs::write(
        dir.join("two.toml"),
        "[topology]\nkind = \"star\"\nhosts = 3\n\
         [[compare]]\nname = \"clean\"\n[[compare]]\nname = \"lossy\"\n\
         set = { \"topology.loss_rate\" = 0.01 }\n",
    )
    .unwrap();
    let o = irn(&["topology", "two.toml"], &dir);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("`clean` and `lossy` build different networks"),
        "{err}"
    );
    // A file that is not a topology is not replaced.
    std::fs::write(dir.join("notes.txt"), "mine\n").unwrap();
    let o = irn(&["topology", scenario, "-o", "notes.txt"], &dir);
    assert!(!o.status.success());
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "mine\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn gen_flows_writes_a_conweave_trace_and_refuses_an_absurd_duration() {
    let dir = scratch("gen-flows");
    let args = |duration: &'static str| {
        [
            "gen-flows",
            "--cdf",
            "irn-default",
            "--load",
            "0.5",
            "--hosts",
            "8",
            "--duration",
            duration,
            "--out",
            "flows.txt",
        ]
    };
    let o = irn(&args("1ms"), &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(dir.join("flows.txt")).unwrap();
    let mut lines = text.lines();
    let count: usize = lines.next().unwrap().trim().parse().unwrap();
    assert!(count > 0);
    assert_eq!(lines.clone().count(), count);
    assert!(lines.all(|l| l.split_whitespace().count() == 5), "{text}");
    // 100 s at 8 × 0.5 × 100 Gb/s of 200 kB flows is about 25 million flows: refused before
    // anything is generated, and the earlier file is left as it was.
    let o = irn(&args("100s"), &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("--duration 100s: would start about") && err.contains("at most 10 million"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("flows.txt")).unwrap(),
        text
    );
    // Nor is an empty trace written: `irn run` could not replay it.
    let o = irn(&args("1ns"), &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--duration 1ns: no flow starts within it"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("flows.txt")).unwrap(),
        text
    );
}

#[test]
fn a_run_with_nothing_measured_says_why_instead_of_printing_zeros() {
    let dir = scratch("unmeasured");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let scenario = root.join("scenarios/default.toml");
    // The default scenario's warm-up is 2 ms: a 50 us workload starts every flow inside it.
    let o = irn(
        &[
            "run",
            scenario.to_str().unwrap(),
            "--set",
            "workload.duration=\"50us\"",
            "--out",
            "r",
        ],
        &dir,
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!out.contains("NaN"), "{out}");
    let slowdown = out.lines().find(|l| l.starts_with("avg slowdown")).unwrap();
    assert!(slowdown.trim_end().ends_with('-'), "{out}");
    assert!(
        out.contains("no flow was measured in ") && out.contains("shorten run.warmup"),
        "{out}"
    );
}

#[test]
fn an_out_path_that_is_a_file_is_refused_before_running() {
    let dir = scratch("out-file");
    std::fs::write(dir.join("taken"), "mine").unwrap();
    let o = irn(&["run", "--out", "taken"], &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("taken: exists and is not a folder"), "{err}");
    assert_eq!(std::fs::read_to_string(dir.join("taken")).unwrap(), "mine");
    assert!(String::from_utf8_lossy(&o.stdout).is_empty(), "nothing ran");
}

const INCAST: &str = r#"
name = "incast"
seed = 3

[topology]
kind = "star"
hosts = 4

[workload]
kind = "incast"
senders = 3
total = "300KB"

[[compare]]
name = "IRN"
set = { "transport.kind" = "irn" }

[[compare]]
name = "RoCE+PFC"
set = { "transport.kind" = "roce", "switch.pfc" = true }
"#;

/// The table row starting with `label`, split into its label and cells.
fn row<'a>(out: &'a str, label: &str) -> Vec<&'a str> {
    let line = out
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no `{label}` row in\n{out}"));
    line[label.len()..].split_whitespace().collect()
}

#[test]
fn an_incast_table_shows_the_rct_and_unfinished_flows_with_censored_rows() {
    let dir = scratch("incast-table");
    std::fs::write(dir.join("incast.toml"), INCAST).unwrap();
    let o = irn(&["run", "incast.toml", "--out", "done"], &dir);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Every flow finished: the RCT is a number, no censored row or note.
    let rct = row(&out, "incast RCT (us)");
    assert_eq!(rct.len(), 2, "{out}");
    assert!(
        rct.iter().all(|c| c.parse::<f64>().unwrap() > 24.0),
        "{out}"
    );
    assert_eq!(row(&out, "unfinished flows"), ["0", "0"], "{out}");
    assert!(!out.contains("censored"), "{out}");

    // Cut off 20 µs after the flows start (300 KB at 40 Gb/s take 60 µs): nothing finished.
    let o = irn(
        &[
            "run",
            "incast.toml",
            "--set",
            "run.drain_limit=\"20us\"",
            "--out",
            "cut",
        ],
        &dir,
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(row(&out, "unfinished flows"), ["3", "3"], "{out}");
    assert_eq!(row(&out, "incast RCT (us)"), ["-", "-"], "{out}");
    let censored = row(&out, "censored RCT (us)");
    assert!(
        censored
            .iter()
            .all(|c| c.parse::<f64>().is_ok_and(|v| v > 15.0 && v <= 20.0)),
        "{out}"
    );
    assert_eq!(row(&out, "avg FCT (us)"), ["-", "-"], "{out}");
    assert!(
        row(&out, "censored avg FCT (us)")[0].parse::<f64>().is_ok(),
        "{out}"
    );
    assert!(
        out.contains("unfinished measured flows (3 in IRN, 3 in RoCE+PFC)")
            && out.contains("incast RCT unknown: incast flows unfinished when the run ended (3 in IRN, 3 in RoCE+PFC)"),
        "{out}"
    );
    let summary = summary_without_performance(&dir.join("cut/IRN/summary.json"));
    assert!(summary["metrics"]["rct_us"].is_null(), "{summary:#}");
    assert!(summary["metrics"]["censored_rct_us"].as_f64().is_some());
}

/// Variants with and without an ordering layer in one comparison: the layer's sampled memory
/// is a column of `comparison.csv` (empty for the variant without one; its run's files keep
/// no trace of it) and each of its flows has its peak in `flows.csv`.
#[test]
fn a_comparison_with_and_without_an_ordering_layer_has_one_row_each() {
    let dir = scratch("ordering-memory");
    let scenario = SMALL
        .replace("duration = \"300us\"", "duration = \"200us\"")
        .replace("name = \"RoCE+PFC\"", "name = \"Eunomia\"")
        .replace(
            "set = { \"transport.kind\" = \"roce\", \"switch.pfc\" = true }",
            "set = { \"load_balancing.kind\" = \"spray\", \"ordering.kind\" = \"eunomia\", \
             \"ordering.sample_interval\" = \"50us\" }",
        );
    std::fs::write(dir.join("small.toml"), scenario).unwrap();
    ok(&irn(&["run", "small.toml", "--out", "a", "-j", "2"], &dir));
    let comparison = std::fs::read_to_string(dir.join("a/comparison.csv")).unwrap();
    let rows: Vec<Vec<&str>> = comparison.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 3, "{comparison}");
    let column = |name: &str| rows[0].iter().position(|&c| c == name).expect(name);
    for key in [
        "ordering_memory_samples",
        "ordering_avg_nic_bytes",
        "ordering_peak_nic_bytes",
        "ordering_avg_connection_bytes",
    ] {
        let c = column(key);
        assert_eq!(rows[1][c], "", "{key}: no layer, no value");
        assert!(
            rows[2][c].parse::<f64>().unwrap() > 0.0,
            "{key}: {comparison}"
        );
    }
    // At 50, 100 and 150 us: the last flow arrives before 200 us.
    assert_eq!(rows[2][column("ordering_memory_samples")], "3");
    let header = |variant: &str| {
        let flows = std::fs::read_to_string(dir.join("a").join(variant).join("flows.csv"));
        flows.unwrap().lines().next().unwrap().to_string()
    };
    assert!(header("IRN").ends_with(",nacks"));
    assert!(header("Eunomia").ends_with(
        ",nacks,ordering_peak_bytes,ordering_refused_connections,ordering_refused_pool"
    ));
}

/// `irn run` says what it simulated above the table, and what each column is.
#[test]
fn the_run_table_says_what_was_simulated() {
    let dir = scratch("simulated");
    std::fs::write(dir.join("small.toml"), SMALL).unwrap();
    let out = ok(&irn(&["run", "small.toml", "--out", "s"], &dir));
    let mut lines = out.lines();
    let head = lines.next().unwrap();
    let flows = (head
        .split(", ")
        .find_map(|part| part.strip_suffix(" flows arriving over 300us")))
    .unwrap_or_else(|| panic!("the window as the scenario gives it: {head}"));
    assert_eq!(
        head,
        format!(
            "small: fat-tree (16 hosts, 20 switches), poisson workload at load 0.6, {flows} flows \
             arriving over 300us"
        )
    );
    // The warm-up is part of the window, and said so; a measured window says where it ends.
    let said = |set: &[&str]| {
        let mut args = vec!["run", "small.toml", "--out", "w"];
        args.extend(set.iter().flat_map(|s| ["--set", s]));
        ok(&irn(&args, &dir)).lines().next().unwrap().to_string()
    };
    let head = said(&["run.warmup=\"100us\""]);
    assert!(
        head.ends_with(
            " flows arriving over 300us; those starting in the first 100us are a warm-up, not \
             measured"
        ),
        "{head}"
    );
    let head = said(&["run.warmup=\"100us\"", "run.measure_until=\"250us\""]);
    assert!(
        head.ends_with("; only those starting from 100us until 250us are measured"),
        "{head}"
    );
    assert_eq!(
        lines.next(),
        Some("  IRN: irn, PFC off, cc none, load balancing ecmp, ordering none")
    );
    assert_eq!(
        lines.next(),
        Some(
            "  RoCE+PFC: roce, PFC on, cc none, load balancing ecmp, ordering none; sets \
             switch.pfc=true, transport.kind=roce"
        )
    );
}

#[test]
fn monitor_writes_series_the_same_at_any_j_and_changes_nothing_else() {
    let dir = scratch("monitor");
    std::fs::write(dir.join("small.toml"), SMALL).unwrap();
    let monitor = ["--monitor", "20us", "--set", "monitor.flows=[0, 5]"];
    for (out, jobs, extra) in [
        ("plain", "2", &[][..]),
        ("m1", "1", &monitor[..]),
        ("m2", "2", &monitor[..]),
    ] {
        let mut args = vec!["run", "small.toml", "--out", out, "-j", jobs];
        args.extend_from_slice(extra);
        let o = irn(&args, &dir);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let read = |p: &str| std::fs::read_to_string(dir.join(p)).unwrap();
    for variant in ["IRN", "RoCE+PFC"] {
        for (file, header) in [
            ("ports.csv", "time_us,port,node,local,peer,tier,peer_tier,queue_bytes,buffer_bytes,paused,paused_us,pause_sent,pause_received,bytes_sent,utilization,ecn_marks,drops,link_losses,node_label,peer_label,pause_quanta_sent"),
            ("nics.csv", "time_us,host,flows_sending,flows_receiving,ordering_bytes"),
            ("flows.csv", "time_us,flow,delivered_bytes,rate_gbps,window_packets,done"),
        ] {
            let path = format!("{variant}/series/{file}");
            let (one, two) = (read(&format!("m1/{path}")), read(&format!("m2/{path}")));
            assert_eq!(one, two, "{path} differs between -j 1 and -j 2");
            assert_eq!(one.lines().next(), Some(header), "{path}");
            assert!(one.lines().count() > 2, "{path} has rows");
        }
        // Every other file reads as it does without a monitor (but for the resolved scenario,
        // which now has the [monitor] section).
        for file in ["flows.csv", "fct.txt"] {
            let path = format!("{variant}/{file}");
            assert_eq!(
                read(&format!("plain/{path}")),
                read(&format!("m1/{path}")),
                "{path}"
            );
        }
        let metrics = |run: &str| {
            let mut v =
                summary_without_performance(&dir.join(run).join(variant).join("summary.json"));
            v.as_object_mut().unwrap().remove("resolved_scenario");
            v
        };
        assert_eq!(metrics("plain"), metrics("m1"), "{variant}'s metrics");
        assert!(!dir.join("plain").join(variant).join("series").exists());
    }
    let o = irn(
        &["run", "small.toml", "--out", "bad", "--monitor", "often"],
        &dir,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("monitor.interval = \"often\""),
        "{err}"
    );
    assert!(!dir.join("bad").exists());
}

#[test]
fn trace_flow_writes_each_variants_trace_and_names_the_valid_ids() {
    let dir = scratch("trace-flow");
    std::fs::write(dir.join("small.toml"), SMALL).unwrap();
    let o = irn(
        &[
            "run",
            "small.toml",
            "--out",
            "t",
            "-j",
            "2",
            "--trace-flow",
            "0",
            "2",
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for variant in ["IRN", "RoCE+PFC"] {
        let text = std::fs::read_to_string(dir.join("t").join(variant).join("trace.csv")).unwrap();
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some("time_us,flow,node,port,event,psn,bytes,detail")
        );
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
        assert!(rows
            .iter()
            .all(|r| r.len() == 8 && (r[1] == "0" || r[1] == "2")));
        for flow in ["0", "2"] {
            for event in [
                "start", "send", "enqueue", "dequeue", "arrive", "received", "acked",
            ] {
                assert!(
                    rows.iter().any(|r| r[1] == flow && r[4] == event),
                    "{variant}: flow {flow} has no `{event}` row"
                );
            }
        }
    }
    // The same ids, comma-separated, trace the same events.
    let o = irn(
        &["run", "small.toml", "--out", "u", "--trace-flow", "0,2"],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for variant in ["IRN", "RoCE+PFC"] {
        let read =
            |out: &str| std::fs::read(dir.join(out).join(variant).join("trace.csv")).unwrap();
        assert_eq!(read("t"), read("u"));
    }
    // Tracing leaves every other file as it was.
    let o = irn(&["run", "small.toml", "--out", "plain"], &dir);
    assert!(o.status.success());
    for variant in ["IRN", "RoCE+PFC"] {
        let read =
            |out: &str| std::fs::read(dir.join(out).join(variant).join("flows.csv")).unwrap();
        assert_eq!(read("t"), read("plain"));
        assert!(!dir.join("plain").join(variant).join("trace.csv").exists());
    }
    let o = irn(
        &["run", "small.toml", "--out", "bad", "--trace-flow", "99999"],
        &dir,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "--trace-flow: variant `IRN`: flow 99999 does not exist: the run's flows are 0 to "
        ),
        "{err}"
    );
    assert!(!dir.join("bad").exists());
}

/// `comparison.csv` has `summary.json`'s sections flattened after its numbers, as `sweep.csv`
/// has them: a comparison under link failures can be read from the table alone.
#[test]
fn comparison_csv_flattens_the_sections() {
    let dir = scratch("comparison-sections");
    let text = "name = \"f\"\n[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 2\n\
                hosts_per_leaf = 2\n[workload]\nload = 0.5\nduration = \"100us\"\n\
                [failures]\nfraction = 0.5\ninterval = \"20us\"\n\
                [[compare]]\nname = \"IRN\"\n[[compare]]\nname = \"RoCE+PFC\"\n\
                set = { \"transport.kind\" = \"roce\", \"switch.pfc\" = true }\n";
    std::fs::write(dir.join("f.toml"), text).unwrap();
    ok(&irn(&["run", "f.toml", "--out", "r"], &dir));
    let mut table = csv::Reader::from_path(dir.join("r/comparison.csv")).unwrap();
    let header = table.headers().unwrap().clone();
    let at = |name: &str| header.iter().position(|h| h == name);
    let (failures, ack) = (at("failures.link_failures"), at("control_bytes.ack"));
    assert!(failures.is_some() && ack.is_some(), "{header:?}");
    assert!(
        failures > at("avg_fct_us"),
        "sections come after the numbers"
    );
    for row in table.records() {
        let row = row.unwrap();
        let summary: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("r").join(&row[0]).join("summary.json")).unwrap(),
        )
        .unwrap();
        let link_failures = &summary["metrics"]["failures"]["link_failures"];
        assert_eq!(
            row[failures.unwrap()],
            link_failures.to_string(),
            "{}",
            &row[0]
        );
    }
}
