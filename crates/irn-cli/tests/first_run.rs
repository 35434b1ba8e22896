//! A new user's first `irn run`: where the results and charts are, what each variant sets, the
//! goodput of trace and WAN runs, a results folder named after its file, and Ctrl-C.

mod common;

use common::*;
use std::path::{Path, PathBuf};

/// [`TINY`] without its `name`.
fn unnamed() -> String {
    TINY.replace("name = \"tiny\"\n", "")
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn a_file_without_a_name_writes_a_folder_named_after_itself() {
    let dir = scratch("named-after-file");
    std::fs::write(dir.join("my_test.toml"), unnamed()).unwrap();
    std::fs::write(dir.join("other.toml"), unnamed()).unwrap();
    std::fs::write(dir.join("named.toml"), TINY).unwrap();
    for file in ["my_test.toml", "other.toml", "named.toml"] {
        ok(&irn(&["run", file], &dir));
    }
    let mut folders = names_in(&dir.join("results"), |_| true);
    folders.sort();
    assert_eq!(folders, ["my_test", "other", "tiny"]);
    let summary = std::fs::read_to_string(dir.join("results/my_test/IRN/summary.json")).unwrap();
    let summary: serde_json::Value = serde_json::from_str(&summary).unwrap();
    assert_eq!(summary["scenario"], "my_test");
    // `--set name=…` still wins over the file's stem.
    ok(&irn(&["run", "my_test.toml", "--set", "name=\"x\""], &dir));
    assert!(dir.join("results/x/IRN/summary.json").is_file());
    let out = ok(&irn(&["validate", "other.toml"], &dir));
    assert!(
        out.starts_with("other.toml: scenario `other` is valid"),
        "{out}"
    );
}

#[test]
fn a_run_ends_with_where_its_results_are_and_the_command_that_draws_its_charts() {
    let dir = scratch("plot-hint");
    std::fs::write(dir.join("t.toml"), TINY).unwrap();
    let out = ok(&irn(&["run", "t.toml", "--out", "my results"], &dir));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[lines.len() - 2], "results: my results");
    let last = lines[lines.len() - 1];
    assert_eq!(
        last,
        "charts: irn plot 'my results' (writes my results/report.html and my \
         results/plots/*.svg)"
    );
    // The command it gives works and writes what it says.
    ok(&irn(&["plot", "my results"], &dir));
    assert!(dir.join("my results/report.html").is_file());
    // The header comes first, the table after it.
    assert!(
        lines[0].starts_with("tiny: star (4 hosts, 1 switch)"),
        "{out}"
    );
    assert!(
        out.find("RoCE+PFC: roce") < out.find("avg slowdown"),
        "{out}"
    );
}

#[test]
fn a_sweep_ends_with_the_command_that_draws_its_charts() {
    let dir = scratch("sweep-plot-hint");
    std::fs::write(dir.join("t.toml"), TINY).unwrap();
    std::fs::write(
        dir.join("s.toml"),
        "name = \"loads\"\nscenario = \"t.toml\"\n[grid]\n\"workload.load\" = [0.3]\n",
    )
    .unwrap();
    let out = ok(&irn(&["sweep", "s.toml"], &dir));
    assert_eq!(
        out.lines().last(),
        Some(
            "charts: irn plot results/loads (writes results/loads/report.html and \
             results/loads/plots/*.svg)"
        )
    );
}

/// Variants that change a pause rule, the topology and the ordering layer: every key shows,
/// in `run`, in `validate` and in the report, keys the ordering layer fills in too.
#[test]
fn each_variant_line_lists_every_key_it_sets() {
    let dir = scratch("variant-keys");
    let scenario = r#"
name = "keys"
[topology]
kind = "star"
hosts = 4
[workload]
kind = "poisson"
load = 0.5
duration = "50us"
[switch]
pfc = true
[[compare]]
name = "base"
[[compare]]
name = "other"
set = { "topology.link_delay" = "3us", "ordering.kind" = "ideal", "pause_control" = [{ ports = "switch:0:downlinks", rule = "none" }] }
"#;
    std::fs::write(dir.join("k.toml"), scenario).unwrap();
    let pairs = "ordering.feedback=arrival, ordering.kind=ideal, ordering.sample_interval=1ms, \
                 pause_control=[{\"ports\":\"switch:0:downlinks\",\"rule\":\"none\"}], \
                 topology.link_delay=3us";
    // The layer's own keys (feedback, sample interval) fill in with its kind: not the
    // variant's words, so the run's line leaves them out.
    let sets = "; sets ordering.kind=ideal, \
                pause_control=[{\"ports\":\"switch:0:downlinks\",\"rule\":\"none\"}], \
                topology.link_delay=3us";
    let out = ok(&irn(&["run", "k.toml", "--out", "k"], &dir));
    let line = |out: &str, variant: &str| -> String {
        let start = format!("  {variant}: ");
        let found = out.lines().find(|l| l.starts_with(&start));
        found
            .unwrap_or_else(|| panic!("no {variant} line: {out}"))
            .to_string()
    };
    assert!(!line(&out, "base").contains("sets"), "{out}");
    assert!(line(&out, "other").ends_with(sets), "{out}");
    let valid = ok(&irn(&["validate", "k.toml"], &dir));
    assert!(!line(&valid, "base").contains("sets"), "{valid}");
    assert!(line(&valid, "other").ends_with(sets), "{valid}");
    ok(&irn(&["plot", "k"], &dir));
    let html = std::fs::read_to_string(dir.join("k/report.html")).unwrap();
    // The folder holds no base: each variant shows its values where the variants differ.
    let escaped = pairs.replace('"', "&quot;");
    assert!(
        html.contains(&format!(
            "<li><strong>other</strong>: <code>{escaped}</code></li>"
        )),
        "{html}"
    );
    assert!(
        html.contains("<li><strong>base</strong>: <code>ordering.feedback=-, ordering.kind=none"),
        "{html}"
    );
}

/// A flow file's run and a WAN run show goodput and utilization, and say what they average
/// over; a Poisson run on a datacenter does not.
#[test]
fn trace_and_wan_runs_show_goodput_and_say_it_spans_the_drain() {
    let dir = scratch("goodput");
    std::fs::write(
        dir.join("flows.csv"),
        "src,dst,size_bytes,start_ns\n0,1,100000,0\n2,3,50000,1000\n",
    )
    .unwrap();
    let trace = "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nkind = \"trace\"\n\
                 file = \"flows.csv\"\n";
    std::fs::write(dir.join("trace.toml"), trace).unwrap();
    let note = "goodput and link utilization: means over the whole run, from the first flow's \
                arrival to its end, the drain included";
    let out = ok(&irn(&["run", "trace.toml"], &dir));
    assert!(out.contains("\ngoodput (Gb/s) "), "{out}");
    assert!(out.contains("\nlink utilization (%) "), "{out}");
    assert!(out.contains(note), "{out}");
    let wan = repo().join("scenarios/paper/wan/pause_control.toml");
    let out = ok(&irn(&["run", wan.to_str().unwrap(), "--out", "wan"], &dir));
    assert!(
        out.contains("\ngoodput (Gb/s) ") && out.contains(note),
        "{out}"
    );
    std::fs::write(dir.join("t.toml"), TINY).unwrap();
    let out = ok(&irn(&["run", "t.toml"], &dir));
    assert!(
        !out.contains("goodput") && !out.contains("utilization"),
        "{out}"
    );
}

/// Ctrl-C during `irn run` and `irn sweep`: one line saying what was kept and removed, exit
/// status 130, and nothing half-written left.
#[cfg(unix)]
mod interrupt {
    use super::*;
    use std::process::{Command, Output, Stdio};
    use std::time::{Duration, Instant};

    /// Starts `irn args` in `dir`, waits until `started` (a path below `dir`) shows a temporary
    /// folder, then sends SIGINT and returns how it ended.
    fn interrupted(args: &[&str], dir: &Path, started: &Path, prefix: &str) -> Output {
        let child = Command::new(env!("CARGO_BIN_EXE_irn"))
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let begun = || started.is_dir() && !names_in(started, |n| n.starts_with(prefix)).is_empty();
        while !begun() {
            assert!(
                Instant::now() < deadline,
                "no temporary folder in {started:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(300));
        let pid = child.id().to_string();
        let killed = Command::new("kill").args(["-INT", &pid]).status().unwrap();
        assert!(killed.success());
        child.wait_with_output().unwrap()
    }

    /// The one `interrupted:` line, which ends standard error.
    fn said(out: &Output) -> String {
        assert_eq!(out.status.code(), Some(130), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = err.lines().filter(|l| l.contains("interrupted")).collect();
        assert_eq!(lines.len(), 1, "{err}");
        assert_eq!(err.lines().last(), Some(lines[0]), "{err}");
        lines[0].to_string()
    }

    /// A comparison that takes seconds a run.
    fn long() -> String {
        repo().join("scenarios/example.toml").display().to_string()
    }

    #[test]
    fn a_run_keeps_the_old_folder_and_removes_its_staging() {
        let dir = scratch("interrupt-run");
        let args = ["run", &long(), "--set", "workload.duration=20ms", "-j", "1"];
        let out = interrupted(
            &[&args[..], &["--out", "new"]].concat(),
            &dir,
            &dir,
            ".new.tmp-",
        );
        let line = said(&out);
        assert!(
            line.starts_with(
                "interrupted: kept nothing (new was not created), removed the \
                              unfinished .new.tmp-"
            ) && line.ends_with(
                "(0 of 2 variants had finished; a results folder is written whole or not \
                     at all)"
            ),
            "{line}"
        );
        // The header was out before the runs; the table never came.
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.starts_with("example: fat-tree"), "{stdout}");
        assert!(!stdout.contains("avg slowdown"), "{stdout}");
        assert!(
            names_in(&dir, |_| true).is_empty(),
            "{:?}",
            names_in(&dir, |_| true)
        );

        // Over an earlier results folder: kept as it was.
        std::fs::write(dir.join("t.toml"), TINY).unwrap();
        ok(&irn(&["run", "t.toml", "--out", "old"], &dir));
        let before = std::fs::read(dir.join("old/IRN/summary.json")).unwrap();
        let out = interrupted(
            &[&args[..], &["--out", "old"]].concat(),
            &dir,
            &dir,
            ".old.tmp-",
        );
        let line = said(&out);
        assert!(
            line.starts_with(
                "interrupted: kept old as it was before this run, removed the \
                              unfinished .old.tmp-"
            ),
            "{line}"
        );
        assert_eq!(
            std::fs::read(dir.join("old/IRN/summary.json")).unwrap(),
            before
        );
        let mut left = names_in(&dir, |_| true);
        left.sort();
        assert_eq!(left, ["old", "t.toml"]);
    }

    #[test]
    fn a_sweep_keeps_its_finished_runs_and_removes_the_unfinished_ones() {
        let dir = scratch("interrupt-sweep");
        let sweep = format!(
            "name = \"s\"\nscenario = {:?}\nset = {{ \"workload.duration\" = \"20ms\" }}\n\
             [grid]\n\"workload.load\" = [0.5, 0.6]\n",
            long()
        );
        std::fs::write(dir.join("s.toml"), sweep).unwrap();
        let point = dir.join("results/s/workload.load_0.5");
        let out = interrupted(&["sweep", "s.toml", "-j", "1"], &dir, &point, ".IRN.tmp-");
        let line = said(&out);
        assert_eq!(
            line,
            "interrupted: kept results/s with 0 of the 4 runs finished, removed the 1 \
             unfinished run; the same command runs the rest and writes sweep.csv"
        );
        // The point's folder, created for the unfinished run and left empty, goes with it.
        assert!(!point.exists());
        assert!(!dir.join("results/s/sweep.csv").exists());
    }

    #[test]
    fn a_check_keeps_its_finished_runs_and_removes_the_unfinished_ones() {
        let dir = scratch("interrupt-check");
        let text = std::fs::read_to_string(long()).unwrap()
            + "\n[[check]]\nnum = \"IRN\"\nden = \"RoCE+PFC\"\nmetric = \"avg_fct_us\"\n\
               expect = \"below\"\n";
        std::fs::write(dir.join("c.toml"), text).unwrap();
        // A quick pass has a folder of its own, as `irn reproduce --quick` has.
        let window = dir.join("results/check-quick/example/4ms/all");
        let args = ["check", "c.toml", "--quick", "-j", "1"];
        let out = interrupted(&args, &dir, &window, ".IRN.tmp-");
        assert_eq!(
            said(&out),
            "interrupted: kept every finished run in results/check-quick, removed the 1 \
             unfinished run; the same command reuses them and runs the rest"
        );
        assert!(!window.exists());
        assert!(!dir.join("results/check-quick/report.html").exists());
        assert!(!dir.join("results/check").exists());
    }
}
