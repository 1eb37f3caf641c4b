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
#[derive(Debug, Clone)]
pub struct CompiledKernel {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
    pub workgroup_size: [u32; 3],
}

/// The bit pattern of the NaN every float output starts as. Reading exactly this back
/// means the element was never written; any other NaN was computed.
pub const POISON_BITS: u32 = 0x7FC0_DEAD;

/// The bit pattern of the NaN in the guard elements around every float input. A kernel
/// that reads past its data reads this NaN, and NaN poisons whatever it touches.
pub const GUARD_NAN_BITS: u32 = 0x7FC0_0BAD;

/// The guard word around every integer input: larger than any value an exercise allows
/// (a bin number, an index), so a read past the data is never a valid value.
pub const GUARD_WORD: u32 = u32::MAX;

/// The guard word after an output of counters, which start at zero: no count reaches it.
pub const COUNTER_GUARD_WORD: u32 = 0xDEAD_BEEF;

/// Guard elements after the data of every storage buffer.
pub const GUARD_ELEMENTS: usize = 64;

/// The scalar of a storage buffer's elements, which decides its guard values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    F32,
    U32,
}

/// Which values fill the guards. A failing case is run again with the other fill: if its
/// result changes, the kernel reads the guards, that is, out of bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuardFill {
    /// NaN around floats, [`GUARD_WORD`] around integers.
    Poison,
    /// Zeros, which is what a software driver with robust buffer access returns for a
    /// read past the end of a binding: a kernel that passes only with this fill depends
    /// on reads out of bounds.
    Zero,
}

/// What to put in one binding, in the order of the exercise's [`BindingSpec`]s.
///
/// Every storage buffer carries guard elements. An input sits at a non-zero offset of its
/// buffer with guards before it (filling the rest of the offset's alignment) and
/// [`GUARD_ELEMENTS`] after it, and is bound with the guards after it included: the kernel
/// sees a runtime-sized array longer than the data, whose extra elements are NaN (floats)
/// or [`GUARD_WORD`] (integers). Kernels take their sizes from the `dimensions` uniform, so
/// a correct one never reads a guard. The guards before the data lie outside the binding:
/// no index can reach them on a backend that checks bounds, but a backend that lets an
/// out-of-range read return any value of the buffer finds a guard there too.
///
/// An output has guards after its data, and the checker verifies after the run that they
/// are untouched: a changed guard is a write out of bounds.
#[derive(Debug, Clone)]
pub enum BufferData {
    /// Read-only storage.
    Input { bytes: Vec<u8>, scalar: Scalar },
    /// Read-write storage, filled with these bytes before the run (poison for results,
    /// zero for counters) and read back after it.
    Output { bytes: Vec<u8>, scalar: Scalar },
    /// The uniform struct, as bytes.
    Uniform(Vec<u8>),
}

impl BufferData {
    pub fn floats(values: &[f32]) -> BufferData {
        BufferData::Input {
            bytes: bytemuck::cast_slice(values).to_vec(),
            scalar: Scalar::F32,
        }
    }

    pub fn words(values: &[u32]) -> BufferData {
        BufferData::Input {
            bytes: bytemuck::cast_slice(values).to_vec(),
            scalar: Scalar::U32,
        }
    }

    /// An output of `count` floats, every one the poison NaN ([`POISON_BITS`]): an element
    /// the kernel forgets to write stays poison, and NaN never matches.
    pub fn poisoned_floats(count: usize) -> BufferData {
        BufferData::Output {
            bytes: bytemuck::cast_slice(&vec![POISON_BITS; count]).to_vec(),
            scalar: Scalar::F32,
        }
    }

    /// An output of `count` zeroed words (counters that the kernel adds to).
    pub fn zeroed_words(count: usize) -> BufferData {
        BufferData::Output {
            bytes: vec![0; 4 * count],
            scalar: Scalar::U32,
        }
    }

    /// A uniform struct of `u32` fields.
    pub fn uniform(fields: &[u32]) -> BufferData {
        BufferData::Uniform(bytemuck::cast_slice(fields).to_vec())
    }

    /// The word that fills this buffer's guards.
    fn guard_word(&self, fill: GuardFill) -> u32 {
        match (self, fill) {
            (BufferData::Input { .. }, GuardFill::Zero) => 0,
            (
                BufferData::Input {
                    scalar: Scalar::F32,
                    ..
                },
                GuardFill::Poison,
            ) => GUARD_NAN_BITS,
            (
                BufferData::Input {
                    scalar: Scalar::U32,
                    ..
                },
                GuardFill::Poison,
            ) => GUARD_WORD,
            (
                BufferData::Output {
                    scalar: Scalar::F32,
                    ..
                },
                _,
            ) => POISON_BITS,
            (
                BufferData::Output {
                    scalar: Scalar::U32,
                    ..
                },
                _,
            ) => COUNTER_GUARD_WORD,
            (BufferData::Uniform(_), _) => 0,
        }
    }
}

/// One output as read back: its data, and the first of its guard elements the kernel
/// changed, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadBack {
    pub data: Vec<u8>,
    pub changed_guard: Option<usize>,
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
    /// The read-write buffers, the staging buffers they are read back through, the size
    /// of their data in bytes, and the word their guards hold.
    outputs: Vec<PreparedOutput>,
    grid: [u32; 3],
}

struct PreparedOutput {
    storage: wgpu::Buffer,
    staging: wgpu::Buffer,
    data_bytes: usize,
    guard_word: u32,
}

impl PreparedKernel {
    /// Prepares `data` with poison in the guards.
    pub fn new(
        context: &GpuContext,
        kernel: &CompiledKernel,
        data: &[BufferData],
        grid: [u32; 3],
    ) -> Result<PreparedKernel, CheckError> {
        PreparedKernel::with_guards(context, kernel, data, grid, GuardFill::Poison)
    }

    pub fn with_guards(
        context: &GpuContext,
        kernel: &CompiledKernel,
        data: &[BufferData],
        grid: [u32; 3],
        fill: GuardFill,
    ) -> Result<PreparedKernel, CheckError> {
        let limits = context.limits();
        if let Some(&too_many) = grid
            .iter()
            .find(|&&count| count > limits.max_compute_workgroups_per_dimension)
        {
            return Err(CheckError::DispatchTooLarge {
                workgroups: u64::from(too_many),
                limit: limits.max_compute_workgroups_per_dimension,
            });
        }
        // The data of an input starts at the smallest offset a binding may have.
        let front_bytes = (limits.min_storage_buffer_offset_alignment as usize).max(4);
        let device = context.device();
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut outputs = Vec::new();
        // (buffer, offset, size) of every binding.
        let mut bound: Vec<(wgpu::Buffer, u64, u64)> = Vec::new();
        for buffer_data in data {
            let guard = buffer_data.guard_word(fill).to_ne_bytes();
            let guards =
                |bytes: usize| -> Vec<u8> { guard.iter().copied().cycle().take(bytes).collect() };
            match buffer_data {
                BufferData::Input { bytes, .. } => {
                    let mut contents = guards(front_bytes);
                    contents.extend_from_slice(bytes);
                    contents.extend(guards(4 * GUARD_ELEMENTS));
                    let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some("exercise input"),
                        contents: &contents,
                        usage: wgpu::BufferUsages::STORAGE,
                    });
                    let size = (contents.len() - front_bytes) as u64;
                    bound.push((buffer, front_bytes as u64, size));
                }
                BufferData::Output { bytes, .. } => {
                    let mut contents = bytes.clone();
                    contents.extend(guards(4 * GUARD_ELEMENTS));
                    let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some("exercise output"),
                        contents: &contents,
                        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                    });
                    let staging = device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("exercise staging"),
                        size: buffer.size(),
                        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                        mapped_at_creation: false,
                    });
                    outputs.push(PreparedOutput {
                        storage: buffer.clone(),
                        staging,
                        data_bytes: bytes.len(),
                        guard_word: buffer_data.guard_word(fill),
                    });
                    let size = buffer.size();
                    bound.push((buffer, 0, size));
                }
                // Uniform structs are rounded up to 16 bytes: a struct of three u32 still
                // occupies 16 in the uniform address space on some backends.
                BufferData::Uniform(bytes) => {
                    let mut padded = bytes.clone();
                    padded.resize(bytes.len().div_ceil(16).max(1) * 16, 0);
                    let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some("exercise uniform"),
                        contents: &padded,
                        usage: wgpu::BufferUsages::UNIFORM,
                    });
                    let size = buffer.size();
                    bound.push((buffer, 0, size));
                }
            }
        }
        let entries: Vec<wgpu::BindGroupEntry> = bound
            .iter()
            .enumerate()
            .map(|(binding, (buffer, offset, size))| wgpu::BindGroupEntry {
                binding: binding as u32,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer,
                    offset: *offset,
                    size: wgpu::BufferSize::new(*size),
                }),
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

    /// Dispatches once and reads back the data of every output, as bytes, in binding
    /// order (for timing, where the guards were checked before).
    pub fn run(&self, context: &GpuContext) -> Result<Vec<Vec<u8>>, CheckError> {
        Ok(self
            .run_guarded(context)?
            .into_iter()
            .map(|read_back| read_back.data)
            .collect())
    }

    /// Dispatches once and reads back every output with the state of its guards.
    pub fn run_guarded(&self, context: &GpuContext) -> Result<Vec<ReadBack>, CheckError> {
        let device = context.device();
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("exercise run"),
        });
        self.record_dispatch(&mut encoder);
        for output in &self.outputs {
            encoder.copy_buffer_to_buffer(
                &output.storage,
                0,
                &output.staging,
                0,
                output.storage.size(),
            );
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
            .map(|output| {
                let (sender, receiver) = mpsc::channel();
                output
                    .staging
                    .slice(..)
                    .map_async(wgpu::MapMode::Read, move |result| {
                        let _ = sender.send(result);
                    });
                receiver
            })
            .collect();
        wait(context, submission)?;
        let mut results = Vec::new();
        for (output, receiver) in self.outputs.iter().zip(receivers) {
            let mapped = receiver.recv().map_err(|error| CheckError::Run {
                message: error.to_string(),
            })?;
            mapped.map_err(|error| CheckError::Run {
                message: error.to_string(),
            })?;
            let bytes = output
                .staging
                .slice(..)
                .get_mapped_range()
                .map_err(|error| CheckError::Run {
                    message: error.to_string(),
                })?
                .to_vec();
            output.staging.unmap();
            let (data, guards) = bytes.split_at(output.data_bytes);
            let changed_guard = to_words(guards)
                .iter()
                .position(|&word| word != output.guard_word);
            results.push(ReadBack {
                data: data.to_vec(),
                changed_guard,
            });
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
