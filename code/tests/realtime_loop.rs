//! Regression tests of module 5's real-time loop: every step computes, frame by frame, the
//! outputs of the single-threaded loop, and the single-threaded loop computes what the
//! plain CPU operators compute on the frame the frame number names.

mod common;

use std::time::Duration;

use common::{assert_close, context};
use galaxy::Tolerance;
use galaxy::realtime::components::{
    FrameOutput, LoopSettings, StepRun, WorkloadSettings, run_components,
};
use galaxy::realtime::fixed_rate::{FixedRate, MissPolicy, Waiting};
use galaxy::realtime::input_stream::condition;
use galaxy::realtime::optimised::{WhenBusy, run_optimised};
use galaxy::realtime::prototype::run_prototype;
use galaxy::realtime::single_threaded::run_single_threaded;
use galaxy::runner::ExecutionMode;

/// CPU against CPU: the same kernels on the same inputs.
const SAME_KERNELS: Tolerance = Tolerance::new(1e-6, 1e-7);
/// The graph runner against plain operator calls: the same arithmetic summed in another
/// order (the runner's register-blocked kernel).
const OTHER_CPU_KERNELS: Tolerance = Tolerance::new(1e-5, 1e-6);
/// GPU against CPU: the tolerance of the execution modes' differential tests.
const GPU_AGAINST_CPU: Tolerance = Tolerance::new(1e-4, 1e-5);

fn workload(size: usize, depth: usize, mode: ExecutionMode) -> WorkloadSettings {
    WorkloadSettings {
        size,
        depth,
        decimation: 4,
        seed: 0x5eed_0005,
        mode,
    }
}

/// A loop slow enough for a small workload, catching up after any miss: every frame runs.
fn every_frame(frames: u64) -> LoopSettings {
    LoopSettings {
        rate: FixedRate::hertz(400.0).unwrap(),
        frames,
        miss_policy: MissPolicy::CatchUp,
        waiting: Waiting::Sleep,
        latency_budget: 2,
        keep_outputs: true,
    }
}

/// What the plain CPU operators compute for frame `index`: conditioning and graph called
/// directly, without any loop.
fn expected_output(workload: &WorkloadSettings, index: u64) -> galaxy::Tensor2d {
    let (stream, graph) = workload.build().unwrap();
    let input = condition(&stream.block(index), workload.decimation);
    let mut reference = ExecutionMode::Cpu.prepare(&graph, None).unwrap();
    reference.run(&input, 1).unwrap().remove(0)
}

/// Checks that `actual` has one output per record, in frame order, each equal to the
/// reference output of the same frame.
fn assert_matches(actual: &StepRun, reference: &[FrameOutput], tolerance: Tolerance, what: &str) {
    assert_eq!(actual.outputs.len(), actual.records.len(), "{what}");
    for (output, record) in actual.outputs.iter().zip(&actual.records) {
        assert_eq!(
            output.index, record.index,
            "{what}: outputs and records in step"
        );
        let expected = reference
            .iter()
            .find(|candidate| candidate.index == output.index)
            .unwrap_or_else(|| panic!("{what}: frame {} has no reference", output.index));
        assert!(
            output
                .scores
                .as_slice()
                .iter()
                .all(|value| value.is_finite())
        );
        assert_close(
            &output.scores,
            &expected.scores,
            tolerance,
            &format!("{what}, frame {}", output.index),
        );
    }
}

fn assert_consistent_records(run: &StepRun, settings: &LoopSettings, what: &str) {
    for pair in run.records.windows(2) {
        assert!(pair[0].index < pair[1].index, "{what}: frames in order");
    }
    for record in &run.records {
        assert!(record.start <= record.finish, "{what}: {record:?}");
        assert_eq!(record.release, settings.rate.period() * record.index as u32);
        assert_eq!(record.deadline, settings.deadline(record.release));
    }
}

#[test]
fn the_single_threaded_loop_computes_what_the_operators_compute_frame_by_frame() {
    let workload = workload(16, 3, ExecutionMode::CpuGraph);
    let settings = every_frame(12);
    let run = run_single_threaded(&workload, &settings).unwrap();
    assert_eq!(run.skipped, 0);
    let indices: Vec<u64> = run.records.iter().map(|record| record.index).collect();
    assert_eq!(indices, (0..12).collect::<Vec<_>>());
    assert_consistent_records(&run, &settings, "single-threaded");
    for output in &run.outputs {
        assert_close(
            &output.scores,
            &expected_output(&workload, output.index),
            OTHER_CPU_KERNELS,
            &format!("single-threaded, frame {}", output.index),
        );
    }
    // The loop starts each frame at its release or after it, never before.
    for record in &run.records {
        assert!(record.start >= record.release, "{record:?}");
    }
    // Different frames give different outputs: the frame number reaches the model.
    assert_ne!(run.outputs[0].scores, run.outputs[1].scores);
}

#[test]
fn every_step_matches_the_single_threaded_loop_frame_by_frame_on_the_cpu() {
    for (size, depth) in [(16, 3), (33, 2), (64, 4)] {
        let workload = workload(size, depth, ExecutionMode::CpuGraph);
        let settings = every_frame(16);
        let reference = run_single_threaded(&workload, &settings).unwrap();
        assert_eq!(reference.outputs.len(), 16);
        for (name, run) in [
            ("prototype", run_prototype(&workload, &settings).unwrap()),
            ("components", run_components(&workload, &settings).unwrap()),
            (
                "optimised",
                run_optimised(&workload, &settings, WhenBusy::Wait).unwrap(),
            ),
        ] {
            let what = format!("{name} at {size}×{depth}");
            assert_eq!(run.outputs.len(), 16, "{what}: every frame computed");
            assert_eq!(run.skipped, 0, "{what}");
            assert_consistent_records(&run, &settings, &what);
            assert_matches(&run, &reference.outputs, SAME_KERNELS, &what);
        }
    }
}

#[test]
fn the_pipeline_with_the_model_on_the_gpu_matches_the_cpu_loop() {
    let _ = context();
    for (size, depth) in [(8, 2), (33, 3), (64, 4)] {
        let settings = every_frame(10);
        let reference =
            run_single_threaded(&workload(size, depth, ExecutionMode::CpuGraph), &settings)
                .unwrap();
        for mode in [
            ExecutionMode::GraphCompiled,
            ExecutionMode::GraphCachedFused,
        ] {
            let on_gpu = workload(size, depth, mode);
            let what = format!("optimised, {mode:?} at {size}×{depth}");
            let run = run_optimised(&on_gpu, &settings, WhenBusy::Wait).unwrap();
            assert_eq!(run.outputs.len(), 10, "{what}");
            assert_matches(&run, &reference.outputs, GPU_AGAINST_CPU, &what);
            let single = run_single_threaded(&on_gpu, &settings).unwrap();
            assert_matches(
                &single,
                &reference.outputs,
                GPU_AGAINST_CPU,
                &format!("single-threaded, {mode:?}"),
            );
        }
    }
}

#[test]
fn skipping_frames_never_changes_what_a_frame_computes() {
    // The period is a quarter of the fastest frame this machine (and this build) manages,
    // so the loop must skip wherever it runs; 400 such periods leave room for dozens of
    // frames after the skips.
    let workload = workload(64, 8, ExecutionMode::CpuGraph);
    let probe = run_single_threaded(&workload, &every_frame(3)).unwrap();
    let fastest = probe
        .records
        .iter()
        .map(|record| record.work())
        .min()
        .unwrap();
    let settings = LoopSettings {
        rate: FixedRate::hertz(4.0 / fastest.as_secs_f64()).unwrap(),
        frames: 400,
        miss_policy: MissPolicy::Skip,
        waiting: Waiting::Sleep,
        latency_budget: 1,
        keep_outputs: true,
    };
    let run = run_single_threaded(&workload, &settings).unwrap();
    assert!(
        run.skipped > 0,
        "a period of {fastest:?} / 4 cannot hold this frame"
    );
    assert_eq!(run.records.len() as u64 + run.skipped, 400);
    assert_consistent_records(&run, &settings, "skipping");
    let indices: Vec<u64> = run.records.iter().map(|record| record.index).collect();
    // Frames ran after the skips, not only the first one.
    assert!(indices.len() >= 3, "{indices:?}");
    assert!(indices.iter().any(|&index| index > 40), "{indices:?}");
    for output in run.outputs.iter().step_by(5) {
        assert_close(
            &output.scores,
            &expected_output(&workload, output.index),
            OTHER_CPU_KERNELS,
            &format!("after skipping, frame {}", output.index),
        );
    }
}

#[test]
fn a_pipeline_that_drops_frames_keeps_each_output_with_its_own_frame() {
    // The worker's 64 layers take several times as long as the loop's block of 48 × 192
    // readings, so the loop outruns it and must drop frames.
    let workload = workload(48, 64, ExecutionMode::CpuGraph);
    let settings = LoopSettings {
        rate: FixedRate::hertz(20_000.0).unwrap(),
        frames: 300,
        miss_policy: MissPolicy::CatchUp,
        waiting: Waiting::Sleep,
        latency_budget: 2,
        keep_outputs: true,
    };
    let run = run_optimised(&workload, &settings, WhenBusy::Drop).unwrap();
    assert!(run.skipped > 0, "the worker cannot keep up with the loop");
    assert_eq!(run.records.len() as u64 + run.skipped, 300);
    assert_consistent_records(&run, &settings, "dropping");
    for output in run.outputs.iter().step_by(5) {
        assert_close(
            &output.scores,
            &expected_output(&workload, output.index),
            OTHER_CPU_KERNELS,
            &format!("after dropping, frame {}", output.index),
        );
    }
    // Each frame's latency includes its time in the channel: at least its own work.
    for record in &run.records {
        assert!(record.latency() >= record.work() - Duration::from_nanos(1));
    }
}
