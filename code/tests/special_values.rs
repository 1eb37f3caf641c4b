//! NaN, infinity and empty tensors through every immediate-mode GPU operator, compared
//! element by element with the CPU operators.
//!
//! The rules both sides follow (those of NumPy and PyTorch):
//! - a NaN among the values an output depends on makes that output NaN (`max` included);
//! - infinities follow IEEE arithmetic (∞ − ∞ and 0 × ∞ are NaN);
//! - an operator whose output has no elements returns an empty tensor of the right shape;
//!   a linear layer with an inner dimension of 0 returns the bias on every row;
//! - the sum of no values is 0; the maximum of no values is an error.
//!
//! Only a software adapter (lavapipe in CI) must follow these rules on the GPU: WGSL lets an
//! implementation assume that no NaN or infinity occurs, and then an output that depends on
//! one has an indeterminate value (an NVIDIA H100 returned 0 after a ReLU of NaN). On other
//! adapters the tests check every output whose inputs are all finite, as strictly as on
//! lavapipe, and let the others be anything (see `common::adapter_is_software`).

mod common;

use common::{SHAPES, adapter_is_software, context};
use galaxy::gpu::{GpuError, LinearSelection, LinearStrategy, Reduction, ReductionStrategy};
use galaxy::immediate::ImmediateGpu;
use galaxy::{ShapeError, Tensor2d, Tolerance, cpu, gpu::ShaderCompilation};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Outputs start as this value, so an element no kernel wrote shows up as a finite number
/// no operator below can produce. (NaN, the usual poison, is an expected output here.)
const UNWRITTEN: f32 = 4242.0;

fn immediate() -> ImmediateGpu<'static> {
    ImmediateGpu::new(context(), ShaderCompilation::Cached).with_output_fill(UNWRITTEN)
}

/// NaN where the expected value is NaN, the same infinity where it is infinite, and a
/// finite value within `tolerance` elsewhere.
fn agrees(actual: f32, expected: f32, tolerance: Tolerance) -> bool {
    if expected.is_nan() {
        actual.is_nan()
    } else if expected.is_infinite() {
        actual == expected
    } else {
        actual.is_finite()
            && (actual - expected).abs() <= tolerance.absolute + tolerance.relative * expected.abs()
    }
}

/// Asserts `agrees` for every output element on a software adapter; elsewhere only for
/// the elements whose inputs were all finite (`finite_inputs[i]` for element `i`), since
/// WGSL leaves the others indeterminate.
fn assert_agrees(
    actual: &Tensor2d,
    expected: &Tensor2d,
    finite_inputs: &[bool],
    tolerance: Tolerance,
    what: &str,
) {
    assert_eq!(actual.shape(), expected.shape(), "{what}: shapes differ");
    assert_eq!(finite_inputs.len(), expected.as_slice().len());
    let strict = adapter_is_software();
    let wrong: Vec<String> = actual
        .as_slice()
        .iter()
        .zip(expected.as_slice())
        .enumerate()
        .filter(|&(index, _)| strict || finite_inputs[index])
        .filter(|&(_, (&actual, &expected))| !agrees(actual, expected, tolerance))
        .take(5)
        .map(|(index, (actual, expected))| format!("element {index}: GPU {actual}, CPU {expected}"))
        .collect();
    assert!(wrong.is_empty(), "{what}: {}", wrong.join("; "));
}

/// A random tensor with NaN, +∞ and −∞ written over a few seeded positions.
fn with_special_values(rows: usize, columns: usize, specials: &[f32], seed: u64) -> Tensor2d {
    let mut tensor = Tensor2d::random(rows, columns, -2.0..=2.0, seed);
    let mut random = ChaCha8Rng::seed_from_u64(seed + 1);
    let count = (rows * columns).div_ceil(50);
    for _ in 0..count {
        let index = random.random_range(0..rows * columns);
        let special = specials[random.random_range(0..specials.len())];
        tensor.as_mut_slice()[index] = special;
    }
    tensor
}

const ALL_SPECIALS: [f32; 3] = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY];

/// For an element-wise operator: whether each input element is finite.
fn finite_elements(input: &Tensor2d) -> Vec<bool> {
    input
        .as_slice()
        .iter()
        .map(|value| value.is_finite())
        .collect()
}

/// For a row-wise operator (softmax): whether every element of the element's row is finite.
fn finite_rows(input: &Tensor2d) -> Vec<bool> {
    (0..input.rows())
        .flat_map(|row| {
            let finite = input.row(row).iter().all(|value| value.is_finite());
            std::iter::repeat_n(finite, input.columns())
        })
        .collect()
}

/// For `input · weights + bias`: whether row `r` of the input and column `c` of the
/// weights (and the bias, always finite here) are finite, for each output `(r, c)`.
fn finite_products(input: &Tensor2d, weights: &Tensor2d) -> Vec<bool> {
    let finite_rows: Vec<bool> = (0..input.rows())
        .map(|row| input.row(row).iter().all(|value| value.is_finite()))
        .collect();
    let finite_columns: Vec<bool> = (0..weights.columns())
        .map(|column| (0..weights.rows()).all(|row| weights.get(row, column).is_finite()))
        .collect();
    finite_rows
        .iter()
        .flat_map(|&row| finite_columns.iter().map(move |&column| row && column))
        .collect()
}

#[test]
fn relu_passes_nan_and_infinities_through_as_the_cpu_does() {
    let gpu = immediate();
    for (seed, &(rows, columns)) in SHAPES.iter().enumerate() {
        let input = with_special_values(rows, columns, &ALL_SPECIALS, seed as u64);
        let expected = cpu::relu(&input);
        let what = format!("relu {rows}×{columns}");
        let finite = finite_elements(&input);
        assert_agrees(
            &gpu.relu(&input).unwrap(),
            &expected,
            &finite,
            Tolerance::EXACT,
            &what,
        );
        let mut in_place = input.clone();
        gpu.relu_in_place(&mut in_place).unwrap();
        assert_agrees(&in_place, &expected, &finite, Tolerance::EXACT, &what);
    }
}

#[test]
fn softmax_rows_with_special_values_match_the_cpu() {
    let gpu = immediate();
    let tolerance = Tolerance::new(2e-5, 1e-7);
    for (seed, &(rows, columns)) in SHAPES.iter().enumerate() {
        let input = with_special_values(rows, columns, &ALL_SPECIALS, 100 + seed as u64);
        let expected = cpu::softmax(&input).unwrap();
        let strategies = [
            ReductionStrategy::WorkgroupMemory,
            ReductionStrategy::Subgroups,
        ];
        for strategy in strategies {
            if strategy == ReductionStrategy::Subgroups && !context().supports_subgroups() {
                continue;
            }
            let actual = gpu.softmax_with(strategy, &input).unwrap();
            let what = format!("softmax {strategy:?} {rows}×{columns}");
            assert_agrees(&actual, &expected, &finite_rows(&input), tolerance, &what);
        }
    }
    // Rows that are all −∞, or hold +∞, have no finite maximum to shift by: every value
    // of such a row is NaN on both sides.
    let edge_rows = Tensor2d::from_vec(
        3,
        3,
        vec![
            f32::NEG_INFINITY,
            f32::NEG_INFINITY,
            f32::NEG_INFINITY,
            1.0,
            f32::INFINITY,
            2.0,
            0.0,
            f32::NEG_INFINITY,
            1.0,
        ],
    )
    .unwrap();
    let expected = cpu::softmax(&edge_rows).unwrap();
    assert!(expected.row(0).iter().all(|value| value.is_nan()));
    assert!(expected.row(1).iter().all(|value| value.is_nan()));
    assert_eq!(expected.get(2, 1), 0.0);
    assert_agrees(
        &gpu.softmax(&edge_rows).unwrap(),
        &expected,
        &finite_rows(&edge_rows),
        tolerance,
        "softmax edge rows",
    );
}

#[test]
fn linear_layers_with_special_values_match_the_cpu() {
    // One kernel of each kind (naive, tiled, register-blocked), on shapes whose inner and
    // column counts are multiples of 4, as the register-blocked kernels need.
    let register_blocked = LinearStrategy::candidates(context())
        .into_iter()
        .find(|strategy| matches!(strategy, LinearStrategy::RegisterBlocked(_)))
        .expect("every device runs some register-blocked configuration");
    let strategies = [
        LinearStrategy::Naive,
        LinearStrategy::Tiled { edge: 16 },
        register_blocked,
    ];
    for strategy in strategies {
        let gpu = immediate().with_linear(LinearSelection::Fixed(strategy));
        for (seed, (rows, inner, columns)) in [(1, 4, 4), (3, 8, 12), (17, 32, 8), (64, 64, 64)]
            .into_iter()
            .enumerate()
        {
            let seed = 200 + 3 * seed as u64;
            let input = with_special_values(rows, inner, &ALL_SPECIALS, seed);
            let weights = with_special_values(inner, columns, &[f32::NAN], seed + 1);
            let bias = Tensor2d::random(1, columns, -1.0..=1.0, seed + 2);
            let mut expected = Tensor2d::zeros(rows, columns);
            cpu::linear_into(&input, &weights, &bias, &mut expected).unwrap();
            let tolerance = Tolerance::new(1e-4, 1e-6 * inner as f32);
            let what = format!("linear {strategy} {rows}×{inner}·{inner}×{columns}");
            let finite = finite_products(&input, &weights);
            let actual = gpu.linear(&input, &weights, &bias).unwrap();
            assert_agrees(&actual, &expected, &finite, tolerance, &what);
            let expected_relu = cpu::relu(&expected);
            let actual_relu = gpu.linear_relu(&input, &weights, &bias).unwrap();
            assert_agrees(
                &actual_relu,
                &expected_relu,
                &finite,
                tolerance,
                &format!("{what} ReLU"),
            );
        }
    }
}

/// Lengths around the 1024-value block of one workgroup, and one that needs three passes.
const LENGTHS: [usize; 8] = [1, 2, 7, 1023, 1024, 1025, 4097, 70_001];

fn strategies() -> Vec<ReductionStrategy> {
    let mut strategies = vec![ReductionStrategy::WorkgroupMemory];
    if context().supports_subgroups() {
        strategies.push(ReductionStrategy::Subgroups);
    }
    strategies
}

// The two tests below feed every reduction a NaN or an infinity, so on a hardware adapter
// WGSL promises no value: there they check only that the reductions run.
#[test]
fn a_nan_anywhere_makes_sum_and_max_nan() {
    let gpu = immediate();
    let strict = adapter_is_software();
    for length in LENGTHS {
        // First, last, and a spread of positions in between, each in a run of its own.
        let positions = [0, length / 3, length / 2, length - 1];
        for position in positions {
            let mut input = Tensor2d::random(1, length, -2.0..=2.0, length as u64);
            input.set(0, position, f32::NAN);
            assert!(
                cpu::max_single_accumulator(input.as_slice())
                    .unwrap()
                    .is_nan()
            );
            for strategy in strategies() {
                let what = format!("{strategy:?}, length {length}, NaN at {position}");
                let max = gpu.reduce(Reduction::Max, strategy, &input).unwrap();
                assert!(!strict || max.is_nan(), "max {what}: {max}");
                let sum = gpu.reduce(Reduction::Sum, strategy, &input).unwrap();
                assert!(!strict || sum.is_nan(), "sum {what}: {sum}");
            }
        }
    }
}

#[test]
fn infinities_in_sum_and_max_match_the_cpu() {
    let gpu = immediate();
    let strict = adapter_is_software();
    for length in LENGTHS {
        let plus = with_special_values(1, length, &[f32::INFINITY], length as u64);
        let both = with_special_values(1, length, &[f32::INFINITY, f32::NEG_INFINITY], 9);
        let minus = Tensor2d::filled(1, length, f32::NEG_INFINITY);
        for input in [plus, both, minus] {
            let cpu_sum = cpu::sum_single_accumulator(input.as_slice());
            let cpu_max = cpu::max_single_accumulator(input.as_slice()).unwrap();
            for strategy in strategies() {
                let what = format!("{strategy:?}, length {length}");
                let sum = gpu.reduce(Reduction::Sum, strategy, &input).unwrap();
                let max = gpu.reduce(Reduction::Max, strategy, &input).unwrap();
                // Every input holds at least one infinity; compare the sums loosely in
                // case one is finite, the maxima exactly.
                let tolerance = Tolerance::new(1e-4, 1e-3);
                assert!(
                    !strict || agrees(sum, cpu_sum, tolerance),
                    "sum {what}: {sum} vs {cpu_sum}"
                );
                assert!(
                    !strict || agrees(max, cpu_max, Tolerance::EXACT),
                    "max {what}: {max} vs {cpu_max}"
                );
            }
        }
    }
}

/// Shapes with no elements: no rows, no columns, neither.
const EMPTY_SHAPES: [(usize, usize); 3] = [(0, 4), (4, 0), (0, 0)];

#[test]
fn empty_tensors_give_what_the_cpu_gives() {
    let gpu = immediate();
    for (rows, columns) in EMPTY_SHAPES {
        let empty = Tensor2d::zeros(rows, columns);
        let what = format!("{rows}×{columns}");
        assert_eq!(gpu.relu(&empty).unwrap(), cpu::relu(&empty), "relu {what}");
        let mut in_place = empty.clone();
        gpu.relu_in_place(&mut in_place).unwrap();
        assert_eq!(in_place, empty, "relu_in_place {what}");
        assert_eq!(
            gpu.softmax(&empty).unwrap(),
            cpu::softmax(&empty).unwrap(),
            "softmax {what}"
        );
        assert_eq!(gpu.sum(&empty).unwrap(), 0.0, "sum {what}");
        assert_eq!(cpu::sum_single_accumulator(empty.as_slice()), 0.0);
        assert_eq!(cpu::max_single_accumulator(empty.as_slice()), None);
        let error = gpu.max(&empty).unwrap_err();
        assert!(
            matches!(error, GpuError::Shape(ShapeError::Empty { .. })),
            "max {what}: {error}"
        );
    }
}

#[test]
fn linear_layers_with_an_empty_dimension_give_what_the_cpu_gives() {
    let gpu = immediate();
    // (rows, inner, columns): no rows, no outputs, and nothing to multiply.
    for (rows, inner, columns) in [(0, 3, 5), (4, 3, 0), (4, 0, 5), (0, 0, 0)] {
        let input = Tensor2d::zeros(rows, inner);
        let weights = Tensor2d::random(inner, columns, -1.0..=1.0, 1);
        let bias = Tensor2d::random(1, columns, -1.0..=1.0, 2);
        let mut expected = Tensor2d::zeros(rows, columns);
        cpu::linear_into(&input, &weights, &bias, &mut expected).unwrap();
        let what = format!("linear {rows}×{inner}·{inner}×{columns}");
        assert_eq!(
            gpu.linear(&input, &weights, &bias).unwrap(),
            expected,
            "{what}"
        );
        assert_eq!(
            gpu.linear_relu(&input, &weights, &bias).unwrap(),
            cpu::relu(&expected),
            "{what} with ReLU"
        );
        if inner == 0 && rows > 0 && columns > 0 {
            // x · W is all zeros, so every row is the bias.
            assert_eq!(expected.row(rows - 1), bias.row(0), "{what}");
        }
    }
}
