//! Where the time of one run goes, mode by mode.
//!
//! A run of a GPU mode is measured twice over. The host's clock, through the probe
//! ([`crate::gpu::probe`]), splits the run's wall time into what the host was doing:
//! encoding (writing the input, binding, recording commands), submitting, waiting for the
//! GPU, mapping the staging buffer, and copying the result out. The GPU's clock, through
//! timestamp queries ([`crate::gpu::timestamps`]), says how long the kernels themselves
//! ran and how long each submission took from its first command to its last (copies
//! included). The GPU works while the host waits, so the GPU's times are not a slice of
//! the wall time but a measure of how much of the waiting was work.
//!
//! Each mode is prepared (not timed), run a few times to warm up, run several times
//! without the probe (their median is what a run costs unobserved), then as many times
//! with the probe; the breakdown shown is that of the probed run with the median wall
//! time, so its parts add up to its own total.

use std::time::Instant;

use crate::bench::sweeps::SweepError;
use crate::gpu::probe::{self, HostPhase, Mark, ProbeRecord};
use crate::gpu::{GpuContext, TimestampQueries, TimestampSupport};
use crate::graph::Workload;
use crate::runner::ExecutionMode;

/// Runs before the measured ones: pipelines, caches and the driver settle.
pub const WARM_UP_RUNS: usize = 2;

/// Timestamps one run may write; wgpu allows at most 4096 per query set.
const TIMESTAMPS_PER_RUN: u32 = 4096;

// ANCHOR: gpu_time
/// What the GPU's clock measured during one run.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuTime {
    /// Seconds the kernels ran: the sum of every dispatch's time where each was timed,
    /// else of every compute pass's.
    pub kernels: f64,
    /// Dispatches timed one by one.
    pub timed_dispatches: usize,
    /// Passes of several dispatches timed only as a whole.
    pub timed_passes: usize,
    /// Seconds from each submission's first command to its last, summed: the kernels,
    /// the copies, and the gaps between them. `None` where the device cannot write
    /// timestamps between the commands of an encoder.
    pub submissions: Option<f64>,
    /// Timestamps that did not fit into the query set: the numbers above are then short.
    pub left_out: usize,
}
// ANCHOR_END: gpu_time

// ANCHOR: time_breakdown
/// One run of one mode, split by the host's clock and, where the adapter can, the GPU's.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeBreakdown {
    pub mode: ExecutionMode,
    /// Seconds from the call of `run` to its return.
    pub wall: f64,
    /// The median wall time of as many runs without the probe: what the timestamps and
    /// the probe's clock readings themselves cost is the difference.
    pub wall_without_probe: f64,
    /// Seconds per host phase, indexed like [`HostPhase::ALL`].
    pub host: [f64; 5],
    pub submissions: usize,
    pub passes: usize,
    /// `None` where the adapter offers no timestamp queries.
    pub gpu: Option<GpuTime>,
    /// What the adapter's timestamps could reach.
    pub support: TimestampSupport,
}
// ANCHOR_END: time_breakdown

impl TimeBreakdown {
    pub fn host_time(&self, phase: HostPhase) -> f64 {
        let index = HostPhase::ALL
            .iter()
            .position(|&candidate| candidate == phase)
            .expect("every phase is in ALL");
        self.host[index]
    }

    /// The wall time the probe did not attribute to a phase (its own start and stop):
    /// close to zero.
    pub fn unattributed(&self) -> f64 {
        self.wall - self.host.iter().sum::<f64>()
    }

    /// One line for the report: each phase in ms, then the GPU's times.
    pub fn summary(&self) -> String {
        let milliseconds = |seconds: f64| format!("{:.4}", seconds * 1e3);
        let mut parts: Vec<String> = HostPhase::ALL
            .iter()
            .map(|&phase| format!("{} {}", phase.name(), milliseconds(self.host_time(phase))))
            .collect();
        match &self.gpu {
            Some(gpu) => {
                let timed = if gpu.timed_passes == 0 {
                    format!("{} dispatches", gpu.timed_dispatches)
                } else {
                    format!(
                        "{} dispatches and {} whole passes",
                        gpu.timed_dispatches, gpu.timed_passes
                    )
                };
                parts.push(format!(
                    "GPU kernels {} ({timed})",
                    milliseconds(gpu.kernels)
                ));
                if let Some(submissions) = gpu.submissions {
                    parts.push(format!(
                        "GPU first to last command {} ({} submissions)",
                        milliseconds(submissions),
                        self.submissions
                    ));
                }
                if gpu.left_out > 0 {
                    parts.push(format!("{} timestamps did not fit", gpu.left_out));
                }
            }
            None => parts.push("GPU not timed".to_string()),
        }
        parts.push(format!(
            "{} without the probe",
            milliseconds(self.wall_without_probe)
        ));
        parts.join(" · ")
    }
}

// ANCHOR: gpu_time_from_marks
/// The GPU's times from the probe's marks and the timestamps read back (nanoseconds, in
/// the order of the marks).
pub fn gpu_time(record: &ProbeRecord, nanoseconds: &[f64]) -> GpuTime {
    let mut time = GpuTime {
        kernels: 0.0,
        timed_dispatches: 0,
        timed_passes: 0,
        submissions: None,
        left_out: record.marks_left_out,
    };
    let seconds = |from: f64, to: f64| ((to - from) * 1e-9).max(0.0);
    let (mut submission_start, mut pass_start, mut last) = (None, 0.0, 0.0);
    for (&mark, &now) in record.marks.iter().zip(nanoseconds) {
        match mark {
            Mark::SubmissionStart => submission_start = Some(now),
            Mark::SubmissionEnd => {
                if let Some(start) = submission_start.take() {
                    *time.submissions.get_or_insert(0.0) += seconds(start, now);
                }
            }
            Mark::PassStart => (pass_start, last) = (now, now),
            Mark::DispatchEnd => {
                time.kernels += seconds(last, now);
                time.timed_dispatches += 1;
                last = now;
            }
            Mark::PassEnd { dispatches } => {
                time.kernels += seconds(pass_start, now);
                if dispatches == 1 {
                    time.timed_dispatches += 1;
                } else {
                    time.timed_passes += 1;
                }
            }
        }
    }
    time
}
// ANCHOR_END: gpu_time_from_marks

// ANCHOR: measure_breakdown
/// Prepares `workload` for `mode` (not timed), warms it up, then probes `runs` runs and
/// returns the breakdown of the one with the median wall time.
pub fn measure_breakdown(
    mode: ExecutionMode,
    workload: &Workload,
    context: &GpuContext,
    runs: usize,
) -> Result<TimeBreakdown, SweepError> {
    let what = || {
        let (rows, columns) = workload.input.shape();
        format!("the time breakdown of {mode:?} with a {rows}×{columns} input")
    };
    let run_error = |source| SweepError::Run {
        what: what(),
        source: Box::new(source),
    };
    let support = TimestampSupport::of(context);
    let queries = match support {
        TimestampSupport::None => None,
        _ => Some(
            TimestampQueries::new(context, TIMESTAMPS_PER_RUN).map_err(|source| {
                SweepError::Gpu {
                    what: what(),
                    source: Box::new(source),
                }
            })?,
        ),
    };
    let mut execution = mode
        .prepare(&workload.graph, Some(context))
        .map_err(run_error)?;
    for _ in 0..WARM_UP_RUNS {
        execution.run(&workload.input, 1).map_err(run_error)?;
    }
    // The same runs without the probe, for what probing costs.
    let mut unprobed: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let start = Instant::now();
            execution.run(&workload.input, 1).map_err(run_error)?;
            Ok(start.elapsed().as_secs_f64())
        })
        .collect::<Result<_, SweepError>>()?;
    unprobed.sort_by(f64::total_cmp);
    let wall_without_probe = unprobed[unprobed.len() / 2];
    let mut measured = Vec::with_capacity(runs.max(1));
    for _ in 0..runs.max(1) {
        // The clock starts before the probe and stops after it, so that every phase the
        // probe attributes lies within the wall time.
        let start = Instant::now();
        probe::start(queries.as_ref().map(|queries| (queries, support)));
        let outputs = execution.run(&workload.input, 1);
        let record = probe::finish().expect("the probe was started on this thread");
        let wall = start.elapsed().as_secs_f64();
        let outputs = outputs.map_err(run_error)?;
        if outputs
            .iter()
            .any(|output| output.as_slice().iter().any(|value| !value.is_finite()))
        {
            return Err(SweepError::NotFinite { what: what() });
        }
        let gpu = match &queries {
            Some(queries) => {
                let count = record.marks.len() as u32;
                let nanoseconds =
                    queries
                        .read_nanoseconds(context, count)
                        .map_err(|source| SweepError::Gpu {
                            what: what(),
                            source: Box::new(source),
                        })?;
                Some(gpu_time(&record, &nanoseconds))
            }
            None => None,
        };
        let mut host = [0.0; 5];
        for (slot, &phase) in host.iter_mut().zip(&HostPhase::ALL) {
            *slot = record.host_time(phase).as_secs_f64();
        }
        measured.push(TimeBreakdown {
            mode,
            wall,
            wall_without_probe,
            host,
            submissions: record.submissions,
            passes: record.passes,
            gpu,
            support,
        });
    }
    measured.sort_by(|a, b| a.wall.total_cmp(&b.wall));
    Ok(measured.swap_remove(measured.len() / 2))
}
// ANCHOR_END: measure_breakdown

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::random_mlp;

    #[test]
    fn the_parts_are_non_negative_and_add_up_to_at_most_the_wall_time() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let workload = random_mlp(8, 3, 5).unwrap();
        for mode in [
            ExecutionMode::ImmediateCached,
            ExecutionMode::GraphCached,
            ExecutionMode::GraphLoopCachedFused,
            ExecutionMode::OpCode,
            ExecutionMode::GraphCompiled,
        ] {
            let breakdown = measure_breakdown(mode, &workload, context, 3).unwrap();
            assert!(breakdown.wall > 0.0, "{breakdown:?}");
            assert!(breakdown.wall_without_probe > 0.0, "{breakdown:?}");
            assert!(
                breakdown.host.iter().all(|&part| part >= 0.0),
                "{breakdown:?}"
            );
            let attributed: f64 = breakdown.host.iter().sum();
            assert!(attributed <= breakdown.wall, "{breakdown:?}");
            // The probe starts just before the clock and stops just after: it loses at
            // most a few microseconds, never a part of the run.
            assert!(
                attributed >= 0.9 * breakdown.wall,
                "{attributed} of {} s attributed: {breakdown:?}",
                breakdown.wall
            );
            assert!(breakdown.submissions >= 1, "{breakdown:?}");
            assert!(
                breakdown.host_time(HostPhase::Waiting) > 0.0,
                "{breakdown:?}"
            );
            match (&breakdown.gpu, breakdown.support) {
                (None, TimestampSupport::None) => {}
                (Some(gpu), support) if support != TimestampSupport::None => {
                    assert!(
                        gpu.timed_dispatches + gpu.timed_passes >= 1,
                        "{breakdown:?}"
                    );
                    assert!(gpu.kernels > 0.0, "{breakdown:?}");
                    if support >= TimestampSupport::BetweenCommands {
                        let span = gpu.submissions.expect("submissions are timed");
                        assert!(span >= gpu.kernels * 0.99, "{breakdown:?}");
                    }
                    assert_eq!(gpu.left_out, 0, "{breakdown:?}");
                }
                other => panic!("GPU times do not match the support: {other:?}"),
            }
        }
    }

    #[test]
    fn every_dispatch_of_a_graph_run_is_timed_where_the_device_can() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        if TimestampSupport::of(context) != TimestampSupport::EveryDispatch {
            return;
        }
        // Depth 4 unfused: 4 linear layers, the ReLUs that follow some of them, one
        // softmax, all in one pass of one submission.
        let workload = random_mlp(8, 4, 3).unwrap();
        let breakdown =
            measure_breakdown(ExecutionMode::GraphCached, &workload, context, 1).unwrap();
        let gpu = breakdown.gpu.unwrap();
        let nodes = workload.graph.execution_order().len();
        assert!(gpu.timed_dispatches >= 5, "{gpu:?}");
        assert!(gpu.timed_dispatches < nodes, "{gpu:?} for {nodes} nodes");
        assert_eq!(gpu.timed_passes, 0, "{gpu:?}");
        assert_eq!(breakdown.submissions, 1);
        assert_eq!(breakdown.passes, 1);
    }

    #[test]
    fn marks_turn_into_kernel_and_submission_times() {
        let record = ProbeRecord {
            host: [std::time::Duration::ZERO; 5],
            marks: vec![
                Mark::SubmissionStart,
                Mark::PassStart,
                Mark::DispatchEnd,
                Mark::DispatchEnd,
                Mark::PassStart,
                Mark::PassEnd { dispatches: 3 },
                Mark::SubmissionEnd,
            ],
            marks_left_out: 0,
            submissions: 1,
            passes: 2,
        };
        // Nanoseconds: pass one's dispatches take 1 and 2 µs, pass two takes 4 µs.
        let times = [0.0, 500.0, 1500.0, 3500.0, 4000.0, 8000.0, 9000.0];
        let time = gpu_time(&record, &times);
        assert!((time.kernels - 7e-6).abs() < 1e-12, "{time:?}");
        assert_eq!(time.timed_dispatches, 2);
        assert_eq!(time.timed_passes, 1);
        assert!((time.submissions.unwrap() - 9e-6).abs() < 1e-12, "{time:?}");
    }
}
