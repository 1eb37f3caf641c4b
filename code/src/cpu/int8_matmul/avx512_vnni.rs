//! The int8 product with AVX-512 VNNI ("vector neural network instructions").
//!
//! `vpdpbusd` (`_mm512_dpbusd_epi32`) treats each of its 16 `i32` lanes as four bytes: it
//! multiplies the four **unsigned** bytes of one operand with the four **signed** bytes of
//! the other, adds the four products and adds the result to the lane. That is 64 products
//! in one instruction, against 16 for an AVX-512 `f32` fused multiply-add.
//!
//! Both our operands are signed, so the activations are shifted by +128 into `0..=255`
//! (flipping their top bit does it). The sums then hold `Σ (x + 128) · w = Σ x · w + 128 · Σ w`,
//! and `128 · Σ w`, which depends on the output only, is subtracted once at the end: the
//! packed weights keep it per output.
//!
//! Shifted sums can pass `i32::MAX` (255 · 128 per product); `vpdpbusd` and the final
//! subtraction wrap around modulo 2³², and because the true result fits in an `i32` (see
//! [`super::MAXIMUM_INPUTS`]), the wrapped result is exactly the true one.

use std::arch::x86_64::{
    __m512i, _mm512_dpbusd_epi32, _mm512_loadu_si512, _mm512_set1_epi32, _mm512_setzero_si512,
    _mm512_storeu_si512, _mm512_sub_epi32,
};

use super::{pack_activation_tiles, pack_weight_panels};

// ANCHOR: tile
/// Rows of the tile of sums the micro-kernel keeps in registers.
const TILE_ROWS: usize = 8;
/// Outputs of the tile: two registers of 16 `i32` lanes.
const PANEL: usize = 32;
/// Inputs per `i32` word: `vpdpbusd` multiplies four bytes per lane.
const GROUP: usize = 4;
/// Rows whose packed activations are reused across all the panels of weights while they
/// are in the L2 cache (at 2048 inputs, 128 rows take 256 KiB).
const ROW_BLOCK: usize = 128;
// ANCHOR_END: tile

/// Four activations as the unsigned bytes `vpdpbusd` wants: `x + 128`, by flipping the top
/// bit of each byte.
fn shifted_word(values: [i8; GROUP]) -> i32 {
    i32::from_le_bytes(values.map(|value| value as u8 ^ 0x80))
}

/// Four weights as they are, signed bytes.
fn weight_word(values: [i8; GROUP]) -> i32 {
    i32::from_le_bytes(values.map(|value| value as u8))
}

/// Weights in panels of 32 outputs, four inputs per lane, with each output's correction.
#[derive(Debug, Clone)]
pub(super) struct PackedWeights {
    inputs: usize,
    outputs: usize,
    panels: Vec<[i32; PANEL]>,
    /// `128 · Σₖ w[o][k]` for each output, padded to whole panels. At most 128 · 128 ·
    /// (2¹⁷ − 1) in magnitude: it fits an `i32`.
    corrections: Vec<[i32; PANEL]>,
}

impl PackedWeights {
    pub(super) fn new(inputs: usize, outputs: usize, weights: &[i8]) -> PackedWeights {
        let mut corrections = vec![[0; PANEL]; outputs.div_ceil(PANEL)];
        for output in 0..outputs {
            let row = &weights[output * inputs..(output + 1) * inputs];
            let sum: i32 = row.iter().map(|&weight| weight as i32).sum();
            corrections[output / PANEL][output % PANEL] = 128 * sum;
        }
        PackedWeights {
            inputs,
            outputs,
            panels: pack_weight_panels::<PANEL, GROUP>(inputs, outputs, weights, weight_word),
            corrections,
        }
    }
}

/// `sums = activations · weightsᵀ` for `rows` rows; the caller has checked the lengths.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
pub(super) fn multiply(weights: &PackedWeights, rows: usize, activations: &[i8], sums: &mut [i32]) {
    let (inputs, outputs) = (weights.inputs, weights.outputs);
    let groups = inputs.div_ceil(GROUP);
    if groups == 0 {
        // No inputs: every sum is empty.
        sums.fill(0);
        return;
    }
    let mut packed_rows = Vec::new();
    for first_row in (0..rows).step_by(ROW_BLOCK) {
        let block_rows = ROW_BLOCK.min(rows - first_row);
        let block_activations = &activations[first_row * inputs..][..block_rows * inputs];
        pack_activation_tiles::<GROUP>(
            block_rows,
            inputs,
            block_activations,
            TILE_ROWS,
            shifted_word,
            &mut packed_rows,
        );
        let block_sums = &mut sums[first_row * outputs..][..block_rows * outputs];
        let panels = weights.panels.chunks_exact(groups);
        for (panel_index, (panel, correction)) in panels.zip(&weights.corrections).enumerate() {
            let first_output = panel_index * PANEL;
            let columns = PANEL.min(outputs - first_output);
            for first_tile_row in (0..block_rows).step_by(TILE_ROWS) {
                let tile_rows = TILE_ROWS.min(block_rows - first_tile_row);
                let tile = &packed_rows[first_tile_row * groups..][..tile_rows * groups];
                let tile_sums = &mut block_sums[first_tile_row * outputs..][..tile_rows * outputs];
                let output = TileOutput {
                    sums: tile_sums,
                    outputs,
                    first_output,
                    columns,
                };
                // One compiled micro-kernel per tile height, so that the last tile of a
                // block, with fewer rows, does no work for rows that do not exist.
                match tile_rows {
                    8 => tile_of_sums::<8>(tile, &panel[..groups], correction, output),
                    7 => tile_of_sums::<7>(tile, &panel[..groups], correction, output),
                    6 => tile_of_sums::<6>(tile, &panel[..groups], correction, output),
                    5 => tile_of_sums::<5>(tile, &panel[..groups], correction, output),
                    4 => tile_of_sums::<4>(tile, &panel[..groups], correction, output),
                    3 => tile_of_sums::<3>(tile, &panel[..groups], correction, output),
                    2 => tile_of_sums::<2>(tile, &panel[..groups], correction, output),
                    _ => tile_of_sums::<1>(tile, &panel[..groups], correction, output),
                }
            }
        }
    }
}

/// Where a tile's sums go: `ROWS` whole rows of `outputs` sums, of which the tile fills
/// `columns` starting at `first_output`.
struct TileOutput<'a> {
    sums: &'a mut [i32],
    outputs: usize,
    first_output: usize,
    columns: usize,
}

// ANCHOR: micro_kernel
/// The micro-kernel: `ROWS × 32` sums in `2 · ROWS` registers. Each step reads one group of
/// four inputs: two registers of weights (32 outputs × 4 inputs) and one word per row,
/// broadcast to all 16 lanes, and does `2 · ROWS` instructions of 64 products each.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
fn tile_of_sums<const ROWS: usize>(
    tile: &[i32],
    panel: &[[i32; PANEL]],
    correction: &[i32; PANEL],
    output: TileOutput<'_>,
) {
    let mut sums = [[_mm512_setzero_si512(); 2]; ROWS];
    let (steps, _) = tile.as_chunks::<ROWS>();
    for (row_words, weight_words) in steps.iter().zip(panel) {
        // SAFETY: `weight_words` is an array of 32 `i32`, 128 bytes: the two unaligned
        // 64-byte loads read its first and second half.
        let (left, right) = unsafe {
            (
                _mm512_loadu_si512(weight_words.as_ptr().cast()),
                _mm512_loadu_si512(weight_words[16..].as_ptr().cast()),
            )
        };
        for row in 0..ROWS {
            let activations = _mm512_set1_epi32(row_words[row]);
            sums[row][0] = _mm512_dpbusd_epi32(sums[row][0], activations, left);
            sums[row][1] = _mm512_dpbusd_epi32(sums[row][1], activations, right);
        }
    }
    store_tile(&sums, correction, output);
}
// ANCHOR_END: micro_kernel

/// Subtracts each output's `128 · Σ w` and writes the columns that exist.
#[inline]
#[target_feature(enable = "avx512f")]
fn store_tile<const ROWS: usize>(
    sums: &[[__m512i; 2]; ROWS],
    correction: &[i32; PANEL],
    output: TileOutput<'_>,
) {
    let TileOutput {
        sums: output_rows,
        outputs,
        first_output,
        columns,
    } = output;
    // SAFETY: `correction` is 32 `i32`, 128 bytes: the loads read its two halves.
    let (left, right) = unsafe {
        (
            _mm512_loadu_si512(correction.as_ptr().cast()),
            _mm512_loadu_si512(correction[16..].as_ptr().cast()),
        )
    };
    for (row_sums, output_row) in sums.iter().zip(output_rows.chunks_exact_mut(outputs)) {
        let mut values = [0i32; PANEL];
        // SAFETY: `values` is 32 `i32`, 128 bytes: the stores write its two halves.
        unsafe {
            _mm512_storeu_si512(
                values.as_mut_ptr().cast(),
                _mm512_sub_epi32(row_sums[0], left),
            );
            _mm512_storeu_si512(
                values[16..].as_mut_ptr().cast(),
                _mm512_sub_epi32(row_sums[1], right),
            );
        }
        output_row[first_output..first_output + columns].copy_from_slice(&values[..columns]);
    }
}
