//! Tests of `cargo xtask profile`: the command line, the checks, the flame graph (no profiler
//! needs to be installed).

use std::path::{Path, PathBuf};

use super::checks::{check_paranoid, find_program, unsupported_events};
use super::flame_graph::{draw_flame_graph, fold_stacks, hide_frames};
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
    for bad in [
        "example:",
        "example:../x",
        "example:a b",
        "exercise:",
        "exercise:a/b",
    ] {
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
    let exercise = Workload::parse("exercise:profile-hot-spot").unwrap();
    assert_eq!(exercise.target(), ("--bin", "profile_hot_spot"));
    assert_eq!(exercise.package(), "galaxy-exercises");
    assert_eq!(exercise.name(), "profile-hot-spot");
    assert_eq!(Workload::CpuGraph.package(), "galaxy");
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
