//! Module 2: parallelism on the CPU: threads and shared state, channels, data parallelism,
//! SIMD and irregular workloads.

/// What async is for: a minimal executor and futures that wait.
pub mod async_wait;
/// Clamping with a branch, a select and `min`: which forms vectorise.
pub mod branchless;
/// A producer → worker → consumer pipeline on std and crossbeam channels.
pub mod channels;
/// Sparse matrices in CSR form: validation, conversion, and sparse × dense products (also x · W).
pub mod csr;
/// False sharing: per-thread counters in one cache line against counters padded apart.
pub mod false_sharing;
/// The same work in equal fixed chunks on scoped threads, and a shared queue of blocks.
pub mod fixed_chunks;
/// Flat `u32`/`f32` arrays on the GPU: upload, poison, read back (for the irregular kernels).
pub mod gpu_arrays;
/// The CSR × dense product on the GPU, and the dense product it is measured against.
pub mod gpu_csr;
/// The data-parallel workload as a WGSL kernel, one invocation per item.
pub mod gpu_map;
/// The Monte Carlo estimate of π on the GPU, with the random streams in WGSL.
pub mod gpu_monte_carlo;
/// Sorting on the GPU: a bitonic network, one compare-and-exchange pass per dispatch.
pub mod gpu_sort;
/// Independent branches of a computational graph run at the same time (dependency counts on rayon).
pub mod graph_runner;
/// A histogram on threads: one lock, atomic bins, and per-thread partial histograms.
pub mod histogram;
/// The same graph as a `Vec` of nodes with `u32` indices: the layout of the crate's IR.
pub mod index_graph;
/// A binary search tree in one `Vec`, children as indices.
pub mod index_tree;
/// Arrays of structs against structs of arrays for a particle query.
pub mod layouts;
/// A Monte Carlo estimate of π that gives the same count on any number of threads and on the GPU.
pub mod monte_carlo;
/// One graph on several GPUs: data-parallel and pipeline-parallel runners, and the hand-over between devices.
pub mod multi_device;
/// A graph as `Rc<RefCell<…>>` nodes that point at their inputs (compared with `index_graph`).
pub mod pointer_graph;
/// Gather through sequential and random indices, on one thread and with rayon.
pub mod random_access;
/// Counter-based random streams: the same numbers whoever draws them, in Rust and in WGSL.
pub mod random_streams;
/// One counter shared by threads: `Mutex`, `AtomicU64`, and per-thread counts summed at the end.
pub mod shared_counter;
/// Summing floats: in order, in lanes the compiler vectorises, and with AVX2/AVX-512 intrinsics.
pub mod simd;
/// Sorting keys on the CPU: `sort_unstable`, an LSD radix sort (u32 and f32), rayon's parallel sort.
pub mod sorting;
/// The bitonic sorting network: its passes, and one pass on the CPU.
pub mod sorting_network;
/// Starting threads: `spawn` with moved data, `scope` with borrowed data, and splitting work into chunks.
pub mod threads;
/// rayon's `par_iter` and how work stealing spreads an uneven workload.
pub mod work_stealing;
/// Two workloads of equal total work, one balanced and one a rising ramp (data parallelism).
pub mod workloads;
