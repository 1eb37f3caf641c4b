//! How wrong is a long sum? Sums `n` uniform random `f32` values in [0, 1) five ways and
//! prints the relative error of each against an exact-enough reference, for `n` from 16 to
//! 16 Mi; writes the medians over five seeds (and their spread) as a figure CSV.
//!
//! `cargo run --release --example summation_error [-- <csv path>]`
//! (default `figures/data/numbers-summation-error.csv`).

use galaxy::Tensor2d;
use galaxy::cpu::{sum_several_accumulators, sum_single_accumulator};
use galaxy::gpu::{GpuContext, ShaderCompilation};
use galaxy::immediate::ImmediateGpu;
use galaxy::numbers::summation::{relative_error, sum_kahan, sum_pairwise, sum_reference};
use std::fmt::Write as _;

const SEEDS: u64 = 5;

fn median_and_range(mut values: Vec<f64>) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    (
        values[values.len() / 2],
        values[0],
        values[values.len() - 1],
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "figures/data/numbers-summation-error.csv".to_string());
    let context = GpuContext::shared()?;
    let gpu = ImmediateGpu::new(context, ShaderCompilation::Cached);
    let adapter = context.adapter_info().name;

    let methods: [&str; 5] = [
        "left to right",
        "8 accumulators",
        "pairwise",
        "Kahan",
        "GPU tree",
    ];
    let mut errors: Vec<Vec<Vec<f64>>> = vec![Vec::new(); methods.len()];
    let sizes: Vec<usize> = (2..=12).map(|power| 1usize << (2 * power)).collect();
    println!("relative error of the sum of n uniform values in [0, 1), median of {SEEDS} seeds");
    println!(
        "{:>10} {}",
        "n",
        methods.map(|name| format!("{name:>15}")).join("")
    );
    for &count in &sizes {
        let mut per_method = vec![Vec::new(); methods.len()];
        for seed in 0..SEEDS {
            let tensor = Tensor2d::random(1, count, 0.0..=1.0, 1000 + seed);
            let values = tensor.as_slice();
            let reference = sum_reference(values);
            let sums = [
                sum_single_accumulator(values),
                sum_several_accumulators(values),
                sum_pairwise(values),
                sum_kahan(values),
                gpu.sum(&tensor)?,
            ];
            for (method, sum) in sums.into_iter().enumerate() {
                per_method[method].push(relative_error(f64::from(sum), reference));
            }
        }
        let medians: Vec<String> = per_method
            .iter()
            .map(|errors| format!("{:>15.2e}", median_and_range(errors.clone()).0))
            .collect();
        println!("{count:>10} {}", medians.join(""));
        for (method, values) in per_method.into_iter().enumerate() {
            errors[method].push(values);
        }
    }

    let mut csv = String::new();
    writeln!(
        csv,
        "# title: Relative error of an f32 sum of n values in [0, 1)"
    )?;
    writeln!(csv, "# x: number of values n, log")?;
    writeln!(csv, "# y: relative error (median of {SEEDS} inputs), log")?;
    writeln!(
        csv,
        "# hardware: CPU AMD EPYC (x86_64, 2 cores, AVX-512); GPU tree on {adapter}"
    )?;
    writeln!(
        csv,
        "# command: cargo run --release --example summation_error"
    )?;
    writeln!(csv, "series,x,y,y_min,y_max")?;
    for (method, name) in methods.iter().enumerate() {
        for (index, &count) in sizes.iter().enumerate() {
            let (median, low, high) = median_and_range(errors[method][index].clone());
            // A log axis cannot show an exact result (error 0); those points are left out.
            // Where some input was summed exactly, the spread is left empty too.
            if median > 0.0 && low > 0.0 {
                writeln!(csv, "{name},{count},{median:e},{low:e},{high:e}")?;
            } else if median > 0.0 {
                writeln!(csv, "{name},{count},{median:e},,")?;
            }
        }
    }
    std::fs::write(&path, csv)?;
    println!("wrote {path}");
    Ok(())
}
