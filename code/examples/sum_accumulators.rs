//! Sums arrays of `f32` with one accumulator and with eight, at sizes from L1-resident to
//! far larger than the caches, and prints the time per value.
//!
//! ```sh
//! cargo run --release --example sum_accumulators
//! cargo run --release --example sum_accumulators -- figures/data   # also writes the CSV
//! ```
//!
//! With one accumulator every addition waits for the previous one, so the loop runs at one
//! value per addition latency wherever the data lives. Eight accumulators break that chain;
//! while the array is in L1 or L2 the loop is then limited by the adders, and once the
//! array outgrows L2 by how fast the memory below can deliver it. The functions measured
//! are `galaxy::cpu::sum_single_accumulator` and `sum_several_accumulators`.

use std::hint::black_box;
use std::path::Path;

use galaxy::Tensor2d;
use galaxy::bench::{Axis, Figure, FigureError, Point, hardware_description};
use galaxy::cpu::{sum_several_accumulators, sum_single_accumulator};
use galaxy::memory::timing::{TimingPlan, median_nanoseconds_per_item};

/// Array sizes in KiB: 16 KiB sits in any L1 data cache, 256 KiB in any L2, 4 MiB (the
/// size the `cpu_operators` benchmark sums) outgrows a 2 MiB L2, 64 MiB any private cache.
const SIZES_IN_KIBIBYTES: [usize; 7] = [16, 64, 256, 1 << 10, 4 << 10, 16 << 10, 64 << 10];

fn main() -> Result<(), FigureError> {
    let mut figure = Figure {
        id: "cpu-sum-accumulators".to_string(),
        title: "Summing f32 with one accumulator and with eight".to_string(),
        x: Axis {
            label: "array size (bytes)".to_string(),
            logarithmic: true,
        },
        y: Axis {
            label: "time per value (ns)".to_string(),
            logarithmic: true,
        },
        hardware: hardware_description(None),
        command: "cargo run --release --example sum_accumulators -- figures/data".to_string(),
        series: Vec::new(),
    };
    println!("{}", figure.hardware);
    println!(
        "Time per value (ns), median of {} samples\n",
        TimingPlan::FULL.samples
    );
    println!(
        "{:>10} {:>16} {:>16} {:>8}",
        "array", "one accumulator", "eight", "ratio"
    );
    for kibibytes in SIZES_IN_KIBIBYTES {
        let length = kibibytes * 1024 / size_of::<f32>();
        let values = Tensor2d::random(1, length, -1.0..=1.0, 6).into_vec();
        let plan = TimingPlan::FULL;
        let one = median_nanoseconds_per_item(plan, length, || {
            black_box(sum_single_accumulator(black_box(&values)));
        });
        let eight = median_nanoseconds_per_item(plan, length, || {
            black_box(sum_several_accumulators(black_box(&values)));
        });
        let bytes = (kibibytes * 1024) as f64;
        figure.push("one accumulator", Point { x: bytes, y: one });
        figure.push("eight accumulators", Point { x: bytes, y: eight });
        println!(
            "{kibibytes:>6} KiB {one:>16.3} {eight:>16.3} {:>7.1}×",
            one / eight
        );
    }
    println!(
        "\nWhat to look for: the one-accumulator column hardly changes with size, because \
         the\nchain of additions, not memory, sets its speed. The eight-accumulator column is \
         lowest\nwhile the array fits in L1 or L2, and rises to the memory's streaming rate \
         beyond."
    );
    if let Some(directory) = std::env::args().nth(1) {
        figure.write_csv(Path::new(&directory))?;
        println!("wrote {directory}/{}.csv", figure.id);
    }
    Ok(())
}
