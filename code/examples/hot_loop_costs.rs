//! What a hot loop pays for work that does not belong in it: an allocation, a system call,
//! a log line, a check, a copy, per frame or per sample, each against the same loop with
//! that work hoisted out. Writes three CSV files for the pages of "Keeping the hot loop hot"
//! and "Correct first, then fast" (module 5), and prints the numbers as tables.
//!
//! ```sh
//! cargo run --release --example hot_loop_costs -- [--out figures/data] [--repeats 3] [--quick]
//! ```
//!
//! - `hot-loop-per-frame.csv`: time per frame against the frame's length, for costs paid
//!   once per frame (allocation, `metadata`, `write`, the clock, a log line);
//! - `hot-loop-per-sample.csv`: time per sample, for costs paid per sample (checks inside
//!   the loop, copying the previous frame, a sum that may alias);
//! - `hot-loop-memcpy.csv`: the bandwidth of `copy_from_slice` (`memcpy`) by buffer size.
//!
//! Every pass measures every point once; the CSV holds the median of the passes with the
//! fastest and the slowest. Log lines go to `/dev/null` through a `LineWriter`, which is
//! what `println!` uses for standard output. The functions measured are in
//! `galaxy::realtime` (`allocation`, `system_calls`, `logging`, `validation`, `copies`,
//! `aliasing`).

use std::cell::Cell;
use std::fs::{File, OpenOptions};
use std::hint::black_box;
use std::io::{BufWriter, LineWriter};
use std::path::{Path, PathBuf};

use galaxy::bench::hardware::hardware_description;
use galaxy::figure::{Axis, Figure};
use galaxy::memory::timing::{TimingPlan, median_nanoseconds_per_item};
use galaxy::realtime::aliasing::{add_all_exclusive, add_all_through_cells};
use galaxy::realtime::allocation::{SmoothedPeak, smoothed_peak_allocating};
use galaxy::realtime::copies::{copy_frame, motion_copying, motion_swapping};
use galaxy::realtime::logging::{count_then_log_once, log_every_frame};
use galaxy::realtime::system_calls::{
    process_until_stop_file_checking_every, process_until_stop_file_checking_every_frame,
    sums_timing_every_frame, sums_untimed, write_sums_every_frame, write_sums_once,
};
use galaxy::realtime::validation::{weighted_sum_checking_inside, weighted_sum_validated_first};
use galaxy::rust_basics::measure::RepeatedMeasurements;

/// Samples per measured call, whatever the frame length: 256 Ki samples, 1 MiB of `f32`.
const SAMPLES_PER_CALL: usize = 1 << 18;
/// The "hoisted" file check asks once every this many frames.
const FRAMES_BETWEEN_CHECKS: usize = 100;

struct Options {
    out: Option<PathBuf>,
    repeats: usize,
    quick: bool,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        out: None,
        repeats: 3,
        quick: false,
    };
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        match argument.as_str() {
            "--out" => options.out = Some(arguments.next().ok_or("--out takes a folder")?.into()),
            "--repeats" => {
                options.repeats = arguments
                    .next()
                    .and_then(|value| value.parse().ok())
                    .filter(|&value: &usize| value >= 1)
                    .ok_or("--repeats takes a whole number of at least 1")?;
            }
            "--quick" => options.quick = true,
            other => return Err(format!("unknown option {other}; see the file's header")),
        }
    }
    Ok(options)
}

fn main() {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}");
            std::process::exit(2);
        }
    };
    if let Err(message) = run(&options) {
        eprintln!("error: {message}");
        std::process::exit(1);
    }
}

fn run(options: &Options) -> Result<(), String> {
    let hardware = hardware_description(None);
    println!("{hardware}");
    let plan = if options.quick {
        TimingPlan::QUICK
    } else {
        TimingPlan::FULL
    };
    let frame_lengths: &[usize] = if options.quick {
        &[16, 4096]
    } else {
        &[16, 256, 4096, 65_536]
    };
    let copy_bytes: &[usize] = if options.quick {
        &[4 << 10, 1 << 20]
    } else {
        &[4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20]
    };
    let samples: Vec<f32> = (0..SAMPLES_PER_CALL)
        .map(|index| ((index * 37) % 101) as f32 / 50.0 - 1.0)
        .collect();
    let weights: Vec<f32> = (0..65_536)
        .map(|index| ((index * 11) % 17) as f32 / 17.0)
        .collect();
    let null = || -> Result<File, String> {
        OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .map_err(|error| format!("cannot open /dev/null for writing: {error}"))
    };
    let stop_file = std::env::temp_dir().join(format!(
        "galaxy-hot-loop-stop-{}-never-created",
        std::process::id()
    ));

    let mut per_frame = RepeatedMeasurements::default();
    let mut per_sample = RepeatedMeasurements::default();
    let mut bandwidth = RepeatedMeasurements::default();
    for pass in 1..=options.repeats {
        eprintln!("pass {pass} of {}", options.repeats);
        for &frame_length in frame_lengths {
            let frames = SAMPLES_PER_CALL / frame_length;
            let x = frame_length as f64;
            let mut record = |series: &str, call: &mut dyn FnMut()| {
                per_frame.record(series, x, median_nanoseconds_per_item(plan, frames, call));
            };
            // ANCHOR: measure_allocation
            record("allocate every frame", &mut || {
                for frame in samples.chunks_exact(frame_length) {
                    black_box(smoothed_peak_allocating(black_box(frame)));
                }
            });
            let mut reusing = SmoothedPeak::with_frame_length(frame_length);
            record("reuse one buffer", &mut || {
                for frame in samples.chunks_exact(frame_length) {
                    black_box(reusing.peak(black_box(frame)));
                }
            });
            // ANCHOR_END: measure_allocation
            record("metadata every frame", &mut || {
                black_box(process_until_stop_file_checking_every_frame(
                    black_box(&samples),
                    frame_length,
                    &stop_file,
                ));
            });
            record("metadata every 100 frames", &mut || {
                black_box(process_until_stop_file_checking_every(
                    black_box(&samples),
                    frame_length,
                    &stop_file,
                    FRAMES_BETWEEN_CHECKS,
                ));
            });
            let mut file = null()?;
            let mut failure = None;
            record("write every frame", &mut || {
                if let Err(error) =
                    write_sums_every_frame(&mut file, black_box(&samples), frame_length)
                {
                    failure = Some(error);
                }
            });
            record("one write for all frames", &mut || {
                if let Err(error) = write_sums_once(&mut file, black_box(&samples), frame_length) {
                    failure = Some(error);
                }
            });
            record("clock read twice a frame", &mut || {
                black_box(sums_timing_every_frame(black_box(&samples), frame_length));
            });
            record("no clock", &mut || {
                black_box(sums_untimed(black_box(&samples), frame_length));
            });
            let mut line_writer = LineWriter::new(null()?);
            record("a line per frame, LineWriter", &mut || {
                if let Err(error) =
                    log_every_frame(&mut line_writer, black_box(&samples), frame_length, 0.5)
                {
                    failure = Some(error);
                }
            });
            let mut buffered = BufWriter::new(null()?);
            record("a line per frame, BufWriter", &mut || {
                if let Err(error) =
                    log_every_frame(&mut buffered, black_box(&samples), frame_length, 0.5)
                {
                    failure = Some(error);
                }
            });
            let mut once = null()?;
            record("count, one line at the end", &mut || {
                if let Err(error) =
                    count_then_log_once(&mut once, black_box(&samples), frame_length, 0.5)
                {
                    failure = Some(error);
                }
            });
            if let Some(error) = failure {
                return Err(format!("writing to /dev/null failed: {error}"));
            }

            let mut record = |series: &str, call: &mut dyn FnMut()| {
                per_sample.record(
                    series,
                    x,
                    median_nanoseconds_per_item(plan, SAMPLES_PER_CALL, call),
                );
            };
            let weights = &weights[..frame_length];
            record("checks inside the loop", &mut || {
                for frame in samples.chunks_exact(frame_length) {
                    let _ = black_box(weighted_sum_checking_inside(black_box(frame), weights));
                }
            });
            record("validated first", &mut || {
                for frame in samples.chunks_exact(frame_length) {
                    let _ = black_box(weighted_sum_validated_first(black_box(frame), weights));
                }
            });
            record("copy the previous frame", &mut || {
                black_box(motion_copying(frames, frame_length));
            });
            record("swap the two buffers", &mut || {
                black_box(motion_swapping(frames, frame_length));
            });
            let mut values = samples.clone();
            let mut total = 0.0f32;
            record("sum into &mut f32", &mut || {
                for frame in values.chunks_exact(frame_length) {
                    add_all_exclusive(black_box(&mut total), black_box(frame));
                }
            });
            let cells = Cell::from_mut(values.as_mut_slice()).as_slice_of_cells();
            let shared = Cell::new(0.0f32);
            record("sum into a Cell", &mut || {
                for frame in cells.chunks_exact(frame_length) {
                    add_all_through_cells(black_box(&shared), black_box(frame));
                }
            });
        }
        for &bytes in copy_bytes {
            let length = bytes / size_of::<f32>();
            let source = vec![1.0f32; length];
            let mut destination = vec![0.0f32; length];
            let nanoseconds = median_nanoseconds_per_item(plan, 1, || {
                copy_frame(black_box(&source), black_box(&mut destination));
            });
            // Bytes copied per nanosecond is GB/s (10⁹ bytes per second).
            bandwidth.record(
                "copy_from_slice (memcpy)",
                bytes as f64,
                bytes as f64 / nanoseconds,
            );
        }
    }

    let command = format!(
        "cargo run --release --example hot_loop_costs -- --repeats {}{} ({})",
        options.repeats,
        if options.quick { " --quick" } else { "" },
        std::env::var("GALAXY_RUN_DATE").unwrap_or_else(|_| "undated".to_string())
    );
    let figures = [
        figure(
            "hot-loop-per-frame",
            "Work done once per frame, in the loop or hoisted out of it",
            "frame length (samples), log",
            "time per frame (ns), log",
            &per_frame,
            &hardware,
            &command,
        ),
        figure(
            "hot-loop-per-sample",
            "Work done for every sample: checks, copies and a sum that may alias",
            "frame length (samples), log",
            "time per sample (ns), log",
            &per_sample,
            &hardware,
            &command,
        ),
        figure(
            "hot-loop-memcpy",
            "How fast memcpy copies, by the size of the buffer",
            "buffer size (bytes), log",
            "bandwidth (GB/s)",
            &bandwidth,
            &hardware,
            &command,
        ),
    ];
    for figure in &figures {
        print_table(figure);
        if let Some(directory) = &options.out {
            write(figure, directory)?;
        }
    }
    Ok(())
}

fn figure(
    id: &str,
    title: &str,
    x: &str,
    y: &str,
    measurements: &RepeatedMeasurements,
    hardware: &str,
    command: &str,
) -> Figure {
    let axis = |label: &str| {
        let logarithmic = label.ends_with(", log");
        Axis {
            label: label.trim_end_matches(", log").to_string(),
            logarithmic,
        }
    };
    let mut figure = Figure {
        id: id.to_string(),
        title: title.to_string(),
        x: axis(x),
        y: axis(y),
        hardware: hardware.to_string(),
        command: command.to_string(),
        series: Vec::new(),
    };
    measurements.add_to(&mut figure);
    figure
}

/// One line per series: the median of every point, with the range of the passes.
fn print_table(figure: &Figure) {
    println!(
        "\n{} ({}; by {})",
        figure.title, figure.y.label, figure.x.label
    );
    for series in &figure.series {
        let points: Vec<String> = series
            .points
            .iter()
            .zip(&series.spreads)
            .map(|(point, spread)| match spread {
                Some(spread) => format!(
                    "{}: {:.3} ({:.3}-{:.3})",
                    point.x, point.y, spread.minimum, spread.maximum
                ),
                None => format!("{}: {:.3}", point.x, point.y),
            })
            .collect();
        println!("  {:<30} {}", series.name, points.join(", "));
    }
}

fn write(figure: &Figure, directory: &Path) -> Result<(), String> {
    figure
        .write_csv(directory)
        .map_err(|error| format!("cannot write {}: {error}", figure.id))?;
    println!(
        "wrote {}",
        directory.join(format!("{}.csv", figure.id)).display()
    );
    Ok(())
}
