//! The GPU graph runner against plain CPU operator calls, element by element, with every
//! GPU buffer filled with NaN before the run.

mod common;

use common::{assert_close, context};
use galaxy::compiler::{
    LinearSelection, LinearStrategy, LinearStrategyError, RegisterBlockedConfig, fuse,
    reuse_buffers, rewrite_in_place,
};
use galaxy::gpu::{GpuError, ReductionStrategy, ShaderCompilation};
use galaxy::graph::{ChainBuilder, random_mlp};
use galaxy::runner::gpu::{ComputePasses, GpuRunnerOptions};
use galaxy::runner::{BufferPlan, GpuGraphRunner, RunError, run_operator_by_operator};
use galaxy::{Tensor2d, Tolerance};

/// GPU and CPU round differently (fused multiply-adds, `exp`), and the differences pass
/// through every layer; the softmax at the end keeps the outputs below 1.
const GRAPH_TOLERANCE: Tolerance = Tolerance::new(1e-4, 1e-6);

/// (size, depth, seed): single elements, odd sizes, sizes beyond one 16×16 tile.
const WORKLOADS: [(usize, usize, u64); 6] = [
    (1, 1, 1),
    (1, 4, 2),
    (5, 3, 3),
    (16, 8, 4),
    (33, 12, 5),
    (70, 6, 6),
];

fn poison(runner: &GpuGraphRunner) {
    for buffer in runner.buffers() {
        buffer.fill(context(), f32::NAN);
    }
}

#[test]
fn the_gpu_runner_matches_the_cpu_in_every_variant() {
    for (size, depth, seed) in WORKLOADS {
        let workload = random_mlp(size, depth, seed).unwrap();
        let expected = run_operator_by_operator(&workload.graph, &workload.input).unwrap();
        let fused = fuse(&workload.graph).unwrap();
        for (graph, name) in [(&workload.graph, "unfused"), (&fused, "fused")] {
            for compilation in [ShaderCompilation::EveryCall, ShaderCompilation::Cached] {
                let runner = GpuGraphRunner::prepare(context(), graph, compilation).unwrap();
                for run in 0..2 {
                    poison(&runner);
                    let actual = runner.run(&workload.input).unwrap();
                    let what =
                        format!("size {size} depth {depth} {name} {compilation:?} run {run}");
                    assert_close(&actual, &expected, GRAPH_TOLERANCE, &what);
                }
            }
        }
    }
}

#[test]
fn the_graph_loop_reads_back_every_iteration() {
    let workload = random_mlp(24, 5, 7).unwrap();
    let expected = run_operator_by_operator(&workload.graph, &workload.input).unwrap();
    let runner =
        GpuGraphRunner::prepare(context(), &workload.graph, ShaderCompilation::Cached).unwrap();
    poison(&runner);
    let results = runner.run_loop(&workload.input, 4).unwrap();
    assert_eq!(results.len(), 4);
    for (iteration, actual) in results.iter().enumerate() {
        assert_close(
            actual,
            &expected,
            GRAPH_TOLERANCE,
            &format!("iteration {iteration}"),
        );
    }
}

#[test]
fn cached_pipelines_compile_once_per_kernel() {
    // linear, relu (in place), linear, softmax: three kernels, one of them twice.
    let graph = ChainBuilder::input(4, 4)
        .linear(
            Tensor2d::random(4, 4, -1.0..=1.0, 1),
            Tensor2d::random(1, 4, -1.0..=1.0, 2),
        )
        .relu()
        .linear(
            Tensor2d::random(4, 4, -1.0..=1.0, 3),
            Tensor2d::random(1, 4, -1.0..=1.0, 4),
        )
        .softmax()
        .output()
        .unwrap();
    let input = Tensor2d::random(4, 4, -1.0..=1.0, 5);
    let cached = GpuGraphRunner::prepare(context(), &graph, ShaderCompilation::Cached).unwrap();
    let uncached =
        GpuGraphRunner::prepare(context(), &graph, ShaderCompilation::EveryCall).unwrap();
    for _ in 0..3 {
        cached.run(&input).unwrap();
        uncached.run(&input).unwrap();
    }
    assert_eq!(cached.pipelines().compilations(), 3);
    assert_eq!(uncached.pipelines().compilations(), 4 * 3);
}

#[test]
fn the_gpu_runner_rejects_an_input_of_the_wrong_shape() {
    let workload = random_mlp(4, 2, 1).unwrap();
    let runner =
        GpuGraphRunner::prepare(context(), &workload.graph, ShaderCompilation::Cached).unwrap();
    let error = runner.run(&Tensor2d::zeros(4, 5)).unwrap_err();
    assert_eq!(
        error,
        RunError::InputShape {
            expected: (4, 4),
            given: (4, 5)
        }
    );
}

/// Both softmax kernels where the device has subgroups, the tree alone otherwise.
fn softmax_strategies() -> std::vec::IntoIter<ReductionStrategy> {
    let mut strategies = vec![ReductionStrategy::WorkgroupMemory];
    if context().supports_subgroups() {
        strategies.push(ReductionStrategy::Subgroups);
    }
    strategies.into_iter()
}

#[test]
fn every_runner_option_matches_the_cpu() {
    // Sizes that take vec4 loads (4, 8, 20, 132: beyond a 128 × 128 tile) and sizes that
    // do not (5, 33), so that `PerShape` picks both kinds of kernel.
    let workloads = [
        (4, 3, 1),
        (5, 4, 2),
        (8, 6, 3),
        (20, 5, 4),
        (33, 4, 5),
        (132, 3, 6),
    ];
    let selections = [
        LinearSelection::Fixed(LinearStrategy::Naive),
        LinearSelection::Fixed(LinearStrategy::Tiled { edge: 8 }),
        LinearSelection::PerShape,
    ];
    for (size, depth, seed) in workloads {
        let workload = random_mlp(size, depth, seed).unwrap();
        let expected = run_operator_by_operator(&workload.graph, &workload.input).unwrap();
        let graph = rewrite_in_place(&fuse(&workload.graph).unwrap()).unwrap();
        let plans = [
            ("one buffer per tensor", BufferPlan::new(&graph)),
            ("shared buffers", reuse_buffers(&graph).plan),
        ];
        for (plan_name, plan) in plans {
            for (linear, softmax) in selections.into_iter().zip(softmax_strategies().cycle()) {
                for passes in [ComputePasses::OnePerDispatch, ComputePasses::OnePerRun] {
                    let options = GpuRunnerOptions {
                        compilation: ShaderCompilation::Cached,
                        linear,
                        softmax,
                        passes,
                    };
                    let runner = GpuGraphRunner::prepare_with_options(
                        context(),
                        &graph,
                        plan.clone(),
                        options,
                    )
                    .unwrap();
                    for run in 0..2 {
                        poison(&runner);
                        let actual = runner.run(&workload.input).unwrap();
                        let what = format!(
                            "size {size} depth {depth}, {plan_name}, {linear:?}, {softmax:?}, \
                             {passes:?}, run {run}"
                        );
                        assert_close(&actual, &expected, GRAPH_TOLERANCE, &what);
                    }
                }
            }
        }
    }
}

#[test]
fn the_graph_loop_keeps_its_staging_tensors_from_call_to_call() {
    let workload = random_mlp(12, 4, 8).unwrap();
    let runner =
        GpuGraphRunner::prepare(context(), &workload.graph, ShaderCompilation::Cached).unwrap();
    // Growing, shrinking and growing again, each call on another input: a staging tensor
    // kept from an earlier call must hold this call's result.
    for (call, iterations) in [3, 1, 5, 2].into_iter().enumerate() {
        let input = Tensor2d::random(12, 12, -1.0..=1.0, 100 + call as u64);
        let expected = run_operator_by_operator(&workload.graph, &input).unwrap();
        poison(&runner);
        let results = runner.run_loop(&input, iterations).unwrap();
        assert_eq!(results.len(), iterations);
        for (iteration, actual) in results.iter().enumerate() {
            let what = format!("call {call}, iteration {iteration} of {iterations}");
            assert_close(actual, &expected, GRAPH_TOLERANCE, &what);
        }
    }
}

#[test]
fn a_forced_kernel_that_cannot_run_a_layer_fails_at_preparation() {
    // Width 5: no vec4 loads.
    let workload = random_mlp(5, 2, 1).unwrap();
    let options = GpuRunnerOptions {
        linear: LinearSelection::Fixed(LinearStrategy::RegisterBlocked(
            RegisterBlockedConfig::new(16, 32, 16, 4, 4),
        )),
        ..GpuRunnerOptions::new(ShaderCompilation::Cached)
    };
    let plan = BufferPlan::new(&workload.graph);
    let error =
        GpuGraphRunner::prepare_with_options(context(), &workload.graph, plan, options).err();
    assert!(
        matches!(
            error,
            Some(RunError::Gpu(GpuError::LinearStrategy(
                LinearStrategyError::NotMultiplesOfFour { .. }
            )))
        ),
        "{error:?}"
    );
}
