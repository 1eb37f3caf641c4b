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

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use clap::{Args, ValueEnum};
use thiserror::Error;

use crate::tools::repository_root;

/// The options of `cargo xtask profile`.
#[derive(Args, Debug)]
pub struct ProfileArguments {
    /// What to run: `cpu-graph` (the CPU graph runner on the standard workload, 256 × 64),
    /// `train-digits` (the digits trainer), `gpu-breakdown` (one run of the GPU modes, timed
    /// by the GPU's clock) or `example:NAME` (any example of the crate).
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
            _ => match text.strip_prefix("example:") {
                Some(name) if is_plain_name(name) => Ok(Workload::Example(name.to_string())),
                _ => Err(format!(
                    "`{text}` is not a workload: use cpu-graph, train-digits, gpu-breakdown \
                     or example:NAME with NAME an example of the crate (code/examples/NAME.rs)"
                )),
            },
        }
    }

    fn name(&self) -> String {
        match self {
            Workload::CpuGraph => "cpu-graph".to_string(),
            Workload::TrainDigits => "train-digits".to_string(),
            Workload::GpuBreakdown => "gpu-breakdown".to_string(),
            Workload::Example(name) => name.replace('_', "-"),
        }
    }

    /// `(cargo's target flag, target name)` of the program.
    fn target(&self) -> (&'static str, &str) {
        match self {
            Workload::CpuGraph => ("--example", "cpu_anchor_point"),
            Workload::TrainDigits => ("--example", "train_digits"),
            Workload::GpuBreakdown => ("--bin", "bench_report"),
            Workload::Example(name) => ("--example", name),
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
            Workload::TrainDigits | Workload::Example(_) => Vec::new(),
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

/// Fails unless every program of `tool` is on `path` and, for perf, the kernel lets it count.
fn check_tool(tool: Tool, path: &OsStr) -> Result<(), ProfileError> {
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
fn find_program(program: &str, path: &OsStr) -> Option<PathBuf> {
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
fn check_paranoid(level: i32, root: bool) -> Result<(), ProfileError> {
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
fn unsupported_events(report: &str) -> Vec<String> {
    report
        .lines()
        .filter(|line| line.starts_with("<not supported>"))
        .filter_map(|line| line.split(',').nth(2))
        .map(|event| event.trim_end_matches(":u").to_string())
        .collect()
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
    let build_command = format!("cargo build --release -p galaxy {kind} {name}");
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
        .args(["build", "--release", "--package", "galaxy", kind, name])
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

/// `perf record` with call stacks, then the report, the folded stacks and the flame graph.
fn perf_record(
    binary: &Path,
    program_arguments: &[String],
    arguments: &ProfileArguments,
    log: &mut CommandLog,
) -> Result<(), ProfileError> {
    let out = log.directory.clone();
    let data = out.join("perf.data");
    // Release builds keep no frame pointers, so perf copies a piece of each sample's stack
    // and unwinds it afterwards with the binary's unwind tables (`--call-graph dwarf`).
    let mut record = Command::new("perf");
    record
        .args(["record", "-F", &arguments.frequency.to_string()])
        .args(["--call-graph", "dwarf,16384", "-o"])
        .arg(&data)
        .arg("--")
        .arg(binary)
        .args(program_arguments);
    log.run("perf record", record)?;
    let mut report = Command::new("perf");
    report
        .args(["report", "--stdio", "--children", "--sort", "symbol"])
        .args(["-g", "none", "--percent-limit", "0.5", "--no-inline", "-i"])
        .arg(&data);
    let text = log.capture("perf report", report)?;
    write(&out.join("perf-report.txt"), &text)?;
    let mut script = Command::new("perf");
    // Without the period field every sample counts one, whatever its event's period.
    script
        .args([
            "script",
            "--no-inline",
            "-F",
            "comm,tid,time,event,ip,sym,dso",
            "-i",
        ])
        .arg(&data);
    let samples = log.capture("perf script", script)?;
    let folded = fold_stacks(&samples)?;
    write(&out.join("stacks.folded"), &folded)?;
    let title = format!(
        "{} ({} {})",
        arguments.workload.name(),
        binary.file_name().unwrap_or_default().to_string_lossy(),
        program_arguments.join(" ")
    );
    let shown = hide_frames(&folded, &arguments.hide_frames);
    let svg = draw_flame_graph(&shown, &title)?;
    write(&out.join("flamegraph.svg"), &svg)?;
    log.note("flamegraph.svg and stacks.folded: perf script | inferno (collapse-perf, flamegraph)");
    if !arguments.hide_frames.is_empty() {
        log.note(&format!(
            "frames left out of flamegraph.svg: those starting with {}",
            arguments.hide_frames.join(", ")
        ));
    }
    Ok(())
}

/// `perf script` output to one line per distinct stack, `outer;…;inner count`.
fn fold_stacks(samples: &str) -> Result<String, ProfileError> {
    use inferno::collapse::Collapse;
    let mut folder =
        inferno::collapse::perf::Folder::from(inferno::collapse::perf::Options::default());
    let mut folded = Vec::new();
    folder
        .collapse(samples.as_bytes(), &mut folded)
        .map_err(|source| inferno_error("folding perf script's stacks", &source))?;
    Ok(String::from_utf8_lossy(&folded).into_owned())
}

/// The folded stacks without the frames that start with one of `prefixes`; stacks that
/// become the same are merged, their counts added.
fn hide_frames(folded: &str, prefixes: &[String]) -> String {
    if prefixes.is_empty() {
        return folded.to_string();
    }
    let mut merged: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
    for line in folded.lines() {
        let Some((stack, count)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(count) = count.parse::<u64>() else {
            continue;
        };
        let kept: Vec<&str> = stack
            .split(';')
            .filter(|frame| {
                !prefixes
                    .iter()
                    .any(|prefix| frame.starts_with(prefix.as_str()))
            })
            .collect();
        *merged.entry(kept.join(";")).or_default() += count;
    }
    merged
        .into_iter()
        .map(|(stack, count)| format!("{stack} {count}\n"))
        .collect()
}

/// Folded stacks to a flame graph: one box per function on a stack, as wide as its share of
/// the samples, callers below callees.
fn draw_flame_graph(folded: &str, title: &str) -> Result<String, ProfileError> {
    let mut options = inferno::flamegraph::Options::default();
    options.title = title.to_string();
    options.count_name = "samples".to_string();
    options.image_width = Some(750);
    options.font_size = 13;
    options.deterministic = true;
    options.hash = true;
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, folded.lines(), &mut svg)
        .map_err(|source| inferno_error("drawing the flame graph", &source))?;
    Ok(String::from_utf8_lossy(&svg).into_owned())
}

fn inferno_error(what: &str, source: &std::io::Error) -> ProfileError {
    ProfileError::Failed {
        what: what.to_string(),
        status: "inferno".to_string(),
        details: format!(": {source}"),
    }
}

/// The commands a profile ran, written to `commands.txt` with the CPU they ran on.
struct CommandLog {
    directory: PathBuf,
    lines: Vec<String>,
}

impl CommandLog {
    fn new(directory: &Path) -> CommandLog {
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

    fn note(&mut self, text: &str) {
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
    fn run(&mut self, what: &str, mut command: Command) -> Result<(), ProfileError> {
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
    fn capture(&mut self, what: &str, mut command: Command) -> Result<String, ProfileError> {
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

    fn finish(self) -> Result<(), ProfileError> {
        let text = self.lines.join("\n") + "\n";
        write(&self.directory.join("commands.txt"), &text)
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Line {
        #[command(flatten)]
        profile: ProfileArguments,
    }

    fn parse(words: &[&str]) -> Result<ProfileArguments, clap::Error> {
        Line::try_parse_from(std::iter::once("profile").chain(words.iter().copied()))
            .map(|line| line.profile)
    }

    #[test]
    fn the_command_line_names_workload_tool_directory_and_arguments() {
        let plain = parse(&["cpu-graph"]).unwrap();
        assert_eq!(plain.workload, Workload::CpuGraph);
        assert_eq!(plain.tool, Tool::PerfRecord);
        assert_eq!(plain.out, None);
        assert!(plain.arguments.is_empty());

        let full = parse(&[
            "example:branch_prediction",
            "--tool",
            "callgrind",
            "--out",
            "somewhere",
            "--",
            "64",
            "--fast",
        ])
        .unwrap();
        assert_eq!(
            full.workload,
            Workload::Example("branch_prediction".to_string())
        );
        assert_eq!(full.tool, Tool::Callgrind);
        assert_eq!(full.out, Some(PathBuf::from("somewhere")));
        assert_eq!(full.arguments, ["64", "--fast"]);
        assert_eq!(
            parse(&["train-digits", "--tool", "perf-stat"])
                .unwrap()
                .tool,
            Tool::PerfStat
        );
    }

    #[test]
    fn unknown_workloads_and_tools_are_refused_with_the_choices() {
        let error = parse(&["gpu"]).err().unwrap().to_string();
        assert!(error.contains("`gpu` is not a workload"), "{error}");
        assert!(
            error.contains("cpu-graph, train-digits, gpu-breakdown"),
            "{error}"
        );
        for bad in ["example:", "example:../x", "example:a b"] {
            assert!(parse(&[bad]).is_err(), "{bad}");
        }
        let error = parse(&["cpu-graph", "--tool", "vtune"])
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("perf-record"), "{error}");
    }

    #[test]
    fn each_workload_builds_its_own_program_with_its_own_arguments() {
        let out = Path::new("/tmp/profile-out");
        assert_eq!(
            Workload::CpuGraph.target(),
            ("--example", "cpu_anchor_point")
        );
        assert_eq!(
            Workload::CpuGraph.default_arguments(out),
            ["256", "64", "CpuGraph"]
        );
        assert_eq!(Workload::GpuBreakdown.target(), ("--bin", "bench_report"));
        let gpu = Workload::GpuBreakdown.default_arguments(out);
        assert!(gpu.windows(2).any(|pair| pair == ["--parts", "breakdown"]));
        assert!(gpu.contains(&"/tmp/profile-out/time-breakdown.md".to_string()));
        assert_eq!(Workload::TrainDigits.name(), "train-digits");
        assert_eq!(
            Workload::Example("access_patterns".to_string()).name(),
            "access-patterns"
        );
    }

    #[test]
    fn a_missing_tool_is_named_with_how_to_install_it() {
        let empty = tempdir("empty-path");
        let path = std::env::join_paths([&empty]).unwrap();
        let error = check_tool(Tool::PerfRecord, &path).unwrap_err().to_string();
        assert!(error.starts_with("perf is not installed"), "{error}");
        assert!(error.contains("apt-get install linux-perf"), "{error}");
        let error = check_tool(Tool::Callgrind, &path).unwrap_err().to_string();
        assert!(error.starts_with("valgrind is not installed"), "{error}");
        // valgrind alone is not enough: the report needs callgrind_annotate.
        std::fs::write(empty.join("valgrind"), "").unwrap();
        let error = check_tool(Tool::Callgrind, &path).unwrap_err().to_string();
        assert!(
            error.starts_with("callgrind_annotate is not installed"),
            "{error}"
        );
        std::fs::write(empty.join("callgrind_annotate"), "").unwrap();
        assert!(check_tool(Tool::Callgrind, &path).is_ok());
        assert_eq!(
            find_program("valgrind", &path),
            Some(empty.join("valgrind"))
        );
        // The GPU's clock needs no program of its own.
        assert!(check_tool(Tool::Timestamps, &path).is_ok());
    }

    #[test]
    fn timestamps_are_refused_for_a_cpu_workload_before_anything_runs() {
        let arguments = parse(&["cpu-graph", "--tool", "timestamps"]).unwrap();
        let error = profile(&arguments).unwrap_err();
        assert!(matches!(error, ProfileError::TimestampsNeedGpuWorkload));
        assert!(
            error
                .to_string()
                .contains("gpu-breakdown --tool timestamps")
        );
    }

    #[test]
    fn a_paranoid_kernel_refuses_users_but_not_root() {
        assert!(check_paranoid(2, false).is_ok());
        assert!(check_paranoid(4, true).is_ok());
        let error = check_paranoid(4, false).unwrap_err().to_string();
        assert!(error.contains("perf_event_paranoid = 4"), "{error}");
        assert!(
            error.contains("sysctl kernel.perf_event_paranoid=2"),
            "{error}"
        );
    }

    #[test]
    fn counters_perf_cannot_read_are_found_in_its_report() {
        let virtual_machine = "1.23,msec,task-clock,1234567,100.00,0.877,CPUs utilized\n\
                               <not supported>,,instructions,0,100.00,,\n\
                               <not supported>,,branch-misses:u,0,100.00,,\n";
        assert_eq!(
            unsupported_events(virtual_machine),
            ["instructions", "branch-misses"]
        );
        let bare_metal = "0.51,msec,task-clock,510000,100.00,0.6,CPUs utilized\n\
                          812345,,instructions,510000,100.00,0.9,insn per cycle\n";
        assert!(unsupported_events(bare_metal).is_empty());
        let error = ProfileError::NoHardwareCounters {
            events: "instructions and branch-misses".to_string(),
        }
        .to_string();
        assert!(error.starts_with("perf cannot read hardware counters here"));
        assert!(error.contains("--tool callgrind"));
    }

    #[test]
    fn folded_stacks_become_a_flame_graph() {
        let samples = "cpu_anchor_poin 100 1.0: cpu-clock:\n\
                       \t    55d0 galaxy::cpu::kernel+0x10 (/bin/x)\n\
                       \t    56d0 main+0x20 (/bin/x)\n\
                       \n\
                       cpu_anchor_poin 100 1.1: cpu-clock:\n\
                       \t    55d0 galaxy::cpu::kernel+0x10 (/bin/x)\n\
                       \t    56d0 main+0x20 (/bin/x)\n\
                       \n\
                       cpu_anchor_poin 100 1.2: cpu-clock:\n\
                       \t    56d0 main+0x20 (/bin/x)\n\
                       \n";
        let folded = fold_stacks(samples).unwrap();
        assert!(
            folded.contains("cpu_anchor_poin;main;galaxy::cpu::kernel 2"),
            "{folded}"
        );
        assert!(folded.contains("cpu_anchor_poin;main 1"), "{folded}");
        let svg = draw_flame_graph(&folded, "a test").unwrap();
        assert!(svg.contains("<svg"));
        assert!(svg.contains("galaxy::cpu::kernel"));
        assert!(svg.contains("a test"));
    }

    #[test]
    fn hidden_frames_merge_the_stacks_they_split() {
        let folded = "main;join;join;kernel 3\nmain;join;kernel 2\nmain;pack 1\n";
        assert_eq!(
            hide_frames(folded, &["join".to_string()]),
            "main;kernel 5\nmain;pack 1\n"
        );
        assert_eq!(hide_frames(folded, &[]), folded);
    }

    fn tempdir(name: &str) -> PathBuf {
        let directory =
            std::env::temp_dir().join(format!("xtask-profile-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&directory);
        std::fs::create_dir_all(&directory).unwrap();
        directory
    }
}
