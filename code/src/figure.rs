//! The data behind one figure, and the CSV file it is kept in.
//!
//! Every figure of the book is drawn from a CSV file that a real run wrote. The file is
//! self-describing: `#` lines at the top carry the title, the axes and the hardware, then
//! comes a header and one row per point, in long form (`series,x,y`). Spreadsheets and
//! pandas (`comment="#"`) read it as it is; `cargo xtask figures` draws it.
//!
//! ```text
//! # title: Reading an array: sequential, strided and random order
//! # x: array size (bytes), log
//! # y: time per element (ns), log
//! # hardware: CPU Intel(R) Xeon(R) …; GPU llvmpipe (LLVM 15.0.7, 256 bits) (Vulkan)
//! # command: cargo xtask figures --full
//! series,x,y
//! sequential,1024,0.31
//! ```
//!
//! A figure whose points were measured several times carries two more columns,
//! `series,x,y,y_min,y_max`: `y` is the median of the repeats, `y_min` and `y_max` the
//! fastest and the slowest (empty for a point without them).

use std::fmt::Write as _;
use std::path::Path;

/// One point of a series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

/// The range of a point measured several times: its `y` is their median.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub minimum: f64,
    pub maximum: f64,
}

/// A named line of the figure: one execution mode, one kernel, one access pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<Point>,
    /// One entry per point: the range of its repeats, if it was measured more than once.
    pub spreads: Vec<Option<Spread>>,
}

/// One axis: its label (with the unit) and whether it is logarithmic.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub label: String,
    pub logarithmic: bool,
}

/// Everything needed to draw one figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// The file name without extension: `figures/data/<id>.csv`, `figures/<id>.svg`.
    pub id: String,
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    /// The machine the data comes from: CPU model and, where used, the GPU adapter.
    pub hardware: String,
    /// The command that wrote the data.
    pub command: String,
    pub series: Vec<Series>,
}

/// What can go wrong reading or writing a figure's CSV.
#[derive(Debug, thiserror::Error)]
pub enum FigureError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Malformed {
        path: String,
        line: usize,
        message: String,
    },
}

impl Figure {
    /// Adds `point` to the series called `series`, creating the series on first use, so
    /// the order of the series is the order they were first measured in.
    pub fn push(&mut self, series: &str, point: Point) {
        self.push_point(series, point, None);
    }

    /// Adds a point measured several times: `point.y` is their median, `spread` their
    /// range.
    pub fn push_with_spread(&mut self, series: &str, point: Point, spread: Spread) {
        self.push_point(series, point, Some(spread));
    }

    fn push_point(&mut self, series: &str, point: Point, spread: Option<Spread>) {
        match self
            .series
            .iter_mut()
            .find(|existing| existing.name == series)
        {
            Some(existing) => {
                existing.points.push(point);
                existing.spreads.push(spread);
            }
            None => self.series.push(Series {
                name: series.to_string(),
                points: vec![point],
                spreads: vec![spread],
            }),
        }
    }

    /// Whether any point carries a spread (the CSV then has `y_min,y_max` columns).
    pub fn has_spreads(&self) -> bool {
        self.series
            .iter()
            .any(|series| series.spreads.iter().any(Option::is_some))
    }

    /// The CSV text: metadata lines, header, one row per point.
    pub fn to_csv(&self) -> String {
        let mut text = String::new();
        let axis = |axis: &Axis| {
            if axis.logarithmic {
                format!("{}, log", axis.label)
            } else {
                axis.label.clone()
            }
        };
        // Writing into a String cannot fail.
        let _ = writeln!(text, "# title: {}", self.title);
        let _ = writeln!(text, "# x: {}", axis(&self.x));
        let _ = writeln!(text, "# y: {}", axis(&self.y));
        let _ = writeln!(text, "# hardware: {}", self.hardware);
        let _ = writeln!(text, "# command: {}", self.command);
        let with_spreads = self.has_spreads();
        text.push_str(if with_spreads {
            "series,x,y,y_min,y_max\n"
        } else {
            "series,x,y\n"
        });
        for series in &self.series {
            for (index, point) in series.points.iter().enumerate() {
                let _ = write!(text, "{},{},{}", series.name, point.x, point.y);
                if with_spreads {
                    match series.spreads.get(index).copied().flatten() {
                        Some(spread) => {
                            let _ = write!(text, ",{},{}", spread.minimum, spread.maximum);
                        }
                        None => text.push_str(",,"),
                    }
                }
                text.push('\n');
            }
        }
        text
    }

    /// Parses the text [`Figure::to_csv`] writes. `path` names the file in errors and
    /// gives the figure its id.
    pub fn from_csv(path: &str, text: &str) -> Result<Figure, FigureError> {
        let malformed = |line: usize, message: String| FigureError::Malformed {
            path: path.to_string(),
            line,
            message,
        };
        let id = Path::new(path)
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut figure = Figure {
            id,
            title: String::new(),
            x: Axis {
                label: String::new(),
                logarithmic: false,
            },
            y: Axis {
                label: String::new(),
                logarithmic: false,
            },
            hardware: String::new(),
            command: String::new(),
            series: Vec::new(),
        };
        let parse_axis = |value: &str| match value.strip_suffix(", log") {
            Some(label) => Axis {
                label: label.to_string(),
                logarithmic: true,
            },
            None => Axis {
                label: value.to_string(),
                logarithmic: false,
            },
        };
        let mut seen_header = false;
        let mut with_spreads = false;
        for (index, line) in text.lines().enumerate() {
            let number = index + 1;
            if let Some(metadata) = line.strip_prefix("# ") {
                let Some((key, value)) = metadata.split_once(": ") else {
                    return Err(malformed(
                        number,
                        format!("expected `# key: value`, found `{line}`"),
                    ));
                };
                match key {
                    "title" => figure.title = value.to_string(),
                    "x" => figure.x = parse_axis(value),
                    "y" => figure.y = parse_axis(value),
                    "hardware" => figure.hardware = value.to_string(),
                    "command" => figure.command = value.to_string(),
                    other => {
                        return Err(malformed(number, format!("unknown metadata key `{other}`")));
                    }
                }
            } else if !seen_header {
                with_spreads = match line {
                    "series,x,y" => false,
                    "series,x,y,y_min,y_max" => true,
                    _ => {
                        return Err(malformed(
                            number,
                            format!(
                                "expected the header `series,x,y` or `series,x,y,y_min,y_max`, \
                                 found `{line}`"
                            ),
                        ));
                    }
                };
                seen_header = true;
            } else if !line.is_empty() {
                // The series name may itself contain commas: the numbers are the last fields.
                let columns = if with_spreads { 5 } else { 3 };
                let mut fields: Vec<&str> = line.rsplitn(columns, ',').collect();
                if fields.len() != columns {
                    let header = if with_spreads {
                        "series,x,y,y_min,y_max"
                    } else {
                        "series,x,y"
                    };
                    return Err(malformed(
                        number,
                        format!("expected `{header}`, found `{line}`"),
                    ));
                }
                fields.reverse();
                let number_of = |field: &str| {
                    field
                        .parse::<f64>()
                        .map_err(|_| malformed(number, format!("`{field}` is not a number")))
                };
                let point = Point {
                    x: number_of(fields[1])?,
                    y: number_of(fields[2])?,
                };
                let spread = match fields[3..] {
                    [] | ["", ""] => None,
                    [minimum, maximum] => Some(Spread {
                        minimum: number_of(minimum)?,
                        maximum: number_of(maximum)?,
                    }),
                    _ => return Err(malformed(number, format!("`{line}` has a stray field"))),
                };
                figure.push_point(fields[0], point, spread);
            }
        }
        if !seen_header {
            return Err(malformed(
                text.lines().count(),
                "no `series,x,y` header".to_string(),
            ));
        }
        Ok(figure)
    }

    /// Writes `<directory>/<id>.csv`, creating the directory if needed.
    pub fn write_csv(&self, directory: &Path) -> Result<(), FigureError> {
        let path = directory.join(format!("{}.csv", self.id));
        let io = |source| FigureError::Io {
            path: path.display().to_string(),
            source,
        };
        std::fs::create_dir_all(directory).map_err(io)?;
        std::fs::write(&path, self.to_csv()).map_err(io)
    }

    /// Reads a CSV file written by [`Figure::write_csv`].
    pub fn read_csv(path: &Path) -> Result<Figure, FigureError> {
        let text = std::fs::read_to_string(path).map_err(|source| FigureError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Figure::from_csv(&path.display().to_string(), &text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> Figure {
        let mut figure = Figure {
            id: "access_patterns".to_string(),
            title: "Reading an array".to_string(),
            x: Axis {
                label: "array size (bytes)".to_string(),
                logarithmic: true,
            },
            y: Axis {
                label: "time per element (ns)".to_string(),
                logarithmic: false,
            },
            hardware: "CPU test; GPU none".to_string(),
            command: "cargo test".to_string(),
            series: Vec::new(),
        };
        figure.push("sequential", Point { x: 1024.0, y: 0.25 });
        figure.push("random, with a comma", Point { x: 1024.0, y: 3.5 });
        figure.push("sequential", Point { x: 2048.0, y: 0.5 });
        figure
    }

    #[test]
    fn csv_round_trips() {
        let figure = example();
        let parsed =
            Figure::from_csv("figures/data/access_patterns.csv", &figure.to_csv()).unwrap();
        assert_eq!(parsed, figure);
        assert_eq!(parsed.series[0].points.len(), 2);
    }

    #[test]
    fn spreads_round_trip_and_points_without_one_stay_without() {
        let mut figure = example();
        figure.push_with_spread(
            "repeated",
            Point { x: 1024.0, y: 2.0 },
            Spread {
                minimum: 1.5,
                maximum: 3.25,
            },
        );
        let text = figure.to_csv();
        assert!(text.contains("series,x,y,y_min,y_max\n"), "{text}");
        assert!(text.contains("repeated,1024,2,1.5,3.25\n"), "{text}");
        assert!(text.contains("sequential,1024,0.25,,\n"), "{text}");
        let parsed = Figure::from_csv("figures/data/access_patterns.csv", &text).unwrap();
        assert_eq!(parsed, figure);
        assert!(!example().has_spreads());
    }

    #[test]
    fn malformed_rows_name_the_line() {
        let text = "# title: t\nseries,x,y\nsequential,1,not-a-number\n";
        let error = Figure::from_csv("f.csv", text).unwrap_err().to_string();
        assert_eq!(error, "f.csv:3: `not-a-number` is not a number");
        let error = Figure::from_csv("f.csv", "# title: t\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("no `series,x,y` header"), "{error}");
    }
}
