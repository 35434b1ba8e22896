//! Why ports are still paused at the end of a run with flows unfinished: a deadlock (paused
//! ports waiting on each other in a cycle), or pauses that would have lifted (hosts pausing
//! their switch, credit still on its way, a drain limit too short for the backlog).
//!
//! The wait-for graph, from the pause state at the end of the run: a paused egress port `p`
//! waits on its peer switch (whose input, the far end of `p`'s link, paused it), and that
//! switch's buffered packets wait on its egress ports that are themselves paused with packets
//! queued; so `p → q` for each such `q`. A port paused by a host waits on nothing in the
//! network. A cycle is a deadlock: nothing in it can move until something else does. Which
//! input a queued packet came in on is not followed, so the graph may hold an edge a packet
//! by packet view would not (a port queued with packets from another input); a cycle is then
//! paused ports whose switches each hold packets for the next, paused in turn.

use super::{Simulation, Trace};
use crate::ids::PortId;
use crate::metrics::PausedAtEnd;
use crate::port::{OwnerKind, Port};
use crate::series::NodeName;
use crate::switch::Queues;

impl<T: Trace> Simulation<'_, T> {
    /// The ports paused at the end by who paused them, and a cycle of them if there is one
    /// (named as `ports.csv` names them).
    pub(super) fn paused_at_end(&self) -> (PausedAtEnd, Option<Vec<String>>) {
        let mut by = PausedAtEnd::default();
        for port in self.ports.iter().filter(|p| p.paused) {
            match (
                self.ports[port.peer.index()].owner.kind(),
                &self.cfg.credits,
            ) {
                (OwnerKind::Host(_), _) => by.hosts += 1,
                (OwnerKind::Switch(_), Some(_)) => by.credit += 1,
                (OwnerKind::Switch(_), None) => by.switches += 1,
            }
        }
        let cycle = self.pause_cycle().map(|ports| {
            ports
                .iter()
                .map(|&p| port_name(&self.ports[p as usize]))
                .collect()
        });
        (by, cycle)
    }

    /// The first cycle of the wait-for graph (see the module docs), by a depth-first search
    /// from each paused port in port order: the ports in the order they wait on each other.
    fn pause_cycle(&self) -> Option<Vec<u32>> {
        let ports = &self.ports;
        let topology_node = |p: PortId| self.cfg.topology.ports()[p.index()].node;
        // Paused egress ports of `p`'s peer switch with packets queued: what `p` waits on.
        let waits_on = |p: usize| -> Vec<u32> {
            let peer_id = ports[p].peer;
            let peer = &ports[peer_id.index()];
            let OwnerKind::Switch(s) = peer.owner.kind() else {
                return Vec::new();
            };
            let switch = &self.switches[s];
            // Reversed: the search pops them, so it visits them in port order.
            (self.cfg.topology.node_ports(topology_node(peer_id)).rev())
                .filter(|&q| {
                    let q_port = &ports[q as usize];
                    q_port.paused && switch.queued_bytes(usize::from(q_port.local)) > 0
                })
                .collect()
        };
        // 0: not seen; 1: on the current path; 2: done (no cycle through it).
        let mut state = vec![0u8; ports.len()];
        for start in (0..ports.len()).filter(|&p| ports[p].paused) {
            if state[start] != 0 {
                continue;
            }
            // The path from `start`, each port with what it waits on still to visit.
            let mut path: Vec<(u32, Vec<u32>)> = vec![(start as u32, waits_on(start))];
            state[start] = 1;
            while let Some((at, next)) = path.last_mut() {
                let Some(q) = next.pop() else {
                    state[*at as usize] = 2;
                    path.pop();
                    continue;
                };
                match state[q as usize] {
                    0 => {
                        state[q as usize] = 1;
                        path.push((q, waits_on(q as usize)));
                    }
                    1 => {
                        let from = path.iter().position(|(p, _)| *p == q).expect("on the path");
                        return Some(path[from..].iter().map(|(p, _)| *p).collect());
                    }
                    _ => {}
                }
            }
        }
        None
    }
}

/// A port as `ports.csv` names its node, with its number there: "switch:4 port 2".
fn port_name(p: &Port) -> String {
    let node = match p.owner.kind() {
        OwnerKind::Host(h) => NodeName {
            switch: false,
            index: h.0,
        },
        OwnerKind::Switch(s) => NodeName {
            switch: true,
            index: s as u32,
        },
    };
    format!("{node} port {}", p.local)
}
