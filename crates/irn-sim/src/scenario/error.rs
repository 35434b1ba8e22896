//! Scenario errors, and the helpers every section uses to report one: each names the file,
//! the key, the value and what is allowed.

/// A scenario that could not be loaded. Each message is whole, cause included, so no variant
/// also reports it as a `source()` (an error chain would print it twice).
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("{file}: cannot read: {error}")]
    Read { file: String, error: std::io::Error },
    #[error("{file}: {message}")]
    Syntax { file: String, message: String },
    #[error("{file}: {key} = {value}: {allowed}")]
    Invalid {
        file: String,
        key: String,
        value: String,
        allowed: String,
    },
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
            "(set)",
            &format!(
                "does not apply to {section}.{selector} = \"{kind}\" (a [[compare]] variant or \
                 --set that changes the {selector} can replace the whole section: \
                 \"{section}\" = {{ {selector} = \"{kind}\" }})"
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

/// Every value error is built here, so each reads `file: key = value: allowed`.
pub(super) fn invalid(file: &str, key: &str, value: &str, allowed: &str) -> ScenarioError {
    ScenarioError::Invalid {
        file: file.to_string(),
        key: key.to_string(),
        value: value.to_string(),
        allowed: allowed.to_string(),
    }
}

/// A duration key that is `"auto"` (absent too: `None`) or a duration above 0.
pub(super) fn auto_or_positive(
    file: &str,
    key: &str,
    value: Option<&str>,
) -> Result<Option<irn_core::Duration>, ScenarioError> {
    match value.unwrap_or("auto") {
        "auto" => Ok(None),
        v => match parse_key::<irn_core::Duration>(file, key, v)? {
            irn_core::Duration::ZERO => Err(invalid(
                file,
                key,
                &format!("{v:?}"),
                "\"auto\" or a duration above 0",
            )),
            d => Ok(Some(d)),
        },
    }
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
    value
        .parse()
        .map_err(|e: T::Err| invalid(file, key, &format!("{value:?}"), &e.to_string()))
}
