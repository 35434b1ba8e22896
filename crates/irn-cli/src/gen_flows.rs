//! `irn gen-flows`: write a Poisson flow trace in the ns-3 (ConWeave) flow-file format, so irn
//! and an ns-3 RDMA simulator can be fed the very same flows.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use irn_core::{Bandwidth, Duration};
use irn_sim::topology::ns3::{node_of_host, read_topology};
use irn_sim::workload::ns3::write_flows_conweave_by;
use irn_sim::workload::poisson::too_many_flows;
use irn_sim::workload::{poisson, Cdf, FlowSpec, SizeDist};

use crate::output;

#[derive(clap::Args, Debug)]
pub struct GenFlowsArgs {
    /// Flow-size CDF file (HPCC percent or TLT fraction format), or `irn-default`.
    #[arg(long, value_name = "FILE")]
    cdf: String,
    /// Offered load at every host, as a fraction of its line rate, in (0, 1].
    #[arg(long, value_name = "L")]
    load: f64,
    /// Number of hosts, numbered 0..N as ns-3 topology files number them (hosts first).
    #[arg(
        long,
        value_name = "N",
        required_unless_present = "topology",
        conflicts_with = "topology"
    )]
    hosts: Option<u32>,
    /// An ns-3 topology file: flows run between its hosts, at its slowest host link's rate.
    #[arg(long, value_name = "FILE")]
    topology: Option<PathBuf>,
    /// Host link rate, with --hosts.
    #[arg(long, default_value = "100Gbps", conflicts_with = "topology")]
    rate: String,
    /// Arrivals happen during this long, e.g. `10ms`.
    #[arg(long, value_name = "T")]
    duration: String,
    /// Seeds the arrivals, sizes and destinations: the same seed and options write the same
    /// trace, another seed another draw.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output file (written whole or not at all); standard output when omitted. An existing
    /// file is replaced only if irn wrote it (`.FILE.irn` beside it says so) and it has not
    /// changed since.
    #[arg(long, short, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Overwrite --out even if irn did not write it.
    #[arg(long, requires = "out")]
    force: bool,
}

pub fn gen_flows(a: GenFlowsArgs) -> Result<()> {
    if let Some(path) = &a.out {
        output::guard_own_file(path, a.force)?;
    }
    if !(a.load > 0.0 && a.load <= 1.0) {
        bail!("--load {}: a fraction of line rate in (0, 1]", a.load);
    }
    let duration: Duration = a
        .duration
        .parse()
        .with_context(|| format!("--duration {}", a.duration))?;
    if duration == Duration::ZERO {
        bail!("--duration {}: must be longer than zero", a.duration);
    }
    let cdf = if a.cdf == "irn-default" {
        Cdf::irn_default()
    } else {
        Cdf::from_file(std::path::Path::new(&a.cdf))?
    };
    if let Some(why) = cdf.unusable() {
        bail!("--cdf {}: {why}", a.cdf);
    }
    let sizes = SizeDist::Cdf(cdf);
    let mut text = Vec::new();
    match (&a.topology, a.hosts) {
        (Some(path), _) => {
            let topo = read_topology(path)?;
            let hosts = topo.hosts().len() as u32;
            let flows = generate(&a, hosts, topo.min_host_rate(), &sizes, duration)?;
            write_flows_conweave_by(&mut text, &flows, |h| node_of_host(&topo, h))?;
        }
        (None, Some(hosts)) => {
            if hosts < 2 {
                bail!("--hosts {hosts}: at least 2");
            }
            let rate: Bandwidth = a
                .rate
                .parse()
                .with_context(|| format!("--rate {}", a.rate))?;
            let flows = generate(&a, hosts, rate, &sizes, duration)?;
            write_flows_conweave_by(&mut text, &flows, |h| h.0)?;
        }
        (None, None) => bail!("give --hosts N or --topology FILE"),
    }
    match &a.out {
        None => std::io::stdout()
            .lock()
            .write_all(&text)
            .context("cannot print the flow file to standard output")?,
        Some(path) => output::write_own_file(path, &text, "gen-flows")?,
    }
    Ok(())
}

/// The trace, refused before it is generated if it would be too large ([`too_many_flows`]),
/// and after if it is empty, as scenarios refuse both: `irn run` could not replay it.
fn generate(
    a: &GenFlowsArgs,
    hosts: u32,
    rate: Bandwidth,
    sizes: &SizeDist,
    duration: Duration,
) -> Result<Vec<FlowSpec>> {
    if let Some(why) = too_many_flows(hosts, rate, a.load, sizes, duration) {
        bail!("--duration {}: {why}", a.duration);
    }
    let flows = poisson(hosts, rate, a.load, sizes, duration, a.seed);
    if flows.is_empty() {
        bail!(
            "--duration {}: no flow starts within it at this load; lengthen it",
            a.duration
        );
    }
    Ok(flows)
}
