//! Project tasks, run as `cargo xtask <task>` (an alias in `.cargo/config.toml`).
//!
//! - `cargo xtask build`: build the book into `book/`.
//! - `cargo xtask serve`: build the book and serve it on http://localhost:3000 with live
//!   reload.
//!
//! - `cargo xtask pdf [--syllabus FILE] [--skip-build]`: print the book, or a course's
//!   edition, to PDF with headless Chromium and check it (see `pdf.rs`).
//! - `cargo xtask version`: print the book's version (for the release workflow).
//!
//! - `cargo xtask syllabus <file.toml>`: build a course's own book, with chosen chapters
//!   up to a maximum level, into `book/<name>/` (see `syllabus.rs`).
//! - `cargo xtask check [--book-dir book]`: check a built book's links, images and code
//!   blocks (see `link_check.rs`).
//! - `cargo xtask figures [--full] [--draw-only] [--only GLOB…]`: run the figure sweeps
//!   and draw every `figures/data/*.csv` into `figures/<id>.svg` (see `figures.rs`).
//! - `cargo xtask bench-report [-- options]`: the one-run benchmark report (see
//!   `bench_report.rs`).
//! - `cargo xtask exercise NAME [--start | --file PATH]`, `cargo xtask exercise --list`:
//!   start, check and list the exercises (see `exercise.rs`).
//! - `cargo xtask profile WORKLOAD [--tool perf-record|perf-stat|callgrind|timestamps]
//!   [--out DIR]`: run a workload under a profiler and write its report (see `profile/`).
//!
//! The builds install the pinned mdBook tools on first use (see `tools.rs`).

mod bench_report;
mod book;
mod build_info;
mod edition_links;
mod exercise;
// The figure CSV format and the `--only` patterns are defined once, in the crate; xtask
// compiles those two std-only files rather than depending on `galaxy`, which would build
// wgpu just to read a CSV file.
#[path = "../../code/src/figure.rs"]
#[allow(dead_code)]
mod figure;
mod figure_axes;
mod figure_colours;
mod figure_drawing;
mod figure_labels;
mod figure_plan;
mod figure_specs;
mod figure_yardstick;
mod figures;
#[path = "../../code/src/bench/glob.rs"]
mod glob;
mod level_cut;
mod link_check;
mod pdf;
mod pdf_check;
mod profile;
mod selection;
mod site_pages;
mod summary;
mod syllabus;
mod syllabus_build;
mod tools;
#[cfg(test)]
mod workflow_tests;

use std::path::PathBuf;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(about = "Tasks for The Real-Timer's Guide to the Computational Galaxy")]
struct Arguments {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Build the book into `book/`.
    Build,
    /// Build the book and serve it with live reload.
    Serve {
        /// The port to serve on.
        #[arg(long, default_value_t = 3000)]
        port: u16,
        /// The address to listen on (0.0.0.0 to reach it from other machines).
        #[arg(long, default_value = "localhost")]
        hostname: String,
    },
    /// Install the pinned book tools (mdbook, mdbook-katex) without building.
    InstallTools,
    /// Build a course's book from a syllabus file into `book/<name>/`.
    Syllabus {
        /// The syllabus, e.g. `syllabi/gpu-six-weeks.toml`.
        file: PathBuf,
    },
    /// Print the book (or a course's edition, at its highest level) to PDF and check it.
    Pdf {
        /// A syllabus file: print that course's edition instead of the whole book.
        #[arg(long)]
        syllabus: Option<PathBuf>,
        /// Print the book already built in `book/` instead of building it first.
        #[arg(long)]
        skip_build: bool,
    },
    /// Print the book's version (`[workspace.metadata.book] version` in Cargo.toml).
    Version,
    /// Check a built book: links, images, fragments, leftover directives, empty code.
    Check {
        /// The directory of the built book.
        #[arg(long, default_value = "book")]
        book_dir: PathBuf,
    },
    /// Run the figure sweeps (CSV into `figures/data/`) and draw every figure as SVG.
    Figures {
        /// The book's figures (about 15 minutes on two cores) instead of a quick look.
        #[arg(long)]
        full: bool,
        /// Only draw the CSV files already in `figures/data/`.
        #[arg(long)]
        draw_only: bool,
        /// Only the figures whose id matches one of these patterns (`*` and `?`).
        #[arg(long, num_args = 1..)]
        only: Vec<String>,
        /// Leave out the figures that measure only the CPU.
        #[arg(long)]
        skip_cpu: bool,
        /// Leave out the figures that need a GPU adapter.
        #[arg(long)]
        skip_gpu: bool,
    },
    /// Every execution mode and linear kernel in one run, as one table (options after `--`).
    BenchReport {
        /// Passed to the `bench_report` binary (`cargo xtask bench-report -- --help`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        arguments: Vec<String>,
    },
    /// Start, check or list the exercises: `exercise NAME --start`, `exercise NAME`,
    /// `exercise --list`.
    Exercise {
        /// The exercise, such as `vector-add`.
        name: Option<String>,
        /// List every exercise with its level, title and status.
        #[arg(long)]
        list: bool,
        /// Copy the starter files to your own work files (never overwrites them).
        #[arg(long)]
        start: bool,
        /// Check this WGSL file instead of your work file (grading a hand-in).
        #[arg(long)]
        file: Option<PathBuf>,
        /// Check the reference solution.
        #[arg(long)]
        solution: bool,
        /// Check the untouched starter.
        #[arg(long)]
        starter: bool,
    },
    /// Run a workload under a profiler and write its report (`profile cpu-graph --tool
    /// perf-record`).
    Profile(profile::ProfileArguments),
}

fn main() -> ExitCode {
    let arguments = Arguments::parse();
    let result = match arguments.task {
        Task::Build => book::build(),
        Task::Serve { port, hostname } => book::serve(&hostname, port),
        Task::InstallTools => tools::BookTools::ensure_installed().map(|_| ()),
        Task::Syllabus { file } => syllabus_build::build(&file),
        Task::Check { book_dir } => link_check::run(&book_dir),
        Task::Pdf {
            syllabus,
            skip_build,
        } => pdf::run(syllabus.as_deref(), skip_build),
        Task::Version => build_info::Project::read(&tools::repository_root())
            .map(|project| println!("{}", project.version))
            .map_err(|error| error.to_string()),
        Task::Exercise {
            name,
            list,
            start,
            file,
            solution,
            starter,
        } => exercise::run(&exercise::ExerciseOptions {
            name,
            list,
            start,
            file,
            solution,
            starter,
        }),
        Task::Figures {
            full,
            draw_only,
            only,
            skip_cpu,
            skip_gpu,
        } => figures::run(&figures::FigureOptions {
            full,
            draw_only,
            only,
            skip_cpu,
            skip_gpu,
        }),
        Task::BenchReport { arguments } => bench_report::run(&arguments),
        Task::Profile(arguments) => profile::run(&arguments),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
