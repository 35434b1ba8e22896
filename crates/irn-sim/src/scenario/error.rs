//! Scenario errors, and the helpers every section uses to report one: each names the file,
//! the key, the value and what is allowed.

use crate::topology::{LINK_RATES, LINK_RATES_WHY};
use irn_core::{Bandwidth, Duration};

/// A scenario that could not be loaded. Each message is whole, cause included, so no variant
/// also reports it as a `source()` (an error chain would print it twice).
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("{file}: cannot read: {error}")]
    Read { file: String, error: std::io::Error },
    #[error("{file}: {message}")]
    Syntax { file: String, message: String },
    /// A key's value is not allowed; a `value` of `"(set)"` says only that the key is set (it
    /// does not apply where it is), an empty one says nothing of a value (the error is about
    /// the whole key).
    #[error("{file}: {key}{}: {allowed}", value_after_key(value))]
    Invalid {
        file: String,
        key: String,
        value: String,
        allowed: String,
    },
}

/// The value of an [`ScenarioError::Invalid`] about a key that is set where it does not
/// apply: the error says the key "is set" instead of showing a value.
pub(super) const SET: &str = "(set)";

/// How an [`ScenarioError::Invalid`] shows its value after the key.
fn value_after_key(value: &str) -> String {
    match value {
        SET => " is set".to_string(),
        "" => String::new(),
        v => format!(" = {v}"),
    }
}

impl ScenarioError {
    /// A value error, said to come from `[[compare]]` variant `name`.
    pub(super) fn in_variant(self, name: &str) -> Self {
        match self {
            ScenarioError::Invalid {
                file,
                key,
                value,
                allowed,
            } => ScenarioError::Invalid {
                file,
                key: format!("variant `{name}`: {key}"),
                value,
                allowed,
            },
            other => other,
        }
    }
}

/// Rejects keys set for a kind they do not apply to: (key, is set, applies). The kind is the
/// value of `section.selector` (`kind`, or the switch's `model`).
pub(super) fn check_keys(
    file: &str,
    (section, selector): (&str, &str),
    kind: &str,
    keys: &[(&str, bool, bool)],
) -> Result<(), ScenarioError> {
    match keys.iter().find(|(_, set, applies)| *set && !applies) {
        Some((key, _, _)) => Err(invalid(
            file,
            &format!("{section}.{key}"),
            SET,
            &format!(
                "does not apply to {section}.{selector} = \"{kind}\": remove it (where a \
                 [[compare]] variant or --set changes the {selector}, set the whole section, \
                 \"{section}\" = {{ {selector} = \"{kind}\", ... }}, so that the other \
                 {selector}'s keys do not carry over)"
            ),
        )),
        None => Ok(()),
    }
}

/// A key the chosen kind cannot do without.
pub(super) fn require(
    file: &str,
    key: &str,
    kind: &str,
    present: bool,
) -> Result<(), ScenarioError> {
    if present {
        Ok(())
    } else {
        Err(invalid(
            file,
            key,
            "(missing)",
            &format!("required for kind = \"{kind}\""),
        ))
    }
}

/// Every value error is built here, so each reads `file: key = value: allowed`; a misspelt
/// choice gets the choice meant.
pub(super) fn invalid(file: &str, key: &str, value: &str, allowed: &str) -> ScenarioError {
    ScenarioError::Invalid {
        file: file.to_string(),
        key: key.to_string(),
        value: value.to_string(),
        allowed: format!("{allowed}{}", choice_meant(value, allowed)),
    }
}

/// `; did you mean "dcqcn"?` when `value` is a quoted string, `allowed` only a list of quoted
/// choices (`"a", "b" or "c"`) and one of them is near `value`. An error about a combination
/// (`"srpt" needs model = "shared-buffer"`) is not a list, so it never guesses.
fn choice_meant(value: &str, allowed: &str) -> String {
    let Some(written) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) else {
        return String::new();
    };
    let pieces: Vec<&str> = allowed.split('"').collect();
    let choices: Vec<&str> = pieces.iter().skip(1).step_by(2).copied().collect();
    let is_list = pieces.len() % 2 == 1
        && (pieces.iter().step_by(2)).all(|between| {
            let rest = between.trim().trim_start_matches("one of").trim();
            ["", ",", "or", ", or"].contains(&rest)
        });
    if !is_list || choices.contains(&written) {
        return String::new();
    }
    closest(written, choices).map_or_else(String::new, |c| format!("; did you mean \"{c}\"?"))
}

/// A duration key that is `"auto"` (absent too: `None`) or a duration of at least `floor`
/// (with its reason).
pub(super) fn auto_or_at_least(
    file: &str,
    key: &str,
    value: Option<&str>,
    floor: (Duration, &str),
) -> Result<Option<Duration>, ScenarioError> {
    match value.unwrap_or("auto") {
        "auto" => Ok(None),
        v => match parse_key::<Duration>(file, key, v)? {
            d if d < floor.0 => Err(invalid(
                file,
                key,
                &format!("{v:?}"),
                &format!("\"auto\" or at least {} ({})", shown(floor.0), floor.1),
            )),
            d => Ok(Some(d)),
        },
    }
}

/// The shortest frame a link carries, 64 B, with the 8 B preamble and 12 B inter-frame gap it
/// takes on the wire: no port can send anything more often than once per this many bytes' time.
pub(super) const MIN_WIRE_FRAME_BYTES: u64 = 84;

/// The floor of a periodic key whose events leave (or are sampled at) links of `rate`: one
/// minimum frame's time there, with `which` saying which link that is ("the slowest link").
pub(super) fn min_frame_floor(rate: Bandwidth, which: &str) -> (Duration, String) {
    (
        rate.serialization(MIN_WIRE_FRAME_BYTES),
        format!(
            "one minimum frame, 64 B + 20 B of preamble and gap, at {rate}, {which}: nothing \
             on a link happens more often"
        ),
    )
}

/// A duration as the user may write it back, with nanoseconds beside an odd picosecond count:
/// `16800ps (16.8ns)`.
pub(super) fn shown(d: Duration) -> String {
    let exact = d.to_string();
    if exact.ends_with("ps") && d.as_ps() >= 1_000 {
        format!("{exact} ({:.1}ns)", d.as_ns_f64())
    } else {
        exact
    }
}

/// A duration for a warning: exact if round, else to a tenth of a microsecond (a computed
/// round trip or drain time is rarely a whole number of nanoseconds, and its picoseconds only
/// hide its size).
pub(super) fn about(d: Duration) -> String {
    let exact = d.to_string();
    if exact.ends_with("ps") && d.as_ps() >= 1_000_000 {
        format!("{:.1}us", d.as_us_f64())
    } else {
        shown(d)
    }
}

/// A real number as TOML writes it: `0.5`, `1e308` (not its 309 digits), `nan`, `-inf`.
pub(super) fn real(v: f64) -> String {
    let a = v.abs();
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.into()
    } else if a != 0.0 && !(1e-6..1e9).contains(&a) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// A TOML value as the scenario writes it, floats by [`real`].
pub(super) fn written(v: &toml::Value) -> String {
    match v {
        toml::Value::Float(f) => real(*f),
        other => other.to_string(),
    }
}

/// A duration key (written `text`) that must be at least `floor` and, if there is one, at most
/// `ceiling`, each with its reason.
pub(super) fn duration_in(
    file: &str,
    key: &str,
    text: &str,
    (floor, why_floor): (Duration, &str),
    ceiling: Option<(Duration, &str)>,
) -> Result<Duration, ScenarioError> {
    let d = parse_key::<Duration>(file, key, text)?;
    let above = ceiling.filter(|&(c, _)| d > c);
    if d < floor || above.is_some() {
        let allowed = match ceiling {
            Some((c, why)) => format!(
                "between {} ({why_floor}) and {} ({why})",
                shown(floor),
                shown(c)
            ),
            None => format!("at least {} ({why_floor})", shown(floor)),
        };
        return Err(invalid(file, key, &format!("{text:?}"), &allowed));
    }
    Ok(d)
}

/// A rate key (written `text`) that must lie in `[lo, hi]`, `what` saying why.
pub(super) fn rate_in(
    file: &str,
    key: &str,
    text: &str,
    (lo, hi): (Bandwidth, Bandwidth),
    what: &str,
) -> Result<Bandwidth, ScenarioError> {
    let r = parse_key::<Bandwidth>(file, key, text)?;
    if r < lo || r > hi {
        return Err(invalid(
            file,
            key,
            &format!("{text:?}"),
            &format!("between {lo} and {hi} ({what})"),
        ));
    }
    Ok(r)
}

/// A link's rate key: within [`LINK_RATES`].
pub(super) fn link_rate(file: &str, key: &str, text: &str) -> Result<Bandwidth, ScenarioError> {
    rate_in(file, key, text, LINK_RATES, LINK_RATES_WHY)
}

/// Parses a unit-bearing value, naming the key on failure.
pub(super) fn parse_key<T: std::str::FromStr>(
    file: &str,
    key: &str,
    value: &str,
) -> Result<T, ScenarioError>
where
    T::Err: std::fmt::Display,
{
    value.parse().map_err(|e: T::Err| {
        let mut allowed = e.to_string();
        // Durations' and rates' errors list the units; show the form too.
        let name = std::any::type_name::<T>();
        let example = if name.ends_with("::Duration") {
            Some("\"10us\"")
        } else if name.ends_with("::Bandwidth") {
            Some("\"100Gbps\"")
        } else {
            None
        };
        if let Some(example) = example.filter(|_| !allowed.contains("e.g.")) {
            allowed = format!("{allowed} (write e.g. {example})");
        }
        invalid(file, key, &format!("{value:?}"), &allowed)
    })
}

/// The allowed name nearest `written`, if it is near enough to be a slip of the keyboard (a
/// typo, a transposition, a missing letter): at most 2 edits, or a third of a long name's
/// length. A name as far from every allowed one as it is long gets no guess: it is not a typo
/// of any of them.
pub(super) fn closest<'a>(
    written: &str,
    allowed: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let len = written.chars().count();
    let limit = 2.max(len / 3);
    allowed
        .into_iter()
        .map(|name| (strsim::levenshtein(written, name), name))
        .filter(|&(edits, _)| edits <= limit && edits < len)
        .min_by_key(|&(edits, _)| edits)
        .map(|(_, name)| name)
}

/// `"; did you mean `load`?"` when an allowed name is near `written`, else nothing.
pub(super) fn did_you_mean<'a>(
    written: &str,
    allowed: impl IntoIterator<Item = &'a str>,
) -> String {
    closest(written, allowed).map_or_else(String::new, |name| format!("; did you mean `{name}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A typo, a transposition or a wrong case finds its name; a name as far from every
    /// allowed one as it is long, or a short word with nothing near, gets no guess.
    #[test]
    fn the_closest_name_is_a_few_edits_away() {
        let names = [
            "kind",
            "load",
            "sizes",
            "background_load",
            "background_duration",
        ];
        for (written, meant) in [
            ("laod", Some("load")),
            ("Load", Some("load")),
            ("knd", Some("kind")),
            ("sizse", Some("sizes")),
            ("backgrund_duraton", Some("background_duration")),
            ("backround_lod", Some("background_load")),
            ("xyzw", None),
            ("ab", None),
            ("queue", None),
        ] {
            assert_eq!(closest(written, names), meant, "{written}");
        }
        assert_eq!(did_you_mean("laod", names), "; did you mean `load`?");
        assert_eq!(did_you_mean("xyzw", names), "");
    }

    /// A misspelt choice in a list of choices gets the one meant; a value that is no string,
    /// far from every choice, or one of them in a message about a combination, gets none.
    #[test]
    fn a_misspelt_choice_gets_the_one_meant() {
        let ecn = "\"auto\", \"off\", \"dcqcn\" or \"dctcp\"";
        for (value, allowed, meant) in [
            ("\"dcqnc\"", ecn, "; did you mean \"dcqcn\"?"),
            (
                "\"of\"",
                "\"auto\", \"on\" or \"off\"",
                "; did you mean \"on\"?",
            ),
            (
                "\"Auto\"",
                "one of \"auto\", \"none\"",
                "; did you mean \"auto\"?",
            ),
            ("\"zzzzz\"", ecn, ""),
            ("3", ecn, ""),
            (
                "\"srpt\"",
                "\"fifo\" here; \"srpt\" needs model = \"shared-buffer\"",
                "",
            ),
            (
                "\"srtp\"",
                "\"fifo\" here; \"srpt\" needs model = \"shared-buffer\"",
                "",
            ),
        ] {
            assert_eq!(choice_meant(value, allowed), meant, "{value} in {allowed}");
        }
    }
}
