//! Measures the integer, data-layout and compression figures of module 3 and writes their
//! CSV files: hash-table keys, the positions of pruned weights, Z-order against row-major,
//! the resolution of a depth buffer; then prints the tables the pages quote (compression
//! speed, normal packing error, point quantisation error).
//!
//! ```sh
//! cargo run --release --example numbers_data -- [--repeats 3] [--out figures/data] [--quick]
//!     [--computed-only]
//! ```
//!
//! Every timed point is measured `--repeats` times, the repeats interleaved, and the CSV
//! holds the median with the fastest and slowest. `--computed-only` writes only the two
//! figures that are counted or computed rather than timed (the sizes of the pruned weights'
//! positions, the depth-buffer resolution). The functions measured are in
//! `galaxy::numbers`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use galaxy::bench::hardware::hardware_description;
use galaxy::bench::repeats::Repeats;
use galaxy::figure::{Figure, Point, Spread};
use galaxy::memory::timing::TimingPlan;
use galaxy::numbers::data_measurements::{
    compression_figure, compression_speed, depth_figure, hash_keys_figure, measure_hash_keys,
    measure_morton, morton_figure,
};
use galaxy::numbers::octahedral::{normal_packing_error, random_normals};
use galaxy::numbers::point_quantisation::quantisation_error;

struct Options {
    repeats: usize,
    out: PathBuf,
    quick: bool,
    /// Only the figures computed without timing (sizes, errors): no repeats needed.
    computed_only: bool,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        repeats: 3,
        out: PathBuf::from("figures/data"),
        quick: false,
        computed_only: false,
    };
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        match argument.as_str() {
            "--repeats" => {
                options.repeats = arguments
                    .next()
                    .and_then(|value| value.parse().ok())
                    .filter(|&value: &usize| value >= 1)
                    .ok_or("--repeats takes a whole number of at least 1")?;
            }
            "--out" => options.out = arguments.next().ok_or("--out takes a folder")?.into(),
            "--quick" => options.quick = true,
            "--computed-only" => options.computed_only = true,
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(options)
}

/// Medians with their range, from `repeats` lists of `(series, x, y)` rows.
fn with_spread(
    repeats: &[Vec<(String, usize, f64)>],
    mut build: impl FnMut(&[(String, usize, f64)]) -> Figure,
) -> Figure {
    let mut values: BTreeMap<(usize, usize), Vec<f64>> = BTreeMap::new();
    for rows in repeats {
        for (index, (_, x, y)) in rows.iter().enumerate() {
            values.entry((index, *x)).or_default().push(*y);
        }
    }
    let mut figure = build(&[]);
    for (index, (series, x, _)) in repeats[0].iter().enumerate() {
        let Some(repeats) = Repeats::new(values[&(index, *x)].clone()) else {
            continue;
        };
        figure.push_with_spread(
            series,
            Point {
                x: *x as f64,
                y: repeats.median(),
            },
            Spread {
                minimum: repeats.minimum(),
                maximum: repeats.maximum(),
            },
        );
    }
    figure
}

fn main() {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}");
            std::process::exit(2);
        }
    };
    let hardware = hardware_description(None);
    let date = std::env::var("GALAXY_RUN_DATE").unwrap_or_else(|_| "undated".to_string());
    let command = if options.computed_only {
        format!("cargo run --release --example numbers_data -- --computed-only ({date})")
    } else {
        format!(
            "cargo run --release --example numbers_data -- --repeats {}{} ({date})",
            options.repeats,
            if options.quick { " --quick" } else { "" }
        )
    };
    let plan = if options.quick {
        TimingPlan::QUICK
    } else {
        TimingPlan::FULL
    };
    let (distincts, events, sides): (Vec<usize>, usize, Vec<usize>) = if options.quick {
        (vec![8, 1024], 20_000, vec![64, 256])
    } else {
        (
            vec![8, 64, 1024, 16_384, 262_144],
            1 << 20,
            vec![64, 128, 256, 512, 1024, 2048, 4096],
        )
    };

    let mut key_runs = Vec::new();
    let mut morton_runs = Vec::new();
    let timed_repeats = if options.computed_only {
        0
    } else {
        options.repeats
    };
    for repeat in 1..=timed_repeats {
        eprintln!("repeat {repeat} of {}: hash keys", options.repeats);
        key_runs.push(measure_hash_keys(&distincts, events, plan));
        eprintln!("repeat {repeat} of {}: Z-order", options.repeats);
        morton_runs.push(measure_morton(&sides, plan));
    }
    let fractions = [0.5, 0.75, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999];
    let mut figures = vec![
        compression_figure(&hardware, &fractions),
        depth_figure(&hardware),
    ];
    if !options.computed_only {
        figures.push(with_spread(&key_runs, |rows| {
            hash_keys_figure(&hardware, rows)
        }));
        figures.push(with_spread(&morton_runs, |rows| {
            morton_figure(&hardware, rows)
        }));
    }
    if let Err(error) = std::fs::create_dir_all(&options.out) {
        eprintln!("error: cannot create {}: {error}", options.out.display());
        std::process::exit(1);
    }
    for mut figure in figures {
        figure.command = command.clone();
        if let Err(error) = figure.write_csv(&options.out) {
            eprintln!("error: {error}");
            std::process::exit(1);
        }
        println!(
            "wrote {}",
            options.out.join(format!("{}.csv", figure.id)).display()
        );
    }

    if options.computed_only {
        return;
    }
    println!("\nCompression speed at 90 % pruned (ns per kept position, median of repeats):");
    let speeds: Vec<(f64, f64, f64, f64)> = (0..options.repeats)
        .map(|_| compression_speed(0.9, plan))
        .collect();
    let column = |pick: fn(&(f64, f64, f64, f64)) -> f64| {
        Repeats::new(speeds.iter().map(pick).collect()).map_or(String::new(), |r| {
            format!("{:.2} ({:.2}–{:.2})", r.median(), r.minimum(), r.maximum())
        })
    };
    println!("  delta + LEB128 encode     {}", column(|s| s.0));
    println!("  delta + LEB128 decode     {}", column(|s| s.1));
    println!("  run-length mask encode    {}", column(|s| s.2));
    println!("  run-length mask decode    {}", column(|s| s.3));

    println!("\nOctahedral normals, 1 000 000 random unit vectors:");
    let normals = random_normals(1_000_000, 42);
    for bits in [16, 12, 10, 8] {
        let (largest, mean) = normal_packing_error(&normals, bits);
        println!(
            "  2 × {bits:>2} bits ({:>2} bits in all): largest error {largest:.5}°, mean {mean:.5}°",
            2 * bits
        );
    }

    println!("\nPoint quantisation, 1 000 000 random points in a 100 m cube:");
    for bits in [8, 10, 11, 12, 14, 16] {
        let (largest, mean, bound) = quantisation_error(1_000_000, 100.0, bits, 9);
        println!(
            "  {bits:>2} bits per axis: largest error {:.3} mm, mean {:.3} mm, bound {:.3} mm",
            largest * 1e3,
            mean * 1e3,
            bound * 1e3
        );
    }
}
