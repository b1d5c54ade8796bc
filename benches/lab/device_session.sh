#!/usr/bin/env bash
# On the GPU machine, one call (after benches/lab/prepare_device.sh here, carrying
# .device-stage): the GPU tests, the benchmark sweep with its CSV, and the lab's pending
# experiment (run.sh MODE, default pipeline). Full logs go to $OUT; a summary is printed last.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/monoscan-out}
mkdir -p "$out"
(cd .device-stage && tar xJf pack.tar.xz)
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
timeout 300 .device-stage/run tests > "$out/tests.log" 2>&1
tests_rc=$?
timeout 240 .device-stage/run example monoscan bench --min-log2 10 --max-log2 28 --step 2 \
  --algos single-pass,hierarchical --csv "$out/bench.csv" > "$out/bench.log" 2>&1
bench_rc=$?
LAB_OUT="$PWD/.device-stage/lab" timeout 200 bash benches/lab/run.sh "${1:-pipeline}" > "$out/lab.log" 2>&1
lab_rc=$?
# Staged tiles of 8 KiB (never measured; benches/lab/scan_model.py predicts a gain from the
# finer shared-memory granularity, ~25 blocks per SM) beside the defaults; each run measures
# its own copy.
sweep() { local case=$1 lg=$2; shift 2
  for shape in default "$@"; do
    echo "-- $case 2^$lg staged $shape"
    ( if [[ $shape != default ]]; then export MONOSCAN_STAGED=$shape; fi
      timeout 60 .device-stage/run example monoscan bench --cases "$case" --min-log2 "$lg" --max-log2 "$lg" \
        --algos single-pass 2>&1 | grep -E "single-pass|error" )
  done; }
{ sweep sum-i32 28 64x32 32x64; sweep affine-f64 26 64x8 32x16; sweep segsum-f32 27 64x16 32x32; } > "$out/sweep.log" 2>&1
echo "== $gpu"
echo "== tests (rc $tests_rc)"; grep -E "^===|test result|FAILED|panicked" "$out/tests.log"
echo "== lab (rc $lab_rc)"; grep -E "fraction|failed|WRONG" "$out/lab.log"
echo "== 8 KiB staged tiles"; cat "$out/sweep.log"
echo "== bench (rc $bench_rc)"; tail -60 "$out/bench.log"
