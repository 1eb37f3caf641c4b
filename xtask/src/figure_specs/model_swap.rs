//! The figures of the module-3 exercise, training on one thread while serving on another
//! (see the parent module for what a spec holds). Kept in its own file so that each part of
//! the book adds its figures without touching the others'.

use super::*;

/// The figures this part of the book draws: for the 2-core EPYC (`epyc`) and the H100
/// machine's 16-core Xeon host (`h100-host`).
pub(super) fn specs() -> Vec<FigureSpec> {
    let mut specs = Vec::new();
    for machine in ["epyc", "h100-host"] {
        let id = format!("model-swap-accuracy-{machine}");
        let accuracy = FigureSpec::new(&id, &id)
            .subtitle("Each step of the dashed line is a new version reaching the server")
            .panel(
                None,
                vec![
                    labelled(
                        emphasised("answers right, per 100 requests"),
                        "answers right (per 100 requests)",
                    ),
                    labelled(
                        reference("test accuracy of the answering version"),
                        "test accuracy of the version answering",
                    ),
                ],
            )
            .note("One request every 200 µs; one new version per epoch of training.");
        let id = format!("model-swap-latency-{machine}");
        let latency = FigureSpec::new(&id, &id)
            .subtitle("At x %: that share of the requests waited longer than the line's value")
            .microseconds()
            .panel(
                None,
                vec![
                    emphasised("serving while training"),
                    emphasised("serving alone"),
                ],
            )
            .note("Median of the runs; the band spans the fastest and the slowest run.");
        specs.push(accuracy);
        specs.push(latency);
    }
    specs
}
