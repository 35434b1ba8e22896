//! Networks and switches the simulator's test files share.

#![allow(dead_code)] // each test binary uses a subset

use irn_core::{Bandwidth, Duration};
use irn_sim::ids::NodeId;
use irn_sim::topology::{LinkSpec, NodeKind, Topology};

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
