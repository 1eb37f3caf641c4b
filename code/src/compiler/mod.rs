//! The graph compiler: passes that rewrite a graph into one that computes the same
//! result with less work or less memory.
//!
//! Every pass takes a valid graph and gives back a valid graph (buffer reuse gives back
//! a buffer plan for it), so passes compose and each can be tested on its own: the result
//! must be the same.
//!
//! Module 3 adds two passes that change how weights are stored: [`quantize`] (int8
//! weights, `LinearInt8` layers) and [`sparsify`] (CSR weights, `LinearSparse` layers).
//!
//! Beside the passes, two ways of writing shaders as text: [`opcode`] lowers every node
//! to a list of op codes and generates its WGSL (fusing is appending op codes), and
//! [`preprocessor`] specialises a shader template with `#define` and `#ifdef`
//! ([`specialised_linear`] and [`register_blocked_linear`] use it; [`linear_strategy`]
//! chooses among the linear kernels).
//!
//! Those last four are files of [`crate::gpu`] (`code/src/gpu/`): immediate mode runs the
//! same kernels, and a module never imports one the book teaches later, so they live in
//! the lower module and appear here under the compiler's name.

pub mod buffer_reuse;
pub mod fused_mlp;
pub mod fusion;
pub mod in_place;
pub mod opcode;
pub mod quantize;
pub mod sparsify;
pub mod weight_rewrite;

pub use crate::gpu::{linear_strategy, preprocessor, register_blocked_linear, specialised_linear};

pub use crate::gpu::linear_strategy::{LinearSelection, LinearStrategy, LinearStrategyError};
pub use crate::gpu::register_blocked_linear::RegisterBlockedConfig;
pub use buffer_reuse::{BufferReuse, reuse_buffers};
pub use fusion::fuse;
pub use in_place::rewrite_in_place;
pub use quantize::{QuantizePassError, quantize};
pub use sparsify::{SPARSE_DENSITY_THRESHOLD, sparsify};
