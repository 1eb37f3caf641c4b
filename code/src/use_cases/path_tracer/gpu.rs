//! The path tracer on the GPU: every step of the optimisation compiled from
//! `shaders/use_cases/path_tracer.wgsl`, run, read back and timed by the GPU's own clock.

use std::time::Instant;

use super::scene::Scene;
use super::{PathTracerError, RenderSettings, Termination, Traversal};
use crate::gpu::{GpuContext, GpuError, TimestampQueries, TimestampSupport, compile_wgsl};
use crate::parallel::gpu_arrays;

/// The shader of every variant.
pub const PATH_TRACER_SHADER: &str = include_str!("../../../../shaders/use_cases/path_tracer.wgsl");

// ANCHOR: steps
/// The steps of the optimisation, each one keeping the ones before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    /// One invocation per pixel in rows of 64, every bounce of every path up to the
    /// limit, every ray tested against every sphere.
    Naive,
    /// Plus Russian roulette: dim paths end early, survivors weighted up.
    RussianRoulette,
    /// Plus workgroups of 8 × 8 pixels instead of rows of 64.
    Tiles,
    /// Plus a bounding sphere per group of spheres, tested before its members.
    BoundingSpheres,
}

impl Step {
    pub const ALL: [Step; 4] = [
        Step::Naive,
        Step::RussianRoulette,
        Step::Tiles,
        Step::BoundingSpheres,
    ];

    /// The name of the series in the figure.
    pub fn label(self) -> &'static str {
        match self {
            Step::Naive => "naive (rows of 64)",
            Step::RussianRoulette => "+ Russian roulette",
            Step::Tiles => "+ 8×8 tiles",
            Step::BoundingSpheres => "+ bounding spheres",
        }
    }

    /// The settings the CPU reference needs to trace the same paths as this step.
    pub fn settings(self, base: RenderSettings) -> RenderSettings {
        RenderSettings {
            termination: self.termination(),
            traversal: self.traversal(),
            ..base
        }
    }

    pub fn termination(self) -> Termination {
        if self == Step::Naive {
            Termination::FixedBounces
        } else {
            Termination::RussianRoulette
        }
    }

    pub fn traversal(self) -> Traversal {
        if self == Step::BoundingSpheres {
            Traversal::BoundingSpheres
        } else {
            Traversal::EverySphere
        }
    }

    /// The pixels one workgroup covers, across and down.
    fn workgroup(self) -> (u32, u32) {
        match self {
            Step::Naive | Step::RussianRoulette => (64, 1),
            Step::Tiles | Step::BoundingSpheres => (8, 8),
        }
    }

    fn entry_point(self) -> &'static str {
        match self.workgroup() {
            (64, 1) => "trace_64x1",
            _ => "trace_8x8",
        }
    }

    /// The shader's override constants for this step (WGSL booleans as 0 or 1).
    fn constants(self) -> [(&'static str, f64); 2] {
        let flag = |on: bool| if on { 1.0 } else { 0.0 };
        [
            (
                "RUSSIAN_ROULETTE",
                flag(self.termination() == Termination::RussianRoulette),
            ),
            (
                "BOUNDING_SPHERES",
                flag(self.traversal() == Traversal::BoundingSpheres),
            ),
        ]
    }
}
// ANCHOR_END: steps

/// What can go wrong rendering on the GPU: the settings, or the GPU itself.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error(transparent)]
    Settings(#[from] PathTracerError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// The uniform block of path_tracer.wgsl: each `vec3<f32>` shares its 16 bytes with a
/// `u32`, as WGSL lays them out.
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Parameters {
    camera_origin: [f32; 3],
    width: u32,
    camera_lower_left: [f32; 3],
    height: u32,
    camera_horizontal: [f32; 3],
    samples_per_pixel: u32,
    camera_vertical: [f32; 3],
    max_bounces: u32,
    sky_horizon: [f32; 3],
    seed: u32,
    sky_zenith: [f32; 3],
    sphere_count: u32,
    plane_count: u32,
    group_count: u32,
    padding: [u32; 2],
}

/// One frame's timing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameTime {
    pub milliseconds: f64,
    /// Whether the GPU's clock measured it (`false`: the host's, submission to finish).
    pub gpu_clock: bool,
}

/// Every step's pipeline and the scene, uploaded once.
pub struct GpuPathTracer {
    steps: Vec<(Step, wgpu::ComputePipeline)>,
    primary: wgpu::ComputePipeline,
    scene: Scene,
    scene_buffers: [wgpu::Buffer; 4],
}

impl GpuPathTracer {
    pub fn new(context: &GpuContext, scene: &Scene) -> Result<GpuPathTracer, GpuError> {
        let mut steps = Vec::new();
        for step in Step::ALL {
            let pipeline = compile_wgsl(
                context,
                "path_tracer.wgsl",
                PATH_TRACER_SHADER,
                step.entry_point(),
                &step.constants(),
            )?;
            steps.push((step, pipeline));
        }
        let primary = compile_wgsl(
            context,
            "path_tracer.wgsl",
            PATH_TRACER_SHADER,
            "primary_hits",
            &Step::Naive.constants(),
        )?;
        let scene_buffers = [
            gpu_arrays::upload(context, "materials", &scene.materials),
            gpu_arrays::upload(context, "spheres", &scene.spheres),
            gpu_arrays::upload(context, "planes", &scene.planes),
            gpu_arrays::upload(context, "groups", &scene.groups),
        ];
        Ok(GpuPathTracer {
            steps,
            primary,
            scene: scene.clone(),
            scene_buffers,
        })
    }

    fn pipeline(&self, step: Step) -> &wgpu::ComputePipeline {
        // Every step was compiled in `new`.
        &self
            .steps
            .iter()
            .find(|(candidate, _)| *candidate == step)
            .expect("every step is compiled in new")
            .1
    }

    fn parameters(&self, settings: &RenderSettings) -> Parameters {
        let camera = Scene::camera(settings.width, settings.height);
        Parameters {
            camera_origin: camera.origin,
            width: settings.width,
            camera_lower_left: camera.lower_left,
            height: settings.height,
            camera_horizontal: camera.horizontal,
            samples_per_pixel: settings.samples_per_pixel,
            camera_vertical: camera.vertical,
            max_bounces: settings.max_bounces,
            sky_horizon: self.scene.sky_horizon,
            seed: settings.seed,
            sky_zenith: self.scene.sky_zenith,
            sphere_count: self.scene.spheres.len() as u32,
            plane_count: self.scene.planes.len() as u32,
            group_count: self.scene.groups.len() as u32,
            padding: [0; 2],
        }
    }

    /// A bind group and an output buffer of `values_per_pixel` floats per pixel, poisoned.
    fn prepare(
        &self,
        context: &GpuContext,
        pipeline: &wgpu::ComputePipeline,
        settings: &RenderSettings,
        values_per_pixel: usize,
    ) -> Result<(wgpu::BindGroup, wgpu::Buffer, usize), RenderError> {
        settings.validate()?;
        let count = values_per_pixel * settings.width as usize * settings.height as usize;
        let uniform = gpu_arrays::uniform(
            context,
            "path tracer parameters",
            &self.parameters(settings),
        );
        let output = gpu_arrays::poisoned(context, "path tracer output", count);
        let [materials, spheres, planes, groups] = &self.scene_buffers;
        let mut buffers = vec![
            (0, &uniform),
            (2, spheres),
            (3, planes),
            (4, groups),
            (5, &output),
        ];
        // primary_hits reads no materials, and a binding the entry point does not use is
        // not part of the layout wgpu derives for it.
        if values_per_pixel == 3 {
            buffers.push((1, materials));
        }
        let bind_group = gpu_arrays::bind_at(context, pipeline, &buffers);
        Ok((bind_group, output, count))
    }

    /// The workgroups to dispatch for an image, or a typed error when a side is too long.
    fn grid(
        context: &GpuContext,
        settings: &RenderSettings,
        workgroup: (u32, u32),
    ) -> Result<(u32, u32), GpuError> {
        let across = settings.width.div_ceil(workgroup.0);
        let down = settings.height.div_ceil(workgroup.1);
        let limit = context.limits().max_compute_workgroups_per_dimension;
        if across > limit || down > limit {
            return Err(GpuError::DispatchTooLarge {
                operation: "path tracer",
                workgroups: u64::from(across) * u64::from(down),
                limit,
            });
        }
        Ok((across, down))
    }

    /// The image of one step: three floats per pixel, read back.
    pub fn render(
        &self,
        context: &GpuContext,
        step: Step,
        settings: &RenderSettings,
    ) -> Result<Vec<f32>, RenderError> {
        let pipeline = self.pipeline(step);
        let (across, down) = GpuPathTracer::grid(context, settings, step.workgroup())?;
        let (bind_group, output, count) = self.prepare(context, pipeline, settings, 3)?;
        let mut encoder = context.create_encoder("path tracer");
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(across, down, 1);
        }
        context.submit(encoder);
        Ok(gpu_arrays::read_back(context, &output, count)?)
    }

    /// What the ray through each pixel's centre hits: four floats per pixel, as
    /// [`super::cpu::primary_hits`] writes them.
    pub fn primary_hits(
        &self,
        context: &GpuContext,
        settings: &RenderSettings,
    ) -> Result<Vec<f32>, RenderError> {
        let (bind_group, output, count) = self.prepare(context, &self.primary, settings, 4)?;
        let (across, down) = GpuPathTracer::grid(context, settings, (8, 8))?;
        let mut encoder = context.create_encoder("primary hits");
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
            pass.set_pipeline(&self.primary);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(across, down, 1);
        }
        context.submit(encoder);
        Ok(gpu_arrays::read_back(context, &output, count)?)
    }

    // ANCHOR: time_frames
    /// Renders `frames` frames of one step back to back and returns each one's time: the
    /// GPU's clock from the start to the end of its compute pass where the device has
    /// timestamp queries, otherwise the host's clock from submission to finish.
    pub fn time_frames(
        &self,
        context: &GpuContext,
        step: Step,
        settings: &RenderSettings,
        frames: u32,
    ) -> Result<Vec<FrameTime>, RenderError> {
        let pipeline = self.pipeline(step);
        let (bind_group, _output, _) = self.prepare(context, pipeline, settings, 3)?;
        let (across, down) = GpuPathTracer::grid(context, settings, step.workgroup())?;
        let queries = if TimestampSupport::of(context) >= TimestampSupport::PassBoundaries {
            Some(TimestampQueries::new(context, 2 * frames)?)
        } else {
            None
        };
        let mut times = Vec::new();
        for frame in 0..frames {
            let timestamp_writes =
                queries
                    .as_ref()
                    .map(|queries| wgpu::ComputePassTimestampWrites {
                        query_set: queries.query_set(),
                        beginning_of_pass_write_index: Some(2 * frame),
                        end_of_pass_write_index: Some(2 * frame + 1),
                    });
            let mut encoder = context.create_encoder("path tracer frame");
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("path tracer frame"),
                    timestamp_writes,
                });
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, &bind_group, &[]);
                pass.dispatch_workgroups(across, down, 1);
            }
            let start = Instant::now();
            context.submit(encoder);
            context
                .device()
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|error| GpuError::Readback {
                    reason: error.to_string(),
                })?;
            times.push(FrameTime {
                milliseconds: start.elapsed().as_secs_f64() * 1e3,
                gpu_clock: false,
            });
        }
        if let Some(queries) = queries {
            let stamps = queries.read_nanoseconds(context, 2 * frames)?;
            for (time, pair) in times.iter_mut().zip(stamps.chunks_exact(2)) {
                *time = FrameTime {
                    milliseconds: (pair[1] - pair[0]) / 1e6,
                    gpu_clock: true,
                };
            }
        }
        Ok(times)
    }
    // ANCHOR_END: time_frames
}
