//! The book's command-line tools, at exactly the versions the workspace pins.
//!
//! The versions live in the root `Cargo.toml` under `[workspace.metadata.book-tools]`.
//! A tool is used from `.tools/bin/` (installed there by `cargo install --root .tools`),
//! or from `PATH` if the version there is exactly the pinned one; otherwise it is
//! installed from crates.io into `.tools/`. Nothing is downloaded from anywhere else.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

/// The mdBook binary and the directory the preprocessors are found in.
pub struct BookTools {
    pub mdbook: PathBuf,
    /// Prepended to `PATH` when mdBook runs, so it finds `mdbook-katex`.
    pub search_path: Vec<PathBuf>,
}

impl BookTools {
    pub fn ensure_installed() -> Result<BookTools, String> {
        let root = repository_root();
        let pins = read_pins(&root)?;
        let install_root = root.join(".tools");
        let mut search_path = Vec::new();
        let mut mdbook = None;
        for (name, version) in &pins {
            let binary = ensure_tool(name, version, &install_root)?;
            if let Some(directory) = binary.parent()
                && !directory.as_os_str().is_empty()
                && !search_path.contains(&directory.to_path_buf())
            {
                search_path.push(directory.to_path_buf());
            }
            if name == "mdbook" {
                mdbook = Some(binary);
            }
        }
        let mdbook =
            mdbook.ok_or("Cargo.toml pins no `mdbook` under [workspace.metadata.book-tools]")?;
        Ok(BookTools {
            mdbook,
            search_path,
        })
    }

    /// A command for `mdbook` with the preprocessors on its `PATH`.
    pub fn mdbook_command(&self) -> Command {
        let mut command = Command::new(&self.mdbook);
        let existing = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = self.search_path.clone();
        paths.extend(std::env::split_paths(&existing));
        command.env(
            "PATH",
            std::env::join_paths(paths).expect("valid PATH entries"),
        );
        command
    }
}

pub fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives inside the repository")
        .to_path_buf()
}

/// `(tool, version)` pairs from `[workspace.metadata.book-tools]`, in file order.
fn read_pins(root: &Path) -> Result<Vec<(String, String)>, String> {
    let manifest_path = root.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest_path)
        .map_err(|error| format!("cannot read {}: {error}", manifest_path.display()))?;
    let manifest: toml::Table = text
        .parse()
        .map_err(|error| format!("{} is not valid TOML: {error}", manifest_path.display()))?;
    let tools = manifest
        .get("workspace")
        .and_then(|workspace| workspace.get("metadata"))
        .and_then(|metadata| metadata.get("book-tools"))
        .and_then(|tools| tools.as_table())
        .ok_or("Cargo.toml has no [workspace.metadata.book-tools] table")?;
    tools
        .iter()
        .map(|(name, version)| match version.as_str() {
            Some(version) => Ok((name.clone(), version.to_string())),
            None => Err(format!(
                "the pin of {name} in [workspace.metadata.book-tools] is not a string"
            )),
        })
        .collect()
}

/// The version a tool reports, e.g. `0.5.4` from `mdbook v0.5.4`.
fn reported_version(binary: &Path) -> Option<String> {
    let output = Command::new(binary).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.split_whitespace()
        .last()
        .map(|word| word.trim_start_matches('v').to_string())
}

fn ensure_tool(name: &str, version: &str, install_root: &Path) -> Result<PathBuf, String> {
    let executable = format!("{name}{}", std::env::consts::EXE_SUFFIX);
    let local = install_root.join("bin").join(&executable);
    if reported_version(&local).as_deref() == Some(version) {
        return Ok(local);
    }
    if reported_version(Path::new(&executable)).as_deref() == Some(version) {
        // The one on PATH is exactly the pinned version: reuse it.
        return Ok(PathBuf::from(executable));
    }
    eprintln!(
        "Installing {name} {version} from crates.io into {} (first run only; this compiles it and takes a few minutes)…",
        install_root.display()
    );
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command
        .args(["install", "--locked", "--version", version, "--root"])
        .arg(install_root)
        .arg(name);
    // cargo install ends with "warning: be sure to add `…/.tools/bin` to your PATH": it does
    // not apply, since xtask runs the tools from there itself.
    let status = status_with_stderr(command, |line| {
        if line.contains("be sure to add") && line.contains("to your PATH") {
            StderrLine::Hide
        } else {
            StderrLine::Show
        }
    })
    .map_err(|error| format!("cannot run cargo install: {error}"))?;
    if !status.success() {
        return Err(format!("`cargo install {name} --version {version}` failed"));
    }
    match reported_version(&local) {
        Some(found) if found == version => Ok(local),
        found => Err(format!(
            "installed {name}, but {} reports version {found:?}, not {version}",
            local.display()
        )),
    }
}

/// What to do with one line a tool writes to its standard error.
pub enum StderrLine {
    Show,
    Hide,
    /// Show the line, then this note on the next line.
    ShowWithNote(&'static str),
}

/// Runs `command` and passes its standard error through, line by line as it comes, except
/// where `classify` says to hide a line or to explain it.
pub fn status_with_stderr(
    mut command: Command,
    classify: impl Fn(&str) -> StderrLine,
) -> std::io::Result<ExitStatus> {
    command.stderr(Stdio::piped());
    let mut child = command.spawn()?;
    let stderr = child.stderr.take().expect("standard error is piped");
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let text = String::from_utf8_lossy(&line);
        let mut out = std::io::stderr().lock();
        match classify(text.trim_end()) {
            StderrLine::Hide => {}
            StderrLine::Show => out.write_all(&line)?,
            StderrLine::ShowWithNote(note) => {
                out.write_all(&line)?;
                if !line.ends_with(b"\n") {
                    writeln!(out)?;
                }
                writeln!(out, "{note}")?;
            }
        }
    }
    child.wait()
}
