//! The choice of flow-size distribution.

use rand::Rng;

use super::Cdf;

/// A flow-size distribution.
///
/// Every sampled size is at least one byte: a zero-byte message has no packet to carry it, so
/// `Fixed(0)` or `Uniform { lo: 0, .. }` draw 1 instead of 0 (and [`SizeDist::mean`] for those
/// two degenerate cases is the mean as written, slightly below the sampled one).
#[derive(Clone, Debug, PartialEq)]
pub enum SizeDist {
    /// An empirical CDF (one of `data/cdf/`, or the IRN default).
    Cdf(Cdf),
    /// Uniform over the whole bytes `lo..=hi` (IRN §4.4 uses 500 KB–5 MB). If `lo > hi` the
    /// bounds are swapped rather than panicking mid-run.
    Uniform { lo: u64, hi: u64 },
    /// Every flow has this size (handy for hand-checkable tests and load calibration).
    Fixed(u64),
}

impl SizeDist {
    /// Draw one flow size in bytes (at least 1).
    pub fn sample<R: Rng>(&self, rng: &mut R) -> u64 {
        match self {
            SizeDist::Cdf(cdf) => cdf.sample(rng),
            &SizeDist::Uniform { lo, hi } => rng.random_range(lo.min(hi)..=lo.max(hi)).max(1),
            &SizeDist::Fixed(size) => size.max(1),
        }
    }

    /// The mean flow size in bytes, which sets the Poisson arrival rate for a target load.
    pub fn mean(&self) -> f64 {
        match self {
            SizeDist::Cdf(cdf) => cdf.mean(),
            &SizeDist::Uniform { lo, hi } => (lo as f64 + hi as f64) / 2.0,
            &SizeDist::Fixed(size) => size.max(1) as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Purpose};

    #[test]
    fn uniform_and_fixed_sizes_stay_in_range_and_match_their_means() {
        let mut rng = stream(1, Purpose::Sizes, 0);
        let uni = SizeDist::Uniform {
            lo: 500_000,
            hi: 5_000_000,
        };
        let n = 100_000;
        let mut sum = 0u128;
        for _ in 0..n {
            let s = uni.sample(&mut rng);
            assert!((500_000..=5_000_000).contains(&s));
            sum += u128::from(s);
        }
        let mean = sum as f64 / f64::from(n);
        assert!((mean / uni.mean() - 1.0).abs() < 0.01, "{mean}");

        assert_eq!(SizeDist::Fixed(1234).sample(&mut rng), 1234);
        assert_eq!(SizeDist::Fixed(0).sample(&mut rng), 1);
        let swapped = SizeDist::Uniform { lo: 10, hi: 5 };
        assert!((5..=10).contains(&swapped.sample(&mut rng)));
    }
}
