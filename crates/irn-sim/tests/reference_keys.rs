//! `docs/scenario-reference.md` is the reference of every scenario key. Its tables cannot drift
//! from the code: every key the code reads is a row (or a section heading) of the page and
//! every row is a key the code reads, both taken from the code (`schema/`, shared with
//! `example_keys.rs`); and every default written as a plain value is the default, checked by
//! resolving the scenario with `--set key=<that value>` and without it: the two runs must be
//! configured alike.

mod schema;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use irn_sim::scenario;
use schema::keys_in_code;

/// One row of a key table: its dotted key and its default cell as written.
struct Row {
    key: String,
    default: String,
}

/// The page's keys: its section headings (`## `[topology]``, `### `[[failures.link]]``, whose
/// name is the heading's leading backquoted text) and its tables' rows (`| `k` | default | …`
/// under a `| key | default |` header), each row's key placed under the heading above it; the
/// rows of the heading "Top level" are top-level keys.
fn reference(text: &str) -> (BTreeSet<String>, Vec<Row>) {
    let mut headings = BTreeSet::new();
    let mut rows = Vec::new();
    let mut section: Option<String> = None;
    let mut in_table = false;
    for line in text.lines() {
        if let Some(title) = line.strip_prefix('#') {
            let title = title.trim_start_matches('#').trim();
            section = match title.strip_prefix('`') {
                Some(name) => {
                    let name = name.split('`').next().unwrap_or_default();
                    let name = name.trim_matches(|c| c == '[' || c == ']').to_string();
                    headings.insert(name.clone());
                    Some(name)
                }
                None if title == "Top level" => Some(String::new()),
                None => None,
            };
            continue;
        }
        if line.starts_with("| key | default |") {
            in_table = true;
            continue;
        }
        if !line.starts_with('|') {
            in_table = false;
        }
        if !in_table || !line.starts_with("| `") {
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        let key = cells[0].trim_matches('`');
        let section = section
            .as_deref()
            .unwrap_or_else(|| panic!("row `{key}` is under no section heading"));
        rows.push(Row {
            key: if section.is_empty() {
                key.to_string()
            } else {
                format!("{section}.{key}")
            },
            default: cells.get(1).copied().unwrap_or_default().to_string(),
        });
    }
    (headings, rows)
}

/// The fields of the table that `header` opens (`[[failures.link]]`), as serde lists them when
/// refusing a key no table has.
fn fields_of(header: &str) -> Vec<String> {
    let text = format!("{header}\nnot_a_key_anywhere = 1\n");
    let err = scenario::parse(&text, "t.toml", Path::new("."), &[])
        .unwrap_err()
        .to_string();
    let (_, expected) = err
        .split_once("unknown field `not_a_key_anywhere`, expected ")
        .unwrap_or_else(|| panic!("{header}: no list of fields in {err:?}"));
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect()
}

/// Every key the reference must have: the scenario keys, a wan's sites' keys folded onto
/// `[topology]`'s (a site takes every `[topology]` key, which the page says once), and the
/// keys of the tables lists hold and of `[experiment]` and `[[check]]`, which the schema walk
/// leaves out.
fn keys_to_document() -> BTreeSet<String> {
    let code = keys_in_code();
    let mut keys: BTreeSet<String> = code
        .iter()
        .filter(|k| {
            let site = ["topology.site.", "topology.site_b."]
                .iter()
                .find_map(|p| k.strip_prefix(p));
            site.is_none_or(|rest| {
                assert!(code.contains(&format!("topology.{rest}")), "{k}");
                false
            })
        })
        .cloned()
        .collect();
    for (header, at) in [
        ("[[topology.lossy_link]]", "topology.lossy_link"),
        ("[[failures.link]]", "failures.link"),
        ("[[workload.job]]", "workload.job"),
        ("[experiment]", "experiment"),
        ("[[experiment.point]]", "experiment.point"),
        ("[[check]]", "check"),
    ] {
        keys.insert(at.to_string());
        for field in fields_of(header) {
            keys.insert(format!("{at}.{field}"));
        }
    }
    keys
}

fn page() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read_to_string(root.join("docs/scenario-reference.md")).unwrap()
}

#[test]
fn the_reference_has_a_row_for_every_key_and_no_other() {
    let (headings, rows) = reference(&page());
    let mut documented = headings.clone();
    let mut seen = BTreeSet::new();
    for row in &rows {
        assert!(seen.insert(&row.key), "{} has two rows", row.key);
        documented.insert(row.key.clone());
    }
    let code = keys_to_document();
    // Sanity: the page was read whole.
    for key in [
        "name",
        "topology.wan.delay",
        "transport.dcqcn.g",
        "check.expect",
    ] {
        assert!(
            documented.contains(key),
            "{key} missing from {documented:?}"
        );
    }
    let missing: Vec<&String> = code.difference(&documented).collect();
    assert!(
        missing.is_empty(),
        "docs/scenario-reference.md has no row for {missing:?}"
    );
    let unknown: Vec<&String> = documented.difference(&code).collect();
    assert!(
        unknown.is_empty(),
        "docs/scenario-reference.md documents keys the code does not read: {unknown:?}"
    );
}

/// Rows with a plain default that `--set` cannot check, and why.
const NOT_SET: &[(&str, &str)] = &[
    (
        "pause_control.ports",
        "a key of a list's entries: `--set` writes the list whole, and the default `\"long-haul\"` \
         needs a wan, whose rule entries need a threshold set too",
    ),
    ("workload.job.placement", JOB_KEY),
    ("workload.job.channels", JOB_KEY),
    ("workload.job.iterations", JOB_KEY),
    ("workload.job.compute_gap", JOB_KEY),
    ("workload.job.start", JOB_KEY),
];

/// Why a collective job's defaults are not `--set` (each is checked by the collectives'
/// tests instead).
const JOB_KEY: &str = "a key of a list's entries: `--set` writes the list whole";

/// What a key needs beside it to apply (the longest matching prefix of whole names, or one
/// ending in `_`, wins); never the key itself, which keeps its default in the run without it.
const CONTEXTS: &[(&str, &[&str])] = &[
    ("topology.switches", &["topology.kind=\"jellyfish\""]),
    ("topology.ports", &["topology.kind=\"jellyfish\""]),
    ("topology.leaves", LEAF_SPINE),
    ("topology.spines", LEAF_SPINE),
    ("topology.hosts_per_leaf", LEAF_SPINE),
    ("topology.pods", &["topology.kind=\"clos3\""]),
    ("topology.super_spines", &["topology.kind=\"clos3\""]),
    ("topology.groups", &["topology.kind=\"rail\""]),
    ("topology.servers", &["topology.kind=\"rail\""]),
    ("topology.rails", &["topology.kind=\"rail\""]),
    ("topology.paths", &["topology.routing=\"k-shortest\""]),
    ("topology.wan", &["topology.kind=\"wan\""]),
    ("switch.alpha", SHARED),
    ("switch.scheduling", SHARED),
    (
        "switch.deflection_ttl",
        &[
            "switch.model=\"shared-buffer\"",
            "switch.deflection=\"dibs\"",
        ],
    ),
    ("switch.pfc_threshold", &["switch.pfc=true"]),
    ("switch.pfc_resume_gap", &["switch.pfc=true"]),
    ("switch.pfc_frames", &["switch.pfc=true"]),
    (
        "switch.pfc_pause_quanta",
        &["switch.pfc=true", "switch.pfc_frames=\"timed\""],
    ),
    (
        "switch.pfc_refresh",
        &["switch.pfc=true", "switch.pfc_frames=\"timed\""],
    ),
    ("switch.credit_", &["switch.credits=true"]),
    ("load_balancing.samples", &["load_balancing.kind=\"drill\""]),
    ("load_balancing.memory", &["load_balancing.kind=\"drill\""]),
    ("load_balancing.ties", &["load_balancing.kind=\"drill\""]),
    ("load_balancing.control", &["load_balancing.kind=\"drill\""]),
    (
        "load_balancing.flowlet_gap",
        &["load_balancing.kind=\"letflow\""],
    ),
    ("load_balancing.reply_extra", CONWEAVE),
    ("load_balancing.path_busy", CONWEAVE),
    ("load_balancing.inactive", CONWEAVE),
    ("load_balancing.flush_slack", CONWEAVE),
    ("load_balancing.default_wait", CONWEAVE),
    ("load_balancing.static_paths", CONWEAVE),
    ("load_balancing.reorder_buffer", CONWEAVE),
    ("ordering.size", &["ordering.kind=\"static-bitmap\""]),
    ("ordering.block_bits", EUNOMIA),
    ("ordering.cap", EUNOMIA),
    ("ordering.pool_blocks", EUNOMIA),
    ("ordering.max_connections", EUNOMIA),
    ("ordering.records_in_pool", EUNOMIA),
    ("ordering.sample_interval", IDEAL),
    ("ordering.write_last", IDEAL),
    ("ordering.feedback", IDEAL),
    (
        "ordering.write_last_delay",
        &[
            "ordering.kind=\"ideal\"",
            "ordering.write_last=\"receiver\"",
        ],
    ),
    ("transport.tx_window", GO_BACK_N),
    ("transport.slow_restart", GO_BACK_N),
    ("transport.slow_restart_factor", SLOW_RESTART),
    ("transport.slow_restart_growth", SLOW_RESTART),
    ("transport.nack_interval", GO_BACK_N),
    ("transport.acks", GO_BACK_N),
    ("transport.dcqcn", &["transport.cc=\"dcqcn\""]),
    ("transport.timely", &["transport.cc=\"timely\""]),
    ("transport.hpcc", &["transport.cc=\"hpcc\""]),
    ("transport.swift", &["transport.cc=\"swift\""]),
    ("transport.powertcp", &["transport.cc=\"powertcp\""]),
    (
        "transport.timely.segment",
        &[
            "transport.cc=\"timely\"",
            "transport.timely.update=\"per-segment\"",
        ],
    ),
    ("transport.dctcp", &["transport.cc=\"dctcp\""]),
    ("transport.aimd", &["transport.cc=\"aimd\""]),
    ("transport.mp_rdma", &["transport.kind=\"mp-rdma\""]),
    ("workload.total", INCAST),
    ("workload.flows_per_sender", INCAST),
    ("workload.receiver", INCAST),
    (
        "workload.size",
        &["workload={ kind = \"queries\", load = 0.1, duration = \"200us\" }"],
    ),
    ("workload.verbs", &["workload.verbs={ send = 1 }"]),
    ("workload.verbs.send", &["workload.verbs={ write = 1 }"]),
    ("monitor", &["monitor.interval=\"10us\""]),
    ("failures", &["failures.fraction=0.05"]),
    (
        "pauses",
        &[
            "pauses.hosts=[1]",
            "pauses.gap=\"10us\"",
            "pauses.length=\"1us\"",
        ],
    ),
];

const LEAF_SPINE: &[&str] = &["topology.kind=\"leaf-spine\""];
const SHARED: &[&str] = &["switch.model=\"shared-buffer\""];
const CONWEAVE: &[&str] = &[
    "topology={ kind = \"leaf-spine\", leaves = 2, spines = 2, hosts_per_leaf = 2 }",
    "load_balancing.kind=\"conweave\"",
];
const EUNOMIA: &[&str] = &["ordering.kind=\"eunomia\""];
const IDEAL: &[&str] = &["ordering.kind=\"ideal\""];
const GO_BACK_N: &[&str] = &["transport.kind=\"irn-go-back-n\""];
const SLOW_RESTART: &[&str] = &[
    "transport.kind=\"irn-go-back-n\"",
    "transport.slow_restart=true",
    "transport.tx_window=16",
];
const INCAST: &[&str] = &["workload={ kind = \"incast\", senders = 2 }"];

/// Keeps the runs short: 20 us of arrivals, unless the key or its context is the workload's.
const SHORT: &str = "workload.duration=\"20us\"";

/// The overrides a key's default is checked under: its context, and [`SHORT`].
fn context(key: &str) -> Vec<String> {
    let context = CONTEXTS
        .iter()
        .filter(|(prefix, _)| {
            key.strip_prefix(prefix).is_some_and(|rest| {
                rest.is_empty() || rest.starts_with('.') || prefix.ends_with('_')
            })
        })
        .max_by_key(|(prefix, _)| prefix.len())
        .map_or(&[][..], |(_, c)| c);
    let mut o: Vec<String> = context.iter().map(|s| s.to_string()).collect();
    if key != "workload.duration" && !o.iter().any(|c| c.starts_with("workload=")) {
        o.push(SHORT.to_string());
    }
    o
}

/// A run as configured: its name, its configuration and its warnings, or the error.
fn configured(overrides: &[String]) -> Result<String, String> {
    let s = scenario::parse("", "t.toml", Path::new("."), overrides).map_err(|e| e.to_string())?;
    let run = &s.runs[0];
    Ok(format!("{} {:?} {:?}", run.name, run.config, run.warnings))
}

/// The default cell's value when it is a plain one (one backquoted TOML value), `None` when it
/// says what the default depends on (it starts with "—"); anything else fails, so that a
/// default is either checked or plainly marked as not checkable.
fn plain_default(row: &Row) -> Option<String> {
    if row.default.starts_with('—') {
        return None;
    }
    let value = row
        .default
        .strip_prefix('`')
        .and_then(|d| d.strip_suffix('`'))
        .filter(|d| !d.contains('`'))
        .unwrap_or_else(|| {
            panic!(
                "{}: the default {:?} is neither one `value` nor \"— what it depends on\"",
                row.key, row.default
            )
        });
    assert!(
        toml::from_str::<toml::Table>(&format!("v = {value}")).is_ok(),
        "{}: the default {value} is not a TOML value",
        row.key
    );
    Some(value.to_string())
}

#[test]
fn every_plain_default_is_the_default() {
    let (_, rows) = reference(&page());
    let mut without: BTreeMap<Vec<String>, String> = BTreeMap::new();
    let mut wrong = Vec::new();
    let mut checked = 0;
    for row in &rows {
        let Some(value) = plain_default(row) else {
            continue;
        };
        if NOT_SET.iter().any(|(k, _)| *k == row.key) {
            continue;
        }
        let overrides = context(&row.key);
        let base = without.entry(overrides.clone()).or_insert_with(|| {
            configured(&overrides)
                .unwrap_or_else(|e| panic!("{}: its context {overrides:?} fails: {e}", row.key))
        });
        let mut with = overrides.clone();
        with.push(format!("{}={value}", row.key));
        match configured(&with) {
            Ok(run) if run == *base => checked += 1,
            Ok(_) => wrong.push(format!(
                "{} = {value} configures another run than leaving it out",
                row.key
            )),
            Err(e) => wrong.push(format!(
                "{} = {value} is refused (give it a context in CONTEXTS): {e}",
                row.key
            )),
        }
    }
    assert!(checked > 100, "only {checked} defaults checked");
    assert!(
        wrong.is_empty(),
        "docs/scenario-reference.md's defaults:\n{}",
        wrong.join("\n")
    );
}
