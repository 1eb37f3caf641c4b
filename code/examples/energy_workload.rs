//! Runs the standard workload in one execution mode over and over for a fixed time, so that
//! a power meter outside the program can measure the energy of one run.
//!
//! ```sh
//! cargo run --release --example energy_workload -- --mode GraphCompiled \
//!     [--size 256] [--depth 64] [--seconds 8] [--mark 'COMMAND']
//! ```
//!
//! The graph is prepared and run a few times first (shaders compiled, buffers allocated),
//! then `COMMAND start` is run through `sh -c`, the timed loop runs, and `COMMAND end` is
//! run: the command marks the two ends of the loop for whatever samples the power
//! (`code/h100/energy.sh` reads the GPU's energy counter there). The last line printed is
//! `mode,size,depth,runs,seconds`. Every run reads its output back to the host, and the
//! first output is checked to be finite and to sum to one per row.

use std::process::Command;
use std::time::{Duration, Instant};

use galaxy::gpu::GpuContext;
use galaxy::graph::random_mlp;
use galaxy::runner::ExecutionMode;

struct Options {
    mode: ExecutionMode,
    size: usize,
    depth: usize,
    seconds: f64,
    mark: Option<String>,
}

fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(2);
}

fn options() -> Options {
    let mut mode = None;
    let (mut size, mut depth, mut seconds, mut mark): (usize, usize, f64, Option<String>) =
        (256, 64, 8.0, None);
    let mut arguments = std::env::args().skip(1);
    let names = || {
        ExecutionMode::ALL
            .map(|mode| format!("{mode:?}"))
            .join(", ")
    };
    while let Some(argument) = arguments.next() {
        let mut value = || {
            arguments
                .next()
                .unwrap_or_else(|| fail(&format!("{argument} takes a value")))
        };
        match argument.as_str() {
            "--mode" => {
                let name = value();
                mode = Some(
                    ExecutionMode::ALL
                        .into_iter()
                        .find(|mode| format!("{mode:?}") == name)
                        .unwrap_or_else(|| {
                            fail(&format!("no mode called {name}; the modes are {}", names()))
                        }),
                );
            }
            "--size" => size = parse(&value(), "--size"),
            "--depth" => depth = parse(&value(), "--depth"),
            "--seconds" => seconds = parse(&value(), "--seconds"),
            "--mark" => mark = Some(value()),
            other => fail(&format!("unknown option {other}")),
        }
    }
    let mode = mode.unwrap_or_else(|| fail(&format!("--mode is required: one of {}", names())));
    if !(seconds > 0.0 && seconds.is_finite()) {
        fail("--seconds must be a positive number");
    }
    Options {
        mode,
        size,
        depth,
        seconds,
        mark,
    }
}

fn parse<T: std::str::FromStr>(text: &str, option: &str) -> T {
    text.parse()
        .unwrap_or_else(|_| fail(&format!("{option} takes a number, not {text}")))
}

fn mark(command: &Option<String>, moment: &str) {
    let Some(command) = command else { return };
    match Command::new("sh")
        .arg("-c")
        .arg(format!("{command} {moment}"))
        .status()
    {
        Ok(status) if status.success() => {}
        Ok(status) => fail(&format!("the mark command failed at {moment}: {status}")),
        Err(error) => fail(&format!("cannot run the mark command: {error}")),
    }
}

fn main() {
    let options = options();
    let workload = random_mlp(options.size, options.depth, 1)
        .unwrap_or_else(|error| fail(&format!("the workload: {error}")));
    let context = if options.mode.uses_gpu() {
        Some(GpuContext::shared().unwrap_or_else(|error| fail(&error.to_string())))
    } else {
        None
    };
    let mut execution = options
        .mode
        .prepare(&workload.graph, context)
        .unwrap_or_else(|error| fail(&error.to_string()));
    // The modes that record many runs into one submission get several runs per call.
    let runs_per_call = match options.mode {
        ExecutionMode::GraphLoop
        | ExecutionMode::GraphLoopCached
        | ExecutionMode::GraphLoopFused
        | ExecutionMode::GraphLoopCachedFused => 8,
        _ => 1,
    };
    let mut run = || {
        execution
            .run(&workload.input, runs_per_call)
            .unwrap_or_else(|error| fail(&error.to_string()))
    };
    // Warm up, and check that the output is a softmax before spending energy on it.
    let first = run();
    for row in 0..first[0].rows() {
        let sum: f32 = first[0].row(row).iter().sum();
        if !first[0].row(row).iter().all(|value| value.is_finite()) || (sum - 1.0).abs() > 1e-3 {
            fail(&format!(
                "row {row} of the output is not a softmax (sum {sum})"
            ));
        }
    }
    let warm_up = Instant::now();
    while warm_up.elapsed() < Duration::from_millis(500) {
        run();
    }

    mark(&options.mark, "start");
    let start = Instant::now();
    let mut runs = 0;
    while start.elapsed().as_secs_f64() < options.seconds {
        std::hint::black_box(run());
        runs += runs_per_call;
    }
    let seconds = start.elapsed().as_secs_f64();
    mark(&options.mark, "end");
    println!(
        "{:?},{},{},{runs},{seconds:.4}",
        options.mode, options.size, options.depth
    );
}
