//! Sets `IRN_MODEL_ID`: a hash of every file that decides what a run computes (this crate's
//! and `irn-core`'s sources, and the size distributions compiled in). A results folder records
//! it, so `irn sweep` and `irn reproduce` reuse a run only when the simulator that made it is
//! this one: after an upgrade they rerun instead of reporting another version's numbers.
//!
//! Unit tests are left out of the hash (a file's closing `#[cfg(test)] mod tests { ... }`, and a
//! `tests.rs` its parent declares under `#[cfg(test)]`): they do not change what a run computes,
//! and an edit to one would otherwise make every cached run of a results folder run again.

use std::path::{Path, PathBuf};

fn main() {
    let crate_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let roots = ["src", "../irn-core/src", "../../data/cdf"];
    let mut files = Vec::new();
    for root in roots {
        let dir = crate_dir.join(root);
        println!("cargo:rerun-if-changed={}", dir.display());
        collect(&dir, &mut files);
    }
    files.sort();
    // FNV-1a over each file's path below this crate and its bytes: stable across machines
    // and checkouts of the same sources.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for &b in bytes {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for file in files.iter().filter(|f| !is_test_file(f)) {
        let name = file.strip_prefix(&crate_dir).unwrap_or(file);
        feed(name.to_string_lossy().replace('\\', "/").as_bytes());
        feed(&[0]);
        let bytes = std::fs::read(file).expect("a source file is readable");
        feed(model_part(&bytes));
        feed(&[0]);
    }
    println!("cargo:rustc-env=IRN_MODEL_ID={hash:016x}");
}

/// `tests.rs` whose sibling `mod.rs` declares it as `#[cfg(test)] mod tests;`.
pub fn is_test_file(file: &Path) -> bool {
    if file.file_name().is_none_or(|n| n != "tests.rs") {
        return false;
    }
    let parent = file.with_file_name("mod.rs");
    std::fs::read_to_string(parent).is_ok_and(|s| s.contains("#[cfg(test)]\nmod tests;"))
}

/// A source file without its closing unit-test module: the bytes before a line `#[cfg(test)]`
/// followed by `mod tests {`, when every line after it is blank or indented but the last,
/// `}` (as rustfmt lays a module out), so nothing else can hide in what is left out. Any other
/// file is hashed whole.
pub fn model_part(bytes: &[u8]) -> &[u8] {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return bytes;
    };
    let Some(start) = text.rfind("\n#[cfg(test)]\nmod tests {\n") else {
        return bytes;
    };
    let body = &text[start + 1..];
    let mut lines: Vec<&str> = body.lines().skip(2).collect();
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    let closed = lines.pop() == Some("}");
    let nested = lines
        .iter()
        .all(|l| l.is_empty() || l.starts_with(' ') || l.starts_with('\t'));
    if closed && nested {
        &bytes[..start + 1]
    } else {
        bytes
    }
}

/// Every file below `dir`, at any depth.
fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else {
            out.push(path);
        }
    }
}
