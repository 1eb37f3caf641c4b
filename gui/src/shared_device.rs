//! One GPU device for drawing and for compute.
//!
//! A window is drawn through a *surface*, and not every adapter can present to every
//! surface (a headless compute card cannot show a window). So the window comes first: the
//! surface is created for it, an adapter that can present to that surface is chosen, and
//! the device is created on that adapter. The galaxy crate then wraps the same adapter,
//! device and queue with [`GpuContext::from_device`], and its runners submit their compute
//! work to the queue the window draws with.
//!
//! One device instead of two means one copy of every buffer and one queue that orders the
//! work: compute and drawing take turns on the GPU instead of fighting over it through the
//! driver.

use std::sync::Arc;

use galaxy::gpu::{GpuContext, OPTIONAL_FEATURES};
use thiserror::Error;
use winit::window::Window;

/// Why the window could not get a GPU.
#[derive(Debug, Error)]
pub enum SetupError {
    #[error("the window cannot be drawn with wgpu: {0}")]
    Surface(#[from] wgpu::CreateSurfaceError),
    #[error(
        "no GPU adapter can draw to this window ({0}); on Linux without a GPU, \
         install the software driver lavapipe (Debian package `mesa-vulkan-drivers`)"
    )]
    NoAdapter(#[from] wgpu::RequestAdapterError),
    #[error("the adapter {adapter} refused to create a device: {reason}")]
    Device { adapter: String, reason: String },
}

// ANCHOR: create_shared_device
/// The window's surface and the one device that draws to it and computes.
pub struct SharedDevice {
    pub context: Arc<GpuContext>,
    pub surface: wgpu::Surface<'static>,
    /// The adapter again, for the surface's capabilities (formats, present modes).
    pub adapter: wgpu::Adapter,
}

/// Creates the surface for `window`, a device that can present to it, and the galaxy
/// context around that device.
pub fn create_shared_device(window: Arc<Window>) -> Result<SharedDevice, SetupError> {
    // Vulkan, Metal and DirectX 12 find the display through the window; only OpenGL would
    // need the display handle here, and the galaxy crate does not compute on OpenGL.
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::PRIMARY,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    // The surface holds an `Arc` of the window, so it lives as long as the surface needs.
    let surface = instance.create_surface(window)?;
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        force_fallback_adapter: false,
        compatible_surface: Some(&surface),
        ..Default::default()
    }))?;
    // What `GpuContext::new` asks for: the adapter's own limits, and the optional
    // features (subgroups, timestamps, f16) it has.
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("galaxy-gui device"),
        required_features: adapter.features() & OPTIONAL_FEATURES,
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .map_err(|error| SetupError::Device {
        adapter: adapter.get_info().name,
        reason: error.to_string(),
    })?;
    let context = GpuContext::from_device(adapter.clone(), device, queue);
    Ok(SharedDevice {
        context: Arc::new(context),
        surface,
        adapter,
    })
}
// ANCHOR_END: create_shared_device
