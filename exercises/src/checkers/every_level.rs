//! What the "every level" exercises (max pooling, convolution) share: calling the
//! student's CPU function safely, insisting on shape errors for impossible inputs, and
//! the graph level, where the student's operator runs between two of the crate's in one
//! submission.

use std::path::Path;

use galaxy::{ShapeError, Tensor2d, Tolerance};

use crate::checkers::common::{KernelUnderTest, context};
use crate::kernel_run::POISON_BITS;
use crate::report::{PartReport, Verdict, catching_panics, compare};
use crate::shader::BindingSpec;
use crate::step_graph::{LinearStep, ReluStep, Step, StepGraph, StepGraphError};

/// The graph level adds a linear layer in f32 on the GPU in front: its rounding differs
/// from the CPU's, so the comparison needs a tolerance even for exact operators.
pub const GRAPH_TOLERANCE: Tolerance = Tolerance::new(1e-4, 1e-5);

/// Calls the student's CPU function and compares its result with `expected`.
pub fn run_cpu_level(
    work: impl FnOnce() -> Result<Tensor2d, ShapeError>,
    expected: &Tensor2d,
    tolerance: Tolerance,
) -> Verdict {
    run_cpu_level_explained(work, expected, tolerance, |verdict, _| verdict)
}

/// As [`run_cpu_level`], with `explain` given the verdict and the student's result, to
/// add the cause of a mismatch.
pub fn run_cpu_level_explained(
    work: impl FnOnce() -> Result<Tensor2d, ShapeError>,
    expected: &Tensor2d,
    tolerance: Tolerance,
    explain: impl FnOnce(Verdict, &Tensor2d) -> Verdict,
) -> Verdict {
    match catching_panics(work) {
        Ok(Ok(result)) if result.shape() != expected.shape() => Verdict::Error(format!(
            "the result is {}×{}, but should be {}×{}",
            result.rows(),
            result.columns(),
            expected.rows(),
            expected.columns()
        )),
        Ok(Ok(result)) => explain(compare(&result, expected, tolerance), &result),
        Ok(Err(error)) => Verdict::Error(format!("returned an error for a valid input: {error}")),
        Err(panicked) => panicked,
    }
}

/// Calls the student's function on an impossible input: it must return an error, and
/// must not panic.
pub fn expect_error<T: std::fmt::Debug>(
    function: &str,
    work: impl FnOnce() -> Result<T, ShapeError>,
) -> Verdict {
    match catching_panics(work) {
        Ok(Err(error)) => Verdict::Pass(format!("a ShapeError: {error}")),
        Ok(Ok(result)) => Verdict::Unmet(format!(
            "{function} must return a ShapeError for this input, but returned {}",
            describe(&result)
        )),
        Err(panicked) => panicked,
    }
}

/// Calls the student's shape function on a valid input: it must return `expected`, and
/// `rule` says, for a person, how the shape follows from the input's.
pub fn expect_shape(
    function: &str,
    work: impl FnOnce() -> Result<(usize, usize), ShapeError>,
    expected: (usize, usize),
    rule: &str,
) -> Verdict {
    match catching_panics(work) {
        Ok(Ok(shape)) if shape == expected => {
            Verdict::Pass(format!("{}×{}", expected.0, expected.1))
        }
        Ok(Ok(shape)) => Verdict::Unmet(format!(
            "{function} returned {}×{}, but the result is {}×{}: {rule}",
            shape.0, shape.1, expected.0, expected.1
        )),
        Ok(Err(error)) => Verdict::Error(format!("returned an error for a valid input: {error}")),
        Err(panicked) => panicked,
    }
}

/// A short description of a value: tensors by their shape.
fn describe<T: std::fmt::Debug>(value: &T) -> String {
    let text = format!("{value:?}");
    if text.len() > 60 {
        format!("{}…", &text[..60])
    } else {
        text
    }
}

/// Builds the student's step from their compiled kernel.
pub type MakeStep = Box<dyn Fn(wgpu::ComputePipeline) -> Box<dyn Step>>;
/// The expected result of the student's step for the tensor it receives, or `None` when
/// the step must refuse to be built.
pub type ExpectedStep = Box<dyn Fn(&Tensor2d) -> Option<Tensor2d>>;

/// One case of the graph level.
pub struct GraphCase {
    pub description: String,
    pub input: Tensor2d,
    /// Seeds the weights of the linear layer in front of the student's step.
    pub seed: u64,
    pub make_step: MakeStep,
    pub expected: ExpectedStep,
}

impl GraphCase {
    pub fn new(
        description: String,
        input: Tensor2d,
        seed: u64,
        make_step: impl Fn(wgpu::ComputePipeline) -> Box<dyn Step> + 'static,
        expected: impl Fn(&Tensor2d) -> Option<Tensor2d> + 'static,
    ) -> GraphCase {
        GraphCase {
            description,
            input,
            seed,
            make_step: Box::new(make_step),
            expected: Box::new(expected),
        }
    }
}

/// The graph level: `input → linear → student's step → ReLU`, built (shapes checked),
/// prepared (buffers allocated, every step bound once), poisoned with NaN and run in one
/// submission, for every case. A case whose `expected` is `None` must fail to build,
/// with the error naming the student's step.
///
/// The student's step is judged on its own result first, read back from the same run:
/// the ReLU after it turns a negative number into zero, and on some drivers an unwritten
/// NaN into zero too, so the graph's final result alone can hide a wrong or missing value.
pub fn graph_level_part(wgsl: &Path, bindings: &[BindingSpec], cases: &[GraphCase]) -> PartReport {
    let part_name = "graph level";
    let loaded = context().and_then(|context| {
        KernelUnderTest::load(context, wgsl, bindings).map(|kernel| (context, kernel))
    });
    let (context, kernel) = match loaded {
        Ok(loaded) => loaded,
        Err(error) => {
            let mut part = PartReport::new(part_name);
            part.push(
                "setup",
                Verdict::Error(format!("the graph level runs your GPU kernel, and {error}")),
            );
            return part;
        }
    };
    let mut part = PartReport::new(part_name);
    for case in cases {
        let columns = case.input.columns();
        let limit = (3.0 / columns as f32).sqrt();
        let weights = Tensor2d::random(columns, columns, -limit..=limit, case.seed);
        let bias = Tensor2d::random(1, columns, -0.5..=0.5, case.seed + 1);
        let step_input = galaxy::cpu::linear_naive(&case.input, &weights, &bias)
            .expect("a square linear layer fits every input");
        let expected = (case.expected)(&step_input);
        let steps: Vec<Box<dyn Step>> = vec![
            Box::new(LinearStep { weights, bias }),
            (case.make_step)(kernel.kernel.pipeline.clone()),
            Box::new(ReluStep),
        ];
        let verdict = match catching_panics(|| run_graph(context, &case.input, steps, expected)) {
            Ok(verdict) => verdict,
            Err(panicked) => panicked,
        };
        part.push(case.description.clone(), verdict);
    }
    part
}

fn run_graph(
    context: &galaxy::gpu::GpuContext,
    input: &Tensor2d,
    steps: Vec<Box<dyn Step>>,
    expected: Option<Tensor2d>,
) -> Verdict {
    let built = StepGraph::new(input.shape(), steps);
    let Some(expected) = expected else {
        return match built {
            Err(StepGraphError::Shape { index: 1, .. }) => Verdict::Pass(
                "the graph refused to build: the step's output shape is an error".to_string(),
            ),
            Err(other) => Verdict::Error(other.to_string()),
            Ok(graph) => Verdict::Unmet(format!(
                "the step cannot run on this input, so building the graph must fail; but the \
                 output shape came out as {:?}",
                graph.output_shape()
            )),
        };
    };
    let outcome = built.and_then(|graph| {
        let prepared = graph.prepare(context)?;
        prepared.poison(f32::from_bits(POISON_BITS));
        prepared.run_reading_every_step(input)
    });
    let results = match outcome {
        Ok(results) => results,
        Err(error) => return Verdict::Error(error.to_string()),
    };
    // Steps: 0 the linear layer, 1 the student's, 2 the ReLU.
    let step_verdict = same_shape_and_values(&results[1], &expected, "your step's own result");
    if !step_verdict.passed() {
        return step_verdict;
    }
    same_shape_and_values(
        &results[2],
        &galaxy::cpu::relu(&expected),
        "the graph's result (the ReLU of your step's)",
    )
}

/// Compares `result` with `expected`; a failure says which tensor of the graph it is.
fn same_shape_and_values(result: &Tensor2d, expected: &Tensor2d, which: &str) -> Verdict {
    if result.shape() != expected.shape() {
        return Verdict::Error(format!(
            "{which} is {}×{}, but should be {}×{}",
            result.rows(),
            result.columns(),
            expected.rows(),
            expected.columns()
        ));
    }
    match compare(result, expected, GRAPH_TOLERANCE) {
        // The error's lines are indented as a whole when the verdict is shown.
        Verdict::Mismatch(report) => Verdict::Error(format!(
            "{which}: {}",
            report.to_string().replace("\n        ", "\n")
        )),
        other => other,
    }
}
