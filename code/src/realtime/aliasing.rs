//! Immutable by default, and what exclusive access lets the compiler do: a sum kept in a
//! register because `&mut` promises that nothing else can see it, against the same sum
//! through `Cell`s, which may alias and so must go through memory every step.
//!
//! Module 1 explains aliasing and C's `restrict`
//! (`what-a-compiler-may-assume-aliasing-and-restrict.md`); this is the measured pair.

use std::cell::Cell;

// ANCHOR: exclusive
/// Adds every value to `total`. A `&mut f32` cannot point into `values` (the borrow
/// checker forbids holding `&mut` and `&` to the same place), so the compiler loads
/// `total` once, keeps it in a register for the whole loop, and stores it once at the end.
#[inline(never)]
pub fn add_all_exclusive(total: &mut f32, values: &[f32]) {
    for value in values {
        *total += value;
    }
}
// ANCHOR_END: exclusive

// ANCHOR: shared_cells
/// The same loop through `Cell`s, which allow changes through shared references. Now
/// `total` may be one of the `values`, so after every store to `total` the next value must
/// be loaded again, and `total` is written to memory and read back on every step.
#[inline(never)]
pub fn add_all_through_cells(total: &Cell<f32>, values: &[Cell<f32>]) {
    for value in values {
        total.set(total.get() + value.get());
    }
}
// ANCHOR_END: shared_cells

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_aliasing_both_give_the_same_sum() {
        let mut values: Vec<f32> = (0..1000).map(|value| (value % 10) as f32 * 0.5).collect();
        let mut exclusive = 1.5;
        add_all_exclusive(&mut exclusive, &values);
        let cells = Cell::from_mut(values.as_mut_slice()).as_slice_of_cells();
        let shared = Cell::new(1.5f32);
        add_all_through_cells(&shared, cells);
        assert_eq!(exclusive.to_bits(), shared.get().to_bits());
        assert_eq!(exclusive, 1.5 + 100.0 * 22.5);
    }

    #[test]
    fn with_aliasing_the_cells_see_their_own_writes() {
        // `total` is the last value, so the loop reads it as a value after writing to it:
        // 100 + 1 = 101, + 10 = 111, then the last value is that same cell, now 111, so the
        // total is 222. A loop that kept `total` in a register and read the values as they
        // were at the start would add the old 100 instead and return 211.
        let mut values = [1.0f32, 10.0, 100.0];
        let cells = Cell::from_mut(&mut values[..]).as_slice_of_cells();
        add_all_through_cells(&cells[2], cells);
        assert_eq!(cells[2].get(), 222.0);
        assert_eq!(cells[0].get(), 1.0, "only the total's cell changes");
    }
}
