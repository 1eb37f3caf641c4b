//! What a built book says about itself: its version, the commit it was built from, and
//! where it lives online.
//!
//! - The version is written once, in the root `Cargo.toml` under
//!   `[workspace.metadata.book] version`; a release is tagged `v<version>`.
//! - The commit comes from git (`git rev-parse HEAD`), or from `GITHUB_SHA` when the
//!   book is built from a copy without git history; a tree with uncommitted changes says so.
//! - The repository is the root `Cargo.toml`'s `[workspace.package] repository`; the
//!   published site's address is derived from it (GitHub Pages:
//!   `https://OWNER.github.io/NAME/`), and `book.toml`'s `site-url` must be its path.

use std::path::Path;
use std::process::Command;

/// The repository and the site, from the root `Cargo.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    /// The book's version, e.g. `0.1.0`.
    pub version: String,
    /// `https://github.com/OWNER/NAME`, without a trailing slash.
    pub repository: String,
}

/// The commit a build comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// The full hash, or `None` when neither git nor `GITHUB_SHA` can tell.
    pub hash: Option<String>,
    /// Tracked files differ from that commit.
    pub has_local_changes: bool,
}

/// Everything a page footer, a title page and an errata link need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildInfo {
    pub project: Project,
    pub commit: Commit,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BuildInfoError {
    #[error("cannot read {path}: {message}")]
    Read { path: String, message: String },
    #[error("{path} is not valid TOML: {message}")]
    Toml { path: String, message: String },
    #[error("{path} has no {key}; add it (the book's footer, title page and errata links need it)")]
    Missing { path: String, key: &'static str },
    #[error(
        "the repository {repository:?} in Cargo.toml is not a GitHub address \
         (https://github.com/OWNER/NAME): the errata links and the site address are derived from it"
    )]
    NotGitHub { repository: String },
}

impl Project {
    /// Reads `[workspace.metadata.book] version` and `[workspace.package] repository`.
    pub fn read(root: &Path) -> Result<Project, BuildInfoError> {
        let path = root.join("Cargo.toml");
        let text = std::fs::read_to_string(&path).map_err(|error| BuildInfoError::Read {
            path: path.display().to_string(),
            message: error.to_string(),
        })?;
        Project::parse(&text, &path.display().to_string())
    }

    pub fn parse(manifest: &str, path: &str) -> Result<Project, BuildInfoError> {
        let table: toml::Table =
            manifest
                .parse()
                .map_err(|error: toml::de::Error| BuildInfoError::Toml {
                    path: path.to_string(),
                    message: error.message().to_string(),
                })?;
        let workspace = table.get("workspace");
        let version = workspace
            .and_then(|workspace| workspace.get("metadata"))
            .and_then(|metadata| metadata.get("book"))
            .and_then(|book| book.get("version"))
            .and_then(|version| version.as_str())
            .ok_or(BuildInfoError::Missing {
                path: path.to_string(),
                key: "[workspace.metadata.book] version",
            })?;
        let repository = workspace
            .and_then(|workspace| workspace.get("package"))
            .and_then(|package| package.get("repository"))
            .and_then(|repository| repository.as_str())
            .ok_or(BuildInfoError::Missing {
                path: path.to_string(),
                key: "[workspace.package] repository",
            })?;
        let project = Project {
            version: version.to_string(),
            repository: repository.trim_end_matches('/').to_string(),
        };
        project.owner_and_name()?;
        Ok(project)
    }

    /// `("OWNER", "NAME")` of `https://github.com/OWNER/NAME`.
    pub fn owner_and_name(&self) -> Result<(&str, &str), BuildInfoError> {
        let not_github = || BuildInfoError::NotGitHub {
            repository: self.repository.clone(),
        };
        let rest = self
            .repository
            .strip_prefix("https://github.com/")
            .ok_or_else(not_github)?;
        match rest.split('/').collect::<Vec<_>>().as_slice() {
            [owner, name] if !owner.is_empty() && !name.is_empty() => Ok((owner, name)),
            _ => Err(not_github()),
        }
    }

    /// The published site: `https://OWNER.github.io/NAME/` (GitHub Pages' address for a
    /// project site), with a trailing slash.
    pub fn site_address(&self) -> Result<String, BuildInfoError> {
        let (owner, name) = self.owner_and_name()?;
        Ok(format!(
            "https://{}.github.io/{name}/",
            owner.to_ascii_lowercase()
        ))
    }

    /// The path part of the site's address, `/NAME/`: `book.toml`'s `site-url`.
    pub fn site_path(&self) -> Result<String, BuildInfoError> {
        let (_, name) = self.owner_and_name()?;
        Ok(format!("/{name}/"))
    }
}

impl Commit {
    /// The commit of the working tree at `root`.
    pub fn of_working_tree(root: &Path) -> Commit {
        let git = |arguments: &[&str]| {
            Command::new("git")
                .arg("-C")
                .arg(root)
                .args(arguments)
                .output()
                .ok()
                .filter(|output| output.status.success())
                .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_string())
        };
        match git(&["rev-parse", "HEAD"]).filter(|hash| is_commit_hash(hash)) {
            Some(hash) => Commit {
                hash: Some(hash),
                has_local_changes: git(&["status", "--porcelain", "--untracked-files=no"])
                    .is_some_and(|changes| !changes.is_empty()),
            },
            None => Commit {
                hash: std::env::var("GITHUB_SHA")
                    .ok()
                    .filter(|hash| is_commit_hash(hash)),
                has_local_changes: false,
            },
        }
    }

    /// The first 12 characters of the hash, or `unknown`.
    pub fn short(&self) -> &str {
        self.hash
            .as_deref()
            .map_or("unknown", |hash| &hash[..hash.len().min(12)])
    }

    /// How a reader sees it: `0123456789ab`, `0123456789ab with local changes`, `unknown`.
    pub fn describe(&self) -> String {
        if self.has_local_changes {
            format!("{} with local changes", self.short())
        } else {
            self.short().to_string()
        }
    }
}

impl BuildInfo {
    pub fn read(root: &Path) -> Result<BuildInfo, BuildInfoError> {
        Ok(BuildInfo {
            project: Project::read(root)?,
            commit: Commit::of_working_tree(root),
        })
    }

    /// The commit's page on GitHub, if the commit is known.
    pub fn commit_address(&self) -> Option<String> {
        self.commit
            .hash
            .as_ref()
            .map(|hash| format!("{}/commit/{hash}", self.project.repository))
    }
}

fn is_commit_hash(text: &str) -> bool {
    text.len() >= 7 && text.chars().all(|character| character.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = r#"
[workspace.package]
repository = "https://github.com/Real-Timers-Guide/computational-galaxy"

[workspace.metadata.book]
version = "1.2.3"
"#;

    #[test]
    fn reads_the_version_and_derives_the_site() {
        let project = Project::parse(MANIFEST, "Cargo.toml").unwrap();
        assert_eq!(project.version, "1.2.3");
        assert_eq!(
            project.site_address().unwrap(),
            "https://real-timers-guide.github.io/computational-galaxy/"
        );
        assert_eq!(project.site_path().unwrap(), "/computational-galaxy/");
    }

    #[test]
    fn a_missing_version_is_named() {
        let error = Project::parse(
            "[workspace.package]\nrepository = \"https://github.com/a/b\"\n",
            "Cargo.toml",
        )
        .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("[workspace.metadata.book] version")
        );
    }

    #[test]
    fn a_repository_elsewhere_is_refused() {
        let manifest = MANIFEST.replace("https://github.com/", "https://example.org/");
        assert!(matches!(
            Project::parse(&manifest, "Cargo.toml"),
            Err(BuildInfoError::NotGitHub { .. })
        ));
    }

    #[test]
    fn commits_describe_themselves() {
        let commit = Commit {
            hash: Some("0123456789abcdef0123456789abcdef01234567".into()),
            has_local_changes: true,
        };
        assert_eq!(commit.describe(), "0123456789ab with local changes");
        let unknown = Commit {
            hash: None,
            has_local_changes: false,
        };
        assert_eq!(unknown.describe(), "unknown");
    }

    /// The real manifest and book.toml agree: one version, one repository, and the
    /// `site-url` that makes the 404 page work is the published site's path.
    #[test]
    fn the_repository_files_agree() {
        let root = crate::tools::repository_root();
        let project = Project::read(&root).unwrap();
        let book: toml::Table = std::fs::read_to_string(root.join("book.toml"))
            .unwrap()
            .parse()
            .unwrap();
        let html = &book["output"]["html"];
        assert_eq!(
            html["site-url"].as_str(),
            Some(project.site_path().unwrap().as_str()),
            "book.toml's site-url must be the path of the GitHub Pages site"
        );
        assert_eq!(
            html["git-repository-url"].as_str(),
            Some(project.repository.as_str())
        );
        assert!(
            html["edit-url-template"]
                .as_str()
                .unwrap()
                .starts_with(&project.repository)
        );
        let commit = Commit::of_working_tree(&root);
        assert!(
            commit.hash.is_some(),
            "the test runs in a git checkout, so the commit must be known"
        );
    }
}
