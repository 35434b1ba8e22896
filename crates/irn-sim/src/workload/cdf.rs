//! Empirical flow-size distributions read from CDF files.
//!
//! The public simulators that published datacenter workloads ship them as small text files of
//! `(size, cumulative probability)` points, in two dialects (see `data/cdf/README.md`):
//!
//! - **Format P** (HPCC / ConWeave `traffic_gen/`): cumulative *percent*, last value `100`.
//! - **Format F** (TLT / ConWeave `workloads/`): cumulative *fraction*, last value `1`.
//!
//! Both are accepted as they are, so the files can be used byte-for-byte as published; the format
//! is told apart by the last probability. Internally everything is percent.
//!
//! Sampling is inverse-CDF with linear interpolation between neighbouring points, as HPCC's
//! `getValueFromPercentile`, and [`Cdf::mean`] is the matching trapezoid mean (HPCC's `getAvg`),
//! so the Poisson generator's rate, computed from the mean, produces the load that was asked for.

use std::path::Path;

use rand::Rng;

use super::WorkloadError;

/// Which dialect a CDF file was written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CdfFormat {
    /// Cumulative percent, ending at 100 (HPCC `traffic_gen/`).
    Percent,
    /// Cumulative fraction, ending at 1 (TLT `workloads/`).
    Fraction,
}

/// A flow-size distribution given by points of its cumulative distribution function.
///
/// Invariants (established by [`Cdf::parse`]): at least two points; sizes and probabilities never
/// decrease; the first probability is 0 and the last is exactly 100 (percent).
#[derive(Clone, Debug, PartialEq)]
pub struct Cdf {
    /// `(size in bytes, cumulative percent)`.
    points: Vec<(f64, f64)>,
    format: CdfFormat,
}

/// The built-in default: a stand-in for the IRN paper's unpublished heavy-tailed distribution.
const IRN_DEFAULT: &str = include_str!("../../../../data/cdf/irn_default.txt");

/// The distributions compiled into irn besides the IRN default, so the papers' experiments run
/// from the binary alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuiltinCdf {
    /// `data/cdf/alistorage2019.txt`.
    Alistorage,
    /// `data/cdf/fbhadoop2015_conweave.txt`.
    FbHadoop,
    /// `data/cdf/websearch_hpcc.txt`: HPCC's web search.
    WebSearch,
    /// `data/cdf/fbhadoop_hpcc.txt`: HPCC's FB Hadoop, the 20-point file its paper ran.
    FbHadoopHpcc,
}

/// Largest flow: the RDMA message limit (2 GiB).
pub const MAX_FLOW_BYTES: u64 = 1 << 31;

impl Cdf {
    /// Parse a CDF file; auto-detects format P (percent, last value 100) and F (fraction, last
    /// value 1). Errors name the file, the 1-based line number and what is wrong.
    pub fn from_file(path: &Path) -> Result<Cdf, WorkloadError> {
        let file = path.display().to_string();
        let text = crate::input::read_text(path, crate::input::CDF).map_err(|error| {
            WorkloadError::Io {
                file: file.clone(),
                error,
            }
        })?;
        Cdf::parse(&text, &file)
    }

    /// Parse CDF text; `name` is the file name used in error messages.
    ///
    /// One point per line, `<size_bytes> <cumulative probability>`, separated by any whitespace.
    /// Blank lines, trailing spaces, CRLF line ends, a missing final newline and whole-line `#`
    /// comments are accepted, because the published files have all of these (except comments).
    /// Sizes may repeat (a step in the CDF) and the first point may have a nonzero size or
    /// probability; a nonzero first probability is treated as that much mass at the first size.
    pub fn parse(text: &str, name: &str) -> Result<Cdf, WorkloadError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        // (size, probability as written, line number)
        let mut raw: Vec<(f64, f64, u64)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let lineno = i as u64 + 1;
            let content = line.trim();
            if content.is_empty() || content.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = content.split_whitespace().collect();
            if fields.len() != 2 {
                return Err(WorkloadError::at(
                    name,
                    lineno,
                    format!(
                        "expected 2 columns (size in bytes, cumulative probability), found {}",
                        fields.len()
                    ),
                ));
            }
            let size = number(fields[0], "size", name, lineno)?;
            let prob = number(fields[1], "cumulative probability", name, lineno)?;
            if let Some(&(prev_size, prev_prob, prev_line)) = raw.last() {
                if size < prev_size {
                    return Err(WorkloadError::at(
                        name,
                        lineno,
                        format!(
                            "size {size} is smaller than {prev_size} on line {prev_line}: \
                             sizes must not decrease"
                        ),
                    ));
                }
                if prob < prev_prob {
                    return Err(WorkloadError::at(
                        name,
                        lineno,
                        format!(
                            "cumulative probability {prob} is smaller than {prev_prob} on line \
                             {prev_line}: probabilities must not decrease"
                        ),
                    ));
                }
            }
            raw.push((size, prob, lineno));
        }

        let Some(&(_, last_prob, last_line)) = raw.last() else {
            return Err(WorkloadError::File {
                file: name.to_string(),
                problem: "empty file: a CDF needs at least one `<size> <probability>` line"
                    .to_string(),
            });
        };
        let (format, scale) = if last_prob == 100.0 {
            (CdfFormat::Percent, 1.0)
        } else if last_prob == 1.0 {
            (CdfFormat::Fraction, 100.0)
        } else {
            return Err(WorkloadError::at(
                name,
                last_line,
                format!(
                    "last cumulative probability is {last_prob}; it must be 100 (percent CDF) \
                     or 1 (fraction CDF)"
                ),
            ));
        };

        let mut points: Vec<(f64, f64)> = Vec::with_capacity(raw.len() + 1);
        if raw[0].1 > 0.0 {
            // Mass below the first point sits at the first size: P(X <= x0) = p0, nothing smaller.
            points.push((raw[0].0, 0.0));
        }
        points.extend(raw.iter().map(|&(size, prob, _)| (size, prob * scale)));
        // Exactly 100, whatever the scaling did to the last bit.
        if let Some(last) = points.last_mut() {
            last.1 = 100.0;
        }
        Ok(Cdf { points, format })
    }

    /// The built-in IRN default (the contents of `data/cdf/irn_default.txt`, compiled in so that
    /// a scenario needs no data files to run the paper's default workload).
    pub fn irn_default() -> Cdf {
        Cdf::parse(IRN_DEFAULT, "irn_default.txt").expect("the built-in irn_default CDF is valid")
    }

    /// A built-in distribution (the file it was compiled from, byte for byte).
    pub fn builtin(which: BuiltinCdf) -> Cdf {
        let (text, name) = match which {
            BuiltinCdf::Alistorage => (
                include_str!("../../../../data/cdf/alistorage2019.txt"),
                "alistorage2019.txt",
            ),
            BuiltinCdf::FbHadoop => (
                include_str!("../../../../data/cdf/fbhadoop2015_conweave.txt"),
                "fbhadoop2015_conweave.txt",
            ),
            BuiltinCdf::WebSearch => (
                include_str!("../../../../data/cdf/websearch_hpcc.txt"),
                "websearch_hpcc.txt",
            ),
            BuiltinCdf::FbHadoopHpcc => (
                include_str!("../../../../data/cdf/fbhadoop_hpcc.txt"),
                "fbhadoop_hpcc.txt",
            ),
        };
        Cdf::parse(text, name).expect("a built-in CDF is valid")
    }

    /// The dialect the file was written in.
    pub fn format(&self) -> CdfFormat {
        self.format
    }

    /// The points as `(size in bytes, cumulative percent)`, starting at percent 0, ending at 100.
    /// Why no workload can be drawn from this CDF, said of the CDF itself (a workload of no
    /// flows would otherwise be blamed on its duration): every size 0 B, or a size above
    /// [`MAX_FLOW_BYTES`]. `None` when it is usable.
    pub fn unusable(&self) -> Option<String> {
        let largest = self
            .points
            .iter()
            .map(|&(size, _)| size)
            .fold(0.0, f64::max);
        if self.mean() <= 0.0 {
            Some("every size in it is 0 B: a flow carries at least one byte".to_string())
        } else if largest > MAX_FLOW_BYTES as f64 {
            Some(format!(
                "its largest size, {largest} B, is above the flow-size limit ({MAX_FLOW_BYTES} B, \
                 the RDMA message limit)"
            ))
        } else {
            None
        }
    }

    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// The size at cumulative `percent` (clamped to `[0, 100]`), interpolating linearly between
    /// the two points around it. Not rounded.
    pub fn quantile(&self, percent: f64) -> f64 {
        let r = percent.clamp(0.0, 100.0);
        let n = self.points.len();
        // First point strictly above r; the segment that contains r ends there.
        let i = self
            .points
            .partition_point(|&(_, p)| p <= r)
            .clamp(1, n - 1);
        let (x0, y0) = self.points[i - 1];
        let (x1, y1) = self.points[i];
        if y1 <= y0 {
            return x1;
        }
        x0 + (x1 - x0) * (r - y0) / (y1 - y0)
    }

    /// Draw a flow size: inverse-CDF with linear interpolation between points (as HPCC's
    /// `getValueFromPercentile`), rounded to a whole byte, at least 1. Uses one `f64` draw.
    pub fn sample<R: Rng>(&self, rng: &mut R) -> u64 {
        let r: f64 = rng.random::<f64>() * 100.0;
        // `as` saturates, and sizes in the files are far below 2^53 anyway.
        (self.quantile(r).round() as u64).max(1)
    }

    /// The mean flow size in bytes: the trapezoid rule over the points (HPCC's `getAvg`), which
    /// is the exact mean of the interpolated distribution that [`Cdf::sample`] draws from.
    pub fn mean(&self) -> f64 {
        self.points
            .windows(2)
            .map(|w| (w[0].0 + w[1].0) / 2.0 * (w[1].1 - w[0].1))
            .sum::<f64>()
            / 100.0
    }
}

/// Parse one numeric field, rejecting non-numbers, infinities, NaN and negative values.
fn number(field: &str, what: &str, file: &str, line: u64) -> Result<f64, WorkloadError> {
    match field.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        Ok(v) if v.is_finite() => Err(WorkloadError::at(
            file,
            line,
            format!("{what} {v} is negative"),
        )),
        _ => Err(WorkloadError::at(
            file,
            line,
            format!("{what} `{field}` is not a number"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Purpose};
    use std::path::PathBuf;

    fn data(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../data/cdf")
            .join(name)
    }

    #[test]
    fn real_files_of_both_formats_parse_with_the_published_means() {
        // Means from data/cdf/README.md (trapezoid rule, as HPCC's getAvg).
        let cases: &[(&str, CdfFormat, f64)] = &[
            ("irn_default.txt", CdfFormat::Percent, 200_722.24),
            ("websearch_hpcc.txt", CdfFormat::Percent, 1_711_250.0),
            ("fbhadoop2015_conweave.txt", CdfFormat::Percent, 121_849.0),
            ("fbhadoop_hpcc.txt", CdfFormat::Percent, 120_420.75),
            ("solar2022_conweave.txt", CdfFormat::Percent, 39_424.0),
            ("dctcp_websearch_tlt.txt", CdfFormat::Fraction, 1_711_250.0),
            ("websearch_tlt.txt", CdfFormat::Fraction, 1_710_004.0),
            ("datamining_tlt.txt", CdfFormat::Fraction, 7_487_884.0),
        ];
        for &(file, format, mean) in cases {
            let cdf = Cdf::from_file(&data(file)).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(cdf.format(), format, "{file}");
            assert!(
                (cdf.mean() - mean).abs() < 1.0,
                "{file}: mean {} != {mean}",
                cdf.mean()
            );
            let pts = cdf.points();
            assert_eq!(pts[0].1, 0.0, "{file}");
            assert_eq!(pts[pts.len() - 1].1, 100.0, "{file}");
        }
    }

    #[test]
    fn built_in_distributions_are_their_files() {
        let cases = [
            (BuiltinCdf::Alistorage, "alistorage2019.txt"),
            (BuiltinCdf::FbHadoop, "fbhadoop2015_conweave.txt"),
            (BuiltinCdf::WebSearch, "websearch_hpcc.txt"),
            (BuiltinCdf::FbHadoopHpcc, "fbhadoop_hpcc.txt"),
        ];
        for (which, file) in cases {
            let file_cdf = Cdf::from_file(&data(file)).unwrap();
            assert_eq!(Cdf::builtin(which).points(), file_cdf.points(), "{file}");
        }
    }

    #[test]
    fn percent_and_fraction_versions_of_one_curve_agree() {
        let p = Cdf::from_file(&data("websearch_hpcc.txt")).unwrap();
        let f = Cdf::from_file(&data("dctcp_websearch_tlt.txt")).unwrap();
        for r in [0.0, 7.5, 15.0, 33.3, 59.9, 90.0, 99.0, 100.0] {
            let (a, b) = (p.quantile(r), f.quantile(r));
            assert!((a - b).abs() <= 1e-6 * a.max(1.0), "{r}: {a} vs {b}");
        }
    }

    #[test]
    fn built_in_default_is_the_data_file() {
        assert_eq!(
            Cdf::irn_default(),
            Cdf::from_file(&data("irn_default.txt")).unwrap()
        );
    }

    #[test]
    fn interpolates_linearly_and_keeps_steps() {
        let cdf = Cdf::parse("0 0\n100 50\n300 100\n", "t").unwrap();
        assert_eq!(cdf.quantile(25.0), 50.0);
        assert_eq!(cdf.quantile(50.0), 100.0);
        assert_eq!(cdf.quantile(75.0), 200.0);
        assert_eq!(cdf.quantile(100.0), 300.0);
        assert_eq!(cdf.mean(), (50.0 * 50.0 + 200.0 * 50.0) / 100.0);

        // Format F with a step: 9000 B with probability 0.15, then a ramp.
        let step = Cdf::parse("9000 0\n9000 0.15\n18000 1\n", "t").unwrap();
        assert_eq!(step.quantile(0.0), 9000.0);
        assert_eq!(step.quantile(10.0), 9000.0);
        assert_eq!(step.quantile(15.0), 9000.0);
        assert!((step.quantile(57.5) - 13_500.0).abs() < 1e-9);
    }

    #[test]
    fn nonzero_first_probability_is_mass_at_the_first_size() {
        let cdf = Cdf::parse("53 0.074\n100 100\n", "t").unwrap();
        assert_eq!(cdf.points()[0], (53.0, 0.0));
        assert_eq!(cdf.quantile(0.0), 53.0);
        assert_eq!(cdf.quantile(0.05), 53.0);
    }

    #[test]
    fn tolerates_odd_whitespace_crlf_blank_lines_and_no_final_newline() {
        let text = "\u{feff}# sizes\r\n0\t 0 \r\n\r\n   \n  10   50  \r\n20 100";
        let cdf = Cdf::parse(text, "t").unwrap();
        assert_eq!(cdf.points(), &[(0.0, 0.0), (10.0, 50.0), (20.0, 100.0)]);
    }

    #[test]
    fn malformed_inputs_name_the_line() {
        let cases: &[(&str, u64, &str)] = &[
            ("0 0\n10 abc\n20 100\n", 2, "`abc` is not a number"),
            ("0 0\nten 50\n20 100\n", 2, "size `ten` is not a number"),
            ("0 0\n10 inf\n20 100\n", 2, "not a number"),
            ("0 0\n10 50 7\n20 100\n", 2, "expected 2 columns"),
            ("0 0\n\n10\n20 100\n", 3, "found 1"),
            ("0 0\n20 50\n10 100\n", 3, "sizes must not decrease"),
            (
                "0 0\n10 60\n20 50\n30 100\n",
                3,
                "probabilities must not decrease",
            ),
            ("0 0\n10 50\n20 99\n", 3, "must be 100 (percent CDF) or 1"),
            (
                "0 0\n10 0.5\n20 0.9\n\n",
                3,
                "last cumulative probability is 0.9",
            ),
            ("0 0\n-10 50\n20 100\n", 2, "size -10 is negative"),
            ("0 -1\n10 50\n20 100\n", 1, "negative"),
        ];
        for &(text, line, what) in cases {
            let err = Cdf::parse(text, "bad.txt").unwrap_err();
            assert_eq!(err.line(), Some(line), "{text:?}: {err}");
            let msg = err.to_string();
            assert!(
                msg.starts_with(&format!("bad.txt:{line}: ")) && msg.contains(what),
                "{text:?}: {msg}"
            );
        }
        for text in ["", "\n\n  \r\n", "# only a comment\n"] {
            let err = Cdf::parse(text, "empty.txt").unwrap_err();
            assert!(
                matches!(err, WorkloadError::File { .. }) && err.to_string().contains("empty"),
                "{text:?}: {err}"
            );
        }
    }

    #[test]
    fn missing_file_names_the_file() {
        let err = Cdf::from_file(Path::new("/nonexistent/irn/cdf.txt")).unwrap_err();
        assert!(
            err.to_string().contains("/nonexistent/irn/cdf.txt"),
            "{err}"
        );
    }

    #[test]
    fn samples_are_whole_bytes_within_range_and_at_least_one() {
        let cdf = Cdf::parse("0 0\n3 100\n", "t").unwrap();
        let mut rng = stream(7, Purpose::Sizes, 0);
        for _ in 0..1000 {
            let s = cdf.sample(&mut rng);
            assert!((1..=3).contains(&s), "{s}");
        }
    }

    /// MODEL §4: the IRN default has ~50 % single-packet flows (<= 1 KB payload), ~15 % of flows
    /// in 200 KB–3 MB, and a mean of about 200 KB; and sampling must agree with `mean()`, which
    /// the Poisson generator uses to set the load.
    #[test]
    fn irn_default_matches_the_paper_facts() {
        let cdf = Cdf::irn_default();
        let mut rng = stream(2018, Purpose::Sizes, 0);
        let n = 200_000;
        let (mut small, mut large, mut sum) = (0u64, 0u64, 0u128);
        for _ in 0..n {
            let s = cdf.sample(&mut rng);
            small += u64::from(s <= 1024);
            large += u64::from((204_800..=3_145_728).contains(&s));
            sum += u128::from(s);
        }
        let small = small as f64 / n as f64;
        let large = large as f64 / n as f64;
        let sample_mean = sum as f64 / n as f64;
        println!(
            "irn_default: {:.4} of flows <= 1 KB, {:.4} in 200 KB-3 MB, sample mean {:.0} B, \
             mean() {:.0} B",
            small,
            large,
            sample_mean,
            cdf.mean()
        );
        assert!((small - 0.50).abs() < 0.01, "{small}");
        assert!((large - 0.15).abs() < 0.01, "{large}");
        assert!(
            (190_000.0..=210_000.0).contains(&cdf.mean()),
            "{}",
            cdf.mean()
        );
        assert!(
            (sample_mean / cdf.mean() - 1.0).abs() < 0.02,
            "{sample_mean} vs {}",
            cdf.mean()
        );
    }
}
