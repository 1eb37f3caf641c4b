//! Benchmarks of every variant in `galaxy::memory`, for the chapter "The CPU and its
//! memory hierarchy".
//!
//! Run with `cargo bench -p galaxy --bench memory_hierarchy`. Each group compares
//! variants that compute the same result, at one size that fits in the caches and, where
//! the point is memory, one that does not. The figures of the chapter sweep many more
//! sizes (`galaxy::memory::sweeps`); these benches give criterion's careful statistics
//! for a few representative points.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use galaxy::Tensor2d;
use galaxy::memory::access_patterns::{
    Cycle, Permutation, sum_in_order, sum_sequential, sum_strided,
};
use galaxy::memory::allocation::{
    row_medians_allocating, row_medians_boxed, row_medians_on_stack, row_medians_reusing,
};
use galaxy::memory::branch_prediction::{keep_below_branching, keep_below_branchless};
use galaxy::memory::growable_arrays::{fill_by_pushing, fill_with_capacity};
use galaxy::memory::inlining::{
    apply_inlined, apply_not_inlined, apply_through_pointer, soft_sign,
};
use galaxy::memory::linked_list::LinkedList;
use galaxy::memory::nested_vectors::{
    NestedMatrix, sum_columns_first_flat, sum_columns_first_nested, sum_rows_first_flat,
    sum_rows_first_nested,
};
use galaxy::memory::transpose::{
    transpose_blocked, transpose_reading_rows, transpose_writing_rows,
};

/// `full` when benchmarking, `check` when `cargo test` runs this file. `cargo bench` passes
/// `--bench`; `cargo test` runs each benchmark once without it, only to check that it
/// works, and in an unoptimised build, where setting up the large inputs alone would
/// take most of a minute.
fn size(full: usize, check: usize) -> usize {
    if std::env::args().any(|argument| argument == "--bench") {
        full
    } else {
        check
    }
}

fn access_patterns(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("memory_access_patterns");
    // 16 KiB stays in L1; 32 MiB is larger than the L2 of any current core and than
    // many L3 caches.
    let large = size(32 << 20, 256 << 10);
    for (bytes, label) in [
        (16 << 10, "16KiB".to_string()),
        (large, format!("{}KiB", large >> 10)),
    ] {
        let label = label.as_str();
        let length = bytes / size_of::<u32>();
        let values: Vec<u32> = (0..length as u32).collect();
        let order = Permutation::random(length, 1).unwrap();
        let cycle = Cycle::random(length, 2).unwrap();
        group.throughput(Throughput::Elements(length as u64));
        group.bench_function(BenchmarkId::new("sequential", label), |bencher| {
            bencher.iter(|| sum_sequential(black_box(&values)))
        });
        group.bench_function(BenchmarkId::new("strided_64_bytes", label), |bencher| {
            bencher.iter(|| sum_strided(black_box(&values), 16))
        });
        group.bench_function(BenchmarkId::new("random_order", label), |bencher| {
            bencher.iter(|| sum_in_order(black_box(&values), black_box(&order)))
        });
        // A chain through the whole 32 MiB would take most of a second per iteration.
        let steps = length.min(1 << 16);
        group.throughput(Throughput::Elements(steps as u64));
        group.bench_function(BenchmarkId::new("dependent_chain", label), |bencher| {
            bencher.iter(|| black_box(&cycle).follow(black_box(steps)))
        });
    }
    group.finish();
}

fn nested_vectors(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("memory_nested_vectors");
    let values = size(1 << 20, 1 << 14);
    for columns in [4, 1024] {
        let flat = Tensor2d::random(values / columns, columns, -1.0..=1.0, 3);
        let nested = NestedMatrix::from_tensor(&flat);
        let scattered = NestedMatrix::from_tensor_scattered(&flat, 4);
        group.throughput(Throughput::Elements(values as u64));
        group.bench_function(BenchmarkId::new("rows_first_flat", columns), |bencher| {
            bencher.iter(|| sum_rows_first_flat(black_box(&flat)))
        });
        group.bench_function(BenchmarkId::new("rows_first_nested", columns), |bencher| {
            bencher.iter(|| sum_rows_first_nested(black_box(&nested)))
        });
        group.bench_function(
            BenchmarkId::new("rows_first_nested_scattered", columns),
            |bencher| bencher.iter(|| sum_rows_first_nested(black_box(&scattered))),
        );
        group.bench_function(BenchmarkId::new("columns_first_flat", columns), |bencher| {
            bencher.iter(|| sum_columns_first_flat(black_box(&flat)))
        });
        group.bench_function(
            BenchmarkId::new("columns_first_nested", columns),
            |bencher| bencher.iter(|| sum_columns_first_nested(black_box(&nested))),
        );
    }
    group.finish();
}

fn transposition(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("memory_transpose");
    // A power of two, and a neighbour that is not one.
    for side in [size(1024, 64), size(1040, 65)] {
        let input = Tensor2d::random(side, side, -1.0..=1.0, 5);
        let mut output = Tensor2d::zeros(side, side);
        group.throughput(Throughput::Elements((side * side) as u64));
        group.bench_function(BenchmarkId::new("reading_rows", side), |bencher| {
            bencher.iter(|| transpose_reading_rows(black_box(&input), &mut output))
        });
        group.bench_function(BenchmarkId::new("writing_rows", side), |bencher| {
            bencher.iter(|| transpose_writing_rows(black_box(&input), &mut output))
        });
        group.bench_function(BenchmarkId::new("blocked_32", side), |bencher| {
            bencher.iter(|| transpose_blocked(black_box(&input), &mut output, 32))
        });
    }
    group.finish();
}

/// The four ways of providing scratch space, for rows of `COLUMNS` values.
fn scratch_space<const COLUMNS: usize>(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("memory_allocation");
    let rows = size(1 << 16, 1 << 12) / COLUMNS;
    let input = Tensor2d::random(rows, COLUMNS, -1.0..=1.0, 6);
    let mut medians = vec![0.0; rows];
    let mut scratch = Vec::new();
    group.throughput(Throughput::Elements(rows as u64));
    group.bench_function(BenchmarkId::new("new_vec_per_row", COLUMNS), |bencher| {
        bencher.iter(|| row_medians_allocating(black_box(&input), &mut medians))
    });
    group.bench_function(BenchmarkId::new("reused_vec", COLUMNS), |bencher| {
        bencher.iter(|| row_medians_reusing(black_box(&input), &mut medians, &mut scratch))
    });
    group.bench_function(BenchmarkId::new("stack_array", COLUMNS), |bencher| {
        bencher.iter(|| row_medians_on_stack::<COLUMNS>(black_box(&input), &mut medians))
    });
    group.bench_function(BenchmarkId::new("new_box_per_row", COLUMNS), |bencher| {
        bencher.iter(|| row_medians_boxed::<COLUMNS>(black_box(&input), &mut medians))
    });
    group.finish();
}

fn allocation(criterion: &mut Criterion) {
    scratch_space::<4>(criterion);
    scratch_space::<1024>(criterion);
}

fn growable_arrays_and_lists(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("memory_pointers");
    let count = size(1 << 20, 1 << 12);
    group.throughput(Throughput::Elements(count as u64));
    group.bench_function("fill_by_pushing", |bencher| {
        bencher.iter(|| fill_by_pushing(black_box(count)))
    });
    group.bench_function("fill_with_capacity", |bencher| {
        bencher.iter(|| fill_with_capacity(black_box(count)))
    });
    let values = Tensor2d::random(1, count, -1.0..=1.0, 2).into_vec();
    let in_order = LinkedList::from_values(&values);
    let scattered = LinkedList::from_values_scattered(&values, 3);
    group.bench_function("sum_vec", |bencher| {
        bencher.iter(|| galaxy::cpu::sum_single_accumulator(black_box(&values)))
    });
    group.bench_function("sum_linked_list", |bencher| {
        bencher.iter(|| black_box(&in_order).sum())
    });
    group.bench_function("sum_linked_list_scattered", |bencher| {
        bencher.iter(|| black_box(&scattered).sum())
    });
    group.finish();
}

fn branch_prediction(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("memory_branch_prediction");
    let length = size(1 << 16, 1 << 12);
    let shuffled = Tensor2d::random(1, length, 0.0..=1.0, 7).into_vec();
    let mut sorted = shuffled.clone();
    sorted.sort_by(f32::total_cmp);
    let mut kept = vec![0.0; length];
    group.throughput(Throughput::Elements(length as u64));
    for (data, values) in [("shuffled", &shuffled), ("sorted", &sorted)] {
        group.bench_function(BenchmarkId::new("branching_half_kept", data), |bencher| {
            bencher.iter(|| keep_below_branching(black_box(values), 0.5, &mut kept))
        });
        group.bench_function(BenchmarkId::new("branchless_half_kept", data), |bencher| {
            bencher.iter(|| keep_below_branchless(black_box(values), 0.5, &mut kept))
        });
    }
    group.finish();
}

fn inlining(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("memory_inlining");
    // 256 KiB, in L2: the call overhead, not memory, decides.
    let length = size(1 << 16, 1 << 12);
    let mut values = Tensor2d::random(1, length, -4.0..=4.0, 8).into_vec();
    let pointer: fn(f32) -> f32 = black_box(soft_sign);
    group.throughput(Throughput::Elements(length as u64));
    group.bench_function("inlined", |bencher| {
        bencher.iter(|| apply_inlined(black_box(&mut values)))
    });
    group.bench_function("inline_never", |bencher| {
        bencher.iter(|| apply_not_inlined(black_box(&mut values)))
    });
    group.bench_function("function_pointer", |bencher| {
        bencher.iter(|| apply_through_pointer(black_box(&mut values), pointer))
    });
    group.finish();
}

fn quick_configuration() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
}

criterion_group! {
    name = memory_hierarchy;
    config = quick_configuration();
    targets = access_patterns, nested_vectors, transposition, allocation,
        growable_arrays_and_lists, branch_prediction, inlining
}
criterion_main!(memory_hierarchy);
