//! A check's two verdicts: its *direction* (`expect`: is the ratio on the paper's side?) and
//! its *magnitude* (`paper`: how close is it to the paper's number?), and whether the window
//! was long enough for the ratio to settle.
//!
//! The tolerances are here and nowhere else:
//! - **in range**: inside the paper's range, or within ±[`IN_RANGE`] (15 %) of a single value;
//! - **near**: outside that, but within a factor [`NEAR`] (1.5) of the range or value;
//! - **off ×k**: further; k is the factor by which it misses (ours over the paper's high end,
//!   or the low end over ours), so off ×2 is twice too large or half too small;
//! - **reversed ×k**: the paper's ratio is on one side of 1 and ours on the other, however
//!   close the number (0.94 against the paper's 1.4 is within a factor 1.5, but it is the
//!   paper's effect the other way round); counted as off. A ratio that misses a tolerance
//!   (`near`) or a bound (`at_most`, `at_least`) is graded by its factor as any other;
//! - **within its bound**: the paper gives an "up to" bound (its largest effect over its
//!   settings), and the ratio lies between 1 and it: consistent with the paper, not a match of
//!   its value, so it is counted with the qualitative checks; beyond the bound it is graded
//!   near or off ×k by how far;
//! - **qualitative**: the paper gives words, not a number (`claim`): only the direction is
//!   checked; **not stated**: no paper value nor words (a user's check with only `expect`).
//!
//! A ratio converges when doubling the window moves it by at most [`CONVERGED`] (5 %).

use serde::{Deserialize, Serialize};

/// Half-width of "in range" around a single value: ±15 %.
pub const IN_RANGE: f64 = 0.15;
/// "Near": within this factor of the paper's range (or of its single value).
pub const NEAR: f64 = 1.5;
/// Ratios that move less than this between a window and its double count as converged.
pub const CONVERGED: f64 = 0.05;

/// The paper's number for a check: one value or a range (low ≤ high, both > 0).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Paper {
    Value(f64),
    Range([f64; 2]),
    /// An "up to" bound: the paper's largest effect, which bounds a ratio between 1 and it.
    UpTo {
        up_to: f64,
    },
}

impl Paper {
    /// The band a ratio must fall in to be "in range".
    pub fn band(self) -> (f64, f64) {
        match self {
            Paper::Value(v) => (v * (1.0 - IN_RANGE), v * (1.0 + IN_RANGE)),
            Paper::Range([lo, hi]) => (lo, hi),
            Paper::UpTo { up_to } => (up_to.min(1.0), up_to.max(1.0)),
        }
    }

    /// The paper's number as the report quotes it: `6.1` or `2.8–3.7`.
    pub fn text(self) -> String {
        match self {
            Paper::Value(v) => format!("{v}"),
            Paper::Range([lo, hi]) => format!("{lo}–{hi}"),
            Paper::UpTo { up_to } => format!("up to {up_to}"),
        }
    }

    /// The factor by which `ours` misses the paper: 1 inside the range (or at the single
    /// value), otherwise ours over the high end or the low end over ours (∞ for 0 or ∞).
    pub fn factor(self, ours: f64) -> f64 {
        let (lo, hi) = match self {
            Paper::Value(v) => (v, v),
            Paper::Range(_) | Paper::UpTo { .. } => self.band(),
        };
        if ours > hi {
            ours / hi
        } else if ours < lo {
            lo / ours
        } else {
            1.0
        }
    }
}

/// How close a check's ratio is to the paper's number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Magnitude {
    InRange,
    Near,
    Off,
    /// The paper gives a number on one side of 1 and ours is on the other: the effect
    /// reversed, not near it in any sense that matters, whatever the factor.
    Reversed,
    /// Between 1 and the paper's "up to" bound: consistent with it, not a match of a value.
    WithinBound,
    Qualitative,
    NotStated,
    /// The ratio has no value (a metric missing from a run, `0 / x` where x is 0).
    NoValue,
}

impl Magnitude {
    /// The verdict of `ours` against `paper` (`claim`: the paper's words exist; `reversed`:
    /// ours is on the other side of 1, [`irn_sim::scenario::Expect::reversed`]), with the
    /// factor by which it misses (`None` when it has none: qualitative, no value, or ∞).
    pub fn of(
        ours: f64,
        paper: Option<Paper>,
        claim: bool,
        reversed: bool,
    ) -> (Magnitude, Option<f64>) {
        // A ratio with no value is that, whether or not the paper gives a number: counted as
        // off, never as a qualitative check.
        if ours.is_nan() {
            return (Magnitude::NoValue, None);
        }
        let Some(paper) = paper else {
            return (
                if claim {
                    Magnitude::Qualitative
                } else {
                    Magnitude::NotStated
                },
                None,
            );
        };
        let factor = paper.factor(ours);
        let in_range = match paper {
            Paper::Value(v) => (ours - v).abs() <= IN_RANGE * v,
            Paper::Range(_) | Paper::UpTo { .. } => factor == 1.0,
        };
        let magnitude = if reversed {
            Magnitude::Reversed
        } else if in_range && matches!(paper, Paper::UpTo { .. }) {
            Magnitude::WithinBound
        } else if in_range {
            Magnitude::InRange
        } else if factor <= NEAR {
            Magnitude::Near
        } else {
            Magnitude::Off
        };
        (magnitude, factor.is_finite().then_some(factor))
    }

    /// The verdict in words: `in range`, `near ×1.32`, `off ×4.7`, `qualitative`.
    pub fn text(self, factor: Option<f64>) -> String {
        let k = factor.map_or("∞".to_string(), |k| format!("{k:.2}"));
        match self {
            Magnitude::InRange => "in range".into(),
            Magnitude::Near => format!("near ×{k}"),
            Magnitude::Off => format!("off ×{k}"),
            Magnitude::Reversed => format!("reversed ×{k}"),
            Magnitude::WithinBound => "within its bound".into(),
            Magnitude::Qualitative => "qualitative".into(),
            Magnitude::NotStated => "not stated".into(),
            Magnitude::NoValue => "no value".into(),
        }
    }

    /// Whether the check states no value, so its direction (and a bound) is all there is to
    /// check.
    pub fn direction_only(self) -> bool {
        matches!(
            self,
            Magnitude::Qualitative | Magnitude::NotStated | Magnitude::WithinBound
        )
    }
}

/// How much a ratio moved when the window doubled, from `before` to `after` (a fraction:
/// +0.07 is 7 % up); 0 when it did not change at all (0 both times included), `NaN` when it
/// has no value.
pub fn movement(before: f64, after: f64) -> f64 {
    if before == after {
        0.0
    } else {
        after / before - 1.0
    }
}

/// Whether a ratio that moved by `movement` has settled.
pub fn settled(movement: f64) -> bool {
    movement.abs() <= CONVERGED
}

/// Counts of verdicts over a set of checks.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub checks: usize,
    /// Direction holds.
    pub holds: usize,
    pub in_range: usize,
    pub near: usize,
    /// Off, reversed, or no value where the paper gives one.
    pub off: usize,
    /// Qualitative, not stated, or within an "up to" bound: the direction (and the bound) is
    /// all there is.
    pub qualitative: usize,
    /// Converged: the window's double moved it by at most 5 %.
    pub converged: usize,
    /// Whose convergence was checked (not a quick run, not a one-off event).
    pub convergence_checked: usize,
}

impl Tally {
    pub fn add(&mut self, holds: bool, magnitude: Magnitude, converged: Option<bool>) {
        self.checks += 1;
        self.holds += usize::from(holds);
        match magnitude {
            Magnitude::InRange => self.in_range += 1,
            Magnitude::Near => self.near += 1,
            Magnitude::Off | Magnitude::Reversed | Magnitude::NoValue => self.off += 1,
            Magnitude::Qualitative | Magnitude::NotStated | Magnitude::WithinBound => {
                self.qualitative += 1
            }
        }
        self.convergence_checked += usize::from(converged.is_some());
        self.converged += usize::from(converged == Some(true));
    }

    /// One line: `direction holds 169 of 196; magnitude: 20 in range, 31 near, 60 off, 85
    /// qualitative; converged 40 of 196` (the last part only where convergence was checked).
    pub fn line(&self) -> String {
        let mut line = format!(
            "direction holds {} of {}; magnitude: {} in range, {} near, {} off, {} qualitative",
            self.holds, self.checks, self.in_range, self.near, self.off, self.qualitative
        );
        if self.convergence_checked > 0 {
            line += &format!(
                "; converged {} of {}",
                self.converged, self.convergence_checked
            );
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magnitude_classes_and_their_boundaries() {
        let range = Some(Paper::Range([2.8, 3.7]));
        let value = Some(Paper::Value(10.0));
        for (ours, paper, want, k) in [
            (3.0, range, Magnitude::InRange, Some(1.0)),
            (2.8, range, Magnitude::InRange, Some(1.0)),
            (3.7 * 1.45, range, Magnitude::Near, Some(1.45)),
            (2.8 / 1.4, range, Magnitude::Near, Some(1.4)),
            (1.28, range, Magnitude::Off, Some(2.8 / 1.28)),
            (14.6, range, Magnitude::Off, Some(14.6 / 3.7)),
            (11.4, value, Magnitude::InRange, Some(1.14)),
            (8.6, value, Magnitude::InRange, Some(10.0 / 8.6)),
            (8.4, value, Magnitude::Near, Some(10.0 / 8.4)),
            (15.0, value, Magnitude::Near, Some(1.5)),
            (15.1, value, Magnitude::Off, Some(1.51)),
            (0.0, value, Magnitude::Off, None),
            (f64::INFINITY, value, Magnitude::Off, None),
            (f64::NAN, value, Magnitude::NoValue, None),
        ] {
            let (m, f) = Magnitude::of(ours, paper, false, false);
            assert_eq!(m, want, "{ours} against {paper:?}");
            match (f, k) {
                (Some(f), Some(k)) => assert!((f - k).abs() < 1e-9, "{ours}: {f} vs {k}"),
                (f, k) => assert_eq!(f, k, "{ours}"),
            }
        }
        // A reversed ratio is reversed, however close its number: 0.94 against 1.4 would be
        // near.
        let reversed = |ours, paper| Magnitude::of(ours, paper, false, true);
        let (m, f) = reversed(0.94, Some(Paper::Value(1.4)));
        assert_eq!(
            (m, m.text(f)),
            (Magnitude::Reversed, "reversed ×1.49".into())
        );
        assert_eq!(reversed(f64::NAN, value).0, Magnitude::NoValue);
        assert_eq!(
            Magnitude::of(0.5, None, true, true).0,
            Magnitude::Qualitative
        );
        // An "up to" bound: under it, consistent (counted as qualitative); beyond it, graded.
        let bound = Paper::UpTo { up_to: 1.73 };
        let up_to = Some(bound);
        let (m, f) = Magnitude::of(1.5, up_to, false, false);
        assert_eq!(
            (m, m.text(f)),
            (Magnitude::WithinBound, "within its bound".into())
        );
        assert_eq!(Magnitude::of(2.16, up_to, false, false).0, Magnitude::Near);
        assert_eq!(
            Magnitude::of(0.9, up_to, false, true).0,
            Magnitude::Reversed
        );
        assert_eq!(bound.text(), "up to 1.73");
        let mut t = Tally::default();
        t.add(true, Magnitude::WithinBound, None);
        assert_eq!((t.in_range, t.qualitative), (0, 1));
        let mut t = Tally::default();
        t.add(false, Magnitude::Reversed, None);
        assert_eq!((t.near, t.off), (0, 1));
        assert_eq!(
            Magnitude::of(3.0, None, true, false).0,
            Magnitude::Qualitative
        );
        assert_eq!(
            Magnitude::of(3.0, None, false, false).0,
            Magnitude::NotStated
        );
        // No value is no value, with or without a paper number.
        assert_eq!(
            Magnitude::of(f64::NAN, None, true, false).0,
            Magnitude::NoValue
        );
        assert_eq!(Magnitude::Off.text(Some(2.1875)), "off ×2.19");
        assert_eq!(Magnitude::Off.text(None), "off ×∞");
        assert_eq!(Paper::Range([2.8, 3.7]).text(), "2.8–3.7");
    }

    #[test]
    fn movement_of_equal_ratios_is_none_even_at_zero() {
        assert_eq!(movement(0.0, 0.0), 0.0);
        assert!(settled(movement(2.0, 2.09)));
        assert!(!settled(movement(2.0, 2.2)));
        assert!(!settled(movement(f64::NAN, 1.0)));
        assert!((movement(2.0, 2.2) - 0.1).abs() < 1e-12);
    }
}
