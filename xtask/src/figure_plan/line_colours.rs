//! The colour of every line, by its role: the emphasised lines in the book's colour for
//! their name (`figure_colours.rs`), context lines grey or a light tint of the line they
//! are the "before" of, references in the table's grey or black. Each label gets a
//! colour of the same hue that reads on white.

use plotters::style::RGBColor;

use crate::figure_colours::{
    CONTEXT_GREY, CONTEXT_TEXT, REFERENCE_GREY, figure_colours, table_colour, text_colour,
};
use crate::figure_specs::Role;

use super::{Line, Panel, PlanError, PlannedPanel};

/// The panels with their lines' colours: one per emphasised name across the whole
/// figure, so that a name keeps its colour from panel to panel; grey, or a tint of the
/// emphasised line it is paired with, for context; the table's grey or black for
/// references. `path` and `id` name the file and figure in an error.
pub(super) fn colour_lines(
    panels: &[PlannedPanel],
    path: &str,
    id: &str,
) -> Result<Vec<Panel>, PlanError> {
    let mut emphasised_names: Vec<&str> = Vec::new();
    for (_, lines) in panels {
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
    for (title, lines) in panels {
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
                            id: id.to_string(),
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

    Ok(planned_panels)
}

/// `colour` moved towards white by `amount` (0: unchanged, 1: white).
fn lighten(colour: RGBColor, amount: f64) -> RGBColor {
    let RGBColor(r, g, b) = colour;
    let towards_white =
        |channel: u8| (f64::from(channel) + (255.0 - f64::from(channel)) * amount).round() as u8;
    RGBColor(towards_white(r), towards_white(g), towards_white(b))
}

#[cfg(test)]
mod tests {
    use super::super::test_data::{data, plan_of, series, spec_with};
    use super::*;

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
}
