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
//!
//! `steps.rs` names the steps and what each runs; `measure.rs` prepares and times them.

mod measure;
mod steps;

use std::path::PathBuf;

use clap::Parser;
use galaxy::bench::hardware::hardware_description;
use galaxy::bench::repeats::Repeats;
use galaxy::figure::{Axis, Figure, Point};
use galaxy::gpu::GpuContext;
use galaxy::inference::pruning::prune_and_fine_tune;
use galaxy::inference::training::accuracy;
use galaxy::inference::{Digits, TrainedNetwork, TrainingConfig, train};
use galaxy::runner::ExecutionMode;

use measure::{Networks, Prepared, measure_all};
use steps::{Batch, Configuration, Step, Weights};

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
