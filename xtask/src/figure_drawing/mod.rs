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
//! shapes and the text. The drawing reads top-down: `layout.rs` places everything,
//! `panel.rs` draws a panel's axes, markers and lines, `direct_labels.rs` names the
//! lines, and this file puts the pieces on the page with the title and the caption.

mod direct_labels;
mod layout;
mod panel;
#[cfg(test)]
mod test_plan;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontDesc, FontFamily, FontStyle};
use thiserror::Error;

use crate::figure_plan::Plan;
use crate::figure_specs::Role;

use direct_labels::draw_direct_labels;
use layout::{Layout, TextBlock};
use panel::{draw_axes, draw_lines, draw_markers};

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

/// Text of `size` pixels in `colour`, anchored at the given side (`horizontal`) and
/// edge (`vertical`) of its box.
fn text_style(
    size: f64,
    bold: bool,
    colour: RGBColor,
    horizontal: HPos,
    vertical: VPos,
) -> TextStyle<'static> {
    TextStyle {
        font: font(size, bold),
        color: colour.to_backend_color(),
        pos: Pos::new(horizontal, vertical),
    }
}

/// A position in the whole pixels plotters draws at.
fn at(x: f64, y: f64) -> (i32, i32) {
    (x.round() as i32, y.round() as i32)
}

/// The SVG image being drawn on.
type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// Draws `plan` and returns the SVG document.
pub fn render(plan: &Plan) -> Result<String, DrawError> {
    let layout = Layout::of(plan);
    let mut svg = String::new();
    draw(plan, &layout, &mut svg).map_err(|message| DrawError {
        id: plan.id.clone(),
        message,
    })?;
    Ok(with_description(svg, plan))
}

/// Draws every part of the figure where `layout` puts it, into `svg`.
fn draw(plan: &Plan, layout: &Layout, svg: &mut String) -> Result<(), String> {
    let root = SVGBackend::with_string(svg, (WIDTH, layout.height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let left_top = |size: f64, bold: bool, colour: RGBColor| {
        text_style(size, bold, colour, HPos::Left, VPos::Top)
    };
    draw_text_block(
        &root,
        &layout.title,
        TITLE_SIZE + 5.0,
        &left_top(TITLE_SIZE, true, TEXT),
    )?;
    draw_text_block(
        &root,
        &layout.subtitle,
        SUBTITLE_SIZE + 5.0,
        &left_top(SUBTITLE_SIZE, false, SOFT_TEXT),
    )?;
    draw_text(
        &root,
        &plan.y.label,
        MARGIN,
        layout.y_title_top,
        &left_top(AXIS_TITLE_SIZE, false, TEXT),
    )?;

    for (panel, frame) in plan.panels.iter().zip(&layout.boxes) {
        let (x_scale, y_scale) = layout.scales(plan, frame);
        if let Some(title) = &panel.title {
            draw_text(
                &root,
                title,
                frame.left,
                frame.title_top,
                &left_top(PANEL_TITLE_SIZE, true, TEXT),
            )?;
        }
        draw_axes(
            &root,
            plan,
            frame,
            &x_scale,
            &y_scale,
            &layout.x_values,
            &layout.y_ticks,
        )?;
        draw_markers(&root, plan, frame, &x_scale)?;
        draw_lines(&root, &panel.lines, &x_scale, &y_scale)?;
        draw_direct_labels(
            &root,
            &panel.lines,
            frame,
            &x_scale,
            &y_scale,
            layout.label_limit,
        )?;
    }

    draw_text(
        &root,
        &plan.x.label,
        (layout.plots_left + layout.plots_right()) / 2.0,
        layout.x_title_top,
        &text_style(AXIS_TITLE_SIZE, false, TEXT, HPos::Center, VPos::Top),
    )?;
    draw_text_block(
        &root,
        &layout.caption,
        CAPTION_SIZE + 4.0,
        &left_top(CAPTION_SIZE, false, SOFT_TEXT),
    )?;
    root.present().map_err(|e| e.to_string())
}

/// One piece of text with its anchor at (`x`, `y`).
fn draw_text(root: &Area, content: &str, x: f64, y: f64, style: &TextStyle) -> Result<(), String> {
    root.draw(&Text::new(content.to_string(), at(x, y), style.clone()))
        .map_err(|e| e.to_string())
}

/// The lines of `block` at the left margin, one every `step` pixels down.
fn draw_text_block(
    root: &Area,
    block: &TextBlock,
    step: f64,
    style: &TextStyle,
) -> Result<(), String> {
    for (index, line) in block.lines.iter().enumerate() {
        draw_text(root, line, MARGIN, block.top + index as f64 * step, style)?;
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
    use super::test_plan::plan;
    use super::*;
    use crate::figure_labels::text_width;

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
}
