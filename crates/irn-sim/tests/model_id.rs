//! What the model id hashes (`build.rs`): a run's sources without their unit tests.

use std::path::{Path, PathBuf};

#[allow(dead_code)]
#[path = "../build.rs"]
mod build;

const MODEL: &str = "pub fn f() -> u32 {\n    1\n}\n";

#[test]
fn a_closing_test_module_is_left_out_and_nothing_else() {
    let tests = "#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n\n    // }\n}\n";
    let cases: [(String, &str); 6] = [
        (MODEL.to_string(), MODEL),
        (
            format!("{MODEL}\n{tests}"),
            "pub fn f() -> u32 {\n    1\n}\n\n",
        ),
        (
            format!("{MODEL}\n{tests}\n\n"),
            "pub fn f() -> u32 {\n    1\n}\n\n",
        ),
        // Code after the module, or a line of it at column 0, keeps the file whole.
        (format!("{MODEL}\n{tests}pub fn g() {{}}\n"), ""),
        (
            format!("{MODEL}\n#[cfg(test)]\nmod tests {{\n    const S: &str = r\"\nx\";\n}}\n"),
            "",
        ),
        // A module that is only compiled in tests under another name stays in.
        (format!("{MODEL}\n#[cfg(test)]\nmod helpers {{\n}}\n"), ""),
    ];
    for (text, want) in &cases {
        let want = if want.is_empty() { text.as_str() } else { want };
        let got = std::str::from_utf8(build::model_part(text.as_bytes())).unwrap();
        assert_eq!(got, want, "for\n{text}");
    }
}

/// Every unit-test module of the sources the id hashes is laid out so that it is left out:
/// otherwise an edit to a test makes every cached run of a results folder run again.
#[test]
fn every_unit_test_module_is_left_out_of_the_hash() {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for root in ["src", "../irn-core/src"] {
        collect(&crate_dir.join(root), &mut files);
    }
    assert!(files.len() > 50, "found {} source files", files.len());
    let mut left_out = 0;
    for file in &files {
        if build::is_test_file(file) {
            left_out += 1;
            continue;
        }
        let bytes = std::fs::read(file).unwrap();
        let kept = String::from_utf8_lossy(build::model_part(&bytes));
        assert!(
            !kept.contains("mod tests {"),
            "{}: its test module is hashed into the model id; close the file with it, \
             `#[cfg(test)]` then `mod tests {{`, as rustfmt lays it out",
            file.display()
        );
        left_out += usize::from(kept.len() < bytes.len());
    }
    assert!(left_out > 50, "{left_out} files had tests left out");
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}
