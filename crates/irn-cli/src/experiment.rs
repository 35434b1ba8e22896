//! Checked experiments: a scenario with `[experiment]` and `[[check]]` sections (see
//! `irn_sim::scenario::experiment`), ready for the engine in `reproduce.rs`.
//!
//! The papers' experiments are shipped scenarios compiled into the binary, so `irn reproduce`
//! runs from the binary alone; `irn check FILE` reads a user's file the same way.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use irn_sim::scenario::{self, Chart, Expect, Metric, PaperValue};

use crate::reproduce::model::Model;
use crate::reproduce::verdict::Paper;

macro_rules! shipped {
    ($paper:literal, $f:literal) => {
        (
            $paper,
            concat!("scenarios/paper/", $f),
            include_str!(concat!("../../../scenarios/paper/", $f)),
        )
    };
}

/// The embedded papers' experiments: (paper key, file as shipped, text).
const SHIPPED: &[(&str, &str, &str)] = &[
    shipped!("irn", "fig01.toml"),
    shipped!("irn", "fig02.toml"),
    shipped!("irn", "fig03.toml"),
    shipped!("irn", "fig04.toml"),
    shipped!("irn", "fig05.toml"),
    shipped!("irn", "fig06.toml"),
    shipped!("irn", "fig07.toml"),
    shipped!("irn", "fig08.toml"),
    shipped!("irn", "fig09.toml"),
    shipped!("irn", "fig09_cross.toml"),
    shipped!("irn", "fig10.toml"),
    shipped!("irn", "fig11.toml"),
    shipped!("irn", "fig12.toml"),
    shipped!("irn", "robustness.toml"),
    shipped!("eunomia", "eunomia/fig01a.toml"),
    shipped!("eunomia", "eunomia/fig01b.toml"),
    shipped!("eunomia", "eunomia/fig04.toml"),
    shipped!("eunomia", "eunomia/fig10.toml"),
    shipped!("eunomia", "eunomia/fig11.toml"),
    shipped!("eunomia", "eunomia/fig13.toml"),
    shipped!("eunomia", "eunomia/fig15.toml"),
    shipped!("eunomia", "eunomia/fig16.toml"),
    shipped!("eunomia", "eunomia/fig18.toml"),
    shipped!("eunomia", "eunomia/fig17.toml"),
    shipped!("eunomia", "eunomia/fig17bc.toml"),
    shipped!("eunomia", "eunomia/fig19.toml"),
    shipped!("conweave", "conweave/headline_lossless.toml"),
    shipped!("conweave", "conweave/headline_irn.toml"),
    shipped!("hpcc", "hpcc/websearch.toml"),
    shipped!("hpcc", "hpcc/fbhadoop.toml"),
    shipped!("hpcc", "hpcc/powertcp_burst.toml"),
    shipped!("hpcc", "hpcc/powertcp_fairness.toml"),
    shipped!("hpcc", "hpcc/swift_incast.toml"),
    shipped!("hpcc", "hpcc/swift_hops.toml"),
    shipped!("hpcc", "hpcc/swift_fairness.toml"),
    shipped!("wan", "wan/pause_control.toml"),
    shipped!("wan", "wan/buffer_depth.toml"),
    shipped!("wan", "wan/transports.toml"),
    shipped!("wan", "wan/rdma_vs_tcp.toml"),
    shipped!("wan", "wan/credits.toml"),
];

/// The papers `irn reproduce` knows, by the key that selects all of a paper's figures.
pub const PAPERS: &[&str] = &["irn", "eunomia", "conweave", "hpcc", "wan"];

/// Each paper's default `--max-window`: the window its figures need to settle (or as close as
/// the cost allows), with what a full run costs on one core, from docs/reproduce.md's timings:
/// - `irn`: 80 ms (20 ms windows doubled twice; about 3.5 h on one core, 97 min on two);
/// - `eunomia`: 10 ms (5 ms doubled once; about 1.5 h on one core: the Clos figures 45 min,
///   the Jellyfish, link failures, SRPT and deflection as much again);
/// - `conweave`: 20 ms (5 ms doubled twice; about 25 min on one core: 3.3 min at 5 ms);
/// - `hpcc`: 10 ms (5 ms doubled once; 320 hosts, seven controllers: about an hour on one
///   core, estimated from the 5 ms windows' 20 min);
/// - `wan`: none (one event per run, no window; 85 s on one core: the credits, the pause
///   rules and their panels, the buffer depth against C, the transports, RDMA against TCP).
///
/// A user's experiment (`irn check`) has none: its window runs once unless `--max-window`.
const MAX_WINDOWS: &[(&str, u64)] = &[("irn", 80), ("eunomia", 10), ("conweave", 20), ("hpcc", 10)];

/// One side of a ratio: a variant's metric, at one grid point or at each.
#[derive(Debug, Clone)]
pub struct Term {
    pub variant: String,
    pub point: Option<String>,
    pub metric: Metric,
}

/// One check, one metric: num / den (or num alone), the paper's number or words, and the
/// direction the paper found.
#[derive(Debug, Clone)]
pub struct Check {
    pub num: Term,
    /// `None`: the check bounds `num`'s own value.
    pub den: Option<Term>,
    /// The paper's number; `None`: only words (a qualitative check), nothing stated, or
    /// numbers per point (`paper_at`).
    pub paper: Option<Paper>,
    /// The paper's number at some grid points only.
    pub paper_at: Vec<(String, Paper)>,
    /// The paper's words (`claim`, or an older file's `paper = "…"`).
    pub claim: Option<String>,
    /// Where a miss is explained.
    pub why: Option<String>,
    pub expect: Expect,
    /// The grid points it applies at; `None`: every point.
    pub points: Option<Vec<String>>,
}

impl Check {
    /// The ratio as the report names it: `A / B`, with the points when it compares two.
    pub fn ratio(&self) -> String {
        let side = |t: &Term| match &t.point {
            Some(p) => format!("{} ({p})", t.variant),
            None => t.variant.clone(),
        };
        match &self.den {
            Some(den) => format!("{} / {}", side(&self.num), side(den)),
            None => side(&self.num),
        }
    }

    /// The paper's number at `point` (the check's own point when it names one).
    pub fn paper_at(&self, point: &str) -> Option<Paper> {
        let point = self.num.point.as_deref().unwrap_or(point);
        (self.paper_at.iter())
            .find(|(p, _)| p == point)
            .map(|(_, v)| *v)
            .or(self.paper)
    }

    /// The metric in words: one label, or `a over b` when the sides differ.
    pub fn metric(&self) -> String {
        match &self.den {
            Some(den) if den.metric != self.num.metric => {
                format!("{} over {}", self.num.metric.label(), den.metric.label())
            }
            _ => self.num.metric.label().to_string(),
        }
    }
}

/// Where an experiment's numbers come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Runs of its scenario in the simulator, one per point and variant.
    Scenario,
    /// A model computed in-process from irn-core alone, without a network
    /// ([`crate::reproduce::model`]): its results stand where runs' summaries would.
    Model(Model),
}

/// `--quick`'s window for an experiment that names none and runs longer.
const QUICK_WINDOW: irn_core::Duration = irn_core::Duration::from_ms(4);

/// A scenario (or a model) and what it should show.
pub struct Experiment {
    pub id: String,
    pub title: String,
    /// The paper's name, heading its figures in a report (empty for a user's experiment).
    pub paper: String,
    /// The key `irn reproduce KEY` selects it by (`irn`, `eunomia`, `conweave`, `wan`; empty for
    /// a user's file).
    pub paper_key: &'static str,
    /// What the report says under the title.
    pub note: Option<String>,
    text: String,
    /// `name=<file stem>` when the text sets no `name`, given before every other override.
    named: Vec<String>,
    /// Names the file in errors.
    pub file: String,
    base_dir: PathBuf,
    /// Grid points: (name, overrides); one unnamed point without `[[experiment.point]]`.
    pub points: Vec<(String, Vec<String>)>,
    /// Seeds each run repeats with, averaged; `None`: windowed (one seed, convergence).
    pub repetitions: Option<u64>,
    /// The scenario's own window, its `workload.duration` (20 ms when it has none): a full
    /// run's first.
    pub window: irn_core::Duration,
    /// `--quick`'s window: `[experiment] quick_window`, else 4 ms or the scenario's own
    /// window if that is shorter.
    pub quick_window: String,
    /// `[experiment] warmup`: simulated, unmeasured, before each window (`None`: a tenth of
    /// the window).
    pub warmup: Option<irn_core::Duration>,
    /// `[experiment] cooldown`: arrivals after each window, unmeasured (`None`: none).
    pub cooldown: Option<irn_core::Duration>,
    pub chart: Chart,
    pub chart_metrics: Vec<Metric>,
    pub checks: Vec<Check>,
    pub source: Source,
}

impl Experiment {
    /// An experiment computed by `model` rather than run: it has no scenario, its grid
    /// points are the model's, and its checks name the model's result keys.
    pub fn of_model(
        model: Model,
        id: &str,
        title: &str,
        note: &str,
        points: Vec<String>,
        checks: Vec<Check>,
    ) -> Self {
        let points = if points.is_empty() {
            vec![(String::new(), Vec::new())]
        } else {
            points.into_iter().map(|p| (p, Vec::new())).collect()
        };
        Experiment {
            id: id.to_string(),
            title: title.to_string(),
            paper: "Eunomia".to_string(),
            paper_key: "eunomia",
            note: Some(note.to_string()),
            text: String::new(),
            named: Vec::new(),
            file: format!("{id} (an in-process model)"),
            base_dir: PathBuf::new(),
            points,
            repetitions: None,
            window: irn_core::Duration::ZERO,
            quick_window: String::new(),
            warmup: None,
            cooldown: None,
            chart: Chart::Bars,
            chart_metrics: Vec::new(),
            checks,
            source: Source::Model(model),
        }
    }

    /// Reads `text` (`file` names it; its data paths resolve against `base_dir`).
    pub fn parse(
        text: String,
        file: &str,
        base_dir: &Path,
        paper_key: &'static str,
    ) -> Result<Self> {
        let named: Vec<String> = scenario::file_name_default(Path::new(file), &text)
            .into_iter()
            .collect();
        let sc = scenario::parse(&text, file, base_dir, &named)?;
        let e = sc.experiment.unwrap_or_default();
        // Only Poisson and query arrivals have a window (`workload.duration`); any other
        // workload (a collective, a DAG, a trace, an incast) is one event, run once per variant
        // unless `repetitions` asks for more seeds.
        let kind = sc.runs.first().map(|r| r.resolved.workload.kind);
        let one_event = kind.is_some_and(|k| {
            !matches!(
                k,
                scenario::WorkloadKind::Poisson | scenario::WorkloadKind::Queries
            )
        });
        // (With `repetitions` too, the scenario's own checks refused them already.)
        let window_keys = [("warmup", &e.warmup), ("cooldown", &e.cooldown)];
        let set = window_keys.into_iter().find(|(_, v)| v.is_some());
        if let Some((key, _)) = set.filter(|_| one_event) {
            bail!(
                "{file}: experiment.{key}: only for a workload with an arrival window (workload.kind \
                 \"poisson\" or \"queries\"); this one ({}) is one event, run once per variant",
                kind.map_or(String::new(), |k| format!("{k:?}").to_lowercase())
            );
        }
        let repetitions = e.repetitions.or(one_event.then_some(1));
        let window: irn_core::Duration = (sc.runs.first())
            .and_then(|r| r.resolved.workload.duration.as_deref().map(str::parse))
            .transpose()?
            .unwrap_or(irn_core::Duration::from_ms(20));
        // The fewest collective jobs a variant has: a check's `collectives.N` must be one.
        let jobs = (sc.runs.iter())
            .map(|r| r.config.collectives.as_ref().map_or(0, |c| c.jobs.len()))
            .min()
            .unwrap_or(0);
        let metric = |m: &str| {
            job_index(m, jobs).map_err(|e| anyhow::anyhow!("{file}: metric `{m}`: {e}"))?;
            Metric::parse(m).map_err(anyhow::Error::msg)
        };
        let mut checks = Vec::new();
        for c in &sc.checks {
            let number = |p: &PaperValue| match p {
                PaperValue::Value(v) => Some(Paper::Value(*v)),
                PaperValue::Range(r) => Some(Paper::Range(*r)),
                PaperValue::UpTo { up_to } => Some(Paper::UpTo { up_to: *up_to }),
                PaperValue::Words(_) | PaperValue::ByPoint(_) => None,
            };
            let (paper, words, paper_at) = match &c.paper {
                Some(PaperValue::Words(w)) => (None, Some(w.clone()), Vec::new()),
                Some(PaperValue::ByPoint(at)) => {
                    let at = at.iter().filter_map(|(k, v)| Some((k.clone(), number(v)?)));
                    (None, None, at.collect())
                }
                Some(p) => (number(p), None, Vec::new()),
                None => (None, None, Vec::new()),
            };
            let claim = c.claim.clone().or(words);
            let list = c.metric_list();
            // Each side's own metric, else the check's (one check per listed metric).
            let metrics: Vec<Option<&str>> = if list.is_empty() {
                vec![None]
            } else {
                list.into_iter().map(Some).collect()
            };
            for m in metrics {
                let term = |s: &scenario::Side| -> Result<Term> {
                    let text = s.metric().or(m).context("a check without a metric")?;
                    Ok(Term {
                        variant: s.variant().to_string(),
                        point: s.point().map(str::to_string),
                        metric: metric(text)?,
                    })
                };
                checks.push(Check {
                    num: term(&c.num)?,
                    den: c.den.as_ref().map(term).transpose()?,
                    paper,
                    paper_at: paper_at.clone(),
                    claim: claim.clone(),
                    why: c.why.clone(),
                    expect: c.expect,
                    points: c.points.clone(),
                });
            }
        }
        let points = if e.point.is_empty() {
            vec![(String::new(), Vec::new())]
        } else {
            e.point
                .iter()
                .map(|p| {
                    let set = p.set.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    (p.name.clone(), set)
                })
                .collect()
        };
        let chart_metrics = if e.chart_metrics.is_empty() {
            vec!["avg_slowdown", "avg_fct_us", "p99_fct_us"]
                .into_iter()
                .map(metric)
                .collect::<Result<_>>()?
        } else {
            e.chart_metrics
                .iter()
                .map(|m| metric(m))
                .collect::<Result<_>>()?
        };
        if let Chart::VariantLines(lines) = &e.chart {
            for line in lines {
                metric(&line.metric)?;
                if let Some(per) = line.per.filter(|per| !(per.is_finite() && *per > 0.0)) {
                    bail!(
                        "{file}: [experiment] chart variant-lines `{}`: per = {per} must be a \
                         positive number",
                        line.metric,
                    );
                }
            }
        }
        let id = e.id.unwrap_or_else(|| sc.name.clone());
        Ok(Experiment {
            title: e.title.unwrap_or_else(|| id.clone()),
            id,
            paper: e.paper.unwrap_or_default(),
            paper_key,
            note: e.note,
            text,
            named,
            file: file.to_string(),
            base_dir: base_dir.to_path_buf(),
            points,
            repetitions,
            window,
            quick_window: e
                .quick_window
                .unwrap_or_else(|| QUICK_WINDOW.min(window).to_string()),
            warmup: e.warmup.as_deref().map(str::parse).transpose()?,
            cooldown: e.cooldown.as_deref().map(str::parse).transpose()?,
            chart: e.chart,
            chart_metrics,
            checks,
            source: Source::Scenario,
        })
    }

    /// A user's experiment file; it must hold at least one `[[check]]`.
    pub fn load(path: &Path) -> Result<Self> {
        let text = irn_sim::input::read_text(path, irn_sim::input::SCENARIO)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let e = Experiment::parse(text, &path.display().to_string(), &base_dir, "")?;
        if e.checks.is_empty() {
            bail!(
                "{}: no [[check]]: an experiment says what it should show, e.g.\n\n[[check]]\n\
                 num = \"A\"\nden = \"B\"\nmetric = \"avg_fct_us\"\npaper = 2.5\n\
                 claim = \"A is 2.5x slower\"\nexpect = \"above\"",
                path.display()
            );
        }
        Ok(e)
    }

    /// Every shipped experiment, in report order: the models after their paper's scenarios.
    pub fn shipped() -> Result<Vec<Experiment>> {
        let mut all = SHIPPED
            .iter()
            .map(|(key, file, text)| {
                let file = format!("{file} (embedded)");
                Experiment::parse(text.to_string(), &file, Path::new("."), key)
            })
            .collect::<Result<Vec<_>>>()?;
        let after = all.iter().rposition(|e| e.paper_key == "eunomia");
        let at = after.map_or(all.len(), |i| i + 1);
        all.splice(at..at, crate::reproduce::model::experiments()?);
        Ok(all)
    }

    /// The scenario's runs at one point of the grid, with `overrides` over it.
    pub fn runs(&self, overrides: &[String]) -> Result<scenario::Scenario> {
        let overrides: Vec<String> = (self.named.iter().chain(overrides)).cloned().collect();
        Ok(scenario::parse(
            &self.text,
            &self.file,
            &self.base_dir,
            &overrides,
        )?)
    }

    /// The longest window a full run doubles to when `--max-window` is not given: its
    /// paper's ([`MAX_WINDOWS`]); 0 (the first window, once) for a user's experiment.
    pub fn default_max_window(&self) -> irn_core::Duration {
        (MAX_WINDOWS.iter())
            .find(|(key, _)| *key == self.paper_key)
            .map_or(irn_core::Duration::ZERO, |&(_, ms)| {
                irn_core::Duration::from_ms(ms)
            })
    }

    /// Whether the workload has a window to converge (not a repeated one-off event).
    pub fn windowed(&self) -> bool {
        self.repetitions.is_none()
    }
}

/// Refuses a `collectives.N.…` part of metric `text` whose job `N` the scenario does not have
/// (`jobs` of them): its value would be missing from every run, and the check decided on
/// nothing.
fn job_index(text: &str, jobs: usize) -> Result<(), String> {
    for part in text.split('/').map(str::trim) {
        let Some(index) = (part.strip_prefix("collectives."))
            .and_then(|rest| rest.split('.').next())
            .and_then(|i| i.parse::<usize>().ok())
        else {
            continue;
        };
        if index >= jobs {
            return Err(match jobs {
                0 => "the scenario has no collective jobs (workload.kind = \"collective\" \
                      with [[workload.job]] entries)"
                    .to_string(),
                1 => "the scenario has one collective job, `collectives.0`".to_string(),
                n => format!(
                    "the scenario has {n} collective jobs, `collectives.0` to `collectives.{}`",
                    n - 1
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_experiment_loads_and_has_checks() {
        let all = Experiment::shipped().unwrap();
        let mut ids = std::collections::BTreeSet::new();
        for e in &all {
            assert!(!e.checks.is_empty(), "{}", e.id);
            assert!(ids.insert(e.id.clone()), "duplicate id {}", e.id);
            assert!(PAPERS.contains(&e.paper_key), "{}", e.id);
        }
    }

    /// Every check of the papers states the paper's number or its words (`claim`), none the
    /// older free text in `paper`; the numbers per point name points the grid has.
    #[test]
    fn every_shipped_check_states_a_number_or_the_papers_words() {
        for e in Experiment::shipped().unwrap() {
            for c in &e.checks {
                assert!(
                    c.paper.is_some() || !c.paper_at.is_empty() || c.claim.is_some(),
                    "{}: {} states nothing",
                    e.id,
                    c.ratio()
                );
            }
        }
        for (_, file, text) in SHIPPED {
            let doc: toml::Table = text.parse().unwrap();
            for check in doc
                .get("check")
                .and_then(|c| c.as_array())
                .into_iter()
                .flatten()
            {
                assert!(
                    !check.get("paper").is_some_and(toml::Value::is_str),
                    "{file}: {check}"
                );
            }
        }
    }

    /// A check's `points` limits it to those grid points: kept with the check, refused when it
    /// names no point of the grid or comes with sides that name their own.
    #[test]
    fn a_check_may_apply_at_some_points_only() {
        let base = "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nduration = \"10us\"\n\
                    [[compare]]\nname = \"a\"\n[[compare]]\nname = \"b\"\n\
                    set = { \"transport.kind\" = \"roce\" }\n[experiment]\n\
                    [[experiment.point]]\nname = \"low\"\nset = { \"workload.load\" = 0.2 }\n\
                    [[experiment.point]]\nname = \"high\"\nset = { \"workload.load\" = 0.8 }\n\
                    [[check]]\nnum = \"a\"\nden = \"b\"\nmetric = \"avg_fct_us\"\n\
                    expect = \"below\"\n";
        let parse = |points: &str| {
            Experiment::parse(format!("{base}{points}"), "t.toml", Path::new("."), "")
        };
        let e = parse("points = [\"high\"]\n").unwrap();
        assert_eq!(e.checks[0].points, Some(vec!["high".to_string()]));
        assert_eq!(parse("").unwrap().checks[0].points, None);
        let err = format!("{:#}", parse("points = [\"hihg\"]\n").err().unwrap());
        assert!(
            err.contains("check[0].points = \"hihg\": a point of [[experiment.point]]: low, high"),
            "{err}"
        );
    }

    /// A workload without an arrival window (here a collective) is one event, run once per
    /// variant unless `repetitions` asks for more; a warm-up or cool-down, which only a window
    /// has, and a check of a collective job the scenario lacks are refused.
    #[test]
    fn a_collective_experiment_is_one_event_and_its_jobs_are_checked() {
        let base = "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nkind = \"collective\"\n\
                    [[workload.job]]\nop = \"all-reduce\"\nsize = \"64KB\"\nranks = 4\n\
                    [[compare]]\nname = \"a\"\n[[compare]]\nname = \"b\"\n\
                    set = { \"transport.kind\" = \"roce\" }\n[experiment]\n";
        let check = |metric: &str| {
            format!(
                "[[check]]\nnum = \"a\"\nden = \"b\"\nmetric = \"{metric}\"\nexpect = \"above\"\n"
            )
        };
        let parse = |text: String| Experiment::parse(text, "t.toml", Path::new("."), "");
        let metric = "collectives.0.busbw_gbytes_per_s";
        let e = parse(format!("{base}{}", check(metric))).unwrap();
        assert_eq!(e.repetitions, Some(1));
        assert!(!e.windowed());
        let e = parse(format!("{base}repetitions = 3\n{}", check(metric))).unwrap();
        assert_eq!(e.repetitions, Some(3));
        let err = parse(format!("{base}warmup = \"1ms\"\n{}", check(metric)));
        let err = format!("{:#}", err.err().unwrap());
        assert!(
            err.contains("t.toml: experiment.warmup: only for a workload with an arrival window"),
            "{err}"
        );
        let err = parse(format!(
            "{base}{}",
            check("collectives.1.busbw_gbytes_per_s")
        ));
        let err = format!("{:#}", err.err().unwrap());
        assert!(
            err.contains(
                "t.toml: metric `collectives.1.busbw_gbytes_per_s`: the scenario has one \
                 collective job, `collectives.0`"
            ),
            "{err}"
        );
        // A chart's `per` as written, not as Rust's `Some(-2.0)`.
        let chart = "chart = { variant-lines = [{ metric = \"drops\", per = -2 }] }\n";
        let err = parse(format!("{base}{chart}{}", check(metric)));
        let err = format!("{:#}", err.err().unwrap());
        assert!(
            err.contains("variant-lines `drops`: per = -2 must be a positive number"),
            "{err}"
        );
    }

    /// Each paper's figures double to its own window by default; a user's run once.
    #[test]
    fn each_paper_has_its_default_window() {
        let all = Experiment::shipped().unwrap();
        let window = |key: &str| {
            let e = all.iter().find(|e| e.paper_key == key).unwrap();
            e.default_max_window().to_string()
        };
        assert_eq!(window("irn"), "80ms");
        assert_eq!(window("eunomia"), "10ms");
        assert_eq!(window("conweave"), "20ms");
        assert_eq!(window("hpcc"), "10ms");
        assert_eq!(window("wan"), "0ps");
    }

    /// A figure's scenario added to `scenarios/paper/` but not to [`SHIPPED`] would never run.
    #[test]
    fn every_papers_scenario_is_shipped() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        for dir in [
            "scenarios/paper",
            "scenarios/paper/eunomia",
            "scenarios/paper/conweave",
            "scenarios/paper/hpcc",
            "scenarios/paper/wan",
        ] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "toml") {
                    let file = format!("{dir}/{}", path.file_name().unwrap().to_string_lossy());
                    assert!(
                        SHIPPED.iter().any(|(_, f, _)| *f == file),
                        "{file} is not in SHIPPED"
                    );
                }
            }
        }
    }
}
