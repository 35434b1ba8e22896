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
//! | [`loss`] | lossy links: per-port loss rates and their seeded draws |
//! | [`pause`] | PAUSE/PFC frames: quanta, pause times, XOFF/XON or timed frames |
//! | [`credits`] | InfiniBand link-level credits: 64-byte blocks, FCTBS/FCCL/ABR modulo 2^bits |
//! | [`packet`] | the packet as the network sees it |
//! | [`topology`] | fat-tree, leaf-spine, star, dumbbell and arbitrary graphs; ECMP routing tables |
//! | [`workload`] | Poisson, incast and trace workloads; flow-size CDFs |
//! | [`series`] | `[monitor]`'s time series rows and where they go ([`series::SeriesSink`]) |
//! | [`metrics`] | FCT, slowdown and network counters; the `flows.csv` and `summary.json` rows |
//! | [`scenario`] | TOML scenario files, validation, `[[compare]]` variants |
//! | [`config`] | the resolved [`SimConfig`] a run takes |
//! | [`progress`] | how far long setup work has come, for a terminal line |
//! | [`input`] | reading user-named files: regular files only, a size limit per kind |
//! | [`units`], [`rng`], [`ids`] | byte sizes, seeded random streams, typed indices |

pub mod config;
pub mod credits;
pub mod engine;
pub mod failures;
pub mod forwarding;
pub mod ids;
pub mod input;
pub mod loss;
pub mod metrics;
pub mod packet;
pub mod packets;
pub mod partition;
pub mod pause;
pub mod port;
pub mod prefetch;
pub mod progress;
pub mod rng;
pub mod scenario;
pub mod series;
pub mod sim;
pub mod switch;
pub mod topology;
pub mod units;
pub mod verbs_flow;
pub mod workload;

pub use config::SimConfig;
pub use metrics::RunResult;
pub use sim::Progress;

/// What identifies this simulator: a hash of the sources that decide what a run computes (set
/// by the build script). Two builds with the same value compute the same outputs from the same
/// scenario; results folders record it, so a run is reused only by the simulator that made it.
pub const MODEL_ID: &str = env!("IRN_MODEL_ID");

/// Runs one simulation to completion (or its drain limit), calling `progress` now and then.
/// A configured `[monitor]` is not sampled: see [`run_monitored`].
pub fn run(cfg: &SimConfig, progress: &mut dyn FnMut(Progress)) -> RunResult {
    untraced(cfg, None, progress)
}

/// [`run`], with the configuration's `[monitor]` (if any) sampled into `series` as the run
/// goes.
pub fn run_monitored(
    cfg: &SimConfig,
    progress: &mut dyn FnMut(Progress),
    series: &mut dyn series::SeriesSink,
) -> RunResult {
    untraced(cfg, Some(series), progress)
}

/// An untraced run, compiled with the hooks of credit flow control, lossy links, in-band
/// telemetry and partitions only if it has one of them.
fn untraced<'a>(
    cfg: &'a SimConfig,
    series: Option<&'a mut dyn series::SeriesSink>,
    progress: &mut dyn FnMut(Progress),
) -> RunResult {
    use sim::trace::{NoTrace, NoTraceLinkHooks};
    let plain = cfg.credits.is_none() && cfg.link_loss.is_none() && !cfg.transport.cc.wants_int();
    if plain && partition::Partitioning::for_run(cfg).is_none() {
        sim::Simulation::new(cfg, series, NoTrace).run(progress)
    } else {
        sim::Simulation::new(cfg, series, NoTraceLinkHooks).run(progress)
    }
}

/// [`run`], handing every event of the flows `ids` (their `flows.csv` ids, checked by
/// [`sim::trace::check_flows`]) to `sink` as it happens, in time order, and sampling the
/// configuration's `[monitor]` (if any) into `series`. The results are those of [`run`]: the
/// trace only reads.
pub fn run_traced<'a>(
    cfg: &'a SimConfig,
    ids: &[u32],
    sink: impl FnMut(&sim::trace::TraceRow),
    progress: &mut dyn FnMut(Progress),
    series: Option<&'a mut dyn series::SeriesSink>,
) -> RunResult {
    sim::Simulation::new(cfg, series, sim::trace::Tracer::new(ids, sink)).run(progress)
}
