//! The book's house rules, checked on every `cargo test`.
//!
//! - no ```rust block is marked `ignore`: every snippet compiles and runs;
//! - every heading carries its difficulty level as a `{.level-N}` class, N in 1..=5;
//! - SUMMARY.md links only to files that exist, and every chapter file is in it;
//! - a block that uses the companion crate is marked `noplayground`: the Rust playground
//!   cannot run it, so the page must not offer a Run button that fails.

use std::path::Path;

use book_tests::includes::{expand_chapter, expand_text};
use book_tests::markdown::{CodeBlock, code_blocks, headings, links};
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
