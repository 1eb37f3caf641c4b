//! The figures of the hot-loop pages (module 5) (see the parent module for what a spec holds).
//! Kept in its own file so that each part of the book adds its figures without touching
//! the others'.

use super::*;

/// The figures this part of the book draws.
pub(super) fn specs() -> Vec<FigureSpec> {
    vec![per_frame(), per_sample()]
}

/// A panel of two lines: the work in the loop (emphasised) and the loop without it
/// (context), labelled by what each does.
fn pair(in_the_loop: (&str, &str), hoisted: (&str, &str)) -> Vec<LineSpec> {
    vec![
        labelled(emphasised(in_the_loop.0), in_the_loop.1),
        labelled(context(hoisted.0), hoisted.1),
    ]
}

/// Costs paid once per frame: one panel per kind of work, each with the loop that pays it
/// and the loop that does not.
fn per_frame() -> FigureSpec {
    let mut figure = FigureSpec::new("hot-loop-per-frame", "hot-loop-per-frame")
        .subtitle("A cost paid once per frame swamps short frames and vanishes in long ones")
        .panel(
            Some("a scratch buffer"),
            pair(
                ("allocate every frame", "allocate"),
                ("reuse one buffer", "reuse"),
            ),
        )
        .panel(
            Some("asking whether a file exists (statx)"),
            pair(
                ("metadata every frame", "every frame"),
                ("metadata every 100 frames", "every 100"),
            ),
        )
        .panel(
            Some("writing each frame's result (write)"),
            pair(
                ("write every frame", "write per frame"),
                ("one write for all frames", "one write"),
            ),
        )
        .panel(
            Some("reading the clock (vDSO, no system call)"),
            pair(
                ("clock read twice a frame", "Instant::now ×2"),
                ("no clock", "no clock"),
            ),
        )
        .panel(
            Some("logging to /dev/null"),
            vec![
                labelled(
                    emphasised("a line per frame, LineWriter"),
                    "line, LineWriter",
                ),
                labelled(emphasised("a line per frame, BufWriter"), "line, BufWriter"),
                labelled(context("count, one line at the end"), "count, log once"),
            ],
        );
    figure.columns = 2;
    figure
}

/// Costs paid for every sample.
fn per_sample() -> FigureSpec {
    let mut figure = FigureSpec::new("hot-loop-per-sample", "hot-loop-per-sample")
        .subtitle(
            "Checks inside the loop cost a factor of 3; copying the last frame adds a little; a possible alias, nothing",
        )
        .panel(
            Some("checking every sample is finite"),
            pair(
                ("checks inside the loop", "inside"),
                ("validated first", "validated first"),
            ),
        )
        .panel(
            Some("keeping the previous frame"),
            pair(
                ("copy the previous frame", "copy"),
                ("swap the two buffers", "swap"),
            ),
        )
        .panel(
            Some("a sum that may alias"),
            pair(("sum into a Cell", "Cell"), ("sum into &mut f32", "&mut")),
        );
    figure.columns = 3;
    figure
}
