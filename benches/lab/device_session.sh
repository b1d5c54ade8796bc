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
echo "== $gpu"
echo "== tests (rc $tests_rc)"; grep -E "^===|test result|FAILED|panicked" "$out/tests.log"
echo "== lab (rc $lab_rc)"; grep -E "fraction|failed|WRONG" "$out/lab.log"
echo "== bench (rc $bench_rc)"; tail -60 "$out/bench.log"
