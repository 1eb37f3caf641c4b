//! How fast one linear layer runs in int8 against fp32, by size, on the CPU and the GPU.
//!
//! `cargo run --release -p galaxy --example int8_speed -- [--out DIR] [--repeats R]
//!  [--machine NAME] [--gpu-largest N] [--no-gpu]` writes `DIR/inference-int8-speed-<machine>.csv`.
//!
//! What each series counts, per call, all with the weights prepared once beforehand:
//! - CPU fp32: `PrepackedLinear` (weights packed once), `x · W + b` into a preallocated output.
//! - CPU int8 layer: quantising the input rows (one scale per row), the int8 product with
//!   `i32` sums, and scaling each sum back to `f32` plus the bias: the whole int8 layer.
//! - CPU int8 product (one per kernel): the product alone, on activations quantised once.
//! - GPU: a one-layer graph run (`GraphCached`, `GraphCompiled`) and `GpuInt8Linear::run`
//!   (both kernels): upload of the input, the dispatch and the readback of the result; the
//!   int8 layer also quantises and packs the input on the host.

use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use galaxy::bench::hardware::hardware_description;
use galaxy::bench::repeats::Repeats;
use galaxy::cpu::int8_matmul::{Int8CpuKernel, PackedInt8Weights};
use galaxy::cpu::prepacked::PrepackedLinear;
use galaxy::figure::{Axis, Figure, Point, Spread};
use galaxy::gpu::GpuContext;
use galaxy::graph::ChainBuilder;
use galaxy::inference::gpu_int8::{GpuInt8Linear, Int8Kernel};
use galaxy::inference::quantization::{Granularity, QuantizedWeights, quantize_rows};
use galaxy::runner::ExecutionMode;
use galaxy::tensor::Tensor2d;

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
    /// The largest square layer run on the GPU (a software GPU is slow at 2048).
    #[arg(long, default_value_t = 1024)]
    gpu_largest: usize,
    /// The largest square layer run with the portable int8 loop.
    #[arg(long, default_value_t = 1024)]
    portable_largest: usize,
    /// Measure the CPU only.
    #[arg(long)]
    no_gpu: bool,
}

/// One layer shape: `rows × inputs` activations, `inputs × outputs` weights.
#[derive(Clone, Copy)]
struct LayerShape {
    name: &'static str,
    rows: usize,
    inputs: usize,
    outputs: usize,
}

impl LayerShape {
    fn multiply_adds(self) -> f64 {
        (self.rows * self.inputs * self.outputs) as f64
    }

    fn largest_side(self) -> usize {
        self.rows.max(self.inputs).max(self.outputs)
    }
}

const SHAPES: [LayerShape; 7] = [
    LayerShape {
        name: "digits hidden layer, 1 image",
        rows: 1,
        inputs: 64,
        outputs: 64,
    },
    LayerShape {
        name: "64 square",
        rows: 64,
        inputs: 64,
        outputs: 64,
    },
    LayerShape {
        name: "digits hidden layer, 360 images",
        rows: 360,
        inputs: 64,
        outputs: 64,
    },
    LayerShape {
        name: "256 square",
        rows: 256,
        inputs: 256,
        outputs: 256,
    },
    LayerShape {
        name: "512 square",
        rows: 512,
        inputs: 512,
        outputs: 512,
    },
    LayerShape {
        name: "1024 square",
        rows: 1024,
        inputs: 1024,
        outputs: 1024,
    },
    LayerShape {
        name: "2048 square",
        rows: 2048,
        inputs: 2048,
        outputs: 2048,
    },
];

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

/// Adds a point in billions of multiply-adds per second: the median time gives the point,
/// the slowest and fastest times its spread.
fn push_rate(figure: &mut Figure, series: &str, shape: LayerShape, times: &Repeats) -> f64 {
    let rate = |ms: f64| shape.multiply_adds() / (ms / 1000.0) / 1e9;
    figure.push_with_spread(
        series,
        Point {
            x: shape.multiply_adds(),
            y: rate(times.median()),
        },
        Spread {
            minimum: rate(times.maximum()),
            maximum: rate(times.minimum()),
        },
    );
    rate(times.median())
}

// ANCHOR: int8_layer
/// The whole int8 layer on the CPU: quantise each input row with its own scale, multiply
/// in int8 with exact `i32` sums, and scale each sum back:
/// `y[r][o] = sums[r][o] · input_scale[r] · weight_scale[o] + bias[o]`.
fn int8_layer(
    input: &Tensor2d,
    weights: &QuantizedWeights,
    packed: &PackedInt8Weights,
    bias: &[f32],
    sums: &mut [i32],
    output: &mut [f32],
) {
    let quantized = quantize_rows(input).expect("finite input");
    packed
        .multiply(input.rows(), &quantized.values, sums)
        .expect("shapes match");
    let outputs = weights.outputs();
    let rows = sums
        .chunks_exact(outputs)
        .zip(output.chunks_exact_mut(outputs));
    for ((row_sums, output_row), &input_scale) in rows.zip(&quantized.scales) {
        for (output_index, (value, &sum)) in output_row.iter_mut().zip(row_sums).enumerate() {
            *value = sum as f32 * input_scale * weights.scale(output_index) + bias[output_index];
        }
    }
}
// ANCHOR_END: int8_layer

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = Options::parse();
    let context = if options.no_gpu {
        None
    } else {
        Some(GpuContext::shared()?)
    };
    let hardware = hardware_description(context);
    let fastest = Int8CpuKernel::fastest();
    let mut figure = Figure {
        id: format!("inference-int8-speed-{}", options.machine),
        title: "One linear layer in fp32 and in int8: multiply-adds per second by size".into(),
        x: Axis {
            label: "multiply-adds per layer (rows × inputs × outputs), log".into(),
            logarithmic: true,
        },
        y: Axis {
            label: "billion multiply-adds per second, log".into(),
            logarithmic: true,
        },
        hardware: format!("{hardware}; fastest CPU int8 kernel {}", fastest.name()),
        command: format!(
            "cargo run --release -p galaxy --example int8_speed -- {} ({})",
            std::env::args().skip(1).collect::<Vec<_>>().join(" "),
            std::env::var("GALAXY_RUN_DATE").unwrap_or_else(|_| "date not recorded".into())
        ),
        series: Vec::new(),
    };
    println!("{hardware}");
    println!("shape  series  median ms  (min–max)  G multiply-adds/s");
    for shape in SHAPES {
        let input = Tensor2d::random(shape.rows, shape.inputs, -1.0..=1.0, 3);
        let weights = Tensor2d::random(shape.inputs, shape.outputs, -0.1..=0.1, 4);
        let bias = Tensor2d::random(1, shape.outputs, -0.1..=0.1, 5);
        let quantized = QuantizedWeights::quantize(&weights, Granularity::PerOutput)?;
        let mut report = |series: &str, times: Repeats| {
            let rate = push_rate(&mut figure, series, shape, &times);
            println!(
                "{}  {series}  {:.4}  ({:.4}–{:.4})  {rate:.1}",
                shape.name,
                times.median(),
                times.minimum(),
                times.maximum()
            );
        };

        // CPU, fp32: the register-blocked linear with its weights packed once.
        let fp32 = PrepackedLinear::new(&weights, &bias)?;
        let mut output = vec![0.0f32; shape.rows * shape.outputs];
        let mut scratch = Vec::new();
        let times = time_ms(options.repeats, || {
            fp32.compute_rows(input.as_slice(), &mut output, false, &mut scratch);
            std::hint::black_box(&output);
        });
        report("CPU fp32", times);

        // CPU, int8: the whole layer, then the product alone with each kernel.
        let packed = PackedInt8Weights::new(shape.inputs, shape.outputs, quantized.values())?;
        let mut sums = vec![0i32; shape.rows * shape.outputs];
        let bias_values = bias.as_slice();
        let times = time_ms(options.repeats, || {
            int8_layer(
                &input,
                &quantized,
                &packed,
                bias_values,
                &mut sums,
                &mut output,
            );
            std::hint::black_box(&output);
        });
        report("CPU int8 layer, input quantised", times);
        let activations = quantize_rows(&input)?.values;
        for kernel in Int8CpuKernel::all_available() {
            if kernel.name() == "portable" && shape.largest_side() > options.portable_largest {
                continue;
            }
            let packed = PackedInt8Weights::with_kernel(
                kernel,
                shape.inputs,
                shape.outputs,
                quantized.values(),
            )?;
            let times = time_ms(options.repeats, || {
                packed
                    .multiply(shape.rows, &activations, &mut sums)
                    .expect("shapes match");
                std::hint::black_box(&sums);
            });
            report(&format!("CPU int8 product, {}", kernel.name()), times);
        }

        // GPU: the same layer as a one-layer graph in fp32, and the int8 layer.
        let Some(context) = context else { continue };
        if shape.largest_side() > options.gpu_largest {
            continue;
        }
        let graph = ChainBuilder::input(shape.rows, shape.inputs)
            .linear(weights.clone(), bias.clone())
            .output()?;
        for mode in [ExecutionMode::GraphCached, ExecutionMode::GraphCompiled] {
            let mut execution = mode.prepare(&graph, Some(context))?;
            let times = time_ms(options.repeats, || {
                std::hint::black_box(execution.run(&input, 1).expect("the run succeeds"));
            });
            report(&format!("GPU fp32, {mode:?}"), times);
        }
        for (kernel, name) in [
            (Int8Kernel::PackedDotProduct, "GPU int8, dot4I8Packed"),
            (Int8Kernel::Unpacked, "GPU int8, bytes unpacked"),
        ] {
            let layer = GpuInt8Linear::new(context, &quantized, &bias, kernel)?;
            let times = time_ms(options.repeats, || {
                std::hint::black_box(layer.run(context, &input).expect("the run succeeds"));
            });
            report(name, times);
        }
    }
    std::fs::create_dir_all(&options.out)?;
    figure.write_csv(&options.out)?;
    println!("wrote {}/{}.csv", options.out.display(), figure.id);
    Ok(())
}
