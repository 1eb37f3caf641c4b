//! The egui layout driven like a user would: clicks and slider values through egui_kittest,
//! which runs the UI without a window and finds widgets by their accessibility labels.
//! The last test also renders the UI with wgpu (lavapipe on a machine without a GPU).

use egui::Vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use galaxy::runner::ExecutionMode;
use galaxy_gui::app_state::AppState;
use galaxy_gui::compute::{Job, WorkerCommand};
use galaxy_gui::ui;

/// The state, and every command the UI's controls sent to the (absent) worker.
struct Harnessed {
    state: AppState,
    commands: Vec<WorkerCommand>,
}

fn draw(ui: &mut egui::Ui, harnessed: &mut Harnessed) {
    for control in ui::draw(ui, &harnessed.state) {
        if let Some(command) = harnessed.state.apply(control) {
            harnessed.commands.push(command);
        }
    }
}

fn harness(state: AppState) -> Harness<'static, Harnessed> {
    Harness::builder()
        .with_size(Vec2::new(960.0, 600.0))
        .build_ui_state(
            draw,
            Harnessed {
                state,
                commands: Vec::new(),
            },
        )
}

#[test]
fn clicking_start_starts_the_run_and_the_button_becomes_stop() {
    let mut harness = harness(AppState::new("test adapter"));
    harness.get_by_label("Start").click();
    harness.run();
    let job = harness.state().state.job();
    assert!(harness.state().state.running);
    assert_eq!(harness.state().commands, [WorkerCommand::Run(job)]);
    harness.get_by_label("Stop").click();
    harness.run();
    assert!(!harness.state().state.running);
    assert_eq!(harness.state().commands[1], WorkerCommand::Pause);
}

#[test]
fn the_depth_slider_changes_the_job_a_running_worker_gets() {
    let mut harness = harness(AppState::new("test adapter"));
    harness.get_by_label("Start").click();
    harness.run();
    harness
        .get_by_role_and_label(egui::accesskit::Role::Slider, "Depth")
        .set_value_accesskit(32.0);
    harness.run();
    let state = &harness.state().state;
    assert_eq!(state.depth, 32);
    assert_eq!(
        harness.state().commands.last(),
        Some(&WorkerCommand::Run(Job {
            size: 64,
            depth: 32,
            mode: ExecutionMode::CpuGraph
        }))
    );
}

#[test]
fn choosing_a_mode_in_the_combo_box_sets_the_mode() {
    let mut harness = harness(AppState::new("test adapter"));
    harness.get_by_label("Mode").click();
    harness.run();
    harness.get_by_label("GraphCompiled").click();
    harness.run();
    assert_eq!(harness.state().state.mode, ExecutionMode::GraphCompiled);
    assert!(
        harness.state().commands.is_empty(),
        "stopped: nothing to send"
    );
}

/// A state with plotted times, the same in every run of the test.
fn state_with_history() -> AppState {
    let mut state = AppState::new("llvmpipe (Vulkan, Cpu)");
    state.running = true;
    state.status = galaxy_gui::app_state::Status::Running {
        preparation_milliseconds: 12.5,
    };
    for index in 0..200 {
        state.record_frame(16.0 + (index % 7) as f64);
        state.run_times.push(2.0 + (index % 11) as f64 * 0.3);
    }
    state
}

#[test]
fn the_run_time_line_is_drawn_in_its_colour_only_when_there_are_runs() {
    let orange_pixels = |state: AppState| {
        let mut harness = Harness::builder()
            .with_size(Vec2::new(960.0, 600.0))
            .wgpu()
            .build_ui_state(
                draw,
                Harnessed {
                    state,
                    commands: Vec::new(),
                },
            );
        let image = harness
            .render()
            .unwrap_or_else(|error| panic!("rendering with wgpu failed: {error}"));
        image
            .pixels()
            .filter(|pixel| pixel[0] > 200 && (110..190).contains(&pixel[1]) && pixel[2] < 90)
            .count()
    };
    let with_runs = orange_pixels(state_with_history());
    let mut without_runs = state_with_history();
    without_runs.run_times.clear();
    let without = orange_pixels(without_runs);
    assert!(
        with_runs > 300,
        "{with_runs} orange pixels with runs plotted"
    );
    assert_eq!(without, 0, "no orange without runs");
}

#[test]
fn the_window_matches_its_snapshot() {
    let mut harness = Harness::builder()
        .with_size(Vec2::new(960.0, 600.0))
        .wgpu()
        .build_ui_state(
            draw,
            Harnessed {
                state: state_with_history(),
                commands: Vec::new(),
            },
        );
    harness.run();
    // Compares with tests/snapshots/galaxy_gui_window.png; `UPDATE_SNAPSHOTS=1` rewrites it.
    harness.snapshot("galaxy_gui_window");
}
