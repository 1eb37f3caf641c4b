//! The measurements of module 4's use case "training a neural network": the time of one
//! training epoch on the digits for every version of the training kernels (each a step of the
//! optimisation), by batch size, after checking that every version trains the same network.
//!
//! `cargo run --release -p galaxy --example training_speed -- [--out DIR] [--repeats R]
//!  [--machine NAME] [--epochs E]` writes `DIR/training-speed-<machine>.csv`.

use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use galaxy::bench::hardware::hardware_description;
use galaxy::bench::repeats::Repeats;
use galaxy::figure::{Axis, Figure, Point, Spread};
use galaxy::inference::digits::{CLASSES, PIXELS};
use galaxy::inference::training::{TrainingKernels, continue_training_with};
use galaxy::inference::{Digits, TrainedNetwork, TrainingConfig};

#[derive(Parser)]
struct Options {
    /// Where the CSV file goes.
    #[arg(long, default_value = "figures/data")]
    out: PathBuf,
    /// Timed training runs per point (median, with the fastest and slowest).
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    /// The machine's short name in the file name (e.g. epyc, h100).
    #[arg(long, default_value = "epyc")]
    machine: String,
    /// Epochs per timed run; the time is divided by them.
    #[arg(long, default_value_t = 5)]
    epochs: usize,
}

const BATCH_SIZES: [usize; 5] = [8, 16, 32, 64, 128];

/// The time this thread has spent running on a processor, in seconds: the first number of
/// Linux's `/proc/thread-self/schedstat`, in nanoseconds. Unlike the wall clock, it does
/// not count the time other programs held the processor, so the steps compare fairly on a
/// busy machine. `None` where the file does not exist (then the wall clock is used).
/// On some machines the counter advances in coarse steps (on the H100's Xeon host, apparently
/// 4 ms: its per-epoch times come out as multiples of 0.8 ms at 5 epochs), so there use more
/// `--epochs` to make each timed run last many of those steps.
fn thread_cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanoseconds: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some(nanoseconds / 1e9)
}

/// Seconds spent by `work`: on the processor where Linux reports it, else on the wall clock.
fn time_seconds<T>(work: impl FnOnce() -> T) -> (T, f64) {
    let cpu_start = thread_cpu_seconds();
    let wall_start = Instant::now();
    let result = work();
    let wall = wall_start.elapsed().as_secs_f64();
    match (cpu_start, thread_cpu_seconds()) {
        (Some(start), Some(end)) => (result, end - start),
        _ => (result, wall),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = Options::parse();
    let split = Digits::split(0.2, 1)?;
    let defaults = TrainingConfig::default();
    let mut figure = Figure {
        id: format!("training-speed-{}", options.machine),
        title: "Training the digits network: time per epoch, step by step".to_string(),
        x: Axis {
            label: "examples per batch".to_string(),
            logarithmic: true,
        },
        y: Axis {
            label: "processor time per epoch (ms)".to_string(),
            logarithmic: true,
        },
        hardware: hardware_description(None),
        command: format!(
            "cargo run --release -p galaxy --example training_speed -- {} ({})",
            std::env::args().skip(1).collect::<Vec<_>>().join(" "),
            std::env::var("GALAXY_RUN_DATE").unwrap_or_else(|_| "date not recorded".into())
        ),
        series: Vec::new(),
    };
    println!("batch  version               ms per epoch (min-max)");
    for batch_size in BATCH_SIZES {
        let config = TrainingConfig {
            epochs: options.epochs,
            batch_size,
            ..defaults.clone()
        };
        let start = TrainedNetwork::initialise(PIXELS, &config.hidden_sizes, CLASSES, config.seed);
        let mut reference = None;
        for kernels in TrainingKernels::ALL {
            let mut samples = Vec::new();
            for _ in 0..options.repeats.max(1) {
                let (trained, seconds) = time_seconds(|| {
                    continue_training_with(start.clone(), None, &config, &split, kernels)
                });
                let trained = trained?;
                samples.push(seconds * 1000.0 / config.epochs as f64);
                // Every version must train the same network, bit for bit.
                match &reference {
                    None => reference = Some(trained),
                    Some(expected) => assert_eq!(
                        &trained, expected,
                        "{kernels:?} trained another network at batch {batch_size}"
                    ),
                }
            }
            let repeats = Repeats::new(samples).expect("at least one run");
            figure.push_with_spread(
                &format!("{kernels:?}"),
                Point {
                    x: batch_size as f64,
                    y: repeats.median(),
                },
                Spread {
                    minimum: repeats.minimum(),
                    maximum: repeats.maximum(),
                },
            );
            println!(
                "{batch_size:5}  {:20}  {:8.3} ({:.3}-{:.3})",
                format!("{kernels:?}"),
                repeats.median(),
                repeats.minimum(),
                repeats.maximum()
            );
        }
    }
    std::fs::create_dir_all(&options.out)?;
    figure.write_csv(&options.out)?;
    println!("wrote {}/{}.csv", options.out.display(), figure.id);
    Ok(())
}
