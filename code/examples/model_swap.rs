//! Serving the digits classifier on one thread while another trains it and publishes a new
//! version after every epoch: the accuracy of the answers as versions arrive, and the
//! server's latency with and without training beside it.
//!
//! `cargo run --release -p galaxy --example model_swap -- [--out DIR] [--repeats R]
//!  [--machine NAME] [--epochs E] [--interval-us U]`
//!
//! Writes `DIR/model-swap-accuracy-<machine>.csv` (the answers of the first run, by request
//! number) and `DIR/model-swap-latency-<machine>.csv` (latency percentiles, median of the
//! runs with the fastest and slowest), and prints both as tables.

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use galaxy::bench::hardware::hardware_description;
use galaxy::bench::repeats::Repeats;
use galaxy::figure::{Axis, Figure, Point};
use galaxy::inference::model_swap::{PipelineConfig, PipelineRun, percentile, run_pipeline};
use galaxy::inference::{Digits, TrainingConfig};

#[derive(Parser)]
struct Options {
    /// Where the CSV files go.
    #[arg(long, default_value = "figures/data")]
    out: PathBuf,
    /// Runs with training and runs without (the latency is the median over them).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// The machine's short name in the file names (e.g. epyc, h100).
    #[arg(long, default_value = "epyc")]
    machine: String,
    /// Epochs of training while serving: one new version each.
    #[arg(long, default_value_t = 12)]
    epochs: usize,
    /// Microseconds between two requests.
    #[arg(long, default_value_t = 200)]
    interval_us: u64,
}

/// Requests per point of the accuracy curve.
const BLOCK: usize = 100;

/// The latency percentiles reported, as the share of requests slower than each (%).
const SLOWER_THAN: [f64; 4] = [50.0, 10.0, 1.0, 0.1];

fn command() -> String {
    format!(
        "cargo run --release -p galaxy --example model_swap -- {} ({})",
        std::env::args().skip(1).collect::<Vec<_>>().join(" "),
        std::env::var("GALAXY_RUN_DATE").unwrap_or_else(|_| "date not recorded".into())
    )
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
        command: command(),
        series: Vec::new(),
    }
}

/// Every request answered once, in order, by versions that never go back: what the design
/// promises, checked on the real run before its numbers are used.
fn check_promises(run: &PipelineRun) -> Result<(), String> {
    for (index, answer) in run.answers.iter().enumerate() {
        if answer.request != index as u64 {
            return Err(format!(
                "answer {index} is for request {}: a request was lost or answered twice",
                answer.request
            ));
        }
    }
    if let Some(pair) = run
        .answers
        .windows(2)
        .find(|pair| pair[1].version < pair[0].version)
    {
        return Err(format!(
            "request {} was answered by version {} after version {}",
            pair[1].request, pair[1].version, pair[0].version
        ));
    }
    Ok(())
}

/// The accuracy of the answers per block of requests, and the test accuracy of the version
/// that answered, as a step at every change of version.
fn accuracy_figure(run: &PipelineRun, options: &Options, hardware: &str) -> Figure {
    let mut result = figure(
        format!("model-swap-accuracy-{}", options.machine),
        "Accuracy of the answers while the model is retrained and swapped",
        ("request number", false),
        ("correct answers (%)", false),
        hardware,
    );
    let correct = run.correct();
    for (block, rights) in correct.chunks(BLOCK).enumerate() {
        if rights.len() < BLOCK {
            break;
        }
        let right = rights.iter().filter(|&&right| right).count();
        result.push(
            &format!("answers right, per {BLOCK} requests"),
            Point {
                x: ((block + 1) * BLOCK) as f64,
                y: 100.0 * right as f64 / BLOCK as f64,
            },
        );
    }
    let test_accuracy = |version: u64| {
        run.publications
            .iter()
            .find(|publication| publication.version == version)
            .map_or(f64::NAN, |publication| {
                100.0 * publication.test_accuracy as f64
            })
    };
    let series = "test accuracy of the answering version";
    let mut previous: Option<u64> = None;
    for answer in &run.answers {
        if previous != Some(answer.version) {
            if let Some(version) = previous {
                // The old version's level up to this request, then the step.
                result.push(
                    series,
                    Point {
                        x: answer.request as f64,
                        y: test_accuracy(version),
                    },
                );
            }
            result.push(
                series,
                Point {
                    x: answer.request as f64,
                    y: test_accuracy(answer.version),
                },
            );
            previous = Some(answer.version);
        }
    }
    if let (Some(version), Some(last)) = (previous, run.answers.last()) {
        result.push(
            series,
            Point {
                x: last.request as f64,
                y: test_accuracy(version),
            },
        );
    }
    result
}

fn latencies(run: &PipelineRun) -> Vec<Duration> {
    run.answers.iter().map(|answer| answer.latency).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = Options::parse();
    let hardware = hardware_description(None);
    let split = Digits::split(0.2, 1)?;
    let training_config = PipelineConfig {
        training: TrainingConfig {
            epochs: options.epochs,
            ..TrainingConfig::default()
        },
        request_interval: Duration::from_micros(options.interval_us),
        ..PipelineConfig::default()
    };
    println!("{hardware}");
    println!(
        "one request every {} µs; {} epochs of training, one version each",
        options.interval_us, options.epochs
    );

    // Runs with and without training take turns, so that whatever else the machine does
    // falls on both alike.
    let mut with_training: Vec<PipelineRun> = Vec::new();
    let mut alone: Vec<PipelineRun> = Vec::new();
    for repeat in 0..options.repeats.max(1) {
        let run = run_pipeline(&split, &training_config)?;
        check_promises(&run)?;
        let served = run.answers.len();
        println!(
            "run {repeat} with training: {served} requests answered in order, versions 0 to {}, \
             last version {:.1} % on the test set",
            run.publications.len() - 1,
            100.0 * run.publications.last().map_or(0.0, |p| p.test_accuracy)
        );
        with_training.push(run);
        // The same number of requests, with no trainer beside the server.
        let alone_config = PipelineConfig {
            train_while_serving: false,
            requests_after_training: served,
            ..training_config.clone()
        };
        let run = run_pipeline(&split, &alone_config)?;
        check_promises(&run)?;
        alone.push(run);
    }

    let accuracy = accuracy_figure(&with_training[0], &options, &hardware);
    println!("\nversion  test accuracy  published after (ms)  first request answered by it");
    for publication in &with_training[0].publications {
        let first = with_training[0]
            .answers
            .iter()
            .find(|answer| answer.version == publication.version)
            .map_or("none".to_string(), |answer| answer.request.to_string());
        println!(
            "{:7}  {:12.1}%  {:19.1}  {first}",
            publication.version,
            100.0 * publication.test_accuracy,
            publication.at.as_secs_f64() * 1000.0
        );
    }
    accuracy.write_csv(&options.out)?;

    let mut latency = figure(
        format!("model-swap-latency-{}", options.machine),
        "Server latency with and without training on another thread",
        ("requests slower than this (%)", true),
        ("latency (ms)", true),
        &hardware,
    );
    println!(
        "\nlatency (µs), median of {} runs (fastest–slowest run)",
        options.repeats
    );
    println!("slower than  serving alone          serving while training");
    for slower in SLOWER_THAN {
        let mut cells = Vec::new();
        for (name, runs) in [
            ("serving alone", &alone),
            ("serving while training", &with_training),
        ] {
            let values: Vec<f64> = runs
                .iter()
                .filter_map(|run| percentile(&latencies(run), 100.0 - slower))
                .map(|duration| duration.as_secs_f64() * 1000.0)
                .collect();
            let repeats = Repeats::new(values).ok_or("no latencies measured")?;
            let point = Point {
                x: slower,
                y: repeats.median(),
            };
            match repeats.spread() {
                Some(spread) => latency.push_with_spread(name, point, spread),
                None => latency.push(name, point),
            }
            cells.push(format!(
                "{:8.1} ({:.1}–{:.1})",
                repeats.median() * 1000.0,
                repeats.minimum() * 1000.0,
                repeats.maximum() * 1000.0
            ));
        }
        println!("{slower:10}%  {:<21}{}", cells[0], cells[1]);
    }
    latency.write_csv(&options.out)?;
    println!(
        "\nwrote {}/model-swap-accuracy-{m}.csv and model-swap-latency-{m}.csv",
        options.out.display(),
        m = options.machine
    );
    Ok(())
}
