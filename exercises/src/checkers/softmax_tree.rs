//! Exercise: the tree reductions (maximum and sum) inside a row-wise softmax, one
//! workgroup per row. Rows longer than the workgroup make every invocation combine
//! several elements before the tree; rows shorter than it leave some invocations with
//! nothing but the identity.

use galaxy::{Tensor2d, Tolerance};

use crate::analysis::StaticRules;
use crate::checkers::common::{
    load_or_fail, no_failure_yet, run_case, static_part, tensor_of, workgroup_memory_part,
};
use crate::kernel_run::{BufferData, to_floats};
use crate::report::{PartReport, compare};
use crate::shader::{BindingSpec, Element};
use crate::submission::Submission;

pub const BINDINGS: [BindingSpec; 3] = [
    BindingSpec::read(0, "input", Element::F32),
    BindingSpec::read_write(1, "output", Element::F32),
    BindingSpec::uniform(2, "dimensions"),
];

/// (rows, columns) of the random cases: one element, rows shorter than, equal to, just
/// longer than and much longer than a workgroup of 256.
pub const SHAPES: [(usize, usize); 8] = [
    (1, 1),
    (1, 7),
    (17, 33),
    (3, 256),
    (5, 257),
    (2, 1000),
    (64, 300),
    (4, 4099),
];

/// Values of the random cases, up to ±8. Softmax does not change when every value of a
/// row moves by the same amount, so with values this small almost any shift gives the
/// right answer: these cases check the arithmetic, and the cases of [`cases`] with large
/// values check the maximum.
const RANGE: std::ops::RangeInclusive<f32> = -8.0..=8.0;

const TOLERANCE: Tolerance = Tolerance::new(1e-4, 1e-7);

/// One input and what it is for.
pub struct SoftmaxCase {
    pub description: String,
    pub input: Tensor2d,
}

/// The random shapes, then inputs that make every step of the kernel matter: `exp`
/// overflows to infinity above about 88.7 and underflows to zero below about −103, so
/// a kernel that shifts by anything but the row's true maximum computes inf/inf or 0/0,
/// both NaN.
///
/// - A spike of +200 in a row of values in ±1, at column r of row r: every row has its
///   maximum at another place, owned by another invocation, past 256 (several values per
///   invocation) and past a power of two. A maximum tree that misses one slot (a race, a
///   step too few, a power-of-two assumption) shifts by about 1, and exp(199) = inf.
/// - Rows far from zero: ±100 (no shift at all overflows), [60, 100] (everything
///   overflows unshifted), ±1000.
/// - All-negative rows, [−200, −100], shorter than a workgroup: a maximum whose identity
///   is 0 instead of the lowest float, or whose unused slots are left at 0, shifts by 0,
///   and every exp underflows: 0/0.
pub fn cases() -> Vec<SoftmaxCase> {
    let mut cases: Vec<SoftmaxCase> = SHAPES
        .iter()
        .enumerate()
        .map(|(seed, &(rows, columns))| SoftmaxCase {
            description: format!("{rows}×{columns}"),
            input: random_input(rows, columns, 400 + seed as u64),
        })
        .collect();
    for (size, seed) in [(300, 430), (100, 431)] {
        let mut input = Tensor2d::random(size, size, -1.0..=1.0, seed);
        for row in 0..size {
            input.set(row, row, 200.0);
        }
        cases.push(SoftmaxCase {
            description: format!("{size}×{size}, +200 at column r of row r"),
            input,
        });
    }
    let far = [
        (5, 257, -100.0, 100.0, 440),
        (4, 33, 60.0, 100.0, 441),
        (2, 7, -1000.0, 1000.0, 442),
        (3, 33, -200.0, -100.0, 443),
        (2, 300, -200.0, -100.0, 444),
    ];
    for (rows, columns, low, high, seed) in far {
        cases.push(SoftmaxCase {
            description: format!("{rows}×{columns} in [{low}, {high}]"),
            input: Tensor2d::random(rows, columns, low..=high, seed),
        });
    }
    cases
}

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
    for case in cases() {
        let (rows, columns) = case.input.shape();
        let expected = galaxy::cpu::softmax(&case.input).expect("the cases are not empty");
        // One workgroup per row.
        let grid = [rows as u32, 1, 1];
        let verdict = run_case(
            context,
            &kernel,
            &buffers(&case.input),
            grid,
            |outputs| {
                compare(
                    &tensor_of(&to_floats(&outputs[0]), rows, columns),
                    &expected,
                    TOLERANCE,
                )
            },
            no_failure_yet(&part),
        );
        part.push(case.description, verdict);
    }
    vec![
        part,
        static_part(&kernel, &StaticRules::default()),
        workgroup_memory_part(&kernel, "a tree reduction in workgroup memory"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkers::common::{KernelUnderTest, tensor_of};
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
        for case in cases() {
            let input = case.input;
            let (rows, columns) = input.shape();
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
