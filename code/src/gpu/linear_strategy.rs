//! Which linear kernel to run, and the chooser that picks one per shape.
//!
//! The crate has three linear kernels, kept side by side so the book can compare them:
//!
//! - **naive** (`shaders/linear.wgsl`): one output element per invocation, every operand
//!   read from memory;
//! - **tiled** (`shaders/templates/linear.wgsl.template` with `USE_WORKGROUP_MEMORY`): a
//!   workgroup stages square tiles of the operands in workgroup memory;
//! - **register-blocked** (`shaders/templates/linear_register_blocked.wgsl.template`): tiles
//!   in workgroup memory, a block of outputs per invocation in registers, vec4 loads.
//!
//! A [`LinearStrategy`] names one of them with its configuration; it compiles its pipeline
//! through a [`PipelineCache`] and binds it to tensors. [`LinearStrategy::for_shape`] is the
//! chooser the compiled graph mode uses; [`LinearStrategy::candidates`] lists everything a
//! benchmark may try on a device.

use thiserror::Error;

use crate::gpu::linear_search::{LinearShape, measured_strategy};
use crate::gpu::preprocessor::PreprocessorError;
use crate::gpu::record::{BoundDispatch, LinearTiles, bind_linear_with_tiles};
use crate::gpu::register_blocked_linear::{
    ConfigurationError, KernelLimits, RegisterBlockedConfig,
};
use crate::gpu::shader::{ShaderChecks, compile_wgsl_with_checks};
use crate::gpu::specialised_linear::specialised_linear_source;
use crate::gpu::{GpuContext, GpuError, GpuTensor, Kernel, PipelineCache};

// ANCHOR: linear_strategy
/// One linear kernel and its configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinearStrategy {
    /// `shaders/linear.wgsl`: 16 × 16 invocations, one output element each.
    Naive,
    /// The template's workgroup-memory variant, with `edge × edge` tiles.
    Tiled { edge: u32 },
    /// The register-blocked template. Needs the inner dimension and the columns to be
    /// multiples of 4.
    RegisterBlocked(RegisterBlockedConfig),
}
// ANCHOR_END: linear_strategy

/// Which strategy a runner uses for its linear layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinearSelection {
    /// The same strategy for every layer; a layer it cannot run is an error.
    Fixed(LinearStrategy),
    /// [`LinearStrategy::for_shape`] for every layer.
    PerShape,
    /// For every layer, the fastest candidate measured on its shape at preparation
    /// ([`crate::gpu::linear_search`]), cached in the context by shape.
    Measured,
}

impl Default for LinearSelection {
    /// The naive kernel: what every mode used before the fast kernels existed, so the
    /// modes the book compares stay comparable.
    fn default() -> Self {
        LinearSelection::Fixed(LinearStrategy::Naive)
    }
}

impl LinearSelection {
    /// The strategy for a `rows × inner` by `inner × columns` layer.
    pub fn strategy_for(
        self,
        context: &GpuContext,
        rows: usize,
        inner: usize,
        columns: usize,
    ) -> Result<LinearStrategy, GpuError> {
        match self {
            LinearSelection::Fixed(strategy) => {
                strategy.check(context, inner, columns)?;
                Ok(strategy)
            }
            LinearSelection::PerShape => {
                Ok(LinearStrategy::for_shape(context, rows, inner, columns)?)
            }
            LinearSelection::Measured => {
                let shape = LinearShape {
                    rows,
                    inner,
                    columns,
                };
                measured_strategy(context, shape)
            }
        }
    }
}

/// Why a linear strategy cannot run.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LinearStrategyError {
    #[error(transparent)]
    Configuration(#[from] ConfigurationError),
    #[error(
        "the {strategy} kernel loads vec4s, so the inner dimension ({inner}) and the columns \
         ({columns}) must be multiples of 4"
    )]
    NotMultiplesOfFour {
        strategy: String,
        inner: usize,
        columns: usize,
    },
    #[error(
        "a tiled linear kernel with {edge} × {edge} tiles is not possible on this device (at \
         most {maximum_edge} invocations per side, {maximum_invocations} in all, and \
         {maximum_workgroup_bytes} bytes of workgroup memory)"
    )]
    TiledEdge {
        edge: u32,
        maximum_edge: u32,
        maximum_invocations: u32,
        maximum_workgroup_bytes: u32,
    },
    #[error("no linear kernel fits this device's limits: {reason}")]
    NothingFits { reason: String },
    #[error(transparent)]
    Preprocessor(#[from] PreprocessorError),
}

// ANCHOR: chooser_constants
/// Workgroups a linear layer should have to keep a large GPU busy. An H100 has 132
/// streaming multiprocessors with 65,536 registers each. An invocation that keeps 64 sums,
/// plus its operands and addresses, should stay within 128 registers, and at 128 two
/// 256-invocation workgroups fit on one multiprocessor: about 256 workgroups give every
/// multiprocessor work. Smaller GPUs are filled sooner; a larger tile is still the better choice there
/// because it reloads the operands fewer times.
pub const WORKGROUPS_TO_FILL_A_LARGE_GPU: u64 = 256;

/// The register-blocked configurations the chooser considers, largest tile first. Each is
/// a classic shape: 8 × 8 sums per invocation for the large tiles (the most reuse of every
/// value read), 4 × 4 for the small ones (more invocations per workgroup).
pub const PREFERRED_CONFIGURATIONS: [RegisterBlockedConfig; 6] = [
    RegisterBlockedConfig::new(128, 128, 8, 8, 8),
    RegisterBlockedConfig::new(128, 64, 8, 8, 8),
    RegisterBlockedConfig::new(64, 64, 8, 8, 8),
    RegisterBlockedConfig::new(64, 32, 16, 4, 4),
    RegisterBlockedConfig::new(32, 32, 16, 4, 4),
    RegisterBlockedConfig::new(16, 32, 16, 4, 4),
];

/// The edges the chooser tries, in order, when vec4 loads are impossible.
const FALLBACK_TILED_EDGES: [u32; 2] = [16, 8];
// ANCHOR_END: chooser_constants

impl LinearStrategy {
    // ANCHOR: for_shape
    /// The strategy the compiled graph mode runs a `rows × inner` by `inner × columns`
    /// layer with.
    ///
    /// 1. Shapes whose inner dimension or columns are not multiples of 4 cannot take vec4
    ///    loads: the tiled kernel with 16 × 16 tiles (8 × 8 on a device too small for that).
    /// 2. Otherwise the register-blocked kernel, with the largest of
    ///    [`PREFERRED_CONFIGURATIONS`] that still gives the layer
    ///    [`WORKGROUPS_TO_FILL_A_LARGE_GPU`] workgroups: large tiles reuse every loaded
    ///    value more, but a GPU with idle multiprocessors wastes more than it saves.
    /// 3. A layer too small to reach that many even with the smallest tile gets the
    ///    configuration that gives it the most workgroups (the 256 × 256 layers of the
    ///    standard workload get 16 × 32 tiles: 128 workgroups).
    ///
    /// Configurations the device cannot run are skipped; if none is left, the error says why.
    pub fn for_shape(
        context: &GpuContext,
        rows: usize,
        inner: usize,
        columns: usize,
    ) -> Result<LinearStrategy, LinearStrategyError> {
        let limits = KernelLimits::of(&context.limits());
        choose(&limits, rows, inner, columns)
    }
    // ANCHOR_END: for_shape

    /// Every strategy that can run on this device: the naive kernel, the tiled kernel with
    /// each edge the device allows, and every register-blocked candidate
    /// ([`RegisterBlockedConfig::candidates`]). For sweeps.
    pub fn candidates(context: &GpuContext) -> Vec<LinearStrategy> {
        let limits = KernelLimits::of(&context.limits());
        let mut candidates = vec![LinearStrategy::Naive];
        for edge in [8, 16, 32] {
            let tiled = LinearStrategy::Tiled { edge };
            if tiled.check_limits(&limits).is_ok() {
                candidates.push(tiled);
            }
        }
        candidates.extend(
            RegisterBlockedConfig::candidates(&limits)
                .into_iter()
                .map(LinearStrategy::RegisterBlocked),
        );
        candidates
    }

    /// Whether this strategy can run a layer with this inner dimension and these columns
    /// on this device.
    pub fn check(
        &self,
        context: &GpuContext,
        inner: usize,
        columns: usize,
    ) -> Result<(), LinearStrategyError> {
        self.check_limits(&KernelLimits::of(&context.limits()))?;
        self.check_shape(inner, columns)
    }

    fn check_shape(&self, inner: usize, columns: usize) -> Result<(), LinearStrategyError> {
        if matches!(self, LinearStrategy::RegisterBlocked(_))
            && (!inner.is_multiple_of(4) || !columns.is_multiple_of(4))
        {
            return Err(LinearStrategyError::NotMultiplesOfFour {
                strategy: self.to_string(),
                inner,
                columns,
            });
        }
        Ok(())
    }

    fn check_limits(&self, limits: &KernelLimits) -> Result<(), LinearStrategyError> {
        match *self {
            // 16 × 16 = 256 invocations is what every WebGPU device offers.
            LinearStrategy::Naive => Ok(()),
            LinearStrategy::Tiled { edge } => {
                let invocations = u64::from(edge) * u64::from(edge);
                let bytes = 2 * invocations * std::mem::size_of::<f32>() as u64;
                if edge == 0
                    || edge > limits.max_workgroup_size_x
                    || invocations > u64::from(limits.max_invocations_per_workgroup)
                    || bytes > u64::from(limits.max_workgroup_storage_bytes)
                {
                    return Err(LinearStrategyError::TiledEdge {
                        edge,
                        maximum_edge: limits.max_workgroup_size_x,
                        maximum_invocations: limits.max_invocations_per_workgroup,
                        maximum_workgroup_bytes: limits.max_workgroup_storage_bytes,
                    });
                }
                Ok(())
            }
            LinearStrategy::RegisterBlocked(config) => Ok(config.check(limits)?),
        }
    }

    /// The block of the output one workgroup computes.
    pub fn tiles(&self) -> LinearTiles {
        match *self {
            LinearStrategy::Naive => LinearTiles {
                rows: 16,
                columns: 16,
            },
            LinearStrategy::Tiled { edge } => LinearTiles {
                rows: edge,
                columns: edge,
            },
            LinearStrategy::RegisterBlocked(config) => LinearTiles {
                rows: config.tile_rows,
                columns: config.tile_columns,
            },
        }
    }

    // ANCHOR: strategy_pipeline
    /// The compiled pipeline of this strategy, with or without the fused ReLU, from the
    /// cache when it holds it.
    pub fn pipeline(
        &self,
        context: &GpuContext,
        cache: &PipelineCache,
        apply_relu: bool,
    ) -> Result<wgpu::ComputePipeline, GpuError> {
        let limits = KernelLimits::of(&context.limits());
        self.check_limits(&limits)?;
        let constants = [("apply_relu", if apply_relu { 1.0 } else { 0.0 })];
        let label = format!("{self}{}", if apply_relu { " + relu" } else { "" });
        match *self {
            LinearStrategy::Naive => {
                let kernel = if apply_relu {
                    Kernel::LinearRelu
                } else {
                    Kernel::Linear
                };
                cache.pipeline(context, kernel)
            }
            LinearStrategy::Tiled { edge } => cache.generated_pipeline(&label, || {
                let source =
                    specialised_linear_source(edge, true).map_err(LinearStrategyError::from)?;
                compile_wgsl_with_checks(
                    context,
                    &label,
                    &source,
                    "main",
                    &constants,
                    ShaderChecks::Full,
                )
            }),
            LinearStrategy::RegisterBlocked(config) => cache.generated_pipeline(&label, || {
                let source = config.source(&limits).map_err(LinearStrategyError::from)?;
                // The template's loops count to constants or to the inner dimension, and
                // it writes its workgroup memory before reading it: see ShaderChecks.
                compile_wgsl_with_checks(
                    context,
                    &label,
                    &source,
                    "main",
                    &constants,
                    ShaderChecks::TrustedLoops,
                )
            }),
        }
    }
    // ANCHOR_END: strategy_pipeline

    /// Binds a pipeline of this strategy to `output = input · weights + bias`, checking
    /// the shapes (and, for the register-blocked kernel, that they take vec4 loads).
    pub fn bind(
        &self,
        context: &GpuContext,
        pipeline: &wgpu::ComputePipeline,
        input: &GpuTensor,
        weights: &GpuTensor,
        bias: &GpuTensor,
        output: &GpuTensor,
    ) -> Result<BoundDispatch, GpuError> {
        self.check_shape(input.columns(), weights.columns())?;
        bind_linear_with_tiles(
            context,
            pipeline,
            self.tiles(),
            input,
            weights,
            bias,
            output,
        )
    }
}

impl std::fmt::Display for LinearStrategy {
    /// A name that identifies the kernel and its configuration: `naive`, `tiled 16×16`,
    /// `register-blocked 128×128×8/8×8`.
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LinearStrategy::Naive => write!(formatter, "naive"),
            LinearStrategy::Tiled { edge } => write!(formatter, "tiled {edge}×{edge}"),
            LinearStrategy::RegisterBlocked(config) => {
                write!(formatter, "register-blocked {config}")
            }
        }
    }
}

// ANCHOR: choose
/// The chooser, on limits alone, so that it can be tested for any device.
fn choose(
    limits: &KernelLimits,
    rows: usize,
    inner: usize,
    columns: usize,
) -> Result<LinearStrategy, LinearStrategyError> {
    if !inner.is_multiple_of(4) || !columns.is_multiple_of(4) {
        return FALLBACK_TILED_EDGES
            .into_iter()
            .map(|edge| LinearStrategy::Tiled { edge })
            .find(|strategy| strategy.check_limits(limits).is_ok())
            .ok_or_else(|| LinearStrategyError::NothingFits {
                reason: format!(
                    "the shape needs the tiled kernel (inner {inner}, columns {columns} are not \
                     both multiples of 4) and not even 8 × 8 tiles fit"
                ),
            });
    }
    let runnable: Vec<RegisterBlockedConfig> = PREFERRED_CONFIGURATIONS
        .into_iter()
        .filter(|config| config.check(limits).is_ok())
        .collect();
    let enough_workgroups = runnable
        .iter()
        .find(|config| config.workgroups_for(rows, columns) >= WORKGROUPS_TO_FILL_A_LARGE_GPU);
    // `max_by_key` keeps the last of equals: the smallest tile among those with the most
    // workgroups, which is the one with the most invocations to spare.
    let most_workgroups = runnable
        .iter()
        .max_by_key(|config| config.workgroups_for(rows, columns));
    enough_workgroups
        .or(most_workgroups)
        .map(|config| LinearStrategy::RegisterBlocked(*config))
        .ok_or_else(|| LinearStrategyError::NothingFits {
            reason: format!(
                "none of the register-blocked configurations fits (the smallest needs {} \
                 invocations and {} bytes of workgroup memory)",
                PREFERRED_CONFIGURATIONS[5].invocations(),
                PREFERRED_CONFIGURATIONS[5].workgroup_memory_bytes()
            ),
        })
}
// ANCHOR_END: choose

#[cfg(test)]
mod tests {
    use super::*;

    const H100: KernelLimits = KernelLimits {
        max_invocations_per_workgroup: 1024,
        max_workgroup_size_x: 1024,
        max_workgroup_storage_bytes: 48 * 1024,
    };

    fn register_blocked(
        limits: &KernelLimits,
        rows: usize,
        inner: usize,
        columns: usize,
    ) -> RegisterBlockedConfig {
        match choose(limits, rows, inner, columns).unwrap() {
            LinearStrategy::RegisterBlocked(config) => config,
            other => panic!("{rows}×{inner}×{columns}: expected register-blocked, got {other}"),
        }
    }

    #[test]
    fn large_layers_get_the_largest_tile() {
        for size in [2048, 4096, 8192] {
            let config = register_blocked(&H100, size, size, size);
            assert_eq!(config, PREFERRED_CONFIGURATIONS[0], "{size}");
        }
    }

    #[test]
    fn smaller_layers_get_smaller_tiles_until_the_gpu_is_full() {
        // 1024² with 128 × 128 tiles is only 64 workgroups; 64 × 64 tiles give 256.
        assert_eq!(
            register_blocked(&H100, 1024, 1024, 1024),
            RegisterBlockedConfig::new(64, 64, 8, 8, 8)
        );
        // The standard workload's 256 × 256 layers cannot reach 256 workgroups: they get
        // the configuration with the most.
        let config = register_blocked(&H100, 256, 256, 256);
        assert_eq!(config, RegisterBlockedConfig::new(16, 32, 16, 4, 4));
        assert_eq!(config.workgroups_for(256, 256), 128);
    }

    #[test]
    fn shapes_without_vec4_fall_back_to_the_tiled_kernel() {
        for (rows, inner, columns) in [
            (1, 1, 1),
            (64, 63, 64),
            (64, 64, 63),
            (3, 5, 7),
            (256, 2, 256),
        ] {
            assert_eq!(
                choose(&H100, rows, inner, columns).unwrap(),
                LinearStrategy::Tiled { edge: 16 },
                "{rows}×{inner}×{columns}"
            );
        }
    }

    #[test]
    fn the_chooser_never_picks_vec4_for_a_shape_that_cannot_take_it() {
        for rows in [1, 3, 4, 17, 64, 1000] {
            for inner in 1..=24 {
                for columns in 1..=24 {
                    let strategy = choose(&H100, rows, inner, columns).unwrap();
                    assert!(
                        strategy.check_shape(inner, columns).is_ok(),
                        "{rows}×{inner}×{columns}: {strategy}"
                    );
                    let takes_vec4 = inner.is_multiple_of(4) && columns.is_multiple_of(4);
                    assert_eq!(
                        matches!(strategy, LinearStrategy::RegisterBlocked(_)),
                        takes_vec4,
                        "{rows}×{inner}×{columns}: {strategy}"
                    );
                }
            }
        }
    }

    #[test]
    fn small_devices_get_what_fits_or_a_typed_error() {
        let small = KernelLimits {
            max_invocations_per_workgroup: 64,
            max_workgroup_size_x: 64,
            max_workgroup_storage_bytes: 16 * 1024,
        };
        // Only the 8 × 8 × 8 (64 invocations) and smaller configurations fit.
        let config = register_blocked(&small, 4096, 4096, 4096);
        assert!(config.invocations() <= 64, "{config}");
        assert_eq!(
            choose(&small, 5, 5, 5).unwrap(),
            LinearStrategy::Tiled { edge: 8 }
        );
        let tiny = KernelLimits {
            max_invocations_per_workgroup: 16,
            max_workgroup_size_x: 16,
            max_workgroup_storage_bytes: 1024,
        };
        assert!(matches!(
            choose(&tiny, 8, 8, 8),
            Err(LinearStrategyError::NothingFits { .. })
        ));
        assert!(matches!(
            choose(&tiny, 7, 7, 7),
            Err(LinearStrategyError::NothingFits { .. })
        ));
    }

    #[test]
    fn register_blocked_refuses_shapes_without_vec4() {
        let strategy = LinearStrategy::RegisterBlocked(PREFERRED_CONFIGURATIONS[5]);
        assert!(matches!(
            strategy.check_shape(6, 8),
            Err(LinearStrategyError::NotMultiplesOfFour { inner: 6, .. })
        ));
        assert!(strategy.check_shape(8, 8).is_ok());
        assert!(LinearStrategy::Tiled { edge: 16 }.check_shape(6, 7).is_ok());
    }

    #[test]
    fn names_identify_the_configuration() {
        assert_eq!(LinearStrategy::Naive.to_string(), "naive");
        assert_eq!(
            LinearStrategy::Tiled { edge: 16 }.to_string(),
            "tiled 16×16"
        );
        assert_eq!(
            LinearStrategy::RegisterBlocked(PREFERRED_CONFIGURATIONS[0]).to_string(),
            "register-blocked 128×128×8/8×8"
        );
    }
}
