//! `[topology]`: the network's shape.
//!
//! ```toml
//! [topology]
//! kind = "leaf-spine"    # "fat-tree" (default), "star", "dumbbell", "leaf-spine", "jellyfish",
//!                        # "ns3", "wan"
//! leaves = 8             # leaf-spine: leaf switches
//! spines = 8             # leaf-spine: spine switches
//! hosts_per_leaf = 16    # leaf-spine: hosts on each leaf
//! link_rate = "100Gbps"  # every link's rate (leaf-spine: the host links')
//! link_delay = "1us"     # every link's propagation delay
//! loss_rate = 1e-4       # every link loses each packet with this probability (default 0)
//! lossy_link = [{ nodes = [3, 9], rate = 0.01 }] # single links' own rates
//! routing = "k-shortest" # "shortest" (default): ECMP-style next hops; "k-shortest": source
//!                        # routing over Yen's k shortest paths between edge switches;
//!                        # "up-down": over the k shortest up*/down* paths (no PFC deadlock)
//! paths = 8              # k-shortest, up-down: paths per pair of edge switches (1 to 64)
//! ```
//!
//! `loss_rate` applies to every link, host links included, both directions, each drawing from
//! its own seeded stream ([`crate::loss`]); ns-3 files give each link's own (`error_rate`),
//! so `kind = "ns3"` rejects it, as do a wan's site tables (the key belongs to the whole
//! network, in `[topology]`).
//!
//! `kind = "jellyfish"` takes `switches` (80), `ports` (8, per switch, server ports included),
//! `hosts` (128) and `seed` (default: the scenario's), the Eunomia paper's network by default.
//!
//! `kind = "wan"` joins two sites, each a `[topology]` of its own in `[topology.site]` (and
//! `[topology.site_b]`), by long-haul links (`[topology.wan]`): see the `wan` submodule.

use std::path::Path;

use irn_core::{Bandwidth, Duration};
use serde::{Deserialize, Serialize};

use super::{check_keys, duration_in, invalid, link_rate, require, resolve, ScenarioError, SET};
use crate::loss::LinkLoss;
use crate::topology::{Clos3, ClosLinks, Rail, Topology, TopologyError, MAX_PATHS};

mod wan;

pub use wan::WanSection;

/// The network's shape. Keys that do not apply to the chosen `kind` are rejected.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologySection {
    /// Default: `"ns3"` when `file` is given, `"fat-tree"` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<TopologyKind>,
    /// fat-tree: switch radix (IRN default 6: 54 hosts, 45 switches).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub k: Option<u32>,
    /// star: hosts on the one switch; jellyfish: servers (default 128).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts: Option<u32>,
    /// jellyfish: switches (default 80).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switches: Option<u32>,
    /// jellyfish: ports per switch, server ports included (default 8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ports: Option<u32>,
    /// jellyfish: the seed its graph is drawn from (default: the scenario's `seed`, so a
    /// sweep over seeds draws a graph per seed; set it to keep one graph).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// dumbbell: hosts on each side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub right: Option<u32>,
    /// leaf-spine: leaf switches (default 8); clos3: leaves per pod (default 4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaves: Option<u32>,
    /// leaf-spine: spine switches, each linked once to every leaf (default 8); clos3: spines
    /// per pod, each linked to every leaf of its pod, and planes of super-spines (default 4);
    /// rail: spines, each linked to every rail leaf (default 8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spines: Option<u32>,
    /// leaf-spine: hosts on each leaf (default 16); clos3: likewise (default 8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts_per_leaf: Option<u32>,
    /// clos3: pods, each its own leaf-spine (default 4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pods: Option<u32>,
    /// clos3: super-spines per plane; spine `s` of every pod links to every super-spine of
    /// plane `s` (default 4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub super_spines: Option<u32>,
    /// rail: groups of servers, each with its own rail leaves (default 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<u32>,
    /// rail: servers per group (default 8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub servers: Option<u32>,
    /// rail: NICs per server (one host each), and rail leaves per group (default 8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rails: Option<u32>,
    /// Every link's rate (not for ns3 files, which give each link's own). Default 40Gbps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_rate: Option<String>,
    /// Every link's propagation delay (not for ns3 files). Default 2us.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_delay: Option<String>,
    /// dumbbell: the middle link's rate (default: `link_rate`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bottleneck_rate: Option<String>,
    /// leaf-spine, clos3, rail: the switch-to-switch links' rate (default: `link_rate`, which
    /// then sets only the host links').
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spine_link_rate: Option<String>,
    /// ns3: a topology file in the HPCC/ConWeave format (MODEL.md §8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// wan: the first site, a `[topology]` of any kind but ns3 and wan (default: the default
    /// topology, a k = 6 fat-tree).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub site: Option<Box<TopologySection>>,
    /// wan: the second site (default: the same as `site`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub site_b: Option<Box<TopologySection>>,
    /// wan: the long-haul links between the sites' border switches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wan: Option<WanSection>,
    /// The probability that any link loses a packet on the wire, in [0, 1) (not for ns3
    /// files, which give each link's `error_rate`). Default 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss_rate: Option<f64>,
    /// `"shortest"` (default): every switch spreads packets over its next hops on shortest
    /// paths; `"k-shortest"`: source routing over each edge-switch pair's `paths` shortest
    /// loopless paths, chosen at the first switch; `"up-down"`: the same over the shortest
    /// up*/down* paths, which cannot deadlock PFC (not for wan).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routing: Option<Routing>,
    /// k-shortest, up-down: paths per pair of edge switches (default 8, at most 64).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paths: Option<u32>,
    /// `[[topology.lossy_link]]`: single links that lose packets, beyond `loss_rate`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lossy_link: Vec<LossyLinkSection>,
}

/// One `[[topology.lossy_link]]`: the link between two nodes (the first of parallel links)
/// loses each packet, both directions, with probability `rate` (replacing `loss_rate` there).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LossyLinkSection {
    /// Node ids, as `irn topology` numbers them.
    pub nodes: [u32; 2],
    pub rate: f64,
}

/// How packets find their way (`topology.routing`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Routing {
    /// Per-switch next hops on shortest paths (MODEL.md §1), the balancer choosing among them.
    #[default]
    Shortest,
    /// Yen's k shortest loopless paths between edge switches; the first switch's balancer
    /// picks one, later switches follow it.
    KShortest,
    /// As `KShortest`, over the k shortest up*/down* paths (Autonet): no path turns back
    /// towards the root switch once it has left it, so PFC's pauses never wait in a cycle.
    UpDown,
}

impl Routing {
    /// Whether the first switch picks a path among several that later switches follow.
    pub fn source_routed(self) -> bool {
        matches!(self, Routing::KShortest | Routing::UpDown)
    }

    /// The routing as a scenario writes it.
    pub fn name(self) -> &'static str {
        match self {
            Routing::Shortest => "shortest",
            Routing::KShortest => "k-shortest",
            Routing::UpDown => "up-down",
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyKind {
    /// Al-Fares k-ary fat-tree.
    #[default]
    FatTree,
    /// Hosts on one switch.
    Star,
    /// Two switches joined by one link.
    Dumbbell,
    /// Leaves with hosts, every leaf linked to every spine (Eunomia's Clos).
    LeafSpine,
    /// A random regular graph of switches with servers attached (Singla et al., NSDI'12).
    Jellyfish,
    /// Any graph, from an ns-3 topology file.
    Ns3,
    /// Two sites joined by long-haul links between their border switches.
    Wan,
    /// Pods of leaves and spines joined by planes of super-spines.
    Clos3,
    /// Servers of several NICs, NIC `i` of every server of a group on the group's rail leaf
    /// `i`, rail leaves joined by spines.
    Rail,
}

impl TopologyKind {
    /// The kind as a scenario writes it.
    fn name(self) -> &'static str {
        match self {
            TopologyKind::FatTree => "fat-tree",
            TopologyKind::Star => "star",
            TopologyKind::Dumbbell => "dumbbell",
            TopologyKind::LeafSpine => "leaf-spine",
            TopologyKind::Jellyfish => "jellyfish",
            TopologyKind::Ns3 => "ns3",
            TopologyKind::Wan => "wan",
            TopologyKind::Clos3 => "clos3",
            TopologyKind::Rail => "rail",
        }
    }
}

fn default_rate() -> String {
    "40Gbps".into()
}
fn default_delay() -> String {
    "2us".into()
}

impl Default for TopologySection {
    fn default() -> Self {
        TopologySection {
            kind: Some(TopologyKind::FatTree),
            k: Some(6),
            hosts: None,
            switches: None,
            ports: None,
            seed: None,
            left: None,
            right: None,
            leaves: None,
            spines: None,
            hosts_per_leaf: None,
            pods: None,
            super_spines: None,
            groups: None,
            servers: None,
            rails: None,
            link_rate: Some(default_rate()),
            link_delay: Some(default_delay()),
            bottleneck_rate: None,
            spine_link_rate: None,
            file: None,
            site: None,
            site_b: None,
            wan: None,
            loss_rate: None,
            routing: None,
            paths: None,
            lossy_link: Vec::new(),
        }
    }
}

impl TopologySection {
    /// Fills the kind's defaults; rejects keys of other kinds and missing required ones.
    pub(super) fn normalize(&mut self, file: &str) -> Result<(), ScenarioError> {
        self.normalize_at(file, "topology")
    }

    /// The kind, defaulted: `"ns3"` when `file` is given, `"fat-tree"` otherwise.
    fn resolved_kind(&mut self) -> TopologyKind {
        *self.kind.get_or_insert(if self.file.is_some() {
            TopologyKind::Ns3
        } else {
            TopologyKind::FatTree
        })
    }

    /// [`normalize`](Self::normalize) for the table at `at` (`topology`, or a wan's
    /// `topology.site`), which errors name.
    fn normalize_at(&mut self, file: &str, at: &str) -> Result<(), ScenarioError> {
        let k = self.resolved_kind();
        let kind = k.name();
        let uniform = !matches!(k, TopologyKind::Ns3 | TopologyKind::Wan);
        let wan = k == TopologyKind::Wan;
        let source_routed = self.routing.is_some_and(Routing::source_routed);
        let jellyfish = k == TopologyKind::Jellyfish;
        let (clos3, rail) = (k == TopologyKind::Clos3, k == TopologyKind::Rail);
        let tiered = matches!(k, TopologyKind::LeafSpine | TopologyKind::Clos3);
        let keys = [
            ("k", self.k.is_some(), k == TopologyKind::FatTree),
            (
                "hosts",
                self.hosts.is_some(),
                matches!(k, TopologyKind::Star | TopologyKind::Jellyfish),
            ),
            ("switches", self.switches.is_some(), jellyfish),
            ("ports", self.ports.is_some(), jellyfish),
            ("seed", self.seed.is_some(), jellyfish),
            ("left", self.left.is_some(), k == TopologyKind::Dumbbell),
            ("right", self.right.is_some(), k == TopologyKind::Dumbbell),
            (
                "bottleneck_rate",
                self.bottleneck_rate.is_some(),
                k == TopologyKind::Dumbbell,
            ),
            ("leaves", self.leaves.is_some(), tiered),
            ("spines", self.spines.is_some(), tiered || rail),
            ("hosts_per_leaf", self.hosts_per_leaf.is_some(), tiered),
            ("pods", self.pods.is_some(), clos3),
            ("super_spines", self.super_spines.is_some(), clos3),
            ("groups", self.groups.is_some(), rail),
            ("servers", self.servers.is_some(), rail),
            ("rails", self.rails.is_some(), rail),
            (
                "spine_link_rate",
                self.spine_link_rate.is_some(),
                tiered || rail,
            ),
            ("link_rate", self.link_rate.is_some(), uniform),
            ("link_delay", self.link_delay.is_some(), uniform),
            ("file", self.file.is_some(), k == TopologyKind::Ns3),
            ("site", self.site.is_some(), wan),
            ("site_b", self.site_b.is_some(), wan),
            ("wan", self.wan.is_some(), wan),
            (
                "loss_rate",
                self.loss_rate.is_some(),
                k != TopologyKind::Ns3 && at == "topology",
            ),
            ("routing", self.routing.is_some(), !wan && at == "topology"),
            ("lossy_link", !self.lossy_link.is_empty(), at == "topology"),
            ("paths", self.paths.is_some(), source_routed),
        ];
        // A site's network is part of the wan's: these keys are the whole network's.
        if at != "topology" {
            let whole = [
                ("loss_rate", self.loss_rate.is_some()),
                ("routing", self.routing.is_some()),
                ("lossy_link", !self.lossy_link.is_empty()),
            ];
            if let Some((name, _)) = whole.iter().find(|(_, set)| *set) {
                return Err(invalid(
                    file,
                    &format!("{at}.{name}"),
                    SET,
                    &match *name {
                        "routing" => "a site takes no routing: a wan routes by shortest paths, \
                                      one routing for both sites"
                            .to_string(),
                        _ => format!(
                            "a site takes no {name}: it is the whole network's, set as \
                             topology.{name}"
                        ),
                    },
                ));
            }
        }
        // `paths` depends on the routing, not the kind: say so whatever the kind is.
        if self.paths.is_some() && !source_routed && !wan && at == "topology" {
            return Err(invalid(
                file,
                &format!("{at}.paths"),
                SET,
                &format!(
                    "applies only with {at}.routing = \"k-shortest\" or \"up-down\" (paths per \
                     pair of edge switches); routing is \"shortest\""
                ),
            ));
        }
        check_keys(file, (at, "kind"), kind, &keys)?;
        if uniform {
            self.link_rate.get_or_insert_with(default_rate);
            self.link_delay.get_or_insert_with(default_delay);
        }
        let key = |name: &str| format!("{at}.{name}");
        if source_routed {
            self.paths.get_or_insert(DEFAULT_PATHS);
        }
        match k {
            TopologyKind::FatTree => {
                self.k.get_or_insert(6);
            }
            TopologyKind::Star => require(file, &key("hosts"), kind, self.hosts.is_some())?,
            TopologyKind::Dumbbell => {
                require(file, &key("left"), kind, self.left.is_some())?;
                require(file, &key("right"), kind, self.right.is_some())?;
            }
            TopologyKind::LeafSpine => {
                self.leaves.get_or_insert(8);
                self.spines.get_or_insert(8);
                self.hosts_per_leaf.get_or_insert(16);
            }
            TopologyKind::Jellyfish => {
                self.switches.get_or_insert(80);
                self.ports.get_or_insert(8);
                self.hosts.get_or_insert(128);
            }
            TopologyKind::Ns3 => require(file, &key("file"), kind, self.file.is_some())?,
            TopologyKind::Wan => wan::normalize(self, file)?,
            TopologyKind::Clos3 => {
                self.pods.get_or_insert(4);
                self.leaves.get_or_insert(4);
                self.hosts_per_leaf.get_or_insert(8);
                self.spines.get_or_insert(4);
                self.super_spines.get_or_insert(4);
            }
            TopologyKind::Rail => {
                self.groups.get_or_insert(2);
                self.servers.get_or_insert(8);
                self.rails.get_or_insert(8);
                self.spines.get_or_insert(8);
            }
        }
        Ok(())
    }
}

/// Paths per edge-switch pair under k-shortest (and up-down) routing: Eunomia's Jellyfish
/// (§5.3) and Singla et al.'s.
const DEFAULT_PATHS: u32 = 8;

/// The network the section describes, each count checked first so an error names its key,
/// and which of its links lose packets; `seed`, the scenario's, draws a random graph unless
/// the section gives its own.
pub(super) fn build(
    tp: &TopologySection,
    file: &str,
    base_dir: &Path,
    seed: u64,
) -> Result<(Topology, LinkLoss), ScenarioError> {
    if tp.kind == Some(TopologyKind::Ns3) {
        let (topology, rates) = ns3_file(tp, "topology", file, base_dir)?;
        let topology = routed(tp, file, topology)?;
        let mut loss = LinkLoss::per_link(&topology, &rates);
        lossy_links(tp, file, &topology, &mut loss)?;
        return Ok((topology, loss));
    }
    let topology = routed(tp, file, network(tp, "topology", file, base_dir, seed)?)?;
    let rate = tp.loss_rate.unwrap_or(0.0);
    if !(0.0..1.0).contains(&rate) {
        return Err(invalid(
            file,
            "topology.loss_rate",
            &super::real(rate),
            "a probability in [0, 1): the share of packets each link loses on the wire",
        ));
    }
    let mut loss = LinkLoss::uniform(&topology, rate);
    lossy_links(tp, file, &topology, &mut loss)?;
    Ok((topology, loss))
}

/// Applies `[[topology.lossy_link]]` to `loss`.
fn lossy_links(
    tp: &TopologySection,
    file: &str,
    topology: &Topology,
    loss: &mut LinkLoss,
) -> Result<(), ScenarioError> {
    // The link each entry names (by its lower port), and the entry that named it first.
    let mut seen: Vec<(crate::ids::PortId, usize)> = Vec::new();
    for (i, l) in tp.lossy_link.iter().enumerate() {
        let key = |name: &str| format!("topology.lossy_link[{i}].{name}");
        if !(0.0..1.0).contains(&l.rate) {
            return Err(invalid(
                file,
                &key("rate"),
                &super::real(l.rate),
                "a probability in [0, 1): the share of packets the link loses on the wire",
            ));
        }
        let [a, b] = l.nodes.map(crate::ids::NodeId);
        let nodes = topology.node_count();
        let port = (a.index() < nodes && b.index() < nodes)
            .then(|| {
                let ports = topology.ports();
                (topology.node_ports(a)).find(|&p| ports[ports[p as usize].peer.index()].node == b)
            })
            .flatten();
        let Some(p) = port.map(crate::ids::PortId) else {
            return Err(invalid(
                file,
                &key("nodes"),
                &format!("{:?}", l.nodes),
                &format!("two linked nodes of the topology (ids 0 to {})", nodes - 1),
            ));
        };
        let link = p.min(topology.ports()[p.index()].peer);
        if let Some(&(_, first)) = seen.iter().find(|(l, _)| *l == link) {
            // One rate per link: which of two would win is no choice to leave to the order.
            return Err(invalid(
                file,
                &key("nodes"),
                &format!("{:?}", l.nodes),
                &format!(
                    "a link no other entry names: topology.lossy_link[{first}] names it too \
                     ({:?}); give each link one rate",
                    tp.lossy_link[first].nodes
                ),
            ));
        }
        seen.push((link, i));
        loss.set(topology, p, l.rate);
        loss.set(topology, topology.ports()[p.index()].peer, l.rate);
    }
    Ok(())
}

/// `topology` with the section's `routing`.
fn routed(tp: &TopologySection, file: &str, topology: Topology) -> Result<Topology, ScenarioError> {
    let routing = tp.routing.unwrap_or_default();
    if !routing.source_routed() {
        return Ok(topology);
    }
    let k = tp.paths.unwrap_or(DEFAULT_PATHS);
    if !(1..=MAX_PATHS as u32).contains(&k) {
        return Err(invalid(
            file,
            "topology.paths",
            &k.to_string(),
            &format!("between 1 and {MAX_PATHS} paths per pair of edge switches"),
        ));
    }
    let routed = match routing {
        Routing::UpDown => topology.with_up_down_paths(k as usize),
        _ => topology.with_k_shortest_paths(k as usize),
    };
    let value = format!("\"{}\"", routing.name());
    routed.map_err(|e| invalid(file, "topology.routing", &value, &e.to_string()))
}

/// The longest a uniform link's propagation may be: 1 s, as a wan's long-haul link (light
/// crosses 200 000 km of fibre in it).
const MAX_LINK_DELAY: Duration = Duration::from_ms(1000);

/// [`crate::topology::MAX_SWITCH_PORTS`], as the keys count.
const MAX_PORTS: u32 = crate::topology::MAX_SWITCH_PORTS as u32;

/// The network of the table at `at` (`topology`, or a wan's `topology.site`).
fn network(
    tp: &TopologySection,
    at: &str,
    file: &str,
    base_dir: &Path,
    seed: u64,
) -> Result<Topology, ScenarioError> {
    let key = |name: &str| format!("{at}.{name}");
    // Read by the kinds whose links are all alike, before their own keys.
    let uniform = || -> Result<(Bandwidth, Duration), ScenarioError> {
        let rate = tp.link_rate.as_deref().unwrap_or("40Gbps");
        let delay = tp.link_delay.as_deref().unwrap_or("2us");
        Ok((
            link_rate(file, &key("link_rate"), rate)?,
            duration_in(
                file,
                &key("link_delay"),
                delay,
                (Duration::ZERO, "a link of no length"),
                Some((
                    MAX_LINK_DELAY,
                    "a long-haul link's; use kind = \"wan\" for one",
                )),
            )?,
        ))
    };
    Ok(match tp.kind.unwrap_or_default() {
        TopologyKind::Ns3 => ns3_file(tp, at, file, base_dir)?.0,
        TopologyKind::FatTree => {
            let (rate, delay) = uniform()?;
            let k = tp.k.unwrap_or(6);
            Topology::fat_tree(k, rate, delay)
                .map_err(|e| invalid(file, &key("k"), &k.to_string(), &e.to_string()))?
        }
        TopologyKind::Star => {
            let (rate, delay) = uniform()?;
            let hosts = tp.hosts.unwrap_or(0);
            if !(2..MAX_PORTS).contains(&hosts) {
                return Err(invalid(
                    file,
                    &key("hosts"),
                    &hosts.to_string(),
                    &format!(
                        "between 2 and {} (a switch has at most {MAX_PORTS} ports)",
                        MAX_PORTS - 1
                    ),
                ));
            }
            Topology::star(hosts, rate, delay)
                .map_err(|e| invalid(file, &key("hosts"), &hosts.to_string(), &e.to_string()))?
        }
        TopologyKind::Dumbbell => {
            let (rate, delay) = uniform()?;
            let bottleneck = match &tp.bottleneck_rate {
                Some(b) => link_rate(file, &key("bottleneck_rate"), b)?,
                None => rate,
            };
            let (left, right) = (tp.left.unwrap_or(0), tp.right.unwrap_or(0));
            for (name, n) in [("left", left), ("right", right)] {
                if !(1..MAX_PORTS).contains(&n) {
                    return Err(invalid(
                        file,
                        &key(name),
                        &n.to_string(),
                        &format!(
                            "between 1 and {} (a switch has at most {MAX_PORTS} ports)",
                            MAX_PORTS - 1
                        ),
                    ));
                }
            }
            Topology::dumbbell(left, right, rate, bottleneck, delay)
                .map_err(|e| invalid(file, at, "dumbbell", &e.to_string()))?
        }
        TopologyKind::LeafSpine => {
            let (rate, delay) = uniform()?;
            leaf_spine(tp, at, file, rate, delay)?
        }
        TopologyKind::Jellyfish => {
            let link = uniform()?;
            jellyfish(tp, at, file, link, seed)?
        }
        // Its sites are not wans (`wan::normalize`), so this recurses once.
        TopologyKind::Wan => wan::build(tp, file, base_dir, seed)?,
        TopologyKind::Clos3 => {
            let links = clos_links(tp, at, file, uniform()?)?;
            clos3(tp, at, file, links)?
        }
        TopologyKind::Rail => {
            let links = clos_links(tp, at, file, uniform()?)?;
            rail(tp, at, file, links)?
        }
    })
}

/// The links of a clos3 or rail fabric: `link_rate` to the hosts, `spine_link_rate` (default
/// the same) between switches.
fn clos_links(
    tp: &TopologySection,
    at: &str,
    file: &str,
    (host, delay): (Bandwidth, Duration),
) -> Result<ClosLinks, ScenarioError> {
    let fabric = match &tp.spine_link_rate {
        Some(r) => link_rate(file, &format!("{at}.spine_link_rate"), r)?,
        None => host,
    };
    Ok(ClosLinks {
        host,
        fabric,
        delay,
    })
}

/// One bound of a fabric's keys: (key, value, whether it holds, what is allowed).
type Check = (&'static str, u32, bool, String);

/// The first of `checks` that fails, as the error naming its key.
fn first_failed(file: &str, at: &str, checks: &[Check]) -> Result<(), ScenarioError> {
    match checks.iter().find(|c| !c.2) {
        Some((name, value, _, allowed)) => Err(invalid(
            file,
            &format!("{at}.{name}"),
            &value.to_string(),
            allowed,
        )),
        None => Ok(()),
    }
}

/// Builds `kind = "clos3"` at `at`, each switch's radix checked against the key most likely to
/// change: a super-spine's against `pods`, a leaf's against `spines`, a spine's against
/// `leaves`.
fn clos3(
    tp: &TopologySection,
    at: &str,
    file: &str,
    links: ClosLinks,
) -> Result<Topology, ScenarioError> {
    let c = Clos3 {
        pods: tp.pods.unwrap_or(4),
        leaves: tp.leaves.unwrap_or(4),
        hosts_per_leaf: tp.hosts_per_leaf.unwrap_or(8),
        spines: tp.spines.unwrap_or(4),
        super_spines: tp.super_spines.unwrap_or(4),
    };
    let max = MAX_PORTS;
    let (per_leaf, up) = (c.hosts_per_leaf, c.super_spines);
    let hosts = u64::from(c.pods) * u64::from(c.leaves) * u64::from(per_leaf);
    first_failed(
        file,
        at,
        &[
            (
                "pods",
                c.pods,
                (1..=max).contains(&c.pods),
                format!("between 1 and {max} (a super-spine has one port per pod)"),
            ),
            (
                "hosts_per_leaf",
                per_leaf,
                (1..max).contains(&per_leaf),
                format!("between 1 and {} (a leaf has at most {max} ports)", max - 1),
            ),
            (
                "spines",
                c.spines,
                c.spines >= 1 && c.spines.saturating_add(per_leaf) <= max,
                format!(
                    "between 1 and {} (a leaf has hosts_per_leaf = {per_leaf} host ports plus one port per spine of its pod, at most {max} ports)",
                    max.saturating_sub(per_leaf)
                ),
            ),
            (
                "super_spines",
                up,
                (1..max).contains(&up),
                format!("between 1 and {} (a spine has at most {max} ports)", max - 1),
            ),
            (
                "leaves",
                c.leaves,
                c.leaves >= 1 && c.leaves.saturating_add(up) <= max,
                format!(
                    "between 1 and {} (a spine has one port per leaf of its pod plus super_spines = {up} up, at most {max} ports)",
                    max.saturating_sub(up)
                ),
            ),
            (
                "hosts_per_leaf",
                per_leaf,
                hosts >= 2,
                "at least 2 hosts in all (pods x leaves x hosts_per_leaf)".into(),
            ),
        ],
    )?;
    Topology::clos3(c, links).map_err(|e| invalid(file, at, "clos3", &e.to_string()))
}

/// Builds `kind = "rail"` at `at`: a spine's radix checked against `groups`, a rail leaf's
/// against `spines`.
fn rail(
    tp: &TopologySection,
    at: &str,
    file: &str,
    links: ClosLinks,
) -> Result<Topology, ScenarioError> {
    let r = Rail {
        groups: tp.groups.unwrap_or(2),
        servers: tp.servers.unwrap_or(8),
        rails: tp.rails.unwrap_or(8),
        spines: tp.spines.unwrap_or(8),
    };
    let max = MAX_PORTS;
    let hosts = u64::from(r.groups) * u64::from(r.servers) * u64::from(r.rails);
    first_failed(
        file,
        at,
        &[
            (
                "rails",
                r.rails,
                (1..=max).contains(&r.rails),
                format!("between 1 and {max} (a spine has one port per rail leaf)"),
            ),
            (
                "groups",
                r.groups,
                r.groups >= 1 && u64::from(r.groups) * u64::from(r.rails) <= u64::from(max),
                format!(
                    "between 1 and {} (a spine has one port per rail leaf, groups x rails = \
                     groups x {}, at most {max} ports)",
                    max / r.rails.max(1),
                    r.rails
                ),
            ),
            (
                "servers",
                r.servers,
                (1..max).contains(&r.servers),
                format!(
                    "between 1 and {} (a rail leaf has at most {max} ports)",
                    max - 1
                ),
            ),
            (
                "spines",
                r.spines,
                r.spines >= 1 && r.spines.saturating_add(r.servers) <= max,
                format!(
                    "between 1 and {} (a rail leaf has servers = {} host ports plus one port \
                     per spine, at most {max} ports)",
                    max.saturating_sub(r.servers),
                    r.servers
                ),
            ),
            (
                "servers",
                r.servers,
                hosts >= 2,
                "at least 2 hosts in all (groups x servers x rails)".into(),
            ),
        ],
    )?;
    Topology::rail(r, links).map_err(|e| invalid(file, at, "rail", &e.to_string()))
}

/// Builds `kind = "jellyfish"` at `at`. Its parameters are checked together (hosts against
/// switches and ports), so an error names the key most likely to change: `ports` when the
/// switches have too few or too many, `hosts` or `switches` for their own bounds.
fn jellyfish(
    tp: &TopologySection,
    at: &str,
    file: &str,
    link: (Bandwidth, Duration),
    seed: u64,
) -> Result<Topology, ScenarioError> {
    let key = |name: &str| format!("{at}.{name}");
    let (switches, ports, hosts) = (
        tp.switches.unwrap_or(80),
        tp.ports.unwrap_or(8),
        tp.hosts.unwrap_or(128),
    );
    // Bounds the work and memory of one draw; the papers' networks have at most a few hundred.
    const MAX_SWITCHES: u32 = 4096;
    let blame = if !(3..=MAX_SWITCHES).contains(&switches) {
        Some(("switches", switches))
    } else if hosts < 2 {
        Some(("hosts", hosts))
    } else {
        None
    };
    if let Some((name, value)) = blame {
        let allowed = match name {
            "switches" => format!("between 3 and {MAX_SWITCHES}"),
            _ => "at least 2".to_string(),
        };
        return Err(invalid(file, &key(name), &value.to_string(), &allowed));
    }
    let seed = tp.seed.unwrap_or(seed);
    Topology::jellyfish(switches, ports, hosts, link, seed).map_err(|e| {
        let (name, value) = match e {
            TopologyError::JellyfishDisconnected { .. } => ("seed", seed),
            _ => ("ports", u64::from(ports)),
        };
        invalid(file, &key(name), &value.to_string(), &e.to_string())
    })
}

/// A warning when a network read from an ns-3 topology file joins two nodes by more than one
/// link: irn forwards over each as equal-cost paths, whatever their rates, where ns-3's RDMA
/// models keep one interface per neighbour (`nbr2if`, the last link given), so the same file
/// would be two different networks.
pub(super) fn parallel_links_warning(tp: &TopologySection, topology: &Topology) -> Option<String> {
    let from_file = [Some(tp), tp.site.as_deref(), tp.site_b.as_deref()]
        .into_iter()
        .flatten()
        .any(|t| t.file.is_some());
    if !from_file {
        return None;
    }
    let mut pairs: Vec<(u32, u32, usize)> = (topology.links().iter().enumerate())
        .map(|(i, l)| (l.a.0.min(l.b.0), l.a.0.max(l.b.0), i))
        .collect();
    pairs.sort_unstable();
    let repeats: Vec<(u32, u32, usize, usize)> = (pairs.windows(2))
        .filter(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1))
        .map(|w| (w[0].0, w[0].1, w[0].2, w[1].2))
        .collect();
    let &(a, b, first, second) = repeats.first()?;
    Some(format!(
        "topology.file: links {} and {} of the file both join nodes {a} and {b} ({} such \
         repeat{} in all): irn forwards over each of them, while ns-3's RDMA models keep one \
         interface per neighbour (the last link given), so ns-3 would run this file as another \
         network; give each pair of nodes one link to compare the two",
        first + 1,
        second + 1,
        repeats.len(),
        if repeats.len() == 1 { "" } else { "s" },
    ))
}

/// The ns-3 topology file of the table at `at`, and its links' error rates.
fn ns3_file(
    tp: &TopologySection,
    at: &str,
    file: &str,
    base_dir: &Path,
) -> Result<(Topology, Vec<f64>), ScenarioError> {
    let name = tp.file.as_deref().unwrap_or("");
    crate::topology::ns3::read_topology_with_loss(&resolve(base_dir, name)).map_err(|e| {
        invalid(
            file,
            &format!("{at}.file"),
            &format!("{name:?}"),
            &e.to_string(),
        )
    })
}

/// Builds `kind = "leaf-spine"` at `at`, checking each count against the switch port limit
/// first so the error names the key to change.
fn leaf_spine(
    tp: &TopologySection,
    at: &str,
    file: &str,
    rate: Bandwidth,
    delay: Duration,
) -> Result<Topology, ScenarioError> {
    let key = |name: &str| format!("{at}.{name}");
    let spine_rate = match &tp.spine_link_rate {
        Some(r) => link_rate(file, &key("spine_link_rate"), r)?,
        None => rate,
    };
    let leaves = tp.leaves.unwrap_or(8);
    let spines = tp.spines.unwrap_or(8);
    let per_leaf = tp.hosts_per_leaf.unwrap_or(16);
    let max = crate::topology::MAX_SWITCH_PORTS as u32;
    let checks = [
        (
            "leaves",
            leaves,
            (1..=max).contains(&leaves),
            format!("between 1 and {max} (a spine has one port per leaf, at most {max} ports)"),
        ),
        (
            "hosts_per_leaf",
            per_leaf,
            (1..max).contains(&per_leaf),
            format!("between 1 and {} (a leaf has at most {max} ports)", max - 1),
        ),
        (
            "spines",
            spines,
            spines >= 1 && spines.saturating_add(per_leaf) <= max,
            format!(
                "between 1 and {} (a leaf has hosts_per_leaf = {per_leaf} host ports plus one \
                 port per spine, at most {max} ports)",
                max.saturating_sub(per_leaf)
            ),
        ),
        (
            "hosts_per_leaf",
            per_leaf,
            u64::from(leaves) * u64::from(per_leaf) >= 2,
            format!("at least 2 with leaves = {leaves} (the network needs at least 2 hosts)"),
        ),
    ];
    if let Some((name, value, _, allowed)) = checks.iter().find(|c| !c.2) {
        return Err(invalid(file, &key(name), &value.to_string(), allowed));
    }
    Topology::leaf_spine(leaves, spines, per_leaf, rate, spine_rate, delay)
        .map_err(|e| invalid(file, at, "leaf-spine", &e.to_string()))
}

#[cfg(test)]
mod tests {
    use crate::ids::{HostIdx, NodeId};
    use crate::scenario::tests::one;

    /// Each `(keys, want)`: `[topology] kind = kind` with `keys` is refused with an error
    /// containing `want`.
    fn assert_refused(kind: &str, cases: &[(&str, &str)]) {
        for (keys, want) in cases {
            let err = one(&format!("[topology]\nkind = \"{kind}\"\n{keys}\n"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{keys}: {err}");
        }
    }

    /// An ns-3 topology file joining two nodes twice is run by irn over both links, by ns-3
    /// over one: warned of, naming the links; a file without repeats is not.
    #[test]
    fn repeated_links_of_an_ns3_file_are_warned_of() {
        let dir = std::env::temp_dir().join(format!("irn-parallel-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let once = "4 2 3\n1 2\n0 1 100Gbps 1us 0\n1 2 100Gbps 1us 0\n2 3 100Gbps 1us 0\n";
        let twice = format!("{}2 1 25Gbps 1us 0\n", once.replacen("4 2 3", "4 2 4", 1));
        let warnings = |topology: &str| {
            std::fs::write(dir.join("t.txt"), topology).unwrap();
            let text = "[topology]\nfile = \"t.txt\"\n[workload]\nduration = \"10us\"\n";
            let s = crate::scenario::parse(text, "s.toml", &dir, &[]).unwrap();
            s.runs[0].warnings.join("\n")
        };
        assert!(!warnings(once).contains("both join"));
        let w = warnings(&twice);
        assert!(
            w.contains("links 2 and 4 of the file both join nodes 1 and 2 (1 such repeat in all)"),
            "{w}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Link rates lie in [1 Mb/s, 10 Tb/s] and a uniform link's delay is at most 1 s, so no
    /// derived value (a BDP cap, a timeout) is blamed for an absurd link.
    #[test]
    fn link_rates_and_delays_have_a_range() {
        let rates = "between 1Mbps and 10Tbps (1 Mb/s is slower than any RDMA network";
        for (keys, want) in [
            (
                "link_rate = \"999999Tbps\"",
                format!("topology.link_rate = \"999999Tbps\": {rates}"),
            ),
            (
                "link_rate = \"1bps\"",
                format!("topology.link_rate = \"1bps\": {rates}"),
            ),
            (
                "kind = \"dumbbell\"\nleft = 2\nright = 2\nbottleneck_rate = \"11Tbps\"",
                format!("topology.bottleneck_rate = \"11Tbps\": {rates}"),
            ),
            (
                "kind = \"leaf-spine\"\nspine_link_rate = \"999kbps\"",
                format!("topology.spine_link_rate = \"999kbps\": {rates}"),
            ),
            (
                "link_delay = \"1.000001s\"",
                "topology.link_delay = \"1.000001s\": between 0ps (a link of no length) and 1s (a \
                 long-haul link's; use kind = \"wan\" for one)"
                    .to_string(),
            ),
        ] {
            let err = one(&format!("[topology]\n{keys}\n"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(&want), "{keys}: {err}");
        }
        assert!(one("[topology]\nlink_rate = \"10Tbps\"\n").is_ok());
        // A link within its range whose path holds too many packets is blamed on the
        // network, not on a derived key.
        let err = one("[topology]\nlink_delay = \"1s\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "t.toml: topology = 40Gbps × 12s round trip: the longest path holds 55248618 \
                 full frames in flight, more than the 4194304 a transport tracks"
            ),
            "{err}"
        );
    }

    #[test]
    fn leaf_spine_keys_defaults_and_errors() {
        let t = one("[topology]\nkind = \"leaf-spine\"\nlink_rate = \"100Gbps\"\n")
            .unwrap()
            .config
            .topology;
        assert_eq!((t.hosts().len(), t.switches().len()), (128, 16));
        let t = one(
            "[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 3\nhosts_per_leaf = 4\n\
             spine_link_rate = \"100Gbps\"\n",
        )
        .unwrap()
        .config
        .topology;
        assert_eq!((t.hosts().len(), t.switches().len()), (8, 5));
        // Leaf 0 (node 8): 4 host ports at link_rate's default, then 3 spine ports.
        let rates: Vec<_> = t
            .node_ports(NodeId(8))
            .map(|p| t.ports()[p as usize].rate.to_string())
            .collect();
        assert_eq!(
            rates,
            ["40Gbps"; 4]
                .into_iter()
                .chain(["100Gbps"; 3])
                .collect::<Vec<_>>()
        );

        let cases = [
            (
                "leaves = 0",
                "t.toml: topology.leaves = 0: between 1 and 512",
            ),
            (
                "leaves = 513",
                "topology.leaves = 513: between 1 and 512 (a spine has one port per leaf",
            ),
            ("spines = 0", "topology.spines = 0: between 1 and 496"),
            (
                "spines = 497",
                "topology.spines = 497: between 1 and 496 (a leaf has hosts_per_leaf = 16 host ports",
            ),
            (
                "hosts_per_leaf = 0",
                "topology.hosts_per_leaf = 0: between 1 and 511",
            ),
            (
                "hosts_per_leaf = 512",
                "topology.hosts_per_leaf = 512: between 1 and 511",
            ),
            (
                "leaves = 1\nhosts_per_leaf = 1",
                "topology.hosts_per_leaf = 1: at least 2 with leaves = 1",
            ),
            (
                "spine_link_rate = \"fast\"",
                "t.toml: topology.spine_link_rate = \"fast\"",
            ),
            (
                "k = 4",
                "topology.k is set: does not apply to topology.kind = \"leaf-spine\"",
            ),
        ];
        assert_refused("leaf-spine", &cases);
        for key in [
            "leaves = 2",
            "spines = 2",
            "hosts_per_leaf = 2",
            "spine_link_rate = \"1Gbps\"",
        ] {
            let err = one(&format!("[topology]\nkind = \"fat-tree\"\n{key}\n"))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("does not apply to topology.kind = \"fat-tree\""),
                "{key}: {err}"
            );
        }
    }

    #[test]
    fn jellyfish_keys_defaults_and_errors() {
        // A few flows start on a small network only over a longer run than `one`'s.
        let long = |text: &str| {
            let set = ["workload.duration=\"1ms\"".to_string()];
            let s = crate::scenario::parse(text, "t.toml", std::path::Path::new("."), &set);
            s.unwrap().runs.remove(0).config.topology.links().to_vec()
        };
        let t = one("[topology]\nkind = \"jellyfish\"\n")
            .unwrap()
            .config
            .topology;
        assert_eq!((t.hosts().len(), t.switches().len()), (128, 80));
        let links = |seed: &str| {
            let text = format!("seed = {seed}\n[topology]\nkind = \"jellyfish\"\nswitches = 10\nports = 5\nhosts = 12\n");
            long(&text)
        };
        // The scenario's seed draws the graph; another seed another graph.
        assert_ne!(links("1"), links("2"));
        let own = |seed: &str| {
            let text = format!("seed = {seed}\n[topology]\nkind = \"jellyfish\"\nswitches = 10\nports = 5\nhosts = 12\nseed = 9\n");
            long(&text)
        };
        // `topology.seed` keeps one graph across scenario seeds.
        assert_eq!(own("1"), own("2"));

        let cases = [
            (
                "switches = 2",
                "t.toml: topology.switches = 2: between 3 and 4096",
            ),
            ("hosts = 1", "topology.hosts = 1: at least 2"),
            (
                "ports = 513",
                "topology.ports = 513: jellyfish: 513 ports: at most 512",
            ),
            (
                "switches = 10\nhosts = 61",
                "topology.ports = 8: jellyfish: 61 hosts on 10 switches put 7 on a switch, \
                 leaving 1 of its 8 ports",
            ),
            (
                "switches = 10\nports = 5\nhosts = 31",
                "topology.ports = 5: jellyfish: 31 hosts on 10 switches put 4 on a switch, \
                 leaving 1 of its 5 ports for other switches; at least 2 are needed",
            ),
            (
                "switches = 4\nports = 8\nhosts = 4",
                "topology.ports = 8: jellyfish: a switch with 1 hosts has 7 ports for other \
                 switches, but there are only 3 other switches",
            ),
            (
                "k = 4",
                "topology.k is set: does not apply to topology.kind = \"jellyfish\"",
            ),
        ];
        assert_refused("jellyfish", &cases);
        for key in ["switches = 8", "ports = 8", "seed = 3"] {
            let err = one(&format!("[topology]\nkind = \"fat-tree\"\n{key}\n"))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("does not apply to topology.kind = \"fat-tree\""),
                "{key}: {err}"
            );
        }
        let err = one("[topology]\nkind = \"wan\"\n[topology.site]\nkind = \"jellyfish\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("topology.site.kind = \"jellyfish\""), "{err}");
    }

    #[test]
    fn k_shortest_routing_keys_defaults_and_errors() {
        let sc = one(
            "[topology]\nkind = \"jellyfish\"\nswitches = 12\nhosts = 12\nports = 4\n\
                      routing = \"k-shortest\"\n[load_balancing]\nkind = \"fksp\"\n",
        )
        .unwrap();
        assert!(sc.config.topology.source_routed());
        assert_eq!(sc.resolved.topology.paths, Some(8));
        let cases = [
            (
                "routing = \"k-shortest\"\npaths = 0",
                "topology.paths = 0: between 1 and 64 paths",
            ),
            (
                "routing = \"k-shortest\"\npaths = 65",
                "topology.paths = 65: between 1 and 64 paths",
            ),
            (
                "paths = 4",
                "topology.paths is set: applies only with topology.routing = \"k-shortest\"",
            ),
            (
                "routing = \"shortest-ish\"",
                "unknown variant `shortest-ish`",
            ),
            (
                "[load_balancing]\nkind = \"fksp\"",
                "load_balancing.kind = \"fksp\": fksp picks one of a flow's k shortest paths",
            ),
        ];
        assert_refused("fat-tree", &cases);
        let err = one("[topology]\nkind = \"wan\"\nrouting = \"k-shortest\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("topology.routing is set: does not apply"),
            "{err}"
        );
    }

    #[test]
    fn up_down_routing_keys_and_errors() {
        let sc = one(
            "[topology]\nkind = \"jellyfish\"\nswitches = 12\nhosts = 12\nports = 4\n\
                      routing = \"up-down\"\npaths = 3\n[load_balancing]\nkind = \"fksp\"\n",
        )
        .unwrap();
        let t = &sc.config.topology;
        assert!(t.source_routed());
        assert!((0..12)
            .all(|a| (1..=3).contains(&t.route_starts(a, HostIdx((a as u32 + 1) % 12)).len())));
        let cases = [
            (
                "routing = \"up-down\"\npaths = 65",
                "topology.paths = 65: between 1 and 64 paths",
            ),
            (
                "paths = 4",
                "applies only with topology.routing = \"k-shortest\" or \"up-down\"",
            ),
            ("routing = \"updown\"", "`up-down`"),
            (
                "routing = \"up-down\"\n[switch]\nmodel = \"shared-buffer\"\ndeflection = \"dibs\"",
                "switch.deflection = \"dibs\": not with topology.routing = \"up-down\"",
            ),
            (
                "routing = \"up-down\"\n[load_balancing]\nkind = \"conweave\"",
                "not with topology.routing = \"k-shortest\" or \"up-down\"",
            ),
        ];
        assert_refused("fat-tree", &cases);
    }

    #[test]
    fn lossy_link_keys_and_errors() {
        use crate::ids::PortId;
        // Dumbbell: hosts 0, 1 on switch 4, hosts 2, 3 on switch 5 (nodes 0-3 hosts).
        let base = "[topology]\nkind = \"dumbbell\"\nleft = 2\nright = 2\nloss_rate = 0.001\n";
        let run = one(&format!(
            "{base}[[topology.lossy_link]]\nnodes = [5, 4]\nrate = 0.25\n"
        ))
        .unwrap();
        let t = &run.config.topology;
        let ports = t.ports();
        for p in 0..ports.len() as u32 {
            let (a, b) = (
                ports[p as usize].node.0,
                ports[ports[p as usize].peer.index()].node.0,
            );
            let want = if (a.min(b), a.max(b)) == (4, 5) {
                0.25
            } else {
                0.001
            };
            assert_eq!(
                run.config.link_loss.rate(PortId(p)),
                want,
                "port {p}: {a}-{b}"
            );
        }
        for (entry, want) in [
            (
                "nodes = [4, 5]\nrate = 1.0",
                "topology.lossy_link[0].rate = 1: a probability",
            ),
            (
                "nodes = [0, 1]\nrate = 0.1",
                "topology.lossy_link[0].nodes = [0, 1]: two linked nodes",
            ),
            (
                "nodes = [4, 60]\nrate = 0.1",
                "topology.lossy_link[0].nodes = [4, 60]",
            ),
            ("nodes = [4, 5]", "missing field `rate`"),
            (
                "nodes = [4, 5]\nrate = 0.1\n[[topology.lossy_link]]\nnodes = [5, 4]\nrate = 0.5",
                "topology.lossy_link[1].nodes = [5, 4]: a link no other entry names: \
                 topology.lossy_link[0] names it too ([4, 5]); give each link one rate",
            ),
        ] {
            let err = one(&format!("{base}[[topology.lossy_link]]\n{entry}\n"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{entry}: {err}");
        }
    }
}
