//! A point-cloud renderer: a CPU reference, then a compute-shader splatting renderer made
//! faster one measured step at a time (the page "Optimising a point cloud renderer").
//!
//! Read the files in this order: `cloud` (the points, on a 16-bit grid, and the generated
//! shapes), `camera` (projecting one point, the packed depth-and-colour key), `cpu_reference`
//! (the renderer every kernel must match bit for bit), `gpu` (the kernels of
//! shaders/use_cases/point_cloud.wgsl and the frame they are recorded into).

pub mod camera;
pub mod cloud;
pub mod cpu_reference;
pub mod gpu;

pub use camera::{Camera, EMPTY_PIXEL, height_palette, pack_key, shade};
pub use cloud::{PointCloud, Shape, generate};
pub use cpu_reference::{Rendering, render_cpu};
pub use gpu::{
    FrameTimes, PointCloudRenderer, PreparedFrame, SplatStep, frame_queries, point_buffer_bytes,
};

use crate::gpu::GpuError;

// ANCHOR: errors
/// What can go wrong building a cloud, a camera or a frame. NaN or infinite coordinates
/// are refused when the cloud is built, not skipped while drawing: a renderer that quietly
/// drops points hides the bug that produced them.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PointCloudError {
    #[error("point {index} has a coordinate that is not a finite number: {position:?}")]
    NotFinite { index: usize, position: [f32; 3] },
    #[error(
        "point {index} at {position:?} lies outside the cube from -1 to 1 that the grid covers"
    )]
    OutsideTheCube { index: usize, position: [f32; 3] },
    #[error("{points} points need one colour each, but {colours} colours were given")]
    ColourCount { points: usize, colours: usize },
    #[error("an image of {width} × {height} pixels has no pixels to draw into")]
    EmptyImage { width: u32, height: u32 },
    #[error("an image of {width} × {height} pixels has more than 2^24 pixels")]
    ImageTooLarge { width: u32, height: u32 },
    #[error("the camera cannot be used: {reason}")]
    BadCamera { reason: String },
    #[error(
        "{points} points need {bytes} bytes, more than the device's max_storage_buffer_binding_size of {limit} bytes"
    )]
    TooManyPoints {
        points: usize,
        bytes: u64,
        limit: u64,
    },
    #[error(transparent)]
    Gpu(#[from] GpuError),
}
// ANCHOR_END: errors
