//! Module 0: the Rust idioms a reader who makes code fast needs, each one measured.
//!
//! One idea per file, in the order the chapters teach them:
//!
//! - [`layouts`]: what a type is in bytes: size, alignment, padding and niches.
//! - [`clones`]: move, `Copy` and `Clone`, and a clone in a hot loop against a borrow.
//! - [`bounds_checks`]: indexed loops with and without the checks the compiler can remove.
//! - [`iterators`]: the same loops as iterator chains, laziness, and a reduction that only
//!   vectorises once its additions are reordered.
//! - [`shared_counts`]: what a second owner costs: `Rc` against `Arc`, on one and two
//!   threads.
//! - [`dispatch`]: generics, trait objects and enums: three ways to choose an operation.
//! - [`errors`]: `Option`, `Result`, `?` and a `thiserror` error type.
//! - [`measure`]: repeating a measurement and keeping its median and range for a figure.
//!
//! The files use nothing but the standard library and `thiserror` (and [`measure`], the
//! crate's figures; [`clones`], the dot product of [`iterators`]), so the snippets the
//! book shows from them also run on the Rust playground.

pub mod bounds_checks;
pub mod clones;
pub mod dispatch;
pub mod errors;
pub mod iterators;
pub mod layouts;
pub mod measure;
pub mod shared_counts;
