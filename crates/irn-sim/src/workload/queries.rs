//! Repeated incast queries (Eunomia §5.5): incasts that arrive as a Poisson process.
//!
//! A query is a partition–aggregate request: one host asks `senders` others for `size_bytes`
//! each, they all answer at once, and the query is done when the last answer has arrived (its
//! query completion time, QCT). Unlike [`incast`](mod@super::incast), which is one event, queries
//! keep arriving for the whole run, each with its own receiver and senders, so a run measures
//! a distribution of QCTs instead of a single RCT.

use irn_core::time::{Bandwidth, Duration, Time};
use rand::Rng;

use super::poisson::{exponential, MAX_FLOWS};
use super::{FlowClass, FlowSpec, WorkloadError};
use crate::ids::HostIdx;
use crate::rng::{stream, Purpose};

/// What a queries workload offers: `senders` hosts answer each query with `size_bytes` each,
/// and queries arrive during `duration` at a rate that makes their traffic `load` of all the
/// hosts' line rate together.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueryLoad {
    /// The query traffic as a fraction of every host's line rate summed, in (0, 1].
    pub load: f64,
    /// How many hosts answer each query (each a flow to the query's receiver).
    pub senders: u32,
    /// Bytes each sender answers with.
    pub size_bytes: u64,
    /// Queries arrive in `[0, duration)`.
    pub duration: Duration,
}

impl QueryLoad {
    /// Queries per second: `load × hosts × host_rate / (senders × size_bytes × 8)`, so that the
    /// queries' bytes offer `load` of the `hosts` links' aggregate rate (the senders' uplinks
    /// carry that load spread over every host on average; each query's receiver takes
    /// `senders` flows at once). `None` when nothing can arrive (a zero or non-finite rate).
    pub fn rate_per_s(&self, hosts: u32, host_rate: Bandwidth) -> Option<f64> {
        let bits = f64::from(self.senders) * self.size_bytes as f64 * 8.0;
        let rate = self.load * f64::from(hosts) * host_rate.as_bps() as f64 / bits;
        (rate.is_finite() && rate > 0.0).then_some(rate)
    }

    /// How many queries arrive on average: the rate times the duration.
    pub fn expected_queries(&self, hosts: u32, host_rate: Bandwidth) -> f64 {
        self.rate_per_s(hosts, host_rate)
            .map_or(0.0, |r| r * self.duration.as_ps() as f64 / 1e12)
    }

    /// Why this workload is refused, if it is: it would start more than [`MAX_FLOWS`] flows on
    /// average, the same cap as Poisson arrivals' (a unit slip in the duration, usually).
    pub fn too_many_flows(&self, hosts: u32, host_rate: Bandwidth) -> Option<String> {
        let queries = self.expected_queries(hosts, host_rate);
        let flows = queries * f64::from(self.senders);
        (flows > MAX_FLOWS).then(|| {
            format!(
                "would start about {:.1} million flows ({queries:.0} queries of {} senders at \
                 {} of {hosts} hosts' {host_rate}); at most {} million per run: shorten it or \
                 lower the load",
                flows / 1e6,
                self.senders,
                self.load,
                MAX_FLOWS / 1e6
            )
        })
    }
}

/// Queries arriving as a Poisson process (Eunomia §5.5).
///
/// Arrivals are exponential gaps at [`QueryLoad::rate_per_s`] (rounded to whole picoseconds,
/// as [`poisson()`](super::poisson())'s), drawn from `stream(seed, Queries, 0)`; only those in
/// `[0, duration)` are kept. Each query picks one receiver and `senders` distinct other hosts,
/// uniformly, from `stream(seed, Queries, 1)`, and every sender starts a flow of `size_bytes`
/// to the receiver at the query's arrival, of class [`FlowClass::Query`] with the query's
/// number (0, 1, … in arrival order). The flows come sorted by start, a query's in increasing
/// sender order.
///
/// Errors if `senders` is 0 or not less than `hosts` (the receiver cannot answer itself),
/// `size_bytes` is 0, or `load` is not in (0, 1].
pub fn queries(
    hosts: u32,
    host_rate: Bandwidth,
    q: &QueryLoad,
    seed: u64,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    if q.senders == 0 || q.senders >= hosts {
        return Err(WorkloadError::Queries(format!(
            "{} senders per query; with {hosts} hosts a query has between 1 and {} (every host \
             but its receiver)",
            q.senders,
            hosts.saturating_sub(1)
        )));
    }
    if q.size_bytes == 0 {
        return Err(WorkloadError::Queries(
            "each sender needs at least one byte to send".into(),
        ));
    }
    if !(q.load > 0.0 && q.load <= 1.0) {
        return Err(WorkloadError::Queries(format!(
            "load {} is not a fraction of line rate in (0, 1]",
            q.load
        )));
    }
    let Some(rate) = q.rate_per_s(hosts, host_rate) else {
        return Ok(Vec::new());
    };
    let mean_gap_ps = 1e12 / rate;
    let end = q.duration.as_ps();
    let m = q.senders as usize;
    let expected = q.expected_queries(hosts, host_rate) * m as f64;
    let mut flows = Vec::with_capacity((expected * 1.05).min(MAX_FLOWS) as usize + m);
    let mut arrivals = stream(seed, Purpose::Queries, 0);
    let mut members = stream(seed, Purpose::Queries, 1);
    // One pool for every query: a partial Fisher–Yates shuffle gives a uniform choice whatever
    // order the pool is left in by the previous query, so no query allocates its own.
    let mut pool: Vec<u32> = (0..hosts).collect();
    let mut chosen: Vec<u32> = Vec::with_capacity(m);
    let mut t: u64 = 0;
    let mut id: u32 = 0;
    loop {
        // `as` saturates, so an absurdly long gap simply ends the arrivals.
        t = t.saturating_add(exponential(&mut arrivals, mean_gap_ps).round() as u64);
        if t >= end {
            break;
        }
        // The first entry is the receiver, the next `senders` its senders.
        for i in 0..=m {
            let j = members.random_range(i..pool.len());
            pool.swap(i, j);
        }
        let receiver = HostIdx(pool[0]);
        chosen.clear();
        chosen.extend_from_slice(&pool[1..=m]);
        chosen.sort_unstable();
        flows.extend(chosen.iter().map(|&src| FlowSpec {
            src: HostIdx(src),
            dst: receiver,
            size_bytes: q.size_bytes,
            start: Time::from_ps(t),
            class: FlowClass::Query(id),
            verb: None,
        }));
        id = id.checked_add(1).ok_or_else(|| {
            WorkloadError::Queries("more than 2^32 queries: shorten the duration".into())
        })?;
    }
    Ok(flows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(load: f64, senders: u32, size_bytes: u64, duration: Duration) -> QueryLoad {
        QueryLoad {
            load,
            senders,
            size_bytes,
            duration,
        }
    }

    fn rate() -> Bandwidth {
        Bandwidth::from_gbps(40)
    }

    /// Each query: one receiver, distinct senders other than it, one start, sizes as asked,
    /// ids counting up in arrival order.
    #[test]
    fn every_query_is_an_incast_of_distinct_senders() {
        let q = load(0.3, 5, 40_000, Duration::from_ms(2));
        let flows = queries(16, rate(), &q, 4).unwrap();
        assert!(!flows.is_empty());
        assert_eq!(flows.len() % 5, 0);
        for (n, group) in flows.chunks(5).enumerate() {
            let id = FlowClass::Query(n as u32);
            let first = group[0];
            let mut srcs: Vec<u32> = group.iter().map(|f| f.src.0).collect();
            assert!(srcs.windows(2).all(|w| w[0] < w[1]), "{srcs:?}");
            srcs.dedup();
            assert_eq!(srcs.len(), 5);
            for f in group {
                assert_eq!((f.class, f.dst, f.start), (id, first.dst, first.start));
                assert_ne!(f.src, f.dst);
                assert!(f.src.0 < 16 && f.dst.0 < 16);
                assert_eq!(f.size_bytes, 40_000);
            }
        }
        assert!(flows.windows(2).all(|w| w[0].start <= w[1].start));
        assert!(flows.iter().all(|f| f.start < Time::ZERO + q.duration));
    }

    #[test]
    fn same_seed_same_queries_other_seeds_differ() {
        let q = load(0.5, 3, 10_000, Duration::from_ms(1));
        let a = queries(8, rate(), &q, 1).unwrap();
        assert_eq!(a, queries(8, rate(), &q, 1).unwrap());
        assert_ne!(a, queries(8, rate(), &q, 2).unwrap());
    }

    /// Over a long run the number of queries is the formula's rate × duration, and every host
    /// is a receiver about as often as any other.
    #[test]
    fn query_rate_follows_the_load_formula() {
        let (hosts, senders, size) = (32u32, 8u32, 40_000u64);
        let q = load(0.4, senders, size, Duration::from_ms(100));
        // 0.4 × 32 × 40 Gb/s / (8 × 40 kB × 8 bit) = 200 000 queries/s: 20 000 in 100 ms.
        let per_s = q.rate_per_s(hosts, rate()).unwrap();
        assert!((per_s - 200_000.0).abs() < 1e-6, "{per_s}");
        assert!((q.expected_queries(hosts, rate()) - 20_000.0).abs() < 1e-6);
        let flows = queries(hosts, rate(), &q, 9).unwrap();
        let count = flows.len() / senders as usize;
        // Poisson: sd = √20 000 ≈ 141, so 2 % is 2.8 sd.
        assert!(
            (count as f64 / 20_000.0 - 1.0).abs() < 0.02,
            "{count} queries"
        );
        let mut received = vec![0u32; hosts as usize];
        for group in flows.chunks(senders as usize) {
            received[group[0].dst.index()] += 1;
        }
        let each = count as f64 / f64::from(hosts);
        for (h, &n) in received.iter().enumerate() {
            assert!((f64::from(n) / each - 1.0).abs() < 0.15, "host {h}: {n}");
        }
    }

    #[test]
    fn impossible_queries_are_errors() {
        let d = Duration::from_ms(1);
        for (hosts, q) in [
            (8, load(0.5, 0, 1000, d)),
            (8, load(0.5, 8, 1000, d)),
            (8, load(0.5, 9, 1000, d)),
            (8, load(0.5, 3, 0, d)),
            (8, load(0.0, 3, 1000, d)),
            (8, load(1.5, 3, 1000, d)),
            (8, load(f64::NAN, 3, 1000, d)),
        ] {
            assert!(
                matches!(
                    queries(hosts, rate(), &q, 0),
                    Err(WorkloadError::Queries(_))
                ),
                "{hosts} {q:?}"
            );
        }
        assert!(queries(8, rate(), &load(0.5, 3, 1000, Duration::ZERO), 0)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn the_flow_cap_names_the_queries() {
        let q = load(1.0, 50, 40_000, Duration::from_ms(10_000));
        let why = q.too_many_flows(128, rate()).unwrap();
        assert!(why.contains("million flows"), "{why}");
        assert!(load(1.0, 50, 40_000, Duration::from_ms(10))
            .too_many_flows(128, rate())
            .is_none());
    }
}
