//! Every linear kernel (naive, tiled, register-blocked in several configurations) against
//! the CPU's `linear_into`, element by element, with and without the fused ReLU, on shapes
//! from 1×1×1 to several workgroup tiles in every direction. Outputs are filled with NaN
//! before every run, so an element a kernel forgets to write fails.

mod common;

use common::{assert_close, context};
use galaxy::compiler::register_blocked_linear::KernelLimits;
use galaxy::compiler::{
    LinearSelection, LinearStrategy, LinearStrategyError, RegisterBlockedConfig,
};
use galaxy::cpu;
use galaxy::gpu::{GpuError, ShaderCompilation};
use galaxy::immediate::ImmediateGpu;
use galaxy::{Tensor2d, Tolerance};

/// Register-blocked configurations of every kind: the chooser's smallest and largest,
/// square and non-square tiles and invocation blocks, and every step along `inner`.
const CONFIGURATIONS: [RegisterBlockedConfig; 6] = [
    RegisterBlockedConfig::new(16, 32, 16, 4, 4),
    RegisterBlockedConfig::new(32, 32, 32, 4, 4),
    RegisterBlockedConfig::new(32, 64, 8, 4, 8),
    RegisterBlockedConfig::new(64, 32, 16, 8, 4),
    RegisterBlockedConfig::new(64, 64, 8, 8, 8),
    RegisterBlockedConfig::new(128, 128, 8, 8, 8),
];

/// (rows, inner, columns) whose inner dimension and columns are multiples of 4: what the
/// register-blocked kernel takes. Single vec4s, odd row counts, `inner` not a multiple of
/// any step, and outputs larger than the largest tile (128 × 128) in both directions.
const VEC4_SHAPES: [(usize, usize, usize); 8] = [
    (1, 4, 4),
    (3, 4, 8),
    (5, 12, 4),
    (17, 36, 12),
    (33, 20, 68),
    (64, 64, 64),
    (7, 260, 36),
    (131, 44, 136),
];

/// Shapes the register-blocked kernel cannot take; the other kernels must.
const OTHER_SHAPES: [(usize, usize, usize); 6] = [
    (1, 1, 1),
    (3, 5, 7),
    (33, 17, 65),
    (4, 6, 4),
    (4, 4, 6),
    (20, 3, 40),
];

/// Sums of up to a few hundred products, added in another order than on the CPU.
fn tolerance(inner: usize) -> Tolerance {
    Tolerance::new(1e-4, 1e-6 * inner as f32)
}

fn operands(rows: usize, inner: usize, columns: usize, seed: u64) -> [Tensor2d; 3] {
    [
        Tensor2d::random(rows, inner, -1.0..=1.0, seed),
        Tensor2d::random(inner, columns, -1.0..=1.0, seed + 1),
        Tensor2d::random(1, columns, -1.0..=1.0, seed + 2),
    ]
}

/// The CPU reference: `linear_into`, then ReLU if asked.
fn expected(input: &Tensor2d, weights: &Tensor2d, bias: &Tensor2d, apply_relu: bool) -> Tensor2d {
    let mut output = Tensor2d::zeros(input.rows(), weights.columns());
    cpu::linear_into(input, weights, bias, &mut output).unwrap();
    if apply_relu {
        cpu::relu_in_place(&mut output);
    }
    output
}

fn gpu(selection: LinearSelection) -> ImmediateGpu<'static> {
    ImmediateGpu::new(context(), ShaderCompilation::Cached)
        .with_linear(selection)
        .with_output_fill(f32::NAN)
}

/// Runs `gpu` on every shape, with and without ReLU, and compares with the CPU.
fn check_shapes(gpu: &ImmediateGpu, shapes: &[(usize, usize, usize)], what: &str) {
    for (index, &(rows, inner, columns)) in shapes.iter().enumerate() {
        let [input, weights, bias] = operands(rows, inner, columns, 100 * index as u64);
        for apply_relu in [false, true] {
            let actual = if apply_relu {
                gpu.linear_relu(&input, &weights, &bias)
            } else {
                gpu.linear(&input, &weights, &bias)
            }
            .unwrap_or_else(|error| panic!("{what} {rows}×{inner}×{columns}: {error}"));
            assert_close(
                &actual,
                &expected(&input, &weights, &bias, apply_relu),
                tolerance(inner),
                &format!("{what}, relu {apply_relu}, {rows}×{inner} · {inner}×{columns}"),
            );
        }
    }
}

#[test]
fn the_naive_and_tiled_kernels_match_the_cpu_on_every_shape() {
    let strategies = [
        LinearStrategy::Naive,
        LinearStrategy::Tiled { edge: 8 },
        LinearStrategy::Tiled { edge: 16 },
    ];
    for strategy in strategies {
        let gpu = gpu(LinearSelection::Fixed(strategy));
        check_shapes(&gpu, &VEC4_SHAPES, &strategy.to_string());
        check_shapes(&gpu, &OTHER_SHAPES, &strategy.to_string());
    }
}

#[test]
fn every_register_blocked_configuration_matches_the_cpu() {
    for config in CONFIGURATIONS {
        let strategy = LinearStrategy::RegisterBlocked(config);
        check_shapes(
            &gpu(LinearSelection::Fixed(strategy)),
            &VEC4_SHAPES,
            &strategy.to_string(),
        );
    }
}

#[test]
fn the_kernel_chosen_per_shape_matches_the_cpu_on_every_shape() {
    let gpu = gpu(LinearSelection::PerShape);
    check_shapes(&gpu, &VEC4_SHAPES, "per shape");
    check_shapes(&gpu, &OTHER_SHAPES, "per shape");
}

#[test]
fn a_forced_register_blocked_kernel_refuses_shapes_without_vec4() {
    let strategy = LinearStrategy::RegisterBlocked(CONFIGURATIONS[0]);
    let gpu = gpu(LinearSelection::Fixed(strategy));
    for (rows, inner, columns) in [(4, 6, 4), (4, 4, 6), (1, 1, 1)] {
        let [input, weights, bias] = operands(rows, inner, columns, 7);
        let error = gpu.linear(&input, &weights, &bias).unwrap_err();
        assert!(
            matches!(
                error,
                GpuError::LinearStrategy(LinearStrategyError::NotMultiplesOfFour { .. })
            ),
            "{rows}×{inner}×{columns}: {error}"
        );
    }
}

#[test]
fn the_chooser_never_picks_vec4_for_a_shape_that_cannot_take_it_on_this_device() {
    let context = context();
    for rows in [1, 5, 64, 300] {
        for inner in [1, 2, 3, 4, 5, 8, 63, 64, 256, 257] {
            for columns in [1, 3, 4, 6, 8, 64, 255, 256] {
                let strategy = LinearStrategy::for_shape(context, rows, inner, columns).unwrap();
                let takes_vec4 = inner.is_multiple_of(4) && columns.is_multiple_of(4);
                assert_eq!(
                    matches!(strategy, LinearStrategy::RegisterBlocked(_)),
                    takes_vec4,
                    "{rows}×{inner}×{columns}: {strategy}"
                );
                strategy.check(context, inner, columns).unwrap();
            }
        }
    }
}

#[test]
fn the_candidates_of_this_device_all_fit_it() {
    let context = context();
    let limits = KernelLimits::of(&context.limits());
    let candidates = LinearStrategy::candidates(context);
    assert!(candidates.contains(&LinearStrategy::Naive));
    assert!(candidates.contains(&LinearStrategy::Tiled { edge: 16 }));
    let register_blocked: Vec<RegisterBlockedConfig> = candidates
        .iter()
        .filter_map(|strategy| match strategy {
            LinearStrategy::RegisterBlocked(config) => Some(*config),
            _ => None,
        })
        .collect();
    assert!(!register_blocked.is_empty());
    for config in register_blocked {
        config.check(&limits).unwrap();
        assert!(config.invocations() <= limits.max_invocations_per_workgroup);
    }
}

#[test]
fn a_sample_of_the_candidates_compiles_and_matches_the_cpu() {
    // Every candidate is validated by naga in the unit tests; compiling all of them on a
    // software driver takes too long, so every seventh one runs here.
    let candidates = LinearStrategy::candidates(context());
    for strategy in candidates.iter().step_by(7) {
        check_shapes(
            &gpu(LinearSelection::Fixed(*strategy)),
            &VEC4_SHAPES[..6],
            &strategy.to_string(),
        );
    }
}

#[test]
fn an_impossible_configuration_is_a_typed_error() {
    let too_large = RegisterBlockedConfig::new(128, 128, 64, 4, 4);
    let gpu = gpu(LinearSelection::Fixed(LinearStrategy::RegisterBlocked(
        too_large,
    )));
    let [input, weights, bias] = operands(8, 8, 8, 3);
    let error = gpu.linear(&input, &weights, &bias).unwrap_err();
    assert!(
        matches!(
            error,
            GpuError::LinearStrategy(LinearStrategyError::Configuration(_))
        ),
        "{error}"
    );
}
