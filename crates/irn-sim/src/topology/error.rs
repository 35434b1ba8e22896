//! Why a topology was rejected.
//!
//! A topology is validated once, when it is built, so that the simulator can index its tables
//! without checks on the hot path. Every message names the offending value and what is allowed,
//! because these errors reach the user through scenario files.

use irn_core::time::Bandwidth;

use super::WanSite;
use crate::ids::NodeId;

/// The most ports one switch may have: port numbers on a node are 16-bit, and the switch models
/// keep per-port sets of this many bits (paused inputs, inputs to resume). An input-queued
/// switch holds one virtual output queue per (input, output): 8 bytes times the square of its
/// ports, 2 MiB at 512 ports.
pub const MAX_SWITCH_PORTS: usize = 512;

/// A topology that cannot be simulated, and why.
#[derive(thiserror::Error, Debug, Clone, PartialEq)]
pub enum TopologyError {
    /// Traffic needs a sender and a different receiver.
    #[error("the topology has {hosts} host(s); at least 2 hosts are needed")]
    TooFewHosts { hosts: usize },

    /// A link endpoint is not a node of the topology.
    #[error(
        "link {link} names node {node}, but the topology has {nodes} nodes (ids 0 to {})",
        nodes.saturating_sub(1)
    )]
    NodeOutOfRange {
        link: usize,
        node: NodeId,
        nodes: usize,
    },

    /// A link from a node to itself carries no traffic and would confuse routing.
    #[error("link {link} joins node {node} to itself; a link must join two different nodes")]
    SelfLoop { link: usize, node: NodeId },

    /// Serialization time at rate zero is infinite.
    #[error(
        "link {link} (node {a} - node {b}) has rate {rate}; a link rate must be greater than zero"
    )]
    ZeroRate {
        link: usize,
        a: NodeId,
        b: NodeId,
        rate: Bandwidth,
    },

    /// The NIC model has exactly one port per host (MODEL.md §3), and hosts never forward.
    #[error("host {host} has {links} links; a host has exactly one NIC port")]
    HostLinks { host: NodeId, links: usize },

    /// See [`MAX_SWITCH_PORTS`].
    #[error("switch {switch} has {ports} ports; a switch has at most {MAX_SWITCH_PORTS} ports")]
    TooManyPorts { switch: NodeId, ports: usize },

    /// Some flow could never be delivered.
    #[error(
        "host {from} cannot reach host {to}: the network is disconnected; \
         every host must reach every other host"
    )]
    Disconnected { from: NodeId, to: NodeId },

    /// Jellyfish parameters no random graph can meet, or no connected graph was drawn.
    #[error("jellyfish: {why}")]
    Jellyfish { why: String },

    /// Every Jellyfish graph drawn from the seed was disconnected.
    #[error(
        "jellyfish: no connected graph in {attempts} draws from this seed; try another seed, \
         or more ports per switch (with 2 switch-facing ports a graph is a union of cycles)"
    )]
    JellyfishDisconnected { attempts: u32 },

    /// A switch outside the hosts' component would have no route to anywhere.
    #[error(
        "switch {switch} cannot reach host {host}: every switch must be connected to the hosts"
    )]
    UnreachableSwitch { switch: NodeId, host: NodeId },

    /// Al-Fares fat-trees split each switch's ports half up, half down.
    #[error("fat-tree k = {k}: k must be even and at least 2")]
    FatTreeK { k: u32 },

    /// A fat-tree switch has k ports.
    #[error(
        "fat-tree k = {k}: k must be at most {MAX_SWITCH_PORTS} (a k-ary fat-tree's switches \
         have k ports)"
    )]
    FatTreeTooLarge { k: u32 },

    /// A three-tier Clos or a rail-optimized fabric needs every tier.
    #[error("{kind}: there must be at least 1 {what}")]
    TierEmpty {
        kind: &'static str,
        what: &'static str,
    },

    /// A leaf-spine needs every tier.
    #[error("leaf-spine: there must be at least 1 {what}")]
    LeafSpineEmpty { what: &'static str },

    /// Two sites with nothing between them are two networks.
    #[error("a wan needs at least 1 long-haul link between its border switches")]
    WanNoLinks,

    /// A [`Border::Switch`](super::Border::Switch) names a host or no node of its site.
    #[error("site {site}'s border must be one of the site's switches; node {node} is not")]
    WanBorderNotSwitch { site: WanSite, node: NodeId },

    /// The border switch holds its site's links and every long-haul link.
    #[error(
        "site {site}'s border switch would have {} ports ({site_ports} towards its site, \
         {links} long-haul); a switch has at most {MAX_SWITCH_PORTS} ports",
        site_ports + links
    )]
    WanBorderPorts {
        site: WanSite,
        site_ports: usize,
        links: usize,
    },

    /// A top-tier switch under a dedicated border needs one more port, to the border.
    #[error(
        "site {site}'s top-tier switch (node {switch} of the site) has {ports} ports already and \
         needs one more for its link to the site's border switch; a switch has at most \
         {MAX_SWITCH_PORTS} ports"
    )]
    WanTopTierFull {
        site: WanSite,
        switch: NodeId,
        ports: usize,
    },

    /// The routing table holds one 8-byte entry per (switch, switch with hosts).
    #[error(
        "routing needs {switches} switches x {tors} switches with hosts = {} entries of 8 bytes; \
         at most {} (2 GiB)",
        *switches as u64 * *tors as u64,
        super::routing::MAX_ENTRIES
    )]
    RoutingTooLarge { switches: usize, tors: usize },

    /// The routing table's equal-cost next hops would not fit.
    #[error(
        "routing keeps every switch's equal-cost next hops towards each of {tors} switches with \
         hosts: more than {at_least} of them; at most {} (1 GiB); use fewer switches with hosts \
         or fewer links per switch",
        super::routing::MAX_CANDIDATES
    )]
    RoutingCandidates { at_least: usize, tors: usize },

    /// The routing table's searches would take too long.
    #[error(
        "routing runs one breadth-first search per switch with hosts: {tors} searches over \
         {switches} switches and {links} switch-to-switch links, {steps} steps; at most {} \
         (about a minute on one core); use fewer switches with hosts or fewer links (a \
         fat-tree's routes are computed, at any size)",
        super::routing::MAX_SEARCH_STEPS
    )]
    RoutingTooSlow {
        tors: usize,
        switches: usize,
        links: u64,
        steps: u64,
    },

    /// Node and port ids are `u32`.
    #[error("the topology has {count} {what}; at most {} are supported", u32::MAX)]
    TooLarge { what: &'static str, count: usize },
}
