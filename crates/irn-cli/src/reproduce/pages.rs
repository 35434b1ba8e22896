//! What `irn reproduce` and `irn check` write about their checks: `reproduce.json` (the
//! [`FigureResult`]s), `report.md` and `report.html`.
//!
//! Both reports lead with the tally (per paper and overall: directions that hold, magnitudes
//! in range, near, off or qualitative, ratios converged), then a table of contents, then each
//! figure: a chart of every check's ratio against the paper's value (a band for its range, or
//! ±15 % around a single value, and a marker at the value), the figure's own chart, and a
//! table with both verdicts and each ratio's convergence. A direction that holds is green only
//! when there is no paper number it misses: a magnitude off the paper's is never shown as
//! "holds" in green. The pages are a function of the results alone (no time, no paths of this
//! machine), so the same runs give the same bytes whether computed now or read back.

use std::fmt::Write as _;

use irn_sim::scenario::Expect;
use serde::{Deserialize, Deserializer, Serialize};

use super::verdict::{Magnitude, Paper, Tally};
use crate::output::folder_name;
use crate::report::escape;

/// One check's outcome at one grid point. Serialized by hand around serde's derived code
/// (`remote = "Self"`), so that an infinite `ours`, which JSON writes as `null`, reads back
/// as infinite from `infinite`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct Outcome {
    pub figure: String,
    pub point: String,
    pub ratio: String,
    pub metric: String,
    /// The paper's number: a value or `[low, high]`; absent when it gives only words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paper: Option<Paper>,
    /// The paper's words, with where it says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<String>,
    /// The ratio (`null` in the JSON when it has no value or is infinite; `infinite` tells
    /// the two apart).
    #[serde(deserialize_with = "null_as_nan")]
    pub ours: f64,
    /// `ours` is infinite (a ratio over a denominator of 0 with a numerator above 0): JSON has
    /// no infinity, so `ours` is `null` there, and this says it is not a missing value.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub infinite: bool,
    pub expect: Expect,
    /// The direction verdict: `expect` holds for `ours`.
    pub holds: bool,
    /// The magnitude verdict against `paper`.
    pub magnitude: Magnitude,
    /// The factor by which `ours` misses `paper` (1 in range); absent without a paper number
    /// or when infinite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factor: Option<f64>,
    /// Where the miss is explained (the check's `why`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The window the ratio was measured at (empty for a one-off workload, which has none).
    pub window: String,
    /// Whether doubling the window to `window` moved this ratio by at most 5 %; `null` when
    /// not checked (a quick run, one window, a one-off workload).
    pub converged: Option<bool>,
    /// How much that last doubling moved it, as a fraction (+0.07: up 7 %).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_move: Option<f64>,
    /// `ours` is one value (a check without `den`), not a ratio.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub value: bool,
    /// Why `ours` has no value: the run whose summary has the metric `null`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

/// serde_json writes a non-finite `f64` as `null`; read it back as no value (an infinite
/// one is restored from `infinite`).
fn null_as_nan<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

impl Serialize for Outcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Outcome::serialize(self, s)
    }
}

impl<'de> Deserialize<'de> for Outcome {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut o = Outcome::deserialize(d)?;
        if o.infinite {
            o.ours = f64::INFINITY;
        }
        Ok(o)
    }
}

impl Outcome {
    /// `ours` as the tables print it: a ratio with `×`, a lone value as it is.
    pub fn shown(&self, decimals: usize) -> String {
        let unit = if self.value { "" } else { "×" };
        if self.ours.is_nan() {
            "—".to_string()
        } else if self.ours.is_infinite() {
            format!("∞{unit}")
        } else {
            format!("{:.*}{unit}", decimals, self.ours)
        }
    }

    /// The paper's side: its number (with `×` for a ratio) and its words.
    pub fn paper_text(&self) -> String {
        let unit = if self.value { "" } else { "×" };
        match (&self.paper, &self.claim) {
            (Some(p), Some(c)) => format!("{}{unit} ({c})", p.text()),
            (Some(p), None) => format!("{}{unit}", p.text()),
            (None, Some(c)) => c.clone(),
            (None, None) => "—".to_string(),
        }
    }

    /// The magnitude verdict in words (`in range`, `near ×1.32`, `off ×4.70`, `qualitative`,
    /// `no value: no `incast RCT` in A (p)`).
    pub fn magnitude_text(&self) -> String {
        match (&self.missing, self.magnitude) {
            (Some(missing), Magnitude::NoValue) => format!("no value: {missing}"),
            _ => self.magnitude.text(self.factor),
        }
    }

    /// Whether the direction may be shown as agreeing: it holds, and no paper number says
    /// the magnitude is wrong.
    pub fn agrees(&self) -> bool {
        self.holds && (self.magnitude == Magnitude::InRange || self.magnitude.direction_only())
    }

    /// The ratio's convergence in words: `converged at 80ms (+1.2 %)`, `still moving at 80ms
    /// (+7.3 %)`, `not checked (4ms)`, `one event`.
    pub fn convergence(&self) -> String {
        let moved = match self.last_move {
            Some(m) if m.is_finite() => format!(" ({:+.1} %)", m * 100.0).replace('-', "−"),
            _ => String::new(),
        };
        match (self.window.is_empty(), self.converged) {
            _ if self.window == super::model::WINDOW => "no window (a model)".to_string(),
            (true, _) => "one event (no window)".to_string(),
            (false, Some(true)) => format!("converged at {}{moved}", self.window),
            (false, Some(false)) => format!("still moving at {}{moved}", self.window),
            (false, None) => format!("not checked ({})", self.window),
        }
    }
}

/// One figure's outcome: an element of `reproduce.json`.
#[derive(Debug, Serialize, Deserialize)]
pub struct FigureResult {
    pub figure: String,
    pub title: String,
    /// The paper whose claims the checks are (empty for a user's experiment).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub paper: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The arrival window used (empty for a repeated one-off workload, which has none).
    pub window: String,
    /// Seeds each run was repeated with (a one-off workload such as an incast); 0 otherwise.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub repetitions: u64,
    /// Whether doubling the window moved no ratio by more than 5 %; `None` when not checked.
    pub converged: Option<bool>,
    pub outcomes: Vec<Outcome>,
    /// Wall time of this invocation's runs (runs read back cost nothing): printed, not
    /// written, so that the files do not depend on what was read back.
    #[serde(skip)]
    pub wall_time_s: f64,
    /// Computed by an in-process model, without a network or a window.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub model: bool,
    /// Runs read back from an earlier reproduce (printed only, as the wall time).
    #[serde(skip)]
    pub reused_runs: usize,
    /// The figure's own chart (SVG), drawn from its runs.
    #[serde(skip)]
    pub chart: String,
    /// The monitored runs' time series, as HTML (empty without any).
    #[serde(skip)]
    pub series: String,
    /// The anchor and text of each section of `series`, for the table of contents.
    #[serde(skip)]
    pub series_contents: Vec<(String, String)>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl FigureResult {
    pub fn tally(&self) -> Tally {
        tally(std::iter::once(self))
    }
}

/// The verdicts of every check of `figures`.
pub fn tally<'a>(figures: impl IntoIterator<Item = &'a FigureResult>) -> Tally {
    let mut t = Tally::default();
    for o in figures.into_iter().flat_map(|r| &r.outcomes) {
        t.add(o.holds, o.magnitude, o.converged);
    }
    t
}

/// How a figure's window was chosen, in words.
fn window_note(r: &FigureResult) -> String {
    match (r.window.is_empty(), r.converged) {
        _ if r.model => {
            "no network: an in-process model of irn-core, computed afresh each time".to_string()
        }
        (true, _) if r.repetitions == 1 => "one event, no window; one run per variant".to_string(),
        (true, _) => format!("one event, no window; averaged over {} seeds", r.repetitions),
        (false, Some(true)) => format!("window {}: doubling it moved no ratio by more than 5 %", r.window),
        (false, Some(false)) => format!("window {}: not converged (a ratio still moved by more than 5 % when the window doubled)", r.window),
        (false, None) => format!("window {} (convergence not checked)", r.window),
    }
}

/// The report's heading for the figures of one paper (or a user's experiments).
fn heading(paper: &str) -> String {
    if paper.is_empty() {
        "Checked experiments".to_string()
    } else {
        paper.to_string()
    }
}

/// The results grouped by paper, in order of first appearance.
fn by_paper(results: &[FigureResult]) -> Vec<(&str, Vec<&FigureResult>)> {
    let mut groups: Vec<(&str, Vec<&FigureResult>)> = Vec::new();
    for r in results {
        match groups.iter_mut().find(|(p, _)| *p == r.paper) {
            Some((_, g)) => g.push(r),
            None => groups.push((&r.paper, vec![r])),
        }
    }
    groups
}

/// The tally's rows: each paper's, then all (when more than one paper).
fn tally_rows(results: &[FigureResult]) -> Vec<(String, Tally)> {
    let groups = by_paper(results);
    let mut rows: Vec<(String, Tally)> = (groups.iter())
        .map(|(p, figs)| (heading(p), tally(figs.iter().copied())))
        .collect();
    if groups.len() > 1 {
        rows.push(("all".to_string(), tally(results)));
    }
    rows
}

const TALLY_HEAD: [&str; 8] = [
    "",
    "checks",
    "direction holds",
    "in range",
    "near",
    "off",
    "qualitative",
    "converged",
];

fn tally_cells(t: &Tally) -> [String; 7] {
    [
        t.checks.to_string(),
        t.holds.to_string(),
        t.in_range.to_string(),
        t.near.to_string(),
        t.off.to_string(),
        t.qualitative.to_string(),
        if t.convergence_checked == 0 {
            "not checked".to_string()
        } else {
            format!("{} of {}", t.converged, t.convergence_checked)
        },
    ]
}

/// The anchor of a figure's section.
fn anchor(r: &FigureResult) -> String {
    format!("fig-{}", folder_name(&r.figure))
}

/// What a row says of its miss: a link to the check's `why`, or that there is none yet.
enum Explanation<'a> {
    Why(&'a str),
    NotYet,
}

/// The explanation a row shows. A miss is a direction that differs or a magnitude off or
/// reversed, whatever the paper gives (a qualitative claim that fails needs its explanation as
/// much as a number that is off); a near magnitude links its `why` when it has one. A ratio
/// without a value says which run lacks which metric, so it is never "not yet explained".
fn explanation(o: &Outcome) -> Option<Explanation<'_>> {
    let missed = !o.holds || matches!(o.magnitude, Magnitude::Off | Magnitude::Reversed);
    match &o.why {
        Some(why) if missed || o.magnitude == Magnitude::Near => Some(Explanation::Why(why)),
        None if missed && o.magnitude != Magnitude::NoValue => Some(Explanation::NotYet),
        _ => None,
    }
}

/// The explanation in Markdown, after the magnitude.
fn why_md(o: &Outcome) -> String {
    match explanation(o) {
        Some(Explanation::Why(why)) => format!(" ([why]({why}))"),
        Some(Explanation::NotYet) => " (not yet explained)".to_string(),
        None => String::new(),
    }
}

/// `report.md`: the tally, the contents, then every check in one Markdown table per figure.
pub fn markdown(results: &[FigureResult], command: &str) -> String {
    let mut m = format!("# `{command}`\n\n");
    m.push_str("| ");
    m.push_str(&TALLY_HEAD.join(" | "));
    m.push_str(" |\n|");
    m.push_str(&" --- |".repeat(TALLY_HEAD.len()));
    m.push('\n');
    for (name, t) in tally_rows(results) {
        let _ = writeln!(m, "| {name} | {} |", tally_cells(&t).join(" | "));
    }
    m.push_str(
        "\nDirection: the ratio is on the paper's side. Magnitude: in range (inside the paper's \
         range, or within ±15 % of its single value), near (within a factor 1.5), off ×k (k: \
         the factor it misses by), reversed ×k (the paper's ratio is on one side of 1 and ours \
         on the other, however close the number; counted as off), within its bound (between 1 \
         and the paper's \"up to\" bound, its largest effect: consistent, not a match; counted \
         as qualitative), or qualitative (the paper gives words, not a number).\n\n",
    );
    for (paper, figures) in by_paper(results) {
        let _ = writeln!(m, "- {}", heading(paper));
        for r in figures {
            let t = r.tally();
            let _ = writeln!(m, "  - [{}](#{}): {}", r.title, anchor(r), short_tally(&t));
        }
    }
    m.push('\n');
    for (paper, figures) in by_paper(results) {
        let _ = writeln!(m, "## {}\n", heading(paper));
        for r in figures {
            let _ = writeln!(m, "<a id=\"{}\"></a>", anchor(r));
            let _ = writeln!(m, "### {}\n", r.title);
            let _ = writeln!(m, "{}; {}.\n", window_note(r), r.tally().line());
            if let Some(note) = &r.note {
                let _ = writeln!(m, "{note}\n");
            }
            // A point column only for experiments with several grid points.
            let points = r.outcomes.iter().any(|o| !o.point.is_empty());
            if points {
                m.push_str("| point ");
            }
            m.push_str("| ratio | metric | paper | irn | direction | magnitude | window |\n");
            if points {
                m.push_str("| --- ");
            }
            m.push_str("| --- | --- | --- | --- | --- | --- | --- |\n");
            for o in &r.outcomes {
                if points {
                    let _ = write!(m, "| {} ", o.point);
                }
                let magnitude = match o.magnitude {
                    Magnitude::Off | Magnitude::Reversed => format!("**{}**", o.magnitude_text()),
                    _ => o.magnitude_text(),
                };
                let _ = writeln!(
                    m,
                    "| {} | {} | {} | {} | {} | {}{} | {} |",
                    o.ratio,
                    o.metric,
                    o.paper_text(),
                    o.shown(2),
                    if o.holds { "holds" } else { "**differs**" },
                    magnitude,
                    why_md(o),
                    o.convergence()
                );
            }
            m.push('\n');
        }
    }
    m
}

/// A figure's verdicts in a few words, for the contents.
fn short_tally(t: &Tally) -> String {
    format!(
        "{} of {} directions hold; {} in range, {} near, {} off, {} qualitative",
        t.holds, t.checks, t.in_range, t.near, t.off, t.qualitative
    )
}

/// `report.html`: the tally, the contents, then per figure the chart against the paper, its
/// own chart and time series, and the table with both verdicts.
pub fn html(results: &[FigureResult], quick: bool, command: &str) -> String {
    let mut h = String::from(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>irn reproduce</title><style>\
         body{font-family:sans-serif;max-width:1100px;margin:2em auto}\
         table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}\
         .ok{color:#070}.near{color:#a60}.no{color:#b00}.dir{color:#555}</style></head><body>",
    );
    let _ = write!(h, "<h1><code>{}</code></h1>", escape(command));
    if quick {
        h.push_str("<p><b>Quick run</b>: short windows, convergence not checked; ratios far from steady state.</p>");
    }
    h.push_str("<table class=\"tally\"><tr>");
    for head in TALLY_HEAD {
        let _ = write!(h, "<th>{head}</th>");
    }
    h.push_str("</tr>");
    for (name, t) in tally_rows(results) {
        let _ = write!(h, "<tr><td>{}</td>", escape(&name));
        for cell in tally_cells(&t) {
            let _ = write!(h, "<td>{cell}</td>");
        }
        h.push_str("</tr>");
    }
    h.push_str(
        "</table><p>Direction: the ratio is on the paper's side. Magnitude: <span class=\"ok\">in \
         range</span> (inside the paper's range, or within ±15 % of its single value), <span \
         class=\"near\">near</span> (within a factor 1.5), <span class=\"no\">off ×k</span> (k: \
         the factor it misses by), <span class=\"no\">reversed ×k</span> (the paper's ratio is on \
         one side of 1 and ours on the other, however close the number), within its bound \
         (between 1 and the paper's \"up to\" bound, its largest effect: consistent, not a \
         match), or qualitative (the paper gives words, not a number: the direction is all \
         there is to check). A direction is green only where no paper number \
         says the magnitude is wrong.</p><h2>Contents</h2><ul>",
    );
    for (paper, figures) in by_paper(results) {
        let _ = write!(h, "<li>{}<ul>", escape(&heading(paper)));
        for r in figures {
            let _ = write!(
                h,
                "<li><a href=\"#{}\">{}</a>: {}",
                anchor(r),
                escape(&r.title),
                escape(&short_tally(&r.tally()))
            );
            if !r.series_contents.is_empty() {
                h.push_str("<ul>");
                for (id, text) in &r.series_contents {
                    let _ = write!(
                        h,
                        "<li><a href=\"#{}\">{}</a></li>",
                        escape(id),
                        escape(text)
                    );
                }
                h.push_str("</ul>");
            }
            h.push_str("</li>");
        }
        h.push_str("</ul></li>");
    }
    h.push_str("</ul>");
    for (paper, figures) in by_paper(results) {
        let _ = write!(h, "<h1>{}</h1>", escape(&heading(paper)));
        for r in figures {
            let _ = write!(h, "<h2 id=\"{}\">{}</h2>", anchor(r), escape(&r.title));
            let _ = write!(
                h,
                "<p>{}; {}.</p>",
                escape(&window_note(r)),
                escape(&r.tally().line())
            );
            if let Some(note) = &r.note {
                let _ = write!(h, "<p><i>{}</i></p>", escape(note));
            }
            h.push_str(&against_paper(r));
            h.push_str(&r.chart);
            h.push_str(&r.series);
            h.push_str("<table><tr><th>point</th><th>ratio</th><th>metric</th><th>paper</th><th>irn</th><th>direction</th><th>magnitude</th><th>window</th></tr>");
            for o in &r.outcomes {
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>{}{}<td>{}</td></tr>",
                    escape(&o.point),
                    escape(&o.ratio),
                    escape(&o.metric),
                    escape(&o.paper_text()),
                    o.shown(3),
                    direction_cell(o),
                    magnitude_cell(o),
                    escape(&o.convergence())
                );
            }
            h.push_str("</table>");
        }
    }
    h.push_str("</body></html>\n");
    h
}

/// The direction's cell: green only when the check agrees with the paper; a direction that
/// holds while the magnitude misses is plain, and says so.
fn direction_cell(o: &Outcome) -> String {
    let (class, text) = if !o.holds {
        ("no", "differs")
    } else if o.agrees() {
        ("ok", "holds")
    } else {
        ("dir", "direction only")
    };
    format!("<td class=\"{class}\">{text}</td>")
}

/// The magnitude's cell, with the link to the explanation of a miss.
fn magnitude_cell(o: &Outcome) -> String {
    let class = match o.magnitude {
        Magnitude::InRange => "ok",
        Magnitude::Near => "near",
        Magnitude::Off | Magnitude::Reversed | Magnitude::NoValue => "no",
        Magnitude::Qualitative | Magnitude::NotStated | Magnitude::WithinBound => "dir",
    };
    let why = match explanation(o) {
        Some(Explanation::Why(why)) => format!(" (<a href=\"{}\">why</a>)", escape(why)),
        Some(Explanation::NotYet) => " (not yet explained)".to_string(),
        None => String::new(),
    };
    format!(
        "<td class=\"{class}\">{}{why}</td>",
        escape(&o.magnitude_text())
    )
}

/// Chart geometry: the label column, the plot's extent and a row's height (pixels).
const CHART_WIDTH: f64 = 920.0;
const LABEL_WIDTH: f64 = 400.0;
const PLOT_RIGHT: f64 = 800.0;
const ROW: f64 = 18.0;
const TOP: f64 = 34.0;

/// Every check's ratio on a log axis against the paper's: a band for the paper's range (or
/// ±15 % around its single value, with a marker at the value), a dot for irn's, coloured by
/// the magnitude verdict; a dashed line at 1 (the direction's boundary). Empty when no check
/// of the figure has a paper number.
pub fn against_paper(r: &FigureResult) -> String {
    if r.outcomes.iter().all(|o| o.paper.is_none()) {
        return String::new();
    }
    let finite = |v: f64| v.is_finite() && v > 0.0;
    let mut values: Vec<f64> = vec![1.0];
    for o in &r.outcomes {
        if finite(o.ours) {
            values.push(o.ours);
        }
        if let Some(p) = o.paper {
            let (lo, hi) = p.band();
            values.extend([lo, hi]);
        }
    }
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min) / 1.25;
    let hi = values.iter().copied().fold(0.0, f64::max) * 1.25;
    let (llo, lhi) = (lo.log10(), hi.log10());
    let x = |v: f64| LABEL_WIDTH + (v.log10() - llo) / (lhi - llo) * (PLOT_RIGHT - LABEL_WIDTH);
    let rows = r.outcomes.len() as f64;
    let height = TOP + rows * ROW + 30.0;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"against-paper\" width=\"{CHART_WIDTH}\" \
         height=\"{height}\" viewBox=\"0 0 {CHART_WIDTH} {height}\" font-family=\"sans-serif\" \
         font-size=\"11\"><text x=\"{}\" y=\"18\" font-size=\"14\" text-anchor=\"middle\">{}: \
         irn (dots) against the paper (bands)</text>",
        CHART_WIDTH / 2.0,
        escape(&r.title)
    );
    let bottom = TOP + rows * ROW;
    // Ticks: 1, 2 and 5 times the powers of ten in the range, more within two decades.
    let mantissas: &[f64] = if lhi - llo < 2.0 {
        &[1.0, 1.5, 2.0, 3.0, 5.0, 7.0]
    } else {
        &[1.0, 2.0, 5.0]
    };
    let mut ticks = Vec::new();
    for e in (llo.floor() as i32)..=(lhi.ceil() as i32) {
        for &m in mantissas {
            let t = m * 10f64.powi(e);
            if t >= lo && t <= hi {
                ticks.push(t);
            }
        }
    }
    for t in ticks {
        let _ = write!(
            s,
            "<line x1=\"{0:.1}\" y1=\"{TOP}\" x2=\"{0:.1}\" y2=\"{bottom}\" stroke=\"#eee\"/>\
             <text x=\"{0:.1}\" y=\"{1:.1}\" text-anchor=\"middle\">{2}</text>",
            x(t),
            bottom + 14.0,
            crate::plot::fmt_sig(t, 2)
        );
    }
    let _ = write!(
        s,
        "<line x1=\"{0:.1}\" y1=\"{TOP}\" x2=\"{0:.1}\" y2=\"{bottom}\" stroke=\"#888\" \
         stroke-dasharray=\"4 3\"/><text x=\"{1}\" y=\"{2:.1}\" text-anchor=\"middle\">ratio \
         (log scale; dashed: 1)</text>",
        x(1.0),
        (LABEL_WIDTH + PLOT_RIGHT) / 2.0,
        bottom + 27.0
    );
    for (i, o) in r.outcomes.iter().enumerate() {
        let y = TOP + i as f64 * ROW + ROW / 2.0;
        let mut label = if o.point.is_empty() {
            format!("{} ({})", o.ratio, o.metric)
        } else {
            format!("{}: {} ({})", o.point, o.ratio, o.metric)
        };
        if label.chars().count() > 66 {
            label = label.chars().take(65).collect::<String>() + "…";
        }
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LABEL_WIDTH - 6.0,
            y + 4.0,
            escape(&label)
        );
        if let Some(p) = o.paper {
            let (blo, bhi) = p.band();
            let _ = write!(
                s,
                "<rect class=\"paper-band\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" \
                 fill=\"#4E79A7\" fill-opacity=\"0.25\"><title>paper {}</title></rect>",
                x(blo),
                y - ROW / 2.0 + 2.0,
                (x(bhi) - x(blo)).max(1.0),
                ROW - 4.0,
                escape(&o.paper_text())
            );
            if let Paper::Value(v) = p {
                let _ = write!(
                    s,
                    "<line class=\"paper-value\" x1=\"{0:.1}\" y1=\"{1:.1}\" x2=\"{0:.1}\" \
                     y2=\"{2:.1}\" stroke=\"#4E79A7\" stroke-width=\"2\"/>",
                    x(v),
                    y - ROW / 2.0 + 2.0,
                    y + ROW / 2.0 - 2.0
                );
            }
        }
        let colour = match o.magnitude {
            Magnitude::InRange => "#070",
            Magnitude::Near => "#a60",
            Magnitude::Off | Magnitude::Reversed | Magnitude::NoValue => "#b00",
            Magnitude::Qualitative | Magnitude::NotStated | Magnitude::WithinBound => "#555",
        };
        if finite(o.ours) {
            let _ = write!(
                s,
                "<circle class=\"ours\" cx=\"{:.1}\" cy=\"{y:.1}\" r=\"4\" fill=\"{colour}\"><title>irn {}</title></circle>",
                x(o.ours),
                o.shown(3)
            );
        }
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{colour}\">{} {}</text>",
            PLOT_RIGHT + 6.0,
            y + 4.0,
            o.shown(2),
            escape(&o.magnitude_text())
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `reproduce.json` written by hand: every verdict class, two papers, each kind of
    /// convergence, a ratio with no value (`null`).
    const RESULTS: &str = r#"[
  {
    "figure": "fig01",
    "title": "Fig. 1: IRN vs RoCE",
    "paper": "IRN (SIGCOMM 2018)",
    "window": "80ms",
    "converged": false,
    "outcomes": [
      { "figure": "fig01", "point": "", "ratio": "RoCE+PFC / IRN", "metric": "avg slowdown",
        "paper": [2.8, 3.7], "ours": 3.1, "expect": "above", "holds": true,
        "magnitude": "in_range", "factor": 1.0, "window": "80ms", "converged": true,
        "last_move": 0.012 },
      { "figure": "fig01", "point": "", "ratio": "RoCE+PFC / IRN", "metric": "avg FCT",
        "paper": [2.8, 3.7], "ours": 2.2, "expect": "above", "holds": true,
        "magnitude": "near", "factor": 1.27, "window": "80ms", "converged": true,
        "last_move": -0.03 },
      { "figure": "fig01", "point": "", "ratio": "RoCE+PFC / IRN", "metric": "p99 FCT",
        "paper": [2.8, 3.7], "claim": "IRN better (§4.2.1)", "ours": 1.28, "expect": "above",
        "holds": true, "magnitude": "off", "factor": 2.19, "window": "80ms",
        "converged": false, "last_move": 0.072 },
      { "figure": "fig01", "point": "", "ratio": "RoCE / RoCE+PFC", "metric": "avg FCT",
        "paper": 6.1, "ours": 14.6, "expect": "above", "holds": true,
        "magnitude": "off", "factor": 2.39, "why": "docs/reproduce.md#fig-3",
        "window": "80ms", "converged": true, "last_move": 0.01 }
    ]
  },
  {
    "figure": "eunomia-fig04",
    "title": "Fig. 4: reordering",
    "paper": "Eunomia",
    "window": "",
    "repetitions": 3,
    "converged": null,
    "outcomes": [
      { "figure": "eunomia-fig04", "point": "load=0.8", "ratio": "DRILL / ECMP",
        "metric": "ooo", "claim": "more reordering (Fig. 4a)", "ours": 4.6, "expect": "above",
        "holds": true, "magnitude": "qualitative", "window": "", "converged": null },
      { "figure": "eunomia-fig04", "point": "load=0.8", "ratio": "A / B", "metric": "m",
        "ours": 0.5, "expect": "above", "holds": false, "magnitude": "not_stated",
        "why": "docs/x.md#b",
        "window": "", "converged": null },
      { "figure": "eunomia-fig04", "point": "load=0.8", "ratio": "C / D", "metric": "m",
        "paper": 2.0, "ours": null, "expect": "above", "holds": false,
        "magnitude": "no_value", "window": "", "converged": null }
    ]
  }
]"#;

    fn results() -> Vec<FigureResult> {
        serde_json::from_str(RESULTS).unwrap()
    }

    #[test]
    fn a_report_from_a_hand_written_reproduce_json() {
        let mut results = results();
        let md = markdown(&results, "irn reproduce");
        for want in [
            "| IRN (SIGCOMM 2018) | 4 | 4 | 1 | 1 | 2 | 0 | 3 of 4 |",
            "| Eunomia | 3 | 1 | 0 | 0 | 1 | 2 | not checked |",
            "| all | 7 | 5 | 1 | 1 | 3 | 2 | 3 of 4 |",
            "- [Fig. 1: IRN vs RoCE](#fig-fig01): 4 of 4 directions hold; 1 in range, 1 near, 2 off",
            "| RoCE+PFC / IRN | avg slowdown | 2.8–3.7× | 3.10× | holds | in range | converged at 80ms (+1.2 %) |",
            "| RoCE+PFC / IRN | avg FCT | 2.8–3.7× | 2.20× | holds | near ×1.27 | converged at 80ms (−3.0 %) |",
            "| RoCE+PFC / IRN | p99 FCT | 2.8–3.7× (IRN better (§4.2.1)) | 1.28× | holds | **off ×2.19** (not yet explained) | still moving at 80ms (+7.2 %) |",
            "| 6.1× | 14.60× | holds | **off ×2.39** ([why](docs/reproduce.md#fig-3)) |",
            "| load=0.8 | DRILL / ECMP | ooo | more reordering (Fig. 4a) | 4.60× | holds | qualitative | one event (no window) |",
            // A direction that differs links its explanation whatever the magnitude, and says
            // when there is none.
            "| load=0.8 | A / B | m | — | 0.50× | **differs** | not stated ([why](docs/x.md#b)) |",
            "| load=0.8 | C / D | m | 2× | — | **differs** | no value |",
            "one event, no window; averaged over 3 seeds",
        ] {
            assert!(md.contains(want), "{want}\n{md}");
        }
        // The tally leads, before the contents and the figures.
        let tally = md.find("| all |").unwrap();
        assert!(tally < md.find("- [Fig. 1").unwrap() && tally < md.find("### Fig. 1").unwrap());

        let html = html(&results, false, "irn reproduce");
        assert!(html.find("class=\"tally\"").unwrap() < html.find("<h2>Contents</h2>").unwrap());
        assert!(html.contains("<a href=\"#fig-fig01\">Fig. 1: IRN vs RoCE</a>"));
        // An off magnitude is never a green "holds": its direction cell is plain and says so.
        let rows: Vec<&str> = html.split("<tr>").collect();
        let mut offs = 0;
        for row in &rows {
            if row.contains("<td class=\"no\">off ×") {
                offs += 1;
                assert!(!row.contains("class=\"ok\""), "{row}");
                assert!(
                    row.contains("<td class=\"dir\">direction only</td>"),
                    "{row}"
                );
            }
            if row.contains("<td class=\"near\">near ×") {
                assert!(!row.contains("class=\"ok\""), "{row}");
            }
        }
        assert_eq!(offs, 2);
        assert!(rows.iter().any(|r| r.contains("3.100×")
            && r.contains("<td class=\"ok\">holds</td><td class=\"ok\">in range</td>")));
        assert!(rows.iter().any(|r| r.contains("4.600×")
            && r.contains("<td class=\"ok\">holds</td><td class=\"dir\">qualitative</td>")));
        assert!(html.contains("(<a href=\"docs/reproduce.md#fig-3\">why</a>)"));
        // The paper's values on the chart: a band per check with a number (the range, or
        // ±15 % around a single value with a marker at it), irn's ratio as a dot.
        let svg = against_paper(&results[0]);
        assert_eq!(svg.matches("class=\"paper-band\"").count(), 4, "{svg}");
        assert_eq!(svg.matches("class=\"paper-value\"").count(), 1, "{svg}");
        assert_eq!(svg.matches("class=\"ours\"").count(), 4, "{svg}");
        assert!(svg.contains("<title>paper 2.8–3.7×</title>"), "{svg}");
        assert!(html.contains(&svg));
        // The band spans the paper's range on the log axis: 2.8 to 3.7, left of irn's 14.6.
        let band = svg.split("class=\"paper-band\" x=\"").nth(1).unwrap();
        let x: f64 = band.split('"').next().unwrap().parse().unwrap();
        let dot = svg.split("class=\"ours\" cx=\"").nth(4).unwrap();
        let cx: f64 = dot.split('"').next().unwrap().parse().unwrap();
        assert!(x > LABEL_WIDTH && x < cx && cx <= PLOT_RIGHT, "{x} {cx}");
        // A figure whose checks are all words has no such chart.
        let mut words = results.remove(1);
        words.outcomes.pop();
        assert!(against_paper(&words).is_empty());
    }

    #[test]
    fn the_json_reads_back_to_the_same_bytes() {
        let results = results();
        let json = serde_json::to_string_pretty(&results).unwrap();
        let again: Vec<FigureResult> = serde_json::from_str(&json).unwrap();
        assert_eq!(serde_json::to_string_pretty(&again).unwrap(), json);
        assert!(again[1].outcomes[2].ours.is_nan());
    }

    /// An infinite ratio is `null` in the JSON (which has no infinity) with `infinite` saying
    /// so, where a `null` alone has no value; both read back as they were.
    #[test]
    fn an_infinite_ratio_is_not_a_missing_one() {
        let mut results = results();
        results[1].outcomes[1].ours = f64::INFINITY;
        results[1].outcomes[1].infinite = true;
        let json = serde_json::to_string_pretty(&results).unwrap();
        let outcome = |json: &str, i: usize| {
            let v: serde_json::Value = serde_json::from_str(json).unwrap();
            v[1]["outcomes"][i].clone()
        };
        assert_eq!(outcome(&json, 1)["ours"], serde_json::Value::Null);
        assert_eq!(outcome(&json, 1)["infinite"], true);
        assert_eq!(outcome(&json, 2)["ours"], serde_json::Value::Null);
        assert!(outcome(&json, 2).get("infinite").is_none());
        let again: Vec<FigureResult> = serde_json::from_str(&json).unwrap();
        assert_eq!(again[1].outcomes[1].ours, f64::INFINITY);
        assert_eq!(again[1].outcomes[1].shown(2), "∞×");
        assert!(again[1].outcomes[2].ours.is_nan());
        assert_eq!(serde_json::to_string_pretty(&again).unwrap(), json);
    }
}
