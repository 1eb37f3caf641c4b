//! Prints the fused-MLP pass's plan for the standard workload at several sizes: what it
//! fuses, the workgroup layout, the cost model's estimates and the decision. With
//! `--measure` it also times the fully fused kernel against the compiled mode's per-layer
//! kernels (each run with its upload and readback), and checks that both agree.
//!
//! ```text
//! cargo run --release --example show_fused_plan -- [--sizes 4,64,256,512,1024] [--depth 64]
//!     [--workgroup-memory BYTES] [--model device|h100|lavapipe] [--measure] [--samples 20] [--rows 2,4,8,16]
//!     [--rows-per-invocation 1,2,4] [--steps-in-flight 1,2,4,8] [--inner-slices 2,4]
//!     [--skip-per-layer]
//! ```
//!
//! `--workgroup-memory` plans for a device with that much workgroup memory instead of the
//! one present (planning needs no GPU time). `--rows`, `--rows-per-invocation`,
//! `--steps-in-flight` and `--inner-slices` measure those layouts of the fused kernel beside
//! the planned one.

use std::time::Instant;

use clap::Parser;
use galaxy::compiler::fused_mlp::{
    FusionChoice, FusionRequest, LARGE_GPU, SOFTWARE_RASTERISER, plan_fused_mlp,
};
use galaxy::gpu::GpuContext;
use galaxy::gpu::register_blocked_linear::KernelLimits;
use galaxy::graph::{Workload, random_mlp};
use galaxy::runner::execution::prepare_compiled_with_fusion;
use galaxy::runner::fused::cost_model_for;
use galaxy::runner::{Execution, RunError};
use galaxy::tensor::Tensor2d;

#[derive(Parser)]
#[command(about = "Print (and optionally measure) the fully fused MLP plan")]
struct Arguments {
    #[arg(long, value_delimiter = ',', default_value = "4,64,256,512,1024")]
    sizes: Vec<usize>,
    #[arg(long, default_value_t = 64)]
    depth: usize,
    /// Plan for this many bytes of workgroup memory instead of the device's.
    #[arg(long)]
    workgroup_memory: Option<u32>,
    /// The cost model of the printed plan: `device` (the one the compiled mode uses on the
    /// device present), `h100` or `lavapipe`. Measurements always use the device's.
    #[arg(long, default_value = "device")]
    model: String,
    /// Time the fused kernel and the per-layer kernels.
    #[arg(long)]
    measure: bool,
    /// Timed runs per measurement (after one untimed run).
    #[arg(long, default_value_t = 20)]
    samples: usize,
    /// Rows per workgroup of further fused layouts to measure.
    #[arg(long, value_delimiter = ',', num_args = 0..)]
    rows: Vec<u32>,
    /// Rows per invocation of further fused layouts to measure (with each of --rows).
    #[arg(long, value_delimiter = ',', num_args = 0..)]
    rows_per_invocation: Vec<u32>,
    /// Steps in flight of further fused layouts to measure (with each of the above).
    #[arg(long, value_delimiter = ',', num_args = 0..)]
    steps_in_flight: Vec<u32>,
    /// Inner slices of further fused layouts to measure (with each of the above).
    #[arg(long, value_delimiter = ',', num_args = 0..)]
    inner_slices: Vec<u32>,
    /// Do not time the per-layer kernels (they are slow at large sizes on lavapipe).
    #[arg(long)]
    skip_per_layer: bool,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arguments = Arguments::parse();
    let context = GpuContext::new()?;
    let mut limits = KernelLimits::of(&context.limits());
    if let Some(bytes) = arguments.workgroup_memory {
        limits.max_workgroup_storage_bytes = bytes;
    }
    let model = match arguments.model.as_str() {
        "h100" => LARGE_GPU,
        "lavapipe" => SOFTWARE_RASTERISER,
        _ => cost_model_for(&context),
    };
    println!("device: {}", context.describe());
    for &size in &arguments.sizes {
        let workload = random_mlp(size, arguments.depth, 1)?;
        println!("\n== standard workload {size} × {} ==", arguments.depth);
        // ANCHOR: print_plan
        let plan = plan_fused_mlp(&workload.graph, &limits, &model, FusionRequest::default());
        println!("{plan}");
        // ANCHOR_END: print_plan
        if arguments.measure {
            measure(&context, &workload, &arguments)?;
        }
    }
    Ok(())
}

/// Times the per-layer kernels, the planned fused layout and the requested ones.
fn measure(
    context: &GpuContext,
    workload: &Workload,
    arguments: &Arguments,
) -> Result<(), Box<dyn std::error::Error>> {
    // The linear layers' arithmetic: two operations per multiply-add.
    let rows = workload.input.rows() as f64;
    let flops: f64 = workload
        .layers()
        .iter()
        .map(|layer| 2.0 * rows * layer.weights.rows() as f64 * layer.weights.columns() as f64)
        .sum();
    let mut reference = None;
    if !arguments.skip_per_layer {
        let request = FusionRequest::new(FusionChoice::Never);
        let mut execution = prepare_compiled_with_fusion(context, &workload.graph, request)?;
        let (times, result) = time_runs(&mut execution, &workload.input, arguments.samples)?;
        print_times(
            "per layer (GraphCompiled without fusion)",
            &times,
            flops,
            None,
        );
        reference = Some(result);
    }
    let mut requests = vec![(
        FusionRequest::new(FusionChoice::Always),
        "planned".to_string(),
    )];
    let mut per_invocation: Vec<Option<u32>> = vec![None];
    per_invocation.extend(arguments.rows_per_invocation.iter().map(|&rows| Some(rows)));
    let mut steps: Vec<Option<u32>> = vec![None];
    steps.extend(arguments.steps_in_flight.iter().map(|&steps| Some(steps)));
    let mut slices: Vec<Option<u32>> = vec![None];
    slices.extend(arguments.inner_slices.iter().map(|&slices| Some(slices)));
    for &rows in &arguments.rows {
        for &inner_slices in &slices {
            for &rows_per_invocation in &per_invocation {
                // A split inner dimension gives every invocation all the rows.
                if inner_slices.is_some_and(|slices| slices > 1) && rows_per_invocation.is_some() {
                    continue;
                }
                for &steps_in_flight in &steps {
                    let request = FusionRequest {
                        choice: FusionChoice::Always,
                        rows_per_workgroup: Some(rows),
                        rows_per_invocation,
                        steps_in_flight,
                        inner_slices,
                    };
                    requests.push((request, format!("{rows} rows")));
                }
            }
        }
    }
    for (request, name) in requests {
        let mut execution = match prepare_compiled_with_fusion(context, &workload.graph, request) {
            Ok(execution) => execution,
            Err(RunError::FusionNotPossible { .. }) => {
                println!("fused, {name}: does not fit this device");
                continue;
            }
            Err(error) => return Err(error.into()),
        };
        let layout = execution
            .fused_runner()
            .and_then(|runner| runner.plan().config())
            .map(|config| config.to_string())
            .unwrap_or_default();
        let (times, result) = time_runs(&mut execution, &workload.input, arguments.samples)?;
        let difference = reference
            .as_ref()
            .map(|reference: &Tensor2d| largest_difference(&result, reference));
        print_times(
            &format!("fused, {name}: {layout}"),
            &times,
            flops,
            difference,
        );
    }
    Ok(())
}

// ANCHOR: time_runs
/// One untimed run, then `samples` timed runs (upload, run, readback); the times in
/// milliseconds, sorted, and the last result.
fn time_runs(
    execution: &mut Execution,
    input: &Tensor2d,
    samples: usize,
) -> Result<(Vec<f64>, Tensor2d), RunError> {
    let mut result = execution.run(input, 1)?.remove(0);
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples.max(1) {
        let start = Instant::now();
        result = execution.run(input, 1)?.remove(0);
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    Ok((times, result))
}
// ANCHOR_END: time_runs

/// Prints the median, the range and the rate of the linear layers' arithmetic at the median
/// (the whole run counted, upload and readback included).
fn print_times(name: &str, times: &[f64], flops: f64, difference: Option<f32>) {
    let median = times[times.len() / 2];
    let rate = flops / (median * 1e-3) / 1e9;
    let agreement = difference
        .map(|value| format!(", largest difference from per layer {value:.1e}"))
        .unwrap_or_default();
    println!(
        "{name}: median {median:.3} ms (min {:.3}, max {:.3}, {} runs), {rate:.1} GFLOP/s{agreement}",
        times[0],
        times[times.len() - 1],
        times.len()
    );
}

fn largest_difference(left: &Tensor2d, right: &Tensor2d) -> f32 {
    left.as_slice()
        .iter()
        .zip(right.as_slice())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max)
}
