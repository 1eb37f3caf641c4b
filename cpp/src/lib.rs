//! Calling the galaxy crate from C++ through cxx.
//!
//! The direction is both ways, and honest about which side owns `main`: a Rust program
//! (`src/main.rs`, or a test) calls the C++ function `galaxy::summarize_standard_workload`,
//! which calls back into Rust to run the standard workload and then reads the output in
//! C++. The bridge that declares both sides is `src/bridge.rs`; the C++ half is
//! `include/summary.h` and `src/summary.cc`.

pub mod bridge;

pub use bridge::ffi::{OutputSummary, summarize_standard_workload};
