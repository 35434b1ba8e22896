//! The shared-buffer, output-queued switch (Eunomia §5; the switch of the ns-3 RDMA simulators
//! HPCC, ConWeave and TLT, whose leaf-spine topologies assume it).
//!
//! All ports share one buffer. Packets wait in a FIFO per output port. Admission uses
//! Choudhury–Hahne dynamic thresholds: a queue may hold at most `alpha × (free shared buffer)`,
//! so one congested port cannot take the whole buffer but an idle switch lets one burst use much
//! of it. As in the ns-3 models' `SwitchMmu` (ConWeave's: `IngressAlpha` 1/16, `EgressAlpha` 1),
//! the egress and ingress thresholds have their own alphas.
//! - **Without PFC** (lossy) the egress threshold applies to the output queue a packet joins:
//!   above it, the packet is dropped.
//! - **With PFC** (lossless) the buffer is accounted per *input* port, as the ns-3 models do:
//!   each input has a headroom reserved out of the buffer (`crate::config::pfc_headroom_bytes`)
//!   and a share of the rest bounded by the ingress threshold. An input whose share passes the
//!   threshold, or that has started using its headroom, pauses its upstream neighbour; packets
//!   still in flight land in the headroom. It resumes when its headroom is empty and its share
//!   is either a gap below the threshold or nothing at all. The second case is the escape of
//!   HPCC's ns-3 switch (`SwitchMmu::CheckShouldResume` in
//!   `simulation/src/point-to-point/model/switch-mmu.cc`, alibaba-edu/High-Precision-Congestion-Control;
//!   ConWeave's fork has the same): there a paused ingress queue resumes once its headroom bytes
//!   are 0 and its shared-pool bytes are 0 or, with the resume offset added, at most the
//!   dynamic threshold (`GetPfcThreshold`: the free shared buffer shifted right by
//!   `pfc_a_shift`). Without it, a pool whose threshold never climbs above the gap
//!   (`alpha` × pool ≤ gap: 150 KB shared by six 40 Gb/s, 2 µs inputs) keeps an input paused
//!   with nothing left in the buffer, and its flows hang.
//!
//!   With `[switch] pfc_headroom = "pool-full"` ([`PfcHeadroom::PoolFull`]) an input past its
//!   threshold keeps taking the shared pool, and headroom only once the pool is full, as in
//!   ns-3's `SwitchMmu` (`CheckIngressAdmission` charges headroom only while the whole shared
//!   pool is in use). It pauses and resumes by the same rule, but its share, not its headroom,
//!   holds what arrives after the pause: it resumes as soon as the share is back under the
//!   threshold, where draining a headroom first keeps an input paused for as long as its
//!   packets take to leave.
//!
//!   With an egress alpha too, a packet over its output queue's egress threshold is dropped
//!   first, whatever its input's share, as ns-3's switch admits a packet only when both its
//!   ingress and egress checks pass: PFC then bounds each input and the threshold each output,
//!   and the switch can drop. Without one (`None`), PFC's ingress accounting alone decides and
//!   nothing is dropped.
//!
//! ECN marking watches each output queue, as on the input-queued switch.
//!
//! Outputs send their data in arrival order, or, with `[switch] scheduling = "srpt"`, the flow
//! with the fewest bytes left first ([`srpt`]).

pub mod srpt;

use std::sync::Arc;

use self::srpt::{FlowRanks, Srpt};
use super::{Accounting, Admit, EcnMarker, PortSet, Queues, Resume};
use crate::config::PfcHeadroom;
use crate::packets::{Fifo, PacketId, Packets};
use crate::topology::MAX_SWITCH_PORTS;

/// A port's queues, as an output. Each port's fields sit together, so a packet touches one
/// line for its output and one for its input.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Output {
    /// Data packets waiting (each remembers its input)...
    data: Fifo,
    /// ...and control packets, served first.
    control: Fifo,
    /// Data bytes queued.
    egress: u64,
    /// Data packets marked CE leaving it: counted where the output is at hand anyway.
    pub(super) marks: u64,
}

/// A port's buffer accounting, as an input.
#[derive(Debug, Clone, Copy, Default)]
struct Input {
    /// Bytes charged to the shared pool...
    shared: u64,
    /// ...and to its headroom (PFC only).
    headroom_used: u64,
    /// Headroom size; zero without PFC.
    headroom: u64,
    /// Its ingress (PFC) alpha in 16.16 fixed point: the threshold is computed on every
    /// admission and on dequeues while any input pauses, and integer arithmetic keeps float
    /// conversions off that path. The same for every input unless it scales with the port's
    /// rate ([`SharedSwitch::with_input_alphas`]).
    alpha_q16: u64,
}

/// One shared-buffer switch, ports numbered 0..ports.
#[derive(Debug)]
pub struct SharedSwitch {
    pub(super) outputs: Vec<Output>,
    inputs: Vec<Input>,
    /// Bytes of the shared pool in use.
    shared_used: u64,
    /// The shared pool: the buffer minus every input's headroom.
    shared_size: u64,
    /// The egress (drop) alpha, as the inputs' ingress alphas; `None`: no egress threshold.
    egress_alpha_q16: Option<u64>,
    /// Sum of the inputs' `headroom_used`.
    headroom_used: u64,
    /// PFC's resume gap; `None` without PFC.
    resume_gap: Option<u64>,
    /// With PFC, whether an input past its threshold still takes the shared pool
    /// ([`PfcHeadroom::PoolFull`]) rather than its headroom.
    pool_first: bool,
    /// Inputs that have paused their upstream neighbour...
    pausing: PortSet,
    /// ...how many...
    pausing_count: u32,
    /// ...and those that may resume, until the simulation takes them
    /// ([`Queues::take_resumed`]).
    resumed: PortSet,
    pub(super) ecn: Option<EcnMarker>,
    /// Most bytes the buffer held at once.
    pub peak_occupancy: u64,
    /// Data packets dropped, per output they were bound for (touched only by a drop).
    pub(super) drops: Vec<u64>,
    /// SRPT scheduling's state; `None`: outputs are FIFO.
    srpt: Option<Box<Srpt>>,
}

impl SharedSwitch {
    /// A switch with `ports` ports sharing `buffer_bytes`, with dynamic-threshold factors
    /// `ingress_alpha` (each input's share, PFC only) and `egress_alpha` (each output queue,
    /// above which packets are dropped; `None`: none, and without PFC only a full buffer drops).
    /// With PFC, `pfc` gives each input's headroom (`headroom(i)`) and the resume gap.
    ///
    /// # Panics
    /// With more than [`MAX_SWITCH_PORTS`] ports (topologies are validated against this).
    pub fn new(
        ports: usize,
        buffer_bytes: u64,
        ingress_alpha: f64,
        egress_alpha: Option<f64>,
        pfc: Option<(&dyn Fn(usize) -> u64, u64)>,
        ecn: Option<EcnMarker>,
    ) -> Self {
        assert!(
            ports <= MAX_SWITCH_PORTS,
            "a switch has at most {MAX_SWITCH_PORTS} ports"
        );
        let inputs: Vec<Input> = (0..ports)
            .map(|i| Input {
                headroom: pfc.map_or(0, |(h, _)| h(i)),
                alpha_q16: alpha_q16(ingress_alpha),
                ..Input::default()
            })
            .collect();
        SharedSwitch {
            outputs: vec![Output::default(); ports],
            shared_used: 0,
            shared_size: buffer_bytes.saturating_sub(inputs.iter().map(|i| i.headroom).sum()),
            egress_alpha_q16: egress_alpha.map(alpha_q16),
            inputs,
            headroom_used: 0,
            resume_gap: pfc.map(|(_, gap)| gap),
            pool_first: false,
            pausing: PortSet::default(),
            pausing_count: 0,
            resumed: PortSet::default(),
            ecn,
            peak_occupancy: 0,
            drops: vec![0; ports],
            srpt: None,
        }
    }

    /// Bytes a switch of `ports` ports allocates ([`new`](Self::new)), without SRPT's.
    pub fn footprint(ports: usize) -> u64 {
        (size_of::<Self>() + ports * (size_of::<Output>() + size_of::<Input>() + 8)) as u64
    }

    /// This switch with SRPT outputs, ranking packets by `ranks`: a flow's queued packets in
    /// their arrival order, or with `per_packet` each by its own rank.
    pub fn with_srpt(mut self, ranks: Arc<FlowRanks>, per_packet: bool) -> Self {
        self.srpt = Some(Box::new(Srpt::new(ranks, self.outputs.len(), per_packet)));
        self
    }

    /// This switch with input `i`'s ingress alpha `alpha(i)` in place of the one
    /// [`new`](Self::new) gave every input.
    pub fn with_input_alphas(mut self, alpha: impl Fn(usize) -> f64) -> Self {
        for (i, input) in self.inputs.iter_mut().enumerate() {
            input.alpha_q16 = alpha_q16(alpha(i));
        }
        self
    }

    /// This switch with PFC's `headroom` rule: where an input's packets go past its threshold.
    pub fn with_pfc_headroom(mut self, headroom: PfcHeadroom) -> Self {
        self.pool_first = headroom == PfcHeadroom::PoolFull;
        self
    }

    /// Bytes of the buffer in use: the shared pool's and the headroom's.
    pub fn pool_bytes(&self) -> u64 {
        self.shared_used + self.headroom_used
    }

    /// Takes `bytes` of a packet from `input` out of the inputs' accounting (its output's is
    /// the caller's).
    #[inline(always)]
    fn unaccount_input(&mut self, input: usize, bytes: u64) {
        // Headroom drains first, as in the ns-3 models.
        let inp = &mut self.inputs[input];
        let from_headroom = bytes.min(inp.headroom_used);
        inp.headroom_used -= from_headroom;
        self.headroom_used -= from_headroom;
        let from_shared = bytes - from_headroom;
        inp.shared -= from_shared;
        self.shared_used -= from_shared;
    }

    /// The paused inputs that may resume now, no longer counted as pausing.
    #[inline(always)]
    fn resumable(&mut self) -> Resume {
        match self.resume_gap {
            Some(gap) if self.pausing_count != 0 => self.resumable_under(gap),
            _ => Resume::NONE,
        }
    }

    /// [`resumable`](Self::resumable) while some input pauses, with PFC's resume gap `gap`.
    fn resumable_under(&mut self, gap: u64) -> Resume {
        // Freeing shared buffer raises every input's threshold: any paused one may resume.
        let (size, used) = (self.shared_size, self.shared_used);
        let mut resume = Resume::NONE;
        for w in 0..self.inputs.len().div_ceil(64) {
            let mut bits = self.pausing.word(w);
            while bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let inp = &self.inputs[i];
                let threshold = threshold_of(size, used, inp.alpha_q16);
                if inp.headroom_used == 0 && (inp.shared == 0 || inp.shared + gap < threshold) {
                    self.pausing.remove(i);
                    self.pausing_count -= 1;
                    self.resumed.insert(i);
                    resume = Resume::SEVERAL;
                }
            }
        }
        resume
    }
}

/// `alpha` in the 16.16 fixed point the switch computes thresholds in.
fn alpha_q16(alpha: f64) -> u64 {
    (alpha * 65536.0).round() as u64
}

/// The dynamic threshold of an empty shared pool of `pool_bytes`, as a switch with `alpha`
/// computes it: the most one queue (lossy) or one input's share (PFC) may ever hold. Below a
/// frame, a full frame never fits: without PFC it is always dropped, with PFC it always lands in
/// headroom and pauses its sender. Scenario validation checks it.
pub fn empty_pool_threshold(pool_bytes: u64, alpha: f64) -> u64 {
    threshold_of(pool_bytes, 0, alpha_q16(alpha))
}

/// A dynamic threshold: `alpha` (16.16) times the free shared buffer, rounded down.
#[inline(always)]
fn threshold_of(shared_size: u64, shared_used: u64, alpha_q16: u64) -> u64 {
    let free = shared_size.saturating_sub(shared_used);
    ((u128::from(free) * u128::from(alpha_q16)) >> 16) as u64
}

impl Accounting for SharedSwitch {
    #[inline(always)]
    fn charge(&mut self, input: usize, output: usize, bytes: u64) -> Admit {
        let egress_threshold = self.egress_alpha_q16.map_or(u64::MAX, |q| {
            threshold_of(self.shared_size, self.shared_used, q)
        });
        let mut admit = Admit::Queued;
        let out = &mut self.outputs[output];
        let inp = &mut self.inputs[input];
        if self.resume_gap.is_some() {
            if out.egress + bytes > egress_threshold {
                self.drops[output] += 1;
                return Admit::Dropped;
            }
            let threshold = threshold_of(self.shared_size, self.shared_used, inp.alpha_q16);
            let fits_shared = (self.pool_first || inp.shared + bytes <= threshold)
                && self.shared_used + bytes <= self.shared_size;
            if fits_shared {
                inp.shared += bytes;
                self.shared_used += bytes;
            } else if inp.headroom_used + bytes <= inp.headroom {
                inp.headroom_used += bytes;
                self.headroom_used += bytes;
            } else {
                self.drops[output] += 1;
                return Admit::Dropped;
            }
            let over = inp.headroom_used > 0
                || inp.shared >= threshold_of(self.shared_size, self.shared_used, inp.alpha_q16);
            if over && !self.pausing.contains(input) {
                self.pausing.insert(input);
                self.pausing_count += 1;
                admit = Admit::QueuedAndPause;
            }
        } else {
            if out.egress + bytes > egress_threshold || self.shared_used + bytes > self.shared_size
            {
                self.drops[output] += 1;
                return Admit::Dropped;
            }
            inp.shared += bytes;
            self.shared_used += bytes;
        }
        out.egress += bytes;
        self.peak_occupancy = self
            .peak_occupancy
            .max(self.shared_used + self.headroom_used);
        admit
    }

    #[inline(always)]
    fn release(
        &mut self,
        packets: &mut Packets,
        input: usize,
        output: usize,
        p: PacketId,
    ) -> Resume {
        let out = &mut self.outputs[output];
        if let Some(marker) = &mut self.ecn {
            out.marks += u64::from(marker.mark(output, out.egress, packets.get_mut(p)));
        }
        let bytes = u64::from(packets.get(p).wire_bytes);
        out.egress -= bytes;
        self.unaccount_input(input, bytes);
        self.resumable()
    }
}

impl Queues for SharedSwitch {
    // Always: a second instantiation of the event loop (runs with credits) tipped LLVM into
    // calling it out of line, 0.8 % more instructions on the leaf-spine benchmark.
    #[inline(always)]
    fn admit_data(
        &mut self,
        packets: &mut Packets,
        input: usize,
        output: usize,
        p: PacketId,
    ) -> Admit {
        let admit = self.charge(input, output, u64::from(packets.get(p).wire_bytes));
        if admit != Admit::Dropped {
            packets.set_input(p, input);
            if self.srpt.is_none() {
                packets.push(&mut self.outputs[output].data, p);
            } else {
                self.enqueue_ranked(packets, output, p);
            }
        }
        admit
    }

    fn enqueue_charged(&mut self, packets: &mut Packets, input: usize, output: usize, p: PacketId) {
        packets.set_input(p, input);
        if self.srpt.is_none() {
            packets.push(&mut self.outputs[output].data, p);
        } else {
            self.enqueue_ranked(packets, output, p);
        }
    }

    #[inline]
    fn admit_control(&mut self, packets: &mut Packets, output: usize, p: PacketId) {
        packets.push(&mut self.outputs[output].control, p);
    }

    #[inline]
    fn dequeue(
        &mut self,
        packets: &mut Packets,
        output: usize,
        paused: bool,
    ) -> Option<(PacketId, Resume)> {
        let out = &mut self.outputs[output];
        if let Some(p) = packets.pop(&mut out.control) {
            return Some((p, Resume::NONE));
        }
        if paused {
            return None;
        }
        let p = packets.pop(&mut out.data)?;
        if let Some(next) = packets.front(&out.data) {
            packets.prefetch(next);
        }
        let input = packets.input(p);
        Some((p, self.release(packets, input, output, p)))
    }

    #[inline]
    fn has_work(&self, output: usize) -> bool {
        let out = &self.outputs[output];
        !out.control.is_empty() || !out.data.is_empty()
    }

    fn queued_bytes(&self, output: usize) -> u64 {
        self.outputs[output].egress
    }

    fn take_resumed(&mut self) -> PortSet {
        std::mem::take(&mut self.resumed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::test_packet as pkt;
    use crate::switch::Harness;
    use irn_core::packet::PacketKind;

    #[test]
    fn lossy_dynamic_threshold_on_the_output_queue() {
        // 1000 B shared, alpha 1: a queue may grow while it stays below the free space.
        let mut s = Harness::new(SharedSwitch::new(3, 1000, 1.0, Some(1.0), None, None));
        let admits: Vec<Admit> = (0..6)
            .map(|i| s.admit_data(i % 2, 2, pkt(i as u32, 100)))
            .collect();
        // Queue 0 B/free 1000: ok; 100/900 ok; 200/800 ok; 300/700 ok; 400/600 ok; 500/500: 600 > 500, drop.
        assert_eq!(admits[..5], [Admit::Queued; 5]);
        assert_eq!(admits[5], Admit::Dropped);
        // Another output still gets in: its queue is empty.
        assert_eq!(s.admit_data(0, 1, pkt(9, 100)), Admit::Queued);
        // FIFO per output.
        let order: Vec<u32> = std::iter::from_fn(|| s.dequeue(2, false))
            .map(|(p, _)| p.flow.0)
            .collect();
        assert_eq!(order, [0, 1, 2, 3, 4]);
        assert_eq!(s.switch.shared_used, 100);
    }

    #[test]
    fn pfc_pauses_on_the_ingress_share_and_absorbs_into_headroom() {
        // 2 inputs, each with 300 B headroom; 1000 B buffer → 400 B shared pool; alpha 1.
        let headroom = |_| 300;
        let s = Harness::new(SharedSwitch::new(
            3,
            1000,
            1.0,
            None,
            Some((&headroom, 50)),
            None,
        ));
        assert_eq!(s.switch.shared_size, 100);
        let mut s = Harness::new(SharedSwitch::new(
            2,
            1600,
            1.0,
            None,
            Some((&headroom, 50)),
            None,
        ));
        assert_eq!(s.switch.shared_size, 1000);
        // Input 0 into output 1: shared 100 (thr 1000), 200 (thr 900), 300 (thr 800), 400 (thr 700),
        // 500 (thr 600 → 500 ≥ 500 after: pause)...
        let mut outcomes = vec![];
        for i in 0..8 {
            outcomes.push(s.admit_data(0, 1, pkt(i, 100)));
        }
        let first_pause = outcomes
            .iter()
            .position(|a| *a == Admit::QueuedAndPause)
            .unwrap();
        assert!(outcomes[..first_pause].iter().all(|a| *a == Admit::Queued));
        assert!(
            outcomes.iter().all(|a| *a != Admit::Dropped),
            "headroom absorbs what arrives after PAUSE: {outcomes:?}"
        );
        assert!(s.switch.inputs[0].headroom_used > 0);
        // Drain: headroom first, then the share; resume once below threshold by the gap.
        let mut resumed_at = None;
        for n in 0.. {
            let Some((_, resume)) = s.dequeue(1, false) else {
                break;
            };
            if resume != 0 {
                assert_eq!(resume, 1);
                resumed_at = Some(n);
            }
        }
        assert!(resumed_at.is_some());
        assert_eq!(
            (
                s.switch.shared_used,
                s.switch.inputs[0].headroom_used,
                s.switch.inputs[0].shared
            ),
            (0, 0, 0)
        );
    }

    /// Inputs with their own alphas, in a 1000 B pool (3 inputs of 200 B headroom in 1600 B),
    /// 100 B packets. Input 0 at alpha 1/8: its first packet leaves its share at 100 < 112 (an
    /// eighth of the 900 B free); its second does not fit under 112 and goes to headroom, which
    /// pauses. Input 1 at alpha 1/2, 100 B of the pool taken: shares 100 < 400, 200 < 350, then
    /// 300 ≥ 300 (half of 600 free) pauses at its third; at alpha 1/8 it would pause at its
    /// first (100 ≥ 100).
    #[test]
    fn each_input_pauses_at_its_own_alpha() {
        let headroom = |_| 200;
        let alphas = [0.125, 0.5, 1.0];
        let mut s = Harness::new(
            SharedSwitch::new(3, 1600, 1.0, None, Some((&headroom, 0)), None)
                .with_input_alphas(|i| alphas[i]),
        );
        assert_eq!(s.switch.shared_size, 1000);
        let pauses_at = |s: &mut Harness<SharedSwitch>, input: usize| {
            (1..=10)
                .find(|&n| s.admit_data(input, 2, pkt(n, 100)) == Admit::QueuedAndPause)
                .expect("pauses")
        };
        assert_eq!(pauses_at(&mut s, 0), 2);
        assert_eq!(pauses_at(&mut s, 1), 3);
    }

    /// Two inputs with 300 B of headroom each in a 1600 B buffer leave a 1000 B pool. Input 0
    /// takes seven 100 B packets for output 1 with alpha 1: shares of 100..500 fit under the
    /// thresholds 1000..600; the fifth makes the share 500 ≥ the threshold 500 and pauses; the
    /// sixth and seventh land in headroom. Draining empties the headroom first (dequeues 0, 1),
    /// then the share falls 400, 300, 200, 100, 0 while the threshold climbs 600, 700, 800, 900,
    /// 1000 (dequeues 2..6). The input resumes on the first dequeue after which its headroom is
    /// empty and share + gap < threshold, or its share is 0.
    #[test]
    fn resume_a_gap_below_the_dynamic_threshold_or_once_the_share_is_empty() {
        // (resume gap, dequeue that resumes)
        for (gap, resumes) in [(50, 2), (250, 3), (550, 4), (1000, 6), (5000, 6)] {
            let headroom = |_| 300;
            let mut s = Harness::new(SharedSwitch::new(
                2,
                1600,
                1.0,
                None,
                Some((&headroom, gap)),
                None,
            ));
            let admits: Vec<Admit> = (0..7).map(|i| s.admit_data(0, 1, pkt(i, 100))).collect();
            let mut want = vec![Admit::Queued; 7];
            want[4] = Admit::QueuedAndPause;
            assert_eq!(admits, want);
            assert_eq!(s.switch.inputs[0].headroom_used, 200);
            let masks: Vec<u64> = std::iter::from_fn(|| s.dequeue(1, false))
                .map(|(_, r)| r)
                .collect();
            let mut want = vec![0; 7];
            want[resumes] = 1;
            assert_eq!(masks, want, "gap {gap}");
        }
    }

    /// Where an input's packets go past its threshold, and so when it resumes. 1600 B of
    /// buffer, 300 B of headroom per input: a 1000 B pool, alpha 1, no resume gap. Input 1
    /// queues four 100 B packets for output 1; input 0 then three for output 0, the third
    /// taking its share to 300 B ≥ the threshold (1000 − 700) and pausing, and a fourth still
    /// in flight. On pause that fourth lands in headroom, and the input waits for it to leave:
    /// draining output 1 lifts the threshold to 700 B, far above its 300 B share, yet it resumes
    /// only on output 0's first dequeue. With the pool first (ns-3's `SwitchMmu`) the fourth
    /// takes the pool (share 400 B), and the input resumes on output 1's third dequeue, when the
    /// threshold reaches 500 B.
    #[test]
    fn an_input_resumes_once_its_headroom_drains_or_by_its_share_with_the_pool_first() {
        // (rule, input 0's headroom bytes after the fourth packet, the dequeue of output 1 that
        // resumes it, of output 0)
        let cases = [
            (PfcHeadroom::OnPause, 100, None, Some(0)),
            (PfcHeadroom::PoolFull, 0, Some(2), None),
        ];
        for (rule, headroom_used, on_output_1, on_output_0) in cases {
            let headroom = |_| 300;
            let mut s = Harness::new(
                SharedSwitch::new(2, 1600, 1.0, None, Some((&headroom, 0)), None)
                    .with_pfc_headroom(rule),
            );
            for i in 0..4 {
                assert_eq!(s.admit_data(1, 1, pkt(i, 100)), Admit::Queued, "{rule:?}");
            }
            let admits: Vec<Admit> = (4..8).map(|i| s.admit_data(0, 0, pkt(i, 100))).collect();
            let mut want = vec![Admit::Queued; 4];
            want[2] = Admit::QueuedAndPause;
            assert_eq!(admits, want, "{rule:?}");
            assert_eq!(s.switch.inputs[0].headroom_used, headroom_used, "{rule:?}");
            let resumed_at = |s: &mut Harness<SharedSwitch>, output| {
                let masks: Vec<u64> = std::iter::from_fn(|| s.dequeue(output, false))
                    .map(|(_, r)| r)
                    .collect();
                masks.iter().position(|&m| m == 1)
            };
            assert_eq!(resumed_at(&mut s, 1), on_output_1, "{rule:?}");
            assert_eq!(resumed_at(&mut s, 0), on_output_0, "{rule:?}");
        }
    }

    /// alpha 1/8 on a 1000 B pool: the threshold is at most 125 B, below the 200 B gap, so
    /// `share + gap < threshold` never holds. The input resumes once its share is empty.
    #[test]
    fn an_input_paused_under_a_threshold_below_the_gap_resumes_once_empty() {
        let headroom = |_| 300;
        let mut s = Harness::new(SharedSwitch::new(
            2,
            1600,
            0.125,
            None,
            Some((&headroom, 200)),
            None,
        ));
        // 100 ≤ 125 fits (threshold then 112); 200 > 112 goes to headroom and pauses.
        let admits: Vec<Admit> = (0..3).map(|i| s.admit_data(0, 1, pkt(i, 100))).collect();
        assert_eq!(
            admits,
            [Admit::Queued, Admit::QueuedAndPause, Admit::Queued]
        );
        let masks: Vec<u64> = std::iter::from_fn(|| s.dequeue(1, false))
            .map(|(_, r)| r)
            .collect();
        // Headroom 200 → 100 → 0 with 100 B still shared (100 + 200 ≥ 112), then empty.
        assert_eq!(masks, [0, 0, 1]);
    }

    #[test]
    fn paused_outputs_still_send_control() {
        let mut s = Harness::new(SharedSwitch::new(2, 1000, 1.0, Some(1.0), None, None));
        s.admit_data(0, 1, pkt(1, 100));
        let mut ack = pkt(2, 64);
        ack.pkt.kind = PacketKind::Ack {
            msn: 0,
            echo: Default::default(),
        };
        s.admit_control(1, ack);
        assert_eq!(s.dequeue(1, true).map(|(p, _)| p.flow.0), Some(2));
        assert_eq!(s.dequeue(1, true), None);
        assert!(s.has_work(1));
        assert_eq!(s.dequeue(1, false).map(|(p, _)| p.flow.0), Some(1));
    }

    /// Ingress alpha 1/2, egress alpha 1/4, PFC with 300 B headroom per input in a 1600 B
    /// buffer: a 1000 B pool. Input 0 sends 100 B packets to output 1. Before each admission
    /// (queue q, free f): the egress threshold f/4 and the ingress one f/2.
    /// 1st: q 0, f 1000: 100 ≤ 250 and 100 ≤ 500, queued; 2nd: q 100, f 900: 200 ≤ 225, share
    /// 200 ≤ 450, queued; 3rd: q 200, f 800: 300 > 200, dropped by the egress threshold, though
    /// the input is far under its ingress one and never paused.
    #[test]
    fn pfc_with_an_egress_alpha_drops_above_the_egress_threshold() {
        let headroom = |_| 300;
        let mut s = Harness::new(SharedSwitch::new(
            2,
            1600,
            0.5,
            Some(0.25),
            Some((&headroom, 50)),
            None,
        ));
        let admits: Vec<Admit> = (0..3).map(|i| s.admit_data(0, 1, pkt(i, 100))).collect();
        assert_eq!(admits, [Admit::Queued, Admit::Queued, Admit::Dropped]);
        assert_eq!(s.switch.drops[1], 1);
        // Without the egress alpha the same switch pauses on the ingress share instead: shares
        // 100..300 fit under 500, 450, 400; the 4th's 400 > 350 (free 700 × 1/2) lands in
        // headroom, which pauses the input.
        let mut s = Harness::new(SharedSwitch::new(
            2,
            1600,
            0.5,
            None,
            Some((&headroom, 50)),
            None,
        ));
        let admits: Vec<Admit> = (0..4).map(|i| s.admit_data(0, 1, pkt(i, 100))).collect();
        assert_eq!(
            admits,
            [
                Admit::Queued,
                Admit::Queued,
                Admit::Queued,
                Admit::QueuedAndPause
            ]
        );
    }

    /// Lossy, egress alpha 1/4 (the ingress alpha plays no part): 1000 B pool, queue q, free f:
    /// 100 ≤ 250; 200 ≤ 225; 300 > 200, dropped.
    #[test]
    fn lossy_uses_the_egress_alpha() {
        let mut s = Harness::new(SharedSwitch::new(3, 1000, 4.0, Some(0.25), None, None));
        let admits: Vec<Admit> = (0..3).map(|i| s.admit_data(0, 2, pkt(i, 100))).collect();
        assert_eq!(admits, [Admit::Queued, Admit::Queued, Admit::Dropped]);
    }
}
