//! Module 3: numbers in a machine: float formats, rounding and summation error, integers
//! and bit tricks, compression, Z-order and packing.

pub mod float_layout;
pub mod half_precision_gpu;
pub mod inverse_square_root;
pub mod summation;
