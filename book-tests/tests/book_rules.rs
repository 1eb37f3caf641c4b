//! The book's house rules, checked on every `cargo test`.
//!
//! - no ```rust block is marked `ignore`: every snippet compiles and runs;
//! - every heading carries its difficulty level as a `{.level-N}` class, N in 1..=5;
//! - SUMMARY.md links only to files that exist, and every chapter file is in it;
//! - a block that uses the companion crate is marked `noplayground`: the Rust playground
//!   cannot run it, so the page must not offer a Run button that fails;
//! - every SUMMARY.md title is the linked page's `#` title (without its level class), so the
//!   sidebar and the page never name a chapter differently;
//! - the entry page (the first chapter, which mdBook also makes index.html) has a status box,
//!   `<div class="book-status">` with one `<li data-module="N" data-status="…">` per module,
//!   and each status agrees with SUMMARY.md: "planned" if the module has a draft chapter
//!   (`- [Title]()`), "complete" otherwise.

use std::path::Path;

use book_tests::includes::{expand_chapter, expand_text};
use book_tests::markdown::{CodeBlock, code_blocks, headings, links};
use book_tests::summary::{ModuleStatus, module_statuses, status_box};
use book_tests::{markdown_files, repository_root};

fn chapters() -> Vec<std::path::PathBuf> {
    markdown_files(&repository_root().join("src"))
}

fn relative(path: &Path) -> String {
    path.strip_prefix(repository_root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Every ```rust block of the book: where it is in its chapter (as written), its
/// attributes, and its body as mdBook shows it (includes expanded).
fn rust_blocks() -> Vec<(String, CodeBlock)> {
    let mut blocks = Vec::new();
    for chapter in chapters() {
        let text = std::fs::read_to_string(&chapter).unwrap();
        let directory = chapter.parent().unwrap();
        for mut block in code_blocks(&text) {
            if block.language() != "rust" {
                continue;
            }
            block.body = expand_text(&block.body, directory, &chapter, Some(block.line), 0)
                .unwrap_or_else(|error| panic!("{error}"));
            let location = format!("{}:{}: ```{}", relative(&chapter), block.line, block.info);
            blocks.push((location, block));
        }
    }
    blocks
}

/// The locations of the rust blocks for which `breaks_the_rule` is true.
fn rust_blocks_where(breaks_the_rule: impl Fn(&CodeBlock) -> bool) -> Vec<String> {
    rust_blocks()
        .into_iter()
        .filter(|(_, block)| breaks_the_rule(block))
        .map(|(location, _)| location)
        .collect()
}

#[test]
fn no_rust_block_is_ignored() {
    let offenders = rust_blocks_where(|block| block.attributes().contains(&"ignore"));
    assert!(
        offenders.is_empty(),
        "rust blocks marked `ignore` (every snippet must compile; show a block that must \
         not compile as ```text, with the reason):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn blocks_that_need_the_crate_are_not_sent_to_the_playground() {
    let offenders = rust_blocks_where(|block| {
        let attributes = block.attributes();
        let needs_the_crate = ["galaxy", "wgpu", "crate::", "pollster"]
            .iter()
            .any(|name| block.body.contains(name))
            || attributes
                .iter()
                .any(|attribute| attribute.starts_with("skt-"));
        needs_the_crate && !attributes.contains(&"noplayground")
    });
    assert!(
        offenders.is_empty(),
        "rust blocks that use the companion crate must be marked `noplayground` (the Rust \
         playground does not have the crate; name the local command instead):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn every_heading_has_a_level() {
    let mut offenders = Vec::new();
    for chapter in chapters() {
        if chapter.file_name().is_some_and(|name| name == "SUMMARY.md") {
            continue;
        }
        // Expanded, so that headings inside included Markdown are checked too.
        let text = expand_chapter(&chapter).unwrap_or_else(|error| panic!("{error}"));
        for heading in headings(&text) {
            if heading.level().is_none() {
                offenders.push(format!(
                    "{}:{}: {}",
                    relative(&chapter),
                    heading.line,
                    heading.text
                ));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "headings without a {{.level-N}} class (N from 1 to 5):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn summary_links_exist_and_every_chapter_is_listed() {
    let source = repository_root().join("src");
    let summary = std::fs::read_to_string(source.join("SUMMARY.md")).expect("src/SUMMARY.md");
    let mut problems = Vec::new();
    let mut listed = Vec::new();
    for link in links(&summary) {
        // Draft chapters have an empty link: planned, not yet written.
        if link.destination.is_empty() {
            continue;
        }
        let target = source.join(link.destination.split('#').next().unwrap());
        if !target.is_file() {
            problems.push(format!(
                "src/SUMMARY.md:{}: links to {}, which does not exist",
                link.line, link.destination
            ));
        }
        listed.push(target);
    }
    for chapter in chapters() {
        let is_summary = chapter.file_name().is_some_and(|name| name == "SUMMARY.md");
        if !is_summary && !listed.contains(&chapter) {
            problems.push(format!(
                "{} is not listed in src/SUMMARY.md",
                relative(&chapter)
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn summary_text() -> String {
    std::fs::read_to_string(repository_root().join("src").join("SUMMARY.md"))
        .expect("src/SUMMARY.md")
}

#[test]
fn summary_titles_are_the_page_titles() {
    let source = repository_root().join("src");
    let mut problems = Vec::new();
    for link in links(&summary_text()) {
        if link.destination.is_empty() {
            continue;
        }
        let path = source.join(link.destination.split('#').next().unwrap());
        // A missing file is reported by summary_links_exist_and_every_chapter_is_listed.
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let title = headings(&text)
            .into_iter()
            .find(|heading| heading.rank == 1);
        match title {
            None => problems.push(format!(
                "src/SUMMARY.md:{}: {} has no `#` title",
                link.line, link.destination
            )),
            Some(title) if title.text.trim() != link.text.trim() => problems.push(format!(
                "src/SUMMARY.md:{}: \"{}\", but {}:{} is titled \"{}\"",
                link.line,
                link.text.trim(),
                relative(&path),
                title.line,
                title.text.trim()
            )),
            Some(_) => {}
        }
    }
    assert!(
        problems.is_empty(),
        "SUMMARY.md titles that differ from their page's `#` title (make them the same, \
         in SUMMARY.md or on the page):\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_entry_page_says_which_modules_are_written() {
    let summary = summary_text();
    let entry = links(&summary)
        .into_iter()
        .find(|link| !link.destination.is_empty())
        .expect("SUMMARY.md links at least one chapter");
    let path = repository_root().join("src").join(&entry.destination);
    let page = std::fs::read_to_string(&path).unwrap();
    let name = relative(&path);
    let entries = match status_box(&page) {
        Ok(Some(entries)) => entries,
        Ok(None) => panic!(
            "{name} (the entry page) has no status box: add <div class=\"book-status\"> with \
             one <li data-module=\"N\" data-status=\"complete|planned\"> per module"
        ),
        Err(error) => panic!("{name}: {error}"),
    };
    let mut problems = Vec::new();
    let expected = module_statuses(&summary);
    for (module, status) in &expected {
        let found: Vec<_> = entries
            .iter()
            .filter(|entry| entry.module == *module)
            .collect();
        match found.as_slice() {
            [] => problems.push(format!(
                "module {module} is missing; SUMMARY.md says it is {}",
                status.as_str()
            )),
            [entry] if entry.status != status.as_str() => problems.push(format!(
                "{name}:{}: module {module} is marked \"{}\", but SUMMARY.md says {} ({})",
                entry.line,
                entry.status,
                status.as_str(),
                match status {
                    ModuleStatus::Planned => "it has draft chapters",
                    ModuleStatus::Complete => "none of its chapters is a draft",
                }
            )),
            [_] => {}
            several => problems.push(format!(
                "module {module} is listed {} times (lines {})",
                several.len(),
                several
                    .iter()
                    .map(|entry| entry.line.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
    for entry in &entries {
        if !expected.iter().any(|(module, _)| *module == entry.module) {
            problems.push(format!(
                "{name}:{}: module {} is not a part of SUMMARY.md",
                entry.line, entry.module
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "the status box of {name} disagrees with src/SUMMARY.md:\n{}",
        problems.join("\n")
    );
}
