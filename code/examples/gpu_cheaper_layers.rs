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
//! the `Cpu` mode on the same graph before anything is timed: within a relative 1e-3 and an
//! absolute 1e-4, and for int8 within that plus what one-level flips of the GPU's
//! quantisation can do where its division is not exact (`int8_flip_allowance`).

use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use galaxy::bench::hardware::hardware_description;
use galaxy::bench::repeats::Repeats;
use galaxy::cpu::int8::{Granularity, QuantizedWeights, linear_int8_into};
use galaxy::figure::{Axis, Figure, Point, Spread};
use galaxy::gpu::GpuContext;
use galaxy::gpu::quantization_flips::{SCALE_RELATIVE_ERROR, flip_bounds_with_input_error};
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

    /// Each layer's weights and bias.
    fn layers(&self, seed: u64) -> Vec<(Tensor2d, Tensor2d)> {
        let mut layers = Vec::new();
        for (layer, pair) in self.widths.windows(2).enumerate() {
            let seed = seed + 10 * layer as u64;
            let weights = random_sparse_dense(pair[0], pair[1], DENSITY, seed);
            let bias = Tensor2d::random(1, pair[1], -0.1..=0.1, seed + 1);
            layers.push((weights, bias));
        }
        layers
    }

    /// Whether layer `layer` is followed by a ReLU.
    fn relu_after(&self, layer: usize) -> bool {
        let last = layer + 2 == self.widths.len();
        !last || !self.softmax
    }

    fn graph(
        &self,
        layers: &[(Tensor2d, Tensor2d)],
    ) -> Result<ValidGraph, Box<dyn std::error::Error>> {
        let mut chain = ChainBuilder::input(self.rows, self.widths[0]);
        for (layer, (weights, bias)) in layers.iter().enumerate() {
            chain = chain.linear(weights.clone(), bias.clone());
            if self.relu_after(layer) {
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

/// The int8 network's allowance on top of the flat tolerance, element by element. Vulkan
/// lets a GPU divide with 2.5 ulp of error, so its quantisation may put an activation that
/// sits within a few ulp of a half-way point on the neighbouring level (lavapipe divides
/// exactly; an NVIDIA H100 does not). Layer by layer, on the CPU's values: what such flips
/// can do to each output (`flip_bounds_with_input_error`), the rounding of the last
/// scale-and-add (`4 ε (|product| + |result|)`, as in `code/tests/gpu_int8_sparse.rs`) and
/// the GPU's row scale being 3 ε off, carried as the next layer's input error. A softmax at
/// the end scales logits that are each `d` off by at most `e^(2d)`, so a probability `p`
/// moves by at most `p (e^(2d) − 1)`, `d` the row's largest logit error.
fn int8_flip_allowance(
    workload: &Workload,
    layers: &[(Tensor2d, Tensor2d)],
    input: &Tensor2d,
) -> Result<Tensor2d, Box<dyn std::error::Error>> {
    let mut values = input.clone();
    let mut errors = Tensor2d::zeros(input.rows(), input.columns());
    for (layer, (weights, bias)) in layers.iter().enumerate() {
        let quantized = QuantizedWeights::quantize(weights, Granularity::PerOutput)?;
        let flips = flip_bounds_with_input_error(&values, &errors, &quantized)?;
        let mut result = Tensor2d::zeros(values.rows(), quantized.outputs());
        linear_int8_into(&values, &quantized, bias, false, &mut result)?;
        let mut next_errors = Tensor2d::zeros(result.rows(), result.columns());
        for row in 0..result.rows() {
            for column in 0..result.columns() {
                let value = result.get(row, column);
                let product = (value - bias.get(0, column)).abs();
                let rounding = 4.0 * f32::EPSILON * (product + value.abs());
                let allowed = rounding + SCALE_RELATIVE_ERROR * product + flips.get(row, column);
                next_errors.set(row, column, allowed);
                // A ReLU cannot widen a difference.
                if workload.relu_after(layer) {
                    result.set(row, column, value.max(0.0));
                }
            }
        }
        values = result;
        errors = next_errors;
    }
    if workload.softmax {
        let probabilities = galaxy::cpu::softmax(&values)?;
        for row in 0..values.rows() {
            let largest = errors.row(row).iter().fold(0.0f32, |max, &e| max.max(e));
            let growth = (2.0 * largest).exp_m1();
            for column in 0..values.columns() {
                errors.set(row, column, probabilities.get(row, column) * growth);
            }
        }
    }
    Ok(errors)
}

/// Checks `result` against the Cpu mode's `reference`: every element within a relative 1e-3
/// and an absolute 1e-4 plus `allowance`. Says how many needed the allowance.
fn check(
    result: &Tensor2d,
    reference: &Tensor2d,
    allowance: Option<&Tensor2d>,
    what: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let comparison = result.compare(reference, Tolerance::new(1e-3, 1e-4))?;
    let Some(allowance) = allowance else {
        return if comparison.passed() {
            Ok(())
        } else {
            Err(format!("{what} differs from the Cpu mode: {comparison}").into())
        };
    };
    let mut beyond_flat = 0;
    for index in 0..result.len() {
        let (got, want) = (result.as_slice()[index], reference.as_slice()[index]);
        let flat = 1e-4 + 1e-3 * want.abs();
        let allowed = flat + allowance.as_slice()[index];
        let difference = (got - want).abs();
        if difference.is_nan() || difference > allowed {
            let (row, column) = (index / result.columns(), index % result.columns());
            return Err(format!(
                "{what} differs from the Cpu mode at (row {row}, column {column}): got {got}, \
                 expected {want}, allowed {allowed} (relative 1e-3, absolute 1e-4, plus {} \
                 for one-level flips of the quantisation)",
                allowance.as_slice()[index]
            )
            .into());
        }
        if difference > flat {
            beyond_flat += 1;
        }
    }
    println!(
        "int8 check, {what}: {beyond_flat} of {} outputs beyond relative 1e-3 / absolute 1e-4, \
         all within the flip bound",
        result.len()
    );
    Ok(())
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
        let layers = workload.layers(100 * index as u64);
        let graph = workload.graph(&layers)?;
        let input = Tensor2d::random(workload.rows, workload.widths[0], -1.0..=1.0, 7);
        let flip_allowance = int8_flip_allowance(workload, &layers, &input)?;
        for (storage_name, storage) in storages {
            let reference = ExecutionMode::Cpu
                .prepare_with_weights(&graph, storage, None)?
                .run(&input, 1)?
                .remove(0);
            for mode in [ExecutionMode::GraphCompiled, ExecutionMode::CpuGraph] {
                let mut execution = mode.prepare_with_weights(&graph, storage, Some(context))?;
                let result = execution.run(&input, 1)?.remove(0);
                let allowance = (storage_name == "int8").then_some(&flip_allowance);
                let what = format!("{} {storage_name} {mode:?}", workload.name);
                check(&result, &reference, allowance, &what)?;
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
