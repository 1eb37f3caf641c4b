//! # galaxy
//!
//! The companion crate of *The Real-Timer's Guide to the Computational Galaxy*.
//!
//! The modules appear in the order the book teaches them:
//!
//! - [`tensor`]: `Tensor2d`, the one data type every operator works on.
//! - [`cpu`]: CPU operators and the teaching variants the memory chapters compare.
//! - [`memory`]: the CPU's memory hierarchy measured: access patterns, layouts, allocation,
//!   branch prediction and inlining.
//! - [`gpu`]: the GPU context, GPU tensors, shader loading and the pipeline cache.
//! - [`immediate`]: one GPU operator at a time: upload, dispatch, read back.
//! - [`graph`]: the computational graph, its builder and validation, the standard workload.
//! - [`runner`]: running a graph, on the CPU or the GPU.
//! - [`compiler`]: passes that rewrite a graph: fusion, in-place rewrites, buffer reuse, op codes.
//! - [`bench`]: workloads and measurement helpers shared by the benches and the figure sweeps.

pub mod bench;
pub mod compiler;
pub mod cpu;
pub mod gpu;
pub mod graph;
pub mod immediate;
pub mod memory;
pub mod runner;
pub mod tensor;

pub use tensor::{Comparison, Mismatch, ShapeError, Tensor2d, Tolerance};
