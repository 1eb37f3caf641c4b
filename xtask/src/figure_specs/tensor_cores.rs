//! The figures of tensor cores (see the parent module for what a spec holds). Kept in its own
//! file so that each part of the book adds its figures without touching the others'.

use super::*;

/// The figures this part of the book draws.
pub(super) fn specs() -> Vec<FigureSpec> {
    Vec::new()
}
