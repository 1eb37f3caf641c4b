//! Warm-up: vector addition. One invocation per element, and a bounds check for the
//! invocations of the last workgroup that stick out past the end.

use galaxy::{Tensor2d, Tolerance};

use crate::analysis::StaticRules;
use crate::checkers::common::{load_or_fail, output_tensor, row_of, static_part};
use crate::checkers::hypotheses::{Hypothesis, explain};
use crate::kernel_run::{BufferData, workgroups_for};
use crate::report::{PartReport, compare};
use crate::shader::{BindingSpec, Element};
use crate::submission::Submission;

pub const BINDINGS: [BindingSpec; 4] = [
    BindingSpec::read(0, "a", Element::F32),
    BindingSpec::read(1, "b", Element::F32),
    BindingSpec::read_write(2, "output", Element::F32),
    BindingSpec::uniform(3, "dimensions"),
];

/// One element, sizes around a workgroup of 64 and 256, and one needing more than a
/// thousand workgroups.
const LENGTHS: [usize; 8] = [1, 7, 64, 255, 256, 257, 1000, 65_537];

/// One float addition is exact in IEEE arithmetic, so the tolerance is tight.
const TOLERANCE: Tolerance = Tolerance::new(1e-6, 1e-7);

pub fn check(submission: &Submission) -> Vec<PartReport> {
    let part_name = "GPU kernel";
    let (context, kernel) = match load_or_fail(submission.wgsl.as_deref(), &BINDINGS, part_name) {
        Ok(loaded) => loaded,
        Err(failed) => return vec![failed],
    };
    let workgroup = match kernel.one_dimensional_workgroup() {
        Ok(size) => size,
        Err(error) => return vec![PartReport::failed_before_running(part_name, error)],
    };
    let mut part = PartReport::new(part_name);
    for (seed, &length) in LENGTHS.iter().enumerate() {
        let seed = seed as u64;
        let a = Tensor2d::random(1, length, -1.0..=1.0, 2 * seed);
        let b = Tensor2d::random(1, length, -1.0..=1.0, 2 * seed + 1);
        let expected: Vec<f32> = a
            .as_slice()
            .iter()
            .zip(b.as_slice())
            .map(|(a, b)| a + b)
            .collect();
        let data = [
            BufferData::floats(a.as_slice()),
            BufferData::floats(b.as_slice()),
            BufferData::poisoned_floats(length),
            BufferData::uniform(&[length as u32]),
        ];
        let grid = [workgroups_for(length, workgroup), 1, 1];
        let description = format!("length {length}");
        kernel.check_case(context, &mut part, description, &data, grid, |outputs| {
            let actual = output_tensor(outputs, 1, length);
            let verdict = compare(&actual, &row_of(&expected, length), TOLERANCE);
            explain(verdict, &actual, TOLERANCE, || mistakes(&a, &b))
        });
    }
    vec![part, static_part(&kernel, &StaticRules::default())]
}

/// What a kernel that reads the wrong input, or combines them the wrong way, writes.
fn mistakes(a: &Tensor2d, b: &Tensor2d) -> Vec<Hypothesis> {
    let combined = |combine: fn(f32, f32) -> f32, left: &Tensor2d, right: &Tensor2d| {
        let values = left
            .as_slice()
            .iter()
            .zip(right.as_slice())
            .map(|(&left, &right)| combine(left, right))
            .collect();
        Tensor2d::from_vec(1, left.len(), values).expect("one value per element")
    };
    vec![
        Hypothesis::new(
            "cause: the result is a + a: the kernel never reads b",
            combined(|x, y| x + y, a, a),
        ),
        Hypothesis::new(
            "cause: the result is b + b: the kernel never reads a",
            combined(|x, y| x + y, b, b),
        ),
        Hypothesis::new(
            "cause: the result is a − b: subtracted instead of added",
            combined(|x, y| x - y, a, b),
        ),
    ]
}
