//! DCQCN's notification point in the simulator: with `cnp_on_nack` (the ConnectX's behaviour,
//! the `mlx` preset), every NACK a receiver sends paces a CNP back to the sender, marked packet
//! or not; without it, only CE marks do.

use irn_core::cc::{CcConfig, CnpCarrier, DcqcnParams};
use irn_core::transport::TransportConfig;
use irn_core::{Bandwidth, Duration, Time};
use irn_sim::config::{SimConfig, SwitchConfig, SwitchModel};
use irn_sim::ids::HostIdx;
use irn_sim::metrics::Summary;
use irn_sim::topology::Topology;
use irn_sim::workload::{FlowClass, FlowSpec};

/// Four hosts into one through a switch with a 30 KB buffer, no PFC and no ECN marking: the
/// only congestion signal left is loss, and so the only CNPs are those NACKs pace.
fn lossy_incast(transport: TransportConfig, p: DcqcnParams) -> Summary {
    let flows = (1..=4)
        .map(|s| FlowSpec {
            src: HostIdx(s),
            dst: HostIdx(0),
            size_bytes: 300_000,
            start: Time::ZERO,
            class: FlowClass::Regular,
            verb: None,
        })
        .collect();
    let cfg = SimConfig {
        seed: 3,
        ..SimConfig::new(
            Topology::star(5, Bandwidth::from_gbps(40), Duration::from_us(2)).unwrap(),
            SwitchConfig {
                model: SwitchModel::InputQueued,
                buffer_bytes: 30_000,
                pfc: None,
                ecn: None,
            },
            TransportConfig {
                cc: CcConfig::Dcqcn(p),
                ..transport
            },
            flows,
        )
    };
    irn_sim::run(&cfg, &mut |_| {}).summary
}

#[test]
fn cnp_on_nack_sends_one_cnp_per_nack_without_marks() {
    let unpaced = DcqcnParams {
        cnp_interval: Duration::ZERO,
        ..DcqcnParams::default()
    };
    for transport in [TransportConfig::roce(false), TransportConfig::irn()] {
        // The paper's notification point: NACKs but no marks, so no CNP and no rate cut.
        let off = lossy_incast(transport, unpaced);
        assert!(off.drops > 0 && off.nacks > 0, "{off:?}");
        assert_eq!((off.ecn_marks, off.cnps), (0, 0), "{off:?}");
        assert_eq!(off.cc_avg_min_rate_gbps, Some(40.0), "{off:?}");
        assert_eq!(off.flows_incomplete, 0);
        // With CNP-on-NACK and no pacing, each NACK brings exactly one CNP, and senders slow.
        let on = lossy_incast(
            transport,
            DcqcnParams {
                cnp_on_nack: true,
                ..unpaced
            },
        );
        assert!(on.nacks > 0, "{on:?}");
        assert_eq!(on.ecn_marks, 0);
        assert_eq!(on.cnps, on.nacks, "{transport:?}: {on:?}");
        assert!(on.cc_avg_min_rate_gbps.is_some_and(|r| r < 40.0), "{on:?}");
        assert_eq!(on.flows_incomplete, 0);
        // The notification point's interval paces NACK-driven CNPs like marked ones.
        let paced = lossy_incast(
            transport,
            DcqcnParams {
                cnp_on_nack: true,
                cnp_interval: Duration::from_us(50),
                ..unpaced
            },
        );
        assert!(paced.cnps > 0 && paced.cnps < paced.nacks, "{paced:?}");
    }
}

/// ns-3's accounting: a CNP rides the next reply as its BECN bit. As many CNPs, each cutting the
/// sender's rate, and none of them a frame on the reverse path.
#[test]
fn cnps_on_replies_cost_no_frames() {
    let mlx = DcqcnParams {
        cnp_interval: Duration::ZERO,
        cnp_on_nack: true,
        ..DcqcnParams::default()
    };
    for transport in [TransportConfig::roce(false), TransportConfig::irn()] {
        let frames = lossy_incast(transport, mlx);
        let on_acks = lossy_incast(
            transport,
            DcqcnParams {
                cnp_carrier: CnpCarrier::Ack,
                ..mlx
            },
        );
        assert!(frames.control_bytes.cnp > 0, "{frames:?}");
        assert_eq!(on_acks.control_bytes.cnp, 0, "{on_acks:?}");
        assert_eq!(on_acks.cnps, on_acks.nacks, "{transport:?}: {on_acks:?}");
        assert!(
            on_acks.cc_avg_min_rate_gbps.is_some_and(|r| r < 40.0),
            "{on_acks:?}"
        );
        assert_eq!(on_acks.flows_incomplete, 0);
    }
}
