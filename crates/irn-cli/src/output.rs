//! The results folder: written next to its final place and renamed into it at the end, so a
//! failed or interrupted run never leaves a half-written folder behind.
//!
//! Layout (one folder per run; `[[compare]]` scenarios get one subfolder per variant):
//! - `summary.json`: the metrics, the run's wall-clock performance, the resolved scenario;
//! - `flows.csv`: one row per flow;
//! - `fct.txt`: the finished flows in the ns-3 RDMA simulators' FCT format;
//! - `comparison.csv` (comparisons only): one row per variant with the headline metrics.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use irn_sim::metrics::Summary;
use irn_sim::scenario::ScenarioFile;
use irn_sim::RunResult;
use serde::Serialize;

/// How long a run took on the wall clock. Kept apart from the metrics: it is the only part of
/// the results that differs between two runs of the same scenario and seed.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Performance {
    pub wall_time_s: f64,
    pub events_per_s: f64,
    pub sim_ms_per_wall_s: f64,
}

impl Performance {
    pub fn new(summary: &Summary, wall: std::time::Duration) -> Self {
        let secs = wall.as_secs_f64().max(1e-9);
        Performance {
            wall_time_s: secs,
            events_per_s: summary.events as f64 / secs,
            sim_ms_per_wall_s: summary.sim_time_us / 1000.0 / secs,
        }
    }
}

#[derive(Serialize)]
struct SummaryFile<'a> {
    irn_version: &'static str,
    scenario: &'a str,
    variant: &'a str,
    seed: u64,
    metrics: &'a Summary,
    performance: Performance,
    resolved_scenario: &'a ScenarioFile,
}

/// One finished run, ready to write.
pub struct Finished<'a> {
    pub name: &'a str,
    pub resolved: &'a ScenarioFile,
    pub result: RunResult,
    pub performance: Performance,
}

/// A results folder being written at a temporary path beside `dest`.
pub struct Staging {
    tmp: PathBuf,
    dest: PathBuf,
}

impl Staging {
    pub fn new(dest: &Path) -> Result<Self> {
        // Found out now, not after the runs: `commit` replaces only a folder.
        if dest.exists() && !dest.is_dir() {
            bail!(
                "{}: exists and is not a folder; give --out a folder (it is replaced if it exists)",
                dest.display()
            );
        }
        let parent = dest
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
        let name = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "results".into());
        let tmp = parent.join(format!(".{name}.tmp-{}", std::process::id()));
        if tmp.exists() {
            fs::remove_dir_all(&tmp).with_context(|| format!("cannot clear {}", tmp.display()))?;
        }
        fs::create_dir_all(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
        Ok(Staging {
            tmp,
            dest: dest.to_path_buf(),
        })
    }

    /// Writes one run's files into `sub` (empty for the top level).
    pub fn write_run(&self, sub: &str, scenario: &str, seed: u64, run: &Finished) -> Result<()> {
        let dir = if sub.is_empty() {
            self.tmp.clone()
        } else {
            self.tmp.join(sub)
        };
        fs::create_dir_all(&dir)?;
        let mut w = csv::Writer::from_path(dir.join("flows.csv"))?;
        for row in &run.result.flows {
            w.serialize(row)?;
        }
        w.flush()?;
        let fct = std::io::BufWriter::new(fs::File::create(dir.join("fct.txt"))?);
        irn_sim::workload::ns3::write_fct(fct, &run.result.fct)?;
        let summary = SummaryFile {
            irn_version: env!("CARGO_PKG_VERSION"),
            scenario,
            variant: run.name,
            seed,
            metrics: &run.result.summary,
            performance: run.performance,
            resolved_scenario: run.resolved,
        };
        let json = serde_json::to_string_pretty(&summary)?;
        fs::write(dir.join("summary.json"), json + "\n")?;
        Ok(())
    }

    /// Writes `comparison.csv`: one row per variant, the `summary.json` metrics as columns.
    pub fn write_comparison(&self, runs: &[Finished]) -> Result<()> {
        let mut w = csv::Writer::from_path(self.tmp.join("comparison.csv"))?;
        for (i, r) in runs.iter().enumerate() {
            let serde_json::Value::Object(metrics) = serde_json::to_value(&r.result.summary)?
            else {
                unreachable!("a struct serializes to an object")
            };
            if i == 0 {
                w.write_record(
                    std::iter::once("variant").chain(metrics.keys().map(String::as_str)),
                )?;
            }
            let values = metrics.values().map(|v| v.to_string());
            w.write_record(std::iter::once(r.name.to_string()).chain(values))?;
        }
        w.flush()?;
        Ok(())
    }

    /// Moves the finished folder into place, replacing an older one.
    pub fn commit(self) -> Result<PathBuf> {
        if self.dest.exists() {
            fs::remove_dir_all(&self.dest)
                .with_context(|| format!("cannot replace {}", self.dest.display()))?;
        }
        fs::rename(&self.tmp, &self.dest).with_context(|| {
            format!(
                "cannot move results from {} to {}",
                self.tmp.display(),
                self.dest.display()
            )
        })?;
        Ok(self.dest.clone())
    }
}

impl Drop for Staging {
    /// An abandoned staging folder (an error before `commit`) is removed.
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.tmp);
    }
}

/// Folder names from variant names: keep letters, digits, `-`, `_`, `+` and `.`.
pub fn folder_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_+.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}
