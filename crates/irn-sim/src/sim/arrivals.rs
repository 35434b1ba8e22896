//! The goodput while the load is offered: payload delivered between the first and the last
//! measured arrival, per second (`summary.json`'s `arrival_goodput_gbps`).
//!
//! `goodput_gbps` divides everything delivered by the whole run, drain included. Under an
//! open-loop workload whose flows all finish, that is the offered bytes over however long the
//! last flows take to drain: two networks that carry the same load read apart by their
//! stragglers alone. Between the first and the last measured arrival the load is being offered,
//! so what the network delivers there is what it keeps up with: the offered load when it does,
//! less when it saturates (the throughput Eunomia §5.3 plots against load).
//!
//! The two instants are flow starts, which have events of their own, so this adds none: at each
//! of the two flows' starts the run counts what the receivers hold (`Simulation::delivered_now`).
//! In a partitioned run the other partitions are read as they stand, up to one window (a link
//! delay) apart, as for `jain_index`.

use irn_core::Time;

use crate::config::SimConfig;

/// The two flows whose starts bound the window, and what had been delivered at each.
#[derive(Debug, Clone)]
pub(super) struct ArrivalWindow {
    /// The first measured flow (the first to start at or after the warm-up).
    pub first: usize,
    /// The last measured flow (the last to start before the cool-down, if any).
    pub last: usize,
    /// When each of the two started and the payload delivered by then.
    marks: [Option<(Time, u64)>; 2],
}

impl ArrivalWindow {
    /// The window of `cfg`'s measured arrivals; `None` with flows that wait for others (they
    /// arrive as the run goes, not as offered load) or when the measured flows do not start at
    /// two different instants.
    pub fn new(cfg: &SimConfig) -> Option<Self> {
        if cfg.dag.is_some() {
            return None;
        }
        let measured = |f: &crate::workload::FlowSpec| cfg.is_measured(f.start);
        // The flows are sorted by start.
        let first = cfg.flows.iter().position(measured)?;
        let last = cfg.flows.iter().rposition(measured)?;
        (cfg.flows[last].start > cfg.flows[first].start).then_some(ArrivalWindow {
            first,
            last,
            marks: [None; 2],
        })
    }

    /// Notes that flow `i`, one of the two, starts `now` with `delivered` bytes delivered.
    pub fn mark(&mut self, i: usize, now: Time, delivered: u64) {
        let k = usize::from(i == self.last);
        self.marks[k] = Some((now, delivered));
    }

    /// The goodput between the two marks, in Gb/s; `None` unless both were taken.
    pub fn goodput_gbps(&self) -> Option<f64> {
        let [(from, a), (until, b)] = [self.marks[0]?, self.marks[1]?];
        let ps = until.saturating_since(from).as_ps();
        (ps > 0).then(|| b.saturating_sub(a) as f64 * 8.0 / (ps as f64 / 1e3))
    }
}
