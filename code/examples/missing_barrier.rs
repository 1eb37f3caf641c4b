//! What a missing barrier does: the tree-reduction sum of `shaders/reduce.wgsl`, run as
//! written and with either of its two `workgroupBarrier()` calls taken out, on many random
//! inputs, each result checked against the exact sum.
//!
//! Run it with `cargo run --release --example missing_barrier` (or add a number of trials
//! per size, default 20). It prints, for each version of the kernel and each input shape,
//! how many of the trials gave a wrong sum, and how far off the worst one was.
//!
//! The point is not the count on one machine. Without the barrier the kernel has a data
//! race, and how often a race shows depends on how the device schedules the invocations of
//! a workgroup: one device may fail every time, another now and then, a third only after a
//! driver update. A test that passes on one device does not prove a barrier unnecessary.

use std::process::ExitCode;

use galaxy::Tensor2d;
use galaxy::gpu::record::record_reduction;
use galaxy::gpu::{GpuContext, GpuTensor, Kernel, Readback, compile_wgsl};

// ANCHOR: variants
/// The three versions of the sum kernel: the shader as the crate ships it, and the same
/// text with one barrier removed.
const VARIANTS: [(&str, Option<(&str, &str)>); 3] = [
    ("as written", None),
    (
        "no barrier after filling `partial`",
        Some((
            "    partial[local_index] = value;\n    workgroupBarrier();\n",
            "    partial[local_index] = value;\n",
        )),
    ),
    (
        "no barrier inside the halving loop",
        Some((
            "        }\n        workgroupBarrier();\n    }\n",
            "        }\n    }\n",
        )),
    ),
];
// ANCHOR_END: variants

/// Input shapes, from one short row to a million values (two passes of the reduction).
const SHAPES: [(usize, usize); 4] = [(1, 300), (33, 65), (256, 256), (1024, 1024)];

/// The `sum` entry point and everything it needs: the shader text up to the `max_value`
/// kernel, which is left out so that each replacement below can only touch `sum`.
fn sum_kernel_source() -> Result<&'static str, String> {
    let source = Kernel::Sum.source();
    source
        .split("// ANCHOR: max")
        .next()
        .filter(|prefix| prefix.len() < source.len())
        .ok_or_else(|| "shaders/reduce.wgsl no longer marks its max kernel".to_string())
}

/// `source` with `pattern` replaced once; an error if the shader no longer contains it.
fn without_barrier(source: &str, pattern: &str, replacement: &str) -> Result<String, String> {
    if source.matches(pattern).count() != 1 {
        return Err(format!(
            "expected exactly one occurrence of {pattern:?} in the sum kernel of \
             shaders/reduce.wgsl; the shader has changed, update this example"
        ));
    }
    Ok(source.replacen(pattern, replacement, 1))
}

/// The exact sum in 64-bit, and the error bound the crate's tests allow a correct tree.
fn exact_sum_and_bound(values: &[f32]) -> (f64, f64) {
    let exact: f64 = values.iter().map(|&value| f64::from(value)).sum();
    let magnitude: f64 = values.iter().map(|&value| f64::from(value).abs()).sum();
    let depth = (values.len() as f64).log2() + 4.0;
    (exact, depth * f64::from(f32::EPSILON) * magnitude)
}

/// Runs the whole reduction (every pass) with `pipeline` and returns the sum.
fn gpu_sum(
    context: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    input: &Tensor2d,
) -> Result<f32, Box<dyn std::error::Error>> {
    let input_on_gpu = GpuTensor::upload(context, input, Readback::Never)?;
    let mut encoder = context
        .device()
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    // NaN in every partial result first: a value the kernel never wrote cannot pass.
    let result = record_reduction(
        context,
        &mut encoder,
        pipeline,
        &input_on_gpu,
        Some(f32::NAN),
    )?;
    result.record_copy_to_staging(&mut encoder)?;
    context.queue().submit([encoder.finish()]);
    Ok(result.read_staging(context)?.get(0, 0))
}

fn run(trials: usize) -> Result<bool, Box<dyn std::error::Error>> {
    let context = GpuContext::shared()?;
    let info = context.adapter_info();
    println!("adapter: {}", context.describe());
    println!(
        "subgroup size: {}..={}; trials per shape: {trials}; wrong = outside the bound a \
         correct tree meets",
        info.subgroup_min_size, info.subgroup_max_size
    );
    print!("{:<36}", "kernel");
    for (rows, columns) in SHAPES {
        print!("{:>16}", format!("{rows}×{columns}"));
    }
    println!("{:>22}", "worst relative error");

    let base = sum_kernel_source()?;
    let mut complete_kernel_always_right = true;
    for (name, change) in VARIANTS {
        let source = match change {
            None => base.to_string(),
            Some((pattern, replacement)) => without_barrier(base, pattern, replacement)?,
        };
        let pipeline = compile_wgsl(context, name, &source, "sum", &[])?;
        print!("{name:<36}");
        let mut worst = 0.0_f64;
        for (shape_index, (rows, columns)) in SHAPES.into_iter().enumerate() {
            let mut wrong = 0;
            for trial in 0..trials {
                let seed = (shape_index * 10_000 + trial) as u64;
                let input = Tensor2d::random(rows, columns, -1.0..=1.0, seed);
                let actual = gpu_sum(context, &pipeline, &input)?;
                let (exact, allowed) = exact_sum_and_bound(input.as_slice());
                let difference = (f64::from(actual) - exact).abs();
                if !actual.is_finite() || difference > allowed {
                    wrong += 1;
                    let magnitude: f64 = input.as_slice().iter().map(|v| f64::from(v.abs())).sum();
                    let relative = if actual.is_finite() {
                        difference / magnitude
                    } else {
                        f64::INFINITY
                    };
                    worst = worst.max(relative);
                }
            }
            print!("{:>16}", format!("{wrong}/{trials} wrong"));
            if change.is_none() && wrong > 0 {
                complete_kernel_always_right = false;
            }
        }
        if worst > 0.0 {
            println!("{worst:>22.2e}");
        } else {
            println!("{:>22}", "-");
        }
    }
    Ok(complete_kernel_always_right)
}

fn main() -> ExitCode {
    let trials = match std::env::args().nth(1).map(|text| text.parse::<usize>()) {
        None => 20,
        Some(Ok(trials)) if trials > 0 => trials,
        Some(_) => {
            eprintln!("error: the argument is the number of trials per shape, a positive integer");
            return ExitCode::FAILURE;
        }
    };
    match run(trials) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("error: the kernel as written gave a wrong sum; that is a bug");
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
