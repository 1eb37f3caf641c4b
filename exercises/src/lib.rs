//! # galaxy-exercises
//!
//! The exercises of *The Real-Timer's Guide to the Computational Galaxy*: for every
//! exercise a starter the student edits, a reference solution, and a checker that runs
//! the student's code on many shapes and random inputs and says which elements differ,
//! for which shape, and by how much.
//!
//! - [`registry`]: the list of exercises, and where their files are.
//! - [`shader`]: reading a student's WGSL with naga (errors with file and line; bindings,
//!   workgroup size, use of workgroup memory).
//! - [`analysis`]: static checks on the kernel's code (barriers in uniform control flow,
//!   a barrier between every write and read of workgroup memory, atomic updates).
//! - [`instrument`]: the rewrites that clamp every index onto the guards and reverse the
//!   order of a workgroup's invocations.
//! - [`kernel_run`]: compiling and dispatching a kernel, with every wgpu failure a typed
//!   error and a time limit on the wait.
//! - [`report`]: the verdicts, and how a mismatch is described.
//! - [`checkers`]: one checker per exercise.
//! - [`mutants`]: every exercise's wrong hand-ins and correct alternatives, which prove
//!   that its checker fails what it must and accepts what it must.
//! - [`step_graph`]: the small open graph the "graph level" exercises plug into.
//! - [`random_graphs`]: random graphs for the graph-compiler exercises.
//! - [`figures`]: timing the solutions against their naive versions.
//! - [`warm_ups`], [`allocations`] and [`rust_form`]: the Rust warm-ups of Module 0: the
//!   types they share with their checkers, counting allocations, and reading a Rust
//!   hand-in for the form of its code.
//!
//! The Rust parts of the exercises are compiled into this crate by `build.rs`, as
//! [`rust_exercises`].

pub mod allocations;
pub mod analysis;
pub mod checkers;
pub mod error;
pub mod figures;
pub mod instrument;
pub mod kernel_run;
pub mod mutants;
pub mod random_graphs;
pub mod registry;
pub mod report;
pub mod rust_form;
pub mod shader;
pub mod step_graph;
pub mod submission;
pub mod warm_ups;

/// The Rust files of the exercises: for each, `student` (the work file, or the starter
/// until there is one), `starter` and `solution`.
pub mod rust_exercises {
    include!(concat!(env!("OUT_DIR"), "/rust_exercises.rs"));
}

/// Every allocation is counted per thread, so that a checker can tell a loop that clones
/// from one that does not (see [`allocations`]).
#[global_allocator]
static ALLOCATOR: allocations::CountingAllocator = allocations::CountingAllocator;

pub use error::CheckError;
pub use registry::{EXERCISES, Exercise, find};
pub use report::{CheckReport, Verdict};
pub use submission::{Submission, Variant};

/// The shared GPU context, for unit tests: fails with the message that says what to
/// install when there is no adapter.
#[cfg(test)]
pub(crate) fn gpu_context_for_tests() -> &'static galaxy::gpu::GpuContext {
    match galaxy::gpu::GpuContext::shared() {
        Ok(context) => context,
        Err(error) => panic!("GPU tests need a GPU adapter: {error}"),
    }
}
