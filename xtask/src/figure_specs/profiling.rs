//! The figures of profiling (see the parent module for what a spec holds). Kept in its own
//! file so that each part of the book adds its figures without touching the others'.

use super::*;

/// The figures this part of the book draws.
pub(super) fn specs() -> Vec<FigureSpec> {
    vec![
        FigureSpec::new(
            "profiling-browser-level-filter",
            "profiling-browser-level-filter",
        )
        .subtitle(
            "The filter's own handler is a sliver; the browser's paint, style and layout are \
             the largest part of a switch, and a 4x slower CPU makes it a long task",
        )
        .panel(
            None,
            vec![
                emphasised("whole switch (to the second frame)"),
                emphasised("paint"),
                context("style"),
                context("layout"),
                emphasised("event handler (script)"),
                reference("long task (50 ms)"),
            ],
        )
        .note(
            "Medians of 20 switches; the bands run from the fastest to the slowest. Other \
             programs were building on the same machine.",
        ),
    ]
}
