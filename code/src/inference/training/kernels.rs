//! The inner loops of a training step (three matrix products and the ReLU's gradient mask),
//! in the versions that module 4's use case "training a neural network" measures one after
//! another.
//!
//! A step needs, for every layer, the forward product `input · weights`, the weight gradient
//! `inputᵀ · ∂output` and the input gradient `∂output · weightsᵀ`. Every version below
//! computes each output element as `0 + p₀ + p₁ + …`, its products added one at a time in
//! the order of the inner dimension, with a separate multiply and add (Rust never fuses
//! them into one instruction unless asked). So every version gives the same bits, and a
//! faster version trains exactly the same network from the same seed: the test
//! `every_version_gives_the_same_bits` checks it.

use crate::tensor::Tensor2d;

// ANCHOR: kernels
/// Which code runs the inner loops of training, the matrix products and the ReLU's gradient
/// mask: each version is one step of the optimisation, and each gives the same bits as the
/// first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TrainingKernels {
    /// Plain loops. The input gradient is a dot product per output element, a chain of
    /// additions that each wait for the one before.
    Naive,
    /// The input gradient from a transposed copy of the weights, with the loop order of
    /// the other two products: every addition of the inner loop goes to a different output,
    /// so the compiler runs several at once in one vector instruction.
    DotProductFree,
    /// All three products in small tiles of sums kept in registers (4 × 8), from operands
    /// copied once into the order the tile reads them.
    RegisterBlocked,
    /// As `RegisterBlocked`, compiled for AVX2 (8 floats per instruction, 4 × 16 tiles)
    /// where the processor has it.
    RegisterBlockedAvx2,
    /// As `RegisterBlockedAvx2`, and the ReLU's gradient mask without a branch: the
    /// mask depends on the data, so a branch per value is mispredicted about as often as
    /// a coin toss; a select compiles to a vector blend instead.
    BranchFreeMask,
}
// ANCHOR_END: kernels

impl TrainingKernels {
    /// Every version, in the order of the optimisation.
    pub const ALL: [TrainingKernels; 5] = [
        TrainingKernels::Naive,
        TrainingKernels::DotProductFree,
        TrainingKernels::RegisterBlocked,
        TrainingKernels::RegisterBlockedAvx2,
        TrainingKernels::BranchFreeMask,
    ];

    /// The fastest version this processor runs; training uses it.
    pub fn fastest() -> TrainingKernels {
        TrainingKernels::BranchFreeMask
    }

    // ANCHOR: relu_mask
    /// Zeroes `gradient` wherever the ReLU's output `activation` is zero: the ReLU let
    /// nothing through there, so no gradient flows back.
    pub fn mask_by_relu(self, gradient: &mut [f32], activation: &[f32]) {
        if self == TrainingKernels::BranchFreeMask {
            for (value, &active) in gradient.iter_mut().zip(activation) {
                *value = if active > 0.0 { *value } else { 0.0 };
            }
        } else {
            for (value, &active) in gradient.iter_mut().zip(activation) {
                if active <= 0.0 {
                    *value = 0.0;
                }
            }
        }
    }
    // ANCHOR_END: relu_mask

    /// `left · right`.
    pub fn multiply(self, left: &Tensor2d, right: &Tensor2d) -> Tensor2d {
        match self {
            TrainingKernels::Naive | TrainingKernels::DotProductFree => multiply_naive(left, right),
            _ => self.blocked(left, right, Layout::AsIs),
        }
    }

    /// `leftᵀ · right`: the weight gradient, `inputᵀ · ∂output`.
    pub fn multiply_transposed_left(self, left: &Tensor2d, right: &Tensor2d) -> Tensor2d {
        match self {
            TrainingKernels::Naive | TrainingKernels::DotProductFree => {
                multiply_transposed_left_naive(left, right)
            }
            _ => self.blocked(left, right, Layout::LeftTransposed),
        }
    }

    /// `left · rightᵀ`: the input gradient, `∂output · weightsᵀ`.
    pub fn multiply_transposed_right(self, left: &Tensor2d, right: &Tensor2d) -> Tensor2d {
        match self {
            TrainingKernels::Naive => multiply_transposed_right_naive(left, right),
            TrainingKernels::DotProductFree => multiply_naive(left, &right.transposed()),
            _ => self.blocked(left, right, Layout::RightTransposed),
        }
    }

    fn blocked(self, left: &Tensor2d, right: &Tensor2d, layout: Layout) -> Tensor2d {
        #[cfg(target_arch = "x86_64")]
        if self >= TrainingKernels::RegisterBlockedAvx2
            && std::arch::is_x86_feature_detected!("avx2")
        {
            // SAFETY: the processor has AVX2, checked on the line above.
            return unsafe { multiply_tiles_avx2(left, right, layout) };
        }
        multiply_tiles::<4, 8>(left, right, layout)
    }
}

// ANCHOR: naive
/// `left · right`: for each row, each input value scales a row of `right` into the output
/// row (the loop order of module 1's `linear_loop_order`).
fn multiply_naive(left: &Tensor2d, right: &Tensor2d) -> Tensor2d {
    let mut output = Tensor2d::zeros(left.rows(), right.columns());
    for row in 0..left.rows() {
        let output_row = output.row_mut(row);
        for (inner, &scale) in left.row(row).iter().enumerate() {
            for (out, &value) in output_row.iter_mut().zip(right.row(inner)) {
                *out += scale * value;
            }
        }
    }
    output
}

/// `leftᵀ · right`, without building `leftᵀ`.
fn multiply_transposed_left_naive(left: &Tensor2d, right: &Tensor2d) -> Tensor2d {
    let mut output = Tensor2d::zeros(left.columns(), right.columns());
    for inner in 0..left.rows() {
        for (row, &scale) in left.row(inner).iter().enumerate() {
            for (out, &value) in output.row_mut(row).iter_mut().zip(right.row(inner)) {
                *out += scale * value;
            }
        }
    }
    output
}

/// `left · rightᵀ`, without building `rightᵀ`: one dot product per output element.
fn multiply_transposed_right_naive(left: &Tensor2d, right: &Tensor2d) -> Tensor2d {
    let mut output = Tensor2d::zeros(left.rows(), right.rows());
    for row in 0..left.rows() {
        for column in 0..right.rows() {
            let mut sum = 0.0;
            for (&a, &b) in left.row(row).iter().zip(right.row(column)) {
                sum += a * b;
            }
            output.set(row, column, sum);
        }
    }
    output
}
// ANCHOR_END: naive

/// One operand of a product, for the tiles: `left` in panels of `TILE_ROWS` rows, `right`
/// in panels of `TILE_COLUMNS` columns, each panel stored step by step along the inner
/// dimension, so that the tile reads both front to back. Panels past the edge of the matrix
/// are padded with zeros, so the tile never checks for edges. Copying costs one pass over
/// the operand, far less than the product, which reads every panel many times.
struct Panels {
    values: Vec<f32>,
    /// Rows of `left` or columns of `right` (without the padding).
    count: usize,
    inner: usize,
}

impl Panels {
    /// `tensor` (or its transpose) as panels of `width` rows: panel `p` holds, for each
    /// step of the inner dimension, the values of rows `p · width …` at that step.
    fn of_rows(tensor: &Tensor2d, transposed: bool, width: usize) -> Panels {
        let (count, inner) = if transposed {
            (tensor.columns(), tensor.rows())
        } else {
            tensor.shape()
        };
        let mut values = vec![0.0; count.div_ceil(width) * inner * width];
        let source = tensor.as_slice();
        for (panel, block) in values.chunks_exact_mut(inner * width).enumerate() {
            let first = panel * width;
            let lanes = width.min(count - first);
            for (step, destination) in block.chunks_exact_mut(width).enumerate() {
                if transposed {
                    // The rows of the transpose are columns of `tensor`: at each step, the
                    // panel's values lie side by side in row `step`.
                    destination[..lanes].copy_from_slice(&source[step * count + first..][..lanes]);
                } else {
                    for (lane, value) in destination[..lanes].iter_mut().enumerate() {
                        *value = source[(first + lane) * inner + step];
                    }
                }
            }
        }
        Panels {
            values,
            count,
            inner,
        }
    }

    fn panel(&self, index: usize, width: usize) -> &[f32] {
        &self.values[index * self.inner * width..(index + 1) * self.inner * width]
    }
}

/// Which operand of a product is stored transposed: the weight gradient reads the input
/// by columns, the input gradient reads the weights by rows.
#[derive(Clone, Copy)]
enum Layout {
    LeftTransposed,
    AsIs,
    RightTransposed,
}

// ANCHOR: tile
/// The sums of one `TILE_ROWS × TILE_COLUMNS` tile of the output. They live in a local
/// array of constant size, which the compiler keeps in vector registers for the whole loop:
/// each step loads `TILE_COLUMNS` values of `right` once and uses them for `TILE_ROWS`
/// rows, and nothing is stored until the sums are complete. Every sum still adds its
/// products one at a time, in order, with a multiply and then an add.
#[inline(always)]
fn tile<const TILE_ROWS: usize, const TILE_COLUMNS: usize>(
    left_panel: &[f32],
    right_panel: &[f32],
) -> [[f32; TILE_COLUMNS]; TILE_ROWS] {
    let mut sums = [[0.0f32; TILE_COLUMNS]; TILE_ROWS];
    let (left_steps, _) = left_panel.as_chunks::<TILE_ROWS>();
    let (right_steps, _) = right_panel.as_chunks::<TILE_COLUMNS>();
    for (left_values, right_values) in left_steps.iter().zip(right_steps) {
        for row in 0..TILE_ROWS {
            for column in 0..TILE_COLUMNS {
                sums[row][column] += left_values[row] * right_values[column];
            }
        }
    }
    sums
}
// ANCHOR_END: tile

/// The product in tiles, after copying both operands into panels.
#[inline(always)]
fn multiply_tiles<const TILE_ROWS: usize, const TILE_COLUMNS: usize>(
    left: &Tensor2d,
    right: &Tensor2d,
    layout: Layout,
) -> Tensor2d {
    let left = Panels::of_rows(left, matches!(layout, Layout::LeftTransposed), TILE_ROWS);
    // The columns of `right` are the rows of its transpose.
    let right = Panels::of_rows(
        right,
        !matches!(layout, Layout::RightTransposed),
        TILE_COLUMNS,
    );
    let (rows, columns) = (left.count, right.count);
    let mut output = Tensor2d::zeros(rows, columns);
    let out = output.as_mut_slice();
    for row_panel in 0..rows.div_ceil(TILE_ROWS) {
        let left_panel = left.panel(row_panel, TILE_ROWS);
        for column_panel in 0..columns.div_ceil(TILE_COLUMNS) {
            let sums = tile::<TILE_ROWS, TILE_COLUMNS>(
                left_panel,
                right.panel(column_panel, TILE_COLUMNS),
            );
            // Store only the rows and columns that exist.
            let first_column = column_panel * TILE_COLUMNS;
            let width = TILE_COLUMNS.min(columns - first_column);
            for (tile_row, row_sums) in sums.iter().enumerate() {
                let row = row_panel * TILE_ROWS + tile_row;
                if row < rows {
                    out[row * columns + first_column..][..width]
                        .copy_from_slice(&row_sums[..width]);
                }
            }
        }
    }
    output
}

/// The same tiles compiled with AVX2: 8 floats per instruction and 16 vector registers, so
/// a 4 × 16 tile's sums take 8 of them. (Still a multiply and an add, not a fused
/// multiply-add, so that the bits stay those of the other versions.)
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn multiply_tiles_avx2(left: &Tensor2d, right: &Tensor2d, layout: Layout) -> Tensor2d {
    multiply_tiles::<4, 16>(left, right, layout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_version_gives_the_same_bits() {
        // Shapes of the digits network (batch 32, widths 64, 64, 64, 10), a short last
        // batch, and odd shapes that leave partial tiles on every edge.
        let shapes = [
            (32, 64, 64),
            (30, 64, 10),
            (32, 10, 64),
            (1, 1, 1),
            (5, 7, 3),
            (13, 33, 17),
            (64, 30, 9),
        ];
        for (seed, &(rows, inner, columns)) in shapes.iter().enumerate() {
            let seed = seed as u64;
            let left = Tensor2d::random(rows, inner, -1.0..=1.0, seed);
            let right = Tensor2d::random(inner, columns, -1.0..=1.0, seed + 100);
            let left_transposed = left.transposed();
            let right_transposed = right.transposed();
            let expected = multiply_naive(&left, &right);
            // The naive versions of the other two products, as references.
            assert_eq!(
                multiply_transposed_left_naive(&left_transposed, &right),
                expected
            );
            assert_eq!(
                multiply_transposed_right_naive(&left, &right_transposed),
                expected
            );
            for kernels in TrainingKernels::ALL {
                let shape = format!("{kernels:?} at {rows}×{inner}×{columns}");
                assert_eq!(kernels.multiply(&left, &right), expected, "{shape}");
                assert_eq!(
                    kernels.multiply_transposed_left(&left_transposed, &right),
                    expected,
                    "{shape}, left transposed"
                );
                assert_eq!(
                    kernels.multiply_transposed_right(&left, &right_transposed),
                    expected,
                    "{shape}, right transposed"
                );
            }
        }
    }

    #[test]
    fn every_mask_zeroes_exactly_where_the_relu_blocked() {
        let activation = Tensor2d::random(9, 13, -1.0..=1.0, 5)
            .as_slice()
            .iter()
            .map(|value| value.max(0.0))
            .collect::<Vec<_>>();
        let gradient = Tensor2d::random(9, 13, -1.0..=1.0, 6).as_slice().to_vec();
        assert!(activation.contains(&0.0) && activation.iter().any(|&value| value > 0.0));
        for kernels in TrainingKernels::ALL {
            let mut masked = gradient.clone();
            kernels.mask_by_relu(&mut masked, &activation);
            for ((&result, &original), &active) in masked.iter().zip(&gradient).zip(&activation) {
                let expected = if active > 0.0 { original } else { 0.0 };
                assert_eq!(result.to_bits(), expected.to_bits(), "{kernels:?}");
            }
        }
    }

    #[test]
    fn products_are_the_sums_they_claim_to_be() {
        // A small product checked against numbers worked out by hand, so that the versions
        // agreeing with each other cannot hide a shared mistake.
        let left = Tensor2d::from_vec(2, 3, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        let right = Tensor2d::from_vec(3, 2, vec![7.0, 8.0, 9.0, 10.0, 11.0, 12.0]).unwrap();
        let expected = Tensor2d::from_vec(2, 2, vec![58.0, 64.0, 139.0, 154.0]).unwrap();
        for kernels in TrainingKernels::ALL {
            assert_eq!(kernels.multiply(&left, &right), expected, "{kernels:?}");
        }
    }
}
