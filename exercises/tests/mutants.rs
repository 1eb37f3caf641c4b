//! Every checker is proven by its mutation suite.
//!
//! Each exercise folder holds `mutants/` (the reference solution with one realistic
//! mistake, whose first lines name the class of the mistake and the phrase the report
//! must contain) and `alternatives/` (correct solutions written differently); see
//! `galaxy_exercises::mutants` for the format. For every exercise of the registry:
//!
//! - the suite has at least `MINIMUM_MUTANTS` mutants and at least one alternative;
//! - every mutant fails its checker, and the report names the cause: it contains the
//!   mutant's `expect` phrase (compared without regard to case, in the report's parts,
//!   not in the note that names the file, so a phrase in the file name proves nothing);
//! - every alternative passes.
//!
//! All exercises are checked and every problem is listed before the test fails.

use galaxy_exercises::mutants::{MINIMUM_MUTANTS, suite};
use galaxy_exercises::{CheckReport, EXERCISES, Exercise, Variant};

/// The report without its notes: what the checker found, not which files it read.
fn findings_of(exercise: &Exercise, report: CheckReport) -> String {
    let mut parts_only = CheckReport::new(exercise.name);
    parts_only.parts = report.parts;
    parts_only.to_string()
}

/// The problems with one exercise's suite, in words.
fn problems_of(exercise: &Exercise) -> Vec<String> {
    let mut problems = Vec::new();
    let suite = match suite(exercise) {
        Ok(suite) => suite,
        Err(error) => return vec![format!("{}: {error}", exercise.name)],
    };
    if suite.mutants.len() < MINIMUM_MUTANTS {
        problems.push(format!(
            "{}: {} mutant(s) in exercises/{}/mutants/, at least {MINIMUM_MUTANTS} needed",
            exercise.name,
            suite.mutants.len(),
            exercise.name
        ));
    }
    if suite.alternatives.is_empty() {
        problems.push(format!(
            "{}: no correct alternative in exercises/{}/alternatives/",
            exercise.name, exercise.name
        ));
    }
    for mutant in &suite.mutants {
        let report = exercise.check(Variant::Mutant(mutant.slug));
        let passed = report.passed();
        let text = findings_of(exercise, report);
        if passed {
            problems.push(format!(
                "{}: the mutant {} ({}: {}) PASSES its checker:\n{text}",
                exercise.name, mutant.slug, mutant.class, mutant.description
            ));
        } else if !text.to_lowercase().contains(&mutant.expect.to_lowercase()) {
            problems.push(format!(
                "{}: the mutant {} ({}) fails, but the report does not say \"{}\":\n{text}",
                exercise.name, mutant.slug, mutant.class, mutant.expect
            ));
        }
    }
    for alternative in &suite.alternatives {
        let report = exercise.check(Variant::Alternative(alternative.slug));
        if !report.passed() {
            problems.push(format!(
                "{}: the correct alternative {} ({}) FAILS its checker:\n{}",
                exercise.name,
                alternative.slug,
                alternative.description,
                findings_of(exercise, report)
            ));
        }
    }
    problems
}

#[test]
fn every_mutant_fails_with_its_cause_and_every_alternative_passes() {
    let problems: Vec<String> = EXERCISES.iter().flat_map(problems_of).collect();
    assert!(
        problems.is_empty(),
        "{} problem(s) with the mutation suites:\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}

/// The suite's rules are enforced: a folder with too few mutants or no alternative is a
/// failure, named with the exercise.
#[test]
fn an_exercise_without_its_suite_is_refused() {
    for exercise in EXERCISES {
        let suite = suite(exercise).unwrap_or_else(|error| panic!("{error}"));
        assert!(
            suite.mutants.len() >= MINIMUM_MUTANTS && !suite.alternatives.is_empty(),
            "{}: {} mutant(s) and {} alternative(s); every exercise needs at least \
             {MINIMUM_MUTANTS} mutants and one alternative",
            exercise.name,
            suite.mutants.len(),
            suite.alternatives.len()
        );
        let classes: std::collections::HashSet<&str> = suite
            .mutants
            .iter()
            .map(|mutant| mutant.class.as_str())
            .collect();
        assert!(
            classes.len() >= 2,
            "{}: every mutant is of class {:?}; a suite covers several kinds of mistake",
            exercise.name,
            classes
        );
    }
}
