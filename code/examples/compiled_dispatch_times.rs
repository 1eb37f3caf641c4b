//! The GPU's time for each dispatch of one `GraphCompiled` run of the standard workload.
//!
//! ```sh
//! cargo run --release -p galaxy --example compiled_dispatch_times -- [SIZE] [DEPTH]
//! ```
//!
//! Prepares the mode, runs it a few times to warm up, prints the linear kernel the search
//! chose for the layers' shape, then probes three runs with a timestamp after every
//! dispatch and prints, for each, the number of dispatches, their sum and each one's
//! microseconds. Where the plan fuses the whole network into one kernel, the probe sees no
//! dispatches inside a pass and prints 0.

use galaxy::bench::sweeps::modes::SEED;
use galaxy::gpu::GpuContext;
use galaxy::gpu::linear_search::LinearShape;
use galaxy::gpu::probe::{self, Mark};
use galaxy::gpu::timestamps::{TimestampQueries, TimestampSupport};
use galaxy::graph::random_mlp;
use galaxy::runner::ExecutionMode;

fn main() {
    let arguments: Vec<usize> = std::env::args()
        .skip(1)
        .map(|argument| argument.parse().expect("SIZE and DEPTH are whole numbers"))
        .collect();
    let size = arguments.first().copied().unwrap_or(1024);
    let depth = arguments.get(1).copied().unwrap_or(64);
    let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
    println!(
        "# {} — GraphCompiled at {size} × {depth}",
        context.describe()
    );
    let workload = random_mlp(size, depth, SEED).unwrap_or_else(|error| panic!("{error}"));
    let support = TimestampSupport::of(context);
    let queries = TimestampQueries::new(context, 4096).unwrap_or_else(|error| panic!("{error}"));
    let mut execution = ExecutionMode::GraphCompiled
        .prepare(&workload.graph, Some(context))
        .unwrap_or_else(|error| panic!("{error}"));
    for _ in 0..5 {
        execution
            .run(&workload.input, 1)
            .unwrap_or_else(|error| panic!("{error}"));
    }
    let shape = LinearShape {
        rows: size,
        inner: size,
        columns: size,
    };
    match context.measured_linear_choices().cached(shape) {
        Some(strategy) => println!("# linear kernel chosen by the search: {strategy}"),
        None => println!("# no searched linear kernel for {size}³ (fused, or below the threshold)"),
    }
    for run in 0..3 {
        probe::start(Some((&queries, support)));
        execution
            .run(&workload.input, 1)
            .unwrap_or_else(|error| panic!("{error}"));
        let record = probe::finish().expect("started above");
        let nanoseconds = queries
            .read_nanoseconds(context, record.marks.len() as u32)
            .unwrap_or_else(|error| panic!("{error}"));
        let mut last = 0.0;
        let mut times = Vec::new();
        for (&mark, &now) in record.marks.iter().zip(&nanoseconds) {
            match mark {
                Mark::PassStart => last = now,
                Mark::DispatchEnd => {
                    times.push((now - last) * 1e-3);
                    last = now;
                }
                _ => {}
            }
        }
        let total: f64 = times.iter().sum();
        let listed: Vec<String> = times.iter().map(|t| format!("{t:.1}")).collect();
        println!(
            "run {run}: {} dispatches, {total:.1} µs: {}",
            times.len(),
            listed.join(" ")
        );
    }
}
