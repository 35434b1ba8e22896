//! The side-by-side table `irn run` prints.

use std::fmt::Write;

use irn_sim::metrics::Summary;

use crate::output::Finished;

/// A row: label, value, decimals, and whether it is a statistic of finished measured flows
/// (shown as `-` for a run that has none, rather than as a zero).
type Metric = (&'static str, fn(&Summary) -> f64, usize, bool);

const METRICS: &[Metric] = &[
    ("avg slowdown", |s| s.avg_slowdown, 2, true),
    ("avg FCT (us)", |s| s.avg_fct_us, 1, true),
    ("p99 FCT (us)", |s| s.p99_fct_us, 1, true),
    (
        "1-pkt p99 FCT (us)",
        |s| s.single_packet_p99_fct_us,
        1,
        true,
    ),
    ("drop rate (%)", |s| 100.0 * s.drop_rate, 3, false),
    ("retransmissions", |s| s.retransmissions as f64, 0, false),
    ("timeouts", |s| s.timeouts as f64, 0, false),
    ("pause frames", |s| s.pause_frames as f64, 0, false),
    ("measured flows", |s| s.flows_measured as f64, 0, false),
    ("unfinished flows", |s| s.flows_incomplete as f64, 0, false),
];

/// A ratio row: label, value, decimals.
type Ratio = (&'static str, fn(&Summary) -> f64, usize);

/// The headline metrics whose ratios the IRN paper reports (all of finished measured flows).
const RATIOS: &[Ratio] = &[
    ("avg slowdown", |s| s.avg_slowdown, 2),
    ("avg FCT", |s| s.avg_fct_us, 2),
    ("p99 FCT", |s| s.p99_fct_us, 2),
];

pub fn render(runs: &[Finished]) -> String {
    let label_w = 20;
    let col_w = runs.iter().map(|r| r.name.len()).max().unwrap_or(0).max(12);
    let mut out = String::new();
    let _ = write!(out, "{:label_w$}", "");
    for r in runs {
        let _ = write!(out, " {:>col_w$}", r.name);
    }
    out.push('\n');
    for &(label, get, decimals, of_fcts) in METRICS {
        let _ = write!(out, "{label:label_w$}");
        for r in runs {
            let s = &r.result.summary;
            if of_fcts && !s.has_fct_statistics() {
                let _ = write!(out, " {:>col_w$}", "-");
            } else {
                let _ = write!(out, " {:>col_w$.decimals$}", get(s));
            }
        }
        out.push('\n');
    }
    if runs
        .iter()
        .any(|r| r.result.summary.verbs_data_errors.is_some())
    {
        let _ = write!(out, "{:label_w$}", "verbs data errors");
        for r in runs {
            let errors = r.result.summary.verbs_data_errors.map(|e| e.to_string());
            let _ = write!(out, " {:>col_w$}", errors.as_deref().unwrap_or("-"));
        }
        out.push('\n');
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
        for &(label, get, decimals) in RATIOS {
            let _ = write!(out, "{label:label_w$}");
            let base = get(&first.result.summary);
            for r in runs {
                let s = &r.result.summary;
                let ratio = if base > 0.0
                    && first.result.summary.has_fct_statistics()
                    && s.has_fct_statistics()
                {
                    format!("{:.decimals$}x", get(s) / base)
                } else {
                    "-".to_string()
                };
                let _ = write!(out, " {ratio:>col_w$}");
            }
            out.push('\n');
        }
    }
    let names = |pick: fn(&Summary) -> bool| -> Vec<String> {
        let picked = runs.iter().filter(|r| pick(&r.result.summary));
        picked.map(|r| r.name.to_string()).collect()
    };
    let none_measured = names(|s| s.flows_measured == 0 && s.flows_total > 0);
    if !none_measured.is_empty() {
        let _ = writeln!(
            out,
            "\nno flow was measured in {}: every flow started during the warm-up; lengthen the \
             workload or shorten run.warmup",
            none_measured.join(", ")
        );
    }
    let none_finished = names(|s| s.flows_measured > 0 && !s.has_fct_statistics());
    if !none_finished.is_empty() {
        let _ = writeln!(
            out,
            "\nno measured flow finished in {} before run.drain_limit cut the run off",
            none_finished.join(", ")
        );
    }
    out
}
