//! The fully fused MLP kernel against the CPU reference: standard workloads, odd widths,
//! every layout, depth 1 and 128, one row of one column, generated chains, graphs with
//! branches, chains too wide to fuse, and the errors.

mod common;

use common::{assert_close, build_chain, chain_specification, context};
use galaxy::compiler::fused_mlp::{FusionChoice, FusionRequest};
use galaxy::graph::{ChainBuilder, GraphBuilder, ValidGraph, random_mlp};
use galaxy::runner::execution::prepare_compiled_with_fusion;
use galaxy::runner::fused::{plan_for_device, prepare_fused};
use galaxy::runner::{RunError, run_operator_by_operator};
use galaxy::{Tensor2d, Tolerance};
use proptest::prelude::*;

/// As for the other modes (execution_modes.rs): rounding differences pass through every
/// layer, and outputs without a softmax are not bounded by 1.
const FUSED_TOLERANCE: Tolerance = Tolerance::new(1e-4, 1e-5);

/// Runs `graph` through the fused kernel (with `request`, fusion required) on an output
/// poisoned with NaN, twice, and compares both results with the CPU.
fn check_fused(graph: &ValidGraph, input: &Tensor2d, request: FusionRequest, what: &str) {
    let expected = run_operator_by_operator(graph, input).unwrap();
    let request = FusionRequest {
        choice: FusionChoice::Always,
        ..request
    };
    let runner = prepare_fused(context(), graph, request)
        .unwrap_or_else(|error| panic!("{what}: {error}"))
        .unwrap_or_else(|| panic!("{what}: fusion was required"));
    for run in 0..2 {
        runner.result_buffer().fill(context(), f32::NAN);
        let actual = runner.run(input).unwrap();
        let plan = runner.plan();
        assert_close(
            &actual,
            &expected,
            FUSED_TOLERANCE,
            &format!("{what}, run {run}\n{plan}"),
        );
    }
}

fn with_rows(rows_per_workgroup: u32, rows_per_invocation: Option<u32>) -> FusionRequest {
    FusionRequest {
        choice: FusionChoice::Always,
        rows_per_workgroup: Some(rows_per_workgroup),
        rows_per_invocation,
        steps_in_flight: None,
        inner_slices: None,
    }
}

#[test]
fn standard_workloads_match_the_cpu() {
    for (size, depth, seed) in [
        (1, 1, 1),
        (4, 64, 2),
        (16, 8, 3),
        (64, 16, 4),
        (100, 3, 5),
        (256, 3, 6),
    ] {
        let workload = random_mlp(size, depth, seed).unwrap();
        let what = format!("random_mlp({size}, {depth}, {seed})");
        check_fused(
            &workload.graph,
            &workload.input,
            FusionRequest::default(),
            &what,
        );
    }
}

#[test]
fn depth_128_and_depth_1_match_the_cpu() {
    for (size, depth) in [(8, 128), (32, 1), (1, 128)] {
        let workload = random_mlp(size, depth, 7).unwrap();
        let what = format!("random_mlp({size}, {depth}, 7)");
        check_fused(
            &workload.graph,
            &workload.input,
            FusionRequest::default(),
            &what,
        );
    }
}

#[test]
fn every_number_of_steps_in_flight_gives_the_same_result() {
    // 64 columns are 16 steps of four rows: 3 and 5 leave steps over for the loop after
    // the chunks.
    let workload = random_mlp(64, 3, 10).unwrap();
    for steps in [1, 2, 3, 5, 8] {
        let request = FusionRequest {
            steps_in_flight: Some(steps),
            ..with_rows(4, None)
        };
        let what = format!("random_mlp(64, 3, 10), {steps} steps in flight");
        check_fused(&workload.graph, &workload.input, request, &what);
    }
}

#[test]
fn every_split_of_the_inner_dimension_gives_the_same_result() {
    // 100 columns are 25 steps: slices of 13, 7 and 2 steps (some empty for 17 columns).
    let (graph, input) = odd_chain(9, &[100, 100, 17, 100], true, 3);
    let workload = random_mlp(64, 3, 12).unwrap();
    for slices in [2, 4, 16] {
        for rows in [1, 4] {
            let request = FusionRequest {
                inner_slices: Some(slices),
                ..with_rows(rows, None)
            };
            let what = format!("{slices} inner slices, {rows} rows");
            check_fused(&graph, &input, request, &format!("odd widths, {what}"));
            check_fused(&workload.graph, &workload.input, request, &what);
        }
    }
}

#[test]
fn an_infinity_in_one_row_leaves_the_other_rows_alone() {
    // Four columns are one step: split four ways, three slices are empty, and (with the
    // weights streamed a layer ahead) must not read past the end of their row into the
    // next, where an infinity times a zero weight would make NaN.
    for (size, slices) in [(4, 4), (8, 4), (8, 2)] {
        let workload = random_mlp(size, 3, 21).unwrap();
        let mut values = workload.input.as_slice().to_vec();
        values[size] = f32::INFINITY; // row 1, column 0
        let input = Tensor2d::from_vec(size, size, values).unwrap();
        let expected = run_operator_by_operator(&workload.graph, &input).unwrap();
        let request = FusionRequest {
            inner_slices: Some(slices),
            ..with_rows(4, None)
        };
        let runner = prepare_fused(context(), &workload.graph, request)
            .unwrap()
            .expect("fusion was required");
        runner.result_buffer().fill(context(), f32::NAN);
        let actual = runner.run(&input).unwrap();
        for row in (0..size).filter(|&row| row != 1) {
            let expected_row = Tensor2d::from_vec(1, size, expected.row(row).to_vec()).unwrap();
            let actual_row = Tensor2d::from_vec(1, size, actual.row(row).to_vec()).unwrap();
            assert_close(
                &actual_row,
                &expected_row,
                FUSED_TOLERANCE,
                &format!("{size} wide, {slices} slices, row {row}\n{}", runner.plan()),
            );
        }
    }
}

#[test]
fn every_layout_gives_the_same_result() {
    let workload = random_mlp(64, 4, 9).unwrap();
    // 64 rows of 64 columns, twice, are 32 KiB: more than lavapipe has with the partial sums.
    for rows in [1, 2, 4, 8, 16, 32] {
        for rows_per_invocation in [None, Some(1), Some(rows.min(16))] {
            let what = format!("random_mlp(64, 4, 9), {rows} rows, {rows_per_invocation:?}");
            let request = with_rows(rows, rows_per_invocation);
            check_fused(&workload.graph, &workload.input, request, &what);
        }
    }
}

/// A chain through widths that are not multiples of 4, with rows that do not fill the
/// last block.
fn odd_chain(rows: usize, widths: &[usize], softmax: bool, seed: u64) -> (ValidGraph, Tensor2d) {
    let mut chain = ChainBuilder::input(rows, widths[0]);
    for (index, pair) in widths.windows(2).enumerate() {
        let limit = (3.0 / pair[0] as f32).sqrt();
        let layer_seed = seed + 2 * index as u64;
        let weights = Tensor2d::random(pair[0], pair[1], -limit..=limit, layer_seed);
        let bias = Tensor2d::random(1, pair[1], -0.5..=0.5, layer_seed + 1);
        chain = chain.linear(weights, bias);
        if index % 2 == 1 {
            chain = chain.relu();
        }
    }
    if softmax {
        chain = chain.softmax();
    }
    let input = Tensor2d::random(rows, widths[0], -1.0..=1.0, seed + 100);
    (chain.output().unwrap(), input)
}

#[test]
fn odd_widths_match_the_cpu() {
    let cases: [(usize, &[usize]); 5] = [
        (1, &[1, 1]),
        (5, &[3, 17, 33, 100]),
        (33, &[100, 3, 17]),
        (7, &[17, 33, 1]),
        (130, &[33, 100, 33]),
    ];
    for (rows, widths) in cases {
        for softmax in [true, false] {
            let (graph, input) = odd_chain(rows, widths, softmax, rows as u64);
            let what = format!("{rows} rows through {widths:?}, softmax {softmax}");
            check_fused(&graph, &input, FusionRequest::default(), &what);
            check_fused(&graph, &input, with_rows(4, Some(1)), &what);
        }
    }
}

proptest! {
    // Chains of 1 to 6 layers, widths 1 to 40, ReLUs anywhere, with or without a softmax.
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn generated_chains_match_the_cpu(specification in chain_specification()) {
        prop_assume!(!specification.layers.is_empty());
        let (graph, input) = build_chain(&specification);
        check_fused(&graph, &input, FusionRequest::default(), &format!("{specification:?}"));
    }
}

#[test]
fn branches_off_the_chain_are_left_out_without_changing_the_result() {
    let mut builder = GraphBuilder::new();
    let input = builder.input(6, 10);
    let first = builder.linear(
        input,
        Tensor2d::random(10, 12, -0.5..=0.5, 1),
        Tensor2d::random(1, 12, -0.5..=0.5, 2),
    );
    // Two readers of `first`: a ReLU nothing reads, and the next layer.
    let _unused = builder.relu(first);
    let second = builder.linear(
        first,
        Tensor2d::random(12, 5, -0.5..=0.5, 3),
        Tensor2d::random(1, 5, -0.5..=0.5, 4),
    );
    let result = builder.softmax(second);
    builder.output(result);
    let graph = builder.build().unwrap();
    let input = Tensor2d::random(6, 10, -1.0..=1.0, 5);
    let plan = plan_for_device(context(), &graph, FusionRequest::default());
    let chain = plan.chain.as_ref().unwrap();
    assert_eq!(chain.unused_nodes, 1, "{plan}");
    // The ReLU off the chain must not be applied to the first layer's result.
    assert!(!chain.shape.layers[0].relu, "{plan}");
    assert!(
        plan.to_string().contains(
            "left out: nodes off the chain, which nothing on the way to the result reads: 1"
        ),
        "{plan}"
    );
    check_fused(
        &graph,
        &input,
        FusionRequest::default(),
        "a graph with a branch",
    );
}

#[test]
fn chains_too_wide_for_workgroup_memory_fall_back_to_one_kernel_per_layer() {
    // Two blocks of one row of this width need more than the device's workgroup memory.
    let limit = context().limits().max_compute_workgroup_storage_size as usize;
    let width = limit / 8 + 4;
    let graph = ChainBuilder::input(2, width)
        .linear(
            Tensor2d::random(width, 4, -0.01..=0.01, 1),
            Tensor2d::random(1, 4, -0.5..=0.5, 2),
        )
        .relu()
        .softmax()
        .output()
        .unwrap();
    let input = Tensor2d::random(2, width, -1.0..=1.0, 3);
    let plan = plan_for_device(context(), &graph, FusionRequest::default());
    assert!(!plan.is_fused(), "{plan}");
    let text = plan.to_string();
    assert!(text.contains("no layout fits the device"), "{text}");
    assert!(text.contains("workgroup memory"), "{text}");

    // The compiled mode runs it layer by layer, and right.
    let mut execution =
        prepare_compiled_with_fusion(context(), &graph, FusionRequest::default()).unwrap();
    assert!(execution.fused_runner().is_none());
    let expected = run_operator_by_operator(&graph, &input).unwrap();
    let actual = execution.run(&input, 1).unwrap().pop().unwrap();
    assert_close(
        &actual,
        &expected,
        FUSED_TOLERANCE,
        "the per-layer fallback",
    );

    // Requiring fusion is an error that says why.
    let required = prepare_fused(context(), &graph, FusionRequest::new(FusionChoice::Always));
    match required {
        Err(RunError::FusionNotPossible { reason }) => {
            assert!(reason.contains("no layout fits"), "{reason}")
        }
        Err(other) => panic!("expected FusionNotPossible, got {other}"),
        Ok(_) => panic!("a chain wider than workgroup memory was fused"),
    }
}

#[test]
fn the_compiled_mode_fuses_small_networks_and_can_be_told_not_to() {
    let workload = random_mlp(16, 6, 2).unwrap();
    let expected = run_operator_by_operator(&workload.graph, &workload.input).unwrap();
    for (choice, fused) in [
        (FusionChoice::WhenCheaper, true),
        (FusionChoice::Never, false),
    ] {
        let mut execution =
            prepare_compiled_with_fusion(context(), &workload.graph, FusionRequest::new(choice))
                .unwrap();
        assert_eq!(execution.fused_runner().is_some(), fused, "{choice:?}");
        let actual = execution.run(&workload.input, 2).unwrap();
        for result in &actual {
            assert_close(result, &expected, FUSED_TOLERANCE, &format!("{choice:?}"));
        }
    }
}

#[test]
fn bad_inputs_are_typed_errors_with_messages() {
    let workload = random_mlp(8, 2, 1).unwrap();
    let runner = prepare_fused(
        context(),
        &workload.graph,
        FusionRequest::new(FusionChoice::Always),
    )
    .unwrap()
    .unwrap();
    let error = runner.run(&Tensor2d::zeros(8, 9)).unwrap_err();
    assert_eq!(
        error,
        RunError::InputShape {
            expected: (8, 8),
            given: (8, 9)
        }
    );
    assert!(error.to_string().contains("expects 8×8"), "{error}");

    // Nothing to fuse: a chain without a linear layer.
    let graph = ChainBuilder::input(3, 3).relu().softmax().output().unwrap();
    let error = prepare_fused(context(), &graph, FusionRequest::new(FusionChoice::Always))
        .err()
        .expect("a chain without layers cannot be fused");
    assert!(error.to_string().contains("no linear layer"), "{error}");

    // A layout that breaks the kernel's rules.
    let request = FusionRequest {
        choice: FusionChoice::Always,
        rows_per_workgroup: Some(6),
        ..FusionRequest::default()
    };
    let error = prepare_fused(context(), &workload.graph, request)
        .err()
        .expect("6 rows per workgroup is not a power of two");
    assert!(error.to_string().contains("powers of two"), "{error}");
}
