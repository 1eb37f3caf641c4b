//! Benchmarks of every measured idiom of module 0 (`galaxy::rust_basics`): indexed loops
//! against iterators, bounds checks, a clone in a loop against a borrow, `Rc` against
//! `Arc`, and generic, enum and trait-object dispatch.
//!
//! Run with `cargo bench -p galaxy --bench rust_basics`. Each group compares variants that
//! compute the same result at one size that fits in the L1 or L2 cache, where the
//! differences are largest; the examples `rust_loops`, `clone_or_borrow` and `dispatch`
//! sweep the sizes for the figures.

use std::hint::black_box;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use galaxy::rust_basics::bounds_checks::{
    dot_in_lanes_indexed, dot_in_lanes_sliced, scale_and_add_indexed, scale_and_add_resliced,
};
use galaxy::rust_basics::clones::{scores_borrowing, scores_cloning};
use galaxy::rust_basics::dispatch::{
    ActivationKind, Relu, apply_dynamic, apply_dynamic_per_slice, apply_enum, apply_generic,
};
use galaxy::rust_basics::iterators::{dot_in_lanes, dot_in_order, scale_and_add_zipped};
use galaxy::rust_basics::shared_counts::{
    clone_and_drop_arc, clone_and_drop_arc_on_threads, clone_and_drop_rc,
};

/// 4096 `f32`: 16 KiB per array, in L1 on any current core.
const LENGTH: usize = 4096;

fn loops(criterion: &mut Criterion) {
    let input: Vec<f32> = (0..LENGTH).map(|index| (index % 7) as f32 - 3.0).collect();
    let mut output: Vec<f32> = (0..LENGTH).map(|index| (index % 5) as f32).collect();
    let mut group = criterion.benchmark_group("rust_axpy_16KiB");
    group.throughput(Throughput::Elements(LENGTH as u64));
    group.bench_function("indexed", |bencher| {
        bencher.iter(|| scale_and_add_indexed(black_box(1e-7), &input, &mut output))
    });
    group.bench_function("indexed_resliced", |bencher| {
        bencher.iter(|| scale_and_add_resliced(black_box(1e-7), &input, &mut output))
    });
    group.bench_function("iterator_zip", |bencher| {
        bencher.iter(|| scale_and_add_zipped(black_box(1e-7), &input, &mut output))
    });
    group.finish();

    let mut group = criterion.benchmark_group("rust_dot_16KiB");
    group.throughput(Throughput::Elements(LENGTH as u64));
    type Dot = fn(&[f32], &[f32]) -> f32;
    let variants: [(&str, Dot); 4] = [
        ("in_order", dot_in_order),
        ("lanes_indexed", dot_in_lanes_indexed),
        ("lanes_sliced", dot_in_lanes_sliced),
        ("lanes_chunks_exact", dot_in_lanes),
    ];
    for (name, kernel) in variants {
        group.bench_function(name, |bencher| {
            bencher.iter(|| kernel(black_box(&input), black_box(&output)))
        });
    }
    group.finish();
}

fn clones(criterion: &mut Criterion) {
    // 64 rows of 1024 weights: 256 KiB of rows, 4 KiB of weights.
    let rows: Vec<Vec<f32>> = (0..64)
        .map(|row| {
            (0..1024)
                .map(|column| ((row + column) % 9) as f32)
                .collect()
        })
        .collect();
    let weights: Vec<f32> = (0..1024).map(|column| (column % 4) as f32).collect();
    let mut group = criterion.benchmark_group("rust_clone_or_borrow_64x4KiB");
    group.throughput(Throughput::Elements(64 * 1024));
    group.bench_function("clone_in_the_loop", |bencher| {
        bencher.iter(|| scores_cloning(black_box(&rows), black_box(&weights)))
    });
    group.bench_function("borrow", |bencher| {
        bencher.iter(|| scores_borrowing(black_box(&rows), black_box(&weights)))
    });
    group.finish();

    let mut group = criterion.benchmark_group("rust_shared_owner_clone_and_drop");
    group.throughput(Throughput::Elements(1000));
    let rc = Rc::new(vec![0.0f32; 16]);
    let arc = Arc::new(vec![0.0f32; 16]);
    group.bench_function("rc", |bencher| {
        bencher.iter(|| clone_and_drop_rc(&rc, 1000))
    });
    group.bench_function("arc", |bencher| {
        bencher.iter(|| clone_and_drop_arc(&arc, 1000))
    });
    // Two threads, 100 000 clones each; the time includes starting the threads (tens of
    // microseconds), the same for both variants.
    group.throughput(Throughput::Elements(200_000));
    for (name, share_one) in [
        ("arc_two_threads_own", false),
        ("arc_two_threads_shared", true),
    ] {
        group.bench_function(name, |bencher| {
            bencher.iter_custom(|iterations| {
                let start = Instant::now();
                for _ in 0..iterations {
                    black_box(clone_and_drop_arc_on_threads(2, 100_000, share_one));
                }
                start.elapsed()
            })
        });
    }
    group.finish();
}

fn dispatch(criterion: &mut Criterion) {
    let mut values: Vec<f32> = (0..LENGTH)
        .map(|index| if index % 2 == 0 { 1.0 } else { -1.0 })
        .collect();
    let mut group = criterion.benchmark_group("rust_dispatch_relu_16KiB");
    group.throughput(Throughput::Elements(LENGTH as u64));
    group.bench_function("generic", |bencher| {
        bencher.iter(|| apply_generic(black_box(&Relu), &mut values))
    });
    group.bench_function("enum", |bencher| {
        bencher.iter(|| apply_enum(black_box(ActivationKind::Relu), &mut values))
    });
    group.bench_function("dyn_per_value", |bencher| {
        bencher.iter(|| apply_dynamic(black_box(&Relu), &mut values))
    });
    group.bench_function("dyn_per_slice", |bencher| {
        bencher.iter(|| apply_dynamic_per_slice(black_box(&Relu), &mut values))
    });
    group.finish();
}

fn quick_configuration() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
}

criterion_group! {
    name = rust_basics;
    config = quick_configuration();
    targets = loops, clones, dispatch
}
criterion_main!(rust_basics);
