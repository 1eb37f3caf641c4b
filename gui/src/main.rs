//! `galaxy-gui`: the window and its event loop.
//!
//! winit owns the loop. It calls the methods of [`ApplicationHandler`] as things happen:
//! `resumed` when the application may create windows, `window_event` for every key, click,
//! resize and redraw request, `user_event` for our own events (here: the worker has
//! results), and `about_to_wait` once the events of one round are handled, just before
//! the loop would sleep. The handler decides in `about_to_wait` whether to sleep until the
//! next event or to draw again at once.

use std::sync::Arc;
use std::time::Instant;

use galaxy::gpu::GpuContext;
use galaxy_gui::app_state::{AppState, Control};
use galaxy_gui::command_line::{Options, apply_options};
use galaxy_gui::compute::ComputeWorker;
use galaxy_gui::key_bindings::control_for_key;
use galaxy_gui::renderer::{Frame, Renderer, SkippedFrame};
use galaxy_gui::shared_device::create_shared_device;
use galaxy_gui::ui;
use winit::application::ApplicationHandler;
use winit::dpi::LogicalSize;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop, EventLoopProxy};
use winit::window::{Window, WindowId};

/// Our own event: the worker thread has reports waiting.
#[derive(Debug, Clone, Copy)]
enum UserEvent {
    WorkerReported,
}

/// What exists once there is a window.
struct OpenWindow {
    window: Arc<Window>,
    context: Arc<GpuContext>,
    renderer: Renderer,
    egui_context: egui::Context,
    egui_input: egui_winit::State,
    worker: ComputeWorker,
    /// When the previous frame was drawn, while running (frame intervals are only
    /// meaningful between frames drawn back to back).
    previous_frame: Option<Instant>,
    /// When egui wants the next frame even if nothing happens (an animation, a tooltip).
    repaint_at: Option<Instant>,
}

struct App {
    proxy: EventLoopProxy<UserEvent>,
    options: Options,
    state: AppState,
    window: Option<OpenWindow>,
    /// Why the application stopped, if it failed.
    error: Option<String>,
}

// ANCHOR: application_handler
impl ApplicationHandler<UserEvent> for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.window.is_some() {
            return; // Resumed again after a suspend: the window is still there.
        }
        match self.open_window(event_loop) {
            Ok(window) => self.window = Some(window),
            Err(message) => {
                self.error = Some(message);
                event_loop.exit();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let Some(window) = &mut self.window else {
            return;
        };
        // egui sees every event first: mouse moves and clicks become hovers and clicks on
        // its widgets. It says whether it used the event (`consumed`: a key typed into a
        // focused text field must not also start the run) and whether to redraw.
        let response = window.egui_input.on_window_event(&window.window, &event);
        if response.repaint {
            window.window.request_redraw();
        }
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(size) => {
                window
                    .renderer
                    .resize(&window.context, size.width, size.height);
            }
            // Synthetic presses are keys already held when the window gained the focus
            // (X11, Windows): nobody pressed them here, so they start nothing.
            WindowEvent::KeyboardInput {
                event,
                is_synthetic: false,
                ..
            } if !response.consumed => {
                if let Some(control) = control_for_key(&event) {
                    self.apply(control);
                }
            }
            WindowEvent::RedrawRequested => self.redraw(event_loop),
            _ => {}
        }
        if self.state.quit_requested {
            event_loop.exit();
        }
    }

    fn user_event(&mut self, _event_loop: &ActiveEventLoop, event: UserEvent) {
        match event {
            UserEvent::WorkerReported => self.take_reports(),
        }
    }

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        let Some(window) = &self.window else {
            return;
        };
        // While a workload runs, draw frame after frame (vsync paces them); otherwise
        // sleep until an event comes or egui's next repaint is due.
        let now = Instant::now();
        if self.state.running || window.repaint_at.is_some_and(|at| at <= now) {
            window.window.request_redraw();
            event_loop.set_control_flow(ControlFlow::Wait);
        } else if let Some(at) = window.repaint_at {
            event_loop.set_control_flow(ControlFlow::WaitUntil(at));
        } else {
            event_loop.set_control_flow(ControlFlow::Wait);
        }
    }
}
// ANCHOR_END: application_handler

impl App {
    fn open_window(&mut self, event_loop: &ActiveEventLoop) -> Result<OpenWindow, String> {
        let attributes = Window::default_attributes()
            .with_title("galaxy-gui: the standard workload, live")
            .with_inner_size(LogicalSize::new(960.0, 600.0));
        let window = Arc::new(
            event_loop
                .create_window(attributes)
                .map_err(|error| format!("the window could not be created: {error}"))?,
        );
        let shared =
            create_shared_device(Arc::clone(&window)).map_err(|error| error.to_string())?;
        let size = window.inner_size();
        let renderer = Renderer::new(
            &shared.context,
            shared.surface,
            &shared.adapter,
            size.width,
            size.height,
        )
        .map_err(|error| format!("the window's surface cannot be drawn to: {error}"))?;

        let egui_context = egui::Context::default();
        let egui_input = egui_winit::State::new(
            egui_context.clone(),
            egui::ViewportId::ROOT,
            &window,
            Some(window.scale_factor() as f32),
            None,
            Some(shared.context.limits().max_texture_dimension_2d as usize),
        );
        // The worker wakes the loop through a proxy; a send fails only once the loop has
        // ended, when nobody needs waking.
        let proxy = self.proxy.clone();
        let worker = ComputeWorker::spawn(Some(Arc::clone(&shared.context)), move || {
            let _ = proxy.send_event(UserEvent::WorkerReported);
        });
        self.state.adapter = shared.context.describe();
        for command in apply_options(&self.options, &mut self.state) {
            worker.send(command);
        }
        Ok(OpenWindow {
            window,
            context: shared.context,
            renderer,
            egui_context,
            egui_input,
            worker,
            previous_frame: None,
            repaint_at: None,
        })
    }

    // ANCHOR: apply_control
    /// Every control, from a key or from a widget, goes through here to the state, and
    /// from the state to the worker.
    fn apply(&mut self, control: Control) {
        let command = self.state.apply(control);
        if let Some(window) = &self.window {
            if let Some(command) = command {
                window.worker.send(command);
            }
            window.window.request_redraw();
        }
    }
    // ANCHOR_END: apply_control

    fn take_reports(&mut self) {
        let Some(window) = &self.window else {
            return;
        };
        for report in window.worker.take_reports() {
            self.state.record_report(report);
        }
        window.window.request_redraw();
    }

    // ANCHOR: redraw
    fn redraw(&mut self, event_loop: &ActiveEventLoop) {
        self.take_reports();
        let Some(window) = &mut self.window else {
            return;
        };
        let now = Instant::now();
        if let (true, Some(previous)) = (self.state.running, window.previous_frame) {
            self.state
                .record_frame(now.duration_since(previous).as_secs_f64() * 1e3);
        }
        window.previous_frame = self.state.running.then_some(now);

        // Immediate mode: the whole UI is laid out again from the state, every frame.
        let input = window.egui_input.take_egui_input(&window.window);
        let mut controls = Vec::new();
        let output = window.egui_context.run_ui(input, |root| {
            controls = ui::draw(root, &self.state);
        });
        window
            .egui_input
            .handle_platform_output(&window.window, output.platform_output);
        window.repaint_at = output
            .viewport_output
            .get(&egui::ViewportId::ROOT)
            .and_then(|viewport| now.checked_add(viewport.repaint_delay));
        let frame = Frame {
            primitives: window
                .egui_context
                .tessellate(output.shapes, output.pixels_per_point),
            textures_delta: output.textures_delta,
            pixels_per_point: output.pixels_per_point,
        };
        match window.renderer.render(&window.context, frame) {
            Ok(()) | Err(SkippedFrame::NotVisible) => {}
            Err(SkippedFrame::Reconfigured) => window.window.request_redraw(),
            Err(SkippedFrame::Lost) => {
                self.error = Some("the window's surface was lost".into());
                event_loop.exit();
            }
        }
        for control in controls {
            self.apply(control);
        }
    }
    // ANCHOR_END: redraw
}

fn main() {
    let options = match Options::parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(error) => {
            eprintln!("galaxy-gui: {error}");
            std::process::exit(2);
        }
    };
    let event_loop = match EventLoop::<UserEvent>::with_user_event().build() {
        Ok(event_loop) => event_loop,
        Err(error) => {
            eprintln!("galaxy-gui: no display to open a window on ({error})");
            std::process::exit(1);
        }
    };
    let mut app = App {
        proxy: event_loop.create_proxy(),
        options,
        state: AppState::new("(not yet known)"),
        window: None,
        error: None,
    };
    if let Err(error) = event_loop.run_app(&mut app) {
        eprintln!("galaxy-gui: the event loop failed: {error}");
        std::process::exit(1);
    }
    if let Some(error) = app.error {
        eprintln!("galaxy-gui: {error}");
        std::process::exit(1);
    }
    // Dropping the worker ends its thread after the run in progress.
    drop(app.window.take());
}
