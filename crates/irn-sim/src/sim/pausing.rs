//! PAUSE frames that no buffer threshold crossed on a packet sends: a switch input's periodic
//! pause control (`[[pause_control]]`, the WAN's receiving ends) and hosts that pause their
//! switch at random (`[pauses]`). Neither schedules anything unless configured.

use irn_core::Time;

use super::trace::Trace;
use super::Simulation;
use crate::engine::Event;
use crate::pause::{PauseFrame, PauseRule, PauseSource};
use crate::port::OwnerKind;
use crate::rng::{stream, Purpose};

impl<T: Trace> Simulation<'_, T> {
    /// Every event about PAUSE frames, out of the event loop's line: they are rare, and their
    /// code inlined there cost the packet path 2 % more instructions (register pressure and
    /// layout in the loop) on the leaf-spine benchmark.
    #[cold]
    #[inline(never)]
    pub(super) fn pause_event(&mut self, event: Event) {
        match event {
            Event::Pfc { port, quanta, xoff } => {
                self.receive_pause(port, PauseFrame::from_parts(quanta, xoff))
            }
            Event::PauseEnd(port) => self.pause_ended(port),
            Event::PauseRefresh(port) => self.refresh_pause(port),
            Event::PauseControl(i) => self.pause_control(i),
            Event::PauseSource(i) => self.pause_source(i),
            _ => unreachable!("not a pause event: {event:?}"),
        }
    }

    /// The first check of every periodic pause control and the first pause of every host
    /// that pauses: at the start of the run.
    pub(super) fn schedule_pausing(&mut self) {
        for (i, control) in self.cfg.pause_control.iter().enumerate() {
            if control.rule.periodic() {
                self.counters
                    .pause_control
                    .get_or_insert_with(Default::default);
                let at = Time::ZERO + control.interval;
                self.queue.schedule(at, Event::PauseControl(i as u32));
            }
        }
        for (i, source) in self.pause_sources.iter_mut().enumerate() {
            let at = Time::ZERO + source.first();
            self.queue.schedule(at, Event::PauseSource(i as u32));
        }
    }

    /// The hosts of `[pauses]`, each with its own random stream.
    pub(super) fn pause_sources(cfg: &crate::SimConfig) -> Vec<PauseSource> {
        (cfg.pause_sources.iter())
            .map(|&c| PauseSource::new(c, stream(cfg.seed, Purpose::Pauses, u64::from(c.host.0))))
            .collect()
    }

    /// Pause control `i` looks at its input's buffer, sends the frame its rule asks for (if any)
    /// and comes back an interval later.
    pub(super) fn pause_control(&mut self, i: u32) {
        let control = self.cfg.pause_control[i as usize];
        let port = &self.ports[control.port.index()];
        let OwnerKind::Switch(s) = port.owner.kind() else {
            unreachable!("pause control runs on switch ports (checked by the scenario)")
        };
        let occupancy = self.switches[s].buffer_bytes(usize::from(port.local));
        let node = self.cfg.topology.ports()[control.port.index()].node;
        self.log_pause_check(i as usize, node, occupancy);
        if T::CREDITS && self.grants_credit() {
            self.grant_credit(&control, occupancy);
        } else if let Some(frame) = control.rule.at_interval(occupancy) {
            self.send_pause(control.port, frame);
        }
        debug_assert!(!matches!(control.rule, PauseRule::Threshold { .. }));
        self.queue
            .schedule(self.now + control.interval, Event::PauseControl(i));
    }

    /// Counts pause control `i`'s check of its input on switch `node`, holding `occupancy`
    /// bytes: its depth, and whether the sink starved (the input empty while no port of the
    /// switch towards a host is paused), once the input has first held data.
    fn log_pause_check(&mut self, i: usize, node: crate::ids::NodeId, occupancy: u64) {
        let fed = &mut self.pause_control_fed[i];
        *fed |= occupancy > 0;
        if !*fed {
            return;
        }
        let ports = &self.ports;
        let host_paused = (self.cfg.topology.node_ports(node)).any(|q| {
            let port = &ports[q as usize];
            port.paused && matches!(port.peer_owner.kind(), OwnerKind::Host(_))
        });
        if let Some(log) = self.counters.pause_control.as_mut() {
            log.checks += 1;
            log.buffer_sum += u128::from(occupancy);
            log.starved += u64::from(occupancy == 0 && !host_paused);
        }
    }

    /// Pausing host `i` sends its next frame to its switch.
    pub(super) fn pause_source(&mut self, i: u32) {
        let source = &mut self.pause_sources[i as usize];
        let port = self.cfg.topology.host_port(source.host());
        let (frame, wait) = source.next(self.extra[port.index()].rate);
        self.send_pause(port, frame);
        self.queue.schedule(self.now + wait, Event::PauseSource(i));
    }
}
