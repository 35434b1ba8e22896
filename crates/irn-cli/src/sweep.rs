//! `irn sweep` and `irn report`: a grid of scenario runs, in parallel, resumable, shardable.
//!
//! A sweep file names a scenario and a grid of keys to vary:
//!
//! ```toml
//! name = "load"
//! scenario = "../default.toml"          # relative to the sweep file; its [[compare]] variants apply
//! set = { "workload.duration" = "5ms" } # optional: fixed overrides for every run
//! [grid]
//! "workload.load" = [0.3, 0.5, 0.7, 0.9]
//! ```
//!
//! Every grid point × variant is one run, written to `<out>/<point>/<variant>/` (the files of
//! `irn run`) by renaming a finished temporary folder into place, so a folder that exists is
//! complete. Rerunning a sweep skips those runs: an interrupted sweep loses at most the runs in
//! progress. `--shard i/n` takes every n-th run starting at i (in a fixed order), so n machines
//! can split a sweep; `irn report DIR…` then merges their folders into one `sweep.csv`.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use irn_sim::scenario;
use rayon::prelude::*;
use serde::Deserialize;

use crate::output::{folder_name, Finished, Performance, Staging};

#[derive(clap::Args, Debug)]
pub struct SweepArgs {
    /// The sweep file (TOML).
    sweep: PathBuf,
    /// Results folder. Default: `results/<sweep name>`.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// How many runs to simulate at once (each uses one core). Default: all cores.
    #[arg(short = 'j', long, value_name = "N")]
    jobs: Option<NonZeroUsize>,
    /// Run only shard I of N (0-based), e.g. `--shard 3/8`: every N-th run starting at I.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// Sweep results folders (e.g. one per shard) to merge.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Where to write `sweep.csv`. Default: the first folder.
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
    grid: toml::Table,
}

/// One run of the sweep: a grid point and a variant of the scenario.
#[derive(Debug, Clone)]
struct Job {
    /// `key=value` overrides of this grid point (and the sweep's fixed `set`).
    overrides: Vec<String>,
    point: String,
    variant: String,
}

/// `key=value` as `--set` takes it, the value in TOML syntax.
fn assignment(key: &str, value: &toml::Value) -> String {
    format!("{key}={value}")
}

/// The folder name of a grid point, e.g. `workload.load=0.3,topology.k=6`.
fn point_name(values: &[(String, toml::Value)]) -> String {
    let text: Vec<String> = values
        .iter()
        .map(|(k, v)| format!("{k}={}", v.to_string().trim_matches('"')))
        .collect();
    folder_name(&text.join(","))
}

/// Parses `i/n`.
fn parse_shard(s: &str) -> Result<(usize, usize)> {
    let (i, n) = s.split_once('/').context("--shard takes I/N, e.g. 0/4")?;
    let (i, n): (usize, usize) = (
        i.trim().parse().context("--shard I")?,
        n.trim().parse().context("--shard N")?,
    );
    if n == 0 || i >= n {
        bail!("--shard {s}: need 0 <= I < N");
    }
    Ok((i, n))
}

/// Every run of the sweep, in a fixed order: grid points in lexicographic key order (keys
/// sorted, values in file order), then the scenario's variants.
fn jobs(file: &Path, sweep: &SweepFile) -> Result<(PathBuf, Vec<Job>)> {
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
    let mut points: Vec<Vec<(String, toml::Value)>> = vec![vec![]];
    for (key, values) in &sweep.grid {
        let values = values
            .as_array()
            .filter(|a| !a.is_empty())
            .with_context(|| {
                format!(
                    "{}: grid.{key} must be a non-empty array of values",
                    file.display()
                )
            })?;
        points = points
            .into_iter()
            .flat_map(|p| {
                values.iter().map(move |v| {
                    let mut p = p.clone();
                    p.push((key.clone(), v.clone()));
                    p
                })
            })
            .collect();
    }
    let fixed: Vec<String> = sweep.set.iter().map(|(k, v)| assignment(k, v)).collect();
    let mut out = Vec::new();
    for p in points {
        let mut overrides = fixed.clone();
        overrides.extend(p.iter().map(|(k, v)| assignment(k, v)));
        // Loading validates this point (every variant) before anything runs.
        let sc = scenario::load(&base, &overrides)
            .with_context(|| format!("grid point {}", point_name(&p)))?;
        for run in &sc.runs {
            out.push(Job {
                overrides: overrides.clone(),
                point: point_name(&p),
                variant: run.name.clone(),
            });
        }
    }
    Ok((base, out))
}

pub fn sweep(a: SweepArgs) -> Result<()> {
    let text = std::fs::read_to_string(&a.sweep)
        .with_context(|| format!("{}: cannot read", a.sweep.display()))?;
    let sweep: SweepFile =
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", a.sweep.display()))?;
    let (base, all) = jobs(&a.sweep, &sweep)?;
    let out = a
        .out
        .unwrap_or_else(|| PathBuf::from("results").join(folder_name(&sweep.name)));
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
        .filter(|j| !run_dir(&out, j).join("summary.json").exists())
        .cloned()
        .collect();
    println!(
        "sweep `{}`: {} runs, {} in this shard, {} already done, {} to run",
        sweep.name,
        all.len(),
        mine.len(),
        mine.len() - todo.len(),
        todo.len()
    );
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let pool = crate::run::worker_pool(a.jobs)?;
    let done = AtomicUsize::new(0);
    let results: Vec<Result<()>> = pool.install(|| {
        todo.par_iter()
            .map(|job| {
                run_one(&base, &out, job)?;
                let k = done.fetch_add(1, Ordering::Relaxed) + 1;
                println!("[{k}/{}] {}/{}", todo.len(), job.point, job.variant);
                Ok(())
            })
            .collect()
    });
    for r in results {
        r?;
    }
    let rows = write_sweep_csv(std::slice::from_ref(&out), &out)?;
    println!("results: {} ({rows} runs in sweep.csv)", out.display());
    Ok(())
}

fn run_dir(out: &Path, job: &Job) -> PathBuf {
    out.join(&job.point).join(folder_name(&job.variant))
}

fn run_one(base: &Path, out: &Path, job: &Job) -> Result<()> {
    let sc = scenario::load(base, &job.overrides)?;
    let run = sc
        .runs
        .iter()
        .find(|r| r.name == job.variant)
        .context("variant vanished from the scenario")?;
    let dest = run_dir(out, job);
    remove_abandoned(&dest);
    let staging = Staging::new(&dest)?;
    let started = Instant::now();
    let result = irn_sim::run(&run.config, &mut |_| {});
    let performance = Performance::new(&result.summary, started.elapsed());
    let finished = Finished {
        name: &run.name,
        resolved: &run.resolved,
        result,
        performance,
    };
    staging.write_run("", &sc.name, run.config.seed, &finished)?;
    staging.commit()?;
    Ok(())
}

/// Removes temporary folders a killed sweep left beside `dest` (`.<name>.tmp-<pid>`).
fn remove_abandoned(dest: &Path) {
    let (Some(parent), Some(name)) = (dest.parent(), dest.file_name()) else {
        return;
    };
    let prefix = format!(".{}.tmp-", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Collects `<dir>/<point>/<variant>/summary.json` from every folder into `<out>/sweep.csv`:
/// one row per run with its point, variant and metrics. Returns the number of rows.
fn write_sweep_csv(dirs: &[PathBuf], out: &Path) -> Result<usize> {
    let mut rows: BTreeMap<(String, String), serde_json::Map<String, serde_json::Value>> =
        BTreeMap::new();
    for dir in dirs {
        let mut found = 0;
        let points =
            std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
        for point in points {
            let point = point?;
            if !point.file_type()?.is_dir() || point.file_name().to_string_lossy().starts_with('.')
            {
                continue;
            }
            for variant in std::fs::read_dir(point.path())? {
                let variant = variant?;
                // Hidden entries are runs still being written (or abandoned by a killed sweep).
                if variant.file_name().to_string_lossy().starts_with('.') {
                    continue;
                }
                let summary = variant.path().join("summary.json");
                if !summary.exists() {
                    continue;
                }
                let v: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&summary)?)
                        .with_context(|| format!("{}: not a summary", summary.display()))?;
                let Some(metrics) = v["metrics"].as_object() else {
                    bail!("{}: no metrics", summary.display());
                };
                let key = (
                    point.file_name().to_string_lossy().into_owned(),
                    v["variant"].as_str().unwrap_or("").to_string(),
                );
                rows.insert(key, metrics.clone());
                found += 1;
            }
        }
        if found == 0 {
            bail!(
                "no finished runs found in {}: a sweep folder holds <point>/<variant>/summary.json",
                dir.display()
            );
        }
    }
    std::fs::create_dir_all(out)?;
    let tmp = out.join(".sweep.csv.tmp");
    let mut w = csv::Writer::from_path(&tmp)?;
    for (i, ((point, variant), metrics)) in rows.iter().enumerate() {
        if i == 0 {
            w.write_record(
                ["point", "variant"]
                    .into_iter()
                    .chain(metrics.keys().map(String::as_str)),
            )?;
        }
        let values = metrics.values().map(|v| v.to_string());
        w.write_record([point.clone(), variant.clone()].into_iter().chain(values))?;
    }
    w.flush()?;
    drop(w);
    std::fs::rename(&tmp, out.join("sweep.csv"))?;
    Ok(rows.len())
}

pub fn report(a: ReportArgs) -> Result<()> {
    let out = a.out.clone().unwrap_or_else(|| a.dirs[0].clone());
    let rows = write_sweep_csv(&a.dirs, &out)?;
    println!("{}: {rows} runs", out.join("sweep.csv").display());
    Ok(())
}
