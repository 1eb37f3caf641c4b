//! The digit classifier of module 3, made cheaper to run one step at a time: the time per
//! image and the test accuracy of every step, on the CPU.
//!
//! `cargo run --release -p galaxy --example inference_steps -- [--out DIR] [--repeats R]
//!  [--machine NAME] [--only STEP] [--gpu]` writes `DIR/inference-steps-<machine>.csv` (time
//! per image against images per call, one series per way of running the network) and prints
//! the ladder of steps as a table. `--only STEP` runs one step alone and writes nothing, for a
//! profiler to watch it. `--gpu` also runs the three kinds of weights in the `GraphCompiled`
//! mode on the GPU and writes `DIR/inference-steps-gpu-<machine>.csv` instead: those three
//! series beside the `CpuGraph` fp32 one.
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
use galaxy::bench::repeats::{Repeats, interleaved};
use galaxy::compiler::{quantize, sparsify};
use galaxy::cpu::int8::Granularity;
use galaxy::figure::{Axis, Figure, Point};
use galaxy::gpu::GpuContext;
use galaxy::graph::{Operator, ValidGraph};
use galaxy::inference::pruning::prune_and_fine_tune;
use galaxy::inference::training::{accuracy, argmax_rows};
use galaxy::inference::{Digits, Split, TrainedNetwork, TrainingConfig, train};
use galaxy::runner::ExecutionMode;
use galaxy::runner::execution::{Execution, WeightStorage};
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
    /// Also run the network on the GPU (`GraphCompiled`), into a second file.
    #[arg(long)]
    gpu: bool,
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
            (ExecutionMode::CpuGraph, Weights::Float32) => "fp32, CpuGraph",
            (ExecutionMode::CpuGraph, Weights::Int8) => "int8, CpuGraph",
            (ExecutionMode::CpuGraph, Weights::PrunedSparse) => "pruned 90 %, sparse, CpuGraph",
            (_, Weights::Float32) => "fp32, GraphCompiled",
            (_, Weights::Int8) => "int8, GraphCompiled",
            (_, Weights::PrunedSparse) => "pruned 90 %, sparse, GraphCompiled",
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

/// One configuration, prepared: its executions (one per call size: a last, shorter batch
/// needs its own), the test images cut into its batches, and what its first pass found.
struct Prepared {
    executions: Vec<(usize, Execution<'static>)>,
    batches: Vec<Tensor2d>,
    images: usize,
    images_per_call: usize,
    /// Passes over the test set per timed sample.
    passes: usize,
    accuracy_percent: f64,
    /// Test images whose predicted class differs from the full fp32 network's.
    changed_predictions: usize,
    predictions: Vec<u8>,
}

// ANCHOR: measure
impl Prepared {
    /// Prepares the graphs (the weight passes run here, once, not in the timed passes),
    /// runs one pass to measure the accuracy, and a second to decide how many passes one
    /// sample takes.
    fn new(
        configuration: Configuration,
        networks: &Networks,
        split: &Split,
        reference_predictions: &[u8],
        context: Option<&'static GpuContext>,
    ) -> Result<Prepared, Box<dyn std::error::Error>> {
        let test = &split.test;
        let images_per_call = match configuration.batch {
            Batch::Images(count) => count.min(test.len()),
            Batch::WholeTestSet => test.len(),
        };
        let network = match configuration.weights {
            Weights::PrunedSparse => &networks.pruned,
            _ => &networks.full,
        };
        let mut executions = Vec::new();
        for rows in batch_sizes(test.len(), images_per_call) {
            let graph = network.to_graph(rows)?;
            check_storage(&graph, configuration)?;
            let execution = configuration.mode.prepare_with_weights(
                &graph,
                configuration.storage(),
                context,
            )?;
            executions.push((rows, execution));
        }
        let mut prepared = Prepared {
            executions,
            batches: cut_into_batches(&test.images, images_per_call)?,
            images: test.len(),
            images_per_call,
            passes: 1,
            accuracy_percent: 0.0,
            changed_predictions: 0,
            predictions: Vec::with_capacity(test.len()),
        };
        prepared.pass()?;
        prepared.accuracy_percent = 100.0 * accuracy(&prepared.predictions, &test.labels) as f64;
        prepared.changed_predictions = prepared
            .predictions
            .iter()
            .zip(reference_predictions)
            .filter(|(a, b)| a != b)
            .count();
        // Enough passes per sample to last about 20 ms, so that the clock's resolution
        // and one-off interruptions matter little.
        let start = Instant::now();
        prepared.pass()?;
        let once = start.elapsed().as_secs_f64().max(1e-7);
        prepared.passes = ((0.02 / once).ceil() as usize).clamp(1, 10_000);
        Ok(prepared)
    }

    /// One pass over the test set: every batch through the execution prepared for its
    /// size, the class probabilities read back and turned into predictions.
    fn pass(&mut self) -> Result<(), Box<dyn std::error::Error>> {
        self.predictions.clear();
        for batch in &self.batches {
            let (_, execution) = self
                .executions
                .iter_mut()
                .find(|(rows, _)| *rows == batch.rows())
                .ok_or("no execution prepared for a batch size")?;
            let probabilities = execution.run(batch, 1)?;
            self.predictions.extend(argmax_rows(&probabilities[0]));
        }
        Ok(())
    }

    /// One timed sample: milliseconds per image over `passes` passes.
    fn sample(&mut self) -> Result<f64, Box<dyn std::error::Error>> {
        let start = Instant::now();
        for _ in 0..self.passes {
            self.pass()?;
        }
        let milliseconds = start.elapsed().as_secs_f64() * 1000.0;
        Ok(milliseconds / (self.passes * self.images) as f64)
    }
}
// ANCHOR_END: measure

/// Prepares every configuration, then takes `repeats` samples of each, interleaved (one of
/// each in turn), so that whatever else the machine does slows every configuration alike.
fn measure_all(
    configurations: &[Configuration],
    networks: &Networks,
    split: &Split,
    reference_predictions: &[u8],
    repeats: usize,
    context: Option<&'static GpuContext>,
) -> Result<Vec<(Prepared, Repeats)>, Box<dyn std::error::Error>> {
    let mut prepared = configurations
        .iter()
        .map(|&configuration| {
            Prepared::new(
                configuration,
                networks,
                split,
                reference_predictions,
                context,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let samples = interleaved(prepared.len(), repeats, |index, _| {
        prepared[index].sample().map(Some)
    })?;
    prepared
        .into_iter()
        .zip(samples)
        .map(|(prepared, samples)| Ok((prepared, Repeats::new(samples).ok_or("no samples")?)))
        .collect()
}

/// The call sizes a pass over `total` images in calls of `per_call` needs: `per_call`, and
/// the remainder if there is one.
fn batch_sizes(total: usize, per_call: usize) -> Vec<usize> {
    let mut sizes = Vec::new();
    if total >= per_call {
        sizes.push(per_call);
    }
    if !total.is_multiple_of(per_call) {
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
    let context = if options.gpu {
        Some(GpuContext::shared()?)
    } else {
        None
    };
    let hardware = hardware_description(context);
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

    if let Some(step) = options.only {
        let results = measure_all(
            &[step.configuration()],
            &networks,
            &split,
            &reference_predictions,
            options.repeats,
            None,
        )?;
        let (prepared, times) = &results[0];
        print_step(step.name(), prepared, times);
        return Ok(());
    }

    // The figure: every mode and weights at 1, 64 and all images per call; the ladder is
    // six of these points. With `--gpu`, the GPU mode's three kinds of weights join the same
    // interleaved run, and go into a second figure beside the `CpuGraph` fp32 series.
    let mut kinds = vec![
        (ExecutionMode::Cpu, Weights::Float32),
        (ExecutionMode::CpuGraph, Weights::Float32),
        (ExecutionMode::CpuGraph, Weights::Int8),
        (ExecutionMode::CpuGraph, Weights::PrunedSparse),
    ];
    if context.is_some() {
        for weights in [Weights::Float32, Weights::Int8, Weights::PrunedSparse] {
            kinds.push((ExecutionMode::GraphCompiled, weights));
        }
    }
    let mut configurations = Vec::new();
    for (mode, weights) in kinds {
        for batch in [Batch::Images(1), Batch::Images(64), Batch::WholeTestSet] {
            configurations.push(Configuration {
                mode,
                weights,
                batch,
            });
        }
    }
    let results = measure_all(
        &configurations,
        &networks,
        &split,
        &reference_predictions,
        options.repeats,
        context,
    )?;
    let measured: Vec<(Configuration, &Prepared, &Repeats)> = configurations
        .iter()
        .zip(&results)
        .map(|(&configuration, (prepared, times))| (configuration, prepared, times))
        .collect();
    let command = format!(
        "cargo run --release -p galaxy --example inference_steps -- {}; median, fastest and slowest of the samples, interleaved, each a whole number of passes over the test set ({})",
        std::env::args().skip(1).collect::<Vec<_>>().join(" "),
        std::env::var("GALAXY_RUN_DATE").unwrap_or_else(|_| "date not recorded".into())
    );
    // With a GPU in the same process (lavapipe runs its shaders on the same cores), the CPU
    // series are measured beside it, so a `--gpu` run writes the GPU figure only.
    let figure = if context.is_some() {
        figure_of(
            format!("inference-steps-gpu-{}", options.machine),
            "The digit classifier on the GPU: time per image against images per call",
            &hardware,
            &command,
            measured.iter().filter(|(configuration, _, _)| {
                configuration.mode.uses_gpu()
                    || (configuration.mode == ExecutionMode::CpuGraph
                        && configuration.weights == Weights::Float32)
            }),
        )?
    } else {
        figure_of(
            format!("inference-steps-{}", options.machine),
            "The digit classifier, step by step: time per image against images per call",
            &hardware,
            &command,
            measured.iter(),
        )?
    };

    println!();
    println!(
        "step | ms per image (min-max) | ms per call | images/s | accuracy % | predictions changed"
    );
    for step in Step::ALL {
        let (_, prepared, times) = measured
            .iter()
            .find(|(configuration, _, _)| *configuration == step.configuration())
            .ok_or("a step was not measured")?;
        print_step(step.name(), prepared, times);
    }
    for (configuration, prepared, times) in &measured {
        if configuration.mode.uses_gpu() {
            let name = format!(
                "GPU: {}, {} images per call",
                configuration.series(),
                prepared.images_per_call
            );
            print_step(&name, prepared, times);
        }
    }
    std::fs::create_dir_all(&options.out)?;
    figure.write_csv(&options.out)?;
    println!("wrote {}/{}.csv", options.out.display(), figure.id);
    Ok(())
}

/// A figure of time per image against images per call, one series per mode and weights,
/// each named with the test accuracy its run measured.
fn figure_of<'a>(
    id: String,
    title: &str,
    hardware: &str,
    command: &str,
    measured: impl Iterator<Item = &'a (Configuration, &'a Prepared, &'a Repeats)>,
) -> Result<Figure, Box<dyn std::error::Error>> {
    let mut figure = Figure {
        id,
        title: title.into(),
        x: Axis {
            label: "images per call".into(),
            logarithmic: true,
        },
        y: Axis {
            label: "time per image (ms)".into(),
            logarithmic: true,
        },
        hardware: hardware.into(),
        command: command.into(),
        series: Vec::new(),
    };
    for (configuration, prepared, times) in measured {
        let series = format!(
            "{} ({:.1} % right)",
            configuration.series(),
            prepared.accuracy_percent
        );
        figure.push_with_spread(
            &series,
            Point {
                x: prepared.images_per_call as f64,
                y: times.median(),
            },
            times.spread().ok_or("no spread")?,
        );
    }
    Ok(figure)
}

fn print_step(name: &str, prepared: &Prepared, times: &Repeats) {
    println!(
        "{name} | {:.5} ({:.5}-{:.5}) | {:.4} | {:.0} | {:.2} | {}",
        times.median(),
        times.minimum(),
        times.maximum(),
        times.median() * prepared.images_per_call as f64,
        1000.0 / times.median(),
        prepared.accuracy_percent,
        prepared.changed_predictions
    );
}
