"""Combines the three runs of the `multi_device` example in this folder into the files the
book's figures are drawn from (`figures/data/multi-device-*-h100.csv`).

For every series and point: the median of the three runs' values; for the time file, the
fastest and slowest repeat of all three runs as the range. Run from the repository root:

    python3 figures/data/h100-2026-11-25/multi-device/aggregate.py
"""

import statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET = HERE.parents[1]
RUNS = [1, 2, 3]


def read(path):
    header, rows = [], []
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            header.append(line)
        elif line.startswith("series,"):
            columns = line.split(",")
        elif line:
            # Series names contain commas: the last len(columns) - 1 fields are numbers.
            fields = line.rsplit(",", len(columns) - 1)
            rows.append((fields[0], [float(value) for value in fields[1:]]))
    return header, columns, rows


for name in ["time", "speedup", "hand-over"]:
    runs = [read(HERE / f"multi-device-{name}-h100-run{run}.csv") for run in RUNS]
    header, columns, _ = runs[0]
    points = {}
    for _, _, rows in runs:
        for series, values in rows:
            points.setdefault((series, values[0]), []).append(values[1:])
    lines = []
    for line in header:
        if line.startswith("# command:"):
            command = line.split("--machine")[0].replace("# command: ", "").strip()
            line = (f"# command: {command} --machine h100-runN, three runs (N = 1, 2, 3) in one "
                    "device call (2026-11-25); combined by "
                    "figures/data/h100-2026-11-25/multi-device/aggregate.py: the median of the "
                    "three runs, and the fastest and slowest repeat of all three")
        lines.append(line)
    lines.append(",".join(columns))
    for (series, x), measured in points.items():
        middle = statistics.median(values[0] for values in measured)
        if len(columns) == 5:
            low = min(values[1] for values in measured)
            high = max(values[2] for values in measured)
            lines.append(f"{series},{x:g},{middle:.6g},{low:.6g},{high:.6g}")
        else:
            lines.append(f"{series},{x:g},{middle:.6g}")
    (TARGET / f"multi-device-{name}-h100.csv").write_text("\n".join(lines) + "\n")
    print("wrote", TARGET / f"multi-device-{name}-h100.csv")
