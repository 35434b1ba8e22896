//! What irn wrote in a folder, and moving everything else out of the way of a replacement.
//!
//! Every marker irn writes lists, in `files`, the paths (relative, `/`-separated, at any depth)
//! of the files and folders irn wrote in that folder; `irn plot` adds its report and `plots/` to
//! it. An entry the list does not name is someone else's: replacing the folder moves it into
//! the new one, unchanged. A listed folder is looked into (a person's file inside a variant's
//! folder is kept too); a folder the list does not name is kept whole. A marker without the
//! list (irn before it existed) counts as irn's only the files a run writes (`summary.json`,
//! `flows.csv`, `fct.txt`, `comparison.csv`, `trace.csv`, `series/`), at the top and in the
//! folders beside them that hold a `summary.json`.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use super::{Marker, MARKER};

/// What a run writes, counted as irn's in a folder whose marker has no list.
pub(super) const RUN_FILES: [&str; 6] = [
    "summary.json",
    "flows.csv",
    "fct.txt",
    "comparison.csv",
    "trace.csv",
    "series",
];

/// The paths irn wrote in `dir`, from its marker (see the module's doc).
fn owned(dir: &Path) -> BTreeSet<PathBuf> {
    let marker = Marker::read(dir);
    if let Some(files) = marker.as_ref().and_then(|m| m.files.as_ref()) {
        return files.iter().map(PathBuf::from).collect();
    }
    let mut folders = vec![PathBuf::new()];
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let sub = PathBuf::from(entry.file_name());
        let real_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if real_dir && dir.join(&sub).join("summary.json").is_file() {
            folders.push(sub);
        }
    }
    let mut owned = BTreeSet::new();
    for rel in folders {
        for name in RUN_FILES {
            if fs::symlink_metadata(dir.join(&rel).join(name)).is_ok() {
                owned.insert(rel.join(name));
            }
        }
        owned.insert(rel);
    }
    owned
}

/// The entries below `dir` irn did not write (see the module's doc), relative to `dir`, in name
/// order; a folder irn did not write is one entry.
pub fn foreign(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    walk(dir, Path::new(""), &owned(dir), &mut out);
    out
}

fn walk(root: &Path, rel: &Path, owned: &BTreeSet<PathBuf>, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(root.join(rel)) else {
        return;
    };
    let mut names: Vec<_> = entries.flatten().map(|e| e.file_name()).collect();
    names.sort();
    for name in names {
        if name == MARKER {
            continue;
        }
        let path = rel.join(&name);
        if !owned.contains(&path) {
            out.push(path);
            continue;
        }
        let full = root.join(&path);
        if fs::symlink_metadata(&full).is_ok_and(|m| m.is_dir()) {
            // A folder irn marked inside this one (`plots/`) lists its own files.
            let mut owned = owned.clone();
            if full.join(MARKER).is_file() {
                owned.extend(self::owned(&full).into_iter().map(|p| path.join(p)));
            }
            walk(root, &path, &owned, out);
        }
    }
}

/// [`foreign`] entries of `dir` to move into `into`: a folder that `into` has too is looked
/// into, so that its entries move one by one (a person's folder named as irn now names one).
pub fn foreign_into(dir: &Path, into: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = foreign(dir);
    todo.reverse();
    while let Some(rel) = todo.pop() {
        let both =
            [dir, into].map(|d| fs::symlink_metadata(d.join(&rel)).is_ok_and(|m| m.is_dir()));
        if both == [true, true] {
            let mut names: Vec<_> = (fs::read_dir(dir.join(&rel)).into_iter().flatten().flatten())
                .filter(|e| e.file_name() != MARKER)
                .map(|e| rel.join(e.file_name()))
                .collect();
            names.sort();
            todo.extend(names.into_iter().rev());
        } else {
            out.push(rel);
        }
    }
    out
}

/// Every entry below `dir` (files and folders, markers left out), as a marker lists them.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    list(dir, Path::new(""), &mut out);
    out.sort();
    out
}

fn list(root: &Path, rel: &Path, out: &mut Vec<String>) {
    for entry in fs::read_dir(root.join(rel)).into_iter().flatten().flatten() {
        if entry.file_name() == MARKER {
            continue;
        }
        let path = rel.join(entry.file_name());
        out.push(slashed(&path));
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            list(root, &path, out);
        }
    }
}

/// A relative path as markers list it, `/`-separated on every platform.
pub fn slashed(path: &Path) -> String {
    let parts: Vec<_> = path.iter().map(|p| p.to_string_lossy()).collect();
    parts.join("/")
}

/// Whether `rel` cannot move into `into`: something is at its place, or a file where one of its
/// folders would go.
pub fn in_the_way(into: &Path, rel: &Path) -> bool {
    rel.ancestors()
        .filter(|a| !a.as_os_str().is_empty())
        .any(|a| match fs::symlink_metadata(into.join(a)) {
            Ok(m) => a == rel || !m.is_dir(),
            Err(_) => false,
        })
}

/// Moves `from/rel` to `into/rel`, creating the folders on the way as `from` has them (a
/// folder irn marked gets a marker listing nothing, so irn may write into it again).
pub fn move_entry(from: &Path, into: &Path, rel: &Path) -> std::io::Result<()> {
    let mut at = PathBuf::new();
    for part in rel.parent().into_iter().flat_map(Path::iter) {
        at.push(part);
        let dir = into.join(&at);
        if !dir.is_dir() {
            fs::create_dir(&dir)?;
            if let Some(mut marker) = Marker::read(&from.join(&at)) {
                marker.files = Some(Vec::new());
                let json = serde_json::to_string_pretty(&marker)? + "\n";
                fs::write(dir.join(MARKER), json)?;
            }
        }
    }
    fs::rename(from.join(rel), into.join(rel))
}

/// Moves every entry of `from` irn did not write into `into` (see [`move_entry`]); returns
/// those it could not move: something of the same name is in `into`, or the move failed.
pub fn rescue(from: &Path, into: &Path) -> Vec<PathBuf> {
    foreign_into(from, into)
        .into_iter()
        .filter(|rel| in_the_way(into, rel) || move_entry(from, into, rel).is_err())
        .collect()
}
