//! The int8 product with AVX2 alone.
//!
//! AVX2 has no instruction that multiplies signed bytes by signed bytes into wide sums.
//! `vpmaddubsw` multiplies unsigned by signed bytes, but adds each pair into a 16-bit value
//! that saturates (255 · 127 · 2 does not fit), so it would need care to stay exact.
//! Instead the int8 values are sign-extended to 16 bits when they are packed, and
//! `vpmaddwd` (`_mm256_madd_epi16`) multiplies 16 pairs of 16-bit values and adds each two
//! neighbours into one of 8 `i32` lanes: exact, and 16 products per instruction, twice an
//! AVX2 `f32` fused multiply-add.

use std::arch::x86_64::{
    __m256i, _mm256_add_epi32, _mm256_loadu_si256, _mm256_madd_epi16, _mm256_set1_epi32,
    _mm256_setzero_si256, _mm256_storeu_si256,
};

use super::{pack_activation_tiles, pack_weight_panels};

/// Rows of the tile of sums. AVX2 has 16 registers: 8 sums, 2 of weights, 1 broadcast and
/// 1 product fit.
const TILE_ROWS: usize = 4;
/// Outputs of the tile: two registers of 8 `i32` lanes.
const PANEL: usize = 16;
/// Inputs per `i32` word: two 16-bit values.
const GROUP: usize = 2;
/// Rows whose packed activations stay in the L2 cache while every panel uses them.
const ROW_BLOCK: usize = 64;

/// Two int8 values sign-extended to 16 bits, side by side in one word.
fn sixteen_bit_pair(values: [i8; GROUP]) -> i32 {
    let [low, high] = values.map(|value| value as i16 as u16 as u32);
    (low | high << 16) as i32
}

/// Weights in panels of 16 outputs, two 16-bit inputs per lane.
#[derive(Debug, Clone)]
pub(super) struct PackedWeights {
    inputs: usize,
    outputs: usize,
    panels: Vec<[i32; PANEL]>,
}

impl PackedWeights {
    pub(super) fn new(inputs: usize, outputs: usize, weights: &[i8]) -> PackedWeights {
        PackedWeights {
            inputs,
            outputs,
            panels: pack_weight_panels::<PANEL, GROUP>(inputs, outputs, weights, sixteen_bit_pair),
        }
    }
}

/// `sums = activations · weightsᵀ` for `rows` rows; the caller has checked the lengths.
#[target_feature(enable = "avx2")]
pub(super) fn multiply(weights: &PackedWeights, rows: usize, activations: &[i8], sums: &mut [i32]) {
    let (inputs, outputs) = (weights.inputs, weights.outputs);
    let groups = inputs.div_ceil(GROUP);
    if groups == 0 {
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
            sixteen_bit_pair,
            &mut packed_rows,
        );
        let block_sums = &mut sums[first_row * outputs..][..block_rows * outputs];
        for (panel_index, panel) in weights.panels.chunks_exact(groups).enumerate() {
            let first_output = panel_index * PANEL;
            let columns = PANEL.min(outputs - first_output);
            for first_tile_row in (0..block_rows).step_by(TILE_ROWS) {
                let tile_rows = TILE_ROWS.min(block_rows - first_tile_row);
                let tile = &packed_rows[first_tile_row * groups..][..tile_rows * groups];
                let tile_sums = &mut block_sums[first_tile_row * outputs..][..tile_rows * outputs];
                let place = (outputs, first_output, columns);
                match tile_rows {
                    4 => tile_of_sums::<4>(tile, panel, tile_sums, place),
                    3 => tile_of_sums::<3>(tile, panel, tile_sums, place),
                    2 => tile_of_sums::<2>(tile, panel, tile_sums, place),
                    _ => tile_of_sums::<1>(tile, panel, tile_sums, place),
                }
            }
        }
    }
}

/// `ROWS × 16` sums in `2 · ROWS` registers; each step multiplies one pair of inputs of
/// every row with the same pair of 16 outputs' weights.
#[inline]
#[target_feature(enable = "avx2")]
fn tile_of_sums<const ROWS: usize>(
    tile: &[i32],
    panel: &[[i32; PANEL]],
    output_rows: &mut [i32],
    (outputs, first_output, columns): (usize, usize, usize),
) {
    let mut sums: [[__m256i; 2]; ROWS] = [[_mm256_setzero_si256(); 2]; ROWS];
    let (steps, _) = tile.as_chunks::<ROWS>();
    for (row_words, weight_words) in steps.iter().zip(panel) {
        // SAFETY: `weight_words` is 16 `i32`, 64 bytes: the two unaligned 32-byte loads
        // read its halves.
        let (left, right) = unsafe {
            (
                _mm256_loadu_si256(weight_words.as_ptr().cast()),
                _mm256_loadu_si256(weight_words[8..].as_ptr().cast()),
            )
        };
        for row in 0..ROWS {
            let pair = _mm256_set1_epi32(row_words[row]);
            sums[row][0] = _mm256_add_epi32(sums[row][0], _mm256_madd_epi16(pair, left));
            sums[row][1] = _mm256_add_epi32(sums[row][1], _mm256_madd_epi16(pair, right));
        }
    }
    for (row_sums, output_row) in sums.iter().zip(output_rows.chunks_exact_mut(outputs)) {
        let mut values = [0i32; PANEL];
        // SAFETY: `values` is 16 `i32`, 64 bytes: the stores write its two halves.
        unsafe {
            _mm256_storeu_si256(values.as_mut_ptr().cast(), row_sums[0]);
            _mm256_storeu_si256(values[8..].as_mut_ptr().cast(), row_sums[1]);
        }
        output_row[first_output..first_output + columns].copy_from_slice(&values[..columns]);
    }
}
