//! Simulated time, durations and link rates as integer newtypes.
//!
//! Everything is integer picoseconds and bits per second: one byte at 400 Gb/s is 20 ps, and a
//! `u64` of picoseconds covers more than 200 days, so no run ever needs floating-point time.
//! Keeping time integral is what makes runs bit-for-bit reproducible.
//!
//! Human-readable forms (`"2us"`, `"40Gbps"`) are parsed here with [`str::parse`], at the
//! configuration boundary; the hot path only ever adds and compares integers.

use core::fmt;
use core::ops::{Add, AddAssign, Mul, Sub};
use core::str::FromStr;

/// Picoseconds per unit, for the suffixes accepted by [`Duration::from_str`].
const PS_PER_NS: u64 = 1_000;
const PS_PER_US: u64 = 1_000_000;
const PS_PER_MS: u64 = 1_000_000_000;
const PS_PER_S: u64 = 1_000_000_000_000;

/// An instant of simulated time, in picoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(u64);

impl Time {
    /// The start of every run.
    pub const ZERO: Time = Time(0);
    /// A time later than any run reaches; used as "never".
    pub const MAX: Time = Time(u64::MAX);

    pub const fn from_ps(ps: u64) -> Self {
        Time(ps)
    }

    pub const fn as_ps(self) -> u64 {
        self.0
    }

    /// Nanoseconds since the start, as a float for reporting only.
    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 / PS_PER_NS as f64
    }

    /// Time elapsed since `earlier`, or zero if `earlier` is in the future.
    pub fn saturating_since(self, earlier: Time) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    fn add(self, d: Duration) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}

impl AddAssign<Duration> for Time {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub for Time {
    type Output = Duration;
    /// The span between two instants. Panics in debug builds if `rhs` is later.
    fn sub(self, rhs: Time) -> Duration {
        Duration(self.0 - rhs.0)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t={}", Duration(self.0))
    }
}

/// A span of simulated time, in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(u64);

impl Duration {
    pub const ZERO: Duration = Duration(0);

    pub const fn from_ps(ps: u64) -> Self {
        Duration(ps)
    }
    pub const fn from_ns(ns: u64) -> Self {
        Duration(ns * PS_PER_NS)
    }
    pub const fn from_us(us: u64) -> Self {
        Duration(us * PS_PER_US)
    }
    pub const fn from_ms(ms: u64) -> Self {
        Duration(ms * PS_PER_MS)
    }
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// Microseconds, as a float for reporting only.
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / PS_PER_US as f64
    }
    /// Nanoseconds, as a float for reporting only.
    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 / PS_PER_NS as f64
    }
}

impl Add for Duration {
    type Output = Duration;
    fn add(self, rhs: Duration) -> Duration {
        Duration(self.0.saturating_add(rhs.0))
    }
}

impl Sub for Duration {
    type Output = Duration;
    fn sub(self, rhs: Duration) -> Duration {
        Duration(self.0.saturating_sub(rhs.0))
    }
}

impl Mul<u64> for Duration {
    type Output = Duration;
    fn mul(self, k: u64) -> Duration {
        Duration(self.0.saturating_mul(k))
    }
}

impl fmt::Display for Duration {
    /// Prints in the largest unit that keeps the value exact, e.g. `2us`, `217200ps`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        for (unit, scale) in [
            ("s", PS_PER_S),
            ("ms", PS_PER_MS),
            ("us", PS_PER_US),
            ("ns", PS_PER_NS),
        ] {
            if ps != 0 && ps.is_multiple_of(scale) {
                return write!(f, "{}{unit}", ps / scale);
            }
        }
        write!(f, "{ps}ps")
    }
}

/// A link or sending rate, in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bandwidth(u64);

impl Bandwidth {
    pub const fn from_bps(bps: u64) -> Self {
        Bandwidth(bps)
    }
    pub const fn from_gbps(gbps: u64) -> Self {
        Bandwidth(gbps * 1_000_000_000)
    }
    pub const fn as_bps(self) -> u64 {
        self.0
    }

    /// Time to put `bytes` on the wire at this rate, rounded up to the next picosecond so a
    /// transmission never finishes early.
    ///
    /// # Panics
    /// If the rate is zero; [`Bandwidth::from_str`] rejects zero rates.
    pub fn serialization(self, bytes: u64) -> Duration {
        let bits_ps = u128::from(bytes) * 8 * u128::from(PS_PER_S);
        let rate = u128::from(self.0);
        Duration(bits_ps.div_ceil(rate) as u64)
    }

    /// Bytes in flight on a path of this rate with the given round-trip time (the BDP).
    pub fn bdp_bytes(self, rtt: Duration) -> u64 {
        (u128::from(self.0) * u128::from(rtt.0) / (8 * u128::from(PS_PER_S))) as u64
    }
}

impl fmt::Display for Bandwidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bps = self.0;
        for (unit, scale) in [
            ("Tbps", 1_000_000_000_000),
            ("Gbps", 1_000_000_000),
            ("Mbps", 1_000_000),
            ("Kbps", 1_000),
        ] {
            if bps != 0 && bps.is_multiple_of(scale) {
                return write!(f, "{}{unit}", bps / scale);
            }
        }
        write!(f, "{bps}bps")
    }
}

/// Why a duration or rate string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseUnitError {
    #[error("empty value")]
    Empty,
    #[error("`{0}` has no number; write e.g. {1}")]
    NoNumber(String, &'static str),
    #[error("`{value}` has no unit; allowed units: {allowed}")]
    NoUnit {
        value: String,
        allowed: &'static str,
    },
    #[error("`{value}` has unknown unit `{unit}`; allowed units: {allowed}")]
    UnknownUnit {
        value: String,
        unit: String,
        allowed: &'static str,
    },
    #[error("`{0}` is out of range")]
    OutOfRange(String),
    #[error("`{0}` is not a whole number of {1}, the finest step")]
    NotWhole(String, &'static str),
    #[error("`{0}` must be greater than zero")]
    Zero(String),
    #[error("`{0}` is negative; write e.g. {1}")]
    Negative(String, &'static str),
}

impl ParseUnitError {
    /// `unit`, the text after the number in `value`, is none of `allowed`.
    fn unit(value: &str, unit: String, allowed: &'static str) -> Self {
        let value = value.trim().to_string();
        if unit.is_empty() {
            ParseUnitError::NoUnit { value, allowed }
        } else {
            ParseUnitError::UnknownUnit {
                value,
                unit,
                allowed,
            }
        }
    }
}

/// Splits `"2.5 us"` into `(2.5 as a decimal, "us")`, keeping the number exact: the integer and
/// fractional digits are returned separately so `"0.1us"` does not pass through a float.
fn split_number(s: &str, example: &'static str) -> Result<(u128, u32, String), ParseUnitError> {
    let s = s.trim();
    if s.is_empty() {
        return Err(ParseUnitError::Empty);
    }
    if s.starts_with('-') {
        return Err(ParseUnitError::Negative(s.to_string(), example));
    }
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if (int.is_empty() && frac.is_empty()) || frac.contains('.') {
        return Err(ParseUnitError::NoNumber(s.to_string(), example));
    }
    let digits = format!("{int}{frac}");
    let mantissa: u128 = digits
        .parse()
        .map_err(|_| ParseUnitError::OutOfRange(s.to_string()))?;
    let frac_digits =
        u32::try_from(frac.len()).map_err(|_| ParseUnitError::OutOfRange(s.to_string()))?;
    Ok((mantissa, frac_digits, unit.trim().to_string()))
}

/// `mantissa / 10^frac_digits * scale`, exactly, or an error if it is not an integer in range.
fn scale_exact(
    original: &str,
    mantissa: u128,
    frac_digits: u32,
    (scale, step): (u64, &'static str),
) -> Result<u64, ParseUnitError> {
    let out_of_range = || ParseUnitError::OutOfRange(original.trim().to_string());
    let not_whole = || ParseUnitError::NotWhole(original.trim().to_string(), step);
    let div = 10u128.checked_pow(frac_digits).ok_or_else(not_whole)?;
    let scaled = mantissa
        .checked_mul(u128::from(scale))
        .ok_or_else(out_of_range)?;
    if scaled % div != 0 {
        return Err(not_whole());
    }
    u64::try_from(scaled / div).map_err(|_| out_of_range())
}

impl FromStr for Duration {
    type Err = ParseUnitError;
    /// Accepts `ps`, `ns`, `us` (or `µs`), `ms` and `s`, with an optional space and decimals
    /// that resolve to whole picoseconds: `"2us"`, `"1.5 ms"`, `"320µs"`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        const ALLOWED: &str = "ps, ns, us (µs), ms, s";
        let (mantissa, frac, unit) = split_number(s, "\"2us\"")?;
        let scale = match unit.as_str() {
            "ps" => 1,
            "ns" => PS_PER_NS,
            // The micro sign (U+00B5) and the Greek mu (U+03BC) look alike.
            "us" | "µs" | "\u{3bc}s" => PS_PER_US,
            "ms" => PS_PER_MS,
            "s" => PS_PER_S,
            _ => return Err(ParseUnitError::unit(s, unit, ALLOWED)),
        };
        scale_exact(s, mantissa, frac, (scale, "picoseconds")).map(Duration)
    }
}

impl FromStr for Bandwidth {
    type Err = ParseUnitError;
    /// Accepts `bps`, `Kbps`, `Mbps`, `Gbps`, `Tbps` (also written `Gb/s`), decimal prefixes as
    /// network rates are quoted: `"40Gbps"`, `"100 Gb/s"`, `"2.5Gbps"`. Zero is rejected.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        const ALLOWED: &str = "bps, Kbps, Mbps, Gbps, Tbps (or Gb/s etc.)";
        let (mantissa, frac, unit) = split_number(s, "\"40Gbps\"")?;
        let scale = match unit.replace("b/s", "bps").as_str() {
            "bps" => 1,
            "Kbps" | "kbps" => 1_000,
            "Mbps" => 1_000_000,
            "Gbps" => 1_000_000_000,
            "Tbps" => 1_000_000_000_000,
            _ => return Err(ParseUnitError::unit(s, unit, ALLOWED)),
        };
        let bps = scale_exact(s, mantissa, frac, (scale, "bits per second"))?;
        if bps == 0 {
            return Err(ParseUnitError::Zero(s.trim().to_string()));
        }
        Ok(Bandwidth(bps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_is_exact_at_datacenter_rates() {
        // A full 1024 B payload with 62 B of RoCEv2 framing at 40 Gb/s.
        assert_eq!(
            Bandwidth::from_gbps(40).serialization(1086),
            Duration::from_ps(217_200)
        );
        // One byte at 400 Gb/s is 20 ps.
        assert_eq!(
            Bandwidth::from_gbps(400).serialization(1),
            Duration::from_ps(20)
        );
        // Rounded up, never down: 1 byte at 3 bit/s is 2.67 s.
        assert_eq!(
            Bandwidth::from_bps(3).serialization(1),
            Duration::from_ps(2_666_666_666_667)
        );
    }

    #[test]
    fn bdp_of_the_irn_default_case() {
        // IRN §4.1: 40 Gb/s over a 24 us round trip is 120 KB.
        assert_eq!(
            Bandwidth::from_gbps(40).bdp_bytes(Duration::from_us(24)),
            120_000
        );
    }

    #[test]
    fn parses_durations() {
        let cases: &[(&str, u64)] = &[
            ("2us", 2_000_000),
            ("2 us", 2_000_000),
            ("320µs", 320_000_000),
            ("1.5ms", 1_500_000_000),
            ("100ns", 100_000),
            ("0.5ns", 500),
            ("7ps", 7),
            ("1s", 1_000_000_000_000),
            ("0us", 0),
        ];
        for &(text, ps) in cases {
            assert_eq!(
                text.parse::<Duration>(),
                Ok(Duration::from_ps(ps)),
                "{text}"
            );
        }
    }

    #[test]
    fn rejects_bad_durations() {
        for text in [
            "",
            "us",
            "2",
            "2 parsecs",
            "0.1ps",
            "1.2.3us",
            "99999999999999999999s",
        ] {
            assert!(
                text.parse::<Duration>().is_err(),
                "{text} should be rejected"
            );
        }
        let err = "3 fortnights".parse::<Duration>().unwrap_err().to_string();
        assert!(err.contains("fortnights") && err.contains("us"), "{err}");
        let err = "2".parse::<Duration>().unwrap_err().to_string();
        assert_eq!(
            err,
            "`2` has no unit; allowed units: ps, ns, us (µs), ms, s"
        );
        let err = "40".parse::<Bandwidth>().unwrap_err().to_string();
        assert!(
            err.starts_with("`40` has no unit; allowed units: bps"),
            "{err}"
        );
        let err = "-1ms".parse::<Duration>().unwrap_err().to_string();
        assert!(err.contains("`-1ms` is negative"), "{err}");
        let err = "-40Gbps".parse::<Bandwidth>().unwrap_err().to_string();
        assert!(err.contains("`-40Gbps` is negative"), "{err}");
    }

    #[test]
    fn parses_bandwidths() {
        let cases: &[(&str, u64)] = &[
            ("40Gbps", 40_000_000_000),
            ("100 Gb/s", 100_000_000_000),
            ("2.5Gbps", 2_500_000_000),
            ("10Mbps", 10_000_000),
            ("1Tbps", 1_000_000_000_000),
            ("9600bps", 9600),
        ];
        for &(text, bps) in cases {
            assert_eq!(
                text.parse::<Bandwidth>(),
                Ok(Bandwidth::from_bps(bps)),
                "{text}"
            );
        }
        for text in ["0Gbps", "40", "40GB", "fast"] {
            assert!(
                text.parse::<Bandwidth>().is_err(),
                "{text} should be rejected"
            );
        }
    }

    #[test]
    fn display_round_trips() {
        for d in [
            Duration::from_us(2),
            Duration::from_ps(217_200),
            Duration::from_ms(15),
            Duration::ZERO,
        ] {
            assert_eq!(d.to_string().parse::<Duration>(), Ok(d));
        }
        for b in [Bandwidth::from_gbps(40), Bandwidth::from_bps(1234)] {
            assert_eq!(b.to_string().parse::<Bandwidth>(), Ok(b));
        }
    }

    #[test]
    fn time_arithmetic_saturates_instead_of_wrapping() {
        assert_eq!(Time::MAX + Duration::from_us(1), Time::MAX);
        assert_eq!(
            Time::from_ps(5).saturating_since(Time::from_ps(9)),
            Duration::ZERO
        );
        assert_eq!(Time::from_ps(9) - Time::from_ps(5), Duration::from_ps(4));
    }
}
