//! The figures of the real-time loop pages (module 5) (see the parent module for what a spec holds).
//! Kept in its own file so that each part of the book adds its figures without touching
//! the others'.

use super::*;

/// The machines the `realtime_loop` example's figures come from: the file suffix and the
/// name the title uses. The H100's files are added after a run there, so they are optional.
const MACHINES: [(&str, &str); 2] = [
    ("epyc", "2-core AMD EPYC"),
    ("h100", "NVIDIA H100 machine (16 host cores)"),
];

/// The figures this part of the book draws, for each machine: the latency histograms of the
/// two loops that keep a schedule (small multiples), and the drift of the ones that do not.
pub(super) fn specs() -> Vec<FigureSpec> {
    let mut specs = Vec::new();
    for (machine, name) in MACHINES {
        let id = format!("realtime-latency-{machine}");
        let mut histograms = FigureSpec::new(&id, &id)
            .title(&format!("Latency of every frame on the {name}"))
            .subtitle(
                "Share of frames whose result was ready so long after the frame's release; \
                 the last point holds every later frame. Deadline: 16.7 ms (two periods)",
            )
            .panel(
                Some("Step 3: one thread, released by deadline"),
                vec![emphasised("3 single-threaded")],
            )
            .panel(
                Some("Step 4: a two-stage pipeline on two threads"),
                vec![emphasised("4 optimised")],
            )
            .note(
                "One run of the realtime_loop example at 120 Hz; skipped frames have no latency.",
            );
        histograms.columns = 2;
        let drift_id = format!("realtime-latency-{machine}-drift");
        let mut drift = FigureSpec::new(&drift_id, &drift_id)
            .title(&format!(
                "Sleeping a period after the work drifts, on the {name}"
            ))
            .subtitle(
                "Latency of every tenth frame against its number: the sleeping loops fall \
                 further behind with every frame; the loops released by deadline do not",
            )
            .panel(
                None,
                vec![
                    emphasised("1 prototype"),
                    context("2 components"),
                    emphasised("3 single-threaded"),
                    context("4 optimised"),
                ],
            )
            .note("The same run as the histograms.");
        if machine == "h100" {
            histograms = histograms.optional();
            drift = drift.optional();
        }
        specs.push(histograms);
        specs.push(drift);
    }
    specs
}
