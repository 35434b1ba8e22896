//! Progress bars for runs that take more than a second, on terminals only.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use irn_sim::Progress;

/// Shows one bar per run once the runs have taken a second; shows nothing when stdout is not
/// a terminal (logs and pipes stay clean).
pub struct Bars {
    multi: Option<MultiProgress>,
}

impl Bars {
    pub fn new() -> Self {
        let multi = std::io::stdout()
            .is_terminal()
            .then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()));
        Bars { multi }
    }

    /// A reporter for one run: a closure to hand to `irn_sim::run`.
    pub fn reporter(&self, name: &str) -> impl FnMut(Progress) + '_ {
        let started = Instant::now();
        let name = name.to_string();
        let mut bar: Option<ProgressBar> = None;
        move |p: Progress| {
            let Some(multi) = &self.multi else { return };
            if bar.is_none() && started.elapsed() < Duration::from_secs(1) {
                return;
            }
            let b = bar.get_or_insert_with(|| {
                let b = multi.add(ProgressBar::new(1000));
                b.set_style(
                    ProgressStyle::with_template(
                        "{prefix:>12} [{bar:30}] {percent:>3}% {msg} ({elapsed}, eta {eta})",
                    )
                    .expect("valid template")
                    .progress_chars("=> "),
                );
                b.set_prefix(name.clone());
                b
            });
            // Sim time against the horizon overestimates the work left: the run usually ends
            // when the last flow finishes, long before the drain limit. Flows are the better
            // measure once they have all started.
            let frac = if p.flows_started == p.flows_total && p.flows_total > 0 {
                0.5 + 0.5 * p.flows_finished as f64 / p.flows_total as f64
            } else {
                0.5 * p.flows_started as f64 / p.flows_total.max(1) as f64
            };
            b.set_position((frac * 1000.0) as u64);
            b.set_message(format!(
                "t={:.2}ms {}/{} flows",
                p.now.as_ns_f64() / 1e6,
                p.flows_finished,
                p.flows_total
            ));
            if p.done {
                b.finish();
            }
        }
    }
}
