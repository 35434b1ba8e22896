//! `[failures]`: links between switches that fail and come back (see [`crate::failures`]).
//!
//! ```toml
//! [failures]
//! fraction = 0.05        # random: this share of switch-to-switch links fails at once
//! interval = "100ms"     # random: each set stays down this long, then a new set fails
//! start = "0us"          # random: when the first set fails
//! reconvergence = "0us"  # routing avoids failed links (and uses restored ones) this long after
//!                        # each change
//! to_failed_link = "drop" # or "hold": a packet routed to a failed link waits in its queue
//!                        # (ns-3's behaviour)
//!
//! [[failures.link]]      # and/or failures at given times
//! nodes = [4, 9]         # the link between these two switches (node ids, as `irn topology`
//!                        # numbers them)
//! at = "1ms"
//! for = "500us"
//! ```

use irn_core::{Duration, Time};
use serde::{Deserialize, Serialize};

use super::{duration_in, invalid, parse_key, ScenarioError, SET};
use crate::failures::{
    find_link, switch_links, Failures, RandomFailures, ScheduledFailure, Timeline, ToFailed,
};
use crate::ids::NodeId;
use crate::topology::Topology;

/// The section as written.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailuresSection {
    /// Random failures: the share of switch-to-switch links down at once, in (0, 1]; rounded to
    /// the nearest count, at least one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fraction: Option<f64>,
    /// Random failures: how long each set stays down (default 100ms, Eunomia's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    /// Random failures: when the first set fails (default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// Delay from a change to routing around it (default 0: at once).
    #[serde(default = "zero")]
    pub reconvergence: String,
    /// What a switch does with a packet it routes to a failed link (default "drop").
    #[serde(default)]
    pub to_failed_link: ToFailedSection,
    /// Failures at given times.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub link: Vec<LinkFailureSection>,
}

/// `failures.to_failed_link`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToFailedSection {
    #[default]
    Drop,
    Hold,
}

fn zero() -> String {
    "0us".into()
}

/// One `[[failures.link]]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkFailureSection {
    pub nodes: [u32; 2],
    pub at: String,
    #[serde(rename = "for")]
    pub duration: String,
}

/// The shortest random interval: bounds the timeline's length.
const MIN_INTERVAL: Duration = Duration::from_us(1);

impl FailuresSection {
    /// Fills the random failures' defaults when `fraction` is set; rejects their keys when not.
    pub(super) fn normalize(&mut self, file: &str) -> Result<(), ScenarioError> {
        if self.fraction.is_some() {
            self.interval.get_or_insert_with(|| "100ms".into());
            self.start.get_or_insert_with(|| "0us".into());
        } else if let Some((key, _)) = [("interval", &self.interval), ("start", &self.start)]
            .into_iter()
            .find(|(_, v)| v.is_some())
        {
            return Err(invalid(
                file,
                &format!("failures.{key}"),
                SET,
                "applies to random failures only: set failures.fraction too",
            ));
        }
        Ok(())
    }
}

/// The run's failure timeline up to `horizon` (the last arrival plus the drain limit).
pub(super) fn build(
    f: &FailuresSection,
    file: &str,
    topology: &Topology,
    seed: u64,
    horizon: Time,
) -> Result<Timeline, ScenarioError> {
    let time = |key: &str, v: &str| parse_key::<Duration>(file, &format!("failures.{key}"), v);
    let links = switch_links(topology);
    let random = match f.fraction {
        None => None,
        Some(fraction) => {
            if !(fraction > 0.0 && fraction <= 1.0) {
                return Err(invalid(
                    file,
                    "failures.fraction",
                    &super::real(fraction),
                    "a share of the switch-to-switch links in (0, 1]",
                ));
            }
            let interval = time("interval", f.interval.as_deref().unwrap_or("100ms"))?;
            if interval < MIN_INTERVAL {
                return Err(invalid(
                    file,
                    "failures.interval",
                    f.interval.as_deref().unwrap_or(""),
                    "at least 1us",
                ));
            }
            let count = ((fraction * links.len() as f64).round() as u32).max(1);
            if links.is_empty() {
                return Err(invalid(
                    file,
                    "failures.fraction",
                    &super::real(fraction),
                    "the topology has no link between two switches to fail",
                ));
            }
            Some(RandomFailures {
                links: count,
                interval,
                start: Time::ZERO + time("start", f.start.as_deref().unwrap_or("0us"))?,
            })
        }
    };
    let mut scheduled = Vec::with_capacity(f.link.len());
    for (i, l) in f.link.iter().enumerate() {
        let key = |name: &str| format!("failures.link[{i}].{name}");
        let nodes = (NodeId(l.nodes[0]), NodeId(l.nodes[1]));
        find_link(topology, &links, nodes).map_err(|e| {
            invalid(
                file,
                &key("nodes"),
                &format!("{:?}", l.nodes),
                &e.to_string(),
            )
        })?;
        scheduled.push(ScheduledFailure {
            at: Time::ZERO + parse_key::<Duration>(file, &key("at"), &l.at)?,
            nodes,
            duration: duration_in(
                file,
                &key("for"),
                &l.duration,
                (
                    Duration::from_ps(1),
                    "a failure that lasts no time changes nothing",
                ),
                None,
            )?,
        });
    }
    let failures = Failures {
        random,
        scheduled,
        reconvergence: time("reconvergence", &f.reconvergence)?,
        to_failed: match f.to_failed_link {
            ToFailedSection::Drop => ToFailed::Drop,
            ToFailedSection::Hold => ToFailed::Hold,
        },
    };
    Timeline::plan(&failures, topology, seed, horizon)
        .map_err(|e| invalid(file, "failures", "", &e.to_string()))
}

/// Warnings for failures `f` schedules at or after `horizon`, the latest a run whose flows all
/// start at set times can last (its last arrival plus the drain limit): they never happen, and
/// a run that should have studied them would look like one without.
pub(super) fn never_reached(f: &FailuresSection, horizon: Time) -> Vec<String> {
    let late = |key: String, v: &str| past_the_end(&key, v, horizon, "that failure never happens");
    let mut out: Vec<String> = (f.link.iter().enumerate())
        .filter_map(|(i, l)| late(format!("failures.link[{i}].at"), &l.at))
        .collect();
    if let Some(start) = f.start.as_deref().filter(|_| f.fraction.is_some()) {
        out.extend(late("failures.start".to_string(), start));
    }
    out
}

/// A warning when `key = v`, a time, is at or after `horizon`, the latest the run can end:
/// what it starts never happens (`consequence`).
pub(super) fn past_the_end(key: &str, v: &str, horizon: Time, consequence: &str) -> Option<String> {
    let at = v.parse::<Duration>().ok()?;
    (Time::ZERO + at >= horizon).then(|| {
        let end = format!("{:.3}ms", (horizon - Time::ZERO).as_us_f64() / 1000.0);
        format!(
            "{key} = {v:?} is at or after the latest this run can end ({end}: its last arrival \
             plus run.drain_limit), so {consequence}"
        )
    })
}

#[cfg(test)]
mod tests {
    use crate::failures::Change;
    use crate::scenario::tests::one;

    const CLOS: &str =
        "[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\n";

    /// A failure scheduled past the latest the run can last (10 us of arrivals plus the
    /// 100 ms drain limit) never happens: said, not silently dropped; one inside is not.
    #[test]
    fn a_failure_after_the_run_can_end_is_a_warning() {
        let failures = "[failures]\nfraction = 0.5\nstart = \"1s\"\n\
                        [[failures.link]]\nnodes = [4, 6]\nat = \"50us\"\nfor = \"1us\"\n\
                        [[failures.link]]\nnodes = [4, 6]\nat = \"200ms\"\nfor = \"1us\"\n";
        let run = one(&format!("{CLOS}{failures}")).unwrap();
        let late: Vec<&String> = (run.warnings.iter())
            .filter(|w| w.contains("never happens"))
            .collect();
        assert_eq!(late.len(), 2, "{:?}", run.warnings);
        let says = "is at or after the latest this run can end (100.0";
        assert!(
            late[0].starts_with("failures.link[1].at = \"200ms\" "),
            "{}",
            late[0]
        );
        assert!(late.iter().all(|w| w.contains(says)), "{late:?}");
        assert!(
            late[1].starts_with("failures.start = \"1s\""),
            "{}",
            late[1]
        );
    }

    #[test]
    fn failures_keys_defaults_and_errors() {
        let run = one(&format!(
            "{CLOS}[failures]\nfraction = 0.5\ninterval = \"3us\"\n"
        ))
        .unwrap();
        let f = run.resolved.failures.as_ref().unwrap();
        assert_eq!(
            (f.start.as_deref(), f.reconvergence.as_str()),
            (Some("0us"), "0us")
        );
        let t = run.config.failures.unwrap();
        assert_eq!(t.links.len(), 4, "every leaf-spine link");
        // Half of 4 links fail at t = 0, come back at 3 us while two more fail, and so on; each
        // instant also reconverges.
        let at_zero: Vec<_> = t.changes.iter().filter(|c| c.0.as_ps() == 0).collect();
        assert_eq!(
            at_zero
                .iter()
                .filter(|c| matches!(c.1, Change::Fail(_)))
                .count(),
            2
        );
        assert!(at_zero.iter().any(|c| c.1 == Change::Reconverge));

        let scheduled = one(&format!(
            "{CLOS}[failures]\nreconvergence = \"5us\"\n[[failures.link]]\nnodes = [4, 6]\n\
             at = \"2us\"\nfor = \"10us\"\n"
        ))
        .unwrap();
        let t = scheduled.config.failures.unwrap();
        let times: Vec<_> = t
            .changes
            .iter()
            .map(|c| (c.0.as_ps() / 1_000_000, c.1))
            .collect();
        assert_eq!(
            times,
            [
                (2, Change::Fail(0)),
                (7, Change::Reconverge),
                (12, Change::Restore(0)),
                (17, Change::Reconverge)
            ]
        );

        for (keys, want) in [
            (
                "fraction = 0",
                "failures.fraction = 0: a share of the switch-to-switch links in (0, 1]",
            ),
            ("fraction = 1.5", "failures.fraction = 1.5"),
            (
                "interval = \"1ms\"",
                "failures.interval is set: applies to random failures only",
            ),
            (
                "fraction = 0.1\ninterval = \"0.5us\"",
                "failures.interval = 0.5us: at least 1us",
            ),
            ("reconvergence = \"soon\"", "failures.reconvergence"),
            (
                "[[failures.link]]\nnodes = [0, 4]\nat = \"1us\"\nfor = \"1us\"",
                "failures.link[0].nodes = [0, 4]: node 0 is a host",
            ),
            (
                "[[failures.link]]\nnodes = [4, 5]\nat = \"1us\"\nfor = \"1us\"",
                "failures.link[0].nodes = [4, 5]: there is no link between node 4 and node 5",
            ),
            (
                "[[failures.link]]\nnodes = [4, 99]\nat = \"1us\"\nfor = \"1us\"",
                "node 99 is not a node of the topology (8 nodes)",
            ),
            (
                "[[failures.link]]\nnodes = [4, 6]\nat = \"1us\"",
                "missing field `for`",
            ),
        ] {
            let err = one(&format!("{CLOS}[failures]\n{keys}\n"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{keys}: {err}");
        }
    }
}
