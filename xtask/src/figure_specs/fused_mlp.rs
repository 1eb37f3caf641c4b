//! The figures of the `galaxy::fused_mlp` pages (see the parent module for what a spec holds).
//! Kept in its own file so that each part of the book adds its figures without touching
//! the others'.

use super::*;

/// The modes the time-breakdown figure gives a panel each: one per rung of the ladder.
const BREAKDOWN_MODES: [&str; 5] = [
    "ImmediateCached",
    "GraphCached",
    "GraphCachedFused",
    "OpCode",
    "GraphCompiled",
];

/// The figures this part of the book draws.
pub(super) fn specs() -> Vec<FigureSpec> {
    let mut specs = Vec::new();
    for hardware in ["software", "gpu"] {
        let id = format!("time-breakdown-{hardware}");
        let mut figure = FigureSpec::new(&id, &id)
            .title("Where one run's time goes, by mode (standard workload, depth 64)")
            .subtitle(
                "Grey: the whole run. Host phases by the host's clock; GPU kernels by the \
                 GPU's timestamps, which run while the host waits.",
            );
        figure = figure.note(
            "Timestamps after every dispatch slow runs of many small kernels; the report \
             gives each run's time without them too.",
        );
        figure.columns = 2;
        for mode in BREAKDOWN_MODES {
            let part = |name: &str| format!("{mode}: {name}");
            figure = figure.panel(
                Some(mode),
                vec![
                    labelled(context(&part("wall")), "whole run"),
                    labelled(emphasised(&part("encoding")), "encoding"),
                    labelled(emphasised(&part("submitting")), "submitting"),
                    labelled(emphasised(&part("waiting")), "waiting"),
                    labelled(emphasised(&part("copying out")), "copying out"),
                    labelled(emphasised(&part("GPU kernels")), "GPU kernels"),
                ],
            );
        }
        // Each file comes from `bench_report --parts breakdown --breakdown-csv` on its
        // machine: the H100's from a device run (code/h100/run.sh, part breakdown),
        // lavapipe's from a run on a quiet machine (a loaded one distorts every phase).
        figure = figure.optional();
        specs.push(figure);
    }
    // The fully fused kernel (GraphCompiled) against PyTorch's CUDA graph, measured in one
    // lease; the per-layer graph mode as the "before".
    for (sweep, by) in [
        ("size", "by size (depth 64)"),
        ("depth", "by depth (size 256)"),
    ] {
        let id = format!("fused-mlp-by-{sweep}-gpu");
        specs.push(
            FigureSpec::new(&id, &id)
                .title(&format!("The fully fused MLP kernel against PyTorch, {by}"))
                .subtitle("Dashed: PyTorch on the same GPU, eager and replaying a CUDA graph.")
                .panel(
                    None,
                    vec![
                        labelled(
                            before("GraphCachedFused", "GraphCompiled, fully fused"),
                            "GraphCachedFused, one kernel per layer",
                        ),
                        labelled(emphasised("GraphCompiled"), "GraphCompiled, fully fused"),
                        labelled(reference("PyTorch CUDA graph"), "PyTorch CUDA graph"),
                        labelled(reference("PyTorch eager"), "PyTorch eager"),
                    ],
                ),
        );
    }
    specs
}
