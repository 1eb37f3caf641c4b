//! Runs the standard workload through C++: `cargo run -p galaxy-cpp -- 64 8 1`
//! (size, depth, seed). The C++ side calls back into Rust to run it and summarises the
//! output; this program prints what C++ saw.

use std::process::ExitCode;

fn main() -> ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let parsed: Result<Vec<u64>, _> = arguments.iter().map(|text| text.parse::<u64>()).collect();
    let (size, depth, seed) = match parsed.as_deref() {
        Ok([size, depth, seed]) => (*size as usize, *depth as usize, *seed),
        Ok([]) => (64, 8, 1),
        _ => {
            eprintln!("usage: galaxy-cpp [SIZE DEPTH SEED], three whole numbers (default 64 8 1)");
            return ExitCode::FAILURE;
        }
    };
    match galaxy_cpp::summarize_standard_workload(size, depth, seed) {
        Ok(summary) => {
            println!(
                "C++ read a {}×{} output: sum {:.6}, largest {:.6}, first values {:?}",
                summary.rows, summary.columns, summary.sum, summary.largest, summary.first_values
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
