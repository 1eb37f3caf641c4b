//! Drawing one figure's CSV file as an SVG image with plotters.
//!
//! The layout: the title on top, the chart with its axes (logarithmic where the CSV says
//! so), a legend to the right with one line per series, and a caption line at the bottom
//! naming the hardware the data came from. Every measured point is marked, so a series
//! that stopped early (the sweep's time budget) visibly ends there.
//!
//! Only plotters' SVG backend is used: text is written as SVG `<text>` and drawn by the
//! browser, so no font library is needed here and the figure stays sharp at any zoom.

use std::ops::Range;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use thiserror::Error;

use crate::figure::{Figure, FigureError};
use crate::figure_colours::figure_colours;

/// Why a figure could not be drawn. Every variant names the CSV file.
#[derive(Debug, Error)]
pub enum DrawError {
    #[error(transparent)]
    Figure(#[from] FigureError),
    #[error("{path}: the figure has no points to draw")]
    Empty { path: String },
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
    #[error("{path}: drawing failed: {message}")]
    Plotters { path: String, message: String },
}

const CHART_WIDTH: u32 = 760;
const HEIGHT: u32 = 520;
const CAPTION_HEIGHT: u32 = 30;
const LEGEND_LINE_HEIGHT: i32 = 20;

/// Reads `csv` and draws it into `<output_directory>/<id>.svg`; returns the SVG's path.
pub fn draw_csv(csv: &Path, output_directory: &Path) -> Result<PathBuf, DrawError> {
    let figure = Figure::read_csv(csv)?;
    let path = output_directory.join(format!("{}.svg", figure.id));
    draw(&figure, &csv.display().to_string(), &path)?;
    Ok(path)
}

// ANCHOR: axis_range
/// The range an axis must show so every value fits, with a margin (whole decades on a
/// base-10 logarithmic axis). A logarithmic axis accepts only positive values: a zero or negative one is an error that names the file
/// and the series, not a silently missing point.
pub fn axis_range(
    figure: &Figure,
    path: &str,
    axis: &'static str,
) -> Result<Range<f64>, DrawError> {
    let logarithmic = match axis {
        "x" => figure.x.logarithmic,
        _ => figure.y.logarithmic,
    };
    let (mut lowest, mut highest) = (f64::INFINITY, f64::NEG_INFINITY);
    for series in &figure.series {
        for point in &series.points {
            let value = if axis == "x" { point.x } else { point.y };
            let problem = if !value.is_finite() {
                Some(DrawError::NotFinite {
                    path: path.to_string(),
                    axis,
                    series: series.name.clone(),
                    value,
                })
            } else if logarithmic && value <= 0.0 {
                Some(DrawError::NotPositive {
                    path: path.to_string(),
                    axis,
                    series: series.name.clone(),
                    value,
                })
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(problem);
            }
            lowest = lowest.min(value);
            highest = highest.max(value);
        }
    }
    if lowest > highest {
        return Err(DrawError::Empty {
            path: path.to_string(),
        });
    }
    Ok(if logarithmic {
        let base = match axis {
            "x" => logarithm_base(
                figure
                    .series
                    .iter()
                    .flat_map(|s| s.points.iter().map(|p| p.x)),
            ),
            _ => 10.0,
        };
        if base == 10.0 {
            // Whole decades, so that both ends carry a label; the 10% keeps a point that
            // lies on a power of ten off the frame.
            let decade_below = 10f64.powf((lowest / 1.1).log10().floor());
            let decade_above = 10f64.powf((highest * 1.1).log10().ceil());
            decade_below..decade_above
        } else {
            // The measured sizes are the labels: a margin of less than one doubling.
            lowest / 1.6..highest * 1.6
        }
    } else {
        let span = if lowest == highest {
            lowest.abs().max(1.0)
        } else {
            highest - lowest
        };
        // Linear axes start at zero when the data is positive: bars of time or speed
        // compared by eye need the zero.
        lowest.min(0.0) - 0.02 * span..highest + 0.05 * span
    })
}
// ANCHOR_END: axis_range

/// Draws `figure` into the SVG file `output`. `source` names the CSV in errors.
pub fn draw(figure: &Figure, source: &str, output: &Path) -> Result<(), DrawError> {
    let x = axis_range(figure, source, "x")?;
    let y = axis_range(figure, source, "y")?;
    let plotting = |message: String| DrawError::Plotters {
        path: source.to_string(),
        message,
    };
    let legend_width = legend_width(figure);
    let root = SVGBackend::new(output, (CHART_WIDTH + legend_width, HEIGHT)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plotting(e.to_string()))?;
    let (upper, caption) = root.split_vertically(HEIGHT - CAPTION_HEIGHT);
    let (chart_area, legend_area) = upper.split_horizontally(CHART_WIDTH);
    let x_base = logarithm_base(
        figure
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.x)),
    );
    let bases = (x_base, 10.0);
    let log = |range: Range<f64>, base| range.log_scale().base(base);
    match (figure.x.logarithmic, figure.y.logarithmic) {
        (true, true) => draw_chart(&chart_area, figure, bases, log(x, x_base), log(y, 10.0)),
        (true, false) => draw_chart(&chart_area, figure, bases, log(x, x_base), y),
        (false, true) => draw_chart(&chart_area, figure, bases, x, log(y, 10.0)),
        (false, false) => draw_chart(&chart_area, figure, bases, x, y),
    }
    .map_err(plotting)?;
    draw_legend(&legend_area, figure).map_err(plotting)?;
    let caption_style = TextStyle::from(("sans-serif", 12).into_font())
        .color(&RGBColor(0x44, 0x44, 0x44))
        .pos(Pos::new(HPos::Left, VPos::Center));
    caption
        .draw(&Text::new(
            format!("Measured on {}", figure.hardware),
            (12, CAPTION_HEIGHT as i32 / 2),
            caption_style,
        ))
        .map_err(|e| plotting(e.to_string()))?;
    root.present().map_err(|e| plotting(e.to_string()))
}

/// The chart: title, axes with labels, one line with point marks per series. `bases`
/// are the bases of the logarithmic axes, for their tick labels.
fn draw_chart<X, Y>(
    area: &DrawingArea<SVGBackend, Shift>,
    figure: &Figure,
    (x_base, y_base): (f64, f64),
    x: X,
    y: Y,
) -> Result<(), String>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .caption(&figure.title, ("sans-serif", 20).into_font())
        .margin(14)
        .x_label_area_size(46)
        .y_label_area_size(70)
        .build_cartesian_2d(x, y)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc(figure.x.label.as_str())
        .y_desc(figure.y.label.as_str())
        .x_labels(12)
        .y_labels(12)
        .x_label_formatter(&|value| tick_label(*value, x_base))
        .y_label_formatter(&|value| tick_label(*value, y_base))
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .axis_desc_style(("sans-serif", 14).into_font())
        .label_style(("sans-serif", 12).into_font())
        .draw()
        .map_err(|e| e.to_string())?;
    let colours = figure_colours(figure.series.iter().map(|series| series.name.as_str()));
    for (series, colour) in figure.series.iter().zip(colours) {
        let points: Vec<(f64, f64)> = series.points.iter().map(|p| (p.x, p.y)).collect();
        chart
            .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))
            .map_err(|e| e.to_string())?;
        chart
            .draw_series(
                points
                    .into_iter()
                    .map(|point| Circle::new(point, 3, colour.filled())),
            )
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// One line per series, in the figure's order, in the strip right of the chart.
fn draw_legend(area: &DrawingArea<SVGBackend, Shift>, figure: &Figure) -> Result<(), String> {
    let style =
        TextStyle::from(("sans-serif", 13).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let colours = figure_colours(figure.series.iter().map(|series| series.name.as_str()));
    for (index, (series, colour)) in figure.series.iter().zip(colours).enumerate() {
        let y = 60 + index as i32 * LEGEND_LINE_HEIGHT;
        area.draw(&PathElement::new(
            vec![(4, y), (30, y)],
            colour.stroke_width(2),
        ))
        .map_err(|e| e.to_string())?;
        area.draw(&Circle::new((17, y), 3, colour.filled()))
            .map_err(|e| e.to_string())?;
        area.draw(&Text::new(series.name.clone(), (38, y), style.clone()))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Wide enough for the longest series name (about 7 pixels per character at 13 px).
fn legend_width(figure: &Figure) -> u32 {
    let longest = figure
        .series
        .iter()
        .map(|series| series.name.chars().count())
        .max()
        .unwrap_or(0) as u32;
    (50 + 7 * longest).clamp(120, 420)
}

/// 2 when every value is a power of two (sizes that double from point to point: the
/// ticks then fall on the measured sizes), 10 otherwise.
pub fn logarithm_base(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut values = values.into_iter().peekable();
    let powers_of_two = values.peek().is_some()
        && values
            .all(|value| value >= 1.0 && value.fract() == 0.0 && (value as u64).is_power_of_two());
    if powers_of_two { 2.0 } else { 10.0 }
}

/// Tick labels without trailing zeros: `1024`, `0.5`, `2.5e-5`, `1e7`; on a base-2 axis,
/// powers of two from 2¹⁶ up as `2¹⁶`, shorter than `65536`.
pub fn tick_label(value: f64, base: f64) -> String {
    let magnitude = value.abs();
    if base == 2.0 && value >= 65536.0 && value.fract() == 0.0 && (value as u64).is_power_of_two() {
        const SUPERSCRIPTS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
        let exponent = (value as u64).trailing_zeros().to_string();
        let superscript: String = exponent
            .chars()
            .map(|digit| SUPERSCRIPTS[digit.to_digit(10).unwrap_or(0) as usize])
            .collect();
        format!("2{superscript}")
    } else if value == 0.0 {
        "0".to_string()
    } else if !(1e-3..1e6).contains(&magnitude) {
        let text = format!("{value:e}");
        // `1.5e6` stays; `1e6` rather than `1.0e6`.
        text.replace(".0e", "e")
    } else {
        let text = format!("{value:.3}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(x_log: bool, y_log: bool, rows: &str) -> String {
        let log = |on: bool| if on { ", log" } else { "" };
        format!(
            "# title: Test figure\n# x: size{}\n# y: time (ms){}\n\
             # hardware: CPU Test CPU (x86_64, 2 cores); GPU Test GPU (Vulkan, Cpu)\n\
             # command: cargo test\nseries,x,y\n{rows}",
            log(x_log),
            log(y_log)
        )
    }

    fn figure(text: &str) -> Figure {
        Figure::from_csv("figures/data/test-figure.csv", text).unwrap()
    }

    #[test]
    fn logarithmic_ranges_cover_the_data_with_a_margin() {
        let figure = figure(&csv(true, true, "Cpu,4,0.5\nCpu,1024,20\nGraph,16,3\n"));
        let x = axis_range(&figure, "f.csv", "x").unwrap();
        assert!(x.start < 4.0 && x.start > 0.0 && x.end > 1024.0, "{x:?}");
        let y = axis_range(&figure, "f.csv", "y").unwrap();
        assert!(y.start < 0.5 && y.start > 0.0 && y.end > 20.0, "{y:?}");
    }

    #[test]
    fn linear_ranges_include_zero() {
        let figure = figure(&csv(false, false, "a,1,5\na,2,7\n"));
        let y = axis_range(&figure, "f.csv", "y").unwrap();
        assert!(y.start <= 0.0 && y.end > 7.0, "{y:?}");
        let single = self::figure(&csv(false, false, "a,3,3\n"));
        let x = axis_range(&single, "f.csv", "x").unwrap();
        assert!(x.start < 3.0 && x.end > 3.0, "{x:?}");
    }

    #[test]
    fn a_zero_on_a_log_axis_is_an_error_naming_the_file_and_series() {
        let figure = figure(&csv(true, true, "Cpu,4,1\nGraph,8,0\n"));
        let error = axis_range(&figure, "figures/data/broken.csv", "y")
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("figures/data/broken.csv:"), "{error}");
        assert!(
            error.contains("`Graph`") && error.contains("value 0"),
            "{error}"
        );
        // The same value is fine on a linear axis.
        let linear = self::figure(&csv(true, false, "Cpu,4,1\nGraph,8,0\n"));
        assert!(axis_range(&linear, "f.csv", "y").is_ok());
        let negative = self::figure(&csv(true, false, "Cpu,-4,1\n"));
        assert!(matches!(
            axis_range(&negative, "f.csv", "x"),
            Err(DrawError::NotPositive { axis: "x", .. })
        ));
    }

    #[test]
    fn empty_and_non_finite_figures_are_errors() {
        let empty = figure(&csv(true, true, ""));
        assert!(matches!(
            axis_range(&empty, "f.csv", "x"),
            Err(DrawError::Empty { .. })
        ));
        let nan = figure(&csv(false, false, "a,1,NaN\n"));
        assert!(matches!(
            axis_range(&nan, "f.csv", "y"),
            Err(DrawError::NotFinite { .. })
        ));
    }

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(tick_label(1024.0, 10.0), "1024");
        assert_eq!(tick_label(0.5, 10.0), "0.5");
        assert_eq!(tick_label(0.0, 10.0), "0");
        assert_eq!(tick_label(1e7, 10.0), "1e7");
        assert_eq!(tick_label(2.5e-5, 10.0), "2.5e-5");
        assert_eq!(tick_label(12.345, 10.0), "12.345");
        assert_eq!(tick_label(1024.0, 2.0), "1024");
        assert_eq!(tick_label(16777216.0, 2.0), "2²⁴");
        assert_eq!(tick_label(1e7, 2.0), "1e7");
    }

    #[test]
    fn doubling_sizes_get_base_two_axes() {
        assert_eq!(logarithm_base([4.0, 8.0, 1024.0]), 2.0);
        assert_eq!(logarithm_base([4.0, 10.0]), 10.0);
        assert_eq!(logarithm_base([0.5, 1.0]), 10.0);
        assert_eq!(logarithm_base([]), 10.0);
    }

    #[test]
    fn drawing_a_small_csv_writes_an_svg_with_names_and_caption() {
        let directory = std::env::temp_dir().join(format!(
            "galaxy-figure-test-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&directory).unwrap();
        let csv_path = directory.join("modes-by-size-software.csv");
        std::fs::write(
            &csv_path,
            csv(
                true,
                true,
                "GraphCompiled,4,0.5\nGraphCompiled,8,0.9\nImmediate,4,40\nImmediate,8,80\n",
            ),
        )
        .unwrap();
        let svg_path = draw_csv(&csv_path, &directory).unwrap();
        assert_eq!(svg_path, directory.join("modes-by-size-software.svg"));
        let svg = std::fs::read_to_string(&svg_path).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(200)]);
        for expected in [
            "GraphCompiled",
            "Immediate",
            "Test figure",
            "Measured on CPU Test CPU (x86_64, 2 cores); GPU Test GPU (Vulkan, Cpu)",
            "size",
        ] {
            assert!(svg.contains(expected), "the SVG lacks {expected:?}");
        }
        // GraphCompiled's colour from the fixed table, as SVG writes it.
        assert!(
            svg.to_uppercase().contains("#FF7F0E"),
            "no GraphCompiled orange"
        );
        std::fs::remove_dir_all(&directory).unwrap();
    }

    #[test]
    fn drawing_a_broken_csv_names_it() {
        let directory =
            std::env::temp_dir().join(format!("galaxy-figure-broken-{}", std::process::id()));
        std::fs::create_dir_all(&directory).unwrap();
        let csv_path = directory.join("broken.csv");
        std::fs::write(&csv_path, csv(true, true, "a,1,-1\n")).unwrap();
        let error = draw_csv(&csv_path, &directory).unwrap_err().to_string();
        assert!(error.contains("broken.csv"), "{error}");
        assert!(!directory.join("broken.svg").exists());
        std::fs::remove_dir_all(&directory).unwrap();
    }
}
