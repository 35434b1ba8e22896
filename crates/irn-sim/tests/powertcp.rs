//! PowerTCP end to end: on a 2→1 incast, PowerTCP (from in-band telemetry) and θ-PowerTCP
//! (from RTTs alone) keep the bottleneck's queue below DCQCN's and finish near line rate; and
//! θ-PowerTCP's packets carry no telemetry.

use std::path::Path;

use irn_sim::config::SimConfig;
use irn_sim::scenario;
use irn_sim::RunResult;

/// IRN without BDP-FC, whose cap would bound the queue whatever the controller.
const WITHOUT_CAP: &str = "irn-without-bdp-fc";

/// `senders` hosts send 2 MB in all to host 0 at once on a one-switch star of 100 Gb/s links,
/// with transport `kind` under congestion control `cc` and its table's `keys`.
fn incast_of(senders: usize, cc: &str, kind: &str, keys: &str) -> SimConfig {
    let hosts = senders + 1;
    let text = format!(
        r#"
[topology]
kind = "star"
hosts = {hosts}
link_rate = "100Gbps"
link_delay = "1us"
[workload]
kind = "incast"
senders = {senders}
total = "2MB"
receiver = 0
[transport]
kind = "{kind}"
cc = "{cc}"
{keys}
"#
    );
    let s = scenario::parse(&text, "t.toml", Path::new("."), &[]).expect("valid scenario");
    s.runs.into_iter().next().expect("one run").config
}

/// The 2→1 incast.
fn incast_config(cc: &str, kind: &str, keys: &str) -> SimConfig {
    incast_of(2, cc, kind, keys)
}

fn incast(cc: &str, kind: &str, keys: &str) -> RunResult {
    irn_sim::run(&incast_config(cc, kind, keys), &mut |_| {})
}

const THETA: &str = "[transport.powertcp]\nvariant = \"theta\"";

/// Both variants against DCQCN: a lower peak queue, no drops, and each flow within 25 % of
/// sharing the link at line rate (2 MB through 100 Gb/s: 160 µs).
#[test]
fn powertcp_and_theta_keep_the_incast_queue_below_dcqcns_near_line_rate() {
    let dcqcn = incast("dcqcn", WITHOUT_CAP, "");
    for (name, keys) in [("PowerTCP", ""), ("θ-PowerTCP", THETA)] {
        let run = incast("powertcp", WITHOUT_CAP, keys);
        let (p, d) = (&run.summary, &dcqcn.summary);
        assert_eq!((p.flows_incomplete, p.drops), (0, 0), "{name}");
        assert!(
            p.peak_buffer_bytes < d.peak_buffer_bytes,
            "{name}'s peak {} B against DCQCN's {} B",
            p.peak_buffer_bytes,
            d.peak_buffer_bytes
        );
        for f in &run.flows {
            let fct = f.fct_us.expect("finished");
            assert!(
                (160.0..200.0).contains(&fct),
                "{name}, flow {}: {fct} µs",
                f.flow_id
            );
        }
    }
}

/// θ-PowerTCP asks for no telemetry: data packets carry no INT header, ACKs echo no records
/// (their bytes are those of a run without congestion control), and the largest frame is a
/// plain one; PowerTCP's carry both.
#[test]
fn theta_powertcp_carries_no_telemetry() {
    let plain = incast_config("none", "irn", "");
    let theta = incast_config("powertcp", "irn", THETA);
    let int = incast_config("powertcp", "irn", "");
    assert_eq!(theta.extra_header_bytes, plain.extra_header_bytes);
    assert_eq!(theta.max_frame_bytes(), plain.max_frame_bytes());
    assert_eq!(int.extra_header_bytes, plain.extra_header_bytes + 2);
    assert_eq!(int.max_frame_bytes(), plain.max_frame_bytes() + 2 + 8);
    let [plain, theta, int] = [&plain, &theta, &int].map(|c| irn_sim::run(c, &mut |_| {}));
    let acks = |r: &RunResult| r.summary.control_bytes.ack;
    for r in [&plain, &theta, &int] {
        assert_eq!(r.summary.flows_incomplete, 0);
        assert_eq!(r.summary.retransmissions, 0);
    }
    assert_eq!(acks(&theta), acks(&plain));
    // One switch: each ACK echoes the 2-byte header and one 8-byte record, 74 B against 64.
    assert_eq!(acks(&int) * 64, acks(&plain) * 74);
}

/// Eight senders, 256 KB each: eight first windows arrive at once, so the first round trip
/// queues several BDPs whatever the controller; after it PowerTCP drains the queue, and both
/// variants still peak below DCQCN and finish within 25 % of line rate (2 MB: 160 µs).
#[test]
fn an_eight_to_one_incast_stays_below_dcqcns_queue() {
    let run =
        |cc: &str, keys: &str| irn_sim::run(&incast_of(8, cc, WITHOUT_CAP, keys), &mut |_| {});
    let dcqcn = run("dcqcn", "");
    for (name, keys) in [("PowerTCP", ""), ("θ-PowerTCP", THETA)] {
        let r = run("powertcp", keys);
        let (p, d) = (&r.summary, &dcqcn.summary);
        assert_eq!((p.flows_incomplete, p.drops), (0, 0), "{name}");
        assert!(
            p.peak_buffer_bytes < d.peak_buffer_bytes,
            "{name}'s peak {} B against DCQCN's {} B",
            p.peak_buffer_bytes,
            d.peak_buffer_bytes
        );
        let last = r.flows.iter().filter_map(|f| f.fct_us).fold(0.0, f64::max);
        assert!(
            (160.0..200.0).contains(&last),
            "{name}: the last flow took {last} µs"
        );
    }
}
