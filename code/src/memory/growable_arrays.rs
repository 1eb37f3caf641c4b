//! Growable arrays: how a `Vec` makes `push` cheap on average.
//!
//! A `Vec<T>` is three machine words on the stack (a pointer to its heap block, its
//! length and its capacity) plus that block. While there is spare capacity, `push` writes
//! the value and adds one to the length. When the block is full, `push` asks the allocator
//! to grow it (`realloc`), which extends the block in place when it can, and otherwise
//! allocates a larger block, copies every element over and frees the old one. Because the
//! capacity grows geometrically (the standard library currently doubles it, but promises
//! only amortised constant-time `push`), even when every growth copies, the copies add up
//! to less than two per element however long the vector grows: the cost of `push` is
//! constant *amortised*, even though a single push now and then copies everything.
//!
//! When the final length is known, `Vec::with_capacity` skips the regrowing altogether.

// ANCHOR: capacities_while_pushing
/// Pushes `count` values onto an empty vector and returns every capacity it had along
/// the way, starting with the empty vector's capacity of 0.
pub fn capacities_while_pushing(count: usize) -> Vec<usize> {
    let mut values: Vec<f32> = Vec::new();
    let mut capacities = vec![values.capacity()];
    for index in 0..count {
        values.push(index as f32);
        if values.capacity() != *capacities.last().unwrap_or(&0) {
            capacities.push(values.capacity()); // the block was just reallocated
        }
    }
    capacities
}
// ANCHOR_END: capacities_while_pushing

// ANCHOR: fill
/// `count` values pushed one by one onto a vector that starts empty.
pub fn fill_by_pushing(count: usize) -> Vec<f32> {
    let mut values = Vec::new();
    for index in 0..count {
        values.push(index as f32);
    }
    values
}

/// The same values, pushed onto a vector whose capacity was reserved up front.
pub fn fill_with_capacity(count: usize) -> Vec<f32> {
    let mut values = Vec::with_capacity(count);
    for index in 0..count {
        values.push(index as f32);
    }
    values
}
// ANCHOR_END: fill

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_grows_geometrically() {
        let count = 1_000_000;
        let capacities = capacities_while_pushing(count);
        assert_eq!(capacities[0], 0);
        assert!(*capacities.last().unwrap() >= count);
        // Each reallocation at least grows the block by half...
        for pair in capacities[1..].windows(2) {
            assert!(pair[1] >= pair[0] + pair[0] / 2, "{pair:?}");
        }
        // ...so a million pushes reallocate only a few dozen times, not a million.
        assert!(
            capacities.len() < 40,
            "{} reallocations",
            capacities.len() - 1
        );
    }

    #[test]
    fn both_ways_of_filling_give_the_same_vector() {
        for count in [0, 1, 5, 1000] {
            let pushed = fill_by_pushing(count);
            let reserved = fill_with_capacity(count);
            assert_eq!(pushed, reserved);
            assert!(reserved.capacity() >= count);
        }
    }
}
