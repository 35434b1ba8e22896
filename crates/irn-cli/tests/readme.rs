//! The README's quick start, as a newcomer meets it.

use std::path::Path;

/// The quick start begins with the build and says how long it takes: its first command once ran
/// `cargo run`, whose "~35 s" left out the minute and a half the first build takes.
#[test]
fn the_quick_start_begins_with_the_first_build_and_its_time() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let (_, start) = readme.split_once("## Quick start").unwrap();
    let (_, block) = start.split_once("```sh\n").unwrap();
    let first = block.lines().next().unwrap();
    assert!(
        first.starts_with("cargo build --release") && first.contains(" min"),
        "{first}"
    );
}
