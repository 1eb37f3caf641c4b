//! Checks of the GitHub workflows and the erratum form that the linters cannot make,
//! because they are about this project's intent rather than about valid workflows
//! (`.github/lint-workflows.sh` validates them with check-jsonschema and zizmor):
//!
//! - every action is pinned to a full commit, with the version in a comment;
//! - the deploy workflow runs `.ci/run` on pushes to main, builds the course editions and
//!   publishes with the Pages actions; the release workflow runs on `v*` tags, checks the
//!   tag against `cargo xtask version` and attaches the PDF and the offline zip;
//! - the erratum form has a field for every value the pages' errata links fill in.
//!
//! The files are read as text, line by line: a workflow's shape is fixed enough for that,
//! and it keeps a YAML parser out of xtask.

use std::path::PathBuf;

use crate::site_pages::ERRATUM_TEMPLATE;
use crate::tools::repository_root;

fn read(relative: &str) -> String {
    let path: PathBuf = repository_root().join(relative);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()))
}

fn workflows() -> Vec<(String, String)> {
    let directory = repository_root().join(".github").join("workflows");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&directory)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", directory.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "yml"))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// `owner/name@<40 hex digits> # v1.2.3`: a commit, and the version it is.
fn is_pinned(uses: &str) -> bool {
    let Some((action, rest)) = uses.split_once('@') else {
        return false;
    };
    let Some((commit, comment)) = rest.split_once(" # v") else {
        return false;
    };
    action.contains('/')
        && commit.len() == 40
        && commit
            .chars()
            .all(|character| character.is_ascii_hexdigit())
        && comment
            .chars()
            .next()
            .is_some_and(|first| first.is_ascii_digit())
}

/// The trimmed lines of a workflow, comments left out.
fn lines(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.starts_with('#'))
        .collect()
}

#[test]
fn every_action_is_pinned_to_a_commit() {
    let mut checked = 0;
    for (name, text) in workflows() {
        for line in lines(&text) {
            if let Some(uses) = line
                .strip_prefix("- uses: ")
                .or_else(|| line.strip_prefix("uses: "))
            {
                assert!(
                    is_pinned(uses),
                    "{name}: `{uses}` is not pinned as owner/name@<commit> # v<version>"
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 8, "only {checked} `uses:` lines found");
}

#[test]
fn pinning_is_recognised() {
    assert!(is_pinned(
        "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1"
    ));
    assert!(!is_pinned("actions/checkout@v7"));
    assert!(!is_pinned(
        "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1"
    ));
}

#[test]
fn the_deploy_workflow_tests_builds_and_publishes() {
    let text = read(".github/workflows/deploy.yml");
    let lines = lines(&text);
    let has = |wanted: &str| lines.contains(&wanted);
    let uses = |action: &str| {
        lines
            .iter()
            .any(|line| line.contains(&format!("uses: {action}@")))
    };
    assert!(
        has("push:") && has("branches: [main]"),
        "not on pushes to main"
    );
    assert!(has("run: bash .ci/run"), "does not run .ci/run");
    assert!(
        has("cargo xtask syllabus \"$syllabus\""),
        "does not build the course editions"
    );
    assert!(has("for syllabus in syllabi/*.toml; do"));
    assert!(uses("actions/upload-pages-artifact") && uses("actions/deploy-pages"));
    assert!(has("pages: write # to publish the site"));
    assert!(has(
        "id-token: write # deploy-pages proves with an OIDC token that this run may publish"
    ));
    assert!(has("needs: [ci, editions]"));
    assert!(
        has("if: ${{ always() && needs.ci.result == 'success' }}"),
        "deploy must wait for CI to pass"
    );
    // The workflow as a whole may only read; only the deploy job writes to Pages.
    assert!(text.contains("\npermissions:\n  contents: read\n"));
}

#[test]
fn the_release_workflow_checks_the_tag_and_attaches_the_pdf_and_zip() {
    let text = read(".github/workflows/release.yml");
    let lines = lines(&text);
    let has = |wanted: &str| lines.contains(&wanted);
    assert!(has("tags: [\"v*\"]"), "not on v* tags");
    assert!(has("version=\"$(cargo xtask version)\""));
    assert!(has("if [ \"$GITHUB_REF_NAME\" != \"v$version\" ]; then"));
    assert!(has("run: bash .ci/run"));
    assert!(has(
        "cp book/computational-galaxy.pdf \"release/$folder.pdf\""
    ));
    assert!(has(
        "(cd release && zip -q -r \"$folder-html.zip\" \"$folder\" && rm -r \"$folder\")"
    ));
    assert!(has("gh release create \"$GITHUB_REF_NAME\" release/* \\"));
    assert!(has(
        "contents: write # to create the release and attach its files"
    ));
    assert!(text.contains("\npermissions:\n  contents: read\n"));
}

#[test]
fn the_erratum_form_has_every_field_the_links_fill_in() {
    let form = read(&format!(".github/ISSUE_TEMPLATE/{ERRATUM_TEMPLATE}"));
    // site_pages::errata_address fills these in (besides `template` and `title`).
    for field in ["page", "edition", "commit"] {
        assert!(
            form.lines()
                .any(|line| line.trim() == format!("id: {field}")),
            "{ERRATUM_TEMPLATE} has no field with `id: {field}`"
        );
    }
    let info = crate::build_info::BuildInfo {
        project: crate::build_info::Project {
            version: "1.0.0".into(),
            repository: "https://github.com/o/n".into(),
        },
        commit: crate::build_info::Commit {
            hash: None,
            has_local_changes: false,
        },
    };
    let edition = crate::site_pages::Edition {
        title: "T".into(),
        cut_from: None,
        site_address: "https://o.github.io/n/".into(),
    };
    let link = crate::site_pages::errata_address("P", &edition, &info, "a");
    let query = link.split_once('?').unwrap().1;
    let names: Vec<&str> = query
        .split('&')
        .map(|pair| pair.split_once('=').unwrap().0)
        .collect();
    assert_eq!(names, ["template", "title", "page", "edition", "commit"]);
}
