//! Keeps the values below a threshold, with a branch and without, on shuffled and on
//! sorted data, and prints the time per value.
//!
//! ```sh
//! cargo run --release --example branch_prediction
//! ```
//!
//! The functions measured are in `galaxy::memory::branch_prediction`.

use std::hint::black_box;

use galaxy::Tensor2d;
use galaxy::memory::MemoryError;
use galaxy::memory::branch_prediction::{keep_below_branching, keep_below_branchless};
use galaxy::memory::timing::{TimingPlan, median_nanoseconds_per_item};

/// 64 Ki values (256 KiB): small enough to stay in L2, so memory plays no part.
const VALUES: usize = 1 << 16;

fn main() -> Result<(), MemoryError> {
    let shuffled = Tensor2d::random(1, VALUES, 0.0..=1.0, 1).into_vec();
    let mut sorted = shuffled.clone();
    sorted.sort_by(f32::total_cmp);
    let mut kept = vec![0.0; VALUES];

    println!("Time per value (ns) to keep the values below a threshold, {VALUES} values\n");
    println!(
        "{:>9} {:>10} {:>10} {:>10} {:>10}",
        "", "branch", "branch", "branchless", "branchless"
    );
    println!(
        "{:>9} {:>10} {:>10} {:>10} {:>10}",
        "threshold", "shuffled", "sorted", "shuffled", "sorted"
    );
    for threshold in [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0] {
        let mut times = Vec::new();
        for branchless in [false, true] {
            for values in [&shuffled, &sorted] {
                let keep = if branchless {
                    keep_below_branchless
                } else {
                    keep_below_branching
                };
                keep(values, threshold, &mut kept)?; // checked once, outside the timing
                times.push(median_nanoseconds_per_item(
                    TimingPlan::FULL,
                    VALUES,
                    || {
                        black_box(keep(black_box(values), black_box(threshold), &mut kept).ok());
                    },
                ));
            }
        }
        println!(
            "{threshold:>9.1} {:>10.2} {:>10.2} {:>10.2} {:>10.2}",
            times[0], times[1], times[2], times[3]
        );
    }
    println!(
        "\nWhat to look for: with the branch, shuffled data is slowest when about half the \
         values\npass, because the predictor can only guess; sorted data is fast at every \
         threshold.\nThe branchless version takes the same time whatever the data."
    );
    Ok(())
}
