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

/// Sets `a.b.c` in `table`, creating the tables on the way; a number names an entry of a list
/// (`workload.job.0.size`: the first job's size). An error says what is wrong at which key of
/// the path (`workload.sizes` is not a table).
pub(super) fn set_dotted(
    table: &mut toml::Table,
    key: &str,
    value: toml::Value,
) -> Result<(), (String, String)> {
    let parts: Vec<&str> = key.split('.').collect();
    let mut root = toml::Value::Table(std::mem::take(table));
    let set = set_in(&mut root, "", &parts, value)
        .map_err(|(depth, message)| (parts[..depth.min(parts.len())].join("."), message));
    if let toml::Value::Table(t) = root {
        *table = t;
    }
    set
}

/// [`set_dotted`] below `at`, the value of key `name`; an error counts the parts of the key
/// up to where it went wrong.
fn set_in(
    at: &mut toml::Value,
    name: &str,
    path: &[&str],
    value: toml::Value,
) -> Result<(), (usize, String)> {
    let Some((first, rest)) = path.split_first() else {
        return Err((0, "empty key".into()));
    };
    let child = match at {
        toml::Value::Table(t) if rest.is_empty() => {
            t.insert(first.to_string(), value);
            return Ok(());
        }
        toml::Value::Table(t) => {
            (t.entry(first.to_string())).or_insert_with(|| toml::Value::Table(toml::Table::new()))
        }
        toml::Value::Array(list) => {
            let i = entry_index(name, first, list.len()).map_err(|m| (0, m))?;
            if rest.is_empty() {
                list[i] = value;
                return Ok(());
            }
            &mut list[i]
        }
        _ => return Err((0, format!("`{name}` is not a table"))),
    };
    // The parts above this one count towards where an error lies.
    set_in(child, first, rest, value).map_err(|(depth, m)| (depth + 1, m))
}

/// The entry of list `name` (of `len` entries) that `part` of a dotted key names.
fn entry_index(name: &str, part: &str, len: usize) -> Result<usize, String> {
    let i = part.parse::<usize>().map_err(|_| {
        format!("`{name}` is a list: name one of its entries by its index, as in `{name}.0`")
    })?;
    if i >= len {
        let entries = match len {
            0 => "none".to_string(),
            1 => "one, `0`".to_string(),
            n => format!("{n}, `0` to `{}`", n - 1),
        };
        return Err(format!(
            "`{name}` has no entry {i}: its entries are {entries} (an override changes an \
             entry of a list, never adds one)"
        ));
    }
    Ok(i)
}

/// The value at `a.b.c` in `table` (a number names an entry of a list), if there is one.
pub(super) fn get_dotted<'a>(table: &'a toml::Table, key: &str) -> Option<&'a toml::Value> {
    let mut parts = key.split('.');
    let mut at = table.get(parts.next()?)?;
    for part in parts {
        at = match at {
            toml::Value::Table(t) => t.get(part)?,
            toml::Value::Array(list) => list.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(at)
}

/// Every value `value`, given at `key`, sets, as (dotted key, value): a table's keys one by
/// one, and anything else whole.
pub(super) fn leaves(key: &str, value: &toml::Value, out: &mut Vec<(String, toml::Value)>) {
    match value {
        toml::Value::Table(t) => {
            for (k, v) in t {
                leaves(&format!("{key}.{k}"), v, out);
            }
        }
        _ => out.push((key.to_string(), value.clone())),
    }
}
