//! Cutting a chapter down to a maximum difficulty level.
//!
//! Every heading carries its level as a class, `## Shared memory {.level-3}`. A *section*
//! is a heading and everything after it up to the next heading of the same or a higher
//! rank (`##` ends at the next `##` or `#`), so removing a section also removes the
//! deeper sections nested inside it.
//!
//! Headings are found with pulldown-cmark, the Markdown parser mdBook itself uses, so a
//! `# comment` line inside a fenced code block is never mistaken for a heading.

use std::ops::Range;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// One heading of a chapter, as the level cut sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// 1 for `#`, 2 for `##`, …
    pub rank: usize,
    /// The difficulty level from a `.level-N` class; `None` when the heading has none.
    pub level: Option<u8>,
    /// The heading's text, without the `#` marks and the `{…}` attributes.
    pub text: String,
    /// Where the heading's line starts in the Markdown text.
    pub line_start: usize,
}

/// A section that the cut removed, for the summary printed after a build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemovedSection {
    pub heading: String,
    pub level: u8,
}

/// What is left of a chapter after the cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CutChapter {
    /// The chapter stays, without the sections above the maximum level.
    Kept {
        markdown: String,
        removed: Vec<RemovedSection>,
    },
    /// The chapter's own title is above the maximum level: the whole chapter goes.
    Dropped { title: String, level: u8 },
}

/// Removes every section whose level is above `max_level`.
pub fn cut_above_level(markdown: &str, max_level: u8) -> CutChapter {
    let headings = find_headings(markdown);

    // The chapter's `#` title carries the level a reader needs to enter the chapter.
    if let Some(title) = headings.iter().find(|heading| heading.rank == 1)
        && let Some(level) = title.level
        && level > max_level
    {
        return CutChapter::Dropped {
            title: title.text.clone(),
            level,
        };
    }

    let mut removed_ranges: Vec<Range<usize>> = Vec::new();
    let mut removed = Vec::new();
    let mut index = 0;
    while index < headings.len() {
        let heading = &headings[index];
        match heading.level {
            Some(level) if level > max_level => {
                // The section ends where a heading of the same or a higher rank begins.
                let next = headings[index + 1..]
                    .iter()
                    .position(|later| later.rank <= heading.rank)
                    .map(|offset| index + 1 + offset);
                let end = next.map_or(markdown.len(), |next| headings[next].line_start);
                removed_ranges.push(heading.line_start..end);
                removed.push(RemovedSection {
                    heading: heading.text.clone(),
                    level,
                });
                // Headings nested inside the removed section go with it.
                index = next.unwrap_or(headings.len());
            }
            _ => index += 1,
        }
    }

    CutChapter::Kept {
        markdown: without_ranges(markdown, &removed_ranges),
        removed,
    }
}

/// Every heading of a Markdown text, in order.
pub fn find_headings(markdown: &str) -> Vec<Heading> {
    let mut headings = Vec::new();
    let mut current: Option<Heading> = None;
    let parser = Parser::new_ext(markdown, Options::ENABLE_HEADING_ATTRIBUTES);
    for (event, range) in parser.into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, classes, .. }) => {
                let line_start = markdown[..range.start]
                    .rfind('\n')
                    .map_or(0, |newline| newline + 1);
                current = Some(Heading {
                    rank: level as usize,
                    level: classes.iter().find_map(|class| level_of_class(class)),
                    text: String::new(),
                    line_start,
                });
            }
            Event::Text(text) | Event::Code(text) => {
                if let Some(heading) = current.as_mut() {
                    heading.text.push_str(&text);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(mut heading) = current.take() {
                    heading.text = heading.text.trim().to_string();
                    headings.push(heading);
                }
            }
            _ => {}
        }
    }
    headings
}

/// `level-3` gives 3; any other class gives `None`.
fn level_of_class(class: &str) -> Option<u8> {
    class.strip_prefix("level-")?.parse().ok()
}

fn without_ranges(text: &str, ranges: &[Range<usize>]) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut position = 0;
    for range in ranges {
        kept.push_str(&text[position..range.start]);
        position = range.end;
    }
    kept.push_str(&text[position..]);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(cut: CutChapter) -> (String, Vec<String>) {
        match cut {
            CutChapter::Kept { markdown, removed } => (
                markdown,
                removed.into_iter().map(|section| section.heading).collect(),
            ),
            CutChapter::Dropped { title, .. } => panic!("chapter {title} was dropped"),
        }
    }

    #[test]
    fn a_section_above_the_level_goes_with_its_nested_sections() {
        let chapter = "# Title {.level-1}\n\nIntro.\n\n\
                       ## Deep {.level-3}\n\nDeep text.\n\n### Deeper {.level-2}\n\nMore.\n\n\
                       ## Easy {.level-2}\n\nEasy text.\n";
        let (markdown, removed) = kept(cut_above_level(chapter, 2));
        assert_eq!(
            markdown,
            "# Title {.level-1}\n\nIntro.\n\n## Easy {.level-2}\n\nEasy text.\n"
        );
        assert_eq!(removed, ["Deep"]);
    }

    #[test]
    fn a_deeper_heading_above_the_level_is_removed_alone() {
        let chapter = "# Title {.level-1}\n\n## Easy {.level-1}\n\nA.\n\n\
                       ### Hard {.level-4}\n\nB.\n\n### Fine {.level-1}\n\nC.\n";
        let (markdown, removed) = kept(cut_above_level(chapter, 3));
        assert_eq!(
            markdown,
            "# Title {.level-1}\n\n## Easy {.level-1}\n\nA.\n\n### Fine {.level-1}\n\nC.\n"
        );
        assert_eq!(removed, ["Hard"]);
    }

    #[test]
    fn hash_lines_inside_code_fences_are_not_headings() {
        let chapter = "# Title {.level-1}\n\n## Setup {.level-2}\n\n\
                       ```sh\n# Debian and Ubuntu {.level-1}\nsudo apt-get install x\n```\n\n\
                       ~~~python\n## also not a heading\n~~~\n\n## After {.level-1}\n\nText.\n";
        let (markdown, removed) = kept(cut_above_level(chapter, 1));
        assert_eq!(
            markdown,
            "# Title {.level-1}\n\n## After {.level-1}\n\nText.\n"
        );
        assert_eq!(removed, ["Setup"]);
        let titles: Vec<String> = find_headings(chapter)
            .into_iter()
            .map(|heading| heading.text)
            .collect();
        assert_eq!(titles, ["Title", "Setup", "After"]);
    }

    #[test]
    fn a_section_at_the_end_of_the_file_is_removed_to_the_end() {
        let chapter = "# Title {.level-1}\n\nIntro.\n\n## Further reading {.level-5}\n\nPapers.";
        let (markdown, removed) = kept(cut_above_level(chapter, 4));
        assert_eq!(markdown, "# Title {.level-1}\n\nIntro.\n\n");
        assert_eq!(removed, ["Further reading"]);
    }

    #[test]
    fn the_title_at_or_below_the_level_keeps_the_chapter() {
        let chapter = "# Title {.level-3}\n\nText.\n";
        let (markdown, removed) = kept(cut_above_level(chapter, 3));
        assert_eq!(markdown, chapter);
        assert!(removed.is_empty());
    }

    #[test]
    fn the_title_above_the_level_drops_the_whole_chapter() {
        let chapter = "# Hand-ins {.level-4}\n\n## First {.level-4}\n\nText.\n";
        assert_eq!(
            cut_above_level(chapter, 3),
            CutChapter::Dropped {
                title: "Hand-ins".to_string(),
                level: 4
            }
        );
    }

    #[test]
    fn headings_without_a_level_are_kept() {
        let chapter = "# Schedule\n\n## Week 1\n\nRead.\n";
        let (markdown, removed) = kept(cut_above_level(chapter, 1));
        assert_eq!(markdown, chapter);
        assert!(removed.is_empty());
    }
}
