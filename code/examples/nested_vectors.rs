//! Sums a matrix stored as one flat `Vec<f32>` and as a `Vec<Vec<f32>>`, row by row and
//! column by column, and prints the time per value.
//!
//! ```sh
//! cargo run --release --example nested_vectors
//! ```
//!
//! Every matrix holds 4 Mi values (16 MiB); only the shape changes, from very short rows
//! to long ones. The functions measured are in `galaxy::memory::nested_vectors`.

use std::hint::black_box;

use galaxy::Tensor2d;
use galaxy::memory::nested_vectors::{
    NestedMatrix, sum_columns_first_flat, sum_columns_first_nested, sum_rows_first_flat,
    sum_rows_first_nested,
};
use galaxy::memory::timing::{TimingPlan, median_nanoseconds_per_item};

const VALUES: usize = 1 << 22;

fn main() {
    println!("Time per value (ns) for a matrix of {VALUES} values\n");
    println!(
        "{:>8} {:>8} | {:>9} {:>9} {:>11} | {:>9} {:>9}",
        "rows", "columns", "flat", "nested", "scattered", "flat", "nested"
    );
    println!(
        "{:>17} | {:^31} | {:^19}",
        "", "rows first", "columns first"
    );
    for columns in [1, 4, 64, 1024, 4096] {
        let rows = VALUES / columns;
        let flat = Tensor2d::random(rows, columns, -1.0..=1.0, 1);
        let nested = NestedMatrix::from_tensor(&flat);
        let scattered = NestedMatrix::from_tensor_scattered(&flat, 2);
        let time = |sum: &dyn Fn() -> f32| {
            median_nanoseconds_per_item(TimingPlan::FULL, rows * columns, || {
                black_box(sum());
            })
        };
        println!(
            "{rows:>8} {columns:>8} | {:>9.2} {:>9.2} {:>11.2} | {:>9.2} {:>9.2}",
            time(&|| sum_rows_first_flat(black_box(&flat))),
            time(&|| sum_rows_first_nested(black_box(&nested))),
            time(&|| sum_rows_first_nested(black_box(&scattered))),
            time(&|| sum_columns_first_flat(black_box(&flat))),
            time(&|| sum_columns_first_nested(black_box(&nested))),
        );
    }
    println!(
        "\nWhat to look for: with long rows, flat and nested are equally fast row by row; \
         with\nshort rows the nested matrix pays for a pointer and a separate allocation \
         per row, and\nfar more when its rows are scattered. Column by column, consecutive \
         reads are a whole\nrow apart: with long rows, both layouts are many times \
         slower than row by row."
    );
}
