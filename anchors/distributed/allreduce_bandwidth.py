"""How fast the ranks can sum a tensor: torch.distributed.all_reduce of fp32 tensors.

Data-parallel training all-reduces every gradient once per step, so this is the cost DDP adds to
a step. For each message size (4 KiB, 16 KiB, … 256 MiB on GPUs, … 64 MiB on the CPU) it times
one all_reduce (sum) and reports, as nccl-tests does:

- algorithm bandwidth = bytes of the tensor / time;
- bus bandwidth = algorithm bandwidth × 2(N − 1)/N, the traffic through the slowest link of a
  ring all-reduce, which can be compared with the link's peak whatever N is.

With one rank the all-reduce moves nothing: it still runs (its time is the call's overhead), and
the bus bandwidth is left empty, since 2(N − 1)/N = 0 makes it meaningless.

    torchrun --standalone --nproc-per-node 2 allreduce_bandwidth.py --backend gloo --device cpu
"""

import argparse

import common
from common import AnchorError, dist, torch

KIB = 1024
MIB = 1024 * KIB


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common.add_launch_arguments(parser)
    parser.add_argument("--min-bytes", type=int, default=4 * KIB, help="smallest message (4 KiB)")
    parser.add_argument("--max-bytes", type=int, default=0,
                        help="largest message (default 256 MiB on cuda, 64 MiB on cpu)")
    parser.add_argument("--byte-budget", type=int, default=0,
                        help="caps iterations × bytes per repeat so large messages stay quick "
                             "(default 4 GiB on cuda, 512 MiB on cpu)")
    parser.set_defaults(iterations=20, warmup=5, repeats=5)
    arguments = parser.parse_args(argv)
    common.check_launch_arguments(parser, arguments)
    on_gpu = arguments.device == "cuda"
    arguments.max_bytes = arguments.max_bytes or (256 * MIB if on_gpu else 64 * MIB)
    arguments.byte_budget = arguments.byte_budget or (4096 * MIB if on_gpu else 512 * MIB)
    if arguments.min_bytes < 4 or arguments.min_bytes > arguments.max_bytes:
        parser.error("--min-bytes must be at least 4 (one fp32) and at most --max-bytes")
    return arguments


def message_sizes(smallest, largest):
    """4 KiB, 16 KiB, 64 KiB, …: a factor 4 apart, whole fp32 elements."""
    sizes = []
    size = smallest
    while size <= largest:
        sizes.append(size - size % 4)
        size *= 4
    return sizes


def check_sum(launch, elements):
    """Rank r contributes r + 1 in every element; the sum is N(N + 1)/2 everywhere."""
    tensor = torch.full((elements,), float(launch.rank + 1), device=launch.device)
    dist.all_reduce(tensor)
    expected = launch.world_size * (launch.world_size + 1) / 2
    wrong = int((tensor != expected).sum().item())
    if wrong:
        raise AnchorError(f"all_reduce of {elements} elements: {wrong} of them are not {expected:g}")


def main(argv):
    arguments = parse_arguments(argv)
    launch = common.start(arguments)
    bus_factor = 2 * (launch.world_size - 1) / launch.world_size
    if launch.is_main and launch.world_size == 1:
        print("one rank: the bus bandwidth is undefined (2(N-1)/N = 0) and left empty", flush=True)
    rows = []
    for size_bytes in message_sizes(arguments.min_bytes, arguments.max_bytes):
        elements = size_bytes // 4
        check_sum(launch, elements)
        # Zeros stay zeros however often they are summed, so repeated in-place all-reduces
        # never overflow to infinity (which would not slow anything, but is untidy).
        tensor = torch.zeros(elements, device=launch.device)
        iterations = max(3, min(arguments.iterations, arguments.byte_budget // size_bytes))
        timing = common.time_runs(lambda: dist.all_reduce(tensor), launch, arguments.warmup,
                                  iterations, arguments.repeats)
        algorithm_gb_per_s = size_bytes / (timing.median / 1e3) / 1e9
        bus = common.number(algorithm_gb_per_s * bus_factor) if launch.world_size > 1 else ""
        bus_text = f"{algorithm_gb_per_s * bus_factor:7.3f}" if bus else "-"
        if launch.is_main:
            print(f"all_reduce {launch.backend}/{launch.device.type} x{launch.world_size} "
                  f"{size_bytes / KIB:>9.0f} KiB: {timing.median * 1e3:10.1f} µs "
                  f"(repeats {timing.minimum * 1e3:.1f} … {timing.maximum * 1e3:.1f}), "
                  f"algorithm {algorithm_gb_per_s:7.3f} GB/s, bus {bus_text} GB/s", flush=True)
        rows.append([launch.backend, launch.device.type, launch.world_size, size_bytes,
                     common.number(timing.median), common.number(timing.minimum),
                     common.number(timing.maximum), common.number(algorithm_gb_per_s), bus])
        del tensor
    if launch.is_main:
        common.write_csv(common.output_path(arguments, launch, "allreduce"),
                         "all_reduce (sum) of an fp32 tensor: time and bandwidth (GB = 1e9 bytes)",
                         launch,
                         ["backend", "device", "world_size", "bytes", "ms_median", "ms_min",
                          "ms_max", "algorithm_gb_per_s", "bus_gb_per_s"], rows)


if __name__ == "__main__":
    common.run_main("allreduce_bandwidth.py", main)
