//! `irn topology`: write the network a scenario builds as an ns-3 topology file, so ns-3's RDMA
//! simulators (and `[topology] file = ...`) run the very graph irn generated, a Jellyfish drawn
//! from a seed included.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use irn_sim::scenario;
use irn_sim::topology::ns3::write_topology;

use crate::output;

#[derive(clap::Args, Debug)]
pub struct TopologyArgs {
    /// The scenario file.
    scenario: PathBuf,
    /// Output file (written whole or not at all); standard output when omitted. An existing
    /// file is replaced only if irn wrote it (`.FILE.irn` beside it says so) and it has not
    /// changed since.
    #[arg(long, short, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Overwrite --out even if irn did not write it.
    #[arg(long, requires = "out")]
    force: bool,
    /// Override a key, e.g. `--set seed=2` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    overrides: Vec<String>,
}

pub fn topology(a: TopologyArgs) -> Result<()> {
    if let Some(path) = &a.out {
        output::guard_own_file(path, a.force)?;
    }
    let s = scenario::load(&a.scenario, &a.overrides)?;
    let first = &s.runs[0].config;
    // Variants may change the network ([[compare]] over topology keys): one file holds one.
    if let Some(other) = s.runs[1..].iter().find(|r| {
        r.config.topology.links() != first.topology.links() || r.config.link_loss != first.link_loss
    }) {
        bail!(
            "{}: variants `{}` and `{}` build different networks; choose one with --set",
            a.scenario.display(),
            s.runs[0].name,
            other.name
        );
    }
    let mut text = Vec::new();
    write_topology(&mut text, &first.topology, &first.link_loss)?;
    match &a.out {
        None => std::io::Write::write_all(&mut std::io::stdout().lock(), &text)
            .context("cannot print the topology file to standard output")?,
        Some(path) => output::write_own_file(path, &text, "topology")?,
    }
    Ok(())
}
