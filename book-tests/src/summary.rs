//! The table of contents (`src/SUMMARY.md`) as parts and chapters, each module's status
//! (complete or planned) derived from it, and the status box of the entry page that must
//! agree with it.

use crate::markdown::{Link, headings, links};

/// A part of the table of contents (`# Module 1: …`) and the chapter links under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub title: String,
    /// N for a part titled "Module N: …", `None` for others ("Further Reading").
    pub module: Option<u32>,
    pub chapters: Vec<Link>,
}

/// Whether every chapter of a module is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModuleStatus {
    /// No chapter of the module is a draft.
    Complete,
    /// At least one chapter is a draft (`- [Title]()`).
    Planned,
}

impl ModuleStatus {
    /// The value of `data-status` in the entry page's status box.
    pub fn as_str(self) -> &'static str {
        match self {
            ModuleStatus::Complete => "complete",
            ModuleStatus::Planned => "planned",
        }
    }
}

/// The parts of SUMMARY.md in order. The chapters before the first part (prefix chapters)
/// and the `# Summary` title itself belong to no part and are left out.
pub fn parts(summary: &str) -> Vec<Part> {
    // Part titles are the rank-1 headings after the first line's `# Summary`.
    let titles: Vec<_> = headings(summary)
        .into_iter()
        .filter(|heading| heading.rank == 1 && heading.text.trim() != "Summary")
        .collect();
    let all_links = links(summary);
    titles
        .iter()
        .enumerate()
        .map(|(index, heading)| {
            let end = titles.get(index + 1).map_or(usize::MAX, |next| next.line);
            Part {
                title: heading.text.trim().to_string(),
                module: module_number(&heading.text),
                chapters: all_links
                    .iter()
                    .filter(|link| link.line > heading.line && link.line < end)
                    .cloned()
                    .collect(),
            }
        })
        .collect()
}

/// N from "Module N: …".
fn module_number(title: &str) -> Option<u32> {
    let rest = title.trim().strip_prefix("Module ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Each module's status as the table of contents says: planned if any of its chapters is a
/// draft, complete otherwise.
pub fn module_statuses(summary: &str) -> Vec<(u32, ModuleStatus)> {
    parts(summary)
        .into_iter()
        .filter_map(|part| {
            let module = part.module?;
            let has_draft = part.chapters.iter().any(|link| link.destination.is_empty());
            let status = if has_draft {
                ModuleStatus::Planned
            } else {
                ModuleStatus::Complete
            };
            Some((module, status))
        })
        .collect()
}

/// One `<li data-module="N" data-status="…">` of the status box.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusEntry {
    /// 1-based line of the `<li`.
    pub line: usize,
    pub module: u32,
    pub status: String,
}

/// The entries of the `<div class="book-status">` box in a chapter's Markdown: `Ok(None)` if
/// the chapter has no such box, an error naming the line for an item without a module
/// number or a status.
pub fn status_box(markdown: &str) -> Result<Option<Vec<StatusEntry>>, String> {
    let Some(start) = find_box(markdown) else {
        return Ok(None);
    };
    let end = matching_div_end(markdown, start).ok_or_else(|| {
        format!(
            "line {}: <div class=\"book-status\"> is never closed",
            line_of(markdown, start)
        )
    })?;
    let mut entries = Vec::new();
    let body = &markdown[start..end];
    let mut offset = 0;
    while let Some(found) = find_tag(&body[offset..], "li") {
        let tag_start = offset + found;
        let tag_end = body[tag_start..]
            .find('>')
            .map_or(body.len(), |close| tag_start + close);
        let tag = &body[tag_start..tag_end];
        let line = line_of(markdown, start + tag_start);
        let module = attribute(tag, "data-module").ok_or_else(|| {
            format!("line {line}: a status item (<li>) without data-module=\"N\"")
        })?;
        let module: u32 = module
            .parse()
            .map_err(|_| format!("line {line}: data-module=\"{module}\" is not a module number"))?;
        let status = attribute(tag, "data-status").ok_or_else(|| {
            format!("line {line}: the item of module {module} has no data-status=\"…\"")
        })?;
        entries.push(StatusEntry {
            line,
            module,
            status: status.to_string(),
        });
        offset = tag_end;
    }
    Ok(Some(entries))
}

/// The byte offset of the `<div` that opens the status box.
fn find_box(markdown: &str) -> Option<usize> {
    let mut offset = 0;
    while let Some(found) = find_tag(&markdown[offset..], "div") {
        let start = offset + found;
        let end = markdown[start..]
            .find('>')
            .map_or(markdown.len(), |close| start + close);
        let classes = attribute(&markdown[start..end], "class").unwrap_or("");
        if classes
            .split_whitespace()
            .any(|class| class == "book-status")
        {
            return Some(start);
        }
        offset = end;
    }
    None
}

/// The offset just after the `</div>` that closes the `<div` at `start`, counting nested
/// divs.
fn matching_div_end(markdown: &str, start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut offset = start;
    loop {
        let open = find_tag(&markdown[offset..], "div").map(|found| offset + found);
        let close = markdown[offset..]
            .find("</div>")
            .map(|found| offset + found);
        match (open, close) {
            (Some(open), Some(close)) if open < close => {
                depth += 1;
                offset = open + 4;
            }
            (_, Some(close)) => {
                depth = depth.checked_sub(1)?;
                offset = close + "</div>".len();
                if depth == 0 {
                    return Some(offset);
                }
            }
            (_, None) => return None,
        }
    }
}

/// The offset of the next opening tag `<name` (followed by a space, `>` or `/`).
fn find_tag(text: &str, name: &str) -> Option<usize> {
    let pattern = format!("<{name}");
    let mut offset = 0;
    while let Some(found) = text[offset..].find(&pattern) {
        let at = offset + found;
        let next = text[at + pattern.len()..].chars().next();
        if matches!(next, Some(' ' | '\t' | '\n' | '\r' | '>' | '/')) {
            return Some(at);
        }
        offset = at + pattern.len();
    }
    None
}

/// The value of `name="…"` (or `name='…'`) in the text of one tag.
fn attribute<'tag>(tag: &'tag str, name: &str) -> Option<&'tag str> {
    let mut offset = 0;
    while let Some(found) = tag[offset..].find(name) {
        let at = offset + found;
        offset = at + name.len();
        let before = tag[..at].chars().next_back();
        if !matches!(before, Some(' ' | '\t' | '\n' | '\r')) {
            continue;
        }
        let rest = tag[offset..].trim_start();
        let Some(rest) = rest.strip_prefix('=') else {
            continue;
        };
        let rest = rest.trim_start();
        let quote = rest.chars().next()?;
        if quote != '"' && quote != '\'' {
            continue;
        }
        let value = &rest[1..];
        return value.find(quote).map(|close| &value[..close]);
    }
    None
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUMMARY: &str = "# Summary\n\n[Preface](preface.md)\n\n# Module 0: Start\n\n\
        - [How to use](how.md)\n- [Rust]()\n    - [Cargo]()\n\n\
        # Module 1: Memory\n\n- [Intro](m1/index.md)\n    - [Caches](m1/caches.md)\n\n\
        # Further Reading\n\n- [References]()\n";

    #[test]
    fn parts_group_the_chapters_under_their_titles() {
        let found = parts(SUMMARY);
        let titles: Vec<_> = found.iter().map(|part| part.title.as_str()).collect();
        assert_eq!(
            titles,
            ["Module 0: Start", "Module 1: Memory", "Further Reading"]
        );
        assert_eq!(
            found.iter().map(|part| part.module).collect::<Vec<_>>(),
            [Some(0), Some(1), None]
        );
        let texts: Vec<_> = found[1]
            .chapters
            .iter()
            .map(|link| link.text.as_str())
            .collect();
        assert_eq!(texts, ["Intro", "Caches"]);
        // The prefix chapter belongs to no part.
        assert!(
            found
                .iter()
                .all(|part| part.chapters.iter().all(|link| link.text != "Preface"))
        );
    }

    #[test]
    fn a_module_with_a_draft_is_planned() {
        assert_eq!(
            module_statuses(SUMMARY),
            [(0, ModuleStatus::Planned), (1, ModuleStatus::Complete)]
        );
    }

    #[test]
    fn the_status_box_is_read_with_its_lines() {
        let page = "# How to use {.level-1}\n\n<div class=\"note book-status\">\n<ul>\n\
            <li data-module=\"0\" data-status=\"planned\">Module 0</li>\n\
            <li data-status='complete' data-module='1'>Module 1 <div>nested</div></li>\n\
            </ul>\n</div>\n\n<ul><li>outside</li></ul>\n";
        let entries = status_box(page).unwrap().unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(
            (
                entries[0].line,
                entries[0].module,
                entries[0].status.as_str()
            ),
            (5, 0, "planned")
        );
        assert_eq!(
            (entries[1].module, entries[1].status.as_str()),
            (1, "complete")
        );
    }

    #[test]
    fn a_page_without_the_box_has_none() {
        assert_eq!(
            status_box("# Title\n\n<div class=\"warning\">x</div>\n").unwrap(),
            None
        );
    }

    #[test]
    fn an_item_without_a_status_is_an_error_naming_its_line() {
        let page = "<div class=\"book-status\">\n<ul>\n<li data-module=\"2\">Module 2</li>\n</ul>\n</div>\n";
        let error = status_box(page).unwrap_err();
        assert!(
            error.contains("line 3") && error.contains("module 2"),
            "{error}"
        );
        let unclosed =
            "<div class=\"book-status\">\n<li data-module=\"2\" data-status=\"planned\">";
        assert!(status_box(unclosed).unwrap_err().contains("never closed"));
    }

    #[test]
    fn data_module_is_not_mistaken_for_another_attribute() {
        assert_eq!(
            attribute("<li xdata-module=\"9\" data-module=\"3\"", "data-module"),
            Some("3")
        );
        assert_eq!(attribute("<li data-modules=\"9\"", "data-module"), None);
    }
}
