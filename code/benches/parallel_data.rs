//! Benchmarks of the data-parallelism chapter (`galaxy::parallel`): rayon, fixed chunks and
//! the shared queue on the balanced and the unbalanced workload; the four sums; the two
//! particle layouts; the three clamp forms on shuffled data.
//!
//! Run with `cargo bench -p galaxy --bench parallel_data`. `cargo test` runs every
//! benchmark once (criterion's test mode), so a broken one fails the tests. The example
//! `data_parallelism` sweeps thread counts and sizes for the figures.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use galaxy::bench::hardware::core_count;
use galaxy::parallel::branchless::ClampForm;
use galaxy::parallel::fixed_chunks::{process_in_fixed_chunks, process_with_shared_counter};
use galaxy::parallel::layouts::{
    count_within_array_of_structs, count_within_struct_of_arrays, random_particles,
    to_struct_of_arrays,
};
use galaxy::parallel::simd::SumKernel;
use galaxy::parallel::work_stealing::process_with_rayon;
use galaxy::parallel::workloads::{Balance, Workload, process_sequential};
use galaxy::tensor::Tensor2d;

/// 64 Ki items of 32 steps on average: a few milliseconds on one core.
const ITEMS: usize = 1 << 16;

fn scheduling(criterion: &mut Criterion) {
    let threads = core_count();
    for balance in [Balance::Balanced, Balance::Unbalanced] {
        let workload = Workload::new(balance, ITEMS, 32, 1);
        let mut output = vec![0.0f32; ITEMS];
        let mut group = criterion.benchmark_group(format!("parallel_data_{}", balance.name()));
        group.throughput(Throughput::Elements(ITEMS as u64));
        group.bench_function("sequential", |bencher| {
            bencher.iter(|| process_sequential(black_box(&workload), &mut output))
        });
        group.bench_function("rayon", |bencher| {
            bencher.iter(|| process_with_rayon(black_box(&workload), &mut output))
        });
        group.bench_function(format!("fixed_chunks_{threads}_threads"), |bencher| {
            bencher.iter(|| process_in_fixed_chunks(black_box(&workload), &mut output, threads))
        });
        group.bench_function(format!("shared_queue_{threads}_threads"), |bencher| {
            bencher.iter(|| process_with_shared_counter(black_box(&workload), &mut output, threads))
        });
        group.finish();
    }
}

fn sums(criterion: &mut Criterion) {
    // 16 Ki values, 64 KiB: in L2 on any current core.
    let values = Tensor2d::random(1, 1 << 14, -1.0..=1.0, 1).into_vec();
    let mut group = criterion.benchmark_group("parallel_data_sum_64KiB");
    group.throughput(Throughput::Elements(values.len() as u64));
    for kernel in SumKernel::available() {
        group.bench_function(kernel.name(), |bencher| {
            bencher.iter(|| kernel.sum(black_box(&values)))
        });
    }
    group.finish();
}

fn layouts(criterion: &mut Criterion) {
    let particles = random_particles(1 << 16, 2);
    let soa = to_struct_of_arrays(&particles);
    let mut group = criterion.benchmark_group("parallel_data_particles_64Ki");
    group.throughput(Throughput::Elements(particles.len() as u64));
    group.bench_function("array_of_structs", |bencher| {
        bencher.iter(|| count_within_array_of_structs(black_box(&particles), [0.0; 3], 0.5))
    });
    group.bench_function("struct_of_arrays", |bencher| {
        bencher.iter(|| count_within_struct_of_arrays(black_box(&soa), [0.0; 3], 0.5))
    });
    group.finish();
}

fn clamps(criterion: &mut Criterion) {
    // Shuffled values in [0, 1) clamped at 0.5: half above the limit, in random order.
    let source = Tensor2d::random(1, 1 << 16, 0.0..=1.0, 3).into_vec();
    let mut values = source.clone();
    let mut group = criterion.benchmark_group("parallel_data_clamp_random_64Ki");
    group.throughput(Throughput::Elements(source.len() as u64));
    for form in ClampForm::ALL {
        group.bench_function(form.name(), |bencher| {
            bencher.iter(|| {
                values.copy_from_slice(&source);
                form.run(black_box(&mut values), 0.5);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, scheduling, sums, layouts, clamps);
criterion_main!(benches);
