//! Every numeric and duration key of the scenario format, fed extreme values (0, "0s", "1ps",
//! the largest integers, 1e308, -1, nan, inf, absurd sizes and rates): each must be refused
//! with an error naming the key (and its range, or the form it is written in), or give a run
//! that ends within a bounded multiple of a normal run's events (and, for `[monitor]`, rows).
//!
//! The keys come from the code (`schema/`, which `example_keys.rs` shares), so a key added
//! later is fed the same values. Each is set on a tiny scenario (a 4-host star at 10 Gb/s,
//! 30 us of arrivals) plus the few keys that make it apply (its kind, say); a key whose
//! context is missing fails the test with "does not apply", so a new key cannot slip by.

mod schema;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use irn_sim::scenario;
use irn_sim::series::{FlowSample, NicSample, PortSample, SeriesSink};

/// The tiny scenario every key is set on.
const BASE: &str = r#"
[topology]
kind = "star"
hosts = 4
link_rate = "10Gbps"
link_delay = "1us"
[workload]
load = 0.5
sizes = { fixed = "10KB" }
duration = "30us"
[run]
drain_limit = "1ms"
"#;

/// What each key needs beside it to apply (longest matching prefix wins): `--set` overrides
/// given before the key's own value, which wins over them.
const CONTEXTS: &[(&str, &[&str])] = &[
    ("topology.kind", &["topology={ kind = \"star\", hosts = 4, link_rate = \"10Gbps\" }"]),
    ("topology.k", &["topology={ kind = \"fat-tree\", k = 2, link_rate = \"10Gbps\" }"]),
    ("topology.left", DUMBBELL),
    ("topology.right", DUMBBELL),
    ("topology.bottleneck_rate", DUMBBELL),
    ("topology.leaves", LEAF_SPINE),
    ("topology.spines", LEAF_SPINE),
    ("topology.hosts_per_leaf", LEAF_SPINE),
    ("topology.spine_link_rate", LEAF_SPINE),
    ("topology.pods", CLOS3),
    ("topology.super_spines", CLOS3),
    ("topology.groups", RAIL),
    ("topology.servers", RAIL),
    ("topology.rails", RAIL),
    ("topology.switches", JELLYFISH),
    ("topology.ports", JELLYFISH),
    ("topology.seed", JELLYFISH),
    ("topology.paths", &["topology.routing=\"k-shortest\""]),
    // Only the key: every value here names a file that is not there.
    ("topology.file", &["topology={}"]),
    ("topology.site", WAN),
    ("topology.site_b", WAN),
    ("topology.wan", WAN),
    ("switch.alpha", SHARED),
    ("switch.ingress_alpha", &["switch.model=\"shared-buffer\"", "switch.pfc=true"]),
    ("switch.egress_alpha", SHARED),
    ("switch.scheduling", SHARED),
    ("switch.pfc_threshold", &["switch.pfc=true"]),
    ("switch.pfc_resume_gap", &["switch.pfc=true"]),
    ("switch.pfc_frames", &["switch.pfc=true"]),
    ("switch.pfc_pause_quanta", TIMED),
    ("switch.pfc_refresh", TIMED),
    ("switch.pfc_headroom", &["switch.model=\"shared-buffer\"", "switch.pfc=true"]),
    ("switch.credit_window_blocks", CREDITS),
    ("switch.credit_counter_bits", CREDITS),
    ("switch.credit_interval", CREDITS),
    ("switch.credit_update_blocks", CREDITS),
    ("switch.ecn_kmin", ECN),
    ("switch.ecn_kmax", ECN),
    ("switch.ecn_pmax", ECN),
    ("switch.deflection_ttl", &["switch.model=\"shared-buffer\"", "switch.deflection=\"dibs\""]),
    ("load_balancing.samples", &["load_balancing.kind=\"drill\""]),
    ("load_balancing.memory", &["load_balancing.kind=\"drill\""]),
    ("load_balancing.flowlet_gap", &["load_balancing.kind=\"letflow\""]),
    ("load_balancing.reply_extra", CONWEAVE),
    ("load_balancing.path_busy", CONWEAVE),
    ("load_balancing.inactive", CONWEAVE),
    ("load_balancing.flush_slack", CONWEAVE),
    ("load_balancing.default_wait", CONWEAVE),
    ("load_balancing.reorder_queues", CONWEAVE),
    ("load_balancing.reorder_queue_groups", CONWEAVE_QUEUES),
    ("load_balancing.flow_table", CONWEAVE),
    ("load_balancing.static_paths", CONWEAVE),
    ("load_balancing.reorder_buffer", CONWEAVE),
    ("ordering.size", &["ordering.kind=\"static-bitmap\""]),
    ("ordering.block_bits", &["ordering.kind=\"eunomia\""]),
    ("ordering.cap", &["ordering.kind=\"eunomia\""]),
    ("ordering.pool_blocks", &["ordering.kind=\"eunomia\""]),
    ("ordering.sample_interval", &["ordering.kind=\"ideal\""]),
    ("ordering.write_last", &["ordering.kind=\"ideal\""]),
    ("ordering.write_last_delay", &["ordering.kind=\"ideal\"", "ordering.write_last=\"receiver\""]),
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
    ("transport.timely.segment", &["transport.cc=\"timely\"", "transport.timely.update=\"per-segment\""]),
    ("transport.dctcp", &["transport.cc=\"dctcp\""]),
    ("transport.aimd", &["transport.cc=\"aimd\""]),
    ("transport.mp_rdma", &["transport.kind=\"mp-rdma\""]),
    ("workload.senders", INCAST),
    ("workload.total", INCAST),
    ("workload.receiver", INCAST),
    ("workload.background_load", INCAST),
    ("workload.background_duration", &["workload={ kind = \"incast\", senders = 2, total = \"20KB\", background_load = 0.1 }"]),
    ("workload.size", &["workload={ kind = \"queries\", load = 0.1, senders = 2, size = \"1KB\", duration = \"30us\" }"]),
    // Only the key: every value here names a file that is not there.
    ("workload.file", &["workload={ kind = \"trace\" }"]),
    ("workload.csv", &["workload={ kind = \"trace\", csv = \"src,dst,size_bytes,start_ns\\n0,1,1000,0\" }"]),
    ("monitor", &["monitor.interval=\"1us\""]),
    ("pauses", &["pauses.hosts=[1]", "pauses.gap=\"10us\"", "pauses.length=\"1us\""]),
    ("failures", &["topology={ kind = \"leaf-spine\", leaves = 2, spines = 2, hosts_per_leaf = 2, link_rate = \"10Gbps\" }", "failures.fraction=0.5", "failures.interval=\"10us\""]),
];

/// Keys whose context cannot run alone (the key itself is required there): their values are
/// checked against the base scenario's run.
const NO_RUN_ALONE: &[&str] = &["topology.file", "workload.file"];

const DUMBBELL: &[&str] =
    &["topology={ kind = \"dumbbell\", left = 2, right = 2, link_rate = \"10Gbps\" }"];
const CREDITS: &[&str] = &["switch.credits=true"];
const ECN: &[&str] = &["switch.ecn=\"dcqcn\""];
const SLOW_RESTART: &[&str] = &[
    "transport.kind=\"irn-go-back-n\"",
    "transport.slow_restart=true",
    "transport.tx_window=16",
];
const LEAF_SPINE: &[&str] = &[
    "topology={ kind = \"leaf-spine\", leaves = 2, spines = 2, hosts_per_leaf = 2, link_rate = \"10Gbps\" }",
];
const CLOS3: &[&str] = &[
    "topology={ kind = \"clos3\", pods = 2, leaves = 1, hosts_per_leaf = 2, spines = 1, super_spines = 1, link_rate = \"10Gbps\" }",
];
const RAIL: &[&str] = &[
    "topology={ kind = \"rail\", groups = 1, servers = 2, rails = 2, spines = 1, link_rate = \"10Gbps\" }",
];
const JELLYFISH: &[&str] = &[
    "topology={ kind = \"jellyfish\", switches = 4, ports = 4, hosts = 4, link_rate = \"10Gbps\" }",
];
const WAN: &[&str] = &[
    "topology={ kind = \"wan\", site = { kind = \"star\", hosts = 2, link_rate = \"10Gbps\" }, wan = { delay = \"10us\", rate = \"10Gbps\" } }",
];
const SHARED: &[&str] = &["switch.model=\"shared-buffer\""];
const TIMED: &[&str] = &["switch.pfc=true", "switch.pfc_frames=\"timed\""];
const CONWEAVE: &[&str] = &[
    "topology={ kind = \"leaf-spine\", leaves = 2, spines = 2, hosts_per_leaf = 2, link_rate = \"10Gbps\" }",
    "load_balancing.kind=\"conweave\"",
];
const CONWEAVE_QUEUES: &[&str] = &[
    "topology={ kind = \"leaf-spine\", leaves = 2, spines = 2, hosts_per_leaf = 2, link_rate = \"10Gbps\" }",
    "load_balancing.kind=\"conweave\"",
    "load_balancing.reorder_queues=12",
];
const GO_BACK_N: &[&str] = &["transport.kind=\"irn-go-back-n\""];
const INCAST: &[&str] = &["workload={ kind = \"incast\", senders = 2, total = \"20KB\" }"];

/// The values every key is fed, as `--set` writes them.
const VALUES: &[&str] = &[
    "0",
    "-1",
    "9223372036854775807",
    "18446744073709551615",
    "1e308",
    "-1e308",
    "nan",
    "inf",
    "-inf",
    "\"0s\"",
    "\"1ps\"",
    "\"18446744s\"",
    "\"0B\"",
    "\"18446744073709551615B\"",
    "\"1bps\"",
    "\"18446744073709551615bps\"",
    "\"5 parsecs\"",
];

/// A `[[pause_control]]` entry, the key's value written into it.
fn pause_control(field: &str, value: &str) -> String {
    let mut entry = vec![
        ("ports", "\"switch:0\""),
        ("rule", "\"on-off\""),
        ("threshold", "\"20KB\""),
    ];
    entry.retain(|(k, _)| *k != field);
    entry.push((field, value));
    let fields: Vec<String> = entry.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    format!("pause_control=[{{ {} }}]", fields.join(", "))
}

/// The overrides setting `key` to `value`, after its context.
fn overrides(key: &str, value: &str) -> Vec<String> {
    let context = CONTEXTS
        .iter()
        .filter(|(prefix, _)| {
            key.strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
        })
        .max_by_key(|(prefix, _)| prefix.len())
        .map_or(&[][..], |(_, c)| c);
    let mut o: Vec<String> = context.iter().map(|s| s.to_string()).collect();
    match key.strip_prefix("pause_control.") {
        Some(field) => o.push(pause_control(field, value)),
        None => o.push(format!("{key}={value}")),
    }
    o
}

/// Counts `[monitor]` rows.
#[derive(Default)]
struct Rows(u64);

impl SeriesSink for Rows {
    fn port(&mut self, _: &PortSample) {
        self.0 += 1;
    }
    fn nic(&mut self, _: &NicSample) {
        self.0 += 1;
    }
    fn flow(&mut self, _: &FlowSample) {
        self.0 += 1;
    }
}

/// A run's events and rows, or `None` when it passed `limit` events (the run is stopped by
/// a panic from its progress report, caught here).
fn simulate(config: &irn_sim::SimConfig, limit: u64) -> Option<(u64, u64)> {
    let mut rows = Rows::default();
    let mut events = 0;
    let run = catch_unwind(AssertUnwindSafe(|| {
        irn_sim::run_monitored(
            config,
            &mut |p| {
                events = p.events;
                assert!(p.events <= limit, "over the limit");
            },
            &mut rows,
        )
    }));
    run.ok().map(|_| (events, rows.0))
}

/// The longest a run may go, as a multiple of the normal run's events and rows, plus slack
/// for a run too small to measure (progress is reported every 65 536 events).
const BOUND: u64 = 50;
const SLACK: u64 = 1 << 18;

#[test]
fn every_key_refuses_extreme_values_or_runs_a_bounded_time() {
    // The over-limit panics are expected; any other is reported as usual.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let text = info.payload().downcast_ref::<String>().map(String::as_str);
        if text != Some("over the limit") {
            report(info);
        }
    }));
    let parse = |o: &[String]| scenario::parse(BASE, "t.toml", Path::new("."), o);
    let mut failures = Vec::new();
    let mut runs = 0;
    let mut keys = 0;
    for key in schema::keys_in_code() {
        keys += 1;
        if key.starts_with("compare.") || key == "compare" {
            continue; // variants, not a run's keys
        }
        // The normal run: the key's context alone.
        let context = overrides(&key, "0");
        let alone = !NO_RUN_ALONE.contains(&key.as_str());
        let context = if alone {
            &context[..context.len() - 1]
        } else {
            &[]
        };
        let normal = match parse(context) {
            Ok(s) => s,
            Err(e) => {
                failures.push(format!("{key}: its context is refused: {e}"));
                continue;
            }
        };
        let Some((events, rows)) = simulate(&normal.runs[0].config, u64::MAX) else {
            failures.push(format!("{key}: its context's run failed"));
            continue;
        };
        let limit = events.saturating_mul(BOUND) + SLACK;
        let row_limit = rows.saturating_mul(BOUND) + SLACK;
        let last = key.rsplit('.').next().unwrap_or(&key);
        // A size, rate or duration key shows the form it is written in, given a number.
        let refusal = |value: &str| parse(&overrides(&key, value)).err().map(|e| e.to_string());
        let unit_key = refusal("\"5 parsecs\"")
            .is_some_and(|e| e.contains("allowed units") || e.contains("is not a byte size"));
        if let Some(e) = refusal("5").filter(|_| unit_key) {
            if (e.contains("expected a string") || e.contains("no unit")) && !e.contains("e.g.") {
                failures.push(format!("{key} = 5: no example of the form: {e}"));
            }
        }
        for value in VALUES {
            let o = overrides(&key, value);
            match parse(&o) {
                Err(e) => {
                    let e = e.to_string();
                    let wrong = ["does not apply", "applies only", "required for"];
                    let named =
                        e.contains(&format!("{last} =")) || e.contains(&format!("{last} is"));
                    if wrong.iter().any(|w| e.contains(w)) && !named {
                        failures.push(format!("{key} = {value}: wrong context: {e}"));
                    } else if !e.contains(last) {
                        failures.push(format!("{key} = {value}: the error does not name it: {e}"));
                    } else if e.contains("expected u") || e.contains("0000000000000000000000") {
                        failures.push(format!("{key} = {value}: a type, not a range: {e}"));
                    }
                }
                Ok(s) => {
                    runs += 1;
                    match simulate(&s.runs[0].config, limit) {
                        Some((_, r)) if r <= row_limit => {}
                        Some((_, r)) => {
                            failures.push(format!("{key} = {value}: {r} rows, normal {rows}"))
                        }
                        None => failures.push(format!(
                            "{key} = {value}: more than {limit} events (normal {events})"
                        )),
                    }
                }
            }
        }
    }
    // The walk reached every section, and most values of a key are refused.
    assert!(keys > 150 && runs > 100, "{keys} keys, {runs} runs");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
