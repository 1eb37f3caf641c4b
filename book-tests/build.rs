//! Prepares the book's chapters for skeptic.
//!
//! 1. Expands every `{{#include}}` and `{{#rustdoc_include}}` of `src/` as mdBook would,
//!    into `$OUT_DIR/book/`. A missing file, a missing anchor or an empty selection stops
//!    the build with the chapter and line: mdBook itself would show an empty listing.
//! 2. Puts the shared skeptic templates next to every expanded chapter.
//! 3. Lets skeptic turn every ```rust block into a test.

#[path = "src/includes.rs"]
#[allow(dead_code)]
mod includes;

use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    let package = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = package.parent().unwrap().to_path_buf();
    let book_source = root.join("src");
    let output = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("book");
    let templates_path = package.join("templates.skt.md");

    // Chapters, and everything they can include, decide whether this must run again.
    for watched in [
        "src",
        "code/src",
        "code/examples",
        "shaders",
        "exercises",
        "gui/src",
        "python/src",
        "cpp",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }
    println!("cargo:rerun-if-changed={}", templates_path.display());

    let templates = fs::read_to_string(&templates_path).expect("book-tests/templates.skt.md");
    let mut expanded_chapters = Vec::new();
    let mut failures = Vec::new();
    for chapter in markdown_files(&book_source) {
        let relative = chapter.strip_prefix(&root).unwrap().to_path_buf();
        match includes::expand_chapter(&chapter) {
            Ok(text) => {
                let destination = output.join(chapter.strip_prefix(&book_source).unwrap());
                write_if_changed(&destination, &text);
                write_if_changed(
                    &PathBuf::from(format!("{}.skt.md", destination.display())),
                    &templates,
                );
                expanded_chapters.push(destination);
            }
            Err(mut error) => {
                error.chapter = relative;
                failures.push(error);
            }
        }
    }
    if !failures.is_empty() {
        for failure in &failures {
            eprintln!("error: {failure}");
        }
        eprintln!(
            "error: {} include directive(s) in the book could not be expanded; \
             mdBook would show an empty listing for each",
            failures.len()
        );
        std::process::exit(1);
    }
    skeptic::generate_doc_tests(&expanded_chapters);
}

fn markdown_files(directory: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in fs::read_dir(&current).into_iter().flatten().flatten() {
            let path = entry.path();
            // `file_type` does not follow links: `src/figures` links to data, not chapters.
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                pending.push(path);
            } else if path.extension().is_some_and(|extension| extension == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Rewrites a file only when its text changes, so unchanged chapters keep their
/// timestamps and do not make cargo rebuild the tests.
fn write_if_changed(path: &Path, text: &str) {
    if fs::read_to_string(path).is_ok_and(|existing| existing == text) {
        return;
    }
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}
