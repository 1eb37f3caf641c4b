//! `gpu-copy-bandwidth-…`: device-to-device copy bandwidth by buffer size, through
//! `copy_buffer_to_buffer` and through a compute shader.
//!
//! Each point allocates a source and a destination of one size, checks one copy word by
//! word, then times copies recorded back to back into one submission
//! ([`CopyBenchmark::time`]); the rate counts the bytes read plus the bytes written. The
//! figure's title names the clock: GPU timestamps where the device has them, the wall
//! clock otherwise. See [`crate::bench::copy_bandwidth`] for the method.

use crate::bench::copy_bandwidth::{
    CopyBenchmark, CopyError, CopyMethod, TimingClock, gigabytes_per_second,
};
use crate::bench::figure::Figure;
use crate::bench::sweeps::timing::{SeriesLimit, measure_timed};
use crate::bench::sweeps::{Progress, SweepError, SweepSettings, measure_point, push_repeats};
use crate::gpu::GpuContext;

/// Measures both methods at every size the device allows them.
pub fn sweep(
    id: String,
    sizes: &[u64],
    settings: &SweepSettings,
    context: &GpuContext,
    progress: &mut dyn Progress,
) -> Result<Figure, SweepError> {
    let clock = TimingClock::for_device(context);
    let mut figure = settings.figure(
        id,
        &format!(
            "Device-to-device copy bandwidth by buffer size (bytes read + bytes written; {})",
            clock.describe()
        ),
        ("buffer size (bytes)", true),
        ("bandwidth (GB/s)", true),
        Some(context),
    );
    let methods = CopyMethod::ALL;
    progress.begin(&figure.id, sizes.len() * methods.len());
    let mut limits = vec![SeriesLimit::default(); methods.len()];
    for &bytes in sizes {
        let wanted: Vec<bool> = methods
            .iter()
            .zip(&limits)
            .map(|(method, limit)| {
                bytes <= method.largest_buffer(context) && limit.allows_next(&settings.budget)
            })
            .collect();
        // Both methods' buffers stay allocated while they take turns.
        let mut benchmarks = Vec::with_capacity(methods.len());
        for (&method, &wanted) in methods.iter().zip(&wanted) {
            benchmarks.push(if wanted {
                Some(prepared(context, method, bytes)?)
            } else {
                None
            });
        }
        let measured = measure_point(settings, &mut limits, &wanted, |index, budget| {
            let benchmark = benchmarks[index]
                .as_ref()
                .expect("only prepared methods are wanted");
            measure_timed(budget, |copies| benchmark.time(copies))
                .map_err(|error| copy_error(methods[index], bytes, error))
        })?;
        for (method, measurements) in methods.iter().zip(measured) {
            let rates = measurements
                .iter()
                .map(|m| gigabytes_per_second(bytes, m.seconds_per_run))
                .collect();
            push_repeats(&mut figure, method.name(), bytes as f64, rates);
            progress.advance(&format!("{}, {bytes} bytes", method.name()));
        }
        progress.partial(&figure);
    }
    Ok(figure)
}

/// A benchmark of `method` on buffers of `bytes`, its copy checked.
fn prepared(
    context: &GpuContext,
    method: CopyMethod,
    bytes: u64,
) -> Result<CopyBenchmark<'_>, SweepError> {
    let benchmark = CopyBenchmark::prepare(context, method, bytes)
        .map_err(|error| copy_error(method, bytes, error))?;
    benchmark
        .check()
        .map_err(|error| copy_error(method, bytes, error))?;
    Ok(benchmark)
}

fn copy_error(method: CopyMethod, bytes: u64, error: CopyError) -> SweepError {
    SweepError::Copy {
        what: format!("copying {bytes} bytes with {}", method.name()),
        source: Box::new(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::sweeps::Silent;

    #[test]
    fn a_tiny_copy_sweep_gives_both_methods_a_positive_bandwidth() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let settings = SweepSettings {
            repeats: 2,
            ..SweepSettings::single_sample_for_tests()
        };
        let figure = sweep(
            "gpu-copy-bandwidth-test".to_string(),
            &[64 << 10, 256 << 10],
            &settings,
            context,
            &mut Silent,
        )
        .unwrap();
        let names: Vec<&str> = figure.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["copy_buffer_to_buffer", "compute-shader copy (copy.wgsl)"]
        );
        for series in &figure.series {
            let xs: Vec<f64> = series.points.iter().map(|p| p.x).collect();
            assert_eq!(xs, [65536.0, 262144.0], "{}", series.name);
            for (point, spread) in series.points.iter().zip(&series.spreads) {
                let spread = spread.expect("two repeats have a range");
                assert!(
                    point.y.is_finite() && spread.minimum > 0.0,
                    "{}: {point:?} {spread:?}",
                    series.name
                );
            }
        }
        let clock = TimingClock::for_device(context).describe();
        assert!(figure.title.contains(clock), "{}", figure.title);
    }
}
