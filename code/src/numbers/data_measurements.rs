//! The measurements behind the figures of the integer, data-layout and compression pages:
//! hash-table keys, the positions of pruned weights, Z-order against row-major, and the
//! resolution of a depth buffer. `examples/numbers_data.rs` runs them and writes the CSV
//! files; each function here measures one figure once, and the example repeats it.

use std::hint::black_box;
use std::time::Instant;

use crate::figure::{Axis, Figure, Point};
use crate::graph::random_mlp;
use crate::memory::timing::{TimingPlan, median_nanoseconds_per_item};
use crate::numbers::delta_coding::{delta_decode, delta_encode};
use crate::numbers::depth_precision::{DepthMapping, DepthStorage, depth_resolution};
use crate::numbers::hash_keys::{
    Interner, count_by_id, count_by_id_fast_hash, count_by_index, count_by_string, names_and_events,
};
use crate::numbers::morton::{TwoLayouts, Walk, sum_row_major, sum_z_order};
use crate::numbers::run_length::{run_length_decode, run_length_encode};
use crate::numbers::sparse_positions::{kept_positions, position_bytes};

fn empty_figure(id: &str, title: &str, x: &str, y: &str, hardware: &str) -> Figure {
    let axis = |label: &str| Axis {
        label: label.trim_end_matches(", log").to_string(),
        logarithmic: label.ends_with(", log"),
    };
    Figure {
        id: id.to_string(),
        title: title.to_string(),
        x: axis(x),
        y: axis(y),
        hardware: hardware.to_string(),
        command: String::new(),
        series: Vec::new(),
    }
}

/// The same table counted four ways, for `distinct` keys and a stream of `events`:
/// nanoseconds per event, one series per kind of key.
pub fn measure_hash_keys(
    distincts: &[usize],
    events: usize,
    plan: TimingPlan,
) -> Vec<(String, usize, f64)> {
    let mut rows = Vec::new();
    for &distinct in distincts {
        let (names, stream) = names_and_events(distinct, events, 11);
        let strings: Vec<&str> = stream.iter().map(|&index| names[index].as_str()).collect();
        let mut interner = Interner::default();
        let ids: Vec<u32> = strings.iter().map(|name| interner.intern(name)).collect();
        let dense = interner.len();
        let mut time = |name: &str, call: &mut dyn FnMut()| {
            rows.push((
                name.to_string(),
                distinct,
                median_nanoseconds_per_item(plan, events, call),
            ));
        };
        time("String keys", &mut || {
            black_box(count_by_string(black_box(&strings)));
        });
        time("u32 ids, SipHash", &mut || {
            black_box(count_by_id(black_box(&ids)));
        });
        time("u32 ids, multiplicative hash", &mut || {
            black_box(count_by_id_fast_hash(black_box(&ids)));
        });
        time("u32 ids as Vec index", &mut || {
            black_box(count_by_index(black_box(&ids), dense));
        });
    }
    rows
}

/// One figure-ready measurement of the hash keys.
pub fn hash_keys_figure(hardware: &str, rows: &[(String, usize, f64)]) -> Figure {
    let mut figure = empty_figure(
        "numbers-hash-keys",
        "Counting a stream of keys in a table: strings against integer ids",
        "distinct keys, log",
        "time per event (ns), log",
        hardware,
    );
    for (series, distinct, nanoseconds) in rows {
        figure.push(
            series,
            Point {
                x: *distinct as f64,
                y: *nanoseconds,
            },
        );
    }
    figure
}

/// Bytes per kept weight of the four ways of storing positions, on the first layer of the
/// standard workload (256 × 256), for each pruned fraction.
pub fn compression_figure(hardware: &str, fractions: &[f64]) -> Figure {
    let mut figure = empty_figure(
        "numbers-sparse-positions",
        "Storing where the kept weights of a magnitude-pruned 256 × 256 layer are",
        "weights kept (%), log",
        "bytes per kept weight, log",
        hardware,
    );
    let workload = random_mlp(256, 1, 1).expect("the standard workload at size 256 is valid");
    let weights = workload.layers()[0].weights;
    let total = weights.as_slice().len();
    for &fraction in fractions {
        let positions = kept_positions(weights, fraction);
        let bytes = position_bytes(&positions, total);
        let per_kept = |bytes: usize| bytes as f64 / positions.len().max(1) as f64;
        let x = (1.0 - fraction) * 100.0;
        figure.push(
            "32-bit indices",
            Point {
                x,
                y: per_kept(bytes.indices),
            },
        );
        figure.push(
            "bitmask",
            Point {
                x,
                y: per_kept(bytes.bitmask),
            },
        );
        figure.push(
            "delta + LEB128",
            Point {
                x,
                y: per_kept(bytes.delta),
            },
        );
        figure.push(
            "run-length mask",
            Point {
                x,
                y: per_kept(bytes.run_length),
            },
        );
    }
    figure
}

/// Encode and decode speed (ns per kept position) of delta coding and of run-length coding
/// the mask, at one pruned fraction: `(delta encode, delta decode, run-length encode,
/// run-length decode)`.
pub fn compression_speed(fraction: f64, plan: TimingPlan) -> (f64, f64, f64, f64) {
    let workload = random_mlp(256, 1, 1).expect("the standard workload at size 256 is valid");
    let weights = workload.layers()[0].weights;
    let positions = kept_positions(weights, fraction);
    let mut mask = vec![0u8; weights.as_slice().len()];
    for &position in &positions {
        mask[position as usize] = 1;
    }
    let count = positions.len();
    let encoded = delta_encode(&positions).expect("pruned positions increase");
    let run_length = run_length_encode(&mask);
    let delta_encode_ns = median_nanoseconds_per_item(plan, count, || {
        black_box(delta_encode(black_box(&positions)).ok());
    });
    let delta_decode_ns = median_nanoseconds_per_item(plan, count, || {
        black_box(delta_decode(black_box(&encoded)).ok());
    });
    let run_length_encode_ns = median_nanoseconds_per_item(plan, count, || {
        black_box(run_length_encode(black_box(&mask)));
    });
    let run_length_decode_ns = median_nanoseconds_per_item(plan, count, || {
        black_box(run_length_decode(black_box(&run_length)).ok());
    });
    (
        delta_encode_ns,
        delta_decode_ns,
        run_length_encode_ns,
        run_length_decode_ns,
    )
}

/// Time per element to sum a `side × side` image walked by rows and by columns, stored
/// row-major and in Z-order.
pub fn measure_morton(sides: &[usize], plan: TimingPlan) -> Vec<(String, usize, f64)> {
    let mut rows = Vec::new();
    for &side in sides {
        let Some(image) = TwoLayouts::new(side) else {
            continue;
        };
        let elements = side * side;
        for (name, walk, z_order) in [
            ("row-major, by rows", Walk::ByRows, false),
            ("row-major, by columns", Walk::ByColumns, false),
            ("Z-order, by rows", Walk::ByRows, true),
            ("Z-order, by columns", Walk::ByColumns, true),
        ] {
            let nanoseconds = median_nanoseconds_per_item(plan, elements, || {
                let sum = if z_order {
                    sum_z_order(black_box(&image), walk)
                } else {
                    sum_row_major(black_box(&image), walk)
                };
                black_box(sum);
            });
            rows.push((name.to_string(), elements * size_of::<u32>(), nanoseconds));
        }
    }
    rows
}

pub fn morton_figure(hardware: &str, rows: &[(String, usize, f64)]) -> Figure {
    let mut figure = empty_figure(
        "numbers-morton",
        "Summing a square image of 4-byte pixels by rows or by columns, row-major or in Z-order",
        "image size (bytes), log",
        "time per pixel (ns), log",
        hardware,
    );
    for (series, bytes, nanoseconds) in rows {
        figure.push(
            series,
            Point {
                x: *bytes as f64,
                y: *nanoseconds,
            },
        );
    }
    figure
}

/// The resolution of a depth buffer (near 0.1, far 10 000) at ten distances per decade from
/// 0.126 to 7 943.
pub fn depth_figure(hardware: &str) -> Figure {
    let mut figure = empty_figure(
        "numbers-depth-precision",
        "The smallest difference in distance a depth buffer can see (near 0.1 m, far 10 km)",
        "distance from the camera (m), log",
        "smallest visible difference in distance (m), log",
        hardware,
    );
    let (near, far) = (0.1, 10_000.0);
    let standard = DepthMapping::Standard { near, far };
    let reversed = DepthMapping::Reversed { near, far };
    let infinite = DepthMapping::ReversedInfinite { near };
    // Ten distances per decade, from just past the near plane to 7.9 km: 0.1 · 10^(k/10).
    for step in 1..=49 {
        let z = 0.1 * 10f64.powf(f64::from(step) / 10.0);
        let point = |mapping, storage| Point {
            x: z,
            y: depth_resolution(mapping, storage, z),
        };
        figure.push("standard, f32", point(standard, DepthStorage::Float32));
        figure.push("24-bit fixed point", point(standard, DepthStorage::Fixed24));
        figure.push("reversed, f32", point(reversed, DepthStorage::Float32));
        figure.push(
            "reversed, infinite far, f32",
            point(infinite, DepthStorage::Float32),
        );
    }
    figure
}

/// Wall-clock seconds of `call`, for the example's progress lines.
pub fn seconds_of(call: impl FnOnce()) -> f64 {
    let start = Instant::now();
    call();
    start.elapsed().as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_measurement_yields_its_series() {
        let rows = measure_hash_keys(&[8, 64], 2_000, TimingPlan::QUICK);
        let figure = hash_keys_figure("test", &rows);
        assert_eq!(figure.series.len(), 4);
        assert!(
            figure
                .series
                .iter()
                .all(|s| s.points.len() == 2 && s.points.iter().all(|p| p.y > 0.0))
        );

        let figure = compression_figure("test", &[0.5, 0.9]);
        assert_eq!(figure.series.len(), 4);
        let indices = &figure.series[0].points;
        assert!(indices.iter().all(|point| point.y == 4.0));

        let rows = measure_morton(&[16, 32], TimingPlan::QUICK);
        assert_eq!(morton_figure("test", &rows).series.len(), 4);

        let depth = depth_figure("test");
        assert_eq!(depth.series.len(), 4);
        assert!(
            depth
                .series
                .iter()
                .all(|s| s.points.iter().all(|p| p.y > 0.0 && p.y.is_finite()))
        );
    }
}
