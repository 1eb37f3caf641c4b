//! Measures the pages on graphs in module 2: the parallel graph runner against the
//! sequential CPU graph runner on graphs of 1 to 16 branches and on the chain-shaped
//! standard workload, and a traversal of one graph stored as pointers and as indices.
//!
//! ```sh
//! cargo run --release --example parallel_graphs -- [--out figures/data] [--repeats 3]
//!     [--machine epyc] [--quick]
//! ```
//!
//! It writes `parallel-graphs-width-<machine>.csv`, `parallel-graphs-chain-<machine>.csv`
//! and `graph-representations-traversal-<machine>.csv` into `--out`, each point the median
//! of `--repeats` interleaved repeats with the fastest and slowest. The CPU model goes
//! into every file's header. Every runner's output is checked against the sequential
//! runner before it is timed. About 30 s on 2 cores without `--quick`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use galaxy::bench::hardware::hardware_description;
use galaxy::bench::repeats::Repeats;
use galaxy::figure::{Axis, Figure, Point};
use galaxy::graph::{BranchShape, ValidGraph, random_branches, random_mlp};
use galaxy::memory::timing::{TimingPlan, median_nanoseconds_per_item};
use galaxy::parallel::graph_runner::{LinearKernel, ParallelGraphRunner};
use galaxy::parallel::index_graph::{DagDescription, IndexGraph};
use galaxy::parallel::pointer_graph::{Allocation, PointerGraph};
use galaxy::runner::{CpuGraphRunner, ExecutionMode};
use galaxy::{Tensor2d, Tolerance};

struct Options {
    out: PathBuf,
    repeats: usize,
    machine: String,
    quick: bool,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        out: PathBuf::from("figures/data"),
        repeats: 3,
        machine: "local".to_string(),
        quick: false,
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

fn milliseconds(plan: TimingPlan, call: impl FnMut()) -> f64 {
    median_nanoseconds_per_item(plan, 1, call) / 1e6
}

const TOLERANCE: Tolerance = Tolerance::new(1e-4, 1e-5);

fn check(actual: &Tensor2d, expected: &Tensor2d, what: &str) {
    let comparison = actual
        .compare(expected, TOLERANCE)
        .unwrap_or_else(|error| panic!("{what}: {error}"));
    assert!(comparison.passed(), "{what}: {comparison}");
}

/// Times the sequential runner and the parallel runner with each linear kernel on
/// `graph`, adding `(series prefix, x, milliseconds)` points; `speed_up` reports each
/// parallel time as a speed-up over the sequential one instead.
fn time_runners(
    plan: TimingPlan,
    graph: &ValidGraph,
    input: &Tensor2d,
    what: &str,
) -> [(LinearKernelOrSequential, f64); 3] {
    let mut sequential = CpuGraphRunner::prepare(graph);
    let expected = sequential.run(input).expect("the workload runs");
    let sequential_time = milliseconds(plan, || {
        sequential.run(input).expect("the workload runs");
    });
    let mut results = [(LinearKernelOrSequential::Sequential, sequential_time); 3];
    for (slot, kernel) in [LinearKernel::RowParallel, LinearKernel::SingleThreaded]
        .into_iter()
        .enumerate()
    {
        let mut runner = ParallelGraphRunner::prepare(graph, kernel);
        check(
            &runner.run(input).expect("runs"),
            &expected,
            &format!("{what}, {kernel:?}"),
        );
        let time = milliseconds(plan, || {
            runner.run(input).expect("runs");
        });
        results[slot + 1] = (LinearKernelOrSequential::Parallel(kernel), time);
    }
    results
}

#[derive(Clone, Copy)]
enum LinearKernelOrSequential {
    Sequential,
    Parallel(LinearKernel),
}

fn series_name(kernel: LinearKernel) -> &'static str {
    match kernel {
        LinearKernel::RowParallel => "branches in parallel, layers split by rows",
        LinearKernel::SingleThreaded => "branches in parallel, one thread per layer",
    }
}

/// Speed-up of the parallel runner over the sequential one, by number of branches, for a
/// few layer sizes (one panel each).
fn width(options: &Options, plan: TimingPlan, hardware: &str) -> Figure {
    let rows = 32;
    let depth = 4;
    let sizes: &[usize] = if options.quick {
        &[64, 256]
    } else {
        &[64, 256, 512]
    };
    let widths = [1, 2, 4, 8, 16];
    let mut measurements = Measurements::default();
    for repeat in 1..=options.repeats {
        eprintln!("width, repeat {repeat} of {}", options.repeats);
        for &size in sizes {
            for branches in widths {
                let shape = BranchShape {
                    rows,
                    columns: size,
                    branches,
                    depth,
                };
                let workload = random_branches(shape, 7).expect("a valid shape");
                let timed = time_runners(
                    plan,
                    &workload.graph,
                    &workload.input,
                    &format!("{shape:?}"),
                );
                let sequential = timed[0].1;
                for (runner, time) in &timed[1..] {
                    if let LinearKernelOrSequential::Parallel(kernel) = runner {
                        measurements.add(
                            &format!("{}, {size} columns", series_name(*kernel)),
                            branches as f64,
                            sequential / time,
                        );
                    }
                }
            }
        }
    }
    measurements.into_figure(
        format!("parallel-graphs-width-{}", options.machine),
        &format!(
            "Speed-up of the parallel graph runner over the sequential one: {rows} rows, \
             branches of {depth} linear layers"
        ),
        "branches, log",
        "speed-up over the sequential CPU graph runner",
        hardware,
    )
}

/// The standard workload, a chain: nothing to run side by side.
fn chain(options: &Options, plan: TimingPlan, hardware: &str) -> Figure {
    let depth = 16;
    let sizes: &[usize] = if options.quick {
        &[32, 128]
    } else {
        &[32, 64, 128, 256]
    };
    let mut measurements = Measurements::default();
    for repeat in 1..=options.repeats {
        eprintln!("chain, repeat {repeat} of {}", options.repeats);
        for &size in sizes {
            let workload = random_mlp(size, depth, 3).expect("a valid size");
            let what = format!("random_mlp({size}, {depth})");
            let timed = time_runners(plan, &workload.graph, &workload.input, &what);
            for (runner, time) in timed {
                let name = match runner {
                    LinearKernelOrSequential::Sequential => "sequential, layers split by rows",
                    LinearKernelOrSequential::Parallel(kernel) => series_name(kernel),
                };
                measurements.add(name, size as f64, time);
            }
            let mut mode = ExecutionMode::CpuGraph
                .prepare(&workload.graph, None)
                .expect("the CPU needs no context");
            let time = milliseconds(plan, || {
                mode.run(&workload.input, 1).expect("runs");
            });
            measurements.add(
                "CpuGraph mode (weights packed, rows blocked)",
                size as f64,
                time,
            );
        }
    }
    measurements.into_figure(
        format!("parallel-graphs-chain-{}", options.machine),
        &format!("The standard workload (a chain of {depth} layers): time per run"),
        "size (rows = columns), log",
        "milliseconds per run, log",
        hardware,
    )
}

/// One graph evaluated by following pointers and by one pass over a vector.
fn traversal(options: &Options, plan: TimingPlan, hardware: &str) -> Figure {
    let counts: &[usize] = if options.quick {
        &[1 << 10, 1 << 16]
    } else {
        &[1 << 10, 1 << 13, 1 << 16, 1 << 19, 1 << 21]
    };
    let mut measurements = Measurements::default();
    for repeat in 1..=options.repeats {
        eprintln!("traversal, repeat {repeat} of {}", options.repeats);
        for &count in counts {
            let description = DagDescription::random(count, 5);
            let index_graph = IndexGraph::new(&description);
            let mut values = Vec::new();
            let expected = index_graph.evaluate(&mut values);
            let time = median_nanoseconds_per_item(plan, count, || {
                std::hint::black_box(index_graph.evaluate(&mut values));
            });
            measurements.add("indices (one Vec)", count as f64, time);
            for (allocation, name) in [
                (Allocation::GraphOrder, "pointers, allocated in graph order"),
                (
                    Allocation::Shuffled,
                    "pointers, allocated in shuffled order",
                ),
            ] {
                let mut graph = PointerGraph::new(&description, allocation, 9);
                let mut stack = Vec::new();
                let value = graph.evaluate(&mut stack);
                assert!(
                    (value - expected).abs() <= 1e-3 * expected.abs().max(1.0),
                    "{name}: {value} against {expected}"
                );
                let time = median_nanoseconds_per_item(plan, count, || {
                    std::hint::black_box(graph.evaluate(&mut stack));
                });
                measurements.add(name, count as f64, time);
            }
        }
    }
    measurements.into_figure(
        format!("graph-representations-traversal-{}", options.machine),
        "Evaluating one graph stored as pointers and as indices",
        "nodes, log",
        "nanoseconds per node, log",
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
        TimingPlan {
            samples: 5,
            minimum_sample_time: Duration::from_millis(5),
        }
    };
    let cpu = hardware_description(None);
    let date = std::env::var("GALAXY_RUN_DATE").unwrap_or_else(|_| "undated".to_string());
    let command = format!(
        "parallel_graphs --repeats {} --machine {}{} ({date})",
        options.repeats,
        options.machine,
        if options.quick { " --quick" } else { "" }
    );
    println!(
        "{cpu}, {} threads in rayon's pool",
        rayon::current_num_threads()
    );
    let figures = [
        width(&options, plan, &cpu),
        chain(&options, plan, &cpu),
        traversal(&options, plan, &cpu),
    ];
    if let Err(error) = std::fs::create_dir_all(&options.out) {
        eprintln!("error: cannot create {}: {error}", options.out.display());
        std::process::exit(1);
    }
    for mut figure in figures {
        figure.command = command.clone();
        for series in &figure.series {
            let values: Vec<String> = series
                .points
                .iter()
                .map(|point| format!("{}: {:.3}", point.x, point.y))
                .collect();
            println!("{} / {}: {}", figure.id, series.name, values.join(", "));
        }
        if let Err(error) = figure.write_csv(&options.out) {
            eprintln!("error: {error}");
            std::process::exit(1);
        }
    }
}
