//! Move, `Copy` and `Clone`, and what each costs. A move and a copy duplicate the bytes of
//! the value itself (`size_of`, 24 bytes for any `Vec`); a `clone` of a `Vec` also
//! allocates a new heap block and copies every element into it. A clone inside a hot loop
//! that only needed to read the data pays that on every iteration.

use crate::rust_basics::iterators::dot_in_lanes;

/// The work of one iteration: the dot product of a row with a weight vector, written with
/// several running sums so that it is fast (see `iterators.rs`) and a needless clone
/// beside it stands out.
pub fn weighted_sum(row: &[f32], weights: &[f32]) -> f32 {
    dot_in_lanes(row, weights)
}

// ANCHOR: clone_in_loop
/// A scoring function that asks for its weights *by value*, although it only reads them.
pub fn score_owning(row: &[f32], weights: Vec<f32>) -> f32 {
    weighted_sum(row, &weights)
}

/// Scores every row against the same weights. `score_owning` takes the weights away, so
/// passing `weights` itself would compile only once: the second iteration would use a
/// moved value. Copying them (`to_vec` is the `clone` of a slice) silences the compiler and
/// allocates and fills a new vector on every iteration.
#[inline(never)]
pub fn scores_cloning(rows: &[Vec<f32>], weights: &[f32]) -> Vec<f32> {
    let mut scores = Vec::with_capacity(rows.len());
    for row in rows {
        scores.push(score_owning(row, weights.to_vec()));
    }
    scores
}

/// The same scores through a function that borrows: `&[f32]` is a pointer and a length,
/// and passing it copies those 16 bytes, whatever the length of the vector.
#[inline(never)]
pub fn scores_borrowing(rows: &[Vec<f32>], weights: &[f32]) -> Vec<f32> {
    let mut scores = Vec::with_capacity(rows.len());
    for row in rows {
        scores.push(weighted_sum(row, weights));
    }
    scores
}
// ANCHOR_END: clone_in_loop

// ANCHOR: copy_and_clone
/// A small plain value: two `f32`. Deriving `Copy` says that duplicating its bytes is a
/// complete copy, so assignment copies and the original stays usable.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    pub low: f32,
    pub high: f32,
}

/// A value that owns heap memory cannot be `Copy`: duplicating its 24 bytes would give two
/// owners of one heap block. Assignment *moves* it; `clone` makes a real second copy.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    pub range: Range,
    pub counts: Vec<u32>,
}
// ANCHOR_END: copy_and_clone

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cloning_and_borrowing_give_identical_scores() {
        let rows: Vec<Vec<f32>> = (0..5)
            .map(|row| {
                (0..37)
                    .map(|column| (row * 37 + column) as f32 * 0.01)
                    .collect()
            })
            .collect();
        let weights: Vec<f32> = (0..37).map(|column| 1.0 - column as f32 * 0.05).collect();
        let cloned = scores_cloning(&rows, &weights);
        assert_eq!(cloned, scores_borrowing(&rows, &weights));
        assert_eq!(cloned.len(), 5);
        assert!(cloned.iter().any(|score| *score != 0.0));
    }

    #[test]
    fn a_copy_leaves_the_original_usable_and_a_move_of_a_vec_keeps_its_heap_block() {
        let range = Range {
            low: 0.0,
            high: 1.0,
        };
        let copied = range;
        assert_eq!(range, copied);

        let histogram = Histogram {
            range,
            counts: vec![0; 1000],
        };
        let address_before = histogram.counts.as_ptr();
        let moved = histogram;
        assert_eq!(
            moved.counts.as_ptr(),
            address_before,
            "a move copies no elements"
        );
        let cloned = moved.clone();
        assert_ne!(cloned.counts.as_ptr(), address_before, "a clone allocates");
        assert_eq!(cloned, moved);
    }
}
