//! The parallel graph runner against the sequential CPU graph runner, on a graph of 8
//! branches (room to run side by side) and on the chain-shaped standard workload (none),
//! and one graph traversed as pointers and as indices, for the pages on graphs in
//! module 2.
//!
//! Run with `cargo bench -p galaxy --bench parallel_graphs`. The figures come from
//! `examples/parallel_graphs.rs`, which sweeps the number of branches and the sizes.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use galaxy::graph::{BranchShape, Workload, random_branches, random_mlp};
use galaxy::parallel::graph_runner::{LinearKernel, ParallelGraphRunner};
use galaxy::parallel::index_graph::{DagDescription, IndexGraph};
use galaxy::parallel::pointer_graph::{Allocation, PointerGraph};
use galaxy::runner::CpuGraphRunner;

fn runners(criterion: &mut Criterion, group_name: &str, workload: &Workload) {
    let mut group = criterion.benchmark_group(group_name);
    let mut sequential = CpuGraphRunner::prepare(&workload.graph);
    group.bench_function("sequential CpuGraphRunner", |bencher| {
        bencher.iter(|| sequential.run(black_box(&workload.input)).unwrap())
    });
    for (name, kernel) in [
        ("parallel, layers split by rows", LinearKernel::RowParallel),
        (
            "parallel, one thread per layer",
            LinearKernel::SingleThreaded,
        ),
    ] {
        let mut runner = ParallelGraphRunner::prepare(&workload.graph, kernel);
        group.bench_function(name, |bencher| {
            bencher.iter(|| runner.run(black_box(&workload.input)).unwrap())
        });
    }
    group.finish();
}

fn branching_and_chain(criterion: &mut Criterion) {
    let shape = BranchShape {
        rows: 32,
        columns: 256,
        branches: 8,
        depth: 4,
    };
    runners(
        criterion,
        "graph_runners_8_branches",
        &random_branches(shape, 7).unwrap(),
    );
    runners(
        criterion,
        "graph_runners_chain",
        &random_mlp(128, 16, 3).unwrap(),
    );
}

fn traversal(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("graph_traversal_65536_nodes");
    let description = DagDescription::random(1 << 16, 5);
    let index_graph = IndexGraph::new(&description);
    let mut values = Vec::new();
    group.bench_function("indices", |bencher| {
        bencher.iter(|| index_graph.evaluate(black_box(&mut values)))
    });
    for (name, allocation) in [
        ("pointers, graph order", Allocation::GraphOrder),
        ("pointers, shuffled", Allocation::Shuffled),
    ] {
        let mut graph = PointerGraph::new(&description, allocation, 9);
        let mut stack = Vec::new();
        group.bench_function(name, |bencher| {
            bencher.iter(|| graph.evaluate(black_box(&mut stack)))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    targets = branching_and_chain, traversal
}
criterion_main!(benches);
