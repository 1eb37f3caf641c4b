"""PyTorch on the book's standard workload: the yardstick for the crate's execution modes.

Reads the networks that `cargo run --release --example export_workload` writes (the crate's
own weights, biases, ReLU pattern and input), checks that PyTorch computes the crate's output,
then times one run per iteration, upload of the input and readback of the result included, as
the crate's modes do:

- PyTorch eager: one kernel launch per operator;
- PyTorch CUDA graph: the whole forward pass captured once and replayed;
- PyTorch compile: `torch.compile` (default mode, static shapes, compiled afresh per workload;
  `--reduce-overhead` and `--max-autotune` add those modes).

and the fp32 matrix-multiplication ceiling (cuBLAS SGEMM, TF32 off) at 1024, 2048 and 4096.
Everything runs in fp32 with TF32 off, as the crate computes.

    python mlp_anchor.py WORKLOADS --out-dir OUT               # on a CUDA GPU
    python mlp_anchor.py WORKLOADS --device cpu --only 8x4     # the same code path on the CPU
    python mlp_anchor.py WORKLOADS --dry-run                   # NumPy only: reads and checks the files

See README.md for the file format, the output files and how to compare them with the crate.
"""

import argparse
import datetime
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

# The points of the crate's sweeps (code/src/bench/sweeps/modes.rs): every size at depth 64,
# every depth at size 256.
SIZES = [4, 8, 16, 32, 64, 128, 256, 512, 1024]
SIZE_SWEEP_DEPTH = 64
DEPTHS = [4, 8, 16, 32, 64, 128]
DEPTH_SWEEP_SIZE = 256
SGEMM_SIZES = [1024, 2048, 4096]

MAGIC = b"GALAXMLP"
FORMAT_VERSION = 1
HEADER_BYTES = 28
# The largest relative difference from the crate's output that still counts as the same
# network: fp32 sums in another order differ by far less, a wrong layer by far more.
CHECK_TOLERANCE = 1e-3

EXPORT_COMMAND = "cargo run --release --example export_workload -- DIRECTORY"


class WorkloadError(Exception):
    """A workload file that is missing, malformed, or does not reproduce its output."""


class Workload:
    """One exported network: its layers, its input and the crate's output for that input."""

    def __init__(self, path, size, depth, seed, layers, input_values, expected_output):
        self.path = path
        self.size = size
        self.depth = depth
        self.seed = seed
        self.layers = layers  # [(weights size×size, bias size, relu: bool)]
        self.input = input_values
        self.expected_output = expected_output


def read_workload(path):
    """Reads one file written by the crate's `export_workload` example (format in README.md)."""
    if not path.exists():
        raise WorkloadError(f"{path} does not exist; write it with `{EXPORT_COMMAND}`")
    raw = np.fromfile(path, dtype=np.uint8)
    if raw.size < HEADER_BYTES or raw[:8].tobytes() != MAGIC:
        raise WorkloadError(f"{path} is not a workload file (it does not start with {MAGIC!r})")
    version, size, depth = (int(value) for value in np.frombuffer(raw, "<u4", 3, offset=8))
    seed = int(np.frombuffer(raw, "<u8", 1, offset=20)[0])
    if version != FORMAT_VERSION:
        raise WorkloadError(f"{path} has format version {version}; this script reads {FORMAT_VERSION}")
    layer_bytes = 4 + 4 * size * size + 4 * size
    expected_bytes = HEADER_BYTES + depth * layer_bytes + 2 * 4 * size * size
    if raw.size != expected_bytes:
        raise WorkloadError(
            f"{path} holds {raw.size} bytes, but a {size}×{size} network of depth {depth} "
            f"takes {expected_bytes}: the file is truncated or not from this format version"
        )

    offset = HEADER_BYTES

    def take(dtype, count):
        nonlocal offset
        values = np.frombuffer(raw, dtype, count, offset=offset).copy()
        offset += values.nbytes
        return values

    layers = []
    for index in range(depth):
        relu_flag = int(take("<u4", 1)[0])
        if relu_flag not in (0, 1):
            raise WorkloadError(f"{path}: layer {index + 1} has ReLU flag {relu_flag}, not 0 or 1")
        weights = take("<f4", size * size).reshape(size, size)
        bias = take("<f4", size)
        layers.append((weights, bias, relu_flag == 1))
    input_values = take("<f4", size * size).reshape(size, size)
    expected_output = take("<f4", size * size).reshape(size, size)
    if depth > 0 and not layers[-1][2]:
        raise WorkloadError(f"{path}: the last layer must be followed by a ReLU")
    return Workload(path, size, depth, seed, layers, input_values, expected_output)


def relative_error(actual, expected):
    """The largest element-wise difference, relative to the largest expected value."""
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    if not np.all(np.isfinite(actual)):
        return float("inf")
    return float(np.max(np.abs(actual - expected)) / np.max(np.abs(expected)))


def check_output(name, workload, output):
    """Fails loudly unless `output` is the crate's output for the workload's input."""
    error = relative_error(output, workload.expected_output)
    where = f"{workload.size}x{workload.depth}"
    print(f"  check {name:<28} {where:>9}: relative error {error:.2e}", flush=True)
    if not error <= CHECK_TOLERANCE:
        raise WorkloadError(
            f"{name} on {workload.path} differs from the crate's output by {error:.3e} "
            f"(relative), more than {CHECK_TOLERANCE:g}: it is not running the same network"
        )


def numpy_forward(workload, input_values):
    """The network in NumPy, in float32: each layer x·W + b, ReLU where flagged, row softmax."""
    x = input_values.astype(np.float32)
    for weights, bias, relu in workload.layers:
        x = x @ weights + bias
        if relu:
            x = np.maximum(x, 0.0)
    x = x - x.max(axis=1, keepdims=True)
    exponentials = np.exp(x)
    return exponentials / exponentials.sum(axis=1, keepdims=True)


# ---------------------------------------------------------------------------------------
# Timing


class Timing:
    """Medians of `iterations` runs, repeated `repeats` times; all in milliseconds."""

    def __init__(self, repeat_medians):
        self.repeat_medians = repeat_medians
        self.median = statistics.median(repeat_medians)
        self.minimum = min(repeat_medians)
        self.maximum = max(repeat_medians)


def time_runs(run_once, iterations, repeats, warmup, synchronize):
    """Times `run_once` (which returns once its result is on the host)."""
    for _ in range(warmup):
        run_once()
    synchronize()
    repeat_medians = []
    for _ in range(repeats):
        times = []
        for _ in range(iterations):
            start = time.perf_counter()
            run_once()
            synchronize()
            times.append((time.perf_counter() - start) * 1e3)
        repeat_medians.append(statistics.median(times))
    return Timing(repeat_medians)


# ---------------------------------------------------------------------------------------
# PyTorch


class TorchModes:
    """The ways of running a workload in PyTorch, each a function from nothing to the output
    on the host, upload and readback included."""

    def __init__(self, torch, device, max_autotune, skip_compile, reduce_overhead=False):
        self.torch = torch
        self.device = device
        self.max_autotune = max_autotune
        self.reduce_overhead = reduce_overhead
        self.skip_compile = skip_compile

    def synchronize(self):
        if self.device == "cuda":
            self.torch.cuda.synchronize()

    def prepare(self, workload):
        """[(series name, run_once)] for this workload, weights already on the device."""
        torch = self.torch
        device = self.device
        layers = [
            (torch.from_numpy(w).to(device), torch.from_numpy(b).to(device), relu)
            for w, b, relu in workload.layers
        ]
        host_input = torch.from_numpy(workload.input.copy())
        if device == "cuda":
            host_input = host_input.pin_memory()

        def forward(x):
            for weights, bias, relu in layers:
                x = torch.addmm(bias, x, weights)
                if relu:
                    x = torch.relu(x)
            return torch.softmax(x, dim=1)

        def upload():
            return host_input.to(device, non_blocking=True)

        modes = [("PyTorch eager", lambda: forward(upload()).cpu())]
        if device == "cuda":
            modes.append(("PyTorch CUDA graph", self.cuda_graph(forward, host_input)))
        elif not self.skip_compile:
            print("  (no CUDA graph on the CPU: that series is skipped)", flush=True)
        if not self.skip_compile:
            # Every workload gets a compilation of its own. Dynamo caches compiled code per
            # Python function, and `forward` is the same function for every workload: without a
            # reset, the second shape would make it compile a dynamic-shape version and, past
            # its recompile limit, fall back to eager. dynamic=False keeps the shapes static.
            torch._dynamo.reset()
            compiled = torch.compile(forward, dynamic=False)
            modes.append(("PyTorch compile", lambda: compiled(upload()).cpu()))
            for wanted, mode in ((self.reduce_overhead, "reduce-overhead"),
                                 (self.max_autotune, "max-autotune")):
                if wanted:
                    variant = torch.compile(forward, mode=mode, dynamic=False)
                    modes.append((f"PyTorch compile {mode}",
                                  lambda variant=variant: variant(upload()).cpu()))
        return modes

    def cuda_graph(self, forward, host_input):
        """Captures `forward` on a static input buffer; a run copies the input in, replays,
        and copies the static output out."""
        torch = self.torch
        static_input = torch.empty(host_input.shape, dtype=torch.float32, device="cuda")
        static_input.copy_(host_input)
        side_stream = torch.cuda.Stream()
        side_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side_stream):
            for _ in range(3):  # warm up the kernels before capture, as PyTorch advises
                forward(static_input)
        torch.cuda.current_stream().wait_stream(side_stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_output = forward(static_input)

        def replay():
            static_input.copy_(host_input, non_blocking=True)
            graph.replay()
            return static_output.cpu()

        return replay

    def sgemm(self, size, iterations, repeats):
        """TFLOP/s of an fp32 size³ matrix product (cuBLAS, TF32 off): median, min, max of
        `repeats` medians of `iterations` products timed with CUDA events."""
        torch = self.torch
        generator = torch.Generator(device="cuda").manual_seed(size)
        a = torch.randn(size, size, device="cuda", generator=generator)
        b = torch.randn(size, size, device="cuda", generator=generator)
        c = torch.empty(size, size, device="cuda")
        for _ in range(5):
            torch.mm(a, b, out=c)
        torch.cuda.synchronize()
        rates = []
        for _ in range(repeats):
            seconds = []
            for _ in range(iterations):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                torch.mm(a, b, out=c)
                end.record()
                end.synchronize()
                seconds.append(start.elapsed_time(end) / 1e3)
            rates.append(2 * size**3 / statistics.median(seconds) / 1e12)
        # TF32 rounds every operand to 10 bits of mantissa: errors near 5e-4 of the largest
        # value; fp32 stays near 1e-6.
        expected = a.double() @ b.double()
        error = float((c.double() - expected).abs().max() / expected.abs().max())
        if not error <= 1e-4:
            raise WorkloadError(f"SGEMM {size}: relative error {error:.2e}; is TF32 really off?")
        return Timing(rates)


def describe_hardware(torch, device):
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    parts = [f"CPU {cpu}"]
    if torch is not None and device == "cuda":
        properties = torch.cuda.get_device_properties(0)
        parts.append(f"GPU {properties.name} (CUDA runtime {torch.version.cuda})")
    if torch is not None:
        parts.append(f"PyTorch {torch.__version__}, fp32, TF32 off")
    else:
        parts.append(f"NumPy {np.__version__} (dry run)")
    return "; ".join(parts)


# ---------------------------------------------------------------------------------------
# Output


def write_figure_csv(path, title, x_label, y_label, hardware, command, rows, spread):
    """The project's figure format: `#` metadata lines, then `series,x,y` (and `y_min,y_max`
    with `spread`), one row per point."""
    lines = [
        f"# title: {title}",
        f"# x: {x_label}",
        f"# y: {y_label}",
        f"# hardware: {hardware}",
        f"# command: {command}",
        f"# date: {datetime.date.today().isoformat()}",
        "series,x,y,y_min,y_max" if spread else "series,x,y",
    ]
    for series, x, timing in rows:
        line = f"{series},{x},{timing.median:.6g}"
        if spread:
            line += f",{timing.minimum:.6g},{timing.maximum:.6g}"
        lines.append(line)
    path.write_text("\n".join(lines) + "\n")
    print(f"wrote {path}", flush=True)


def selected_points(only):
    points = [(size, SIZE_SWEEP_DEPTH) for size in SIZES]
    points += [(DEPTH_SWEEP_SIZE, depth) for depth in DEPTHS if depth != SIZE_SWEEP_DEPTH]
    if only:
        wanted = set()
        for text in only:
            try:
                size, depth = (int(part) for part in text.lower().split("x"))
            except ValueError:
                raise WorkloadError(f"--only takes SIZExDEPTH, such as 256x64, not {text!r}")
            wanted.add((size, depth))
        points = [point for point in points if point in wanted] + sorted(wanted - set(points))
    return points


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", type=Path, help="the directory export_workload wrote")
    parser.add_argument("--out-dir", type=Path, default=Path("."), help="where the CSV files go")
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--iterations", type=int, default=50, help="timed runs per repeat")
    parser.add_argument("--repeats", type=int, default=5, help="repeats; the CSV gives their median")
    parser.add_argument("--warmup", type=int, default=10, help="untimed runs first")
    parser.add_argument("--max-autotune", action="store_true",
                        help="also torch.compile(mode='max-autotune'): minutes of compiling per point")
    parser.add_argument("--reduce-overhead", action="store_true",
                        help="also torch.compile(mode='reduce-overhead'), which replays CUDA graphs")
    parser.add_argument("--skip-compile", action="store_true", help="no torch.compile series")
    parser.add_argument("--only", nargs="+", metavar="SIZExDEPTH", help="only these points")
    parser.add_argument("--no-spread", dest="spread", action="store_false",
                        help="leave out the y_min,y_max columns (the fastest and slowest repeat)")
    parser.add_argument("--dry-run", action="store_true",
                        help="no PyTorch: read and check every file with a NumPy forward pass, "
                             "and time that instead, to test this script without a GPU")
    arguments = parser.parse_args(argv)
    if arguments.iterations < 1 or arguments.repeats < 1 or arguments.warmup < 0:
        parser.error("--iterations and --repeats must be at least 1, --warmup at least 0")
    return arguments


def main(argv):
    arguments = parse_arguments(argv)
    command = "python anchors/pytorch/mlp_anchor.py " + " ".join(argv)
    points = selected_points(arguments.only)

    if arguments.dry_run:
        torch = None
        synchronize = lambda: None  # noqa: E731
    else:
        import torch

        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
        if arguments.device == "cuda" and not torch.cuda.is_available():
            raise WorkloadError("PyTorch sees no CUDA device; use --device cpu to test on the CPU")
        modes = TorchModes(torch, arguments.device, arguments.max_autotune, arguments.skip_compile,
                           arguments.reduce_overhead)
        synchronize = modes.synchronize
    hardware = describe_hardware(torch, arguments.device)
    print(f"# {hardware}", flush=True)

    results = []  # (series, size, depth, timing)
    for size, depth in points:
        workload = read_workload(arguments.workloads / f"mlp-{size}x{depth}.bin")
        if arguments.dry_run:
            run_modes = [("NumPy (dry run)", lambda w=workload: numpy_forward(w, w.input))]
        else:
            run_modes = modes.prepare(workload)
        for name, run_once in run_modes:
            output = run_once()
            check_output(name, workload, output.numpy() if hasattr(output, "numpy") else output)
            timing = time_runs(run_once, arguments.iterations, arguments.repeats,
                               arguments.warmup, synchronize)
            print(f"{name:<30} size {size:>5} depth {depth:>4}: {timing.median:9.4f} ms "
                  f"(repeats {timing.minimum:.4f} … {timing.maximum:.4f})", flush=True)
            results.append((name, size, depth, timing))

    arguments.out_dir.mkdir(parents=True, exist_ok=True)
    # A dry run's CSV files hold NumPy timings: named so that nothing mistakes them for PyTorch.
    prefix = "dry-run-" if arguments.dry_run else ""
    y_label = "time per run (ms), upload and readback included, log"
    by_size = [(name, size, timing) for name, size, depth, timing in results
               if depth == SIZE_SWEEP_DEPTH]
    by_depth = [(name, depth, timing) for name, size, depth, timing in results
                if size == DEPTH_SWEEP_SIZE]
    if by_size:
        write_figure_csv(arguments.out_dir / f"{prefix}pytorch-modes-by-size.csv",
                         f"PyTorch on the standard workload by size (depth {SIZE_SWEEP_DEPTH})",
                         "size (input rows = layer width), log", y_label, hardware, command,
                         by_size, arguments.spread)
    if by_depth:
        write_figure_csv(arguments.out_dir / f"{prefix}pytorch-modes-by-depth.csv",
                         f"PyTorch on the standard workload by depth (size {DEPTH_SWEEP_SIZE})",
                         "depth (linear layers)", y_label, hardware, command,
                         by_depth, arguments.spread)

    if not arguments.dry_run and arguments.device == "cuda":
        rates = []
        for size in SGEMM_SIZES:
            timing = modes.sgemm(size, max(10, arguments.iterations // 2), arguments.repeats)
            print(f"cuBLAS SGEMM {size}³: {timing.median:.1f} TFLOP/s "
                  f"(repeats {timing.minimum:.1f} … {timing.maximum:.1f})", flush=True)
            rates.append(("cuBLAS SGEMM", size, timing))
        write_figure_csv(arguments.out_dir / "pytorch-sgemm.csv",
                         "fp32 matrix product in cuBLAS (TF32 off)", "size n of n×n·n×n, log",
                         "TFLOP/s", hardware, command, rates, arguments.spread)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except WorkloadError as error:
        print(f"mlp_anchor.py: {error}", file=sys.stderr)
        sys.exit(1)
