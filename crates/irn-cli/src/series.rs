//! `series/*.csv`: `[monitor]`'s rows, streamed into the run's folder as the run takes them, so
//! a long run's series never sit in memory (each writer buffers 8 KB); and the report's charts
//! of them.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use irn_sim::config::{Monitor, SimConfig};
use irn_sim::series::{FlowSample, NicSample, PortSample, SeriesSink};
use irn_sim::{Progress, RunResult};
use serde::{Deserialize, Serialize};

use crate::huge_pages;
use crate::plot;
use crate::report::{svg_with_label, Chart};

/// Runs `config`, streaming its `[monitor]`'s series (if it has one) into `dir/series/` as the
/// run goes; `dir` is the run's folder, inside the staging folder of the command, so an
/// interrupted command leaves no half-written series behind. Without a monitor this is
/// `irn_sim::run`. A large network's state goes on huge pages ([`huge_pages`]).
pub fn run(
    config: &SimConfig,
    dir: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<RunResult> {
    huge_pages::prepare_for(config);
    let Some(monitor) = &config.monitor else {
        return Ok(irn_sim::run(config, progress));
    };
    let mut series = SeriesFiles::create(dir, monitor)?;
    let result = irn_sim::run_monitored(config, progress, &mut series);
    series.finish(dir)?;
    Ok(result)
}

type Csv = csv::Writer<BufWriter<Counted>>;

/// The most bytes a run's series files may hold together: a run that would write more (a
/// large network sampled every few nanoseconds writes about 100 MB a second) is stopped from
/// sampling and fails with what to change, rather than filling the disk.
pub const MAX_SERIES_BYTES: u64 = 8 << 30;

/// A file that adds what is written to it to the run's series byte count.
struct Counted {
    file: File,
    bytes: Arc<AtomicU64>,
}

impl Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(buf)?;
        self.bytes.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// The series files of one run, each with its header written even if no row follows; a file
/// whose kind `[monitor]` does not select is not created.
pub struct SeriesFiles {
    ports: Option<Csv>,
    nics: Option<Csv>,
    flows: Option<Csv>,
    /// The first write that failed; later rows are dropped and [`finish`](Self::finish) reports
    /// it.
    error: Option<csv::Error>,
    /// Bytes written to the files so far (up to a buffer behind).
    bytes: Arc<AtomicU64>,
    /// [`MAX_SERIES_BYTES`] (smaller in tests).
    limit: u64,
    /// The `[monitor]` interval, for the error when the files reach the limit.
    interval: irn_core::Duration,
}

impl SeriesFiles {
    /// Creates `dir/series/` and the files `monitor` selects.
    pub fn create(dir: &Path, monitor: &Monitor) -> Result<Self> {
        let dir = dir.join("series");
        fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let bytes = Arc::new(AtomicU64::new(0));
        let open = |name: &str, header: &[&str], wanted: bool| -> Result<Option<Csv>> {
            if !wanted {
                return Ok(None);
            }
            let path = dir.join(name);
            let file =
                File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
            let bytes = Arc::clone(&bytes);
            let mut w = csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(BufWriter::new(Counted { file, bytes }));
            w.write_record(header)?;
            Ok(Some(w))
        };
        Ok(SeriesFiles {
            ports: open("ports.csv", &PortSample::HEADER, !monitor.ports.is_empty())?,
            nics: open("nics.csv", &NicSample::HEADER, monitor.nics)?,
            flows: open("flows.csv", &FlowSample::HEADER, !monitor.flows.is_empty())?,
            error: None,
            bytes,
            limit: MAX_SERIES_BYTES,
            interval: monitor.interval,
        })
    }

    /// Flushes every file; the first error of the run, if any.
    pub fn finish(mut self, dir: &Path) -> Result<()> {
        for w in [&mut self.ports, &mut self.nics, &mut self.flows]
            .into_iter()
            .flatten()
        {
            if let Err(e) = w.flush() {
                self.error.get_or_insert(e.into());
            }
        }
        if let Some(e) = self.error {
            return Err(e)
                .with_context(|| format!("cannot write {}", dir.join("series").display()));
        }
        if self.full() {
            anyhow::bail!(
                "monitor.interval = \"{}\": {} reached {:.1} GiB, the most irn writes for a \
                 run's series, before the run ended; sample less often (a longer \
                 monitor.interval) or fewer ports (monitor.ports), or set monitor.nics = false",
                self.interval,
                dir.join("series").display(),
                self.limit as f64 / f64::from(1 << 30)
            );
        }
        Ok(())
    }

    fn write(w: &mut Option<Csv>, error: &mut Option<csv::Error>, row: &impl Serialize) {
        if let (Some(w), None) = (w.as_mut(), error.as_ref()) {
            if let Err(e) = w.serialize(row) {
                *error = Some(e);
            }
        }
    }
}

impl SeriesSink for SeriesFiles {
    fn port(&mut self, row: &PortSample) {
        Self::write(&mut self.ports, &mut self.error, row);
    }

    fn nic(&mut self, row: &NicSample) {
        Self::write(&mut self.nics, &mut self.error, row);
    }

    fn flow(&mut self, row: &FlowSample) {
        Self::write(&mut self.flows, &mut self.error, row);
    }

    fn full(&self) -> bool {
        self.bytes.load(Ordering::Relaxed) >= self.limit
    }
}

/// The columns of a `ports.csv` row the charts read.
#[derive(Deserialize)]
struct PortRow {
    time_us: f64,
    port: u32,
    node: String,
    peer: String,
    tier: u32,
    peer_tier: u32,
    queue_bytes: u64,
    /// Empty at a NIC.
    buffer_bytes: Option<u64>,
    paused_us: f64,
    pause_sent: u64,
    pause_received: u64,
    utilization: f64,
    /// By tier and index (`leaf 3`); absent from files of irn versions before the columns.
    #[serde(default)]
    node_label: Option<String>,
    #[serde(default)]
    peer_label: Option<String>,
    /// Absent from files of irn versions before the column.
    #[serde(default)]
    pause_quanta_sent: u64,
}

impl PortRow {
    /// The port as its charts name it: `leaf 3 → spine 5`, or by ids (`switch:9 → switch:4`)
    /// in files without labels.
    fn label(&self) -> String {
        match (&self.node_label, &self.peer_label) {
            (Some(node), Some(peer)) => format!("{node} → {peer}"),
            _ => format!("{} → {}", self.node, self.peer),
        }
    }

    /// The tier names of the port's node and peer (`leaf`, `site A spine`), if both are named:
    /// `None` in files without labels and in networks without named tiers (`switch 9`).
    fn tier_names(&self) -> Option<(&str, &str)> {
        let node = tier_name(self.node_label.as_deref()?)?;
        let peer = tier_name(self.peer_label.as_deref()?)?;
        Some((node, peer))
    }
}

/// A node label without its index (`site A leaf 3` → `site A leaf`); `None` for a switch of
/// a network without named tiers (`switch 9`), whose tier says nothing its hop count does not.
fn tier_name(label: &str) -> Option<&str> {
    let name = match label.rsplit_once(' ') {
        Some((name, index)) if index.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => label,
    };
    (name != "switch" && !name.ends_with(" switch")).then_some(name)
}

/// Lines per chart, and points per line (consecutive samples are merged beyond it).
const LINES: usize = 5;
const POINTS: usize = 2000;

/// One sampled port of one variant, after the first pass.
struct Seen {
    variant: usize,
    port: u32,
    label: String,
    samples: usize,
    peak_queue: u64,
    peak_buffer: u64,
    paused_us: f64,
    pauses_sent: u64,
    pauses_received: u64,
}

/// Heat map columns: consecutive samples merge beyond it.
const CELLS: usize = 200;

/// The ids of the charts [`charts`] draws: queue occupancy, paused share, utilization by tier,
/// input buffer occupancy and PAUSE frames (the last two: the WAN slides' plots).
pub const CHART_IDS: [&str; 5] = [
    "queue_over_time",
    "pause_over_time",
    "utilization_by_tier",
    "buffer_over_time",
    "pause_frames_over_time",
];

/// A monitored run whose folder has `series/ports.csv`, as the charts draw it.
pub struct Monitored {
    /// What its lines and bands are prefixed with: its variant, or its variant and seed when
    /// several runs share a chart; empty for a run drawn alone.
    pub label: String,
    /// `series/ports.csv`.
    pub ports: PathBuf,
    /// The `[monitor]` interval, µs.
    pub interval_us: f64,
}

impl Monitored {
    /// The run in `dir`, `label`led, if its resolved scenario (`summary.json`'s) has a
    /// `[monitor]` and its folder has `series/ports.csv`; `None` otherwise.
    pub fn find(label: &str, dir: &Path, resolved: &serde_json::Value) -> Option<Monitored> {
        let interval = resolved["monitor"]["interval"].as_str()?;
        let interval_us = interval.parse::<irn_core::Duration>().ok()?.as_us_f64();
        let ports = dir.join("series").join("ports.csv");
        ports.is_file().then(|| Monitored {
            label: label.to_string(),
            ports,
            interval_us,
        })
    }

    /// `text` after the run's label, if it has one.
    fn labelled(&self, text: String) -> String {
        if self.label.is_empty() {
            text
        } else {
            format!("{} {text}", self.label)
        }
    }
}

/// The report's time-series charts of `runs`: the queue occupancy of the busiest ports (highest
/// peak) and the paused fraction of the most paused ones, over time, and the mean utilization
/// of each link tier's sampled ports; `ids` are the charts' ids, in the order of
/// [`CHART_IDS`]. Each file is read twice, row by row (once to rank the ports, once for the
/// chosen ones' points and the tiers' cells), so a long series is never held whole.
pub fn charts(runs: &[Monitored], ids: [&str; 5]) -> Result<Vec<Chart>> {
    let files: Vec<(usize, &Path, f64)> = (runs.iter().enumerate())
        .map(|(i, r)| (i, r.ports.as_path(), r.interval_us))
        .collect();
    if files.is_empty() {
        return Ok(Vec::new());
    }
    let mut seen: Vec<Seen> = Vec::new();
    // Where the earliest sample's window starts: the heat map's first cell.
    let mut start_us = f64::INFINITY;
    for (variant, path, interval) in &files {
        let first = seen.len();
        for row in rows(path)? {
            let row = row?;
            start_us = start_us.min(row.time_us - interval);
            let at = match seen[first..].binary_search_by_key(&row.port, |s| s.port) {
                Ok(i) => first + i,
                Err(i) => {
                    let label = runs[*variant].labelled(row.label());
                    seen.insert(
                        first + i,
                        Seen {
                            variant: *variant,
                            port: row.port,
                            label,
                            samples: 0,
                            peak_queue: 0,
                            peak_buffer: 0,
                            paused_us: 0.0,
                            pauses_sent: 0,
                            pauses_received: 0,
                        },
                    );
                    first + i
                }
            };
            let s = &mut seen[at];
            s.samples += 1;
            s.peak_queue = s.peak_queue.max(row.queue_bytes);
            s.peak_buffer = s.peak_buffer.max(row.buffer_bytes.unwrap_or(0));
            s.paused_us += row.paused_us;
            s.pauses_sent += row.pause_sent;
            s.pauses_received += row.pause_received;
        }
    }
    // The ports a chart draws, highest `key` first (none without any). With several runs, each
    // run's highest comes first, in run order, so that no run's lines are crowded out of the
    // overlay by the others' (a comparison is about every run), and the chart has up to one
    // line per run when that is more than LINES.
    let top = |key: &dyn Fn(&Seen) -> f64| -> Vec<usize> {
        let mut order: Vec<usize> = (0..seen.len()).filter(|&i| key(&seen[i]) > 0.0).collect();
        // Stable: ties keep variant and port order.
        order.sort_by(|&a, &b| key(&seen[b]).total_cmp(&key(&seen[a])));
        if files.len() > 1 {
            let mut first: Vec<usize> = (0..files.len())
                .filter_map(|v| order.iter().copied().find(|&i| seen[i].variant == v))
                .collect();
            let rest: Vec<usize> = order.into_iter().filter(|i| !first.contains(i)).collect();
            first.extend(rest);
            order = first;
        }
        order.truncate(LINES.max(files.len()));
        order
    };
    let busiest = top(&|s| s.peak_queue as f64);
    let paused = top(&|s| s.paused_us);
    let fullest = top(&|s| s.peak_buffer as f64);
    let sending = top(&|s| s.pauses_sent as f64);
    let receiving = top(&|s| s.pauses_received as f64);
    // Second pass: the chosen ports' points, merged `k` samples at a time beyond POINTS (the
    // peak of the queue, the mean of the paused fraction).
    let mut queue_lines: Vec<Line> = busiest.iter().map(|&i| Line::new(&seen[i], true)).collect();
    let mut pause_lines: Vec<Line> = paused.iter().map(|&i| Line::new(&seen[i], false)).collect();
    let mut buffer_lines: Vec<Line> = fullest.iter().map(|&i| Line::new(&seen[i], true)).collect();
    // PAUSE frames so far: sent by an input upstream, and received from a peer; the three
    // ports with the most of each.
    let frames = |order: &[usize], what: &str| -> Vec<Line> {
        (order.iter().take(3))
            .map(|&i| {
                let mut l = Line::new(&seen[i], false);
                l.label = format!("{} {what}", l.label);
                l
            })
            .collect()
    };
    let mut sent_lines = frames(&sending, "sent");
    let mut received_lines = frames(&receiving, "received");
    let mut tiers: Vec<Tier> = Vec::new();
    // One cell width for every variant: the widest any needs to stay within CELLS cells.
    let cell_us = (files.iter())
        .map(|(variant, _, interval)| {
            let samples = (seen.iter())
                .filter(|s| s.variant == *variant)
                .map(|s| s.samples)
                .max()
                .unwrap_or(0);
            samples.div_ceil(CELLS).max(1) as f64 * interval
        })
        .fold(0.0, f64::max);
    for (variant, path, interval) in &files {
        for row in rows(path)? {
            let row = row?;
            let tier = (row.tier, row.peer_tier);
            let names = row.tier_names();
            let at = match (tiers.iter()).position(|t| {
                t.variant == *variant
                    && t.link == tier
                    && t.names.as_ref().map(|(a, b)| (a.as_str(), b.as_str())) == names
            }) {
                Some(at) => at,
                None => {
                    tiers.push(Tier {
                        variant: *variant,
                        link: tier,
                        names: names.map(|(a, b)| (a.to_string(), b.to_string())),
                        cells: Vec::new(),
                    });
                    tiers.len() - 1
                }
            };
            // A sample covers the interval before it: its cell is where that window starts.
            let from = row.time_us - interval - start_us;
            let cell = (from.max(0.0) / cell_us + 1e-9).floor() as usize;
            let cells = &mut tiers[at].cells;
            if cells.len() <= cell {
                cells.resize(cell + 1, (0.0, 0));
            }
            cells[cell].0 += row.utilization;
            cells[cell].1 += 1;
            for l in queue_lines.iter_mut().filter(|l| l.is(*variant, row.port)) {
                l.add(row.time_us, row.queue_bytes as f64);
            }
            for l in pause_lines.iter_mut().filter(|l| l.is(*variant, row.port)) {
                l.add(row.time_us, row.paused_us / interval);
            }
            for l in buffer_lines.iter_mut().filter(|l| l.is(*variant, row.port)) {
                l.add(row.time_us, row.buffer_bytes.unwrap_or(0) as f64);
            }
            for l in sent_lines.iter_mut().filter(|l| l.is(*variant, row.port)) {
                l.total += row.pause_sent as f64;
                l.add(row.time_us, l.total);
            }
            for l in received_lines
                .iter_mut()
                .filter(|l| l.is(*variant, row.port))
            {
                l.total += row.pause_received as f64;
                l.add(row.time_us, l.total);
            }
        }
    }
    let mut charts = Vec::new();
    if !tiers.is_empty() {
        // Bands from the hosts' links up, variant by variant.
        tiers.sort_by(|a, b| {
            let key = |t: &Tier| (t.variant, t.link.0.max(t.link.1), t.link.0, t.link.1);
            key(a).cmp(&key(b)).then_with(|| a.names.cmp(&b.names))
        });
        let bands: Vec<(String, Vec<Option<f64>>)> = (tiers.iter())
            .map(|t| {
                let means = (t.cells.iter())
                    .map(|&(sum, n)| (n > 0).then(|| sum / f64::from(n)))
                    .collect();
                (runs[t.variant].labelled(t.name()), means)
            })
            .collect();
        let title = "Link utilization by tier over time".to_string();
        charts.push(Chart {
            id: ids[2].to_string(),
            svg: svg_with_label(
                plot::heat_map(&title, "utilization", &bands, start_us, cell_us)?,
                &title,
            ),
            title,
            note: "Mean utilization (the colour bar: white 0 %, darkest 100 %) of the sampled \
                   ports of each link tier, from the tier of the port's node to that of the \
                   node it sends to (leaf → spine: leaves up to spines; in a network without \
                   named tiers, by hop distance from the hosts: host → tier 1, tier 1 → \
                   tier 2), from series/ports.csv's utilization; beyond 200 samples a cell is \
                   the mean of several."
                .to_string(),
        });
    }
    let charts_over_time = [
        (
            0,
            "Queue occupancy over time: the busiest ports",
            "queued data",
            queue_lines,
            plot::fmt_bytes as fn(f64) -> String,
            "Data bytes queued for each of the {n} sampled ports with the highest peak \
             (series/ports.csv's queue_bytes, sampled every [monitor] interval; beyond {points} \
             samples a point is the peak of several).",
        ),
        (
            1,
            "Paused over time: the most paused ports",
            "time paused",
            pause_lines,
            plot::fmt_percent,
            "The share of each sample's interval that each of the {n} most paused sampled \
             ports spent paused by PFC (series/ports.csv's paused_us over the interval; beyond \
             {points} samples a point is the mean of several).",
        ),
        (
            3,
            "Buffer occupancy over time: the fullest inputs",
            "buffered data",
            buffer_lines,
            plot::fmt_bytes,
            "Bytes in the buffer behind each of the {n} sampled switch ports with the highest \
             peak: the input-queued switch's buffer of the port as an input (a long link's \
             receiving end), or the shared-buffer switch's pool (series/ports.csv's \
             buffer_bytes; beyond {points} samples a point is the peak of several).",
        ),
        (
            4,
            "PAUSE frames over time",
            "frames so far",
            sent_lines.into_iter().chain(received_lines).collect(),
            |v| format!("{v:.0}"),
            "PAUSE frames so far: sent upstream by the (at most) three inputs that sent the \
             most, and received by the three ports paused most often (series/ports.csv's \
             pause_sent and pause_received, summed over time; a steep stretch is a stretch of \
             pausing). At a long link's receiving end, sent is the WAN slides' \"pause to \
             source\"; at the port towards a pausing host, received is their \"pause from \
             sink\".",
        ),
    ];
    for (i, title, y_desc, lines, fmt, note) in charts_over_time {
        if lines.is_empty() {
            continue;
        }
        let lines: Vec<(String, Vec<(f64, f64)>)> = lines.into_iter().map(Line::finish).collect();
        charts.push(Chart {
            id: ids[i].to_string(),
            svg: svg_with_label(plot::time_lines(title, y_desc, &lines, fmt)?, title),
            title: title.to_string(),
            note: note
                .replace("{n}", &lines.len().to_string())
                .replace("{points}", &POINTS.to_string()),
        });
    }
    Ok(charts)
}

/// The longest pause in quanta and its data in bytes at any rate (65,535 × 512 bits): the
/// NRL slides' unit of pause and of buffer.
const UNIT_QUANTA: f64 = 65_535.0;
pub const UNIT_BYTES: f64 = UNIT_QUANTA * 64.0;

/// A sampled port a slides' panel may draw: between two switches (a long-haul input) or
/// towards a host (the sink), with what picks the one of each drawn.
struct PanelPort {
    port: u32,
    to_host: bool,
    peak_buffer: u64,
    paused_us: f64,
    /// Its utilization summed over the samples.
    busy: f64,
}

/// What the report says under the slides' panels.
pub const PANELS_NOTE: &str =
    "One panel per variant, as the NRL slides draw ON/OFF and time-based \
    pause control: over time in units of one longest pause (65,535 quanta at the long link's \
    rate: 0.335 ms at 100 Gb/s), the long-haul input's buffer occupancy in units of data \
    (4,194,240 B), the pause it sent to the source and the pause the end cluster put on the \
    sink, each in units of pause per unit of time (1: paused throughout; series/ports.csv's \
    buffer_bytes, pause_quanta_sent and the sink port's paused_us). Each variant has its own \
    axes: the unlimited buffer never shares one with the others.";

/// One run as a panel of the NRL slides' plots (their slides on ON/OFF and time-based pause
/// control), over time in units of one longest pause (`unit_us`, at the long link's rate):
/// the buffer occupancy of the long-haul input in units of data, the pause it sent to the
/// source and the pause the sink got from the end cluster, each in units of pause per unit of
/// time (1: paused throughout). The long-haul input is the sampled port between two switches
/// with the fullest buffer behind it; the sink is the sampled port towards a host that was
/// paused longest (or sent most). `None` when the run sampled no such pair.
pub fn slides_panel(run: &Monitored, unit_us: f64, title: &str) -> Result<Option<String>> {
    let mut ports: Vec<PanelPort> = Vec::new();
    for row in rows(&run.ports)? {
        let row = row?;
        let to_host = row.peer.starts_with("host:");
        let between_switches = row.node.starts_with("switch:") && row.peer.starts_with("switch:");
        if !(to_host || between_switches) {
            continue;
        }
        let at = match ports.iter().position(|p| p.port == row.port) {
            Some(at) => at,
            None => {
                ports.push(PanelPort {
                    port: row.port,
                    to_host,
                    peak_buffer: 0,
                    paused_us: 0.0,
                    busy: 0.0,
                });
                ports.len() - 1
            }
        };
        let p = &mut ports[at];
        p.peak_buffer = p.peak_buffer.max(row.buffer_bytes.unwrap_or(0));
        p.paused_us += row.paused_us;
        p.busy += row.utilization;
    }
    let best = |to_host: bool, key: fn(&PanelPort) -> (f64, f64)| {
        (ports.iter().filter(|p| p.to_host == to_host))
            .max_by(|a, b| {
                key(a)
                    .partial_cmp(&key(b))
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
            .map(|p| p.port)
    };
    let input = best(false, |p| (p.peak_buffer as f64, 0.0));
    let sink = best(true, |p| (p.paused_us, p.busy));
    let (Some(input), Some(sink)) = (input, sink) else {
        return Ok(None);
    };
    let per_unit = unit_us / run.interval_us.max(f64::MIN_POSITIVE);
    let (mut buffer, mut to_source, mut from_sink) = (Vec::new(), Vec::new(), Vec::new());
    for row in rows(&run.ports)? {
        let row = row?;
        let t = row.time_us / unit_us;
        if row.port == input {
            buffer.push((t, row.buffer_bytes.unwrap_or(0) as f64 / UNIT_BYTES));
            to_source.push((t, row.pause_quanta_sent as f64 / UNIT_QUANTA * per_unit));
        }
        if row.port == sink {
            from_sink.push((t, row.paused_us / run.interval_us.max(f64::MIN_POSITIVE)));
        }
    }
    let traces = [
        ("buffer occupancy (units)", thin(buffer, true), 1.0),
        ("pause to source (units)", thin(to_source, false), 1.0),
        ("pause from sink (units)", thin(from_sink, false), 1.0),
    ];
    let stacked: Vec<plot::Stacked> = (traces.iter())
        .map(|(y_desc, points, y_top)| plot::Stacked {
            y_desc,
            points,
            y_top: *y_top,
        })
        .collect();
    plot::stacked_time_lines(title, "time (units: longest pauses)", &stacked).map(Some)
}

/// `points` merged to at most [`POINTS`]: the peak (`peak`) or the mean of each run of
/// consecutive samples, at the last one's time.
fn thin(points: Vec<(f64, f64)>, peak: bool) -> Vec<(f64, f64)> {
    let per = points.len().div_ceil(POINTS).max(1);
    if per == 1 {
        return points;
    }
    (points.chunks(per))
        .map(|c| {
            let t = c[c.len() - 1].0;
            let values = c.iter().map(|p| p.1);
            let v = if peak {
                values.fold(0.0, f64::max)
            } else {
                values.sum::<f64>() / c.len() as f64
            };
            (t, v)
        })
        .collect()
}

/// One variant's link tier in the heat map: per cell, the sum of its sampled ports'
/// utilizations and how many there were.
struct Tier {
    variant: usize,
    /// The tiers (hop distances from the hosts) of the ports' nodes and of their peers...
    link: (u32, u32),
    /// ...and their names, where the network names them (`leaf`, `spine`).
    names: Option<(String, String)>,
    cells: Vec<(f64, u32)>,
}

impl Tier {
    /// Its band's name: `leaf → spine`, or by hop distance (`host → tier 1`) where the
    /// network has no named tiers.
    fn name(&self) -> String {
        if let Some((a, b)) = &self.names {
            return format!("{a} → {b}");
        }
        let name = |t: u32| {
            if t == 0 {
                "host".to_string()
            } else {
                format!("tier {t}")
            }
        };
        format!("{} → {}", name(self.link.0), name(self.link.1))
    }
}

/// `ports.csv`'s rows, one at a time.
fn rows(path: &Path) -> Result<impl Iterator<Item = Result<PortRow>> + '_> {
    let file = irn_sim::input::open(path, irn_sim::input::RESULT_TABLE)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let reader = csv::Reader::from_reader(file);
    Ok(reader.into_deserialize().map(move |r| {
        r.with_context(|| format!("{}: not an irn series/ports.csv", path.display()))
    }))
}

/// A chart's line being gathered: `per` samples merge into one point, their peak (`peak`) or
/// their mean.
struct Line {
    variant: usize,
    port: u32,
    label: String,
    per: usize,
    peak: bool,
    /// The merged samples so far: the last time, the peak or sum, how many.
    pending: (f64, f64, usize),
    /// A running total, for lines of cumulative counts.
    total: f64,
    points: Vec<(f64, f64)>,
}

impl Line {
    fn new(s: &Seen, peak: bool) -> Self {
        Line {
            variant: s.variant,
            port: s.port,
            label: s.label.clone(),
            per: s.samples.div_ceil(POINTS).max(1),
            peak,
            pending: (0.0, 0.0, 0),
            total: 0.0,
            points: Vec::with_capacity(s.samples.min(POINTS)),
        }
    }

    fn is(&self, variant: usize, port: u32) -> bool {
        self.variant == variant && self.port == port
    }

    fn add(&mut self, time_us: f64, value: f64) {
        let (_, acc, n) = self.pending;
        let acc = match (n, self.peak) {
            (0, _) => value,
            (_, true) => acc.max(value),
            (_, false) => acc + value,
        };
        self.pending = (time_us, acc, n + 1);
        if n + 1 == self.per {
            self.flush();
        }
    }

    /// Ends the pending point.
    fn flush(&mut self) {
        let (t, acc, n) = self.pending;
        if n > 0 {
            let value = if self.peak { acc } else { acc / n as f64 };
            self.points.push((t, value));
        }
        self.pending = (0.0, 0.0, 0);
    }

    fn finish(mut self) -> (String, Vec<(f64, f64)>) {
        self.flush();
        (self.label, self.points)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Series files that reach their limit say so and fail the run with what to change; below
    /// it they take every row.
    #[test]
    fn series_past_their_limit_fail_the_run() {
        let dir = std::env::temp_dir().join(format!("irn-series-cap-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let monitor = Monitor {
            interval: irn_core::Duration::from_ns(7),
            ports: Vec::new(),
            flows: Vec::new(),
            nics: true,
            summary_from: None,
        };
        let row = |host| NicSample {
            time_us: 0.007,
            host,
            flows_sending: 1,
            flows_receiving: 0,
            ordering_bytes: None,
        };
        for (rows, fails) in [(10, false), (2_000, true)] {
            let run = dir.join(format!("run-{rows}"));
            fs::create_dir_all(&run).unwrap();
            let mut files = SeriesFiles::create(&run, &monitor).unwrap();
            files.limit = 16 << 10;
            for host in 0..rows {
                files.nic(&row(host));
            }
            assert_eq!(files.full(), fails, "{rows} rows");
            let result = files.finish(&run);
            assert_eq!(result.is_err(), fails, "{result:?}");
            if let Err(e) = result {
                let e = e.to_string();
                assert!(e.starts_with("monitor.interval = \"7ns\": "), "{e}");
                assert!(e.contains("the most irn writes for a run's series"), "{e}");
            }
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn tiers_are_named_where_the_network_names_them() {
        assert_eq!(tier_name("leaf 3"), Some("leaf"));
        assert_eq!(tier_name("site A spine 12"), Some("site A spine"));
        assert_eq!(tier_name("site B border"), Some("site B border"));
        assert_eq!(tier_name("host 0"), Some("host"));
        assert_eq!(tier_name("switch 9"), None);
        assert_eq!(tier_name("site A switch 0"), None);
        let tier = |names: Option<(&str, &str)>| Tier {
            variant: 0,
            link: (1, 2),
            names: names.map(|(a, b)| (a.to_string(), b.to_string())),
            cells: Vec::new(),
        };
        assert_eq!(tier(Some(("leaf", "spine"))).name(), "leaf → spine");
        assert_eq!(tier(None).name(), "tier 1 → tier 2");
    }

    /// `series/ports.csv` of irn versions before `node_label` and `peer_label`: its ports are
    /// named by their ids, its bands by hop distance.
    #[test]
    fn files_without_labels_name_ports_by_id() {
        let dir = std::env::temp_dir().join(format!("irn-series-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let ports = dir.join("ports.csv");
        let header = "time_us,port,node,local,peer,tier,peer_tier,queue_bytes,buffer_bytes,\
                      paused,paused_us,pause_sent,pause_received,bytes_sent,utilization,\
                      ecn_marks,drops,link_losses";
        let rows = ["1.0,3,switch:0,1,host:1,1,0,2000,,0,0.0,0,0,10,0.5,0,0,0"; 2];
        fs::write(&ports, format!("{header}\n{}\n", rows.join("\n"))).unwrap();
        let run = Monitored {
            label: String::new(),
            ports,
            interval_us: 1.0,
        };
        let charts = charts(&[run], CHART_IDS).unwrap();
        fs::remove_dir_all(&dir).unwrap();
        let svg = |id: &str| &charts.iter().find(|c| c.id == id).unwrap().svg;
        assert!(svg("queue_over_time").contains("switch:0 → host:1"));
        assert!(svg("utilization_by_tier").contains("tier 1 → host"));
    }

    /// Overlaid runs each keep their busiest port's line, however much busier the other
    /// runs' ports are, and a chart grows to one line per run beyond five.
    #[test]
    fn every_overlaid_run_has_its_line() {
        let dir = std::env::temp_dir().join(format!("irn-series-runs-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let header = "time_us,port,node,local,peer,tier,peer_tier,queue_bytes,buffer_bytes,\
                      paused,paused_us,pause_sent,pause_received,bytes_sent,utilization,\
                      ecn_marks,drops,link_losses";
        // Run 0: six ports with queues of 1000-6000 B; runs 1-6: one port with 10 B.
        let runs: Vec<Monitored> = (0..7)
            .map(|r| {
                let rows: Vec<String> = if r == 0 {
                    (1..=6)
                        .map(|p| {
                            format!(
                                "1.0,{p},switch:0,{p},host:{p},1,0,{},,0,0.0,0,0,1,0.1,0,0,0",
                                p * 1000
                            )
                        })
                        .collect()
                } else {
                    vec!["1.0,9,switch:0,9,host:9,1,0,10,,0,0.0,0,0,1,0.1,0,0,0".to_string()]
                };
                let ports = dir.join(format!("ports{r}.csv"));
                fs::write(&ports, format!("{header}\n{}\n", rows.join("\n"))).unwrap();
                Monitored {
                    label: format!("run{r}"),
                    ports,
                    interval_us: 1.0,
                }
            })
            .collect();
        let charts = charts(&runs, CHART_IDS).unwrap();
        fs::remove_dir_all(&dir).unwrap();
        let queue = &charts
            .iter()
            .find(|c| c.id == "queue_over_time")
            .unwrap()
            .svg;
        for r in 1..7 {
            assert!(
                queue.contains(&format!("run{r} switch:0 → host:9")),
                "run {r}"
            );
        }
        // Run 0's busiest port, and no room for its others: seven runs, seven lines.
        assert!(queue.contains("run0 switch:0 → host:6"));
        assert!(!queue.contains("run0 switch:0 → host:5"));
    }

    #[test]
    fn long_lines_merge_samples_into_peaks_or_means() {
        // (samples, peak?, the points)
        type Points = &'static [(f64, f64)];
        let cases: [(usize, bool, Points); 3] = [
            (3, true, &[(1.0, 5.0), (2.0, 1.0), (3.0, 4.0)]),
            (2 * POINTS, true, &[(2.0, 5.0), (4.0, 4.0)]),
            (2 * POINTS, false, &[(2.0, 3.0), (4.0, 2.5)]),
        ];
        for (samples, peak, want) in cases {
            let seen = Seen {
                variant: 0,
                port: 7,
                label: "leaf 0 → host 1".into(),
                samples,
                peak_queue: 5,
                peak_buffer: 0,
                paused_us: 1.0,
                pauses_sent: 0,
                pauses_received: 0,
            };
            let mut line = Line::new(&seen, peak);
            for (t, v) in [(1.0, 5.0), (2.0, 1.0), (3.0, 4.0), (4.0, 1.0)]
                .iter()
                .take(if samples == 3 { 3 } else { 4 })
            {
                line.add(*t, *v);
            }
            let (label, points) = line.finish();
            assert_eq!(label, "leaf 0 → host 1");
            assert_eq!(points, want, "{samples} samples, peak {peak}");
        }
    }
}
