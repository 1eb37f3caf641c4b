//! Differential tests: every execution mode gives the same output as plain CPU operator
//! calls, on graphs proptest generates (random depth, widths and operator mix).

mod common;

use common::{assert_close, build_chain, chain_specification, context};
use galaxy::graph::{ValidGraph, random_mlp};
use galaxy::runner::execution::{CompiledBuffers, prepare_compiled_variant};
use galaxy::runner::gpu::ComputePasses;
use galaxy::runner::{ExecutionMode, RunError, run_operator_by_operator};
use galaxy::{Tensor2d, Tolerance};
use proptest::prelude::*;

/// Differences between GPU and CPU rounding pass through every layer (see
/// gpu_graph_runner.rs); without a softmax at the end outputs are not bounded by 1, so
/// the absolute part is a little larger.
const MODE_TOLERANCE: Tolerance = Tolerance::new(1e-4, 1e-5);

fn check_every_mode(graph: &ValidGraph, input: &Tensor2d, what: &str) {
    let mut reference = ExecutionMode::Cpu.prepare(graph, None).unwrap();
    let expected = reference.run(input, 1).unwrap().pop().unwrap();
    for mode in ExecutionMode::ALL {
        let mut execution = mode.prepare(graph, Some(context())).unwrap();
        let results = execution.run(input, 2).unwrap();
        assert_eq!(
            results.len(),
            2,
            "{mode:?} returns one result per iteration"
        );
        for (iteration, actual) in results.iter().enumerate() {
            assert_close(
                actual,
                &expected,
                MODE_TOLERANCE,
                &format!("{what}: {mode:?} iteration {iteration}"),
            );
        }
    }
}

proptest! {
    // 200 generated graphs per run, each in every mode (PROPTEST_CASES overrides).
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn every_mode_agrees_on_generated_graphs(specification in chain_specification()) {
        let (graph, input) = build_chain(&specification);
        check_every_mode(&graph, &input, &format!("{specification:?}"));
    }
}

#[test]
fn every_mode_agrees_on_the_standard_workload() {
    let workload = random_mlp(32, 16, 11).unwrap();
    check_every_mode(&workload.graph, &workload.input, "random_mlp(32, 16, 11)");
}

#[test]
fn every_variant_of_the_compiled_mode_agrees_with_the_cpu() {
    for (size, depth, seed) in [(1, 1, 3), (12, 5, 4), (64, 3, 5)] {
        let workload = random_mlp(size, depth, seed).unwrap();
        let expected = run_operator_by_operator(&workload.graph, &workload.input).unwrap();
        for buffers in [CompiledBuffers::Reused, CompiledBuffers::OnePerTensor] {
            for passes in [ComputePasses::OnePerRun, ComputePasses::OnePerDispatch] {
                let runner =
                    prepare_compiled_variant(context(), &workload.graph, buffers, passes).unwrap();
                for buffer in runner.buffers() {
                    buffer.fill(context(), f32::NAN);
                }
                let actual = runner.run(&workload.input).unwrap();
                let what = format!("random_mlp({size}, {depth}, {seed}), {buffers:?}, {passes:?}");
                assert_close(&actual, &expected, MODE_TOLERANCE, &what);
            }
        }
    }
}

#[test]
fn gpu_modes_without_a_context_are_an_error() {
    let workload = random_mlp(4, 2, 1).unwrap();
    for mode in ExecutionMode::ALL {
        let prepared = mode.prepare(&workload.graph, None);
        if mode.uses_gpu() {
            assert!(
                matches!(prepared, Err(RunError::NoGpuContext { .. })),
                "{mode:?}"
            );
        } else {
            assert!(prepared.is_ok(), "{mode:?}");
        }
    }
}
