//! The CPU's memory hierarchy, measured: the functions behind the examples, benchmarks and
//! figures of the chapter "The CPU and its memory hierarchy".
//!
//! Each file holds one idea, and every function in it comes with a sibling that computes
//! exactly the same result in a different way, so that any difference in speed comes
//! from memory, the pipeline or the compiler, never from different work:
//!
//! - [`access_patterns`]: one array read sequentially, with a stride, in a random order,
//!   and as a chain of dependent loads.
//! - [`nested_vectors`]: a matrix as one flat `Vec<f32>` or as a `Vec<Vec<f32>>`.
//! - [`transpose`]: strided access in its most common form, and how blocking tames it.
//! - [`growable_arrays`]: how `Vec::push` stays cheap, and what `with_capacity` saves.
//! - [`allocation`]: a scratch buffer allocated in the hot loop, reused, or on the stack.
//! - [`linked_list`]: a list of `Box`ed nodes, and what scattering them does to a traversal.
//! - [`shared_ownership`]: `Rc`, `Weak` and the reference cycles a garbage collector
//!   would catch.
//! - [`pages`]: the price of touching a page of virtual memory for the first time.
//! - [`branch_prediction`]: a data-dependent branch on sorted and shuffled data, and a
//!   branchless version.
//! - [`inlining`]: one small function, inlined, called, or called through a pointer.
//! - [`timing`]: the median-of-samples timer the examples and the figure sweeps use.
//! - [`sweeps`]: the measurements behind the chapter's figures.

pub mod access_patterns;
pub mod allocation;
pub mod branch_prediction;
pub mod growable_arrays;
pub mod inlining;
pub mod linked_list;
pub mod nested_vectors;
pub mod pages;
pub mod shared_ownership;
pub mod sweeps;
pub mod timing;
pub mod transpose;

use thiserror::Error;

use crate::tensor::ShapeError;

/// What the functions of this module report instead of panicking on input they cannot use.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MemoryError {
    /// A stride of zero would never move past the first element.
    #[error("the stride must be at least 1")]
    ZeroStride,
    /// A block of zero rows would never cover the matrix.
    #[error("the block size must be at least 1")]
    ZeroBlock,
    /// Indices are stored as `u32` to halve their memory traffic, so lengths are limited.
    #[error("{length} elements cannot be indexed with u32 (at most {max})", max = u32::MAX)]
    TooLong { length: usize },
    /// A cycle through no elements has nowhere to start.
    #[error("a cycle needs at least one element")]
    EmptyCycle,
    /// Two slices whose lengths must agree.
    #[error("{operation}: {expected_name} has {expected} elements, but {found_name} has {found}")]
    LengthMismatch {
        operation: &'static str,
        expected_name: &'static str,
        expected: usize,
        found_name: &'static str,
        found: usize,
    },
    /// A function working on a compile-time row length was given rows of another length.
    #[error("{operation}: compiled for rows of {compiled} values, but the rows have {found}")]
    RowLength {
        operation: &'static str,
        compiled: usize,
        found: usize,
    },
    /// Tensors whose shapes do not fit the operation.
    #[error(transparent)]
    Shape(#[from] ShapeError),
}
