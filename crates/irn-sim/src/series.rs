//! Time series: what `[monitor]` samples, one row per sampled entity per sample, handed to a
//! [`SeriesSink`] as it is taken (the CLI streams them into `series/ports.csv`, `nics.csv` and
//! `flows.csv`), so a run holds no series in memory however long it goes on.
//!
//! Each row says when (`time_us`), which entity, then its metrics; counts ("since the last
//! sample") cover the window `(time_us - interval, time_us]`. Column names are the fields'
//! names, in order; [`PortSample::HEADER`] and its siblings list them for a writer that puts
//! the header down before the first row (a run with no sample still has its header).

use std::fmt;

use serde::{Serialize, Serializer};

use crate::topology::NodeLabel;

/// Where the rows go. The simulation calls it from its sample event, in time order and, within
/// a sample, ports, then NICs, then flows, each in increasing id order.
pub trait SeriesSink {
    fn port(&mut self, row: &PortSample);
    fn nic(&mut self, row: &NicSample);
    fn flow(&mut self, row: &FlowSample);
    /// Whether the sink takes no more rows (its files reached their limit): the monitor then
    /// stops sampling, and the run goes on without it.
    fn full(&self) -> bool {
        false
    }
}

/// A node as the `[monitor] ports` selectors name it: `switch:3`, `host:5`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeName {
    pub switch: bool,
    pub index: u32,
}

impl fmt::Display for NodeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.switch { "switch" } else { "host" };
        write!(f, "{kind}:{}", self.index)
    }
}

impl Serialize for NodeName {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One egress port at one sample (`series/ports.csv`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PortSample {
    pub time_us: f64,
    /// The port's global number.
    pub port: u32,
    /// Its node, and its number there.
    pub node: NodeName,
    pub local: u16,
    /// The node at the far end of its link.
    pub peer: NodeName,
    /// Hop distances from the nearest host of the node and of the peer: the link's tier.
    pub tier: u32,
    pub peer_tier: u32,
    /// Data bytes queued for this output (0 at a NIC, which makes packets as it sends them).
    pub queue_bytes: u64,
    /// The buffer behind it, at a switch: the shared-buffer switch's pool in use (the same for
    /// every port of the switch), or the input-queued switch's buffer of this port as an input;
    /// empty at a NIC.
    pub buffer_bytes: Option<u64>,
    /// Data is paused by the peer now (1) or not (0)...
    pub paused: u8,
    /// ...and was for this long in the window.
    pub paused_us: f64,
    /// PFC PAUSE frames this port sent upstream (on behalf of its node's input) and received
    /// from its peer in the window; resume frames are not counted.
    pub pause_sent: u64,
    pub pause_received: u64,
    /// Bytes serialized onto the link in the window (frames on the wire, headers included)...
    pub bytes_sent: u64,
    /// ...as a fraction of what the link could carry in it.
    pub utilization: f64,
    /// Data packets marked CE leaving this port, and data packets dropped that were bound for
    /// it, in the window.
    pub ecn_marks: u64,
    pub drops: u64,
    /// Packets the link leaving this port lost on the wire in the window (a lossy link,
    /// `crate::loss`; 0 on a clean one), apart from `drops`.
    pub link_losses: u64,
    /// Its node and the peer by tier and index within the tier (`leaf 3`, `spine 5`,
    /// `host 12`; `switch 9` without named tiers): [`Topology::node_label`]. Last, so the
    /// columns before keep their places.
    ///
    /// [`Topology::node_label`]: crate::topology::Topology::node_label
    pub node_label: NodeLabel,
    pub peer_label: NodeLabel,
    /// The pause times of the PAUSE frames counted in `pause_sent`, in quanta, summed (an XOFF
    /// without a time adds none): at a long link's receiving end, what its pause control asked
    /// of the sender in the window (the NRL slides' "pause to source"; 65,535 quanta are one
    /// longest pause). After the labels, so the columns before keep their places.
    pub pause_quanta_sent: u64,
}

impl PortSample {
    pub const HEADER: [&'static str; 21] = [
        "time_us",
        "port",
        "node",
        "local",
        "peer",
        "tier",
        "peer_tier",
        "queue_bytes",
        "buffer_bytes",
        "paused",
        "paused_us",
        "pause_sent",
        "pause_received",
        "bytes_sent",
        "utilization",
        "ecn_marks",
        "drops",
        "link_losses",
        "node_label",
        "peer_label",
        "pause_quanta_sent",
    ];
}

/// One NIC at one sample (`series/nics.csv`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NicSample {
    pub time_us: f64,
    pub host: u32,
    /// Flows that have started and not finished, with this host as source / as destination.
    pub flows_sending: u32,
    pub flows_receiving: u32,
    /// The ordering layer's memory on this NIC now (its running connections' footprints, as
    /// `summary.json`'s sampled ordering memory counts it); empty without a layer.
    pub ordering_bytes: Option<u64>,
}

impl NicSample {
    pub const HEADER: [&'static str; 5] = [
        "time_us",
        "host",
        "flows_sending",
        "flows_receiving",
        "ordering_bytes",
    ];
}

/// One selected flow at one sample (`series/flows.csv`), from its start to the first sample
/// after it finished.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowSample {
    pub time_us: f64,
    pub flow: u32,
    /// Bytes the receiver holds in order or placed (its transport's accepted packets, each an
    /// MTU but the last), the flow's size once received; empty for a verbs flow.
    pub delivered_bytes: Option<u64>,
    /// The sender's congestion control now: its pacing rate if rate-based, its window in
    /// packets if window-based (the other is empty; both without congestion control, and
    /// once the flow has ended at both ends: received and every byte acknowledged).
    pub rate_gbps: Option<f64>,
    pub window_packets: Option<u32>,
    /// The receiver has the whole message (1) or not (0).
    pub done: u8,
}

impl FlowSample {
    pub const HEADER: [&'static str; 6] = [
        "time_us",
        "flow",
        "delivered_bytes",
        "rate_gbps",
        "window_packets",
        "done",
    ];
}
