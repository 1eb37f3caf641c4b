//! Reads one array in four orders and prints the time per element read.
//!
//! ```sh
//! cargo run --release --example access_patterns
//! ```
//!
//! The sizes are chosen to land in different levels of a typical memory hierarchy: 16 KiB
//! fits in any L1 data cache, 1 MiB in most L2 caches, 16 MiB in a large L3 or not, and
//! 128 MiB only in DRAM. The functions measured are in `galaxy::memory::access_patterns`.

use std::hint::black_box;

use galaxy::memory::MemoryError;
use galaxy::memory::access_patterns::{
    Cycle, Permutation, sum_in_order, sum_sequential, sum_strided,
};
use galaxy::memory::timing::{TimingPlan, median_nanoseconds_per_item};

/// 16 `u32` values are 64 bytes: one element per cache line.
const STRIDE: usize = 16;

fn main() -> Result<(), MemoryError> {
    println!(
        "Time per element read (ns), median of {} samples\n",
        TimingPlan::FULL.samples
    );
    println!(
        "{:>10} {:>12} {:>12} {:>12} {:>12}",
        "array", "sequential", "stride 64 B", "random", "chain"
    );
    for kibibytes in [16, 1 << 10, 16 << 10, 128 << 10] {
        let length = kibibytes * 1024 / size_of::<u32>();
        let values: Vec<u32> = (0..length as u32).collect();
        let order = Permutation::random(length, 1)?;
        let cycle = Cycle::random(length, 2)?;
        // A chain through 128 MiB would take seconds; a million steps tell the same story.
        let steps = length.min(1 << 20);

        let plan = TimingPlan::FULL;
        let sequential = median_nanoseconds_per_item(plan, length, || {
            black_box(sum_sequential(black_box(&values)));
        });
        let strided = median_nanoseconds_per_item(plan, length, || {
            black_box(sum_strided(black_box(&values), STRIDE).ok());
        });
        let random = median_nanoseconds_per_item(plan, length, || {
            black_box(sum_in_order(black_box(&values), &order).ok());
        });
        let chain = median_nanoseconds_per_item(plan, steps, || {
            black_box(black_box(&cycle).follow(steps));
        });
        println!(
            "{:>7} KiB {sequential:>12.2} {strided:>12.2} {random:>12.2} {chain:>12.2}",
            kibibytes
        );
    }
    println!(
        "\nWhat to look for: the sequential column grows least, because the prefetcher \
         streams\nthe data in ahead of the loop. The chain column jumps each time the \
         array outgrows a\ncache level: it measures the latency of L1, L2, L3 and DRAM. \
         Random but independent\nreads sit in between: the core overlaps many of their \
         misses."
    );
    Ok(())
}
