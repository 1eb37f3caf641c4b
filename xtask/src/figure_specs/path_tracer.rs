//! The figures of the path-tracer page (module 4) (see the parent module for what a spec
//! holds). Kept in its own file so that each part of the book adds its figures without
//! touching the others'.
//!
//! The example `path_tracer --machine NAME` writes `path-tracer-steps-NAME.csv`: the time
//! of one frame for every step of the optimisation, at two image sizes. `epyc` is the
//! 2-core AMD EPYC whose GPU adapter is lavapipe; `h100` is the NVIDIA H100 (its data come
//! from `code/h100/modules-3-4.sh`). Both are drawn, and a missing CSV is an error.

use super::*;

/// (the machine's name in the file names, the name the title uses).
const MACHINES: [(&str, &str); 2] = [
    ("epyc", "lavapipe on a 2-core AMD EPYC"),
    ("h100", "an NVIDIA H100"),
];

/// The figures this part of the book draws.
pub(super) fn specs() -> Vec<FigureSpec> {
    let mut specs = Vec::new();
    for (machine, name) in MACHINES {
        let id = format!("path-tracer-steps-{machine}");
        let figure = FigureSpec::new(&id, &id)
            .title(&format!(
                "Path tracer: time per frame, step by step, on {name}"
            ))
            .subtitle(
                "Lower is better; each step keeps the ones above it; 4 samples per pixel, \
                 at most 8 bounces",
            )
            .panel(
                None,
                vec![
                    emphasised("naive (rows of 64)"),
                    context("+ Russian roulette"),
                    context("+ 8×8 tiles"),
                    emphasised("+ bounding spheres"),
                ],
            )
            .note(
                "The GPU's own clock (timestamp queries) around each frame's dispatch; median \
                 of the repeats, shaded from the fastest to the slowest. Every step's image was \
                 first checked against the CPU reference.",
            );
        specs.push(figure);
    }
    specs
}
