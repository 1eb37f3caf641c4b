//! Reading and writing mdBook's `SUMMARY.md`: parts (`# Module 1: …`) holding nested
//! lists of chapters (`- [Title](file.md)`, or `- [Title]()` for a draft).

/// One chapter of the table of contents, with the chapters nested under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chapter {
    pub title: String,
    /// The chapter's file under `src/`; `None` for a draft (`- [Title]()`).
    pub path: Option<String>,
    pub children: Vec<Chapter>,
}

/// A part of the book: a `# Title` line and the chapters after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// `None` for chapters that come before the first part title.
    pub title: Option<String>,
    pub chapters: Vec<Chapter>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub parts: Vec<Part>,
}

impl Summary {
    pub fn parse(text: &str) -> Summary {
        let mut parts = vec![Part {
            title: None,
            chapters: Vec::new(),
        }];
        // Chapters still open for children, with the indentation of their list item.
        let mut open: Vec<(usize, Chapter)> = Vec::new();
        for line in text.lines() {
            let trimmed = line.trim_start();
            if let Some(title) = trimmed.strip_prefix("# ") {
                close_all(&mut open, parts.last_mut().expect("one part at least"));
                // The first line, `# Summary`, titles the file itself, not a part.
                if title.trim() != "Summary" || parts.len() > 1 || !parts[0].chapters.is_empty() {
                    parts.push(Part {
                        title: Some(title.trim().to_string()),
                        chapters: Vec::new(),
                    });
                }
            } else if let Some(chapter) = parse_link(trimmed) {
                let indent = line.len() - trimmed.len();
                let part = parts.last_mut().expect("one part at least");
                while open
                    .last()
                    .is_some_and(|(open_indent, _)| *open_indent >= indent)
                {
                    close_last(&mut open, part);
                }
                open.push((indent, chapter));
            }
        }
        close_all(&mut open, parts.last_mut().expect("one part at least"));
        parts.retain(|part| part.title.is_some() || !part.chapters.is_empty());
        Summary { parts }
    }

    pub fn part(&self, title: &str) -> Option<&Part> {
        self.parts
            .iter()
            .find(|part| part.title.as_deref() == Some(title))
    }

    /// The chapter stored in `path`, at any depth, and the title of its part.
    pub fn chapter(&self, path: &str) -> Option<(Option<&str>, &Chapter)> {
        self.parts.iter().find_map(|part| {
            find_chapter(&part.chapters, path).map(|chapter| (part.title.as_deref(), chapter))
        })
    }
}

fn find_chapter<'a>(chapters: &'a [Chapter], path: &str) -> Option<&'a Chapter> {
    chapters.iter().find_map(|chapter| {
        if chapter.path.as_deref() == Some(path) {
            Some(chapter)
        } else {
            find_chapter(&chapter.children, path)
        }
    })
}

/// `- [Title](path)`, `* [Title](path)` or a prefix chapter `[Title](path)`.
fn parse_link(line: &str) -> Option<Chapter> {
    let link = line
        .strip_prefix("- ")
        .or_else(|| line.strip_prefix("* "))
        .unwrap_or(line)
        .trim();
    let inner = link.strip_prefix('[')?.strip_suffix(')')?;
    let (title, path) = inner.rsplit_once("](")?;
    let path = path.trim();
    Some(Chapter {
        title: title.to_string(),
        path: (!path.is_empty()).then(|| path.to_string()),
        children: Vec::new(),
    })
}

fn close_last(open: &mut Vec<(usize, Chapter)>, part: &mut Part) {
    if let Some((_, done)) = open.pop() {
        match open.last_mut() {
            Some((_, parent)) => parent.children.push(done),
            None => part.chapters.push(done),
        }
    }
}

fn close_all(open: &mut Vec<(usize, Chapter)>, part: &mut Part) {
    while !open.is_empty() {
        close_last(open, part);
    }
}

/// Writes a chapter and its children as list items, four spaces per level.
pub fn write_chapter(chapter: &Chapter, depth: usize, out: &mut String) {
    out.push_str(&"    ".repeat(depth));
    out.push_str(&format!(
        "- [{}]({})\n",
        chapter.title,
        chapter.path.as_deref().unwrap_or("")
    ));
    for child in &chapter.children {
        write_chapter(child, depth + 1, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUMMARY: &str = "# Summary\n\n# Module 0: Introduction\n\n\
        - [How to use this book](how-to-use-this-book.md)\n\
        - [Why this book exists]()\n    - [Measuring]()\n        - [Deeper](deeper.md)\n\
        - [Teaching]()\n\n# Module 1: Memory\n\n- [Caches](caches.md)\n";

    #[test]
    fn parts_and_nested_chapters_are_read() {
        let summary = Summary::parse(SUMMARY);
        assert_eq!(summary.parts.len(), 2);
        let module_0 = summary.part("Module 0: Introduction").unwrap();
        assert_eq!(module_0.chapters.len(), 3);
        assert_eq!(module_0.chapters[1].children[0].title, "Measuring");
        assert_eq!(module_0.chapters[2].path, None);
        let (part, deeper) = summary.chapter("deeper.md").unwrap();
        assert_eq!(part, Some("Module 0: Introduction"));
        assert_eq!(deeper.title, "Deeper");
        assert!(summary.chapter("missing.md").is_none());
    }

    #[test]
    fn chapters_are_written_back_with_their_drafts() {
        let summary = Summary::parse(SUMMARY);
        let mut out = String::new();
        write_chapter(
            &summary.part("Module 0: Introduction").unwrap().chapters[1],
            0,
            &mut out,
        );
        assert_eq!(
            out,
            "- [Why this book exists]()\n    - [Measuring]()\n        - [Deeper](deeper.md)\n"
        );
    }
}
