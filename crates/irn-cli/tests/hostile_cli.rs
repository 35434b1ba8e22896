//! What a hostile or careless user gives the commands that read results and sweep files: each
//! is a clear error naming the file and what is wrong, never a silent success.

mod common;

use common::{irn, ok, refused, scratch, write_as_irns, TINY};

const SWEEP: &str =
    "name = \"sw\"\nscenario = \"tiny.toml\"\n[grid]\n\"workload.load\" = [0.3, 0.5]\n";

#[test]
fn a_sweep_files_set_that_names_a_grid_key_is_refused() {
    let dir = scratch("hostile-set-grid");
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();
    let text = SWEEP.replace("[grid]", "set = { \"workload.load\" = 0.9 }\n[grid]");
    std::fs::write(dir.join("sweep.toml"), text).unwrap();
    let said = refused(&irn(&["sweep", "sweep.toml"], &dir));
    assert!(
        said.contains("sweep.toml: `set` gives `workload.load`, which [grid] varies"),
        "{said}"
    );
    assert!(!dir.join("results").exists(), "nothing written");
}

#[test]
fn a_shard_that_is_not_two_whole_numbers_says_the_form() {
    let dir = scratch("hostile-shard");
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();
    std::fs::write(dir.join("sweep.toml"), SWEEP).unwrap();
    for (shard, says) in [
        ("1/x", "--shard 1/x: N = `x` is not a whole number"),
        ("a/2", "--shard a/2: I = `a` is not a whole number"),
        ("3", "--shard 3: --shard takes I/N"),
        ("2/2", "need 0 <= I < N"),
    ] {
        let said = refused(&irn(&["sweep", "sweep.toml", "--shard", shard], &dir));
        assert!(said.contains(says), "{shard}: {said}");
        assert!(
            said.contains("e.g. `--shard 0/4`") || shard == "2/2",
            "{said}"
        );
    }
}

#[test]
fn a_report_refuses_a_summary_whose_metric_is_not_a_number() {
    let dir = scratch("hostile-report");
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();
    std::fs::write(dir.join("sweep.toml"), SWEEP).unwrap();
    ok(&irn(&["sweep", "sweep.toml"], &dir));
    let path = dir.join("results/sw/workload.load_0.3/IRN/summary.json");
    let mut summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    summary["metrics"]["avg_fct_us"] = "NaN-string".into();
    write_as_irns(&path, &serde_json::to_string_pretty(&summary).unwrap());
    let said = refused(&irn(&["report", "results/sw", "--out", "merged"], &dir));
    assert!(
        said.contains("IRN/summary.json: metrics.avg_fct_us: invalid type: string \"NaN-string\""),
        "{said}"
    );
    assert!(!dir.join("merged").exists(), "nothing written");
}

#[test]
fn a_plot_refuses_a_flows_file_cut_short() {
    let dir = scratch("hostile-plot");
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();
    ok(&irn(&["run", "tiny.toml"], &dir));
    let flows = dir.join("results/tiny/IRN/flows.csv");
    let text = std::fs::read_to_string(&flows).unwrap();
    let header = text.lines().next().unwrap();
    let rows = text.lines().count() - 1;
    assert!(rows > 1, "the tiny run has flows");
    // Cut inside the header, after every column the charts read; and cut after one row.
    let inside_header = header.find("measured").unwrap() + "measured,inc".len();
    for cut in [
        inside_header,
        header.len() + 1 + text.lines().nth(1).unwrap().len() + 1,
    ] {
        std::fs::write(&flows, &text[..cut]).unwrap();
        let said = refused(&irn(&["plot", "results/tiny"], &dir));
        assert!(said.contains("flows.csv: holds"), "{said}");
        assert!(
            said.contains(&format!("flows where summary.json counts {rows}")),
            "{said}"
        );
        assert!(!dir.join("results/tiny/report.html").exists());
    }
}

#[test]
fn gen_flows_says_what_is_wrong_with_an_unusable_cdf() {
    let dir = scratch("hostile-cdf");
    for (cdf, says) in [
        ("0 0\n0 100\n", "--cdf c.txt: every size in it is 0 B"),
        (
            "1000 0\n4000000000 100\n",
            "--cdf c.txt: its largest size, 4000000000 B, is above the flow-size limit",
        ),
    ] {
        std::fs::write(dir.join("c.txt"), cdf).unwrap();
        let args = [
            "gen-flows",
            "--cdf",
            "c.txt",
            "--hosts",
            "4",
            "--load",
            "0.5",
        ];
        let said = refused(&irn(&[&args[..], &["--duration", "1ms"]].concat(), &dir));
        assert!(said.contains(says), "{said}");
        assert!(
            !said.contains("lengthen"),
            "a longer trace cannot help: {said}"
        );
    }
}

#[test]
fn a_sweep_file_that_is_a_fifo_or_a_device_is_refused_not_read() {
    let dir = scratch("hostile-fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(dir.join("sweep.toml"))
        .status();
    if !made.is_ok_and(|s| s.success()) {
        return; // no mkfifo here
    }
    let said = refused(&irn(&["sweep", "sweep.toml"], &dir));
    assert!(said.contains("sweep.toml: cannot read: a FIFO"), "{said}");
    let said = refused(&irn(&["sweep", "/dev/zero"], &dir));
    assert!(said.contains("/dev/zero: cannot read: a device"), "{said}");
}

/// A misspelt key in a file, a misspelt name from `--set` and a kind given a number: each is
/// refused before anything runs, with the name meant or the names allowed.
#[test]
fn a_misspelt_key_or_a_numbered_kind_says_what_was_meant() {
    let dir = scratch("hostile-misspelt");
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();
    std::fs::write(dir.join("laod.toml"), "[workload]\nlaod = 0.5\n").unwrap();
    let said = refused(&irn(&["validate", "laod.toml"], &dir));
    assert!(
        said.contains("laod.toml: TOML parse error at line 2"),
        "{said}"
    );
    assert!(
        said.contains("unknown field `laod`, expected one of `kind`, `load`"),
        "{said}"
    );
    assert!(said.contains("; did you mean `load`?"), "{said}");
    let run = |set: &str| refused(&irn(&["run", "tiny.toml", "--set", set], &dir));
    let said = run("load_balancing.kind=letflwo");
    assert!(
        said.contains("--set load_balancing.kind: unknown variant `letflwo`")
            && said.contains("; did you mean `letflow`?"),
        "{said}"
    );
    let said = run("ordering.kind=0");
    assert!(
        said.contains(
            "tiny.toml: --set ordering.kind: expected one of \"none\", \"ideal\", \
             \"static-bitmap\", \"eunomia\"; got 0"
        ),
        "{said}"
    );
    assert!(!dir.join("results").exists(), "nothing written");
}

/// A run whose set-up alone needs more memory than is left (here `ulimit -v`) is refused before
/// anything is written, with the figure and what holds most of it; `irn validate` prints it.
#[cfg(target_os = "linux")]
#[test]
fn a_run_too_large_for_the_memory_left_is_refused_before_it_writes() {
    let dir = scratch("memory");
    // 1,023 input-queued switches of 512 ports: 1.1 GB of virtual output queues.
    let scenario = "[topology]\nkind = \"leaf-spine\"\nleaves = 512\nhosts_per_leaf = 1\n\
                    spines = 511\n[workload]\nduration = \"1us\"\n";
    std::fs::write(dir.join("big.toml"), scenario).unwrap();
    let v = ok(&irn(&["validate", "big.toml"], &dir));
    let floor = "at least 1.2 GB before the first packet (1.1 GB of it the switches' queues)";
    assert!(v.contains(&format!("memory: {floor}")), "{v}");
    let limited = irn_limited(600000, &["run", "big.toml", "--out", "big"], &dir);
    let e = refused(&limited);
    assert!(
        e.contains("big.toml: `big`: needs at least 1.2 GB of memory before its first packet"),
        "{e}"
    );
    assert!(
        e.contains("left by the address-space limit (ulimit -v)"),
        "{e}"
    );
    // A sweep is refused before its first run when any of its runs cannot fit.
    let sweep = "name = \"s\"\nscenario = \"big.toml\"\n[grid]\n\"topology.spines\" = [1, 511]\n";
    std::fs::write(dir.join("sweep.toml"), sweep).unwrap();
    let limited = irn_limited(600000, &["sweep", "sweep.toml", "--out", "s"], &dir);
    let e = refused(&limited);
    assert!(
        e.contains("sweep.toml: topology.spines_511/big: needs at least 1.2 GB of memory"),
        "{e}"
    );
    let mut left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["big.toml", "sweep.toml"]);
}

/// A run that passes the memory check at set-up and then runs out (here 100,000 flows that all
/// start at once, their transport state beyond the set-up floor, under `ulimit -v`) ends with
/// one line saying so, removes what it had not finished writing, and exits with status 1.
#[cfg(target_os = "linux")]
#[test]
fn a_run_that_runs_out_of_memory_removes_its_unfinished_folder() {
    let dir = scratch("out-of-memory");
    let mut csv = String::from("src,dst,size_bytes,start_ns\n");
    for i in 0..100_000 {
        let src = i % 64;
        csv += &format!("{src},{},100000,0\n", (src + 1 + i / 64 % 63) % 64);
    }
    std::fs::write(dir.join("many.csv"), csv).unwrap();
    let scenario = "[topology]\nkind = \"star\"\nhosts = 64\n[workload]\nkind = \"trace\"\n\
                    file = \"many.csv\"\n[run]\ndrain_limit = \"1us\"\n";
    std::fs::write(dir.join("many.toml"), scenario).unwrap();
    // The address space that passes the check but not the run depends on the binary's size:
    // found by steps, from one the check refuses.
    let mut limit_kb = 100_000;
    for _ in 0..16 {
        let out = irn_limited(limit_kb, &["run", "many.toml", "--out", "many"], &dir);
        let e = String::from_utf8_lossy(&out.stderr);
        if e.contains("error: out of memory: the system refused irn") {
            assert_eq!(out.status.code(), Some(1), "{e}");
            assert!(
                e.contains(
                    "out of memory: kept nothing (many was not created), removed the \
                            unfinished .many.tmp-"
                ),
                "{e}"
            );
            let mut left: Vec<_> = (std::fs::read_dir(&dir).unwrap())
                .map(|e| e.unwrap().file_name())
                .collect();
            left.sort();
            assert_eq!(left, ["many.csv", "many.toml"]);
            return;
        }
        assert!(!out.status.success(), "ran whole under {limit_kb} kB: {e}");
        limit_kb += 40_000;
    }
    panic!("no address-space limit up to {limit_kb} kB ran out after the check");
}

/// Runs the `irn` binary with `args` in `cwd` under `ulimit -v limit_kb`.
#[cfg(target_os = "linux")]
fn irn_limited(limit_kb: u32, args: &[&str], cwd: &std::path::Path) -> std::process::Output {
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {limit_kb} && exec '{}' {}",
            env!("CARGO_BIN_EXE_irn"),
            args.join(" ")
        ))
        .current_dir(cwd)
        .output()
        .unwrap()
}
