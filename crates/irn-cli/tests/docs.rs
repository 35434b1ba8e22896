//! The documentation holds together: every relative link in README.md, ARCHITECTURE.md,
//! `docs/` and `dev/` (and every image) names a file that exists and, with `#anchor`, a
//! heading of that file, so moving a section or renaming a page cannot leave a reader at a
//! dead link.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file under `dir` (relative to the repository), in order.
fn files_under(dir: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![PathBuf::from(dir)];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(root().join(&dir)).unwrap() {
            let entry = entry.unwrap();
            let rel = dir.join(entry.file_name());
            match entry.file_type().unwrap().is_dir() {
                true => stack.push(rel),
                false => files.push(rel),
            }
        }
    }
    files.sort();
    files
}

/// The Markdown files a user or a developer reads: README.md, ARCHITECTURE.md and everything
/// under `docs/` and `dev/`.
fn pages() -> Vec<PathBuf> {
    let docs = files_under("docs").into_iter().chain(files_under("dev"));
    let mut pages = vec![PathBuf::from("README.md"), PathBuf::from("ARCHITECTURE.md")];
    pages.extend(docs.filter(|p| p.extension().is_some_and(|e| e == "md")));
    pages
}

/// GitHub's anchor for a heading: lower case, every character but letters, digits, spaces,
/// `-` and `_` removed, spaces made `-`.
fn slug(text: &str) -> String {
    text.to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// A page's anchors (its headings' slugs, a repeated one numbered `-1`, `-2`… as GitHub does,
/// and explicit `id="…"`s in inline HTML) and its links' destinations.
struct Page {
    anchors: BTreeSet<String>,
    links: Vec<String>,
}

fn read_page(text: &str) -> Page {
    let mut anchors = BTreeSet::new();
    let mut links = Vec::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut heading: Option<String> = None;
    for event in Parser::new(text) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => {
                let base = slug(&heading.take().unwrap_or_default());
                let n = seen.entry(base.clone()).or_insert(0);
                anchors.insert(match *n {
                    0 => base,
                    k => format!("{base}-{k}"),
                });
                *n += 1;
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::Html(h) | Event::InlineHtml(h) => {
                for part in h.split("id=\"").skip(1) {
                    if let Some((id, _)) = part.split_once('"') {
                        anchors.insert(id.to_string());
                    }
                }
            }
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                links.push(dest_url.to_string())
            }
            _ => {}
        }
    }
    Page { anchors, links }
}

/// `base/rel` with `.` and `..` resolved, without touching the file system.
fn join(base: &Path, rel: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for c in base.join(rel).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// Where `link`, found on `page`, is broken: `None` when it resolves.
fn broken(page: &Path, link: &str, read: &mut BTreeMap<PathBuf, Page>) -> Option<String> {
    if link.contains("://") || link.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = link.split_once('#').unwrap_or((link, ""));
    let target = match path {
        "" => page.to_path_buf(),
        p => join(page.parent().unwrap_or(Path::new("")), p),
    };
    let full = root().join(&target);
    if !full.exists() {
        return Some(format!("{} does not exist", target.display()));
    }
    if anchor.is_empty() || target.extension().is_none_or(|e| e != "md") {
        return None;
    }
    let text = std::fs::read_to_string(&full).unwrap();
    let target_page = read
        .entry(target.clone())
        .or_insert_with(|| read_page(&text));
    (!target_page.anchors.contains(anchor))
        .then(|| format!("{} has no heading `#{anchor}`", target.display()))
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let mut read = BTreeMap::new();
    let mut dead = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(root().join(&page)).unwrap();
        for link in read_page(&text).links {
            if let Some(why) = broken(&page, &link, &mut read) {
                dead.push(format!("{}: ({link}): {why}", page.display()));
            }
        }
    }
    assert!(dead.is_empty(), "dead links:\n{}", dead.join("\n"));
}

/// Every `why` of the shipped experiments (a check's link to the paragraph explaining a miss,
/// relative to the repository) names a page and a heading that exist.
#[test]
fn every_why_of_the_shipped_checks_resolves() {
    let mut read = BTreeMap::new();
    let mut dead = Vec::new();
    let mut whys = 0;
    for file in files_under("scenarios/paper") {
        let text = std::fs::read_to_string(root().join(&file)).unwrap();
        for line in text.lines() {
            let Some(link) = line.strip_prefix("why = \"") else {
                continue;
            };
            let link = link.trim_end_matches('"');
            whys += 1;
            if let Some(why) = broken(Path::new("README.md"), link, &mut read) {
                dead.push(format!("{}: why = {link}: {why}", file.display()));
            }
        }
    }
    assert!(whys > 0, "no `why` found: the test reads nothing");
    assert!(dead.is_empty(), "dead `why` links:\n{}", dead.join("\n"));
}

#[test]
fn slugs_follow_github() {
    assert_eq!(
        slug("The model, and its choices"),
        "the-model-and-its-choices"
    );
    assert_eq!(slug("`irn reproduce`"), "irn-reproduce");
    assert_eq!(slug("Eunomia's Clos results"), "eunomias-clos-results");
    let page = read_page("# A\n## A\ntext [x](b.md#c) <a id=\"here\"></a>\n");
    assert_eq!(
        page.anchors.into_iter().collect::<Vec<_>>(),
        ["a", "a-1", "here"]
    );
    assert_eq!(page.links, ["b.md#c"]);
}
