//! Transposes square matrices three ways and prints the time per element, next to a
//! plain copy of the same bytes.
//!
//! ```sh
//! cargo run --release --example strided_transpose
//! ```
//!
//! The functions measured are in `galaxy::memory::transpose`.

use std::hint::black_box;

use galaxy::Tensor2d;
use galaxy::memory::MemoryError;
use galaxy::memory::timing::{TimingPlan, median_nanoseconds_per_item};
use galaxy::memory::transpose::{
    transpose_blocked, transpose_reading_rows, transpose_writing_rows,
};

const BLOCK: usize = 32;

fn main() -> Result<(), MemoryError> {
    println!("Time per element (ns) to transpose an n × n matrix of f32\n");
    println!(
        "{:>6} {:>9} {:>8} {:>13} {:>13} {:>13}",
        "n", "KiB", "copy", "reading rows", "writing rows", "32×32 tiles"
    );
    for side in [64, 500, 512, 2000, 2048, 4000, 4096] {
        let input = Tensor2d::random(side, side, -1.0..=1.0, 1);
        let mut output = Tensor2d::zeros(side, side);
        let elements = side * side;
        let plan = TimingPlan::FULL;
        let copy = median_nanoseconds_per_item(plan, elements, || {
            output
                .as_mut_slice()
                .copy_from_slice(black_box(input.as_slice()));
        });
        let reading_rows = median_nanoseconds_per_item(plan, elements, || {
            black_box(transpose_reading_rows(black_box(&input), &mut output).ok());
        });
        let writing_rows = median_nanoseconds_per_item(plan, elements, || {
            black_box(transpose_writing_rows(black_box(&input), &mut output).ok());
        });
        let tiles = median_nanoseconds_per_item(plan, elements, || {
            black_box(transpose_blocked(black_box(&input), &mut output, BLOCK).ok());
        });
        // The last run must have produced the transpose: check before trusting the times.
        if output != input.transposed() {
            eprintln!("the blocked transpose of {side} × {side} is wrong");
            std::process::exit(1);
        }
        println!(
            "{side:>6} {:>9} {copy:>8.2} {reading_rows:>13.2} {writing_rows:>13.2} {tiles:>13.2}",
            elements * size_of::<f32>() / 1024
        );
    }
    println!(
        "\nWhat to look for: small matrices transpose at a steady speed, since every line \
         stays in\ncache. Once the matrix outgrows L2, one side of the row-by-row versions \
         misses on every\nelement; tiles win back a good part of that, though not all. \
         Sizes that are a power of\ntwo are much worse than their neighbours: their rows \
         map to the same cache sets."
    );
    Ok(())
}
