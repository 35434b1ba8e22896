//! Simulator speed on the shipped default scenario (IRN §4.1's default case: k = 6 fat-tree,
//! 54 hosts, 40 Gb/s, 70 % load, heavy-tailed sizes), one run at a time on one core.
//!
//! Criterion reports events per second (its throughput is the run's event count). Each
//! variant's simulated time per wall-clock second is printed after it, from the same timing.
//!
//! `cargo bench -p irn-sim --bench default_scenario`

use std::path::Path;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use irn_sim::scenario;

const DEFAULT: &str = include_str!("../../../scenarios/default.toml");
/// Arrivals simulated per run: short enough for repeated samples, long enough to load the
/// network (the shipped default runs 20 ms).
const WINDOW: &str = "workload.duration=3ms";

fn default_scenario(c: &mut Criterion) {
    let overrides = [WINDOW.to_string(), "run.warmup=0ms".to_string()];
    let sc = scenario::parse(
        DEFAULT,
        "scenarios/default.toml",
        Path::new("."),
        &overrides,
    )
    .expect("the default scenario is valid");
    let mut group = c.benchmark_group("default_scenario_3ms");
    group.sample_size(10);
    for run in &sc.runs {
        let started = Instant::now();
        let probe = irn_sim::run(&run.config, &mut |_| {});
        let wall = started.elapsed().as_secs_f64();
        let s = &probe.summary;
        eprintln!(
            "{}: {} events, {:.2} simulated ms in {:.2} s: {:.1} M events/s, {:.2} simulated ms per wall second",
            run.name,
            s.events,
            s.sim_time_us / 1e3,
            wall,
            s.events as f64 / wall / 1e6,
            s.sim_time_us / 1e3 / wall
        );
        group.throughput(Throughput::Elements(s.events));
        group.bench_function(&run.name, |b| {
            b.iter(|| irn_sim::run(&run.config, &mut |_| {}))
        });
    }
    group.finish();
}

criterion_group!(benches, default_scenario);
criterion_main!(benches);
