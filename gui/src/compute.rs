//! The workload runner: a thread of its own that prepares and runs the galaxy crate's graphs
//! while the window's thread keeps drawing.
//!
//! Why a thread and not time slices on the UI thread: one run cannot be cut into pieces.
//! A run of the standard workload at size 512 and depth 64 takes seconds on a software
//! rasteriser, and while the UI thread runs it no frame is drawn and no key is read. On its own thread a run
//! takes as long as it takes; the UI thread only reads the results, between frames.
//!
//! The two threads talk through two channels (module 2's message passing): commands go to
//! the worker, reports come back. Nothing else is shared except the GPU context, which wgpu
//! makes safe to use from several threads, and one flag that keeps the worker from waking
//! the UI more often than it draws.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use galaxy::gpu::GpuContext;
use galaxy::graph::{Workload, random_mlp};
use galaxy::runner::{Execution, ExecutionMode};

// ANCHOR: job
/// One workload to run over and over: the standard random MLP and how to execute it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    /// Rows and columns of the input and of every weight matrix.
    pub size: usize,
    /// The number of linear layers.
    pub depth: usize,
    pub mode: ExecutionMode,
}

/// What the UI thread asks of the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerCommand {
    /// Run this job until told otherwise (preparing it first if it is new).
    Run(Job),
    /// Stop running; keep the prepared job.
    Pause,
}

/// What the worker tells the UI thread.
#[derive(Debug, Clone, PartialEq)]
pub enum WorkerReport {
    /// The job was prepared (graph built, weights uploaded, shaders compiled).
    Prepared { job: Job, milliseconds: f64 },
    /// One run finished: its time, including the readback, and what came back.
    Ran(RunReport),
    /// Preparing or running failed; the worker has paused.
    Failed { job: Job, message: String },
}

#[derive(Debug, Clone, PartialEq)]
pub struct RunReport {
    pub job: Job,
    pub milliseconds: f64,
    /// The shape of the output read back: `size × size` for the standard workload.
    pub output_shape: (usize, usize),
    /// Whether every output value is a number (a NaN or an infinity is a bug).
    pub output_is_finite: bool,
}
// ANCHOR_END: job

/// The seed of every workload the GUI runs: the same size and depth give the same network.
pub const WORKLOAD_SEED: u64 = 2;

// ANCHOR: worker
/// The handle the UI thread keeps: a sender for commands, a receiver for reports.
/// Dropping it closes the command channel, which ends the thread; `drop` waits for that.
pub struct ComputeWorker {
    commands: Option<Sender<WorkerCommand>>,
    reports: Receiver<WorkerReport>,
    /// Set by the worker when it wakes the UI, cleared by the UI when it reads the reports.
    woken: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ComputeWorker {
    /// Starts the worker thread. GPU modes run on `context` (the device the window draws
    /// with); without one they fail with a message. `wake` is called from the worker
    /// thread when a report is waiting: the window's event loop passes a function that
    /// sends it an event, so the loop can sleep instead of polling.
    pub fn spawn(
        context: Option<Arc<GpuContext>>,
        wake: impl Fn() + Send + 'static,
    ) -> ComputeWorker {
        let (command_sender, command_receiver) = mpsc::channel();
        let (report_sender, report_receiver) = mpsc::channel();
        let woken = Arc::new(AtomicBool::new(false));
        let worker_woken = Arc::clone(&woken);
        let thread = std::thread::Builder::new()
            .name("galaxy compute".into())
            .spawn(move || {
                let wake_once = || {
                    // Only the first report since the UI last looked needs a wake-up: a
                    // 4 × 4 network runs a hundred thousand times a second, the UI draws
                    // sixty frames.
                    if !worker_woken.swap(true, Ordering::AcqRel) {
                        wake();
                    }
                };
                work(
                    context.as_deref(),
                    &command_receiver,
                    &report_sender,
                    wake_once,
                )
            })
            .expect("the operating system could not start a thread");
        ComputeWorker {
            commands: Some(command_sender),
            reports: report_receiver,
            woken,
            thread: Some(thread),
        }
    }

    /// Sends a command; it takes effect after the run in progress, if any.
    pub fn send(&self, command: WorkerCommand) {
        if let Some(commands) = &self.commands {
            // The worker only stops when this handle is dropped, so the send cannot fail
            // while `self` exists unless the worker panicked; its reports then stop.
            let _ = commands.send(command);
        }
    }

    /// Every report waiting, oldest first, without blocking.
    pub fn take_reports(&self) -> Vec<WorkerReport> {
        // Cleared before reading: a report that arrives after this line wakes us again.
        self.woken.store(false, Ordering::Release);
        self.reports.try_iter().collect()
    }

    /// Waits up to `timeout` for the next report; `None` if none came. (For tests and
    /// programs without a window.)
    pub fn wait_for_report(&self, timeout: Duration) -> Option<WorkerReport> {
        self.reports.recv_timeout(timeout).ok()
    }
}

impl Drop for ComputeWorker {
    fn drop(&mut self) {
        // Closing the channel tells the worker to finish after its current run.
        self.commands.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
// ANCHOR_END: worker

// ANCHOR: work
/// The worker thread's loop: apply every waiting command, then run the job once if
/// running, report, and look again. While paused it sleeps in `recv` until a command comes.
fn work(
    context: Option<&GpuContext>,
    commands: &Receiver<WorkerCommand>,
    reports: &Sender<WorkerReport>,
    wake: impl Fn(),
) {
    let mut prepared: Option<Prepared> = None;
    let mut wanted: Option<Job> = None;
    loop {
        let next = if wanted.is_some() {
            commands.try_recv()
        } else {
            commands.recv().map_err(|_| TryRecvError::Disconnected)
        };
        match next {
            Ok(WorkerCommand::Run(job)) => {
                wanted = Some(job);
                continue; // Look for more commands before starting: only the last counts.
            }
            Ok(WorkerCommand::Pause) => {
                wanted = None;
                continue;
            }
            Err(TryRecvError::Disconnected) => return,
            Err(TryRecvError::Empty) => {}
        }
        let Some(job) = wanted else { continue };
        let report = match &mut prepared {
            Some(current) if current.job == job => current.run_once(),
            _ => {
                let started = Instant::now();
                match Prepared::new(job, context) {
                    Ok(fresh) => {
                        prepared = Some(fresh);
                        WorkerReport::Prepared {
                            job,
                            milliseconds: started.elapsed().as_secs_f64() * 1e3,
                        }
                    }
                    Err(message) => WorkerReport::Failed { job, message },
                }
            }
        };
        if matches!(report, WorkerReport::Failed { .. }) {
            wanted = None;
        }
        if reports.send(report).is_err() {
            return; // The UI is gone.
        }
        wake();
    }
}
// ANCHOR_END: work

/// A job ready to run: its workload and the runner prepared for it.
struct Prepared<'context> {
    job: Job,
    workload: Workload,
    execution: Execution<'context>,
}

impl<'context> Prepared<'context> {
    fn new(job: Job, context: Option<&'context GpuContext>) -> Result<Prepared<'context>, String> {
        let workload = random_mlp(job.size, job.depth, WORKLOAD_SEED)
            .map_err(|error| format!("the workload could not be built: {error}"))?;
        let execution = job
            .mode
            .prepare(&workload.graph, context)
            .map_err(|error| format!("{:?} could not be prepared: {error}", job.mode))?;
        Ok(Prepared {
            job,
            workload,
            execution,
        })
    }

    fn run_once(&mut self) -> WorkerReport {
        let started = Instant::now();
        match self.execution.run(&self.workload.input, 1) {
            Ok(outputs) => {
                let milliseconds = started.elapsed().as_secs_f64() * 1e3;
                let output = &outputs[0];
                WorkerReport::Ran(RunReport {
                    job: self.job,
                    milliseconds,
                    output_shape: (output.rows(), output.columns()),
                    output_is_finite: output.as_slice().iter().all(|value| value.is_finite()),
                })
            }
            Err(error) => WorkerReport::Failed {
                job: self.job,
                message: format!("{:?} failed: {error}", self.job.mode),
            },
        }
    }
}
