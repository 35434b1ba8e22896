//! irn never deletes or overwrites what it did not write, cleans up after a signal, reuses a
//! sweep's runs only for an unchanged scenario, and merges only shards of one sweep (issue 19,
//! items 1–4). Each test runs the `irn` binary on tiny scenarios.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SWEEP: &str =
    "name = \"loads\"\nscenario = \"tiny.toml\"\n[grid]\n\"workload.load\" = [0.3, 0.6]\n";

/// Every file below `dir` (hidden ones too) with its contents.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(snapshot(&path));
        } else {
            files.insert(path.clone(), std::fs::read(&path).unwrap());
        }
    }
    files
}

/// Names in `dir` that look like irn's temporaries.
fn temporaries(dir: &Path) -> Vec<String> {
    names_in(dir, |n| n.contains(".tmp-"))
}

#[test]
fn a_folder_irn_did_not_write_survives_every_writing_command() {
    let dir = scratch("foreign");
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();
    std::fs::write(dir.join("sweep.toml"), SWEEP).unwrap();
    // The user's folder: notes, the scenario being run, a web page and a chart of their own.
    let precious = dir.join("precious");
    std::fs::create_dir_all(precious.join("plots")).unwrap();
    std::fs::write(precious.join("notes.txt"), "my notes").unwrap();
    std::fs::write(precious.join("tiny.toml"), TINY).unwrap();
    std::fs::write(precious.join("notes.html"), "<p>mine</p>").unwrap();
    std::fs::write(precious.join("plots/metrics.svg"), "<svg>mine</svg>").unwrap();
    let before = snapshot(&precious);
    // irn's own results to feed `plot` and `report`.
    ok(&irn(&["run", "tiny.toml", "--out", "r"], &dir));
    ok(&irn(&["sweep", "sweep.toml", "--out", "s"], &dir));

    let flows = [
        "gen-flows",
        "--cdf",
        "irn-default",
        "--load",
        "0.5",
        "--hosts",
        "4",
        "--duration",
        "1ms",
        "-o",
    ];
    let cases: &[(&[&str], &str)] = &[
        (&["run", "tiny.toml", "--out", "precious"], "precious: "),
        (
            &["run", "precious/tiny.toml", "--out", "precious"],
            "holds precious/tiny.toml, which this command reads",
        ),
        (
            &["sweep", "sweep.toml", "--out", "precious"],
            "precious: is not empty and has no .irn-results",
        ),
        (
            &["reproduce", "fig02", "--quick", "--out", "precious"],
            "precious: is not empty",
        ),
        (
            &["report", "s", "--out", "precious"],
            "precious: is not empty",
        ),
        (
            &["plot", "r", "--out", "precious/notes.html"],
            "precious/notes.html: exists and is not a report",
        ),
        (
            &["plot", "r", "--out", "precious/report.html"],
            "precious/plots: is not empty",
        ),
        (
            &[&flows[..], &["precious/notes.txt"]].concat(),
            "precious/notes.txt: exists and irn did not write it",
        ),
    ];
    for (args, expected) in cases {
        let err = refused(&irn(args, &dir));
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(err.contains("remove it yourself"), "{args:?}: {err}");
        assert_eq!(snapshot(&precious), before, "{args:?} changed the folder");
    }
    // The working folder and its parents: from inside the folder, as `.` and `..`.
    let inside = precious.join("plots");
    let cases: &[&[&str]] = &[
        &["run", "../tiny.toml", "--out", "."],
        &["run", "../tiny.toml", "--out", ".."],
        &["sweep", "../../sweep.toml", "--out", ".."],
    ];
    for args in cases {
        let err = refused(&irn(args, &inside));
        assert!(err.contains("remove it yourself"), "{args:?}: {err}");
        assert_eq!(snapshot(&precious), before, "{args:?} changed the folder");
    }
    // An empty folder, even the working folder's child, may be used; an empty working folder
    // may not be replaced (the process would lose its working folder).
    let empty = dir.join("empty");
    std::fs::create_dir(&empty).unwrap();
    ok(&irn(&["run", "tiny.toml", "--out", "empty"], &dir));
    assert!(empty.join(".irn-results").is_file());
    let empty_cwd = dir.join("empty-cwd");
    std::fs::create_dir(&empty_cwd).unwrap();
    let err = refused(&irn(&["run", "../tiny.toml", "--out", "."], &empty_cwd));
    assert!(
        err.contains(".: is the working folder or holds it"),
        "{err}"
    );
}

#[test]
fn irn_replaces_and_updates_its_own_folders() {
    let dir = scratch("own");
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();
    ok(&irn(&["run", "tiny.toml", "--out", "r"], &dir));
    let marker = std::fs::read_to_string(dir.join("r/.irn-results")).unwrap();
    assert!(marker.contains("\"written_by\": \"run\""), "{marker}");
    assert!(marker.contains("\"irn_version\""), "{marker}");
    ok(&irn(&["run", "tiny.toml", "--out", "r"], &dir));
    assert!(dir.join("r/IRN/summary.json").is_file());
    // Plots twice into the same folder, and a flow file replaced by a new one.
    ok(&irn(&["plot", "r"], &dir));
    ok(&irn(&["plot", "r"], &dir));
    assert!(dir.join("r/plots/.irn-results").is_file());
    let flows = |seed: &str| {
        irn(
            &[
                "gen-flows",
                "--cdf",
                "irn-default",
                "--load",
                "0.5",
                "--hosts",
                "4",
                "--duration",
                "1ms",
                "--seed",
                seed,
                "-o",
                "flows.txt",
            ],
            &dir,
        )
    };
    ok(&flows("1"));
    let first = std::fs::read(dir.join("flows.txt")).unwrap();
    ok(&flows("2"));
    assert_ne!(std::fs::read(dir.join("flows.txt")).unwrap(), first);
    assert!(temporaries(&dir).is_empty(), "{:?}", temporaries(&dir));
}

/// A report or table irn wrote and someone edited since (notes in a report) is never replaced:
/// `irn plot`, `irn run` (which replaces the folder), `irn sweep` and `irn check` refuse before
/// writing anything, naming the file; unedited, each replaces it as before.
#[test]
fn a_report_or_table_edited_since_irn_wrote_it_is_not_replaced() {
    let dir = scratch("edited");
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();
    ok(&irn(&["run", "tiny.toml", "--out", "r"], &dir));
    ok(&irn(&["plot", "r"], &dir));
    let edit = |path: &str| {
        let path = dir.join(path);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("my notes\n");
        std::fs::write(&path, text).unwrap();
    };
    edit("r/report.html");
    let before = snapshot(&dir.join("r"));
    for args in [&["plot", "r"][..], &["run", "tiny.toml", "--out", "r"]] {
        let err = refused(&irn(args, &dir));
        assert!(
            err.contains("r/report.html: changed since irn wrote it, and irn would replace it"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(snapshot(&dir.join("r")), before);

    std::fs::write(dir.join("s.toml"), SWEEP).unwrap();
    ok(&irn(&["sweep", "s.toml", "--out", "s"], &dir));
    ok(&irn(&["sweep", "s.toml", "--out", "s"], &dir));
    edit("s/sweep.csv");
    let err = refused(&irn(&["sweep", "s.toml", "--out", "s"], &dir));
    assert!(
        err.contains("s/sweep.csv: changed since irn wrote it"),
        "{err}"
    );

    let check = format!("{TINY}\n[[check]]\nnum = \"IRN\"\nden = \"RoCE+PFC\"\nmetric = \"avg_fct_us\"\nexpect = \"below\"\n");
    std::fs::write(dir.join("c.toml"), check).unwrap();
    let status = irn(&["check", "c.toml", "--out", "c"], &dir).status.code();
    assert!(matches!(status, Some(0 | 1)), "{status:?}");
    edit("c/report.md");
    let err = refused(&irn(&["check", "c.toml", "--out", "c"], &dir));
    assert!(
        err.contains("c/report.md: changed since irn wrote it"),
        "{err}"
    );
}

#[test]
fn a_run_file_edited_since_irn_wrote_it_is_neither_replaced_nor_reused() {
    let dir = scratch("edited-run");
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();
    let append = |path: &str| {
        let path = dir.join(path);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("1,2,3\n");
        std::fs::write(&path, text).unwrap();
    };

    ok(&irn(&["run", "tiny.toml", "--out", "r"], &dir));
    append("r/IRN/flows.csv");
    let before = snapshot(&dir.join("r"));
    let err = refused(&irn(&["run", "tiny.toml", "--out", "r"], &dir));
    assert!(
        err.contains("r/IRN/flows.csv: changed since irn wrote it, and irn would replace it"),
        "{err}"
    );
    assert_eq!(snapshot(&dir.join("r")), before);
    // `plot` draws an edited run as it is, and says so.
    ok(&irn(&["run", "tiny.toml", "--out", "p"], &dir));
    let summary = dir.join("p/IRN/summary.json");
    let text = std::fs::read_to_string(&summary).unwrap();
    std::fs::write(
        &summary,
        text.replacen("\"avg_fct_us\": ", "\"avg_fct_us\": 1", 1),
    )
    .unwrap();
    let plotted = irn(&["plot", "p"], &dir);
    ok(&plotted);
    let said = String::from_utf8_lossy(&plotted.stderr);
    assert!(
        said.contains("p/IRN/summary.json: changed since irn wrote it; the charts and report"),
        "{said}"
    );

    // A sweep neither reuses an edited run's numbers nor reruns over it; `report` refuses them.
    std::fs::write(dir.join("s.toml"), SWEEP).unwrap();
    ok(&irn(&["sweep", "s.toml", "--out", "s"], &dir));
    let summary = dir.join("s/workload.load_0.3/IRN/summary.json");
    let text = std::fs::read_to_string(&summary).unwrap();
    let edited = text.replacen("\"avg_fct_us\": ", "\"avg_fct_us\": 1", 1);
    assert_ne!(edited, text);
    std::fs::write(&summary, edited).unwrap();
    let before = snapshot(&dir.join("s"));
    let err = refused(&irn(&["sweep", "s.toml", "--out", "s"], &dir));
    assert!(
        err.contains("IRN/summary.json: changed since irn wrote it, and irn would replace it"),
        "{err}"
    );
    assert_eq!(snapshot(&dir.join("s")), before);
    let err = refused(&irn(&["report", "s", "--out", "m"], &dir));
    assert!(
        err.contains("IRN/summary.json: changed since irn wrote it, so its numbers may not be"),
        "{err}"
    );
    assert!(!dir.join("m").exists());

    let check = format!("{TINY}\n[[check]]\nnum = \"IRN\"\nden = \"RoCE+PFC\"\nmetric = \"avg_fct_us\"\nexpect = \"below\"\n");
    std::fs::write(dir.join("c.toml"), check).unwrap();
    let status = irn(&["check", "c.toml", "--out", "c"], &dir).status.code();
    assert!(matches!(status, Some(0 | 1)), "{status:?}");
    append("c/tiny/100us/all/RoCE+PFC/flows.csv");
    let before = snapshot(&dir.join("c"));
    let err = refused(&irn(&["check", "c.toml", "--out", "c"], &dir));
    assert!(
        err.contains("RoCE+PFC/flows.csv: changed since irn wrote it"),
        "{err}"
    );
    assert_eq!(snapshot(&dir.join("c")), before);
}

#[test]
fn a_signal_leaves_no_temporary_folder_behind() {
    let dir = scratch("signal");
    // Long enough to still be running when the signal comes: 50 ms of traffic on 16 hosts.
    let long = TINY
        .replace("kind = \"star\"\nhosts = 4", "kind = \"fat-tree\"\nk = 4")
        .replace("\"100us\"", "\"50ms\"");
    std::fs::write(dir.join("long.toml"), long).unwrap();
    for signal in ["-INT", "-TERM"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_irn"))
            .args(["run", "long.toml", "--out", "r", "-j", "1"])
            .current_dir(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let tmp = dir.join(format!(".r.tmp-{}", child.id()));
        let started = Instant::now();
        while !tmp.exists() {
            assert!(started.elapsed() < Duration::from_secs(30), "no {tmp:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(300));
        let kill = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(130), "{signal}: {status:?}");
        assert!(
            temporaries(&dir).is_empty(),
            "{signal}: {:?}",
            temporaries(&dir)
        );
        assert!(!dir.join("r").exists());
    }
}

#[test]
fn stale_temporaries_of_dead_processes_go_and_live_ones_stay() {
    let dir = scratch("stale");
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();
    let dead = dead_pid();
    let live = std::process::id();
    let names = [
        format!(".r.tmp-{dead}"),
        format!(".r.tmp-{live}"),
        format!(".other.tmp-{dead}"),
        format!(".r.tmp-{dead}x"),
    ];
    for name in &names {
        std::fs::create_dir_all(dir.join(name).join("IRN")).unwrap();
    }
    ok(&irn(&["run", "tiny.toml", "--out", "r"], &dir));
    let mut left = temporaries(&dir);
    left.sort();
    let mut kept = names[1..].to_vec();
    kept.sort();
    assert_eq!(left, kept, "only the dead process's `.r.tmp-` goes");
}

fn summary(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn an_edited_sweep_reruns_exactly_the_runs_that_changed() {
    let dir = scratch("edited");
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();
    std::fs::write(dir.join("sweep.toml"), SWEEP).unwrap();
    let sweep = |extra: &[&str]| {
        let args = [&["sweep", "sweep.toml", "--out", "s"][..], extra].concat();
        ok(&irn(&args, &dir))
    };
    let first = sweep(&[]);
    assert!(
        first.contains("4 runs, 4 in this shard, 0 already done, 4 to run"),
        "{first}"
    );
    let irn_run = dir.join("s/workload.load_0.3/IRN/summary.json");
    let roce_run = dir.join("s/workload.load_0.3/RoCE+PFC/summary.json");
    let irn_before = std::fs::read(&irn_run).unwrap();
    // One variant edited: its two runs rerun, the other variant's two are reused as they are.
    std::fs::write(
        dir.join("tiny.toml"),
        TINY.replace(
            "\"switch.pfc\" = true",
            "\"switch.pfc\" = true, \"switch.buffer\" = \"120KB\"",
        ),
    )
    .unwrap();
    let edited = sweep(&[]);
    assert!(
        edited.contains(
            "2 already done, 2 to run (2 of them done before for a scenario, a data file or by an irn since changed)"
        ),
        "{edited}"
    );
    assert_eq!(std::fs::read(&irn_run).unwrap(), irn_before);
    assert_eq!(
        summary(&roce_run)["resolved_scenario"]["switch"]["buffer"],
        "120KB"
    );
    let again = sweep(&[]);
    assert!(again.contains("4 already done, 0 to run"), "{again}");
    // --fresh reruns all; --set changes every run, and then again back.
    let fresh = sweep(&["--fresh"]);
    assert!(
        fresh.contains("0 already done, 4 to run (4 of them done before: --fresh)"),
        "{fresh}"
    );
    let set = sweep(&["--set", "workload.duration=80us"]);
    assert!(set.contains("0 already done, 4 to run"), "{set}");
    assert_eq!(
        summary(&irn_run)["resolved_scenario"]["workload"]["duration"],
        "80us"
    );
    let csv = std::fs::read_to_string(dir.join("s/sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 5, "{csv}");
    // A grid key cannot also be --set: the points would all be the same run.
    let err = refused(&irn(
        &[
            "sweep",
            "sweep.toml",
            "--out",
            "s",
            "--set",
            "workload.load=0.5",
        ],
        &dir,
    ));
    assert!(
        err.contains("--set workload.load=0.5: sweep.toml varies `workload.load` in [grid]"),
        "{err}"
    );
    // Nor may reproduce be told its own window.
    let err = refused(&irn(
        &[
            "reproduce",
            "fig02",
            "--quick",
            "--set",
            "workload.duration=1ms",
        ],
        &dir,
    ));
    assert!(
        err.contains("reproduce sets `workload.duration` itself"),
        "{err}"
    );
}

#[test]
fn report_merges_only_shards_of_one_sweep_and_writes_nothing_otherwise() {
    let dir = scratch("shards");
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();
    std::fs::write(dir.join("sweep.toml"), SWEEP).unwrap();
    // The same grid over a shorter workload: another sweep.
    let shorter = SWEEP.replace(
        "[grid]",
        "set = { \"workload.duration\" = \"80us\" }\n[grid]",
    );
    std::fs::write(dir.join("shorter.toml"), shorter).unwrap();
    let sweep = |args: &[&str]| ok(&irn(&[&["sweep"][..], args].concat(), &dir));
    sweep(&["sweep.toml", "--out", "s0", "--shard", "0/2"]);
    sweep(&["shorter.toml", "--out", "s1", "--shard", "1/2"]);
    sweep(&["sweep.toml", "--out", "whole"]);
    let before = snapshot(&dir);
    // Shards of different scenarios: both folders and the differing key named.
    let err = refused(&irn(&["report", "s0", "s1", "--out", "merged"], &dir));
    assert!(
        err.contains("s0 and s1 hold different sweeps") && err.contains("IRN.workload.duration"),
        "{err}"
    );
    // A folder that is not a sweep: a parent of run folders, and a run folder.
    ok(&irn(&["run", "tiny.toml", "--out", "runs/r"], &dir));
    let before_runs = snapshot(&dir);
    for not_sweep in ["runs", "runs/r"] {
        let err = refused(&irn(&["report", not_sweep], &dir));
        assert!(
            err.contains(&format!("{not_sweep}: not a sweep results folder")),
            "{err}"
        );
    }
    assert_eq!(snapshot(&dir), before_runs);
    std::fs::remove_dir_all(dir.join("runs")).unwrap();
    assert_eq!(snapshot(&dir), before, "a refused report writes nothing");
    // The same run in two folders: identical results are one row, different ones refused.
    let merged = ok(&irn(&["report", "s0", "whole", "--out", "merged"], &dir));
    assert!(merged.contains("merged/sweep.csv: 4 runs"), "{merged}");
    let tampered = dir.join("whole/workload.load_0.3/IRN/summary.json");
    let mut v = summary(&tampered);
    v["metrics"]["avg_slowdown"] = 99.0.into();
    std::fs::write(&tampered, v.to_string()).unwrap();
    let csv = std::fs::read(dir.join("merged/sweep.csv")).unwrap();
    let err = refused(&irn(&["report", "s0", "whole", "--out", "merged"], &dir));
    assert!(
        err.contains("whole/workload.load_0.3/IRN/summary.json: changed since irn wrote it"),
        "{err}"
    );
    // Without the marker's checksums (an irn before them), the two results differ.
    let marker = dir.join("whole/workload.load_0.3/IRN/.irn-results");
    let mut m = summary(&marker);
    m.as_object_mut().unwrap().remove("checksums");
    std::fs::write(&marker, m.to_string()).unwrap();
    let err = refused(&irn(&["report", "s0", "whole", "--out", "merged"], &dir));
    assert!(
        err.contains(
            "s0/workload.load_0.3/IRN and whole/workload.load_0.3/IRN hold different results"
        ),
        "{err}"
    );
    assert_eq!(std::fs::read(dir.join("merged/sweep.csv")).unwrap(), csv);
}

/// A command writes into an irn folder only when the same kind of command wrote it: a run's
/// folder takes no sweep tables or sweep points, a sweep's root is not replaced by a run, and
/// so on. Each refusal comes before anything runs, names the folder and the command that wrote
/// it, and leaves the folder as it was; the kinds that go together still do.
#[test]
fn a_folder_of_another_kind_of_command_is_refused() {
    let dir = scratch("kinds");
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();
    std::fs::write(dir.join("sweep.toml"), SWEEP).unwrap();
    let check = format!("{TINY}\n[[check]]\nnum = \"IRN\"\nden = \"RoCE+PFC\"\nmetric = \"avg_fct_us\"\nexpect = \"below\"\n");
    std::fs::write(dir.join("c.toml"), check).unwrap();
    ok(&irn(&["run", "tiny.toml", "--out", "runA"], &dir));
    ok(&irn(&["sweep", "sweep.toml", "--out", "sw"], &dir));
    let run_holds = "holds the results of `irn run`;";
    let sweep_holds = "sw: holds the results of `irn sweep`;";
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["report", "sw", "--out", "runA"],
            "runA",
            "`irn report` writes only into a new folder or one `irn report` or `irn sweep` wrote: \
             choose another --out",
        ),
        (
            &["sweep", "sweep.toml", "--out", "runA"],
            "runA",
            "`irn sweep` writes only into a new folder or one `irn sweep` wrote",
        ),
        (
            &["run", "tiny.toml", "--out", "sw"],
            "sw",
            "`irn run` writes only into a new folder or one `irn run` wrote",
        ),
        (
            &["run", "tiny.toml", "--out", "sw/workload.load_0.3/IRN"],
            "sw/workload.load_0.3/IRN",
            "holds one run of `irn sweep`; `irn run` writes only into",
        ),
        (
            &["report", "sw", "--out", "sw/workload.load_0.3/IRN"],
            "sw/workload.load_0.3/IRN",
            "holds one run of `irn sweep`; `irn report` writes only into",
        ),
        (
            &["check", "c.toml", "--out", "sw"],
            "sw",
            "`irn check` writes only into a new folder or one `irn check` wrote",
        ),
        (
            &["reproduce", "fig02", "--quick", "--out", "runA"],
            "runA",
            "`irn reproduce` writes only into a new folder or one `irn reproduce` wrote",
        ),
    ];
    for (args, folder, expected) in cases {
        let before = snapshot(&dir.join(folder));
        let out = irn(args, &dir);
        let err = refused(&out);
        assert!(out.stdout.is_empty(), "{args:?}: refused before running");
        assert!(err.contains(expected), "{args:?}: {err}");
        let holds = if folder.starts_with("sw/") {
            format!("{folder}: holds one run of `irn sweep`;")
        } else if *folder == "sw" {
            sweep_holds.to_string()
        } else {
            format!("{folder}: {run_holds}")
        };
        assert!(err.contains(&holds), "{args:?}: {err}");
        assert_eq!(
            snapshot(&dir.join(folder)),
            before,
            "{args:?} changed the folder"
        );
    }
    assert!(!dir.join("runA/sweep.csv").exists());
    // A run of check's (reproduce's kind) is no root for either command.
    let status = irn(&["check", "c.toml", "--out", "c"], &dir).status.code();
    assert!(matches!(status, Some(0 | 1)), "{status:?}");
    let run = "c/tiny/100us/all/IRN";
    let before = snapshot(&dir.join(run));
    for (command, says) in [
        (
            &["reproduce", "fig02", "--quick", "--out", run][..],
            "not a whole reproduction's folder",
        ),
        (
            &["check", "c.toml", "--out", run],
            "`irn check` writes only into a new folder",
        ),
    ] {
        let err = refused(&irn(command, &dir));
        let holds = format!("{run}: holds one run of `irn reproduce` or `irn check`");
        assert!(
            err.contains(&holds) && err.contains(says),
            "{command:?}: {err}"
        );
    }
    assert_eq!(snapshot(&dir.join(run)), before);
    // Merged tables go into a sweep's root or a folder `irn report` wrote, again and again;
    // `irn plot` draws into any of them.
    ok(&irn(&["report", "sw"], &dir));
    ok(&irn(&["report", "sw", "--out", "merged"], &dir));
    ok(&irn(&["report", "sw", "--out", "merged"], &dir));
    let err = refused(&irn(&["sweep", "sweep.toml", "--out", "merged"], &dir));
    assert!(
        err.contains("merged: holds the results of `irn report`; `irn sweep` writes only"),
        "{err}"
    );
    for folder in ["runA", "sw", "merged"] {
        ok(&irn(&["plot", folder], &dir));
    }
}
