//! The points of each line, read from the figure's data: a series by name, the best of a
//! family of series at each size, or the cuBLAS yardstick from its own file; and the
//! check that every value can be drawn on its axis.

use std::path::Path;

use crate::figure::Figure;
use crate::figure_specs::{FigureSpec, Role, Source};
use crate::figure_yardstick::read_sgemm_yardstick;

use super::{PlanError, PlannedLine, PlannedPanel, PlotPoint};

/// The lines of every panel with their points: every series of the file, emphasised,
/// when the spec names no panels; else the lines the spec's panels name.
pub(super) fn planned_panels(
    spec: &FigureSpec,
    figure: &Figure,
    path: &str,
    data_directory: &Path,
) -> Result<Vec<PlannedPanel>, PlanError> {
    let mut panels: Vec<PlannedPanel> = Vec::new();
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
    Ok(panels)
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

/// Every value finite, and positive on a logarithmic axis.
pub(super) fn check_values(
    panels: &[PlannedPanel],
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
    use super::super::test_data::{data, plan_of, series, spec_with};
    use super::*;
    use crate::figure_specs::{LineSpec, Role};

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
}
