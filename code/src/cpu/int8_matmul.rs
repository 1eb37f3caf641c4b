//! The int8 matrix product behind every int8 linear layer of the crate: int8 activations
//! times int8 weights, each product added exactly into an `i32` sum.
//!
//! Two 8-bit values multiply into at most 15 bits (−128 · −128 = 16 384), so a sum of
//! fewer than 131 072 such products cannot leave an `i32`: the integer arithmetic is
//! exact, and all the rounding of an int8 layer happens when values are quantised and when
//! each sum is scaled back to `f32`. The weights are stored one output per row
//! (`outputs × inputs`), so that both operands of every sum are read contiguously.
//!
//! [`matmul_int8_portable`] is the plain loop every faster version is checked against.
//! The fast versions follow the register-blocked `f32` linear layer
//! ([`crate::cpu::linear_register_blocked`]): the weights are packed into panels, a tile of
//! sums stays in registers, and the processor's widest integer instructions are picked when
//! the program runs. What changes is the instruction that does the work:
//!
//! - **AVX2** ([`avx2`]): `vpmaddwd` multiplies 16 pairs of 16-bit values and adds each
//!   pair into one of 8 `i32` lanes: 16 products per instruction, with the int8 values
//!   sign-extended to 16 bits first.
//! - **AVX-512 VNNI** ([`avx512_vnni`]): `vpdpbusd` multiplies 64 pairs of 8-bit values,
//!   adds them four by four and accumulates into 16 `i32` lanes: 64 products in one
//!   instruction, four times as many as an AVX-512 `f32` fused multiply-add.

use std::sync::OnceLock;

use thiserror::Error;

/// The longest sum that cannot overflow an `i32`: 2¹⁷ products of −128 · −128 would add up
/// to exactly 2³¹, one more than `i32::MAX`, so one product fewer.
pub const MAXIMUM_INPUTS: usize = (1 << 17) - 1;

#[cfg(target_arch = "x86_64")]
pub mod avx2;
#[cfg(target_arch = "x86_64")]
pub mod avx512_vnni;

/// Slices whose lengths do not describe the product they were given for.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Int8MatmulError {
    #[error(
        "the {name} hold {length} values, but a {rows}×{columns} matrix needs {}",
        rows * columns
    )]
    Length {
        name: &'static str,
        length: usize,
        rows: usize,
        columns: usize,
    },
    #[error(
        "a sum of {inputs} int8 products could overflow an i32; at most {MAXIMUM_INPUTS} inputs are supported"
    )]
    TooManyInputs { inputs: usize },
}

/// The shape of one int8 product: `rows × inputs` activations, `outputs × inputs` weights,
/// `rows × outputs` sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Int8Shape {
    pub rows: usize,
    pub inputs: usize,
    pub outputs: usize,
}

impl Int8Shape {
    /// Checks that the three slices have the lengths this shape needs.
    pub fn check(
        &self,
        activations: &[i8],
        weights: &[i8],
        sums: &[i32],
    ) -> Result<(), Int8MatmulError> {
        self.check_inputs()?;
        expect_length("activations", activations.len(), self.rows, self.inputs)?;
        expect_length("weights", weights.len(), self.outputs, self.inputs)?;
        expect_length("sums", sums.len(), self.rows, self.outputs)
    }

    /// Checks the activations and sums only (packed weights were checked when packed).
    fn check_rows(&self, activations: &[i8], sums: &[i32]) -> Result<(), Int8MatmulError> {
        self.check_inputs()?;
        expect_length("activations", activations.len(), self.rows, self.inputs)?;
        expect_length("sums", sums.len(), self.rows, self.outputs)
    }

    fn check_inputs(&self) -> Result<(), Int8MatmulError> {
        if self.inputs > MAXIMUM_INPUTS {
            return Err(Int8MatmulError::TooManyInputs {
                inputs: self.inputs,
            });
        }
        Ok(())
    }
}

fn expect_length(
    name: &'static str,
    length: usize,
    rows: usize,
    columns: usize,
) -> Result<(), Int8MatmulError> {
    if length == rows * columns {
        Ok(())
    } else {
        Err(Int8MatmulError::Length {
            name,
            length,
            rows,
            columns,
        })
    }
}

// ANCHOR: portable
/// `sums[r][o] = Σₖ activations[r][k] · weights[o][k]`, one multiply-add at a time.
pub fn matmul_int8_portable(
    shape: Int8Shape,
    activations: &[i8],
    weights: &[i8],
    sums: &mut [i32],
) -> Result<(), Int8MatmulError> {
    shape.check(activations, weights, sums)?;
    for row in 0..shape.rows {
        let activation_row = &activations[row * shape.inputs..(row + 1) * shape.inputs];
        for output in 0..shape.outputs {
            let weight_row = &weights[output * shape.inputs..(output + 1) * shape.inputs];
            sums[row * shape.outputs + output] = activation_row
                .iter()
                .zip(weight_row)
                .map(|(&a, &w)| a as i32 * w as i32)
                .sum();
        }
    }
    Ok(())
}
// ANCHOR_END: portable

// ANCHOR: dispatch
/// One of the int8 products this processor can run. The x86 variants are created only in
/// [`Int8CpuKernel::all_available`], right after `is_x86_feature_detected!` found their
/// instructions, so holding one proves that the processor can run it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Int8CpuKernel(KernelChoice);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KernelChoice {
    /// The plain loop, compiled for the baseline target.
    Portable,
    /// 16-bit multiply-adds (`vpmaddwd`), 4 rows × 16 outputs per tile.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// 8-bit dot products (`vpdpbusd`), 8 rows × 32 outputs per tile.
    #[cfg(target_arch = "x86_64")]
    Avx512Vnni,
}

impl Int8CpuKernel {
    /// Every int8 product this processor can run, slowest first.
    pub fn all_available() -> Vec<Int8CpuKernel> {
        #[allow(unused_mut)]
        let mut kernels = vec![Int8CpuKernel(KernelChoice::Portable)];
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx2") {
                kernels.push(Int8CpuKernel(KernelChoice::Avx2));
            }
            if is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512bw")
                && is_x86_feature_detected!("avx512vnni")
            {
                kernels.push(Int8CpuKernel(KernelChoice::Avx512Vnni));
            }
        }
        kernels
    }

    /// The fastest int8 product this processor can run, decided once per process.
    pub fn fastest() -> Int8CpuKernel {
        static FASTEST: OnceLock<Int8CpuKernel> = OnceLock::new();
        *FASTEST.get_or_init(|| {
            *Int8CpuKernel::all_available()
                .last()
                .expect("the portable loop is always available")
        })
    }

    /// A short name for reports and figure legends: `portable`, `avx2` or `avx512-vnni`.
    pub fn name(self) -> &'static str {
        match self.0 {
            KernelChoice::Portable => "portable",
            #[cfg(target_arch = "x86_64")]
            KernelChoice::Avx2 => "avx2",
            #[cfg(target_arch = "x86_64")]
            KernelChoice::Avx512Vnni => "avx512-vnni",
        }
    }
}

/// Weights of one int8 layer, arranged once for one kernel, so that a layer that runs many
/// times pays for the arrangement once (as [`crate::cpu::prepacked`] does for `f32`).
#[derive(Debug, Clone)]
pub struct PackedInt8Weights {
    inputs: usize,
    outputs: usize,
    layout: Layout,
}

#[derive(Debug, Clone)]
enum Layout {
    /// The weights as given, `outputs × inputs`.
    Portable(Vec<i8>),
    #[cfg(target_arch = "x86_64")]
    Avx2(avx2::PackedWeights),
    #[cfg(target_arch = "x86_64")]
    Avx512Vnni(avx512_vnni::PackedWeights),
}

impl PackedInt8Weights {
    /// Arranges `outputs × inputs` weights for the fastest kernel of this processor.
    pub fn new(
        inputs: usize,
        outputs: usize,
        weights: &[i8],
    ) -> Result<PackedInt8Weights, Int8MatmulError> {
        PackedInt8Weights::with_kernel(Int8CpuKernel::fastest(), inputs, outputs, weights)
    }

    /// Arranges `outputs × inputs` weights for `kernel`.
    pub fn with_kernel(
        kernel: Int8CpuKernel,
        inputs: usize,
        outputs: usize,
        weights: &[i8],
    ) -> Result<PackedInt8Weights, Int8MatmulError> {
        Int8Shape {
            rows: 0,
            inputs,
            outputs,
        }
        .check(&[], weights, &[])?;
        let layout = match kernel.0 {
            KernelChoice::Portable => Layout::Portable(weights.to_vec()),
            #[cfg(target_arch = "x86_64")]
            KernelChoice::Avx2 => Layout::Avx2(avx2::PackedWeights::new(inputs, outputs, weights)),
            #[cfg(target_arch = "x86_64")]
            KernelChoice::Avx512Vnni => {
                Layout::Avx512Vnni(avx512_vnni::PackedWeights::new(inputs, outputs, weights))
            }
        };
        Ok(PackedInt8Weights {
            inputs,
            outputs,
            layout,
        })
    }

    pub fn inputs(&self) -> usize {
        self.inputs
    }

    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// `sums[r][o] = Σₖ activations[r][k] · weights[o][k]` for `rows` rows of activations.
    pub fn multiply(
        &self,
        rows: usize,
        activations: &[i8],
        sums: &mut [i32],
    ) -> Result<(), Int8MatmulError> {
        let shape = Int8Shape {
            rows,
            inputs: self.inputs,
            outputs: self.outputs,
        };
        match &self.layout {
            Layout::Portable(weights) => matmul_int8_portable(shape, activations, weights, sums),
            #[cfg(target_arch = "x86_64")]
            Layout::Avx2(packed) => {
                shape.check_rows(activations, sums)?;
                // SAFETY: an `Avx2` layout is only built for a `KernelChoice::Avx2`, which
                // `all_available` creates only after `is_x86_feature_detected!("avx2")`.
                unsafe { avx2::multiply(packed, rows, activations, sums) };
                Ok(())
            }
            #[cfg(target_arch = "x86_64")]
            Layout::Avx512Vnni(packed) => {
                shape.check_rows(activations, sums)?;
                // SAFETY: an `Avx512Vnni` layout is only built for a
                // `KernelChoice::Avx512Vnni`, which `all_available` creates only after
                // detecting AVX-512F, AVX-512BW and AVX-512 VNNI on this processor.
                unsafe { avx512_vnni::multiply(packed, rows, activations, sums) };
                Ok(())
            }
        }
    }
}

/// The fastest int8 product this processor supports: the weights are packed for it on
/// every call. A layer that runs many times packs them once with [`PackedInt8Weights`].
pub fn matmul_int8(
    shape: Int8Shape,
    activations: &[i8],
    weights: &[i8],
    sums: &mut [i32],
) -> Result<(), Int8MatmulError> {
    matmul_int8_with(Int8CpuKernel::fastest(), shape, activations, weights, sums)
}

/// [`matmul_int8`] with a chosen kernel, for tests and benchmarks.
pub fn matmul_int8_with(
    kernel: Int8CpuKernel,
    shape: Int8Shape,
    activations: &[i8],
    weights: &[i8],
    sums: &mut [i32],
) -> Result<(), Int8MatmulError> {
    shape.check(activations, weights, sums)?;
    if kernel.0 == KernelChoice::Portable {
        return matmul_int8_portable(shape, activations, weights, sums);
    }
    let packed = PackedInt8Weights::with_kernel(kernel, shape.inputs, shape.outputs, weights)?;
    packed.multiply(shape.rows, activations, sums)
}
// ANCHOR_END: dispatch

// ANCHOR: pack
/// Packs `outputs × inputs` weights into panels of `PANEL` outputs: for each panel, for
/// each group of `GROUP` consecutive inputs, `PANEL` words, one per output, each holding
/// that output's `GROUP` weights as `word` packs them. A vector load of the words of one
/// group then holds the same inputs for `PANEL` different outputs. Missing outputs and
/// inputs (the last panel, the last group) are zeros.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn pack_weight_panels<const PANEL: usize, const GROUP: usize>(
    inputs: usize,
    outputs: usize,
    weights: &[i8],
    word: fn([i8; GROUP]) -> i32,
) -> Vec<[i32; PANEL]> {
    let groups = inputs.div_ceil(GROUP);
    let panels = outputs.div_ceil(PANEL);
    let mut packed = vec![[0; PANEL]; panels * groups];
    for output in 0..outputs {
        let (panel, lane) = (output / PANEL, output % PANEL);
        let weight_row = &weights[output * inputs..(output + 1) * inputs];
        for (group, values) in weight_row.chunks(GROUP).enumerate() {
            let mut padded = [0; GROUP];
            padded[..values.len()].copy_from_slice(values);
            packed[panel * groups + group][lane] = word(padded);
        }
    }
    packed
}

/// Packs `rows` rows of activations (each `inputs` long) into `packed` for tiles of
/// `tile_rows` rows: for each tile, for each group of `GROUP` inputs, one word per row of
/// the tile. The micro-kernel broadcasts each word to every lane, so it meets each panel
/// word with the same inputs of its own row. The last tile has the rows that are left.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn pack_activation_tiles<const GROUP: usize>(
    rows: usize,
    inputs: usize,
    activations: &[i8],
    tile_rows: usize,
    word: fn([i8; GROUP]) -> i32,
    packed: &mut Vec<i32>,
) {
    let groups = inputs.div_ceil(GROUP);
    packed.clear();
    packed.resize(rows * groups, 0);
    for first_row in (0..rows).step_by(tile_rows) {
        let rows_here = tile_rows.min(rows - first_row);
        let tile = &mut packed[first_row * groups..(first_row + rows_here) * groups];
        for row_in_tile in 0..rows_here {
            let row = first_row + row_in_tile;
            let activation_row = &activations[row * inputs..(row + 1) * inputs];
            for (group, values) in activation_row.chunks(GROUP).enumerate() {
                let mut padded = [0; GROUP];
                padded[..values.len()].copy_from_slice(values);
                tile[group * rows_here + row_in_tile] = word(padded);
            }
        }
    }
}
// ANCHOR_END: pack

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random_values(count: usize, generator: &mut ChaCha8Rng) -> Vec<i8> {
        (0..count).map(|_| generator.random::<i8>()).collect()
    }

    /// Runs every kernel this processor has on the same operands, with the sums poisoned
    /// first, and checks each against the portable loop exactly.
    fn check_every_kernel(shape: Int8Shape, activations: &[i8], weights: &[i8]) {
        let mut expected = vec![0; shape.rows * shape.outputs];
        matmul_int8_portable(shape, activations, weights, &mut expected).unwrap();
        for kernel in Int8CpuKernel::all_available() {
            let mut sums = vec![i32::MIN; shape.rows * shape.outputs];
            matmul_int8_with(kernel, shape, activations, weights, &mut sums).unwrap();
            assert!(
                sums == expected,
                "{} differs from the portable loop at {shape:?}",
                kernel.name()
            );
        }
    }

    #[test]
    fn every_kernel_equals_the_portable_loop_on_random_shapes() {
        let mut generator = ChaCha8Rng::seed_from_u64(14);
        let shapes = [
            (1, 1, 1),
            (1, 64, 10),
            (3, 5, 7),
            (2, 3, 33),
            (8, 256, 32),
            (9, 63, 17),
            (13, 67, 65),
            (130, 129, 70),
            (257, 300, 3),
            (4, 1000, 100),
            (5, 0, 4),
            (0, 7, 3),
        ];
        for (rows, inputs, outputs) in shapes {
            let shape = Int8Shape {
                rows,
                inputs,
                outputs,
            };
            let activations = random_values(rows * inputs, &mut generator);
            let weights = random_values(outputs * inputs, &mut generator);
            check_every_kernel(shape, &activations, &weights);
        }
        for _ in 0..30 {
            let shape = Int8Shape {
                rows: generator.random_range(1..40),
                inputs: generator.random_range(1..300),
                outputs: generator.random_range(1..80),
            };
            let activations = random_values(shape.rows * shape.inputs, &mut generator);
            let weights = random_values(shape.outputs * shape.inputs, &mut generator);
            check_every_kernel(shape, &activations, &weights);
        }
    }

    #[test]
    fn every_kernel_sums_extreme_values_exactly() {
        // The largest sums an i32 holds: every product −128 · −128 = 16 384, as many as
        // allowed, then −128 · 127 the other way, and a mix of both signs.
        for (activation, weight) in [(-128i8, -128i8), (-128, 127), (127, -128), (127, 127)] {
            let shape = Int8Shape {
                rows: 2,
                inputs: MAXIMUM_INPUTS,
                outputs: 3,
            };
            let activations = vec![activation; shape.rows * shape.inputs];
            let weights = vec![weight; shape.outputs * shape.inputs];
            check_every_kernel(shape, &activations, &weights);
            let mut sums = vec![0; 6];
            matmul_int8(shape, &activations, &weights, &mut sums).unwrap();
            let product = activation as i64 * weight as i64 * MAXIMUM_INPUTS as i64;
            assert!(sums.iter().all(|&sum| sum as i64 == product));
        }
        let shape = Int8Shape {
            rows: 3,
            inputs: 200,
            outputs: 40,
        };
        let extremes = |index: usize| if index.is_multiple_of(3) { 127 } else { -128 };
        let activations: Vec<i8> = (0..600).map(extremes).collect();
        let weights: Vec<i8> = (0..8000).map(|index| extremes(index / 7)).collect();
        check_every_kernel(shape, &activations, &weights);
    }

    #[test]
    fn packed_weights_give_the_same_sums_every_time() {
        let mut generator = ChaCha8Rng::seed_from_u64(3);
        let (inputs, outputs) = (77, 45);
        let weights = random_values(inputs * outputs, &mut generator);
        for kernel in Int8CpuKernel::all_available() {
            let packed = PackedInt8Weights::with_kernel(kernel, inputs, outputs, &weights).unwrap();
            for rows in [1, 6, 33] {
                let activations = random_values(rows * inputs, &mut generator);
                let shape = Int8Shape {
                    rows,
                    inputs,
                    outputs,
                };
                let mut expected = vec![0; rows * outputs];
                matmul_int8_portable(shape, &activations, &weights, &mut expected).unwrap();
                let mut sums = vec![i32::MIN; rows * outputs];
                packed.multiply(rows, &activations, &mut sums).unwrap();
                assert_eq!(sums, expected, "{}", kernel.name());
            }
            let mut sums = vec![0; 2 * outputs];
            let error = packed.multiply(2, &[0; 10], &mut sums).unwrap_err();
            assert_eq!(
                error.to_string(),
                "the activations hold 10 values, but a 2×77 matrix needs 154"
            );
            let error = packed.multiply(2, &[0; 154], &mut sums[1..]).unwrap_err();
            assert_eq!(
                error.to_string(),
                "the sums hold 89 values, but a 2×45 matrix needs 90"
            );
        }
    }

    #[test]
    fn the_fastest_kernel_is_the_last_available_one() {
        let available = Int8CpuKernel::all_available();
        assert_eq!(available[0].name(), "portable");
        assert_eq!(Int8CpuKernel::fastest(), *available.last().unwrap());
    }

    #[test]
    fn too_many_inputs_is_a_typed_error() {
        let shape = Int8Shape {
            rows: 0,
            inputs: MAXIMUM_INPUTS + 1,
            outputs: 0,
        };
        let error = matmul_int8(shape, &[], &[], &mut []).unwrap_err();
        assert_eq!(
            error,
            Int8MatmulError::TooManyInputs {
                inputs: MAXIMUM_INPUTS + 1
            }
        );
        assert!(error.to_string().contains("could overflow an i32"));
        assert!(PackedInt8Weights::new(MAXIMUM_INPUTS + 1, 0, &[]).is_err());
    }

    #[test]
    fn extreme_values_sum_exactly() {
        let shape = Int8Shape {
            rows: 1,
            inputs: 1000,
            outputs: 2,
        };
        let activations = vec![-128i8; 1000];
        let mut weights = vec![-128i8; 1000];
        weights.extend(vec![127i8; 1000]);
        let mut sums = vec![0; 2];
        matmul_int8(shape, &activations, &weights, &mut sums).unwrap();
        assert_eq!(sums, vec![1000 * 16384, -1000 * 128 * 127]);
    }

    #[test]
    fn wrong_lengths_are_typed_errors() {
        let shape = Int8Shape {
            rows: 2,
            inputs: 3,
            outputs: 4,
        };
        let mut sums = vec![0; 8];
        let error = matmul_int8(shape, &[0; 5], &[0; 12], &mut sums).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the activations hold 5 values, but a 2×3 matrix needs 6"
        );
    }
}
