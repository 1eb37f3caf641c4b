//! A line chart of a [`TimeSeries`], drawn with egui's `Painter`: a rectangle, a polyline
//! and a few labels are all a live plot needs.
//!
//! egui is *immediate mode*: nothing here is kept between frames. Every frame the chart is
//! laid out and painted again from the series, so it always shows the newest values.

use egui::{Align2, Color32, FontId, Pos2, Rect, Sense, Shape, Stroke, Ui, Vec2, pos2};

use crate::time_series::TimeSeries;

// ANCHOR: line_chart
/// Draws `series` as a line across the available width, `height` points tall, with the
/// vertical axis from 0 to the largest value shown. Newest values are on the right.
pub fn line_chart(ui: &mut Ui, title: &str, series: &TimeSeries, height: f32, colour: Color32) {
    ui.label(egui::RichText::new(summary(title, series)).strong());
    let size = Vec2::new(ui.available_width(), height);
    let (rect, _response) = ui.allocate_exact_size(size, Sense::hover());
    let painter = ui.painter_at(rect);
    let visuals = ui.visuals();
    painter.rect_filled(rect, 2.0, visuals.extreme_bg_color);

    let text_colour = visuals.text_color();
    let font = FontId::proportional(12.0);
    let Some(top) = series.maximum().filter(|maximum| *maximum > 0.0) else {
        painter.text(
            rect.center(),
            Align2::CENTER_CENTER,
            "no data yet",
            font,
            text_colour,
        );
        return;
    };
    let points = chart_points(series, rect, top);
    painter.add(Shape::line(points, Stroke::new(1.5, colour)));
    painter.text(
        rect.left_top() + Vec2::new(4.0, 2.0),
        Align2::LEFT_TOP,
        format!("{} ms", format_milliseconds(top)),
        font.clone(),
        text_colour,
    );
    painter.text(
        rect.left_bottom() + Vec2::new(4.0, -2.0),
        Align2::LEFT_BOTTOM,
        "0",
        font,
        text_colour,
    );
}
// ANCHOR_END: line_chart

/// The screen position of each value: `capacity` slots across `rect`, the newest in the
/// rightmost, 0 ms at the bottom and `top` at the top. (Screen y grows downwards.)
pub fn chart_points(series: &TimeSeries, rect: Rect, top: f64) -> Vec<Pos2> {
    let slots = series.capacity().saturating_sub(1).max(1) as f32;
    let first_slot = series.capacity() - series.len();
    series
        .values()
        .enumerate()
        .map(|(index, value)| {
            let x = rect.left() + rect.width() * (first_slot + index) as f32 / slots;
            let fraction = (value / top).clamp(0.0, 1.0) as f32;
            pos2(x, rect.bottom() - rect.height() * fraction)
        })
        .collect()
}

/// `"title: latest 1.23 ms, median 1.20 ms"`.
pub fn summary(title: &str, series: &TimeSeries) -> String {
    match (series.latest(), series.median()) {
        (Some(latest), Some(median)) => format!(
            "{title}: latest {} ms, median {} ms",
            format_milliseconds(latest),
            format_milliseconds(median)
        ),
        _ => format!("{title}: —"),
    }
}

/// Fewer decimals for larger values, so that 0.012 and 1234 both read well.
pub fn format_milliseconds(milliseconds: f64) -> String {
    if milliseconds >= 100.0 {
        format!("{milliseconds:.0}")
    } else if milliseconds >= 10.0 {
        format!("{milliseconds:.1}")
    } else if milliseconds >= 1.0 {
        format!("{milliseconds:.2}")
    } else {
        format!("{milliseconds:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_value_is_at_the_right_edge_and_zero_at_the_bottom() {
        let mut series = TimeSeries::new(5);
        series.push(0.0);
        series.push(2.0);
        series.push(4.0);
        let rect = Rect::from_min_max(pos2(0.0, 0.0), pos2(100.0, 50.0));
        let points = chart_points(&series, rect, 4.0);
        assert_eq!(points.len(), 3);
        assert_eq!(
            points[2],
            pos2(100.0, 0.0),
            "the largest value touches the top"
        );
        assert_eq!(points[0], pos2(50.0, 50.0), "two empty slots on the left");
        assert_eq!(points[1], pos2(75.0, 25.0));
    }

    #[test]
    fn summaries_show_fewer_decimals_for_larger_values() {
        let mut series = TimeSeries::new(4);
        assert_eq!(summary("Run", &series), "Run: —");
        series.push(0.01234);
        series.push(1234.0);
        assert_eq!(
            summary("Run", &series),
            "Run: latest 1234 ms, median 617 ms"
        );
        assert_eq!(format_milliseconds(0.01234), "0.012");
        assert_eq!(format_milliseconds(12.345), "12.3");
    }
}
