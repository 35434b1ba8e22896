//! `irn run` and `irn validate`.

use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{anyhow, Context, Result};
use irn_core::transport::RtoPolicy;
use irn_sim::config::{ControlBalancing, DrillTies, LoadBalancing};
use irn_sim::scenario::{self, Run, Scenario, WorkloadKind};
use irn_sim::sim::trace;
use rayon::prelude::*;

use crate::changes;
use crate::memory;
use crate::output::{self, Finished, Performance, Staging, Writer};
use crate::progress::Bars;
use crate::series::{self, SeriesFiles};
use crate::table;
use irn_sim::series::SeriesSink;

/// The IRN paper's default case, shortened, run when no scenario file is given.
const DEFAULT_SCENARIO: &str = include_str!("../../../scenarios/default.toml");

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Scenario file (TOML). Without one, runs the embedded IRN default case
    /// (scenarios/default.toml).
    scenario: Option<PathBuf>,
    /// Override a key for every run, e.g. `--set workload.load=0.5` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    overrides: Vec<String>,
    /// Results folder. One irn wrote (it holds `.irn-results`) has irn's files replaced and
    /// yours in it kept; a non-empty folder irn did not write is refused. Default:
    /// `results/<scenario name>`.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// How many runs to simulate at once (each run uses one core; at most 1024, and no more than
    /// there are runs). Default: all cores.
    #[arg(short = 'j', long, value_name = "N", value_parser = crate::run::jobs)]
    jobs: Option<NonZeroUsize>,
    /// Sample ports, NICs and flows every INTERVAL (e.g. `10us`) into `series/*.csv`: a
    /// shorthand for `--set monitor.interval=INTERVAL`, with the scenario's `[monitor]`
    /// selection or the default one (every switch port and every NIC).
    #[arg(long, value_name = "INTERVAL")]
    monitor: Option<String>,
    /// Trace every event of these flows (ids as in flows.csv; several, space- or
    /// comma-separated) into trace.csv beside the results.
    #[arg(long = "trace-flow", value_name = "ID", num_args = 1.., value_delimiter = ',')]
    trace_flows: Vec<u32>,
}

fn load(path: Option<&Path>, overrides: &[String]) -> Result<Scenario> {
    let scenario = match path {
        Some(p) => scenario::load(p, overrides)?,
        None => scenario::parse(
            DEFAULT_SCENARIO,
            "scenarios/default.toml (embedded)",
            Path::new("."),
            overrides,
        )?,
    };
    Ok(scenario)
}

pub fn run(args: RunArgs) -> Result<()> {
    let overrides = with_monitor(&args.overrides, args.monitor.as_deref());
    let scenario = load(args.scenario.as_deref(), &overrides)?;
    let file = args.scenario.as_ref().map_or_else(
        || "scenarios/default.toml (embedded)".to_string(),
        |p| p.display().to_string(),
    );
    let out = match args.out {
        Some(out) => out,
        None => PathBuf::from("results").join(results_folder(&file, &scenario)?),
    };
    for r in &scenario.runs {
        trace::check_flows(&args.trace_flows, r.config.flows.len())
            .map_err(|e| anyhow!("--trace-flow: variant `{}`: {e}", r.name))?;
    }
    let subs = variant_folders(&file, &scenario)?;
    let free = memory::available();
    let floors = memory::check_runs(&file, &scenario.runs, free)?;
    let mut inputs = Vec::new();
    for r in &scenario.runs {
        for input in output::scenario_inputs(args.scenario.as_deref(), &r.resolved) {
            if !inputs.contains(&input) {
                inputs.push(input);
            }
        }
    }
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    let _lock = output::lock(&out)?;
    let staging = Staging::new(&out, Writer::Run, &inputs)?;
    staging.refuse_in_the_way(&planned(&scenario, &subs, !args.trace_flows.is_empty()))?;
    let finished_runs = Arc::new(AtomicUsize::new(0));
    output::on_interrupt(interrupted(
        &staging,
        scenario.runs.len(),
        Arc::clone(&finished_runs),
    ));
    for r in &scenario.runs {
        if let Some(note) = long_run_note(&r.config) {
            errln!("note: {}: {note}", r.name);
        }
        warn(r);
    }
    // Before the bars, so what is being simulated shows while it runs.
    outp!("{}", simulated(&scenario));
    let threads = memory::parallelism(&floors, threads(args.jobs, floors.len()), free);
    let pool = worker_pool(NonZeroUsize::new(threads), scenario.runs.len())?;
    let bars = Bars::new(scenario.runs.len());
    let finished: Vec<Finished> = pool.install(|| {
        (scenario.runs.par_iter().zip(&subs))
            .map(|(r, sub)| {
                let started = Instant::now();
                let mut report = bars.reporter(&r.name);
                let dir = staging.run_dir(sub)?;
                let result = if args.trace_flows.is_empty() {
                    series::run(&r.config, &dir, &mut report)?
                } else {
                    let mut series = (r.config.monitor.as_ref())
                        .map(|m| SeriesFiles::create(&dir, m))
                        .transpose()?;
                    let sink = series.as_mut().map(|s| s as &mut dyn SeriesSink);
                    let path = dir.join("trace.csv");
                    let result = run_traced(r, &args.trace_flows, &path, &mut report, sink)?;
                    if let Some(series) = series {
                        series.finish(&dir)?;
                    }
                    result
                };
                let performance = Performance::new(&result, started.elapsed());
                let mut finished = Finished {
                    name: &r.name,
                    resolved: &r.resolved,
                    inputs: &r.inputs,
                    result,
                    performance,
                };
                // Written now, and the per-flow rows let go: a comparison of many large runs
                // would otherwise hold every variant's rows at once (8 variants of a million
                // flows: 5 GB). The table reads only whether any flow was an incast's.
                staging.write_run(sub, &scenario.name, r.config.seed, &finished)?;
                finished.result.flows.retain(|f| f.incast);
                finished.result.flows.shrink_to_fit();
                finished.result.fct = Vec::new();
                finished_runs.fetch_add(1, Ordering::Relaxed);
                Ok(finished)
            })
            .collect::<Result<_>>()
    })?;
    // The bars draw their last before the table.
    drop(bars);
    if scenario.compare {
        staging.write_comparison(&finished)?;
    }
    let dir = staging.commit()?;
    outp!("{}", table::render(&finished));
    outln!("results: {}", dir.display());
    outln!("{}", crate::report::plot_hint(&dir));
    Ok(())
}

/// What `irn run` says on Ctrl-C: the results folder is written whole or not at all, so before
/// it is in place the old one (if any) is kept as it was and the temporary one removed, however
/// many of the `runs` had finished (`finished` counts them as they do).
fn interrupted(
    staging: &Staging,
    runs: usize,
    finished: Arc<AtomicUsize>,
) -> impl Fn(&[PathBuf]) -> String + Send + 'static {
    let (dest, tmp) = (
        staging.dest().to_path_buf(),
        staging.temporary().to_path_buf(),
    );
    // `.x.tmp-PID`, not `./.x.tmp-PID`, for a folder in the working one.
    let shown = tmp.strip_prefix(".").unwrap_or(&tmp).display().to_string();
    let existed = std::fs::symlink_metadata(&dest).is_ok();
    move |removing| {
        let n = finished.load(Ordering::Relaxed);
        let done = match runs {
            1 => "the run had not finished".to_string(),
            _ => format!("{n} of {runs} variants had finished"),
        };
        if !removing.contains(&tmp) {
            return format!("kept {} (written whole), removed nothing", dest.display());
        }
        let kept = match existed {
            true => format!("kept {} as it was before this run", dest.display()),
            false => format!("kept nothing ({} was not created)", dest.display()),
        };
        format!(
            "{kept}, removed the unfinished {shown} ({done}; a results folder is written whole \
             or not at all)"
        )
    }
}

/// The files and folders a run of `scenario` writes in its folder, `subs` its variants' folders.
fn planned(scenario: &Scenario, subs: &[String], traced: bool) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for (r, sub) in scenario.runs.iter().zip(subs) {
        let monitored = r.config.monitor.is_some();
        paths.extend(output::run_files(Path::new(sub), traced, monitored));
    }
    if scenario.compare {
        paths.push(PathBuf::from("comparison.csv"));
    }
    paths
}

/// The folder `irn run` writes `scenario` into without `--out`, `results/<this>`: its name as
/// a folder name, refused when it makes none ([`output::top_folder`]).
fn results_folder(file: &str, scenario: &Scenario) -> Result<String> {
    output::top_folder(&format!("{file}: name"), &scenario.name)
}

/// Each variant's folder (empty for a scenario without `[[compare]]`, whose one run has the
/// top level; a single variant still has a folder, as the docs' layout says), checked before
/// anything runs: refused when one has no folder of its own or two share one.
fn variant_folders(file: &str, scenario: &Scenario) -> Result<Vec<String>> {
    let subs = (scenario.runs.iter())
        .map(|r| match scenario.compare {
            true => output::sub_folder(&format!("{file}: [[compare]] name"), &r.name),
            false => Ok(String::new()),
        })
        .collect::<Result<Vec<String>>>()?;
    let names = (scenario.runs.iter()).map(|r| r.name.as_str());
    output::distinct(
        &format!("{file}: [[compare]] names"),
        names.zip(subs.iter().map(String::as_str)),
    )?;
    Ok(subs)
}

/// `--set` overrides with `--monitor INTERVAL` (`irn run`, `irn sweep`, `irn check`) as
/// `monitor.interval=INTERVAL` in front, so that a `--set monitor.interval` given as well wins.
pub fn with_monitor(overrides: &[String], monitor: Option<&str>) -> Vec<String> {
    // A string, whatever it looks like: the interval is checked as `monitor.interval`.
    let monitor = monitor.map(|interval| {
        let value = toml::Value::String(interval.to_string());
        format!("monitor.interval={value}")
    });
    monitor
        .into_iter()
        .chain(overrides.iter().cloned())
        .collect()
}

/// Events one core simulates per second on the benchmark (`irn bench`: 15-20 M), the rate the
/// estimate below assumes.
const EVENTS_PER_SECOND: f64 = 15e6;

/// A rough estimate of a run's wall time on one core, from its work: a data packet and its
/// acknowledgment take about three events per link of the path (measured: 12.0 per packet on
/// the 4-link paths of `scenarios/bench/leafspine128.toml`). Retransmissions, pauses and
/// congestion control add to it.
fn estimated_seconds(cfg: &irn_sim::config::SimConfig) -> (u64, f64) {
    let mtu = u64::from(cfg.transport.mtu.max(1));
    let packets: u64 = cfg.flows.iter().map(|f| f.size_bytes.div_ceil(mtu)).sum();
    // The mean path length of (up to) the first 256 flows.
    let sample: Vec<u32> = cfg
        .flows
        .iter()
        .take(256)
        .map(|f| cfg.topology.path(f.src, f.dst).hops)
        .collect();
    let hops = sample.iter().sum::<u32>() as f64 / sample.len().max(1) as f64;
    let events = packets as f64 * 3.0 * hops;
    (packets, events / EVENTS_PER_SECOND)
}

/// A note before a run expected to take more than a minute: what it simulates and a rough
/// estimate, so a slip of unit in a window or a load shows before the wait.
fn long_run_note(cfg: &irn_sim::config::SimConfig) -> Option<String> {
    let (packets, secs) = estimated_seconds(cfg);
    (secs > 60.0).then(|| {
        format!(
            "{} flows, {:.1} M data packets: expect roughly {:.0} min or more on one core \
             (estimated from the packet count and path lengths)",
            cfg.flows.len(),
            packets as f64 / 1e6,
            secs / 60.0
        )
    })
}

/// What was simulated, above the table: the network and workload the runs share, then a line
/// per column saying what it is (so `RoCE` reads as RoCE without PFC, say).
fn simulated(scenario: &irn_sim::scenario::Scenario) -> String {
    let Some(first) = scenario.runs.first() else {
        return String::new();
    };
    let key = |r: &irn_sim::scenario::Run, path: &str| -> String {
        let v = serde_json::to_value(&r.resolved).unwrap_or_default();
        let v = path.split('.').fold(&v, |v, k| &v[k]);
        match v {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Null => "-".into(),
            other => other.to_string(),
        }
    };
    // A trace or incast has no load; its flows' count and span say what it is.
    let load = match key(first, "workload.load").as_str() {
        "-" => String::new(),
        l => format!(" at load {l}"),
    };
    let timing = format!("{}{}", arrivals(first), measured(&first.resolved.run));
    let c = &first.config;
    let mut out = format!(
        "{}: {} ({}), {} workload{load}, {timing}\n",
        scenario.name,
        key(first, "topology.kind"),
        nodes(&c.topology),
        key(first, "workload.kind"),
    );
    for (r, changes) in scenario.runs.iter().zip(variant_changes(scenario)) {
        // Shown only when they depart from the defaults, which most scenarios keep.
        let mut extras = String::new();
        // ConWeave's ToRs keep path tables too, but of every shortest path: no count to show.
        let count = key(r, "topology.paths");
        if r.config.topology.source_routed() && count != "-" {
            let paths = match key(r, "topology.routing").as_str() {
                "up-down" => "up*/down*",
                _ => "shortest",
            };
            extras += &format!(", {count} {paths} paths");
        }
        if let Some(d) = r.config.deflection {
            extras += &format!(", DIBS (TTL {})", d.ttl);
        }
        if r.config.control_balancing == ControlBalancing::Ecmp {
            extras += " (ACKs by ECMP)";
        }
        if let LoadBalancing::Drill {
            ties: DrillTies::Sample,
            ..
        } = r.config.load_balancing
        {
            extras += " (ties to a sample)";
        }

        // A large fabric's events are taken a pod at a time (`[run] partitions`), and within a
        // pod a node at a time when every link is a window long.
        let pods =
            irn_sim::partition::Partitioning::for_run(&r.config).map_or(String::new(), |p| {
                let unit = if p.by_node { "pod and node" } else { "pod" };
                format!(", events by {unit} ({} partitions)", p.count)
            });
        out.push_str(&format!(
            "  {}: {}, PFC {}, cc {}, load balancing {}{extras}, ordering {}{pods}{}\n",
            r.name,
            key(r, "transport.kind"),
            pfc_state(&r.config),
            key(r, "transport.cc"),
            key(r, "load_balancing.kind"),
            key(r, "ordering.kind"),
            changes::suffix(&changes),
        ));
    }
    out.push('\n');
    out
}

/// When run `r`'s flows start, exactly: a Poisson or queries workload's arrivals over its
/// `workload.duration` (they fall in [0, duration), the warm-up included); flows that wait for
/// others by what they wait for; any other workload by its first and last start times (an
/// incast's all at once).
fn arrivals(r: &Run) -> String {
    let c = &r.config;
    let flows = match c.flows.len() {
        1 => "1 flow".to_string(),
        n => format!("{n} flows"),
    };
    if let Some(dag) = &c.dag {
        let roots = (0..dag.len()).filter(|&f| dag.is_root(f)).count();
        return format!(
            "{flows} ({roots} start at set times, the rest when the flows they wait for finish)"
        );
    }
    let w = &r.resolved.workload;
    let windowed = matches!(w.kind, WorkloadKind::Poisson | WorkloadKind::Queries);
    if let Some(duration) = w.duration.as_deref().filter(|_| windowed) {
        return format!("{flows} arriving over {duration}");
    }
    let starts = c.flows.iter().map(|f| f.start);
    match (starts.clone().min(), starts.max()) {
        (Some(first), Some(last)) if first == last && c.flows.len() == 1 => {
            format!("1 flow starting at {}", microseconds(first))
        }
        (Some(first), Some(last)) if first == last => {
            format!("{flows} all starting at {}", microseconds(first))
        }
        (Some(first), Some(last)) => format!(
            "{flows} starting between {} and {}",
            tenth_us(first, false),
            tenth_us(last, true)
        ),
        _ => "no flows".to_string(),
    }
}

/// Which of the flows are measured, when not all are: `run.warmup` leaves out those that start
/// before it, `run.measure_until` those that start at or after it.
fn measured(run: &irn_sim::scenario::RunSection) -> String {
    let warmup = (run.warmup.parse::<irn_core::Duration>()).map_or(true, |d| d.as_ps() > 0);
    match (warmup, run.measure_until.as_deref()) {
        (false, None) => String::new(),
        (true, None) => format!(
            "; those starting in the first {} are a warm-up, not measured",
            run.warmup
        ),
        (_, Some(until)) => format!(
            "; only those starting from {} until {until} are measured",
            run.warmup
        ),
    }
}

/// An instant in microseconds, to the picosecond without trailing zeros (`999.5us`, `0us`).
fn microseconds(t: irn_core::Time) -> String {
    let ps = t.as_ps();
    let whole = ps / 1_000_000;
    let fraction = format!("{:06}", ps % 1_000_000);
    match fraction.trim_end_matches('0') {
        "" => format!("{whole}us"),
        f => format!("{whole}.{f}us"),
    }
}

/// `t` in tenths of a microsecond, rounded down (`up` false) or up, so that a span between two
/// rounded instants still holds the exact ones (`19999.7us` for 19999.667073 us, up).
fn tenth_us(t: irn_core::Time, up: bool) -> String {
    let tenths = match up {
        true => t.as_ps().div_ceil(100_000),
        false => t.as_ps() / 100_000,
    };
    match tenths % 10 {
        0 => format!("{}us", tenths / 10),
        d => format!("{}.{d}us", tenths / 10),
    }
}

/// A network's size in words: `128 hosts, 16 switches`, `2 hosts, 1 switch`.
fn nodes(t: &irn_sim::topology::Topology) -> String {
    let count =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    format!(
        "{}, {}",
        count(t.hosts().len(), "host", "hosts"),
        count(t.switches().len(), "switch", "switches")
    )
}

/// What each run changes from the base scenario (every key, [`changes::changed`]); with no base
/// (it does not resolve alone), the keys the variants differ in. Nothing for a scenario without
/// `[[compare]]`, whose one run is the scenario itself.
fn variant_changes(scenario: &Scenario) -> Vec<Vec<String>> {
    let resolved: Vec<serde_json::Value> = (scenario.runs.iter())
        .map(|r| serde_json::to_value(&r.resolved).unwrap_or_default())
        .collect();
    if !scenario.compare {
        return vec![Vec::new(); resolved.len()];
    }
    match scenario
        .base
        .as_ref()
        .and_then(|b| serde_json::to_value(b).ok())
    {
        Some(base) => (resolved.iter().zip(&scenario.runs))
            .map(|(r, run)| changes::changed(&base, r, &run.set_keys))
            .collect(),
        None => changes::differing(&resolved),
    }
}

/// Runs `run`, streaming the events of flows `ids` to `path` as `trace.csv`
/// ([`trace::HEADER`]), so a long trace never sits in memory.
fn run_traced<'a>(
    run: &'a Run,
    ids: &[u32],
    path: &Path,
    report: &mut dyn FnMut(irn_sim::Progress),
    series: Option<&'a mut dyn SeriesSink>,
) -> Result<irn_sim::RunResult> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut w = BufWriter::new(file);
    let mut written = writeln!(w, "{}", trace::HEADER);
    let mut sink = |row: &trace::TraceRow| {
        if written.is_ok() {
            written = writeln!(w, "{row}");
        }
    };
    crate::huge_pages::prepare_for(&run.config);
    let result = irn_sim::run_traced(&run.config, ids, &mut sink, report, series);
    written
        .and_then(|()| w.flush())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(result)
}

pub fn validate(path: &Path, overrides: &[String]) -> Result<()> {
    if crate::sweep::is_sweep_file(path) {
        return crate::sweep::validate(path, overrides);
    }
    let scenario = load(Some(path), overrides)?;
    // The checks `irn run` makes before it runs, so a valid scenario is one it runs.
    let file = path.display().to_string();
    results_folder(&file, &scenario)?;
    variant_folders(&file, &scenario)?;
    let floors = memory::check_runs(&file, &scenario.runs, memory::available())?;
    outln!(
        "{}: scenario `{}` is valid, {} run(s)",
        path.display(),
        scenario.name,
        scenario.runs.len()
    );
    let described = (scenario.runs.iter())
        .zip(variant_changes(&scenario))
        .zip(&floors);
    for ((r, changes), floor) in described {
        let c = &r.config;
        let t = &c.topology;
        outln!(
            "  {}: {}; {}; {}, BDP cap {}{}, {}; buffer {} B, PFC {}{}",
            r.name,
            nodes(t),
            arrivals(r),
            r.resolved.transport.kind.name(),
            c.transport
                .bdp_cap
                .map_or("off".to_string(), |b| format!("{b} packets")),
            recovery_options(&c.transport),
            rto_state(r),
            c.switch.buffer_bytes,
            pfc_state(c),
            changes::suffix(&changes),
        );
        outln!("    memory: {}", memory::describe(floor));
        warn(r);
    }
    Ok(())
}

/// The loss-recovery options in a run's one-line description, when any is on: go-back-N's
/// lossy-mode reactions and what an IRN timeout resends.
fn recovery_options(t: &irn_core::TransportConfig) -> String {
    let mut parts = String::new();
    if let Some(w) = t.tx_window {
        parts += &format!(", tx window {w} packets");
    }
    if let Some(sr) = t.slow_restart {
        let growth = match sr.growth {
            irn_core::transport::Growth::Additive => "additive",
            irn_core::transport::Growth::SlowStart => "slow-start",
        };
        parts += &format!(", slow restart ×{} ({growth})", sr.factor);
    }
    if let Some(i) = t.nack_interval {
        parts += &format!(", re-NACK every {i}");
    }
    if t.acks == irn_core::transport::Acks::None {
        parts += ", no ACKs";
    }
    if t.timeout_resend == irn_core::transport::Resend::Unsacked {
        parts += ", a timeout resends every unSACKed packet";
    }
    if t.nack_resend == irn_core::transport::Resend::Unsacked {
        parts += ", a NACK resends every unSACKed packet";
    }
    parts
}

/// The timers in a run's one-line description; an RTO_high derived from the network says so.
fn rto_state(r: &Run) -> String {
    let rto = r.config.transport.rto;
    let derived = r.resolved.transport.rto_high == "auto" && rto != RtoPolicy::Disabled;
    format!("{rto}{}", if derived { " (RTO_high auto)" } else { "" })
}

/// PFC's state in a run's one-line description; a credit-based run says so.
fn pfc_state(c: &irn_sim::SimConfig) -> &'static str {
    match (c.switch.pfc.is_some(), c.credits.is_some()) {
        (true, _) => "on",
        (false, true) => "off (InfiniBand credits)",
        (false, false) => "off",
    }
}

/// Prints what the scenario allows but likely did not mean (see `Run::warnings`).
pub fn warn(r: &Run) {
    for w in &r.warnings {
        errln!("warning: {}: {w}", r.name);
    }
}

/// The most runs at once `-j` takes: a thread each, so more than the machine's cores only
/// costs memory (a hundred thousand threads took minutes to start, with nothing to run).
pub const MAX_JOBS: usize = 1024;

/// `-j`/`--jobs`: a number of workers, at least one and at most [`MAX_JOBS`]. clap's own
/// reading of a `NonZeroUsize` says only that the number "would be zero for non-zero type".
pub fn jobs(text: &str) -> Result<NonZeroUsize, String> {
    let n: usize = text
        .parse()
        .map_err(|_| "-j takes a whole number of runs at once, at least 1".to_string())?;
    if n > MAX_JOBS {
        return Err(format!(
            "-j {n}: at most {MAX_JOBS} runs at once (each takes a thread; more than the \
             machine's cores only costs memory)"
        ));
    }
    NonZeroUsize::new(n).ok_or_else(|| "-j must be at least 1".to_string())
}

/// The threads runs are simulated on, one run per thread: `jobs` of them, or one per core, and
/// never more than the `runs` there are to do.
pub fn worker_pool(jobs: Option<NonZeroUsize>, runs: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads(jobs, runs))
        .build()
        .context("cannot start worker threads")
}

/// How many of `runs` runs to run at once: `jobs`, or one per core, and no more than there are.
pub fn threads(jobs: Option<NonZeroUsize>, runs: usize) -> usize {
    jobs.or_else(|| std::thread::available_parallelism().ok())
        .map_or(1, NonZeroUsize::get)
        .min(runs.max(1))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    /// The benchmark's 20 ms: 7.9 M packets over 4-link paths, about 6 s a run (measured 5-7 s):
    /// no note. Ten times the window: a note with the flows and an estimate in minutes.
    #[test]
    fn a_long_run_is_announced_with_an_estimate() {
        let bench = include_str!("../../../scenarios/bench/leafspine128.toml");
        let config = |window: &str| {
            let set = [format!("workload.duration={window}")];
            let sc = irn_sim::scenario::parse(bench, "bench", std::path::Path::new("."), &set);
            sc.unwrap().runs.remove(0).config
        };
        let (packets, secs) = super::estimated_seconds(&config("20ms"));
        assert!((7_000_000..9_000_000).contains(&packets), "{packets}");
        assert!((3.0..12.0).contains(&secs), "{secs}");
        assert_eq!(super::long_run_note(&config("20ms")), None);
        let note = super::long_run_note(&config("200ms")).expect("a note");
        assert!(
            note.contains("M data packets: expect roughly") && note.contains("min"),
            "{note}"
        );
    }

    use super::*;

    /// A span of start times is shown by rounding its ends outwards, so it holds the exact ones.
    #[test]
    fn start_times_round_outwards() {
        let t = irn_core::Time::from_ps;
        assert_eq!(tenth_us(t(19_999_667_073), true), "19999.7us");
        assert_eq!(tenth_us(t(19_999_667_073), false), "19999.6us");
        assert_eq!(tenth_us(t(2_000_000), true), "2us");
        assert_eq!(microseconds(t(999_500_000)), "999.5us");
        assert_eq!(microseconds(t(0)), "0us");
    }

    /// `irn run` with no file and an empty file differ exactly where `scenarios/default.toml`'s
    /// header says (its "only in:" line), so docs/scenarios.md's "every key defaults to the paper's
    /// default case" stays true of everything else.
    #[test]
    fn the_default_scenario_differs_from_an_empty_file_where_it_says() {
        let resolved = |text: &str| {
            let sc = scenario::parse(text, "t.toml", Path::new("."), &[]).unwrap();
            serde_json::to_value(&sc.runs[0].resolved).unwrap()
        };
        let changed = changes::changed(&resolved(""), &resolved(DEFAULT_SCENARIO), &[]);
        let differ: BTreeSet<&str> = (changed.iter())
            .map(|pair| pair.split_once('=').map_or(pair.as_str(), |(key, _)| key))
            .collect();
        let said = DEFAULT_SCENARIO
            .lines()
            .find_map(|l| l.split_once("only in: ").map(|(_, keys)| keys))
            .expect("scenarios/default.toml says where it differs from an empty file");
        let said: BTreeSet<&str> = said.trim_end_matches('.').split(", ").collect();
        assert_eq!(differ, said);
    }
}
