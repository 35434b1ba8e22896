//! Credit flow control in the running world (`[switch] credits`, see [`crate::credits`]).
//!
//! Nothing here runs without credits: the packet path calls in only for a port whose
//! [`Port::credit`] byte is set, and no flow-control packet is ever scheduled.
//!
//! A port that sends into a switch input (a switch's or a NIC's) counts its data blocks (FCTBS)
//! and stops, as if paused, once its credit no longer covers the largest frame; the input
//! counts what arrives (ABR). Every port sends a flow-control packet every interval, and a
//! switch input also as soon as packets leaving it have freed `update_blocks` more credit than
//! it last granted. A flow-control packet from port `q` carries the limit of the input behind
//! `q` (to the port upstream) and `q`'s own FCTBS (to the input downstream, which resyncs its
//! ABR); it is serialized between data packets like any 64 B frame, so it arrives after the
//! packets sent before it and before those sent after.
//!
//! Under `credit_rule = "pause-equivalent"`, the inputs `[[pause_control]]` selects grant
//! instead, from their pause control's periodic check ([`Simulation::grant_credit`]): the port
//! upstream holds an allowance in blocks (no counters, no resync), spends it on each data
//! packet and stops once it no longer covers the largest frame; each grant replaces it. Until
//! the first grant arrives the allowance is unbounded: an empty input at rest grants its
//! whole interval every interval, which is the line rate.

use irn_core::packet::CONTROL_FRAME_BYTES;
use irn_core::Time;

use super::trace::Trace;
use super::Simulation;
use crate::credits::{
    blocks, free_blocks, interval_quanta, pause_equivalent_grant, Counters, CreditConfig,
    CreditLink, CreditRule, Wire,
};
use crate::engine::Event;
use crate::ids::PortId;
use crate::packets::PacketId;
use crate::pause::PauseControl;
use crate::port::{OwnerKind, Port};
use crate::switch::{Switch, VoqSwitch};

/// A run's credit state.
#[derive(Debug)]
pub(super) struct Credits {
    cfg: CreditConfig,
    counters: Counters,
    /// The largest data frame of the run, in blocks: a port sends while its credit covers it.
    frame_blocks: u32,
    /// Per port: the credit-limited link leaving it (untouched for links into hosts).
    links: Vec<CreditLink>,
}

impl<T: Trace> Simulation<'_, T> {
    /// Gives every port its credit roles and every credit-limited link the limit its input
    /// grants when empty (as the link's initialization exchanges it).
    pub(super) fn setup_credits(&mut self, cfg: CreditConfig) {
        let counters = cfg.counters();
        let mut credits = Credits {
            cfg,
            counters,
            frame_blocks: blocks(self.cfg.max_frame_bytes()),
            links: vec![CreditLink::default(); self.ports.len()],
        };
        let grants = cfg.rule == CreditRule::PauseEquivalent;
        for p in 0..self.ports.len() {
            let port = &mut self.ports[p];
            let into_switch = matches!(port.peer_owner.kind(), OwnerKind::Switch(_));
            let of_switch = matches!(port.owner.kind(), OwnerKind::Switch(_));
            let granted = grants && self.cfg.pause_control.iter().any(|c| c.port == port.peer);
            let sends = if granted {
                Port::SENDS_ON_GRANT
            } else {
                Port::SENDS_ON_CREDIT
            };
            port.credit = u8::from(into_switch) * sends + u8::from(of_switch) * Port::FREES_CREDIT;
            if granted {
                credits.links[p].allowance = u32::MAX;
            } else if into_switch {
                let limit = self.input_limit(self.ports[p].peer, &credits);
                let link = &mut credits.links[p];
                (link.fccl, link.advertised) = (limit, limit);
            }
        }
        self.credits = Some(Box::new(credits));
    }

    /// Every port's first periodic flow-control packet.
    pub(super) fn schedule_credits(&mut self) {
        let Some(credits) = &self.credits else {
            return;
        };
        for (p, extra) in self.extra.iter().enumerate() {
            let at = Time::ZERO + credits.cfg.interval_at(extra.rate);
            self.queue.schedule(at, Event::CreditTick(PortId(p as u32)));
        }
    }

    /// The limit the input behind switch port `q` can grant now: its ABR plus its free blocks,
    /// at most a window.
    fn input_limit(&self, q: PortId, credits: &Credits) -> u32 {
        let port = &self.ports[q.index()];
        let input = usize::from(port.local);
        let switch = self.voq(port);
        let free = switch.input_buffer_bytes(input) - switch.input_occupancy(input);
        let abr = credits.links[port.peer.index()].abr;
        (credits.counters).limit(abr, free_blocks(free), credits.cfg.window_blocks)
    }

    /// The switch of `port`, an input-queued one.
    fn voq(&self, port: &Port) -> &VoqSwitch {
        match port.owner.kind() {
            OwnerKind::Switch(s) => match &self.switches[s] {
                Switch::Voq(switch) => switch,
                Switch::Shared(_) => {
                    unreachable!("credits run on input-queued switches (checked by the scenario)")
                }
            },
            OwnerKind::Host(_) => unreachable!("credit-limited links end at switches"),
        }
    }

    /// Port `p` (with a credit role) started sending packet `pkt`: a data packet spends the
    /// port's credit, and if it left a switch, frees credit at the input it came from.
    #[cold]
    #[inline(never)]
    pub(super) fn credit_sent(&mut self, p: PortId, pkt: PacketId) {
        let packet = self.packets.get(pkt);
        if !packet.is_data() {
            return;
        }
        let spent = blocks(u64::from(packet.wire_bytes));
        let credits = self
            .credits
            .as_mut()
            .expect("credit roles only with credits");
        let port = &self.ports[p.index()];
        let roles = port.credit;
        if roles & Port::SENDS_ON_CREDIT != 0 {
            let c = credits.counters;
            let link = &mut credits.links[p.index()];
            link.fctbs = c.add(link.fctbs, spent);
            if !c.may_send(link.fccl, link.fctbs, credits.frame_blocks) {
                self.extra[p.index()].pauses.hold(self.now, false, true);
                self.ports[p.index()].paused = true;
            }
        } else if roles & Port::SENDS_ON_GRANT != 0 {
            let link = &mut credits.links[p.index()];
            link.allowance = link.allowance.saturating_sub(spent);
            if link.allowance < credits.frame_blocks {
                self.extra[p.index()].pauses.hold(self.now, false, true);
                self.ports[p.index()].paused = true;
            }
        }
        if roles & Port::FREES_CREDIT != 0 {
            self.credit_freed(p);
        }
    }

    /// A data packet just left switch port `p`: the input it came from sends a flow-control
    /// packet if the credit it could grant grew by `update_blocks` since its last.
    fn credit_freed(&mut self, p: PortId) {
        let port = &self.ports[p.index()];
        let local = usize::from(port.local);
        let q = PortId(p.0 - local as u32 + self.voq(port).last_served(local) as u32);
        let upstream = self.ports[q.index()].peer;
        if self.ports[upstream.index()].credit & Port::SENDS_ON_CREDIT == 0 {
            return;
        }
        let credits = self
            .credits
            .as_deref()
            .expect("credit roles only with credits");
        let limit = self.input_limit(q, credits);
        let grown = (credits.counters).sub(limit, credits.links[upstream.index()].advertised);
        if grown >= credits.cfg.update_blocks {
            self.send_flow_control(q);
        }
    }

    /// The head packet of the credit-limited link leaving `p` arrived: the input counts its
    /// blocks (ABR).
    #[cold]
    #[inline(never)]
    pub(super) fn credit_arrived(&mut self, p: PortId, pkt: PacketId) {
        let packet = self.packets.get(pkt);
        if packet.is_data() {
            let got = blocks(u64::from(packet.wire_bytes));
            let credits = self
                .credits
                .as_mut()
                .expect("credit roles only with credits");
            let link = &mut credits.links[p.index()];
            link.abr = credits.counters.add(link.abr, got);
        }
    }

    /// Port `q` sends a flow-control packet, after the packet it is serializing: its input's
    /// limit upstream and its own FCTBS downstream, whichever link is credit-limited.
    fn send_flow_control(&mut self, q: PortId) {
        let credits = self
            .credits
            .as_deref()
            .expect("flow control only with credits");
        let port = &self.ports[q.index()];
        let upstream = port.peer;
        let limit = (self.ports[upstream.index()].credit & Port::SENDS_ON_CREDIT != 0)
            .then(|| self.input_limit(q, credits));
        let fctbs =
            (port.credit & Port::SENDS_ON_CREDIT != 0).then(|| credits.links[q.index()].fctbs);
        if limit.is_none() && fctbs.is_none() {
            // Both directions of the link are under the pause-equivalent rule.
            return;
        }
        let start = self.now.max(port.busy_until);
        let done = start + port.serialization(CONTROL_FRAME_BYTES, &self.extra[q.index()]);
        let at = done + port.delay;
        self.ports[q.index()].busy_until = done;
        self.counters.credit_frames += 1;
        let credits = self
            .credits
            .as_mut()
            .expect("flow control only with credits");
        if let Some(fccl) = limit {
            credits.links[upstream.index()].advertised = fccl;
            let fccl = Wire::new(fccl);
            self.queue.schedule(
                at,
                Event::CreditLimit {
                    port: upstream,
                    fccl,
                },
            );
        }
        if let Some(fctbs) = fctbs {
            let fctbs = Wire::new(fctbs);
            self.queue
                .schedule(at, Event::CreditSync { port: q, fctbs });
        }
    }

    /// Port `p`'s periodic flow-control packet; the next one an interval later.
    #[cold]
    #[inline(never)]
    pub(super) fn credit_tick(&mut self, p: PortId) {
        self.send_flow_control(p);
        let credits = self.credits.as_deref().expect("ticks only with credits");
        let every = credits.cfg.interval_at(self.extra[p.index()].rate);
        self.queue.schedule(self.now + every, Event::CreditTick(p));
    }

    /// A credit limit reaches port `p`: a port waiting for credit goes on if it now covers the
    /// largest frame.
    #[cold]
    #[inline(never)]
    pub(super) fn credit_limit(&mut self, p: PortId, fccl: Wire) {
        let credits = self
            .credits
            .as_mut()
            .expect("credit limits only with credits");
        let link = &mut credits.links[p.index()];
        link.fccl = fccl.get();
        let go = (credits.counters).may_send(link.fccl, link.fctbs, credits.frame_blocks);
        if go && self.ports[p.index()].paused {
            self.extra[p.index()].pauses.hold(self.now, true, false);
            self.ports[p.index()].paused = false;
            self.try_send(p);
        }
    }

    /// Pause control `control`'s periodic check under the pause-equivalent rule: its input,
    /// holding `occupancy` bytes, grants the interval's quanta minus the PAUSE its rule would
    /// send, in a 64 B flow-control packet that leaves after the packet being serialized.
    #[cold]
    #[inline(never)]
    pub(super) fn grant_credit(&mut self, control: &PauseControl, occupancy: u64) {
        let q = control.port;
        let port = &self.ports[q.index()];
        let extra = &self.extra[q.index()];
        let quanta = interval_quanta(extra.rate, control.interval);
        let blocks = pause_equivalent_grant(quanta, control.rule.at_interval(occupancy));
        let start = self.now.max(port.busy_until);
        let done = start + port.serialization(CONTROL_FRAME_BYTES, extra);
        let (at, upstream) = (done + port.delay, port.peer);
        self.ports[q.index()].busy_until = done;
        self.counters.credit_frames += 1;
        let port = upstream;
        self.queue.schedule(at, Event::CreditGrant { port, blocks });
    }

    /// A pause-equivalent grant reaches port `p`: it replaces the allowance, and the port goes
    /// on or stops as the new allowance covers the largest frame or not.
    #[cold]
    #[inline(never)]
    pub(super) fn credit_grant(&mut self, p: PortId, blocks: u16) {
        let credits = self.credits.as_mut().expect("grants only with credits");
        credits.links[p.index()].allowance = u32::from(blocks);
        let go = u32::from(blocks) >= credits.frame_blocks;
        let port = &mut self.ports[p.index()];
        let paused = port.paused;
        if go != paused {
            // Sending with enough, or waiting with too little: the grant changes nothing.
            return;
        }
        self.extra[p.index()].pauses.hold(self.now, paused, !go);
        port.paused = !go;
        if go {
            self.try_send(p);
        }
    }

    /// Whether pause control grants credit instead of pausing (`credit_rule =
    /// "pause-equivalent"`).
    pub(super) fn grants_credit(&self) -> bool {
        (self.credits.as_deref()).is_some_and(|c| c.cfg.rule == CreditRule::PauseEquivalent)
    }

    /// The sender's FCTBS reaches the input at the end of the link leaving `p`, which
    /// resynchronizes its ABR to it (IBA's recovery from lost packets; here links lose
    /// nothing and deliver in order, so the two agree).
    #[cold]
    #[inline(never)]
    pub(super) fn credit_sync(&mut self, p: PortId, fctbs: Wire) {
        let credits = self
            .credits
            .as_mut()
            .expect("credit syncs only with credits");
        let link = &mut credits.links[p.index()];
        debug_assert_eq!(link.abr, fctbs.get(), "ABR out of step on link {p:?}");
        link.abr = fctbs.get();
    }
}
