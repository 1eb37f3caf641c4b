//! The last step of every book build: what mdBook cannot write by itself.
//!
//! - Each page gets a footer, after its text: the edition, its version, the commit it was
//!   built from (a link to it), and a "Report a problem with this page" link that opens a
//!   prefilled erratum issue (`.github/ISSUE_TEMPLATE/erratum.yml`) naming the page, the
//!   edition and the commit.
//! - Each page gets its own description for link previews: `<meta name="description">`
//!   (mdBook writes the book's description on every page), Open Graph tags and a canonical
//!   address, from the page's title and its first paragraph.
//! - `sitemap.xml` lists every page at the published address. There is no maintained
//!   mdBook sitemap plugin that fits: the backends (`mdbook-sitemap`) are a second
//!   `[output]`, which makes mdBook move the HTML to `book/html/`, and the standalone
//!   generator (`mdbook-sitemap-generator`) reads `SUMMARY.md` with a clap 3 CLI that has
//!   not changed in years. Generating it here takes a few lines and sees exactly the pages
//!   that were built.
//!
//! The build writes these into the HTML files after mdBook has written them, so
//! `cargo xtask serve` (mdBook's own live server) shows pages without them.

use std::path::Path;

use scraper::{Html, Selector};

use crate::build_info::BuildInfo;

/// The issue template the errata links open (in `.github/ISSUE_TEMPLATE/`).
pub const ERRATUM_TEMPLATE: &str = "erratum.yml";

/// Longest page description, in characters; link previews cut longer ones.
const DESCRIPTION_LENGTH: usize = 200;

/// Pages that are not a page of the text: the sidebar frame and the print page get no
/// footer and are not in the sitemap. (The "not found" page is left as mdBook wrote it.)
const NOT_TEXT_PAGES: [&str; 2] = ["toc.html", "print.html"];

/// Which book is being finished.
#[derive(Debug, Clone)]
pub struct Edition {
    /// The book's title as the reader sees it: the book's, or a course's.
    pub title: String,
    /// For a course's edition, the book it is cut from.
    pub cut_from: Option<String>,
    /// Where this edition is published, with a trailing slash.
    pub site_address: String,
}

/// What `finish` did, for the build's summary line.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Finished {
    pub pages_with_footer: usize,
    pub pages_described: usize,
    pub sitemap_entries: usize,
}

/// Adds footers, descriptions and `sitemap.xml` to the book built in `book_dir`. A
/// directory that holds a book of its own (a course's edition, with its own `toc.html`)
/// is left alone.
pub fn finish(book_dir: &Path, edition: &Edition, info: &BuildInfo) -> Result<Finished, String> {
    let mut pages = Vec::new();
    list_pages(book_dir, "", &mut pages)?;
    pages.sort();
    let mut finished = Finished::default();
    let mut sitemap = Vec::new();
    for page in &pages {
        let path = book_dir.join(page);
        let html = std::fs::read_to_string(&path)
            .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
        if !html.contains("id=\"mdbook-content\"") {
            continue; // not a page mdBook made (an HTML file copied from src/)
        }
        if page == "404.html" {
            continue; // served for every missing address: no address or description of its own
        }
        let address = page_address(&edition.site_address, page);
        let facts = PageFacts::read(&html);
        let mut html = describe(&html, &facts, edition, &address)
            .map_err(|error| format!("{}: {error}", path.display()))?;
        finished.pages_described += 1;
        if !NOT_TEXT_PAGES.contains(&page.as_str()) {
            html = add_footer(&html, &footer(&facts.title, edition, info, &address))
                .map_err(|error| format!("{}: {error}", path.display()))?;
            finished.pages_with_footer += 1;
            sitemap.push(address);
        }
        std::fs::write(&path, html)
            .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
    }
    let sitemap_path = book_dir.join("sitemap.xml");
    std::fs::write(&sitemap_path, sitemap_xml(&sitemap))
        .map_err(|error| format!("cannot write {}: {error}", sitemap_path.display()))?;
    finished.sitemap_entries = sitemap.len();
    Ok(finished)
}

/// Every `.html` file under `directory`, relative to the book (`module-1/x/index.html`).
fn list_pages(book_dir: &Path, relative: &str, pages: &mut Vec<String>) -> Result<(), String> {
    let directory = book_dir.join(relative);
    let entries = std::fs::read_dir(&directory)
        .map_err(|error| format!("cannot read {}: {error}", directory.display()))?;
    for entry in entries {
        let entry =
            entry.map_err(|error| format!("cannot read {}: {error}", directory.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let child = if relative.is_empty() {
            name.clone()
        } else {
            format!("{relative}/{name}")
        };
        let path = entry.path();
        if path.is_dir() {
            if !path.join("toc.html").exists() {
                list_pages(book_dir, &child, pages)?;
            }
        } else if name.ends_with(".html") {
            pages.push(child);
        }
    }
    Ok(())
}

/// A page's published address; the book's first page is the site's address itself.
pub fn page_address(site_address: &str, page: &str) -> String {
    if page == "index.html" {
        site_address.to_string()
    } else {
        format!("{site_address}{page}")
    }
}

/// What a page says about itself.
#[derive(Debug, PartialEq, Eq)]
struct PageFacts {
    /// The page's first `#` heading, or its `<title>`.
    title: String,
    /// Its first paragraph, shortened; `None` for a page without one.
    description: Option<String>,
}

impl PageFacts {
    fn read(html: &str) -> PageFacts {
        let document = Html::parse_document(html);
        let text_of = |selector: &str| {
            let selector = Selector::parse(selector).expect("a valid selector");
            document
                .select(&selector)
                .map(|element| collapse_whitespace(&element.text().collect::<String>()))
                .find(|text| !text.is_empty())
        };
        let title = text_of("main h1")
            .or_else(|| text_of("title"))
            .unwrap_or_default();
        let description = text_of("main > p").map(|text| shorten(&text, DESCRIPTION_LENGTH));
        PageFacts { title, description }
    }
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// At most `limit` characters, cut at a word boundary, with "…" when cut.
fn shorten(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_string();
    }
    let mut shortened = String::new();
    for word in text.split(' ') {
        if shortened.chars().count() + word.chars().count() + 1 > limit - 1 {
            break;
        }
        if !shortened.is_empty() {
            shortened.push(' ');
        }
        shortened.push_str(word);
    }
    let shortened = shortened.trim_end_matches([',', ';', ':', '.']);
    format!("{shortened}…")
}

/// Replaces mdBook's book-wide `<meta name="description">` with the page's own
/// description, Open Graph tags and its canonical address.
fn describe(
    html: &str,
    facts: &PageFacts,
    edition: &Edition,
    address: &str,
) -> Result<String, String> {
    const START: &str = "<meta name=\"description\" content=\"";
    let start = html
        .find(START)
        .ok_or("no <meta name=\"description\"> from mdBook to replace")?;
    let end = html[start..]
        .find('>')
        .map(|offset| start + offset + 1)
        .ok_or("an unfinished <meta name=\"description\"> tag")?;
    let book_description = unescape_attribute(&html[start + START.len()..end - 2]);
    let description = facts.description.clone().unwrap_or(book_description);
    let kind = if address == edition.site_address {
        "website"
    } else {
        "article"
    };
    let tags = [
        format!(
            "<meta name=\"description\" content=\"{}\">",
            escape(&description)
        ),
        format!("<link rel=\"canonical\" href=\"{}\">", escape(address)),
        format!("<meta property=\"og:type\" content=\"{kind}\">"),
        format!(
            "<meta property=\"og:site_name\" content=\"{}\">",
            escape(&edition.title)
        ),
        format!(
            "<meta property=\"og:title\" content=\"{}\">",
            escape(&facts.title)
        ),
        format!(
            "<meta property=\"og:description\" content=\"{}\">",
            escape(&description)
        ),
        format!("<meta property=\"og:url\" content=\"{}\">", escape(address)),
        "<meta name=\"twitter:card\" content=\"summary\">".to_string(),
    ];
    Ok(format!(
        "{}{}{}",
        &html[..start],
        tags.join("\n        "),
        &html[end..]
    ))
}

/// The footer after the page's text (outside `<main>`, so the level filter and the
/// search index never see it).
fn footer(title: &str, edition: &Edition, info: &BuildInfo, address: &str) -> String {
    let version = &info.project.version;
    let commit = match info.commit_address() {
        Some(commit_address) => format!(
            "<a class=\"book-commit\" href=\"{}\"><code>{}</code></a>",
            escape(&commit_address),
            escape(info.commit.short())
        ),
        None => "<code class=\"book-commit\">unknown</code>".to_string(),
    };
    let changes = if info.commit.has_local_changes {
        " with local changes"
    } else {
        ""
    };
    let edition_name = match &edition.cut_from {
        Some(book) => format!(
            "<cite>{}</cite>, an edition of <cite>{}</cite>",
            escape(&edition.title),
            escape(book)
        ),
        None => format!("<cite>{}</cite>", escape(&edition.title)),
    };
    format!(
        "\n                    <footer class=\"page-footer\" id=\"page-footer\">\n\
         <p class=\"book-edition\">{edition_name}, version <span class=\"book-version\">{}</span>, \
         built from commit {commit}{changes}.</p>\n\
         <p><a class=\"errata-link\" href=\"{}\">Report a problem with this page</a> \
         (a mistake, something unclear, a broken example): it opens an issue that names \
         this page and this version.</p>\n\
         </footer>",
        escape(version),
        escape(&errata_address(title, edition, info, address)),
    )
}

/// A new issue from the erratum template, with the page, edition and commit filled in.
pub fn errata_address(title: &str, edition: &Edition, info: &BuildInfo, address: &str) -> String {
    let commit = match &info.commit.hash {
        Some(hash) if info.commit.has_local_changes => format!("{hash} (with local changes)"),
        Some(hash) => hash.clone(),
        None => "unknown".to_string(),
    };
    let fields = [
        ("template", ERRATUM_TEMPLATE.to_string()),
        ("title", format!("Erratum: {title}")),
        ("page", format!("{title} — {address}")),
        (
            "edition",
            format!("{} {}", edition.title, info.project.version),
        ),
        ("commit", commit),
    ];
    let query: Vec<String> = fields
        .iter()
        .map(|(name, value)| format!("{name}={}", percent_encode(value)))
        .collect();
    format!("{}/issues/new?{}", info.project.repository, query.join("&"))
}

fn add_footer(html: &str, footer: &str) -> Result<String, String> {
    let end = html
        .find("</main>")
        .ok_or("no </main> to put the footer after")?
        + "</main>".len();
    Ok(format!("{}{footer}{}", &html[..end], &html[end..]))
}

fn sitemap_xml(addresses: &[String]) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for address in addresses {
        xml.push_str(&format!("  <url><loc>{}</loc></url>\n", escape(address)));
    }
    xml.push_str("</urlset>\n");
    xml
}

/// Escapes text for an HTML attribute or element (and for XML).
fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#x27;"),
            other => escaped.push(other),
        }
    }
    escaped
}

/// The few entities mdBook writes into an attribute.
fn unescape_attribute(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Percent-encodes a query value (RFC 3986: everything but unreserved characters).
fn percent_encode(text: &str) -> String {
    let mut encoded = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build_info::{Commit, Project};

    const PAGE: &str = r##"<!DOCTYPE HTML>
<html><head>
<title>Virtual memory - The Book</title>
<meta name="description" content="The book&#x27;s own description.">
</head><body><div id="mdbook-content"><main>
<h1 class="level-3" id="virtual-memory"><a class="header" href="#virtual-memory">Virtual memory</a></h1>
<p>Every address a program uses is   a <em>virtual</em> one &amp; the
hardware translates it.</p>
<p>Second paragraph.</p>
</main>
<nav class="nav-wrapper"></nav></div></body></html>"##;

    fn info(has_local_changes: bool) -> BuildInfo {
        BuildInfo {
            project: Project {
                version: "0.3.0".into(),
                repository: "https://github.com/owner/book".into(),
            },
            commit: Commit {
                hash: Some("0123456789abcdef0123456789abcdef01234567".into()),
                has_local_changes,
            },
        }
    }

    fn edition() -> Edition {
        Edition {
            title: "The Book".into(),
            cut_from: None,
            site_address: "https://owner.github.io/book/".into(),
        }
    }

    #[test]
    fn reads_the_title_and_first_paragraph() {
        let facts = PageFacts::read(PAGE);
        assert_eq!(facts.title, "Virtual memory");
        assert_eq!(
            facts.description.as_deref(),
            Some("Every address a program uses is a virtual one & the hardware translates it.")
        );
    }

    #[test]
    fn long_descriptions_are_cut_at_a_word() {
        let text = "word ".repeat(100);
        let short = shorten(text.trim(), 30);
        assert!(short.chars().count() <= 30, "{short}");
        assert!(short.ends_with("word…"), "{short}");
    }

    #[test]
    fn the_page_description_replaces_the_books() {
        let address = page_address(&edition().site_address, "module-1/virtual-memory.html");
        let html = describe(PAGE, &PageFacts::read(PAGE), &edition(), &address).unwrap();
        assert!(!html.contains("The book&#x27;s own description."));
        assert!(html.contains(
            "<meta name=\"description\" content=\"Every address a program uses is a virtual one &amp; the hardware translates it.\">"
        ));
        assert!(html.contains(
            "<meta property=\"og:url\" content=\"https://owner.github.io/book/module-1/virtual-memory.html\">"
        ));
        assert!(html.contains("<meta property=\"og:title\" content=\"Virtual memory\">"));
        assert!(html.contains("<meta property=\"og:type\" content=\"article\">"));
    }

    #[test]
    fn a_page_without_a_paragraph_keeps_the_books_description() {
        let page = PAGE.replace("<p>", "<div>").replace("</p>", "</div>");
        let html = describe(&page, &PageFacts::read(&page), &edition(), "x").unwrap();
        assert!(
            html.contains(
                "<meta name=\"description\" content=\"The book&#x27;s own description.\">"
            )
        );
    }

    #[test]
    fn the_footer_names_version_commit_and_opens_a_prefilled_issue() {
        let address = "https://owner.github.io/book/module-1/virtual-memory.html";
        let html = add_footer(
            PAGE,
            &footer("Virtual memory", &edition(), &info(false), address),
        )
        .unwrap();
        let footer_start = html.find("<footer").unwrap();
        assert!(
            footer_start > html.find("</main>").unwrap(),
            "the footer is outside <main>"
        );
        assert!(html.contains("version <span class=\"book-version\">0.3.0</span>"));
        assert!(html.contains(
            "href=\"https://github.com/owner/book/commit/0123456789abcdef0123456789abcdef01234567\"><code>0123456789ab</code>"
        ));
        let link = errata_address("Virtual memory", &edition(), &info(false), address);
        assert_eq!(
            link,
            "https://github.com/owner/book/issues/new?template=erratum.yml\
             &title=Erratum%3A%20Virtual%20memory\
             &page=Virtual%20memory%20%E2%80%94%20https%3A%2F%2Fowner.github.io%2Fbook%2Fmodule-1%2Fvirtual-memory.html\
             &edition=The%20Book%200.3.0\
             &commit=0123456789abcdef0123456789abcdef01234567"
        );
        // In the attribute, the query's `&` is written `&amp;`.
        assert!(html.contains(&format!("href=\"{}\"", link.replace('&', "&amp;"))));
    }

    #[test]
    fn local_changes_are_said() {
        let html = footer("T", &edition(), &info(true), "a");
        assert!(html.contains("</a> with local changes."));
        assert!(html.contains("%20%28with%20local%20changes%29"));
    }

    #[test]
    fn a_course_edition_names_the_book_it_is_cut_from() {
        let course = Edition {
            title: "GPU Computing".into(),
            cut_from: Some("The Book".into()),
            site_address: "https://owner.github.io/book/gpu/".into(),
        };
        let html = footer("T", &course, &info(false), "a");
        assert!(html.contains("<cite>GPU Computing</cite>, an edition of <cite>The Book</cite>"));
    }

    #[test]
    fn finishing_a_book_writes_footers_descriptions_and_the_sitemap() {
        let directory =
            std::env::temp_dir().join(format!("xtask-site-pages-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&directory);
        std::fs::create_dir_all(directory.join("part")).unwrap();
        std::fs::create_dir_all(directory.join("course")).unwrap();
        std::fs::write(directory.join("index.html"), PAGE).unwrap();
        std::fs::write(directory.join("part/page.html"), PAGE).unwrap();
        std::fs::write(directory.join("print.html"), PAGE).unwrap();
        std::fs::write(directory.join("404.html"), PAGE).unwrap();
        std::fs::write(directory.join("figure.html"), "<p>not mdBook's</p>").unwrap();
        // A course's edition inside the book: a book of its own, left alone.
        std::fs::write(directory.join("course/toc.html"), "").unwrap();
        std::fs::write(directory.join("course/page.html"), PAGE).unwrap();

        let finished = finish(&directory, &edition(), &info(false)).unwrap();
        assert_eq!(
            finished,
            Finished {
                pages_with_footer: 2,
                pages_described: 3,
                sitemap_entries: 2
            }
        );
        let sitemap = std::fs::read_to_string(directory.join("sitemap.xml")).unwrap();
        assert!(sitemap.contains("<loc>https://owner.github.io/book/</loc>"));
        assert!(sitemap.contains("<loc>https://owner.github.io/book/part/page.html</loc>"));
        assert!(!sitemap.contains("print.html"));
        let print = std::fs::read_to_string(directory.join("print.html")).unwrap();
        assert!(!print.contains("page-footer") && print.contains("og:title"));
        let not_found = std::fs::read_to_string(directory.join("404.html")).unwrap();
        assert_eq!(not_found, PAGE);
        let course = std::fs::read_to_string(directory.join("course/page.html")).unwrap();
        assert_eq!(course, PAGE);
        std::fs::remove_dir_all(&directory).unwrap();
    }
}
