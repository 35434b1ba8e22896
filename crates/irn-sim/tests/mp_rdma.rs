//! MP-RDMA in the simulator: on a leaf-spine with ECMP, each packet's virtual path (its UDP
//! source port) is hashed with its flow, so one flow's data crosses several spines where every
//! other transport keeps a flow on one; every flow finishes, and runs repeat exactly.

mod common;

use std::collections::BTreeSet;

use irn_core::transport::{MpRdmaParams, TransportConfig};
use irn_core::{Bandwidth, Duration, Time};
use irn_sim::config::{EcnConfig, LoadBalancing, SimConfig};
use irn_sim::ids::HostIdx;
use irn_sim::port::OwnerKind;
use irn_sim::sim::trace::TraceEvent;
use irn_sim::topology::Topology;
use irn_sim::workload::{FlowClass, FlowSpec};

const RATE: Bandwidth = Bandwidth::from_gbps(40);
const LEAVES: usize = 2;
const SPINES: usize = 4;

/// Two leaves of four hosts under four spines; every host of leaf 0 sends 200 KB to its peer
/// under leaf 1 at once, over DCTCP-style ECN marking.
fn config(transport: TransportConfig) -> SimConfig {
    let topology = Topology::leaf_spine(
        LEAVES as u32,
        SPINES as u32,
        4,
        RATE,
        RATE,
        Duration::from_us(1),
    )
    .unwrap();
    let flows = (0..4)
        .map(|h| FlowSpec {
            src: HostIdx(h),
            dst: HostIdx(h + 4),
            size_bytes: 200_000,
            start: Time::ZERO,
            class: FlowClass::Regular,
            verb: None,
        })
        .collect();
    let mut switch = common::lossy_switch();
    switch.ecn = Some(EcnConfig::dctcp(RATE, 1086));
    SimConfig {
        seed: 7,
        load_balancing: LoadBalancing::Ecmp,
        ..SimConfig::new(topology, switch, transport, flows)
    }
}

/// The spines (switch indices after the leaves) that sent data packets of flow 0.
fn spines_carrying_flow_0(cfg: &SimConfig) -> (BTreeSet<usize>, irn_sim::RunResult) {
    let mut spines = BTreeSet::new();
    let result = irn_sim::run_traced(
        cfg,
        &[0],
        |row: &irn_sim::sim::trace::TraceRow| {
            if let (OwnerKind::Switch(s), TraceEvent::Dequeue, Some(bytes)) =
                (row.node, row.event, row.bytes)
            {
                if s >= LEAVES && bytes > 64 {
                    spines.insert(s);
                }
            }
        },
        &mut |_| {},
        None,
    );
    (spines, result)
}

#[test]
fn mp_rdma_spreads_one_flow_over_several_spines_and_finishes() {
    let cfg = config(TransportConfig::mp_rdma(MpRdmaParams::PAPER));
    let (spines, result) = spines_carrying_flow_0(&cfg);
    let s = &result.summary;
    assert_eq!(s.flows_incomplete, 0, "{s:?}");
    assert!(spines.len() > 1, "flow 0's data crossed only {spines:?}");
    // The same scenario and seed give the same run.
    let again = irn_sim::run(&cfg, &mut |_| {});
    assert_eq!(&again.summary, s);
    assert_eq!(format!("{:?}", again.flows), format!("{:?}", result.flows));
}

#[test]
fn irn_keeps_one_flow_on_one_spine() {
    let (spines, result) = spines_carrying_flow_0(&config(TransportConfig::irn()));
    assert_eq!(result.summary.flows_incomplete, 0);
    assert_eq!(spines.len(), 1, "{spines:?}");
}
