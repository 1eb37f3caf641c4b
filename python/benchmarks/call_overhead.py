"""What crossing from Python into the galaxy crate costs.

    python python/benchmarks/call_overhead.py > figures/data/python-call-overhead.csv

Times, on this machine, with the module built in release mode (`pip install ./python`):
- a call of a Rust function that does nothing (`galaxy.do_nothing`), beside a Python one;
- a run of the standard workload in the CpuGraph mode called from a Python loop
  (`network.run`), beside the same run timed inside Rust (`seconds_per_run_in_rust`), at
  three sizes. The difference is the boundary: argument parsing, copying the input into a
  Tensor2d, locking, making the output array.

Each measurement is repeated seven times; the CSV gives the median and the range.
"""

import datetime
import platform
import statistics
import sys
import timeit

import numpy as np

import galaxy

REPEATS = 7


def cpu_model():
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def microseconds_per_call(function, calls):
    """Median, minimum and maximum microseconds per call over REPEATS timings of `calls` calls."""
    timings = [
        timeit.timeit(function, number=calls) / calls * 1e6 for _ in range(REPEATS)
    ]
    return statistics.median(timings), min(timings), max(timings)


def python_nothing():
    pass


def main():
    rows = []
    rows.append(("python function doing nothing", 0, 0) + microseconds_per_call(python_nothing, 200_000))
    rows.append(("rust function doing nothing", 0, 0) + microseconds_per_call(galaxy.do_nothing, 200_000))
    for size, depth, calls in [(4, 1, 20_000), (64, 8, 2_000), (256, 8, 50)]:
        network = galaxy.random_mlp(size, depth, 1)
        inputs = network.workload_input
        network.run(inputs)  # prepares the mode once, outside the timing
        rows.append(
            ("CpuGraph run from a Python loop", size, depth)
            + microseconds_per_call(lambda: network.run(inputs), calls)
        )
        in_rust = [
            network.seconds_per_run_in_rust(inputs, "CpuGraph", calls) * 1e6
            for _ in range(REPEATS)
        ]
        rows.append(
            ("CpuGraph run timed inside Rust", size, depth)
            + (statistics.median(in_rust), min(in_rust), max(in_rust))
        )

    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    print("# title: What a call from Python into the galaxy crate costs")
    print(f"# hardware: {cpu_model()}; Python {platform.python_version()}, NumPy {np.__version__}")
    print(f"# command: python python/benchmarks/call_overhead.py (galaxy built by pip install ./python, release), {today}")
    print(f"# each value: median of {REPEATS} timings, with the minimum and maximum")
    print("what,size,depth,median_microseconds,min_microseconds,max_microseconds")
    for what, size, depth, median, low, high in rows:
        print(f"{what},{size},{depth},{median:.3f},{low:.3f},{high:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
