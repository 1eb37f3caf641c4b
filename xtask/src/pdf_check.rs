//! Reads a printed book back and checks it, page by page, against the HTML it was printed
//! from (`print.html`, `toc.html` and the figures):
//!
//! - the page count: every page's footer reads `k / N` with N the page count `pdfinfo`
//!   reports, and there is at least a page per chapter besides the title and contents;
//! - the title page names the edition, its version and its commit;
//! - the contents list every chapter of the sidebar, in order, and the text holds every
//!   chapter's title, in order, after them;
//! - math is typeset: KaTeX's fonts are embedded, no `$$` is left, and the text of every
//!   formula that KaTeX lays out on one line (no fraction, root or index) is found;
//! - figures are embedded: the labels of every SVG figure (its title, axis names, series
//!   names) are in the PDF's text, since Chromium keeps SVG text as text.

use std::fmt;
use std::path::Path;
use std::process::Command;

use scraper::{ElementRef, Html, Selector};

/// What the PDF of one edition must hold.
#[derive(Debug, Default, Clone)]
pub struct Expectations {
    pub title: String,
    pub version: String,
    pub commit_short: String,
    /// The sidebar's chapters (drafts left out), in order: the contents.
    pub contents: Vec<String>,
    /// The `#` title of every chapter of print.html, in order.
    pub chapter_titles: Vec<String>,
    /// The text of every formula KaTeX lays out on one line.
    pub formulas: Vec<String>,
    /// Whether the book has math at all.
    pub has_math: bool,
    /// Each SVG figure with its labels.
    pub figures: Vec<(String, Vec<String>)>,
}

/// What the check found.
#[derive(Debug, PartialEq, Eq)]
pub struct Report {
    pub pages: usize,
    pub chapters: usize,
    pub formulas: usize,
    pub figures: usize,
    pub figure_labels: usize,
}

impl fmt::Display for Report {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "PDF check passed: {} pages numbered k / {}; title page with version and commit; \
             {} chapters in the contents and in the text, in order; KaTeX fonts embedded and \
             {} one-line formulas found; {} figures with all {} of their labels",
            self.pages, self.pages, self.chapters, self.formulas, self.figures, self.figure_labels
        )
    }
}

impl Expectations {
    /// Reads what the PDF must hold from the built book it was printed from.
    pub fn from_book(
        book_dir: &Path,
        title: &str,
        version: &str,
        commit_short: &str,
    ) -> Result<Expectations, String> {
        let read = |name: &str| {
            let path = book_dir.join(name);
            std::fs::read_to_string(&path)
                .map_err(|error| format!("cannot read {}: {error}", path.display()))
        };
        let print = Html::parse_document(&read("print.html")?);
        let toc = Html::parse_document(&read("toc.html")?);
        let mut expectations = Expectations {
            title: title.to_string(),
            version: version.to_string(),
            commit_short: commit_short.to_string(),
            contents: texts(
                &toc,
                "ol.chapter li.chapter-item > .chapter-link-wrapper > a[href]",
            ),
            chapter_titles: texts(&print, "#mdbook-content main > h1"),
            ..Expectations::default()
        };
        let formula = Selector::parse("main .katex-html").expect("a valid selector");
        let stacked = Selector::parse(".vlist, .sqrt").expect("a valid selector");
        for element in print.select(&formula) {
            expectations.has_math = true;
            if element.select(&stacked).next().is_none() {
                let text = squeeze(&element.text().collect::<String>());
                if !text.is_empty() {
                    expectations.formulas.push(text);
                }
            }
        }
        let image = Selector::parse("main img[src$='.svg']").expect("a valid selector");
        let mut seen = std::collections::HashSet::new();
        for element in print.select(&image) {
            let source = element.value().attr("src").unwrap_or_default().to_string();
            if !seen.insert(source.clone()) {
                continue;
            }
            let path = book_dir.join(&source);
            let svg = std::fs::read_to_string(&path)
                .map_err(|error| format!("cannot read the figure {}: {error}", path.display()))?;
            expectations.figures.push((source, svg_labels(&svg)));
        }
        Ok(expectations)
    }
}

fn texts(document: &Html, selector: &str) -> Vec<String> {
    let selector = Selector::parse(selector).expect("a valid selector");
    document
        .select(&selector)
        .map(|element: ElementRef| collapse(&element.text().collect::<String>()))
        .filter(|text| !text.is_empty())
        .collect()
}

/// Whitespace runs as one space, and typographic ligatures (which Chromium uses for "fi",
/// "fl" and "ffl" in the text font) as their letters.
fn collapse(text: &str) -> String {
    let mut letters = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '\u{fb00}' => letters.push_str("ff"),
            '\u{fb01}' => letters.push_str("fi"),
            '\u{fb02}' => letters.push_str("fl"),
            '\u{fb03}' => letters.push_str("ffi"),
            '\u{fb04}' => letters.push_str("ffl"),
            character => letters.push(character),
        }
    }
    letters.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Without any whitespace or zero-width character: how formulas are compared, since
/// KaTeX spaces symbols with margins that come out of the PDF as spaces, or not.
fn squeeze(text: &str) -> String {
    collapse(text)
        .chars()
        .filter(|character| {
            !character.is_whitespace() && !matches!(character, '\u{200b}' | '\u{2061}'..='\u{2064}')
        })
        .collect()
}

/// The text of an SVG's `<text>` elements that holds a word (not a bare tick number).
fn svg_labels(svg: &str) -> Vec<String> {
    let mut labels = Vec::new();
    let mut rest = svg;
    while let Some(start) = rest.find("<text") {
        rest = &rest[start..];
        let Some(open_end) = rest.find('>') else {
            break;
        };
        let Some(close) = rest.find("</text>") else {
            break;
        };
        // A label the SVG keeps hidden until clicked (a flame graph's "Reset Zoom") is not
        // printed.
        let hidden = rest[..open_end].contains("class=\"hide\"");
        if close > open_end && !hidden {
            let label = collapse(&unescape(&rest[open_end + 1..close]));
            // A flame graph shortens names that do not fit with "..", and the PDF's text
            // can lose one of the dots: compare what comes before them.
            let label = match label.strip_suffix("..") {
                Some(shortened) => shortened.to_string(),
                None => label,
            };
            if label
                .chars()
                .filter(|character| character.is_alphabetic())
                .count()
                >= 3
            {
                labels.push(label);
            }
        }
        rest = &rest[close + "</text>".len()..];
    }
    labels
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// Runs poppler's tools on `pdf` and checks what they read.
pub fn check_file(pdf: &Path, expectations: &Expectations) -> Result<Report, String> {
    let info = poppler("pdfinfo", pdf, &[])?;
    let pages: usize = info
        .lines()
        .find_map(|line| line.strip_prefix("Pages:"))
        .and_then(|count| count.trim().parse().ok())
        .ok_or_else(|| format!("pdfinfo reports no page count for {}", pdf.display()))?;
    let text = poppler("pdftotext", pdf, &["-enc", "UTF-8"])?;
    let fonts = poppler("pdffonts", pdf, &[])?;
    check(pages, &text, &fonts, expectations).map_err(|problems| {
        format!(
            "the PDF {} fails {} check(s):\n  {}",
            pdf.display(),
            problems.len(),
            problems.join("\n  ")
        )
    })
}

fn poppler(tool: &str, pdf: &Path, arguments: &[&str]) -> Result<String, String> {
    let mut command = Command::new(tool);
    command.args(arguments).arg(pdf);
    if tool == "pdftotext" {
        command.arg("-");
    }
    let output = command
        .output()
        .map_err(|error| format!("cannot run {tool} (poppler-utils): {error}"))?;
    if !output.status.success() {
        return Err(format!(
            "{tool} cannot read {}: {}",
            pdf.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Checks the text of a PDF (pages separated by form feeds, as `pdftotext` writes them)
/// and its font list (`pdffonts`) against the expectations. Every failed check is listed.
pub fn check(
    page_count: usize,
    text: &str,
    fonts: &str,
    expectations: &Expectations,
) -> Result<Report, Vec<String>> {
    let mut problems = Vec::new();
    let mut pages: Vec<String> = text.split('\u{c}').map(collapse).collect();
    if pages.last().is_some_and(String::is_empty) {
        pages.pop();
    }

    // The page count.
    if pages.len() != page_count {
        problems.push(format!(
            "pdfinfo counts {page_count} pages, the text has {}",
            pages.len()
        ));
    }
    let unnumbered: Vec<String> = pages
        .iter()
        .enumerate()
        .filter(|(index, page)| !page.contains(&format!("{} / {page_count}", index + 1)))
        .map(|(index, _)| (index + 1).to_string())
        .collect();
    if !unnumbered.is_empty() {
        problems.push(format!(
            "{} page(s) do not read \"k / {page_count}\" in their footer: pages {}",
            unnumbered.len(),
            abbreviate(&unnumbered)
        ));
    }
    let minimum = expectations.chapter_titles.len() + 2;
    if page_count < minimum {
        problems.push(format!(
            "{page_count} pages for {} chapters: fewer than one a chapter plus the title page \
             and the contents ({minimum})",
            expectations.chapter_titles.len()
        ));
    }

    // The title page.
    let title_page = pages.first().cloned().unwrap_or_default();
    for (what, expected) in [
        ("the edition's title", collapse(&expectations.title)),
        ("the version", format!("Version {}", expectations.version)),
        ("the commit", expectations.commit_short.clone()),
    ] {
        if !title_page.contains(&expected) {
            problems.push(format!(
                "the title page does not name {what} ({expected:?}); it reads {:?}",
                shorten(&title_page)
            ));
        }
    }

    // The contents (the pages after the title page, up to the one the first chapter
    // starts), then every chapter title in order.
    let first_title = expectations
        .chapter_titles
        .first()
        .cloned()
        .unwrap_or_default();
    let first_chapter_page = pages
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, page)| !first_title.is_empty() && page.starts_with(&first_title))
        .map_or(pages.len(), |(index, _)| index);
    let contents = pages
        .get(1..first_chapter_page)
        .unwrap_or_default()
        .join(" ");
    if !contents.starts_with("Contents") {
        problems.push(format!(
            "page 2 does not start the contents; it reads {:?}",
            shorten(&contents)
        ));
    }
    find_in_order(
        &contents,
        0,
        &expectations.contents,
        "the contents",
        &mut problems,
    );
    let body = pages
        .get(first_chapter_page..)
        .unwrap_or_default()
        .join(" ");
    find_in_order(
        &body,
        0,
        &expectations.chapter_titles,
        "the text after the contents",
        &mut problems,
    );

    // Math.
    let squeezed = squeeze(text);
    if expectations.has_math {
        if !fonts.contains("KaTeX_") {
            problems.push("the book has math, but no KaTeX font is embedded".to_string());
        }
        if expectations.formulas.is_empty() {
            problems.push("the book has math, but no one-line formula to look for".to_string());
        }
    }
    if text.contains("$$") {
        problems.push("\"$$\" in the text: a formula was not typeset".to_string());
    }
    let missing: Vec<&String> = expectations
        .formulas
        .iter()
        .filter(|formula| !squeezed.contains(formula.as_str()))
        .collect();
    if !missing.is_empty() {
        problems.push(format!(
            "{} of {} formulas are not in the text: {}",
            missing.len(),
            expectations.formulas.len(),
            abbreviate(&missing)
        ));
    }

    // Figures.
    let collapsed = collapse(text);
    let mut figure_labels = 0;
    for (figure, labels) in &expectations.figures {
        if labels.is_empty() {
            problems.push(format!("the figure {figure} has no text label to look for"));
        }
        figure_labels += labels.len();
        let missing: Vec<&String> = labels
            .iter()
            .filter(|label| !collapsed.contains(label.as_str()))
            .collect();
        if !missing.is_empty() {
            problems.push(format!(
                "the figure {figure} is not embedded: {} of its {} labels are not in the text ({})",
                missing.len(),
                labels.len(),
                abbreviate(&missing)
            ));
        }
    }

    if problems.is_empty() {
        Ok(Report {
            pages: page_count,
            chapters: expectations.chapter_titles.len(),
            formulas: expectations.formulas.len(),
            figures: expectations.figures.len(),
            figure_labels,
        })
    } else {
        Err(problems)
    }
}

/// Finds each of `items` in `text`, each after the one before it.
fn find_in_order(
    text: &str,
    mut position: usize,
    items: &[String],
    place: &str,
    problems: &mut Vec<String>,
) {
    if items.is_empty() {
        problems.push(format!("nothing to look for in {place}"));
    }
    for item in items {
        match text[position..].find(item.as_str()) {
            Some(offset) => position += offset + item.len(),
            None => {
                problems.push(format!(
                    "{place}: {item:?} is missing or out of order (looked from {:?})",
                    shorten(&text[position..])
                ));
                return;
            }
        }
    }
}

fn shorten(text: &str) -> String {
    let short: String = text.chars().take(80).collect();
    if short.len() < text.len() {
        format!("{short}…")
    } else {
        short
    }
}

fn abbreviate(items: &[impl AsRef<str>]) -> String {
    let shown: Vec<&str> = items.iter().take(8).map(AsRef::as_ref).collect();
    if items.len() > shown.len() {
        format!(
            "{} and {} more",
            shown.join(", "),
            items.len() - shown.len()
        )
    } else {
        shown.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expectations() -> Expectations {
        Expectations {
            title: "The Book".into(),
            version: "0.2.0".into(),
            commit_short: "0123456789ab".into(),
            contents: vec!["First chapter".into(), "Second chapter".into()],
            chapter_titles: vec!["First chapter".into(), "Second chapter".into()],
            formulas: vec!["ℓ=64".into()],
            has_math: true,
            figures: vec![("figures/a.svg".into(), vec!["time per element (ns)".into()])],
        }
    }

    /// Four pages as pdftotext writes them: title, contents, two chapters.
    fn text() -> String {
        [
            "The Book\nVersion 0.2.0\nBuilt from commit 0123456789ab\n1 / 4",
            "Contents\nFirst chapter 3\nSecond chapter 4\n2 / 4",
            "First chapter level 1\nLines of ℓ = 64 bytes.\n3 / 4",
            "Second chapter\ntime per element\n(ns)\n4 / 4",
        ]
        .join("\u{c}")
            + "\u{c}"
    }

    const FONTS: &str = "AAAAAA+OpenSans-Regular\nGAAAAA+KaTeX_Math-Italic\n";

    #[test]
    fn a_complete_pdf_passes() {
        let report = check(4, &text(), FONTS, &expectations()).unwrap();
        assert_eq!(
            report,
            Report {
                pages: 4,
                chapters: 2,
                formulas: 1,
                figures: 1,
                figure_labels: 1
            }
        );
    }

    #[test]
    fn each_missing_piece_is_named() {
        let broken = text()
            .replace("Built from commit 0123456789ab", "")
            .replace("Second chapter 4", "")
            .replace("ℓ = 64", "l = 64")
            .replace("(ns)", "");
        let problems = check(4, &broken, "OpenSans", &expectations()).unwrap_err();
        let all = problems.join("\n");
        assert!(all.contains("does not name the commit"), "{all}");
        assert!(
            all.contains("the contents: \"Second chapter\" is missing"),
            "{all}"
        );
        assert!(all.contains("no KaTeX font"), "{all}");
        assert!(
            all.contains("1 of 1 formulas are not in the text: ℓ=64"),
            "{all}"
        );
        assert!(all.contains("figures/a.svg is not embedded"), "{all}");
    }

    #[test]
    fn the_page_count_must_agree_with_the_footers() {
        let problems = check(5, &text(), FONTS, &expectations()).unwrap_err();
        assert!(problems[0].contains("pdfinfo counts 5 pages, the text has 4"));
        assert!(problems[1].contains("4 page(s) do not read \"k / 5\""));
    }

    #[test]
    fn chapters_out_of_order_fail() {
        let mut expected = expectations();
        expected.chapter_titles.reverse();
        let problems = check(4, &text(), FONTS, &expected).unwrap_err();
        assert!(
            problems.iter().any(
                |problem| problem.starts_with("the text after the contents: \"First chapter\"")
            ),
            "{problems:?}"
        );
    }

    #[test]
    fn svg_labels_skip_tick_numbers() {
        let svg = r#"<svg><text x="1">Reading &amp; writing</text><text>0.1</text><text y="2">
            time (ms)</text></svg>"#;
        assert_eq!(svg_labels(svg), vec!["Reading & writing", "time (ms)"]);
    }

    #[test]
    fn svg_labels_skip_hidden_text_and_compare_shortened_names_by_their_start() {
        let svg =
            r#"<svg><text class="hide">Reset Zoom</text><text>galaxy::cpu::lay..</text></svg>"#;
        assert_eq!(svg_labels(svg), vec!["galaxy::cpu::lay"]);
    }

    #[test]
    fn formulas_are_compared_without_spacing() {
        assert_eq!(squeeze("ℓ = 64\u{200b} s"), "ℓ=64s");
    }
}
