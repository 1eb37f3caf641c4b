//! How much of a frame's budget egui's layout takes: lays out `galaxy-gui`'s window and
//! tessellates it into triangles, frame after frame, without a window or a GPU, and prints
//! the time per frame as CSV.
//!
//! `cargo run --release -p galaxy-gui --example layout_time`
//!
//! The state is a running workload with full plots (300 frame times and 300 run times) that
//! gain a value every frame, so every frame lays out both charts at their largest and with
//! new labels. Drawing the triangles on the GPU is not
//! included: it depends on the GPU, and egui's share of the frame is what is measured here.

use std::time::Instant;

use galaxy::bench::hardware::cpu_model;
use galaxy_gui::app_state::{AppState, Control, HISTORY_LENGTH};
use galaxy_gui::ui;

/// Frames laid out before timing starts (the first builds the font atlas).
const WARM_UP_FRAMES: usize = 50;
const TIMED_FRAMES: usize = 2000;

fn main() {
    let mut state = AppState::new("none (layout only)");
    state.apply(Control::ToggleRunning);
    for index in 0..HISTORY_LENGTH {
        state.record_frame(16.0 + (index % 7) as f64);
        state.run_times.push(2.0 + (index % 11) as f64 * 0.3);
    }
    let context = egui::Context::default();
    let screen = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(960.0, 600.0));

    let mut milliseconds = Vec::with_capacity(TIMED_FRAMES);
    let mut triangles = 0;
    for frame in 0..WARM_UP_FRAMES + TIMED_FRAMES {
        let input = egui::RawInput {
            screen_rect: Some(screen),
            time: Some(frame as f64 / 60.0),
            ..Default::default()
        };
        // As in a running window: one new value in each plot per frame, so the plots and
        // their labels change every frame and egui cannot reuse last frame's text.
        state.record_frame(16.0 + (frame % 13) as f64 * 0.1);
        state.run_times.push(2.0 + (frame % 17) as f64 * 0.01);
        let started = Instant::now();
        let mut output = context.run_ui(input, |root| {
            // The controls are discarded: nothing is clicked.
            let _controls = ui::draw(root, &state);
        });
        let primitives = context.tessellate(output.shapes, output.pixels_per_point);
        let elapsed = started.elapsed().as_secs_f64() * 1e3;
        // The font atlas would go to the GPU here; nothing draws, so it is dropped.
        output.textures_delta.clear();
        if frame >= WARM_UP_FRAMES {
            milliseconds.push(elapsed);
            triangles = primitives
                .iter()
                .map(|primitive| match &primitive.primitive {
                    egui::epaint::Primitive::Mesh(mesh) => mesh.indices.len() / 3,
                    egui::epaint::Primitive::Callback(_) => 0,
                })
                .sum();
        }
    }
    milliseconds.sort_by(f64::total_cmp);
    let median = milliseconds[milliseconds.len() / 2];
    println!("# egui layout and tessellation of galaxy-gui's window (960 x 600 points), per frame");
    println!("# cpu: {}", cpu_model());
    println!(
        "# {TIMED_FRAMES} frames after {WARM_UP_FRAMES} warm-up frames; {triangles} triangles per frame"
    );
    println!("median_ms,min_ms,max_ms");
    println!(
        "{median:.4},{:.4},{:.4}",
        milliseconds[0],
        milliseconds[milliseconds.len() - 1]
    );
}
