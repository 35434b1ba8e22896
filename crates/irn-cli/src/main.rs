//! `irn`: run RDMA network scenarios and compare transports.
//!
//! The command line is thin: it loads a scenario (`irn_sim::scenario`), runs each of its
//! variants (in parallel, one per thread), writes the results folder and prints a table.

#![deny(clippy::print_stdout, clippy::print_stderr)]

#[macro_use]
mod console;

mod bench;
mod changes;
mod experiment;
mod gen_flows;
mod huge_pages;
mod memory;
mod output;
mod plot;
mod progress;
mod report;
mod reproduce;
mod run;
mod series;
mod sweep;
mod table;
mod topology;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Large fabrics' state on huge pages: see [`huge_pages`].
#[global_allocator]
static ALLOCATOR: huge_pages::HugePages = huge_pages::HugePages;

/// Simulate RDMA transports (RoCE, IRN) on datacenter networks, with and without PFC.
#[derive(Parser, Debug)]
#[command(name = "irn", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a scenario and write its results (with no file: the IRN paper's default case).
    Run(run::RunArgs),
    /// Time a scenario run by run on one core: wall time, events/s, simulated ms per wall
    /// second, peak memory (default: the embedded ns-3 comparison,
    /// scenarios/bench/leafspine128.toml).
    Bench(bench::BenchArgs),
    /// Rerun the papers' experiments (IRN, Eunomia, ConWeave, HPCC with PowerTCP and Swift, the
    /// WAN pause-control study) and write report.html with ours next to the papers'.
    Reproduce(reproduce::ReproduceArgs),
    /// Run your own checked experiments (scenario files with `[[check]]`); exit status 1 when
    /// a direction does not hold, 2 when the command fails.
    Check(reproduce::CheckArgs),
    /// Run a grid of scenarios in parallel; resumable, shardable (`--shard i/n`).
    Sweep(sweep::SweepArgs),
    /// Merge sweep results folders (e.g. one per shard) into one `sweep.csv` and
    /// `sweep_summary.csv`.
    Report(sweep::ReportArgs),
    /// Write a Poisson flow trace in the ns-3 (ConWeave 5-column) flow-file format.
    GenFlows(gen_flows::GenFlowsArgs),
    /// Write a scenario's network as an ns-3 topology file (e.g. a Jellyfish drawn from its
    /// seed), for other simulators to run the same graph.
    Topology(topology::TopologyArgs),
    /// Check a scenario file (or every point of a sweep file) and describe the runs it defines,
    /// without running them.
    Validate {
        /// The scenario file, or a sweep file (every point of its grid is checked).
        scenario: PathBuf,
        /// Override a key, e.g. `--set workload.load=0.5` (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        overrides: Vec<String>,
    },
    /// Write charts and a self-contained HTML report (report.html, plots/*.svg) for results
    /// folders.
    Plot(report::PlotArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_exit(&e),
    };
    huge_pages::start();
    let writes_results = cli.command.writes_results();
    progress::show_setup();
    if let Err(e) = output::clean_up_on_signal() {
        errln!("error: {e:#}");
        return ExitCode::FAILURE;
    }
    let result = match cli.command {
        Command::Run(args) => run::run(args),
        Command::GenFlows(args) => gen_flows::gen_flows(args),
        Command::Topology(args) => topology::topology(args),
        Command::Sweep(args) => sweep::sweep(args),
        Command::Reproduce(args) => reproduce::reproduce(args),
        Command::Check(args) => match reproduce::check(args) {
            Ok(true) => Ok(()),
            Ok(false) => {
                errln!("a direction does not hold: see the report");
                return ExitCode::FAILURE;
            }
            // 2, so that 1 means only that a claim failed: a CI job tells a broken experiment
            // from a result.
            Err(e) if !closed_pipe(&e) => {
                let _ = console::finish(false);
                errln!("error: {e:#}");
                return ExitCode::from(2);
            }
            Err(e) => Err(e),
        },
        Command::Bench(args) => bench::bench(args),
        Command::Report(args) => sweep::report(args),
        Command::Validate {
            scenario,
            overrides,
        } => run::validate(&scenario, &overrides),
        Command::Plot(args) => report::plot(args),
    };
    let printed = console::finish(writes_results && result.is_ok());
    match result {
        Ok(()) if printed.is_ok() => ExitCode::SUCCESS,
        Ok(()) => ExitCode::FAILURE,
        Err(e) if closed_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            errln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

impl Command {
    /// Whether the command writes a results folder (its runs, reports or charts), as against
    /// only printing (`validate`, `bench`) or writing one named file or standard output.
    fn writes_results(&self) -> bool {
        match self {
            Command::Run(_)
            | Command::Reproduce(_)
            | Command::Check(_)
            | Command::Sweep(_)
            | Command::Report(_)
            | Command::Plot(_) => true,
            Command::Bench(_)
            | Command::GenFlows(_)
            | Command::Topology(_)
            | Command::Validate { .. } => false,
        }
    }
}

/// Prints clap's help, version or usage error and ends as `Cli::parse` would, except that help
/// or a version that cannot be printed (`irn --help > /dev/full`) is an error, not a silent
/// success. A closed pipe (`irn --help | head -1`) is the reader's choice and stays quiet.
fn clap_exit(e: &clap::Error) -> ExitCode {
    let flushed = |()| match e.use_stderr() {
        true => std::io::stderr().flush(),
        false => std::io::stdout().flush(),
    };
    match e.print().and_then(flushed) {
        Err(io) if !e.use_stderr() && io.kind() != std::io::ErrorKind::BrokenPipe => {
            errln!("error: standard output: {io}; the printed output is incomplete");
            ExitCode::FAILURE
        }
        _ => ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(1)),
    }
}

/// Whether `e` is a reader closing the pipe irn was printing into (`irn gen-flows … | head`):
/// the reader's choice, so the command ends quietly.
fn closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
