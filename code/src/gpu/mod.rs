//! The GPU side: context, tensors in GPU memory, kernels, compilation and recording.
//!
//! Read the files in this order: `context` (getting a device), `tensor` (moving data),
//! `kernel` and `shader` (WGSL to pipelines), `pipeline_cache`, `dispatch` (sizing the
//! grid), `record` (putting it all into a command encoder).

pub mod context;
pub mod dispatch;
pub mod error;
pub mod kernel;
pub mod pipeline_cache;
pub mod record;
pub mod shader;
pub mod tensor;

pub use context::{
    AdapterSelection, ContextOptions, GpuContext, OPTIONAL_FEATURES, describe_adapter,
};
pub use dispatch::WorkgroupGrid;
pub use error::GpuError;
pub use kernel::{Kernel, Reduction, ReductionStrategy};
pub use pipeline_cache::{PipelineCache, ShaderCompilation};
pub use shader::{ShaderChecks, compile_kernel, compile_wgsl};
pub use tensor::{GpuTensor, Readback};
