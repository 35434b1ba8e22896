//! `irn reproduce [FIGURE|PAPER|all] [--quick]`: rerun the papers' experiments and report ours
//! next to the papers', figure by figure; `irn check FILE…` runs a user's experiments the same
//! way.
//!
//! Each experiment is a scenario (the papers' are in `scenarios/paper/`, embedded in the
//! binary) and a list of checks: a ratio of one variant's metric to another's, the direction
//! the paper found (`expect`) and the paper's number for it (`paper`: a value, a range, or one
//! per grid point) or its words (`claim`). Each check gets two verdicts ([`verdict`]): the
//! *direction* (does `expect` hold?) and the *magnitude*: in range (inside the paper's range,
//! or within ±15 % of its single value: [`verdict::IN_RANGE`]), near (within a factor 1.5:
//! [`verdict::NEAR`]), off ×k, reversed ×k (on the other side of 1 from the paper's number), or
//! qualitative (only words). Those constants are the only
//! tolerances; the reports and `reproduce.json` use them through [`verdict::Magnitude`].
//!
//! A full run checks convergence (MODEL.md §4): it runs the window the scenario names, then
//! twice that, and keeps doubling until no ratio moves by more than 5 %
//! ([`verdict::CONVERGED`]) or the maximum window is reached: `--max-window`, by default the
//! paper's own ([`Experiment::default_max_window`]: 80 ms for IRN, 10 ms for Eunomia and HPCC,
//! 20 ms for ConWeave; each documented with its one-core time). Each check says whether it converged at
//! the last window or by how much it still moved. `--quick` runs one short window and says so.
//!
//! Output: `results/reproduce/<figure>/<window>/<variant>/…` (the files of `irn run`),
//! `reproduce.json` (every check with both verdicts, the paper's value and its convergence),
//! `report.md` and `report.html` ([`pages`]: the tally per paper and overall first, then the
//! contents, then per figure the ratios against the paper's bands, the figure's own chart, the
//! monitored runs' time series and the table). The command ends by printing the tally.
//!
//! Every run is written atomically into its own folder, so a rerun into the same results folder
//! reads back each run whose folder holds the same resolved scenario instead of running it
//! again: an interrupted reproduce resumes where it stopped (`--fresh` reruns everything, e.g.
//! after changing irn itself). A run just computed is read back from its files too, so the
//! reports are the same bytes either way. `--set` changes the scenarios every figure starts
//! from.

use std::fmt::Write as _;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use irn_sim::metrics::Summary;
use irn_sim::scenario::{self, Chart, Metric};
use irn_sim::sim::Footprint;
use rayon::prelude::*;

use crate::experiment::{Check, Experiment, Source, Term, PAPERS};
use crate::output::{
    claim_folder, folder_name, write_file_atomic, Finished, Performance, Staging, Writer,
};
use crate::plot::{self, BarGroup};
use crate::progress::Bars;
use crate::report::escape;
use crate::series::{self, Monitored};

pub mod model;
mod pages;
pub mod verdict;

use pages::{FigureResult, Outcome};
use verdict::Magnitude;

#[derive(clap::Args, Debug)]
pub struct ReproduceArgs {
    /// A figure (`fig01` … `fig12`, `fig09_cross`, `robustness`, `eunomia-fig01a` …), a paper
    /// (`irn`, `eunomia`, `conweave`, `hpcc`, `wan`: all its figures) or `all`.
    #[arg(default_value = "all")]
    figure: String,
    /// A reduced run (short windows, no convergence check) that finishes in minutes.
    #[arg(long)]
    quick: bool,
    /// List the figures (of FIGURE's paper, or all): name, paper, title and grid points; run
    /// nothing.
    #[arg(long)]
    list: bool,
    /// Runs at once (each uses one core; at most 1024). Default: all cores.
    #[arg(short = 'j', long, value_name = "N", value_parser = crate::run::jobs)]
    jobs: Option<NonZeroUsize>,
    /// Results folder. Default: results/reproduce (or results/reproduce-quick).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The longest window a full run doubles up to while looking for convergence (each
    /// doubling costs as much as everything before it). Default: each paper's own (irn 80ms,
    /// eunomia 10ms, conweave 20ms, hpcc 10ms; wan's runs have no window). At or below a figure's first window (20 ms for
    /// IRN, 5 ms for Eunomia, ConWeave and HPCC), that window runs once, without the
    /// convergence check; `--quick` is the short run.
    #[arg(long, value_name = "DURATION")]
    max_window: Option<irn_core::Duration>,
    /// Rerun everything. By default a run whose folder already holds its results (same resolved
    /// scenario) is read back instead of rerun, so an interrupted reproduce resumes.
    #[arg(long)]
    fresh: bool,
    /// Override a key in every experiment's scenario, e.g. `--set transport.mtu=4096`
    /// (repeatable), as `irn run --set` does; a figure's own points (the robustness grid, the
    /// incast degrees) apply over it, with a warning naming them. The keys reproduce sets
    /// itself (`workload.duration`, `run.warmup`, `run.measure_until`, `seed`) are refused.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    overrides: Vec<String>,
}

/// Keys `reproduce` sets in every run itself: the window (its warm-up and cool-down) and
/// incast seeds.
const OWN_KEYS: [&str; 4] = [
    "workload.duration",
    "run.warmup",
    "run.measure_until",
    "seed",
];

/// One finished run.
struct RunOutcome {
    point: String,
    /// The seed of a repeated one-off workload's run.
    seed: Option<u64>,
    variant: String,
    /// Its folder.
    dir: PathBuf,
    /// Its `[monitor]` interval (µs), if it has one: its folder has `series/`.
    monitor_us: Option<f64>,
    /// The longest pause at its long link's rate (µs), the NRL slides' unit of time, when it
    /// runs pause control on a WAN: the report draws it as the slides' panel.
    slides_unit_us: Option<f64>,
    /// `summary.json`, where checks find their metrics.
    summary: serde_json::Value,
    /// The single-packet flows' FCTs (for the tail CDF of IRN Fig. 8).
    single: Vec<f64>,
}

type Runs = Vec<RunOutcome>;

/// The FCTs of the measured, finished single-packet flows, from (measured, size, FCT).
fn single_packet_fcts(flows: impl Iterator<Item = (bool, u64, Option<f64>)>, mtu: u64) -> Vec<f64> {
    flows
        .filter(|&(measured, size, _)| measured && size <= mtu)
        .filter_map(|(_, _, fct)| fct)
        .collect()
}

/// A run finished earlier in `dir` for the same resolved scenario and data files: its summary
/// and single-packet FCTs. `None` (rerun it) when the folder is missing, unreadable, for another scenario or
/// changed since irn wrote it (the rerun then refuses to replace it).
fn finished_run(dir: &Path, run: &scenario::Run) -> Option<(Summary, Vec<f64>)> {
    let metrics = crate::output::finished_run(dir, &run.resolved, &run.inputs)?;
    if !crate::output::unchanged(dir, "flows.csv") {
        return None;
    }
    let flows = crate::report::read_flows(dir).ok()?;
    let flows = flows.iter().map(|f| (f.measured, f.size_bytes, f.fct_us));
    Some((
        metrics,
        single_packet_fcts(flows, u64::from(run.resolved.transport.mtu)),
    ))
}

/// What every window of one command's runs shares.
struct Engine<'a> {
    plan: &'a Plan<'a>,
    out: &'a Path,
    pool: &'a rayon::ThreadPool,
    bars: &'a Bars,
    /// The memory left when the command started: a run whose set-up alone needs more is
    /// refused before it runs.
    free: Option<(u64, &'static str)>,
}

/// One run of a window, before it runs: its point, seed, scenario name, run and folder.
type Job = (String, Option<u64>, String, scenario::Run, PathBuf);

/// Runs (or reads back) every run of `exp` at `window`; counts those read back in `reused`.
fn run_window(
    exp: &Experiment,
    window: Option<&str>,
    engine: &Engine,
    reused: &AtomicUsize,
) -> Result<Runs> {
    let mut jobs: Vec<Job> = Vec::new();
    let seeds: Vec<Option<u64>> = match exp.repetitions {
        None => vec![None],
        Some(n) => (1..=n).map(Some).collect(),
    };
    let dir = (engine.out.join(folder_name(&exp.id))).join(window.unwrap_or("incast"));
    for (label, point_overrides) in &exp.points {
        for &seed in &seeds {
            let mut overrides = engine.plan.overrides.to_vec();
            overrides.extend(point_overrides.iter().cloned());
            if let Some(w) = window {
                overrides.extend(window_keys(w, exp, engine.plan.quick)?);
            }
            if let Some(seed) = seed {
                overrides.push(format!("seed={seed}"));
            }
            let sc = exp.runs(&overrides)?;
            let name = sc.name.clone();
            // A variant that runs at some points only (`[[compare]] points`) skips the rest.
            let here = |run: &scenario::Run| {
                (run.points.as_ref()).is_none_or(|only| only.iter().any(|p| p == label))
            };
            for run in sc.runs.into_iter().filter(here) {
                let mut dest = dir.join(folder_name(if label.is_empty() { "all" } else { label }));
                if let Some(seed) = seed {
                    dest = dest.join(format!("seed-{seed}"));
                }
                let dest = dest.join(folder_name(&run.name));
                jobs.push((label.clone(), seed, name.clone(), run, dest));
            }
        }
    }
    // Points or variants whose names differ only in characters folder names replace.
    let folders: Vec<(String, String)> = (jobs.iter())
        .map(|(label, _, _, run, dest)| {
            (format!("{label} {}", run.name), dest.display().to_string())
        })
        .collect();
    crate::output::distinct(
        &format!("{}: the point and variant", exp.file),
        folders.iter().map(|(n, d)| (n.as_str(), d.as_str())),
    )?;
    let outcome = |(label, seed, _, run, dest): &Job, summary: Summary, single| {
        Ok(RunOutcome {
            point: label.clone(),
            seed: *seed,
            variant: run.name.clone(),
            dir: dest.clone(),
            monitor_us: (run.config.monitor.as_ref()).map(|m| m.interval.as_us_f64()),
            slides_unit_us: slides_unit_us(&run.config),
            summary: serde_json::to_value(summary)?,
            single,
        })
    };
    // A user's experiment file, whose folder its data paths are relative to (the shipped
    // ones' are relative to the working folder).
    let file = exp.paper_key.is_empty().then(|| Path::new(&exp.file));
    // First the runs an earlier command finished, so that the overall progress counts only
    // those that run.
    let earlier: Vec<Option<(Summary, Vec<f64>)>> = engine.pool.install(|| {
        (jobs.par_iter())
            .map(|(_, _, _, run, dest)| {
                let resume = engine.plan.resume;
                resume.then(|| finished_run(dest, run)).flatten()
            })
            .collect()
    });
    let to_run = earlier.iter().filter(|e| e.is_none()).count();
    for ((.., run, dest), _) in jobs.iter().zip(&earlier).filter(|(_, e)| e.is_none()) {
        let what = format!("{}: {}", exp.file, dest.display());
        crate::memory::check(&what, &Footprint::of(&run.config), engine.free)?;
        crate::output::guard_rerun(dest)?;
    }
    reused.fetch_add(jobs.len() - to_run, Ordering::Relaxed);
    engine.bars.add_runs(to_run);
    engine.pool.install(|| {
        (jobs.par_iter().zip(earlier))
            .map(|(job, earlier)| match earlier {
                Some((summary, single)) => outcome(job, summary, single),
                None => {
                    let (summary, single) = run_one(job, file, engine)?;
                    outcome(job, summary, single)
                }
            })
            .collect()
    })
}

/// Runs one job into its folder (with its series if it has a `[monitor]`), then reads its
/// summary and single-packet FCTs back from the files it wrote, as a resumed run reads them:
/// what the checks see is what the files say, to the last digit, however the run came about
/// (serde_json's float parsing is not exact, so a value parsed back can differ from the one
/// that was written in its last bit). `file` is the experiment's file, if a user's: it and the
/// files its scenario reads may not be in the folder.
fn run_one(
    (_, _, name, run, dest): &Job,
    file: Option<&Path>,
    engine: &Engine,
) -> Result<(Summary, Vec<f64>)> {
    let inputs = crate::output::scenario_inputs(file, &run.resolved);
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    let staging = Staging::new(dest, Writer::Reproduce, &inputs)?;
    let monitored = run.config.monitor.is_some();
    staging.refuse_in_the_way(&crate::output::run_files(Path::new(""), false, monitored))?;
    let started = Instant::now();
    let bar = dest.strip_prefix(engine.out).unwrap_or(dest).display();
    let mut report = engine.bars.reporter(&bar.to_string());
    let result = series::run(&run.config, &staging.run_dir("")?, &mut report)?;
    let performance = Performance::new(&result, started.elapsed());
    let finished = Finished {
        name: &run.name,
        resolved: &run.resolved,
        inputs: &run.inputs,
        result,
        performance,
    };
    staging.write_run("", name, run.config.seed, &finished)?;
    staging.commit()?;
    finished_run(dest, run)
        .with_context(|| format!("{}: cannot read back the run just written", dest.display()))
}

/// The longest pause at the first long link's rate (µs), when `config` is a WAN whose long
/// inputs run pause control (`rule = "none"`, the yardstick, included): the NRL slides' unit.
fn slides_unit_us(config: &irn_sim::SimConfig) -> Option<f64> {
    let link = config.topology.long_haul_links().first()?;
    if config.pause_control.is_empty() {
        return None;
    }
    let rate = config.topology.ports()[link.b.index()].rate;
    Some(irn_sim::pause::quanta_time(rate, irn_sim::pause::MAX_QUANTA).as_us_f64())
}

/// The keys a run of `window` sets: its arrivals and its unmeasured start and end. Without an
/// experiment's `warmup`, the first tenth of the window (every shipped scenario's own share);
/// with one, that long before the window, which is then measured whole. With a `cooldown`,
/// arrivals go on that long after the window, unmeasured; without, they stop with it (and
/// `run.measure_until` stays unset, so earlier runs are still reused).
fn window_keys(window: &str, exp: &Experiment, quick: bool) -> Result<Vec<String>> {
    let w: irn_core::Duration = window.parse().context("window")?;
    let (warmup, cooldown) = match quick {
        true => (None, None),
        false => (exp.warmup, exp.cooldown),
    };
    let (warmup_key, end) = match warmup {
        None => (format!("{}ps", w.as_ps() / 10), w),
        Some(before) => (before.to_string(), w + before),
    };
    // Written as earlier versions wrote them, so their runs are reused.
    let arrivals = match (warmup, cooldown) {
        (None, None) => window.to_string(),
        (_, None) => end.to_string(),
        (_, Some(after)) => (end + after).to_string(),
    };
    let mut keys = vec![
        format!("workload.duration={arrivals}"),
        format!("run.warmup={warmup_key}"),
    ];
    if cooldown.is_some() {
        keys.push(format!("run.measure_until={end}"));
    }
    Ok(keys)
}

/// How the report names a window: "10ms after a 10ms warm-up, before a 5ms cool-down".
fn window_label(window: &str, exp: &Experiment) -> String {
    let mut label = window.to_string();
    if let Some(before) = exp.warmup {
        label += &format!(" after a {before} warm-up");
    }
    if let Some(after) = exp.cooldown {
        label += &format!(", before a {after} cool-down");
    }
    label
}

/// A term's mean over its runs at `point` (several for repeated one-off workloads); `NaN` when
/// the metric is `null` in one of them (an unfinished incast, an empty size bucket), `None`
/// when the variant has no run there.
fn mean_metric(runs: &Runs, point: &str, term: &Term) -> Option<f64> {
    let values: Vec<f64> = runs
        .iter()
        .filter(|r| r.point == point && r.variant == term.variant)
        .map(|r| term.metric.value(&r.summary).unwrap_or(f64::NAN))
        .collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// One check's ratio at `point` (a term's own point wins): 1 when both sides are 0; `num`'s
/// own value when the check has no `den`. With no value, also which run lacks the metric
/// (`null` in its summary: a size bucket without flows, an ordering metric without a layer),
/// so the report can say so instead of a bare "no value".
fn ratio(exp: &Experiment, runs: &Runs, point: &str, c: &Check) -> Result<(f64, Option<String>)> {
    let at = |t: &Term| {
        let p = t.point.as_deref().unwrap_or(point);
        let value = mean_metric(runs, p, t)
            .with_context(|| format!("{}: no run of `{}`", exp.id, t.variant))?;
        let missing = value.is_nan().then(|| {
            let run = match p {
                "" => t.variant.clone(),
                p => format!("{} ({p})", t.variant),
            };
            format!("no `{}` in {run}", t.metric.label())
        });
        anyhow::Ok((value, missing))
    };
    let (n, num_missing) = at(&c.num)?;
    let Some(den) = &c.den else {
        return Ok((n, num_missing));
    };
    let (d, den_missing) = at(den)?;
    // Both zero (no pause in either, say) is equality, not an undefined ratio.
    let r = if n == 0.0 && d == 0.0 { 1.0 } else { n / d };
    Ok((r, num_missing.or(den_missing)))
}

/// Every check's outcome over `runs`, measured at `window` (convergence not yet known).
fn outcomes(exp: &Experiment, runs: &Runs, window: &str) -> Result<Vec<Outcome>> {
    let mut out = Vec::new();
    for c in &exp.checks {
        // A check between two named points is one outcome; otherwise one per point.
        let points: Vec<&str> = if c.num.point.is_some() {
            vec![""]
        } else {
            (exp.points.iter().map(|(p, _)| p.as_str()))
                .filter(|p| (c.points.as_ref()).is_none_or(|only| only.iter().any(|o| o == p)))
                .collect()
        };
        for point in points {
            let (ours, missing) = ratio(exp, runs, point, c)?;
            let paper = c.paper_at(point);
            let reversed = c.expect.reversed(ours);
            let (magnitude, factor) = Magnitude::of(ours, paper, c.claim.is_some(), reversed);
            out.push(Outcome {
                figure: exp.id.clone(),
                point: point.to_string(),
                ratio: c.ratio(),
                metric: c.metric(),
                paper,
                claim: c.claim.clone(),
                ours,
                infinite: ours == f64::INFINITY,
                expect: c.expect,
                holds: c.expect.holds(ours),
                magnitude,
                factor,
                why: c.why.clone(),
                window: window.to_string(),
                converged: None,
                last_move: None,
                value: c.den.is_none(),
                missing,
            });
        }
    }
    // Grid order: every check at the first point, then the next (as the report reads); checks
    // between two points last.
    let order: Vec<&str> = exp.points.iter().map(|(p, _)| p.as_str()).collect();
    out.sort_by_key(|o| {
        order
            .iter()
            .position(|p| *p == o.point)
            .unwrap_or(usize::MAX)
    });
    Ok(out)
}

/// The figure: the chart `[experiment] chart` names, of the first grid point.
fn chart(exp: &Experiment, runs: &Runs) -> Result<String> {
    let point = &exp.points[0].0;
    let here: Vec<&RunOutcome> = runs.iter().filter(|r| &r.point == point).collect();
    match &exp.chart {
        Chart::SinglePacketTail => {
            let series: Vec<(&str, Vec<f64>)> = here
                .iter()
                .map(|r| (r.variant.as_str(), r.single.clone()))
                .collect();
            plot::tail_cdf(
                &exp.title,
                "single-packet FCT",
                &series,
                (90.0, 99.9),
                plot::fmt_us,
            )
        }
        Chart::Lines(key) => {
            // Linear axes: the grid key's values as they are, the ratios around 1.
            let series: Vec<plot::ErrorBarLine> = exp
                .checks
                .iter()
                .map(|c| {
                    let points = exp
                        .points
                        .iter()
                        .filter_map(|(label, set)| {
                            let x = set
                                .iter()
                                .find_map(|o| o.strip_prefix(&format!("{key}=")))?
                                .parse::<f64>()
                                .ok()?;
                            Some((x, ratio(exp, runs, label, c).ok()?.0, None))
                        })
                        .collect();
                    (format!("{} ({})", c.ratio(), c.metric()), points)
                })
                .collect();
            plot::error_bar_lines(&exp.title, key, "ratio", &series)
        }
        Chart::VariantLines(lines) => variant_lines(exp, runs, lines),
        Chart::Bars => {
            // Distinct variants in run order (repeated runs list each variant once per seed;
            // a variant that runs at later points only comes after the others).
            let mut variants: Vec<&str> = Vec::new();
            for r in runs {
                if !variants.contains(&r.variant.as_str()) {
                    variants.push(r.variant.as_str());
                }
            }
            let mean = |v: &str, p: &str, m: &Metric| {
                let term = Term {
                    variant: v.to_string(),
                    point: None,
                    metric: m.clone(),
                };
                mean_metric(runs, p, &term)
            };
            // Each group's label with its unit, from the key's suffix.
            let labels: Vec<String> = exp.chart_metrics.iter().map(labelled).collect();
            let grid = dimensions(exp).iter().any(|(_, points)| points.len() > 1);
            if exp.points.len() > 1 && !grid {
                // Points that are not a grid (the WAN's round trips and rates): one chart per
                // metric, a group per point, so that no point is left out.
                let mut svg = String::new();
                for (m, label) in exp.chart_metrics.iter().zip(&labels) {
                    let groups: Vec<BarGroup> = (exp.points.iter())
                        .map(|(p, _)| BarGroup {
                            label: p,
                            values: variants.iter().map(|v| mean(v, p, m)).collect(),
                            format: |v| plot::fmt_sig(v, 3),
                        })
                        .collect();
                    let title = format!("{}: {label}", exp.title);
                    svg.push_str(&plot::grouped_bars(&title, &variants, &groups)?);
                }
                return Ok(svg);
            }
            let groups: Vec<BarGroup> = exp
                .chart_metrics
                .iter()
                .zip(&labels)
                .map(|(m, label)| BarGroup {
                    label,
                    values: variants.iter().map(|v| mean(v, point, m)).collect(),
                    format: |v| plot::fmt_sig(v, 3),
                })
                .collect();
            let title = if point.is_empty() {
                exp.title.clone()
            } else {
                format!("{} ({point})", exp.title)
            };
            let mut svg = plot::grouped_bars(&title, &variants, &groups)?;
            // A grid: one more chart per dimension (the name before `=` in `dim=value`
            // points), the first metric at each of its points.
            let first = &exp.chart_metrics[0];
            for (dim, points) in dimensions(exp) {
                if points.len() < 2 {
                    continue;
                }
                let groups: Vec<BarGroup> = points
                    .iter()
                    .map(|p| BarGroup {
                        label: p,
                        values: variants.iter().map(|v| mean(v, p, first)).collect(),
                        format: |v| plot::fmt_sig(v, 3),
                    })
                    .collect();
                let title = format!("{}: {} against {dim}", exp.title, labelled(first));
                svg.push_str(&plot::grouped_bars(&title, &variants, &groups)?);
            }
            Ok(svg)
        }
    }
}

/// [`Chart::VariantLines`]: per metric, a chart of its value (over `per`) against the number
/// after `=` in each variant's name (`C=20`), a line per grid point; variants without such a
/// number are left out.
fn variant_lines(exp: &Experiment, runs: &Runs, lines: &[scenario::VariantLine]) -> Result<String> {
    let mut variants: Vec<(&str, f64)> = Vec::new();
    for r in runs {
        let x = r
            .variant
            .split_once('=')
            .and_then(|(_, x)| x.trim().parse().ok());
        if let Some(x) = x.filter(|_| !variants.iter().any(|(v, _)| *v == r.variant)) {
            variants.push((&r.variant, x));
        }
    }
    variants.sort_by(|a, b| a.1.total_cmp(&b.1));
    let x_desc = (variants.first())
        .and_then(|(v, _)| v.split_once('='))
        .map_or("variant", |(name, _)| name.trim());
    let mut svg = String::new();
    for line in lines {
        let metric = Metric::parse(&line.metric).map_err(anyhow::Error::msg)?;
        let per = line.per.unwrap_or(1.0);
        let series: Vec<plot::ErrorBarLine> = (exp.points.iter())
            .map(|(point, _)| {
                let values = (variants.iter())
                    .filter_map(|&(v, x)| {
                        let term = Term {
                            variant: v.to_string(),
                            point: None,
                            metric: metric.clone(),
                        };
                        let y = mean_metric(runs, point, &term)?;
                        y.is_finite().then_some((x, y / per, None))
                    })
                    .collect();
                (point.clone(), values)
            })
            .collect();
        let label = line.label.as_deref().unwrap_or(&line.metric);
        let title = format!("{}: {label}", exp.title);
        svg.push_str(&plot::error_bar_lines(&title, x_desc, label, &series)?);
    }
    Ok(svg)
}

/// The grid's points by dimension, in order: `load=0.3` and `load=0.5` are points of `load`.
fn dimensions(exp: &Experiment) -> Vec<(&str, Vec<&str>)> {
    let mut dims: Vec<(&str, Vec<&str>)> = Vec::new();
    for (name, _) in &exp.points {
        let dim = name.split_once('=').map_or(name.as_str(), |(d, _)| d);
        match dims.iter_mut().find(|(d, _)| *d == dim) {
            Some((_, points)) => points.push(name),
            None => dims.push((dim, vec![name])),
        }
    }
    dims
}

/// A metric's label with its unit when its key names one (`…_us`, `…_bytes`, `…_gbps`).
fn labelled(m: &Metric) -> String {
    let key = m.as_str();
    let unit = [("_us", "µs"), ("_bytes", "B"), ("_gbps", "Gb/s")]
        .iter()
        .find(|(suffix, _)| !key.contains('/') && key.ends_with(suffix))
        .map(|(_, unit)| *unit);
    match unit {
        Some(unit) => format!("{} ({unit})", m.label()),
        None => m.label().to_string(),
    }
}

/// How the engine runs: the options `irn reproduce` and `irn check` share.
struct Plan<'a> {
    quick: bool,
    /// The longest window convergence doubles up to (at or below an experiment's window, that
    /// window runs once); `None`: each experiment's paper's default
    /// ([`Experiment::default_max_window`]).
    max_window: Option<irn_core::Duration>,
    resume: bool,
    overrides: &'a [String],
}

fn run_experiment(exp: &Experiment, engine: &Engine) -> Result<FigureResult> {
    let started = Instant::now();
    let reused = AtomicUsize::new(0);
    let plan = engine.plan;
    let run_window = |window: Option<&str>| run_window(exp, window, engine, &reused);
    let (window, converged, runs, outcomes) = if let Source::Model(model) = exp.source {
        // Computed afresh: deterministic and well under a second.
        let runs = model::runs(model)?;
        let outcomes = outcomes(exp, &runs, model::WINDOW)?;
        (String::new(), None, runs, outcomes)
    } else if !exp.windowed() {
        let runs = run_window(None)?;
        let outcomes = outcomes(exp, &runs, "")?;
        (String::new(), None, runs, outcomes)
    } else if plan.quick {
        let w = exp.quick_window.clone();
        let runs = run_window(Some(&w))?;
        let outcomes = outcomes(exp, &runs, &w)?;
        (w, None, runs, outcomes)
    } else {
        let base = exp.window;
        let max_window = plan.max_window.unwrap_or_else(|| exp.default_max_window());
        let mut window = base;
        let mut runs = run_window(Some(&window.to_string()))?;
        let mut outcomes = outcomes(exp, &runs, &window.to_string())?;
        // `None` when the maximum leaves no room to double even once.
        let mut converged = None;
        while window * 2 <= max_window && converged != Some(true) {
            let doubled = window * 2;
            let next = run_window(Some(&doubled.to_string()))?;
            let mut after = self::outcomes(exp, &next, &doubled.to_string())?;
            for (a, b) in outcomes.iter().zip(&mut after) {
                let moved = verdict::movement(a.ours, b.ours);
                b.last_move = Some(moved);
                b.converged = Some(verdict::settled(moved));
            }
            converged = Some(after.iter().all(|o| o.converged == Some(true)));
            window = doubled;
            runs = next;
            outcomes = after;
        }
        let label = window_label(&window.to_string(), exp);
        (label, converged, runs, outcomes)
    };
    let (series, series_contents) = series_html(exp, &runs, engine.out)?;
    Ok(FigureResult {
        figure: exp.id.clone(),
        title: exp.title.clone(),
        paper: exp.paper.clone(),
        note: exp.note.clone(),
        window,
        repetitions: exp.repetitions.unwrap_or(0),
        converged,
        outcomes,
        wall_time_s: started.elapsed().as_secs_f64(),
        reused_runs: reused.into_inner(),
        chart: match exp.source {
            Source::Model(model) => model::chart(model, exp, &runs)?,
            Source::Scenario => chart(exp, &runs)?,
        },
        model: matches!(exp.source, Source::Model(_)),
        series,
        series_contents,
    })
}

/// The monitored runs (with `series/ports.csv`) among `runs`, grouped by point and seed, in
/// run order.
fn monitored_groups(runs: &Runs) -> Vec<(&str, Option<u64>, Vec<&RunOutcome>)> {
    let mut groups: Vec<(&str, Option<u64>, Vec<&RunOutcome>)> = Vec::new();
    let monitored = (runs.iter()).filter(|r| r.monitor_us.is_some() && ports_csv(r).is_file());
    for r in monitored {
        match (groups.iter_mut()).find(|(p, s, _)| *p == r.point && *s == r.seed) {
            Some((_, _, here)) => here.push(r),
            None => groups.push((&r.point, r.seed, vec![r])),
        }
    }
    groups
}

fn ports_csv(r: &RunOutcome) -> PathBuf {
    r.dir.join("series").join("ports.csv")
}

/// The time series of the monitored runs (those whose scenario has a `[monitor]`) of the
/// window the checks used: per grid point (and seed), a collapsed section with the charts
/// `irn plot` draws for a run folder (queue occupancy and paused share over time, utilization
/// by link tier), each run's lines labelled with its variant. Empty when no run was monitored.
/// With it, each section's anchor and text for the table of contents.
fn series_html(
    exp: &Experiment,
    runs: &Runs,
    out: &Path,
) -> Result<(String, Vec<(String, String)>)> {
    let mut h = String::new();
    let mut contents = Vec::new();
    for (point, seed, here) in monitored_groups(runs) {
        let monitored: Vec<Monitored> = (here.iter())
            .map(|r| Monitored {
                label: if here.len() > 1 {
                    r.variant.clone()
                } else {
                    String::new()
                },
                ports: ports_csv(r),
                interval_us: r.monitor_us.unwrap_or_default(),
            })
            .collect();
        let at: Vec<String> = [
            (!point.is_empty()).then(|| point.to_string()),
            seed.map(|s| format!("seed {s}")),
        ]
        .into_iter()
        .flatten()
        .collect();
        let id = |chart: &str| {
            let mut id = format!("{}_{chart}", folder_name(&exp.id));
            for part in &at {
                id = format!("{id}_{}", folder_name(part));
            }
            id
        };
        let mut charts = series::charts(
            &monitored,
            series::CHART_IDS.map(id).each_ref().map(String::as_str),
        )?;
        let panels = slides_panels(exp, point, &here, out)?;
        if !panels.is_empty() {
            // The panels draw buffer and pauses run by run; overlaid, the unlimited buffer
            // flattens the others, and pauses are counted in frames rather than their length.
            let overlaid = [series::CHART_IDS[3], series::CHART_IDS[4]].map(id);
            charts.retain(|c| !overlaid.contains(&c.id));
        }
        if charts.is_empty() && panels.is_empty() {
            continue;
        }
        let names: Vec<&str> = here.iter().map(|r| r.variant.as_str()).collect();
        // The runs' folders share their parent: the point's (and seed's) folder.
        let folder = here[0].dir.parent().unwrap_or(out);
        let folder = folder
            .strip_prefix(out)
            .unwrap_or(folder)
            .display()
            .to_string();
        let at = if at.is_empty() {
            String::new()
        } else {
            format!(" at {}", at.join(", "))
        };
        let text = format!("Time series{at}");
        let _ = write!(
            h,
            "<details class=\"series\" id=\"{}\"><summary>{}: {} (series/ports.csv in \
             <code>{}</code>)</summary>",
            escape(&id("series")),
            escape(&text),
            escape(&names.join(", ")),
            escape(&folder)
        );
        for chart in charts {
            let _ = write!(
                h,
                "<section id=\"{}\"><h3>{}</h3><p>{}</p>{}</section>",
                escape(&chart.id),
                escape(&chart.title),
                escape(&chart.note),
                chart.svg.trim()
            );
        }
        if !panels.is_empty() {
            let _ = write!(
                h,
                "<section id=\"{}\"><h3>The slides' panels</h3><p>{}</p>",
                escape(&id("panels")),
                escape(series::PANELS_NOTE)
            );
            for (file, svg) in &panels {
                let _ = write!(
                    h,
                    "<figure class=\"panel\">{}<figcaption><code>{}</code></figcaption></figure>",
                    svg.trim(),
                    escape(file)
                );
            }
            h.push_str("</section>");
        }
        h.push_str("</details>");
        contents.push((id("series"), text));
    }
    Ok((h, contents))
}

/// The NRL slides' panel of each run of `here` (the runs of `point`) that runs pause control
/// on a WAN: (its file under the figure's folder, its SVG). Each is written to
/// `panels/POINT_VARIANT.svg` in the figure's folder, as the report shows it.
fn slides_panels(
    exp: &Experiment,
    point: &str,
    here: &[&RunOutcome],
    out: &Path,
) -> Result<Vec<(String, String)>> {
    let dir = out.join(folder_name(&exp.id)).join("panels");
    let mut panels = Vec::new();
    for r in here {
        let (Some(unit_us), Some(interval_us)) = (r.slides_unit_us, r.monitor_us) else {
            continue;
        };
        let run = Monitored {
            label: String::new(),
            ports: ports_csv(r),
            interval_us,
        };
        let title = if point.is_empty() {
            r.variant.clone()
        } else {
            format!("{}, {point}", r.variant)
        };
        let Some(svg) = series::slides_panel(&run, unit_us, &title)? else {
            continue;
        };
        let name = if point.is_empty() {
            format!("{}.svg", folder_name(&r.variant))
        } else {
            format!("{}_{}.svg", folder_name(point), folder_name(&r.variant))
        };
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        write_file_atomic(&dir.join(&name), svg.as_bytes())?;
        let shown = Path::new(&folder_name(&exp.id)).join("panels").join(&name);
        panels.push((shown.display().to_string(), svg));
    }
    Ok(panels)
}

/// Refuses `--set` of the keys the engine sets itself.
fn check_overrides(overrides: &[String], command: &str) -> Result<()> {
    for o in overrides {
        let key = o.split_once('=').map_or(o.as_str(), |(k, _)| k).trim();
        if OWN_KEYS.contains(&key) {
            bail!(
                "--set {o}: {command} sets `{key}` itself (the window, its warm-up and cool-down, the \
                 incast seeds); use --quick or --max-window to choose the windows"
            );
        }
    }
    Ok(())
}

/// What a grid point does to an override: a point's keys apply over `--set` (they are the
/// experiment), so an override of a key some `points` (name, `KEY=VALUE`s) set is dropped
/// there; a warning for each such override, naming the points and their keys, so it is not
/// dropped unseen.
fn points_over(overrides: &[String], points: &[(String, Vec<String>)]) -> Vec<String> {
    let key = |o: &str| o.split_once('=').map_or(o, |(k, _)| k).trim().to_string();
    // Whether dotted keys `a` and `b` are one, or one lies inside the other.
    let meet = |a: &str, b: &str| {
        let inside = |a: &str, b: &str| a.strip_prefix(b).is_some_and(|r| r.starts_with('.'));
        a == b || inside(a, b) || inside(b, a)
    };
    let mut out = Vec::new();
    for o in overrides {
        let k = key(o);
        let mut set = std::collections::BTreeSet::new();
        let mut over = Vec::new();
        for (name, keys) in points {
            let here: Vec<String> = keys
                .iter()
                .map(|s| key(s))
                .filter(|p| meet(p, &k))
                .collect();
            if !here.is_empty() {
                over.push(name.as_str());
                set.extend(here);
            }
        }
        let which = match over.len() {
            0 => continue,
            n if n == points.len() => format!("every grid point ({}) sets", over.join(", ")),
            1 => format!("grid point {} sets", over[0]),
            _ => format!("grid points {} set", over.join(", ")),
        };
        let set: Vec<String> = set.into_iter().collect();
        let set = set.join(", ");
        let used = match over.len() == points.len() {
            true => "at none of them",
            false => "at the other points only",
        };
        out.push(format!(
            "--set {k}: {which} {set} over it, so --set's {set} is used {used}"
        ));
    }
    out
}

/// Runs `chosen` into `out` and writes the reports; returns whether every direction held.
/// What `irn reproduce` and `irn check` say on Ctrl-C: every run is written whole into its own
/// folder, so the finished ones stay and the same command resumes from them; the runs in
/// progress (their temporary folders) are removed.
fn interrupted(out: &Path) -> impl Fn(&[PathBuf]) -> String + Send + 'static {
    let out = out.to_path_buf();
    move |removing| {
        let removed = match removing.iter().filter(|p| p.is_dir()).count() {
            0 => "removed nothing".to_string(),
            1 => "removed the 1 unfinished run".to_string(),
            n => format!("removed the {n} unfinished runs"),
        };
        format!(
            "kept every finished run in {}, {removed}; the same command reuses them and runs \
             the rest",
            out.display()
        )
    }
}

fn run_all(
    chosen: &[&Experiment],
    plan: &Plan,
    out: &Path,
    jobs: Option<NonZeroUsize>,
    writer: Writer,
    command: &str,
) -> Result<bool> {
    if !plan.overrides.is_empty() {
        // A mistaken --set or --monitor is refused before the results folder is made.
        for exp in chosen.iter().filter(|e| e.source == Source::Scenario) {
            exp.runs(plan.overrides)?;
            for w in points_over(plan.overrides, &exp.points) {
                errln!("warning: {}: {w}", exp.id);
            }
        }
    }
    let what = |e: &Experiment| format!("{}: [experiment] id", e.file);
    let folders = (chosen.iter())
        .map(|e| crate::output::sub_folder(&what(e), &e.id))
        .collect::<Result<Vec<_>>>()?;
    let ids = chosen.iter().map(|e| e.id.as_str());
    crate::output::distinct(
        "experiment ids",
        ids.zip(folders.iter().map(String::as_str)),
    )?;
    let _lock = crate::output::lock(out)?;
    claim_folder(out, writer)?;
    crate::output::on_interrupt(interrupted(out));
    let reports = ["reproduce.json", "report.html", "report.md"];
    crate::output::guard_own_entries(out, &reports)?;
    // Figures add their runs as they go (a window's double, a point's repetitions): no bound.
    let pool = crate::run::worker_pool(jobs, usize::MAX)?;
    let bars = Bars::new(0);
    let engine = Engine {
        plan,
        out,
        pool: &pool,
        bars: &bars,
        free: crate::memory::available(),
    };
    let started = Instant::now();
    let mut results = Vec::new();
    outln!(
        "{:<20} {:>9} {:>8} {:>5} {:>4} {:>5}  {:>7}  window",
        "figure",
        "direction",
        "in range",
        "near",
        "off",
        "qual.",
        "wall"
    );
    for exp in chosen {
        let r = run_experiment(exp, &engine)?;
        let t = r.tally();
        let reused = match r.reused_runs {
            0 => String::new(),
            1 => "  (1 run reused)".to_string(),
            n => format!("  ({n} runs reused)"),
        };
        bars.println(&format!(
            "{:<20} {:>9} {:>8} {:>5} {:>4} {:>5}  {:>5.0} s  {}{reused}",
            r.figure,
            format!("{}/{}", t.holds, t.checks),
            t.in_range,
            t.near,
            t.off,
            t.qualitative,
            r.wall_time_s,
            if r.window.is_empty() {
                "(no window)"
            } else {
                &r.window
            }
        ));
        results.push(r);
    }
    // The bars draw their last before what follows on stdout.
    drop(bars);
    let json = serde_json::to_string_pretty(&results)? + "\n";
    for (name, text) in [
        ("reproduce.json", json),
        ("report.html", pages::html(&results, plan.quick, command)),
        ("report.md", pages::markdown(&results, command)),
    ] {
        write_file_atomic(&out.join(name), text.as_bytes())?;
    }
    crate::output::record(out, &reports)?;
    outln!("\n{}", tally_text(&results));
    outln!(
        "total {:.0} s; report: {}",
        started.elapsed().as_secs_f64(),
        out.join("report.html").display()
    );
    Ok(results.iter().flat_map(|r| &r.outcomes).all(|o| o.holds))
}

/// The tally the command ends with: one line per paper, and all of them when several.
fn tally_text(results: &[FigureResult]) -> String {
    let mut papers: Vec<&str> = Vec::new();
    for r in results {
        if !papers.contains(&r.paper.as_str()) {
            papers.push(&r.paper);
        }
    }
    let mut text = String::from(
        "tally (magnitude: in range ±15 %, near within ×1.5, else off; reversed: off; within an \
         \"up to\" bound: qualitative)",
    );
    for paper in &papers {
        let t = pages::tally(results.iter().filter(|r| r.paper == *paper));
        let name = if paper.is_empty() { "checks" } else { paper };
        let _ = write!(text, "\n  {name}: {}", t.line());
    }
    if papers.len() > 1 {
        let _ = write!(text, "\n  all: {}", pages::tally(results).line());
    }
    text
}

pub fn reproduce(a: ReproduceArgs) -> Result<()> {
    let all = Experiment::shipped()?;
    let chosen: Vec<&Experiment> = all
        .iter()
        .filter(|e| a.figure == "all" || e.id == a.figure || e.paper_key == a.figure)
        .collect();
    check_overrides(&a.overrides, "reproduce")?;
    if chosen.is_empty() {
        let ids: Vec<&str> = all.iter().map(|e| e.id.as_str()).collect();
        bail!(
            "unknown figure `{}`; choose all, a paper ({}) or a figure: {}",
            a.figure,
            PAPERS.join(", "),
            ids.join(", ")
        );
    }
    if a.list {
        list(&chosen);
        return Ok(());
    }
    let out = a.out.clone().unwrap_or_else(|| {
        PathBuf::from(if a.quick {
            "results/reproduce-quick"
        } else {
            "results/reproduce"
        })
    });
    let plan = Plan {
        quick: a.quick,
        max_window: a.max_window,
        resume: !a.fresh,
        overrides: &a.overrides,
    };
    let command = format!("irn reproduce{}", if a.quick { " --quick" } else { "" });
    run_all(&chosen, &plan, &out, a.jobs, Writer::Reproduce, &command)?;
    Ok(())
}

/// `irn reproduce --list`: one line per figure, the name `irn reproduce` takes first.
fn list(chosen: &[&Experiment]) {
    let width = chosen.iter().map(|e| e.id.len()).max().unwrap_or(0);
    for e in chosen {
        let points = match e.points.len() {
            1 => String::new(),
            n => format!(" ({n} points)"),
        };
        let key = e.paper_key;
        outln!("{:width$}  {key:8}  {}{points}", e.id, e.title);
    }
}

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// Scenario files with `[[check]]` sections (and optionally `[experiment]`).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Each experiment's quick window (`[experiment] quick_window`, default 4 ms or its own
    /// window if shorter) instead of its own.
    #[arg(long)]
    quick: bool,
    /// Check convergence: double the window (as `irn reproduce` does) up to this one until no
    /// ratio moves by more than 5 %. Default: the file's window, once.
    #[arg(long, value_name = "DURATION")]
    max_window: Option<irn_core::Duration>,
    /// Runs at once (each uses one core; at most 1024). Default: all cores.
    #[arg(short = 'j', long, value_name = "N", value_parser = crate::run::jobs)]
    jobs: Option<NonZeroUsize>,
    /// Results folder. Default: results/check (or results/check-quick, so a quick pass never
    /// mixes with a full one).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Rerun everything instead of reading back runs already in the results folder.
    #[arg(long)]
    fresh: bool,
    /// Override a key in every experiment's scenario (repeatable), as `irn run --set` does.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    overrides: Vec<String>,
    /// Sample ports, NICs and flows every INTERVAL (e.g. `10us`) into each run's
    /// `series/*.csv`, drawn in the report: a shorthand for `--set monitor.interval=INTERVAL`,
    /// as for `irn run`.
    #[arg(long, value_name = "INTERVAL")]
    monitor: Option<String>,
}

/// `irn check FILE…`: runs a user's checked experiments; the exit status is 1 when a
/// direction does not hold, so a script or CI can depend on it.
pub fn check(a: CheckArgs) -> Result<bool> {
    let overrides = crate::run::with_monitor(&a.overrides, a.monitor.as_deref());
    check_overrides(&overrides, "check")?;
    let experiments = a
        .files
        .iter()
        .map(|f| Experiment::load(f))
        .collect::<Result<Vec<_>>>()?;
    let mut ids = std::collections::BTreeSet::new();
    for e in &experiments {
        if !ids.insert(e.id.as_str()) {
            bail!(
                "{}: experiment id `{}` is used twice; set [experiment] id",
                e.file,
                e.id
            );
        }
    }
    let plan = Plan {
        quick: a.quick,
        max_window: Some(a.max_window.unwrap_or(irn_core::Duration::ZERO)),
        resume: !a.fresh,
        overrides: &overrides,
    };
    let chosen: Vec<&Experiment> = experiments.iter().collect();
    let command = format!("irn check{}", if a.quick { " --quick" } else { "" });
    let out = a.out.clone().unwrap_or_else(|| {
        PathBuf::from(if a.quick {
            "results/check-quick"
        } else {
            "results/check"
        })
    });
    run_all(&chosen, &plan, &out, a.jobs, Writer::Check, &command)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_override_the_points_set_is_named_with_them() {
        let points = |sets: &[(&str, &[&str])]| -> Vec<(String, Vec<String>)> {
            (sets.iter())
                .map(|(n, s)| (n.to_string(), s.iter().map(|s| s.to_string()).collect()))
                .collect()
        };
        let grid = points(&[
            ("a", &["workload.load=0.2"]),
            ("b", &["workload.load=0.5", "transport.mtu=512"]),
            ("c", &["switch.buffer=\"1MB\""]),
        ]);
        for (set, want) in [
            ("transport.cc=\"dcqcn\"", None),
            ("workload.duration=\"1ms\"", None),
            (
                "workload.load=0.9",
                Some("--set workload.load: grid points a, b set workload.load over it, so --set's workload.load is used at the other points only"),
            ),
            (
                "transport={ mtu = 1024 }",
                Some("--set transport: grid point b sets transport.mtu over it, so --set's transport.mtu is used at the other points only"),
            ),
            (
                "switch.buffer=\"2MB\"",
                Some("--set switch.buffer: grid point c sets switch.buffer over it"),
            ),
        ] {
            let got = points_over(&[set.to_string()], &grid);
            match want {
                None => assert!(got.is_empty(), "{set}: {got:?}"),
                Some(want) => assert!(got.len() == 1 && got[0].starts_with(want), "{set}: {got:?}"),
            }
        }
        // None of a model's points (which set nothing) and no grid at all.
        assert!(points_over(&["workload.load=0.9".into()], &points(&[("", &[])])).is_empty());
    }
}
