//! Trace replay: flows read from a CSV file, so the same traffic can be replayed exactly
//! (MODEL §4), for example traffic captured elsewhere or a generated workload saved with
//! [`write_trace_csv`].
//!
//! Format: a header naming the columns `src,dst,size_bytes,start_ns` (in any order; other
//! columns are ignored), then one flow per line. `src` and `dst` are host indices (positions among
//! the hosts, `0..hosts`); `start_ns` is nanoseconds since the start of the run, a whole number or
//! with up to three decimals, so that picosecond start times written by [`write_trace_csv`] read
//! back exactly. Blank lines, spaces around fields, CRLF line ends and `#` comment lines are
//! accepted.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use irn_core::time::Time;

use super::{FlowClass, FlowSpec, WorkloadError};
use crate::ids::HostIdx;

/// The columns a trace must have, in the order [`write_trace_csv`] writes them.
const COLUMNS: [&str; 4] = ["src", "dst", "size_bytes", "start_ns"];

/// Trace replay from CSV with header `src,dst,size_bytes,start_ns` (host indices).
///
/// Errors name the file and the line: a value that is not a number, `src == dst`, a host index
/// `>= hosts`, a size of 0, a missing column. The result is sorted by start time; flows that
/// start together keep their order in the file.
pub fn trace_csv(path: &Path, hosts: u32) -> Result<Vec<FlowSpec>, WorkloadError> {
    let (text, file) = read_flows(path)?;
    trace_text(&text, &file, hosts)
}

/// A flows file's text and its name for errors, as the trace and DAG readers take them.
pub(super) fn read_flows(path: &Path) -> Result<(String, String), WorkloadError> {
    let file = path.display().to_string();
    match crate::input::read_text(path, crate::input::FLOWS) {
        Ok(text) => Ok((text, file)),
        Err(error) => Err(WorkloadError::Io { file, error }),
    }
}

/// [`trace_csv`] of text already read (a scenario's inline `workload.csv`); `file` names it in
/// errors.
pub fn trace_text(text: &str, file: &str, hosts: u32) -> Result<Vec<FlowSpec>, WorkloadError> {
    let file = file.to_string();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);

    // Blank and comment lines are dropped here rather than by the CSV reader, which would skip
    // them without counting them; `line_of[k]` is the file line of the k-th row kept.
    let mut kept = String::with_capacity(text.len());
    let mut line_of: Vec<u64> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let content = line.trim();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        kept.push_str(content);
        kept.push('\n');
        line_of.push(i as u64 + 1);
    }
    let mut rows = csv::ReaderBuilder::new()
        .has_headers(false)
        .trim(csv::Trim::All)
        .flexible(true)
        .from_reader(kept.as_bytes())
        .into_records()
        .enumerate()
        .map(|(k, row)| {
            let line = line_of.get(k).copied().unwrap_or(0);
            row.map(|r| (line, r))
                .map_err(|e| WorkloadError::at(&file, line, e.to_string()))
        });

    let (header_line, header) = rows.next().transpose()?.unwrap_or_default();
    let header_line = header_line.max(1);
    let mut cols = [0usize; 4];
    for (slot, name) in cols.iter_mut().zip(COLUMNS) {
        *slot = header.iter().position(|h| h == name).ok_or_else(|| {
            WorkloadError::at(
                &file,
                header_line,
                format!(
                    "the header has no `{name}` column; a trace starts with the header `{}`",
                    COLUMNS.join(",")
                ),
            )
        })?;
    }

    let mut flows = Vec::new();
    for row in rows {
        let (line, record) = row?;
        if record.iter().all(str::is_empty) {
            continue;
        }
        if record.len() > header.len() {
            return Err(WorkloadError::at(
                &file,
                line,
                format!(
                    "{} fields, but the header names only {} columns",
                    record.len(),
                    header.len()
                ),
            ));
        }
        let field = |k: usize| -> Result<&str, WorkloadError> {
            match record.get(cols[k]) {
                Some(v) if !v.is_empty() => Ok(v),
                _ => Err(WorkloadError::at(
                    &file,
                    line,
                    format!("missing column `{}`", COLUMNS[k]),
                )),
            }
        };
        let host = |k: usize| -> Result<HostIdx, WorkloadError> {
            let text = field(k)?;
            let h: u32 = text.parse().map_err(|_| {
                WorkloadError::at(
                    &file,
                    line,
                    format!(
                        "{} `{text}` is not a host index (a whole number)",
                        COLUMNS[k]
                    ),
                )
            })?;
            if h >= hosts {
                return Err(WorkloadError::at(
                    &file,
                    line,
                    format!(
                        "{} {h} is not a host: there are {hosts} hosts, numbered 0 to {}",
                        COLUMNS[k],
                        hosts.saturating_sub(1)
                    ),
                ));
            }
            Ok(HostIdx(h))
        };
        let src = host(0)?;
        let dst = host(1)?;
        if src == dst {
            return Err(WorkloadError::at(
                &file,
                line,
                format!("src and dst are both host {src}: a flow needs two different hosts"),
            ));
        }
        let size_text = field(2)?;
        let size_bytes =
            super::flow_size(size_text).map_err(|why| WorkloadError::at(&file, line, why))?;
        let start_text = field(3)?;
        let start_ps = ns_to_ps(start_text).ok_or_else(|| {
            WorkloadError::at(
                &file,
                line,
                format!(
                    "start_ns `{start_text}` is not a time in nanoseconds (a whole number, or \
                     with at most 3 decimals)"
                ),
            )
        })?;
        flows.push(FlowSpec {
            src,
            dst,
            size_bytes,
            start: Time::from_ps(start_ps),
            class: FlowClass::Regular,
            verb: None,
        });
    }
    flows.sort_by_key(|f| f.start);
    Ok(flows)
}

/// Write flows as a trace that [`trace_csv`] reads back to the same flows (start times keep
/// their picoseconds), so a generated workload can be saved, inspected and replayed.
pub fn write_trace_csv(path: &Path, flows: &[FlowSpec]) -> Result<(), WorkloadError> {
    let io_error = |error| WorkloadError::Io {
        file: path.display().to_string(),
        error,
    };
    let mut out = BufWriter::new(File::create(path).map_err(io_error)?);
    writeln!(out, "{}", COLUMNS.join(",")).map_err(io_error)?;
    for f in flows {
        let ps = f.start.as_ps();
        let (ns, frac) = (ps / 1000, ps % 1000);
        if frac == 0 {
            writeln!(out, "{},{},{},{ns}", f.src, f.dst, f.size_bytes)
        } else {
            writeln!(out, "{},{},{},{ns}.{frac:03}", f.src, f.dst, f.size_bytes)
        }
        .map_err(io_error)?;
    }
    out.flush().map_err(io_error)
}

/// Nanoseconds with up to three decimals to exact picoseconds, without going through a float.
pub(crate) fn ns_to_ps(text: &str) -> Option<u64> {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits(int) || !digits(frac) || frac.len() > 3 {
        return None;
    }
    let whole: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let frac_ps = frac
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(3)
        .fold(0u64, |acc, b| acc * 10 + u64::from(b - b'0'));
    whole.checked_mul(1000)?.checked_add(frac_ps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{poisson, SizeDist};
    use irn_core::time::{Bandwidth, Duration};
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A temporary file with a name unique to this process and call, removed when dropped.
    struct TempFile(PathBuf);

    impl TempFile {
        fn with(contents: &str) -> TempFile {
            static NEXT: AtomicU32 = AtomicU32::new(0);
            let path = std::env::temp_dir().join(format!(
                "irn-trace-test-{}-{}.csv",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::write(&path, contents).unwrap();
            TempFile(path)
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn flow(src: u32, dst: u32, size_bytes: u64, start_ps: u64) -> FlowSpec {
        FlowSpec {
            src: HostIdx(src),
            dst: HostIdx(dst),
            size_bytes,
            start: Time::from_ps(start_ps),
            class: FlowClass::Regular,
            verb: None,
        }
    }

    #[test]
    fn reads_a_small_trace_sorted_by_start() {
        let tmp = TempFile::with(
            "src,dst,size_bytes,start_ns\r\n\
             2, 0, 1000, 500\r\n\
             \r\n\
             # a comment\r\n\
             0,1,1,0\r\n\
             1,2,2048,500\r\n\
             3,1,7,0.25\r\n",
        );
        let flows = trace_csv(&tmp.0, 4).unwrap();
        assert_eq!(
            flows,
            vec![
                flow(0, 1, 1, 0),
                flow(3, 1, 7, 250),
                flow(2, 0, 1000, 500_000),
                flow(1, 2, 2048, 500_000),
            ]
        );
    }

    #[test]
    fn columns_may_come_in_any_order() {
        let tmp = TempFile::with("start_ns,size_bytes,dst,src,comment\n10,5,1,0,hello\n");
        assert_eq!(trace_csv(&tmp.0, 2).unwrap(), vec![flow(0, 1, 5, 10_000)]);
    }

    #[test]
    fn written_workload_round_trips() {
        let flows = poisson(
            6,
            Bandwidth::from_gbps(40),
            0.7,
            &SizeDist::Uniform { lo: 1, hi: 100_000 },
            Duration::from_us(200),
            5,
        );
        assert!(!flows.is_empty());
        let tmp = TempFile::with("");
        write_trace_csv(&tmp.0, &flows).unwrap();
        let mut back = trace_csv(&tmp.0, 6).unwrap();
        // The trace is sorted by start only; the generator also orders ties by src.
        back.sort_by_key(|f| (f.start, f.src));
        assert_eq!(back, flows);
    }

    #[test]
    fn bad_lines_are_reported_with_their_line_number() {
        const H: &str = "src,dst,size_bytes,start_ns\n";
        let cases: &[(&str, u64, &str)] = &[
            ("0,1,100,0\nx,1,100,5\n", 3, "src `x` is not a host index"),
            ("0,-1,100,0\n", 2, "dst `-1` is not a host index"),
            ("0,1,1e3,0\n", 2, "size_bytes `1e3` is not a whole number"),
            ("0,1,100,soon\n", 2, "start_ns `soon` is not a time"),
            ("0,1,100,1.2345\n", 2, "start_ns `1.2345`"),
            ("0,1,100,0\n\n2,2,100,0\n", 4, "src and dst are both host 2"),
            ("0,4,100,0\n", 2, "dst 4 is not a host: there are 4 hosts"),
            ("9,1,100,0\n", 2, "src 9 is not a host"),
            ("0,1,0,0\n", 2, "size_bytes is 0"),
            (
                "0,1,3000000000,0\n",
                2,
                "size_bytes 3000000000 is above the flow-size limit",
            ),
            ("0,1,100\n", 2, "missing column `start_ns`"),
            ("0,1,,5\n", 2, "missing column `size_bytes`"),
            ("0,1,100,0,7\n", 2, "5 fields"),
        ];
        for &(body, line, what) in cases {
            let tmp = TempFile::with(&format!("{H}{body}"));
            let err = trace_csv(&tmp.0, 4).unwrap_err();
            let msg = err.to_string();
            assert_eq!(err.line(), Some(line), "{body:?}: {msg}");
            assert!(
                msg.starts_with(&format!("{}:{line}: ", tmp.0.display())) && msg.contains(what),
                "{body:?}: {msg}"
            );
        }
    }

    #[test]
    fn bad_header_and_missing_file_are_reported() {
        let tmp = TempFile::with("src,dst,size\n0,1,5\n");
        let err = trace_csv(&tmp.0, 4).unwrap_err();
        assert_eq!(err.line(), Some(1), "{err}");
        assert!(err.to_string().contains("no `size_bytes` column"), "{err}");

        let empty = TempFile::with("");
        let err = trace_csv(&empty.0, 4).unwrap_err();
        assert!(err.to_string().contains("no `src` column"), "{err}");

        let err = trace_csv(Path::new("/nonexistent/irn/trace.csv"), 4).unwrap_err();
        assert!(matches!(err, WorkloadError::Io { .. }), "{err}");
        assert!(
            err.to_string().contains("/nonexistent/irn/trace.csv"),
            "{err}"
        );
    }

    #[test]
    fn start_times_convert_exactly() {
        assert_eq!(ns_to_ps("0"), Some(0));
        assert_eq!(ns_to_ps("1500"), Some(1_500_000));
        assert_eq!(ns_to_ps("1.5"), Some(1_500));
        assert_eq!(ns_to_ps("2.025"), Some(2_025));
        assert_eq!(ns_to_ps(".5"), Some(500));
        assert_eq!(ns_to_ps("7."), Some(7_000));
        for bad in ["", ".", "-1", "1.2345", "1e3", "+5", "18446744073709552"] {
            assert_eq!(ns_to_ps(bad), None, "{bad}");
        }
    }
}
