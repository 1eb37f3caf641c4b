//! `cargo xtask figures`: runs the sweeps, then draws every figure of the book.
//!
//! 1. Unless `--draw-only`, runs the crate's `sweep` binary in release mode, which
//!    measures and writes `figures/data/<id>.csv` (see `galaxy::bench::sweeps`).
//! 2. Draws every `figures/data/*.csv` (or those `--only` selects) into
//!    `figures/<id>.svg` (see `figure_drawing.rs`).
//!
//! Drawing reads nothing but the CSV files, so data brought back from another machine
//! (the book's GPU figures come from an H100) is drawn exactly like local data.

use std::path::Path;
use std::process::Command;

use crate::figure_drawing::draw_csv;
use crate::glob::glob_matches;
use crate::tools::repository_root;

/// The options of `cargo xtask figures`.
#[derive(Debug, Clone, Default)]
pub struct FigureOptions {
    pub full: bool,
    pub draw_only: bool,
    pub only: Vec<String>,
    pub skip_cpu: bool,
    pub skip_gpu: bool,
}

pub fn run(options: &FigureOptions) -> Result<(), String> {
    let root = repository_root();
    let data = root.join("figures").join("data");
    if !options.draw_only {
        run_sweeps(&root, &data, options)?;
    }
    draw_all(&data, &root.join("figures"), &options.only)
}

/// `cargo run --release -p galaxy --bin sweep -- …`, recording in each CSV the
/// `cargo xtask figures …` command a reader would type to redo it.
fn run_sweeps(root: &Path, data: &Path, options: &FigureOptions) -> Result<(), String> {
    let mut flags = Vec::new();
    if options.full {
        flags.push("--full".to_string());
    }
    if options.skip_cpu {
        flags.push("--skip-cpu".to_string());
    }
    if options.skip_gpu {
        flags.push("--skip-gpu".to_string());
    }
    if !options.only.is_empty() {
        flags.push("--only".to_string());
        flags.extend(options.only.iter().cloned());
    }
    let recorded = format!("cargo xtask figures {}", flags.join(" "))
        .trim_end()
        .to_string();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut command = Command::new(cargo);
    command
        .current_dir(root)
        .args([
            "run",
            "--release",
            "--package",
            "galaxy",
            "--bin",
            "sweep",
            "--",
        ])
        .arg("--out")
        .arg(data)
        .args(&flags)
        .arg("--command")
        .arg(&recorded);
    eprintln!("Running the sweeps ({recorded}) …");
    let status = command
        .status()
        .map_err(|error| format!("could not start cargo: {error}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the sweeps failed ({status})"))
    }
}

/// Draws every CSV of `data` that `only` selects into `output`. Every file is tried;
/// the errors of all that failed are reported together.
pub fn draw_all(data: &Path, output: &Path, only: &[String]) -> Result<(), String> {
    let entries = std::fs::read_dir(data)
        .map_err(|error| format!("cannot read {}: {error}", data.display()))?;
    let mut csv_files: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "csv"))
        .filter(|path| {
            let id = path
                .file_stem()
                .map(|stem| stem.to_string_lossy().into_owned());
            only.is_empty()
                || id.is_some_and(|id| only.iter().any(|pattern| glob_matches(pattern, &id)))
        })
        .collect();
    csv_files.sort();
    if csv_files.is_empty() {
        return Err(format!(
            "no CSV file in {} matches {only:?}: run `cargo xtask figures` without --draw-only",
            data.display()
        ));
    }
    let mut failures = Vec::new();
    for csv in &csv_files {
        match draw_csv(csv, output) {
            Ok(svg) => eprintln!("drew {}", svg.display()),
            Err(error) => failures.push(error.to_string()),
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draw_all_draws_the_selected_files_and_reports_every_failure() {
        let directory =
            std::env::temp_dir().join(format!("galaxy-draw-all-{}", std::process::id()));
        let data = directory.join("data");
        std::fs::create_dir_all(&data).unwrap();
        let good = "# title: Good\n# x: n, log\n# y: ms, log\n# hardware: CPU test\n\
                    # command: test\nseries,x,y\nCpu,1,2\nCpu,2,3\n";
        std::fs::write(data.join("cpu-linear.csv"), good).unwrap();
        std::fs::write(data.join("modes-by-size-gpu.csv"), good).unwrap();
        std::fs::write(data.join("notes.txt"), "not a figure").unwrap();

        draw_all(&data, &directory, &["cpu-*".to_string()]).unwrap();
        assert!(directory.join("cpu-linear.svg").exists());
        assert!(!directory.join("modes-by-size-gpu.svg").exists());

        std::fs::write(data.join("broken.csv"), "series,x,y\nCpu,1,zero\n").unwrap();
        let error = draw_all(&data, &directory, &[]).unwrap_err();
        assert!(error.contains("broken.csv:2"), "{error}");
        // The good files were still drawn.
        assert!(directory.join("modes-by-size-gpu.svg").exists());

        let none = draw_all(&data, &directory, &["nothing".to_string()]).unwrap_err();
        assert!(none.contains("no CSV file"), "{none}");
        std::fs::remove_dir_all(&directory).unwrap();
    }
}
