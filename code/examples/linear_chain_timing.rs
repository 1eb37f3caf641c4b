//! Times every candidate linear kernel three ways at one shape: repeated on the same
//! tensors, as the preparation-time search times it; chained, each dispatch reading what
//! the one before wrote; and chained with weights of its own for every dispatch, as the
//! layers of a network run (their weights then come from the GPU's memory, not its L2
//! cache).
//!
//! ```sh
//! cargo run --release -p galaxy --example linear_chain_timing -- [SIZE] [DISPATCHES]
//! ```
//!
//! Prints the search's choice and timings, then `kernel,repeated µs,chained µs,chained with
//! distinct weights µs` per
//! dispatch (GPU clock, median of 5 passes of DISPATCHES dispatches, default 64).

use galaxy::Tensor2d;
use galaxy::gpu::linear_search::{LinearShape, search, search_candidates, time_dispatch_sequence};
use galaxy::gpu::record::BoundDispatch;
use galaxy::gpu::timestamps::TimestampQueries;
use galaxy::gpu::{GpuContext, GpuTensor, PipelineCache, Readback, ShaderCompilation};

fn main() {
    let arguments: Vec<usize> = std::env::args()
        .skip(1)
        .map(|argument| {
            argument
                .parse()
                .expect("SIZE and DISPATCHES are whole numbers")
        })
        .collect();
    let size = arguments.first().copied().unwrap_or(1024);
    let dispatches = arguments.get(1).copied().unwrap_or(64) as u32;
    let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
    println!("# {}", context.describe());
    let shape = LinearShape {
        rows: size,
        inner: size,
        columns: size,
    };
    let found = search(context, shape).unwrap_or_else(|error| panic!("{error}"));
    println!("# search at {size}³ chose {}", found.chosen);
    for (strategy, seconds) in &found.timings {
        println!("# search timed {strategy}: {:.2} µs", seconds * 1e6);
    }
    let upload = |seed| {
        let values = Tensor2d::random(size, size, -0.05..=0.05, seed);
        GpuTensor::upload(context, &values, Readback::Never).unwrap_or_else(|e| panic!("{e}"))
    };
    let (weights, first, second) = (upload(2), upload(1), upload(3));
    let layer_weights: Vec<GpuTensor> = (0..dispatches)
        .map(|layer| upload(10 + u64::from(layer)))
        .collect();
    let bias = GpuTensor::upload(
        context,
        &Tensor2d::random(1, size, -0.05..=0.05, 4),
        Readback::Never,
    )
    .unwrap_or_else(|error| panic!("{error}"));
    let queries = TimestampQueries::new(context, 2).unwrap_or_else(|error| panic!("{error}"));
    let cache = PipelineCache::new(ShaderCompilation::Cached);
    println!(
        "kernel,repeated microseconds,chained microseconds,chained distinct weights microseconds"
    );
    for strategy in search_candidates(context, shape) {
        let pipeline = strategy
            .pipeline(context, &cache, true)
            .unwrap_or_else(|error| panic!("{error}"));
        let bind = |input: &GpuTensor, output: &GpuTensor| {
            strategy
                .bind(context, &pipeline, input, &weights, &bias, output)
                .unwrap_or_else(|error| panic!("{error}"))
        };
        let forward = bind(&first, &second);
        let backward = bind(&second, &first);
        let repeated = median_pass(context, &queries, &[&forward], dispatches);
        let chained = median_pass(context, &queries, &[&forward, &backward], dispatches);
        let layers: Vec<BoundDispatch> = layer_weights
            .iter()
            .enumerate()
            .map(|(layer, weights)| {
                let (input, output) = if layer % 2 == 0 {
                    (&first, &second)
                } else {
                    (&second, &first)
                };
                strategy
                    .bind(context, &pipeline, input, weights, &bias, output)
                    .unwrap_or_else(|error| panic!("{error}"))
            })
            .collect();
        let layers: Vec<&BoundDispatch> = layers.iter().collect();
        let distinct = median_pass(context, &queries, &layers, dispatches);
        println!(
            "{strategy},{:.2},{:.2},{:.2}",
            repeated * 1e6,
            chained * 1e6,
            distinct * 1e6
        );
    }
}

/// Seconds per dispatch: the median of 5 passes (after one to warm up) of `count`
/// dispatches that take turns from `sequence`, by the GPU's clock.
fn median_pass(
    context: &GpuContext,
    queries: &TimestampQueries,
    sequence: &[&BoundDispatch],
    count: u32,
) -> f64 {
    let mut times: Vec<f64> = (0..6)
        .map(|_| {
            time_dispatch_sequence(context, sequence, count, Some(queries))
                .unwrap_or_else(|error| panic!("{error}"))
                / f64::from(count)
        })
        .skip(1)
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}
