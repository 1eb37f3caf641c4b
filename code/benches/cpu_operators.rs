//! Benchmarks of the CPU operator variants, one group per operator family, for the
//! memory-hierarchy chapter.
//!
//! Run with `cargo bench -p galaxy --bench cpu_operators`. The sample counts are kept
//! small so that the whole run takes a minute or two; the differences between variants
//! are large enough (often several times) that more samples would not change the story.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use galaxy::Tensor2d;
use galaxy::bench::sweeps::cpu_linear::linear_with_matrixmultiply_into;
use galaxy::cpu::*;

/// The linear layers multiply `LINEAR_SIZE × LINEAR_SIZE` matrices: 16.8 million
/// multiply-adds, and 256 KiB per matrix, which no longer fits in L1 but does fit in L2.
const LINEAR_SIZE: usize = 256;

/// The size of the large comparison: 1024³ is 2.1 GFLOP, and each matrix is 4 MiB, as
/// large as a whole L2 cache, so the blocking of the fast variants has something to do.
const LARGE_LINEAR_SIZE: usize = 1024;

/// `cargo test` runs every benchmark once, unoptimised; at 1024³ the slow variants would
/// take seconds there, so that quick check uses this size instead.
const LARGE_LINEAR_SIZE_WHEN_TESTING: usize = 128;

/// The element-wise operators run on a `ELEMENTWISE_SIZE²` tensor: 4 MiB, larger than L2,
/// so they measure memory traffic rather than arithmetic.
const ELEMENTWISE_SIZE: usize = 1024;

/// The reductions run over `REDUCTION_LENGTH` values (4 MiB of `f32`).
const REDUCTION_LENGTH: usize = 1 << 20;

/// A random input, weights and bias for a square linear layer, values in −1..1.
fn linear_operands(size: usize) -> (Tensor2d, Tensor2d, Tensor2d) {
    (
        Tensor2d::random(size, size, -1.0..=1.0, 1),
        Tensor2d::random(size, size, -1.0..=1.0, 2),
        Tensor2d::random(1, size, -1.0..=1.0, 3),
    )
}

fn linear_variants(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("cpu_linear");
    let (input, weights, bias) = linear_operands(LINEAR_SIZE);
    // Transposed once, outside the measurement, as a real caller would do at load time.
    let transposed_weights = weights.transposed();
    let mut preallocated = Tensor2d::zeros(LINEAR_SIZE, LINEAR_SIZE);

    group.bench_function(BenchmarkId::new("naive", LINEAR_SIZE), |bencher| {
        bencher.iter(|| linear_naive(black_box(&input), black_box(&weights), black_box(&bias)))
    });
    group.bench_function(
        BenchmarkId::new("local_accumulator", LINEAR_SIZE),
        |bencher| {
            bencher.iter(|| {
                linear_local_accumulator(black_box(&input), black_box(&weights), black_box(&bias))
            })
        },
    );
    group.bench_function(
        BenchmarkId::new("transposed_weights", LINEAR_SIZE),
        |bencher| {
            bencher.iter(|| {
                linear_transposed_weights(
                    black_box(&input),
                    black_box(&transposed_weights),
                    black_box(&bias),
                )
            })
        },
    );
    group.bench_function(BenchmarkId::new("loop_order", LINEAR_SIZE), |bencher| {
        bencher.iter(|| linear_loop_order(black_box(&input), black_box(&weights), black_box(&bias)))
    });
    group.bench_function(BenchmarkId::new("blocked", LINEAR_SIZE), |bencher| {
        bencher.iter(|| linear_blocked(black_box(&input), black_box(&weights), black_box(&bias)))
    });
    group.bench_function(
        BenchmarkId::new("register_blocked", LINEAR_SIZE),
        |bencher| {
            bencher.iter(|| {
                linear_register_blocked(black_box(&input), black_box(&weights), black_box(&bias))
            })
        },
    );
    group.bench_function(BenchmarkId::new("parallel", LINEAR_SIZE), |bencher| {
        bencher.iter(|| linear_parallel(black_box(&input), black_box(&weights), black_box(&bias)))
    });
    group.bench_function(
        BenchmarkId::new("into_preallocated", LINEAR_SIZE),
        |bencher| {
            bencher.iter(|| {
                linear_into(
                    black_box(&input),
                    black_box(&weights),
                    black_box(&bias),
                    black_box(&mut preallocated),
                )
            })
        },
    );
    group.finish();
}

/// The fast variants against the best simple ones and against `matrixmultiply`, on a
/// layer large enough for the blocking to matter. Criterion reports elements per second
/// with 2·n³ "elements", that is floating-point operations (a multiply-add is two), so
/// its rates read as FLOP/s.
fn large_linear_variants(criterion: &mut Criterion) {
    let benchmarking = std::env::args().any(|argument| argument == "--bench");
    let size = if benchmarking {
        LARGE_LINEAR_SIZE
    } else {
        LARGE_LINEAR_SIZE_WHEN_TESTING
    };
    // Which build of the micro-kernel ran (set GALAXY_CPU_KERNEL to compare them).
    eprintln!(
        "register-blocked micro-kernel: {}",
        galaxy::cpu::linear_register_blocked::micro_kernel_in_use()
    );
    let mut group = criterion.benchmark_group("cpu_linear_large");
    group.throughput(Throughput::Elements(2 * (size as u64).pow(3)));
    let (input, weights, bias) = linear_operands(size);
    let mut output = Tensor2d::zeros(size, size);

    group.bench_function(BenchmarkId::new("register_blocked", size), |bencher| {
        bencher.iter(|| {
            linear_register_blocked_into(
                black_box(&input),
                black_box(&weights),
                black_box(&bias),
                black_box(&mut output),
            )
        })
    });
    group.bench_function(BenchmarkId::new("parallel", size), |bencher| {
        bencher.iter(|| {
            linear_parallel_into(
                black_box(&input),
                black_box(&weights),
                black_box(&bias),
                black_box(&mut output),
            )
        })
    });
    group.bench_function(BenchmarkId::new("matrixmultiply", size), |bencher| {
        bencher.iter(|| {
            // Single-threaded, the crate's default; it picks its own AVX2 or AVX-512
            // kernel at run time.
            linear_with_matrixmultiply_into(
                black_box(&input),
                black_box(&weights),
                black_box(&bias),
                black_box(&mut output),
            )
            .unwrap()
        })
    });
    group.bench_function(BenchmarkId::new("blocked", size), |bencher| {
        bencher.iter(|| linear_blocked(black_box(&input), black_box(&weights), black_box(&bias)))
    });
    group.bench_function(BenchmarkId::new("loop_order", size), |bencher| {
        bencher.iter(|| linear_loop_order(black_box(&input), black_box(&weights), black_box(&bias)))
    });
    group.finish();
}

fn relu_variants(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("cpu_relu");
    let input = Tensor2d::random(ELEMENTWISE_SIZE, ELEMENTWISE_SIZE, -1.0..=1.0, 4);
    let mut preallocated = Tensor2d::zeros(ELEMENTWISE_SIZE, ELEMENTWISE_SIZE);

    group.bench_function(
        BenchmarkId::new("allocating", ELEMENTWISE_SIZE),
        |bencher| bencher.iter(|| relu(black_box(&input))),
    );
    group.bench_function(
        BenchmarkId::new("preallocated", ELEMENTWISE_SIZE),
        |bencher| bencher.iter(|| relu_into(black_box(&input), black_box(&mut preallocated))),
    );
    // Each iteration gets a fresh copy of the input (made outside the measurement), so
    // that every run clamps the same mix of negative and positive values.
    group.bench_function(BenchmarkId::new("in_place", ELEMENTWISE_SIZE), |bencher| {
        bencher.iter_batched_ref(
            || input.clone(),
            |tensor| relu_in_place(black_box(tensor)),
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

fn softmax_variants(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("cpu_softmax");
    let input = Tensor2d::random(ELEMENTWISE_SIZE, ELEMENTWISE_SIZE, -1.0..=1.0, 5);

    group.bench_function(
        BenchmarkId::new("allocating", ELEMENTWISE_SIZE),
        |bencher| bencher.iter(|| softmax(black_box(&input))),
    );
    group.bench_function(BenchmarkId::new("in_place", ELEMENTWISE_SIZE), |bencher| {
        bencher.iter_batched_ref(
            || input.clone(),
            |tensor| softmax_in_place(black_box(tensor)),
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

fn reduction_variants(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("cpu_reduce");
    let values = Tensor2d::random(1, REDUCTION_LENGTH, -1.0..=1.0, 6).into_vec();

    group.bench_function(
        BenchmarkId::new("sum_single_accumulator", REDUCTION_LENGTH),
        |bencher| bencher.iter(|| sum_single_accumulator(black_box(&values))),
    );
    group.bench_function(
        BenchmarkId::new("sum_several_accumulators", REDUCTION_LENGTH),
        |bencher| bencher.iter(|| sum_several_accumulators(black_box(&values))),
    );
    group.bench_function(
        BenchmarkId::new("max_single_accumulator", REDUCTION_LENGTH),
        |bencher| bencher.iter(|| max_single_accumulator(black_box(&values))),
    );
    group.bench_function(
        BenchmarkId::new("max_several_accumulators", REDUCTION_LENGTH),
        |bencher| bencher.iter(|| max_several_accumulators(black_box(&values))),
    );
    group.finish();
}

/// Fused against unfused. The unfused chains use the same kernel as the fused operators
/// (`linear_parallel`: register-blocked, on every core) and work in place, so the only
/// difference left is the extra passes over the output.
fn fusion_variants(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("cpu_fused");
    let (input, weights, bias) = linear_operands(LINEAR_SIZE);

    group.bench_function(
        BenchmarkId::new("linear_then_relu", LINEAR_SIZE),
        |bencher| {
            bencher.iter(|| {
                let mut output =
                    linear_parallel(black_box(&input), black_box(&weights), black_box(&bias))?;
                relu_in_place(&mut output);
                Ok::<_, galaxy::ShapeError>(output)
            })
        },
    );
    group.bench_function(
        BenchmarkId::new("linear_relu_fused", LINEAR_SIZE),
        |bencher| {
            bencher.iter(|| {
                linear_relu_fused(black_box(&input), black_box(&weights), black_box(&bias))
            })
        },
    );
    group.bench_function(
        BenchmarkId::new("linear_then_relu_then_softmax", LINEAR_SIZE),
        |bencher| {
            bencher.iter(|| {
                let mut output =
                    linear_parallel(black_box(&input), black_box(&weights), black_box(&bias))?;
                relu_in_place(&mut output);
                softmax_in_place(&mut output)?;
                Ok::<_, galaxy::ShapeError>(output)
            })
        },
    );
    group.bench_function(
        BenchmarkId::new("linear_relu_softmax_fused", LINEAR_SIZE),
        |bencher| {
            bencher.iter(|| {
                linear_relu_softmax_fused(black_box(&input), black_box(&weights), black_box(&bias))
            })
        },
    );
    group.finish();
}

/// Few samples and short measurements: enough to rank the variants, quick enough to run
/// while reading the chapter.
fn quick_configuration() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = cpu_operators;
    config = quick_configuration();
    targets = linear_variants, large_linear_variants, relu_variants, softmax_variants,
        reduction_variants, fusion_variants
}
criterion_main!(cpu_operators);
