//! The IRN paper's switch (§4.1): input-queued, virtual output queues, round-robin outputs.
//!
//! Every input port owns a buffer; a data packet is admitted into its input's VOQ for the chosen
//! output only if the input's buffer has room (tail drop otherwise). Each output serves the
//! inputs with waiting packets round-robin, one packet per turn. With PFC on, an input whose
//! occupancy passes the pause threshold pauses its upstream neighbour and resumes it once the
//! occupancy falls a gap below, or once the input is empty, whichever comes first: a threshold
//! at most the gap leaves no level above zero to fall below, and the input would never resume
//! (a 24 KB buffer behind a 40 Gb/s, 2 µs link has a 1764 B threshold and a 2172 B gap). Control
//! packets (ACK/NACK) wait in a per-output queue of their own that is served first and never
//! paused or dropped.
//!
//! This module holds the queues and counters and makes the admission and arbitration decisions;
//! the simulation moves packets in and out and sends the PFC frames it asks for.

use super::{Accounting, Admit, EcnMarker, Queues, Resume};
use crate::packets::{Fifo, PacketId, Packets, Ring};
use crate::topology::MAX_SWITCH_PORTS;

/// A port's state as an output, in half a cache line (aligned, so never across two): each
/// port's fields sit together, so a packet touches one line for its output and one for its
/// input. At 40 bytes, three outputs in eight spanned two lines, and the packet path's "anything
/// waiting?" read both.
#[derive(Debug, Clone, Copy)]
#[repr(align(32))]
pub(super) struct Output {
    /// Bit `i` set while `voq[i][output]` holds packets, for inputs below 64 (the others are in
    /// [`VoqSwitch::waiting_high`]): one word, in the output's line, for every switch of up to
    /// 64 ports.
    waiting: u64,
    /// Data bytes waiting for it, over all inputs (the queue ECN marking watches).
    queued: u64,
    /// Control packets, served before data.
    control: Fifo,
    /// The input to consider first next time.
    next_input: u32,
    /// The switch has more than 64 ports, so inputs from 64 on wait in
    /// [`VoqSwitch::waiting_high`]: a copy of the switch's width in each output's line (in what
    /// was padding), so the packet path's "anything waiting?" reads no other line of the switch.
    wide: bool,
}

const _: () = assert!(std::mem::size_of::<Output>() == 32);

/// A port's buffer, as an input, in half a cache line: the room left rather than the bytes
/// held, so admission, pausing and resuming each compare one field with a limit worked out in
/// advance, and the buffer's size and thresholds ([`Limits`]), read only when the input pauses
/// or resumes and by reports, stay out of the line. (At 48 bytes, half the inputs spanned two
/// lines.)
#[derive(Debug, Clone, Copy)]
#[repr(align(32))]
struct Input {
    /// Bytes it can still take.
    room: u64,
    /// The least room it has had: the peak occupancy, kept here, in the line a packet's
    /// admission writes anyway, rather than once for the switch in a line of its own.
    least_room: u64,
    /// Not pausing: pause when `room` falls below this ([`Limits::pause_below`]). Pausing:
    /// resume when `room` is at least this ([`Limits::resume_from`]).
    limit: u64,
    /// PAUSE sent and not yet resumed.
    pausing: bool,
}

const _: () = assert!(std::mem::size_of::<Input>() == 32);

/// An input's buffer size and PFC thresholds, in room left: what [`Input::limit`] switches
/// between.
#[derive(Debug, Clone, Copy)]
struct Limits {
    /// Bytes it can hold: the switch's buffer, or a long link's own.
    capacity: u64,
    /// Pause above an occupancy of `pause_at` (`u64::MAX` without PFC): below a room of
    /// `capacity - pause_at`, 0 (never) when that is past the buffer.
    pause_below: u64,
    /// Resume below an occupancy of `resume_below` (at least 1, so an input that empties always
    /// resumes): from a room of `capacity - (resume_below - 1)`, 0 (at once) when that is past
    /// the buffer.
    resume_from: u64,
}

/// One switch's queues, indexed by local port number (0..ports).
#[derive(Debug)]
pub struct VoqSwitch {
    ports: usize,
    /// Words of waiting inputs per output beyond `Output::waiting`: 0 up to 64 ports.
    high_words: usize,
    /// `waiting_high[output * high_words + w - 1]`: bit `i` of word `w` set while
    /// `voq[64 * w + i][output]` holds packets.
    waiting_high: Vec<u64>,
    /// `voq[input * ports + output]`, as rings: four bytes a pair of ports.
    voq: Vec<Ring>,
    pub(super) outputs: Vec<Output>,
    inputs: Vec<Input>,
    limits: Vec<Limits>,
    pub(super) ecn: Option<EcnMarker>,
    /// Data packets marked CE leaving each output (touched only by a marking switch).
    pub(super) marks: Vec<u64>,
    /// Data packets dropped, per output they were bound for (touched only by a drop).
    pub(super) drops: Vec<u64>,
}

impl VoqSwitch {
    /// A switch with `ports` ports, input `i` buffering `buffer(i)` bytes. `pfc[i]` gives input
    /// `i`'s (pause threshold, resume threshold), or `None` to disable PFC. A paused input
    /// resumes below the resume threshold or, whatever that threshold (0 included), once empty.
    ///
    /// `ecn` enables RED marking with the given random stream.
    ///
    /// # Panics
    /// With more than [`MAX_SWITCH_PORTS`] ports (topologies are validated against this).
    pub fn new(
        ports: usize,
        buffer: impl Fn(usize) -> u64,
        pfc: impl Fn(usize) -> Option<(u64, u64)>,
        ecn: Option<EcnMarker>,
    ) -> Self {
        assert!(
            ports <= MAX_SWITCH_PORTS,
            "a switch has at most {MAX_SWITCH_PORTS} ports"
        );
        let high_words = ports.div_ceil(64).saturating_sub(1);
        let limits: Vec<Limits> = (0..ports)
            .map(|i| {
                let capacity = buffer(i);
                let (pause_at, resume_below) = pfc(i).unwrap_or((u64::MAX, 0));
                Limits {
                    capacity,
                    pause_below: capacity.saturating_sub(pause_at),
                    // Raising 0 to 1 resumes an empty input at no cost per packet.
                    resume_from: capacity.saturating_sub(resume_below.max(1) - 1),
                }
            })
            .collect();
        let inputs = limits
            .iter()
            .map(|l| Input {
                room: l.capacity,
                least_room: l.capacity,
                limit: l.pause_below,
                pausing: false,
            })
            .collect();
        VoqSwitch {
            ports,
            high_words,
            waiting_high: vec![0; ports * high_words],
            voq: vec![Ring::default(); ports * ports],
            outputs: vec![
                Output {
                    waiting: 0,
                    queued: 0,
                    control: Fifo::default(),
                    next_input: 0,
                    wide: high_words != 0,
                };
                ports
            ],
            inputs,
            limits,
            ecn,
            marks: vec![0; ports],
            drops: vec![0; ports],
        }
    }

    /// Bytes a switch of `ports` ports allocates ([`new`](Self::new)): its virtual output
    /// queues, four bytes a pair of ports, grow with the square of the port count.
    pub fn footprint(ports: usize) -> u64 {
        let high_words = ports.div_ceil(64).saturating_sub(1);
        let per_port = size_of::<Output>() + size_of::<Input>() + size_of::<Limits>() + 2 * 8;
        (size_of::<Self>() + ports * (ports * size_of::<Ring>() + high_words * 8 + per_port)) as u64
    }

    /// Most bytes any input held at once.
    pub fn peak_occupancy(&self) -> u64 {
        (self.inputs.iter().zip(&self.limits))
            .map(|(i, l)| l.capacity - i.least_room)
            .max()
            .unwrap_or(0)
    }

    /// Bytes in input `input`'s buffer.
    pub fn input_occupancy(&self, input: usize) -> u64 {
        self.limits[input].capacity - self.inputs[input].room
    }

    /// The size of input `input`'s buffer.
    pub fn input_buffer_bytes(&self, input: usize) -> u64 {
        self.limits[input].capacity
    }

    /// The input whose data packet `output` sent last (its round-robin turn has just passed it):
    /// what credit flow control reads to know which input a departure freed.
    pub fn last_served(&self, output: usize) -> usize {
        let next = self.outputs[output].next_input as usize;
        (next + self.ports - 1) % self.ports
    }

    /// Notes that `voq[input][output]` holds packets.
    #[inline(always)]
    fn set_waiting(&mut self, input: usize, output: usize) {
        if input < 64 {
            self.outputs[output].waiting |= 1 << input;
        } else {
            self.waiting_high[output * self.high_words + input / 64 - 1] |= 1 << (input % 64);
        }
    }

    /// Notes that `voq[input][output]` is empty.
    #[inline(always)]
    fn clear_waiting(&mut self, input: usize, output: usize) {
        if input < 64 {
            self.outputs[output].waiting &= !(1 << input);
        } else {
            self.waiting_high[output * self.high_words + input / 64 - 1] &= !(1 << (input % 64));
        }
    }

    /// Input `input` pauses its upstream port, or resumes it: its limit becomes the other
    /// threshold. Out of line, so the packet path inlines only the test: inlined into the event
    /// loop, these two stores and a load shifted LLVM's choices there enough that the leaf-spine
    /// benchmark, whose switches are not of this model, ran 0.35 % more instructions.
    #[cold]
    #[inline(never)]
    fn set_pausing(&mut self, input: usize, pausing: bool) {
        let limits = &self.limits[input];
        let inp = &mut self.inputs[input];
        inp.pausing = pausing;
        inp.limit = if pausing {
            limits.resume_from
        } else {
            limits.pause_below
        };
    }

    /// Whether an input of 64 or above has packets for `output`, on a switch of more than 64
    /// ports: out of line, so that `has_work` stays small enough to inline.
    #[inline(never)]
    fn high_waiting(&self, output: usize) -> bool {
        (self.waiting_high[output * self.high_words..][..self.high_words])
            .iter()
            .any(|&w| w != 0)
    }

    /// The first input at or after `output`'s round-robin turn (wrapping) with packets for it,
    /// on a switch of more than 64 ports.
    #[inline(never)]
    fn next_waiting_wide(&self, output: usize) -> Option<usize> {
        let high = &self.waiting_high[output * self.high_words..][..self.high_words];
        let word = |w: usize| {
            if w == 0 {
                self.outputs[output].waiting
            } else {
                high[w - 1]
            }
        };
        let words = self.high_words + 1;
        let start = self.outputs[output].next_input as usize % self.ports;
        let (first, bit) = (start / 64, start % 64);
        let from_start = word(first) & (u64::MAX << bit);
        if from_start != 0 {
            return Some(first * 64 + from_start.trailing_zeros() as usize);
        }
        // The other words in order, then the first word's bits before the turn.
        (1..=words).map(|k| (first + k) % words).find_map(|w| {
            let bits = word(w);
            (bits != 0).then(|| w * 64 + bits.trailing_zeros() as usize)
        })
    }
}

impl Accounting for VoqSwitch {
    #[inline(always)]
    fn charge(&mut self, input: usize, output: usize, bytes: u64) -> Admit {
        let inp = &mut self.inputs[input];
        if bytes > inp.room {
            self.drops[output] += 1;
            return Admit::Dropped;
        }
        inp.room -= bytes;
        inp.least_room = inp.least_room.min(inp.room);
        self.outputs[output].queued += bytes;
        if !inp.pausing && inp.room < inp.limit {
            self.set_pausing(input, true);
            Admit::QueuedAndPause
        } else {
            Admit::Queued
        }
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
        // The output's round-robin turn passes this input.
        out.next_input = (input as u32 + 1) % self.ports as u32;
        if let Some(marker) = &mut self.ecn {
            self.marks[output] += u64::from(marker.mark(output, out.queued, packets.get_mut(p)));
        }
        let bytes = u64::from(packets.get(p).wire_bytes);
        out.queued -= bytes;
        let inp = &mut self.inputs[input];
        inp.room += bytes;
        let resume = inp.pausing && inp.room >= inp.limit;
        if resume {
            self.set_pausing(input, false);
        }
        Resume::input_if(resume, input)
    }
}

impl Queues for VoqSwitch {
    // Always: see `SharedSwitch::admit_data` (here 1.4 % on the default scenario).
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
            self.set_waiting(input, output);
            packets.push_ring(&mut self.voq[input * self.ports + output], p);
        }
        admit
    }

    fn enqueue_charged(&mut self, packets: &mut Packets, input: usize, output: usize, p: PacketId) {
        self.set_waiting(input, output);
        packets.push_ring(&mut self.voq[input * self.ports + output], p);
    }

    #[inline]
    fn admit_control(&mut self, packets: &mut Packets, output: usize, p: PacketId) {
        packets.push(&mut self.outputs[output].control, p);
    }

    /// Control first; then, unless the output is paused, the next input in round-robin order.
    /// The resume mask has the input's bit set if taking the packet drained it below its resume
    /// threshold.
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
        let input = if !out.wide {
            let waiting = out.waiting;
            if waiting == 0 {
                return None;
            }
            let start = out.next_input;
            let from_start = if start >= 64 {
                0
            } else {
                waiting & (u64::MAX << start)
            };
            if from_start != 0 {
                from_start.trailing_zeros() as usize
            } else {
                waiting.trailing_zeros() as usize
            }
        } else {
            self.next_waiting_wide(output)?
        };
        let queue = &mut self.voq[input * self.ports + output];
        let p = packets.pop_ring(queue)?;
        match packets.front_ring(queue) {
            Some(next) => packets.prefetch(next),
            None => self.clear_waiting(input, output),
        }
        Some((p, self.release(packets, input, output, p)))
    }

    #[inline(always)]
    fn has_work(&self, output: usize) -> bool {
        let out = &self.outputs[output];
        !out.control.is_empty() || out.waiting != 0 || (out.wide && self.high_waiting(output))
    }

    fn queued_bytes(&self, output: usize) -> u64 {
        self.outputs[output].queued
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::EcnConfig;
    use crate::packet::SimPacket;
    use crate::switch::test_packet as pkt;
    use crate::switch::Harness;
    use irn_core::packet::{Ecn, PacketKind};
    use irn_core::Packet;

    fn ack(flow: u32) -> SimPacket {
        SimPacket {
            pkt: Packet {
                kind: PacketKind::Ack {
                    msn: 0,
                    echo: Default::default(),
                },
                ..pkt(flow, 64).pkt
            },
            ..pkt(flow, 64)
        }
    }

    #[test]
    fn outputs_serve_inputs_round_robin() {
        let mut s = Harness::new(VoqSwitch::new(4, |_| 10_000, |_| None, None));
        for input in [0, 0, 0, 2, 2, 3] {
            assert_eq!(
                s.admit_data(input, 1, pkt(input as u32, 100)),
                Admit::Queued
            );
        }
        let order: Vec<u32> = std::iter::from_fn(|| s.dequeue(1, false))
            .map(|(p, _)| p.flow.0)
            .collect();
        assert_eq!(order, vec![0, 2, 3, 0, 2, 0]);
        assert!(!s.has_work(1));
    }

    #[test]
    fn tail_drop_per_input_buffer() {
        let mut s = Harness::new(VoqSwitch::new(2, |_| 250, |_| None, None));
        assert_eq!(s.admit_data(0, 1, pkt(0, 100)), Admit::Queued);
        assert_eq!(s.admit_data(0, 1, pkt(0, 100)), Admit::Queued);
        assert_eq!(s.admit_data(0, 1, pkt(0, 100)), Admit::Dropped);
        // Another input has its own buffer.
        assert_eq!(s.admit_data(1, 0, pkt(1, 100)), Admit::Queued);
    }

    #[test]
    fn pause_above_threshold_resume_below_gap() {
        let mut s = Harness::new(VoqSwitch::new(2, |_| 1000, |_| Some((250, 150)), None));
        assert_eq!(s.admit_data(0, 1, pkt(0, 100)), Admit::Queued);
        assert_eq!(s.admit_data(0, 1, pkt(0, 100)), Admit::Queued);
        assert_eq!(s.admit_data(0, 1, pkt(0, 100)), Admit::QueuedAndPause); // 300 > 250
        assert_eq!(s.admit_data(0, 1, pkt(0, 100)), Admit::Queued); // already pausing
        assert_eq!(s.dequeue(1, false).map(|(_, r)| r), Some(0)); // 300
        assert_eq!(s.dequeue(1, false).map(|(_, r)| r), Some(0)); // 200
        assert_eq!(s.dequeue(1, false).map(|(_, r)| r), Some(1)); // 100 < 150: resume input 0
    }

    /// Input 0 of a 1000 B buffer takes four 100 B packets for output 1, then output 1 drains
    /// them: the input pauses when it passes the threshold and resumes on the dequeue that takes
    /// it strictly below the resume level, or empties it. The simulation passes the resume
    /// level as `threshold - gap`, saturating at 0 when the gap is at least the threshold.
    #[test]
    fn resume_below_the_resume_level_or_once_empty() {
        // (pause threshold, resume level, admission that pauses, dequeue that resumes).
        let cases: &[(u64, u64, usize, usize)] = &[
            (250, 150, 2, 2), // 300 > 250 pauses; 300, 200, then 100 < 150 resumes
            (250, 201, 2, 1), // 200 < 201
            (250, 200, 2, 2), // 200 is not below 200; 100 is
            (150, 0, 1, 3),   // gap ≥ threshold: resume level 0, resumes once empty
            (50, 0, 0, 3),    // one packet passes the threshold: still resumes once empty
            (50, 10, 0, 3),   // 0 < 10: a level below one packet is reached only when empty
        ];
        for &(pause_at, resume_below, pauses, resumes) in cases {
            let mut s = Harness::new(VoqSwitch::new(
                2,
                |_| 1000,
                |_| Some((pause_at, resume_below)),
                None,
            ));
            let admits: Vec<Admit> = (0..4).map(|i| s.admit_data(0, 1, pkt(i, 100))).collect();
            let mut want = vec![Admit::Queued; 4];
            want[pauses] = Admit::QueuedAndPause;
            assert_eq!(admits, want, "threshold {pause_at}, resume {resume_below}");
            let masks: Vec<u64> = std::iter::from_fn(|| s.dequeue(1, false))
                .map(|(_, r)| r)
                .collect();
            let mut want = vec![0; 4];
            want[resumes] = 1;
            assert_eq!(masks, want, "threshold {pause_at}, resume {resume_below}");
        }
    }

    #[test]
    fn an_input_that_never_paused_never_resumes() {
        let mut s = Harness::new(VoqSwitch::new(2, |_| 1000, |_| Some((500, 0)), None));
        s.admit_data(0, 1, pkt(0, 100));
        assert_eq!(s.dequeue(1, false).map(|(_, r)| r), Some(0)); // empty, but never paused
    }

    /// An input keeps the room it has left, yet reports bytes held and its peak as before, and
    /// thresholds beyond its buffer saturate: a pause level at the buffer's size is never
    /// passed, a resume level above it resumes at the first dequeue, on any size of buffer.
    #[test]
    fn occupancy_peak_and_thresholds_beyond_the_buffer() {
        let mut s = Harness::new(VoqSwitch::new(2, |_| 300, |_| Some((300, 0)), None));
        for i in 0..3 {
            assert_eq!(s.admit_data(0, 1, pkt(i, 100)), Admit::Queued); // 300 is not above 300
        }
        assert_eq!(s.admit_data(0, 1, pkt(3, 100)), Admit::Dropped);
        let held =
            |s: &Harness<VoqSwitch>| (s.switch.input_occupancy(0), s.switch.peak_occupancy());
        assert_eq!(held(&s), (300, 300));
        s.dequeue(1, false);
        s.dequeue(1, false);
        assert_eq!(held(&s), (100, 300));

        let mut s = Harness::new(VoqSwitch::new(2, |_| 300, |_| Some((100, 1000)), None));
        assert_eq!(s.admit_data(0, 1, pkt(0, 100)), Admit::Queued);
        assert_eq!(s.admit_data(0, 1, pkt(1, 100)), Admit::QueuedAndPause);
        assert_eq!(s.dequeue(1, false).map(|(_, r)| r), Some(1)); // 100 < 1000

        let mut s = Harness::new(VoqSwitch::new(2, |_| u64::MAX, |_| Some((150, 120)), None));
        assert_eq!(s.admit_data(0, 1, pkt(0, 100)), Admit::Queued);
        assert_eq!(s.admit_data(0, 1, pkt(1, 100)), Admit::QueuedAndPause);
        assert_eq!(held(&s), (200, 200));
        assert_eq!(s.dequeue(1, false).map(|(_, r)| r), Some(1)); // 100 < 120
    }

    #[test]
    fn ecn_marks_by_the_output_queue_length() {
        let step = EcnConfig {
            kmin_bytes: 150,
            kmax_bytes: 150,
            pmax: 1.0,
            per_rate: false,
            counts_departing: true,
        };
        let mut s = Harness::new(VoqSwitch::new(
            3,
            |_| 10_000,
            |_| None,
            Some(EcnMarker::new(step, 1)),
        ));
        // Two inputs feed output 2: 200 B queued for it, above K = 150.
        s.admit_data(0, 2, pkt(0, 100));
        s.admit_data(1, 2, pkt(1, 100));
        let mut not_ect = pkt(2, 100);
        if let PacketKind::Data { ecn, .. } = &mut not_ect.pkt.kind {
            *ecn = Ecn::NotEct;
        }
        s.admit_data(0, 2, not_ect);
        let marks: Vec<Ecn> = std::iter::from_fn(|| s.dequeue(2, false))
            .map(|(p, _)| match p.pkt.kind {
                PacketKind::Data { ecn, .. } => ecn,
                _ => unreachable!(),
            })
            .collect();
        // 300 B queued: mark; 200 B: mark; 100 B: at or below K; and never a non-ECT packet.
        assert_eq!(marks, vec![Ecn::Ce, Ecn::Ce, Ecn::NotEct]);
        assert_eq!(s.switch.ecn.as_ref().map(|m| m.marks), Some(2));
    }

    /// A step at 150 B: a 100 B packet leaving 200 B queued is marked when the queue counts it
    /// (200 > 150), not when it is taken out first, as ns-3 does (100); with 300 B queued both
    /// mark (the second leaves 200 B counting itself, 100 B without, so only irn's rule marks it).
    #[test]
    fn ecn_counts_the_departing_packet_or_not() {
        for (counts_departing, want) in [(true, [true, true, false]), (false, [true, false, false])]
        {
            let step = EcnConfig {
                kmin_bytes: 150,
                kmax_bytes: 150,
                pmax: 1.0,
                per_rate: false,
                counts_departing,
            };
            let mut s = Harness::new(VoqSwitch::new(
                2,
                |_| 10_000,
                |_| None,
                Some(EcnMarker::new(step, 1)),
            ));
            for i in 0..3 {
                s.admit_data(0, 1, pkt(i, 100));
            }
            let got: Vec<bool> = std::iter::from_fn(|| s.dequeue(1, false))
                .map(|(p, _)| matches!(p.pkt.kind, PacketKind::Data { ecn: Ecn::Ce, .. }))
                .collect();
            assert_eq!(got, want, "counts_departing = {counts_departing}");
        }
    }

    /// Thresholds scaled per output: output 1 runs at twice the rate its thresholds were set
    /// for (its queue counts half), output 2 at half (its queue counts double). The same
    /// 200 B queue marks on output 0 (200 > 150), not on output 1 (100), and 100 B marks on
    /// output 2 (200) but not on output 0.
    #[test]
    fn ecn_thresholds_scale_with_each_outputs_rate() {
        let step = EcnConfig {
            kmin_bytes: 150,
            kmax_bytes: 150,
            pmax: 1.0,
            per_rate: true,
            counts_departing: true,
        };
        let scales = [1 << 16, 1 << 15, 1 << 17];
        let marker = EcnMarker::new(step, 1).with_output_scales(3, |i| scales[i]);
        let mut s = Harness::new(VoqSwitch::new(3, |_| 10_000, |_| None, Some(marker)));
        let ce = |p: Option<(SimPacket, _)>| {
            matches!(
                p.map(|(p, _)| p.pkt.kind),
                Some(PacketKind::Data { ecn: Ecn::Ce, .. })
            )
        };
        for (output, bytes, marked) in [
            (0, 200, true),
            (1, 200, false),
            (2, 100, true),
            (0, 100, false),
        ] {
            s.admit_data(0, output, pkt(0, bytes));
            assert_eq!(
                ce(s.dequeue(output, false)),
                marked,
                "output {output}, {bytes} B"
            );
        }
    }

    #[test]
    fn control_goes_first_and_ignores_pause() {
        let mut s = Harness::new(VoqSwitch::new(2, |_| 1000, |_| None, None));
        s.admit_data(0, 1, pkt(7, 100));
        s.admit_control(1, ack(9));
        assert_eq!(s.dequeue(1, true).map(|(p, _)| p.flow.0), Some(9));
        assert_eq!(s.dequeue(1, true), None); // data is paused
        assert!(s.has_work(1));
        assert_eq!(s.dequeue(1, false).map(|(p, _)| p.flow.0), Some(7));
    }
}
