//! The syllabus file: which chapters a course uses, in which order, up to which level.
//!
//! ```toml
//! name = "gpu-six-weeks"        # the output directory, book/gpu-six-weeks/
//! title = "GPU Computing in Six Weeks"
//! max_level = 3
//! chapters = ["how-to-use-this-book.md", "Module 1: Memory Hierarchies and Computational Graphs"]
//! extra_pages = ["syllabi/gpu-six-weeks/schedule.md"]
//! ```
//!
//! Every mistake is reported with the line of the syllabus file it is on, because an
//! instructor editing the file needs to know where to look, not only what is wrong.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

/// The levels a section can carry, from the big picture (1) to further reading (5).
pub const LEVELS: std::ops::RangeInclusive<i64> = 1..=5;

/// A syllabus, checked: the name is a safe directory name and the level is in range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Syllabus {
    /// The file it was read from, for error messages.
    pub path: PathBuf,
    pub name: String,
    pub title: String,
    pub max_level: u8,
    /// Chapter files or part titles of `src/SUMMARY.md`, in the order to show.
    pub chapters: Vec<Entry>,
    /// Instructor pages, relative to the repository root.
    pub extra_pages: Vec<Entry>,
}

/// One string of a list in the syllabus file, with the line it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub text: String,
    pub line: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum SyllabusError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{line}: {message}", path.display())]
    AtLine {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// The file as written, before the checks; `Spanned` keeps where each value was.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SyllabusFile {
    name: Spanned<String>,
    title: String,
    max_level: Spanned<i64>,
    chapters: Spanned<Vec<Spanned<String>>>,
    #[serde(default)]
    extra_pages: Vec<Spanned<String>>,
}

impl Syllabus {
    pub fn read(path: &Path) -> Result<Syllabus, SyllabusError> {
        let text = std::fs::read_to_string(path).map_err(|source| SyllabusError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Syllabus::parse(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Syllabus, SyllabusError> {
        let error_at = |offset: usize, message: String| SyllabusError::AtLine {
            path: path.to_path_buf(),
            line: line_of(text, offset),
            message,
        };
        let file: SyllabusFile = toml::from_str(text).map_err(|error| {
            let offset = error.span().map_or(0, |span| span.start);
            error_at(offset, error.message().to_string())
        })?;

        let name = file.name.get_ref();
        if !is_directory_name(name) {
            return Err(error_at(
                file.name.span().start,
                format!(
                    "name {name:?} must be lowercase letters, digits and dashes (it names the directory book/<name>/)"
                ),
            ));
        }
        let max_level = *file.max_level.get_ref();
        if !LEVELS.contains(&max_level) {
            return Err(error_at(
                file.max_level.span().start,
                format!("max_level is {max_level}, but levels go from 1 to 5"),
            ));
        }
        if file.chapters.get_ref().is_empty() {
            return Err(error_at(
                file.chapters.span().start,
                "chapters is empty: list at least one chapter file or part title".to_string(),
            ));
        }

        let entries = |list: Vec<Spanned<String>>| -> Vec<Entry> {
            list.into_iter()
                .map(|value| Entry {
                    line: line_of(text, value.span().start),
                    text: value.into_inner(),
                })
                .collect()
        };
        Ok(Syllabus {
            path: path.to_path_buf(),
            name: name.clone(),
            title: file.title,
            max_level: max_level as u8,
            chapters: entries(file.chapters.into_inner()),
            extra_pages: entries(file.extra_pages),
        })
    }

    /// An error about one entry of the file, named by its line.
    pub fn error_at(&self, entry: &Entry, message: String) -> SyllabusError {
        SyllabusError::AtLine {
            path: self.path.clone(),
            line: entry.line,
            message,
        }
    }
}

/// The 1-based line that a byte offset falls on.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

fn is_directory_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|character| {
            character.is_ascii_lowercase() || character.is_ascii_digit() || character == '-'
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Syllabus, SyllabusError> {
        Syllabus::parse(text, Path::new("course.toml"))
    }

    /// The line an error names, or a panic showing the unexpected success.
    fn error_line(text: &str) -> (usize, String) {
        match parse(text) {
            Err(SyllabusError::AtLine { line, message, .. }) => (line, message),
            other => panic!("expected an error with a line, got {other:?}"),
        }
    }

    const GOOD: &str = r#"name = "gpu-six-weeks"
title = "GPU Computing"
max_level = 3
chapters = [
    "how-to-use-this-book.md",
    "Module 1: Memory",
]
extra_pages = ["syllabi/gpu-six-weeks/schedule.md"]
"#;

    #[test]
    fn a_good_file_is_read_with_the_line_of_each_entry() {
        let syllabus = parse(GOOD).unwrap();
        assert_eq!(syllabus.name, "gpu-six-weeks");
        assert_eq!(syllabus.title, "GPU Computing");
        assert_eq!(syllabus.max_level, 3);
        let chapters: Vec<(&str, usize)> = syllabus
            .chapters
            .iter()
            .map(|entry| (entry.text.as_str(), entry.line))
            .collect();
        assert_eq!(
            chapters,
            [("how-to-use-this-book.md", 5), ("Module 1: Memory", 6)]
        );
        assert_eq!(syllabus.extra_pages[0].line, 8);
    }

    #[test]
    fn extra_pages_are_optional() {
        let text = GOOD.replace(
            "extra_pages = [\"syllabi/gpu-six-weeks/schedule.md\"]\n",
            "",
        );
        assert!(parse(&text).unwrap().extra_pages.is_empty());
    }

    #[test]
    fn a_syntax_error_names_its_line() {
        let (line, _) =
            error_line("name = \"a\"\ntitle = \"T\"\nmax_level = = 3\nchapters = [\"x.md\"]\n");
        assert_eq!(line, 3);
    }

    #[test]
    fn a_missing_key_is_named() {
        let (_, message) = error_line("name = \"a\"\nmax_level = 3\nchapters = [\"x.md\"]\n");
        assert!(message.contains("title"), "{message}");
    }

    #[test]
    fn a_wrong_type_names_its_line() {
        let (line, _) = error_line(
            "name = \"a\"\ntitle = \"T\"\nmax_level = \"three\"\nchapters = [\"x.md\"]\n",
        );
        assert_eq!(line, 3);
    }

    #[test]
    fn an_unknown_key_names_its_line() {
        let (line, message) = error_line(
            "name = \"a\"\ntitle = \"T\"\nmax_level = 3\nchapters = [\"x.md\"]\nmax_levle = 2\n",
        );
        assert_eq!(line, 5);
        assert!(message.contains("max_levle"), "{message}");
    }

    #[test]
    fn a_bad_name_names_its_line() {
        let (line, message) = error_line(
            "title = \"T\"\nname = \"My Course\"\nmax_level = 3\nchapters = [\"x.md\"]\n",
        );
        assert_eq!(line, 2);
        assert!(message.contains("My Course"), "{message}");
    }

    #[test]
    fn a_level_outside_one_to_five_names_its_line() {
        for level in ["0", "6", "-1"] {
            let text = format!(
                "name = \"a\"\ntitle = \"T\"\nmax_level = {level}\nchapters = [\"x.md\"]\n"
            );
            let (line, message) = error_line(&text);
            assert_eq!(line, 3);
            assert!(message.contains("1 to 5"), "{message}");
        }
    }

    #[test]
    fn an_empty_chapter_list_is_an_error() {
        let (line, _) = error_line("name = \"a\"\ntitle = \"T\"\nmax_level = 3\nchapters = []\n");
        assert_eq!(line, 4);
    }
}
