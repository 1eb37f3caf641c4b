//! The GPU side: context, tensors in GPU memory, kernels, compilation and recording.
//!
//! Read the files in this order: `context` (getting a device), `tensor` (moving data),
//! `kernel` and `shader` (WGSL to pipelines), `pipeline_cache`, `dispatch` (sizing the
//! grid), `record` (putting it all into a command encoder).
//!
//! Four more files hold the faster linear kernels and the chooser among them, which the
//! graph-compiler chapter teaches: `preprocessor` (a `#define` preprocessor for shader
//! text), `specialised_linear` and `register_blocked_linear` (the templates it specialises)
//! and `linear_strategy` (which kernel a layer runs). They live here rather than in
//! [`crate::compiler`] because immediate mode runs them too, and a module never imports one
//! the book teaches later; `compiler` re-exports them under its own name.
//!
//! Two more run module 3's cheaper layers in the graph runner: `linear_int8` (the input
//! quantised row by row on the GPU, then `i32` dot products of packed int8 levels) and
//! `linear_sparse` (weights in compressed sparse columns).

pub mod context;
pub mod dispatch;
pub mod error;
pub mod fused_mlp;
pub mod kernel;
pub mod linear_int8;
pub mod linear_search;
pub mod linear_sparse;
pub mod linear_strategy;
pub mod pipeline_cache;
pub mod preprocessor;
pub mod probe;
pub mod quantization_flips;
pub mod record;
pub mod register_blocked_linear;
pub mod shader;
pub mod specialised_linear;
pub mod tensor;
pub mod timestamps;
pub mod upload;
pub mod waiting;

pub use context::{
    AdapterSelection, ContextOptions, GpuContext, OPTIONAL_FEATURES, contexts_on_every_adapter,
    contexts_on_one_adapter, describe_adapter,
};
pub use dispatch::WorkgroupGrid;
pub use error::GpuError;
pub use kernel::{Kernel, Reduction, ReductionStrategy};
pub use linear_strategy::{LinearSelection, LinearStrategy, LinearStrategyError};
pub use pipeline_cache::{PipelineCache, ShaderCompilation};
pub use register_blocked_linear::RegisterBlockedConfig;
pub use shader::{ShaderChecks, compile_kernel, compile_wgsl};
pub use tensor::{GpuTensor, Readback};
pub use timestamps::{TimestampQueries, TimestampSupport};
pub use upload::UploadBuffer;
