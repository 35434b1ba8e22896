//! `[monitor]` beyond `irn run` (issue 21): a sweep's and an `irn check`'s runs write their
//! `series/*.csv` in their own folders, as `irn run` does, streamed inside the staging folder;
//! a resumed sweep keeps them; the reports draw them. Each run is 50 µs of a tiny scenario.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

/// The common tiny scenario with 50 µs of arrivals, sampled every 5 µs.
fn monitored() -> String {
    TINY.replace(
        "duration = \"100us\"",
        "duration = \"50us\"\n\n[monitor]\ninterval = \"5us\"",
    )
}

const VARIANTS: [&str; 2] = ["IRN", "RoCE+PFC"];

/// A load that queues (its report has a queue chart) and one that barely does.
const SWEEP: &str =
    "name = \"loads\"\nscenario = \"tiny.toml\"\n[grid]\n\"workload.load\" = [0.9, 0.5]\n";
const POINTS: [&str; 2] = ["workload.load_0.9", "workload.load_0.5"];

/// The files `[monitor]` selects by default.
const FILES: [&str; 2] = ["ports.csv", "nics.csv"];

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn modified(path: &Path) -> SystemTime {
    std::fs::metadata(path).unwrap().modified().unwrap()
}

/// Names below `dir` (hidden ones too) that look like irn's temporaries.
fn temporaries(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().contains(".tmp-") {
            found.push(path.clone());
        }
        if path.is_dir() {
            found.extend(temporaries(&path));
        }
    }
    found
}

#[test]
fn a_monitored_sweep_writes_each_runs_series_as_irn_run_does_and_keeps_them_on_resume() {
    let dir = scratch("monitor-sweep");
    std::fs::write(dir.join("tiny.toml"), monitored()).unwrap();
    std::fs::write(dir.join("sweep.toml"), SWEEP).unwrap();
    ok(&irn(
        &["sweep", "sweep.toml", "--out", "s", "-j", "2"],
        &dir,
    ));
    // `irn run` of the first point: the same resolved scenario, so the same series.
    ok(&irn(
        &[
            "run",
            "tiny.toml",
            "--set",
            "workload.load=0.9",
            "--out",
            "r",
        ],
        &dir,
    ));
    let series = |root: &str, point: &str, variant: &str, file: &str| {
        dir.join(root)
            .join(point)
            .join(variant)
            .join("series")
            .join(file)
    };
    let mut stamps = Vec::new();
    for point in POINTS {
        for variant in VARIANTS {
            for file in FILES {
                let path = series("s", point, variant, file);
                let want = read(&series("r", "", variant, file));
                let got = read(&path);
                assert_eq!(got.lines().next(), want.lines().next(), "{path:?}'s header");
                assert!(got.lines().count() > 2, "{path:?} has rows");
                if point == POINTS[0] {
                    assert_eq!(got, want, "{path:?} differs from irn run's");
                }
                stamps.push((path.clone(), got, modified(&path)));
            }
            assert!(!series("s", point, variant, "flows.csv").exists());
        }
    }
    assert!(temporaries(&dir.join("s")).is_empty());
    // Resumed after completing: nothing runs, every series stays as it was.
    let again = ok(&irn(&["sweep", "sweep.toml", "--out", "s"], &dir));
    assert!(again.contains("4 already done, 0 to run"), "{again}");
    for (path, text, stamp) in &stamps {
        assert_eq!(&read(path), text, "{path:?}");
        assert_eq!(modified(path), *stamp, "{path:?} was rewritten");
    }
    // `--monitor INTERVAL` is `[monitor] interval`: a plain scenario gives the same series.
    std::fs::write(
        dir.join("plain.toml"),
        TINY.replace("\"100us\"", "\"50us\""),
    )
    .unwrap();
    let plain = SWEEP.replace("tiny.toml", "plain.toml");
    std::fs::write(dir.join("plain-sweep.toml"), plain).unwrap();
    let args = [
        "sweep",
        "plain-sweep.toml",
        "--out",
        "p",
        "--monitor",
        "5us",
    ];
    ok(&irn(&args, &dir));
    for (point, variant) in POINTS.iter().zip(VARIANTS) {
        let path = series("p", point, variant, "ports.csv");
        assert_eq!(read(&path), read(&series("s", point, variant, "ports.csv")));
    }
    // The report draws each point's series, its charts also under plots/.
    ok(&irn(&["plot", "s"], &dir));
    let html = read(&dir.join("s/report.html"));
    for point in POINTS {
        assert!(
            html.contains(&format!("<h2>Time series of {point}</h2>")),
            "{point}"
        );
        let id = format!("utilization_by_tier_{point}");
        assert!(html.contains(&format!("id=\"{id}\"")), "{id}");
        assert!(
            dir.join("s/plots").join(format!("{id}.svg")).is_file(),
            "{id}"
        );
    }
    assert!(html.contains("id=\"queue_over_time_workload.load_0.9\""));
    // Both variants' ports, labelled with their names; a star's switch has no named tier.
    assert!(html.contains("IRN switch 0 → host ") && html.contains("RoCE+PFC switch 0 → host "));
    // A sweep without a monitor has no such section.
    ok(&irn(&["sweep", "plain-sweep.toml", "--out", "q"], &dir));
    ok(&irn(&["plot", "q"], &dir));
    assert!(!read(&dir.join("q/report.html")).contains("Time series"));
}

/// An experiment with two points, one check: RoCE+PFC sends at least as many packets.
fn experiment(scenario: &str) -> String {
    format!(
        "{scenario}\n[[experiment.point]]\nname = \"busy\"\nset = {{ \"workload.load\" = 0.9 }}\n\n\
         [[experiment.point]]\nname = \"calm\"\nset = {{}}\n\n[[check]]\nnum = \"RoCE+PFC\"\n\
         den = \"IRN\"\nmetric = \"data_packets_sent\"\npaper = \"-\"\nexpect = {{ at_least = 1 }}\n"
    )
}

#[test]
fn irn_check_writes_the_series_of_every_run_and_draws_them_per_point() {
    let dir = scratch("monitor-check");
    std::fs::write(dir.join("exp.toml"), experiment(&monitored())).unwrap();
    ok(&irn(&["check", "exp.toml", "--out", "c", "-j", "2"], &dir));
    let run = |root: &str, point: &str, variant: &str| {
        dir.join(root).join("tiny/50us").join(point).join(variant)
    };
    for point in ["busy", "calm"] {
        for variant in VARIANTS {
            for file in FILES {
                let path = run("c", point, variant).join("series").join(file);
                assert!(read(&path).lines().count() > 2, "{path:?}");
            }
        }
    }
    assert!(temporaries(&dir.join("c")).is_empty());
    let html = read(&dir.join("c/report.html"));
    for point in ["busy", "calm"] {
        let summary = format!(
            "<summary>Time series at {point}: IRN, RoCE+PFC (series/ports.csv in \
             <code>tiny/50us/{point}</code>)</summary>"
        );
        assert!(html.contains(&summary), "{summary}");
        let id = format!("tiny_utilization_by_tier_{point}");
        assert!(html.contains(&format!("id=\"{id}\"")), "{id}");
        // The contents link to each point's time series, under the figure.
        let link = format!("<li><a href=\"#tiny_series_{point}\">Time series at {point}</a></li>");
        assert!(html.contains(&link), "{link}");
        assert!(html.contains(&format!(
            "<details class=\"series\" id=\"tiny_series_{point}\">"
        )));
    }
    assert!(html.contains("id=\"tiny_queue_over_time_busy\""));
    assert_eq!(html.matches("<details").count(), 2);
    assert_eq!(html.matches("</details>").count(), 2);
    // `irn check --monitor` on the same experiment without the section: the same series.
    let plain = TINY.replace("\"100us\"", "\"50us\"");
    std::fs::write(dir.join("plain.toml"), experiment(&plain)).unwrap();
    ok(&irn(
        &["check", "plain.toml", "--out", "m", "--monitor", "5us"],
        &dir,
    ));
    let ports = |root| run(root, "busy", "IRN").join("series/ports.csv");
    assert_eq!(read(&ports("m")), read(&ports("c")));
    // Without either, no series and no section.
    ok(&irn(&["check", "plain.toml", "--out", "n"], &dir));
    assert!(!run("n", "busy", "IRN").join("series").exists());
    assert!(!read(&dir.join("n/report.html")).contains("<details"));
    // A bad interval is refused before the results folder is made.
    let o = irn(
        &["check", "plain.toml", "--out", "bad", "--monitor", "often"],
        &dir,
    );
    let err = refused(&o);
    assert!(err.contains("monitor.interval = \"often\""), "{err}");
    assert!(!dir.join("bad").exists());
}

/// A monitored sweep interrupted while its series are being written leaves neither a run
/// folder nor a temporary behind: the series are streamed inside the run's staging folder.
#[test]
fn an_interrupted_monitored_sweep_leaves_no_half_written_series() {
    let dir = scratch("monitor-signal");
    // Long enough to still be running when the signal comes: 50 ms of traffic on 16 hosts.
    let long = monitored()
        .replace("kind = \"star\"\nhosts = 4", "kind = \"fat-tree\"\nk = 4")
        .replace("\"50us\"", "\"50ms\"");
    std::fs::write(dir.join("tiny.toml"), long).unwrap();
    let sweep = SWEEP.replace("[0.9, 0.5]", "[0.9]");
    std::fs::write(dir.join("sweep.toml"), sweep).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_irn"))
        .args(["sweep", "sweep.toml", "--out", "s", "-j", "1"])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let point = dir.join("s").join(POINTS[0]);
    let streaming = point
        .join(format!(".IRN.tmp-{}", child.id()))
        .join("series/ports.csv");
    let started = Instant::now();
    while !streaming.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no {streaming:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert!(temporaries(&dir.join("s")).is_empty());
    for variant in VARIANTS {
        assert!(!point.join(variant).exists(), "{variant}");
    }
}
