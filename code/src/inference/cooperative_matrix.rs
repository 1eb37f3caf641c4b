//! A matrix product on the GPU's matrix units through wgpu's experimental cooperative
//! matrices (`shaders/inference/matmul_cooperative.wgsl`): f16 operands, f32 sums, 16 × 16 ×
//! 16 tiles.
//!
//! wgpu 30 offers them behind the feature `EXPERIMENTAL_COOPERATIVE_MATRIX`, on Vulkan
//! (`VK_KHR_cooperative_matrix` with the Vulkan memory model at device scope) and on Metal
//! (simdgroup matrices, MSL 2.3), and only to a device created with
//! `ExperimentalFeatures::enabled()`, an `unsafe` promise that the caller accepts bugs. The
//! crate's shared [`GpuContext`] does not make that promise, so [`CooperativeMatmul`] creates
//! a second device of its own on the same adapter. WGSL needs `enable wgpu_cooperative_matrix;`
//! and offers square tiles only (`coop_mat8x8`, `coop_mat16x16`), so a configuration is usable
//! only if the adapter lists it with M = N = K.
//!
//! Where anything is missing, [`CooperativeMatmul::new`] says exactly what, as a
//! [`CooperativeMatrixError`].

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use thiserror::Error;

use crate::gpu::dispatch::WorkgroupGrid;
use crate::gpu::record::{BoundDispatch, uniform_buffer};
use crate::gpu::{GpuContext, GpuError, OPTIONAL_FEATURES, compile_wgsl};
use crate::inference::gpu_f16::{
    GpuF16Error, HALF_UNIT_ROUNDOFF, SINGLE_UNIT_ROUNDOFF, to_half_bits, upload_half,
};
use crate::parallel::gpu_arrays::{poisoned, read_back};
use crate::tensor::{ShapeError, Tensor2d};

/// The edge of one cooperative-matrix tile.
pub const TILE: usize = 16;
/// The edge of the output block one subgroup computes (2 × 2 tiles).
pub const BLOCK: usize = 32;

/// The configuration the kernel needs: M = N = K = 16, f16 operands, f32 accumulator.
pub const REQUIRED_CONFIGURATION: wgpu::CooperativeMatrixProperties =
    wgpu::CooperativeMatrixProperties {
        m_size: 16,
        n_size: 16,
        k_size: 16,
        ab_type: wgpu::CooperativeScalarType::F16,
        cr_type: wgpu::CooperativeScalarType::F32,
        saturating_accumulation: false,
    };

/// Why the cooperative-matrix product cannot run, said for a person.
#[derive(Debug, Error)]
pub enum CooperativeMatrixError {
    #[error(
        "the adapter {adapter} does not offer wgpu's EXPERIMENTAL_COOPERATIVE_MATRIX feature \
         (wgpu 30 offers it on Vulkan with VK_KHR_cooperative_matrix and the Vulkan memory \
         model at device scope, and on Metal with simdgroup matrices)"
    )]
    MissingFeature { adapter: String },
    #[error(
        "the adapter {adapter} offers cooperative matrices but not SHADER_F16, which the f16 \
         tiles need"
    )]
    MissingHalf { adapter: String },
    #[error(
        "the adapter {adapter} offers cooperative matrices, but not 16×16×16 tiles with f16 \
         operands and f32 sums; it offers {offered}"
    )]
    MissingConfiguration { adapter: String, offered: String },
    #[error(
        "the adapter {adapter} runs subgroups of {minimum} to {maximum} invocations; the kernel \
         makes one workgroup one subgroup and needs a fixed subgroup size"
    )]
    VaryingSubgroupSize {
        adapter: String,
        minimum: u32,
        maximum: u32,
    },
    #[error("the adapter {adapter} could not create a device with cooperative matrices: {reason}")]
    Device { adapter: String, reason: String },
    #[error(transparent)]
    Half(#[from] GpuF16Error),
    #[error(transparent)]
    Shape(#[from] ShapeError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// One configuration as `16×16×16 f16→f32`.
pub fn describe_configuration(properties: &wgpu::CooperativeMatrixProperties) -> String {
    format!(
        "{}×{}×{} {:?}→{:?}",
        properties.m_size,
        properties.n_size,
        properties.k_size,
        properties.ab_type,
        properties.cr_type
    )
    .to_lowercase()
}

// ANCHOR: requirements
/// Checks what the adapter reports against what the kernel needs, in the order a reader
/// would look: the feature, f16, the tile configuration, a fixed subgroup size. Returns the
/// subgroup size.
pub fn check_requirements(
    info: &wgpu::AdapterInfo,
    features: wgpu::Features,
    configurations: &[wgpu::CooperativeMatrixProperties],
) -> Result<u32, CooperativeMatrixError> {
    let adapter = crate::gpu::describe_adapter(info);
    if !features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
        return Err(CooperativeMatrixError::MissingFeature { adapter });
    }
    if !features.contains(wgpu::Features::SHADER_F16) {
        return Err(CooperativeMatrixError::MissingHalf { adapter });
    }
    let wanted = REQUIRED_CONFIGURATION;
    let found = configurations.iter().any(|offered| {
        (offered.m_size, offered.n_size, offered.k_size) == (16, 16, 16)
            && offered.ab_type == wanted.ab_type
            && offered.cr_type == wanted.cr_type
    });
    if !found {
        let offered = if configurations.is_empty() {
            "none".to_string()
        } else {
            configurations
                .iter()
                .map(describe_configuration)
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(CooperativeMatrixError::MissingConfiguration { adapter, offered });
    }
    if info.subgroup_min_size != info.subgroup_max_size || info.subgroup_min_size == 0 {
        return Err(CooperativeMatrixError::VaryingSubgroupSize {
            adapter,
            minimum: info.subgroup_min_size,
            maximum: info.subgroup_max_size,
        });
    }
    Ok(info.subgroup_min_size)
}
// ANCHOR_END: requirements

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Dimensions {
    rows: u32,
    inner: u32,
    columns: u32,
    padding: u32,
}

/// `values` (rows × columns) copied into a zero-filled `padded_rows × padded_columns` tensor.
pub fn pad(values: &Tensor2d, padded_rows: usize, padded_columns: usize) -> Tensor2d {
    let mut padded = Tensor2d::zeros(padded_rows, padded_columns);
    for row in 0..values.rows() {
        for column in 0..values.columns() {
            padded.set(row, column, values.get(row, column));
        }
    }
    padded
}

/// The top-left `rows × columns` corner of `values`.
pub fn crop(values: &Tensor2d, rows: usize, columns: usize) -> Tensor2d {
    let mut cropped = Tensor2d::zeros(rows, columns);
    for row in 0..rows {
        for column in 0..columns {
            cropped.set(row, column, values.get(row, column));
        }
    }
    cropped
}

/// The adapter `context` was created on, found again among those wgpu lists (the context
/// keeps its own to itself), so that a second device can be created on it.
pub fn adapter_of(context: &GpuContext) -> Result<wgpu::Adapter, GpuError> {
    let wanted = context.adapter_info();
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    pollster::block_on(instance.enumerate_adapters(wanted.backend.into()))
        .into_iter()
        .find(|adapter| {
            let info = adapter.get_info();
            (info.name.as_str(), info.vendor, info.device)
                == (wanted.name.as_str(), wanted.vendor, wanted.device)
        })
        .ok_or(GpuError::NoAdapter)
}

/// A device with cooperative matrices and the compiled kernel.
pub struct CooperativeMatmul {
    context: GpuContext,
    pipeline: wgpu::ComputePipeline,
}

/// Operands uploaded and bound with an output: one product, ready to dispatch again and
/// again (what the benchmarks time).
pub struct PreparedProduct {
    pub dispatch: BoundDispatch,
    output: wgpu::Buffer,
    rows: usize,
    columns: usize,
    padded_columns: usize,
    padded_rows: usize,
}

impl CooperativeMatmul {
    // ANCHOR: new
    /// Creates a device with `EXPERIMENTAL_COOPERATIVE_MATRIX` on the adapter that `context`
    /// runs on, and compiles the kernel, or says what the adapter lacks.
    pub fn on_adapter_of(
        context: &GpuContext,
    ) -> Result<CooperativeMatmul, CooperativeMatrixError> {
        let adapter = adapter_of(context)?;
        let info = adapter.get_info();
        let subgroup_size = check_requirements(
            &info,
            adapter.features(),
            &adapter.cooperative_matrix_properties(),
        )?;
        let features = (adapter.features() & OPTIONAL_FEATURES)
            | wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX
            | wgpu::Features::SHADER_F16;
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("galaxy cooperative-matrix device"),
            required_features: features,
            required_limits: adapter.limits(),
            // SAFETY: wgpu asks for this promise before it enables an experimental feature:
            // that its implementation may still have bugs, which the caller accepts. The
            // kernel's results are checked against the CPU before any is used.
            experimental_features: unsafe { wgpu::ExperimentalFeatures::enabled() },
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        }))
        .map_err(|error| CooperativeMatrixError::Device {
            adapter: crate::gpu::describe_adapter(&info),
            reason: error.to_string(),
        })?;
        let context = GpuContext::from_device(adapter, device, queue);
        let pipeline = compile_wgsl(
            &context,
            "matmul_cooperative",
            include_str!("../../../shaders/inference/matmul_cooperative.wgsl"),
            "matmul_cooperative",
            &[("subgroup_size", f64::from(subgroup_size))],
        )?;
        Ok(CooperativeMatmul { context, pipeline })
    }
    // ANCHOR_END: new

    /// The device the kernel runs on (its own, with the experimental feature enabled).
    pub fn context(&self) -> &GpuContext {
        &self.context
    }

    /// Rounds `left` and `right` to f16, pads them with zeros to whole tiles, uploads them
    /// and binds them with an output poisoned with NaN.
    pub fn prepare(
        &self,
        left: &Tensor2d,
        right: &Tensor2d,
    ) -> Result<PreparedProduct, CooperativeMatrixError> {
        if left.columns() != right.rows() {
            return Err(ShapeError::Incompatible {
                operation: "matmul_cooperative",
                expectation: "the left matrix needs one column per row of the right matrix",
                left_name: "left",
                left: (left.rows(), left.columns()),
                right_name: "right",
                right: (right.rows(), right.columns()),
            }
            .into());
        }
        let context = &self.context;
        let padded_rows = left.rows().next_multiple_of(BLOCK).max(BLOCK);
        let padded_inner = left.columns().next_multiple_of(TILE).max(TILE);
        let padded_columns = right.columns().next_multiple_of(BLOCK).max(BLOCK);
        let left_bits = to_half_bits(&pad(left, padded_rows, padded_inner), "the left matrix")?;
        let right_bits = to_half_bits(
            &pad(right, padded_inner, padded_columns),
            "the right matrix",
        )?;
        let grid = WorkgroupGrid {
            x: (padded_columns / BLOCK) as u32,
            y: (padded_rows / BLOCK) as u32,
            z: 1,
        };
        let limit = context.limits().max_compute_workgroups_per_dimension;
        if grid.x > limit || grid.y > limit {
            return Err(GpuError::DispatchTooLarge {
                operation: "matmul_cooperative",
                workgroups: u64::from(grid.x.max(grid.y)),
                limit,
            }
            .into());
        }
        let output = poisoned(context, "cooperative output", padded_rows * padded_columns);
        let dimensions = uniform_buffer(
            context,
            &Dimensions {
                rows: padded_rows as u32,
                inner: padded_inner as u32,
                columns: padded_columns as u32,
                padding: 0,
            },
        );
        let dispatch = BoundDispatch::new(
            context,
            &self.pipeline,
            &[
                &upload_half(context, "cooperative left", &left_bits),
                &upload_half(context, "cooperative right", &right_bits),
                &output,
                &dimensions,
            ],
            grid,
        );
        Ok(PreparedProduct {
            dispatch,
            output,
            rows: left.rows(),
            columns: right.columns(),
            padded_rows,
            padded_columns,
        })
    }

    // ANCHOR: multiply
    /// `left · right` with f16 operands and f32 sums on the matrix units, read back.
    pub fn multiply(
        &self,
        left: &Tensor2d,
        right: &Tensor2d,
    ) -> Result<Tensor2d, CooperativeMatrixError> {
        let prepared = self.prepare(left, right)?;
        Ok(prepared.run(&self.context)?)
    }
    // ANCHOR_END: multiply
}

impl PreparedProduct {
    /// Records the dispatch, submits it, reads the output back and crops the padding.
    pub fn run(&self, context: &GpuContext) -> Result<Tensor2d, GpuError> {
        let mut encoder = context.create_encoder("matmul_cooperative");
        self.dispatch.record(&mut encoder);
        context.submit(encoder);
        let values: Vec<f32> = read_back(
            context,
            &self.output,
            self.padded_rows * self.padded_columns,
        )?;
        let padded = Tensor2d::from_vec(self.padded_rows, self.padded_columns, values)?;
        Ok(crop(&padded, self.rows, self.columns))
    }
}

// ANCHOR: sampled_check
/// What [`check_sampled`] found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampledCheck {
    pub checked: usize,
    /// The largest |GPU − exact| / allowed error over the checked elements (≤ 1 passes).
    pub worst_ratio: f64,
    /// The largest |GPU − exact| / Σ|x·w| over the checked elements: the error relative to
    /// the size of the terms, comparable between formats.
    pub worst_relative_error: f64,
    /// How many elements were outside the bound or not finite.
    pub failures: usize,
}

/// Checks `samples` random elements of `result` (all of them when there are fewer) against
/// the exact product of `left` and `right` summed in f64. The bound: rounding the operands
/// to f16 changes a product by at most (2u + u²)·|x·w| (u = 2⁻¹¹); rounding a product in
/// unit roundoff `product_unit_roundoff` (0 where products are exact) and summing n terms in
/// unit roundoff `sum_unit_roundoff` adds (p + γₙ·(1 + p))·Σ|x̂·ŵ| with γₙ = n·s / (1 − n·s).
/// Large products cannot be checked whole on a CPU in a benchmark's time; a sample can.
pub fn check_sampled(
    left: &Tensor2d,
    right: &Tensor2d,
    result: &Tensor2d,
    sum_unit_roundoff: f64,
    product_unit_roundoff: f64,
    samples: usize,
    seed: u64,
) -> SampledCheck {
    let (rows, inner, columns) = (left.rows(), left.columns(), right.columns());
    let total = rows * columns;
    let mut random = ChaCha8Rng::seed_from_u64(seed);
    let positions: Vec<usize> = if total <= samples {
        (0..total).collect()
    } else {
        (0..samples)
            .map(|_| random.random_range(0..total))
            .collect()
    };
    let rounding = 2.0 * HALF_UNIT_ROUNDOFF + HALF_UNIT_ROUNDOFF * HALF_UNIT_ROUNDOFF;
    let terms = inner as f64 * sum_unit_roundoff;
    let gamma = if terms < 1.0 {
        terms / (1.0 - terms)
    } else {
        f64::INFINITY
    };
    let summing = product_unit_roundoff + gamma * (1.0 + product_unit_roundoff);
    let factor = rounding + summing * (1.0 + rounding);
    let mut check = SampledCheck {
        checked: positions.len(),
        worst_ratio: 0.0,
        worst_relative_error: 0.0,
        failures: 0,
    };
    for position in positions {
        let (row, column) = (position / columns, position % columns);
        let (mut exact, mut magnitude) = (0.0f64, 0.0f64);
        for k in 0..inner {
            let product = f64::from(left.get(row, k)) * f64::from(right.get(k, column));
            exact += product;
            magnitude += product.abs();
        }
        let allowed = factor * magnitude + f64::from(f32::MIN_POSITIVE);
        let actual = f64::from(result.get(row, column));
        let error = if actual.is_finite() {
            (actual - exact).abs()
        } else {
            f64::INFINITY
        };
        // A result that is not finite fails even where the bound is infinite.
        if !actual.is_finite() || error > allowed {
            check.failures += 1;
        }
        check.worst_ratio = check.worst_ratio.max(error / allowed);
        check.worst_relative_error = check
            .worst_relative_error
            .max(error / magnitude.max(f64::MIN_POSITIVE));
    }
    check
}
// ANCHOR_END: sampled_check

/// The unit roundoff to check matrix-unit sums with: twice f32's, because NVIDIA's tensor
/// cores were measured to truncate their sums rather than round them to nearest (Fasi,
/// Higham, Mikaitis and Pranesh, "Numerical behavior of NVIDIA tensor cores", 2021), which can
/// lose up to a whole unit in the last place per addition instead of half of one.
pub const MATRIX_UNIT_SUM_ROUNDOFF: f64 = 2.0 * SINGLE_UNIT_ROUNDOFF;

#[cfg(test)]
mod tests {
    use super::*;

    fn adapter(minimum: u32, maximum: u32) -> wgpu::AdapterInfo {
        wgpu::AdapterInfo {
            name: "Test GPU".to_string(),
            subgroup_min_size: minimum,
            subgroup_max_size: maximum,
            ..wgpu::AdapterInfo::new(wgpu::DeviceType::DiscreteGpu, wgpu::Backend::Vulkan)
        }
    }

    const ALL: wgpu::Features =
        wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX.union(wgpu::Features::SHADER_F16);

    #[test]
    fn the_requirements_name_what_is_missing() {
        let good = adapter(32, 32);
        let eight = wgpu::CooperativeMatrixProperties {
            m_size: 8,
            n_size: 8,
            k_size: 8,
            ab_type: wgpu::CooperativeScalarType::F32,
            cr_type: wgpu::CooperativeScalarType::F32,
            saturating_accumulation: false,
        };
        assert_eq!(
            check_requirements(&good, ALL, &[eight, REQUIRED_CONFIGURATION]).unwrap(),
            32
        );
        assert!(matches!(
            check_requirements(&good, wgpu::Features::SHADER_F16, &[REQUIRED_CONFIGURATION]),
            Err(CooperativeMatrixError::MissingFeature { .. })
        ));
        assert!(matches!(
            check_requirements(
                &good,
                wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX,
                &[REQUIRED_CONFIGURATION]
            ),
            Err(CooperativeMatrixError::MissingHalf { .. })
        ));
        let error = check_requirements(&good, ALL, &[eight]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the adapter Test GPU (Vulkan, DiscreteGpu) offers cooperative matrices, but not \
             16×16×16 tiles with f16 operands and f32 sums; it offers 8×8×8 f32→f32"
        );
        assert!(matches!(
            check_requirements(&adapter(32, 64), ALL, &[REQUIRED_CONFIGURATION]),
            Err(CooperativeMatrixError::VaryingSubgroupSize {
                minimum: 32,
                maximum: 64,
                ..
            })
        ));
    }

    #[test]
    fn the_kernel_parses_and_validates() {
        let source = include_str!("../../../shaders/inference/matmul_cooperative.wgsl");
        let module = naga::front::wgsl::parse_str(source)
            .unwrap_or_else(|error| panic!("{}", error.emit_to_string(source)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)
        .unwrap_or_else(|error| panic!("{}", error.emit_to_string(source)));
    }

    #[test]
    fn padding_and_cropping_keep_the_values() {
        let values = Tensor2d::random(3, 5, -1.0..=1.0, 5);
        let padded = pad(&values, 32, 16);
        assert_eq!(padded.get(2, 4), values.get(2, 4));
        assert_eq!(padded.get(3, 0), 0.0);
        assert_eq!(padded.get(0, 5), 0.0);
        assert_eq!(crop(&padded, 3, 5), values);
    }

    #[test]
    fn the_sampled_check_catches_a_wrong_element() {
        let left = Tensor2d::random(20, 40, -1.0..=1.0, 1);
        let right = Tensor2d::random(40, 30, -1.0..=1.0, 2);
        let exact = crate::cpu::linear_naive(&left, &right, &Tensor2d::zeros(1, 30)).unwrap();
        let passed = check_sampled(&left, &right, &exact, SINGLE_UNIT_ROUNDOFF, 0.0, 10_000, 3);
        assert_eq!((passed.checked, passed.failures), (600, 0));
        let mut wrong = exact.clone();
        wrong.set(7, 11, wrong.get(7, 11) + 0.05);
        wrong.set(8, 12, f32::NAN);
        let failed = check_sampled(&left, &right, &wrong, SINGLE_UNIT_ROUNDOFF, 0.0, 10_000, 3);
        assert_eq!(failed.failures, 2);
    }

    // ANCHOR: runs_or_says_why
    #[test]
    fn the_product_matches_the_cpu_where_the_adapter_has_matrix_units_and_says_why_not_elsewhere() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        match CooperativeMatmul::on_adapter_of(context) {
            Ok(matmul) => {
                for (case, &(rows, inner, columns)) in [
                    (1, 1, 1),
                    (16, 16, 16),
                    (32, 32, 32),
                    (33, 70, 45),
                    (100, 256, 64),
                ]
                .iter()
                .enumerate()
                {
                    let seed = 700 + 2 * case as u64;
                    let left = Tensor2d::random(rows, inner, -2.0..=2.0, seed);
                    let right = Tensor2d::random(inner, columns, -1.0..=1.0, seed + 1);
                    let result = matmul.multiply(&left, &right).unwrap();
                    let check = check_sampled(
                        &left,
                        &right,
                        &result,
                        MATRIX_UNIT_SUM_ROUNDOFF,
                        0.0,
                        usize::MAX,
                        0,
                    );
                    assert_eq!(check.failures, 0, "{rows}×{inner}×{columns}: {check:?}");
                }
            }
            Err(error) => {
                // The adapter lacks something: the error names the adapter, and where the
                // adapter does not report the feature at all, says so.
                let info = context.adapter_info();
                assert!(error.to_string().contains(&info.name), "{error}");
                let adapter = adapter_of(context).unwrap();
                if !adapter
                    .features()
                    .contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX)
                {
                    assert!(
                        matches!(error, CooperativeMatrixError::MissingFeature { .. }),
                        "{error}"
                    );
                }
            }
        }
    }
    // ANCHOR_END: runs_or_says_why
}
