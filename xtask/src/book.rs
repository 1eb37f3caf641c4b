//! Building and serving the book with mdBook.

use std::path::Path;
use std::process::Command;

use crate::build_info::BuildInfo;
use crate::site_pages::{self, Edition};
use crate::tools::{BookTools, StderrLine, repository_root, status_with_stderr};

pub fn build() -> Result<(), String> {
    let tools = BookTools::ensure_installed()?;
    check_figures_link()?;
    let root = repository_root();
    let info = BuildInfo::read(&root).map_err(|error| error.to_string())?;
    eprintln!(
        "Building the book (version {}, commit {}) into {} …",
        info.project.version,
        info.commit.describe(),
        root.join("book").display()
    );
    let mut command = tools.mdbook_command();
    command.arg("build").arg(&root);
    run(command, "mdbook build")?;
    let edition = Edition {
        title: book_title(&root)?,
        cut_from: None,
        site_address: info
            .project
            .site_address()
            .map_err(|error| error.to_string())?,
    };
    let finished = site_pages::finish(&root.join("book"), &edition, &info)?;
    eprintln!(
        "Footers on {} pages, descriptions on {}, {} pages in sitemap.xml.",
        finished.pages_with_footer, finished.pages_described, finished.sitemap_entries
    );
    eprintln!(
        "Done: the book is in {}. Read it with `cargo xtask serve` (http://localhost:3000): \
         opened as a file, {} shows no chapter levels in the sidebar.",
        root.join("book").display(),
        root.join("book").join("index.html").display()
    );
    Ok(())
}

pub fn serve(hostname: &str, port: u16) -> Result<(), String> {
    let tools = BookTools::ensure_installed()?;
    check_figures_link()?;
    let root = repository_root();
    eprintln!("Serving the book on http://{hostname}:{port} (live reload; Ctrl-C stops) …");
    let mut command = tools.mdbook_command();
    command
        .arg("serve")
        .arg(&root)
        .args(["--hostname", hostname, "--port", &port.to_string()]);
    run(command, "mdbook serve")
}

/// The `[book] title` of the `book.toml` in `root`.
pub fn book_title(root: &Path) -> Result<String, String> {
    let path = root.join("book.toml");
    let text = std::fs::read_to_string(&path)
        .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    let config: toml::Table = text
        .parse()
        .map_err(|error| format!("{} is not valid TOML: {error}", path.display()))?;
    config
        .get("book")
        .and_then(|book| book.get("title"))
        .and_then(|title| title.as_str())
        .map(str::to_string)
        .ok_or_else(|| format!("{} has no [book] title", path.display()))
}

/// mdBook only publishes files under `src/`; `src/figures` is a link to the top-level
/// `figures/` so that the figures and their data stay in one place. A checkout that
/// cannot hold links (Windows without developer mode) gets a clear message.
fn check_figures_link() -> Result<(), String> {
    let link = repository_root().join("src").join("figures");
    if link.is_dir() {
        Ok(())
    } else {
        Err(format!(
            "{} should be a link to ../figures; on Windows enable symbolic links for git \
             (`git config core.symlinks true`, developer mode) and check out again, or copy \
             the figures directory there",
            link.display()
        ))
    }
}

/// The note printed after mdbook-katex's version warning.
const KATEX_VERSION_NOTE: &str = "note: this warning is expected. The pinned mdbook-katex was \
compiled against an earlier mdbook 0.5 release than the pinned mdbook; they exchange the same \
format, and the math renders (tests-browser checks it).";

/// Runs mdBook, explaining the one warning every build prints.
fn run(command: Command, what: &str) -> Result<(), String> {
    let status = status_with_stderr(command, |line| {
        if line.contains("built against") && line.to_lowercase().contains("mdbook") {
            StderrLine::ShowWithNote(KATEX_VERSION_NOTE)
        } else {
            StderrLine::Show
        }
    })
    .map_err(|error| format!("cannot start {what}: {error}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{what} failed ({status})"))
    }
}
