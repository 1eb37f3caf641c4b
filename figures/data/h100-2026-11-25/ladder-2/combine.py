#!/usr/bin/env python3
"""Rebuild the book's H100 figure files of module 1 from the raw output in this folder.

    python3 figures/data/h100-2026-11-25/ladder-2/combine.py      (from the repository root)

writes figures/data/{modes-by-size-gpu,modes-by-depth-gpu,time-breakdown-gpu,
fused-mlp-by-size-gpu,fused-mlp-by-depth-gpu}.csv. Every row is copied from a file a run
wrote; nothing is computed except the order of the rows.

- s1/ and s2/: one lease of one NVIDIA H100 80GB HBM3, 2026-11-25 07:04-07:11 UTC (see
  README.md): the crate's time breakdown and sweeps (s1/), and PyTorch right after them (s2/).
- PyTorch compile reduce-overhead was not measured in that lease: its rows come from
  ../../h100-2026-11-24/pytorch-compile/ (same GPU model, 2026-11-24).
"""

import csv
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
DATA = HERE.parent.parent  # figures/data
REDUCE_OVERHEAD = DATA / "h100-2026-11-24" / "pytorch-compile"

GPU_HARDWARE = (
    "CPU Intel(R) Xeon(R) Processor (x86_64, 16 cores, AVX2 FMA AVX-512); "
    "GPU NVIDIA H100 80GB HBM3 (Vulkan, DiscreteGpu)"
)
LEASE = "one lease of one NVIDIA H100 80GB HBM3, 2026-11-25, commit f35a805"
RUN_1 = "code/h100/run.sh BIN OUT --parts breakdown,modes-depth,modes-size --repeats 3"
RUN_2 = "PYTORCH_LIMIT=330 code/h100/run.sh BIN OUT --parts pytorch --repeats 3"
RAW = "raw output in figures/data/h100-2026-11-25/ladder-2/"


def read(path):
    """The `#` lines (without '# ') and the rows of a figure CSV file."""
    header, rows = [], []
    with open(path, newline="") as file:
        lines = file.read().splitlines()
    body = []
    for line in lines:
        if line.startswith("#"):
            header.append(line[1:].strip())
        elif line.strip():
            body.append(line)
    reader = csv.reader(body)
    columns = next(reader)
    for row in reader:
        rows.append(dict(zip(columns, row)))
    return header, columns, rows


def header_value(header, key):
    for line in header:
        if line.startswith(key + ":"):
            return line[len(key) + 1 :].strip()
    raise KeyError(f"no '# {key}:' line")


def series_rows(rows, name):
    """The rows of one series, in increasing x."""
    chosen = [row for row in rows if row["series"] == name]
    if not chosen:
        raise ValueError(f"no series {name!r}")
    return sorted(chosen, key=lambda row: float(row["x"]))


def write(name, header, columns, rows):
    path = DATA / name
    with open(path, "w", newline="") as file:
        for key, value in header:
            file.write(f"# {key}: {value}\n")
        writer = csv.writer(file, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow([row.get(column, "") for column in columns])
    print(f"wrote {path.relative_to(DATA.parent.parent)} ({len(rows)} rows)")


COLUMNS = ["series", "x", "y", "y_min", "y_max"]


def modes(sweep, run, pytorch_name):
    """modes-by-{sweep}-gpu.csv: every series of the crate's sweep, then PyTorch."""
    header, _, crate = read(HERE / run / "data" / f"modes-by-{sweep}-gpu.csv")
    _, _, pytorch = read(HERE / "s2" / "pytorch" / pytorch_name)
    _, _, older = read(REDUCE_OVERHEAD / pytorch_name)
    crate_series = list(dict.fromkeys(row["series"] for row in crate))
    rows = [row for name in crate_series for row in series_rows(crate, name)]
    for names in (["PyTorch eager", "PyTorch CUDA graph"], ["PyTorch compile"]):
        points = sorted({float(row["x"]) for row in pytorch if row["series"] in names})
        for x in points:
            for name in names:
                rows += [r for r in pytorch if r["series"] == name and float(r["x"]) == x]
    rows += series_rows(older, "PyTorch compile reduce-overhead")
    command = (
        f"sweep --full --repeats 3 --skip-cpu --only 'modes-by-{sweep}-*' from `{RUN_1}` "
        f"({LEASE}); PyTorch eager, CUDA graph and compile (torch.compile, one static-shape "
        f"compilation per network): anchors/pytorch/run_all.sh in the same lease, right after "
        f"the sweeps (`{RUN_2}`; {RAW}{run}/ and s2/pytorch/); PyTorch compile reduce-overhead: "
        f"anchors/pytorch/run_all.sh BIN -- --reduce-overhead on the same H100 model, "
        f"2026-11-24 (figures/data/h100-2026-11-24/pytorch-compile/)"
    )
    write(
        f"modes-by-{sweep}-gpu.csv",
        [
            ("title", header_value(header, "title")),
            ("x", header_value(header, "x")),
            ("y", header_value(header, "y")),
            ("hardware", GPU_HARDWARE),
            ("command", command),
        ],
        COLUMNS,
        rows,
    )


def fused(sweep, run, pytorch_name, by):
    """fused-mlp-by-{sweep}-gpu.csv: the two graph modes and PyTorch eager and CUDA graph."""
    header, _, crate = read(HERE / run / "data" / f"modes-by-{sweep}-gpu.csv")
    _, _, pytorch = read(HERE / "s2" / "pytorch" / pytorch_name)
    rows = series_rows(crate, "GraphCachedFused") + series_rows(crate, "GraphCompiled")
    for x in sorted({float(row["x"]) for row in pytorch}):
        for name in ("PyTorch eager", "PyTorch CUDA graph"):
            rows += [r for r in pytorch if r["series"] == name and float(r["x"]) == x]
    write(
        f"fused-mlp-by-{sweep}-gpu.csv",
        [
            ("title", f"The fully fused MLP kernel against PyTorch, {by}"),
            ("x", header_value(header, "x")),
            ("y", header_value(header, "y")),
            (
                "hardware",
                "GPU NVIDIA H100 80GB HBM3 (Vulkan for the crate, CUDA 13.0 and PyTorch "
                "2.11.0 fp32 for PyTorch), host Intel Xeon, 16 cores",
            ),
            (
                "command",
                f"`{RUN_1}` ({LEASE}); PyTorch: anchors/pytorch/run_all.sh from `{RUN_2}` in the "
                f"same lease, right after the sweeps; {RAW}{run}/ and s2/pytorch/",
            ),
        ],
        COLUMNS,
        rows,
    )


def breakdown():
    header, columns, rows = read(HERE / "s1" / "data" / "time-breakdown-gpu.csv")
    command = (
        "bench_report --skip-uncached --parts breakdown --breakdown-sizes 4,64,256 "
        f"--breakdown-runs 7 from `{RUN_1}` ({LEASE}); {RAW}s1/report-breakdown.md"
    )
    write(
        "time-breakdown-gpu.csv",
        [
            ("title", header_value(header, "title")),
            ("x", header_value(header, "x")),
            ("y", header_value(header, "y")),
            ("hardware", header_value(header, "hardware")),
            ("command", command),
        ],
        columns,
        rows,
    )


if __name__ == "__main__":
    modes("size", "s1", "pytorch-modes-by-size.csv")
    modes("depth", "s1", "pytorch-modes-by-depth.csv")
    fused("size", "s1", "pytorch-modes-by-size.csv", "by size (depth 64)")
    fused("depth", "s1", "pytorch-modes-by-depth.csv", "by depth (size 256)")
    breakdown()
