//! The window's layout: controls on the left, the two plots in the middle.
//!
//! In egui this is a function called once per frame. It reads the state, draws every
//! widget, and reports what the user did this frame, here as a list of [`Control`]s that
//! the caller applies. The function never changes the state itself, so the keyboard,
//! the mouse and the tests all change it through [`AppState::apply`].

use egui::{Color32, ComboBox, Slider, Ui};

use crate::app_state::{
    AppState, Control, DEEPEST, LARGEST_SIZE, MODES, SHALLOWEST, SMALLEST_SIZE, Status,
};
use crate::key_bindings::HELP;
use crate::plot::{format_milliseconds, line_chart};

/// Frame times in the theme's accent blue, run times in orange: two series, two colours.
const FRAME_COLOUR: Color32 = Color32::from_rgb(90, 160, 255);
const RUN_COLOUR: Color32 = Color32::from_rgb(255, 150, 40);

// ANCHOR: draw
/// Lays out one frame and returns what the user asked for in it.
pub fn draw(ui: &mut Ui, state: &AppState) -> Vec<Control> {
    let mut controls = Vec::new();
    egui::Panel::left("controls")
        .resizable(false)
        .exact_size(230.0)
        .show(ui, |ui| controls_panel(ui, state, &mut controls));
    egui::CentralPanel::default().show(ui, |ui| {
        let height = (ui.available_height() / 2.0 - 30.0).max(60.0);
        line_chart(
            ui,
            "Frame interval",
            &state.frame_times,
            height,
            FRAME_COLOUR,
        );
        ui.add_space(8.0);
        line_chart(ui, "Run time", &state.run_times, height, RUN_COLOUR);
    });
    controls
}
// ANCHOR_END: draw

// ANCHOR: controls_panel
fn controls_panel(ui: &mut Ui, state: &AppState, controls: &mut Vec<Control>) {
    ui.heading("Workload");
    // Widgets edit a copy; a change becomes a control.
    let mut size_exponent = state.size.trailing_zeros();
    let smallest = SMALLEST_SIZE.trailing_zeros();
    let largest = LARGEST_SIZE.trailing_zeros();
    let size_slider = Slider::new(&mut size_exponent, smallest..=largest)
        .text("Size")
        .custom_formatter(|exponent, _| format!("{}", 1usize << exponent as u32))
        .custom_parser(|text| {
            let size: usize = text.trim().parse().ok()?;
            Some(f64::from(size.max(1).ilog2()))
        });
    if ui.add(size_slider).changed() {
        controls.push(Control::SetSize(1 << size_exponent));
    }

    let mut depth = state.depth;
    let depth_slider = Slider::new(&mut depth, SHALLOWEST..=DEEPEST)
        .text("Depth")
        .logarithmic(true);
    if ui.add(depth_slider).changed() {
        controls.push(Control::SetDepth(depth));
    }

    let mut mode = state.mode;
    ComboBox::from_label("Mode")
        .selected_text(format!("{mode:?}"))
        .show_ui(ui, |ui| {
            for choice in MODES {
                ui.selectable_value(&mut mode, choice, format!("{choice:?}"));
            }
        });
    if mode != state.mode {
        controls.push(Control::SetMode(mode));
    }

    ui.separator();
    let label = if state.running { "Stop" } else { "Start" };
    if ui.button(label).clicked() {
        controls.push(Control::ToggleRunning);
    }
    if ui.button("Clear plots").clicked() {
        controls.push(Control::ClearHistory);
    }
    ui.separator();
    ui.label(status_text(&state.status));
    ui.small(format!("GPU: {}", state.adapter));
    ui.small(HELP);
}
// ANCHOR_END: controls_panel

/// One line saying what the worker is doing.
pub fn status_text(status: &Status) -> String {
    match status {
        Status::Stopped => "Stopped".to_string(),
        Status::Preparing => "Preparing…".to_string(),
        Status::Running {
            preparation_milliseconds,
        } => format!(
            "Running (prepared in {} ms)",
            format_milliseconds(*preparation_milliseconds)
        ),
        Status::Failed(message) => format!("Failed: {message}"),
    }
}
