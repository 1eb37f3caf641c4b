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

fn main() {
    println!("Time per {PAGE_SIZE}-byte page (ns)\n");
    println!(
        "{:>10} {:>12} {:>12}",
        "buffer", "first touch", "second touch"
    );
    for mebibytes in [1, 16, 256] {
        let bytes = mebibytes << 20;
        // Fresh, zeroed memory: for a large buffer the allocator asks the operating
        // system for new pages, which it only provides when each page is first written.
        let mut buffer = vec![0_u8; bytes];
        let first = time_per_page(&mut buffer);
        let second = time_per_page(&mut buffer);
        println!("{mebibytes:>6} MiB {first:>12.0} {second:>12.0}");
    }
    println!(
        "\nWhat to look for: the first touch costs a trap into the kernel, which finds a \
         physical\npage, zeroes it and maps it; the second touch is an ordinary store. \
         (A 1 MiB buffer may\ncome from memory the allocator already had, and then both \
         passes are cheap.)"
    );
}

/// One pass of `touch_every_page`, timed once: a second timing of the first pass is
/// impossible, because after it the pages are no longer fresh.
fn time_per_page(buffer: &mut [u8]) -> f64 {
    let start = Instant::now();
    let pages = touch_every_page(black_box(buffer));
    start.elapsed().as_secs_f64() * 1e9 / pages as f64
}
