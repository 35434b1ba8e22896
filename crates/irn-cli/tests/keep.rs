//! irn never loses a file it did not write: a rerun keeps a person's files inside its results
//! folder, input files inside `--out` are protected, one writer at a time per folder, names
//! that would share (or lack) a folder are refused up front, gen-flows and topology overwrite
//! only their own files, and a symbolic link given as `--out` stays a link. Each test runs the
//! `irn` binary on tiny scenarios.

mod common;

use common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One variant on four hosts for 100 us.
fn single() -> String {
    TINY.split("[[compare]]").next().unwrap().to_string()
}

fn write(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Names in `dir` that look like irn's temporaries or locks.
fn leftovers(dir: &Path) -> Vec<String> {
    names_in(dir, |n| {
        n.contains(".tmp-") || n.contains(".old-") || n.ends_with(".irn-lock")
    })
}

#[test]
fn a_name_without_a_folder_of_its_own_is_refused_before_anything_runs() {
    let dir = scratch("names");
    // `results/` already holds a run and the user's file.
    write(&dir.join("tiny.toml"), TINY);
    ok(&irn(&["run", "tiny.toml"], &dir));
    write(&dir.join("results/mine.txt"), "mine");
    for (name, expected) in [
        ("", "name = \"\": its folder name is empty"),
        (".", "name = \".\": its folder name `.` starts with `.`"),
        ("..", "name = \"..\": its folder name `..` starts with `.`"),
    ] {
        let text = TINY.replace("name = \"tiny\"", &format!("name = {name:?}"));
        write(&dir.join("bad.toml"), &text);
        let out = irn(&["run", "bad.toml"], &dir);
        let err = refused(&out);
        assert!(err.contains(&format!("bad.toml: {expected}")), "{err}");
        // Refused before running: no table.
        assert!(
            out.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    assert_eq!(read(&dir.join("results/mine.txt")), "mine");
    assert!(dir.join("results/tiny/IRN/summary.json").is_file());
    // The same for a sweep's name, which names its folder the same way.
    write(
        &dir.join("sweep.toml"),
        "name = \"\"\nscenario = \"tiny.toml\"\n[grid]\n\"workload.load\" = [0.3]\n",
    );
    let err = refused(&irn(&["sweep", "sweep.toml"], &dir));
    assert!(
        err.contains("sweep.toml: name = \"\": its folder name is empty"),
        "{err}"
    );
}

/// `irn validate` refuses the names `irn run` refuses, with the same error: a scenario that
/// validates is one that runs.
#[test]
fn validate_refuses_what_run_refuses_with_the_same_error() {
    let dir = scratch("validate-names");
    let set_name = |name: &str| single().replace("name = \"tiny\"", &format!("name = {name:?}"));
    let cases: [(String, &[&str], &str); 6] = [
        (
            set_name(""),
            &[],
            "bad.toml: name = \"\": its folder name is empty",
        ),
        (
            set_name("."),
            &[],
            "bad.toml: name = \".\": its folder name `.` starts with `.`",
        ),
        (
            set_name(".hidden"),
            &[],
            "name = \".hidden\": its folder name `.hidden` starts",
        ),
        (
            single(),
            &["--set", "name=\"../../etc\""],
            "bad.toml: name = \"../../etc\": its folder name `.._.._etc` starts with `.`",
        ),
        (
            set_name("a\nb"),
            &[],
            "bad.toml: name = \"a\\nb\": holds the control character U+000A",
        ),
        (
            TINY.replace("name = \"IRN\"", "name = \"..\""),
            &[],
            "bad.toml: [[compare]] name = \"..\"",
        ),
    ];
    for (text, set, want) in cases {
        write(&dir.join("bad.toml"), &text);
        let run = refused(&irn(&[&["run", "bad.toml"][..], set].concat(), &dir));
        assert!(run.contains(want), "{run}");
        let validate = refused(&irn(&[&["validate", "bad.toml"][..], set].concat(), &dir));
        assert_eq!(validate, run);
    }
    assert!(!dir.join("results").exists());
}

/// A name too long for a folder is refused, echoed by its start; given `--out`, where it needs
/// no folder, it runs and its table prints.
#[test]
fn a_very_long_name_is_refused_for_a_folder_and_runs_into_out() {
    let dir = scratch("long-name");
    let long = "x".repeat(65_536);
    write(
        &dir.join("long.toml"),
        &single().replace("name = \"tiny\"", &format!("name = \"{long}\"")),
    );
    let err = refused(&irn(&["validate", "long.toml"], &dir));
    assert!(
        err.contains("… (65536 characters): its folder name is 65536 bytes long, and a folder name has at most 255")
            && err.len() < 500,
        "{err}"
    );
    let out = ok(&irn(&["run", "long.toml", "--out", "r"], &dir));
    assert!(out.contains(&long), "the table names the run");
    assert!(dir.join("r/summary.json").is_file());
}

#[test]
fn a_rerun_replaces_irns_files_and_keeps_everything_else_where_it_is() {
    let dir = scratch("rerun");
    write(&dir.join("tiny.toml"), TINY);
    ok(&irn(&["run", "tiny.toml", "--out", "r"], &dir));
    ok(&irn(&["plot", "r"], &dir));
    assert!(dir.join("r/report.html").is_file());
    // The user's files beside the results, in a variant's folder, in plots/, and a folder.
    let mine = [
        "analysis.txt",
        "notebook/analysis.ipynb",
        "IRN/notes.md",
        "RoCE+PFC/notes.md",
        "plots/mine.svg",
    ];
    for name in mine {
        write(&dir.join("r").join(name), name);
    }
    // The rerun has one variant: its files go to the top, the variants' folders go, but for
    // what the user put in them.
    write(&dir.join("tiny.toml"), &single());
    ok(&irn(&["run", "tiny.toml", "--out", "r"], &dir));
    for name in mine {
        assert_eq!(read(&dir.join("r").join(name)), name, "{name}");
    }
    assert!(dir.join("r/summary.json").is_file());
    assert!(!dir.join("r/IRN/summary.json").exists());
    assert!(!dir.join("r/comparison.csv").exists());
    assert!(
        !dir.join("r/report.html").exists(),
        "irn plot's report goes"
    );
    let svgs: Vec<String> = std::fs::read_dir(dir.join("r/plots"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut svgs = svgs;
    svgs.sort();
    assert_eq!(svgs, [".irn-results", "mine.svg"], "irn plot's charts go");
    // And back to two variants: the user's notes are where they were, beside new results.
    write(&dir.join("tiny.toml"), TINY);
    ok(&irn(&["run", "tiny.toml", "--out", "r"], &dir));
    ok(&irn(&["plot", "r"], &dir));
    for name in mine {
        assert_eq!(read(&dir.join("r").join(name)), name, "{name}");
    }
    assert!(dir.join("r/IRN/summary.json").is_file());
    assert!(dir.join("r/comparison.csv").is_file());
    // A file of the user's where irn now writes one of its own: refused, nothing changed.
    write(&dir.join("r/IRN/trace.csv"), "mine");
    let out = irn(
        &["run", "tiny.toml", "--out", "r", "--trace-flow", "0"],
        &dir,
    );
    let err = refused(&out);
    assert!(out.stdout.is_empty(), "refused before running");
    assert!(
        err.contains("r: holds IRN/trace.csv, which irn did not write and which irn would write"),
        "{err}"
    );
    assert_eq!(read(&dir.join("r/IRN/trace.csv")), "mine");
    // Files irn adds to a folder replace only its own of the same name.
    write(
        &dir.join("sweep.toml"),
        "name = \"s\"\nscenario = \"tiny.toml\"\n[grid]\n\"workload.load\" = [0.3]\n",
    );
    ok(&irn(&["sweep", "sweep.toml", "--out", "s"], &dir));
    // A folder `irn report` wrote, holding a table of the user's beside irn's marker.
    write(
        &dir.join("m/.irn-results"),
        r#"{"written_by": "report", "irn_version": "0", "files": []}"#,
    );
    write(&dir.join("m/sweep.csv"), "mine");
    let err = refused(&irn(&["report", "s", "--out", "m"], &dir));
    assert!(err.contains("m/sweep.csv: irn did not write it"), "{err}");
    assert_eq!(read(&dir.join("m/sweep.csv")), "mine");
    ok(&irn(&["report", "s", "--out", "s"], &dir));
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
}

#[test]
fn a_replacement_cut_short_is_finished_or_undone_by_the_next_command() {
    let dir = scratch("cut-short");
    write(&dir.join("tiny.toml"), &single());
    ok(&irn(&["run", "tiny.toml", "--out", "r"], &dir));
    let dead = dead_pid();
    // Killed after moving the user's file into the new folder, before swapping: undone.
    let tmp = dir.join(format!(".r.tmp-{dead}"));
    write(
        &tmp.join(".irn-results"),
        r#"{"written_by": "run", "irn_version": "0", "files": ["summary.json"]}"#,
    );
    write(&tmp.join("summary.json"), "{}");
    write(&tmp.join("mine.txt"), "mine");
    // Killed between moving the old folder aside and the new one in: finished.
    let tmp = dir.join(format!(".q.tmp-{dead}"));
    write(
        &tmp.join(".irn-results"),
        r#"{"written_by": "run", "irn_version": "0", "files": ["summary.json"]}"#,
    );
    write(&tmp.join("summary.json"), "{}");
    write(&tmp.join("mine.txt"), "mine too");
    write(
        &dir.join(format!(".q.old-{dead}/.irn-results")),
        r#"{"written_by": "run", "irn_version": "0", "files": ["flows.csv"]}"#,
    );
    write(&dir.join(format!(".q.old-{dead}/flows.csv")), "old");
    ok(&irn(&["run", "tiny.toml", "--out", "r"], &dir));
    assert_eq!(read(&dir.join("r/mine.txt")), "mine");
    ok(&irn(&["run", "tiny.toml", "--out", "q"], &dir));
    assert_eq!(read(&dir.join("q/mine.txt")), "mine too");
    assert!(dir.join("q/flows.csv").is_file());
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
}

#[test]
fn every_file_the_scenario_reads_is_protected() {
    let dir = scratch("inputs");
    write(&dir.join("tiny.toml"), &single());
    ok(&irn(&["run", "tiny.toml", "--out", "r"], &dir));
    // A trace kept in irn's results folder, read by another scenario run into that folder.
    let csv = "src,dst,size_bytes,start_ns\n0,1,10000,0\n2,3,5000,1000\n";
    write(&dir.join("r/flows-in.csv"), csv);
    let traced = single().replace(
        "kind = \"poisson\"\nload = 0.5\nduration = \"100us\"",
        "kind = \"trace\"\nfile = \"r/flows-in.csv\"",
    );
    write(&dir.join("traced.toml"), &traced);
    ok(&irn(&["validate", "traced.toml"], &dir));
    let err = refused(&irn(&["run", "traced.toml", "--out", "r"], &dir));
    assert!(
        err.contains("r: holds r/flows-in.csv, which this command reads"),
        "{err}"
    );
    assert_eq!(read(&dir.join("r/flows-in.csv")), csv);
    // The same through --set, and in a sweep's run folder.
    let err = refused(&irn(
        &[
            "run",
            "tiny.toml",
            "--out",
            "r",
            "--set",
            "workload={kind=\"trace\",file=\"r/flows-in.csv\"}",
        ],
        &dir,
    ));
    assert!(err.contains("which this command reads"), "{err}");
    assert_eq!(read(&dir.join("r/flows-in.csv")), csv);
}

#[test]
fn a_second_writer_of_a_folder_is_refused_naming_the_first() {
    let dir = scratch("lock");
    write(&dir.join("tiny.toml"), TINY);
    write(
        &dir.join("sweep.toml"),
        "name = \"s\"\nscenario = \"tiny.toml\"\n[grid]\n\"workload.load\" = [0.3]\n",
    );
    let check = format!(
        "{TINY}\n[[check]]\nnum = \"IRN\"\nden = \"RoCE+PFC\"\nmetric = \"avg_fct_us\"\n\
         paper = \"x\"\nexpect = \"above\"\n"
    );
    write(&dir.join("check.toml"), &check);
    ok(&irn(&["run", "tiny.toml", "--out", "r"], &dir));
    ok(&irn(&["sweep", "sweep.toml", "--out", "s"], &dir));
    // A live holder (this test's own process) of `r`'s lock, and of `s`'s.
    let me = std::process::id();
    write(
        &dir.join(".r.irn-lock"),
        &format!("{me}\nirn run x.toml --out r\n"),
    );
    write(
        &dir.join(".s.irn-lock"),
        &format!("{me}\nirn sweep sweep.toml --out s\n"),
    );
    let cases: &[(&[&str], &str)] = &[
        (&["run", "tiny.toml", "--out", "r"], "r: is being written"),
        (&["run", "tiny.toml", "--out", "s/x"], "s/x: is inside "),
        (
            &["sweep", "sweep.toml", "--out", "s"],
            "s: is being written",
        ),
        (&["report", "s", "--out", "s"], "s: is being written"),
        (&["plot", "r"], "r: is being written"),
        (
            &["reproduce", "fig02", "--quick", "--out", "s/fig"],
            "s/fig: is inside ",
        ),
        (
            &["check", "check.toml", "--out", "r"],
            "r: is being written",
        ),
    ];
    let before = std::fs::read(dir.join("r/IRN/summary.json")).unwrap();
    for (args, expected) in cases {
        let err = refused(&irn(args, &dir));
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(
            err.contains(&format!("by irn process {me} (`irn ")),
            "{err}"
        );
    }
    assert_eq!(
        std::fs::read(dir.join("r/IRN/summary.json")).unwrap(),
        before
    );
    // A lock whose process is gone is cleared.
    write(
        &dir.join(".r.irn-lock"),
        &format!("{}\nirn run\n", dead_pid()),
    );
    ok(&irn(&["run", "tiny.toml", "--out", "r"], &dir));
    assert!(!dir.join(".r.irn-lock").exists());
    // A real second writer while a sweep runs; the sweep's lock goes with its signal.
    std::fs::remove_file(dir.join(".s.irn-lock")).unwrap();
    let long = TINY
        .replace("kind = \"star\"\nhosts = 4", "kind = \"fat-tree\"\nk = 4")
        .replace("\"100us\"", "\"50ms\"");
    write(&dir.join("tiny.toml"), &long);
    let mut sweep = Command::new(env!("CARGO_BIN_EXE_irn"))
        .args(["sweep", "sweep.toml", "--out", "s", "-j", "1", "--fresh"])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !dir.join(".s.irn-lock").exists() {
        assert!(started.elapsed() < Duration::from_secs(30), "no lock");
        std::thread::sleep(Duration::from_millis(20));
    }
    let err = refused(&irn(&["run", "tiny.toml", "--out", "s"], &dir));
    assert!(
        err.contains(&format!(
            "s: is being written by irn process {}",
            sweep.id()
        )) && err.contains("`irn sweep sweep.toml --out s -j 1 --fresh`"),
        "{err}"
    );
    let kill = Command::new("kill")
        .args(["-TERM", &sweep.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    assert_eq!(sweep.wait().unwrap().code(), Some(130));
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
    assert!(dir.join("s/workload.load_0.3/IRN/summary.json").is_file());
}

#[test]
fn names_that_share_a_folder_are_refused_naming_both() {
    let dir = scratch("collide");
    let twins = TINY
        .replace("name = \"IRN\"", "name = \"a/b\"")
        .replace("name = \"RoCE+PFC\"", "name = \"a_b\"");
    write(&dir.join("twins.toml"), &twins);
    let err = refused(&irn(&["run", "twins.toml", "--out", "r"], &dir));
    assert!(
        err.contains(
            "error: twins.toml: [[compare]] names `a/b` and `a_b` both make the folder `a_b`"
        ),
        "{err}"
    );
    assert!(!dir.join("r").exists());
    assert_eq!(refused(&irn(&["validate", "twins.toml"], &dir)), err);
    write(&dir.join("tiny.toml"), TINY);
    let sweep = |grid: &str| {
        let text = format!("name = \"s\"\nscenario = \"tiny.toml\"\n[grid]\n{grid}\n");
        write(&dir.join("sweep.toml"), &text);
        refused(&irn(&["sweep", "sweep.toml", "--out", "s"], &dir))
    };
    let err = sweep("\"name\" = [\"a/b\", \"a_b\"]");
    assert!(
        err.contains(
            "sweep.toml: the [grid] points `name=\"a/b\"` and `name=\"a_b\"` both make the \
             folder `name_a_b`"
        ),
        "{err}"
    );
    let err = sweep("\"workload.load\" = [0.3, 0.5, 0.3]");
    assert!(
        err.contains("sweep.toml: [grid] \"workload.load\" = [0.3, 0.5, 0.3]: 0.3 is there twice"),
        "{err}"
    );
    for (grid, said) in [
        (
            "\"switch.buffer\" = [\"1MB\", \"1000KB\"]",
            "\"switch.buffer\" = [\"1MB\", \"1000KB\"]: \"1MB\" and \"1000KB\" are the same value",
        ),
        (
            "\"workload.duration\" = [\"10us\", \"10000 ns\"]",
            "\"10us\" and \"10000 ns\" are the same value",
        ),
        ("\"seed\" = [1, 1.0]", "1 and 1.0 are the same value"),
    ] {
        let err = sweep(grid);
        assert!(err.contains(said), "{err}");
    }
    let err = sweep(&format!("\"name\" = [\"{}\"]", "x".repeat(300)));
    assert!(
        err.contains("makes a folder name of 305 bytes, and a folder name has at most 255"),
        "{err}"
    );
    write(&dir.join("tiny.toml"), &twins);
    let err = sweep("\"workload.load\" = [0.3]");
    assert!(
        err.contains("tiny.toml: [[compare]] names `a/b` and `a_b` both make the folder"),
        "{err}"
    );
    assert!(!dir.join("s").exists());
}

#[test]
fn gen_flows_and_topology_overwrite_only_their_own_files() {
    let dir = scratch("own-files");
    write(&dir.join("tiny.toml"), &single());
    let flows = |force: bool| {
        let mut args = vec![
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
            "flows.txt",
        ];
        if force {
            args.push("--force");
        }
        irn(&args, &dir)
    };
    let topology = |force: bool| {
        let mut args = vec!["topology", "tiny.toml", "-o", "topo.txt"];
        if force {
            args.push("--force");
        }
        irn(&args, &dir)
    };
    // The user's own ns-3 files, valid ones: refused all the same.
    let mine_flows = "1\n0 1 3 100 0.000001\n";
    write(&dir.join("flows.txt"), mine_flows);
    let err = refused(&flows(false));
    assert!(
        err.contains("flows.txt: exists and irn did not write it") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(read(&dir.join("flows.txt")), mine_flows);
    ok(&topology(false));
    let ours = read(&dir.join("topo.txt"));
    let mine_topo = ours.clone() + "\n";
    write(&dir.join("topo.txt"), &mine_topo);
    let err = refused(&topology(false));
    assert!(
        err.contains("topo.txt: exists and irn did not write it"),
        "{err}"
    );
    assert_eq!(read(&dir.join("topo.txt")), mine_topo);
    // --force overwrites; then the file is irn's and is replaced without it.
    ok(&flows(true));
    ok(&topology(true));
    assert_ne!(read(&dir.join("flows.txt")), mine_flows);
    assert_eq!(read(&dir.join("topo.txt")), ours);
    assert!(dir.join(".flows.txt.irn").is_file());
    ok(&flows(false));
    ok(&topology(false));
}

#[cfg(unix)]
#[test]
fn a_symlink_given_as_out_stays_a_link() {
    let dir = scratch("symlink");
    write(&dir.join("tiny.toml"), &single());
    ok(&irn(&["run", "tiny.toml", "--out", "real"], &dir));
    write(&dir.join("real/mine.txt"), "mine");
    std::os::unix::fs::symlink("real", dir.join("r")).unwrap();
    let out = ok(&irn(&["run", "tiny.toml", "--out", "r"], &dir));
    assert!(out.contains("results: "), "{out}");
    let link = std::fs::symlink_metadata(dir.join("r")).unwrap();
    assert!(link.file_type().is_symlink());
    assert!(dir.join("real/summary.json").is_file());
    assert_eq!(read(&dir.join("real/mine.txt")), "mine");
    // A link to nothing is refused; a sweep writes through a link too.
    std::os::unix::fs::symlink("nowhere", dir.join("dangling")).unwrap();
    let err = refused(&irn(&["run", "tiny.toml", "--out", "dangling"], &dir));
    assert!(
        err.contains("dangling: is a symbolic link to nowhere, which does not exist"),
        "{err}"
    );
    std::fs::create_dir(dir.join("sweep-real")).unwrap();
    std::os::unix::fs::symlink("sweep-real", dir.join("s")).unwrap();
    write(
        &dir.join("sweep.toml"),
        "name = \"s\"\nscenario = \"tiny.toml\"\n[grid]\n\"workload.load\" = [0.3]\n",
    );
    ok(&irn(&["sweep", "sweep.toml", "--out", "s"], &dir));
    ok(&irn(
        &["sweep", "sweep.toml", "--out", "s", "--fresh"],
        &dir,
    ));
    assert!(std::fs::symlink_metadata(dir.join("s"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(dir
        .join("sweep-real/workload.load_0.3/tiny/summary.json")
        .is_file());
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
}
