//! Helpers shared by the integration tests.

#![allow(dead_code)]

use galaxy::gpu::GpuContext;
use galaxy::graph::{ChainBuilder, ValidGraph};
use galaxy::{Comparison, Tensor2d, Tolerance};
use proptest::prelude::*;

/// The process-wide GPU context. Without an adapter the test fails with the message that
/// says what to install: GPU tests never pass by skipping.
pub fn context() -> &'static GpuContext {
    match GpuContext::shared() {
        Ok(context) => context,
        Err(error) => panic!("GPU tests need a GPU adapter: {error}"),
    }
}

/// Whether the adapter is a software rasteriser (`wgpu::DeviceType::Cpu`, lavapipe in CI).
/// Such an adapter runs the shader as CPU code: it rounds division and square root
/// correctly and keeps NaN and infinity as IEEE 754 says, so the tests demand the CPU's
/// results bit for bit there. A hardware GPU need not: Vulkan allows a division 2.5 ulp
/// of error, a compiler may fuse a multiply and an add, and WGSL lets an implementation
/// assume that no NaN, infinity or overflow occurs (the "Finite Math Assumption" under
/// "Floating Point Evaluation" in the WGSL specification), so that an expression meeting
/// one has an indeterminate value. Tests on other adapters assert only what the
/// specifications promise.
pub fn adapter_is_software() -> bool {
    context().adapter_info().device_type == wgpu::DeviceType::Cpu
}

// ANCHOR: assert_close
/// Asserts that `actual` matches `expected` within `tolerance`, naming what was tested.
pub fn assert_close(actual: &Tensor2d, expected: &Tensor2d, tolerance: Tolerance, what: &str) {
    let comparison: Comparison = actual
        .compare(expected, tolerance)
        .unwrap_or_else(|error| panic!("{what}: {error}"));
    assert!(comparison.passed(), "{what}: {comparison}");
}
// ANCHOR_END: assert_close

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

/// One layer of a generated chain: its width and how many ReLUs follow it (0, 1 or 2).
#[derive(Debug, Clone)]
pub struct Layer {
    pub width: usize,
    pub relus: usize,
}

#[derive(Debug, Clone)]
pub struct ChainSpecification {
    pub rows: usize,
    pub input_width: usize,
    pub layers: Vec<Layer>,
    pub relu_first: bool,
    pub softmax: bool,
    pub seed: u64,
}

pub fn chain_specification() -> impl Strategy<Value = ChainSpecification> {
    let layer = (1usize..=40, 0usize..=2).prop_map(|(width, relus)| Layer { width, relus });
    (
        1usize..=24,
        1usize..=40,
        prop::collection::vec(layer, 0..=6),
        any::<bool>(),
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(|(rows, input_width, layers, relu_first, softmax, seed)| {
            ChainSpecification {
                rows,
                input_width,
                layers,
                relu_first,
                softmax,
                seed,
            }
        })
}

pub fn build_chain(specification: &ChainSpecification) -> (ValidGraph, Tensor2d) {
    let mut seed = specification.seed;
    let mut next_seed = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        seed
    };
    let mut chain = ChainBuilder::input(specification.rows, specification.input_width);
    if specification.relu_first {
        chain = chain.relu();
    }
    let mut width = specification.input_width;
    for layer in &specification.layers {
        let limit = (3.0 / width as f32).sqrt();
        let weights = Tensor2d::random(width, layer.width, -limit..=limit, next_seed());
        let bias = Tensor2d::random(1, layer.width, -0.5..=0.5, next_seed());
        chain = chain.linear(weights, bias);
        for _ in 0..layer.relus {
            chain = chain.relu();
        }
        width = layer.width;
    }
    if specification.softmax {
        chain = chain.softmax();
    }
    let graph = chain.output().expect("generated chains are valid");
    let input = Tensor2d::random(
        specification.rows,
        specification.input_width,
        -1.0..=1.0,
        next_seed(),
    );
    (graph, input)
}
