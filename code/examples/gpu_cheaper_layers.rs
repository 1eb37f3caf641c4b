//! One network stored three ways, `f32`, int8 and sparse (CSR), run in the compiled GPU
//! graph mode and, for comparison, in the CPU graph mode: milliseconds per run.
//!
//! `cargo run --release -p galaxy --example gpu_cheaper_layers -- [--out DIR] [--repeats R]
//!  [--machine NAME] [--largest N]` writes `DIR/inference-gpu-cheaper-<machine>.csv`.
//!
//! The workloads: the digits classifier's shape (64 → 64 → 64 → 10, ReLUs, softmax) for one
//! image and for the 360 test images, and square layers (`N` rows, `N × N` weights, ReLU).
//! Every weight matrix keeps 5 % of its values (the pruned digits network's density) and
//! all three storages hold the same matrices: `f32` multiplies the zeros, int8 quantises
//! them (per output), sparse skips them. A run is `Execution::run` once: the input's
//! upload, every kernel and the result's readback. Each storage's result is checked against
//! the `Cpu` mode on the same graph before anything is timed.

use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use galaxy::bench::hardware::hardware_description;
use galaxy::bench::repeats::Repeats;
use galaxy::cpu::int8::Granularity;
use galaxy::figure::{Axis, Figure, Point, Spread};
use galaxy::gpu::GpuContext;
use galaxy::graph::{ChainBuilder, ValidGraph};
use galaxy::parallel::csr::random_sparse_dense;
use galaxy::runner::{ExecutionMode, WeightStorage};
use galaxy::tensor::{Tensor2d, Tolerance};

#[derive(Parser)]
struct Options {
    /// Where the CSV file goes.
    #[arg(long, default_value = "figures/data")]
    out: PathBuf,
    /// Repeats of every timed point (median, with the fastest and slowest).
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    /// The machine's short name in the file name (e.g. epyc, h100).
    #[arg(long, default_value = "epyc")]
    machine: String,
    /// The largest square layer (a software GPU is slow at 1024).
    #[arg(long, default_value_t = 1024)]
    largest: usize,
}

/// The fraction of weights kept.
const DENSITY: f64 = 0.05;

struct Workload {
    name: String,
    rows: usize,
    /// Layer widths, input first.
    widths: Vec<usize>,
    softmax: bool,
}

impl Workload {
    /// Multiply-adds of one run with dense weights.
    fn multiply_adds(&self) -> f64 {
        let per_row: usize = self.widths.windows(2).map(|pair| pair[0] * pair[1]).sum();
        (self.rows * per_row) as f64
    }

    fn graph(&self, seed: u64) -> Result<ValidGraph, Box<dyn std::error::Error>> {
        let mut chain = ChainBuilder::input(self.rows, self.widths[0]);
        for (layer, pair) in self.widths.windows(2).enumerate() {
            let seed = seed + 10 * layer as u64;
            let weights = random_sparse_dense(pair[0], pair[1], DENSITY, seed);
            let bias = Tensor2d::random(1, pair[1], -0.1..=0.1, seed + 1);
            chain = chain.linear(weights, bias);
            let last = layer + 2 == self.widths.len();
            if !last || !self.softmax {
                chain = chain.relu();
            }
        }
        if self.softmax {
            chain = chain.softmax();
        }
        Ok(chain.output()?)
    }
}

fn workloads(largest: usize) -> Vec<Workload> {
    let digits = |rows: usize| Workload {
        name: format!("digits network, {rows} image(s)"),
        rows,
        widths: vec![64, 64, 64, 10],
        softmax: true,
    };
    let square = |size: usize| Workload {
        name: format!("{size} square layer"),
        rows: size,
        widths: vec![size, size],
        softmax: false,
    };
    let mut all = vec![digits(1), digits(360)];
    all.extend(
        [256, 1024]
            .into_iter()
            .filter(|&size| size <= largest)
            .map(square),
    );
    all
}

/// Median, fastest and slowest of `repeats` timings of `work`, each the mean over enough
/// calls to last about 20 ms, in milliseconds.
fn time_ms(repeats: usize, mut work: impl FnMut()) -> Repeats {
    work();
    let start = Instant::now();
    work();
    let once = start.elapsed().as_secs_f64().max(1e-7);
    let calls = ((0.02 / once).ceil() as usize).clamp(1, 100_000);
    let samples: Vec<f64> = (0..repeats.max(1))
        .map(|_| {
            let start = Instant::now();
            for _ in 0..calls {
                work();
            }
            start.elapsed().as_secs_f64() * 1000.0 / calls as f64
        })
        .collect();
    Repeats::new(samples).expect("at least one sample")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = Options::parse();
    let context = GpuContext::shared()?;
    let hardware = hardware_description(Some(context));
    let mut figure = Figure {
        id: format!("inference-gpu-cheaper-{}", options.machine),
        title: "One network with 5 % of its weights kept, stored as f32, int8 or sparse: milliseconds per run".into(),
        x: Axis {
            label: "multiply-adds per run with dense weights".into(),
            logarithmic: true,
        },
        y: Axis {
            label: "milliseconds per run".into(),
            logarithmic: true,
        },
        hardware: hardware.clone(),
        command: format!(
            "cargo run --release -p galaxy --example gpu_cheaper_layers -- {} ({})",
            std::env::args().skip(1).collect::<Vec<_>>().join(" "),
            std::env::var("GALAXY_RUN_DATE").unwrap_or_else(|_| "date not recorded".into())
        ),
        series: Vec::new(),
    };
    let storages = [
        ("fp32", WeightStorage::Float32),
        ("int8", WeightStorage::Int8(Granularity::PerOutput)),
        (
            "sparse",
            WeightStorage::Sparse {
                maximum_density: 1.0,
            },
        ),
    ];
    println!("{hardware}");
    println!("workload  series  median ms  (min–max)");
    for (index, workload) in workloads(options.largest).iter().enumerate() {
        let graph = workload.graph(100 * index as u64)?;
        let input = Tensor2d::random(workload.rows, workload.widths[0], -1.0..=1.0, 7);
        for (storage_name, storage) in storages {
            let reference = ExecutionMode::Cpu
                .prepare_with_weights(&graph, storage, None)?
                .run(&input, 1)?
                .remove(0);
            for mode in [ExecutionMode::GraphCompiled, ExecutionMode::CpuGraph] {
                let mut execution = mode.prepare_with_weights(&graph, storage, Some(context))?;
                let result = execution.run(&input, 1)?.remove(0);
                let comparison = result.compare(&reference, Tolerance::new(1e-3, 1e-4))?;
                if !comparison.passed() {
                    return Err(format!(
                        "{} {storage_name} {mode:?} differs from the Cpu mode: {comparison}",
                        workload.name
                    )
                    .into());
                }
                let times = time_ms(options.repeats, || {
                    std::hint::black_box(execution.run(&input, 1).expect("the run succeeds"));
                });
                let series = format!("{} {storage_name}", mode.name());
                // The compiled mode runs an `f32` chain as one dispatch of the fused-MLP
                // kernel where it expects that to be faster; int8 and sparse layers never.
                let kernel = if execution.fused_runner().is_some() {
                    ", as one fused kernel"
                } else {
                    ""
                };
                println!(
                    "{}  {series}{kernel}  {:.4}  ({:.4}–{:.4})",
                    workload.name,
                    times.median(),
                    times.minimum(),
                    times.maximum()
                );
                figure.push_with_spread(
                    &series,
                    Point {
                        x: workload.multiply_adds(),
                        y: times.median(),
                    },
                    Spread {
                        minimum: times.minimum(),
                        maximum: times.maximum(),
                    },
                );
            }
        }
    }
    std::fs::create_dir_all(&options.out)?;
    figure.write_csv(&options.out)?;
    println!("wrote {}/{}.csv", options.out.display(), figure.id);
    Ok(())
}
