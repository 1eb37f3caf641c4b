//! Project tasks, run as `cargo xtask <task>` (an alias in `.cargo/config.toml`).
//!
//! - `cargo xtask build`: build the book into `book/`.
//! - `cargo xtask serve`: build the book and serve it on http://localhost:3000 with live
//!   reload.
//!
//! - `cargo xtask syllabus <file.toml>`: build a course's own book, with chosen chapters
//!   up to a maximum level, into `book/<name>/` (see `syllabus.rs`).
//! - `cargo xtask check [--book-dir book]`: check a built book's links, images and code
//!   blocks (see `link_check.rs`).
//!
//! The builds install the pinned mdBook tools on first use (see `tools.rs`).

mod book;
mod level_cut;
mod link_check;
mod selection;
mod summary;
mod syllabus;
mod syllabus_build;
mod tools;

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
    /// Check a built book: links, images, fragments, leftover directives, empty code.
    Check {
        /// The directory of the built book.
        #[arg(long, default_value = "book")]
        book_dir: PathBuf,
    },
}

fn main() -> ExitCode {
    let arguments = Arguments::parse();
    let result = match arguments.task {
        Task::Build => book::build(),
        Task::Serve { port, hostname } => book::serve(&hostname, port),
        Task::InstallTools => tools::BookTools::ensure_installed().map(|_| ()),
        Task::Syllabus { file } => syllabus_build::build(&file),
        Task::Check { book_dir } => link_check::run(&book_dir),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
