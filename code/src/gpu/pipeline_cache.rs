//! The pipeline cache: compile each kernel once, reuse it afterwards.
//!
//! Turning WGSL into a pipeline runs a whole compiler (WGSL → naga IR → SPIR-V → the
//! driver's own compiler), which can take far longer than the kernel itself. Immediate
//! mode without a cache pays that on every call; with one, only on the first.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::gpu::shader::compile_kernel;
use crate::gpu::{GpuContext, GpuError, Kernel};

/// Whether compiled pipelines are kept for reuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShaderCompilation {
    /// Compile the kernel again on every call (what a naive implementation does).
    EveryCall,
    /// Compile each kernel once and reuse it.
    Cached,
}

// ANCHOR: pipeline_cache
/// Hands out compute pipelines, compiling them on every request or once, as chosen.
pub struct PipelineCache {
    compilation: ShaderCompilation,
    pipelines: Mutex<HashMap<Kernel, wgpu::ComputePipeline>>,
    /// Pipelines compiled from generated source (specialised templates), by a key that
    /// names the source and its constants.
    generated: Mutex<HashMap<String, wgpu::ComputePipeline>>,
    compilations: AtomicUsize,
}

impl PipelineCache {
    pub fn new(compilation: ShaderCompilation) -> PipelineCache {
        PipelineCache {
            compilation,
            pipelines: Mutex::new(HashMap::new()),
            generated: Mutex::new(HashMap::new()),
            compilations: AtomicUsize::new(0),
        }
    }

    /// The pipeline for `kernel`, compiled now or taken from the cache.
    pub fn pipeline(
        &self,
        context: &GpuContext,
        kernel: Kernel,
    ) -> Result<wgpu::ComputePipeline, GpuError> {
        if self.compilation == ShaderCompilation::Cached {
            let pipelines = self
                .pipelines
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            if let Some(pipeline) = pipelines.get(&kernel) {
                // A pipeline handle is reference-counted: cloning it is cheap.
                return Ok(pipeline.clone());
            }
        }
        let pipeline = compile_kernel(context, kernel)?;
        self.compilations.fetch_add(1, Ordering::Relaxed);
        if self.compilation == ShaderCompilation::Cached {
            self.pipelines
                .lock()
                .unwrap_or_else(|poison| poison.into_inner())
                .insert(kernel, pipeline.clone());
        }
        Ok(pipeline)
    }
    // ANCHOR_END: pipeline_cache

    // ANCHOR: generated_pipeline
    /// The pipeline for generated shader text: `compile` runs unless the cache already
    /// holds a pipeline under `key`. The key must name everything the source and the
    /// pipeline depend on (template, defines, pipeline constants); two different pipelines
    /// under one key would be a bug in the caller.
    pub fn generated_pipeline(
        &self,
        key: &str,
        compile: impl FnOnce() -> Result<wgpu::ComputePipeline, GpuError>,
    ) -> Result<wgpu::ComputePipeline, GpuError> {
        if self.compilation == ShaderCompilation::Cached {
            let generated = self
                .generated
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            if let Some(pipeline) = generated.get(key) {
                return Ok(pipeline.clone());
            }
        }
        let pipeline = compile()?;
        self.compilations.fetch_add(1, Ordering::Relaxed);
        if self.compilation == ShaderCompilation::Cached {
            self.generated
                .lock()
                .unwrap_or_else(|poison| poison.into_inner())
                .insert(key.to_string(), pipeline.clone());
        }
        Ok(pipeline)
    }
    // ANCHOR_END: generated_pipeline

    /// How many times a shader was compiled: the number the cache exists to keep small.
    pub fn compilations(&self) -> usize {
        self.compilations.load(Ordering::Relaxed)
    }

    pub fn compilation(&self) -> ShaderCompilation {
        self.compilation
    }
}
