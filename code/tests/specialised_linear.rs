//! The linear template, preprocessed into each of its variants: the text validates, and
//! the kernel computes what the CPU's textbook loop computes, element by element.

mod common;

use common::{assert_close, context};
use galaxy::compiler::specialised_linear::{
    SpecialisationError, SpecialisedLinear, specialised_linear_source,
};
use galaxy::cpu;
use galaxy::gpu::{GpuTensor, Readback};
use galaxy::{Tensor2d, Tolerance};

/// Every tile edge and both ways of looping.
const CONFIGURATIONS: [(u32, bool); 4] = [(8, false), (8, true), (16, false), (16, true)];

/// (rows, inner, columns): single elements, odd sizes, non-square, and sizes that are
/// not a multiple of either tile edge and need several tiles in every direction.
const SHAPES: [(usize, usize, usize); 8] = [
    (1, 1, 1),
    (1, 5, 1),
    (3, 1, 7),
    (7, 5, 3),
    (8, 16, 8),
    (17, 33, 9),
    (40, 7, 70),
    (65, 100, 33),
];

/// Sums of up to 100 products, added in another order than on the CPU.
fn tolerance(inner: usize) -> Tolerance {
    Tolerance::new(1e-4, 1e-6 * inner as f32)
}

#[test]
fn every_specialisation_validates_with_naga() {
    for (workgroup_size, use_workgroup_memory) in CONFIGURATIONS {
        let source = specialised_linear_source(workgroup_size, use_workgroup_memory).unwrap();
        let what = format!("WORKGROUP_SIZE {workgroup_size}, tiled {use_workgroup_memory}");
        let module = naga::front::wgsl::parse_str(&source)
            .unwrap_or_else(|error| panic!("{what}: {}", error.emit_to_string(&source)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)
        .unwrap_or_else(|error| panic!("{what}: {}", error.emit_to_string(&source)));
    }
}

#[test]
fn every_specialisation_matches_the_cpu() {
    let context = context();
    for (workgroup_size, use_workgroup_memory) in CONFIGURATIONS {
        let kernel =
            SpecialisedLinear::compile(context, workgroup_size, use_workgroup_memory).unwrap();
        for (index, (rows, inner, columns)) in SHAPES.into_iter().enumerate() {
            let seed = 10 * index as u64;
            let input = Tensor2d::random(rows, inner, -1.0..=1.0, seed);
            let weights = Tensor2d::random(inner, columns, -1.0..=1.0, seed + 1);
            let bias = Tensor2d::random(1, columns, -1.0..=1.0, seed + 2);
            let upload = |tensor| GpuTensor::upload(context, tensor, Readback::Never).unwrap();
            let output =
                GpuTensor::uninitialized(context, rows, columns, Readback::Needed).unwrap();
            // An element the kernel forgets to write stays NaN and fails the comparison.
            output.fill(context, f32::NAN);
            let mut encoder = context
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
            kernel
                .record(
                    context,
                    &mut encoder,
                    &upload(&input),
                    &upload(&weights),
                    &upload(&bias),
                    &output,
                )
                .unwrap();
            context.queue().submit([encoder.finish()]);
            let actual = output.download(context).unwrap();
            let expected = cpu::linear_naive(&input, &weights, &bias).unwrap();
            let what = format!(
                "WORKGROUP_SIZE {workgroup_size}, tiled {use_workgroup_memory}, \
                 {rows}×{inner} · {inner}×{columns}"
            );
            assert_close(&actual, &expected, tolerance(inner), &what);
        }
    }
}

#[test]
fn an_impossible_workgroup_is_a_typed_error() {
    let context = context();
    for workgroup_size in [0, 1024] {
        let error = SpecialisedLinear::compile(context, workgroup_size, true)
            .err()
            .expect("no kernel for an impossible workgroup");
        assert!(
            matches!(error, SpecialisationError::WorkgroupSize { .. }),
            "{workgroup_size}: {error}"
        );
    }
}

#[test]
fn mismatched_tensors_are_a_typed_error() {
    let context = context();
    let kernel = SpecialisedLinear::compile(context, 8, false).unwrap();
    let tensor =
        |rows, columns| GpuTensor::uninitialized(context, rows, columns, Readback::Never).unwrap();
    let mut encoder = context
        .device()
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    let (input, weights, bias) = (tensor(2, 3), tensor(3, 4), tensor(1, 4));
    assert!(
        kernel
            .record(
                context,
                &mut encoder,
                &input,
                &weights,
                &bias,
                &tensor(2, 5)
            )
            .is_err()
    );
    assert!(
        kernel
            .record(
                context,
                &mut encoder,
                &input,
                &tensor(4, 4),
                &bias,
                &tensor(2, 4)
            )
            .is_err()
    );
}
