//! The C++ summary of the standard workload agrees with the same summary computed in Rust.

use galaxy::graph::random_mlp;
use galaxy::runner::ExecutionMode;
use galaxy_cpp::summarize_standard_workload;

/// The output of the standard workload, computed in Rust alone.
fn rust_output(size: usize, depth: usize, seed: u64) -> Vec<f32> {
    let workload = random_mlp(size, depth, seed).unwrap();
    let mut execution = ExecutionMode::CpuGraph
        .prepare(&workload.graph, None)
        .unwrap();
    execution
        .run(&workload.input, 1)
        .unwrap()
        .remove(0)
        .into_vec()
}

#[test]
fn the_cpp_summary_matches_the_rust_output() {
    for (size, depth, seed) in [(1, 1, 3), (4, 2, 1), (17, 5, 9), (64, 8, 2)] {
        let summary = summarize_standard_workload(size, depth, seed).unwrap();
        let output = rust_output(size, depth, seed);
        assert_eq!((summary.rows, summary.columns), (size, size));
        // The same additions in the same order in both languages: equal, not just close.
        let sum: f64 = output.iter().map(|&value| f64::from(value)).sum();
        assert_eq!(summary.sum, sum, "size {size}, depth {depth}");
        // Every row of a softmax sums to 1.
        assert!((summary.sum - size as f64).abs() < 1e-3 * size as f64);
        let largest = output.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        assert_eq!(summary.largest, largest);
        let shown = output.len().min(4);
        assert_eq!(summary.first_values, output[..shown]);
    }
}

#[test]
fn different_seeds_give_different_summaries() {
    let first = summarize_standard_workload(16, 4, 1).unwrap();
    let second = summarize_standard_workload(16, 4, 2).unwrap();
    assert_ne!(first.first_values, second.first_values);
}

#[test]
fn a_rust_error_crosses_cpp_and_comes_back_with_its_message() {
    let error = summarize_standard_workload(0, 4, 1).unwrap_err();
    let message = error.to_string();
    assert!(message.contains("empty"), "{message}");
}
