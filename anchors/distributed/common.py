"""What the three distributed anchors share: the launch environment, the network, timing and
the CSV files.

Every script here is started by `torchrun`, which gives each process its rank and the world
size in environment variables; `start()` reads them, pins the process to its device and joins
the process group. Import this module before anything imports `torch.distributed`: it switches
NVLink multicast off first (see `MULTICAST_OFF`).
"""

import argparse
import datetime
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path

# NVLink multicast (NVLS) stays off in every launch: NCCL's NVLS algorithms, PyTorch's
# symmetric memory and NVSHMEM would each use it on a machine whose GPUs share an NVSwitch,
# and the machines these anchors run on are not set up for it. The variables are read when the
# libraries initialise, so they are set here, before torch.distributed is imported; run_all.sh
# exports them too, for anything it starts itself.
MULTICAST_OFF = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}
for _name, _value in MULTICAST_OFF.items():
    os.environ[_name] = _value

import torch  # noqa: E402  (after the environment above, on purpose)
import torch.distributed as dist  # noqa: E402

# The book's PyTorch anchor reads the crate's exported networks; its reader is reused as is.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "pytorch"))
import mlp_anchor  # noqa: E402

# Biases of the crate's standard workload are uniform in ±0.05 (code/src/graph/random_mlp.rs).
BIAS_LIMIT = 0.05


class AnchorError(Exception):
    """A run that cannot go on: a bad combination of options, or a check that failed."""


# ---------------------------------------------------------------------------------------
# Launch


class Launch:
    """This process's place in the run: rank, world size, device, backend."""

    def __init__(self, rank, world_size, local_rank, device, backend):
        self.rank = rank
        self.world_size = world_size
        self.local_rank = local_rank
        self.device = device
        self.backend = backend

    @property
    def is_main(self):
        return self.rank == 0


def add_launch_arguments(parser):
    parser.add_argument("--backend", choices=["gloo", "nccl"], default="gloo",
                        help="collective library: gloo for CPU processes, nccl for GPUs")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--threads", type=int, default=0,
                        help="CPU threads per process (default: OMP_NUM_THREADS, else cores / processes)")
    parser.add_argument("--out-dir", type=Path, default=Path("."), help="where the CSV file goes")
    parser.add_argument("--warmup", type=int, default=3,
                        help="untimed runs first (at least one, and at least 0.3 s of them)")
    parser.add_argument("--iterations", type=int, default=10, help="timed runs per repeat")
    parser.add_argument("--repeats", type=int, default=3, help="repeats; the CSV gives their median")
    parser.add_argument("--tag", default="", help="appended to the CSV file's name")


def check_launch_arguments(parser, arguments):
    """argparse errors (a usage line and a sentence) for options that cannot work together."""
    if arguments.backend == "nccl" and arguments.device != "cuda":
        parser.error("--backend nccl needs --device cuda (NCCL only moves GPU memory)")
    if arguments.backend == "gloo" and arguments.device == "cuda":
        # gloo handles some collectives on GPU tensors but not the point-to-point sends that
        # pipelining needs; the anchors pair each backend with its own kind of device.
        parser.error("--device cuda runs with --backend nccl (gloo is for CPU processes)")
    if arguments.iterations < 1 or arguments.repeats < 1 or arguments.warmup < 0:
        parser.error("--iterations and --repeats must be at least 1, --warmup at least 0")
    if arguments.threads < 0:
        parser.error("--threads must be 0 (automatic) or more")
    if "WORLD_SIZE" not in os.environ:
        parser.error("start this script with torchrun, for example "
                     "`torchrun --standalone --nproc-per-node 2 SCRIPT ...` (see README.md)")


def start(arguments):
    """Joins the process group that torchrun set up and pins this process to its device."""
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    if arguments.device == "cuda":
        if not torch.cuda.is_available():
            raise AnchorError("PyTorch sees no CUDA device; use --device cpu --backend gloo")
        if torch.cuda.device_count() < world_size:
            raise AnchorError(
                f"{world_size} processes need {world_size} GPUs, and this machine has "
                f"{torch.cuda.device_count()}: NCCL cannot share one GPU between processes")
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
        # The crate computes in fp32: TF32 would round every operand to 10 mantissa bits.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
    else:
        device = torch.device("cpu")
    threads = arguments.threads or int(os.environ.get("OMP_NUM_THREADS", "0")) or max(
        1, (os.cpu_count() or 1) // world_size)
    # Processes on one host share its cores: each gets its share, or they oversubscribe them.
    torch.set_num_threads(threads)
    if arguments.device == "cuda":
        dist.init_process_group(arguments.backend, device_id=device)
    else:
        dist.init_process_group(arguments.backend)
    return Launch(rank, world_size, local_rank, device, arguments.backend)


def finish():
    if dist.is_initialized():
        dist.destroy_process_group()


def run_main(name, main):
    """Runs `main`, turning an AnchorError into one readable line and exit status 1."""
    try:
        main(sys.argv[1:])
    except AnchorError as error:
        rank = os.environ.get("RANK", "?")
        print(f"{name} (rank {rank}): {error}", file=sys.stderr, flush=True)
        finish()
        sys.exit(1)
    finish()


# ---------------------------------------------------------------------------------------
# The network


def seeded_layers(size, depth, seed):
    """The shape of the crate's standard workload, drawn by PyTorch's generator: `depth`
    layers y = x·W + b with W of size × size, a ReLU after a layer when a seeded coin says so
    (about every other layer) and always after the last. The weights are uniform in
    ±√(3·gain/size) with gain 2 before a ReLU and 1 otherwise, as random_mlp.rs scales them, so
    that activations neither grow nor vanish with depth. Same numbers on every rank."""
    generator = torch.Generator().manual_seed(seed)
    layers = []
    for index in range(depth):
        relu = bool(torch.randint(0, 2, (1,), generator=generator)) or index + 1 == depth
        limit = (3.0 * (2.0 if relu else 1.0) / size) ** 0.5
        weights = (torch.rand(size, size, generator=generator) * 2 - 1) * limit
        bias = (torch.rand(size, generator=generator) * 2 - 1) * BIAS_LIMIT
        layers.append((weights, bias, relu))
    return layers


def workload_layers(path):
    """The layers of a network the crate exported (mlp_anchor's reader and format)."""
    try:
        workload = mlp_anchor.read_workload(path)
    except mlp_anchor.WorkloadError as error:
        raise AnchorError(str(error)) from None
    layers = [(torch.from_numpy(w), torch.from_numpy(b), relu) for w, b, relu in workload.layers]
    # The file also holds the crate's output for its input: reproducing it proves the layers
    # were read and oriented correctly (mlp_anchor's tolerance: fp32 sums in another order).
    with torch.no_grad():
        output = torch.softmax(build_network(layers)(torch.from_numpy(workload.input)), dim=1)
    difference = relative_difference(output, torch.from_numpy(workload.expected_output))
    if not difference <= mlp_anchor.CHECK_TOLERANCE:
        raise AnchorError(f"{path}: this network's output differs from the crate's by "
                          f"{difference:.2e} (relative): the file was not read as written")
    return workload.size, layers


# Checks compare against a float64 copy of the network. A forward pass in fp32 rounds at every
# layer, and cuBLAS or oneDNN may sum in another order for another number of rows: after 16
# layers of width 1024 an fp32 output can differ from the exact one by a few 10⁻⁶ of its largest
# value, and three training steps on 512 rows instead of 1024 by 2·10⁻⁵ (measured on a 2-core
# AMD EPYC). A wrong split or a wrong gradient scale differs by 10⁻² or more.
FORWARD_TOLERANCE = 1e-4
# Training is checked with both sides in float64, where rounding is near 10⁻¹⁵: 10⁻⁵ then
# leaves no room for anything but a correct algorithm.
TRAINING_TOLERANCE = 1e-5
CHECK_DTYPE = torch.float64


def build_network(layers, first=0, last=None, dtype=torch.float32):
    """torch.nn modules for layers[first:last]. nn.Linear computes x·Aᵀ + b, so it gets Wᵀ."""
    modules = []
    for weights, bias, relu in layers[first:last]:
        linear = torch.nn.Linear(weights.shape[0], weights.shape[1])
        with torch.no_grad():
            linear.weight.copy_(weights.T)
            linear.bias.copy_(bias)
        modules.append(linear)
        if relu:
            modules.append(torch.nn.ReLU())
    return torch.nn.Sequential(*modules).to(dtype)


def exact_output(layers, inputs, device):
    """The unsplit network's softmax output in float64: what every forward check compares with."""
    with torch.no_grad():
        network = build_network(layers, dtype=CHECK_DTYPE).to(device)
        return torch.softmax(network(inputs.to(device, CHECK_DTYPE)), dim=1)


def synthetic_batch(rows, size, seed):
    """Inputs uniform in ±1 (as the standard workload's) and class labels in 0..size, seeded so
    that every rank draws the same global batch and takes its own rows of it."""
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.rand(rows, size, generator=generator) * 2 - 1
    labels = torch.randint(0, size, (rows,), generator=generator)
    return inputs, labels


def relative_difference(actual, expected):
    """Largest element-wise difference relative to the largest expected magnitude."""
    actual = actual.detach().double().cpu()
    expected = expected.detach().double().cpu()
    if not torch.isfinite(actual).all():
        return float("inf")
    scale = expected.abs().max().item() or 1.0
    return (actual - expected).abs().max().item() / scale


# ---------------------------------------------------------------------------------------
# Timing


class Timing:
    """Medians of `iterations` runs, repeated `repeats` times (milliseconds)."""

    def __init__(self, repeat_medians):
        self.repeat_medians = repeat_medians
        self.median = statistics.median(repeat_medians)
        self.minimum = min(repeat_medians)
        self.maximum = max(repeat_medians)


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


WARMUP_SECONDS = 0.3
MAX_WARMUP_RUNS = 1000


def time_runs(run_once, launch, warmup, iterations, repeats):
    """Times `run_once` on every rank. A rank's run ends when its device is idle; each
    repeat's median is then replaced by the slowest rank's (an all-reduce of the maximum), since
    a distributed step takes as long as its slowest process.

    The warm-up is `warmup` runs but at least WARMUP_SECONDS: the first calls of a process fill
    caches, fault in memory and start the thread pool, and for a short run a few calls are not
    enough. Every rank must make the same number of calls (each may hold a collective), so the
    count comes from the first call's slowest time, agreed on by an all-reduce."""
    start_time = time.perf_counter()
    run_once()
    synchronize(launch.device)
    first = torch.tensor([time.perf_counter() - start_time], dtype=torch.float64,
                         device=collective_device(launch))
    dist.all_reduce(first, op=dist.ReduceOp.MAX)
    more = max(warmup - 1, math.ceil(WARMUP_SECONDS / max(first.item(), 1e-6)) - 1)
    for _ in range(min(more, MAX_WARMUP_RUNS)):
        run_once()
    synchronize(launch.device)
    dist.barrier()
    repeat_medians = []
    for _ in range(repeats):
        times = []
        for _ in range(iterations):
            start_time = time.perf_counter()
            run_once()
            synchronize(launch.device)
            times.append((time.perf_counter() - start_time) * 1e3)
        slowest = torch.tensor([statistics.median(times)], dtype=torch.float64,
                               device=collective_device(launch))
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        repeat_medians.append(slowest.item())
    return Timing(repeat_medians)


def collective_device(launch):
    """NCCL reduces only GPU tensors, gloo only CPU ones (in this use)."""
    return launch.device if launch.backend == "nccl" else torch.device("cpu")


def agree_on_failures(launch, message):
    """Every rank learns whether any rank's check failed, so that all stop together."""
    failed = torch.tensor([int(message is not None)], device=collective_device(launch))
    dist.all_reduce(failed, op=dist.ReduceOp.MAX)
    if message is not None:
        raise AnchorError(message)
    if failed.item():
        raise AnchorError("another rank's check failed (its message says which)")


# ---------------------------------------------------------------------------------------
# Output


def describe_hardware(launch):
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    parts = [f"CPU {cpu} ({os.cpu_count()} logical cores, {torch.get_num_threads()} threads per process)"]
    if launch.device.type == "cuda":
        properties = torch.cuda.get_device_properties(launch.device)
        try:
            nccl = "NCCL " + ".".join(str(part) for part in torch.cuda.nccl.version())
        except (AttributeError, RuntimeError, TypeError):
            nccl = "NCCL version unknown"
        parts.append(f"{launch.world_size} x GPU {properties.name} (CUDA runtime "
                     f"{torch.version.cuda}, {nccl})")
    parts.append(f"PyTorch {torch.__version__}, {launch.backend}, {launch.world_size} process(es), fp32")
    return "; ".join(parts)


def write_csv(path, title, launch, columns, rows):
    """`#` lines (title, hardware, command, date), then a header row and one row per point."""
    script = Path(sys.argv[0]).name
    lines = [
        f"# title: {title}",
        f"# hardware: {describe_hardware(launch)}",
        f"# command: torchrun --nproc-per-node {launch.world_size} {script} {' '.join(sys.argv[1:])}",
        f"# date: {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}",
        ",".join(columns),
    ]
    lines += [",".join(str(value) for value in row) for row in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    print(f"wrote {path}", flush=True)


def output_path(arguments, launch, prefix):
    """OUT_DIR/<prefix>-<device>-x<N>[-<tag>].csv: runs of other configurations never overwrite
    each other's files."""
    tag = f"-{arguments.tag}" if arguments.tag else ""
    return arguments.out_dir / f"{prefix}-{launch.device.type}-x{launch.world_size}{tag}.csv"


def number(value):
    return f"{value:.6g}"


def positive_list(text):
    """argparse type: a comma-separated list of positive integers, such as 256,1024."""
    try:
        values = [int(part) for part in text.split(",") if part]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas, not {text!r}")
    if not values or any(value < 1 for value in values):
        raise argparse.ArgumentTypeError(f"expected positive numbers, not {text!r}")
    return values
