//! The results folder: written next to its final place and renamed into it at the end, so a
//! failed or interrupted run never leaves a half-written folder behind; and the rules that keep
//! irn from deleting or overwriting anything it did not write.
//!
//! Layout (one folder per run; `[[compare]]` scenarios get one subfolder per variant):
//! - `.irn-results` ([`MARKER`]): which irn command wrote the folder, its version, and what
//!   irn wrote in it;
//! - `summary.json`: the metrics, the run's wall-clock performance, the resolved scenario;
//! - `flows.csv`: one row per flow;
//! - `fct.txt`: the finished flows in the ns-3 RDMA simulators' FCT format;
//! - `comparison.csv` (comparisons only): one row per variant with the headline metrics;
//! - `trace.csv` (`irn run --trace-flow` only): every event of the traced flows, written while
//!   the run goes (`irn_sim::sim::trace`);
//! - `series/*.csv` (a scenario with `[monitor]`, in every command that runs): time series,
//!   written while the run goes (`series.rs`).
//!
//! Safety: every command that writes asks [`guard_folder`] or [`guard_file`] first, and writes
//! nothing when refused. A folder is replaced only when it holds the marker, is empty or does
//! not exist; never when it is the working folder or holds it, or holds a file the command
//! reads ([`scenario_inputs`]). Replacing keeps what irn did not write ([`keep`]: the marker
//! lists what irn wrote), and one command at a time writes a folder ([`lock()`]). A `--out` that
//! is a symbolic link is written through ([`resolve_link`]). Temporaries are named
//! `.NAME.tmp-PID` beside their destination; the ones this process has open are listed, so that
//! a signal handler ([`clean_up_on_signal`]) removes them, and a later command removes those of
//! a process that is gone, or finishes or undoes a replacement it was making
//! ([`remove_stale_temporaries`]).

mod keep;
mod lock;
mod names;

pub use lock::lock;
pub use names::{distinct, sub_folder, top_folder, NAME_MAX};

use std::collections::BTreeMap;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{LockResult, Mutex, MutexGuard, PoisonError, TryLockError};

use anyhow::{bail, Context, Result};
// Markers and sidecars record XXH3 checksums; one in bare hex, of an irn before them, is FNV-1a.
use irn_sim::input::{checksum, XXH3};
use irn_sim::metrics::Summary;
use irn_sim::scenario::{InputFile, ScenarioFile};
use irn_sim::RunResult;
use serde::{Deserialize, Serialize};

/// How long a run took on the wall clock. Kept apart from the metrics: it is the only part of
/// the results that differs between two runs of the same scenario and seed.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Performance {
    pub wall_time_s: f64,
    pub events_per_s: f64,
    /// Packets' link crossings per second ([`RunResult::packet_hops`]).
    pub packet_hops_per_s: f64,
    pub sim_ms_per_wall_s: f64,
}

impl Performance {
    pub fn new(result: &RunResult, wall: std::time::Duration) -> Self {
        let secs = wall.as_secs_f64().max(1e-9);
        let summary = &result.summary;
        Performance {
            wall_time_s: secs,
            events_per_s: summary.events as f64 / secs,
            packet_hops_per_s: result.packet_hops as f64 / secs,
            sim_ms_per_wall_s: summary.sim_time_us / 1000.0 / secs,
        }
    }
}

#[derive(Serialize)]
struct SummaryFile<'a> {
    irn_version: &'static str,
    irn_model: &'static str,
    scenario: &'a str,
    variant: &'a str,
    seed: u64,
    metrics: &'a Summary,
    performance: Performance,
    /// The data files the run read, with their checksums (absent when it read none).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    inputs: &'a [InputFile],
    resolved_scenario: &'a ScenarioFile,
}

/// One finished run, ready to write.
pub struct Finished<'a> {
    pub name: &'a str,
    pub resolved: &'a ScenarioFile,
    /// The data files it read ([`irn_sim::scenario::Run::inputs`]).
    pub inputs: &'a [InputFile],
    pub result: RunResult,
    pub performance: Performance,
}

/// The file that marks a folder as irn's own: a later command may replace (or write into) a
/// folder only when it holds this file, so irn never deletes what it did not write.
pub const MARKER: &str = ".irn-results";

/// The irn command that wrote a folder, as its marker records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Writer {
    Run,
    Sweep,
    Reproduce,
    Check,
    Report,
    Plot,
}

impl Writer {
    /// The command, as messages name it.
    pub fn command(self) -> &'static str {
        match self {
            Writer::Run => "`irn run`",
            Writer::Sweep => "`irn sweep`",
            Writer::Reproduce => "`irn reproduce`",
            Writer::Check => "`irn check`",
            Writer::Report => "`irn report`",
            Writer::Plot => "`irn plot`",
        }
    }
}

/// The contents of [`MARKER`]: JSON, so a person can read who wrote the folder.
#[derive(Debug, Serialize, Deserialize)]
pub struct Marker {
    pub written_by: Writer,
    pub irn_version: String,
    /// A sweep's root folder only: what makes two shards parts of one sweep (see `sweep.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<serde_json::Value>,
    /// What irn wrote in the folder, `/`-separated paths at any depth: replacing the folder
    /// keeps everything else ([`keep`]). `None` in a marker of an irn older than the list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<String>>,
    /// A checksum of each report and table irn wrote in the folder (`report.md`,
    /// `sweep.csv`, …), by name: one changed since (your notes in a report) is never replaced.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub checksums: BTreeMap<String, String>,
}

impl Marker {
    pub fn new(written_by: Writer) -> Self {
        Marker {
            written_by,
            irn_version: env!("CARGO_PKG_VERSION").to_string(),
            sweep: None,
            files: Some(Vec::new()),
            checksums: BTreeMap::new(),
        }
    }

    /// The marker of `dir`; `None` when it has none (or one irn cannot read).
    pub fn read(dir: &Path) -> Option<Marker> {
        let text = irn_sim::input::read_text(&dir.join(MARKER), irn_sim::input::RESULT).ok()?;
        serde_json::from_str(&text).ok()
    }

    pub fn write(&self, dir: &Path) -> Result<()> {
        let json = serde_json::to_string_pretty(self)? + "\n";
        write_file_atomic(&dir.join(MARKER), json.as_bytes())
    }
}

/// Records `irn plot`'s `report` and `plots` (the charts it wrote in `plots/` beside it) as
/// irn's, in the markers of the report's folder and of `plots/`.
pub fn record_report(report: &Path, plots: &[PathBuf]) -> Result<()> {
    let dir = parent_of(report);
    let names: Vec<String> = (plots.iter())
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    if let Some(plots_dir) = plots.first().map(|p| parent_of(p)) {
        // Charts are drawn again whatever was done to them: no checksums.
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        list(plots_dir, &names, false)?;
    }
    let report_name = report.file_name().unwrap_or_default().to_string_lossy();
    record(dir, &[&report_name, "plots"])
}

/// Refuses, before anything is written, to overwrite an entry of the irn folder `dir` named
/// in `names` that its marker does not list: irn writes `sweep.csv`, `report.html`, a chart…
/// into such a folder only in place of its own. (A marker without a list, from an irn older
/// than it, cannot tell: such a folder's entries count as irn's.)
pub fn guard_own_entries(dir: &Path, names: &[&str]) -> Result<()> {
    // A folder where irn writes a file (a name with an extension) cannot be replaced by it,
    // whoever made it: refused now rather than after every run.
    let folders: Vec<PathBuf> = (names.iter())
        .filter(|n| n.contains('.') && dir.join(n).is_dir())
        .map(|n| dir.join(n))
        .collect();
    if !folders.is_empty() {
        bail!(
            "{}: a folder where irn writes a file; move or rename it, or choose another --out",
            join_paths(&folders)
        );
    }
    let marker = Marker::read(dir);
    if let Some(marker) = &marker {
        refuse_changed(dir, marker, |name| names.contains(&name))?;
    }
    let Some(listed) = marker.and_then(|m| m.files) else {
        return Ok(());
    };
    let theirs: Vec<PathBuf> = (names.iter())
        .filter(|n| fs::symlink_metadata(dir.join(n)).is_ok() && !listed.iter().any(|l| l == *n))
        .map(|n| dir.join(n))
        .collect();
    if !theirs.is_empty() {
        bail!(
            "{}: irn did not write it, and would overwrite it; move it, or choose another --out",
            join_paths(&theirs)
        );
    }
    Ok(())
}

/// Refuses to replace one of `names` in `dir` that irn wrote (its marker has its checksum) and
/// that was changed since.
pub fn guard_unchanged(dir: &Path, names: &[&str]) -> Result<()> {
    match Marker::read(dir) {
        Some(marker) => refuse_changed(dir, &marker, |name| names.contains(&name)),
        None => Ok(()),
    }
}

/// Refuses, before a run starts, to rerun into the run folder `dir` when a file irn wrote there
/// was changed since: the rerun would replace it.
pub fn guard_rerun(dir: &Path) -> Result<()> {
    match Marker::read(dir) {
        Some(marker) => refuse_changed(dir, &marker, |_| true),
        None => Ok(()),
    }
}

/// Whether the file `name` of `dir` is as irn wrote it, as far as a marker can tell: false
/// only when the marker has its checksum and the file differs. The marker is the folder's own,
/// or its parent's for a variant's folder of a comparison `irn run` wrote.
pub fn unchanged(dir: &Path, name: &str) -> bool {
    let recorded = match Marker::read(dir) {
        Some(marker) => marker.checksums.get(name).cloned(),
        None => dir.file_name().and_then(|sub| {
            let marker = Marker::read(dir.parent()?)?;
            let key = format!("{}/{name}", sub.to_string_lossy());
            marker.checksums.get(&key).cloned()
        }),
    };
    recorded.is_none_or(|sum| has_checksum(&dir.join(name), &sum).unwrap_or(true))
}

/// Refuses to read the results in `dir`'s `name` as irn's when it was changed since irn wrote
/// it.
pub fn refuse_edited(dir: &Path, name: &str) -> Result<()> {
    if !unchanged(dir, name) {
        bail!(
            "{}: changed since irn wrote it, so its numbers may not be irn's; move it away (or \
             restore it) and run again to write it anew",
            dir.join(name).display()
        );
    }
    Ok(())
}

/// Refuses to go on when a file of `dir` that its marker has a checksum for, and that
/// `concerned` names, was changed since irn wrote it: replacing it would lose the change.
fn refuse_changed(dir: &Path, marker: &Marker, concerned: impl Fn(&str) -> bool) -> Result<()> {
    let changed: Vec<PathBuf> = (marker.checksums.iter())
        .filter(|(name, _)| concerned(name))
        .filter(|(name, sum)| has_checksum(&dir.join(name), sum) == Some(false))
        .map(|(name, _)| dir.join(name))
        .collect();
    if !changed.is_empty() {
        bail!(
            "{}: changed since irn wrote it, and irn would replace it; move it (or copy what \
             you added) and run again, or choose another --out",
            join_paths(&changed)
        );
    }
    Ok(())
}

/// Adds `entries` (paths relative to `dir`) to what the marker of `dir` lists as irn's, so that
/// replacing `dir` replaces them too, with a checksum of each file among them as it is now
/// (just written), so that a later change to it is seen. Does nothing in a folder without a
/// marker, or with one that has no list.
pub fn record(dir: &Path, entries: &[&str]) -> Result<()> {
    list(dir, entries, true)
}

/// [`record`], with the files' checksums or without.
fn list(dir: &Path, entries: &[&str], checksums: bool) -> Result<()> {
    let Some(mut marker) = Marker::read(dir) else {
        return Ok(());
    };
    let Some(files) = marker.files.as_mut() else {
        return Ok(());
    };
    for entry in entries {
        if !files.iter().any(|f| f == entry) {
            files.push(entry.to_string());
        }
        let path = dir.join(entry);
        if let Some(sum) = (checksums && path.is_file())
            .then(|| file_checksum(&path))
            .flatten()
        {
            marker.checksums.insert(entry.to_string(), sum);
        }
    }
    files.sort();
    marker.write(dir)
}

/// The folder `dest` names: itself, or where it points when it is a symbolic link, so that a
/// link given as `--out` stays a link and its target's contents are what irn replaces. A link to
/// nothing is refused.
pub fn resolve_link(dest: &Path) -> Result<PathBuf> {
    let is_link = fs::symlink_metadata(dest).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return Ok(dest.to_path_buf());
    }
    dest.canonicalize().with_context(|| {
        format!(
            "{}: is a symbolic link to {}, which does not exist; create it or choose another \
             --out",
            dest.display(),
            fs::read_link(dest).unwrap_or_default().display()
        )
    })
}

/// The files a run of `resolved` reads: `file` (the scenario, when given) and every existing
/// file a string of the resolved scenario names, relative to the scenario's folder as the
/// scenario's own paths are (the topology file, flow files, size CDFs, traces, …). A string
/// that only happens to name a file counts too: it is protected for nothing, never the other
/// way round.
pub fn scenario_inputs(file: Option<&Path>, resolved: &ScenarioFile) -> Vec<PathBuf> {
    fn strings<'a>(v: &'a serde_json::Value, out: &mut Vec<&'a str>) {
        match v {
            serde_json::Value::String(s) => out.push(s),
            serde_json::Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
            serde_json::Value::Object(o) => o.values().for_each(|v| strings(v, out)),
            _ => {}
        }
    }
    let base = file.and_then(Path::parent).unwrap_or(Path::new(""));
    let value = serde_json::to_value(resolved).unwrap_or_default();
    let mut names = Vec::new();
    strings(&value, &mut names);
    let mut inputs: Vec<PathBuf> = file.map(Path::to_path_buf).into_iter().collect();
    for name in names.into_iter().filter(|n| !n.is_empty()) {
        let path = base.join(name);
        if path.is_file() && !inputs.contains(&path) {
            inputs.push(path);
        }
    }
    inputs
}

/// What a command does with a folder it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// Replaces what irn wrote in it, keeping the rest ([`keep`]): a run's results folder.
    Replace,
    /// Adds its own files and subfolders to it (a sweep's or reproduce's root, `report --out`,
    /// `plots/`), leaving anything else in place.
    WriteInto,
}

/// Refuses, with an error naming `dest` and saying how to proceed, a folder irn may not write:
/// a file; a symbolic link to nothing; a non-empty folder without [`MARKER`]; one another kind
/// of command wrote ([`refuse_other_kind`]); and for [`Use::Replace`] also the working folder
/// or any folder holding it, and a folder holding one of `inputs` (the files the command
/// reads). A missing or empty folder is always fine. Every writing command calls this, as
/// `writer`, before writing anything, so a refusal leaves everything as it was.
pub fn guard_folder(dest: &Path, writer: Writer, how: Use, inputs: &[&Path]) -> Result<()> {
    let proceed = "choose another --out, or remove it yourself if nothing in it is needed";
    let dest = &resolve_link(dest)?;
    let Ok(meta) = fs::metadata(dest) else {
        return Ok(());
    };
    if !meta.is_dir() {
        bail!("{}: exists and is not a folder; {proceed}", dest.display());
    }
    refuse_other_kind(dest, writer, how)?;
    if how == Use::Replace {
        let canonical = dest
            .canonicalize()
            .with_context(|| format!("cannot resolve {}", dest.display()))?;
        let cwd = std::env::current_dir().and_then(|d| d.canonicalize());
        if cwd.is_ok_and(|cwd| cwd.starts_with(&canonical)) {
            bail!(
                "{}: is the working folder or holds it, and irn would replace it; {proceed}",
                dest.display()
            );
        }
        if dest.file_name().is_none() {
            bail!(
                "{}: name the folder itself (a path ending in `..` would put irn's temporary \
                 folder inside the folder it replaces); {proceed}",
                dest.display()
            );
        }
        for input in inputs {
            if input
                .canonicalize()
                .is_ok_and(|i| i.starts_with(&canonical))
            {
                bail!(
                    "{}: holds {}, which this command reads, and irn would replace the folder; \
                     {proceed}",
                    dest.display(),
                    input.display()
                );
            }
        }
    }
    if let Some(marker) = Marker::read(dest).filter(|_| how == Use::Replace) {
        refuse_changed(dest, &marker, |_| true)?;
    }
    let empty = fs::read_dir(dest)
        .with_context(|| format!("cannot read {}", dest.display()))?
        .next()
        .is_none();
    if !empty && !dest.join(MARKER).is_file() {
        bail!(
            "{}: is not empty and has no {MARKER} file, so irn did not write it (or an irn \
             older than that file did); irn {} only folders it wrote: {proceed}",
            dest.display(),
            match how {
                Use::Replace => "replaces",
                Use::WriteInto => "writes into",
            }
        );
    }
    Ok(())
}

/// Refuses the irn folder `dest` when its marker says another kind of command wrote it than
/// `writer`, writing it as `how` says: mixed, their files would be read as one kind's (a
/// comparison's `comparison.csv` beside a sweep's `sweep.csv` is plotted as a sweep), and a
/// replacement by another kind would remove files the marker does not list as the replacing
/// command's own. `irn run` replaces only a folder `irn run` wrote; a sweep's root, reproduce's
/// and check's take only their own kind, and so do the run folders sweep, reproduce and check
/// make below them ([`Use::Replace`]; check's are reproduce's kind); `irn report` writes into
/// its own folders and sweeps' roots (merging shards beside one's runs); `irn plot` adds its
/// report and charts to any irn folder.
fn refuse_other_kind(dest: &Path, writer: Writer, how: Use) -> Result<()> {
    let Some(found) = Marker::read(dest) else {
        return Ok(());
    };
    // Only a sweep's root records its sweep: the run folders below it are `irn sweep`'s too.
    let sweep_root = found.written_by == Writer::Sweep && found.sweep.is_some();
    // And a run of reproduce's or check's holds a run's files, its root only reports.
    let reproduce_run = found.written_by == Writer::Reproduce
        && (found.files.iter().flatten()).any(|f| f == "summary.json");
    let run_below = how == Use::Replace && matches!(writer, Writer::Sweep | Writer::Reproduce);
    let fits = match writer {
        Writer::Plot => true,
        Writer::Report => found.written_by == Writer::Report || sweep_root,
        Writer::Sweep => found.written_by == Writer::Sweep && sweep_root != run_below,
        Writer::Reproduce => found.written_by == Writer::Reproduce && reproduce_run == run_below,
        _ => found.written_by == writer,
    };
    if fits {
        return Ok(());
    }
    let holds = match found.written_by {
        Writer::Sweep if !sweep_root => "one run of `irn sweep`".to_string(),
        Writer::Reproduce if reproduce_run => {
            "one run of `irn reproduce` or `irn check`".to_string()
        }
        Writer::Reproduce => "the results of `irn reproduce` (or one run of `irn check`)".into(),
        Writer::Plot => "the charts of `irn plot`".into(),
        other => format!("the results of {}", other.command()),
    };
    let dest = dest.display();
    match writer {
        Writer::Sweep if run_below => bail!(
            "{dest}: holds {holds}; `irn sweep` writes a run only into a new folder or one of \
             its own runs: move it out of the way, or choose another --out"
        ),
        Writer::Reproduce if run_below => bail!(
            "{dest}: holds {holds}; `irn reproduce` and `irn check` write a run only into a new \
             folder or one of their own runs: move it out of the way, or choose another --out"
        ),
        Writer::Reproduce if reproduce_run => bail!(
            "{dest}: holds {holds}, not a whole reproduction's folder; `irn reproduce` writes \
             into a new folder or one holding its report.html: choose another --out"
        ),
        Writer::Report => bail!(
            "{dest}: holds {holds}; `irn report` writes only into a new folder or one \
             `irn report` or `irn sweep` wrote: choose another --out"
        ),
        _ => bail!(
            "{dest}: holds {holds}; {0} writes only into a new folder or one {0} wrote: choose \
             another --out",
            writer.command()
        ),
    }
}

/// [`guard_folder`] with [`Use::WriteInto`], then creates `dir` and marks it as `writer`'s
/// unless it is already marked.
pub fn claim_folder(dir: &Path, writer: Writer) -> Result<()> {
    guard_folder(dir, writer, Use::WriteInto, &[])?;
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    if !dir.join(MARKER).is_file() {
        Marker::new(writer).write(dir)?;
    }
    Ok(())
}

/// Refuses to overwrite an existing `path` unless `irns` recognises it as a file irn wrote
/// (a report `irn plot` wrote): `what` names such a file in the error.
pub fn guard_file(path: &Path, what: &str, irns: impl Fn(&Path) -> bool) -> Result<()> {
    let Ok(meta) = fs::metadata(path) else {
        return Ok(());
    };
    if meta.is_dir() {
        bail!(
            "{}: is a folder; give a file name to write {what} to",
            path.display()
        );
    }
    if !irns(path) {
        bail!(
            "{}: exists and is not {what}, so irn will not overwrite it; choose another \
             --out, or remove it yourself if it is not needed",
            path.display()
        );
    }
    Ok(())
}

/// `.NAME.irn` beside a file irn wrote outside a results folder (`gen-flows -o`, `topology -o`):
/// which command wrote it and a checksum of what it wrote. ns-3's readers take no comment line,
/// so the file itself carries no mark.
fn sidecar(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    parent_of(path).join(format!(".{name}.irn"))
}

/// FNV-1a, 64 bits, of `bytes` continued from `hash`: the checksum markers and sidecars of
/// irns before [`XXH3`] recorded, still recognised.
fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    (bytes.iter()).fold(hash, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

const FNV1A_START: u64 = 0xcbf2_9ce4_8422_2325;

/// Writes `contents` to `path` as [`write_file_atomic`] does, and its sidecar (see [`sidecar`])
/// saying `command` wrote it, so a later command may replace it ([`guard_own_file`]).
pub fn write_own_file(path: &Path, contents: &[u8], command: &str) -> Result<()> {
    let path = resolve_link(path)?;
    write_file_atomic(&path, contents)?;
    let mark = serde_json::json!({
        "written_by": command,
        "irn_version": env!("CARGO_PKG_VERSION"),
        "checksum": checksum(contents),
    });
    let text = serde_json::to_string_pretty(&mark)? + "\n";
    write_file_atomic(&sidecar(&path), text.as_bytes())
}

/// Whether irn wrote `path` ([`write_own_file`]) and it has not changed since.
fn is_own_file(path: &Path) -> bool {
    let Ok(path) = resolve_link(path) else {
        return false;
    };
    let mark: Option<serde_json::Value> =
        (irn_sim::input::read_text(&sidecar(&path), irn_sim::input::RESULT).ok())
            .and_then(|t| serde_json::from_str(&t).ok());
    // `fnv1a64`: a sidecar of an irn before XXH3.
    let recorded = (mark.as_ref()).and_then(|m| m["checksum"].as_str().or(m["fnv1a64"].as_str()));
    recorded.is_some_and(|r| has_checksum(&path, r) == Some(true))
}

/// The checksum of the file at `path` a marker records (see [`XXH3`]); `None` when it cannot be
/// read.
fn file_checksum(path: &Path) -> Option<String> {
    irn_sim::input::file_checksum(path, irn_sim::input::RESULT_TABLE).ok()
}

/// Whether the file at `path` has the checksum `recorded` (either kind, see [`XXH3`]); `None`
/// when it cannot be read.
fn has_checksum(path: &Path, recorded: &str) -> Option<bool> {
    if recorded.starts_with(XXH3) {
        return file_checksum(path).map(|sum| sum == recorded);
    }
    let mut hash = FNV1A_START;
    read_pieces(path, |piece| hash = fnv1a(hash, piece))?;
    Some(format!("{hash:016x}") == recorded)
}

/// Hands the file at `path` to `take` in pieces (a run's time series may be hundreds of
/// megabytes); `None` when it cannot be read. Opened through `input`: a FIFO or device put in
/// the file's place is not irn's and never read.
fn read_pieces(path: &Path, mut take: impl FnMut(&[u8])) -> Option<()> {
    let mut file = irn_sim::input::open(path, irn_sim::input::RESULT_TABLE).ok()?;
    let mut buf = vec![0; 1 << 16];
    loop {
        match std::io::Read::read(&mut file, &mut buf) {
            Ok(0) => return Some(()),
            Ok(n) => take(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

/// Refuses to overwrite an existing `path` that irn did not write ([`write_own_file`]), or
/// that was changed since, unless `force`.
pub fn guard_own_file(path: &Path, force: bool) -> Result<()> {
    let Ok(meta) = fs::metadata(path) else {
        return Ok(());
    };
    if meta.is_dir() {
        bail!(
            "{}: is a folder; give a file name to write to",
            path.display()
        );
    }
    if !force && !is_own_file(path) {
        bail!(
            "{}: exists and irn did not write it, or it was changed since (irn marks a file it \
             writes with {} beside it), so irn will not overwrite it; choose another --out, \
             remove it yourself if it is not needed, or give --force to overwrite it",
            path.display(),
            sidecar(path).display()
        );
    }
    Ok(())
}

/// The temporaries this process has open (folders and files), removed by the signal handler.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn live() -> MutexGuard<'static, Vec<PathBuf>> {
    // A panic elsewhere while the list was held leaves it whole: it is only pushed and removed.
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The folders this process created on the way to a results folder (a sweep's point folder,
/// `out/point` of `out/point/variant`): an interrupted or failed run removes them again when
/// they are empty, so that it leaves no empty folder behind. Only empty ones go: a finished
/// run of another variant, or a note the user put there meanwhile, keeps its folder.
static CREATED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Creates `dir` and the folders above it that are missing, remembering those in [`CREATED`].
fn create_parents(dir: &Path) -> Result<()> {
    let missing: Vec<PathBuf> = (dir.ancestors())
        .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
        .map(Path::to_path_buf)
        .collect();
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    (CREATED.lock().unwrap_or_else(PoisonError::into_inner)).extend(missing);
    Ok(())
}

/// Removes the folders of [`CREATED`] that are empty, the deepest first.
fn remove_empty_created() {
    remove_empty(&mut CREATED.lock().unwrap_or_else(PoisonError::into_inner));
}

/// Removes the folders of `created` that are empty, deepest first, and forgets them.
fn remove_empty(created: &mut Vec<PathBuf>) {
    created.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    created.retain(|p| fs::remove_dir(p).is_err() && p.is_dir());
}

/// What a command says on a signal about what it kept and removed, given the temporaries about
/// to be removed (see [`on_interrupt`]).
type Interrupted = Box<dyn Fn(&[PathBuf]) -> String + Send>;

static ON_INTERRUPT: Mutex<Option<Interrupted>> = Mutex::new(None);

/// Sets what the signal handler says, after `interrupted: `, about what the command kept and
/// what it removed; `describe` gets the temporaries about to be removed. It must not take the
/// list of temporaries itself: the handler holds it.
pub fn on_interrupt(describe: impl Fn(&[PathBuf]) -> String + Send + 'static) {
    *ON_INTERRUPT.lock().unwrap_or_else(PoisonError::into_inner) = Some(Box::new(describe));
}

/// On SIGINT, SIGTERM or SIGHUP: removes this process's temporaries, says in one line what was
/// kept and what removed ([`on_interrupt`]), and exits with 130. The list stays locked until the
/// exit, so no temporary is created or renamed into place after the handler has started.
pub fn clean_up_on_signal() -> Result<()> {
    ctrlc::set_handler(|| {
        // Held until the exit (see above).
        let live = live();
        let said = remove_temporaries(&live, &ON_INTERRUPT.lock());
        remove_empty_created();
        // On a terminal the line would otherwise follow a progress bar or the echoed `^C`.
        let fresh = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            "\n"
        } else {
            ""
        };
        errln!("{fresh}interrupted: {said}");
        std::process::exit(130);
    })
    .context("cannot install the handler that cleans up on Ctrl-C")
}

/// Removes the temporaries `live` and says what was kept and removed, by the command's
/// `describe` if it set one ([`on_interrupt`]).
fn remove_temporaries(
    live: &[PathBuf],
    describe: &LockResult<MutexGuard<Option<Interrupted>>>,
) -> String {
    // Locks go too, but are irn's bookkeeping, not results: the message leaves them out.
    let written: Vec<PathBuf> = (live.iter())
        .filter(|p| !lock::is_lock(p))
        .cloned()
        .collect();
    let describe = describe.as_ref().unwrap_or_else(|e| e.get_ref());
    let said = describe.as_ref().map(|describe| describe(&written));
    for path in live {
        remove_path(path);
    }
    said.unwrap_or_else(|| match written.is_empty() {
        true => "nothing was being written".to_string(),
        false => format!("removed the unfinished {}", join_paths(&written)),
    })
}

/// After the system refused irn memory (see `huge_pages`): removes this process's temporaries
/// and the empty folders it made, as a signal does, says what was kept and removed, and exits
/// with status 1, the list held to the end as the signal handler holds it. Nothing is removed
/// while another thread (or this one, the allocation that failed being its own) holds a list:
/// waiting for it could wait for ever.
pub fn clean_up_after_out_of_memory() -> ! {
    let live = match LIVE.try_lock() {
        Ok(live) => Some(live),
        Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    };
    let describe = match ON_INTERRUPT.try_lock() {
        Ok(d) => Some(Ok(d)),
        Err(TryLockError::Poisoned(p)) => Some(Err(p)),
        Err(TryLockError::WouldBlock) => None,
    };
    if let (Some(live), Some(describe)) = (&live, &describe) {
        let said = remove_temporaries(live, describe);
        if let Ok(mut created) = CREATED.try_lock() {
            remove_empty(&mut created);
        }
        errln!("out of memory: {said}");
    }
    std::process::exit(1)
}

/// Removes a file or a folder; a folder a worker thread is still writing into may gain an
/// entry between listing and removal, so the removal is retried.
fn remove_path(path: &Path) {
    for _ in 0..5 {
        let done = match fs::symlink_metadata(path) {
            Err(_) => true,
            Ok(m) if m.is_dir() => fs::remove_dir_all(path).is_ok(),
            Ok(_) => fs::remove_file(path).is_ok(),
        };
        if done {
            return;
        }
    }
}

/// `.NAME.tmp-PID` beside `dest`, the temporary this process writes `dest` through.
fn temporary_path(dest: &Path) -> PathBuf {
    temporary_path_of(dest, std::process::id())
}

fn temporary_path_of(dest: &Path, pid: u32) -> PathBuf {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "results".into());
    parent_of(dest).join(format!(".{name}.tmp-{pid}"))
}

/// The folder holding `path` (`.` for a bare name).
pub fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Whether process `pid` is running. Only Linux can tell cheaply (`/proc/PID`); elsewhere every
/// process counts as running, so nothing that might be in use is removed.
fn alive(pid: u32) -> bool {
    !cfg!(target_os = "linux") || Path::new("/proc").join(pid.to_string()).exists()
}

/// `.NAME.old-PID` beside `dest`: where a replacement puts the old folder for the instant
/// between moving it away and moving the new one in.
fn aside_path(dest: &Path) -> PathBuf {
    let tmp = temporary_path(dest);
    let name = tmp.file_name().unwrap_or_default().to_string_lossy();
    tmp.with_file_name(name.replacen(".tmp-", ".old-", 1))
}

/// Cleans up after processes that are gone (killed by SIGKILL, a power cut) and wrote `dest`:
/// their temporaries `.NAME.tmp-PID` and old folders `.NAME.old-PID` (exactly those names and a
/// number). A temporary folder holding a marker was being moved into place (see
/// [`Staging::commit`]): it is finished (moved into place) when `dest` is gone, and undone
/// otherwise (the entries irn did not write go back to `dest`). An old folder goes back to
/// `dest` when `dest` is gone, and is removed otherwise, after the same rescue. Anything irn
/// did not write that cannot go back (a name now taken) stays where it is, with a note. Those of
/// running processes are kept: another irn may be writing `dest` now. The check is per machine:
/// shards on several machines write to folders of their own.
pub fn remove_stale_temporaries(dest: &Path) {
    let Some(name) = dest.file_name() else {
        return;
    };
    let name = name.to_string_lossy();
    let Ok(entries) = fs::read_dir(parent_of(dest)) else {
        return;
    };
    let mut stale = Vec::new();
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else {
            continue;
        };
        for (order, kind) in [(0, "tmp"), (1, "old")] {
            let pid = (file_name.strip_prefix(&format!(".{name}.{kind}-")))
                .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|p| p.parse::<u32>().ok());
            if pid.is_some_and(|pid| pid != std::process::id() && !alive(pid)) {
                stale.push((order, entry.path()));
            }
        }
    }
    // The temporaries first: one may become `dest` before its old folder is looked at.
    stale.sort();
    for (_, path) in stale {
        let was_moving = path.join(MARKER).is_file();
        let finished = was_moving && fs::symlink_metadata(dest).is_err();
        if finished && fs::rename(&path, dest).is_ok() {
            continue;
        }
        if was_moving && !dest.is_dir() {
            // Nowhere to put back what irn did not write: leave it all as it is.
            errln!(
                "note: {} holds what an irn that was stopped was writing to {}; look at it \
                 and remove it yourself",
                path.display(),
                dest.display()
            );
            continue;
        }
        let left = if was_moving {
            keep::rescue(&path, dest)
        } else {
            Vec::new()
        };
        if left.is_empty() {
            remove_path(&path);
        } else {
            errln!(
                "note: {} was kept: it holds files irn did not write ({}) that could not go \
                 back into {}; move them yourself",
                path.display(),
                join_paths(&left),
                dest.display()
            );
        }
    }
}

fn join_paths(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    names.join(", ")
}

/// Writes `contents` to `path` through `.NAME.tmp-PID` beside it and a rename, so readers never
/// see a half-written file and a signal leaves nothing behind; a symbolic link is written
/// through and stays a link. The caller has checked that `path` may be overwritten.
pub fn write_file_atomic(path: &Path, contents: &[u8]) -> Result<()> {
    let path = &resolve_link(path)?;
    let dir = parent_of(path);
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    remove_stale_temporaries(path);
    let tmp = temporary_path(path);
    // Created while the list is locked: the signal handler either sees it or runs before it.
    let file = {
        let mut live = live();
        let file =
            fs::File::create(&tmp).with_context(|| format!("cannot write {}", tmp.display()));
        if file.is_ok() {
            live.push(tmp.clone());
        }
        file
    };
    let result = file.and_then(|mut f| {
        f.write_all(contents)
            .and_then(|()| f.flush())
            .with_context(|| format!("cannot write {}", tmp.display()))
    });
    let mut live = live();
    let result = result.and_then(|()| {
        fs::rename(&tmp, path)
            .with_context(|| format!("cannot move {} to {}", tmp.display(), path.display()))
    });
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    live.retain(|p| p != &tmp);
    result
}

/// The files (and `series/`) [`Staging::write_run`] and a run write into the run folder `sub`:
/// `trace.csv` when `traced`, `series/` when `monitored`.
pub fn run_files(sub: &Path, traced: bool, monitored: bool) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["summary.json", "flows.csv", "fct.txt"]
        .map(|f| sub.join(f))
        .into();
    if traced {
        files.push(sub.join("trace.csv"));
    }
    if monitored {
        files.push(sub.join("series"));
    }
    files
}

/// Writes the CSV file `path` with `rows`, flushed: a full disk is an error here, not lost in a
/// buffer dropped unflushed. The caller names `path` in the error.
fn write_csv(
    path: &Path,
    rows: impl FnOnce(&mut csv::Writer<fs::File>) -> csv::Result<()>,
) -> Result<()> {
    let mut w = csv::Writer::from_path(path)?;
    rows(&mut w)?;
    w.flush()?;
    Ok(())
}

/// A results folder being written at a temporary path beside `dest`.
pub struct Staging {
    tmp: PathBuf,
    dest: PathBuf,
    writer: Writer,
    inputs: Vec<PathBuf>,
    /// The temporary folder holds files irn did not write (a replacement that failed and could
    /// not be undone): it is left in place.
    keep: bool,
}

impl Staging {
    /// Checks, before anything runs, that `dest` may be replaced ([`guard_folder`]; `inputs`
    /// are the files the command reads), and starts its temporary folder. A `dest` that is a
    /// symbolic link stands for the folder it points to.
    pub fn new(dest: &Path, writer: Writer, inputs: &[&Path]) -> Result<Self> {
        let dest = &resolve_link(dest)?;
        guard_folder(dest, writer, Use::Replace, inputs)?;
        create_parents(parent_of(dest))?;
        remove_stale_temporaries(dest);
        let tmp = temporary_path(dest);
        {
            let mut live = live();
            if tmp.exists() {
                fs::remove_dir_all(&tmp)
                    .with_context(|| format!("cannot clear {}", tmp.display()))?;
            }
            fs::create_dir_all(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
            live.push(tmp.clone());
        }
        // The marker comes last, in `commit`: a temporary folder holding one was being moved
        // into place, which tells a later command to finish or undo that, not just remove it.
        Ok(Staging {
            tmp,
            dest: dest.to_path_buf(),
            writer,
            inputs: inputs.iter().map(|p| p.to_path_buf()).collect(),
            keep: false,
        })
    }

    /// The folder the results go to.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// The temporary folder they are written in first.
    pub fn temporary(&self) -> &Path {
        &self.tmp
    }

    /// Refuses, before anything runs, when `dest` holds an entry irn did not write at one of
    /// the `planned` paths (relative to `dest`) or a file where one of their folders goes: irn
    /// would have to write over it. [`Staging::commit`] asks again, for anything that appeared
    /// meanwhile.
    pub fn refuse_in_the_way(&self, planned: &[PathBuf]) -> Result<()> {
        if !self.dest.is_dir() {
            return Ok(());
        }
        let foreign = keep::foreign(&self.dest);
        let in_way: Vec<PathBuf> = (planned.iter())
            .filter(|p| foreign.iter().any(|f| p.starts_with(f)))
            .filter(|p| keep::in_the_way(&self.dest, p))
            .cloned()
            .collect();
        if !in_way.is_empty() {
            bail!(
                "{}: holds {}, which irn did not write and which irn would write now; move or \
                 rename them and run again",
                self.dest.display(),
                join_paths(&in_way)
            );
        }
        Ok(())
    }

    /// The folder of one run's files, `sub` (empty for the top level), created if it is not
    /// there yet: before the run for its streamed time series, after it for the rest.
    pub fn run_dir(&self, sub: &str) -> Result<PathBuf> {
        let dir = if sub.is_empty() {
            self.tmp.clone()
        } else {
            self.tmp.join(sub)
        };
        // `create_dir`, not `create_dir_all`: after the signal handler removed the temporary
        // folder, this fails instead of creating it again.
        if !dir.is_dir() {
            fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        Ok(dir)
    }

    /// Writes one run's files into `sub` (empty for the top level).
    pub fn write_run(&self, sub: &str, scenario: &str, seed: u64, run: &Finished) -> Result<()> {
        let dir = self.run_dir(sub)?;
        let path = dir.join("flows.csv");
        let cannot = |path: &Path| format!("cannot write {}", path.display());
        write_csv(&path, |w| {
            run.result.flows.iter().try_for_each(|row| w.serialize(row))
        })
        .with_context(|| cannot(&path))?;
        let path = dir.join("fct.txt");
        fs::File::create(&path)
            .map_err(anyhow::Error::from)
            .and_then(|f| {
                let mut fct = std::io::BufWriter::new(f);
                irn_sim::workload::ns3::write_fct(&mut fct, &run.result.fct)?;
                fct.flush()?;
                Ok(())
            })
            .with_context(|| cannot(&path))?;
        let summary = SummaryFile {
            irn_version: env!("CARGO_PKG_VERSION"),
            irn_model: irn_sim::MODEL_ID,
            scenario,
            variant: run.name,
            seed,
            metrics: &run.result.summary,
            performance: run.performance,
            inputs: run.inputs,
            resolved_scenario: run.resolved,
        };
        let json = serde_json::to_string_pretty(&summary)?;
        let path = dir.join("summary.json");
        fs::write(&path, json + "\n").with_context(|| cannot(&path))
    }

    /// Writes `comparison.csv`: one row per variant, the `summary.json` metrics as columns.
    pub fn write_comparison(&self, runs: &[Finished]) -> Result<()> {
        let metrics = runs
            .iter()
            .map(|r| match serde_json::to_value(&r.result.summary)? {
                serde_json::Value::Object(metrics) => Ok(metrics),
                _ => unreachable!("a struct serializes to an object"),
            })
            .collect::<Result<Vec<_>, serde_json::Error>>()?;
        let flat: Vec<_> = metrics.iter().map(flat_metrics).collect();
        // Every name any variant has, in the order they first appear: variants may differ in
        // them (an ordering layer's memory, a verbs workload's data errors).
        let mut columns: Vec<&str> = Vec::new();
        for (name, _) in flat.iter().flatten() {
            if !columns.contains(&name.as_str()) {
                columns.push(name);
            }
        }
        let path = self.tmp.join("comparison.csv");
        write_csv(&path, |w| {
            if !runs.is_empty() {
                w.write_record(std::iter::once("variant").chain(columns.iter().copied()))?;
            }
            for (r, cells) in runs.iter().zip(&flat) {
                let values = columns.iter().map(|&c| {
                    (cells.iter().find(|(n, _)| n == c)).map_or_else(String::new, |(_, v)| cell(v))
                });
                w.write_record(std::iter::once(r.name.to_string()).chain(values))?;
            }
            Ok(())
        })
        .with_context(|| format!("cannot write {}", path.display()))
    }

    /// Moves the finished folder into place, replacing irn's entries of an older one and
    /// keeping everything else where it is ([`keep`]). The guard is asked again: the folder may
    /// have been created or filled by someone else while the runs ran.
    ///
    /// All while the signal handler waits: (1) refuse, changing nothing, when an entry irn did
    /// not write has the name of one it writes now; (2) write the marker, listing what irn
    /// wrote, into the temporary folder; (3) move the entries irn did not write from `dest`
    /// into it; (4) move `dest` aside to `.NAME.old-PID`; (5) move the temporary folder to
    /// `dest`; (6) remove the old folder, once anything irn did not write that appeared in it
    /// meanwhile has moved too. `dest` is the old folder whole until (4) and the new one whole
    /// from (5). A failure undoes (3) and (4); a process killed midway leaves its temporary
    /// folder with a marker, which the next command writing `dest` finishes or undoes
    /// ([`remove_stale_temporaries`]).
    pub fn commit(mut self) -> Result<PathBuf> {
        let inputs: Vec<&Path> = self.inputs.iter().map(PathBuf::as_path).collect();
        guard_folder(&self.dest, self.writer, Use::Replace, &inputs)?;
        let (tmp, dest) = (&self.tmp, &self.dest);
        let files = keep::listing(tmp);
        // Every file the runs wrote, so that one edited since is refused, never replaced, and
        // never reused as irn's. Before the signal handler is held off: the files are final.
        let checksums = (files.iter())
            .filter(|f| tmp.join(f).is_file())
            .filter_map(|f| Some((f.clone(), file_checksum(&tmp.join(f))?)))
            .collect();
        let mut live = live();
        let existed = fs::symlink_metadata(dest).is_ok();
        let foreign = if existed {
            keep::foreign_into(dest, tmp)
        } else {
            Vec::new()
        };
        let in_way: Vec<PathBuf> = (foreign.iter())
            .filter(|rel| keep::in_the_way(tmp, rel))
            .cloned()
            .collect();
        if !in_way.is_empty() {
            bail!(
                "{}: holds {}, which irn did not write and which irn now writes; nothing was \
                 changed: move or rename them and run again",
                dest.display(),
                join_paths(&in_way)
            );
        }
        let marker = Marker {
            files: Some(files),
            checksums,
            ..Marker::new(self.writer)
        };
        // Whole or not at all: a marker in the temporary folder says it is complete.
        let draft = tmp.join(format!("{MARKER}.part"));
        fs::write(&draft, serde_json::to_string_pretty(&marker)? + "\n")
            .and_then(|()| fs::rename(&draft, tmp.join(MARKER)))
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        let mut moved = Vec::new();
        let mut result = Ok(());
        for rel in &foreign {
            result = keep::move_entry(dest, tmp, rel).with_context(|| {
                format!("cannot move {} out of the way", dest.join(rel).display())
            });
            if result.is_err() {
                break;
            }
            moved.push(rel);
        }
        let aside = aside_path(dest);
        if result.is_ok() && existed {
            result = fs::rename(dest, &aside)
                .with_context(|| format!("cannot move {} aside", dest.display()));
        }
        let aside_taken = result.is_ok() && existed;
        if result.is_ok() {
            result = fs::rename(tmp, dest).with_context(|| {
                format!(
                    "cannot move results from {} to {}",
                    tmp.display(),
                    dest.display()
                )
            });
            if result.is_err() && aside_taken {
                let _ = fs::rename(&aside, dest);
            }
        }
        if let Err(e) = result {
            let stuck: Vec<PathBuf> = (moved.into_iter())
                .filter(|rel| keep::move_entry(tmp, dest, rel).is_err())
                .cloned()
                .collect();
            if stuck.is_empty() {
                let _ = fs::remove_file(tmp.join(MARKER));
                return Err(e);
            }
            self.keep = true;
            live.retain(|p| p != tmp);
            return Err(e.context(format!(
                "{} could not go back into {}: they are in {}",
                join_paths(&stuck),
                dest.display(),
                tmp.display()
            )));
        }
        live.retain(|p| p != tmp);
        if aside_taken {
            let left = keep::rescue(&aside, dest);
            if left.is_empty() {
                remove_path(&aside);
            } else {
                errln!(
                    "note: {} holds {}, which irn did not write and which appeared while it \
                     replaced {}; move them yourself",
                    aside.display(),
                    join_paths(&left),
                    dest.display()
                );
            }
        }
        Ok(dest.clone())
    }
}

impl Drop for Staging {
    /// An abandoned staging folder (an error before `commit`) is removed, unless it holds
    /// files irn did not write.
    fn drop(&mut self) {
        let mut live = live();
        if !self.keep {
            let _ = fs::remove_dir_all(&self.tmp);
        }
        live.retain(|p| p != &self.tmp);
        remove_empty_created();
    }
}

/// The metrics of a run finished earlier in `dir` for the same resolved scenario and data files
/// (`inputs`, by their checksums) by this simulator ([`irn_sim::MODEL_ID`]); `None` (run it)
/// when the folder is missing, unreadable, holds another scenario's run, a run of other data
/// or another irn's, or its `summary.json` was changed since irn wrote it (the rerun then
/// refuses to replace it, naming the file). This is what lets `sweep` and `reproduce` resume
/// without reusing a run of an edited scenario, of an edited file it reads, or of an earlier
/// irn.
pub fn finished_run(dir: &Path, resolved: &ScenarioFile, inputs: &[InputFile]) -> Option<Summary> {
    #[derive(Deserialize)]
    struct SummaryFile {
        #[serde(default)]
        irn_model: String,
        metrics: Summary,
        #[serde(default)]
        inputs: Vec<InputFile>,
        resolved_scenario: serde_json::Value,
    }
    if !unchanged(dir, "summary.json") {
        return None;
    }
    let text = irn_sim::input::read_text(&dir.join("summary.json"), irn_sim::input::RESULT).ok()?;
    let file: SummaryFile = serde_json::from_str(&text).ok()?;
    let same = file.irn_model == irn_sim::MODEL_ID
        && file.inputs == inputs
        && file.resolved_scenario == serde_json::to_value(resolved).ok()?;
    same.then_some(file.metrics)
}

/// A run's metrics as `comparison.csv` and `sweep.csv` have them: the numbers of
/// `summary.json` in its order, then its lists of objects (`fct_by_size`, `collectives`)
/// flattened as `LIST.INDEX.KEY` (their numbers) and its objects (`failures`, `queries`,
/// `control_bytes`) as `OBJECT.KEY`, the names `irn check` uses. These come last so that the
/// scalar metrics keep their positions.
pub fn flat_metrics(
    metrics: &serde_json::Map<String, serde_json::Value>,
) -> Vec<(String, &serde_json::Value)> {
    use serde_json::Value;
    let mut cells: Vec<(String, &Value)> = Vec::new();
    let mut lists = Vec::new();
    for (key, value) in metrics {
        match value {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    // Lists inside the items (a collective's steps) stay in summary.json.
                    let numbers = (item.as_object().into_iter().flatten())
                        .filter(|(_, v)| !v.is_array() && !v.is_object());
                    for (sub, v) in numbers {
                        lists.push((format!("{key}.{i}.{sub}"), v));
                    }
                }
            }
            Value::Object(fields) => {
                for (sub, v) in fields {
                    lists.push((format!("{key}.{sub}"), v));
                }
            }
            v => cells.push((key.clone(), v)),
        }
    }
    cells.extend(lists);
    cells
}

/// A metric's value as a CSV cell: a number as JSON writes it, a name (a collective's `op`)
/// as its text, without JSON's quotes.
pub fn cell(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text.clone(),
        v => v.to_string(),
    }
}

/// Folder names from variant names: keep letters, digits, `-`, `_`, `+` and `.`.
pub fn folder_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_+.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A full disk shows only when the buffered rows are flushed: `write_csv` flushes, so the
    /// error reaches the caller, which names the file.
    #[test]
    fn a_full_disk_is_an_error_naming_the_file() {
        let path = Path::new("/dev/full");
        if !path.exists() {
            return; // not Linux
        }
        let err = write_csv(path, |w| w.write_record(["a", "b"]))
            .with_context(|| format!("cannot write {}", path.display()))
            .unwrap_err();
        let said = format!("{err:#}");
        assert!(said.starts_with("cannot write /dev/full: "), "{said}");
        assert!(said.contains("No space left on device"), "{said}");
    }

    /// A run that fails or is given up before its results are in place leaves no folder it
    /// created behind, but keeps those that hold anything (another run's results, a note).
    #[test]
    fn an_abandoned_run_leaves_no_empty_folder() {
        let dir = std::env::temp_dir().join(format!("irn-abandoned-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let staging = Staging::new(&dir.join("point/deep/ECMP"), Writer::Sweep, &[]).unwrap();
        assert!(dir.join("point/deep").is_dir());
        drop(staging);
        assert!(!dir.join("point").exists(), "the empty point folder stays");
        let staging = Staging::new(&dir.join("kept/ECMP"), Writer::Sweep, &[]).unwrap();
        fs::write(dir.join("kept/notes.txt"), "mine").unwrap();
        drop(staging);
        assert!(dir.join("kept/notes.txt").is_file());
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A checksum is XXH3 now and FNV-1a in a marker or sidecar of an earlier irn: both are
    /// recognised, and a file longer than a read's piece is hashed whole.
    #[test]
    fn checksums_of_either_kind_tell_a_changed_file() {
        let dir = std::env::temp_dir().join(format!("irn-checksum-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("flows.csv");
        let text: Vec<u8> = (0..200_000u32).flat_map(|i| i.to_le_bytes()).collect();
        fs::write(&path, &text).unwrap();
        let xxh3 = file_checksum(&path).unwrap();
        assert_eq!(xxh3, checksum(&text));
        let fnv = format!("{:016x}", fnv1a(FNV1A_START, &text));
        assert_eq!(has_checksum(&path, &xxh3), Some(true));
        assert_eq!(has_checksum(&path, &fnv), Some(true));
        let mut edited = text.clone();
        *edited.last_mut().unwrap() ^= 1;
        fs::write(&path, &edited).unwrap();
        assert_eq!(has_checksum(&path, &xxh3), Some(false));
        assert_eq!(has_checksum(&path, &fnv), Some(false));
        assert_eq!(has_checksum(&dir.join("gone"), &xxh3), None);
        // A sidecar of an irn before XXH3 still marks its file as irn's, until it changes.
        let flows = dir.join("flows.txt");
        fs::write(&flows, "1\n").unwrap();
        let old = format!("{{\"fnv1a64\": \"{:016x}\"}}", fnv1a(FNV1A_START, b"1\n"));
        fs::write(sidecar(&flows), old).unwrap();
        assert!(is_own_file(&flows));
        fs::write(&flows, "2\n").unwrap();
        assert!(!is_own_file(&flows));
        write_own_file(&flows, b"3\n", "gen-flows").unwrap();
        assert!(is_own_file(&flows));
        fs::remove_dir_all(&dir).unwrap();
    }
}
