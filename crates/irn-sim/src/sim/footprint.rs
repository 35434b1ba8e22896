//! What a run allocates before its first event: a floor under its peak memory.
//!
//! A large fabric's state is mostly fixed at set-up (ports, switch queues, per-flow state and
//! the rows of its results), and one term grows with the square of a switch's radix: the
//! input-queued switch's virtual output queues. Computing it before the run lets the caller
//! refuse a run that cannot fit, with the figure, instead of dying in an allocation an hour
//! in. What grows while the run goes (packets in flight, a running flow's transport state)
//! is left out: the floor is what the run needs at least, not what it will peak at.

use std::mem::size_of;

use super::hosts::{Flow, FlowCounts, Nic};
use crate::config::{SimConfig, SwitchModel};
use crate::forwarding::Balancer;
use crate::loss::LossDraw;
use crate::metrics::FlowRow;
use crate::port::{PauseTimers, Port, PortExtra};
use crate::switch::{SharedSwitch, VoqSwitch};
use crate::workload::ns3::FctRecord;

/// A run's set-up allocations, by what holds them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// Every switch's queues and port state (the input-queued switch's virtual output queues
    /// take `4 × ports²` bytes a switch).
    pub switches: u64,
    /// Every port's state: its line, its rarely used part, its pause timers and loss draws.
    pub ports: u64,
    /// Every host NIC.
    pub nics: u64,
    /// Every flow's state in the run and its rows in the results.
    pub flows: u64,
    /// The load balancers' tables (spray and DRILL keep one entry per switch and host).
    pub balancer: u64,
    /// The switches are input-queued, whose virtual output queues take the most.
    pub input_queued: bool,
}

impl Footprint {
    /// The run's state at set-up, before any packet: what `cfg`'s run allocates at least, on
    /// top of the configuration it is given (its topology, routes and flow list).
    pub fn of(cfg: &SimConfig) -> Footprint {
        let topo = &cfg.topology;
        let switches = (topo.switches().iter())
            .map(|&s| {
                let ports = topo.node_ports(s).len();
                match cfg.switch.model {
                    SwitchModel::InputQueued => VoqSwitch::footprint(ports),
                    SwitchModel::SharedBuffer { .. } => SharedSwitch::footprint(ports),
                }
            })
            .sum();
        let loss = if cfg.link_loss.is_none() {
            0
        } else {
            size_of::<LossDraw>()
        };
        let per_port = size_of::<Port>() + size_of::<PortExtra>() + size_of::<PauseTimers>();
        let per_flow = size_of::<Flow>()
            + size_of::<FlowCounts>()
            + size_of::<FlowRow>()
            + size_of::<FctRecord>();
        let places = (topo.switches().len(), topo.hosts().len());
        Footprint {
            switches,
            ports: (topo.ports().len() * (per_port + loss)) as u64,
            nics: (topo.hosts().len() * size_of::<Nic>()) as u64,
            flows: (cfg.flows.len() * per_flow) as u64,
            balancer: Balancer::footprint(cfg.load_balancing, places),
            input_queued: matches!(cfg.switch.model, SwitchModel::InputQueued),
        }
    }

    /// Bytes in all.
    pub fn total(&self) -> u64 {
        self.switches + self.ports + self.nics + self.flows + self.balancer
    }

    /// The largest part: its name, as a phrase, and its bytes.
    pub fn largest(&self) -> (&'static str, u64) {
        [
            ("the switches' queues", self.switches),
            ("the ports", self.ports),
            ("the NICs", self.nics),
            ("the flows and their results", self.flows),
            ("the load balancers' tables", self.balancer),
        ]
        .into_iter()
        .max_by_key(|&(_, bytes)| bytes)
        .expect("five parts")
    }
}
