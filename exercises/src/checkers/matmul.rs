//! Hand-in: matrix multiplication. Any correct kernel passes; its speed is reported for
//! interest and never graded.

use galaxy::Tensor2d;
use galaxy::gpu::GpuContext;

use crate::analysis::StaticRules;
use crate::checkers::common::{
    KernelUnderTest, PRODUCT_CASES, PRODUCT_TOLERANCE, load_or_fail, matrix_product,
    no_failure_yet, run_case, static_part, tensor_of,
};
use crate::checkers::hypotheses::{Hypothesis, explain};
use crate::kernel_run::{BufferData, PreparedKernel, to_floats};
use crate::report::{PartReport, Verdict, compare};
use crate::shader::{BindingSpec, Element};
use crate::submission::Submission;

pub const BINDINGS: [BindingSpec; 4] = [
    BindingSpec::read(0, "a", Element::F32),
    BindingSpec::read(1, "b", Element::F32),
    BindingSpec::read_write(2, "output", Element::F32),
    BindingSpec::uniform(3, "dimensions"),
];

/// The size the speed is measured on.
pub const TIMED_SIZE: usize = 256;

/// The buffers for `a · b`, in binding order, with the output poisoned.
pub fn buffers(a: &Tensor2d, b: &Tensor2d) -> [BufferData; 4] {
    [
        BufferData::floats(a.as_slice()),
        BufferData::floats(b.as_slice()),
        BufferData::poisoned_floats(a.rows() * b.columns()),
        BufferData::uniform(&[a.rows() as u32, a.columns() as u32, b.columns() as u32]),
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
        let seed = 200 + seed as u64;
        let a = Tensor2d::random(rows, inner, -1.0..=1.0, 2 * seed);
        let b = Tensor2d::random(inner, columns, -1.0..=1.0, 2 * seed + 1);
        let expected = matrix_product(&a, &b);
        let grid = kernel.grid_over(rows, columns);
        let verdict = run_case(
            context,
            &kernel,
            &buffers(&a, &b),
            grid,
            |outputs| {
                let actual = tensor_of(&to_floats(&outputs[0]), rows, columns);
                let verdict = compare(&actual, &expected, PRODUCT_TOLERANCE);
                explain(verdict, &actual, PRODUCT_TOLERANCE, || mistakes(&a, &b))
            },
            no_failure_yet(&part),
        );
        part.push(format!("{rows}×{inner} · {inner}×{columns}"), verdict);
    }
    if part.passed() {
        let verdict = match speed(context, &kernel) {
            Ok(gigaflops) => Verdict::Pass(format!(
                "{gigaflops:.2} GFLOP/s on {} (median of 5 runs; for interest, not graded)",
                context.adapter_info().name
            )),
            Err(error) => Verdict::Error(error.to_string()),
        };
        part.push(
            format!("speed at {TIMED_SIZE}×{TIMED_SIZE}×{TIMED_SIZE}"),
            verdict,
        );
    }
    vec![part, static_part(&kernel, &StaticRules::default())]
}

/// What a tiled kernel that drops the last, partial tile of the inner dimension writes,
/// for the usual tile sizes (several sizes can drop the same terms, so the message names
/// the terms, not the size).
fn mistakes(a: &Tensor2d, b: &Tensor2d) -> Vec<Hypothesis> {
    let inner = a.columns();
    let mut kept_lengths: Vec<usize> = [64, 32, 16, 8, 4]
        .into_iter()
        .map(|tile| inner / tile * tile)
        .filter(|&kept| kept != inner)
        .collect();
    kept_lengths.dedup();
    kept_lengths
        .into_iter()
        .map(|kept| {
            let mut a_kept = a.clone();
            for row in 0..a.rows() {
                for k in kept..inner {
                    a_kept.set(row, k, 0.0);
                }
            }
            Hypothesis::new(
                format!(
                    "cause: the result is the product without the last {} of its {inner} terms \
                     (k = {kept} … {}): the last, partial tile of the inner dimension is \
                     dropped; round the number of tiles up",
                    inner - kept,
                    inner - 1
                ),
                matrix_product(&a_kept, b),
            )
        })
        .collect()
}

/// GFLOP/s of one `TIMED_SIZE³` product, dispatch and wait included.
pub fn speed(context: &GpuContext, kernel: &KernelUnderTest) -> Result<f64, crate::CheckError> {
    let a = Tensor2d::random(TIMED_SIZE, TIMED_SIZE, -1.0..=1.0, 1);
    let b = Tensor2d::random(TIMED_SIZE, TIMED_SIZE, -1.0..=1.0, 2);
    let prepared = PreparedKernel::new(
        context,
        &kernel.kernel,
        &buffers(&a, &b),
        kernel.grid_over(TIMED_SIZE, TIMED_SIZE),
    )?;
    let time = prepared.median_time(context, 5)?;
    let operations = 2.0 * (TIMED_SIZE as f64).powi(3);
    Ok(operations / time.as_secs_f64() / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu_context_for_tests;
    use std::path::Path;

    /// A naive kernel that computes two neighbouring columns per invocation and says so
    /// with BLOCK_COLUMNS: the checker must dispatch half as many workgroups along x.
    const TWO_COLUMNS_PER_INVOCATION: &str = "
        struct Dimensions { rows: u32, inner: u32, columns: u32 }
        const BLOCK_COLUMNS: u32 = 2u * 8u;
        @group(0) @binding(0) var<storage, read> a: array<f32>;
        @group(0) @binding(1) var<storage, read> b: array<f32>;
        @group(0) @binding(2) var<storage, read_write> output: array<f32>;
        @group(0) @binding(3) var<uniform> dimensions: Dimensions;
        @compute @workgroup_size(8, 8)
        fn main(@builtin(global_invocation_id) global: vec3u) {
            let row = global.y;
            for (var step = 0u; step < 2u; step = step + 1u) {
                let column = 2u * global.x + step;
                if (row < dimensions.rows && column < dimensions.columns) {
                    var total = 0.0;
                    for (var k = 0u; k < dimensions.inner; k = k + 1u) {
                        total = total + a[row * dimensions.inner + k] * b[k * dimensions.columns + column];
                    }
                    output[row * dimensions.columns + column] = total;
                }
            }
        }";

    #[test]
    fn block_constants_size_the_grid() {
        let context = gpu_context_for_tests();
        let shader = crate::shader::AnalysedShader::from_source(
            Path::new("two_columns.wgsl"),
            TWO_COLUMNS_PER_INVOCATION.to_string(),
            &BINDINGS,
        )
        .unwrap();
        let kernel = KernelUnderTest::from_shader(context, shader, &BINDINGS).unwrap();
        assert_eq!(kernel.output_block(), (16, 8));
        assert_eq!(kernel.grid_over(17, 33), [3, 3, 1]);
        let a = Tensor2d::random(17, 5, -1.0..=1.0, 1);
        let b = Tensor2d::random(5, 33, -1.0..=1.0, 2);
        let outputs = kernel
            .run(context, &buffers(&a, &b), kernel.grid_over(17, 33))
            .unwrap();
        let verdict = compare(
            &tensor_of(&to_floats(&outputs[0]), 17, 33),
            &matrix_product(&a, &b),
            PRODUCT_TOLERANCE,
        );
        assert!(verdict.passed(), "{verdict}");
    }
}
