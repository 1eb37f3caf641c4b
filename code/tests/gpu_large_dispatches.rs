//! Tensors that need more than 65,535 workgroups along one axis of the dispatch grid,
//! the most a device guarantees per dimension. The kernels spread them over a second
//! axis; these tests check that every element is still computed.

mod common;

use common::{assert_close, context};
use galaxy::cpu;
use galaxy::gpu::ShaderCompilation;
use galaxy::immediate::ImmediateGpu;
use galaxy::{Tensor2d, Tolerance};

fn immediate() -> ImmediateGpu<'static> {
    ImmediateGpu::new(context(), ShaderCompilation::Cached).with_output_fill(f32::NAN)
}

fn limit() -> usize {
    context().limits().max_compute_workgroups_per_dimension as usize
}

#[test]
fn relu_over_more_elements_than_one_grid_row_covers() {
    // 256 invocations per workgroup: one more workgroup than fits in one dimension.
    let elements = limit() * 256 + 1;
    let input = Tensor2d::random(1, elements, -1.0..=1.0, 1);
    let actual = immediate().relu(&input).unwrap();
    assert_close(
        &actual,
        &cpu::relu(&input),
        Tolerance::EXACT,
        "relu beyond one grid row",
    );
}

#[test]
fn relu_in_place_over_more_elements_than_one_grid_row_covers() {
    let elements = limit() * 256 + 300;
    let mut tensor = Tensor2d::random(elements, 1, -1.0..=1.0, 2);
    let mut expected = tensor.clone();
    cpu::relu_in_place(&mut expected);
    immediate().relu_in_place(&mut tensor).unwrap();
    assert_close(
        &tensor,
        &expected,
        Tolerance::EXACT,
        "relu in place beyond one grid row",
    );
}

#[test]
fn softmax_with_more_rows_than_one_grid_row_covers() {
    // One workgroup per row.
    let rows = limit() + 5;
    let input = Tensor2d::random(rows, 3, -3.0..=3.0, 3);
    let actual = immediate().softmax(&input).unwrap();
    let expected = cpu::softmax(&input).unwrap();
    assert_close(
        &actual,
        &expected,
        Tolerance::new(2e-5, 1e-7),
        "softmax beyond one grid row",
    );
}

#[test]
fn linear_with_more_row_tiles_than_one_grid_axis_covers() {
    // 16 rows per workgroup: one more row tile than fits along y.
    let rows = limit() * 16 + 1;
    let input = Tensor2d::random(rows, 2, -1.0..=1.0, 4);
    let weights = Tensor2d::random(2, 3, -1.0..=1.0, 5);
    let bias = Tensor2d::random(1, 3, -1.0..=1.0, 6);
    let actual = immediate().linear(&input, &weights, &bias).unwrap();
    let expected = cpu::linear_naive(&input, &weights, &bias).unwrap();
    assert_close(
        &actual,
        &expected,
        Tolerance::new(1e-5, 1e-6),
        "linear beyond one grid axis",
    );
}
