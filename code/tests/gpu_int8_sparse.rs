//! The int8 and sparse linear layers on the GPU (lavapipe in CI), against the CPU.
//!
//! - The GPU's row quantisation gives the CPU's levels and scales bit for bit where the
//!   adapter divides exactly (lavapipe, a `DeviceType::Cpu` adapter, must), with rows that
//!   sit exactly half-way between two levels, rows of zeros and one-value rows. Vulkan allows
//!   a division 2.5 ulp of error, and an NVIDIA driver uses it: on any other adapter a level
//!   may differ from the CPU's by one, and only at an activation whose quotient lies within
//!   a few ulp of a half-way point (`galaxy::gpu::quantization_flips`); the scale by 3 ε.
//! - Every GPU graph mode runs quantised and sparsified graphs of many shapes (rows 1, 3,
//!   64, 257; widths 1, 7, 64, 300; densities 0, 0.01, 0.3, 1) and gives the `Cpu` mode's
//!   result on the same graph, element by element, within a tolerance derived below.
//! - Runners whose buffers were poisoned with NaN first, NaN in the input, and the errors
//!   of bad input and of modes without the kernels.
//!
//! Tolerances. *int8*: with the same levels, both sides sum the same int8 levels exactly in
//! `i32` (and the sum, below 2^24, converts to `f32` exactly), so the only difference is the
//! last line, `sum · row scale · output scale + bias`: three roundings on the CPU, of which a
//! GPU may fuse the last multiply and add into one. That moves the result by at most one
//! rounding of the product and one of the result, `ε · (|product| + |result|)` with
//! `ε = 2^-23`; we allow twice that. On an adapter that does not divide exactly, the row
//! scale adds `3 ε · |product|` and every activation that may round either way adds one
//! level of its weight (`flip_bounds`). *Sparse*: both sides start from the bias and add the
//! same products in the same order (increasing input index), so again only fused
//! multiply-adds differ: at most `ε` of each product and partial sum, bounded by
//! `n · ε · (|bias| + Σ |w · x|)` for `n` products; a second layer adds its own and carries
//! the first one's through `|W|`.

mod common;

use common::context;
use galaxy::compiler::{quantize, sparsify};
use galaxy::cpu::int8::{Granularity, QuantizedRows, QuantizedWeights, quantize_rows};
use galaxy::cpu::linear_naive;
use galaxy::gpu::linear_int8::{QuantizedActivations, bind_quantize_rows, quantize_rows_pipeline};
use galaxy::gpu::quantization_flips::{
    QUOTIENT_ULPS, SCALE_RELATIVE_ERROR, flip_bounds, may_round_either_way,
};
use galaxy::gpu::{GpuTensor, PipelineCache, Readback, ShaderCompilation};
use galaxy::graph::{ChainBuilder, ValidGraph};
use galaxy::parallel::csr::random_sparse_dense;
use galaxy::runner::GpuGraphRunner;
use galaxy::runner::execution::{CompiledBuffers, prepare_compiled_variant};
use galaxy::runner::gpu::ComputePasses;
use galaxy::runner::{ExecutionMode, RunError};
use galaxy::tensor::Tensor2d;

/// `ε = 2^-23`, the distance from 1 to the next `f32`.
const EPSILON: f32 = f32::EPSILON;
const ROWS: [usize; 4] = [1, 3, 64, 257];
const WIDTHS: [usize; 4] = [1, 7, 64, 300];
const DENSITIES: [f64; 4] = [0.0, 0.01, 0.3, 1.0];

/// Whether the adapter must divide exactly, and so quantise bit for bit as the CPU does.
/// A software rasteriser (lavapipe, `DeviceType::Cpu`) divides with the CPU's correctly
/// rounded instruction; a hardware GPU may use the 2.5 ulp that Vulkan allows.
fn divides_exactly() -> bool {
    common::adapter_is_software()
}

/// Whether the adapter keeps NaN and infinity as IEEE 754 says. WGSL allows an
/// implementation to assume that no NaN or infinity is present ("Floating point evaluation"
/// in the WGSL specification); lavapipe runs the shader as CPU code and keeps them, so CI
/// checks that they reach the same outputs as on the CPU.
fn keeps_nan_and_infinity() -> bool {
    common::adapter_is_software()
}

/// Asserts that the GPU's quantisation of `input` is the CPU's: bit for bit where the
/// adapter divides exactly; elsewhere scales within 3 ε and levels within one, and a level
/// differing only where the quotient may round either way.
fn assert_quantisation_matches(
    actual: &QuantizedRows,
    expected: &QuantizedRows,
    input: &Tensor2d,
    what: &str,
) {
    if divides_exactly() {
        assert_eq!(actual.values, expected.values, "levels of {what}");
        let bits = |scales: &[f32]| scales.iter().map(|s| s.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&actual.scales),
            bits(&expected.scales),
            "scales of {what}"
        );
        return;
    }
    assert_eq!(
        actual.scales.len(),
        expected.scales.len(),
        "scales of {what}"
    );
    for (row, (&got, &want)) in actual.scales.iter().zip(&expected.scales).enumerate() {
        assert!(
            (got - want).abs() <= SCALE_RELATIVE_ERROR * want,
            "{what}, scale of row {row}: {got} against the CPU's {want}"
        );
    }
    assert_eq!(
        actual.values.len(),
        expected.values.len(),
        "levels of {what}"
    );
    for (index, (&got, &want)) in actual.values.iter().zip(&expected.values).enumerate() {
        let (row, column) = (index / input.columns(), index % input.columns());
        let value = input.get(row, column);
        let may_flip = may_round_either_way(value, expected.scales[row], QUOTIENT_ULPS);
        let allowed = if may_flip { 1 } else { 0 };
        assert!(
            (got as i32 - want as i32).abs() <= allowed,
            "{what}, row {row}, column {column}: level {got} against the CPU's {want} for \
             {value} / {} (may round either way: {may_flip})",
            expected.scales[row]
        );
    }
}

/// Every GPU mode that runs int8 and sparse layers.
fn gpu_modes() -> Vec<ExecutionMode> {
    ExecutionMode::ALL
        .into_iter()
        .filter(|mode| mode.uses_gpu() && mode.runs_cheaper_operators())
        .collect()
}

fn layer_graph(rows: usize, weights: &[(Tensor2d, Tensor2d)], relu: bool) -> ValidGraph {
    let mut chain = ChainBuilder::input(rows, weights[0].0.rows());
    for (layer, (weight, bias)) in weights.iter().enumerate() {
        chain = chain.linear(weight.clone(), bias.clone());
        // A ReLU between layers always, after the last one if asked.
        if relu || layer + 1 < weights.len() {
            chain = chain.relu();
        }
    }
    chain.output().expect("a valid chain")
}

fn map(tensor: &Tensor2d, function: impl Fn(f32) -> f32) -> Tensor2d {
    let values = tensor
        .as_slice()
        .iter()
        .map(|&value| function(value))
        .collect();
    Tensor2d::from_vec(tensor.rows(), tensor.columns(), values).expect("the same shape")
}

fn from_fn(rows: usize, columns: usize, function: impl Fn(usize, usize) -> f32) -> Tensor2d {
    let values = (0..rows * columns)
        .map(|index| function(index / columns, index % columns))
        .collect();
    Tensor2d::from_vec(rows, columns, values).expect("rows × columns values")
}

/// `|a| · |w| + |b|`: the sum of the magnitudes each output of a linear layer adds.
fn magnitudes(input: &Tensor2d, weights: &Tensor2d, bias: &Tensor2d) -> Tensor2d {
    let absolute = |tensor: &Tensor2d| map(tensor, f32::abs);
    linear_naive(&absolute(input), &absolute(weights), &absolute(bias)).unwrap()
}

/// Asserts `|actual − expected| ≤ allowed` element by element (both NaN counts as equal).
fn assert_within(actual: &Tensor2d, expected: &Tensor2d, allowed: &Tensor2d, what: &str) {
    assert_eq!(actual.shape(), expected.shape(), "{what}");
    for index in 0..actual.len() {
        let (got, want) = (actual.as_slice()[index], expected.as_slice()[index]);
        let bound = allowed.as_slice()[index];
        let same_nan = got.is_nan() && want.is_nan();
        assert!(
            same_nan || (got - want).abs() <= bound,
            "{what}, element {index}: {got} against the CPU's {want} (allowed {bound})"
        );
    }
}

/// Runs `graph` in every GPU mode and checks it against `expected` within `allowed`. Each
/// execution first runs on another input, so an element a kernel skipped would keep that
/// run's value and fail; two runners have every buffer poisoned with NaN as well.
fn check_every_gpu_mode(
    graph: &ValidGraph,
    input: &Tensor2d,
    expected: &Tensor2d,
    allowed: &Tensor2d,
    what: &str,
) {
    let other_input = map(input, |value| -0.5 * value + 0.25);
    for mode in gpu_modes() {
        let mut execution = mode.prepare(graph, Some(context())).unwrap();
        if mode == ExecutionMode::GraphCompiled {
            assert!(
                execution.fused_runner().is_none(),
                "{what}: the fused-MLP kernel has no int8 or sparse layers, so it must decline"
            );
        }
        execution.run(&other_input, 2).unwrap();
        for (iteration, actual) in execution.run(input, 2).unwrap().iter().enumerate() {
            assert_within(
                actual,
                expected,
                allowed,
                &format!("{what}, {mode:?}, iteration {iteration}"),
            );
        }
    }
    let plain = GpuGraphRunner::prepare(context(), graph, ShaderCompilation::Cached).unwrap();
    let compiled = prepare_compiled_variant(
        context(),
        graph,
        CompiledBuffers::Reused,
        ComputePasses::OnePerDispatch,
    )
    .unwrap();
    for (name, runner) in [("poisoned Graph", plain), ("poisoned compiled", compiled)] {
        for buffer in runner.buffers() {
            buffer.fill(context(), f32::NAN);
        }
        let actual = runner.run(input).unwrap();
        assert_within(&actual, expected, allowed, &format!("{what}, {name}"));
    }
}

/// A test input: random values, one row of zeros (scale 1), and where there is room a row
/// whose values sit exactly half-way between two levels (largest 127, so the scale is 1).
fn test_input(rows: usize, columns: usize, seed: u64) -> Tensor2d {
    let mut input = Tensor2d::random(rows, columns, -2.0..=2.0, seed);
    if rows >= 3 {
        for column in 0..columns {
            input.set(1, column, 0.0);
            let half_way = (column % 5) as f32 + 0.5;
            let sign = if column % 2 == 0 { 1.0 } else { -1.0 };
            input.set(2, column, sign * half_way);
        }
        input.set(2, 0, 127.0);
    }
    input
}

// ANCHOR: quantisation_bit_for_bit
#[test]
fn the_gpu_quantises_rows_exactly_as_the_cpu() {
    let pipelines = PipelineCache::new(ShaderCompilation::Cached);
    let pipeline = quantize_rows_pipeline(context(), &pipelines).unwrap();
    for rows in ROWS {
        for columns in WIDTHS {
            let input = test_input(rows, columns, (rows * 1000 + columns) as u64);
            let expected = quantize_rows(&input).unwrap();
            let gpu_input = GpuTensor::upload(context(), &input, Readback::Never).unwrap();
            let activations =
                QuantizedActivations::new(context(), rows, columns, Readback::Needed).unwrap();
            activations.poison(context());
            let mut encoder = context().create_encoder("quantize rows");
            bind_quantize_rows(context(), &pipeline, &gpu_input, &activations)
                .unwrap()
                .record(&mut encoder);
            context().submit(encoder);
            let actual = activations.download(context()).unwrap();
            assert_quantisation_matches(&actual, &expected, &input, &format!("{rows}×{columns}"));
        }
    }
}
// ANCHOR_END: quantisation_bit_for_bit

#[test]
fn half_way_values_round_away_from_zero_as_rust_does() {
    // 2.5 → 3 and −0.5 → −1, where WGSL's own `round` would give 2 and 0.
    let input = Tensor2d::from_vec(1, 5, vec![127.0, 2.5, -0.5, 1.5, -126.5]).unwrap();
    let pipelines = PipelineCache::new(ShaderCompilation::Cached);
    let pipeline = quantize_rows_pipeline(context(), &pipelines).unwrap();
    let gpu_input = GpuTensor::upload(context(), &input, Readback::Never).unwrap();
    let activations = QuantizedActivations::new(context(), 1, 5, Readback::Needed).unwrap();
    activations.poison(context());
    let mut encoder = context().create_encoder("quantize rows");
    bind_quantize_rows(context(), &pipeline, &gpu_input, &activations)
        .unwrap()
        .record(&mut encoder);
    context().submit(encoder);
    let actual = activations.download(context()).unwrap();
    let expected = quantize_rows(&input).unwrap();
    assert_eq!(expected.values, vec![127, 3, -1, 2, -127]);
    assert_eq!(expected.scales, vec![1.0]);
    // Exact where the adapter divides exactly; elsewhere each half-way value may take
    // either neighbour (it is flagged), and the test says only that nothing else moved.
    assert_quantisation_matches(&actual, &expected, &input, "half-way values");
}

#[test]
fn int8_layers_match_the_cpu_in_every_gpu_mode() {
    let mut case = 0;
    for rows in ROWS {
        for (inputs, outputs) in WIDTHS.iter().flat_map(|&a| WIDTHS.map(|b| (a, b))) {
            // Every shape of the grid once, the granularities and ReLU taking turns.
            case += 1;
            let granularity = [Granularity::PerTensor, Granularity::PerOutput][case % 2];
            let relu = case % 3 != 0;
            let seed = 10_000 + case as u64;
            let input = test_input(rows, inputs, seed);
            let weights = Tensor2d::random(inputs, outputs, -0.5..=0.5, seed + 1);
            let bias = Tensor2d::random(1, outputs, -0.2..=0.2, seed + 2);
            let quantized = QuantizedWeights::quantize(&weights, granularity).unwrap();
            let graph = layer_graph(rows, &[(weights, bias.clone())], relu);
            let graph = quantize(&graph, granularity).unwrap();
            let expected = ExecutionMode::Cpu.prepare(&graph, None).unwrap();
            let expected = { expected }.run(&input, 1).unwrap().remove(0);
            // `result − bias` is the product; where a ReLU clamped the result to zero it is
            // `−bias`, and a GPU result above zero there is the product plus the bias pushed
            // past zero by less than the allowance, so the product is within it of `−bias`.
            let flips = flip_bounds(&input, &quantized).unwrap();
            let exact = divides_exactly();
            let allowed = from_fn(rows, outputs, |row, column| {
                let result = expected.get(row, column);
                let product = result - bias.get(0, column);
                let rounding = 4.0 * EPSILON * (product.abs() + result.abs());
                if exact {
                    rounding
                } else {
                    rounding + SCALE_RELATIVE_ERROR * product.abs() + flips.get(row, column)
                }
            });
            let what = format!("int8 {rows}×{inputs}×{outputs} {granularity:?} relu {relu}");
            check_every_gpu_mode(&graph, &input, &expected, &allowed, &what);
        }
    }
}

#[test]
fn sparse_layers_match_the_cpu_in_every_gpu_mode() {
    // Two layers, rows and widths of the grid in every position.
    let shapes = [
        (1, 1, 7, 1),
        (3, 7, 64, 300),
        (64, 300, 1, 64),
        (257, 64, 300, 7),
    ];
    for (case, &(rows, inputs, hidden, outputs)) in shapes.iter().enumerate() {
        for (index, density) in DENSITIES.into_iter().enumerate() {
            let seed = 20_000 + 100 * case as u64 + 10 * index as u64;
            let input = test_input(rows, inputs, seed);
            let first = random_sparse_dense(inputs, hidden, density, seed + 1);
            let first_bias = Tensor2d::random(1, hidden, -0.2..=0.2, seed + 2);
            let second = random_sparse_dense(hidden, outputs, density, seed + 3);
            let second_bias = Tensor2d::random(1, outputs, -0.2..=0.2, seed + 4);
            let relu = index % 2 == 0;
            let layers = [
                (first.clone(), first_bias.clone()),
                (second.clone(), second_bias.clone()),
            ];
            let graph = sparsify(&layer_graph(rows, &layers, relu), 1.0).unwrap();
            let expected = { ExecutionMode::Cpu.prepare(&graph, None).unwrap() }
                .run(&input, 1)
                .unwrap()
                .remove(0);
            // The first layer's bound, carried through the second layer's |W|, plus the
            // second layer's own (see the top of the file).
            let first_allowed = map(&magnitudes(&input, &first, &first_bias), |m| {
                2.0 * (inputs as f32 + 1.0) * EPSILON * m
            });
            let hidden_values = map(&linear_naive(&input, &first, &first_bias).unwrap(), |v| {
                v.max(0.0)
            });
            let carried = linear_naive(
                &first_allowed,
                &map(&second, f32::abs),
                &Tensor2d::zeros(1, outputs),
            )
            .unwrap();
            let own = map(&magnitudes(&hidden_values, &second, &second_bias), |m| {
                2.0 * (hidden as f32 + 1.0) * EPSILON * m
            });
            let allowed = from_fn(rows, outputs, |row, column| {
                2.0 * carried.get(row, column) + own.get(row, column)
            });
            let what = format!("sparse {rows}×{inputs}×{hidden}×{outputs} at {density}");
            check_every_gpu_mode(&graph, &input, &expected, &allowed, &what);
        }
    }
}

#[test]
fn nan_reaches_the_same_outputs_of_a_sparse_layer_as_on_the_cpu() {
    let (rows, inputs, outputs) = (20, 30, 40);
    let mut input = Tensor2d::random(rows, inputs, -1.0..=1.0, 3);
    input.set(0, 0, f32::NAN);
    input.set(5, 17, f32::NAN);
    input.set(19, 29, f32::INFINITY);
    let weights = random_sparse_dense(inputs, outputs, 0.1, 4);
    let bias = Tensor2d::random(1, outputs, -0.2..=0.2, 5);
    for relu in [false, true] {
        let graph = sparsify(
            &layer_graph(rows, &[(weights.clone(), bias.clone())], relu),
            1.0,
        )
        .unwrap();
        let expected = { ExecutionMode::Cpu.prepare(&graph, None).unwrap() }
            .run(&input, 1)
            .unwrap()
            .remove(0);
        assert!(expected.as_slice().iter().any(|value| !value.is_finite()));
        let finite_part = map(&input, |v| if v.is_finite() { v } else { 0.0 });
        let allowed = map(&magnitudes(&finite_part, &weights, &bias), |m| {
            2.0 * (inputs as f32 + 1.0) * EPSILON * m
        });
        for mode in gpu_modes() {
            let actual = { mode.prepare(&graph, Some(context())).unwrap() }
                .run(&input, 1)
                .unwrap()
                .remove(0);
            for index in 0..actual.len() {
                let (got, want) = (actual.as_slice()[index], expected.as_slice()[index]);
                let same = if want.is_finite() {
                    (got - want).abs() <= allowed.as_slice()[index]
                } else if !keeps_nan_and_infinity() {
                    // WGSL lets an implementation assume that no NaN or infinity occurs, so
                    // where the CPU's result is not finite a hardware GPU may give anything
                    // (the NVIDIA H100 gave 0 after the ReLU: `select(sum, 0, sum < 0)`
                    // compiled as a `max` that drops the NaN). Only the finite outputs are
                    // compared there.
                    true
                } else {
                    got.is_nan() == want.is_nan() && (want.is_nan() || got == want)
                };
                assert!(
                    same,
                    "{mode:?} relu {relu}, element {index}: {got} against {want}"
                );
            }
        }
    }
}

#[test]
fn a_non_finite_input_to_an_int8_layer_is_the_cpus_typed_error() {
    let weights = Tensor2d::random(6, 4, -1.0..=1.0, 1);
    let graph = layer_graph(3, &[(weights, Tensor2d::zeros(1, 4))], true);
    let graph = quantize(&graph, Granularity::PerOutput).unwrap();
    let mut input = Tensor2d::random(3, 6, -1.0..=1.0, 2);
    input.set(1, 4, f32::INFINITY);
    let cpu_error = { ExecutionMode::Cpu.prepare(&graph, None).unwrap() }
        .run(&input, 1)
        .unwrap_err();
    for mode in gpu_modes() {
        let error = { mode.prepare(&graph, Some(context())).unwrap() }
            .run(&input, 1)
            .unwrap_err();
        assert!(
            matches!(error, RunError::Quantization(_)),
            "{mode:?}: {error}"
        );
        assert_eq!(error.to_string(), cpu_error.to_string(), "{mode:?}");
    }
}

#[test]
fn a_non_finite_activation_inside_the_graph_makes_its_rows_outputs_nan_on_the_gpu() {
    // A sparse layer passes the input's infinity on; the int8 layer after it cannot
    // quantise it. The CPU stops with an error; a kernel cannot, so that row becomes NaN
    // and the other rows are still right.
    let (rows, inputs, hidden, outputs) = (4, 5, 6, 3);
    // The first layer sparse enough for `sparsify`, the second dense, so `quantize` then
    // turns only the second into int8.
    let mut first = random_sparse_dense(inputs, hidden, 0.2, 7);
    // Input 1 reaches every hidden value, so its infinity reaches every one of row 2.
    for column in 0..hidden {
        first.set(1, column, 0.5);
    }
    let second = Tensor2d::random(hidden, outputs, -1.0..=1.0, 8);
    let graph = ChainBuilder::input(rows, inputs)
        .linear(first, Tensor2d::zeros(1, hidden))
        .linear(second, Tensor2d::zeros(1, outputs))
        .output()
        .unwrap();
    let mixed = quantize(&sparsify(&graph, 0.6).unwrap(), Granularity::PerOutput).unwrap();
    let kinds: Vec<&str> = mixed
        .graph()
        .nodes
        .iter()
        .map(|node| node.operator.name())
        .filter(|name| name.starts_with("linear"))
        .collect();
    assert_eq!(kinds, ["linear_sparse", "linear_int8"]);
    let mut input = Tensor2d::random(rows, inputs, -1.0..=1.0, 9);
    input.set(2, 1, f32::INFINITY);
    let actual = {
        ExecutionMode::GraphCached
            .prepare(&mixed, Some(context()))
            .unwrap()
    }
    .run(&input, 1)
    .unwrap()
    .remove(0);
    for column in 0..outputs {
        // Row 2 is NaN where the adapter keeps NaN and infinity; WGSL lets a hardware GPU
        // assume none occurs, so there row 2 may hold anything. The finite rows may not.
        assert!(
            !keeps_nan_and_infinity() || actual.get(2, column).is_nan(),
            "{actual:?}"
        );
        for row in [0, 1, 3] {
            assert!(actual.get(row, column).is_finite(), "{actual:?}");
        }
    }
}

#[test]
fn the_modes_without_kernels_still_refuse_and_name_the_modes_that_run_them() {
    let graph = layer_graph(
        2,
        &[(Tensor2d::random(4, 3, -1.0..=1.0, 1), Tensor2d::zeros(1, 3))],
        false,
    );
    let graph = quantize(&graph, Granularity::PerTensor).unwrap();
    for mode in [
        ExecutionMode::Immediate,
        ExecutionMode::ImmediateCached,
        ExecutionMode::OpCode,
    ] {
        assert!(!mode.runs_cheaper_operators());
        let error = mode.prepare(&graph, Some(context())).err().unwrap();
        let text = error.to_string();
        assert!(
            text.contains("GraphCompiled") && text.contains("CpuGraph"),
            "{text}"
        );
    }
}
