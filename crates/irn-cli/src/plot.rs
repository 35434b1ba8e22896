//! SVG charts of results folders, drawn with plotters' SVG backend into strings.
//!
//! The SVG backend writes text as `<text>` elements and estimates text sizes itself, so no font
//! library (fontconfig, freetype) is involved. Every chart has the same layout: a title, a legend
//! strip above the plot (so the legend never hides data), then the plot. Variant `i` has the
//! same colour in every chart.

use anyhow::Result;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Chart size in pixels (the report scales it down to the page width).
const WIDTH: u32 = 880;
const HEIGHT: u32 = 480;
const FONT: &str = "sans-serif";
/// Plotters font sizes (the SVG backend writes `size / 1.24` px).
const TITLE_SIZE: f64 = 24.0;
const LABEL_SIZE: f64 = 16.0;
const VALUE_SIZE: f64 = 14.0;
/// Left edge of the legend and width of the y label area.
const Y_LABEL_AREA: u32 = 72;

/// `root` below `title`: one line at the title size when it fits the chart's width, else
/// wrapped at spaces into lines at the label size, so that a long experiment title never runs
/// off the chart.
fn titled<'a>(
    root: &DrawingArea<SVGBackend<'a>, Shift>,
    title: &str,
) -> Result<DrawingArea<SVGBackend<'a>, Shift>> {
    let width = root.dim_in_pixel().0;
    let fits = |text: &str, size: f64| {
        (root.estimate_text_size(text, &TextStyle::from((FONT, size).into_font())))
            .is_ok_and(|(w, _)| w + 24 <= width)
    };
    if fits(title, TITLE_SIZE) {
        return Ok(root.titled(title, (FONT, TITLE_SIZE))?);
    }
    let mut lines: Vec<String> = Vec::new();
    for word in title.split(' ') {
        match lines.last_mut() {
            Some(line) if fits(&format!("{line} {word}"), LABEL_SIZE) => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    let line_height = (LABEL_SIZE * 1.2) as i32;
    let style = (FONT, LABEL_SIZE)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    for (i, line) in (0..).zip(&lines) {
        root.draw(&Text::new(
            line.as_str(),
            (width as i32 / 2, 6 + i * line_height),
            style.clone(),
        ))?;
    }
    let height = 12 + line_height * lines.len() as i32;
    Ok(root.split_vertically(height as u32).1)
}

/// Tableau 10: distinguishable, and readable on white.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4E, 0x79, 0xA7),
    RGBColor(0xF2, 0x8E, 0x2B),
    RGBColor(0xE1, 0x57, 0x59),
    RGBColor(0x76, 0xB7, 0xB2),
    RGBColor(0x59, 0xA1, 0x4F),
    RGBColor(0xED, 0xC9, 0x48),
    RGBColor(0xB0, 0x7A, 0xA1),
    RGBColor(0xFF, 0x9D, 0xA7),
    RGBColor(0x9C, 0x75, 0x5F),
    RGBColor(0xBA, 0xB0, 0xAC),
];

/// The colour of variant `i`.
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// One group of the grouped bar chart: one value per variant (`None`: not available).
pub struct BarGroup<'a> {
    pub label: &'a str,
    pub values: Vec<Option<f64>>,
    /// Formats an absolute value for the label above its bar.
    pub format: fn(f64) -> String,
}

/// Grouped bars, one group per metric and one bar per variant; each group is normalised to its
/// first variant (so groups share the y axis), and each bar is labelled with its absolute value.
pub fn grouped_bars(title: &str, variants: &[&str], groups: &[BarGroup]) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        let area = titled(&root, title)?;
        let area = legend(&area, variants, Marker::Box)?;

        let normalised: Vec<Vec<Option<f64>>> = groups
            .iter()
            .map(|g| {
                let base = g.values.first().copied().flatten();
                g.values
                    .iter()
                    .map(|v| match (v, base) {
                        (Some(v), Some(b)) if b > 0.0 && v.is_finite() => Some(v / b),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        let top = normalised
            .iter()
            .flatten()
            .flatten()
            .fold(1.0_f64, |m, &v| m.max(v));
        let n = variants.len().max(1);
        // Bar width in pixels, roughly: labels that do not fit across a bar are set vertically.
        let plot_px = f64::from(WIDTH - Y_LABEL_AREA - 30);
        let bar_px = plot_px / groups.len().max(1) as f64 * 0.8 / n as f64;
        let widest = groups
            .iter()
            .flat_map(|g| {
                g.values
                    .iter()
                    .map(|v| v.map_or(3, |v| (g.format)(v).len()))
            })
            .max()
            .unwrap_or(0);
        let vertical = text_width(widest, VALUE_SIZE) > bar_px - 2.0;
        let headroom = if vertical { 1.45 } else { 1.15 };

        let n_groups = groups.len().max(1);
        let mut chart = ChartBuilder::on(&area)
            .margin_left(10)
            .margin_right(20)
            .margin_bottom(10)
            .x_label_area_size(40)
            .y_label_area_size(Y_LABEL_AREA)
            .build_cartesian_2d(-0.5..n_groups as f64 - 0.5, 0.0..top * headroom)?;
        let first = variants.first().copied().unwrap_or("");
        let y_desc = format!("relative to {first}");
        let y_fmt = |y: &f64| format!("{}×", fmt_sig(*y, 3));
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_label_formatter(&y_fmt)
            .y_desc(y_desc)
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, LABEL_SIZE))
            .light_line_style(WHITE)
            .bold_line_style(BLACK.mix(0.12))
            .draw()?;
        // Group names under the x axis.
        for (g, group) in groups.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(g as f64, 0.0));
            let style = (FONT, LABEL_SIZE)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Top));
            root.draw(&Text::new(group.label.to_string(), (px, py + 10), style))?;
        }
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(-0.5, 1.0), (n_groups as f64 - 0.5, 1.0)],
            BLACK.mix(0.45).stroke_width(1),
        )))?;

        let w = 0.8 / n as f64;
        for (g, group) in groups.iter().enumerate() {
            for (i, value) in group.values.iter().enumerate() {
                let left = g as f64 - 0.4 + i as f64 * w;
                let (x0, x1) = (left + 0.08 * w, left + 0.92 * w);
                let xc = left + 0.5 * w;
                let norm = normalised[g][i];
                if let Some(h) = norm {
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(x0, 0.0), (x1, h)],
                        color(i).filled(),
                    )))?;
                }
                let label = match (value, norm) {
                    (Some(v), Some(_)) => (group.format)(*v),
                    (Some(v), None) if v.is_finite() => (group.format)(*v),
                    _ => "n/a".to_string(),
                };
                // Pixel position just above the bar.
                let (px, py) = chart.backend_coord(&(xc, norm.unwrap_or(0.0)));
                let font = (FONT, VALUE_SIZE).into_font();
                let style = if vertical {
                    font.transform(FontTransform::Rotate270)
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Left, VPos::Center))
                } else {
                    font.color(&BLACK).pos(Pos::new(HPos::Center, VPos::Bottom))
                };
                root.draw(&Text::new(label, (px, py - 4), style))?;
            }
        }
        root.present()?;
    }
    Ok(svg)
}

/// One flow-size bucket of [`fct_bucket_bars`]: its label and, per variant, its mean and p99
/// FCT in µs (`None`: no finished flow there).
pub struct FctBucketGroup {
    pub label: String,
    pub values: Vec<(Option<f64>, Option<f64>)>,
}

/// A chart by flow-size bucket's coordinates: bucket slots along x, a log y axis.
type BucketCoord = Cartesian2d<plotters::coord::types::RangedCoordf64, LogCoord<f64>>;

/// The axes of a chart by flow-size bucket: one slot per bucket along x (labelled by
/// [`bucket_label`]), a log y axis over `y` described by `y_desc`.
fn bucket_axes<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    buckets: usize,
    (y0, y1): (f64, f64),
    y_desc: &str,
    y_fmt: fn(f64) -> String,
) -> Result<ChartContext<'a, SVGBackend<'b>, BucketCoord>> {
    let n_groups = buckets.max(1);
    let mut chart = ChartBuilder::on(area)
        .margin_left(10)
        .margin_right(20)
        .margin_bottom(10)
        .x_label_area_size(40)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(-0.5..n_groups as f64 - 0.5, (y0..y1).log_scale())?;
    let fmt = |y: &f64| y_fmt(*y);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_label_formatter(&fmt)
        .y_desc(format!("{y_desc} (log scale)"))
        .label_style((FONT, LABEL_SIZE))
        .axis_desc_style((FONT, LABEL_SIZE))
        .light_line_style(BLACK.mix(0.04))
        .bold_line_style(BLACK.mix(0.12))
        .draw()?;
    Ok(chart)
}

/// Bucket `g`'s label under its slot of a [`bucket_axes`] chart whose axis starts at `y0`.
fn bucket_label(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    chart: &ChartContext<'_, SVGBackend<'_>, BucketCoord>,
    g: usize,
    y0: f64,
    label: &str,
) -> Result<()> {
    let (px, py) = chart.backend_coord(&(g as f64, y0));
    let style = (FONT, LABEL_SIZE)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    root.draw(&Text::new(label.to_string(), (px, py + 10), style))?;
    Ok(())
}

/// FCT by flow-size bucket (the form of Eunomia's Figs. 10 and 11): per bucket one bar per
/// variant up to its mean FCT, with a whisker up to its p99, on a log axis (buckets' FCTs
/// differ by orders of magnitude). Absolute values, not relative ones: a bucket's variants are
/// compared side by side, and a single run has nothing to be relative to.
pub fn fct_bucket_bars(
    title: &str,
    variants: &[&str],
    buckets: &[FctBucketGroup],
) -> Result<String> {
    let values = || {
        buckets
            .iter()
            .flat_map(|b| b.values.iter().flat_map(|&(a, p)| [a, p]))
            .flatten()
            .filter(|v| v.is_finite() && *v > 0.0)
    };
    let lo = values().fold(f64::INFINITY, f64::min);
    let hi = values().fold(f64::NEG_INFINITY, f64::max);
    let empty = !lo.is_finite();
    let (y0, y1) = if empty {
        (1.0, 10.0)
    } else {
        (lo / 2.0, hi * 2.0)
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        let area = titled(&root, title)?;
        let area = legend(&area, variants, Marker::Box)?;
        let mut chart = bucket_axes(
            &area,
            buckets.len(),
            (y0, y1),
            "FCT: mean (bar), p99 (whisker)",
            fmt_us,
        )?;
        let n = variants.len().max(1);
        let w = 0.8 / n as f64;
        for (g, bucket) in buckets.iter().enumerate() {
            bucket_label(&root, &chart, g, y0, &bucket.label)?;
            for (i, &(avg, p99)) in bucket.values.iter().enumerate() {
                let left = g as f64 - 0.4 + i as f64 * w;
                let (x0, x1, xc) = (left + 0.08 * w, left + 0.92 * w, left + 0.5 * w);
                if let Some(avg) = avg.filter(|v| *v > 0.0) {
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(x0, y0), (x1, avg)],
                        color(i).filled(),
                    )))?;
                }
                if let Some(p99) = p99.filter(|v| *v > 0.0) {
                    let base = avg.filter(|v| *v > 0.0).unwrap_or(y0);
                    let cap = 0.25 * w;
                    chart.draw_series([
                        PathElement::new(vec![(xc, base), (xc, p99)], BLACK.stroke_width(1)),
                        PathElement::new(
                            vec![(xc - cap, p99), (xc + cap, p99)],
                            BLACK.stroke_width(2),
                        ),
                    ])?;
                }
            }
        }
        if empty {
            no_data(
                &chart,
                (buckets.len().max(1) as f64 - 1.0) / 2.0,
                (y0 * y1).sqrt(),
            )?;
        }
        root.present()?;
    }
    Ok(svg)
}

/// One flow-size bucket of [`slowdown_bucket_bars`]: its label and, per variant, its p50, p95
/// and p99 slowdown (`None`: no finished flow there).
pub struct SlowdownBucketGroup {
    pub label: String,
    pub values: Vec<[Option<f64>; 3]>,
}

/// Slowdown percentiles by flow-size bucket (the standard figure of the HPCC and ConWeave
/// papers): per bucket one bar per variant up to its median, a whisker up to its p99 and a tick
/// at its p95, on a log axis (tails are orders of magnitude above medians).
pub fn slowdown_bucket_bars(
    title: &str,
    variants: &[&str],
    buckets: &[SlowdownBucketGroup],
) -> Result<String> {
    let values = || {
        (buckets.iter())
            .flat_map(|b| b.values.iter().flatten())
            .flatten()
            .copied()
            .filter(|v| v.is_finite() && *v > 0.0)
    };
    let lo = values().fold(f64::INFINITY, f64::min);
    let hi = values().fold(f64::NEG_INFINITY, f64::max);
    let empty = !lo.is_finite();
    // Slowdowns are at least 1: the axis starts there unless a value is below.
    let (y0, y1) = if empty {
        (1.0, 10.0)
    } else {
        ((lo / 1.5).min(1.0), (hi * 1.5).max(2.0))
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        let area = titled(&root, title)?;
        let area = legend(&area, variants, Marker::Box)?;
        let mut chart = bucket_axes(
            &area,
            buckets.len(),
            (y0, y1),
            "slowdown: p50 (bar), p95 (tick), p99 (whisker)",
            |y| fmt_sig(y, 3),
        )?;
        let n = variants.len().max(1);
        let w = 0.8 / n as f64;
        for (g, bucket) in buckets.iter().enumerate() {
            bucket_label(&root, &chart, g, y0, &bucket.label)?;
            for (i, &[p50, p95, p99]) in bucket.values.iter().enumerate() {
                let left = g as f64 - 0.4 + i as f64 * w;
                let (x0, x1, xc) = (left + 0.08 * w, left + 0.92 * w, left + 0.5 * w);
                let positive = |v: Option<f64>| v.filter(|v| *v > 0.0);
                if let Some(p50) = positive(p50) {
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(x0, y0), (x1, p50)],
                        color(i).filled(),
                    )))?;
                }
                let base = positive(p50).unwrap_or(y0);
                let cap = 0.25 * w;
                if let Some(p99) = positive(p99) {
                    chart.draw_series([
                        PathElement::new(vec![(xc, base), (xc, p99)], BLACK.stroke_width(1)),
                        PathElement::new(
                            vec![(xc - cap, p99), (xc + cap, p99)],
                            BLACK.stroke_width(2),
                        ),
                    ])?;
                }
                if let Some(p95) = positive(p95) {
                    chart.draw_series(std::iter::once(PathElement::new(
                        vec![(xc - cap / 2.0, p95), (xc + cap / 2.0, p95)],
                        BLACK.stroke_width(2),
                    )))?;
                }
            }
        }
        if empty {
            no_data(
                &chart,
                (buckets.len().max(1) as f64 - 1.0) / 2.0,
                (y0 * y1).sqrt(),
            )?;
        }
        root.present()?;
    }
    Ok(svg)
}

/// One line of [`error_bar_lines`]: its name and its points (x, y, half-width of the error
/// bar, `None` for none), in increasing x.
pub type ErrorBarLine = (String, Vec<(f64, f64, Option<f64>)>);

/// Lines with markers and vertical error bars: a metric against a swept parameter, one line
/// per variant. The y axis starts at 0 for non-negative data, so the lines' gaps read as
/// proportions; where the values span more than [`LOG_SPAN`]× (a p99 FCT that explodes at high
/// load), it is logarithmic instead, so the low values stay readable.
pub fn error_bar_lines(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[ErrorBarLine],
) -> Result<String> {
    let pts = || series.iter().flat_map(|s| s.1.iter().copied());
    let xs = || pts().map(|p| p.0);
    let (mut x0, mut x1) = (
        xs().fold(f64::INFINITY, f64::min),
        xs().fold(f64::NEG_INFINITY, f64::max),
    );
    let lows = || pts().map(|(_, y, e)| y - e.unwrap_or(0.0));
    let highs = || pts().map(|(_, y, e)| y + e.unwrap_or(0.0));
    let (mut y0, mut y1) = (
        lows().fold(f64::INFINITY, f64::min),
        highs().fold(f64::NEG_INFINITY, f64::max),
    );
    let empty = !(x0.is_finite() && y0.is_finite());
    if empty {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    let pad = if x1 > x0 {
        (x1 - x0) * 0.05
    } else {
        x0.abs().max(1.0) * 0.1
    };
    let (x0, x1) = (x0 - pad, x1 + pad);
    // The log axis spans the points themselves: an error bar reaching 0 or below is cut at
    // the axis.
    let ys = || pts().map(|p| p.1);
    let (low, high) = (
        ys().fold(f64::INFINITY, f64::min),
        ys().fold(f64::NEG_INFINITY, f64::max),
    );

    let names: Vec<&str> = series.iter().map(|s| s.0.as_str()).collect();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        let area = titled(&root, title)?;
        let area = legend(&area, &names, Marker::Line)?;
        let lines = ErrorBars {
            area: &area,
            x: x0..x1,
            x_desc,
            series,
        };
        if !empty && low > 0.0 && high / low > LOG_SPAN {
            let (y0, y1) = (low / 1.3, y1.max(high) * 1.3);
            let (bold, light) = log_ticks(y0, y1);
            let y = (y0..y1)
                .log_scale()
                .with_key_points(bold)
                .with_light_points(light);
            lines.draw(y, &format!("{y_desc} (log scale)"), y0, None)?;
        } else {
            let y0 = if y0 >= 0.0 { 0.0 } else { y0 * 1.1 };
            let y1 = if y1 > y0 { y1 * 1.1 } else { y0 + 1.0 };
            let no_data_at = empty.then_some((y0 + y1) / 2.0);
            lines.draw(y0..y1, y_desc, f64::NEG_INFINITY, no_data_at)?;
        }
        root.present()?;
    }
    Ok(svg)
}

/// What [`error_bar_lines`] draws on its axes, whichever scale its y axis has.
struct ErrorBars<'a, 'b> {
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    x: std::ops::Range<f64>,
    x_desc: &'a str,
    series: &'a [ErrorBarLine],
}

impl ErrorBars<'_, '_> {
    /// The axes with y over `y`, described by `y_desc`, and the lines; error bars are cut at
    /// `floor`; "no data" at `no_data_at` (a y) for an empty chart.
    fn draw<Y>(&self, y: Y, y_desc: &str, floor: f64, no_data_at: Option<f64>) -> Result<()>
    where
        Y: AsRangedCoord<Value = f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let (x0, x1) = (self.x.start, self.x.end);
        let mut chart = ChartBuilder::on(self.area)
            .margin_left(10)
            .margin_right(30)
            .margin_bottom(10)
            .x_label_area_size(56)
            .y_label_area_size(Y_LABEL_AREA)
            .build_cartesian_2d(self.x.clone(), y)?;
        let xf = |x: &f64| fmt_sig(*x, 4);
        let yf = |y: &f64| fmt_sig(*y, 3);
        chart
            .configure_mesh()
            .x_desc(self.x_desc)
            .y_desc(y_desc)
            .x_label_formatter(&xf)
            .y_label_formatter(&yf)
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, LABEL_SIZE))
            .light_line_style(BLACK.mix(0.04))
            .bold_line_style(BLACK.mix(0.12))
            .draw()?;
        let cap = (x1 - x0) * 0.006;
        for (i, (_, line)) in self.series.iter().enumerate() {
            let c = color(i);
            chart.draw_series(LineSeries::new(
                line.iter().map(|&(x, y, _)| (x, y)),
                c.stroke_width(2),
            ))?;
            chart.draw_series(PointSeries::of_element(
                line.iter().map(|&(x, y, _)| (x, y)),
                3,
                c.filled(),
                &|p, size, style| EmptyElement::at(p) + Circle::new((0, 0), size, style),
            ))?;
            for &(x, y, e) in line {
                let Some(e) = e.filter(|e| e.is_finite() && *e > 0.0) else {
                    continue;
                };
                let (lo, hi) = ((y - e).max(floor), y + e);
                let style = c.stroke_width(1);
                chart.draw_series([
                    PathElement::new(vec![(x, lo), (x, hi)], style),
                    PathElement::new(vec![(x - cap, lo), (x + cap, lo)], style),
                    PathElement::new(vec![(x - cap, hi), (x + cap, hi)], style),
                ])?;
            }
        }
        if let Some(y) = no_data_at {
            no_data(&chart, (x0 + x1) / 2.0, y)?;
        }
        Ok(())
    }
}

/// The upper tail of a distribution as a CDF: x = value, y = percentile (nearest rank), from
/// percentile `lo` to `hi`, one line per series (the IRN paper's Fig. 8 form). Where the values
/// span more than [`LOG_SPAN`]× (one variant's tail far beyond the others'), the x axis is
/// logarithmic, so the others are not crushed against its start; `x_fmt` formats its labels.
pub fn tail_cdf(
    title: &str,
    x_desc: &str,
    series: &[(&str, Vec<f64>)],
    (lo, hi): (f64, f64),
    x_fmt: fn(f64) -> String,
) -> Result<String> {
    let lines: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|(_, values)| tail_points(values, lo, hi))
        .collect();
    let xs = || lines.iter().flatten().map(|p| p.0);
    let (x0, x1) = (
        xs().fold(f64::INFINITY, f64::min),
        xs().fold(f64::NEG_INFINITY, f64::max),
    );
    let names: Vec<&str> = series.iter().map(|s| s.0).collect();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        let area = titled(&root, title)?;
        let area = legend(&area, &names, Marker::Line)?;
        let axes = TailAxes {
            area: &area,
            x_fmt,
            lo,
            lines: &lines,
        };
        if !x0.is_finite() {
            axes.draw(0.0..1.0, x_desc, Some(0.5))?;
        } else if x0 > 0.0 && x1 / x0 > LOG_SPAN {
            let (x0, x1) = (x0 / 1.2, x1 * 1.2);
            let (bold, light) = log_ticks(x0, x1);
            let x = (x0..x1)
                .log_scale()
                .with_key_points(bold)
                .with_light_points(light);
            axes.draw(x, &format!("{x_desc} (log scale)"), None)?;
        } else {
            let pad = ((x1 - x0) * 0.05).max(x1.abs() * 0.01).max(0.5);
            axes.draw((x0 - pad).max(0.0)..x1 + pad, x_desc, None)?;
        }
        root.present()?;
    }
    Ok(svg)
}

/// A value axis spanning more than this factor is drawn on a log scale.
pub const LOG_SPAN: f64 = 10.0;

/// What [`tail_cdf`] draws on its axes, whichever scale its x axis has.
struct TailAxes<'a, 'b> {
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    x_fmt: fn(f64) -> String,
    /// The lowest percentile: the y axis runs from it to 100.
    lo: f64,
    lines: &'a [Vec<(f64, f64)>],
}

impl TailAxes<'_, '_> {
    /// The axes with x over `x`, described by `x_desc`, and the lines; "no data" at
    /// `no_data_at` (an x) for an empty chart.
    fn draw<X>(&self, x: X, x_desc: &str, no_data_at: Option<f64>) -> Result<()>
    where
        X: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
    {
        let mut chart = ChartBuilder::on(self.area)
            .margin_left(10)
            .margin_right(30)
            .margin_bottom(10)
            .x_label_area_size(56)
            .y_label_area_size(Y_LABEL_AREA)
            .build_cartesian_2d(x, self.lo..100.0)?;
        let y_fmt = |y: &f64| fmt_sig(*y, 4);
        let x_fmt = |x: &f64| (self.x_fmt)(*x);
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc("percentile")
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, LABEL_SIZE))
            .light_line_style(BLACK.mix(0.04))
            .bold_line_style(BLACK.mix(0.12))
            .draw()?;
        for (i, line) in self.lines.iter().enumerate() {
            chart.draw_series(LineSeries::new(
                line.iter().copied(),
                color(i).stroke_width(2),
            ))?;
        }
        if let Some(x) = no_data_at {
            no_data(&chart, x, (self.lo + 100.0) / 2.0)?;
        }
        Ok(())
    }
}

/// The ticks of a log axis over `x0..x1` (both positive): labelled ones at each power of ten
/// inside it, and at its 2× and 5× too when the axis spans fewer than three decades (so it
/// has several labels); light grid lines at every whole multiple of each power of ten.
pub fn log_ticks(x0: f64, x1: f64) -> (Vec<f64>, Vec<f64>) {
    let (first, last) = (
        libm::log10(x0).floor() as i32,
        libm::log10(x1).ceil() as i32,
    );
    let few = last - first <= 3;
    let (mut bold, mut light) = (Vec::new(), Vec::new());
    for decade in first..=last {
        // "1e-3" parses to the nearest double, where powi would accumulate rounding.
        let power: f64 = format!("1e{decade}").parse().unwrap_or(1.0);
        for m in 1..=9 {
            let v = f64::from(m) * power;
            if v < x0 || v > x1 {
                continue;
            }
            light.push(v);
            if m == 1 || (few && (m == 2 || m == 5)) {
                bold.push(v);
            }
        }
    }
    (bold, light)
}

/// The points of the nearest-rank CDF of `values` between percentiles `lo` and `hi`, sampled
/// on a fine percentile grid (so the SVG stays small however many values there are) and with
/// vertical runs collapsed to their ends.
pub fn tail_points(values: &[f64], lo: f64, hi: f64) -> Vec<(f64, f64)> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return Vec::new();
    }
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let rank = |p: f64| -> f64 {
        let k = ((p / 100.0) * n as f64).ceil() as usize;
        sorted[k.clamp(1, n) - 1]
    };
    const STEPS: usize = 1000;
    let mut points: Vec<(f64, f64)> = Vec::new();
    // Keeps the first and last point of each run at one x.
    fn add(points: &mut Vec<(f64, f64)>, p: (f64, f64)) {
        if points.len() >= 2 {
            let (a, b) = (points[points.len() - 2], points[points.len() - 1]);
            if a.0 == b.0 && b.0 == p.0 {
                points.pop();
            }
        }
        points.push(p);
    }
    for s in 0..=STEPS {
        let p = lo + (hi - lo) * s as f64 / STEPS as f64;
        let v = rank(p);
        // A step: the jump to a new value happens at the percentile where it starts.
        if let Some(&(px, py)) = points.last() {
            if v != px {
                add(&mut points, (v, py));
            }
        }
        add(&mut points, (v, p));
    }
    points
}

/// Median of `y` per bin of `x` on a log scale (`per_decade` bins per factor of 10), for bins
/// with at least `min_count` points: (geometric bin centre, median). Logarithms are `libm`'s, so
/// a point on a bin's edge lands in the same bin on every machine.
pub fn log_binned_medians(
    points: &[(f64, f64)],
    per_decade: f64,
    min_count: usize,
) -> Vec<(f64, f64)> {
    let mut bins: std::collections::BTreeMap<i64, Vec<f64>> = Default::default();
    for &(x, y) in points {
        if x > 0.0 && y.is_finite() {
            let b = (libm::log10(x) * per_decade).floor() as i64;
            bins.entry(b).or_default().push(y);
        }
    }
    bins.into_iter()
        .filter(|(_, ys)| ys.len() >= min_count.max(1))
        .map(|(b, mut ys)| {
            ys.sort_by(f64::total_cmp);
            let m = ys.len();
            let median = if m % 2 == 1 {
                ys[m / 2]
            } else {
                (ys[m / 2 - 1] + ys[m / 2]) / 2.0
            };
            (libm::pow(10.0, (b as f64 + 0.5) / per_decade), median)
        })
        .collect()
}

/// Lines with markers on log–log axes, e.g. median slowdown per flow-size bin. `x_fmt` formats
/// x-axis labels.
pub fn log_lines(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[(&str, Vec<(f64, f64)>)],
    x_fmt: fn(f64) -> String,
) -> Result<String> {
    let pts = || series.iter().flat_map(|s| s.1.iter().copied());
    let fold = |f: fn(f64, f64) -> f64, init: f64, pick: fn((f64, f64)) -> f64| {
        pts().map(pick).fold(init, f)
    };
    let (mut x0, mut x1) = (
        fold(f64::min, f64::INFINITY, |p| p.0),
        fold(f64::max, f64::NEG_INFINITY, |p| p.0),
    );
    let (mut y0, mut y1) = (
        fold(f64::min, f64::INFINITY, |p| p.1),
        fold(f64::max, f64::NEG_INFINITY, |p| p.1),
    );
    let empty = !(x0.is_finite() && x0 > 0.0 && y0.is_finite() && y0 > 0.0);
    if empty {
        (x0, x1, y0, y1) = (1.0, 1e6, 1.0, 10.0);
    }
    let (x0, x1) = (x0 / 1.6, x1 * 1.6);
    let (y0, y1) = ((y0 / 1.15).min(1.0), (y1 * 1.3).max(2.0));

    let names: Vec<&str> = series.iter().map(|s| s.0).collect();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        let area = titled(&root, title)?;
        let area = legend(&area, &names, Marker::Line)?;
        let mut chart = ChartBuilder::on(&area)
            .margin_left(10)
            .margin_right(30)
            .margin_bottom(10)
            .x_label_area_size(56)
            .y_label_area_size(Y_LABEL_AREA)
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())?;
        let xf = |x: &f64| x_fmt(*x);
        let yf = |y: &f64| fmt_sig(*y, 3);
        chart
            .configure_mesh()
            .x_desc(format!("{x_desc} (log scale)"))
            .y_desc(format!("{y_desc} (log scale)"))
            .x_label_formatter(&xf)
            .y_label_formatter(&yf)
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, LABEL_SIZE))
            .light_line_style(BLACK.mix(0.04))
            .bold_line_style(BLACK.mix(0.12))
            .draw()?;
        for (i, (_, line)) in series.iter().enumerate() {
            let c = color(i);
            chart.draw_series(LineSeries::new(line.iter().copied(), c.stroke_width(2)))?;
            chart.draw_series(PointSeries::of_element(
                line.iter().copied(),
                3,
                c.filled(),
                &|p, size, style| EmptyElement::at(p) + Circle::new((0, 0), size, style),
            ))?;
        }
        if empty {
            no_data(&chart, (x0 * x1).sqrt(), (y0 * y1).sqrt())?;
        }
        root.present()?;
    }
    Ok(svg)
}

/// Lines over time on linear axes (x in microseconds, from the first point), one per series,
/// without markers: a time series has a point per sample, too many to mark. `y_fmt` formats
/// y-axis labels.
pub fn time_lines(
    title: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
    y_fmt: fn(f64) -> String,
) -> Result<String> {
    let pts = || series.iter().flat_map(|s| s.1.iter().copied());
    let x0 = pts().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let x1 = pts().map(|p| p.0).fold(0.0, f64::max);
    let y1 = pts().map(|p| p.1).fold(0.0, f64::max);
    let empty = !(x0.is_finite() && x1 > x0);
    // From the first sample: a trace that starts at 2 s (as ns-3's do) is not squeezed right.
    let (x0, x1) = if empty { (0.0, 1.0) } else { (x0, x1) };
    let y1 = if y1 > 0.0 { y1 * 1.1 } else { 1.0 };
    let names: Vec<&str> = series.iter().map(|s| s.0.as_str()).collect();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        let area = titled(&root, title)?;
        let area = legend(&area, &names, Marker::Line)?;
        let mut chart = ChartBuilder::on(&area)
            .margin_left(10)
            .margin_right(30)
            .margin_bottom(10)
            .x_label_area_size(56)
            .y_label_area_size(Y_LABEL_AREA)
            .build_cartesian_2d(x0..x1, 0.0..y1)?;
        let xf = |x: &f64| fmt_us(*x);
        let yf = |y: &f64| y_fmt(*y);
        chart
            .configure_mesh()
            .x_desc("time")
            .y_desc(y_desc)
            .x_label_formatter(&xf)
            .y_label_formatter(&yf)
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, LABEL_SIZE))
            .light_line_style(BLACK.mix(0.04))
            .bold_line_style(BLACK.mix(0.12))
            .draw()?;
        for (i, (_, line)) in series.iter().enumerate() {
            chart.draw_series(LineSeries::new(
                line.iter().copied(),
                color(i).stroke_width(2),
            ))?;
        }
        if empty {
            no_data(&chart, (x0 + x1) / 2.0, y1 / 2.0)?;
        }
        root.present()?;
    }
    Ok(svg)
}

/// One trace of [`stacked_time_lines`]: its axis label, its points and the least top of
/// its axis (the axis grows to fit the trace beyond it).
pub struct Stacked<'a> {
    pub y_desc: &'a str,
    pub points: &'a [(f64, f64)],
    pub y_top: f64,
}

/// Traces of one run over a shared time axis, each on its own axis, stacked top to bottom
/// (the NRL slides' panels: buffer occupancy, pause to source, pause from sink), each one line
/// in its own colour; `x_desc` names the time axis, whose values are drawn as they are.
pub fn stacked_time_lines(title: &str, x_desc: &str, traces: &[Stacked]) -> Result<String> {
    let pts = || traces.iter().flat_map(|t| t.points.iter().copied());
    let x0 = pts().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let x1 = pts().map(|p| p.0).fold(0.0, f64::max);
    let empty = !(x0.is_finite() && x1 > x0);
    let (x0, x1) = if empty { (0.0, 1.0) } else { (x0.min(0.0), x1) };
    let height = 200 * traces.len().max(1) as u32 + 60;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let area = titled(&root, title)?;
        let rows = area.split_evenly((traces.len().max(1), 1));
        for (i, (trace, row)) in traces.iter().zip(&rows).enumerate() {
            let top = (trace.points.iter())
                .map(|p| p.1)
                .fold(trace.y_top, f64::max)
                .max(f64::MIN_POSITIVE);
            let last = i + 1 == traces.len();
            let mut chart = ChartBuilder::on(row)
                .margin_left(10)
                .margin_right(30)
                .margin_top(6)
                .x_label_area_size(if last { 48 } else { 20 })
                .y_label_area_size(Y_LABEL_AREA)
                .build_cartesian_2d(x0..x1, 0.0..top * 1.05)?;
            let xf = |x: &f64| fmt_sig(*x, 4);
            let yf = |y: &f64| fmt_sig(*y, 3);
            let mut mesh = chart.configure_mesh();
            mesh.y_desc(trace.y_desc)
                .x_label_formatter(&xf)
                .y_label_formatter(&yf)
                .y_labels(4)
                .label_style((FONT, LABEL_SIZE))
                .axis_desc_style((FONT, LABEL_SIZE))
                .light_line_style(BLACK.mix(0.04))
                .bold_line_style(BLACK.mix(0.12));
            if last {
                mesh.x_desc(x_desc);
            }
            mesh.draw()?;
            chart.draw_series(LineSeries::new(
                trace.points.iter().copied(),
                color(i).stroke_width(2),
            ))?;
        }
        root.present()?;
    }
    Ok(svg)
}

/// A heat map over time: one band per row (bottom to top in the order given), each cell's
/// value a fraction in 0..=1 shaded from white (0) to the first palette colour (1), cells
/// `cell_us` wide from `start_us`, with a colour bar beside it reading shades as percentages
/// (`bar_desc` names what they are). A row's missing cells (`None`) stay blank.
pub fn heat_map(
    title: &str,
    bar_desc: &str,
    rows: &[(String, Vec<Option<f64>>)],
    start_us: f64,
    cell_us: f64,
) -> Result<String> {
    let cells = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    let cell_us = cell_us.max(1e-9);
    let start_us = if start_us.is_finite() {
        start_us.max(0.0)
    } else {
        0.0
    };
    let x1 = start_us + cells.max(1) as f64 * cell_us;
    let n = rows.len().max(1) as f64;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        let area = titled(&root, title)?;
        let longest = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
        let label_area = (text_width(longest, LABEL_SIZE).ceil() as u32 + 16).max(Y_LABEL_AREA);
        let mut chart = ChartBuilder::on(&area)
            .margin_left(10)
            .margin_right(COLOUR_BAR_AREA)
            .margin_bottom(10)
            .x_label_area_size(56)
            .y_label_area_size(label_area)
            .build_cartesian_2d(start_us..x1, 0.0..n)?;
        let xf = |x: &f64| fmt_us(*x);
        let names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        let yf = |y: &f64| {
            let i = y.floor() as usize;
            // One label per band, at its middle.
            if (y - i as f64 - 0.5).abs() < 1e-9 {
                names.get(i).map_or(String::new(), |s| s.to_string())
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("time")
            .x_label_formatter(&xf)
            .y_labels(2 * rows.len() + 1)
            .y_label_formatter(&yf)
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, LABEL_SIZE))
            .draw()?;
        for (r, (_, values)) in rows.iter().enumerate() {
            chart.draw_series(values.iter().enumerate().filter_map(|(i, v)| {
                let v = (*v)?;
                let x = start_us + i as f64 * cell_us;
                Some(Rectangle::new(
                    [(x, r as f64 + 0.05), (x + cell_us, r as f64 + 0.95)],
                    shade(v).filled(),
                ))
            }))?;
        }
        if rows.is_empty() {
            no_data(&chart, (start_us + x1) / 2.0, n / 2.0)?;
        }
        let (xs, ys) = chart.plotting_area().get_pixel_range();
        colour_bar(&root, xs.end + 24, ys, bar_desc)?;
        root.present()?;
    }
    Ok(svg)
}

/// Width in pixels of the heat map's right margin, which holds its colour bar.
const COLOUR_BAR_AREA: u32 = 120;

/// The heat map's shade of a fraction: white at 0, the first palette colour at 1.
fn shade(v: f64) -> RGBColor {
    let c = color(0);
    let v = if v.is_finite() {
        v.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mix = |full: u8| (255.0 - (255.0 - f64::from(full)) * v).round() as u8;
    RGBColor(mix(c.0), mix(c.1), mix(c.2))
}

/// The heat map's colour bar: the shades from 0 (bottom) to 1 (top) over the pixel rows `ys`,
/// its left edge at `x`, labelled every 25 % and headed by `desc`.
fn colour_bar(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    x: i32,
    ys: std::ops::Range<i32>,
    desc: &str,
) -> Result<()> {
    const STEPS: i32 = 50;
    const BAR: i32 = 16;
    let (top, bottom) = (ys.start, ys.end);
    let y_of = |v: f64| bottom - ((bottom - top) as f64 * v).round() as i32;
    for i in 0..STEPS {
        let (v0, v1) = (
            f64::from(i) / f64::from(STEPS),
            f64::from(i + 1) / f64::from(STEPS),
        );
        root.draw(&Rectangle::new(
            [(x, y_of(v1)), (x + BAR, y_of(v0))],
            shade((v0 + v1) / 2.0).filled(),
        ))?;
    }
    root.draw(&Rectangle::new(
        [(x, top), (x + BAR, bottom)],
        BLACK.mix(0.45).stroke_width(1),
    ))?;
    for quarter in 0..=4 {
        let v = f64::from(quarter) / 4.0;
        let y = y_of(v);
        root.draw(&PathElement::new(
            vec![(x + BAR, y), (x + BAR + 4, y)],
            BLACK.stroke_width(1),
        ))?;
        let style = (FONT, VALUE_SIZE)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        root.draw(&Text::new(fmt_percent(v), (x + BAR + 8, y), style))?;
    }
    let style = (FONT, VALUE_SIZE)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Bottom));
    root.draw(&Text::new(desc.to_string(), (x - 8, top - 8), style))?;
    Ok(())
}

/// A fraction as a percentage: "25 %".
pub fn fmt_percent(v: f64) -> String {
    format!("{} %", fmt_sig(v * 100.0, 3))
}

/// "no data" in the middle of an empty chart.
fn no_data<'a, DB: DrawingBackend + 'a, X, Y>(
    chart: &ChartContext<'a, DB, Cartesian2d<X, Y>>,
    x: X::ValueType,
    y: Y::ValueType,
) -> Result<()>
where
    X: Ranged,
    Y: Ranged,
    DB::ErrorType: 'static,
{
    let style = (FONT, LABEL_SIZE)
        .into_font()
        .color(&BLACK.mix(0.6))
        .pos(Pos::new(HPos::Center, VPos::Center));
    chart
        .plotting_area()
        .draw(&Text::new("no data", (x, y), style))?;
    Ok(())
}

#[derive(Clone, Copy)]
enum Marker {
    Box,
    Line,
}

/// Approximate width in pixels of `chars` characters at plotters font size `size`.
fn text_width(chars: usize, size: f64) -> f64 {
    chars as f64 * size / 1.24 * 0.56
}

/// Draws a legend strip (wrapped into rows) at the top of `area` and returns the rest.
fn legend<'a>(
    area: &DrawingArea<SVGBackend<'a>, Shift>,
    names: &[&str],
    marker: Marker,
) -> Result<DrawingArea<SVGBackend<'a>, Shift>> {
    const ROW: i32 = 24;
    let (width, _) = area.dim_in_pixel();
    let left = Y_LABEL_AREA as i32 + 10;
    let right = width as i32 - 20;
    let mut placed: Vec<(i32, i32)> = Vec::new();
    let (mut x, mut row) = (left, 0);
    for name in names {
        let w = 26 + text_width(name.chars().count(), LABEL_SIZE).ceil() as i32 + 22;
        if x + w > right && x > left {
            x = left;
            row += 1;
        }
        placed.push((x, row));
        x += w;
    }
    let rows = if names.is_empty() { 0 } else { row + 1 };
    let (strip, rest) = area.split_vertically(rows * ROW + 8);
    for (i, (name, &(x, row))) in names.iter().zip(&placed).enumerate() {
        let y = row * ROW + ROW / 2 + 2;
        let c = color(i);
        match marker {
            Marker::Box => {
                strip.draw(&Rectangle::new([(x, y - 6), (x + 18, y + 6)], c.filled()))?
            }
            Marker::Line => strip.draw(&PathElement::new(
                vec![(x, y), (x + 18, y)],
                c.stroke_width(3),
            ))?,
        }
        let style = (FONT, LABEL_SIZE)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        strip.draw(&Text::new(name.to_string(), (x + 26, y), style))?;
    }
    Ok(rest)
}

/// `v` with `digits` significant digits, without trailing zeros ("2.5", "150", "0.0012").
pub fn fmt_sig(v: f64, digits: usize) -> String {
    if !v.is_finite() {
        return "n/a".to_string();
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let magnitude = libm::log10(v.abs()).floor() as i32;
    let decimals = (digits as i32 - 1 - magnitude).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A duration given in microseconds: "18.8 µs", "153 µs", "1.67 ms".
pub fn fmt_us(us: f64) -> String {
    if us.abs() >= 1000.0 {
        format!("{} ms", fmt_sig(us / 1000.0, 3))
    } else {
        format!("{} µs", fmt_sig(us, 3))
    }
}

/// A size in bytes, powers of 1000 as in the paper: "500 B", "10 KB", "3 MB".
pub fn fmt_bytes(b: f64) -> String {
    let (v, unit) = if b >= 1e9 {
        (b / 1e9, "GB")
    } else if b >= 1e6 {
        (b / 1e6, "MB")
    } else if b >= 1e3 {
        (b / 1e3, "KB")
    } else {
        (b, "B")
    };
    format!("{} {unit}", fmt_sig(v, 3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn significant_digits() {
        assert_eq!(fmt_sig(2.166, 3), "2.17");
        assert_eq!(fmt_sig(1674.33, 3), "1674");
        assert_eq!(fmt_sig(1.0, 3), "1");
        assert_eq!(fmt_sig(0.00123456, 3), "0.00123");
        assert_eq!(fmt_us(1674.33), "1.67 ms");
        assert_eq!(fmt_us(18.81), "18.8 µs");
        assert_eq!(fmt_bytes(1024.0), "1.02 KB");
        assert_eq!(fmt_bytes(3e6), "3 MB");
    }

    /// A title that fits keeps one line at the title size; a long one is wrapped at spaces,
    /// every word kept, each line within the chart's width.
    #[test]
    fn long_titles_wrap_inside_the_chart() {
        let bars = |title: &str| {
            let group = BarGroup {
                label: "m",
                values: vec![Some(1.0)],
                format: fmt_us,
            };
            grouped_bars(title, &["a"], &[group]).unwrap()
        };
        let texts = |svg: &str| -> Vec<String> {
            (svg.split("<text").skip(1))
                .map(|t| {
                    t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()]
                        .trim()
                        .to_string()
                })
                .collect()
        };
        let short = "Eunomia Fig. 15";
        assert!(texts(&bars(short)).contains(&short.to_string()));
        let long = "Buffer depth against the characteristic constant (NRL slides): time-based \
                    pause control, C = 0 to 100: peak depth against C, one line per round trip";
        let lines: Vec<String> = texts(&bars(long))
            .into_iter()
            .filter(|t| long.contains(t.as_str()) && t.contains(' '))
            .collect();
        assert!(lines.len() >= 2, "{lines:?}");
        assert_eq!(lines.join(" "), long);
        let mut svg = String::new();
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        for line in &lines {
            let style = TextStyle::from((FONT, LABEL_SIZE).into_font());
            let (w, _) = root.estimate_text_size(line, &style).unwrap();
            assert!(w < WIDTH, "{line}: {w}");
        }
    }

    #[test]
    fn tail_points_follow_nearest_rank() {
        let values: Vec<f64> = (1..=100).map(f64::from).collect();
        let pts = tail_points(&values, 90.0, 99.9);
        assert_eq!(pts.first(), Some(&(90.0, 90.0)));
        assert_eq!(pts.last().unwrap().0, 100.0);
        // Monotone in both coordinates, and every point is a value of the data.
        for w in pts.windows(2) {
            assert!(w[1].0 >= w[0].0 && w[1].1 >= w[0].1, "{w:?}");
        }
        assert!(pts.iter().all(|p| values.contains(&p.0)));
        // Collapsed: at most two points per distinct value, plus the jumps.
        assert!(pts.len() <= 2 * 12, "{}", pts.len());
        assert!(tail_points(&[], 90.0, 99.9).is_empty());
    }

    #[test]
    fn log_ticks_label_decades_and_their_halves_on_short_axes() {
        let (bold, light) = log_ticks(80.0, 12_000.0);
        assert_eq!(bold, [100.0, 1000.0, 10_000.0]);
        assert_eq!(light.first(), Some(&80.0));
        assert_eq!(light.len(), 2 + 9 + 9 + 1);
        let (bold, _) = log_ticks(15.0, 400.0);
        assert_eq!(bold, [20.0, 50.0, 100.0, 200.0]);
        let labels: Vec<String> = log_ticks(0.9, 12_000.0).0.into_iter().map(fmt_us).collect();
        assert_eq!(labels, ["1 µs", "10 µs", "100 µs", "1 ms", "10 ms"]);
    }

    #[test]
    fn a_tail_spanning_orders_of_magnitude_gets_a_log_axis() {
        let fast: Vec<f64> = (1..=100).map(|i| 10.0 + f64::from(i) / 10.0).collect();
        let slow: Vec<f64> = fast.iter().map(|v| v * 100.0).collect();
        let log = tail_cdf(
            "t",
            "FCT",
            &[("a", fast.clone()), ("b", slow)],
            (90.0, 99.9),
            fmt_us,
        )
        .unwrap();
        assert!(log.contains("FCT (log scale)"), "{log}");
        for tick in ["20 µs", "100 µs", "1 ms", "2 ms"] {
            assert!(log.contains(&format!("\n{tick}\n")), "{tick}");
        }
        let linear = tail_cdf("t", "FCT", &[("a", fast)], (90.0, 99.9), fmt_us).unwrap();
        assert!(linear.contains("\nFCT\n") && !linear.contains("log scale"));
    }

    #[test]
    fn a_metric_spanning_orders_of_magnitude_gets_a_log_axis() {
        let line = |ys: [f64; 3]| -> ErrorBarLine {
            let pts = [0.3, 0.6, 0.9].into_iter().zip(ys);
            ("a".into(), pts.map(|(x, y)| (x, y, Some(y))).collect())
        };
        let log = error_bar_lines("t", "load", "p99 FCT", &[line([20.0, 90.0, 4000.0])]).unwrap();
        assert!(log.contains("p99 FCT (log scale)"), "{log}");
        let linear = error_bar_lines("t", "load", "p99 FCT", &[line([20.0, 90.0, 150.0])]).unwrap();
        assert!(!linear.contains("log scale"));
    }

    #[test]
    fn a_heat_map_has_a_labelled_colour_bar() {
        let rows = [("leaf → spine".to_string(), vec![Some(0.2), None, Some(1.0)])];
        let svg = heat_map("h", "utilization", &rows, 0.0, 10.0).unwrap();
        for label in [
            "utilization",
            "0 %",
            "25 %",
            "50 %",
            "75 %",
            "100 %",
            "leaf → spine",
        ] {
            assert!(svg.contains(&format!("\n{label}\n</text>")), "{label}");
        }
        assert_eq!(shade(0.0), WHITE);
        assert_eq!(shade(1.0), color(0));
    }

    #[test]
    fn medians_per_log_bin() {
        let pts = [
            (1.0, 1.0),
            (2.0, 3.0),
            (3.0, 2.0),
            (1000.0, 5.0),
            (1500.0, 7.0),
        ];
        let bins = log_binned_medians(&pts, 1.0, 1);
        assert_eq!(bins.len(), 2);
        assert_eq!(bins[0].1, 2.0);
        assert_eq!(bins[1].1, 6.0);
        assert!((bins[0].0 - 10f64.sqrt()).abs() < 1e-9);
        assert_eq!(log_binned_medians(&pts, 1.0, 3).len(), 1);
    }

    #[test]
    fn charts_escape_text_and_close_their_svg() {
        let names = ["a<b", "R&D \"x\""];
        let groups = [BarGroup {
            label: "avg <FCT>",
            values: vec![Some(2.0), Some(3.0)],
            format: fmt_us,
        }];
        let svg = grouped_bars("t & t", &names, &groups).unwrap();
        assert!(svg.contains("a&lt;b") && svg.contains("R&amp;D &quot;x&quot;"));
        assert!(svg.contains("avg &lt;FCT&gt;") && !svg.contains("a<b"));
        assert_eq!(svg.matches("<svg").count(), 1);
        assert!(svg.trim_end().ends_with("</svg>"));
        let cdf = tail_cdf(
            "c",
            "x",
            &[("a", vec![1.0, 2.0]), ("b", vec![])],
            (90.0, 99.9),
            fmt_us,
        );
        assert!(cdf.unwrap().contains("<polyline"));
        let empty = log_lines("l", "x", "y", &[("a", vec![])], fmt_bytes).unwrap();
        assert!(empty.contains("no data"));
    }
}
