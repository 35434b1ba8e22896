//! A switch's side of the packet path: a packet arrives, is forwarded to an output (routing,
//! then the load balancer), admitted by the switch model's buffer accounting (which may pause
//! the input's upstream port), and sent when the output is free.

use super::failing::DOWN;
use super::trace::Trace;
use super::Simulation;
use crate::ids::PortId;
use crate::packets::{PacketId, UNROUTED};
use crate::switch::{Admit, Queues, Resume};
use crate::topology::{MAX_PATHS, MAX_SWITCH_PORTS};

/// A set of a switch's source routes to a destination, by their index among
/// [`route_starts`](crate::topology::Topology::route_starts): the ones a packet may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Paths(u64);

const _: () = assert!(MAX_PATHS <= 64, "a path set is a 64-bit mask");

impl Paths {
    /// None yet.
    pub(super) fn none() -> Paths {
        Paths(0)
    }

    pub(super) fn add(&mut self, i: usize) {
        self.0 |= 1 << i;
    }

    pub(super) fn has(self, i: usize) -> bool {
        self.0 >> i & 1 == 1
    }

    pub(super) fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Keeps the entries of `per_path` (one per path) whose path is in the set, in order, at
    /// its start: how many.
    #[cold]
    pub(super) fn keep<T: Copy>(self, per_path: &mut [T]) -> usize {
        let mut n = 0;
        for i in 0..per_path.len() {
            per_path[n] = per_path[i];
            n += usize::from(self.has(i));
        }
        n
    }

    /// The index of the `k`-th path of the set (from 0).
    pub(super) fn nth(self, k: usize) -> usize {
        let mut mask = self.0;
        for _ in 0..k {
            mask &= mask - 1;
        }
        mask.trailing_zeros() as usize
    }
}

impl<T: Trace> Simulation<'_, T> {
    /// Packet `id` arrived at switch `s` on its port `ingress`, local number `input`.
    ///
    /// Inlined into the event loop of runs compiled for partitions, where a packet crosses up
    /// to five switches and LLVM kept it out of line (a k = 24 fat-tree: 1.9 % fewer
    /// instructions, 0.964x CPU time); the plain loop is left to LLVM, which inlines it there
    /// (forced, the leaf-spine benchmark ran 0.2 % more instructions).
    #[inline(always)]
    pub(super) fn switch_receive(&mut self, s: usize, ingress: PortId, input: usize, id: PacketId) {
        if T::PARTS {
            self.switch_receive_here(s, ingress, input, id)
        } else {
            self.switch_receive_plain(s, ingress, input, id)
        }
    }

    #[inline]
    fn switch_receive_plain(&mut self, s: usize, ingress: PortId, input: usize, id: PacketId) {
        self.switch_receive_here(s, ingress, input, id)
    }

    #[inline(always)]
    fn switch_receive_here(&mut self, s: usize, ingress: PortId, input: usize, id: PacketId) {
        if self.conweave.is_some() && self.conweave_intercepts(s, (ingress, input), id) {
            return;
        }
        self.switch_forward(s, ingress, input, id);
    }

    /// [`switch_receive`](Self::switch_receive) past ConWeave: where packets ConWeave sends or
    /// releases at a switch enter its forwarding (so its code never calls back into itself).
    #[inline(always)]
    pub(super) fn switch_forward(&mut self, s: usize, ingress: PortId, input: usize, id: PacketId) {
        let pkt = self.packets.get(id);
        let topology = &self.cfg.topology;
        let hops = self.routing.next_hops_at_row(s, pkt.dst);
        // Ports are numbered contiguously per node.
        let first = ingress.0 - input as u32;
        let is_data = pkt.is_data();
        let out = if hops.len() == 1 {
            hops[0]
        } else if hops.is_empty() {
            // Only after link failures cut this switch off from the destination.
            return self.lose_to_failure(ingress, id);
        } else if let Some(out) =
            self.balancer
                .per_flow(pkt.hash_flow(), topology.switches()[s], hops, is_data)
        {
            out
        } else {
            self.per_packet_hop(s, first, id)
        };
        let output = (out.0 - first) as usize;
        let switch = &mut self.switches[s];
        let port = &self.ports[out.index()];
        // Most packets find their output idle with nothing queued (59 % on the leaf-spine
        // benchmark): they go straight on, as queueing and dequeuing them would do.
        if self.now >= port.busy_until && !switch.has_work(output) && !(is_data && port.paused) {
            if is_data {
                let (admit, resume) = switch.cut_through(&mut self.packets, input, output, id);
                if admit == Admit::Dropped && self.rescues_drops() {
                    return self.refused(s, (ingress, input), output, id);
                }
                self.trace_admission(admit, out, id);
                if !self.admitted(admit, ingress, id) {
                    return;
                }
                self.resume_inputs(s, out, output, resume);
            }
            return self.transmit(out, id, false);
        }
        if port.busy_until == DOWN && !self.holds_for_failed(id) {
            // Its link failed, and routing has not reconverged yet or the packet's source route
            // goes through it: a black hole.
            return self.lose_to_failure(out, id);
        }
        let switch = &mut self.switches[s];
        if is_data {
            let admit = switch.admit_data(&mut self.packets, input, output, id);
            if admit == Admit::Dropped && self.rescues_drops() {
                return self.refused(s, (ingress, input), output, id);
            }
            self.trace_admission(admit, out, id);
            if !self.admitted(admit, ingress, id) {
                return;
            }
        } else {
            switch.admit_control(&mut self.packets, output, id);
        }
        if T::ON && self.packets.traced(id) {
            self.trace_enqueue(s, out, output, id);
        }
        self.switch_send(out, s, output);
    }

    /// The load balancer's choice among the next hops for packet `id` at switch `s`, whose
    /// ports start at `first`, when it chooses per packet or the packet is source-routed: out
    /// of line, as the packet path of ECMP runs never comes here.
    #[inline(never)]
    fn per_packet_hop(&mut self, s: usize, first: u32, id: PacketId) -> PortId {
        let pkt = self.packets.get(id);
        let packet = (pkt.hash_flow(), pkt.dst);
        let cfg = self.cfg;
        let topology = &cfg.topology;
        let node = topology.switches()[s];
        if !topology.source_routed() {
            let hops = self.routing.next_hops_at_row(s, pkt.dst);
            let switch = &self.switches[s];
            let queued = |p: PortId| switch.queued_bytes((p.0 - first) as usize);
            return (self.balancer).choose(s, node, packet, self.now, hops, queued);
        }
        let mut cursor = self.packets.route(id);
        if cursor == UNROUTED {
            // The first switch: ConWeave's source ToR names the path, or the balancer picks
            // one by the paths' first hops.
            let starts = topology.route_starts(s, packet.1);
            // The paths it may take: those up when routing last converged.
            let live = match self.failures {
                Some(_) => self.live_routes(starts),
                None => None,
            };
            let named = match self.conweave.is_some() {
                true => self.conweave_route(s, id, starts, live),
                false => None,
            };
            let i = named.unwrap_or_else(|| {
                let mut first_hops = [PortId(0); MAX_PATHS];
                for (hop, &c) in first_hops.iter_mut().zip(starts) {
                    *hop = topology.route_hop(c);
                }
                let n = match live {
                    Some(live) => live.keep(&mut first_hops[..starts.len()]),
                    None => starts.len(),
                };
                let firsts = &first_hops[..n];
                let switch = &self.switches[s];
                let queued = |p: PortId| switch.queued_bytes((p.0 - first) as usize);
                let j = (self.balancer).choose_index(s, node, packet, self.now, firsts, queued);
                live.map_or(j, |live| live.nth(j))
            });
            cursor = starts[i];
        }
        self.packets.set_route(id, cursor + 1);
        topology.route_hop(cursor)
    }

    /// Whether a refused data packet may yet find room: SRPT evicts, DIBS deflects.
    #[inline(always)]
    fn rescues_drops(&self) -> bool {
        self.evicting || self.deflector.is_some()
    }

    /// Data packet `id`, which came in on `ingress` (local `input`) of switch `s`, was refused
    /// by its output `refused` (local): an SRPT switch evicts worse-ranked packets of that
    /// output to queue it if it can; failing that, DIBS deflects it; failing that, it is
    /// dropped as it would have been.
    #[cold]
    #[inline(never)]
    fn refused(
        &mut self,
        s: usize,
        (ingress, input): (PortId, usize),
        refused: usize,
        id: PacketId,
    ) {
        let eviction = if self.evicting {
            self.switches[s].make_room(&mut self.packets, (input, refused), id)
        } else {
            None
        };
        let Some(eviction) = eviction else {
            if self.deflector.is_some() {
                return self.deflect(s, (ingress, input), refused, id);
            }
            let out = PortId(ingress.0 - input as u32 + refused as u32);
            self.trace_admission(Admit::Dropped, out, id);
            self.admitted(Admit::Dropped, ingress, id);
            return;
        };
        let out = PortId(ingress.0 - input as u32 + refused as u32);
        let mut evicted = eviction.evicted;
        while let Some(v) = self.packets.pop(&mut evicted) {
            self.trace_admission(Admit::Dropped, out, v);
            self.admitted(Admit::Dropped, ingress, v);
        }
        self.admitted(eviction.admit, ingress, id);
        self.resume_inputs(s, out, refused, eviction.resume);
        if T::ON && self.packets.traced(id) {
            self.trace_enqueue(s, out, refused, id);
        }
        self.switch_send(out, s, refused);
    }

    /// DIBS: data packet `id`, which came in on `ingress` (local `input`) of switch `s` and
    /// which its output `refused` had no room for, goes out of a random switch-facing port
    /// with room instead, unless it has used up its TTL of deflections or no port has room:
    /// then it is dropped as it would have been.
    fn deflect(
        &mut self,
        s: usize,
        (ingress, input): (PortId, usize),
        refused: usize,
        id: PacketId,
    ) {
        let first = ingress.0 - input as u32;
        let d = self
            .deflector
            .as_deref_mut()
            .expect("deflection is configured");
        let times = self.packets.deflected(id);
        let mut order = [0; MAX_SWITCH_PORTS];
        let taken = if d.may_deflect(times) {
            let n = d.candidates(s, refused, &mut order);
            let switch = &mut self.switches[s];
            switch.deflect(&mut self.packets, (input, refused), &order[..n], id)
        } else {
            d.ttl_drops += 1;
            None
        };
        let Some((output, admit)) = taken else {
            self.trace_admission(Admit::Dropped, PortId(first + refused as u32), id);
            self.admitted(Admit::Dropped, ingress, id);
            return;
        };
        d.deflections += 1;
        self.packets.set_deflected(id, times + 1);
        let out = PortId(first + output as u32);
        self.admitted(admit, ingress, id);
        if T::ON && self.packets.traced(id) {
            self.trace_enqueue(s, out, output, id);
        }
        self.switch_send(out, s, output);
    }

    /// A traced packet dropped on its way to port `out` is traced (before it is freed).
    #[inline(always)]
    pub(super) fn trace_admission(&mut self, admit: Admit, out: PortId, id: PacketId) {
        if T::ON && admit == Admit::Dropped && self.packets.traced(id) {
            self.trace_drop(out, id);
        }
    }

    /// Acts on a data packet's admission at the switch port `ingress`: pause upstream, or free a
    /// dropped packet. False when it was dropped.
    #[inline(always)]
    pub(super) fn admitted(&mut self, admit: Admit, ingress: PortId, id: PacketId) -> bool {
        match admit {
            Admit::Queued => true,
            Admit::QueuedAndPause => {
                self.send_pfc(ingress, true);
                true
            }
            Admit::Dropped => {
                self.counters.drops += 1;
                self.discard(id);
                false
            }
        }
    }

    /// [`try_send`](Self::try_send) for port `p`, local port `local` of switch `s`.
    #[inline(always)]
    pub(super) fn switch_send(&mut self, p: PortId, s: usize, local: usize) {
        let port = &self.ports[p.index()];
        if self.now < port.busy_until {
            return self.wake_when_done(p);
        }
        let paused = port.paused;
        let Some((pkt, resume, more)) =
            self.switches[s].dequeue_more(&mut self.packets, local, paused)
        else {
            return;
        };
        self.resume_inputs(s, p, local, resume);
        self.transmit(p, pkt, more);
    }

    /// Resumes the upstream neighbours of the inputs in `resume`, on switch `s`, whose local
    /// port `local` is `p`.
    #[inline(always)]
    pub(super) fn resume_inputs(&mut self, s: usize, p: PortId, local: usize, resume: Resume) {
        if resume != Resume::NONE {
            self.resume_some(s, p.0 - local as u32, resume);
        }
    }

    /// [`resume_inputs`](Self::resume_inputs) with some to resume, on the switch whose ports
    /// start at `first`: out of line, as most packets resume nothing.
    #[inline(never)]
    fn resume_some(&mut self, s: usize, first: u32, resume: Resume) {
        match resume.one() {
            Some(input) => self.send_pfc(PortId(first + input as u32), false),
            None => {
                for input in self.switches[s].take_resumed().iter() {
                    self.send_pfc(PortId(first + input as u32), false);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Paths;

    /// Paths 1, 3 and 4 of 6 up: the set keeps their entries, in order, and names them by rank.
    #[test]
    fn a_path_set_keeps_and_names_its_paths() {
        let mut live = Paths::none();
        for i in [4, 1, 3] {
            live.add(i);
        }
        assert_eq!(live.len(), 3);
        assert_eq!([0, 1, 2].map(|k| live.nth(k)), [1, 3, 4]);
        let mut hops = ['a', 'b', 'c', 'd', 'e', 'f'];
        assert_eq!(live.keep(&mut hops), 3);
        assert_eq!(hops[..3], ['b', 'd', 'e']);
        assert!(live.has(3) && !live.has(0) && !live.has(5));
    }
}
