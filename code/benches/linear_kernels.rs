//! The GPU linear kernels side by side, in GFLOP/s, on square layers of 1024, 2048 and 4096.
//!
//! Every kernel is checked against the CPU before it is timed (see
//! `galaxy::bench::linear_throughput`). One criterion iteration is one dispatch; the
//! iterations of a sample are recorded back to back into one compute pass and one
//! submission, so the time per iteration is the kernel's, without uploads or readbacks.
//! Criterion reports the throughput in "elements" per second: each element is one
//! floating-point operation (`2·n³` per layer), so Gelem/s reads as GFLOP/s.
//!
//! Before the kernels, the device's measured fp32 peak is printed for comparison.
//!
//! `cargo bench -p galaxy --bench linear_kernels`
//! `GALAXY_LINEAR_SIZES=256,512 cargo bench -p galaxy --bench linear_kernels` for other sizes;
//! `GALAXY_LINEAR_STRATEGIES=all` times every configuration the device can run instead of
//! the four below (a long run).

use std::time::Duration;

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use galaxy::bench::gpu_peak::{PeakSettings, gpu_peak};
use galaxy::bench::linear_throughput::LinearBenchmark;
use galaxy::compiler::LinearStrategy;
use galaxy::compiler::register_blocked_linear::RegisterBlockedConfig;
use galaxy::gpu::GpuContext;

const DEFAULT_SIZES: [usize; 3] = [1024, 2048, 4096];

fn sizes() -> Vec<usize> {
    std::env::var("GALAXY_LINEAR_SIZES")
        .ok()
        .map(|text| {
            text.split(',')
                .map(|size| {
                    size.trim()
                        .parse()
                        .unwrap_or_else(|_| panic!("not a size: {size:?}"))
                })
                .collect()
        })
        .unwrap_or_else(|| DEFAULT_SIZES.to_vec())
}

/// The naive kernel, the tiled one, the register-blocked one the chooser picks for this
/// size, and the largest register-blocked configuration.
fn strategies(context: &GpuContext, size: usize) -> Vec<LinearStrategy> {
    if std::env::var("GALAXY_LINEAR_STRATEGIES").is_ok_and(|value| value == "all") {
        return LinearStrategy::candidates(context);
    }
    let mut strategies = vec![LinearStrategy::Naive, LinearStrategy::Tiled { edge: 16 }];
    let chosen = LinearStrategy::for_shape(context, size, size, size)
        .unwrap_or_else(|error| panic!("{error}"));
    let largest = LinearStrategy::RegisterBlocked(RegisterBlockedConfig::new(128, 128, 8, 8, 8));
    strategies.push(chosen);
    if largest != chosen && largest.check(context, size, size).is_ok() {
        strategies.push(largest);
    }
    strategies
}

fn linear_kernels(criterion: &mut Criterion) {
    let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
    eprintln!("GPU adapter: {}", context.describe());
    let peak_settings = if context.adapter_info().device_type == wgpu::DeviceType::Cpu {
        PeakSettings::SMALL
    } else {
        PeakSettings::LARGE_GPU
    };
    match gpu_peak(context, peak_settings) {
        Ok(peak) => eprintln!(
            "measured fp32 peak: {:.1} GFLOP/s ({:?})",
            peak.gigaflops_per_second, peak_settings
        ),
        Err(error) => panic!("the peak measurement failed: {error}"),
    }
    for size in sizes() {
        let mut group = criterion.benchmark_group(format!("gpu_linear_{size}"));
        group.throughput(Throughput::Elements(2 * (size as u64).pow(3)));
        // The same number of dispatches in every sample: the naive kernel needs a large
        // part of a second per 4096³ layer even on a large GPU, and criterion's default
        // (linear) sampling would run it 55 times.
        group.sampling_mode(SamplingMode::Flat);
        for strategy in strategies(context, size) {
            let benchmark = LinearBenchmark::prepare(context, strategy, (size, size, size), 7)
                .unwrap_or_else(|error| panic!("{strategy}: {error}"));
            benchmark
                .check()
                .unwrap_or_else(|error| panic!("{strategy} at {size}: {error}"));
            group.bench_function(BenchmarkId::from_parameter(strategy), |bencher| {
                bencher.iter_custom(|dispatches| {
                    let seconds = benchmark
                        .time(dispatches as usize)
                        .unwrap_or_else(|error| panic!("{strategy}: {error}"));
                    Duration::from_secs_f64(seconds)
                })
            });
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = linear_kernels
}
criterion_main!(benches);
