//! The side-by-side table `irn run` prints.
//!
//! The flow counts come first: averages over finished flows flatter a variant that leaves its
//! slowest flows unfinished, so when any run has unfinished measured flows the table adds the
//! censored statistics (each unfinished flow counted as completing at the end of the run, a
//! lower bound) under the plain ones, and says so below it.

use std::fmt::Write;

use irn_sim::metrics::{CollectiveSummary, FlowRow, QuerySummary, Summary};
use irn_sim::scenario::{ScenarioFile, TopologyKind, WorkloadKind};

use crate::output::Finished;

/// When a row of a metrics table (this one and the report's) is shown.
#[derive(Clone, Copy, PartialEq)]
pub enum Show {
    Always,
    /// When some run has unfinished measured flows: a censored statistic.
    Censored,
    /// When some run has incast flows.
    Incast,
    /// With incast flows and unfinished ones.
    IncastCensored,
}

impl Show {
    /// Whether the row is shown for runs of which some have unfinished measured flows
    /// (`censored`) and some incast flows (`incast`).
    pub fn shown(self, censored: bool, incast: bool) -> bool {
        match self {
            Show::Always => true,
            Show::Censored => censored,
            Show::Incast => incast,
            Show::IncastCensored => incast && censored,
        }
    }
}

/// A row: label, value (`None` prints `-`), decimals, whether it is a statistic of finished
/// measured flows (shown as `-` for a run that has none, rather than as a zero), when it shows.
type Metric = (&'static str, fn(&Summary) -> Option<f64>, usize, bool, Show);

const METRICS: &[Metric] = &[
    (
        "measured flows",
        |s| Some(s.flows_measured as f64),
        0,
        false,
        Show::Always,
    ),
    (
        "unfinished flows",
        |s| Some(s.flows_incomplete as f64),
        0,
        false,
        Show::Always,
    ),
    ("avg slowdown", |s| s.avg_slowdown, 2, true, Show::Always),
    (
        "censored avg slowdown",
        |s| s.censored_avg_slowdown,
        2,
        false,
        Show::Censored,
    ),
    ("avg FCT (us)", |s| s.avg_fct_us, 1, true, Show::Always),
    (
        "censored avg FCT (us)",
        |s| s.censored_avg_fct_us,
        1,
        false,
        Show::Censored,
    ),
    ("p99 FCT (us)", |s| s.p99_fct_us, 1, true, Show::Always),
    (
        "censored p99 FCT (us)",
        |s| s.censored_p99_fct_us,
        1,
        false,
        Show::Censored,
    ),
    ("incast RCT (us)", |s| s.rct_us, 1, false, Show::Incast),
    (
        "censored RCT (us)",
        |s| s.censored_rct_us,
        1,
        false,
        Show::IncastCensored,
    ),
    (
        "1-pkt p99 FCT (us)",
        |s| s.single_packet_p99_fct_us,
        1,
        false,
        Show::Always,
    ),
    (
        "drop rate (%)",
        |s| Some(100.0 * s.drop_rate),
        3,
        false,
        Show::Always,
    ),
    (
        "retransmissions",
        |s| Some(s.retransmissions as f64),
        0,
        false,
        Show::Always,
    ),
    (
        "timeouts",
        |s| Some(s.timeouts as f64),
        0,
        false,
        Show::Always,
    ),
    (
        "pause frames",
        |s| Some(s.pause_frames as f64),
        0,
        false,
        Show::Always,
    ),
    (
        "control overhead (%)",
        |s| Some(100.0 * s.control_overhead),
        2,
        false,
        Show::Always,
    ),
];

/// A row of a count a run may lack: label, value.
type OptionalCount = (&'static str, fn(&Summary) -> Option<u64>);

/// Counts of features a run may not have: a row shows when some run has it (`-` for the
/// others).
const OPTIONAL_COUNTS: &[OptionalCount] = &[
    ("verbs data errors", |s| s.verbs_data_errors),
    ("link losses", |s| s.link_losses),
    ("deflections", |s| s.deflections),
    ("TTL drops", |s| s.ttl_drops),
    ("link failures", |s| {
        s.failures.as_ref().map(|f| f.link_failures)
    }),
    ("failure losses", |s| {
        s.failures.as_ref().map(|f| f.packets_lost)
    }),
    // Only `to_failed_link = "hold"` holds packets: the row shows when a run held some.
    ("failure held packets", |s| {
        (s.failures.as_ref())
            .map(|f| f.packets_held)
            .filter(|&held| held > 0)
    }),
    ("flows affected", |s| {
        s.failures.as_ref().map(|f| f.flows_affected as u64)
    }),
    ("ConWeave reroutes", |s| s.conweave.map(|c| c.reroutes)),
    ("ConWeave held packets", |s| {
        s.conweave.map(|c| c.held_packets)
    }),
    // Packets an ordering layer dropped and NACKed: all of them, then those it refused a
    // state record or blocks (the rest were beyond its bitmap's reach).
    ("ordering drops (pkts)", |s| s.ordering_drops),
    ("  connection limit", |s| s.ordering_refused_connections),
    ("  ordering pool full", |s| s.ordering_refused_pool),
];

/// The headline metrics whose ratios the IRN paper reports, with their censored forms:
/// label, value, whether it is a statistic of finished measured flows, when it shows.
type Ratio = (&'static str, fn(&Summary) -> Option<f64>, bool, Show);

const RATIOS: &[Ratio] = &[
    ("avg slowdown", |s| s.avg_slowdown, true, Show::Always),
    (
        "censored avg slowdown",
        |s| s.censored_avg_slowdown,
        false,
        Show::Censored,
    ),
    ("avg FCT", |s| s.avg_fct_us, true, Show::Always),
    (
        "censored avg FCT",
        |s| s.censored_avg_fct_us,
        false,
        Show::Censored,
    ),
    ("p99 FCT", |s| s.p99_fct_us, true, Show::Always),
    (
        "censored p99 FCT",
        |s| s.censored_p99_fct_us,
        false,
        Show::Censored,
    ),
];

/// The measured incast flows that had not finished (all measured flows' when there is no
/// incast, as `rct_us` has them).
fn unfinished_incast(flows: &[FlowRow]) -> usize {
    let incast = flows.iter().any(|f| f.measured && f.incast);
    flows
        .iter()
        .filter(|f| f.measured && f.incast == incast && f.fct_us.is_none())
        .count()
}

/// A queries workload's rows: how many measured queries, how many unfinished (censored: left
/// out of the QCTs), and the completed ones' mean and p99 QCT; `-` for a run without queries.
fn query_rows(runs: &[Finished], label_w: usize, col_w: usize) -> String {
    type Row = (&'static str, fn(&QuerySummary) -> Option<f64>, usize);
    const ROWS: [Row; 4] = [
        ("queries", |q| Some(q.count as f64), 0),
        ("unfinished queries", |q| Some(q.unfinished as f64), 0),
        ("QCT mean (us)", |q| q.qct_mean_us, 1),
        ("QCT p99 (us)", |q| q.qct_p99_us, 1),
    ];
    let mut out = String::new();
    for (label, get, decimals) in ROWS {
        let _ = write!(out, "{label:label_w$}");
        for r in runs {
            cell(
                &mut out,
                r.result.summary.queries.as_ref().and_then(get),
                col_w,
                decimals,
            );
        }
        out.push('\n');
    }
    out
}

/// One right-aligned column of a row: `v` with `decimals`, or `-` when there is none.
fn cell(out: &mut String, v: Option<f64>, col_w: usize, decimals: usize) {
    match v {
        Some(v) => {
            let _ = write!(out, " {v:>col_w$.decimals$}");
        }
        None => {
            let _ = write!(out, " {:>col_w$}", "-");
        }
    }
}

/// A collective workload's rows, per job: its mean iteration time and nccl-tests' algorithm
/// and bus bandwidths; `-` for a run without the job or whose iterations did not finish.
fn collective_rows(runs: &[Finished], label_w: usize, col_w: usize) -> String {
    type Row = (&'static str, fn(&CollectiveSummary) -> Option<f64>, usize);
    const ROWS: [Row; 3] = [
        ("time (us)", |c| c.time_us, 1),
        ("algbw (GB/s)", |c| c.algbw_gbytes_per_s, 2),
        ("busbw (GB/s)", |c| c.busbw_gbytes_per_s, 2),
    ];
    let jobs = |r: &Finished| r.result.summary.collectives.as_ref().map_or(0, Vec::len);
    let mut out = String::new();
    for j in 0..runs.iter().map(jobs).max().unwrap_or(0) {
        for (label, get, decimals) in ROWS {
            let _ = write!(out, "{:label_w$}", format!("job {j} {label}"));
            for r in runs {
                let job = r.result.summary.collectives.as_ref().and_then(|c| c.get(j));
                cell(&mut out, job.and_then(get), col_w, decimals);
            }
            out.push('\n');
        }
    }
    out
}

/// Whether a run is read by its throughput as much as by its flow completion times: a run of a
/// flow file (`trace`, `ns3`: a few long transfers, often) or across a WAN.
fn reads_throughput(resolved: &ScenarioFile) -> bool {
    matches!(
        resolved.workload.kind,
        WorkloadKind::Trace | WorkloadKind::Ns3
    ) || resolved.topology.kind == Some(TopologyKind::Wan)
}

/// What the goodput and utilization rows average over, as `irn_sim::metrics::Summary` measures
/// them: a run cut short by its drain limit or with a long drain reads lower than its busy part.
pub const THROUGHPUT_SPAN: &str = "means over the whole run, from the first flow's arrival to \
     its end, the drain included (utilization: over every port, both directions of each link)";

/// The goodput and link utilization rows.
fn throughput_rows(runs: &[Finished], label_w: usize, col_w: usize) -> String {
    let mut out = String::new();
    let _ = write!(out, "{:label_w$}", "goodput (Gb/s)");
    for r in runs {
        let _ = write!(out, " {:>col_w$.2}", r.result.summary.goodput_gbps);
    }
    out.push('\n');
    let _ = write!(out, "{:label_w$}", "link utilization (%)");
    for r in runs {
        let _ = write!(
            out,
            " {:>col_w$.1}",
            100.0 * r.result.summary.link_utilization
        );
    }
    out.push('\n');
    out
}

/// Why ports of run `r` were still paused when it ended with flows unfinished, if any were: a
/// deadlock only when the summary found paused ports waiting on each other in a cycle;
/// otherwise who paused them, none of which would have held for good.
fn paused_note(r: &Finished) -> Option<String> {
    let s = &r.result.summary;
    let ports = s.ports_paused_at_end?;
    if let Some(cycle) = &s.pause_cycle {
        let by = s.ports_paused_at_end_by.unwrap_or_default();
        let (kind, cure) = if by.credit > 0 {
            ("credit", "routes without a cycle")
        } else {
            (
                "PFC",
                "PFC off (a lossy transport) or routes without a cycle",
            )
        };
        let first = cycle.first().map_or("", String::as_str);
        return Some(format!(
            "{}: a {kind} deadlock: ports {} → {first} are paused in a cycle, each waiting on \
             the next, so flows stay unfinished however long the run drains; run with {cure}",
            r.name,
            cycle.join(" → ")
        ));
    }
    let mut why = Vec::new();
    if let Some(by) = s.ports_paused_at_end_by {
        if by.hosts > 0 {
            why.push(format!(
                "{} by the hosts' configured pauses ([pauses])",
                by.hosts
            ));
        }
        if by.credit > 0 {
            why.push(format!("{} waiting for credit", by.credit));
        }
        if by.switches > 0 {
            why.push(format!("{} by PFC, with no cycle among them", by.switches));
        }
    }
    let why = if why.is_empty() {
        String::new()
    } else {
        format!(": {}", why.join(", "))
    };
    let ports = match ports {
        1 => "1 port was".to_string(),
        n => format!("{n} ports were"),
    };
    Some(format!(
        "{}: {ports} still paused when the run ended with flows unfinished{why}; \
         no deadlock (no paused ports wait on each other in a cycle): the flows were still \
         draining, lengthen run.drain_limit to let them finish",
        r.name
    ))
}

/// The widest a column is padded to. A longer name (one `--out` lets through, since its run
/// needs no folder of its own) overflows its column rather than widening it: `format!` panics
/// on a width past 65,535, and a column that wide is no table anyway.
const MAX_COLUMN_WIDTH: usize = 255;

pub fn render(runs: &[Finished]) -> String {
    let label_w = 22;
    let widest = runs.iter().map(|r| r.name.len()).max().unwrap_or(0);
    let col_w = widest.clamp(12, MAX_COLUMN_WIDTH);
    let any = |pick: fn(&Finished) -> bool| runs.iter().any(pick);
    let censored = any(|r| r.result.summary.flows_incomplete > 0);
    let incast = any(|r| r.result.flows.iter().any(|f| f.incast));
    let mut out = String::new();
    let _ = write!(out, "{:label_w$}", "");
    for r in runs {
        let _ = write!(out, " {:>col_w$}", r.name);
    }
    out.push('\n');
    let shown = |show: Show| show.shown(censored, incast);
    for &(label, get, decimals, of_fcts, _) in METRICS.iter().filter(|m| shown(m.4)) {
        let _ = write!(out, "{label:label_w$}");
        for r in runs {
            let s = &r.result.summary;
            match get(s).filter(|_| !of_fcts || s.has_fct_statistics()) {
                Some(v) => {
                    let _ = write!(out, " {v:>col_w$.decimals$}");
                }
                None => {
                    let _ = write!(out, " {:>col_w$}", "-");
                }
            }
        }
        out.push('\n');
    }
    if runs.iter().any(|r| r.result.summary.queries.is_some()) {
        out.push_str(&query_rows(runs, label_w, col_w));
    }
    if runs.iter().any(|r| r.result.summary.collectives.is_some()) {
        out.push_str(&collective_rows(runs, label_w, col_w));
    }
    for &(label, get) in OPTIONAL_COUNTS {
        if runs.iter().all(|r| get(&r.result.summary).is_none()) {
            continue;
        }
        let _ = write!(out, "{label:label_w$}");
        for r in runs {
            let count = get(&r.result.summary).map(|e| e.to_string());
            let _ = write!(out, " {:>col_w$}", count.as_deref().unwrap_or("-"));
        }
        out.push('\n');
    }
    let throughput = runs.iter().any(|r| reads_throughput(r.resolved));
    if throughput {
        out.push_str(&throughput_rows(runs, label_w, col_w));
    }
    let _ = write!(out, "{:label_w$}", "wall time (s)");
    for r in runs {
        let _ = write!(out, " {:>col_w$.1}", r.performance.wall_time_s);
    }
    out.push('\n');
    let _ = write!(out, "{:label_w$}", "events/s (M)");
    for r in runs {
        let _ = write!(out, " {:>col_w$.1}", r.performance.events_per_s / 1e6);
    }
    out.push('\n');
    if let Some(first) = runs.first().filter(|_| runs.len() > 1) {
        let _ = writeln!(
            out,
            "\nratio to {} (higher is worse than {}):",
            first.name, first.name
        );
        for &(label, get, of_fcts, _) in RATIOS.iter().filter(|r| shown(r.3)) {
            let _ = write!(out, "{label:label_w$}");
            let known = |s: &Summary| get(s).filter(|_| !of_fcts || s.has_fct_statistics());
            let base = known(&first.result.summary).filter(|b| *b > 0.0);
            for r in runs {
                let ratio = match (base, known(&r.result.summary)) {
                    (Some(b), Some(v)) => format!("{:.2}x", v / b),
                    _ => "-".to_string(),
                };
                let _ = write!(out, " {ratio:>col_w$}");
            }
            out.push('\n');
        }
    }
    let names = |pick: &dyn Fn(&Finished) -> bool| -> Vec<String> {
        let picked = runs.iter().filter(|r| pick(r));
        picked.map(|r| r.name.to_string()).collect()
    };
    let none_measured = names(&|r| {
        let s = &r.result.summary;
        s.flows_measured == 0 && s.flows_total > 0
    });
    if !none_measured.is_empty() {
        let _ = writeln!(
            out,
            "\nno flow was measured in {}: every flow started during the warm-up; lengthen the \
             workload or shorten run.warmup",
            none_measured.join(", ")
        );
    }
    let none_finished = names(&|r| {
        let s = &r.result.summary;
        s.flows_measured > 0 && !s.has_fct_statistics()
    });
    if !none_finished.is_empty() {
        let _ = writeln!(
            out,
            "\nno measured flow finished in {} before run.drain_limit cut the run off",
            none_finished.join(", ")
        );
    }
    if censored {
        let with: Vec<String> = runs
            .iter()
            .filter(|r| r.result.summary.flows_incomplete > 0)
            .map(|r| format!("{} in {}", r.result.summary.flows_incomplete, r.name))
            .collect();
        let _ = writeln!(
            out,
            "\nunfinished measured flows ({}) are left out of the plain FCT statistics, which \
             flatters the run that leaves more unfinished; the censored rows count each at the \
             end of the run (a lower bound)",
            with.join(", ")
        );
    }
    for r in runs {
        if let Some(note) = paused_note(r) {
            let _ = writeln!(out, "\n{note}");
        }
    }
    if throughput {
        let _ = writeln!(out, "\ngoodput and link utilization: {THROUGHPUT_SPAN}");
    }
    let rct_unknown: Vec<String> = runs
        .iter()
        .filter(|r| incast && r.result.summary.rct_us.is_none())
        .filter_map(|r| {
            let n = unfinished_incast(&r.result.flows);
            (n > 0).then(|| format!("{n} in {}", r.name))
        })
        .collect();
    if !rct_unknown.is_empty() {
        let _ = writeln!(
            out,
            "\nincast RCT unknown: incast flows unfinished when the run ended ({}); the \
             censored RCT is a lower bound",
            rct_unknown.join(", ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::Performance;
    use irn_sim::RunResult;

    /// A run named `name` with empty results.
    fn finished<'a>(name: &'a str, resolved: &'a ScenarioFile) -> Finished<'a> {
        Finished {
            name,
            resolved,
            inputs: &[],
            result: RunResult {
                flows: Vec::new(),
                fct: Vec::new(),
                summary: Summary::default(),
                packet_hops: 0,
            },
            performance: Performance {
                wall_time_s: 1.0,
                events_per_s: 0.0,
                packet_hops_per_s: 0.0,
                sim_ms_per_wall_s: 0.0,
            },
        }
    }

    /// A name longer than any padding width `format!` takes prints whole, without a panic.
    #[test]
    fn a_name_of_any_length_renders_without_a_panic() {
        let resolved = ScenarioFile::default();
        let long = "x".repeat(70_000);
        let runs = [finished(&long, &resolved), finished("b", &resolved)];
        let table = render(&runs);
        assert!(table.lines().next().unwrap().contains(&format!(" {long} ")));
        let row = table.lines().find(|l| l.starts_with("wall time")).unwrap();
        assert_eq!(row.len(), 22 + 2 * (1 + MAX_COLUMN_WIDTH), "{row}");
    }
}
