//! The fast inverse square root against `1.0 / x.sqrt()` and the processor's reciprocal
//! square root instruction: the largest relative error of each over every f32 in [1, 4)
//! (one period of the trick's error pattern), and the time per value over 1 Mi values.
//!
//! `cargo run --release --example fast_inverse_square_root`

use galaxy::numbers::inverse_square_root::{
    fast_inverse_square_root, fast_inverse_square_root_slice, hardware_inverse_square_root,
    inverse_square_root_guess, largest_relative_error, plain_inverse_square_root,
    plain_inverse_square_root_slice,
};
use std::hint::black_box;
use std::time::Instant;

const VALUES: usize = 1 << 20;
const RUNS: usize = 21;

/// Nanoseconds per value: median, fastest and slowest of `RUNS` runs.
fn time(mut run: impl FnMut()) -> (f64, f64, f64) {
    run(); // warm-up
    let mut per_value: Vec<f64> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed().as_secs_f64() * 1e9 / VALUES as f64
        })
        .collect();
    per_value.sort_by(f64::total_cmp);
    (per_value[RUNS / 2], per_value[0], per_value[RUNS - 1])
}

fn main() {
    println!("largest relative error over every f32 in [1, 4):");
    let guess = largest_relative_error(inverse_square_root_guess, 1.0, 4.0);
    let newton = largest_relative_error(fast_inverse_square_root, 1.0, 4.0);
    let plain = largest_relative_error(plain_inverse_square_root, 1.0, 4.0);
    println!(
        "  bit trick, no Newton step   {:.4e} (at x = {})",
        guess.0, guess.1
    );
    println!(
        "  bit trick + 1 Newton step   {:.4e} (at x = {})",
        newton.0, newton.1
    );
    println!(
        "  1.0 / x.sqrt()              {:.4e} (at x = {})",
        plain.0, plain.1
    );
    let values: Vec<f32> = (0..VALUES)
        .map(|index| f32::from_bits(1.0f32.to_bits() + (index as u32 * 16)))
        .collect();
    let mut output = vec![0.0f32; VALUES];
    let mut name = "";
    let hardware = time(|| {
        name = hardware_inverse_square_root(black_box(&values), black_box(&mut output));
    });
    let worst_hardware = values
        .iter()
        .zip(&output)
        .map(|(&x, &y)| {
            let exact = 1.0 / f64::from(x).sqrt();
            ((f64::from(y) - exact) / exact).abs()
        })
        .fold(0.0, f64::max);
    println!("  {name:<27} {worst_hardware:.4e} (largest over the timed values)");
    let trick = time(|| fast_inverse_square_root_slice(black_box(&values), black_box(&mut output)));
    let plain_time =
        time(|| plain_inverse_square_root_slice(black_box(&values), black_box(&mut output)));
    println!("\nnanoseconds per value over {VALUES} values (median of {RUNS}, min–max):");
    for (label, (median, low, high)) in [
        ("1.0 / x.sqrt()", plain_time),
        ("bit trick + 1 Newton step", trick),
        (name, hardware),
    ] {
        println!("  {label:<27} {median:.3} ({low:.3}–{high:.3})");
    }
}
