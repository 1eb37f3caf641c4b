//! Exercise: max pooling at every level. The CPU level (Rust) is compared with the
//! checker's own reference; the GPU level (WGSL) runs in immediate mode, one dispatch
//! per case; the graph level puts the student's shape function and binding function
//! into a step graph `linear → max pool → ReLU` that runs in one submission.

use galaxy::gpu::record::BoundDispatch;
use galaxy::gpu::{GpuContext, GpuError, GpuTensor};
use galaxy::{ShapeError, Tensor2d, Tolerance};

use crate::analysis::StaticRules;
use crate::checkers::common::{KernelUnderTest, context, output_tensor, static_part, with_cause};
use crate::checkers::every_level::{
    GraphCase, expect_error, expect_shape, graph_level_part, run_cpu_level_explained,
};
use crate::kernel_run::BufferData;
use crate::report::{PartReport, Verdict, compare};
use crate::shader::{BindingSpec, Element};
use crate::step_graph::Step;
use crate::submission::{Submission, Variant};

pub const BINDINGS: [BindingSpec; 3] = [
    BindingSpec::read(0, "input", Element::F32),
    BindingSpec::read_write(1, "output", Element::F32),
    BindingSpec::uniform(2, "dimensions"),
];

/// (rows, columns, window): a single element, exact fits, leftover rows and columns,
/// windows as large as the input, and outputs larger than one 8 × 8 workgroup.
pub const CASES: [(usize, usize, usize); 8] = [
    (1, 1, 1),
    (4, 4, 2),
    (7, 9, 2),
    (9, 7, 3),
    (5, 3, 3),
    (33, 20, 5),
    (64, 64, 4),
    (150, 90, 2),
];

/// (rows, columns, window) whose every input value is negative, at the CPU and the GPU
/// level: a search for the largest value that starts from 0 instead of from the window's
/// own first element gets 0 for every window. (Random inputs in ±1 show it only where a
/// whole window happens to be negative, and the graph level's ReLU hides it.)
pub const NEGATIVE_CASES: [(usize, usize, usize); 2] = [(12, 10, 3), (6, 6, 2)];

/// The range of the inputs of [`NEGATIVE_CASES`].
const NEGATIVE_RANGE: std::ops::RangeInclusive<f32> = -1000.0..=-1.0;

/// (rows, columns, window) that must be shape errors.
pub const BAD_WINDOWS: [(usize, usize, usize); 3] = [(4, 4, 0), (4, 4, 5), (2, 10, 3)];

/// Max pooling moves values; it computes nothing, so the result is exact.
const EXACT: Tolerance = Tolerance::EXACT;

/// `max_pool(input, window)`.
pub type MaxPoolFunction = fn(&Tensor2d, usize) -> Result<Tensor2d, ShapeError>;
/// `max_pool_output_shape(input shape, window)`.
pub type OutputShapeFunction = fn((usize, usize), usize) -> Result<(usize, usize), ShapeError>;
/// `bind_max_pool(context, pipeline, input, output, window)`.
pub type BindFunction = fn(
    &GpuContext,
    &wgpu::ComputePipeline,
    &GpuTensor,
    &GpuTensor,
    usize,
) -> Result<BoundDispatch, GpuError>;

/// The student's functions, from whichever module the check is for.
#[derive(Clone, Copy)]
pub struct MaxPoolCode {
    pub max_pool: MaxPoolFunction,
    pub output_shape: OutputShapeFunction,
    pub bind: BindFunction,
}

impl MaxPoolCode {
    pub fn of(variant: Variant) -> MaxPoolCode {
        crate::rust_exercises::with_rust_module!(max_pool, variant, |code| MaxPoolCode {
            max_pool: code::max_pool,
            output_shape: code::max_pool_output_shape,
            bind: code::bind_max_pool,
        })
    }
}

/// The checker's own reference.
pub fn reference(input: &Tensor2d, window: usize) -> Tensor2d {
    let (rows, columns) = (input.rows() / window, input.columns() / window);
    let mut output = Tensor2d::zeros(rows, columns);
    for row in 0..rows {
        for column in 0..columns {
            let largest = (0..window * window)
                .map(|offset| {
                    input.get(
                        row * window + offset / window,
                        column * window + offset % window,
                    )
                })
                .fold(f32::NEG_INFINITY, f32::max);
            output.set(row, column, largest);
        }
    }
    output
}

pub fn check(submission: &Submission) -> Vec<PartReport> {
    let code = MaxPoolCode::of(submission.rust);
    let wgsl = submission
        .wgsl
        .as_deref()
        .expect("max pooling has a WGSL part");
    vec![
        cpu_level(code),
        gpu_level(wgsl),
        graph_level_part(wgsl, &BINDINGS, &graph_cases(code)),
    ]
}

fn input_for(rows: usize, columns: usize, seed: u64) -> Tensor2d {
    Tensor2d::random(rows, columns, -1.0..=1.0, 500 + seed)
}

/// Every case of the CPU and the GPU level: its description, input and window.
fn level_cases() -> Vec<(String, Tensor2d, usize)> {
    let random = CASES
        .iter()
        .enumerate()
        .map(|(seed, &(rows, columns, window))| {
            (
                format!("{rows}×{columns}, window {window}"),
                input_for(rows, columns, seed as u64),
                window,
            )
        });
    let negative = NEGATIVE_CASES
        .iter()
        .enumerate()
        .map(|(seed, &(rows, columns, window))| {
            (
                format!("{rows}×{columns}, window {window}, every value negative"),
                Tensor2d::random(rows, columns, NEGATIVE_RANGE, 600 + seed as u64),
                window,
            )
        });
    random.chain(negative).collect()
}

fn cpu_level(code: MaxPoolCode) -> PartReport {
    let mut part = PartReport::new("CPU level");
    for (description, input, window) in level_cases() {
        let verdict = run_cpu_level_explained(
            || (code.max_pool)(&input, window),
            &reference(&input, window),
            EXACT,
            |verdict, result| explain_windows(verdict, result, &input, window),
        );
        part.push(description, verdict);
    }
    for &(rows, columns, window) in &CASES {
        part.push(
            format!("output shape of {rows}×{columns}, window {window}"),
            expect_shape(
                "max_pool_output_shape",
                || (code.output_shape)((rows, columns), window),
                (rows / window, columns / window),
                "the windows do not overlap, and the rows and columns left over at the edges, \
                 too few for a whole window, are dropped",
            ),
        );
    }
    for &(rows, columns, window) in &BAD_WINDOWS {
        let input = Tensor2d::zeros(rows, columns);
        part.push(
            format!("{rows}×{columns}, window {window}"),
            expect_error("max_pool", || (code.max_pool)(&input, window)),
        );
        part.push(
            format!("output shape of {rows}×{columns}, window {window}"),
            expect_error("max_pool_output_shape", || {
                (code.output_shape)((rows, columns), window)
            }),
        );
    }
    part
}

fn gpu_level(wgsl: &std::path::Path) -> PartReport {
    let part_name = "GPU level (immediate)";
    let loaded = context().and_then(|context| {
        KernelUnderTest::load(context, wgsl, &BINDINGS).map(|kernel| (context, kernel))
    });
    let (context, kernel) = match loaded {
        Ok(loaded) => loaded,
        Err(error) => return PartReport::failed_before_running(part_name, error),
    };
    let mut part = PartReport::new(part_name);
    for (description, input, window) in level_cases() {
        let (rows, columns) = input.shape();
        let expected = reference(&input, window);
        let (output_rows, output_columns) = expected.shape();
        let data = [
            BufferData::floats(input.as_slice()),
            BufferData::poisoned_floats(expected.len()),
            BufferData::uniform(&[
                rows as u32,
                columns as u32,
                output_rows as u32,
                output_columns as u32,
                window as u32,
            ]),
        ];
        let grid = kernel.grid_over(output_rows, output_columns);
        kernel.check_case(context, &mut part, description, &data, grid, |outputs| {
            let actual = output_tensor(outputs, output_rows, output_columns);
            explain_windows(compare(&actual, &expected, EXACT), &actual, &input, window)
        });
    }
    // What no run can show, judged on the kernel alone, belongs to this level too.
    part.cases
        .extend(static_part(&kernel, &StaticRules::default()).cases);
    part
}

/// `verdict`, with what the wrong elements of `actual` say about the mistake when it is
/// a mismatch: a 0 for a window of negative values (a search started from 0), a value
/// that is not in its window at all (the window read at the wrong place), or a value of
/// the window that is not its largest (part of the window never looked at).
fn explain_windows(
    verdict: Verdict,
    actual: &Tensor2d,
    input: &Tensor2d,
    window: usize,
) -> Verdict {
    if !matches!(verdict, Verdict::Mismatch(_)) {
        return verdict;
    }
    let expected = reference(input, window);
    let (mut zero_for_negative, mut outside, mut smaller) = (false, false, false);
    for row in 0..expected.rows() {
        for column in 0..expected.columns() {
            let value = actual.get(row, column);
            if value == expected.get(row, column) || value.is_nan() {
                continue;
            }
            let values: Vec<f32> = (0..window * window)
                .map(|offset| {
                    input.get(
                        row * window + offset / window,
                        column * window + offset % window,
                    )
                })
                .collect();
            if value == 0.0 && values.iter().all(|&element| element < 0.0) {
                zero_for_negative = true;
            } else if values.contains(&value) {
                smaller = true;
            } else {
                outside = true;
            }
        }
    }
    let cause = if zero_for_negative {
        "cause: 0 for a window whose values are all negative: the search for the largest value \
         must start from a value of the window (its first element), not from 0"
    } else if outside {
        "cause: some results are not a value of their window at all: the window is read at the \
         wrong place (it starts at row · window, column · window of the input, and a row of the \
         input is input_columns long)"
    } else if smaller {
        "cause: every wrong result is a value of its window, but not the largest: some elements \
         of each window are never looked at (check the bounds of the loops over the window)"
    } else {
        return verdict;
    };
    with_cause(verdict, cause)
}

/// The student's max pooling as a step of the graph.
struct MaxPoolStep {
    code: MaxPoolCode,
    window: usize,
    pipeline: wgpu::ComputePipeline,
}

impl Step for MaxPoolStep {
    fn name(&self) -> String {
        format!("max_pool, window {}", self.window)
    }

    fn output_shape(&self, input: (usize, usize)) -> Result<(usize, usize), ShapeError> {
        (self.code.output_shape)(input, self.window)
    }

    fn bind(
        &self,
        context: &GpuContext,
        input: &GpuTensor,
        output: &GpuTensor,
    ) -> Result<BoundDispatch, GpuError> {
        (self.code.bind)(context, &self.pipeline, input, output, self.window)
    }
}

/// The graph level runs `input → linear (columns × columns) → max pool → ReLU`; the
/// linear layer in front makes the pooled tensor one the graph computed, not the input.
fn graph_cases(code: MaxPoolCode) -> Vec<GraphCase> {
    let mut cases: Vec<GraphCase> = CASES
        .iter()
        .enumerate()
        .map(|(seed, &(rows, columns, window))| {
            GraphCase::new(
                format!("{rows}×{columns}, window {window}"),
                input_for(rows, columns, seed as u64),
                700 + seed as u64,
                move |pipeline| {
                    Box::new(MaxPoolStep {
                        code,
                        window,
                        pipeline,
                    })
                },
                move |pooled_input| Some(reference(pooled_input, window)),
            )
        })
        .collect();
    for &(rows, columns, window) in &BAD_WINDOWS {
        cases.push(GraphCase::new(
            format!("{rows}×{columns}, window {window}"),
            Tensor2d::zeros(rows, columns),
            0,
            move |pipeline| {
                Box::new(MaxPoolStep {
                    code,
                    window,
                    pipeline,
                })
            },
            |_| None,
        ));
    }
    cases
}
