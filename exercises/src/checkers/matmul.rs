//! Hand-in: matrix multiplication. Any correct kernel passes; its speed is reported for
//! interest and never graded.

use galaxy::gpu::GpuContext;
use galaxy::{Tensor2d, Tolerance};

use crate::checkers::common::{KernelUnderTest, load_or_fail};
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

/// (rows, inner, columns): single elements, single rows and columns, an exact tile, odd
/// sizes, and sizes spanning many workgroups with ragged edges.
pub const CASES: [(usize, usize, usize); 8] = [
    (1, 1, 1),
    (1, 7, 3),
    (7, 1, 5),
    (16, 16, 16),
    (17, 33, 9),
    (33, 257, 65),
    (64, 100, 48),
    (129, 70, 200),
];

/// The size the speed is measured on.
pub const TIMED_SIZE: usize = 256;

/// Sums of up to a few hundred products: the absolute part covers results near zero.
pub const TOLERANCE: Tolerance = Tolerance::new(1e-4, 1e-4);

/// The CPU reference, accumulated in f64.
pub fn matrix_product(a: &Tensor2d, b: &Tensor2d) -> Tensor2d {
    let (rows, inner, columns) = (a.rows(), a.columns(), b.columns());
    let mut output = Tensor2d::zeros(rows, columns);
    for row in 0..rows {
        for column in 0..columns {
            let total: f64 = (0..inner)
                .map(|k| f64::from(a.get(row, k)) * f64::from(b.get(k, column)))
                .sum();
            output.set(row, column, total as f32);
        }
    }
    output
}

/// The buffers for `a · b`, in binding order, with the output poisoned.
pub fn buffers(a: &Tensor2d, b: &Tensor2d) -> [BufferData; 4] {
    [
        BufferData::floats(a.as_slice()),
        BufferData::floats(b.as_slice()),
        BufferData::poisoned_floats(a.rows() * b.columns()),
        BufferData::uniform(&[a.rows() as u32, a.columns() as u32, b.columns() as u32]),
    ]
}

/// The first `rows × columns` values as a tensor.
pub fn tensor_of(values: &[f32], rows: usize, columns: usize) -> Tensor2d {
    Tensor2d::from_vec(rows, columns, values[..rows * columns].to_vec())
        .expect("the slice has exactly rows × columns values")
}

pub fn check(submission: &Submission) -> Vec<PartReport> {
    let part_name = "GPU kernel";
    let (context, kernel) = match load_or_fail(submission.wgsl.as_deref(), &BINDINGS, part_name) {
        Ok(loaded) => loaded,
        Err(failed) => return vec![failed],
    };
    let mut part = PartReport::new(part_name);
    for (seed, &(rows, inner, columns)) in CASES.iter().enumerate() {
        let seed = 200 + seed as u64;
        let a = Tensor2d::random(rows, inner, -1.0..=1.0, 2 * seed);
        let b = Tensor2d::random(inner, columns, -1.0..=1.0, 2 * seed + 1);
        let expected = matrix_product(&a, &b);
        let grid = kernel.grid_over(rows, columns);
        let verdict = match kernel.run(context, &buffers(&a, &b), grid) {
            Ok(outputs) => compare(
                &tensor_of(&to_floats(&outputs[0]), rows, columns),
                &expected,
                TOLERANCE,
            ),
            Err(error) => Verdict::Error(error.to_string()),
        };
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
    vec![part]
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
        let compiled = crate::kernel_run::compile(context, &shader, &BINDINGS).unwrap();
        let kernel = KernelUnderTest {
            shader,
            kernel: compiled,
        };
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
            TOLERANCE,
        );
        assert!(verdict.passed(), "{verdict}");
    }
}
