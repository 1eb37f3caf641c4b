//! Measurement helpers shared by the criterion benches and the figure sweeps.
//!
//! - [`figure`]: the data behind one figure (named series of points) and its CSV form; a
//!   module of the crate's root, since the memory sweeps write figures too.
//! - [`glob`]: choosing figures by name with `*` and `?`.
//! - [`hardware`]: the line naming the CPU and GPU that every figure and report carries.
//! - [`sweeps`]: the measurements behind the figures (`sweep` binary, `cargo xtask figures`).
//! - [`report`]: the one-run benchmark report (`bench_report` binary).
//! - [`linear_throughput`]: GFLOP/s of one GPU linear kernel on one shape, checked first.
//! - [`gpu_peak`]: the device's fp32 rate, measured with `shaders/peak_fma.wgsl`.
//! - [`copy_bandwidth`]: device-to-device copy bandwidth, the `B` of a roofline.
//! - [`cpu_peak`]: the CPU's fp32 FMA peak on one core and all, and its read bandwidths.
//! - [`compile_time`]: WGSL to shader module to compute pipeline, each step timed.
//! - [`repeats`]: repeating a measurement, interleaved, for its median and range.
//! - [`time_breakdown`]: where one run's time goes (host phases, GPU timestamps).

pub mod compile_time;
pub mod copy_bandwidth;
pub mod cpu_peak;
pub mod glob;
pub mod gpu_peak;
pub mod hardware;
pub mod linear_throughput;
pub mod repeats;
pub mod report;
pub mod sweeps;
pub mod time_breakdown;

pub use crate::figure;
pub use figure::{Axis, Figure, FigureError, Point, Series, Spread};
pub use hardware::hardware_description;
