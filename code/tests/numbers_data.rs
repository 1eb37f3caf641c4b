//! The integer, compression and packing code of `galaxy::numbers` on the crate's own data:
//! every layer of a standard workload pruned, coded and decoded again; packed arg-max under
//! contention; the figures' measurements returning what their pages read from them.

use galaxy::graph::random_mlp;
use galaxy::numbers::atomic_packing::parallel_argmax;
use galaxy::numbers::delta_coding::{delta_decode, delta_encode};
use galaxy::numbers::run_length::{run_length_decode, run_length_encode};
use galaxy::numbers::sparse_positions::{kept_positions, position_bytes};
use galaxy::numbers::varint::{read_varint, write_varint};

#[test]
fn every_layer_of_a_pruned_workload_round_trips_through_every_coding() {
    let workload = random_mlp(96, 6, 21).unwrap();
    for (index, layer) in workload.layers().iter().enumerate() {
        let weights = layer.weights;
        let total = weights.as_slice().len();
        for fraction in [0.0, 0.5, 0.9, 0.99, 1.0] {
            let positions = kept_positions(weights, fraction);
            let expected_kept = total - (total as f64 * fraction).round() as usize;
            assert_eq!(positions.len(), expected_kept, "layer {index}, {fraction}");
            // Every kept weight is at least as large as every pruned one.
            let kept: std::collections::HashSet<u32> = positions.iter().copied().collect();
            let smallest_kept = positions
                .iter()
                .map(|&p| weights.as_slice()[p as usize].abs())
                .fold(f32::INFINITY, f32::min);
            let largest_pruned = (0..total as u32)
                .filter(|p| !kept.contains(p))
                .map(|p| weights.as_slice()[p as usize].abs())
                .fold(0.0f32, f32::max);
            assert!(
                positions.is_empty() || kept.len() == total || smallest_kept >= largest_pruned,
                "layer {index}, {fraction}: kept {smallest_kept} < pruned {largest_pruned}"
            );

            let encoded = delta_encode(&positions).unwrap();
            assert_eq!(delta_decode(&encoded).unwrap(), positions);
            let mut mask = vec![0u8; total];
            for &position in &positions {
                mask[position as usize] = 1;
            }
            assert_eq!(run_length_decode(&run_length_encode(&mask)).unwrap(), mask);
            let bytes = position_bytes(&positions, total);
            assert_eq!(bytes.delta, encoded.len());
            assert_eq!(bytes.bitmask, total.div_ceil(8));
        }
    }
}

#[test]
fn leb128_stores_the_workloads_sizes_in_the_bytes_they_need() {
    let mut bytes = Vec::new();
    for value in [0u64, 127, 128, 96 * 96, u64::from(u32::MAX), u64::MAX] {
        bytes.clear();
        write_varint(value, &mut bytes);
        let needed = (64 - value.leading_zeros()).max(1).div_ceil(7) as usize;
        assert_eq!(bytes.len(), needed, "{value}");
        let mut position = 0;
        assert_eq!(read_varint(&bytes, &mut position).unwrap(), value);
        assert_eq!(position, bytes.len());
    }
}

#[test]
fn the_packed_argmax_of_a_workloads_weights_matches_a_sequential_search() {
    let workload = random_mlp(128, 3, 4).unwrap();
    for layer in workload.layers() {
        let values = layer.weights.as_slice();
        let expected = values
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1).then(a.0.cmp(&b.0)))
            .map(|(index, &value)| (value, index as u32));
        for threads in [1, 3, 16] {
            assert_eq!(
                parallel_argmax(values, threads),
                expected,
                "{threads} threads"
            );
        }
    }
}
