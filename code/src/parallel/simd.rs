//! SIMD: one instruction, several values. Summing a slice of floats four ways.
//!
//! 1. [`sum_in_order`]: `iter().sum()`, one addition after another. Floating-point
//!    addition is not associative (`(a + b) + c` can differ from `a + (b + c)` in the last
//!    bit), so the compiler must keep this exact order: one running sum, one addition at a
//!    time, each waiting for the one before. It does **not** vectorise.
//! 2. [`sum_in_lanes`]: the same values added into [`LANES`] separate running sums, one
//!    per position modulo `LANES`, combined at the end. This *is* a different order, written
//!    out in the source, so the compiler is free to keep the `LANES` sums in vector
//!    registers and add `LANES` values per instruction: it auto-vectorises, for whatever
//!    vector width the build targets (SSE2's 4 floats on the default x86-64 target).
//! 3. [`SumKernel::Avx2`]: the same idea written with `std::arch` intrinsics, 8 floats per
//!    instruction and four registers of sums, for processors with AVX2.
//! 4. [`SumKernel::Avx512`]: 16 floats per instruction, and a masked load for the tail.
//!
//! The intrinsics are only compiled into functions marked `#[target_feature(enable = …)]`,
//! and only called after `is_x86_feature_detected!` found the feature on the processor
//! running the program, the same run-time dispatch as the crate's fast CPU linear layer
//! (`crate::cpu::linear_register_blocked`). On other architectures the AVX kernels report
//! that they are unavailable, and the portable ones run everywhere.
//!
//! All four add the same values, in different orders, so they agree only up to rounding:
//! the tests compare each with a sum in `f64`, with a bound proportional to the sum of
//! absolute values.

use crate::parallel::workloads::DataParallelError;

// ANCHOR: sum_in_order
/// One running sum, one value at a time: the order the source says, so no vectors.
pub fn sum_in_order(values: &[f32]) -> f32 {
    values.iter().sum()
}
// ANCHOR_END: sum_in_order

/// How many running sums [`sum_in_lanes`] keeps: 16 floats, two AVX2 registers, four SSE
/// registers or one AVX-512 register, enough independent additions to hide the latency of
/// each one.
pub const LANES: usize = 16;

// ANCHOR: sum_in_lanes
/// `LANES` running sums, one per position modulo `LANES`: a fixed array the compiler keeps
/// in vector registers, and an addition the compiler may now do `LANES` at a time.
pub fn sum_in_lanes(values: &[f32]) -> f32 {
    let mut sums = [0.0f32; LANES];
    let (chunks, tail) = values.as_chunks::<LANES>();
    for chunk in chunks {
        for lane in 0..LANES {
            sums[lane] += chunk[lane];
        }
    }
    let mut total: f32 = sums.iter().sum();
    for &value in tail {
        total += value;
    }
    total
}
// ANCHOR_END: sum_in_lanes

// ANCHOR: sum_kernel
/// The four ways to sum, as a choice a benchmark can loop over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SumKernel {
    InOrder,
    InLanes,
    Avx2,
    Avx512,
}

impl SumKernel {
    pub const ALL: [SumKernel; 4] = [
        SumKernel::InOrder,
        SumKernel::InLanes,
        SumKernel::Avx2,
        SumKernel::Avx512,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SumKernel::InOrder => "in order (scalar)",
            SumKernel::InLanes => "16 lanes (auto-vectorised)",
            SumKernel::Avx2 => "AVX2 intrinsics",
            SumKernel::Avx512 => "AVX-512 intrinsics",
        }
    }

    /// Whether this processor can run the kernel. `is_x86_feature_detected!` asks the
    /// processor (`cpuid`) once and caches the answer, so this is cheap to call.
    pub fn is_available(self) -> bool {
        match self {
            SumKernel::InOrder | SumKernel::InLanes => true,
            #[cfg(target_arch = "x86_64")]
            SumKernel::Avx2 => is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            SumKernel::Avx512 => is_x86_feature_detected!("avx512f"),
            #[cfg(not(target_arch = "x86_64"))]
            SumKernel::Avx2 | SumKernel::Avx512 => false,
        }
    }

    /// The kernels this processor can run.
    pub fn available() -> Vec<SumKernel> {
        SumKernel::ALL
            .into_iter()
            .filter(|kernel| kernel.is_available())
            .collect()
    }

    /// The sum of `values`, or an error naming the instructions this processor lacks.
    pub fn sum(self, values: &[f32]) -> Result<f32, DataParallelError> {
        if !self.is_available() {
            return Err(DataParallelError::MissingInstructions {
                kernel: self.name(),
            });
        }
        Ok(match self {
            SumKernel::InOrder => sum_in_order(values),
            SumKernel::InLanes => sum_in_lanes(values),
            // SAFETY (both): `is_available` just found the instructions on this processor.
            #[cfg(target_arch = "x86_64")]
            SumKernel::Avx2 => unsafe { x86::sum_avx2(values) },
            #[cfg(target_arch = "x86_64")]
            SumKernel::Avx512 => unsafe { x86::sum_avx512(values) },
            #[cfg(not(target_arch = "x86_64"))]
            SumKernel::Avx2 | SumKernel::Avx512 => unreachable!("never available here"),
        })
    }
}

/// The fastest sum this processor offers: AVX-512, else AVX2, else the portable lanes.
pub fn sum_fastest(values: &[f32]) -> f32 {
    for kernel in [SumKernel::Avx512, SumKernel::Avx2] {
        if let Ok(total) = kernel.sum(values) {
            return total;
        }
    }
    sum_in_lanes(values)
}
// ANCHOR_END: sum_kernel

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m256, __m512, _mm_add_ps, _mm_cvtss_f32, _mm_hadd_ps, _mm256_add_ps,
        _mm256_castps256_ps128, _mm256_extractf128_ps, _mm256_loadu_ps, _mm256_setzero_ps,
        _mm512_add_ps, _mm512_loadu_ps, _mm512_mask_loadu_ps, _mm512_reduce_add_ps,
        _mm512_setzero_ps,
    };

    // ANCHOR: sum_avx2
    /// Four registers of eight sums each: 32 values per iteration, four independent chains
    /// of additions so the adder never waits for its own previous result.
    ///
    /// # Safety
    ///
    /// The processor must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn sum_avx2(values: &[f32]) -> f32 {
        let mut sums: [__m256; 4] = [_mm256_setzero_ps(); 4];
        let (blocks, tail) = values.as_chunks::<32>();
        for block in blocks {
            for (register, sum) in sums.iter_mut().enumerate() {
                // SAFETY: the block has 32 values, so 8 from `register * 8` are inside it;
                // `loadu` accepts any alignment.
                let loaded = unsafe { _mm256_loadu_ps(block.as_ptr().add(register * 8)) };
                *sum = _mm256_add_ps(*sum, loaded);
            }
        }
        let total = _mm256_add_ps(
            _mm256_add_ps(sums[0], sums[1]),
            _mm256_add_ps(sums[2], sums[3]),
        );
        // Eight lanes to one: add the two halves, then pairs within the half twice.
        let half = _mm_add_ps(
            _mm256_castps256_ps128(total),
            _mm256_extractf128_ps::<1>(total),
        );
        let quarter = _mm_hadd_ps(half, half);
        let mut result = _mm_cvtss_f32(_mm_hadd_ps(quarter, quarter));
        for &value in tail {
            result += value;
        }
        result
    }
    // ANCHOR_END: sum_avx2

    // ANCHOR: sum_avx512
    /// Four registers of sixteen sums: 64 values per iteration. The tail of fewer than 16
    /// values is read with a masked load, whose disabled lanes read as zero and touch no
    /// memory, so there is no scalar loop at the end.
    ///
    /// # Safety
    ///
    /// The processor must support AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn sum_avx512(values: &[f32]) -> f32 {
        let mut sums: [__m512; 4] = [_mm512_setzero_ps(); 4];
        let (blocks, mut tail) = values.as_chunks::<64>();
        for block in blocks {
            for (register, sum) in sums.iter_mut().enumerate() {
                // SAFETY: 16 values from `register * 16` lie inside the 64-value block.
                let loaded = unsafe { _mm512_loadu_ps(block.as_ptr().add(register * 16)) };
                *sum = _mm512_add_ps(*sum, loaded);
            }
        }
        while !tail.is_empty() {
            let count = tail.len().min(16);
            let mask = if count == 16 {
                u16::MAX
            } else {
                (1u16 << count) - 1
            };
            // SAFETY: the mask enables only the first `count` lanes, all inside `tail`;
            // disabled lanes are not read and come back as 0.0.
            let loaded = unsafe { _mm512_mask_loadu_ps(_mm512_setzero_ps(), mask, tail.as_ptr()) };
            sums[0] = _mm512_add_ps(sums[0], loaded);
            tail = &tail[count..];
        }
        let total = _mm512_add_ps(
            _mm512_add_ps(sums[0], sums[1]),
            _mm512_add_ps(sums[2], sums[3]),
        );
        _mm512_reduce_add_ps(total)
    }
    // ANCHOR_END: sum_avx512
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::Tensor2d;

    /// The sum in `f64`, and the sum of absolute values that bounds any `f32` order's error.
    fn reference(values: &[f32]) -> (f64, f64) {
        let exact = values.iter().map(|&value| f64::from(value)).sum();
        let magnitude = values.iter().map(|&value| f64::from(value).abs()).sum();
        (exact, magnitude)
    }

    #[test]
    fn every_available_kernel_sums_every_length_to_within_rounding() {
        // 0 and 1, lengths around every block size (16, 32, 64), and long ones.
        let mut lengths: Vec<usize> = (0..=70).collect();
        lengths.extend([127, 128, 129, 1000, 4095, 4096, 4097, 100_003]);
        for length in lengths {
            let values = Tensor2d::random(1, length, -1.0..=1.0, length as u64).into_vec();
            let (exact, magnitude) = reference(&values);
            // Any order of n additions is off by at most about n · ε · Σ|x|.
            let bound = (length as f64 + 1.0) * f64::from(f32::EPSILON) * magnitude + 1e-30;
            for kernel in SumKernel::available() {
                let total = kernel.sum(&values).unwrap();
                assert!(
                    (f64::from(total) - exact).abs() <= bound,
                    "{} on {length} values: {total} against {exact}",
                    kernel.name()
                );
            }
            assert_eq!(
                sum_fastest(&values),
                SumKernel::available().last().unwrap().sum(&values).unwrap()
            );
        }
    }

    #[test]
    fn every_value_counts_once_in_every_lane_and_tail_position() {
        // A single 1.0 among zeros: an exact sum for any order, so a kernel that skips or
        // doubles a position is caught at that position.
        for length in [1, 15, 16, 17, 31, 33, 63, 64, 65, 100] {
            for position in 0..length {
                let mut values = vec![0.0f32; length];
                values[position] = 1.0;
                for kernel in SumKernel::available() {
                    assert_eq!(
                        kernel.sum(&values).unwrap(),
                        1.0,
                        "{} {length} {position}",
                        kernel.name()
                    );
                }
            }
        }
        for kernel in SumKernel::available() {
            assert_eq!(kernel.sum(&[]).unwrap(), 0.0, "{}", kernel.name());
        }
    }

    #[test]
    fn the_order_really_differs_between_in_order_and_lanes() {
        // 2²⁴ + 1 + 1 + … in order loses every 1.0; in lanes, the ones in the other lanes
        // add up first and survive. The same values, two different sums.
        let mut values = vec![1.0f32; 64];
        values[0] = 16_777_216.0;
        assert_eq!(sum_in_order(&values), 16_777_216.0);
        assert_eq!(sum_in_lanes(&values), 16_777_216.0 + 60.0);
    }

    #[test]
    fn unavailable_kernels_are_errors_not_crashes() {
        for kernel in SumKernel::ALL {
            if !kernel.is_available() {
                assert!(matches!(
                    kernel.sum(&[1.0]),
                    Err(DataParallelError::MissingInstructions { .. })
                ));
            }
        }
    }
}
