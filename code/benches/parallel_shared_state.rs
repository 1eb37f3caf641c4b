//! Threads and shared state: one shared counter, a histogram, per-thread counters with and
//! without false sharing, and a channel pipeline, for the chapter "Threads and shared state".
//!
//! Run with `cargo bench -p galaxy --bench parallel_shared_state`. Every group runs on as
//! many threads as the machine has cores (at least two, so that there is something to
//! share); the figures' sweep over thread counts is the example `threads_shared_state`.
//! `cargo test` runs each benchmark once, on small inputs, so a broken one fails the tests.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use galaxy::parallel::channels::{ChannelKind, run_pipeline};
use galaxy::parallel::false_sharing::{CounterLayout, count_per_thread};
use galaxy::parallel::histogram::{HistogramStrategy, histogram, random_bin_values};
use galaxy::parallel::shared_counter::{CounterStrategy, count_below};
use galaxy::parallel::threads::random_values;

const ITEMS: usize = 1 << 20;

fn threads() -> usize {
    galaxy::bench::hardware::core_count().max(2)
}

fn shared_counter(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("parallel_shared_counter");
    group.throughput(Throughput::Elements(ITEMS as u64));
    let values = random_values(ITEMS, 1000, 1);
    let threads = threads();
    for strategy in CounterStrategy::ALL {
        group.bench_function(BenchmarkId::new(strategy.name(), threads), |bencher| {
            bencher.iter(|| count_below(black_box(&values), 1000, threads, strategy))
        });
    }
    group.finish();
}

fn histograms(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("parallel_histogram_256_bins");
    group.throughput(Throughput::Elements(ITEMS as u64));
    let values = random_bin_values(ITEMS, 256, 2);
    let threads = threads();
    for strategy in HistogramStrategy::ALL {
        group.bench_function(BenchmarkId::new(strategy.name(), threads), |bencher| {
            bencher.iter(|| histogram(black_box(&values), 256, threads, strategy))
        });
    }
    group.finish();
}

fn false_sharing(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("parallel_false_sharing");
    let threads = threads();
    let increments = 1u64 << 18;
    group.throughput(Throughput::Elements(increments * threads as u64));
    for layout in CounterLayout::ALL {
        group.bench_function(BenchmarkId::new(layout.name(), threads), |bencher| {
            bencher.iter(|| count_per_thread(threads, black_box(increments), layout))
        });
    }
    group.finish();
}

fn channels(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("parallel_channels");
    let items = 1u64 << 16;
    group.throughput(Throughput::Elements(items));
    for kind in [
        ChannelKind::StandardUnbounded,
        ChannelKind::CrossbeamBounded { capacity: 64 },
    ] {
        for batch in [1usize, 256] {
            group.bench_function(BenchmarkId::new(kind.name(), batch), |bencher| {
                bencher.iter(|| run_pipeline(black_box(items), batch, kind))
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    targets = shared_counter, histograms, false_sharing, channels
}
criterion_main!(benches);
