//! The time breakdown on devices with and without timestamp queries: where the device
//! cannot time, the breakdown says so instead of reporting zeros; where it can, every
//! graph run's parts add up.

use galaxy::bench::time_breakdown::measure_breakdown;
use galaxy::gpu::probe::HostPhase;
use galaxy::gpu::{ContextOptions, GpuContext, TimestampSupport};
use galaxy::graph::random_mlp;
use galaxy::runner::ExecutionMode;

/// A second device on the same adapter, created with only the features asked for.
fn context_with(features: wgpu::Features) -> GpuContext {
    let options = ContextOptions {
        required_features: Some(features),
        ..ContextOptions::from_environment()
    };
    GpuContext::with_options(&options).unwrap_or_else(|error| panic!("{error}"))
}

#[test]
fn without_timestamp_queries_the_breakdown_says_the_gpu_was_not_timed() {
    let context = context_with(wgpu::Features::empty());
    assert_eq!(TimestampSupport::of(&context), TimestampSupport::None);
    let workload = random_mlp(8, 2, 4).unwrap();
    for mode in [
        ExecutionMode::GraphCachedFused,
        ExecutionMode::GraphCompiled,
    ] {
        let breakdown = measure_breakdown(mode, &workload, &context, 2).unwrap();
        assert_eq!(breakdown.gpu, None, "{breakdown:?}");
        assert_eq!(breakdown.support, TimestampSupport::None);
        let summary = breakdown.summary();
        assert!(summary.contains("GPU not timed"), "{summary}");
        assert!(!summary.contains("GPU kernels"), "{summary}");
        // The host's clock still splits the run.
        assert!(
            breakdown.host_time(HostPhase::Waiting) > 0.0,
            "{breakdown:?}"
        );
        assert!(breakdown.host.iter().sum::<f64>() <= breakdown.wall);
    }
    let sentence = TimestampSupport::None.describe();
    assert!(sentence.contains("TIMESTAMP_QUERY"), "{sentence}");
}

#[test]
fn with_pass_timestamps_only_each_pass_is_timed_as_a_whole() {
    let shared = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
    if !shared
        .device()
        .features()
        .contains(wgpu::Features::TIMESTAMP_QUERY)
    {
        return;
    }
    let context = context_with(wgpu::Features::TIMESTAMP_QUERY);
    assert_eq!(
        TimestampSupport::of(&context),
        TimestampSupport::PassBoundaries
    );
    // Unfused, cached: the whole run is one compute pass of several dispatches.
    let workload = random_mlp(8, 3, 4).unwrap();
    let breakdown = measure_breakdown(ExecutionMode::GraphCached, &workload, &context, 2).unwrap();
    let gpu = breakdown.gpu.as_ref().expect("pass boundaries are timed");
    assert_eq!(gpu.timed_passes, 1, "{gpu:?}");
    assert_eq!(gpu.timed_dispatches, 0, "{gpu:?}");
    assert!(gpu.kernels > 0.0, "{gpu:?}");
    // Without timestamps between commands the submissions' spans are unknown, not zero.
    assert_eq!(gpu.submissions, None, "{gpu:?}");
    assert!(
        breakdown.summary().contains("1 whole passes"),
        "{}",
        breakdown.summary()
    );
}
