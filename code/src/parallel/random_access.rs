//! Gather: `output[i] = values[indices[i]]`, the access at the heart of sparse products,
//! embedding lookups and graph traversals.
//!
//! Module 1 measured what the order of the reads costs (`crate::memory::access_patterns`):
//! front to back, the prefetcher streams whole cache lines; in a random order, every read
//! is a cache miss once the array outgrows the caches. Gather inherits exactly that: with
//! indices `0, 1, 2, …` it is a copy, with a random permutation it is a miss per element.
//! Threads help a gather more than a copy, because each core keeps its own misses in
//! flight; they cannot make a random read as cheap as a sequential one.

use rayon::prelude::*;
use thiserror::Error;

/// An index that points outside the values.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("index {index} at position {position} is outside the {length} values")]
pub struct IndexOutOfRange {
    pub position: usize,
    pub index: u32,
    pub length: usize,
}

/// Checks every index once, so the gathers below can index without a second thought.
fn check_indices(values: &[f32], indices: &[u32]) -> Result<(), IndexOutOfRange> {
    match indices
        .iter()
        .position(|&index| index as usize >= values.len())
    {
        None => Ok(()),
        Some(position) => Err(IndexOutOfRange {
            position,
            index: indices[position],
            length: values.len(),
        }),
    }
}

// ANCHOR: gather
/// `values[indices[i]]` for every `i`, one after another.
pub fn gather(values: &[f32], indices: &[u32]) -> Result<Vec<f32>, IndexOutOfRange> {
    check_indices(values, indices)?;
    Ok(indices
        .iter()
        .map(|&index| values[index as usize])
        .collect())
}

/// The same gather with the indices split over rayon's threads.
pub fn gather_parallel(values: &[f32], indices: &[u32]) -> Result<Vec<f32>, IndexOutOfRange> {
    check_indices(values, indices)?;
    Ok(indices
        .par_iter()
        .map(|&index| values[index as usize])
        .collect())
}
// ANCHOR_END: gather

/// The indices `0..length` in order: a gather through them is a copy.
pub fn sequential_indices(length: usize) -> Vec<u32> {
    (0..length as u32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::access_patterns::Permutation;

    #[test]
    fn gathers_read_what_the_indices_name() {
        let values: Vec<f32> = (0..1000).map(|index| index as f32 * 0.5).collect();
        let order = Permutation::random(1000, 4).unwrap();
        let expected: Vec<f32> = order
            .as_slice()
            .iter()
            .map(|&index| index as f32 * 0.5)
            .collect();
        assert_eq!(gather(&values, order.as_slice()).unwrap(), expected);
        assert_eq!(
            gather_parallel(&values, order.as_slice()).unwrap(),
            expected
        );
        assert_eq!(gather(&values, &sequential_indices(1000)).unwrap(), values);
        assert_eq!(
            gather(&values, &[3, 1000, 2]),
            Err(IndexOutOfRange {
                position: 1,
                index: 1000,
                length: 1000
            })
        );
        assert!(gather_parallel(&[], &[0]).is_err());
        assert_eq!(gather(&[], &[]).unwrap(), Vec::<f32>::new());
    }
}
