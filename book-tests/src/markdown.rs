//! Reading chapters the way mdBook does, with pulldown-cmark: fenced code blocks,
//! headings with their classes, and links.

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

/// A fenced code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeBlock {
    /// The info string after the fence, such as `rust,no_run`.
    pub info: String,
    /// 1-based line of the opening fence.
    pub line: usize,
    pub body: String,
}

impl CodeBlock {
    /// The language and attributes, split on commas and spaces as mdBook does.
    pub fn attributes(&self) -> Vec<&str> {
        self.info
            .split([',', ' ', '\t'])
            .map(str::trim)
            .filter(|word| !word.is_empty())
            .collect()
    }

    pub fn language(&self) -> &str {
        self.attributes().first().copied().unwrap_or("")
    }
}

/// A heading and the classes given to it with `{.class}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    pub line: usize,
    /// 1 for `#`, 2 for `##`, …
    pub rank: usize,
    pub text: String,
    pub classes: Vec<String>,
}

impl Heading {
    /// The difficulty level from a `{.level-N}` class, N in 1..=5.
    pub fn level(&self) -> Option<u8> {
        self.classes.iter().find_map(|class| {
            let level: u8 = class.strip_prefix("level-")?.parse().ok()?;
            (1..=5).contains(&level).then_some(level)
        })
    }
}

/// A link and the line it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub line: usize,
    pub destination: String,
    /// The link's text as a reader sees it: inline code without its backticks, emphasis
    /// without its stars.
    pub text: String,
}

fn parser(text: &str) -> Parser<'_> {
    // The options mdBook turns on: heading attributes make `{.level-2}` a class.
    let options = Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS;
    Parser::new_ext(text, options)
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

pub fn code_blocks(text: &str) -> Vec<CodeBlock> {
    let mut blocks = Vec::new();
    let mut current: Option<CodeBlock> = None;
    for (event, range) in parser(text).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                current = Some(CodeBlock {
                    info: info.to_string(),
                    line: line_of(text, range.start),
                    body: String::new(),
                });
            }
            Event::Text(body) => {
                if let Some(block) = current.as_mut() {
                    block.body.push_str(&body);
                }
            }
            Event::End(TagEnd::CodeBlock) => blocks.extend(current.take()),
            _ => {}
        }
    }
    blocks
}

pub fn headings(text: &str) -> Vec<Heading> {
    let mut headings = Vec::new();
    let mut current: Option<Heading> = None;
    for (event, range) in parser(text).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, classes, .. }) => {
                current = Some(Heading {
                    line: line_of(text, range.start),
                    rank: level as usize,
                    text: String::new(),
                    classes: classes.iter().map(|class| class.to_string()).collect(),
                });
            }
            Event::Text(part) | Event::Code(part) => {
                if let Some(heading) = current.as_mut() {
                    heading.text.push_str(&part);
                }
            }
            Event::End(TagEnd::Heading(_)) => headings.extend(current.take()),
            _ => {}
        }
    }
    headings
}

pub fn links(text: &str) -> Vec<Link> {
    let mut links = Vec::new();
    let mut current: Option<Link> = None;
    for (event, range) in parser(text).into_offset_iter() {
        match event {
            Event::Start(Tag::Link { dest_url, .. }) => {
                current = Some(Link {
                    line: line_of(text, range.start),
                    destination: dest_url.to_string(),
                    text: String::new(),
                });
            }
            Event::Text(part) | Event::Code(part) => {
                if let Some(link) = current.as_mut() {
                    link.text.push_str(&part);
                }
            }
            Event::End(TagEnd::Link) => links.extend(current.take()),
            _ => {}
        }
    }
    links
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_carry_their_level_class() {
        let text = "# Title {.level-1}\n\ntext\n\n## Section {.level-3}\n\n### Plain\n";
        let found = headings(text);
        assert_eq!(found.len(), 3);
        assert_eq!((found[0].rank, found[0].level()), (1, Some(1)));
        assert_eq!((found[1].line, found[1].level()), (5, Some(3)));
        assert_eq!(found[2].level(), None);
    }

    #[test]
    fn a_hash_line_inside_a_code_block_is_not_a_heading() {
        let text = "```rust\n# use galaxy::Tensor2d;\n```\n";
        assert!(headings(text).is_empty());
        let blocks = code_blocks(text);
        assert_eq!(blocks[0].language(), "rust");
        assert_eq!(blocks[0].line, 1);
    }

    #[test]
    fn info_strings_split_into_attributes() {
        let text = "text\n\n```rust,no_run skt-galaxy\nfn main() {}\n```\n";
        let block = &code_blocks(text)[0];
        assert_eq!(block.attributes(), ["rust", "no_run", "skt-galaxy"]);
        assert_eq!(block.line, 3);
    }

    #[test]
    fn draft_chapters_have_empty_links() {
        let found = links("- [Real](real.md)\n- [Draft]()\n");
        assert_eq!(found[0].destination, "real.md");
        assert_eq!(found[1].destination, "");
        assert_eq!(
            (found[0].text.as_str(), found[1].text.as_str()),
            ("Real", "Draft")
        );
    }

    #[test]
    fn link_text_is_what_the_reader_sees() {
        let found = links(
            "- [How this relates to `torch.compile`](torch.md)\n- [An *in-place* ReLU](relu.md)\n",
        );
        assert_eq!(found[0].text, "How this relates to torch.compile");
        assert_eq!(found[1].text, "An in-place ReLU");
        let heading = &headings("# How this relates to `torch.compile` {.level-2}\n")[0];
        assert_eq!(heading.text, found[0].text);
    }
}
