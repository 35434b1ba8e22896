//! Ports and links: a port starts sending when its node has something for it, a link carries
//! packets to the far end, and PAUSE frames travel upstream ahead of data and stop or resume
//! the port they reach (with a timer when they carry a time).

use super::trace::Trace;
use super::Simulation;
use crate::engine::Event;
use crate::ids::PortId;
use crate::packets::PacketId;
use crate::pause::{quanta_time, PauseFrame};
use crate::port::{OwnerKind, Port};
use irn_core::Time;

impl<T: Trace> Simulation<'_, T> {
    /// If the port is idle, start sending whatever its node has for it; if it is busy, make sure
    /// it wakes up when it is done.
    ///
    /// Always inlined: out of line (LLVM's choice once the pause events called it too) the
    /// leaf-spine benchmark ran 2 % more instructions.
    #[inline(always)]
    pub(super) fn try_send(&mut self, p: PortId) {
        let port = &self.ports[p.index()];
        match port.owner.kind() {
            OwnerKind::Host(h) => self.nic_send(p, h),
            OwnerKind::Switch(s) => self.switch_send(p, s, usize::from(port.local)),
        }
    }

    /// Makes a busy port wake up when its current packet is out.
    #[inline(always)]
    pub(super) fn wake_when_done(&mut self, p: PortId) {
        let port = &mut self.ports[p.index()];
        if port.wake_at != port.busy_until {
            port.wake_at = port.busy_until;
            self.queue.schedule(port.busy_until, Event::TxDone(p));
        }
    }

    #[inline(always)]
    pub(super) fn transmit(&mut self, p: PortId, pkt: PacketId, more: bool) {
        if T::ON && self.packets.traced(pkt) {
            self.trace_transmit(p, pkt);
        }
        if T::INT {
            self.int_egress(p, pkt);
        }
        let port = &mut self.ports[p.index()];
        let wire_bytes = self.packets.get(pkt).wire_bytes;
        let done = self.now + port.serialization(wire_bytes, &self.extra[p.index()]);
        port.busy_until = done;
        port.bytes_sent += u64::from(wire_bytes);
        let arrives = done + port.delay;
        let first_on_link = port.in_flight.is_empty();
        self.packets.push_link(&mut port.in_flight, pkt, arrives);
        if more && port.wake_at != done {
            port.wake_at = done;
            self.queue.schedule(done, Event::TxDone(p));
        }
        if first_on_link {
            self.queue.schedule(arrives, Event::Arrive(p));
        }
        if T::CREDITS && self.ports[p.index()].credit != 0 {
            self.credit_sent(p, pkt);
        }
    }

    /// The head packet of the link leaving `p` reaches the other end.
    ///
    /// Always inlined into the event loop: LLVM's own choice flips with small changes to what
    /// it inlines in turn (the host and switch receive paths), and out of line it costs 3 % more
    /// instructions on the leaf-spine benchmark (1007 M against 976 M over its first 300 µs).
    #[inline(always)]
    pub(super) fn arrive(&mut self, p: PortId) {
        let port = &mut self.ports[p.index()];
        let Some((pkt, next)) = self.packets.pop_link(&mut port.in_flight) else {
            return;
        };
        let (ingress, owner, input) = (port.peer, port.peer_owner, usize::from(port.peer_local));
        self.counters.packet_hops += 1;
        if let Some(next) = next {
            self.queue.schedule(next, Event::Arrive(p));
            // The new head arrives a serialization time from now: bring it into cache.
            if let Some(head) = self.packets.front(&port.in_flight) {
                self.packets.prefetch(head);
            }
        }
        if T::LOSS && !self.loss.is_empty() && self.lost_on_wire(p, pkt) {
            return;
        }
        match owner.kind() {
            OwnerKind::Host(h) => {
                if T::ON && self.packets.traced(pkt) {
                    self.trace_arrive(h, pkt);
                }
                if T::INT {
                    self.int_arrive(pkt);
                }
                let pkt = self.packets.free(pkt);
                self.host_receive(h, pkt)
            }
            OwnerKind::Switch(s) => {
                // Only links into switches are credit-limited.
                if T::CREDITS && self.ports[p.index()].credit & Port::SENDS_ON_CREDIT != 0 {
                    self.credit_arrived(p, pkt);
                }
                self.switch_receive(s, ingress, input, pkt)
            }
        }
    }

    /// Whether packet `pkt`, at the far end of the link leaving `p`, was lost on the way (see
    /// [`crate::loss`]); a lost packet is counted, traced and freed here. Out of line: only
    /// runs with a lossy link come here.
    #[cold]
    #[inline(never)]
    fn lost_on_wire(&mut self, p: PortId, pkt: PacketId) -> bool {
        if !self.loss[p.index()].next_lost() {
            return false;
        }
        if T::ON && self.packets.traced(pkt) {
            self.trace_lost(p, pkt, "wire");
        }
        self.discard(pkt);
        true
    }

    /// The switch input behind port `from` pauses (`pause`) or resumes its upstream neighbour,
    /// with the frames the port was given (`[switch] pfc_frames`, or its pause control's): a
    /// timed XOFF arms its refresh, which a resume disarms.
    #[cold]
    #[inline(never)]
    pub(super) fn send_pfc(&mut self, from: PortId, pause: bool) {
        let timers = &mut self.pause_timers[from.index()];
        let frame = if pause {
            let (frame, refresh) = timers.frames.xoff(self.extra[from.index()].rate);
            if let Some(every) = refresh {
                timers.refresh_at = self.now + every;
                self.queue
                    .schedule(timers.refresh_at, Event::PauseRefresh(from));
            }
            frame
        } else {
            timers.refresh_at = Time::MAX;
            PauseFrame::XON
        };
        self.send_pause(from, frame);
    }

    /// A refresh the input behind `from` armed is due: it is still paused, as a resume would
    /// have disarmed it, so the XOFF goes again before the last one runs out.
    pub(super) fn refresh_pause(&mut self, from: PortId) {
        if self.pause_timers[from.index()].refresh_at == self.now {
            self.send_pfc(from, true);
        }
    }

    /// A pause frame from port `from` to the port upstream of it. Pause frames do not queue
    /// behind data (they preempt) and take their own serialization plus the link delay.
    pub(super) fn send_pause(&mut self, from: PortId, frame: PauseFrame) {
        let port = &self.ports[from.index()];
        let size = irn_core::packet::CONTROL_FRAME_BYTES;
        let at = self.now + port.serialization(size, &self.extra[from.index()]) + port.delay;
        let (quanta, xoff) = frame.to_parts();
        if frame.pauses() {
            self.counters.pause_frames += 1;
            let log = &mut self.extra[from.index()].pauses;
            log.sent += 1;
            log.quanta_sent += u64::from(quanta);
        } else {
            self.counters.resume_frames += 1;
        }
        let port = port.peer;
        self.queue.schedule(at, Event::Pfc { port, quanta, xoff });
    }

    /// A pause frame reaches port `p`: it stops sending data (a packet in serialization
    /// finishes), for the frame's time if it has one, replacing any pause in force; time 0
    /// resumes it at once.
    pub(super) fn receive_pause(&mut self, p: PortId, frame: PauseFrame) {
        let (port, extra) = (&mut self.ports[p.index()], &mut self.extra[p.index()]);
        let pause = frame.pauses();
        extra.pauses.record(self.now, port.paused, pause);
        port.paused = pause;
        let until = match frame {
            PauseFrame::Quanta(q) if pause => self.now + quanta_time(extra.rate, q),
            _ => Time::MAX,
        };
        self.pause_timers[p.index()].pause_until = until;
        if until != Time::MAX {
            self.queue.schedule(until, Event::PauseEnd(p));
        }
        if !pause {
            self.try_send(p);
        }
    }

    /// A timed pause on port `p` may have run out; it has unless a newer frame moved it.
    pub(super) fn pause_ended(&mut self, p: PortId) {
        let (port, timers) = (
            &mut self.ports[p.index()],
            &mut self.pause_timers[p.index()],
        );
        if port.paused && timers.pause_until == self.now {
            self.extra[p.index()].pauses.record(self.now, true, false);
            port.paused = false;
            timers.pause_until = Time::MAX;
            self.try_send(p);
        }
    }
}
