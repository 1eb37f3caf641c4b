//! The reference solutions of the speed exercises against their naive versions: kernel
//! time, one dispatch submitted and waited for, data already on the GPU.
//!
//! `cargo bench -p galaxy-exercises --bench solutions`. Every kernel is checked against
//! the CPU reference on its input before it is timed (see `galaxy_exercises::figures`).

use criterion::{Criterion, criterion_group, criterion_main};
use galaxy::gpu::GpuContext;
use galaxy_exercises::figures::{
    Spread, TimedKernel, conv1d_kernels, histogram_kernels, linear_kernels, softmax_kernels,
};

fn context() -> &'static GpuContext {
    GpuContext::shared().unwrap_or_else(|error| panic!("the benchmarks need a GPU: {error}"))
}

fn bench_group(criterion: &mut Criterion, group_name: &str, kernels: Vec<TimedKernel>) {
    let context = context();
    let mut group = criterion.benchmark_group(group_name);
    group.sample_size(10);
    for kernel in &kernels {
        group.bench_function(kernel.label, |bencher| {
            bencher.iter(|| kernel.prepared.dispatch_and_wait(context).unwrap());
        });
    }
    group.finish();
}

fn solutions(criterion: &mut Criterion) {
    let context = context();
    let checked = |kernels: Result<Vec<TimedKernel>, galaxy_exercises::CheckError>| {
        kernels.unwrap_or_else(|error| panic!("{error}"))
    };
    bench_group(
        criterion,
        "linear 256",
        checked(linear_kernels(context, 256)),
    );
    bench_group(
        criterion,
        "softmax 64×4096",
        checked(softmax_kernels(context, 64, 4096)),
    );
    bench_group(
        criterion,
        "conv1d 65536, 33 taps",
        checked(conv1d_kernels(context, 1 << 16, 33)),
    );
    bench_group(
        criterion,
        "histogram 262144 in one bin",
        checked(histogram_kernels(context, 1 << 18, Spread::OneBin)),
    );
}

criterion_group!(benches, solutions);
criterion_main!(benches);
