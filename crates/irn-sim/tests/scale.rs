//! AI-cluster scale: a 512-port switch, a k = 64 fat-tree (65,536 hosts), and the three-tier
//! Clos and rail-optimized fabrics. The big networks are built and routed, not simulated for
//! long, so the file runs in seconds.

use std::collections::BTreeMap;
use std::path::Path;

use irn_core::{Bandwidth, Duration};
use irn_sim::ids::{HostIdx, NodeId, PortId};
use irn_sim::scenario;
use irn_sim::series::{FlowSample, NicSample, PortSample, SeriesSink};
use irn_sim::topology::Topology;

/// PFC frames each port sent over a run, by port.
#[derive(Default)]
struct Pauses(BTreeMap<u32, u64>);

impl SeriesSink for Pauses {
    fn port(&mut self, s: &PortSample) {
        *self.0.entry(s.port).or_default() += s.pause_sent;
    }
    fn nic(&mut self, _: &NicSample) {}
    fn flow(&mut self, _: &FlowSample) {}
}

/// 511 hosts send to host 0 through one 512-port switch, RoCE over PFC: every input fills up
/// and pauses its host, and every flow finishes, its ACKs forwarded out of every other port.
#[test]
fn a_512_port_switch_forwards_to_and_pauses_every_port() {
    let text = r#"
[topology]
kind = "star"
hosts = 511
link_rate = "100Gbps"
link_delay = "1us"
[switch]
pfc = true
buffer = "60KB"
[transport]
kind = "roce"
[workload]
kind = "incast"
senders = 510
total = "51MB"
receiver = 0
[monitor]
interval = "50us"
[run]
drain_limit = "20ms"
"#;
    let sc = scenario::parse(text, "star.toml", Path::new("."), &[]).unwrap();
    let cfg = &sc.runs[0].config;
    let switch = cfg.topology.switches()[0];
    assert_eq!(cfg.topology.node_ports(switch).len(), 511);
    let mut pauses = Pauses::default();
    let s = irn_sim::run_monitored(cfg, &mut |_| {}, &mut pauses).summary;
    assert_eq!((s.flows_total, s.flows_incomplete), (510, 0));
    assert_eq!(s.ports_paused_at_end, None);
    // The switch's ports towards the 510 senders: each paused its host (its input filled).
    let ports = cfg.topology.node_ports(switch);
    let paused: Vec<u32> = (ports.clone())
        .filter(|p| pauses.0.get(p).copied().unwrap_or(0) > 0)
        .collect();
    assert_eq!(paused.len(), 510, "inputs that paused: {paused:?}");
    assert!(
        !paused.contains(&ports.start),
        "the receiver's port has nothing to pause"
    );
}

/// The same switch with a shared buffer: inputs above 64 pause too, and resume (several at
/// once when the pool drains) until nothing is left paused.
#[test]
fn a_512_port_shared_buffer_switch_pauses_and_resumes_high_inputs() {
    let text = r#"
[topology]
kind = "star"
hosts = 511
link_rate = "100Gbps"
link_delay = "1us"
[switch]
model = "shared-buffer"
buffer = "16MB"
pfc = true
[transport]
kind = "roce"
[workload]
kind = "incast"
senders = 510
total = "20MB"
receiver = 0
[run]
drain_limit = "20ms"
"#;
    let sc = scenario::parse(text, "star.toml", Path::new("."), &[]).unwrap();
    let s = irn_sim::run(&sc.runs[0].config, &mut |_| {}).summary;
    assert_eq!((s.flows_total, s.flows_incomplete), (510, 0));
    assert!(s.pause_frames >= 2 * 510, "{}", s.pause_frames);
    assert_eq!(s.ports_paused_at_end, None);
}

/// The nodes a lone packet visits from host `src` to host `dst`, first candidates all the way.
fn walk(t: &Topology, src: u32, dst: u32) -> Vec<NodeId> {
    let far = |p: PortId| t.ports()[t.ports()[p.index()].peer.index()].node;
    let mut p = t.host_port(HostIdx(src));
    let mut at = Vec::new();
    loop {
        let n = far(p);
        at.push(n);
        if n == t.host_node(HostIdx(dst)) {
            return at;
        }
        p = t.next_hops(n, HostIdx(dst))[0];
    }
}

/// k = 64: 65,536 hosts, 2,048 edge, 2,048 aggregation and 1,024 core switches. Host 0 (pod 0)
/// to the last host (pod 63) crosses edge 0, aggregation 0 of pod 0, core 0, aggregation 0 of
/// pod 63 and its last edge switch: 6 links, 5 switches, with 32 uplinks to choose from at
/// each of the first two switches. Past k = 64 alike (k = 80: 128,000 hosts).
#[test]
fn a_k64_fat_tree_routes_between_its_farthest_hosts() {
    for k in [64, 80] {
        let t = Topology::fat_tree(k, Bandwidth::from_gbps(100), Duration::from_us(1)).unwrap();
        let (hosts, edges, half) = (k * k * k / 4, k * k / 2, k / 2);
        let aggs = edges;
        assert_eq!(
            (t.hosts().len(), t.switches().len()),
            (hosts as usize, (edges + aggs + half * half) as usize)
        );
        let last = hosts - 1;
        let path = walk(&t, 0, last);
        let want = [
            hosts,                          // edge 0
            hosts + edges,                  // aggregation 0 of pod 0
            hosts + edges + aggs,           // core 0
            hosts + edges + (k - 1) * half, // aggregation 0 of the last pod
            hosts + edges - 1,              // the last edge switch
            last,
        ];
        assert_eq!(path, want.map(NodeId), "k = {k}");
        assert_eq!(t.path(HostIdx(0), HostIdx(last)).hops, 6);
        assert_eq!(
            t.next_hops(NodeId(hosts), HostIdx(last)).len(),
            half as usize
        );
        assert_eq!(
            t.next_hops(NodeId(hosts + edges), HostIdx(last)).len(),
            half as usize
        );
        assert_eq!(t.max_path_switches(), 5);
        assert_eq!(t.max_path_propagation(), Duration::from_us(6));
        // At k = 64 one entry per (switch, edge switch) would be 5,120 x 2,048 x 8 bytes, and
        // one per host 2.7 GB: a fat-tree's routes are computed.
        assert!(t.heap_bytes() < 150 << 20, "{} bytes", t.heap_bytes());
    }
}

/// A scenario's PFC run on `kind`'s fabric: flows finish, PFC paused, nothing left paused.
fn pfc_run_finishes(topology: &str, routing: &str) {
    let text = format!(
        r#"
seed = 1
[topology]
{topology}
link_rate = "100Gbps"
link_delay = "1us"
routing = "{routing}"
[switch]
model = "shared-buffer"
buffer = "300KB"
pfc = true
[transport]
kind = "roce"
[workload]
load = 0.7
duration = "100us"
[run]
drain_limit = "20ms"
"#
    );
    let sc = scenario::parse(&text, "t.toml", Path::new("."), &[]).unwrap();
    let s = irn_sim::run(&sc.runs[0].config, &mut |_| {}).summary;
    assert!(s.flows_total > 50, "{topology}: {} flows", s.flows_total);
    assert_eq!(s.flows_incomplete, 0, "{topology} {routing}");
    assert!(s.pause_frames > 0, "{topology} {routing}: PFC was at work");
    assert_eq!(s.ports_paused_at_end, None, "{topology} {routing}");
}

const CLOS3: &str = "kind = \"clos3\"\npods = 3\nleaves = 2\nhosts_per_leaf = 4\nspines = 2\n\
                     super_spines = 2";
const RAIL: &str = "kind = \"rail\"\ngroups = 2\nservers = 4\nrails = 4\nspines = 2";

/// Shortest paths on both fabrics go up, then down, so ECMP over them cannot deadlock PFC;
/// up*/down* routing finds the same kind of paths.
#[test]
fn pfc_runs_finish_on_clos3_and_rail() {
    for topology in [CLOS3, RAIL] {
        for routing in ["shortest", "up-down"] {
            pfc_run_finishes(topology, routing);
        }
    }
}

/// The fabrics' keys name the tier whose radix they break; a fat-tree's size, its memory.
#[test]
fn fabric_keys_are_checked_against_the_switch_radix() {
    let refused = |keys: &str| {
        let text = format!("[topology]\n{keys}\n");
        scenario::parse(&text, "t.toml", Path::new("."), &[])
            .unwrap_err()
            .to_string()
    };
    for (keys, want) in [
        (
            "kind = \"clos3\"\npods = 513",
            "topology.pods = 513: between 1 and 512 (a super-spine has one port per pod)",
        ),
        (
            "kind = \"clos3\"\nhosts_per_leaf = 500\nspines = 13",
            "topology.spines = 13: between 1 and 12",
        ),
        (
            "kind = \"clos3\"\nsuper_spines = 10\nleaves = 503",
            "topology.leaves = 503: between 1 and 502",
        ),
        (
            "kind = \"rail\"\nrails = 8\ngroups = 65",
            "topology.groups = 65: between 1 and 64",
        ),
        (
            "kind = \"rail\"\nservers = 0",
            "topology.servers = 0: between 1 and 511",
        ),
        ("kind = \"rail\"\npods = 2", "topology.pods is set: does not apply"),
        (
            "kind = \"fat-tree\"\nk = 514",
            "topology.k = 514: fat-tree k = 514: k must be at most 512",
        ),
        (
            "kind = \"clos3\"\npods = 512\nleaves = 256\nhosts_per_leaf = 2\nspines = 2\nsuper_spines = 256",
            "routing needs",
        ),
    ] {
        let e = refused(keys);
        assert!(e.contains(want), "{keys}: {e}");
    }
}
