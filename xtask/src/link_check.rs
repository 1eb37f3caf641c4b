//! `cargo xtask check`: checks a built book the way a reader would find its faults.
//!
//! - every internal link (`href`) and image or script (`src`) leads to a file of the book,
//!   and so does every `url(…)` of its stylesheets (the KaTeX fonts, for one);
//! - every `#fragment` names an `id` on the page it leads to;
//! - no include directive (`{{#…`) was left unexpanded;
//! - no code block is empty (an include whose anchor matched nothing shows as one).
//!
//! External links (`https:`, `mailto:`, …) are not followed: the check runs offline.
//! Pages are parsed with html5ever (through `scraper`), as a browser parses them, so a
//! `href=` inside a script or a code sample is not mistaken for a link.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::Path;

use scraper::{Html, Selector};

/// What the check needs to know about one HTML page.
#[derive(Debug, Default)]
pub struct Page {
    /// Every `href` and `src` value, in page order.
    pub links: Vec<String>,
    /// Every `id` (and old-style `<a name>`) a fragment may point at.
    pub ids: HashSet<String>,
    /// Lines of the page holding `{{#`, a directive mdBook did not expand.
    pub directive_lines: Vec<usize>,
    /// How many `<pre><code>` blocks hold nothing but whitespace.
    pub empty_code_blocks: usize,
}

/// One fault, on one page of the book.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The page, relative to the book's directory.
    pub page: String,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}: {}", self.page, self.message)
    }
}

pub fn run(book_dir: &Path) -> Result<(), String> {
    if !book_dir.join("index.html").is_file() {
        return Err(format!(
            "{} holds no built book (no index.html); run `cargo xtask build` first",
            book_dir.display()
        ));
    }
    let mut files = HashSet::new();
    list_files(book_dir, "", &mut files)?;
    let mut pages = BTreeMap::new();
    for file in files.iter().filter(|file| file.ends_with(".html")) {
        let path = book_dir.join(file);
        let html = std::fs::read_to_string(&path)
            .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
        pages.insert(file.clone(), read_page(&html));
    }
    // Stylesheets take part as pages with links and nothing else.
    for file in files.iter().filter(|file| file.ends_with(".css")) {
        let path = book_dir.join(file);
        let css = std::fs::read_to_string(&path)
            .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
        pages.insert(file.clone(), read_stylesheet(&css));
    }
    let problems = check_pages(&pages, &files);
    for problem in &problems {
        println!("{problem}");
    }
    let links: usize = pages.values().map(|page| page.links.len()).sum();
    println!(
        "Checked {} pages and stylesheets, {links} links, in {}: {} problem(s).",
        pages.len(),
        book_dir.display(),
        problems.len()
    );
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} problem(s) in {}",
            problems.len(),
            book_dir.display()
        ))
    }
}

/// Every file under `directory`, as paths relative to the book with `/` separators
/// (the separator links use).
fn list_files(directory: &Path, prefix: &str, files: &mut HashSet<String>) -> Result<(), String> {
    let entries = std::fs::read_dir(directory)
        .map_err(|error| format!("cannot read {}: {error}", directory.display()))?;
    for entry in entries {
        let entry =
            entry.map_err(|error| format!("cannot read {}: {error}", directory.display()))?;
        let relative = format!("{prefix}{}", entry.file_name().to_string_lossy());
        if entry.path().is_dir() {
            list_files(&entry.path(), &format!("{relative}/"), files)?;
        } else {
            files.insert(relative);
        }
    }
    Ok(())
}

pub fn read_page(html: &str) -> Page {
    let document = Html::parse_document(html);
    let selector = |css: &str| Selector::parse(css).expect("a valid CSS selector");
    let mut page = Page::default();
    // `<base href>` is not a link: mdBook's 404 page carries the site's path there
    // (`site-url`) so that it finds its styles from any address. The page sits at the
    // book's root, so its relative links resolve from the same place here.
    for element in document.select(&selector("[href]:not(base), [src]")) {
        for attribute in ["href", "src"] {
            if let Some(value) = element.value().attr(attribute) {
                page.links.push(value.to_string());
            }
        }
    }
    for element in document.select(&selector("[id]")) {
        page.ids
            .extend(element.value().attr("id").map(str::to_string));
    }
    for element in document.select(&selector("a[name]")) {
        page.ids
            .extend(element.value().attr("name").map(str::to_string));
    }
    page.empty_code_blocks = document
        .select(&selector("pre code"))
        .filter(|code| code.text().all(|text| text.trim().is_empty()))
        .count();
    page.directive_lines = html
        .lines()
        .enumerate()
        .filter(|(_, line)| line.contains("{{#"))
        .map(|(index, _)| index + 1)
        .collect();
    page
}

/// The `url(…)` references of a stylesheet; `data:` URLs are external to the check.
pub fn read_stylesheet(css: &str) -> Page {
    let mut page = Page::default();
    for (index, opening) in css.match_indices("url(") {
        let rest = &css[index + opening.len()..];
        let Some(end) = rest.find(')') else { continue };
        let url = rest[..end]
            .trim()
            .trim_matches(|quote| quote == '"' || quote == '\'');
        if !url.is_empty() {
            page.links.push(url.to_string());
        }
    }
    page
}

/// Checks every page against the book's files (paths relative to the book, `/`-separated).
pub fn check_pages(pages: &BTreeMap<String, Page>, files: &HashSet<String>) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (name, page) in pages {
        let mut report = |message: String| {
            problems.push(Problem {
                page: name.clone(),
                message,
            })
        };
        for link in &page.links {
            if let Err(message) = check_link(name, link, pages, files) {
                report(message);
            }
        }
        for line in &page.directive_lines {
            report(format!("line {line}: an unexpanded directive `{{{{#…`"));
        }
        if page.empty_code_blocks > 0 {
            report(format!("{} empty code block(s)", page.empty_code_blocks));
        }
    }
    problems
}

fn check_link(
    page_name: &str,
    link: &str,
    pages: &BTreeMap<String, Page>,
    files: &HashSet<String>,
) -> Result<(), String> {
    if is_external(link) {
        return Ok(());
    }
    let (before_fragment, fragment) = link.split_once('#').unwrap_or((link, ""));
    let path = before_fragment.split('?').next().unwrap_or_default();
    let target = if path.is_empty() {
        page_name.to_string()
    } else {
        let target = resolve(page_name, &percent_decode(path))
            .ok_or_else(|| format!("link {link:?} leads outside the book"))?;
        if files.contains(&target) {
            target
        } else {
            // A link to a directory serves its index page.
            let index = format!("{}/index.html", target.trim_end_matches('/'))
                .trim_start_matches('/')
                .to_string();
            if files.contains(&index) {
                index
            } else {
                return Err(format!("broken link {link:?}: no file {target}"));
            }
        }
    };
    if fragment.is_empty() {
        return Ok(());
    }
    match pages.get(&target) {
        Some(target_page) if !target_page.ids.contains(&percent_decode(fragment)) => Err(format!(
            "broken fragment {link:?}: {target} has no id {fragment:?}"
        )),
        _ => Ok(()),
    }
}

/// `https://…`, `mailto:…`, `javascript:…`, `//host/…`: anything with a scheme or a host.
fn is_external(link: &str) -> bool {
    if link.starts_with("//") {
        return true;
    }
    match link.split_once(':') {
        Some((scheme, _)) => {
            scheme.starts_with(|character: char| character.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|character| character.is_ascii_alphanumeric() || "+-.".contains(character))
        }
        None => false,
    }
}

/// The book-relative path a link from `page_name` leads to, `..` and `.` resolved;
/// `None` when it climbs above the book's directory.
fn resolve(page_name: &str, path: &str) -> Option<String> {
    let mut segments: Vec<&str> = if path.starts_with('/') {
        Vec::new()
    } else {
        let mut directory: Vec<&str> = page_name.split('/').collect();
        directory.pop(); // the page's own file name
        directory
    };
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop()?;
            }
            segment => segments.push(segment),
        }
    }
    let mut resolved = segments.join("/");
    if path.ends_with('/') {
        resolved.push('/');
    }
    Some(resolved)
}

/// Decodes `%20`-style escapes; a malformed escape is kept as written.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let escaped = (bytes[index] == b'%')
            .then(|| text.get(index + 1..index + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                decoded.push(byte);
                index += 3;
            }
            None => {
                decoded.push(bytes[index]);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks a small book given as `(path, contents)` pairs.
    fn check(book: &[(&str, &str)]) -> Vec<String> {
        let files: HashSet<String> = book.iter().map(|(path, _)| path.to_string()).collect();
        let pages: BTreeMap<String, Page> = book
            .iter()
            .filter(|(path, _)| path.ends_with(".html"))
            .map(|(path, html)| (path.to_string(), read_page(html)))
            .collect();
        check_pages(&pages, &files)
            .into_iter()
            .map(|problem| problem.to_string())
            .collect()
    }

    const CHAPTER: &str = r##"<html><body>
        <h1 id="title">Title</h1><h2 id="setup">Set-up</h2>
        <a href="https://wgpu.rs/">wgpu</a> <a href="mailto:someone@example.org">mail</a>
        <a href="#setup">here</a> <a href="../index.html#welcome">home</a>
        <script>let link = '<a href="nowhere.html">';</script>
        </body></html>"##;
    const INDEX: &str = r##"<p id="welcome"><a href="chapter/page.html#title">go</a>
        <a href="chapter/">directory</a></p>"##;

    #[test]
    fn a_sound_book_has_no_problems() {
        let book = [
            ("index.html", INDEX),
            ("chapter/page.html", CHAPTER),
            ("chapter/index.html", "<p>directory index</p>"),
        ];
        assert_eq!(check(&book), Vec::<String>::new());
    }

    #[test]
    fn the_404_pages_base_is_not_a_link() {
        let page = r#"<head><base href="/site/"><link rel="stylesheet" href="style.css"></head>"#;
        assert_eq!(read_page(page).links, vec!["style.css".to_string()]);
    }

    #[test]
    fn a_broken_link_is_reported_with_its_page() {
        let problems = check(&[("a/page.html", r#"<a href="../missing.html">x</a>"#)]);
        assert_eq!(
            problems,
            [r#"a/page.html: broken link "../missing.html": no file missing.html"#]
        );
    }

    #[test]
    fn a_broken_fragment_is_reported() {
        let book = [
            (
                "index.html",
                r##"<a href="other.html#gone">x</a><a href="#here">y</a><i id="here"></i>"##,
            ),
            ("other.html", r#"<h1 id="there">There</h1>"#),
        ];
        assert_eq!(
            check(&book),
            [r#"index.html: broken fragment "other.html#gone": other.html has no id "gone""#]
        );
    }

    #[test]
    fn images_are_checked_and_escapes_decoded() {
        let page = r#"<img src="figures/roofline%20h100.svg"><img src="../figures/missing.png">"#;
        let problems = check(&[
            ("chapter/page.html", page),
            ("chapter/figures/roofline h100.svg", ""),
        ]);
        assert_eq!(
            problems,
            [
                r#"chapter/page.html: broken link "../figures/missing.png": no file figures/missing.png"#
            ]
        );
    }

    #[test]
    fn a_link_above_the_book_is_reported() {
        let problems = check(&[("index.html", r#"<a href="../outside.html">x</a>"#)]);
        assert_eq!(
            problems,
            [r#"index.html: link "../outside.html" leads outside the book"#]
        );
    }

    #[test]
    fn an_empty_code_block_is_reported() {
        let page = "<pre><code class=\"language-rust\">\n  </code></pre>\
                    <pre><code><span>fn main() {}</span></code></pre>";
        assert_eq!(
            check(&[("page.html", page)]),
            ["page.html: 1 empty code block(s)"]
        );
    }

    #[test]
    fn a_leftover_directive_is_reported_with_its_line() {
        let page = "<p>Intro</p>\n<pre><code>{{#include ../code/src/lib.rs:missing}}</code></pre>";
        assert_eq!(
            check(&[("page.html", page)]),
            ["page.html: line 2: an unexpanded directive `{{#…`"]
        );
    }

    #[test]
    fn stylesheet_urls_are_checked() {
        let css = "@font-face{src:url(../../katex-fonts/Main.woff2) format(\"woff2\")}\n\
                   .a{background:url('missing.png')} .b{background:url(data:image/png;base64,AA)}";
        let files: HashSet<String> = ["theme/katex/katex.css", "katex-fonts/Main.woff2"]
            .map(String::from)
            .into();
        let pages = BTreeMap::from([("theme/katex/katex.css".to_string(), read_stylesheet(css))]);
        let problems: Vec<String> = check_pages(&pages, &files)
            .iter()
            .map(Problem::to_string)
            .collect();
        assert_eq!(
            problems,
            [
                r#"theme/katex/katex.css: broken link "missing.png": no file theme/katex/missing.png"#
            ]
        );
    }

    #[test]
    fn links_are_resolved_relative_to_their_page() {
        assert_eq!(
            resolve("a/b/page.html", "../c.html").as_deref(),
            Some("a/c.html")
        );
        assert_eq!(
            resolve("a/page.html", "./x/../y.png").as_deref(),
            Some("a/y.png")
        );
        assert_eq!(
            resolve("a/page.html", "/root.css").as_deref(),
            Some("root.css")
        );
        assert_eq!(resolve("page.html", "../up.html"), None);
        assert!(is_external("https://example.org") && is_external("mailto:x@y.z"));
        assert!(!is_external("page.html#a:b") && !is_external("figures/plot.svg"));
    }
}
