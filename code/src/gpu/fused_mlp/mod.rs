//! The fully fused MLP kernel: a chain of linear layers, ReLUs and a softmax in one dispatch.
//!
//! `shaders/templates/fused_mlp.wgsl.template` explains the kernel. This file holds what the
//! GPU side needs to know about a chain (its shape: [`FusedChainShape`]), how one workgroup
//! is laid out ([`FusedMlpConfig`]) and the checks of a layout against the device's limits,
//! and the specialisation of the template. [`kernel`] holds [`FusedMlpKernel`], which packs
//! the weights into one buffer and binds the kernel to an input and an output.
//!
//! Which chains of a graph to fuse, and whether fusing pays, is the compiler's decision
//! (`compiler::fused_mlp`); this file knows nothing about graphs.

pub mod kernel;

use thiserror::Error;

use crate::gpu::GpuError;
use crate::gpu::preprocessor::{PreprocessorError, preprocess};
use crate::gpu::register_blocked_linear::KernelLimits;

pub use kernel::FusedMlpKernel;

/// The template, baked into the binary like the hand-written shaders.
pub const FUSED_MLP_TEMPLATE: &str =
    include_str!("../../../../shaders/templates/fused_mlp.wgsl.template");

/// Invocations a workgroup of the fused kernel aims for: enough warps to hide the latency
/// of the weight loads, few enough that every invocation has a whole vec4 column to sum.
pub const TARGET_INVOCATIONS: u32 = 256;

/// The most ways [`FusedMlpConfig::for_rows`] splits the inner dimension.
pub const MOST_INNER_SLICES: u32 = 4;

// ANCHOR: fused_chain_shape
/// One linear layer of a fused chain: `inner × columns` weights, and whether a ReLU follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FusedLayerShape {
    pub inner: usize,
    pub columns: usize,
    pub relu: bool,
}

/// What the fused kernel computes: `rows × input_columns` in, an optional ReLU, the
/// layers one after the other, an optional row-wise softmax at the end.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FusedChainShape {
    pub rows: usize,
    pub input_columns: usize,
    pub input_relu: bool,
    pub layers: Vec<FusedLayerShape>,
    pub softmax: bool,
}
// ANCHOR_END: fused_chain_shape

/// Columns padded to whole vec4s.
pub(crate) fn vectors(columns: usize) -> usize {
    columns.div_ceil(4)
}

impl FusedChainShape {
    /// The columns of the result.
    pub fn output_columns(&self) -> usize {
        self.layers
            .last()
            .map_or(self.input_columns, |layer| layer.columns)
    }

    /// The widest tensor of the chain (input included), in vec4s.
    pub fn widest_vectors(&self) -> usize {
        self.layers
            .iter()
            .map(|layer| vectors(layer.columns))
            .chain([vectors(self.input_columns)])
            .max()
            .unwrap_or(1)
    }

    /// The widest tensor of the chain, in columns.
    pub fn widest_columns(&self) -> usize {
        self.layers
            .iter()
            .map(|layer| layer.columns)
            .chain([self.input_columns])
            .max()
            .unwrap_or(1)
    }

    /// The shape every layer has, if they all have the same (`None` for layers of
    /// different sizes, or none).
    pub fn uniform_layer(&self) -> Option<FusedLayerShape> {
        let first = *self.layers.first()?;
        self.layers
            .iter()
            .all(|layer| layer.inner == first.inner && layer.columns == first.columns)
            .then_some(first)
    }

    /// Multiply-adds count twice: the FLOPs of the linear layers.
    pub fn flops(&self) -> f64 {
        self.layers
            .iter()
            .map(|layer| 2.0 * self.rows as f64 * layer.inner as f64 * layer.columns as f64)
            .sum()
    }

    /// Bytes of all the weights and biases, as the kernel reads them (padded).
    pub fn parameter_bytes(&self) -> u64 {
        self.layers
            .iter()
            .map(|layer| {
                let columns = 4 * vectors(layer.columns) as u64;
                (4 * vectors(layer.inner) as u64 + 1) * columns * 4
            })
            .sum()
    }

    /// The layers agree with each other and with the input.
    pub(crate) fn check(&self) -> Result<(), FusedMlpError> {
        if self.rows == 0 || self.input_columns == 0 {
            return Err(FusedMlpError::EmptyChain);
        }
        if self.layers.is_empty() {
            return Err(FusedMlpError::NoLayers);
        }
        let mut width = self.input_columns;
        for (index, layer) in self.layers.iter().enumerate() {
            if layer.inner != width || layer.columns == 0 {
                return Err(FusedMlpError::LayersDoNotChain {
                    layer: index,
                    inner: layer.inner,
                    columns: layer.columns,
                    previous: width,
                });
            }
            width = layer.columns;
        }
        Ok(())
    }
}

// ANCHOR: fused_mlp_config
/// How one workgroup of the fused kernel is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FusedMlpConfig {
    /// Rows one workgroup owns from the first layer to the last (a power of two).
    pub rows_per_workgroup: u32,
    /// Rows whose sums one invocation keeps in registers (divides `rows_per_workgroup`).
    pub rows_per_invocation: u32,
    /// Invocations across the columns (a power of two); each computes the vec4 columns
    /// `column_invocation + k · column_invocations`.
    pub column_invocations: u32,
    /// Steps along the inner dimension (four rows of weights each) whose loads one
    /// invocation issues before it uses the first: more loads in flight hide more of the
    /// time a load takes.
    pub steps_in_flight: u32,
    /// Invocations that share a column and its rows and split the inner dimension among
    /// them (a power of two). With more than one, an invocation owns all the workgroup's
    /// rows, so no weight is loaded twice by one workgroup, and the slices' partial sums
    /// are added up in workgroup memory after a second barrier per layer.
    pub inner_slices: u32,
}
// ANCHOR_END: fused_mlp_config

/// How the fused kernel streams the weights when every layer has the same size and is
/// short (see [`FusedMlpConfig::weight_stream`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WeightStream {
    /// Steps (four weight rows each) of one slice of the inner dimension: what one
    /// invocation loads of each layer, all at once, a layer ahead.
    pub slice_steps: u32,
}

/// Why a fused kernel cannot be made for a chain.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum FusedMlpError {
    #[error("the chain has no rows or no input columns")]
    EmptyChain,
    #[error("the chain has no linear layer, so there is nothing for the fused kernel to do")]
    NoLayers,
    #[error("layer {layer} is {inner} × {columns}, but it reads a tensor of {previous} columns")]
    LayersDoNotChain {
        layer: usize,
        inner: usize,
        columns: usize,
        previous: usize,
    },
    #[error("the layer gives {given} weight tensors and biases for a chain of {expected} layers")]
    ParameterCount { expected: usize, given: usize },
    #[error(
        "layer {layer}: weights of {weights:?} and a bias of {bias:?} do not fit a layer of \
         {inner} × {columns}"
    )]
    ParameterShape {
        layer: usize,
        weights: (usize, usize),
        bias: (usize, usize),
        inner: usize,
        columns: usize,
    },
    #[error("{config}: {rule}")]
    BreaksARule {
        config: FusedMlpConfig,
        rule: &'static str,
    },
    #[error(
        "{config}: a workgroup of {invocations} invocations is more than the device allows \
         ({maximum})"
    )]
    TooManyInvocations {
        config: FusedMlpConfig,
        invocations: u32,
        maximum: u32,
    },
    #[error(
        "{config}: {rows} rows of activations {columns} wide (two blocks, and the partial sums \
         of a split inner dimension) need {bytes} bytes of workgroup memory, more than the \
         device's {maximum}"
    )]
    TooMuchWorkgroupMemory {
        config: FusedMlpConfig,
        rows: u32,
        columns: usize,
        bytes: u64,
        maximum: u32,
    },
    #[error(
        "{workgroups} workgroups of {rows} rows are more than the device can launch in one \
         dispatch"
    )]
    TooManyWorkgroups { workgroups: u64, rows: u32 },
    #[error(transparent)]
    Preprocessor(#[from] PreprocessorError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// The largest workgroup whose invocations keep two layers' worth of weights in registers
/// (see [`FusedMlpConfig::weight_stream`]).
pub const MOST_INVOCATIONS_WHEN_STREAMING: u32 = 512;

/// The most sums one invocation keeps in registers (as for the register-blocked kernel).
pub const MAXIMUM_SUMS_PER_INVOCATION: u32 = 64;

/// Steps of four weight rows in flight at once, unless a layout says otherwise.
pub const DEFAULT_STEPS_IN_FLIGHT: u32 = 8;

/// The most weight vec4s one invocation holds in flight.
pub const MAXIMUM_WEIGHTS_IN_FLIGHT: u32 = 32;

impl FusedMlpConfig {
    /// A layout as given; [`FusedMlpConfig::check`] says whether it can run.
    pub const fn new(
        rows_per_workgroup: u32,
        rows_per_invocation: u32,
        column_invocations: u32,
        steps_in_flight: u32,
        inner_slices: u32,
    ) -> FusedMlpConfig {
        FusedMlpConfig {
            rows_per_workgroup,
            rows_per_invocation,
            column_invocations,
            steps_in_flight,
            inner_slices,
        }
    }

    /// This layout with the inner dimension split `inner_slices` ways: every invocation
    /// then owns all the workgroup's rows.
    pub fn with_inner_slices(self, inner_slices: u32) -> FusedMlpConfig {
        FusedMlpConfig {
            inner_slices,
            rows_per_invocation: if inner_slices > 1 {
                self.rows_per_workgroup
            } else {
                self.rows_per_invocation
            },
            ..self
        }
    }

    // ANCHOR: fused_mlp_layout
    /// The layout for `rows_per_workgroup` rows of `shape`: one invocation per vec4 column
    /// (up to [`TARGET_INVOCATIONS`]), two rows per invocation, or more where that keeps
    /// the workgroup within [`TARGET_INVOCATIONS`]; where the columns leave invocations
    /// spare, the inner dimension split among them instead (below). Measured on an H100,
    /// one row per invocation was always slower (every row group loads the weights again) and eight
    /// steps in flight the fastest.
    pub fn for_rows(shape: &FusedChainShape, rows_per_workgroup: u32) -> FusedMlpConfig {
        let rows = rows_per_workgroup.max(1);
        let widest = u32::try_from(shape.widest_vectors()).unwrap_or(u32::MAX);
        let column_invocations = widest.next_power_of_two().clamp(1, TARGET_INVOCATIONS);
        let within_target = (rows * column_invocations).div_ceil(TARGET_INVOCATIONS);
        let rows_per_invocation = rows.min(2).max(within_target).min(rows);
        let layout = FusedMlpConfig {
            rows_per_workgroup: rows,
            // The softmax gives every row column_invocations / rows_per_invocation lanes.
            rows_per_invocation: rows_per_invocation.min(column_invocations),
            column_invocations,
            steps_in_flight: DEFAULT_STEPS_IN_FLIGHT,
            inner_slices: 1,
        };
        // Where the columns leave invocations unused, split the inner dimension among them
        // (up to four ways): every invocation then owns all the workgroup's rows, no weight
        // is loaded twice, and more loads are in flight. On an H100 this halved the fused
        // kernel's time at widths 128 to 512 (figures/data/h100-2026-11-24/fused-mlp/).
        let spare = TARGET_INVOCATIONS / column_invocations.max(1);
        let inner_slices = spare.clamp(1, MOST_INNER_SLICES);
        // Owning every row must keep an invocation's sums in registers.
        if inner_slices > 1 && rows > 1 && rows * 4 <= MAXIMUM_SUMS_PER_INVOCATION {
            layout.with_inner_slices(inner_slices)
        } else {
            layout
        }
    }
    // ANCHOR_END: fused_mlp_layout

    // ANCHOR: weight_stream
    /// How the kernel streams the weights a layer ahead of their use (`PIPELINED` in the
    /// template), when it can: every layer the same size, one vec4 column per invocation,
    /// no slice of the inner dimension cut short (slices past its end are empty), and the
    /// slices short enough that two layers' worth fit in the registers `steps_in_flight`
    /// allows (one in use, the next on its way). Otherwise the general loop runs, and the
    /// error says why.
    pub fn weight_stream(&self, shape: &FusedChainShape) -> Result<WeightStream, &'static str> {
        let first = shape
            .uniform_layer()
            .ok_or("the layers differ in size (or there are none)")?;
        if self.column_groups(shape) != 1 {
            return Err("an invocation computes several vec4 columns");
        }
        let inner_vectors = u32::try_from(vectors(first.inner)).unwrap_or(u32::MAX);
        let slice_steps = inner_vectors.div_ceil(self.inner_slices.max(1));
        if inner_vectors % slice_steps != 0 {
            return Err("the last slice of the inner dimension is cut short");
        }
        // Longer slices keep the general loop. On an H100, a stream of longer slices in
        // chunks halved to fit twice (width 256: 16 steps per slice in chunks of 4) ran
        // slower than the general loop's chunks of 8, and chunks of 8 loaded one after the
        // other, the first across the barrier, ran 70 to 250 times slower at widths 128 to
        // 512 (figures/data/h100-2026-11-25/stream-trials/).
        if 2 * slice_steps > self.steps_in_flight {
            return Err("a slice is too long for two layers' worth of weights in registers");
        }
        // A multiprocessor's registers are shared by the invocations on it: an NVIDIA SM has
        // 65 536, so a workgroup of 1024 leaves each at most 64, too few for two layers'
        // worth of four steps (32 vec4s, 128 registers). With 1024 invocations the stream
        // made runs at width 256 five times slower (16 slices: 1.69 ms against 0.32 ms for 8
        // slices and the general loop); at width 128, with 256 and 512 invocations (8 and
        // 16 slices), it ran in 0.128–0.142 ms against 0.152 ms for the planned layout
        // (figures/data/h100-2026-11-25/stream-trials/layouts.txt).
        if self.invocations() > MOST_INVOCATIONS_WHEN_STREAMING {
            return Err("the workgroup is too large to leave each invocation the registers");
        }
        Ok(WeightStream { slice_steps })
    }
    // ANCHOR_END: weight_stream

    pub fn invocations(&self) -> u32 {
        self.column_invocations * self.inner_slices.max(1) * self.row_groups()
    }

    /// Vec4 columns each column invocation computes, one after another.
    pub fn column_groups(&self, shape: &FusedChainShape) -> u32 {
        let widest = u32::try_from(shape.widest_vectors()).unwrap_or(u32::MAX);
        widest.div_ceil(self.column_invocations.max(1))
    }

    // ANCHOR: fused_mlp_memory
    /// Bytes of workgroup memory: two blocks of activations (the one a layer reads and the
    /// one it writes), each `rows_per_workgroup` rows of the widest tensor, plus one float
    /// per invocation for the softmax's partial results.
    pub fn workgroup_memory_bytes(&self, shape: &FusedChainShape) -> u64 {
        let block = u64::from(self.rows_per_workgroup) * shape.widest_vectors() as u64 * 16;
        // With a split inner dimension, one block of partial sums per slice as well.
        let partial_sums = if self.inner_slices > 1 {
            u64::from(self.inner_slices) * block
        } else {
            0
        };
        2 * block + partial_sums + u64::from(self.invocations()) * 4
    }
    // ANCHOR_END: fused_mlp_memory

    /// Groups of invocations that share columns but own different rows: each loads every
    /// weight it uses, so a workgroup loads its weights this many times.
    pub fn row_groups(&self) -> u32 {
        self.rows_per_workgroup / self.rows_per_invocation.max(1)
    }

    /// Workgroups the dispatch launches: one per block of rows.
    pub fn workgroups(&self, shape: &FusedChainShape) -> u64 {
        (shape.rows as u64).div_ceil(u64::from(self.rows_per_workgroup.max(1)))
    }

    /// Checks the rules the template relies on, then the device's limits.
    pub fn check(
        &self,
        shape: &FusedChainShape,
        limits: &KernelLimits,
    ) -> Result<(), FusedMlpError> {
        let config = *self;
        let breaks = |rule| Err(FusedMlpError::BreaksARule { config, rule });
        if !self.rows_per_workgroup.is_power_of_two()
            || !self.column_invocations.is_power_of_two()
            || !self.rows_per_invocation.is_power_of_two()
            || !self.inner_slices.is_power_of_two()
        {
            return breaks(
                "rows per workgroup, rows per invocation, column invocations and inner slices \
                 must be powers of two",
            );
        }
        if self.inner_slices > 1 && self.rows_per_invocation != self.rows_per_workgroup {
            return breaks(
                "with a split inner dimension every invocation owns all the workgroup's rows",
            );
        }
        if self.rows_per_invocation > self.rows_per_workgroup {
            return breaks("an invocation cannot own more rows than its workgroup");
        }
        if self.rows_per_invocation > self.column_invocations * self.inner_slices {
            return breaks(
                "the softmax needs at least one invocation per row: rows per invocation may \
                 not exceed the column invocations",
            );
        }
        if self.rows_per_invocation * 4 > MAXIMUM_SUMS_PER_INVOCATION {
            return breaks("at most 64 sums per invocation, or they spill out of registers");
        }
        if self.steps_in_flight == 0 || 4 * self.steps_in_flight > MAXIMUM_WEIGHTS_IN_FLIGHT {
            return breaks("1 to 8 steps in flight (at most 32 weight vec4s in registers)");
        }
        let invocations = self.invocations();
        let maximum = limits
            .max_invocations_per_workgroup
            .min(limits.max_workgroup_size_x);
        if invocations > maximum {
            return Err(FusedMlpError::TooManyInvocations {
                config,
                invocations,
                maximum,
            });
        }
        let bytes = self.workgroup_memory_bytes(shape);
        if bytes > u64::from(limits.max_workgroup_storage_bytes) {
            return Err(FusedMlpError::TooMuchWorkgroupMemory {
                config,
                rows: self.rows_per_workgroup,
                columns: shape.widest_columns(),
                bytes,
                maximum: limits.max_workgroup_storage_bytes,
            });
        }
        Ok(())
    }
}

impl std::fmt::Display for FusedMlpConfig {
    /// `rows per workgroup 8, invocations 256 (64 across the columns × 4 row groups), rows
    /// per invocation 2, steps in flight 8`.
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            formatter,
            "rows per workgroup {}, invocations {} ({} across the columns × {} row groups \
             × {} inner slices), rows per invocation {}, steps in flight {}",
            self.rows_per_workgroup,
            self.invocations(),
            self.column_invocations,
            self.row_groups(),
            self.inner_slices,
            self.rows_per_invocation,
            self.steps_in_flight
        )
    }
}

// ANCHOR: fused_mlp_source
/// The WGSL of the fused kernel for `shape` laid out as `config`: the template with the
/// chain's widths and the layout written in as constants.
pub fn fused_mlp_source(
    shape: &FusedChainShape,
    config: &FusedMlpConfig,
    limits: &KernelLimits,
) -> Result<String, FusedMlpError> {
    shape.check()?;
    config.check(shape, limits)?;
    let mut values = vec![
        ("ROW_COUNT", shape.rows.to_string()),
        ("INPUT_COLUMNS", shape.input_columns.to_string()),
        ("OUTPUT_COLUMNS", shape.output_columns().to_string()),
        ("LAYER_COUNT", shape.layers.len().to_string()),
        ("MAX_VECTORS", shape.widest_vectors().to_string()),
        ("ROWS", config.rows_per_workgroup.to_string()),
        (
            "ROWS_PER_INVOCATION",
            config.rows_per_invocation.to_string(),
        ),
        ("COLUMN_INVOCATIONS", config.column_invocations.to_string()),
        ("COLUMN_GROUPS", config.column_groups(shape).to_string()),
        ("STEPS_IN_FLIGHT", config.steps_in_flight.to_string()),
        ("INNER_SLICES", config.inner_slices.to_string()),
    ];
    // WGSL wants unsigned constants written as such where they meet u32 arithmetic.
    for (_, value) in &mut values {
        value.push('u');
    }
    let mut flags = Vec::new();
    if shape.input_relu {
        flags.push("INPUT_RELU");
    }
    if shape.softmax {
        flags.push("SOFTMAX");
    }
    if config.inner_slices > 1 {
        flags.push("SPLIT_INNER");
    }
    // Every layer the same size: the loops get constant bounds.
    if let Some(first) = shape.uniform_layer() {
        flags.push("UNIFORM_WIDTH");
        values.push(("INNER_VECTORS", format!("{}u", vectors(first.inner))));
        values.push(("COLUMN_VECTORS", format!("{}u", vectors(first.columns))));
    }
    if let Ok(stream) = config.weight_stream(shape) {
        flags.push("PIPELINED");
        values.push(("SLICE_STEPS", format!("{}u", stream.slice_steps)));
    }
    let mut defines: Vec<(&str, &str)> = values
        .iter()
        .map(|(name, value)| (*name, value.as_str()))
        .collect();
    defines.extend(flags.iter().map(|flag| (*flag, "")));
    Ok(preprocess(FUSED_MLP_TEMPLATE, &defines)?)
}
// ANCHOR_END: fused_mlp_source

#[cfg(test)]
mod tests {
    use super::*;

    /// The limits of lavapipe, the smallest device the crate runs on.
    const LAVAPIPE: KernelLimits = KernelLimits {
        max_invocations_per_workgroup: 1024,
        max_workgroup_size_x: 1024,
        max_workgroup_storage_bytes: 32 * 1024,
    };

    fn chain(rows: usize, widths: &[usize], softmax: bool) -> FusedChainShape {
        FusedChainShape {
            rows,
            input_columns: widths[0],
            input_relu: false,
            layers: widths
                .windows(2)
                .enumerate()
                .map(|(index, pair)| FusedLayerShape {
                    inner: pair[0],
                    columns: pair[1],
                    relu: index % 2 == 0,
                })
                .collect(),
            softmax,
        }
    }

    fn validate_with_naga(source: &str, what: &str) {
        let module = naga::front::wgsl::parse_str(source)
            .unwrap_or_else(|error| panic!("{what}: {}", error.emit_to_string(source)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)
        .unwrap_or_else(|error| panic!("{what}: {}", error.emit_to_string(source)));
    }

    #[test]
    fn every_layout_specialises_into_valid_wgsl() {
        for (rows, widths, softmax) in [
            (1, vec![1, 1], true),
            (4, vec![4, 4, 4], true),
            (256, vec![256, 256, 256], true),
            (33, vec![3, 17, 100, 33], false),
            (512, vec![512; 3], true),
        ] {
            let shape = chain(rows, &widths, softmax);
            for rows_per_workgroup in [1, 2, 4, 8] {
                for slices in [1, 4] {
                    let config = FusedMlpConfig::for_rows(&shape, rows_per_workgroup)
                        .with_inner_slices(slices);
                    if config.check(&shape, &LAVAPIPE).is_err() {
                        continue;
                    }
                    let source = fused_mlp_source(&shape, &config, &LAVAPIPE).unwrap();
                    assert!(!source.contains('#'), "a directive survived");
                    validate_with_naga(&source, &format!("{widths:?}, {config}"));
                }
            }
        }
    }

    #[test]
    fn short_uniform_chains_stream_their_weights_and_others_do_not() {
        let stream = |slice_steps| Ok(WeightStream { slice_steps });
        // 64 wide, split four ways: 4 steps per slice, two layers' worth within the 8
        // steps in flight.
        let narrow = chain(64, &[64, 64, 64], true);
        let config = FusedMlpConfig::for_rows(&narrow, 4);
        assert_eq!(config.weight_stream(&narrow), stream(4));
        let source = fused_mlp_source(&narrow, &config, &LAVAPIPE).unwrap();
        assert!(source.contains("fn load_slice("), "{config}");
        // Four wide: one step, fewer than the four slices; three of them idle.
        let four = chain(4, &[4, 4, 4], true);
        let config = FusedMlpConfig::for_rows(&four, 2).with_inner_slices(4);
        assert_eq!(config.weight_stream(&four), stream(1));
        // 12 steps split four ways: 3 per slice.
        let twelve = chain(8, &[48, 48], false);
        let config = FusedMlpConfig::for_rows(&twelve, 2).with_inner_slices(4);
        assert_eq!(config.weight_stream(&twelve), stream(3));
        // 256 wide split 16 ways: 4 steps per slice, but 64 × 16 = 1024 invocations, too
        // many to leave each the registers for two layers' worth.
        let wide = chain(256, &[256, 256, 256], true);
        let crowded = FusedMlpConfig::for_rows(&wide, 2).with_inner_slices(16);
        assert_eq!(crowded.invocations(), 1024);
        assert_eq!(
            crowded.weight_stream(&wide),
            Err("the workgroup is too large to leave each invocation the registers")
        );
        // 256 wide: 16 steps per slice, too long for two in registers.
        let config = FusedMlpConfig::for_rows(&wide, 4);
        assert_eq!(
            config.weight_stream(&wide),
            Err("a slice is too long for two layers' worth of weights in registers")
        );
        let source = fused_mlp_source(&wide, &config, &LAVAPIPE).unwrap();
        assert!(!source.contains("fn load_slice("));
        // Layers of different sizes, and 5 steps split four ways (2, 2, 1: a short slice),
        // take the general loop too.
        let mixed = chain(33, &[3, 17, 100, 33], false);
        let config = FusedMlpConfig::for_rows(&mixed, 2);
        assert_eq!(
            config.weight_stream(&mixed),
            Err("the layers differ in size (or there are none)")
        );
        let five = chain(8, &[20, 20], false);
        let config = FusedMlpConfig::for_rows(&five, 2).with_inner_slices(4);
        assert_eq!(
            config.weight_stream(&five),
            Err("the last slice of the inner dimension is cut short")
        );
    }

    #[test]
    fn the_layout_aims_at_one_invocation_per_vec4_column() {
        let shape = chain(256, &[256, 256], true);
        let config = FusedMlpConfig::for_rows(&shape, 8);
        assert_eq!(config.column_invocations, 64);
        // 64 column invocations leave room for four: the inner dimension is split four
        // ways, and every invocation owns all 8 rows.
        assert_eq!(config.inner_slices, 4);
        assert_eq!(config.invocations(), TARGET_INVOCATIONS);
        assert_eq!(config.rows_per_invocation, 8);
        assert_eq!(config.column_groups(&shape), 1);
        assert_eq!(config.workgroups(&shape), 32);
        // Two blocks of 8 rows × 256 floats, four blocks of partial sums, plus 256 partial
        // results for the softmax.
        assert_eq!(
            config.workgroup_memory_bytes(&shape),
            (2 + 4) * 8 * 256 * 4 + 256 * 4
        );
        // Without room to spare (1024 columns need 256 invocations) nothing is split.
        let wide = chain(4, &[1024, 1024], true);
        assert_eq!(FusedMlpConfig::for_rows(&wide, 4).inner_slices, 1);
        // A width of 3 is padded to one vec4; one row is one workgroup.
        let tiny = chain(1, &[3, 3], true);
        let config = FusedMlpConfig::for_rows(&tiny, 1);
        assert_eq!((config.column_invocations, config.invocations()), (1, 1));
        assert!(config.check(&tiny, &LAVAPIPE).is_ok());
    }

    #[test]
    fn wide_chains_run_out_of_workgroup_memory() {
        let shape = chain(1024, &[1024, 1024], true);
        let config = FusedMlpConfig::for_rows(&shape, 4);
        assert!(matches!(
            config.check(&shape, &LAVAPIPE),
            Err(FusedMlpError::TooMuchWorkgroupMemory { .. })
        ));
        let message = config.check(&shape, &LAVAPIPE).unwrap_err().to_string();
        assert!(message.contains("workgroup memory"), "{message}");
    }

    #[test]
    fn broken_rules_are_named() {
        let shape = chain(64, &[64, 64], true);
        let cases = [
            (FusedMlpConfig::new(3, 1, 16, 4, 1), "powers of two"),
            (FusedMlpConfig::new(2, 4, 16, 4, 1), "more rows than"),
            (
                FusedMlpConfig::new(32, 32, 16, 4, 1),
                "at least one invocation per row",
            ),
            (FusedMlpConfig::new(32, 32, 32, 4, 1), "64 sums"),
            (FusedMlpConfig::new(8, 2, 16, 9, 1), "steps in flight"),
            (
                FusedMlpConfig::new(8, 2, 16, 4, 4),
                "owns all the workgroup's rows",
            ),
            (FusedMlpConfig::new(8, 8, 16, 4, 3), "powers of two"),
        ];
        for (config, words) in cases {
            match config.check(&shape, &LAVAPIPE) {
                Err(FusedMlpError::BreaksARule { rule, .. }) => {
                    assert!(rule.contains(words), "{config}: {rule}")
                }
                other => panic!("{config}: expected a broken rule, got {other:?}"),
            }
        }
    }

    #[test]
    fn chains_that_do_not_chain_are_typed_errors() {
        let mut shape = chain(4, &[4, 8, 8], true);
        shape.layers[1].inner = 5;
        let config = FusedMlpConfig::for_rows(&shape, 4);
        assert!(matches!(
            fused_mlp_source(&shape, &config, &LAVAPIPE),
            Err(FusedMlpError::LayersDoNotChain { layer: 1, .. })
        ));
        shape.layers.clear();
        assert_eq!(
            fused_mlp_source(&shape, &config, &LAVAPIPE),
            Err(FusedMlpError::NoLayers)
        );
    }
}
