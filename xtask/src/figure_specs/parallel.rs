//! The figures of the threads-and-shared-state pages (module 2) (see the parent module for what a spec holds).
//! Kept in its own file so that each part of the book adds its figures without touching
//! the others'.
//!
//! Every figure comes once per machine: the example `threads_shared_state --machine NAME`
//! writes `parallel-<figure>-NAME.csv`. `epyc` is the 2-core AMD EPYC the book is built on;
//! `h100-host` is the 16-core host of the H100 machine, optional until its data are brought
//! back. A marker shows where the thread count reaches the core count: beyond it the
//! threads take turns on the cores (oversubscription).

use super::*;

/// (the machine's name in the file names, the start of its hardware line that carries its
/// core count, its cores, whether the file may be missing).
const MACHINES: [(&str, &str, f64, bool); 2] = [
    ("epyc", "x86_64, 2 cores", 2.0, false),
    ("h100-host", "x86_64, 16 cores", 16.0, true),
];

/// The figures this part of the book draws.
pub(super) fn specs() -> Vec<FigureSpec> {
    let mut specs = Vec::new();
    for (machine, hardware, cores, optional) in MACHINES {
        let marker = [(cores, "cores")];
        let mut figures = vec![
            FigureSpec::new(
                &format!("parallel-shared-counter-{machine}"),
                &format!("parallel-shared-counter-{machine}"),
            )
            .subtitle("Every value counted is one update of the count; higher is better")
            .panel(
                None,
                vec![
                    emphasised("partial counts"),
                    emphasised("atomic"),
                    emphasised("mutex"),
                ],
            )
            .markers(hardware, &marker),
            FigureSpec::new(
                &format!("parallel-histogram-{machine}"),
                &format!("parallel-histogram-{machine}"),
            )
            .subtitle("2 million values in 256 bins; higher is better")
            .panel(
                None,
                vec![
                    emphasised("partial histograms"),
                    emphasised("atomic"),
                    emphasised("mutex"),
                ],
            )
            .markers(hardware, &marker),
            FigureSpec::new(
                &format!("parallel-false-sharing-{machine}"),
                &format!("parallel-false-sharing-{machine}"),
            )
            .subtitle("No counter is shared; side by side, they share cache lines")
            .panel(None, vec![emphasised("padded"), emphasised("side by side")])
            .markers(hardware, &marker),
            FigureSpec::new(
                &format!("parallel-channels-{machine}"),
                &format!("parallel-channels-{machine}"),
            )
            .subtitle("Three threads joined by two channels; bounded channels hold 64 messages")
            .panel(
                None,
                vec![
                    emphasised("crossbeam bounded 64"),
                    emphasised("std mpsc unbounded"),
                    context("crossbeam unbounded"),
                    context("std mpsc bounded 64"),
                ],
            ),
        ];
        for figure in &mut figures {
            figure.notes.push(
                "The median of five runs; the band spans the fastest and the slowest.".to_string(),
            );
        }
        if machine == "epyc" {
            for figure in &mut figures {
                figure.notes.push(
                    "Measured while other programs kept both cores busy (load average about \
                     6.7), so a thread often waited for a core."
                        .to_string(),
                );
            }
        }
        if optional {
            figures = figures.into_iter().map(FigureSpec::optional).collect();
        }
        specs.extend(figures);
    }
    specs
}
