//! The event queue under the hold model: a steady population of pending events, each pop
//! followed by one schedule a short random time ahead (a serialization time or a link delay),
//! the pattern a packet network produces. Compared with a binary heap on the same sequence.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use irn_core::{Duration, Time};
use irn_sim::engine::{Event, EventQueue};
use irn_sim::ids::PortId;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Delays a 40 Gb/s fat-tree schedules: 64 B and 1086 B serializations and 2 us link arrivals.
fn delays(n: usize) -> Vec<u64> {
    let mut rng = SmallRng::seed_from_u64(1);
    (0..n)
        .map(|_| match rng.random_range(0..3) {
            0 => 12_800,
            1 => 217_200,
            _ => 2_000_000 + 217_200,
        })
        .collect()
}

const OPS: usize = 1 << 16;

fn hold(c: &mut Criterion) {
    let mut group = c.benchmark_group("event_queue_hold");
    group.throughput(Throughput::Elements(OPS as u64));
    for pending in [1_000usize, 10_000] {
        let d = delays(OPS + pending);
        group.bench_with_input(
            BenchmarkId::new("calendar", pending),
            &pending,
            |b, &pending| {
                b.iter_batched_ref(
                    || {
                        let mut q = EventQueue::new(Duration::from_ps(217_200 / 256)); // sized as the simulator does at 40 Gb/s
                        for (i, &x) in d[..pending].iter().enumerate() {
                            q.schedule(Time::from_ps(x), Event::Arrive(PortId(i as u32)));
                        }
                        q
                    },
                    |q| {
                        for &x in &d[pending..] {
                            let (t, e) = q.pop().unwrap();
                            q.schedule(t + Duration::from_ps(x), e);
                        }
                    },
                    criterion::BatchSize::LargeInput,
                )
            },
        );
        group.bench_with_input(
            BenchmarkId::new("binary_heap", pending),
            &pending,
            |b, &pending| {
                b.iter_batched_ref(
                    || {
                        let mut q = BinaryHeap::new();
                        for (i, &x) in d[..pending].iter().enumerate() {
                            q.push(Reverse((x, i as u64, i as u32)));
                        }
                        (q, pending as u64)
                    },
                    |(q, seq)| {
                        for &x in &d[pending..] {
                            let Reverse((t, _, e)) = q.pop().unwrap();
                            *seq += 1;
                            q.push(Reverse((t + x, *seq, e)));
                        }
                    },
                    criterion::BatchSize::LargeInput,
                )
            },
        );
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(std::time::Duration::from_secs(2)).warm_up_time(std::time::Duration::from_millis(500));
    targets = hold
}
criterion_main!(benches);
