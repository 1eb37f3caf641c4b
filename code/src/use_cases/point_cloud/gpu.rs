//! The GPU renderer: three compute passes per frame (clear, splat, resolve) and the
//! kernels of each optimisation step, all in shaders/use_cases/point_cloud.wgsl.
//!
//! A [`PreparedFrame`] holds everything one step needs on the GPU (the points in the
//! layout and order of that step, the key buffer, the image, the bind groups), so that a
//! frame is only recording and submitting: what a real renderer does every frame.

use std::sync::mpsc;
use std::time::Instant;

use wgpu::util::DeviceExt;

use super::camera::Camera;
use super::cpu_reference::Rendering;
use super::{PointCloud, PointCloudError};
use crate::gpu::dispatch::{WorkgroupGrid, workgroups_for};
use crate::gpu::{GpuContext, GpuError, TimestampQueries, TimestampSupport, compile_wgsl};

const WORKGROUP_SIZE: u32 = 256;
/// Points one invocation draws from step 4 on.
pub const POINTS_PER_INVOCATION: u32 = 8;
/// What a pixel of the image holds before a render: a frame that forgets a pixel shows it.
const POISON: u32 = 0xdead_beef;

// ANCHOR: steps
/// The optimisation steps, in the order the chapter takes them; each keeps the ones before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SplatStep {
    /// One invocation per point, points in the order they came, one atomic per point.
    OnePointPerInvocation,
    /// The same kernel, the points sorted along a Morton curve once, when loaded.
    MortonOrder,
    /// Read the pixel's key first; no atomic when a nearer point is already there.
    EarlyDepthReject,
    /// Each invocation draws [`POINTS_PER_INVOCATION`] points.
    SeveralPointsPerInvocation,
    /// 8 bytes per point instead of 16: three 16-bit grid coordinates and the colour.
    PackedPositions,
}
// ANCHOR_END: steps

impl SplatStep {
    pub const ALL: [SplatStep; 5] = [
        SplatStep::OnePointPerInvocation,
        SplatStep::MortonOrder,
        SplatStep::EarlyDepthReject,
        SplatStep::SeveralPointsPerInvocation,
        SplatStep::PackedPositions,
    ];

    /// The step's name in tables and figures.
    pub fn name(self) -> &'static str {
        match self {
            SplatStep::OnePointPerInvocation => "1 one point per invocation",
            SplatStep::MortonOrder => "2 Morton order",
            SplatStep::EarlyDepthReject => "3 early depth reject",
            SplatStep::SeveralPointsPerInvocation => "4 eight points per invocation",
            SplatStep::PackedPositions => "5 packed 8-byte points",
        }
    }

    fn entry_point(self) -> &'static str {
        match self {
            SplatStep::OnePointPerInvocation | SplatStep::MortonOrder => "splat",
            SplatStep::EarlyDepthReject => "splat_early_reject",
            SplatStep::SeveralPointsPerInvocation => "splat_batched",
            SplatStep::PackedPositions => "splat_packed",
        }
    }

    pub fn sorts_points(self) -> bool {
        self != SplatStep::OnePointPerInvocation
    }

    fn points_per_invocation(self) -> u32 {
        match self {
            SplatStep::SeveralPointsPerInvocation | SplatStep::PackedPositions => {
                POINTS_PER_INVOCATION
            }
            _ => 1,
        }
    }

    fn packed(self) -> bool {
        self == SplatStep::PackedPositions
    }
}

/// The `Frame` uniform of point_cloud.wgsl.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct FrameUniform {
    eye: [f32; 4],
    right: [f32; 4],
    up: [f32; 4],
    forward: [f32; 4],
    focal_pixels: f32,
    near: f32,
    far: f32,
    depth_scale: f32,
    width: u32,
    height: u32,
    point_count: u32,
    points_per_invocation: u32,
    invocation_count: u32,
    background: u32,
    /// A uniform's size is a multiple of 16 bytes.
    padding: [u32; 2],
}

/// Every kernel of point_cloud.wgsl, compiled once.
pub struct PointCloudRenderer {
    clear: wgpu::ComputePipeline,
    resolve: wgpu::ComputePipeline,
    splats: Vec<(SplatStep, wgpu::ComputePipeline)>,
}

/// The GPU time of each pass of one frame, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameTimes {
    pub clear: f64,
    pub splat: f64,
    pub resolve: f64,
    /// From the start of the clear to the end of the resolve.
    pub frame: f64,
}

impl PointCloudRenderer {
    pub fn new(context: &GpuContext) -> Result<PointCloudRenderer, GpuError> {
        let source = include_str!("../../../../shaders/use_cases/point_cloud.wgsl");
        let compile = |entry: &str| compile_wgsl(context, entry, source, entry, &[]);
        let mut splats = Vec::new();
        for step in SplatStep::ALL {
            splats.push((step, compile(step.entry_point())?));
        }
        Ok(PointCloudRenderer {
            clear: compile("clear")?,
            resolve: compile("resolve")?,
            splats,
        })
    }

    /// Uploads `cloud` in the order and layout `step` reads, and binds every buffer.
    pub fn prepare(
        &self,
        context: &GpuContext,
        cloud: &PointCloud,
        camera: &Camera,
        palette: &[u32; 256],
        background: u32,
        step: SplatStep,
    ) -> Result<PreparedFrame, PointCloudError> {
        let limit = context.limits().max_storage_buffer_binding_size;
        let bytes = point_buffer_bytes(cloud.len(), step, limit)?;
        let sorted;
        let cloud = if step.sorts_points() {
            sorted = cloud.in_morton_order();
            &sorted
        } else {
            cloud
        };
        let device = context.device();
        let max_per_dimension = context.limits().max_compute_workgroups_per_dimension;
        let pixels = camera.pixel_count();
        let pixel_grid = WorkgroupGrid::covering(
            workgroups_for(pixels, WORKGROUP_SIZE),
            max_per_dimension,
            "point cloud pixels",
        )?;
        let invocations = cloud.len().div_ceil(step.points_per_invocation() as usize);
        let point_grid = WorkgroupGrid::covering(
            workgroups_for(invocations, WORKGROUP_SIZE),
            max_per_dimension,
            "point cloud splat",
        )?;
        let storage = |label: &str, contents: &[u8], usage: wgpu::BufferUsages| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                // A zero-sized binding is not allowed: an empty cloud gets 16 unused bytes.
                contents: if contents.is_empty() {
                    &[0; 16]
                } else {
                    contents
                },
                usage: wgpu::BufferUsages::STORAGE | usage,
            })
        };
        let points = if step.packed() {
            storage(
                "packed points",
                bytemuck::cast_slice(&cloud.packed_points()),
                wgpu::BufferUsages::empty(),
            )
        } else {
            storage(
                "points",
                bytemuck::cast_slice(&cloud.float_points()),
                wgpu::BufferUsages::empty(),
            )
        };
        let copy_both_ways = wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let poison = vec![POISON; pixels];
        let keys = storage("keys", bytemuck::cast_slice(&poison), copy_both_ways);
        let image = storage("image", bytemuck::cast_slice(&poison), copy_both_ways);
        let palette_buffer = storage(
            "palette",
            bytemuck::cast_slice(palette),
            wgpu::BufferUsages::empty(),
        );
        let frame = FrameUniform {
            eye: extend(camera.eye),
            right: extend(camera.right),
            up: extend(camera.up),
            forward: extend(camera.forward),
            focal_pixels: camera.focal_pixels,
            near: camera.near,
            far: camera.far,
            depth_scale: camera.depth_scale,
            width: camera.width,
            height: camera.height,
            point_count: cloud.len() as u32,
            points_per_invocation: step.points_per_invocation(),
            invocation_count: point_grid.x * point_grid.y * WORKGROUP_SIZE,
            background,
            padding: [0; 2],
        };
        let uniform = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("frame"),
            contents: bytemuck::bytes_of(&frame),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let splat = &self
            .splats
            .iter()
            .find(|(candidate, _)| *candidate == step)
            .expect("every step has a pipeline")
            .1;
        let points_binding = if step.packed() { 3 } else { 2 };
        let passes = [
            (
                &self.clear,
                bind(context, &self.clear, &[(0, &uniform), (1, &keys)]),
                pixel_grid,
            ),
            (
                splat,
                bind(
                    context,
                    splat,
                    &[(0, &uniform), (1, &keys), (points_binding, &points)],
                ),
                point_grid,
            ),
            (
                &self.resolve,
                bind(
                    context,
                    &self.resolve,
                    &[(0, &uniform), (1, &keys), (4, &palette_buffer), (5, &image)],
                ),
                pixel_grid,
            ),
        ];
        Ok(PreparedFrame {
            passes: passes.map(|(pipeline, group, grid)| (pipeline.clone(), group, grid)),
            keys,
            image,
            pixels,
            point_bytes: bytes,
        })
    }
}

/// One step's buffers and bound kernels, ready to record a frame.
pub struct PreparedFrame {
    /// Clear, splat, resolve.
    passes: [(wgpu::ComputePipeline, wgpu::BindGroup, WorkgroupGrid); 3],
    keys: wgpu::Buffer,
    image: wgpu::Buffer,
    pixels: usize,
    /// The size of the point buffer, in bytes.
    pub point_bytes: u64,
}

impl PreparedFrame {
    // ANCHOR: record_frame
    /// Records one frame: clear, splat, resolve, each a compute pass of its own (timestamped
    /// at its beginning and end from slot `first_timestamp` on, when `queries` is given).
    pub fn record(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        queries: Option<&TimestampQueries>,
        first_timestamp: u32,
    ) {
        for (pass_index, (pipeline, bind_group, grid)) in self.passes.iter().enumerate() {
            let slot = first_timestamp + 2 * pass_index as u32;
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("point cloud"),
                timestamp_writes: queries.map(|queries| wgpu::ComputePassTimestampWrites {
                    query_set: queries.query_set(),
                    beginning_of_pass_write_index: Some(slot),
                    end_of_pass_write_index: Some(slot + 1),
                }),
            });
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, bind_group, &[]);
            pass.dispatch_workgroups(grid.x, grid.y, grid.z);
        }
    }
    // ANCHOR_END: record_frame

    /// Poisons the keys and the image, renders one frame and reads both back.
    pub fn render(&self, context: &GpuContext) -> Result<Rendering, PointCloudError> {
        let poison = vec![POISON; self.pixels];
        context
            .queue()
            .write_buffer(&self.keys, 0, bytemuck::cast_slice(&poison));
        context
            .queue()
            .write_buffer(&self.image, 0, bytemuck::cast_slice(&poison));
        let mut encoder = context.create_encoder("point cloud frame");
        self.record(&mut encoder, None, 0);
        context.submit(encoder);
        Ok(Rendering {
            keys: read_u32s(context, &self.keys, self.pixels)?,
            image: read_u32s(context, &self.image, self.pixels)?,
        })
    }

    /// Renders `frames` frames in one submission and returns the time of each, by the GPU's
    /// clock where the device has timestamp queries (`queries`), else the host's clock
    /// spread evenly over the frames (then only `frame` is measured; the passes read 0).
    pub fn time_frames(
        &self,
        context: &GpuContext,
        queries: Option<&TimestampQueries>,
        frames: u32,
    ) -> Result<Vec<FrameTimes>, PointCloudError> {
        let frames = match queries {
            Some(queries) => frames.clamp(1, queries.capacity() / 6),
            None => frames.max(1),
        };
        let mut encoder = context.create_encoder("point cloud frames");
        for frame in 0..frames {
            self.record(&mut encoder, queries, 6 * frame);
        }
        let start = Instant::now();
        context.submit(encoder);
        context
            .device()
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|error| GpuError::Readback {
                reason: format!("waiting for the point cloud frames: {error}"),
            })?;
        let host_ms = start.elapsed().as_secs_f64() * 1e3 / f64::from(frames);
        let Some(queries) = queries else {
            let times = FrameTimes {
                clear: 0.0,
                splat: 0.0,
                resolve: 0.0,
                frame: host_ms,
            };
            return Ok(vec![times; frames as usize]);
        };
        let stamps = queries.read_nanoseconds(context, 6 * frames)?;
        Ok(stamps
            .chunks_exact(6)
            .map(|stamp| {
                let ms = |from: usize, to: usize| ((stamp[to] - stamp[from]) * 1e-6).max(0.0);
                FrameTimes {
                    clear: ms(0, 1),
                    splat: ms(2, 3),
                    resolve: ms(4, 5),
                    frame: ms(0, 5),
                }
            })
            .collect())
    }
}

/// The bytes of the point buffer `step` reads for `points` points, if one storage buffer
/// binding of at most `limit` bytes may hold them (and the shader's `u32` count them).
pub fn point_buffer_bytes(
    points: usize,
    step: SplatStep,
    limit: u64,
) -> Result<u64, PointCloudError> {
    let bytes = points as u64 * if step.packed() { 8 } else { 16 };
    if bytes > limit || points >= u32::MAX as usize {
        return Err(PointCloudError::TooManyPoints {
            points,
            bytes,
            limit,
        });
    }
    Ok(bytes)
}

/// Timestamp queries for `frames` frames, or `None` where the device has none.
pub fn frame_queries(
    context: &GpuContext,
    frames: u32,
) -> Result<Option<TimestampQueries>, GpuError> {
    if TimestampSupport::of(context) == TimestampSupport::None {
        return Ok(None);
    }
    TimestampQueries::new(context, 6 * frames).map(Some)
}

fn extend([x, y, z]: [f32; 3]) -> [f32; 4] {
    [x, y, z, 0.0]
}

/// A bind group for `pipeline` with each buffer at its binding number.
fn bind(
    context: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    buffers: &[(u32, &wgpu::Buffer)],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> = buffers
        .iter()
        .map(|&(binding, buffer)| wgpu::BindGroupEntry {
            binding,
            resource: buffer.as_entire_binding(),
        })
        .collect();
    context
        .device()
        .create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("point cloud"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        })
}

/// Copies the first `count` words of `buffer` to the host.
fn read_u32s(
    context: &GpuContext,
    buffer: &wgpu::Buffer,
    count: usize,
) -> Result<Vec<u32>, GpuError> {
    let bytes = count as u64 * 4;
    let staging = context.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("point cloud staging"),
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = context.create_encoder("point cloud readback");
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, bytes);
    context.submit(encoder);
    let failed = |error: &dyn std::fmt::Display| GpuError::Readback {
        reason: error.to_string(),
    };
    let slice = staging.slice(..);
    let (sender, receiver) = mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |result| {
        let _ = sender.send(result);
    });
    context
        .device()
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|error| failed(&error))?;
    receiver
        .recv()
        .map_err(|error| failed(&error))?
        .map_err(|error| failed(&error))?;
    let words = {
        let mapped = slice.get_mapped_range().map_err(|error| failed(&error))?;
        bytemuck::cast_slice(&mapped).to_vec()
    };
    staging.unmap();
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_point_buffer_must_fit_one_binding() {
        let limit = 128 << 20;
        let fits = point_buffer_bytes(8 << 20, SplatStep::OnePointPerInvocation, limit);
        assert_eq!(fits, Ok(128 << 20));
        let too_many = point_buffer_bytes((8 << 20) + 1, SplatStep::MortonOrder, limit);
        assert!(matches!(
            too_many,
            Err(PointCloudError::TooManyPoints { bytes, .. }) if bytes == (128 << 20) + 16
        ));
        // Packed points take half the bytes: twice as many fit.
        assert!(point_buffer_bytes(16 << 20, SplatStep::PackedPositions, limit).is_ok());
        let message = too_many.unwrap_err().to_string();
        assert!(
            message.contains("max_storage_buffer_binding_size"),
            "{message}"
        );
    }
}
