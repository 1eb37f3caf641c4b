//! Measurement helpers shared by the criterion benches and the figure sweeps.
//!
//! - [`figure`]: the data behind one figure (named series of points) and its CSV form.

pub mod figure;

pub use figure::{Axis, Figure, FigureError, Point, Series};
