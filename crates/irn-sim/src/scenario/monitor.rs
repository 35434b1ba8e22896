//! `[monitor]`: time series of ports, NICs and flows, sampled at a fixed interval into
//! `series/*.csv` (`irn run --monitor 10us` is `[monitor] interval = "10us"` with the default
//! selection). Absent, nothing is sampled and the run has no sample event at all.
//!
//! ```toml
//! [monitor]
//! interval = "10us"   # required: how often to sample
//! ports = "switch"    # which egress ports (default: every switch port), see below
//! flows = [0, 17]     # flow ids (flows.csv's `flow_id`) whose progress is sampled (default: none)
//! nics = true         # every NIC's active flows and ordering memory (default: true)
//! summary_from = "1ms" # samples from then on make summary.json's `bottleneck` (default: none)
//! ```
//!
//! `ports` is one selector or a list of them, their union:
//!
//! | selector | ports |
//! | --- | --- |
//! | `"all"` / `"none"` | every port / none |
//! | `"switch"` / `"host"` | every switch port / every NIC port |
//! | `"uplinks"` / `"downlinks"` | every switch port leading away from / towards the hosts |
//! | `"long-haul"` | both ends of every long-haul link of a `wan` topology (the border switches' ports) |
//! | `"switch:3"` | every port of switch 3 (switches numbered from 0, as the topology lists them) |
//! | `"switch:3:uplinks"`, `"switch:3:downlinks"` | those of switch 3's ports |
//! | `"host:5"` | host 5's NIC port |
//!
//! A node's *tier* is its hop distance from the nearest host (hosts 0, leaves or edges 1,
//! spines or aggregation 2, cores 3); an uplink leads to a higher tier, a downlink to a lower
//! one. Defined on the graph, so it means the same on every topology kind.

use serde::{Deserialize, Serialize};

use irn_core::{Duration, Time};

use super::{duration_in, invalid, min_frame_floor, parse_key, ScenarioError};
use crate::config::Monitor;
use crate::ids::{FlowId, NodeId, PortId};
use crate::topology::Topology;

/// The section as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MonitorSection {
    /// How often to sample, e.g. `"10us"`; required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    /// One selector or a list of them (see the module's table). Default `"switch"`.
    #[serde(default = "default_ports")]
    pub ports: PortSelection,
    /// Flow ids whose delivered bytes and congestion control are sampled.
    #[serde(default)]
    pub flows: Vec<u32>,
    /// Every NIC's active flows and ordering memory are sampled.
    #[serde(default = "yes")]
    pub nics: bool,
    /// Samples at or after this simulated time make `summary.json`'s `bottleneck`, e.g.
    /// `"1ms"` to leave an incast's first round trips out. Default `"0us"`: every sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_from: Option<String>,
}

/// `monitor.ports`: `"switch"` or `["switch:0:uplinks", "host:3"]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PortSelection {
    One(String),
    Many(Vec<String>),
}

fn default_ports() -> PortSelection {
    PortSelection::One("switch".into())
}

fn yes() -> bool {
    true
}

const SELECTORS: &str = "\"all\", \"none\", \"switch\", \"host\", \"uplinks\", \"downlinks\", \
    \"long-haul\", \"switch:N\", \"switch:N:uplinks\", \"switch:N:downlinks\" or \"host:N\" (or a list of them)";

/// The resolved monitor, checked against the topology and the number of flows.
pub(super) fn build(
    m: &MonitorSection,
    file: &str,
    topology: &Topology,
    (flows, horizon): (usize, Option<Time>),
) -> Result<Monitor, ScenarioError> {
    let Some(text) = &m.interval else {
        return Err(invalid(
            file,
            "monitor.interval",
            "(missing)",
            "a duration such as \"10us\": how often to sample",
        ));
    };
    // No queue or counter changes between two samples closer than a minimum frame at the
    // fastest link: a shorter interval only repeats rows (a "1ps" one wrote 130 MB/s).
    let fastest = topology.ports().iter().map(|p| p.rate).max();
    let floor = fastest.map(|rate| min_frame_floor(rate, "the fastest link"));
    let floor = floor.unwrap_or_default();
    let interval = duration_in(file, "monitor.interval", text, (floor.0, &floor.1), None)?;
    let selectors: &[String] = match &m.ports {
        PortSelection::One(s) => std::slice::from_ref(s),
        PortSelection::Many(v) => v,
    };
    let mut ports = Vec::new();
    for s in selectors {
        select(topology, s, &mut ports)
            .map_err(|allowed| invalid(file, "monitor.ports", &format!("{s:?}"), &allowed))?;
    }
    ports.sort_unstable();
    ports.dedup();
    let mut ids = Vec::with_capacity(m.flows.len());
    for &f in &m.flows {
        if f as usize >= flows {
            return Err(invalid(
                file,
                "monitor.flows",
                &f.to_string(),
                &format!(
                    "a flow id (flows.csv's flow_id) below {flows}, the number of flows this run has"
                ),
            ));
        }
        ids.push(FlowId(f));
    }
    ids.sort_unstable();
    ids.dedup();
    let summary_from = m
        .summary_from
        .as_deref()
        .map(|text| parse_key::<Duration>(file, "monitor.summary_from", text))
        .transpose()?;
    // Settings that could take no sample, or summarize none, before the run surely stops.
    if let Some(horizon) = horizon {
        let late = |d: Duration| Time::ZERO + d > horizon;
        let refused = match (m.summary_from.as_deref(), summary_from) {
            (Some(from), Some(d)) if late(d) => Some(("monitor.summary_from", from, "summarized")),
            _ if late(interval) => Some(("monitor.interval", text.as_str(), "sampled")),
            _ => None,
        };
        if let Some((key, value, what)) = refused {
            return Err(invalid(
                file,
                key,
                &format!("{value:?}"),
                &format!(
                    "at most {:.3}ms (the last flow's start plus run.drain_limit, when the run \
                     stops at the latest): nothing would be {what}",
                    horizon.as_ns_f64() / 1e6
                ),
            ));
        }
    }
    Ok(Monitor {
        interval,
        ports,
        flows: ids,
        nics: m.nics,
        summary_from,
    })
}

pub use crate::topology::node_tiers;

/// Which way a switch port leads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Way {
    Any,
    Up,
    Down,
}

/// Adds the ports selector `s` names to `out`; the error says what is allowed.
pub(super) fn select(topology: &Topology, s: &str, out: &mut Vec<PortId>) -> Result<(), String> {
    let ports = topology.ports();
    let tiers = node_tiers(topology);
    let leads = |p: u32, way: Way| {
        let port = &ports[p as usize];
        let (mine, far) = (
            tiers[port.node.index()],
            tiers[ports[port.peer.index()].node.index()],
        );
        match way {
            Way::Any => true,
            Way::Up => far > mine,
            Way::Down => far < mine,
        }
    };
    let switch_ports = |switches: &[NodeId], way: Way, out: &mut Vec<PortId>| {
        for &n in switches {
            out.extend(
                topology
                    .node_ports(n)
                    .filter(|&p| leads(p, way))
                    .map(PortId),
            );
        }
    };
    let parts: Vec<&str> = s.split(':').collect();
    match parts.as_slice() {
        ["all"] => out.extend((0..ports.len() as u32).map(PortId)),
        ["none"] => {}
        ["long-haul"] => {
            for l in topology.long_haul_links() {
                out.extend([l.a, l.b]);
            }
        }
        ["switch"] => switch_ports(topology.switches(), Way::Any, out),
        ["uplinks"] => switch_ports(topology.switches(), Way::Up, out),
        ["downlinks"] => switch_ports(topology.switches(), Way::Down, out),
        ["host"] => out.extend(
            topology
                .hosts()
                .iter()
                .map(|&h| PortId(topology.node_ports(h).start)),
        ),
        ["switch", n, rest @ ..] => {
            let count = topology.switches().len();
            let i = index(n, count, "switch", "switches")?;
            let way = match rest {
                [] => Way::Any,
                ["uplinks"] => Way::Up,
                ["downlinks"] => Way::Down,
                _ => return Err(format!("one of {SELECTORS}")),
            };
            switch_ports(&topology.switches()[i..=i], way, out);
        }
        ["host", n] => {
            let count = topology.hosts().len();
            let i = index(n, count, "host", "hosts")?;
            out.push(PortId(topology.node_ports(topology.hosts()[i]).start));
        }
        _ => return Err(format!("one of {SELECTORS}")),
    }
    Ok(())
}

/// `n` as an index among `count` nodes.
fn index(n: &str, count: usize, one: &str, many: &str) -> Result<usize, String> {
    match n.parse::<usize>() {
        Ok(i) if i < count => Ok(i),
        _ => Err(format!(
            "a {one} number 0 to {} (the topology has {count} {many})",
            count.saturating_sub(1)
        )),
    }
}

#[cfg(test)]
mod tests {
    use crate::ids::PortId;
    use crate::scenario::tests::one;

    /// `[monitor]` with `body`, on a 4-host leaf-spine (2 leaves, 2 spines).
    fn monitor(body: &str) -> Result<crate::config::Monitor, String> {
        let text = format!(
            "[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\n\
             [monitor]\n{body}\n"
        );
        one(&text)
            .map(|r| r.config.monitor.expect("a [monitor] section"))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn selectors_pick_ports_by_node_and_direction() {
        // Nodes: hosts 0..4, then leaves and spines; each leaf has 2 host ports then 2 uplinks.
        let topo =
            one("[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\n")
                .unwrap()
                .config
                .topology;
        let of = |n: usize| topo.node_ports(topo.switches()[n]);
        let all = |n: usize| of(n).map(PortId).collect::<Vec<_>>();
        let up = |n: usize| {
            of(n)
                .filter(|&p| {
                    topo.switches()[2..]
                        .contains(&topo.ports()[topo.ports()[p as usize].peer.index()].node)
                })
                .map(PortId)
                .collect::<Vec<_>>()
        };
        let host = |h: usize| PortId(topo.node_ports(topo.hosts()[h]).start);
        let cases: [(&str, Vec<PortId>); 7] = [
            ("\"none\"", vec![]),
            ("\"switch:0\"", all(0)),
            ("\"switch:0:uplinks\"", up(0)),
            ("\"switch:2:uplinks\"", vec![]),
            ("\"switch:2:downlinks\"", all(2)),
            (
                "[\"host:3\", \"host:1\", \"host:3\"]",
                vec![host(1), host(3)],
            ),
            ("\"host\"", (0..4).map(host).collect()),
        ];
        for (sel, want) in cases {
            let m = monitor(&format!("interval = \"5us\"\nports = {sel}")).unwrap();
            assert_eq!(m.ports, want, "{sel}");
        }
        assert_eq!(up(0).len(), 2);
        let every = monitor("interval = \"5us\"\nports = \"all\"").unwrap();
        assert_eq!(every.ports.len(), topo.ports().len());
        let switches = monitor("interval = \"5us\"").unwrap();
        assert_eq!(switches.ports.len(), topo.ports().len() - 4);
        let ups = monitor("interval = \"5us\"\nports = \"uplinks\"").unwrap();
        let downs = monitor("interval = \"5us\"\nports = \"downlinks\"").unwrap();
        assert_eq!((ups.ports.len(), downs.ports.len()), (4, 8));
    }

    #[test]
    fn mistakes_name_the_key_and_what_is_allowed() {
        let cases = [
            (
                "ports = \"switch\"",
                "t.toml: monitor.interval = (missing): a duration such as \"10us\"",
            ),
            (
                "interval = \"0us\"",
                "monitor.interval = \"0us\": at least 16800ps (16.8ns) (one minimum frame, 64 B + \
                 20 B of preamble and gap, at 40Gbps, the fastest link",
            ),
            (
                "interval = \"16799ps\"",
                "monitor.interval = \"16799ps\": at least 16800ps",
            ),
            (
                "interval = \"fast\"",
                "t.toml: monitor.interval = \"fast\": ",
            ),
            (
                "interval = \"1us\"\nports = \"switch:4\"",
                "monitor.ports = \"switch:4\": a switch number 0 to 3 (the topology has 4 switches)",
            ),
            (
                "interval = \"1us\"\nports = \"host:x\"",
                "a host number 0 to 3",
            ),
            (
                "interval = \"1us\"\nports = \"spines\"",
                "monitor.ports = \"spines\": one of \"all\"",
            ),
            (
                "interval = \"1us\"\nports = \"switch:1:sideways\"",
                "one of \"all\"",
            ),
            (
                "interval = \"1us\"\nflows = [100000]",
                "monitor.flows = 100000: a flow id (flows.csv's flow_id) below ",
            ),
            // The test workload's last flow starts at 1.35 us, and the run stops 100 ms later
            // at the latest.
            (
                "interval = \"1s\"",
                "monitor.interval = \"1s\": at most 100.001ms",
            ),
            (
                "interval = \"1us\"\nsummary_from = \"200ms\"",
                "monitor.summary_from = \"200ms\": at most 100.001ms",
            ),
        ];
        for (body, want) in cases {
            let err = monitor(body).unwrap_err();
            assert!(err.contains(want), "{body}: {err}");
        }
    }

    #[test]
    fn defaults_sample_switch_ports_and_nics() {
        let m = monitor("interval = \"2us\"\nflows = [0, 0]").unwrap();
        assert_eq!(m.interval, irn_core::Duration::from_us(2));
        assert!(m.nics);
        assert_eq!(m.flows, [crate::ids::FlowId(0)]);
        assert!(one("").unwrap().config.monitor.is_none());
    }
}
