//! Exercise: 2D convolution at every level, checked like max pooling: the CPU level
//! against the checker's reference, the GPU level in immediate mode, and the graph
//! level as a step between a linear layer and a ReLU.

use galaxy::gpu::record::BoundDispatch;
use galaxy::gpu::{GpuContext, GpuError, GpuTensor, Readback};
use galaxy::{ShapeError, Tensor2d, Tolerance};

use crate::analysis::StaticRules;
use crate::checkers::common::{KernelUnderTest, context, output_tensor, static_part, with_cause};
use crate::checkers::every_level::{
    GraphCase, expect_error, expect_shape, graph_level_part, run_cpu_level_explained,
};
use crate::checkers::hypotheses::{Hypothesis, changed, explain};
use crate::kernel_run::BufferData;
use crate::report::{PartReport, Verdict, compare};
use crate::shader::{BindingSpec, Element};
use crate::step_graph::Step;
use crate::submission::{Submission, Variant};

pub const BINDINGS: [BindingSpec; 4] = [
    BindingSpec::read(0, "input", Element::F32),
    BindingSpec::read(1, "weights", Element::F32),
    BindingSpec::read_write(2, "output", Element::F32),
    BindingSpec::uniform(3, "dimensions"),
];

/// (input rows, input columns, weights rows, weights columns): single elements, weights
/// as large as the input, 1 × 1 weights, non-square weights, and outputs larger than
/// one 8 × 8 workgroup.
pub const CASES: [(usize, usize, usize, usize); 8] = [
    (1, 1, 1, 1),
    (3, 3, 3, 3),
    (5, 7, 3, 3),
    (8, 8, 1, 1),
    (9, 6, 2, 4),
    (17, 33, 5, 5),
    (40, 31, 3, 7),
    (100, 70, 9, 9),
];

/// (input rows, input columns, weights rows, weights columns) that must be shape errors.
pub const BAD_WEIGHTS: [(usize, usize, usize, usize); 3] =
    [(4, 4, 0, 0), (4, 4, 5, 5), (2, 10, 3, 1)];

/// Sums of up to 81 products.
const TOLERANCE: Tolerance = Tolerance::new(1e-4, 1e-5);

/// `convolve(input, weights)`.
pub type ConvolveFunction = fn(&Tensor2d, &Tensor2d) -> Result<Tensor2d, ShapeError>;
/// `convolution_output_shape(input shape, weights shape)`.
pub type OutputShapeFunction =
    fn((usize, usize), (usize, usize)) -> Result<(usize, usize), ShapeError>;
/// `bind_convolution(context, pipeline, input, weights, output)`.
pub type BindFunction = fn(
    &GpuContext,
    &wgpu::ComputePipeline,
    &GpuTensor,
    &GpuTensor,
    &GpuTensor,
) -> Result<BoundDispatch, GpuError>;

/// The student's functions, from whichever module the check is for.
#[derive(Clone, Copy)]
pub struct ConvolutionCode {
    pub convolve: ConvolveFunction,
    pub output_shape: OutputShapeFunction,
    pub bind: BindFunction,
}

impl ConvolutionCode {
    pub fn of(variant: Variant) -> ConvolutionCode {
        crate::rust_exercises::with_rust_module!(convolution, variant, |code| ConvolutionCode {
            convolve: code::convolve,
            output_shape: code::convolution_output_shape,
            bind: code::bind_convolution,
        })
    }
}

/// The checker's own reference, accumulated in f64.
pub fn reference(input: &Tensor2d, weights: &Tensor2d) -> Tensor2d {
    let rows = input.rows() - weights.rows() + 1;
    let columns = input.columns() - weights.columns() + 1;
    let mut output = Tensor2d::zeros(rows, columns);
    for row in 0..rows {
        for column in 0..columns {
            let mut total = 0.0_f64;
            for i in 0..weights.rows() {
                for j in 0..weights.columns() {
                    total +=
                        f64::from(input.get(row + i, column + j)) * f64::from(weights.get(i, j));
                }
            }
            output.set(row, column, total as f32);
        }
    }
    output
}

pub fn check(submission: &Submission) -> Vec<PartReport> {
    let code = ConvolutionCode::of(submission.rust);
    let wgsl = submission
        .wgsl
        .as_deref()
        .expect("convolution has a WGSL part");
    let mut parts = vec![
        cpu_level(code),
        gpu_level(wgsl),
        graph_level_part(wgsl, &BINDINGS, &graph_cases(code)),
    ];
    for part in &mut parts {
        explain_non_square_failures(part);
    }
    parts
}

/// Where every case with square weights passes and only cases with non-square weights
/// fail, says so on the failures: the rows and columns of the weights are mixed up. The
/// first cases of every level are [`CASES`], in order.
fn explain_non_square_failures(part: &mut PartReport) {
    let cases = part.cases.iter_mut().zip(CASES);
    let (square, non_square): (Vec<_>, Vec<_>) = cases
        .partition(|(_, (_, _, weights_rows, weights_columns))| weights_rows == weights_columns);
    let square_passed = square.iter().all(|(case, _)| case.verdict.passed());
    let non_square_failed = non_square.iter().any(|(case, _)| !case.verdict.passed());
    if !(square_passed && non_square_failed) {
        return;
    }
    for (case, _) in non_square {
        if !case.verdict.passed() {
            let verdict = std::mem::replace(&mut case.verdict, Verdict::Pass(String::new()));
            case.verdict = with_cause(
                verdict,
                "cause: every case with square weights passes, and only cases with non-square \
                 weights fail: the rows and the columns of the weights are mixed up somewhere \
                 (their order in the uniform, the stride of a row of weights, or the loop \
                 bounds)",
            );
        }
    }
}

/// What the usual mistakes of a 2D convolution produce, each with the sentence that
/// names it.
fn mistakes(input: &Tensor2d, weights: &Tensor2d) -> Vec<Hypothesis> {
    let flipped = changed(weights, |values| values.reverse());
    // The input read as a flat array whose rows are `output_columns` long.
    let (rows, columns) = (
        input.rows() - weights.rows() + 1,
        input.columns() - weights.columns() + 1,
    );
    let flat = input.as_slice();
    let mut short_rows = Tensor2d::zeros(rows, columns);
    for row in 0..rows {
        for column in 0..columns {
            let mut total = 0.0_f64;
            for i in 0..weights.rows() {
                for j in 0..weights.columns() {
                    let value = flat.get((row + i) * columns + column + j).copied();
                    total += f64::from(value.unwrap_or(f32::NAN)) * f64::from(weights.get(i, j));
                }
            }
            short_rows.set(row, column, total as f32);
        }
    }
    vec![
        Hypothesis::new(
            "cause: the result is the convolution with the weights flipped in both directions \
             (weights[rows − 1 − i][columns − 1 − j]): this exercise, like deep-learning \
             libraries, does not flip them",
            reference(input, &flipped),
        ),
        Hypothesis::new(
            "cause: the result is what the input gives when its rows are taken to be \
             output_columns long: a row of the input is input_columns long",
            short_rows,
        ),
    ]
}

fn tensors_for(
    (rows, columns, weights_rows, weights_columns): (usize, usize, usize, usize),
    seed: u64,
) -> (Tensor2d, Tensor2d) {
    (
        Tensor2d::random(rows, columns, -1.0..=1.0, 800 + 2 * seed),
        Tensor2d::random(weights_rows, weights_columns, -1.0..=1.0, 801 + 2 * seed),
    )
}

fn describe(
    (rows, columns, weights_rows, weights_columns): (usize, usize, usize, usize),
) -> String {
    format!("input {rows}×{columns}, weights {weights_rows}×{weights_columns}")
}

fn cpu_level(code: ConvolutionCode) -> PartReport {
    let mut part = PartReport::new("CPU level");
    for (seed, &case) in CASES.iter().enumerate() {
        let (input, weights) = tensors_for(case, seed as u64);
        let verdict = run_cpu_level_explained(
            || (code.convolve)(&input, &weights),
            &reference(&input, &weights),
            TOLERANCE,
            |verdict, result| explain(verdict, result, TOLERANCE, || mistakes(&input, &weights)),
        );
        part.push(describe(case), verdict);
    }
    for &case in &CASES {
        let (rows, columns, weights_rows, weights_columns) = case;
        part.push(
            format!("output shape of {}", describe(case)),
            expect_shape(
                "convolution_output_shape",
                || (code.output_shape)((rows, columns), (weights_rows, weights_columns)),
                (rows - weights_rows + 1, columns - weights_columns + 1),
                "the weights fit at every position from 0 to input − weights, so there are \
                 input − weights + 1 of them along each axis",
            ),
        );
    }
    for &case in &BAD_WEIGHTS {
        let (input, weights) = (
            Tensor2d::zeros(case.0, case.1),
            Tensor2d::zeros(case.2, case.3),
        );
        part.push(
            describe(case),
            expect_error("convolve", || (code.convolve)(&input, &weights)),
        );
        part.push(
            format!("output shape of {}", describe(case)),
            expect_error("convolution_output_shape", || {
                (code.output_shape)(input.shape(), weights.shape())
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
    for (seed, &case) in CASES.iter().enumerate() {
        let (input, weights) = tensors_for(case, seed as u64);
        let expected = reference(&input, &weights);
        let (output_rows, output_columns) = expected.shape();
        let data = [
            BufferData::floats(input.as_slice()),
            BufferData::floats(weights.as_slice()),
            BufferData::poisoned_floats(expected.len()),
            BufferData::uniform(&[
                input.rows() as u32,
                input.columns() as u32,
                weights.rows() as u32,
                weights.columns() as u32,
                output_rows as u32,
                output_columns as u32,
            ]),
        ];
        let grid = kernel.grid_over(output_rows, output_columns);
        kernel.check_case(context, &mut part, describe(case), &data, grid, |outputs| {
            let actual = output_tensor(outputs, output_rows, output_columns);
            let verdict = compare(&actual, &expected, TOLERANCE);
            explain(verdict, &actual, TOLERANCE, || mistakes(&input, &weights))
        });
    }
    // What no run can show, judged on the kernel alone, belongs to this level too.
    part.cases
        .extend(static_part(&kernel, &StaticRules::default()).cases);
    part
}

/// The student's convolution as a step of the graph; its weights are a constant that
/// the step uploads when it is bound.
struct ConvolutionStep {
    code: ConvolutionCode,
    weights: Tensor2d,
    pipeline: wgpu::ComputePipeline,
}

impl Step for ConvolutionStep {
    fn name(&self) -> String {
        format!(
            "convolution, weights {}×{}",
            self.weights.rows(),
            self.weights.columns()
        )
    }

    fn output_shape(&self, input: (usize, usize)) -> Result<(usize, usize), ShapeError> {
        (self.code.output_shape)(input, self.weights.shape())
    }

    fn bind(
        &self,
        context: &GpuContext,
        input: &GpuTensor,
        output: &GpuTensor,
    ) -> Result<BoundDispatch, GpuError> {
        let weights = GpuTensor::upload(context, &self.weights, Readback::Never)?;
        (self.code.bind)(context, &self.pipeline, input, &weights, output)
    }
}

fn graph_cases(code: ConvolutionCode) -> Vec<GraphCase> {
    let step = move |weights: Tensor2d| {
        move |pipeline| -> Box<dyn Step> {
            Box::new(ConvolutionStep {
                code,
                weights: weights.clone(),
                pipeline,
            })
        }
    };
    let mut cases: Vec<GraphCase> = CASES
        .iter()
        .enumerate()
        .map(|(seed, &case)| {
            let (input, weights) = tensors_for(case, seed as u64);
            let expected_weights = weights.clone();
            GraphCase::new(
                describe(case),
                input,
                900 + seed as u64,
                step(weights),
                move |step_input| Some(reference(step_input, &expected_weights)),
            )
        })
        .collect();
    for &case in &BAD_WEIGHTS {
        cases.push(GraphCase::new(
            describe(case),
            Tensor2d::zeros(case.0, case.1),
            0,
            step(Tensor2d::zeros(case.2, case.3)),
            |_| None,
        ));
    }
    cases
}
