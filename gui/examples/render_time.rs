//! How long drawing `galaxy-gui`'s window takes on this machine's most capable wgpu adapter,
//! without a window: egui_kittest's wgpu renderer draws each frame with egui-wgpu (with the
//! window's renderer options) into a texture and copies it back to the CPU. Prints the
//! adapter, then the median, minimum and maximum over 20 frames.
//!
//! `cargo run --release -p galaxy-gui --example render_time`
//!
//! This is an upper bound on what drawing costs the live window: the copy back to the CPU is
//! work the window does not do. On a machine without a GPU it measures lavapipe, which draws
//! on the CPU. `GALAXY_ADAPTER` picks another adapter, as for the rest of the crate.

use std::time::Instant;

use egui_kittest::Harness;
use egui_kittest::wgpu::{WgpuTestRenderer, create_render_state};
use galaxy::bench::hardware::cpu_model;
use galaxy::gpu::{GpuContext, describe_adapter};
use galaxy_gui::app_state::{AppState, Control, HISTORY_LENGTH};
use galaxy_gui::ui;

const FRAMES: usize = 20;

fn main() {
    let mut state = AppState::new("none (drawing only)");
    state.apply(Control::ToggleRunning);
    for index in 0..HISTORY_LENGTH {
        state.record_frame(16.0 + (index % 7) as f64);
        state.run_times.push(2.0 + (index % 11) as f64 * 0.3);
    }
    // kittest's own setup prefers a software adapter, for images that are the same on every
    // machine; this measurement wants the adapter the crate would compute on.
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::PRIMARY,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let adapter = match pick_adapter(&instance) {
        Ok(adapter) => adapter,
        Err(message) => {
            eprintln!("render_time: {message}");
            std::process::exit(1);
        }
    };
    let adapter_name = describe_adapter(&adapter.get_info());
    let (device, queue) = match pollster::block_on(adapter.request_device(&Default::default())) {
        Ok(pair) => pair,
        Err(error) => {
            eprintln!("render_time: {adapter_name} refused to create a device: {error}");
            std::process::exit(1);
        }
    };
    let setup = egui_wgpu::WgpuSetup::Existing(egui_wgpu::WgpuSetupExisting {
        instance,
        adapter,
        device,
        queue,
    });
    let renderer = WgpuTestRenderer::from_render_state(create_render_state(
        setup,
        egui_wgpu::RendererOptions::default(),
    ));
    let mut harness = Harness::builder()
        .with_size(egui::Vec2::new(960.0, 600.0))
        .renderer(renderer)
        .build_ui_state(
            |frame_ui, state: &mut AppState| {
                // The controls are discarded: nothing is clicked.
                let _controls = ui::draw(frame_ui, state);
            },
            state,
        );
    // The first frame uploads the font atlas and compiles the pipeline.
    if let Err(error) = harness.render() {
        eprintln!("render_time: drawing with wgpu failed: {error}");
        std::process::exit(1);
    }
    let mut milliseconds = Vec::with_capacity(FRAMES);
    for frame in 0..FRAMES {
        // A new value in each plot, as in a running window, so every frame is new.
        harness.state_mut().record_frame(16.0 + frame as f64 * 0.1);
        harness.step();
        let started = Instant::now();
        if let Err(error) = harness.render() {
            eprintln!("render_time: drawing with wgpu failed: {error}");
            std::process::exit(1);
        }
        milliseconds.push(started.elapsed().as_secs_f64() * 1e3);
    }
    milliseconds.sort_by(f64::total_cmp);
    println!(
        "# galaxy-gui's window (960 x 600 points) drawn by egui-wgpu into a texture and read back"
    );
    println!("# adapter: {adapter_name}");
    println!("# cpu: {}", cpu_model());
    println!("# {FRAMES} frames after one warm-up frame");
    println!("median_ms,min_ms,max_ms");
    println!(
        "{:.2},{:.2},{:.2}",
        milliseconds[FRAMES / 2],
        milliseconds[0],
        milliseconds[FRAMES - 1]
    );
}

/// The adapter `GpuContext::new` would choose (`GALAXY_ADAPTER`, or the most capable), found
/// again on this instance by its name and backend.
fn pick_adapter(instance: &wgpu::Instance) -> Result<wgpu::Adapter, String> {
    let wanted = GpuContext::new()
        .map_err(|error| error.to_string())?
        .adapter_info();
    pollster::block_on(instance.enumerate_adapters(wgpu::Backends::PRIMARY))
        .into_iter()
        .find(|adapter| {
            let info = adapter.get_info();
            info.name == wanted.name && info.backend == wanted.backend
        })
        .ok_or_else(|| format!("the adapter {} was not found again", wanted.name))
}
