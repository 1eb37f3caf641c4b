//! The figures of the `galaxy::numbers` pages (see the parent module for what a spec holds).
//! Kept in its own file so that each part of the book adds its figures without touching
//! the others'.

use super::*;

/// The figures this part of the book draws.
pub(super) fn specs() -> Vec<FigureSpec> {
    let mut specs = Vec::new();
    specs.extend(data_layout_specs());
    specs
}

/// The integer, compression, Z-order and depth-buffer figures.
fn data_layout_specs() -> Vec<FigureSpec> {
    vec![
        FigureSpec::new("numbers-sparse-positions", "numbers-sparse-positions")
            .subtitle("Delta coding against a bitmask: which is smaller depends on how many are kept")
            .panel(
                None,
                vec![
                    emphasised("delta + LEB128"),
                    emphasised("bitmask"),
                    context("32-bit indices"),
                    context("run-length mask"),
                ],
            ),
        FigureSpec::new("numbers-morton", "numbers-morton")
            .subtitle("Walking down the columns: row-major slows once the image outgrows the caches; Z-order does not")
            .panel(
                None,
                vec![
                    emphasised("row-major, by columns"),
                    emphasised("Z-order, by columns"),
                    context("row-major, by rows"),
                    context("Z-order, by rows"),
                ],
            ),
        FigureSpec::new("numbers-depth-precision", "numbers-depth-precision")
            .subtitle("Standard f32 resolves no more than 24-bit fixed point; reversed f32 keeps a constant relative precision")
            .panel(
                None,
                vec![
                    emphasised("standard, f32"),
                    emphasised("reversed, f32"),
                    context("24-bit fixed point"),
                    context("reversed, infinite far, f32"),
                ],
            )
            .note("Computed exactly from the number formats, not timed."),
    ]
}
