//! The irregular workloads of module 2: sorts, sparse against dense products, gather
//! orders, and the Monte Carlo estimate with a locked generator against counter-based
//! streams.
//!
//! Run with `cargo bench -p galaxy --bench parallel_irregular`. The figures of the pages
//! come from `cargo run --release --example irregular_workloads`, which sweeps lengths and
//! densities; this benchmark measures one point of each with criterion's statistics.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use galaxy::memory::access_patterns::Permutation;
use galaxy::parallel::csr::{CsrMatrix, dense_product, random_sparse_dense};
use galaxy::parallel::monte_carlo::{count_inside_locked, count_inside_parallel};
use galaxy::parallel::random_access::{gather, sequential_indices};
use galaxy::parallel::random_streams::SharedGenerator;
use galaxy::parallel::sorting::{CpuSort, random_keys};
use galaxy::tensor::Tensor2d;

fn sorts(criterion: &mut Criterion) {
    let length = 1 << 18;
    let keys = random_keys(length, u32::MAX, 1);
    let mut group = criterion.benchmark_group("sort_u32");
    group.throughput(Throughput::Elements(length as u64));
    for sort in CpuSort::ALL {
        group.bench_function(sort.label(), |bencher| {
            bencher.iter_batched_ref(
                || keys.clone(),
                |keys| sort.sort(black_box(keys)),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

fn sparse_products(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("sparse_times_dense_256");
    let right = Tensor2d::random(256, 32, -1.0..=1.0, 2);
    for density in [0.01, 0.1, 0.5] {
        let dense = random_sparse_dense(256, 256, density, 3);
        let sparse = CsrMatrix::from_dense(&dense, 0.0).expect("no NaN");
        group.bench_function(format!("CSR at density {density}"), |bencher| {
            bencher.iter(|| sparse.multiply_dense(black_box(&right)))
        });
        group.bench_function(format!("dense at density {density}"), |bencher| {
            bencher.iter(|| dense_product(black_box(&dense), black_box(&right)))
        });
    }
    group.finish();
}

fn gathers(criterion: &mut Criterion) {
    let length = 1 << 22;
    let values: Vec<f32> = (0..length).map(|index| index as f32).collect();
    let in_order = sequential_indices(length);
    let shuffled = Permutation::random(length, 4).expect("fits u32");
    let mut group = criterion.benchmark_group("gather_4Mi");
    group.throughput(Throughput::Elements(length as u64));
    group.bench_function("sequential indices", |bencher| {
        bencher.iter(|| gather(black_box(&values), black_box(&in_order)))
    });
    group.bench_function("random indices", |bencher| {
        bencher.iter(|| gather(black_box(&values), black_box(shuffled.as_slice())))
    });
    group.finish();
}

fn monte_carlo(criterion: &mut Criterion) {
    let samples = 1 << 18;
    let mut group = criterion.benchmark_group("monte_carlo_pi");
    group.throughput(Throughput::Elements(u64::from(samples)));
    let generator = SharedGenerator::new(5);
    let threads = rayon::current_num_threads();
    group.bench_function("locked generator", |bencher| {
        bencher.iter(|| count_inside_locked(&generator, black_box(samples), threads))
    });
    group.bench_function("counter-based streams, rayon", |bencher| {
        bencher.iter(|| count_inside_parallel(1, black_box(samples)))
    });
    group.finish();
}

criterion_group! {
    name = irregular;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    targets = sorts, sparse_products, gathers, monte_carlo
}
criterion_main!(irregular);
