#!/usr/bin/env bash
# Builds the crate's examples, exports the standard workloads, and times them in NumPy and
# ONNX Runtime interleaved with the crate's CPU modes, measuring the CPU's peak first.
#
#   anchors/onnx/run_all.sh [OUT_DIR] [-- options for cpu_anchor.py]
#
# Run it from the repository root inside the virtual environment of README.md. OUT_DIR
# (default anchors/onnx/results-<date>) receives the CSV files, the log and a record of the
# software; the workload files go to OUT_DIR/workloads; the CSV files are also copied into
# figures/data/, which the book's figures are drawn from.
set -euo pipefail

if [[ $# -gt 0 && ( "$1" == "-h" || "$1" == "--help" ) ]]; then
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out_dir="$script_dir/results-$(date -u +%F)"
if [[ $# -gt 0 && "$1" != "--" ]]; then
    out_dir=$1
    shift
fi
if [[ $# -gt 0 && "$1" == "--" ]]; then
    shift
fi
python=${PYTHON:-python3}

cargo build --release -p galaxy --example export_workload --example cpu_anchor_point \
    --example cpu_peak
mkdir -p "$out_dir/workloads"
{
    echo "date: $(date -u +%FT%TZ)"
    echo "python: $("$python" --version 2>&1)"
    "$python" -m pip freeze 2>/dev/null | grep -iE '^(numpy|onnx|onnxruntime)==' || true
    grep -m1 'model name' /proc/cpuinfo || true
    echo "cores: $(nproc)"
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out_dir/environment.txt"
target/release/examples/export_workload "$out_dir/workloads" > /dev/null
"$python" "$script_dir/cpu_anchor.py" "$out_dir/workloads" --out-dir "$out_dir" "$@" \
    2>&1 | tee "$out_dir/log.txt"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out_dir/environment.txt"
# Only what this run wrote: with --skip-linear there is no cpu-anchors-linear.txt.
for file in cpu-anchors-by-size.csv cpu-anchors-by-depth.csv cpu-anchors-linear.txt cpu-peak.txt; do
    if [[ -f "$out_dir/$file" ]]; then
        cp "$out_dir/$file" figures/data/
    fi
done
echo "results in $out_dir, CSV files copied into figures/data/"
