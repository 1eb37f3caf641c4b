//! `perf record` with call stacks, its report, and the flame graph drawn from its samples
//! with the `inferno` crate.

use std::path::Path;
use std::process::Command;

use super::{CommandLog, ProfileArguments, ProfileError, write};

/// `perf record` with call stacks, then the report, the folded stacks and the flame graph.
pub(super) fn perf_record(
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
pub(super) fn fold_stacks(samples: &str) -> Result<String, ProfileError> {
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
pub(super) fn hide_frames(folded: &str, prefixes: &[String]) -> String {
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
pub(super) fn draw_flame_graph(folded: &str, title: &str) -> Result<String, ProfileError> {
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
