//! The same two loops, timed: build this program as a debug build, as a release build, and
//! as a release build for the CPU it runs on, and compare what it prints.
//!
//! ```sh
//! cargo run --example build_profiles
//! cargo run --release --example build_profiles
//! RUSTFLAGS="-C target-cpu=native" cargo run --release --example build_profiles
//! ```
//!
//! It uses nothing but the standard library, so it also runs on the Rust playground
//! (choose "Release" there to see the difference).

use std::hint::black_box;
use std::time::{Duration, Instant};

/// `output[i] += scale * input[i]` with an iterator: vectorised in a release build.
fn scale_and_add(scale: f32, input: &[f32], output: &mut [f32]) {
    for (output, input) in output.iter_mut().zip(input) {
        *output += scale * input;
    }
}

/// A dot product with 16 running sums, which a release build can vectorise.
fn dot(left: &[f32], right: &[f32]) -> f32 {
    let mut sums = [0.0f32; 16];
    for (left, right) in left.chunks_exact(16).zip(right.chunks_exact(16)) {
        for lane in 0..16 {
            sums[lane] += left[lane] * right[lane];
        }
    }
    sums.iter().sum()
}

/// The median over 7 samples of the time per value, each sample repeating `call` for at
/// least 10 ms.
fn nanoseconds_per_value(values: usize, mut call: impl FnMut()) -> f64 {
    let mut samples: Vec<f64> = (0..7)
        .map(|_| {
            let start = Instant::now();
            let mut calls = 0u32;
            while start.elapsed() < Duration::from_millis(10) {
                call();
                calls += 1;
            }
            start.elapsed().as_secs_f64() * 1e9 / f64::from(calls) / values as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn main() {
    // 4096 values: 16 KiB per array, in the L1 cache of any current CPU.
    let input: Vec<f32> = (0..4096).map(|index| (index % 7) as f32 - 3.0).collect();
    let mut output: Vec<f32> = (0..4096).map(|index| (index % 5) as f32).collect();
    let axpy = nanoseconds_per_value(input.len(), || {
        scale_and_add(black_box(1e-7), black_box(&input), black_box(&mut output));
    });
    let dot_product = nanoseconds_per_value(input.len(), || {
        black_box(dot(black_box(&input), black_box(&output)));
    });
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    println!(
        "{profile} build: scale and add {axpy:.3} ns per value, dot product {dot_product:.3} ns per value"
    );
}
