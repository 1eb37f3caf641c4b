//! Every execution mode on the standard workload, side by side.
//!
//! One measurement is `RUNS` runs of `random_mlp(size, 64, seed)` on the same input, with
//! every result read back to the host: the non-loop modes run the graph `RUNS` times from
//! the host, the graph-loop modes record all `RUNS` into one submission. Divide a time by
//! `RUNS` for the time of one run.
//!
//! `cargo bench -p galaxy --bench execution_modes` (size 64);
//! `GALAXY_BENCH_SIZE=256 cargo bench -p galaxy --bench execution_modes` for another size.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use galaxy::gpu::GpuContext;
use galaxy::graph::random_mlp;
use galaxy::runner::ExecutionMode;

const RUNS: usize = 8;
const DEPTH: usize = 64;

fn standard_workload(criterion: &mut Criterion) {
    let size: usize = std::env::var("GALAXY_BENCH_SIZE")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(64);
    let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
    eprintln!("GPU adapter: {}", context.describe());
    let workload = random_mlp(size, DEPTH, 2026).unwrap_or_else(|error| panic!("{error}"));
    let mut group = criterion.benchmark_group(format!(
        "standard_workload_size{size}_depth{DEPTH}_{RUNS}_runs"
    ));
    for mode in ExecutionMode::ALL {
        let mut execution = mode
            .prepare(&workload.graph, Some(context))
            .unwrap_or_else(|error| panic!("{mode:?}: {error}"));
        group.bench_function(
            BenchmarkId::from_parameter(format!("{mode:?}")),
            |bencher| bencher.iter(|| execution.run(black_box(&workload.input), RUNS).unwrap()),
        );
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    targets = standard_workload
}
criterion_main!(benches);
