//! Flow traces (`irn run --trace-flow`): every event of a few chosen flows, in time order, one
//! [`TraceRow`] each, for a protocol engineer looking at a flow that misbehaves (what ns-3's
//! trace sources give its users).
//!
//! The simulation is generic over its [`Trace`]. With [`NoTrace`] (every run but a traced
//! one) each hook is `if T::ON && …` with `T::ON` false: it compiles away, and the packet path
//! has no check at all. With a [`Tracer`], each hook checks one byte of a line the path reads
//! anyway (a packet slot's flag, [`Packets::traced`](crate::packets::Packets::traced),
//! where a packet is sent on a link, queued at a switch, dropped or received; a flow's
//! `Flow::traced` where its transport is looked at), and only a traced
//! flow's packets come to the code here, out of line and `#[cold]`. The trace only reads: a
//! traced run computes exactly what the untraced one does.
//!
//! What `irn-core` does inside a call (a timeout that fired, a recovery entered or left, a new
//! rate or window) is not reported by it: the trace compares a traced flow's sender state with
//! what it last saw, whenever the simulator touches that flow (a packet of it sent or
//! received, its timer), so the transport's hot path carries no tracing at all. A change is
//! stamped with the instant of that touch, which is the instant it happened except for a rate
//! change made while polling a sender that then had nothing to send (seen at its next event).

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use irn_core::packet::{Ecn, PacketKind};
use irn_core::{Bandwidth, Duration, Packet, Psn, Time};

use super::hosts::Endpoints;
use super::Simulation;
use crate::ids::{FlowId, HostIdx, PortId};
use crate::packet::SimPacket;
use crate::packets::PacketId;
use crate::port::OwnerKind;
use crate::switch::Queues;

/// The header of `trace.csv`, the columns of [`TraceRow`]'s `Display`.
pub const HEADER: &str = "time_us,flow,node,port,event,psn,bytes,detail";

/// What happened to a traced flow; the `event` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceEvent {
    /// The flow starts (its sender is posted); `bytes` is its size.
    Start,
    /// A NIC puts a packet of the flow on the wire (data, or a control packet back to the
    /// source).
    Send,
    /// A switch queues the packet for an output port.
    Enqueue,
    /// The packet waited while its output port was paused by PFC; stamped when it leaves.
    PauseWait,
    /// A switch starts sending the packet on its output port.
    Dequeue,
    /// The switch marked the packet CE as it left.
    EcnMark,
    /// A switch dropped the packet: no room in its buffer.
    Drop,
    /// The packet was lost at the row's port: on the wire of a lossy link, or to a link
    /// failure (the detail says which).
    Lost,
    /// The packet reached the host it was sent to.
    Arrive,
    /// The sender's retransmission timer fired.
    Timeout,
    /// The sender entered loss recovery (a go-back-N rewind, a selective-repeat episode).
    RecoveryEnter,
    /// A selective-repeat (or TCP) recovery episode ended.
    RecoveryExit,
    /// The congestion controller's pacing rate changed.
    Rate,
    /// The congestion controller's window changed.
    Window,
    /// The receiver completed the message.
    Received,
    /// The sender saw the message fully acknowledged.
    Acked,
    /// ConWeave: the source ToR sends the packet as its epoch's TAIL, the last on the old
    /// path; the packets after it take the path the detail names.
    Reroute,
    /// ConWeave: the destination ToR holds the packet in its flow's reorder queue.
    Hold,
    /// ConWeave: the destination ToR lets the held packet go, on its TAIL or on its timer.
    Release,
}

impl TraceEvent {
    fn name(self) -> &'static str {
        match self {
            TraceEvent::Start => "start",
            TraceEvent::Send => "send",
            TraceEvent::Enqueue => "enqueue",
            TraceEvent::PauseWait => "pause_wait",
            TraceEvent::Dequeue => "dequeue",
            TraceEvent::EcnMark => "ecn_mark",
            TraceEvent::Drop => "drop",
            TraceEvent::Lost => "lost",
            TraceEvent::Arrive => "arrive",
            TraceEvent::Timeout => "timeout",
            TraceEvent::RecoveryEnter => "recovery_enter",
            TraceEvent::RecoveryExit => "recovery_exit",
            TraceEvent::Rate => "rate",
            TraceEvent::Window => "window",
            TraceEvent::Received => "received",
            TraceEvent::Acked => "acked",
            TraceEvent::Reroute => "reroute",
            TraceEvent::Hold => "hold",
            TraceEvent::Release => "release",
        }
    }
}

/// The `detail` column: what the event's row says beyond the other columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    None,
    /// The packet's kind: `data` (with `retransmission` and `ce` when they hold), `ack`,
    /// `nack sack=PSN`, `sack sacked=PSN`, `drop_nack dropped=PSN`, `cnp`.
    Packet(Packet),
    /// `queue_bytes=N`: data bytes waiting for the output besides this packet (control packets
    /// go ahead of them); `paused` when the output is paused; `held` when its link has failed
    /// and the packet waits for it to come back (`to_failed_link = "hold"`).
    Queue {
        bytes: u64,
        paused: bool,
        held: bool,
    },
    /// `paused_us=X`: how long the output was paused while the packet waited.
    Paused(Duration),
    /// `recoveries=N`: recovery episodes so far.
    Recoveries(u64),
    /// `timeouts=N`: timeouts so far.
    Timeouts(u64),
    /// `rate_bps=N`, or `rate_bps=none` once the controller stops pacing.
    Rate(Option<Bandwidth>),
    /// `window=N` packets, or `window=none`.
    Window(Option<u32>),
    /// `cause=wire` (a lossy link) or `cause=failure` (a failed link, or no route left).
    Loss(&'static str),
    /// `path=A->B epoch=E`: a reroute from path A to path B (indices among the source ToR's
    /// paths to the destination ToR; the same when no other path was free) after epoch E.
    Reroute {
        from: u8,
        to: u8,
        epoch: u32,
    },
    /// `flush_us=X`: when the reorder queue flushes unless its TAIL comes first (the time can
    /// move later as more of the old path's packets arrive).
    Hold(Time),
    /// `by=tail` or `by=timer`.
    Release(&'static str),
}

/// One row of `trace.csv` ([`HEADER`]); its `Display` is the CSV line, without the newline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRow {
    /// `time_us`: microseconds, exact (six decimals: picoseconds).
    pub time: Time,
    /// `flow`: the id in `flows.csv`.
    pub flow: FlowId,
    /// `node`: `hostN` (N as in `flows.csv`'s `src`/`dst`) or `switchN`.
    pub node: OwnerKind,
    /// `port`: the node's local port number (the output, at a switch); empty for an event of
    /// the transport.
    pub port: Option<u16>,
    pub event: TraceEvent,
    /// `psn`: the packet's PSN (for an ACK or NACK, the cumulative one); empty when no packet.
    pub psn: Option<Psn>,
    /// `bytes`: the packet's bytes on the wire, or the flow's size at `start`.
    pub bytes: Option<u64>,
    pub detail: Detail,
}

impl fmt::Display for TraceRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{},", Micros(self.time.as_ps()), self.flow)?;
        match self.node {
            OwnerKind::Host(h) => write!(f, "host{h},")?,
            OwnerKind::Switch(s) => write!(f, "switch{s},")?,
        }
        if let Some(port) = self.port {
            write!(f, "{port}")?;
        }
        write!(f, ",{},", self.event.name())?;
        if let Some(psn) = self.psn {
            write!(f, "{psn}")?;
        }
        f.write_str(",")?;
        if let Some(bytes) = self.bytes {
            write!(f, "{bytes}")?;
        }
        f.write_str(",")?;
        self.detail.fmt(f)
    }
}

impl fmt::Display for Detail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Detail::None => Ok(()),
            Detail::Loss(cause) => write!(f, "cause={cause}"),
            Detail::Packet(p) => match p.kind {
                PacketKind::Data {
                    retransmission,
                    ecn,
                    ..
                } => {
                    f.write_str("data")?;
                    if retransmission {
                        f.write_str(" retransmission")?;
                    }
                    if ecn == Ecn::Ce {
                        f.write_str(" ce")?;
                    }
                    Ok(())
                }
                PacketKind::Ack { .. } => f.write_str("ack"),
                PacketKind::Nack { sack, .. } => write!(f, "nack sack={sack}"),
                PacketKind::Sack { sacked, .. } => write!(f, "sack sacked={sacked}"),
                PacketKind::DropNack { dropped, .. } => write!(f, "drop_nack dropped={dropped}"),
                PacketKind::Cnp => f.write_str("cnp"),
            },
            Detail::Queue {
                bytes,
                paused,
                held,
            } => {
                write!(f, "queue_bytes={bytes}")?;
                if paused {
                    f.write_str(" paused")?;
                }
                if held {
                    f.write_str(" held")?;
                }
                Ok(())
            }
            Detail::Paused(d) => write!(f, "paused_us={}", Micros(d.as_ps())),
            Detail::Recoveries(n) => write!(f, "recoveries={n}"),
            Detail::Timeouts(n) => write!(f, "timeouts={n}"),
            Detail::Rate(Some(r)) => write!(f, "rate_bps={}", r.as_bps()),
            Detail::Rate(None) => f.write_str("rate_bps=none"),
            Detail::Window(Some(w)) => write!(f, "window={w}"),
            Detail::Window(None) => f.write_str("window=none"),
            Detail::Reroute { from, to, epoch } => write!(f, "path={from}->{to} epoch={epoch}"),
            Detail::Hold(at) => write!(f, "flush_us={}", Micros(at.as_ps())),
            Detail::Release(by) => write!(f, "by={by}"),
        }
    }
}

/// Picoseconds written as microseconds, exactly (six decimals).
struct Micros(u64);

impl fmt::Display for Micros {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:06}", self.0 / 1_000_000, self.0 % 1_000_000)
    }
}

/// `ids` as flows of a run with `flows` flows, or why not: an id that names no flow, and the
/// valid range.
pub fn check_flows(ids: &[u32], flows: usize) -> Result<(), String> {
    match ids.iter().find(|&&id| id as usize >= flows) {
        None => Ok(()),
        Some(id) if flows == 0 => Err(format!("flow {id} does not exist: the run has no flows")),
        Some(id) => Err(format!(
            "flow {id} does not exist: the run's flows are 0 to {} (the `flow_id` column of flows.csv)",
            flows - 1
        )),
    }
}

/// A traced flow's sender state as the trace last saw it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Seen {
    timeouts: u64,
    recoveries: u64,
    in_recovery: bool,
    rate: Option<Bandwidth>,
    window: Option<u32>,
    received: bool,
    acked: bool,
}

/// A traced packet in the network: what its next hop compares against.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    /// It was marked CE before (so a mark at this hop is a new one).
    ce: bool,
    /// It waits in a switch queue (rather than passing an idle port at once).
    queued: bool,
    /// Its output port's paused time when it was queued.
    paused_before: Duration,
}

/// What a simulation traces: its hooks run only when `ON`, a constant, so that with
/// [`NoTrace`] they are compiled out.
pub trait Trace {
    const ON: bool;
    /// Whether the packet path calls credit flow control's hooks (`crate::credits`): a
    /// constant too, so runs without credits carry none of their code. Measured with callgrind:
    /// testing a byte of the port's line at every send and arrival cost 4–5 % more
    /// instructions on the leaf-spine benchmark and the default scenario (it changed how the
    /// event loop was compiled); compiled out, 0.5–0.7 %.
    const CREDITS: bool;
    /// Whether a link arrival asks if the packet was lost on the wire (`crate::loss`): a
    /// constant for the same reason; the test of a flag in the event loop cost 0.7 % more
    /// instructions on the leaf-spine benchmark (984.5 M against 977.7 M).
    const LOSS: bool;
    /// Whether the packet path calls in-band telemetry's hooks (`super::telemetry`): a
    /// constant for the same reason, so runs whose controller reads no telemetry carry none
    /// of it.
    const INT: bool;
    /// Whether the run may take its events a partition at a time ([`crate::partition`]): a
    /// constant for the same reason, so the event queue of a run compiled without tests for
    /// partitions at all (each schedule, pop and look-ahead would test for them: +3.5 %
    /// instructions on the leaf-spine benchmark).
    const PARTS: bool;
    /// What the trace has seen; `None` when not tracing.
    fn state(&mut self) -> Option<&mut TraceState>;
    /// Hands a row over. No row handed over later will be earlier than `settled`: in a
    /// partitioned run, rows come in time order only partition by partition within a window
    /// ([`crate::partition`]), so the trace holds back what is not settled and sorts it.
    fn emit(&mut self, row: &TraceRow, settled: Time);
    /// Hands over every row held back up to `end`, the run's last instant, and drops the
    /// rest: a partitioned run's partitions served before the one where its last flow ended
    /// had already run past that instant, which one global order would not have.
    fn flush(&mut self, _end: Time) {}
}

/// No trace: every run but a traced one.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoTrace;

impl Trace for NoTrace {
    const ON: bool = false;
    const CREDITS: bool = false;
    const LOSS: bool = false;
    const INT: bool = false;
    const PARTS: bool = false;
    fn state(&mut self) -> Option<&mut TraceState> {
        None
    }
    fn emit(&mut self, _: &TraceRow, _: Time) {}
}

/// No trace, with the rare packet-path features compiled in (credit flow control, lossy links,
/// in-band telemetry, partitions): every untraced run with `[switch] credits`, a lossy link, a
/// controller that reads telemetry, or partitions. One type for all of them keeps the event
/// loop compiled twice, not once per combination; each tests at run time whether it is
/// configured. (A type of its own for partitioned runs, without the other features' tests,
/// ran 3.6 % fewer instructions on a k = 24 fat-tree and no faster: 0.997× CPU, 8 pairs.)
#[derive(Debug, Clone, Copy, Default)]
pub struct NoTraceLinkHooks;

impl Trace for NoTraceLinkHooks {
    const ON: bool = false;
    const CREDITS: bool = true;
    const LOSS: bool = true;
    const INT: bool = true;
    const PARTS: bool = true;
    fn state(&mut self) -> Option<&mut TraceState> {
        None
    }
    fn emit(&mut self, _: &TraceRow, _: Time) {}
}

/// What a trace last saw of each traced flow and packet (a handful: only traced flows'
/// packets in flight).
#[derive(Debug, Default)]
pub struct TraceState {
    flows: BTreeMap<FlowId, Seen>,
    packets: HashMap<PacketId, InFlight>,
}

/// A trace of some flows, handing its rows to a sink as they happen.
///
/// Generic over the sink, so a traced simulation is compiled where its sink is written (the
/// `irn` command): one in this crate too would share the packet path's helpers with the
/// untraced one, and LLVM, which inlines a helper with one caller more readily, stopped
/// inlining the switches' admission into the untraced event loop (+1.3 % instructions on the
/// leaf-spine benchmark).
pub struct Tracer<S> {
    state: TraceState,
    sink: S,
    /// Rows not yet settled, in the order they came.
    held: Vec<TraceRow>,
}

impl<S: FnMut(&TraceRow)> Tracer<S> {
    /// Traces the flows `ids` (checked with [`check_flows`]) into `sink`.
    pub fn new(ids: &[u32], sink: S) -> Self {
        let flows = ids.iter().map(|&id| (FlowId(id), Seen::default()));
        Tracer {
            state: TraceState {
                flows: flows.collect(),
                packets: HashMap::new(),
            },
            sink,
            held: Vec::new(),
        }
    }
}

impl<S: FnMut(&TraceRow)> Trace for Tracer<S> {
    const ON: bool = true;
    const CREDITS: bool = true;
    const LOSS: bool = true;
    const INT: bool = true;
    const PARTS: bool = true;
    fn state(&mut self) -> Option<&mut TraceState> {
        Some(&mut self.state)
    }
    fn emit(&mut self, row: &TraceRow, settled: Time) {
        if self.held.is_empty() && row.time < settled {
            (self.sink)(row);
            return;
        }
        self.held.push(*row);
        // Stable: rows of one instant keep the order they came in.
        self.held.sort_by_key(|r| r.time);
        let done = self.held.partition_point(|r| r.time < settled);
        for r in self.held.drain(..done) {
            (self.sink)(&r);
        }
    }
    fn flush(&mut self, end: Time) {
        self.held.retain(|r| r.time <= end);
        for r in self.held.drain(..) {
            (self.sink)(&r);
        }
    }
}

fn is_ce(p: &SimPacket) -> bool {
    matches!(p.pkt.kind, PacketKind::Data { ecn: Ecn::Ce, .. })
}

impl<T: Trace> Simulation<'_, T> {
    /// Marks the traced flows, so that their packets are marked as they are made.
    pub(super) fn mark_traced(mut self) -> Self {
        if let Some(state) = self.trace.state() {
            for f in state.flows.keys() {
                self.flows[f.index()].traced = true;
            }
        }
        self
    }

    /// Hands a row of flow `flow` at node `node` to the sink.
    fn row(
        &mut self,
        (flow, node, port): (FlowId, OwnerKind, Option<u16>),
        event: TraceEvent,
        pkt: Option<&SimPacket>,
        detail: Detail,
    ) {
        let row = TraceRow {
            time: self.now,
            flow,
            node,
            port,
            event,
            psn: pkt.map(|p| p.pkt.psn),
            bytes: pkt.map(|p| u64::from(p.wire_bytes)),
            detail,
        };
        self.trace.emit(&row, self.queue.settled());
    }

    /// The node and local number of port `p`.
    fn place(&self, p: PortId) -> (OwnerKind, Option<u16>) {
        let port = &self.ports[p.index()];
        (port.owner.kind(), Some(port.local))
    }

    /// Flow `f` starts.
    #[cold]
    #[inline(never)]
    pub(super) fn trace_start(&mut self, f: FlowId) {
        let spec = self.cfg.flows[f.index()];
        let row = TraceRow {
            time: self.now,
            flow: f,
            node: OwnerKind::Host(spec.src),
            port: None,
            event: TraceEvent::Start,
            psn: None,
            bytes: Some(spec.size_bytes),
            detail: Detail::None,
        };
        self.trace.emit(&row, self.queue.settled());
    }

    /// Port `p` starts sending the traced packet `id`: a NIC sends it, or a switch sends it
    /// on (straight through an idle port, or from its queue).
    #[cold]
    #[inline(never)]
    pub(super) fn trace_transmit(&mut self, p: PortId, id: PacketId) {
        let pkt = *self.packets.get(id);
        let (node, port) = self.place(p);
        let at = (pkt.flow, node, port);
        if let OwnerKind::Host(h) = node {
            self.trace_observe(pkt.flow, h);
            self.row(at, TraceEvent::Send, Some(&pkt), Detail::Packet(pkt.pkt));
            let hop = InFlight {
                ce: is_ce(&pkt),
                queued: false,
                paused_before: Duration::ZERO,
            };
            if let Some(t) = self.trace.state() {
                t.packets.insert(id, hop);
            }
            return;
        }
        let queued = self
            .trace
            .state()
            .and_then(|t| t.packets.get(&id))
            .is_some_and(|hop| hop.queued);
        if !queued {
            self.enqueue_row(p, id, 0);
        }
        let paused = self.extra[p.index()]
            .pauses
            .until(self.now, self.ports[p.index()].paused);
        let Some(hop) = self.trace.state().and_then(|t| t.packets.get_mut(&id)) else {
            return;
        };
        let waited = paused - hop.paused_before;
        let marked = is_ce(&pkt) && !hop.ce;
        hop.ce = is_ce(&pkt);
        hop.queued = false;
        if waited > Duration::ZERO {
            self.row(
                at,
                TraceEvent::PauseWait,
                Some(&pkt),
                Detail::Paused(waited),
            );
        }
        self.row(at, TraceEvent::Dequeue, Some(&pkt), Detail::None);
        if marked {
            self.row(at, TraceEvent::EcnMark, Some(&pkt), Detail::None);
        }
    }

    /// The traced packet `id` reaches host `h` (and leaves the slab).
    #[cold]
    #[inline(never)]
    pub(super) fn trace_arrive(&mut self, h: HostIdx, id: PacketId) {
        let pkt = *self.packets.get(id);
        if let Some(t) = self.trace.state() {
            t.packets.remove(&id);
        }
        let at = (pkt.flow, OwnerKind::Host(h), Some(0));
        self.row(at, TraceEvent::Arrive, Some(&pkt), Detail::Packet(pkt.pkt));
    }

    /// Switch `s` queued the traced packet `id` for its port `out`, local number `output`.
    #[cold]
    #[inline(never)]
    pub(super) fn trace_enqueue(&mut self, s: usize, out: PortId, output: usize, id: PacketId) {
        let pkt = self.packets.get(id);
        let queued = self.switches[s].queued_bytes(output);
        // A data packet is counted in its queue once admitted; a control packet never is.
        let ahead = if pkt.is_data() {
            queued - u64::from(pkt.wire_bytes)
        } else {
            queued
        };
        self.enqueue_row(out, id, ahead);
    }

    /// The `enqueue` row of the traced packet `id` at port `out`, behind `ahead` data bytes;
    /// notes the port's paused time so far, to tell at the dequeue how long it was paused.
    fn enqueue_row(&mut self, out: PortId, id: PacketId, ahead: u64) {
        let pkt = *self.packets.get(id);
        let paused = self.ports[out.index()].paused;
        let paused_before = self.extra[out.index()].pauses.until(self.now, paused);
        if let Some(hop) = self.trace.state().and_then(|t| t.packets.get_mut(&id)) {
            hop.paused_before = paused_before;
            hop.queued = true;
        }
        let (node, port) = self.place(out);
        let detail = Detail::Queue {
            bytes: ahead,
            paused: paused && pkt.is_data(),
            held: self.ports[out.index()].busy_until == super::failing::DOWN,
        };
        self.row(
            (pkt.flow, node, port),
            TraceEvent::Enqueue,
            Some(&pkt),
            detail,
        );
    }

    /// The switch owning port `out` drops the traced packet `id`, which was for `out`.
    #[cold]
    #[inline(never)]
    pub(super) fn trace_drop(&mut self, out: PortId, id: PacketId) {
        let pkt = *self.packets.get(id);
        if let Some(t) = self.trace.state() {
            t.packets.remove(&id);
        }
        let (node, port) = self.place(out);
        self.row(
            (pkt.flow, node, port),
            TraceEvent::Drop,
            Some(&pkt),
            Detail::None,
        );
    }

    /// ConWeave at switch `s` sends the traced packet `id` as a TAIL: the flow moves from path
    /// `from` to `to` after `epoch`.
    #[cold]
    #[inline(never)]
    pub(super) fn trace_reroute(
        &mut self,
        s: usize,
        id: PacketId,
        (from, to): (u8, u8),
        epoch: u32,
    ) {
        let pkt = *self.packets.get(id);
        self.row(
            (pkt.flow, OwnerKind::Switch(s), None),
            TraceEvent::Reroute,
            Some(&pkt),
            Detail::Reroute { from, to, epoch },
        );
    }

    /// ConWeave holds the traced packet `id`, for port `out`, until `flush_at` at the latest.
    #[cold]
    #[inline(never)]
    pub(super) fn trace_hold(&mut self, out: PortId, id: PacketId, flush_at: Time) {
        self.port_row(out, id, TraceEvent::Hold, Detail::Hold(flush_at));
    }

    /// ConWeave lets the held traced packet `id` go on to port `out`, `by` its TAIL or timer.
    #[cold]
    #[inline(never)]
    pub(super) fn trace_release(&mut self, out: PortId, id: PacketId, by: &'static str) {
        self.port_row(out, id, TraceEvent::Release, Detail::Release(by));
    }

    /// A row of packet `id` at port `out`.
    fn port_row(&mut self, out: PortId, id: PacketId, event: TraceEvent, detail: Detail) {
        let pkt = *self.packets.get(id);
        let (node, port) = self.place(out);
        self.row((pkt.flow, node, port), event, Some(&pkt), detail);
    }

    /// The traced packet `id` was lost at port `p`: on the wire (`cause` "wire") or to a
    /// failure ("failure").
    #[cold]
    #[inline(never)]
    pub(super) fn trace_lost(&mut self, p: PortId, id: PacketId, cause: &'static str) {
        let pkt = *self.packets.get(id);
        if let Some(t) = self.trace.state() {
            t.packets.remove(&id);
        }
        let (node, port) = self.place(p);
        self.row(
            (pkt.flow, node, port),
            TraceEvent::Lost,
            Some(&pkt),
            Detail::Loss(cause),
        );
    }

    /// Compares flow `f`'s transport with what the trace last saw of it and traces the
    /// differences, as host `at` (one of its ends) sees it.
    ///
    /// A message flow's sender is looked at from its source only, and its receiver from its
    /// destination: in a partitioned run the other end's host may be in a partition that has
    /// already run further, and its state would be traced at an instant before it changed. (A
    /// verbs flow is never partitioned: one object drives both its ends.)
    #[cold]
    #[inline(never)]
    pub(super) fn trace_observe(&mut self, f: FlowId, at: HostIdx) {
        let Some(&seen) = self.trace.state().and_then(|t| t.flows.get(&f)) else {
            return;
        };
        let flow = &mut self.flows[f.index()];
        let (src, dst) = (OwnerKind::Host(flow.src), OwnerKind::Host(flow.dst));
        let both = self.cfg.flows[f.index()].verb.is_some();
        let (at_src, at_dst) = (both || at == flow.src, both || at == flow.dst);
        let (received, acked) = (flow.received_at.is_some(), flow.acked_at.is_some());
        let mut now = match super::hosts::sender_side(&mut flow.qp, flow.ended) {
            Some(Endpoints::Message { sender, .. }) if at_src => Seen {
                timeouts: sender.stats().timeouts,
                recoveries: sender.stats().recoveries,
                in_recovery: sender.in_recovery(),
                rate: sender.rate(),
                window: sender.window(),
                ..seen
            },
            Some(Endpoints::Verbs(v)) => {
                let c = v.counts();
                Seen {
                    timeouts: c.timeouts,
                    recoveries: c.recoveries,
                    ..seen
                }
            }
            _ => seen,
        };
        if at_dst {
            now.received = received;
        }
        if at_src {
            now.acked = acked;
        }
        let sender = (f, src, None);
        if now.timeouts > seen.timeouts {
            self.row(
                sender,
                TraceEvent::Timeout,
                None,
                Detail::Timeouts(now.timeouts),
            );
        }
        // An episode counts as recovery when a NACK starts it, not when a timeout does (IRN's
        // sender then recovers all the same).
        let entered = now.recoveries > seen.recoveries || (now.in_recovery && !seen.in_recovery);
        if seen.in_recovery && (!now.in_recovery || entered) {
            self.row(sender, TraceEvent::RecoveryExit, None, Detail::None);
        }
        if entered {
            let detail = Detail::Recoveries(now.recoveries);
            self.row(sender, TraceEvent::RecoveryEnter, None, detail);
        }
        if now.rate != seen.rate {
            self.row(sender, TraceEvent::Rate, None, Detail::Rate(now.rate));
        }
        if now.window != seen.window {
            self.row(sender, TraceEvent::Window, None, Detail::Window(now.window));
        }
        if now.received && !seen.received {
            self.row((f, dst, None), TraceEvent::Received, None, Detail::None);
        }
        if now.acked && !seen.acked {
            self.row(sender, TraceEvent::Acked, None, Detail::None);
        }
        if let Some(t) = self.trace.state() {
            t.flows.insert(f, now);
        }
    }
}
