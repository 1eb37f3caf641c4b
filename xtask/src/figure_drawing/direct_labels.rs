//! Direct labels: each line's name at its last point, in the line's colour, instead of
//! a legend the reader has to match by colour. Where names would overlap they are moved
//! apart (`figure_labels.rs` decides where) and joined to their line by a thin leader.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use crate::figure_axes::Scale;
use crate::figure_labels::{
    LabelBox, LabelRequest, Segment, crossings, place_labels, text_width, wrap,
};
use crate::figure_plan::Line;
use crate::figure_specs::Role;

use super::layout::PanelBox;
use super::{
    Area, CONTEXT_LABEL_SIZE, LABEL_GAP, LABEL_SIZE, LINE_SPACING, NEAR_THE_EDGE, at, text_style,
};

/// Context lines are labelled in the smallest text, the others a little larger.
fn label_size(line: &Line) -> f64 {
    if line.role == Role::Context {
        CONTEXT_LABEL_SIZE
    } else {
        LABEL_SIZE
    }
}

/// The lines of a line's direct label, wrapped at `limit` pixels, with their font size.
pub(super) fn label_lines(line: &Line, limit: f64) -> Vec<(String, f64)> {
    let size = label_size(line);
    wrap(&line.label, limit, size)
        .into_iter()
        .map(|text| (text, size))
        .collect()
}

/// Each line's name at its last point, moved apart where names would overlap. A line
/// that ends near the right edge of the plot is labelled in the column right of it, so
/// that those labels line up; one that ends early is labelled beside its last point.
pub(super) fn draw_direct_labels(
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

#[cfg(test)]
mod tests {
    use super::super::render;
    use super::super::test_plan::plan;

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
