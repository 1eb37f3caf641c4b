//! The figures of the point-cloud renderer page (module 4) (see the parent module for what
//! a spec holds). Kept in its own file so that each part of the book adds its figures
//! without touching the others'.
//!
//! `cargo run --release -p galaxy --example point_cloud -- --machine <name>` writes
//! `point-cloud-steps-<name>.csv`: for every optimisation step (x = 1…5) the GPU time of a
//! whole frame and of its splat pass, at 1 Mi and 4 Mi points: on lavapipe on the 2-core
//! AMD EPYC (`epyc`) and on the NVIDIA H100 (`h100`).

use super::*;

/// The machines whose files the book draws, whether the file must exist, and the two
/// point counts each measured.
const MACHINES: [(&str, bool, [&str; 2]); 2] = [
    ("epyc", true, ["1 Mi points", "4 Mi points"]),
    ("h100", true, ["1 Mi points", "4 Mi points"]),
];

/// The figures this part of the book draws.
pub(super) fn specs() -> Vec<FigureSpec> {
    MACHINES
        .iter()
        .map(|&(machine, required, counts)| {
            let spec = steps(machine, counts);
            if required { spec } else { spec.optional() }
        })
        .collect()
}

/// One panel per point count: the whole frame emphasised, its splat pass in a light tint
/// of the same colour (the rest of the frame is the clear and the resolve).
fn steps(machine: &str, counts: [&str; 2]) -> FigureSpec {
    let id = format!("point-cloud-steps-{machine}");
    let mut spec = FigureSpec::new(&id, &id)
        .title("GPU time per frame of the point-cloud renderer, step by step")
        .subtitle(
            "Steps: 1 one point per invocation, 2 Morton order, 3 early depth reject, \
             4 eight points per invocation, 5 packed 8-byte points. Each step keeps the ones \
             before it; each step's image is checked against the CPU reference first.",
        )
        .note("Median of the repeats, the range shaded; GPU timestamps around each pass.");
    for count in counts {
        let frame = format!("frame ({count})");
        spec = spec.panel(
            Some(count),
            vec![
                labelled(emphasised(&frame), "whole frame"),
                LineSpec {
                    tint_of: Some("whole frame".to_string()),
                    ..labelled(context(&format!("splat pass ({count})")), "splat pass")
                },
            ],
        );
    }
    spec
}
