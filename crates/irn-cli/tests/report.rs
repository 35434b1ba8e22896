//! `irn plot` end to end: a real comparison results folder from `irn run`, its report and
//! charts, errors for folders that are not results folders, and (where Chromium is installed) the
//! report loaded in a headless browser.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The second variant's name has every character HTML escapes.
const ODD_NAME: &str = r#"RoCE+PFC <"go-back-N"> & 'co'"#;
const ODD_NAME_ESCAPED: &str = "RoCE+PFC &lt;&quot;go-back-N&quot;&gt; &amp; &#39;co&#39;";

const SCENARIO: &str = r#"
name = "tiny <report> & co"
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
name = "RoCE+PFC <\"go-back-N\"> & 'co'"
set = { "transport.kind" = "roce", "switch.pfc" = true }
"#;

/// A comparison results folder, made once per test process with `irn run`. A static is never
/// dropped, so it lives in Cargo's temporary folder for integration tests (under `target/`),
/// replaced by the next test process, rather than left behind in the system's.
fn comparison() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-shared-run");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("tiny.toml"), SCENARIO).unwrap();
        ok(&irn(&["run", "tiny.toml", "--out", "results"], &dir));
        dir.join("results")
    })
}

/// `irn plot DIR` on a fresh copy of the comparison folder; returns its scratch folder and the
/// copy in it.
fn plotted(name: &str) -> (Scratch, PathBuf) {
    let scratch = scratch(name);
    let dir = scratch.join("results");
    copy_dir(comparison(), &dir);
    let stdout = ok(&irn(&["plot", dir.to_str().unwrap()], &dir));
    let report = dir.join("report.html");
    assert!(stdout.contains(report.to_str().unwrap()), "{stdout}");
    assert!(stdout.contains("metrics.svg"), "{stdout}");
    (scratch, dir)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}

const CHARTS: [&str; 4] = [
    "metrics",
    "single_packet_fct_cdf",
    "slowdown_by_size",
    "fct_by_size",
];

/// Checks that hold for any report: closed SVGs, balanced sections, nothing external.
fn check_html(html: &str, charts: usize) {
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.trim_end().ends_with("</html>"));
    assert_eq!(html.matches("<svg").count(), charts, "one <svg per chart");
    assert_eq!(html.matches("</svg>").count(), charts, "every <svg closed");
    for tag in [
        "section", "table", "tr", "pre", "figure", "main", "style", "details",
    ] {
        assert_eq!(
            html.matches(&format!("<{tag}>")).count() + html.matches(&format!("<{tag} ")).count(),
            html.matches(&format!("</{tag}>")).count(),
            "<{tag}> balanced"
        );
    }
    // Self-contained: no script, no stylesheet or image links, no URL but the SVG namespace.
    assert!(!html.contains("<script"));
    assert!(!html.contains("<link"));
    assert!(!html.contains(" src="));
    let urls = html.matches("http://").count() + html.matches("https://").count();
    assert_eq!(urls, html.matches("http://www.w3.org/2000/svg").count());
    check_contents(html);
}

/// The values of `attr="..."` in `html`, in order.
fn attributes<'a>(html: &'a str, attr: &str) -> Vec<&'a str> {
    let open = format!(" {attr}=\"");
    html.match_indices(&open)
        .map(|(i, _)| {
            let rest = &html[i + open.len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect()
}

/// The table of contents leads, before the first section, and every link in the page goes to
/// an anchor it has; no two elements share an id.
fn check_contents(html: &str) {
    let toc = html
        .find("<nav class=\"toc\"")
        .expect("a table of contents");
    assert!(toc < html.find("<section").unwrap(), "contents first");
    let ids = attributes(html, "id");
    for (i, id) in ids.iter().enumerate() {
        assert!(!ids[..i].contains(id), "id {id} twice");
    }
    let links = attributes(html, "href");
    assert!(links.len() >= 4, "{links:?}");
    for link in links {
        let target = link.strip_prefix('#').expect("links inside the page");
        assert!(ids.contains(&target), "no anchor {target}");
    }
}

#[test]
fn report_for_a_comparison() {
    let (_scratch, dir) = plotted("comparison");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    check_html(&html, CHARTS.len());

    // Scenario and variant names, escaped wherever they appear.
    assert!(html.contains("tiny &lt;report&gt; &amp; co"));
    assert!(html.contains("IRN"));
    assert!(html.contains(ODD_NAME_ESCAPED));
    assert!(!html.contains(ODD_NAME) && !html.contains("<report>"));
    // The headline table, the ratios to the first variant, the resolved scenario.
    for label in ["avg slowdown", "p99 FCT (µs)", "drop rate (%)", "1.00×"] {
        assert!(html.contains(label), "{label}");
    }
    assert!(html.contains("[transport]") && html.contains("kind = &quot;irn&quot;"));
    for id in CHARTS {
        assert!(html.contains(&format!("<section id=\"{id}\">")), "{id}");
        assert!(
            html.contains(&format!("<li><a href=\"#{id}\">")),
            "{id} in the contents"
        );
    }
    // The contents lead to each variant's column of the headline table.
    let variants = "<li><a href=\"#variant-irn\">IRN</a></li>\n<li><a href=\"#variant-roce-pfc-go-back-n-co\">";
    assert!(html.contains(variants), "{html}");
    assert!(html.contains("<th scope=\"col\" id=\"variant-irn\">IRN</th>"));
    // FCT by flow size: the default buckets, labelled by their edges, with bars.
    for label in ["FCT by flow size", "≤ 10 KB", "10 KB–100 KB", "&gt; 1 MB"] {
        assert!(html.contains(label), "{label}");
    }
    let by_size = std::fs::read_to_string(dir.join("plots/fct_by_size.svg")).unwrap();
    assert!(by_size.matches("<rect").count() > 2, "{by_size}");

    for id in CHARTS {
        let path = dir.join("plots").join(format!("{id}.svg"));
        let svg = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        assert!(svg.starts_with("<svg"), "{path:?}");
        assert!(svg.trim_end().ends_with("</svg>"), "{path:?}");
        assert_eq!(svg.matches("<svg").count(), 1);
        assert!(svg.contains("IRN"), "{path:?} has a legend");
        // Lines for the line charts, one per variant (whiskers for FCT by size).
        if id != "metrics" {
            assert!(svg.matches("<polyline").count() >= 2, "{path:?}");
        }
    }
    // No temporary files left behind.
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .chain(std::fs::read_dir(dir.join("plots")).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // Plotting again (the folder given as `.`) replaces the files.
    std::fs::write(dir.join("plots/metrics.svg"), "stale").unwrap();
    ok(&irn(&["plot", "."], &dir));
    check_html(
        &std::fs::read_to_string(dir.join("report.html")).unwrap(),
        CHARTS.len(),
    );
    assert!(std::fs::read_to_string(dir.join("plots/metrics.svg"))
        .unwrap()
        .starts_with("<svg"));
}

#[test]
fn a_variant_without_finished_flows_shows_dashes_not_zeros() {
    let scratch = scratch("unmeasured");
    let dir = scratch.join("results");
    copy_dir(comparison(), &dir);
    // As if every flow of the first variant had started during the warm-up.
    let summary = dir.join("IRN/summary.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    for key in [
        "flows_measured",
        "flows_incomplete",
        "avg_slowdown",
        "avg_fct_us",
    ] {
        json["metrics"][key] = serde_json::json!(0);
    }
    std::fs::write(&summary, json.to_string()).unwrap();
    ok(&irn(&["plot", dir.to_str().unwrap()], &dir));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("No measured flow finished in IRN:"), "{html}");
    let row = html
        .lines()
        .find(|l| l.starts_with("<tr><th scope=\"row\">avg slowdown</th>"))
        .unwrap();
    // IRN's cell is a dash, and the other variant has no ratio to a missing base.
    assert!(row.contains("<td>–</td>"), "{row}");
    assert!(!row.contains("×"), "{row}");
}

#[test]
fn report_for_one_run_with_out() {
    let dir = scratch("single");
    let run = comparison().join("IRN");
    let out = dir.join("nested").join("irn.html");
    let stdout = ok(&irn(
        &[
            "plot",
            run.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &dir,
    ));
    assert!(stdout.contains("irn.html"), "{stdout}");
    let html = std::fs::read_to_string(&out).unwrap();
    // One run: no bars relative to a first variant; the two distribution charts and FCT by
    // flow size.
    check_html(&html, 3);
    assert!(html.contains("one run"));
    assert!(
        !run.join("report.html").exists(),
        "--out writes nothing into DIR"
    );
    assert!(dir.join("nested/plots/single_packet_fct_cdf.svg").is_file());
    assert!(dir.join("nested/plots/fct_by_size.svg").is_file());
    assert!(!dir.join("nested/plots/metrics.svg").exists());
}

#[test]
fn several_folders_at_once() {
    let (_scratch_a, a) = plotted("several-a");
    let scratch_b = scratch("several-b");
    let b = scratch_b.join("results");
    copy_dir(comparison(), &b);
    std::fs::remove_file(a.join("report.html")).unwrap();
    let stdout = ok(&irn(
        &["plot", a.to_str().unwrap(), b.to_str().unwrap()],
        &a,
    ));
    assert!(a.join("report.html").is_file() && b.join("report.html").is_file());
    assert_eq!(stdout.matches("report.html").count(), 2, "{stdout}");
    // --out with several folders is refused.
    let out = irn(
        &[
            "plot",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--out",
            "x.html",
        ],
        &a,
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--out takes one results folder"));
}

#[test]
fn errors_name_the_folder_or_file() {
    let dir = scratch("errors");
    let fail = |args: &[&str]| {
        let out = irn(args, &dir);
        assert!(!out.status.success(), "{args:?} should fail");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    let err = fail(&["plot", "empty"]);
    assert!(err.contains("empty is not an irn results folder"), "{err}");
    assert!(!dir.join("empty/report.html").exists());

    std::fs::create_dir_all(dir.join("odd/comparison.csv")).unwrap();
    let err = fail(&["plot", "odd"]);
    assert!(err.contains("comparison.csv: not a file"), "{err}");

    let err = fail(&["plot", "missing"]);
    assert!(err.contains("missing: no such folder"), "{err}");

    // A broken flows.csv in one variant: the error names that file; nothing is written.
    let broken = dir.join("broken");
    copy_dir(comparison(), &broken);
    std::fs::write(broken.join("IRN/flows.csv"), "flow_id,size_bytes\n1,x\n").unwrap();
    let err = fail(&["plot", "broken"]);
    assert!(err.contains("flows.csv"), "{err}");
    assert!(err.contains("IRN"), "{err}");
    assert!(!broken.join("report.html").exists());

    // A flows.csv that is not one at all, without rows to trip over: it is not taken for a
    // run without flows.
    let foreign = dir.join("foreign");
    copy_dir(comparison(), &foreign);
    std::fs::write(foreign.join("IRN/flows.csv"), "garbage\n").unwrap();
    let err = fail(&["plot", "foreign"]);
    assert!(
        err.contains("IRN/flows.csv: not an irn flows.csv: no `size_bytes` column"),
        "{err}"
    );
    assert!(!foreign.join("report.html").exists());

    // A comparison.csv naming a variant with no folder.
    let orphan = dir.join("orphan");
    copy_dir(comparison(), &orphan);
    std::fs::remove_dir_all(orphan.join("IRN")).unwrap();
    let err = fail(&["plot", "orphan"]);
    assert!(
        err.contains("comparison.csv") && err.contains("`IRN`"),
        "{err}"
    );
}

/// Chromium, if installed (or installed here when IRN_INSTALL_CHROMIUM=1).
fn chromium() -> Option<PathBuf> {
    let find = || {
        let fixed = PathBuf::from("/usr/bin/chromium");
        if fixed.is_file() {
            return Some(fixed);
        }
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n)))
            .find(|p| p.is_file())
    };
    if let Some(p) = find() {
        return Some(p);
    }
    if std::env::var("IRN_INSTALL_CHROMIUM").as_deref() == Ok("1") {
        eprintln!("installing chromium (IRN_INSTALL_CHROMIUM=1)");
        let install = || {
            Command::new("apt-get")
                .args(["install", "-y", "-q", "chromium"])
                .env("DEBIAN_FRONTEND", "noninteractive")
                .status()
                .is_ok_and(|s| s.success())
        };
        if !install() {
            let _ = Command::new("apt-get").args(["update", "-q"]).status();
            install();
        }
        return find();
    }
    None
}

/// Runs `cmd` with stdout and stderr in files (a DOM dump can overflow a pipe), killing it
/// after `limit`.
fn run_with_limit(mut cmd: Command, dir: &Path, limit: Duration) -> (String, String) {
    let (out_path, err_path) = (dir.join("stdout.txt"), dir.join("stderr.txt"));
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("chromium starts");
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
            let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
            assert!(status.success(), "chromium failed ({status}):\n{stderr}");
            return (stdout, stderr);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
            panic!("chromium did not finish within {limit:?}:\n{stderr}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn report_renders_in_headless_chromium() {
    let Some(chromium) = chromium() else {
        println!(
            "skipped: chromium not installed (set IRN_INSTALL_CHROMIUM=1 to install it with \
             apt-get)"
        );
        return;
    };
    let (_scratch, dir) = plotted("chromium");
    let report = dir.join("report.html");
    let profile = scratch("chromium-profile");
    let mut cmd = Command::new(&chromium);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .arg("--dump-dom")
    .arg(format!("file://{}", report.display()));
    let (dom, stderr) = run_with_limit(cmd, &profile, Duration::from_secs(45));

    // Chromium's stderr is noisy (D-Bus, GPU, ...): only the page's console messages fail the
    // test. The report has no script, so any console message (an uncaught error, a resource
    // that failed to load) is a fault; Chromium logs even console.error at INFO level.
    let console_errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("Uncaught") || l.contains(":CONSOLE"))
        .collect();
    assert!(
        console_errors.is_empty(),
        "console errors:\n{console_errors:#?}"
    );

    assert_eq!(
        dom.matches("<svg").count(),
        CHARTS.len(),
        "every chart in the DOM"
    );
    assert_eq!(dom.matches("</svg>").count(), CHARTS.len());
    assert!(dom.contains("<table>"));
    // Serialized text escapes only `&`, `<` and `>`.
    assert!(dom.contains(r#"RoCE+PFC &lt;"go-back-N"&gt; &amp; 'co'"#));
    for id in CHARTS {
        assert!(dom.contains(&format!("id=\"{id}\"")), "{id}");
    }
    // The parser kept the SVG content: the charts' text and lines are in the DOM.
    assert!(dom.contains("<polyline") && dom.contains("<text"));
    println!("chromium: report rendered, {} bytes of DOM", dom.len());
}

#[test]
fn a_monitored_run_draws_its_series_and_renders_in_headless_chromium() {
    let dir = scratch("monitored");
    std::fs::write(dir.join("tiny.toml"), SCENARIO).unwrap();
    ok(&irn(
        &["run", "tiny.toml", "--out", "results", "--monitor", "10us"],
        &dir,
    ));
    let results = dir.join("results");
    ok(&irn(&["plot", results.to_str().unwrap()], &dir));
    let report = results.join("report.html");
    let html = std::fs::read_to_string(&report).unwrap();
    // The tiny run pauses (PFC), so every series chart is drawn, the WAN slides' two included.
    let series = [
        "queue_over_time",
        "pause_over_time",
        "utilization_by_tier",
        "buffer_over_time",
        "pause_frames_over_time",
    ];
    check_html(&html, CHARTS.len() + series.len());
    for id in CHARTS.iter().chain(&series) {
        assert!(html.contains(&format!("id=\"{id}\"")), "{id}");
        assert!(
            results.join("plots").join(format!("{id}.svg")).is_file(),
            "{id}"
        );
    }
    // Variant names are escaped in the series' legends and bands too (plotters writes `'` as
    // `&apos;`).
    let odd = "&lt;&quot;go-back-N&quot;&gt; &amp; &apos;co&apos; ";
    assert!(
        ["edge ", "agg ", "core "]
            .iter()
            .any(|tier| html.contains(&format!("{odd}{tier}"))),
        "a port named by its tier"
    );
    // The fat-tree's link tiers by name, and the heat map's colour bar.
    for band in ["IRN edge → agg", "IRN agg → core", "IRN core → agg"] {
        assert!(html.contains(band), "{band}");
    }
    assert!(html.contains(">\nutilization\n</text>") && html.contains(">\n100 %\n</text>"));
    assert!(!html.contains(ODD_NAME));
    let Some(chromium) = chromium() else {
        println!("skipped the browser: chromium not installed");
        return;
    };
    let dom = rendered_dom(&chromium, &report, "monitored-profile");
    assert_eq!(dom.matches("</svg>").count(), CHARTS.len() + series.len());
    assert!(dom.contains("Link utilization by tier over time"));
}

/// `page` as headless Chromium's DOM, after checking the page logged nothing to its console
/// (the reports have no script: any message is a fault); `profile` names a scratch profile.
fn rendered_dom(chromium: &Path, page: &Path, profile: &str) -> String {
    let profile = scratch(profile);
    let mut cmd = Command::new(chromium);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .arg("--dump-dom")
    .arg(format!("file://{}", page.display()));
    let (dom, stderr) = run_with_limit(cmd, &profile, Duration::from_secs(45));
    assert!(
        !stderr
            .lines()
            .any(|l| l.contains("Uncaught") || l.contains(":CONSOLE")),
        "{stderr}"
    );
    dom
}

/// A seeded, monitored sweep's report: a metric against the grid key with error bars,
/// slowdown by size per point, the mean ± CI table, the time series of each point and seed;
/// every chart in Chromium's DOM.
#[test]
fn a_sweeps_report_renders_in_headless_chromium() {
    let dir = scratch("sweep-report");
    std::fs::write(dir.join("tiny.toml"), SCENARIO).unwrap();
    let sweep = "name = \"loads\"\nscenario = \"tiny.toml\"\nseeds = [1, 2]\n[grid]\n\
                 \"workload.load\" = [0.3, 0.6]\n";
    std::fs::write(dir.join("sweep.toml"), sweep).unwrap();
    ok(&irn(
        &["sweep", "sweep.toml", "--out", "s", "--monitor", "20us"],
        &dir,
    ));
    ok(&irn(&["plot", "s"], &dir));
    let report = dir.join("s/report.html");
    let html = std::fs::read_to_string(&report).unwrap();
    // One line chart and a slowdown-by-size chart per point; per point and seed, a collapsed
    // section of time series, each with at least its utilization heat map.
    let series = (std::fs::read_dir(dir.join("s/plots")).unwrap())
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            let name = name.to_string_lossy();
            [
                "queue_over_time_",
                "pause_over_time_",
                "utilization_by_tier_",
                "buffer_over_time_",
                "pause_frames_over_time_",
            ]
            .iter()
            .any(|id| name.starts_with(id))
        })
        .count();
    let charts = 1 + 2 + series;
    check_html(&html, charts);
    assert!(html.contains("workload.load"), "{html}");
    for point in ["workload.load_0.3", "workload.load_0.6"] {
        for seed in [1, 2] {
            let id = format!("utilization_by_tier_{point}_seed_{seed}");
            assert!(html.contains(&format!("<h3 id=\"{id}\">")), "{id}");
        }
    }
    assert!(series > 4, "{series} series charts: some queue");
    let Some(chromium) = chromium() else {
        println!("skipped the browser: chromium not installed");
        return;
    };
    let dom = rendered_dom(&chromium, &report, "sweep-profile");
    assert_eq!(dom.matches("</svg>").count(), charts);
    assert!(dom.contains("<table>") && dom.contains("<polyline"));
}

#[test]
fn an_incast_cut_off_shows_unknown_rct_and_censored_rows_with_a_note() {
    let dir = scratch("incast-cut");
    // 300 KB at 40 Gb/s take 60 µs; the run stops 20 µs after they start.
    let scenario = "name = \"incast\"\n[topology]\nkind = \"star\"\nhosts = 4\n[workload]\n\
                    kind = \"incast\"\nsenders = 3\ntotal = \"300KB\"\n[run]\n\
                    drain_limit = \"20us\"\n";
    std::fs::write(dir.join("incast.toml"), scenario).unwrap();
    ok(&irn(&["run", "incast.toml", "--out", "results"], &dir));
    ok(&irn(&["plot", "results"], &dir));
    let html = std::fs::read_to_string(dir.join("results/report.html")).unwrap();
    let row = |label: &str| {
        let start = format!("<tr><th scope=\"row\">{label}</th>");
        html.lines()
            .find(|l| l.starts_with(&start))
            .unwrap_or_else(|| panic!("no `{label}` row in {html}"))
            .to_string()
    };
    assert!(row("unfinished flows").contains("<td>3</td>"));
    assert!(row("incast RCT (µs)").contains("<td>–</td>"));
    assert!(row("avg FCT (µs)").contains("<td>–</td>"));
    for label in ["censored RCT (µs)", "censored avg FCT (µs)"] {
        assert!(!row(label).contains("<td>–</td>"), "{label}: {html}");
    }
    assert!(
        html.contains("<strong>Unfinished measured flows: 3 in incast.</strong>"),
        "{html}"
    );
    assert!(
        html.contains("is unknown (–): some of its incast flows"),
        "{html}"
    );
}

/// The NRL slides' model, small: two stars across a 10 Gb/s long link (a longest pause is
/// 3.36 ms there), time-based pause control against the unlimited buffer, an end cluster
/// pausing the sink, monitored once a unit for 30 units.
const SLIDES: &str = r#"
name = "slides-panels"
seed = 1

[topology]
kind = "wan"

[topology.site]
kind = "star"
hosts = 2
link_rate = "10Gbps"
link_delay = "1us"

[topology.wan]
rate = "10Gbps"
delay = "10ms"
buffer = "100MB"

[switch]
pfc = true

[transport]
kind = "roce"
mtu = 4096
rto_high = "2s"

[workload]
kind = "trace"
csv = """
src,dst,size_bytes,start_ns
0,2,2000000000,0
"""

[run]
drain_limit = "100ms"

[[pause_control]]
rule = "time-based"
threshold = 1
height = 20
constant = 2

[pauses]
hosts = [2]
gap = ["0ms", "10ms"]
length = ["0ms", "10ms"]

[monitor]
interval = "3356us"
ports = ["long-haul", "switch:1:downlinks"]
nics = false

[[compare]]
name = "time-based"
set = {}

[[compare]]
name = "unlimited buffer"
set = { "pause_control" = [{ rule = "none" }], "topology.wan.buffer" = "10GB" }

[experiment]
id = "slides-panels"
chart_metrics = ["goodput_gbps", "peak_buffer_bytes"]
repetitions = 1

[[experiment.point]]
name = "RTT 6"
set = {}

[[experiment.point]]
name = "RTT 12"
set = { "topology.wan.delay" = "20ms" }

[[check]]
num = "time-based"
metric = "drops"
claim = "lossless"
expect = { at_most = 0 }
"#;

/// `irn check` of a WAN under pause control draws each run as the slides do: one SVG per
/// variant and point in the figure's `panels/` folder and in the report, each with its three
/// traces (buffer, pause to source, pause from sink) on axes of its own, so the unlimited
/// buffer's panel never shares one with the others; and one bar chart per metric across all
/// points.
#[test]
fn a_wan_under_pause_control_draws_the_slides_panels() {
    let dir = scratch("slides-panels");
    std::fs::write(dir.join("slides.toml"), SLIDES).unwrap();
    ok(&irn(&["check", "slides.toml", "--out", "results"], &dir));
    let results = dir.join("results");
    let html = std::fs::read_to_string(results.join("report.html")).unwrap();
    let panels = results.join("slides-panels").join("panels");
    for point in ["RTT_6", "RTT_12"] {
        for variant in ["time-based", "unlimited_buffer"] {
            let file = panels.join(format!("{point}_{variant}.svg"));
            let svg = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
            // plotters draws each trace as a polyline of width 2 (axes are width 1).
            assert_eq!(svg.matches("stroke-width=\"2\"").count(), 3, "{file:?}");
            for trace in ["buffer occupancy", "pause to source", "pause from sink"] {
                assert!(svg.contains(trace), "{trace} in {file:?}");
            }
            assert!(html.contains(svg.trim()), "{file:?} in the report");
        }
    }
    assert_eq!(std::fs::read_dir(&panels).unwrap().count(), 4);
    // The buffer and PAUSE-frame overlays the panels replace are gone; the bars cover both
    // points.
    assert!(!html.contains("Buffer occupancy over time: the fullest inputs"));
    assert!(!html.contains("PAUSE frames over time"));
    for metric in ["goodput_gbps (Gb/s)", "peak_buffer_bytes (B)"] {
        assert!(
            html.contains(&format!("slides-panels: {metric}")),
            "{metric}"
        );
    }
}

/// `irn plot` of a plain comparison under pause control draws the same panels as `irn check`:
/// one chart per variant in `plots/`, in place of the overlays they replace.
#[test]
fn irn_plot_of_a_wan_run_draws_the_slides_panels() {
    let dir = scratch("slides-plot");
    let (plain, _) = SLIDES.split_once("[experiment]").unwrap();
    std::fs::write(dir.join("slides.toml"), plain).unwrap();
    ok(&irn(&["run", "slides.toml", "--out", "run"], &dir));
    ok(&irn(&["plot", "run"], &dir));
    let html = std::fs::read_to_string(dir.join("run/report.html")).unwrap();
    for variant in ["time-based", "unlimited_buffer"] {
        let file = dir.join(format!("run/plots/panel_{variant}.svg"));
        let svg = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        assert_eq!(svg.matches("stroke-width=\"2\"").count(), 3, "{file:?}");
        assert!(svg.contains("pause from sink"), "{file:?}");
    }
    assert!(html.contains("unlimited buffer: buffer and pauses (the slides&#39; panel)"));
    assert!(!html.contains("Buffer occupancy over time: the fullest inputs"));
    assert!(!html.contains("PAUSE frames over time"));
}

/// The shipped sweep of time-based control's characteristic constant, cut to 50 ms (150
/// units, a few seconds): it runs, and its report draws the slide's form, a chart per metric
/// (peak depth, mean depth, starvation) against C with a line per round trip and rate ratio.
#[test]
fn the_characteristic_constant_sweep_runs_short_and_draws_depth_against_c() {
    let dir = scratch("buffer-depth");
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/paper/wan/buffer_depth.toml");
    let out = irn(
        &[
            "check",
            file.to_str().unwrap(),
            "--set",
            "run.drain_limit=50ms",
            "--out",
            "results",
        ],
        &dir,
    );
    // So short a run is before most checks can hold (the first data takes 50 units to
    // arrive): exit status 1 says so, and the report is written all the same.
    assert!(out.status.code().is_some_and(|c| c <= 1), "{out:?}");
    let html = std::fs::read_to_string(dir.join("results").join("report.html")).unwrap();
    // The charts' words, a title wrapped over lines read as one.
    let words = (html.split("<text").skip(1))
        .filter_map(|t| Some(t[t.find('>')? + 1..t.find("</text>")?].trim()))
        .collect::<Vec<_>>()
        .join(" ");
    for label in [
        "peak depth (units)",
        "mean depth (units)",
        "sink starved (share of checks)",
    ] {
        assert!(words.contains(&format!(": {label}")), "{label}");
    }
    for point in [
        "RTT 100, 1:1",
        "RTT 100, 2:1",
        "RTT 150, 1:1",
        "RTT 150, 2:1",
    ] {
        assert!(html.matches(point).count() >= 3, "{point}");
    }
    let runs = dir.join("results").join("wan-buffer-depth").join("incast");
    let summary = runs.join("RTT_100__2_1/seed-1/C_50/summary.json");
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert!(summary.contains("\"starved_fraction\""), "{summary}");
}

/// The shipped RDMA-against-TCP experiment, cut to 100 ms (three round trips, about a second
/// on one core): every transport runs at every point (no loss, a lossy long link, two long
/// links into one sink) and the report shows each point's goodput.
#[test]
fn rdma_against_tcp_runs_short() {
    let dir = scratch("rdma-vs-tcp");
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/paper/wan/rdma_vs_tcp.toml");
    let out = irn(
        &[
            "check",
            file.to_str().unwrap(),
            "--set",
            "run.drain_limit=100ms",
            "--out",
            "results",
        ],
        &dir,
    );
    // Three round trips are too few for RDMA's 90 Gb/s: exit status 1, the report written.
    assert!(out.status.code().is_some_and(|c| c <= 1), "{out:?}");
    let runs = dir.join("results").join("wan-rdma-vs-tcp").join("incast");
    for point in ["no_loss", "loss_1e-5", "WAN_to_LAN__2_links"] {
        for variant in ["RoCE", "IRN", "TCP", "TCP__IP_WAN"] {
            let summary = runs
                .join(point)
                .join("seed-1")
                .join(variant)
                .join("summary.json");
            let text =
                std::fs::read_to_string(&summary).unwrap_or_else(|e| panic!("{summary:?}: {e}"));
            assert!(text.contains("\"goodput_gbps\""), "{summary:?}");
        }
    }
    // The lossy point loses packets on the long link, and TCP's transport is TCP.
    let lossy = runs.join("loss_1e-5/seed-1/TCP/summary.json");
    let lossy = std::fs::read_to_string(lossy).unwrap();
    assert!(
        lossy.contains("\"link_losses\": ") && lossy.contains("\"kind\": \"tcp\""),
        "{lossy}"
    );
    let html = std::fs::read_to_string(dir.join("results").join("report.html")).unwrap();
    assert!(html.contains("goodput_gbps (Gb/s)"));
}

/// A collective run has no single-packet flow: its report has no single-packet FCT chart,
/// neither drawn, nor listed, nor linked, and still the collective's own charts.
#[test]
fn a_run_without_single_packet_flows_has_no_single_packet_chart() {
    let dir = scratch("no-single-packet");
    let scenario = format!(
        "{ALL_REDUCE}[[compare]]\nname = \"IRN\"\nset = {{ \"transport.kind\" = \"irn\" }}\n\
         [[compare]]\nname = \"RoCE\"\n\
         set = {{ \"transport.kind\" = \"roce\", \"switch.pfc\" = true }}\n"
    );
    std::fs::write(dir.join("c.toml"), scenario).unwrap();
    ok(&irn(&["run", "c.toml", "--out", "r"], &dir));
    let out = ok(&irn(&["plot", "r"], &dir));
    assert!(!out.contains("single_packet"), "{out}");
    assert!(out.contains("collectives_busbw.svg"), "{out}");
    assert!(!dir.join("r/plots/single_packet_fct_cdf.svg").exists());
    let html = std::fs::read_to_string(dir.join("r/report.html")).unwrap();
    assert!(!html.contains("single_packet_fct_cdf"), "linked");
    assert!(!html.contains("Single-packet flows: FCT tail"), "drawn");
    assert!(html.contains("collectives_busbw"));
}
