//! The AVX-512 micro-kernel written with the vector instructions themselves, reading its
//! inputs from a plain copy of the rows instead of a packed, transposed one.
//!
//! The generic kernel of the parent module packs every tile of inputs before using it: the
//! `TILE_ROWS` values of each step side by side, so that the micro-kernel reads one
//! stream. Packing pays when a tile of inputs is read by many panels of weights, but the
//! copy itself is not free: one load and one store per value, with the transposition
//! that makes it hard to vectorise. On the 2-core EPYC it took a quarter of the time of a
//! network 32 wide and about 4 % of one 256 wide.
//!
//! This kernel skips the transposition. A step broadcasts one value from each of the 12
//! input rows of the tile, each row read front to back: twelve streams of consecutive
//! floats, which the hardware prefetcher follows and which stay in L1 while the tile is
//! multiplied with a panel. The current block of each row (up to `INNER_BLOCK` values) is
//! first copied as it is into a buffer where the rows lie `INNER_BLOCK` floats apart
//! ([`copy_rows`]): a straight copy, without packing's transposition, which puts every
//! row a known, constant distance from the first.
//!
//! The instructions are written out (`_mm512_set1_ps` to broadcast, `_mm512_fmadd_ps` to
//! multiply and add) rather than left to the optimiser: given the same loop over twelve
//! rows in plain Rust, it vectorised the wrong way, across the rows, with gather
//! instructions that ran slower than the packing they replaced.

use std::arch::x86_64::{
    __m512, __mmask16, _MM_HINT_T0, _mm_prefetch, _mm512_add_ps, _mm512_fmadd_ps, _mm512_loadu_ps,
    _mm512_mask_storeu_ps, _mm512_maskz_loadu_ps, _mm512_max_ps, _mm512_set1_ps, _mm512_setzero_ps,
};

use super::{
    AVX512_TILE_COLUMNS, AVX512_TILE_ROWS, INNER_BLOCK, PackedWeights, RowBlock, TileEpilogue,
    TileOfOutput,
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

/// Rows of a half tile: a tile with this many rows or fewer left runs the kernel for 6
/// rows, at half the cost of a whole one. Threads can then share the rows in steps of 6
/// (see `MicroKernel::task_rows`) without one of them computing a mostly empty tile.
pub(super) const HALF_TILE_ROWS: usize = AVX512_TILE_ROWS / 2;

// ANCHOR: copy_rows
/// Copies `depth` values of each input row, from column `first_inner` on, into `copied_rows`,
/// one row every `INNER_BLOCK` floats, and makes room for whole tiles: the rows past the
/// last one hold whatever an earlier copy left there, and their sums are thrown away.
///
/// Why copy at all, when the micro-kernel could read the rows where they are? Because a
/// tile reads twelve rows, and a processor has few registers for addresses. x86-64 has 16
/// general-purpose registers, one of them the stack pointer; twelve separate row
/// addresses, the weights' address, the step and the loop's end take the other fifteen,
/// and the compiler kept five of the row addresses on the stack and loaded each of them
/// again at every step: five extra loads for every 24 multiply-adds. Here the rows lie a
/// constant distance apart, so every row's address is one register plus a constant the
/// instruction carries (`vbroadcastss zmm26, [rdx - 10240]`): one register serves all
/// twelve. On one core of the 2-core Xeon, the product at 1024³ ran at 156–159 GFLOP/s
/// with the rows read in place and at 171–174 with the copy (three interleaved runs). The
/// same distance, 1 KiB, also keeps rows of widths like 1024 (rows exactly 4 KiB apart)
/// from competing for one set of the L1 cache.
fn copy_rows(
    input_rows: &[f32],
    inner_size: usize,
    rows: usize,
    first_inner: usize,
    depth: usize,
    copied_rows: &mut Vec<f32>,
) {
    let whole_tiles = rows.next_multiple_of(AVX512_TILE_ROWS) * INNER_BLOCK;
    if copied_rows.len() < whole_tiles {
        copied_rows.resize(whole_tiles, 0.0);
    }
    let sources = input_rows.chunks_exact(inner_size).take(rows);
    for (source, copy) in sources.zip(copied_rows.chunks_exact_mut(INNER_BLOCK)) {
        copy[..depth].copy_from_slice(&source[first_inner..][..depth]);
    }
}
// ANCHOR_END: copy_rows

// ANCHOR: tile_sums
/// The sums of one tile: `ROWS` rows of inputs, `INNER_BLOCK` floats apart in
/// `tile_inputs`, times one packed panel of weights (`depth` steps of 32 weights), kept in
/// `REGISTERS · ROWS` registers (24 for a whole tile of 12 rows and 32 columns), and
/// returned in them. With `REGISTERS = 1`, only the first 16 columns of the panel are
/// computed.
// Inlined into its caller, so that the sums stay in registers from here to the store.
#[inline]
#[target_feature(enable = "avx512f")]
fn tile_sums<const ROWS: usize, const REGISTERS: usize>(
    tile_inputs: &[f32],
    weight_panel: &[f32],
) -> [[__m512; REGISTERS]; ROWS] {
    // Checked when the function is compiled for each `REGISTERS`: the loads below stay
    // inside a row of the panel.
    const { assert!(REGISTERS <= REGISTERS_PER_ROW) };
    let depth = weight_panel.len() / AVX512_TILE_COLUMNS;
    // Checked once, here, so that the loop can read without a check per value.
    assert!(depth <= INNER_BLOCK && tile_inputs.len() >= (ROWS - 1) * INNER_BLOCK + depth);
    let first_row = tile_inputs.as_ptr();
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
        for (row, row_sums) in sums.iter_mut().enumerate() {
            // SAFETY: `row < ROWS` and `step < depth`, so this reads inside `tile_inputs`
            // (asserted above). `row * INNER_BLOCK` is a constant once the loop over the
            // rows is unrolled: the address is the first row's plus a constant.
            let input = _mm512_set1_ps(unsafe { *first_row.add(row * INNER_BLOCK + step) });
            for (sum, weight) in row_sums.iter_mut().zip(&weights) {
                *sum = _mm512_fmadd_ps(input, *weight, *sum);
            }
        }
    }
    sums
}
// ANCHOR_END: tile_sums

/// Writes the sums of a tile, still in their registers, to the output: the parent
/// module's `store_tile` (the same epilogue) written with the vector instructions, one
/// masked load, add and store per register, so that the sums need not go through memory
/// first and the columns past the last are never touched.
#[inline]
#[target_feature(enable = "avx512f")]
fn store_tile_sums<const ROWS: usize, const REGISTERS: usize>(
    sums: &[[__m512; REGISTERS]; ROWS],
    tile: TileOfOutput<'_>,
    epilogue: TileEpilogue<'_>,
    first_inner_block: bool,
    last_inner_block: bool,
) {
    let TileOfOutput {
        output_rows,
        outputs,
        first_column,
        columns,
    } = tile;
    let (bias, relu) = epilogue.for_block(first_inner_block, last_inner_block);
    // Checked once: the registers hold every column of the tile, and every column they
    // cover is inside a row and the bias.
    assert!(columns <= REGISTERS * LANES);
    assert!(first_column + columns <= outputs && bias.is_none_or(|bias| bias.len() >= outputs));
    for (row_sums, output_row) in sums.iter().zip(output_rows.chunks_exact_mut(outputs)) {
        for (register, &sum) in row_sums.iter().enumerate() {
            let lanes = columns.saturating_sub(LANES * register).min(LANES);
            if lanes == 0 {
                break;
            }
            // One bit per column that exists: the masked lanes are neither read nor written.
            let mask: __mmask16 = (1u32 << lanes).wrapping_sub(1) as __mmask16;
            let first = first_column + LANES * register;
            // SAFETY: `first + lanes <= first_column + columns <= outputs` (asserted), and
            // the masked instructions touch only those `lanes` floats of the row and bias.
            unsafe {
                let start = match bias {
                    Some(bias) => _mm512_maskz_loadu_ps(mask, bias.as_ptr().add(first)),
                    None => _mm512_maskz_loadu_ps(mask, output_row.as_ptr().add(first)),
                };
                let mut value = _mm512_add_ps(start, sum);
                if relu {
                    // `max(0, value)` returns its second operand when either is NaN, so a
                    // NaN passes through, as in `relu_value`.
                    value = _mm512_max_ps(_mm512_setzero_ps(), value);
                }
                _mm512_mask_storeu_ps(output_row.as_mut_ptr().add(first), mask, value);
            }
        }
    }
}

// ANCHOR: multiply_row_block_direct
/// The parent module's `multiply_row_block` for the AVX-512 tile, with the rows copied
/// as they are ([`copy_rows`]) instead of packed: the same loops (inner blocks, panels of
/// weights, tiles of rows) and the same epilogue.
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
    for first_inner in (0..inner_size).step_by(INNER_BLOCK) {
        let depth = INNER_BLOCK.min(inner_size - first_inner);
        copy_rows(
            input_rows,
            inner_size,
            rows,
            first_inner,
            depth,
            copied_rows,
        );
        let weight_block = packed_weights.block(first_inner, depth);
        let weight_panels = weight_block.chunks_exact(depth * AVX512_TILE_COLUMNS);
        for (panel_index, weight_panel) in weight_panels.enumerate() {
            let first_column = panel_index * AVX512_TILE_COLUMNS;
            let columns = AVX512_TILE_COLUMNS.min(outputs - first_column);
            let output_tiles = output_rows.chunks_mut(AVX512_TILE_ROWS * outputs);
            for (tile_index, output_tile) in output_tiles.enumerate() {
                let first_row = tile_index * AVX512_TILE_ROWS;
                let tile_inputs = &copied_rows[first_row * INNER_BLOCK..];
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
                        let sums = tile_sums::<$rows, $registers>(tile_inputs, weight_panel);
                        store_tile_sums(&sums, tile, epilogue, first_inner_block, last_inner_block);
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
