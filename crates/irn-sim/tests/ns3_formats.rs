//! The ns-3 RDMA simulators' file formats (MODEL.md §8): the published topology files in
//! `data/topology/`, flow files in both column forms, FCT files, and what each rejects.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use irn_core::time::{Bandwidth, Duration, Time};
use irn_sim::ids::{HostIdx, NodeId};
use irn_sim::topology::ns3::{host_of_node, node_of_host, parse_topology, read_topology, Ns3Error};
use irn_sim::topology::Topology;
use irn_sim::workload::ns3::{
    assign_ports, generate, parse_fct, parse_flows, parse_flows_and_ports, read_flows, write_fct,
    write_flows_conweave, write_flows_conweave_file, FctPorts, FctRecord,
};
use irn_sim::workload::{Cdf, FlowClass, FlowSpec};

fn topology_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/topology")
}

/// A fresh directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "irn-ns3-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The header `N_nodes N_switches N_links` of a topology file.
fn header(path: &Path) -> (usize, usize, usize) {
    let text = std::fs::read_to_string(path).unwrap();
    let v: Vec<usize> = text
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .map(|f| f.parse().unwrap())
        .collect();
    (v[0], v[1], v[2])
}

/// Host index of ns-3 node `n`, which must be a host.
fn h(topo: &Topology, n: u32) -> HostIdx {
    host_of_node(topo, n).unwrap_or_else(|| panic!("node {n} is not a host"))
}

/// `kind = "leaf-spine"` at its defaults builds Eunomia's network node for node: the same
/// numbering (hosts leaf-major, then leaves, then spines), ports, rates, delays and ECMP sets as
/// the published file, so flow files written for one run unchanged on the other.
#[test]
fn default_leaf_spine_is_the_published_128_host_file() {
    let file = read_topology(&topology_dir().join("leaf_spine_128_100G_OS2.txt")).unwrap();
    let g100 = Bandwidth::from_gbps(100);
    let native = Topology::leaf_spine(8, 8, 16, g100, g100, Duration::from_us(1)).unwrap();

    assert_eq!((native.hosts().len(), native.switches().len()), (128, 16));
    assert_eq!(native.links().len(), 128 + 8 * 8);
    assert_eq!(native.links(), file.links(), "same links in the same order");
    assert_eq!(native.node_count(), file.node_count());
    for n in 0..native.node_count() as u32 {
        let n = NodeId(n);
        assert_eq!(native.kind(n), file.kind(n), "node {n}");
        assert_eq!(native.node_ports(n), file.node_ports(n), "node {n}");
        for p in native.node_ports(n) {
            let (a, b) = (native.ports()[p as usize], file.ports()[p as usize]);
            assert_eq!((a.node, a.peer), (b.node, b.peer), "port {p}");
            assert_eq!((a.rate, a.delay), (g100, Duration::from_us(1)), "port {p}");
            assert_eq!((b.rate, b.delay), (a.rate, a.delay), "port {p}");
        }
    }
    for &s in native.switches() {
        for d in 0..128 {
            let d = HostIdx(d);
            assert_eq!(
                native.next_hops(s, d),
                file.next_hops(s, d),
                "switch {s} to {d}"
            );
        }
    }
    // Leaf 0 (node 128) is 2:1 oversubscribed: 16 host ports down, 8 spine ports up, and
    // reaches a remote host over all 8; a spine (136) has one way down.
    assert_eq!(native.node_ports(NodeId(128)).len(), 24);
    assert_eq!(native.next_hops(NodeId(128), HostIdx(16)).len(), 8);
    assert_eq!(native.next_hops(NodeId(128), HostIdx(3)).len(), 1);
    assert_eq!(native.next_hops(NodeId(136), HostIdx(16)).len(), 1);
}

#[test]
fn every_published_topology_file_reads_and_routes() {
    // (file, hosts, switches, [(src node, dst node, hops)], [(switch, dst node, ECMP fan-out)])
    type Case = (
        &'static str,
        usize,
        usize,
        &'static [(u32, u32, u32)],
        &'static [(u32, u32, usize)],
    );
    let cases: &[Case] = &[
        (
            // 8 ToRs (128..=135) x 16 hosts, 8 spines (136..=143).
            "leaf_spine_128_100G_OS2.txt",
            128,
            16,
            &[(0, 1, 2), (0, 16, 4), (127, 5, 4), (17, 31, 2)],
            &[(128, 16, 8), (128, 3, 1), (136, 16, 1)],
        ),
        (
            // Edges 32..=39 x 4 hosts, aggregation 40..=47, cores 48..=51; pods of 2 edges.
            "fat_k4_100G_OS2.txt",
            32,
            20,
            &[(0, 1, 2), (0, 4, 4), (0, 8, 6), (31, 0, 6)],
            &[(32, 8, 2), (40, 8, 2), (32, 4, 2), (32, 2, 1)],
        ),
        (
            // Edges 256..=287 x 8 hosts, aggregation 288..=319, cores 320..=335; pods of 4 edges.
            "fat_k8_100G_OS2.txt",
            256,
            80,
            &[(0, 7, 2), (0, 8, 4), (0, 32, 6), (255, 0, 6)],
            &[(256, 32, 4), (288, 32, 4), (256, 8, 4), (320, 0, 1)],
        ),
    ];

    let mut files: Vec<String> = std::fs::read_dir(topology_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != "README.md")
        .collect();
    files.sort();
    let mut expected: Vec<String> = cases.iter().map(|c| c.0.to_string()).collect();
    expected.sort();
    assert_eq!(
        files, expected,
        "data/topology/ holds a file this test does not know"
    );

    for &(file, hosts, switches, paths, fanouts) in cases {
        let path = topology_dir().join(file);
        let topo = read_topology(&path).unwrap_or_else(|e| panic!("{e}"));
        let (nodes, n_switches, n_links) = header(&path);
        assert_eq!(
            (hosts, switches),
            (nodes - n_switches, n_switches),
            "{file}"
        );
        assert_eq!(topo.node_count(), nodes, "{file}");
        assert_eq!(topo.hosts().len(), hosts, "{file}");
        assert_eq!(topo.switches().len(), switches, "{file}");
        assert_eq!(topo.links().len(), n_links, "{file}");
        assert_eq!(topo.min_host_rate(), Bandwidth::from_gbps(100), "{file}");
        // Hosts are 0..hosts in these files, so host index == node id.
        for (k, &node) in topo.hosts().iter().enumerate() {
            assert_eq!(node, NodeId(k as u32), "{file}");
            assert_eq!(node_of_host(&topo, HostIdx(k as u32)), k as u32);
        }
        for &(src, dst, hops) in paths {
            let p = topo.path(h(&topo, src), h(&topo, dst));
            assert_eq!(p.hops, hops, "{file}: {src} -> {dst}");
            assert_eq!(p.propagation, Duration::from_us(u64::from(hops)), "{file}");
            assert_eq!(p.bottleneck, Bandwidth::from_gbps(100), "{file}");
        }
        for &(switch, dst, fanout) in fanouts {
            let next = topo.next_hops(NodeId(switch), h(&topo, dst));
            assert_eq!(next.len(), fanout, "{file}: at {switch} towards {dst}");
        }
    }
}

/// Switch 0 with hosts 1..=4 on it: host index k is node k + 1, so conversions show.
const SMALL_TOPO: &str = "5 1 4\n0\n1 0 100Gbps 1000ns 0\n2 0 100Gbps 1000ns 0\n\
                          3 0 100Gbps 1000ns 0\n4 0 100Gbps 1000ns 0\n";

fn small() -> Topology {
    parse_topology(SMALL_TOPO, "small.txt").unwrap()
}

fn flow(src: u32, dst: u32, size_bytes: u64, start_ps: u64) -> FlowSpec {
    FlowSpec {
        src: HostIdx(src),
        dst: HostIdx(dst),
        size_bytes,
        start: Time::from_ps(start_ps),
        class: FlowClass::Regular,
        verb: None,
    }
}

#[test]
fn flow_files_read_in_both_forms_with_exact_start_times() {
    let topo = small();
    let expected = vec![
        flow(0, 1, 1000, 2_000_000_000_000),
        flow(3, 0, 7, 2_000_001_234_000),
        flow(1, 2, 20_000_000, 2_000_001_234_000),
        flow(2, 3, 1, 2_500_000_000_001),
    ];
    // HPCC: src dst pg dport size start_s (out of order in the file: the result is sorted).
    let hpcc = "4\n\
                1 2 3 100 1000 2.000000000\n\
                3 4 3 200 1 2.500000000001\r\n\
                4 1 3 101 7 2.000001234 \n\
                2 3 3 102 20000000 2.000001234\n\n\n";
    assert_eq!(parse_flows(hpcc, "hpcc.txt", &topo).unwrap(), expected);
    // Each flow keeps its dport through the sort, for the FCT file.
    let (_, ports) = parse_flows_and_ports(hpcc, "hpcc.txt", &topo).unwrap();
    assert_eq!(ports, FctPorts::Hpcc(vec![100, 101, 102, 200].into()));
    let bad = hpcc.replace(" 200 ", " 70000 ");
    let e = parse_flows(&bad, "hpcc.txt", &topo)
        .unwrap_err()
        .to_string();
    assert!(e.contains("hpcc.txt:3: dport 70000 is not a port"), "{e}");
    // ConWeave: src dst pg size start_s.
    let conweave = "4 \n\
                    1 2 3 1000 2\n\
                    4 1 3 7 2.000001234\n\
                    2 3 3 20000000 2.000001234000\n\
                    3 4 3 1 2.500000000001\n";
    assert_eq!(parse_flows(conweave, "cw.txt", &topo).unwrap(), expected);
    let (_, ports) = parse_flows_and_ports(conweave, "cw.txt", &topo).unwrap();
    assert_eq!(ports, FctPorts::ConWeave);
}

#[test]
fn malformed_flow_files_are_rejected_with_line_numbers() {
    let topo = small();
    // (file text, line, part of the message)
    let cases: &[(&str, u64, &str)] = &[
        ("", 0, "empty file"),
        ("two\n1 2 3 10 0\n", 1, "flow count `two` is not a whole number"),
        ("1 2\n1 2 3 10 0\n", 1, "expected 1 field"),
        ("3\n1 2 3 10 0\n2 1 3 10 0\n", 1, "announces 3 flows, but the file has 2"),
        ("1\n1 2 3 10 0\n2 1 3 10 0\n", 3, "one more flow than the 1"),
        ("1\n1 2 3 10\n", 2, "expected 6 columns (src dst pg dport size start_s, HPCC) or 5 (src dst pg size start_s, ConWeave), got 4"),
        ("1\n1 2 3 100 10 0 9\n", 2, "got 7"),
        ("2\n1 2 3 100 10 0\n2 1 3 10 0\n", 3, "5 columns (ConWeave form), but line 2 has 6 (HPCC form)"),
        ("2\n1 2 3 10 0\n\n2 1 3 100 10 0\n", 4, "6 columns (HPCC form), but line 2 has 5"),
        ("1\n0 2 3 10 0\n", 2, "src node 0 is a switch"),
        ("1\n1 9 3 10 0\n", 2, "dst node 9 is out of range: the topology has 5 nodes"),
        ("1\n3 3 3 10 0\n", 2, "src and dst are both node 3"),
        ("1\nx 2 3 10 0\n", 2, "src `x` is not a node id"),
        ("1\n1 2 3 10.5 0\n", 2, "size_bytes `10.5` is not a whole number"),
        ("1\n1 2 3 0 0\n", 2, "size_bytes is 0"),
        ("1\n1 2 3 2147483649 0\n", 2, "size_bytes 2147483649 is above the flow-size limit"),
        ("1\n1 2 high 10 0\n", 2, "pg `high` is not a whole number"),
        ("1\n1 2 3 -1 10 0\n", 2, "dport `-1` is not a whole number"),
        ("1\n1 2 3 10 2e-6\n", 2, "start_s `2e-6` is not a start time in seconds"),
        ("1\n1 2 3 10 -2\n", 2, "start_s `-2`"),
        ("1\n1 2 3 10 0.0000000000001\n", 2, "whole picoseconds"),
    ];
    for &(text, line, what) in cases {
        let err = parse_flows(text, "flows.txt", &topo).unwrap_err();
        let msg = err.to_string();
        if line == 0 {
            assert_eq!(err.line(), None, "{text:?}: {msg}");
            assert!(msg.starts_with("flows.txt: "), "{text:?}: {msg}");
        } else {
            assert_eq!(err.line(), Some(line), "{text:?}: {msg}");
            assert!(
                msg.starts_with(&format!("flows.txt:{line}: ")),
                "{text:?}: {msg}"
            );
        }
        assert!(msg.contains(what), "{text:?}: {msg}");
    }
}

#[test]
fn malformed_topology_files_are_rejected_with_line_numbers() {
    const L: &str = "100Gbps 1000ns 0";
    // (file text, line, part of the message); line 0: not about one line.
    let cases: Vec<(String, u64, &str)> = vec![
        ("".into(), 0, "empty file"),
        (
            "3 1\n2\n".into(),
            1,
            "expected 3 fields (N_nodes N_switches N_links), got 2",
        ),
        (
            "3 one 2\n".into(),
            1,
            "N_switches `one` is not a whole number",
        ),
        (
            "3 4 2\n".into(),
            1,
            "N_switches = 4 is more than N_nodes = 3",
        ),
        ("3 1 2\n".into(), 0, "the file ends after the header"),
        ("3 1 2\n2 1\n".into(), 2, "expected 1 switch ids"),
        ("4 2 3\n3 3\n".into(), 2, "switch id 3 is listed twice"),
        (
            "3 1 2\n7\n".into(),
            2,
            "switch id 7 is out of range: the header says 3 nodes, ids 0 to 2",
        ),
        ("3 1 2\ns\n".into(), 2, "switch id `s` is not a node id"),
        (
            format!("3 1 2\n2\n0 2 {L}\n"),
            1,
            "the header says 2 links, but the file has only 1",
        ),
        (
            format!("3 1 2\n2\n0 2 {L}\n1 2 {L}\n0 2 {L}\n"),
            5,
            "one more link after the 2 links",
        ),
        // After the last link, a link a field short (or over) is not a note: refused.
        (
            format!("3 1 2\n2\n0 2 {L}\n1 2 {L}\n0 2 100Gbps 1000ns\n"),
            5,
            "a link line with 4 fields after the 2 links the header announces: a link has 5 \
             (src dst rate delay error_rate), and N_links on line 1 counts them all",
        ),
        (
            format!("3 1 2\n2\n0 2 {L}\n1 2 {L}\n0 2 100Gbps 1000ns 0 0\n"),
            5,
            "a link line with 6 fields after the 2 links",
        ),
        // Rates within a generated network's bounds, 1 Mb/s to 10 Tb/s.
        (
            format!("3 1 2\n2\n0 2 {L}\n1 2 100Tbps 1000ns 0\n"),
            4,
            "rate `100Tbps` is out of range: between 1Mbps and 10Tbps (1 Mb/s is slower than \
             any RDMA network; 10 Tb/s is six times today's fastest ports)",
        ),
        (
            format!("3 1 2\n2\n0 2 {L}\n1 2 999kbps 1000ns 0\n"),
            4,
            "rate `999kbps` is out of range",
        ),
        (
            format!("3 1 2\n2\n0 2 {L}\n1 2 100Gbps 1000ns\n"),
            4,
            "expected 5 fields (src dst rate delay error_rate) on link 2 of 2, got 4",
        ),
        (format!("3 1 2\n2\n0 2 {L}\n1 2 {L} x\n"), 4, "got 6"),
        (
            format!("3 1 2\n2\n0 2 {L}\n1 3 {L}\n"),
            4,
            "dst 3 is out of range",
        ),
        (
            format!("3 1 2\n2\n0 2 {L}\n-1 2 {L}\n"),
            4,
            "src `-1` is not a node id",
        ),
        (
            format!("3 1 2\n2\n0 2 {L}\n2 2 {L}\n"),
            4,
            "link from node 2 to itself",
        ),
        (
            "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100GBps 1000ns 0\n".into(),
            4,
            "bad rate `100GBps`: `100GBps` has unknown unit `GBps`",
        ),
        (
            "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 0Gbps 1000ns 0\n".into(),
            4,
            "bad rate `0Gbps`: `0Gbps` must be greater than zero",
        ),
        (
            "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000 0\n".into(),
            4,
            "bad delay `1000`",
        ),
        (
            "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1fortnight 0\n".into(),
            4,
            "bad delay `1fortnight`: `1fortnight` has unknown unit",
        ),
        (
            "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1us 1\n".into(),
            4,
            "error_rate 1 is not a probability in [0, 1)",
        ),
        (
            "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1us none\n".into(),
            4,
            "error_rate `none` is not a number",
        ),
        (
            format!("3 1 2\n2\n0 2 {L}\n\n0 2 {L}\n"),
            5,
            "host 0 already has a link (line 3)",
        ),
        // Counts the file cannot back are not trusted to size anything.
        (
            format!("4000000000 1 2\n2\n0 2 {L}\n1 2 {L}\n"),
            1,
            "N_nodes = 4000000000, but every node needs a link and the 3 lines after the header can link at most 6 nodes",
        ),
        (
            format!("3 1 4000000000\n2\n0 2 {L}\n1 2 {L}\n"),
            1,
            "the header says 4000000000 links, but the file has only 2",
        ),
        // Parsed fine, rejected by the builder: host 2 has no link.
        (
            format!("4 1 2\n3\n0 3 {L}\n1 3 {L}\n"),
            0,
            "host 2 has 0 links",
        ),
    ];
    for (text, line, what) in &cases {
        let err = parse_topology(text, "topo.txt").unwrap_err();
        let msg = err.to_string();
        if *line == 0 {
            assert_eq!(err.line(), None, "{text:?}: {msg}");
            assert!(msg.starts_with("topo.txt: "), "{text:?}: {msg}");
        } else {
            assert_eq!(err.line(), Some(*line), "{text:?}: {msg}");
            assert!(
                msg.starts_with(&format!("topo.txt:{line}: ")),
                "{text:?}: {msg}"
            );
        }
        assert!(msg.contains(what), "{text:?}: {msg}");
    }
    let err = read_topology(Path::new("/nonexistent/irn/topo.txt")).unwrap_err();
    assert!(matches!(err, Ns3Error::Io { .. }), "{err}");
    assert!(
        err.to_string().contains("/nonexistent/irn/topo.txt"),
        "{err}"
    );
}

#[test]
fn topology_files_tolerate_crlf_trailing_space_blank_lines_and_no_final_newline() {
    let crlf = SMALL_TOPO.replace('\n', " \t\r\n") + "\r\n\r\n";
    let a = parse_topology(&crlf, "crlf").unwrap();
    let b = parse_topology(SMALL_TOPO.trim_end(), "bare").unwrap();
    for t in [&a, &b] {
        assert_eq!(t.hosts().len(), 4);
        assert_eq!(t.links(), small().links());
    }
}

#[test]
fn written_flow_files_read_back_the_same_flows() {
    let dir = TempDir::new();
    let topo = read_topology(&topology_dir().join("leaf_spine_128_100G_OS2.txt")).unwrap();
    let cdf_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/cdf/irn_default.txt");
    let cdf = Cdf::from_file(&cdf_path).unwrap();
    let flows = generate(&topo, &cdf, 0.5, Duration::from_us(100), 11);
    assert!(flows.len() > 20, "{}", flows.len());
    assert_eq!(
        flows,
        generate(&topo, &cdf, 0.5, Duration::from_us(100), 11)
    );

    let path = dir.0.join("flows.txt");
    write_flows_conweave_file(&path, &flows, &topo).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(flows.len().to_string().as_str()));
    assert!(lines.all(|l| l.split(' ').count() == 5 && l.split(' ').nth(2) == Some("3")));
    let (mut back, ports) = read_flows(&path, &topo).unwrap();
    assert_eq!(ports, FctPorts::ConWeave);
    back.sort_by_key(|f| (f.start, f.src));
    assert_eq!(back, flows);

    // Node ids, not host indices, go in the file.
    let topo = small();
    let mut buf = Vec::new();
    write_flows_conweave(&mut buf, &[flow(0, 3, 42, 1_500_000_000_000)], &topo).unwrap();
    assert_eq!(String::from_utf8(buf).unwrap(), "1\n1 4 3 42 1.500000000\n");
}

fn records() -> Vec<FctRecord> {
    let flows = [
        flow(0, 1, 1000, 2_000_000_000_000),
        flow(0, 2, 1, 2_000_001_000_000),
        flow(3, 1, 5_000_000, 2_000_002_000_000),
    ];
    let topo = small();
    let ports = assign_ports(&flows, &FctPorts::ConWeave);
    flows
        .iter()
        .zip(ports)
        .enumerate()
        .map(|(i, (f, (sport, dport)))| FctRecord {
            src_node: node_of_host(&topo, f.src),
            dst_node: node_of_host(&topo, f.dst),
            sport,
            dport,
            size_bytes: f.size_bytes,
            start_ns: f.start.as_ps() / 1000,
            fct_ns: 3000 + 1000 * i as u64,
            ideal_fct_ns: 2000 + 100 * i as u64,
        })
        .collect()
}

#[test]
fn fct_files_round_trip() {
    let records = records();
    let mut buf = Vec::new();
    write_fct(&mut buf, &records).unwrap();
    let text = String::from_utf8(buf).unwrap();
    assert_eq!(
        text.lines().next(),
        Some("1 2 10000 100 1000 2000000000 3000 2000")
    );
    assert_eq!(parse_fct(&text, "fct.txt").unwrap(), records);
    assert_eq!(
        parse_fct(&text.replace('\n', "  \r\n"), "fct.txt").unwrap(),
        records
    );

    for (text, line, what) in [
        ("1 2 10000 100 1000 0 5 4\n1 2 3\n", 2, "expected 8 columns"),
        (
            "1 2 70000 100 1000 0 5 4\n",
            1,
            "sport 70000 is larger than 65535",
        ),
        (
            "1 2 10000 100 1000 0 5 4.5\n",
            1,
            "ideal_fct_ns `4.5` is not a whole number",
        ),
    ] {
        let err = parse_fct(text, "fct.txt").unwrap_err();
        assert_eq!(err.line(), Some(line), "{err}");
        assert!(err.to_string().contains(what), "{err}");
    }
}

#[test]
fn fct_files_read_with_python_split_like_conweave_scripts() {
    let records = records();
    let dir = TempDir::new();
    let path = dir.0.join("fct.txt");
    let mut buf = Vec::new();
    write_fct(&mut buf, &records).unwrap();
    std::fs::write(&path, buf).unwrap();

    let script = r#"
import sys
n = 0
total = 0.0
for line in open(sys.argv[1]):
    f = [int(x) for x in line.split()]
    assert len(f) == 8, line
    total += f[6] / f[7]
    n += 1
print(n, "%.6f" % (total / n))
"#;
    let out = match Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&path)
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipping: python3 is not available ({e})");
            return;
        }
    };
    assert!(
        out.status.success(),
        "python3 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mean = records
        .iter()
        .map(|r| r.fct_ns as f64 / r.ideal_fct_ns as f64)
        .sum::<f64>()
        / records.len() as f64;
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        format!("{} {mean:.6}", records.len())
    );
}

/// MODEL §1: with PFC on, no packet is ever dropped for lack of buffer. The benchmark's
/// shared-buffer switches once dropped a frame in its first 2 ms: each input's headroom left out
/// the PAUSE frame's own serialization, and a frame that started just before the PAUSE landed
/// overflowed it by 51 bytes.
#[test]
fn the_benchmark_is_lossless_with_pfc() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/bench");
    let sc = irn_sim::scenario::load(
        &dir.join("leafspine128.toml"),
        &["workload.duration=2ms".to_string()],
    )
    .unwrap();
    let run = sc.runs.iter().find(|r| r.name == "RoCE+PFC").unwrap();
    let s = irn_sim::run(&run.config, &mut |_| {}).summary;
    assert!(
        s.pause_frames > 1000,
        "PFC must be busy for this to mean anything: {s:?}"
    );
    assert_eq!(s.drops, 0, "{s:?}");
    assert_eq!(s.retransmissions, 0, "{s:?}");
}

/// A run of an HPCC flow file numbers its FCT lines' ports as HPCC's `third.cc` does: `sport`
/// per (source, destination) pair, `dport` the file's (HPCC's analysis keeps `dport` 100).
#[test]
fn a_run_of_an_hpcc_flow_file_prints_hpccs_ports() {
    let dir = std::env::temp_dir().join(format!("irn-hpcc-ports-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let topology = "4 1 3\n3\n0 3 100Gbps 1000ns 0\n1 3 100Gbps 1000ns 0\n2 3 100Gbps 1000ns 0\n";
    std::fs::write(dir.join("topo.txt"), topology).unwrap();
    let flows = "4\n0 2 3 100 1000 0.000001\n1 2 3 100 5000 0.000002\n\
                 0 1 3 200 2000 0.000002\n0 2 3 100 3000 0.000003\n";
    std::fs::write(dir.join("flows.txt"), flows).unwrap();
    std::fs::write(
        dir.join("s.toml"),
        "topology = { file = \"topo.txt\" }\nworkload = { kind = \"ns3\", file = \"flows.txt\" }\n",
    )
    .unwrap();
    let sc = irn_sim::scenario::load(&dir.join("s.toml"), &[]).unwrap();
    let fct = irn_sim::run(&sc.runs[0].config, &mut |_| {}).fct;
    let ports: Vec<(u32, u32, u16, u16)> = (fct.iter())
        .map(|r| (r.src_node, r.dst_node, r.sport, r.dport))
        .collect();
    assert_eq!(
        ports,
        [
            (0, 2, 10000, 100),
            (1, 2, 10000, 100),
            (0, 1, 10000, 200),
            (0, 2, 10001, 100)
        ]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
