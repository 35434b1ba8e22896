//! Every reader of user files, fed damaged copies of valid files: it must answer with the parsed
//! value or an error that names the file, never panic, hang or allocate by a count it was told.
//! The table tests beside each reader check the messages; these check that nothing slips past.

use std::path::Path;

use irn_sim::scenario;
use irn_sim::topology::ns3::parse_topology;
use irn_sim::workload::ns3::{parse_fct, parse_flows};
use irn_sim::workload::Cdf;
use proptest::prelude::*;

const TOPOLOGY: &str = "5 1 4\n0\n1 0 100Gbps 1000ns 0\n2 0 40Gbps 1us 0\n\
                        3 0 100Gbps 0.001ms 0\n4 0 100Gbps 1000ns 0\n";
const HPCC_FLOWS: &str =
    "3\n1 2 3 100 1000 2.000000000\n3 4 3 100 1 2.5\n4 1 3 100 7 2.000001234\n";
const CONWEAVE_FLOWS: &str = "3\n1 2 3 1000 2\n4 1 3 7 2.000001234\n3 4 3 1 2.500000000001\n";
const CDF: &str = "1000 0\n10000 50\n100000 90\n1000000 100\n";
const FCT: &str = "1 2 10000 100 1000 2000000000 5000 4000\n\
                   2 1 10001 100 20000 2000000100 9000 8000\n";

/// Tokens that have broken parsers: empty, signs, overflow, floats where integers go, units
/// missing or wrong, and numbers a reader might trust as a count.
const NASTY: &[&str] = &[
    "",
    "0",
    "-1",
    "1.5",
    "1e9",
    "nan",
    "inf",
    "abc",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "99999999999999999999999",
    "100Gbps",
    "0Gbps",
    "1ns",
    "0ns",
    "-5ns",
    "0b000101",
    "0x10",
    "\u{fe0f}",
];

/// One damage to `text`: a token replaced, a line dropped, duplicated or swapped with the
/// next, or the text cut short.
#[derive(Debug, Clone)]
enum Damage {
    Token {
        line: usize,
        token: usize,
        nasty: usize,
    },
    DropLine(usize),
    DuplicateLine(usize),
    SwapLines(usize),
    Truncate(usize),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        4 => (0usize..16, 0usize..8, 0..NASTY.len())
            .prop_map(|(line, token, nasty)| Damage::Token { line, token, nasty }),
        1 => (0usize..16).prop_map(Damage::DropLine),
        1 => (0usize..16).prop_map(Damage::DuplicateLine),
        1 => (0usize..16).prop_map(Damage::SwapLines),
        1 => (0usize..400).prop_map(Damage::Truncate),
    ]
}

fn apply(text: &str, damages: &[Damage]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    for d in damages {
        if lines.is_empty() {
            break;
        }
        let n = lines.len();
        match *d {
            Damage::Token { line, token, nasty } => {
                let mut tokens: Vec<&str> = lines[line % n].split_whitespace().collect();
                if tokens.is_empty() {
                    tokens.push(NASTY[nasty]);
                } else {
                    let i = token % tokens.len();
                    tokens[i] = NASTY[nasty];
                }
                lines[line % n] = tokens.join(" ");
            }
            Damage::DropLine(i) => {
                lines.remove(i % n);
            }
            Damage::DuplicateLine(i) => {
                let l = lines[i % n].clone();
                lines.insert(i % n, l);
            }
            Damage::SwapLines(i) => lines.swap(i % n, (i + 1) % n),
            Damage::Truncate(at) => {
                let joined = lines.join("\n");
                let mut cut = at.min(joined.len());
                while !joined.is_char_boundary(cut) {
                    cut -= 1;
                }
                lines = joined[..cut].lines().map(str::to_owned).collect();
            }
        }
    }
    lines.join("\n") + "\n"
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn topology_files(damages in prop::collection::vec(damage(), 1..4)) {
        let text = apply(TOPOLOGY, &damages);
        if let Err(e) = parse_topology(&text, "t.txt") {
            prop_assert!(e.to_string().starts_with("t.txt"), "{}", e);
        }
    }

    #[test]
    fn flow_files_in_either_form(
        hpcc in any::<bool>(),
        damages in prop::collection::vec(damage(), 1..4),
    ) {
        let topo = parse_topology(TOPOLOGY, "t.txt").unwrap();
        let text = apply(if hpcc { HPCC_FLOWS } else { CONWEAVE_FLOWS }, &damages);
        match parse_flows(&text, "f.txt", &topo) {
            Ok(flows) => {
                for f in &flows {
                    prop_assert!(f.src != f.dst && f.size_bytes > 0);
                    prop_assert!(f.src.index() < 4 && f.dst.index() < 4);
                }
                prop_assert!(flows.windows(2).all(|w| w[0].start <= w[1].start));
            }
            Err(e) => prop_assert!(e.to_string().starts_with("f.txt"), "{}", e),
        }
    }

    #[test]
    fn cdf_files(damages in prop::collection::vec(damage(), 1..4)) {
        let text = apply(CDF, &damages);
        match Cdf::parse(&text, "c.txt") {
            Ok(cdf) => {
                let q: Vec<f64> = (0..=100).map(|p| cdf.quantile(f64::from(p))).collect();
                prop_assert!(q.iter().all(|x| x.is_finite() && *x >= 0.0), "{:?}", q);
                prop_assert!(q.windows(2).all(|w| w[0] <= w[1]), "{:?}", q);
                prop_assert!(cdf.mean().is_finite() && cdf.mean() > 0.0);
            }
            Err(e) => prop_assert!(e.to_string().contains("c.txt"), "{}", e),
        }
    }

    #[test]
    fn fct_files(damages in prop::collection::vec(damage(), 1..4)) {
        let text = apply(FCT, &damages);
        if let Err(e) = parse_fct(&text, "fct.txt") {
            prop_assert!(e.to_string().starts_with("fct.txt"), "{}", e);
        }
    }
}

/// Scenario keys, and values of every type and edge for them (no workload longer than a
/// millisecond, so each case stays fast).
const KEYS: &[&str] = &[
    "seed",
    "topology.kind",
    "topology.k",
    "topology.hosts",
    "topology.link_rate",
    "topology.link_delay",
    "topology.file",
    "switch.model",
    "switch.buffer",
    "switch.pfc",
    "switch.pfc_threshold",
    "switch.pfc_resume_gap",
    "switch.alpha",
    "switch.ecn",
    "switch.ecn_kmin",
    "switch.ecn_kmax",
    "switch.ecn_pmax",
    "transport.kind",
    "transport.cc",
    "transport.mtu",
    "transport.bdp_cap",
    "transport.rto_low",
    "transport.rto_high",
    "transport.rto_low_packets",
    "transport.timeouts",
    "transport.header_overhead",
    "transport.retransmit_delay",
    "transport.tx_window",
    "transport.slow_restart",
    "transport.slow_restart_factor",
    "transport.slow_restart_growth",
    "transport.nack_interval",
    "transport.acks",
    "transport.timeout_resend",
    "transport.nack_resend",
    "workload.kind",
    "workload.load",
    "workload.duration",
    "workload.sizes",
    "workload.senders",
    "workload.total",
    "workload.receiver",
    "workload.background_load",
    "workload.background_duration",
    "workload.verbs",
    "run.warmup",
    "run.measure_until",
    "run.drain_limit",
];
const VALUES: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "3",
    "5",
    "100",
    "4294967296",
    "0.5",
    "1e300",
    "-0.0",
    "nan",
    "inf",
    "true",
    "false",
    "\"\"",
    "\"0\"",
    "\"x\"",
    "\"auto\"",
    "\"off\"",
    "\"on\"",
    "\"star\"",
    "\"fat-tree\"",
    "\"dumbbell\"",
    "\"leaf-spine\"",
    "\"shared-buffer\"",
    "\"incast\"",
    "\"trace\"",
    "\"roce\"",
    "\"tcp\"",
    "\"none\"",
    "\"slow-start\"",
    "\"dcqcn\"",
    "\"timely\"",
    "\"0B\"",
    "\"1B\"",
    "\"1GB\"",
    "\"100Tbps\"",
    "\"1bps\"",
    "\"0ns\"",
    "\"1ps\"",
    "\"1ms\"",
    "\"-1us\"",
    "[1, 2]",
    "{ cdf = \"missing.txt\" }",
    "{ uniform = [\"5KB\", \"1KB\"] }",
    "{ fixed = \"0B\" }",
    "{ write = 1, read = -1 }",
    "{ atomic = 1 }",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any few `--set` overrides on the default scenario: a valid scenario or an error that
    /// names the file.
    #[test]
    fn scenario_overrides(
        sets in prop::collection::vec((0..KEYS.len(), 0..VALUES.len()), 1..4),
    ) {
        let mut overrides = vec!["workload.duration=\"20us\"".to_string()];
        overrides.extend(sets.iter().map(|&(k, v)| format!("{}={}", KEYS[k], VALUES[v])));
        if let Err(e) = scenario::parse("", "t.toml", Path::new("."), &overrides) {
            prop_assert!(e.to_string().contains("t.toml"), "{:?}: {}", overrides, e);
        }
    }
}

#[test]
fn the_undamaged_files_parse() {
    let topo = parse_topology(TOPOLOGY, "t.txt").unwrap();
    assert_eq!(topo.hosts().len(), 4);
    assert_eq!(parse_flows(HPCC_FLOWS, "f.txt", &topo).unwrap().len(), 3);
    assert_eq!(
        parse_flows(CONWEAVE_FLOWS, "f.txt", &topo).unwrap().len(),
        3
    );
    assert!(Cdf::parse(CDF, "c.txt").is_ok());
    assert_eq!(parse_fct(FCT, "fct.txt").unwrap().len(), 2);
}

/// A FIFO, a device or a file past its kind's limit, named as any input: refused at once with
/// the file's name and the reason, never read until blocked or out of memory.
#[test]
fn fifos_devices_and_huge_files_are_refused() {
    let dir = std::env::temp_dir().join(format!("irn-special-inputs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("scenario.toml");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let e = scenario::load(&fifo, &[]).unwrap_err().to_string();
        let want = "a FIFO, not a regular file: a scenario must be a regular file";
        assert_eq!(e, format!("{}: cannot read: {want}", fifo.display()));
    }
    let zero = Path::new("/dev/zero");
    let e = scenario::load(zero, &[]).unwrap_err().to_string();
    let want = "a device or socket, not a regular file: a scenario must be a regular file";
    assert_eq!(e, format!("/dev/zero: cannot read: {want}"));
    let e = Cdf::from_file(zero).unwrap_err().to_string();
    assert!(e.starts_with("/dev/zero: cannot read: a device"), "{e}");
    let e = irn_sim::topology::ns3::read_topology(zero)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("/dev/zero: cannot read: a device"), "{e}");
    let e = irn_sim::workload::trace_csv(zero, 4)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("/dev/zero: cannot read: a device"), "{e}");

    // Sparse: past the limit without a block written.
    let big = dir.join("big.toml");
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(64 << 20 | 1).unwrap();
    let e = scenario::load(&big, &[]).unwrap_err().to_string();
    let want = "larger than a scenario may be (64 MiB)";
    assert_eq!(e, format!("{}: cannot read: {want}", big.display()));
    let e = Cdf::from_file(&big).unwrap_err().to_string();
    assert!(e.ends_with("larger than a CDF file may be (16 MiB)"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
