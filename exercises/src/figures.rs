//! Timing the reference solutions of the speed exercises against their naive versions,
//! for the criterion bench (`benches/solutions.rs`) and the figures of the exercise
//! pages.
//!
//! | figure id | what it compares |
//! |---|---|
//! | `exercise-linear-tiled-{software,gpu}` | the naive linear kernel (the starter) and the tiled one, GFLOP/s by size |
//! | `exercise-softmax-tree-reduction-{software,gpu}` | the single-pass softmax and the tree reduction, by row length |
//! | `exercise-conv1d-{software,gpu}` | the three 1D convolutions, by filter length |
//! | `exercise-histogram-{software,gpu}` | global atomics and workgroup sub-histograms, on spread-out and on colliding values |
//!
//! The times are kernel times: one dispatch, submitted and waited for, with the data
//! already on the GPU, median of several runs after a warm-up. Before any kernel is
//! timed on a size, its result on that size is compared with the CPU reference: a wrong
//! kernel is never timed. The suffix is `-software` on a software rasteriser such as
//! lavapipe and `-gpu` on a real GPU, as for the crate's own figures.

use std::path::Path;

use galaxy::bench::{Axis, Figure, Point};
use galaxy::gpu::GpuContext;
use galaxy::{Tensor2d, Tolerance};

use crate::checkers::common::{KernelUnderTest, PRODUCT_TOLERANCE, context};
use crate::checkers::{conv1d, histogram, linear_tiled, softmax_tree};
use crate::error::CheckError;
use crate::kernel_run::{BufferData, PreparedKernel, to_floats, to_words, workgroups_for};
use crate::registry::exercises_directory;
use crate::report::compare;
use crate::shader::BindingSpec;

/// One kernel prepared on one input, checked, ready to time.
pub struct TimedKernel {
    pub label: &'static str,
    pub prepared: PreparedKernel,
}

/// Loads `exercises/<exercise>/<file>`.
fn load(
    context: &GpuContext,
    exercise: &str,
    file: &str,
    bindings: &[BindingSpec],
) -> Result<KernelUnderTest, CheckError> {
    KernelUnderTest::load(
        context,
        &exercises_directory().join(exercise).join(file),
        bindings,
    )
}

/// Runs the kernel once and compares its first output with `expected`; then prepares
/// the same buffers again for timing.
fn checked(
    context: &GpuContext,
    label: &'static str,
    kernel: &KernelUnderTest,
    data: &[BufferData],
    grid: [u32; 3],
    expected: &Tensor2d,
    tolerance: Tolerance,
) -> Result<TimedKernel, CheckError> {
    let prepared = PreparedKernel::new(context, &kernel.kernel, data, grid)?;
    let outputs = prepared.run(context)?;
    let values = to_floats(&outputs[0]);
    let actual = Tensor2d::from_vec(
        expected.rows(),
        expected.columns(),
        values[..expected.len()].to_vec(),
    )
    .map_err(|error| CheckError::Run {
        message: error.to_string(),
    })?;
    let verdict = compare(&actual, expected, tolerance);
    if !verdict.passed() {
        return Err(CheckError::WrongResult {
            kernel: label.to_string(),
            details: verdict.to_string(),
        });
    }
    Ok(TimedKernel { label, prepared })
}

/// The naive linear kernel (the exercise's starter) and the tiled one, on `size × size`
/// matrices.
pub fn linear_kernels(context: &GpuContext, size: usize) -> Result<Vec<TimedKernel>, CheckError> {
    let input = Tensor2d::random(size, size, -1.0..=1.0, 1);
    let weights = Tensor2d::random(size, size, -1.0..=1.0, 2);
    let bias = Tensor2d::random(1, size, -1.0..=1.0, 3);
    let expected = linear_tiled::linear(&input, &weights, &bias);
    let data = linear_tiled::buffers(&input, &weights, &bias);
    [
        ("naive (the starter)", "starter.wgsl"),
        ("tiled (the solution)", "solution.wgsl"),
    ]
    .into_iter()
    .map(|(label, file)| {
        let kernel = load(context, "linear-tiled", file, &linear_tiled::BINDINGS)?;
        let grid = kernel.grid_over(size, size);
        checked(
            context,
            label,
            &kernel,
            &data,
            grid,
            &expected,
            PRODUCT_TOLERANCE,
        )
    })
    .collect()
}

/// The single-pass softmax and the tree reduction, on `rows × columns`.
pub fn softmax_kernels(
    context: &GpuContext,
    rows: usize,
    columns: usize,
) -> Result<Vec<TimedKernel>, CheckError> {
    let input = softmax_tree::random_input(rows, columns, 4);
    let expected = galaxy::cpu::softmax(&input).map_err(|error| CheckError::Run {
        message: error.to_string(),
    })?;
    let data = softmax_tree::buffers(&input);
    let tolerance = Tolerance::new(1e-4, 1e-7);
    let single = load(
        context,
        "softmax-tree-reduction",
        "single_pass.wgsl",
        &softmax_tree::BINDINGS,
    )?;
    let tree = load(
        context,
        "softmax-tree-reduction",
        "solution.wgsl",
        &softmax_tree::BINDINGS,
    )?;
    // One invocation per row, against one workgroup per row.
    let single_grid = [workgroups_for(rows, single.shader.workgroup_size[0]), 1, 1];
    Ok(vec![
        checked(
            context,
            "single pass (one invocation per row)",
            &single,
            &data,
            single_grid,
            &expected,
            tolerance,
        )?,
        checked(
            context,
            "tree reduction (one workgroup per row)",
            &tree,
            &data,
            [rows as u32, 1, 1],
            &expected,
            tolerance,
        )?,
    ])
}

/// The three 1D convolutions on a signal of `length` with a filter of `filter_length`.
pub fn conv1d_kernels(
    context: &GpuContext,
    length: usize,
    filter_length: usize,
) -> Result<Vec<TimedKernel>, CheckError> {
    let signal = Tensor2d::random(1, length, -1.0..=1.0, 5);
    let weights = Tensor2d::random(1, filter_length, -1.0..=1.0, 6);
    let expected = Tensor2d::from_vec(
        1,
        length,
        conv1d::convolve_1d(signal.as_slice(), weights.as_slice()),
    )
    .map_err(|error| CheckError::Run {
        message: error.to_string(),
    })?;
    [
        ("naive", "conv1d-naive", conv1d::Version::Naive),
        ("zero-padded", "conv1d-padded", conv1d::Version::Padded),
        (
            "workgroup memory",
            "conv1d-workgroup",
            conv1d::Version::Workgroup,
        ),
    ]
    .into_iter()
    .map(|(label, exercise, version)| {
        let kernel = load(context, exercise, "solution.wgsl", version.bindings())?;
        let data = version.buffers(signal.as_slice(), weights.as_slice());
        let grid = [
            workgroups_for(length, kernel.shader.workgroup_size[0]),
            1,
            1,
        ];
        checked(
            context,
            label,
            &kernel,
            &data,
            grid,
            &expected,
            Tolerance::new(1e-5, 1e-5),
        )
    })
    .collect()
}

/// How the values of a histogram benchmark are spread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spread {
    /// Uniformly over 256 bins: few collisions.
    Uniform,
    /// Every value in bin 0: every atomic collides.
    OneBin,
}

/// Global atomics and workgroup sub-histograms on `count` values.
pub fn histogram_kernels(
    context: &GpuContext,
    count: usize,
    spread: Spread,
) -> Result<Vec<TimedKernel>, CheckError> {
    let values: Vec<u32> = match spread {
        Spread::Uniform => (0..count as u32)
            .map(|index| index.wrapping_mul(2_654_435_761) >> 24)
            .collect(),
        Spread::OneBin => vec![0; count],
    };
    let case = histogram::HistogramCase {
        description: String::new(),
        values,
        bin_count: histogram::MAX_BINS,
    };
    let expected = case.expected();
    [
        ("global atomics", "histogram-global"),
        ("workgroup sub-histograms", "histogram-workgroup"),
    ]
    .into_iter()
    .map(|(label, exercise)| {
        let kernel = load(context, exercise, "solution.wgsl", &histogram::BINDINGS)?;
        let per_workgroup = histogram::elements_per_workgroup(&kernel);
        let grid = [workgroups_for(count, per_workgroup).max(1), 1, 1];
        let prepared = PreparedKernel::new(context, &kernel.kernel, &case.buffers(), grid)?;
        let bins = to_words(&prepared.run(context)?[0]);
        if bins[..expected.len()] != expected[..] {
            return Err(CheckError::WrongResult {
                kernel: label.to_string(),
                details: "the bin counts differ from the CPU's".to_string(),
            });
        }
        // Timing runs keep adding to the same bins: only the first result is checked.
        Ok(TimedKernel { label, prepared })
    })
    .collect()
}

/// Every figure of the exercises; `quick` measures fewer sizes with fewer repetitions.
pub fn try_figures(quick: bool) -> Result<Vec<Figure>, CheckError> {
    let context = context()?;
    let suffix = if context.adapter_info().device_type == wgpu::DeviceType::Cpu {
        "software"
    } else {
        "gpu"
    };
    let repetitions = if quick { 3 } else { 10 };
    let command = format!(
        "cargo run --release -p galaxy-exercises -- figures{}",
        if quick { " --quick" } else { "" }
    );
    let figure = |name: &str, title: &str, x: &str, y: &str| Figure {
        id: format!("exercise-{name}-{suffix}"),
        title: title.to_string(),
        x: Axis {
            label: x.to_string(),
            logarithmic: true,
        },
        y: Axis {
            label: y.to_string(),
            logarithmic: true,
        },
        hardware: galaxy::bench::hardware_description(Some(context)),
        command: command.clone(),
        series: Vec::new(),
    };
    let milliseconds = |prepared: &PreparedKernel| -> Result<f64, CheckError> {
        Ok(prepared.median_time(context, repetitions)?.as_secs_f64() * 1e3)
    };

    let mut linear = figure(
        "linear-tiled",
        "A linear layer on the GPU: naive and tiled in workgroup memory",
        "matrix size n (n×n times n×n)",
        "GFLOP/s (kernel only)",
    );
    let sizes: &[usize] = if quick {
        &[64, 128, 256]
    } else {
        &[64, 128, 256, 512, 1024]
    };
    for &size in sizes {
        for kernel in linear_kernels(context, size)? {
            let seconds = milliseconds(&kernel.prepared)? / 1e3;
            let gigaflops = 2.0 * (size as f64).powi(3) / seconds / 1e9;
            linear.push(
                kernel.label,
                Point {
                    x: size as f64,
                    y: gigaflops,
                },
            );
        }
    }

    let rows = 64;
    let mut softmax = figure(
        "softmax-tree-reduction",
        &format!("Softmax of {rows} rows: one invocation per row, or a tree reduction per row"),
        "row length (elements)",
        "time per softmax (ms, kernel only)",
    );
    let lengths: &[usize] = if quick {
        &[256, 1024, 4096]
    } else {
        &[64, 256, 1024, 4096, 16384]
    };
    for &columns in lengths {
        for kernel in softmax_kernels(context, rows, columns)? {
            let time = milliseconds(&kernel.prepared)?;
            softmax.push(
                kernel.label,
                Point {
                    x: columns as f64,
                    y: time,
                },
            );
        }
    }

    let length = if quick { 1 << 16 } else { 1 << 20 };
    let mut convolution = figure(
        "conv1d",
        &format!("1D convolution of {length} elements: naive, zero-padded, workgroup memory"),
        "filter length (taps)",
        "time (ms, kernel only)",
    );
    for filter_length in [3, 9, 17, 33] {
        for kernel in conv1d_kernels(context, length, filter_length)? {
            let time = milliseconds(&kernel.prepared)?;
            convolution.push(
                kernel.label,
                Point {
                    x: filter_length as f64,
                    y: time,
                },
            );
        }
    }

    let mut histograms = figure(
        "histogram",
        "Histograms of 256 bins: global atomics and workgroup sub-histograms",
        "values counted",
        "time (ms, kernel only)",
    );
    let counts: &[usize] = if quick {
        &[1 << 14, 1 << 16, 1 << 18]
    } else {
        &[1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22]
    };
    for &count in counts {
        for (spread, name) in [
            (Spread::Uniform, "spread over 256 bins"),
            (Spread::OneBin, "all in one bin"),
        ] {
            for kernel in histogram_kernels(context, count, spread)? {
                let time = milliseconds(&kernel.prepared)?;
                histograms.push(
                    &format!("{}, {name}", kernel.label),
                    Point {
                        x: count as f64,
                        y: time,
                    },
                );
            }
        }
    }
    Ok(vec![linear, softmax, convolution, histograms])
}

/// Every figure of the exercises; panics with the reason when a run fails (no GPU, or
/// a solution that no longer matches its reference). For the lead's figure sweeps.
pub fn figures(quick: bool) -> Vec<Figure> {
    try_figures(quick).unwrap_or_else(|error| panic!("the exercise figures failed: {error}"))
}

/// Writes every figure's CSV into `directory` (normally `figures/data`).
pub fn write_figures(quick: bool, directory: &Path) -> Result<Vec<String>, CheckError> {
    let mut written = Vec::new();
    for figure in try_figures(quick)? {
        figure
            .write_csv(directory)
            .map_err(|error| CheckError::Run {
                message: error.to_string(),
            })?;
        written.push(figure.id);
    }
    Ok(written)
}
