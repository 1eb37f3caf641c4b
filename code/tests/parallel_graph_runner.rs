//! Differential tests of the parallel graph runner: on every graph it gives the output of
//! the sequential CPU graph runner, with either linear kernel, run after run, and it
//! rejects what the sequential runner rejects with the same error.

mod common;

use common::{assert_close, build_chain, chain_specification};
use galaxy::compiler::{fuse, rewrite_in_place};
use galaxy::graph::{BranchShape, GraphBuilder, ValidGraph, random_branches, random_mlp};
use galaxy::parallel::graph_runner::{LinearKernel, ParallelGraphRunner};
use galaxy::runner::{CpuGraphRunner, RunError, run_operator_by_operator};
use galaxy::{Tensor2d, Tolerance};
use proptest::prelude::*;

/// The two runners sum each dot product in a different order (the row-parallel kernel and
/// the single-threaded one block the work differently), so results agree to rounding.
const TOLERANCE: Tolerance = Tolerance::new(1e-4, 1e-5);

/// Runs `graph` three times in the parallel runner with each linear kernel, each time
/// with the buffers holding the previous run's values, and compares every result with
/// the sequential runner's.
fn check_against_sequential(graph: &ValidGraph, input: &Tensor2d, what: &str) {
    let expected = CpuGraphRunner::prepare(graph).run(input).unwrap();
    let reference = run_operator_by_operator(graph, input).unwrap();
    assert_close(
        &expected,
        &reference,
        TOLERANCE,
        &format!("{what}: CpuGraph"),
    );
    // A second input, so that a runner that kept the first run's result would fail.
    let other_input = Tensor2d::random(input.rows(), input.columns(), -1.0..=1.0, 99);
    let other_expected = CpuGraphRunner::prepare(graph).run(&other_input).unwrap();
    for kernel in [LinearKernel::RowParallel, LinearKernel::SingleThreaded] {
        let mut runner = ParallelGraphRunner::prepare(graph, kernel);
        for run in 0..3 {
            let (input, expected) = if run == 1 {
                (&other_input, &other_expected)
            } else {
                (input, &expected)
            };
            let actual = runner.run(input).unwrap();
            assert!(
                actual.as_slice().iter().all(|value| value.is_finite()),
                "{what}: {kernel:?} run {run} produced a value that is not finite"
            );
            assert_close(
                &actual,
                expected,
                TOLERANCE,
                &format!("{what}: {kernel:?}, run {run}"),
            );
        }
    }
}

fn branch_shape() -> impl Strategy<Value = (BranchShape, u64)> {
    (
        1usize..=12,
        1usize..=24,
        1usize..=9,
        1usize..=5,
        any::<u64>(),
    )
        .prop_map(|(rows, columns, branches, depth, seed)| {
            (
                BranchShape {
                    rows,
                    columns,
                    branches,
                    depth,
                },
                seed,
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn matches_the_sequential_runner_on_branching_graphs((shape, seed) in branch_shape()) {
        let workload = random_branches(shape, seed).unwrap();
        let what = format!("{shape:?}, seed {seed}");
        check_against_sequential(&workload.graph, &workload.input, &what);
        // The compiler's passes keep the branches; the runner must follow them too.
        let compiled = rewrite_in_place(&fuse(&workload.graph).unwrap()).unwrap();
        check_against_sequential(&compiled, &workload.input, &format!("{what}, fused, in place"));
    }

    #[test]
    fn matches_the_sequential_runner_on_chains(specification in chain_specification()) {
        let (graph, input) = build_chain(&specification);
        check_against_sequential(&graph, &input, &format!("{specification:?}"));
    }
}

#[test]
fn matches_the_sequential_runner_on_the_standard_workload() {
    for (size, depth, seed) in [(16, 8, 1), (48, 4, 2), (64, 32, 3)] {
        let workload = random_mlp(size, depth, seed).unwrap();
        check_against_sequential(
            &workload.graph,
            &workload.input,
            &format!("random_mlp({size}, {depth}, {seed})"),
        );
    }
}

#[test]
fn a_diamond_with_one_tensor_read_twice_is_computed_once_per_run() {
    // input → relu → add(relu, relu): the add reads one tensor through both inputs, so
    // it waits for one node, not two.
    let mut builder = GraphBuilder::new();
    let input = builder.input(2, 3);
    let activated = builder.relu(input);
    let doubled = builder.add(activated, activated);
    builder.output(doubled);
    let graph = builder.build().unwrap();
    let values = Tensor2d::from_vec(2, 3, vec![-1.0, 2.0, 0.5, -0.25, 3.0, 0.0]).unwrap();
    let mut runner = ParallelGraphRunner::prepare(&graph, LinearKernel::SingleThreaded);
    let output = runner.run(&values).unwrap();
    assert_eq!(output.as_slice(), &[0.0, 4.0, 1.0, 0.0, 6.0, 0.0]);
}

#[test]
fn a_wrong_input_shape_is_the_same_error_as_in_the_sequential_runner() {
    let shape = BranchShape {
        rows: 4,
        columns: 5,
        branches: 3,
        depth: 2,
    };
    let workload = random_branches(shape, 8).unwrap();
    let wrong = Tensor2d::zeros(5, 4);
    let sequential = CpuGraphRunner::prepare(&workload.graph).run(&wrong);
    let mut runner = ParallelGraphRunner::prepare(&workload.graph, LinearKernel::RowParallel);
    let parallel = runner.run(&wrong);
    assert_eq!(
        parallel,
        Err(RunError::InputShape {
            expected: (4, 5),
            given: (5, 4)
        })
    );
    assert_eq!(parallel, sequential);
    // The runner is still usable after the error.
    assert!(runner.run(&workload.input).is_ok());
}

#[test]
fn allocates_one_buffer_per_computed_tensor() {
    let shape = BranchShape {
        rows: 3,
        columns: 3,
        branches: 4,
        depth: 2,
    };
    let workload = random_branches(shape, 2).unwrap();
    let runner = ParallelGraphRunner::prepare(&workload.graph, LinearKernel::RowParallel);
    let computed = workload
        .graph
        .graph()
        .nodes
        .iter()
        .filter(|node| {
            !matches!(
                node.operator,
                galaxy::graph::Operator::Constant(_) | galaxy::graph::Operator::Output
            )
        })
        .count();
    assert_eq!(runner.buffer_count(), computed);
}
