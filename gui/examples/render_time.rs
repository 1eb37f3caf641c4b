//! How long drawing `galaxy-gui`'s window takes on this machine's wgpu adapter, without a
//! window: egui_kittest's wgpu renderer draws each frame into a texture and copies it back
//! to the CPU. Prints the median, minimum and maximum over 20 frames.
//!
//! `cargo run --release -p galaxy-gui --example render_time`
//!
//! This is an upper bound on what drawing costs the live window: the copy back to the CPU,
//! and kittest's predictable (software) texture filtering, are work the window does not do.
//! On a machine without a GPU it measures lavapipe, which draws on the CPU.

use std::time::Instant;

use egui_kittest::Harness;
use galaxy::bench::hardware::cpu_model;
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
    let mut harness = Harness::builder()
        .with_size(egui::Vec2::new(960.0, 600.0))
        .wgpu()
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
