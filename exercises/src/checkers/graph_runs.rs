//! Running a graph the way the crate's runners do, for the graph-compiler exercises:
//! with a given buffer plan, on the CPU and on the GPU, compared with the plain
//! operator-by-operator evaluation of the original graph.

use galaxy::gpu::{GpuContext, ShaderCompilation};
use galaxy::graph::ValidGraph;
use galaxy::runner::{BufferPlan, CpuGraphRunner, GpuGraphRunner, run_operator_by_operator};
use galaxy::{Tensor2d, Tolerance};

use crate::report::{Verdict, catching_panics, compare};

pub const TOLERANCE: Tolerance = Tolerance::new(1e-4, 1e-5);

/// The result of `graph` run with `plan` by the CPU runner, and by the GPU runner in a
/// graph loop of two iterations (every buffer filled with NaN first), each compared with
/// `original` evaluated operator by operator.
pub fn same_results(
    context: &GpuContext,
    original: &ValidGraph,
    graph: &ValidGraph,
    plan: &BufferPlan,
    input: &Tensor2d,
) -> Verdict {
    let expected = match run_operator_by_operator(original, input) {
        Ok(expected) => expected,
        Err(error) => return Verdict::Error(format!("the reference run failed: {error}")),
    };
    let outcome = catching_panics(|| -> Result<Verdict, String> {
        let mut cpu = CpuGraphRunner::prepare_with_plan(graph, plan.clone());
        let cpu_result = cpu.run(input).map_err(|error| error.to_string())?;
        let cpu_verdict = compare(&cpu_result, &expected, TOLERANCE);
        if !cpu_verdict.passed() {
            return Ok(prefixed("CPU runner", cpu_verdict));
        }
        let scope = context
            .device()
            .push_error_scope(wgpu::ErrorFilter::Validation);
        let gpu = GpuGraphRunner::prepare_with_plan(
            context,
            graph,
            plan.clone(),
            ShaderCompilation::Cached,
        );
        let results = gpu.and_then(|gpu| {
            for buffer in gpu.buffers() {
                buffer.fill(context, f32::NAN);
            }
            gpu.run_loop(input, 2)
        });
        if let Some(error) = pollster::block_on(scope.pop()) {
            return Err(format!("wgpu rejected the GPU run: {error}"));
        }
        let results = results.map_err(|error| error.to_string())?;
        for (iteration, result) in results.iter().enumerate() {
            let verdict = compare(result, &expected, TOLERANCE);
            if !verdict.passed() {
                return Ok(prefixed(
                    &format!("GPU runner, iteration {} of the graph loop", iteration + 1),
                    verdict,
                ));
            }
        }
        Ok(Verdict::Pass(format!(
            "CPU and GPU runners agree with the plain evaluation ({} elements)",
            expected.len()
        )))
    });
    match outcome {
        Ok(Ok(verdict)) => verdict,
        Ok(Err(message)) => Verdict::Error(message),
        Err(panicked) => panicked,
    }
}

/// Says which runner a failed verdict comes from.
fn prefixed(runner: &str, verdict: Verdict) -> Verdict {
    match verdict {
        Verdict::Mismatch(report) => Verdict::Error(format!("{runner}: {report}")),
        other => other,
    }
}
