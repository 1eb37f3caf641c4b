//! The matrix-multiplication yardstick: what cuBLAS reaches on the GPU of the book's
//! figures, read from the raw output of the PyTorch measurement script.
//!
//! The script (`shared/tools/torch_mlp_anchor.py`, described in the graph-compiler
//! chapter) prints one `CSV,sgemm,<n>,tflops=<t>` line per matrix size after its
//! execution-mode rows. Its output is kept beside the figures it feeds
//! (`figures/data/h100-2026-11-21/torch.csv`), and `linear-kernels-gpu` draws those lines
//! as a reference beside the crate's kernels.

use std::path::Path;

use thiserror::Error;

/// Why the yardstick's output could not be read.
#[derive(Debug, Error)]
pub enum YardstickError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}:{line}: expected `CSV,sgemm,<n>,tflops=<number>`, found `{found}`")]
    Malformed {
        path: String,
        line: usize,
        found: String,
    },
    #[error("{path}: no `CSV,sgemm,…` line (the matrix-multiplication yardstick)")]
    Missing { path: String },
}

/// The `(n, GFLOP/s)` pairs of the file's `CSV,sgemm,…` lines, in file order.
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
        let Some(rest) = line.strip_prefix("CSV,sgemm,") else {
            continue;
        };
        let malformed = || YardstickError::Malformed {
            path: path.to_string(),
            line: index + 1,
            found: line.to_string(),
        };
        let (size, throughput) = rest.split_once(',').ok_or_else(malformed)?;
        let tflops = throughput
            .strip_prefix("tflops=")
            .and_then(|value| value.parse::<f64>().ok())
            .ok_or_else(malformed)?;
        let size = size.parse::<f64>().map_err(|_| malformed())?;
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
    fn the_sgemm_lines_are_read_in_gflops() {
        let text = "device, NVIDIA H100 80GB HBM3 fp32\n\
                    CSV,torch,4,64,eager_s=1.0e-03,cudagraph_s=2.1e-04\n\
                    CSV,sgemm,1024,tflops=28.15\nCSV,sgemm,2048,tflops=47.5\n";
        let points = parse_sgemm_yardstick("torch.csv", text).unwrap();
        assert_eq!(points.len(), 2);
        assert_eq!((points[0].0, points[1].0), (1024.0, 2048.0));
        assert!((points[0].1 - 28150.0).abs() < 1e-6, "{points:?}");
        assert!((points[1].1 - 47500.0).abs() < 1e-6, "{points:?}");
    }

    #[test]
    fn broken_and_missing_lines_are_errors_naming_the_file() {
        let broken = parse_sgemm_yardstick("torch.csv", "CSV,sgemm,1024,tflop=3\n")
            .unwrap_err()
            .to_string();
        assert!(broken.starts_with("torch.csv:1:"), "{broken}");
        let missing = parse_sgemm_yardstick("torch.csv", "device, x\n")
            .unwrap_err()
            .to_string();
        assert!(
            missing.starts_with("torch.csv:") && missing.contains("no `CSV,sgemm"),
            "{missing}"
        );
    }
}
