//! Which files a check looks at.
//!
//! A student's check looks at their `work.*` files and falls back to the starter for a
//! part they have not copied yet. The tests check the starter and the reference solution
//! of every exercise, every mutant (a realistic wrong hand-in that must fail) and every
//! alternative (a correct but different solution that must pass), and an instructor can
//! point `--file` at a hand-in.

use std::path::PathBuf;

/// Whose code to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// `work.*` where it exists, the starter elsewhere.
    Student,
    Starter,
    Solution,
    /// `mutants/<slug>.*` where such a file exists, the reference solution for the other
    /// parts: one realistic mistake that the checker must catch.
    Mutant(&'static str),
    /// `alternatives/<slug>.*` where such a file exists, the reference solution for the
    /// other parts: a correct but different solution that the checker must accept.
    Alternative(&'static str),
}

/// The files of one check: the WGSL file to load, and which compiled Rust module to call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission {
    /// The WGSL kernel, for exercises that have one.
    pub wgsl: Option<PathBuf>,
    /// The Rust code, for exercises that have some. Rust is compiled into the checker,
    /// so this picks one of the modules `build.rs` generated.
    pub rust: Variant,
}
