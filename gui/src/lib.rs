//! Module 2's GUI: an egui application that shares one wgpu device between drawing and the
//! galaxy crate's compute, runs the standard workload live, and plots how long frames and
//! runs take.
//!
//! Read the files in this order, one idea each:
//!
//! - [`time_series`]: the fixed-length history the plots draw.
//! - [`compute`]: the worker thread that runs the workload, and the messages it exchanges.
//! - [`app_state`]: the state, and the one function ([`app_state::AppState::apply`]) that
//!   changes it; testable without a window.
//! - [`key_bindings`]: winit's key events turned into controls.
//! - [`plot`] and [`ui`]: the egui layout, redrawn every frame from the state.
//! - [`shared_device`]: one wgpu device for the window and the compute.
//! - [`renderer`]: egui's triangles drawn into the window with egui-wgpu.
//! - [`command_line`]: the options `galaxy-gui` starts with.
//! - `main.rs`: the winit event loop that ties them together.

pub mod app_state;
pub mod command_line;
pub mod compute;
pub mod key_bindings;
pub mod plot;
pub mod renderer;
pub mod shared_device;
pub mod time_series;
pub mod ui;
