//! The AVX-512 micro-kernel written with the vector instructions themselves, reading its
//! input values where they are instead of from a packed copy.
//!
//! The generic kernel of the parent module packs every tile of inputs before using it: the
//! `TILE_ROWS` values of each step side by side, so that the micro-kernel reads one
//! stream. Packing pays when a tile of inputs is read by many panels of weights, but the
//! copy itself is not free: one load and one store per value, with the transposition
//! that makes it hard to vectorise. On the 2-core EPYC it took a quarter of the time of a
//! network 32 wide and about 4 % of one 256 wide.
//!
//! This kernel skips the copy. A step broadcasts one value from each of the 12 input
//! rows of the tile, each row read front to back: twelve streams of consecutive floats,
//! which the hardware prefetcher follows and which stay in L1 while the tile is
//! multiplied with a panel. This is what ONNX Runtime's own single-precision kernel (in
//! its MLAS library) does on AVX-512: weights packed, inputs read in place.
//!
//! The instructions are written out (`_mm512_set1_ps` to broadcast, `_mm512_fmadd_ps` to
//! multiply and add) rather than left to the optimiser: given the same loop over twelve
//! rows in plain Rust, it vectorised the wrong way, across the rows, with gather
//! instructions that ran slower than the packing they replaced.

use std::arch::x86_64::{
    __m512, _MM_HINT_T0, _mm_prefetch, _mm512_fmadd_ps, _mm512_loadu_ps, _mm512_set1_ps,
    _mm512_setzero_ps, _mm512_storeu_ps,
};

use super::{
    AVX512_TILE_COLUMNS, AVX512_TILE_ROWS, INNER_BLOCK, PackedWeights, RowBlock, TileEpilogue,
    TileOfOutput, store_tile,
};

/// Floats in one AVX-512 register.
const LANES: usize = 16;

// ANCHOR: prefetch_steps
/// How many steps ahead the micro-kernel asks for the weights it will need (16 steps of
/// 32 floats: 2 KiB ahead).
///
/// In a network, each layer's weights arrive from L3 or from memory while its first block
/// of rows is computed, and the hardware's own prefetchers evidently do not run far enough
/// ahead to hide that wait. Asking for them explicitly did: on the 2-core Xeon the
/// standard workload ran 3–10 % faster at sizes 64 to 1024 (1024 × 64: 484–503 ms against
/// 515–540; 256 × 64: 7.5–7.9 against 8.4–8.8 ms, three interleaved runs each). 8, 32 and
/// 128 steps ahead gained less, 64 no more; a matrix product alone, whose weights stay in
/// the caches from one call to the next, did not change measurably
/// (figures/data/cpu-anchors-xeon-2026-11-25/split-trial/probes.txt).
const PREFETCH_STEPS: usize = 16;
// ANCHOR_END: prefetch_steps
/// Registers of sums per row of the tile: 32 columns are two registers.
const REGISTERS_PER_ROW: usize = AVX512_TILE_COLUMNS / LANES;

// ANCHOR: rows_collide_in_l1
/// Whether the rows of a tile, `inner_size` floats apart, would all land in the same few
/// sets of the L1 cache, so that reading them in place keeps evicting them.
///
/// An x86 L1 data cache picks the set of a 64-byte line from the address bits just above
/// the line offset, and its sets span 4 KiB (64 sets of 64 bytes, 8 ways in 32 KiB or 12
/// in 48 KiB). Rows 1024 floats apart (or any multiple) are exactly 4 KiB apart: all 12
/// rows of a tile compete for the ways of one set, more than it has, and every step
/// misses. On one core of the 2-core EPYC, reading in place without the copy reached 90
/// GFLOP/s at 1024³ against 101 for the packed kernel; at 1000³, where the rows no longer
/// line up, the two were even (100 and 99), and with the copy 1024³ gave 103 against 101
/// (figures/data/cpu-anchors-epyc-2026-11-25/probes.txt).
fn rows_collide_in_l1(inner_size: usize) -> bool {
    const SET_SPAN_FLOATS: usize = 4096 / size_of::<f32>();
    inner_size >= SET_SPAN_FLOATS && inner_size.is_multiple_of(SET_SPAN_FLOATS)
}
// ANCHOR_END: rows_collide_in_l1

/// Rows of a half tile: a tile with this many rows or fewer left runs the kernel for 6
/// rows, at half the cost of a whole one. Threads can then share the rows in steps of 6
/// (see `MicroKernel::task_rows`) without one of them computing a mostly empty tile.
pub(super) const HALF_TILE_ROWS: usize = AVX512_TILE_ROWS / 2;

/// What a partial tile reads for the rows past the last one: their sums are computed and
/// thrown away, which costs less than a second version of the kernel for short tiles.
static ZEROS: [f32; INNER_BLOCK] = [0.0; INNER_BLOCK];

// ANCHOR: tile_sums
/// The sums of one tile: `ROWS` rows of inputs (each at least `depth` values long) times
/// one packed panel of weights (`depth` steps of 32 weights), kept in `REGISTERS · ROWS`
/// registers (24 for a whole tile of 12 rows and 32 columns). With `REGISTERS = 1`, only
/// the first 16 columns of the panel are computed (the others come back as zeros).
#[target_feature(enable = "avx512f")]
fn tile_sums<const ROWS: usize, const REGISTERS: usize>(
    input_rows: &[&[f32]; ROWS],
    weight_panel: &[f32],
) -> [[f32; AVX512_TILE_COLUMNS]; ROWS] {
    // Checked when the function is compiled for each `REGISTERS`: the loads and stores
    // below stay inside a row of the panel and of the tile.
    const { assert!(REGISTERS <= REGISTERS_PER_ROW) };
    let depth = weight_panel.len() / AVX512_TILE_COLUMNS;
    // Checked once, here, so that the loop can read without a check per value.
    assert!(input_rows.iter().all(|row| row.len() >= depth));
    let rows = input_rows.map(|row| row.as_ptr());
    let mut sums = [[_mm512_setzero_ps(); REGISTERS]; ROWS];
    for (step, weight_row) in weight_panel.chunks_exact(AVX512_TILE_COLUMNS).enumerate() {
        // Ask for the weights PREFETCH_STEPS steps ahead (two cache lines) now, so that
        // they are in L1 when their step comes. A prefetch never faults, so the addresses
        // past the end of the panel in its last steps are harmless; `wrapping_add` keeps
        // computing them free of undefined behaviour.
        let ahead = weight_row
            .as_ptr()
            .wrapping_add(PREFETCH_STEPS * AVX512_TILE_COLUMNS);
        _mm_prefetch::<_MM_HINT_T0>(ahead.cast());
        _mm_prefetch::<_MM_HINT_T0>(ahead.wrapping_add(LANES).cast());
        let weights: [__m512; REGISTERS] = std::array::from_fn(|register| {
            // SAFETY: `weight_row` holds AVX512_TILE_COLUMNS floats, so the 16 read
            // from `LANES * register` are inside it (REGISTERS ≤ REGISTERS_PER_ROW).
            unsafe { _mm512_loadu_ps(weight_row.as_ptr().add(LANES * register)) }
        });
        for (row, row_sums) in rows.iter().zip(&mut sums) {
            // SAFETY: `step < depth`, and every row holds at least `depth` values
            // (asserted above).
            let input = _mm512_set1_ps(unsafe { *row.add(step) });
            for (sum, weight) in row_sums.iter_mut().zip(&weights) {
                *sum = _mm512_fmadd_ps(input, *weight, *sum);
            }
        }
    }
    let mut values = [[0.0; AVX512_TILE_COLUMNS]; ROWS];
    for (row_values, row_sums) in values.iter_mut().zip(&sums) {
        for (register, sum) in row_sums.iter().enumerate() {
            // SAFETY: each row of `values` holds AVX512_TILE_COLUMNS floats, so the 16
            // written from `LANES * register` are inside it.
            unsafe { _mm512_storeu_ps(row_values.as_mut_ptr().add(LANES * register), *sum) };
        }
    }
    values
}
// ANCHOR_END: tile_sums

// ANCHOR: multiply_row_block_direct
/// The parent module's `multiply_row_block` for the AVX-512 tile, with the inputs read in
/// place: the same loops (inner blocks, panels of weights, tiles of rows) and the same
/// epilogue, without the packing step.
///
/// When the rows would collide in L1 ([`rows_collide_in_l1`]), each inner block of the
/// rows is first copied into `copied_rows`, one row after the other, `depth` floats apart:
/// a straight copy of whole rows, much cheaper than packing's transposition, that leaves
/// the rows 1 KiB apart instead of 4.
#[target_feature(enable = "avx512f")]
pub(super) fn multiply_row_block_direct(
    block: RowBlock<'_>,
    packed_weights: &PackedWeights,
    copied_rows: &mut Vec<f32>,
    epilogue: TileEpilogue<'_>,
) {
    let RowBlock {
        input_rows,
        inner_size,
        output_rows,
        outputs,
    } = block;
    let rows = output_rows.len() / outputs;
    let copy = rows_collide_in_l1(inner_size);
    for first_inner in (0..inner_size).step_by(INNER_BLOCK) {
        let depth = INNER_BLOCK.min(inner_size - first_inner);
        // The slice the rows are read from, how far apart they are, and where this inner
        // block starts in each.
        let (source, row_stride, first_column_of_block) = if copy {
            copied_rows.clear();
            for row in input_rows.chunks_exact(inner_size).take(rows) {
                copied_rows.extend_from_slice(&row[first_inner..][..depth]);
            }
            (&copied_rows[..], depth, 0)
        } else {
            (input_rows, inner_size, first_inner)
        };
        let weight_block = packed_weights.block(first_inner, depth);
        let weight_panels = weight_block.chunks_exact(depth * AVX512_TILE_COLUMNS);
        for (panel_index, weight_panel) in weight_panels.enumerate() {
            let first_column = panel_index * AVX512_TILE_COLUMNS;
            let columns = AVX512_TILE_COLUMNS.min(outputs - first_column);
            let output_tiles = output_rows.chunks_mut(AVX512_TILE_ROWS * outputs);
            for (tile_index, output_tile) in output_tiles.enumerate() {
                let first_row = tile_index * AVX512_TILE_ROWS;
                // Row `row_in_tile` of the tile, or zeros past the last row.
                let input_row = |row_in_tile: usize| -> &[f32] {
                    let row = first_row + row_in_tile;
                    if row < rows {
                        &source[row * row_stride + first_column_of_block..][..depth]
                    } else {
                        &ZEROS[..depth]
                    }
                };
                let tile = TileOfOutput {
                    output_rows: output_tile,
                    outputs,
                    first_column,
                    columns,
                };
                let first_inner_block = first_inner == 0;
                let last_inner_block = first_inner + depth == inner_size;
                // Half a tile of rows, or 16 columns or fewer left: only the registers
                // that hold results.
                let half_rows = rows - first_row <= HALF_TILE_ROWS;
                let one_register = columns <= LANES;
                // The same few lines for each of the four kernels, which differ in two
                // constants: a macro writes them out once.
                macro_rules! run_tile {
                    ($rows:expr, $registers:expr) => {{
                        let inputs: [&[f32]; $rows] = std::array::from_fn(input_row);
                        let sums = tile_sums::<$rows, $registers>(&inputs, weight_panel);
                        store_tile(&sums, tile, epilogue, first_inner_block, last_inner_block);
                    }};
                }
                match (half_rows, one_register) {
                    (false, false) => run_tile!(AVX512_TILE_ROWS, REGISTERS_PER_ROW),
                    (false, true) => run_tile!(AVX512_TILE_ROWS, 1),
                    (true, false) => run_tile!(HALF_TILE_ROWS, REGISTERS_PER_ROW),
                    (true, true) => run_tile!(HALF_TILE_ROWS, 1),
                }
            }
        }
    }
}
// ANCHOR_END: multiply_row_block_direct
