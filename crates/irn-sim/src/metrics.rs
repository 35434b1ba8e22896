//! What a run measured: one record per flow and a summary (IRN §4.1, MODEL §5).
//!
//! FCT is from a flow's start until the receiver holds every byte (`flows.csv` and the summary;
//! `fct.txt` has ns-3's sender-side FCT instead, see [`crate::workload::ns3::FctRecord`]). Slowdown divides it by the
//! ideal FCT: the flow alone on its path at line rate — all its wire bytes serialized at the
//! path's bottleneck, plus the path's propagation delay, plus one full packet's
//! store-and-forward at every other hop. A verbs flow's wire bytes include its verb's headers,
//! and a Read's ideal adds the one-way trip of its request (the data moves only once the
//! request reaches the data's host) and the serialization of the responder's ACK of it.

use irn_core::packet::{PacketKind, CONTROL_FRAME_BYTES, DATA_FRAMING_BYTES, RETH_BYTES};
use irn_core::transport::packets_for;
use irn_core::verbs::{SEND_EXT_BYTES, WQE_SN_BYTES};
use irn_core::{Duration, Time};
use serde::{Deserialize, Serialize};

mod collectives;

pub use collectives::{CollectiveSummary, StepSummary};

use crate::config::SimConfig;
use crate::ids::HostIdx;
use crate::topology::ns3::node_of_host;
use crate::workload::ns3::{assign_ports, ns3_standalone_fct_ns, ns3_start_ns, FctRecord};
use crate::workload::{FlowClass, Verb};

/// What ConWeave did in a run: `summary.json`'s `conweave`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ConWeaveSummary {
    /// Epochs opened (each with an RTT request).
    pub epochs: u64,
    /// Reply deadlines missed: each sent a TAIL and moved the flow if a path was free.
    pub reroutes: u64,
    /// Data packets held in a reorder queue.
    pub held_packets: u64,
    /// Reorder queues flushed by their TAIL...
    pub flushed_by_tail: u64,
    /// ...and by their deadline (the TAIL late or lost).
    pub flushed_by_timer: u64,
    /// Early packets sent on out of order because their port had no reorder queue free
    /// (`reorder_queues`; 0 without a limit).
    pub queues_exhausted: u64,
    /// RTT replies and CLEARs sent...
    pub replies: u64,
    /// ...and NOTIFYs.
    pub notifies: u64,
    /// Their bytes on the wire (each crosses several links; counted once).
    pub control_bytes: u64,
    /// Flows moved off a failed path by reconverged routing, unknown to the destination ToR.
    pub failovers: u64,
    /// Flows that found their source ToR's flow table full (`flow_table`): sent by ECMP,
    /// without ConWeave.
    pub flows_untracked: u64,
}

/// Bytes on the wire of the control packets receivers sent, by kind: `summary.json`'s
/// `control_bytes`. Each packet counts once, however many links it crosses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ControlBytes {
    /// Cumulative ACKs.
    pub ack: u64,
    /// An ordering layer's SACKs (a packet held ahead of a gap).
    pub sack: u64,
    /// The transports' NACKs and an ordering layer's NACKs of packets it dropped.
    pub nack: u64,
    /// DCQCN's congestion notifications.
    pub cnp: u64,
}

impl ControlBytes {
    /// Counts a control packet of `bytes` on the wire.
    #[inline]
    pub fn add(&mut self, pkt: &irn_core::Packet, bytes: u32) {
        let bytes = u64::from(bytes);
        match pkt.kind {
            PacketKind::Ack { .. } => self.ack += bytes,
            PacketKind::Sack { .. } => self.sack += bytes,
            PacketKind::Nack { .. } | PacketKind::DropNack { .. } => self.nack += bytes,
            PacketKind::Cnp => self.cnp += bytes,
            PacketKind::Data { .. } => {}
        }
    }

    pub fn total(&self) -> u64 {
        self.ack + self.sack + self.nack + self.cnp
    }
}

/// Counters the network keeps during a run.
#[derive(Debug, Clone, Copy, Default)]
pub struct NetworkCounters {
    pub data_packets_sent: u64,
    pub retransmissions: u64,
    pub timeouts: u64,
    /// Packets that reached a receiver a second time.
    pub duplicates: u64,
    pub drops: u64,
    /// Packets lost on the wire by lossy links; `None` when no link is lossy.
    pub link_losses: Option<u64>,
    /// DIBS deflections, and drops of packets out of TTL; `None` without deflection.
    pub deflections: Option<u64>,
    pub ttl_drops: Option<u64>,
    /// Link failures: (links that went down, packets lost to them, packets held for them);
    /// `None` without.
    pub failures: Option<(u64, u64, u64)>,
    /// What ConWeave did; `None` without it.
    pub conweave: Option<ConWeaveSummary>,
    /// Ports still paused by PFC when a run ended with flows unfinished; `None` otherwise.
    pub paused_at_end: Option<u64>,
    /// Those ports by who paused them.
    pub paused_at_end_by: Option<PausedAtEnd>,
    pub pause_frames: u64,
    pub resume_frames: u64,
    /// Flow-control packets sent under credit flow control.
    pub credit_frames: u64,
    pub ecn_marks: u64,
    pub cnps: u64,
    /// Sum over all ports of the time each spent paused.
    pub paused_time: Duration,
    /// Mean over all ports of the fraction of the measured interval (the first flow's arrival
    /// to the end of the run) spent transmitting.
    pub link_utilization: f64,
    /// Payload bytes the receivers accepted in order, over every flow (finished or not).
    pub delivered_bytes: u64,
    /// `delivered_bytes` per second of the measured interval, in Gb/s.
    pub goodput_gbps: f64,
    pub peak_buffer_bytes: u64,
    pub events: u64,
    /// Packets that reached the far end of a link, counted once per link crossed (data and
    /// control alike): the simulator's work, beside its events.
    pub packet_hops: u64,
    /// The simulated clock when the run ended (from t = 0, not from the first arrival).
    pub sim_time: Duration,
    /// Finished verbs flows whose destination memory differs from what the verb should have
    /// put there (expected 0: out-of-order placement must be exact).
    pub verbs_data_errors: u64,
    /// Sums over flows of their [`FlowRecord`] counters of the same names.
    pub out_of_order: u64,
    pub recoveries: u64,
    pub nacks: u64,
    /// Mean over switch ports, and over host (NIC) ports, of the fraction of the measured
    /// interval each spent paused by its peer's PFC; `None` without ports of that kind.
    pub pause_fraction_switch_ports: Option<f64>,
    pub pause_fraction_host_ports: Option<f64>,
    /// Eunomia's ordering memory: the most bytes one NIC's memory controller held at once, and
    /// the blocks still allocated at the end over all NICs; `None` without an Eunomia layer.
    pub ordering_peak_bytes: Option<u64>,
    pub ordering_blocks_at_end: Option<u64>,
    /// Eunomia: the most state records one NIC held at once; `None` without Eunomia.
    pub ordering_peak_records: Option<u64>,
    /// Every NIC's ordering memory, sampled; `None` without an ordering layer.
    pub ordering_memory: Option<SampledMemory>,
    /// What the periodic pause controls saw at their checks; `None` without one.
    pub pause_control: Option<PauseControlLog>,
    /// Control packets the receivers sent, by kind.
    pub control_bytes: ControlBytes,
    /// Jain's index of the long-lived flows' shares (see [`Summary::jain_index`]); `None`
    /// when fewer than two flows were still running at the end.
    pub jain_index: Option<f64>,
    /// The goodput between the first and the last measured arrival (see
    /// [`Summary::arrival_goodput_gbps`]).
    pub arrival_goodput_gbps: Option<f64>,
    /// Packets the ordering layers dropped and NACKed (see [`Summary::ordering_drops`]);
    /// `None` without a layer.
    pub ordering_drops: Option<u64>,
    /// The busiest switch port `[monitor]` sampled (see [`Summary::bottleneck`]); `None`
    /// without a monitor sampling a switch port from `monitor.summary_from` on.
    pub bottleneck: Option<BottleneckSummary>,
}

/// `summary.json`'s `bottleneck`: the switch port `[monitor]` sampled that sent the most bytes
/// from `monitor.summary_from` on, as its samples there saw it. The whole-run metrics count a
/// start-up transient (an incast's first round trip) with the steady state that follows; this
/// counts only what comes after the time the scenario names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct BottleneckSummary {
    /// The port's global number, as `series/ports.csv` numbers it.
    pub port: u32,
    /// The samples counted (those at or after `monitor.summary_from`).
    pub samples: u64,
    /// The mean and the largest of its queue (data bytes waiting for it) at those samples.
    pub avg_queue_bytes: f64,
    pub peak_queue_bytes: u64,
    /// Bytes it sent in those samples' windows over what its link could carry in them.
    pub utilization: f64,
    /// Data packets bound for it that its switch dropped in those windows.
    pub drops: u64,
}

/// The periodic pause controls' checks (`[[pause_control]]` on-off or time-based), summed as
/// they go: each check reads its input's occupancy anyway, so this costs an addition per
/// check (one per longest pause) and nothing on the packet path.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PauseControlLog {
    /// Checks after their input first held data (before that the data is still on its way).
    pub checks: u64,
    /// The inputs' occupancy at those checks, summed.
    pub buffer_sum: u128,
    /// Those checks at which the input was empty while no port of its switch towards a host
    /// was paused: the sink could take data and none was there.
    pub starved: u64,
}

impl PauseControlLog {
    /// The summary's section.
    pub fn summary(&self) -> PauseControlSummary {
        let share = |n: u128| (self.checks > 0).then(|| n as f64 / self.checks as f64);
        PauseControlSummary {
            checks: self.checks,
            avg_buffer_bytes: share(self.buffer_sum),
            starved_fraction: share(u128::from(self.starved)),
        }
    }
}

/// `summary.json`'s `pause_control`: the long-haul inputs as their periodic pause control saw
/// them, once an interval (the longest pause by default), from the first check at which the
/// input held data: the NRL slides' buffer depth and data starvation (their slide on the
/// characteristic constant).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PauseControlSummary {
    /// The checks counted, over every periodic input.
    pub checks: u64,
    /// Mean occupancy at those checks; `null` without one.
    pub avg_buffer_bytes: Option<f64>,
    /// The share of those checks at which the input was empty while no port of its switch
    /// towards a host was paused (the sink not holding data back): the sink starved.
    pub starved_fraction: Option<f64>,
}

/// Every NIC's ordering memory over a run's samples (see `Summary::ordering_avg_nic_bytes`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SampledMemory {
    pub samples: u64,
    /// Over every sample and every NIC, the mean and the largest of the NIC's bytes; `None`
    /// without samples.
    pub avg_nic_bytes: Option<f64>,
    pub peak_nic_bytes: Option<u64>,
    /// `avg_nic_bytes` counting the bitmaps alone, without their state.
    pub avg_nic_bitmap_bytes: Option<f64>,
    /// Over every sample and every running connection, its mean bytes; `None` without any.
    pub avg_connection_bytes: Option<f64>,
}

/// One flow's outcome.
#[derive(Debug, Clone, Copy)]
pub struct FlowRecord {
    pub id: u32,
    pub src: HostIdx,
    pub dst: HostIdx,
    pub size_bytes: u64,
    /// When it started; for a flow that waits for others and never started (a flow it waits
    /// for did not finish), when it could have started at the earliest.
    pub start: Time,
    /// `false` for a flow that waited for others and never started.
    pub started: bool,
    /// When the receiver completed the message; `None` if the run ended first.
    pub received_at: Option<Time>,
    /// When the sender learned every byte was acknowledged.
    pub acked_at: Option<Time>,
    pub retransmissions: u64,
    pub timeouts: u64,
    /// Lowest rate rate-based congestion control paced the flow at.
    pub min_rate_bps: Option<u64>,
    /// Smallest window window-based congestion control allowed the flow.
    pub min_window: Option<u32>,
    pub class: FlowClass,
    pub verb: Option<Verb>,
    /// Data packets that arrived at the receiver ahead of the expected one.
    pub out_of_order: u64,
    /// The most packets by which one arrival was ahead of the expected one.
    pub max_reorder_distance: u64,
    /// Loss-recovery episodes the sender started: go-back-N rewinds, selective-repeat recovery
    /// entries.
    pub recoveries: u64,
    /// NACKs the receiver sent.
    pub nacks: u64,
    /// The most bytes of ordering memory its connection held; `None` without a layer.
    pub ordering_peak_bytes: Option<u32>,
    /// Packets its ordering layer dropped because the NIC's connection limit, and because its
    /// pool, refused the connection; `None` without a layer.
    pub ordering_refused: Option<(u64, u64)>,
    /// It lost a packet to a link failure (`[failures]`).
    pub failure_affected: bool,
}

/// A row of `flows.csv`. Times are in microseconds (floats, exact to the picosecond).
#[derive(Debug, Clone, Serialize)]
pub struct FlowRow {
    pub flow_id: u32,
    pub src: u32,
    pub dst: u32,
    pub size_bytes: u64,
    /// Empty for a flow that waited for others and never started.
    pub start_us: Option<f64>,
    /// Empty when the flow did not finish.
    pub fct_us: Option<f64>,
    /// Until the sender saw the last ACK.
    pub sender_fct_us: Option<f64>,
    pub ideal_fct_us: f64,
    pub slowdown: Option<f64>,
    pub retransmissions: u64,
    pub timeouts: u64,
    /// Whether the flow counts in the summary (started after the warm-up).
    pub measured: bool,
    /// Lowest pacing rate its congestion control set (rate-based controllers only).
    pub min_rate_gbps: Option<f64>,
    /// Smallest window its congestion control allowed (window-based controllers only).
    pub min_window_packets: Option<u32>,
    /// One of an incast's flows (as opposed to regular traffic).
    pub incast: bool,
    /// The RDMA verb (`write`, `write_imm`, `read`, `send`, `atomic`) in a verbs workload;
    /// empty otherwise.
    pub verb: Option<&'static str>,
    // Reordering and recovery come last, so that older columns keep their positions.
    /// Data packets that arrived ahead of the expected one (go-back-N discards them; selective
    /// repeat keeps each the first time). A verbs flow counts its requests and read responses.
    pub out_of_order: u64,
    /// The most packets by which an arrival was ahead of the expected one (Eunomia Fig. 4b's
    /// reorder degree); 0 for a flow that arrived in order.
    pub max_reorder_distance: u64,
    /// Loss-recovery episodes its sender started: go-back-N rewinds and IRN recovery entries
    /// (Eunomia Fig. 1c's "GBN triggers"); timeouts are counted apart.
    pub recoveries: u64,
    /// NACKs its receiver sent.
    pub nacks: u64,
    /// With an ordering layer only (the column is absent otherwise, so runs without one keep
    /// their files): the most bytes of ordering memory its connection held at its receiver's
    /// NIC, exact rather than sampled (a flow is usually shorter than a sample interval).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ordering_peak_bytes: Option<u64>,
    /// With a queries workload only (the column is absent otherwise, so other runs keep their
    /// files): the number of the query the flow answers, empty for background traffic.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query: Option<Option<u32>>,
    /// With an ordering layer only (the columns are absent otherwise): packets the layer
    /// dropped because the NIC already tracked as many connections as `ordering.max_connections`
    /// allows, and because the NIC's pool had no room for the connection's state record or
    /// bitmap blocks. Packets beyond the bitmap's reach are the rest of the layer's NACKs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ordering_refused_connections: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ordering_refused_pool: Option<u64>,
    /// With a DAG or collective workload only (the column is absent otherwise, and last): the
    /// flow's name in its workload, so a run's rows join the user's own trace: a DAG file's
    /// `id`, a collective flow's `j{job}/i{iteration}/s{step}/c{channel}/r{from}>r{to}`;
    /// empty for background traffic.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dag_id: Option<Option<String>>,
}

/// Flow `f`'s name in its workload (`flows.csv`'s `dag_id`): its collective tag's, or its id
/// in the DAG file; `None` for a flow without (background traffic).
fn dag_id(cfg: &SimConfig, f: usize) -> Option<String> {
    match &cfg.collectives {
        Some(c) => c.name(f),
        None => cfg.dag.as_ref()?.name(f).map(str::to_string),
    }
}

/// `summary.json`'s `queries`: the query completion times of a queries workload (Eunomia
/// §5.5). A query's QCT runs from its arrival (its flows' start) until the last of its flows
/// has been received. Only queries that arrived after the warm-up count.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct QuerySummary {
    /// Measured queries: `completed` + `unfinished`.
    pub count: usize,
    /// Queries whose every flow finished.
    pub completed: usize,
    /// Queries with a flow unfinished when the run ended: censored, their QCT unknown, so left
    /// out of the statistics below (which then flatter a run that leaves more unfinished).
    pub unfinished: usize,
    /// Mean and nearest-rank 99th percentile of the completed queries' QCTs; `null` without
    /// any.
    pub qct_mean_us: Option<f64>,
    pub qct_p99_us: Option<f64>,
}

/// The ports still paused at the end of a run with flows unfinished, by who paused them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PausedAtEnd {
    /// Paused by a switch's PFC (the peer's input buffer over its threshold).
    pub switches: u64,
    /// Paused by a host (`[pauses]`): such a pause runs out by itself.
    pub hosts: u64,
    /// Waiting for credit from the peer's input (`[switch] credits`).
    pub credit: u64,
}

/// `summary.json`'s metrics. Field names carry their unit last.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    pub flows_total: usize,
    /// Flows that started after the warm-up and count in the statistics below.
    pub flows_measured: usize,
    /// Measured flows that had not finished when the run stopped (excluded from FCT figures).
    pub flows_incomplete: usize,
    /// Over the measured flows that finished; `null` when none did.
    pub avg_slowdown: Option<f64>,
    pub p50_slowdown: Option<f64>,
    pub p99_slowdown: Option<f64>,
    pub avg_fct_us: Option<f64>,
    pub p50_fct_us: Option<f64>,
    pub p99_fct_us: Option<f64>,
    /// Request completion time: from the first measured incast flow's start to the last one's
    /// completion (IRN §4.4.3); without incast flows, the same over all measured flows. `null`
    /// when one of those flows is unfinished (the last completion is unknown) or there is none.
    pub rct_us: Option<f64>,
    /// With incast, query or collective flows and regular traffic together (IRN §4.4.3's
    /// cross traffic, a collective's `background_load`), the regular flows' average slowdown,
    /// average FCT and p99 FCT; `null` otherwise.
    pub background_avg_slowdown: Option<f64>,
    pub background_avg_fct_us: Option<f64>,
    pub background_p99_fct_us: Option<f64>,
    /// Measured, finished flows of at most one MTU of payload.
    pub single_packet_flows: usize,
    /// Their FCT statistics; `null` when there is none (as `background_*`).
    pub single_packet_avg_fct_us: Option<f64>,
    pub single_packet_p90_fct_us: Option<f64>,
    pub single_packet_p95_fct_us: Option<f64>,
    pub single_packet_p99_fct_us: Option<f64>,
    pub single_packet_p999_fct_us: Option<f64>,
    pub data_packets_sent: u64,
    pub retransmissions: u64,
    pub timeouts: u64,
    /// Packets that reached their receiver more than once (spurious retransmissions included).
    pub duplicate_packets: u64,
    /// Data packets dropped by switches for lack of buffer.
    pub drops: u64,
    /// Drops over data packets sent.
    pub drop_rate: f64,
    /// Packets (data and the transports' ACKs, NACKs, CNPs) lost on the wire by lossy links,
    /// apart from `drops`; absent when no link is lossy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_losses: Option<u64>,
    /// Packets DIBS sent out of another port because theirs had no room (one per deflection);
    /// absent without `[switch] deflection`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deflections: Option<u64>,
    /// Of `drops`, the packets dropped because DIBS had deflected them `deflection_ttl` times;
    /// absent without deflection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl_drops: Option<u64>,
    /// Link failures and the flows they affected; absent without `[failures]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failures: Option<FailureSummary>,
    /// What ConWeave did (epochs, reroutes, reordering, its control packets); absent without
    /// `load_balancing.kind = "conweave"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conweave: Option<ConWeaveSummary>,
    /// Ports still paused when the run ended with flows unfinished (absent when every flow
    /// finished or nothing was paused): pauses that never lift are the mark of a PFC deadlock,
    /// pauses waiting on each other in a cycle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ports_paused_at_end: Option<u64>,
    /// Those ports by who paused them; present with `ports_paused_at_end`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ports_paused_at_end_by: Option<PausedAtEnd>,
    /// Ports paused in a cycle at the end, each waiting on the next and the last on the first
    /// (`"switch:4 port 2"`, as `ports.csv` names nodes): a deadlock. Absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause_cycle: Option<Vec<String>>,
    pub pause_frames: u64,
    pub resume_frames: u64,
    /// Flow-control packets sent under credit flow control (`[switch] credits`; 0 without).
    pub credit_frames: u64,
    /// Data packets marked CE by switches.
    pub ecn_marks: u64,
    /// Congestion notification packets sent by receivers (DCQCN).
    pub cnps: u64,
    /// Mean over measured flows of the lowest rate their congestion control paced them at
    /// (rate-based controllers; `null` otherwise).
    pub cc_avg_min_rate_gbps: Option<f64>,
    /// Mean over measured flows of the smallest window their congestion control allowed
    /// (window-based controllers; `null` otherwise).
    pub cc_avg_min_window_packets: Option<f64>,
    /// Sum over all ports of the time spent paused.
    pub paused_time_us: f64,
    /// Mean over all ports (both directions of every link) of the fraction of the measured
    /// interval spent transmitting. The interval runs from the first flow's arrival to the end
    /// of the run, so a trace whose flows start at 2 s (as ns-3 flow files do) reads the same as
    /// the same flows starting at 0.
    pub link_utilization: f64,
    /// Payload bytes the receivers accepted in order, over every flow, finished or cut off by
    /// the drain limit (a verbs flow counts when it finishes).
    pub delivered_bytes: u64,
    /// `delivered_bytes` over the interval `link_utilization` is measured in, in Gb/s: the
    /// network's goodput (Eunomia's throughput, the WAN's goodput).
    pub goodput_gbps: f64,
    /// Most bytes any switch input buffer held at once (with shared-buffer switches, any
    /// switch's buffer).
    pub peak_buffer_bytes: u64,
    pub events: u64,
    /// The simulated clock when the run ended, counted from t = 0 (an ns-3 trace starting at
    /// 2 s ends after 2 s).
    pub sim_time_us: f64,
    /// Verbs workloads only: finished flows whose destination memory was not byte-identical to
    /// what the verb should have placed (0 unless something is broken).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verbs_data_errors: Option<u64>,
    // The censored statistics come last, so that the columns `comparison.csv` and `sweep.csv`
    // had before them keep their positions.
    /// `avg_slowdown`, `avg_fct_us` and `p99_fct_us` over every measured flow, an unfinished
    /// one counted as if it had completed when the run ended (FCT = end of run − start, or its
    /// ideal FCT if longer, since no flow finishes sooner than alone on the network): lower
    /// bounds on what the run would have measured had it gone on. Averages over finished flows
    /// alone flatter a variant that leaves its slowest flows unfinished; these do not. Equal to
    /// the plain ones when every measured flow finished; `null` without measured flows.
    pub censored_avg_slowdown: Option<f64>,
    pub censored_avg_fct_us: Option<f64>,
    pub censored_p99_fct_us: Option<f64>,
    /// `rct_us` with unfinished flows counted as completing at the end of the run: a lower
    /// bound on the request completion time, equal to `rct_us` when that is known.
    pub censored_rct_us: Option<f64>,
    // Reordering, pauses by port kind and FCT by size come after everything older, for the
    // same reason; `default` lets the runs of earlier versions still be read (and resumed).
    /// Sums over all flows of `flows.csv`'s `out_of_order`, `recoveries` and `nacks`.
    #[serde(default)]
    pub out_of_order_packets: u64,
    #[serde(default)]
    pub recoveries: u64,
    #[serde(default)]
    pub nacks: u64,
    /// Mean over the switches' egress ports of the fraction of the measured interval (as
    /// `link_utilization`'s) each spent paused by PFC (Eunomia Fig. 12's switch ports); `null`
    /// without switches.
    #[serde(default)]
    pub pause_fraction_switch_ports: Option<f64>,
    /// The same over the hosts' NIC ports (Fig. 12's server ports).
    #[serde(default)]
    pub pause_fraction_host_ports: Option<f64>,
    /// FCT and slowdown of the measured, finished flows by flow size, one entry per bucket of
    /// `[run] fct_size_buckets` (the form of Eunomia Figs. 10, 11, 14, 15).
    #[serde(default)]
    pub fct_by_size: Vec<FctBucket>,
    /// `[ordering] kind = "eunomia"`: the most bytes of ordering state (bitmap blocks and
    /// per-connection records) one NIC held at once (Eunomia Fig. 17c's footprint, as a peak);
    /// `null` without it.
    #[serde(default)]
    pub ordering_peak_bytes: Option<u64>,
    /// Bitmap blocks still allocated when the run ended, over all NICs: 0 unless a flow was cut
    /// off unfinished (a finished message gives its blocks back); `null` without Eunomia.
    #[serde(default)]
    pub ordering_blocks_at_end: Option<u64>,
    // The sampled ordering memory is left out without a layer (rather than `null`), so runs
    // without one keep their files byte for byte.
    /// With an ordering layer: samples of every NIC's ordering memory taken (every `[ordering]
    /// sample_interval` from the end of the warm-up to the last arrival).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordering_memory_samples: Option<u64>,
    /// Mean over the samples and over every NIC of the bytes of ordering state the NIC held
    /// (its running connections' bitmaps and state, Eunomia Fig. 17c); absent without samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordering_avg_nic_bytes: Option<f64>,
    /// The most of those bytes one NIC held at one sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordering_peak_nic_bytes: Option<u64>,
    /// `ordering_avg_nic_bytes` counting the bitmaps alone (a static bitmap's size, Eunomia's
    /// blocks), without each connection's state: what Eunomia Fig. 17c plots, "the bytes taken
    /// by all bitmaps on a NIC".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordering_avg_nic_bitmap_bytes: Option<f64>,
    /// Mean over the samples and the running connections of one connection's bytes; absent
    /// when no sample saw a running connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordering_avg_connection_bytes: Option<f64>,
    /// With a queries workload (absent otherwise): its queries' completion times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queries: Option<QuerySummary>,
    /// With periodic pause control (absent otherwise): the controlled inputs' mean depth and
    /// starvation at its checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause_control: Option<PauseControlSummary>,
    /// With an ordering layer (absent otherwise): sums over flows of `flows.csv`'s
    /// `ordering_refused_connections` and `ordering_refused_pool`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordering_refused_connections: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordering_refused_pool: Option<u64>,
    /// With Eunomia (absent otherwise): the most connections' state records one NIC held at
    /// once (whether or not the records sit in the pool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordering_peak_records: Option<u64>,
    /// Bytes on the wire of the control packets the receivers sent (ACKs, SACKs, NACKs, CNPs),
    /// each counted once.
    #[serde(default)]
    pub control_bytes: ControlBytes,
    /// `control_bytes`' total over `delivered_bytes`: the acknowledgement overhead (Eunomia
    /// §3.5.1's "≈ 5 % bandwidth overhead"); 0 when nothing was delivered.
    #[serde(default)]
    pub control_overhead: f64,
    /// With a collective workload (absent otherwise): each job's times and bandwidths.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collectives: Option<Vec<CollectiveSummary>>,
    /// Jain's fairness index, (Σx)² / (n·Σx²), of the bytes each flow still unfinished when
    /// the run ended delivered from the last flow's arrival to the end: how evenly long-lived
    /// flows shared the network once the last one had joined (1: equal shares; 1/n: one flow
    /// took everything). Absent when fewer than two flows were unfinished at the end (every
    /// run whose flows all finish), so such runs keep their files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jain_index: Option<f64>,
    /// With a `[monitor]` sampling switch ports (absent otherwise): the busiest of them from
    /// `monitor.summary_from` on, its mean and peak queue, utilization and drops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck: Option<BottleneckSummary>,
    /// Payload delivered between the first and the last measured arrival (from the warm-up's
    /// end to the cool-down's start), in Gb/s: the throughput while the load is offered. A
    /// network that keeps up delivers about the offered load; one that saturates, less. Unlike
    /// `goodput_gbps`, the drain is not in it, so runs whose flows all finish do not read apart
    /// by how long their last flows take. Absent with flows that wait for others and when the
    /// measured flows start at a single instant (an incast).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrival_goodput_gbps: Option<f64>,
    /// With an ordering layer (absent otherwise): the packets its layers dropped at the
    /// receiving NICs and NACKed, for want of room (`ordering_refused_connections`,
    /// `ordering_refused_pool`) or beyond the bitmap's reach. They are not in `drops`, which
    /// counts the switches', nor in `drop_rate`; the transport resends them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordering_drops: Option<u64>,
}

/// Jain's fairness index of `shares`, (Σx)² / (n·Σx²): 1 when all are equal, 1/n when one
/// holds everything; `None` for fewer than two shares, and 1 when every share is 0 (nothing
/// was unequal).
pub fn jain_index(shares: &[u64]) -> Option<f64> {
    if shares.len() < 2 {
        return None;
    }
    let sum: f64 = shares.iter().map(|&x| x as f64).sum();
    let squares: f64 = shares.iter().map(|&x| (x as f64) * (x as f64)).sum();
    Some(if squares == 0.0 {
        1.0
    } else {
        sum * sum / (shares.len() as f64 * squares)
    })
}

/// One flow-size bucket of [`Summary::fct_by_size`]: flows of `min_bytes` to `max_bytes`
/// bytes, both included (`max_bytes` is `null` for the last, open bucket). Without flows, the
/// statistics are `null`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FctBucket {
    pub min_bytes: u64,
    pub max_bytes: Option<u64>,
    pub flows: usize,
    pub avg_fct_us: Option<f64>,
    pub p99_fct_us: Option<f64>,
    pub avg_slowdown: Option<f64>,
    /// Mean over the bucket's flows of their largest reorder distance (`flows.csv`'s
    /// `max_reorder_distance`; Eunomia Fig. 4b's reorder degree against flow size).
    pub avg_max_reorder_distance: Option<f64>,
    /// Nearest-rank percentiles of the bucket's slowdowns: the tail by flow size that HPCC's
    /// and ConWeave's figures plot (median, 95th, 99th). Last, so the older fields keep their
    /// places; `default` reads the files of versions before them.
    #[serde(default)]
    pub p50_slowdown: Option<f64>,
    #[serde(default)]
    pub p95_slowdown: Option<f64>,
    #[serde(default)]
    pub p99_slowdown: Option<f64>,
}

/// [`Summary::fct_by_size`] of the finished flows `done`, for buckets with upper edges `edges`
/// (increasing) and an open last one.
fn fct_by_size(done: &[&FlowRow], edges: &[u64]) -> Vec<FctBucket> {
    let lows = std::iter::once(0).chain(edges.iter().map(|&e| e.saturating_add(1)));
    let highs = edges.iter().map(|&e| Some(e)).chain(std::iter::once(None));
    lows.zip(highs)
        .map(|(min_bytes, max_bytes)| {
            let inside: Vec<&FlowRow> = done
                .iter()
                .copied()
                .filter(|r| {
                    r.size_bytes >= min_bytes && max_bytes.is_none_or(|m| r.size_bytes <= m)
                })
                .collect();
            let fcts = sorted(inside.iter().filter_map(|r| r.fct_us).collect());
            let slowdowns = sorted(inside.iter().filter_map(|r| r.slowdown).collect());
            let any = !inside.is_empty();
            FctBucket {
                min_bytes,
                max_bytes,
                flows: inside.len(),
                avg_fct_us: any.then(|| mean(&fcts)),
                p99_fct_us: any.then(|| percentile(&fcts, 0.99)),
                avg_slowdown: any.then(|| mean(&slowdowns)),
                avg_max_reorder_distance: any.then(|| {
                    inside
                        .iter()
                        .map(|r| r.max_reorder_distance as f64)
                        .sum::<f64>()
                        / inside.len() as f64
                }),
                p50_slowdown: any.then(|| percentile(&slowdowns, 0.50)),
                p95_slowdown: any.then(|| percentile(&slowdowns, 0.95)),
                p99_slowdown: any.then(|| percentile(&slowdowns, 0.99)),
            }
        })
        .collect()
}

impl Summary {
    /// Some measured flow finished, so the FCT and slowdown statistics mean something (they
    /// are zeros otherwise: every flow started during the warm-up, or the drain limit cut them
    /// off).
    pub fn has_fct_statistics(&self) -> bool {
        self.flows_measured > self.flows_incomplete
    }
}

/// Everything a run produced.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub flows: Vec<FlowRow>,
    /// The flows whose sender saw every byte acknowledged, as an ns-3 FCT file has them
    /// (`fct.txt`, with ns-3's FCT and ideal FCT), so analysis scripts written for the ns-3 RDMA
    /// simulators read irn's output unchanged.
    pub fct: Vec<FctRecord>,
    pub summary: Summary,
    /// [`NetworkCounters::packet_hops`]: the work behind the speed figures (`irn bench`'s hops
    /// per second, `summary.json`'s `performance`), so not among the network's metrics.
    pub packet_hops: u64,
}

/// What link failures did (`summary.json`'s `failures`). A flow is *affected* when it lost a
/// packet, data or control, to a failure: on a link when it failed, queued for it, sent to it
/// before routing reconverged, or left without a route; or had one held for a failed link. Statistics are over measured flows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FailureSummary {
    /// Times a link went down.
    pub link_failures: u64,
    /// Packets lost to failures (apart from `drops` and `link_losses`).
    pub packets_lost: u64,
    /// Packets routed to a failed link and held in its queue (`to_failed_link = "hold"`).
    pub packets_held: u64,
    /// Measured flows affected, and of those, how many did not finish.
    pub flows_affected: usize,
    pub affected_unfinished: usize,
    /// Over the affected measured flows that finished: mean and p99 FCT, mean and p99
    /// slowdown; `None` when there are none.
    pub affected_avg_fct_us: Option<f64>,
    pub affected_p99_fct_us: Option<f64>,
    pub affected_avg_slowdown: Option<f64>,
    pub affected_p99_slowdown: Option<f64>,
    /// The same for the measured flows no failure touched, to compare.
    pub unaffected_avg_fct_us: Option<f64>,
    pub unaffected_avg_slowdown: Option<f64>,
}

impl FailureSummary {
    fn new(
        (link_failures, packets_lost, packets_held): (u64, u64, u64),
        records: &[FlowRecord],
        rows: &[FlowRow],
    ) -> Self {
        let group = |affected: bool| -> Vec<&FlowRow> {
            (records.iter().zip(rows))
                .filter(|(r, row)| row.measured && r.failure_affected == affected)
                .map(|(_, row)| row)
                .collect()
        };
        let (hit, spared) = (group(true), group(false));
        let stats = |flows: &[&FlowRow], pick: fn(&FlowRow) -> Option<f64>| {
            let v = sorted(flows.iter().filter_map(|r| pick(r)).collect());
            (!v.is_empty()).then(|| (mean(&v), percentile(&v, 0.99)))
        };
        let fct = |flows: &[&FlowRow]| stats(flows, |r| r.fct_us);
        let slow = |flows: &[&FlowRow]| stats(flows, |r| r.slowdown);
        FailureSummary {
            link_failures,
            packets_lost,
            packets_held,
            flows_affected: hit.len(),
            affected_unfinished: hit.iter().filter(|r| r.fct_us.is_none()).count(),
            affected_avg_fct_us: fct(&hit).map(|s| s.0),
            affected_p99_fct_us: fct(&hit).map(|s| s.1),
            affected_avg_slowdown: slow(&hit).map(|s| s.0),
            affected_p99_slowdown: slow(&hit).map(|s| s.1),
            unaffected_avg_fct_us: fct(&spared).map(|s| s.0),
            unaffected_avg_slowdown: slow(&spared).map(|s| s.0),
        }
    }
}

/// Nearest-rank percentile of sorted values (`q` in 0..=1); 0 for no values.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        0.0
    } else {
        values.iter().sum::<f64>() / values.len() as f64
    }
}

/// [`Summary::queries`] of `records`, counting the queries that arrived while the run measures
/// ([`SimConfig::is_measured`]); `None` without query flows. Built from the records after the
/// run, so queries cost the simulation nothing.
fn query_summary(cfg: &SimConfig, records: &[FlowRecord]) -> Option<QuerySummary> {
    let query = |r: &FlowRecord| match r.class {
        FlowClass::Query(id) => Some(id as usize),
        _ => None,
    };
    let n = records.iter().filter_map(query).max()? + 1;
    // Per query: its arrival, and its last flow's completion (`None` once one is unfinished).
    let mut queries: Vec<Option<(Time, Option<Time>)>> = vec![None; n];
    for r in records {
        let Some(id) = query(r) else { continue };
        let q = queries[id].get_or_insert((r.start, Some(r.start)));
        q.0 = q.0.min(r.start);
        q.1 = q.1.zip(r.received_at).map(|(a, b)| a.max(b));
    }
    let measured: Vec<(Time, Option<Time>)> = queries
        .into_iter()
        .flatten()
        .filter(|&(arrival, _)| cfg.is_measured(arrival))
        .collect();
    let qcts = sorted(
        measured
            .iter()
            .filter_map(|&(arrival, last)| last.map(|t| (t - arrival).as_us_f64()))
            .collect(),
    );
    let any = !qcts.is_empty();
    Some(QuerySummary {
        count: measured.len(),
        completed: qcts.len(),
        unfinished: measured.len() - qcts.len(),
        qct_mean_us: any.then(|| mean(&qcts)),
        qct_p99_us: any.then(|| percentile(&qcts, 0.99)),
    })
}

/// `(rct_us, censored_rct_us)`.
type Rct = (Option<f64>, Option<f64>);

/// `(rct_us, censored_rct_us)`: from the first measured incast flow's start to the last one's
/// completion (all measured flows when there is no incast). The first is `None` if one of them
/// is unfinished; the second counts an unfinished flow as completing at `end_us`, the end of
/// the run. Both are `None` without measured flows.
fn rct_us(measured: &[&FlowRow], end_us: f64) -> Rct {
    let incast: Vec<&FlowRow> = measured.iter().copied().filter(|r| r.incast).collect();
    let flows = if incast.is_empty() {
        measured
    } else {
        &incast[..]
    };
    if flows.is_empty() {
        return (None, None);
    }
    let first = flows
        .iter()
        .filter_map(|r| r.start_us)
        .fold(f64::INFINITY, f64::min);
    let last = flows
        .iter()
        .map(|r| match (r.start_us, r.fct_us) {
            (Some(start), Some(fct)) => start + fct,
            _ => end_us,
        })
        .fold(f64::NEG_INFINITY, f64::max);
    let censored = last - first;
    let known = flows.iter().all(|r| r.fct_us.is_some());
    (known.then_some(censored), Some(censored))
}

/// The mean of the values present, or `None` if there are none.
fn mean_of_some(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = values.flatten().collect();
    (!v.is_empty()).then(|| mean(&v))
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

/// The ideal FCT of a message of `size_bytes` from `src` to `dst` (see the module doc).
pub fn ideal_fct(cfg: &SimConfig, src: HostIdx, dst: HostIdx, size_bytes: u64) -> Duration {
    transfer(
        cfg,
        src,
        dst,
        size_bytes,
        cfg.framing.data + cfg.extra_header_bytes,
        0,
    )
}

/// A flow's ideal FCT, for its verb if it has one (see the module doc).
fn ideal_fct_of(cfg: &SimConfig, r: &FlowRecord) -> Duration {
    let Some(verb) = r.verb else {
        return ideal_fct(cfg, r.src, r.dst, r.size_bytes);
    };
    let irn = |bytes: u32| if cfg.verbs_irn_headers { bytes } else { 0 };
    let request = |from, to| transfer(cfg, from, to, 0, DATA_FRAMING_BYTES + irn(WQE_SN_BYTES), 0);
    let (header, last_extra) = match verb {
        Verb::Write => (irn(RETH_BYTES), 0),
        // The last packet also names the receive WQE it consumes.
        Verb::WriteImm => (irn(RETH_BYTES), irn(WQE_SN_BYTES)),
        Verb::Send => (irn(SEND_EXT_BYTES), 0),
        Verb::Read => (0, 0),
        // The request, with its read_WQE_SN, is the whole transfer.
        Verb::Atomic => return request(r.src, r.dst),
    };
    let data = transfer(
        cfg,
        r.src,
        r.dst,
        r.size_bytes,
        DATA_FRAMING_BYTES + header,
        last_extra,
    );
    if verb == Verb::Read {
        // The responder ACKs the request (irn-core's verbs acknowledge every request packet)
        // and its NIC sends control frames first.
        let path = cfg.topology.path(r.src, r.dst);
        let ack = path.rates.first().map_or(Duration::ZERO, |rate| {
            rate.serialization(u64::from(CONTROL_FRAME_BYTES))
        });
        request(r.dst, r.src) + ack + data
    } else {
        data
    }
}

/// `size_bytes` (at least one packet) from `src` to `dst` with `framing` bytes per packet and
/// `last_extra` more on the last one, alone at line rate.
fn transfer(
    cfg: &SimConfig,
    src: HostIdx,
    dst: HostIdx,
    size_bytes: u64,
    framing: u32,
    last_extra: u32,
) -> Duration {
    let mtu = u64::from(cfg.transport.mtu);
    let (framing, last_extra) = (u64::from(framing), u64::from(last_extra));
    let packets = packets_for(size_bytes, mtu as u32);
    let wire_bytes = size_bytes + packets * framing + last_extra;
    let last_payload = size_bytes - (packets - 1) * mtu;
    let largest_packet = size_bytes.min(mtu).max(last_payload + last_extra) + framing;
    let path = cfg.topology.path(src, dst);
    let bottleneck_hop = path
        .rates
        .iter()
        .enumerate()
        .min_by_key(|(_, r)| **r)
        .map_or(0, |(i, _)| i);
    let store_and_forward = path
        .rates
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != bottleneck_hop)
        .fold(Duration::ZERO, |acc, (_, r)| {
            acc + r.serialization(largest_packet)
        });
    path.bottleneck.serialization(wire_bytes) + path.propagation + store_and_forward
}

/// FCT over ideal FCT, as `flows.csv`'s `slowdown` has it.
fn slowdown(fct: Duration, ideal: Duration) -> f64 {
    fct.as_ps() as f64 / ideal.as_ps().max(1) as f64
}

impl RunResult {
    pub fn new(cfg: &SimConfig, records: Vec<FlowRecord>, c: NetworkCounters) -> Self {
        let end = Time::ZERO + c.sim_time;
        let us = |d: Duration| d.as_us_f64();
        let ns = |d: Duration| (d.as_ps() + 500) / 1000;
        let ports = assign_ports(&cfg.flows, &cfg.fct_ports);
        let header = cfg.framing.data + cfg.extra_header_bytes;
        let fct = records
            .iter()
            .zip(&ports)
            .filter_map(|(r, &(sport, dport))| {
                // ns-3 prints a flow when its sender has every byte acknowledged.
                let acked = r.acked_at?;
                let path = cfg.topology.path(r.src, r.dst);
                Some(FctRecord {
                    src_node: node_of_host(&cfg.topology, r.src),
                    dst_node: node_of_host(&cfg.topology, r.dst),
                    sport,
                    dport,
                    size_bytes: r.size_bytes,
                    start_ns: ns3_start_ns(r.start),
                    fct_ns: ns(acked - r.start),
                    ideal_fct_ns: ns3_standalone_fct_ns(
                        &path,
                        r.size_bytes,
                        cfg.transport.mtu,
                        header,
                    ),
                })
            })
            .collect();
        let layered = cfg.ordering.mode != irn_core::ordering::OrderingMode::None;
        let has_queries = records
            .iter()
            .any(|r| matches!(r.class, FlowClass::Query(_)));
        let rows: Vec<FlowRow> = records
            .iter()
            .map(|r| {
                let ideal = ideal_fct_of(cfg, r);
                let fct = r.received_at.map(|t| t - r.start);
                FlowRow {
                    flow_id: r.id,
                    src: r.src.0,
                    dst: r.dst.0,
                    size_bytes: r.size_bytes,
                    start_us: r.started.then(|| us(r.start - Time::ZERO)),
                    fct_us: fct.map(us),
                    sender_fct_us: r.acked_at.map(|t| us(t - r.start)),
                    ideal_fct_us: us(ideal),
                    slowdown: fct.map(|f| slowdown(f, ideal)),
                    retransmissions: r.retransmissions,
                    timeouts: r.timeouts,
                    measured: cfg.is_measured(r.start),
                    min_rate_gbps: r.min_rate_bps.map(|b| b as f64 / 1e9),
                    min_window_packets: r.min_window,
                    incast: r.class == FlowClass::Incast,
                    verb: r.verb.map(Verb::name),
                    out_of_order: r.out_of_order,
                    max_reorder_distance: r.max_reorder_distance,
                    recoveries: r.recoveries,
                    nacks: r.nacks,
                    ordering_peak_bytes: r.ordering_peak_bytes.map(u64::from),
                    query: has_queries.then_some(match r.class {
                        FlowClass::Query(id) => Some(id),
                        _ => None,
                    }),
                    ordering_refused_connections: r.ordering_refused.map(|r| r.0),
                    ordering_refused_pool: r.ordering_refused.map(|r| r.1),
                    dag_id: cfg.dag.is_some().then(|| dag_id(cfg, r.id as usize)),
                }
            })
            .collect();
        let measured: Vec<&FlowRow> = rows.iter().filter(|r| r.measured).collect();
        let done: Vec<&FlowRow> = measured
            .iter()
            .copied()
            .filter(|r| r.fct_us.is_some())
            .collect();
        let fcts = sorted(done.iter().filter_map(|r| r.fct_us).collect());
        let slowdowns = sorted(done.iter().filter_map(|r| r.slowdown).collect());
        // Every measured flow, an unfinished one at its lower bound (the end of the run).
        let (censored_fcts, censored_slowdowns): (Vec<f64>, Vec<f64>) = records
            .iter()
            .zip(&rows)
            .filter(|(_, row)| row.measured)
            .map(|(r, row)| match (row.fct_us, row.slowdown) {
                (Some(fct), Some(s)) => (fct, s),
                _ => {
                    // No flow finishes sooner than alone on the network; one that never
                    // started (it waited for a flow that did not finish) has only that bound.
                    let ideal = ideal_fct_of(cfg, r);
                    let ran = if r.started {
                        end.saturating_since(r.start)
                    } else {
                        ideal
                    };
                    let lower = ran.max(ideal);
                    (us(lower), slowdown(lower, ideal))
                }
            })
            .unzip();
        // Sorted as the plain statistics are, so that the means are summed in the same order
        // and equal them exactly when every flow finished.
        let (censored_fcts, censored_slowdowns) =
            (sorted(censored_fcts), sorted(censored_slowdowns));
        let (any_measured, any_done) = (!measured.is_empty(), !done.is_empty());
        let (rct, censored_rct) = rct_us(&measured, us(c.sim_time));
        let mtu = u64::from(cfg.transport.mtu);
        // Incast, query and collective flows are the foreground; the rest is the traffic
        // around them (a collective's background flows have an empty `dag_id`).
        let collective = cfg.collectives.is_some();
        let foreground = |r: &FlowRow| {
            r.incast
                || r.query.flatten().is_some()
                || collective && matches!(r.dag_id, Some(Some(_)))
        };
        let background: Vec<&FlowRow> = done.iter().copied().filter(|r| !foreground(r)).collect();
        let mixed = measured.iter().any(|r| foreground(r)) && !background.is_empty();
        let background_fcts = sorted(background.iter().filter_map(|r| r.fct_us).collect());
        let single = sorted(
            done.iter()
                .filter(|r| r.size_bytes <= mtu)
                .filter_map(|r| r.fct_us)
                .collect(),
        );
        let single_stat = |stat: fn(&[f64]) -> f64| (!single.is_empty()).then(|| stat(&single));
        let summary = Summary {
            flows_total: rows.len(),
            flows_measured: measured.len(),
            flows_incomplete: measured.len() - done.len(),
            avg_slowdown: any_done.then(|| mean(&slowdowns)),
            p50_slowdown: any_done.then(|| percentile(&slowdowns, 0.5)),
            p99_slowdown: any_done.then(|| percentile(&slowdowns, 0.99)),
            avg_fct_us: any_done.then(|| mean(&fcts)),
            p50_fct_us: any_done.then(|| percentile(&fcts, 0.5)),
            p99_fct_us: any_done.then(|| percentile(&fcts, 0.99)),
            censored_avg_slowdown: any_measured.then(|| mean(&censored_slowdowns)),
            censored_avg_fct_us: any_measured.then(|| mean(&censored_fcts)),
            censored_p99_fct_us: any_measured.then(|| percentile(&censored_fcts, 0.99)),
            rct_us: rct,
            censored_rct_us: censored_rct,
            background_avg_slowdown: mixed.then(|| {
                mean(&sorted(
                    background.iter().filter_map(|r| r.slowdown).collect(),
                ))
            }),
            background_avg_fct_us: mixed.then(|| mean(&background_fcts)),
            background_p99_fct_us: mixed.then(|| percentile(&background_fcts, 0.99)),
            single_packet_flows: single.len(),
            single_packet_avg_fct_us: single_stat(mean),
            single_packet_p90_fct_us: single_stat(|v| percentile(v, 0.9)),
            single_packet_p95_fct_us: single_stat(|v| percentile(v, 0.95)),
            single_packet_p99_fct_us: single_stat(|v| percentile(v, 0.99)),
            single_packet_p999_fct_us: single_stat(|v| percentile(v, 0.999)),
            data_packets_sent: c.data_packets_sent,
            retransmissions: c.retransmissions,
            timeouts: c.timeouts,
            duplicate_packets: c.duplicates,
            drops: c.drops,
            drop_rate: if c.data_packets_sent == 0 {
                0.0
            } else {
                c.drops as f64 / c.data_packets_sent as f64
            },
            link_losses: c.link_losses,
            deflections: c.deflections,
            ttl_drops: c.ttl_drops,
            failures: c
                .failures
                .map(|counts| FailureSummary::new(counts, &records, &rows)),
            conweave: c.conweave,
            ports_paused_at_end: c.paused_at_end,
            ports_paused_at_end_by: c.paused_at_end_by,
            pause_cycle: None,
            pause_frames: c.pause_frames,
            resume_frames: c.resume_frames,
            credit_frames: c.credit_frames,
            ecn_marks: c.ecn_marks,
            cnps: c.cnps,
            cc_avg_min_rate_gbps: mean_of_some(measured.iter().map(|r| r.min_rate_gbps)),
            cc_avg_min_window_packets: mean_of_some(
                measured.iter().map(|r| r.min_window_packets.map(f64::from)),
            ),
            paused_time_us: us(c.paused_time),
            link_utilization: c.link_utilization,
            delivered_bytes: c.delivered_bytes,
            goodput_gbps: c.goodput_gbps,
            peak_buffer_bytes: c.peak_buffer_bytes,
            events: c.events,
            sim_time_us: us(c.sim_time),
            verbs_data_errors: records
                .iter()
                .any(|r| r.verb.is_some())
                .then_some(c.verbs_data_errors),
            out_of_order_packets: c.out_of_order,
            recoveries: c.recoveries,
            nacks: c.nacks,
            pause_fraction_switch_ports: c.pause_fraction_switch_ports,
            pause_fraction_host_ports: c.pause_fraction_host_ports,
            fct_by_size: fct_by_size(&done, &cfg.fct_size_buckets),
            ordering_peak_bytes: c.ordering_peak_bytes,
            ordering_blocks_at_end: c.ordering_blocks_at_end,
            ordering_memory_samples: c.ordering_memory.map(|m| m.samples),
            ordering_avg_nic_bytes: c.ordering_memory.and_then(|m| m.avg_nic_bytes),
            ordering_peak_nic_bytes: c.ordering_memory.and_then(|m| m.peak_nic_bytes),
            ordering_avg_nic_bitmap_bytes: c.ordering_memory.and_then(|m| m.avg_nic_bitmap_bytes),
            ordering_avg_connection_bytes: c.ordering_memory.and_then(|m| m.avg_connection_bytes),
            queries: query_summary(cfg, &records),
            pause_control: c.pause_control.map(|p| p.summary()),
            ordering_refused_connections: layered.then(|| {
                rows.iter()
                    .filter_map(|r| r.ordering_refused_connections)
                    .sum()
            }),
            ordering_refused_pool: layered
                .then(|| rows.iter().filter_map(|r| r.ordering_refused_pool).sum()),
            ordering_peak_records: c.ordering_peak_records,
            control_bytes: c.control_bytes,
            control_overhead: if c.delivered_bytes == 0 {
                0.0
            } else {
                c.control_bytes.total() as f64 / c.delivered_bytes as f64
            },
            collectives: (cfg.collectives.as_deref()).map(|c| collectives::summarize(c, &records)),
            jain_index: c.jain_index,
            arrival_goodput_gbps: c.arrival_goodput_gbps,
            ordering_drops: c.ordering_drops,
            bottleneck: c.bottleneck,
        };
        RunResult {
            flows: rows,
            fct,
            summary,
            packet_hops: c.packet_hops,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_is_one_for_equal_shares_and_one_over_n_for_a_hog() {
        assert_eq!(jain_index(&[]), None);
        assert_eq!(jain_index(&[5]), None);
        assert_eq!(jain_index(&[3, 3, 3]), Some(1.0));
        assert_eq!(jain_index(&[0, 0]), Some(1.0));
        assert_eq!(jain_index(&[8, 0, 0, 0]), Some(0.25));
        // (1 + 3)² / (2 · (1 + 9)) = 0.8.
        assert_eq!(jain_index(&[1, 3]), Some(0.8));
    }

    fn row(start_us: f64, fct_us: Option<f64>, incast: bool) -> FlowRow {
        FlowRow {
            flow_id: 0,
            src: 0,
            dst: 1,
            size_bytes: 1,
            start_us: Some(start_us),
            fct_us,
            sender_fct_us: None,
            ideal_fct_us: 1.0,
            slowdown: None,
            retransmissions: 0,
            timeouts: 0,
            measured: true,
            min_rate_gbps: None,
            min_window_packets: None,
            incast,
            verb: None,
            out_of_order: 0,
            max_reorder_distance: 0,
            recoveries: 0,
            nacks: 0,
            ordering_peak_bytes: None,
            query: None,
            ordering_refused_connections: None,
            ordering_refused_pool: None,
            dag_id: None,
        }
    }

    #[test]
    fn rct_is_unknown_while_a_flow_of_the_request_is_unfinished() {
        let end = 100.0;
        let cases: &[(&[FlowRow], Rct)] = &[
            (&[], (None, None)),
            // From the first start (2) to the last completion (10 + 30).
            (
                &[row(2.0, Some(5.0), true), row(10.0, Some(30.0), true)],
                (Some(38.0), Some(38.0)),
            ),
            // An unfinished incast flow: unknown, at least until the end of the run.
            (
                &[row(2.0, Some(5.0), true), row(10.0, None, true)],
                (None, Some(98.0)),
            ),
            // Regular flows around an incast do not count, finished or not.
            (
                &[row(2.0, Some(5.0), true), row(0.0, None, false)],
                (Some(5.0), Some(5.0)),
            ),
            // Without incast, the request is every measured flow.
            (
                &[row(1.0, Some(5.0), false), row(3.0, None, false)],
                (None, Some(99.0)),
            ),
        ];
        for (i, (rows, want)) in cases.iter().enumerate() {
            let measured: Vec<&FlowRow> = rows.iter().collect();
            assert_eq!(rct_us(&measured, end), *want, "case {i}");
        }
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.99), 99.0);
        assert_eq!(percentile(&v, 0.5), 50.0);
        assert_eq!(percentile(&v, 1.0), 100.0);
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
        assert_eq!(percentile(&[7.0], 0.999), 7.0);
    }

    #[test]
    fn size_buckets_give_slowdown_percentiles() {
        // 20 flows of 100 B with slowdowns 20, 19, …, 1 (order must not matter), one of 5 KB
        // with slowdown 7. Nearest rank over 20: p50 is the 10th smallest, p95 the 19th, p99
        // the 20th.
        let mut rows: Vec<FlowRow> = (1..=20)
            .rev()
            .map(|s| FlowRow {
                size_bytes: 100,
                slowdown: Some(f64::from(s)),
                ..row(0.0, Some(1.0), false)
            })
            .collect();
        rows.push(FlowRow {
            size_bytes: 5_000,
            slowdown: Some(7.0),
            ..row(0.0, Some(1.0), false)
        });
        let done: Vec<&FlowRow> = rows.iter().collect();
        let b = fct_by_size(&done, &[1_000, 10_000]);
        let tail = |b: &FctBucket| (b.p50_slowdown, b.p95_slowdown, b.p99_slowdown);
        assert_eq!(tail(&b[0]), (Some(10.0), Some(19.0), Some(20.0)));
        assert_eq!(tail(&b[1]), (Some(7.0), Some(7.0), Some(7.0)));
        assert_eq!(tail(&b[2]), (None, None, None));
    }
}
