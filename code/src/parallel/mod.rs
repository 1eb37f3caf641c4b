//! Module 2: parallelism on the CPU: threads and shared state, channels, data parallelism,
//! SIMD and irregular workloads.

/// Flat `u32`/`f32` arrays on the GPU: upload, poison, read back (for the irregular kernels).
pub mod gpu_arrays;
/// A Monte Carlo estimate of π that gives the same count on any number of threads and on the GPU.
pub mod monte_carlo;
/// Counter-based random streams: the same numbers whoever draws them, in Rust and in WGSL.
pub mod random_streams;
