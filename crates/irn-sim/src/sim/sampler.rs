//! What the NICs hold, sampled over time: every NIC's ordering-layer memory at a fixed interval
//! (Eunomia Fig. 17c), summed up as it goes into a mean and a peak.
//!
//! A sample is one [`Event::Sample`], scheduled only when an ordering layer is configured, so a
//! run without one has neither the event nor a branch on its packet path. Its times are the
//! multiples of `[ordering] sample_interval` from the end of the warm-up (or the first flow's
//! arrival, if later) to the last flow's arrival ([`Schedule`]): the window in which the
//! workload offers its load and the measured flows start. Warm-up samples would see a network
//! still filling, drain samples one emptying, so neither counts (nor is taken).
//!
//! A sample reads every *running connection*: a flow from its start until its receiver has the
//! whole message, counted at its destination's NIC, where the ordering layer sits. Its bytes
//! are [`OrderingLayer::footprint_bytes`] (the bitmap and its state as the paper counts them);
//! a NIC's bytes are the sum over its running connections. The per-NIC values of the latest
//! sample stay in [`OrderingMemory::nic_bytes`], so a time series can be written from them
//! without another pass. Nothing here allocates after setup.

use irn_core::ordering::OrderingLayer;
use irn_core::{Duration, Time};

use super::trace::Trace;
use super::Simulation;
use crate::config::SimConfig;
use crate::engine::Event;
use crate::ids::FlowId;
use crate::metrics::SampledMemory;

/// When samples are taken: every multiple of `interval` in `from..=until`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Schedule {
    interval: Duration,
    from: Time,
    until: Time,
}

impl Schedule {
    /// The window of `cfg`'s measured arrivals: from the end of its warm-up (or its first
    /// arrival, if later) to its last arrival.
    fn of_arrivals(cfg: &SimConfig, interval: Duration) -> Self {
        let first = cfg.flows.first().map_or(Time::ZERO, |f| f.start);
        let last = cfg.flows.last().map_or(Time::ZERO, |f| f.start);
        Schedule {
            interval,
            from: first.max(Time::ZERO + cfg.warmup),
            until: last,
        }
    }

    /// The first sample: the first multiple of the interval (after t = 0) not before `from`.
    pub(super) fn first(&self) -> Option<Time> {
        let step = self.interval.as_ps();
        let k = self.from.as_ps().div_ceil(step).max(1);
        let t = Time::from_ps(k.checked_mul(step)?);
        (t <= self.until).then_some(t)
    }

    /// The sample after the one at `t`.
    pub(super) fn after(&self, t: Time) -> Option<Time> {
        let next = t + self.interval;
        (next <= self.until).then_some(next)
    }
}

/// Every NIC's ordering memory: the latest sample, and the sums the summary needs.
#[derive(Debug, Clone)]
pub(super) struct OrderingMemory {
    pub(super) schedule: Schedule,
    /// Per NIC (host index): its bytes at the latest sample.
    nic_bytes: Vec<u64>,
    samples: u64,
    /// Over every sample and NIC: the sum and the largest of the NIC's bytes.
    nic_bytes_sum: u64,
    nic_bytes_peak: u64,
    /// Over every sample: the bytes of the bitmaps alone, on every NIC together.
    bitmap_bytes_sum: u64,
    /// Over every sample: the running connections it read.
    connections: u64,
    /// Every flow before this one has released its layer (or never had one): where a sample
    /// starts reading.
    first_running: usize,
    /// Per flow: the most bytes its connection ever held (exact, not sampled), once its layer
    /// has gone.
    flow_peak_bytes: Vec<u32>,
}

impl OrderingMemory {
    /// The sampler for `cfg`, which runs an ordering layer.
    pub(super) fn new(cfg: &SimConfig) -> Self {
        OrderingMemory {
            schedule: Schedule::of_arrivals(cfg, cfg.ordering.sample_interval),
            nic_bytes: vec![0; cfg.topology.hosts().len()],
            samples: 0,
            nic_bytes_sum: 0,
            nic_bytes_peak: 0,
            bitmap_bytes_sum: 0,
            connections: 0,
            first_running: 0,
            flow_peak_bytes: vec![0; cfg.flows.len()],
        }
    }

    /// Reads the running connections among the first `started` flows (`layers`, each flow's
    /// ordering layer while it runs; `cfg`, where their destinations are).
    fn take(&mut self, cfg: &SimConfig, layers: &[Option<Box<OrderingLayer>>], started: usize) {
        let running = |l: &Option<Box<OrderingLayer>>| l.as_ref().is_some_and(|l| !l.is_released());
        while self.first_running < started && !running(&layers[self.first_running]) {
            self.first_running += 1;
        }
        self.nic_bytes.fill(0);
        for (layer, spec) in layers[self.first_running..started]
            .iter()
            .zip(&cfg.flows[self.first_running..started])
        {
            if let Some(layer) = layer.as_deref().filter(|l| !l.is_released()) {
                self.nic_bytes[spec.dst.index()] += u64::from(layer.footprint_bytes());
                self.bitmap_bytes_sum += u64::from(layer.bitmap_bytes());
                self.connections += 1;
            }
        }
        self.samples += 1;
        self.nic_bytes_sum += self.nic_bytes.iter().sum::<u64>();
        let peak = self.nic_bytes.iter().copied().max().unwrap_or(0);
        self.nic_bytes_peak = self.nic_bytes_peak.max(peak);
    }

    /// Keeps flow `f`'s peak before its layer goes.
    pub(super) fn flow_ended(&mut self, f: usize, layer: &OrderingLayer) {
        self.flow_peak_bytes[f] = layer.stats().peak_bytes;
    }

    /// Flow `f`'s peak ordering bytes (0 if it never started).
    pub(super) fn flow_peak_bytes(&self, f: usize) -> u32 {
        self.flow_peak_bytes[f]
    }

    /// The means and the peak over every sample taken.
    pub(super) fn summary(&self) -> SampledMemory {
        let nic_samples = self.samples * self.nic_bytes.len() as u64;
        SampledMemory {
            samples: self.samples,
            avg_nic_bytes: (nic_samples > 0)
                .then(|| self.nic_bytes_sum as f64 / nic_samples as f64),
            peak_nic_bytes: (self.samples > 0).then_some(self.nic_bytes_peak),
            avg_nic_bitmap_bytes: (nic_samples > 0)
                .then(|| self.bitmap_bytes_sum as f64 / nic_samples as f64),
            avg_connection_bytes: (self.connections > 0)
                .then(|| self.nic_bytes_sum as f64 / self.connections as f64),
        }
    }
}

impl<T: Trace> Simulation<'_, T> {
    /// [`Event::Sample`]: samples every NIC's ordering memory and schedules the next sample.
    /// Out of line: the event loop keeps only a call.
    #[cold]
    #[inline(never)]
    pub(super) fn sample(&mut self) {
        let Some(memory) = self.memory.as_mut() else {
            return;
        };
        memory.take(self.cfg, &self.layers, self.next_flow);
        if let Some(next) = memory.schedule.after(self.now) {
            self.queue.schedule(next, Event::Sample);
        }
    }

    /// Drops flow `f`'s ordering layer (its flow has ended), keeping its peak.
    pub(super) fn drop_layer(&mut self, f: FlowId) {
        if let Some(slot) = self.layers.get_mut(f.index()) {
            if let (Some(memory), Some(layer)) = (self.memory.as_mut(), slot.as_deref()) {
                memory.flow_ended(f.index(), layer);
            }
            *slot = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_fall_on_multiples_of_the_interval_inside_the_window() {
        let us = |n| Time::ZERO + Duration::from_us(n);
        // (from, until, interval, the samples)
        let cases: [(u64, u64, u64, &[u64]); 6] = [
            (0, 35, 10, &[10, 20, 30]),
            (10, 35, 10, &[10, 20, 30]),
            (11, 40, 10, &[20, 30, 40]),
            (0, 9, 10, &[]),
            (25, 25, 5, &[25]),
            (26, 29, 5, &[]),
        ];
        for (from, until, interval, want) in cases {
            let s = Schedule {
                interval: Duration::from_us(interval),
                from: us(from),
                until: us(until),
            };
            let got: Vec<Time> = std::iter::successors(s.first(), |&t| s.after(t)).collect();
            let want: Vec<Time> = want.iter().map(|&t| us(t)).collect();
            assert_eq!(got, want, "{from}..={until} every {interval}");
        }
    }
}
