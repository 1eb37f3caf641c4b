//! Touches every page of a freshly allocated buffer twice and prints the time per page:
//! the first pass pays a page fault per page, the second does not.
//!
//! ```sh
//! cargo run --release --example page_faults
//! ```
//!
//! The function measured is `galaxy::memory::pages::touch_every_page`.

use std::hint::black_box;
use std::time::Instant;

use galaxy::memory::pages::{PAGE_SIZE, touch_every_page};

/// Each measurement allocates a fresh buffer, so it can only be timed once; the table
/// shows the median of this many buffers.
const REPETITIONS: usize = 7;

fn main() {
    println!("Time per {PAGE_SIZE}-byte page (ns), median of {REPETITIONS} fresh buffers\n");
    println!(
        "{:>10} {:>12} {:>12}",
        "buffer", "first touch", "second touch"
    );
    // Buffers above 32 MiB: glibc's allocator takes each one fresh from the operating
    // system and gives it back when it is freed, so every buffer starts unmapped.
    for mebibytes in [64, 256] {
        let mut first = Vec::new();
        let mut second = Vec::new();
        for _ in 0..REPETITIONS {
            let mut buffer = vec![0_u8; mebibytes << 20];
            first.push(time_per_page(&mut buffer));
            second.push(time_per_page(&mut buffer));
        }
        println!(
            "{mebibytes:>6} MiB {:>12.0} {:>12.0}",
            median(&mut first),
            median(&mut second)
        );
    }
    println!(
        "\nWhat to look for: the first touch costs a trap into the kernel, which finds a \
         physical\npage, zeroes it and maps it; the second touch is an ordinary store, \
         though one that\nmisses the caches and the TLB, since it is the only one on its \
         page."
    );
}

/// One pass of `touch_every_page` over `buffer`, in nanoseconds per page.
fn time_per_page(buffer: &mut [u8]) -> f64 {
    let start = Instant::now();
    let pages = touch_every_page(black_box(buffer));
    start.elapsed().as_secs_f64() * 1e9 / pages as f64
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
