//! Every key of the scenario format, taken from the code: the section structs' fields from
//! their `Deserialize` impls (walked by a deserializer that records each struct's field names),
//! and the `[transport.<cc>]` parameter tables' keys, which are read from a free-form table,
//! from the "allowed:" list their error names. Shared by `example_keys.rs` (every key is in
//! `scenarios/example.toml`) and `extreme_values.rs` (every key takes extreme values safely).
//!
//! `[experiment]` and `[[check]]` are left out: they describe `irn reproduce`/`irn check`
//! experiments, not a run, and docs/reproduce.md's "Checked experiments" section lists their keys.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use irn_sim::scenario::{self, ScenarioFile};
use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use serde::Deserialize;

/// Sections left to docs/reproduce.md (see the module comment).
pub const DOCUMENTED_ELSEWHERE: &[&str] = &["experiment", "check"];

/// A wan's sites: each a `[topology]` table, whose keys are recorded from its field list while
/// its values are left out (walking them would walk the site's own sites, without end).
const SITES: &[&str] = &["topology.site", "topology.site_b"];

/// The `[transport.<cc>]` tables whose keys the transport reads itself.
const CC_TABLES: &[&str] = &[
    "dcqcn", "timely", "dctcp", "aimd", "hpcc", "swift", "powertcp",
];

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
pub fn keys_in_code() -> BTreeSet<String> {
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
    for cc in CC_TABLES.iter().chain(&["mp_rdma"]) {
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
    keys.extend(["compare.name", "compare.set", "compare.points"].map(String::from));
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
/// The parameters `[transport.<cc>]` (or `[transport.mp_rdma]`, with its transport) accepts,
/// from the error an unknown one gives.
fn cc_params(cc: &str) -> Vec<String> {
    let selector = match cc {
        "mp_rdma" => "kind = \"mp-rdma\"".to_string(),
        cc => format!("cc = \"{cc}\""),
    };
    let text = format!("[transport]\n{selector}\n[transport.{cc}]\nnot_a_parameter = 1\n");
    let err = scenario::parse(&text, "t.toml", Path::new("."), &[])
        .unwrap_err()
        .to_string();
    let (_, allowed) = err
        .split_once("allowed: ")
        .unwrap_or_else(|| panic!("{cc}: no list of parameters in {err:?}"));
    allowed.split(", ").map(|p| p.trim().to_string()).collect()
}
