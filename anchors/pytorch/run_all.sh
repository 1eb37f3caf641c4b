#!/usr/bin/env bash
# Exports the crate's standard workloads and times them in PyTorch.
#
#   anchors/pytorch/run_all.sh BIN_DIR [OUT_DIR] [-- options for mlp_anchor.py]
#
# BIN_DIR holds the release build of the crate's examples (`cargo build --release -p galaxy
# --example export_workload` puts it in target/release/examples). OUT_DIR (default
# anchors/pytorch/results-<date>) receives the workload files, the CSV files, the full log and
# a record of the software and GPU. Run it inside the virtual environment of README.md.
set -euo pipefail

if [[ $# -lt 1 || "$1" == "-h" || "$1" == "--help" ]]; then
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
bin_dir=$1
shift
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out_dir="$script_dir/results-$(date -u +%F)"
if [[ $# -gt 0 && "$1" != "--" ]]; then
    out_dir=$1
    shift
fi
if [[ $# -gt 0 && "$1" == "--" ]]; then
    shift
fi

exporter="$bin_dir/export_workload"
if [[ ! -x "$exporter" ]]; then
    echo "run_all.sh: $exporter not found; build it with" >&2
    echo "  cargo build --release -p galaxy --example export_workload" >&2
    exit 1
fi
python=${PYTHON:-python3}
"$python" - <<'PYTHON'
import sys
if sys.version_info[:2] != (3, 12):
    print(f"run_all.sh: note: Python {sys.version.split()[0]}; requirements.txt is pinned for 3.12",
          file=sys.stderr)
PYTHON

mkdir -p "$out_dir/workloads"
{
    echo "date: $(date -u +%FT%TZ)"
    echo "python: $("$python" --version 2>&1)"
    "$python" -m pip freeze 2>/dev/null | grep -iE '^(torch|numpy|triton|nvidia-cublas)' || true
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
    fi
} > "$out_dir/environment.txt"

echo "exporting the workloads into $out_dir/workloads"
"$exporter" "$out_dir/workloads"
echo "timing them in PyTorch"
"$python" "$script_dir/mlp_anchor.py" "$out_dir/workloads" --out-dir "$out_dir" "$@" \
    2>&1 | tee "$out_dir/log.txt"
echo "results in $out_dir"
