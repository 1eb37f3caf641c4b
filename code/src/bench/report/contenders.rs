//! What the report's comparisons run on a workload: an execution mode, or a mode whose
//! runner has one choice changed (how its dispatches are grouped into compute passes,
//! where its tensors live), so that each choice can be measured on its own.

use crate::bench::sweeps::modes::time_mode;
use crate::bench::sweeps::{Budget, Measurement, SweepError, measure};
use crate::compiler::{fuse, rewrite_in_place};
use crate::gpu::{GpuContext, ShaderCompilation};
use crate::graph::Workload;
use crate::runner::execution::{CompiledBuffers, prepare_compiled_variant};
use crate::runner::gpu::{ComputePasses, GpuRunnerOptions};
use crate::runner::{BufferPlan, ExecutionMode, GpuGraphRunner, OpCodeRunner, RunError};
use crate::tensor::Tensor2d;

/// The runners whose compute passes a comparison can choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PassesOf {
    /// `GraphCachedFused`: the fused graph, hand-written kernels, cached pipelines.
    FusedGraph,
    /// `OpCode`: the fused graph as generated kernels.
    OpCode,
    /// `GraphCompiled`: every compiler pass.
    Compiled,
}

impl PassesOf {
    fn mode(self) -> ExecutionMode {
        match self {
            PassesOf::FusedGraph => ExecutionMode::GraphCachedFused,
            PassesOf::OpCode => ExecutionMode::OpCode,
            PassesOf::Compiled => ExecutionMode::GraphCompiled,
        }
    }
}

/// One thing a comparison times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Contender {
    Mode(ExecutionMode),
    /// A runner with its dispatches grouped into compute passes as given.
    Passes(PassesOf, ComputePasses),
    /// `GraphCompiled` with one buffer per computed tensor: no buffer reuse.
    CompiledWithoutReuse,
}

impl Contender {
    /// The name in the report: the mode, and what was changed.
    pub fn name(self) -> String {
        let passes = |passes| match passes {
            ComputePasses::OnePerRun => "one compute pass per run",
            ComputePasses::OnePerDispatch => "one compute pass per dispatch",
        };
        match self {
            Contender::Mode(mode) => format!("{mode:?}"),
            Contender::Passes(runner, chosen) => {
                format!("{:?}, {}", runner.mode(), passes(chosen))
            }
            Contender::CompiledWithoutReuse => {
                "GraphCompiled, one buffer per tensor (no reuse)".to_string()
            }
        }
    }

    // ANCHOR: time_contender
    /// Prepares the contender for `workload` (not timed) and measures one run: upload,
    /// compute, readback. Outputs are checked to be finite, as in [`time_mode`].
    pub fn time(
        self,
        workload: &Workload,
        context: &GpuContext,
        budget: &Budget,
    ) -> Result<Measurement, SweepError> {
        let what = || {
            let (rows, columns) = workload.input.shape();
            format!("{} with a {rows}×{columns} input", self.name())
        };
        let run_error = |source| SweepError::Run {
            what: what(),
            source: Box::new(source),
        };
        let prepared = match self {
            Contender::Mode(mode) => return time_mode(mode, workload, Some(context), budget),
            Contender::Passes(PassesOf::FusedGraph, passes) => {
                let graph = rewrite_in_place(&fuse(&workload.graph)?)?;
                let options = GpuRunnerOptions {
                    passes,
                    ..GpuRunnerOptions::new(ShaderCompilation::Cached)
                };
                let plan = BufferPlan::new(&graph);
                GpuGraphRunner::prepare_with_options(context, &graph, plan, options)
                    .map(|runner| Prepared::Graph(Box::new(runner)))
            }
            Contender::Passes(PassesOf::OpCode, passes) => {
                OpCodeRunner::prepare_with_passes(context, &fuse(&workload.graph)?, passes)
                    .map(Prepared::OpCode)
            }
            Contender::Passes(PassesOf::Compiled, passes) => {
                prepare_compiled_variant(context, &workload.graph, CompiledBuffers::Reused, passes)
                    .map(|runner| Prepared::Graph(Box::new(runner)))
            }
            Contender::CompiledWithoutReuse => prepare_compiled_variant(
                context,
                &workload.graph,
                CompiledBuffers::OnePerTensor,
                ComputePasses::OnePerRun,
            )
            .map(|runner| Prepared::Graph(Box::new(runner))),
        }
        .map_err(run_error)?;
        measure(budget, |runs| {
            for _ in 0..runs {
                let output = prepared.run(&workload.input).map_err(run_error)?;
                if output.as_slice().iter().any(|value| !value.is_finite()) {
                    return Err(SweepError::NotFinite { what: what() });
                }
            }
            Ok(())
        })
    }
    // ANCHOR_END: time_contender
}

/// A runner that no execution mode names.
enum Prepared<'context> {
    // Boxed: a graph runner is several times larger than an op-code runner.
    Graph(Box<GpuGraphRunner<'context>>),
    OpCode(OpCodeRunner<'context>),
}

impl Prepared<'_> {
    fn run(&self, input: &Tensor2d) -> Result<Tensor2d, RunError> {
        match self {
            Prepared::Graph(runner) => runner.run(input),
            Prepared::OpCode(runner) => runner.run(input),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::random_mlp;

    #[test]
    fn every_kind_of_contender_runs_and_gets_a_positive_time() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let workload = random_mlp(8, 3, 1).unwrap();
        let budget = Budget {
            seconds_per_run: 60.0,
            seconds_per_point: 0.0,
            minimum_sample_seconds: 0.0,
            minimum_samples: 1,
            maximum_samples: 1,
        };
        let mut contenders = vec![
            Contender::Mode(ExecutionMode::GraphCompiled),
            Contender::CompiledWithoutReuse,
        ];
        for runner in [PassesOf::FusedGraph, PassesOf::OpCode, PassesOf::Compiled] {
            for passes in [ComputePasses::OnePerRun, ComputePasses::OnePerDispatch] {
                contenders.push(Contender::Passes(runner, passes));
            }
        }
        for contender in contenders {
            let measurement = contender.time(&workload, context, &budget).unwrap();
            assert!(
                measurement.seconds_per_run.is_finite() && measurement.seconds_per_run > 0.0,
                "{}: {measurement:?}",
                contender.name()
            );
        }
        assert_eq!(
            Contender::Passes(PassesOf::OpCode, ComputePasses::OnePerRun).name(),
            "OpCode, one compute pass per run"
        );
    }
}
