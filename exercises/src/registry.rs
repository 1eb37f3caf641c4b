//! Every exercise, with its name, title, level, files and checker.
//!
//! `cargo xtask exercise --list` prints this table; the tests in
//! `exercises/tests/registry.rs` walk it to prove that every reference solution passes
//! its checker and every untouched starter fails it.

use std::path::{Path, PathBuf};

use crate::checkers;
use crate::report::{CheckReport, PartReport, checking_note};
use crate::submission::{Submission, Variant};

/// One exercise.
pub struct Exercise {
    /// The name on the command line and the folder under `exercises/`.
    pub name: &'static str,
    pub title: &'static str,
    /// The book's difficulty level (4: exercises and hand-ins).
    pub level: u8,
    /// Whether the student writes a WGSL kernel (`starter.wgsl`).
    pub has_wgsl: bool,
    /// Whether the student writes Rust (`starter.rs`).
    pub has_rust: bool,
    /// The book page that sets the task, under `src/`.
    pub page: &'static str,
    /// Checks the parts of one submission.
    pub checker: fn(&Submission) -> Vec<PartReport>,
}

/// Where the exercise folders are.
pub fn exercises_directory() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

impl Exercise {
    pub fn folder(&self) -> PathBuf {
        exercises_directory().join(self.name)
    }

    fn extensions(&self) -> Vec<&'static str> {
        let mut extensions = Vec::new();
        if self.has_wgsl {
            extensions.push("wgsl");
        }
        if self.has_rust {
            extensions.push("rs");
        }
        extensions
    }

    /// `work.*` files the student has created.
    pub fn work_files(&self) -> Vec<PathBuf> {
        self.extensions()
            .into_iter()
            .map(|extension| self.folder().join(format!("work.{extension}")))
            .filter(|path| path.is_file())
            .collect()
    }

    pub fn is_started(&self) -> bool {
        !self.work_files().is_empty()
    }

    /// The files a variant checks: `starter.wgsl`, `solution.rs`, the work files with
    /// the starter standing in for a part not started, or a mutant's (an alternative's)
    /// files with the solution standing in for the parts it does not change.
    pub fn files(&self, variant: Variant) -> Vec<(PathBuf, bool)> {
        self.extensions()
            .into_iter()
            .map(|extension| {
                let named = |stem: &str| self.folder().join(format!("{stem}.{extension}"));
                // A mutant or alternative replaces the parts it has a file for.
                let instead_of_solution = |folder: &str, slug: &str| {
                    let own = self
                        .folder()
                        .join(folder)
                        .join(format!("{slug}.{extension}"));
                    if own.is_file() {
                        (own, false)
                    } else {
                        (named("solution"), false)
                    }
                };
                match variant {
                    Variant::Starter => (named("starter"), false),
                    Variant::Solution => (named("solution"), false),
                    Variant::Mutant(slug) => instead_of_solution("mutants", slug),
                    Variant::Alternative(slug) => instead_of_solution("alternatives", slug),
                    Variant::Student => {
                        let work = named("work");
                        if work.is_file() {
                            (work, false)
                        } else {
                            (named("starter"), true)
                        }
                    }
                }
            })
            .collect()
    }

    pub fn submission(&self, variant: Variant) -> Submission {
        let wgsl = self
            .files(variant)
            .into_iter()
            .map(|(path, _)| path)
            .find(|path| {
                path.extension()
                    .is_some_and(|extension| extension == "wgsl")
            });
        Submission {
            wgsl,
            rust: variant,
        }
    }

    /// Checks the student's files, or `wgsl_file` instead of their kernel.
    pub fn check_student(&self, wgsl_file: Option<PathBuf>) -> CheckReport {
        let mut report = CheckReport::new(self.name);
        let files = self.files(Variant::Student);
        let mut submission = self.submission(Variant::Student);
        let mut checked: Vec<PathBuf> = Vec::new();
        let mut starters: Vec<PathBuf> = Vec::new();
        for (path, is_starter_stand_in) in files {
            let is_wgsl = path
                .extension()
                .is_some_and(|extension| extension == "wgsl");
            if is_wgsl && let Some(file) = &wgsl_file {
                checked.push(file.clone());
            } else if is_starter_stand_in {
                starters.push(path);
            } else {
                checked.push(path);
            }
        }
        if let Some(file) = wgsl_file {
            submission.wgsl = Some(file);
        }
        if !checked.is_empty() {
            report.notes.push(checking_note(&checked, false));
        }
        if !starters.is_empty() {
            report.notes.push(checking_note(&starters, true));
        }
        report.parts = (self.checker)(&submission);
        report
    }

    /// Checks the starter or the reference solution.
    pub fn check(&self, variant: Variant) -> CheckReport {
        let mut report = CheckReport::new(self.name);
        let paths: Vec<PathBuf> = self
            .files(variant)
            .into_iter()
            .map(|(path, _)| path)
            .collect();
        report.notes.push(checking_note(&paths, false));
        report.parts = (self.checker)(&self.submission(variant));
        report
    }
}

/// Every exercise, in the order of the book.
pub const EXERCISES: &[Exercise] = &[
    Exercise {
        name: "iterator-chain",
        title: "Warm-up: from an indexed loop to an iterator chain",
        level: 4,
        has_wgsl: false,
        has_rust: true,
        page: "module-0/exercises/iterator-chain.md",
        checker: checkers::iterator_chain::check,
    },
    Exercise {
        name: "clone-free-loop",
        title: "Warm-up: no clones in the hot loop",
        level: 4,
        has_wgsl: false,
        has_rust: true,
        page: "module-0/exercises/clone-free-loop.md",
        checker: checkers::clone_free_loop::check,
    },
    Exercise {
        name: "operator-enum",
        title: "Warm-up: an enum instead of operator names",
        level: 4,
        has_wgsl: false,
        has_rust: true,
        page: "module-0/exercises/operator-enum.md",
        checker: checkers::operator_enum::check,
    },
    Exercise {
        name: "vector-add",
        title: "Warm-up: adding two vectors",
        level: 4,
        has_wgsl: true,
        has_rust: false,
        page: "module-1/exercises/gpu-warm-ups.md",
        checker: checkers::vector_add::check,
    },
    Exercise {
        name: "conv1d-naive",
        title: "Warm-up: 1D convolution, naive",
        level: 4,
        has_wgsl: true,
        has_rust: false,
        page: "module-1/exercises/gpu-warm-ups.md",
        checker: checkers::conv1d::check_naive,
    },
    Exercise {
        name: "conv1d-padded",
        title: "Warm-up: 1D convolution over a zero-padded signal",
        level: 4,
        has_wgsl: true,
        has_rust: false,
        page: "module-1/exercises/gpu-warm-ups.md",
        checker: checkers::conv1d::check_padded,
    },
    Exercise {
        name: "conv1d-workgroup",
        title: "Warm-up: 1D convolution with workgroup memory",
        level: 4,
        has_wgsl: true,
        has_rust: false,
        page: "module-1/exercises/gpu-warm-ups.md",
        checker: checkers::conv1d::check_workgroup,
    },
    Exercise {
        name: "matmul",
        title: "Hand-in: matrix multiplication",
        level: 4,
        has_wgsl: true,
        has_rust: false,
        page: "module-1/exercises/gpu-warm-ups.md",
        checker: checkers::matmul::check,
    },
    Exercise {
        name: "histogram-global",
        title: "Warm-up: a histogram with global atomics",
        level: 4,
        has_wgsl: true,
        has_rust: false,
        page: "module-1/exercises/gpu-warm-ups.md",
        checker: checkers::histogram::check_global,
    },
    Exercise {
        name: "histogram-workgroup",
        title: "Warm-up: a histogram with workgroup sub-histograms",
        level: 4,
        has_wgsl: true,
        has_rust: false,
        page: "module-1/exercises/gpu-warm-ups.md",
        checker: checkers::histogram::check_workgroup,
    },
    Exercise {
        name: "linear-tiled",
        title: "A tiled linear layer with workgroup memory",
        level: 4,
        has_wgsl: true,
        has_rust: false,
        page: "module-1/exercises/tiled-linear.md",
        checker: checkers::linear_tiled::check,
    },
    Exercise {
        name: "softmax-tree-reduction",
        title: "Tree reductions for a row-wise softmax",
        level: 4,
        has_wgsl: true,
        has_rust: false,
        page: "module-1/exercises/tree-reduction-softmax.md",
        checker: checkers::softmax_tree::check,
    },
    Exercise {
        name: "max-pool",
        title: "Max pooling at every level",
        level: 4,
        has_wgsl: true,
        has_rust: true,
        page: "module-1/exercises/max-pooling.md",
        checker: checkers::max_pool::check,
    },
    Exercise {
        name: "convolution",
        title: "Convolution at every level",
        level: 4,
        has_wgsl: true,
        has_rust: true,
        page: "module-1/exercises/convolution.md",
        checker: checkers::convolution::check,
    },
    Exercise {
        name: "reusable-buffers",
        title: "Reusable buffers in the graph",
        level: 4,
        has_wgsl: false,
        has_rust: true,
        page: "module-1/exercises/reusable-buffers.md",
        checker: checkers::reusable_buffers::check,
    },
    Exercise {
        name: "relu-in-place",
        title: "An in-place ReLU in the graph",
        level: 4,
        has_wgsl: false,
        has_rust: true,
        page: "module-1/exercises/in-place-relu.md",
        checker: checkers::relu_in_place::check,
    },
    Exercise {
        name: "parallel-histogram",
        title: "A parallel histogram without a lock",
        level: 4,
        has_wgsl: false,
        has_rust: true,
        page: "module-2/exercises/parallel-histogram.md",
        checker: checkers::parallel_histogram::check,
    },
    Exercise {
        name: "gpu-sort-step",
        title: "A step of a GPU sort",
        level: 4,
        has_wgsl: true,
        has_rust: false,
        page: "module-2/exercises/gpu-sort-step.md",
        checker: checkers::sort_step::check,
    },
    Exercise {
        name: "parallel-graph-schedule",
        title: "A parallel schedule for a graph's branches",
        level: 4,
        has_wgsl: false,
        has_rust: true,
        page: "module-2/exercises/parallel-graph-schedule.md",
        checker: checkers::parallel_schedule::check,
    },
    Exercise {
        name: "inference-model-swap",
        title: "Training on one thread, serving on another",
        level: 4,
        has_wgsl: false,
        has_rust: true,
        page: "module-3/exercise-inference-pipeline/training-on-one-thread-inferring-on-another.md",
        checker: checkers::model_swap::check,
    },
    Exercise {
        name: "profile-hot-spot",
        title: "Profile, find the hot spots, keep the results",
        level: 4,
        has_wgsl: false,
        has_rust: true,
        page: "module-4/exercise-profile-your-own-system/profiling-the-sample-programs.md",
        checker: checkers::profile_hot_spot::check,
    },
];

/// The exercise called `name`.
pub fn find(name: &str) -> Option<&'static Exercise> {
    EXERCISES.iter().find(|exercise| exercise.name == name)
}
