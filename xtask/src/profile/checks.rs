//! Whether a profiler can run here: its programs on `PATH`, and for perf, the kernel's
//! permission and the hardware counters.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Command;

use super::{ProfileError, Tool};

/// Fails unless every program of `tool` is on `path` and, for perf, the kernel lets it count.
pub(super) fn check_tool(tool: Tool, path: &OsStr) -> Result<(), ProfileError> {
    for &(program, install) in tool.programs() {
        if find_program(program, path).is_none() {
            return Err(ProfileError::Missing { program, install });
        }
    }
    if matches!(tool, Tool::PerfRecord | Tool::PerfStat) {
        if let Some(level) = read_paranoid_level() {
            check_paranoid(level, is_root())?;
        }
        // The kernel may still refuse (seccomp in a container), and a virtual machine may
        // have no hardware counters: one tiny run of `perf stat` tells both.
        let probe = Command::new("perf")
            .args([
                "stat",
                "-x",
                ",",
                "-e",
                "task-clock,instructions,branch-misses",
            ])
            .arg("true")
            .output()
            .map_err(|source| ProfileError::Start {
                program: "perf".to_string(),
                source,
            })?;
        let stderr = String::from_utf8_lossy(&probe.stderr);
        if !probe.status.success() {
            let reason = stderr.lines().find(|line| !line.trim().is_empty());
            return Err(ProfileError::Blocked {
                reason: reason.unwrap_or("perf stat failed").trim().to_string(),
            });
        }
        let missing = unsupported_events(&stderr);
        if tool == Tool::PerfStat && missing.iter().any(|event| event != "task-clock") {
            return Err(ProfileError::NoHardwareCounters {
                events: missing.join(" and "),
            });
        }
    }
    Ok(())
}

/// The first file called `program` in the directories of a `PATH` value.
pub(super) fn find_program(program: &str, path: &OsStr) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|directory| directory.join(program))
        .find(|candidate| candidate.is_file())
}

fn read_paranoid_level() -> Option<i32> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Levels 3 and above (a Debian and Android patch) refuse every event to a user without
/// privileges; root is never refused by the level.
pub(super) fn check_paranoid(level: i32, root: bool) -> Result<(), ProfileError> {
    if level >= 3 && !root {
        Err(ProfileError::NotPermitted { level })
    } else {
        Ok(())
    }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .find_map(|line| line.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1))
            == Some("0")
    })
}

/// The events a `perf stat -x ,` report marks `<not supported>` (its third field is the
/// event's name).
pub(super) fn unsupported_events(report: &str) -> Vec<String> {
    report
        .lines()
        .filter(|line| line.starts_with("<not supported>"))
        .filter_map(|line| line.split(',').nth(2))
        .map(|event| event.trim_end_matches(":u").to_string())
        .collect()
}
