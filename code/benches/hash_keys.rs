//! Strings, interned integer ids and an enum as the keys of a table that counts events,
//! for the page "Integer keys instead of strings in hash tables".
//!
//! Run with `cargo bench -p galaxy --bench hash_keys`. Two groups: eight event kinds (where
//! an enum is possible: the set of keys is known when the program is written), and 16 384
//! distinct run-time names (where only strings or interned ids are). Every variant counts
//! the same stream of events and returns the counts.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use galaxy::numbers::hash_keys::{
    EventKind, Interner, count_by_enum, count_by_id, count_by_id_fast_hash, count_by_index,
    count_by_string, names_and_events,
};

/// Events per measured call: enough that the table's own allocation does not dominate.
const EVENTS: usize = 100_000;

fn eight_kinds(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("hash_keys_eight_kinds");
    group.throughput(Throughput::Elements(EVENTS as u64));
    let (_, stream) = names_and_events(8, EVENTS, 5);
    let kinds: Vec<EventKind> = stream.iter().map(|&index| EventKind::ALL[index]).collect();
    let names: Vec<&str> = kinds.iter().map(|kind| kind.name()).collect();
    let mut interner = Interner::default();
    let ids: Vec<u32> = names.iter().map(|name| interner.intern(name)).collect();

    group.bench_function("String keys", |bencher| {
        bencher.iter(|| count_by_string(black_box(&names)))
    });
    group.bench_function("u32 ids, SipHash", |bencher| {
        bencher.iter(|| count_by_id(black_box(&ids)))
    });
    group.bench_function("u32 ids, multiplicative hash", |bencher| {
        bencher.iter(|| count_by_id_fast_hash(black_box(&ids)))
    });
    group.bench_function("u32 ids as Vec index", |bencher| {
        bencher.iter(|| count_by_index(black_box(&ids), interner.len()))
    });
    group.bench_function("enum as array index", |bencher| {
        bencher.iter(|| count_by_enum(black_box(&kinds)))
    });
    group.finish();
}

fn many_names(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("hash_keys_many_names");
    group.throughput(Throughput::Elements(EVENTS as u64));
    let distinct = 16_384;
    let (names, stream) = names_and_events(distinct, EVENTS, 6);
    let strings: Vec<&str> = stream.iter().map(|&index| names[index].as_str()).collect();
    let mut interner = Interner::default();
    let ids: Vec<u32> = strings.iter().map(|name| interner.intern(name)).collect();

    group.bench_function(BenchmarkId::new("String keys", distinct), |bencher| {
        bencher.iter(|| count_by_string(black_box(&strings)))
    });
    group.bench_function(BenchmarkId::new("u32 ids, SipHash", distinct), |bencher| {
        bencher.iter(|| count_by_id(black_box(&ids)))
    });
    group.bench_function(
        BenchmarkId::new("u32 ids, multiplicative hash", distinct),
        |bencher| bencher.iter(|| count_by_id_fast_hash(black_box(&ids))),
    );
    group.bench_function(
        BenchmarkId::new("u32 ids as Vec index", distinct),
        |bencher| bencher.iter(|| count_by_index(black_box(&ids), interner.len())),
    );
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = eight_kinds, many_names
}
criterion_main!(benches);
