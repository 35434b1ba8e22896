//! Helpers the `irn` binary's end-to-end tests share: run it, check how it ended, give each test
//! a scratch folder.

#![allow(dead_code)] // each test binary uses a different subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the `irn` binary with `args` in `cwd`.
pub fn irn(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_irn"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("irn runs")
}

/// The standard output of a command that must succeed.
pub fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "irn failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The error of a command that must fail.
pub fn refused(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "should fail: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A fresh scratch folder for one test: `irn-test-<name>-<pid>` in the temporary folder.
pub fn scratch(name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("irn-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

/// A test's scratch folder, removed when the test ends; kept when it fails, to be looked at.
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Two variants on four hosts for 100 us: a few flows, a fraction of a second per run.
pub const TINY: &str = r#"
name = "tiny"
seed = 1

[topology]
kind = "star"
hosts = 4

[workload]
kind = "poisson"
load = 0.5
duration = "100us"

[[compare]]
name = "IRN"
set = { "transport.kind" = "irn" }

[[compare]]
name = "RoCE+PFC"
set = { "transport.kind" = "roce", "switch.pfc" = true }
"#;

/// A process id that is surely not running: a child that has exited and been waited for.
pub fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// The names in `dir` that `keep` picks (irn's temporaries, locks…).
pub fn names_in(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| keep(n))
        .collect()
}

/// Writes `text` to the run file `path` as if irn had written it: the run folder's marker forgets
/// the file's checksum (as a marker of an irn before checksums has none), so the file stands for
/// a run irn made for another scenario or by another build, not for a user's edit.
pub fn write_as_irns(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    let marker = path.parent().unwrap().join(".irn-results");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&marker).unwrap()).unwrap();
    let name = path.file_name().unwrap().to_str().unwrap();
    m["checksums"].as_object_mut().unwrap().remove(name);
    std::fs::write(&marker, m.to_string()).unwrap();
}

/// A small all-reduce on four hosts: a collective's summary has names (`op`, `algorithm`)
/// beside its numbers.
pub const ALL_REDUCE: &str = r#"
name = "ar"
seed = 1
[topology]
kind = "star"
hosts = 4
[workload]
kind = "collective"
[[workload.job]]
op = "all-reduce"
size = "64KB"
ranks = 4
"#;
