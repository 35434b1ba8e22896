//! A closed or full terminal never costs a result: `irn … | head -1`, `| true`, `>/dev/full` and
//! `2>/dev/full` end without a panic, and every results file is written all the same.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::{scratch, TINY};

/// Where a test points a standard stream.
enum Sink {
    /// A pipe whose reader has already gone (`| head -1` after its line): every write fails
    /// with a broken pipe.
    Closed,
    /// `/dev/full`: every write fails with "no space left on device".
    Full,
    /// Captured, to read what was said.
    Kept,
}

impl Sink {
    fn stdio(&self) -> Stdio {
        match self {
            Sink::Closed => {
                let (reader, writer) = std::io::pipe().expect("a pipe");
                drop(reader);
                Stdio::from(writer)
            }
            Sink::Full => Stdio::from(std::fs::File::create("/dev/full").expect("/dev/full")),
            Sink::Kept => Stdio::piped(),
        }
    }
}

fn irn_into(args: &[&str], cwd: &Path, stdout: Sink, stderr: Sink) -> Output {
    Command::new(env!("CARGO_BIN_EXE_irn"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(stdout.stdio())
        .stderr(stderr.stdio())
        .output()
        .expect("irn runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Exit 0 or 1 as irn chose, never Rust's 101 for a panic.
fn no_panic(out: &Output) {
    assert_ne!(
        out.status.code(),
        Some(101),
        "irn panicked: {}",
        stderr(out)
    );
    assert!(!stderr(out).contains("panicked"), "{}", stderr(out));
}

#[test]
fn a_closed_pipe_ends_printing_quietly_and_the_results_are_written() {
    let dir = scratch("pipe-closed");
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();
    let run = irn_into(&["run", "tiny.toml"], &dir, Sink::Closed, Sink::Kept);
    no_panic(&run);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(
        stderr(&run),
        "",
        "a closed pipe is the reader's choice: nothing to say"
    );
    for file in ["comparison.csv", "IRN/summary.json", "RoCE+PFC/flows.csv"] {
        assert!(dir.join("results/tiny").join(file).is_file(), "{file}");
    }

    std::fs::write(
        dir.join("sweep.toml"),
        "name = \"sw\"\nscenario = \"tiny.toml\"\n[grid]\n\"workload.load\" = [0.3, 0.5]\n",
    )
    .unwrap();
    let sweep = irn_into(&["sweep", "sweep.toml"], &dir, Sink::Closed, Sink::Kept);
    no_panic(&sweep);
    assert!(sweep.status.success(), "{}", stderr(&sweep));
    assert!(dir.join("results/sw/sweep.csv").is_file());
    assert!(dir.join("results/sw/sweep_summary.csv").is_file());

    for args in [
        &["validate", "tiny.toml"][..],
        &[
            "gen-flows",
            "--hosts",
            "4",
            "--load",
            "0.5",
            "--duration",
            "1ms",
        ],
    ] {
        let mut args = args.to_vec();
        let cdf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/cdf/websearch_hpcc.txt");
        let cdf = cdf.to_str().unwrap().to_string();
        if args[0] == "gen-flows" {
            args.extend(["--cdf", &cdf]);
        }
        let out = irn_into(&args, &dir, Sink::Closed, Sink::Kept);
        no_panic(&out);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}");
    }
}

/// [`TINY`] with one check: `irn check` writes its reports whatever happens to the terminal.
fn checked() -> String {
    format!(
        "{TINY}\n[experiment]\ntitle = \"PFC\"\n\n[[check]]\nnum = \"RoCE+PFC\"\nden = \"IRN\"\n\
         metric = \"avg_fct_us\"\npaper = 1.0\nexpect = \"above\"\n"
    )
}

#[test]
fn a_closed_pipe_never_costs_a_checks_reports() {
    let dir = scratch("pipe-check");
    std::fs::write(dir.join("exp.toml"), checked()).unwrap();
    let check = irn_into(
        &["check", "exp.toml", "--out", "c"],
        &dir,
        Sink::Closed,
        Sink::Kept,
    );
    no_panic(&check);
    assert!(
        matches!(check.status.code(), Some(0 | 1)),
        "{}",
        stderr(&check)
    );
    for file in ["reproduce.json", "report.html", "report.md"] {
        assert!(
            dir.join("c").join(file).is_file(),
            "{file}: {}",
            stderr(&check)
        );
    }
}

#[test]
fn a_full_stdout_is_reported_once_and_the_results_are_written() {
    let dir = scratch("pipe-full");
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();
    let run = irn_into(&["run", "tiny.toml"], &dir, Sink::Full, Sink::Kept);
    no_panic(&run);
    assert_eq!(
        run.status.code(),
        Some(1),
        "the log is incomplete: a script must learn it"
    );
    let said = stderr(&run);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(
        said.contains("standard output") && said.contains("results files were written"),
        "{said}"
    );
    assert!(dir.join("results/tiny/IRN/summary.json").is_file());
}

#[test]
fn an_error_into_a_full_stderr_still_ends_with_a_failure_not_a_panic() {
    let dir = scratch("pipe-stderr");
    for stderr_sink in [Sink::Full, Sink::Closed] {
        let out = irn_into(&["run", "nope.toml"], &dir, Sink::Kept, stderr_sink);
        no_panic(&out);
        assert_eq!(out.status.code(), Some(1));
    }
}

/// A command that writes no results files says only that its printed output is incomplete:
/// `irn validate` into a full device, and help, which is all `irn --help` does, fails rather
/// than ending well with nothing printed.
#[test]
fn a_full_stdout_is_an_error_even_for_commands_that_write_no_files() {
    let dir = scratch("pipe-full-print");
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();
    for args in [
        &["validate", "tiny.toml"][..],
        &["--help"],
        &["run", "--help"],
        &["--version"],
    ] {
        let out = irn_into(args, &dir, Sink::Full, Sink::Kept);
        no_panic(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            "error: standard output: No space left on device (os error 28); the printed \
             output is incomplete\n",
            "{args:?}"
        );
    }
    // Help into a closed pipe (`irn --help | head -1`) is the reader's choice.
    let out = irn_into(&["--help"], &dir, Sink::Closed, Sink::Kept);
    assert!(
        out.status.success() && stderr(&out).is_empty(),
        "{}",
        stderr(&out)
    );
}
