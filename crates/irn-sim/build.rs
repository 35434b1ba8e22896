//! Sets `IRN_MODEL_ID`: a hash of every file that decides what a run computes (this crate's
//! and `irn-core`'s sources, and the size distributions compiled in). A results folder records
//! it, so `irn sweep` and `irn reproduce` reuse a run only when the simulator that made it is
//! this one: after an upgrade they rerun instead of reporting another version's numbers.

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
    for file in &files {
        let name = file.strip_prefix(&crate_dir).unwrap_or(file);
        feed(name.to_string_lossy().replace('\\', "/").as_bytes());
        feed(&[0]);
        feed(&std::fs::read(file).expect("a source file is readable"));
        feed(&[0]);
    }
    println!("cargo:rustc-env=IRN_MODEL_ID={hash:016x}");
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
