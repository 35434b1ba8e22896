//! `irn run` and `irn validate`.

use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{anyhow, Context, Result};
use irn_sim::scenario::{self, Run, Scenario};
use irn_sim::sim::trace;
use rayon::prelude::*;

use crate::output::{folder_name, Finished, Performance, Staging, Writer};
use crate::progress::Bars;
use crate::table;

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
    /// Results folder; replaced if irn wrote it (it holds `.irn-results`), refused if it holds
    /// anything else. Default: `results/<scenario name>`.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// How many runs to simulate at once (each run uses one core). Default: all cores.
    #[arg(short = 'j', long, value_name = "N")]
    jobs: Option<NonZeroUsize>,
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
    let scenario = load(args.scenario.as_deref(), &args.overrides)?;
    let out = args
        .out
        .unwrap_or_else(|| PathBuf::from("results").join(folder_name(&scenario.name)));
    for r in &scenario.runs {
        trace::check_flows(&args.trace_flows, r.config.flows.len())
            .map_err(|e| anyhow!("--trace-flow: variant `{}`: {e}", r.name))?;
    }
    let inputs: Vec<&Path> = args.scenario.as_deref().into_iter().collect();
    let staging = Staging::new(&out, Writer::Run, &inputs)?;
    let pool = worker_pool(args.jobs)?;
    let bars = Bars::new();
    let compare = scenario.runs.len() > 1;
    let sub = |run: &Run| {
        if compare {
            folder_name(&run.name)
        } else {
            String::new()
        }
    };
    let finished: Vec<Finished> = pool.install(|| {
        scenario
            .runs
            .par_iter()
            .map(|r| {
                let started = Instant::now();
                let mut report = bars.reporter(&r.name);
                let result = if args.trace_flows.is_empty() {
                    irn_sim::run(&r.config, &mut report)
                } else {
                    let path = staging.run_dir(&sub(r))?.join("trace.csv");
                    run_traced(r, &args.trace_flows, &path, &mut report)?
                };
                let performance = Performance::new(&result.summary, started.elapsed());
                Ok(Finished {
                    name: &r.name,
                    resolved: &r.resolved,
                    result,
                    performance,
                })
            })
            .collect::<Result<_>>()
    })?;
    for (run, f) in scenario.runs.iter().zip(&finished) {
        staging.write_run(&sub(run), &scenario.name, run.config.seed, f)?;
    }
    if compare {
        staging.write_comparison(&finished)?;
    }
    let dir = staging.commit()?;
    print!("{}", table::render(&finished));
    println!("results: {}", dir.display());
    Ok(())
}

/// Runs `run`, streaming the events of flows `ids` to `path` as `trace.csv`
/// ([`trace::HEADER`]), so a long trace never sits in memory.
fn run_traced(
    run: &Run,
    ids: &[u32],
    path: &Path,
    report: &mut dyn FnMut(irn_sim::Progress),
) -> Result<irn_sim::RunResult> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut w = BufWriter::new(file);
    let mut written = writeln!(w, "{}", trace::HEADER);
    let mut sink = |row: &trace::TraceRow| {
        if written.is_ok() {
            written = writeln!(w, "{row}");
        }
    };
    let result = irn_sim::run_traced(&run.config, ids, &mut sink, report);
    written
        .and_then(|()| w.flush())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(result)
}

pub fn validate(path: &Path, overrides: &[String]) -> Result<()> {
    let scenario = load(Some(path), overrides)?;
    println!(
        "{}: scenario `{}` is valid, {} run(s)",
        path.display(),
        scenario.name,
        scenario.runs.len()
    );
    for r in &scenario.runs {
        let c = &r.config;
        let t = &c.topology;
        let last = c.flows.last().map_or(0.0, |f| f.start.as_ns_f64() / 1e3);
        println!(
            "  {}: {} hosts, {} switches; {} flows over {:.0} us; {}, BDP cap {}, {}; buffer {} B, PFC {}",
            r.name,
            t.hosts().len(),
            t.switches().len(),
            c.flows.len(),
            last,
            r.resolved.transport.kind.name(),
            c.transport.bdp_cap.map_or("off".to_string(), |b| format!("{b} packets")),
            c.transport.rto,
            c.switch.buffer_bytes,
            if c.switch.pfc.is_some() { "on" } else { "off" },
        );
    }
    Ok(())
}

/// The threads runs are simulated on, one run per thread: `jobs` of them, or one per core.
pub fn worker_pool(jobs: Option<NonZeroUsize>) -> Result<rayon::ThreadPool> {
    let threads = jobs
        .or_else(|| std::thread::available_parallelism().ok())
        .map_or(1, NonZeroUsize::get);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start worker threads")
}
