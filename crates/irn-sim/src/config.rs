//! A fully resolved simulation: typed, validated, ready to run. Scenario files become this.

use std::sync::Arc;

use irn_core::cc::CcConfig;
use irn_core::ordering::{Feedback, OrderingConfig, OrderingMode, WriteLast};
use irn_core::packet::{CONTROL_FRAME_BYTES, DATA_FRAMING_BYTES};
use irn_core::transport::TransportConfig;
use irn_core::{Bandwidth, Duration, Psn, Time};

use crate::credits::CreditConfig;
use crate::failures::Timeline;
pub use crate::forwarding::{ControlBalancing, Deflection, DrillTies, LoadBalancing};
use crate::ids::{FlowId, PortId};
use crate::loss::LinkLoss;
use crate::partition::PartitionRule;
use crate::pause::{PauseControl, PauseFrames, PauseSourceConfig};
use crate::rng::{stream_seed, Purpose};
use crate::topology::{Port, Topology};
use crate::workload::ns3::FctPorts;
use crate::workload::{Collectives, FlowDag, FlowSpec};

/// Everything one run needs.
#[derive(Debug)]
pub struct SimConfig {
    /// Seeds every random choice the simulator makes itself (ECMP salt). Workloads are
    /// generated from it before the run.
    pub seed: u64,
    pub topology: Topology,
    pub switch: SwitchConfig,
    pub transport: TransportConfig,
    /// Flows to run, sorted by start time (a flow that waits for others by its earliest start).
    /// Shared: the variants of a comparison run the same flows, and a million-flow workload
    /// held once per variant would cost tens of megabytes each.
    pub flows: Arc<[FlowSpec]>,
    /// Which flows wait for which (`kind = "dag"`, `"collective"`): such a flow starts when
    /// its parents have finished, not at its `start`. `None`: every flow starts at its `start`.
    pub dag: Option<Arc<FlowDag>>,
    /// The collective jobs the flows belong to, for their metrics; `None` without.
    pub collectives: Option<Arc<Collectives>>,
    /// How `fct.txt` numbers the flows' ports: as the ns-3 simulator whose flow file the run
    /// replays does (ConWeave's by default).
    pub fct_ports: FctPorts,
    /// Flows starting before this are simulated but left out of the metrics.
    pub warmup: Duration,
    /// Flows starting at or after this are simulated but left out of the metrics too (a
    /// cool-down: arrivals past the measured window); `None`: no end.
    pub measure_until: Option<Duration>,
    /// After the last flow starts, stop once this much more time has passed even if some flows
    /// are unfinished (they are reported as incomplete).
    pub drain_limit: Duration,
    /// Extra header bytes on every data packet: 16 for IRN §6.3's worst case (a RETH in every
    /// Write packet), plus 5 for an ordering layer's metadata (Eunomia's 33 bits); 0 otherwise.
    pub extra_header_bytes: u32,
    /// The bytes a data frame adds to its payload and an ACK, NACK or CNP frame's size.
    pub framing: Framing,
    /// Verbs packets carry IRN's extension headers (§5.3, §6.3: a RETH in every Write packet,
    /// `recv_WQE_SN` and offset in every Send packet); `false` for RoCE, which has none.
    pub verbs_irn_headers: bool,
    /// Where each queue pair's PSNs start: seeded at random unless a test fixes them.
    pub initial_psn: InitialPsn,
    /// How switches choose among equal-cost next hops.
    pub load_balancing: LoadBalancing,
    /// How a per-packet balancer routes ACKs, NACKs and CNPs.
    pub control_balancing: ControlBalancing,
    /// Upper edges (bytes, increasing) of the flow-size buckets `summary.json`'s `fct_by_size`
    /// reports; a last bucket holds every larger flow.
    pub fct_size_buckets: Vec<u64>,
    /// The ordering layer every NIC runs under its transport.
    pub ordering: Ordering,
    /// What `[monitor]` samples over time; `None`: nothing (no sample event at all).
    pub monitor: Option<Monitor>,
    /// `[[pause_control]]`: switch inputs that decide their PAUSE frames by a rule of their own
    /// (the WAN's receiving ends); empty: every input is under `switch.pfc` alone.
    pub pause_control: Vec<PauseControl>,
    /// `[pauses]`: hosts that pause their switch at random; empty: hosts never pause.
    pub pause_sources: Vec<PauseSourceConfig>,
    /// `[switch] credits`: InfiniBand credit flow control into every switch input instead of
    /// PFC (input-queued switches only); `None`: no credits.
    pub credits: Option<CreditConfig>,
    /// Whether BDP-FC's computed cap is one for the network or each flow's own path's.
    pub bdp_cap_scope: BdpCapScope,
    /// Which round trip a computed cap covers.
    pub bdp_round_trip: BdpRoundTrip,
    /// Links that lose packets at random on the wire (ns-3 `error_rate`, `[topology]
    /// loss_rate`); [`LinkLoss::none`]: none do, and the packet path draws nothing.
    pub link_loss: LinkLoss,
    /// DIBS deflection instead of drops (`[switch] deflection`); `None` drops.
    pub deflection: Option<Deflection>,
    /// Link failures (`[failures]`), planned ([`Timeline::plan`]); `None`: every link stays up.
    pub failures: Option<Timeline>,
    /// Whether the run takes its events a partition of the network at a time
    /// ([`crate::partition`], `[run] partitions`).
    pub partitions: PartitionRule,
}

/// Which BDP a computed BDP-FC cap is (`transport.bdp_cap_scope`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BdpCapScope {
    /// One cap for every flow: the longest path's BDP at the slowest host link (IRN §3.2).
    #[default]
    Network,
    /// Each flow its own path's: its bottleneck rate × its round-trip propagation.
    Path,
}

/// Which round trip a computed BDP-FC cap covers (`transport.bdp_cap_round_trip`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BdpRoundTrip {
    /// The path's propagation there and back, rounded down to full frames: IRN §3.2's cap, 110
    /// packets in the paper's default case.
    #[default]
    Propagation,
    /// An idle path's round trip: the propagation there and back plus every link's
    /// serialization of a full frame and of an ACK, rounded up, so that a flow alone keeps the
    /// path full. On short, fast links with large frames (an AI fabric's 1 µs, 100 Gb/s, 4 KB)
    /// the serialization is a sixth of the round trip, and the propagation's cap holds a lone
    /// flow to about 85 % of line rate.
    Idle,
}

impl BdpRoundTrip {
    /// The round trip over links of `rates` with `propagation` one way, for `full_frame` bytes
    /// out and `reply_frame` bytes back.
    pub fn of(
        self,
        propagation: Duration,
        rates: impl IntoIterator<Item = Bandwidth>,
        (full_frame, reply_frame): (u64, u32),
    ) -> Duration {
        let trip = propagation * 2;
        match self {
            BdpRoundTrip::Propagation => trip,
            BdpRoundTrip::Idle => rates.into_iter().fold(trip, |t, rate| {
                t + rate.serialization(full_frame) + rate.serialization(u64::from(reply_frame))
            }),
        }
    }
}

/// What a frame puts on the wire around what irn-core's packets carry: RoCEv2's by default, or
/// another simulator's accounting, to replay its runs byte for byte (ns-3's RDMA models count
/// 48 B per data packet and 60 B per ACK, without Ethernet's FCS, preamble and gap).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Framing {
    /// Bytes a data frame adds to its payload (before any extra header): Ethernet's header and
    /// FCS, IPv4, UDP, the BTH and the ICRC, 62 ([`DATA_FRAMING_BYTES`]).
    pub data: u32,
    /// Bytes of an ACK, NACK or CNP frame: Ethernet's minimum, 64 ([`CONTROL_FRAME_BYTES`]).
    /// PFC's PAUSE frames and credit updates stay 64 B.
    pub reply: u32,
}

impl Default for Framing {
    fn default() -> Self {
        Framing {
            data: DATA_FRAMING_BYTES,
            reply: CONTROL_FRAME_BYTES,
        }
    }
}

impl Framing {
    /// The most bytes either may be.
    pub const MAX_BYTES: u32 = 1024;

    /// Bytes on the wire of `pkt`, a message flow's data packet or reply, before extra headers.
    #[inline(always)]
    pub fn wire_len(self, pkt: &irn_core::Packet) -> u32 {
        pkt.framed_len(self.data, self.reply)
    }
}

/// `[monitor]`, resolved: what is sampled and how often, for `series/*.csv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Monitor {
    pub interval: Duration,
    /// The egress ports sampled, in increasing order, each once.
    pub ports: Vec<PortId>,
    /// The flows whose delivered bytes and congestion control are sampled, increasing.
    pub flows: Vec<FlowId>,
    /// Every NIC's active flows and ordering memory are sampled.
    pub nics: bool,
    /// Samples at or after this simulated time make `summary.json`'s `bottleneck`; `None`: no
    /// `bottleneck`, so that a monitor changes nothing in the summary unless asked to.
    pub summary_from: Option<Duration>,
}

/// A NIC's ordering layer (Eunomia): which one, the sizes of Eunomia's bitmaps and pool, how
/// a WRITE's last packet is kept in order, and how often its memory is sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ordering {
    pub mode: OrderingMode,
    /// Eunomia's block, cap and per-NIC pool (read only by [`OrderingMode::Eunomia`]).
    pub config: OrderingConfig,
    /// Every message flow is a WRITE whose last packet the senders hold or the layers stage
    /// ([`WriteLast::Off`]: a SEND, the default). Needs a layer (`mode` not `None`).
    pub write_last: WriteLast,
    /// When a held or dropped packet's CE mark counts ([`Feedback::Arrival`] by default).
    pub feedback: Feedback,
    /// How often every NIC's ordering memory is sampled (Eunomia Fig. 17c); unused without a
    /// layer.
    pub sample_interval: Duration,
}

impl Ordering {
    /// How often each NIC's ordering memory is sampled unless `sample_interval` says otherwise.
    pub const DEFAULT_SAMPLE_INTERVAL: Duration = Duration::from_ms(1);
}

impl Default for Ordering {
    fn default() -> Self {
        Ordering {
            mode: OrderingMode::None,
            config: OrderingConfig::default(),
            write_last: WriteLast::Off,
            feedback: Feedback::Arrival,
            sample_interval: Self::DEFAULT_SAMPLE_INTERVAL,
        }
    }
}

/// The default `fct_size_buckets`: ≤ 10 KB, 10–100 KB, 100 KB–1 MB and over 1 MB. Eunomia
/// calls flows up to 10 KB short (§5.2, Fig. 11) and its figures' size axes run from a few KB
/// to a few MB; decades keep every bucket populated on both AliStorage and FB Hadoop sizes.
pub const DEFAULT_FCT_SIZE_BUCKETS: [u64; 3] = [10_000, 100_000, 1_000_000];

/// Where a queue pair's packet sequence numbers start.
///
/// NICs pick a queue pair's initial PSN at random, and a flow of any length may cross the 24-bit
/// wrap; starting every flow at 0 would leave the transports' wrap handling unexercised in every
/// simulation. Results do not depend on the choice: PSNs are compared serially, never by value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InitialPsn {
    /// A random PSN per flow and packet space, drawn from the scenario seed (the scenarios' choice).
    #[default]
    Seeded,
    /// Every packet space starts at this PSN (tests put it just below the wrap).
    Fixed(Psn),
}

impl InitialPsn {
    /// The first PSN of packet space `space` of flow `flow` under scenario seed `seed`. A message
    /// flow has one space (0: its data); a verbs flow four: each end's requests (0, 1) and each
    /// end's responses (2, 3).
    pub fn psn(self, seed: u64, flow: usize, space: u64) -> Psn {
        match self {
            InitialPsn::Seeded => {
                let index = (flow as u64) << 2 | space;
                // `Psn::new` keeps the low 24 bits.
                Psn::new(stream_seed(seed, Purpose::InitialPsn, index) as u32)
            }
            InitialPsn::Fixed(psn) => psn,
        }
    }
}

impl SimConfig {
    /// `flows` over `topology`, `switch` and `transport`, with every other choice at its
    /// default: seed 1, no warm-up, a 100 ms drain limit, no extra headers (IRN's verbs headers
    /// on), seeded initial PSNs, ECMP, the default FCT size buckets and no ordering layer. For
    /// programs and tests that build a run without a scenario file:
    /// `SimConfig { seed: 7, ..SimConfig::new(topology, switch, transport, flows) }`.
    pub fn new(
        topology: Topology,
        switch: SwitchConfig,
        transport: TransportConfig,
        flows: Vec<FlowSpec>,
    ) -> Self {
        SimConfig {
            seed: 1,
            topology,
            switch,
            transport,
            flows: flows.into(),
            dag: None,
            collectives: None,
            fct_ports: FctPorts::ConWeave,
            warmup: Duration::ZERO,
            measure_until: None,
            drain_limit: Duration::from_ms(100),
            extra_header_bytes: 0,
            framing: Framing::default(),
            verbs_irn_headers: true,
            initial_psn: InitialPsn::Seeded,
            load_balancing: LoadBalancing::Ecmp,
            control_balancing: ControlBalancing::Balanced,
            fct_size_buckets: DEFAULT_FCT_SIZE_BUCKETS.to_vec(),
            ordering: Ordering::default(),
            monitor: None,
            pause_control: Vec::new(),
            pause_sources: Vec::new(),
            credits: None,
            bdp_cap_scope: BdpCapScope::Network,
            bdp_round_trip: BdpRoundTrip::Propagation,
            link_loss: LinkLoss::none(),
            deflection: None,
            failures: None,
            partitions: PartitionRule::Auto,
        }
    }

    /// Whether a flow (or query) that starts at `start` is measured: on or after the warm-up,
    /// and before the cool-down when there is one.
    pub fn is_measured(&self, start: Time) -> bool {
        start >= Time::ZERO + self.warmup
            && self
                .measure_until
                .is_none_or(|end| start < Time::ZERO + end)
    }

    /// Bytes a data frame adds to its payload on the wire: the framing and the extra headers.
    pub fn data_overhead(&self) -> u32 {
        self.framing.data + self.extra_header_bytes
    }

    /// The transport flow `spec` runs: the configuration's, pacing by the frames its data
    /// packets are on the wire ([`framing`](Self::framing) and the
    /// [`extra_header_bytes`](Self::extra_header_bytes)), with its own path's BDP-FC cap under
    /// [`BdpCapScope::Path`], and Swift told its path's switches.
    pub fn flow_transport(&self, spec: &FlowSpec) -> TransportConfig {
        let mut t = self.transport;
        t.data_framing = self.data_overhead();
        if let CcConfig::Swift(p) = &mut t.cc {
            // Swift scales its target with the switches on the flow's path.
            p.hops = self
                .topology
                .path(spec.src, spec.dst)
                .hops
                .saturating_sub(1);
        }
        match (self.bdp_cap_scope, t.bdp_cap) {
            (BdpCapScope::Path, Some(_)) => {
                let path = self.topology.path(spec.src, spec.dst);
                let frame = full_frame_bytes(t.mtu, self.data_overhead());
                let trip = (self.bdp_round_trip).of(
                    path.propagation,
                    path.rates,
                    (frame, self.framing.reply),
                );
                let cap = bdp_cap_packets(path.bottleneck, trip, frame, self.bdp_round_trip);
                TransportConfig {
                    bdp_cap: Some(cap),
                    ..t
                }
            }
            _ => t,
        }
    }

    /// The time the fastest link takes to serialize [`max_frame_bytes`](Self::max_frame_bytes)
    /// (`None` without ports): what the event wheel's buckets and partition windows are sized
    /// by.
    pub fn fastest_frame_time(&self) -> Option<Duration> {
        let bytes = self.max_frame_bytes();
        (self.topology.ports().iter())
            .map(|port| port.rate.serialization(bytes))
            .min()
    }

    /// The largest frame any packet of this run puts on a link (see [`max_frame_bytes`]), with
    /// an in-band telemetry record per switch of the longest path when the controller asks
    /// for them (INT's header is among the extra header bytes).
    pub fn max_frame_bytes(&self) -> u64 {
        let verbs = self.verbs_irn_headers && self.flows.iter().any(|f| f.verb.is_some());
        let int_hops = match self.transport.cc.wants_int() {
            true => self.topology.max_path_switches() as u64,
            false => 0,
        };
        max_frame_bytes(self.transport.mtu, self.data_overhead(), verbs)
            + int_hops * u64::from(irn_core::cc::int::INT_HOP_BYTES)
    }
}

/// The largest frame on a link: a full MTU with `overhead` bytes of framing and extra headers
/// and, when verbs packets carry IRN's headers, a RETH and a WQE sequence number (a
/// Write-with-immediate's last packet).
pub fn max_frame_bytes(mtu: u32, overhead: u32, verbs_irn_headers: bool) -> u64 {
    let verbs = if verbs_irn_headers {
        irn_core::packet::RETH_BYTES + irn_core::verbs::WQE_SN_BYTES
    } else {
        0
    };
    u64::from(mtu + overhead + verbs)
}

/// The IRN paper's switch (§4.1): input-queued with virtual output queues, round-robin output
/// arbitration, a separate buffer per input port with tail drop, optional PFC.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SwitchConfig {
    pub model: SwitchModel,
    /// Buffer per input port (input-queued model, default 240 KB = 2 × BDP) or per switch
    /// (shared-buffer model), in bytes.
    pub buffer_bytes: u64,
    /// `None` disables PFC: packets that do not fit are dropped.
    pub pfc: Option<PfcConfig>,
    /// RED-style ECN marking on each output's queue; `None` marks nothing.
    pub ecn: Option<EcnConfig>,
}

/// RED-style ECN marking (as DCQCN configures it): a data packet leaving an output whose queue
/// holds `q` bytes is marked CE with probability 0 for `q ≤ kmin`, rising linearly to `pmax` at
/// `kmax`, and 1 above `kmax`. DCTCP's step marking is `kmin = kmax = K`.
///
/// The queue is the output's: the bytes waiting for it in every input's virtual output queue.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EcnConfig {
    pub kmin_bytes: u64,
    pub kmax_bytes: u64,
    pub pmax: f64,
    /// The thresholds are those of a port of the hosts' link rate, and a port of another rate
    /// marks at thresholds scaled by its rate over that one ([`ecn_scale_q16`]), as HPCC's
    /// ns-3 scripts give them (`KMIN_MAP` and `KMAX_MAP` proportional to the rate); false: every
    /// port marks at the same thresholds.
    pub per_rate: bool,
    /// The queue a leaving packet is marked by counts the packet itself (irn's rule); false:
    /// it is taken out first, as ns-3's `SwitchNode::SwitchNotifyDequeue` does.
    pub counts_departing: bool,
}

impl EcnConfig {
    /// DCQCN's marking, as the IRN paper uses it (MODEL §7, from the DCQCN paper): 5 KB, 200 KB, 1 %.
    pub const DCQCN: EcnConfig = EcnConfig {
        kmin_bytes: 5_000,
        kmax_bytes: 200_000,
        pmax: 0.01,
        per_rate: false,
        counts_departing: true,
    };

    /// DCTCP's step marking at K = 65 packets at 10 Gb/s, scaled with the link rate (DCTCP paper;
    /// MODEL §7), in full frames of `frame_bytes`.
    pub fn dctcp(rate: irn_core::Bandwidth, frame_bytes: u64) -> EcnConfig {
        let k = 65 * frame_bytes * rate.as_bps() / 10_000_000_000;
        EcnConfig {
            kmin_bytes: k,
            kmax_bytes: k,
            pmax: 1.0,
            per_rate: false,
            counts_departing: true,
        }
    }

    /// The probability of marking a packet leaving a queue of `queue_bytes`.
    pub fn probability(&self, queue_bytes: u64) -> f64 {
        if queue_bytes <= self.kmin_bytes {
            0.0
        } else if queue_bytes > self.kmax_bytes {
            1.0
        } else {
            self.pmax * (queue_bytes - self.kmin_bytes) as f64
                / (self.kmax_bytes - self.kmin_bytes).max(1) as f64
        }
    }
}

/// What a port of `rate` multiplies its queue by, in 16.16 fixed point, to compare it with
/// thresholds set for `reference` ([`EcnConfig::per_rate`]): `reference / rate`. Marking a
/// queue `q` at thresholds × `rate / reference` is marking `q × reference / rate` at the
/// thresholds themselves.
pub fn ecn_scale_q16(rate: irn_core::Bandwidth, reference: irn_core::Bandwidth) -> u32 {
    let scale = (u128::from(reference.as_bps()) << 16) / u128::from(rate.as_bps().max(1));
    u32::try_from(scale).unwrap_or(u32::MAX)
}

/// A shared-buffer switch input's ingress alpha when it scales with the port's rate
/// ([`SwitchModel::SharedBuffer`]'s `alpha_per_rate`): `alpha` doubled for each doubling of
/// `rate` past `reference` (a rate between two doublings counts the next), up to 1, as HPCC's
/// ns-3 sets `pfc_a_shift` (1/8 at the NICs' 100 Gb/s, 1/2 at 400 Gb/s).
pub fn alpha_at_rate(alpha: f64, rate: irn_core::Bandwidth, reference: irn_core::Bandwidth) -> f64 {
    let (mut alpha, mut rate) = (alpha, rate.as_bps());
    while rate > reference.as_bps() && alpha < 1.0 {
        alpha = (2.0 * alpha).min(1.0);
        rate /= 2;
    }
    alpha
}

/// How a switch buffers packets (see `crate::switch`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SwitchModel {
    /// The IRN paper's: input-queued, a buffer per input port, virtual output queues.
    InputQueued,
    /// Output-queued with one buffer shared by all ports and dynamic thresholds
    /// (alpha × free buffer), PFC accounted on ingress (Eunomia §5; the ns-3 RDMA models).
    SharedBuffer {
        /// With PFC, each input's share of the pool is bounded by `ingress_alpha` × the free
        /// pool; unused without PFC.
        ingress_alpha: f64,
        /// Each output queue is bounded by `egress_alpha` × the free pool; above it, packets
        /// are dropped. `None`: no such bound (with PFC, lossless; without, only a full buffer
        /// drops). See `crate::switch::shared`.
        egress_alpha: Option<f64>,
        /// The order each output sends its queued data packets in.
        scheduling: Scheduling,
        /// With PFC, where an input's packets go once its share passes its threshold.
        pfc_headroom: PfcHeadroom,
        /// With PFC, each input's `ingress_alpha` is [`alpha_at_rate`] of its port's rate over
        /// the hosts' link rate, as in HPCC's ns-3; false: every input's is `ingress_alpha`.
        alpha_per_rate: bool,
    },
}

/// Where a shared-buffer switch with PFC puts an input's packets once the input's share has
/// passed its threshold (`[switch] pfc_headroom`). Either way the input pauses its upstream
/// neighbour there and resumes once its headroom is empty and its share is the resume gap
/// below the threshold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PfcHeadroom {
    /// Into the input's headroom, reserved out of the buffer for what the upstream port sends
    /// after the pause; the share stays at the threshold, and the input resumes only once that
    /// headroom has drained.
    #[default]
    OnPause,
    /// Into the shared pool still, past the threshold; headroom only once the pool is full. The
    /// rule of ns-3's `SwitchMmu` (HPCC's and ConWeave's), where headroom bytes are counted only
    /// while the whole shared pool is in use: an input resumes as soon as its share is back
    /// under the threshold, so the pauses a busy input sends last a packet or two rather than
    /// the time its headroom takes to drain.
    PoolFull,
}

/// The order an output port sends its queued data packets in (`[switch] scheduling`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Scheduling {
    /// Arrival order; a full buffer drops the arriving packet.
    #[default]
    Fifo,
    /// pFabric's shortest remaining processing time: the flow with the fewest bytes left goes
    /// first, its earliest queued packet leading, and a full buffer drops the packet with the
    /// most (see `crate::switch::shared::srpt`).
    Srpt,
    /// The same ranks, but each packet is sent by its own: a flow's later packets, which have
    /// fewer bytes left, overtake its earlier ones in a queue (the reordering Eunomia's SRPT
    /// shows, §5.4).
    SrptPerPacket,
}

impl Scheduling {
    /// Whether outputs rank packets (and so a full buffer may evict).
    pub fn is_srpt(self) -> bool {
        self != Scheduling::Fifo
    }
}

/// Priority flow control on switch input ports (IRN §2.2, §4.1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PfcConfig {
    pub threshold: PfcThreshold,
    /// Resume once occupancy is this far below the pause threshold (choice: 2 MTU-sized frames).
    pub resume_gap_bytes: u64,
    /// XOFF/XON without timers, or timed frames refreshed while paused (`crate::pause`).
    pub frames: PauseFrames,
}

/// When an input port pauses its upstream neighbour.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PfcThreshold {
    /// The buffer minus the [`pfc_headroom_bytes`] of the input's link, which absorbs
    /// everything the upstream port can still send after the pause is triggered. This makes PFC
    /// truly lossless; the IRN paper's 220 KB (buffer − link BDP) omits the frames.
    Auto,
    /// A fixed occupancy in bytes, e.g. the paper's 220 KB.
    Bytes(u64),
}

impl PfcThreshold {
    /// The pause threshold of an input port whose link is `link` (as seen from the switch).
    pub fn resolve(self, buffer_bytes: u64, link: &Port, max_frame_bytes: u64) -> u64 {
        match self {
            PfcThreshold::Bytes(b) => b,
            PfcThreshold::Auto => {
                buffer_bytes.saturating_sub(pfc_headroom_bytes(link, max_frame_bytes))
            }
        }
    }
}

/// What an input port whose link is `link` (as seen from the switch) can still receive after it
/// decides to pause its upstream neighbour, with frames of at most `max_frame_bytes`: the frame
/// that crossed the threshold, the link's round trip (the PAUSE travelling up, data in flight
/// coming down), the PAUSE frame's own serialization, and the frame the upstream port is
/// serializing when the PAUSE lands, which it finishes. Both switch models reserve it, so PFC
/// never drops.
pub fn pfc_headroom_bytes(link: &Port, max_frame_bytes: u64) -> u64 {
    link.rate.bdp_bytes(link.delay * 2)
        + 2 * max_frame_bytes
        + u64::from(irn_core::packet::CONTROL_FRAME_BYTES)
}

impl SwitchConfig {
    /// 240 KB per input port: twice the default BDP (§4.1).
    pub const DEFAULT_BUFFER_BYTES: u64 = 240_000;
}

/// A full data packet's bytes on the wire: the MTU's payload and `overhead` bytes of framing
/// and extra headers.
pub fn full_frame_bytes(mtu: u32, overhead: u32) -> u64 {
    u64::from(mtu) + u64::from(overhead)
}

/// The BDP cap of IRN §3.2: the bandwidth-delay product of `round_trip` over the wire size of
/// a full packet, at least 1; rounded down for the propagation's round trip, as the paper
/// (120 000 B / 1086 B = 110 in the default case), up for an idle path's ([`BdpRoundTrip`]).
pub fn bdp_cap_packets(
    rate: Bandwidth,
    round_trip: Duration,
    full_frame: u64,
    covers: BdpRoundTrip,
) -> u32 {
    let bdp = rate.bdp_bytes(round_trip);
    let packets = match covers {
        BdpRoundTrip::Propagation => bdp / full_frame,
        BdpRoundTrip::Idle => bdp.div_ceil(full_frame),
    };
    u32::try_from(packets).unwrap_or(u32::MAX).max(1)
}

/// RTO_high of IRN §4.1 derived from the network (`transport.rto_high = "auto"`): "an estimate
/// of the maximum possible round trip time", the longest path's round-trip propagation plus the
/// time to drain the most one congested output can hold, at its switch's slowest port. Returned
/// as (round trip, drain); RTO_high is their sum.
///
/// What one output can hold, by switch model (the switch whose drain takes longest counts):
/// - input-queued: every input buffer of its switch, since all its inputs' VOQs can feed one
///   output. The paper's default case, 6 ports × 240 KB at 40 Gb/s, drains in 288 µs; with the
///   24 µs round trip, 312 µs, its "≈ 320 µs".
/// - shared-buffer with an egress threshold (`egress_alpha`, always set without PFC): one queue
///   alone in the pool `P`, where it stops growing at `a × (P − q) = q`: `a·P / (1 + a)`.
/// - shared-buffer with PFC and no egress threshold: the `n` inputs' shares, each stopping at
///   `α × (P − n·s) = s` when all feed the one output, `n·α·P / (1 + n·α)`, plus every input's
///   headroom. `P` is the buffer less the headrooms.
pub fn rto_high_auto(
    topology: &Topology,
    buffer_bytes: u64,
    model: SwitchModel,
    pfc: bool,
    max_frame_bytes: u64,
) -> (Duration, Duration) {
    let drain = |n: &crate::ids::NodeId| {
        let range = topology.node_ports(*n);
        let ports = &topology.ports()[range.start as usize..range.end as usize];
        let buffers: u64 = (range.clone())
            .map(|p| topology.input_buffer(PortId(p), buffer_bytes))
            .sum();
        let fill = match model {
            SwitchModel::InputQueued => buffers,
            SwitchModel::SharedBuffer {
                ingress_alpha,
                egress_alpha,
                ..
            } => {
                // The pool as the simulator sizes it.
                let pool = topology.shared_pool(*n, buffer_bytes);
                let headroom: u64 = if pfc {
                    (ports.iter())
                        .map(|p| pfc_headroom_bytes(p, max_frame_bytes))
                        .sum()
                } else {
                    0
                };
                let shared = pool.saturating_sub(headroom) as f64;
                match egress_alpha {
                    Some(a) => (a * shared / (1.0 + a)) as u64,
                    None => {
                        let na = ports.len() as f64 * ingress_alpha;
                        (na * shared / (1.0 + na)) as u64 + headroom
                    }
                }
            }
        };
        let slowest = ports.iter().map(|p| p.rate).min();
        slowest.map_or(Duration::ZERO, |r| r.serialization(fill))
    };
    let worst = topology.switches().iter().map(drain).max();
    (
        topology.max_path_propagation() * 2,
        worst.unwrap_or(Duration::ZERO),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{NodeId, PortId};
    use irn_core::Bandwidth;

    /// HPCC's ns-3 rule: one doubling of the alpha per halving that keeps the rate above the
    /// NICs', at most 1.
    #[test]
    fn an_inputs_alpha_doubles_with_each_doubling_of_its_rate() {
        let gbps = |g: u64| Bandwidth::from_bps(g * 1_000_000_000);
        for (alpha, rate, want) in [
            (0.125, 100, 0.125),
            (0.125, 25, 0.125),
            (0.125, 200, 0.25),
            (0.125, 150, 0.25),
            (0.125, 400, 0.5),
            (0.125, 800, 1.0),
            (0.125, 1600, 1.0),
            (0.75, 400, 1.0),
            (1.0, 400, 1.0),
        ] {
            assert_eq!(
                alpha_at_rate(alpha, gbps(rate), gbps(100)),
                want,
                "{alpha} at {rate}"
            );
        }
    }

    #[test]
    fn ecn_scales_are_the_reference_over_the_rate() {
        let gbps = |g: u64| Bandwidth::from_bps(g * 1_000_000_000);
        for (rate, want) in [(100, 1 << 16), (400, 1 << 14), (25, 1 << 18), (40, 163_840)] {
            assert_eq!(ecn_scale_q16(gbps(rate), gbps(100)), want, "{rate}");
        }
    }

    #[test]
    fn seeded_initial_psns_are_spread_over_the_psn_space_and_repeatable() {
        let psns: Vec<u32> = (0..1000)
            .flat_map(|flow| (0..4).map(move |space| InitialPsn::Seeded.psn(7, flow, space)))
            .map(Psn::value)
            .collect();
        let again: Vec<u32> = (0..1000)
            .flat_map(|flow| (0..4).map(move |space| InitialPsn::Seeded.psn(7, flow, space)))
            .map(Psn::value)
            .collect();
        assert_eq!(psns, again);
        let mut distinct = psns.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert!(distinct.len() > 3990, "{} distinct of 4000", distinct.len());
        // Some start in the top 1/16 of the space, within 2^20 packets of the wrap.
        assert!(psns.iter().filter(|&&p| p >= 0xF0_0000).count() > 150);
        assert_ne!(
            InitialPsn::Seeded.psn(8, 0, 0),
            InitialPsn::Seeded.psn(7, 0, 0)
        );
        let fixed = InitialPsn::Fixed(Psn::new(5));
        assert_eq!(fixed.psn(7, 3, 1), Psn::new(5));
    }

    #[test]
    fn red_marking_probability() {
        let red = EcnConfig::DCQCN;
        assert_eq!(red.probability(5_000), 0.0);
        assert!((red.probability(102_500) - 0.005).abs() < 1e-12);
        assert_eq!(red.probability(200_000), 0.01);
        assert_eq!(red.probability(200_001), 1.0);
        let step = EcnConfig::dctcp(Bandwidth::from_gbps(10), 1086);
        assert_eq!((step.kmin_bytes, step.kmax_bytes), (70_590, 70_590));
        assert_eq!(step.probability(70_590), 0.0);
        assert_eq!(step.probability(70_591), 1.0);
    }

    /// The paper's default case: 40 Gb/s, 12 µs one way, 1 KB payloads: 110. An AI fabric's
    /// cross-spine path (4 links of 100 Gb/s and 1 µs, 4 KB payloads): 24 by its propagation,
    /// 8 µs, while its idle round trip is 8 + 4 × (0.33264 + 0.00512) = 9.35104 µs, 116,888 B,
    /// 28.1 full frames: 29, rounded up.
    #[test]
    fn bdp_caps_by_round_trip() {
        let gbps = Bandwidth::from_gbps;
        let cases = [
            (40, 12, 6, 1024, BdpRoundTrip::Propagation, 24_000_000, 110),
            (100, 4, 4, 4096, BdpRoundTrip::Propagation, 8_000_000, 24),
            (100, 4, 4, 4096, BdpRoundTrip::Idle, 9_351_040, 29),
        ];
        for (rate, one_way_us, links, mtu, covers, trip_ps, cap) in cases {
            let frame = full_frame_bytes(mtu, DATA_FRAMING_BYTES);
            let rates = vec![gbps(rate); links];
            let reply = CONTROL_FRAME_BYTES;
            let trip = covers.of(Duration::from_us(one_way_us), rates, (frame, reply));
            assert_eq!(trip, Duration::from_ps(trip_ps), "{covers:?} {rate}");
            assert_eq!(bdp_cap_packets(gbps(rate), trip, frame, covers), cap);
        }
    }

    #[test]
    fn auto_pfc_threshold_leaves_room_for_the_link_two_frames_and_the_pause() {
        let link = Port {
            node: NodeId(0),
            peer: PortId(1),
            rate: Bandwidth::from_gbps(40),
            delay: Duration::from_us(2),
        };
        // 240 000 - (20 000 + 2 × 1086 + 64)
        assert_eq!(PfcThreshold::Auto.resolve(240_000, &link, 1086), 217_764);
        assert_eq!(
            PfcThreshold::Bytes(220_000).resolve(240_000, &link, 1086),
            220_000
        );
    }

    #[test]
    fn rto_high_auto_by_hand() {
        let us = Duration::from_us;
        let g = Bandwidth::from_gbps;
        let total = |t: &Topology, buffer: u64, model: SwitchModel, pfc: bool| {
            let (rtt, drain) = rto_high_auto(t, buffer, model, pfc, 1086);
            rtt + drain
        };
        let iq = SwitchModel::InputQueued;
        // The paper's default: k = 6 fat-tree (6-port switches), 40 Gb/s, 2 us, 240 KB per
        // input: 2 × 12 us + 6 × 240 000 B at 40 Gb/s (288 us).
        let fat = |rate| Topology::fat_tree(6, rate, us(2)).unwrap();
        assert_eq!(
            rto_high_auto(&fat(g(40)), 240_000, iq, false, 1086),
            (us(24), us(288))
        );
        // 10 and 100 Gb/s: 1152 and 115.2 us of drain.
        assert_eq!(total(&fat(g(10)), 240_000, iq, false), us(1176));
        assert_eq!(
            total(&fat(g(100)), 240_000, iq, false),
            Duration::from_ns(139_200)
        );
        // 60 and 480 KB at 40 Gb/s: 72 and 576 us.
        assert_eq!(total(&fat(g(40)), 60_000, iq, false), us(96));
        assert_eq!(total(&fat(g(40)), 480_000, iq, false), us(600));
        // A star of 4 hosts, 40 Gb/s, 2 us: one 4-port switch, 8 us round trip.
        let star = Topology::star(4, g(40), us(2)).unwrap();
        assert_eq!(total(&star, 240_000, iq, false), us(8 + 192));
        // Shared 1 MB, lossy, egress alpha 1: a queue alone stops at half the pool, 500 000 B:
        // 100 us.
        let shared = |ingress_alpha, egress_alpha| SwitchModel::SharedBuffer {
            ingress_alpha,
            egress_alpha,
            scheduling: Scheduling::Fifo,
            pfc_headroom: PfcHeadroom::OnPause,
            alpha_per_rate: false,
        };
        assert_eq!(
            total(&star, 1_000_000, shared(0.125, Some(1.0)), false),
            us(108)
        );
        // With PFC, ingress alpha 1/4, no egress threshold: each input reserves 2 × 10 000 B
        // + 2 × 1086 B + 64 B = 22 236 B, 88 944 B in all; P = 911 056 B; n·α = 1: half of P,
        // 455 528 B, plus the headrooms: 544 472 B, 108.8944 us.
        assert_eq!(
            total(&star, 1_000_000, shared(0.25, None), true),
            us(8) + Duration::from_ps(108_894_400)
        );
        // An egress threshold bounds the queue instead: 1/3 × P at alpha 1/2 (303 685 B).
        assert_eq!(
            total(&star, 1_000_000, shared(0.25, Some(0.5)), true),
            us(8) + g(40).serialization(303_685)
        );
    }
}
