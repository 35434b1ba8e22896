//! `[experiment]` and `[[check]]`: a scenario that says what it should show.
//!
//! A paper's figure is a scenario (its variants) and a few claims about them: "RoCE+PFC's
//! average slowdown is above IRN's", "DRILL with Eunomia has a lower mean FCT than ECMP". Written
//! as data beside the scenario, the claims are run by one engine for every paper (`irn
//! reproduce`) and for a user's own experiments (`irn check FILE`). `irn run` ignores both
//! sections; they never reach a run's resolved scenario.
//!
//! ```toml
//! [experiment]
//! id = "fig01"                      # default: the scenario's name
//! title = "Fig. 1: IRN (no PFC) vs RoCE (PFC)"
//! paper = "IRN (SIGCOMM 2018)"      # groups figures in a report
//! note = "…"                        # printed under the title (what it leaves out, say)
//! chart = "bars"                    # "bars", "single-packet-tail", { lines = "workload.senders" },
//!                                   # { variant-lines = [{ metric = "…", per = 1e6, label = "…" }] }
//! chart_metrics = ["avg_fct_us"]    # the bars' metrics (default: avg slowdown, avg and p99 FCT)
//! repetitions = 3                   # no arrival window (an incast): average this many seeds
//! quick_window = "4ms"              # the window of `--quick`
//! warmup = "10ms"                   # not measured before each window (default: a tenth of it)
//! cooldown = "5ms"                  # arrivals after each window, not measured (default: none)
//! [[experiment.point]]              # grid points, each a set of keys over the scenario
//! name = "M=10"
//! set = { "workload.senders" = 10 }
//!
//! [[check]]
//! num = "RoCE+PFC"                  # a variant, or { variant, point, metric }
//! den = "IRN"                      # leave out to bound num's own value (at_most/at_least)
//! metrics = ["avg_slowdown", "avg_fct_us", "p99_fct_us"]   # or metric = "…"
//! paper = [2.8, 3.7]                # the paper's value: a number (9.5) or a range [low, high],
//!                                   # an "up to" bound ({ up_to = 1.73 }), or per point:
//!                                   # { "80%" = 6.7 } (other points: words only)
//! claim = "IRN better by 2.8–3.7× (§4.2.1)"   # the paper's words; alone: a qualitative check
//! why = "docs/reproduce.md#fig-1"   # where the report links a miss to its explanation
//! expect = "above"                  # num/den > 1; "below": < 1; { near = 0.05 }: within 5 %;
//!                                   # { at_most = 1.1 }, { at_least = 2 }: bounds
//! ```
//!
//! `expect` is the direction; `paper` is what the ratio's magnitude is held to (`irn reproduce`
//! says whether it is in the paper's range, near it or off). A check with only words (`claim`,
//! or `paper` as a string, as files written before the paper's value was data have it) is
//! qualitative: its direction alone is checked.
//!
//! A metric is a key of `summary.json` (`avg_fct_us`), an element of a list in it
//! (`fct_by_size.3.p99_fct_us`), or the quotient of two (`out_of_order_packets /
//! data_packets_sent`).

use serde::{Deserialize, Serialize};

use super::{invalid, ScenarioError};
use crate::metrics::{
    BottleneckSummary, CollectiveSummary, ConWeaveSummary, FailureSummary, FctBucket,
    PauseControlSummary, PausedAtEnd, QuerySummary, Summary,
};

/// `[experiment]`: how `irn reproduce` and `irn check` run the scenario.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExperimentSection {
    /// Names the experiment on the command line and its results folder; default the
    /// scenario's name.
    pub id: Option<String>,
    /// A heading for the report; default the id.
    pub title: Option<String>,
    /// The paper the claims come from; figures of one paper share a report heading.
    pub paper: Option<String>,
    /// A sentence the report prints under the title: what the experiment leaves out, say.
    pub note: Option<String>,
    pub chart: Chart,
    /// The metrics the bars show, one group each. Default: average slowdown, average FCT and
    /// p99 FCT.
    pub chart_metrics: Vec<String>,
    /// Without an arrival window (a workload of one event, such as an incast), each run is
    /// repeated with seeds 1 … `repetitions` and the metrics averaged, as IRN §4.4.3 does.
    /// Unset: the workload's window, checked for convergence.
    pub repetitions: Option<u64>,
    /// The window `--quick` runs. Default 4 ms, or the scenario's own window if shorter.
    pub quick_window: Option<String>,
    /// How long each window's runs simulate before the window starts, unmeasured, so the
    /// network reaches its steady state first: a run of window `W` has `W` + `warmup` of
    /// arrivals. Unset: the first tenth of the window itself (`run.warmup` = `W` / 10). Not
    /// used by `--quick`, a smoke test whose runs stay short.
    pub warmup: Option<String>,
    /// How long arrivals go on after each window, unmeasured, so the window's last flows
    /// finish in a loaded network rather than one that drains (`run.measure_until` at the
    /// window's end). Unset: arrivals stop with the window. Not used by `--quick`.
    pub cooldown: Option<String>,
    /// Grid points; none: the scenario as written.
    pub point: Vec<PointSection>,
}

/// One `[[experiment.point]]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PointSection {
    pub name: String,
    /// Dotted keys and values applied over the scenario and every variant.
    #[serde(default)]
    pub set: toml::Table,
}

/// `experiment.chart`: the figure the report draws.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum Chart {
    /// Grouped bars of the chart metrics (the first point's), a group per metric.
    #[default]
    Bars,
    /// The tail CDF of single-packet flows' FCTs, a line per variant (IRN Fig. 8).
    SinglePacketTail,
    /// Each check's ratio against the numeric value of this grid key, a line per check
    /// (IRN Fig. 9: against the incast degree).
    Lines(String),
    /// Metrics against the number in each variant's name (`C=20`: 20), one chart per metric
    /// and a line per grid point (the WAN slides' buffer depth against the characteristic
    /// constant).
    VariantLines(Vec<VariantLine>),
}

/// One chart of [`Chart::VariantLines`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantLine {
    /// A metric of `summary.json`, as `[[check]] metric`.
    pub metric: String,
    /// What the metric is divided by before it is drawn: a unit (4194240 for the slides'
    /// longest pause of data, in bytes). Default 1.
    #[serde(default)]
    pub per: Option<f64>,
    /// The y axis' label. Default: the metric.
    #[serde(default)]
    pub label: Option<String>,
}

/// One `[[check]]`: the ratio num / den of a metric and the direction a paper found for it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckSection {
    pub num: Side,
    /// Absent: the check bounds `num`'s own value (`{ at_most }` or `{ at_least }`), e.g. no
    /// drops at all.
    #[serde(default)]
    pub den: Option<Side>,
    /// One metric, or…
    pub metric: Option<String>,
    /// …several, one check each.
    #[serde(default)]
    pub metrics: Vec<String>,
    /// The paper's value for this ratio: a number, a range, or (files written before it was a
    /// number) its words.
    #[serde(default)]
    pub paper: Option<PaperValue>,
    /// The paper's words for the claim, with where it says so (section, figure).
    #[serde(default)]
    pub claim: Option<String>,
    /// A link (URL or relative path with `#anchor`) to the paragraph that explains why the
    /// ratio misses the paper's number; the report links it from the verdict.
    #[serde(default)]
    pub why: Option<String>,
    pub expect: Expect,
    /// The grid points (`[[experiment.point]]` names) the check applies at; every point when
    /// absent. A claim that some points cannot test (a loss the network there never has) is
    /// not counted as holding there.
    #[serde(default)]
    pub points: Option<Vec<String>>,
}

/// `[[check]] paper`: the paper's number, its range, or a sentence.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum PaperValue {
    /// One value (`paper = 9.5`).
    Value(f64),
    /// A range (`paper = [2.8, 3.7]`).
    Range([f64; 2]),
    /// An "up to" bound (`paper = { up_to = 1.73 }`): the largest effect the paper reports over
    /// its settings, which bounds a ratio (between 1 and it) without being its value.
    UpTo { up_to: f64 },
    /// Words, the form of files written before the value was data: the same as `claim`.
    Words(String),
    /// A value or range per grid point (`paper = { "80%" = 6.7, "50%" = [2, 3] }`), where the
    /// paper gives a number at some points only; the others are qualitative.
    ByPoint(Vec<(String, PaperValue)>),
}

/// A check's numerator or denominator: a variant, or a variant at a grid point (default: every
/// point, each against itself) with its own metric (then every side names its own, and the
/// check none).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Side {
    Variant(String),
    At(SideAt),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SideAt {
    pub variant: String,
    pub point: Option<String>,
    pub metric: Option<String>,
}

impl Side {
    pub fn variant(&self) -> &str {
        match self {
            Side::Variant(v) => v,
            Side::At(a) => &a.variant,
        }
    }
    pub fn point(&self) -> Option<&str> {
        match self {
            Side::Variant(_) => None,
            Side::At(a) => a.point.as_deref(),
        }
    }
    pub fn metric(&self) -> Option<&str> {
        match self {
            Side::Variant(_) => None,
            Side::At(a) => a.metric.as_deref(),
        }
    }
}

/// The direction a paper found for a ratio.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Expect {
    /// The numerator is larger (ratio > 1).
    Above,
    /// The numerator is smaller (ratio < 1).
    Below,
    /// About equal: within this fraction of 1.
    Near(f64),
    /// At most this ratio ("no worse than": `{ at_most = 1.1 }`).
    AtMost(f64),
    /// At least this ratio ("at least twice": `{ at_least = 2 }`).
    AtLeast(f64),
}

impl Expect {
    /// Why the expectation could never be decided as meant, if so: a tolerance or a bound
    /// below 0 (a ratio of two non-negative metrics never is), or not a finite number.
    fn invalid(&self) -> Option<&'static str> {
        match *self {
            Expect::Near(t) if !(t.is_finite() && t >= 0.0) => {
                Some("{ near = T }: a tolerance T of 0 or more (0.05 is within 5 %)")
            }
            Expect::AtMost(b) | Expect::AtLeast(b) if !(b.is_finite() && b >= 0.0) => {
                Some("a bound of 0 or more: a ratio of two non-negative metrics is never below 0")
            }
            _ => None,
        }
    }

    pub fn holds(self, ratio: f64) -> bool {
        match self {
            Expect::Above => ratio > 1.0,
            Expect::Below => ratio < 1.0,
            Expect::Near(tolerance) => (ratio - 1.0).abs() <= tolerance,
            Expect::AtMost(bound) => ratio <= bound,
            Expect::AtLeast(bound) => ratio >= bound,
        }
    }

    /// Whether `ratio` reverses the effect: the paper's ratio is on one side of 1 (`above` or
    /// `below`) and this one on the other (exactly 1 is on neither). A miss of a tolerance or a
    /// bound is not a reversal.
    pub fn reversed(self, ratio: f64) -> bool {
        match self {
            Expect::Above => ratio < 1.0,
            Expect::Below => ratio > 1.0,
            _ => false,
        }
    }
}

/// As a scenario writes it (`"above"`, `{ near = 0.05 }`), so an error shows the user's
/// TOML rather than the Rust type.
impl std::fmt::Display for Expect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let real = crate::scenario::real;
        match *self {
            Expect::Above => write!(f, "\"above\""),
            Expect::Below => write!(f, "\"below\""),
            Expect::Near(t) => write!(f, "{{ near = {} }}", real(t)),
            Expect::AtMost(b) => write!(f, "{{ at_most = {} }}", real(b)),
            Expect::AtLeast(b) => write!(f, "{{ at_least = {} }}", real(b)),
        }
    }
}

/// A metric of `summary.json`: a key, a list element's key, or the quotient of two.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    text: String,
}

impl Metric {
    /// Parses `text`, checking every key against `summary.json`'s.
    pub fn parse(text: &str) -> Result<Metric, String> {
        let parts: Vec<&str> = text.split('/').map(str::trim).collect();
        if parts.len() > 2 {
            return Err("at most one `/` (a quotient of two keys)".into());
        }
        for part in parts {
            check_path(part)?;
        }
        Ok(Metric {
            text: text.trim().to_string(),
        })
    }

    /// A metric of results that are not `summary.json`'s (an in-process model's), checked
    /// against that model's `keys`.
    pub fn among(text: &str, keys: &[&str]) -> Result<Metric, String> {
        for part in text.split('/').map(str::trim) {
            if !keys.contains(&part) {
                return Err(format!("`{part}`: one of {}", keys.join(", ")));
            }
        }
        Ok(Metric {
            text: text.trim().to_string(),
        })
    }

    /// The metric's value in a run's summary; `None` when it is `null` there (an incast
    /// metric of a run without incast, a size bucket without flows) or the index is missing.
    pub fn value(&self, summary: &serde_json::Value) -> Option<f64> {
        let mut parts = self.text.split('/').map(|p| lookup(summary, p.trim()));
        let first = parts.next()??;
        match parts.next() {
            // Two zeros (no drops of no packets) are equal, as a check's two sides are.
            Some(d) => match d? {
                0.0 if first == 0.0 => Some(1.0),
                d => Some(first / d),
            },
            None => Some(first),
        }
    }

    /// The metric as the report names it: the known headline keys in words, others as written.
    pub fn label(&self) -> &str {
        match self.text.as_str() {
            "avg_slowdown" => "avg slowdown",
            "p99_slowdown" => "p99 slowdown",
            "avg_fct_us" => "avg FCT",
            "p99_fct_us" => "p99 FCT",
            "rct_us" => "incast RCT",
            "single_packet_p99_fct_us" => "1-packet p99 FCT",
            "background_avg_slowdown" => "background avg slowdown",
            "background_avg_fct_us" => "background avg FCT",
            "background_p99_fct_us" => "background p99 FCT",
            other => other,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}

fn lookup(summary: &serde_json::Value, path: &str) -> Option<f64> {
    let mut v = summary;
    for step in path.split('.') {
        v = match step.parse::<usize>() {
            Ok(i) => v.get(i)?,
            Err(_) => v.get(step)?,
        };
    }
    v.as_f64()
}

/// Whether `path` names a number of `summary.json`: a key of [`Summary`], `SECTION.KEY` into
/// an object such as `failures` or `queries`, or `LIST.INDEX.KEY` into a list such as
/// `fct_by_size` or `collectives` (whose length depends on the run).
fn check_path(path: &str) -> Result<(), String> {
    // Every key, the ones a run may leave out included, and one entry of every list.
    let every = Summary {
        verbs_data_errors: Some(0),
        ordering_memory_samples: Some(0),
        ordering_avg_nic_bytes: Some(0.0),
        ordering_peak_nic_bytes: Some(0),
        ordering_avg_nic_bitmap_bytes: Some(0.0),
        ordering_avg_connection_bytes: Some(0.0),
        link_losses: Some(0),
        deflections: Some(0),
        ttl_drops: Some(0),
        failures: Some(FailureSummary::default()),
        conweave: Some(ConWeaveSummary::default()),
        ports_paused_at_end_by: Some(PausedAtEnd::default()),
        queries: Some(QuerySummary::default()),
        pause_control: Some(PauseControlSummary::default()),
        collectives: Some(vec![CollectiveSummary::default()]),
        fct_by_size: vec![FctBucket::default()],
        ordering_refused_connections: Some(0),
        ordering_refused_pool: Some(0),
        ordering_peak_records: Some(0),
        jain_index: Some(0.0),
        bottleneck: Some(BottleneckSummary::default()),
        arrival_goodput_gbps: Some(0.0),
        ordering_drops: Some(0),
        avg_slowdown: Some(0.0),
        p50_slowdown: Some(0.0),
        p99_slowdown: Some(0.0),
        avg_fct_us: Some(0.0),
        p50_fct_us: Some(0.0),
        p99_fct_us: Some(0.0),
        ..Summary::default()
    };
    let summary = serde_json::to_value(every).expect("a summary serializes");
    // A number, or `null` where a run has none.
    let numeric = |v: &serde_json::Value| v.is_number() || v.is_null();
    let keys = |v: &serde_json::Value| -> Vec<String> {
        v.as_object().map_or_else(Vec::new, |o| {
            (o.iter().filter(|(_, v)| numeric(v)))
                .map(|(k, _)| k.clone())
                .collect()
        })
    };
    let steps: Vec<&str> = path.split('.').collect();
    let at = |key: &str| summary.get(key).unwrap_or(&serde_json::Value::Null);
    match steps[..] {
        [key] if summary.get(key).is_some_and(numeric) => Ok(()),
        [section, key] if at(section).get(key).is_some_and(numeric) => Ok(()),
        [section, ..] if at(section).is_object() => Err(format!(
            "`{path}`: a {section} metric is `{section}.KEY` with KEY one of {}",
            keys(at(section)).join(", ")
        )),
        [list, index, key]
            if index.parse::<usize>().is_ok() && at(list)[0].get(key).is_some_and(numeric) =>
        {
            Ok(())
        }
        [list, ..] if at(list).is_array() => Err(format!(
            "`{path}`: an entry of {list} is `{list}.INDEX.KEY` with INDEX from 0 and KEY one \
             of {}",
            keys(&at(list)[0]).join(", ")
        )),
        _ => {
            let object = summary.as_object().expect("a summary is an object");
            let mut forms = keys(&summary);
            for (k, v) in object {
                if v.is_object() {
                    forms.push(format!("{k}.KEY"));
                } else if v.is_array() && v[0].is_object() {
                    forms.push(format!("{k}.INDEX.KEY"));
                }
            }
            Err(format!(
                "`{path}` is not a number of summary.json (one of {})",
                forms.join(", ")
            ))
        }
    }
}

impl CheckSection {
    /// The check's metrics, one check each, in order.
    pub fn metric_list(&self) -> Vec<&str> {
        self.metric
            .iter()
            .map(String::as_str)
            .chain(self.metrics.iter().map(String::as_str))
            .collect()
    }
}

impl<'de> Deserialize<'de> for PaperValue {
    /// By hand, so that a value of another type says what is allowed (serde's untagged enums
    /// only say that nothing matched).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = toml::Value::deserialize(d)?;
        PaperValue::from_toml(&v, true).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "paper = {v}: a number (9.5), a range of two ([2.8, 3.7]), an \"up to\" bound \
                 ({{ up_to = 1.73 }}), one of those per grid point ({{ \"80%\" = 6.7 }}) or the \
                 paper's words (then better in `claim`)"
            ))
        })
    }
}

impl PaperValue {
    /// `v` as a paper value; `top`: not inside a per-point table (which holds numbers only).
    fn from_toml(v: &toml::Value, top: bool) -> Option<PaperValue> {
        let number = |v: &toml::Value| v.as_float().or(v.as_integer().map(|i| i as f64));
        let pair = v.as_array().filter(|a| a.len() == 2);
        match (v, pair.map(|a| (number(&a[0]), number(&a[1])))) {
            (toml::Value::String(s), _) if top => Some(PaperValue::Words(s.clone())),
            (toml::Value::Table(t), _) if t.len() == 1 && t.contains_key("up_to") => {
                number(&t["up_to"]).map(|up_to| PaperValue::UpTo { up_to })
            }
            (toml::Value::Table(t), _) if top => t
                .iter()
                .map(|(k, v)| Some((k.clone(), PaperValue::from_toml(v, false)?)))
                .collect::<Option<_>>()
                .map(PaperValue::ByPoint),
            (_, Some((Some(lo), Some(hi)))) => Some(PaperValue::Range([lo, hi])),
            _ => number(v).map(PaperValue::Value),
        }
    }
}

/// A check's `paper`: a positive number, or a range of two with 0 < low ≤ high, for the check
/// or per grid point (points of [[experiment.point]]); words only once (`claim`, or the older
/// `paper = "…"`, not both).
fn validate_paper(
    file: &str,
    key: &str,
    paper: &PaperValue,
    claim: bool,
    points: &[&str],
) -> Result<(), ScenarioError> {
    let positive = |v: f64| v.is_finite() && v > 0.0;
    let allowed = "a positive number (the paper's value) or a range [low, high] with \
                   0 < low <= high; the paper's words go in `claim`";
    match paper {
        PaperValue::Value(v) if !positive(*v) => Err(invalid(file, key, &v.to_string(), allowed)),
        PaperValue::Range([lo, hi]) if !(positive(*lo) && positive(*hi) && lo <= hi) => {
            Err(invalid(file, key, &format!("[{lo}, {hi}]"), allowed))
        }
        PaperValue::UpTo { up_to } if !positive(*up_to) || *up_to == 1.0 => Err(invalid(
            file,
            key,
            &format!("{{ up_to = {up_to} }}"),
            "an \"up to\" bound: a positive ratio other than 1 (the paper's largest effect)",
        )),
        PaperValue::Words(w) if claim => Err(invalid(
            file,
            key,
            &format!("{w:?}"),
            "a number or a range when `claim` gives the paper's words",
        )),
        PaperValue::ByPoint(at) => {
            for (point, value) in at {
                if !points.contains(&point.as_str()) {
                    return Err(invalid(
                        file,
                        key,
                        &format!("{{ {} = … }}", toml::Value::from(point.as_str())),
                        &format!(
                            "one number or range per point of [[experiment.point]], by its \
                             name: {}",
                            points.join(", ")
                        ),
                    ));
                }
                validate_paper(file, &format!("{key}.\"{point}\""), value, claim, points)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// A variant as its checks see it: its name, the grid points it runs at (every one when
/// `None`), and the parts of `summary.json` only some runs write, so a check on a metric its
/// runs never have is refused before they run rather than found empty after.
pub(super) struct VariantRuns<'a> {
    pub(super) name: &'a str,
    pub(super) points: Option<&'a [String]>,
    /// `conweave`: with `load_balancing.kind = "conweave"`.
    pub(super) conweave: bool,
    /// `bottleneck`: with `[monitor] summary_from`.
    pub(super) bottleneck: bool,
    /// `fct_by_size`'s entries: `run.fct_size_buckets`' edges and the open bucket above them.
    pub(super) fct_buckets: usize,
}

impl VariantRuns<'_> {
    /// Why metric `text` has no value in this variant's runs, if it never has one; `grid(key)`
    /// says whether a grid point sets dotted key `key` (or a key within it), which may give
    /// the runs there what the scenario as loaded has not.
    fn never_writes(&self, text: &str, grid: impl Fn(&str) -> bool) -> Option<String> {
        let name = self.name;
        for part in text.split('/').map(str::trim) {
            let mut steps = part.split('.');
            let why = match (steps.next(), steps.next()) {
                (Some("conweave"), _) if !self.conweave && !grid("load_balancing") => format!(
                    "`{part}`: summary.json has `conweave` only for runs with \
                     load_balancing.kind = \"conweave\", and variant `{name}` does not use \
                     ConWeave"
                ),
                (Some("bottleneck"), _) if !self.bottleneck && !grid("monitor") => format!(
                    "`{part}`: summary.json has `bottleneck` only for runs with [monitor] \
                     summary_from (the samples it is made of), and variant `{name}` has none: \
                     set monitor.interval and monitor.summary_from"
                ),
                (Some("fct_by_size"), Some(i))
                    if i.parse::<usize>().is_ok_and(|i| i >= self.fct_buckets)
                        && !grid("run.fct_size_buckets") =>
                {
                    format!(
                        "`{part}`: variant `{name}` has {} flow-size buckets, fct_by_size.0 to \
                         fct_by_size.{} (run.fct_size_buckets sets their edges)",
                        self.fct_buckets,
                        self.fct_buckets - 1
                    )
                }
                _ => continue,
            };
            return Some(why);
        }
        None
    }
}

/// Checks `[experiment]` and `[[check]]` against the scenario's variants.
pub(super) fn validate(
    file: &str,
    experiment: Option<&ExperimentSection>,
    checks: &[CheckSection],
    variants: &[VariantRuns],
    compare: bool,
) -> Result<(), ScenarioError> {
    let points: Vec<&str> = experiment.map_or_else(Vec::new, |e| {
        e.point.iter().map(|p| p.name.as_str()).collect()
    });
    let names: Vec<&str> = variants.iter().map(|v| v.name).collect();
    // Whether a grid point sets `key`, or a key within it or holding it.
    let grid = |key: &str| {
        (experiment.iter().flat_map(|e| &e.point))
            .any(|p| (p.set.keys()).any(|k| super::within(k, key) || super::within(key, k)))
    };
    validate_variant_points(file, variants, &points)?;
    if let Some(e) = experiment {
        let mut seen = std::collections::BTreeSet::new();
        for p in &e.point {
            if !seen.insert(p.name.as_str()) {
                return Err(invalid(
                    file,
                    "experiment.point.name",
                    &p.name,
                    "point names must be unique",
                ));
            }
        }
        if e.repetitions == Some(0) {
            return Err(invalid(file, "experiment.repetitions", "0", "at least 1"));
        }
        for m in &e.chart_metrics {
            Metric::parse(m).map_err(|err| invalid(file, "experiment.chart_metrics", m, &err))?;
        }
        if let Some(w) = &e.quick_window {
            super::parse_key::<irn_core::Duration>(file, "experiment.quick_window", w)?;
        }
        for (key, value) in [("warmup", &e.warmup), ("cooldown", &e.cooldown)] {
            let Some(w) = value else { continue };
            let key = format!("experiment.{key}");
            super::parse_key::<irn_core::Duration>(file, &key, w)?;
            if e.repetitions.is_some() {
                return Err(invalid(
                    file,
                    &key,
                    w,
                    "only for a windowed experiment (not with repetitions)",
                ));
            }
        }
    }
    for (i, c) in checks.iter().enumerate() {
        let at = |side: &str| format!("check[{i}].{side}");
        if let Some(paper) = &c.paper {
            validate_paper(file, &at("paper"), paper, c.claim.is_some(), &points)?;
        }
        let sides = [("num", Some(&c.num)), ("den", c.den.as_ref())];
        for (side, s) in sides.into_iter().filter_map(|(n, s)| Some((n, s?))) {
            if !names.contains(&s.variant()) {
                let quoted: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
                let allowed = match compare {
                    true => format!("one of its [[compare]] names: {}", quoted.join(", ")),
                    false => format!(
                        "{}, the scenario's name: without [[compare]] variants, its one run \
                         takes that name",
                        quoted.join(", ")
                    ),
                };
                return Err(invalid(
                    file,
                    &format!("{}.variant", at(side)),
                    &format!("{:?}", s.variant()),
                    &allowed,
                ));
            }
            if let Some(p) = s.point() {
                if !points.contains(&p) {
                    return Err(invalid(
                        file,
                        &format!("{}.point", at(side)),
                        p,
                        &format!("a point of [[experiment.point]]: {}", points.join(", ")),
                    ));
                }
            }
            let runs_at = variants.iter().find(|v| v.name == s.variant());
            if let Some(VariantRuns {
                name,
                points: Some(only),
                ..
            }) = runs_at
            {
                let within = |p: &str| only.iter().any(|o| o == p);
                let check_points =
                    (c.points.as_deref()).is_some_and(|ps| ps.iter().all(|p| within(p)));
                if !(s.point().is_some_and(within) || check_points) {
                    return Err(invalid(
                        file,
                        &format!("{}.point", at(side)),
                        s.point().unwrap_or("(every point)"),
                        &format!(
                            "one of the points variant `{name}` runs at: {}",
                            only.join(", ")
                        ),
                    ));
                }
            }
            if let Some(m) = s.metric() {
                Metric::parse(m)
                    .map_err(|e| invalid(file, &format!("{}.metric", at(side)), m, &e))?;
            }
        }
        if let Some(only) = &c.points {
            if only.is_empty() || c.num.point().is_some() {
                return Err(invalid(
                    file,
                    &at("points"),
                    &format!("{only:?}"),
                    "one or more points of [[experiment.point]], for a check whose sides name no \
                     point",
                ));
            }
            if let Some(p) = only.iter().find(|p| !points.contains(&p.as_str())) {
                return Err(invalid(
                    file,
                    &at("points"),
                    &format!("{p:?}"),
                    &format!("a point of [[experiment.point]]: {}", points.join(", ")),
                ));
            }
        }
        if let Some(why) = c.expect.invalid() {
            return Err(invalid(file, &at("expect"), &c.expect.to_string(), why));
        }
        metric_sources(file, i, c)?;
        let list = c.metric_list();
        let sides_have_metrics =
            c.num.metric().is_some() && c.den.as_ref().is_none_or(|d| d.metric().is_some());
        if list.is_empty() && !sides_have_metrics {
            return Err(invalid(
                file,
                &at("metric"),
                "(none)",
                "a metric (`metric` or `metrics`, or one on each side)",
            ));
        }
        for m in &list {
            Metric::parse(m).map_err(|e| invalid(file, &at("metric"), m, &e))?;
        }
        let sides = [("num", Some(&c.num)), ("den", c.den.as_ref())];
        for (side, s) in sides.into_iter().filter_map(|(n, s)| Some((n, s?))) {
            let Some(v) = variants.iter().find(|v| v.name == s.variant()) else {
                continue;
            };
            let own = s.metric().map(|m| (format!("{}.metric", at(side)), m));
            let theirs = list.iter().map(|m| (at("metric"), *m));
            // A side names its own metric only where the check names none.
            for (key, m) in own.into_iter().chain(theirs) {
                if let Some(why) = v.never_writes(m, grid) {
                    return Err(invalid(file, &key, m, &why));
                }
            }
        }
        match &c.den {
            Some(den) if c.num.point().is_some() != den.point().is_some() => {
                return Err(invalid(
                    file,
                    &at("den.point"),
                    den.point().unwrap_or("(none)"),
                    "both sides name a point, or neither (then the check applies at every point)",
                ));
            }
            None if !matches!(c.expect, Expect::AtMost(_) | Expect::AtLeast(_)) => {
                return Err(invalid(
                    file,
                    &at("expect"),
                    &c.expect.to_string(),
                    "a check of one value (no `den`) bounds it: { at_most = … } or { at_least = … }",
                ));
            }
            _ => {}
        }
    }
    if let Some(Chart::Lines(key)) = experiment.map(|e| &e.chart) {
        let e = experiment.expect("a chart comes from an experiment");
        if e.point.iter().any(|p| {
            p.set
                .get(key)
                .and_then(|v| v.as_integer().map(|i| i as f64).or(v.as_float()))
                .is_none()
        }) {
            return Err(invalid(
                file,
                "experiment.chart.lines",
                key,
                "a key every point sets to a number",
            ));
        }
    }
    Ok(())
}

/// Refuses a check that names its metric in two places, which would combine silently:
/// `metric` and `metrics` (the list would gain `metric` first), or a side's own `metric`
/// with the check's (the side's would replace each of the check's, repeating one check per
/// listed metric, or leave the check's unread). A check gives its metrics once: `metric` or
/// `metrics` for both sides, or a `metric` on each side.
fn metric_sources(file: &str, i: usize, c: &CheckSection) -> Result<(), ScenarioError> {
    let at = |key: &str| format!("check[{i}].{key}");
    if let (Some(m), false) = (&c.metric, c.metrics.is_empty()) {
        return Err(invalid(
            file,
            &at("metrics"),
            &format!("{:?}", c.metrics),
            &format!(
                "`metric` (one check) or `metrics` (one check each), not both: this check \
                 also has metric = {m:?}; put every metric in `metrics`"
            ),
        ));
    }
    let check_level = match (&c.metric, c.metrics.as_slice()) {
        (Some(m), _) => format!("metric = {m:?}"),
        (None, []) => return Ok(()),
        (None, list) => format!("metrics = {list:?}"),
    };
    let sides = [("num", Some(&c.num)), ("den", c.den.as_ref())];
    for (side, s) in sides.into_iter().filter_map(|(n, s)| Some((n, s?))) {
        if let Some(m) = s.metric() {
            return Err(invalid(
                file,
                &at(&format!("{side}.metric")),
                &format!("{m:?}"),
                &format!(
                    "a side's own metric or the check's, not both: this check also has \
                     {check_level}; give every side its own `metric` and leave the check's \
                     out, or leave the sides' out"
                ),
            ));
        }
    }
    Ok(())
}

/// Each variant's `points` names points of the experiment's grid, at least one.
fn validate_variant_points(
    file: &str,
    variants: &[VariantRuns],
    points: &[&str],
) -> Result<(), ScenarioError> {
    for VariantRuns {
        name, points: only, ..
    } in variants
    {
        let Some(only) = only else { continue };
        let key = format!("compare.points (variant `{name}`)");
        if only.is_empty() {
            return Err(invalid(file, &key, "[]", "at least one point"));
        }
        if let Some(p) = only.iter().find(|p| !points.contains(&p.as_str())) {
            let allowed = match points {
                [] => "points only in an experiment with [[experiment.point]]".to_string(),
                _ => format!("a point of [[experiment.point]]: {}", points.join(", ")),
            };
            return Err(invalid(file, &key, p, &allowed));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_are_summary_keys_size_buckets_or_quotients() {
        let s = serde_json::json!({
            "avg_fct_us": 10.0,
            "out_of_order_packets": 5,
            "data_packets_sent": 20,
            "rct_us": null,
            "fct_by_size": [{ "p99_fct_us": 3.0 }, { "p99_fct_us": null }],
        });
        let v = |m: &str| Metric::parse(m).unwrap().value(&s);
        assert_eq!(v("avg_fct_us"), Some(10.0));
        assert_eq!(v("out_of_order_packets / data_packets_sent"), Some(0.25));
        assert_eq!(v("fct_by_size.0.p99_fct_us"), Some(3.0));
        assert_eq!(v("fct_by_size.1.p99_fct_us"), None);
        assert_eq!(v("fct_by_size.7.p99_fct_us"), None);
        assert_eq!(v("rct_us"), None);
        // Two zeros are equal; a zero denominator alone is not a number.
        let zeros = serde_json::json!({ "drops": 0, "timeouts": 3 });
        let v0 = |m: &str| Metric::parse(m).unwrap().value(&zeros);
        assert_eq!(v0("drops / drops"), Some(1.0));
        assert_eq!(v0("timeouts / drops"), Some(f64::INFINITY));
        assert!(Expect::Near(-1.0).invalid().is_some());
        assert!(Expect::AtMost(0.0).invalid().is_none());
        assert!(Expect::AtLeast(f64::NAN).invalid().is_some());
        for bad in [
            "avg_fct",
            "fct_by_size.x.p99_fct_us",
            "fct_by_size.0.nope",
            "a / b / c",
            "fct_by_size",
        ] {
            assert!(Metric::parse(bad).is_err(), "{bad}");
        }
        // Every number a run may write is accepted, the lists' entries and sections' keys too.
        for good in [
            "rct_us",
            "censored_avg_fct_us",
            "single_packet_p99_fct_us",
            "pause_fraction_switch_ports",
            "conweave.reroutes",
            "collectives.0.busbw_gbytes_per_s",
            "control_bytes.ack",
            "bottleneck.utilization",
        ] {
            assert!(
                Metric::parse(good).is_ok(),
                "{good}: {:?}",
                Metric::parse(good)
            );
        }
        assert!(
            Metric::parse("collectives.0.op").is_err(),
            "a word, not a number"
        );
        // The error lists them all, by form.
        let err = Metric::parse("avg_fct").unwrap_err();
        for form in [
            "avg_fct_us",
            "rct_us",
            "conweave.KEY",
            "collectives.INDEX.KEY",
            "fct_by_size.INDEX.KEY",
        ] {
            assert!(err.contains(form), "{form}: {err}");
        }
        assert!(err.contains("not a number of summary.json"), "{err}");
    }

    #[test]
    fn a_check_names_its_metrics_once() {
        let error = |keys: &str| {
            let num = if keys.contains("num =") {
                ""
            } else {
                "num = \"A\"\n"
            };
            let text = format!("{num}expect = \"above\"\n{keys}");
            let c: CheckSection = toml::from_str(&text).unwrap();
            metric_sources("t.toml", 0, &c).err().map(|e| e.to_string())
        };
        for (keys, refused) in [
            ("metric = \"drops\"", None),
            ("metrics = [\"drops\", \"timeouts\"]", None),
            (
                "num = { variant = \"A\", metric = \"drops\" }\n\
                 den = { variant = \"B\", metric = \"timeouts\" }",
                None,
            ),
            (
                "metric = \"drops\"\nmetrics = [\"timeouts\"]",
                Some("check[0].metrics = [\"timeouts\"]: `metric` (one check) or `metrics` (one check each), not both: this check also has metric = \"drops\""),
            ),
            (
                "num = { variant = \"A\", metric = \"drops\" }\nmetrics = [\"a\", \"b\"]",
                Some("check[0].num.metric = \"drops\": a side's own metric or the check's, not both: this check also has metrics = [\"a\", \"b\"]"),
            ),
            (
                "num = { variant = \"A\", metric = \"drops\" }\nden = \"B\"\nmetric = \"timeouts\"",
                Some("check[0].num.metric = \"drops\": a side's own metric or the check's, not both: this check also has metric = \"timeouts\""),
            ),
            (
                "den = { variant = \"B\", metric = \"drops\" }\nmetric = \"drops\"",
                Some("check[0].den.metric = \"drops\""),
            ),
        ] {
            match (error(keys), refused) {
                (None, None) => {}
                (Some(e), Some(want)) => assert!(e.contains(want), "{keys}: {e}"),
                (got, want) => panic!("{keys}: {got:?}, expected {want:?}"),
            }
        }
    }

    #[test]
    fn an_up_to_bound_is_its_own_form() {
        let v = |text: &str| {
            toml::from_str::<toml::Table>(&format!("p = {text}")).unwrap()["p"].clone()
        };
        assert_eq!(
            PaperValue::from_toml(&v("{ up_to = 1.73 }"), true),
            Some(PaperValue::UpTo { up_to: 1.73 })
        );
        // A point named like the key, among others, is a point.
        assert!(matches!(
            PaperValue::from_toml(&v("{ up_to = 2, \"80%\" = 3 }"), true),
            Some(PaperValue::ByPoint(_))
        ));
        let e = validate_paper(
            "t.toml",
            "check.paper",
            &PaperValue::UpTo { up_to: 1.0 },
            true,
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("a positive ratio other than 1"), "{e}");
    }

    /// Variant `name`'s runs at every point, as a plain fat-tree run has them.
    fn runs(name: &str) -> VariantRuns<'_> {
        VariantRuns {
            name,
            points: None,
            conweave: false,
            bottleneck: false,
            fct_buckets: 4,
        }
    }

    #[test]
    fn a_metric_its_runs_never_write_is_refused() {
        let check = |metric: &str, point: &str| {
            let c: CheckSection = toml::from_str(&format!(
                "num = \"A\"\nden = \"B\"\nmetric = \"{metric}\"\nexpect = \"above\""
            ))
            .unwrap();
            let e: ExperimentSection =
                toml::from_str(&format!("[[point]]\nname = \"p\"\nset = {{ {point} }}")).unwrap();
            let a = runs("A");
            let b = VariantRuns {
                conweave: true,
                bottleneck: true,
                fct_buckets: 10,
                ..runs("B")
            };
            validate("t.toml", Some(&e), &[c], &[a, b], true).map_err(|e| e.to_string())
        };
        let load = "\"workload.load\" = 0.5";
        for (metric, point, refused) in [
            ("fct_by_size.3.p99_fct_us", load, None),
            (
                "fct_by_size.9.p99_fct_us",
                load,
                Some("check[0].metric = fct_by_size.9.p99_fct_us: `fct_by_size.9.p99_fct_us`: variant `A` has 4 flow-size buckets, fct_by_size.0 to fct_by_size.3"),
            ),
            ("fct_by_size.9.p99_fct_us", "\"run.fct_size_buckets\" = [\"1KB\"]", None),
            (
                "conweave.reroutes",
                load,
                Some("check[0].metric = conweave.reroutes: `conweave.reroutes`: summary.json has `conweave` only for runs with load_balancing.kind = \"conweave\", and variant `A` does not use ConWeave"),
            ),
            ("conweave.reroutes", "\"load_balancing.kind\" = \"conweave\"", None),
            (
                "drops / bottleneck.utilization",
                load,
                Some("`bottleneck.utilization`: summary.json has `bottleneck` only for runs with [monitor] summary_from"),
            ),
            ("bottleneck.utilization", "monitor = { interval = \"1us\", summary_from = \"0us\" }", None),
        ] {
            match (check(metric, point), refused) {
                (Ok(()), None) => {}
                (Err(e), Some(want)) => assert!(e.contains(want), "{metric}: {e}"),
                (got, want) => panic!("{metric} with {point}: {got:?}, expected {want:?}"),
            }
        }
    }

    #[test]
    fn an_expectation_is_shown_as_written() {
        for (e, shown) in [
            (Expect::Above, "\"above\""),
            (Expect::Below, "\"below\""),
            (Expect::Near(-0.1), "{ near = -0.1 }"),
            (Expect::AtMost(1.1), "{ at_most = 1.1 }"),
            (Expect::AtLeast(2.0), "{ at_least = 2 }"),
            (Expect::AtLeast(f64::NAN), "{ at_least = nan }"),
        ] {
            assert_eq!(e.to_string(), shown);
        }
        // In the errors that name it.
        let c: CheckSection = toml::from_str(
            "num = \"A\"\nden = \"A\"\nmetric = \"drops\"\nexpect = { near = -0.1 }",
        )
        .unwrap();
        let e = validate("t.toml", None, &[c], &[runs("A")], true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("check[0].expect = { near = -0.1 }: "), "{e}");
        let c: CheckSection =
            toml::from_str("num = \"A\"\nmetric = \"drops\"\nexpect = \"below\"").unwrap();
        let e = validate("t.toml", None, &[c], &[runs("A")], true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("check[0].expect = \"below\": "), "{e}");
    }

    #[test]
    fn expectations() {
        for (e, r, holds) in [
            (Expect::Above, 1.01, true),
            (Expect::Above, 1.0, false),
            (Expect::Below, 0.9, true),
            (Expect::Below, 1.1, false),
            (Expect::Near(0.05), 1.04, true),
            (Expect::Near(0.0), 1.0, true),
            (Expect::Near(0.05), 0.94, false),
            (Expect::AtMost(1.1), 1.1, true),
            (Expect::AtMost(1.1), 0.2, true),
            (Expect::AtMost(1.1), 1.2, false),
            (Expect::AtLeast(2.0), 2.5, true),
            (Expect::AtLeast(2.0), 1.5, false),
        ] {
            assert_eq!(e.holds(r), holds, "{e:?} {r}");
        }
    }
}
