//! `[run]`: what a run measures and how long it may go on.
//!
//! ```toml
//! [run]
//! warmup = "0us"          # flows starting before this are not measured
//! measure_until = "20ms"  # nor those starting at or after this (default: none)
//! drain_limit = "100ms"   # stop this long after the last flow starts
//! fct_size_buckets = ["10KB", "100KB", "1MB"] # summary.json's fct_by_size buckets
//! partitions = "auto"     # or "off", or at most this many (crate::partition)
//! ```

use irn_core::Duration;
use serde::{Deserialize, Serialize};

use super::{duration_in, invalid, parse_key, ScenarioError};
use crate::config::DEFAULT_FCT_SIZE_BUCKETS;
use crate::partition::PartitionRule;
use crate::units::Bytes;

/// `[run]` as written.

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunSection {
    /// Flows starting before this are simulated but not measured.
    pub warmup: String,
    /// Flows starting at or after this are simulated but not measured either: arrivals that
    /// go on past the measured window keep its last flows in a loaded network (a cool-down).
    /// Absent: every flow from the warm-up on is measured. Left out of the resolved scenario
    /// when absent, so runs of earlier versions still resume.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measure_until: Option<String>,
    /// Stop this long after the last flow starts even if flows remain (reported incomplete).
    pub drain_limit: String,
    /// Upper edges of `summary.json`'s `fct_by_size` buckets, increasing sizes such as
    /// `["10KB", "100KB", "1MB"]`; absent: those, [`DEFAULT_FCT_SIZE_BUCKETS`]. Left out of
    /// the resolved scenario when absent, so runs of earlier versions still resume.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fct_size_buckets: Option<Vec<String>>,
    /// Whether the run takes its events a partition of the network at a time: `"auto"`,
    /// `"off"` or at most this many partitions. Absent: `"auto"`; the resolved scenario says
    /// `"auto"` only where it partitions the run, so runs of earlier versions that it leaves
    /// unpartitioned (and unchanged) still resume.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitions: Option<Partitions>,
}

/// `run.partitions` as written: a word or a count (anything else is kept to be refused by
/// name, with what is allowed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Partitions {
    Count(i64),
    Word(String),
    Other(toml::Value),
}

impl std::fmt::Display for Partitions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Partitions::Count(n) => write!(f, "{n}"),
            Partitions::Word(w) => write!(f, "{w:?}"),
            Partitions::Other(toml::Value::Float(x)) => write!(f, "{x:e}"),
            Partitions::Other(v) => write!(f, "{v}"),
        }
    }
}

impl Default for RunSection {
    fn default() -> Self {
        RunSection {
            warmup: "0us".into(),
            measure_until: None,
            drain_limit: "100ms".into(),
            fct_size_buckets: None,
            partitions: None,
        }
    }
}

/// The longest `drain_limit`: a minute of simulated time, thirty round trips of the longest
/// link a scenario may have (a wan link of 1 s). A flow not done by then is stuck, and a
/// packet-level run that went on for hours of simulated time would take days; the progress
/// estimate covers only the arrivals, so a longer limit would run on past any estimate.
pub const MAX_DRAIN_LIMIT: Duration = Duration::from_ms(60_000);

/// `[run]` checked: which flows are measured, when a run gives up, how sizes are bucketed.
pub(super) struct RunLimits {
    pub warmup: Duration,
    pub measure_until: Option<Duration>,
    pub drain_limit: Duration,
    pub fct_size_buckets: Vec<u64>,
    pub partitions: PartitionRule,
}

pub(super) fn build(r: &RunSection, file: &str) -> Result<RunLimits, ScenarioError> {
    let warmup = parse_key::<Duration>(file, "run.warmup", &r.warmup)?;
    let measure_until = match &r.measure_until {
        Some(text) => {
            let until = parse_key::<Duration>(file, "run.measure_until", text)?;
            if until <= warmup {
                return Err(invalid(
                    file,
                    "run.measure_until",
                    text,
                    &format!("after run.warmup ({}): nothing would be measured", r.warmup),
                ));
            }
            Some(until)
        }
        None => None,
    };
    let drain_limit = duration_in(
        file,
        "run.drain_limit",
        &r.drain_limit,
        (Duration::ZERO, "stop at the last arrival"),
        Some((
            MAX_DRAIN_LIMIT,
            "a minute: thirty round trips of the longest wan link",
        )),
    )?;
    let fct_size_buckets = fct_size_buckets(file, r.fct_size_buckets.as_deref())?;
    Ok(RunLimits {
        warmup,
        measure_until,
        drain_limit,
        fct_size_buckets,
        partitions: partitions(file, r.partitions.as_ref())?,
    })
}

/// `run.partitions`: `"auto"`, `"off"`, or a count from 2 to 1024.
fn partitions(file: &str, p: Option<&Partitions>) -> Result<PartitionRule, ScenarioError> {
    const ALLOWED: &str = "\"auto\" (large fabrics are partitioned), \"off\" (one global \
                           event order) or a count of at most this many partitions, 2 to 1024";
    match p {
        None => Ok(PartitionRule::Auto),
        Some(Partitions::Word(w)) if w == "auto" => Ok(PartitionRule::Auto),
        Some(Partitions::Word(w)) if w == "off" => Ok(PartitionRule::Off),
        Some(Partitions::Count(n)) if (2..=1024).contains(n) => Ok(PartitionRule::At(*n as u16)),
        Some(other) => Err(invalid(file, "run.partitions", &other.to_string(), ALLOWED)),
    }
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
    fn measuring_ends_after_the_warm_up() {
        let until = |warmup: &str, v: &str| {
            one(&format!(
                "[run]\nwarmup = \"{warmup}\"\nmeasure_until = \"{v}\"\n"
            ))
            .map(|r| r.config.measure_until)
            .map_err(|e| e.to_string())
        };
        assert_eq!(until("1ms", "3ms"), Ok(Some(Duration::from_ms(3))));
        assert_eq!(one("").unwrap().config.measure_until, None);
        for (warmup, v) in [("1ms", "1ms"), ("1ms", "0.5ms"), ("0us", "0us")] {
            let err = until(warmup, v).unwrap_err();
            assert!(
                err.contains(&format!(
                    "t.toml: run.measure_until = {v}: after run.warmup ({warmup}): nothing \
                     would be measured"
                )),
                "{err}"
            );
        }
        assert!(until("0us", "soon")
            .unwrap_err()
            .contains("run.measure_until"));
    }

    #[test]
    fn the_drain_limit_is_at_most_a_minute() {
        let drain = |v: &str| {
            one(&format!("[run]\ndrain_limit = \"{v}\"\n"))
                .map(|r| r.config.drain_limit)
                .map_err(|e| e.to_string())
        };
        assert_eq!(drain("60s"), Ok(MAX_DRAIN_LIMIT));
        assert_eq!(drain("0s"), Ok(Duration::ZERO));
        for v in ["60.000000000001s", "18446744s"] {
            let err = drain(v).unwrap_err();
            assert!(
                err.contains(&format!(
                    "t.toml: run.drain_limit = \"{v}\": between 0ps (stop at the last arrival) \
                     and 60s (a minute: thirty round trips of the longest wan link)"
                )),
                "{err}"
            );
        }
    }

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
