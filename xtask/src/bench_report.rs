//! `cargo xtask bench-report [-- options]`: runs the crate's `bench_report` binary in
//! release mode (see `galaxy::bench::report`), passing the options on, e.g.
//! `cargo xtask bench-report -- --skip-uncached --sizes 256 --out report.md`.

use std::process::Command;

use crate::tools::repository_root;

pub fn run(arguments: &[String]) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let status = Command::new(cargo)
        .current_dir(repository_root())
        .args([
            "run",
            "--release",
            "--package",
            "galaxy",
            "--bin",
            "bench_report",
            "--",
        ])
        .args(arguments)
        .status()
        .map_err(|error| format!("could not start cargo: {error}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the benchmark report failed ({status})"))
    }
}
