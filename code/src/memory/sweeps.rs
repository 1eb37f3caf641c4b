//! The measurements behind the figures of the chapter "The CPU and its memory hierarchy".
//!
//! [`figures`] runs every sweep and returns one [`Figure`] per figure id; `cargo xtask
//! figures` writes them to `figures/data/<id>.csv` and draws them. Each sweep times the
//! functions of this module with [`median_nanoseconds_per_item`], so every point is the
//! median of several samples after a warm-up, and every input passes through
//! [`black_box`] so the optimiser cannot compute anything ahead of time.
//!
//! The `hardware` field of each figure is left empty: the caller knows which machine it
//! runs on and fills it in.

use std::hint::black_box;

use crate::figure::{Axis, Figure, Point};
use crate::tensor::Tensor2d;

use crate::memory::access_patterns::{
    Cycle, Permutation, sum_in_order, sum_sequential, sum_strided,
};
use crate::memory::allocation::{
    row_medians_allocating, row_medians_boxed, row_medians_on_stack, row_medians_reusing,
};
use crate::memory::branch_prediction::{keep_below_branching, keep_below_branchless};
use crate::memory::inlining::{apply_inlined, apply_not_inlined, apply_through_pointer, soft_sign};
use crate::memory::nested_vectors::{NestedMatrix, sum_rows_first_flat, sum_rows_first_nested};
use crate::memory::timing::{TimingPlan, median_nanoseconds_per_item};
use crate::memory::transpose::{transpose_blocked, transpose_reading_rows};

/// The ids of the figures [`figures`] returns, in that order.
pub const FIGURE_IDS: [&str; 6] = [
    "memory-access-patterns",
    "memory-nested-vectors",
    "memory-transpose",
    "memory-allocation",
    "memory-branch-prediction",
    "memory-inlining",
];

/// A stride of 16 `u32` values is 64 bytes, one cache line on current x86 and ARM cores:
/// every read of the strided sum lands on a different line.
pub const STRIDE_ONE_CACHE_LINE: usize = 16;

/// The tile size of the blocked transposition: 32 × 32 `f32` values are 32 lines of
/// 128 bytes on each side, 8 KiB in all, which stays in any L1 data cache.
pub const TRANSPOSE_BLOCK: usize = 32;

/// A chain of dependent loads stops after this many steps, so that one call over a
/// 256 MiB array (about 100 ns per step from DRAM) takes a tenth of a second, not six.
const MAXIMUM_CHASE_STEPS: usize = 1 << 20;

// ANCHOR: figures
/// Runs every sweep and returns the chapter's six figures. `quick` uses fewer and smaller
/// sizes and shorter samples (well under a minute in all); otherwise the sweep is the one
/// the book's figures come from (a few minutes). `progress` is told which point is being
/// measured.
pub fn figures(quick: bool, progress: &dyn Fn(&str)) -> Vec<Figure> {
    let settings = Settings::new(quick);
    vec![
        access_patterns(&settings, progress),
        nested_vectors(&settings, progress),
        transposition(&settings, progress),
        allocation(&settings, progress),
        branch_prediction(&settings, progress),
        inlining(&settings, progress),
    ]
}
// ANCHOR_END: figures

/// What differs between a quick and a full sweep.
struct Settings {
    plan: TimingPlan,
    command: &'static str,
    /// Largest array of the access-pattern sweep, in bytes.
    largest_array: usize,
    /// Each size is this factor larger than the one before.
    size_factor: usize,
    /// Values in the matrices of the nested-vector sweep.
    nested_elements: usize,
    largest_transpose_side: usize,
    /// Values per call of the allocation sweep, split into rows.
    allocation_elements: usize,
    /// The branch sweep's thresholds are 0, 1/steps, 2/steps, …, 1.
    threshold_steps: usize,
}

impl Settings {
    fn new(quick: bool) -> Self {
        if quick {
            Self {
                plan: TimingPlan::QUICK,
                command: "cargo xtask figures",
                largest_array: 64 << 20,
                size_factor: 4,
                nested_elements: 1 << 20,
                largest_transpose_side: 4096,
                allocation_elements: 1 << 18,
                threshold_steps: 10,
            }
        } else {
            Self {
                plan: TimingPlan::FULL,
                command: "cargo xtask figures --full",
                largest_array: 256 << 20,
                size_factor: 2,
                nested_elements: 1 << 22,
                largest_transpose_side: 4096,
                allocation_elements: 1 << 20,
                threshold_steps: 20,
            }
        }
    }

    /// `first`, `first · factor`, … up to and including `last`.
    fn sizes(&self, first: usize, last: usize) -> Vec<usize> {
        std::iter::successors(Some(first), |&size| Some(size * self.size_factor))
            .take_while(|&size| size <= last)
            .collect()
    }

    fn figure(&self, id: &str, title: &str, x: (&str, bool), y: (&str, bool)) -> Figure {
        Figure {
            id: id.to_string(),
            title: title.to_string(),
            x: Axis {
                label: x.0.to_string(),
                logarithmic: x.1,
            },
            y: Axis {
                label: y.0.to_string(),
                logarithmic: y.1,
            },
            hardware: String::new(),
            command: self.command.to_string(),
            series: Vec::new(),
        }
    }
}

/// Values for the integer sums: all different, spread over the whole `u32` range.
fn integer_values(length: usize) -> Vec<u32> {
    (0..length as u32)
        .map(|index| index.wrapping_mul(2_654_435_761))
        .collect()
}

// ANCHOR: access_patterns_sweep
fn access_patterns(settings: &Settings, progress: &dyn Fn(&str)) -> Figure {
    let mut figure = settings.figure(
        "memory-access-patterns",
        "Reading an array in four orders",
        ("array size (bytes)", true),
        ("time per element read (ns)", true),
    );
    for bytes in settings.sizes(4 << 10, settings.largest_array) {
        progress(&format!("memory-access-patterns: {} KiB", bytes >> 10));
        let length = bytes / size_of::<u32>();
        let values = integer_values(length);
        let x = bytes as f64;

        let time = median_nanoseconds_per_item(settings.plan, length, || {
            black_box(sum_sequential(black_box(&values)));
        });
        figure.push("sequential", Point { x, y: time });

        let time = median_nanoseconds_per_item(settings.plan, length, || {
            black_box(sum_strided(black_box(&values), STRIDE_ONE_CACHE_LINE).ok());
        });
        figure.push("strided (one element per cache line)", Point { x, y: time });

        let order = Permutation::random(length, 1).expect("at most 256 MiB of u32");
        let time = median_nanoseconds_per_item(settings.plan, length, || {
            black_box(sum_in_order(black_box(&values), black_box(&order)).ok());
        });
        figure.push("random order (independent reads)", Point { x, y: time });
        drop(order);

        let cycle = Cycle::random(length, 2).expect("at least 1 KiB");
        let steps = length.min(MAXIMUM_CHASE_STEPS);
        let time = median_nanoseconds_per_item(settings.plan, steps, || {
            black_box(black_box(&cycle).follow(steps));
        });
        figure.push(
            "dependent chain (each read gives the next address)",
            Point { x, y: time },
        );
    }
    figure
}
// ANCHOR_END: access_patterns_sweep

fn nested_vectors(settings: &Settings, progress: &dyn Fn(&str)) -> Figure {
    let mut figure = settings.figure(
        "memory-nested-vectors",
        &format!(
            "Summing a matrix of {} Mi values row by row: Vec<f32> or Vec<Vec<f32>>",
            settings.nested_elements >> 20
        ),
        ("row length (values per row)", true),
        ("time per value (ns)", true),
    );
    let elements = settings.nested_elements;
    for columns in settings.sizes(1, 4096) {
        progress(&format!("memory-nested-vectors: {columns} columns"));
        let rows = elements / columns;
        let flat = Tensor2d::random(rows, columns, -1.0..=1.0, 3);
        let x = columns as f64;
        let mut measure = |series: &str, sum: &dyn Fn() -> f32| {
            let time = median_nanoseconds_per_item(settings.plan, rows * columns, || {
                black_box(sum());
            });
            figure.push(series, Point { x, y: time });
        };
        measure("flat Vec<f32>", &|| sum_rows_first_flat(black_box(&flat)));
        let nested = NestedMatrix::from_tensor(&flat);
        measure("Vec<Vec<f32>>, rows allocated in order", &|| {
            sum_rows_first_nested(black_box(&nested))
        });
        drop(nested);
        let scattered = NestedMatrix::from_tensor_scattered(&flat, 4);
        measure("Vec<Vec<f32>>, rows allocated in random order", &|| {
            sum_rows_first_nested(black_box(&scattered))
        });
    }
    figure
}

/// The sides of the transposition sweep: each power of two `p` from 16 up, and beside it
/// `p + p/4 + 1`, a size whose rows are not a power of two bytes apart.
fn transpose_sides(settings: &Settings) -> Vec<(usize, bool)> {
    let mut sides = Vec::new();
    for power in settings.sizes(16, settings.largest_transpose_side) {
        sides.push((power, true));
        sides.push((power + power / 4 + 1, false));
    }
    sides
}

fn transposition(settings: &Settings, progress: &dyn Fn(&str)) -> Figure {
    let mut figure = settings.figure(
        "memory-transpose",
        "Transposing an n × n matrix of f32",
        ("n (rows = columns)", true),
        ("time per element (ns)", true),
    );
    for (side, power_of_two) in transpose_sides(settings) {
        progress(&format!("memory-transpose: {side} × {side}"));
        let input = Tensor2d::random(side, side, -1.0..=1.0, 5);
        let mut output = Tensor2d::zeros(side, side);
        let elements = side * side;
        let x = side as f64;
        let sizes = if power_of_two {
            "n a power of two"
        } else {
            "other n"
        };

        // The floor: the same bytes read and written, both sequentially.
        let time = median_nanoseconds_per_item(settings.plan, elements, || {
            output
                .as_mut_slice()
                .copy_from_slice(black_box(input.as_slice()));
            black_box(&mut output);
        });
        figure.push("copy, no transposition", Point { x, y: time });

        let time = median_nanoseconds_per_item(settings.plan, elements, || {
            black_box(transpose_reading_rows(black_box(&input), &mut output).ok());
        });
        figure.push(&format!("row by row, {sizes}"), Point { x, y: time });

        let time = median_nanoseconds_per_item(settings.plan, elements, || {
            black_box(transpose_blocked(black_box(&input), &mut output, TRANSPOSE_BLOCK).ok());
        });
        figure.push(
            &format!("{TRANSPOSE_BLOCK} × {TRANSPOSE_BLOCK} tiles, {sizes}"),
            Point { x, y: time },
        );
    }
    figure
}

/// The row lengths of the allocation sweep: 4 values (16 bytes) to 16 Mi values (64 MiB),
/// far past the size above which glibc's allocator asks the operating system for fresh
/// pages on every allocation (32 MiB at most).
const ALLOCATION_ROW_LENGTHS: [usize; 12] = [
    4,
    16,
    64,
    256,
    1024,
    4096,
    16384,
    65536,
    1 << 18,
    1 << 20,
    1 << 22,
    1 << 24,
];

/// The stack and boxed variants need the row length at compile time; these are the
/// lengths with a compiled instance in [`row_medians_fixed`]. Larger arrays do not belong
/// on a stack (a thread's stack is a few MiB at most), so those series stop here.
const LARGEST_FIXED_ROW: usize = 65536;

/// Runs the stack (`on_stack == true`) or boxed variant for a row length known only at
/// run time, by choosing the matching compiled instance.
fn row_medians_fixed(input: &Tensor2d, medians: &mut [f32], on_stack: bool) {
    macro_rules! dispatch {
        ($($length:literal),*) => {
            match input.columns() {
                $($length => {
                    if on_stack {
                        row_medians_on_stack::<$length>(input, medians)
                    } else {
                        row_medians_boxed::<$length>(input, medians)
                    }
                })*
                other => unreachable!("no compiled instance for rows of {other}"),
            }
        };
    }
    let result = dispatch!(4, 16, 64, 256, 1024, 4096, 16384, 65536);
    black_box(result.ok());
}

fn allocation(settings: &Settings, progress: &dyn Fn(&str)) -> Figure {
    let mut figure = settings.figure(
        "memory-allocation",
        "The median of every row: where the scratch row lives",
        ("row length (values)", true),
        ("time per value (ns)", true),
    );
    for columns in ALLOCATION_ROW_LENGTHS {
        progress(&format!("memory-allocation: rows of {columns}"));
        let rows = (settings.allocation_elements / columns).max(1);
        let input = Tensor2d::random(rows, columns, -1.0..=1.0, 6);
        let mut medians = vec![0.0; rows];
        let mut scratch = Vec::new();
        let values = rows * columns;
        let x = columns as f64;

        let time = median_nanoseconds_per_item(settings.plan, values, || {
            black_box(row_medians_allocating(black_box(&input), &mut medians).ok());
        });
        figure.push("new Vec for every row", Point { x, y: time });
        let time = median_nanoseconds_per_item(settings.plan, values, || {
            black_box(row_medians_reusing(black_box(&input), &mut medians, &mut scratch).ok());
        });
        figure.push("one Vec, reused", Point { x, y: time });
        if columns <= LARGEST_FIXED_ROW {
            let time = median_nanoseconds_per_item(settings.plan, values, || {
                row_medians_fixed(black_box(&input), &mut medians, true);
            });
            figure.push("array on the stack", Point { x, y: time });
            let time = median_nanoseconds_per_item(settings.plan, values, || {
                row_medians_fixed(black_box(&input), &mut medians, false);
            });
            figure.push("new Box<[f32; N]> for every row", Point { x, y: time });
        }
    }
    figure
}

/// Values in the branch-prediction sweep: 256 KiB of `f32`, which stays in L2, so that
/// memory plays no part.
const BRANCH_VALUES: usize = 1 << 16;

fn branch_prediction(settings: &Settings, progress: &dyn Fn(&str)) -> Figure {
    let mut figure = settings.figure(
        "memory-branch-prediction",
        &format!(
            "Keeping the values below a threshold, {} Ki values uniform in [0, 1)",
            BRANCH_VALUES >> 10
        ),
        ("fraction of values kept", false),
        ("time per value (ns)", false),
    );
    let shuffled = Tensor2d::random(1, BRANCH_VALUES, 0.0..=1.0, 7).into_vec();
    let mut sorted = shuffled.clone();
    sorted.sort_by(f32::total_cmp);
    let mut kept = vec![0.0; BRANCH_VALUES];
    let steps = settings.threshold_steps;
    for step in 0..=steps {
        let threshold = step as f32 / steps as f32;
        progress(&format!("memory-branch-prediction: threshold {threshold}"));
        let x = f64::from(threshold);
        for (series, values, branchless) in [
            ("branch, shuffled data", &shuffled, false),
            ("branch, sorted data", &sorted, false),
            ("branchless, shuffled data", &shuffled, true),
            ("branchless, sorted data", &sorted, true),
        ] {
            let time = median_nanoseconds_per_item(settings.plan, BRANCH_VALUES, || {
                let result = if branchless {
                    keep_below_branchless(black_box(values), black_box(threshold), &mut kept)
                } else {
                    keep_below_branching(black_box(values), black_box(threshold), &mut kept)
                };
                black_box(result.ok());
            });
            figure.push(series, Point { x, y: time });
        }
    }
    figure
}

fn inlining(settings: &Settings, progress: &dyn Fn(&str)) -> Figure {
    let mut figure = settings.figure(
        "memory-inlining",
        "Applying x / (1 + |x|) to every value in place",
        ("array size (bytes)", true),
        ("time per value (ns)", true),
    );
    // Hidden from the optimiser, so the call through the pointer stays a real call.
    let pointer: fn(f32) -> f32 = black_box(soft_sign);
    for bytes in settings.sizes(4 << 10, settings.largest_array / 4) {
        progress(&format!("memory-inlining: {} KiB", bytes >> 10));
        let length = bytes / size_of::<f32>();
        let mut values = Tensor2d::random(1, length, -4.0..=4.0, 8).into_vec();
        let x = bytes as f64;
        let time = median_nanoseconds_per_item(settings.plan, length, || {
            apply_inlined(black_box(&mut values));
        });
        figure.push("inlined", Point { x, y: time });
        let time = median_nanoseconds_per_item(settings.plan, length, || {
            apply_not_inlined(black_box(&mut values));
        });
        figure.push("not inlined, #[inline(never)]", Point { x, y: time });
        let time = median_nanoseconds_per_item(settings.plan, length, || {
            apply_through_pointer(black_box(&mut values), pointer);
        });
        figure.push("through a function pointer", Point { x, y: time });
    }
    figure
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_grow_by_the_factor_and_include_the_last() {
        let quick = Settings::new(true);
        assert_eq!(quick.sizes(4, 64), vec![4, 16, 64]);
        let full = Settings::new(false);
        assert_eq!(full.sizes(16, 100), vec![16, 32, 64]);
    }

    #[test]
    fn every_allocation_row_length_has_a_compiled_instance() {
        for columns in ALLOCATION_ROW_LENGTHS
            .into_iter()
            .filter(|&columns| columns <= LARGEST_FIXED_ROW)
        {
            let input = Tensor2d::random(2, columns, -1.0..=1.0, 1);
            let mut on_stack = vec![f32::NAN; 2];
            let mut boxed = vec![f32::NAN; 2];
            let mut expected = vec![f32::NAN; 2];
            row_medians_fixed(&input, &mut on_stack, true);
            row_medians_fixed(&input, &mut boxed, false);
            row_medians_allocating(&input, &mut expected).unwrap();
            assert_eq!(on_stack, expected, "{columns}");
            assert_eq!(boxed, expected, "{columns}");
        }
    }
}
