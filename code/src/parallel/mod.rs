//! Module 2: parallelism on the CPU: threads and shared state, channels, data parallelism,
//! SIMD and irregular workloads.
