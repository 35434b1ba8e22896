//! Networks and switches the simulator's test files share.

#![allow(dead_code)] // each test binary uses a subset

use irn_core::{Bandwidth, Duration, Time};
use irn_sim::ids::{HostIdx, NodeId};
use irn_sim::topology::{LinkSpec, NodeKind, Topology};
use irn_sim::workload::{FlowClass, FlowSpec};

/// A message of `size_bytes` from host `src` to host `dst`, posted at t = 0.
pub fn flow(src: u32, dst: u32, size_bytes: u64) -> FlowSpec {
    FlowSpec {
        src: HostIdx(src),
        dst: HostIdx(dst),
        size_bytes,
        start: Time::ZERO,
        class: FlowClass::Regular,
        verb: None,
    }
}

/// Host 0 — switch 2 — a long link — switch 3 — host 1. The source's link and the long link
/// run at `rate`, the sink's at `sink_rate`; the hosts' links are `short` one way, the long
/// one `long`. Ports: hosts 0 and 1 have 0 and 1, switch 2 has 2 (to host 0) and 3 (the long
/// link), switch 3 has 4 (the long link) and 5 (to host 1).
pub fn long_line(
    rate: Bandwidth,
    sink_rate: Bandwidth,
    short: Duration,
    long: Duration,
) -> Topology {
    let link = |a, b, rate, delay| LinkSpec {
        a: NodeId(a),
        b: NodeId(b),
        rate,
        delay,
    };
    Topology::from_links(
        vec![
            NodeKind::Host,
            NodeKind::Host,
            NodeKind::Switch,
            NodeKind::Switch,
        ],
        vec![
            link(0, 2, rate, short),
            link(2, 3, rate, long),
            link(3, 1, sink_rate, short),
        ],
    )
    .unwrap()
}

/// Host 0 — switch 2 — two parallel links (1 µs and 3 µs) — switch 3 — host 1, every link at
/// `rate`: two equal-cost paths whose delays differ by 2 µs, so sprayed packets overtake each
/// other (ten full frames at 40 Gb/s).
pub fn two_paths(rate: Bandwidth) -> Topology {
    let link = |a, b, delay_us| LinkSpec {
        a: NodeId(a),
        b: NodeId(b),
        rate,
        delay: Duration::from_us(delay_us),
    };
    Topology::from_links(
        vec![
            NodeKind::Host,
            NodeKind::Host,
            NodeKind::Switch,
            NodeKind::Switch,
        ],
        vec![link(0, 2, 1), link(2, 3, 1), link(2, 3, 3), link(3, 1, 1)],
    )
    .unwrap()
}

/// The IRN paper's switch without PFC or ECN: input-queued, 240 KB per input.
pub fn lossy_switch() -> irn_sim::config::SwitchConfig {
    irn_sim::config::SwitchConfig {
        model: irn_sim::config::SwitchModel::InputQueued,
        buffer_bytes: 240_000,
        pfc: None,
        ecn: None,
    }
}

/// The input-queued switch with `buffer_bytes` per input and, with `pfc`, PFC at the lossless
/// threshold resuming two full frames below; no ECN.
pub fn input_queued_switch(buffer_bytes: u64, pfc: bool) -> irn_sim::config::SwitchConfig {
    use irn_sim::config::{PfcConfig, PfcThreshold};
    irn_sim::config::SwitchConfig {
        buffer_bytes,
        pfc: pfc.then_some(PfcConfig {
            threshold: PfcThreshold::Auto,
            resume_gap_bytes: 2 * 1086,
            frames: Default::default(),
        }),
        ..lossy_switch()
    }
}
