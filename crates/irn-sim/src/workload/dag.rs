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
//! [`dag_csv`] reads a graph from a CSV file (`kind = "dag"`):
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

use std::collections::HashMap;
use std::path::Path;

use irn_core::time::{Duration, Time};

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
        }
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
        *self = FlowDag::new(flows.len(), &edges);
        order
    }
}

/// The columns of a DAG file.
const COLUMNS: [&str; 7] = [
    "id",
    "src",
    "dst",
    "size_bytes",
    "start_ns",
    "after",
    "delay_ns",
];

/// A DAG file's flows (sorted by earliest start, see [`FlowDag::set_earliest_starts`]) and
/// their graph.
pub fn dag_csv(path: &Path, hosts: u32) -> Result<(Vec<FlowSpec>, FlowDag), WorkloadError> {
    let (text, file) = super::trace::read_flows(path)?;
    dag_text(&text, &file, hosts)
}

/// One row of a DAG file, as read.
struct Row<'a> {
    line: u64,
    id: &'a str,
    after: Vec<&'a str>,
    delay: Duration,
}

/// [`dag_csv`] of text already read; `file` names it in errors.
///
/// Errors name the file, the line and the value: a duplicate id, an unknown parent, a host
/// outside the network, a flow waiting for itself or on a cycle (the cycle is spelled out), a
/// root without a start or a flow with parents and a start.
pub fn dag_text(
    text: &str,
    file: &str,
    hosts: u32,
) -> Result<(Vec<FlowSpec>, FlowDag), WorkloadError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let at = |line: u64, problem: String| WorkloadError::at(file, line, problem);
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
            return Err(at(
                header_line,
                format!(
                    "the header has no `{name}` column; a DAG file starts with the header `{}` \
                     (delay_ns optional)",
                    COLUMNS.join(",")
                ),
            ));
        }
    }
    let mut flows = Vec::new();
    let mut rows: Vec<Row> = Vec::new();
    let mut index: HashMap<&str, u32> = HashMap::new();
    for (line, content) in lines {
        let fields: Vec<&str> = content.split(',').map(str::trim).collect();
        if fields.len() > names.len() {
            return Err(at(
                line,
                format!(
                    "{} fields, but the header names only {} columns",
                    fields.len(),
                    names.len()
                ),
            ));
        }
        let get = |k: usize| fields.get(cols[k]).copied().unwrap_or("");
        let need = |k: usize| match get(k) {
            "" => Err(at(line, format!("missing column `{}`", COLUMNS[k]))),
            v => Ok(v),
        };
        let id = need(0)?;
        if id.contains(char::is_whitespace) {
            return Err(at(
                line,
                format!("id `{id}` has a space: ids are single words"),
            ));
        }
        if let Some(&first) = index.get(id) {
            return Err(at(
                line,
                format!(
                    "id `{id}` is already the flow of line {}: ids are unique",
                    rows[first as usize].line
                ),
            ));
        }
        let host = |k: usize| -> Result<HostIdx, WorkloadError> {
            let text = need(k)?;
            match text.parse::<u32>() {
                Ok(h) if h < hosts => Ok(HostIdx(h)),
                Ok(h) => Err(at(
                    line,
                    format!(
                        "{} {h} is not a host: there are {hosts} hosts, numbered 0 to {}",
                        COLUMNS[k],
                        hosts.saturating_sub(1)
                    ),
                )),
                Err(_) => Err(at(
                    line,
                    format!(
                        "{} `{text}` is not a host index (a whole number)",
                        COLUMNS[k]
                    ),
                )),
            }
        };
        let (src, dst) = (host(1)?, host(2)?);
        if src == dst {
            return Err(at(
                line,
                format!("src and dst are both host {src}: a flow needs two different hosts"),
            ));
        }
        let size_text = need(3)?;
        let size_bytes = match size_text.parse::<u64>() {
            Ok(0) => {
                return Err(at(
                    line,
                    "size_bytes is 0: every flow carries at least one byte".into(),
                ))
            }
            Ok(b) => b,
            Err(_) => {
                return Err(at(
                    line,
                    format!("size_bytes `{size_text}` is not a whole number of bytes"),
                ))
            }
        };
        let after: Vec<&str> = get(5).split_whitespace().collect();
        let ns = |k: usize| -> Result<Option<u64>, WorkloadError> {
            match get(k) {
                "" => Ok(None),
                text => super::trace::ns_to_ps(text).map(Some).ok_or_else(|| {
                    at(
                        line,
                        format!(
                            "{} `{text}` is not a time in nanoseconds (a whole number, or with \
                             at most 3 decimals)",
                            COLUMNS[k]
                        ),
                    )
                }),
            }
        };
        let start = match (ns(4)?, after.is_empty()) {
            (Some(ps), true) => Time::from_ps(ps),
            (None, true) => {
                return Err(at(
                    line,
                    format!("flow `{id}` waits for nothing, so it needs a start_ns"),
                ))
            }
            (Some(_), false) => {
                return Err(at(
                    line,
                    format!(
                        "flow `{id}` has a start_ns and waits for flows ({}): a flow starts \
                         either at its start_ns or after its parents; leave one empty",
                        after.join(" ")
                    ),
                ))
            }
            (None, false) => Time::ZERO,
        };
        let delay = Duration::from_ps(ns(6)?.unwrap_or(0));
        index.insert(id, rows.len() as u32);
        rows.push(Row {
            line,
            id,
            after,
            delay,
        });
        flows.push(FlowSpec {
            src,
            dst,
            size_bytes,
            start,
            class: FlowClass::Regular,
            verb: None,
        });
    }
    let mut edges = Vec::new();
    for (child, row) in rows.iter().enumerate() {
        for parent in &row.after {
            let Some(&p) = index.get(parent) else {
                return Err(at(
                    row.line,
                    format!(
                        "flow `{}` waits for `{parent}`, which no line of the file defines",
                        row.id
                    ),
                ));
            };
            if p as usize == child {
                return Err(at(row.line, format!("flow `{parent}` waits for itself")));
            }
            edges.push(Edge {
                parent: p,
                child: child as u32,
                delay: row.delay,
            });
        }
    }
    let mut dag = FlowDag::new(flows.len(), &edges);
    if let Err(stuck) = dag.topological_order() {
        let cycle = a_cycle(&rows, &index, &stuck);
        let first = &rows[cycle[0] as usize];
        let ids: Vec<&str> = cycle.iter().map(|&i| rows[i as usize].id).collect();
        return Err(at(
            first.line,
            format!(
                "the flows wait for each other in a cycle: {} waits for {}, so none can start",
                ids.join(" waits for "),
                ids[0]
            ),
        ));
    }
    dag.set_earliest_starts(&mut flows);
    dag.sort(&mut flows);
    Ok((flows, dag))
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
                "d.csv:3: the flows wait for each other in a cycle: b waits for c waits for b",
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
                "id,src,dst,size_bytes,after\n".to_string(),
                "d.csv:1: the header has no `start_ns` column",
            ),
        ];
        for (text, want) in cases {
            let err = read(&text).unwrap_err().to_string();
            assert!(err.contains(want), "{text}\n{err}");
        }
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
