//! The register-blocked linear kernel: one template, many tile configurations.
//!
//! `shaders/templates/linear_register_blocked.wgsl.template` explains the kernel itself. This
//! file describes a configuration (how large a block of the output one workgroup and one
//! invocation compute, and how far along the inner dimension one step goes), checks it
//! against the kernel's rules and the device's limits, and specialises the template for it.
//! Which configuration is fastest depends on the device and on the shape, so the tile sizes
//! are parameters rather than constants in the shader: the benchmarks sweep them.

use thiserror::Error;

use crate::gpu::preprocessor::{PreprocessorError, preprocess};

/// The template, baked into the binary like the hand-written shaders.
pub const REGISTER_BLOCKED_TEMPLATE: &str =
    include_str!("../../../shaders/templates/linear_register_blocked.wgsl.template");

// ANCHOR: register_blocked_config
/// The tile sizes of one register-blocked kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegisterBlockedConfig {
    /// Rows of the output one workgroup computes (BM).
    pub tile_rows: u32,
    /// Columns of the output one workgroup computes (BN).
    pub tile_columns: u32,
    /// How far along the inner dimension one step of the main loop goes (BK).
    pub tile_inner: u32,
    /// Rows of the output one invocation keeps in registers (TM).
    pub thread_rows: u32,
    /// Columns of the output one invocation keeps in registers (TN).
    pub thread_columns: u32,
}
// ANCHOR_END: register_blocked_config

/// The device limits a configuration must respect, taken from `wgpu::Limits` so that the
/// rules can be checked (and tested) without a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelLimits {
    pub max_invocations_per_workgroup: u32,
    pub max_workgroup_size_x: u32,
    pub max_workgroup_storage_bytes: u32,
}

impl KernelLimits {
    pub fn of(limits: &wgpu::Limits) -> KernelLimits {
        KernelLimits {
            max_invocations_per_workgroup: limits.max_compute_invocations_per_workgroup,
            max_workgroup_size_x: limits.max_compute_workgroup_size_x,
            max_workgroup_storage_bytes: limits.max_compute_workgroup_storage_size,
        }
    }
}

/// Why a register-blocked configuration cannot be compiled.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigurationError {
    #[error("{config}: {rule}")]
    BreaksARule {
        config: RegisterBlockedConfig,
        rule: &'static str,
    },
    #[error(
        "{config}: a workgroup of {invocations} invocations is more than the device allows \
         ({maximum})"
    )]
    TooManyInvocations {
        config: RegisterBlockedConfig,
        invocations: u32,
        maximum: u32,
    },
    #[error(
        "{config}: the slices need {bytes} bytes of workgroup memory, more than the device's \
         {maximum}"
    )]
    TooMuchWorkgroupMemory {
        config: RegisterBlockedConfig,
        bytes: u32,
        maximum: u32,
    },
    #[error(transparent)]
    Preprocessor(#[from] PreprocessorError),
}

/// The most sums one invocation may keep in registers. Beyond 8 × 8 a GPU runs out of
/// registers and spills the sums to memory, which defeats the point.
pub const MAXIMUM_SUMS_PER_INVOCATION: u32 = 64;

impl RegisterBlockedConfig {
    pub const fn new(
        tile_rows: u32,
        tile_columns: u32,
        tile_inner: u32,
        thread_rows: u32,
        thread_columns: u32,
    ) -> RegisterBlockedConfig {
        RegisterBlockedConfig {
            tile_rows,
            tile_columns,
            tile_inner,
            thread_rows,
            thread_columns,
        }
    }

    /// Invocations per workgroup: one per THREAD_ROWS × THREAD_COLUMNS block of the tile.
    pub fn invocations(&self) -> u32 {
        (self.tile_rows / self.thread_rows.max(1))
            * (self.tile_columns / self.thread_columns.max(1))
    }

    /// Bytes of workgroup memory: one TILE_INNER-deep slice of the input and of the weights.
    pub fn workgroup_memory_bytes(&self) -> u32 {
        (self.tile_rows + self.tile_columns) * self.tile_inner * std::mem::size_of::<f32>() as u32
    }

    // ANCHOR: register_blocked_check
    /// Checks the rules the template relies on, then the device's limits.
    pub fn check(&self, limits: &KernelLimits) -> Result<(), ConfigurationError> {
        let config = *self;
        let breaks = |rule| Err(ConfigurationError::BreaksARule { config, rule });
        let sizes = [
            self.tile_rows,
            self.tile_columns,
            self.tile_inner,
            self.thread_rows,
            self.thread_columns,
        ];
        if sizes.contains(&0) {
            return breaks("every size must be positive");
        }
        // Every register and workgroup-memory access moves a vec4.
        if sizes.iter().any(|size| !size.is_multiple_of(4)) {
            return breaks("every size must be a multiple of 4 (the kernel moves vec4s)");
        }
        if !self.tile_rows.is_multiple_of(self.thread_rows)
            || !self.tile_columns.is_multiple_of(self.thread_columns)
        {
            return breaks("an invocation's block must divide the workgroup's tile");
        }
        if self.thread_rows * self.thread_columns > MAXIMUM_SUMS_PER_INVOCATION {
            return breaks(
                "at most 64 sums per invocation (8 × 8), or they spill out of registers",
            );
        }
        let invocations = self.invocations();
        // Every invocation loads the same number of vec4s of each slice.
        let input_vectors = self.tile_rows * self.tile_inner / 4;
        let weight_vectors = self.tile_inner * self.tile_columns / 4;
        if !input_vectors.is_multiple_of(invocations) || !weight_vectors.is_multiple_of(invocations)
        {
            return breaks(
                "the vec4s of each slice must divide evenly among the invocations \
                 (make TILE_INNER larger or the invocations' blocks larger)",
            );
        }
        let maximum = limits
            .max_invocations_per_workgroup
            .min(limits.max_workgroup_size_x);
        if invocations > maximum {
            return Err(ConfigurationError::TooManyInvocations {
                config,
                invocations,
                maximum,
            });
        }
        let bytes = self.workgroup_memory_bytes();
        if bytes > limits.max_workgroup_storage_bytes {
            return Err(ConfigurationError::TooMuchWorkgroupMemory {
                config,
                bytes,
                maximum: limits.max_workgroup_storage_bytes,
            });
        }
        Ok(())
    }
    // ANCHOR_END: register_blocked_check

    // ANCHOR: register_blocked_source
    /// The WGSL of this configuration: the template with its five defines.
    pub fn source(&self, limits: &KernelLimits) -> Result<String, ConfigurationError> {
        self.check(limits)?;
        let values = [
            self.tile_rows,
            self.tile_columns,
            self.tile_inner,
            self.thread_rows,
            self.thread_columns,
        ]
        .map(|value| value.to_string());
        let names = [
            "TILE_ROWS",
            "TILE_COLUMNS",
            "TILE_INNER",
            "THREAD_ROWS",
            "THREAD_COLUMNS",
        ];
        let defines: Vec<(&str, &str)> = names
            .iter()
            .zip(&values)
            .map(|(name, value)| (*name, value.as_str()))
            .collect();
        Ok(preprocess(REGISTER_BLOCKED_TEMPLATE, &defines)?)
    }
    // ANCHOR_END: register_blocked_source

    // ANCHOR: register_blocked_candidates
    /// Every configuration worth trying on a device with these limits, largest tiles first:
    /// tiles of 16 to 128 on a side, steps of 8, 16 or 32 along the inner dimension, 4 × 4
    /// to 8 × 8 per invocation, at least 32 invocations per workgroup (one NVIDIA warp;
    /// fewer leaves lanes idle), and whatever [`RegisterBlockedConfig::check`] accepts.
    pub fn candidates(limits: &KernelLimits) -> Vec<RegisterBlockedConfig> {
        let mut candidates = Vec::new();
        for tile_rows in [128, 64, 32, 16] {
            for tile_columns in [128, 64, 32, 16] {
                for tile_inner in [8, 16, 32] {
                    for thread_rows in [8, 4] {
                        for thread_columns in [8, 4] {
                            let config = RegisterBlockedConfig::new(
                                tile_rows,
                                tile_columns,
                                tile_inner,
                                thread_rows,
                                thread_columns,
                            );
                            if config.invocations() >= 32 && config.check(limits).is_ok() {
                                candidates.push(config);
                            }
                        }
                    }
                }
            }
        }
        candidates.sort_by_key(|config| {
            std::cmp::Reverse((config.tile_rows * config.tile_columns, config.tile_inner))
        });
        candidates
    }
    // ANCHOR_END: register_blocked_candidates

    /// The number of workgroups that cover a `rows × columns` output.
    pub fn workgroups_for(&self, rows: usize, columns: usize) -> u64 {
        (rows as u64).div_ceil(u64::from(self.tile_rows))
            * (columns as u64).div_ceil(u64::from(self.tile_columns))
    }
}

impl std::fmt::Display for RegisterBlockedConfig {
    /// `128×128×8/8×8`: the workgroup's tile, its step along the inner dimension, and one
    /// invocation's block.
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            formatter,
            "{}×{}×{}/{}×{}",
            self.tile_rows,
            self.tile_columns,
            self.tile_inner,
            self.thread_rows,
            self.thread_columns
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The limits of lavapipe, the smallest device the crate runs on.
    const LAVAPIPE: KernelLimits = KernelLimits {
        max_invocations_per_workgroup: 1024,
        max_workgroup_size_x: 1024,
        max_workgroup_storage_bytes: 32 * 1024,
    };

    /// wgpu's default limits: what any WebGPU device offers.
    fn webgpu_defaults() -> KernelLimits {
        KernelLimits::of(&wgpu::Limits::default())
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
    fn every_candidate_specialises_into_valid_wgsl() {
        let candidates = RegisterBlockedConfig::candidates(&LAVAPIPE);
        assert!(candidates.len() > 10, "{candidates:?}");
        for config in candidates {
            let source = config.source(&LAVAPIPE).unwrap();
            assert!(!source.contains('#'), "{config}: a directive survived");
            validate_with_naga(&source, &config.to_string());
        }
    }

    #[test]
    fn candidates_respect_the_limits_they_are_given() {
        let small = webgpu_defaults();
        let candidates = RegisterBlockedConfig::candidates(&small);
        assert!(!candidates.is_empty());
        for config in &candidates {
            assert!(config.invocations() <= small.max_invocations_per_workgroup);
            assert!(config.workgroup_memory_bytes() <= small.max_workgroup_storage_bytes);
        }
        // Largest tiles first.
        let areas: Vec<u32> = candidates
            .iter()
            .map(|config| config.tile_rows * config.tile_columns)
            .collect();
        assert!(areas.windows(2).all(|pair| pair[0] >= pair[1]), "{areas:?}");
    }

    #[test]
    fn the_defines_reach_the_shader() {
        let config = RegisterBlockedConfig::new(64, 32, 16, 8, 4);
        let source = config.source(&LAVAPIPE).unwrap();
        assert!(source.contains("const threads_across: u32 = 32 / 4;"));
        assert!(source.contains("const threads_down: u32 = 64 / 8;"));
        assert!(
            source.contains("var<workgroup> input_slice: array<vec4<f32>, 16 * tile_row_vectors>;")
        );
        assert_eq!(config.invocations(), 64);
        assert_eq!(config.workgroup_memory_bytes(), (64 + 32) * 16 * 4);
    }

    #[test]
    fn broken_rules_are_named() {
        let cases = [
            (RegisterBlockedConfig::new(0, 64, 8, 4, 4), "positive"),
            (RegisterBlockedConfig::new(64, 64, 6, 4, 4), "multiple of 4"),
            (
                RegisterBlockedConfig::new(64, 36, 8, 4, 8),
                "divide the workgroup's tile",
            ),
            (RegisterBlockedConfig::new(128, 128, 8, 16, 8), "64 sums"),
            // 64 × 64 / 4 × 4 has 256 invocations but only 128 vec4s in an 8-deep slice.
            (RegisterBlockedConfig::new(64, 64, 8, 4, 4), "divide evenly"),
        ];
        for (config, words) in cases {
            match config.check(&LAVAPIPE) {
                Err(ConfigurationError::BreaksARule { rule, .. }) => {
                    assert!(rule.contains(words), "{config}: {rule}")
                }
                other => panic!("{config}: expected a broken rule, got {other:?}"),
            }
        }
    }

    #[test]
    fn device_limits_are_typed_errors() {
        let tiny = KernelLimits {
            max_invocations_per_workgroup: 64,
            max_workgroup_size_x: 64,
            max_workgroup_storage_bytes: 4096,
        };
        assert!(matches!(
            RegisterBlockedConfig::new(128, 128, 8, 8, 8).check(&tiny),
            Err(ConfigurationError::TooManyInvocations {
                invocations: 256,
                ..
            })
        ));
        assert!(matches!(
            RegisterBlockedConfig::new(64, 64, 32, 8, 8).check(&tiny),
            Err(ConfigurationError::TooMuchWorkgroupMemory { bytes: 16384, .. })
        ));
    }

    #[test]
    fn workgroups_round_up() {
        let config = RegisterBlockedConfig::new(128, 64, 8, 8, 8);
        assert_eq!(config.workgroups_for(256, 256), 2 * 4);
        assert_eq!(config.workgroups_for(1, 1), 1);
        assert_eq!(config.workgroups_for(129, 65), 2 * 2);
    }
}
