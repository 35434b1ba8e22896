//! Switch models: what happens to a packet between arriving on one port and leaving on another.
//!
//! | model | module | buffers | drop / pause decision |
//! | --- | --- | --- | --- |
//! | input-queued with virtual output queues (the IRN paper's, §4.1) | [`voq`] | one per input port | the input's occupancy |
//! | output-queued with one shared buffer (Eunomia §5, the ns-3 RDMA models') | [`shared`] | one per switch | dynamic thresholds: egress queue (lossy), ingress share (PFC) |
//! | the same, outputs scheduled SRPT (pFabric; Eunomia §5.4) | [`shared::srpt`] | one per switch | as above, then evict the output's worst-ranked packets |
//!
//! Both serve control packets (ACK/NACK/CNP) first in a class that is never paused or dropped,
//! and both mark ECN on the output's queue as a packet leaves. The simulation moves packets in
//! and out and sends the PFC frames they ask for.

mod ports;
pub mod shared;
pub mod voq;

use irn_core::packet::{Ecn, PacketKind};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::config::EcnConfig;
use crate::packet::SimPacket;
use crate::packets::{PacketId, Packets};

pub use ports::{PortSet, Resume};
pub use shared::srpt::{Eviction, FlowRanks};
pub use shared::SharedSwitch;
pub use voq::VoqSwitch;

/// What admitting a packet led to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    Queued,
    /// Queued, and the input crossed its pause threshold: send PAUSE upstream.
    QueuedAndPause,
    /// No room: the packet is dropped.
    Dropped,
}

/// RED/step ECN marking with its own seeded random stream.
#[derive(Debug)]
pub struct EcnMarker {
    cfg: EcnConfig,
    rng: SmallRng,
    /// Per output, what its queue is multiplied by (16.16) before it is compared with the
    /// thresholds ([`crate::config::ecn_scale_q16`]); empty: every output's queue as it is.
    scale_q16: Box<[u32]>,
    /// Data packets marked CE.
    pub marks: u64,
}

impl EcnMarker {
    pub fn new(cfg: EcnConfig, seed: u64) -> Self {
        EcnMarker {
            cfg,
            rng: SmallRng::seed_from_u64(seed),
            scale_q16: Box::default(),
            marks: 0,
        }
    }

    /// This marker with output `i`'s queue multiplied by `scale_q16(i)` (16.16) before it is
    /// compared with the thresholds, for outputs `0..outputs`: thresholds that scale with each
    /// port's rate ([`EcnConfig::per_rate`]).
    pub fn with_output_scales(mut self, outputs: usize, scale_q16: impl Fn(usize) -> u32) -> Self {
        self.scale_q16 = (0..outputs).map(scale_q16).collect();
        self
    }

    /// Marks `p` CE with the probability a queue of `queue_bytes` at `output` calls for, if it
    /// is an ECN-capable data packet; whether it did, for the output's own count.
    pub fn mark(&mut self, output: usize, queue_bytes: u64, p: &mut SimPacket) -> bool {
        let queue_bytes = match self.cfg.counts_departing {
            true => queue_bytes,
            false => queue_bytes.saturating_sub(u64::from(p.wire_bytes)),
        };
        if let PacketKind::Data {
            ecn: ecn @ (Ecn::Ect0 | Ecn::Ect1),
            ..
        } = &mut p.pkt.kind
        {
            let queue = match self.scale_q16.get(output) {
                Some(&scale) => ((u128::from(queue_bytes) * u128::from(scale)) >> 16) as u64,
                None => queue_bytes,
            };
            let prob = self.cfg.probability(queue);
            if prob >= 1.0 || (prob > 0.0 && self.rng.random::<f64>() < prob) {
                *ecn = Ecn::Ce;
                self.marks += 1;
                return true;
            }
        }
        false
    }
}

/// What a switch model does with packets; ports are local numbers (0..ports). Packets stay in
/// the simulation's slab and the model threads them into its queues.
pub trait Queues {
    /// A data packet arrived on `input` and is routed to `output`. A dropped packet is left for
    /// the caller to free.
    fn admit_data(
        &mut self,
        packets: &mut Packets,
        input: usize,
        output: usize,
        p: PacketId,
    ) -> Admit;

    /// Queues data packet `p` from `input` for `output`, already charged to the buffer
    /// (`Accounting::charge`): the second half of [`admit_data`](Self::admit_data), for a
    /// packet that waited in between (ConWeave's reorder queue).
    fn enqueue_charged(&mut self, packets: &mut Packets, input: usize, output: usize, p: PacketId);

    /// A control packet to send on `output`: never dropped or paused.
    fn admit_control(&mut self, packets: &mut Packets, output: usize, p: PacketId);

    /// The next packet `output` should send (control first; data unless `paused`), and the
    /// inputs whose upstream neighbours may now be resumed.
    fn dequeue(
        &mut self,
        packets: &mut Packets,
        output: usize,
        paused: bool,
    ) -> Option<(PacketId, Resume)>;

    /// The inputs a [`Resume::SEVERAL`] stands for, no longer held.
    fn take_resumed(&mut self) -> PortSet {
        PortSet::default()
    }

    /// Whether `output` has anything it could send (ignoring pause for data).
    fn has_work(&self, output: usize) -> bool;

    /// Data bytes waiting for `output`: the local queue length load balancers compare.
    fn queued_bytes(&self, output: usize) -> u64;

    /// [`dequeue`](Self::dequeue), and whether `output` has more to send after this packet: the
    /// port's one call per packet.
    #[inline(always)]
    fn dequeue_more(
        &mut self,
        packets: &mut Packets,
        output: usize,
        paused: bool,
    ) -> Option<(PacketId, Resume, bool)> {
        let (p, resume) = self.dequeue(packets, output, paused)?;
        Some((p, resume, self.has_work(output)))
    }
}

/// The buffer accounting of a switch model, apart from its queues: what [`cut_through`] does
/// for a packet that never waits.
pub(crate) trait Accounting {
    /// Admission of `bytes` from `input` to `output`: the buffer accounting of
    /// [`Queues::admit_data`], without the queue.
    fn charge(&mut self, input: usize, output: usize, bytes: u64) -> Admit;

    /// Packet `p`, from `input`, leaves `output`: the accounting of [`Queues::dequeue`] once
    /// the packet is out of its queue. Returns the inputs to resume.
    fn release(
        &mut self,
        packets: &mut Packets,
        input: usize,
        output: usize,
        p: PacketId,
    ) -> Resume;
}

/// A data packet from `input` for `output`, which has nothing queued and is free to send it now
/// (idle, not paused): [`Queues::admit_data`] then [`Queues::dequeue`], as one step that skips
/// the queue. Returns the admission and the inputs to resume; a dropped packet is left for the
/// caller to free.
#[inline(always)]
fn cut_through<S: Accounting>(
    switch: &mut S,
    packets: &mut Packets,
    input: usize,
    output: usize,
    p: PacketId,
) -> (Admit, Resume) {
    let admit = switch.charge(input, output, u64::from(packets.get(p).wire_bytes));
    if admit == Admit::Dropped {
        return (admit, Resume::NONE);
    }
    (admit, switch.release(packets, input, output, p))
}

/// One switch, of either model.
#[derive(Debug)]
pub enum Switch {
    Voq(VoqSwitch),
    Shared(SharedSwitch),
}

macro_rules! delegate {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            Switch::Voq($s) => $e,
            Switch::Shared($s) => $e,
        }
    };
}

impl Queues for Switch {
    #[inline(always)]
    fn admit_data(
        &mut self,
        packets: &mut Packets,
        input: usize,
        output: usize,
        p: PacketId,
    ) -> Admit {
        delegate!(self, s => s.admit_data(packets, input, output, p))
    }

    #[inline(always)]
    fn admit_control(&mut self, packets: &mut Packets, output: usize, p: PacketId) {
        delegate!(self, s => s.admit_control(packets, output, p))
    }

    fn enqueue_charged(&mut self, packets: &mut Packets, input: usize, output: usize, p: PacketId) {
        delegate!(self, s => s.enqueue_charged(packets, input, output, p))
    }

    #[inline]
    fn dequeue(
        &mut self,
        packets: &mut Packets,
        output: usize,
        paused: bool,
    ) -> Option<(PacketId, Resume)> {
        delegate!(self, s => s.dequeue(packets, output, paused))
    }

    fn take_resumed(&mut self) -> PortSet {
        delegate!(self, s => s.take_resumed())
    }

    #[inline]
    fn has_work(&self, output: usize) -> bool {
        delegate!(self, s => s.has_work(output))
    }

    #[inline]
    fn queued_bytes(&self, output: usize) -> u64 {
        delegate!(self, s => s.queued_bytes(output))
    }

    #[inline]
    fn dequeue_more(
        &mut self,
        packets: &mut Packets,
        output: usize,
        paused: bool,
    ) -> Option<(PacketId, Resume, bool)> {
        delegate!(self, s => s.dequeue_more(packets, output, paused))
    }
}

impl Switch {
    /// The module's `cut_through`, for either model. Always inlined: the packet path's most
    /// common step, and LLVM called it out of line once the shared-buffer model grew SRPT.
    #[inline(always)]
    pub fn cut_through(
        &mut self,
        packets: &mut Packets,
        input: usize,
        output: usize,
        p: PacketId,
    ) -> (Admit, Resume) {
        delegate!(self, s => cut_through(s, packets, input, output, p))
    }

    /// DIBS: data packet `p`, refused by `refused` (and counted as its drop), is offered to
    /// the outputs in `order` until one has room; the output that took it and its admission,
    /// with the refusal no longer counted as a drop. `None` (the drop stands) when none had
    /// room. Only the shared-buffer model deflects: an input-queued switch's room is its
    /// input's, the same for every output.
    pub fn deflect(
        &mut self,
        packets: &mut Packets,
        (input, refused): (usize, usize),
        order: &[u16],
        p: PacketId,
    ) -> Option<(usize, Admit)> {
        let Switch::Shared(s) = self else {
            return None;
        };
        for &output in order {
            let output = usize::from(output);
            match s.admit_data(packets, input, output, p) {
                // A refusal by a port it was deflected to is not a drop of that port's.
                Admit::Dropped => s.drops[output] -= 1,
                admit => {
                    s.drops[refused] -= 1;
                    return Some((output, admit));
                }
            }
        }
        None
    }

    /// The buffer accounting of a data packet of `bytes` from `input` for `output`, without
    /// queueing it ([`Queues::enqueue_charged`] does that later).
    pub fn charge(&mut self, input: usize, output: usize, bytes: u64) -> Admit {
        delegate!(self, s => s.charge(input, output, bytes))
    }

    /// SRPT: data packet `p`, refused by `output` (and counted as its drop), is queued after
    /// evicting worse-ranked packets of that output, if that makes room
    /// ([`SharedSwitch::make_room`]). `None` (the drop stands) otherwise, and on every switch
    /// that is not SRPT.
    pub fn make_room(
        &mut self,
        packets: &mut Packets,
        input_output: (usize, usize),
        p: PacketId,
    ) -> Option<Eviction> {
        match self {
            Switch::Shared(s) => s.make_room(packets, input_output, p),
            Switch::Voq(_) => None,
        }
    }

    /// Data packets marked CE here.
    pub fn ecn_marks(&self) -> u64 {
        delegate!(self, s => s.ecn.as_ref().map_or(0, |m| m.marks))
    }

    /// Data packets marked CE leaving `output`.
    pub fn ecn_marks_at(&self, output: usize) -> u64 {
        match self {
            Switch::Voq(s) => s.marks[output],
            Switch::Shared(s) => s.outputs[output].marks,
        }
    }

    /// Data packets dropped that were bound for `output`.
    pub fn drops_at(&self, output: usize) -> u64 {
        delegate!(self, s => s.drops[output])
    }

    /// The bytes in the buffer behind port `local`: the shared pool in use, or the port's own
    /// buffer as an input of the input-queued switch.
    pub fn buffer_bytes(&self, local: usize) -> u64 {
        match self {
            Switch::Voq(s) => s.input_occupancy(local),
            Switch::Shared(s) => s.pool_bytes(),
        }
    }

    /// The most bytes one buffer held at once (an input's, or the shared one).
    pub fn peak_occupancy(&self) -> u64 {
        match self {
            Switch::Voq(s) => s.peak_occupancy(),
            Switch::Shared(s) => s.peak_occupancy,
        }
    }
}

/// A switch model with its own packet slab, moving packets by value: the models' tests.
#[cfg(test)]
pub(crate) struct Harness<S> {
    pub switch: S,
    packets: Packets,
}

#[cfg(test)]
impl<S: Queues> Harness<S> {
    pub fn new(switch: S) -> Self {
        Harness {
            switch,
            packets: Packets::default(),
        }
    }

    pub fn admit_data(&mut self, input: usize, output: usize, p: SimPacket) -> Admit {
        let id = self.packets.alloc(p, false);
        let admit = self.switch.admit_data(&mut self.packets, input, output, id);
        if admit == Admit::Dropped {
            self.packets.free(id);
        }
        admit
    }

    pub fn admit_control(&mut self, output: usize, p: SimPacket) {
        let id = self.packets.alloc(p, false);
        self.switch.admit_control(&mut self.packets, output, id);
    }

    /// [`Queues::dequeue`], with the inputs to resume as a mask (tests have few ports).
    pub fn dequeue(&mut self, output: usize, paused: bool) -> Option<(SimPacket, u64)> {
        let (id, resume) = self.switch.dequeue(&mut self.packets, output, paused)?;
        Some((self.packets.free(id), self.mask(resume)))
    }

    /// `resume` as a mask of inputs.
    fn mask(&mut self, resume: Resume) -> u64 {
        let several = match resume {
            Resume::SEVERAL => self.switch.take_resumed(),
            _ => PortSet::default(),
        };
        let one = resume.one().map_or(0, |i| 1 << i);
        several.iter().fold(one, |m, i| m | 1 << i)
    }

    pub fn has_work(&self, output: usize) -> bool {
        self.switch.has_work(output)
    }
}

#[cfg(test)]
impl<S: Queues + Accounting> Harness<S> {
    /// [`cut_through`], with the packet back unless it was dropped.
    pub fn cut_through(
        &mut self,
        input: usize,
        output: usize,
        p: SimPacket,
    ) -> (Admit, u64, Option<SimPacket>) {
        let id = self.packets.alloc(p, false);
        let (admit, resume) = cut_through(&mut self.switch, &mut self.packets, input, output, id);
        (
            admit,
            self.mask(resume),
            Some(self.packets.free(id)).filter(|_| admit != Admit::Dropped),
        )
    }
}

/// A data packet of `flow` with `bytes` on the wire, for the switch models' tests.
#[cfg(test)]
pub(crate) fn test_packet(flow: u32, bytes: u32) -> SimPacket {
    use crate::ids::{FlowId, HostIdx};
    use irn_core::packet::Qpn;
    use irn_core::{Packet, Psn};
    SimPacket {
        pkt: Packet {
            dest_qp: Qpn::new(flow),
            psn: Psn::ZERO,
            kind: PacketKind::Data {
                payload_len: 0,
                first: true,
                last: true,
                retransmission: false,
                ecn: Ecn::Ect0,
                ts: 0,
                entropy: 0,
            },
        },
        flow: FlowId(flow),
        dst: HostIdx(0),
        verbs: None,
        wire_bytes: bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::EcnConfig;

    /// Twin switches take the same traffic, except that packets for the idle output 2 are
    /// queued and dequeued at once in one and cut through in the other: admissions, resumes,
    /// ECN marks and every counter must agree, through pauses, resumes and drops.
    fn cut_through_agrees<S: Queues + Accounting + std::fmt::Debug>(make: impl Fn() -> S) {
        let mut queued = Harness::new(make());
        let mut cut = Harness::new(make());
        for i in 0..120u32 {
            // Input 0 also feeds output 1, two packets a round, which drains in bursts: its
            // buffer share climbs past the thresholds and falls back.
            for j in 0..2 {
                let background = test_packet(1000 + 2 * i + j, 300);
                assert_eq!(
                    queued.admit_data(0, 1, background),
                    cut.admit_data(0, 1, background)
                );
            }
            let drain = match i % 20 {
                19 => 20,
                d if d % 4 == 3 => 5,
                _ => 0,
            };
            for _ in 0..drain {
                assert_eq!(queued.dequeue(1, false), cut.dequeue(1, false));
            }
            assert!(!queued.has_work(2) && !cut.has_work(2));
            let p = test_packet(i, 200 + 50 * (i % 4));
            let admit = queued.admit_data(0, 2, p);
            let (resume, sent) = match admit {
                Admit::Dropped => (0, None),
                _ => {
                    let (sent, resume) = queued.dequeue(2, false).expect("just queued");
                    (resume, Some(sent))
                }
            };
            assert_eq!(
                cut.cut_through(0, 2, p),
                (admit, resume, sent),
                "packet {i}"
            );
            assert_eq!(format!("{:?}", queued.switch), format!("{:?}", cut.switch));
        }
    }

    fn marker() -> Option<EcnMarker> {
        let red = EcnConfig {
            kmin_bytes: 0,
            kmax_bytes: 2_000,
            pmax: 0.5,
            per_rate: false,
            counts_departing: true,
        };
        Some(EcnMarker::new(red, 7))
    }

    #[test]
    fn cut_through_is_queue_then_dequeue_on_the_shared_switch() {
        let headroom = |_| 600;
        cut_through_agrees(|| {
            SharedSwitch::new(3, 4_000, 1.0, None, Some((&headroom, 200)), marker())
        });
        cut_through_agrees(|| SharedSwitch::new(3, 2_500, 0.5, Some(0.5), None, marker()));
    }

    #[test]
    fn cut_through_is_queue_then_dequeue_on_the_voq_switch() {
        cut_through_agrees(|| VoqSwitch::new(3, |_| 3_000, |_| Some((2_000, 1_900)), marker()));
        cut_through_agrees(|| VoqSwitch::new(3, |_| 2_000, |_| None, marker()));
    }
}
