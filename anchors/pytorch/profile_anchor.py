"""PyTorch's profiler on the book's standard workload: where one run's time goes in PyTorch.

Reads networks that `cargo run --release --example export_workload` writes (the same files as
`mlp_anchor.py`), checks that PyTorch computes the crate's output, and runs each network under
`torch.profiler` in two ways:

- PyTorch eager: one kernel launch per operator;
- PyTorch CUDA graph: the whole forward pass captured once and replayed (CUDA only).

Each run uploads the input and reads the result back, as the crate's modes do. For each network
and mode it writes, into --out-dir:

- `pytorch-profile-<mode>-<size>x<depth>.txt`: the profiler's key averages, one table sorted by
  time on the GPU (self time: each operator's own, without the operators it calls) and one by
  time on the CPU;
- `pytorch-profile-<mode>-<size>x<depth>.json`: the Chrome trace of the profiled runs (open it in
  https://ui.perfetto.dev or chrome://tracing);
- `pytorch-profile-summary.csv`: per run, the wall time with the profiler on, the CPU time of the
  operators, the GPU time of its kernels and copies, their number (GPU events per run), and
  the GPU span of a run (from its first GPU activity to its last).

    python profile_anchor.py WORKLOADS/mlp-64x64.bin WORKLOADS/mlp-256x64.bin --out-dir OUT
    python profile_anchor.py WORKLOADS/mlp-8x4.bin --device cpu --out-dir OUT  # CPU only

Everything runs in fp32 with TF32 off, as in mlp_anchor.py, with the same pinned torch
(requirements.txt).
"""

import argparse
import datetime
import sys
import time
from pathlib import Path

from mlp_anchor import TorchModes, WorkloadError, check_output, describe_hardware, read_workload

# Untimed runs before the profiler starts: kernels loaded, caches and allocator warm.
WARMUP_RUNS = 10
ROWS_PER_TABLE = 20


def file_stem(mode_name):
    """`PyTorch CUDA graph` -> `cuda-graph`."""
    return mode_name.removeprefix("PyTorch ").lower().replace(" ", "-")


def self_device_microseconds(average):
    """An operator's own time on the GPU, whichever name this torch version gives it."""
    for name in ("self_device_time_total", "self_cuda_time_total"):
        value = getattr(average, name, None)
        if value is not None:
            return float(value)
    return 0.0


def is_device_event(torch, average):
    device_type = getattr(average, "device_type", None)
    return device_type is not None and device_type != torch.autograd.DeviceType.CPU


def profile_mode(torch, device, mode_name, run_once, runs, trace_path):
    """Runs `run_once` `runs` times under the profiler; returns the profile and the wall time."""
    from torch.profiler import ProfilerActivity, profile, record_function

    activities = [ProfilerActivity.CPU]
    if device == "cuda":
        activities.append(ProfilerActivity.CUDA)
    for _ in range(WARMUP_RUNS):
        run_once()
    if device == "cuda":
        torch.cuda.synchronize()
    with profile(activities=activities) as profiler:
        start = time.perf_counter()
        for _ in range(runs):
            # One labelled range per run: the trace shows where each run starts and ends.
            with record_function(f"{mode_name} run"):
                run_once()
        wall = time.perf_counter() - start
    profiler.export_chrome_trace(str(trace_path))
    return profiler, wall


def summary_row(torch, profiler, runs, wall, mode_name, workload):
    averages = profiler.key_averages()
    # Everything CUPTI saw on the GPU: the kernels and the copies. Our label around a run
    # has a GPU range too (from the run's first GPU activity to its last): it is the span,
    # not work, and is kept apart.
    on_gpu = [a for a in averages if is_device_event(torch, a) and not a.key.endswith(" run")]
    gpu_events = sum(average.count for average in on_gpu)
    gpu_microseconds = sum(self_device_microseconds(average) for average in on_gpu)
    span_microseconds = sum(
        self_device_microseconds(average)
        for average in averages
        if is_device_event(torch, average) and average.key.endswith(" run")
    )
    # Self CPU time of every operator that is not our own label around a run.
    cpu_microseconds = sum(
        float(average.self_cpu_time_total)
        for average in averages
        if not average.key.endswith(" run")
    )
    return (
        f"{mode_name},{workload.size},{workload.depth},{runs},"
        f"{wall / runs * 1e3:.4f},{cpu_microseconds / runs / 1e3:.4f},"
        f"{gpu_microseconds / runs / 1e3:.4f},{gpu_events / runs:.1f},"
        f"{span_microseconds / runs / 1e3:.4f}"
    )


def write_tables(path, profiler, device, header):
    averages = profiler.key_averages()
    sections = [header]
    if device == "cuda":
        sections.append("Sorted by self time on the GPU (milliseconds are totals over all runs):")
        sections.append(averages.table(sort_by="self_device_time_total", row_limit=ROWS_PER_TABLE))
    sections.append("Sorted by self time on the CPU:")
    sections.append(averages.table(sort_by="self_cpu_time_total", row_limit=ROWS_PER_TABLE))
    path.write_text("\n\n".join(sections) + "\n")


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", type=Path, nargs="+", help="files export_workload wrote")
    parser.add_argument("--out-dir", type=Path, default=Path("."), help="where the files go")
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--runs", type=int, default=20, help="profiled runs per mode")
    return parser.parse_args(argv)


def main(argv):
    arguments = parse_arguments(argv)
    import torch

    if arguments.device == "cuda":
        if not torch.cuda.is_available():
            print("profile_anchor.py: no CUDA device; use --device cpu", file=sys.stderr)
            return 1
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
    if arguments.runs < 1:
        print("profile_anchor.py: --runs must be at least 1", file=sys.stderr)
        return 2
    arguments.out_dir.mkdir(parents=True, exist_ok=True)
    hardware = describe_hardware(torch, arguments.device)
    command = "python " + " ".join([Path(sys.argv[0]).name] + argv)
    summary = [
        "# title: PyTorch's profiler on the standard workload, per run",
        f"# hardware: {hardware}",
        f"# command: {command}",
        f"# date: {datetime.date.today().isoformat()}",
        "mode,size,depth,runs,wall_ms_profiled,cpu_operator_ms,gpu_ms,gpu_events,gpu_span_ms",
    ]
    modes = TorchModes(torch, arguments.device, max_autotune=False, skip_compile=True)
    failures = 0
    try:
        for path in arguments.workloads:
            workload = read_workload(path)
            print(f"{path.name}: {workload.size}x{workload.depth}", flush=True)
            for mode_name, run_once in modes.prepare(workload):
                check_output(mode_name, workload, run_once().numpy())
                stem = f"pytorch-profile-{file_stem(mode_name)}-{workload.size}x{workload.depth}"
                try:
                    profiler, wall = profile_mode(
                        torch,
                        arguments.device,
                        mode_name,
                        run_once,
                        arguments.runs,
                        arguments.out_dir / f"{stem}.json",
                    )
                except RuntimeError as error:
                    # One mode the profiler cannot record must not cost the others: say so
                    # and go on.
                    print(f"  {mode_name}: the profiler failed: {error}", file=sys.stderr)
                    failures += 1
                    continue
                header = (
                    f"{mode_name}, standard workload {workload.size}x{workload.depth}, "
                    f"{arguments.runs} runs under torch.profiler\n{hardware}\n{command}"
                )
                write_tables(arguments.out_dir / f"{stem}.txt", profiler, arguments.device, header)
                row = summary_row(torch, profiler, arguments.runs, wall, mode_name, workload)
                summary.append(row)
                print(f"  {row}", flush=True)
    except WorkloadError as error:
        print(f"profile_anchor.py: {error}", file=sys.stderr)
        return 1
    (arguments.out_dir / "pytorch-profile-summary.csv").write_text("\n".join(summary) + "\n")
    print(f"written to {arguments.out_dir}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
