//! `irn reproduce [FIGURE|all] [--quick]`: rerun the IRN paper's experiments and report ours
//! next to the paper's, figure by figure.
//!
//! Each experiment is a shipped scenario (`scenarios/paper/`, embedded in the binary) and a list
//! of checks: a ratio of one variant's metric to another's, the paper's figure for it, and the
//! direction the paper found. A full run checks convergence (MODEL.md §4): it runs the window the
//! scenario names, then twice that, and keeps doubling (up to `--max-window`, 80 ms) until no
//! reported ratio moves by more than 5 %; the report states the window used and whether it
//! converged. `--quick` runs one short window and says so.
//!
//! Output: `results/reproduce/<figure>/<window>/<variant>/…` (the files of `irn run`),
//! `reproduce.json` (every check), `report.md` (every check in one Markdown table) and
//! `report.html` (a section per figure: the chart, our numbers, the paper's, and whether each
//! direction holds).
//!
//! Every run is written atomically into its own folder, so a rerun into the same results folder
//! reads back each run whose folder holds the same resolved scenario instead of running it
//! again: an interrupted reproduce resumes where it stopped (`--fresh` reruns everything, e.g.
//! after changing irn itself). `--set` changes the scenarios every figure starts from.

use std::fmt::Write as _;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use irn_sim::metrics::Summary;
use irn_sim::scenario;
use rayon::prelude::*;
use serde::Serialize;

use crate::output::{
    claim_folder, folder_name, write_file_atomic, Finished, Performance, Staging, Writer,
};
use crate::plot::{self, BarGroup};
use crate::report::escape;

/// Ratios that move less than this between a window and its double count as converged.
const CONVERGED: f64 = 0.05;
/// Seeds an incast experiment averages over.
const INCAST_REPETITIONS: u64 = 3;

#[derive(clap::Args, Debug)]
pub struct ReproduceArgs {
    /// A figure (`fig01` … `fig12`, `fig09_cross`, `robustness`) or `all`.
    #[arg(default_value = "all")]
    figure: String,
    /// A reduced run (short windows, no convergence check) that finishes in minutes.
    #[arg(long)]
    quick: bool,
    /// Runs at once (each uses one core). Default: all cores.
    #[arg(short = 'j', long, value_name = "N")]
    jobs: Option<NonZeroUsize>,
    /// Results folder. Default: results/reproduce (or results/reproduce-quick).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The longest window a full run doubles up to while looking for convergence (each
    /// doubling costs as much as everything before it). At or below a figure's first window
    /// (20 ms for most), that window runs once, without the convergence check; `--quick` is
    /// the short run.
    #[arg(long, value_name = "DURATION", default_value = "80ms")]
    max_window: irn_core::Duration,
    /// Rerun everything. By default a run whose folder already holds its results (same resolved
    /// scenario) is read back instead of rerun, so an interrupted reproduce resumes.
    #[arg(long)]
    fresh: bool,
    /// Override a key in every experiment's scenario, e.g. `--set transport.mtu=4096`
    /// (repeatable), as `irn run --set` does; a figure's own points (the robustness grid, the
    /// incast degrees) apply over it. The keys reproduce sets itself (`workload.duration`,
    /// `run.warmup`, `seed`) are refused.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    overrides: Vec<String>,
}

/// Keys `reproduce` sets in every run itself: the window (and its warm-up) and incast seeds.
const OWN_KEYS: [&str; 3] = ["workload.duration", "run.warmup", "seed"];

/// A metric of `summary.json`.
#[derive(Debug, Clone, Copy)]
enum Metric {
    AvgSlowdown,
    AvgFct,
    P99Fct,
    Rct,
    SingleP99,
    BackgroundAvgSlowdown,
    BackgroundAvgFct,
    BackgroundP99Fct,
}

impl Metric {
    fn get(self, s: &Summary) -> f64 {
        match self {
            Metric::AvgSlowdown => s.avg_slowdown,
            Metric::AvgFct => s.avg_fct_us,
            Metric::P99Fct => s.p99_fct_us,
            Metric::Rct => s.rct_us.unwrap_or(f64::NAN),
            Metric::SingleP99 => s.single_packet_p99_fct_us.unwrap_or(f64::NAN),
            Metric::BackgroundAvgSlowdown => s.background_avg_slowdown.unwrap_or(f64::NAN),
            Metric::BackgroundAvgFct => s.background_avg_fct_us.unwrap_or(f64::NAN),
            Metric::BackgroundP99Fct => s.background_p99_fct_us.unwrap_or(f64::NAN),
        }
    }
    fn name(self) -> &'static str {
        match self {
            Metric::AvgSlowdown => "avg slowdown",
            Metric::AvgFct => "avg FCT",
            Metric::P99Fct => "p99 FCT",
            Metric::Rct => "incast RCT",
            Metric::SingleP99 => "1-packet p99 FCT",
            Metric::BackgroundAvgSlowdown => "background avg slowdown",
            Metric::BackgroundAvgFct => "background avg FCT",
            Metric::BackgroundP99Fct => "background p99 FCT",
        }
    }
}

/// The direction the paper found for a ratio.
#[derive(Debug, Clone, Copy, Serialize)]
enum Expect {
    /// The numerator is worse (ratio > 1).
    Above,
    /// About equal: within this fraction of 1.
    Near(f64),
}

impl Expect {
    fn holds(self, r: f64) -> bool {
        match self {
            Expect::Above => r > 1.0,
            Expect::Near(tol) => (r - 1.0).abs() <= tol,
        }
    }
}

struct Check {
    num: String,
    den: String,
    metric: Metric,
    paper: &'static str,
    expect: Expect,
}

fn check(num: &str, den: &str, metric: Metric, paper: &'static str, expect: Expect) -> Check {
    Check {
        num: num.into(),
        den: den.into(),
        metric,
        paper,
        expect,
    }
}

/// The three headline metrics, one check each.
fn headline(num: &str, den: &str, paper: &'static str, expect: Expect) -> Vec<Check> {
    [Metric::AvgSlowdown, Metric::AvgFct, Metric::P99Fct]
        .into_iter()
        .map(|m| check(num, den, m, paper, expect))
        .collect()
}

struct Experiment {
    id: &'static str,
    title: &'static str,
    scenario: &'static str,
    /// Grid points: (label, overrides); one unnamed point for plain figures.
    points: Vec<(String, Vec<String>)>,
    /// Whether the workload has a window to converge. Incasts have none: each is one event,
    /// repeated [`INCAST_REPETITIONS`] times with different seeds and averaged, as the paper does.
    windowed: bool,
    checks: Vec<Check>,
}

macro_rules! paper {
    ($f:literal) => {
        include_str!(concat!("../../../scenarios/paper/", $f))
    };
}

fn experiments() -> Vec<Experiment> {
    use Expect::*;
    use Metric::*;
    let single = || vec![(String::new(), vec![])];
    let mut out = vec![
        Experiment {
            id: "fig01",
            title: "Fig. 1: IRN (no PFC) vs RoCE (PFC)",
            scenario: paper!("fig01.toml"),
            points: single(),
            windowed: true,
            checks: headline("RoCE+PFC", "IRN", "2.8–3.7×", Above),
        },
        Experiment {
            id: "fig02",
            title: "Fig. 2: PFC makes IRN worse",
            scenario: paper!("fig02.toml"),
            points: single(),
            windowed: true,
            checks: headline("IRN+PFC", "IRN", "1.5–2×", Above),
        },
        Experiment {
            id: "fig03",
            title: "Fig. 3: RoCE needs PFC",
            scenario: paper!("fig03.toml"),
            points: single(),
            windowed: true,
            checks: headline("RoCE", "RoCE+PFC", "1.5–3×", Above),
        },
    ];
    let per_cc = |f: &dyn Fn(&str) -> Vec<Check>| {
        ["Timely", "DCQCN"]
            .iter()
            .flat_map(|cc| f(cc))
            .collect::<Vec<_>>()
    };
    out.push(Experiment {
        id: "fig04",
        title: "Fig. 4: IRN vs RoCE+PFC with congestion control",
        scenario: paper!("fig04.toml"),
        points: single(),
        windowed: true,
        checks: per_cc(&|cc| {
            headline(
                &format!("RoCE+PFC+{cc}"),
                &format!("IRN+{cc}"),
                "1.5–2.2×",
                Above,
            )
        }),
    });
    out.push(Experiment {
        id: "fig05",
        title: "Fig. 5: PFC barely changes IRN with congestion control",
        scenario: paper!("fig05.toml"),
        points: single(),
        windowed: true,
        checks: per_cc(&|cc| {
            headline(
                &format!("IRN+PFC+{cc}"),
                &format!("IRN+{cc}"),
                "0.99–1.034×",
                Near(0.05),
            )
        }),
    });
    out.push(Experiment {
        id: "fig06",
        title: "Fig. 6: RoCE needs PFC with congestion control",
        scenario: paper!("fig06.toml"),
        points: single(),
        windowed: true,
        checks: per_cc(&|cc| {
            headline(
                &format!("RoCE+{cc}"),
                &format!("RoCE+PFC+{cc}"),
                "1.35–3.5×",
                Above,
            )
        }),
    });
    out.push(Experiment {
        id: "fig07",
        title: "Fig. 7: factor analysis",
        scenario: paper!("fig07.toml"),
        points: single(),
        windowed: true,
        checks: vec![
            check("IRN go-back-N", "IRN", AvgFct, "much worse", Above),
            check("IRN without BDP-FC", "IRN", AvgFct, "worse", Above),
            check(
                "IRN go-back-N",
                "IRN without BDP-FC",
                AvgFct,
                "go-back-N hurts more",
                Above,
            ),
        ],
    });
    out.push(Experiment {
        id: "fig08",
        title: "Fig. 8: single-packet tail latency",
        scenario: paper!("fig08.toml"),
        points: single(),
        windowed: true,
        checks: ["", "+Timely", "+DCQCN"]
            .iter()
            .flat_map(|cc| {
                [
                    check(
                        &format!("RoCE+PFC{cc}"),
                        &format!("IRN{cc}"),
                        SingleP99,
                        "IRN lowest",
                        Above,
                    ),
                    check(
                        &format!("IRN+PFC{cc}"),
                        &format!("IRN{cc}"),
                        SingleP99,
                        "IRN lowest",
                        Above,
                    ),
                ]
            })
            .collect(),
    });
    out.push(Experiment {
        id: "fig09",
        title: "Fig. 9: incast request completion time",
        scenario: paper!("fig09.toml"),
        points: [10, 20, 30, 40, 50]
            .iter()
            .map(|m| (format!("M={m}"), vec![format!("workload.senders={m}")]))
            .collect(),
        windowed: false,
        checks: ["", "+Timely", "+DCQCN"]
            .iter()
            .map(|cc| {
                check(
                    &format!("IRN{cc}"),
                    &format!("RoCE+PFC{cc}"),
                    Rct,
                    "within 2.5 %",
                    Near(0.025),
                )
            })
            .collect(),
    });
    out.push(Experiment {
        id: "fig09_cross",
        title: "§4.4.3: incast with cross traffic",
        scenario: paper!("fig09_cross.toml"),
        points: single(),
        windowed: false,
        checks: ["", "+Timely", "+DCQCN"]
            .iter()
            .flat_map(|cc| {
                let (irn, roce) = (format!("IRN{cc}"), format!("RoCE+PFC{cc}"));
                [
                    check(&roce, &irn, Rct, "IRN 4–30 % lower", Above),
                    check(
                        &roce,
                        &irn,
                        BackgroundAvgSlowdown,
                        "IRN 32–87 % better",
                        Above,
                    ),
                    check(&roce, &irn, BackgroundAvgFct, "IRN 32–87 % better", Above),
                    check(&roce, &irn, BackgroundP99Fct, "IRN 32–87 % better", Above),
                ]
            })
            .collect(),
    });
    out.push(Experiment {
        id: "fig10",
        title: "Fig. 10: IRN vs Resilient RoCE",
        scenario: paper!("fig10.toml"),
        points: single(),
        windowed: true,
        checks: headline("Resilient RoCE", "IRN", "IRN better", Above),
    });
    out.push(Experiment {
        id: "fig11",
        title: "Fig. 11: IRN vs TCP (iWARP)",
        scenario: paper!("fig11.toml"),
        points: single(),
        windowed: true,
        checks: vec![
            check(
                "TCP (iWARP)",
                "IRN",
                AvgSlowdown,
                "1.27× (IRN 21 % lower)",
                Above,
            ),
            check("TCP (iWARP)", "IRN", AvgFct, "comparable", Near(0.1)),
            check(
                "TCP (iWARP)",
                "IRN+AIMD",
                AvgSlowdown,
                "1.79× (44 % lower)",
                Above,
            ),
            check(
                "TCP (iWARP)",
                "IRN+AIMD",
                AvgFct,
                "1.12× (11 % lower)",
                Above,
            ),
        ],
    });
    out.push(Experiment {
        id: "fig12",
        title: "Fig. 12: implementation overheads",
        scenario: paper!("fig12.toml"),
        points: single(),
        windowed: true,
        checks: [
            headline("IRN+overheads", "IRN", "1.04–1.07×", Near(0.1)),
            headline("RoCE+PFC", "IRN+overheads", "1.35–1.63×", Above),
        ]
        .into_iter()
        .flatten()
        .collect(),
    });
    let robust: Vec<(String, Vec<String>)> = [
        ("load", "workload.load", &["0.3", "0.5", "0.9"][..]),
        (
            "rate",
            "topology.link_rate",
            &["\"10Gbps\"", "\"100Gbps\""][..],
        ),
        ("hosts", "topology.k", &["8", "10"][..]),
        (
            "sizes",
            "workload.sizes",
            &["{ uniform = [\"500KB\", \"5MB\"] }"][..],
        ),
        (
            "buffer",
            "switch.buffer",
            &["\"60KB\"", "\"120KB\"", "\"480KB\""][..],
        ),
        (
            "RTO_high",
            "transport.rto_high",
            &["\"640us\"", "\"1280us\""][..],
        ),
        ("N", "transport.rto_low_packets", &["10", "15"][..]),
    ]
    .iter()
    .flat_map(|(label, key, values)| {
        values.iter().map(move |v| {
            (
                format!("{label}={}", v.trim_matches('"')),
                vec![format!("{key}={v}")],
            )
        })
    })
    .collect();
    out.push(Experiment {
        id: "robustness",
        title: "§4.4.1: robustness (each parameter varied from the default case)",
        scenario: paper!("robustness.toml"),
        points: robust,
        windowed: true,
        checks: [
            headline("RoCE+PFC", "IRN", "6–83 % better", Above),
            headline("IRN+PFC", "IRN", "PFC degrades IRN", Above),
        ]
        .into_iter()
        .flatten()
        .collect(),
    });
    out
}

/// One check's outcome at one grid point.
#[derive(Serialize)]
struct Outcome {
    figure: &'static str,
    point: String,
    ratio: String,
    metric: &'static str,
    paper: &'static str,
    ours: f64,
    expect: Expect,
    holds: bool,
}

/// One figure's outcome.
#[derive(Serialize)]
struct FigureResult {
    figure: &'static str,
    title: &'static str,
    /// The arrival window used (empty for incast, which has none).
    window: String,
    /// Whether doubling the window moved no ratio by more than 5 %; `None` when not checked.
    converged: Option<bool>,
    outcomes: Vec<Outcome>,
    /// Wall time of this invocation's runs (runs read back from an earlier one cost nothing).
    wall_time_s: f64,
    /// Runs read back from an earlier, interrupted or finished, reproduce.
    reused_runs: usize,
    #[serde(skip)]
    chart: String,
}

/// One finished run: its point, variant, summary, and its single-packet flows' FCTs (for the
/// tail CDF of Fig. 8).
type Runs = Vec<(String, String, Summary, Vec<f64>)>;

/// A run finished earlier in `dir` for the same resolved scenario: its summary and single-packet
/// FCTs. `None` (rerun it) when the folder is missing, unreadable or for another scenario.
fn finished_run(dir: &Path, resolved: &scenario::ScenarioFile) -> Option<(Summary, Vec<f64>)> {
    let metrics = crate::output::finished_run(dir, resolved)?;
    let mtu = u64::from(resolved.transport.mtu);
    let single = crate::report::read_flows(dir)
        .ok()?
        .into_iter()
        .filter(|f| f.measured && f.size_bytes <= mtu)
        .filter_map(|f| f.fct_us)
        .collect();
    Some((metrics, single))
}

/// Runs (or reads back) every run of `exp` at `window`; `set` are the `--set` overrides.
fn run_window(
    exp: &Experiment,
    window: Option<&str>,
    set: &[String],
    out: &Path,
    pool: &rayon::ThreadPool,
    resume: bool,
    reused: &AtomicUsize,
) -> Result<Runs> {
    let mut jobs = Vec::new();
    let seeds: Vec<Option<u64>> = if exp.windowed {
        vec![None]
    } else {
        (1..=INCAST_REPETITIONS).map(Some).collect()
    };
    for (label, point_overrides) in &exp.points {
        for &seed in &seeds {
            let mut overrides = set.to_vec();
            overrides.extend(point_overrides.iter().cloned());
            if let Some(w) = window {
                overrides.push(format!("workload.duration={w}"));
                overrides.push(format!("run.warmup={}", warmup_of(w)?));
            }
            if let Some(seed) = seed {
                overrides.push(format!("seed={seed}"));
            }
            let sc = scenario::parse(
                exp.scenario,
                &format!("scenarios/paper/{}.toml (embedded)", exp.id),
                Path::new("."),
                &overrides,
            )?;
            let name = sc.name.clone();
            for run in sc.runs {
                jobs.push((label.clone(), seed, name.clone(), run));
            }
        }
    }
    let dir = out.join(exp.id).join(window.unwrap_or("incast"));
    pool.install(|| {
        jobs.par_iter()
            .map(|(label, seed, name, run)| {
                let mut dest = dir.join(folder_name(if label.is_empty() { "all" } else { label }));
                if let Some(seed) = seed {
                    dest = dest.join(format!("seed-{seed}"));
                }
                let dest = dest.join(folder_name(&run.name));
                if let Some((summary, single)) =
                    resume.then(|| finished_run(&dest, &run.resolved)).flatten()
                {
                    reused.fetch_add(1, Ordering::Relaxed);
                    return Ok((label.clone(), run.name.clone(), summary, single));
                }
                let staging = Staging::new(&dest, Writer::Reproduce, &[])?;
                let started = Instant::now();
                let result = irn_sim::run(&run.config, &mut |_| {});
                let summary = result.summary.clone();
                let mtu = u64::from(run.config.transport.mtu);
                let single: Vec<f64> = result
                    .flows
                    .iter()
                    .filter(|f| f.measured && f.size_bytes <= mtu)
                    .filter_map(|f| f.fct_us)
                    .collect();
                let performance = Performance::new(&summary, started.elapsed());
                staging.write_run(
                    "",
                    name,
                    run.config.seed,
                    &Finished {
                        name: &run.name,
                        resolved: &run.resolved,
                        result,
                        performance,
                    },
                )?;
                staging.commit()?;
                Ok((label.clone(), run.name.clone(), summary, single))
            })
            .collect()
    })
}

/// A tenth of the window, the warm-up every shipped scenario uses.
fn warmup_of(window: &str) -> Result<String> {
    let d: irn_core::Duration = window.parse().context("window")?;
    Ok(format!("{}ps", d.as_ps() / 10))
}

/// The metric's mean over the runs of `variant` at `point` (several for repeated incasts).
fn mean_metric(runs: &Runs, point: &str, variant: &str, metric: Metric) -> Option<f64> {
    let values: Vec<f64> = runs
        .iter()
        .filter(|r| r.0 == point && r.1 == variant)
        .map(|r| metric.get(&r.2))
        .collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

fn outcomes(exp: &Experiment, runs: &Runs) -> Result<Vec<Outcome>> {
    let mut out = Vec::new();
    for (point, _) in &exp.points {
        for c in &exp.checks {
            let (Some(n), Some(d)) = (
                mean_metric(runs, point, &c.num, c.metric),
                mean_metric(runs, point, &c.den, c.metric),
            ) else {
                bail!("{}: no variant `{}` or `{}`", exp.id, c.num, c.den);
            };
            let ours = n / d;
            out.push(Outcome {
                figure: exp.id,
                point: point.clone(),
                ratio: format!("{} / {}", c.num, c.den),
                metric: c.metric.name(),
                paper: c.paper,
                ours,
                expect: c.expect,
                holds: c.expect.holds(ours),
            });
        }
    }
    Ok(out)
}

/// The figure in the paper's form: the tail CDF of single-packet FCTs for Fig. 8, the RCT ratio
/// against the incast degree for Fig. 9, grouped bars (of the first grid point) otherwise.
fn chart(exp: &Experiment, runs: &Runs) -> Result<String> {
    let point = &exp.points[0].0;
    fn at<'a>(
        runs: &'a Runs,
        p: &'a str,
    ) -> impl Iterator<Item = &'a (String, String, Summary, Vec<f64>)> {
        runs.iter().filter(move |r| r.0 == p)
    }
    match exp.id {
        "fig08" => {
            let series: Vec<(&str, Vec<f64>)> = at(runs, point)
                .map(|r| (r.1.as_str(), r.3.clone()))
                .collect();
            plot::tail_cdf(exp.title, "single-packet FCT (us)", &series, 90.0, 99.9)
        }
        "fig09" => {
            let series: Vec<(String, Vec<(f64, f64)>)> = exp
                .checks
                .iter()
                .map(|c| {
                    let points = exp
                        .points
                        .iter()
                        .filter_map(|(label, _)| {
                            let m: f64 = label.trim_start_matches("M=").parse().ok()?;
                            let get = |v: &str| mean_metric(runs, label, v, c.metric);
                            Some((m, get(&c.num)? / get(&c.den)?))
                        })
                        .collect();
                    (format!("{} / {}", c.num, c.den), points)
                })
                .collect();
            let series: Vec<(&str, Vec<(f64, f64)>)> = series
                .iter()
                .map(|(n, p)| (n.as_str(), p.clone()))
                .collect();
            plot::log_lines(
                exp.title,
                "incast degree M (senders)",
                "RCT ratio",
                &series,
                |v| format!("{v:.0}"),
            )
        }
        _ => {
            // Distinct variants in run order (repeated incasts list each variant once per seed).
            let mut variants: Vec<&str> = Vec::new();
            for r in at(runs, point) {
                if !variants.contains(&r.1.as_str()) {
                    variants.push(r.1.as_str());
                }
            }
            let metrics: &[Metric] = if exp.id == "fig09_cross" {
                &[
                    Metric::Rct,
                    Metric::BackgroundAvgSlowdown,
                    Metric::BackgroundAvgFct,
                    Metric::BackgroundP99Fct,
                ]
            } else {
                &[Metric::AvgSlowdown, Metric::AvgFct, Metric::P99Fct]
            };
            let get = |m: Metric| {
                variants
                    .iter()
                    .map(|v| mean_metric(runs, point, v, m))
                    .collect()
            };
            let groups: Vec<BarGroup> = metrics
                .iter()
                .map(|&m| BarGroup {
                    label: m.name(),
                    values: get(m),
                    format: |v| plot::fmt_sig(v, 3),
                })
                .collect();
            let title = if point.is_empty() {
                exp.title.to_string()
            } else {
                format!("{} ({point})", exp.title)
            };
            plot::grouped_bars(&title, &variants, &groups)
        }
    }
}

fn reproduce_one(
    exp: &Experiment,
    a: &ReproduceArgs,
    out: &Path,
    pool: &rayon::ThreadPool,
) -> Result<FigureResult> {
    let (quick, max_window, resume) = (a.quick, a.max_window, !a.fresh);
    let started = Instant::now();
    let reused = AtomicUsize::new(0);
    let run_window =
        |window: Option<&str>| run_window(exp, window, &a.overrides, out, pool, resume, &reused);
    let (window, converged, runs) = if !exp.windowed {
        (String::new(), None, run_window(None)?)
    } else if quick {
        ("4ms".to_string(), None, run_window(Some("4ms"))?)
    } else {
        let base: irn_core::Duration = scenario::parse(exp.scenario, exp.id, Path::new("."), &[])?
            .runs
            .first()
            .and_then(|r| r.resolved.workload.duration.as_deref().map(str::parse))
            .transpose()?
            .unwrap_or(irn_core::Duration::from_ms(20));
        let mut window = base;
        let mut runs = run_window(Some(&window.to_string()))?;
        // `None` when --max-window leaves no room to double even once.
        let mut converged = None;
        while window * 2 <= max_window && converged != Some(true) {
            let doubled = window * 2;
            let next = run_window(Some(&doubled.to_string()))?;
            let (a, b) = (outcomes(exp, &runs)?, outcomes(exp, &next)?);
            converged = Some(
                a.iter()
                    .zip(&b)
                    .all(|(x, y)| (y.ours / x.ours - 1.0).abs() <= CONVERGED),
            );
            window = doubled;
            runs = next;
        }
        (window.to_string(), converged, runs)
    };
    Ok(FigureResult {
        figure: exp.id,
        title: exp.title,
        window,
        converged,
        outcomes: outcomes(exp, &runs)?,
        wall_time_s: started.elapsed().as_secs_f64(),
        reused_runs: reused.into_inner(),
        chart: chart(exp, &runs)?,
    })
}

/// How a figure's window was chosen, in words.
fn window_note(r: &FigureResult) -> String {
    match (r.window.is_empty(), r.converged) {
        (true, _) => format!("incast: one event, no window; averaged over {INCAST_REPETITIONS} seeds"),
        (false, Some(true)) => format!("window {}: doubling it moved no ratio by more than 5 %", r.window),
        (false, Some(false)) => format!("window {}: not converged (a ratio still moved by more than 5 % when the window doubled)", r.window),
        (false, None) => format!("window {} (convergence not checked)", r.window),
    }
}

/// `report.md`: every check in one Markdown table, for a README or a paper's appendix.
fn markdown(results: &[FigureResult], quick: bool) -> String {
    let mut m = String::from("# IRN (SIGCOMM 2018): the paper's results against irn's\n\n");
    let (held, all) = results
        .iter()
        .flat_map(|r| &r.outcomes)
        .fold((0, 0), |(h, a), o| (h + usize::from(o.holds), a + 1));
    let _ = writeln!(
        m,
        "`irn reproduce{}`: {held} of {all} directions hold.\n",
        if quick { " --quick" } else { "" }
    );
    for r in results {
        let _ = writeln!(m, "**{}** — {}.\n", r.title, window_note(r));
        // A point column only for experiments with several grid points.
        let points = r.outcomes.iter().any(|o| !o.point.is_empty());
        if points {
            m.push_str("| point ");
        }
        m.push_str("| ratio | metric | paper | irn | direction |\n");
        if points {
            m.push_str("| --- ");
        }
        m.push_str("| --- | --- | --- | --- | --- |\n");
        for o in &r.outcomes {
            if points {
                let _ = write!(m, "| {} ", o.point);
            }
            let _ = writeln!(
                m,
                "| {} | {} | {} | {:.2}× | {} |",
                o.ratio,
                o.metric,
                o.paper,
                o.ours,
                if o.holds { "holds" } else { "**differs**" }
            );
        }
        m.push('\n');
    }
    m
}

fn html(results: &[FigureResult], quick: bool) -> String {
    let mut h = String::from("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>irn reproduce</title><style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}.ok{color:#070}.no{color:#b00}</style></head><body>");
    let _ = write!(
        h,
        "<h1>IRN (SIGCOMM 2018): the paper's results against irn's</h1>"
    );
    if quick {
        h.push_str("<p><b>Quick run</b>: 4 ms windows, convergence not checked; ratios far from steady state.</p>");
    }
    for r in results {
        let _ = write!(h, "<h2>{}</h2>", escape(r.title));
        let _ = write!(
            h,
            "<p>{}; {:.0} s.</p>",
            escape(&window_note(r)),
            r.wall_time_s
        );
        h.push_str(&r.chart);
        h.push_str("<table><tr><th>point</th><th>ratio</th><th>metric</th><th>paper</th><th>irn</th><th>direction</th></tr>");
        for o in &r.outcomes {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}×</td><td class=\"{}\">{}</td></tr>",
                escape(&o.point),
                escape(&o.ratio),
                o.metric,
                escape(o.paper),
                o.ours,
                if o.holds { "ok" } else { "no" },
                if o.holds { "holds" } else { "differs" }
            );
        }
        h.push_str("</table>");
    }
    h.push_str("</body></html>\n");
    h
}

pub fn reproduce(a: ReproduceArgs) -> Result<()> {
    let all = experiments();
    let chosen: Vec<&Experiment> = if a.figure == "all" {
        all.iter().collect()
    } else {
        all.iter().filter(|e| e.id == a.figure).collect()
    };
    for o in &a.overrides {
        let key = o.split_once('=').map_or(o.as_str(), |(k, _)| k).trim();
        if OWN_KEYS.contains(&key) {
            bail!(
                "--set {o}: reproduce sets `{key}` itself (the window, its warm-up, the incast \
                 seeds); use --quick or --max-window to choose the windows"
            );
        }
    }
    if chosen.is_empty() {
        let ids: Vec<&str> = all.iter().map(|e| e.id).collect();
        bail!(
            "unknown figure `{}`; choose one of: all, {}",
            a.figure,
            ids.join(", ")
        );
    }
    let out = a.out.clone().unwrap_or_else(|| {
        PathBuf::from(if a.quick {
            "results/reproduce-quick"
        } else {
            "results/reproduce"
        })
    });
    claim_folder(&out, Writer::Reproduce)?;
    let pool = crate::run::worker_pool(a.jobs)?;
    let started = Instant::now();
    let mut results = Vec::new();
    for exp in chosen {
        let r = reproduce_one(exp, &a, &out, &pool)?;
        let held = r.outcomes.iter().filter(|o| o.holds).count();
        let reused = match r.reused_runs {
            0 => String::new(),
            1 => "  (1 run reused)".to_string(),
            n => format!("  ({n} runs reused)"),
        };
        println!(
            "{:<11} {:>3}/{:<3} directions hold  {:>6.0} s  {}{reused}",
            r.figure,
            held,
            r.outcomes.len(),
            r.wall_time_s,
            r.window
        );
        results.push(r);
    }
    let json = serde_json::to_string_pretty(&results)? + "\n";
    for (name, text) in [
        ("reproduce.json", json),
        ("report.html", html(&results, a.quick)),
        ("report.md", markdown(&results, a.quick)),
    ] {
        write_file_atomic(&out.join(name), text.as_bytes())?;
    }
    println!(
        "total {:.0} s; report: {}",
        started.elapsed().as_secs_f64(),
        out.join("report.html").display()
    );
    Ok(())
}
