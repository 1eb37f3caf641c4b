//! `cargo xtask pdf [--syllabus FILE] [--skip-build]`: the book, or a course's edition at
//! its highest level, as one PDF.
//!
//! mdBook already writes `print.html`, every chapter on one page with every level shown.
//! `tests-browser/print-pdf.mjs` prints it with the headless Chromium the browser test
//! uses (through `playwright-core`), adding a title page (edition, version, commit) and a
//! table of contents with page numbers; `theme/print.css` wraps code and fits formulas to
//! the page. Then `pdf_check.rs` reads the PDF back with poppler's `pdftotext`, `pdfinfo`
//! and `pdffonts` and checks it. The PDF goes beside the edition's HTML:
//! `book/<repository name>.pdf` for the whole book, `book/<name>/<name>.pdf` for a course.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::build_info::BuildInfo;
use crate::pdf_check::{self, Expectations};
use crate::syllabus::Syllabus;
use crate::tools::repository_root;

/// The poppler tools the check reads the PDF with (Debian: `poppler-utils`).
const POPPLER_TOOLS: [&str; 3] = ["pdftotext", "pdfinfo", "pdffonts"];

/// One edition to print.
struct PrintJob {
    /// The built HTML book, holding `print.html`.
    book_dir: PathBuf,
    output: PathBuf,
    title: String,
    subtitle: String,
}

pub fn run(syllabus_file: Option<&Path>, skip_build: bool) -> Result<(), String> {
    let started = Instant::now();
    let root = repository_root();
    check_tools()?;
    let info = BuildInfo::read(&root).map_err(|error| error.to_string())?;
    let (_, repository_name) = info
        .project
        .owner_and_name()
        .map_err(|error| error.to_string())?;
    let book_title = crate::book::book_title(&root)?;
    let job = match syllabus_file {
        None => {
            if !skip_build {
                crate::book::build()?;
            }
            PrintJob {
                book_dir: root.join("book"),
                output: root.join("book").join(format!("{repository_name}.pdf")),
                title: book_title,
                subtitle: "Every chapter written so far, at every level".to_string(),
            }
        }
        Some(file) => {
            let syllabus = Syllabus::read(file).map_err(|error| error.to_string())?;
            if !skip_build {
                crate::syllabus_build::build(file)?;
            }
            let book_dir = root.join("book").join(&syllabus.name);
            PrintJob {
                output: book_dir.join(format!("{}.pdf", syllabus.name)),
                book_dir,
                title: syllabus.title.clone(),
                subtitle: format!(
                    "An edition of {book_title}, up to level {}",
                    syllabus.max_level
                ),
            }
        }
    };
    if !job.book_dir.join("print.html").is_file() {
        return Err(format!(
            "{} has no print.html: build the book first (leave out --skip-build)",
            job.book_dir.display()
        ));
    }
    let site_address = info
        .project
        .site_address()
        .map_err(|error| error.to_string())?;
    let site_address = match syllabus_file {
        Some(_) => format!(
            "{site_address}{}/",
            job.book_dir
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default()
        ),
        None => site_address,
    };
    let commit = info.commit.describe();
    let print_info = json_object(&[
        ("title", &job.title),
        ("subtitle", &job.subtitle),
        ("version", &info.project.version),
        ("commit", &commit),
        ("commitDate", &commit_date(&root).unwrap_or_default()),
        ("siteAddress", &site_address),
    ]);
    print(&root, &job, &print_info)?;

    let expectations = Expectations::from_book(
        &job.book_dir,
        &job.title,
        &info.project.version,
        info.commit.short(),
    )?;
    let report = pdf_check::check_file(&job.output, &expectations)?;
    let size = std::fs::metadata(&job.output)
        .map(|metadata| metadata.len())
        .unwrap_or(0);
    println!(
        "{}: {} pages, {:.1} MiB, in {:.0} s",
        job.output.display(),
        report.pages,
        size as f64 / (1024.0 * 1024.0),
        started.elapsed().as_secs_f64()
    );
    println!("{report}");
    Ok(())
}

fn check_tools() -> Result<(), String> {
    let missing: Vec<&str> = POPPLER_TOOLS
        .into_iter()
        .filter(|tool| Command::new(tool).arg("-v").output().is_err())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "{} not found: install poppler's tools (`sudo apt-get install poppler-utils` on \
             Debian or Ubuntu, `brew install poppler` on macOS); the PDF is checked with them",
            missing.join(", ")
        ));
    }
    let node_major = Command::new("node")
        .arg("--version")
        .output()
        .ok()
        .and_then(|output| {
            let version = String::from_utf8_lossy(&output.stdout).into_owned();
            version
                .trim()
                .trim_start_matches('v')
                .split('.')
                .next()
                .and_then(|major| major.parse::<u32>().ok())
        });
    match node_major {
        Some(major) if major >= 20 => Ok(()),
        found => Err(format!(
            "the PDF is printed by tests-browser/print-pdf.mjs, which needs Node 20 or later \
             (found {}) and Debian's `chromium`",
            found.map_or("no node".to_string(), |major| format!("Node {major}"))
        )),
    }
}

/// Runs the print script, installing its one npm package first if needed.
fn print(root: &Path, job: &PrintJob, print_info: &str) -> Result<(), String> {
    let tests_browser = root.join("tests-browser");
    if !tests_browser
        .join("node_modules")
        .join("playwright-core")
        .is_dir()
    {
        eprintln!("Installing tests-browser's npm package (playwright-core, no browser) …");
        let status = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&tests_browser)
            .status()
            .map_err(|error| format!("cannot run npm: {error}"))?;
        if !status.success() {
            return Err(format!("`npm ci` in {} failed", tests_browser.display()));
        }
    }
    eprintln!(
        "Printing {} to {} …",
        job.book_dir.join("print.html").display(),
        job.output.display()
    );
    let status = Command::new("node")
        .arg("print-pdf.mjs")
        .arg("--book")
        .arg(&job.book_dir)
        .arg("--output")
        .arg(&job.output)
        .arg("--info")
        .arg(print_info)
        .current_dir(&tests_browser)
        .status()
        .map_err(|error| format!("cannot run node: {error}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("tests-browser/print-pdf.mjs failed ({status})"))
    }
}

/// The commit's date, `2026-11-24`.
fn commit_date(root: &Path) -> Option<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["log", "-1", "--format=%cs"])
        .output()
        .ok()?;
    let date = String::from_utf8_lossy(&output.stdout).trim().to_string();
    (output.status.success() && !date.is_empty()).then_some(date)
}

/// A flat JSON object of strings.
fn json_object(fields: &[(&str, &str)]) -> String {
    let members: Vec<String> = fields
        .iter()
        .map(|(name, value)| format!("{}: {}", json_string(name), json_string(value)))
        .collect();
    format!("{{{}}}", members.join(", "))
}

fn json_string(text: &str) -> String {
    let mut quoted = String::from("\"");
    for character in text.chars() {
        match character {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            character if u32::from(character) < 0x20 => {
                quoted.push_str(&format!("\\u{:04x}", u32::from(character)));
            }
            character => quoted.push(character),
        }
    }
    quoted.push('"');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(
            json_object(&[("title", "The \"Real\"-Timer's\\Guide\n\u{1}")]),
            r#"{"title": "The \"Real\"-Timer's\\Guide\n\u0001"}"#
        );
    }
}
