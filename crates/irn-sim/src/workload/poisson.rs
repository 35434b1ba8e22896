//! Poisson arrivals at every host: the IRN paper's default traffic (MODEL §4, IRN §4.1).

use irn_core::time::{Bandwidth, Duration, Time};
use rand::Rng;

use super::{FlowClass, FlowSpec, SizeDist};
use crate::ids::HostIdx;
use crate::rng::{stream, Purpose};

/// Poisson arrivals at every host (MODEL §4).
///
/// Each host starts flows as an independent Poisson process of rate
/// λ = `load` × `host_rate` / (8 × mean size), so that on average each host offers `load` of its
/// link; inter-arrival times are exponential (drawn with a portable logarithm), converted to whole
/// picoseconds by rounding so every start is an exact [`Time`]. Each flow goes to a host drawn uniformly among the other hosts,
/// with a size drawn from `sizes`. Only arrivals in `[0, duration)` are kept.
///
/// Each host uses three streams of its own: `stream(seed, Arrivals, host)`,
/// `stream(seed, Sizes, host)` and `stream(seed, Destinations, host)`, so that, for example,
/// changing the size distribution leaves every arrival time and destination where it was.
///
/// The result is sorted by `(start, src)`, and within one host in generation order: it depends
/// only on the arguments.
///
/// Returns no flows when there is nothing to generate: fewer than two hosts, a `load` that is not
/// a positive finite number, a zero duration, or a zero rate. Validating those belongs to the
/// scenario layer, which can name the offending key.
pub fn poisson(
    hosts: u32,
    host_rate: Bandwidth,
    load: f64,
    sizes: &SizeDist,
    duration: Duration,
    seed: u64,
) -> Vec<FlowSpec> {
    let Some(mean_gap_ps) = mean_gap_ps(hosts, host_rate, load, sizes, duration) else {
        return Vec::new();
    };
    let end = duration.as_ps();

    let expected = expected_flows(hosts, host_rate, load, sizes, duration);
    let mut flows = Vec::with_capacity((expected * 1.05).min(MAX_FLOWS) as usize + 16);
    for h in 0..hosts {
        let mut arrivals = stream(seed, Purpose::Arrivals, u64::from(h));
        let mut size_rng = stream(seed, Purpose::Sizes, u64::from(h));
        let mut dest_rng = stream(seed, Purpose::Destinations, u64::from(h));
        let mut t: u64 = 0;
        loop {
            let gap = exponential(&mut arrivals, mean_gap_ps);
            // `as` saturates, so an absurdly long gap simply ends this host's arrivals.
            t = t.saturating_add(gap.round() as u64);
            if t >= end {
                break;
            }
            // Uniform over the hosts other than `h`: draw among hosts-1 and skip over `h`.
            let d = dest_rng.random_range(0..hosts - 1);
            let dst = if d >= h { d + 1 } else { d };
            flows.push(FlowSpec {
                src: HostIdx(h),
                dst: HostIdx(dst),
                size_bytes: sizes.sample(&mut size_rng),
                start: Time::from_ps(t),
                class: FlowClass::Regular,
                verb: None,
            });
        }
    }
    // Stable: ties on (start, src) keep generation order.
    flows.sort_by_key(|f| (f.start, f.src));
    flows
}

/// An exponential draw with mean `mean` by inversion, `-mean · ln(1 − u)` for a uniform `u` in
/// [0, 1).
///
/// The logarithm is `libm`'s, a pure-Rust implementation built from IEEE-754 operations, which
/// are exactly specified: the platform's `ln` (and the `exp`/`ln` inside `rand_distr`'s
/// ziggurat, used before) may differ in the last bit from one C library or processor to
/// another, and one flipped bit moves an arrival, so the same seed would not give the same
/// result files on every machine.
pub(super) fn exponential(rng: &mut impl Rng, mean: f64) -> f64 {
    let u: f64 = rng.random();
    -mean * libm::log(1.0 - u)
}

/// The most flows, on average, a Poisson workload may start: ten million, a few gigabytes of
/// flow state and hours of simulation. More is almost surely a typo (`"10s"` for `"10ms"`), and
/// generating it would exhaust memory before the first event (see [`too_many_flows`]).
pub const MAX_FLOWS: f64 = 1e7;

/// How many flows [`poisson()`] starts on average with these arguments: hosts × duration ×
/// the arrival rate; zero when it starts none.
pub fn expected_flows(
    hosts: u32,
    host_rate: Bandwidth,
    load: f64,
    sizes: &SizeDist,
    duration: Duration,
) -> f64 {
    mean_gap_ps(hosts, host_rate, load, sizes, duration)
        .map_or(0.0, |gap| f64::from(hosts) * duration.as_ps() as f64 / gap)
}

/// Why a Poisson workload with these arguments is refused, if it is: it would start more than
/// [`MAX_FLOWS`] flows on average. Checked before generating, by scenarios and `irn gen-flows`
/// alike, so the user hears which value to fix instead of waiting for memory to run out.
pub fn too_many_flows(
    hosts: u32,
    host_rate: Bandwidth,
    load: f64,
    sizes: &SizeDist,
    duration: Duration,
) -> Option<String> {
    let expected = expected_flows(hosts, host_rate, load, sizes, duration);
    let about = if expected >= 1e9 {
        format!("{:.1} billion", expected / 1e9)
    } else {
        format!("{:.1} million", expected / 1e6)
    };
    (expected > MAX_FLOWS).then(|| {
        format!(
            "would start about {about} flows ({hosts} hosts at {load} of {host_rate}, mean size \
             {:.0}B); at most {} million per run: shorten it or lower the load",
            sizes.mean(),
            MAX_FLOWS / 1e6
        )
    })
}

/// 1/λ in picoseconds: the time a host needs, at `load` of its rate, to send one flow of the
/// mean size; `None` when there is nothing to generate.
fn mean_gap_ps(
    hosts: u32,
    host_rate: Bandwidth,
    load: f64,
    sizes: &SizeDist,
    duration: Duration,
) -> Option<f64> {
    let mean_size = sizes.mean();
    let rate_bps = host_rate.as_bps() as f64;
    let usable = hosts >= 2
        && load.is_finite()
        && load > 0.0
        && duration > Duration::ZERO
        && rate_bps > 0.0
        && mean_size > 0.0;
    usable.then(|| 8.0 * mean_size * 1e12 / (load * rate_bps))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Cdf;

    fn rate() -> Bandwidth {
        Bandwidth::from_gbps(40)
    }

    #[test]
    fn exponential_gaps_have_the_mean_and_pinned_bits() {
        let mut rng = stream(1, Purpose::Arrivals, 0);
        let n = 200_000;
        let gaps: Vec<f64> = (0..n).map(|_| exponential(&mut rng, 1000.0)).collect();
        let mean = gaps.iter().sum::<f64>() / n as f64;
        assert!((mean / 1000.0 - 1.0).abs() < 0.01, "{mean}");
        // P(gap > mean) = 1/e.
        let above = gaps.iter().filter(|&&g| g > 1000.0).count() as f64 / n as f64;
        assert!((above - (-1.0f64).exp()).abs() < 0.005, "{above}");
        assert!(gaps.iter().all(|g| g.is_finite() && *g >= 0.0));
        // The same bits on every machine: a platform logarithm that differed would fail here.
        let mut rng = stream(1, Purpose::Arrivals, 0);
        let first: Vec<u64> = (0..3)
            .map(|_| exponential(&mut rng, 1000.0).to_bits())
            .collect();
        assert_eq!(
            first,
            [
                4645396205626567046,
                4661500552678213507,
                4632377054961963368
            ]
        );
    }

    #[test]
    fn same_seed_gives_identical_flows_and_other_seeds_differ() {
        let sizes = SizeDist::Cdf(Cdf::irn_default());
        let a = poisson(8, rate(), 0.7, &sizes, Duration::from_ms(2), 1);
        let b = poisson(8, rate(), 0.7, &sizes, Duration::from_ms(2), 1);
        let c = poisson(8, rate(), 0.7, &sizes, Duration::from_ms(2), 2);
        assert!(!a.is_empty());
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn offered_load_matches_the_target() {
        let (hosts, load, duration) = (16u32, 0.7, Duration::from_ms(50));
        let flows = poisson(hosts, rate(), load, &SizeDist::Fixed(100_000), duration, 7);
        let bytes: u64 = flows.iter().map(|f| f.size_bytes).sum();
        let capacity =
            f64::from(hosts) * rate().as_bps() as f64 * (duration.as_ps() as f64 / 1e12) / 8.0;
        let offered = bytes as f64 / capacity;
        assert!(
            (offered / load - 1.0).abs() < 0.03,
            "offered load {offered}"
        );
        // 16 hosts × 50 ms at 0.7 × 40 Gb/s / (8 × 100 kB) = 28 000 flows, about.
        let expected = expected_flows(hosts, rate(), load, &SizeDist::Fixed(100_000), duration);
        assert!((expected - 28_000.0).abs() < 1e-6, "{expected}");
        assert!((flows.len() as f64 / expected - 1.0).abs() < 0.03);
        // Whatever `poisson` generates nothing for, it expects nothing of.
        let sizes = SizeDist::Fixed(100_000);
        assert_eq!(expected_flows(1, rate(), load, &sizes, duration), 0.0);
        assert_eq!(
            expected_flows(hosts, rate(), f64::NAN, &sizes, duration),
            0.0
        );
        assert_eq!(
            expected_flows(hosts, rate(), load, &sizes, Duration::ZERO),
            0.0
        );
    }

    #[test]
    fn flows_are_well_formed_sorted_and_destinations_uniform() {
        let hosts = 8u32;
        let duration = Duration::from_ms(20);
        let flows = poisson(hosts, rate(), 0.5, &SizeDist::Fixed(10_000), duration, 3);
        let mut per_dst = vec![0u64; hosts as usize];
        for f in &flows {
            assert_ne!(f.src, f.dst);
            assert!(f.src.0 < hosts && f.dst.0 < hosts);
            assert!(f.start < Time::ZERO + duration);
            per_dst[f.dst.index()] += 1;
        }
        assert!(flows
            .windows(2)
            .all(|w| (w[0].start, w[0].src) <= (w[1].start, w[1].src)));
        let expected = flows.len() as f64 / f64::from(hosts);
        for (d, &n) in per_dst.iter().enumerate() {
            assert!(
                (n as f64 / expected - 1.0).abs() < 0.05,
                "host {d} got {n} flows, expected about {expected:.0}"
            );
        }
        // And each sender spreads over all the others, not just some.
        let mut pairs = std::collections::HashSet::new();
        for f in &flows {
            pairs.insert((f.src, f.dst));
        }
        assert_eq!(pairs.len(), (hosts * (hosts - 1)) as usize);
    }

    #[test]
    fn changing_sizes_keeps_arrival_times_and_destinations() {
        let d = Duration::from_ms(1);
        let a = poisson(4, rate(), 0.6, &SizeDist::Fixed(50_000), d, 9);
        let b = poisson(
            4,
            rate(),
            0.6,
            &SizeDist::Uniform {
                lo: 49_000,
                hi: 51_000,
            },
            d,
            9,
        );
        // Both have the same mean, so the same rate: identical arrivals, only sizes differ.
        let key = |f: &FlowSpec| (f.start, f.src, f.dst);
        assert_eq!(
            a.iter().map(key).collect::<Vec<_>>(),
            b.iter().map(key).collect::<Vec<_>>()
        );
        assert_ne!(a, b);
    }

    #[test]
    fn degenerate_inputs_give_no_flows() {
        let s = SizeDist::Fixed(1000);
        let d = Duration::from_ms(1);
        assert!(poisson(1, rate(), 0.7, &s, d, 0).is_empty());
        assert!(poisson(4, rate(), 0.0, &s, d, 0).is_empty());
        assert!(poisson(4, rate(), f64::NAN, &s, d, 0).is_empty());
        assert!(poisson(4, rate(), 0.7, &s, Duration::ZERO, 0).is_empty());
    }
}
