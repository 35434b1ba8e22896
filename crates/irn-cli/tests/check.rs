//! `irn check`: a user's experiment, written as data (`[experiment]`, `[[check]]`), run by the
//! engine that reproduces the papers.

mod common;

use common::{irn, ok, refused, scratch};

/// Two variants of a small fat-tree, the same flows: one with 20× the propagation delay, so
/// every FCT is longer.
const EXPERIMENT: &str = r#"
name = "slow-core"
seed = 3

[topology]
kind = "fat-tree"
k = 4

[workload]
kind = "poisson"
load = 0.3
duration = "200us"

[[compare]]
name = "fast"
set = {}

[[compare]]
name = "slow"
set = { "topology.link_delay" = "20us" }

[experiment]
title = "A slower network has longer flows"
note = "Hand-made: every link 20x longer."

[[experiment.point]]
name = "light"
set = { "workload.load" = 0.2 }

[[experiment.point]]
name = "heavy"
set = { "workload.load" = 0.5 }

[[check]]
num = "slow"
den = "fast"
metrics = ["avg_fct_us", "fct_by_size.0.avg_fct_us"]
paper = [2, 3]
claim = "slower"
expect = "above"

# The form of files written before the paper's value was data: words in `paper`.
[[check]]
num = { variant = "fast", point = "heavy" }
den = { variant = "fast", point = "light" }
metric = "data_packets_sent"
paper = "more load, more packets"
expect = "above"
"#;

#[test]
fn a_checked_experiment_runs_every_point_and_reports_each_check() {
    let dir = scratch("check");
    std::fs::write(dir.join("exp.toml"), EXPERIMENT).unwrap();
    let out = ok(&irn(&["check", "exp.toml", "--out", "c", "-j", "2"], &dir));
    assert!(out.contains("slow-core") && out.contains("5/5"), "{out}");
    // The tally ends what the command prints.
    let tally = "checks: direction holds 5 of 5; magnitude: 2 in range, 0 near, 2 off, 1 \
                 qualitative\ntotal";
    assert!(out.contains(tally), "{out}");
    let md = std::fs::read_to_string(dir.join("c/report.md")).unwrap();
    for want in [
        "# `irn check`",
        "| Checked experiments | 5 | 5 | 2 | 0 | 2 | 1 | not checked |",
        "- [A slower network has longer flows](#fig-slow-core): 5 of 5 directions hold",
        "### A slower network has longer flows\n\nwindow 200us (convergence not checked); \
         direction holds 5 of 5; magnitude: 2 in range, 0 near, 2 off, 1 qualitative.",
        "Hand-made: every link 20x longer.",
        "| light | slow / fast | avg FCT | 2–3× (slower) | 2.31× | holds | in range | not checked \
         (200us) |",
        "| heavy | slow / fast | fct_by_size.0.avg_fct_us | 2–3× (slower) | 8.56× | holds | \
         **off ×2.85** (not yet explained) | not checked (200us) |",
        "|  | fast (heavy) / fast (light) | data_packets_sent | more load, more packets | 2.78× | \
         holds | qualitative |",
    ] {
        assert!(md.contains(want), "{want}\n{md}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("c/reproduce.json")).unwrap())
            .unwrap();
    let first = &json[0]["outcomes"][0];
    assert_eq!(first["paper"], serde_json::json!([2.0, 3.0]));
    assert_eq!(first["claim"], "slower");
    assert_eq!(first["magnitude"], "in_range");
    assert_eq!(first["holds"], true);
    assert_eq!(first["window"], "200us");
    assert_eq!(first["converged"], serde_json::Value::Null);
    assert_eq!(json[0]["outcomes"][1]["magnitude"], "off");
    assert_eq!(json[0]["outcomes"][4]["magnitude"], "qualitative");
    for point in ["light", "heavy"] {
        for variant in ["fast", "slow"] {
            let run = dir.join("c/slow-core/200us").join(point).join(variant);
            assert!(run.join("summary.json").is_file(), "{}", run.display());
        }
    }
    // Reversed, the same checks fail: exit status 1, and the report says which.
    let reversed = EXPERIMENT.replace("expect = \"above\"", "expect = \"below\"");
    std::fs::write(dir.join("rev.toml"), reversed).unwrap();
    let o = irn(&["check", "rev.toml", "--out", "r"], &dir);
    let err = refused(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(err.contains("a direction does not hold"), "{err}");
    let md = std::fs::read_to_string(dir.join("r/report.md")).unwrap();
    assert!(
        md.contains("0 of 5 directions hold") && md.contains("**differs**"),
        "{md}"
    );
}

/// A variant with `points` runs at those grid points only: a costly variant one check needs
/// at one point costs nothing at the others.
#[test]
fn a_variant_with_points_runs_only_there() {
    let dir = scratch("check-points");
    let exp = EXPERIMENT
        .replace(
            "\"20us\" }",
            "\"20us\" }\npoints = [\"heavy\"]",
        )
        .replace(
            "num = \"slow\"\nden = \"fast\"",
            "num = { variant = \"slow\", point = \"heavy\" }\nden = { variant = \"fast\", point = \"heavy\" }",
        );
    std::fs::write(dir.join("exp.toml"), exp).unwrap();
    let out = ok(&irn(&["check", "exp.toml", "--out", "c"], &dir));
    assert!(out.contains("3/3"), "{out}");
    let run = |point: &str, variant: &str| {
        (dir.join("c/slow-core/200us").join(point).join(variant)).join("summary.json")
    };
    assert!(run("heavy", "slow").is_file() && run("light", "fast").is_file());
    assert!(!run("light", "slow").exists(), "slow runs at heavy only");
    let md = std::fs::read_to_string(dir.join("c/report.md")).unwrap();
    assert!(
        md.contains("| slow (heavy) / fast (heavy) | avg FCT | 2–3× (slower) | 2.20× |"),
        "{md}"
    );
}

/// A metric a run has no value for (an ordering layer's memory, without a layer) gives no
/// ratio: the report names the run and the metric instead of a bare "no value".
#[test]
fn a_ratio_without_a_value_names_the_run_that_lacks_it() {
    let dir = scratch("check-missing");
    let exp = EXPERIMENT.replace(
        r#"metrics = ["avg_fct_us", "fct_by_size.0.avg_fct_us"]"#,
        r#"metric = "ordering_avg_nic_bytes""#,
    );
    std::fs::write(dir.join("exp.toml"), exp).unwrap();
    let o = irn(&["check", "exp.toml", "--out", "c"], &dir);
    assert_eq!(o.status.code(), Some(1), "{}", refused(&o));
    let md = std::fs::read_to_string(dir.join("c/report.md")).unwrap();
    let want =
        "| light | slow / fast | ordering_avg_nic_bytes | 2–3× (slower) | — | **differs** | \
                no value: no `ordering_avg_nic_bytes` in slow (light) |";
    assert!(md.contains(want), "{want}\n{md}");
    let json = std::fs::read_to_string(dir.join("c/reproduce.json")).unwrap();
    assert!(json.contains(r#""missing": "no `ordering_avg_nic_bytes` in slow (light)""#));
}

/// The same runs give the same bytes, whether computed now or read back from their
/// `summary.json` (once 11 of 102 ratios differed in their last digits: serde_json's float
/// parsing is not exact, and only the read-back runs went through it), and the files hold no
/// wall time.
#[test]
fn reports_are_the_same_bytes_fresh_or_read_back() {
    let dir = scratch("check-bytes");
    std::fs::write(dir.join("exp.toml"), EXPERIMENT).unwrap();
    let files = ["reproduce.json", "report.md", "report.html"];
    let read = |out: &str| files.map(|f| std::fs::read(dir.join(out).join(f)).unwrap());
    ok(&irn(&["check", "exp.toml", "--out", "c"], &dir));
    let fresh = read("c");
    let again = ok(&irn(&["check", "exp.toml", "--out", "c"], &dir));
    assert!(again.contains("(4 runs reused)"), "{again}");
    for (f, (a, b)) in files.iter().zip(fresh.iter().zip(read("c"))) {
        assert!(*a == b, "{f} differs between a fresh and a read-back run");
    }
    // With the convergence check too: each check says whether it settled, and by how much
    // it moved when the window doubled.
    ok(&irn(
        &["check", "exp.toml", "--out", "w", "--max-window", "400us"],
        &dir,
    ));
    let fresh = read("w");
    let again = ok(&irn(
        &["check", "exp.toml", "--out", "w", "--max-window", "400us"],
        &dir,
    ));
    assert!(again.contains("(8 runs reused)"), "{again}");
    assert!(fresh.iter().zip(read("w")).all(|(a, b)| *a == b));
    let md = String::from_utf8(fresh[1].clone()).unwrap();
    assert!(md.contains("at 400us ("), "{md}");
    let json: serde_json::Value = serde_json::from_slice(&fresh[0]).unwrap();
    for o in json[0]["outcomes"].as_array().unwrap() {
        assert_eq!(o["window"], "400us");
        assert!(
            o["converged"].is_boolean() && o["last_move"].is_number(),
            "{o}"
        );
        let moved = o["last_move"].as_f64().unwrap();
        assert_eq!(
            o["converged"].as_bool().unwrap(),
            moved.abs() <= 0.05,
            "{o}"
        );
        let words = if moved.abs() <= 0.05 {
            "converged at 400us"
        } else {
            "still moving at 400us"
        };
        assert!(md.contains(words), "{words}\n{md}");
    }
}

/// `[experiment] warmup`: each window's runs first simulate that long unmeasured, so a window
/// of W runs W + warmup of arrivals and measures the last W; the report says so. With a
/// `cooldown` too, arrivals go on that long after the window and are not measured.
#[test]
fn a_warmup_runs_before_each_window_unmeasured_and_a_cooldown_after_it() {
    let dir = scratch("check-warmup");
    let with = |keys: &str| {
        EXPERIMENT.replace(
            "note = \"Hand-made: every link 20x longer.\"",
            &format!("note = \"Hand-made: every link 20x longer.\"\n{keys}"),
        )
    };
    let resolved = |out: &str, window: &str| {
        let summary = dir
            .join(out)
            .join("slow-core")
            .join(window)
            .join("light/fast/summary.json");
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(summary).unwrap()).unwrap();
        json["resolved_scenario"].clone()
    };
    std::fs::write(dir.join("exp.toml"), with("warmup = \"100us\"")).unwrap();
    ok(&irn(
        &["check", "exp.toml", "--out", "c", "--max-window", "400us"],
        &dir,
    ));
    for (window, duration) in [("200us", "300us"), ("400us", "500us")] {
        let resolved = resolved("c", window);
        assert_eq!(resolved["workload"]["duration"], duration, "{resolved}");
        assert_eq!(resolved["run"]["warmup"], "100us", "{resolved}");
        assert!(resolved["run"].get("measure_until").is_none(), "{resolved}");
    }
    let md = std::fs::read_to_string(dir.join("c/report.md")).unwrap();
    assert!(md.contains("window 400us after a 100us warm-up: "), "{md}");

    std::fs::write(
        dir.join("exp.toml"),
        with("warmup = \"100us\"\ncooldown = \"50us\""),
    )
    .unwrap();
    ok(&irn(
        &["check", "exp.toml", "--out", "d", "--max-window", "200us"],
        &dir,
    ));
    let resolved = resolved("d", "200us");
    assert_eq!(resolved["workload"]["duration"], "350us", "{resolved}");
    assert_eq!(resolved["run"]["warmup"], "100us", "{resolved}");
    assert_eq!(resolved["run"]["measure_until"], "300us", "{resolved}");
    let md = std::fs::read_to_string(dir.join("d/report.md")).unwrap();
    assert!(
        md.contains("window 200us after a 100us warm-up, before a 50us cool-down ("),
        "{md}"
    );

    // `--quick` keeps its runs short: the window alone (the file's own 200 us, shorter than
    // the default 4 ms), its tenth unmeasured.
    ok(&irn(&["check", "exp.toml", "--out", "q", "--quick"], &dir));
    let quick = dir.join("q/slow-core/200us/light/fast/summary.json");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(quick).unwrap()).unwrap();
    assert_eq!(json["resolved_scenario"]["workload"]["duration"], "200us");
    assert!(json["resolved_scenario"]["run"]
        .get("measure_until")
        .is_none());
}

#[test]
fn a_mistaken_experiment_is_refused_before_anything_runs() {
    let dir = scratch("check-errors");
    for (edit, want) in [
        (
            ("den = \"fast\"", "den = \"fats\""),
            "check[0].den.variant = \"fats\": one of its [[compare]] names: \"fast\", \"slow\"",
        ),
        (
            ("\"avg_fct_us\", \"fct", "\"avg_fct\", \"fct"),
            "`avg_fct` is not a number of summary.json (one of",
        ),
        (
            ("fct_by_size.0.avg_fct_us", "fct_by_size.0.mean"),
            "an entry of fct_by_size is `fct_by_size.INDEX.KEY` with INDEX from 0 and KEY one of",
        ),
        (
            ("fct_by_size.0.avg_fct_us", "queries.qct_mean"),
            "`queries.qct_mean`: a queries metric is `queries.KEY` with KEY one of",
        ),
        (
            ("\"avg_fct_us\", \"fct", "\"failures\", \"fct"),
            "`failures`: a failures metric is `failures.KEY` with KEY one of link_failures",
        ),
        // Metrics its runs never write: refused before they run, not found empty after.
        (
            ("fct_by_size.0.avg_fct_us", "fct_by_size.9.avg_fct_us"),
            "check[0].metric = fct_by_size.9.avg_fct_us: `fct_by_size.9.avg_fct_us`: variant \
             `slow` has 4 flow-size buckets, fct_by_size.0 to fct_by_size.3",
        ),
        (
            ("fct_by_size.0.avg_fct_us", "conweave.reroutes"),
            "and variant `slow` does not use ConWeave",
        ),
        (
            ("fct_by_size.0.avg_fct_us", "bottleneck.utilization"),
            "`bottleneck.utilization`: summary.json has `bottleneck` only for runs with \
             [monitor] summary_from",
        ),
        (
            ("\"20us\" }", "\"20us\" }\npoints = [\"hevy\"]"),
            "compare.points (variant `slow`) = hevy: a point of [[experiment.point]]: light, heavy",
        ),
        (
            ("\"20us\" }", "\"20us\" }\npoints = []"),
            "compare.points (variant `slow`) = []: at least one point",
        ),
        (
            ("\"20us\" }", "\"20us\" }\npoints = [\"heavy\"]"),
            "check[0].num.point = (every point): one of the points variant `slow` runs at: heavy",
        ),
        (
            ("point = \"light\"", "point = \"ligth\""),
            "check[1].den.point = ligth: a point of [[experiment.point]]: light, heavy",
        ),
        (
            (
                "claim = \"slower\"\nexpect = \"above\"",
                "claim = \"slower\"\nexpect = \"higher\"",
            ),
            "unknown variant `higher`",
        ),
        // As the file writes it, not as Rust names it (`Near(-0.1)`).
        (
            (
                "claim = \"slower\"\nexpect = \"above\"",
                "claim = \"slower\"\nexpect = { near = -0.1 }",
            ),
            "check[0].expect = { near = -0.1 }: { near = T }: a tolerance T of 0 or more",
        ),
        (
            ("paper = [2, 3]", "paper = [3, 2]"),
            "check[0].paper = [3, 2]: a positive number (the paper's value) or a range [low, \
             high] with 0 < low <= high",
        ),
        (
            ("paper = [2, 3]", "paper = 0"),
            "check[0].paper = 0: a positive number",
        ),
        (
            ("paper = [2, 3]", "paper = { heavy = 2, medium = 3 }"),
            "check[0].paper = { \"medium\" = … }: one number or range per point of [[experiment.point]], by its name: light, heavy",
        ),
        (
            ("paper = [2, 3]", "paper = true"),
            "paper = true: a number (9.5), a range of two ([2.8, 3.7]), an \"up to\" bound ({ up_to = 1.73 }), one of those per grid point",
        ),
        (
            ("note = \"Hand", "warmup = \"soon\"\nnote = \"Hand"),
            "experiment.warmup = \"soon\": `soon` has no number",
        ),
        (
            ("note = \"Hand", "warmup = \"1ms\"\nrepetitions = 2\nnote = \"Hand"),
            "experiment.warmup = 1ms: only for a windowed experiment (not with repetitions)",
        ),
        (
            ("note = \"Hand", "cooldown = \"-1ms\"\nnote = \"Hand"),
            "experiment.cooldown = \"-1ms\"",
        ),
        (
            ("note = \"Hand", "cooldown = \"1ms\"\nrepetitions = 2\nnote = \"Hand"),
            "experiment.cooldown = 1ms: only for a windowed experiment (not with repetitions)",
        ),
        (
            ("paper = [2, 3]", "paper = \"2-3x\""),
            "check[0].paper = \"2-3x\": a number or a range when `claim` gives the paper's words",
        ),
    ] {
        let text = EXPERIMENT.replacen(edit.0, edit.1, 1);
        assert_ne!(text, EXPERIMENT, "{edit:?}");
        std::fs::write(dir.join("bad.toml"), text).unwrap();
        let out = irn(&["check", "bad.toml", "--out", "b"], &dir);
        // 2: a broken experiment, told apart from a direction that does not hold (1).
        assert_eq!(out.status.code(), Some(2), "{want}");
        let err = refused(&out);
        assert!(
            err.contains("bad.toml") && err.contains(want),
            "{want}\n{err}"
        );
        assert!(!dir.join("b").exists());
    }
    // A scenario without checks is not an experiment.
    std::fs::write(
        dir.join("plain.toml"),
        EXPERIMENT.split("[experiment]").next().unwrap(),
    )
    .unwrap();
    let err = refused(&irn(&["check", "plain.toml"], &dir));
    assert!(err.contains("plain.toml: no [[check]]"), "{err}");
    // `irn run` ignores the experiment and runs the scenario.
    std::fs::write(dir.join("exp.toml"), EXPERIMENT).unwrap();
    let out = ok(&irn(&["run", "exp.toml", "--out", "run"], &dir));
    assert!(out.contains("fast") && out.contains("slow"), "{out}");
    let summary = std::fs::read_to_string(dir.join("run/fast/summary.json")).unwrap();
    assert!(!summary.contains("experiment") && !summary.contains("\"check\""));
    // Nor can --set reach them.
    let err = refused(&irn(
        &["check", "exp.toml", "--set", "check.0.paper=x"],
        &dir,
    ));
    assert!(
        err.contains("[check] describes the experiment, not a run"),
        "{err}"
    );
}

/// A `--set` of a key the grid points set is dropped at those points (theirs apply over it):
/// said on stderr, naming the key and the points, before anything runs.
#[test]
fn a_set_the_grid_points_override_is_warned_of() {
    let dir = scratch("check-set-points");
    std::fs::write(dir.join("exp.toml"), EXPERIMENT).unwrap();
    // A file as --out is refused after the warning, so nothing runs.
    std::fs::write(dir.join("taken"), "").unwrap();
    let warnings = |set: &str| {
        let out = irn(&["check", "exp.toml", "--set", set, "--out", "taken"], &dir);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        err.lines()
            .filter(|l| l.starts_with("warning:"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        warnings("workload.load=0.9"),
        [
            "warning: slow-core: --set workload.load: every grid point (light, heavy) sets \
             workload.load over it, so --set's workload.load is used at none of them"
        ]
    );
    assert_eq!(
        warnings("workload={ kind = \"poisson\", load = 0.9, duration = \"200us\" }"),
        [
            "warning: slow-core: --set workload: every grid point (light, heavy) sets \
             workload.load over it, so --set's workload.load is used at none of them"
        ]
    );
    assert!(warnings("transport.mtu=512").is_empty());
}

/// The report draws one chart per grid dimension (`load=…` points), with units on the bars,
/// and the terminal table has headers.
#[test]
fn a_grid_gets_a_chart_per_dimension() {
    let dir = scratch("check-dims");
    let grid = EXPERIMENT
        .replace("name = \"light\"", "name = \"load=0.2\"")
        .replace("name = \"heavy\"", "name = \"load=0.5\"")
        .replace("point = \"light\"", "point = \"load=0.2\"")
        .replace("point = \"heavy\"", "point = \"load=0.5\"");
    std::fs::write(dir.join("grid.toml"), grid).unwrap();
    let out = ok(&irn(&["check", "grid.toml", "--out", "g"], &dir));
    assert!(
        out.contains("figure") && out.contains("direction") && out.contains("in range"),
        "{out}"
    );
    let html = std::fs::read_to_string(dir.join("g/report.html")).unwrap();
    assert!(html.contains("avg slowdown against load"), "{html}");
    assert!(html.contains("avg FCT (µs)"), "{html}");
}

/// A check of a scenario without `[[compare]]` names its one run by the scenario's name, and
/// the error for another name says so rather than listing it as a variant.
#[test]
fn a_check_without_variants_is_told_its_one_runs_name() {
    let dir = scratch("check-no-variants");
    let text = "name = \"solo\"\n[topology]\nkind = \"star\"\nhosts = 4\n[workload]\n\
                duration = \"100us\"\n[experiment]\ntitle = \"x\"\n[[check]]\nnum = \"IRN\"\n\
                metric = \"avg_fct_us\"\nexpect = \"below\"\npaper = 10.0\n";
    std::fs::write(dir.join("solo.toml"), text).unwrap();
    let err = refused(&irn(&["check", "solo.toml", "--out", "c"], &dir));
    assert!(
        err.contains(
            "solo.toml: check[0].num.variant = \"IRN\": \"solo\", the scenario's name: without \
             [[compare]] variants, its one run takes that name"
        ),
        "{err}"
    );
}

/// A file without `name` is named by its file, as `irn run` names it: its figure, its folder
/// and its one run.
#[test]
fn a_file_without_a_name_is_named_by_the_file() {
    let dir = scratch("check-nameless");
    let text = "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nduration = \"50us\"\n\
                [[check]]\nnum = \"nameless\"\nmetric = \"flows_total\"\nexpect = { at_least = 1 }\n";
    std::fs::write(dir.join("nameless.toml"), text).unwrap();
    let out = ok(&irn(&["check", "nameless.toml", "--out", "c"], &dir));
    assert!(out.contains("\nnameless "), "{out}");
    let summary = std::fs::read_to_string(dir.join("c/nameless/50us/all/nameless/summary.json"));
    assert!(summary.unwrap().contains("\"scenario\": \"nameless\""));
    // `--quick` never runs longer than the file's own window.
    ok(&irn(
        &["check", "nameless.toml", "--quick", "--out", "q"],
        &dir,
    ));
    assert!(dir
        .join("q/nameless/50us/all/nameless/summary.json")
        .is_file());
}
