//! Applies one small function to every value of an array: inlined, behind
//! `#[inline(never)]`, and through a function pointer. Prints the time per value.
//!
//! ```sh
//! cargo run --release --example inlining
//! ```
//!
//! The functions measured are in `galaxy::memory::inlining`.

use std::hint::black_box;

use galaxy::Tensor2d;
use galaxy::memory::inlining::{
    apply_inlined, apply_not_inlined, apply_through_pointer, soft_sign,
};
use galaxy::memory::timing::{TimingPlan, median_nanoseconds_per_item};

fn main() {
    // Hidden from the optimiser, so that the call through the pointer stays a real call.
    let pointer: fn(f32) -> f32 = black_box(soft_sign);
    println!("Time per value (ns) to apply x / (1 + |x|) in place\n");
    println!(
        "{:>10} {:>10} {:>18} {:>18}",
        "array", "inlined", "#[inline(never)]", "function pointer"
    );
    for kibibytes in [16, 1 << 10, 64 << 10] {
        let length = kibibytes * 1024 / size_of::<f32>();
        let mut values = Tensor2d::random(1, length, -4.0..=4.0, 1).into_vec();
        let plan = TimingPlan::FULL;
        let inlined = median_nanoseconds_per_item(plan, length, || {
            apply_inlined(black_box(&mut values));
        });
        let not_inlined = median_nanoseconds_per_item(plan, length, || {
            apply_not_inlined(black_box(&mut values));
        });
        let through_pointer = median_nanoseconds_per_item(plan, length, || {
            apply_through_pointer(black_box(&mut values), pointer);
        });
        println!("{kibibytes:>6} KiB {inlined:>10.2} {not_inlined:>18.2} {through_pointer:>18.2}");
    }
    println!(
        "\nWhat to look for: inlined, the loop handles several values per instruction (SIMD) \
         and\nis several times faster while the data is in cache. For an array far larger \
         than the\ncaches the inlined loop waits on memory and the gap narrows."
    );
}
