//! `summary.json`'s `collectives`: each collective job's times and bandwidths, as nccl-tests
//! reports them, computed after the run from the flows' records and their tags.
//!
//! A flow *finishes* when its receiver holds the whole message (as for FCTs). An iteration
//! takes from its first flow's start to its last flow's finish; a step, in one iteration, from
//! its first flow's start to its last flow's finish (ranks run through a step at different
//! times, so a step's times overlap its neighbours'). Only complete iterations and steps count.

use irn_core::Time;
use serde::{Deserialize, Serialize};

use super::FlowRecord;
use crate::workload::collective::{Collectives, Job};

/// One job's results.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CollectiveSummary {
    /// The job's position among `[[workload.job]]`, from 0.
    pub job: usize,
    pub op: String,
    pub algorithm: String,
    pub ranks: u32,
    /// nccl-tests' size: the bytes the operation is over (see docs/collectives.md).
    pub size_bytes: u64,
    pub channels: u32,
    pub iterations: u32,
    /// Iterations whose every flow finished.
    pub completed_iterations: u32,
    /// The mean time of the completed iterations; `null` without any.
    pub time_us: Option<f64>,
    /// nccl-tests' algorithm bandwidth: `size_bytes / time_us`, in GB/s (10^9 bytes/s).
    pub algbw_gbytes_per_s: Option<f64>,
    /// nccl-tests' bus bandwidth: algbw × 2(N−1)/N for all-reduce, × (N−1)/N for all-gather,
    /// reduce-scatter and all-to-all; comparable with a rank's line rate in GB/s.
    pub busbw_gbytes_per_s: Option<f64>,
    /// From the first iteration's start to the last one's end, compute gaps included; `null`
    /// when an iteration is unfinished.
    pub total_time_us: Option<f64>,
    /// Each iteration's time; `null` for an unfinished one.
    pub iteration_times_us: Vec<Option<f64>>,
    /// Each step of an iteration, over the iterations.
    pub steps: Vec<StepSummary>,
}

/// One step of a job's iterations.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepSummary {
    /// From 0 (the double binary tree's two trees share step numbers).
    pub step: u32,
    /// The mean over iterations of the step's time; `null` when it never completed.
    pub time_us: Option<f64>,
    /// The step's slowest finished flow over every iteration (its `flows.csv` id), and its FCT.
    pub slowest_flow: Option<u32>,
    pub slowest_fct_us: Option<f64>,
}

/// A span of flows: the first start, the last finish, and whether all finished.
#[derive(Clone, Copy)]
struct Span {
    first: Time,
    last: Time,
    complete: bool,
}

impl Span {
    const EMPTY: Span = Span {
        first: Time::MAX,
        last: Time::ZERO,
        complete: true,
    };

    fn add(&mut self, r: &FlowRecord) {
        self.first = self.first.min(r.start);
        match r.received_at {
            Some(t) => self.last = self.last.max(t),
            None => self.complete = false,
        }
    }

    /// Its length, if every flow finished (and there was one).
    fn time(&self) -> Option<f64> {
        (self.complete && self.first <= self.last).then(|| (self.last - self.first).as_us_f64())
    }
}

/// Every job's summary.
pub fn summarize(c: &Collectives, records: &[FlowRecord]) -> Vec<CollectiveSummary> {
    (c.jobs.iter().enumerate())
        .map(|(j, job)| summarize_job(j, job, c.steps[j] as usize, c, records))
        .collect()
}

fn summarize_job(
    j: usize,
    job: &Job,
    steps: usize,
    c: &Collectives,
    records: &[FlowRecord],
) -> CollectiveSummary {
    let iterations = job.iterations as usize;
    let mut whole = vec![Span::EMPTY; iterations];
    let mut parts = vec![Span::EMPTY; iterations * steps];
    let mut slowest: Vec<Option<(u32, f64)>> = vec![None; steps];
    let tagged = (records.iter().zip(&c.tags))
        .filter_map(|(r, t)| t.filter(|t| t.job as usize == j).map(|t| (r, t)));
    for (r, t) in tagged {
        let (i, s) = (t.iteration as usize, t.step as usize);
        whole[i].add(r);
        parts[i * steps + s].add(r);
        if let Some(fct) = r.received_at.map(|t| (t - r.start).as_us_f64()) {
            if slowest[s].is_none_or(|(_, worst)| fct > worst) {
                slowest[s] = Some((r.id, fct));
            }
        }
    }
    let times: Vec<Option<f64>> = whole.iter().map(Span::time).collect();
    let done: Vec<f64> = times.iter().flatten().copied().collect();
    let time_us = (!done.is_empty()).then(|| done.iter().sum::<f64>() / done.len() as f64);
    let algbw = time_us.map(|t| job.size_bytes as f64 / (t * 1e3));
    let total = whole.iter().fold(Span::EMPTY, |a, s| Span {
        first: a.first.min(s.first),
        last: a.last.max(s.last),
        complete: a.complete && s.complete,
    });
    CollectiveSummary {
        job: j,
        op: job.op.name().into(),
        algorithm: job.algorithm.name().into(),
        ranks: job.ranks(),
        size_bytes: job.size_bytes,
        channels: job.channels,
        iterations: job.iterations,
        completed_iterations: done.len() as u32,
        time_us,
        algbw_gbytes_per_s: algbw,
        busbw_gbytes_per_s: algbw.map(|a| a * job.op.bus_factor(job.ranks())),
        total_time_us: total.time(),
        iteration_times_us: times,
        steps: (0..steps)
            .map(|s| {
                let spans: Vec<f64> = (0..iterations)
                    .filter_map(|i| parts[i * steps + s].time())
                    .collect();
                StepSummary {
                    step: s as u32,
                    time_us: (!spans.is_empty())
                        .then(|| spans.iter().sum::<f64>() / spans.len() as f64),
                    slowest_flow: slowest[s].map(|w| w.0),
                    slowest_fct_us: slowest[s].map(|w| w.1),
                }
            })
            .collect(),
    }
}
