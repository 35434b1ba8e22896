//! Sweeps people can analyse (issue 21): typed grid columns in grid order, several seeds per
//! point with a summary of means and confidence intervals, resume and shards with seeds, and
//! `irn plot` of a sweep folder. Each test runs the `irn` binary on a tiny scenario.

mod common;

use common::*;
use std::path::Path;

/// 2 points (loads, in an order text order would swap) × 2 seeds × 2 variants; a duration
/// and a size key with one value each, to show their units.
const SWEEP: &str = r#"
name = "loads"
scenario = "tiny.toml"
seeds = [1, 2]
[grid]
"workload.load" = [0.6, 0.3]
"workload.duration" = ["80us"]
"switch.buffer" = ["120KB"]
"#;

const POINTS: [&str; 2] = [
    "switch.buffer_120KB_workload.duration_80us_workload.load_0.6",
    "switch.buffer_120KB_workload.duration_80us_workload.load_0.3",
];

/// A CSV file as a header and rows of cells.
fn table(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text
        .lines()
        .map(|l| l.split(',').map(String::from).collect());
    (lines.next().unwrap(), lines.collect())
}

fn cell(header: &[String], row: &[String], column: &str) -> String {
    let i = header.iter().position(|h| h == column).unwrap_or_else(|| {
        panic!("no column {column} in {header:?}");
    });
    row[i].clone()
}

fn setup(name: &str) -> Scratch {
    let dir = scratch(name);
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();
    std::fs::write(dir.join("sweep.toml"), SWEEP).unwrap();
    dir
}

#[test]
fn seeded_sweep_has_typed_columns_in_grid_order_and_a_summary_by_hand() {
    let dir = setup("sweep-seeds");
    let first = ok(&irn(
        &["sweep", "sweep.toml", "--out", "s", "-j", "2"],
        &dir,
    ));
    assert!(
        first.contains("8 runs, 8 in this shard, 0 already done, 8 to run"),
        "{first}"
    );
    let (header, rows) = table(&dir.join("s/sweep.csv"));
    assert_eq!(
        header[..7],
        [
            "point",
            "variant",
            "seed",
            "switch.buffer_bytes",
            "workload.duration_us",
            "workload.load",
            "flows_total"
        ]
    );
    // Grid order: points as the grid lists them, then seeds, then the scenario's variants.
    let order: Vec<[String; 3]> = rows
        .iter()
        .map(|r| [r[0].clone(), r[2].clone(), r[1].clone()])
        .collect();
    let mut want = Vec::new();
    for point in POINTS {
        for seed in ["1", "2"] {
            for variant in ["IRN", "RoCE+PFC"] {
                want.push([point.to_string(), seed.to_string(), variant.to_string()]);
            }
        }
    }
    assert_eq!(order, want);
    // Typed cells: bytes, microseconds, the number as written.
    assert_eq!(rows[0][3..6], ["120000", "80", "0.6"]);
    assert_eq!(rows[7][5], "0.3");
    // Every run has its folder, and its summary.json the seed of its row.
    for r in &rows {
        let run = dir.join(format!("s/{}/seed_{}/{}/summary.json", r[0], r[2], r[1]));
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&run).unwrap()).unwrap();
        assert_eq!(summary["seed"].to_string(), r[2], "{}", run.display());
    }

    // The summary: one row per point and variant, in grid order; mean and 95 % CI by hand for
    // avg_fct_us of the first point's IRN runs: two values a, b give mean (a + b) / 2 and
    // half-width t(0.975, 1) · s / √2 with s = |a − b| / √2, i.e. 12.706205 · |a − b| / 2.
    let (sh, srows) = table(&dir.join("s/sweep_summary.csv"));
    assert_eq!(
        sh[..7],
        [
            "point",
            "variant",
            "switch.buffer_bytes",
            "workload.duration_us",
            "workload.load",
            "runs",
            "flows_total_mean"
        ]
    );
    assert_eq!(srows.len(), 4);
    assert_eq!(
        (srows[0][0].as_str(), srows[0][1].as_str()),
        (POINTS[0], "IRN")
    );
    assert_eq!(
        (srows[1][0].as_str(), srows[1][1].as_str()),
        (POINTS[0], "RoCE+PFC")
    );
    assert_eq!(srows[3][0], POINTS[1]);
    assert_eq!(cell(&sh, &srows[0], "runs"), "2");
    let value =
        |row: &[String], column: &str| -> f64 { cell(&header, row, column).parse().unwrap() };
    let (a, b) = (value(&rows[0], "avg_fct_us"), value(&rows[2], "avg_fct_us"));
    assert!(a != b, "the two seeds gave the same runs: {a}");
    let mean: f64 = cell(&sh, &srows[0], "avg_fct_us_mean").parse().unwrap();
    let ci: f64 = cell(&sh, &srows[0], "avg_fct_us_ci95").parse().unwrap();
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * y.abs().max(1.0);
    assert!(close(mean, (a + b) / 2.0), "{mean} vs {a}, {b}");
    assert!(
        close(ci, 12.706205 * (a - b).abs() / 2.0),
        "{ci} vs {a}, {b}"
    );
    // The size buckets are columns too, with their slowdown percentiles.
    assert!(header.iter().any(|h| h == "fct_by_size.0.p95_slowdown"));
    assert!(sh.iter().any(|h| h == "fct_by_size.3.p99_slowdown_ci95"));

    // Same sweep, one worker: identical tables.
    ok(&irn(
        &["sweep", "sweep.toml", "--out", "one", "-j", "1"],
        &dir,
    ));
    for file in ["sweep.csv", "sweep_summary.csv"] {
        assert_eq!(
            std::fs::read(dir.join("s").join(file)).unwrap(),
            std::fs::read(dir.join("one").join(file)).unwrap(),
            "{file} depends on -j"
        );
    }
}

#[test]
fn seeded_sweeps_resume_shard_and_merge() {
    let dir = setup("sweep-seeds-shards");
    let csv = |d: &str, f: &str| std::fs::read(dir.join(d).join(f)).unwrap();
    ok(&irn(&["sweep", "sweep.toml", "--out", "whole"], &dir));
    // Resume: one run's folder lost, only it runs again, and the tables come out the same.
    let lost = format!("whole/{}/seed_2/RoCE+PFC", POINTS[1]);
    let before = csv(&lost, "flows.csv");
    std::fs::remove_dir_all(dir.join(&lost)).unwrap();
    let again = ok(&irn(&["sweep", "sweep.toml", "--out", "whole"], &dir));
    assert!(again.contains("7 already done, 1 to run"), "{again}");
    assert_eq!(csv(&lost, "flows.csv"), before);
    // A run made by another irn (another simulator source) runs again, as does its table row.
    let summary = dir.join(&lost).join("summary.json");
    let text = std::fs::read_to_string(&summary).unwrap();
    let model = format!("\"irn_model\": \"{}\"", irn_sim::MODEL_ID);
    assert!(text.contains(&model), "{text}");
    write_as_irns(&summary, &text.replace(&model, "\"irn_model\": \"0\""));
    let again = ok(&irn(&["sweep", "sweep.toml", "--out", "whole"], &dir));
    assert!(
        again.contains("7 already done, 1 to run (1 of them done before for a scenario, a data file or by an irn since changed)"),
        "{again}"
    );
    assert_eq!(csv(&lost, "flows.csv"), before);
    // `--seeds 2` is the file's seeds = [1, 2]; `--seeds 3` adds the third seed's runs.
    let same = ok(&irn(
        &["sweep", "sweep.toml", "--out", "whole", "--seeds", "2"],
        &dir,
    ));
    assert!(same.contains("8 already done, 0 to run"), "{same}");
    let whole_csv = csv("whole", "sweep.csv");
    let whole_summary = csv("whole", "sweep_summary.csv");
    let more = ok(&irn(
        &["sweep", "sweep.toml", "--out", "more", "--seeds", "3"],
        &dir,
    ));
    assert!(more.contains("12 runs"), "{more}");
    let (sh, srows) = table(&dir.join("more/sweep_summary.csv"));
    assert_eq!(cell(&sh, &srows[0], "runs"), "3");

    // Two shards, merged: the whole sweep's tables.
    for (shard, out) in [("0/2", "a"), ("1/2", "b")] {
        ok(&irn(
            &["sweep", "sweep.toml", "--out", out, "--shard", shard],
            &dir,
        ));
    }
    let merged = ok(&irn(&["report", "b", "a", "--out", "m"], &dir));
    assert!(merged.contains("m/sweep.csv: 8 runs"), "{merged}");
    assert_eq!(csv("m", "sweep.csv"), whole_csv);
    assert_eq!(csv("m", "sweep_summary.csv"), whole_summary);
    // Shards made by different irns are not merged.
    let shard_run = dir
        .join("a")
        .join(POINTS[0])
        .join("seed_1/IRN/summary.json");
    let text = std::fs::read_to_string(&shard_run).unwrap();
    let model = format!("\"irn_model\": \"{}\"", irn_sim::MODEL_ID);
    write_as_irns(&shard_run, &text.replace(&model, "\"irn_model\": \"0\""));
    let err = refused(&irn(&["report", "a", "b", "--out", "mixed"], &dir));
    assert!(err.contains("were made by different irn builds"), "{err}");
    std::fs::write(&shard_run, text).unwrap();
    // One shard alone: its runs, and a warning that names what is missing.
    let half = irn(&["report", "a", "--out", "half"], &dir);
    assert!(ok(&half).contains("half/sweep.csv: 4 of 8 runs"));
    let warning = String::from_utf8_lossy(&half.stderr);
    assert!(
        warning.contains("4 of the sweep's 8 runs are in none of these folders and left out"),
        "{warning}"
    );
    // Shards of other seeds are another sweep.
    let err = refused(&irn(&["report", "a", "more"], &dir));
    assert!(
        err.contains("a and more hold different sweeps") && err.contains("seeds"),
        "{err}"
    );
}

#[test]
fn plot_draws_a_sweep_folder_and_names_what_it_takes() {
    let dir = setup("sweep-plot");
    ok(&irn(
        &["sweep", "sweep.toml", "--out", "s", "--shard", "0/2"],
        &dir,
    ));
    ok(&irn(
        &["sweep", "sweep.toml", "--out", "t", "--shard", "1/2"],
        &dir,
    ));
    ok(&irn(&["report", "s", "t", "--out", "m"], &dir));
    // The merged folder holds no runs: the tables are enough. The x axis defaults to the
    // grid key that varies, the metric to the average slowdown.
    let out = ok(&irn(&["plot", "m"], &dir));
    assert!(out.contains("m/report.html"), "{out}");
    let line =
        std::fs::read_to_string(dir.join("m/plots/avg_slowdown_by_workload.load.svg")).unwrap();
    assert!(
        line.contains("<svg") && line.contains("workload.load"),
        "{line}"
    );
    for point in POINTS {
        let bars = dir.join(format!("m/plots/slowdown_by_size_{point}.svg"));
        let svg = std::fs::read_to_string(&bars).unwrap();
        assert!(
            svg.contains("p95 (tick)") && svg.contains("≤ 10 KB"),
            "{}",
            bars.display()
        );
    }
    let html = std::fs::read_to_string(dir.join("m/report.html")).unwrap();
    assert!(
        html.contains("avg_slowdown against workload.load"),
        "{html}"
    );
    assert!(html.contains("Student"), "{html}");
    // Chosen metric and x (with or without the unit suffix).
    let out = ok(&irn(
        &[
            "plot",
            "m",
            "--metric",
            "p99_fct_us",
            "--x",
            "workload.duration",
        ],
        &dir,
    ));
    assert!(
        out.contains("p99_fct_us_by_workload.duration_us.svg"),
        "{out}"
    );
    // Unknown metric or x: what is allowed, and nothing written.
    let before = std::fs::read(dir.join("m/report.html")).unwrap();
    let err = refused(&irn(&["plot", "m", "--metric", "avg_fct"], &dir));
    assert!(
        err.contains("--metric avg_fct: not a metric of m/sweep_summary.csv; one of")
            && err.contains("avg_fct_us"),
        "{err}"
    );
    let err = refused(&irn(&["plot", "m", "--x", "load"], &dir));
    assert!(
        err.contains(
            "--x load: not a numeric grid key of m/sweep_summary.csv; the x axis is one of \
             switch.buffer_bytes, workload.duration_us, workload.load"
        ),
        "{err}"
    );
    assert_eq!(std::fs::read(dir.join("m/report.html")).unwrap(), before);
    // --metric and --x are for sweeps only.
    ok(&irn(&["run", "tiny.toml", "--out", "r"], &dir));
    let err = refused(&irn(&["plot", "r", "--x", "workload.load"], &dir));
    assert!(err.contains("r is not a sweep folder"), "{err}");
}

#[test]
fn bad_seeds_are_refused_with_what_is_allowed() {
    let dir = setup("sweep-bad-seeds");
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "seeds = []",
            &[],
            "bad.toml: seeds = []: want a non-empty array",
        ),
        ("seeds = [1, 1]", &[], "seeds = [1, 1]: 1 is there twice"),
        ("seed = [1, 2]", &[], "unknown field `seed`, expected one of `name`, `scenario`, `set`, `seeds`, `grid`, `variants`; did you mean `seeds`?"),
        ("seeds = [-1]", &[], "seeds = [-1]: -1 is not a seed; want"),
        (
            "seeds = 3",
            &[],
            "seeds = 3: want a non-empty array of distinct whole numbers",
        ),
        (
            "seeds = [1]",
            &["--seeds", "0"],
            "--seeds 0: give at least 1",
        ),
        (
            "seeds = [1]",
            &["--set", "seed=4"],
            "`seed` is set and the sweep has seeds",
        ),
        (
            "seeds = [1]\n[grid]\nseed = [1, 2]",
            &[],
            "[grid] varies `seed` and the sweep has seeds",
        ),
    ];
    for (seeds, args, want) in cases {
        let text = if seeds.contains("[grid]") {
            format!("name = \"x\"\nscenario = \"tiny.toml\"\n{seeds}\n")
        } else {
            format!("name = \"x\"\nscenario = \"tiny.toml\"\n{seeds}\n[grid]\n\"workload.load\" = [0.3]\n")
        };
        std::fs::write(dir.join("bad.toml"), text).unwrap();
        let all = [&["sweep", "bad.toml", "--out", "bad"][..], args].concat();
        let err = refused(&irn(&all, &dir));
        assert!(err.contains(want), "{seeds} {args:?}: {err}");
        assert!(!dir.join("bad").exists(), "{seeds}: wrote its folder");
    }
}

/// A grid too large to list is refused from its value counts, before a point is built: the
/// count and the limit in the error, at once and in little memory.
#[test]
fn a_grid_past_the_limit_is_refused_before_it_is_built() {
    let dir = setup("huge-grid");
    let values: Vec<String> = (1..=1000).map(|i| i.to_string()).collect();
    let values = values.join(", ");
    let sweep = format!(
        "name = \"huge\"\nscenario = \"tiny.toml\"\n[grid]\n\"a\" = [{values}]\n\"b\" = [{values}]\n\
         \"c\" = [{values}]\n"
    );
    std::fs::write(dir.join("huge.toml"), sweep).unwrap();
    let started = std::time::Instant::now();
    let err = refused(&irn(&["sweep", "huge.toml"], &dir));
    assert!(
        started.elapsed().as_secs() < 10,
        "refused before building the grid"
    );
    assert!(
        err.contains(
            "huge.toml: [grid] makes 1000 × 1000 × 1000 = 1000000000 points, and a sweep runs \
             at most 100000 (points × seeds)"
        ),
        "{err}"
    );
    // Seeds count: 400 points × 300 seeds.
    let sweep = format!(
        "name = \"seeded\"\nscenario = \"tiny.toml\"\n[grid]\n\"workload.load\" = [{}]\n",
        (1..=400)
            .map(|i| format!("0.{i:04}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    std::fs::write(dir.join("seeded.toml"), sweep).unwrap();
    let err = refused(&irn(&["sweep", "seeded.toml", "--seeds", "300"], &dir));
    assert!(
        err.contains("[grid] makes 400 = 400 points × 300 seeds = 120000 runs, and a sweep runs"),
        "{err}"
    );
    assert!(!dir.join("results").exists());
}

/// What the sweep gives the scenario is blamed on the sweep file's key that gives it, not on a
/// `--set` the user never typed nor on `[[compare]]` the scenario does not have.
#[test]
fn sweep_errors_name_the_sweep_files_key() {
    let dir = setup("sweep-blame");
    std::fs::create_dir_all(dir.join("sw")).unwrap();
    let single = TINY.split("[[compare]]").next().unwrap();
    std::fs::write(dir.join("single.toml"), single).unwrap();
    let refuse = |scenario: &str, rest: &str| {
        let text = format!("name = \"s\"\nscenario = \"../{scenario}\"\n{rest}");
        std::fs::write(dir.join("sw/bad.toml"), text).unwrap();
        refused(&irn(&["sweep", "sw/bad.toml"], &dir))
    };
    let err = refuse("tiny.toml", "[grid]\n\"workload.lod\" = [0.3]\n");
    assert!(
        err.starts_with("error: sw/bad.toml: [grid] \"workload.lod\" = 0.3: unknown field `lod`"),
        "{err}"
    );
    assert!(!err.contains("--set"), "{err}");
    let err = refuse("tiny.toml", "[grid]\n\"workload.load\" = [0.3, 7]\n");
    assert!(
        err.starts_with(
            "error: sw/bad.toml: [grid] \"workload.load\" = 7: a fraction of line rate"
        ),
        "{err}"
    );
    let err = refuse("tiny.toml", "[grid]\n\"workload.load\" = [\"x\"]\n");
    assert!(
        err.starts_with("error: sw/bad.toml: [grid] \"workload.load\" = \"x\": invalid type"),
        "{err}"
    );
    let err = refuse(
        "tiny.toml",
        "set = { \"switch.bufer\" = \"1MB\" }\n[grid]\n\"workload.load\" = [0.3]\n",
    );
    assert!(
        err.starts_with("error: sw/bad.toml: set \"switch.bufer\" = \"1MB\": unknown field"),
        "{err}"
    );
    let err = refuse("single.toml", "[grid]\n\"name\" = [\"ok\", \"plots\"]\n");
    assert!(
        err.starts_with(
            "error: sw/bad.toml: [grid] \"name\" = \"plots\": its folder `plots` would take the \
             name of a file irn writes"
        ),
        "{err}"
    );
    assert!(!dir.join("results").exists());
}

/// A folder where the sweep writes `sweep.csv` is refused before any run, and kept as it is.
#[test]
fn a_folder_where_a_table_goes_is_refused_before_any_run() {
    let dir = setup("folder-in-the-way");
    ok(&irn(&["sweep", "sweep.toml", "--out", "out"], &dir));
    let table = dir.join("out/sweep.csv");
    std::fs::remove_file(&table).unwrap();
    std::fs::create_dir(&table).unwrap();
    std::fs::write(table.join("mine.txt"), "mine").unwrap();
    let o = irn(&["sweep", "sweep.toml", "--out", "out", "--fresh"], &dir);
    let err = refused(&o);
    assert!(
        err.contains("sweep.csv: a folder where irn writes a file"),
        "{err}"
    );
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("runs"),
        "ran first"
    );
    assert_eq!(
        std::fs::read_to_string(table.join("mine.txt")).unwrap(),
        "mine"
    );
}

/// A sweep of a collective: `sweep.csv` shows a job's names as text, `sweep_summary.csv` has a
/// mean and interval for its numbers only, the same whole or merged from shards; `irn plot`
/// names the `collectives.INDEX.KEY` form among the metrics it takes, and draws one, against
/// a numeric grid key or per point.
#[test]
fn a_collective_sweep_summarises_only_numbers_and_plots_a_jobs_metric() {
    let dir = scratch("sweep-collective");
    std::fs::write(dir.join("c.toml"), ALL_REDUCE).unwrap();
    std::fs::write(
        dir.join("s.toml"),
        "name = \"ar\"\nscenario = \"c.toml\"\nseeds = [1, 2]\n[grid]\n\"topology.link_rate\" = [\"10Gbps\", \"25Gbps\"]\n",
    )
    .unwrap();
    ok(&irn(&["sweep", "s.toml", "--out", "s", "-j", "2"], &dir));
    let (header, rows) = table(&dir.join("s/sweep.csv"));
    assert_eq!(cell(&header, &rows[0], "collectives.0.op"), "all-reduce");
    assert_eq!(cell(&header, &rows[0], "collectives.0.algorithm"), "ring");
    let (header, rows) = table(&dir.join("s/sweep_summary.csv"));
    for name in ["op", "algorithm"] {
        let column = format!("collectives.0.{name}_");
        assert!(!header.iter().any(|h| h.starts_with(&column)), "{header:?}");
    }
    let busbw = cell(&header, &rows[0], "collectives.0.busbw_gbytes_per_s_mean");
    assert!(busbw.parse::<f64>().unwrap() > 0.0, "{busbw}");
    assert!(
        header.contains(&"avg_fct_us_mean".to_string()),
        "{header:?}"
    );
    // Shards merged give the same tables, byte for byte.
    for (shard, out) in [("0/2", "a"), ("1/2", "b")] {
        ok(&irn(
            &["sweep", "s.toml", "--out", out, "--shard", shard],
            &dir,
        ));
    }
    ok(&irn(&["report", "b", "a", "--out", "m"], &dir));
    for file in ["sweep.csv", "sweep_summary.csv"] {
        assert_eq!(
            std::fs::read(dir.join("m").join(file)).unwrap(),
            std::fs::read(dir.join("s").join(file)).unwrap(),
            "{file}"
        );
    }
    let err = refused(&irn(&["plot", "s", "--metric", "busbw"], &dir));
    assert!(
        err.contains("fct_by_size.INDEX.KEY") && err.contains("collectives.INDEX.KEY"),
        "{err}"
    );
    assert!(!err.contains("collectives.0.op"), "{err}");
    let out = ok(&irn(
        &["plot", "s", "--metric", "collectives.0.busbw_gbytes_per_s"],
        &dir,
    ));
    assert!(
        out.contains("collectives.0.busbw_gbytes_per_s_by_topology.link_rate_gbps.svg"),
        "{out}"
    );
    // Over a grid of names (transports, balancers) there is no axis to draw against: the
    // metric is drawn per grid point, and the table has its column (both were missing, with
    // no word said).
    std::fs::write(
        dir.join("t.toml"),
        "name = \"ar-kinds\"\nscenario = \"c.toml\"\n[grid]\n\"transport.kind\" = [\"roce\", \"irn\"]\n",
    )
    .unwrap();
    ok(&irn(&["sweep", "t.toml", "--out", "t", "-j", "2"], &dir));
    let out = ok(&irn(
        &["plot", "t", "--metric", "collectives.0.busbw_gbytes_per_s"],
        &dir,
    ));
    assert!(
        out.contains("collectives.0.busbw_gbytes_per_s_by_point.svg"),
        "{out}"
    );
    let html = std::fs::read_to_string(dir.join("t/report.html")).unwrap();
    assert!(
        html.contains("<th scope=\"col\">collectives.0.busbw_gbytes_per_s</th>")
            && html.contains("transport.kind=irn"),
        "{html}"
    );
}

/// A run read its data files as they were: once one is edited, the runs that read it run again
/// (they were reused, computed from the old file, while only the scenario's text was compared).
#[test]
fn a_sweep_reruns_the_runs_whose_data_file_changed() {
    let dir = scratch("sweep-inputs");
    let topology = "4 1 3\n3\n0 3 100Gbps 1000ns 0\n1 3 100Gbps 1000ns 0\n2 3 100Gbps 1000ns 0\n";
    std::fs::write(dir.join("topo.txt"), topology).unwrap();
    std::fs::write(dir.join("flows.txt"), "1\n0 1 3 1000 0.000001\n").unwrap();
    std::fs::write(
        dir.join("s.toml"),
        "topology = { file = \"topo.txt\" }\nworkload = { kind = \"ns3\", file = \"flows.txt\" }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("sweep.toml"),
        "name = \"mtus\"\nscenario = \"s.toml\"\n[grid]\n\"transport.mtu\" = [1000, 2000]\n",
    )
    .unwrap();
    let sweep = || {
        ok(&irn(
            &["sweep", "sweep.toml", "--out", "s", "-j", "1"],
            &dir,
        ))
    };
    sweep();
    let again = sweep();
    assert!(again.contains("2 already done, 0 to run"), "{again}");
    let fct = |point: &str| {
        let path = dir.join("s").join(point).join("s/fct.txt");
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    assert!(fct("transport.mtu_1000").contains(" 1000 "));
    // The flow grows: both runs read it, both run again.
    std::fs::write(dir.join("flows.txt"), "1\n0 1 3 500000 0.000001\n").unwrap();
    let edited = sweep();
    assert!(
        edited.contains(
            "0 already done, 2 to run (2 of them done before for a scenario, a data file"
        ),
        "{edited}"
    );
    assert!(fct("transport.mtu_1000").contains(" 500000 "));
    // What the runs read is in their summary.json.
    let summary = std::fs::read_to_string(dir.join("s/transport.mtu_2000/s/summary.json"));
    let summary = summary.unwrap();
    assert!(summary.contains("\"key\": \"workload.file\""), "{summary}");
    assert!(summary.contains("\"file\": \"flows.txt\""), "{summary}");
}

/// `irn validate` of a sweep file checks every point, and runs nothing; `variants` picks the
/// scenario's `[[compare]]` variants to run, so a grid may set a key one of the others sets;
/// a name that is not a variant is refused with the names there are.
#[test]
fn a_sweep_validates_and_runs_the_variants_it_names() {
    let dir = setup("sweep-variants");
    let out = ok(&irn(&["validate", "sweep.toml"], &dir));
    assert!(
        out.starts_with(
            "sweep.toml: sweep `loads` is valid: 2 point(s) of tiny.toml × 2 seed(s) × 2 \
             variant(s) = 8 run(s)"
        ),
        "{out}"
    );
    assert!(out.contains("workload.load = 0.3"), "{out}");
    assert!(!dir.join("results").exists());
    // A value refused at the second point only is found without running the first.
    let bad = SWEEP.replace("[0.6, 0.3]", "[0.6, 3]");
    std::fs::write(dir.join("bad.toml"), bad).unwrap();
    let err = refused(&irn(&["validate", "bad.toml"], &dir));
    assert!(err.contains("[grid] \"workload.load\" = 3"), "{err}");
    // The grid's transport replaces what variant `RoCE+PFC` sets: refused, unless the sweep
    // runs only `IRN`.
    let grid = "name = \"t\"\nscenario = \"tiny.toml\"\n[grid]\n\"transport.kind\" = [\"irn\"]\n\
                \"workload.duration\" = [\"20us\"]\n";
    std::fs::write(dir.join("all.toml"), grid).unwrap();
    let err = refused(&irn(&["sweep", "all.toml", "--out", "all"], &dir));
    assert!(
        err.contains("variant `RoCE+PFC` sets transport.kind"),
        "{err}"
    );
    let only = grid.replace("[grid]", "variants = [\"IRN\"]\n[grid]");
    std::fs::write(dir.join("only.toml"), &only).unwrap();
    ok(&irn(
        &["sweep", "only.toml", "--out", "only", "-j", "1"],
        &dir,
    ));
    let point = dir.join("only/transport.kind_irn_workload.duration_20us");
    assert_eq!(names_in(&point, |_| true), ["IRN"]);
    for (variants, says) in [
        ("[\"IRN\", \"DCQCN\"]", "error: v.toml: variants = [\"IRN\", \"DCQCN\"]: \"DCQCN\" is not one of the scenario's [[compare]] variants: [\"IRN\", \"RoCE+PFC\"] (in tiny.toml)"),
        ("[\"IRN\", \"IRN\"]", "\"IRN\" is named twice"),
        ("[]", "name at least one"),
    ] {
        let text = grid.replace("[grid]", &format!("variants = {variants}\n[grid]"));
        std::fs::write(dir.join("v.toml"), text).unwrap();
        let err = refused(&irn(&["validate", "v.toml"], &dir));
        assert!(err.contains(says), "{variants}: {err}");
    }
}
