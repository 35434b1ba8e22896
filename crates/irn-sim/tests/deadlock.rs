//! What the summary says of ports still paused when a run ends with flows unfinished: a
//! deadlock (`pause_cycle`) only when paused ports wait on each other in a cycle; pauses from
//! hosts or waits for credit on a one-switch star, where no cycle is possible, are counted by
//! cause and are no deadlock. The Jellyfish deadlock is in `tests/jellyfish.rs`.

use std::path::Path;

use irn_sim::metrics::PausedAtEnd;
use irn_sim::scenario;
use irn_sim::RunResult;

/// Three hosts send 1 MB each to host 0 on a one-switch star, and the run is cut off 50 µs
/// after they start, with `extra` keys.
fn incast(extra: &str) -> RunResult {
    let text = format!(
        r#"
[topology]
kind = "star"
hosts = 4
link_rate = "10Gbps"
link_delay = "1us"
[workload]
kind = "incast"
senders = 3
total = "3MB"
receiver = 0
[transport]
kind = "roce"
[run]
drain_limit = "50us"
{extra}"#
    );
    let s = scenario::parse(&text, "t.toml", Path::new("."), &[]).expect("valid scenario");
    irn_sim::run(&s.runs[0].config, &mut |_| {})
}

#[test]
fn host_pauses_on_a_star_are_no_deadlock() {
    // Host 0 pauses its switch from the start for longer than the run.
    let r = incast(
        "[switch]\npfc = true\n[pauses]\nhosts = [0]\ngap = \"1ns\"\nlength = \"1ms\"\n\
         start = \"1ns\"\n",
    );
    let s = &r.summary;
    assert!(s.flows_incomplete > 0);
    let by = s.ports_paused_at_end_by.expect("ports paused at the end");
    assert_eq!(by.hosts, 1, "{by:?}");
    assert_eq!(
        Some(by.hosts + by.switches + by.credit),
        s.ports_paused_at_end
    );
    assert_eq!(s.pause_cycle, None);
}

#[test]
fn credit_waits_on_a_star_are_no_deadlock() {
    let r = incast("[switch]\nmodel = \"input-queued\"\nbuffer = \"30KB\"\ncredits = true\n");
    let s = &r.summary;
    assert!(s.flows_incomplete > 0);
    let by = s
        .ports_paused_at_end_by
        .expect("ports waiting for credit at the end");
    assert!(by.credit > 0 && by.hosts == 0 && by.switches == 0, "{by:?}");
    assert_eq!(s.pause_cycle, None);
}

#[test]
fn nothing_paused_nothing_said() {
    let r = incast("");
    assert!(r.summary.flows_incomplete > 0);
    assert_eq!(r.summary.ports_paused_at_end_by, None::<PausedAtEnd>);
    assert_eq!(r.summary.pause_cycle, None);
}
