//! Half precision on the GPU: a tree sum of n values stored as f32, stored as f16 and added
//! in f32, or stored and added in f16. Prints each one's relative error against a
//! compensated reference of the f32 values, and its time per sum with the data already on
//! the GPU; writes the times as a figure CSV.
//!
//! `cargo run --release --example half_precision_gpu -- [--max-power 22] [--output PATH]`
//! (default output `figures/data/numbers-half-precision-gpu.csv`). Needs an adapter with
//! SHADER_F16.

use galaxy::Tensor2d;
use galaxy::gpu::GpuContext;
use galaxy::numbers::half_precision_gpu::{HalfPrecisionSums, SumPrecision, bytes_read};
use galaxy::numbers::summation::{relative_error, sum_reference};
use std::fmt::Write as _;

const TIMINGS: usize = 7;

fn argument(name: &str) -> Option<String> {
    let arguments: Vec<String> = std::env::args().collect();
    let position = arguments.iter().position(|argument| argument == name)?;
    arguments.get(position + 1).cloned()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let max_power: u32 = argument("--max-power").map_or(Ok(22), |text| text.parse())?;
    let path = argument("--output")
        .unwrap_or_else(|| "figures/data/numbers-half-precision-gpu.csv".to_string());
    let context = GpuContext::shared()?;
    let sums = HalfPrecisionSums::new(context)?;
    let adapter = context.describe();
    println!("adapter: {adapter}");
    println!(
        "{:>11} {:<22} {:>14} {:>12} {:>10}",
        "n", "precision", "rel. error", "µs per sum", "GB/s"
    );
    let mut rows = Vec::new();
    for power in (16..=max_power).step_by(2) {
        let count = 1usize << power;
        // Values in [0, 1): a sum that f16 can still hold up to n = 2^17.
        let values = Tensor2d::random(1, count, 0.0..=1.0, u64::from(power)).into_vec();
        let reference = sum_reference(&values);
        // A few hundred megabytes per submission at most, and at least 4 sums.
        let repeats = (1usize << 28).div_ceil(count * 4).clamp(4, 256);
        for precision in SumPrecision::ALL {
            let on_gpu = sums.upload(&values, precision);
            let error = relative_error(f64::from(sums.sum(&on_gpu)?), reference);
            sums.time_per_sum(&on_gpu, repeats)?; // warm-up
            let mut times: Vec<f64> = (0..TIMINGS)
                .map(|_| {
                    sums.time_per_sum(&on_gpu, repeats)
                        .map(|time| time.as_secs_f64() * 1e3)
                })
                .collect::<Result<_, _>>()?;
            times.sort_by(f64::total_cmp);
            let (median, fastest, slowest) = (times[TIMINGS / 2], times[0], times[TIMINGS - 1]);
            let gigabytes_per_second = bytes_read(precision, count) as f64 / (median * 1e-3) / 1e9;
            println!(
                "{count:>11} {:<22} {error:>14.3e} {:>12.1} {gigabytes_per_second:>10.1}",
                precision.name(),
                median * 1e3
            );
            rows.push((precision.name(), count, median, fastest, slowest));
        }
    }
    let mut csv = String::new();
    writeln!(
        csv,
        "# title: Time of one GPU tree sum by storage and arithmetic precision"
    )?;
    writeln!(csv, "# x: number of values n, log")?;
    writeln!(csv, "# y: time per sum (ms), log")?;
    writeln!(csv, "# hardware: GPU {adapter}")?;
    writeln!(
        csv,
        "# command: cargo run --release --example half_precision_gpu -- --max-power {max_power}"
    )?;
    writeln!(csv, "series,x,y,y_min,y_max")?;
    for (name, count, median, fastest, slowest) in rows {
        writeln!(csv, "{name},{count},{median:e},{fastest:e},{slowest:e}")?;
    }
    std::fs::write(&path, csv)?;
    println!("wrote {path}");
    Ok(())
}
