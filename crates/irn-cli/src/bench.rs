//! `irn bench`: how fast irn simulates a scenario, one run at a time on one core.
//!
//! For each variant: wall time, events, events per second, packet hops (a packet crossing a
//! link) per second, simulated milliseconds per wall second; at the end the process's peak resident memory. With `--repeat N` each variant runs N
//! times and the fastest run is reported: on a shared machine, whose speed drifts between runs,
//! the best of a few is the figure that repeats. The default is the ns-3 comparison
//! scenario (`scenarios/bench/leafspine128.toml`, compiled in like `irn run`'s default, so
//! `irn bench` runs from any folder): ConWeave's ns-3 needed 246 s and 548 MB for its RoCE +
//! PFC variant on this machine type.
//!
//! A scenario's `[monitor]` is not sampled: bench writes no files, and the simulator's speed is
//! what it measures (`irn run --monitor` times a monitored run, in its `summary.json`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;

use crate::{huge_pages, memory};

/// The ns-3 comparison, timed when no scenario file is given. It names no data file (the
/// leaf-spine and the FB Hadoop sizes are built in), so it resolves wherever irn runs.
const DEFAULT_SCENARIO: &str = include_str!("../../../scenarios/bench/leafspine128.toml");

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Scenario to time. Default: the embedded ns-3 comparison
    /// (scenarios/bench/leafspine128.toml).
    scenario: Option<PathBuf>,
    /// Override a key, e.g. `--set workload.duration=2ms` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    overrides: Vec<String>,
    /// Run each variant this many times (at most 100) and report the fastest.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    repeat: u32,
}

pub fn bench(a: BenchArgs) -> Result<()> {
    let sc = match &a.scenario {
        Some(path) => irn_sim::scenario::load(path, &a.overrides)?,
        None => irn_sim::scenario::parse(
            DEFAULT_SCENARIO,
            "scenarios/bench/leafspine128.toml (embedded)",
            Path::new("."),
            &a.overrides,
        )?,
    };
    let file = a.scenario.as_ref().map_or_else(
        || "scenarios/bench/leafspine128.toml (embedded)".to_string(),
        |p| p.display().to_string(),
    );
    memory::check_runs(&file, &sc.runs, memory::available())?;
    if sc.runs.iter().any(|r| r.config.monitor.is_some()) {
        errln!(
            "note: irn bench times the runs without their [monitor], which it does not sample \
             (irn run does)"
        );
    }
    if a.repeat > 1 {
        outln!("each variant's fastest of {} runs", a.repeat);
    }
    outln!(
        "{:<20} {:>10} {:>12} {:>12} {:>12} {:>14} {:>10}",
        "run",
        "wall (s)",
        "events",
        "M events/s",
        "M hops/s",
        "sim ms/wall s",
        "flows"
    );
    for run in &sc.runs {
        huge_pages::prepare_for(&run.config);
        // Only the summary is kept between repeats, so they do not add to the peak memory.
        let mut fastest: Option<(f64, irn_sim::metrics::Summary, u64)> = None;
        for _ in 0..a.repeat {
            let started = Instant::now();
            let r = irn_sim::run(&run.config, &mut |_| {});
            let wall = started.elapsed().as_secs_f64();
            if fastest.as_ref().is_none_or(|(best, ..)| wall < *best) {
                fastest = Some((wall, r.summary, r.packet_hops));
            }
        }
        let (wall, s, hops) = fastest.expect("--repeat is at least 1");
        outln!(
            "{:<20} {:>10.2} {:>12} {:>12.2} {:>12.2} {:>14.3} {:>10}",
            run.name,
            wall,
            s.events,
            s.events as f64 / wall / 1e6,
            hops as f64 / wall / 1e6,
            s.sim_time_us / 1e3 / wall,
            s.flows_total - s.flows_incomplete
        );
    }
    match memory::status_kb("VmHWM:") {
        Some(kb) => outln!("peak resident memory: {:.1} MB", kb as f64 / 1024.0),
        None => outln!("peak resident memory: unknown (no /proc/self/status)"),
    }
    Ok(())
}
