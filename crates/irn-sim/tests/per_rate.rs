//! Thresholds that scale with a port's rate, as HPCC's ns-3 sets them
//! (`switch.ecn_per_rate`, `switch.alpha_per_rate`): on a leaf-spine of 100 Gb/s hosts and
//! 400 Gb/s fabric links, a 15-to-1 incast queues at a leaf's 400 Gb/s uplink (eight senders
//! under one leaf) and at the receiver's 100 Gb/s port, whose leaf's inputs include its
//! 400 Gb/s spine link. Scaled, the uplink marks only at four times the thresholds and the
//! spine-facing input pauses at an alpha of 1/2 instead of 1/8; where every port runs at the
//! hosts' rate, scaling changes nothing.

use std::path::Path;

use irn_sim::metrics::Summary;
use irn_sim::scenario;

const BASE: &str = r#"
[topology]
kind = "leaf-spine"
leaves = 2
spines = 1
hosts_per_leaf = 8
link_rate = "100Gbps"
spine_link_rate = "400Gbps"
link_delay = "1us"

[switch]
model = "shared-buffer"
buffer = "4MB"
pfc = true

[transport]
kind = "roce"
mtu = 1000

[workload]
kind = "incast"
senders = 15
total = "15MB"
"#;

const DCQCN: &str = "transport.cc=\"dcqcn\"";
const MARKING: [&str; 3] = [
    "switch.ecn_kmin=\"100KB\"",
    "switch.ecn_kmax=\"400KB\"",
    "switch.ecn_pmax=0.2",
];

fn run(keys: &[&str]) -> Summary {
    let overrides: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    let sc = scenario::parse(BASE, "per_rate.toml", Path::new("."), &overrides).unwrap();
    let summary = irn_sim::run(&sc.runs[0].config, &mut |_| {}).summary;
    assert_eq!(summary.flows_incomplete, 0, "{keys:?}");
    summary
}

#[test]
fn marking_thresholds_scale_on_the_fast_ports_only() {
    let marking = [&[DCQCN][..], &MARKING].concat();
    let same = run(&marking);
    let scaled = run(&[&marking[..], &["switch.ecn_per_rate=true"]].concat());
    assert!(
        scaled.ecn_marks < same.ecn_marks,
        "{} marks scaled, {} not",
        scaled.ecn_marks,
        same.ecn_marks
    );
    // Every port at the hosts' rate: the scale is 1 everywhere.
    let flat = [&marking[..], &["topology.spine_link_rate=\"100Gbps\""]].concat();
    let unscaled = run(&flat);
    let flat_scaled = run(&[&flat[..], &["switch.ecn_per_rate=true"]].concat());
    assert_eq!(format!("{flat_scaled:?}"), format!("{unscaled:?}"));
}

#[test]
fn a_fast_inputs_pfc_share_grows_with_its_rate() {
    let same = run(&[]);
    let scaled = run(&["switch.alpha_per_rate=true"]);
    // The spine-facing inputs hold more before they pause, so switch ports pause less.
    assert!(
        scaled.pause_fraction_switch_ports < same.pause_fraction_switch_ports,
        "{:?} scaled, {:?} not",
        scaled.pause_fraction_switch_ports,
        same.pause_fraction_switch_ports
    );
    assert!(scaled.peak_buffer_bytes > same.peak_buffer_bytes);
    let flat = ["topology.spine_link_rate=\"100Gbps\""];
    let unscaled = run(&flat);
    let flat_scaled = run(&[&flat[..], &["switch.alpha_per_rate=true"]].concat());
    assert_eq!(format!("{flat_scaled:?}"), format!("{unscaled:?}"));
}

/// Where nothing can scale, the keys are accepted and said to do nothing: a network whose
/// switch ports all run at the hosts' rate, and an alpha per rate without PFC.
#[test]
fn per_rate_keys_that_change_nothing_are_said_to() {
    let warnings = |keys: &[&str]| {
        let overrides: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        let sc = scenario::parse(BASE, "per_rate.toml", Path::new("."), &overrides).unwrap();
        sc.runs[0].warnings.join("\n")
    };
    let flat = "topology.spine_link_rate=\"100Gbps\"";
    let said = warnings(&[flat, "switch.alpha_per_rate=true"]);
    assert!(
        said.contains("switch.alpha_per_rate = true: every switch port runs at the hosts' 100Gbps"),
        "{said}"
    );
    let marking = [&[DCQCN, flat, "switch.ecn_per_rate=true"][..], &MARKING].concat();
    assert!(warnings(&marking).contains("switch.ecn_per_rate = true: every"));
    let said = warnings(&["switch.pfc=false", "switch.alpha_per_rate=true"]);
    assert!(
        said.contains("alpha_per_rate = true with switch.pfc = false"),
        "{said}"
    );
    assert_eq!(warnings(&["switch.alpha_per_rate=true"]), "");
}

#[test]
fn per_rate_keys_are_refused_where_they_cannot_act() {
    let parse = |keys: &[&str]| {
        let overrides: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        scenario::parse(BASE, "per_rate.toml", Path::new("."), &overrides).map(|_| ())
    };
    let err = parse(&["switch.ecn_per_rate=true"])
        .unwrap_err()
        .to_string();
    assert!(err.contains("ecn_per_rate/ecn_queue do not apply"), "{err}");
    let err = parse(&[
        "switch.model=\"input-queued\"",
        "switch.buffer=\"240KB\"",
        "switch.alpha_per_rate=true",
    ])
    .unwrap_err()
    .to_string();
    assert!(
        err.contains(
            "switch.alpha_per_rate is set: does not apply to switch.model = \"input-queued\""
        ),
        "{err}"
    );
}
