//! CPU operators: the reference implementations every GPU result is checked against, and
//! the teaching variants the memory-hierarchy chapter compares.
//!
//! An MLP needs three operators: the linear layer `x · W + b`, ReLU and a row-wise
//! softmax. Each comes in several variants that compute the same values and differ only
//! in how they use memory, so that the benchmarks (`cargo bench --bench cpu_operators`)
//! can show what each idea is worth:
//!
//! - [`linear`]: from the textbook triple loop ([`linear_naive`]) through a register
//!   accumulator, transposed weights and a cache-friendly loop order to cache blocking.
//! - [`linear_register_blocked`](mod@linear_register_blocked): packed operands, a
//!   micro-kernel that keeps a tile of outputs in registers, and AVX2 and AVX-512 builds
//!   of it chosen at run time; [`linear_parallel`](mod@linear_parallel) runs it on every
//!   core.
//! - [`relu`](mod@relu): allocating a new tensor, writing into a preallocated one, or
//!   overwriting the input.
//! - [`softmax`](mod@softmax): numerically stable, allocating or in place.
//! - [`reduce`]: sums and maxima with one accumulator or several, the smallest example
//!   of a dependency chain limiting speed.
//! - [`fused`]: linear, ReLU and softmax finished row by row while the row is in cache.
//! - [`fast_exp`]: `exp` as arithmetic the compiler can vectorise, for the fast softmax.
//! - [`prepacked`]: weights packed once ahead of time, bias and ReLU in the epilogue of
//!   the matrix product; [`layer_stack`] runs a chain of such layers one block of rows at
//!   a time, the threads sharing the rows as a measurement chose.
//!
//! - [`int8_matmul`]: int8 activations times int8 weights with exact `i32` sums, the
//!   kernel of every int8 linear layer (module 3); [`int8`]: the quantised weights and the
//!   graph's int8 linear operator built on it.
//! - [`sparse`]: a matrix in compressed sparse row (CSR) form; [`linear_sparse`]: the
//!   graph's linear operator with CSR weights (module 3).
//!
//! [`linear_into`], [`relu`](fn@relu) and [`softmax`](fn@softmax) are the ones to use as
//! references; the others exist to be compared.

pub mod add;
pub mod fast_exp;
pub mod fused;
pub mod int8;
pub mod int8_matmul;
pub mod layer_stack;
pub mod linear;
pub mod linear_parallel;
pub mod linear_register_blocked;
pub mod linear_sparse;
pub mod prepacked;
pub mod reduce;
pub mod relu;
pub mod softmax;
pub mod sparse;

#[cfg(test)]
mod properties;

pub use add::{add, add_into};
pub use fused::{
    linear_relu_fused, linear_relu_into, linear_relu_softmax_fused, linear_relu_softmax_into,
};
pub use linear::{
    check_linear_shapes, linear_blocked, linear_into, linear_local_accumulator, linear_loop_order,
    linear_naive, linear_transposed_weights,
};
pub use linear_parallel::{linear_parallel, linear_parallel_into};
pub use linear_register_blocked::{linear_register_blocked, linear_register_blocked_into};
pub use reduce::{
    max_propagating_nan, max_several_accumulators, max_single_accumulator,
    sum_several_accumulators, sum_single_accumulator,
};
pub use relu::{relu, relu_in_place, relu_into};
pub use softmax::{softmax, softmax_in_place};
