//! Module 3: numbers in a machine: float formats, rounding and summation error, integers
//! and bit tricks, compression, Z-order and packing.

pub mod atomic_packing;
pub mod bit_tricks;
pub mod data_measurements;
pub mod delta_coding;
pub mod depth_precision;
pub mod float_layout;
pub mod half_precision_gpu;
pub mod hash_keys;
pub mod integers;
pub mod inverse_square_root;
pub mod morton;
pub mod octahedral;
pub mod packed_fields;
pub mod point_quantisation;
pub mod run_length;
pub mod sparse_positions;
pub mod summation;
pub mod varint;
