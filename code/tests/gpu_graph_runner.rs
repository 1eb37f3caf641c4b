//! The GPU graph runner against plain CPU operator calls, element by element, with every
//! GPU buffer filled with NaN before the run.

mod common;

use common::{assert_close, context};
use galaxy::compiler::fuse;
use galaxy::gpu::ShaderCompilation;
use galaxy::graph::{ChainBuilder, random_mlp};
use galaxy::runner::{GpuGraphRunner, RunError, run_operator_by_operator};
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
