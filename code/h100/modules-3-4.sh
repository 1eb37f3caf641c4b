#!/usr/bin/env bash
# code/h100/modules-3-4.sh: the measurements behind module 3's cheaper-inference pages and
# module 4's use cases on one machine with a GPU, in one go.
#
#   code/h100/modules-3-4.sh BIN_DIR ANCHORS_DIR OUT_DIR [PART ...]
#
# BIN_DIR holds these release examples of the galaxy crate (stripped copies are fine):
#   tensor_cores int8_speed inference_data training_speed model_swap path_tracer point_cloud
#   sparse_threshold export_workload branch_prediction
# (`cargo build --release -p galaxy --example NAME` for each, from target/release/examples/).
# ANCHORS_DIR is the repository's anchors/ folder (the PyTorch profiler needs
# anchors/pytorch/profile_anchor.py, in the environment of anchors/pytorch/requirements.txt).
# PARTs (default: all): tensor int8 bits batch training swap path cloud sparse torch perf.
# Each writes CSV files into OUT_DIR/data/ and its printed output into OUT_DIR/logs/; every
# part has its own time limit, so one that hangs cannot take the others with it.
set -u
bin=${1:?usage: modules-3-4.sh BIN_DIR ANCHORS_DIR OUT_DIR [PART ...]}
anchors=${2:?usage: modules-3-4.sh BIN_DIR ANCHORS_DIR OUT_DIR [PART ...]}
out=${3:?usage: modules-3-4.sh BIN_DIR ANCHORS_DIR OUT_DIR [PART ...]}
shift 3
parts=${*:-tensor int8 bits batch training swap path cloud sparse torch perf}
mkdir -p "$out/data" "$out/logs"
export GALAXY_RUN_DATE=$(date -u +%F)
{
  date -u
  nproc
  grep -m1 "model name" /proc/cpuinfo
  grep -o -m1 "avx512_vnni" /proc/cpuinfo
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1
  python3 --version 2>&1
} > "$out/environment.txt"

run() { # name limit command...
  local name=$1 limit=$2
  shift 2
  local start=$SECONDS
  timeout "$limit" "$@" > "$out/logs/$name.txt" 2>&1
  echo "$name: exit $? after $((SECONDS - start)) s" | tee -a "$out/summary.txt"
}

for part in $parts; do
  case $part in
    tensor) run tensor-cores 120 "$bin/tensor_cores" --machine h100 --out "$out/data" ;;
    int8) run int8-speed 120 "$bin/int8_speed" --machine h100 --repeats 5 --gpu-largest 2048 \
            --portable-largest 512 --out "$out/data" ;;
    bits) run inference-bits 90 "$bin/inference_data" --machine h100 --only bits --out "$out/data" ;;
    batch) run inference-batch 120 "$bin/inference_data" --machine h100 --only batch --repeats 5 \
            --out "$out/data" ;;
    training) run training-speed 90 "$bin/training_speed" --machine h100 --repeats 5 --out "$out/data" ;;
    swap) run model-swap 90 "$bin/model_swap" --out "$out/data" --machine h100-host --repeats 5 ;;
    path) run path-tracer 120 "$bin/path_tracer" --out "$out/data" --machine h100 --repeats 10 ;;
    cloud) run point-cloud 120 "$bin/point_cloud" --out "$out/data" --machine h100 --repeats 10 ;;
    sparse) run sparse-threshold 120 "$bin/sparse_threshold" --out "$out/data" --machine h100 --repeats 5 ;;
    torch)
      mkdir -p "$out/workloads" "$out/data/pytorch-profile"
      "$bin/export_workload" "$out/workloads" 64 64 > /dev/null
      "$bin/export_workload" "$out/workloads" 256 64 > /dev/null
      run pytorch-profile 180 python3 "$anchors/pytorch/profile_anchor.py" \
        "$out/workloads/mlp-64x64.bin" "$out/workloads/mlp-256x64.bin" \
        --out-dir "$out/data/pytorch-profile" --runs 20
      rm -rf "$out/workloads" ;;
    perf)
      if command -v perf > /dev/null; then
        run perf-stat 60 perf stat -e task-clock,cycles,instructions,cache-references,cache-misses,branches,branch-misses \
          -- "$bin/branch_prediction"
      else
        echo "perf is not installed on this host: no hardware counters measured" > "$out/logs/perf-stat.txt"
      fi ;;
    *) echo "unknown part: $part" | tee -a "$out/summary.txt" ;;
  esac
done
