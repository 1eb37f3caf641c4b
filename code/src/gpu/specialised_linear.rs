//! One linear-layer template, specialised by the preprocessor into the kernel wanted.
//!
//! `shaders/templates/linear.wgsl.template` holds two kernels behind one
//! `#ifdef USE_WORKGROUP_MEMORY`: a plain loop, and a tiled loop that stages tiles of the
//! input and the weights in workgroup memory. `WORKGROUP_SIZE` sets the tile edge. Which
//! variant is fastest depends on the device (how large its caches are, how much
//! workgroup memory it has), so the choice is made at run time, by writing a few
//! `#define`s in front of the text before it is compiled.

use thiserror::Error;

use crate::gpu::preprocessor::{PreprocessorError, preprocess};
use crate::gpu::record::bind_linear_with_tile;
use crate::gpu::{GpuContext, GpuError, GpuTensor, compile_wgsl};

/// The template, baked into the binary like the hand-written shaders.
pub const LINEAR_TEMPLATE: &str = include_str!("../../../shaders/templates/linear.wgsl.template");

/// Why a specialised linear kernel could not be made.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SpecialisationError {
    #[error(
        "a workgroup of {workgroup_size} × {workgroup_size} invocations is not possible on this device \
         (at most {maximum_edge} per side and {maximum_invocations} in all)"
    )]
    WorkgroupSize {
        workgroup_size: u32,
        maximum_edge: u32,
        maximum_invocations: u32,
    },
    #[error(transparent)]
    Preprocessor(#[from] PreprocessorError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

// ANCHOR: specialised_linear_source
/// The WGSL of the linear kernel for a tile edge of `workgroup_size`, tiled through
/// workgroup memory or not.
pub fn specialised_linear_source(
    workgroup_size: u32,
    use_workgroup_memory: bool,
) -> Result<String, PreprocessorError> {
    let workgroup_size = workgroup_size.to_string();
    let mut defines = vec![("WORKGROUP_SIZE", workgroup_size.as_str())];
    if use_workgroup_memory {
        // A flag: only its presence matters.
        defines.push(("USE_WORKGROUP_MEMORY", ""));
    }
    preprocess(LINEAR_TEMPLATE, &defines)
}
// ANCHOR_END: specialised_linear_source

/// A compiled specialisation of the linear template, ready to record.
pub struct SpecialisedLinear {
    workgroup_size: u32,
    use_workgroup_memory: bool,
    pipeline: wgpu::ComputePipeline,
}

impl SpecialisedLinear {
    // ANCHOR: specialised_linear_compile
    /// Preprocesses the template for this configuration and compiles the result.
    pub fn compile(
        context: &GpuContext,
        workgroup_size: u32,
        use_workgroup_memory: bool,
    ) -> Result<SpecialisedLinear, SpecialisationError> {
        // Checked here: an impossible workgroup would otherwise surface as a shader
        // validation message, and a zero edge as a division by zero when dispatching.
        let limits = context.limits();
        let maximum_edge = limits
            .max_compute_workgroup_size_x
            .min(limits.max_compute_workgroup_size_y);
        let maximum_invocations = limits.max_compute_invocations_per_workgroup;
        let invocations = u64::from(workgroup_size) * u64::from(workgroup_size);
        if workgroup_size == 0
            || workgroup_size > maximum_edge
            || invocations > u64::from(maximum_invocations)
        {
            return Err(SpecialisationError::WorkgroupSize {
                workgroup_size,
                maximum_edge,
                maximum_invocations,
            });
        }
        let source = specialised_linear_source(workgroup_size, use_workgroup_memory)?;
        let label = format!(
            "linear {workgroup_size}×{workgroup_size}{}",
            if use_workgroup_memory { " tiled" } else { "" }
        );
        let pipeline = compile_wgsl(context, &label, &source, "main", &[])?;
        Ok(SpecialisedLinear {
            workgroup_size,
            use_workgroup_memory,
            pipeline,
        })
    }
    // ANCHOR_END: specialised_linear_compile

    pub fn workgroup_size(&self) -> u32 {
        self.workgroup_size
    }

    pub fn uses_workgroup_memory(&self) -> bool {
        self.use_workgroup_memory
    }

    // ANCHOR: specialised_linear_record
    /// Records `output = input · weights + bias`, with the bindings of `linear.wgsl`. The
    /// grid is sized in tiles of this specialisation's edge.
    pub fn record(
        &self,
        context: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        input: &GpuTensor,
        weights: &GpuTensor,
        bias: &GpuTensor,
        output: &GpuTensor,
    ) -> Result<(), GpuError> {
        let tile = self.workgroup_size;
        bind_linear_with_tile(context, &self.pipeline, tile, input, weights, bias, output)?
            .record(encoder);
        Ok(())
    }
    // ANCHOR_END: specialised_linear_record
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_chooses_the_variant() {
        let tiled = specialised_linear_source(8, true).unwrap();
        let plain = specialised_linear_source(8, false).unwrap();
        assert!(tiled.contains("var<workgroup> input_tile: array<f32, 8 * 8>;"));
        assert!(tiled.contains("workgroupBarrier()"));
        assert!(!plain.contains("workgroupBarrier()"));
        assert!(plain.contains("@workgroup_size(8, 8, 1)"));
        for source in [tiled, plain] {
            assert!(!source.contains("#if") && !source.contains("#define"));
            assert!(source.contains("let row = row_tile * 8 + local.y;"));
        }
    }
}
