//! The fast inverse square root against `1.0 / x.sqrt()` and the hardware's approximate
//! reciprocal square root, over 16 Ki values (64 KiB of input: the loop runs from L2, so
//! it measures arithmetic rather than memory).
//!
//! Run with `cargo bench -p galaxy --bench inverse_square_root`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use galaxy::numbers::inverse_square_root::{
    fast_inverse_square_root_slice, hardware_inverse_square_root, plain_inverse_square_root_slice,
};

const VALUES: usize = 1 << 14;

fn inverse_square_roots(criterion: &mut Criterion) {
    // Positive values spread over many exponents: 1, 1 + 2⁻¹⁹, … up to about 2⁸.
    let values: Vec<f32> = (0..VALUES as u32)
        .map(|index| f32::from_bits(1.0f32.to_bits() + index * 16))
        .collect();
    let mut output = vec![0.0f32; VALUES];
    let mut group = criterion.benchmark_group("inverse_square_root");
    group.throughput(Throughput::Elements(VALUES as u64));
    group.bench_function("one divided by sqrt", |bencher| {
        bencher.iter(|| plain_inverse_square_root_slice(black_box(&values), black_box(&mut output)))
    });
    group.bench_function("bit trick and one Newton step", |bencher| {
        bencher.iter(|| fast_inverse_square_root_slice(black_box(&values), black_box(&mut output)))
    });
    group.bench_function("hardware reciprocal square root", |bencher| {
        bencher.iter(|| hardware_inverse_square_root(black_box(&values), black_box(&mut output)))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    targets = inverse_square_roots
}
criterion_main!(benches);
