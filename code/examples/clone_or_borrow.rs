//! A needless `clone` in a hot loop against a borrow: scoring rows against one weight
//! vector, with weight vectors from 64 bytes to 4 MiB.
//!
//! ```sh
//! cargo run --release --example clone_or_borrow
//! cargo run --release --example clone_or_borrow -- figures/data   # also writes the CSV
//! ```
//!
//! Both variants do the same arithmetic (`galaxy::rust_basics::clones`); the cloning one
//! also allocates a vector, copies the weights into it and frees it, once per row. The
//! rows add up to about 256 KiB, so they stay in the L2 cache and the clone stands out.
//! The whole sweep runs five times, every other pass in the other order; each point is
//! the median of the passes.

use std::hint::black_box;
use std::path::Path;

use galaxy::bench::{Axis, Figure, FigureError, hardware_description};
use galaxy::memory::timing::{TimingPlan, median_nanoseconds_per_item};
use galaxy::rust_basics::clones::{scores_borrowing, scores_cloning};
use galaxy::rust_basics::measure::RepeatedMeasurements;

/// Weights per vector: 64 bytes to 4 MiB of `f32`.
const LENGTHS: [usize; 9] = [
    16,
    64,
    256,
    1 << 10,
    1 << 12,
    1 << 14,
    1 << 16,
    1 << 18,
    1 << 20,
];
const PASSES: usize = 5;
/// About this many bytes of rows in total, but never fewer than 4 rows.
const ROW_BYTES: usize = 256 * 1024;

fn main() -> Result<(), FigureError> {
    let hardware = hardware_description(None);
    println!("{hardware}\n");
    let mut measurements = RepeatedMeasurements::default();
    for pass in 1..=PASSES {
        println!("pass {pass} of {PASSES}: time per weight and row (ns)");
        println!(
            "{:>12} {:>6} {:>10} {:>10} {:>7}",
            "weights", "rows", "clone", "borrow", "ratio"
        );
        for length in LENGTHS {
            let row_count = (ROW_BYTES / (length * size_of::<f32>())).max(4);
            let rows: Vec<Vec<f32>> = (0..row_count)
                .map(|row| {
                    (0..length)
                        .map(|column| ((row + column) % 9) as f32 * 0.125)
                        .collect()
                })
                .collect();
            let weights: Vec<f32> = (0..length).map(|column| (column % 4) as f32).collect();
            let items = row_count * length;
            let time_cloning = || {
                median_nanoseconds_per_item(TimingPlan::FULL, items, || {
                    black_box(scores_cloning(black_box(&rows), black_box(&weights)));
                })
            };
            let time_borrowing = || {
                median_nanoseconds_per_item(TimingPlan::FULL, items, || {
                    black_box(scores_borrowing(black_box(&rows), black_box(&weights)));
                })
            };
            // Every other pass measures the two in the other order, so that neither is
            // always the first to run after the rows are made.
            let (cloning, borrowing) = if pass % 2 == 0 {
                let borrowing = time_borrowing();
                (time_cloning(), borrowing)
            } else {
                let cloning = time_cloning();
                (cloning, time_borrowing())
            };
            let bytes = (length * size_of::<f32>()) as f64;
            measurements.record("clone in the loop", bytes, cloning);
            measurements.record("borrow", bytes, borrowing);
            println!(
                "{:>8} KiB {row_count:>6} {cloning:>10.3} {borrowing:>10.3} {:>6.1}×",
                bytes / 1024.0,
                cloning / borrowing
            );
        }
    }
    println!(
        "\nWhat to look for: for short vectors the allocation dominates and cloning costs a \
         multiple\nof the work; for long ones the copy adds about as much again as the dot \
         product itself."
    );
    let mut figure = Figure {
        id: "rust-clones".to_string(),
        title: "Scoring rows against one weight vector: clone it every row, or borrow it"
            .to_string(),
        x: Axis {
            label: "size of the weight vector (bytes)".to_string(),
            logarithmic: true,
        },
        y: Axis {
            label: "time per weight and row (ns)".to_string(),
            logarithmic: true,
        },
        hardware,
        command: "cargo run --release --example clone_or_borrow -- figures/data".to_string(),
        series: Vec::new(),
    };
    measurements.add_to(&mut figure);
    if let Some(directory) = std::env::args().nth(1) {
        figure.write_csv(Path::new(&directory))?;
        println!("wrote {directory}/{}.csv", figure.id);
    }
    Ok(())
}
