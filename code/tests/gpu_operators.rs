//! Every GPU operator against its CPU reference, element by element.
//!
//! Outputs are filled with NaN before each kernel runs, so an element the kernel never
//! writes fails the comparison instead of passing as a lucky zero.

mod common;

use common::{SHAPES, assert_close, context};
use galaxy::cpu;
use galaxy::gpu::{Reduction, ReductionStrategy, ShaderCompilation};
use galaxy::immediate::ImmediateGpu;
use galaxy::{Tensor2d, Tolerance};

fn immediate() -> ImmediateGpu<'static> {
    ImmediateGpu::new(context(), ShaderCompilation::Cached).with_output_fill(f32::NAN)
}

/// The GPU and the CPU add the `inner` products in the same order, but the GPU may fuse
/// a multiply and an add into one rounding (FMA) where the CPU rounds twice. The
/// difference grows with the number of terms: a relative 1e-4, plus an absolute part
/// for outputs that cancel to almost zero, proportional to the inner dimension.
fn linear_tolerance(inner: usize) -> Tolerance {
    Tolerance::new(1e-4, 1e-6 * inner as f32)
}

/// (rows, inner, columns): 1×1, single rows and columns, odd sizes, several workgroups.
const LINEAR_SHAPES: [(usize, usize, usize); 9] = [
    (1, 1, 1),
    (1, 5, 300),
    (300, 5, 1),
    (1, 300, 1),
    (17, 33, 9),
    (16, 16, 16),
    (33, 65, 17),
    (129, 257, 130),
    (200, 64, 300),
];

#[test]
fn linear_matches_the_cpu() {
    let gpu = immediate();
    for (seed, &(rows, inner, columns)) in LINEAR_SHAPES.iter().enumerate() {
        let seed = seed as u64;
        let input = Tensor2d::random(rows, inner, -1.0..=1.0, seed);
        let weights = Tensor2d::random(inner, columns, -1.0..=1.0, seed + 100);
        let bias = Tensor2d::random(1, columns, -1.0..=1.0, seed + 200);
        let expected = cpu::linear_naive(&input, &weights, &bias).unwrap();
        let actual = gpu.linear(&input, &weights, &bias).unwrap();
        assert_close(
            &actual,
            &expected,
            linear_tolerance(inner),
            &format!("linear {rows}×{inner}·{inner}×{columns}"),
        );
    }
}

#[test]
fn linear_relu_matches_the_cpu() {
    let gpu = immediate();
    for (seed, &(rows, inner, columns)) in LINEAR_SHAPES.iter().enumerate() {
        let seed = seed as u64 + 1000;
        let input = Tensor2d::random(rows, inner, -1.0..=1.0, seed);
        let weights = Tensor2d::random(inner, columns, -1.0..=1.0, seed + 100);
        let bias = Tensor2d::random(1, columns, -1.0..=1.0, seed + 200);
        let expected = cpu::linear_relu_fused(&input, &weights, &bias).unwrap();
        let actual = gpu.linear_relu(&input, &weights, &bias).unwrap();
        assert_close(
            &actual,
            &expected,
            linear_tolerance(inner),
            &format!("linear+relu {rows}×{inner}·{inner}×{columns}"),
        );
    }
}

#[test]
fn relu_matches_the_cpu_exactly() {
    let gpu = immediate();
    for (seed, &(rows, columns)) in SHAPES.iter().enumerate() {
        let input = Tensor2d::random(rows, columns, -1.0..=1.0, seed as u64);
        let expected = cpu::relu(&input);
        let actual = gpu.relu(&input).unwrap();
        assert_close(
            &actual,
            &expected,
            Tolerance::EXACT,
            &format!("relu {rows}×{columns}"),
        );
    }
}

#[test]
fn relu_in_place_matches_the_cpu_exactly() {
    let gpu = immediate();
    for (seed, &(rows, columns)) in SHAPES.iter().enumerate() {
        let mut tensor = Tensor2d::random(rows, columns, -1.0..=1.0, seed as u64 + 50);
        let mut expected = tensor.clone();
        cpu::relu_in_place(&mut expected);
        gpu.relu_in_place(&mut tensor).unwrap();
        assert_close(
            &tensor,
            &expected,
            Tolerance::EXACT,
            &format!("relu in place {rows}×{columns}"),
        );
    }
}

/// GPU `exp` is accurate to a few units in the last place, growing with the argument:
/// with inputs in ±10, a relative 2e-5 covers it.
const SOFTMAX_TOLERANCE: Tolerance = Tolerance::new(2e-5, 1e-7);

#[test]
fn softmax_matches_the_cpu() {
    let gpu = immediate();
    for (seed, &(rows, columns)) in SHAPES.iter().enumerate() {
        let input = Tensor2d::random(rows, columns, -10.0..=10.0, seed as u64 + 70);
        let expected = cpu::softmax(&input).unwrap();
        let actual = gpu.softmax(&input).unwrap();
        assert_close(
            &actual,
            &expected,
            SOFTMAX_TOLERANCE,
            &format!("softmax {rows}×{columns}"),
        );
    }
}

#[test]
fn every_softmax_strategy_matches_the_cpu() {
    let gpu = immediate();
    for strategy in strategies() {
        for (seed, &(rows, columns)) in SHAPES.iter().enumerate() {
            let input = Tensor2d::random(rows, columns, -10.0..=10.0, seed as u64 + 80);
            let expected = cpu::softmax(&input).unwrap();
            let actual = gpu.softmax_with(strategy, &input).unwrap();
            assert_close(
                &actual,
                &expected,
                SOFTMAX_TOLERANCE,
                &format!("softmax {strategy:?} {rows}×{columns}"),
            );
        }
        // Rows far from zero: the maximum must be subtracted before exp().
        let large =
            Tensor2d::from_vec(2, 3, vec![1000.0, 1001.0, 1002.0, -1000.0, 0.0, 1000.0]).unwrap();
        assert_close(
            &gpu.softmax_with(strategy, &large).unwrap(),
            &cpu::softmax(&large).unwrap(),
            SOFTMAX_TOLERANCE,
            &format!("softmax {strategy:?} of large inputs"),
        );
    }
}

#[test]
fn softmax_is_stable_for_large_inputs() {
    let input =
        Tensor2d::from_vec(2, 3, vec![1000.0, 1001.0, 1002.0, -1000.0, 0.0, 1000.0]).unwrap();
    let actual = immediate().softmax(&input).unwrap();
    let expected = cpu::softmax(&input).unwrap();
    assert!(actual.as_slice().iter().all(|value| value.is_finite()));
    assert_close(
        &actual,
        &expected,
        SOFTMAX_TOLERANCE,
        "softmax of large inputs",
    );
}

/// A tree sum adds in a different order than a loop. Its rounding error is bounded by
/// about log2(n) · ε · Σ|x|; the test allows a little more than that.
fn assert_sum_close(actual: f32, values: &[f32], what: &str) {
    let exact: f64 = values.iter().map(|&value| f64::from(value)).sum();
    let magnitude: f64 = values.iter().map(|&value| f64::from(value).abs()).sum();
    let allowed = ((values.len() as f64).log2() + 4.0) * f64::from(f32::EPSILON) * magnitude;
    let difference = (f64::from(actual) - exact).abs();
    assert!(
        actual.is_finite() && difference <= allowed,
        "{what}: got {actual}, exact {exact}, difference {difference:e} > allowed {allowed:e}"
    );
}

/// The reduction strategies this device can run: workgroup memory always, subgroups
/// where the device has them (lavapipe does, with 8 lanes).
fn strategies() -> Vec<ReductionStrategy> {
    let mut strategies = vec![ReductionStrategy::WorkgroupMemory];
    if context().supports_subgroups() {
        strategies.push(ReductionStrategy::Subgroups);
    }
    strategies
}

const REDUCTION_EXTRA_SHAPES: [(usize, usize); 3] = [(1, 1024), (1, 1025), (1024, 1025)];

#[test]
fn sum_matches_the_exact_sum() {
    let gpu = immediate();
    for strategy in strategies() {
        for (seed, &(rows, columns)) in SHAPES.iter().chain(&REDUCTION_EXTRA_SHAPES).enumerate() {
            let input = Tensor2d::random(rows, columns, -1.0..=1.0, seed as u64 + 90);
            let actual = gpu.reduce(Reduction::Sum, strategy, &input).unwrap();
            assert_sum_close(
                actual,
                input.as_slice(),
                &format!("{strategy:?} sum {rows}×{columns}"),
            );
        }
    }
    let input = Tensor2d::random(33, 65, -1.0..=1.0, 7);
    assert_sum_close(
        gpu.sum(&input).unwrap(),
        input.as_slice(),
        "sum, best strategy",
    );
    let cpu_sum = cpu::sum_single_accumulator(input.as_slice());
    assert_sum_close(cpu_sum, input.as_slice(), "cpu sum");
}

#[test]
fn max_matches_the_cpu_exactly() {
    let gpu = immediate();
    for strategy in strategies() {
        for (seed, &(rows, columns)) in SHAPES.iter().chain(&REDUCTION_EXTRA_SHAPES).enumerate() {
            // All negative, so a kernel that wrongly mixes in a zero gets caught.
            let input = Tensor2d::random(rows, columns, -5.0..=-1.0, seed as u64 + 110);
            let expected = cpu::max_single_accumulator(input.as_slice()).unwrap();
            let actual = gpu.reduce(Reduction::Max, strategy, &input).unwrap();
            assert_eq!(actual, expected, "{strategy:?} max {rows}×{columns}");
        }
    }
    let input = Tensor2d::random(33, 65, -5.0..=-1.0, 8);
    let expected = cpu::max_single_accumulator(input.as_slice()).unwrap();
    assert_eq!(gpu.max(&input).unwrap(), expected, "max, best strategy");
}

#[test]
fn a_cached_pipeline_is_compiled_once_and_an_uncached_one_every_call() {
    let input = Tensor2d::random(4, 4, -1.0..=1.0, 5);
    let uncached = ImmediateGpu::new(context(), ShaderCompilation::EveryCall);
    let cached = ImmediateGpu::new(context(), ShaderCompilation::Cached);
    for _ in 0..3 {
        assert_eq!(uncached.relu(&input).unwrap(), cpu::relu(&input));
        assert_eq!(cached.relu(&input).unwrap(), cpu::relu(&input));
    }
    assert_eq!(uncached.pipelines().compilations(), 3);
    assert_eq!(cached.pipelines().compilations(), 1);
}
