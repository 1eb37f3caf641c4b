//! The first compute node: one linear layer computed on the GPU and checked, element by
//! element, against the same layer computed on the CPU.
//!
//! Run it with `cargo run --release --example first_compute_node`. It prints the adapter
//! it ran on and how far the GPU's answer is from the CPU's, and exits with an error if
//! any element is out of tolerance.

use std::process::ExitCode;

use galaxy::gpu::{GpuContext, ShaderCompilation};
use galaxy::immediate::ImmediateGpu;
use galaxy::{Tensor2d, Tolerance, cpu};

// ANCHOR: first_compute_node
fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let context = GpuContext::shared()?;
    println!("adapter: {}", context.describe());

    // Odd sizes on purpose: 33 rows and 17 columns do not fill whole 16 × 16 workgroups,
    // so the invocations that fall outside the output must do nothing.
    let (rows, inner, columns) = (33, 65, 17);
    let input = Tensor2d::random(rows, inner, -1.0..=1.0, 1);
    let weights = Tensor2d::random(inner, columns, -1.0..=1.0, 2);
    let bias = Tensor2d::random(1, columns, -1.0..=1.0, 3);

    // One call is one round trip: upload, compile, dispatch, wait, read back. The NaN
    // fill makes an output element the shader forgot to write fail the comparison.
    let gpu = ImmediateGpu::new(context, ShaderCompilation::Cached).with_output_fill(f32::NAN);
    let on_gpu = gpu.linear(&input, &weights, &bias)?;
    let on_cpu = cpu::linear_naive(&input, &weights, &bias)?;

    // The GPU may fuse a multiply and an add into one rounding where the CPU rounds
    // twice, so the results agree closely rather than bit for bit.
    let tolerance = Tolerance::new(1e-4, 1e-6 * inner as f32);
    let comparison = on_gpu.compare(&on_cpu, tolerance)?;
    println!("linear {rows}×{inner} · {inner}×{columns} + bias: {comparison}");
    println!("first values on the GPU: {:?}", &on_gpu.as_slice()[..4]);
    println!("first values on the CPU: {:?}", &on_cpu.as_slice()[..4]);
    Ok(comparison.passed())
}
// ANCHOR_END: first_compute_node

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("error: the GPU result differs from the CPU reference");
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
