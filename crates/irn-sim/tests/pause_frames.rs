//! PAUSE frames with a pause time (802.3 Annex 31B / 802.1Qbb) on networks worked by hand:
//! the timer runs out and the port resumes by itself, a newer frame extends it, a refresh in
//! time makes timed PFC behave exactly as XOFF/XON, and a late one lets the pause lapse.

use std::path::Path;

use irn_sim::scenario;
use irn_sim::RunResult;

/// One 1 MB flow from host 0 to host 1 through one switch, 10 Gb/s and 1 µs links, PFC on:
/// RoCE, which sends at line rate, so the switch's port to host 1 is never idle unless paused.
const ONE_FLOW: &str = r#"
[topology]
kind = "star"
hosts = 2
link_rate = "10Gbps"
link_delay = "1us"
[switch]
pfc = true
[workload]
kind = "incast"
senders = 1
total = "1MB"
receiver = 1
[transport]
kind = "roce"
"#;

fn run(text: &str) -> RunResult {
    let s = scenario::parse(text, "t.toml", Path::new("."), &[]).expect("valid scenario");
    irn_sim::run(&s.runs[0].config, &mut |_| {})
}

fn fct_us(r: &RunResult) -> f64 {
    assert_eq!(r.summary.drops, 0);
    r.flows[0].fct_us.expect("the flow finished")
}

/// A full frame's serialization at 10 Gb/s: 1086 B in 868.8 ns.
const FRAME_US: f64 = 0.8688;

/// The receiving host pauses its switch once for 50 µs, 500 µs into the run (the next pause
/// would come after the flow). The switch's port to it stops once its packet in serialization
/// is out and resumes by itself when the timer runs out: the flow finishes 50 µs later, less
/// whatever part of a frame was still being sent when the pause arrived.
#[test]
fn a_pause_runs_out_and_the_port_resumes_by_itself() {
    let base = fct_us(&run(ONE_FLOW));
    let paused = run(&format!(
        "{ONE_FLOW}[pauses]\nhosts = [1]\ngap = \"500us\"\nlength = \"50us\"\n"
    ));
    let delay = fct_us(&paused) - base;
    assert!(
        delay > 50.0 - FRAME_US && delay <= 50.0 + 1e-6,
        "{base} → {}: delayed {delay} µs",
        fct_us(&paused)
    );
    // The host's one frame; the 62.5 KB that arrive meanwhile fit under the switch's PFC
    // threshold, so it pauses no one itself.
    assert_eq!(paused.summary.pause_frames, 1);
    assert_eq!(paused.summary.resume_frames, 0);
}

/// A 5 ms pause is longer than one frame can ask for at 10 Gb/s (65,535 quanta = 3.36 ms): the
/// host resends the longest pause half-way through and a last frame for the rest; each newer
/// frame restarts the timer, so the port stays paused for the whole 5 ms (to a quantum). A
/// 10 MB flow (8.5 ms) is paused 5 ms in; the next pause would come after it.
#[test]
fn newer_frames_extend_the_pause() {
    let flow = ONE_FLOW.replace("1MB", "10MB");
    let base = fct_us(&run(&flow));
    let paused = run(&format!(
        "{flow}[pauses]\nhosts = [1]\ngap = \"5ms\"\nlength = \"5ms\"\n"
    ));
    let delay = fct_us(&paused) - base;
    // A quantum at 10 Gb/s is 51.2 ns.
    assert!(
        delay > 5000.0 - FRAME_US && delay <= 5000.0 + 0.0512,
        "delayed {delay} µs"
    );
}

/// Four senders into one receiver with a small buffer: timed PFC frames refreshed before they
/// run out, and an XON (time 0) that resumes at once, give exactly XOFF/XON's flows; only the
/// frame counts differ (the refreshes).
#[test]
fn timed_pfc_refreshed_in_time_is_xoff_xon() {
    let incast = r#"
[topology]
kind = "star"
hosts = 5
link_rate = "10Gbps"
link_delay = "1us"
[switch]
pfc = true
buffer = "60KB"
[workload]
kind = "incast"
senders = 4
total = "8MB"
receiver = 0
[transport]
kind = "roce"
"#;
    let xoff = run(incast);
    // Pauses of 200 quanta (10.24 µs at 10 Gb/s), refreshed every 5.12 µs.
    let timed = run(&incast.replace(
        "pfc = true",
        "pfc = true\npfc_frames = \"timed\"\npfc_pause_quanta = 200",
    ));
    assert_eq!(xoff.summary.drops, 0);
    assert_eq!(timed.summary.drops, 0);
    let fcts = |r: &RunResult| r.flows.iter().map(|f| f.fct_us).collect::<Vec<_>>();
    assert_eq!(fcts(&xoff), fcts(&timed));
    assert_eq!(xoff.summary.resume_frames, timed.summary.resume_frames);
    assert!(
        timed.summary.pause_frames > xoff.summary.pause_frames,
        "{} refreshed vs {}",
        timed.summary.pause_frames,
        xoff.summary.pause_frames
    );

    // Refreshed every 20 µs, a 2-quantum pause (102 ns) lapses at once: the senders go on
    // into a full buffer and packets are lost.
    let lapsing = run(&incast.replace(
        "pfc = true",
        "pfc = true\npfc_frames = \"timed\"\npfc_pause_quanta = 2\npfc_refresh = \"20us\"",
    ));
    assert!(lapsing.summary.drops > 0, "{:?}", lapsing.summary.drops);
}

/// A scenario whose refresh comes after the pause it renews is allowed, but PFC then counts as
/// lossy: timeouts must stay on.
#[test]
fn a_late_refresh_makes_pfc_lossy() {
    let text = format!("{ONE_FLOW}timeouts = \"off\"\n").replace(
        "pfc = true",
        "pfc = true\npfc_frames = \"timed\"\npfc_pause_quanta = 2\npfc_refresh = \"20us\"",
    );
    let err = scenario::parse(&text, "t.toml", Path::new("."), &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("pauses lapse between refreshes"), "{err}");
}
