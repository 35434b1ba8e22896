//! Link failures at run time (`crate::failures`): links go down and come back as the timeline
//! says, losing what they carry and hold, and routing reconverges around them.
//!
//! A down port is marked by `busy_until == Time::MAX` (and no wake pending), so it never starts
//! a transmission; the switch packet path already reads `busy_until`, and drops what it would
//! queue for such a port, which is all a failure adds to it.

use irn_core::Time;

use super::switches::Paths;
use super::trace::Trace;
use super::Simulation;
use crate::engine::Event;
use crate::failures::{Change, ToFailed};
use crate::ids::PortId;
use crate::packets::PacketId;
use crate::port::{OwnerKind, Port};
use crate::switch::Queues;

/// A down port's `busy_until`.
pub(super) const DOWN: Time = Time::MAX;

impl<T: Trace> Simulation<'_, T> {
    /// Schedules the timeline's first change, if there are failures.
    pub(super) fn schedule_failures(&mut self) {
        let Some(f) = self.failures.as_deref_mut() else {
            return;
        };
        if let Some(&(at, _)) = f.timeline.changes.first() {
            f.due = at;
            self.queue.schedule(at, Event::LinkChange);
        }
    }

    /// The run's horizon moved (a released flow): draws the random failures due by it that
    /// the timeline has not planned yet, and moves the pending change earlier if one of them
    /// comes first. An extension that would exceed the timeline's limit draws nothing more.
    #[cold]
    #[inline(never)]
    pub(super) fn extend_failures(&mut self) {
        let Some(f) = self.failures.as_deref_mut() else {
            return;
        };
        if !f.timeline.ends_before(self.horizon) || f.timeline.extend(self.horizon, f.next).is_err()
        {
            return;
        }
        if let Some(&(at, _)) = f.timeline.changes.get(f.next) {
            if at < f.due {
                f.due = at;
                self.queue.schedule(at, Event::LinkChange);
            }
        }
    }

    /// Applies every change due now, then schedules the next one.
    #[cold]
    pub(super) fn change_links(&mut self) {
        if self.failures.as_deref().map(|f| f.due) != Some(self.now) {
            return;
        }
        loop {
            let f = self
                .failures
                .as_deref_mut()
                .expect("scheduled with failures");
            let Some(&(at, change)) = f.timeline.changes.get(f.next) else {
                f.due = Time::MAX;
                return;
            };
            if at > self.now {
                f.due = at;
                self.queue.schedule(at, Event::LinkChange);
                return;
            }
            f.next += 1;
            match change {
                Change::Fail(l) => {
                    f.holds[l as usize] += 1;
                    if f.holds[l as usize] == 1 {
                        self.fail_link(l as usize);
                    }
                }
                Change::Restore(l) => {
                    f.holds[l as usize] -= 1;
                    if f.holds[l as usize] == 0 {
                        self.restore_link(l as usize);
                    }
                }
                Change::Reconverge if self.cfg.topology.source_routed() => {
                    f.routed_down.copy_from_slice(&f.port_down);
                }
                Change::Reconverge => {
                    let down = &f.port_down;
                    self.routing = std::sync::Arc::new(self.cfg.topology.routing_avoiding(down));
                }
            }
        }
    }

    /// Link `l` goes down: both directions lose the packets on the wire and the packets queued
    /// at their switch, and stop sending.
    fn fail_link(&mut self, l: usize) {
        let f = self.failures.as_deref_mut().expect("failures");
        f.link_failures += 1;
        let (a, b) = f.timeline.links[l];
        let mut quiet = self.now;
        for p in [a, b] {
            f.port_down[p.index()] = true;
            let port = &self.ports[p.index()];
            quiet = quiet.max(port.busy_until.max(self.now) + port.delay);
        }
        f.quiet_until[l] = quiet;
        for p in [a, b] {
            let port = &mut self.ports[p.index()];
            let mut on_wire = std::mem::take(&mut port.in_flight);
            port.busy_until = DOWN;
            port.wake_at = Port::NO_WAKE;
            while let Some((pkt, _)) = self.packets.pop_link(&mut on_wire) {
                self.lose_to_failure(p, pkt);
            }
            self.flush_queue(p);
        }
    }

    /// Drops every packet the switch behind port `p` holds for it (none for a host's port).
    fn flush_queue(&mut self, p: PortId) {
        let port = &self.ports[p.index()];
        let OwnerKind::Switch(s) = port.owner.kind() else {
            return;
        };
        let local = usize::from(port.local);
        while let Some((pkt, resume)) = self.switches[s].dequeue(&mut self.packets, local, false) {
            self.resume_inputs(s, p, local, resume);
            self.lose_to_failure(p, pkt);
        }
    }

    /// Link `l` comes back: its ports send again once nothing from before the failure can
    /// still be due, unpaused (a pause from before the failure is forgotten).
    fn restore_link(&mut self, l: usize) {
        let f = self.failures.as_deref_mut().expect("failures");
        let (a, b) = f.timeline.links[l];
        let from = self
            .now
            .max(f.quiet_until[l] + irn_core::Duration::from_ps(1));
        for p in [a, b] {
            f.port_down[p.index()] = false;
        }
        for p in [a, b] {
            let port = &mut self.ports[p.index()];
            port.busy_until = from;
            port.paused = false;
            self.try_send(p);
        }
    }

    /// Of the source routes starting at cursors `starts`, those up when routing last
    /// converged; `None` when all of them are, or none is (a packet then takes the route it
    /// is given and is lost where it meets the failure).
    #[cold]
    pub(super) fn live_routes(&self, starts: &[u32]) -> Option<Paths> {
        let f = self.failures.as_deref().expect("failures");
        let topology = &self.cfg.topology;
        let mut live = Paths::none();
        for (i, &c) in starts.iter().enumerate() {
            if !(topology.route_ports(c).iter()).any(|p| f.routed_down[p.index()]) {
                live.add(i);
            }
        }
        (live.len() != 0 && live.len() != starts.len()).then_some(live)
    }

    /// Whether packet `pkt`, routed to a failed link, waits in its queue for the link to come
    /// back (`ToFailed::Hold`; its flow is affected); if not, it is lost.
    #[cold]
    pub(super) fn holds_for_failed(&mut self, pkt: PacketId) -> bool {
        let f = self.failures.as_deref_mut().expect("failures");
        let hold = f.timeline.to_failed == ToFailed::Hold;
        if hold {
            f.packets_held += 1;
            f.affected[self.packets.get(pkt).flow.index()] = true;
        }
        hold
    }

    /// Packet `pkt`, bound for or on the link of port `p`, is lost to a failure: counted, its
    /// flow marked affected, traced and freed.
    #[cold]
    pub(super) fn lose_to_failure(&mut self, p: PortId, pkt: PacketId) {
        let f = self.failures.as_deref_mut().expect("failures");
        f.packets_lost += 1;
        f.affected[self.packets.get(pkt).flow.index()] = true;
        if T::ON && self.packets.traced(pkt) {
            self.trace_lost(p, pkt, "failure");
        }
        self.discard(pkt);
    }
}
