//! Expanding mdBook's include directives, exactly as mdBook 0.5.4 does.
//!
//! skeptic reads raw Markdown, so before it sees a chapter every
//! `{{#include path}}` and `{{#rustdoc_include path}}` must be replaced with what mdBook
//! would show. The rules follow mdBook's `links` preprocessor:
//!
//! - `path` is relative to the directory of the file that contains the directive;
//! - `path:N` is line N, `path:N:M` lines N to M, `path:N:` from N, `path::M` up to M
//!   (lines count from 1);
//! - `path:name` is the text between `ANCHOR: name` and `ANCHOR_END: name`, without any
//!   line that marks another anchor;
//! - `rustdoc_include` keeps the whole file but prefixes every line outside the chosen
//!   range or anchor with `# `, which hides it on the page and keeps it compilable;
//! - `\{{#…}}` is an escaped directive and stays in the text without its backslash;
//! - included text is expanded again, relative to its own directory, up to 10 levels deep.
//!
//! Where mdBook silently shows nothing (a missing file, a missing anchor, a range past
//! the end of the file) this module returns an error that names the chapter and line.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

/// How deep included files may include further files, as in mdBook.
const MAX_NESTING: usize = 10;

/// A directive that could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncludeError {
    /// The chapter the directive (or the include chain that led to it) is in.
    pub chapter: PathBuf,
    /// The 1-based line of the directive in the chapter.
    pub line: usize,
    pub directive: String,
    pub reason: String,
}

impl fmt::Display for IncludeError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "{}:{}: {}: {}",
            self.chapter.display(),
            self.line,
            self.directive,
            self.reason
        )
    }
}

impl std::error::Error for IncludeError {}

/// Which part of the file a directive takes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Selection {
    /// Lines `start..end` (0-based, end exclusive; `None` means to the end).
    Lines {
        start: usize,
        end: Option<usize>,
    },
    Anchor(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DirectiveKind {
    Include,
    RustdocInclude,
    Playground,
    Title,
}

/// Expands every directive in the chapter at `chapter_path`.
pub fn expand_chapter(chapter_path: &Path) -> Result<String, IncludeError> {
    let text = fs::read_to_string(chapter_path).map_err(|error| IncludeError {
        chapter: chapter_path.to_path_buf(),
        line: 1,
        directive: String::from("(the chapter itself)"),
        reason: error.to_string(),
    })?;
    let directory = chapter_path.parent().unwrap_or(Path::new("."));
    expand_text(&text, directory, chapter_path, None, 0)
}

/// Expands the directives of `text`, whose relative paths start at `directory`.
///
/// `chapter_line` is the line of the directive in the chapter when `text` is itself
/// included text, so that errors deep in an include chain still point at the chapter.
pub fn expand_text(
    text: &str,
    directory: &Path,
    chapter: &Path,
    chapter_line: Option<usize>,
    depth: usize,
) -> Result<String, IncludeError> {
    let mut expanded = String::with_capacity(text.len());
    let mut rest = text;
    let mut consumed = 0;
    while let Some(found) = find_directive(rest) {
        expanded.push_str(&rest[..found.start]);
        let line = chapter_line.unwrap_or_else(|| line_of(text, consumed + found.start));
        let error = |reason: String| IncludeError {
            chapter: chapter.to_path_buf(),
            line,
            directive: found.text.to_string(),
            reason,
        };
        match found.directive {
            Found::Escaped => expanded.push_str(&found.text[1..]),
            Found::Directive { kind, argument } => {
                let replacement = render(kind, argument, directory).map_err(error)?;
                if let Some((replacement_text, included_path)) = replacement {
                    if depth >= MAX_NESTING {
                        return Err(error(String::from(
                            "includes are nested more than 10 levels deep; is there a cycle?",
                        )));
                    }
                    let included_directory = directory
                        .join(&included_path)
                        .parent()
                        .map(Path::to_path_buf)
                        .unwrap_or_else(|| directory.to_path_buf());
                    expanded.push_str(&expand_text(
                        &replacement_text,
                        &included_directory,
                        chapter,
                        Some(line),
                        depth + 1,
                    )?);
                }
            }
        }
        let end = found.start + found.text.len();
        consumed += end;
        rest = &rest[end..];
    }
    expanded.push_str(rest);
    Ok(expanded)
}

/// The text a directive stands for, and the path it came from (for nested includes).
/// `Ok(None)` for directives that produce no text (`title`).
fn render(
    kind: DirectiveKind,
    argument: &str,
    directory: &Path,
) -> Result<Option<(String, PathBuf)>, String> {
    if kind == DirectiveKind::Title {
        return Ok(None);
    }
    let mut words = argument.split_whitespace();
    let target = words.next().ok_or("the directive names no file")?;
    let (path_text, selection_text) = match target.split_once(':') {
        Some((path, selection)) => (path, Some(selection)),
        None => (target, None),
    };
    let path = PathBuf::from(path_text);
    let full_path = directory.join(&path);
    let contents = fs::read_to_string(&full_path)
        .map_err(|error| format!("cannot read {}: {error}", full_path.display()))?;

    let text = match kind {
        DirectiveKind::Playground => {
            let attributes: Vec<&str> = words.collect();
            let info = if attributes.is_empty() {
                String::from("rust")
            } else {
                format!("rust,{}", attributes.join(","))
            };
            let mut body = contents;
            if !body.ends_with('\n') {
                body.push('\n');
            }
            return Ok(Some((format!("```{info}\n{body}```\n"), path)));
        }
        DirectiveKind::Include | DirectiveKind::RustdocInclude => {
            let selection = parse_selection(selection_text);
            if let Selection::Anchor(anchor) = &selection
                && !has_anchor(&contents, anchor)
            {
                return Err(format!(
                    "there is no `ANCHOR: {anchor}` … `ANCHOR_END: {anchor}` in {}",
                    full_path.display()
                ));
            }
            let text = match kind {
                DirectiveKind::Include => take_selection(&contents, &selection),
                _ => take_rustdoc_selection(&contents, &selection),
            };
            // For rustdoc_include the hidden lines do not count: what the reader sees
            // must not be empty.
            let visible = text
                .lines()
                .any(|line| !line.starts_with("# ") && !line.trim().is_empty());
            if !visible {
                return Err(format!(
                    "the selection of {} is empty (mdBook would silently show nothing)",
                    full_path.display()
                ));
            }
            text
        }
        DirectiveKind::Title => unreachable!("handled above"),
    };
    Ok(Some((text, path)))
}

fn parse_selection(selection: Option<&str>) -> Selection {
    let Some(selection) = selection else {
        return Selection::Lines {
            start: 0,
            end: None,
        };
    };
    let mut parts = selection.splitn(3, ':');
    let first = parts.next().unwrap_or("");
    let start = match first.parse::<usize>() {
        Ok(line) => Some(line.saturating_sub(1)),
        Err(_) if first.is_empty() => None,
        Err(_) => return Selection::Anchor(first.to_string()),
    };
    let end = parts.next().map(str::parse::<usize>);
    match (start, end) {
        (Some(start), Some(Ok(end))) => Selection::Lines {
            start,
            end: Some(end),
        },
        (Some(start), Some(Err(_))) => Selection::Lines { start, end: None },
        (Some(start), None) => Selection::Lines {
            start,
            end: Some(start + 1),
        },
        (None, Some(Ok(end))) => Selection::Lines {
            start: 0,
            end: Some(end),
        },
        (None, _) => Selection::Lines {
            start: 0,
            end: None,
        },
    }
}

fn anchor_start(line: &str) -> Option<&str> {
    anchor_name(line, "ANCHOR:")
}

fn anchor_end(line: &str) -> Option<&str> {
    anchor_name(line, "ANCHOR_END:")
}

/// The name after `marker` (mdBook's `ANCHOR:\s*([\w_-]+)`), if the line has one.
fn anchor_name<'line>(line: &'line str, marker: &str) -> Option<&'line str> {
    let position = line.find(marker)?;
    let after = line[position + marker.len()..].trim_start();
    let length = after
        .find(|character: char| {
            !(character.is_alphanumeric() || character == '_' || character == '-')
        })
        .unwrap_or(after.len());
    (length > 0).then(|| &after[..length])
}

fn is_anchor_marker(line: &str) -> bool {
    anchor_start(line).is_some() || anchor_end(line).is_some()
}

fn has_anchor(contents: &str, anchor: &str) -> bool {
    contents
        .lines()
        .any(|line| anchor_start(line) == Some(anchor))
}

/// What `{{#include}}` shows.
fn take_selection(contents: &str, selection: &Selection) -> String {
    match selection {
        Selection::Lines { start, end } => {
            let lines = contents.lines().skip(*start);
            let taken: Vec<&str> = match end {
                Some(end) => lines.take(end.saturating_sub(*start)).collect(),
                None => lines.collect(),
            };
            taken.join("\n")
        }
        Selection::Anchor(anchor) => {
            let mut retained = Vec::new();
            let mut inside = false;
            for line in contents.lines() {
                if inside {
                    if anchor_end(line) == Some(anchor.as_str()) {
                        break;
                    }
                    if anchor_end(line).is_none() && anchor_start(line).is_none() {
                        retained.push(line);
                    }
                } else if anchor_start(line) == Some(anchor.as_str()) {
                    inside = true;
                }
            }
            retained.join("\n")
        }
    }
}

/// What `{{#rustdoc_include}}` produces: the whole file, with the lines outside the
/// selection hidden behind `# `.
fn take_rustdoc_selection(contents: &str, selection: &Selection) -> String {
    let mut output = Vec::new();
    match selection {
        Selection::Lines { start, end } => {
            for (index, line) in contents.lines().enumerate() {
                let shown = index >= *start && end.is_none_or(|end| index < end);
                output.push(if shown {
                    line.to_string()
                } else {
                    format!("# {line}")
                });
            }
        }
        Selection::Anchor(anchor) => {
            let mut inside = false;
            for line in contents.lines() {
                if inside {
                    if anchor_end(line) == Some(anchor.as_str()) {
                        inside = false;
                    } else if anchor_start(line).is_none() {
                        output.push(line.to_string());
                    }
                } else if let Some(name) = anchor_start(line) {
                    // mdBook drops every anchor-start line here, matching or not.
                    inside = name == anchor.as_str();
                } else if anchor_end(line).is_none() {
                    output.push(format!("# {line}"));
                }
            }
        }
    }
    output.join("\n")
}

enum Found<'text> {
    Escaped,
    Directive {
        kind: DirectiveKind,
        argument: &'text str,
    },
}

struct FoundDirective<'text> {
    start: usize,
    text: &'text str,
    directive: Found<'text>,
}

/// The next directive in `text`, following mdBook's pattern: `\{{#…}}` (escaped) or
/// `{{ #kind argument }}` where the argument contains no `}`.
fn find_directive(text: &str) -> Option<FoundDirective<'_>> {
    let mut search_from = 0;
    while let Some(offset) = text[search_from..].find("{{") {
        let open = search_from + offset;
        if open > 0 && text.as_bytes()[open - 1] == b'\\' {
            // mdBook's escaped form runs to the last `}}` on the line.
            let line_end = text[open..].find('\n').map_or(text.len(), |end| open + end);
            if let Some(close) = text[open..line_end].rfind("}}") {
                let end = open + close + 2;
                return Some(FoundDirective {
                    start: open - 1,
                    text: &text[open - 1..end],
                    directive: Found::Escaped,
                });
            }
        }
        if let Some(found) = parse_directive_at(text, open) {
            return Some(found);
        }
        search_from = open + 2;
    }
    None
}

fn parse_directive_at(text: &str, open: usize) -> Option<FoundDirective<'_>> {
    let after_open = &text[open + 2..];
    let trimmed = after_open.trim_start();
    let body = trimmed.strip_prefix('#')?;
    let kind_length = body
        .find(|character: char| !(character.is_ascii_alphanumeric() || character == '_'))
        .unwrap_or(body.len());
    let kind_name = &body[..kind_length];
    let after_kind = &body[kind_length..];
    // At least one whitespace character separates the kind from its argument.
    if kind_length == 0 || !after_kind.starts_with(char::is_whitespace) {
        return None;
    }
    let close = after_kind.find('}')?;
    if !after_kind[close..].starts_with("}}") {
        return None;
    }
    let argument = after_kind[..close].trim();
    if argument.is_empty() {
        return None;
    }
    let kind = match kind_name {
        "include" => DirectiveKind::Include,
        "rustdoc_include" => DirectiveKind::RustdocInclude,
        "playground" | "playpen" => DirectiveKind::Playground,
        "title" => DirectiveKind::Title,
        // mdBook leaves unknown directives as they are.
        _ => return None,
    };
    let consumed_before_body = after_open.len() - trimmed.len() + 1 + kind_length;
    let end = open + 2 + consumed_before_body + close + 2;
    Some(FoundDirective {
        start: open,
        text: &text[open..end],
        directive: Found::Directive { kind, argument },
    })
}

/// The 1-based line number of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// True if any line of `text` still holds an unexpanded directive.
pub fn has_unexpanded_directive(text: &str) -> bool {
    find_directive(text).is_some_and(|found| !matches!(found.directive, Found::Escaped))
}

/// Whether a line is an anchor marker; exposed for checks on the crate's sources.
pub fn marks_anchor(line: &str) -> bool {
    is_anchor_marker(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "one\ntwo\n// ANCHOR: middle\nthree\n// ANCHOR: inner\nfour\n// ANCHOR_END: inner\nfive\n// ANCHOR_END: middle\nsix";

    #[test]
    fn line_selections_follow_mdbook() {
        let text = "a\nb\nc\nd\ne";
        assert_eq!(take_selection(text, &parse_selection(Some("2"))), "b");
        assert_eq!(
            take_selection(text, &parse_selection(Some("2:4"))),
            "b\nc\nd"
        );
        assert_eq!(take_selection(text, &parse_selection(Some("4:"))), "d\ne");
        assert_eq!(take_selection(text, &parse_selection(Some(":2"))), "a\nb");
        assert_eq!(take_selection(text, &parse_selection(None)), text);
        assert_eq!(take_selection(text, &parse_selection(Some("9"))), "");
    }

    #[test]
    fn anchors_drop_nested_markers() {
        let selection = parse_selection(Some("middle"));
        assert_eq!(take_selection(SOURCE, &selection), "three\nfour\nfive");
        assert_eq!(
            take_selection(SOURCE, &parse_selection(Some("inner"))),
            "four"
        );
    }

    #[test]
    fn rustdoc_include_hides_everything_outside_the_anchor() {
        let text = take_rustdoc_selection(SOURCE, &parse_selection(Some("inner")));
        assert_eq!(text, "# one\n# two\n# three\nfour\n# five\n# six");
        let text = take_rustdoc_selection("a\nb\nc", &parse_selection(Some("2")));
        assert_eq!(text, "# a\nb\n# c");
    }

    #[test]
    fn directives_are_found_with_mdbooks_syntax() {
        let found = find_directive("x {{#include ../a.rs:name}} y").unwrap();
        assert_eq!(found.text, "{{#include ../a.rs:name}}");
        let found = find_directive("{{ #rustdoc_include a.rs }}").unwrap();
        assert!(matches!(
            found.directive,
            Found::Directive {
                kind: DirectiveKind::RustdocInclude,
                argument: "a.rs"
            }
        ));
        assert!(find_directive("{{#unknown a.rs}}").is_none());
        assert!(find_directive("{{#include}}").is_none());
        let escaped = find_directive(r"see \{{#include a.rs}} here").unwrap();
        assert!(matches!(escaped.directive, Found::Escaped));
    }

    #[test]
    fn expansion_reports_chapter_and_line() {
        let directory = std::env::temp_dir().join(format!("includes-test-{}", std::process::id()));
        fs::create_dir_all(&directory).unwrap();
        fs::write(directory.join("code.rs"), SOURCE).unwrap();
        let chapter = directory.join("chapter.md");

        let text = "# Title\n\n```rust\n{{#include code.rs:inner}}\n```\n\\{{#include kept.rs}}\n";
        let expanded = expand_text(text, &directory, &chapter, None, 0).unwrap();
        assert_eq!(
            expanded,
            "# Title\n\n```rust\nfour\n```\n{{#include kept.rs}}\n"
        );

        let missing_anchor = "line one\n{{#include code.rs:nowhere}}\n";
        let error = expand_text(missing_anchor, &directory, &chapter, None, 0).unwrap_err();
        assert_eq!(error.line, 2);
        assert!(error.reason.contains("ANCHOR: nowhere"), "{error}");

        let missing_file = "\n\n{{#rustdoc_include nothing.rs}}";
        let error = expand_text(missing_file, &directory, &chapter, None, 0).unwrap_err();
        assert_eq!(error.line, 3);

        let empty_range = "{{#include code.rs:40:50}}";
        let error = expand_text(empty_range, &directory, &chapter, None, 0).unwrap_err();
        assert!(error.reason.contains("empty"), "{error}");
        fs::remove_dir_all(&directory).unwrap();
    }
}
