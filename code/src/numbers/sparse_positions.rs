//! Where the surviving weights of a pruned matrix are, stored four ways.
//!
//! *Magnitude pruning* sets the smallest weights of a layer to zero. What remains is the
//! values of the kept weights and their positions. This file measures how many bytes the
//! positions take, on the weights of the standard workload, stored as plain 32-bit indices,
//! as a bitmask with one bit per weight, as delta-coded gaps, and as a run-length-coded
//! byte mask. The values themselves cost the same in every scheme.

use crate::numbers::delta_coding::delta_encode;
use crate::numbers::run_length::run_length_encode;
use crate::tensor::Tensor2d;

// ANCHOR: prune_by_magnitude
/// The positions (row-major) of the weights that survive pruning the `fraction` of them
/// with the smallest magnitude, in increasing order.
pub fn kept_positions(weights: &Tensor2d, fraction: f64) -> Vec<u32> {
    let values = weights.as_slice();
    let mut order: Vec<u32> = (0..values.len() as u32).collect();
    order.sort_by(|&a, &b| {
        values[a as usize]
            .abs()
            .total_cmp(&values[b as usize].abs())
    });
    let pruned = ((values.len() as f64) * fraction.clamp(0.0, 1.0)).round() as usize;
    let mut kept = order.split_off(pruned);
    kept.sort_unstable();
    kept
}
// ANCHOR_END: prune_by_magnitude

/// How many bytes each scheme needs for the same positions out of `total` weights.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PositionBytes {
    pub kept: usize,
    pub indices: usize,
    pub bitmask: usize,
    pub delta: usize,
    pub run_length: usize,
}

// ANCHOR: position_bytes
pub fn position_bytes(positions: &[u32], total: usize) -> PositionBytes {
    let mut mask = vec![0u8; total];
    for &position in positions {
        mask[position as usize] = 1;
    }
    PositionBytes {
        kept: positions.len(),
        indices: size_of_val(positions),
        bitmask: total.div_ceil(8),
        // Positions from `kept_positions` increase strictly, so encoding cannot fail.
        delta: delta_encode(positions).map_or(usize::MAX, |bytes| bytes.len()),
        run_length: run_length_encode(&mask).len(),
    }
}
// ANCHOR_END: position_bytes

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::random_mlp;
    use crate::numbers::delta_coding::delta_decode;

    #[test]
    fn pruning_keeps_the_largest_weights() {
        let weights = Tensor2d::from_vec(2, 3, vec![0.1, -5.0, 0.3, 2.0, -0.2, 0.0]).unwrap();
        assert_eq!(kept_positions(&weights, 0.5), vec![1, 2, 3]);
        assert_eq!(kept_positions(&weights, 0.0).len(), 6);
        assert!(kept_positions(&weights, 1.0).is_empty());
    }

    #[test]
    fn the_workloads_positions_round_trip_and_delta_coding_beats_indices_when_sparse() {
        let workload = random_mlp(64, 2, 5).unwrap();
        let weights = workload.layers()[0].weights;
        let total = weights.as_slice().len();
        for fraction in [0.5, 0.9, 0.99] {
            let positions = kept_positions(weights, fraction);
            let bytes = position_bytes(&positions, total);
            assert_eq!(bytes.kept, positions.len());
            let encoded = delta_encode(&positions).unwrap();
            assert_eq!(delta_decode(&encoded).unwrap(), positions);
            assert!(bytes.delta < bytes.indices, "{fraction}: {bytes:?}");
        }
        // At half density the bitmask, at one bit per weight, is the smallest.
        let half = position_bytes(&kept_positions(weights, 0.5), total);
        assert!(half.bitmask < half.delta && half.bitmask < half.run_length);
    }
}
