//! The figures of the Sparsity page (see the parent module for what a spec holds). Kept in
//! its own file so that each part of the book adds its figures without touching the others'.
//!
//! `inference-sparsity-<machine>` comes from the example `sparse_threshold`: one linear
//! layer run by the `CpuGraph` mode, dense and after the `sparsify` pass, by the density of
//! its weights, one panel per layer size. The vertical line is the pass's threshold,
//! `compiler::SPARSE_DENSITY_THRESHOLD`. The accuracy against the fraction pruned is
//! `inference-pruning-epyc`, specified with the quantisation figures.
//!
//! `inference-gpu-cheaper-<machine>` comes from the example `gpu_cheaper_layers`: one
//! network stored three ways, in the GPU and the CPU graph modes.

use super::*;

/// The `sparsify` pass's threshold, in percent of weights kept (keep it equal to
/// `SPARSE_DENSITY_THRESHOLD` in `code/src/compiler/sparsify.rs`).
const THRESHOLD_PERCENT: f64 = 3.0;

/// The threshold was measured on the EPYC; other machines' figures say so.
fn threshold_label(machine: &str) -> &'static str {
    if machine == "epyc" {
        "threshold 3 %"
    } else {
        "threshold 3 % (EPYC)"
    }
}

/// What the reader needs to know about the two kernels on this machine.
fn figure_note(machine: &str) -> &'static str {
    if machine == "epyc" {
        "Both layers run in the CpuGraph mode on both cores; the dense one is the packed, register-blocked kernel."
    } else {
        "Both layers run in the CpuGraph mode on the CPU (no GPU); the sparse kernel splits the 64 rows into four blocks of 16, so it keeps at most 4 of the 16 cores busy."
    }
}

/// The figures this part of the book draws.
pub(super) fn specs() -> Vec<FigureSpec> {
    let mut specs = Vec::new();
    for machine in ["epyc", "h100"] {
        let mut speed = FigureSpec::new(
            &format!("inference-sparsity-{machine}"),
            &format!("inference-sparsity-{machine}"),
        )
        .subtitle("Lower is faster. A batch of 64 rows; the dense layer does the same work at every density")
        .panel(
            Some("256 × 256 weights"),
            vec![
                labelled(emphasised("CSR, 256 × 256"), "sparse (CSR)"),
                labelled(emphasised("dense, 256 × 256"), "dense"),
            ],
        )
        .panel(
            Some("1024 × 1024 weights"),
            vec![
                labelled(emphasised("CSR, 1024 × 1024"), "sparse (CSR)"),
                labelled(emphasised("dense, 1024 × 1024"), "dense"),
            ],
        )
        .markers("", &[(THRESHOLD_PERCENT, threshold_label(machine))])
        .note(figure_note(machine));
        speed.columns = 2;
        specs.push(speed);
        specs.push(cheaper_layers(machine));
    }
    specs
}

/// `inference-gpu-cheaper-<machine>`, from the example `gpu_cheaper_layers`: one network
/// with 5 % of its weights kept, stored as `f32`, int8 or CSR, in the compiled GPU graph
/// mode and in the CPU graph mode. The H100 file may not exist yet.
fn cheaper_layers(machine: &str) -> FigureSpec {
    let id = format!("inference-gpu-cheaper-{machine}");
    let panel = |mode: &str| {
        vec![
            labelled(emphasised(&format!("{mode} sparse")), "sparse (CSR)"),
            labelled(emphasised(&format!("{mode} fp32")), "f32"),
            labelled(context(&format!("{mode} int8")), "int8"),
        ]
    };
    let mut figure = FigureSpec::new(&id, &id)
        .subtitle("Lower is faster. From left: the digits network on 1 and 360 images, then 256 × 256 and 1024 × 1024 layers")
        .panel(Some("GPU: the GraphCompiled mode"), panel("GraphCompiled"))
        .panel(Some("CPU: the CpuGraph mode"), panel("CpuGraph"))
        .note("Every weight matrix keeps 5 % of its values; f32 multiplies the zeros, int8 quantises them, sparse skips them. On the GPU the f32 digits network on one image runs as one fused kernel, the others layer by layer.");
    figure.columns = 2;
    if machine != "epyc" {
        figure = figure.optional();
    }
    figure
}
