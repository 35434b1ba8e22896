//! `irn sweep` and `irn report`: a grid of scenario runs, in parallel, resumable, shardable.
//!
//! A sweep file names a scenario and a grid of keys to vary:
//!
//! ```toml
//! name = "load"
//! scenario = "../default.toml"          # relative to the sweep file; its [[compare]] variants apply
//! set = { "workload.duration" = "5ms" } # optional: fixed overrides for every run
//! seeds = [1, 2, 3]                    # optional: each point once per seed
//! [grid]
//! "workload.load" = [0.3, 0.5, 0.7, 0.9]
//! ```
//!
//! Every grid point × seed × variant is one run, written to `<out>/<point>/<variant>/` (the
//! files of `irn run`, `series/` with a `[monitor]`; with seeds
//! `<out>/<point>/seed_<s>/<variant>/`) by renaming a finished temporary folder into place, so
//! a folder that exists is complete. Rerunning a sweep reuses each run whose folder holds the same resolved scenario
//! and reruns the others (`--fresh`: all): an interrupted sweep loses at most the runs in
//! progress, and an edited one reruns exactly what changed. `--shard i/n` takes every n-th run
//! starting at i (in a fixed order), so n machines can split a sweep; `irn report DIR…` then
//! merges their folders into one `sweep.csv` (and `sweep_summary.csv`, see [`table`]),
//! refusing folders of different sweeps. `irn plot` draws a sweep folder ([`chart`]).
//!
//! The root's marker (`.irn-results`) records the sweep's [`Identity`]: what `report` checks
//! to tell shards of one sweep from shards of another.

mod chart;
mod table;

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use irn_sim::scenario::{self, InputFile, ScenarioFile};
use irn_sim::sim::Footprint;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::memory;
use crate::output::{
    self, claim_folder, finished_run, folder_name, guard_folder, Finished, Marker, Performance,
    Staging, Use, Writer, MARKER,
};
use crate::progress::Bars;
use crate::series::{self, Monitored};
pub use chart::plot_sweep;
use table::{Grid, Run};

#[derive(clap::Args, Debug)]
pub struct SweepArgs {
    /// The sweep file (TOML).
    sweep: PathBuf,
    /// Results folder. Default: `results/<sweep name>`.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// How many runs to simulate at once (each uses one core; at most 1024, and no more than
    /// there are runs to do). Default: all cores.
    #[arg(short = 'j', long, value_name = "N", value_parser = crate::run::jobs)]
    jobs: Option<NonZeroUsize>,
    /// Run only shard I of N (0-based), e.g. `--shard 3/8`: every N-th run starting at I.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Override a key for every run, e.g. `--set workload.duration=5ms` (repeatable), as
    /// `irn run --set` does: over the scenario and the sweep's `set`. A `[grid]` key is refused.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    overrides: Vec<String>,
    /// Rerun every run. By default a run whose folder holds the same resolved scenario is
    /// reused, and one whose scenario changed is rerun.
    #[arg(long)]
    fresh: bool,
    /// Run every point with seeds 1 to N (replaces the sweep file's `seeds`).
    #[arg(long, value_name = "N")]
    seeds: Option<u64>,
    /// Sample ports, NICs and flows every INTERVAL (e.g. `10us`) into each run's
    /// `series/*.csv`: a shorthand for `--set monitor.interval=INTERVAL`, as for `irn run`.
    #[arg(long, value_name = "INTERVAL")]
    monitor: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// Sweep results folders (e.g. one per shard) to merge.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Where to write `sweep.csv` and `sweep_summary.csv`: a new or empty folder, a sweep's
    /// folder or one `irn report` wrote. Default: the first folder.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct SweepFile {
    name: String,
    scenario: String,
    #[serde(default)]
    set: toml::Table,
    /// Checked by [`seeds`], which says what is allowed.
    seeds: Option<toml::Value>,
    grid: toml::Table,
    /// The scenario's `[[compare]]` variants to run, by name; all when absent.
    variants: Option<Vec<String>>,
}

/// The seeds of a sweep: `--seeds N` (1 to N), else the file's `seeds`; empty when neither
/// is given (each run keeps its scenario's seed). Refuses an empty, non-integer, negative or
/// repeated seed, and a `seed` the grid or a `set` also gives.
fn seeds(file: &Path, sweep: &SweepFile, cli: Option<u64>, set: &[String]) -> Result<Vec<u64>> {
    let file = file.display();
    let seeds = match (cli, &sweep.seeds) {
        (Some(0), _) => bail!("--seeds 0: give at least 1 (the runs take seeds 1 to N)"),
        (Some(n), _) => (1..=n).collect(),
        (None, None) => return Ok(Vec::new()),
        (None, Some(value)) => {
            let allowed =
                "a non-empty array of distinct whole numbers from 0 up, e.g. seeds = [1, 2, 3]";
            let items = value
                .as_array()
                .filter(|a| !a.is_empty())
                .with_context(|| format!("{file}: seeds = {value}: want {allowed}"))?;
            let mut seeds = Vec::new();
            for item in items {
                let seed = item
                    .as_integer()
                    .and_then(|i| u64::try_from(i).ok())
                    .with_context(|| {
                        format!("{file}: seeds = {value}: {item} is not a seed; want {allowed}")
                    })?;
                if seeds.contains(&seed) {
                    bail!("{file}: seeds = {value}: {seed} is there twice; want {allowed}");
                }
                seeds.push(seed);
            }
            seeds
        }
    };
    if sweep.grid.contains_key("seed") {
        bail!("{file}: [grid] varies `seed` and the sweep has seeds; give the seeds in one place");
    }
    let key = |o: &str| o.split_once('=').map_or(o, |(k, _)| k).trim().to_string();
    if let Some(o) = (sweep.set.keys().cloned())
        .chain(set.iter().map(|o| key(o)))
        .find(|k| k == "seed")
    {
        bail!("{file}: `{o}` is set and the sweep has seeds, which set it for each run; drop one");
    }
    Ok(seeds)
}

/// One run of the sweep: a grid point and a variant of the scenario.
#[derive(Debug, Clone)]
struct Job {
    /// `key=value` overrides of this grid point (and the sweep's fixed `set`).
    overrides: Vec<String>,
    /// Index into the grid's points.
    point: usize,
    /// The folder of the point (`point_name`).
    point_name: String,
    /// The sweep's seed for this run (`None`: the scenario's).
    seed: Option<u64>,
    variant: String,
    /// The run's scenario, every default filled in, and the data files it reads: a folder
    /// holding a run of another one, or of other data, is rerun.
    resolved: ScenarioFile,
    inputs: Vec<InputFile>,
    /// What the run allocates at set-up, checked against the memory left before any runs.
    floor: Footprint,
}

/// What makes folders parts of one sweep, kept in the sweep root's marker: the grid (keys and
/// values), its point folders, and the resolved scenario of every variant at the first point,
/// so another scenario file, sweep `set` or `--set` shows as a differing key.
#[derive(Serialize, Deserialize, Debug)]
struct Identity {
    grid: Value,
    /// Point folder names, in run order.
    points: Vec<String>,
    /// The sweep's seeds, each point's runs in `seed_<s>/` folders (empty: none, the
    /// scenario's seed, no such folders).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    seeds: Vec<u64>,
    /// Variant name → its resolved scenario at the first point, in the scenario's order.
    variants: Map<String, Value>,
}

impl Identity {
    /// The dotted keys in which two sweeps differ (grid, seeds, then the variants' scenarios).
    fn differing_keys(&self, other: &Identity) -> Vec<String> {
        let mut keys = Vec::new();
        differing_keys(&self.grid, &other.grid, "grid", &mut keys);
        if self.seeds != other.seeds {
            keys.push("seeds".to_string());
        }
        let variants = |i: &Identity| Value::Object(i.variants.clone());
        differing_keys(&variants(self), &variants(other), "", &mut keys);
        keys
    }

    /// The seed of each point's run folders: its seeds, or `None` (the scenario's) alone.
    fn seed_slots(&self) -> Vec<Option<u64>> {
        if self.seeds.is_empty() {
            vec![None]
        } else {
            self.seeds.iter().copied().map(Some).collect()
        }
    }
}

/// Appends to `out` the dotted paths below `path` where `a` and `b` differ.
fn differing_keys(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let extra = y.keys().filter(|k| !x.contains_key(*k));
            for k in x.keys().chain(extra) {
                let sub = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => differing_keys(p, q, &sub, out),
                    _ => out.push(sub),
                }
            }
        }
        _ if a != b => out.push(path.to_string()),
        _ => {}
    }
}

/// `key=value` as `--set` takes it, the value in TOML syntax.
fn assignment(key: &str, value: &toml::Value) -> String {
    format!("{key}={value}")
}

/// Parses `i/n`.
fn parse_shard(s: &str) -> Result<(usize, usize)> {
    let form = "--shard takes I/N, two whole numbers with 0 <= I < N: e.g. `--shard 0/4` runs the \
                first of four shards";
    let (i, n) = s
        .split_once('/')
        .with_context(|| format!("--shard {s}: {form}"))?;
    let whole = |part: &str, name: &str| {
        part.trim().parse::<usize>().map_err(|_| {
            anyhow::anyhow!("--shard {s}: {name} = `{part}` is not a whole number; {form}")
        })
    };
    let (i, n) = (whole(i, "I")?, whole(n, "N")?);
    if n == 0 || i >= n {
        bail!("--shard {s}: need 0 <= I < N");
    }
    Ok((i, n))
}

/// Refuses, before anything runs, a value given twice for one grid key (the same runs twice)
/// and grid points whose folders clash or are too long (values that differ only in characters
/// folder names replace, `a/b` and `a_b`).
fn check_folders(file: &Path, sweep: &SweepFile, grid: &Grid) -> Result<()> {
    for (key, values) in &sweep.grid {
        let values = values.as_array().map_or(&[][..], Vec::as_slice);
        for (i, value) in values.iter().enumerate() {
            let shown = || toml::Value::Array(values.to_vec());
            if values[..i].contains(value) {
                bail!(
                    "{}: [grid] {key:?} = {}: {value} is there twice; give each value once",
                    file.display(),
                    shown()
                );
            }
            let same = quantity(value).and_then(|q| {
                (values[..i].iter()).find(|earlier| quantity(earlier).as_ref() == Some(&q))
            });
            if let Some(earlier) = same {
                bail!(
                    "{}: [grid] {key:?} = {}: {earlier} and {value} are the same value, so their                      points would be the same runs; give each value once",
                    file.display(),
                    shown()
                );
            }
        }
    }
    let shown: Vec<String> = (grid.points.iter())
        .map(|p| {
            let values: Vec<String> = p.values.iter().map(|(k, v)| assignment(k, v)).collect();
            values.join(",")
        })
        .collect();
    for (point, shown) in grid.points.iter().zip(&shown) {
        if point.name.len() > output::NAME_MAX {
            bail!(
                "{}: the [grid] point {shown} makes a folder name of {} bytes, and a folder \
                 name has at most {}; shorten its values",
                file.display(),
                point.name.len(),
                output::NAME_MAX
            );
        }
    }
    let what = format!("{}: the [grid] points", file.display());
    let folders = grid.points.iter().map(|p| p.name.as_str());
    output::distinct(&what, shown.iter().map(String::as_str).zip(folders))
}

/// What a grid value stands for when two spellings mean the same: a number (`1` and `1.0`), or a
/// byte size, duration or rate (`"1MB"` and `"1000KB"`, `"10us"` and `"10000ns"`); `None` for
/// anything else (names, words, tables).
fn quantity(value: &toml::Value) -> Option<(&'static str, String)> {
    use irn_core::{Bandwidth, Duration};
    use irn_sim::units::Bytes;
    match value {
        toml::Value::Integer(i) => Some(("number", (*i as f64).to_string())),
        toml::Value::Float(f) => Some(("number", f.to_string())),
        toml::Value::String(s) => None
            .or_else(|| s.parse::<Bytes>().ok().map(|b| ("bytes", b.0.to_string())))
            .or_else(|| {
                s.parse::<Duration>()
                    .ok()
                    .map(|d| ("time", format!("{d:?}")))
            })
            .or_else(|| {
                s.parse::<Bandwidth>()
                    .ok()
                    .map(|b| ("rate", format!("{b:?}")))
            }),
        _ => None,
    }
}

/// Every run of the sweep, in a fixed order: grid points in lexicographic key order (keys
/// sorted, values in file order), then `seeds`, then the scenario's variants; `set` are the
/// `--set` overrides. Also the grid and the sweep's [`Identity`].
fn jobs(
    file: &Path,
    sweep: &SweepFile,
    set: &[String],
    seeds: &[u64],
) -> Result<(PathBuf, Vec<Job>, Grid, Identity)> {
    let base = file
        .parent()
        .unwrap_or(Path::new("."))
        .join(&sweep.scenario);
    if sweep.grid.is_empty() {
        bail!(
            "{}: [grid] is empty: give at least one key and the values to sweep it over (to run \
             the scenario alone, use `irn run`)",
            file.display()
        );
    }
    // Counted before the grid's points are built, seeds included.
    table::check_size(&file.display().to_string(), &sweep.grid, seeds.len())?;
    let grid = Grid::new(&file.display().to_string(), &sweep.grid)?;
    if let Some(key) = sweep.set.keys().find(|k| sweep.grid.contains_key(*k)) {
        bail!(
            "{}: `set` gives `{key}`, which [grid] varies, so one of them would be ignored; set \
             it in one place only",
            file.display()
        );
    }
    check_folders(file, sweep, &grid)?;
    if let Some(names) = &sweep.variants {
        check_variants(file, &base, names)?;
    }
    for o in set {
        let key = o.split_once('=').map_or(o.as_str(), |(k, _)| k).trim();
        if sweep.grid.contains_key(key) {
            bail!(
                "--set {o}: {} varies `{key}` in [grid]; set it in one place only",
                file.display()
            );
        }
    }
    let origins = Origins {
        file,
        set: &sweep.set,
        cli: set,
    };
    let mut fixed: Vec<String> = sweep.set.iter().map(|(k, v)| assignment(k, v)).collect();
    fixed.extend(set.iter().cloned());
    let mut out = Vec::new();
    let mut identity = Identity {
        grid: serde_json::to_value(&sweep.grid)?,
        points: Vec::new(),
        seeds: seeds.to_vec(),
        variants: Map::new(),
    };
    let seeds: Vec<Option<u64>> = if seeds.is_empty() {
        vec![None]
    } else {
        seeds.iter().copied().map(Some).collect()
    };
    for (index, p) in grid.points.iter().enumerate() {
        let mut point = fixed.clone();
        point.extend(p.values.iter().map(|(k, v)| assignment(k, v)));
        identity.points.push(p.name.clone());
        for &seed in &seeds {
            let mut overrides = point.clone();
            overrides.extend(seed.map(|s| format!("seed={s}")));
            // Loading validates this point (every variant) before anything runs.
            let sc = scenario::load_variants(&base, &overrides, sweep.variants.as_deref())
                .map_err(|e| origins.blame(&p.values, e))?;
            // The runs' folders, at every point: a grid over `name` names them point by point.
            let what = origins.name(sc.compare, &base, &p.values);
            let folders = (sc.runs.iter())
                .map(|r| output::sub_folder(&what, &r.name))
                .collect::<Result<Vec<_>>>()?;
            let names = sc.runs.iter().map(|r| r.name.as_str());
            output::distinct(
                &format!("{}: [[compare]] names", base.display()),
                names.zip(folders.iter().map(|f| f.as_str())),
            )?;
            let first = identity.variants.is_empty();
            for run in sc.runs {
                if seed.is_none() || seed == seeds[0] {
                    for w in &run.warnings {
                        errln!("warning: {} / {}: {w}", p.name, run.name);
                    }
                }
                if first {
                    identity
                        .variants
                        .insert(run.name.clone(), serde_json::to_value(&run.resolved)?);
                }
                out.push(Job {
                    overrides: overrides.clone(),
                    point: index,
                    point_name: p.name.clone(),
                    seed,
                    variant: run.name,
                    floor: Footprint::of(&run.config),
                    resolved: run.resolved,
                    inputs: run.inputs,
                });
            }
        }
    }
    Ok((base, out, grid, identity))
}

/// Refuses a sweep's `variants` that are not the scenario's `[[compare]]` names, once for the
/// sweep rather than at its first point; a scenario that does not read is left to its loader
/// to explain.
fn check_variants(file: &Path, base: &Path, names: &[String]) -> Result<()> {
    let Ok(text) = irn_sim::input::read_text(base, irn_sim::input::SCENARIO) else {
        return Ok(());
    };
    let Ok(table) = toml::from_str::<toml::Table>(&text) else {
        return Ok(());
    };
    let all: Vec<&str> = (table.get("compare").and_then(toml::Value::as_array))
        .into_iter()
        .flatten()
        .filter_map(|v| v.get("name")?.as_str())
        .collect();
    scenario::check_variant_choice(&all, names).map_err(|e| {
        let shown: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
        anyhow::anyhow!(
            "{}: variants = [{}]: {e} (in {})",
            file.display(),
            shown.join(", "),
            base.display()
        )
    })
}

/// Where the overrides a sweep hands the scenario loader come from (its `[grid]`, its `set`,
/// the command line's `--set`), so that an error the loader words as `--set KEY` names the
/// place to fix: `SWEEP: [grid] "KEY" = VALUE` or `SWEEP: set "KEY" = VALUE`.
struct Origins<'a> {
    /// The sweep file.
    file: &'a Path,
    set: &'a toml::Table,
    /// The command line's `--set KEY=VALUE`s.
    cli: &'a [String],
}

impl Origins<'_> {
    /// Whether the command line's `--set` gives `key`.
    fn on_command_line(&self, key: &str) -> bool {
        (self.cli.iter()).any(|o| o.split_once('=').map_or(o.as_str(), |(k, _)| k).trim() == key)
    }

    /// Where the override of `key` comes from at a grid point of `values`, as the sweep file
    /// writes it; `None` for the command line's, which the loader names as `--set` already.
    fn of(&self, key: &str, values: &[(String, toml::Value)]) -> Option<String> {
        if self.on_command_line(key) {
            return None;
        }
        let file = self.file.display();
        if let Some((_, v)) = values.iter().find(|(k, _)| k == key) {
            return Some(format!("{file}: [grid] {key:?} = {v}"));
        }
        (self.set.get(key)).map(|v| format!("{file}: set {key:?} = {v}"))
    }

    /// The error of loading the scenario at a grid point of `values`, said where it was made:
    /// a key or value the sweep gave, at that key of the sweep file; anything else at the
    /// point, in the scenario file's words.
    fn blame(&self, values: &[(String, toml::Value)], e: scenario::ScenarioError) -> anyhow::Error {
        use scenario::ScenarioError::{Invalid, Syntax};
        let at_key = match &e {
            Syntax { message, .. } => (message.strip_prefix("--set "))
                .and_then(|rest| rest.split_once(':'))
                .and_then(|(key, rest)| Some(format!("{}:{rest}", self.of(key, values)?))),
            Invalid { key, allowed, .. } => {
                (self.of(key, values)).map(|at| format!("{at}: {allowed}"))
            }
            _ => None,
        };
        at_key.map_or_else(
            || {
                let shown: Vec<String> = values.iter().map(|(k, v)| assignment(k, v)).collect();
                anyhow::anyhow!(
                    "{}: [grid] point {}: {e}",
                    self.file.display(),
                    shown.join(",")
                )
            },
            anyhow::Error::msg,
        )
    }

    /// What names the runs at a grid point of `values`, for an error about their folders: the
    /// scenario's `[[compare]]` names (`compare`), else its `name`, as `--set`, the grid, the
    /// sweep's `set` or the scenario file `base` gives it.
    fn name(&self, compare: bool, base: &Path, values: &[(String, toml::Value)]) -> String {
        let file = self.file.display();
        if compare {
            format!("{}: [[compare]] name", base.display())
        } else if self.on_command_line("name") {
            "--set name".to_string()
        } else if values.iter().any(|(k, _)| k == "name") {
            format!("{file}: [grid] \"name\"")
        } else if self.set.contains_key("name") {
            format!("{file}: set \"name\"")
        } else {
            format!("{}: name", base.display())
        }
    }
}

/// For a scenario file given to `irn sweep` (it has no `scenario` but a scenario's own
/// tables): how to run or sweep it instead; empty otherwise.
fn scenario_file_hint(text: &str) -> &'static str {
    let scenario_keys = ["topology", "workload", "transport", "switch", "compare"];
    match toml::from_str::<toml::Table>(text) {
        Ok(t)
            if !t.contains_key("scenario") && scenario_keys.iter().any(|k| t.contains_key(*k)) =>
        {
            "\nthis is a scenario file: run it with `irn run`, or sweep it from a sweep file that \
             names it (`scenario = \"...\"` and a `[grid]` of keys and their values)"
        }
        _ => "",
    }
}

/// Reads and parses a sweep file; a scenario file given instead says how to run it.
fn read(path: &Path) -> Result<SweepFile> {
    let text = irn_sim::input::read_text(path, irn_sim::input::SCENARIO)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    toml::from_str(&text).map_err(|e| {
        let e = e.to_string();
        anyhow::anyhow!(
            "{}: {}{}{}",
            path.display(),
            e.trim_end(),
            scenario::typo_hint(&e),
            scenario_file_hint(&text)
        )
    })
}

/// Whether `path` reads as a sweep file (it names a `scenario` and has a `[grid]`), which
/// `irn validate` checks as one; anything else, unreadable files included, is read as a
/// scenario, whose errors say what is wrong.
pub fn is_sweep_file(path: &Path) -> bool {
    let text = irn_sim::input::read_text(path, irn_sim::input::SCENARIO).unwrap_or_default();
    scenario::is_sweep_text(&text)
}

/// `irn validate` of a sweep file: every point of its grid (every seed, every variant) is
/// loaded and checked as `irn sweep` does before it runs anything, so a value refused at one
/// point is found without running the points before it. Warnings go to stderr, once per
/// point and variant.
pub fn validate(path: &Path, overrides: &[String]) -> Result<()> {
    let sweep = read(path)?;
    let seeds = seeds(path, &sweep, None, overrides)?;
    let (base, jobs, grid, _) = jobs(path, &sweep, overrides, &seeds)?;
    let free = memory::available();
    for job in &jobs {
        memory::check(
            &format!("{}: {}", path.display(), job.label()),
            &job.floor,
            free,
        )?;
    }
    let variants = jobs
        .iter()
        .filter(|j| j.point == 0 && j.seed == jobs[0].seed)
        .count();
    outln!(
        "{}: sweep `{}` is valid: {} point(s) of {} × {} seed(s) × {} variant(s) = {} run(s)",
        path.display(),
        sweep.name,
        grid.points.len(),
        base.display(),
        seeds.len().max(1),
        variants,
        jobs.len()
    );
    for p in &grid.points {
        let values: Vec<String> = p.values.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        outln!("  {}: {}", p.name, values.join(", "));
    }
    Ok(())
}

pub fn sweep(a: SweepArgs) -> Result<()> {
    let sweep = read(&a.sweep)?;
    let overrides = crate::run::with_monitor(&a.overrides, a.monitor.as_deref());
    let seeds = seeds(&a.sweep, &sweep, a.seeds, &overrides)?;
    let (base, all, grid, identity) = jobs(&a.sweep, &sweep, &overrides, &seeds)?;
    let out = match a.out {
        Some(out) => out,
        None => {
            let what = format!("{}: name", a.sweep.display());
            PathBuf::from("results").join(output::top_folder(&what, &sweep.name)?)
        }
    };
    let _lock = output::lock(&out)?;
    guard_folder(&out, Writer::Sweep, Use::WriteInto, &[])?;
    output::guard_own_entries(&out, &table::TABLES)?;
    let (shard, shards) = a
        .shard
        .as_deref()
        .map(parse_shard)
        .transpose()?
        .unwrap_or((0, 1));
    let mine: Vec<Job> = all
        .iter()
        .enumerate()
        .filter(|(i, _)| i % shards == shard)
        .map(|(_, j)| j.clone())
        .collect();
    let todo: Vec<Job> = mine
        .iter()
        .filter(|j| a.fresh || finished_run(&run_dir(&out, j), &j.resolved, &j.inputs).is_none())
        .cloned()
        .collect();
    let free = memory::available();
    for job in &todo {
        let what = format!("{}: {}", a.sweep.display(), job.label());
        memory::check(&what, &job.floor, free)?;
        output::guard_rerun(&run_dir(&out, job))?;
    }
    let changed = todo
        .iter()
        .filter(|j| run_dir(&out, j).join("summary.json").exists())
        .count();
    outln!(
        "sweep `{}`: {} runs, {} in this shard, {} already done, {} to run ({} of them {})",
        sweep.name,
        all.len(),
        mine.len(),
        mine.len() - todo.len(),
        todo.len(),
        changed,
        if a.fresh {
            "done before: --fresh"
        } else {
            "done before for a scenario, a data file or by an irn since changed"
        }
    );
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let earlier = Marker::read(&out);
    let marker = Marker {
        sweep: Some(serde_json::to_value(&identity)?),
        files: (earlier.as_ref())
            .and_then(|m| m.files.clone())
            .or(Some(Vec::new())),
        checksums: earlier.map(|m| m.checksums).unwrap_or_default(),
        ..Marker::new(Writer::Sweep)
    };
    marker.write(&out)?;
    let inputs = [a.sweep.clone(), base.clone()];
    let floors: Vec<Footprint> = todo.iter().map(|j| j.floor).collect();
    let threads = memory::parallelism(&floors, crate::run::threads(a.jobs, todo.len()), free);
    let pool = crate::run::worker_pool(NonZeroUsize::new(threads), todo.len())?;
    let done = Arc::new(AtomicUsize::new(0));
    output::on_interrupt(interrupted(
        &out,
        (mine.len() - todo.len(), mine.len(), shards > 1),
        Arc::clone(&done),
    ));
    let bars = Bars::new(todo.len());
    let results: Vec<Result<()>> = pool.install(|| {
        todo.par_iter()
            .map(|job| {
                run_one(&base, &out, job, &inputs, &bars, sweep.variants.as_deref())?;
                let k = done.fetch_add(1, Ordering::Relaxed) + 1;
                bars.println(&format!("[{k}/{}] {}", todo.len(), job.label()));
                Ok(())
            })
            .collect()
    });
    // The bars draw their last before what follows on stdout.
    drop(bars);
    for r in results {
        r?;
    }
    // The runs of the sweep as it is now: not those of points since removed from the grid, nor
    // other shards' runs of a scenario since changed.
    let mut records = Vec::new();
    for job in &all {
        if let Some(run) = read_own_run(&run_dir(&out, job))? {
            let current = run.irn_model == irn_sim::MODEL_ID;
            if current && run.resolved == serde_json::to_value(&job.resolved)? {
                records.push((job.point, job.variant.as_str(), run));
            }
        }
    }
    let runs: Vec<Run> = (records.iter())
        .map(|(point, variant, run)| Run {
            point: *point,
            seed: run.seed,
            variant,
            metrics: &run.metrics,
        })
        .collect();
    table::write_tables(&out, &grid, &runs)?;
    outln!(
        "results: {} ({} runs in sweep.csv)",
        out.display(),
        runs.len()
    );
    outln!("{}", crate::report::plot_hint(&out));
    Ok(())
}

/// What `irn sweep` says on Ctrl-C: every run is written whole into its own folder, so the
/// finished ones stay (`before` from earlier commands, of the `runs` of this shard, `now`
/// counting this command's) and a rerun resumes from them; the runs in progress (their
/// temporary folders) are removed.
fn interrupted(
    out: &Path,
    (before, runs, sharded): (usize, usize, bool),
    now: Arc<AtomicUsize>,
) -> impl Fn(&[PathBuf]) -> String + Send + 'static {
    let out = out.to_path_buf();
    let shard = if sharded { " in this shard" } else { "" };
    move |removing| {
        let finished = before + now.load(Ordering::Relaxed);
        let removed = match removing.iter().filter(|p| p.is_dir()).count() {
            0 => "removed nothing".to_string(),
            1 => "removed the 1 unfinished run".to_string(),
            n => format!("removed the {n} unfinished runs"),
        };
        format!(
            "kept {} with {finished} of the {runs} runs{shard} finished, {removed}; the same \
             command runs the rest and writes sweep.csv",
            out.display()
        )
    }
}

impl Job {
    /// `point/variant` or `point/seed_<s>/variant`, as its folder below the sweep's.
    fn label(&self) -> String {
        run_path(&self.point_name, self.seed, &self.variant)
            .display()
            .to_string()
    }
}

/// A run's folder below the sweep's: `<point>/<variant>`, or `<point>/seed_<s>/<variant>`
/// when the sweep has seeds.
fn run_path(point: &str, seed: Option<u64>, variant: &str) -> PathBuf {
    point_path(point, seed).join(folder_name(variant))
}

/// The folder of a point's runs (of one seed) below the sweep's: `<point>`, or
/// `<point>/seed_<s>` when the sweep has seeds.
fn point_path(point: &str, seed: Option<u64>) -> PathBuf {
    let mut path = PathBuf::from(point);
    if let Some(seed) = seed {
        path.push(format!("seed_{seed}"));
    }
    path
}

fn run_dir(out: &Path, job: &Job) -> PathBuf {
    out.join(job.label())
}

/// Runs `job` into its folder below `out`, with its series if the scenario has a `[monitor]`.
fn run_one(
    base: &Path,
    out: &Path,
    job: &Job,
    inputs: &[PathBuf],
    bars: &Bars,
    variants: Option<&[String]>,
) -> Result<()> {
    let sc = scenario::load_variants(base, &job.overrides, variants)?;
    let run = sc
        .runs
        .iter()
        .find(|r| r.name == job.variant)
        .context("variant vanished from the scenario")?;
    let mut inputs = inputs.to_vec();
    inputs.extend(output::scenario_inputs(Some(base), &run.resolved));
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    let staging = Staging::new(&run_dir(out, job), Writer::Sweep, &inputs)?;
    let monitored = run.config.monitor.is_some();
    staging.refuse_in_the_way(&output::run_files(Path::new(""), false, monitored))?;
    let started = Instant::now();
    let mut report = bars.reporter(&job.label());
    let result = series::run(&run.config, &staging.run_dir("")?, &mut report)?;
    let performance = Performance::new(&result, started.elapsed());
    let finished = Finished {
        name: &run.name,
        resolved: &run.resolved,
        inputs: &run.inputs,
        result,
        performance,
    };
    staging.write_run("", &sc.name, run.config.seed, &finished)?;
    staging.commit()?;
    Ok(())
}

/// One finished run as `summary.json` holds it: what `sweep.csv` shows and what tells two runs
/// apart (the wall-clock `performance` is left out: it differs between identical runs).
#[derive(Deserialize, PartialEq, Debug)]
struct RunRecord {
    /// The simulator that made it ([`irn_sim::MODEL_ID`]; empty from an irn before the key).
    #[serde(default)]
    irn_model: String,
    seed: u64,
    metrics: Map<String, Value>,
    /// The data files it read, with their checksums (none: absent).
    #[serde(default)]
    inputs: Value,
    #[serde(rename = "resolved_scenario")]
    resolved: Value,
}

/// The run in `dir`, for a table of irn's numbers: [`read_run`], and an error when its
/// `summary.json` was changed since irn wrote it.
fn read_own_run(dir: &Path) -> Result<Option<RunRecord>> {
    let run = read_run(dir)?;
    if run.is_some() {
        output::refuse_edited(dir, "summary.json")?;
    }
    Ok(run)
}

/// The run in `dir`; `None` when it has not finished (no `summary.json`).
fn read_run(dir: &Path) -> Result<Option<RunRecord>> {
    let path = dir.join("summary.json");
    let Ok(text) = irn_sim::input::read_text(&path, irn_sim::input::RESULT) else {
        return Ok(None);
    };
    let run: RunRecord = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a summary.json irn wrote", path.display()))?;
    // The metrics go to `sweep.csv` as they are: each must be what irn writes for its key (a
    // number, `null` for none), or an edited or foreign file would put text in a number column.
    let typed = serde_json::Value::Object(run.metrics.clone());
    serde_path_to_error::deserialize::<_, irn_sim::metrics::Summary>(typed).map_err(|e| {
        anyhow::anyhow!(
            "{}: metrics.{}: {}; not a summary.json irn wrote (rerun this run to write it again)",
            path.display(),
            e.path(),
            e.inner()
        )
    })?;
    Ok(Some(run))
}

/// The monitored runs of the sweep folder `dir` (those with `series/ports.csv`), grouped by
/// point (and seed), in grid order: each group's folder below `dir` and its runs, labelled with
/// their variants when the scenario has several. Empty for a folder that holds no runs (one
/// `irn report --out` merged shards into) or no monitored ones.
fn monitored_runs(dir: &Path) -> Result<Vec<(PathBuf, Vec<Monitored>)>> {
    let Ok(identity) = sweep_identity(dir) else {
        return Ok(Vec::new());
    };
    let seeds = identity.seed_slots();
    let several = identity.variants.len() > 1;
    let mut groups = Vec::new();
    for point in &identity.points {
        for &seed in &seeds {
            let mut runs = Vec::new();
            for variant in identity.variants.keys() {
                let run_dir = dir.join(run_path(point, seed, variant));
                let Some(run) = read_run(&run_dir)? else {
                    continue;
                };
                let label = if several { variant.as_str() } else { "" };
                runs.extend(Monitored::find(label, &run_dir, &run.resolved));
            }
            if !runs.is_empty() {
                groups.push((point_path(point, seed), runs));
            }
        }
    }
    Ok(groups)
}

/// The runs `report` found, by (point, seed, variant) indices, so that they sort in grid
/// order; each with the run folder it came from.
type Rows = BTreeMap<(usize, usize, usize), (PathBuf, RunRecord)>;

/// The identity of the sweep whose root is `dir`, from its marker; refuses any other folder.
fn sweep_identity(dir: &Path) -> Result<Identity> {
    let marker = Marker::read(dir).filter(|m| m.written_by == Writer::Sweep);
    let Some(identity) = marker.and_then(|m| m.sweep) else {
        bail!(
            "{}: not a sweep results folder (it has no {MARKER} written by `irn sweep` at its \
             top); give the folders `irn sweep --out` wrote (a sweep folder from an irn older \
             than {MARKER}: run the sweep again into a new folder)",
            dir.display()
        );
    };
    serde_json::from_value(identity)
        .with_context(|| format!("{}: cannot read its {MARKER}", dir.display()))
}

/// `irn report DIR…`: merges the runs of sweep folders (e.g. one per shard) into one
/// `sweep.csv` and `sweep_summary.csv`, runs identified by point, seed and variant. Refuses, before writing anything, folders that are not sweep roots, folders of
/// different sweeps, and two different results for the same point and variant.
pub fn report(a: ReportArgs) -> Result<()> {
    let mut rows = Rows::new();
    let mut first: Option<(&Path, Identity)> = None;
    let mut grid = None;
    for dir in &a.dirs {
        let identity = sweep_identity(dir)?;
        if let Some((first_dir, first)) = &first {
            let keys = first.differing_keys(&identity);
            if !keys.is_empty() {
                bail!(
                    "{} and {} hold different sweeps (another sweep file, scenario or --set): \
                     they differ in {}; merge only shards of one sweep",
                    first_dir.display(),
                    dir.display(),
                    keys.join(", ")
                );
            }
        }
        if grid.is_none() {
            grid = Some(identity_grid(dir, &identity)?);
        }
        let seeds = identity.seed_slots();
        let mut found = 0;
        for (p, point) in identity.points.iter().enumerate() {
            for (s, &seed) in seeds.iter().enumerate() {
                for (v, variant) in identity.variants.keys().enumerate() {
                    let run_dir = dir.join(run_path(point, seed, variant));
                    let Some(run) = read_own_run(&run_dir)? else {
                        continue;
                    };
                    found += 1;
                    match rows.entry((p, s, v)) {
                        Entry::Vacant(e) => {
                            e.insert((run_dir, run));
                        }
                        Entry::Occupied(e) if e.get().1 != run => bail!(
                            "{} and {} hold different results for point {point}, seed {}, \
                             variant {variant}; remove the one that is wrong and merge again",
                            e.get().0.display(),
                            run_dir.display(),
                            run.seed
                        ),
                        // The same run twice (e.g. a shard also run whole): one row.
                        Entry::Occupied(_) => {}
                    }
                }
            }
        }
        if found == 0 {
            bail!(
                "no finished runs found in {}: a sweep folder holds <point>/<variant>/summary.json",
                dir.display()
            );
        }
        if first.is_none() {
            first = Some((dir, identity));
        }
    }
    let (Some(grid), Some((_, identity))) = (grid, first) else {
        bail!("irn report takes at least one sweep folder");
    };
    let missing = missing_runs(&identity, &rows);
    let mut made = rows.values();
    if let Some((first_dir, first)) = made.next() {
        if let Some((dir, run)) = made.find(|(_, r)| r.irn_model != first.irn_model) {
            bail!(
                "{} and {} were made by different irn builds (irn_model {:?} and {:?} in their \
                 summary.json), whose numbers may differ; rerun every shard with the same irn",
                first_dir.display(),
                dir.display(),
                first.irn_model,
                run.irn_model
            );
        }
    }
    let out = a.out.clone().unwrap_or_else(|| a.dirs[0].clone());
    let _lock = output::lock(&out)?;
    claim_folder(&out, Writer::Report)?;
    output::guard_own_entries(&out, &table::TABLES)?;
    let variants: Vec<&String> = identity.variants.keys().collect();
    let runs: Vec<Run> = (rows.iter())
        .map(|(&(point, _, v), (_, run))| Run {
            point,
            seed: run.seed,
            variant: variants[v],
            metrics: &run.metrics,
        })
        .collect();
    table::write_tables(&out, &grid, &runs)?;
    if let Some(first) = missing.first() {
        errln!(
            "warning: {} of the sweep's {} runs {} in none of these folders and left out (the \
             first: {}); give every shard's folder, or run the sweep again to finish them",
            missing.len(),
            missing.len() + runs.len(),
            if missing.len() == 1 { "is" } else { "are" },
            first.display()
        );
        outln!(
            "{}: {} of {} runs",
            out.join("sweep.csv").display(),
            runs.len(),
            missing.len() + runs.len()
        );
    } else {
        outln!("{}: {} runs", out.join("sweep.csv").display(), runs.len());
    }
    Ok(())
}

/// The runs of the sweep `identity` names that `rows` lacks, as paths below a sweep folder.
fn missing_runs(identity: &Identity, rows: &Rows) -> Vec<PathBuf> {
    let seeds = identity.seed_slots();
    let mut missing = Vec::new();
    for (p, point) in identity.points.iter().enumerate() {
        for (s, &seed) in seeds.iter().enumerate() {
            for (v, variant) in identity.variants.keys().enumerate() {
                if !rows.contains_key(&(p, s, v)) {
                    missing.push(run_path(point, seed, variant).join("summary.json"));
                }
            }
        }
    }
    missing
}

/// The grid of a sweep folder's [`Identity`], its points checked against the folder names
/// the marker lists.
fn identity_grid(dir: &Path, identity: &Identity) -> Result<Grid> {
    let unreadable = || format!("{}: cannot read the grid in its {MARKER}", dir.display());
    let table: toml::Table =
        serde_json::from_value(identity.grid.clone()).with_context(unreadable)?;
    let grid = Grid::new(&dir.join(MARKER).display().to_string(), &table)?;
    let names: Vec<&String> = grid.points.iter().map(|p| &p.name).collect();
    if names != identity.points.iter().collect::<Vec<_>>() {
        bail!(
            "{}: its grid and its points do not match; run the sweep again into a new folder",
            unreadable()
        );
    }
    Ok(grid)
}
