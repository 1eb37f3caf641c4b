//! The hot-loop pairs of module 5 under criterion: each group times one kind of work done
//! per frame in the loop, against the same loop with that work hoisted out. 1024 frames of
//! 256 samples per measured call.
//!
//! Run with `cargo bench -p galaxy --bench hot_loop`; `cargo test` runs each once. The
//! sweep over frame lengths that draws the figures is the example `hot_loop_costs`.

use std::fs::{File, OpenOptions};
use std::hint::black_box;
use std::io::{BufWriter, LineWriter};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use galaxy::realtime::allocation::{SmoothedPeak, smoothed_peak_allocating};
use galaxy::realtime::logging::{count_then_log_once, log_every_frame};
use galaxy::realtime::system_calls::{
    process_until_stop_file_checking_every, process_until_stop_file_checking_every_frame,
    sums_timing_every_frame, sums_untimed, write_sums_every_frame, write_sums_once,
};
use galaxy::realtime::validation::{weighted_sum_checking_inside, weighted_sum_validated_first};

const FRAME_LENGTH: usize = 256;
const FRAMES: usize = 1024;

fn samples() -> Vec<f32> {
    (0..FRAME_LENGTH * FRAMES)
        .map(|index| ((index * 37) % 101) as f32 / 50.0 - 1.0)
        .collect()
}

fn null() -> File {
    OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .expect("the benchmark writes to /dev/null, which must exist and be writable")
}

fn per_frame(criterion: &mut Criterion) {
    let samples = samples();
    let stop_file = std::env::temp_dir().join("galaxy-hot-loop-bench-stop-never-created");
    let mut group = criterion.benchmark_group("hot_loop_per_frame");
    group.throughput(Throughput::Elements(FRAMES as u64));

    group.bench_function("allocate every frame", |bencher| {
        bencher.iter(|| {
            for frame in samples.chunks_exact(FRAME_LENGTH) {
                black_box(smoothed_peak_allocating(black_box(frame)));
            }
        })
    });
    let mut reusing = SmoothedPeak::with_frame_length(FRAME_LENGTH);
    group.bench_function("reuse one buffer", |bencher| {
        bencher.iter(|| {
            for frame in samples.chunks_exact(FRAME_LENGTH) {
                black_box(reusing.peak(black_box(frame)));
            }
        })
    });
    group.bench_function("metadata every frame", |bencher| {
        bencher.iter(|| {
            process_until_stop_file_checking_every_frame(
                black_box(&samples),
                FRAME_LENGTH,
                &stop_file,
            )
        })
    });
    group.bench_function("metadata every 100 frames", |bencher| {
        bencher.iter(|| {
            process_until_stop_file_checking_every(
                black_box(&samples),
                FRAME_LENGTH,
                &stop_file,
                100,
            )
        })
    });
    let mut file = null();
    group.bench_function("write every frame", |bencher| {
        bencher.iter(|| write_sums_every_frame(&mut file, black_box(&samples), FRAME_LENGTH))
    });
    group.bench_function("one write for all frames", |bencher| {
        bencher.iter(|| write_sums_once(&mut file, black_box(&samples), FRAME_LENGTH))
    });
    group.bench_function("clock read twice a frame", |bencher| {
        bencher.iter(|| sums_timing_every_frame(black_box(&samples), FRAME_LENGTH))
    });
    group.bench_function("no clock", |bencher| {
        bencher.iter(|| sums_untimed(black_box(&samples), FRAME_LENGTH))
    });
    let mut line_writer = LineWriter::new(null());
    group.bench_function("a line per frame, LineWriter", |bencher| {
        bencher.iter(|| log_every_frame(&mut line_writer, black_box(&samples), FRAME_LENGTH, 0.5))
    });
    let mut buffered = BufWriter::new(null());
    group.bench_function("a line per frame, BufWriter", |bencher| {
        bencher.iter(|| log_every_frame(&mut buffered, black_box(&samples), FRAME_LENGTH, 0.5))
    });
    let mut once = null();
    group.bench_function("count, one line at the end", |bencher| {
        bencher.iter(|| count_then_log_once(&mut once, black_box(&samples), FRAME_LENGTH, 0.5))
    });
    group.finish();
}

fn per_sample(criterion: &mut Criterion) {
    let samples = samples();
    let weights: Vec<f32> = (0..FRAME_LENGTH).map(|index| (index % 17) as f32).collect();
    let mut group = criterion.benchmark_group("hot_loop_validation");
    group.throughput(Throughput::Elements(samples.len() as u64));
    group.bench_function("checks inside the loop", |bencher| {
        bencher.iter(|| {
            for frame in samples.chunks_exact(FRAME_LENGTH) {
                let _ = black_box(weighted_sum_checking_inside(black_box(frame), &weights));
            }
        })
    });
    group.bench_function("validated first", |bencher| {
        bencher.iter(|| {
            for frame in samples.chunks_exact(FRAME_LENGTH) {
                let _ = black_box(weighted_sum_validated_first(black_box(frame), &weights));
            }
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = per_frame, per_sample
}
criterion_main!(benches);
