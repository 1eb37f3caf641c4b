//! The record of what a profile ran: `commands.txt` in the output directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::{ProfileError, write};

/// The commands a profile ran, written to `commands.txt` with the CPU they ran on.
pub(super) struct CommandLog {
    pub(super) directory: PathBuf,
    lines: Vec<String>,
}

impl CommandLog {
    pub(super) fn new(directory: &Path) -> CommandLog {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|text| {
                text.lines()
                    .find_map(|line| line.strip_prefix("model name"))
                    .map(|rest| rest.trim_start_matches([' ', '\t', ':']).to_string())
            })
            .unwrap_or_else(|| std::env::consts::ARCH.to_string());
        let cores = std::thread::available_parallelism().map_or(1, |count| count.get());
        CommandLog {
            directory: directory.to_path_buf(),
            lines: vec![format!("# CPU: {cpu}, {cores} cores available")],
        }
    }

    pub(super) fn note(&mut self, text: &str) {
        self.lines.push(format!("# {text}"));
    }

    fn record(&mut self, command: &Command) {
        let mut words = vec![command.get_program().to_string_lossy().into_owned()];
        words.extend(
            command
                .get_args()
                .map(|argument| argument.to_string_lossy().into_owned()),
        );
        self.lines.push(words.join(" "));
    }

    /// Runs `command` with its output shown, and fails if it fails.
    pub(super) fn run(&mut self, what: &str, mut command: Command) -> Result<(), ProfileError> {
        self.record(&command);
        let status = command.status().map_err(|source| ProfileError::Start {
            program: what.to_string(),
            source,
        })?;
        if status.success() {
            Ok(())
        } else {
            Err(ProfileError::Failed {
                what: what.to_string(),
                status: status.to_string(),
                details: String::new(),
            })
        }
    }

    /// Runs `command` and returns its standard output.
    pub(super) fn capture(
        &mut self,
        what: &str,
        mut command: Command,
    ) -> Result<String, ProfileError> {
        self.record(&command);
        let output: Output = command.output().map_err(|source| ProfileError::Start {
            program: what.to_string(),
            source,
        })?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(ProfileError::Failed {
                what: what.to_string(),
                status: output.status.to_string(),
                details: format!(": {}", stderr.trim()),
            });
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    pub(super) fn finish(self) -> Result<(), ProfileError> {
        let text = self.lines.join("\n") + "\n";
        write(&self.directory.join("commands.txt"), &text)
    }
}
