//! `cargo xtask profile WORKLOAD [--tool TOOL] [--out DIR] [-- ARGUMENTS]`: runs one of the
//! crate's programs, built in release with line tables, under a profiler, and writes the
//! profiler's report into DIR (default `target/profile/<workload>-<tool>/`).
//!
//! | tool | what it writes |
//! |---|---|
//! | `perf-record` (default) | `perf-report.txt` (inclusive and exclusive share of the samples per function), `stacks.folded` and `flamegraph.svg` |
//! | `perf-stat` | `perf-stat.txt`: hardware counters (cycles, instructions, cache and branch misses) |
//! | `callgrind` | `callgrind-annotate.txt`: instructions, simulated cache misses and branch mispredictions per function |
//! | `timestamps` | the GPU time breakdown of `gpu-breakdown`: `time-breakdown.md` and its CSV file |
//!
//! Every directory also gets `commands.txt`: the exact command lines and the CPU they ran on.
//! A tool that is missing, or that the kernel does not let us use, stops the task before
//! anything runs, with a message that names the tool, the reason and the way to fix it.

use std::path::{Path, PathBuf};
use std::process::Command;

use clap::{Args, ValueEnum};
use thiserror::Error;

use crate::tools::repository_root;

mod checks;
mod command_log;
mod flame_graph;
#[cfg(test)]
mod tests;

use checks::check_tool;
use command_log::CommandLog;
use flame_graph::perf_record;

/// The options of `cargo xtask profile`.
#[derive(Args, Debug)]
pub struct ProfileArguments {
    /// What to run: `cpu-graph` (the CPU graph runner on the standard workload, 256 × 64),
    /// `train-digits` (the digits trainer), `gpu-breakdown` (one run of the GPU modes, timed
    /// by the GPU's clock), `example:NAME` (any example of the crate) or `exercise:NAME`
    /// (the sample program of an exercise that has one, such as `profile-hot-spot`).
    #[arg(value_parser = Workload::parse)]
    pub workload: Workload,
    /// The profiler.
    #[arg(long, value_enum, default_value_t = Tool::PerfRecord)]
    pub tool: Tool,
    /// Where the report goes (default `target/profile/<workload>-<tool>`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Samples per second of `perf-record`, per thread.
    #[arg(long, default_value_t = 999)]
    pub frequency: u32,
    /// Leave the frames whose names start with this out of the flame graph (repeatable), to
    /// merge the towers a recursive scheduler such as rayon's `join` splits one call into;
    /// `stacks.folded` keeps every frame.
    #[arg(long, value_name = "PREFIX")]
    pub hide_frames: Vec<String>,
    /// Profile the binary already in `target/release` instead of building it first.
    #[arg(long)]
    pub skip_build: bool,
    /// Arguments for the program, after `--`, instead of the workload's own.
    #[arg(last = true)]
    pub arguments: Vec<String>,
}

/// A program of the crate to profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Workload {
    CpuGraph,
    TrainDigits,
    GpuBreakdown,
    Example(String),
    /// The sample program of an exercise: the binary `NAME` (underscores) of
    /// `galaxy-exercises`, which runs the student's code.
    Exercise(String),
}

/// A profiler `cargo xtask profile` can drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Tool {
    /// Sampling: `perf record` with call stacks, then a report and a flame graph.
    PerfRecord,
    /// Counting: `perf stat` with the CPU's hardware counters.
    PerfStat,
    /// Instrumenting: valgrind's callgrind, with its cache and branch simulation.
    Callgrind,
    /// The GPU's own clock: wgpu timestamp queries (`gpu-breakdown` only).
    Timestamps,
}

#[derive(Debug, Error)]
pub enum ProfileError {
    #[error("{program} is not installed (not found on PATH): {install}")]
    Missing {
        program: &'static str,
        install: &'static str,
    },
    #[error(
        "perf may not open performance events here (kernel.perf_event_paranoid = {level} and \
         this user is not root): allow them with `sudo sysctl kernel.perf_event_paranoid=2`, \
         or run as root"
    )]
    NotPermitted { level: i32 },
    #[error(
        "perf cannot open performance events here: {reason} (a container may block the \
         perf_event_open system call; docker needs `--cap-add PERFMON` or a seccomp profile \
         that allows it)"
    )]
    Blocked { reason: String },
    #[error(
        "perf cannot read hardware counters here ({events} are <not supported>): this \
         machine exposes no performance-monitoring unit, as most virtual machines and \
         containers do not; `--tool callgrind` simulates the caches and the branch \
         predictor instead"
    )]
    NoHardwareCounters { events: String },
    #[error(
        "the timestamps tool reads the GPU's clock, which only a GPU workload writes: run \
         `cargo xtask profile gpu-breakdown --tool timestamps`"
    )]
    TimestampsNeedGpuWorkload,
    #[error("{} has not been built: build it with `{build}`", binary.display())]
    NotBuilt { binary: PathBuf, build: String },
    #[error("could not start {program}: {source}")]
    Start {
        program: String,
        source: std::io::Error,
    },
    #[error("{what} failed ({status}){details}")]
    Failed {
        what: String,
        status: String,
        details: String,
    },
    #[error("{}: {source}", path.display())]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// `cargo xtask profile`: check the tool, build the program, run it under the tool.
pub fn run(arguments: &ProfileArguments) -> Result<(), String> {
    profile(arguments).map_err(|error| error.to_string())
}

fn profile(arguments: &ProfileArguments) -> Result<(), ProfileError> {
    let tool = arguments.tool;
    if tool == Tool::Timestamps && arguments.workload != Workload::GpuBreakdown {
        return Err(ProfileError::TimestampsNeedGpuWorkload);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    check_tool(tool, &path)?;
    let root = repository_root();
    let out = arguments.out.clone().unwrap_or_else(|| {
        root.join("target").join("profile").join(format!(
            "{}-{}",
            arguments.workload.name(),
            tool.name()
        ))
    });
    create_directory(&out)?;
    let out = std::fs::canonicalize(&out).map_err(|source| ProfileError::File {
        path: out.clone(),
        source,
    })?;
    let binary = build(&arguments.workload, &root, arguments.skip_build)?;
    let program_arguments = if arguments.arguments.is_empty() {
        arguments.workload.default_arguments(&out)
    } else {
        arguments.arguments.clone()
    };
    let mut log = CommandLog::new(&out);
    match tool {
        Tool::PerfRecord => perf_record(&binary, &program_arguments, arguments, &mut log)?,
        Tool::PerfStat => {
            let mut command = Command::new("perf");
            command
                .args(["stat", "--output"])
                .arg(out.join("perf-stat.txt"))
                .args(["-e", PERF_STAT_EVENTS, "--"])
                .arg(&binary)
                .args(&program_arguments);
            log.run("perf stat", command)?;
        }
        Tool::Callgrind => {
            let data = out.join("callgrind.out");
            let mut command = Command::new("valgrind");
            command
                .args(["--tool=callgrind", "--cache-sim=yes", "--branch-sim=yes"])
                .arg(format!("--callgrind-out-file={}", data.display()))
                .arg(&binary)
                .args(&program_arguments);
            log.run("valgrind --tool=callgrind", command)?;
            let mut annotate = Command::new("callgrind_annotate");
            annotate.arg(&data);
            let report = log.capture("callgrind_annotate", annotate)?;
            write(&out.join("callgrind-annotate.txt"), &report)?;
        }
        Tool::Timestamps => {
            let mut command = Command::new(&binary);
            command.args(&program_arguments);
            log.run("the GPU time breakdown", command)?;
        }
    }
    log.finish()?;
    println!("profile written to {}", out.display());
    Ok(())
}

/// The counters `perf-stat` asks for: time, then the hardware events of module 1.
const PERF_STAT_EVENTS: &str = "task-clock,cycles,instructions,cache-references,cache-misses,\
                                branches,branch-misses,L1-dcache-load-misses";

impl Workload {
    fn parse(text: &str) -> Result<Workload, String> {
        match text {
            "cpu-graph" => Ok(Workload::CpuGraph),
            "train-digits" => Ok(Workload::TrainDigits),
            "gpu-breakdown" => Ok(Workload::GpuBreakdown),
            _ => match (
                text.strip_prefix("example:"),
                text.strip_prefix("exercise:")
                    .map(|name| name.replace('-', "_")),
            ) {
                (Some(name), _) if is_plain_name(name) => Ok(Workload::Example(name.to_string())),
                (_, Some(binary)) if is_plain_name(&binary) => Ok(Workload::Exercise(binary)),
                _ => Err(format!(
                    "`{text}` is not a workload: use cpu-graph, train-digits, gpu-breakdown, \
                     example:NAME with NAME an example of the crate (code/examples/NAME.rs) \
                     or exercise:NAME with NAME an exercise with a sample program \
                     (exercises/src/bin/NAME.rs)"
                )),
            },
        }
    }

    fn name(&self) -> String {
        match self {
            Workload::CpuGraph => "cpu-graph".to_string(),
            Workload::TrainDigits => "train-digits".to_string(),
            Workload::GpuBreakdown => "gpu-breakdown".to_string(),
            Workload::Example(name) | Workload::Exercise(name) => name.replace('_', "-"),
        }
    }

    /// `(cargo's target flag, target name)` of the program.
    fn target(&self) -> (&'static str, &str) {
        match self {
            Workload::CpuGraph => ("--example", "cpu_anchor_point"),
            Workload::TrainDigits => ("--example", "train_digits"),
            Workload::GpuBreakdown => ("--bin", "bench_report"),
            Workload::Example(name) => ("--example", name),
            Workload::Exercise(binary) => ("--bin", binary),
        }
    }

    /// The package the program belongs to.
    fn package(&self) -> &'static str {
        match self {
            Workload::Exercise(_) => "galaxy-exercises",
            _ => "galaxy",
        }
    }

    /// The arguments the program runs with unless others follow `--`.
    fn default_arguments(&self, out: &Path) -> Vec<String> {
        let owned = |texts: &[&str]| texts.iter().map(|text| text.to_string()).collect();
        match self {
            Workload::CpuGraph => owned(&["256", "64", "CpuGraph"]),
            Workload::GpuBreakdown => {
                let mut arguments: Vec<String> = owned(&[
                    "--parts",
                    "breakdown",
                    "--skip-uncached",
                    "--breakdown-sizes",
                    "64,256",
                    "--breakdown-runs",
                    "5",
                    "--breakdown-csv",
                ]);
                arguments.push(out.display().to_string());
                arguments.push("--out".to_string());
                arguments.push(out.join("time-breakdown.md").display().to_string());
                arguments
            }
            Workload::TrainDigits | Workload::Example(_) | Workload::Exercise(_) => Vec::new(),
        }
    }
}

/// Letters, digits and underscores only: a name cargo accepts and a shell cannot misread.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|character| character.is_ascii_alphanumeric() || character == '_')
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::PerfRecord => "perf-record",
            Tool::PerfStat => "perf-stat",
            Tool::Callgrind => "callgrind",
            Tool::Timestamps => "timestamps",
        }
    }

    /// The programs the tool runs, each with how to install it.
    fn programs(self) -> &'static [(&'static str, &'static str)] {
        const PERF: (&str, &str) = (
            "perf",
            "apt-get install linux-perf (Debian), linux-tools-generic (Ubuntu), perf (Fedora)",
        );
        const VALGRIND: (&str, &str) = ("valgrind", "apt-get install valgrind");
        const ANNOTATE: (&str, &str) = (
            "callgrind_annotate",
            "it comes with valgrind (apt-get install valgrind) and needs perl",
        );
        match self {
            Tool::PerfRecord | Tool::PerfStat => &[PERF],
            Tool::Callgrind => &[VALGRIND, ANNOTATE],
            Tool::Timestamps => &[],
        }
    }
}

/// Builds the program in release (line tables included: see the root Cargo.toml) and
/// returns the path of its binary (with `skip_build`, only the path, which must exist).
fn build(workload: &Workload, root: &Path, skip_build: bool) -> Result<PathBuf, ProfileError> {
    let (kind, name) = workload.target();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let directory = target.join("release");
    let binary = if kind == "--example" {
        directory.join("examples").join(name)
    } else {
        directory.join(name)
    };
    let package = workload.package();
    let build_command = format!("cargo build --release -p {package} {kind} {name}");
    if skip_build {
        return if binary.is_file() {
            Ok(binary)
        } else {
            Err(ProfileError::NotBuilt {
                binary,
                build: build_command,
            })
        };
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let status = Command::new(&cargo)
        .current_dir(root)
        .args(["build", "--release", "--package", package, kind, name])
        .status()
        .map_err(|source| ProfileError::Start {
            program: cargo.clone(),
            source,
        })?;
    if !status.success() {
        return Err(ProfileError::Failed {
            what: build_command,
            status: status.to_string(),
            details: String::new(),
        });
    }
    Ok(binary)
}

fn create_directory(path: &Path) -> Result<(), ProfileError> {
    std::fs::create_dir_all(path).map_err(|source| ProfileError::File {
        path: path.to_path_buf(),
        source,
    })
}

fn write(path: &Path, text: &str) -> Result<(), ProfileError> {
    std::fs::write(path, text).map_err(|source| ProfileError::File {
        path: path.to_path_buf(),
        source,
    })
}
