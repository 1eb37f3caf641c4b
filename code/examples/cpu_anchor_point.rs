//! Times the crate's CPU execution modes on one point of the standard workload, for the
//! CPU anchors (`anchors/onnx/cpu_anchor.py` runs it between its own NumPy and ONNX
//! Runtime timings, so that all of them are measured side by side).
//!
//! ```sh
//! cargo run --release -p galaxy --example cpu_anchor_point -- SIZE DEPTH [MODE ...]
//! ```
//!
//! MODE is `CpuGraph` (the default) or `Cpu`. For each mode it prints one line,
//! `mode,size,depth,milliseconds`: the median of 7 samples, each at least 20 ms of runs,
//! every run including the preparation-free forward pass and the copy of the result, as
//! in the figure sweeps. A line starting with `#` says how `CpuGraph` shared the rows
//! between threads.

use galaxy::bench::sweeps::Budget;
use galaxy::bench::sweeps::modes::{SEED, time_mode};
use galaxy::graph::random_mlp;
use galaxy::runner::{CpuPrepackedRunner, ExecutionMode};

const BUDGET: Budget = Budget {
    seconds_per_run: f64::INFINITY,
    seconds_per_point: 0.0,
    minimum_sample_seconds: 0.02,
    minimum_samples: 7,
    maximum_samples: 7,
};

fn main() {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let (size, depth, modes) = match arguments.as_slice() {
        [size, depth, modes @ ..] => (number(size), number(depth), modes),
        _ => fail("usage: cpu_anchor_point SIZE DEPTH [CpuGraph|Cpu ...]"),
    };
    let modes: Vec<ExecutionMode> = if modes.is_empty() {
        vec![ExecutionMode::CpuGraph]
    } else {
        modes
            .iter()
            .map(|name| match name.as_str() {
                "CpuGraph" => ExecutionMode::CpuGraph,
                "Cpu" => ExecutionMode::Cpu,
                other => fail(&format!("`{other}` is not a CPU mode (CpuGraph, Cpu)")),
            })
            .collect()
    };
    let workload = random_mlp(size, depth, SEED)
        .unwrap_or_else(|error| fail(&format!("random_mlp({size}, {depth}): {error}")));
    if modes.contains(&ExecutionMode::CpuGraph)
        && let Some(runner) = CpuPrepackedRunner::prepare(&workload.graph)
    {
        println!("# CpuGraph split at {size}x{depth}: {:?}", runner.split());
    }
    for mode in modes {
        let measurement = time_mode(mode, &workload, None, &BUDGET)
            .unwrap_or_else(|error| fail(&format!("{mode:?} at {size}x{depth}: {error}")));
        println!(
            "{mode:?},{size},{depth},{:.6}",
            measurement.seconds_per_run * 1e3
        );
    }
}

fn number(text: &str) -> usize {
    match text.parse() {
        Ok(value) if value > 0 => value,
        _ => fail(&format!("`{text}` is not a whole number above 0")),
    }
}

fn fail(message: &str) -> ! {
    eprintln!("cpu_anchor_point: {message}");
    std::process::exit(1);
}
