//! Three ways to choose an activation at run time, timed per value over slices from 4 KiB
//! to 4 MiB: a generic function, a trait object called once per value or once per slice,
//! and an enum with a `match`.
//!
//! ```sh
//! cargo run --release --example dispatch
//! cargo run --release --example dispatch -- figures/data   # also writes the CSV
//! ```
//!
//! The activation is a ReLU, passed through `black_box` so that the compiler cannot see
//! which one it is at the call site. The whole sweep runs five times, every other pass in
//! reverse order; each point is the median of the passes.

use std::hint::black_box;
use std::path::Path;

use galaxy::bench::{Axis, Figure, FigureError, hardware_description};
use galaxy::memory::timing::{TimingPlan, median_nanoseconds_per_item};
use galaxy::rust_basics::dispatch::{
    ActivationKind, Relu, apply_dynamic, apply_dynamic_per_slice, apply_enum, apply_generic,
};
use galaxy::rust_basics::measure::RepeatedMeasurements;

/// Values per slice: 4 KiB to 4 MiB of `f32`.
const LENGTHS: [usize; 6] = [1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20];
const PASSES: usize = 5;

/// One way of applying the activation to a slice.
type Kernel<'a> = dyn Fn(&mut [f32]) + 'a;

fn main() -> Result<(), FigureError> {
    let hardware = hardware_description(None);
    println!("{hardware}\n");
    let kind = ActivationKind::Relu;
    let mut measurements = RepeatedMeasurements::default();
    for pass in 1..=PASSES {
        println!("pass {pass} of {PASSES}: time per value (ns)");
        println!(
            "{:>10} {:>9} {:>9} {:>14} {:>14}",
            "slice", "generic", "enum", "dyn per value", "dyn per slice"
        );
        for length in LENGTHS {
            // Alternating signs; after the first call the ReLU leaves the values as they
            // are, so every later call sees the same data.
            let mut values: Vec<f32> = (0..length)
                .map(|index| if index % 2 == 0 { 1.0 } else { -1.0 })
                .collect();
            let mut time = |call: &mut dyn FnMut(&mut [f32])| {
                median_nanoseconds_per_item(TimingPlan::FULL, length, || {
                    call(black_box(&mut values));
                })
            };
            let variants: [(&str, &Kernel<'_>); 4] = [
                ("generic", &|values| apply_generic(black_box(&Relu), values)),
                ("enum and match", &|values| {
                    apply_enum(black_box(kind), values)
                }),
                ("dyn: one call per value", &|values| {
                    apply_dynamic(black_box(&Relu), values)
                }),
                ("dyn: one call per slice", &|values| {
                    apply_dynamic_per_slice(black_box(&Relu), values)
                }),
            ];
            // Every other pass measures the variants in reverse order, so that none is
            // always the first to run after the slice is made.
            let mut order: Vec<usize> = (0..variants.len()).collect();
            if pass % 2 == 0 {
                order.reverse();
            }
            let bytes = (length * size_of::<f32>()) as f64;
            let mut times = [0.0; 4];
            for index in order {
                let (name, call) = variants[index];
                times[index] = time(&mut |values| call(values));
                measurements.record(name, bytes, times[index]);
            }
            let [generic, enumerated, dynamic, per_slice] = times;
            println!(
                "{:>6} KiB {generic:>9.3} {enumerated:>9.3} {dynamic:>14.3} {per_slice:>14.3}",
                length * size_of::<f32>() / 1024
            );
        }
    }
    println!(
        "\nWhat to look for: generic, enum and dyn per slice run alike, vectorised; a dynamic \
         call\nper value cannot be inlined and is several times slower while the data sits \
         in cache."
    );
    let mut figure = Figure {
        id: "rust-dispatch".to_string(),
        title: "A ReLU over a slice, chosen by generic, enum or trait object".to_string(),
        x: Axis {
            label: "size of the slice (bytes)".to_string(),
            logarithmic: true,
        },
        y: Axis {
            label: "time per value (ns)".to_string(),
            logarithmic: true,
        },
        hardware,
        command: "cargo run --release --example dispatch -- figures/data".to_string(),
        series: Vec::new(),
    };
    measurements.add_to(&mut figure);
    if let Some(directory) = std::env::args().nth(1) {
        figure.write_csv(Path::new(&directory))?;
        println!("wrote {directory}/{}.csv", figure.id);
    }
    Ok(())
}
