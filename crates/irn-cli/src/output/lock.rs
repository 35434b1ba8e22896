//! One writer at a time per results folder: a writing command holds `.NAME.irn-lock` beside
//! its destination (its process id and command line) until it ends, and refuses to start while
//! another live irn holds the lock of that folder or of a folder holding it (a `run --out` into
//! a sweep being written). A lock whose process is gone (SIGKILL, a power cut) is stale and is
//! cleared, as stale temporaries are.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::{alive, live, parent_of};

/// A held lock, released (its file removed) when dropped, or by the signal handler.
pub struct Lock {
    path: PathBuf,
}

impl Drop for Lock {
    fn drop(&mut self) {
        let mut live = live();
        let _ = fs::remove_file(&self.path);
        live.retain(|p| p != &self.path);
    }
}

/// `dest` as an absolute path with every symbolic link resolved, also when it (or its parents)
/// does not exist yet: two spellings of one folder get one lock.
fn absolute(dest: &Path) -> Result<PathBuf> {
    let mut rest = Vec::new();
    let mut at =
        std::path::absolute(dest).with_context(|| format!("cannot resolve {}", dest.display()))?;
    loop {
        if let Ok(real) = at.canonicalize() {
            return Ok(rest.iter().rev().fold(real, |p, n| p.join(n)));
        }
        match (at.file_name(), at.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                at = parent.to_path_buf();
            }
            _ => return Ok(at),
        }
    }
}

/// The lock file of the folder `dir` (absolute): `.NAME.irn-lock` beside it.
fn lock_path(dir: &Path) -> Option<PathBuf> {
    let name = dir.file_name()?.to_string_lossy();
    Some(parent_of(dir).join(format!(".{name}.irn-lock")))
}

/// Whether `path` is a lock file or its draft: irn's own bookkeeping, never named to the user
/// as something removed.
pub(super) fn is_lock(path: &Path) -> bool {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    name.ends_with(".irn-lock")
        || name
            .rsplit_once('.')
            .is_some_and(|(l, _)| l.ends_with(".irn-lock"))
}

/// The process id and command line a lock file holds; `None` for one irn cannot read.
fn holder(path: &Path) -> Option<(u32, String)> {
    let text = fs::read_to_string(path).ok()?;
    let (pid, command) = text.split_once('\n')?;
    Some((pid.trim().parse().ok()?, command.trim().to_string()))
}

/// Refuses `dest` while a live irn other than this one holds the lock of `dir` (`dest` itself,
/// or a folder holding it when `holds`).
fn check_free(dest: &Path, dir: &Path, holds: bool) -> Result<()> {
    let Some(path) = lock_path(dir) else {
        return Ok(());
    };
    let Some((pid, command)) = holder(&path) else {
        return Ok(());
    };
    if pid == std::process::id() || !alive(pid) {
        return Ok(());
    }
    let which = if holds {
        format!("is inside {}, which is being written", dir.display())
    } else {
        "is being written".to_string()
    };
    bail!(
        "{}: {which} by irn process {pid} (`{command}`); wait for it to finish, or choose \
         another --out (if no process {pid} runs, remove its lock {})",
        dest.display(),
        path.display()
    )
}

/// Takes the lock of the folder `dest` for this command, before it writes anything there;
/// refused, naming the holder's process id and command, while another live irn writes `dest`
/// or a folder holding it.
pub fn lock(dest: &Path) -> Result<Lock> {
    let dir = absolute(dest)?;
    for ancestor in dir.ancestors().skip(1) {
        check_free(dest, ancestor, true)?;
    }
    let Some(path) = lock_path(&dir) else {
        bail!("{}: cannot write into the root folder", dest.display());
    };
    let parent = parent_of(&path);
    fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    let command: Vec<String> = std::env::args().skip(1).collect();
    let text = format!("{}\nirn {}\n", std::process::id(), command.join(" "));
    // Written whole under another name, then linked into place: a link fails when the lock
    // exists, and a lock is never seen half-written.
    let draft = parent.join(format!(
        "{}.{}",
        path.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    {
        let mut live = live();
        fs::write(&draft, &text).with_context(|| format!("cannot write {}", draft.display()))?;
        live.push(draft.clone());
    }
    // Twice at most: once more after clearing a stale lock.
    let mut taken = Ok(false);
    for _ in 0..2 {
        let mut live = live();
        match fs::hard_link(&draft, &path) {
            Ok(()) => {
                live.push(path.clone());
                taken = Ok(true);
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                drop(live);
                taken = check_free(dest, &dir, false).map(|()| false);
                if taken.is_err() {
                    break;
                }
                // Stale: the process that took it is gone. Taken away under a name of this
                // process's own and read again, so that a lock another irn took in between
                // (clearing the same stale one) is put back, not removed.
                let away = draft.with_extension(format!("stale-{}", std::process::id()));
                if fs::rename(&path, &away).is_ok() {
                    let fresh = holder(&away).filter(|&(pid, _)| alive(pid));
                    if fresh.is_some() {
                        let _ = fs::hard_link(&away, &path);
                    }
                    let _ = fs::remove_file(&away);
                }
            }
            Err(e) => {
                taken = Err(e).with_context(|| format!("cannot create {}", path.display()));
                break;
            }
        }
    }
    {
        let mut live = live();
        let _ = fs::remove_file(&draft);
        live.retain(|p| p != &draft);
    }
    if taken? {
        return Ok(Lock { path });
    }
    bail!(
        "{}: cannot take its lock {}: another irn keeps taking it",
        dest.display(),
        path.display()
    )
}
