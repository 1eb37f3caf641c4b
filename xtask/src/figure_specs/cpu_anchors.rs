//! The figures of the `galaxy::cpu_anchors` pages (see the parent module for what a spec holds).
//! Kept in its own file so that each part of the book adds its figures without touching
//! the others'.

use super::*;

/// The lines of both CPU anchor figures: the crate's runner against what a reader would use
/// instead, and the time the multiply-adds alone would take at the measured peak. The
/// textbook `Cpu` mode takes seconds per run at size 256, so only the size sweep has it.
fn anchor_lines(with_cpu_mode: bool) -> Vec<LineSpec> {
    let mut lines = vec![
        emphasised("CpuGraph"),
        before("CpuGraph layer by layer (before)", "CpuGraph"),
        emphasised("ONNX Runtime"),
        context("NumPy"),
    ];
    if with_cpu_mode {
        lines.push(context("Cpu"));
    }
    lines.push(labelled(
        reference("FMA peak (every core)"),
        "at the FMA peak",
    ));
    lines
}

/// The figures this part of the book draws.
pub(super) fn specs() -> Vec<FigureSpec> {
    vec![
        FigureSpec::new("cpu-anchors-by-size", "cpu-anchors-by-size")
            .title("The standard workload on the CPU, by size (depth 64)")
            .subtitle(
                "CpuGraph against ONNX Runtime and NumPy; dashed: the time at the all-core FMA peak",
            )
            .panel(None, anchor_lines(true))
            .optional(),
        FigureSpec::new("cpu-anchors-by-depth", "cpu-anchors-by-depth")
            .title("The standard workload on the CPU, by depth (size 256)")
            .subtitle(
                "CpuGraph against ONNX Runtime and NumPy; dashed: the time at the all-core FMA peak",
            )
            .panel(None, anchor_lines(false))
            .optional(),
    ]
}
