//! From a figure's spec and its data to what will be drawn: the lines of each panel with
//! their points, roles and colours, the axes with their units, and the caption.
//!
//! Everything that can be wrong with the data is found here, before any drawing: a series
//! the spec names but the file lacks, a zero on a logarithmic axis, a panel of more than
//! six lines. Every error names the CSV file.

use std::path::Path;

use plotters::style::RGBColor;
use thiserror::Error;

use crate::figure::{Figure, FigureError};
use crate::figure_axes::{TickFormat, tick_format, y_unit_change};
use crate::figure_colours::{
    CONTEXT_GREY, CONTEXT_TEXT, REFERENCE_GREY, figure_colours, table_colour, text_colour,
};
use crate::figure_specs::{FigureSpec, MAX_SERIES_PER_PANEL, Marker, Role, Source};
use crate::figure_yardstick::{YardstickError, read_sgemm_yardstick};

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

/// Plans `spec` from `data`, read from `path`; `data_directory` holds the files that
/// references (the PyTorch yardstick) name.
pub fn plan(
    spec: &FigureSpec,
    figure: &Figure,
    path: &str,
    data_directory: &Path,
) -> Result<Plan, PlanError> {
    let mut panels: Vec<(Option<String>, PlannedLines)> = Vec::new();
    if spec.panels.is_empty() {
        let lines = (0..figure.series.len())
            .map(|index| {
                let series = &figure.series[index];
                PlannedLine {
                    name: series.name.clone(),
                    role: Role::Emphasised,
                    tint_of: None,
                    points: points_of(figure, index),
                }
            })
            .collect();
        panels.push((None, lines));
    } else {
        for panel in &spec.panels {
            let mut lines = Vec::new();
            for line in &panel.lines {
                let (name, points) = select(spec, figure, path, data_directory, &line.source)?;
                lines.push(PlannedLine {
                    name: line.label.clone().unwrap_or(name),
                    role: line.role,
                    tint_of: line.tint_of.clone(),
                    points,
                });
            }
            panels.push((panel.title.clone(), lines));
        }
    }
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

    // Colours: one per emphasised name across the whole figure, so a name keeps its colour
    // from panel to panel; grey (or a tint of its pair) for context; the table's grey or
    // black for references.
    let mut emphasised_names: Vec<&str> = Vec::new();
    for (_, lines) in &panels {
        for line in lines {
            if line.role == Role::Emphasised && !emphasised_names.contains(&line.name.as_str()) {
                emphasised_names.push(&line.name);
            }
        }
    }
    let colours = figure_colours(emphasised_names.iter().copied());
    let emphasised_colour = |name: &str| {
        emphasised_names
            .iter()
            .position(|known| *known == name)
            .map(|index| colours[index])
    };
    let mut planned_panels = Vec::new();
    for (title, lines) in &panels {
        let mut planned = Vec::new();
        for line in lines {
            let (colour, text) = match (line.role, &line.tint_of) {
                (Role::Emphasised, _) => {
                    let colour = emphasised_colour(&line.name).unwrap_or(CONTEXT_GREY);
                    (colour, text_colour(colour))
                }
                (Role::Context, Some(pair)) => {
                    let paired = lines
                        .iter()
                        .find(|other| other.role == Role::Emphasised && &other.name == pair)
                        .and_then(|other| emphasised_colour(&other.name))
                        .ok_or_else(|| PlanError::NoPair {
                            path: path.to_string(),
                            id: spec.id.clone(),
                            series: line.name.clone(),
                            pair: pair.clone(),
                        })?;
                    (lighten(paired, 0.55), text_colour(lighten(paired, 0.25)))
                }
                (Role::Context, None) => (CONTEXT_GREY, CONTEXT_TEXT),
                (Role::Reference, _) => {
                    let colour = table_colour(&line.name).unwrap_or(REFERENCE_GREY);
                    (colour, text_colour(colour))
                }
            };
            planned.push(Line {
                label: line.name.clone(),
                role: line.role,
                colour,
                text,
                points: line.points.clone(),
            });
        }
        planned_panels.push(Panel {
            title: title.clone(),
            lines: planned,
        });
    }

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
        panels: planned_panels,
        markers,
        caption,
    })
}

/// The points of series `index` of `figure`, sorted by x, with their spreads.
fn points_of(figure: &Figure, index: usize) -> Vec<PlotPoint> {
    let series = &figure.series[index];
    let mut points: Vec<PlotPoint> = series
        .points
        .iter()
        .enumerate()
        .map(|(position, point)| PlotPoint {
            x: point.x,
            y: point.y,
            spread: series
                .spreads
                .get(position)
                .copied()
                .flatten()
                .map(|spread| (spread.minimum, spread.maximum)),
        })
        .collect();
    points.sort_by(|a, b| a.x.total_cmp(&b.x));
    points
}

/// The name and points of one line of a spec.
fn select(
    spec: &FigureSpec,
    figure: &Figure,
    path: &str,
    data_directory: &Path,
    source: &Source,
) -> Result<(String, Vec<PlotPoint>), PlanError> {
    match source {
        Source::Series(name) => {
            let index = figure
                .series
                .iter()
                .position(|series| &series.name == name)
                .ok_or_else(|| PlanError::MissingSeries {
                    path: path.to_string(),
                    id: spec.id.clone(),
                    series: name.clone(),
                    available: figure
                        .series
                        .iter()
                        .map(|series| format!("`{}`", series.name))
                        .collect::<Vec<_>>()
                        .join(", "),
                })?;
            Ok((name.clone(), points_of(figure, index)))
        }
        Source::BestOf(prefix) => {
            let members: Vec<usize> = (0..figure.series.len())
                .filter(|index| figure.series[*index].name.starts_with(prefix.as_str()))
                .collect();
            if members.is_empty() {
                return Err(PlanError::NoSeriesWithPrefix {
                    path: path.to_string(),
                    id: spec.id.clone(),
                    prefix: prefix.clone(),
                });
            }
            let mut best: Vec<PlotPoint> = Vec::new();
            for point in members.iter().flat_map(|index| points_of(figure, *index)) {
                match best.iter_mut().find(|known| known.x == point.x) {
                    Some(known) if point.y > known.y => *known = point,
                    Some(_) => {}
                    None => best.push(point),
                }
            }
            best.sort_by(|a, b| a.x.total_cmp(&b.x));
            Ok((format!("best {prefix}"), best))
        }
        Source::SgemmYardstick(file) => {
            let measured = read_sgemm_yardstick(&data_directory.join(file))?;
            let xs = figure
                .series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.x));
            let (low, high) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
                (lo.min(x), hi.max(x))
            });
            let mut points: Vec<PlotPoint> = measured
                .into_iter()
                .filter(|(x, _)| *x >= low && *x <= high)
                .map(|(x, y)| PlotPoint { x, y, spread: None })
                .collect();
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            Ok(("cuBLAS".to_string(), points))
        }
    }
}

/// A line while it is planned: its name (the label to be), role and points.
struct PlannedLine {
    name: String,
    role: Role,
    tint_of: Option<String>,
    points: Vec<PlotPoint>,
}

type PlannedLines = Vec<PlannedLine>;

/// `colour` moved towards white by `amount` (0: unchanged, 1: white).
fn lighten(colour: RGBColor, amount: f64) -> RGBColor {
    let RGBColor(r, g, b) = colour;
    let towards_white =
        |channel: u8| (f64::from(channel) + (255.0 - f64::from(channel)) * amount).round() as u8;
    RGBColor(towards_white(r), towards_white(g), towards_white(b))
}

/// Every value finite, and positive on a logarithmic axis.
fn check_values(
    panels: &[(Option<String>, PlannedLines)],
    x_logarithmic: bool,
    y_logarithmic: bool,
    path: &str,
) -> Result<(), PlanError> {
    for (_, lines) in panels {
        for PlannedLine { name, points, .. } in lines {
            for point in points {
                let mut values = vec![("x", point.x, x_logarithmic), ("y", point.y, y_logarithmic)];
                if let Some((low, high)) = point.spread {
                    values.push(("y", low, y_logarithmic));
                    values.push(("y", high, y_logarithmic));
                }
                for (axis, value, logarithmic) in values {
                    if !value.is_finite() {
                        return Err(PlanError::NotFinite {
                            path: path.to_string(),
                            axis,
                            series: name.clone(),
                            value,
                        });
                    }
                    if logarithmic && value <= 0.0 {
                        return Err(PlanError::NotPositive {
                            path: path.to_string(),
                            axis,
                            series: name.clone(),
                            value,
                        });
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure_specs::{LineSpec, PanelSpec};

    fn data(rows: &str) -> Figure {
        let header = if rows
            .lines()
            .next()
            .is_some_and(|row| row.matches(',').count() == 4)
        {
            "series,x,y,y_min,y_max"
        } else {
            "series,x,y"
        };
        let text = format!(
            "# title: Kernels\n# x: matrix size n, log\n# y: GFLOP/s, log\n\
             # hardware: CPU Test; GPU Test\n# command: test\n{header}\n{rows}"
        );
        Figure::from_csv("figures/data/kernels.csv", &text).unwrap()
    }

    fn spec_with(lines: Vec<LineSpec>) -> FigureSpec {
        let mut spec = FigureSpec::new("kernels", "kernels");
        spec.panels.push(PanelSpec { title: None, lines });
        spec
    }

    fn series(name: &str, role: Role) -> LineSpec {
        LineSpec {
            source: Source::Series(name.to_string()),
            label: None,
            role,
            tint_of: None,
        }
    }

    fn plan_of(spec: &FigureSpec, data: &Figure) -> Result<Plan, PlanError> {
        plan(
            spec,
            data,
            "figures/data/kernels.csv",
            Path::new("/nonexistent"),
        )
    }

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
    fn the_best_of_a_family_takes_the_highest_at_each_size() {
        let data =
            data("rb 1,64,10\nrb 1,128,30\nrb 2,64,20\nrb 2,128,25\nrb 2,256,40\nnaive,64,1\n");
        let spec = spec_with(vec![LineSpec {
            source: Source::BestOf("rb".to_string()),
            label: None,
            role: Role::Emphasised,
            tint_of: None,
        }]);
        let plan = plan_of(&spec, &data).unwrap();
        let line = &plan.panels[0].lines[0];
        assert_eq!(line.label, "best rb");
        let points: Vec<(f64, f64)> = line.points.iter().map(|p| (p.x, p.y)).collect();
        assert_eq!(points, [(64.0, 20.0), (128.0, 30.0), (256.0, 40.0)]);
        let none = spec_with(vec![LineSpec {
            source: Source::BestOf("tiled".to_string()),
            label: None,
            role: Role::Emphasised,
            tint_of: None,
        }]);
        assert!(matches!(
            plan_of(&none, &data),
            Err(PlanError::NoSeriesWithPrefix { .. })
        ));
    }

    #[test]
    fn a_missing_series_is_named_with_the_ones_there_are() {
        let spec = spec_with(vec![series("tiled", Role::Emphasised)]);
        let error = plan_of(&spec, &data("naive,1,2\n"))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("`tiled`") && error.contains("`naive`"),
            "{error}"
        );
    }

    #[test]
    fn roles_decide_the_colours_and_large_throughputs_read_in_teraflops() {
        let data = data("naive,64,100\nnaive,4096,2000\ncuBLAS,64,500\ncuBLAS,4096,50000\n");
        let spec = spec_with(vec![
            series("naive", Role::Emphasised),
            series("cuBLAS", Role::Context),
        ]);
        let plan = plan_of(&spec, &data).unwrap();
        assert_eq!(plan.y.label, "TFLOP/s");
        let lines = &plan.panels[0].lines;
        assert_eq!(lines[0].colour, RGBColor(0xd6, 0x27, 0x28));
        assert_eq!(lines[1].colour, CONTEXT_GREY);
        assert!((lines[1].points[1].y - 50.0).abs() < 1e-9);
    }

    #[test]
    fn a_before_line_takes_a_tint_of_its_after_line() {
        let data = data("Graph,1,5\nGraph,2,6\nGraphCached,1,1\nGraphCached,2,2\n");
        let mut before = series("Graph", Role::Context);
        before.tint_of = Some("GraphCached".to_string());
        let spec = spec_with(vec![
            before.clone(),
            series("GraphCached", Role::Emphasised),
        ]);
        let plan = plan_of(&spec, &data).unwrap();
        let lines = &plan.panels[0].lines;
        assert_eq!(lines[1].colour, RGBColor(0x1f, 0x77, 0xb4));
        let RGBColor(r, g, b) = lines[0].colour;
        assert!(
            r > 0x1f && g > 0x77 && b > 0xb4 && b < 0xff,
            "{:?}",
            lines[0].colour
        );
        // A pair that is not in the panel is an error, not a grey line.
        before.tint_of = Some("GraphLoop".to_string());
        let lonely = spec_with(vec![before, series("GraphCached", Role::Emphasised)]);
        assert!(matches!(
            plan_of(&lonely, &data),
            Err(PlanError::NoPair { .. })
        ));
    }

    #[test]
    fn zeros_on_a_log_axis_are_errors_naming_file_and_series() {
        let error = plan_of(
            &FigureSpec::every_series("kernels"),
            &data("a,1,2\nGraph,2,0\n"),
        )
        .unwrap_err()
        .to_string();
        assert!(error.starts_with("figures/data/kernels.csv:"), "{error}");
        assert!(
            error.contains("`Graph`") && error.contains("value 0"),
            "{error}"
        );
        let nan = plan_of(&FigureSpec::every_series("kernels"), &data("a,1,NaN\n"));
        assert!(matches!(nan, Err(PlanError::NotFinite { .. })));
        let empty = plan_of(&FigureSpec::every_series("kernels"), &data(""));
        assert!(matches!(empty, Err(PlanError::Empty { .. })));
    }

    #[test]
    fn spreads_of_repeated_runs_come_along_and_are_checked() {
        let data = data("a,1,2,1.5,2.5\na,2,3,,\n");
        let plan = plan_of(&FigureSpec::every_series("kernels"), &data).unwrap();
        let spreads: Vec<_> = plan.panels[0].lines[0]
            .points
            .iter()
            .map(|p| p.spread)
            .collect();
        assert_eq!(spreads, [Some((1.5, 2.5)), None]);
        let zero = data_with_zero_spread();
        assert!(matches!(
            plan_of(&FigureSpec::every_series("kernels"), &zero),
            Err(PlanError::NotPositive { axis: "y", .. })
        ));
    }

    fn data_with_zero_spread() -> Figure {
        data("a,1,2,0,2.5\n")
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
