//! The matrix-multiplication yardstick: what cuBLAS reaches on the GPU of the book's
//! figures, read from the output of the PyTorch anchor script.
//!
//! `anchors/pytorch/mlp_anchor.py` writes `pytorch-sgemm.csv` in the figure format: `#`
//! header lines, then `series,x,y[,y_min,y_max]` rows whose series is `cuBLAS SGEMM`, x the
//! matrix size n and y the TFLOP/s of an n×n·n×n fp32 product with TF32 off. The file is kept
//! beside the H100 data it belongs to (`figures/data/h100-2026-11-24/pytorch/`), and
//! `linear-kernels-gpu` draws it as a reference beside the crate's kernels.

use std::path::Path;

use thiserror::Error;

/// The series name the anchor script gives the cuBLAS measurements.
const SERIES: &str = "cuBLAS SGEMM";

/// Why the yardstick's output could not be read.
#[derive(Debug, Error)]
pub enum YardstickError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}:{line}: expected `{SERIES},<n>,<TFLOP/s>[,<min>,<max>]`, found `{found}`")]
    Malformed {
        path: String,
        line: usize,
        found: String,
    },
    #[error("{path}: no `{SERIES}` row (the matrix-multiplication yardstick)")]
    Missing { path: String },
}

/// The `(n, GFLOP/s)` pairs of the file's `cuBLAS SGEMM` rows, in file order.
pub fn read_sgemm_yardstick(path: &Path) -> Result<Vec<(f64, f64)>, YardstickError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| YardstickError::Io {
        path: shown.clone(),
        source,
    })?;
    parse_sgemm_yardstick(&shown, &text)
}

fn parse_sgemm_yardstick(path: &str, text: &str) -> Result<Vec<(f64, f64)>, YardstickError> {
    let mut points = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let Some(rest) = line
            .strip_prefix(SERIES)
            .and_then(|rest| rest.strip_prefix(','))
        else {
            continue;
        };
        let malformed = || YardstickError::Malformed {
            path: path.to_string(),
            line: index + 1,
            found: line.to_string(),
        };
        let mut fields = rest.split(',');
        let size = fields.next().and_then(|value| value.parse::<f64>().ok());
        let tflops = fields.next().and_then(|value| value.parse::<f64>().ok());
        let (Some(size), Some(tflops)) = (size, tflops) else {
            return Err(malformed());
        };
        points.push((size, tflops * 1000.0));
    }
    if points.is_empty() {
        return Err(YardstickError::Missing {
            path: path.to_string(),
        });
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sgemm_rows_are_read_in_gflops() {
        let text = "# title: fp32 matrix product in cuBLAS (TF32 off)\n\
                    series,x,y,y_min,y_max\n\
                    cuBLAS SGEMM,1024,28.15,27.9,28.3\ncuBLAS SGEMM,2048,47.5,47.1,48.0\n";
        let points = parse_sgemm_yardstick("pytorch-sgemm.csv", text).unwrap();
        assert_eq!(points.len(), 2);
        assert_eq!((points[0].0, points[1].0), (1024.0, 2048.0));
        assert!((points[0].1 - 28150.0).abs() < 1e-6, "{points:?}");
        assert!((points[1].1 - 47500.0).abs() < 1e-6, "{points:?}");
    }

    #[test]
    fn broken_and_missing_rows_are_errors_naming_the_file() {
        let broken = parse_sgemm_yardstick("pytorch-sgemm.csv", "cuBLAS SGEMM,1024,fast\n")
            .unwrap_err()
            .to_string();
        assert!(broken.starts_with("pytorch-sgemm.csv:1:"), "{broken}");
        let missing = parse_sgemm_yardstick("pytorch-sgemm.csv", "series,x,y\n")
            .unwrap_err()
            .to_string();
        assert!(
            missing.starts_with("pytorch-sgemm.csv:") && missing.contains("no `cuBLAS SGEMM`"),
            "{missing}"
        );
    }
}
