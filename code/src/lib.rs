//! # galaxy
//!
//! The companion crate of *The Real-Timer's Guide to the Computational Galaxy*.
//!
//! The modules appear in the order the book teaches them, and imports flow one way along
//! that order: a module uses the ones above it in this list, never one below. A student can
//! read the crate from the top and meet nothing the book has not introduced yet, and a type
//! that two modules need (an error, a plan) lives in the earlier of the two.
//! `tests/module_layers.rs` fails on any import against the order.
//!
//! - [`figure`]: the data behind one figure and its CSV file. It uses nothing else in the
//!   crate (`cargo xtask` compiles the file on its own), so every module may use it.
//! - [`rust_basics`]: module 0's measured Rust idioms: type layouts, iterators against indexed
//!   loops, clones in a loop, and the three ways to dispatch a call.
//! - [`tensor`]: `Tensor2d`, the one data type every operator works on.
//! - [`cpu`]: CPU operators and the teaching variants the memory chapters compare.
//! - [`memory`]: the CPU's memory hierarchy measured: access patterns, layouts, allocation,
//!   branch prediction and inlining.
//! - [`gpu`]: the GPU context, GPU tensors, shader loading, the pipeline cache, and the
//!   linear kernels with the chooser among them (immediate mode runs them too).
//! - [`immediate`]: one GPU operator at a time: upload, dispatch, read back.
//! - [`graph`]: the computational graph, its builder and validation, the standard
//!   workload, and the buffer plan the runners follow.
//! - [`compiler`]: passes that rewrite a graph: fusion, in-place rewrites, buffer reuse, op
//!   codes.
//! - [`runner`]: running a graph, on the CPU or the GPU, in every execution mode. It comes
//!   after the compiler because the modes run the compiler's passes (fusion, buffer reuse,
//!   the op-code compiler) before they run the graph.
//! - [`bench`]: workloads and measurement helpers shared by the benches and the figure sweeps.
//! - [`parallel`]: module 2: threads and shared state, channels, data parallelism with and
//!   without work stealing, SIMD, and irregular workloads.
//! - [`numbers`]: module 3: numbers in a machine: float formats and rounding, summation
//!   error, integers and bit tricks, compression, Z-order and packing.
//! - [`inference`]: module 3, part 2: a real dataset (the UCI 8 × 8 digits), a training loop
//!   with backpropagation, and the trained network as a graph every runner executes.
//! - [`use_cases`]: module 4: a path tracer and a point-cloud renderer as compute shaders,
//!   each checked against a CPU reference, profiled and made faster step by step.
//! - [`realtime`]: module 5: a fixed-rate loop that runs a compiled graph within a frame
//!   budget, and the frame-time statistics (percentiles, deadline misses) that judge it.

// Alphabetical, as rustfmt keeps module declarations; the order of the layers is the list above.
pub mod bench;
pub mod compiler;
pub mod cpu;
pub mod figure;
pub mod gpu;
pub mod graph;
pub mod immediate;
pub mod inference;
pub mod memory;
pub mod numbers;
pub mod parallel;
pub mod realtime;
pub mod runner;
pub mod rust_basics;
pub mod tensor;
pub mod use_cases;

pub use tensor::{Comparison, Mismatch, ShapeError, Tensor2d, Tolerance};
