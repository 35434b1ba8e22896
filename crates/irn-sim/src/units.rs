//! Byte quantities as written in scenario files: `"240KB"`, `"1.5MB"`, `"64KiB"`, `"1086B"`.
//!
//! Decimal prefixes are powers of 1000 as in the IRN paper (its 240 KB buffer is 240 000 B);
//! binary prefixes (KiB, MiB, GiB) are powers of 1024. A bare integer is bytes.

use core::fmt;
use core::str::FromStr;

/// A number of bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bytes(pub u64);

/// Why a byte quantity was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not a byte size: {why} (write e.g. \"240KB\", \"64KiB\", \"1500B\")")]
pub struct ParseBytesError {
    value: String,
    why: &'static str,
}

impl FromStr for Bytes {
    type Err = ParseBytesError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |why| ParseBytesError {
            value: s.to_string(),
            why,
        };
        let t = s.trim();
        if t.starts_with('-') {
            return Err(err("negative"));
        }
        let end = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(t.len());
        let (num, unit) = t.split_at(end);
        let scale: u64 = match unit.trim() {
            "" | "B" => 1,
            "KB" | "kB" => 1_000,
            "MB" => 1_000_000,
            "GB" => 1_000_000_000,
            "KiB" => 1 << 10,
            "MiB" => 1 << 20,
            "GiB" => 1 << 30,
            _ => return Err(err("unknown unit; use B, KB, MB, GB, KiB, MiB or GiB")),
        };
        let (int, frac) = num.split_once('.').unwrap_or((num, ""));
        if int.is_empty() && frac.is_empty() {
            return Err(err("no number"));
        }
        let digits: u128 = format!("{int}{frac}")
            .parse()
            .map_err(|_| err("not a number"))?;
        let div = 10u128
            .checked_pow(frac.len() as u32)
            .ok_or_else(|| err("too many decimals"))?;
        let scaled = digits
            .checked_mul(u128::from(scale))
            .ok_or_else(|| err("too large"))?;
        if scaled % div != 0 {
            return Err(err("not a whole number of bytes"));
        }
        u64::try_from(scaled / div)
            .map(Bytes)
            .map_err(|_| err("too large"))
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        for (unit, scale) in [("GB", 1_000_000_000), ("MB", 1_000_000), ("KB", 1_000)] {
            if b != 0 && b.is_multiple_of(scale) {
                return write!(f, "{}{unit}", b / scale);
            }
        }
        write!(f, "{b}B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sizes() {
        let cases: &[(&str, u64)] = &[
            ("240KB", 240_000),
            ("240 KB", 240_000),
            ("1.5MB", 1_500_000),
            ("64KiB", 65_536),
            ("1086B", 1086),
            ("1086", 1086),
            ("150MB", 150_000_000),
            ("2GiB", 1 << 31),
            ("0B", 0),
        ];
        for &(text, bytes) in cases {
            assert_eq!(text.parse::<Bytes>(), Ok(Bytes(bytes)), "{text}");
        }
        for text in ["", "KB", "1.5B", "12 parsecs", "-1KB", "1e3"] {
            let err = text.parse::<Bytes>().unwrap_err().to_string();
            assert!(err.contains("240KB"), "{text}: {err}");
        }
        let err = "-1KB".parse::<Bytes>().unwrap_err().to_string();
        assert!(err.contains("`-1KB` is not a byte size: negative"), "{err}");
        for b in [Bytes(240_000), Bytes(1086), Bytes(0), Bytes(3_000_000)] {
            assert_eq!(b.to_string().parse::<Bytes>(), Ok(b));
        }
    }
}
