//! The CPU's side of the report: the measured FMA peak that every CPU figure is a fraction
//! of, and the anchors (NumPy and ONNX Runtime on the standard workload) beside `CpuGraph`.
//!
//! The anchors run in Python (`anchors/onnx/cpu_anchor.py`), interleaved with the crate's
//! CPU modes, and write their results as figure CSV files; `bench_report --cpu-anchors DIR`
//! reads those files and puts each point's contenders side by side, with `CpuGraph`'s time
//! as a multiple of ONNX Runtime's.

use std::path::Path;

use crate::bench::cpu_peak::measure_peak;
use crate::bench::repeats::Repeats;
use crate::bench::report::{Report, ReportOptions, ReportRow, significant};
use crate::bench::sweeps::SweepError;
use crate::figure::{Figure, Series};

/// The series of the anchor files that become rows, in this order.
const SERIES: [&str; 4] = ["CpuGraph", "ONNX Runtime", "NumPy", "Cpu"];

/// Measures the fp32 FMA peak on one core and on every core and adds a row for each; then
/// writes every `CPU linear` row's GFLOP/s as a fraction of the all-core peak.
pub fn cpu_peak(options: &ReportOptions, report: &mut Report) {
    let threads = rayon::current_num_threads();
    let seconds = if options.samples > 1 { 0.2 } else { 0.005 };
    let peaks: Vec<_> = [1, threads]
        .into_iter()
        .map(|count| measure_peak(count, seconds, options.repeats.max(1) + 2))
        .collect();
    for peak in &peaks {
        report.rows.push(ReportRow {
            part: "CPU peak",
            name: format!("fp32 FMA peak, {}", peak.width.name()),
            size: format!("{} thread(s)", peak.threads),
            milliseconds: None,
            gigaflops_per_second: Some(peak.gigaflops_per_second),
            compared: String::new(),
            samples: String::new(),
        });
    }
    let all_cores = peaks.last().expect("two measurements").gigaflops_per_second;
    for row in report
        .rows
        .iter_mut()
        .filter(|row| row.part == "CPU linear")
    {
        if let Some(rate) = row.gigaflops_per_second {
            row.compared = format!("{}, {:.0}% of peak", row.compared, 100.0 * rate / all_cores);
        }
    }
    report.notes.push(format!(
        "CPU peak: {} independent FMA chains in the widest vector registers, on one thread and \
         on {threads}; \"% of peak\" is of the {threads}-thread peak.",
        crate::bench::cpu_peak::CHAINS
    ));
}

// ANCHOR: anchor_rows
/// Reads `cpu-anchors-by-size.csv` and `cpu-anchors-by-depth.csv` from `directory` and
/// adds, for every point, a row per contender, `CpuGraph`'s compared with ONNX Runtime's.
pub fn anchor_rows(directory: &Path, report: &mut Report) -> Result<(), SweepError> {
    for (file, what) in [
        ("cpu-anchors-by-size.csv", "size {x}, depth 64"),
        ("cpu-anchors-by-depth.csv", "size 256, depth {x}"),
    ] {
        let figure = Figure::read_csv(&directory.join(file))?;
        let series = |name: &str| figure.series.iter().find(|series| series.name == name);
        let Some(reference) = series("ONNX Runtime") else {
            continue;
        };
        for point in &reference.points {
            let x = point.x;
            // The sweeps' sizes and depths are whole numbers.
            let size = what.replace("{x}", &(x as usize).to_string());
            for name in SERIES {
                let Some(found) = series(name).and_then(|series| time_at(series, x)) else {
                    continue;
                };
                let compared = if name == "ONNX Runtime" {
                    String::new()
                } else {
                    format!("{}× ONNX Runtime", significant(found.median() / point.y))
                };
                report.rows.push(ReportRow {
                    part: "CPU anchors",
                    name: name.to_string(),
                    size: size.clone(),
                    milliseconds: Some(found),
                    gigaflops_per_second: None,
                    compared,
                    samples: String::new(),
                });
            }
        }
        report.notes.push(format!(
            "CPU anchors from {} ({}): {}",
            directory.join(file).display(),
            figure.hardware,
            figure.command
        ));
    }
    Ok(())
}
// ANCHOR_END: anchor_rows

/// The time of `series` at `x` as repeats: median, and the range when the file has one.
fn time_at(series: &Series, x: f64) -> Option<Repeats> {
    let index = series.points.iter().position(|point| point.x == x)?;
    let median = series.points[index].y;
    let values = match series.spreads.get(index).copied().flatten() {
        Some(spread) => vec![spread.minimum, median, spread.maximum],
        None => vec![median],
    };
    Repeats::new(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty_report() -> Report {
        Report {
            hardware: String::new(),
            command: String::new(),
            rows: Vec::new(),
            notes: Vec::new(),
        }
    }

    #[test]
    fn anchor_files_become_rows_compared_with_onnx_runtime() {
        let directory = std::env::temp_dir().join(format!("cpu-anchors-{}", std::process::id()));
        std::fs::create_dir_all(&directory).unwrap();
        let header = "# title: t\n# x: size\n# y: ms\n# hardware: h\n# command: c (d)\n";
        std::fs::write(
            directory.join("cpu-anchors-by-size.csv"),
            format!(
                "{header}series,x,y,y_min,y_max\nCpuGraph,4,0.01,0.009,0.02\n\
                 ONNX Runtime,4,0.04,0.03,0.05\nNumPy,4,0.2,0.1,0.3\n"
            ),
        )
        .unwrap();
        std::fs::write(
            directory.join("cpu-anchors-by-depth.csv"),
            format!("{header}series,x,y,y_min,y_max\nONNX Runtime,8,2,1,3\n"),
        )
        .unwrap();
        let mut report = empty_report();
        anchor_rows(&directory, &mut report).unwrap();
        let names: Vec<&str> = report.rows.iter().map(|row| row.name.as_str()).collect();
        assert_eq!(names, ["CpuGraph", "ONNX Runtime", "NumPy", "ONNX Runtime"]);
        assert_eq!(report.rows[0].compared, "0.2500× ONNX Runtime");
        assert_eq!(report.rows[0].size, "size 4, depth 64");
        assert_eq!(report.rows[3].size, "size 256, depth 8");
        let cpu_graph = report.rows[0].milliseconds.as_ref().unwrap();
        assert_eq!(cpu_graph.median(), 0.01);
        std::fs::remove_dir_all(&directory).unwrap();
    }

    #[test]
    fn a_missing_anchor_file_is_an_error_that_names_it() {
        let mut report = empty_report();
        let error = anchor_rows(Path::new("/nonexistent-anchors"), &mut report).unwrap_err();
        assert!(
            error.to_string().contains("cpu-anchors-by-size.csv"),
            "{error}"
        );
    }

    #[test]
    fn the_peak_rows_and_the_fractions_are_added() {
        let mut report = empty_report();
        report.rows.push(ReportRow {
            part: "CPU linear",
            name: "linear_parallel".to_string(),
            size: "16³".to_string(),
            milliseconds: None,
            gigaflops_per_second: Some(1.0),
            compared: "50% of matrixmultiply::sgemm".to_string(),
            samples: String::new(),
        });
        let options = ReportOptions {
            samples: 1,
            ..ReportOptions::default()
        };
        cpu_peak(&options, &mut report);
        assert_eq!(
            report
                .rows
                .iter()
                .filter(|row| row.part == "CPU peak")
                .count(),
            2
        );
        assert!(
            report.rows[0].compared.ends_with("of peak"),
            "{:?}",
            report.rows[0]
        );
    }
}
