//! Half precision and matrix units on the GPU, against fp32: names the adapter and the
//! features it reports, measures the device's fp32 peak, then times square products of
//! each size with the data on the GPU — the crate's fastest fp32 linear kernel (chosen by
//! measuring), its 16 × 16 tiled fp32 kernel, the f16 linear kernel with f32 and with f16
//! sums, and the cooperative-matrix (tensor-core) kernel where the adapter offers it —
//! checks every result on a sample of elements against an exact product, and reports
//! GFLOP/s (median, fastest and slowest of the repeats). Then the digits network with f16
//! weights and activations on the GPU, against fp32.
//!
//! `cargo run --release -p galaxy --example tensor_cores -- [--out DIR] [--machine NAME]
//!  [--sizes 1024,2048,4096] [--repeats 5] [--skip-digits]`
//! writes `DIR/tensor-cores-<machine>.csv` (the speeds) and
//! `DIR/tensor-cores-digits-<machine>.txt` (the accuracies).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use galaxy::bench::gpu_peak::{PeakSettings, gpu_peak};
use galaxy::bench::hardware::hardware_description;
use galaxy::bench::repeats::Repeats;
use galaxy::figure::{Axis, Figure, Point};
use galaxy::gpu::linear_search::{LinearShape, search};
use galaxy::gpu::record::BoundDispatch;
use galaxy::gpu::{
    GpuContext, GpuTensor, LinearStrategy, PipelineCache, Readback, ShaderCompilation,
};
use galaxy::inference::cooperative_matrix::{
    CooperativeMatmul, MATRIX_UNIT_SUM_ROUNDOFF, SampledCheck, adapter_of, check_sampled,
    describe_configuration,
};
use galaxy::inference::gpu_f16::{
    GpuF16Linear, HALF_UNIT_ROUNDOFF, HalfAccumulation, SINGLE_UNIT_ROUNDOFF, round_to_half,
    seconds_per_dispatch,
};
use galaxy::inference::training::{accuracy, argmax_rows};
use galaxy::inference::{Digits, TrainedNetwork, TrainingConfig, train};
use galaxy::tensor::Tensor2d;

#[derive(Parser)]
struct Options {
    /// Where the CSV and text files go.
    #[arg(long, default_value = "figures/data")]
    out: PathBuf,
    /// The machine's short name in the file names (e.g. epyc, h100).
    #[arg(long, default_value = "epyc")]
    machine: String,
    /// The sizes n of the n × n × n products.
    #[arg(long, value_delimiter = ',', default_value = "1024,2048,4096")]
    sizes: Vec<usize>,
    /// Repeats of every timed point (median, with the fastest and slowest).
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    /// Leave out the digits network.
    #[arg(long)]
    skip_digits: bool,
}

/// Elements of each result checked against an exact f64 product.
const CHECKED_ELEMENTS: usize = 256;
/// Each repeat records enough dispatches to last about this long on the GPU.
const SECONDS_PER_REPEAT: f64 = 0.05;

const SERIES_FASTEST_F32: &str = "fp32, fastest kernel";
const SERIES_TILED_F32: &str = "fp32, tiled 16×16";
const SERIES_PEAK: &str = "fp32 peak (peak_fma, measured)";
const SERIES_COOPERATIVE: &str = "f16 on matrix units, f32 sums";

/// GFLOP/s of `repeats` timings of `dispatch` on an n × n × n product.
fn time_gflops(
    context: &GpuContext,
    dispatch: &BoundDispatch,
    size: usize,
    repeats: usize,
) -> Result<Repeats, Box<dyn std::error::Error>> {
    let flops = 2.0 * (size as f64).powi(3);
    let once = seconds_per_dispatch(context, dispatch, 1)?.max(1e-6);
    let count = (SECONDS_PER_REPEAT / once).ceil().clamp(1.0, 200.0) as u32;
    let samples = (0..repeats.max(1))
        .map(|_| {
            seconds_per_dispatch(context, dispatch, count).map(|seconds| flops / seconds / 1e9)
        })
        .collect::<Result<Vec<f64>, _>>()?;
    Ok(Repeats::new(samples).expect("at least one repeat"))
}

fn report(figure: &mut Figure, series: &str, size: usize, gflops: &Repeats, check: &SampledCheck) {
    println!(
        "{size:>6}  {series:<34} {:>9.1} GFLOP/s ({:.1}–{:.1})  worst error {:.1e} of Σ|x·w|, \
         {}/{} elements within the bound",
        gflops.median(),
        gflops.minimum(),
        gflops.maximum(),
        check.worst_relative_error,
        check.checked - check.failures,
        check.checked
    );
    if check.failures > 0 {
        println!("        ^ FAILED its check: not drawn");
        return;
    }
    let point = Point {
        x: size as f64,
        y: gflops.median(),
    };
    match gflops.spread() {
        Some(spread) => figure.push_with_spread(series, point, spread),
        None => figure.push(series, point),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = Options::parse();
    let started = Instant::now();
    let context = GpuContext::shared()?;
    let adapter = adapter_of(context)?;
    println!("adapter: {}", context.describe());
    let features = adapter.features();
    for (name, feature) in [
        ("SHADER_F16", wgpu::Features::SHADER_F16),
        ("SUBGROUP", wgpu::Features::SUBGROUP),
        ("TIMESTAMP_QUERY", wgpu::Features::TIMESTAMP_QUERY),
        (
            "EXPERIMENTAL_COOPERATIVE_MATRIX",
            wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX,
        ),
    ] {
        println!(
            "  {name:<34} {}",
            if features.contains(feature) {
                "yes"
            } else {
                "no"
            }
        );
    }
    let configurations: Vec<String> = adapter
        .cooperative_matrix_properties()
        .iter()
        .map(describe_configuration)
        .collect();
    println!(
        "  cooperative-matrix configurations: {}",
        if configurations.is_empty() {
            "none".to_string()
        } else {
            configurations.join(", ")
        }
    );
    let cooperative = match CooperativeMatmul::on_adapter_of(context) {
        Ok(matmul) => Some(matmul),
        Err(error) => {
            println!("  the cooperative-matrix kernel cannot run: {error}");
            None
        }
    };

    let settings = if context.adapter_info().device_type == wgpu::DeviceType::Cpu {
        PeakSettings {
            workgroups: 64,
            iterations: 256,
            dispatches: 3,
        }
    } else {
        PeakSettings::LARGE_GPU
    };
    let peak = gpu_peak(context, settings)?;
    let peak_gflops = peak.gigaflops_per_second;
    println!("fp32 peak measured with peak_fma: {peak_gflops:.1} GFLOP/s");

    let hardware = hardware_description(Some(context));
    let mut figure = Figure {
        id: format!("tensor-cores-{}", options.machine),
        title: "Square matrix products on the GPU by number format".to_string(),
        x: Axis {
            label: "matrix size n (n × n × n)".to_string(),
            logarithmic: true,
        },
        y: Axis {
            label: "GFLOP/s".to_string(),
            logarithmic: true,
        },
        hardware: hardware.clone(),
        command: format!(
            "cargo run --release -p galaxy --example tensor_cores -- {} ({})",
            std::env::args().skip(1).collect::<Vec<_>>().join(" "),
            std::env::var("GALAXY_RUN_DATE").unwrap_or_else(|_| "date not recorded".into())
        ),
        series: Vec::new(),
    };

    let cache = PipelineCache::new(ShaderCompilation::Cached);
    for &size in &options.sizes {
        figure.push(
            SERIES_PEAK,
            Point {
                x: size as f64,
                y: peak_gflops,
            },
        );
        let left = Tensor2d::random(size, size, -1.0..=1.0, size as u64);
        let right = Tensor2d::random(size, size, -1.0..=1.0, size as u64 + 1);
        let zero_bias = Tensor2d::zeros(1, size);

        // fp32: the kernel the crate's search picks, and the tiled kernel the f16 one mirrors.
        let shape = LinearShape {
            rows: size,
            inner: size,
            columns: size,
        };
        let fastest = search(context, shape)?.chosen;
        let input = GpuTensor::upload(context, &left, Readback::Never)?;
        let weights = GpuTensor::upload(context, &right, Readback::Never)?;
        let bias = GpuTensor::upload(context, &zero_bias, Readback::Never)?;
        for (series, strategy) in [
            (SERIES_FASTEST_F32, fastest),
            (SERIES_TILED_F32, LinearStrategy::Tiled { edge: 16 }),
        ] {
            let output = GpuTensor::uninitialized(context, size, size, Readback::Needed)?;
            output.fill(context, f32::NAN);
            let pipeline = strategy.pipeline(context, &cache, false)?;
            let dispatch = strategy.bind(context, &pipeline, &input, &weights, &bias, &output)?;
            let mut encoder = context.create_encoder("tensor cores fp32 check");
            dispatch.record(&mut encoder);
            context.submit(encoder);
            let result = output.download(context)?;
            let check = check_sampled(
                &left,
                &right,
                &result,
                SINGLE_UNIT_ROUNDOFF,
                0.0,
                CHECKED_ELEMENTS,
                size as u64,
            );
            let gflops = time_gflops(context, &dispatch, size, options.repeats)?;
            report(&mut figure, series, size, &gflops, &check);
            if series == SERIES_FASTEST_F32 {
                println!("        (the fastest fp32 kernel here is {strategy})");
            }
        }

        // f16 storage, f32 or f16 sums. The check of f16 sums allows f16's unit roundoff per
        // step, which bounds nothing past 1024 terms; its error is reported all the same.
        for accumulation in HalfAccumulation::ALL {
            let layer = GpuF16Linear::new(context, &right, &zero_bias, accumulation)?;
            let prepared = layer.prepare(context, &left)?;
            let result = prepared.run(context)?;
            let unit = match accumulation {
                HalfAccumulation::Single => SINGLE_UNIT_ROUNDOFF,
                HalfAccumulation::Half => HALF_UNIT_ROUNDOFF,
            };
            let products = match accumulation {
                HalfAccumulation::Single => 0.0,
                HalfAccumulation::Half => HALF_UNIT_ROUNDOFF,
            };
            let check = check_sampled(
                &left,
                &right,
                &result,
                unit,
                products,
                CHECKED_ELEMENTS,
                size as u64,
            );
            let gflops = time_gflops(context, &prepared.dispatch, size, options.repeats)?;
            report(&mut figure, accumulation.name(), size, &gflops, &check);
        }

        if let Some(matmul) = &cooperative {
            let prepared = matmul.prepare(&left, &right)?;
            let result = prepared.run(matmul.context())?;
            let check = check_sampled(
                &left,
                &right,
                &result,
                MATRIX_UNIT_SUM_ROUNDOFF,
                0.0,
                CHECKED_ELEMENTS,
                size as u64,
            );
            let gflops = time_gflops(matmul.context(), &prepared.dispatch, size, options.repeats)?;
            report(&mut figure, SERIES_COOPERATIVE, size, &gflops, &check);
        }
    }
    std::fs::create_dir_all(&options.out)?;
    figure.write_csv(&options.out)?;
    println!(
        "wrote {} ({:.1} s so far)",
        options.out.join(format!("{}.csv", figure.id)).display(),
        started.elapsed().as_secs_f64()
    );

    if !options.skip_digits {
        digits(context, &options, &hardware)?;
    }
    println!("done in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// The digits network run on the GPU with f16 weights and activations (each layer's input
/// rounded to f16 as it is uploaded), against the same network in fp32 on the CPU.
fn digits(
    context: &GpuContext,
    options: &Options,
    hardware: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let split = Digits::split(0.2, 1)?;
    let (network, _) = train(&TrainingConfig::default(), &split)?;
    let fp32 = network.accuracy(&split.test);
    let mut text = String::new();
    writeln!(text, "# f16 weights and activations on the digits network")?;
    writeln!(text, "# hardware: {hardware}")?;
    writeln!(
        text,
        "# command: cargo run --release -p galaxy --example tensor_cores -- {} ({})",
        std::env::args().skip(1).collect::<Vec<_>>().join(" "),
        std::env::var("GALAXY_RUN_DATE").unwrap_or_else(|_| "date not recorded".into())
    )?;
    writeln!(
        text,
        "network: 64-64-64-10, TrainingConfig::default() (seed 2026), {} test images",
        split.test.len()
    )?;
    writeln!(text, "fp32 on the CPU: test accuracy {:.2} %", 100.0 * fp32)?;
    let rounded = rounded_network(&network);
    writeln!(
        text,
        "f16-rounded weights, fp32 arithmetic on the CPU: test accuracy {:.2} %",
        100.0 * rounded.accuracy(&split.test)
    )?;
    let reference = network.forward(&split.test.images);
    for accumulation in HalfAccumulation::ALL {
        let probabilities = gpu_forward(context, &network, &split.test.images, accumulation)?;
        let predictions = argmax_rows(&probabilities);
        let changed = predictions
            .iter()
            .zip(argmax_rows(&reference))
            .filter(|(a, b)| **a != *b)
            .count();
        let largest_difference = probabilities
            .as_slice()
            .iter()
            .zip(reference.as_slice())
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        writeln!(
            text,
            "{} on the GPU: test accuracy {:.2} %, {changed} of {} predictions differ from fp32, \
             largest probability difference {largest_difference:.2e}",
            accumulation.name(),
            100.0 * accuracy(&predictions, &split.test.labels),
            split.test.len()
        )?;
    }
    print!("{text}");
    let path = options
        .out
        .join(format!("tensor-cores-digits-{}.txt", options.machine));
    std::fs::write(&path, text)?;
    println!("wrote {}", path.display());
    Ok(())
}

/// The network with every weight rounded to f16 and back.
fn rounded_network(network: &TrainedNetwork) -> TrainedNetwork {
    let mut rounded = network.clone();
    for layer in &mut rounded.layers {
        layer.weights = round_to_half(&layer.weights);
    }
    rounded
}

/// Linear layers on the GPU in f16, ReLU and softmax on the host.
fn gpu_forward(
    context: &GpuContext,
    network: &TrainedNetwork,
    images: &Tensor2d,
    accumulation: HalfAccumulation,
) -> Result<Tensor2d, Box<dyn std::error::Error>> {
    let mut activations = images.clone();
    for (index, layer) in network.layers.iter().enumerate() {
        let gpu_layer = GpuF16Linear::new(context, &layer.weights, &layer.bias, accumulation)?;
        activations = gpu_layer.run(context, &activations)?;
        if index + 1 < network.layers.len() {
            galaxy::cpu::relu_in_place(&mut activations);
        }
    }
    galaxy::cpu::softmax_in_place(&mut activations)?;
    Ok(activations)
}
