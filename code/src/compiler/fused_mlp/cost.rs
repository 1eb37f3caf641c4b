//! The cost model that decides between the fully fused kernel and one kernel per layer.
//!
//! Both ways do the same arithmetic; they differ in what they move and how often the GPU
//! starts over:
//!
//! - **Per layer**, every layer is a dispatch of its own. Each dispatch costs a fixed time
//!   (the GPU drains the previous kernel, wgpu puts a barrier in between, the next one
//!   ramps up), and each layer's kernel reaches only a part of the device's peak.
//! - **Fused**, there is one dispatch, but every workgroup streams *all* the weights,
//!   because it owns its rows through every layer; and inside a workgroup every row group
//!   (invocations that share columns but own different rows) loads them again. A
//!   multiprocessor's load units deliver only so many bytes per second, and one warp that
//!   waits for its loads far fewer: the weights a multiprocessor must load, divided by the
//!   rate its warps can load them at, is the fused kernel's time.
//!
//! The model estimates both times from the shape with the figures of [`LARGE_GPU`], and
//! the plan prints the estimates next to the decision, so a reader can check them.

use crate::gpu::fused_mlp::{FusedChainShape, FusedMlpConfig};

// ANCHOR: cost_model
/// The figures the cost model assumes for the device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusionCostModel {
    /// The device the figures describe, for the printed plan.
    pub name: &'static str,
    /// Multiprocessors (streaming multiprocessors, compute units) that run workgroups.
    pub multiprocessors: u32,
    /// Invocations that run in lockstep (a warp on NVIDIA).
    pub warp_size: u32,
    /// fp32 multiply-add peak of the whole device, FLOP/s.
    pub peak_flops: f64,
    /// Share of the peak the fused kernel's arithmetic reaches.
    pub fused_efficiency: f64,
    /// Bytes per second one multiprocessor's load units deliver, at most.
    pub load_rate_per_multiprocessor: f64,
    /// Bytes per second one warp loads while it waits for its loads.
    pub load_rate_per_warp: f64,
    /// Fixed seconds per dispatch of the per-layer kernels.
    pub seconds_per_dispatch: f64,
    /// Share of the peak a per-layer linear kernel reaches on an output large enough to
    /// fill the device.
    pub per_layer_efficiency: f64,
    /// Output elements a per-layer linear kernel needs to fill the device: below, its
    /// share of the peak falls with the square root of the output's size (with the
    /// side of a square output).
    pub per_layer_filling_elements: f64,
    /// Seconds the fused kernel spends per layer whatever its size: the barrier and the
    /// latency of the layer's first weight loads.
    pub seconds_per_fused_layer: f64,
}

/// An NVIDIA H100 (PCIe/SXM, 80 GB) through Vulkan. 132 multiprocessors, warps of 32 and
/// 63.4 TFLOP/s of fp32 multiply-adds (`bench_report`'s peak kernel); about 8 µs per
/// dispatch of the compiled graph (0.47 to 0.56 ms for the 65 dispatches of the standard
/// workload at size 4, depth 64); its linear kernels reached 0.31 of the peak on 1024 × 1024
/// outputs, 0.19 on 512 × 512 and 0.08 on 256 × 256 (the compiled graph's times at depth 64,
/// less the dispatches). The two load rates and the time per fused layer are fitted to the fused kernel's
/// times over sizes 4 to 1024 at depth 64 (`examples/show_fused_plan.rs --measure`,
/// 2026-11-24): about 65 GB/s per multiprocessor, 16 GB/s per warp, 0.5 µs per layer.
pub const LARGE_GPU: FusionCostModel = FusionCostModel {
    name: "an NVIDIA H100",
    multiprocessors: 132,
    warp_size: 32,
    peak_flops: 63.4e12,
    fused_efficiency: 1.0,
    load_rate_per_multiprocessor: 65e9,
    load_rate_per_warp: 16e9,
    seconds_per_dispatch: 8e-6,
    per_layer_efficiency: 0.31,
    per_layer_filling_elements: 1024.0 * 1024.0,
    seconds_per_fused_layer: 0.5e-6,
};

/// lavapipe, which runs workgroups on the CPU's cores, eight invocations to a 256-bit
/// vector. Fitted to its times on a 2-core AMD EPYC (`show_fused_plan --measure`,
/// 2026-11-24): about 40 µs per dispatch (2 to 4 ms for the standard workload at size 4),
/// per-layer arithmetic at 1.2 to 1.7 GFLOP/s and the fused kernel's at 0.5 to 0.7: its
/// barriers are expensive on a CPU, and the weights are in the CPU's caches either way.
pub const SOFTWARE_RASTERISER: FusionCostModel = FusionCostModel {
    name: "lavapipe on a 2-core CPU",
    multiprocessors: 2,
    warp_size: 8,
    peak_flops: 4e9,
    fused_efficiency: 0.125,
    load_rate_per_multiprocessor: 1e12,
    load_rate_per_warp: 1e12,
    seconds_per_dispatch: 40e-6,
    per_layer_efficiency: 0.3,
    per_layer_filling_elements: 1.0,
    seconds_per_fused_layer: 0.5e-6,
};
// ANCHOR_END: cost_model

/// The fused kernel's estimated time and what bounds it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusedEstimate {
    pub seconds: f64,
    /// The arithmetic alone, on the multiprocessors the workgroups occupy.
    pub compute_seconds: f64,
    /// Loading the weights: the bytes one multiprocessor loads over the rate its warps
    /// load them at.
    pub load_seconds: f64,
    /// Bytes of weights all workgroups together load (every row group counted).
    pub loaded_bytes: f64,
}

impl FusionCostModel {
    // ANCHOR: fused_estimate
    /// The fused kernel's time for `shape` laid out as `config`.
    pub fn fused(&self, shape: &FusedChainShape, config: &FusedMlpConfig) -> FusedEstimate {
        let workgroups = config.workgroups(shape).max(1) as f64;
        let multiprocessors = f64::from(self.multiprocessors.max(1));
        // Workgroups per busy multiprocessor (several share one when there are more
        // workgroups than multiprocessors).
        let busy = workgroups.min(multiprocessors);
        let per_multiprocessor = workgroups / busy;
        let compute_seconds =
            shape.flops() / (self.peak_flops * self.fused_efficiency * busy / multiprocessors);
        // Every row group of every workgroup loads every weight.
        let weights = shape.parameter_bytes() as f64;
        let loaded_bytes = workgroups * f64::from(config.row_groups()) * weights;
        let warps =
            per_multiprocessor * f64::from(config.invocations().div_ceil(self.warp_size.max(1)));
        let rate = self
            .load_rate_per_multiprocessor
            .min(warps * self.load_rate_per_warp);
        let load_seconds = loaded_bytes / busy / rate;
        let fixed =
            self.seconds_per_dispatch + shape.layers.len() as f64 * self.seconds_per_fused_layer;
        FusedEstimate {
            seconds: compute_seconds.max(load_seconds) + fixed,
            compute_seconds,
            load_seconds,
            loaded_bytes,
        }
    }
    // ANCHOR_END: fused_estimate

    // ANCHOR: per_layer_estimate
    /// One kernel per layer (and one for the softmax): a fixed cost per dispatch, and each
    /// layer's arithmetic at the share of the peak a kernel of its output's size reaches.
    pub fn per_layer(&self, shape: &FusedChainShape) -> f64 {
        let dispatches = shape.layers.len() + usize::from(shape.softmax);
        let arithmetic: f64 = shape
            .layers
            .iter()
            .map(|layer| {
                let outputs = shape.rows as f64 * layer.columns as f64;
                let filled = (outputs / self.per_layer_filling_elements).min(1.0).sqrt();
                let flops = 2.0 * outputs * layer.inner as f64;
                flops / (self.peak_flops * self.per_layer_efficiency * filled)
            })
            .sum();
        dispatches as f64 * self.seconds_per_dispatch + arithmetic
    }
    // ANCHOR_END: per_layer_estimate
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::fused_mlp::FusedLayerShape;

    fn square(size: usize, depth: usize) -> FusedChainShape {
        FusedChainShape {
            rows: size,
            input_columns: size,
            input_relu: false,
            layers: vec![
                FusedLayerShape {
                    inner: size,
                    columns: size,
                    relu: true,
                };
                depth
            ],
            softmax: true,
        }
    }

    #[test]
    fn fewer_workgroups_read_the_weights_fewer_times() {
        let shape = square(256, 64);
        // Two rows per invocation and no split inner dimension: one row group of 2 rows,
        // four row groups of 8.
        let small = LARGE_GPU.fused(&shape, &FusedMlpConfig::new(2, 2, 64, 8, 1));
        let large = LARGE_GPU.fused(&shape, &FusedMlpConfig::new(8, 2, 64, 8, 1));
        assert_eq!(small.loaded_bytes, large.loaded_bytes);
        // ...but the larger blocks use fewer multiprocessors for the arithmetic.
        assert!(small.compute_seconds < large.compute_seconds);
    }

    #[test]
    fn on_a_cpu_only_tiny_networks_fuse() {
        let fused = |size: usize| {
            let shape = square(size, 64);
            let model = SOFTWARE_RASTERISER;
            model
                .fused(&shape, &FusedMlpConfig::for_rows(&shape, 2))
                .seconds
                < model.per_layer(&shape)
        };
        assert!(fused(4) && fused(16));
        assert!(!fused(64) && !fused(256));
    }

    #[test]
    fn small_networks_fuse_and_huge_ones_do_not() {
        let fused = |size: usize, rows: u32| {
            let shape = square(size, 64);
            LARGE_GPU
                .fused(&shape, &FusedMlpConfig::for_rows(&shape, rows))
                .seconds
                < LARGE_GPU.per_layer(&shape)
        };
        assert!(fused(4, 4));
        assert!(fused(256, 4));
        // 256 workgroups of 4 rows would each load 256 MiB of weights.
        assert!(!fused(1024, 4));
    }
}
