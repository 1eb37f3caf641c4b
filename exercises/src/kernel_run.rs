//! Running a student's kernel: buffers in, one dispatch, results out.
//!
//! The pipeline gets an explicit bind group layout built from the exercise's documented
//! bindings, rather than one derived from the shader: a starter that does not read every
//! input yet still binds, and a shader that declares something else is refused by name
//! (see `shader.rs`) instead of by a wgpu panic.
//!
//! Every wgpu call that can fail on a student's shader runs inside an error scope, and
//! the wait for the result has a time limit, so a broken kernel produces a
//! [`CheckError`], never a panic or a hang.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use galaxy::gpu::GpuContext;
use wgpu::util::DeviceExt;

use crate::error::CheckError;
use crate::shader::{AnalysedShader, BindingKind, BindingSpec, ENTRY_POINT};

/// How long one timed submission of [`PreparedKernel::median_time`] aims to take.
pub const BATCH_TARGET: Duration = Duration::from_millis(5);

/// How long a kernel may take before the checker gives up on it. Generous: the software
/// driver of CI is slow.
pub const TIME_LIMIT: Duration = Duration::from_secs(60);

/// A compiled kernel and the layout its buffers are bound with.
#[derive(Debug)]
pub struct CompiledKernel {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
    pub workgroup_size: [u32; 3],
}

/// What to put in one binding, in the order of the exercise's [`BindingSpec`]s.
#[derive(Debug, Clone)]
pub enum BufferData {
    /// Read-only storage.
    Input(Vec<u8>),
    /// Read-write storage, filled with these bytes before the run (NaN for results, zero
    /// for counters) and read back after it.
    Output(Vec<u8>),
    /// The uniform struct, as bytes.
    Uniform(Vec<u8>),
}

impl BufferData {
    pub fn floats(values: &[f32]) -> BufferData {
        BufferData::Input(bytemuck::cast_slice(values).to_vec())
    }

    pub fn words(values: &[u32]) -> BufferData {
        BufferData::Input(bytemuck::cast_slice(values).to_vec())
    }

    /// An output of `count` floats, every one NaN: an element the kernel forgets to
    /// write stays NaN, and NaN never matches.
    pub fn poisoned_floats(count: usize) -> BufferData {
        BufferData::Output(bytemuck::cast_slice(&vec![f32::NAN; count.max(1)]).to_vec())
    }

    /// An output of `count` zeroed words (counters that the kernel adds to).
    pub fn zeroed_words(count: usize) -> BufferData {
        BufferData::Output(vec![0; 4 * count.max(1)])
    }

    /// A uniform struct of `u32` fields.
    pub fn uniform(fields: &[u32]) -> BufferData {
        BufferData::Uniform(bytemuck::cast_slice(fields).to_vec())
    }
}

/// Builds the pipeline for `shader` with the bind group layout of `bindings`.
pub fn compile(
    context: &GpuContext,
    shader: &AnalysedShader,
    bindings: &[BindingSpec],
) -> Result<CompiledKernel, CheckError> {
    let device = context.device();
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let entries: Vec<wgpu::BindGroupLayoutEntry> = bindings
        .iter()
        .map(|spec| wgpu::BindGroupLayoutEntry {
            binding: spec.binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: match spec.kind {
                    BindingKind::ReadOnlyStorage => {
                        wgpu::BufferBindingType::Storage { read_only: true }
                    }
                    BindingKind::ReadWriteStorage => {
                        wgpu::BufferBindingType::Storage { read_only: false }
                    }
                    BindingKind::Uniform => wgpu::BufferBindingType::Uniform,
                },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        })
        .collect();
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("exercise bindings"),
        entries: &entries,
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("exercise"),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let label = shader.path.display().to_string();
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(&label),
        source: wgpu::ShaderSource::Wgsl(shader.source.as_str().into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(&label),
        layout: Some(&pipeline_layout),
        module: &module,
        entry_point: Some(ENTRY_POINT),
        compilation_options: wgpu::PipelineCompilationOptions::default(),
        cache: None,
    });
    if let Some(error) = pollster::block_on(scope.pop()) {
        return Err(CheckError::Pipeline {
            message: error.to_string(),
        });
    }
    Ok(CompiledKernel {
        pipeline,
        layout,
        workgroup_size: shader.workgroup_size,
    })
}

/// The number of workgroups of `workgroup_size` items that cover `items`.
pub fn workgroups_for(items: usize, workgroup_size: u32) -> u32 {
    (items as u64).div_ceil(u64::from(workgroup_size.max(1))) as u32
}

/// A kernel with its buffers created and bound, ready to dispatch (once for a check,
/// many times for a benchmark).
pub struct PreparedKernel {
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    /// The read-write buffers and the staging buffers they are read back through.
    outputs: Vec<(wgpu::Buffer, wgpu::Buffer)>,
    grid: [u32; 3],
}

impl PreparedKernel {
    pub fn new(
        context: &GpuContext,
        kernel: &CompiledKernel,
        data: &[BufferData],
        grid: [u32; 3],
    ) -> Result<PreparedKernel, CheckError> {
        let limit = context.limits().max_compute_workgroups_per_dimension;
        if let Some(&too_many) = grid.iter().find(|&&count| count > limit) {
            return Err(CheckError::DispatchTooLarge {
                workgroups: u64::from(too_many),
                limit,
            });
        }
        let device = context.device();
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut outputs = Vec::new();
        let buffers: Vec<wgpu::Buffer> = data
            .iter()
            .map(|data| {
                let (contents, usage) = match data {
                    BufferData::Input(bytes) => (bytes.clone(), wgpu::BufferUsages::STORAGE),
                    BufferData::Output(bytes) => (
                        bytes.clone(),
                        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                    ),
                    // Uniform structs are rounded up to 16 bytes: a struct of three u32
                    // still occupies 16 in the uniform address space on some backends.
                    BufferData::Uniform(bytes) => {
                        let mut padded = bytes.clone();
                        padded.resize(bytes.len().div_ceil(16).max(1) * 16, 0);
                        (padded, wgpu::BufferUsages::UNIFORM)
                    }
                };
                // A binding may not be empty: an empty input still gets one element.
                let mut contents = contents;
                if contents.is_empty() {
                    contents.resize(4, 0);
                }
                device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("exercise buffer"),
                    contents: &contents,
                    usage,
                })
            })
            .collect();
        for (data, buffer) in data.iter().zip(&buffers) {
            if matches!(data, BufferData::Output(_)) {
                let staging = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("exercise staging"),
                    size: buffer.size(),
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                outputs.push((buffer.clone(), staging));
            }
        }
        let entries: Vec<wgpu::BindGroupEntry> = buffers
            .iter()
            .enumerate()
            .map(|(binding, buffer)| wgpu::BindGroupEntry {
                binding: binding as u32,
                resource: buffer.as_entire_binding(),
            })
            .collect();
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("exercise"),
            layout: &kernel.layout,
            entries: &entries,
        });
        if let Some(error) = pollster::block_on(scope.pop()) {
            return Err(CheckError::Run {
                message: error.to_string(),
            });
        }
        Ok(PreparedKernel {
            pipeline: kernel.pipeline.clone(),
            bind_group,
            outputs,
            grid,
        })
    }

    fn record_dispatch(&self, encoder: &mut wgpu::CommandEncoder) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("exercise"),
            timestamp_writes: None,
        });
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.dispatch_workgroups(self.grid[0], self.grid[1], self.grid[2]);
    }

    /// Dispatches once and reads back every output, as bytes, in binding order.
    pub fn run(&self, context: &GpuContext) -> Result<Vec<Vec<u8>>, CheckError> {
        let device = context.device();
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("exercise run"),
        });
        self.record_dispatch(&mut encoder);
        for (storage, staging) in &self.outputs {
            encoder.copy_buffer_to_buffer(storage, 0, staging, 0, storage.size());
        }
        let submission = context.queue().submit([encoder.finish()]);
        if let Some(error) = pollster::block_on(scope.pop()) {
            return Err(CheckError::Run {
                message: error.to_string(),
            });
        }
        let receivers: Vec<_> = self
            .outputs
            .iter()
            .map(|(_, staging)| {
                let (sender, receiver) = mpsc::channel();
                staging
                    .slice(..)
                    .map_async(wgpu::MapMode::Read, move |result| {
                        let _ = sender.send(result);
                    });
                receiver
            })
            .collect();
        wait(context, submission)?;
        let mut results = Vec::new();
        for ((_, staging), receiver) in self.outputs.iter().zip(receivers) {
            let mapped = receiver.recv().map_err(|error| CheckError::Run {
                message: error.to_string(),
            })?;
            mapped.map_err(|error| CheckError::Run {
                message: error.to_string(),
            })?;
            let bytes = staging
                .slice(..)
                .get_mapped_range()
                .map_err(|error| CheckError::Run {
                    message: error.to_string(),
                })?
                .to_vec();
            staging.unmap();
            results.push(bytes);
        }
        Ok(results)
    }

    /// The median time of one dispatch, data already on the GPU, over `repetitions`
    /// timed submissions after a warm-up. For benchmarks and the informative GFLOP/s of
    /// the hand-in; the checker never judges a kernel by its speed.
    ///
    /// Submitting and waiting costs tens of microseconds on its own, as much as a whole
    /// small kernel on a real GPU. So each timed submission holds as many back-to-back
    /// dispatches as fill about [`BATCH_TARGET`] (at least one, at most 256), and its time
    /// is divided by their number.
    pub fn median_time(
        &self,
        context: &GpuContext,
        repetitions: usize,
    ) -> Result<Duration, CheckError> {
        // Warm-up: the first dispatch of a pipeline pays for setting it up.
        self.dispatches_and_wait(context, 1)?;
        let started = Instant::now();
        self.dispatches_and_wait(context, 1)?;
        let estimate = started.elapsed().max(Duration::from_nanos(1));
        let batch = (BATCH_TARGET.as_secs_f64() / estimate.as_secs_f64()).ceil() as usize;
        let batch = batch.clamp(1, 256);
        let mut times = Vec::with_capacity(repetitions.max(1));
        for _ in 0..repetitions.max(1) {
            let started = Instant::now();
            self.dispatches_and_wait(context, batch)?;
            times.push(started.elapsed() / batch as u32);
        }
        times.sort();
        Ok(times[times.len() / 2])
    }

    /// `count` dispatches in one submission, each in its own compute pass (so each sees
    /// the previous one's writes), waited for; the outputs stay on the GPU.
    pub fn dispatches_and_wait(
        &self,
        context: &GpuContext,
        count: usize,
    ) -> Result<(), CheckError> {
        let mut encoder =
            context
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("exercise timing"),
                });
        for _ in 0..count {
            self.record_dispatch(&mut encoder);
        }
        let submission = context.queue().submit([encoder.finish()]);
        wait(context, submission)
    }

    /// One dispatch, submitted and waited for; the outputs stay on the GPU.
    pub fn dispatch_and_wait(&self, context: &GpuContext) -> Result<(), CheckError> {
        self.dispatches_and_wait(context, 1)
    }
}

fn wait(context: &GpuContext, submission: wgpu::SubmissionIndex) -> Result<(), CheckError> {
    context
        .device()
        .poll(wgpu::PollType::Wait {
            submission_index: Some(submission),
            timeout: Some(TIME_LIMIT),
        })
        .map(|_| ())
        .map_err(|error| match error {
            wgpu::PollError::Timeout => CheckError::Timeout {
                seconds: TIME_LIMIT.as_secs(),
            },
            other => CheckError::Run {
                message: other.to_string(),
            },
        })
}

/// Reads back bytes as `f32`.
pub fn to_floats(bytes: &[u8]) -> Vec<f32> {
    bytemuck::pod_collect_to_vec(bytes)
}

/// Reads back bytes as `u32`.
pub fn to_words(bytes: &[u8]) -> Vec<u32> {
    bytemuck::pod_collect_to_vec(bytes)
}
