//! The CPU's limits, measured: how many floating-point operations per second its vector
//! units can do, on one core and on all, and how fast one core (and all) can read from
//! each level of the memory hierarchy. Every CPU figure quotes its speed as a fraction of
//! these.
//!
//! The arithmetic peak needs *independent* fused multiply-adds in the widest vectors the
//! processor has. An FMA takes about four cycles to produce its result, and a core can
//! start one or two every cycle, so a single chain of dependent FMAs (each needing the
//! previous result) would show a quarter or an eighth of the peak. [`CHAINS`] separate
//! accumulators keep every unit busy. The width is chosen at run time, as for the
//! micro-kernel: AVX-512 (16 floats), AVX2 with FMA (8), or the portable build.

use std::hint::black_box;
use std::time::Instant;

use rayon::prelude::*;

/// Independent accumulators: more than latency × units (4 × 2) on any current core.
pub const CHAINS: usize = 16;

/// The vector instructions the peak was measured with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VectorWidth {
    Avx512,
    Avx2Fma,
    Portable,
}

impl VectorWidth {
    /// The widest this processor can run.
    pub fn widest() -> VectorWidth {
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx512f") {
                return VectorWidth::Avx512;
            }
            if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
                return VectorWidth::Avx2Fma;
            }
        }
        VectorWidth::Portable
    }

    pub fn name(self) -> &'static str {
        match self {
            VectorWidth::Avx512 => "AVX-512 FMA",
            VectorWidth::Avx2Fma => "AVX2 FMA",
            VectorWidth::Portable => "portable (SSE2 multiply and add)",
        }
    }
}

// ANCHOR: fma_chains
/// `CHAINS` independent chains of `x = x · m + a`, `LANES` floats wide, `steps` times,
/// for processors without FMA (a multiply and an add). Returns a value that depends on
/// every chain, so that the optimiser cannot drop the work.
#[inline(always)]
fn fma_chains<const LANES: usize>(steps: u64) -> f32 {
    let mut chains = [[1.0_f32; LANES]; CHAINS];
    let multiplier = black_box(0.999_999_9_f32);
    let addend = black_box(1e-7_f32);
    for _ in 0..steps {
        for chain in &mut chains {
            for value in chain.iter_mut() {
                *value = *value * multiplier + addend;
            }
        }
    }
    chains.iter().flatten().sum()
}
// ANCHOR_END: fma_chains

/// The chains in AVX-512 registers, written with the instructions themselves
/// (`vfmadd…ps zmm`), so that the measurement does not depend on what the optimiser
/// makes of a loop.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn fma_chains_avx512(steps: u64) -> f32 {
    use std::arch::x86_64::{
        __m512, _mm512_add_ps, _mm512_fmadd_ps, _mm512_reduce_add_ps, _mm512_set1_ps,
    };
    let multiplier = _mm512_set1_ps(black_box(0.999_999_9));
    let addend = _mm512_set1_ps(black_box(1e-7));
    let mut chains: [__m512; CHAINS] = [_mm512_set1_ps(1.0); CHAINS];
    for _ in 0..steps {
        for chain in &mut chains {
            *chain = _mm512_fmadd_ps(*chain, multiplier, addend);
        }
    }
    let total = chains
        .iter()
        .fold(_mm512_set1_ps(0.0), |sum, &chain| _mm512_add_ps(sum, chain));
    _mm512_reduce_add_ps(total)
}

/// The chains in AVX2 registers (`vfmadd…ps ymm`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn fma_chains_avx2(steps: u64) -> f32 {
    use std::arch::x86_64::{
        __m256, _mm256_add_ps, _mm256_fmadd_ps, _mm256_set1_ps, _mm256_storeu_ps,
    };
    let multiplier = _mm256_set1_ps(black_box(0.999_999_9));
    let addend = _mm256_set1_ps(black_box(1e-7));
    let mut chains: [__m256; CHAINS] = [_mm256_set1_ps(1.0); CHAINS];
    for _ in 0..steps {
        for chain in &mut chains {
            *chain = _mm256_fmadd_ps(*chain, multiplier, addend);
        }
    }
    let total = chains
        .iter()
        .fold(_mm256_set1_ps(0.0), |sum, &chain| _mm256_add_ps(sum, chain));
    let mut lanes = [0.0_f32; 8];
    // SAFETY: `lanes` has room for the 8 floats the store writes.
    unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), total) };
    lanes.iter().sum()
}

/// Runs the chains with the given width; returns the floating-point operations done.
fn run_chains(width: VectorWidth, steps: u64) -> f64 {
    let (result, lanes) = match width {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `VectorWidth::widest` only returns these after detecting the features;
        // `measure_peak` takes its width from there.
        VectorWidth::Avx512 => (unsafe { fma_chains_avx512(steps) }, 16),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above, for AVX2 and FMA.
        VectorWidth::Avx2Fma => (unsafe { fma_chains_avx2(steps) }, 8),
        _ => (fma_chains::<4>(steps), 4),
    };
    black_box(result);
    // Two operations (a multiply and an add) per lane, chain and step.
    2.0 * (lanes * CHAINS) as f64 * steps as f64
}

/// Floating-point operations per second of one measurement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeakMeasurement {
    pub width: VectorWidth,
    pub threads: usize,
    pub gigaflops_per_second: f64,
}

// ANCHOR: measure_peak
/// The fp32 arithmetic peak on `threads` threads (1: one core; the rayon pool's size: all
/// of them), each running the chains for about `seconds`. The best of `tries` tries.
pub fn measure_peak(threads: usize, seconds: f64, tries: usize) -> PeakMeasurement {
    let width = VectorWidth::widest();
    let threads = threads.max(1);
    // Calibrate: how many steps take about `seconds` on one thread.
    let mut steps = 1_000_u64;
    loop {
        let start = Instant::now();
        run_chains(width, steps);
        let elapsed = start.elapsed().as_secs_f64();
        if elapsed > seconds / 4.0 || steps > 1 << 40 {
            steps = ((steps as f64) * seconds / elapsed.max(1e-9)).max(1.0) as u64;
            break;
        }
        steps *= 4;
    }
    let mut best: f64 = 0.0;
    for _ in 0..tries.max(1) {
        let start = Instant::now();
        let operations: f64 = (0..threads)
            .into_par_iter()
            .map(|_| run_chains(width, steps))
            .sum();
        best = best.max(operations / start.elapsed().as_secs_f64() / 1e9);
    }
    PeakMeasurement {
        width,
        threads,
        gigaflops_per_second: best,
    }
}
// ANCHOR_END: measure_peak

// ANCHOR: read_bandwidth
/// Sums `values` with 64 accumulators, so that the loads, not the additions, set the
/// pace: the portable version; the AVX builds below use the vector loads directly.
fn sum_values(values: &[f32]) -> f32 {
    let mut sums = [0.0_f32; 64];
    let (chunks, rest) = values.as_chunks::<64>();
    for chunk in chunks {
        for (sum, &value) in sums.iter_mut().zip(chunk) {
            *sum += value;
        }
    }
    sums.iter().sum::<f32>() + rest.iter().sum::<f32>()
}

/// [`sum_values`] with 64-byte loads (a cache line each) into 8 AVX-512 registers of
/// sums: enough independent additions for two loads per cycle.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn sum_values_avx512(values: &[f32]) -> f32 {
    use std::arch::x86_64::{
        _mm512_add_ps, _mm512_loadu_ps, _mm512_reduce_add_ps, _mm512_setzero_ps,
    };
    let mut sums = [_mm512_setzero_ps(); 8];
    let (chunks, rest) = values.as_chunks::<128>();
    for chunk in chunks {
        for (index, sum) in sums.iter_mut().enumerate() {
            // SAFETY: the chunk holds 128 floats; this reads 16 of them from 16 · index.
            let loaded = unsafe { _mm512_loadu_ps(chunk.as_ptr().add(16 * index)) };
            *sum = _mm512_add_ps(*sum, loaded);
        }
    }
    let total = _mm512_add_ps(
        _mm512_add_ps(sums[0], sums[1]),
        _mm512_add_ps(sums[2], sums[3]),
    );
    _mm512_reduce_add_ps(total) + rest.iter().sum::<f32>()
}

/// [`sum_values`] with 32-byte AVX loads.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sum_values_avx2(values: &[f32]) -> f32 {
    use std::arch::x86_64::{_mm256_add_ps, _mm256_loadu_ps, _mm256_setzero_ps, _mm256_storeu_ps};
    let mut sums = [_mm256_setzero_ps(); 8];
    let (chunks, rest) = values.as_chunks::<64>();
    for chunk in chunks {
        for (index, sum) in sums.iter_mut().enumerate() {
            // SAFETY: the chunk holds 64 floats; this reads 8 of them from 8 · index.
            let loaded = unsafe { _mm256_loadu_ps(chunk.as_ptr().add(8 * index)) };
            *sum = _mm256_add_ps(*sum, loaded);
        }
    }
    let mut lanes = [0.0_f32; 8];
    let total = sums
        .iter()
        .fold(_mm256_setzero_ps(), |total, &sum| _mm256_add_ps(total, sum));
    // SAFETY: `lanes` has room for the 8 floats the store writes.
    unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), total) };
    lanes.iter().sum::<f32>() + rest.iter().sum::<f32>()
}

fn sum_widest(width: VectorWidth, values: &[f32]) -> f32 {
    match width {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the width comes from `VectorWidth::widest`, which detected AVX-512.
        VectorWidth::Avx512 => unsafe { sum_values_avx512(values) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above, for AVX2.
        VectorWidth::Avx2Fma => unsafe { sum_values_avx2(values) },
        _ => sum_values(values),
    }
}

/// Read bandwidth in GB/s (10⁹ bytes per second) when each of `threads` threads reads
/// its own buffer of `bytes` over and over: from L1, L2, L3 or memory depending on the
/// size. The best of `tries` tries of about `seconds` each.
pub fn read_bandwidth(bytes: usize, threads: usize, seconds: f64, tries: usize) -> f64 {
    let width = VectorWidth::widest();
    let threads = threads.max(1);
    let floats = (bytes / size_of::<f32>()).max(64);
    let buffers: Vec<Vec<f32>> = (0..threads).map(|_| vec![1.0_f32; floats]).collect();
    // Passes per try, from one timed pass.
    let start = Instant::now();
    black_box(sum_widest(width, &buffers[0]));
    let one_pass = start.elapsed().as_secs_f64().max(1e-9);
    let passes = ((seconds / one_pass) as usize).clamp(1, 1 << 24);
    let mut best: f64 = 0.0;
    for _ in 0..tries.max(1) {
        let start = Instant::now();
        buffers.par_iter().for_each(|buffer| {
            for _ in 0..passes {
                black_box(sum_widest(width, black_box(buffer)));
            }
        });
        let total_bytes = (threads * passes * floats * size_of::<f32>()) as f64;
        best = best.max(total_bytes / start.elapsed().as_secs_f64() / 1e9);
    }
    best
}
// ANCHOR_END: read_bandwidth

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chains_compute_what_they_say() {
        // One step from 1.0: 1 · m + a, for each of the CHAINS × LANES values.
        let expected = CHAINS as f32 * 16.0 * (0.999_999_9_f32 + 1e-7);
        let widest = VectorWidth::widest();
        assert!((fma_chains::<16>(1) - expected).abs() < 1e-3);
        assert!(run_chains(widest, 10) > 0.0);
    }

    #[test]
    fn a_short_measurement_is_positive_and_finite() {
        let one = measure_peak(1, 0.002, 1);
        assert!(one.gigaflops_per_second.is_finite() && one.gigaflops_per_second > 0.0);
        let bandwidth = read_bandwidth(64 * 1024, 2, 0.002, 1);
        assert!(bandwidth.is_finite() && bandwidth > 0.0);
    }
}
