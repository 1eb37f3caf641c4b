//! Every GPU operator in immediate mode, with and without the pipeline cache.
//!
//! Each measured call is a full round trip: upload the inputs, (compile the shader,)
//! dispatch, wait, read the output back. The adapter is printed first; on lavapipe these
//! numbers describe a CPU emulating a GPU, never a GPU.
//!
//! `cargo bench -p galaxy --bench gpu_operators`

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use galaxy::Tensor2d;
use galaxy::bench::linear_throughput::LinearBenchmark;
use galaxy::compiler::{LinearStrategy, fuse};
use galaxy::gpu::{GpuContext, Reduction, ReductionStrategy, ShaderCompilation};
use galaxy::graph::random_mlp;
use galaxy::immediate::ImmediateGpu;
use galaxy::runner::gpu::{ComputePasses, GpuGraphRunner, GpuRunnerOptions};
use galaxy::runner::{BufferPlan, OpCodeRunner};

const COMPILATIONS: [(&str, ShaderCompilation); 2] = [
    ("compile_every_call", ShaderCompilation::EveryCall),
    ("cached", ShaderCompilation::Cached),
];

fn context() -> &'static GpuContext {
    let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
    eprintln!("GPU adapter: {}", context.describe());
    context
}

fn linear(criterion: &mut Criterion) {
    let context = context();
    let size = 256;
    let input = Tensor2d::random(size, size, -1.0..=1.0, 1);
    let weights = Tensor2d::random(size, size, -1.0..=1.0, 2);
    let bias = Tensor2d::random(1, size, -1.0..=1.0, 3);
    let mut group = criterion.benchmark_group("gpu_linear_256");
    for (name, compilation) in COMPILATIONS {
        let gpu = ImmediateGpu::new(context, compilation);
        group.bench_function(BenchmarkId::new("linear", name), |bencher| {
            bencher.iter(|| gpu.linear(black_box(&input), &weights, &bias).unwrap())
        });
        group.bench_function(BenchmarkId::new("linear_relu", name), |bencher| {
            bencher.iter(|| gpu.linear_relu(black_box(&input), &weights, &bias).unwrap())
        });
    }
    group.finish();
}

/// The three linear kernels on the GPU alone: dispatches recorded back to back into one
/// pass, no uploads, no readbacks (`linear_kernels` does the same at large sizes). The
/// register-blocked configuration is the one the chooser picks for 256 × 256.
fn linear_strategies(criterion: &mut Criterion) {
    let context = context();
    let size = 256;
    let chosen = LinearStrategy::for_shape(context, size, size, size)
        .unwrap_or_else(|error| panic!("{error}"));
    let mut group = criterion.benchmark_group("gpu_linear_kernels_256");
    group.throughput(Throughput::Elements(2 * (size as u64).pow(3)));
    for strategy in [
        LinearStrategy::Naive,
        LinearStrategy::Tiled { edge: 16 },
        chosen,
    ] {
        let benchmark = LinearBenchmark::prepare(context, strategy, (size, size, size), 6)
            .unwrap_or_else(|error| panic!("{strategy}: {error}"));
        benchmark
            .check()
            .unwrap_or_else(|error| panic!("{strategy}: {error}"));
        group.bench_function(BenchmarkId::from_parameter(strategy), |bencher| {
            bencher.iter_custom(|dispatches| {
                let seconds = benchmark
                    .time(dispatches as usize)
                    .unwrap_or_else(|error| panic!("{strategy}: {error}"));
                Duration::from_secs_f64(seconds)
            })
        });
    }
    group.finish();
}

/// A graph of small layers run with every kernel in a compute pass of its own, and with
/// all of them in one pass: what beginning and ending a pass per kernel costs, for the
/// graph runner and for the op-code runner (on the fused graph, as the `OpCode` mode runs
/// it).
fn compute_passes(criterion: &mut Criterion) {
    let context = context();
    let workload = random_mlp(16, 32, 3).unwrap_or_else(|error| panic!("{error}"));
    let mut group = criterion.benchmark_group("gpu_graph_compute_passes_size16_depth32");
    for (name, passes) in [
        ("one_per_dispatch", ComputePasses::OnePerDispatch),
        ("one_per_run", ComputePasses::OnePerRun),
    ] {
        let options = GpuRunnerOptions {
            passes,
            ..GpuRunnerOptions::new(ShaderCompilation::Cached)
        };
        let plan = BufferPlan::new(&workload.graph);
        let runner = GpuGraphRunner::prepare_with_options(context, &workload.graph, plan, options)
            .unwrap_or_else(|error| panic!("{error}"));
        group.bench_function(name, |bencher| {
            bencher.iter(|| runner.run(black_box(&workload.input)).unwrap())
        });
    }
    let fused = fuse(&workload.graph).unwrap_or_else(|error| panic!("{error}"));
    for (name, passes) in [
        ("opcode_one_per_dispatch", ComputePasses::OnePerDispatch),
        ("opcode_one_per_run", ComputePasses::OnePerRun),
    ] {
        let runner = OpCodeRunner::prepare_with_passes(context, &fused, passes)
            .unwrap_or_else(|error| panic!("{error}"));
        group.bench_function(name, |bencher| {
            bencher.iter(|| runner.run(black_box(&workload.input)).unwrap())
        });
    }
    group.finish();
}

fn element_wise_and_rows(criterion: &mut Criterion) {
    let context = context();
    let input = Tensor2d::random(1024, 1024, -1.0..=1.0, 4);
    let mut group = criterion.benchmark_group("gpu_1024x1024");
    for (name, compilation) in COMPILATIONS {
        let gpu = ImmediateGpu::new(context, compilation);
        group.bench_function(BenchmarkId::new("relu", name), |bencher| {
            bencher.iter(|| gpu.relu(black_box(&input)).unwrap())
        });
        group.bench_function(BenchmarkId::new("relu_in_place", name), |bencher| {
            bencher.iter_batched(
                || input.clone(),
                |mut tensor| gpu.relu_in_place(&mut tensor).unwrap(),
                criterion::BatchSize::LargeInput,
            )
        });
        group.bench_function(BenchmarkId::new("softmax", name), |bencher| {
            bencher.iter(|| gpu.softmax(black_box(&input)).unwrap())
        });
        group.bench_function(BenchmarkId::new("sum", name), |bencher| {
            bencher.iter(|| gpu.sum(black_box(&input)).unwrap())
        });
        group.bench_function(BenchmarkId::new("max", name), |bencher| {
            bencher.iter(|| gpu.max(black_box(&input)).unwrap())
        });
    }
    group.finish();
}

/// The two ways a workgroup combines values: a tree in workgroup memory with a barrier
/// per step, or subgroup operations (only where the device has them); for whole-tensor
/// reductions and for the row-wise softmax.
fn reduction_strategies(criterion: &mut Criterion) {
    let context = context();
    let input = Tensor2d::random(1024, 1024, -1.0..=1.0, 5);
    let gpu = ImmediateGpu::new(context, ShaderCompilation::Cached);
    let mut strategies = vec![("workgroup_memory", ReductionStrategy::WorkgroupMemory)];
    if context.supports_subgroups() {
        strategies.push(("subgroups", ReductionStrategy::Subgroups));
    }
    let mut group = criterion.benchmark_group("gpu_reduction_1024x1024");
    for (name, strategy) in strategies {
        for reduction in [Reduction::Sum, Reduction::Max] {
            let id = BenchmarkId::new(format!("{reduction:?}").to_lowercase(), name);
            group.bench_function(id, |bencher| {
                bencher.iter(|| gpu.reduce(reduction, strategy, black_box(&input)).unwrap())
            });
        }
        // A row-wise softmax is two reductions per row (maximum, then sum).
        group.bench_function(BenchmarkId::new("softmax", name), |bencher| {
            bencher.iter(|| gpu.softmax_with(strategy, black_box(&input)).unwrap())
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = linear, linear_strategies, compute_passes, element_wise_and_rows, reduction_strategies
}
criterion_main!(benches);
