//! Measurement helpers shared by the criterion benches and the figure sweeps.
//!
//! - [`figure`]: the data behind one figure (named series of points) and its CSV form.
//! - [`linear_throughput`]: GFLOP/s of one GPU linear kernel on one shape, checked first.
//! - [`gpu_peak`]: the device's fp32 rate, measured with `shaders/peak_fma.wgsl`.

pub mod figure;
pub mod gpu_peak;
pub mod linear_throughput;

pub use figure::{Axis, Figure, FigureError, Point, Series};
