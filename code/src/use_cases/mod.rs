//! Module 4: optimisation use cases worked through on the crate's own code. Each one is
//! first made correct against a simple CPU reference, then profiled, then made faster one
//! measured step at a time.

/// A path tracer in WGSL, checked against a CPU reference, then made faster step by step.
pub mod path_tracer;

/// A point-cloud renderer: compute-shader splatting with packed atomic keys, checked against a CPU reference, then optimised.
pub mod point_cloud;
