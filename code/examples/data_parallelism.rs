//! Measures the data-parallelism chapter: rayon against fixed chunks and a shared queue on
//! a balanced and an unbalanced workload, from one thread to more threads than cores; the
//! SIMD sums; arrays of structs against structs of arrays; the branchless clamp on random
//! and sorted data; and the workload on CPU threads against a WGSL kernel.
//!
//! ```sh
//! cargo run --release --example data_parallelism -- [--out figures/data] [--repeats 3]
//!     [--machine epyc] [--quick] [--no-gpu] [--only scheduling|simd|layouts|branchless|gpu]…
//! ```
//!
//! It writes `parallel-data-<figure>-<machine>.csv` for six figures into `--out` (the
//! scheduling part writes two: the speed-ups, and the busiest thread's share of the work), each
//! point the median of `--repeats` interleaved repeats with the fastest and slowest, and
//! prints how many items each rayon worker processed. The CPU model (and the GPU adapter)
//! go into every file's header. Every result is checked against the sequential loop
//! before it is timed. The functions measured are in `galaxy::parallel`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use galaxy::bench::hardware::{core_count, hardware_description};
use galaxy::bench::repeats::Repeats;
use galaxy::figure::{Axis, Figure, Point};
use galaxy::gpu::GpuContext;
use galaxy::memory::timing::{TimingPlan, median_nanoseconds_per_item};
use galaxy::parallel::branchless::ClampForm;
use galaxy::parallel::fixed_chunks::{
    process_in_fixed_chunks, process_with_shared_counter, steps_per_fixed_chunk,
};
use galaxy::parallel::gpu_map::GpuItemProcessor;
use galaxy::parallel::layouts::{
    count_within_array_of_structs, count_within_struct_of_arrays, random_particles,
    to_struct_of_arrays,
};
use galaxy::parallel::simd::SumKernel;
use galaxy::parallel::work_stealing::{process_with_rayon_in, rayon_pool, work_per_worker};
use galaxy::parallel::workloads::{Balance, Workload, process_sequential};
use galaxy::tensor::Tensor2d;

struct Options {
    out: PathBuf,
    repeats: usize,
    machine: String,
    quick: bool,
    gpu: bool,
    /// Only these figures (`scheduling`, `simd`, `layouts`, `branchless`, `gpu`); all when
    /// empty.
    only: Vec<String>,
}

const FIGURES: [&str; 5] = ["scheduling", "simd", "layouts", "branchless", "gpu"];

impl Options {
    fn wants(&self, figure: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|wanted| wanted == figure)
    }
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        out: PathBuf::from("figures/data"),
        repeats: 3,
        machine: "local".to_string(),
        quick: false,
        gpu: true,
        only: Vec::new(),
    };
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        match argument.as_str() {
            "--out" => options.out = arguments.next().ok_or("--out takes a folder")?.into(),
            "--repeats" => {
                options.repeats = arguments
                    .next()
                    .and_then(|value| value.parse().ok())
                    .filter(|&value: &usize| value >= 1)
                    .ok_or("--repeats takes a whole number of at least 1")?;
            }
            "--machine" => {
                options.machine = arguments
                    .next()
                    .filter(|name| {
                        !name.is_empty()
                            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                    })
                    .ok_or("--machine takes a short name of letters, digits and '-'")?;
            }
            "--quick" => options.quick = true,
            "--no-gpu" => options.gpu = false,
            "--only" => {
                let figure = arguments.next().unwrap_or_default();
                if !FIGURES.contains(&figure.as_str()) {
                    return Err(format!("--only takes one of {}", FIGURES.join(", ")));
                }
                options.only.push(figure);
            }
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(options)
}

/// Repeated measurements of many points, kept in the order the series first appear.
#[derive(Default)]
struct Measurements {
    series: Vec<String>,
    values: BTreeMap<(usize, u64), Vec<f64>>,
    xs: BTreeMap<usize, Vec<f64>>,
}

impl Measurements {
    fn add(&mut self, series: &str, x: f64, y: f64) {
        let index = match self.series.iter().position(|name| name == series) {
            Some(index) => index,
            None => {
                self.series.push(series.to_string());
                self.series.len() - 1
            }
        };
        let xs = self.xs.entry(index).or_default();
        if !xs.contains(&x) {
            xs.push(x);
        }
        self.values.entry((index, x.to_bits())).or_default().push(y);
    }

    fn into_figure(self, id: String, title: &str, x: &str, y: &str, hardware: &str) -> Figure {
        let axis = |label: &str| Axis {
            label: label.trim_end_matches(", log").to_string(),
            logarithmic: label.ends_with(", log"),
        };
        let mut figure = Figure {
            id,
            title: title.to_string(),
            x: axis(x),
            y: axis(y),
            hardware: hardware.to_string(),
            command: String::new(),
            series: Vec::new(),
        };
        for (index, name) in self.series.iter().enumerate() {
            for &x in &self.xs[&index] {
                let repeats = Repeats::new(self.values[&(index, x.to_bits())].clone())
                    .expect("every point was measured");
                let point = Point {
                    x,
                    y: repeats.median(),
                };
                match repeats.spread() {
                    Some(spread) => figure.push_with_spread(name, point, spread),
                    None => figure.push(name, point),
                }
            }
        }
        figure
    }
}

/// 1 to 4 threads, then the usual steps up to twice the cores, and four times the cores.
fn thread_counts(cores: usize) -> Vec<usize> {
    let mut counts: Vec<usize> = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128]
        .into_iter()
        .filter(|&count| count <= 2 * cores)
        .collect();
    counts.extend([cores, 4 * cores]);
    counts.sort_unstable();
    counts.dedup();
    counts
}

fn milliseconds(plan: TimingPlan, call: impl FnMut()) -> f64 {
    median_nanoseconds_per_item(plan, 1, call) / 1e6
}

/// Rayon, fixed chunks and the shared queue against the sequential loop: speed-up by
/// thread count, balanced and unbalanced.
fn scheduling(options: &Options, plan: TimingPlan, hardware: &str) -> Figure {
    let items = if options.quick { 1 << 16 } else { 1 << 20 };
    let average_steps = 32;
    let counts = thread_counts(core_count());
    let pools: Vec<(usize, rayon::ThreadPool)> = counts
        .iter()
        .map(|&threads| (threads, rayon_pool(threads).expect("threads start")))
        .collect();
    let mut measurements = Measurements::default();
    for repeat in 1..=options.repeats {
        eprintln!("scheduling, repeat {repeat} of {}", options.repeats);
        for balance in [Balance::Balanced, Balance::Unbalanced] {
            let workload = Workload::new(balance, items, average_steps, 1);
            let mut expected = vec![f32::NAN; items];
            process_sequential(&workload, &mut expected).expect("lengths match");
            let mut output = vec![f32::NAN; items];
            let sequential = milliseconds(plan, || {
                process_sequential(&workload, &mut output).expect("lengths match")
            });
            for (threads, pool) in &pools {
                let threads = *threads;
                let mut run = |name: &str, process: &mut dyn FnMut(&mut [f32])| {
                    output.fill(f32::NAN);
                    process(&mut output);
                    assert_eq!(output, expected, "{name} with {threads} threads");
                    let time = milliseconds(plan, || process(&mut output));
                    measurements.add(
                        &format!("{name}, {}", balance.name()),
                        threads as f64,
                        sequential / time,
                    );
                };
                run("rayon", &mut |output| {
                    process_with_rayon_in(pool, &workload, output).expect("lengths match")
                });
                run("fixed chunks", &mut |output| {
                    process_in_fixed_chunks(&workload, output, threads).expect("lengths match")
                });
                run("shared queue", &mut |output| {
                    process_with_shared_counter(&workload, output, threads)
                        .map(|_| ())
                        .expect("lengths match")
                });
            }
        }
    }
    measurements.into_figure(
        format!("parallel-data-scheduling-{}", options.machine),
        &format!(
            "Speed-up over one thread, {} items, the same total work balanced or as a ramp",
            items
        ),
        "threads",
        "speed-up over the sequential loop",
        hardware,
    )
}

/// The busiest thread's share of the steps, in percent, for each split and thread count:
/// 100 / threads is a perfect split. Rayon and the shared queue decide while they run, so
/// their shares are measured; the fixed chunks' shares are decided before the run.
fn work_shares(options: &Options, hardware: &str) -> Figure {
    let items = if options.quick { 1 << 16 } else { 1 << 20 };
    let counts = thread_counts(core_count());
    let pools: Vec<(usize, rayon::ThreadPool)> = counts
        .iter()
        .map(|&threads| (threads, rayon_pool(threads).expect("threads start")))
        .collect();
    let mut measurements = Measurements::default();
    let busiest = |steps: &[u64]| {
        let total: u64 = steps.iter().sum();
        100.0 * *steps.iter().max().unwrap_or(&0) as f64 / total.max(1) as f64
    };
    for repeat in 1..=options.repeats {
        eprintln!("work shares, repeat {repeat} of {}", options.repeats);
        for balance in [Balance::Balanced, Balance::Unbalanced] {
            let workload = Workload::new(balance, items, 32, 1);
            let mut output = vec![f32::NAN; items];
            for (threads, pool) in &pools {
                let x = *threads as f64;
                let name = |split: &str| format!("{split}, {}", balance.name());
                let rayon: Vec<u64> = work_per_worker(pool, &workload)
                    .expect("lengths match")
                    .iter()
                    .map(|share| share.steps)
                    .collect();
                measurements.add(&name("rayon"), x, busiest(&rayon));
                let queue = process_with_shared_counter(&workload, &mut output, *threads)
                    .expect("lengths match");
                measurements.add(&name("shared queue"), x, busiest(&queue));
                let fixed = steps_per_fixed_chunk(&workload, *threads);
                measurements.add(&name("fixed chunks"), x, busiest(&fixed));
                measurements.add(&name("even split"), x, 100.0 / x);
            }
        }
    }
    measurements.into_figure(
        format!("parallel-data-work-share-{}", options.machine),
        &format!("The busiest thread's share of the work, {items} items, balanced or as a ramp"),
        "threads",
        "busiest thread's share of the steps (%)",
        hardware,
    )
}

/// How many items and steps each rayon worker processed, printed for the text.
fn print_work_per_worker(options: &Options) {
    let items = if options.quick { 1 << 16 } else { 1 << 20 };
    let threads = core_count().max(2);
    let pool = rayon_pool(threads).expect("threads start");
    println!(
        "Items and steps processed by each of {threads} rayon workers ({items} items, 3 runs):"
    );
    for balance in [Balance::Balanced, Balance::Unbalanced] {
        let workload = Workload::new(balance, items, 32, 1);
        for _ in 0..3 {
            let shares = work_per_worker(&pool, &workload).expect("lengths match");
            let described: Vec<String> = shares
                .iter()
                .map(|share| format!("{} items, {} steps", share.items, share.steps))
                .collect();
            println!("  {:<10} {}", balance.name(), described.join(" | "));
        }
    }
}

/// The four sums by array size.
fn simd_sums(options: &Options, plan: TimingPlan, hardware: &str) -> Figure {
    let largest = if options.quick { 1 << 18 } else { 1 << 24 };
    let lengths: Vec<usize> = (10..=24)
        .step_by(2)
        .map(|power| 1usize << power)
        .filter(|&length| length <= largest)
        .collect();
    let mut measurements = Measurements::default();
    for repeat in 1..=options.repeats {
        eprintln!("SIMD sums, repeat {repeat} of {}", options.repeats);
        for &length in &lengths {
            let values = Tensor2d::random(1, length, -1.0..=1.0, length as u64).into_vec();
            let exact: f64 = values.iter().map(|&value| f64::from(value)).sum();
            for kernel in SumKernel::available() {
                let total = kernel.sum(&values).expect("available");
                assert!((f64::from(total) - exact).abs() < 1e-3 * (length as f64).sqrt() + 1e-3);
                let nanoseconds = median_nanoseconds_per_item(plan, length, || {
                    std::hint::black_box(kernel.sum(std::hint::black_box(&values)).ok());
                });
                // 4 bytes per value: bytes per ns is GB/s.
                measurements.add(kernel.name(), (length * 4) as f64, 4.0 / nanoseconds);
            }
        }
    }
    measurements.into_figure(
        format!("parallel-data-simd-{}", options.machine),
        "Summing f32 values: in order, in 16 lanes, and with AVX2 and AVX-512 intrinsics",
        "array size (bytes), log",
        "values read (GB/s), log",
        hardware,
    )
}

/// The distance query on both layouts by particle count.
fn layouts(options: &Options, plan: TimingPlan, hardware: &str) -> Figure {
    let largest = if options.quick { 1 << 14 } else { 1 << 22 };
    let counts: Vec<usize> = (10..=22)
        .step_by(2)
        .map(|power| 1usize << power)
        .filter(|&count| count <= largest)
        .collect();
    let mut measurements = Measurements::default();
    for repeat in 1..=options.repeats {
        eprintln!("layouts, repeat {repeat} of {}", options.repeats);
        for &count in &counts {
            let particles = random_particles(count, count as u64);
            let soa = to_struct_of_arrays(&particles);
            let centre = [0.1, -0.2, 0.3];
            let aos = count_within_array_of_structs(&particles, centre, 0.5);
            assert_eq!(aos, count_within_struct_of_arrays(&soa, centre, 0.5));
            let aos_time = median_nanoseconds_per_item(plan, count, || {
                std::hint::black_box(count_within_array_of_structs(
                    std::hint::black_box(&particles),
                    centre,
                    0.5,
                ));
            });
            let soa_time = median_nanoseconds_per_item(plan, count, || {
                std::hint::black_box(count_within_struct_of_arrays(
                    std::hint::black_box(&soa),
                    centre,
                    0.5,
                ));
            });
            measurements.add("array of structs", count as f64, aos_time);
            measurements.add("struct of arrays", count as f64, soa_time);
        }
    }
    measurements.into_figure(
        format!("parallel-data-layouts-{}", options.machine),
        "Counting particles within a radius: 48-byte structs against three arrays of coordinates",
        "particles, log",
        "time per particle (ns), log",
        hardware,
    )
}

/// The clamp forms by the share of values above the limit, shuffled and sorted.
fn branchless(options: &Options, plan: TimingPlan, hardware: &str) -> Figure {
    let length = 1 << 16;
    // Sixteen different arrays, used in turn: a predictor can learn a short pattern that
    // repeats call after call, but not a million values' worth.
    let arrays = 16;
    let mut measurements = Measurements::default();
    for repeat in 1..=options.repeats {
        eprintln!("branchless, repeat {repeat} of {}", options.repeats);
        for tenth in 0..=10 {
            let share = f64::from(tenth) / 10.0;
            let limit = (1.0 - share) as f32;
            let random: Vec<Vec<f32>> = (0..arrays)
                .map(|seed| Tensor2d::random(1, length, 0.0..=1.0, seed).into_vec())
                .collect();
            let sorted: Vec<Vec<f32>> = random
                .iter()
                .map(|values| {
                    let mut values = values.clone();
                    values.sort_by(f32::total_cmp);
                    values
                })
                .collect();
            let mut values = vec![0.0f32; length];
            let mut next = 0;
            let copy_time = median_nanoseconds_per_item(plan, length, || {
                next = (next + 1) % arrays as usize;
                values.copy_from_slice(std::hint::black_box(&random[next]));
                std::hint::black_box(&mut values);
            });
            measurements.add("copy alone", share, copy_time);
            for form in ClampForm::ALL {
                for (order, sources) in [("random", &random), ("sorted", &sorted)] {
                    if form == ClampForm::Min && order == "sorted" {
                        continue;
                    }
                    let time = median_nanoseconds_per_item(plan, length, || {
                        next = (next + 1) % arrays as usize;
                        values.copy_from_slice(&sources[next]);
                        form.run(std::hint::black_box(&mut values), limit);
                    });
                    let label = match form {
                        ClampForm::Branch => "if",
                        ClampForm::Select => "select",
                        ClampForm::Min => "min",
                    };
                    measurements.add(&format!("{label}, {order}"), share, time);
                }
            }
        }
    }
    measurements.into_figure(
        format!("parallel-data-branchless-{}", options.machine),
        &format!(
            "Clamping {length} values in place, after restoring them with a copy from one of {arrays} arrays"
        ),
        "share of values above the limit",
        "time per value (ns)",
        hardware,
    )
}

/// The workload on one thread, on rayon with every core, and as a WGSL kernel.
fn cpu_against_gpu(
    options: &Options,
    plan: TimingPlan,
    context: &GpuContext,
    hardware: &str,
) -> Figure {
    let processor = GpuItemProcessor::new(context).expect("the kernel compiles");
    let largest = if options.quick { 1 << 14 } else { 1 << 22 };
    let sizes: Vec<usize> = (10..=22)
        .step_by(2)
        .map(|power| 1usize << power)
        .filter(|&items| items <= largest)
        .collect();
    let pool = rayon_pool(core_count()).expect("threads start");
    let mut measurements = Measurements::default();
    for repeat in 1..=options.repeats {
        eprintln!("CPU against GPU, repeat {repeat} of {}", options.repeats);
        for &items in &sizes {
            for balance in [Balance::Balanced, Balance::Unbalanced] {
                let workload = Workload::new(balance, items, 32, 3);
                let mut expected = vec![f32::NAN; items];
                process_sequential(&workload, &mut expected).expect("lengths match");
                let mut output = vec![f32::NAN; items];
                processor
                    .run(context, &workload, &mut output)
                    .expect("the GPU runs");
                assert!(
                    output
                        .iter()
                        .zip(&expected)
                        .all(|(gpu, cpu)| gpu.to_bits() == cpu.to_bits()),
                    "the GPU disagrees with the CPU at {items} items"
                );
                let suffix = match balance {
                    Balance::Balanced => "",
                    Balance::Unbalanced => ", unbalanced",
                };
                if balance == Balance::Balanced {
                    let time = milliseconds(plan, || {
                        process_sequential(&workload, &mut output).expect("lengths match")
                    });
                    measurements.add("one CPU thread", items as f64, time);
                }
                let time = milliseconds(plan, || {
                    process_with_rayon_in(&pool, &workload, &mut output).expect("lengths match")
                });
                measurements.add(&format!("rayon, every core{suffix}"), items as f64, time);
                let time = milliseconds(plan, || {
                    processor
                        .run(context, &workload, &mut output)
                        .expect("the GPU runs")
                });
                measurements.add(&format!("GPU kernel{suffix}"), items as f64, time);
            }
        }
    }
    measurements.into_figure(
        format!("parallel-data-gpu-{}", options.machine),
        "The workload on CPU threads and as a WGSL kernel (upload, run and read back)",
        "items, log",
        "time per call (ms), log",
        hardware,
    )
}

fn main() {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}");
            std::process::exit(2);
        }
    };
    let plan = if options.quick {
        TimingPlan::QUICK
    } else {
        // Many short samples: on a busy machine most of them run uninterrupted, and the
        // median ignores the rest.
        TimingPlan {
            samples: 15,
            minimum_sample_time: Duration::from_millis(2),
        }
    };
    let cpu = hardware_description(None);
    let date = std::env::var("GALAXY_RUN_DATE").unwrap_or_else(|_| "undated".to_string());
    let only: String = options
        .only
        .iter()
        .map(|figure| format!(" --only {figure}"))
        .collect();
    let command = format!(
        "data_parallelism --repeats {} --machine {}{}{only} ({date})",
        options.repeats,
        options.machine,
        if options.quick { " --quick" } else { "" }
    );
    println!("{cpu}");
    let mut figures = Vec::new();
    if options.wants("scheduling") {
        print_work_per_worker(&options);
        figures.push(work_shares(&options, &cpu));
        figures.push(scheduling(&options, plan, &cpu));
    }
    if options.wants("simd") {
        figures.push(simd_sums(&options, plan, &cpu));
    }
    if options.wants("layouts") {
        figures.push(layouts(&options, plan, &cpu));
    }
    if options.wants("branchless") {
        figures.push(branchless(&options, plan, &cpu));
    }
    if options.gpu && options.wants("gpu") {
        match GpuContext::shared() {
            Ok(context) => {
                let hardware = hardware_description(Some(context));
                figures.push(cpu_against_gpu(&options, plan, context, &hardware));
            }
            Err(error) => eprintln!("no GPU figure: {error}"),
        }
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
        print_summary(&figure);
    }
}

/// The medians, one line per series, for reading the results without drawing them.
fn print_summary(figure: &Figure) {
    for series in &figure.series {
        let points: Vec<String> = series
            .points
            .iter()
            .map(|point| format!("{}: {:.3}", point.x, point.y))
            .collect();
        println!("  {:<32} {}", series.name, points.join("  "));
    }
}
