//! `[load_balancing]`: how every switch spreads packets over its equal-cost next hops.
//!
//! ```toml
//! [load_balancing]
//! kind = "drill"       # "ecmp" (default), "spray", "random-spray", "drill", "power-of-two",
//!                      # "letflow", "fksp" (with topology.routing = "k-shortest" or
//!                      # "up-down"), "conweave"
//! samples = 2          # drill: random candidates per packet (d)
//! memory = 1           # drill: least loaded candidates remembered (m)
//! ties = "memory"      # drill: a remembered candidate keeps a tie (ConWeave's ns-3); or
//!                      # "sample": a sampled one wins it
//! control = "balanced" # per-packet kinds: ACKs, NACKs and CNPs balanced as data; or "ecmp"
//!                      # (ConWeave's ns-3): hashed per flow
//! flowlet_gap = "100us" # letflow: a longer pause starts a new flowlet
//! reply_extra = "4us"  # conweave: θ_reply, added to the ToR-to-ToR base RTT
//! path_busy = "16us"   # conweave: how long a NOTIFY marks a path busy
//! inactive = "300us"   # conweave: silence that opens a new epoch on a new path
//! flush_slack = "16us" # conweave: slack on a reorder queue's expected TAIL
//! default_wait = "200us" # conweave: a reorder queue's wait without old-path history
//! reorder_queues = 24  # conweave: reorder queues per destination-ToR port (default unlimited)
//! reorder_queue_groups = 3 # conweave: a flow may take one hashed queue of each group
//!                      # (the P4 switch's rule; default: any free queue)
//! flow_table = 4096    # conweave: flows each source ToR tracks at once (default unlimited)
//! static_paths = false # conweave: path tables ignore link failures (ns-3's; default false)
//! reorder_buffer = "switch" # conweave: held packets charged to the buffer on arrival; or
//!                      # "outside" (ns-3's): admitted when their queue flushes
//! ```

use irn_core::Duration;
use serde::{Deserialize, Serialize};

use super::{check_keys, invalid, parse_key, ScenarioError, ScenarioFile};
use crate::forwarding::conweave::ConWeaveParams;
use crate::forwarding::{ControlBalancing, DrillTies, LoadBalancing, MAX_DRILL_MEMORY};
use crate::ids::HostIdx;
use crate::topology::Topology;

/// The section as written; keys of another `kind` are rejected, the chosen kind's defaults
/// filled in when the scenario is loaded.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LoadBalancingSection {
    pub kind: BalancerKind,
    /// drill: d, the random candidates compared per packet. Default 2.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub samples: Option<u8>,
    /// drill: m, the least loaded candidates remembered for the next packet. Default 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<u8>,
    /// drill: which candidate wins a tie, a remembered or a sampled one. Default "memory".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ties: Option<Ties>,
    /// Per-packet kinds: how ACKs, NACKs and CNPs are routed. Default "balanced".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control: Option<Control>,
    /// letflow: the pause that ends a flowlet. Default 100us.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flowlet_gap: Option<String>,
    /// conweave: θ_reply. Default 4us (ConWeave's ns-3 leaf-spine value, as every default
    /// below).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply_extra: Option<String>,
    /// conweave: θ_path_busy. Default 16us.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_busy: Option<String>,
    /// conweave: θ_inactive. Default 300us.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inactive: Option<String>,
    /// conweave: the reorder queue's flush slack. Default 16us.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flush_slack: Option<String>,
    /// conweave: the reorder queue's wait without old-path history. Default 200us.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_wait: Option<String>,
    /// conweave: reorder queues per egress port of a destination ToR. Default: unlimited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reorder_queues: Option<u16>,
    /// conweave: groups a port's reorder queues are split into, one hashed candidate each.
    /// Default: none (any free queue).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reorder_queue_groups: Option<u8>,
    /// conweave: flows a source ToR's flow table holds at once. Default: unlimited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow_table: Option<u32>,
    /// conweave: the source ToRs' path tables ignore link failures. Default false.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub static_paths: Option<bool>,
    /// conweave: where held packets are kept. Default "switch".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reorder_buffer: Option<ReorderBuffer>,
}

/// `load_balancing.reorder_buffer`: where ConWeave's destination ToR keeps held packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReorderBuffer {
    /// In the switch buffer, charged on arrival (the P4 switch).
    Switch,
    /// Outside it, admitted when the queue flushes (ConWeave's ns-3).
    Outside,
}

/// `load_balancing.control`: how a per-packet balancer routes control packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Control {
    /// Each one balanced as a data packet is.
    Balanced,
    /// Hashed per flow as ECMP does (ConWeave's ns-3).
    Ecmp,
}

impl Control {
    /// The simulator's setting.
    pub(super) fn to_balancing(self) -> ControlBalancing {
        match self {
            Control::Balanced => ControlBalancing::Balanced,
            Control::Ecmp => ControlBalancing::Ecmp,
        }
    }
}

/// `load_balancing.ties`: which of DRILL's candidates wins a tie ([`DrillTies`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ties {
    /// The remembered candidate (ConWeave's ns-3).
    Memory,
    /// A sampled candidate.
    Sample,
}

/// `load_balancing.kind`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BalancerKind {
    #[default]
    Ecmp,
    Spray,
    RandomSpray,
    Drill,
    PowerOfTwo,
    Letflow,
    /// A flow hashed onto one of its k shortest paths for good (Jellyfish's baseline, Eunomia
    /// §2.2): ECMP's hash at the first switch under `topology.routing = "k-shortest"` (or
    /// `"up-down"`), so only valid there.
    Fksp,
    Conweave,
}

/// A warning when a balancer other than ECMP, or an ordering layer, is asked of a network with
/// one path between any two hosts (a star, a dumbbell, a tree): there is nothing to balance
/// and nothing reorders, so the key changes nothing. Source-routed networks are left alone
/// (their paths are not the switches' next hops).
pub(super) fn single_path_warning(s: &ScenarioFile, topology: &Topology) -> Option<String> {
    let balanced = s.load_balancing.kind != BalancerKind::Ecmp;
    let ordered = s.ordering.kind != super::OrderingKind::None;
    if !(balanced || ordered) || topology.source_routed() {
        return None;
    }
    let hosts = topology.hosts().len() as u32;
    let one_path = (0..topology.switches().len())
        .all(|sw| (0..hosts).all(|h| topology.next_hops_at_switch(sw, HostIdx(h)).len() <= 1));
    one_path.then(|| {
        // The kinds as a scenario writes them.
        let written = |v: serde_json::Result<serde_json::Value>| {
            v.ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        };
        let what = if balanced {
            let kind = written(serde_json::to_value(s.load_balancing.kind));
            format!("load_balancing.kind = \"{kind}\"")
        } else {
            let kind = written(serde_json::to_value(s.ordering.kind));
            format!("ordering.kind = \"{kind}\"")
        };
        format!(
            "{what}: the network has one path between any two hosts, so there is nothing to \
             balance and nothing arrives out of order; a network with several paths (a \
             leaf-spine, a fat-tree, a Jellyfish) shows what it does"
        )
    })
}

impl LoadBalancingSection {
    /// Rejects keys of another kind and fills the chosen kind's defaults, so the resolved
    /// scenario shows every value the run used.
    pub(super) fn normalize(&mut self, file: &str) -> Result<(), ScenarioError> {
        let kind = self.kind;
        let name = match kind {
            BalancerKind::Fksp => "fksp",
            _ => self.to_balancing(file)?.name(),
        };
        let drill = kind == BalancerKind::Drill;
        let conweave = kind == BalancerKind::Conweave;
        // The kinds that balance each packet on its own over next hops.
        let per_packet = matches!(
            kind,
            BalancerKind::Spray
                | BalancerKind::RandomSpray
                | BalancerKind::Drill
                | BalancerKind::PowerOfTwo
                | BalancerKind::Letflow
        );
        check_keys(
            file,
            ("load_balancing", "kind"),
            name,
            &[
                ("samples", self.samples.is_some(), drill),
                ("memory", self.memory.is_some(), drill),
                ("ties", self.ties.is_some(), drill),
                ("control", self.control.is_some(), per_packet),
                (
                    "flowlet_gap",
                    self.flowlet_gap.is_some(),
                    kind == BalancerKind::Letflow,
                ),
                ("reply_extra", self.reply_extra.is_some(), conweave),
                ("path_busy", self.path_busy.is_some(), conweave),
                ("inactive", self.inactive.is_some(), conweave),
                ("flush_slack", self.flush_slack.is_some(), conweave),
                ("default_wait", self.default_wait.is_some(), conweave),
                ("reorder_queues", self.reorder_queues.is_some(), conweave),
                (
                    "reorder_queue_groups",
                    self.reorder_queue_groups.is_some(),
                    conweave,
                ),
                ("flow_table", self.flow_table.is_some(), conweave),
                ("static_paths", self.static_paths.is_some(), conweave),
                ("reorder_buffer", self.reorder_buffer.is_some(), conweave),
            ],
        )?;
        if conweave {
            self.static_paths.get_or_insert(false);
            self.reorder_buffer.get_or_insert(ReorderBuffer::Switch);
            for (key, default) in self.conweave_keys() {
                key.get_or_insert_with(|| default.into());
            }
        }
        if drill {
            self.samples.get_or_insert(LoadBalancing::DRILL_SAMPLES);
            self.memory.get_or_insert(LoadBalancing::DRILL_MEMORY);
            self.ties.get_or_insert(Ties::Memory);
        }
        if per_packet {
            self.control.get_or_insert(Control::Balanced);
        }
        if kind == BalancerKind::Letflow && self.flowlet_gap.is_none() {
            self.flowlet_gap = Some("100us".into());
        }
        Ok(())
    }

    /// ConWeave's keys with their defaults (ConWeave's ns-3 `run.py`, leaf-spine).
    fn conweave_keys(&mut self) -> [(&mut Option<String>, &'static str); 5] {
        [
            (&mut self.reply_extra, "4us"),
            (&mut self.path_busy, "16us"),
            (&mut self.inactive, "300us"),
            (&mut self.flush_slack, "16us"),
            (&mut self.default_wait, "200us"),
        ]
    }

    /// ConWeave's parameters from its keys (defaults where absent).
    fn conweave_params(&self, file: &str) -> Result<ConWeaveParams, ScenarioError> {
        let d = ConWeaveParams::LEAF_SPINE;
        let key = |name: &str, text: &Option<String>, default: Duration| match text {
            Some(text) => parse_key::<Duration>(file, &format!("load_balancing.{name}"), text),
            None => Ok(default),
        };
        let params = ConWeaveParams {
            reply_extra: key("reply_extra", &self.reply_extra, d.reply_extra)?,
            path_busy: key("path_busy", &self.path_busy, d.path_busy)?,
            inactive: key("inactive", &self.inactive, d.inactive)?,
            flush_slack: key("flush_slack", &self.flush_slack, d.flush_slack)?,
            default_wait: key("default_wait", &self.default_wait, d.default_wait)?,
            reorder_queues: self.reorder_queues,
            reorder_queue_groups: self.reorder_queue_groups,
            flow_table: self.flow_table,
            static_paths: self.static_paths.unwrap_or(false),
            hold_outside_buffer: self.reorder_buffer == Some(ReorderBuffer::Outside),
        };
        if let Some(groups) = self.reorder_queue_groups {
            let divides = |q: u16| groups != 0 && q.is_multiple_of(u16::from(groups));
            if !self.reorder_queues.is_some_and(divides) {
                return Err(invalid(
                    file,
                    "load_balancing.reorder_queue_groups",
                    &groups.to_string(),
                    &format!(
                        "at least 1, dividing reorder_queues ({}) into equal groups \
                         (ConWeave's P4 switch: 3 groups of 4 or 8)",
                        match self.reorder_queues {
                            Some(q) => q.to_string(),
                            None => "not set: groups need a limit".into(),
                        }
                    ),
                ));
            }
        }
        if self.flow_table == Some(0) {
            return Err(invalid(
                file,
                "load_balancing.flow_table",
                "0",
                "at least 1 flow per source ToR (ConWeave's P4 switch: 4096 in its testbed build, \
                 65536 in its resource study), or leave it out for no limit",
            ));
        }
        if self.reorder_queues == Some(0) {
            return Err(invalid(
                file,
                "load_balancing.reorder_queues",
                "0",
                "at least 1 reorder queue per port (ConWeave's P4 switch: 24 at 100G, 12 at 25G), \
                 or leave it out for no limit",
            ));
        }
        if params.inactive == Duration::ZERO {
            return Err(invalid(
                file,
                "load_balancing.inactive",
                &format!("{:?}", self.inactive.as_deref().unwrap_or("")),
                "longer than zero (ConWeave's ns-3: 300us on a leaf-spine, 1ms on a fat-tree)",
            ));
        }
        Ok(params)
    }

    /// The validated choice.
    pub(super) fn to_balancing(&self, file: &str) -> Result<LoadBalancing, ScenarioError> {
        Ok(match self.kind {
            BalancerKind::Ecmp | BalancerKind::Fksp => LoadBalancing::Ecmp,
            BalancerKind::Spray => LoadBalancing::Spray,
            BalancerKind::RandomSpray => LoadBalancing::RandomSpray,
            BalancerKind::PowerOfTwo => LoadBalancing::PowerOfTwo,
            BalancerKind::Drill => {
                let d = self.samples.unwrap_or(LoadBalancing::DRILL_SAMPLES);
                let m = self.memory.unwrap_or(LoadBalancing::DRILL_MEMORY);
                if d == 0 || d > 16 {
                    return Err(invalid(
                        file,
                        "load_balancing.samples",
                        &d.to_string(),
                        "DRILL compares 1 to 16 random candidates per packet (its paper: 2)",
                    ));
                }
                if m > MAX_DRILL_MEMORY {
                    return Err(invalid(
                        file,
                        "load_balancing.memory",
                        &m.to_string(),
                        &format!(
                            "DRILL remembers 0 to {MAX_DRILL_MEMORY} candidates (its paper: 1; \
                             more helps no further)"
                        ),
                    ));
                }
                let ties = match self.ties.unwrap_or(Ties::Memory) {
                    Ties::Memory => DrillTies::Memory,
                    Ties::Sample => DrillTies::Sample,
                };
                LoadBalancing::Drill { d, m, ties }
            }
            BalancerKind::Conweave => LoadBalancing::ConWeave(self.conweave_params(file)?),
            BalancerKind::Letflow => {
                let gap = match &self.flowlet_gap {
                    Some(text) => parse_key::<Duration>(file, "load_balancing.flowlet_gap", text)?,
                    None => Duration::from_us(100),
                };
                if gap == Duration::ZERO {
                    return Err(invalid(
                        file,
                        "load_balancing.flowlet_gap",
                        &format!("{:?}", self.flowlet_gap.as_deref().unwrap_or("")),
                        "a flowlet gap must be longer than zero (LetFlow's paper: 100us to \
                         500us); for a new path per packet, use kind = \"random-spray\"",
                    ));
                }
                LoadBalancing::LetFlow { gap }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::scenario::parse;

    fn balancing(text: &str) -> Result<LoadBalancing, String> {
        let overrides = ["workload.duration=10us".to_string()];
        parse(text, "t.toml", Path::new("."), &overrides)
            .map(|s| s.runs[0].config.load_balancing)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn control_is_a_per_packet_choice_resolved_for_those_kinds() {
        let control = |section: &str| {
            let text = format!("[load_balancing]\n{section}\n");
            let overrides = ["workload.duration=10us".to_string()];
            parse(&text, "t.toml", Path::new("."), &overrides)
                .map(|s| {
                    let r = &s.runs[0];
                    (
                        r.config.control_balancing,
                        r.resolved.load_balancing.control,
                    )
                })
                .map_err(|e| e.to_string())
        };
        let balanced = Ok((ControlBalancing::Balanced, Some(Control::Balanced)));
        assert_eq!(control("kind = \"drill\""), balanced);
        assert_eq!(
            control("kind = \"letflow\"\ncontrol = \"balanced\""),
            balanced
        );
        assert_eq!(
            control("kind = \"drill\"\ncontrol = \"ecmp\""),
            Ok((ControlBalancing::Ecmp, Some(Control::Ecmp)))
        );
        assert_eq!(
            control("kind = \"ecmp\""),
            Ok((ControlBalancing::Balanced, None))
        );
        for (section, want) in [
            (
                "kind = \"ecmp\"\ncontrol = \"ecmp\"",
                "load_balancing.control",
            ),
            (
                "kind = \"conweave\"\ncontrol = \"ecmp\"",
                "load_balancing.control",
            ),
            (
                "kind = \"drill\"\ncontrol = \"flow\"",
                "unknown variant `flow`",
            ),
        ] {
            let e = control(section).unwrap_err();
            assert!(e.contains(want), "{section}: {e}");
        }
    }

    #[test]
    fn each_kind_with_its_defaults_and_overrides() {
        let cases: &[(&str, LoadBalancing)] = &[
            ("", LoadBalancing::Ecmp),
            ("kind = \"ecmp\"", LoadBalancing::Ecmp),
            ("kind = \"spray\"", LoadBalancing::Spray),
            ("kind = \"random-spray\"", LoadBalancing::RandomSpray),
            ("kind = \"power-of-two\"", LoadBalancing::PowerOfTwo),
            ("kind = \"drill\"", LoadBalancing::DRILL),
            (
                "kind = \"drill\"\nsamples = 3\nmemory = 0",
                LoadBalancing::Drill {
                    d: 3,
                    m: 0,
                    ties: DrillTies::Memory,
                },
            ),
            (
                "kind = \"drill\"\nties = \"sample\"",
                LoadBalancing::Drill {
                    d: 2,
                    m: 1,
                    ties: DrillTies::Sample,
                },
            ),
            ("kind = \"letflow\"", LoadBalancing::LETFLOW),
            (
                "kind = \"letflow\"\nflowlet_gap = \"500us\"",
                LoadBalancing::LetFlow {
                    gap: Duration::from_us(500),
                },
            ),
        ];
        for (section, want) in cases {
            let text = format!("[load_balancing]\n{section}\n");
            assert_eq!(balancing(&text).as_ref(), Ok(want), "{section}");
        }
    }

    #[test]
    fn bad_values_and_keys_of_another_kind_are_refused_by_name() {
        let cases = [
            (
                "kind = \"ecmp\"\nsamples = 2",
                "t.toml: load_balancing.samples is set: does not apply to load_balancing.kind = \"ecmp\"",
            ),
            (
                "kind = \"drill\"\nflowlet_gap = \"50us\"",
                "load_balancing.flowlet_gap is set: does not apply to load_balancing.kind = \"drill\"",
            ),
            ("kind = \"drill\"\nsamples = 0", "load_balancing.samples = 0: DRILL compares 1 to 16"),
            ("kind = \"drill\"\nmemory = 9", "load_balancing.memory = 9: DRILL remembers 0 to 4"),
            ("kind = \"drill\"\nties = \"random\"", "unknown variant `random`, expected `memory` or `sample`"),
            (
                "kind = \"power-of-two\"\nties = \"sample\"",
                "load_balancing.ties is set: does not apply to load_balancing.kind = \"power-of-two\"",
            ),
            (
                "kind = \"letflow\"\nflowlet_gap = \"0us\"",
                "load_balancing.flowlet_gap = \"0us\": a flowlet gap must be longer than zero",
            ),
            ("kind = \"letflow\"\nflowlet_gap = \"100\"", "load_balancing.flowlet_gap = \"100\""),
            ("kind = \"dril\"", "unknown variant `dril`"),
            ("knd = \"drill\"", "unknown field `knd`"),
        ];
        for (section, want) in cases {
            let err = balancing(&format!("[load_balancing]\n{section}\n")).unwrap_err();
            assert!(err.contains(want), "{section}: {err}");
        }
    }

    #[test]
    fn the_resolved_scenario_shows_the_defaults_it_used() {
        let overrides = ["workload.duration=10us".to_string()];
        let s = parse(
            "[load_balancing]\nkind = \"drill\"\n",
            "t.toml",
            Path::new("."),
            &overrides,
        )
        .unwrap();
        let section = &s.runs[0].resolved.load_balancing;
        assert_eq!(
            (section.samples, section.memory, section.ties),
            (Some(2), Some(1), Some(Ties::Memory))
        );
        assert_eq!(section.flowlet_gap, None);
    }
}
