#!/usr/bin/env bash
# The lab experiments of docs/performance.md ("Where a staged tile's time goes"), Sum i32 2^28.
# Here (needs target/release/monoscan):  bash benches/lab/run.sh gen
# On the GPU machine (nvcc, sm_90):       bash benches/lab/run.sh
set -euo pipefail
cd "$(dirname "$0")"
out=${LAB_OUT:-/tmp/monoscan-lab}
if [[ ${1:-} == gen ]]; then
  (cd ../.. && python3 benches/lab/gen.py "$out" 128x32 128x32x8 64x64 32x128 128x16) > "$out.shapes"
  cp harness.cu latency.cu variants/*.inc "$out/"
  exit 0
fi
cd "$out"
if [[ ${1:-} == rescan ]]; then  # session 4: the rescan variants against the staged kernel
  K=$(awk '$1 == "128_32" { print $2 }' "$out.shapes")
  for f in trace_*.cu; do
    for inc in early_lookback bulk_copies propagator hybrid rescan; do echo "#include \"$inc.inc\""; done | cat "$f" - > "all_${f#trace_}"
  done
  b() { local o=$1 f=$2 k=$3 sm=$4 v=$5; shift 5
    nvcc -O3 -std=c++17 -arch=sm_90 -DKFILE="\"$f\"" -DKNAME="$k" -DVNAME="\"$v\"" -DSMEM_BYTES="$sm" -DTHREADS=128 "$@" harness.cu -o "$o" 2>/dev/null; }
  b staged all_128_32.cu "$K" 16384 "staged 128x32" &
  b rs2h all_128_32.cu ms_rescan2 32768 "rescan2 + L2 hints, resident grid" -DPERSIST=0 -DRS_HINT=1 &
  b rs2h5 all_128_32.cu ms_rescan2 32768 "rescan2 + L2 hints, at most 5 blocks/SM by registers" -DPERSIST=0 -DRS_HINT=1 -DRS_MINB=5 &
  b rs2h7 all_128_32.cu ms_rescan2 32768 "rescan2 + L2 hints, at most 7 blocks/SM by registers" -DPERSIST=0 -DRS_HINT=1 -DRS_MINB=7 &
  b rs2h16_12 all_128_16.cu ms_rescan2 16384 "rescan2 + L2 hints, 128x16 tiles, at most 12 blocks/SM by registers" -DPERSIST=0 -DRS_HINT=1 -DRS_MINB=12 &
  wait
  for x in staged rs2h rs2h5 rs2h7 rs2h16_12; do timeout 60 "./$x" "${2:-28}" || echo "$x failed: $?"; done
  exit 0
fi
K=$(awk '$1 == "128_32" { print $2 }' "$out.shapes")
build() { local o=$1 k=$2 n=$3 v=$4 s=$5 t=$6; shift 6
  nvcc -O3 -std=c++17 -arch=sm_90 -DKFILE="\"$k\"" -DKNAME="$n" -DVNAME="\"$v\"" -DSMEM_BYTES="$s" -DTHREADS="$t" "$@" harness.cu -o "$o"; }
for f in trace_*.cu; do
  for inc in early_lookback bulk_copies propagator hybrid rescan; do echo "#include \"$inc.inc\""; done | cat "$f" - > "all_${f#trace_}"
done
build staged all_128_32.cu "$K" "staged 128x32" 16384 128 -DTRACE &
build lb8 all_128_32_8.cu "$K" "staged 128x32, 8 predecessors per lane" 16384 128 -DTRACE &
build nolb all_128_32.cu "$K" "staged 128x32 without look-back (wrong results)" 16384 128 -DTRACE -DNOLB=1 &
build early all_128_32.cu ms_v2 "early look-back warp" 16384 160 -DTRACE &
build bulk all_128_32.cu ms_bulk "cp.async.bulk copies" 18432 128 -DTRACE &
build prop all_128_32.cu "$K" "with propagator" 16384 128 -DTRACE -DPROP=232448 &
build hybrid all_64_64.cu ms_hyb "hybrid 64 x (64 smem + 64 registers)" 16384 64 -DTRACE -DTILE_ELEMS=8192 &
wait
for b in staged lb8 nolb early bulk prop hybrid; do timeout 60 "./$b" 28 || echo "$b failed: $?"; done
