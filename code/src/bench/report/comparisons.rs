//! The report's comparisons: small groups of contenders measured side by side, each group
//! answering one question the chapters ask.
//!
//! | group | contenders | question |
//! |---|---|---|
//! | round trips and graph loop | `ImmediateCached`, `GraphCached`, `GraphLoopCached`, `GraphCachedFused`, `GraphLoopCachedFused` | what a round trip costs per operator; whether submitting many runs at once pays, fused and unfused |
//! | compute passes | the fused graph, the op-code runner and the compiled graph, each with one pass per run and one per dispatch | what beginning and ending a pass per kernel costs; whether it explains the op-code runner's gap to the hand-written kernels |
//! | buffer reuse | `GraphCompiled` with shared buffers and with one buffer per tensor | what keeping the activations in three buffers is worth |
//! | ReLU in place | immediate-mode ReLU into a new buffer and in place, cached pipelines | whether in place is faster, or only smaller |
//! | CPU against GPU | `CpuGraph` (the fast CPU kernel on every core) and `GraphCompiled` | where the CPU stops winning |

use crate::bench::repeats::Repeats;
use crate::bench::report::contenders::{Contender, PassesOf};
use crate::bench::report::{
    Report, ReportOptions, ReportRow, Timed, significant, time_interleaved, with_range,
};
use crate::bench::sweeps::modes::SEED;
use crate::bench::sweeps::{Progress, SweepError, measure};
use crate::compiler::{fuse, reuse_buffers, rewrite_in_place};
use crate::cpu;
use crate::gpu::{GpuContext, ShaderCompilation};
use crate::graph::{Operator, Workload, random_mlp};
use crate::immediate::ImmediateGpu;
use crate::runner::gpu::ComputePasses;
use crate::runner::{BufferPlan, ExecutionMode};
use crate::tensor::Tensor2d;

const ROUND_TRIPS: [Contender; 5] = [
    Contender::Mode(ExecutionMode::ImmediateCached),
    Contender::Mode(ExecutionMode::GraphCached),
    Contender::Mode(ExecutionMode::GraphLoopCached),
    Contender::Mode(ExecutionMode::GraphCachedFused),
    Contender::Mode(ExecutionMode::GraphLoopCachedFused),
];

/// Each runner with one pass per run, then with one per dispatch.
const PASSES: [(PassesOf, ComputePasses); 6] = [
    (PassesOf::FusedGraph, ComputePasses::OnePerRun),
    (PassesOf::FusedGraph, ComputePasses::OnePerDispatch),
    (PassesOf::OpCode, ComputePasses::OnePerRun),
    (PassesOf::OpCode, ComputePasses::OnePerDispatch),
    (PassesOf::Compiled, ComputePasses::OnePerRun),
    (PassesOf::Compiled, ComputePasses::OnePerDispatch),
];

const BUFFER_REUSE: [Contender; 2] = [
    Contender::Mode(ExecutionMode::GraphCompiled),
    Contender::CompiledWithoutReuse,
];

const CROSSOVER: [Contender; 2] = [
    Contender::Mode(ExecutionMode::CpuGraph),
    Contender::Mode(ExecutionMode::GraphCompiled),
];

/// How many measurements one repeat of the comparisons takes.
pub fn planned(options: &ReportOptions) -> usize {
    let sizes = &options.comparison_sizes;
    sizes.pairs.len() * (ROUND_TRIPS.len() + PASSES.len())
        + sizes.buffer_reuse.len() * BUFFER_REUSE.len()
        + 2
        + options.crossover_sizes().len() * CROSSOVER.len()
}

/// Every comparison, in the order of the table in the module documentation.
pub fn all(
    options: &ReportOptions,
    context: &GpuContext,
    progress: &mut dyn Progress,
    report: &mut Report,
) -> Result<(), SweepError> {
    let depth = options.depth;
    let mut comparisons = Comparisons {
        options,
        context,
        progress,
        report,
    };
    for &size in &options.comparison_sizes.pairs {
        let workload = random_mlp(size, depth, SEED)?;
        comparisons.round_trips_and_loops(&workload)?;
        comparisons.compute_passes(&workload)?;
    }
    for &size in &options.comparison_sizes.buffer_reuse {
        let workload = random_mlp(size, depth, SEED)?;
        comparisons.buffer_reuse(&workload)?;
    }
    comparisons.relu_in_place()?;
    for &size in options.crossover_sizes() {
        let workload = random_mlp(size, depth, SEED)?;
        comparisons.crossover(&workload)?;
    }
    report.notes.push(format!(
        "Comparisons: each group's contenders are prepared afresh and measured in turn on \
         random_mlp(size, {depth}, seed {SEED}), upload and readback included in every run. \
         \"time ÷ X\" is the contender's time divided by X's, repeat by repeat (below 1: \
         faster than X)."
    ));
    Ok(())
}

/// What every comparison needs: the options, the GPU, the progress bar, and the report
/// its rows go into.
struct Comparisons<'a> {
    options: &'a ReportOptions,
    context: &'a GpuContext,
    progress: &'a mut dyn Progress,
    report: &'a mut Report,
}

/// `random_mlp(size, depth)` as the size column says it.
fn workload_size(workload: &Workload) -> String {
    let size = workload.input.rows();
    let depth = workload
        .graph
        .graph()
        .nodes
        .iter()
        .filter(|node| matches!(node.operator, Operator::Linear))
        .count();
    format!("{size}, depth {depth}")
}

/// `time ÷ name: 0.31 (0.29–0.33)`.
fn time_over(timed: &Timed, reference: &Timed, name: &str) -> String {
    format!("time ÷ {name}: {}", with_range(&timed.ratio_to(reference)))
}

impl Comparisons<'_> {
    /// Times `contenders` on `workload`, taking turns; returns the workload's size as the
    /// size column writes it, and the times in the order of `contenders`.
    fn time(
        &mut self,
        workload: &Workload,
        contenders: &[Contender],
    ) -> Result<(String, Vec<Timed>), SweepError> {
        let budget = self.options.budget();
        let timed = time_interleaved(self.options, contenders.len(), |index| {
            let measurement = contenders[index].time(workload, self.context, &budget)?;
            self.progress.advance(&contenders[index].name());
            Ok(measurement)
        })?;
        Ok((workload_size(workload), timed))
    }

    /// Adds a row with the time of one contender.
    fn push(
        &mut self,
        part: &'static str,
        name: String,
        size: &str,
        timed: &Timed,
        compared: String,
    ) {
        self.report.rows.push(ReportRow {
            part,
            name,
            size: size.to_string(),
            milliseconds: Some(timed.milliseconds()),
            gigaflops_per_second: None,
            compared,
            samples: timed.sample_text(),
        });
    }

    // ANCHOR: round_trips_and_loops
    /// `ImmediateCached` against `GraphCached`: the difference per operator is the cost of
    /// a round trip. `GraphLoopCached…` against `GraphCached…`: what one submission for
    /// many runs saves, without and with fusion.
    fn round_trips_and_loops(&mut self, workload: &Workload) -> Result<(), SweepError> {
        let (size, timed) = self.time(workload, &ROUND_TRIPS)?;
        // In the order of ROUND_TRIPS.
        let (immediate, graph, graph_loop, fused, fused_loop) =
            (&timed[0], &timed[1], &timed[2], &timed[3], &timed[4]);
        let operators = workload
            .graph
            .graph()
            .nodes
            .iter()
            .filter(|node| {
                !(matches!(node.operator, Operator::Input { .. } | Operator::Output)
                    || node.operator.is_constant())
            })
            .count();
        let part = "round trips";
        self.push(
            part,
            "ImmediateCached".to_string(),
            &size,
            immediate,
            String::new(),
        );
        let compared = time_over(graph, immediate, "ImmediateCached");
        self.push(part, "GraphCached".to_string(), &size, graph, compared);
        let per_operator = immediate
            .milliseconds()
            .paired_with(&graph.milliseconds(), |immediate, graph| {
                (immediate - graph) / operators as f64
            })
            .expect("measured side by side");
        self.report.rows.push(ReportRow {
            part,
            name: format!("(ImmediateCached − GraphCached) / {operators} operators"),
            size: size.clone(),
            milliseconds: Some(per_operator),
            gigaflops_per_second: None,
            compared: "a round trip per operator".to_string(),
            samples: graph.sample_text(),
        });
        for (name, timed, reference, reference_name) in [
            ("GraphLoopCached", graph_loop, graph, "GraphCached"),
            ("GraphCachedFused", fused, graph, "GraphCached"),
            (
                "GraphLoopCachedFused",
                fused_loop,
                fused,
                "GraphCachedFused",
            ),
        ] {
            let compared = time_over(timed, reference, reference_name);
            self.push("graph loop", name.to_string(), &size, timed, compared);
        }
        Ok(())
    }
    // ANCHOR_END: round_trips_and_loops

    /// Each runner with one compute pass per run and one per dispatch; the op-code runner
    /// also against the fused graph's hand-written kernels, pass for pass.
    fn compute_passes(&mut self, workload: &Workload) -> Result<(), SweepError> {
        let contenders = PASSES.map(|(runner, passes)| Contender::Passes(runner, passes));
        let (size, timed) = self.time(workload, &contenders)?;
        let fused_graph_one_pass = &timed[0];
        for (index, (runner, passes)) in PASSES.into_iter().enumerate() {
            let compared = match (runner, passes) {
                (PassesOf::FusedGraph, ComputePasses::OnePerRun) => String::new(),
                (PassesOf::OpCode, _) => time_over(
                    &timed[index],
                    fused_graph_one_pass,
                    "GraphCachedFused, one pass per run",
                ),
                (_, ComputePasses::OnePerDispatch) => {
                    time_over(&timed[index], &timed[index - 1], "one pass per run")
                }
                (PassesOf::Compiled, ComputePasses::OnePerRun) => time_over(
                    &timed[index],
                    fused_graph_one_pass,
                    "GraphCachedFused, one pass per run",
                ),
            };
            let name = contenders[index].name();
            self.push("compute passes", name, &size, &timed[index], compared);
        }
        Ok(())
    }

    /// `GraphCompiled` with its buffers shared by liveness, and with one per tensor.
    fn buffer_reuse(&mut self, workload: &Workload) -> Result<(), SweepError> {
        let graph = rewrite_in_place(&fuse(&workload.graph)?)?;
        let plans = [reuse_buffers(&graph).plan, BufferPlan::new(&graph)];
        let (size, timed) = self.time(workload, &BUFFER_REUSE)?;
        for (index, (contender, plan)) in BUFFER_REUSE.iter().zip(&plans).enumerate() {
            let megabytes = plan.bytes() as f64 / 1e6;
            let buffers = format!(
                "{size}: {} buffers, {} MB",
                plan.buffer_shapes.len(),
                significant(megabytes)
            );
            let compared = if index == 0 {
                String::new()
            } else {
                time_over(&timed[index], &timed[0], "with reuse")
            };
            self.push(
                "buffer reuse",
                contender.name(),
                &buffers,
                &timed[index],
                compared,
            );
        }
        Ok(())
    }

    // ANCHOR: relu_in_place_comparison
    /// Immediate-mode ReLU (cached pipeline) into a new buffer and in place, on a square
    /// tensor. The in-place call runs on the same tensor every time: after the first run
    /// it holds no negative numbers, which changes nothing for a kernel that computes
    /// `max(x, 0)` for every element either way.
    fn relu_in_place(&mut self) -> Result<(), SweepError> {
        let edge = self.options.comparison_sizes.relu;
        let input = Tensor2d::random(edge, edge, -1.0..=1.0, SEED);
        let gpu = ImmediateGpu::new(self.context, ShaderCompilation::Cached);
        let what = |name: &str| format!("{name} of a {edge}×{edge} tensor");
        let gpu_error = |name: &str| {
            let what = what(name);
            move |source| SweepError::Gpu {
                what: what.clone(),
                source: Box::new(source),
            }
        };
        let expected = cpu::relu(&input);
        let mut in_place = input.clone();
        gpu.relu_in_place(&mut in_place)
            .map_err(gpu_error("relu_in_place"))?;
        let out_of_place = gpu.relu(&input).map_err(gpu_error("relu"))?;
        for (name, result) in [("relu", &out_of_place), ("relu_in_place", &in_place)] {
            if result != &expected {
                return Err(SweepError::WrongResult {
                    what: what(name),
                    details: "differs from the CPU's ReLU".to_string(),
                });
            }
        }
        let budget = self.options.budget();
        let names = ["relu", "relu_in_place"];
        let timed = time_interleaved(self.options, names.len(), |index| {
            let measurement = measure(&budget, |runs| {
                for _ in 0..runs {
                    if index == 0 {
                        std::hint::black_box(gpu.relu(&input).map_err(gpu_error("relu"))?);
                    } else {
                        gpu.relu_in_place(&mut in_place)
                            .map_err(gpu_error("relu_in_place"))?;
                    }
                }
                Ok::<(), SweepError>(())
            })?;
            self.progress.advance(names[index]);
            Ok(measurement)
        })?;
        let size = format!("{edge}×{edge}");
        let part = "ReLU in place";
        self.push(
            part,
            "ImmediateCached relu".to_string(),
            &size,
            &timed[0],
            String::new(),
        );
        let compared = time_over(&timed[1], &timed[0], "relu");
        self.push(
            part,
            "ImmediateCached relu_in_place".to_string(),
            &size,
            &timed[1],
            compared,
        );
        Ok(())
    }
    // ANCHOR_END: relu_in_place_comparison

    /// `CpuGraph` with the fast CPU kernel against the fastest GPU mode.
    fn crossover(&mut self, workload: &Workload) -> Result<(), SweepError> {
        let (size, timed) = self.time(workload, &CROSSOVER)?;
        let ratio: Repeats = timed[0].ratio_to(&timed[1]);
        let verdict = if ratio.median() < 1.0 {
            "the CPU is faster"
        } else {
            "the GPU is faster"
        };
        let compared = format!(
            "{} ({verdict})",
            time_over(&timed[0], &timed[1], "GraphCompiled")
        );
        let part = "CPU against GPU";
        self.push(part, "CpuGraph".to_string(), &size, &timed[0], compared);
        self.push(
            part,
            "GraphCompiled".to_string(),
            &size,
            &timed[1],
            String::new(),
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::report::{ComparisonSizes, ReportPart, run_report};
    use crate::bench::sweeps::Silent;

    #[test]
    fn every_comparison_gives_positive_times_and_names_its_reference() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let options = ReportOptions {
            depth: 2,
            samples: 1,
            minimum_sample_seconds: 0.0,
            repeats: 2,
            parts: vec![ReportPart::Comparisons],
            comparison_sizes: ComparisonSizes {
                pairs: vec![8],
                buffer_reuse: vec![8],
                relu: 16,
                crossover: vec![4, 8],
            },
            command: "cargo test".to_string(),
            ..ReportOptions::default()
        };
        let report = run_report(&options, Some(context), &mut Silent).unwrap();
        let rows_of = |part: &str| report.rows.iter().filter(|row| row.part == part).count();
        assert_eq!(rows_of("round trips"), 3);
        assert_eq!(rows_of("graph loop"), 3);
        assert_eq!(rows_of("compute passes"), PASSES.len());
        assert_eq!(rows_of("buffer reuse"), 2);
        assert_eq!(rows_of("ReLU in place"), 2);
        assert_eq!(rows_of("CPU against GPU"), 4);
        for row in &report.rows {
            let times = row.milliseconds.as_ref().expect("every row has a time");
            assert_eq!(times.count(), 2, "{row:?}");
            // The per-operator difference of two noisy times may come out negative.
            if !row.name.contains('−') {
                assert!(times.minimum() > 0.0, "{row:?}");
            }
            assert!(times.values().iter().all(|t| t.is_finite()), "{row:?}");
        }
        let no_reuse = report
            .rows
            .iter()
            .find(|row| row.name.contains("no reuse"))
            .unwrap();
        assert!(
            no_reuse.compared.starts_with("time ÷ with reuse: "),
            "{no_reuse:?}"
        );
        let markdown = report.to_markdown();
        assert!(markdown.contains("| compute passes | OpCode, one compute pass per run |"));
    }
}
