//! `cargo xtask figures`: runs the sweeps, then draws every figure of the book.
//!
//! 1. Unless `--draw-only`, runs the crate's `sweep` binary in release mode, which
//!    measures and writes `figures/data/<id>.csv` (see `galaxy::bench::sweeps`).
//! 2. Draws every figure (or those `--only` selects) into `figures/<id>.svg`: the figures
//!    of `figure_specs.rs`, each from the CSV file it names, and every other
//!    `figures/data/*.csv` as a figure of all its series.
//!
//! Drawing reads nothing but the files in `figures/data/`, so data brought back from
//! another machine (the book's GPU figures come from an H100) is drawn exactly like local
//! data. The steps: `figure_specs` (what each figure shows) → `figure_plan` (the lines,
//! roles, colours and units, with every data error found) → `figure_drawing` (the SVG).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::figure::Figure;
use crate::figure_drawing::render;
use crate::figure_plan::plan;
use crate::figure_specs::{FigureSpec, figure_specs};
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
    draw_all(&data, &root.join("figures"), &options.only, &figure_specs())
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
        flags.extend(sweep_patterns(&options.only, &figure_specs()));
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

/// The `--only` patterns for the sweep: the patterns themselves, and the source file of
/// every figure they select (`--only modes-steps-gpu` measures `modes-by-size-gpu`).
fn sweep_patterns(only: &[String], specs: &[FigureSpec]) -> Vec<String> {
    let mut patterns = only.to_vec();
    for spec in specs {
        let selected = only.iter().any(|pattern| glob_matches(pattern, &spec.id));
        if selected && !patterns.contains(&spec.source) {
            patterns.push(spec.source.clone());
        }
    }
    patterns
}

/// The figures to draw from the CSV files `data_ids`: every spec, and a figure of all
/// its series for each file that no spec draws from.
pub fn figures_to_draw(data_ids: &[String], specs: &[FigureSpec]) -> Vec<FigureSpec> {
    let mut figures = specs.to_vec();
    for id in data_ids {
        if !specs.iter().any(|spec| &spec.source == id) {
            figures.push(FigureSpec::every_series(id));
        }
    }
    figures
}

/// The ids of the CSV files in `data`, sorted.
fn data_ids(data: &Path) -> Result<Vec<String>, String> {
    let entries = std::fs::read_dir(data)
        .map_err(|error| format!("cannot read {}: {error}", data.display()))?;
    let mut ids: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "csv"))
        .filter_map(|path| {
            path.file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
        })
        .collect();
    ids.sort();
    Ok(ids)
}

/// Draws the figures that `only` selects (by figure id or by CSV id; all when empty)
/// from the CSV files of `data` into `output`. Every figure is tried; the errors of all
/// that failed are reported together. A figure whose file is missing is an error unless
/// its spec says the file may not exist yet.
pub fn draw_all(
    data: &Path,
    output: &Path,
    only: &[String],
    specs: &[FigureSpec],
) -> Result<(), String> {
    let ids = data_ids(data)?;
    let selected: Vec<FigureSpec> = figures_to_draw(&ids, specs)
        .into_iter()
        .filter(|spec| {
            only.is_empty()
                || only.iter().any(|pattern| {
                    glob_matches(pattern, &spec.id) || glob_matches(pattern, &spec.source)
                })
        })
        .collect();
    if selected.is_empty() {
        return Err(format!(
            "no figure and no CSV file in {} matches {only:?}: run `cargo xtask figures` \
             without --draw-only",
            data.display()
        ));
    }
    let mut failures = Vec::new();
    let mut drawn = 0;
    for spec in &selected {
        let csv = data.join(format!("{}.csv", spec.source));
        if !csv.exists() {
            if spec.optional {
                eprintln!("skipped {} (no {} yet)", spec.id, csv.display());
            } else {
                failures.push(format!(
                    "{}: figure `{}` is drawn from this file, which does not exist",
                    csv.display(),
                    spec.id
                ));
            }
            continue;
        }
        match draw_one(spec, &csv, data, output) {
            Ok(svg) => {
                drawn += 1;
                eprintln!("drew {}", svg.display());
            }
            Err(error) => failures.push(error),
        }
    }
    if failures.is_empty() {
        eprintln!("{drawn} figures drawn");
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

/// Reads, plans and draws one figure; returns the SVG's path.
fn draw_one(spec: &FigureSpec, csv: &Path, data: &Path, output: &Path) -> Result<PathBuf, String> {
    let figure = Figure::read_csv(csv).map_err(|error| error.to_string())?;
    let planned =
        plan(spec, &figure, &csv.display().to_string(), data).map_err(|error| error.to_string())?;
    let svg = render(&planned).map_err(|error| error.to_string())?;
    let path = output.join(format!("{}.svg", spec.id));
    std::fs::write(&path, svg).map_err(|error| format!("{}: {error}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure_drawing::{SMALLEST_TEXT, WIDTH, font_sizes};
    use crate::figure_plan::Plan;
    use crate::figure_specs::MAX_SERIES_PER_PANEL;

    fn temporary(name: &str) -> PathBuf {
        let directory = std::env::temp_dir().join(format!("galaxy-{name}-{}", std::process::id()));
        std::fs::create_dir_all(directory.join("data")).unwrap();
        directory
    }

    #[test]
    fn draw_all_draws_the_selected_figures_and_reports_every_failure() {
        let directory = temporary("draw-all");
        let data = directory.join("data");
        let good = "# title: Good\n# x: n, log\n# y: ms, log\n# hardware: CPU test\n\
                    # command: test\nseries,x,y\nCpu,1,2\nCpu,2,3\nGraph,1,1\nGraph,2,1.5\n";
        std::fs::write(data.join("cpu-linear.csv"), good).unwrap();
        std::fs::write(data.join("modes.csv"), good).unwrap();
        std::fs::write(data.join("notes.txt"), "not a figure").unwrap();
        let mut ladder = FigureSpec::new("ladder", "modes");
        ladder.panels.push(crate::figure_specs::PanelSpec {
            title: None,
            lines: vec![crate::figure_specs::LineSpec {
                source: crate::figure_specs::Source::Series("Graph".to_string()),
                label: None,
                role: crate::figure_specs::Role::Emphasised,
                tint_of: None,
            }],
        });
        let mut later = FigureSpec::new("bandwidth", "bandwidth");
        later.optional = true;
        let specs = vec![ladder, later];

        // A figure is selected by its own id or by its file's.
        draw_all(&data, &directory, &["cpu-*".to_string()], &specs).unwrap();
        assert!(directory.join("cpu-linear.svg").exists());
        assert!(!directory.join("ladder.svg").exists());
        draw_all(&data, &directory, &["modes".to_string()], &specs).unwrap();
        assert!(directory.join("ladder.svg").exists());
        // A file that a spec draws from is not also drawn whole.
        assert!(!directory.join("modes.svg").exists());
        // The optional figure without data is skipped, not an error.
        assert!(!directory.join("bandwidth.svg").exists());

        std::fs::write(data.join("broken.csv"), "series,x,y\nCpu,1,zero\n").unwrap();
        let error = draw_all(&data, &directory, &[], &specs).unwrap_err();
        assert!(error.contains("broken.csv:2"), "{error}");
        // A spec whose file is missing, and not optional, is an error naming both.
        let missing = vec![FigureSpec::new("steps", "absent")];
        let error = draw_all(&data, &directory, &["steps".to_string()], &missing).unwrap_err();
        assert!(
            error.contains("absent.csv") && error.contains("`steps`"),
            "{error}"
        );

        let none = draw_all(&data, &directory, &["nothing".to_string()], &specs).unwrap_err();
        assert!(none.contains("no figure"), "{none}");
        std::fs::remove_dir_all(&directory).unwrap();
    }

    #[test]
    fn sweep_patterns_add_the_files_derived_figures_come_from() {
        let specs = vec![FigureSpec::new("modes-steps-gpu", "modes-by-size-gpu")];
        let patterns = sweep_patterns(&["modes-steps-*".to_string()], &specs);
        assert_eq!(patterns, ["modes-steps-*", "modes-by-size-gpu"]);
        assert_eq!(
            sweep_patterns(&["cpu-linear".to_string()], &specs),
            ["cpu-linear"]
        );
    }

    /// The book's figures as the repository holds them: every figure its CSV files and
    /// the spec table give.
    fn committed_figures() -> (PathBuf, Vec<FigureSpec>) {
        let root = repository_root();
        let data = root.join("figures").join("data");
        let specs = figures_to_draw(&data_ids(&data).unwrap(), &figure_specs());
        (root, specs)
    }

    /// Every committed figure planned from its CSV file, with the file's path. A figure
    /// whose file is missing fails the test, unless its spec says it may be missing.
    fn committed_plans() -> Vec<(FigureSpec, PathBuf, Plan)> {
        let (root, specs) = committed_figures();
        let data = root.join("figures").join("data");
        let mut plans = Vec::new();
        for spec in specs {
            let csv = data.join(format!("{}.csv", spec.source));
            if spec.optional && !csv.exists() {
                continue;
            }
            assert!(
                csv.exists(),
                "{} draws from the missing {}",
                spec.id,
                csv.display()
            );
            let figure = Figure::read_csv(&csv).unwrap();
            let planned = plan(&spec, &figure, &csv.display().to_string(), &data)
                .unwrap_or_else(|error| panic!("{error}"));
            plans.push((spec, csv, planned));
        }
        plans
    }

    #[test]
    fn no_committed_figure_draws_more_than_six_series_in_a_panel() {
        for (spec, _, planned) in committed_plans() {
            for panel in &planned.panels {
                assert!(
                    panel.lines.len() <= MAX_SERIES_PER_PANEL,
                    "{} draws {} series in a panel",
                    spec.id,
                    panel.lines.len()
                );
            }
        }
    }

    #[test]
    fn committed_svgs_are_what_their_csv_draws_now() {
        let root = repository_root();
        for (spec, csv, planned) in committed_plans() {
            let drawn = render(&planned).unwrap();
            let path = root.join("figures").join(format!("{}.svg", spec.id));
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                committed == drawn,
                "{} is not what {} draws now: run `cargo xtask figures --draw-only`",
                path.display(),
                csv.display()
            );
        }
    }

    #[test]
    fn committed_svgs_are_750_pixels_wide_with_text_of_12_pixels_or_more() {
        let (root, specs) = committed_figures();
        for spec in &specs {
            let path = root.join("figures").join(format!("{}.svg", spec.id));
            let Ok(svg) = std::fs::read_to_string(&path) else {
                continue;
            };
            assert!(
                svg.starts_with(&format!("<svg width=\"{WIDTH}\"")),
                "{} is not {WIDTH} pixels wide",
                path.display()
            );
            let sizes = font_sizes(&svg);
            assert!(!sizes.is_empty(), "{} has no text", path.display());
            for size in sizes {
                assert!(
                    size >= SMALLEST_TEXT - 1e-6,
                    "{} has text of {size} px",
                    path.display()
                );
            }
        }
    }

    #[test]
    fn every_committed_svg_is_drawn_by_a_figure_or_a_graph_file() {
        let (root, specs) = committed_figures();
        let figures = root.join("figures");
        for entry in std::fs::read_dir(&figures).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|extension| extension != "svg") {
                continue;
            }
            let id = path.file_stem().unwrap().to_string_lossy().into_owned();
            let from_graph = figures.join("data").join(format!("{id}.dot")).exists();
            // A flame graph is drawn by `cargo xtask profile` from its folded stacks.
            let from_stacks = figures.join("data").join(format!("{id}.folded")).exists();
            assert!(
                from_graph || from_stacks || specs.iter().any(|spec| spec.id == id),
                "{} is drawn by no figure: remove it, or give it a CSV file",
                path.display()
            );
        }
    }
}
