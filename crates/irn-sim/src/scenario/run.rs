//! `[run]`: what a run measures and how long it may go on.
//!
//! ```toml
//! [run]
//! warmup = "0us"          # flows starting before this are not measured
//! drain_limit = "100ms"   # stop this long after the last flow starts
//! fct_size_buckets = ["10KB", "100KB", "1MB"] # summary.json's fct_by_size buckets
//! ```

use irn_core::Duration;
use serde::{Deserialize, Serialize};

use super::{invalid, parse_key, ScenarioError};
use crate::config::DEFAULT_FCT_SIZE_BUCKETS;
use crate::units::Bytes;

/// `[run]` as written.

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunSection {
    /// Flows starting before this are simulated but not measured.
    pub warmup: String,
    /// Stop this long after the last flow starts even if flows remain (reported incomplete).
    pub drain_limit: String,
    /// Upper edges of `summary.json`'s `fct_by_size` buckets, increasing sizes such as
    /// `["10KB", "100KB", "1MB"]`; absent: those, [`DEFAULT_FCT_SIZE_BUCKETS`]. Left out of
    /// the resolved scenario when absent, so runs of earlier versions still resume.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fct_size_buckets: Option<Vec<String>>,
}

impl Default for RunSection {
    fn default() -> Self {
        RunSection {
            warmup: "0us".into(),
            drain_limit: "100ms".into(),
            fct_size_buckets: None,
        }
    }
}

/// The warmup, the drain limit and the FCT buckets' upper edges in bytes.
pub(super) fn build(
    r: &RunSection,
    file: &str,
) -> Result<(Duration, Duration, Vec<u64>), ScenarioError> {
    let warmup = parse_key::<Duration>(file, "run.warmup", &r.warmup)?;
    let drain_limit = parse_key::<Duration>(file, "run.drain_limit", &r.drain_limit)?;
    let fct_size_buckets = fct_size_buckets(file, r.fct_size_buckets.as_deref())?;
    Ok((warmup, drain_limit, fct_size_buckets))
}

/// `run.fct_size_buckets` as byte edges: positive and increasing.
fn fct_size_buckets(file: &str, edges: Option<&[String]>) -> Result<Vec<u64>, ScenarioError> {
    let Some(edges) = edges else {
        return Ok(DEFAULT_FCT_SIZE_BUCKETS.to_vec());
    };
    let key = "run.fct_size_buckets";
    let mut bytes: Vec<u64> = Vec::with_capacity(edges.len());
    for text in edges {
        let b = parse_key::<Bytes>(file, key, text)?.0;
        if b == 0 || bytes.last().is_some_and(|&prev| b <= prev) {
            return Err(invalid(
                file,
                key,
                &format!("{edges:?}"),
                "sizes above 0 B in increasing order (each a bucket's largest flow)",
            ));
        }
        bytes.push(b);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::tests::one;

    #[test]
    fn fct_size_buckets_are_increasing_sizes() {
        let default = one("").unwrap();
        assert_eq!(default.config.fct_size_buckets, DEFAULT_FCT_SIZE_BUCKETS);
        let set = one("[run]\nfct_size_buckets = [\"1KB\", \"64KiB\", \"2MB\"]\n").unwrap();
        assert_eq!(set.config.fct_size_buckets, [1_000, 65_536, 2_000_000]);
        assert_eq!(
            one("[run]\nfct_size_buckets = []\n")
                .unwrap()
                .config
                .fct_size_buckets,
            [0u64; 0]
        );
        let cases = [
            ("[\"10KB\", \"10KB\"]", "t.toml: run.fct_size_buckets = [\"10KB\", \"10KB\"]: sizes above 0 B in increasing order (each a bucket's largest flow)"),
            ("[\"1MB\", \"100KB\"]", "increasing order"),
            ("[\"0B\"]", "sizes above 0 B"),
            ("[\"10 parsecs\"]", "t.toml: run.fct_size_buckets = \"10 parsecs\": "),
        ];
        for (value, want) in cases {
            let err = one(&format!("[run]\nfct_size_buckets = {value}\n"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{value}: {err}");
        }
    }
}
