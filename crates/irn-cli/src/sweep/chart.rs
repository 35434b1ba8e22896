//! `irn plot SWEEP_DIR`: a sweep's report from its `sweep_summary.csv` (so the folder `irn
//! report` merges shards into, which holds no runs, draws as well as the sweep's own), and the
//! time series of the monitored runs the folder holds.
//!
//! Charts: each chosen metric against a numeric grid key, one line per variant (and per value
//! of the other grid keys), error bars the 95 % confidence intervals over the seeds; per point
//! the slowdown percentiles by flow-size bucket, one bar group per bucket; and per point (and
//! seed) with monitored runs, `irn run`'s series charts in a collapsed section.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::json;

use crate::output::{self, folder_name};
use crate::plot::{self, ErrorBarLine, SlowdownBucketGroup};
use crate::report::{self, escape, Chart, Written};
use crate::series;

/// The metric drawn when `--metric` is not given: the IRN paper's headline.
const DEFAULT_METRIC: &str = "avg_slowdown";

/// The headline columns of the report's table: metric, label.
const TABLE: [(&str, &str); 3] = [
    ("avg_slowdown", "avg slowdown"),
    ("avg_fct_us", "avg FCT (µs)"),
    ("p99_fct_us", "p99 FCT (µs)"),
];

/// `sweep_summary.csv`, read.
struct Summary {
    path: PathBuf,
    headers: Vec<String>,
    rows: Vec<csv::StringRecord>,
    /// Column range of the grid keys (between `variant` and `runs`).
    grid: std::ops::Range<usize>,
}

impl Summary {
    fn read(dir: &Path) -> Result<Summary> {
        let path = dir.join("sweep_summary.csv");
        if !path.is_file() {
            bail!(
                "{}: a sweep folder without sweep_summary.csv (written by an irn before it): \
                 run `irn report {}` to write it",
                dir.display(),
                dir.display()
            );
        }
        let file = irn_sim::input::open(&path, irn_sim::input::RESULT)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let mut reader = csv::Reader::from_reader(file);
        let headers: Vec<String> = reader
            .headers()
            .with_context(|| format!("cannot read {}", path.display()))?
            .iter()
            .map(String::from)
            .collect();
        let at = |name: &str| headers.iter().position(|h| h == name);
        let (Some(1), Some(runs)) = (at("variant"), at("runs")) else {
            bail!(
                "{}: not an irn sweep_summary.csv (it starts with point, variant, the grid \
                 keys, runs)",
                path.display()
            );
        };
        let rows = reader
            .records()
            .collect::<Result<Vec<_>, _>>()
            .with_context(|| format!("{}: not an irn sweep_summary.csv", path.display()))?;
        Ok(Summary {
            path,
            headers,
            rows,
            grid: 2..runs,
        })
    }

    fn column(&self, name: &str) -> Option<usize> {
        self.headers.iter().position(|h| h == name)
    }

    /// A cell as a number (`None`: empty or not a number).
    fn number(&self, row: &csv::StringRecord, column: Option<usize>) -> Option<f64> {
        row.get(column?)?.parse().ok()
    }

    /// The metrics that have `_mean` columns, in file order.
    fn metrics(&self) -> Vec<&str> {
        (self.headers.iter())
            .filter_map(|h| h.strip_suffix("_mean"))
            .collect()
    }

    /// The grid columns whose every cell is a number: those a chart can use as its x axis.
    fn numeric_keys(&self) -> Vec<usize> {
        self.grid
            .clone()
            .filter(|&c| {
                (self.rows.iter()).all(|r| r.get(c).is_some_and(|v| v.parse::<f64>().is_ok()))
            })
            .collect()
    }

    /// Whether grid column `c` takes more than one value.
    fn varies(&self, c: usize) -> bool {
        let first = self.rows.first().and_then(|r| r.get(c));
        self.rows.iter().any(|r| r.get(c) != first)
    }

    /// The column of `--x`: a grid column's header or its key without the unit suffix; by
    /// default the first numeric one that varies (else the first numeric one).
    fn x_column(&self, x: Option<&str>) -> Result<Option<usize>> {
        let numeric = self.numeric_keys();
        let Some(x) = x else {
            let varying = numeric.iter().find(|&&c| self.varies(c));
            return Ok(varying.or(numeric.first()).copied());
        };
        let names: Vec<&str> = numeric.iter().map(|&c| self.headers[c].as_str()).collect();
        let allowed = if names.is_empty() {
            "this sweep has none (its grid values are not numbers, durations, rates or sizes)"
                .to_string()
        } else {
            format!("one of {}", names.join(", "))
        };
        let matches = |c: &usize| {
            let h = &self.headers[*c];
            h == x
                || ["_us", "_gbps", "_bytes"]
                    .iter()
                    .any(|u| *h == format!("{x}{u}"))
        };
        match numeric.iter().find(|c| matches(c)) {
            Some(&c) => Ok(Some(c)),
            None => bail!(
                "--x {x}: not a numeric grid key of {}; the x axis is {allowed}",
                self.path.display()
            ),
        }
    }
}

/// The x axis's label: `workload.duration (µs)` for `workload.duration_us`.
fn axis_label(header: &str) -> String {
    for (suffix, unit) in [("_us", "µs"), ("_gbps", "Gb/s"), ("_bytes", "bytes")] {
        if let Some(key) = header.strip_suffix(suffix) {
            return format!("{key} ({unit})");
        }
    }
    header.to_string()
}

/// `metric` against the grid column `x`: one line per variant and value of the other grid
/// keys, points in increasing x.
fn metric_chart(summary: &Summary, metric: &str, x: usize) -> Result<Chart> {
    let (mean, ci) = (
        summary.column(&format!("{metric}_mean")),
        summary.column(&format!("{metric}_ci95")),
    );
    let mut lines: Vec<ErrorBarLine> = Vec::new();
    for row in &summary.rows {
        let others: Vec<String> = (summary.grid.clone())
            .filter(|&c| c != x && summary.varies(c))
            .map(|c| format!("{}={}", summary.headers[c], row.get(c).unwrap_or_default()))
            .collect();
        let name = [row.get(1).unwrap_or_default().to_string()]
            .into_iter()
            .chain(others)
            .collect::<Vec<_>>()
            .join(", ");
        let (Some(xv), Some(y)) = (summary.number(row, Some(x)), summary.number(row, mean)) else {
            continue;
        };
        let point = (xv, y, summary.number(row, ci));
        match lines.iter_mut().find(|(n, _)| *n == name) {
            Some((_, pts)) => pts.push(point),
            None => lines.push((name, vec![point])),
        }
    }
    for (_, pts) in &mut lines {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let x_header = &summary.headers[x];
    let title = format!("{metric} against {}", axis_label(x_header));
    let svg = plot::error_bar_lines(&title, &axis_label(x_header), metric, &lines)?;
    Ok(Chart {
        id: format!("{}_by_{}", folder_name(metric), folder_name(x_header)),
        note: format!(
            "The mean of {metric} over each point's runs (seeds), one line per variant{}; the \
             error bars are 95 % confidence intervals of the mean (Student's t with runs − 1 \
             degrees of freedom; none for a single run). Points where a run has no value \
             (e.g. no finished flow) are left out.",
            if summary.grid.clone().any(|c| c != x && summary.varies(c)) {
                " and value of the other grid keys"
            } else {
                ""
            }
        ),
        svg: report::svg_with_label(svg, &title),
        title,
    })
}

/// `metric` at every grid point when no grid key has numeric values to draw it against (a
/// sweep over load balancers, say): one bar per variant and point, relative to the first and
/// labelled with its mean.
fn point_chart(summary: &Summary, metric: &str) -> Result<Chart> {
    let mean = summary.column(&format!("{metric}_mean"));
    let names: Vec<String> = (summary.rows.iter())
        .map(|row| {
            let point = (summary.grid.clone())
                .filter(|&c| summary.varies(c))
                .map(|c| format!("{}={}", summary.headers[c], row.get(c).unwrap_or_default()));
            [row.get(1).unwrap_or_default().to_string()]
                .into_iter()
                .chain(point)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect();
    let values = (summary.rows.iter())
        .map(|row| summary.number(row, mean))
        .collect();
    let group = plot::BarGroup {
        label: metric,
        values,
        format: |v| format!("{v:.3}"),
    };
    let title = format!("{metric} per grid point");
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let svg = plot::grouped_bars(&title, &names, &[group])?;
    Ok(Chart {
        id: format!("{}_by_point", folder_name(metric)),
        note: format!(
            "No grid key has numeric values, so the mean of {metric} over each point's runs \
             (seeds) is drawn as one bar per variant and grid point, relative to the first, \
             with its value above it. Points where a run has no value are left out."
        ),
        svg: report::svg_with_label(svg, &title),
        title,
    })
}

/// The slowdown percentiles by flow-size bucket at each point, from the `fct_by_size`
/// columns; none when the sweep's runs have no such buckets.
fn bucket_charts(summary: &Summary) -> Result<Vec<Chart>> {
    let column = |b: usize, key: &str| summary.column(&format!("fct_by_size.{b}.{key}_mean"));
    let buckets = (0..)
        .take_while(|&b| column(b, "p50_slowdown").is_some())
        .count();
    if buckets == 0 {
        return Ok(Vec::new());
    }
    let mut points: Vec<(&str, Vec<&csv::StringRecord>)> = Vec::new();
    for row in &summary.rows {
        let point = row.get(0).unwrap_or_default();
        match points.iter_mut().find(|(p, _)| *p == point) {
            Some((_, rows)) => rows.push(row),
            None => points.push((point, vec![row])),
        }
    }
    let mut charts = Vec::new();
    for (point, rows) in points {
        let variants: Vec<&str> = rows.iter().map(|r| r.get(1).unwrap_or_default()).collect();
        let groups: Vec<SlowdownBucketGroup> = (0..buckets)
            .map(|b| {
                // Sizes in bytes, whole numbers (their mean over runs is the value).
                let edge = |key| summary.number(rows[0], column(b, key)).map(|v| v as u64);
                let bounds =
                    json!({ "min_bytes": edge("min_bytes"), "max_bytes": edge("max_bytes") });
                SlowdownBucketGroup {
                    label: report::bucket_label(&bounds),
                    values: (rows.iter())
                        .map(|r| {
                            ["p50_slowdown", "p95_slowdown", "p99_slowdown"]
                                .map(|k| summary.number(r, column(b, k)))
                        })
                        .collect(),
                }
            })
            .collect();
        let title = format!("Slowdown by flow size at {point}");
        let svg = plot::slowdown_bucket_bars(&title, &variants, &groups)?;
        charts.push(Chart {
            id: format!("slowdown_by_size_{}", folder_name(point)),
            note: "Median (bar), 95th (tick) and 99th (whisker) percentile slowdown of the \
                   measured, finished flows in each flow-size bucket of [run] \
                   fct_size_buckets, as the HPCC and ConWeave papers plot it; with several \
                   seeds, each percentile is its mean over the runs."
                .to_string(),
            svg: report::svg_with_label(svg, &title),
            title,
        });
    }
    Ok(charts)
}

/// The time series of the sweep's monitored runs, per point (and seed): the folder and the
/// charts `irn plot` draws for a run folder (queue occupancy and paused share over time,
/// utilization by link tier), each chart's id suffixed with the folder.
fn series_charts(dir: &Path) -> Result<Vec<(String, Vec<Chart>)>> {
    let mut groups = Vec::new();
    for (folder, runs) in super::monitored_runs(dir)? {
        let folder = folder.display().to_string();
        let ids = series::CHART_IDS.map(|id| format!("{id}_{}", folder_name(&folder)));
        let charts = series::charts(&runs, ids.each_ref().map(String::as_str))?;
        if !charts.is_empty() {
            groups.push((folder, charts));
        }
    }
    Ok(groups)
}

/// Mean ± confidence half-width, or the mean alone, or a dash.
fn mean_cell(summary: &Summary, row: &csv::StringRecord, metric: &str) -> String {
    let mean = summary.number(row, summary.column(&format!("{metric}_mean")));
    let ci = summary.number(row, summary.column(&format!("{metric}_ci95")));
    match (mean, ci) {
        (Some(m), Some(c)) => format!("{} ± {}", plot::fmt_sig(m, 4), plot::fmt_sig(c, 2)),
        (Some(m), None) => plot::fmt_sig(m, 4),
        _ => "–".to_string(),
    }
}

/// The anchor of the section of the time series of the runs in `folder`.
fn series_id(folder: &str) -> String {
    format!("series_{}", folder_name(folder))
}

/// The report's table of contents: the headline metrics, every chart, and each section of
/// time series with its charts under it.
fn contents(charts: &[Chart], series: &[(String, Vec<Chart>)]) -> Vec<report::TocEntry> {
    let entry = |c: &Chart| report::TocEntry::new(&c.id, &c.title);
    let metrics = report::TocEntry::new("metrics-table", "Headline metrics");
    let series = series.iter().map(|(folder, charts)| report::TocEntry {
        children: charts.iter().map(entry).collect(),
        ..report::TocEntry::new(&series_id(folder), &format!("Time series of {folder}"))
    });
    std::iter::once(metrics)
        .chain(charts.iter().map(entry))
        .chain(series)
        .collect()
}

fn render_html(
    dir: &Path,
    (summary, extra): (&Summary, &[&str]),
    charts: &[Chart],
    series: &[(String, Vec<Chart>)],
) -> String {
    let name = dir
        .file_name()
        .map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into());
    let title = format!("irn sweep: {name}");
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(out, "<title>{}</title>", escape(&title));
    let _ = writeln!(
        out,
        "<style>\n{}</style>\n</head>\n<body>\n<main>",
        report::CSS
    );
    let _ = writeln!(out, "<h1>{}</h1>", escape(&title));
    let keys: Vec<String> = (summary.grid.clone())
        .map(|c| format!("<code>{}</code>", escape(&summary.headers[c])))
        .collect();
    let _ = writeln!(
        out,
        "<p class=\"meta\">{} rows (grid point × variant) over the grid keys {}. Results folder <code>{}</code> \
         (<code>sweep.csv</code>: every run; <code>sweep_summary.csv</code>: these means).</p>",
        summary.rows.len(),
        keys.join(", "),
        escape(&dir.display().to_string())
    );
    report::write_toc(&mut out, &contents(charts, series));
    out.push_str("<section id=\"metrics-table\">\n<h2>Headline metrics</h2>\n");
    out.push_str(
        "<p class=\"note\">Per point and variant, the mean over its runs ± the half-width of \
         the 95 % confidence interval of the mean (Student's t; none for one run).</p>\n",
    );
    out.push_str("<div class=\"scroll\">\n<table>\n<thead><tr>");
    let grid_heads = summary.grid.clone().map(|c| summary.headers[c].as_str());
    let heads = ["variant"]
        .into_iter()
        .chain(grid_heads)
        .chain(["runs"])
        .chain(TABLE.iter().map(|t| t.1))
        .chain(extra.iter().copied());
    for h in heads {
        let _ = write!(out, "<th scope=\"col\">{}</th>", escape(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in &summary.rows {
        let _ = write!(
            out,
            "<tr><th scope=\"row\">{}</th>",
            escape(row.get(1).unwrap_or_default())
        );
        for c in summary.grid.clone().chain([summary.grid.end]) {
            let _ = write!(out, "<td>{}</td>", escape(row.get(c).unwrap_or_default()));
        }
        for metric in TABLE.iter().map(|t| t.0).chain(extra.iter().copied()) {
            let _ = write!(out, "<td>{}</td>", escape(&mean_cell(summary, row, metric)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n</div>\n</section>\n");
    for chart in charts {
        chart.write_html(&mut out, true);
    }
    for (folder, charts) in series {
        let _ = writeln!(
            out,
            "<section id=\"{}\">\n<h2>Time series of {}</h2>\n<p class=\"note\">From \
             the series/ports.csv of the monitored runs in <code>{}</code>.</p>\n<details>\n\
             <summary>Queue occupancy, pauses and link utilization over time</summary>",
            escape(&series_id(folder)),
            escape(folder),
            escape(folder)
        );
        for chart in charts {
            chart.write_html(&mut out, false);
        }
        out.push_str("</details>\n</section>\n");
    }
    let _ = writeln!(
        out,
        "<footer>Written by <code>irn plot</code> from {}.</footer>\n</main>\n</body>\n</html>",
        escape(&dir.display().to_string())
    );
    out
}

/// `irn plot SWEEP_DIR`: writes `report` (default `DIR/report.html`) and its charts under
/// `plots/` beside it: `metrics` (default avg slowdown) against the grid column `x` (default
/// the first numeric one), and the slowdown percentiles by flow size at every point. Refuses an
/// unknown metric or x, listing what is allowed, before writing anything.
pub fn plot_sweep(
    dir: &Path,
    report: Option<&Path>,
    metrics: &[String],
    x: Option<&str>,
) -> Result<Written> {
    let summary = Summary::read(dir)?;
    let known = summary.metrics();
    if known.is_empty() {
        // A shard whose runs have not finished: nothing to list as allowed either.
        bail!(
            "{}: no metric, as sweep.csv has no run (a shard with none to do, or runs not \
             finished yet): nothing to plot",
            summary.path.display()
        );
    }
    let default = [DEFAULT_METRIC.to_string()];
    let metrics = if metrics.is_empty() {
        &default[..]
    } else {
        metrics
    };
    for m in metrics {
        if !known.contains(&m.as_str()) {
            // A list's entries by their form (`fct_by_size.INDEX.KEY`, `collectives.INDEX.KEY`),
            // not one by one: there are dozens.
            let mut names: Vec<&str> = Vec::new();
            let mut forms: Vec<String> = Vec::new();
            for k in known.iter().copied() {
                let mut parts = k.splitn(3, '.');
                match (parts.next(), parts.next(), parts.next()) {
                    (Some(list), Some(i), Some(_)) if i.parse::<usize>().is_ok() => {
                        let form = format!("{list}.INDEX.KEY");
                        if !forms.contains(&form) {
                            forms.push(form);
                        }
                    }
                    _ => names.push(k),
                }
            }
            let forms = if forms.is_empty() {
                String::new()
            } else {
                format!(", or {} (INDEX from 0)", forms.join(", "))
            };
            bail!(
                "--metric {m}: not a metric of {}; one of {}{forms}",
                summary.path.display(),
                names.join(", ")
            );
        }
    }
    let x = summary.x_column(x)?;
    let mut charts = Vec::new();
    for m in metrics {
        charts.push(match x {
            Some(x) => metric_chart(&summary, m, x)?,
            None => point_chart(&summary, m)?,
        });
    }
    charts.extend(bucket_charts(&summary)?);
    let series = series_charts(dir)?;
    let report = report.map_or_else(|| dir.join("report.html"), Path::to_path_buf);
    output::guard_file(&report, "a report `irn plot` wrote", report::is_plot_report)?;
    report::guard_unedited(&report)?;
    let plots_dir = report::plots_dir(&report);
    output::claim_folder(&plots_dir, output::Writer::Plot)?;
    let all = || charts.iter().chain(series.iter().flat_map(|(_, c)| c));
    let names: Vec<String> = all().map(|c| format!("{}.svg", c.id)).collect();
    output::guard_own_entries(
        &plots_dir,
        &names.iter().map(String::as_str).collect::<Vec<_>>(),
    )?;
    let mut plots = Vec::new();
    for chart in all() {
        let path = plots_dir.join(format!("{}.svg", chart.id));
        output::write_file_atomic(&path, chart.svg.as_bytes())?;
        plots.push(path);
    }
    // The metrics asked for join the headline columns, so the table shows what the charts do.
    let extra: Vec<&str> = (metrics.iter().map(String::as_str))
        .filter(|m| !TABLE.iter().any(|(t, _)| t == m))
        .collect();
    let html = render_html(dir, (&summary, &extra), &charts, &series);
    output::write_file_atomic(&report, html.as_bytes())?;
    output::record_report(&report, &plots)?;
    Ok(Written { report, plots })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_labels_name_the_unit() {
        assert_eq!(axis_label("workload.duration_us"), "workload.duration (µs)");
        assert_eq!(
            axis_label("topology.link_rate_gbps"),
            "topology.link_rate (Gb/s)"
        );
        assert_eq!(axis_label("switch.buffer_bytes"), "switch.buffer (bytes)");
        assert_eq!(axis_label("workload.load"), "workload.load");
    }
}
