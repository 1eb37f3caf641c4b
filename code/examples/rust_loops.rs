//! Indexed loops against iterator chains, with and without the bounds checks the compiler
//! can remove, over arrays from 4 KiB (in L1) to 16 MiB (in main memory).
//!
//! ```sh
//! cargo run --release --example rust_loops
//! cargo run --release --example rust_loops -- figures/data   # also writes the two CSVs
//! ```
//!
//! Two kernels, each written several ways that compute the same result:
//!
//! - `output[i] += scale * input[i]` (an *axpy*): indexed, indexed after reslicing the
//!   input, and with `zip`. The compiler vectorises all three, so they should run alike.
//! - a dot product: one chain in order (`zip`, `map`, `sum`), and 16 running sums written
//!   with indices, with a 16-value slice per chunk, and with `chunks_exact`. Only the last
//!   two are vectorised.
//!
//! The whole sweep runs five times, every other pass in reverse order; each point is the
//! median of the five passes, and the CSV keeps the fastest and slowest as its range.

use std::hint::black_box;
use std::path::Path;

use galaxy::bench::{Axis, Figure, FigureError, hardware_description};
use galaxy::memory::timing::{TimingPlan, median_nanoseconds_per_item};
use galaxy::rust_basics::bounds_checks::{
    dot_in_lanes_indexed, dot_in_lanes_sliced, scale_and_add_indexed, scale_and_add_resliced,
};
use galaxy::rust_basics::iterators::{dot_in_lanes, dot_in_order, scale_and_add_zipped};
use galaxy::rust_basics::measure::RepeatedMeasurements;

/// Values per array: 4 KiB to 16 MiB of `f32`.
const LENGTHS: [usize; 7] = [
    1 << 10,
    1 << 12,
    1 << 14,
    1 << 16,
    1 << 18,
    1 << 20,
    1 << 22,
];
const PASSES: usize = 5;

type Axpy = fn(f32, &[f32], &mut [f32]);
type Dot = fn(&[f32], &[f32]) -> f32;

const AXPY_VARIANTS: [(&str, Axpy); 3] = [
    ("indexed", scale_and_add_indexed),
    ("indexed and resliced", scale_and_add_resliced),
    ("iterator (zip)", scale_and_add_zipped),
];

const DOT_VARIANTS: [(&str, Dot); 4] = [
    ("one sum in order", dot_in_order),
    ("16 sums by index", dot_in_lanes_indexed),
    ("16 sums by 16-value slices", dot_in_lanes_sliced),
    ("16 sums by chunks_exact", dot_in_lanes),
];

fn figure(id: &str, title: &str) -> Figure {
    Figure {
        id: id.to_string(),
        title: title.to_string(),
        x: Axis {
            label: "size of one array (bytes)".to_string(),
            logarithmic: true,
        },
        y: Axis {
            label: "time per value (ns)".to_string(),
            logarithmic: true,
        },
        hardware: hardware_description(None),
        command: "cargo run --release --example rust_loops -- figures/data".to_string(),
        series: Vec::new(),
    }
}

fn main() -> Result<(), FigureError> {
    let hardware = hardware_description(None);
    println!("{hardware}\n");
    let mut axpy = RepeatedMeasurements::default();
    let mut dot = RepeatedMeasurements::default();
    for pass in 1..=PASSES {
        println!("pass {pass} of {PASSES}: time per value (ns)");
        for length in LENGTHS {
            let input: Vec<f32> = (0..length).map(|index| (index % 7) as f32 - 3.0).collect();
            let mut output: Vec<f32> = (0..length).map(|index| (index % 5) as f32).collect();
            let bytes = (length * size_of::<f32>()) as f64;
            print!("{:>9} KiB", length * size_of::<f32>() / 1024);
            // Every other pass measures the variants in reverse order, so that none is
            // always the first to run after the arrays are made.
            let mut axpy_variants = AXPY_VARIANTS.to_vec();
            let mut dot_variants = DOT_VARIANTS.to_vec();
            if pass % 2 == 0 {
                axpy_variants.reverse();
                dot_variants.reverse();
            }
            for (name, kernel) in axpy_variants {
                // A tiny scale keeps the outputs finite however often they are updated.
                let time = median_nanoseconds_per_item(TimingPlan::FULL, length, || {
                    kernel(black_box(1e-7), black_box(&input), black_box(&mut output));
                });
                axpy.record(name, bytes, time);
                print!("  {name}: {time:.3}");
            }
            for (name, kernel) in dot_variants {
                let time = median_nanoseconds_per_item(TimingPlan::FULL, length, || {
                    black_box(kernel(black_box(&input), black_box(&output)));
                });
                dot.record(name, bytes, time);
                print!("  {name}: {time:.3}");
            }
            println!();
        }
    }
    println!(
        "\nWhat to look for: the three axpy loops run alike at every size. Among the dot \
         products,\nthe in-order chain and the indexed 16 sums are several times slower \
         than the two\nvectorised ones while the arrays sit in the caches."
    );

    let mut axpy_figure = figure(
        "rust-axpy-loops",
        "output[i] += scale · input[i]: indexed loops and an iterator",
    );
    axpy.add_to(&mut axpy_figure);
    let mut dot_figure = figure(
        "rust-dot-products",
        "A dot product: the order of the additions and the bounds checks",
    );
    dot.add_to(&mut dot_figure);
    if let Some(directory) = std::env::args().nth(1) {
        for figure in [&axpy_figure, &dot_figure] {
            figure.write_csv(Path::new(&directory))?;
            println!("wrote {directory}/{}.csv", figure.id);
        }
    }
    Ok(())
}
