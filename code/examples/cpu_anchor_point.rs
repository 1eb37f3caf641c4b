//! Times the crate's CPU execution modes on one point of the standard workload, for the
//! CPU anchors (`anchors/onnx/cpu_anchor.py` runs it between its own NumPy and ONNX
//! Runtime timings, so that all of them are measured side by side).
//!
//! ```sh
//! cargo run --release -p galaxy --example cpu_anchor_point -- SIZE DEPTH [MODE ...]
//! ```
//!
//! MODE is `CpuGraph` (the default), `Cpu`, or `LayerByLayer`: the general CPU graph
//! runner, which runs one layer at a time over all rows and packs the weights on every
//! call (what `CpuGraph` was before the prepacked runner). For each mode it prints one line,
//! `mode,size,depth,milliseconds`: the median of 7 samples, each at least 20 ms of runs,
//! every run a forward pass into a fresh output tensor, as in the figure sweeps. A line
//! starting with `#` says how `CpuGraph` shared the rows between threads.
//!
//! `cpu_anchor_point linear N` times the matrix product alone, `N × N · N × N` plus a
//! bias, on every core, and prints `name,N,GFLOP/s` for `linear_parallel` (which packs
//! the weights on every call, as a BLAS `sgemm` does) and for the prepacked layer of
//! `CpuGraph` (weights packed once, beforehand).

use galaxy::Tensor2d;
use galaxy::bench::sweeps::modes::{SEED, time_mode};
use galaxy::bench::sweeps::{Budget, measure};
use galaxy::compiler::rewrite_in_place;
use galaxy::cpu::layer_stack::{LayerStack, Stage};
use galaxy::cpu::linear_parallel_into;
use galaxy::cpu::prepacked::PrepackedLinear;
use galaxy::graph::random_mlp;
use galaxy::runner::{CpuGraphRunner, CpuPrepackedRunner, ExecutionMode};

const BUDGET: Budget = Budget {
    seconds_per_run: f64::INFINITY,
    seconds_per_point: 0.0,
    minimum_sample_seconds: 0.02,
    minimum_samples: 7,
    maximum_samples: 7,
};

fn main() {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    if let [command, size] = arguments.as_slice()
        && command == "linear"
    {
        linear_throughput(number(size));
        return;
    }
    let (size, depth, modes) = match arguments.as_slice() {
        [size, depth, modes @ ..] => (number(size), number(depth), modes),
        _ => fail("usage: cpu_anchor_point SIZE DEPTH [CpuGraph|Cpu ...]"),
    };
    let modes: Vec<&str> = if modes.is_empty() {
        vec!["CpuGraph"]
    } else {
        modes.iter().map(String::as_str).collect()
    };
    let workload = random_mlp(size, depth, SEED)
        .unwrap_or_else(|error| fail(&format!("random_mlp({size}, {depth}): {error}")));
    // The runner whose split is printed is the one `CpuGraph` is timed with: each runner
    // measures its own split when it is prepared, and two could choose differently.
    let mut prepacked = None;
    if modes.contains(&"CpuGraph")
        && let Some(runner) = CpuPrepackedRunner::prepare(&workload.graph)
    {
        let timings: Vec<String> = runner
            .split_timings()
            .iter()
            .map(|(split, time)| format!("{split:?} {:.3} ms", time.as_secs_f64() * 1e3))
            .collect();
        println!(
            "# CpuGraph split at {size}x{depth}: {:?} (tried: {})",
            runner.split(),
            timings.join(", ")
        );
        prepacked = Some(runner);
    }
    for name in modes {
        let seconds = match (name, prepacked.as_mut()) {
            ("CpuGraph", Some(runner)) => {
                // As `time_mode` runs the mode: one run at a time into a fresh output,
                // the last output of every sample checked.
                measure(&BUDGET, |runs| {
                    for run in 0..runs {
                        let output = runner.run(&workload.input)?;
                        if run + 1 == runs && !output.as_slice().iter().all(|v| v.is_finite()) {
                            fail(&format!(
                                "CpuGraph at {size}x{depth}: the output is not finite"
                            ));
                        }
                    }
                    Ok::<(), galaxy::runner::RunError>(())
                })
                .unwrap_or_else(|error| fail(&format!("{name} at {size}x{depth}: {error}")))
                .seconds_per_run
            }
            ("CpuGraph" | "Cpu", _) => {
                let mode = if name == "Cpu" {
                    ExecutionMode::Cpu
                } else {
                    ExecutionMode::CpuGraph
                };
                time_mode(mode, &workload, None, &BUDGET)
                    .unwrap_or_else(|error| fail(&format!("{name} at {size}x{depth}: {error}")))
                    .seconds_per_run
            }
            ("LayerByLayer", _) => {
                let graph = rewrite_in_place(&workload.graph)
                    .unwrap_or_else(|error| fail(&format!("in-place pass: {error}")));
                let mut runner = CpuGraphRunner::prepare(&graph);
                measure(&BUDGET, |runs| {
                    for _ in 0..runs {
                        runner.run(&workload.input)?;
                    }
                    Ok::<(), galaxy::runner::RunError>(())
                })
                .unwrap_or_else(|error| fail(&format!("{name} at {size}x{depth}: {error}")))
                .seconds_per_run
            }
            (other, _) => fail(&format!(
                "`{other}` is not a CPU mode (CpuGraph, Cpu, LayerByLayer)"
            )),
        };
        println!("{name},{size},{depth},{:.6}", seconds * 1e3);
    }
}

/// GFLOP/s of the linear layer alone at `size`³ on every core, both ways.
fn linear_throughput(size: usize) {
    let input = Tensor2d::random(size, size, -1.0..=1.0, 1);
    let weights = Tensor2d::random(size, size, -1.0..=1.0, 2);
    let bias = Tensor2d::random(1, size, -1.0..=1.0, 3);
    let mut output = Tensor2d::zeros(size, size);
    let operations = 2.0 * (size * size * size) as f64;
    let rate = |seconds: f64| operations / seconds / 1e9;
    let per_call = measure(&BUDGET, |runs| {
        for _ in 0..runs {
            linear_parallel_into(&input, &weights, &bias, &mut output)?;
        }
        Ok::<(), galaxy::ShapeError>(())
    })
    .unwrap_or_else(|error| fail(&format!("linear_parallel: {error}")));
    let linear = PrepackedLinear::new(&weights, &bias)
        .unwrap_or_else(|error| fail(&format!("PrepackedLinear: {error}")));
    let stage = Stage {
        linear: Some(linear),
        row_operations: Vec::new(),
    };
    let mut stack = LayerStack::new(size, size, vec![stage])
        .unwrap_or_else(|error| fail(&format!("LayerStack: {error}")));
    stack.choose_split();
    println!("# prepacked split at {size}³: {:?}", stack.split());
    let prepacked = measure(&BUDGET, |runs| {
        for _ in 0..runs {
            stack.run_into(input.as_slice(), output.as_mut_slice())?;
        }
        Ok::<(), galaxy::ShapeError>(())
    })
    .unwrap_or_else(|error| fail(&format!("prepacked: {error}")));
    println!(
        "linear_parallel (packs per call),{size},{:.2}",
        rate(per_call.seconds_per_run)
    );
    println!(
        "CpuGraph's prepacked linear,{size},{:.2}",
        rate(prepacked.seconds_per_run)
    );
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
