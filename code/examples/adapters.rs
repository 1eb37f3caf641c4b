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
        // A backend may leave either part empty (OpenGL names no driver, only its version).
        let driver = [info.driver.as_str(), info.driver_info.as_str()]
            .into_iter()
            .filter(|part| !part.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        print_row("driver", driver);
        print_row(
            "subgroup size",
            format!("{}..={}", info.subgroup_min_size, info.subgroup_max_size),
        );
        print_row(
            "workgroup storage (bytes)",
            limits.max_compute_workgroup_storage_size,
        );
        print_row(
            "invocations per workgroup",
            limits.max_compute_invocations_per_workgroup,
        );
        print_row(
            "workgroups per dimension",
            limits.max_compute_workgroups_per_dimension,
        );
        print_row(
            "storage buffer binding (bytes)",
            limits.max_storage_buffer_binding_size,
        );
        print_row("buffer size (bytes)", limits.max_buffer_size);
    }
    ExitCode::SUCCESS
}

/// One line of an adapter's description: the name, then the value in a column of its own.
fn print_row(name: &str, value: impl std::fmt::Display) {
    println!("  {:<32} {value}", format!("{name}:"));
}
// ANCHOR_END: list_adapters
