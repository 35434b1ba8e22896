//! `scenarios/example.toml` promises to list every key a scenario may set. The list of keys is
//! taken from the code, so a key added to a section without documenting it there fails here:
//! the section structs' fields come from their `Deserialize` impls (walked by a deserializer
//! that records each struct's field names), and the `[transport.<cc>]` parameter tables' keys,
//! which are read from a free-form table, from the "allowed:" list their error names.
//!
//! `[experiment]` and `[[check]]` are left out: they describe `irn reproduce`/`irn check`
//! experiments, not a run, and the README's "Checked experiments" section lists their keys.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use irn_sim::scenario::{self, ScenarioFile};
use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use serde::Deserialize;

/// Sections left to the README (see the module comment).
const DOCUMENTED_ELSEWHERE: &[&str] = &["experiment", "check"];

/// A wan's sites: each a `[topology]` table, whose keys are recorded from its field list while
/// its values are left out (walking them would walk the site's own sites, without end).
const SITES: &[&str] = &["topology.site", "topology.site_b"];

/// The `[transport.<cc>]` tables whose keys the transport reads itself.
const CC_TABLES: &[&str] = &["dcqcn", "timely", "dctcp", "aimd"];

/// Records, for every struct reached, its dotted path and its field names; free-form tables
/// (a `toml::Table` field) are recorded with no fields.
#[derive(Default)]
struct Schema {
    structs: BTreeMap<String, Vec<&'static str>>,
    tables: BTreeSet<String>,
}

/// A deserializer that answers every request with a plausible value: `Some` for options, the
/// first variant of an enum, an empty list or table, and for a struct, each of its fields in
/// turn (after recording them).
struct Tracer<'s> {
    path: String,
    schema: &'s mut Schema,
}

impl<'s> Tracer<'s> {
    fn child(&mut self, field: &str) -> Tracer<'_> {
        let path = if self.path.is_empty() {
            field.to_string()
        } else {
            format!("{}.{field}", self.path)
        };
        Tracer {
            path,
            schema: self.schema,
        }
    }
}

#[derive(Debug)]
struct TraceError(String);

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TraceError {}

impl de::Error for TraceError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        TraceError(msg.to_string())
    }
}

impl<'de> de::Deserializer<'de> for Tracer<'_> {
    type Error = TraceError;

    /// Only untagged enums ask for "anything": `ordering.cap` (bits or a word), which a number
    /// fits, and `monitor.ports` (a selector or a list of them) and `pauses.gap`/`length` (a
    /// duration or a range), which a word fits.
    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, TraceError> {
        match self.path.as_str() {
            "monitor.ports" => v.visit_str("switch"),
            "pauses.gap" | "pauses.length" => v.visit_str("1ms"),
            _ => v.visit_u64(1),
        }
    }
    fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value, TraceError> {
        v.visit_bool(false)
    }
    fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value, TraceError> {
        v.visit_str("")
    }
    fn deserialize_string<V: Visitor<'de>>(self, v: V) -> Result<V::Value, TraceError> {
        v.visit_str("")
    }
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, TraceError> {
        let in_site =
            |site: &&str| (self.path.strip_prefix(site)).is_some_and(|rest| rest.starts_with('.'));
        if DOCUMENTED_ELSEWHERE.contains(&self.path.as_str()) || SITES.iter().any(in_site) {
            v.visit_none()
        } else {
            v.visit_some(self)
        }
    }
    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, TraceError> {
        v.visit_seq(de::value::SeqDeserializer::new(std::iter::empty::<u64>()))
    }
    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, TraceError> {
        self.schema.tables.insert(self.path.clone());
        v.visit_map(de::value::MapDeserializer::new(std::iter::empty::<(
            String,
            u64,
        )>()))
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, TraceError> {
        self.schema
            .structs
            .insert(self.path.clone(), fields.to_vec());
        v.visit_map(Fields {
            tracer: self,
            fields,
            next: 0,
        })
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, TraceError> {
        v.visit_enum(variants[0].into_deserializer())
    }

    serde::forward_to_deserialize_any! {
        i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char bytes byte_buf unit unit_struct
        newtype_struct tuple tuple_struct identifier ignored_any
    }
}

/// A struct's fields, each answered by a [`Tracer`] one level down.
struct Fields<'s> {
    tracer: Tracer<'s>,
    fields: &'static [&'static str],
    next: usize,
}

impl<'de> de::MapAccess<'de> for Fields<'_> {
    type Error = TraceError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, TraceError> {
        let Some(field) = self.fields.get(self.next) else {
            return Ok(None);
        };
        seed.deserialize(field.into_deserializer()).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, TraceError> {
        let field = self.fields[self.next];
        self.next += 1;
        seed.deserialize(self.tracer.child(field))
    }
}

/// Every key a scenario may set, dotted (`switch.alpha`, `transport.dcqcn.g`), sections
/// included (`transport.dcqcn`).
fn keys_in_code() -> BTreeSet<String> {
    let mut schema = Schema::default();
    ScenarioFile::deserialize(Tracer {
        path: String::new(),
        schema: &mut schema,
    })
    .expect("the tracer answers every type a scenario section uses; teach it a new one");
    let mut keys = BTreeSet::new();
    for (path, fields) in &schema.structs {
        for field in fields {
            let key = if path.is_empty() {
                field.to_string()
            } else {
                format!("{path}.{field}")
            };
            if !DOCUMENTED_ELSEWHERE.contains(&key.as_str()) {
                keys.insert(key);
            }
        }
    }
    for cc in CC_TABLES {
        let table = format!("transport.{cc}");
        assert!(
            schema.tables.contains(&table),
            "{table} is no longer a table"
        );
        for param in cc_params(cc) {
            keys.insert(format!("{table}.{param}"));
        }
    }
    // `[[compare]]` is a list, which the tracer leaves empty; its entries' keys are fixed.
    keys.extend(["compare.name".to_string(), "compare.set".to_string()]);
    // So are `[[pause_control]]`'s.
    for key in [
        "ports",
        "rule",
        "threshold",
        "height",
        "constant",
        "interval",
        "resume",
        "frames",
    ] {
        keys.insert(format!("pause_control.{key}"));
    }
    keys
}

/// A `[transport.<cc>]` table's parameters, as the error for an unknown one lists them.
fn cc_params(cc: &str) -> Vec<String> {
    let text = format!("[transport]\ncc = \"{cc}\"\n[transport.{cc}]\nnot_a_parameter = 1\n");
    let err = scenario::parse(&text, "t.toml", Path::new("."), &[])
        .unwrap_err()
        .to_string();
    let (_, allowed) = err
        .split_once("allowed: ")
        .unwrap_or_else(|| panic!("{cc}: no list of parameters in {err:?}"));
    allowed.split(", ").map(|p| p.trim().to_string()).collect()
}

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
