//! Measures the irregular-workload figures of module 2 and writes their CSV files:
//! sorting throughput against length, sparse against dense products against density, and
//! the Monte Carlo error against the number of samples; then writes the small tables the
//! pages quote (gather orders, Monte Carlo with a locked generator and with streams).
//!
//! ```sh
//! cargo run --release --example irregular_workloads -- [--out figures/data] [--machine epyc]
//!     [--repeats 5] [--quick]
//! ```
//!
//! `--machine` names the files (`parallel-irregular-sorting-<machine>.csv`, …) so that runs
//! on several machines sit side by side; the hardware line inside each file comes from the
//! machine itself. Every time is the median of `--repeats` runs or more, after a warm-up,
//! with the fastest and slowest kept. GPU series run on the adapter `GALAXY_ADAPTER`
//! selects (the first one otherwise) and stop once one run passes the time budget.

use std::path::PathBuf;
use std::time::Instant;

use galaxy::bench::hardware::hardware_description;
use galaxy::bench::repeats::Repeats;
use galaxy::figure::{Axis, Figure, Point, Spread};
use galaxy::gpu::GpuContext;
use galaxy::memory::access_patterns::Permutation;
use galaxy::parallel::csr::{CsrMatrix, dense_product, random_sparse_dense};
use galaxy::parallel::gpu_csr::GpuSparseProducts;
use galaxy::parallel::gpu_monte_carlo::GpuRandomStreams;
use galaxy::parallel::gpu_sort::GpuSorter;
use galaxy::parallel::monte_carlo::{
    count_inside_locked, count_inside_parallel, count_inside_sequential, estimate_pi,
    expected_error,
};
use galaxy::parallel::random_access::{gather, gather_parallel, sequential_indices};
use galaxy::parallel::random_streams::SharedGenerator;
use galaxy::parallel::sorting::{CpuSort, random_keys};
use galaxy::tensor::Tensor2d;

struct Options {
    out: PathBuf,
    machine: String,
    repeats: usize,
    quick: bool,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        out: PathBuf::from("figures/data"),
        machine: "epyc".to_string(),
        repeats: 5,
        quick: false,
    };
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        match argument.as_str() {
            "--out" => options.out = arguments.next().ok_or("--out takes a folder")?.into(),
            "--machine" => {
                options.machine = arguments
                    .next()
                    .filter(|name| name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
                    .ok_or("--machine takes a short name of letters, digits and dashes")?;
            }
            "--repeats" => {
                options.repeats = arguments
                    .next()
                    .and_then(|value| value.parse().ok())
                    .filter(|&value: &usize| value >= 1)
                    .ok_or("--repeats takes a whole number of at least 1")?;
            }
            "--quick" => options.quick = true,
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(options)
}

/// Runs `prepare` then times `run` on what it prepared, `repeats` times after one warm-up,
/// and returns the times in seconds. Preparing (copying the keys to sort) is not timed.
fn time<T>(repeats: usize, mut prepare: impl FnMut() -> T, mut run: impl FnMut(T)) -> Repeats {
    run(prepare());
    let times = (0..repeats)
        .map(|_| {
            let input = prepare();
            let start = Instant::now();
            run(input);
            start.elapsed().as_secs_f64()
        })
        .collect();
    Repeats::new(times).expect("at least one repeat")
}

fn figure(id: String, title: &str, x: &str, y: &str, hardware: &str, command: &str) -> Figure {
    Figure {
        id,
        title: title.to_string(),
        x: Axis {
            label: x.to_string(),
            logarithmic: true,
        },
        y: Axis {
            label: y.to_string(),
            logarithmic: true,
        },
        hardware: hardware.to_string(),
        command: command.to_string(),
        series: Vec::new(),
    }
}

/// Adds a point whose y is `scale / time` (a throughput) or `time · scale` (a time).
fn push_time(
    figure: &mut Figure,
    series: &str,
    x: f64,
    times: &Repeats,
    to_y: impl Fn(f64) -> f64,
) {
    let (a, b) = (to_y(times.minimum()), to_y(times.maximum()));
    figure.push_with_spread(
        series,
        Point {
            x,
            y: to_y(times.median()),
        },
        Spread {
            minimum: a.min(b),
            maximum: a.max(b),
        },
    );
}

/// Seconds one run may take before a series stops growing.
const BUDGET_SECONDS: f64 = 1.0;

fn sorting(
    options: &Options,
    context: Option<&GpuContext>,
    hardware: &str,
    command: &str,
) -> Figure {
    let mut figure = figure(
        format!("parallel-irregular-sorting-{}", options.machine),
        "Sorting random u32 keys: throughput against length",
        "keys",
        "throughput (million keys/s)",
        hardware,
        command,
    );
    let largest = if options.quick { 16 } else { 24 };
    let sorter =
        context.map(|context| GpuSorter::new(context).expect("the bitonic shader compiles"));
    let mut gpu_running = true;
    for exponent in (10..=largest).step_by(2) {
        let length = 1_usize << exponent;
        let keys = random_keys(length, u32::MAX, exponent as u64);
        let per_second = |seconds: f64| length as f64 / seconds / 1e6;
        for sort in CpuSort::ALL {
            let times = time(
                options.repeats,
                || keys.clone(),
                |mut keys| sort.sort(&mut keys),
            );
            push_time(&mut figure, sort.label(), length as f64, &times, per_second);
        }
        if let (Some(context), Some(sorter), true) = (context, &sorter, gpu_running) {
            let times = time(
                options.repeats,
                || (),
                |()| {
                    sorter.sort_u32(context, &keys).expect("the GPU sort runs");
                },
            );
            push_time(
                &mut figure,
                "GPU bitonic (with copies)",
                length as f64,
                &times,
                per_second,
            );
            gpu_running = times.median() < BUDGET_SECONDS;
        }
        eprintln!("sorting: {length} keys done");
    }
    figure
}

fn sparse(
    options: &Options,
    context: Option<&GpuContext>,
    hardware: &str,
    command: &str,
) -> Figure {
    let (rows, columns) = if options.quick { (256, 16) } else { (1024, 64) };
    let mut figure = figure(
        format!("parallel-irregular-sparse-{}", options.machine),
        &format!(
            "A {rows}×{rows} matrix, sparse (CSR) or dense, times a dense {rows}×{columns} one"
        ),
        "density (fraction of entries non-zero)",
        "time (ms)",
        hardware,
        command,
    );
    let products =
        context.map(|context| GpuSparseProducts::new(context).expect("the CSR shader compiles"));
    let right = Tensor2d::random(rows, columns, -1.0..=1.0, 1);
    let milliseconds = |seconds: f64| seconds * 1e3;
    for density in [0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0] {
        let dense = random_sparse_dense(rows, rows, density, 2);
        let sparse = CsrMatrix::from_dense(&dense, 0.0).expect("random matrices hold no NaN");
        let times = time(
            options.repeats,
            || (),
            |()| {
                sparse.multiply_dense(&right).expect("shapes fit");
            },
        );
        push_time(&mut figure, "CSR, CPU", density, &times, milliseconds);
        let times = time(
            options.repeats,
            || (),
            |()| {
                dense_product(&dense, &right);
            },
        );
        push_time(&mut figure, "dense, CPU", density, &times, milliseconds);
        if let (Some(context), Some(products)) = (context, &products) {
            let prepared = products
                .prepare_sparse(context, &sparse, &right)
                .expect("shapes fit");
            let times = time(options.repeats, || (), |()| prepared.run(context));
            push_time(&mut figure, "CSR, GPU", density, &times, milliseconds);
            let prepared = products
                .prepare_dense(context, &dense, &right)
                .expect("shapes fit");
            let times = time(options.repeats, || (), |()| prepared.run(context));
            push_time(&mut figure, "dense, GPU", density, &times, milliseconds);
        }
        eprintln!("sparse: density {density} done");
    }
    figure
}

/// The error of the estimate is the same on every machine: the counts do not depend on
/// the hardware or the thread count. So this figure needs no machine in its name.
fn monte_carlo_error(options: &Options, command: &str) -> Figure {
    let seeds = 32;
    let mut figure = figure(
        "parallel-irregular-monte-carlo".to_string(),
        &format!("Error of the Monte Carlo estimate of π, root mean square over {seeds} seeds"),
        "samples",
        "error of the estimate",
        "any: the counts are exact integers, identical on every machine and thread count",
        command,
    );
    let largest = if options.quick { 16 } else { 24 };
    for exponent in (8..=largest).step_by(2) {
        let samples = 1_u32 << exponent;
        let squares: f64 = (0..seeds)
            .map(|seed| {
                let estimate = estimate_pi(count_inside_parallel(seed, samples), samples)
                    .expect("at least one sample");
                (estimate - std::f64::consts::PI).powi(2)
            })
            .sum();
        let x = f64::from(samples);
        figure.push(
            "measured",
            Point {
                x,
                y: (squares / f64::from(seeds)).sqrt(),
            },
        );
        figure.push(
            "1.64/√n",
            Point {
                x,
                y: expected_error(samples),
            },
        );
    }
    figure
}

/// The tables the pages quote, as text: medians (min–max) in ms.
fn tables(
    options: &Options,
    context: Option<&GpuContext>,
    hardware: &str,
    command: &str,
) -> String {
    let mut text = format!("# hardware: {hardware}\n# command: {command}\n");
    let show = |times: &Repeats| {
        format!(
            "{:.3} ms (min {:.3}, max {:.3})",
            times.median() * 1e3,
            times.minimum() * 1e3,
            times.maximum() * 1e3
        )
    };
    // Gather through sequential and random indices, large enough to leave the caches.
    let length = if options.quick { 1 << 16 } else { 1 << 24 };
    let values: Vec<f32> = (0..length).map(|index| index as f32).collect();
    let in_order = sequential_indices(length);
    let shuffled = Permutation::random(length, 3).expect("the length fits u32");
    text.push_str(&format!("\ngather of {length} f32 values:\n"));
    for (label, indices) in [
        ("sequential indices", &in_order[..]),
        ("random indices", shuffled.as_slice()),
    ] {
        let one = time(
            options.repeats,
            || (),
            |()| {
                gather(&values, indices).expect("indices in range");
            },
        );
        let all = time(
            options.repeats,
            || (),
            |()| {
                gather_parallel(&values, indices).expect("indices in range");
            },
        );
        text.push_str(&format!("  {label}, one thread: {}\n", show(&one)));
        text.push_str(&format!(
            "  {label}, rayon ({} threads): {}\n",
            rayon::current_num_threads(),
            show(&all)
        ));
    }
    // Monte Carlo: the same number of samples with a locked generator and with streams.
    let samples: u32 = if options.quick { 1 << 16 } else { 1 << 22 };
    let threads = rayon::current_num_threads();
    text.push_str(&format!(
        "\nMonte Carlo estimate of π with {samples} samples:\n"
    ));
    let generator = SharedGenerator::new(7);
    let mut locked_counts = Vec::new();
    let locked = time(
        options.repeats,
        || (),
        |()| {
            locked_counts.push(count_inside_locked(&generator, samples, threads));
        },
    );
    locked_counts.sort_unstable();
    locked_counts.dedup();
    text.push_str(&format!(
        "  one generator behind a lock, {threads} threads: {}; {} different counts in {} runs\n",
        show(&locked),
        locked_counts.len(),
        options.repeats + 1
    ));
    let sequential = time(
        options.repeats,
        || (),
        |()| {
            count_inside_sequential(1, samples);
        },
    );
    text.push_str(&format!(
        "  counter-based streams, one thread: {}\n",
        show(&sequential)
    ));
    let mut stream_counts = Vec::new();
    let parallel = time(
        options.repeats,
        || (),
        |()| {
            stream_counts.push(count_inside_parallel(1, samples));
        },
    );
    stream_counts.dedup();
    text.push_str(&format!(
        "  counter-based streams, rayon ({threads} threads): {}; {} different counts in {} runs\n",
        show(&parallel),
        stream_counts.len(),
        options.repeats + 1
    ));
    if let Some(context) = context {
        let streams = GpuRandomStreams::new(context).expect("the random-stream shader compiles");
        let gpu = time(
            options.repeats,
            || (),
            |()| {
                streams
                    .count_inside(context, 1, samples)
                    .expect("the GPU count runs");
            },
        );
        let same = streams
            .count_inside(context, 1, samples)
            .expect("the GPU count runs")
            == count_inside_sequential(1, samples);
        text.push_str(&format!(
            "  counter-based streams, GPU (with readback): {}; count equal to the CPU's: {same}\n",
            show(&gpu)
        ));
    }
    text
}

fn main() {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}");
            std::process::exit(2);
        }
    };
    let context = match GpuContext::shared() {
        Ok(context) => Some(context),
        Err(error) => {
            eprintln!("no GPU series: {error}");
            None
        }
    };
    let hardware = hardware_description(context);
    let date = std::env::var("GALAXY_RUN_DATE").unwrap_or_else(|_| "undated".to_string());
    let command = format!(
        "cargo run --release --example irregular_workloads -- --machine {} --repeats {}{} ({date})",
        options.machine,
        options.repeats,
        if options.quick { " --quick" } else { "" }
    );
    if let Err(error) = std::fs::create_dir_all(&options.out) {
        eprintln!("error: cannot create {}: {error}", options.out.display());
        std::process::exit(1);
    }
    let figures = [
        sorting(&options, context, &hardware, &command),
        sparse(&options, context, &hardware, &command),
        monte_carlo_error(&options, &command),
    ];
    for figure in &figures {
        if let Err(error) = figure.write_csv(&options.out) {
            eprintln!("error: {error}");
            std::process::exit(1);
        }
        eprintln!("wrote {}/{}.csv", options.out.display(), figure.id);
    }
    let text = tables(&options, context, &hardware, &command);
    let path = options
        .out
        .join(format!("parallel-irregular-tables-{}.txt", options.machine));
    if let Err(error) = std::fs::write(&path, &text) {
        eprintln!("error: cannot write {}: {error}", path.display());
        std::process::exit(1);
    }
    print!("{text}");
    eprintln!("wrote {}", path.display());
}
