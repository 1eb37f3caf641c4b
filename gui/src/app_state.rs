//! The application's state, and how controls change it: no window, no GPU, no egui.
//!
//! Every way of changing the application, a key, a click, a slider, becomes a [`Control`]
//! first, and [`AppState::apply`] is the one place that acts on it. Tests drive this file
//! with plain values, and the keyboard and the mouse cannot disagree about what a control
//! does.

use galaxy::runner::ExecutionMode;

use crate::compute::{Job, WorkerCommand, WorkerReport};
use crate::time_series::TimeSeries;

/// The execution modes the GUI offers, slowest first: CPU, one GPU operator at a time,
/// the whole graph in one submission, and everything the compiler does.
pub const MODES: [ExecutionMode; 6] = [
    ExecutionMode::Cpu,
    ExecutionMode::CpuGraph,
    ExecutionMode::Immediate,
    ExecutionMode::ImmediateCached,
    ExecutionMode::GraphCached,
    ExecutionMode::GraphCompiled,
];

/// Sizes are powers of two in this range, as in the book's sweeps.
pub const SMALLEST_SIZE: usize = 4;
pub const LARGEST_SIZE: usize = 1024;
/// Depths are whole numbers in this range.
pub const SHALLOWEST: usize = 1;
pub const DEEPEST: usize = 128;

/// How many frame and run times the plots show.
pub const HISTORY_LENGTH: usize = 300;

// ANCHOR: control
/// Everything the user can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Start running when stopped, stop when running.
    ToggleRunning,
    /// Double the size (up to the largest).
    LargerSize,
    /// Halve the size (down to the smallest).
    SmallerSize,
    /// Double the depth (up to the deepest).
    Deeper,
    /// Halve the depth (down to one layer).
    Shallower,
    /// Any size: rounded to the nearest power of two in range.
    SetSize(usize),
    /// Any depth: clamped into range.
    SetDepth(usize),
    SetMode(ExecutionMode),
    /// Forget the plotted times.
    ClearHistory,
    Quit,
}
// ANCHOR_END: control

/// What the worker is doing, as far as the UI knows.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    Stopped,
    /// Waiting for the worker to prepare the job.
    Preparing,
    /// Prepared in this many milliseconds; runs are coming in.
    Running {
        preparation_milliseconds: f64,
    },
    Failed(String),
}

// ANCHOR: app_state
/// Everything the window shows, and nothing about how it is drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct AppState {
    pub size: usize,
    pub depth: usize,
    pub mode: ExecutionMode,
    pub running: bool,
    pub status: Status,
    /// Time from one frame to the next, in milliseconds.
    pub frame_times: TimeSeries,
    /// Time of each run of the workload, readback included, in milliseconds.
    pub run_times: TimeSeries,
    /// The adapter the GPU modes run on, for the window to show.
    pub adapter: String,
    pub quit_requested: bool,
}
// ANCHOR_END: app_state

impl AppState {
    pub fn new(adapter: impl Into<String>) -> AppState {
        AppState {
            size: 64,
            depth: 16,
            mode: ExecutionMode::CpuGraph,
            running: false,
            status: Status::Stopped,
            frame_times: TimeSeries::new(HISTORY_LENGTH),
            run_times: TimeSeries::new(HISTORY_LENGTH),
            adapter: adapter.into(),
            quit_requested: false,
        }
    }

    /// The job the current settings describe.
    pub fn job(&self) -> Job {
        Job {
            size: self.size,
            depth: self.depth,
            mode: self.mode,
        }
    }

    // ANCHOR: apply
    /// Applies one control. Returns the command the worker must get for the change to
    /// reach it, if any: a new job while running, or a pause.
    pub fn apply(&mut self, control: Control) -> Option<WorkerCommand> {
        let before = self.job();
        match control {
            Control::ToggleRunning => {
                self.running = !self.running;
                return Some(if self.running {
                    self.status = Status::Preparing;
                    self.run_times.clear();
                    WorkerCommand::Run(self.job())
                } else {
                    self.status = Status::Stopped;
                    WorkerCommand::Pause
                });
            }
            Control::LargerSize => self.size = nearest_size(self.size * 2),
            Control::SmallerSize => self.size = nearest_size(self.size / 2),
            Control::Deeper => self.depth = (self.depth * 2).clamp(SHALLOWEST, DEEPEST),
            Control::Shallower => self.depth = (self.depth / 2).clamp(SHALLOWEST, DEEPEST),
            Control::SetSize(size) => self.size = nearest_size(size),
            Control::SetDepth(depth) => self.depth = depth.clamp(SHALLOWEST, DEEPEST),
            Control::SetMode(mode) => self.mode = mode,
            Control::ClearHistory => {
                self.frame_times.clear();
                self.run_times.clear();
            }
            Control::Quit => self.quit_requested = true,
        }
        // A changed workload restarts the run-time plot, and reaches a running worker.
        let job = self.job();
        if job == before {
            return None;
        }
        self.run_times.clear();
        if !self.running {
            return None;
        }
        self.status = Status::Preparing;
        Some(WorkerCommand::Run(job))
    }
    // ANCHOR_END: apply

    // ANCHOR: record_report
    /// Takes in a report from the worker. Reports about a job other than the current one
    /// were on their way when the settings changed: they are dropped, so the plot never
    /// mixes two workloads.
    pub fn record_report(&mut self, report: WorkerReport) {
        let current = self.job();
        match report {
            WorkerReport::Prepared { job, milliseconds } if job == current && self.running => {
                self.status = Status::Running {
                    preparation_milliseconds: milliseconds,
                };
            }
            WorkerReport::Ran(run) if run.job == current && self.running => {
                if !run.output_is_finite {
                    self.status = Status::Failed(format!(
                        "{:?} returned a value that is not a number",
                        run.job.mode
                    ));
                }
                self.run_times.push(run.milliseconds);
            }
            WorkerReport::Failed { job, message } if job == current => {
                // The worker has paused itself; the Start button must say so.
                self.running = false;
                self.status = Status::Failed(message);
            }
            _ => {}
        }
    }
    // ANCHOR_END: record_report

    /// Records the time since the previous frame.
    pub fn record_frame(&mut self, milliseconds: f64) {
        self.frame_times.push(milliseconds);
    }
}

/// The power of two in range nearest to `size` (ties go to the larger one).
pub fn nearest_size(size: usize) -> usize {
    let size = size.clamp(SMALLEST_SIZE, LARGEST_SIZE);
    let below = 1usize << (usize::BITS - 1 - size.leading_zeros());
    if below == size {
        return size;
    }
    let above = below * 2;
    if size - below < above - size {
        below
    } else {
        above
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compute::RunReport;

    fn ran(job: Job, milliseconds: f64) -> WorkerReport {
        WorkerReport::Ran(RunReport {
            job,
            milliseconds,
            output_shape: (job.size, job.size),
            output_is_finite: true,
        })
    }

    #[test]
    fn sizes_snap_to_powers_of_two_in_range() {
        assert_eq!(nearest_size(1), SMALLEST_SIZE);
        assert_eq!(nearest_size(64), 64);
        assert_eq!(nearest_size(90), 64);
        assert_eq!(nearest_size(96), 128);
        assert_eq!(nearest_size(100_000), LARGEST_SIZE);
    }

    #[test]
    fn starting_sends_the_current_job_and_stopping_pauses() {
        let mut state = AppState::new("test adapter");
        assert_eq!(
            state.apply(Control::ToggleRunning),
            Some(WorkerCommand::Run(state.job()))
        );
        assert!(state.running);
        assert_eq!(state.status, Status::Preparing);
        assert_eq!(
            state.apply(Control::ToggleRunning),
            Some(WorkerCommand::Pause)
        );
        assert!(!state.running);
    }

    #[test]
    fn a_change_while_running_sends_the_new_job_and_a_change_while_stopped_sends_nothing() {
        let mut state = AppState::new("test adapter");
        assert_eq!(state.apply(Control::LargerSize), None);
        assert_eq!(state.size, 128);
        state.apply(Control::ToggleRunning);
        let command = state.apply(Control::Shallower);
        assert_eq!(state.depth, 8);
        assert_eq!(
            command,
            Some(WorkerCommand::Run(Job {
                size: 128,
                depth: 8,
                mode: ExecutionMode::CpuGraph
            }))
        );
        // A control that changes nothing (already the largest size) sends nothing.
        state.apply(Control::SetSize(LARGEST_SIZE));
        assert_eq!(state.apply(Control::LargerSize), None);
    }

    #[test]
    fn limits_hold_at_both_ends() {
        let mut state = AppState::new("test adapter");
        for _ in 0..20 {
            state.apply(Control::SmallerSize);
            state.apply(Control::Shallower);
        }
        assert_eq!((state.size, state.depth), (SMALLEST_SIZE, SHALLOWEST));
        for _ in 0..20 {
            state.apply(Control::LargerSize);
            state.apply(Control::Deeper);
        }
        assert_eq!((state.size, state.depth), (LARGEST_SIZE, DEEPEST));
    }

    #[test]
    fn reports_about_an_old_job_are_dropped() {
        let mut state = AppState::new("test adapter");
        state.apply(Control::ToggleRunning);
        let old = state.job();
        state.record_report(ran(old, 1.0));
        assert_eq!(state.run_times.len(), 1);
        state.apply(Control::SetMode(ExecutionMode::GraphCompiled));
        assert!(
            state.run_times.is_empty(),
            "a new workload starts a new plot"
        );
        state.record_report(ran(old, 2.0));
        assert!(state.run_times.is_empty());
        state.record_report(ran(state.job(), 3.0));
        assert_eq!(state.run_times.latest(), Some(3.0));
    }

    #[test]
    fn a_failure_stops_the_run_and_shows_its_message() {
        let mut state = AppState::new("no adapter");
        state.apply(Control::SetMode(ExecutionMode::GraphCached));
        state.apply(Control::ToggleRunning);
        state.record_report(WorkerReport::Failed {
            job: state.job(),
            message: "no GPU".into(),
        });
        assert!(!state.running);
        assert_eq!(state.status, Status::Failed("no GPU".into()));
    }

    #[test]
    fn a_non_finite_output_is_shown_as_a_failure() {
        let mut state = AppState::new("test adapter");
        state.apply(Control::ToggleRunning);
        state.record_report(WorkerReport::Ran(RunReport {
            job: state.job(),
            milliseconds: 1.0,
            output_shape: (64, 64),
            output_is_finite: false,
        }));
        assert!(matches!(state.status, Status::Failed(_)));
    }
}
