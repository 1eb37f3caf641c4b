//! Where everything of a figure goes on the page, worked out before anything is drawn.
//!
//! From top to bottom: the title, the subtitle, the y axis title, the rows of panels, the
//! x axis title and the caption; each takes the height its wrapped text needs, and the
//! figure is as tall as their sum. Across: the y tick labels, then per column of panels
//! the plot and, right of it, the room its lines' direct labels need.

use crate::figure_axes::{Scale, tick_label, x_range, y_axis};
use crate::figure_labels::{text_width, wrap};
use crate::figure_plan::Plan;

use super::direct_labels::label_lines;
use super::{
    AXIS_TITLE_SIZE, CAPTION_SIZE, COLUMN_GAP, LABEL_GAP, MARGIN, PANEL_TITLE_SIZE, SUBTITLE_SIZE,
    TICK_SIZE, TITLE_SIZE, WIDTH, Y_TICK_GAP,
};

/// Where one panel's plot lies on the page.
pub(super) struct PanelBox {
    pub(super) left: f64,
    pub(super) top: f64,
    pub(super) width: f64,
    pub(super) height: f64,
    pub(super) title_top: f64,
    /// Only the panels of the first column label the shared y axis, and only those of
    /// the bottom row the shared x axis.
    pub(super) first_column: bool,
    pub(super) bottom_row: bool,
}

/// Lines of wrapped text, the first at `top`.
pub(super) struct TextBlock {
    pub(super) lines: Vec<String>,
    pub(super) top: f64,
}

/// The whole figure's geometry, and the axes every panel shares.
pub(super) struct Layout {
    pub(super) height: u32,
    pub(super) title: TextBlock,
    pub(super) subtitle: TextBlock,
    pub(super) y_title_top: f64,
    pub(super) boxes: Vec<PanelBox>,
    /// The left edge of the first column of plots.
    pub(super) plots_left: f64,
    pub(super) x_title_top: f64,
    pub(super) caption: TextBlock,
    /// The width at which a direct label wraps onto another line.
    pub(super) label_limit: f64,
    /// The ends of the x axis and of the y axis, in the data's units.
    x_axis: (f64, f64),
    y_axis: (f64, f64),
    pub(super) y_ticks: Vec<f64>,
    /// Every x value of the data, where the x ticks may go.
    pub(super) x_values: Vec<f64>,
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

impl Layout {
    pub(super) fn of(plan: &Plan) -> Layout {
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
        let mut cursor = MARGIN;
        // Bold text is about 8 % wider than the estimate for regular text.
        let title = TextBlock {
            lines: wrap(&plan.title, text_width_available / 1.08, TITLE_SIZE),
            top: cursor,
        };
        cursor += title.lines.len() as f64 * (TITLE_SIZE + 5.0) + 3.0;
        let subtitle = TextBlock {
            lines: plan
                .subtitle
                .as_deref()
                .map(|text| wrap(text, text_width_available, SUBTITLE_SIZE))
                .unwrap_or_default(),
            top: cursor,
        };
        cursor += subtitle.lines.len() as f64 * (SUBTITLE_SIZE + 5.0);
        cursor += 6.0;
        let y_title_top = cursor;
        cursor += AXIS_TITLE_SIZE + 10.0;
        let has_panel_titles = plan.panels.iter().any(|panel| panel.title.is_some());

        // Horizontal layout: the y tick labels, then per column the plot and the room its
        // lines' labels need on the right.
        let widest_tick = y_ticks
            .iter()
            .map(|tick| text_width(&tick_label(*tick, plan.y.format), TICK_SIZE))
            .fold(0.0, f64::max);
        let plots_left = MARGIN + widest_tick + 10.0;
        let column_width =
            (f64::from(WIDTH) - MARGIN - plots_left - (columns - 1) as f64 * COLUMN_GAP)
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
        let caption = TextBlock {
            lines: plan
                .caption
                .iter()
                .flat_map(|sentence| wrap(sentence, text_width_available, CAPTION_SIZE))
                .collect(),
            top: cursor,
        };
        cursor += caption.lines.len() as f64 * (CAPTION_SIZE + 4.0) + MARGIN;

        Layout {
            height: cursor.ceil() as u32,
            title,
            subtitle,
            y_title_top,
            boxes,
            plots_left,
            x_title_top,
            caption,
            label_limit,
            x_axis: x_range(x_low, x_high, plan.x.logarithmic),
            y_axis: (y_axis_low, y_axis_high),
            y_ticks,
            x_values,
        }
    }

    /// The x and y scales of the panel in `frame`: the shared axes, on its pixels.
    pub(super) fn scales(&self, plan: &Plan, frame: &PanelBox) -> (Scale, Scale) {
        let x_scale = Scale {
            low: self.x_axis.0,
            high: self.x_axis.1,
            logarithmic: plan.x.logarithmic,
            start: frame.left,
            end: frame.left + frame.width,
        };
        let y_scale = Scale {
            low: self.y_axis.0,
            high: self.y_axis.1,
            logarithmic: plan.y.logarithmic,
            start: frame.top + frame.height,
            end: frame.top,
        };
        (x_scale, y_scale)
    }

    /// The right edge of the rightmost plot.
    pub(super) fn plots_right(&self) -> f64 {
        self.boxes
            .iter()
            .map(|frame| frame.left + frame.width)
            .fold(self.plots_left, f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_plan::plan;
    use super::*;

    #[test]
    fn panels_stack_in_rows_below_the_titles_and_above_the_caption() {
        let mut two_by_two = plan(4);
        two_by_two.columns = 2;
        let layout = Layout::of(&two_by_two);
        let [first, second, third, fourth] = &layout.boxes[..] else {
            panic!("four panels, four boxes");
        };
        assert_eq!(first.top, second.top);
        assert!(third.top > first.top + first.height);
        assert!(second.left > first.left + first.width);
        assert!(first.first_column && !second.first_column && third.first_column);
        assert!(!first.bottom_row && third.bottom_row && fourth.bottom_row);
        assert!(first.title_top > layout.y_title_top);
        assert!(layout.x_title_top > third.top + third.height);
        assert!(layout.caption.top > layout.x_title_top);
        assert!(f64::from(layout.height) > layout.caption.top);
        assert!(layout.plots_right() <= f64::from(WIDTH));
    }
}
