//! Helpers shared by the integration tests.

#![allow(dead_code)]

use galaxy::gpu::GpuContext;
use galaxy::{Comparison, Tensor2d, Tolerance};

/// The process-wide GPU context. Without an adapter the test fails with the message that
/// says what to install: GPU tests never pass by skipping.
pub fn context() -> &'static GpuContext {
    match GpuContext::shared() {
        Ok(context) => context,
        Err(error) => panic!("GPU tests need a GPU adapter: {error}"),
    }
}

/// Asserts that `actual` matches `expected` within `tolerance`, naming what was tested.
pub fn assert_close(actual: &Tensor2d, expected: &Tensor2d, tolerance: Tolerance, what: &str) {
    let comparison: Comparison = actual
        .compare(expected, tolerance)
        .unwrap_or_else(|error| panic!("{what}: {error}"));
    assert!(comparison.passed(), "{what}: {comparison}");
}

/// Shapes every element-wise and row-wise GPU test covers: single elements, single rows
/// and columns, odd sizes, and sizes larger than one workgroup in each direction.
pub const SHAPES: [(usize, usize); 10] = [
    (1, 1),
    (1, 7),
    (1, 300),
    (7, 1),
    (300, 1),
    (17, 33),
    (64, 64),
    (33, 257),
    (257, 129),
    (300, 513),
];
