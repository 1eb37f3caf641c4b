//! Links into what a syllabus edition leaves out become plain text.
//!
//! A course edition keeps some chapters of the book and cuts every section above its
//! highest level, but the pages it keeps still link to the rest: the glossary names the
//! page that teaches each term, a chapter points ahead to Module 3, an introduction lists
//! the exercises. In the edition such a link would lead nowhere, so before mdBook runs,
//! each kept page's links are looked at one by one:
//!
//! - a link to a page of the book that the edition leaves out, or
//! - a link to a section (`page.md#section`, or `#section` on the same page) that the
//!   level cut removed
//!
//! keeps its text, loses its link, and gains a small note, "(not in this edition)", so
//! that "Taught in Integers" does not read as a reference the reader failed to find.
//! Every other link stays exactly as written: links outside the book (`https:`), to
//! figures and data files, and to fragments the cut did not touch.
//!
//! Links are found with pulldown-cmark, the parser mdBook uses, so a `[x](y.md)` inside a
//! code block is not a link, and inline, reference and collapsed links are all handled.

use std::collections::{HashMap, HashSet};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use crate::level_cut::find_headings;

/// The class of the note after an unlinked text; the edition's stylesheet greys it.
pub const NOTE_CLASS: &str = "not-in-edition";

/// The stylesheet that gives the note its quiet look, written beside the edition's
/// `book.toml` and added to its `additional-css`.
pub const NOTE_STYLESHEET: &str = "\
/* Written by `cargo xtask syllabus`: the note after a link's text when the edition leaves
   out the page or section the link led to. Quiet, so the sentence still reads first. */
.not-in-edition {
    font-size: 0.8em;
    font-style: italic;
    opacity: 0.7;
    white-space: nowrap;
}
";

/// What an edition holds: the pages it keeps, with the heading ids the level cut left
/// on each and the ids it removed, and every page of the whole book.
#[derive(Debug, Default)]
pub struct EditionPages {
    /// Every Markdown page of the book's `src/`, kept or not, relative to `src/`.
    book_pages: HashSet<String>,
    /// The kept pages, relative to the edition's `src/`, with their ids.
    kept: HashMap<String, PageIds>,
}

#[derive(Debug, Default)]
struct PageIds {
    /// Ids of the headings the level cut removed from the page.
    removed: HashSet<String>,
}

/// Why a link lost its target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeftOut {
    /// The page is not part of the edition.
    Page(String),
    /// The page is, but the section the fragment names was cut above the level.
    Section { page: String, fragment: String },
}

/// One link turned into text, for the build's report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unlinked {
    pub destination: String,
    pub reason: LeftOut,
}

impl EditionPages {
    /// `book_pages`: every `.md` file of the book's `src/` (relative paths with `/`).
    pub fn new(book_pages: impl IntoIterator<Item = String>) -> EditionPages {
        EditionPages {
            book_pages: book_pages.into_iter().collect(),
            kept: HashMap::new(),
        }
    }

    /// Records a page the edition keeps: `original` is its Markdown in the book, `kept`
    /// what the level cut left of it.
    pub fn keep(&mut self, path: &str, original: &str, kept: &str) {
        let before = heading_ids(original);
        let after: HashSet<String> = heading_ids(kept).into_iter().collect();
        let removed = before
            .into_iter()
            .filter(|id| !after.contains(id))
            .collect();
        self.kept.insert(path.to_string(), PageIds { removed });
    }

    /// Whether the link `destination`, written on the page `page`, leads to something
    /// the edition leaves out; `None` for every link that still leads where it did.
    pub fn left_out(&self, page: &str, destination: &str) -> Option<LeftOut> {
        if destination.is_empty() || has_scheme(destination) || destination.starts_with('/') {
            return None;
        }
        let (path, fragment) = match destination.split_once('#') {
            Some((path, fragment)) => (path, Some(fragment)),
            None => (destination, None),
        };
        // A query (`page.md?x`) is not something a book link carries; leave it be.
        if path.contains('?') {
            return None;
        }
        let target = if path.is_empty() {
            page.to_string()
        } else {
            let resolved = resolve(page, &percent_decode(path))?;
            // mdBook turns `x.md` into `x.html`; a link written as `.html` means the same page.
            match resolved.strip_suffix(".html") {
                Some(stem) => format!("{stem}.md"),
                None => resolved,
            }
        };
        let Some(ids) = self.kept.get(&target) else {
            // A page of the book that the edition does not keep. Anything else (a
            // figure, a CSV file, a page that does not exist at all) is not ours to judge:
            // `cargo xtask check` reports a link that was broken in the book already.
            return self
                .book_pages
                .contains(&target)
                .then_some(LeftOut::Page(target));
        };
        let fragment = percent_decode(fragment?);
        if ids.removed.contains(&fragment) {
            Some(LeftOut::Section {
                page: target,
                fragment,
            })
        } else {
            None
        }
    }

    /// The page's Markdown with every link into what the edition leaves out turned into
    /// its text and the note, and the links it turned.
    pub fn unlink(&self, page: &str, markdown: &str) -> (String, Vec<Unlinked>) {
        let mut replacements: Vec<(std::ops::Range<usize>, String)> = Vec::new();
        let mut unlinked = Vec::new();
        // The links being read, innermost last: where the link is, whether it goes, and
        // the span of its text in the source.
        let mut open: Vec<OpenLink> = Vec::new();
        let mut heading_depth = 0usize;
        for (event, range) in Parser::new_ext(markdown, markdown_options()).into_offset_iter() {
            // Every event inside a link widens the span of that link's text.
            // (A link's own end spans the whole link, so it is left out.)
            if !matches!(event, Event::End(TagEnd::Link))
                && let Some(link) = open.last_mut()
            {
                let text = link.text.get_or_insert(range.clone());
                text.start = text.start.min(range.start);
                text.end = text.end.max(range.end);
            }
            match event {
                Event::Start(Tag::Heading { .. }) => heading_depth += 1,
                Event::End(TagEnd::Heading(_)) => heading_depth = heading_depth.saturating_sub(1),
                Event::Start(Tag::Link { dest_url, .. }) => {
                    let reason = self.left_out(page, &dest_url);
                    if let Some(reason) = &reason {
                        unlinked.push(Unlinked {
                            destination: dest_url.to_string(),
                            reason: reason.clone(),
                        });
                    }
                    open.push(OpenLink {
                        range,
                        goes: reason.is_some(),
                        text: None,
                    });
                }
                Event::End(TagEnd::Link) => {
                    let Some(link) = open.pop() else { continue };
                    if !link.goes {
                        continue;
                    }
                    let text = link
                        .text
                        .map_or_else(String::new, |text| markdown[text].to_string());
                    // Inside a heading the note would become part of the heading's id.
                    let replacement = if heading_depth > 0 || text.trim().is_empty() {
                        text
                    } else {
                        format!("{text} <span class=\"{NOTE_CLASS}\">(not in this edition)</span>")
                    };
                    // A link inside a link that goes is replaced with the outer one.
                    replacements.retain(|(inner, _)| {
                        !(inner.start >= link.range.start && inner.end <= link.range.end)
                    });
                    replacements.push((link.range, replacement));
                }
                _ => {}
            }
        }
        replacements.sort_by_key(|(range, _)| range.start);
        let mut out = String::with_capacity(markdown.len());
        let mut position = 0;
        for (range, replacement) in replacements {
            out.push_str(&markdown[position..range.start]);
            out.push_str(&replacement);
            position = range.end;
        }
        out.push_str(&markdown[position..]);
        (out, unlinked)
    }
}

struct OpenLink {
    range: std::ops::Range<usize>,
    goes: bool,
    text: Option<std::ops::Range<usize>>,
}

/// The extensions mdBook turns on, so that links are found where mdBook finds them.
fn markdown_options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
}

/// The ids mdBook gives a page's headings: the `{#id}` written on the heading, or the
/// heading's text made into an id, with `-1`, `-2`, … after a repeat.
pub fn heading_ids(markdown: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut repeats: HashMap<String, usize> = HashMap::new();
    let explicit = explicit_ids(markdown);
    for heading in find_headings(markdown) {
        if let Some(id) = explicit.get(&heading.line_start) {
            ids.push(id.clone());
            continue;
        }
        let id = normalize_id(&heading.text);
        let id = match repeats.get_mut(&id) {
            Some(count) => {
                let unique = format!("{id}-{count}");
                *count += 1;
                unique
            }
            None => {
                repeats.insert(id.clone(), 1);
                id
            }
        };
        ids.push(id);
    }
    ids
}

/// The `{#id}` of each heading that has one, by the offset of the heading's line.
fn explicit_ids(markdown: &str) -> HashMap<usize, String> {
    let mut ids = HashMap::new();
    for (event, range) in Parser::new_ext(markdown, markdown_options()).into_offset_iter() {
        if let Event::Start(Tag::Heading { id: Some(id), .. }) = event {
            let line_start = markdown[..range.start]
                .rfind('\n')
                .map_or(0, |newline| newline + 1);
            ids.insert(line_start, id.to_string());
        }
    }
    ids
}

/// mdBook's id for a heading's text: letters, digits, `_` and `-` kept (ASCII letters
/// lowercased), spaces made `-`, everything else dropped.
fn normalize_id(text: &str) -> String {
    text.chars()
        .filter_map(|character| {
            if character.is_alphanumeric() || character == '_' || character == '-' {
                Some(character.to_ascii_lowercase())
            } else if character.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// `https:`, `mailto:`, … : a link that leaves the book.
fn has_scheme(destination: &str) -> bool {
    match destination.split_once(':') {
        Some((scheme, _)) => {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|character| character.is_ascii_alphanumeric() || "+-.".contains(character))
                && !scheme.contains('/')
        }
        None => false,
    }
}

/// `path` as written on the page `page`, relative to `src/`; `None` when it climbs out.
fn resolve(page: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = page.split('/').collect();
    parts.pop(); // the page's own file name
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

/// `%20` and friends, as a browser reads them in a link.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%'
            && let Some(hex) = text.get(index + 1..index + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::level_cut::{CutChapter, cut_above_level};

    const CHAPTER: &str = "# Numbers {.level-1}\n\nIntro.\n\n\
        ## Two's complement {.level-2}\n\nText.\n\n\
        ## Bit tricks in depth {#tricks .level-3}\n\nDeep.\n\n\
        ### A nested trick {.level-2}\n\nMore.\n\n\
        ## Further reading {.level-5}\n\nPapers.\n";

    /// An edition that keeps the glossary and `module-3/numbers.md` cut to level 2, and
    /// leaves out `module-3/energy.md`.
    fn edition() -> EditionPages {
        let mut edition = EditionPages::new(
            ["glossary.md", "module-3/numbers.md", "module-3/energy.md"].map(String::from),
        );
        let CutChapter::Kept { markdown, .. } = cut_above_level(CHAPTER, 2) else {
            panic!("the chapter is level 1")
        };
        edition.keep("module-3/numbers.md", CHAPTER, &markdown);
        edition.keep("glossary.md", "# Glossary\n", "# Glossary\n");
        edition
    }

    const NOTE: &str = " <span class=\"not-in-edition\">(not in this edition)</span>";

    #[test]
    fn a_link_into_a_left_out_page_keeps_its_text_only() {
        let page = "See [Where the *energy* goes (level 3)](module-3/energy.md#joules).\n";
        let (markdown, unlinked) = edition().unlink("glossary.md", page);
        assert_eq!(
            markdown,
            format!("See Where the *energy* goes (level 3){NOTE}.\n")
        );
        assert_eq!(
            unlinked,
            [Unlinked {
                destination: "module-3/energy.md#joules".to_string(),
                reason: LeftOut::Page("module-3/energy.md".to_string()),
            }]
        );
    }

    #[test]
    fn a_relative_link_is_resolved_from_its_page() {
        let edition = edition();
        assert_eq!(
            edition.left_out("module-1/cpu/caches.md", "../../module-3/energy.md"),
            Some(LeftOut::Page("module-3/energy.md".to_string()))
        );
        assert_eq!(
            edition.left_out("module-3/numbers.md", "energy.html"),
            Some(LeftOut::Page("module-3/energy.md".to_string()))
        );
        assert_eq!(
            edition.left_out("module-3/numbers.md", "../glossary.md"),
            None
        );
    }

    #[test]
    fn a_link_into_a_section_cut_by_level_keeps_its_text_only() {
        let edition = edition();
        let page = "[Tricks](module-3/numbers.md#tricks), \
                    [nested](module-3/numbers.md#a-nested-trick) and \
                    [reading](./module-3/numbers.md#further-reading).\n";
        let (markdown, unlinked) = edition.unlink("glossary.md", page);
        assert_eq!(
            markdown,
            format!("Tricks{NOTE}, nested{NOTE} and reading{NOTE}.\n")
        );
        assert_eq!(unlinked.len(), 3);
        // The same page's own link to a cut section.
        let (markdown, _) = edition.unlink("module-3/numbers.md", "Read [on](#further-reading).");
        assert_eq!(markdown, format!("Read on{NOTE}."));
    }

    #[test]
    fn kept_links_are_left_exactly_as_written() {
        let page = "[Complement](module-3/numbers.md#twos-complement), \
                    [numbers](module-3/numbers.md), [top](#glossary), \
                    [figure](figures/x.svg), [web](https://example.com/energy.md), \
                    [missing](nowhere.md) and\n\n```md\n[code](module-3/energy.md)\n```\n";
        let (markdown, unlinked) = edition().unlink("glossary.md", page);
        assert_eq!(markdown, page);
        assert!(unlinked.is_empty(), "{unlinked:?}");
    }

    #[test]
    fn reference_links_and_links_in_headings_go_too() {
        let page = "## About [energy][e] {.level-1}\n\nSee [energy][e].\n\n\
                    [e]: module-3/energy.md\n";
        let (markdown, _) = edition().unlink("glossary.md", page);
        assert_eq!(
            markdown,
            format!(
                "## About energy {{.level-1}}\n\nSee energy{NOTE}.\n\n[e]: module-3/energy.md\n"
            )
        );
    }

    #[test]
    fn heading_ids_follow_mdbook() {
        let page = "# Niches: why `Option<Box<T>>` is free\n\n## Setup\n\n## Setup\n\n\
                    ## Shared memory {#shared .level-3}\n";
        assert_eq!(
            heading_ids(page),
            [
                "niches-why-optionboxt-is-free",
                "setup",
                "setup-1",
                "shared"
            ]
        );
    }
}
