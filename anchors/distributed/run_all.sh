#!/usr/bin/env bash
# Runs every distributed anchor: all-reduce bandwidth, data-parallel training and inference,
# data-parallel training of the digits classifier, pipeline-parallel inference and training,
# with 1 and 2 processes.
#
#   anchors/distributed/run_all.sh DEVICE OUT_DIR [--quick]
#
# DEVICE is cpu (gloo, 1 and 2 processes on this host's cores), cuda (NCCL, 1 process, and 2
# when PyTorch sees at least two GPUs) or all (both). OUT_DIR receives one CSV file per script
# and configuration, the data-parallel scaling from 1 to 2 processes, environment.txt and
# log.txt. --quick runs tiny shapes (a test of the scripts, minutes on a 2-core machine).
# Sizes and repeats can be changed through the variables listed in README.md.
set -uo pipefail

if [[ $# -lt 2 || "$1" == "-h" || "$1" == "--help" ]]; then
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
device=$1
out_dir=$2
quick=${3:-}
case "$device" in
    cpu | cuda | all) ;;
    *) echo "run_all.sh: DEVICE is cpu, cuda or all, not '$device'" >&2; exit 2 ;;
esac
if [[ -n "$quick" && "$quick" != "--quick" ]]; then
    echo "run_all.sh: the third argument can only be --quick, not '$quick'" >&2
    exit 2
fi

# NVLink multicast off for everything started from here (the scripts set them as well).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=${PYTHON:-python3}
cores=$(nproc)
mkdir -p "$out_dir"
log="$out_dir/log.txt"
: > "$log"

if [[ -n "$quick" ]]; then
    cpu_sizes=32,64 cpu_batches=64,256 gpu_sizes=64,256 gpu_batches=256,1024
    pipe_cpu_size=64 pipe_cpu_batch=64 pipe_gpu_size=256 pipe_gpu_batch=256 depth=4
    cpu_timing="--warmup 1 --iterations 3 --repeats 2" gpu_timing="--warmup 2 --iterations 5 --repeats 2"
    allreduce_cpu_max=$((1 << 20)) allreduce_gpu_max=$((16 << 20)) microbatches=1,2,4
    digits_options="--batches 32 --epochs 3 --warmup 1 --repeats 2"
else
    # Chosen so that DEVICE=all takes about four minutes on a 16-core host with one H100.
    cpu_sizes=${CPU_SIZES:-256,1024} cpu_batches=${CPU_BATCHES:-256,1024,4096}
    gpu_sizes=${GPU_SIZES:-256,1024} gpu_batches=${GPU_BATCHES:-256,1024,4096,8192}
    pipe_cpu_size=${PIPE_CPU_SIZE:-1024} pipe_cpu_batch=${PIPE_CPU_BATCH:-1024}
    pipe_gpu_size=${PIPE_GPU_SIZE:-1024} pipe_gpu_batch=${PIPE_GPU_BATCH:-4096}
    depth=${DEPTH:-16}
    cpu_timing=${CPU_TIMING:-"--warmup 2 --iterations 5 --repeats 3"}
    gpu_timing=${GPU_TIMING:-"--warmup 5 --iterations 20 --repeats 5"}
    allreduce_cpu_max=$((64 << 20)) allreduce_gpu_max=$((256 << 20))
    microbatches=${MICROBATCHES:-1,2,4,8,16}
    digits_options="--batches ${DIGITS_BATCHES:-32,256} --epochs ${DIGITS_EPOCHS:-30} --warmup 2 --repeats ${DIGITS_REPEATS:-3}"
fi

{
    echo "date: $(date -u +%FT%TZ)"
    echo "command: $0 $*"
    echo "host: $(uname -n), $cores logical cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
    echo "python: $("$python" --version 2>&1)"
    "$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count())'
    "$python" -m pip freeze 2>/dev/null | grep -iE '^(torch|numpy|nvidia-nccl)' || true
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
        nvidia-smi topo -m 2>/dev/null || true
    fi
} > "$out_dir/environment.txt" 2>&1
tee -a "$log" < "$out_dir/environment.txt"

failures=()

# launch N THREADS SCRIPT ARGS...: one torchrun job (python -m torch.distributed.run is the
# torchrun command, without depending on PATH), its output in the log. A failure is recorded
# and the next job still runs, so one broken configuration does not cost the others.
launch() {
    local processes=$1 threads=$2 script=$3
    shift 3
    echo "== $(date -u +%T) N=$processes threads=$threads: $script $*" | tee -a "$log"
    if ! OMP_NUM_THREADS=$threads "$python" -m torch.distributed.run --standalone \
        --nproc-per-node "$processes" "$script_dir/$script" "$@" --out-dir "$out_dir" 2>&1 \
        | tee -a "$log"; then
        failures+=("N=$processes $script $*")
    fi
}

run_configuration() {
    local kind=$1 processes=$2
    local backend sizes batches pipe_size pipe_batch timing allreduce_max threads
    if [[ "$kind" == cpu ]]; then
        backend=gloo sizes=$cpu_sizes batches=$cpu_batches timing=$cpu_timing
        pipe_size=$pipe_cpu_size pipe_batch=$pipe_cpu_batch allreduce_max=$allreduce_cpu_max
        threads=$((cores / processes))
        ((threads >= 1)) || threads=1
    else
        backend=nccl sizes=$gpu_sizes batches=$gpu_batches timing=$gpu_timing
        pipe_size=$pipe_gpu_size pipe_batch=$pipe_gpu_batch allreduce_max=$allreduce_gpu_max
        threads=$((cores / processes))  # the host threads that feed each GPU
    fi
    local common_options="--backend $backend --device $kind --threads $threads"
    # shellcheck disable=SC2086  # the option strings are meant to split into words
    {
        launch "$processes" "$threads" allreduce_bandwidth.py $common_options --max-bytes "$allreduce_max"
        launch "$processes" "$threads" ddp_mlp.py $common_options $timing --sizes "$sizes" \
            --depth "$depth" --batches "$batches" --check
        launch "$processes" "$threads" ddp_mlp.py $common_options $timing --sizes "$sizes" \
            --depth "$depth" --batches "$batches" --inference
        launch "$processes" "$threads" ddp_digits.py $common_options $digits_options --check
        launch "$processes" "$threads" pipeline_mlp.py $common_options $timing --size "$pipe_size" \
            --depth "$depth" --batch "$pipe_batch" --microbatches "$microbatches" --check
    }
}

scaling() {
    local kind=$1 mode
    for mode in train inference digits; do
        local one="$out_dir/ddp-$mode-$kind-x1.csv" two="$out_dir/ddp-$mode-$kind-x2.csv"
        if [[ -f "$one" && -f "$two" ]]; then
            "$python" "$script_dir/scaling.py" "$one" "$two" \
                --out "$out_dir/ddp-$mode-$kind-scaling.csv" 2>&1 | tee -a "$log"
        fi
    done
}

start_seconds=$SECONDS
if [[ "$device" == cpu || "$device" == all ]]; then
    run_configuration cpu 1
    run_configuration cpu 2
    scaling cpu
fi
if [[ "$device" == cuda || "$device" == all ]]; then
    gpus=$("$python" -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null || echo 0)
    if ((gpus < 1)); then
        echo "run_all.sh: PyTorch sees no GPU; no cuda runs" | tee -a "$log"
        failures+=("cuda: no GPU")
    else
        run_configuration cuda 1
        if ((gpus >= 2)); then
            run_configuration cuda 2
            scaling cuda
        else
            echo "only $gpus GPU: the two-process NCCL runs need a second one (skipped)" | tee -a "$log"
        fi
    fi
fi

echo "== done in $((SECONDS - start_seconds)) s; results in $out_dir" | tee -a "$log"
if ((${#failures[@]})); then
    printf 'FAILED: %s\n' "${failures[@]}" | tee -a "$log"
    exit 1
fi
