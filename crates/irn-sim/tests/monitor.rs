//! `[monitor]`'s time series on a network worked by hand: one switch, two senders into one
//! receiver; its summary of the busiest port; and the series leave every other result as it
//! was.

use irn_core::transport::TransportConfig;
use irn_core::{Bandwidth, Duration, Time};
use irn_sim::config::{Monitor, PfcConfig, PfcThreshold, SimConfig, SwitchConfig, SwitchModel};
use irn_sim::ids::{FlowId, HostIdx, PortId};
use irn_sim::series::{FlowSample, NicSample, PortSample, SeriesSink};
use irn_sim::topology::Topology;
use irn_sim::workload::{FlowClass, FlowSpec};
use irn_sim::RunResult;

const RATE: Bandwidth = Bandwidth::from_gbps(40);
const DELAY: Duration = Duration::from_us(2);
/// A full frame on the wire (1024 B payload + 62 B framing), and its time at 40 Gb/s.
const FRAME: u64 = 1086;
const FULL_NS: f64 = 217.2;

#[derive(Default)]
struct Rows {
    ports: Vec<PortSample>,
    nics: Vec<NicSample>,
    flows: Vec<FlowSample>,
}

impl SeriesSink for Rows {
    fn port(&mut self, row: &PortSample) {
        self.ports.push(row.clone());
    }
    fn nic(&mut self, row: &NicSample) {
        self.nics.push(row.clone());
    }
    fn flow(&mut self, row: &FlowSample) {
        self.flows.push(row.clone());
    }
}

/// Hosts 0 and 1 each send `packets` full packets to host 2 at t = 0, through one input-queued
/// switch with `buffer` bytes per input, sampled every microsecond.
fn two_into_one(packets: u64, buffer: u64, pfc: Option<u64>) -> SimConfig {
    let topology = Topology::star(3, RATE, DELAY).unwrap();
    let ports = (0..topology.ports().len() as u32).map(PortId).collect();
    let flow = |src| FlowSpec {
        src: HostIdx(src),
        dst: HostIdx(2),
        size_bytes: packets * 1024,
        start: Time::ZERO,
        class: FlowClass::Regular,
        verb: None,
    };
    SimConfig {
        monitor: Some(Monitor {
            interval: Duration::from_us(1),
            ports,
            flows: vec![FlowId(0)],
            nics: true,
            summary_from: None,
        }),
        ..SimConfig::new(
            topology,
            SwitchConfig {
                model: SwitchModel::InputQueued,
                buffer_bytes: buffer,
                pfc: pfc.map(|bytes| PfcConfig {
                    threshold: PfcThreshold::Bytes(bytes),
                    resume_gap_bytes: 2 * FRAME,
                    frames: Default::default(),
                }),
                ecn: None,
            },
            TransportConfig::irn(),
            vec![flow(0), flow(1)],
        )
    }
}

fn monitored(cfg: &SimConfig) -> (RunResult, Rows) {
    let mut rows = Rows::default();
    let result = irn_sim::run_monitored(cfg, &mut |_| {}, &mut rows);
    (result, rows)
}

/// The row of the port from `node` to `peer` at `time_us`.
fn port<'a>(rows: &'a Rows, node: &str, peer: &str, time_us: f64) -> &'a PortSample {
    rows.ports
        .iter()
        .find(|r| r.node.to_string() == node && r.peer.to_string() == peer && r.time_us == time_us)
        .unwrap_or_else(|| panic!("no row for {node} -> {peer} at {time_us} us"))
}

#[test]
fn occupancy_and_bytes_sent_match_the_hand_count() {
    let (_, rows) = monitored(&two_into_one(20, 1_000_000, None));
    // Packet k of each sender is in the switch at A_k = 2 us + k × 217.2 ns; the output to
    // host 2 starts a packet at each A_j, taking the inputs in turn (0, 1, 0, ...). With n
    // arrivals per input by t, n packets have started: n wait for the output (2n − n), and
    // input 0 holds floor(n/2) of them, input 1 ceil(n/2).
    for (t, n) in [(3.0, 4), (4.0, 9), (5.0, 13), (6.0, 18)] {
        let n_check = ((t * 1000.0 - 2000.0) / FULL_NS).floor() as u64;
        assert_eq!(n, n_check);
        let out = port(&rows, "switch:0", "host:2", t);
        assert_eq!(out.queue_bytes, n * FRAME, "output queue at {t} us");
        let in0 = port(&rows, "switch:0", "host:0", t);
        let in1 = port(&rows, "switch:0", "host:1", t);
        assert_eq!(in0.buffer_bytes, Some(n / 2 * FRAME), "input 0 at {t} us");
        assert_eq!(
            in1.buffer_bytes,
            Some(n.div_ceil(2) * FRAME),
            "input 1 at {t} us"
        );
        assert_eq!((out.paused, out.pause_sent, out.drops), (0, 0, 0));
    }
    // All 40 are in by 6.344 us; by 7 us, 23 have started (2 us + 23 × 217.2 ns ≤ 7 us).
    assert_eq!(
        port(&rows, "switch:0", "host:2", 7.0).queue_bytes,
        17 * FRAME
    );
    // The output sends from 2.2172 us on, without a gap: 782.8 ns of the first window, at
    // 5 bytes a nanosecond, then every byte of the next.
    let first = port(&rows, "switch:0", "host:2", 3.0);
    assert_eq!((first.bytes_sent, first.utilization), (3914, 0.7828));
    let second = port(&rows, "switch:0", "host:2", 4.0);
    assert_eq!((second.bytes_sent, second.utilization), (5000, 1.0));
    // Host 0 sends 20 frames back to back from 0: done at 4.344 us.
    assert_eq!(port(&rows, "host:0", "switch:0", 1.0).bytes_sent, 5000);
    assert_eq!(port(&rows, "host:0", "switch:0", 5.0).bytes_sent, 1720);
    assert_eq!(port(&rows, "host:0", "switch:0", 6.0).bytes_sent, 0);
    let host = port(&rows, "host:0", "switch:0", 1.0);
    assert_eq!((host.tier, host.peer_tier, host.buffer_bytes), (0, 1, None));
    // A star has no named tiers: its switch is `switch 0`.
    let labels = (host.node_label.to_string(), host.peer_label.to_string());
    assert_eq!(labels, ("host 0".to_string(), "switch 0".to_string()));
    // NICs: both flows run from the start; host 2 receives both.
    let nic = |t: f64, h: u32| {
        rows.nics
            .iter()
            .find(|r| r.time_us == t && r.host == h)
            .unwrap()
    };
    assert_eq!(
        (
            nic(1.0, 0).flows_sending,
            nic(1.0, 1).flows_sending,
            nic(1.0, 2).flows_receiving
        ),
        (1, 1, 2)
    );
    assert_eq!(nic(1.0, 2).ordering_bytes, None);
    // Flow 0 (host 0's): the packet the switch starts at A_j reaches host 2 at
    // A_j + 217.2 ns + 2 us; by 5 us, j = 1..3 (inputs 0, 1, 0): 2 of flow 0's; by 6 us,
    // j = 1..8: 4.
    let delivered = |t: f64| {
        rows.flows
            .iter()
            .find(|r| r.time_us == t)
            .map(|r| r.delivered_bytes)
    };
    assert_eq!(delivered(5.0), Some(Some(2048)));
    assert_eq!(delivered(6.0), Some(Some(4096)));
    let last = rows.flows.last().unwrap();
    assert_eq!((last.done, last.delivered_bytes), (1, Some(20 * 1024)));
    assert_eq!(rows.flows.iter().filter(|r| r.done == 1).count(), 1);
}

#[test]
fn drops_and_pauses_add_up_to_the_summary() {
    // Without PFC, inputs of 3 frames overflow; with PFC at 2 frames, they pause the senders.
    let (lossy, rows) = monitored(&two_into_one(20, 3 * FRAME, None));
    let drops: u64 = rows.ports.iter().map(|r| r.drops).sum();
    assert!(drops > 0);
    assert_eq!(drops, lossy.summary.drops);
    // Every drop is of a packet bound for host 2.
    assert!(rows
        .ports
        .iter()
        .all(|r| r.drops == 0 || r.peer.to_string() == "host:2"));

    let (lossless, rows) = monitored(&two_into_one(20, 100_000, Some(2 * FRAME)));
    let sum = |f: fn(&PortSample) -> u64, node: &str| -> u64 {
        rows.ports
            .iter()
            .filter(|r| r.node.to_string().starts_with(node))
            .map(f)
            .sum()
    };
    let frames = lossless.summary.pause_frames;
    assert!(frames > 0);
    assert_eq!(sum(|r| r.pause_sent, "switch"), frames);
    assert_eq!(sum(|r| r.pause_received, "host"), frames);
    assert_eq!(sum(|r| r.pause_received, "switch"), 0);
    let paused_us: f64 = rows.ports.iter().map(|r| r.paused_us).sum();
    assert!((paused_us - lossless.summary.paused_time_us).abs() < 1e-6);
    assert!(rows.ports.iter().any(|r| r.paused == 1));
}

#[test]
fn the_bottleneck_summary_counts_the_busiest_ports_samples_from_summary_from_on() {
    let mut cfg = two_into_one(20, 1_000_000, None);
    cfg.monitor.as_mut().unwrap().summary_from = Some(Duration::from_us(4));
    let (result, rows) = monitored(&cfg);
    let b = result
        .summary
        .bottleneck
        .expect("a switch port was sampled");
    // The busiest port is the output to host 2, which carries all 40 packets.
    let counted: Vec<&PortSample> = (rows.ports.iter())
        .filter(|r| r.node.to_string() == "switch:0" && r.peer.to_string() == "host:2")
        .filter(|r| r.time_us >= 4.0)
        .collect();
    assert_eq!(b.port, counted[0].port);
    assert_eq!(b.samples, counted.len() as u64);
    // Its queue is longest at 6 us (18 frames, see the hand count above); before 4 us it is
    // shorter, so leaving those samples out changes the mean, not the peak.
    assert_eq!(b.peak_queue_bytes, 18 * FRAME);
    let mean = counted.iter().map(|r| r.queue_bytes as f64).sum::<f64>() / counted.len() as f64;
    assert!((b.avg_queue_bytes - mean).abs() < 1e-9);
    // It sends without a gap from 2.2172 us until the 40th frame is out at 10.9052 us: every
    // window from 4 us to 10 us is full, 5,000 bytes at 40 Gb/s.
    for r in counted.iter().filter(|r| r.time_us <= 10.0) {
        assert_eq!(r.bytes_sent, 5000, "at {} us", r.time_us);
    }
    let sent: u64 = counted.iter().map(|r| r.bytes_sent).sum();
    let capacity = 5000.0 * counted.len() as f64;
    assert!((b.utilization - sent as f64 / capacity).abs() < 1e-12);
    assert_eq!(b.drops, 0);
    // From a time after the last sample, nothing is counted: no summary.
    cfg.monitor.as_mut().unwrap().summary_from = Some(Duration::from_ms(1));
    assert_eq!(monitored(&cfg).0.summary.bottleneck, None);
}

#[test]
fn a_monitor_changes_no_other_result() {
    for mut cfg in [
        two_into_one(20, 3 * FRAME, None),
        two_into_one(20, 100_000, Some(2 * FRAME)),
    ] {
        let (with, rows) = monitored(&cfg);
        let without = irn_sim::run(&cfg, &mut |_| {});
        assert!(!rows.ports.is_empty());
        assert_eq!(format!("{:?}", with.flows), format!("{:?}", without.flows));
        // Without `summary_from` the summary is the same; with it, `bottleneck` is the only
        // addition.
        assert_eq!(with.summary.bottleneck, None);
        assert_eq!(
            serde_json::to_string(&with.summary).unwrap(),
            serde_json::to_string(&without.summary).unwrap()
        );
        cfg.monitor.as_mut().unwrap().summary_from = Some(Duration::ZERO);
        let (mut with, _) = monitored(&cfg);
        assert!(with.summary.bottleneck.take().is_some());
        assert_eq!(
            serde_json::to_string(&with.summary).unwrap(),
            serde_json::to_string(&without.summary).unwrap()
        );
        // And again: the same rows.
        let (_, again) = monitored(&cfg);
        assert_eq!(again.ports, rows.ports);
        assert_eq!(again.flows, rows.flows);
    }
}

/// Takes rows until it holds `limit` NIC rows, then says it is full.
struct Capped {
    rows: Rows,
    limit: usize,
}

impl SeriesSink for Capped {
    fn port(&mut self, row: &PortSample) {
        self.rows.port(row);
    }
    fn nic(&mut self, row: &NicSample) {
        self.rows.nic(row);
    }
    fn flow(&mut self, row: &FlowSample) {
        self.rows.flow(row);
    }
    fn full(&self) -> bool {
        self.rows.nics.len() >= self.limit
    }
}

/// A full sink stops the sampling at once (three NICs a sample: full after the second) and
/// leaves the run's results as they were.
#[test]
fn a_full_sink_stops_the_sampling_not_the_run() {
    let cfg = two_into_one(20, 100_000, None);
    let mut capped = Capped {
        rows: Rows::default(),
        limit: 4,
    };
    let with = irn_sim::run_monitored(&cfg, &mut |_| {}, &mut capped);
    let times: std::collections::BTreeSet<u64> =
        capped.rows.nics.iter().map(|r| r.time_us as u64).collect();
    assert_eq!(times.into_iter().collect::<Vec<_>>(), [1, 2]);
    let (all, rows) = monitored(&cfg);
    assert!(rows.nics.len() > 6, "{}", rows.nics.len());
    assert_eq!(format!("{:?}", with.flows), format!("{:?}", all.flows));
}
