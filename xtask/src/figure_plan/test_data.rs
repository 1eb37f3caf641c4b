//! The data and specs the planning's unit tests plan: a small CSV file of kernels
//! (GFLOP/s by matrix size, both axes logarithmic) and specs that pick its series.

use std::path::Path;

use crate::figure::Figure;
use crate::figure_specs::{FigureSpec, LineSpec, PanelSpec, Role, Source};

use super::{Plan, PlanError, plan};

/// A figure of `rows` (`series,x,y` or, with a spread, `series,x,y,y_min,y_max`).
pub(super) fn data(rows: &str) -> Figure {
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

/// A spec of one panel with `lines`.
pub(super) fn spec_with(lines: Vec<LineSpec>) -> FigureSpec {
    let mut spec = FigureSpec::new("kernels", "kernels");
    spec.panels.push(PanelSpec { title: None, lines });
    spec
}

/// A line showing the series `name` in `role`.
pub(super) fn series(name: &str, role: Role) -> LineSpec {
    LineSpec {
        source: Source::Series(name.to_string()),
        label: None,
        role,
        tint_of: None,
    }
}

/// `spec` planned from `data`, as if read from `figures/data/kernels.csv`.
pub(super) fn plan_of(spec: &FigureSpec, data: &Figure) -> Result<Plan, PlanError> {
    plan(
        spec,
        data,
        "figures/data/kernels.csv",
        Path::new("/nonexistent"),
    )
}
