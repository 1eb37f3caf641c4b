//! The cost model that decides between the fully fused kernel and one kernel per layer.
//!
//! Both ways do the same arithmetic; they differ in what they move and how often the GPU
//! starts over:
//!
//! - **Per layer**, every layer is a dispatch of its own. Each dispatch costs a fixed time
//!   (the GPU drains the previous kernel, wgpu puts a barrier in between, the next one
//!   ramps up), and each layer's kernel reaches only a part of the device's peak.
//! - **Fused**, there is one dispatch, but every workgroup streams *all* the weights,
//!   because it owns its rows through every layer. `g` workgroups read the weights `g`
//!   times from the cache, and each multiprocessor must pull its workgroups' copies
//!   through its own port to the cache. Fewer, larger blocks of rows read less, but keep
//!   fewer multiprocessors busy.
//!
//! The model estimates both times from the shape, with the figures of a large GPU below,
//! and the plan prints the estimates next to the decision, so a reader can check them.

use crate::gpu::fused_mlp::{FusedChainShape, FusedMlpConfig};

// ANCHOR: cost_model
/// The figures the cost model assumes for the device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusionCostModel {
    /// Multiprocessors (streaming multiprocessors, compute units) that run workgroups.
    pub multiprocessors: u32,
    /// fp32 multiply-add peak of the whole device, FLOP/s.
    pub peak_flops: f64,
    /// Bytes per second the shared cache (L2) delivers to all multiprocessors together.
    pub cache_bandwidth: f64,
    /// Bytes per second one multiprocessor can pull from the shared cache.
    pub cache_bandwidth_per_multiprocessor: f64,
    /// Fixed seconds per dispatch of the per-layer kernels.
    pub seconds_per_dispatch: f64,
    /// Share of the peak a per-layer linear kernel reaches.
    pub per_layer_efficiency: f64,
    /// Seconds the fused kernel spends per layer whatever its size: the barrier and the
    /// latency of the layer's first weight loads.
    pub seconds_per_fused_layer: f64,
}

/// An NVIDIA H100 (SXM, 80 GB). Measured on it: 132 multiprocessors, 63.4 TFLOP/s of fp32
/// multiply-adds (`bench_report`'s peak kernel), about 8 µs per dispatch of the compiled
/// graph (0.56 ms for the 66 dispatches of the standard workload at size 4, depth 64) and
/// 24.6 TFLOP/s for its best linear kernel at 1024³ (0.39 of the peak; less at smaller
/// sizes, hence 0.3). Assumed from the architecture: about 5.5 TB/s from L2 to all
/// multiprocessors together, 64 bytes per clock (about 110 GB/s) into one, and about 1 µs
/// per fused layer.
pub const LARGE_GPU: FusionCostModel = FusionCostModel {
    multiprocessors: 132,
    peak_flops: 63.4e12,
    cache_bandwidth: 5.5e12,
    cache_bandwidth_per_multiprocessor: 110e9,
    seconds_per_dispatch: 8e-6,
    per_layer_efficiency: 0.3,
    seconds_per_fused_layer: 1e-6,
};
// ANCHOR_END: cost_model

/// The fused kernel's estimated time and what bounds it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusedEstimate {
    pub seconds: f64,
    /// The arithmetic alone, on the multiprocessors the workgroups occupy.
    pub compute_seconds: f64,
    /// The weights through the cache: the slower of the whole cache and one
    /// multiprocessor's port.
    pub cache_seconds: f64,
    /// Bytes of weights all workgroups together read.
    pub cache_bytes: f64,
}

impl FusionCostModel {
    // ANCHOR: fused_estimate
    /// The fused kernel's time for `shape` laid out as `config`.
    pub fn fused(&self, shape: &FusedChainShape, config: &FusedMlpConfig) -> FusedEstimate {
        let workgroups = config.workgroups(shape).max(1) as f64;
        let multiprocessors = f64::from(self.multiprocessors.max(1));
        // Workgroups beyond one per multiprocessor queue up behind each other (waves).
        let waves = (workgroups / multiprocessors).ceil();
        let busy = workgroups.min(multiprocessors);
        let compute_seconds = shape.flops() / (self.peak_flops * busy / multiprocessors)
            * (waves * busy / workgroups);
        let weights = shape.parameter_bytes() as f64;
        let cache_bytes = workgroups * weights;
        let whole_cache = cache_bytes / self.cache_bandwidth;
        let one_port = waves * weights / self.cache_bandwidth_per_multiprocessor;
        let cache_seconds = whole_cache.max(one_port);
        let fixed =
            self.seconds_per_dispatch + shape.layers.len() as f64 * self.seconds_per_fused_layer;
        FusedEstimate {
            seconds: compute_seconds.max(cache_seconds) + fixed,
            compute_seconds,
            cache_seconds,
            cache_bytes,
        }
    }
    // ANCHOR_END: fused_estimate

    /// One kernel per layer (and one for the softmax): a fixed cost per dispatch, and the
    /// arithmetic at a share of the peak.
    pub fn per_layer(&self, shape: &FusedChainShape) -> f64 {
        let dispatches = shape.layers.len() + usize::from(shape.softmax);
        dispatches as f64 * self.seconds_per_dispatch
            + shape.flops() / (self.peak_flops * self.per_layer_efficiency)
    }
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
        let small = LARGE_GPU.fused(&shape, &FusedMlpConfig::for_rows(&shape, 2));
        let large = LARGE_GPU.fused(&shape, &FusedMlpConfig::for_rows(&shape, 8));
        assert!(small.cache_bytes == 4.0 * large.cache_bytes);
        // ...but they use fewer multiprocessors for the arithmetic.
        assert!(small.compute_seconds < large.compute_seconds);
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
        assert!(fused(256, 8));
        // 256 workgroups of 4 rows would each stream 256 MiB of weights.
        assert!(!fused(1024, 4));
    }
}
