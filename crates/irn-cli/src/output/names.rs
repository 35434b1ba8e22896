//! Folder names made from names in scenario and sweep files (a scenario's `name`, `[[compare]]`
//! names, grid values, experiment ids), checked before anything runs: a name that gives no
//! usable folder, or the folder another name gives, would send two results to one place or
//! results where they do not belong (`name = ""` is `results/` itself).

use anyhow::{bail, Result};

use super::{folder_name, keep, MARKER};

/// The longest file name ext4, XFS, btrfs, APFS and NTFS take, in bytes.
pub const NAME_MAX: usize = 255;

/// What irn writes beside the folders of variants, grid points and experiments, besides its
/// marker and a run's files ([`keep::RUN_FILES`]): such a folder may not take one of these
/// names.
const OTHER_OWN_NAMES: [&str; 6] = [
    "plots",
    "report.html",
    "report.md",
    "reproduce.json",
    "sweep.csv",
    "sweep_summary.csv",
];

/// Whether `name` is that of a file or folder irn writes beside a variant's folder.
fn is_own_name(name: &str) -> bool {
    name == MARKER || keep::RUN_FILES.contains(&name) || OTHER_OWN_NAMES.contains(&name)
}

/// The folder [`folder_name`] makes of `name`, refused when it is empty, starts with `.` (`.`,
/// `..`, irn's marker and temporaries), or is longer than a file system takes, and refused when
/// `name` holds a control character (a newline or NUL would garble the table, the CSV files and
/// every line that shows the name, even though its folder name would not keep it). `what` names
/// where the name comes from in the error, e.g. `s.toml: name`.
pub fn top_folder(what: &str, name: &str) -> Result<String> {
    let folder = folder_name(name);
    let shown = shown(name);
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        bail!(
            "{what} = {shown}: holds the control character U+{:04X}; a name is one line of \
             printable characters",
            u32::from(c)
        );
    }
    let why = if folder.is_empty() {
        "is empty".to_string()
    } else if folder.starts_with('.') {
        format!(
            "`{}` starts with `.`, as irn's own hidden files do",
            shown_folder(&folder)
        )
    } else if folder.len() > NAME_MAX {
        format!(
            "is {} bytes long, and a folder name has at most {NAME_MAX}",
            folder.len()
        )
    } else {
        return Ok(folder);
    };
    bail!(
        "{what} = {shown}: its folder name {why}; give a name with letters or digits (they, \
         `-`, `_`, `+` and `.` are kept, any other character becomes `_`)"
    )
}

/// How many characters of a refused name an error echoes: enough to recognise it, not a
/// screenful (a generated name can run to megabytes).
const SHOWN_CHARS: usize = 60;

/// `name` quoted as an error echoes it: whole when short, else its start and its length.
fn shown(name: &str) -> String {
    let count = name.chars().count();
    if count <= SHOWN_CHARS {
        return format!("{name:?}");
    }
    let start: String = name.chars().take(SHOWN_CHARS).collect();
    format!("{start:?}… ({count} characters)")
}

/// A folder name as an error echoes it, cut like [`shown`]'s names.
fn shown_folder(folder: &str) -> String {
    match folder.char_indices().nth(SHOWN_CHARS) {
        Some((end, _)) => format!("{}…", &folder[..end]),
        None => folder.to_string(),
    }
}

/// [`top_folder`] for a folder inside an irn results folder, also refused when it is the name
/// of a file irn writes there (`summary.json`, `plots`, …).
pub fn sub_folder(what: &str, name: &str) -> Result<String> {
    let folder = top_folder(what, name)?;
    if is_own_name(&folder) {
        bail!(
            "{what} = {name:?}: its folder `{folder}` would take the name of a file irn writes \
             beside it; choose another name"
        );
    }
    Ok(folder)
}

/// Refuses two names that make the same folder (`a/b` and `a_b`), naming both: the second
/// would overwrite the first. `names` are (name, folder); `what` says what they name, e.g.
/// `[[compare]] names`.
pub fn distinct<'a>(what: &str, names: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<()> {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for (name, folder) in names {
        if let Some((other, _)) = seen.iter().find(|(_, f)| *f == folder) {
            bail!(
                "{what} `{other}` and `{name}` both make the folder `{folder}`, and one would \
                 overwrite the other; rename one"
            );
        }
        seen.push((name, folder));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_give_no_folder_of_their_own_are_refused() {
        for bad in ["", ".", "..", ".irn-results", &"x".repeat(256)] {
            assert!(top_folder("s.toml: name", bad).is_err(), "{bad:?}");
        }
        assert_eq!(top_folder("n", "a/b").unwrap(), "a_b");
        assert!(sub_folder("n", "plots").is_err());
        for (bad, said) in [("a\nb", "U+000A"), ("a\0", "U+0000"), ("\t", "U+0009")] {
            let err = top_folder("s.toml: name", bad).unwrap_err().to_string();
            assert!(
                err.contains(said) && err.contains("s.toml: name = "),
                "{err}"
            );
        }
        // A long name is echoed by its start and length, not whole.
        let err = top_folder("s.toml: name", &"x".repeat(65_536)).unwrap_err();
        let err = err.to_string();
        assert!(err.len() < 400, "{err}");
        assert!(err.contains("… (65536 characters): its folder name is 65536 bytes long"));
        assert!(top_folder("n", "plots").is_ok());
        let err = distinct("names", [("a/b", "a_b"), ("c", "c"), ("a_b", "a_b")]).unwrap_err();
        assert!(err.to_string().contains("`a/b` and `a_b`"), "{err}");
    }
}
