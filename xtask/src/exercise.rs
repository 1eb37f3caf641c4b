//! `cargo xtask exercise`: start an exercise, check it, list them all.
//!
//! - `cargo xtask exercise NAME --start` copies the starter files of `exercises/NAME/`
//!   to `work.wgsl` / `work.rs` beside them, the files the student edits (git ignores
//!   them). It never overwrites a work file.
//! - `cargo xtask exercise NAME` checks the work files (the starter where there is none
//!   yet); `--file PATH` checks another WGSL file instead, such as a hand-in;
//!   `--solution` and `--starter` check the reference solution and the untouched starter.
//! - `cargo xtask exercise --list` lists every exercise with its level and status.
//!
//! Checking needs the GPU, and xtask does not depend on wgpu: it runs the checker, the
//! `galaxy-exercises` binary, in release mode and exits with its status (0 passed,
//! 1 failed, 2 a usage error).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::tools::repository_root;

/// What `cargo xtask exercise` was asked to do.
pub struct ExerciseOptions {
    pub name: Option<String>,
    pub list: bool,
    pub start: bool,
    pub file: Option<PathBuf>,
    pub solution: bool,
    pub starter: bool,
}

pub fn run(options: &ExerciseOptions) -> Result<(), String> {
    let checker_arguments: Vec<String> = match (options.list, options.name.as_deref()) {
        (true, None) => vec!["list".to_string()],
        (true, Some(_)) => return Err("--list takes no exercise name".to_string()),
        (false, None) => {
            return Err(
                "name an exercise (`cargo xtask exercise vector-add`), or list them with --list"
                    .to_string(),
            );
        }
        (false, Some(name)) => {
            if options.start {
                let folder = repository_root().join("exercises").join(name);
                for (starter, work) in start(&folder)? {
                    println!("copied {} to {}", shown(&starter), shown(&work));
                }
                println!(
                    "edit the work file(s), then check them with `cargo xtask exercise {name}`"
                );
                return Ok(());
            }
            let mut arguments = vec!["check".to_string(), name.to_string()];
            match (&options.file, options.solution, options.starter) {
                (None, false, false) => {}
                (Some(file), false, false) => {
                    // The checker runs in the repository root; a relative path means one
                    // relative to where the command was typed.
                    let file = std::env::current_dir()
                        .map(|directory| directory.join(file))
                        .unwrap_or_else(|_| file.clone());
                    arguments.push("--file".to_string());
                    arguments.push(file.display().to_string());
                }
                (None, true, false) => arguments.push("--solution".to_string()),
                (None, false, true) => arguments.push("--starter".to_string()),
                _ => return Err("use at most one of --file, --solution and --starter".to_string()),
            }
            arguments
        }
    };
    run_checker(&checker_arguments)
}

/// Copies every `starter.*` of `folder` to `work.*`, refusing if any work file exists.
/// Returns the pairs copied.
pub fn start(folder: &Path) -> Result<Vec<(PathBuf, PathBuf)>, String> {
    if !folder.is_dir() {
        return Err(format!(
            "there is no exercise {}; `cargo xtask exercise --list` lists them",
            shown(folder)
        ));
    }
    let pairs: Vec<(PathBuf, PathBuf)> = ["wgsl", "rs"]
        .iter()
        .map(|extension| {
            (
                folder.join(format!("starter.{extension}")),
                folder.join(format!("work.{extension}")),
            )
        })
        .filter(|(starter, _)| starter.is_file())
        .collect();
    if pairs.is_empty() {
        return Err(format!("{} has no starter files", shown(folder)));
    }
    if let Some((_, work)) = pairs.iter().find(|(_, work)| work.exists()) {
        return Err(format!(
            "{} exists already, and --start never overwrites your work; delete it to start over",
            shown(work)
        ));
    }
    for (starter, work) in &pairs {
        std::fs::copy(starter, work)
            .map_err(|error| format!("copying {} failed: {error}", shown(starter)))?;
    }
    Ok(pairs)
}

/// Runs the checker binary and exits with its status.
fn run_checker(arguments: &[String]) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let status = Command::new(cargo)
        .current_dir(repository_root())
        .args([
            "run",
            "--release",
            "--quiet",
            "-p",
            "galaxy-exercises",
            "--",
        ])
        .args(arguments)
        .status()
        .map_err(|error| format!("could not run the checker: {error}"))?;
    // The checker has printed its report; its status is the answer.
    std::process::exit(status.code().unwrap_or(1));
}

/// A path relative to the repository, for messages.
fn shown(path: &Path) -> String {
    path.strip_prefix(repository_root())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_copies_the_starters_and_never_overwrites_work() {
        let folder = std::env::temp_dir().join(format!("xtask-exercise-{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("starter.wgsl"), "// the starter kernel").unwrap();
        std::fs::write(folder.join("starter.rs"), "// the starter code").unwrap();
        std::fs::write(folder.join("solution.rs"), "// not copied").unwrap();

        let copied = start(&folder).unwrap();
        assert_eq!(copied.len(), 2);
        assert_eq!(
            std::fs::read_to_string(folder.join("work.wgsl")).unwrap(),
            "// the starter kernel"
        );
        std::fs::write(folder.join("work.rs"), "// the student's work").unwrap();

        let error = start(&folder).unwrap_err();
        assert!(error.contains("never overwrites your work"), "{error}");
        assert_eq!(
            std::fs::read_to_string(folder.join("work.rs")).unwrap(),
            "// the student's work"
        );
        std::fs::remove_dir_all(&folder).unwrap();
    }

    #[test]
    fn an_unknown_exercise_is_an_error() {
        let error = start(Path::new("/no/such/exercise")).unwrap_err();
        assert!(error.contains("--list"), "{error}");
    }
}
