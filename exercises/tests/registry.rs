//! The checkers can fail, and the reference solutions pass them.
//!
//! For every exercise of the registry: the reference solution passes its checker, and
//! the untouched starter fails it. For the exercises with several levels, every level of
//! the starter fails on its own, and a level is judged by its own code only. And a
//! deliberately broken kernel is reported with the right case, element and reason.

use std::path::{Path, PathBuf};

use galaxy_exercises::registry::exercises_directory;
use galaxy_exercises::report::Verdict;
use galaxy_exercises::{CheckReport, EXERCISES, Submission, Variant, find};

fn assert_passes(report: &CheckReport) {
    assert!(
        report.passed(),
        "the reference solution must pass:\n{report}"
    );
}

#[test]
fn every_reference_solution_passes_its_checker() {
    for exercise in EXERCISES {
        assert_passes(&exercise.check(Variant::Solution));
    }
}

#[test]
fn every_untouched_starter_fails_its_checker() {
    for exercise in EXERCISES {
        let report = exercise.check(Variant::Starter);
        assert!(!report.passed(), "the starter must fail:\n{report}");
    }
}

/// The levels of max pooling and convolution, each on its own: the starter fails every
/// level, and mixing a solution's Rust with a starter's kernel (or the other way round)
/// passes exactly the levels the solution's files cover. The graph level runs the Rust
/// binding with the kernel, so it needs both.
#[test]
fn every_level_is_checked_on_its_own() {
    for name in ["max-pool", "convolution"] {
        let exercise = find(name).unwrap();
        let levels = ["CPU level", "GPU level (immediate)", "graph level"];
        let starter = exercise.check(Variant::Starter);
        for level in levels {
            let part = starter.part(level).unwrap();
            assert!(
                !part.passed(),
                "{name}: the starter's {level} must fail:\n{starter}"
            );
        }
        let kernel = |stem: &str| exercise.folder().join(format!("{stem}.wgsl"));
        let mixed = |wgsl: &str, rust: Variant| {
            let submission = Submission {
                wgsl: Some(kernel(wgsl)),
                rust,
            };
            let mut report = CheckReport::new(exercise.name);
            report.parts = (exercise.checker)(&submission);
            report
        };
        let solution_rust = mixed("starter", Variant::Solution);
        let passed = |report: &CheckReport| -> Vec<bool> {
            levels
                .iter()
                .map(|level| report.part(level).unwrap().passed())
                .collect()
        };
        assert_eq!(
            passed(&solution_rust),
            [true, false, false],
            "{solution_rust}"
        );
        let solution_kernel = mixed("solution", Variant::Starter);
        assert_eq!(
            passed(&solution_kernel),
            [false, true, false],
            "{solution_kernel}"
        );
    }
}

#[test]
fn every_exercise_has_its_files_and_every_folder_is_an_exercise() {
    for exercise in EXERCISES {
        for variant in [Variant::Starter, Variant::Solution] {
            for (path, _) in exercise.files(variant) {
                assert!(path.is_file(), "{} is missing", path.display());
            }
        }
        assert!(exercise.has_wgsl || exercise.has_rust, "{}", exercise.name);
        assert_eq!(
            exercise.level, 4,
            "exercises are level 4: {}",
            exercise.name
        );
        let page = exercises_directory().join("../src").join(exercise.page);
        assert!(
            page.is_file(),
            "{}: the page {} is missing",
            exercise.name,
            page.display()
        );
    }
    for entry in std::fs::read_dir(exercises_directory()).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_dir() && !matches!(name.as_str(), "src" | "tests" | "benches") {
            assert!(
                find(&name).is_some(),
                "the folder exercises/{name} is not registered"
            );
        }
    }
}

/// A copy of a reference kernel with one line changed, written where a hand-in would be.
fn broken_copy(exercise: &str, replace: &str, with: &str, name: &str) -> PathBuf {
    let source = exercises_directory().join(exercise).join("solution.wgsl");
    let text = std::fs::read_to_string(&source).unwrap();
    assert!(
        text.contains(replace),
        "{replace:?} is not in {}",
        source.display()
    );
    let directory =
        std::env::temp_dir().join(format!("galaxy-exercises-test-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let path = directory.join(name);
    std::fs::write(&path, text.replacen(replace, with, 1)).unwrap();
    path
}

fn verdict<'a>(report: &'a CheckReport, part: &str, case: &str) -> &'a Verdict {
    let part = report
        .part(part)
        .unwrap_or_else(|| panic!("no part {part}:\n{report}"));
    &part
        .cases
        .iter()
        .find(|checked| checked.case == case)
        .unwrap_or_else(|| panic!("no case {case}:\n{report}"))
        .verdict
}

#[test]
fn an_off_by_one_is_reported_with_its_case_and_element() {
    // A bounds check one too strict: the last element of every length is never written.
    let path = broken_copy(
        "vector-add",
        "if (index >= dimensions.element_count)",
        "if (index + 1u >= dimensions.element_count)",
        "off_by_one.wgsl",
    );
    let report = find("vector-add")
        .unwrap()
        .check_student(Some(path.clone()));
    assert!(!report.passed());
    assert!(report.notes[0].contains("off_by_one.wgsl"), "{report}");
    let Verdict::Mismatch(mismatch) = verdict(&report, "GPU kernel", "length 257") else {
        panic!("length 257 must be a mismatch:\n{report}");
    };
    assert_eq!(mismatch.shape, (1, 257));
    assert_eq!(mismatch.mismatching, 1);
    assert_eq!(mismatch.never_written, 1);
    assert_eq!(mismatch.first[0].column, 256);
    assert!(mismatch.first[0].actual.is_nan());
    let text = report.to_string();
    assert!(
        text.contains("length 257: FAIL: 1 of 257 elements differ (1 never written"),
        "{text}"
    );
    assert!(text.contains("element 0: expected"), "{text}");
    let _ = std::fs::remove_file(path);
}

#[test]
fn a_wrong_element_is_located_in_two_dimensions() {
    // The tiled kernel with the bias of the next column: every column but the last is
    // wrong; the last reads past the end of the bias.
    let path = broken_copy(
        "linear-tiled",
        "total + bias[column]",
        "total + bias[column + 1u]",
        "wrong_bias.wgsl",
    );
    let report = find("linear-tiled")
        .unwrap()
        .check_student(Some(path.clone()));
    let wrong = verdict(&report, "GPU kernel", "input 17×33, weights 33×9");
    let Verdict::Mismatch(mismatch) = wrong else {
        panic!("must be a mismatch:\n{report}");
    };
    assert_eq!(mismatch.shape, (17, 9));
    assert_eq!(mismatch.never_written, 0);
    assert_eq!((mismatch.first[0].row, mismatch.first[0].column), (0, 0));
    assert!(mismatch.largest_relative_error > 1e-3);
    assert!(
        wrong.to_string().contains("(row 0, column 0): expected"),
        "{wrong}"
    );
    let _ = std::fs::remove_file(path);
}

#[test]
fn a_shader_that_does_not_compile_names_the_file_and_line() {
    let path = broken_copy(
        "conv1d-naive",
        "var total = 0.0;",
        "var total = 0.0",
        "typo.wgsl",
    );
    let report = find("conv1d-naive")
        .unwrap()
        .check_student(Some(path.clone()));
    let Verdict::Error(message) = verdict(&report, "GPU kernel", "setup") else {
        panic!("must be an error:\n{report}");
    };
    assert!(message.contains("the shader does not compile"), "{message}");
    assert!(message.contains("typo.wgsl:"), "{message}");
    let _ = std::fs::remove_file(path);
}

#[test]
fn a_shader_with_other_bindings_is_told_which_ones() {
    let path = broken_copy(
        "histogram-global",
        "@group(0) @binding(2) var<uniform>",
        "@group(0) @binding(3) var<uniform>",
        "wrong_binding.wgsl",
    );
    let report = find("histogram-global")
        .unwrap()
        .check_student(Some(path.clone()));
    let Verdict::Error(message) = verdict(&report, "GPU kernel", "setup") else {
        panic!("must be an error:\n{report}");
    };
    assert!(
        message.contains("@binding(3), which this exercise does not bind"),
        "{message}"
    );
    assert!(
        message.contains("@group(0) @binding(2) var<uniform> dimensions"),
        "{message}"
    );
    let _ = std::fs::remove_file(path);
}

#[test]
fn a_missing_file_is_an_error_not_a_panic() {
    let report = find("matmul")
        .unwrap()
        .check_student(Some(Path::new("no/such/file.wgsl").to_path_buf()));
    assert!(!report.passed());
    assert!(
        report.to_string().contains("cannot read no/such/file.wgsl"),
        "{report}"
    );
}

#[test]
fn a_uniform_struct_larger_than_the_exercise_provides_is_an_error_not_a_panic() {
    // A 48-byte struct where the checker provides 4 bytes (padded to 16): wgpu rejects the
    // binding, and the report says so instead of the process panicking.
    let path = broken_copy(
        "vector-add",
        "    element_count: u32,\n}",
        "    element_count: u32,\n    extra: vec4<u32>,\n    more: vec4<u32>,\n}",
        "large_uniform.wgsl",
    );
    let report = find("vector-add")
        .unwrap()
        .check_student(Some(path.clone()));
    assert!(!report.passed());
    let text = report.to_string();
    assert!(text.contains("wgpu rejected the run"), "{text}");
    assert!(text.contains("binding index 3"), "{text}");
    let _ = std::fs::remove_file(path);
}
