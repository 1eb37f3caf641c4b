//! The runner of the fully fused MLP kernel: the whole graph in one dispatch.
//!
//! The compiled mode asks [`prepare_fused`] first. When the fused-MLP pass plans one
//! kernel for the graph (`compiler::fused_mlp`), the runner compiles it, uploads the
//! packed weights once, and binds the kernel to an input and an output buffer once. A run
//! then writes the input, records one dispatch and the copy of the result into one
//! submission, and reads the result back: one kernel per run instead of one per layer.

use crate::compiler::fused_mlp::{
    FusedMlpPlan, FusionChoice, FusionCostModel, FusionRequest, LARGE_GPU, SOFTWARE_RASTERISER,
    find_chain, plan_fused_mlp,
};
use crate::gpu::fused_mlp::{FusedMlpError, FusedMlpKernel};
use crate::gpu::record::{BoundDispatch, record_in_one_pass};
use crate::gpu::register_blocked_linear::KernelLimits;
use crate::gpu::upload::UploadBuffer;
use crate::gpu::{GpuContext, GpuTensor, Readback};
use crate::graph::{Operator, TensorId, ValidGraph};
use crate::runner::RunError;
use crate::tensor::Tensor2d;

/// The cost model for `context`'s device: a software rasteriser (lavapipe) runs
/// workgroups on the CPU, where the fused kernel pays off only for tiny networks; every
/// other adapter is modelled as a large GPU.
pub fn cost_model_for(context: &GpuContext) -> FusionCostModel {
    match context.adapter_info().device_type {
        wgpu::DeviceType::Cpu => SOFTWARE_RASTERISER,
        _ => LARGE_GPU,
    }
}

/// The plan of the fused-MLP pass for `graph` on `context`'s device.
pub fn plan_for_device(
    context: &GpuContext,
    graph: &ValidGraph,
    request: FusionRequest,
) -> FusedMlpPlan {
    let limits = KernelLimits::of(&context.limits());
    plan_fused_mlp(graph, &limits, &cost_model_for(context), request)
}

// ANCHOR: fused_runner
/// Runs a graph as one dispatch of the fused MLP kernel.
pub struct FusedMlpRunner<'context> {
    context: &'context GpuContext,
    plan: FusedMlpPlan,
    input: GpuTensor,
    /// A staging buffer kept mapped between runs: the input's upload, the kernel and the
    /// copy of the result are one submission (see `gpu::upload`).
    upload: UploadBuffer,
    output: GpuTensor,
    dispatch: BoundDispatch,
    /// Kept alive for the dispatch, which holds its pipeline and buffers.
    _kernel: FusedMlpKernel,
}
// ANCHOR_END: fused_runner

// ANCHOR: prepare_fused
/// The fused runner for `graph` if the plan fuses it, `None` if the plan runs it layer by
/// layer; an error if fusion was required ([`FusionChoice::Always`]) and is not possible.
pub fn prepare_fused<'context>(
    context: &'context GpuContext,
    graph: &ValidGraph,
    request: FusionRequest,
) -> Result<Option<FusedMlpRunner<'context>>, RunError> {
    let plan = plan_for_device(context, graph, request);
    if !plan.is_fused() {
        if request.choice == FusionChoice::Always {
            return Err(RunError::FusionNotPossible {
                reason: plan.to_string(),
            });
        }
        return Ok(None);
    }
    FusedMlpRunner::prepare(context, graph, plan).map(Some)
}
// ANCHOR_END: prepare_fused

impl<'context> FusedMlpRunner<'context> {
    /// Prepares the kernel `plan` lays out (the plan must fuse the graph).
    pub fn prepare(
        context: &'context GpuContext,
        graph: &ValidGraph,
        plan: FusedMlpPlan,
    ) -> Result<FusedMlpRunner<'context>, RunError> {
        let config = plan.config().ok_or_else(|| RunError::FusionNotPossible {
            reason: plan.to_string(),
        })?;
        let chain = find_chain(graph).map_err(|reason| RunError::FusionNotPossible { reason })?;
        let constant = |id: TensorId| match &graph.graph().node(id).operator {
            Operator::Constant(tensor) => Ok(tensor),
            _ => Err(RunError::FusionNotPossible {
                reason: format!("node {} holds no constant weights", id.0),
            }),
        };
        let parameters = chain
            .parameters
            .iter()
            .map(|&(weights, bias)| Ok((constant(weights)?, constant(bias)?)))
            .collect::<Result<Vec<_>, RunError>>()?;
        let kernel = FusedMlpKernel::prepare(context, &chain.shape, config, &parameters)?;
        let shape = &chain.shape;
        let input =
            GpuTensor::uninitialized(context, shape.rows, shape.input_columns, Readback::Never)?;
        let output = GpuTensor::uninitialized(
            context,
            shape.rows,
            shape.output_columns(),
            Readback::Needed,
        )?;
        let dispatch = kernel.bind(context, &input, &output)?;
        let upload = UploadBuffer::for_tensor(context, &input);
        Ok(FusedMlpRunner {
            context,
            plan,
            input,
            upload,
            output,
            dispatch,
            _kernel: kernel,
        })
    }

    /// What was fused, the layout and the estimates.
    pub fn plan(&self) -> &FusedMlpPlan {
        &self.plan
    }

    /// The buffer the result is written to, for tests that poison it before a run.
    pub fn result_buffer(&self) -> &GpuTensor {
        &self.output
    }

    // ANCHOR: fused_run
    /// Runs the graph once: the copy of the input out of the mapped upload buffer, one
    /// dispatch and the copy of the result in one submission, then one wait for the readback
    /// (which also completes the upload buffer's request to be mapped again).
    pub fn run(&self, input: &Tensor2d) -> Result<Tensor2d, RunError> {
        let mut values = vec![0.0; self.output.len()];
        self.run_into(input, &mut values)?;
        Ok(Tensor2d::from_vec(
            self.output.rows(),
            self.output.columns(),
            values,
        )?)
    }

    /// As [`FusedMlpRunner::run`], writing the result into `output` (as long as the
    /// result) rather than into a new tensor.
    pub fn run_into(&self, input: &Tensor2d, output: &mut [f32]) -> Result<(), RunError> {
        if input.shape() != self.input.shape() {
            return Err(RunError::InputShape {
                expected: self.input.shape(),
                given: input.shape(),
            });
        }
        self.upload.write(self.context, input)?;
        let mut encoder = self.context.create_encoder("fused mlp");
        self.upload.record_copy(&mut encoder, &self.input)?;
        record_in_one_pass(&mut encoder, std::slice::from_ref(&self.dispatch));
        self.output.record_copy_to_staging(&mut encoder)?;
        self.context.submit(encoder);
        self.upload.request_map();
        Ok(self.output.read_staging_into(self.context, output)?)
    }
    // ANCHOR_END: fused_run
}

impl From<FusedMlpError> for RunError {
    /// A GPU failure stays a GPU failure; everything else is about the fused kernel.
    fn from(error: FusedMlpError) -> RunError {
        match error {
            FusedMlpError::Gpu(error) => RunError::Gpu(error),
            other => RunError::FusedKernel(other),
        }
    }
}
