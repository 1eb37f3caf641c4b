//! Exercise: the linear layer `input · weights + bias` with tiles in workgroup memory.
//! The starter is the naive kernel, already correct; the exercise is to tile it and
//! stay correct, so the checker looks at the results and at the use of workgroup memory.

use galaxy::Tensor2d;

use crate::analysis::StaticRules;
use crate::checkers::common::{
    PRODUCT_CASES, PRODUCT_TOLERANCE, load_or_fail, matrix_product, no_failure_yet, run_case,
    static_part, tensor_of, workgroup_memory_part,
};
use crate::kernel_run::{BufferData, to_floats};
use crate::report::{PartReport, compare};
use crate::shader::{BindingSpec, Element};
use crate::submission::Submission;

pub const BINDINGS: [BindingSpec; 5] = [
    BindingSpec::read(0, "input", Element::F32),
    BindingSpec::read(1, "weights", Element::F32),
    BindingSpec::read(2, "bias", Element::F32),
    BindingSpec::read_write(3, "output", Element::F32),
    BindingSpec::uniform(4, "dimensions"),
];

/// The CPU reference: the product in f64, plus the bias on every row.
pub fn linear(input: &Tensor2d, weights: &Tensor2d, bias: &Tensor2d) -> Tensor2d {
    let mut output = matrix_product(input, weights);
    for row in 0..output.rows() {
        for column in 0..output.columns() {
            output.set(row, column, output.get(row, column) + bias.get(0, column));
        }
    }
    output
}

/// The buffers in binding order, with the output poisoned.
pub fn buffers(input: &Tensor2d, weights: &Tensor2d, bias: &Tensor2d) -> [BufferData; 5] {
    [
        BufferData::floats(input.as_slice()),
        BufferData::floats(weights.as_slice()),
        BufferData::floats(bias.as_slice()),
        BufferData::poisoned_floats(input.rows() * weights.columns()),
        BufferData::uniform(&[
            input.rows() as u32,
            input.columns() as u32,
            weights.columns() as u32,
        ]),
    ]
}

pub fn check(submission: &Submission) -> Vec<PartReport> {
    let part_name = "GPU kernel";
    let (context, kernel) = match load_or_fail(submission.wgsl.as_deref(), &BINDINGS, part_name) {
        Ok(loaded) => loaded,
        Err(failed) => return vec![failed],
    };
    let mut part = PartReport::new(part_name);
    for (seed, &(rows, inner, columns)) in PRODUCT_CASES.iter().enumerate() {
        let seed = 300 + seed as u64;
        let input = Tensor2d::random(rows, inner, -1.0..=1.0, 3 * seed);
        let weights = Tensor2d::random(inner, columns, -1.0..=1.0, 3 * seed + 1);
        let bias = Tensor2d::random(1, columns, -1.0..=1.0, 3 * seed + 2);
        let expected = linear(&input, &weights, &bias);
        let grid = kernel.grid_over(rows, columns);
        let verdict = run_case(
            context,
            &kernel,
            &buffers(&input, &weights, &bias),
            grid,
            |outputs| {
                compare(
                    &tensor_of(&to_floats(&outputs[0]), rows, columns),
                    &expected,
                    PRODUCT_TOLERANCE,
                )
            },
            no_failure_yet(&part),
        );
        part.push(
            format!("input {rows}×{inner}, weights {inner}×{columns}"),
            verdict,
        );
    }
    vec![
        part,
        static_part(&kernel, &StaticRules::default()),
        workgroup_memory_part(&kernel, "tiling the inputs in workgroup memory"),
    ]
}
