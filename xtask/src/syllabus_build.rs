//! `cargo xtask syllabus <file.toml>`: a separate book with a course's chapters, cut to
//! the course's highest level, built into `book/<name>/`.
//!
//! mdBook has no notion of a subset of a book, so we give it a whole book of its own: a
//! temporary root under `target/syllabus/<name>/` with a generated `SUMMARY.md`, the cut
//! chapter files, everything else `src/` holds, and a `book.toml` derived from the real
//! one. The chapters' include directives (`{{#include ../code/…}}`) are relative to the
//! chapter, so the temporary root gets its own copy of `code/`, `shaders/` and `exercises/`
//! beside its `src/`, exactly where the real ones sit beside the real `src/`.

use std::path::{Path, PathBuf};

use crate::build_info::BuildInfo;
use crate::edition_links::{self, EditionPages, LeftOut};
use crate::level_cut::{CutChapter, RemovedSection, cut_above_level, find_headings};
use crate::selection::{PrefixPage, Selection, chapter_files, select_chapters, write_summary};
use crate::site_pages::{self, Edition};
use crate::summary::{Chapter, Summary};
use crate::syllabus::Syllabus;
use crate::tools::{BookTools, repository_root};

/// Directories that chapters include code from, relative to the repository root. The
/// exercise pages (level 4) include their starters and solutions from `exercises/`; the
/// Rust chapters of Module 0 show the project's own CI script from `.ci/`.
const INCLUDED_DIRECTORIES: [&str; 4] = ["code", "shaders", "exercises", ".ci"];

/// Single files that chapters include, relative to the repository root: the workspace
/// manifest, whose lint configuration the Rust chapters show.
const INCLUDED_FILES: [&str; 1] = ["Cargo.toml"];

/// Names a syllabus may not take: the main book's own directories in `book/`.
const RESERVED_NAMES: [&str; 6] = [
    "css",
    "fonts",
    "figures",
    "theme",
    "katex-fonts",
    "FontAwesome",
];

/// What the build did to one chapter file, for the summary printed at the end.
struct ChapterReport {
    path: String,
    outcome: CutChapter,
}

/// A page the edition keeps: its path under the edition's `src/`, its Markdown in the
/// book, and what the level cut left of it.
struct KeptPage {
    path: String,
    original: String,
    markdown: String,
}

/// The file of the edition's stylesheet, beside its `book.toml`.
const EDITION_STYLESHEET: &str = "edition.css";

pub fn build(syllabus_file: &Path) -> Result<(), String> {
    let root = repository_root();
    let syllabus = Syllabus::read(syllabus_file).map_err(|error| error.to_string())?;
    if RESERVED_NAMES.contains(&syllabus.name.as_str()) {
        return Err(format!(
            "{}: the name {:?} is a directory of the main book's output; choose another",
            syllabus_file.display(),
            syllabus.name
        ));
    }
    let summary_text = read(&root.join("src").join("SUMMARY.md"))?;
    let summary = Summary::parse(&summary_text);
    let mut selections = select_chapters(&syllabus, &summary).map_err(|error| error.to_string())?;

    let book_root = root.join("target").join("syllabus").join(&syllabus.name);
    let output = root.join("book").join(&syllabus.name);
    if book_root.exists() {
        // Start clean, so a chapter dropped from the syllabus does not linger.
        std::fs::remove_dir_all(&book_root)
            .map_err(|error| format!("cannot clear {}: {error}", book_root.display()))?;
    }
    let book_src = book_root.join("src");
    copy_tree(&root.join("src"), &book_src, &|path| {
        path.extension().is_some_and(|extension| extension == "md")
    })?;
    for directory in INCLUDED_DIRECTORIES {
        let from = root.join(directory);
        if from.exists() {
            copy_tree(&from, &book_root.join(directory), &|path| {
                path.file_name().is_some_and(|name| name == "target")
            })?;
        }
    }
    for file in INCLUDED_FILES {
        let from = root.join(file);
        if from.is_file() {
            std::fs::copy(&from, book_root.join(file))
                .map_err(|error| format!("cannot copy {}: {error}", from.display()))?;
        }
    }

    // Cut every selected chapter file; a chapter whose title is above the level goes.
    let mut reports = Vec::new();
    let mut kept_pages = Vec::new();
    for selection in &mut selections {
        selection.chapters = cut_chapters(
            std::mem::take(&mut selection.chapters),
            &root.join("src"),
            syllabus.max_level,
            &mut reports,
            &mut kept_pages,
        )?;
    }
    let prefix_pages =
        cut_extra_pages(&syllabus, &root, &selections, &mut reports, &mut kept_pages)?;
    let unlinked = write_kept_pages(&root.join("src"), &book_src, &kept_pages)?;

    write(
        &book_src.join("SUMMARY.md"),
        &write_summary(&prefix_pages, &selections),
    )?;
    let info = BuildInfo::read(&root).map_err(|error| error.to_string())?;
    let to_text = |error: crate::build_info::BuildInfoError| error.to_string();
    let edition = Edition {
        title: syllabus.title.clone(),
        cut_from: Some(crate::book::book_title(&root)?),
        site_address: format!(
            "{}{}/",
            info.project.site_address().map_err(to_text)?,
            syllabus.name
        ),
    };
    let site_path = format!(
        "{}{}/",
        info.project.site_path().map_err(to_text)?,
        syllabus.name
    );
    write_book_toml(&root, &book_root, &syllabus.title, &output, &site_path)?;

    let tools = BookTools::ensure_installed()?;
    eprintln!(
        "Building the syllabus {:?} into {} …",
        syllabus.title,
        output.display()
    );
    let mut command = tools.mdbook_command();
    command.arg("build").arg(&book_root);
    let status = command
        .status()
        .map_err(|error| format!("cannot start mdbook build: {error}"))?;
    if !status.success() {
        return Err(format!("mdbook build failed ({status})"));
    }
    // The footer, page descriptions and sitemap, as for the whole book.
    site_pages::finish(&output, &edition, &info)?;
    print_report(&syllabus, &selections, &reports, &unlinked, &output);
    Ok(())
}

/// Writes the kept pages into the edition's `src/`, each link into a page or section the
/// edition leaves out turned into plain text (see `edition_links`), and returns the links
/// turned, by page.
fn write_kept_pages(
    src: &Path,
    book_src: &Path,
    kept_pages: &[KeptPage],
) -> Result<Vec<(String, Vec<edition_links::Unlinked>)>, String> {
    let mut book_pages = Vec::new();
    list_markdown(src, "", &mut book_pages)?;
    let mut edition = EditionPages::new(book_pages);
    for page in kept_pages {
        edition.keep(&page.path, &page.original, &page.markdown);
    }
    let mut unlinked = Vec::new();
    for page in kept_pages {
        let (markdown, turned) = edition.unlink(&page.path, &page.markdown);
        write(&book_src.join(&page.path), &markdown)?;
        if !turned.is_empty() {
            unlinked.push((page.path.clone(), turned));
        }
    }
    Ok(unlinked)
}

/// Every `.md` file under `directory`, relative to it with `/` separators.
fn list_markdown(directory: &Path, prefix: &str, pages: &mut Vec<String>) -> Result<(), String> {
    let entries = std::fs::read_dir(directory)
        .map_err(|error| format!("cannot read {}: {error}", directory.display()))?;
    for entry in entries {
        let entry =
            entry.map_err(|error| format!("cannot read {}: {error}", directory.display()))?;
        let relative = format!("{prefix}{}", entry.file_name().to_string_lossy());
        if entry.path().is_dir() {
            list_markdown(&entry.path(), &format!("{relative}/"), pages)?;
        } else if relative.ends_with(".md") {
            pages.push(relative);
        }
    }
    Ok(())
}

fn print_unlinked(unlinked: &[(String, Vec<edition_links::Unlinked>)]) {
    let total: usize = unlinked.iter().map(|(_, links)| links.len()).sum();
    println!(
        "  {total} link(s) into left-out pages or cut sections made plain text \
         (marked \"not in this edition\")"
    );
    for (page, links) in unlinked {
        for link in links {
            let why = match &link.reason {
                LeftOut::Page(target) => format!("{target} is not in the edition"),
                LeftOut::Section { page, fragment } => {
                    format!("the section #{fragment} of {page} is above the level")
                }
            };
            println!("    {page}: {} ({why})", link.destination);
        }
    }
}

/// Cuts each chapter file of a tree, writes what is kept into `book_src`, and returns
/// the tree without the dropped chapters (a dropped chapter takes its children along).
fn cut_chapters(
    chapters: Vec<Chapter>,
    src: &Path,
    max_level: u8,
    reports: &mut Vec<ChapterReport>,
    kept_pages: &mut Vec<KeptPage>,
) -> Result<Vec<Chapter>, String> {
    let mut kept = Vec::new();
    for mut chapter in chapters {
        if let Some(path) = &chapter.path {
            let original = read(&src.join(path))?;
            let outcome = cut_above_level(&original, max_level);
            let dropped = matches!(outcome, CutChapter::Dropped { .. });
            if let CutChapter::Kept { markdown, .. } = &outcome {
                kept_pages.push(KeptPage {
                    path: path.clone(),
                    original,
                    markdown: markdown.clone(),
                });
            }
            reports.push(ChapterReport {
                path: path.clone(),
                outcome,
            });
            if dropped {
                continue;
            }
        }
        chapter.children = cut_chapters(chapter.children, src, max_level, reports, kept_pages)?;
        kept.push(chapter);
    }
    Ok(kept)
}

/// Cuts the instructor's pages like the chapters; they go to the top of the book's `src/`.
fn cut_extra_pages(
    syllabus: &Syllabus,
    root: &Path,
    selections: &[Selection],
    reports: &mut Vec<ChapterReport>,
    kept_pages: &mut Vec<KeptPage>,
) -> Result<Vec<PrefixPage>, String> {
    let chapter_paths: Vec<String> = selections
        .iter()
        .flat_map(|selection| selection.chapters.iter().flat_map(chapter_files))
        .collect();
    let mut pages = Vec::new();
    for entry in &syllabus.extra_pages {
        let source = root.join(&entry.text);
        let text = std::fs::read_to_string(&source).map_err(|error| {
            syllabus
                .error_at(
                    entry,
                    format!("cannot read the extra page {}: {error}", source.display()),
                )
                .to_string()
        })?;
        let file_name = source
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let taken = chapter_paths.contains(&file_name)
            || pages.iter().any(|page: &PrefixPage| page.path == file_name);
        if taken {
            return Err(syllabus
                .error_at(
                    entry,
                    format!("another page of the syllabus is already called {file_name}"),
                )
                .to_string());
        }
        let outcome = cut_above_level(&text, syllabus.max_level);
        if let CutChapter::Kept { markdown, .. } = &outcome {
            kept_pages.push(KeptPage {
                path: file_name.clone(),
                original: text.clone(),
                markdown: markdown.clone(),
            });
            // The page's own title names it in the table of contents.
            let title = find_headings(&text)
                .into_iter()
                .find(|heading| heading.rank == 1)
                .map_or_else(
                    || file_name.trim_end_matches(".md").to_string(),
                    |heading| heading.text,
                );
            pages.push(PrefixPage {
                title,
                path: file_name.clone(),
            });
        }
        reports.push(ChapterReport {
            path: file_name,
            outcome,
        });
    }
    Ok(pages)
}

/// The real `book.toml` with the syllabus's title, its own `site-url` (its 404 page is
/// published at `site_path`) and the build going to `output`.
/// The stylesheets and scripts it names are copied beside it, so their paths still hold.
fn write_book_toml(
    root: &Path,
    book_root: &Path,
    title: &str,
    output: &Path,
    site_path: &str,
) -> Result<(), String> {
    let mut config: toml::Table = read(&root.join("book.toml"))?
        .parse()
        .map_err(|error| format!("book.toml is not valid TOML: {error}"))?;
    let book = table(&mut config, "book")?;
    book.insert("title".into(), title.into());
    book.insert("src".into(), "src".into());
    table(&mut config, "build")?
        .insert("build-dir".into(), output.to_string_lossy().as_ref().into());

    if let Some(html) = config
        .get_mut("output")
        .and_then(|output| output.get_mut("html"))
        .and_then(|html| html.as_table_mut())
    {
        html.insert("site-url".into(), site_path.into());
        // The note after a link into what the edition leaves out (see `edition_links`).
        let stylesheets = html
            .entry("additional-css")
            .or_insert_with(|| toml::Value::Array(Vec::new()));
        match stylesheets.as_array_mut() {
            Some(stylesheets) => stylesheets.push(EDITION_STYLESHEET.into()),
            None => return Err("output.html.additional-css in book.toml is not a list".into()),
        }
    }
    write(
        &book_root.join(EDITION_STYLESHEET),
        edition_links::NOTE_STYLESHEET,
    )?;

    let html = config.get("output").and_then(|output| output.get("html"));
    let mut referenced: Vec<String> = vec!["theme".to_string()];
    for key in ["additional-css", "additional-js"] {
        if let Some(paths) = html
            .and_then(|html| html.get(key))
            .and_then(|value| value.as_array())
        {
            referenced.extend(
                paths
                    .iter()
                    .filter_map(|path| path.as_str())
                    .map(str::to_string),
            );
        }
    }
    if let Some(theme) = html
        .and_then(|html| html.get("theme"))
        .and_then(|value| value.as_str())
    {
        referenced.push(theme.to_string());
    }
    for path in referenced {
        let from = root.join(&path);
        let to = book_root.join(&path);
        if from.is_dir() {
            copy_tree(&from, &to, &|_| false)?;
        } else if from.is_file() && !to.exists() {
            create_parent(&to)?;
            std::fs::copy(&from, &to)
                .map_err(|error| format!("cannot copy {}: {error}", from.display()))?;
        }
    }

    let text =
        toml::to_string(&config).map_err(|error| format!("cannot write book.toml: {error}"))?;
    write(
        &book_root.join("book.toml"),
        &format!(
            "# Generated by `cargo xtask syllabus` from the repository's book.toml.\n\n{text}"
        ),
    )
}

fn table<'a>(config: &'a mut toml::Table, key: &str) -> Result<&'a mut toml::Table, String> {
    config
        .entry(key)
        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
        .as_table_mut()
        .ok_or_else(|| format!("[{key}] in book.toml is not a table"))
}

fn print_report(
    syllabus: &Syllabus,
    selections: &[Selection],
    reports: &[ChapterReport],
    unlinked: &[(String, Vec<edition_links::Unlinked>)],
    output: &Path,
) {
    println!(
        "Syllabus {:?} (up to level {}):",
        syllabus.title, syllabus.max_level
    );
    let mut drafts = 0;
    for selection in selections {
        drafts += selection.chapters.iter().map(count_drafts).sum::<usize>();
    }
    let mut removed_total = 0;
    for report in reports {
        match &report.outcome {
            CutChapter::Kept { removed, .. } => {
                println!(
                    "  included {}: {} section(s) removed",
                    report.path,
                    removed.len()
                );
                for RemovedSection { heading, level } in removed {
                    println!("    - {heading} (level {level})");
                }
                removed_total += removed.len();
            }
            CutChapter::Dropped { title, level } => {
                println!(
                    "  dropped {} whole: its title {title:?} is level {level}",
                    report.path
                );
            }
        }
    }
    println!("  {drafts} planned chapter(s) included as drafts");
    println!("  {removed_total} section(s) removed in all");
    print_unlinked(unlinked);
    println!("Output: {}", output.join("index.html").display());
}

fn count_drafts(chapter: &Chapter) -> usize {
    usize::from(chapter.path.is_none()) + chapter.children.iter().map(count_drafts).sum::<usize>()
}

/// Copies a directory tree, following links (`src/figures` is one), leaving out the
/// paths `skip` names.
fn copy_tree(from: &Path, to: &Path, skip: &dyn Fn(&Path) -> bool) -> Result<(), String> {
    std::fs::create_dir_all(to)
        .map_err(|error| format!("cannot create {}: {error}", to.display()))?;
    let entries = std::fs::read_dir(from)
        .map_err(|error| format!("cannot read {}: {error}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|error| format!("cannot read {}: {error}", from.display()))?;
        let source: PathBuf = entry.path();
        if skip(&source) {
            continue;
        }
        let target = to.join(entry.file_name());
        // `metadata` follows links, so a linked directory is copied as a directory.
        let metadata = std::fs::metadata(&source)
            .map_err(|error| format!("cannot read {}: {error}", source.display()))?;
        if metadata.is_dir() {
            copy_tree(&source, &target, skip)?;
        } else {
            std::fs::copy(&source, &target)
                .map_err(|error| format!("cannot copy {}: {error}", source.display()))?;
        }
    }
    Ok(())
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path)
        .map_err(|error| format!("cannot read {}: {error}", path.display()))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    create_parent(path)?;
    std::fs::write(path, text).map_err(|error| format!("cannot write {}: {error}", path.display()))
}

fn create_parent(path: &Path) -> Result<(), String> {
    match path.parent() {
        Some(parent) => std::fs::create_dir_all(parent)
            .map_err(|error| format!("cannot create {}: {error}", parent.display())),
        None => Ok(()),
    }
}
