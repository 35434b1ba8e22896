//! The three starter scenarios of `docs/getting-started.md` print what the guide shows: each
//! `<!-- output of scenarios/start/NAME.toml -->` block is checked, line for line, against a
//! fresh `irn run` (wall time and events per second aside, which depend on the machine).

mod common;

use std::path::{Path, PathBuf};

use common::{irn, ok, scratch};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Lines that differ from machine to machine or with `--out`.
fn machine_dependent(line: &str) -> bool {
    ["wall time", "events/s", "results:", "charts:", "  irn plot"]
        .iter()
        .any(|p| line.trim_start().starts_with(p.trim_start()))
}

/// The fenced block the guide shows for `scenario`.
fn documented(guide: &str, scenario: &str) -> Vec<String> {
    let marker = format!("<!-- output of {scenario} -->");
    let (_, after) = guide
        .split_once(&marker)
        .unwrap_or_else(|| panic!("docs/getting-started.md has no `{marker}`"));
    let (_, block) = after.split_once("```text\n").expect("a ```text block");
    let (block, _) = block.split_once("```").expect("the block's end");
    block.lines().map(str::to_string).collect()
}

fn check(scenario: &str) {
    let guide = std::fs::read_to_string(root().join("docs/getting-started.md")).unwrap();
    let want = documented(&guide, scenario);
    let dir = scratch(&scenario.replace('/', "-"));
    let out = dir.join("out");
    let stdout = ok(&irn(
        &["run", scenario, "--out", out.to_str().unwrap()],
        &root(),
    ));
    let got: Vec<&str> = stdout.lines().filter(|l| !machine_dependent(l)).collect();
    let want: Vec<&str> = (want.iter().map(String::as_str))
        .filter(|l| !machine_dependent(l))
        .collect();
    assert_eq!(
        got, want,
        "{scenario}: `irn run` prints other than docs/getting-started.md shows"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_leaf_spine_starter_prints_what_the_guide_shows() {
    check("scenarios/start/leaf_spine.toml");
}

#[test]
fn the_jellyfish_starter_prints_what_the_guide_shows() {
    check("scenarios/start/jellyfish.toml");
}

#[test]
fn the_wan_starter_prints_what_the_guide_shows() {
    check("scenarios/start/wan.toml");
}
