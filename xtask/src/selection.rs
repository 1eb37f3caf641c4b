//! Choosing a syllabus's chapters from the book's `SUMMARY.md`, and writing the
//! table of contents of the syllabus book.

use std::collections::HashSet;

use crate::summary::{Chapter, Summary, write_chapter};
use crate::syllabus::{Syllabus, SyllabusError};

/// One entry of the syllabus's `chapters`, found in `SUMMARY.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// The part the chapters belong to; the syllabus book shows it as a part title too.
    pub part_title: Option<String>,
    /// A whole part's chapters, or the one chosen chapter with the chapters nested in it.
    pub chapters: Vec<Chapter>,
}

/// Finds every entry of `syllabus.chapters` in the summary: a part title selects the whole
/// part, a chapter file selects that chapter. Draft chapters come along as drafts.
pub fn select_chapters(
    syllabus: &Syllabus,
    summary: &Summary,
) -> Result<Vec<Selection>, SyllabusError> {
    let mut selections = Vec::new();
    let mut files_seen = HashSet::new();
    for entry in &syllabus.chapters {
        let selection = if let Some(part) = summary.part(&entry.text) {
            Selection {
                part_title: part.title.clone(),
                chapters: part.chapters.clone(),
            }
        } else if let Some((part_title, chapter)) = summary.chapter(&entry.text) {
            Selection {
                part_title: part_title.map(str::to_string),
                chapters: vec![chapter.clone()],
            }
        } else {
            return Err(syllabus.error_at(
                entry,
                format!(
                    "{:?} is neither a chapter file nor a part title of src/SUMMARY.md \
                     (a draft chapter, `- [Title]()`, has no file to select: select its part)",
                    entry.text
                ),
            ));
        };
        // mdBook cannot show one file twice, and a course would not want to.
        for path in selection.chapters.iter().flat_map(chapter_files) {
            if !files_seen.insert(path.clone()) {
                return Err(syllabus.error_at(
                    entry,
                    format!("{path} is already in the syllabus (listed twice, or inside a part listed too)"),
                ));
            }
        }
        selections.push(selection);
    }
    Ok(selections)
}

/// The files of a chapter and of the chapters nested in it.
pub fn chapter_files(chapter: &Chapter) -> Vec<String> {
    let mut files: Vec<String> = chapter.path.iter().cloned().collect();
    for child in &chapter.children {
        files.extend(chapter_files(child));
    }
    files
}

/// A page shown before the parts, as mdBook's prefix chapters are.
pub struct PrefixPage {
    pub title: String,
    pub path: String,
}

/// The syllabus book's `SUMMARY.md`. A chapter chosen on its own still appears under its
/// part's title, so a reader always knows which module a chapter comes from.
pub fn write_summary(prefix_pages: &[PrefixPage], selections: &[Selection]) -> String {
    let mut out = String::from("# Summary\n\n");
    for page in prefix_pages {
        out.push_str(&format!("[{}]({})\n", page.title, page.path));
    }
    let mut current_part: Option<&str> = None;
    for selection in selections {
        if selection.chapters.is_empty() {
            continue;
        }
        if let Some(title) = selection.part_title.as_deref()
            && current_part != Some(title)
        {
            out.push_str(&format!("\n# {title}\n\n"));
            current_part = Some(title);
        }
        for chapter in &selection.chapters {
            write_chapter(chapter, 0, &mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    const SUMMARY: &str = "# Summary\n\n# Module 0: Introduction\n\n\
        - [How to use this book](how-to-use-this-book.md)\n- [Why this book exists]()\n\n\
        # Module 1: Memory\n\n- [Caches](caches.md)\n    - [Virtual memory]()\n";

    fn syllabus(chapters: &str) -> Syllabus {
        let text = format!(
            "name = \"course\"\ntitle = \"Course\"\nmax_level = 2\nchapters = [\n{chapters}]\n"
        );
        Syllabus::parse(&text, Path::new("course.toml")).unwrap()
    }

    #[test]
    fn an_unknown_chapter_names_its_line() {
        let syllabus = syllabus("    \"how-to-use-this-book.md\",\n    \"Module 1: Memroy\",\n");
        let error = select_chapters(&syllabus, &Summary::parse(SUMMARY)).unwrap_err();
        match error {
            SyllabusError::AtLine { line, message, .. } => {
                assert_eq!(line, 6);
                assert!(message.contains("Module 1: Memroy"), "{message}");
            }
            other => panic!("expected an error with a line, got {other:?}"),
        }
        assert!(
            error_text("    \"Module 1: Memroy\",\n").starts_with("course.toml:5:"),
            "the message starts with file and line"
        );
    }

    fn error_text(chapters: &str) -> String {
        select_chapters(&syllabus(chapters), &Summary::parse(SUMMARY))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_chapter_listed_twice_is_an_error() {
        let message = error_text("\"Module 1: Memory\",\n\"caches.md\",\n");
        assert!(message.starts_with("course.toml:6:"), "{message}");
    }

    #[test]
    fn parts_and_chapters_are_written_in_the_syllabus_order() {
        let syllabus = syllabus("\"Module 1: Memory\",\n\"how-to-use-this-book.md\",\n");
        let selections = select_chapters(&syllabus, &Summary::parse(SUMMARY)).unwrap();
        let schedule = PrefixPage {
            title: "Schedule".to_string(),
            path: "schedule.md".to_string(),
        };
        assert_eq!(
            write_summary(&[schedule], &selections),
            "# Summary\n\n[Schedule](schedule.md)\n\n# Module 1: Memory\n\n\
             - [Caches](caches.md)\n    - [Virtual memory]()\n\n\
             # Module 0: Introduction\n\n- [How to use this book](how-to-use-this-book.md)\n"
        );
    }
}
