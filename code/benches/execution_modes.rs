//! Every execution mode on the standard workload, side by side.
//!
//! One measurement is `RUNS` runs of `random_mlp(size, depth, SEED)` on the same input,
//! with every result read back to the host: the non-loop modes run the graph `RUNS` times
//! from the host, the graph-loop modes record all `RUNS` into one submission. Divide a
//! time by `RUNS` for the time of one run.
//!
//! ```text
//! cargo bench -p galaxy --bench execution_modes                      # size 64, depth 64
//! GALAXY_BENCH_SIZE=256 cargo bench -p galaxy --bench execution_modes  # another size
//! GALAXY_BENCH_SWEEP=size cargo bench -p galaxy --bench execution_modes   # sizes 4…1024, depth 64
//! GALAXY_BENCH_SWEEP=depth cargo bench -p galaxy --bench execution_modes  # depths 4…128, size 256
//! GALAXY_BENCH_SWEEP=size cargo bench -p galaxy --bench execution_modes -- 'GraphCompiled'
//! ```
//!
//! The sweeps have no time budget: an uncached mode at size 1024 on a software rasteriser
//! takes many minutes. Filter by mode (the last argument, a regular expression on the
//! benchmark id `group/Mode/parameter`), or use `cargo xtask figures`, whose sweeps stop
//! a series once it gets too slow.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use galaxy::bench::sweeps::modes::{DEPTH_SWEEP_SIZE, DEPTHS, SEED, SIZE_SWEEP_DEPTH, SIZES};
use galaxy::gpu::GpuContext;
use galaxy::graph::random_mlp;
use galaxy::runner::ExecutionMode;

const RUNS: usize = 8;

fn standard_workload(criterion: &mut Criterion) {
    let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
    eprintln!("GPU adapter: {}", context.describe());
    let sweep = std::env::var("GALAXY_BENCH_SWEEP").unwrap_or_default();
    // (group name, parameter name, [(parameter, size, depth)])
    let (group_name, points): (String, Vec<(usize, usize, usize)>) = match sweep.as_str() {
        "size" => (
            format!("modes_by_size_depth{SIZE_SWEEP_DEPTH}_{RUNS}_runs"),
            SIZES
                .iter()
                .map(|&size| (size, size, SIZE_SWEEP_DEPTH))
                .collect(),
        ),
        "depth" => (
            format!("modes_by_depth_size{DEPTH_SWEEP_SIZE}_{RUNS}_runs"),
            DEPTHS
                .iter()
                .map(|&depth| (depth, DEPTH_SWEEP_SIZE, depth))
                .collect(),
        ),
        "" => {
            let size: usize = std::env::var("GALAXY_BENCH_SIZE")
                .ok()
                .and_then(|text| text.parse().ok())
                .unwrap_or(64);
            (
                format!("standard_workload_size{size}_depth{SIZE_SWEEP_DEPTH}_{RUNS}_runs"),
                vec![(size, size, SIZE_SWEEP_DEPTH)],
            )
        }
        other => panic!("GALAXY_BENCH_SWEEP is `size`, `depth` or unset, not `{other}`"),
    };
    let mut group = criterion.benchmark_group(group_name);
    for (parameter, size, depth) in points {
        let workload = random_mlp(size, depth, SEED).unwrap_or_else(|error| panic!("{error}"));
        for mode in ExecutionMode::ALL {
            let mut execution = mode
                .prepare(&workload.graph, Some(context))
                .unwrap_or_else(|error| panic!("{mode:?}: {error}"));
            group.bench_function(
                BenchmarkId::new(format!("{mode:?}"), parameter),
                |bencher| bencher.iter(|| execution.run(black_box(&workload.input), RUNS).unwrap()),
            );
        }
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
