#!/usr/bin/env bash
# code/h100/modules-2-5.sh: the measurements behind modules 2, 3 (inference) and 5 on one
# machine with a GPU, in one go.
#
#   code/h100/modules-2-5.sh BIN_DIR OUT_DIR [PART ...]
#
# BIN_DIR holds these release examples of the galaxy crate (stripped copies are fine):
#   threads_shared_state data_parallelism irregular_workloads parallel_graphs
#   hot_loop_costs realtime_loop inference_data
# (`cargo build --release -p galaxy --examples`, then copy them from target/release/examples/).
# PARTs (default: all): threads data irregular graphs hotloop realtime inference.
# Each writes its CSV files into OUT_DIR/data/ and its printed tables into OUT_DIR/logs/.
# Every part has its own time limit, so one that hangs cannot take the others with it.
set -u
bin=${1:?usage: modules-2-5.sh BIN_DIR OUT_DIR [PART ...]}
out=${2:?usage: modules-2-5.sh BIN_DIR OUT_DIR [PART ...]}
shift 2
parts=${*:-threads data irregular graphs hotloop realtime inference}
mkdir -p "$out/data" "$out/logs"
export GALAXY_RUN_DATE=$(date -u +%F)
{
  date -u
  nproc
  grep -m1 "model name" /proc/cpuinfo
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1
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
    threads) run threads 120 "$bin/threads_shared_state" --out "$out/data" --machine h100-host ;;
    data)
      run data-scheduling 90 "$bin/data_parallelism" --repeats 3 --machine h100 \
        --only scheduling --out "$out/data"
      run data-rest 90 "$bin/data_parallelism" --repeats 3 --machine h100 \
        --only simd --only layouts --only branchless --only gpu --out "$out/data" ;;
    irregular) run irregular 120 "$bin/irregular_workloads" --repeats 3 --machine h100 --out "$out/data" ;;
    graphs) run graphs 90 "$bin/parallel_graphs" --repeats 3 --machine h100 --out "$out/data" ;;
    hotloop) run hotloop 60 "$bin/hot_loop_costs" --repeats 5 --out "$out/data/hot-loop-h100" ;;
    realtime)
      run realtime-gpu 120 "$bin/realtime_loop" --seconds 10 --mode GraphCompiled --size 128 \
        --depth 32 --decimation 12 --figure "$out/data" --figure-id realtime-latency-h100 \
        --out "$out/data/realtime-frames-h100-gpu.csv"
      run realtime-cpugraph 60 "$bin/realtime_loop" --seconds 10 --step single-threaded,optimised \
        --mode CpuGraph --size 128 --depth 32 --decimation 12
      run realtime-gpu-256 60 "$bin/realtime_loop" --seconds 10 --step single-threaded,optimised \
        --mode GraphCompiled --size 256 --depth 32 --decimation 4 ;;
    inference) run inference 200 "$bin/inference_data" --repeats 5 --machine h100 --out "$out/data" ;;
    *) echo "unknown part $part" | tee -a "$out/summary.txt" ;;
  esac
done
