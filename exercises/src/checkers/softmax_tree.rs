//! Exercise: the tree reductions (maximum and sum) inside a row-wise softmax, one
//! workgroup per row. Rows longer than the workgroup make every invocation combine
//! several elements before the tree; rows shorter than it leave some invocations with
//! nothing but the identity.

use galaxy::{Tensor2d, Tolerance};

use crate::checkers::common::{load_or_fail, workgroup_memory_part};
use crate::checkers::matmul::tensor_of;
use crate::kernel_run::{BufferData, to_floats};
use crate::report::{PartReport, Verdict, compare};
use crate::shader::{BindingSpec, Element};
use crate::submission::Submission;

pub const BINDINGS: [BindingSpec; 3] = [
    BindingSpec::read(0, "input", Element::F32),
    BindingSpec::read_write(1, "output", Element::F32),
    BindingSpec::uniform(2, "dimensions"),
];

/// (rows, columns): one element, rows shorter than, equal to, just longer than and much
/// longer than a workgroup of 256.
pub const CASES: [(usize, usize); 8] = [
    (1, 1),
    (1, 7),
    (17, 33),
    (3, 256),
    (5, 257),
    (2, 1000),
    (64, 300),
    (4, 4099),
];

/// Values up to ±8: exponentials up to e^16 before the shift by the maximum, so a kernel
/// that forgets the shift still works, but one that shifts by the wrong maximum does not.
const RANGE: std::ops::RangeInclusive<f32> = -8.0..=8.0;

const TOLERANCE: Tolerance = Tolerance::new(1e-4, 1e-7);

/// The buffers in binding order, with the output poisoned.
pub fn buffers(input: &Tensor2d) -> [BufferData; 3] {
    [
        BufferData::floats(input.as_slice()),
        BufferData::poisoned_floats(input.len()),
        BufferData::uniform(&[input.rows() as u32, input.columns() as u32]),
    ]
}

pub fn random_input(rows: usize, columns: usize, seed: u64) -> Tensor2d {
    Tensor2d::random(rows, columns, RANGE, seed)
}

pub fn check(submission: &Submission) -> Vec<PartReport> {
    let part_name = "GPU kernel";
    let (context, kernel) = match load_or_fail(submission.wgsl.as_deref(), &BINDINGS, part_name) {
        Ok(loaded) => loaded,
        Err(failed) => return vec![failed],
    };
    let mut part = PartReport::new(part_name);
    for (seed, &(rows, columns)) in CASES.iter().enumerate() {
        let input = random_input(rows, columns, 400 + seed as u64);
        let expected = galaxy::cpu::softmax(&input).expect("the cases are not empty");
        // One workgroup per row.
        let grid = [rows as u32, 1, 1];
        let verdict = match kernel.run(context, &buffers(&input), grid) {
            Ok(outputs) => compare(
                &tensor_of(&to_floats(&outputs[0]), rows, columns),
                &expected,
                TOLERANCE,
            ),
            Err(error) => Verdict::Error(error.to_string()),
        };
        part.push(format!("{rows}×{columns}"), verdict);
    }
    vec![
        part,
        workgroup_memory_part(&kernel, "a tree reduction in workgroup memory"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::common::KernelUnderTest;
    use crate::gpu_context_for_tests;
    use crate::kernel_run::workgroups_for;

    /// The single-pass baseline of the benchmark is correct too (it is dispatched one
    /// invocation per row, so it is checked here rather than by the exercise's checker).
    #[test]
    fn the_single_pass_baseline_is_correct() {
        let context = gpu_context_for_tests();
        let path =
            crate::registry::exercises_directory().join("softmax-tree-reduction/single_pass.wgsl");
        let kernel = KernelUnderTest::load(context, &path, &BINDINGS).unwrap();
        for (seed, &(rows, columns)) in CASES.iter().enumerate() {
            let input = random_input(rows, columns, seed as u64);
            let grid = [workgroups_for(rows, kernel.shader.workgroup_size[0]), 1, 1];
            let outputs = kernel.run(context, &buffers(&input), grid).unwrap();
            let verdict = compare(
                &tensor_of(&to_floats(&outputs[0]), rows, columns),
                &galaxy::cpu::softmax(&input).unwrap(),
                TOLERANCE,
            );
            assert!(verdict.passed(), "{rows}×{columns}: {verdict}");
        }
    }
}
