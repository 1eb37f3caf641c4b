//! Every execution mode on the standard workload, by size and by depth.
//!
//! One point is one mode running `random_mlp(size, depth, SEED)` on its input: prepared
//! once (not timed), then timed run after run, each run uploading the input, computing
//! every layer and reading the output back. The graph-loop modes record several runs into
//! one submission when a sample holds several runs; the time is still per run.

use crate::bench::figure::Figure;
use crate::bench::sweeps::timing::{Budget, Measurement, SeriesLimit, measure};
use crate::bench::sweeps::{
    Progress, SweepError, SweepSettings, measure_point, milliseconds, push_repeats,
};
use crate::gpu::GpuContext;
use crate::graph::{Workload, random_mlp};
use crate::runner::ExecutionMode;
use crate::tensor::Tensor2d;

/// The sizes of the size sweep.
pub const SIZES: [usize; 9] = [4, 8, 16, 32, 64, 128, 256, 512, 1024];
/// The depth of the size sweep.
pub const SIZE_SWEEP_DEPTH: usize = 64;
/// The depths of the depth sweep.
pub const DEPTHS: [usize; 6] = [4, 8, 16, 32, 64, 128];
/// The size of the depth sweep.
pub const DEPTH_SWEEP_SIZE: usize = 256;
/// The seed of every workload the sweeps and the report run.
pub const SEED: u64 = 2026;

const Y_AXIS: (&str, bool) = ("time per run (ms), upload and readback included", true);

/// `modes-by-size-…`: time per run against size, at a fixed depth.
pub fn modes_by_size(
    id: String,
    sizes: &[usize],
    depth: usize,
    settings: &SweepSettings,
    context: &GpuContext,
    progress: &mut dyn Progress,
) -> Result<Figure, SweepError> {
    let figure = settings.figure(
        id,
        &format!("Execution modes on the standard workload by size (depth {depth})"),
        ("size (input rows = layer width)", true),
        Y_AXIS,
        Some(context),
    );
    let points = sizes.iter().map(|&size| (size as f64, size, depth));
    sweep_modes(figure, points, settings, context, progress)
}

/// `modes-by-depth-…`: time per run against depth, at a fixed size.
pub fn modes_by_depth(
    id: String,
    size: usize,
    depths: &[usize],
    settings: &SweepSettings,
    context: &GpuContext,
    progress: &mut dyn Progress,
) -> Result<Figure, SweepError> {
    let figure = settings.figure(
        id,
        &format!("Execution modes on the standard workload by depth (size {size})"),
        ("depth (linear layers)", true),
        Y_AXIS,
        Some(context),
    );
    let points = depths.iter().map(|&depth| (depth as f64, size, depth));
    sweep_modes(figure, points, settings, context, progress)
}

/// Measures every mode at every `(x, size, depth)`, stopping each mode's series when the
/// budget says so. With repeats, the modes take turns at each point (every mode once, then
/// every mode again), each repeat preparing its mode afresh.
fn sweep_modes(
    mut figure: Figure,
    points: impl ExactSizeIterator<Item = (f64, usize, usize)>,
    settings: &SweepSettings,
    context: &GpuContext,
    progress: &mut dyn Progress,
) -> Result<Figure, SweepError> {
    let modes = ExecutionMode::ALL;
    progress.begin(&figure.id, points.len() * modes.len());
    let mut limits = vec![SeriesLimit::default(); modes.len()];
    for (x, size, depth) in points {
        let wanted: Vec<bool> = limits
            .iter()
            .map(|limit| limit.allows_next(&settings.budget))
            .collect();
        // Generating the workload costs time and memory at large sizes: only do it when
        // some mode still wants the point.
        let measured = if wanted.contains(&true) {
            let workload = random_mlp(size, depth, SEED)?;
            measure_point(settings, &mut limits, &wanted, |mode, budget| {
                time_mode(modes[mode], &workload, Some(context), budget)
            })?
        } else {
            vec![Vec::new(); modes.len()]
        };
        for (mode, measurements) in modes.iter().zip(measured) {
            let times = measurements
                .iter()
                .map(|measurement| milliseconds(measurement.seconds_per_run))
                .collect();
            push_repeats(&mut figure, &format!("{mode:?}"), x, times);
            progress.advance(&format!("{mode:?}, size {size}, depth {depth}"));
        }
        progress.partial(&figure);
    }
    Ok(figure)
}

// ANCHOR: time_mode
/// Prepares `workload` for `mode` (not timed) and measures one run: upload, compute,
/// readback. The last output of every sample is checked to be finite, so a broken mode
/// cannot look fast.
pub fn time_mode(
    mode: ExecutionMode,
    workload: &Workload,
    context: Option<&GpuContext>,
    budget: &Budget,
) -> Result<Measurement, SweepError> {
    let what = || {
        let (rows, columns) = workload.input.shape();
        format!("{mode:?} on the standard workload with a {rows}×{columns} input")
    };
    let run_error = |source| SweepError::Run {
        what: what(),
        source: Box::new(source),
    };
    let mut execution = mode.prepare(&workload.graph, context).map_err(run_error)?;
    let check = |outputs: &[Tensor2d]| {
        let finite = outputs
            .iter()
            .all(|output| output.as_slice().iter().all(|value| value.is_finite()));
        if finite {
            Ok(())
        } else {
            Err(SweepError::NotFinite { what: what() })
        }
    };
    measure(budget, |runs| {
        if mode.loops_on_the_gpu() {
            // All the runs in one submission: they come back together.
            return check(&execution.run(&workload.input, runs).map_err(run_error)?);
        }
        // One run at a time, each result dropped before the next run, as a program that
        // uses its results would do. Keeping them all until the end would make every run
        // write into freshly allocated memory, and the page faults of that memory (64 per
        // run of a 256 × 256 result) would be timed with it. The last result of every
        // sample is checked: enough to catch a broken mode, without adding a pass over
        // every output to every run, which the anchors (NumPy, ONNX Runtime) do not pay.
        for run in 0..runs {
            let outputs = execution.run(&workload.input, 1).map_err(run_error)?;
            if run + 1 == runs {
                check(&outputs)?;
            }
        }
        Ok(())
    })
}
// ANCHOR_END: time_mode

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::sweeps::Silent;

    /// The smallest budget that still measures: these tests check the plumbing, not the
    /// numbers.

    #[test]
    fn a_tiny_size_sweep_gives_every_mode_a_finite_positive_time() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let figure = modes_by_size(
            "modes-by-size-test".to_string(),
            &[4, 8],
            2,
            &SweepSettings::single_sample_for_tests(),
            context,
            &mut Silent,
        )
        .unwrap();
        let names: Vec<String> = figure.series.iter().map(|s| s.name.clone()).collect();
        let expected: Vec<String> = ExecutionMode::ALL
            .iter()
            .map(|mode| format!("{mode:?}"))
            .collect();
        assert_eq!(names, expected);
        for series in &figure.series {
            let xs: Vec<f64> = series.points.iter().map(|point| point.x).collect();
            assert_eq!(xs, [4.0, 8.0], "{}", series.name);
            for point in &series.points {
                assert!(
                    point.y.is_finite() && point.y > 0.0,
                    "{}: {point:?}",
                    series.name
                );
            }
        }
        assert!(figure.hardware.contains("GPU"), "{}", figure.hardware);
    }

    #[test]
    fn a_tiny_depth_sweep_puts_depths_on_the_x_axis() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let settings = SweepSettings::single_sample_for_tests();
        let figure = modes_by_depth(
            "modes-by-depth-test".to_string(),
            3,
            &[1, 2],
            &settings,
            context,
            &mut Silent,
        )
        .unwrap();
        assert_eq!(figure.series.len(), ExecutionMode::ALL.len());
        assert!(figure.series.iter().all(|series| series.points.len() == 2));
        assert_eq!(figure.series[0].points[1].x, 2.0);
    }

    #[test]
    fn repeats_give_every_point_a_median_and_a_range() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let settings = SweepSettings {
            repeats: 3,
            ..SweepSettings::single_sample_for_tests()
        };
        let figure = modes_by_size(
            "modes-repeats-test".to_string(),
            &[4],
            1,
            &settings,
            context,
            &mut Silent,
        )
        .unwrap();
        assert_eq!(figure.series.len(), ExecutionMode::ALL.len());
        for series in &figure.series {
            let spread = series.spreads[0].expect("three repeats have a range");
            let y = series.points[0].y;
            assert!(
                spread.minimum > 0.0 && spread.minimum <= y && y <= spread.maximum,
                "{}: {y} outside {spread:?}",
                series.name
            );
        }
        assert!(figure.to_csv().contains("series,x,y,y_min,y_max"));
    }

    #[test]
    fn a_series_over_budget_ends_early() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        // A budget no run can meet: every mode gets exactly one point, then stops.
        let settings = SweepSettings {
            budget: Budget {
                seconds_per_run: 0.0,
                ..SweepSettings::single_sample_for_tests().budget
            },
            ..SweepSettings::single_sample_for_tests()
        };
        let figure = modes_by_size(
            "over-budget".to_string(),
            &[2, 3],
            1,
            &settings,
            context,
            &mut Silent,
        )
        .unwrap();
        assert!(figure.series.iter().all(|series| series.points.len() == 1));
    }
}
