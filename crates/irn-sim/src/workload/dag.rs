//! Flows that wait for other flows: a dependency graph over a workload's flows.
//!
//! Collectives and training steps are not independent arrivals: a flow starts when the flows
//! it depends on have finished (the step before, at its rank), plus an optional delay (a
//! computation). A [`FlowDag`] holds those edges; the simulator starts a *root* (a flow
//! without parents) at its `start`, like any flow, and every other flow once its last parent's
//! receiver holds the whole message, plus the edge's delay (see `crate::sim`).
//!
//! The graph is built once, before the run, in compressed form (each flow's children in one
//! slice), so releasing a finished flow's children costs one pass over them and nothing per
//! packet.
//!
//! [`dag_file`] reads a graph from a CSV file (`kind = "dag"`):
//!
//! ```text
//! id,src,dst,size_bytes,start_ns,after,delay_ns
//! a,0,1,1000000,0,,
//! b,1,2,1000000,,a,
//! c,1,3,1000000,,a,500
//! d,2,3,1000,,b c,
//! ```
//!
//! `id` names the flow (any text without spaces or commas, unique in the file); `after` lists
//! the ids it waits for, separated by spaces (empty for a root); `start_ns` is a root's start
//! (empty for a flow with parents); `delay_ns` (optional, default 0) is how long after its
//! last parent finished the flow starts. Blank lines and `#` comments are skipped, as in a
//! trace.
//!
//! The same flows as JSON (a `.json` file, or `workload.format = "json"`): an array of objects
//! with the columns as keys, `after` a list of ids, absent keys empty:
//!
//! ```text
//! [{"id": "a", "src": 0, "dst": 1, "size_bytes": 1000000, "start_ns": 0},
//!  {"id": "c", "src": 1, "dst": 3, "size_bytes": 1000000, "after": ["a"], "delay_ns": 500}]
//! ```
//!
//! Both are checked by one code path, so a JSON file is refused for what a CSV file is, its
//! errors naming the flow's index in the array instead of a line. The graph keeps each flow's
//! id ([`FlowDag::name`]), which `flows.csv` writes beside irn's own flow number.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

use irn_core::time::{Duration, Time};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{FlowClass, FlowSpec, WorkloadError};
use crate::ids::{FlowId, HostIdx};

/// The dependencies between a run's flows, indexed by flow id (position in the flow list).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowDag {
    /// Per flow: how many parents it waits for; 0 for a root, which starts at its `start`.
    parents: Vec<u32>,
    /// Per flow: where its children begin in `children`; one entry more than there are flows.
    first_child: Vec<u32>,
    /// Every edge as (child, delay after the parent finished), grouped by parent.
    children: Vec<(FlowId, Duration)>,
    /// Per flow: its id in the DAG file it came from, for `flows.csv`; empty for a graph
    /// built otherwise (a collective's flows are named by their tags).
    names: Vec<Box<str>>,
}

/// One dependency: `child` starts no earlier than `delay` after `parent` finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    pub parent: u32,
    pub child: u32,
    pub delay: Duration,
}

impl FlowDag {
    /// The graph of `flows` flows with these edges (ids below `flows`; checked by the callers,
    /// which know where an id came from).
    pub fn new(flows: usize, edges: &[Edge]) -> Self {
        let mut parents = vec![0u32; flows];
        let mut first_child = vec![0u32; flows + 1];
        for e in edges {
            parents[e.child as usize] += 1;
            first_child[e.parent as usize + 1] += 1;
        }
        for i in 0..flows {
            first_child[i + 1] += first_child[i];
        }
        let mut next = first_child.clone();
        let mut children = vec![(FlowId(0), Duration::ZERO); edges.len()];
        for e in edges {
            let slot = &mut next[e.parent as usize];
            children[*slot as usize] = (FlowId(e.child), e.delay);
            *slot += 1;
        }
        FlowDag {
            parents,
            first_child,
            children,
            names: Vec::new(),
        }
    }

    /// The graph with each flow's id in its file (`names[f]` for flow `f`), kept through
    /// [`sort`](Self::sort).
    pub fn with_names(mut self, names: Vec<Box<str>>) -> Self {
        debug_assert!(names.is_empty() || names.len() == self.len());
        self.names = names;
        self
    }

    /// Flow `f`'s id in the DAG file it came from; `None` for a graph without names.
    pub fn name(&self, f: usize) -> Option<&str> {
        self.names.get(f).map(|n| &**n)
    }

    /// How many flows the graph covers.
    pub fn len(&self) -> usize {
        self.parents.len()
    }

    pub fn is_empty(&self) -> bool {
        self.parents.is_empty()
    }

    /// Whether flow `f` starts by itself, at its `start`.
    #[inline]
    pub fn is_root(&self, f: usize) -> bool {
        self.parents[f] == 0
    }

    /// How many flows `f` waits for.
    pub fn parents(&self, f: usize) -> u32 {
        self.parents[f]
    }

    /// The flows waiting for `f`, each with its delay after `f` finished.
    #[inline]
    pub fn children(&self, f: usize) -> &[(FlowId, Duration)] {
        let (a, b) = (self.first_child[f], self.first_child[f + 1]);
        &self.children[a as usize..b as usize]
    }

    /// Every edge, in parent order.
    pub fn edges(&self) -> impl Iterator<Item = Edge> + '_ {
        (0..self.len()).flat_map(move |p| {
            self.children(p).iter().map(move |&(c, delay)| Edge {
                parent: p as u32,
                child: c.0,
                delay,
            })
        })
    }

    /// The flows in an order where every flow comes after its parents, or, when the graph has
    /// a cycle, `Err` with the flows no such order reaches (those on a cycle or behind one).
    pub fn topological_order(&self) -> Result<Vec<u32>, Vec<bool>> {
        let mut left = self.parents.clone();
        let mut order: Vec<u32> = (0..self.len() as u32)
            .filter(|&f| left[f as usize] == 0)
            .collect();
        let mut i = 0;
        while i < order.len() {
            for &(c, _) in self.children(order[i] as usize) {
                left[c.index()] -= 1;
                if left[c.index()] == 0 {
                    order.push(c.0);
                }
            }
            i += 1;
        }
        if order.len() == self.len() {
            Ok(order)
        } else {
            Err(left.iter().map(|&l| l > 0).collect())
        }
    }

    /// Sets every flow with parents to its earliest possible start (its latest parent's
    /// earliest start plus the edge's delay, as if flows took no time), so that the flow list
    /// sorted by start lists parents first and its last start is a lower bound of the run.
    /// The graph must be acyclic.
    pub fn set_earliest_starts(&self, flows: &mut [FlowSpec]) {
        let Ok(order) = self.topological_order() else {
            return;
        };
        let mut earliest: Vec<Option<Time>> = vec![None; flows.len()];
        for f in order {
            let f = f as usize;
            let start = match earliest[f] {
                Some(t) if !self.is_root(f) => t,
                _ => flows[f].start,
            };
            flows[f].start = start;
            for &(c, delay) in self.children(f) {
                let t = &mut earliest[c.index()];
                *t = Some(t.map_or(start + delay, |t| t.max(start + delay)));
            }
        }
    }

    /// Sorts `flows` by start, then by depth (a flow after its parents), then stably, and
    /// renumbers the graph to match; returns each new position's old index. The graph must be
    /// acyclic.
    pub fn sort(&mut self, flows: &mut Vec<FlowSpec>) -> Vec<u32> {
        let mut depth = vec![0u32; flows.len()];
        for f in self.topological_order().unwrap_or_default() {
            let d = depth[f as usize] + 1;
            for &(c, _) in self.children(f as usize) {
                depth[c.index()] = depth[c.index()].max(d);
            }
        }
        let mut order: Vec<u32> = (0..flows.len() as u32).collect();
        order.sort_by_key(|&i| (flows[i as usize].start, depth[i as usize]));
        let mut new_of = vec![0u32; order.len()];
        for (new, &old) in order.iter().enumerate() {
            new_of[old as usize] = new as u32;
        }
        let edges: Vec<Edge> = self
            .edges()
            .map(|e| Edge {
                parent: new_of[e.parent as usize],
                child: new_of[e.child as usize],
                delay: e.delay,
            })
            .collect();
        *flows = order.iter().map(|&i| flows[i as usize]).collect();
        let names = std::mem::take(&mut self.names);
        let names = if names.is_empty() {
            names
        } else {
            order.iter().map(|&i| names[i as usize].clone()).collect()
        };
        *self = FlowDag::new(flows.len(), &edges).with_names(names);
        order
    }
}

/// The columns of a DAG file (the keys of a JSON DAG file's flow objects).
const COLUMNS: [&str; 7] = [
    "id",
    "src",
    "dst",
    "size_bytes",
    "start_ns",
    "after",
    "delay_ns",
];

/// How a DAG file is written: chosen by `workload.format`, or by the file's extension.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DagFormat {
    /// A header line and one line per flow (the module's example).
    #[default]
    Csv,
    /// An array of flow objects with the CSV's columns as keys (`after` a list of ids).
    Json,
}

impl DagFormat {
    /// The format a file's name says: JSON for `.json` (any case), CSV otherwise.
    pub fn of(path: &Path) -> DagFormat {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("json") => DagFormat::Json,
            _ => DagFormat::Csv,
        }
    }
}

/// A DAG file's flows (sorted by earliest start, see [`FlowDag::set_earliest_starts`]) and
/// their graph, which keeps the file's ids ([`FlowDag::name`]).
pub fn dag_file(
    path: &Path,
    format: DagFormat,
    hosts: u32,
) -> Result<(Vec<FlowSpec>, FlowDag), WorkloadError> {
    let (text, file) = super::trace::read_flows(path)?;
    match format {
        DagFormat::Csv => dag_text(&text, &file, hosts),
        DagFormat::Json => dag_json_text(&text, &file, hosts),
    }
}

/// Where a flow is in its file, for errors: a CSV line (from 1) or a JSON array index (from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Line(u64),
    Index(usize),
}

impl Place {
    /// The place in a sentence: `line 3`, `index 2`.
    fn describe(self) -> String {
        match self {
            Place::Line(l) => format!("line {l}"),
            Place::Index(i) => format!("index {i}"),
        }
    }

    /// What the file holds one flow in (`no line of the file defines it`).
    fn holder(self) -> &'static str {
        match self {
            Place::Line(_) => "line",
            Place::Index(_) => "flow",
        }
    }

    /// What the file holds one field of a flow in.
    fn field(self) -> &'static str {
        match self {
            Place::Line(_) => "column",
            Place::Index(_) => "key",
        }
    }

    /// `problem` at this place of `file`: `file:line: problem`, or `file: flow at index i:
    /// problem`.
    fn error(self, file: &str, problem: impl Into<String>) -> WorkloadError {
        match self {
            Place::Line(l) => WorkloadError::at(file, l, problem),
            Place::Index(i) => WorkloadError::File {
                file: file.to_string(),
                problem: format!("flow at index {i}: {}", problem.into()),
            },
        }
    }
}

/// One flow as its file gives it: each column's text in [`COLUMNS`] order, empty when absent
/// (`after`: the ids separated by spaces). Both formats become this, so they are checked by
/// the same code and refused with the same words.
struct RawFlow<'a> {
    place: Place,
    fields: [Cow<'a, str>; 7],
}

/// One flow of a DAG file, checked, with what its graph needs.
struct Row<'a> {
    place: Place,
    id: &'a str,
    after: Vec<&'a str>,
    delay: Duration,
}

/// [`dag_file`] of CSV text already read (a scenario's inline `workload.csv`); `file` names it
/// in errors.
///
/// Errors name the file, the line and the value: a duplicate id, an unknown parent, a host
/// outside the network, a flow waiting for itself or on a cycle (the cycle is spelled out), a
/// root without a start or a flow with parents and a start.
pub fn dag_text(
    text: &str,
    file: &str,
    hosts: u32,
) -> Result<(Vec<FlowSpec>, FlowDag), WorkloadError> {
    graph(&csv_flows(text, file)?, file, hosts)
}

/// [`dag_file`] of JSON text already read: an array of objects with the CSV's columns as keys,
/// `after` a list of ids (ids strings or whole numbers; absent or `null` keys are empty
/// columns). Errors name the file, the flow's index in the array and the value.
pub fn dag_json_text(
    text: &str,
    file: &str,
    hosts: u32,
) -> Result<(Vec<FlowSpec>, FlowDag), WorkloadError> {
    graph(&json_flows(text, file)?, file, hosts)
}

/// A CSV DAG file's flows as written; blank lines and `#` comments skipped.
fn csv_flows<'a>(text: &'a str, file: &str) -> Result<Vec<RawFlow<'a>>, WorkloadError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i as u64 + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
    let (header_line, header) = lines.next().unwrap_or((1, ""));
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    let mut cols = [usize::MAX; 7];
    for (slot, name) in cols.iter_mut().zip(COLUMNS) {
        if let Some(i) = names.iter().position(|h| *h == name) {
            *slot = i;
        } else if name != "delay_ns" {
            return Err(WorkloadError::at(
                file,
                header_line,
                format!(
                    "the header has no `{name}` column; a DAG file starts with the header `{}` \
                     (delay_ns optional)",
                    COLUMNS.join(",")
                ),
            ));
        }
    }
    // A misspelt optional column (`dealy_ns`) would be dropped without a word, as the JSON
    // form's unknown keys are not.
    if let Some(other) = names.iter().find(|n| !COLUMNS.contains(n)) {
        return Err(WorkloadError::at(
            file,
            header_line,
            format!(
                "the header's `{other}` is not a column of a DAG file: {} (delay_ns optional)",
                COLUMNS.join(",")
            ),
        ));
    }
    let mut flows = Vec::new();
    for (line, content) in lines {
        let fields: Vec<&str> = content.split(',').map(str::trim).collect();
        if fields.len() > names.len() {
            return Err(WorkloadError::at(
                file,
                line,
                format!(
                    "{} fields, but the header names only {} columns",
                    fields.len(),
                    names.len()
                ),
            ));
        }
        let get = |k: usize| Cow::Borrowed(fields.get(cols[k]).copied().unwrap_or(""));
        flows.push(RawFlow {
            place: Place::Line(line),
            fields: std::array::from_fn(get),
        });
    }
    Ok(flows)
}

/// A JSON DAG file's flows as written: each key's value as the text a CSV column would hold.
fn json_flows(text: &str, file: &str) -> Result<Vec<RawFlow<'static>>, WorkloadError> {
    let whole = |problem: String| WorkloadError::File {
        file: file.to_string(),
        problem,
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let value: Value =
        serde_json::from_str(text).map_err(|e| whole(format!("not valid JSON: {e}")))?;
    let Value::Array(items) = value else {
        return Err(whole(format!(
            "a JSON DAG file is an array of flow objects, [{{\"id\": \"a\", \"src\": 0, …}}, …], \
             not {}",
            json_kind(&value)
        )));
    };
    let mut flows = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let place = Place::Index(i);
        let Value::Object(object) = item else {
            return Err(place.error(
                file,
                format!(
                    "{}, not an object of keys {}",
                    json_kind(&item),
                    COLUMNS.join(", ")
                ),
            ));
        };
        let mut fields: [Cow<str>; 7] = Default::default();
        for (key, value) in object {
            let Some(k) = COLUMNS.iter().position(|c| *c == key) else {
                return Err(place.error(
                    file,
                    format!(
                        "unknown key `{key}`; a flow's keys are {}",
                        COLUMNS.join(", ")
                    ),
                ));
            };
            fields[k] = Cow::Owned(json_field(&key, value).map_err(|p| place.error(file, p))?);
        }
        flows.push(RawFlow { place, fields });
    }
    if let Some((i, key)) = repeated_key(text) {
        return Err(Place::Index(i).error(
            file,
            format!("key `{key}` is written twice; a flow gives each key once"),
        ));
    }
    Ok(flows)
}

/// The first flow object of a JSON DAG file (an array of objects, already read as one) that
/// writes a key twice, by index, and the key: a `Value` keeps the last of the two, so the flow
/// would silently lose the first.
fn repeated_key(text: &str) -> Option<(usize, String)> {
    use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
    use std::fmt;

    /// The array of flows: the first repeated key, with its flow's index.
    struct Flows;
    /// One flow object, read by [`Keys`]: its first repeated key.
    struct Repeated(Option<String>);
    struct Keys;

    impl<'de> Visitor<'de> for Flows {
        type Value = Option<(usize, String)>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an array of flow objects")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut first = None;
            let mut i = 0;
            while let Some(repeated) = seq.next_element::<Repeated>()? {
                first = first.or(repeated.0.map(|key| (i, key)));
                i += 1;
            }
            Ok(first)
        }
    }

    impl<'de> de::Deserialize<'de> for Repeated {
        fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_map(Keys).map(Repeated)
        }
    }
    impl<'de> Visitor<'de> for Keys {
        type Value = Option<String>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a flow object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut seen: Vec<String> = Vec::new();
            let mut repeated = None;
            while let Some(key) = map.next_key::<String>()? {
                map.next_value::<IgnoredAny>()?;
                if repeated.is_none() && seen.contains(&key) {
                    repeated = Some(key);
                } else {
                    seen.push(key);
                }
            }
            Ok(repeated)
        }
    }
    let mut d = serde_json::Deserializer::from_str(text);
    de::Deserializer::deserialize_seq(&mut d, Flows)
        .ok()
        .flatten()
}

/// A JSON flow's `key` as the text of its CSV column: a string as it is, a number as written,
/// `null` empty; `after` a list of ids (or one string of them), joined by spaces.
fn json_field(key: &str, value: Value) -> Result<String, String> {
    match value {
        Value::String(s) => Ok(s),
        Value::Number(n) if key == "id" => json_id(&n),
        Value::Number(n) => Ok(n.to_string()),
        Value::Null => Ok(String::new()),
        Value::Array(ids) if key == "after" => {
            let mut out = Vec::with_capacity(ids.len());
            for id in ids {
                let text = match id {
                    Value::String(s) => s,
                    Value::Number(n) => json_id(&n)?,
                    other => {
                        return Err(format!(
                            "`after` lists {}: ids are strings or whole numbers",
                            json_kind(&other)
                        ))
                    }
                };
                if text.is_empty() || text.contains(char::is_whitespace) {
                    return Err(format!(
                        "`after` lists the id {text:?}: ids are single words"
                    ));
                }
                out.push(text);
            }
            Ok(out.join(" "))
        }
        other => Err(format!(
            "key `{key}` is {}: give a {}",
            json_kind(&other),
            if key == "after" {
                "list of ids"
            } else {
                "number or a string"
            }
        )),
    }
}

/// A numeric id as its text, if it is a whole number JSON reads exactly: a larger one, or
/// one with a fraction or an exponent, is read as the nearest float, so two ids written
/// differently (18446744073709551616 and …617) became one and a flow waited for another's
/// parent without a word.
fn json_id(n: &serde_json::Number) -> Result<String, String> {
    if n.is_u64() || n.is_i64() {
        return Ok(n.to_string());
    }
    Err(format!(
        "id {n} is not a whole number from {} to {}: ids are strings or whole numbers (write a \
         larger one as a string)",
        i64::MIN,
        u64::MAX
    ))
}

/// What a JSON value is, for errors.
fn json_kind(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// The flows and graph of a DAG file's flows as written, every value checked.
fn graph(
    raw: &[RawFlow],
    file: &str,
    hosts: u32,
) -> Result<(Vec<FlowSpec>, FlowDag), WorkloadError> {
    let mut flows = Vec::with_capacity(raw.len());
    let mut rows: Vec<Row> = Vec::with_capacity(raw.len());
    let mut index: HashMap<&str, u32> = HashMap::new();
    for r in raw {
        let (flow, row) = flow(r, hosts).map_err(|p| r.place.error(file, p))?;
        if let Some(&first) = index.get(row.id) {
            return Err(r.place.error(
                file,
                format!(
                    "id `{}` is already the flow of {}: ids are unique",
                    row.id,
                    rows[first as usize].place.describe()
                ),
            ));
        }
        index.insert(row.id, rows.len() as u32);
        rows.push(row);
        flows.push(flow);
    }
    let mut edges = Vec::new();
    for (child, row) in rows.iter().enumerate() {
        for parent in &row.after {
            let Some(&p) = index.get(parent) else {
                return Err(row.place.error(
                    file,
                    format!(
                        "flow `{}` waits for `{parent}`, which no {} of the file defines",
                        row.id,
                        row.place.holder()
                    ),
                ));
            };
            if p as usize == child {
                return Err(row
                    .place
                    .error(file, format!("flow `{parent}` waits for itself")));
            }
            edges.push(Edge {
                parent: p,
                child: child as u32,
                delay: row.delay,
            });
        }
    }
    let names = rows.iter().map(|r| Box::from(r.id)).collect();
    let mut dag = FlowDag::new(flows.len(), &edges).with_names(names);
    if let Err(stuck) = dag.topological_order() {
        let cycle = a_cycle(&rows, &index, &stuck);
        let first = &rows[cycle[0] as usize];
        let ids: Vec<&str> = cycle.iter().map(|&i| rows[i as usize].id).collect();
        // A long cycle is said by its ends: the message stays a line, not megabytes.
        const SHOWN: usize = 8;
        let chain = if ids.len() > 2 * SHOWN {
            format!(
                "{} waits for … ({} more flows) … waits for {}",
                ids[..SHOWN].join(" waits for "),
                ids.len() - 2 * SHOWN,
                ids[ids.len() - SHOWN..].join(" waits for ")
            )
        } else {
            ids.join(" waits for ")
        };
        return Err(first.place.error(
            file,
            format!(
                "the flows wait for each other in a cycle of {}: {chain} waits for {}, so none \
                 can start",
                ids.len(),
                ids[0]
            ),
        ));
    }
    dag.set_earliest_starts(&mut flows);
    dag.sort(&mut flows);
    Ok((flows, dag))
}

/// One flow as written, checked: its spec and its row; why not, without the place.
fn flow<'a>(r: &'a RawFlow, hosts: u32) -> Result<(FlowSpec, Row<'a>), String> {
    let get = |k: usize| r.fields[k].as_ref();
    let need = |k: usize| match get(k) {
        "" => Err(format!("missing {} `{}`", r.place.field(), COLUMNS[k])),
        v => Ok(v),
    };
    let id = need(0)?;
    if id.contains(char::is_whitespace) {
        return Err(format!("id `{id}` has a space: ids are single words"));
    }
    let host = |k: usize| -> Result<HostIdx, String> {
        let text = need(k)?;
        match text.parse::<u32>() {
            Ok(h) if h < hosts => Ok(HostIdx(h)),
            Ok(h) => Err(format!(
                "{} {h} is not a host: there are {hosts} hosts, numbered 0 to {}",
                COLUMNS[k],
                hosts.saturating_sub(1)
            )),
            Err(_) => Err(format!(
                "{} `{text}` is not a host index (a whole number)",
                COLUMNS[k]
            )),
        }
    };
    let (src, dst) = (host(1)?, host(2)?);
    if src == dst {
        return Err(format!(
            "src and dst are both host {src}: a flow needs two different hosts"
        ));
    }
    let size_text = need(3)?;
    let size_bytes = super::flow_size(size_text)?;
    let after: Vec<&str> = get(5).split_whitespace().collect();
    let ns = |k: usize| -> Result<Option<u64>, String> {
        match get(k) {
            "" => Ok(None),
            text => super::trace::ns_to_ps(text).map(Some).ok_or_else(|| {
                format!(
                    "{} `{text}` is not a time in nanoseconds (a whole number, or with at most \
                     3 decimals)",
                    COLUMNS[k]
                )
            }),
        }
    };
    let start = match (ns(4)?, after.is_empty()) {
        (Some(ps), true) => Time::from_ps(ps),
        (None, true) => {
            return Err(format!(
                "flow `{id}` waits for nothing, so it needs a start_ns"
            ))
        }
        (Some(_), false) => {
            return Err(format!(
                "flow `{id}` has a start_ns and waits for flows ({}): a flow starts either at \
                 its start_ns or after its parents; leave one empty",
                after.join(" ")
            ))
        }
        (None, false) => Time::ZERO,
    };
    let delay = Duration::from_ps(ns(6)?.unwrap_or(0));
    // A root's delay would follow no parent: it once ran at its start_ns without a word.
    if after.is_empty() && delay > Duration::ZERO {
        return Err(format!(
            "flow `{id}` waits for nothing, so its delay_ns `{}` would never apply: delay_ns is \
             the wait after a flow's parents finish; put a root's time in start_ns",
            get(6)
        ));
    }
    let spec = FlowSpec {
        src,
        dst,
        size_bytes,
        start,
        class: FlowClass::Regular,
        verb: None,
    };
    let row = Row {
        place: r.place,
        id,
        after,
        delay,
    };
    Ok((spec, row))
}

/// A cycle among the `stuck` flows (each waits for a stuck parent): walk parents from the
/// first stuck flow until one repeats, and return the loop, each flow followed by the one it
/// waits for.
fn a_cycle(rows: &[Row], index: &HashMap<&str, u32>, stuck: &[bool]) -> Vec<u32> {
    let mut at = stuck.iter().position(|&s| s).unwrap_or(0) as u32;
    let mut seen: Vec<Option<usize>> = vec![None; rows.len()];
    let mut path = Vec::new();
    while seen[at as usize].is_none() {
        seen[at as usize] = Some(path.len());
        path.push(at);
        let next = rows[at as usize]
            .after
            .iter()
            .filter_map(|p| index.get(p).copied())
            .find(|&p| stuck[p as usize]);
        match next {
            Some(p) => at = p,
            None => return path,
        }
    }
    path.split_off(seen[at as usize].unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<(Vec<FlowSpec>, FlowDag), WorkloadError> {
        dag_text(text, "d.csv", 4)
    }

    const HEADER: &str = "id,src,dst,size_bytes,start_ns,after,delay_ns\n";

    /// A diamond: `a` first; `b` and `c` wait for it (`c` 500 ns longer); `d` for both. The
    /// flows come sorted by earliest start, parents before children.
    #[test]
    fn a_diamond_reads_into_a_graph() {
        let text = format!(
            "{HEADER}a,0,1,1000,100,,\nd,2,3,1000,,b c,\nb,1,2,1000,,a,\nc,1,3,1000,,a,500\n"
        );
        let (flows, dag) = read(&text).unwrap();
        assert_eq!(flows.len(), 4);
        let starts: Vec<u64> = flows.iter().map(|f| f.start.as_ps()).collect();
        // a at 100 ns, b at 100 ns, c at 600 ns, d at 600 ns (its latest parent's).
        assert_eq!(starts, [100_000, 100_000, 600_000, 600_000]);
        let srcs: Vec<u32> = flows.iter().map(|f| f.src.0).collect();
        assert_eq!(srcs, [0, 1, 1, 2]);
        assert!(dag.is_root(0) && !dag.is_root(1));
        assert_eq!(dag.parents(3), 2);
        let kids: Vec<(u32, u64)> = dag
            .children(0)
            .iter()
            .map(|&(c, d)| (c.0, d.as_ps()))
            .collect();
        assert_eq!(kids, [(1, 0), (2, 500_000)]);
    }

    #[test]
    fn bad_graphs_name_the_line_and_the_value() {
        let cases = [
            (
                format!("{HEADER}a,0,1,10,0,,\nb,1,2,10,,a c,\nc,1,2,10,,b,\n"),
                "d.csv:3: the flows wait for each other in a cycle of 2: b waits for c waits for b",
            ),
            (
                format!("{HEADER}a,0,1,10,0,,\nb,1,2,10,,zz,\n"),
                "d.csv:3: flow `b` waits for `zz`, which no line of the file defines",
            ),
            (
                format!("{HEADER}a,0,7,10,0,,\n"),
                "d.csv:2: dst 7 is not a host: there are 4 hosts, numbered 0 to 3",
            ),
            (
                format!("{HEADER}a,0,1,10,0,,\n\n# again\na,1,2,10,0,,\n"),
                "d.csv:5: id `a` is already the flow of line 2",
            ),
            (
                format!("{HEADER}a,0,1,10,0,a,\n"),
                "d.csv:2: flow `a` has a start_ns and waits for flows (a)",
            ),
            (
                format!("{HEADER}a,0,1,10,,a,\n"),
                "d.csv:2: flow `a` waits for itself",
            ),
            (
                format!("{HEADER}a,0,1,10,,,\n"),
                "d.csv:2: flow `a` waits for nothing, so it needs a start_ns",
            ),
            (
                format!("{HEADER}a,0,1,10,0,,5\n"),
                "d.csv:2: flow `a` waits for nothing, so its delay_ns `5` would never apply",
            ),
            (
                "id,src,dst,size_bytes,after\n".to_string(),
                "d.csv:1: the header has no `start_ns` column",
            ),
            (
                "id,src,dst,size_bytes,start_ns,after,dealy_ns\na,0,1,10,0,,\n".to_string(),
                "d.csv:1: the header's `dealy_ns` is not a column of a DAG file",
            ),
        ];
        for (text, want) in cases {
            let err = read(&text).unwrap_err().to_string();
            assert!(err.contains(want), "{text}\n{err}");
        }
    }

    /// The diamond of [`a_diamond_reads_into_a_graph`] as JSON reads into the same flows and
    /// graph, its ids kept in the flows' new order; ids may be numbers.
    #[test]
    fn json_reads_like_csv() {
        let csv = format!(
            "{HEADER}a,0,1,1000,100,,\nd,2,3,1000,,b c,\nb,1,2,1000,,a,\nc,1,3,1000,,a,500\n"
        );
        let json = r#"[
            {"id": "a", "src": 0, "dst": 1, "size_bytes": 1000, "start_ns": 100},
            {"id": "d", "src": 2, "dst": 3, "size_bytes": 1000, "after": ["b", "c"]},
            {"id": "b", "src": 1, "dst": 2, "size_bytes": 1000, "after": ["a"], "delay_ns": null},
            {"id": "c", "src": 1, "dst": 3, "size_bytes": 1000, "after": ["a"], "delay_ns": 500}
        ]"#;
        let (csv_flows, csv_dag) = read(&csv).unwrap();
        let (flows, dag) = dag_json_text(json, "d.json", 4).unwrap();
        assert_eq!(flows, csv_flows);
        assert_eq!(dag, csv_dag);
        let names: Vec<&str> = (0..4).filter_map(|f| dag.name(f)).collect();
        assert_eq!(names, ["a", "b", "c", "d"]);
        let numbered = r#"[{"id": 7, "src": 0, "dst": 1, "size_bytes": 10, "start_ns": 1.5},
                           {"id": 8, "src": 1, "dst": 2, "size_bytes": 10, "after": [7]}]"#;
        let (flows, dag) = dag_json_text(numbered, "d.json", 4).unwrap();
        assert_eq!(flows[0].start.as_ps(), 1_500);
        assert_eq!((dag.name(0), dag.name(1)), (Some("7"), Some("8")));
        // A root's delay of 0 is no delay; whole ids read exactly up to u64's largest.
        let big = r#"[{"id": 18446744073709551615, "src": 0, "dst": 1, "size_bytes": 10,
                        "start_ns": 0, "delay_ns": 0},
                       {"id": -3, "src": 1, "dst": 2, "size_bytes": 10,
                        "after": [18446744073709551615]}]"#;
        let (_, dag) = dag_json_text(big, "d.json", 4).unwrap();
        assert_eq!(
            (dag.name(0), dag.name(1)),
            (Some("18446744073709551615"), Some("-3"))
        );
    }

    #[test]
    fn bad_json_names_the_file_the_index_and_the_value() {
        let flow = |i: &str, rest: &str| {
            format!(r#"{{"id": "{i}", "src": 0, "dst": 1, "size_bytes": 10{rest}}}"#)
        };
        let root = |i: &str| flow(i, r#", "start_ns": 0"#);
        let cases = [
            (
                format!(
                    "[{}, {}, {}]",
                    root("a"),
                    flow("b", r#", "after": ["a", "c"]"#),
                    flow("c", r#", "after": ["b"]"#)
                ),
                "d.json: flow at index 1: the flows wait for each other in a cycle of 2: b waits for \
                 c waits for b",
            ),
            (
                format!("[{}, {}]", root("a"), flow("b", r#", "after": ["zz"]"#)),
                "d.json: flow at index 1: flow `b` waits for `zz`, which no flow of the file \
                 defines",
            ),
            (
                r#"[{"id": "a", "src": 0, "dst": 7, "size_bytes": 10, "start_ns": 0}]"#.into(),
                "d.json: flow at index 0: dst 7 is not a host: there are 4 hosts, numbered 0 \
                 to 3",
            ),
            (
                format!("[{}, {}]", root("a"), root("a")),
                "d.json: flow at index 1: id `a` is already the flow of index 0",
            ),
            (
                format!("[{}, {}]", root("a"), flow("b", r#", "src": 2, "after": ["a"]"#)),
                "d.json: flow at index 1: key `src` is written twice; a flow gives each key once",
            ),
            (
                format!("[{}]", flow("a", r#", "start_ns": 0, "size": 3"#)),
                "d.json: flow at index 0: unknown key `size`; a flow's keys are id, src, dst",
            ),
            (
                format!("[{}]", flow("a", "")),
                "d.json: flow at index 0: flow `a` waits for nothing, so it needs a start_ns",
            ),
            (
                r#"[{"src": 0, "dst": 1, "size_bytes": 10, "start_ns": 0}]"#.into(),
                "d.json: flow at index 0: missing key `id`",
            ),
            (
                format!("[{}]", flow("a", r#", "start_ns": 0, "after": [true]"#)),
                "d.json: flow at index 0: `after` lists true: ids are strings or whole numbers",
            ),
            (
                format!("[{}]", flow("a", r#", "start_ns": 1e-4"#)),
                "d.json: flow at index 0: start_ns `0.0001` is not a time in nanoseconds",
            ),
            (
                format!("[{}]", flow("a", r#", "start_ns": 0, "delay_ns": 7"#)),
                "d.json: flow at index 0: flow `a` waits for nothing, so its delay_ns `7` would \
                 never apply",
            ),
            (
                r#"[{"id": 1e300, "src": 0, "dst": 1, "size_bytes": 10, "start_ns": 0}]"#.into(),
                "d.json: flow at index 0: id 1e+300 is not a whole number from",
            ),
            (
                format!(
                    "[{}, {}]",
                    r#"{"id": 18446744073709551616, "src": 0, "dst": 1, "size_bytes": 10, "start_ns": 0}"#,
                    flow("b", r#", "after": [18446744073709551617]"#)
                ),
                "d.json: flow at index 0: id 1.8446744073709552e+19 is not a whole number",
            ),
            (
                format!("[{}, {}]", root("a"), flow("b", r#", "after": [1.0]"#)),
                "d.json: flow at index 1: id 1.0 is not a whole number",
            ),
            (
                format!("[{}, 3]", root("a")),
                "d.json: flow at index 1: the number 3, not an object of keys id, src",
            ),
            (
                r#"{"flows": []}"#.into(),
                "d.json: a JSON DAG file is an array of flow objects",
            ),
            (
                "[{\"id\": ".into(),
                "d.json: not valid JSON: EOF while parsing",
            ),
        ];
        for (text, want) in cases {
            let err = dag_json_text(&text, "d.json", 4).unwrap_err().to_string();
            assert!(err.contains(want), "{text}\n{err}");
        }
    }

    #[test]
    fn the_format_follows_the_extension() {
        assert_eq!(DagFormat::of(Path::new("x/dag.JSON")), DagFormat::Json);
        assert_eq!(DagFormat::of(Path::new("dag.csv")), DagFormat::Csv);
        assert_eq!(DagFormat::of(Path::new("dag")), DagFormat::Csv);
    }

    #[test]
    fn sorting_renumbers_the_edges() {
        let mut flows: Vec<FlowSpec> = [30u64, 10, 20]
            .iter()
            .map(|&ns| FlowSpec {
                src: HostIdx(0),
                dst: HostIdx(1),
                size_bytes: 1,
                start: Time::from_ps(ns * 1000),
                class: FlowClass::Regular,
                verb: None,
            })
            .collect();
        let edge = |parent, child| Edge {
            parent,
            child,
            delay: Duration::ZERO,
        };
        let mut dag = FlowDag::new(3, &[edge(1, 0), edge(1, 2)]);
        let order = dag.sort(&mut flows);
        assert_eq!(order, [1, 2, 0]);
        let edges: Vec<(u32, u32)> = dag.edges().map(|e| (e.parent, e.child)).collect();
        assert_eq!(edges, [(0, 2), (0, 1)]);
    }
}
