//! HPCC end to end: in-band telemetry carried by data packets and echoed by ACKs steers the
//! senders of an incast, which keep the bottleneck's queue near empty where DCQCN, reacting to
//! ECN marks, lets it build; and the flows still share the link fairly, near line rate. Swift,
//! on RTT against a target delay, on the same incast.

use std::path::Path;

use irn_sim::scenario;
use irn_sim::RunResult;

/// IRN without BDP-FC, whose cap would bound the queue whatever the controller (two flows of
/// one BDP each into one link queue one BDP at most).
const WITHOUT_CAP: &str = "irn-without-bdp-fc";

/// Two hosts send 1 MB each to host 0 at once on a one-switch star of 100 Gb/s links, with
/// transport `kind` under congestion control `cc`.
fn incast(cc: &str, kind: &str) -> RunResult {
    let text = format!(
        r#"
[topology]
kind = "star"
hosts = 3
link_rate = "100Gbps"
link_delay = "1us"
[workload]
kind = "incast"
senders = 2
total = "2MB"
receiver = 0
[transport]
kind = "{kind}"
cc = "{cc}"
"#
    );
    let s = scenario::parse(&text, "t.toml", Path::new("."), &[]).expect("valid scenario");
    irn_sim::run(&s.runs[0].config, &mut |_| {})
}

#[test]
fn hpcc_keeps_the_incast_queue_near_empty_and_shares_the_link() {
    let hpcc = incast("hpcc", WITHOUT_CAP);
    let dcqcn = incast("dcqcn", WITHOUT_CAP);
    let (h, d) = (&hpcc.summary, &dcqcn.summary);
    assert_eq!((h.flows_incomplete, d.flows_incomplete), (0, 0));
    assert_eq!((h.drops, d.drops), (0, 0));
    // Both senders start at line rate, HPCC's within its window of one BDP (W_init = B·T): the
    // first round trip queues at most that much (29 KB here), and then HPCC, seeing the queue
    // and a full link, drains it and holds it near empty. DCQCN has no window: its senders
    // keep the queue growing until marks, then CNPs, come back (128 KB here).
    assert!(
        h.peak_buffer_bytes < d.peak_buffer_bytes,
        "HPCC's peak {} B against DCQCN's {} B",
        h.peak_buffer_bytes,
        d.peak_buffer_bytes
    );
    // 2 MB through one 100 Gb/s link takes 160 µs, and 168 µs at HPCC's η = 95 %: each flow
    // takes about that (they share the link), with the first round trips' cut and regrowth on
    // top (about 185 µs here).
    for f in &hpcc.flows {
        let fct = f.fct_us.expect("finished");
        assert!(
            (160.0..200.0).contains(&fct),
            "flow {}: {fct} µs",
            f.flow_id
        );
        // Never cut to a trickle: each keeps about half the link.
        let min = f.min_rate_gbps.expect("HPCC paces");
        assert!(
            min > 25.0,
            "flow {}: its rate fell to {min} Gb/s",
            f.flow_id
        );
    }
}

/// INT's bytes are on the wire: each ACK echoes the 2-byte header and the one switch's 8-byte
/// record, so with every data packet delivered once (BDP-FC holds the queue within the
/// buffer) and acknowledged, HPCC's
/// ACKs carry 74 bytes where a run with no telemetry's carry 64.
#[test]
fn acks_echo_the_telemetry_bytes() {
    let hpcc = incast("hpcc", "irn");
    let plain = incast("none", "irn");
    let (h, p) = (&hpcc.summary, &plain.summary);
    assert_eq!((h.flows_incomplete, p.flows_incomplete), (0, 0));
    assert_eq!((h.retransmissions, p.retransmissions), (0, 0));
    assert!(p.control_bytes.ack > 0);
    assert_eq!(h.control_bytes.ack * 64, p.control_bytes.ack * 74);
}

/// Swift on the same incast: the queue stays below DCQCN's, the flows finish, and each flow's
/// target counts its one switch.
#[test]
fn swift_bounds_the_incast_queue_by_its_target_delay() {
    let swift = incast("swift", WITHOUT_CAP);
    let dcqcn = incast("dcqcn", WITHOUT_CAP);
    let (s, d) = (&swift.summary, &dcqcn.summary);
    assert_eq!((s.flows_incomplete, s.drops), (0, 0));
    assert!(
        s.peak_buffer_bytes < d.peak_buffer_bytes,
        "Swift's peak {} B against DCQCN's {} B",
        s.peak_buffer_bytes,
        d.peak_buffer_bytes
    );
    for f in &swift.flows {
        let fct = f.fct_us.expect("finished");
        assert!(
            (160.0..250.0).contains(&fct),
            "flow {}: {fct} µs",
            f.flow_id
        );
    }
}

/// Swift's `initial_window`: 16 senders into one port, starting at one packet instead of a
/// base target's worth of line rate each, put less into the port's buffer at their start and
/// still finish.
#[test]
fn swift_starts_from_its_initial_window() {
    let run = |set: &[&str]| {
        let text = "[topology]\nkind = \"star\"\nhosts = 17\nlink_rate = \"100Gbps\"\n\
                    link_delay = \"1us\"\n[switch]\nmodel = \"shared-buffer\"\n\
                    [workload]\nkind = \"incast\"\nsenders = 16\ntotal = \"4MB\"\nreceiver = 0\n\
                    [transport]\nkind = \"irn-without-bdp-fc\"\ncc = \"swift\"\n";
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        let s = scenario::parse(text, "t.toml", Path::new("."), &set).expect("valid scenario");
        irn_sim::run(&s.runs[0].config, &mut |_| {}).summary
    };
    let (full, one) = (run(&[]), run(&["transport.swift.initial_window=1"]));
    assert_eq!((full.flows_incomplete, one.flows_incomplete), (0, 0));
    assert!(
        2 * one.peak_buffer_bytes < full.peak_buffer_bytes,
        "peak buffer {} B from one packet against {} B at line rate",
        one.peak_buffer_bytes,
        full.peak_buffer_bytes
    );
}
