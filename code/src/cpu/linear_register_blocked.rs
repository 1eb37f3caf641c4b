//! A fast single-threaded linear layer: the output is computed in small tiles held in
//! registers, from operands packed so that the innermost loop reads memory in order, in
//! blocks sized for the caches; the innermost code is compiled three times, for any
//! processor, for x86-64 processors with AVX2 and FMA, and for those with AVX-512, and
//! the right build is picked when the program runs.
//!
//! The variants in [`crate::cpu::linear`] improve the *memory* side of the loop; this one
//! also feeds the arithmetic units. Four ideas, each a few lines below:
//!
//! 1. **Register blocking.** The loop order of [`crate::cpu::linear_loop_order`] loads and
//!    stores an output value for every multiply-add. Here a micro-kernel keeps a
//!    `TILE_ROWS × TILE_COLUMNS` tile of outputs in registers for the whole inner loop:
//!    each step loads `TILE_ROWS` input values and `TILE_COLUMNS` weights and does
//!    `TILE_ROWS · TILE_COLUMNS` multiply-adds with them, and nothing is stored until the
//!    end.
//! 2. **Packing.** The micro-kernel wants, at each step, a few input values from
//!    `TILE_ROWS` different rows and a few weights from one row of `W`. Copying ("packing")
//!    the operands once into exactly that order turns every read of the inner loop into a
//!    read of the next consecutive floats. Packing also pads the last, partial tile with
//!    zeros, so the micro-kernel never needs to check for edges.
//! 3. **Cache blocking.** The inner dimension is cut into blocks of `INNER_BLOCK` and the
//!    rows into blocks of `ROW_BLOCK`, so that the packed operands a loop is reusing stay in
//!    the cache level that can feed it fast enough.
//! 4. **Run-time dispatch.** The default Rust target is the x86-64 of 2003 (SSE2, 4 floats
//!    per instruction, no fused multiply-add). The same generic code is also compiled
//!    with `#[target_feature(enable = "avx2,fma")]` (8 floats per instruction, a multiply
//!    and an add in one) and with `#[target_feature(enable = "avx512f")]` (16 floats, 32
//!    registers), and `is_x86_feature_detected!` picks the best build the processor can
//!    run. (Set `GALAXY_CPU_KERNEL` to `portable`, `avx2` or `avx512-packed` to measure a
//!    slower build.) The AVX-512 kernel goes one step further and is written with the
//!    vector instructions themselves, reading its inputs without packing them: see
//!    `avx512_direct`.
//!
//! The result differs from [`crate::cpu::linear_naive`] only by rounding: the products are
//! added in another order, one inner block at a time, and with fused multiply-adds.

use std::sync::OnceLock;

use crate::cpu::linear::check_linear_shapes;
use crate::cpu::relu::relu_value;
use crate::tensor::{ShapeError, Tensor2d, check_output_shape};

#[cfg(target_arch = "x86_64")]
mod avx512_direct;

// ANCHOR: block_sizes
/// Rows of the output tile the AVX2 micro-kernel keeps in registers ("MR" in the BLAS
/// literature).
///
/// An AVX2 register holds 8 floats and there are 16 of them. A 6 × 16 tile is 6 rows of
/// two registers: 12 registers of running sums, 2 for the current row of weights and 1
/// for the input value being broadcast, 15 in all. Each step then does 12 fused
/// multiply-adds on 3 loads, enough work to keep both of a modern core's multiply-add
/// units busy, and few enough loads that the load ports keep up.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const AVX2_TILE_ROWS: usize = 6;
/// Columns of the AVX2 tile: two 8-float registers ("NR").
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const AVX2_TILE_COLUMNS: usize = 16;

/// The AVX-512 tile: 12 rows of two 16-float registers. AVX-512 has 32 registers, so
/// 24 running sums, 2 rows of weights and a broadcast fit, and each step does 24
/// multiply-adds on 2 loads of weights and 12 of inputs (the broadcast reads its input
/// value straight from memory).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const AVX512_TILE_ROWS: usize = 12;
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const AVX512_TILE_COLUMNS: usize = 32;

/// The portable tile, for SSE2 (16 registers of 4 floats) and anything else. A 4 × 8
/// tile takes 8 registers of sums, 2 of weights and 1 broadcast. (On SSE2 the
/// arithmetic, not the registers, is the limit: 6 × 8 and 4 × 16 measured the same.)
const PORTABLE_TILE_ROWS: usize = 4;
const PORTABLE_TILE_COLUMNS: usize = 8;

/// How much of the inner dimension one pass over a tile covers ("KC").
///
/// The micro-kernel walks one packed panel of weights, `INNER_BLOCK × TILE_COLUMNS`
/// floats, once for every tile of rows: 256 · 16 · 4 bytes = 16 KiB for AVX2, which
/// stays in a 32–48 KiB L1 data cache next to the 6 KiB panel of inputs it is multiplied
/// with (32 + 12 KiB for AVX-512, still inside a 48 KiB L1). A much larger block would
/// push the weight panel out of L1; a much smaller one would add and store the output
/// tile more often for the same work. (128, 192, 256 and 384 were within 10% of each
/// other at 1024³ on the machine this was written on, so the choice is not delicate.)
pub(crate) const INNER_BLOCK: usize = 256;

/// How many rows are packed and computed together ("MC").
///
/// The packed input block is `ROW_BLOCK × INNER_BLOCK` floats, 96 KiB, and the
/// micro-kernel reads all of it once for every 16 columns of output, so it must stay in
/// the L2 cache (256 KiB to 2 MiB per core today). 96 is a multiple of every tile height.
/// It is also the unit in which the fused operators finish rows: a block of 96 output
/// rows is still in L2 when ReLU or softmax runs over it.
pub(crate) const ROW_BLOCK: usize = 96;
// ANCHOR_END: block_sizes

// ANCHOR: multiply_add
/// How the micro-kernel combines a product with a running sum. The same generic code
/// is compiled with each.
trait MultiplyAdd {
    fn multiply_add(left: f32, right: f32, sum: f32) -> f32;
}

/// `left · right + sum` as two instructions, two roundings. The only choice on baseline
/// x86-64, which has no fused multiply-add: there, `f32::mul_add` would call a slow
/// software routine to get the single rounding right.
struct SeparateMultiplyAdd;

impl MultiplyAdd for SeparateMultiplyAdd {
    #[inline(always)]
    fn multiply_add(left: f32, right: f32, sum: f32) -> f32 {
        left * right + sum
    }
}

/// `left · right + sum` with one rounding: a single FMA instruction, but only inside a
/// function compiled with the `fma` (or `avx512f`) target feature.
#[cfg(target_arch = "x86_64")]
struct FusedMultiplyAdd;

#[cfg(target_arch = "x86_64")]
impl MultiplyAdd for FusedMultiplyAdd {
    #[inline(always)]
    fn multiply_add(left: f32, right: f32, sum: f32) -> f32 {
        left.mul_add(right, sum)
    }
}
// ANCHOR_END: multiply_add

// ANCHOR: micro_kernel
/// The micro-kernel: `TILE_ROWS × TILE_COLUMNS` dot products of length `depth` at once.
///
/// `packed_inputs` holds, for each step of the inner dimension, the `TILE_ROWS` input
/// values of that step (one from each row of the tile); `packed_weights` holds, for each
/// step, `TILE_COLUMNS` consecutive weights of one row of `W`. Both are read straight
/// through, front to back.
///
/// The sums are a local array of constant size, and every loop over it has a constant
/// trip count, so the compiler unrolls them, keeps the array in vector registers, and
/// turns each row of `TILE_COLUMNS` multiply-adds into `TILE_COLUMNS / 16` (AVX-512),
/// `TILE_COLUMNS / 8` (AVX2) or `TILE_COLUMNS / 4` (SSE2) vector instructions, with the
/// input value broadcast to every lane. Nothing is stored to memory until the loop is
/// done.
///
/// This leans on the optimiser, and the optimiser can be talked out of it: check the
/// benchmark (or the assembly) after changing a tile shape. With AVX-512, 16 × 16 and
/// 8 × 32 tiles made it vectorise the wrong loop, with gathers and scatters, and run
/// about 40 times slower than 12 × 32.
#[inline(always)]
fn micro_kernel<const TILE_ROWS: usize, const TILE_COLUMNS: usize, Arithmetic: MultiplyAdd>(
    packed_inputs: &[f32],
    packed_weights: &[f32],
) -> [[f32; TILE_COLUMNS]; TILE_ROWS] {
    let mut sums = [[0.0; TILE_COLUMNS]; TILE_ROWS];
    // `as_chunks` views the slices as arrays of constant length, so that the compiler
    // knows every inner loop's trip count.
    let (input_steps, _) = packed_inputs.as_chunks::<TILE_ROWS>();
    let (weight_steps, _) = packed_weights.as_chunks::<TILE_COLUMNS>();
    for (input_values, weight_row) in input_steps.iter().zip(weight_steps) {
        // Plain index loops with constant bounds, which the optimiser unrolls completely.
        // (Written with iterators over `sums`, the AVX2 build kept the sums in memory
        // when the crate was compiled in several parts, and ran 9 times slower.)
        for row in 0..TILE_ROWS {
            for column in 0..TILE_COLUMNS {
                sums[row][column] = Arithmetic::multiply_add(
                    input_values[row],
                    weight_row[column],
                    sums[row][column],
                );
            }
        }
    }
    sums
}
// ANCHOR_END: micro_kernel

// ANCHOR: store_tile
/// What happens to a finished tile of sums on its way to the output: the epilogue of
/// the matrix product, applied while the sums are still in registers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TileEpilogue<'a> {
    /// Added to every row on the first inner block (the output is written, not read);
    /// without it, the first block adds its sums to what the output already holds.
    pub(crate) bias: Option<&'a [f32]>,
    /// ReLU on the last inner block, when the sums are complete.
    pub(crate) relu: bool,
}

impl<'a> TileEpilogue<'a> {
    /// What the store of one inner block's sums applies: the bias to start from (only on
    /// the first block; later ones, or every block without a bias, start from what the
    /// output holds), and whether ReLU follows (only on the last, when the sums are
    /// complete).
    #[inline(always)]
    pub(crate) fn for_block(
        self,
        first_inner_block: bool,
        last_inner_block: bool,
    ) -> (Option<&'a [f32]>, bool) {
        let bias = self.bias.filter(|_| first_inner_block);
        (bias, last_inner_block && self.relu)
    }
}

/// Writes a finished tile of sums to the output, keeping only the rows and columns that
/// exist: the tiles on the bottom and right edges were padded with zeros when packing.
/// The first inner block writes `sums + bias`, later ones add to the output, and the last
/// one applies ReLU if asked: bias and ReLU cost no extra pass over the output.
#[inline(always)]
fn store_tile<const TILE_ROWS: usize, const TILE_COLUMNS: usize>(
    sums: &[[f32; TILE_COLUMNS]; TILE_ROWS],
    output_tile: TileOfOutput<'_>,
    epilogue: TileEpilogue<'_>,
    first_inner_block: bool,
    last_inner_block: bool,
) {
    let TileOfOutput {
        output_rows,
        outputs,
        first_column,
        columns,
    } = output_tile;
    let (bias, relu) = epilogue.for_block(first_inner_block, last_inner_block);
    let bias = bias.map(|bias| &bias[first_column..first_column + columns]);
    // One pass, one store per value: storing and then reading the value back for ReLU
    // would make the processor wait for its own store.
    let finish = |value: f32| if relu { relu_value(value) } else { value };
    for (row_sums, output_row) in sums.iter().zip(output_rows.chunks_exact_mut(outputs)) {
        let output_tile_row = &mut output_row[first_column..first_column + columns];
        // Two loops that walk their slices together, rather than one that indexes the bias:
        // an index would need a bounds check per value, and the check kept the compiler
        // from vectorising the loop.
        let values = output_tile_row.iter_mut().zip(row_sums);
        match bias {
            Some(bias) => {
                for ((output_value, &sum), &bias) in values.zip(bias) {
                    *output_value = finish(bias + sum);
                }
            }
            None => {
                for (output_value, &sum) in values {
                    *output_value = finish(*output_value + sum);
                }
            }
        }
    }
}

/// Where a tile's sums go: up to `TILE_ROWS` whole output rows (flat), and the columns
/// of those rows that the tile covers.
struct TileOfOutput<'a> {
    output_rows: &'a mut [f32],
    outputs: usize,
    first_column: usize,
    columns: usize,
}
// ANCHOR_END: store_tile

// ANCHOR: pack_weights
/// The weights copied into the order the micro-kernel reads them, once per call. (The
/// copy is `inner × outputs` floats against `rows × inner × outputs` multiply-adds, so it
/// is cheap unless there are very few rows. Weights do not change between runs, so a
/// graph runner could also pack them once, as the GPU runner uploads them once.)
///
/// For each block of `INNER_BLOCK` rows of `W`, the columns are cut into panels
/// `TILE_COLUMNS` wide, and each panel is stored row after row: `depth × TILE_COLUMNS`
/// consecutive floats. The last panel is padded with zero columns.
pub(crate) struct PackedWeights {
    values: Vec<f32>,
    /// The number of output columns rounded up to whole panels.
    padded_outputs: usize,
}

impl PackedWeights {
    pub(crate) fn new<const TILE_COLUMNS: usize>(weights: &Tensor2d) -> PackedWeights {
        let (inner_size, outputs) = weights.shape();
        let padded_outputs = outputs.next_multiple_of(TILE_COLUMNS);
        let mut values = vec![0.0; inner_size * padded_outputs];
        for first_inner in (0..inner_size).step_by(INNER_BLOCK) {
            let depth = INNER_BLOCK.min(inner_size - first_inner);
            let block = &mut values[first_inner * padded_outputs..][..depth * padded_outputs];
            for (panel_index, panel) in block.chunks_exact_mut(depth * TILE_COLUMNS).enumerate() {
                let first_column = panel_index * TILE_COLUMNS;
                let columns = TILE_COLUMNS.min(outputs - first_column);
                for (step, panel_row) in panel.chunks_exact_mut(TILE_COLUMNS).enumerate() {
                    let weight_row = weights.row(first_inner + step);
                    panel_row[..columns]
                        .copy_from_slice(&weight_row[first_column..first_column + columns]);
                }
            }
        }
        PackedWeights {
            values,
            padded_outputs,
        }
    }

    /// The packed panels of one inner block, `depth × padded_outputs` floats.
    fn block(&self, first_inner: usize, depth: usize) -> &[f32] {
        &self.values[first_inner * self.padded_outputs..][..depth * self.padded_outputs]
    }
}
// ANCHOR_END: pack_weights

// ANCHOR: pack_inputs
/// Packs the inner block `first_inner .. first_inner + depth` of `rows` input rows (each
/// `inner_size` long) into `packed`: for each tile of `TILE_ROWS` rows, step by step, the
/// `TILE_ROWS` values of that step. Rows past the last one are zeros.
///
/// The micro-kernel will read each packed tile once for every panel of weights, so this
/// copy is paid once and used `outputs / TILE_COLUMNS` times.
fn pack_inputs<const TILE_ROWS: usize>(
    input_rows: &[f32],
    rows: usize,
    inner_size: usize,
    first_inner: usize,
    depth: usize,
    packed: &mut Vec<f32>,
) {
    let tiles = rows.div_ceil(TILE_ROWS);
    // Every value is written below, so the buffer needs the right length, not zeros.
    packed.resize(tiles * TILE_ROWS * depth, 0.0);
    for (tile_index, tile) in packed.chunks_exact_mut(TILE_ROWS * depth).enumerate() {
        let first_row = tile_index * TILE_ROWS;
        // The block of each row of the tile; rows past the last one are empty.
        let row_blocks: [&[f32]; TILE_ROWS] = std::array::from_fn(|row_in_tile| {
            let row = first_row + row_in_tile;
            if row < rows {
                &input_rows[row * inner_size + first_inner..][..depth]
            } else {
                &[]
            }
        });
        // Written in order, read from TILE_ROWS rows at once (each read in order too).
        for (step, step_values) in tile.chunks_exact_mut(TILE_ROWS).enumerate() {
            for (value, row_block) in step_values.iter_mut().zip(&row_blocks) {
                *value = row_block.get(step).copied().unwrap_or(0.0);
            }
        }
    }
}
// ANCHOR_END: pack_inputs

// ANCHOR: multiply_row_block
/// Computes `input_rows · W`, with the epilogue (bias, ReLU), into `output_rows`, for
/// one block of at most [`ROW_BLOCK`] rows.
///
/// The loops, outermost first: inner blocks (pack this block of inputs: it stays in
/// L2), panels of weights (each stays in L1 while it is used), tiles of rows (the
/// micro-kernel). Every tile of sums is stored once per inner block.
#[inline(always)]
fn multiply_row_block<const TILE_ROWS: usize, const TILE_COLUMNS: usize, Arithmetic>(
    block: RowBlock<'_>,
    packed_weights: &PackedWeights,
    packed_inputs: &mut Vec<f32>,
    epilogue: TileEpilogue<'_>,
) where
    Arithmetic: MultiplyAdd,
{
    let RowBlock {
        input_rows,
        inner_size,
        output_rows,
        outputs,
    } = block;
    let rows = output_rows.len() / outputs;
    for first_inner in (0..inner_size).step_by(INNER_BLOCK) {
        let depth = INNER_BLOCK.min(inner_size - first_inner);
        pack_inputs::<TILE_ROWS>(
            input_rows,
            rows,
            inner_size,
            first_inner,
            depth,
            packed_inputs,
        );
        let weight_block = packed_weights.block(first_inner, depth);
        let weight_panels = weight_block.chunks_exact(depth * TILE_COLUMNS);
        for (panel_index, weight_panel) in weight_panels.enumerate() {
            let first_column = panel_index * TILE_COLUMNS;
            let columns = TILE_COLUMNS.min(outputs - first_column);
            let input_tiles = packed_inputs.chunks_exact(depth * TILE_ROWS);
            let output_tiles = output_rows.chunks_mut(TILE_ROWS * outputs);
            for (input_tile, output_tile) in input_tiles.zip(output_tiles) {
                let sums =
                    micro_kernel::<TILE_ROWS, TILE_COLUMNS, Arithmetic>(input_tile, weight_panel);
                let tile = TileOfOutput {
                    output_rows: output_tile,
                    outputs,
                    first_column,
                    columns,
                };
                let first_inner_block = first_inner == 0;
                let last_inner_block = first_inner + depth == inner_size;
                store_tile(&sums, tile, epilogue, first_inner_block, last_inner_block);
            }
        }
    }
}
// ANCHOR_END: multiply_row_block

/// One block of rows to compute: the matching input rows and output rows, as flat
/// row-major slices.
pub(crate) struct RowBlock<'a> {
    pub(crate) input_rows: &'a [f32],
    pub(crate) inner_size: usize,
    pub(crate) output_rows: &'a mut [f32],
    pub(crate) outputs: usize,
}

/// The environment variable that picks a slower micro-kernel than the fastest one, for
/// comparisons: `portable`, `avx2`, `avx512-packed` or `avx512`, e.g.
/// `GALAXY_CPU_KERNEL=avx2 cargo bench -p galaxy --bench cpu_operators -- 1024`.
pub const KERNEL_VARIABLE: &str = "GALAXY_CPU_KERNEL";

/// The name of the micro-kernel the fast linear layers use in this process (`portable`,
/// `avx2` or `avx512`), for benchmark reports and figure captions.
pub fn micro_kernel_in_use() -> &'static str {
    MicroKernel::selected().name()
}

// ANCHOR: dispatch
/// The micro-kernel to use, chosen once per call.
///
/// The x86 variants may only exist on a processor that has their instructions: they are
/// created in one place, [`MicroKernel::all_available`], right after the check, and the
/// wrapper keeps every other module from creating them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MicroKernel(KernelChoice);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KernelChoice {
    /// 4 × 8 tiles, separate multiply and add: compiled for the baseline target.
    Portable,
    /// 6 × 16 tiles, fused multiply-add: compiled with AVX2 and FMA enabled.
    #[cfg(target_arch = "x86_64")]
    Avx2Fma,
    /// 12 × 32 tiles, fused multiply-add: the generic code compiled with AVX-512 enabled,
    /// inputs packed like every other build.
    #[cfg(target_arch = "x86_64")]
    Avx512Packed,
    /// 12 × 32 tiles written with AVX-512 instructions, the rows of inputs copied as
    /// they are instead of packed (`avx512_direct`).
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl MicroKernel {
    /// Every micro-kernel this processor can run, slowest first. `is_x86_feature_detected!`
    /// asks the processor (the `cpuid` instruction) the first time and caches the answer.
    pub(crate) fn all_available() -> Vec<MicroKernel> {
        #[allow(unused_mut)]
        let mut kernels = vec![MicroKernel(KernelChoice::Portable)];
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
                kernels.push(MicroKernel(KernelChoice::Avx2Fma));
            }
            if is_x86_feature_detected!("avx512f") {
                kernels.push(MicroKernel(KernelChoice::Avx512Packed));
                kernels.push(MicroKernel(KernelChoice::Avx512));
            }
        }
        kernels
    }

    /// The micro-kernel the linear layers use: the fastest this processor can run, unless
    /// the environment variable [`KERNEL_VARIABLE`] names another one it can run, so that
    /// a benchmark can show what each build is worth. Decided once per process.
    pub(crate) fn selected() -> MicroKernel {
        static SELECTED: OnceLock<MicroKernel> = OnceLock::new();
        *SELECTED.get_or_init(|| {
            let available = MicroKernel::all_available();
            let fastest = *available
                .last()
                .expect("the portable kernel is always available");
            let Ok(requested) = std::env::var(KERNEL_VARIABLE) else {
                return fastest;
            };
            match available.iter().find(|kernel| kernel.name() == requested) {
                Some(&kernel) => kernel,
                None => {
                    // A benchmark knob, not an input the program depends on: say so once,
                    // loudly, and carry on with the default.
                    let names: Vec<&str> = available.iter().map(|kernel| kernel.name()).collect();
                    eprintln!(
                        "{KERNEL_VARIABLE}={requested:?} is not a micro-kernel this processor \
                         can run ({}); using {:?}",
                        names.join(", "),
                        fastest.name()
                    );
                    fastest
                }
            }
        })
    }

    /// The name [`KERNEL_VARIABLE`] accepts for this kernel.
    fn name(self) -> &'static str {
        match self.0 {
            KernelChoice::Portable => "portable",
            #[cfg(target_arch = "x86_64")]
            KernelChoice::Avx2Fma => "avx2",
            #[cfg(target_arch = "x86_64")]
            KernelChoice::Avx512Packed => "avx512-packed",
            #[cfg(target_arch = "x86_64")]
            KernelChoice::Avx512 => "avx512",
        }
    }

    /// How many output rows one micro-kernel call covers.
    pub(crate) fn tile_rows(self) -> usize {
        match self.0 {
            KernelChoice::Portable => PORTABLE_TILE_ROWS,
            #[cfg(target_arch = "x86_64")]
            KernelChoice::Avx2Fma => AVX2_TILE_ROWS,
            #[cfg(target_arch = "x86_64")]
            KernelChoice::Avx512Packed | KernelChoice::Avx512 => AVX512_TILE_ROWS,
        }
    }

    /// The step in which rows are best shared between threads: the tile height, except
    /// for the AVX-512 kernel, which computes a half tile (6 rows) at half the cost of a
    /// whole one, so that two threads can split 512 rows (42⅔ tiles) evenly instead of
    /// 22 tiles against 21.
    pub(crate) fn task_rows(self) -> usize {
        match self.0 {
            #[cfg(target_arch = "x86_64")]
            KernelChoice::Avx512 => avx512_direct::HALF_TILE_ROWS,
            _ => self.tile_rows(),
        }
    }

    pub(crate) fn pack_weights(self, weights: &Tensor2d) -> PackedWeights {
        match self.0 {
            KernelChoice::Portable => PackedWeights::new::<PORTABLE_TILE_COLUMNS>(weights),
            #[cfg(target_arch = "x86_64")]
            KernelChoice::Avx2Fma => PackedWeights::new::<AVX2_TILE_COLUMNS>(weights),
            #[cfg(target_arch = "x86_64")]
            KernelChoice::Avx512Packed | KernelChoice::Avx512 => {
                PackedWeights::new::<AVX512_TILE_COLUMNS>(weights)
            }
        }
    }

    pub(crate) fn multiply_row_block(
        self,
        block: RowBlock<'_>,
        packed_weights: &PackedWeights,
        packed_inputs: &mut Vec<f32>,
        epilogue: TileEpilogue<'_>,
    ) {
        match self.0 {
            KernelChoice::Portable => multiply_row_block::<
                PORTABLE_TILE_ROWS,
                PORTABLE_TILE_COLUMNS,
                SeparateMultiplyAdd,
            >(block, packed_weights, packed_inputs, epilogue),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a `KernelChoice::Avx2Fma` is only created by `all_available`, after
            // `is_x86_feature_detected!` found both AVX2 and FMA on this processor, so
            // the instructions the function was compiled with exist here.
            KernelChoice::Avx2Fma => unsafe {
                multiply_row_block_avx2_fma(block, packed_weights, packed_inputs, epilogue)
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a `KernelChoice::Avx512Packed` is only created by `all_available`,
            // after `is_x86_feature_detected!("avx512f")` succeeded on this processor.
            KernelChoice::Avx512Packed => unsafe {
                multiply_row_block_avx512(block, packed_weights, packed_inputs, epilogue)
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as for `Avx512Packed`: created only after the same check.
            KernelChoice::Avx512 => unsafe {
                avx512_direct::multiply_row_block_direct(
                    block,
                    packed_weights,
                    packed_inputs,
                    epilogue,
                )
            },
        }
    }
}

/// [`multiply_row_block`] compiled a second time, with AVX2 and FMA enabled. The generic
/// code above is `#[inline(always)]`, so all of it (micro-kernel, packing, edge tiles)
/// is inlined here and compiled for 8-float registers and fused multiply-adds. Calling
/// this on a processor without those instructions would crash, hence `unsafe` to call.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn multiply_row_block_avx2_fma(
    block: RowBlock<'_>,
    packed_weights: &PackedWeights,
    packed_inputs: &mut Vec<f32>,
    epilogue: TileEpilogue<'_>,
) {
    multiply_row_block::<AVX2_TILE_ROWS, AVX2_TILE_COLUMNS, FusedMultiplyAdd>(
        block,
        packed_weights,
        packed_inputs,
        epilogue,
    )
}

/// [`multiply_row_block`] compiled a third time, for AVX-512 (which includes FMA): 16
/// floats per register and 32 registers, hence the larger tile.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn multiply_row_block_avx512(
    block: RowBlock<'_>,
    packed_weights: &PackedWeights,
    packed_inputs: &mut Vec<f32>,
    epilogue: TileEpilogue<'_>,
) {
    multiply_row_block::<AVX512_TILE_ROWS, AVX512_TILE_COLUMNS, FusedMultiplyAdd>(
        block,
        packed_weights,
        packed_inputs,
        epilogue,
    )
}
// ANCHOR_END: dispatch

// ANCHOR: packed_linear
/// A linear layer ready to be computed any number of rows at a time, by one thread or
/// several: the shapes are checked, the kernel chosen and the weights packed.
pub(crate) struct PackedLinear<'a> {
    kernel: MicroKernel,
    input: &'a Tensor2d,
    bias: &'a [f32],
    packed_weights: PackedWeights,
    outputs: usize,
}

impl<'a> PackedLinear<'a> {
    /// Checks the shapes (the output included) and packs the weights.
    pub(crate) fn new(
        operation: &'static str,
        kernel: MicroKernel,
        input: &'a Tensor2d,
        weights: &Tensor2d,
        bias: &'a Tensor2d,
        output: &Tensor2d,
    ) -> Result<PackedLinear<'a>, ShapeError> {
        let (rows, outputs) = check_linear_shapes(input, weights, bias)?;
        check_output_shape(operation, (rows, outputs), output.shape())?;
        Ok(PackedLinear {
            kernel,
            input,
            bias: bias.as_slice(),
            packed_weights: kernel.pack_weights(weights),
            outputs,
        })
    }

    /// The step in which tasks that split the rows between threads cut them, so that no
    /// task computes a mostly empty tile (see `MicroKernel::task_rows`).
    pub(crate) fn task_rows(&self) -> usize {
        self.kernel.task_rows()
    }

    /// Computes the output rows starting at `first_row` into `output_rows` (whole rows,
    /// flat), one [`ROW_BLOCK`] at a time, and hands each finished row to `finish_row`
    /// right after its block is done, while the block is still in cache.
    /// `packed_inputs` is scratch space, reused between blocks and calls.
    pub(crate) fn compute_rows(
        &self,
        first_row: usize,
        output_rows: &mut [f32],
        packed_inputs: &mut Vec<f32>,
        finish_row: &impl Fn(&mut [f32]),
    ) {
        let (outputs, inner_size) = (self.outputs, self.input.columns());
        if outputs == 0 {
            return;
        }
        let output_blocks = output_rows.chunks_mut(ROW_BLOCK * outputs);
        for (block_index, output_block) in output_blocks.enumerate() {
            let block_first_row = first_row + block_index * ROW_BLOCK;
            let block_rows = output_block.len() / outputs;
            let input_block =
                &self.input.as_slice()[block_first_row * inner_size..][..block_rows * inner_size];
            if inner_size == 0 {
                // No inner blocks, so no tile stores: the output is the bias alone.
                for output_row in output_block.chunks_exact_mut(outputs) {
                    output_row.copy_from_slice(self.bias);
                }
            }
            let block = RowBlock {
                input_rows: input_block,
                inner_size,
                output_rows: output_block,
                outputs,
            };
            let epilogue = TileEpilogue {
                bias: Some(self.bias),
                relu: false,
            };
            self.kernel
                .multiply_row_block(block, &self.packed_weights, packed_inputs, epilogue);
            output_block.chunks_exact_mut(outputs).for_each(finish_row);
        }
    }
}
// ANCHOR_END: packed_linear

// ANCHOR: linear_register_blocked
/// The linear layer with packing, cache blocking and a register-blocked micro-kernel, on
/// one thread, into a fresh tensor.
pub fn linear_register_blocked(
    input: &Tensor2d,
    weights: &Tensor2d,
    bias: &Tensor2d,
) -> Result<Tensor2d, ShapeError> {
    let (rows, outputs) = check_linear_shapes(input, weights, bias)?;
    let mut output = Tensor2d::zeros(rows, outputs);
    linear_register_blocked_into(input, weights, bias, &mut output)?;
    Ok(output)
}

/// [`linear_register_blocked`] into a preallocated output of shape `rows × outputs`.
pub fn linear_register_blocked_into(
    input: &Tensor2d,
    weights: &Tensor2d,
    bias: &Tensor2d,
    output: &mut Tensor2d,
) -> Result<(), ShapeError> {
    linear_with_kernel(MicroKernel::selected(), input, weights, bias, output)
}

/// The single-threaded linear layer with a given micro-kernel.
fn linear_with_kernel(
    kernel: MicroKernel,
    input: &Tensor2d,
    weights: &Tensor2d,
    bias: &Tensor2d,
    output: &mut Tensor2d,
) -> Result<(), ShapeError> {
    let operation = "linear_register_blocked_into";
    let linear = PackedLinear::new(operation, kernel, input, weights, bias, output)?;
    linear.compute_rows(0, output.as_mut_slice(), &mut Vec::new(), &|_| {});
    Ok(())
}
// ANCHOR_END: linear_register_blocked

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::linear_naive;
    use crate::tensor::Tolerance;

    /// Products of values in −1..1 summed over a few hundred terms, in another order and
    /// with fused multiply-adds: see `properties.rs` for the reasoning.
    const TOLERANCE: Tolerance = Tolerance::new(1e-4, 1e-5);

    fn operands(rows: usize, inner_size: usize, outputs: usize) -> (Tensor2d, Tensor2d, Tensor2d) {
        (
            Tensor2d::random(rows, inner_size, -1.0..=1.0, 11),
            Tensor2d::random(inner_size, outputs, -1.0..=1.0, 12),
            Tensor2d::random(1, outputs, -1.0..=1.0, 13),
        )
    }

    fn check_every_kernel(rows: usize, inner_size: usize, outputs: usize) {
        let (input, weights, bias) = operands(rows, inner_size, outputs);
        let expected = linear_naive(&input, &weights, &bias).unwrap();
        for kernel in MicroKernel::all_available() {
            let mut output = Tensor2d::filled(rows, outputs, f32::NAN);
            linear_with_kernel(kernel, &input, &weights, &bias, &mut output).unwrap();
            let comparison = output.compare(&expected, TOLERANCE).unwrap();
            assert!(
                comparison.passed(),
                "{kernel:?} at {rows}×{inner_size}×{outputs}: {comparison}"
            );
        }
    }

    #[test]
    fn every_kernel_matches_naive_on_one_tile_and_less() {
        check_every_kernel(1, 1, 1);
        check_every_kernel(AVX2_TILE_ROWS, 5, AVX2_TILE_COLUMNS);
        check_every_kernel(AVX512_TILE_ROWS, 7, AVX512_TILE_COLUMNS);
        check_every_kernel(PORTABLE_TILE_ROWS - 1, 3, PORTABLE_TILE_COLUMNS + 1);
    }

    #[test]
    fn every_kernel_matches_naive_across_every_block_edge() {
        // More than one row block and one inner block, none of them whole, and columns
        // that end inside a panel.
        check_every_kernel(ROW_BLOCK + 7, INNER_BLOCK + 3, 3 * AVX512_TILE_COLUMNS + 5);
        check_every_kernel(2, 2 * INNER_BLOCK + 1, 1);
        // Rows 4 KiB apart (all in one set of the L1 cache if read where they are), with
        // a partial last tile.
        check_every_kernel(AVX512_TILE_ROWS + 5, 1024, AVX512_TILE_COLUMNS + 3);
    }

    #[test]
    fn what_an_earlier_call_left_in_the_scratch_space_never_reaches_the_output() {
        // The AVX-512 kernel computes whole tiles from its copy of the rows and throws the
        // sums of the rows past the last one away; here those rows of the copy hold NaN.
        for (rows, inner_size) in [
            (1, 3),
            (AVX512_TILE_ROWS / 2 + 1, 300),
            (13, 2 * INNER_BLOCK + 1),
        ] {
            let outputs = AVX512_TILE_COLUMNS + 3;
            let (input, weights, bias) = operands(rows, inner_size, outputs);
            let expected = linear_naive(&input, &weights, &bias).unwrap();
            for kernel in MicroKernel::all_available() {
                let mut output = Tensor2d::filled(rows, outputs, f32::NAN);
                let operation = "linear_register_blocked_into";
                let linear =
                    PackedLinear::new(operation, kernel, &input, &weights, &bias, &output).unwrap();
                let mut scratch = vec![f32::NAN; 4 * ROW_BLOCK * INNER_BLOCK];
                linear.compute_rows(0, output.as_mut_slice(), &mut scratch, &|_| {});
                let comparison = output.compare(&expected, TOLERANCE).unwrap();
                assert!(
                    comparison.passed(),
                    "{kernel:?} at {rows}×{inner_size}×{outputs}: {comparison}"
                );
            }
        }
    }

    #[test]
    fn the_portable_kernel_is_always_available_and_the_selected_one_is_available() {
        let available = MicroKernel::all_available();
        assert_eq!(available[0], MicroKernel(KernelChoice::Portable));
        assert!(available.contains(&MicroKernel::selected()));
        let names: Vec<&str> = available.iter().map(|kernel| kernel.name()).collect();
        assert!(names.contains(&micro_kernel_in_use()), "{names:?}");
    }

    #[test]
    fn packed_weights_pad_the_last_panel_with_zeros() {
        // 3 × 5 weights, values 1..=15, in panels of 4 columns: the second panel holds
        // column 4 and three columns of zeros.
        let weights = Tensor2d::from_vec(3, 5, (1..=15).map(|value| value as f32).collect());
        let packed = PackedWeights::new::<4>(&weights.unwrap());
        assert_eq!(packed.padded_outputs, 8);
        #[rustfmt::skip]
        let expected = [
            1.0, 2.0, 3.0, 4.0,    6.0, 7.0, 8.0, 9.0,    11.0, 12.0, 13.0, 14.0,
            5.0, 0.0, 0.0, 0.0,    10.0, 0.0, 0.0, 0.0,   15.0, 0.0, 0.0, 0.0,
        ];
        assert_eq!(packed.values, expected);
    }

    #[test]
    fn packed_inputs_interleave_the_rows_of_a_tile() {
        // Three rows of four values, inner block 1..3, tiles of two rows: the first tile
        // interleaves rows 0 and 1 step by step, the second holds row 2 and zeros.
        let input: Vec<f32> = (0..12).map(|value| value as f32).collect();
        let mut packed = Vec::new();
        pack_inputs::<2>(&input, 3, 4, 1, 2, &mut packed);
        assert_eq!(packed, [1.0, 5.0, 2.0, 6.0, 9.0, 0.0, 10.0, 0.0]);
    }

    #[test]
    fn the_output_is_the_bias_when_the_inner_dimension_is_empty() {
        let input = Tensor2d::zeros(3, 0);
        let weights = Tensor2d::zeros(0, 2);
        let bias = Tensor2d::from_vec(1, 2, vec![1.5, -2.5]).unwrap();
        let mut output = Tensor2d::filled(3, 2, f32::NAN);
        linear_register_blocked_into(&input, &weights, &bias, &mut output).unwrap();
        assert_eq!(output.as_slice(), [1.5, -2.5, 1.5, -2.5, 1.5, -2.5]);
    }

    #[test]
    fn shape_errors_are_the_ones_of_the_shape_check() {
        let (input, weights, _) = operands(2, 3, 4);
        let wide_bias = Tensor2d::zeros(1, 5);
        assert_eq!(
            linear_register_blocked(&input, &weights, &wide_bias),
            Err(check_linear_shapes(&input, &weights, &wide_bias).unwrap_err())
        );
        let bias = Tensor2d::zeros(1, 4);
        let mut wrong_output = Tensor2d::zeros(4, 2);
        assert!(matches!(
            linear_register_blocked_into(&input, &weights, &bias, &mut wrong_output),
            Err(ShapeError::Incompatible {
                operation: "linear_register_blocked_into",
                right_name: "output",
                right: (4, 2),
                ..
            })
        ));
    }
}
