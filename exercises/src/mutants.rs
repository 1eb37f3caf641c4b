//! The mutation suite of an exercise: the proof that its checker can fail.
//!
//! Beside `starter.*` and `solution.*`, every exercise folder holds
//!
//! - `mutants/<slug>.wgsl` or `<slug>.rs`: the reference solution with one realistic
//!   student mistake. The file starts with two comment lines,
//!
//!   ```text
//!   // mutant: <class> — <what the student did>
//!   // expect: <text the checker's report must contain>
//!   ```
//!
//!   where the class is one word such as `race`, `out-of-bounds`, `overflow`,
//!   `non-uniform-barrier`, `missing-atomic`, `wrong-result` or `edge`, and the expected
//!   text is the phrase of the report that names the cause (matched without regard to
//!   case);
//! - `alternatives/<slug>.wgsl` or `<slug>.rs`: a correct solution written differently,
//!   starting with `// alternative: <what differs>`. The checker must accept it.
//!
//! A slug may have both a `.wgsl` and a `.rs` file; each part it has no file for comes
//! from the reference solution (see [`crate::Variant::Mutant`]). Slugs are file stems of
//! `a-z`, `0-9` and `_`, so that a Rust file's stem is also its module name.
//!
//! `exercises/tests/mutants.rs` runs every suite and refuses an exercise with fewer than
//! [`MINIMUM_MUTANTS`] mutants or without an alternative.

use std::path::{Path, PathBuf};

use crate::registry::Exercise;

/// The fewest mutants an exercise may have.
pub const MINIMUM_MUTANTS: usize = 6;

/// One wrong hand-in.
#[derive(Debug, Clone)]
pub struct Mutant {
    pub slug: &'static str,
    /// The kind of mistake: `race`, `out-of-bounds`, …
    pub class: String,
    /// What the student did, in words.
    pub description: String,
    /// What the report must say.
    pub expect: String,
    /// The files of the slug (one or two).
    pub files: Vec<PathBuf>,
}

/// One correct but different solution.
#[derive(Debug, Clone)]
pub struct Alternative {
    pub slug: &'static str,
    pub description: String,
    pub files: Vec<PathBuf>,
}

/// Every mutant and alternative of one exercise, in name order.
#[derive(Debug, Clone, Default)]
pub struct Suite {
    pub mutants: Vec<Mutant>,
    pub alternatives: Vec<Alternative>,
}

/// Reads `mutants/` and `alternatives/` of `exercise`. A file without its header lines,
/// or with a slug that cannot be a module name, is an error that names the file.
pub fn suite(exercise: &Exercise) -> Result<Suite, String> {
    let folder = exercise.folder();
    let mut suite = Suite::default();
    for (slug, files) in slugs(&folder.join("mutants"))? {
        let header = agreed_header(&files, 2)?;
        let (class, description) = field(&header[0], "mutant", &files[0])?
            .split_once('—')
            .map(|(class, what)| (class.trim().to_string(), what.trim().to_string()))
            .ok_or_else(|| {
                format!(
                    "{}: the first line must read `// mutant: <class> — <what the student did>`",
                    files[0].display()
                )
            })?;
        let expect = field(&header[1], "expect", &files[0])?.to_string();
        if class.is_empty() || description.is_empty() || expect.is_empty() {
            return Err(format!(
                "{}: the class, the description and the expected text must not be empty",
                files[0].display()
            ));
        }
        suite.mutants.push(Mutant {
            slug,
            class,
            description,
            expect,
            files,
        });
    }
    for (slug, files) in slugs(&folder.join("alternatives"))? {
        let header = agreed_header(&files, 1)?;
        let description = field(&header[0], "alternative", &files[0])?.to_string();
        suite.alternatives.push(Alternative {
            slug,
            description,
            files,
        });
    }
    Ok(suite)
}

/// The slugs in `folder` (none if it does not exist), each with its files.
fn slugs(folder: &Path) -> Result<Vec<(&'static str, Vec<PathBuf>)>, String> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Ok(Vec::new());
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "wgsl" || extension == "rs")
        })
        .collect();
    files.sort();
    let mut grouped: Vec<(&'static str, Vec<PathBuf>)> = Vec::new();
    for path in files {
        let stem = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        let valid = !stem.is_empty()
            && stem
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && !stem.starts_with(|c: char| c.is_ascii_digit());
        if !valid {
            return Err(format!(
                "{}: a slug is made of a-z, 0-9 and _ and starts with a letter",
                path.display()
            ));
        }
        match grouped.iter_mut().find(|(slug, _)| *slug == stem) {
            Some((_, paths)) => paths.push(path),
            // Leaked once per slug: a `Variant` holds a `&'static str` so that it stays `Copy`.
            None => grouped.push((Box::leak(stem.into_boxed_str()), vec![path])),
        }
    }
    Ok(grouped)
}

/// The first `lines` lines of every file of a slug, which must be the same in each.
fn agreed_header(files: &[PathBuf], lines: usize) -> Result<Vec<String>, String> {
    let mut agreed: Option<Vec<String>> = None;
    for path in files {
        let text = std::fs::read_to_string(path)
            .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
        let header: Vec<String> = text.lines().take(lines).map(str::to_string).collect();
        if header.len() < lines {
            return Err(format!("{}: the header is missing", path.display()));
        }
        match &agreed {
            Some(first) if *first != header => {
                return Err(format!(
                    "{}: the header differs from that of {}",
                    path.display(),
                    files[0].display()
                ));
            }
            Some(_) => {}
            None => agreed = Some(header),
        }
    }
    agreed.ok_or_else(|| "a slug without files".to_string())
}

/// The text after `// <name>:` on a header line.
fn field<'a>(line: &'a str, name: &str, path: &Path) -> Result<&'a str, String> {
    line.trim()
        .strip_prefix("//")
        .map(str::trim_start)
        .and_then(|rest| rest.strip_prefix(name))
        .and_then(|rest| rest.strip_prefix(':'))
        .map(str::trim)
        .ok_or_else(|| {
            format!(
                "{}: expected a line `// {name}: …`, found `{line}`",
                path.display()
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_field_is_read_and_a_wrong_one_named() {
        let path = Path::new("m.wgsl");
        assert_eq!(
            field("// expect: not atomic", "expect", path).unwrap(),
            "not atomic"
        );
        let error = field("// expected: x", "expect", path).unwrap_err();
        assert!(error.contains("m.wgsl"), "{error}");
        assert!(error.contains("`// expect: …`"), "{error}");
    }
}
