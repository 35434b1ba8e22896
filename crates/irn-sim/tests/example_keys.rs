//! `scenarios/example.toml` promises to list every key a scenario may set. The list of keys is
//! taken from the code (`schema/`), so a key added to a section without documenting it there
//! fails here.

mod schema;

use std::collections::BTreeSet;
use std::path::Path;

use schema::keys_in_code;

/// Every `key =` the file mentions, set or in a comment, by section: `[section]` and
/// `# [section]` headers open one, and a dotted key (`workload.load=0.5`) is placed under the
/// section it is written in.
fn keys_in_example(text: &str) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    let mut section = String::new();
    for line in text.lines() {
        let line = line.trim_start_matches(|c: char| c == '#' || c.is_whitespace());
        if let Some(header) = line.strip_prefix('[') {
            let header = header.trim_start_matches('[');
            if let Some((name, _)) = header.split_once(']') {
                section = name.trim().to_string();
                keys.insert(section.clone());
            }
        }
        let bytes = line.as_bytes();
        let is_key = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'.';
        let mut i = 0;
        while i < bytes.len() {
            if !is_key(bytes[i]) || (i > 0 && is_key(bytes[i - 1])) {
                i += 1;
                continue;
            }
            let start = i;
            while i < bytes.len() && is_key(bytes[i]) {
                i += 1;
            }
            let word = &line[start..i];
            let rest = line[i..].trim_start();
            if rest.starts_with('=') && !rest.starts_with("==") {
                keys.insert(if section.is_empty() {
                    word.to_string()
                } else {
                    format!("{section}.{word}")
                });
            }
        }
    }
    keys
}

/// A key is documented when it is mentioned in its own section or, for a key of an inline
/// table (`workload.verbs = { write = 4, … }`), in the section holding the table.
fn documented(key: &str, example: &BTreeSet<String>) -> bool {
    let (mut section, name) = key.rsplit_once('.').unwrap_or(("", key));
    loop {
        let candidate = if section.is_empty() {
            name.to_string()
        } else {
            format!("{section}.{name}")
        };
        if example.contains(&candidate) {
            return true;
        }
        match section.rsplit_once('.') {
            Some((parent, _)) => section = parent,
            None if !section.is_empty() => section = "",
            None => return false,
        }
    }
}

#[test]
fn the_example_scenario_lists_every_key() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text = std::fs::read_to_string(root.join("scenarios/example.toml")).unwrap();
    let example = keys_in_example(&text);
    let code = keys_in_code();
    // Sanity: the walk reached every section and the nested tables.
    for key in [
        "topology.kind",
        "topology.site.kind",
        "topology.wan.delay",
        "switch.buffer",
        "workload.verbs.atomic",
        "transport.dcqcn.g",
    ] {
        assert!(code.contains(key), "{key} missing from {code:?}");
    }
    let missing: Vec<&String> = code.iter().filter(|k| !documented(k, &example)).collect();
    assert!(
        missing.is_empty(),
        "scenarios/example.toml does not mention {missing:?}"
    );
}
