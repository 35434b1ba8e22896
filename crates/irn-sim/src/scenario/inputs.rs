//! The data files a scenario reads (ns-3 topology and flow files, CSV traces, collective
//! graphs, size CDFs) and a checksum of each.
//!
//! A scenario names its files by path, so its resolved form stays the same when a file it reads
//! is edited. A run is the same run only if its scenario and every file it read are unchanged:
//! `summary.json` records these checksums beside the resolved scenario, and the commands that
//! reuse finished runs (`sweep`, `reproduce`, `check`) compare both.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{invalid, resolve, ScenarioError, ScenarioFile, SizesSection, TopologySection};
use crate::input::{self, Input};

/// One data file a run read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputFile {
    /// The key that names it, e.g. `topology.file`.
    pub key: String,
    /// Its path as the scenario gives it (relative to the scenario's folder unless absolute).
    pub file: String,
    /// A checksum of its contents when the scenario was loaded ([`input::XXH3`]).
    pub checksum: String,
}

/// Every data file `s` names, with its checksum; `file` and `base_dir` are the scenario's.
pub(super) fn input_files(
    s: &ScenarioFile,
    file: &str,
    base_dir: &Path,
) -> Result<Vec<InputFile>, ScenarioError> {
    let topologies: [(&str, Option<&TopologySection>); 3] = [
        ("topology", Some(&s.topology)),
        ("topology.site", s.topology.site.as_deref()),
        ("topology.site_b", s.topology.site_b.as_deref()),
    ];
    let mut named: Vec<(String, &str, Input)> = (topologies.into_iter())
        .filter_map(|(at, t)| Some((format!("{at}.file"), t?.file.as_deref()?, input::TOPOLOGY)))
        .collect();
    if let Some(path) = &s.workload.file {
        named.push(("workload.file".into(), path, input::FLOWS));
    }
    if let Some(SizesSection::Cdf(path)) = &s.workload.sizes {
        named.push(("workload.sizes.cdf".into(), path, input::CDF));
    }
    (named.into_iter())
        .map(|(key, path, kind)| {
            let checksum = input::file_checksum(&resolve(base_dir, path), kind)
                .map_err(|e| invalid(file, &key, &format!("{path:?}"), &e.to_string()))?;
            Ok(InputFile {
                key,
                file: path.to_string(),
                checksum,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each key that names a file is found, and a file's checksum follows its contents.
    #[test]
    fn every_file_a_scenario_names_is_checksummed() {
        let dir = std::env::temp_dir().join(format!("irn-inputs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["topo.txt", "flows.txt", "sizes.txt", "b.txt"] {
            std::fs::write(dir.join(name), name).unwrap();
        }
        let mut s = ScenarioFile::default();
        s.topology.file = Some("topo.txt".into());
        s.topology.site_b = Some(Box::new(TopologySection {
            file: Some(dir.join("b.txt").to_string_lossy().into_owned()),
            ..TopologySection::default()
        }));
        s.workload.file = Some("flows.txt".into());
        s.workload.sizes = Some(SizesSection::Cdf("sizes.txt".into()));
        let found = input_files(&s, "s.toml", &dir).unwrap();
        let keys: Vec<&str> = found.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "topology.file",
                "topology.site_b.file",
                "workload.file",
                "workload.sizes.cdf"
            ]
        );
        assert_eq!(found[0].checksum, input::checksum(b"topo.txt"));
        std::fs::write(dir.join("flows.txt"), "edited").unwrap();
        let again = input_files(&s, "s.toml", &dir).unwrap();
        assert_eq!(again[0], found[0]);
        assert_ne!(again[2].checksum, found[2].checksum);
        // A file that cannot be read is an error naming its key.
        std::fs::remove_file(dir.join("sizes.txt")).unwrap();
        let e = input_files(&s, "s.toml", &dir).unwrap_err().to_string();
        assert!(e.contains("workload.sizes.cdf"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
