//! `--set key=value` and `[[compare]]` `set` tables: dotted keys written into the scenario's
//! TOML table before it is checked.

/// Splits `a.b=value`; the value is read as TOML (`true`, `8`, `0.5`, `"x"`), falling back to a
/// plain string (`40Gbps`).
pub(super) fn parse_override(o: &str) -> Result<(String, toml::Value), String> {
    let (key, value) = o.split_once('=').ok_or("expected key=value")?;
    let key = key.trim();
    if key.is_empty() {
        return Err("empty key".into());
    }
    let value = value.trim();
    let table = toml::from_str::<toml::Table>(&format!("v = {value}")).ok();
    // `8\nseed = 3` reads as a second key after the value, which would be lost: one key a
    // --set (a multi-line string, such as an inline CSV, is one value).
    if table.as_ref().is_some_and(|t| t.len() > 1) {
        return Err(
            "the value holds a line break and a second key: give one key=value per --set".into(),
        );
    }
    let parsed = table.and_then(|mut t| t.remove("v"));
    let number = value.strip_prefix(['-', '+']).unwrap_or(value);
    match parsed {
        Some(v) => Ok((key.to_string(), v)),
        // A number TOML cannot hold is not meant as a string.
        None if !number.is_empty() && number.chars().all(|c| c.is_ascii_digit() || c == '_') => {
            Err(format!(
                "{value} is out of range: an integer lies between -9223372036854775808 and \
                 9223372036854775807 (TOML's range; a key's own range is in \
                 scenarios/example.toml)"
            ))
        }
        None => Ok((key.to_string(), toml::Value::String(value.to_string()))),
    }
}

/// Sets `a.b.c` in `table`, creating the tables on the way.
pub(super) fn set_dotted(
    table: &mut toml::Table,
    key: &str,
    value: toml::Value,
) -> Result<(), String> {
    let mut parts: Vec<&str> = key.split('.').collect();
    let last = parts.pop().ok_or("empty key")?;
    let mut t = table;
    for p in parts {
        let entry = t
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        t = entry
            .as_table_mut()
            .ok_or_else(|| format!("`{p}` is not a table"))?;
    }
    t.insert(last.to_string(), value);
    Ok(())
}
