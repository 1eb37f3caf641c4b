//! Differential tests of the prepacked CPU runner (the `CpuGraph` mode): it must give the
//! output of plain operator calls on every graph, with every way of sharing the rows
//! between threads, and never leak a value from one run into the next.

mod common;

use common::{assert_close, build_chain, chain_specification};
use galaxy::cpu::layer_stack::ThreadSplit;
use galaxy::graph::{ChainBuilder, Graph, Operator, ValidGraph, random_mlp};
use galaxy::runner::{CpuPrepackedRunner, ExecutionMode, RunError, run_operator_by_operator};
use galaxy::{Tensor2d, Tolerance};
use proptest::prelude::*;

const TOLERANCE: Tolerance = Tolerance::new(1e-4, 1e-5);

/// The splits every graph is run with: the calling thread, the pool with two tasks, and
/// more tasks than rows for the smaller inputs.
const SPLITS: [ThreadSplit; 4] = [
    ThreadSplit::OneThread,
    ThreadSplit::Tasks(2),
    ThreadSplit::Tasks(3),
    ThreadSplit::Tasks(64),
];

fn check_every_split(graph: &ValidGraph, input: &Tensor2d, what: &str) {
    let expected = run_operator_by_operator(graph, input).unwrap();
    let mut runner = CpuPrepackedRunner::prepare(graph).expect("a chain of layers");
    let measured = runner.run(input).unwrap();
    assert_close(
        &measured,
        &expected,
        TOLERANCE,
        &format!("{what}: measured split"),
    );
    for split in SPLITS {
        runner.set_split(split);
        // Twice: a second run must not depend on what the first left in the scratch space.
        for run in 0..2 {
            let actual = runner.run(input).unwrap();
            assert!(
                actual.as_slice().iter().all(|value| !value.is_nan()),
                "{what}: {split:?} run {run} left NaN in the output"
            );
            assert_close(
                &actual,
                &expected,
                TOLERANCE,
                &format!("{what}: {split:?} run {run}"),
            );
        }
    }
}

proptest! {
    // Generated chains: random widths (1 to 40), rows (1 to 24), ReLUs before, between and
    // doubled, with and without a softmax, no layers at all.
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn every_split_agrees_on_generated_graphs(specification in chain_specification()) {
        let (graph, input) = build_chain(&specification);
        check_every_split(&graph, &input, &format!("{specification:?}"));
    }
}

#[test]
fn the_standard_workload_at_odd_sizes_and_depth_1_and_128() {
    for (size, depth) in [
        (1, 1),
        (1, 128),
        (7, 1),
        (13, 128),
        (33, 3),
        (97, 2),
        (130, 2),
    ] {
        let workload = random_mlp(size, depth, 2026).unwrap();
        check_every_split(
            &workload.graph,
            &workload.input,
            &format!("random_mlp({size}, {depth})"),
        );
    }
}

#[test]
fn wide_layers_cross_every_block_edge() {
    // 300 rows and layers of 280 and 270 columns: more than one block of rows through the
    // stack, more than one inner block (256) in the second product, panels cut at the edge.
    let rows = 300;
    let first = Tensor2d::random(37, 280, -0.2..=0.2, 1);
    let second = Tensor2d::random(280, 270, -0.1..=0.1, 2);
    let graph = ChainBuilder::input(rows, 37)
        .linear(first, Tensor2d::random(1, 280, -0.5..=0.5, 3))
        .relu()
        .linear(second, Tensor2d::random(1, 270, -0.5..=0.5, 4))
        .softmax()
        .output()
        .unwrap();
    let input = Tensor2d::random(rows, 37, -1.0..=1.0, 5);
    check_every_split(&graph, &input, "300 rows, 37 → 280 → 270");
}

#[test]
fn nan_in_the_input_reaches_the_same_rows_as_in_the_reference() {
    let workload = random_mlp(24, 3, 7).unwrap();
    let mut input = workload.input.clone();
    input.as_mut_slice()[5 * 24 + 3] = f32::NAN;
    let expected = run_operator_by_operator(&workload.graph, &input).unwrap();
    let mut runner = CpuPrepackedRunner::prepare(&workload.graph).unwrap();
    let actual = runner.run(&input).unwrap();
    for row in 0..24 {
        let expected_nan = expected.row(row).iter().any(|value| value.is_nan());
        let actual_nan = actual.row(row).iter().any(|value| value.is_nan());
        assert_eq!(actual_nan, expected_nan, "row {row}");
        if !expected_nan {
            for (actual, expected) in actual.row(row).iter().zip(expected.row(row)) {
                assert!((actual - expected).abs() <= 1e-5, "row {row}");
            }
        }
    }
}

#[test]
fn the_cpu_graph_mode_runs_it_and_checks_the_input_shape() {
    let workload = random_mlp(16, 4, 3).unwrap();
    let mut execution = ExecutionMode::CpuGraph
        .prepare(&workload.graph, None)
        .unwrap();
    let expected = run_operator_by_operator(&workload.graph, &workload.input).unwrap();
    for actual in execution.run(&workload.input, 3).unwrap() {
        assert_close(&actual, &expected, TOLERANCE, "CpuGraph");
    }
    assert_eq!(
        execution.run(&Tensor2d::zeros(16, 5), 1),
        Err(RunError::InputShape {
            expected: (16, 16),
            given: (16, 5)
        })
    );
}

#[test]
fn a_side_branch_that_does_not_reach_the_result_is_left_out() {
    // The input's ReLU is read twice: by a softmax that nothing uses, and by the layer
    // that leads to the result. Only the way from the input to the result is run.
    let mut graph = Graph::new();
    let input = graph.push(
        Operator::Input {
            rows: 5,
            columns: 4,
        },
        vec![],
    );
    let clamped = graph.push(Operator::Relu, vec![input]);
    graph.push(Operator::Softmax, vec![clamped]);
    let weights = graph.push(
        Operator::Constant(Tensor2d::random(4, 3, -1.0..=1.0, 1)),
        vec![],
    );
    let bias = graph.push(
        Operator::Constant(Tensor2d::random(1, 3, -1.0..=1.0, 2)),
        vec![],
    );
    let product = graph.push(Operator::Linear, vec![clamped, weights, bias]);
    graph.push(Operator::Output, vec![product]);
    let graph = graph.validate().unwrap();
    let data = Tensor2d::random(5, 4, -1.0..=1.0, 3);
    check_every_split(&graph, &data, "side branch");
}
