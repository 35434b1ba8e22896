//! Nodes and ports as a person names them: by tier and index within the tier (`leaf 3`,
//! `core 2`, `host 12`; `site A spine 1` in a WAN), where the ids say `switch:9` and mean
//! nothing to someone who did not build the network.
//!
//! A builder that knows its tiers ([`Topology::fat_tree`], [`Topology::leaf_spine`],
//! [`Topology::wan`]) records them as [`TierRun`]s: runs of consecutive switches (in switch
//! order) that share a tier's name. A network without named tiers (Jellyfish, a star, an ns-3
//! file) names its switches `switch N`, by their index among switches, as `[monitor]`'s
//! selectors do. Labels are for output written at setup or per sample, never per packet.

use core::fmt;

use super::{Topology, WanSite};
use crate::ids::{NodeId, PortId};

/// Consecutive switches, in [`Topology::switches`] order, that share a tier's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TierRun {
    /// The WAN site the switches belong to; `None` in a single site.
    pub site: Option<WanSite>,
    /// The tier's name: `edge`, `agg`, `core`, `leaf`, `spine`, `border`, `switch`.
    pub name: &'static str,
    pub switches: u32,
}

/// A node by its tier and its index within the tier (and its site, in a WAN).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeLabel {
    pub site: Option<WanSite>,
    /// `host`, or the switch's tier name (`switch` without named tiers).
    pub tier: &'static str,
    /// Its index within the tier (and site); `None` for the only switch of a named tier (a
    /// WAN site's dedicated border, a fat-tree's single core), which needs none.
    pub index: Option<u32>,
}

impl fmt::Display for NodeLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(site) = self.site {
            write!(f, "site {site} ")?;
        }
        f.write_str(self.tier)?;
        match self.index {
            Some(i) => write!(f, " {i}"),
            None => Ok(()),
        }
    }
}

impl serde::Serialize for NodeLabel {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A port as the link it sends on: its node's label, then its peer's (`leaf 3 → spine 5`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortLabel {
    pub node: NodeLabel,
    pub peer: NodeLabel,
}

impl fmt::Display for PortLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} → {}", self.node, self.peer)
    }
}

impl Topology {
    /// Names the switches' tiers: `runs` cover [`switches`](Self::switches) in order, their
    /// counts adding up to the number of switches.
    ///
    /// # Panics
    /// If the counts do not add up: a builder's mistake, not the user's.
    pub(super) fn with_tier_runs(mut self, runs: Vec<TierRun>) -> Topology {
        let total: u64 = runs.iter().map(|r| u64::from(r.switches)).sum();
        assert_eq!(
            total,
            self.switches.len() as u64,
            "tier runs cover every switch"
        );
        self.tier_runs = runs;
        self
    }

    /// The named tiers of the switches, in switch order; empty without named tiers.
    pub fn tier_runs(&self) -> &[TierRun] {
        &self.tier_runs
    }

    /// Node `n` by its tier and index within it: `host 12` (hosts by host index, within its
    /// site in a WAN), `leaf 3`, `site B spine 0`, `switch 9` without named tiers.
    ///
    /// # Panics
    /// If `n` is out of range.
    pub fn node_label(&self, n: NodeId) -> NodeLabel {
        if let Some(h) = self.host_index(n) {
            let wan = self.wan_info();
            let site = wan.map(|w| w.site_of(h));
            let first = match (wan, site) {
                (Some(w), Some(s)) => w.hosts(s).start,
                _ => 0,
            };
            return NodeLabel {
                site,
                tier: "host",
                index: Some(h.0 - first),
            };
        }
        let row = self.switches.partition_point(|s| s.0 < n.0) as u32;
        let mut first = 0;
        for run in &self.tier_runs {
            if row < first + run.switches {
                return NodeLabel {
                    site: run.site,
                    tier: run.name,
                    index: (run.switches > 1 || run.name == "switch").then_some(row - first),
                };
            }
            first += run.switches;
        }
        NodeLabel {
            site: None,
            tier: "switch",
            index: Some(row),
        }
    }

    /// Port `p` by the labels of its node and of the node at its link's far end.
    ///
    /// # Panics
    /// If `p` is out of range.
    pub fn port_label(&self, p: PortId) -> PortLabel {
        let port = &self.ports[p.index()];
        PortLabel {
            node: self.node_label(port.node),
            peer: self.node_label(self.ports[port.peer.index()].node),
        }
    }
}

#[cfg(test)]
mod tests {
    use irn_core::time::{Bandwidth, Duration};

    use super::*;
    use crate::topology::{Border, Site, WanLinks};

    const G10: Bandwidth = Bandwidth::from_gbps(10);
    const US: Duration = Duration::from_us(1);

    /// Every port's label, as text.
    fn labels(t: &Topology) -> Vec<String> {
        (0..t.ports().len() as u32)
            .map(|p| t.port_label(PortId(p)).to_string())
            .collect()
    }

    #[test]
    fn fat_tree_names_edge_agg_and_core() {
        let t = Topology::fat_tree(4, G10, US).unwrap();
        let l = labels(&t);
        // Host 0's NIC, then edge 0's ports: its hosts, then its aggregation switches.
        assert_eq!(l[0], "host 0 → edge 0");
        assert_eq!(l[16], "edge 0 → host 0");
        assert_eq!(l[18], "edge 0 → agg 0");
        assert_eq!(l[15], "host 15 → edge 7");
        let core = t.switches()[16];
        assert_eq!(t.node_label(core).to_string(), "core 0");
        assert_eq!(t.node_label(t.switches()[19]).to_string(), "core 3");
        assert_eq!(
            t.port_label(PortId(t.node_ports(core).start)).to_string(),
            "core 0 → agg 0"
        );
        // k = 2 has one core, named without an index.
        let t = Topology::fat_tree(2, G10, US).unwrap();
        assert_eq!(
            t.node_label(*t.switches().last().unwrap()).to_string(),
            "core"
        );
    }

    #[test]
    fn leaf_spine_names_leaves_and_spines() {
        let t = Topology::leaf_spine(3, 2, 4, G10, G10, US).unwrap();
        assert_eq!(t.port_label(PortId(5)).to_string(), "host 5 → leaf 1");
        let leaf2 = t.switches()[2];
        let up = t.node_ports(leaf2).end - 1;
        assert_eq!(t.port_label(PortId(up)).to_string(), "leaf 2 → spine 1");
        assert_eq!(t.node_label(t.switches()[4]).to_string(), "spine 1");
    }

    #[test]
    fn networks_without_tiers_name_switches_by_index() {
        let t = Topology::star(3, G10, US).unwrap();
        assert_eq!(
            labels(&t)[..4],
            [
                "host 0 → switch 0",
                "host 1 → switch 0",
                "host 2 → switch 0",
                "switch 0 → host 0"
            ]
        );
        let t = Topology::jellyfish(6, 4, 6, (G10, US), 1).unwrap();
        assert_eq!(t.node_label(t.switches()[5]).to_string(), "switch 5");
    }

    #[test]
    fn a_wan_names_each_site_its_tiers_and_its_border() {
        let a = Topology::leaf_spine(2, 2, 2, G10, G10, US).unwrap();
        let b = Topology::star(3, G10, US).unwrap();
        let links = WanLinks {
            links: 2,
            rate: G10,
            delay: US,
            buffer_bytes: 1_000_000,
        };
        let sites = (
            Site {
                topology: &a,
                border: Border::TopTier,
            },
            Site {
                topology: &b,
                border: Border::Switch(b.switches()[0]),
            },
        );
        let t = Topology::wan(sites.0, sites.1, links).unwrap();
        let names: Vec<String> = (t.switches().iter())
            .map(|&s| t.node_label(s).to_string())
            .collect();
        assert_eq!(
            names,
            [
                "site A leaf 0",
                "site A leaf 1",
                "site A spine 0",
                "site A spine 1",
                "site A border",
                "site B switch 0"
            ]
        );
        // Hosts by their index within their site.
        assert_eq!(t.node_label(t.hosts()[5]).to_string(), "site B host 1");
        let long_haul = t.long_haul_links()[1];
        assert_eq!(
            t.port_label(long_haul.a).to_string(),
            "site A border → site B switch 0"
        );
    }
}
