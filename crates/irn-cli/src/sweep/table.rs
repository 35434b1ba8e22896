//! The sweep's tables: `sweep.csv`, one row per run, and `sweep_summary.csv`, the mean and 95 %
//! confidence interval of each metric per point and variant over the seeds.
//!
//! Both start with the grid point as typed columns (one per grid key, numbers as numbers and
//! units in the header) so that a spreadsheet or pandas reads a sweep without parsing folder
//! names, and both keep the grid's order (points, then seeds, then the scenario's variants).

use std::collections::BTreeSet;
use std::path::Path;
use std::str::FromStr;

use anyhow::{Context, Result};
use irn_core::time::{Bandwidth, Duration};
use irn_sim::units::Bytes;
use serde_json::{Map, Value};

use crate::output::{self, folder_name, write_file_atomic};

/// How a grid key's values are written in the tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// TOML numbers, as written.
    Number,
    /// Durations (`"2us"`), in µs: header suffix `_us`.
    Duration,
    /// Rates (`"40Gbps"`), in Gb/s: header suffix `_gbps`.
    Rate,
    /// Sizes (`"240KB"`), in bytes: header suffix `_bytes`.
    Size,
    /// Anything else (names, tables, a key whose values mix kinds), as TOML text.
    Text,
}

impl Kind {
    fn of(value: &toml::Value) -> Kind {
        match value {
            toml::Value::Integer(_) | toml::Value::Float(_) => Kind::Number,
            toml::Value::String(s) if Duration::from_str(s).is_ok() => Kind::Duration,
            toml::Value::String(s) if Bandwidth::from_str(s).is_ok() => Kind::Rate,
            toml::Value::String(s) if Bytes::from_str(s).is_ok() => Kind::Size,
            _ => Kind::Text,
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            Kind::Duration => "_us",
            Kind::Rate => "_gbps",
            Kind::Size => "_bytes",
            Kind::Number | Kind::Text => "",
        }
    }

    /// `value` as a table cell in this kind's unit.
    fn cell(self, value: &toml::Value) -> String {
        let parsed = |s: &str| -> Option<String> {
            Some(match self {
                Kind::Duration => number(Duration::from_str(s).ok()?.as_ps() as f64 / 1e6),
                Kind::Rate => number(Bandwidth::from_str(s).ok()?.as_bps() as f64 / 1e9),
                Kind::Size => Bytes::from_str(s).ok()?.0.to_string(),
                Kind::Number | Kind::Text => return None,
            })
        };
        match value {
            toml::Value::String(s) => parsed(s).unwrap_or_else(|| s.clone()),
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => number(*f),
            other => other.to_string(),
        }
    }
}

/// A number as the tables write it: the shortest form that reads back as the same `f64`,
/// without a fraction for whole numbers (`100`, `0.6`, `2.5`).
fn number(x: f64) -> String {
    format!("{x}")
}

/// One grid key: its column header and how its values are written.
#[derive(Debug)]
struct Column {
    header: String,
    kind: Kind,
}

/// One grid point: its folder name and its values, one per grid key in key order.
#[derive(Debug, Clone)]
pub(super) struct Point {
    pub name: String,
    pub values: Vec<(String, toml::Value)>,
}

/// The grid: its points in run order (keys in the grid's order, the last varying fastest,
/// values in file order) and its typed columns.
#[derive(Debug)]
pub(super) struct Grid {
    pub points: Vec<Point>,
    columns: Vec<Column>,
}

/// The most runs one sweep holds, grid points × seeds (each point then runs every variant of
/// the scenario): every run is listed with its resolved scenario before the first starts, and
/// at a second a run this many are more than a day of one core.
pub(super) const MAX_RUNS: u64 = 100_000;

/// Refuses a grid whose points × `seeds` runs (one seed: `seeds` is 0 or 1) pass [`MAX_RUNS`],
/// counted from its value counts before a single point is built: a 1000 × 1000 × 1000 grid would
/// take gigabytes to list.
pub(super) fn check_size(file: &str, grid: &toml::Table, seeds: usize) -> Result<()> {
    let counts: Vec<u64> = (grid.values())
        .map(|v| v.as_array().map_or(1, |a| a.len().max(1) as u64))
        .collect();
    let points = counts.iter().fold(1u64, |n, c| n.saturating_mul(*c));
    let runs = points.saturating_mul(seeds.max(1) as u64);
    if runs <= MAX_RUNS {
        return Ok(());
    }
    let product: Vec<String> = counts.iter().map(u64::to_string).collect();
    let seeds = match seeds {
        0 | 1 => String::new(),
        n => format!(" × {n} seeds = {runs} runs"),
    };
    anyhow::bail!(
        "{file}: [grid] makes {} = {points} points{seeds}, and a sweep runs at most {MAX_RUNS} \
         (points × seeds); give fewer values, or split the grid into several sweeps",
        product.join(" × ")
    )
}

impl Grid {
    /// The grid of `[grid]` in `file`: every key must have a non-empty array of values, and
    /// the grid at most [`MAX_RUNS`] points.
    pub fn new(file: &str, grid: &toml::Table) -> Result<Grid> {
        check_size(file, grid, 1)?;
        let mut points: Vec<Vec<(String, toml::Value)>> = vec![vec![]];
        let mut columns = Vec::new();
        for (key, values) in grid {
            let values = values
                .as_array()
                .filter(|a| !a.is_empty())
                .with_context(|| {
                    format!("{file}: grid.{key} must be a non-empty array of values")
                })?;
            let kinds: BTreeSet<_> = values.iter().map(|v| Kind::of(v) as u8).collect();
            let kind = match kinds.len() {
                1 => Kind::of(&values[0]),
                _ => Kind::Text,
            };
            columns.push(Column {
                header: format!("{key}{}", kind.suffix()),
                kind,
            });
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
        let points = points
            .into_iter()
            .map(|values| Point {
                name: point_name(&values),
                values,
            })
            .collect();
        Ok(Grid { points, columns })
    }

    fn headers(&self) -> impl Iterator<Item = &str> {
        self.columns.iter().map(|c| c.header.as_str())
    }

    fn cells(&self, point: usize) -> impl Iterator<Item = String> + '_ {
        let point = &self.points[point];
        (self.columns.iter().zip(&point.values)).map(|(c, (_, v))| c.kind.cell(v))
    }
}

/// The folder name of a grid point, e.g. `workload.load=0.3,topology.k=6`.
fn point_name(values: &[(String, toml::Value)]) -> String {
    let text: Vec<String> = values
        .iter()
        .map(|(k, v)| format!("{k}={}", v.to_string().trim_matches('"')))
        .collect();
    folder_name(&text.join(","))
}

/// One finished run, as the tables take it.
pub(super) struct Run<'a> {
    /// Index into [`Grid::points`].
    pub point: usize,
    pub seed: u64,
    pub variant: &'a str,
    pub metrics: &'a Map<String, Value>,
}

/// The metric columns of `runs`: every name any run has, in the order they first appear (a
/// grid may give runs different metrics, e.g. `verbs_data_errors` only with verbs).
fn metric_columns(runs: &[Run]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut columns = Vec::new();
    for run in runs {
        for (name, _) in output::flat_metrics(run.metrics) {
            if seen.insert(name.clone()) {
                columns.push(name);
            }
        }
    }
    columns
}

/// The tables a sweep's folder holds: irn overwrites only its own ([`output::guard_own_entries`]).
pub(super) const TABLES: [&str; 2] = ["sweep.csv", "sweep_summary.csv"];

/// Writes `sweep.csv` and `sweep_summary.csv` into `out`, recorded in its marker as irn's;
/// `runs` are in grid order.
pub(super) fn write_tables(out: &Path, grid: &Grid, runs: &[Run]) -> Result<()> {
    let columns = metric_columns(runs);
    write_file_atomic(&out.join(TABLES[0]), &runs_csv(grid, runs, &columns)?)?;
    write_file_atomic(&out.join(TABLES[1]), &summary_csv(grid, runs, &columns)?)?;
    output::record(out, &TABLES)
}

/// `sweep.csv`: `point`, `variant`, `seed`, the grid columns, then the metrics; a metric a run
/// does not have is an empty cell, one it has as `null` is `null` (as in `comparison.csv`), a
/// name (a collective's `op`) is its text, without JSON's quotes.
fn runs_csv(grid: &Grid, runs: &[Run], columns: &[String]) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let header = ["point", "variant", "seed"]
        .into_iter()
        .chain(grid.headers());
    w.write_record(header.chain(columns.iter().map(String::as_str)))?;
    for run in runs {
        let cells = output::flat_metrics(run.metrics);
        let metric = |name: &String| {
            (cells.iter())
                .find(|(n, _)| n == name)
                .map_or(String::new(), |(_, v)| output::cell(v))
        };
        let head = [
            grid.points[run.point].name.clone(),
            run.variant.to_string(),
            run.seed.to_string(),
        ];
        let record =
            (head.into_iter().chain(grid.cells(run.point))).chain(columns.iter().map(metric));
        w.write_record(record)?;
    }
    w.into_inner().context("cannot write sweep.csv")
}

/// The columns of `columns` that hold numbers: those no run of `runs` has as anything but a
/// number or `null` (a collective's `op` and `algorithm` are names, with no mean). In the order
/// of `columns`, and decided by every run, so the same runs give the same columns however they
/// were sharded or scheduled.
fn numeric_columns<'c>(runs: &[Run], columns: &'c [String]) -> Vec<&'c String> {
    let mut named = BTreeSet::new();
    for run in runs {
        for (name, value) in output::flat_metrics(run.metrics) {
            if !value.is_number() && !value.is_null() {
                named.insert(name);
            }
        }
    }
    columns.iter().filter(|c| !named.contains(*c)).collect()
}

/// `sweep_summary.csv`: per point and variant (grid order), the number of runs, then for every
/// metric that is a number ([`numeric_columns`]) `NAME_mean` and `NAME_ci95`, the half-width of
/// the 95 % confidence interval of the mean (Student's t with runs − 1 degrees of freedom).
/// Both are empty unless every run has the metric as a number (a mean over the seeds that
/// happened to have it would be biased); the interval is empty for one run.
fn summary_csv(grid: &Grid, runs: &[Run], columns: &[String]) -> Result<Vec<u8>> {
    let columns = numeric_columns(runs, columns);
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = ["point", "variant"].map(String::from).to_vec();
    header.extend(grid.headers().map(String::from));
    header.push("runs".into());
    for c in &columns {
        header.push(format!("{c}_mean"));
        header.push(format!("{c}_ci95"));
    }
    w.write_record(&header)?;
    // Groups in order of first appearance: runs come point by point, each point's variants in
    // the scenario's order.
    let mut groups: Vec<(usize, &str, Vec<&Run>)> = Vec::new();
    for run in runs {
        match groups
            .iter_mut()
            .find(|(p, v, _)| *p == run.point && *v == run.variant)
        {
            Some((_, _, members)) => members.push(run),
            None => groups.push((run.point, run.variant, vec![run])),
        }
    }
    for (point, variant, members) in &groups {
        let mut record = vec![grid.points[*point].name.clone(), variant.to_string()];
        record.extend(grid.cells(*point));
        record.push(members.len().to_string());
        let cells: Vec<Vec<(String, &Value)>> = members
            .iter()
            .map(|r| output::flat_metrics(r.metrics))
            .collect();
        for &c in &columns {
            let values: Option<Vec<f64>> = cells
                .iter()
                .map(|cells| {
                    let (_, v) = cells.iter().find(|(n, _)| n == c)?;
                    v.as_f64()
                })
                .collect();
            let (mean, ci) = values.map_or((None, None), |v| mean_ci95(&v));
            record.push(mean.map_or(String::new(), number));
            record.push(ci.map_or(String::new(), number));
        }
        w.write_record(&record)?;
    }
    w.into_inner().context("cannot write sweep_summary.csv")
}

/// The mean of `values` and the half-width of its 95 % confidence interval, Student's t with
/// n − 1 degrees of freedom (`None` for fewer than two values; both `None` for none).
pub(super) fn mean_ci95(values: &[f64]) -> (Option<f64>, Option<f64>) {
    let n = values.len();
    if n == 0 {
        return (None, None);
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (Some(mean), None);
    }
    let var = values.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
    let half = t975(n - 1) * var.sqrt() / (n as f64).sqrt();
    (Some(mean), Some(half))
}

/// The 97.5th percentile of Student's t distribution with `df` degrees of freedom: exact
/// (to 6 decimals) from a table up to 30, above it the Cornish–Fisher expansion around the
/// normal quantile, within 1e-5 of the exact value there.
fn t975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157,
        2.228139, 2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922,
        2.093024, 2.085963, 2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831,
        2.048407, 2.045230, 2.042272,
    ];
    if (1..=30).contains(&df) {
        return TABLE[df - 1];
    }
    let z: f64 = 1.959_963_984_540_054;
    let n = df as f64;
    let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
    z + (z3 + z) / (4.0 * n)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * n * n)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * n * n * n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(text: &str) -> Grid {
        Grid::new("s.toml", &toml::from_str(text).unwrap()).unwrap()
    }

    #[test]
    fn grid_keys_become_typed_columns() {
        let g = grid(
            "a_load = [0.3, 1]\nb_rate = [\"10Gbps\", \"2.5Gb/s\"]\nc_time = [\"320us\", \
             \"1.5ms\", \"250ns\"]\nd_size = [\"60KB\", \"64KiB\"]\ne_kind = [\"irn\"]\n\
             f_mixed = [\"1us\", 3]\ng_sizes = [{ uniform = [\"500KB\", \"5MB\"] }]\n",
        );
        let headers: Vec<&str> = g.headers().collect();
        assert_eq!(
            headers,
            [
                "a_load",
                "b_rate_gbps",
                "c_time_us",
                "d_size_bytes",
                "e_kind",
                "f_mixed",
                "g_sizes"
            ]
        );
        assert_eq!(g.points.len(), 2 * 2 * 3 * 2 * 2);
        // The last key varies fastest; values keep their file order.
        let cells = |i| g.cells(i).collect::<Vec<_>>();
        assert_eq!(
            cells(0),
            [
                "0.3",
                "10",
                "320",
                "60000",
                "irn",
                "1us",
                "{ uniform = [\"500KB\", \"5MB\"] }"
            ]
        );
        assert_eq!(cells(1)[5], "3");
        let last = cells(g.points.len() - 1);
        assert_eq!(&last[..4], ["1", "2.5", "0.25", "65536"]);
        // c varies every 2 × 2 points (d, then f, vary faster).
        assert_eq!(cells(4)[2], "1500");
        // Folder names as before the typed columns: `key=value`, joined by commas, sanitised.
        assert!(g.points[0]
            .name
            .starts_with("a_load_0.3_b_rate_10Gbps_c_time_320us_"));
    }

    #[test]
    fn confidence_intervals_by_hand() {
        // Two values: mean 3, s = sqrt(2), half-width t(1) * s / sqrt(2) = t(1).
        let (m, ci) = mean_ci95(&[2.0, 4.0]);
        assert_eq!(m, Some(3.0));
        assert!((ci.unwrap() - 12.706205).abs() < 1e-12);
        // 1..=5: mean 3, s^2 = 10/4, half-width t(4) * sqrt(2.5 / 5).
        let (m, ci) = mean_ci95(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(m, Some(3.0));
        assert!((ci.unwrap() - 2.776445 * 0.5f64.sqrt()).abs() < 1e-12);
        assert_eq!(mean_ci95(&[7.0]), (Some(7.0), None));
        assert_eq!(mean_ci95(&[]), (None, None));
        // The expansion beyond the table, against the exact quantiles.
        for (df, exact) in [
            (31, 2.039513),
            (40, 2.021075),
            (60, 2.000298),
            (120, 1.979930),
        ] {
            assert!((t975(df) - exact).abs() < 1e-5, "t({df}) = {}", t975(df));
        }
    }
}
