//! Tools for checking the book's Markdown: the include expansion that runs before
//! skeptic, a small reader for the parts of a chapter the checks look at, and the table of
//! contents read as parts and module statuses.

pub mod includes;
pub mod markdown;
pub mod summary;

use std::path::{Path, PathBuf};

/// The repository's root directory.
pub fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("book-tests lives inside the repository")
        .to_path_buf()
}

/// Every Markdown file under `directory`, sorted, skeptic templates excluded.
pub fn markdown_files(directory: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(current) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            // `file_type` does not follow links: `src/figures` links to data, not chapters.
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                pending.push(path);
            } else if path.extension().is_some_and(|extension| extension == "md")
                && !path.to_string_lossy().ends_with(".skt.md")
            {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}
