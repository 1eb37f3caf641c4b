//! What a checker tells the student: for every part of an exercise and every case it
//! tried, whether the result was right, and if not, where and by how much it was wrong.
//!
//! A failed comparison names the case (the shape and parameters), how many elements
//! differ, how many were never written (still the NaN with the checker's tag,
//! [`POISON_BITS`], that the output was filled with), how many hold the NaN of an input's
//! guard elements (a read out of bounds), how many are other NaN or infinite (computed:
//! an overflow, 0/0, or a NaN read from an input), the first few wrong elements with the
//! expected and the actual value, and the largest relative error. A checker can add
//! causes it found by running the case again (reversed invocations, other guards). That is usually enough to tell an off-by-one (the
//! last column wrong), a missing bounds check (only shapes that are not multiples of the
//! workgroup fail) and a race (different elements wrong on every run) apart.

use std::fmt;
use std::path::PathBuf;

use galaxy::{Comparison, Tensor2d, Tolerance};

use crate::error::CheckError;
use crate::kernel_run::{GUARD_NAN_BITS, POISON_BITS};

/// How many wrong elements a report lists before it stops.
pub const LISTED_MISMATCHES: usize = 5;

/// The verdict on one exercise.
#[derive(Debug)]
pub struct CheckReport {
    pub exercise: &'static str,
    /// Which files were checked, and why those (the work file, or the starter because
    /// there is no work file yet).
    pub notes: Vec<String>,
    pub parts: Vec<PartReport>,
}

impl CheckReport {
    pub fn new(exercise: &'static str) -> CheckReport {
        CheckReport {
            exercise,
            notes: Vec::new(),
            parts: Vec::new(),
        }
    }

    /// True when every case of every part passed. A report with no case at all never
    /// passes: a checker that checked nothing has nothing to say.
    pub fn passed(&self) -> bool {
        !self.parts.is_empty() && self.parts.iter().all(PartReport::passed)
    }

    /// The part called `name`, if the exercise has one.
    pub fn part(&self, name: &str) -> Option<&PartReport> {
        self.parts.iter().find(|part| part.name == name)
    }
}

/// One part of an exercise: a level (CPU, GPU, graph), or one requirement.
#[derive(Debug)]
pub struct PartReport {
    pub name: String,
    pub cases: Vec<CaseReport>,
}

impl PartReport {
    pub fn new(name: impl Into<String>) -> PartReport {
        PartReport {
            name: name.into(),
            cases: Vec::new(),
        }
    }

    pub fn passed(&self) -> bool {
        !self.cases.is_empty() && self.cases.iter().all(|case| case.verdict.passed())
    }

    pub fn push(&mut self, case: impl Into<String>, verdict: Verdict) {
        self.cases.push(CaseReport {
            case: case.into(),
            verdict,
        });
    }

    /// A part that could not run at all, such as a shader that does not compile.
    pub fn failed_before_running(name: impl Into<String>, error: CheckError) -> PartReport {
        let mut part = PartReport::new(name);
        part.push("setup", Verdict::Error(error.to_string()));
        part
    }
}

/// One case: a shape, a parameter, a graph.
#[derive(Debug)]
pub struct CaseReport {
    pub case: String,
    pub verdict: Verdict,
}

#[derive(Debug)]
pub enum Verdict {
    /// Right; the detail says how close (or, for a hand-in, how fast).
    Pass(String),
    /// Numbers that differ from the reference.
    Mismatch(Box<MismatchReport>),
    /// The student's Rust code panicked (a `todo!()`, an index out of bounds).
    Panicked(String),
    /// Something the exercise asks for that the code does not do.
    Unmet(String),
    /// The case could not run: a compile error, a rejected binding, a typed error.
    Error(String),
}

impl Verdict {
    pub fn passed(&self) -> bool {
        matches!(self, Verdict::Pass(_))
    }
}

/// Where a result differs from the reference.
#[derive(Debug, Clone, PartialEq)]
pub struct MismatchReport {
    pub shape: (usize, usize),
    pub compared: usize,
    pub mismatching: usize,
    /// Elements that still hold the poison the output was filled with: never written.
    pub never_written: usize,
    /// Elements that hold the NaN of an input's guard elements: read out of bounds and
    /// copied (or carried through arithmetic) to the output.
    pub guard_values: usize,
    /// Other NaN where a number is expected: computed (an overflow, 0/0, or a NaN read).
    pub computed_nan: usize,
    /// Infinities where a finite number is expected: an overflow.
    pub infinite: usize,
    /// What the checker found out about the cause by running the case again.
    pub causes: Vec<String>,
    /// The first few wrong elements, in memory order.
    pub first: Vec<WrongElement>,
    pub largest_relative_error: f32,
    /// The element furthest outside the tolerance.
    pub worst: Option<WrongElement>,
    pub tolerance: Tolerance,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WrongElement {
    pub row: usize,
    pub column: usize,
    pub expected: f32,
    pub actual: f32,
}

/// Compares `actual` with `expected` element by element and returns a pass with the
/// largest relative error, or a mismatch report. Shapes that differ are an error.
pub fn compare(actual: &Tensor2d, expected: &Tensor2d, tolerance: Tolerance) -> Verdict {
    let comparison: Comparison = match actual.compare(expected, tolerance) {
        Ok(comparison) => comparison,
        Err(error) => return Verdict::Error(error.to_string()),
    };
    if comparison.passed() {
        let elements = match comparison.compared_elements {
            1 => "1 element".to_string(),
            count => format!("{count} elements"),
        };
        return Verdict::Pass(if tolerance == Tolerance::EXACT {
            format!("{elements}, all exact")
        } else {
            format!(
                "{elements}, largest relative error {:.1e}",
                comparison.largest_relative_error
            )
        });
    }
    let columns = actual.columns();
    let first = actual
        .as_slice()
        .iter()
        .zip(expected.as_slice())
        .enumerate()
        .filter(|(_, (actual, expected))| !within(**actual, **expected, tolerance))
        .take(LISTED_MISMATCHES)
        .map(|(index, (&actual, &expected))| WrongElement {
            row: index / columns,
            column: index % columns,
            expected,
            actual,
        })
        .collect();
    Verdict::Mismatch(Box::new(MismatchReport {
        shape: actual.shape(),
        compared: comparison.compared_elements,
        mismatching: comparison.elements_outside_tolerance,
        never_written: count_bits(actual, POISON_BITS),
        guard_values: count_bits(actual, GUARD_NAN_BITS),
        computed_nan: actual
            .as_slice()
            .iter()
            .zip(expected.as_slice())
            .filter(|(actual, expected)| {
                actual.is_nan()
                    && !expected.is_nan()
                    && !matches!(actual.to_bits(), POISON_BITS | GUARD_NAN_BITS)
            })
            .count(),
        infinite: actual
            .as_slice()
            .iter()
            .zip(expected.as_slice())
            .filter(|(actual, expected)| actual.is_infinite() && expected.is_finite())
            .count(),
        causes: Vec::new(),
        first,
        largest_relative_error: comparison.largest_relative_error,
        worst: comparison.worst.map(|worst| WrongElement {
            row: worst.row,
            column: worst.column,
            expected: worst.expected,
            actual: worst.actual,
        }),
        tolerance,
    }))
}

fn count_bits(values: &Tensor2d, bits: u32) -> usize {
    values
        .as_slice()
        .iter()
        .filter(|value| value.to_bits() == bits)
        .count()
}

/// The rule of [`Tolerance`]: `|actual − expected| ≤ absolute + relative · |expected|`,
/// and a NaN or infinity where a finite value is expected never passes. Used only to list
/// the first wrong elements; the counts come from `Tensor2d::compare` itself.
fn within(actual: f32, expected: f32, tolerance: Tolerance) -> bool {
    if !actual.is_finite() && expected.is_finite() {
        return false;
    }
    actual == expected
        || (actual - expected).abs() <= tolerance.absolute + tolerance.relative * expected.abs()
}

/// Counts (histogram bins) compared exactly, reported like floats.
pub fn compare_counts(actual: &[u32], expected: &[u32]) -> Verdict {
    let as_tensor = |values: &[u32]| {
        Tensor2d::from_vec(1, values.len(), values.iter().map(|&v| v as f32).collect())
    };
    match (as_tensor(actual), as_tensor(expected)) {
        (Ok(actual), Ok(expected)) => compare(&actual, &expected, Tolerance::EXACT),
        (Err(error), _) | (_, Err(error)) => Verdict::Error(error.to_string()),
    }
}

thread_local! {
    /// Whether this thread is inside [`catching_panics`].
    static CATCHING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Where the last caught panic on this thread happened, recorded by the quiet hook.
    static PANIC_LOCATION: std::cell::RefCell<Option<String>> =
        const { std::cell::RefCell::new(None) };
}

/// Installs a panic hook that stays quiet about panics in the student's code and
/// remembers where they happened: the report shows the message and the place once, with
/// its case. Any other panic (a bug in the checker) is printed as usual. For the command
/// line; tests keep the default hook.
pub fn install_quiet_panic_hook() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |information| {
        if CATCHING.with(std::cell::Cell::get) {
            let location = information
                .location()
                .map(|location| format!("{}:{}", location.file(), location.line()));
            PANIC_LOCATION.with(|cell| *cell.borrow_mut() = location);
        } else {
            default_hook(information);
        }
    }));
}

/// Runs `work`, turning a panic into [`Verdict::Panicked`] with the panic's message
/// (and its place in the source, when the quiet hook is installed).
pub fn catching_panics<T>(work: impl FnOnce() -> T) -> Result<T, Verdict> {
    PANIC_LOCATION.with(|cell| cell.borrow_mut().take());
    let was_catching = CATCHING.with(|catching| catching.replace(true));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
    CATCHING.with(|catching| catching.set(was_catching));
    outcome.map_err(|payload| {
        let mut message = payload
            .downcast_ref::<&str>()
            .map(|text| text.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string());
        if let Some(location) = PANIC_LOCATION.with(|cell| cell.borrow_mut().take()) {
            message = format!(
                "{message} (at {})",
                shown_path(std::path::Path::new(&location))
            );
        }
        Verdict::Panicked(message)
    })
}

/// The files a check reads, for the first line of the report.
pub fn checking_note(paths: &[PathBuf], using_starter: bool) -> String {
    let names: Vec<String> = paths.iter().map(|path| shown_path(path)).collect();
    if using_starter {
        format!(
            "no work file yet, so checking the starter: {} (run with --start to get your own copy)",
            names.join(", ")
        )
    } else {
        format!("checking {}", names.join(", "))
    }
}

/// A path relative to the repository, where it is inside it.
pub fn shown_path(path: &std::path::Path) -> String {
    let repository = crate::registry::exercises_directory()
        .parent()
        .unwrap_or(std::path::Path::new("/"));
    path.strip_prefix(repository)
        .unwrap_or(path)
        .display()
        .to_string()
}

impl WrongElement {
    /// `element 7` in a single row, `(row 2, column 7)` otherwise.
    fn position(&self, shape: (usize, usize)) -> String {
        if shape.0 == 1 {
            format!("element {}", self.column)
        } else {
            format!("(row {}, column {})", self.row, self.column)
        }
    }

    fn describe(&self, shape: (usize, usize)) -> String {
        let note = match self.actual.to_bits() {
            POISON_BITS => " (never written)",
            GUARD_NAN_BITS => " (an input's guard: read out of bounds)",
            _ if self.actual.is_nan() => " (computed)",
            _ => "",
        };
        format!(
            "{}: expected {}, got {}{note}",
            self.position(shape),
            self.expected,
            self.actual
        )
    }
}

impl MismatchReport {
    /// One line: how many elements differ and how badly, and the causes found.
    pub fn summary(&self) -> String {
        let mut text = format!("{} of {} elements differ", self.mismatching, self.compared);
        if self.never_written > 0 {
            text.push_str(&format!(
                " ({} never written: still the checker's poison)",
                self.never_written
            ));
        }
        if self.guard_values > 0 {
            text.push_str(&format!(
                " ({} hold the NaN of an input's guard elements: the kernel reads out of bounds)",
                self.guard_values
            ));
        }
        if self.computed_nan > 0 {
            text.push_str(&format!(
                " ({} NaN computed: overflow/underflow, 0/0 or a NaN input read)",
                self.computed_nan
            ));
        }
        if self.infinite > 0 {
            text.push_str(&format!(" ({} infinite: overflow)", self.infinite));
        }
        let not_finite = self.never_written + self.guard_values + self.computed_nan + self.infinite;
        if self.tolerance == Tolerance::EXACT {
            text.push_str(" (compared exactly)");
        } else if not_finite < self.mismatching {
            text.push_str(&format!(
                "; largest relative error {:.2e} (tolerance: relative {:e}, absolute {:e})",
                self.largest_relative_error, self.tolerance.relative, self.tolerance.absolute
            ));
        }
        for cause in &self.causes {
            text.push_str(&format!("; {cause}"));
        }
        text
    }
}

impl fmt::Display for MismatchReport {
    /// The summary, then the first wrong elements and the worst one.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}", self.summary())?;
        for wrong in &self.first {
            write!(formatter, "\n        {}", wrong.describe(self.shape))?;
        }
        if self.mismatching > self.first.len() {
            write!(
                formatter,
                "\n        … and {} more",
                self.mismatching - self.first.len()
            )?;
        }
        if let Some(worst) = self.worst.filter(|worst| !self.first.contains(worst)) {
            write!(
                formatter,
                "\n        furthest outside the tolerance: {}",
                worst.describe(self.shape)
            )?;
        }
        Ok(())
    }
}

impl Verdict {
    /// The verdict on one line, for the cases after a part's first failure (whose
    /// details usually tell the whole story).
    pub fn summary(&self) -> String {
        match self {
            Verdict::Mismatch(report) => format!("FAIL: {}", report.summary()),
            Verdict::Error(message) => {
                format!("FAIL: {}", message.lines().next().unwrap_or_default())
            }
            other => other.to_string(),
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Pass(detail) => write!(formatter, "pass: {detail}"),
            Verdict::Mismatch(report) => write!(formatter, "FAIL: {report}"),
            Verdict::Panicked(message) => write!(formatter, "FAIL: panicked: {message}"),
            Verdict::Unmet(requirement) => {
                // Several findings come one to a line; indent them under the case.
                let indented = requirement.replace('\n', "\n        ");
                write!(formatter, "FAIL: {indented}")
            }
            Verdict::Error(message) => {
                // Compiler messages span several lines; indent them under the case.
                let indented = message.replace('\n', "\n        ");
                write!(formatter, "FAIL: {indented}")
            }
        }
    }
}

impl fmt::Display for CheckReport {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(formatter, "exercise {}", self.exercise)?;
        for note in &self.notes {
            writeln!(formatter, "  {note}")?;
        }
        for part in &self.parts {
            let status = if part.passed() { "passing" } else { "failing" };
            writeln!(formatter, "  {}: {status}", part.name)?;
            let mut detailed_failure_shown = false;
            for case in &part.cases {
                if case.verdict.passed() || detailed_failure_shown {
                    writeln!(formatter, "    {}: {}", case.case, case.verdict.summary())?;
                } else {
                    writeln!(formatter, "    {}: {}", case.case, case.verdict)?;
                    detailed_failure_shown = true;
                }
            }
        }
        let passed_parts = self.parts.iter().filter(|part| part.passed()).count();
        if self.passed() {
            write!(
                formatter,
                "PASSED: all {} part(s) correct",
                self.parts.len()
            )
        } else {
            write!(
                formatter,
                "FAILED: {passed_parts} of {} part(s) correct",
                self.parts.len()
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOLERANCE: Tolerance = Tolerance::new(1e-5, 1e-6);

    #[test]
    fn an_off_by_one_is_reported_with_its_row_and_column() {
        let expected = Tensor2d::random(3, 5, -1.0..=1.0, 7);
        let mut actual = expected.clone();
        // The last column of every row shifted by one element, as a kernel that reads
        // `index + 1` would produce.
        for row in 0..3 {
            let shifted = if row < 2 {
                expected.get(row + 1, 0)
            } else {
                0.0
            };
            actual.set(row, 4, shifted);
        }
        let Verdict::Mismatch(report) = compare(&actual, &expected, TOLERANCE) else {
            panic!("an off-by-one must not pass");
        };
        assert_eq!(report.shape, (3, 5));
        assert_eq!(report.mismatching, 3);
        assert_eq!(report.never_written, 0);
        let positions: Vec<(usize, usize)> = report
            .first
            .iter()
            .map(|wrong| (wrong.row, wrong.column))
            .collect();
        assert_eq!(positions, vec![(0, 4), (1, 4), (2, 4)]);
        assert_eq!(report.first[0].expected, expected.get(0, 4));
        assert_eq!(report.first[0].actual, expected.get(1, 0));
        let text = report.to_string();
        assert!(text.contains("3 of 15 elements differ"), "{text}");
        assert!(text.contains("(row 1, column 4): expected"), "{text}");
        assert!(
            !text.contains("furthest"),
            "the worst is listed already: {text}"
        );
    }

    #[test]
    fn unwritten_elements_are_counted_as_never_written() {
        let expected = Tensor2d::random(1, 300, -1.0..=1.0, 3);
        let mut actual = expected.clone();
        for column in 256..300 {
            actual.set(0, column, f32::from_bits(POISON_BITS));
        }
        let Verdict::Mismatch(report) = compare(&actual, &expected, TOLERANCE) else {
            panic!("NaN must not pass");
        };
        assert_eq!(report.mismatching, 44);
        assert_eq!(report.never_written, 44);
        assert_eq!(report.computed_nan, 0);
        assert_eq!(report.first.len(), LISTED_MISMATCHES);
        assert_eq!(report.first[0].column, 256);
        let text = report.to_string();
        assert!(
            text.contains("44 never written: still the checker's poison"),
            "{text}"
        );
        assert!(text.contains("element 256: expected"), "{text}");
        assert!(text.contains("got NaN (never written)"), "{text}");
        assert!(text.contains("… and 39 more"), "{text}");
    }

    #[test]
    fn a_computed_nan_and_a_guard_nan_are_not_called_unwritten() {
        let expected = Tensor2d::random(1, 4, -1.0..=1.0, 3);
        let mut actual = expected.clone();
        // exp(200) / exp(200): what a softmax without its shift computes.
        actual.set(0, 0, f32::INFINITY / f32::INFINITY);
        actual.set(0, 1, f32::from_bits(GUARD_NAN_BITS));
        actual.set(0, 2, f32::INFINITY);
        let Verdict::Mismatch(report) = compare(&actual, &expected, TOLERANCE) else {
            panic!("NaN must not pass");
        };
        assert_eq!(
            (
                report.never_written,
                report.computed_nan,
                report.guard_values,
                report.infinite
            ),
            (0, 1, 1, 1)
        );
        let text = report.to_string();
        assert!(!text.contains("never written"), "{text}");
        assert!(
            text.contains("1 NaN computed: overflow/underflow, 0/0 or a NaN input read"),
            "{text}"
        );
        assert!(text.contains("the kernel reads out of bounds"), "{text}");
        assert!(text.contains("1 infinite: overflow"), "{text}");
    }

    #[test]
    fn a_close_result_passes_with_its_error() {
        let expected = Tensor2d::from_vec(1, 2, vec![1.0, 2.0]).unwrap();
        let actual = Tensor2d::from_vec(1, 2, vec![1.0, 2.000001]).unwrap();
        let verdict = compare(&actual, &expected, TOLERANCE);
        assert!(verdict.passed(), "{verdict}");
        assert!(verdict.to_string().starts_with("pass: 2 elements"));
    }

    #[test]
    fn counts_are_compared_exactly() {
        assert!(compare_counts(&[3, 0, 1], &[3, 0, 1]).passed());
        let Verdict::Mismatch(report) = compare_counts(&[3, 0, 2], &[3, 0, 1]) else {
            panic!("a wrong count must not pass");
        };
        assert_eq!(report.first[0].column, 2);
    }

    #[test]
    fn a_panic_becomes_a_verdict_with_its_message() {
        #[allow(clippy::todo)] // the panic a starter raises is the point of this test
        let verdict = catching_panics(|| -> u32 { todo!() }).unwrap_err();
        assert!(
            matches!(&verdict, Verdict::Panicked(message) if message.contains("not yet implemented"))
        );
        assert_eq!(catching_panics(|| 3).unwrap(), 3);
    }

    #[test]
    fn a_report_passes_only_when_every_part_has_cases_and_all_pass() {
        let mut report = CheckReport::new("example");
        assert!(!report.passed(), "an empty report must not pass");
        let mut part = PartReport::new("GPU kernel");
        part.push("1×1", Verdict::Pass("1 element".into()));
        report.parts.push(part);
        assert!(report.passed());
        let mut failing = PartReport::new("graph level");
        failing.push("4×4", Verdict::Unmet("no workgroup memory".into()));
        report.parts.push(failing);
        assert!(!report.passed());
        let text = report.to_string();
        assert!(text.contains("graph level: failing"), "{text}");
        assert!(text.ends_with("FAILED: 1 of 2 part(s) correct"), "{text}");
    }
}
