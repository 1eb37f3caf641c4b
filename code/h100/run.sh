#!/usr/bin/env bash
# code/h100/run.sh: every measurement behind the book's GPU numbers, in one run on one machine.
#
#   code/h100/run.sh BIN_DIR OUT_DIR [--group 1|2|3] [--parts PART,PART,...] [--repeats R]
#                    [--quick] [--plan]
#
# BIN_DIR holds the release binaries `sweep` and `bench_report`
# (`cargo build --release -p galaxy --bins --examples`, then copy target/release/sweep,
# target/release/bench_report and target/release/examples/export_workload). OUT_DIR is
# created; each part writes into it:
#
#   data/<figure id>.csv   the sweeps (series,x,y,y_min,y_max: median and range of R repeats)
#   report.md              bench_report: standard workload, comparisons, compile time
#   report-kernels.md      bench_report: GPU linear kernels under the measured fp32 peak
#   report-breakdown.md    bench_report: where one run of each GPU mode spends its time
#                          (its CSV: data/time-breakdown-gpu.csv)
#   pytorch/               anchors/pytorch/run_all.sh, when that script exists
#   logs/<part>.log        everything each part printed
#   environment.txt        date, binaries, nvidia-smi (GPU, driver, clocks)
#   summary.md             the table printed at the end of each invocation, appended
#
# Parts, with the time each took on an NVIDIA H100 with repeats 3 (measured 2026-11-24 with
# this script, or estimated where marked ~ from the sweeps' budgets and the run times of the
# 2026-11-21 session) and the limit after which it is stopped (a stopped sweep keeps the
# points it measured: its CSV file is rewritten after every size or depth):
#
#   part            took    limit  what it measures
#   report          112 s   200 s  every mode at 256/depth 64; round trips, graph loops,
#                                  compute passes, buffer reuse, in-place ReLU, CPU vs GPU;
#                                  shader-module vs pipeline creation
#   report-kernels   32 s    75 s  GPU linear kernels at 1024/2048/4096 and the fp32 peak
#   breakdown        ~5 s    60 s  one run of each cached GPU mode at 4/64/256 (depth 64)
#                                  split into host phases and GPU kernel time (timestamps)
#   copy             35 s    75 s  copy bandwidth 1 MiB..1 GiB (the roofline's B, the L2 knee)
#   reductions       17 s    45 s  GPU sums, workgroup memory against subgroups
#   modes-size      191 s   280 s  every mode by size 4..1024 at depth 64
#   modes-depth     ~170 s  250 s  every mode by depth 4..128 at size 256
#   linear-kernels  ~120 s  200 s  GPU linear kernels by size 64..4096
#   pytorch           ?     340 s  anchors/pytorch/run_all.sh: PyTorch eager, CUDA graph,
#                                  torch.compile (PYTORCH_LIMIT=seconds changes its limit)
#
# Three commands of under nine minutes each (the limits of each group add up to at most
# 540 s, so a group never runs past nine minutes even when every part hits its limit):
#
#   code/h100/run.sh BIN OUT --group 1    # report, report-kernels, breakdown, copy,
#                                         # reductions                               ~3.4 min
#   code/h100/run.sh BIN OUT --group 2    # modes-size, modes-depth                   ~6 min
#   code/h100/run.sh BIN OUT --group 3    # linear-kernels, pytorch                   ~2 min + PyTorch
#
# The same OUT_DIR can be used for all of them; --plan prints the parts without running
# them. The machine needs the NVIDIA driver and the Vulkan loader (libvulkan.so.1); the
# script stops at once without the loader. --quick runs every part with small sizes and
# the sweeps' quick budget: a check that the binaries work (minutes on lavapipe), not a
# measurement.
set -uo pipefail

usage() {
    sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

[ $# -ge 2 ] || usage
BIN=$(cd "$1" && pwd) || { echo "error: no folder $1" >&2; exit 2; }
OUT=$2
shift 2

ALL_PARTS="report report-kernels breakdown copy reductions modes-size modes-depth linear-kernels pytorch"
PARTS=$ALL_PARTS
REPEATS=3
QUICK=0
PLAN=0
INTERNAL_PART=""
while [ $# -gt 0 ]; do
    case "$1" in
        --group)
            case "${2:-}" in
                1) PARTS="report report-kernels breakdown copy reductions" ;;
                2) PARTS="modes-size modes-depth" ;;
                3) PARTS="linear-kernels pytorch" ;;
                *) echo "error: --group takes 1, 2 or 3" >&2; exit 2 ;;
            esac
            shift 2 ;;
        --parts) PARTS=$(echo "${2:-}" | tr ',' ' '); shift 2 ;;
        --repeats) REPEATS=${2:-}; shift 2 ;;
        --quick) QUICK=1; shift ;;
        --plan) PLAN=1; shift ;;
        # How the script runs one part under `timeout`: it calls itself.
        --internal-part) INTERNAL_PART=${2:-}; shift 2 ;;
        *) echo "error: unknown option $1" >&2; usage ;;
    esac
done
for part in $PARTS; do
    case " $ALL_PARTS " in
        *" $part "*) ;;
        *) echo "error: unknown part '$part'; the parts are: $ALL_PARTS" >&2; exit 2 ;;
    esac
done
case "$REPEATS" in
    '' | *[!0-9]* | 0) echo "error: --repeats takes a whole number of at least 1" >&2; exit 2 ;;
esac

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PYTORCH_SCRIPT="$ROOT/anchors/pytorch/run_all.sh"
DATE=${GALAXY_RUN_DATE:-$(date -u +%Y-%m-%d)}
export GALAXY_RUN_DATE=$DATE

# expected seconds (see the table above) and limit of each part
expected() {
    case "$1" in
        report) echo 112 ;; report-kernels) echo 32 ;; breakdown) echo "~5" ;; copy) echo 35 ;;
        reductions) echo 17 ;; modes-size) echo 191 ;; modes-depth) echo "~170" ;;
        linear-kernels) echo "~120" ;; pytorch) echo "?" ;;
    esac
}
limit() {
    case "$1" in
        report) echo 200 ;; report-kernels) echo 75 ;; breakdown) echo 60 ;; copy) echo 75 ;;
        reductions) echo 45 ;; modes-size) echo 280 ;; modes-depth) echo 250 ;;
        linear-kernels) echo 200 ;; pytorch) echo "${PYTORCH_LIMIT:-340}" ;;
    esac
}

# Options that make every part small, for checking the binaries.
if [ "$QUICK" = 1 ]; then
    SWEEP_BUDGET=()
    REPORT_SIZES=(--size 32 --depth 8 --samples 3 --pair-sizes 16,32 --reuse-sizes 32,64
                  --relu-size 256 --crossover-sizes 8,16 --compile-iterations 5)
    KERNEL_SIZES=(--samples 3 --sizes 128,256)
    BREAKDOWN_SIZES=(--depth 8 --breakdown-sizes 4,16 --breakdown-runs 2)
else
    SWEEP_BUDGET=(--full)
    REPORT_SIZES=()
    KERNEL_SIZES=()
    BREAKDOWN_SIZES=(--breakdown-sizes 4,64,256 --breakdown-runs 7)
fi

sweep_part() { # figure-id pattern
    "$BIN/sweep" "${SWEEP_BUDGET[@]}" --repeats "$REPEATS" --skip-cpu --only "$1" \
        --out "$OUT/data" \
        --command "sweep ${SWEEP_BUDGET[*]} --repeats $REPEATS --skip-cpu --only '$1' (code/h100/run.sh, $DATE)"
}

run_part() {
    case "$1" in
        report)
            "$BIN/bench_report" --repeats "$REPEATS" --skip-cpu \
                --parts workload,comparisons,compile-time "${REPORT_SIZES[@]}" \
                --out "$OUT/report.md" ;;
        report-kernels)
            "$BIN/bench_report" --repeats "$REPEATS" --skip-cpu --parts gpu-linear \
                "${KERNEL_SIZES[@]}" --out "$OUT/report-kernels.md" ;;
        breakdown)
            "$BIN/bench_report" --skip-uncached --parts breakdown "${BREAKDOWN_SIZES[@]}" \
                --breakdown-csv "$OUT/data" --out "$OUT/report-breakdown.md" ;;
        copy) sweep_part 'gpu-copy-bandwidth-*' ;;
        modes-size) sweep_part 'modes-by-size-*' ;;
        reductions) sweep_part 'reductions-*' ;;
        modes-depth) sweep_part 'modes-by-depth-*' ;;
        linear-kernels) sweep_part 'linear-kernels-*' ;;
        pytorch)
            if [ ! -f "$PYTORCH_SCRIPT" ]; then
                echo "anchors/pytorch/run_all.sh does not exist: nothing to run"
                return 3
            fi
            if [ ! -x "$BIN/export_workload" ]; then
                echo "$BIN/export_workload is missing: copy target/release/examples/export_workload"
                echo "into BIN_DIR (cargo build --release -p galaxy --bins --examples)"
                return 3
            fi
            bash "$PYTORCH_SCRIPT" "$BIN" "$OUT/pytorch" ;;
    esac
}

if [ -n "$INTERNAL_PART" ]; then
    run_part "$INTERNAL_PART"
    exit $?
fi

if [ "$PLAN" = 1 ]; then
    printf '%-16s %10s %8s\n' part "expected s" "limit s"
    total=0
    for part in $PARTS; do
        printf '%-16s %10s %8s\n' "$part" "$(expected "$part")" "$(limit "$part")"
        total=$((total + $(limit "$part")))
    done
    echo "at most $total s in all (limits)"
    exit 0
fi

# wgpu reaches the GPU through the Vulkan loader; without it every part would fail at once.
# (grep reads all of ldconfig's output: with -q it would stop early, and pipefail would
# count ldconfig's broken pipe as a missing loader.)
if command -v ldconfig >/dev/null && ! ldconfig -p | grep 'libvulkan\.so\.1' >/dev/null; then
    echo "error: no Vulkan loader (libvulkan.so.1) on this machine; install libvulkan1" >&2
    echo "(a Debian/Ubuntu package; its files can also be unpacked with dpkg -x, then ldconfig)" >&2
    exit 2
fi
for binary in sweep bench_report; do
    if [ ! -x "$BIN/$binary" ]; then
        echo "error: $BIN/$binary is missing (cargo build --release -p galaxy --bins)" >&2
        exit 2
    fi
done
mkdir -p "$OUT/logs" "$OUT/data"

{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "parts: $PARTS; repeats: $REPEATS; quick: $QUICK"
    echo "binaries: $(ls -l "$BIN" | tail -n +2 | awk '{print $NF, $5 " bytes"}' | paste -sd ';' -)"
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
            --format=csv 2>&1
    else
        echo "nvidia-smi: not found"
    fi
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) threads"
} >> "$OUT/environment.txt"

# A throw-away run first. On a freshly started machine, the first process to use the GPU ran
# the per-layer kernels a third to two-fifths slower than every process after it, with the
# same kernel chosen (figures/data/h100-2026-11-25/probes-afternoon/choice.txt): whichever
# part came first would be measured slow. This one compiles and runs the compiled mode's
# kernels at size 1024 and is thrown away.
echo "== warm-up (a throw-away GraphCompiled breakdown at size 1024) -> $OUT/logs/warm-up.log"
timeout --kill-after=15 120 "$BIN/bench_report" --skip-uncached --skip-cpu --parts breakdown \
    --breakdown-sizes 1024 --breakdown-runs 1 --out "$OUT/logs/warm-up.md" \
    > "$OUT/logs/warm-up.log" 2>&1 || echo "   the warm-up failed or stopped (see its log); going on"

# One line per part: name, status, seconds, expected, limit.
RESULTS=()
for part in $PARTS; do
    echo "== $part (expected $(expected "$part") s, stopped after $(limit "$part") s) -> $OUT/logs/$part.log"
    start=$(date +%s)
    quick_flag=()
    [ "$QUICK" = 1 ] && quick_flag=(--quick)
    timeout --kill-after=15 "$(limit "$part")" \
        bash "$0" "$BIN" "$OUT" --internal-part "$part" --repeats "$REPEATS" "${quick_flag[@]}" \
        > "$OUT/logs/$part.log" 2>&1
    status=$?
    seconds=$(( $(date +%s) - start ))
    case $status in
        0) verdict=ok ;;
        3) verdict="skipped (see its log)" ;;
        124 | 137) verdict="STOPPED at the limit" ;;
        *) verdict="FAILED (exit $status)" ;;
    esac
    echo "   $verdict after $seconds s"
    RESULTS+=("$part|$verdict|$seconds|$(expected "$part")|$(limit "$part")")
done

runs() { case " $PARTS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# The summary: how each part went, then the headline numbers of the parts that ran.
SUMMARY=$(mktemp)
{
    echo "# Measurement run ($(date -u '+%Y-%m-%d %H:%M UTC'): $PARTS)"
    echo
    echo "| part | result | seconds | expected | limit |"
    echo "|---|---|---:|---:|---:|"
    for line in "${RESULTS[@]}"; do
        IFS='|' read -r part verdict seconds expected_seconds limit_seconds <<< "$line"
        echo "| $part | $verdict | $seconds | $expected_seconds | $limit_seconds |"
    done
    for csv in "$OUT"/data/gpu-copy-bandwidth-*.csv; do
        [ -f "$csv" ] && runs copy || continue
        echo
        echo "Copy bandwidth ($(basename "$csv")), GB/s counting bytes read + written:"
        echo
        echo "| method | largest size (bytes) | GB/s there | best GB/s | at size (bytes) |"
        echo "|---|---:|---:|---:|---:|"
        # The series names of this figure hold no commas: x and y are fields 2 and 3.
        awk -F, '!/^#/ && $1 != "series" {
            x = $2 + 0; y = $3 + 0; name = $1
            if (!(name in best) || y > best[name]) { best[name] = y; bestx[name] = x }
            if (!(name in last) || x >= lastx[name]) { last[name] = y; lastx[name] = x }
        }
        END { for (name in best) printf "| %s | %d | %.0f | %.0f | %d |\n", name, lastx[name], last[name], best[name], bestx[name] }' "$csv"
    done
    for report in "$OUT/report.md" "$OUT/report-kernels.md"; do
        [ -f "$report" ] && runs "$(basename "$report" .md)" || continue
        echo
        echo "From $(basename "$report") (median, fastest–slowest; full table in the file):"
        echo
        echo "| part | what | size | ms | fastest–slowest | compared |"
        echo "|---|---|---|---:|---:|---|"
        grep -E '^\| (round trips|graph loop|compute passes|buffer reuse|ReLU in place|CPU against GPU|GPU peak) \||^\| GPU linear \| chosen' "$report" \
            | awk -F'|' '{printf "|%s|%s|%s|%s|%s|%s|\n", $2, $3, $4, $5, $6, $8}'
    done
} > "$SUMMARY"
echo
cat "$SUMMARY"
{ cat "$SUMMARY"; echo; } >> "$OUT/summary.md"
rm -f "$SUMMARY"
