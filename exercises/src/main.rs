//! The checker's command line; `cargo xtask exercise` calls it.
//!
//! ```text
//! galaxy-exercises list                       every exercise, its level, title and status
//! galaxy-exercises check NAME                 check your work files (or the starter)
//! galaxy-exercises check NAME --file PATH     check another WGSL file (a hand-in)
//! galaxy-exercises check NAME --solution      check the reference solution
//! galaxy-exercises check NAME --starter       check the untouched starter
//! galaxy-exercises check NAME --mutant SLUG   check one of the exercise's wrong hand-ins
//! galaxy-exercises check NAME --alternative SLUG   … or one of its correct alternatives
//! galaxy-exercises figures [--quick] [--output DIRECTORY]
//! ```
//!
//! The exit status is 0 when the check passes, 1 when it fails, 2 for a usage error.

use std::path::PathBuf;
use std::process::ExitCode;

use galaxy_exercises::{EXERCISES, Variant, find};

const USAGE: &str = "usage:
  galaxy-exercises list
  galaxy-exercises check NAME [--file PATH | --starter | --solution | --mutant SLUG | --alternative SLUG]
  galaxy-exercises figures [--quick] [--output DIRECTORY]";

fn main() -> ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let arguments: Vec<&str> = arguments.iter().map(String::as_str).collect();
    // A `todo!()` in a starter is reported with its case; the default hook would print
    // it a second time, out of place.
    galaxy_exercises::report::install_quiet_panic_hook();
    match arguments.as_slice() {
        ["list"] => list(),
        ["check", name, options @ ..] => check(name, options),
        ["figures", options @ ..] => figures(options),
        _ => usage_error("expected a command"),
    }
}

fn usage_error(problem: &str) -> ExitCode {
    eprintln!("error: {problem}\n{USAGE}");
    ExitCode::from(2)
}

/// Prints every exercise. An exercise with work files is checked to tell `failing` from
/// `passing`; that takes a moment for each one started.
fn list() -> ExitCode {
    println!("{:<26} {:<6} {:<12} title", "exercise", "level", "status");
    for exercise in EXERCISES {
        let status = if !exercise.is_started() {
            "not started"
        } else if exercise.check_student(None).passed() {
            "passing"
        } else {
            "failing"
        };
        println!(
            "{:<26} {:<6} {:<12} {}",
            exercise.name, exercise.level, status, exercise.title
        );
    }
    ExitCode::SUCCESS
}

fn check(name: &str, options: &[&str]) -> ExitCode {
    let Some(exercise) = find(name) else {
        eprintln!(
            "error: {}",
            galaxy_exercises::CheckError::UnknownExercise {
                name: name.to_string()
            }
        );
        return ExitCode::from(2);
    };
    let report = match options {
        [] => exercise.check_student(None),
        ["--file", path] => {
            if !exercise.has_wgsl {
                eprintln!(
                    "error: {}",
                    galaxy_exercises::CheckError::NoWgslPart {
                        name: name.to_string()
                    }
                );
                return ExitCode::from(2);
            }
            exercise.check_student(Some(PathBuf::from(path)))
        }
        ["--starter"] => exercise.check(Variant::Starter),
        ["--solution"] => exercise.check(Variant::Solution),
        // A `Variant` holds a `&'static str`; leaking one slug in a short-lived process is fine.
        ["--mutant", slug] => exercise.check(Variant::Mutant(slug.to_string().leak())),
        ["--alternative", slug] => exercise.check(Variant::Alternative(slug.to_string().leak())),
        _ => return usage_error("unknown options for `check`"),
    };
    println!("{report}");
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn figures(options: &[&str]) -> ExitCode {
    let mut quick = false;
    let mut output = galaxy_exercises::registry::exercises_directory()
        .parent()
        .expect("the exercises live inside the repository")
        .join("figures/data");
    let mut remaining = options.iter();
    while let Some(option) = remaining.next() {
        match *option {
            "--quick" => quick = true,
            "--output" => match remaining.next() {
                Some(directory) => output = PathBuf::from(directory),
                None => return usage_error("--output needs a directory"),
            },
            other => return usage_error(&format!("unknown option {other}")),
        }
    }
    match galaxy_exercises::figures::write_figures(quick, &output) {
        Ok(written) => {
            for id in written {
                println!("wrote {}", output.join(format!("{id}.csv")).display());
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
