//! Progress for runs that take more than a second. On a terminal, bars: one line per run in
//! progress and, for commands that run several (variants, sweeps, reproduce, check), a top line
//! with how many are done and an estimate for the rest ([`Overall`]). Otherwise (output to a
//! log or a pipe) one plain line on stderr a minute, once the command has taken a minute, so a
//! long run under `nohup` still shows how far it has got.

use std::io::IsTerminal;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use indicatif::{HumanDuration, MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use irn_sim::Progress;

/// Shows one bar per run once the run has taken a second, and above them the overall line once
/// the command has taken a second and has more than one run; when stdout is not a terminal,
/// a line on stderr every [`LOG_EVERY`] instead (short runs leave logs and pipes clean).
pub struct Bars {
    multi: Option<MultiProgress>,
    started: Instant,
    overall: Mutex<Top>,
}

/// How often a command whose stdout is not a terminal says how far it has got, on stderr.
const LOG_EVERY: Duration = Duration::from_secs(60);

/// Shows setup work that takes more than a second (the k shortest paths of a large network)
/// as a line on stderr, "computing k shortest paths: 1200/65280 pairs", if stderr is a
/// terminal; otherwise registers nothing, and setup counts nothing.
pub fn show_setup() {
    if !std::io::stderr().is_terminal() {
        return;
    }
    let line: Mutex<SetupLine> = Mutex::default();
    irn_sim::progress::set_setup_observer(Box::new(move |p| {
        // A panic elsewhere while the line was held leaves it usable: it is only a display.
        line.lock().unwrap_or_else(PoisonError::into_inner).show(p);
    }));
}

/// The setup line: when the work started and, once it has taken a second, its bar.
#[derive(Default)]
struct SetupLine {
    started: Option<Instant>,
    bar: Option<ProgressBar>,
}

impl SetupLine {
    fn show(&mut self, p: irn_sim::progress::SetupProgress) {
        if p.done == 0 {
            self.started = Some(Instant::now());
        }
        if p.done >= p.total {
            if let Some(bar) = self.bar.take() {
                bar.finish_and_clear();
            }
            return;
        }
        let elapsed = self.started.map_or(Duration::ZERO, |t| t.elapsed());
        if self.bar.is_none() && elapsed >= Duration::from_secs(1) {
            let bar = ProgressBar::with_draw_target(Some(p.total), ProgressDrawTarget::stderr())
                .with_elapsed(elapsed);
            let template = format!("{}: {{pos}}/{{len}} {} ({{elapsed}})", p.what, p.unit);
            bar.set_style(ProgressStyle::with_template(&template).expect("valid template"));
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_length(p.total);
            bar.set_position(p.done);
        }
    }
}

/// The overall line: the count it shows and, once drawn, the bar (or, without a terminal, when
/// the last plain line was printed).
#[derive(Default)]
struct Top {
    runs: Overall,
    bar: Option<ProgressBar>,
    logged: Option<Instant>,
}

impl Bars {
    /// Bars for a command that will run `runs` simulations (more may be added with
    /// [`add_runs`](Self::add_runs)).
    pub fn new(runs: usize) -> Self {
        let multi = std::io::stdout()
            .is_terminal()
            .then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()));
        let bars = Bars {
            multi,
            started: Instant::now(),
            overall: Mutex::default(),
        };
        bars.add_runs(runs);
        bars
    }

    /// `runs` more simulations to run (a reproduce learns its runs window by window).
    pub fn add_runs(&self, runs: usize) {
        self.top().runs.add(runs);
    }

    /// Prints `line` to stdout above the bars.
    pub fn println(&self, line: &str) {
        match &self.multi {
            Some(multi) => multi.suspend(|| outln!("{line}")),
            None => outln!("{line}"),
        }
    }

    fn top(&self) -> std::sync::MutexGuard<'_, Top> {
        // A panic elsewhere while the count was held leaves it usable: it is only counts.
        self.overall.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Updates the overall line from its counts, drawing it first if it is due.
    fn draw_top(&self, multi: &MultiProgress, top: &mut Top) {
        let elapsed = self.started.elapsed();
        if top.runs.total <= 1 || (top.bar.is_none() && elapsed < Duration::from_secs(1)) {
            return;
        }
        let bar = top.bar.get_or_insert_with(|| {
            let b = multi.insert(0, ProgressBar::new(1000));
            b.set_style(
                ProgressStyle::with_template("{prefix:>12} [{bar:30}] {msg}")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            b.set_prefix("all runs");
            b
        });
        bar.set_position((top.runs.fraction() * 1000.0).round() as u64);
        bar.set_message(top.runs.summary(elapsed));
    }

    /// Without a terminal: a plain line on stderr if the command has run for [`LOG_EVERY`]
    /// since it started or since the last line, saying how far all runs are (if there are
    /// several) and where `name`, the run reporting, is.
    fn log_line(&self, top: &mut Top, name: &str, run: &str) {
        let now = Instant::now();
        let since = now.duration_since(top.logged.unwrap_or(self.started));
        if since < LOG_EVERY {
            return;
        }
        top.logged = Some(now);
        let elapsed = self.started.elapsed();
        if top.runs.total > 1 {
            errln!("progress: {}; {name}: {run}", top.runs.summary(elapsed));
        } else {
            errln!("progress ({:#}): {name}: {run}", HumanDuration(elapsed));
        }
    }

    /// A reporter for one run, starting now: a closure to hand to `irn_sim::run`.
    pub fn reporter(&self, name: &str) -> impl FnMut(Progress) + '_ {
        let started = Instant::now();
        let name = name.to_string();
        let mut bar: Option<ProgressBar> = None;
        let mut stage = Stage::default();
        let slot = self.top().runs.start();
        move |p: Progress| {
            let mut top = self.top();
            if p.done {
                top.runs.finish(slot);
            } else {
                top.runs.update(slot, run_fraction(&p), open_in_drain(&p));
            }
            let Some(multi) = &self.multi else {
                let (pos, len, msg) = stage.next(&p);
                if !p.done {
                    let percent = 100 * pos / len.max(1);
                    self.log_line(&mut top, &name, &format!("{percent}% {msg}"));
                }
                return;
            };
            self.draw_top(multi, &mut top);
            let several = top.runs.total > 1;
            drop(top);
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
            if p.done && several {
                // The overall line counts it; the lines below are the runs in progress.
                b.finish_and_clear();
            } else if p.done {
                b.finish();
            }
        }
    }
}

/// How far a command's runs have got, for the overall line: runs done, and the fraction each
/// run in progress reports of itself ([`run_fraction`]).
///
/// The overall fraction is (runs done + the sum of the fractions of the runs in progress) /
/// runs in all; every run weighs the same, whatever its length. The estimate of the time left
/// is the time so far scaled by what is left, `elapsed × (1 − f) / f`: it assumes the rest goes
/// at the pace so far (runs in parallel included, since they advance `f` together). It is rough
/// when runs differ in length (a reproduce's doubled windows). A run's drain counts in its
/// fraction, which reaches 1 only when the run ends, so the estimate never reads "0s" while a
/// run still drains; the line also says how many runs drain and how many flows they still have
/// open. Runs read back from an earlier command are not counted at all: they cost no time.
#[derive(Debug, Default)]
struct Overall {
    /// Runs the command will run (so far: a reproduce adds its windows' runs as it goes).
    total: usize,
    done: usize,
    /// The runs in progress: slot, fraction of itself done, flows open if it is draining.
    running: Vec<(usize, f64, Option<usize>)>,
    /// The next run's slot.
    next: usize,
}

/// The most of itself a run in progress counts as done: 1 is for runs that have ended.
const UNFINISHED: f64 = 0.999;

impl Overall {
    fn add(&mut self, runs: usize) {
        self.total += runs;
    }

    /// A run starts: its slot.
    fn start(&mut self) -> usize {
        let slot = self.next;
        self.next += 1;
        self.running.push((slot, 0.0, None));
        slot
    }

    /// Run `slot` has done `fraction` of itself and, when `draining` is `Some`, drains with that
    /// many flows open.
    fn update(&mut self, slot: usize, fraction: f64, draining: Option<usize>) {
        if let Some(run) = self.running.iter_mut().find(|(s, _, _)| *s == slot) {
            run.1 = fraction.clamp(0.0, UNFINISHED);
            run.2 = draining;
        }
    }

    fn finish(&mut self, slot: usize) {
        let before = self.running.len();
        self.running.retain(|(s, _, _)| *s != slot);
        if self.running.len() < before {
            self.done += 1;
        }
    }

    /// The fraction of all the runs done, 0 to 1 (1 only once every run has ended).
    fn fraction(&self) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let running: f64 = self.running.iter().map(|(_, f, _)| f).sum();
        ((self.done as f64 + running) / self.total as f64).min(1.0)
    }

    /// How many runs in progress are past their arrivals, draining, and how many flows they
    /// still have open between them.
    fn draining(&self) -> (usize, usize) {
        let open = self.running.iter().filter_map(|(_, _, open)| *open);
        open.fold((0, 0), |(runs, flows), open| (runs + 1, flows + open))
    }

    /// "3/4 runs done (13s, eta 2s; 1 draining, 523 flows open)", `elapsed` into the command.
    fn summary(&self, elapsed: Duration) -> String {
        let fraction = self.fraction();
        let eta = match Overall::eta(elapsed, fraction) {
            // Work left never reads as "0s".
            Some(eta) if fraction < 1.0 => {
                format!("eta {:#}", HumanDuration(eta.max(Duration::from_secs(1))))
            }
            Some(eta) => format!("eta {:#}", HumanDuration(eta)),
            None => "eta -".to_string(),
        };
        let eta = match self.draining() {
            (0, _) => eta,
            (runs, open) => format!("{eta}; {runs} draining, {open} flows open"),
        };
        format!(
            "{}/{} runs done ({:#}, {eta})",
            self.done,
            self.total,
            HumanDuration(elapsed)
        )
    }

    /// The time left when `fraction` of the work took `elapsed`; `None` before any progress.
    fn eta(elapsed: Duration, fraction: f64) -> Option<Duration> {
        (fraction > 0.0).then(|| elapsed.mul_f64((1.0 - fraction.min(1.0)) / fraction))
    }
}

/// Whether a run in progress is past its arrivals: the clock has reached the last arrival, or
/// every flow has started.
fn in_drain(p: &Progress) -> bool {
    p.now >= p.last_arrival || p.flows_started >= p.flows_total
}

/// The flows a draining run still has open; `None` while flows still arrive.
fn open_in_drain(p: &Progress) -> Option<usize> {
    in_drain(p).then(|| p.flows_total.saturating_sub(p.flows_finished))
}

/// How much of itself a run in progress has done, for the overall line: half by its data
/// packets sent out of its flows' packets (the work, which the wall clock follows at a roughly
/// steady rate, and which counts the large flows a drain waits for as large), half by its flows
/// finished; in the drain, by how far the clock has got to the drain limit if that is further
/// (flows that cannot finish end the run there). Retransmissions may send more than the flows'
/// packets, and unfinished flows keep the flows' half short of whole, so a run that goes on
/// always has work left.
fn run_fraction(p: &Progress) -> f64 {
    if p.done {
        return 1.0;
    }
    let packets = (p.packets_sent as f64 / p.packets_total.max(1) as f64).min(1.0);
    let flows = p.flows_finished as f64 / p.flows_total.max(1) as f64;
    let mut fraction = (packets + flows) / 2.0;
    if in_drain(p) && p.horizon > p.last_arrival {
        let limit = p.horizon.saturating_since(p.last_arrival).as_ps() as f64;
        let drained = p.now.saturating_since(p.last_arrival).as_ps() as f64;
        fraction = fraction.max(drained / limit);
    }
    fraction.min(UNFINISHED)
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
    use irn_core::Time;

    /// At `us`, `started` and `finished` of 50 flows, 10 packets each, 10 sent per flow started.
    fn at(us: u64, started: usize, finished: usize) -> Progress {
        Progress {
            packets_sent: 10 * started as u64,
            packets_total: 500,
            now: Time::ZERO + irn_core::Duration::from_us(us),
            horizon: Time::ZERO + irn_core::Duration::from_us(10_100),
            last_arrival: Time::ZERO + irn_core::Duration::from_us(100),
            flows_started: started,
            flows_finished: finished,
            flows_total: 50,
            events: 0,
            done: false,
        }
    }

    #[test]
    fn arrivals_then_the_drain_each_a_bar_of_their_own() {
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

    /// Half the packets, half the flows (in the drain, or the clock's way to the drain limit
    /// if further): whole only when the run says it is done.
    #[test]
    fn a_run_counts_its_drain_and_is_whole_only_when_done() {
        let done = Progress {
            done: true,
            ..at(30, 40, 10)
        };
        let resent = Progress {
            packets_sent: 900,
            ..at(5000, 50, 45)
        };
        // (progress, its fraction)
        for (p, want) in [
            (at(0, 0, 0), 0.0),
            (at(25, 40, 10), 0.5),
            (at(100, 50, 30), 0.8),
            (at(5000, 50, 45), 0.95),
            // Retransmissions beyond the flows' packets count as the flows' packets.
            (resent, 0.95),
            // Flows stuck near the drain limit: the clock's way to it counts.
            (at(10_000, 50, 20), 0.99),
            // Every flow finished, the run not yet ended: not whole.
            (at(200, 50, 50), UNFINISHED),
            (done, 1.0),
        ] {
            let got = run_fraction(&p);
            assert!((got - want).abs() < 1e-9, "{p:?}: {got}");
        }
        assert_eq!(open_in_drain(&at(25, 40, 10)), None);
        // Every flow started before the clock reached the last arrival's time: drain.
        assert_eq!(open_in_drain(&at(90, 50, 30)), Some(20));
        assert_eq!(open_in_drain(&at(5000, 50, 45)), Some(5));
    }

    /// A run past its arrivals is draining until it finishes, and the line never reads whole
    /// (nor its estimate zero) while one is.
    #[test]
    fn runs_past_their_arrivals_are_counted_as_draining() {
        let mut o = Overall::default();
        o.add(2);
        let (a, b) = (o.start(), o.start());
        o.update(a, 0.5, None);
        o.update(b, 1.0, Some(3));
        assert_eq!(o.draining(), (1, 3));
        o.update(a, 1.0, Some(4));
        assert_eq!(o.draining(), (2, 7));
        assert!(o.fraction() < 1.0);
        let eta = Overall::eta(Duration::from_secs(1000), o.fraction()).unwrap();
        assert!(eta >= Duration::from_secs(1), "{eta:?}");
        assert_eq!(
            o.summary(Duration::from_secs(60)),
            "0/2 runs done (60s, eta 1s; 2 draining, 7 flows open)"
        );
        o.finish(b);
        assert_eq!(o.draining(), (1, 4));
    }

    /// The overall fraction and estimate, by hand: 4 runs, 1 done, two in progress at a
    /// quarter and a half: (1 + 0.25 + 0.5) / 4 = 0.4375 of the work in 7 s leaves
    /// 7 × 0.5625 / 0.4375 = 9 s.
    #[test]
    fn the_overall_fraction_counts_runs_done_and_in_progress() {
        let mut o = Overall::default();
        o.add(3);
        assert_eq!(o.fraction(), 0.0);
        assert_eq!(Overall::eta(Duration::from_secs(3), o.fraction()), None);
        let (a, b) = (o.start(), o.start());
        o.update(a, 0.5, None);
        o.finish(a);
        // Finished: counted once, however often it says so.
        o.finish(a);
        o.update(b, 0.25, None);
        assert_eq!((o.done, o.fraction()), (1, 1.25 / 3.0));
        // Runs added later (a reproduce's next window) lower the fraction.
        o.add(1);
        let c = o.start();
        o.update(c, 0.5, None);
        assert_eq!((o.done, o.total), (1, 4));
        assert_eq!(o.fraction(), 0.4375);
        assert_eq!(
            Overall::eta(Duration::from_secs(7), o.fraction()),
            Some(Duration::from_secs(9))
        );
        assert_eq!(
            o.summary(Duration::from_secs(7)),
            "1/4 runs done (7s, eta 9s)"
        );
        // A fraction out of range is clamped, below whole while the run goes on; all done
        // leaves nothing.
        o.update(c, 7.0, None);
        assert_eq!(o.fraction(), (1.25 + UNFINISHED) / 4.0);
        o.finish(b);
        o.finish(c);
        let d = o.start();
        o.finish(d);
        assert_eq!((o.done, o.fraction()), (4, 1.0));
        assert_eq!(
            Overall::eta(Duration::from_secs(7), o.fraction()),
            Some(Duration::ZERO)
        );
    }
}
