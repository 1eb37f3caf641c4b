//! From a figure's spec and its data to what will be drawn: the lines of each panel with
//! their points, roles and colours, the axes with their units, and the caption.
//!
//! Everything that can be wrong with the data is found here, before any drawing: a series
//! the spec names but the file lacks, a zero on a logarithmic axis, a panel of more than
//! six lines. Every error names the CSV file.
//!
//! `series.rs` reads each line's points from the data and checks them; `line_colours.rs`
//! gives each line its colour by role; this file puts the plan together: the units of
//! the axes, the markers and the caption.

mod line_colours;
mod series;
#[cfg(test)]
mod test_data;

use std::path::Path;

use plotters::style::RGBColor;
use thiserror::Error;

use crate::figure::{Figure, FigureError};
use crate::figure_axes::{TickFormat, tick_format, y_unit_change};
use crate::figure_specs::{FigureSpec, MAX_SERIES_PER_PANEL, Marker, Role};
use crate::figure_yardstick::YardstickError;

use line_colours::colour_lines;
use series::{check_values, planned_panels};

/// One point of a line: the median, and the spread of repeated runs where measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlotPoint {
    pub x: f64,
    pub y: f64,
    pub spread: Option<(f64, f64)>,
}

/// One line as it will be drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub label: String,
    pub role: Role,
    /// The colour of the line and its point marks.
    pub colour: RGBColor,
    /// The colour of its label: readable on white.
    pub text: RGBColor,
    /// Sorted by x.
    pub points: Vec<PlotPoint>,
}

/// One panel: small multiples share both axes.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    pub title: Option<String>,
    pub lines: Vec<Line>,
}

/// An axis as it will be drawn: its title (with the unit) and the form of its ticks.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedAxis {
    pub label: String,
    pub logarithmic: bool,
    pub format: TickFormat,
}

/// Everything the drawing needs, nothing left to decide but the pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub id: String,
    pub title: String,
    pub subtitle: Option<String>,
    pub x: PlannedAxis,
    pub y: PlannedAxis,
    pub columns: usize,
    pub panels: Vec<Panel>,
    pub markers: Vec<Marker>,
    /// The caption's sentences: the hardware first, then the spec's notes.
    pub caption: Vec<String>,
}

/// Why a figure cannot be planned. Every variant names the CSV file.
#[derive(Debug, Error)]
pub enum PlanError {
    #[error(transparent)]
    Figure(#[from] FigureError),
    #[error(transparent)]
    Yardstick(#[from] YardstickError),
    #[error(
        "{path}: figure `{id}` shows the series `{series}`, which the file does not have (it has: {available})"
    )]
    MissingSeries {
        path: String,
        id: String,
        series: String,
        available: String,
    },
    #[error("{path}: figure `{id}` wants the best series named `{prefix}…`, and the file has none")]
    NoSeriesWithPrefix {
        path: String,
        id: String,
        prefix: String,
    },
    #[error(
        "{path}: figure `{id}` would draw {count} series in one panel, more than {MAX_SERIES_PER_PANEL}; \
         choose the series to show in xtask/src/figure_specs.rs"
    )]
    TooManySeries {
        path: String,
        id: String,
        count: usize,
    },
    #[error(
        "{path}: figure `{id}` pairs `{series}` with `{pair}`, which is not an emphasised line of its panel"
    )]
    NoPair {
        path: String,
        id: String,
        series: String,
        pair: String,
    },
    #[error("{path}: figure `{id}` has no points to draw")]
    Empty { path: String, id: String },
    #[error(
        "{path}: the {axis} axis is logarithmic, but series `{series}` has the value {value} \
         there (a logarithmic axis holds only positive values)"
    )]
    NotPositive {
        path: String,
        axis: &'static str,
        series: String,
        value: f64,
    },
    #[error("{path}: series `{series}` has the value {value} on the {axis} axis")]
    NotFinite {
        path: String,
        axis: &'static str,
        series: String,
        value: f64,
    },
}

/// A line while it is planned: its name (the label to be), role and points.
struct PlannedLine {
    name: String,
    role: Role,
    tint_of: Option<String>,
    points: Vec<PlotPoint>,
}

/// A panel while it is planned: its title and its lines.
type PlannedPanel = (Option<String>, Vec<PlannedLine>);

/// Plans `spec` from `data`, read from `path`; `data_directory` holds the files that
/// references (the PyTorch yardstick) name.
pub fn plan(
    spec: &FigureSpec,
    figure: &Figure,
    path: &str,
    data_directory: &Path,
) -> Result<Plan, PlanError> {
    let mut panels = planned_panels(spec, figure, path, data_directory)?;
    for (_, lines) in &panels {
        if lines.len() > MAX_SERIES_PER_PANEL {
            return Err(PlanError::TooManySeries {
                path: path.to_string(),
                id: spec.id.clone(),
                count: lines.len(),
            });
        }
    }
    check_values(&panels, figure.x.logarithmic, figure.y.logarithmic, path)?;
    if panels
        .iter()
        .all(|(_, lines)| lines.iter().all(|line| line.points.is_empty()))
    {
        return Err(PlanError::Empty {
            path: path.to_string(),
            id: spec.id.clone(),
        });
    }

    // The y unit: µs for small times, TFLOP/s for large throughputs.
    let highest = panels
        .iter()
        .flat_map(|(_, lines)| lines.iter())
        .flat_map(|line| line.points.iter())
        .map(|p| p.spread.map_or(p.y, |(_, high)| high.max(p.y)))
        .fold(f64::NEG_INFINITY, f64::max);
    let mut y_label = figure.y.label.clone();
    if let Some((label, factor)) = y_unit_change(&y_label, highest, spec.microseconds) {
        y_label = label;
        for (_, lines) in &mut panels {
            for line in lines {
                for point in &mut line.points {
                    point.y *= factor;
                    point.spread = point
                        .spread
                        .map(|(low, high)| (low * factor, high * factor));
                }
            }
        }
    }
    let x_values: Vec<f64> = panels
        .iter()
        .flat_map(|(_, lines)| lines.iter())
        .flat_map(|line| line.points.iter().map(|p| p.x))
        .collect();
    let (x_format, x_label) = tick_format(&figure.x.label, &x_values);

    let coloured_panels = colour_lines(&panels, path, &spec.id)?;

    let markers = if !spec.markers.is_empty() && figure.hardware.contains(&spec.markers_hardware) {
        spec.markers.clone()
    } else {
        Vec::new()
    };
    let mut caption = vec![format!(
        "Measured on {}.",
        figure.hardware.trim_end_matches('.')
    )];
    caption.extend(spec.notes.iter().cloned());
    Ok(Plan {
        id: spec.id.clone(),
        title: spec.title.clone().unwrap_or_else(|| figure.title.clone()),
        subtitle: spec.subtitle.clone(),
        x: PlannedAxis {
            label: x_label,
            logarithmic: figure.x.logarithmic,
            format: x_format,
        },
        y: PlannedAxis {
            label: y_label,
            logarithmic: figure.y.logarithmic,
            format: TickFormat::Number,
        },
        columns: spec.columns.max(1),
        panels: coloured_panels,
        markers,
        caption,
    })
}

#[cfg(test)]
mod tests {
    use super::test_data::{data, plan_of};
    use super::*;

    #[test]
    fn every_series_is_emphasised_when_the_spec_names_none() {
        let data = data("a,1,2\nb,1,3\n");
        let plan = plan_of(&FigureSpec::every_series("kernels"), &data).unwrap();
        assert_eq!(plan.panels.len(), 1);
        let labels: Vec<&str> = plan.panels[0]
            .lines
            .iter()
            .map(|l| l.label.as_str())
            .collect();
        assert_eq!(labels, ["a", "b"]);
        assert!(
            plan.panels[0]
                .lines
                .iter()
                .all(|l| l.role == Role::Emphasised)
        );
        assert_eq!(plan.caption, ["Measured on CPU Test; GPU Test."]);
        assert_eq!(plan.title, "Kernels");
    }

    #[test]
    fn seven_series_without_a_spec_are_refused() {
        let rows: String = (0..7).map(|i| format!("s{i},1,2\n")).collect();
        let error = plan_of(&FigureSpec::every_series("kernels"), &data(&rows))
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("figures/data/kernels.csv:"), "{error}");
        assert!(
            error.contains("7 series") && error.contains("figure_specs.rs"),
            "{error}"
        );
    }

    #[test]
    fn markers_apply_only_to_their_machine() {
        let mut spec = FigureSpec::every_series("kernels");
        spec.markers = vec![Marker {
            x: 2.0,
            label: "L1".to_string(),
        }];
        spec.markers_hardware = "CPU Test".to_string();
        assert_eq!(plan_of(&spec, &data("a,1,2\n")).unwrap().markers.len(), 1);
        spec.markers_hardware = "CPU Other".to_string();
        assert!(plan_of(&spec, &data("a,1,2\n")).unwrap().markers.is_empty());
    }
}
