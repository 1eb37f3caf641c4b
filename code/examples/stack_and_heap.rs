//! Where values live, and what it costs: scratch space allocated in a hot loop, reused,
//! or on the stack; a growing `Vec`; a linked list of boxes; and sharing instead of
//! copying with `Rc`.
//!
//! ```sh
//! cargo run --release --example stack_and_heap
//! ```
//!
//! The functions measured are in `galaxy::memory` (`allocation`, `growable_arrays`,
//! `linked_list`).

use std::hint::black_box;
use std::rc::Rc;

use galaxy::Tensor2d;
use galaxy::memory::MemoryError;
use galaxy::memory::allocation::{
    row_medians_allocating, row_medians_boxed, row_medians_on_stack, row_medians_reusing,
};
use galaxy::memory::growable_arrays::{
    capacities_while_pushing, fill_by_pushing, fill_with_capacity,
};
use galaxy::memory::linked_list::LinkedList;
use galaxy::memory::timing::{TimingPlan, median_nanoseconds_per_item};

const PLAN: TimingPlan = TimingPlan::FULL;

/// Times the four ways of providing scratch space for rows of `COLUMNS` values.
fn scratch_space<const COLUMNS: usize>() -> Result<(), MemoryError> {
    let rows = (1 << 20) / COLUMNS;
    let input = Tensor2d::random(rows, COLUMNS, -1.0..=1.0, 1);
    let mut medians = vec![0.0; rows];
    let mut scratch = Vec::new();
    let time = |run: &mut dyn FnMut() -> Result<(), MemoryError>| {
        run()?; // one checked run before timing
        Ok::<f64, MemoryError>(median_nanoseconds_per_item(PLAN, rows, || {
            black_box(run().ok());
        }))
    };
    let allocating = time(&mut || row_medians_allocating(black_box(&input), &mut medians))?;
    let reusing = time(&mut || row_medians_reusing(black_box(&input), &mut medians, &mut scratch))?;
    let stack = time(&mut || row_medians_on_stack::<COLUMNS>(black_box(&input), &mut medians))?;
    let boxed = time(&mut || row_medians_boxed::<COLUMNS>(black_box(&input), &mut medians))?;
    println!("{COLUMNS:>8} {allocating:>12.1} {reusing:>12.1} {stack:>12.1} {boxed:>12.1}");
    Ok(())
}

fn main() -> Result<(), MemoryError> {
    println!("The median of every row: time per row (ns), by where the scratch row lives\n");
    println!(
        "{:>8} {:>12} {:>12} {:>12} {:>12}",
        "row", "new Vec", "reused Vec", "stack array", "new Box"
    );
    scratch_space::<4>()?;
    scratch_space::<64>()?;
    scratch_space::<1024>()?;
    scratch_space::<16384>()?;

    let count = 1 << 20;
    let capacities = capacities_while_pushing(count);
    println!(
        "\nPushing {count} values onto an empty Vec reallocated it {} times; capacities:\n{:?}",
        capacities.len() - 1,
        capacities
    );
    let pushing = median_nanoseconds_per_item(PLAN, count, || {
        black_box(fill_by_pushing(black_box(count)));
    });
    let reserved = median_nanoseconds_per_item(PLAN, count, || {
        black_box(fill_with_capacity(black_box(count)));
    });
    println!("Time per push (ns): growing {pushing:.2}, with capacity reserved {reserved:.2}");

    let values = Tensor2d::random(1, count, -1.0..=1.0, 2).into_vec();
    let in_order = LinkedList::from_values(&values);
    let scattered = LinkedList::from_values_scattered(&values, 3);
    let vector = median_nanoseconds_per_item(PLAN, count, || {
        black_box(galaxy::cpu::sum_single_accumulator(black_box(&values)));
    });
    let list = median_nanoseconds_per_item(PLAN, count, || {
        black_box(black_box(&in_order).sum());
    });
    let scattered_list = median_nanoseconds_per_item(PLAN, count, || {
        black_box(black_box(&scattered).sum());
    });
    println!(
        "\nSumming {count} values (ns per value): Vec {vector:.2}, linked list {list:.2}, \
         linked list with scattered nodes {scattered_list:.2}"
    );

    let weights = Rc::new(Tensor2d::random(1024, 1024, -1.0..=1.0, 4));
    let share = median_nanoseconds_per_item(PLAN, 1, || {
        black_box(Rc::clone(black_box(&weights)));
    });
    let copy = median_nanoseconds_per_item(PLAN, 1, || {
        black_box(Tensor2d::clone(black_box(&weights)));
    });
    println!(
        "\nA second owner of a 4 MiB tensor: Rc::clone {share:.1} ns, a deep copy {:.1} µs",
        copy / 1000.0
    );
    println!(
        "\nWhat to look for: a heap allocation per row costs around ten nanoseconds, \
         which only\nmatters when the work per row is small. Pushing is cheap on average even \
         without a\nreserved capacity. A list walk is a chain of dependent loads, slow as \
         soon as the nodes\nare scattered. Sharing through Rc copies a pointer; cloning \
         copies every byte."
    );
    Ok(())
}
