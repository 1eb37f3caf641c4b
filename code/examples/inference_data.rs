//! The measurements behind module 3's inference pages: accuracy against weight bits and
//! against sparsity on the digits, and throughput and latency against batch size. (The speed
//! of int8 and sparse layers has its own examples: `int8_speed` and `sparse_threshold`.)
//!
//! `cargo run --release -p galaxy --example inference_data -- [--out DIR] [--repeats R]
//!  [--machine NAME] [--only PART]...` with parts `bits`, `pruning`, `batch`.
//! Each part writes `DIR/inference-<part>-<machine>.csv` and prints its table.

use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use galaxy::bench::hardware::hardware_description;
use galaxy::bench::repeats::Repeats;
use galaxy::figure::{Axis, Figure, Point, Spread};
use galaxy::gpu::GpuContext;
use galaxy::inference::pruning::{SparseNetwork, apply, magnitude_masks, prune_and_fine_tune};
use galaxy::inference::quantization::Granularity;
use galaxy::inference::quantized_network::QuantizedNetwork;
use galaxy::inference::training::{TrainedNetwork, accuracy, argmax_rows};
use galaxy::inference::{Digits, Split, TrainingConfig, train};
use galaxy::runner::ExecutionMode;

#[derive(Parser)]
struct Options {
    /// Where the CSV files go.
    #[arg(long, default_value = "figures/data")]
    out: PathBuf,
    /// Repeats of every timed point (median, with the fastest and slowest).
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    /// The machine's short name in the file names (e.g. epyc, h100).
    #[arg(long, default_value = "epyc")]
    machine: String,
    /// Run only these parts (bits, pruning, batch); all when absent.
    #[arg(long)]
    only: Vec<String>,
}

/// Median, fastest and slowest of `repeats` timings of `work`, each the mean over enough
/// calls to last about 20 ms, in milliseconds.
fn time_ms(repeats: usize, mut work: impl FnMut()) -> (f64, Spread) {
    work();
    let start = Instant::now();
    work();
    let once = start.elapsed().as_secs_f64().max(1e-7);
    let calls = ((0.02 / once).ceil() as usize).clamp(1, 10_000);
    let samples: Vec<f64> = (0..repeats.max(1))
        .map(|_| {
            let start = Instant::now();
            for _ in 0..calls {
                work();
            }
            start.elapsed().as_secs_f64() * 1000.0 / calls as f64
        })
        .collect();
    median_spread(samples)
}

fn figure(id: String, title: &str, x: (&str, bool), y: (&str, bool), hardware: &str) -> Figure {
    Figure {
        id,
        title: title.to_string(),
        x: Axis {
            label: x.0.to_string(),
            logarithmic: x.1,
        },
        y: Axis {
            label: y.0.to_string(),
            logarithmic: y.1,
        },
        hardware: hardware.to_string(),
        command: format!(
            "cargo run --release -p galaxy --example inference_data -- {} ({})",
            std::env::args().skip(1).collect::<Vec<_>>().join(" "),
            std::env::var("GALAXY_RUN_DATE").unwrap_or_else(|_| "date not recorded".into())
        ),
        series: Vec::new(),
    }
}

/// Rounds every weight to `bits`-bit symmetric levels with one scale per output, and back:
/// the network int8 (bits = 8) or narrower integers would compute.
fn with_weight_bits(network: &TrainedNetwork, bits: u32) -> TrainedNetwork {
    let levels = ((1u32 << (bits - 1)) - 1) as f32;
    let mut rounded = network.clone();
    for layer in &mut rounded.layers {
        let (inputs, outputs) = layer.weights.shape();
        for output in 0..outputs {
            let largest = (0..inputs)
                .map(|input| layer.weights.get(input, output).abs())
                .fold(0.0f32, f32::max);
            let scale = if largest > 0.0 { largest / levels } else { 1.0 };
            for input in 0..inputs {
                let value = layer.weights.get(input, output);
                layer
                    .weights
                    .set(input, output, (value / scale).round() * scale);
            }
        }
    }
    rounded
}

const SEEDS: [u64; 3] = [2026, 2027, 2028];

fn trained(split: &Split, seed: u64) -> TrainedNetwork {
    let config = TrainingConfig {
        seed,
        ..TrainingConfig::default()
    };
    train(&config, split)
        .expect("the default configuration trains")
        .0
}

fn bits_part(options: &Options, split: &Split, hardware: &str) -> Figure {
    let mut result = figure(
        format!("inference-bits-{}", options.machine),
        "Test accuracy on the digits against the bits per weight",
        ("bits per weight", false),
        ("test accuracy (%)", false),
        hardware,
    );
    println!(
        "bits  fp32  per-output weights, median of {} seeds",
        SEEDS.len()
    );
    let networks: Vec<TrainedNetwork> = SEEDS.iter().map(|&seed| trained(split, seed)).collect();
    for bits in 2..=8u32 {
        let rounded: Vec<f64> = networks
            .iter()
            .map(|network| 100.0 * with_weight_bits(network, bits).accuracy(&split.test) as f64)
            .collect();
        let full: Vec<f64> = networks
            .iter()
            .map(|network| 100.0 * network.accuracy(&split.test) as f64)
            .collect();
        let (median_rounded, spread_rounded) = median_spread(rounded);
        let (median_full, spread_full) = median_spread(full);
        result.push_with_spread(
            "weights rounded (one scale per output)",
            Point {
                x: bits as f64,
                y: median_rounded,
            },
            spread_rounded,
        );
        result.push_with_spread(
            "fp32",
            Point {
                x: bits as f64,
                y: median_full,
            },
            spread_full,
        );
        println!("{bits:4}  {median_full:5.1}  {median_rounded:5.1}");
    }
    // The real int8 path (int8 inputs too, i32 sums) at 8 bits.
    for granularity in [Granularity::PerTensor, Granularity::PerOutput] {
        let values: Vec<f64> = networks
            .iter()
            .map(|network| {
                100.0
                    * QuantizedNetwork::quantize(network, granularity)
                        .and_then(|quantized| quantized.accuracy(&split.test))
                        .expect("finite weights") as f64
            })
            .collect();
        let (median, spread) = median_spread(values);
        let name = match granularity {
            Granularity::PerTensor => "int8 layers, one scale per tensor",
            Granularity::PerOutput => "int8 layers, one scale per output",
        };
        result.push_with_spread(name, Point { x: 8.0, y: median }, spread);
        println!("int8 ({granularity:?}): {median:.1} %");
    }
    result
}

/// The median of `values` with their fastest and slowest, through the crate's `Repeats`.
fn median_spread(values: Vec<f64>) -> (f64, Spread) {
    let repeats = Repeats::new(values).expect("at least one value");
    (
        repeats.median(),
        Spread {
            minimum: repeats.minimum(),
            maximum: repeats.maximum(),
        },
    )
}

fn pruning_part(options: &Options, split: &Split, hardware: &str) -> Figure {
    let mut result = figure(
        format!("inference-pruning-{}", options.machine),
        "Test accuracy on the digits against the fraction of weights pruned",
        ("weights pruned (%)", false),
        ("test accuracy (%)", false),
        hardware,
    );
    let networks: Vec<TrainedNetwork> = SEEDS.iter().map(|&seed| trained(split, seed)).collect();
    let fine_tune = TrainingConfig {
        epochs: 5,
        ..TrainingConfig::default()
    };
    println!("pruned %  pruned only  fine-tuned (5 epochs)");
    for percent in [0.0, 50.0, 70.0, 80.0, 90.0, 95.0, 98.0, 99.0] {
        let sparsity = percent as f32 / 100.0;
        let mut pruned_only = Vec::new();
        let mut tuned = Vec::new();
        for network in &networks {
            let masks = magnitude_masks(network, sparsity).expect("a valid sparsity");
            pruned_only.push(100.0 * apply(network, &masks).accuracy(&split.test) as f64);
            let (fine, _) = prune_and_fine_tune(network, sparsity, &fine_tune, split)
                .expect("fine-tuning trains");
            // The sparse network computes the same predictions (checked, not assumed).
            let sparse = SparseNetwork::from_network(&fine).expect("finite weights");
            let predictions =
                argmax_rows(&sparse.forward(&split.test.images).expect("shapes match"));
            assert_eq!(predictions, fine.predict(&split.test.images));
            tuned.push(100.0 * accuracy(&predictions, &split.test.labels) as f64);
        }
        let (a, spread_a) = median_spread(pruned_only);
        let (b, spread_b) = median_spread(tuned);
        result.push_with_spread("pruned", Point { x: percent, y: a }, spread_a);
        result.push_with_spread(
            "pruned, then fine-tuned",
            Point { x: percent, y: b },
            spread_b,
        );
        println!("{percent:8.0}  {a:11.1}  {b:10.1}");
    }
    result
}

/// The batch sizes of the batching sweep: from one image per run to far more than the test
/// set (its images repeat), so that the GPU's fixed cost per run is spread thin at the end.
const BATCH_SIZES: [usize; 9] = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536];

/// Throughput and latency of the trained digits network against the batch size, for two CPU
/// modes and two GPU modes. Returns two figures from the same runs: images per second, and
/// milliseconds per batch (the time a request waits for its whole batch).
fn batch_part(
    options: &Options,
    split: &Split,
    context: Option<&GpuContext>,
    hardware: &str,
) -> Vec<Figure> {
    let mut throughput = figure(
        format!("inference-batch-{}", options.machine),
        "The trained digits network: images per second against the batch size",
        ("images per batch", true),
        ("images per second", true),
        hardware,
    );
    let mut latency = figure(
        format!("inference-batch-latency-{}", options.machine),
        "The trained digits network: time per batch against the batch size",
        ("images per batch", true),
        ("time per batch (ms)", true),
        hardware,
    );
    let network = trained(split, SEEDS[0]);
    // Plain operator calls and the prepared CPU runner; on the GPU, one operator per
    // submission (every operator uploads and reads back) and the compiled graph (one
    // submission, one readback).
    let mut modes = vec![ExecutionMode::Cpu, ExecutionMode::CpuGraph];
    if context.is_some() {
        modes.extend([ExecutionMode::ImmediateCached, ExecutionMode::GraphCompiled]);
    }
    println!(
        "batch  mode             ms per batch (min-max)        µs per image  images per second"
    );
    for batch in BATCH_SIZES {
        let indices: Vec<usize> = (0..batch).map(|index| index % split.test.len()).collect();
        let images = split.test.select(&indices).images;
        let graph = network.to_graph(batch).expect("a valid graph");
        let expected = network.predict(&images);
        for &mode in &modes {
            let mut execution = mode.prepare(&graph, context).expect("the mode prepares");
            // Every mode must classify as the training code does before it is timed.
            let outputs = execution.run(&images, 1).expect("the run succeeds");
            assert_eq!(
                argmax_rows(&outputs[0]),
                expected,
                "{mode:?} disagrees with the network at batch {batch}"
            );
            let (ms, spread) = time_ms(options.repeats, || {
                std::hint::black_box(execution.run(&images, 1).expect("the run succeeds"));
            });
            let name = format!("{mode:?}");
            let x = batch as f64;
            latency.push_with_spread(&name, Point { x, y: ms }, spread);
            throughput.push_with_spread(
                &name,
                Point {
                    x,
                    y: x / (ms / 1000.0),
                },
                Spread {
                    minimum: x / (spread.maximum / 1000.0),
                    maximum: x / (spread.minimum / 1000.0),
                },
            );
            println!(
                "{batch:5}  {name:15}  {ms:10.4} ({:.4}-{:.4})  {:12.3}  {:.0}",
                spread.minimum,
                spread.maximum,
                1000.0 * ms / x,
                x / (ms / 1000.0)
            );
        }
    }
    vec![throughput, latency]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = Options::parse();
    let wants =
        |part: &str| options.only.is_empty() || options.only.iter().any(|only| only == part);
    let context = GpuContext::shared().ok();
    let hardware = hardware_description(context);
    let split = Digits::split(0.2, 1)?;
    std::fs::create_dir_all(&options.out)?;
    let mut figures = Vec::new();
    if wants("bits") {
        figures.push(bits_part(&options, &split, &hardware));
    }
    if wants("pruning") {
        figures.push(pruning_part(&options, &split, &hardware));
    }
    if wants("batch") {
        figures.extend(batch_part(&options, &split, context, &hardware));
    }
    for figure in figures {
        figure.write_csv(&options.out)?;
        println!("wrote {}/{}.csv", options.out.display(), figure.id);
    }
    Ok(())
}
