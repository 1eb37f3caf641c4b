"""Scaling from 1 to N processes: joins the data-parallel CSV files that ddp_mlp.py wrote.

For every (mode, size, depth, global batch) measured both with one process and with N, it writes
the speed-up (samples/s with N ÷ samples/s with 1) and the efficiency (speed-up ÷ N: 1 is
perfect scaling). The timings are separate runs, so the row also names both files.

    python3 scaling.py OUT_DIR/ddp-train-cpu-x1.csv OUT_DIR/ddp-train-cpu-x2.csv --out OUT_DIR/ddp-train-cpu-scaling.csv

Needs only the standard library (it runs without torch).
"""

import argparse
import csv
import sys
from pathlib import Path

KEY = ("mode", "backend", "device", "size", "depth", "global_batch")


class ScalingError(Exception):
    pass


def read_table(path):
    """(the `#` lines, the rows as dictionaries) of a CSV file written by common.write_csv."""
    try:
        lines = path.read_text().splitlines()
    except OSError as error:
        raise ScalingError(f"cannot read {path}: {error.strerror}") from None
    comments = [line for line in lines if line.startswith("#")]
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    missing = [column for column in KEY + ("world_size", "samples_per_s")
               if rows and column not in rows[0]]
    if not rows or missing:
        raise ScalingError(f"{path} is not a ddp_mlp.py result (no rows, or no {missing} column)")
    return comments, rows


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("baseline", type=Path, help="the one-process CSV file")
    parser.add_argument("scaled", type=Path, help="the N-process CSV file")
    parser.add_argument("--out", type=Path, required=True, help="the scaling CSV file to write")
    arguments = parser.parse_args(argv)
    base_comments, base_rows = read_table(arguments.baseline)
    scaled_comments, scaled_rows = read_table(arguments.scaled)
    if any(row["world_size"] != "1" for row in base_rows):
        raise ScalingError(f"{arguments.baseline} is not a one-process run")
    baseline = {tuple(row[column] for column in KEY): row for row in base_rows}
    table = []
    for row in scaled_rows:
        reference = baseline.get(tuple(row[column] for column in KEY))
        if reference is None:
            continue
        processes = int(row["world_size"])
        speed_up = float(row["samples_per_s"]) / float(reference["samples_per_s"])
        table.append([row[column] for column in KEY] + [
            processes, reference["samples_per_s"], row["samples_per_s"], f"{speed_up:.4g}",
            f"{speed_up / processes:.4g}"])
    if not table:
        raise ScalingError("the two files share no (mode, size, depth, batch) point")
    hardware = [line for line in scaled_comments if line.startswith("# hardware")]
    lines = [f"# title: data-parallel scaling from 1 to {table[0][len(KEY)]} processes",
             *hardware,
             f"# from: {arguments.baseline.name} and {arguments.scaled.name}",
             ",".join(KEY + ("world_size", "samples_per_s_1", "samples_per_s_n", "speed_up",
                             "efficiency"))]
    lines += [",".join(str(value) for value in row) for row in table]
    arguments.out.write_text("\n".join(lines) + "\n")
    for row in table:
        print(f"{row[0]} size {row[3]} batch {row[5]}: speed-up {row[-2]} "
              f"(efficiency {row[-1]}) with {row[len(KEY)]} processes")
    print(f"wrote {arguments.out}")


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except ScalingError as error:
        print(f"scaling.py: {error}", file=sys.stderr)
        sys.exit(1)
