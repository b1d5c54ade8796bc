#!/usr/bin/env bash
# On the GPU machine, after benches/lab/prepare_device.sh here, carrying .device-stage:
#   bash benches/lab/device_session.sh [tests] [bench] [lab] [sweep] [latency] [ncu] [select] [cub] [tma] [prefetch] [shapes] [wave]
# (default: the first four)
# tests: the GPU test binaries; bench: the benchmark sweep 2^10..2^28 with its CSV; lab:
# run.sh pipeline (LAB_MODE overrides); sweep: staged tiles of 8 KiB beside the defaults.
# Full logs go to $OUT; a summary is printed last. All four take about 6-8 minutes: split
# them over two calls when the 10-minute limit of one call is near.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/monoscan-out}
mkdir -p "$out"
parts=${*:-tests bench lab sweep}
[[ -d .device-stage/tests ]] || (cd .device-stage && tar xJf pack.tar.xz)
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
for part in $parts; do
  case $part in
    tests)
      timeout 300 .device-stage/run tests > "$out/tests.log" 2>&1
      echo "== tests (rc $?)"; grep -E "^===|test result|FAILED|panicked" "$out/tests.log" ;;
    bench)
      timeout 240 .device-stage/run example monoscan bench --min-log2 10 --max-log2 28 --step 2 \
        --algos single-pass,hierarchical --csv "$out/bench.csv" > "$out/bench.log" 2>&1
      echo "== bench (rc $?)"; tail -60 "$out/bench.log" ;;
    lab)
      LAB_OUT="$PWD/.device-stage/lab" timeout 300 bash benches/lab/run.sh "${LAB_MODE:-pipeline}" > "$out/lab.log" 2>&1
      echo "== lab (rc $?)"; grep -E "fraction|failed|WRONG" "$out/lab.log" ;;
    ncu)
      LAB_OUT="$PWD/.device-stage/lab" timeout 400 bash benches/lab/run.sh ncu 26 > "$out/ncu.log" 2>&1
      echo "== ncu (rc $?)"; cat "$out/ncu.log" ;;
    sweep)
      # Staged tiles of 8 KiB (never measured; benches/lab/scan_model.py predicts a gain from
      # the finer shared-memory granularity, ~25 blocks per SM) beside the defaults; each run
      # measures its own copy.
      sweep() { local case=$1 lg=$2; shift 2
        for shape in default "$@"; do
          echo "-- $case 2^$lg staged $shape"
          ( if [[ $shape != default ]]; then export MONOSCAN_STAGED=$shape; fi
            timeout 60 .device-stage/run example monoscan bench --cases "$case" --min-log2 "$lg" \
              --max-log2 "$lg" --algos single-pass 2>&1 | grep -E "single-pass|error" )
        done; }
      { sweep sum-i32 28 64x32 32x64; sweep affine-f64 26 64x8 32x16; sweep segsum-f32 27 64x16 32x32; } > "$out/sweep.log" 2>&1
      echo "== 8 KiB staged tiles"; cat "$out/sweep.log" ;;
    tma)
      # Session 6: staged tiles loaded by cp.async (MONOSCAN_TMA=0: 128-thread tiles for
      # elements up to 8 bytes) against one tensor copy per tile (the sm_90 default, 192-thread
      # tiles), and the TMA form with the old 128-thread tiles; two rounds, alternating; each
      # run measures its own copy.
      for round in 1 2; do
        for c in "MONOSCAN_TMA=0 sum-i32 28" "MONOSCAN_STAGED=128x32 sum-i32 28" "MONOSCAN_TMA=1 sum-i32 28" \
                 "MONOSCAN_TMA=0 affine-f64 26" "MONOSCAN_TMA=1 affine-f64 26" \
                 "MONOSCAN_TMA=0 segsum-f32 27" "MONOSCAN_STAGED=128x16 segsum-f32 27" "MONOSCAN_TMA=1 segsum-f32 27"; do
          set -- $c
          echo "-- round $round, $1, $2 2^$3"
          env "$1" timeout 60 .device-stage/run example monoscan bench --cases "$2" \
            --min-log2 "$3" --max-log2 "$3" --algos single-pass 2>&1 | grep -E "single-pass|error"
        done
      done > "$out/tma.log" 2>&1
      echo "== tma"; cat "$out/tma.log" ;;
    prefetch)
      # Session 6: the TMA form's L2 prefetch distance (MONOSCAN_PREFETCH_KIB; 0 = off), each
      # run with its own copy. ROUNDS, PREFETCH_KIBS and PREFETCH_CASES (case:log2) override.
      for round in $(seq "${ROUNDS:-2}"); do
        for c in ${PREFETCH_CASES:-sum-i32:28 affine-f64:26 segsum-f32:27}; do
          for kib in ${PREFETCH_KIBS:-0 3072 6144 9216}; do
            echo "-- round $round, prefetch $kib KiB, ${c%:*} 2^${c#*:}"
            MONOSCAN_PREFETCH_KIB=$kib timeout 60 .device-stage/run example monoscan bench --cases "${c%:*}" \
              --min-log2 "${c#*:}" --max-log2 "${c#*:}" --algos single-pass 2>&1 | grep -E "single-pass|error"
          done
        done
      done > "$out/prefetch.log" 2>&1
      echo "== prefetch"; cat "$out/prefetch.log" ;;
    shapes)
      # Session 7: staged tile shapes (MONOSCAN_STAGED) around the defaults once look-back state
      # fills a sector per tile; each run measures its own copy. SHAPE_CASES overrides.
      for c in ${SHAPE_CASES:-sum-i32:28:128x32,160x32,256x32 segsum-f32:27:128x16,160x16,256x16}; do
        IFS=: read -r case lg shapes <<< "$c"
        for shape in default ${shapes//,/ }; do
          echo "-- $case 2^$lg staged $shape"
          ( if [[ $shape != default ]]; then export MONOSCAN_STAGED=$shape; fi
            timeout 60 .device-stage/run example monoscan bench --cases "$case" --min-log2 "$lg" \
              --max-log2 "$lg" --algos single-pass 2>&1 | grep -E "single-pass|error" )
        done
      done > "$out/shapes.log" 2>&1
      echo "== staged shapes"; cat "$out/shapes.log" ;;
    latency)
      # The 2^10 latency line with the small one-tile
      # shape (default) and with the single-pass tile it replaces (256x32), alternating.
      for round in 1 2 3; do
        for shape in default 256x32; do
          echo "-- round $round, one-tile shape $shape"
          ( if [[ $shape != default ]]; then export MONOSCAN_ONE_TILE=$shape; fi
            timeout 60 .device-stage/run example monoscan bench --cases sum-i32 --min-log2 10 \
              --max-log2 10 --algos single-pass 2>&1 | grep -E "latency|error" )
        done
      done > "$out/latency.log" 2>&1
      echo "== 2^10 latency A/B"; cat "$out/latency.log" ;;
    select)
      # Staged select tiles (MONOSCAN_SELECT) on compaction of 2^28 i32, half kept; each run
      # measures its own copy and the register kernel beside the staged one.
      for shape in default 256x16 128x16 64x32 96x32 256x32 512x8; do
        echo "-- compact-i32 2^28 select $shape"
        ( if [[ $shape != default ]]; then export MONOSCAN_SELECT=$shape; fi
          timeout 60 .device-stage/run example monoscan bench --cases compact-i32 --min-log2 28 \
            --max-log2 28 2>&1 | grep -E "select|error" )
      done > "$out/select.log" 2>&1
      echo "== staged select tiles"; cat "$out/select.log" ;;
    wave)
      # Session 9: the staged scan's look-back windows growing to 2 or 4 predecessors per lane
      # (MONOSCAN_STAGED=...x2, x4; growing windows were taken out again after this run, so
      # these now measure fixed windows of 2 or 4) and the TMA form's prefetch plan
      # (MONOSCAN_FIRST_WAVE=0: the first wave's blocks prefetch inside the first wave, as
      # before); the first run also had MONOSCAN_FILL_PREFETCH_KIB=12288, a knob taken out at
      # the end of the session. Rounds alternate; each run measures its own copy.
      # WAVE_CONFIGS (case:log2:VAR=value,...; "-" for the defaults) and ROUNDS override.
      for round in $(seq "${ROUNDS:-3}"); do
        for c in ${WAVE_CONFIGS:-sum-i32:28:- sum-i32:28:MONOSCAN_STAGED=192x32x2 sum-i32:28:MONOSCAN_STAGED=192x32x4 \
                 sum-i32:28:MONOSCAN_FIRST_WAVE=0 \
                 segsum-f32:27:- segsum-f32:27:MONOSCAN_STAGED=192x16x2 segsum-f32:27:MONOSCAN_FIRST_WAVE=0 \
                 affine-f64:26:- affine-f64:26:MONOSCAN_FIRST_WAVE=0}; do
          IFS=: read -r case lg vars <<< "$c"
          echo "-- round $round, $case 2^$lg, $vars"
          ( if [[ $vars != - ]]; then for v in ${vars//,/ }; do export "$v"; done; fi
            timeout 60 .device-stage/run example monoscan bench --cases "$case" --min-log2 "$lg" \
              --max-log2 "$lg" --algos single-pass 2>&1 | grep -E "single-pass|error" )
        done
      done > "$out/wave.log" 2>&1
      echo "== wave"; cat "$out/wave.log" ;;
    cub)
      # CUB's figures in the same device session (benches/cub/cub_baseline.cu).
      { nvcc -O3 -std=c++17 -arch=sm_90 benches/cub/cub_baseline.cu -o /tmp/cub_baseline \
          && timeout 120 /tmp/cub_baseline; } > "$out/cub.log" 2>&1
      echo "== CUB (rc $?)"; cat "$out/cub.log" ;;
    *) echo "unknown part $part (tests, bench, lab, sweep, latency, ncu, select, cub, tma, prefetch, shapes, wave)" ;;
  esac
done
