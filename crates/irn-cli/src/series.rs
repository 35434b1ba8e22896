//! `series/*.csv`: `[monitor]`'s rows, streamed into the run's folder as the run takes them, so
//! a long run's series never sit in memory (each writer buffers 8 KB).

use std::fs::{self, File};
use std::io::BufWriter;
use std::path::Path;

use anyhow::{Context, Result};
use irn_sim::config::Monitor;
use irn_sim::series::{FlowSample, NicSample, PortSample, SeriesSink};
use serde::Serialize;

type Csv = csv::Writer<BufWriter<File>>;

/// The series files of one run, each with its header written even if no row follows; a file
/// whose kind `[monitor]` does not select is not created.
pub struct SeriesFiles {
    ports: Option<Csv>,
    nics: Option<Csv>,
    flows: Option<Csv>,
    /// The first write that failed; later rows are dropped and [`finish`](Self::finish) reports
    /// it.
    error: Option<csv::Error>,
}

impl SeriesFiles {
    /// Creates `dir/series/` and the files `monitor` selects.
    pub fn create(dir: &Path, monitor: &Monitor) -> Result<Self> {
        let dir = dir.join("series");
        fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let open = |name: &str, header: &[&str], wanted: bool| -> Result<Option<Csv>> {
            if !wanted {
                return Ok(None);
            }
            let path = dir.join(name);
            let file =
                File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
            let mut w = csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(BufWriter::new(file));
            w.write_record(header)?;
            Ok(Some(w))
        };
        Ok(SeriesFiles {
            ports: open("ports.csv", &PortSample::HEADER, !monitor.ports.is_empty())?,
            nics: open("nics.csv", &NicSample::HEADER, monitor.nics)?,
            flows: open("flows.csv", &FlowSample::HEADER, !monitor.flows.is_empty())?,
            error: None,
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
        match self.error {
            None => Ok(()),
            Some(e) => {
                Err(e).with_context(|| format!("cannot write {}", dir.join("series").display()))
            }
        }
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
}
