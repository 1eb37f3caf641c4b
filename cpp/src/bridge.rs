//! The bridge between Rust and C++: one declaration of both sides, from which cxx
//! generates the glue code in each language and checks that the two agree.

// ANCHOR: run_standard_workload
use galaxy::graph::random_mlp;
use galaxy::runner::ExecutionMode;

/// Runs the standard workload on the CPU graph runner and returns its output, row-major.
/// An error becomes a C++ exception (`rust::Error`) whose message is this error's.
fn run_standard_workload(size: usize, depth: usize, seed: u64) -> Result<Vec<f32>, String> {
    let workload = random_mlp(size, depth, seed).map_err(|error| error.to_string())?;
    let mut execution = ExecutionMode::CpuGraph
        .prepare(&workload.graph, None)
        .map_err(|error| error.to_string())?;
    let mut outputs = execution
        .run(&workload.input, 1)
        .map_err(|error| error.to_string())?;
    let output = outputs.pop().ok_or("the run returned no output")?;
    Ok(output.into_vec())
}
// ANCHOR_END: run_standard_workload

// ANCHOR: bridge
#[cxx::bridge(namespace = "galaxy")]
pub mod ffi {
    /// A struct both languages see with the same layout.
    #[derive(Debug, Clone, PartialEq)]
    pub struct OutputSummary {
        pub rows: usize,
        pub columns: usize,
        /// The sum of every output value, added front to back in double precision.
        pub sum: f64,
        pub largest: f32,
        /// The first (up to) four values of the output, row-major.
        pub first_values: Vec<f32>,
    }

    // Rust functions that C++ may call.
    extern "Rust" {
        fn run_standard_workload(size: usize, depth: usize, seed: u64) -> Result<Vec<f32>>;
    }

    // C++ functions that Rust may call. `unsafe` because cxx cannot see into C++ and
    // trusts the header's declaration.
    unsafe extern "C++" {
        include!("galaxy-cpp/include/summary.h");

        fn summarize_standard_workload(
            size: usize,
            depth: usize,
            seed: u64,
        ) -> Result<OutputSummary>;
    }
}
// ANCHOR_END: bridge
