//! `GpuContext`: one adapter, one device, one queue.
//!
//! Creating a device is slow (tens to hundreds of milliseconds) and a device is a shared
//! resource, so a program makes one context and passes references to it around. Tests
//! share one through [`GpuContext::shared`], which is also why they can run in parallel.

use std::sync::OnceLock;

use crate::gpu::linear_search::MeasuredChoices;
use crate::gpu::probe::{self, HostPhase, Mark};
use crate::gpu::{GpuError, ReductionStrategy};

/// The environment variable that picks an adapter by part of its name or by backend.
pub const ADAPTER_VARIABLE: &str = "GALAXY_ADAPTER";

/// Which adapter to use when several are present.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdapterSelection {
    /// The most capable adapter: a discrete GPU before an integrated one, before a
    /// virtual one, before a software rasteriser like lavapipe.
    MostCapable,
    /// The first adapter whose name contains this text (ignoring case).
    NameContains(String),
    /// The most capable adapter of this backend.
    Backend(wgpu::Backend),
}

impl AdapterSelection {
    /// Reads `GALAXY_ADAPTER`: a backend name (`vulkan`, `metal`, `dx12`, `gl`) selects a
    /// backend, anything else is matched against adapter names; unset means most capable.
    pub fn from_environment() -> AdapterSelection {
        match std::env::var(ADAPTER_VARIABLE) {
            Ok(value) if !value.trim().is_empty() => AdapterSelection::parse(value.trim()),
            _ => AdapterSelection::MostCapable,
        }
    }

    /// Whether an adapter described by `info` is one this selection asks for (before
    /// ranking: `MostCapable` accepts every adapter).
    pub fn accepts(&self, info: &wgpu::AdapterInfo) -> bool {
        match self {
            AdapterSelection::MostCapable => true,
            AdapterSelection::NameContains(text) => {
                info.name.to_lowercase().contains(&text.to_lowercase())
            }
            AdapterSelection::Backend(backend) => info.backend == *backend,
        }
    }

    pub fn parse(text: &str) -> AdapterSelection {
        match text.to_ascii_lowercase().as_str() {
            "vulkan" => AdapterSelection::Backend(wgpu::Backend::Vulkan),
            "metal" => AdapterSelection::Backend(wgpu::Backend::Metal),
            "dx12" => AdapterSelection::Backend(wgpu::Backend::Dx12),
            "gl" | "opengl" => AdapterSelection::Backend(wgpu::Backend::Gl),
            _ => AdapterSelection::NameContains(text.to_string()),
        }
    }
}

impl std::fmt::Display for AdapterSelection {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AdapterSelection::MostCapable => write!(formatter, "the most capable adapter"),
            AdapterSelection::NameContains(text) => {
                write!(formatter, "an adapter whose name contains \"{text}\"")
            }
            AdapterSelection::Backend(backend) => {
                write!(formatter, "an adapter of the {backend:?} backend")
            }
        }
    }
}

/// Where to look for adapters, which one to take, and what to ask of it.
#[derive(Debug, Clone)]
pub struct ContextOptions {
    pub backends: wgpu::Backends,
    pub selection: AdapterSelection,
    /// The limits to request; `None` requests everything the adapter offers.
    pub required_limits: Option<wgpu::Limits>,
    /// The features to request; `None` requests those of [`OPTIONAL_FEATURES`] the
    /// adapter has.
    pub required_features: Option<wgpu::Features>,
}

/// The features the crate can use. None is required: every kernel that uses one has a
/// fallback without it. Subgroup operations serve the kernels; timestamp queries let the
/// benchmarks time work by the GPU's own clock (`bench::copy_bandwidth`, and the time
/// breakdown down to single dispatches, `gpu::timestamps`), and without them they fall
/// back to the wall clock. Half-precision arithmetic in shaders
/// (`enable f16;`) serves the comparison of float formats in `numbers::half_precision_gpu`.
pub const OPTIONAL_FEATURES: wgpu::Features = wgpu::Features::SUBGROUP
    .union(wgpu::Features::TIMESTAMP_QUERY)
    .union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS)
    .union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES)
    .union(wgpu::Features::SHADER_F16);

impl ContextOptions {
    /// The primary backends (Vulkan, Metal, DirectX 12), plus OpenGL only when
    /// `GALAXY_ADAPTER=gl` asks for it: OpenGL's compute support is the weakest, and
    /// probing it prints warnings on machines without a display.
    pub fn from_environment() -> ContextOptions {
        let selection = AdapterSelection::from_environment();
        let backends = match selection {
            AdapterSelection::Backend(wgpu::Backend::Gl) => wgpu::Backends::GL,
            _ => wgpu::Backends::PRIMARY,
        };
        ContextOptions {
            backends,
            selection,
            required_limits: None,
            required_features: None,
        }
    }
}

// ANCHOR: context
/// One adapter, the device created on it, and the device's queue.
pub struct GpuContext {
    adapter: wgpu::Adapter,
    device: wgpu::Device,
    queue: wgpu::Queue,
    /// The adapter's kind, kept because every readback asks for it (see `gpu::waiting`)
    /// and `Adapter::get_info` copies all of the adapter's description each time.
    device_type: wgpu::DeviceType,
    /// The linear kernels chosen by measuring, by layer shape (see `gpu::linear_search`).
    measured_linear: MeasuredChoices,
}
// ANCHOR_END: context

impl GpuContext {
    /// A context on the adapter `GALAXY_ADAPTER` names, or the most capable one.
    pub fn new() -> Result<GpuContext, GpuError> {
        GpuContext::with_options(&ContextOptions::from_environment())
    }

    // ANCHOR: create_context
    pub fn with_options(options: &ContextOptions) -> Result<GpuContext, GpuError> {
        let adapters = enumerate_adapters(options);
        let adapter = choose_adapter(adapters, &options.selection)?;
        GpuContext::on_adapter(adapter, options)
    }

    /// A new device, and a context around it, on `adapter`. Calling it twice on one adapter
    /// gives two independent devices (each with its own queue and memory) on the same GPU.
    pub fn on_adapter(
        adapter: wgpu::Adapter,
        options: &ContextOptions,
    ) -> Result<GpuContext, GpuError> {
        // wgpu's default limits are the lowest common denominator of all GPUs (16 KiB of
        // workgroup memory, 256 invocations per workgroup). Ask for what this adapter
        // really offers instead.
        let limits = options
            .required_limits
            .clone()
            .unwrap_or_else(|| adapter.limits());
        // Subgroup operations (warp shuffles) where the adapter has them; kernels that use
        // them check `supports_subgroups` and fall back to workgroup memory otherwise.
        let features = options
            .required_features
            .unwrap_or_else(|| adapter.features() & OPTIONAL_FEATURES);

        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("galaxy device"),
            required_features: features,
            required_limits: limits,
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        }))
        .map_err(|error| GpuError::DeviceRequest {
            adapter: adapter.get_info().name,
            reason: error.to_string(),
        })?;
        Ok(GpuContext {
            device_type: adapter.get_info().device_type,
            adapter,
            device,
            queue,
            measured_linear: MeasuredChoices::default(),
        })
    }
    // ANCHOR_END: create_context

    // ANCHOR: from_device
    /// A context around a device someone else created: a windowed program (module 2's GUI)
    /// picks an adapter that can draw to its window and creates the device itself, then
    /// hands it here so that drawing and compute share one device and one queue.
    ///
    /// `device` and `queue` must come from `adapter`. The context uses the device as it was
    /// created: kernels that need a feature or a limit the caller did not request fall
    /// back as they do on an adapter without it (request [`OPTIONAL_FEATURES`] and
    /// `adapter.limits()` to get what [`GpuContext::new`] gets).
    pub fn from_device(
        adapter: wgpu::Adapter,
        device: wgpu::Device,
        queue: wgpu::Queue,
    ) -> GpuContext {
        GpuContext {
            device_type: adapter.get_info().device_type,
            adapter,
            device,
            queue,
            measured_linear: MeasuredChoices::default(),
        }
    }
    // ANCHOR_END: from_device

    /// The context every test and example in one process shares, created on first use.
    ///
    /// GPU tests run in parallel threads; giving each its own device would multiply the
    /// start-up cost and, on some drivers, the memory. Devices and queues are thread-safe,
    /// so one is enough.
    pub fn shared() -> Result<&'static GpuContext, GpuError> {
        static SHARED: OnceLock<Result<GpuContext, GpuError>> = OnceLock::new();
        SHARED
            .get_or_init(GpuContext::new)
            .as_ref()
            .map_err(Clone::clone)
    }

    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    pub fn adapter_info(&self) -> wgpu::AdapterInfo {
        self.adapter.get_info()
    }

    /// The adapter's kind (discrete GPU, software rasteriser, …), without copying the rest
    /// of [`GpuContext::adapter_info`].
    pub fn device_type(&self) -> wgpu::DeviceType {
        self.device_type
    }

    /// The limits the device was created with (the adapter's own).
    pub fn limits(&self) -> wgpu::Limits {
        self.device.limits()
    }

    // ANCHOR: submit
    /// A new command encoder for work this crate submits with [`GpuContext::submit`].
    pub fn create_encoder(&self, label: &str) -> wgpu::CommandEncoder {
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) });
        // While the time breakdown measures this thread, the GPU notes when it starts.
        probe::write_in_encoder(&mut encoder, Mark::SubmissionStart);
        encoder
    }

    /// Finishes `encoder` and submits it to the queue.
    pub fn submit(&self, mut encoder: wgpu::CommandEncoder) -> wgpu::SubmissionIndex {
        probe::write_in_encoder(&mut encoder, Mark::SubmissionEnd);
        let commands = encoder.finish();
        probe::count_submission();
        probe::in_phase(HostPhase::Submitting, || self.queue.submit([commands]))
    }
    // ANCHOR_END: submit

    /// The linear kernels this device has chosen by measuring, by layer shape.
    pub fn measured_linear_choices(&self) -> &MeasuredChoices {
        &self.measured_linear
    }

    pub fn supports_subgroups(&self) -> bool {
        self.device.features().contains(wgpu::Features::SUBGROUP)
    }

    /// How reductions (sums, maxima, the two inside a softmax) should combine values on
    /// this device: subgroup operations when it has them, workgroup memory otherwise.
    pub fn best_reduction_strategy(&self) -> ReductionStrategy {
        if self.supports_subgroups() {
            ReductionStrategy::Subgroups
        } else {
            ReductionStrategy::WorkgroupMemory
        }
    }

    /// One line naming the adapter, for benchmark output and figure captions.
    pub fn describe(&self) -> String {
        describe_adapter(&self.adapter_info())
    }
}

/// Every adapter of the backends `options` names.
fn enumerate_adapters(options: &ContextOptions) -> Vec<wgpu::Adapter> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: options.backends,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    pollster::block_on(instance.enumerate_adapters(options.backends))
}

// ANCHOR: several_contexts
/// One context on every GPU of the best kind present that `options.selection` accepts: on
/// a machine with two discrete GPUs, one on each (and none on a software rasteriser that is
/// also installed). The multi-device runners take these.
pub fn contexts_on_every_adapter(options: &ContextOptions) -> Result<Vec<GpuContext>, GpuError> {
    let adapters = enumerate_adapters(options);
    let best = choose_adapter(adapters.clone(), &options.selection)?.get_info();
    adapters
        .into_iter()
        .filter(|adapter| {
            let info = adapter.get_info();
            options.selection.accepts(&info)
                && info.device_type == best.device_type
                && info.backend == best.backend
        })
        .map(|adapter| GpuContext::on_adapter(adapter, options))
        .collect()
}

/// `count` contexts, each its own device, all on the one adapter `options` selects. On a
/// single GPU (or on lavapipe in CI) this exercises everything a multi-device runner does —
/// splitting the work, keeping its order, handing tensors over through the host — though
/// the devices share one GPU's processors and so cannot be faster than one.
pub fn contexts_on_one_adapter(
    options: &ContextOptions,
    count: usize,
) -> Result<Vec<GpuContext>, GpuError> {
    let adapter = choose_adapter(enumerate_adapters(options), &options.selection)?;
    (0..count)
        .map(|_| GpuContext::on_adapter(adapter.clone(), options))
        .collect()
}
// ANCHOR_END: several_contexts

/// `name (backend, device type)`.
pub fn describe_adapter(info: &wgpu::AdapterInfo) -> String {
    format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type)
}

// ANCHOR: choose_adapter
/// Ranks device types: real GPUs first, software rasterisers last.
fn capability_rank(device_type: wgpu::DeviceType) -> u8 {
    match device_type {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Cpu => 3,
        wgpu::DeviceType::Other => 4,
    }
}

/// Ranks backends for compute: the native modern APIs before OpenGL.
fn backend_rank(backend: wgpu::Backend) -> u8 {
    match backend {
        wgpu::Backend::Vulkan | wgpu::Backend::Metal | wgpu::Backend::Dx12 => 0,
        _ => 1,
    }
}

fn choose_adapter(
    adapters: Vec<wgpu::Adapter>,
    selection: &AdapterSelection,
) -> Result<wgpu::Adapter, GpuError> {
    if adapters.is_empty() {
        return Err(GpuError::NoAdapter);
    }
    let names: Vec<String> = adapters
        .iter()
        .map(|adapter| describe_adapter(&adapter.get_info()))
        .collect();
    let mut candidates: Vec<wgpu::Adapter> = adapters
        .into_iter()
        .filter(|adapter| selection.accepts(&adapter.get_info()))
        .collect();
    candidates.sort_by_key(|adapter| {
        let info = adapter.get_info();
        (
            capability_rank(info.device_type),
            backend_rank(info.backend),
        )
    });
    candidates
        .into_iter()
        .next()
        .ok_or_else(|| GpuError::NoMatchingAdapter {
            requested: selection.to_string(),
            available: names,
        })
}
// ANCHOR_END: choose_adapter

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_names_select_backends_and_anything_else_matches_names() {
        assert_eq!(
            AdapterSelection::parse("Vulkan"),
            AdapterSelection::Backend(wgpu::Backend::Vulkan)
        );
        assert_eq!(
            AdapterSelection::parse("llvmpipe"),
            AdapterSelection::NameContains("llvmpipe".into())
        );
    }

    #[test]
    fn real_gpus_rank_before_software_rasterisers() {
        assert!(
            capability_rank(wgpu::DeviceType::DiscreteGpu) < capability_rank(wgpu::DeviceType::Cpu)
        );
        assert!(backend_rank(wgpu::Backend::Vulkan) < backend_rank(wgpu::Backend::Gl));
    }

    #[test]
    fn no_adapters_is_a_typed_error_that_names_the_package() {
        let error = choose_adapter(Vec::new(), &AdapterSelection::MostCapable).unwrap_err();
        assert_eq!(error, GpuError::NoAdapter);
        assert!(error.to_string().contains("mesa-vulkan-drivers"));
    }

    #[test]
    fn a_selection_reads_as_words_in_messages() {
        let selection = AdapterSelection::parse("H200");
        assert_eq!(
            selection.to_string(),
            "an adapter whose name contains \"H200\""
        );
        assert_eq!(
            AdapterSelection::Backend(wgpu::Backend::Vulkan).to_string(),
            "an adapter of the Vulkan backend"
        );
    }
}
