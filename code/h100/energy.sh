#!/usr/bin/env bash
# code/h100/energy.sh: the energy of one run of the standard workload, per execution mode
# and size, measured on an NVIDIA GPU with its own power sensors.
#
#   code/h100/energy.sh BIN_DIR OUT_DIR [--modes M,M,...] [--sizes S,S,...] [--depth D]
#                       [--seconds T] [--repeats R] [--idle-seconds I] [--plan]
#
# BIN_DIR holds the release binary `energy_workload`
# (`cargo build --release -p galaxy --example energy_workload`, then
# target/release/examples/energy_workload). The machine needs the NVIDIA driver
# (nvidia-smi) and the Vulkan loader (libvulkan.so.1).
#
# How it measures. First it asks nvidia-smi for the board's total-energy counter (NVML's
# nvmlDeviceGetTotalEnergyConsumption, in mJ since the driver loaded), trying the field
# names total_energy_consumption and energy.consumption in turn, since drivers differ and
# some offer neither. A background `nvidia-smi -lms 50` samples the board's power draw
# (power.draw, and power.draw.instant where the driver has it) every 50 ms into
# OUT_DIR/power-samples.csv. Each measurement runs `energy_workload` for one mode and size:
# it prepares the graph, warms up, then marks the start, runs the workload back to back for
# T seconds (every run reads its output back to the host), and marks the end. A mark reads
# the counter (when a field name worked) and the time. The energy of the window is the
# difference of the counter; without a counter, the script integrates the 50 ms power
# samples over the window instead (environment.txt and energy-summary.md say which). Before
# every round of modes the GPU sits idle for I seconds, measured the same way: its power
# is the idle baseline, and "above idle" subtracts it over the window. The window between
# the two marks is a little longer than the loop (each mark takes a moment);
# the total per run counts that margin at idle power and leaves it out.
#
# What it writes into OUT_DIR:
#   energy-runs.csv          one line per mode, size and repeat: runs, seconds, joules from
#                            the counter and from the samples, idle watts of that round
#   energy-summary.md        per mode and size: median (fastest-slowest) of ms per run,
#                            average watts, mJ per run, mJ per run above idle
#   energy-h100-per-run.csv  the figure's data (series = mode, x = size, y = mJ per run,
#                            median and range of the repeats), in the format of figures/data
#   power-samples.csv        every 50 ms sample; marks.txt, the marks; logs/, each run's output
#   environment.txt          date, GPU, driver, clocks and power limit
#
# Defaults: modes ImmediateCached,GraphCached,GraphCachedFused,GraphLoopCachedFused,
# GraphCompiled; sizes 64,256,1024; depth 64; 5 s per window; 3 repeats; 5 s idle. That is
# 3 x (5 + 5 x 3 x ~7 s) = about 6 minutes; --plan prints the estimate without running.
# The CPU modes (Cpu, CpuGraph) can be listed too: the GPU's sensors then show only the
# idle GPU, not the energy of the CPU that did the work.
set -uo pipefail

usage() {
    sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

[ $# -ge 2 ] || usage
BIN=$(cd "$1" 2>/dev/null && pwd) || { echo "error: no folder $1" >&2; exit 2; }
OUT=$2
shift 2

MODES="ImmediateCached,GraphCached,GraphCachedFused,GraphLoopCachedFused,GraphCompiled"
SIZES="64,256,1024"
DEPTH=64
SECONDS_PER_WINDOW=5
REPEATS=3
IDLE_SECONDS=5
PLAN=0
while [ $# -gt 0 ]; do
    case "$1" in
        --modes) MODES=${2:-}; shift 2 ;;
        --sizes) SIZES=${2:-}; shift 2 ;;
        --depth) DEPTH=${2:-}; shift 2 ;;
        --seconds) SECONDS_PER_WINDOW=${2:-}; shift 2 ;;
        --repeats) REPEATS=${2:-}; shift 2 ;;
        --idle-seconds) IDLE_SECONDS=${2:-}; shift 2 ;;
        --plan) PLAN=1; shift ;;
        *) echo "error: unknown option $1" >&2; usage ;;
    esac
done
whole_number() { case "$2" in '' | *[!0-9]* | 0) echo "error: $1 takes a whole number of at least 1" >&2; exit 2 ;; esac; }
whole_number --depth "$DEPTH"
whole_number --seconds "$SECONDS_PER_WINDOW"
whole_number --repeats "$REPEATS"
whole_number --idle-seconds "$IDLE_SECONDS"
for size in ${SIZES//,/ }; do whole_number --sizes "$size"; done
MODE_LIST=${MODES//,/ }
SIZE_LIST=${SIZES//,/ }
mode_count=$(echo $MODE_LIST | wc -w)
size_count=$(echo $SIZE_LIST | wc -w)
# About 2 s per window for start-up, graph preparation and warm-up, plus the marks.
estimate=$(( REPEATS * (IDLE_SECONDS + mode_count * size_count * (SECONDS_PER_WINDOW + 2)) ))
if [ "$PLAN" = 1 ]; then
    echo "modes: $MODE_LIST"
    echo "sizes: $SIZE_LIST at depth $DEPTH; $SECONDS_PER_WINDOW s per window; $REPEATS repeats"
    echo "about $estimate s"
    exit 0
fi

if ! command -v nvidia-smi >/dev/null; then
    echo "error: nvidia-smi not found: this script reads an NVIDIA GPU's power sensors" >&2
    exit 2
fi
if [ ! -x "$BIN/energy_workload" ]; then
    echo "error: $BIN/energy_workload is missing" >&2
    echo "(cargo build --release -p galaxy --example energy_workload; target/release/examples/)" >&2
    exit 2
fi
if command -v ldconfig >/dev/null && ! ldconfig -p | grep 'libvulkan\.so\.1' >/dev/null; then
    echo "error: no Vulkan loader (libvulkan.so.1) on this machine; install libvulkan1" >&2
    exit 2
fi
mkdir -p "$OUT/logs" || exit 2
OUT=$(cd "$OUT" && pwd)
: > "$OUT/marks.txt"
DATE=${GALAXY_RUN_DATE:-$(date -u +%Y-%m-%d)}

# The fields this driver can sample: power.draw.instant is newer than power.draw, and the
# name of the board's energy counter differs between drivers (some have none). A field the
# driver does not know makes nvidia-smi reject the whole query, so each one is tried alone.
FIELDS="timestamp,power.draw"
if nvidia-smi --query-gpu=power.draw.instant --format=csv,noheader >/dev/null 2>&1; then
    FIELDS="$FIELDS,power.draw.instant"
fi
ENERGY_FIELD=""
COUNTER=""
for candidate in total_energy_consumption energy.consumption; do
    value=$(nvidia-smi --query-gpu=$candidate --format=csv,noheader,nounits -i 0 2>/dev/null | head -n 1)
    case "$value" in
        '' | *[!0-9.]*) ;;
        *) ENERGY_FIELD=$candidate; COUNTER=$value; break ;;
    esac
done
if [ -n "$ENERGY_FIELD" ]; then
    COUNTER_WORKS=1
else
    COUNTER_WORKS=0
    echo "no energy counter field works with this driver: integrating the power samples instead"
fi

{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "modes: $MODE_LIST; sizes: $SIZE_LIST; depth $DEPTH; $SECONDS_PER_WINDOW s per window; repeats $REPEATS; idle $IDLE_SECONDS s"
    echo "sampled fields: $FIELDS; energy counter: ${ENERGY_FIELD:-none} (works: $COUNTER_WORKS)"
    nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,power.limit \
        --format=csv 2>&1
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) threads"
} > "$OUT/environment.txt"
cat "$OUT/environment.txt"

# The sampler, in UTC so that its timestamps compare with the marks.
TZ=UTC nvidia-smi --query-gpu="$FIELDS" --format=csv,noheader,nounits -i 0 -lms 50 \
    > "$OUT/power-samples.csv" 2> "$OUT/logs/sampler.log" &
SAMPLER=$!
stop_sampler() { kill "$SAMPLER" 2>/dev/null; wait "$SAMPLER" 2>/dev/null; }
trap stop_sampler EXIT

# A mark: label, start or end, epoch seconds, energy counter (mJ). The label travels in
# ENERGY_LABEL, so that energy_workload can call this script with only "start" or "end".
MARK="$OUT/mark.sh"
cat > "$MARK" <<EOF
#!/usr/bin/env bash
counter=NA
if [ -n "$ENERGY_FIELD" ]; then
    counter=\$(nvidia-smi --query-gpu=$ENERGY_FIELD --format=csv,noheader,nounits -i 0 2>/dev/null | head -n 1)
fi
echo "\$ENERGY_LABEL \$1 \$(date -u +%s.%N) \${counter:-NA}" >> "$OUT/marks.txt"
EOF
chmod +x "$MARK"

echo "mode,size,depth,repeat,runs,seconds" > "$OUT/runs.txt"
sleep 1
for repeat in $(seq 1 "$REPEATS"); do
    echo "== round $repeat of $REPEATS: idle for $IDLE_SECONDS s"
    ENERGY_LABEL="idle#$repeat" "$MARK" start
    sleep "$IDLE_SECONDS"
    ENERGY_LABEL="idle#$repeat" "$MARK" end
    for size in $SIZE_LIST; do
        for mode in $MODE_LIST; do
            label="$mode#$size#$repeat"
            log="$OUT/logs/$mode-$size-$repeat.log"
            ENERGY_LABEL="$label" timeout --kill-after=10 $((SECONDS_PER_WINDOW + 120)) \
                "$BIN/energy_workload" --mode "$mode" --size "$size" --depth "$DEPTH" \
                --seconds "$SECONDS_PER_WINDOW" --mark "$MARK" > "$log" 2>&1
            status=$?
            if [ $status -ne 0 ]; then
                echo "   $mode at $size: FAILED (exit $status), see $log"
                continue
            fi
            result=$(tail -n 1 "$log")
            echo "$result,$repeat" | awk -F, '{print $1 "," $2 "," $3 "," $6 "," $4 "," $5}' >> "$OUT/runs.txt"
            echo "   $mode at $size: $result"
        done
    done
done
stop_sampler
trap - EXIT

# Joules per window, from the counter and from the samples; then the summaries.
awk -v counter_works="$COUNTER_WORKS" -v fields="$FIELDS" -v runs_file="$OUT/runs.txt" \
    -v summary="$OUT/energy-summary.md" -v runs_csv="$OUT/energy-runs.csv" -v figure="$OUT/energy-h100-per-run.csv" \
    -v date="$DATE" -v depth="$DEPTH" -v hardware="$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | head -n 1)" '
function days_from_civil(y, m, d,    era, yoe, doy, doe) {
    y -= (m <= 2); era = int(y / 400); yoe = y - era * 400
    doy = int((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1
    doe = yoe * 365 + int(yoe / 4) - int(yoe / 100) + doy
    return era * 146097 + doe - 719468
}
function epoch(stamp,    parts, date, time) {  # "2026/11/24 12:00:00.123" in UTC
    split(stamp, parts, " "); split(parts[1], date, "/"); split(parts[2], time, ":")
    return days_from_civil(date[1] + 0, date[2] + 0, date[3] + 0) * 86400 + time[1] * 3600 + time[2] * 60 + time[3]
}
function median(list, n,    i, j, t, a) {
    for (i = 1; i <= n; i++) a[i] = list[i]
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function minimum(list, n,    i, m) { m = list[1]; for (i = 2; i <= n; i++) if (list[i] < m) m = list[i]; return m }
function maximum(list, n,    i, m) { m = list[1]; for (i = 2; i <= n; i++) if (list[i] > m) m = list[i]; return m }
FILENAME ~ /power-samples/ {
    split($0, f, ", ")
    if (f[2] ~ /^[0-9.]+$/) { sample_time[++samples] = epoch(f[1]); sample_watts[samples] = f[2] + 0 }
    next
}
FILENAME ~ /marks/ {
    if ($2 == "start") { start_time[$1] = $3; start_counter[$1] = $4 }
    else { end_time[$1] = $3; end_counter[$1] = $4; labels[++label_count] = $1 }
    next
}
function window_joules_from_samples(from, to,    i, sum, n) {
    sum = 0; n = 0
    for (i = 1; i <= samples; i++) if (sample_time[i] >= from && sample_time[i] <= to) { sum += sample_watts[i]; n++ }
    return n ? sum / n * (to - from) : -1
}
function window_joules(label,    from_counter) {
    if (counter_works && start_counter[label] ~ /^[0-9.]+$/ && end_counter[label] ~ /^[0-9.]+$/)
        return (end_counter[label] - start_counter[label]) / 1000
    return window_joules_from_samples(start_time[label], end_time[label])
}
END {
    for (i = 1; i <= label_count; i++) {
        label = labels[i]
        joules[label] = window_joules(label)
        sampled[label] = window_joules_from_samples(start_time[label], end_time[label])
        window[label] = end_time[label] - start_time[label]
    }
    print "mode,size,depth,repeat,runs,seconds,window_seconds,joules,joules_from_samples,idle_watts" > runs_csv
    while ((getline line < runs_file) > 0) {
        split(line, r, ",")
        if (r[1] == "mode") continue
        label = r[1] "#" r[2] "#" r[4]; idle = "idle#" r[4]
        if (!(label in joules) || !(idle in joules) || window[idle] <= 0) continue
        idle_watts = joules[idle] / window[idle]
        printf "%s,%s,%s,%s,%s,%s,%.4f,%.3f,%.3f,%.2f\n", r[1], r[2], r[3], r[4], r[5], r[6], window[label], joules[label], sampled[label], idle_watts > runs_csv
        key = r[1] SUBSEP r[2]
        if (!(key in count)) { keys[++key_count] = key }
        n = ++count[key]
        # The counter window is a little longer than the loop (reading the counter takes
        # a moment at each end, with the GPU idle): count that margin at idle power.
        loop_joules = joules[label] - idle_watts * (window[label] - r[6])
        ms[key, n] = r[6] / r[5] * 1000
        watts[key, n] = loop_joules / r[6]
        mj[key, n] = loop_joules / r[5] * 1000
        above[key, n] = (joules[label] - idle_watts * window[label]) / r[5] * 1000
        idle_list[n] = idle_watts; idle_n = (n > idle_n) ? n : idle_n
    }
    print "# Energy of one run of the standard workload (depth " depth "), " hardware > summary
    print "" > summary
    print "| mode | size | ms per run | watts | mJ per run | mJ per run above idle | repeats |" > summary
    print "|---|---:|---:|---:|---:|---:|---:|" > summary
    print "# title: Energy of one run of the standard workload, depth " depth ", by size" > figure
    print "# x: size (rows = layer width), log" > figure
    print "# y: energy per run (mJ), log" > figure
    source = counter_works ? "the board energy counter (nvidia-smi)" : "board power sampled every 50 ms by nvidia-smi, integrated over each window"
    print "# hardware: GPU " hardware " (Vulkan); energy from " source > figure
    print "# command: code/h100/energy.sh (" date ")" > figure
    print "series,x,y,y_min,y_max" > figure
    for (k = 1; k <= key_count; k++) {
        key = keys[k]; n = count[key]; split(key, parts, SUBSEP)
        for (i = 1; i <= n; i++) { a[i] = ms[key, i]; b[i] = watts[key, i]; c[i] = mj[key, i]; d[i] = above[key, i] }
        printf "| %s | %s | %.3f (%.3f-%.3f) | %.0f (%.0f-%.0f) | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) | %d |\n", parts[1], parts[2], median(a, n), minimum(a, n), maximum(a, n), median(b, n), minimum(b, n), maximum(b, n), median(c, n), minimum(c, n), maximum(c, n), median(d, n), minimum(d, n), maximum(d, n), n > summary
        printf "%s,%s,%.4f,%.4f,%.4f\n", parts[1], parts[2], median(c, n), minimum(c, n), maximum(c, n) > figure
    }
    print "" > summary
    if (idle_n) printf "Idle power before each round: %.1f W (%.1f-%.1f).\n", median(idle_list, idle_n), minimum(idle_list, idle_n), maximum(idle_list, idle_n) > summary
    print "Energy from the board counter where it works (counter works: " counter_works "), else from 50 ms samples." > summary
}' "$OUT/power-samples.csv" "$OUT/marks.txt"
echo
cat "$OUT/energy-summary.md"
echo
echo "samples: $(wc -l < "$OUT/power-samples.csv") lines in $OUT/power-samples.csv"
