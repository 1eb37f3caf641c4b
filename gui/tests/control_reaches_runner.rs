//! A control applied to the state reaches the worker thread and changes what it runs:
//! the path a key press or a click takes, without the window.

use std::sync::Arc;
use std::time::Duration;

use galaxy::gpu::GpuContext;
use galaxy::runner::ExecutionMode;
use galaxy_gui::app_state::{AppState, Control, Status};
use galaxy_gui::compute::{ComputeWorker, Job, RunReport, WorkerReport};

/// Long enough for a preparation on a loaded machine; a hang fails instead of waiting
/// forever.
const PATIENCE: Duration = Duration::from_secs(60);

/// Sends the command `control` produces, then feeds reports to the state until a run of
/// the state's current job arrives; returns that run.
fn apply_and_wait_for_run(
    state: &mut AppState,
    worker: &ComputeWorker,
    control: Control,
) -> RunReport {
    let command = state
        .apply(control)
        .unwrap_or_else(|| panic!("{control:?} should produce a command for the worker"));
    worker.send(command);
    let wanted = state.job();
    loop {
        let report = worker
            .wait_for_report(PATIENCE)
            .unwrap_or_else(|| panic!("no run of {wanted:?} within {PATIENCE:?}"));
        state.record_report(report.clone());
        match report {
            WorkerReport::Ran(run) if run.job == wanted => return run,
            WorkerReport::Failed { message, .. } => panic!("the worker failed: {message}"),
            _ => {}
        }
    }
}

#[test]
fn a_larger_size_chosen_while_running_reaches_the_runner() {
    let mut state = AppState::new("none");
    state.apply(Control::SetSize(8));
    state.apply(Control::SetDepth(2));
    let worker = ComputeWorker::spawn(None, || {});

    let first = apply_and_wait_for_run(&mut state, &worker, Control::ToggleRunning);
    assert_eq!(first.output_shape, (8, 8));
    assert!(matches!(state.status, Status::Running { .. }));

    let second = apply_and_wait_for_run(&mut state, &worker, Control::LargerSize);
    assert_eq!(second.job.size, 16);
    assert_eq!(second.output_shape, (16, 16), "the runner ran the new size");
    assert!(second.output_is_finite);
    assert_eq!(state.run_times.latest(), Some(second.milliseconds));
}

#[test]
fn a_mode_chosen_while_running_reaches_the_runner_on_the_gpu() {
    let context = Arc::new(GpuContext::new().unwrap_or_else(|error| panic!("{error}")));
    let mut state = AppState::new(context.describe());
    state.apply(Control::SetSize(16));
    state.apply(Control::SetDepth(3));
    let worker = ComputeWorker::spawn(Some(context), || {});
    apply_and_wait_for_run(&mut state, &worker, Control::ToggleRunning);

    let run = apply_and_wait_for_run(
        &mut state,
        &worker,
        Control::SetMode(ExecutionMode::GraphCompiled),
    );
    assert_eq!(
        run.job,
        Job {
            size: 16,
            depth: 3,
            mode: ExecutionMode::GraphCompiled
        }
    );
    assert_eq!(run.output_shape, (16, 16));
    assert!(run.output_is_finite);
}

#[test]
fn stopping_reaches_the_runner_and_no_run_follows() {
    let mut state = AppState::new("none");
    state.apply(Control::SetSize(4));
    state.apply(Control::SetDepth(1));
    let worker = ComputeWorker::spawn(None, || {});
    apply_and_wait_for_run(&mut state, &worker, Control::ToggleRunning);

    let pause = state
        .apply(Control::ToggleRunning)
        .expect("stopping sends a pause");
    worker.send(pause);
    // Reports of runs that finished before the pause arrived may still be on their way;
    // once they are read, the worker must stay silent.
    // A worker that ignored the pause would keep this loop busy: give it a deadline.
    let started = std::time::Instant::now();
    while worker.wait_for_report(Duration::from_millis(300)).is_some() {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the worker kept running after the pause"
        );
    }
    assert_eq!(worker.wait_for_report(Duration::from_millis(500)), None);
    assert!(!state.running);
}

#[test]
fn a_gpu_mode_without_a_device_fails_with_a_message_and_stops() {
    let mut state = AppState::new("none");
    state.apply(Control::SetMode(ExecutionMode::GraphCached));
    let worker = ComputeWorker::spawn(None, || {});
    worker.send(state.apply(Control::ToggleRunning).unwrap());
    let report = worker.wait_for_report(PATIENCE).expect("a report");
    state.record_report(report);
    assert!(!state.running);
    match &state.status {
        Status::Failed(message) => assert!(message.contains("no GPU context"), "{message}"),
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn the_worker_wakes_the_ui_once_until_the_ui_reads_the_reports() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Instant;

    let wakes = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&wakes);
    let wait_for_wakes = |count: usize| {
        let started = Instant::now();
        while wakes.load(Ordering::SeqCst) < count {
            assert!(
                started.elapsed() < PATIENCE,
                "no wake-up within {PATIENCE:?}"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    let mut state = AppState::new("none");
    state.apply(Control::SetSize(4));
    state.apply(Control::SetDepth(1));
    let worker = ComputeWorker::spawn(None, move || {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    worker.send(state.apply(Control::ToggleRunning).unwrap());

    // Let many tiny runs finish without reading their reports: still one wake-up.
    wait_for_wakes(1);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        wakes.load(Ordering::SeqCst),
        1,
        "one wake until the UI looks"
    );
    let reports = worker.take_reports();
    assert!(reports.len() > 1, "{} reports in 200 ms", reports.len());

    // Reading re-arms the wake-up: the next report sends exactly one more.
    wait_for_wakes(2);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(wakes.load(Ordering::SeqCst), 2, "one wake per read");
}
