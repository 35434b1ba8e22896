//! `irn plot`: charts and a self-contained HTML report from a results folder.
//!
//! A results folder is either one run (`summary.json`, `flows.csv`) or a comparison
//! (`comparison.csv` and one subfolder per variant holding that run's files). The report,
//! `report.html`, has the charts as inline SVG, inline CSS and no script or other external
//! resource, so it can be mailed or archived alone; the charts are also written as
//! `plots/*.svg`.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::changes;
use crate::output;
use crate::plot;
use crate::series::{self, Monitored};
use crate::table::Show;

/// One results folder, loaded.
pub struct Results {
    pub dir: PathBuf,
    pub scenario: String,
    pub irn_version: String,
    pub seed: Option<u64>,
    /// A `[[compare]]` folder (`comparison.csv` and one subfolder per variant).
    pub comparison: bool,
    /// In the order of `comparison.csv` (the scenario's order).
    pub variants: Vec<Variant>,
}

/// One run of a results folder.
pub struct Variant {
    pub name: String,
    /// Its folder (for `series/`).
    pub dir: PathBuf,
    /// `summary.json` `metrics`, in file order.
    pub metrics: Map<String, Value>,
    /// `summary.json` `resolved_scenario`.
    pub resolved: Value,
    pub flows: Vec<Flow>,
}

/// The columns of a `flows.csv` row the charts and the table use.
#[derive(Debug, Clone, Deserialize)]
pub struct Flow {
    pub size_bytes: u64,
    pub fct_us: Option<f64>,
    pub slowdown: Option<f64>,
    pub measured: bool,
    /// One of an incast's flows (absent from files of irn versions before the column).
    #[serde(default)]
    pub incast: bool,
}

impl Flow {
    /// The header names of its fields.
    const COLUMNS: [&'static str; 4] = ["size_bytes", "fct_us", "slowdown", "measured"];
}

impl Variant {
    /// [`Summary::has_fct_statistics`](irn_sim::metrics::Summary::has_fct_statistics), from
    /// the metrics as `summary.json` holds them.
    pub fn has_fcts(&self) -> bool {
        let count = |key| self.metric(key).unwrap_or(0.0);
        count("flows_measured") > count("flows_incomplete")
    }

    /// A metric as a number (`None` if absent or `null`).
    pub fn metric(&self, key: &str) -> Option<f64> {
        self.metrics.get(key).and_then(Value::as_f64)
    }

    /// The MTU from the resolved scenario (1024 B if it is not there): single-packet flows are
    /// those of at most one MTU, as in `summary.json`.
    pub fn mtu(&self) -> u64 {
        self.resolved
            .pointer("/transport/mtu")
            .and_then(Value::as_u64)
            .unwrap_or(1024)
    }
}

#[derive(Deserialize)]
struct SummaryFile {
    #[serde(default)]
    irn_version: String,
    #[serde(default)]
    scenario: String,
    #[serde(default)]
    variant: String,
    #[serde(default)]
    seed: Option<u64>,
    metrics: Map<String, Value>,
    #[serde(default)]
    resolved_scenario: Value,
}

fn read_summary(dir: &Path) -> Result<SummaryFile> {
    let path = dir.join("summary.json");
    let text = irn_sim::input::read_text(&path, irn_sim::input::RESULT)
        .with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{}: not an irn summary.json", path.display()))
}

pub(crate) fn read_flows(dir: &Path) -> Result<Vec<Flow>> {
    let path = dir.join("flows.csv");
    let file = irn_sim::input::open(&path, irn_sim::input::RESULT_TABLE)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let mut reader = csv::Reader::from_reader(file);
    // Rows are checked as they are read; the header is checked here, so that a file with no
    // rows is not taken for a run without flows.
    let headers = reader
        .headers()
        .with_context(|| format!("cannot read {}", path.display()))?;
    if let Some(missing) = Flow::COLUMNS
        .iter()
        .find(|c| !headers.iter().any(|h| h == **c))
    {
        bail!(
            "{}: not an irn flows.csv: no `{missing}` column in its header",
            path.display()
        );
    }
    reader
        .deserialize()
        .collect::<Result<Vec<Flow>, _>>()
        .with_context(|| format!("{}: not an irn flows.csv", path.display()))
}

fn load_variant(dir: &Path, summary: SummaryFile) -> Result<Variant> {
    // Drawn as they are, with a note: the report would otherwise pass a changed file off as
    // irn's.
    for name in ["summary.json", "flows.csv"] {
        if !output::unchanged(dir, name) {
            errln!(
                "note: {}: changed since irn wrote it; the charts and report show it as it is now",
                dir.join(name).display()
            );
        }
    }
    let flows = read_flows(dir)?;
    // A `flows.csv` cut short (a full disk, a copy interrupted inside its header or rows) still
    // parses: only the count `summary.json` keeps tells it from a run with fewer flows.
    let counted = summary.metrics.get("flows_total").and_then(Value::as_u64);
    if let Some(counted) = counted.filter(|&c| c != flows.len() as u64) {
        bail!(
            "{}: holds {} flows where summary.json counts {counted}: the file is cut short or \
             was edited; rerun the scenario to write it again",
            dir.join("flows.csv").display(),
            flows.len()
        );
    }
    Ok(Variant {
        name: summary.variant,
        dir: dir.to_path_buf(),
        metrics: summary.metrics,
        resolved: summary.resolved_scenario,
        flows,
    })
}

/// Loads a results folder written by `irn run`.
pub fn load(dir: &Path) -> Result<Results> {
    if !dir.is_dir() {
        bail!("{}: no such folder", dir.display());
    }
    let comparison_csv = dir.join("comparison.csv");
    for path in [&comparison_csv, &dir.join("summary.json")] {
        if path.exists() && !path.is_file() {
            bail!(
                "{}: not a file, where irn writes a results file; give a folder irn run wrote",
                path.display()
            );
        }
    }
    if comparison_csv.is_file() {
        return load_comparison(dir, &comparison_csv);
    }
    if !dir.join("summary.json").is_file() {
        // (A sweep folder, with sweep.csv, never comes here: `plot` draws it as a sweep.)
        bail!(
            "{} is not an irn results folder: it has neither summary.json (one run) nor \
             comparison.csv (a comparison) nor sweep.csv (a sweep)",
            dir.display()
        );
    }
    let summary = read_summary(dir)?;
    let (scenario, irn_version, seed) = (
        summary.scenario.clone(),
        summary.irn_version.clone(),
        summary.seed,
    );
    let variant = load_variant(dir, summary)?;
    Ok(Results {
        dir: dir.to_path_buf(),
        scenario,
        irn_version,
        seed,
        comparison: false,
        variants: vec![variant],
    })
}

fn load_comparison(dir: &Path, csv_path: &Path) -> Result<Results> {
    let file = irn_sim::input::open(csv_path, irn_sim::input::RESULT)
        .with_context(|| format!("cannot read {}", csv_path.display()))?;
    let mut reader = csv::Reader::from_reader(file);
    let headers = reader
        .headers()
        .with_context(|| format!("cannot read {}", csv_path.display()))?;
    let Some(col) = headers.iter().position(|h| h == "variant") else {
        bail!("{}: no `variant` column", csv_path.display());
    };
    let mut names = Vec::new();
    for record in reader.records() {
        let record = record.with_context(|| format!("cannot read {}", csv_path.display()))?;
        names.push(record.get(col).unwrap_or_default().to_string());
    }
    if names.is_empty() {
        bail!("{}: no variants", csv_path.display());
    }

    // Subfolder names are sanitised variant names; match on the name summary.json records.
    let mut subdirs: Vec<PathBuf> = fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("summary.json").is_file())
        .collect();
    subdirs.sort();
    let mut summaries = Vec::new();
    for sub in subdirs {
        let summary = read_summary(&sub)?;
        summaries.push((sub, Some(summary)));
    }
    let mut variants = Vec::new();
    let (mut scenario, mut irn_version, mut seed) = (String::new(), String::new(), None);
    for name in &names {
        let Some((sub, summary)) = summaries
            .iter_mut()
            .find(|(_, s)| s.as_ref().is_some_and(|s| &s.variant == name))
        else {
            bail!(
                "{}: variant `{name}` has no subfolder whose summary.json names it",
                csv_path.display()
            );
        };
        let summary = summary.take().expect("matched above");
        if variants.is_empty() {
            scenario.clone_from(&summary.scenario);
            irn_version.clone_from(&summary.irn_version);
            seed = summary.seed;
        }
        variants.push(load_variant(sub, summary)?);
    }
    Ok(Results {
        dir: dir.to_path_buf(),
        scenario,
        irn_version,
        seed,
        comparison: true,
        variants,
    })
}

/// The charts' ids, in report order (`metrics` only for comparisons).
const CHART_IDS: [&str; 12] = [
    "metrics",
    "single_packet_fct_cdf",
    "slowdown_by_size",
    "fct_by_size",
    COLLECTIVE_CHARTS[0].0,
    COLLECTIVE_CHARTS[1].0,
    COLLECTIVE_CHARTS[2].0,
    series::CHART_IDS[0],
    series::CHART_IDS[1],
    series::CHART_IDS[2],
    series::CHART_IDS[3],
    series::CHART_IDS[4],
];

/// One chart of the report.
pub struct Chart {
    /// File stem under `plots/` and HTML id.
    pub id: String,
    pub title: String,
    /// What the chart shows, for the report.
    pub note: String,
    pub svg: String,
}

impl Chart {
    /// The chart as a report shows it: its heading (`h2` for a section of its own, `h3`
    /// inside another), the note and the figure. A section of its own carries the id; a
    /// chart inside another's section carries it on its heading.
    pub fn write_html(&self, out: &mut String, own_section: bool) {
        let (open, tag, close) = if own_section {
            (
                format!("<section id=\"{}\">\n", escape(&self.id)),
                "h2",
                "</section>\n",
            )
        } else {
            (String::new(), "h3", "")
        };
        let id = if own_section {
            String::new()
        } else {
            format!(" id=\"{}\"", escape(&self.id))
        };
        let _ = writeln!(
            out,
            "{open}<{tag}{id}>{}</{tag}>\n<p class=\"note\">{}</p>\n<figure>",
            escape(&self.title),
            escape(&self.note)
        );
        out.push_str(self.svg.trim());
        out.push_str("\n</figure>\n");
        out.push_str(close);
    }
}

/// The paper's three headline metrics: `summary.json` key, label, value format.
/// Formats a metric's value.
type Format = fn(f64) -> String;

const HEADLINE: [(&str, &str, Format); 3] = [
    ("avg_slowdown", "avg slowdown", slowdown_label),
    ("avg_fct_us", "avg FCT", plot::fmt_us),
    ("p99_fct_us", "p99 FCT", plot::fmt_us),
];

fn slowdown_label(v: f64) -> String {
    plot::fmt_sig(v, 3)
}

/// The report's charts: the headline metrics (comparisons only), the single-packet FCT tail
/// (when a variant has a single-packet flow) and the median slowdown by flow size.
pub fn charts(results: &Results) -> Result<Vec<Chart>> {
    let names: Vec<&str> = results.variants.iter().map(|v| v.name.as_str()).collect();
    let mut charts = Vec::new();
    if results.comparison {
        let groups: Vec<plot::BarGroup> = HEADLINE
            .iter()
            .map(|&(key, label, format)| plot::BarGroup {
                label,
                values: (results.variants.iter())
                    .map(|v| v.metric(key).filter(|_| v.has_fcts()))
                    .collect(),
                format,
            })
            .collect();
        let title = format!("Headline metrics, relative to {}", names[0]);
        charts.push(Chart {
            id: CHART_IDS[0].to_string(),
            svg: svg_with_label(plot::grouped_bars(&title, &names, &groups)?, &title),
            title,
            note: format!(
                "Average slowdown, average FCT and 99th-percentile FCT over the measured, \
                 finished flows, each divided by {}'s (lower is better); the labels are the \
                 absolute values.",
                names[0]
            ),
        });
    }

    // A run with no flow of at most one MTU (a collective's, say) gets no chart rather than
    // an empty one; one whose single-packet flows all went unfinished keeps its "no data".
    let single_packet = |v: &Variant| {
        let mtu = v.mtu();
        v.flows.iter().any(|f| f.size_bytes <= mtu)
    };
    if results.variants.iter().any(single_packet) {
        let mut counts = Vec::new();
        let cdf: Vec<(&str, Vec<f64>)> = results
            .variants
            .iter()
            .map(|v| {
                let mtu = v.mtu();
                let fcts: Vec<f64> = v
                    .flows
                    .iter()
                    .filter(|f| f.measured && f.size_bytes <= mtu)
                    .filter_map(|f| f.fct_us)
                    .collect();
                counts.push(format!("{} {}", fcts.len(), v.name));
                (v.name.as_str(), fcts)
            })
            .collect();
        let title = "Single-packet flows: FCT tail (90th to 99.9th percentile)".to_string();
        charts.push(Chart {
            id: CHART_IDS[1].to_string(),
            svg: svg_with_label(
                plot::tail_cdf(&title, "FCT", &cdf, (90.0, 99.9), plot::fmt_us)?,
                &title,
            ),
            title,
            note: format!(
                "CDF of the completion times of measured, finished flows of at most one MTU, \
                 from the 90th to the 99.9th percentile (nearest rank), as in the IRN paper's \
                 Fig. 8. Flows: {}.",
                counts.join(", ")
            ),
        });
    }

    let by_size: Vec<(&str, Vec<(f64, f64)>)> = results
        .variants
        .iter()
        .map(|v| {
            let pts: Vec<(f64, f64)> = v
                .flows
                .iter()
                .filter(|f| f.measured)
                .filter_map(|f| f.slowdown.map(|s| (f.size_bytes as f64, s)))
                .collect();
            (v.name.as_str(), plot::log_binned_medians(&pts, 4.0, 3))
        })
        .collect();
    let title = "Median slowdown by flow size".to_string();
    charts.push(Chart {
        id: CHART_IDS[2].to_string(),
        svg: svg_with_label(
            plot::log_lines(
                &title,
                "flow size",
                "median slowdown",
                &by_size,
                plot::fmt_bytes,
            )?,
            &title,
        ),
        title,
        note: "Median slowdown (FCT / ideal FCT) of measured, finished flows in bins of a \
               quarter decade of flow size (bins with at least 3 flows), at the bins' \
               geometric centres."
            .to_string(),
    });

    // `summary.json`'s `fct_by_size`; every variant of a folder has the same buckets (the
    // first variant's are used), and files of versions before it have none.
    let buckets = |v: &Variant| -> Vec<Value> {
        v.metrics
            .get("fct_by_size")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let edges = results.variants.first().map(buckets).unwrap_or_default();
    let groups: Vec<plot::FctBucketGroup> = edges
        .iter()
        .enumerate()
        .map(|(b, edge)| plot::FctBucketGroup {
            label: bucket_label(edge),
            values: (results.variants.iter())
                .map(|v| {
                    let bucket = buckets(v).get(b).cloned().unwrap_or(Value::Null);
                    let stat = |key: &str| bucket.get(key).and_then(Value::as_f64);
                    (stat("avg_fct_us"), stat("p99_fct_us"))
                })
                .collect(),
        })
        .collect();
    let counts: Vec<String> = results
        .variants
        .iter()
        .map(|v| {
            let flows: Vec<String> = buckets(v)
                .iter()
                .map(|b| {
                    b.get("flows")
                        .and_then(Value::as_u64)
                        .unwrap_or(0)
                        .to_string()
                })
                .collect();
            format!("{} {}", v.name, flows.join("/"))
        })
        .collect();
    let title = "FCT by flow size: mean and p99".to_string();
    charts.push(Chart {
        id: CHART_IDS[3].to_string(),
        svg: svg_with_label(plot::fct_bucket_bars(&title, &names, &groups)?, &title),
        title,
        note: format!(
            "Mean (bars) and 99th-percentile (whiskers) FCT of measured, finished flows in \
             each flow-size bucket of [run] fct_size_buckets (summary.json's fct_by_size, as \
             in Eunomia's Figs. 10 and 11). Flows per bucket: {}.",
            counts.join(", ")
        ),
    });
    charts.extend(collective_charts(results)?);
    let monitored: Vec<Monitored> = (results.variants.iter())
        .filter_map(|v| {
            let label = if results.comparison { &v.name } else { "" };
            Monitored::find(label, &v.dir, &v.resolved)
        })
        .collect();
    charts.extend(series::charts(&monitored, series::CHART_IDS)?);
    let panels = slides_panels(results)?;
    if !panels.is_empty() {
        // As `irn reproduce` draws them: the panels show buffer and pauses run by run, where
        // overlaid the unlimited buffer flattens the others.
        let overlaid = [series::CHART_IDS[3], series::CHART_IDS[4]];
        charts.retain(|c| !overlaid.contains(&c.id.as_str()));
        charts.extend(panels);
    }
    Ok(charts)
}

/// The NRL slides' panel of each variant that runs pause control on a WAN and sampled its
/// ports (see [`series::slides_panel`]), one chart each.
fn slides_panels(results: &Results) -> Result<Vec<Chart>> {
    let mut charts = Vec::new();
    for v in &results.variants {
        let Some(unit_us) = slides_unit_us(&v.resolved) else {
            continue;
        };
        let Some(run) = Monitored::find("", &v.dir, &v.resolved) else {
            continue;
        };
        let title = if results.comparison {
            format!("{}: buffer and pauses (the slides' panel)", v.name)
        } else {
            "Buffer and pauses (the slides' panel)".to_string()
        };
        let Some(svg) = series::slides_panel(&run, unit_us, &title)? else {
            continue;
        };
        charts.push(Chart {
            id: format!("panel_{}", output::folder_name(&v.name)),
            svg: svg_with_label(svg, &title),
            title,
            note: series::PANELS_NOTE.to_string(),
        });
    }
    Ok(charts)
}

/// The longest pause at the long-haul links' rate (µs), when the resolved scenario is a WAN
/// whose long inputs run pause control: the unit of the NRL slides' time axes.
fn slides_unit_us(resolved: &Value) -> Option<f64> {
    let controlled = resolved["pause_control"]
        .as_array()
        .is_some_and(|r| !r.is_empty());
    let rate = resolved["topology"]["wan"]["rate"].as_str()?;
    let rate: irn_core::Bandwidth = rate.parse().ok()?;
    let unit = irn_sim::pause::quanta_time(rate, irn_sim::pause::MAX_QUANTA);
    controlled.then(|| unit.as_us_f64())
}

/// The collective charts: chart id, title, what a bar is, `summary.json` key of each job's
/// value (the third: the largest of its steps' `slowest_fct_us`) and its format.
const COLLECTIVE_CHARTS: [(&str, &str, &str, &str, Format); 3] = [
    (
        "collectives_busbw",
        "Collectives: bus bandwidth per job",
        "nccl-tests' bus bandwidth (busbw_gbytes_per_s, GB/s; higher is better), the mean over \
         the job's completed iterations",
        "busbw_gbytes_per_s",
        fmt_gbytes,
    ),
    (
        "collectives_time",
        "Collectives: iteration time per job",
        "the job's mean iteration time (time_us; lower is better)",
        "time_us",
        plot::fmt_us,
    ),
    (
        "collectives_slowest_flow",
        "Collectives: each job's slowest step flow",
        "the FCT of the slowest flow of any step of the job (the largest of its steps' \
         slowest_fct_us): the flow that held its ranks back the longest",
        "slowest_fct_us",
        plot::fmt_us,
    ),
];

fn fmt_gbytes(v: f64) -> String {
    plot::fmt_sig(v, 3)
}

/// Per variant, its `summary.json` `collectives` (empty without).
fn collectives_of(v: &Variant) -> Vec<Value> {
    (v.metrics.get("collectives").and_then(Value::as_array))
        .cloned()
        .unwrap_or_default()
}

/// One job's value for a collective chart: `key` of the job, or for `slowest_fct_us` the
/// largest over its steps.
fn job_value(job: &Value, key: &str) -> Option<f64> {
    if key == "slowest_fct_us" {
        (job.get("steps")?.as_array()?.iter())
            .filter_map(|s| s.get(key).and_then(Value::as_f64))
            .reduce(f64::max)
    } else {
        job.get(key).and_then(Value::as_f64)
    }
}

/// The slowest step flow of `job`: its step, `flows.csv` id and FCT, for a chart's note.
fn slowest_flow(job: &Value) -> Option<String> {
    let steps = job.get("steps")?.as_array()?;
    let fct = |s: &Value| s.get("slowest_fct_us").and_then(Value::as_f64);
    let step = (steps.iter()).filter(|s| fct(s).is_some()).max_by(|a, b| {
        fct(a)
            .partial_cmp(&fct(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    })?;
    Some(format!(
        "step {} flow {} ({})",
        step.get("step")?,
        step.get("slowest_flow")?,
        plot::fmt_us(fct(step)?)
    ))
}

/// With collective jobs (`summary.json`'s `collectives`), a chart each of their bus bandwidth,
/// iteration time and slowest step flow: one group of bars per job, one bar per variant,
/// relative to the first variant's; none without jobs.
fn collective_charts(results: &Results) -> Result<Vec<Chart>> {
    let names: Vec<&str> = results.variants.iter().map(|v| v.name.as_str()).collect();
    let per_variant: Vec<Vec<Value>> = results.variants.iter().map(collectives_of).collect();
    let Some(jobs) = per_variant.iter().find(|j| !j.is_empty()) else {
        return Ok(Vec::new());
    };
    let labels: Vec<String> = jobs
        .iter()
        .enumerate()
        .map(|(j, job)| {
            let text = |k: &str| {
                job.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_string()
            };
            let ranks = job.get("ranks").and_then(Value::as_u64).unwrap_or(0);
            format!("job {j}: {} ×{ranks}", text("op"))
        })
        .collect();
    let mut charts = Vec::new();
    for (id, title, what, key, format) in COLLECTIVE_CHARTS {
        let groups: Vec<plot::BarGroup> = labels
            .iter()
            .enumerate()
            .map(|(j, label)| plot::BarGroup {
                label,
                values: (per_variant.iter())
                    .map(|jobs| jobs.get(j).and_then(|job| job_value(job, key)))
                    .collect(),
                format,
            })
            .collect();
        let title = format!("{title}, relative to {}", names[0]);
        let mut note = format!(
            "Per job (summary.json's collectives), per variant: {what}. Bars are relative to \
             {}'s; the labels are the absolute values.",
            names[0]
        );
        if key == "slowest_fct_us" {
            let which: Vec<String> = (results.variants.iter().zip(&per_variant))
                .map(|(v, jobs)| {
                    let flows: Vec<String> = (jobs.iter().enumerate())
                        .filter_map(|(j, job)| Some(format!("job {j} {}", slowest_flow(job)?)))
                        .collect();
                    format!("{}: {}", v.name, flows.join(", "))
                })
                .collect();
            let _ = write!(
                note,
                " The flows (flows.csv's flow_id; its dag_id names the step's ranks): {}.",
                which.join("; ")
            );
        }
        charts.push(Chart {
            id: id.to_string(),
            svg: svg_with_label(plot::grouped_bars(&title, &names, &groups)?, &title),
            title,
            note,
        });
    }
    Ok(charts)
}

/// A `fct_by_size` bucket's label: "≤ 10 KB", "10 KB–100 KB", "> 1 MB".
pub(crate) fn bucket_label(bucket: &Value) -> String {
    let min = bucket.get("min_bytes").and_then(Value::as_u64).unwrap_or(0);
    let max = bucket.get("max_bytes").and_then(Value::as_u64);
    // A bucket starts one byte above the previous one's largest flow.
    let below = min.saturating_sub(1) as f64;
    match (min, max) {
        (0, Some(max)) => format!("≤ {}", plot::fmt_bytes(max as f64)),
        (_, Some(max)) => format!("{}–{}", plot::fmt_bytes(below), plot::fmt_bytes(max as f64)),
        (0, None) => "all".to_string(),
        (_, None) => format!("> {}", plot::fmt_bytes(below)),
    }
}

/// Marks an SVG as an image with an accessible name.
pub(crate) fn svg_with_label(svg: String, label: &str) -> String {
    match svg.find("<svg ") {
        Some(i) => format!(
            "{}<svg role=\"img\" aria-label=\"{}\" {}",
            &svg[..i],
            escape(label),
            &svg[i + 5..]
        ),
        None => svg,
    }
}

/// Escapes text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// One entry of a report's table of contents: the id of what it links to, its text, and the
/// entries under it.
pub(crate) struct TocEntry {
    pub id: String,
    pub text: String,
    pub children: Vec<TocEntry>,
}

impl TocEntry {
    pub(crate) fn new(id: &str, text: &str) -> Self {
        TocEntry {
            id: id.to_string(),
            text: text.to_string(),
            children: Vec::new(),
        }
    }
}

/// The table of contents at the top of a report: nested lists of links to its anchors.
pub(crate) fn write_toc(out: &mut String, entries: &[TocEntry]) {
    fn list(out: &mut String, entries: &[TocEntry]) {
        out.push_str("<ul>\n");
        for e in entries {
            let _ = write!(
                out,
                "<li><a href=\"#{}\">{}</a>",
                escape(&e.id),
                escape(&e.text)
            );
            if !e.children.is_empty() {
                out.push('\n');
                list(out, &e.children);
            }
            out.push_str("</li>\n");
        }
        out.push_str("</ul>\n");
    }
    out.push_str(
        "<nav class=\"toc\" id=\"contents\" aria-label=\"Contents\">\n<h2>Contents</h2>\n",
    );
    list(out, entries);
    out.push_str("</nav>\n");
}

/// Ids for `names` under `prefix` (`variant-roce-pfc`): lower-case letters and digits, any
/// run of other characters one `-`, and a `-2`, `-3`... for a name whose id an earlier one
/// took; the same names always give the same ids.
pub(crate) fn slugs<'a>(prefix: &str, names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for name in names {
        let mut id = prefix.to_string();
        for c in name.chars().flat_map(char::to_lowercase) {
            if c.is_ascii_alphanumeric() {
                id.push(c);
            } else if !id.ends_with('-') {
                id.push('-');
            }
        }
        let id = id.trim_end_matches('-').to_string();
        let mut unique = id.clone();
        let mut n = 1;
        while ids.contains(&unique) {
            n += 1;
            unique = format!("{id}-{n}");
        }
        ids.push(unique);
    }
    ids
}

/// Rows of the headline table: key, label, scale, decimals, whether it is a statistic of
/// finished measured flows (a dash, not a zero, for a variant without any), when it shows. The
/// flow counts come first: averages over finished flows flatter a variant that leaves its
/// slowest flows unfinished.
const TABLE: &[(&str, &str, f64, usize, bool, Show)] = &[
    (
        "flows_measured",
        "measured flows",
        1.0,
        0,
        false,
        Show::Always,
    ),
    (
        "flows_incomplete",
        "unfinished flows",
        1.0,
        0,
        false,
        Show::Always,
    ),
    ("avg_slowdown", "avg slowdown", 1.0, 2, true, Show::Always),
    (
        "censored_avg_slowdown",
        "censored avg slowdown",
        1.0,
        2,
        false,
        Show::Censored,
    ),
    ("p50_slowdown", "p50 slowdown", 1.0, 2, true, Show::Always),
    ("p99_slowdown", "p99 slowdown", 1.0, 2, true, Show::Always),
    ("avg_fct_us", "avg FCT (µs)", 1.0, 1, true, Show::Always),
    (
        "censored_avg_fct_us",
        "censored avg FCT (µs)",
        1.0,
        1,
        false,
        Show::Censored,
    ),
    ("p50_fct_us", "p50 FCT (µs)", 1.0, 1, true, Show::Always),
    ("p99_fct_us", "p99 FCT (µs)", 1.0, 1, true, Show::Always),
    (
        "censored_p99_fct_us",
        "censored p99 FCT (µs)",
        1.0,
        1,
        false,
        Show::Censored,
    ),
    ("rct_us", "incast RCT (µs)", 1.0, 1, false, Show::Incast),
    (
        "censored_rct_us",
        "censored RCT (µs)",
        1.0,
        1,
        false,
        Show::IncastCensored,
    ),
    (
        "single_packet_p99_fct_us",
        "1-packet p99 FCT (µs)",
        1.0,
        1,
        false,
        Show::Always,
    ),
    (
        "single_packet_p999_fct_us",
        "1-packet p99.9 FCT (µs)",
        1.0,
        1,
        false,
        Show::Always,
    ),
    ("drop_rate", "drop rate (%)", 100.0, 3, false, Show::Always),
    (
        "retransmissions",
        "retransmissions",
        1.0,
        0,
        false,
        Show::Always,
    ),
    ("timeouts", "timeouts", 1.0, 0, false, Show::Always),
    ("pause_frames", "pause frames", 1.0, 0, false, Show::Always),
    (
        "goodput_gbps",
        "goodput over the run (Gb/s)",
        1.0,
        2,
        false,
        Show::Always,
    ),
    (
        "arrival_goodput_gbps",
        "goodput over the arrivals (Gb/s)",
        1.0,
        2,
        false,
        Show::Always,
    ),
    (
        "link_utilization",
        "link utilization (%)",
        100.0,
        1,
        false,
        Show::Always,
    ),
];

/// The headline metrics whose ratio to the first variant the table shows.
const RATIO_KEYS: [&str; 6] = [
    "avg_slowdown",
    "censored_avg_slowdown",
    "avg_fct_us",
    "censored_avg_fct_us",
    "p99_fct_us",
    "censored_p99_fct_us",
];

/// Whether some variant left measured flows unfinished.
fn any_unfinished(results: &Results) -> bool {
    (results.variants.iter()).any(|v| v.metric("flows_incomplete").unwrap_or(0.0) > 0.0)
}

/// The anchors of the variants' columns in the headline table.
fn variant_ids(results: &Results) -> Vec<String> {
    slugs("variant-", results.variants.iter().map(|v| v.name.as_str()))
}

fn metrics_table(out: &mut String, results: &Results) {
    let vs = &results.variants;
    let censored = any_unfinished(results);
    let incast = vs.iter().any(|v| v.flows.iter().any(|f| f.incast));
    out.push_str("<table>\n<thead><tr><th scope=\"col\">metric</th>");
    for (v, id) in vs.iter().zip(variant_ids(results)) {
        let _ = write!(
            out,
            "<th scope=\"col\" id=\"{}\">{}</th>",
            escape(&id),
            escape(&v.name)
        );
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for &(key, label, scale, decimals, of_fcts, show) in TABLE {
        if !show.shown(censored, incast) {
            continue;
        }
        let _ = write!(out, "<tr><th scope=\"row\">{}</th>", escape(label));
        // An FCT statistic of a run without finished measured flows is not a zero.
        let known = |v: &Variant| v.metric(key).filter(|_| !of_fcts || v.has_fcts());
        let base = known(&vs[0]);
        for v in vs {
            let cell = match known(v) {
                Some(x) => {
                    let mut s = format!("{:.decimals$}", x * scale);
                    if results.comparison && RATIO_KEYS.contains(&key) {
                        if let Some(b) = base.filter(|b| *b > 0.0) {
                            let _ = write!(s, " <span class=\"ratio\">({:.2}×)</span>", x / b);
                        }
                    }
                    s
                }
                None => "–".to_string(),
            };
            let _ = write!(out, "<td>{cell}</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
}

fn all_metrics_table(out: &mut String, results: &Results) {
    let vs = &results.variants;
    out.push_str("<table>\n<thead><tr><th scope=\"col\">metric</th>");
    for v in vs {
        let _ = write!(out, "<th scope=\"col\">{}</th>", escape(&v.name));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    let mut keys: Vec<&String> = Vec::new();
    for v in vs {
        // Lists (`fct_by_size`) have their own chart.
        for (k, _) in v.metrics.iter().filter(|(_, value)| !value.is_array()) {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    for key in keys {
        let _ = write!(out, "<tr><th scope=\"row\">{}</th>", escape(key));
        for v in vs {
            let cell = match v.metrics.get(key.as_str()) {
                None | Some(Value::Null) => "–".to_string(),
                Some(Value::Number(n)) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                    (Some(u), _, _) => u.to_string(),
                    (_, Some(i), _) => i.to_string(),
                    (_, _, Some(f)) => plot::fmt_sig(f, 6),
                    _ => n.to_string(),
                },
                Some(other) => other.to_string(),
            };
            let _ = write!(out, "<td>{}</td>", escape(&cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
}

/// The resolved scenario as TOML (the form scenario files are written in), or as JSON if it
/// cannot be written as TOML.
fn resolved_text(resolved: &Value) -> String {
    fn strip_nulls(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| (k.clone(), strip_nulls(v)))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(strip_nulls).collect()),
            other => other.clone(),
        }
    }
    toml::to_string_pretty(&strip_nulls(resolved))
        .unwrap_or_else(|_| serde_json::to_string_pretty(resolved).unwrap_or_default())
}

pub(crate) const CSS: &str = "\
:root { color-scheme: light; }
body { margin: 0; background: #f6f7f9; color: #1d2330;
  font: 15px/1.5 system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif; }
main { max-width: 960px; margin: 0 auto; padding: 24px 20px 48px; }
h1 { font-size: 1.6em; margin: 0 0 4px; }
h2 { font-size: 1.2em; margin: 0 0 8px; }
section { background: #fff; border: 1px solid #dde1e8; border-radius: 6px; padding: 16px 18px;
  margin: 18px 0; }
.meta { color: #4a5263; margin: 0; }
.meta code, pre { font-family: ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace; }
.note { color: #4a5263; margin: 0 0 8px; }
figure { margin: 0; }
svg { display: block; max-width: 100%; height: auto; }
table { border-collapse: collapse; margin: 4px 0 8px; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 10px; border-bottom: 1px solid #e6e9ef; }
thead th { text-align: right; border-bottom: 2px solid #c9ced8; }
thead th:first-child, tbody th { text-align: left; font-weight: 500; }
td { text-align: right; white-space: nowrap; }
.ratio { color: #6b7385; font-size: 0.9em; }
.scroll { overflow-x: auto; }
details summary { cursor: pointer; color: #33507a; margin: 6px 0; }
pre { background: #f3f4f7; border: 1px solid #e1e4ea; border-radius: 4px; padding: 10px 12px;
  overflow-x: auto; font-size: 13px; line-height: 1.4; margin: 0; }
footer { color: #6b7385; font-size: 0.85em; text-align: center; }
nav.toc { margin: 18px 0; }
nav.toc ul { margin: 2px 0; padding-left: 20px; }
nav.toc a { color: #33507a; }
";

/// The heading of the report's last section.
fn scenario_heading(results: &Results) -> String {
    format!("Resolved scenario of {}", results.variants[0].name)
}

/// The report's table of contents: the headline metrics (and under them each variant's
/// column, in a comparison), every chart, the resolved scenario.
fn contents(results: &Results, charts: &[Chart]) -> Vec<TocEntry> {
    let mut metrics = TocEntry::new("metrics-table", "Headline metrics");
    if results.comparison {
        metrics.children = (results.variants.iter().zip(variant_ids(results)))
            .map(|(v, id)| TocEntry::new(&id, &v.name))
            .collect();
    }
    let charts = charts.iter().map(|c| TocEntry::new(&c.id, &c.title));
    let scenario = TocEntry::new("scenario", &scenario_heading(results));
    std::iter::once(metrics)
        .chain(charts)
        .chain([scenario])
        .collect()
}

/// The report as one HTML document: inline CSS and SVG, no script, no external resource.
pub fn render_html(results: &Results, charts: &[Chart]) -> String {
    let mut out = String::new();
    let scenario = if results.scenario.is_empty() {
        "(unnamed)"
    } else {
        &results.scenario
    };
    let title = format!("irn results: {scenario}");
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(out, "<title>{}</title>", escape(&title));
    let _ = writeln!(out, "<style>\n{CSS}</style>\n</head>\n<body>\n<main>");
    let _ = writeln!(out, "<h1>{}</h1>", escape(&title));

    let names: Vec<String> = results
        .variants
        .iter()
        .map(|v| format!("<strong>{}</strong>", escape(&v.name)))
        .collect();
    let kind = if results.comparison {
        format!("a comparison of {} variants", results.variants.len())
    } else {
        "one run".to_string()
    };
    let _ = write!(
        out,
        "<p class=\"meta\">Scenario <strong>{}</strong>, {kind}: {}.</p>\n<p class=\"meta\">",
        escape(scenario),
        names.join(", ")
    );
    if let Some(seed) = results.seed {
        let _ = write!(out, "Seed {seed}. ");
    }
    if !results.irn_version.is_empty() {
        let _ = write!(out, "irn {}. ", escape(&results.irn_version));
    }
    let _ = writeln!(
        out,
        "Results folder <code>{}</code>.</p>",
        escape(&results.dir.display().to_string())
    );
    variant_lines(&mut out, results);

    write_toc(&mut out, &contents(results, charts));
    out.push_str("<section id=\"metrics-table\">\n<h2>Headline metrics</h2>\n");
    out.push_str("<p class=\"note\">Over measured (started after the warm-up), finished flows. ");
    if results.comparison {
        let _ = write!(
            out,
            "In brackets: the ratio to {} (above 1 is worse).",
            escape(&results.variants[0].name)
        );
    }
    let without: Vec<String> = results
        .variants
        .iter()
        .filter(|v| !v.has_fcts())
        .map(|v| escape(&v.name))
        .collect();
    if !without.is_empty() {
        let _ = write!(
            out,
            " No measured flow finished in {}: every flow started during the warm-up, or the \
             drain limit cut them off (– marks their FCT statistics).",
            without.join(", ")
        );
    }
    let unfinished: Vec<String> = (results.variants.iter())
        .filter_map(|v| {
            let n = v.metric("flows_incomplete").filter(|n| *n > 0.0)?;
            Some(format!("{n} in {}", escape(&v.name)))
        })
        .collect();
    if !unfinished.is_empty() {
        let _ = write!(
            out,
            " <strong>Unfinished measured flows: {}.</strong> They are left out of the plain FCT \
             statistics, which flatters the variant that leaves more unfinished; the censored \
             rows count each at the end of the run (FCT = end − start, a lower bound).",
            unfinished.join(", ")
        );
    }
    let rct_unknown: Vec<String> = (results.variants.iter())
        .filter(|v| v.flows.iter().any(|f| f.incast) && v.metric("rct_us").is_none())
        .map(|v| escape(&v.name))
        .collect();
    if !rct_unknown.is_empty() {
        let _ = write!(
            out,
            " The incast RCT of {} is unknown (–): some of its incast flows had not finished \
             when the run ended; the censored RCT is a lower bound.",
            rct_unknown.join(", ")
        );
    }
    let _ = write!(
        out,
        " Goodput and link utilization: {}.",
        escape(crate::table::THROUGHPUT_SPAN)
    );
    out.push_str("</p>\n<div class=\"scroll\">\n");
    metrics_table(&mut out, results);
    out.push_str("</div>\n<details>\n<summary>All metrics (summary.json)</summary>\n");
    out.push_str("<div class=\"scroll\">\n");
    all_metrics_table(&mut out, results);
    out.push_str("</div>\n</details>\n</section>\n");

    for chart in charts {
        chart.write_html(&mut out, true);
    }

    let _ = writeln!(
        out,
        "<section id=\"scenario\">\n<h2>{}</h2>\n<p class=\"note\">Every \
         key with its default filled in, as <code>summary.json</code> records it.</p>",
        escape(&scenario_heading(results))
    );
    let _ = writeln!(
        out,
        "<pre>{}</pre>\n</section>",
        escape(resolved_text(&results.variants[0].resolved).trim_end())
    );
    let _ = writeln!(
        out,
        "<footer>Written by <code>irn plot</code> from {}.</footer>\n</main>\n</body>\n</html>",
        escape(&results.dir.display().to_string())
    );
    out
}

/// A comparison's variants, each with every key of its resolved scenario on which the variants
/// differ ([`changes::differing`]: the folder does not hold the base they override).
fn variant_lines(out: &mut String, results: &Results) {
    if !results.comparison {
        return;
    }
    let resolved: Vec<Value> = results
        .variants
        .iter()
        .map(|v| v.resolved.clone())
        .collect();
    out.push_str("<p class=\"meta\">Where the variants differ:</p>\n<ul class=\"meta\">\n");
    for (v, pairs) in results.variants.iter().zip(changes::differing(&resolved)) {
        let pairs = match pairs.is_empty() {
            true => "nothing in the resolved scenario".to_string(),
            false => pairs.join(", "),
        };
        let _ = writeln!(
            out,
            "<li><strong>{}</strong>: <code>{}</code></li>",
            escape(&v.name),
            escape(&pairs)
        );
    }
    out.push_str("</ul>\n");
}

/// Whether `path` is a report `irn plot` wrote (its footer says so), which a new one may replace.
pub(crate) fn is_plot_report(path: &Path) -> bool {
    // Not a FIFO or device: opening one would block or read forever.
    irn_sim::input::read_text(path, irn_sim::input::RESULT)
        .is_ok_and(|t| t.contains("<footer>Written by <code>irn plot</code>"))
}

/// What `write_report` wrote.
pub struct Written {
    pub report: PathBuf,
    pub plots: Vec<PathBuf>,
}

/// Refuses to replace a report `irn plot` wrote that was edited since (its folder's marker
/// keeps its checksum).
pub(crate) fn guard_unedited(report: &Path) -> Result<()> {
    let name = report.file_name().unwrap_or_default().to_string_lossy();
    output::guard_unchanged(output::parent_of(report), &[&name])
}

pub(crate) fn plots_dir(report: &Path) -> PathBuf {
    report
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join("plots")
}

/// Writes the report of the results folder `dir` to `report`, and its charts to `plots/*.svg`
/// beside it. Refuses, before writing anything, to overwrite a `report` that `irn plot` did not
/// write or a `plots/` folder irn did not make (see [`output::guard_folder`]).
pub fn write_report_to(dir: &Path, report: &Path) -> Result<Written> {
    let results = load(dir)?;
    let charts = charts(&results)?;
    output::guard_file(report, "a report `irn plot` wrote", is_plot_report)?;
    guard_unedited(report)?;
    let plots_dir = plots_dir(report);
    output::claim_folder(&plots_dir, output::Writer::Plot)?;
    let names: Vec<String> = charts.iter().map(|c| format!("{}.svg", c.id)).collect();
    output::guard_own_entries(
        &plots_dir,
        &names.iter().map(String::as_str).collect::<Vec<_>>(),
    )?;
    let mut plots = Vec::new();
    for chart in &charts {
        let path = plots_dir.join(format!("{}.svg", chart.id));
        output::write_file_atomic(&path, chart.svg.as_bytes())?;
        plots.push(path);
    }
    output::write_file_atomic(report, render_html(&results, &charts).as_bytes())?;
    output::record_report(report, &plots)?;
    Ok(Written {
        report: report.to_path_buf(),
        plots,
    })
}

/// The last line of `irn run` and `irn sweep`, which draw no charts themselves: the command
/// that does, ready to paste, and what it writes.
pub fn plot_hint(dir: &Path) -> String {
    let shown = dir.display().to_string();
    format!(
        "charts: irn plot {} (writes {} and {})",
        shell_word(&shown),
        dir.join("report.html").display(),
        dir.join("plots").join("*.svg").display()
    )
}

/// `word` as a shell reads it back: bare when it holds only characters no shell treats
/// specially, else in single quotes.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./+,:@%=".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', "'\\''"))
}

#[derive(clap::Args, Debug)]
pub struct PlotArgs {
    /// Results folders written by `irn run` (one run, or a comparison) or sweep folders
    /// written by `irn sweep` or `irn report`.
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// Write the report here instead of DIR/report.html (one DIR only); the charts go to
    /// `plots/` beside it.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Sweeps: the metric to draw against the grid key, a column of `sweep_summary.csv`
    /// without its `_mean` (repeatable). Default: avg_slowdown.
    #[arg(long, value_name = "METRIC")]
    metric: Vec<String>,
    /// Sweeps: the grid key on the x axis (its column in `sweep.csv`, with or without the
    /// unit suffix). Default: the first grid key with numeric values.
    #[arg(long, value_name = "KEY")]
    x: Option<String>,
}

/// `irn plot`: a report for each results folder.
pub fn plot(args: PlotArgs) -> Result<()> {
    if args.out.is_some() && args.dirs.len() > 1 {
        bail!("--out takes one results folder, not {}", args.dirs.len());
    }
    let is_sweep = |dir: &Path| dir.join("sweep.csv").is_file();
    if let Some(dir) = args.dirs.iter().find(|d| !is_sweep(d)) {
        if !args.metric.is_empty() || args.x.is_some() {
            bail!(
                "--metric and --x draw a sweep's metric against a grid key, and {} is not a \
                 sweep folder (it has no sweep.csv)",
                dir.display()
            );
        }
    }
    for dir in &args.dirs {
        let _lock = output::lock(args.out.as_deref().map_or(dir, output::parent_of))?;
        let (report, plots) = match &args.out {
            _ if is_sweep(dir) => {
                let written = crate::sweep::plot_sweep(
                    dir,
                    args.out.as_deref(),
                    &args.metric,
                    args.x.as_deref(),
                )?;
                (written.report, written.plots)
            }
            out => {
                let report = out.clone().unwrap_or_else(|| dir.join("report.html"));
                let written = write_report_to(dir, &report)?;
                (written.report, written.plots)
            }
        };
        outln!("{}", report.display());
        for p in plots {
            outln!("{}", p.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The folder in `irn run`'s last line pastes back as one word.
    #[test]
    fn the_plot_command_quotes_a_folder_a_shell_would_split() {
        assert_eq!(shell_word("results/my_test"), "results/my_test");
        assert_eq!(shell_word("my results"), "'my results'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word("$HOME"), "'$HOME'");
        assert!(plot_hint(Path::new("results/x")).starts_with("charts: irn plot results/x (writes"));
    }

    #[test]
    fn escapes_html() {
        assert_eq!(
            escape(r#"<a href="x">R&D's</a>"#),
            "&lt;a href=&quot;x&quot;&gt;R&amp;D&#39;s&lt;/a&gt;"
        );
    }

    #[test]
    fn resolved_scenario_as_toml() {
        let v: Value = serde_json::json!({
            "name": "x", "seed": 1,
            "transport": { "kind": "irn", "bdp_cap": null, "mtu": 1024 },
            "run": { "warmup": "0ms" }
        });
        let text = resolved_text(&v);
        assert!(text.contains("[transport]"), "{text}");
        assert!(!text.contains("bdp_cap"), "{text}");
    }

    #[test]
    fn slugs_are_plain_unique_and_stable() {
        let names = [
            "IRN",
            "RoCE+PFC",
            "roce pfc",
            "<\"x\"> & 'y'",
            "",
            "RoCE+PFC",
        ];
        let ids = slugs("variant-", names);
        assert_eq!(
            ids,
            [
                "variant-irn",
                "variant-roce-pfc",
                "variant-roce-pfc-2",
                "variant-x-y",
                "variant",
                "variant-roce-pfc-3"
            ]
        );
        assert_eq!(slugs("variant-", names), ids);
    }

    #[test]
    fn contents_link_to_nested_lists() {
        let mut parent = TocEntry::new("a&b", "A <1>");
        parent.children.push(TocEntry::new("c", "C"));
        let mut out = String::new();
        write_toc(&mut out, &[parent, TocEntry::new("d", "D")]);
        assert_eq!(
            out,
            "<nav class=\"toc\" id=\"contents\" aria-label=\"Contents\">\n<h2>Contents</h2>\n\
             <ul>\n<li><a href=\"#a&amp;b\">A &lt;1&gt;</a>\n<ul>\n<li><a href=\"#c\">C</a></li>\n\
             </ul>\n</li>\n<li><a href=\"#d\">D</a></li>\n</ul>\n</nav>\n"
        );
    }

    #[test]
    fn svg_gets_an_accessible_name() {
        let s = svg_with_label("<svg width=\"1\"></svg>".into(), "a \"b\"");
        assert_eq!(
            s,
            "<svg role=\"img\" aria-label=\"a &quot;b&quot;\" width=\"1\"></svg>"
        );
    }
}
