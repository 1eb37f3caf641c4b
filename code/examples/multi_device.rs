//! One network on one device and on several: data parallelism (every device runs the whole
//! network on its share of the rows) and pipeline parallelism (every device runs a stage of
//! consecutive layers, the rows streaming through in micro-batches), and what handing a
//! tensor from one device to another through the host costs.
//!
//! `cargo run --release -p galaxy --example multi_device -- [--devices-per-adapter N]
//!  [--rows 256,1024,4096,8192] [--width 1024] [--depth 16] [--micro-batches 1,4,16]
//!  [--repeats 5] [--machine NAME] [--out DIR]` writes `DIR/multi-device-time-<machine>.csv`
//! (milliseconds per run), `DIR/multi-device-speedup-<machine>.csv` (speed-up over one
//! device, with the ideal line) and `DIR/multi-device-hand-over-<machine>.csv`, and prints
//! one pipeline run's timeline.
//!
//! By default it takes one device on every GPU of the best kind present (two H200s give two
//! devices). `--devices-per-adapter N` takes N devices on the one most capable adapter
//! instead: on a single GPU (or lavapipe) that runs everything a two-GPU machine runs, but
//! the devices share one GPU, so it measures the runners' overhead, not a speed-up.
//!
//! The workload is the standard one's shape: `depth` linear layers of `width × width`
//! weights, a ReLU after about half of them and after the last, a softmax; the input has
//! `rows` rows. A run is upload, every kernel and readback, in `GraphCompiled` mode on
//! every device. Before anything is timed, every configuration's result is compared with
//! the one-device result (relative 1e-4, absolute 1e-5). The baseline is the mode itself on
//! one device; the data-parallel runner on that one device is timed too, for what its
//! thread and its copies cost. For every size the example also prints where one device's
//! run spends its time (`bench::time_breakdown`): encoding, submitting, waiting, mapping and
//! copying out on the host, and the kernels by the GPU's clock.

use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use galaxy::bench::hardware::hardware_description;
use galaxy::bench::repeats::{Repeats, interleaved};
use galaxy::bench::time_breakdown::measure_breakdown;
use galaxy::figure::{Axis, Figure, Point};
use galaxy::gpu::linear_search::LinearShape;
use galaxy::gpu::{ContextOptions, GpuContext, contexts_on_every_adapter, contexts_on_one_adapter};
use galaxy::graph::{Workload, random_mlp};
use galaxy::parallel::multi_device::{
    DataParallelRunner, MultiDeviceError, PipelineParallelRunner, Span, measure_hand_over,
    with_input_rows,
};
use galaxy::runner::{Execution, ExecutionMode};
use galaxy::tensor::{Tensor2d, Tolerance};

#[derive(Parser)]
struct Options {
    /// Devices to request on the one most capable adapter; 0 takes one device on every
    /// GPU of the best kind present.
    #[arg(long, default_value_t = 0)]
    devices_per_adapter: usize,
    /// The numbers of rows of the input.
    #[arg(long, value_delimiter = ',', default_value = "256,1024,4096,8192")]
    rows: Vec<usize>,
    /// The width of every layer.
    #[arg(long, default_value_t = 1024)]
    width: usize,
    /// The number of linear layers.
    #[arg(long, default_value_t = 16)]
    depth: usize,
    /// The micro-batch counts of the pipeline runs.
    #[arg(long, value_delimiter = ',', default_value = "1,4,16")]
    micro_batches: Vec<usize>,
    /// Repeats of every point (median, fastest and slowest); each repeat is the median of
    /// five runs.
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    /// The machine's short name in the file names.
    #[arg(long, default_value = "epyc")]
    machine: String,
    /// Where the CSV files go.
    #[arg(long, default_value = "figures/data")]
    out: PathBuf,
}

/// Runs of one timed repeat; the repeat's time is their median.
const RUNS_PER_REPEAT: usize = 5;
const CHECK: Tolerance = Tolerance::new(1e-4, 1e-5);

/// One way of running the network, prepared.
enum Contender<'context> {
    /// The mode itself on one device, called on this thread: the baseline.
    Single(Box<Execution<'context>>),
    Data(DataParallelRunner<'context>),
    Pipeline(PipelineParallelRunner<'context>),
}

impl Contender<'_> {
    /// One run; what each device did when (nothing for the mode itself).
    fn run(&mut self, input: &Tensor2d) -> Result<Vec<Span>, MultiDeviceError> {
        Ok(match self {
            Contender::Single(execution) => {
                execution.run(input, 1)?;
                Vec::new()
            }
            Contender::Data(runner) => runner.run_traced(input)?.1,
            Contender::Pipeline(runner) => runner.run_traced(input)?.1,
        })
    }

    /// One run's result, for the check before timing.
    fn result(&mut self, input: &Tensor2d) -> Result<Tensor2d, MultiDeviceError> {
        Ok(match self {
            Contender::Single(execution) => execution.run(input, 1)?.remove(0),
            Contender::Data(runner) => runner.run(input)?.clone(),
            Contender::Pipeline(runner) => runner.run(input)?.clone(),
        })
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = Options::parse();
    let context_options = ContextOptions::from_environment();
    let contexts = if options.devices_per_adapter == 0 {
        contexts_on_every_adapter(&context_options)?
    } else {
        contexts_on_one_adapter(&context_options, options.devices_per_adapter)?
    };
    let devices: Vec<&GpuContext> = contexts.iter().collect();
    // Say so when the devices share one GPU: the CSV's hardware line must not read as
    // several GPUs when it was one.
    let placement = if options.devices_per_adapter == 0 {
        ""
    } else {
        " requested on one adapter"
    };
    let hardware = format!(
        "{} devices{placement}: {}",
        devices.len(),
        devices
            .iter()
            .map(|device| device.describe())
            .collect::<Vec<_>>()
            .join("; ")
    );
    let host = hardware_description(None);
    println!("{hardware}\nhost: {host}");
    let command = format!(
        "cargo run --release -p galaxy --example multi_device -- {} ({})",
        std::env::args().skip(1).collect::<Vec<_>>().join(" "),
        std::env::var("GALAXY_RUN_DATE").unwrap_or_else(|_| "date not recorded".into())
    );
    let figure = |id: &str, title: &str, x: &str, y: &str, logarithmic_y: bool| Figure {
        id: format!("{id}-{}", options.machine),
        title: title.into(),
        x: Axis {
            label: x.into(),
            logarithmic: true,
        },
        y: Axis {
            label: y.into(),
            logarithmic: logarithmic_y,
        },
        hardware: format!("{hardware}; host {host}"),
        command: command.clone(),
        series: Vec::new(),
    };
    let mut times = figure(
        "multi-device-time",
        "The network on one device and spread over several: milliseconds per run",
        "rows of the input",
        "milliseconds per run",
        true,
    );
    let mut speedups = figure(
        "multi-device-speedup",
        "Speed-up over one device",
        "rows of the input",
        "speed-up over one device",
        false,
    );
    let mut hand_overs = figure(
        "multi-device-hand-over",
        "Handing activations from one device to the next through host memory",
        "MiB handed over",
        "milliseconds",
        true,
    );

    let workload = random_mlp(options.width, options.depth, 2026)?;
    let count = devices.len();
    for &rows in &options.rows {
        let graph = with_input_rows(&workload.graph, rows)?;
        let input = Tensor2d::random(rows, options.width, -1.0..=1.0, rows as u64);
        // Where one device's run spends its time: the host's phases and the GPU's clock.
        let breakdown = measure_breakdown(
            ExecutionMode::GraphCompiled,
            &Workload {
                graph: graph.clone(),
                input: input.clone(),
            },
            devices[0],
            7,
        )?;
        println!(
            "{rows:>6} rows  one device, where the time goes (ms): {}",
            breakdown.summary()
        );
        let mut contenders = vec![
            (
                "one device".to_string(),
                Contender::Single(Box::new(
                    ExecutionMode::GraphCompiled.prepare(&graph, Some(devices[0]))?,
                )),
            ),
            (
                "one device, through the data-parallel runner".to_string(),
                Contender::Data(DataParallelRunner::prepare(
                    &devices[..1],
                    &graph,
                    ExecutionMode::GraphCompiled,
                )?),
            ),
        ];
        if count > 1 {
            contenders.push((
                format!("data-parallel, {count} devices"),
                Contender::Data(DataParallelRunner::prepare(
                    &devices,
                    &graph,
                    ExecutionMode::GraphCompiled,
                )?),
            ));
            for &micro_batches in options.micro_batches.iter().filter(|&&m| m <= rows) {
                contenders.push((
                    format!(
                        "pipeline, {count} devices, {micro_batches} micro-batch{}",
                        if micro_batches == 1 { "" } else { "es" }
                    ),
                    Contender::Pipeline(PipelineParallelRunner::prepare(
                        &devices,
                        &graph,
                        ExecutionMode::GraphCompiled,
                        micro_batches,
                    )?),
                ));
            }
        }
        // Every contender computes what one device computes, before any timing.
        let expected = contenders[0].1.result(&input)?;
        for (name, contender) in &mut contenders[1..] {
            let actual = contender.result(&input)?;
            let comparison = actual.compare(&expected, CHECK)?;
            if !comparison.passed() {
                return Err(
                    format!("{name} at {rows} rows differs from one device: {comparison}").into(),
                );
            }
        }
        let measured = interleaved(contenders.len(), options.repeats, |index, _: &[f64]| {
            let contender = &mut contenders[index].1;
            let mut runs = Vec::with_capacity(RUNS_PER_REPEAT);
            for _ in 0..RUNS_PER_REPEAT {
                let begun = Instant::now();
                contender.run(&input)?;
                runs.push(begun.elapsed().as_secs_f64() * 1e3);
            }
            Ok::<_, MultiDeviceError>(Some(Repeats::new(runs).unwrap().median()))
        })?;
        let one_device = Repeats::new(measured[0].clone()).unwrap().median();
        for ((name, _), values) in contenders.iter().zip(measured) {
            let repeats = Repeats::new(values).unwrap();
            let point = Point {
                x: rows as f64,
                y: repeats.median(),
            };
            match repeats.spread() {
                Some(spread) => times.push_with_spread(name, point, spread),
                None => times.push(name, point),
            }
            let speedup = one_device / repeats.median();
            if name != "one device" {
                speedups.push(
                    name,
                    Point {
                        x: rows as f64,
                        y: speedup,
                    },
                );
            }
            println!(
                "{rows:>6} rows  {name:<46} {:>9.3} ms ({:.3}–{:.3})  speed-up {speedup:.2}",
                repeats.median(),
                repeats.minimum(),
                repeats.maximum()
            );
        }
        if count > 1 {
            speedups.push(
                &format!("ideal, {count} devices"),
                Point {
                    x: rows as f64,
                    y: count as f64,
                },
            );
        }
        // The linear kernel each device measured fastest for the layer shapes of this size.
        for (device, context) in devices.iter().enumerate() {
            let mut choices = Vec::new();
            for &piece in &[rows, rows.div_ceil(2), rows.div_ceil(4), rows.div_ceil(16)] {
                let shape = LinearShape {
                    rows: piece,
                    inner: options.width,
                    columns: options.width,
                };
                if let Some(strategy) = context.measured_linear_choices().cached(shape) {
                    choices.push(format!("{piece} rows: {strategy}"));
                }
            }
            println!(
                "{rows:>6} rows  device {device} chose {}",
                choices.join("; ")
            );
        }
        // The timeline of one run of every pipeline at the largest size, for the page.
        let largest = Some(&rows) == options.rows.iter().max();
        for (name, contender) in contenders
            .iter_mut()
            .filter(|(_, contender)| largest && matches!(contender, Contender::Pipeline(_)))
        {
            let spans = contender.run(&input)?;
            println!("timeline of one run, {name}, {rows} rows (ms from the start):");
            for span in spans {
                println!(
                    "  device {} micro-batch {:>2}: {:>8.3} – {:>8.3}",
                    span.device,
                    span.micro_batch,
                    span.start.as_secs_f64() * 1e3,
                    span.end.as_secs_f64() * 1e3
                );
            }
        }
    }

    // The hand-over between the first two devices of each stage's output size.
    if count > 1 {
        for &rows in &options.rows {
            let handed = measure_hand_over(
                devices[0],
                devices[1],
                rows,
                options.width,
                options.repeats * RUNS_PER_REPEAT,
            )?;
            let mebibytes = handed.bytes as f64 / (1 << 20) as f64;
            for (series, time) in [
                ("read back from device 0", handed.read_back),
                ("upload to device 1", handed.upload),
                ("whole hand-over", handed.total),
            ] {
                hand_overs.push(
                    series,
                    Point {
                        x: mebibytes,
                        y: time.as_secs_f64() * 1e3,
                    },
                );
            }
            println!(
                "hand-over of {rows} × {} ({mebibytes:.2} MiB): read back {:.3} ms, upload {:.3} ms, whole {:.3} ms ({:.2} GB/s)",
                options.width,
                handed.read_back.as_secs_f64() * 1e3,
                handed.upload.as_secs_f64() * 1e3,
                handed.total.as_secs_f64() * 1e3,
                handed.bytes as f64 / handed.total.as_secs_f64() / 1e9
            );
        }
    }

    std::fs::create_dir_all(&options.out)?;
    times.write_csv(&options.out)?;
    if count > 1 {
        speedups.write_csv(&options.out)?;
        hand_overs.write_csv(&options.out)?;
    }
    println!("wrote {}", options.out.display());
    Ok(())
}
