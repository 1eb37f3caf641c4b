//! Drawing a planned figure as an SVG image with plotters.
//!
//! The page shows figures 750 pixels wide, so they are drawn at exactly that width, with
//! no text smaller than 12 pixels. From top to bottom: the title, a subtitle saying how to
//! read the figure, the y axis title, the panels (small multiples on shared axes), the x
//! axis title, and a caption naming the hardware. Every line is labelled directly at its
//! last point, in its own colour; labels that would overlap are moved apart and joined to
//! their line by a thin leader. Emphasised lines are thick and coloured, context lines
//! thin and grey, reference lines dashed. Every measured point is marked, so a series that
//! stopped early (the sweep's time budget) visibly ends there; where repeated runs gave a
//! spread, it is a light band around the line (or a bar at each point that has one).
//!
//! Only plotters' SVG backend is used: text is written as SVG `<text>` and set by the
//! browser, so no font library is needed here and the figure stays sharp at any zoom.
//! Positions are computed here (`figure_axes`, `figure_labels`); plotters draws the
//! shapes and the text.

use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontDesc, FontFamily, FontStyle};
use thiserror::Error;

use crate::figure_axes::{Scale, tick_label, x_range, x_ticks, y_axis};
use crate::figure_colours::CONTEXT_TEXT;
use crate::figure_labels::{
    LabelBox, LabelRequest, Segment, crossings, place_labels, text_width, wrap,
};
use crate::figure_plan::{Line, Plan};
use crate::figure_specs::Role;

/// The width of every figure: the width of the page's text column.
pub const WIDTH: u32 = 750;
/// No text of a figure is smaller than this, in pixels.
pub const SMALLEST_TEXT: f64 = 12.0;

const TITLE_SIZE: f64 = 16.0;
const SUBTITLE_SIZE: f64 = 13.0;
const AXIS_TITLE_SIZE: f64 = 13.0;
const PANEL_TITLE_SIZE: f64 = 13.0;
const TICK_SIZE: f64 = SMALLEST_TEXT;
const LABEL_SIZE: f64 = 13.0;
const CONTEXT_LABEL_SIZE: f64 = SMALLEST_TEXT;
const CAPTION_SIZE: f64 = SMALLEST_TEXT;

/// The white space around everything, and between two columns of panels.
const MARGIN: f64 = 12.0;
const COLUMN_GAP: f64 = 22.0;
/// Ticks closer than this on a y axis would crowd their labels.
const Y_TICK_GAP: f64 = 30.0;
/// From the end of a line (or the right edge of the plot) to its label.
const LABEL_GAP: f64 = 8.0;
/// A line that ends closer than this to the right edge is labelled right of the plot.
const NEAR_THE_EDGE: f64 = 40.0;
/// Between the lines of a wrapped label.
const LINE_SPACING: f64 = 2.0;

const TEXT: RGBColor = RGBColor(0x22, 0x22, 0x22);
const SOFT_TEXT: RGBColor = RGBColor(0x55, 0x55, 0x55);
const AXIS: RGBColor = RGBColor(0x88, 0x88, 0x88);
const GRID: RGBColor = RGBColor(0xe8, 0xe8, 0xe8);
const MARKER_LINE: RGBColor = RGBColor(0xb0, 0xb0, 0xb0);

/// Why plotters could not draw a figure.
#[derive(Debug, Error)]
#[error("figure `{id}`: drawing failed: {message}")]
pub struct DrawError {
    pub id: String,
    pub message: String,
}

/// The height of one panel's plot, by the number of rows of panels.
fn plot_height(rows: usize) -> f64 {
    match rows {
        1 => 300.0,
        2 => 185.0,
        3 => 140.0,
        _ => 130.0,
    }
}

/// A font of `size` pixels as the SVG will write it. plotters' SVG backend divides the
/// size it is given by 1.24 (it converts points to pixels), so this multiplies first.
fn font(size: f64, bold: bool) -> FontDesc<'static> {
    let style = if bold {
        FontStyle::Bold
    } else {
        FontStyle::Normal
    };
    FontDesc::new(FontFamily::SansSerif, size * 1.24, style)
}

fn text_style(size: f64, bold: bool, colour: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    TextStyle {
        font: font(size, bold),
        color: colour.to_backend_color(),
        pos: Pos::new(h, v),
    }
}

fn at(x: f64, y: f64) -> (i32, i32) {
    (x.round() as i32, y.round() as i32)
}

/// Where one panel's plot lies on the page.
struct PanelBox {
    left: f64,
    top: f64,
    width: f64,
    height: f64,
    title_top: f64,
    first_column: bool,
    bottom_row: bool,
}

/// Draws `plan` and returns the SVG document.
pub fn render(plan: &Plan) -> Result<String, DrawError> {
    let failed = |message: String| DrawError {
        id: plan.id.clone(),
        message,
    };
    let points = plan
        .panels
        .iter()
        .flat_map(|panel| panel.lines.iter())
        .flat_map(|line| line.points.iter());
    let (mut x_low, mut x_high) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut y_low, mut y_high) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut x_values = Vec::new();
    for point in points {
        x_low = x_low.min(point.x);
        x_high = x_high.max(point.x);
        x_values.push(point.x);
        let (low, high) = point.spread.unwrap_or((point.y, point.y));
        y_low = y_low.min(low.min(point.y));
        y_high = y_high.max(high.max(point.y));
    }
    for marker in &plan.markers {
        x_low = x_low.min(marker.x);
        x_high = x_high.max(marker.x);
    }

    // Vertical layout: title, subtitle, y axis title, rows of panels, x axis title,
    // caption.
    let text_width_available = f64::from(WIDTH) - 2.0 * MARGIN;
    let columns = plan.columns.min(plan.panels.len()).max(1);
    let rows = plan.panels.len().div_ceil(columns);
    let height_of_plot = plot_height(rows);
    let (y_axis_low, y_axis_high, y_ticks) = y_axis(
        y_low,
        y_high,
        plan.y.logarithmic,
        height_of_plot,
        Y_TICK_GAP,
    );
    let y_tick_labels: Vec<String> = y_ticks
        .iter()
        .map(|tick| tick_label(*tick, plan.y.format))
        .collect();
    let mut cursor = MARGIN;
    // Bold text is about 8 % wider than the estimate for regular text.
    let title_lines = wrap(&plan.title, text_width_available / 1.08, TITLE_SIZE);
    let title_top = cursor;
    cursor += title_lines.len() as f64 * (TITLE_SIZE + 5.0) + 3.0;
    let subtitle_lines = plan
        .subtitle
        .as_deref()
        .map(|text| wrap(text, text_width_available, SUBTITLE_SIZE))
        .unwrap_or_default();
    let subtitle_top = cursor;
    cursor += subtitle_lines.len() as f64 * (SUBTITLE_SIZE + 5.0);
    cursor += 6.0;
    let y_title_top = cursor;
    cursor += AXIS_TITLE_SIZE + 10.0;
    let has_panel_titles = plan.panels.iter().any(|panel| panel.title.is_some());

    // Horizontal layout: the y tick labels, then per column the plot and the room its
    // lines' labels need on the right.
    let widest_tick = y_tick_labels
        .iter()
        .map(|label| text_width(label, TICK_SIZE))
        .fold(0.0, f64::max);
    let plots_left = MARGIN + widest_tick + 10.0;
    let column_width = (f64::from(WIDTH) - MARGIN - plots_left - (columns - 1) as f64 * COLUMN_GAP)
        / columns as f64;
    // Labels longer than a third of a column wrap onto more lines.
    let label_limit = column_width * 0.34 - LABEL_GAP;
    let label_room = plan
        .panels
        .iter()
        .flat_map(|panel| panel.lines.iter())
        .flat_map(|line| label_lines(line, label_limit))
        .map(|(text, size)| text_width(&text, size))
        .fold(0.0, f64::max)
        + LABEL_GAP
        + 4.0;
    let plot_width = column_width - label_room;

    let mut boxes = Vec::new();
    for row in 0..rows {
        let title_top = cursor;
        if has_panel_titles {
            cursor += PANEL_TITLE_SIZE + 9.0;
        }
        let top = cursor;
        cursor += height_of_plot;
        cursor += if row + 1 == rows {
            TICK_SIZE + 16.0
        } else {
            18.0
        };
        for column in 0..columns {
            let index = row * columns + column;
            if index >= plan.panels.len() {
                break;
            }
            boxes.push(PanelBox {
                left: plots_left + column as f64 * (column_width + COLUMN_GAP),
                top,
                width: plot_width,
                height: height_of_plot,
                title_top,
                first_column: column == 0,
                bottom_row: index + columns >= plan.panels.len(),
            });
        }
    }
    let x_title_top = cursor + 2.0;
    cursor = x_title_top + AXIS_TITLE_SIZE + 12.0;
    let caption_lines: Vec<String> = plan
        .caption
        .iter()
        .flat_map(|sentence| wrap(sentence, text_width_available, CAPTION_SIZE))
        .collect();
    let caption_top = cursor;
    cursor += caption_lines.len() as f64 * (CAPTION_SIZE + 4.0) + MARGIN;
    let height = cursor.ceil() as u32;

    let (x_axis_low, x_axis_high) = x_range(x_low, x_high, plan.x.logarithmic);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| failed(e.to_string()))?;
        let text = |content: &str, x: f64, y: f64, style: &TextStyle| {
            root.draw(&Text::new(content.to_string(), at(x, y), style.clone()))
                .map_err(|e| failed(e.to_string()))
        };
        for (index, line) in title_lines.iter().enumerate() {
            text(
                line,
                MARGIN,
                title_top + index as f64 * (TITLE_SIZE + 5.0),
                &text_style(TITLE_SIZE, true, TEXT, HPos::Left, VPos::Top),
            )?;
        }
        for (index, line) in subtitle_lines.iter().enumerate() {
            text(
                line,
                MARGIN,
                subtitle_top + index as f64 * (SUBTITLE_SIZE + 5.0),
                &text_style(SUBTITLE_SIZE, false, SOFT_TEXT, HPos::Left, VPos::Top),
            )?;
        }
        text(
            &plan.y.label,
            MARGIN,
            y_title_top,
            &text_style(AXIS_TITLE_SIZE, false, TEXT, HPos::Left, VPos::Top),
        )?;

        for (panel, frame) in plan.panels.iter().zip(&boxes) {
            let x_scale = Scale {
                low: x_axis_low,
                high: x_axis_high,
                logarithmic: plan.x.logarithmic,
                start: frame.left,
                end: frame.left + frame.width,
            };
            let y_scale = Scale {
                low: y_axis_low,
                high: y_axis_high,
                logarithmic: plan.y.logarithmic,
                start: frame.top + frame.height,
                end: frame.top,
            };
            if let Some(title) = &panel.title {
                text(
                    title,
                    frame.left,
                    frame.title_top,
                    &text_style(PANEL_TITLE_SIZE, true, TEXT, HPos::Left, VPos::Top),
                )?;
            }
            draw_axes(&root, plan, frame, &x_scale, &y_scale, &x_values, &y_ticks)
                .map_err(failed)?;
            draw_markers(&root, plan, frame, &x_scale).map_err(failed)?;
            draw_lines(&root, &panel.lines, &x_scale, &y_scale).map_err(failed)?;
            draw_direct_labels(&root, &panel.lines, frame, &x_scale, &y_scale, label_limit)
                .map_err(failed)?;
        }

        let plots_right = boxes
            .iter()
            .map(|frame| frame.left + frame.width)
            .fold(plots_left, f64::max);
        text(
            &plan.x.label,
            (plots_left + plots_right) / 2.0,
            x_title_top,
            &text_style(AXIS_TITLE_SIZE, false, TEXT, HPos::Center, VPos::Top),
        )?;
        for (index, line) in caption_lines.iter().enumerate() {
            text(
                line,
                MARGIN,
                caption_top + index as f64 * (CAPTION_SIZE + 4.0),
                &text_style(CAPTION_SIZE, false, SOFT_TEXT, HPos::Left, VPos::Top),
            )?;
        }
        root.present().map_err(|e| failed(e.to_string()))?;
    }
    Ok(with_description(svg, plan))
}

fn label_size(line: &Line) -> f64 {
    if line.role == Role::Context {
        CONTEXT_LABEL_SIZE
    } else {
        LABEL_SIZE
    }
}

/// The lines of a line's direct label, wrapped at `limit` pixels, with their font size.
fn label_lines(line: &Line, limit: f64) -> Vec<(String, f64)> {
    let size = label_size(line);
    wrap(&line.label, limit, size)
        .into_iter()
        .map(|text| (text, size))
        .collect()
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// Grid lines at the ticks, the two axis lines, tick marks, and tick labels on the outer
/// panels only (the axes are shared).
fn draw_axes(
    root: &Area,
    plan: &Plan,
    frame: &PanelBox,
    x_scale: &Scale,
    y_scale: &Scale,
    x_values: &[f64],
    y_ticks: &[f64],
) -> Result<(), String> {
    let bottom = frame.top + frame.height;
    let right = frame.left + frame.width;
    let line = |points: Vec<(f64, f64)>, colour: RGBColor| {
        root.draw(&PathElement::new(
            points
                .into_iter()
                .map(|(x, y)| at(x, y))
                .collect::<Vec<_>>(),
            colour.stroke_width(1),
        ))
        .map_err(|e| e.to_string())
    };
    for tick in y_ticks {
        let y = y_scale.pixel(*tick);
        line(vec![(frame.left, y), (right, y)], GRID)?;
        line(vec![(frame.left - 4.0, y), (frame.left, y)], AXIS)?;
        if frame.first_column {
            root.draw(&Text::new(
                tick_label(*tick, plan.y.format),
                at(frame.left - 7.0, y),
                text_style(TICK_SIZE, false, TEXT, HPos::Right, VPos::Center),
            ))
            .map_err(|e| e.to_string())?;
        }
    }
    let x_ticks = x_ticks(x_values, x_scale, plan.x.format, TICK_SIZE);
    for tick in &x_ticks {
        let x = x_scale.pixel(*tick);
        line(vec![(x, frame.top), (x, bottom)], GRID)?;
        line(vec![(x, bottom), (x, bottom + 4.0)], AXIS)?;
        if frame.bottom_row {
            root.draw(&Text::new(
                tick_label(*tick, plan.x.format),
                at(x, bottom + 7.0),
                text_style(TICK_SIZE, false, TEXT, HPos::Center, VPos::Top),
            ))
            .map_err(|e| e.to_string())?;
        }
    }
    line(
        vec![
            (frame.left, frame.top),
            (frame.left, bottom),
            (right, bottom),
        ],
        AXIS,
    )
}

/// Dashed vertical markers (cache sizes), labelled at the top of the plot.
fn draw_markers(root: &Area, plan: &Plan, frame: &PanelBox, x_scale: &Scale) -> Result<(), String> {
    for marker in &plan.markers {
        let x = x_scale.pixel(marker.x);
        root.draw(&DashedPathElement::new(
            vec![at(x, frame.top), at(x, frame.top + frame.height)],
            5,
            4,
            MARKER_LINE.stroke_width(1),
        ))
        .map_err(|e| e.to_string())?;
        root.draw(&Text::new(
            marker.label.clone(),
            at(x + 4.0, frame.top + 2.0),
            text_style(SMALLEST_TEXT, false, CONTEXT_TEXT, HPos::Left, VPos::Top),
        ))
        .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Spread bands, then the lines (context under reference under emphasised), then the
/// point marks.
fn draw_lines(root: &Area, lines: &[Line], x_scale: &Scale, y_scale: &Scale) -> Result<(), String> {
    let pixel = |x: f64, y: f64| at(x_scale.pixel(x), y_scale.pixel(y));
    let mut order: Vec<&Line> = lines.iter().collect();
    order.sort_by_key(|line| match line.role {
        Role::Context => 0,
        Role::Reference => 1,
        Role::Emphasised => 2,
    });
    for line in &order {
        let with_spread: Vec<_> = line.points.iter().filter(|p| p.spread.is_some()).collect();
        if with_spread.is_empty() {
            continue;
        }
        let fill = line.colour.mix(0.18);
        if with_spread.len() == line.points.len() && line.points.len() > 1 {
            let mut outline: Vec<(i32, i32)> = line
                .points
                .iter()
                .map(|p| pixel(p.x, p.spread.map_or(p.y, |s| s.1)))
                .collect();
            outline.extend(
                line.points
                    .iter()
                    .rev()
                    .map(|p| pixel(p.x, p.spread.map_or(p.y, |s| s.0))),
            );
            root.draw(&Polygon::new(outline, fill.filled()))
                .map_err(|e| e.to_string())?;
        } else {
            for point in with_spread {
                let (low, high) = point.spread.unwrap_or((point.y, point.y));
                let (x, top) = pixel(point.x, high);
                let (_, bottom) = pixel(point.x, low);
                for segment in [
                    vec![(x, top), (x, bottom)],
                    vec![(x - 3, top), (x + 3, top)],
                    vec![(x - 3, bottom), (x + 3, bottom)],
                ] {
                    root.draw(&PathElement::new(
                        segment,
                        line.colour.mix(0.6).stroke_width(1),
                    ))
                    .map_err(|e| e.to_string())?;
                }
            }
        }
    }
    for line in &order {
        let path: Vec<(i32, i32)> = line.points.iter().map(|p| pixel(p.x, p.y)).collect();
        match line.role {
            Role::Emphasised => root
                .draw(&PathElement::new(path.clone(), line.colour.stroke_width(3)))
                .map_err(|e| e.to_string())?,
            Role::Context => root
                .draw(&PathElement::new(path.clone(), line.colour.stroke_width(2)))
                .map_err(|e| e.to_string())?,
            Role::Reference => root
                .draw(&DashedPathElement::new(
                    path.clone(),
                    7,
                    4,
                    line.colour.stroke_width(2),
                ))
                .map_err(|e| e.to_string())?,
        }
        let radius = match line.role {
            Role::Emphasised => 4,
            // A reference of two points is a level (a peak), not a measurement per size.
            Role::Reference if line.points.len() <= 2 => continue,
            _ => 3,
        };
        for point in path {
            root.draw(&Circle::new(point, radius, line.colour.filled()))
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// Each line's name at its last point, moved apart where names would overlap. A line
/// that ends near the right edge of the plot is labelled in the column right of it, so
/// that those labels line up; one that ends early is labelled beside its last point.
fn draw_direct_labels(
    root: &Area,
    lines: &[Line],
    frame: &PanelBox,
    x_scale: &Scale,
    y_scale: &Scale,
    limit: f64,
) -> Result<(), String> {
    let right = frame.left + frame.width;
    let ends: Vec<(&Line, f64, f64)> = lines
        .iter()
        .filter_map(|line| {
            let last = line.points.last()?;
            Some((line, x_scale.pixel(last.x), y_scale.pixel(last.y)))
        })
        .collect();
    let texts: Vec<Vec<(String, f64)>> = ends
        .iter()
        .map(|(line, _, _)| label_lines(line, limit))
        .collect();
    // Every drawn segment of the panel, to keep labels off the lines.
    let segments: Vec<Segment> = lines
        .iter()
        .flat_map(|line| {
            line.points.windows(2).map(|pair| {
                (
                    (x_scale.pixel(pair[0].x), y_scale.pixel(pair[0].y)),
                    (x_scale.pixel(pair[1].x), y_scale.pixel(pair[1].y)),
                )
            })
        })
        .collect();
    let requests: Vec<LabelRequest> = ends
        .iter()
        .zip(&texts)
        .map(|((_, x, y), text)| {
            let width = text
                .iter()
                .map(|(line, size)| text_width(line, *size))
                .fold(0.0, f64::max);
            let height = text
                .iter()
                .map(|(_, size)| size + LINE_SPACING)
                .sum::<f64>()
                + 1.0;
            if right - x < NEAR_THE_EDGE {
                return LabelRequest {
                    x: right + LABEL_GAP,
                    y: *y,
                    width,
                    height,
                };
            }
            // A line that ends early: beside its end, or just above or below, right or
            // left, wherever the fewest lines pass (ties go to the first of these).
            let candidates = [
                (x + LABEL_GAP, *y),
                (x + LABEL_GAP, y + height * 0.8),
                (x + LABEL_GAP, y - height * 0.8),
                (x - LABEL_GAP - width, y - height * 0.8),
                (x - LABEL_GAP - width, y + height * 0.8),
            ];
            let cost = |(left, middle): (f64, f64)| {
                let area = LabelBox {
                    left,
                    top: middle - height / 2.0,
                    right: left + width,
                    bottom: middle + height / 2.0,
                };
                let outside = area.left < frame.left
                    || area.top < frame.top - 6.0
                    || area.bottom > frame.top + frame.height + 6.0;
                crossings(&area, &segments) + if outside { 100 } else { 0 }
            };
            let (left, middle) = candidates
                .iter()
                .copied()
                .min_by_key(|candidate| cost(*candidate))
                .unwrap_or(candidates[0]);
            LabelRequest {
                x: left,
                y: middle,
                width,
                height,
            }
        })
        .collect();
    let middles = place_labels(&requests, frame.top - 6.0, frame.top + frame.height + 6.0);
    for (((line, x, y), text), (request, middle)) in
        ends.iter().zip(&texts).zip(requests.iter().zip(middles))
    {
        let colour = line.text;
        let moved = (middle - request.y).abs() > 3.0;
        let far = request.x - x > LABEL_GAP + 24.0;
        if moved || far {
            let to = if request.x > *x {
                request.x - 3.0
            } else {
                request.x + request.width + 3.0
            };
            let from = if request.x > *x { x + 5.0 } else { x - 5.0 };
            root.draw(&PathElement::new(
                vec![at(from, *y), at(to, middle)],
                colour.mix(0.6).stroke_width(1),
            ))
            .map_err(|e| e.to_string())?;
        }
        let mut top = middle - request.height / 2.0 + 0.5;
        for (content, size) in text {
            root.draw(&Text::new(
                content.clone(),
                at(request.x, top + (size + LINE_SPACING) / 2.0),
                text_style(*size, false, colour, HPos::Left, VPos::Center),
            ))
            .map_err(|e| e.to_string())?;
            top += size + LINE_SPACING;
        }
    }
    Ok(())
}

/// The SVG with a `<title>` and a `<desc>` listing every panel's lines and their roles,
/// for screen readers and for the checks in `figures.rs`.
fn with_description(svg: String, plan: &Plan) -> String {
    let escape = |text: &str| {
        text.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let panels: Vec<String> = plan
        .panels
        .iter()
        .map(|panel| {
            let lines: Vec<String> = panel
                .lines
                .iter()
                .map(|line| {
                    let role = match line.role {
                        Role::Emphasised => "emphasised",
                        Role::Context => "context",
                        Role::Reference => "reference",
                    };
                    format!("{} ({role})", line.label)
                })
                .collect();
            format!(
                "{}: {}",
                panel.title.as_deref().unwrap_or("Lines"),
                lines.join("; ")
            )
        })
        .collect();
    let description = format!(
        "<title>{}</title>\n<desc>{}. {}</desc>\n",
        escape(&plan.title),
        escape(&panels.join(" | ")),
        escape(&plan.caption.join(" "))
    );
    match svg.find('>') {
        Some(end) => format!(
            "{}\n{}{}",
            &svg[..=end],
            description,
            svg[end + 1..].trim_start()
        ),
        None => svg,
    }
}

/// Every `font-size="…"` of an SVG document, in pixels.
#[cfg(test)]
pub fn font_sizes(svg: &str) -> Vec<f64> {
    svg.split("font-size=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next()?.parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure_axes::TickFormat;
    use crate::figure_plan::{Panel, PlannedAxis, PlotPoint};
    use plotters::style::RGBColor;

    fn plan(panels: usize) -> Plan {
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

    #[test]
    fn figures_are_750_pixels_wide_with_text_of_12_pixels_or_more() {
        for panels in [1, 3] {
            let svg = render(&plan(panels)).unwrap();
            assert!(svg.starts_with("<svg width=\"750\""), "{}", &svg[..80]);
            let sizes = font_sizes(&svg);
            assert!(!sizes.is_empty());
            for size in sizes {
                assert!(size >= SMALLEST_TEXT - 1e-6, "font-size {size}");
            }
        }
    }

    #[test]
    fn the_svg_carries_labels_title_caption_and_description() {
        let svg = render(&plan(2)).unwrap();
        for expected in [
            "GraphCompiled",
            "PyTorch",
            "A test &amp; its title",
            "Measured on a test machine.",
            "<title>A test &amp; its title</title>",
            "Panel 1: GraphCompiled (emphasised); Graph (context); PyTorch (reference)",
            "16 B",
            "64 B",
        ] {
            assert!(svg.contains(expected), "the SVG lacks {expected:?}");
        }
        // The spread is a band: a filled polygon.
        assert!(svg.contains("<polygon"), "no spread band");
    }

    #[test]
    fn a_long_title_wraps_within_the_width() {
        let mut long = plan(1);
        long.title = "Device-to-device copy bandwidth by buffer size (bytes read + bytes \
                      written; GPU timestamps where the device has them)"
            .to_string();
        let svg = render(&long).unwrap();
        let titles: Vec<&str> = svg
            .split("font-weight=\"bold\">\n")
            .skip(1)
            .map(|rest| rest.split('\n').next().unwrap())
            .filter(|line| !line.starts_with("Panel"))
            .collect();
        assert!(titles.len() >= 2, "{titles:?}");
        for line in titles {
            assert!(text_width(line, TITLE_SIZE) * 1.08 <= f64::from(WIDTH) - 2.0 * MARGIN);
        }
    }

    #[test]
    fn overlapping_end_labels_are_moved_apart() {
        // GraphCompiled and Graph end 2 % apart: their labels must not share a line.
        let svg = render(&plan(1)).unwrap();
        let y_of = |label: &str| -> f64 {
            let end = svg.find(&format!(">\n{label}\n</text>")).unwrap();
            let start = svg[..end].rfind("<text").unwrap();
            let tag = &svg[start..end];
            let value = tag.split("y=\"").nth(1).unwrap().split('"').next().unwrap();
            value.parse().unwrap()
        };
        assert!((y_of("GraphCompiled") - y_of("Graph")).abs() >= 15.0);
    }
}
