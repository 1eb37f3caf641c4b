//! The plan the drawing's unit tests draw: `panels` panels of three lines each (one
//! emphasised, one context line 2 % above it, one reference), with spreads, on
//! logarithmic axes in bytes and milliseconds.

use plotters::style::RGBColor;

use crate::figure_axes::TickFormat;
use crate::figure_plan::{Line, Panel, Plan, PlannedAxis, PlotPoint};
use crate::figure_specs::Role;

/// A plan of `panels` panels.
pub(super) fn plan(panels: usize) -> Plan {
    let line = |label: &str, role: Role, offset: f64| Line {
        label: label.to_string(),
        role,
        colour: RGBColor(0x1f, 0x77, 0xb4),
        text: RGBColor(0x1f, 0x77, 0xb4),
        points: [4.0, 16.0, 64.0]
            .iter()
            .map(|x| PlotPoint {
                x: *x,
                y: x * offset,
                spread: Some((x * offset * 0.9, x * offset * 1.1)),
            })
            .collect(),
    };
    Plan {
        id: "test".to_string(),
        title: "A test & its title".to_string(),
        subtitle: Some("Grey: before.".to_string()),
        x: PlannedAxis {
            label: "array size".to_string(),
            logarithmic: true,
            format: TickFormat::Bytes,
        },
        y: PlannedAxis {
            label: "time (ms)".to_string(),
            logarithmic: true,
            format: TickFormat::Number,
        },
        columns: 1,
        panels: (0..panels)
            .map(|index| Panel {
                title: Some(format!("Panel {index}")),
                lines: vec![
                    line("GraphCompiled", Role::Emphasised, 1.0),
                    line("Graph", Role::Context, 1.02),
                    line("PyTorch", Role::Reference, 3.0),
                ],
            })
            .collect(),
        markers: Vec::new(),
        caption: vec!["Measured on a test machine.".to_string()],
    }
}
