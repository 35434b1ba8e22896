//! The side-by-side table `irn run` prints.

use std::fmt::Write;

use irn_sim::metrics::Summary;

use crate::output::Finished;

type Metric = (&'static str, fn(&Summary) -> f64, usize);

const METRICS: &[Metric] = &[
    ("avg slowdown", |s| s.avg_slowdown, 2),
    ("avg FCT (us)", |s| s.avg_fct_us, 1),
    ("p99 FCT (us)", |s| s.p99_fct_us, 1),
    ("1-pkt p99 FCT (us)", |s| s.single_packet_p99_fct_us, 1),
    ("drop rate (%)", |s| 100.0 * s.drop_rate, 3),
    ("retransmissions", |s| s.retransmissions as f64, 0),
    ("timeouts", |s| s.timeouts as f64, 0),
    ("pause frames", |s| s.pause_frames as f64, 0),
    ("measured flows", |s| s.flows_measured as f64, 0),
    ("unfinished flows", |s| s.flows_incomplete as f64, 0),
];

/// The headline metrics whose ratios the IRN paper reports.
const RATIOS: &[Metric] = &[
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
    for (label, get, decimals) in METRICS {
        let _ = write!(out, "{label:label_w$}");
        for r in runs {
            let _ = write!(out, " {:>col_w$.decimals$}", get(&r.result.summary));
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
        for (label, get, decimals) in RATIOS {
            let _ = write!(out, "{label:label_w$}");
            let base = get(&first.result.summary);
            for r in runs {
                let v = get(&r.result.summary);
                let ratio = if base > 0.0 { v / base } else { f64::NAN };
                let _ = write!(out, " {:>col_w$}", format!("{ratio:.decimals$}x"));
            }
            out.push('\n');
        }
    }
    out
}
