//! A WRITE's last packet under an ordering layer (Eunomia §3.5.2, appendix A.1, Fig. 19): the
//! sender's hold costs one round trip on a network worked out by hand; the receiver's staging
//! costs its placement delay exactly when the last packet overtook the data, and nothing else;
//! under spraying, every flow still completes exactly once.

mod common;

use irn_core::ordering::{OrderingMode, WriteLast};
use irn_core::transport::TransportConfig;
use irn_core::{Bandwidth, Duration, Time};
use irn_sim::config::{LoadBalancing, Ordering, SimConfig};
use irn_sim::ids::HostIdx;
use irn_sim::topology::Topology;
use irn_sim::workload::{poisson, Cdf, FlowClass, FlowSpec, SizeDist};
use irn_sim::RunResult;

const RATE: Bandwidth = Bandwidth::from_gbps(40);
const STAGING: Duration = Duration::from_us(2);

fn config(
    topology: Topology,
    transport: TransportConfig,
    flows: Vec<FlowSpec>,
    load_balancing: LoadBalancing,
    write_last: WriteLast,
) -> SimConfig {
    let mode = OrderingMode::Eunomia;
    SimConfig {
        seed: 5,
        load_balancing,
        extra_header_bytes: mode.metadata_bytes(),
        ordering: Ordering {
            mode,
            write_last,
            ..Ordering::default()
        },
        ..SimConfig::new(topology, common::lossy_switch(), transport, flows)
    }
}

fn one_flow(size_bytes: u64) -> Vec<FlowSpec> {
    vec![FlowSpec {
        src: HostIdx(0),
        dst: HostIdx(1),
        size_bytes,
        start: Time::ZERO,
        class: FlowClass::Regular,
        verb: None,
    }]
}

fn run(cfg: &SimConfig) -> RunResult {
    irn_sim::run(cfg, &mut |_| {})
}

/// A full data packet on the wire: 1024 B payload + 62 B framing + Eunomia's 5 B of metadata,
/// at 40 Gb/s.
const FULL: u64 = 218_200;
/// An ACK (64 B) at 40 Gb/s.
const ACK: u64 = 12_800;
/// One link's delay in the star.
const DELAY: u64 = 2_000_000;

#[test]
fn holding_the_last_packet_costs_one_round_trip_by_hand() {
    // Ten full packets from host 0 to host 1 through one switch. Without the hold the FCT is
    // every packet serialized at the NIC, the last once more at the switch, and two link delays.
    // With it, packet 9 leaves only when the ACK for packet 8 is back: packet 8 arrives at
    // 10 FULL + 2 DELAY, its ACK crosses two hops (2 ACK + 2 DELAY), then packet 9 takes
    // 2 FULL + 2 DELAY: one data-plus-ACK round trip (FULL + 2 ACK + 4 DELAY) more.
    let off_ps = 11 * FULL + 2 * DELAY;
    let sender_ps = 10 * FULL + 2 * DELAY + 2 * ACK + 2 * DELAY + 2 * FULL + 2 * DELAY;
    assert_eq!(sender_ps - off_ps, FULL + 2 * ACK + 4 * DELAY);
    for transport in [TransportConfig::irn(), TransportConfig::roce(false)] {
        for (write_last, want_ps) in [
            (WriteLast::Off, off_ps),
            (WriteLast::Sender, sender_ps),
            // Nothing reorders on one path: nothing is staged, nothing costs more.
            (
                WriteLast::Receiver {
                    placement_delay: STAGING,
                },
                off_ps,
            ),
        ] {
            let star = Topology::star(2, RATE, Duration::from_ps(DELAY)).unwrap();
            let cfg = config(
                star,
                transport,
                one_flow(10 * 1024),
                LoadBalancing::Ecmp,
                write_last,
            );
            let r = run(&cfg);
            let f = &r.flows[0];
            assert_eq!(
                f.fct_us,
                Some(want_ps as f64 / 1e6),
                "{transport:?} {write_last:?}"
            );
            assert_eq!(r.summary.retransmissions, 0);
        }
    }
}

fn two_paths() -> Topology {
    common::two_paths(RATE)
}

#[test]
fn a_staged_last_packet_costs_its_placement_delay_and_only_then() {
    // Spraying alternates the two links, packet 0 first. With an odd number of packets the
    // last goes the way packet 0 went, with an even number the other way; whichever link is
    // slow, exactly one of a 3- and a 4-packet flow has its last packet overtake a packet sent
    // before it, and only that flow's FCT grows, by exactly the placement delay.
    let receiver = WriteLast::Receiver {
        placement_delay: STAGING,
    };
    let mut staged = 0;
    for packets in [3, 4] {
        let fct = |write_last| {
            let cfg = config(
                two_paths(),
                TransportConfig::irn(),
                one_flow(packets * 1024),
                LoadBalancing::Spray,
                write_last,
            );
            let r = run(&cfg);
            assert_eq!(r.summary.retransmissions, 0);
            let f = &r.flows[0];
            (f.fct_us.unwrap(), f.sender_fct_us.unwrap())
        };
        let ((off, off_acked), (late, late_acked)) = (fct(WriteLast::Off), fct(receiver));
        // The ACKs are not held: the sender finishes as before.
        assert_eq!(late_acked, off_acked);
        let extra = late - off;
        if extra != 0.0 {
            assert!(
                (extra - STAGING.as_us_f64()).abs() < 1e-9,
                "{packets}: {extra}"
            );
            staged += 1;
        }
    }
    assert_eq!(staged, 1);
}

#[test]
fn under_spray_every_write_completes_exactly_once_and_repeats_itself() {
    let flows = poisson(
        16,
        RATE,
        0.6,
        &SizeDist::Cdf(Cdf::irn_default()),
        Duration::from_us(200),
        9,
    );
    let receiver = WriteLast::Receiver {
        placement_delay: STAGING,
    };
    for transport in [TransportConfig::roce(false), TransportConfig::irn()] {
        let runs: Vec<(WriteLast, RunResult)> = [WriteLast::Off, WriteLast::Sender, receiver]
            .into_iter()
            .map(|write_last| {
                let topology = Topology::fat_tree(4, RATE, Duration::from_us(1)).unwrap();
                let cfg = config(
                    topology,
                    transport,
                    flows.clone(),
                    LoadBalancing::Spray,
                    write_last,
                );
                let (a, b) = (run(&cfg), run(&cfg));
                assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
                (write_last, a)
            })
            .collect();
        for (write_last, r) in &runs {
            let at = format!("{transport:?} {write_last:?}");
            assert_eq!(r.summary.flows_total, flows.len(), "{at}");
            assert_eq!(r.summary.flows_incomplete, 0, "{at}");
            assert_eq!(r.summary.ordering_blocks_at_end, Some(0), "{at}");
            for f in &r.flows {
                assert!(
                    f.fct_us.is_some() && f.sender_fct_us.is_some(),
                    "{at}: {f:?}"
                );
            }
        }
        let fcts =
            |i: usize| -> Vec<f64> { runs[i].1.flows.iter().map(|f| f.fct_us.unwrap()).collect() };
        let (off, sender, staged) = (fcts(0), fcts(1), fcts(2));
        // Staging changes nothing on the wire: each flow ends as without it, or one placement
        // delay later when its last packet overtook its data.
        let mut late = 0;
        for (o, s) in off.iter().zip(&staged) {
            let extra = s - o;
            assert!(
                extra.abs() < 1e-9 || (extra - STAGING.as_us_f64()).abs() < 1e-9,
                "{transport:?}: {o} -> {s}"
            );
            late += usize::from(extra > 1e-9);
        }
        assert!(
            late > 0,
            "{transport:?}: spraying reorders some last packets"
        );
        // Holding costs a round trip on every flow of more than one packet.
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        assert!(mean(&sender) > mean(&off), "{transport:?}");
    }
}
