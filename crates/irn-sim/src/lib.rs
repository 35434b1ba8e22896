//! # irn-sim: a deterministic packet-level simulator of datacenter networks
//!
//! Drives `irn-core` transports over links, switches and host NICs. A run is a [`SimConfig`]
//! (usually loaded from a scenario file by [`scenario::load`]) passed to [`run`], which returns
//! per-flow records and a summary.
//!
//! | module | holds |
//! | --- | --- |
//! | [`engine`] | the event queue, ordered by (time, insertion sequence) |
//! | [`sim`] | the world: ports, links, switches, NICs, flows; event dispatch |
//! | [`forwarding`] | load balancing among equal-cost next hops (ECMP, spray, DRILL, power of two, LetFlow) |
//! | [`switch`] | the IRN paper's input-queued VOQ switch with per-input buffers and PFC |
//! | [`port`] | an egress port and the link leaving it |
//! | [`packet`] | the packet as the network sees it |
//! | [`topology`] | fat-tree, leaf-spine, star, dumbbell and arbitrary graphs; ECMP routing tables |
//! | [`workload`] | Poisson, incast and trace workloads; flow-size CDFs |
//! | [`metrics`] | FCT, slowdown and network counters; the `flows.csv` and `summary.json` rows |
//! | [`scenario`] | TOML scenario files, validation, `[[compare]]` variants |
//! | [`config`] | the resolved [`SimConfig`] a run takes |
//! | [`units`], [`rng`], [`ids`] | byte sizes, seeded random streams, typed indices |

pub mod config;
pub mod engine;
pub mod forwarding;
pub mod ids;
pub mod metrics;
pub mod packet;
pub mod packets;
pub mod port;
pub mod prefetch;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod switch;
pub mod topology;
pub mod units;
pub mod verbs_flow;
pub mod workload;

pub use config::SimConfig;
pub use metrics::RunResult;
pub use sim::Progress;

/// Runs one simulation to completion (or its drain limit), calling `progress` now and then.
pub fn run(cfg: &SimConfig, progress: &mut dyn FnMut(Progress)) -> RunResult {
    sim::Simulation::new(cfg, sim::trace::NoTrace).run(progress)
}

/// [`run`], handing every event of the flows `ids` (their `flows.csv` ids, checked by
/// [`sim::trace::check_flows`]) to `sink` as it happens, in time order. The results are those
/// of [`run`]: the trace only reads.
pub fn run_traced(
    cfg: &SimConfig,
    ids: &[u32],
    sink: impl FnMut(&sim::trace::TraceRow),
    progress: &mut dyn FnMut(Progress),
) -> RunResult {
    sim::Simulation::new(cfg, sim::trace::Tracer::new(ids, sink)).run(progress)
}
