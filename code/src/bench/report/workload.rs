//! The report's first part: every execution mode on the standard workload.

use crate::bench::report::{
    ReportOptions, ReportRow, compiles_every_run, significant, time_interleaved, with_range,
};
use crate::bench::sweeps::modes::{SEED, time_mode};
use crate::bench::sweeps::{Progress, SweepError, gigaflops_per_second};
use crate::gpu::GpuContext;
use crate::graph::random_mlp;
use crate::runner::ExecutionMode;

use super::Report;

/// The modes the options select that can run here (no GPU modes without a context, no
/// CPU modes with `skip_cpu`).
pub fn modes(options: &ReportOptions, context: Option<&GpuContext>) -> Vec<ExecutionMode> {
    ExecutionMode::ALL
        .into_iter()
        .filter(|mode| context.is_some() || !mode.uses_gpu())
        .filter(|mode| !options.skip_cpu || mode.uses_gpu())
        .filter(|mode| !(options.skip_uncached && compiles_every_run(*mode)))
        .collect()
}

/// Every selected mode on the standard workload, compared with `Immediate` (or, when it
/// was skipped, with `ImmediateCached`), repeat by repeat.
pub fn standard_workload(
    options: &ReportOptions,
    context: Option<&GpuContext>,
    progress: &mut dyn Progress,
    report: &mut Report,
) -> Result<(), SweepError> {
    let (size, depth) = (options.size, options.depth);
    let workload = random_mlp(size, depth, SEED)?;
    let modes = modes(options, context);
    let budget = options.budget();
    let measured = time_interleaved(options, modes.len(), |index| {
        let measurement = time_mode(modes[index], &workload, context, &budget)?;
        progress.advance(&format!("{:?}", modes[index]));
        Ok(measurement)
    })?;
    let reference = [ExecutionMode::Immediate, ExecutionMode::ImmediateCached]
        .into_iter()
        .find_map(|wanted| {
            modes
                .iter()
                .position(|&mode| mode == wanted)
                .map(|index| (wanted, &measured[index]))
        });
    for (mode, timed) in modes.iter().zip(&measured) {
        let seconds = timed.seconds.median();
        report.rows.push(ReportRow {
            part: "standard workload",
            name: format!("{mode:?}"),
            size: format!("{size}, depth {depth}"),
            milliseconds: Some(timed.milliseconds()),
            gigaflops_per_second: Some(
                gigaflops_per_second(size, size, size, seconds) * depth as f64,
            ),
            compared: reference.map_or("n/a".to_string(), |(reference, reference_timed)| {
                format!(
                    "{}× {reference:?}",
                    with_range(&reference_timed.ratio_to(timed))
                )
            }),
            samples: timed.sample_text(),
        });
    }
    report.notes.push(format!(
        "Standard workload: random_mlp({size}, {depth}, seed {SEED}); every run uploads the input \
         and reads the output back; each mode is prepared afresh for every repeat. GFLOP/s \
         counts the linear layers only (2·size³ per layer). \"n× Immediate\": how many times \
         faster than Immediate."
    ));
    Ok(())
}

/// How many times faster `CpuGraph` runs the standard workload than `Cpu`, from the
/// workload rows (when both were measured).
pub fn cpu_ratio(options: &ReportOptions, report: &mut Report) {
    let time_of = |wanted: &str| {
        report
            .rows
            .iter()
            .find(|row| row.part == "standard workload" && row.name == wanted)
            .and_then(|row| row.milliseconds.as_ref())
    };
    if let (Some(cpu), Some(cpu_graph)) = (time_of("Cpu"), time_of("CpuGraph")) {
        let compared = match cpu.paired_with(cpu_graph, |cpu, graph| cpu / graph) {
            Some(ratio) => format!("{}×", with_range(&ratio)),
            None => format!("{}×", significant(cpu.median() / cpu_graph.median())),
        };
        report.rows.push(ReportRow {
            part: "CPU",
            name: "Cpu / CpuGraph".to_string(),
            size: format!("{}, depth {}", options.size, options.depth),
            milliseconds: None,
            gigaflops_per_second: None,
            compared,
            samples: String::new(),
        });
    }
}
