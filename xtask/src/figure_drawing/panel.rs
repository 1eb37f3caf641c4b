//! One panel's plot: the grid and axes it shares with the others, the markers, and its
//! lines with their spreads and point marks. The direct labels come last, in
//! `direct_labels.rs`, once every line is down.

use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::figure_axes::{Scale, tick_label, x_ticks};
use crate::figure_colours::CONTEXT_TEXT;
use crate::figure_plan::{Line, Plan};
use crate::figure_specs::Role;

use super::layout::PanelBox;
use super::{AXIS, Area, GRID, MARKER_LINE, SMALLEST_TEXT, TEXT, TICK_SIZE, at, text_style};

/// Grid lines at the ticks, the two axis lines, tick marks, and tick labels on the outer
/// panels only (the axes are shared).
pub(super) fn draw_axes(
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
pub(super) fn draw_markers(
    root: &Area,
    plan: &Plan,
    frame: &PanelBox,
    x_scale: &Scale,
) -> Result<(), String> {
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
pub(super) fn draw_lines(
    root: &Area,
    lines: &[Line],
    x_scale: &Scale,
    y_scale: &Scale,
) -> Result<(), String> {
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
