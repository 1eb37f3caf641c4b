//! The digit classifier of module 3, made cheaper to run one step at a time: the time per
//! image and the test accuracy of every step, on the CPU.
//!
//! `cargo run --release -p galaxy --example inference_steps -- [--out DIR] [--repeats R]
//!  [--machine NAME] [--only STEP]` writes `DIR/inference-steps-<machine>.csv` (time per
//! image against images per call, one series per way of running the network) and prints the
//! ladder of steps as a table. `--only STEP` runs one step alone and writes nothing, for a
//! profiler to watch it.
//!
//! The network is trained first with the default settings of `train_digits` (the same seed
//! gives the same weights on every machine), and pruned and fine-tuned as the pruning page
//! of module 3 does (90 % of the weights removed, 5 epochs). Every step classifies the whole
//! test set; one timed sample is one pass over it, cut into calls of the step's batch size,
//! with everything the caller waits for: the run, its allocations and the readback of the
//! class probabilities. The inputs are cut into batches once, beforehand.

use std::path::PathBuf;
use std::time::Instant;

use clap::{Parser, ValueEnum};
use galaxy::bench::hardware::hardware_description;
use galaxy::bench::repeats::Repeats;
use galaxy::compiler::{quantize, sparsify};
use galaxy::cpu::int8::Granularity;
use galaxy::figure::{Axis, Figure, Point};
use galaxy::graph::{Operator, ValidGraph};
use galaxy::inference::pruning::prune_and_fine_tune;
use galaxy::inference::training::{accuracy, argmax_rows};
use galaxy::inference::{Digits, Split, TrainedNetwork, TrainingConfig, train};
use galaxy::runner::ExecutionMode;
use galaxy::runner::execution::WeightStorage;
use galaxy::tensor::Tensor2d;

#[derive(Parser)]
struct Options {
    /// Where the CSV file goes.
    #[arg(long, default_value = "figures/data")]
    out: PathBuf,
    /// Timed passes over the test set per point (median, with the fastest and slowest).
    #[arg(long, default_value_t = 7)]
    repeats: usize,
    /// The machine's short name in the file name (e.g. epyc, h100-host).
    #[arg(long, default_value = "epyc")]
    machine: String,
    /// Run this step alone, print it and write no file (for a profiler).
    #[arg(long, value_enum)]
    only: Option<Step>,
}

// ANCHOR: steps
/// The ladder, in the order the page takes it. Each step changes one thing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Step {
    /// The fp32 graph in the `Cpu` mode (one plain operator call after another, each
    /// allocating its result), one image per call.
    Naive,
    /// The `CpuGraph` mode: weights packed once, bias, ReLU and softmax fused into the
    /// products, one image per call.
    Packed,
    /// `CpuGraph`, 64 images per call.
    Batch64,
    /// `CpuGraph`, the whole test set in one call.
    BatchAll,
    /// As `batch-all`, with int8 weights (the `quantize` pass, one scale per output).
    Int8,
    /// As `batch-all`, on the pruned network (90 % of the weights zero) with its layers
    /// stored sparse (the `sparsify` pass).
    Sparse,
}
// ANCHOR_END: steps

/// Which weights a step runs, and how they are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Weights {
    Float32,
    Int8,
    PrunedSparse,
}

/// Images per call: a fixed number, or the whole test set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Batch {
    Images(usize),
    WholeTestSet,
}

/// One way of running the network: a point of the figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Configuration {
    mode: ExecutionMode,
    weights: Weights,
    batch: Batch,
}

impl Step {
    const ALL: [Step; 6] = [
        Step::Naive,
        Step::Packed,
        Step::Batch64,
        Step::BatchAll,
        Step::Int8,
        Step::Sparse,
    ];

    fn name(self) -> &'static str {
        match self {
            Step::Naive => "1. fp32, Cpu mode, 1 image per call",
            Step::Packed => "2. fp32, CpuGraph, 1 image per call",
            Step::Batch64 => "3. fp32, CpuGraph, 64 images per call",
            Step::BatchAll => "4. fp32, CpuGraph, whole test set per call",
            Step::Int8 => "5. int8 weights, whole test set per call",
            Step::Sparse => "6. pruned 90 %, sparse, whole test set per call",
        }
    }

    fn configuration(self) -> Configuration {
        let (mode, weights, batch) = match self {
            Step::Naive => (ExecutionMode::Cpu, Weights::Float32, Batch::Images(1)),
            Step::Packed => (ExecutionMode::CpuGraph, Weights::Float32, Batch::Images(1)),
            Step::Batch64 => (ExecutionMode::CpuGraph, Weights::Float32, Batch::Images(64)),
            Step::BatchAll => (
                ExecutionMode::CpuGraph,
                Weights::Float32,
                Batch::WholeTestSet,
            ),
            Step::Int8 => (ExecutionMode::CpuGraph, Weights::Int8, Batch::WholeTestSet),
            Step::Sparse => (
                ExecutionMode::CpuGraph,
                Weights::PrunedSparse,
                Batch::WholeTestSet,
            ),
        };
        Configuration {
            mode,
            weights,
            batch,
        }
    }
}

impl Configuration {
    /// The figure's series: one per mode and weights, its points the batch sizes.
    fn series(self) -> &'static str {
        match (self.mode, self.weights) {
            (ExecutionMode::Cpu, _) => "fp32, Cpu mode",
            (_, Weights::Float32) => "fp32, CpuGraph",
            (_, Weights::Int8) => "int8, CpuGraph",
            (_, Weights::PrunedSparse) => "pruned 90 %, sparse, CpuGraph",
        }
    }

    fn storage(self) -> WeightStorage {
        match self.weights {
            Weights::Float32 => WeightStorage::Float32,
            Weights::Int8 => WeightStorage::Int8(Granularity::PerOutput),
            // Every layer sparse, whatever its density: the pass's default threshold
            // (`SPARSE_DENSITY_THRESHOLD`, 3 %) would keep these 10 % layers dense.
            Weights::PrunedSparse => WeightStorage::Sparse {
                maximum_density: 1.0,
            },
        }
    }
}

/// The trained network, and its pruned and fine-tuned copy.
struct Networks {
    full: TrainedNetwork,
    pruned: TrainedNetwork,
}

/// What one configuration measured: milliseconds per image, and the test accuracy of the
/// predictions of its first pass.
struct Measurement {
    per_image: Repeats,
    images_per_call: usize,
    accuracy_percent: f64,
    /// Test images whose predicted class differs from the full fp32 network's.
    changed_predictions: usize,
}

// ANCHOR: measure
/// Prepares the configuration's graphs once (one per call size: a last, shorter batch
/// needs its own), then times passes over the whole test set.
fn measure(
    configuration: Configuration,
    networks: &Networks,
    split: &Split,
    reference_predictions: &[u8],
    repeats: usize,
) -> Result<Measurement, Box<dyn std::error::Error>> {
    let test = &split.test;
    let images_per_call = match configuration.batch {
        Batch::Images(count) => count.min(test.len()),
        Batch::WholeTestSet => test.len(),
    };
    let network = match configuration.weights {
        Weights::PrunedSparse => &networks.pruned,
        _ => &networks.full,
    };
    let batches = cut_into_batches(&test.images, images_per_call)?;
    let mut executions = Vec::new();
    for rows in batch_sizes(test.len(), images_per_call) {
        let graph = network.to_graph(rows)?;
        check_storage(&graph, configuration)?;
        let execution =
            configuration
                .mode
                .prepare_with_weights(&graph, configuration.storage(), None)?;
        executions.push((rows, execution));
    }
    // One pass: every batch through the execution prepared for its size.
    let mut pass = |predictions: &mut Vec<u8>| -> Result<(), Box<dyn std::error::Error>> {
        predictions.clear();
        for batch in &batches {
            let (_, execution) = executions
                .iter_mut()
                .find(|(rows, _)| *rows == batch.rows())
                .ok_or("no execution prepared for a batch size")?;
            let probabilities = execution.run(batch, 1)?;
            predictions.extend(argmax_rows(&probabilities[0]));
        }
        Ok(())
    };
    let mut predictions = Vec::with_capacity(test.len());
    pass(&mut predictions)?;
    let accuracy_percent = 100.0 * accuracy(&predictions, &test.labels) as f64;
    let changed_predictions = predictions
        .iter()
        .zip(reference_predictions)
        .filter(|(a, b)| a != b)
        .count();
    // Enough passes per sample to last about 20 ms, so that the clock's resolution and
    // one-off interruptions matter little.
    let start = Instant::now();
    pass(&mut predictions)?;
    let once = start.elapsed().as_secs_f64().max(1e-7);
    let passes = ((0.02 / once).ceil() as usize).clamp(1, 10_000);
    let mut samples = Vec::with_capacity(repeats);
    for _ in 0..repeats.max(1) {
        let start = Instant::now();
        for _ in 0..passes {
            pass(&mut predictions)?;
        }
        let milliseconds = start.elapsed().as_secs_f64() * 1000.0;
        samples.push(milliseconds / (passes * test.len()) as f64);
    }
    Ok(Measurement {
        per_image: Repeats::new(samples).ok_or("no samples")?,
        images_per_call,
        accuracy_percent,
        changed_predictions,
    })
}
// ANCHOR_END: measure

/// The call sizes a pass over `total` images in calls of `per_call` needs: `per_call`, and
/// the remainder if there is one.
fn batch_sizes(total: usize, per_call: usize) -> Vec<usize> {
    let mut sizes = Vec::new();
    if total >= per_call {
        sizes.push(per_call);
    }
    if total % per_call != 0 {
        sizes.push(total % per_call);
    }
    sizes
}

fn cut_into_batches(
    images: &Tensor2d,
    per_call: usize,
) -> Result<Vec<Tensor2d>, Box<dyn std::error::Error>> {
    let columns = images.columns();
    images
        .as_slice()
        .chunks(per_call * columns)
        .map(|chunk| {
            Ok(Tensor2d::from_vec(
                chunk.len() / columns,
                columns,
                chunk.to_vec(),
            )?)
        })
        .collect()
}

/// Checks that the pass the storage asks for really rewrote every linear layer, so that a
/// step never measures the fp32 layers under another name.
fn check_storage(
    graph: &ValidGraph,
    configuration: Configuration,
) -> Result<(), Box<dyn std::error::Error>> {
    let count = |graph: &ValidGraph, wanted: fn(&Operator) -> bool| {
        graph
            .graph()
            .nodes
            .iter()
            .filter(|node| wanted(&node.operator))
            .count()
    };
    let (rewritten, name) = match configuration.weights {
        Weights::Float32 => return Ok(()),
        Weights::Int8 => (
            count(&quantize(graph, Granularity::PerOutput)?, |operator| {
                matches!(operator, Operator::LinearInt8 { .. })
            }),
            "int8",
        ),
        Weights::PrunedSparse => (
            count(&sparsify(graph, 1.0)?, |operator| {
                matches!(operator, Operator::LinearSparse { .. })
            }),
            "sparse",
        ),
    };
    let layers = count(graph, |operator| {
        matches!(
            operator,
            Operator::Linear | Operator::LinearRelu | Operator::LinearReluSoftmax
        )
    });
    if rewritten != layers {
        return Err(format!("only {rewritten} of {layers} linear layers became {name}").into());
    }
    Ok(())
}

fn density(network: &TrainedNetwork) -> f64 {
    let (non_zero, all) = network
        .layers
        .iter()
        .fold((0, 0), |(non_zero, all), layer| {
            let weights = layer.weights.as_slice();
            (
                non_zero + weights.iter().filter(|&&w| w != 0.0).count(),
                all + weights.len(),
            )
        });
    non_zero as f64 / all as f64
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = Options::parse();
    let hardware = hardware_description(None);
    println!("{hardware}");

    // The network of module 3, and its pruned, fine-tuned copy (the pruning page's recipe).
    let split = Digits::split(0.2, 1)?;
    let config = TrainingConfig::default();
    let (full, _) = train(&config, &split)?;
    let fine_tune = TrainingConfig {
        epochs: 5,
        ..config.clone()
    };
    let (pruned, _) = prune_and_fine_tune(&full, 0.9, &fine_tune, &split)?;
    let reference_predictions = full.predict(&split.test.images);
    println!(
        "{} test images; fp32 reference {:.2} % right; pruned network: {:.1} % of the weights non-zero, {:.2} % right",
        split.test.len(),
        100.0 * accuracy(&reference_predictions, &split.test.labels),
        100.0 * density(&pruned),
        100.0 * pruned.accuracy(&split.test)
    );
    let networks = Networks { full, pruned };
    let measure_one = |configuration| {
        measure(
            configuration,
            &networks,
            &split,
            &reference_predictions,
            options.repeats,
        )
    };

    if let Some(step) = options.only {
        let result = measure_one(step.configuration())?;
        print_step(step.name(), &result);
        return Ok(());
    }

    // The figure: every mode and weights at 1, 64 and all images per call; the ladder is
    // six of these points.
    let mut figure = Figure {
        id: format!("inference-steps-{}", options.machine),
        title: "The digit classifier, step by step: time per image against images per call".into(),
        x: Axis {
            label: "images per call".into(),
            logarithmic: true,
        },
        y: Axis {
            label: "time per image (ms)".into(),
            logarithmic: true,
        },
        hardware: hardware.clone(),
        command: format!(
            "cargo run --release -p galaxy --example inference_steps -- {}; median, fastest and slowest of the passes over the test set ({})",
            std::env::args().skip(1).collect::<Vec<_>>().join(" "),
            std::env::var("GALAXY_RUN_DATE").unwrap_or_else(|_| "date not recorded".into())
        ),
        series: Vec::new(),
    };
    let mut results = Vec::new();
    for (mode, weights) in [
        (ExecutionMode::Cpu, Weights::Float32),
        (ExecutionMode::CpuGraph, Weights::Float32),
        (ExecutionMode::CpuGraph, Weights::Int8),
        (ExecutionMode::CpuGraph, Weights::PrunedSparse),
    ] {
        for batch in [Batch::Images(1), Batch::Images(64), Batch::WholeTestSet] {
            let configuration = Configuration {
                mode,
                weights,
                batch,
            };
            let result = measure_one(configuration)?;
            let times = &result.per_image;
            let series = format!(
                "{} ({:.1} % right)",
                configuration.series(),
                result.accuracy_percent
            );
            figure.push_with_spread(
                &series,
                Point {
                    x: result.images_per_call as f64,
                    y: times.median(),
                },
                times.spread().ok_or("no spread")?,
            );
            results.push((configuration, result));
        }
    }

    println!();
    println!(
        "step | ms per image (min-max) | ms per call | images/s | accuracy % | predictions changed"
    );
    for step in Step::ALL {
        let (_, result) = results
            .iter()
            .find(|(configuration, _)| *configuration == step.configuration())
            .ok_or("a step was not measured")?;
        print_step(step.name(), result);
    }
    std::fs::create_dir_all(&options.out)?;
    figure.write_csv(&options.out)?;
    println!("wrote {}/{}.csv", options.out.display(), figure.id);
    Ok(())
}

fn print_step(name: &str, result: &Measurement) {
    let times = &result.per_image;
    println!(
        "{name} | {:.5} ({:.5}-{:.5}) | {:.4} | {:.0} | {:.2} | {}",
        times.median(),
        times.minimum(),
        times.maximum(),
        times.median() * result.images_per_call as f64,
        1000.0 / times.median(),
        result.accuracy_percent,
        result.changed_predictions
    );
}
