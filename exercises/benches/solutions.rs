//! The reference solutions of the speed exercises against their naive versions: kernel
//! time, one dispatch submitted and waited for, data already on the GPU.
//!
//! `cargo bench -p galaxy-exercises --bench solutions`. Every kernel is checked against
//! the CPU reference on its input before it is timed (see `galaxy_exercises::figures`).
//!
//! The Rust warm-ups of Module 0 come first (`cargo bench -p galaxy-exercises --bench
//! solutions -- warm-up`): each starter against its reference solution, on the CPU. Their
//! checkers judge correctness; these benchmarks show what the change costs or saves.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use galaxy::Tensor2d;
use galaxy::gpu::GpuContext;
use galaxy_exercises::figures::{
    Spread, TimedKernel, conv1d_kernels, histogram_kernels, linear_kernels, softmax_kernels,
};
use galaxy_exercises::rust_exercises::{clone_free_loop, iterator_chain, operator_enum};

fn context() -> &'static GpuContext {
    GpuContext::shared().unwrap_or_else(|error| panic!("the benchmarks need a GPU: {error}"))
}

fn bench_group(criterion: &mut Criterion, group_name: &str, kernels: Vec<TimedKernel>) {
    let context = context();
    let mut group = criterion.benchmark_group(group_name);
    group.sample_size(10);
    for kernel in &kernels {
        group.bench_function(kernel.label, |bencher| {
            bencher.iter(|| kernel.prepared.dispatch_and_wait(context).unwrap());
        });
    }
    group.finish();
}

/// Starter and solution of each Rust warm-up, on the same data; both give the same
/// results (the checkers prove it), so only the time differs.
fn rust_warm_ups(criterion: &mut Criterion) {
    let random = |count: usize, seed: u64| Tensor2d::random(1, count, -1.0..=1.0, seed).into_vec();

    let (rows, columns) = (256, 1024);
    let matrix = random(rows * columns, 1);
    let bias = random(columns, 2);
    let mut group = criterion.benchmark_group("warm-up add_bias_relu 256x1024");
    // Each version works on its own copy, in place, again and again: after the first call
    // every value is at least 0, and each call does exactly the same work.
    let mut values = matrix.clone();
    group.bench_function("indexed loops (starter)", |bencher| {
        bencher.iter(|| {
            iterator_chain::starter::add_bias_relu(&mut values, columns, black_box(&bias))
        });
    });
    let mut values = matrix.clone();
    group.bench_function("iterator chain (solution)", |bencher| {
        bencher.iter(|| {
            iterator_chain::solution::add_bias_relu(&mut values, columns, black_box(&bias))
        });
    });
    group.finish();

    let signal = random(4096, 3);
    let steps = 64;
    let mut group = criterion.benchmark_group("warm-up smooth 4096 values 64 steps");
    group.bench_function("clone every step (starter)", |bencher| {
        bencher.iter(|| clone_free_loop::starter::smooth(black_box(&signal), steps));
    });
    group.bench_function("two buffers swapped (solution)", |bencher| {
        bencher.iter(|| clone_free_loop::solution::smooth(black_box(&signal), steps));
    });
    group.finish();

    let names = [
        "negate", "relu", "square", "halve", "absolute", "relu", "halve", "negate",
    ];
    let inputs = random(4096, 4);
    let mut group = criterion.benchmark_group("warm-up run_program 8 operators 4096 values");
    let by_name = operator_enum::starter::parse_program(&names).unwrap();
    group.bench_function("names compared (starter)", |bencher| {
        bencher.iter_batched_ref(
            || inputs.clone(),
            |values| operator_enum::starter::run_program(black_box(&by_name), values),
            BatchSize::SmallInput,
        );
    });
    let by_variant = operator_enum::solution::parse_program(&names).unwrap();
    group.bench_function("enum matched (solution)", |bencher| {
        bencher.iter_batched_ref(
            || inputs.clone(),
            |values| operator_enum::solution::run_program(black_box(&by_variant), values),
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

fn solutions(criterion: &mut Criterion) {
    let context = context();
    let checked = |kernels: Result<Vec<TimedKernel>, galaxy_exercises::CheckError>| {
        kernels.unwrap_or_else(|error| panic!("{error}"))
    };
    bench_group(
        criterion,
        "linear 256",
        checked(linear_kernels(context, 256)),
    );
    bench_group(
        criterion,
        "softmax 64×4096",
        checked(softmax_kernels(context, 64, 4096)),
    );
    bench_group(
        criterion,
        "conv1d 65536, 33 taps",
        checked(conv1d_kernels(context, 1 << 16, 33)),
    );
    bench_group(
        criterion,
        "histogram 262144 in one bin",
        checked(histogram_kernels(context, 1 << 18, Spread::OneBin)),
    );
}

criterion_group!(benches, rust_warm_ups, solutions);
criterion_main!(benches);
