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
        let mut stage = Stage::default();
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
            let (pos, len, msg) = stage.next(&p);
            if b.length() != Some(len) {
                // A new stage: its own length and a fresh rate for the estimate.
                b.set_length(len);
                b.reset_eta();
            }
            b.set_position(pos);
            b.set_message(msg);
            if p.done {
                b.finish();
            }
        }
    }
}

/// Where a run is, measured by what is left: first the arrival window (simulated time up to the
/// last arrival, which the wall clock follows at a roughly steady rate), then the drain (the
/// flows still unfinished when the arrivals ended). Each stage is a bar of its own, so the
/// estimate never mixes the two rates (a bar of flows started jumped to 50 % at once and then
/// said "eta 1s" through a long drain).
#[derive(Debug, Default)]
struct Stage {
    /// Flows finished when the drain began; `None` while flows still arrive.
    drained_from: Option<usize>,
}

impl Stage {
    /// The bar's position and length for `p`, and what it says.
    fn next(&mut self, p: &Progress) -> (u64, u64, String) {
        let ms = |t: irn_core::Time| t.as_ns_f64() / 1e6;
        if p.now < p.last_arrival && p.flows_started < p.flows_total {
            let len = p.last_arrival.as_ps().max(1);
            let msg = format!(
                "arrivals {:.2}/{:.2} ms, {}/{} flows done",
                ms(p.now),
                ms(p.last_arrival),
                p.flows_finished,
                p.flows_total
            );
            return (p.now.as_ps().min(len), len, msg);
        }
        let from = *self.drained_from.get_or_insert(p.flows_finished);
        let len = (p.flows_total - from).max(1) as u64;
        let msg = format!(
            "draining at {:.2} ms: {} flows left",
            ms(p.now),
            p.flows_total - p.flows_finished
        );
        ((p.flows_finished - from) as u64, len, msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use irn_core::{Duration, Time};

    #[test]
    fn arrivals_then_the_drain_each_a_bar_of_their_own() {
        let at = |us: u64, started: usize, finished: usize| Progress {
            now: Time::ZERO + Duration::from_us(us),
            horizon: Time::ZERO + Duration::from_us(10_100),
            last_arrival: Time::ZERO + Duration::from_us(100),
            flows_started: started,
            flows_finished: finished,
            flows_total: 50,
            events: 0,
            done: false,
        };
        let mut s = Stage::default();
        // Arrivals: simulated time against the last arrival, whatever the flows.
        let (pos, len, msg) = s.next(&at(25, 40, 10));
        assert_eq!((pos, len), (25_000_000, 100_000_000));
        assert!(msg.starts_with("arrivals 0.03/0.10 ms"), "{msg}");
        // The drain: the 20 flows unfinished when it began.
        let (pos, len, msg) = s.next(&at(100, 50, 30));
        assert_eq!((pos, len), (0, 20));
        assert!(msg.contains("20 flows left"), "{msg}");
        let (pos, len, _) = s.next(&at(5000, 50, 45));
        assert_eq!((pos, len), (15, 20));
    }
}
