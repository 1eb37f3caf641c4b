"""The CPU anchors for the book's standard workload: NumPy and ONNX Runtime beside the crate.

Reads the networks that `cargo run --release --example export_workload` writes (the crate's
own weights, biases, ReLU pattern and input), checks that NumPy and ONNX Runtime compute the
crate's output, then times one forward pass per run, interleaved point by point with the
crate's `CpuGraph` (and `Cpu`) modes, which `cpu_anchor_point` times in a separate process:

- NumPy: `x @ W + b`, `np.maximum`, a row softmax, in float32 (matrix products in the BLAS
  NumPy was built with: OpenBLAS for the wheels on PyPI, on every core);
- ONNX Runtime: the network as an ONNX graph (Gemm, Relu, Softmax, weights as initializers)
  built with the `onnx` package, CPU execution provider, every graph optimisation
  (ORT_ENABLE_ALL), one intra-op thread per core.

It also times the matrix product alone at 1024³ (OpenBLAS sgemm through NumPy against the
crate's linear layer on every core). See README.md for the command and the output files.
"""

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "pytorch"))
from mlp_anchor import (  # noqa: E402  (the workload reader is shared with the PyTorch anchor)
    DEPTH_SWEEP_SIZE,
    DEPTHS,
    SIZE_SWEEP_DEPTH,
    SIZES,
    WorkloadError,
    check_output,
    numpy_forward,
    read_workload,
)

# A sample lasts at least this long: quicker runs are repeated inside it, as in the crate.
MINIMUM_SAMPLE_SECONDS = 0.02
SAMPLES = 7
# `Cpu` (the textbook triple loop) takes seconds per run from size 512 on: left out there.
CPU_MODE_LARGEST_SIZE = 256
LINEAR_SIZE = 1024
# The crate's mode names as the figures label them.
SERIES_NAMES = {"LayerByLayer": "CpuGraph layer by layer (before)"}
PEAK_SERIES = "FMA peak (every core)"
# OpenBLAS's and ONNX Runtime's worker threads keep spinning after their last call (about
# 0.1 s and 0.05 s at nearly a whole core each, measured on the 2-core EPYC), in case more
# work comes. A measurement that starts during that time shares a core with them, so every
# measurement starts after this long idle.
SETTLE_SECONDS = 0.5


def all_core_peak(peak):
    """GFLOP/s of every core at the FMA peak: the one-core peak times the cores, or the
    all-core measurement if that is higher. Each core has FMA units of its own, so the
    product is what the machine can do; an all-core measurement below it means another
    program had one of the cores."""
    cores = max(peak)
    return max(peak[cores], peak[1] * cores)


def median_milliseconds(run_once):
    """Median over SAMPLES samples of the time per run, each sample at least
    MINIMUM_SAMPLE_SECONDS of back-to-back runs (after one untimed warm-up run)."""
    run_once()
    start = time.perf_counter()
    run_once()
    one_run = max(time.perf_counter() - start, 1e-7)
    runs = max(1, int(MINIMUM_SAMPLE_SECONDS / one_run))
    samples = []
    for _ in range(SAMPLES):
        start = time.perf_counter()
        for _ in range(runs):
            run_once()
        samples.append((time.perf_counter() - start) / runs * 1e3)
    return statistics.median(samples)


def onnx_session(workload, threads):
    """The workload as an ONNX graph, in an ONNX Runtime session on the CPU."""
    import onnx
    import onnxruntime
    from onnx import TensorProto, helper, numpy_helper

    size = workload.size
    nodes, initializers = [], []
    current = "x"
    for index, (weights, bias, relu) in enumerate(workload.layers):
        initializers.append(numpy_helper.from_array(weights, f"w{index}"))
        initializers.append(numpy_helper.from_array(bias, f"b{index}"))
        output = f"linear{index}"
        nodes.append(helper.make_node("Gemm", [current, f"w{index}", f"b{index}"], [output]))
        current = output
        if relu:
            nodes.append(helper.make_node("Relu", [current], [f"relu{index}"]))
            current = f"relu{index}"
    nodes.append(helper.make_node("Softmax", [current], ["y"], axis=1))
    graph = helper.make_graph(
        nodes,
        f"mlp_{size}x{workload.depth}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [size, size])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    return onnxruntime.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


def crate_times(binary, size, depth, modes):
    """{mode: ms} from the crate's `cpu_anchor_point` example, run in its own process."""
    result = subprocess.run(
        [str(binary), str(size), str(depth), *modes], capture_output=True, text=True
    )
    if result.returncode != 0:
        raise WorkloadError(f"{binary} {size} {depth}: {result.stderr.strip()}")
    times = {}
    for line in result.stdout.splitlines():
        if line.startswith("#"):
            print(f"  {line}", flush=True)
            continue
        mode, _, _, milliseconds = line.split(",")
        times[mode] = float(milliseconds)
    return times


def crate_linear(binary, size):
    """{variant: GFLOP/s} of the crate's linear layer at size³ on every core."""
    result = subprocess.run(
        [str(binary), "linear", str(size)], capture_output=True, text=True
    )
    if result.returncode != 0:
        raise WorkloadError(f"{binary} linear {size}: {result.stderr.strip()}")
    rates = {}
    for line in result.stdout.splitlines():
        if not line.startswith("#"):
            name, _, rate = line.split(",")
            rates[name] = float(rate)
    return rates


def measure_peak(binary, out_dir):
    """The crate's `cpu_peak` example: writes cpu-peak.txt, returns {threads: GFLOP/s}."""
    out_dir.mkdir(parents=True, exist_ok=True)
    # Mixed units (GFLOP/s and GB/s): a table, not a figure, hence not .csv.
    path = out_dir / "cpu-peak.txt"
    result = subprocess.run([str(binary), str(path)], capture_output=True, text=True)
    if result.returncode != 0:
        raise WorkloadError(f"{binary}: {result.stderr.strip()}")
    print(result.stdout, end="", flush=True)
    peak = {}
    for line in path.read_text().splitlines():
        if line.startswith("fp32 FMA peak"):
            _, threads, rate = line.rsplit(",", 2)
            peak[int(threads)] = float(rate)
    return peak


def peak_time_rows(peak, points):
    """The time a run would take at the all-core FMA peak: 2·size³ per layer."""
    best = all_core_peak(peak)
    return [(PEAK_SERIES, x, [2 * size**3 * depth / (best * 1e9) * 1e3])
            for x, size, depth in points]


def numpy_sgemm(size):
    """GFLOP/s of np.matmul on float32 size × size matrices (OpenBLAS sgemm, every core),
    checked against a float64 product."""
    generator = np.random.default_rng(size)
    a = generator.standard_normal((size, size), dtype=np.float32)
    b = generator.standard_normal((size, size), dtype=np.float32)
    c = np.empty((size, size), dtype=np.float32)
    milliseconds = median_milliseconds(lambda: np.matmul(a, b, out=c))
    expected = a.astype(np.float64) @ b.astype(np.float64)
    error = float(np.max(np.abs(c - expected)) / np.max(np.abs(expected)))
    if not error <= 1e-4:
        raise WorkloadError(f"NumPy sgemm {size}: relative error {error:.2e}")
    return 2 * size**3 / (milliseconds / 1e3) / 1e9


def describe_hardware():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    import onnxruntime

    return (
        f"CPU {cpu} ({os.cpu_count()} cores); NumPy {np.__version__} "
        f"({blas_name()}); ONNX Runtime {onnxruntime.__version__} (CPU provider, "
        f"ORT_ENABLE_ALL, {os.cpu_count()} intra-op threads); fp32"
    )


def blas_name():
    try:
        config = np.show_config(mode="dicts")
        return config["Build Dependencies"]["blas"]["name"]
    except Exception:  # noqa: BLE001  (older NumPy: the name is only decoration)
        return "BLAS unknown"


def write_csv(path, title, x_label, y_label, hardware, command, rows):
    """The project's figure format: `#` lines, then series,x,y,y_min,y_max."""
    lines = [
        f"# title: {title}",
        f"# x: {x_label}",
        f"# y: {y_label}",
        f"# hardware: {hardware}",
        f"# command: {command} ({datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC)",
        "series,x,y,y_min,y_max",
    ]
    for series, x, values in rows:
        lines.append(
            f"{series},{x},{statistics.median(values):.6g},{min(values):.6g},{max(values):.6g}"
        )
    path.write_text("\n".join(lines) + "\n")
    print(f"wrote {path}", flush=True)


def selected_points(only):
    points = [(size, SIZE_SWEEP_DEPTH) for size in SIZES]
    points += [(DEPTH_SWEEP_SIZE, depth) for depth in DEPTHS if depth != SIZE_SWEEP_DEPTH]
    if only:
        wanted = {tuple(int(part) for part in text.lower().split("x")) for text in only}
        points = [point for point in points if point in wanted]
    return points


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", type=Path, help="the directory export_workload wrote")
    parser.add_argument("--crate", type=Path, default=Path("target/release/examples/cpu_anchor_point"),
                        help="the crate's cpu_anchor_point example (release build)")
    parser.add_argument("--peak", type=Path, default=Path("target/release/examples/cpu_peak"),
                        help="the crate's cpu_peak example (release build)")
    parser.add_argument("--out-dir", type=Path, default=Path("."), help="where the CSV files go")
    parser.add_argument("--repeats", type=int, default=3,
                        help="each point is measured this many times, interleaved")
    parser.add_argument("--only", nargs="+", metavar="SIZExDEPTH", help="only these points")
    parser.add_argument("--threads", type=int, default=os.cpu_count(),
                        help="ONNX Runtime's intra-op threads (default: every core)")
    parser.add_argument("--skip-linear", action="store_true", help="no 1024³ matrix product")
    parser.add_argument("--cpu-up-to", type=int, default=CPU_MODE_LARGEST_SIZE,
                        help="time the crate's slow Cpu mode only up to this size (default 256)")
    parser.add_argument("--skip-cpu", action="store_true",
                        help="leave out the crate's slow Cpu mode (the textbook loop) everywhere")
    arguments = parser.parse_args(argv)
    command = "python anchors/onnx/cpu_anchor.py " + " ".join(argv)
    hardware = describe_hardware()
    print(f"# {hardware}", flush=True)

    peak = measure_peak(arguments.peak, arguments.out_dir)
    results = {}  # (series, size, depth) -> [ms per repeat]
    for size, depth in selected_points(arguments.only):
        workload = read_workload(arguments.workloads / f"mlp-{size}x{depth}.bin")
        session = onnx_session(workload, arguments.threads)
        contenders = {
            "NumPy": lambda: numpy_forward(workload, workload.input),
            "ONNX Runtime": lambda: session.run(None, {"x": workload.input})[0],
        }
        for name, run_once in contenders.items():
            check_output(name, workload, run_once())
        slow = size <= arguments.cpu_up_to and not arguments.skip_cpu
        modes = ["CpuGraph", "LayerByLayer"] + (["Cpu"] if slow else [])
        for repeat in range(arguments.repeats):
            # The crate first on even repeats, last on odd ones, so that neither side always
            # runs right after the other has warmed (or heated) the machine.
            crate_first = repeat % 2 == 0
            measured = {}
            if crate_first:
                time.sleep(SETTLE_SECONDS)
                measured.update(crate_times(arguments.crate, size, depth, modes))
            for name, run_once in contenders.items():
                time.sleep(SETTLE_SECONDS)
                measured[name] = median_milliseconds(run_once)
            if not crate_first:
                time.sleep(SETTLE_SECONDS)
                measured.update(crate_times(arguments.crate, size, depth, modes))
            for name, milliseconds in measured.items():
                name = SERIES_NAMES.get(name, name)
                results.setdefault((name, size, depth), []).append(milliseconds)
            print(f"{size:>5} x {depth:<4} repeat {repeat + 1}: "
                  + ", ".join(f"{name} {ms:.4g} ms" for name, ms in measured.items()), flush=True)

    arguments.out_dir.mkdir(parents=True, exist_ok=True)
    y_label = "time per run (ms), log"
    by_size = [(name, size, values) for (name, size, depth), values in results.items()
               if depth == SIZE_SWEEP_DEPTH]
    by_depth = [(name, depth, values) for (name, size, depth), values in results.items()
                if size == DEPTH_SWEEP_SIZE]
    points = selected_points(arguments.only)
    if by_size:
        by_size += peak_time_rows(peak, [(size, size, depth) for size, depth in points
                                         if depth == SIZE_SWEEP_DEPTH])
        write_csv(arguments.out_dir / "cpu-anchors-by-size.csv",
                  f"The standard workload on the CPU by size (depth {SIZE_SWEEP_DEPTH})",
                  "size (input rows = layer width), log", y_label, hardware, command, by_size)
    if by_depth:
        by_depth += peak_time_rows(peak, [(depth, size, depth) for size, depth in points
                                          if size == DEPTH_SWEEP_SIZE])
        write_csv(arguments.out_dir / "cpu-anchors-by-depth.csv",
                  f"The standard workload on the CPU by depth (size {DEPTH_SWEEP_SIZE})",
                  "depth (linear layers)", y_label, hardware, command, by_depth)

    if not arguments.skip_linear:
        rates = {}
        for repeat in range(arguments.repeats):
            time.sleep(SETTLE_SECONDS)
            measured = {"NumPy sgemm (OpenBLAS)": numpy_sgemm(LINEAR_SIZE)}
            time.sleep(SETTLE_SECONDS)
            measured.update(crate_linear(arguments.crate, LINEAR_SIZE))
            for name, rate in measured.items():
                rates.setdefault(name, []).append(rate)
            print(f"linear {LINEAR_SIZE}³ repeat {repeat + 1}: "
                  + ", ".join(f"{name} {rate:.1f} GFLOP/s" for name, rate in measured.items()),
                  flush=True)
        best = all_core_peak(peak)
        for name, values in rates.items():
            print(f"{name}: {statistics.median(values):.1f} GFLOP/s, "
                  f"{statistics.median(values) / best:.0%} of the {best:.1f} GFLOP/s peak",
                  flush=True)
        rates[PEAK_SERIES] = [best]
        # One point per series: a table, not a figure, hence not .csv.
        write_csv(arguments.out_dir / "cpu-anchors-linear.txt",
                  f"The matrix product alone at {LINEAR_SIZE}³ on every core",
                  "size n of n×n·n×n", "GFLOP/s", hardware, command,
                  [(name, LINEAR_SIZE, values) for name, values in rates.items()])


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except WorkloadError as error:
        print(f"cpu_anchor.py: {error}", file=sys.stderr)
        sys.exit(1)
