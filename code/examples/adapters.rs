//! Lists every GPU adapter wgpu can find, with the limits that matter for compute.
//!
//! Run it with `cargo run --release --example adapters`. With no adapter at all it says
//! what to install and exits with an error.

use std::process::ExitCode;

use galaxy::gpu::{GpuError, describe_adapter};

// ANCHOR: list_adapters
fn main() -> ExitCode {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    // Asking every backend (Vulkan, Metal, DirectX 12, OpenGL) for its adapters is
    // asynchronous in wgpu; a command-line program simply blocks on it.
    let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
    if adapters.is_empty() {
        eprintln!("error: {}", GpuError::NoAdapter);
        return ExitCode::FAILURE;
    }
    for adapter in &adapters {
        let info = adapter.get_info();
        let limits = adapter.limits();
        println!("{}", describe_adapter(&info));
        println!(
            "  driver:                          {} {}",
            info.driver, info.driver_info
        );
        println!(
            "  subgroup size:                   {}..={}",
            info.subgroup_min_size, info.subgroup_max_size
        );
        println!(
            "  workgroup storage (bytes):       {}",
            limits.max_compute_workgroup_storage_size
        );
        println!(
            "  invocations per workgroup:       {}",
            limits.max_compute_invocations_per_workgroup
        );
        println!(
            "  workgroups per dimension:        {}",
            limits.max_compute_workgroups_per_dimension
        );
        println!(
            "  storage buffer binding (bytes):  {}",
            limits.max_storage_buffer_binding_size
        );
        println!(
            "  buffer size (bytes):             {}",
            limits.max_buffer_size
        );
    }
    ExitCode::SUCCESS
}
// ANCHOR_END: list_adapters
