#!/usr/bin/env bash
# The lab experiments of docs/performance.md, Sum i32 (2^28 unless a size is given).
# Here (needs target/release/monoscan):  bash benches/lab/run.sh gen
# On the GPU machine (nvcc, sm_90):       bash benches/lab/run.sh [traces|rescan|pipeline] [log2 n]
#   traces   (default) session 3: per-tile traces of the staged kernel and five variants
#   rescan   session 4: tiles re-read from L2 instead of held (variants/rescan.inc)
#   pipeline session 4: resident grids with several tiles in flight per block (variants/pipeline.inc,
#            and the warp-specialised variants/split.inc)
#   tma      session 6: tiles moved by tensor copies (variants/tma.inc)
#   prefetch2 session 6: L2 prefetch distances with eviction hints
#   ahead    session 7: tiles reduced ahead of their scan (variants/ahead.inc)
#   lb       session 7: wider look-back windows with prefetching, and DRAM bytes by Nsight Compute
#   stride   session 7: status words spread over sectors or lines
#   fixed    session 8: fill and drain traced on the global timer; a resident grid looping over tiles
#   persist  session 8: that grid at 9 blocks per SM, claiming each next tile early
#   pipe2    session 8: two tile buffers per block, the next tile's copy during the look-back
#   pipe3    session 8: the same in session 4's order (the next tile's aggregate before the look-back)
#   l2       session 8: L2 and DRAM counters with and without the prefetch and the look-back
#   ws       session 8: a look-back warp beside the data warps, two buffers (variants/ws.inc)
#   help     session 8: look-backs that publish their first window's inclusive prefixes
#   fabric   session 8: persistent grids prefetching their own next tile; L2 fabric counters
#   store    session 8: output by one tensor store per tile
#   grow     session 9: look-back windows that double, up to 2 or 4 predecessors per lane
#   fill     session 9: the first wave prefetches the second once its own copies have landed
#   grow1    session 9: windows that grow for the first wave's tiles only
#   cluster  session 10: super-tiles of 2 or 4 tiles scanned by a thread-block cluster, one
#            look-back per super-tile (variants/cluster.inc); tiles of 288 and 576 threads
#   big      session 10: the library's new 352x32 tiles: tensor stores, a resident grid, traced
#   pace     session 11: the first wave's copies paced in tile order, timed and traced
#   pfkind   session 11: four prefetch instructions and none, timed, with L2 fabric counters
#   ncu      session 4: DRAM bytes and L2 hit rate (Nsight Compute) of the staged, rescan2 and
#            split kernels
set -euo pipefail
cd "$(dirname "$0")"
out=${LAB_OUT:-/tmp/monoscan-lab}
if [[ ${1:-} == gen ]]; then
  (cd ../.. && python3 benches/lab/gen.py "$out" 128x32 192x32 288x32 352x32 576x32 96x32 192x32x2 192x32x4 128x32x8 64x64 32x128 128x16 64x32 512x8 512x8x8 256x8x8 matmod:128x8 matmod:64x8 matmod:256x4x8) > "$out.shapes"
  cp harness.cu latency.cu variants/*.inc "$out/"
  exit 0
fi
mode=${1:-traces}
lg=${2:-28}
cd "$out"
K=$(awk '$1 == "128_32" { print $2 }' "$out.shapes")
for f in trace_*.cu; do
  for inc in early_lookback bulk_copies propagator hybrid lab_tile rescan pipeline split help tma cluster ahead persist pipe2 ws; do echo "#include \"$inc.inc\""; done | cat "$f" - > "all_${f#trace_}"
done
# build OUT SOURCE KERNEL SMEM_BYTES THREADS LABEL [nvcc flags]
build() { local o=$1 f=$2 k=$3 sm=$4 t=$5 v=$6; shift 6
  nvcc -O3 -std=c++17 -arch=sm_90 -DKFILE="\"$f\"" -DKNAME="$k" -DVNAME="\"$v\"" -DSMEM_BYTES="$sm" -DTHREADS="$t" "$@" harness.cu -o "$o" -lcuda > "$o.log" 2>&1 \
    || { echo "build of $o failed:"; grep -m 10 error "$o.log"; }; }
# counters METRICS BINARY...: Nsight Compute counters of one launch of each (it reads them on
# the Firecracker machines with --clock-control none).
counters() {
  local metrics=$1 ncu_bin x; shift
  ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  for x in "$@"; do
    echo "-- ncu $x"
    timeout 150 "$ncu_bin" --clock-control none --launch-skip 8 --launch-count 1 -k "regex:^ms_" \
      --metrics "$metrics" "./$x" "$lg" 2>&1 | grep -E "dram__|lts__|gpu__time|fraction|==ERR|error" || echo "$x: ncu failed"
  done
}
# dram_bytes BINARY...: DRAM bytes and L2 hit rate of one launch of each.
dram_bytes() { counters dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum "$@"; }
case $mode in
  traces)
    build staged all_128_32.cu "$K" 16384 128 "staged 128x32" -DTRACE &
    build lb8 all_128_32_8.cu "$K" 16384 128 "staged 128x32, 8 predecessors per lane" -DTRACE &
    build nolb all_128_32.cu "$K" 16384 128 "staged 128x32 without look-back (wrong results)" -DTRACE -DNOLB=1 &
    build early all_128_32.cu ms_v2 16384 160 "early look-back warp" -DTRACE &
    build bulk all_128_32.cu ms_bulk 18432 128 "cp.async.bulk copies" -DTRACE &
    build prop all_128_32.cu "$K" 16384 128 "with propagator" -DTRACE -DPROP=232448 &
    build hybrid all_64_64.cu ms_hyb 16384 64 "hybrid 64 x (64 smem + 64 registers)" -DTRACE -DTILE_ELEMS=8192 &
    runs="staged lb8 nolb early bulk prop hybrid" ;;
  rescan)
    build staged all_128_32.cu "$K" 16384 128 "staged 128x32" &
    build rs1 all_128_32.cu ms_rescan 16384 128 "rescan lag 1, resident grid" -DPERSIST=0 &
    build rs2h all_128_32.cu ms_rescan2 32768 128 "rescan2 + L2 hints, resident grid" -DPERSIST=0 -DRS_HINT=1 &
    build rs2h5 all_128_32.cu ms_rescan2 32768 128 "rescan2 + L2 hints, at most 5 blocks/SM by registers" -DPERSIST=0 -DRS_HINT=1 -DRS_MINB=5 &
    build rs2h16_12 all_128_16.cu ms_rescan2 16384 128 "rescan2 + L2 hints, 128x16 tiles, at most 12 blocks/SM by registers" -DPERSIST=0 -DRS_HINT=1 -DRS_MINB=12 &
    runs="staged rs1 rs2h rs2h5 rs2h16_12" ;;
  pipeline)
    build staged all_128_32.cu "$K" 16384 128 "staged 128x32" &
    build st64 all_64_32.cu "$K" 8192 64 "staged 64x32 (8 KiB tiles)" &
    build pl2 all_128_32.cu ms_pipeline 32768 128 "pipeline 128x32, 2 stages" -DPERSIST=0 -DPL_STAGES=2 -DPL_MINB=6 &
    build pl3 all_128_32.cu ms_pipeline 49152 128 "pipeline 128x32, 3 stages" -DPERSIST=0 -DPL_STAGES=3 -DPL_MINB=4 &
    build pl2_16 all_128_16.cu ms_pipeline 16384 128 "pipeline 128x16, 2 stages" -DPERSIST=0 -DPL_STAGES=2 -DPL_MINB=12 &
    build sp2 all_128_32.cu ms_split 32768 160 "split 128x32, 2 stages" -DPERSIST=0 -DSP_STAGES=2 -DSP_MINB=6 &
    build sp2_16 all_128_16.cu ms_split 16384 160 "split 128x16, 2 stages" -DPERSIST=0 -DSP_STAGES=2 -DSP_MINB=12 &
    build sp3_16 all_128_16.cu ms_split 24576 160 "split 128x16, 3 stages" -DPERSIST=0 -DSP_STAGES=3 -DSP_MINB=9 &
    build sp2_64 all_64_32.cu ms_split 16384 96 "split 64x32, 2 stages" -DPERSIST=0 -DSP_STAGES=2 -DSP_MINB=13 &
    # Deep pipelines, few large blocks per SM (as CUB's Blackwell scan does): 512 workers and
    # 12 stages of 16 KiB (one block per SM), 256 workers and 12 stages of 8 KiB (two).
    # The incremental look-back walks about one tile per block: 8 per lane covers it at once.
    build sp12_512 all_512_8.cu ms_split 196608 544 "split 512x8, 12 stages" -DPERSIST=0 -DSP_STAGES=12 -DSP_MINB=1 &
    build sp12_512_8 all_512_8_8.cu ms_split 196608 544 "split 512x8, 12 stages, look-back 8 per lane" -DPERSIST=0 -DSP_STAGES=12 -DSP_MINB=1 &
    build sp12_256_8 all_256_8_8.cu ms_split 98304 288 "split 256x8, 12 stages, look-back 8 per lane" -DPERSIST=0 -DSP_STAGES=12 -DSP_MINB=2 &
    # The non-commutative 2x2 matrix product mod p (16-byte elements, exact): checks the
    # variants' ordering, and times them where the Affine target lives (2^26 elements).
    Km=$(awk '$1 == "matmod_128_8" { print $2 }' "$out.shapes")
    build mm_staged all_matmod_128_8.cu "$Km" 16384 128 "matmod staged 128x8" -DMATMOD &
    build mm_st64 all_matmod_64_8.cu "$Km" 8192 64 "matmod staged 64x8 (8 KiB tiles)" -DMATMOD &
    build mm_pl2 all_matmod_128_8.cu ms_pipeline 32768 128 "matmod pipeline 128x8, 2 stages" -DMATMOD -DPERSIST=0 -DPL_STAGES=2 -DPL_MINB=6 &
    build mm_sp2 all_matmod_128_8.cu ms_split 32768 160 "matmod split 128x8, 2 stages" -DMATMOD -DPERSIST=0 -DSP_STAGES=2 -DSP_MINB=6 &
    build mm_sp12 all_matmod_256_4_8.cu ms_split 196608 288 "matmod split 256x4, 12 stages, look-back 8 per lane" -DMATMOD -DPERSIST=0 -DSP_STAGES=12 -DSP_MINB=1 &
    build mm_sp2_64 all_matmod_64_8.cu ms_split 16384 96 "matmod split 64x8, 2 stages" -DMATMOD -DPERSIST=0 -DSP_STAGES=2 -DSP_MINB=12 &
    runs="staged st64 pl2 pl3 pl2_16 sp2 sp2_16 sp3_16 sp2_64 sp12_512 sp12_512_8 sp12_256_8 mm_staged mm_st64 mm_pl2 mm_sp2 mm_sp2_64 mm_sp12" ;;
  tma)
    # Session 6: the tile loaded (and optionally stored) by one tensor copy (variants/tma.inc).
    # TMA_DYN keeps all shared state in the dynamic buffer (no 1 KiB alignment padding);
    # TMA_PF=D prefetches tile + D into L2 when a tile is claimed.
    K192=$(awk '$1 == "192_32" { print $2 }' "$out.shapes")
    build staged all_128_32.cu "$K" 16384 128 "staged 128x32" &
    build tmad all_128_32.cu ms_tma 16448 128 "tma load 128x32" -DTMA -DTMA_DYN=1 &
    build tmad192 all_192_32.cu ms_tma 24640 192 "tma load 192x32" -DTMA -DTMA_DYN=1 &
    for d in 256 512 1024 2048; do
      build tmad192_pf$d all_192_32.cu ms_tma 24640 192 "tma load 192x32, L2 prefetch $d tiles ahead" -DTMA -DTMA_DYN=1 -DTMA_PF=$d &
    done
    build tmad_pf1024 all_128_32.cu ms_tma 16448 128 "tma load 128x32, L2 prefetch 1024 tiles ahead" -DTMA -DTMA_DYN=1 -DTMA_PF=1024 &
    build tmad192_tr all_192_32.cu ms_tma 24640 192 "tma load 192x32 (traced)" -DTMA -DTMA_DYN=1 -DTRACE &
    build tmad192_pf_tr all_192_32.cu ms_tma 24640 192 "tma load 192x32, L2 prefetch 1024 ahead (traced)" -DTMA -DTMA_DYN=1 -DTMA_PF=1024 -DTRACE &
    build tmad192_nolb all_192_32.cu ms_tma 24640 192 "tma 192x32 without look-back (wrong results)" -DTMA -DTMA_DYN=1 -DNOLB=1 &
    runs="staged tmad tmad192 tmad192_pf256 tmad192_pf512 tmad192_pf1024 tmad192_pf2048 tmad_pf1024 tmad192 tmad192_pf512 tmad192_pf1024 tmad192_tr tmad192_pf_tr tmad192_nolb" ;;
  prefetch2)
    # Session 6, end: prefetch distances with L2 eviction hints (prefetch evict_last, the
    # consuming tensor copy evict_first) against plain prefetching, 192x32 tiles (24 KiB).
    for d in 128 256 384 512; do
      build pf$d all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch $d tiles" -DTMA -DTMA_DYN=1 -DTMA_PF=$d &
      build pfh$d all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch $d tiles, evict_last/evict_first" -DTMA -DTMA_DYN=1 -DTMA_PF=$d -DTMA_PF_LAST=1 -DTMA_HINT=1 &
    done
    # Session 7: streaming stores (TMA_SCS=1) with and without the hints, and a traced run at 3 MiB.
    for d in 128 256 384; do
      build pfs$d all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch $d tiles, streaming stores" -DTMA -DTMA_DYN=1 -DTMA_PF=$d -DTMA_SCS=1 &
      build pfhs$d all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch $d tiles, hints + streaming stores" -DTMA -DTMA_DYN=1 -DTMA_PF=$d -DTMA_PF_LAST=1 -DTMA_HINT=1 -DTMA_SCS=1 &
    done
    build pf128_tr all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128 tiles (traced)" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTRACE &
    build nolb_pf128 all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128, without look-back (wrong results)" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DNOLB=1 &
    runs="pf128 pfh128 pfs128 pfhs128 pf256 pfh256 pfs256 pfhs256 pf384 pfh384 pfs384 pfhs384 pf512 pfh512 pf128 pfh128 pfs128 pfhs128 pf128_tr nolb_pf128" ;;
  ahead)
    # Session 7: each tile reduced AH_LEAD tiles ahead of its scan (variants/ahead.inc), against the
    # library's design (TMA 192x32, prefetch 128 tiles = 3 MiB).
    build pf128 all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128 tiles" -DTMA -DTMA_DYN=1 -DTMA_PF=128 &
    for d in 128 256 512 1024; do
      build ah$d all_192_32.cu ms_ahead 24640 192 "reduce ahead 192x32, lead $d tiles" -DTMA -DAH_LEAD=$d -DGRID_MUL=2 &
      build ahh$d all_192_32.cu ms_ahead 24640 192 "reduce ahead 192x32, lead $d tiles, evict_last/evict_first" -DTMA -DAH_LEAD=$d -DAH_HINT=1 -DGRID_MUL=2 &
    done
    build ah256_tr all_192_32.cu ms_ahead 24640 192 "reduce ahead 192x32, lead 256 tiles (traced)" -DTMA -DAH_LEAD=256 -DGRID_MUL=2 -DTRACE &
    build pf128_tr all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128 tiles (traced)" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTRACE &
    runs="pf128 ah128 ahh128 ah256 ahh256 ah512 ahh512 ah1024 ahh1024 pf128 ah256 ahh256 ah256_tr pf128_tr" ;;
  lb)
    # Session 7: wider look-back windows (2 and 4 predecessors per lane) on the library's design
    # (TMA 192x32, prefetch 128 tiles), and DRAM bytes (Nsight Compute) with and without prefetching.
    build pf128 all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128" -DTMA -DTMA_DYN=1 -DTMA_PF=128 &
    build lb2 all_192_32_2.cu ms_tma 24640 192 "tma 192x32, prefetch 128, look-back 2 per lane" -DTMA -DTMA_DYN=1 -DTMA_PF=128 &
    build lb4 all_192_32_4.cu ms_tma 24640 192 "tma 192x32, prefetch 128, look-back 4 per lane (8 blocks/SM)" -DTMA -DTMA_DYN=1 -DTMA_PF=128 &
    build lb4m all_192_32_4.cu ms_tma 24640 192 "tma 192x32, prefetch 128, look-back 4 per lane, 9 blocks/SM" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 &
    build lb2_tr all_192_32_2.cu ms_tma 24640 192 "tma 192x32, prefetch 128, look-back 2 per lane (traced)" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTRACE &
    build pf0 all_192_32.cu ms_tma 24640 192 "tma 192x32, no prefetch" -DTMA -DTMA_DYN=1 &
    build pfhs384 all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 384, hints + streaming stores" -DTMA -DTMA_DYN=1 -DTMA_PF=384 -DTMA_PF_LAST=1 -DTMA_HINT=1 -DTMA_SCS=1 &
    wait
    build lb2m all_192_32_2.cu ms_tma 24640 192 "tma 192x32, prefetch 128, look-back 2 per lane, bound 9 blocks/SM" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 &
    build pf128m all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128, bound 9 blocks/SM" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 &
    wait
    for x in pf128 lb2 lb4 lb4m pf128m lb2m pf128 lb2 lb4m pf128m lb2m lb2_tr; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    [[ ${LB_NCU:-1} == 1 ]] || exit 0
    dram_bytes pf0 pf128 pfhs384
    exit 0 ;;
  stride)
    # Session 7: status words spread out (MS_STATE_STRIDE words of 8 bytes per tile: 1 packed, 4 one
    # per 32-byte sector, 16 one per 128-byte line), so a window's polls do not share lines with
    # the publishes of the ~32 tiles in flight around them. TMA 192x32, prefetch 128, 9-block bound.
    for st in ${STRIDES:-1 4 16}; do
      # Sources from before session 7 index `st + tile`; later ones place slots by MS_SLOT bytes.
      sed -e 's/(st + tile)/(st + (ms_u64)(tile) * MS_STATE_STRIDE)/' \
          -e 's/^#define MS_SLOT [0-9]*$/#define MS_SLOT (8 * MS_STATE_STRIDE)/' all_192_32.cu > all_192_32_st$st.cu
      grep -q MS_STATE_STRIDE all_192_32_st$st.cu || { echo "stride: no status indexing to rewrite"; exit 1; }
      build st$st all_192_32_st$st.cu ms_tma 24640 192 "tma 192x32, prefetch 128, status stride $((st * 8)) B" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 -DMS_STATE_STRIDE=$st &
    done
    tst=${TRACE_STRIDE:-16}  # the stride also built with per-tile stamps
    [[ -f all_192_32_st$tst.cu ]] && build st${tst}_tr all_192_32_st$tst.cu ms_tma 24640 192 "tma 192x32, prefetch 128, status stride $((tst * 8)) B (traced)" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 -DMS_STATE_STRIDE=$tst -DTRACE &
    runs="$(for st in ${STRIDES:-1 4 16}; do echo -n "st$st "; done)"
    runs="$runs $runs"; [[ -f all_192_32_st$tst.cu ]] && runs="$runs st${tst}_tr" ;;
  fixed)
    # Session 8: where the kernel's time goes beyond its steady rate (traced with TRACE_END: fill,
    # drain, block slots left empty), at three sizes for a fit of fixed cost, and a resident grid
    # that loops over tiles (variants/persist.inc), against the library's design.
    build pf128 all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128" -DTMA -DTMA_DYN=1 -DTMA_PF=128 &
    build pf128_tr all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128 (traced)" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTRACE -DTRACE_END &
    build ps128 all_192_32.cu ms_persist 24640 192 "persistent tma 192x32, prefetch 128" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DPERSIST=0 &
    build ps128_tr all_192_32.cu ms_persist 24640 192 "persistent tma 192x32, prefetch 128 (traced)" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DPERSIST=0 -DTRACE -DTRACE_END &
    build nolb_tr all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128, without look-back (wrong results; traced)" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DNOLB=1 -DTRACE -DTRACE_END &
    wait
    for x in pf128 ps128 pf128 ps128; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    for size in 26 27; do for x in pf128 ps128; do timeout 60 "./$x" "$size" || echo "$x failed: $?"; done; done
    for x in pf128_tr ps128_tr nolb_tr; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    exit 0 ;;
  persist)
    # Session 8, second run: the resident grid held to 9 blocks per SM (32 registers), with and
    # without claiming the next tile early (PS_EARLY), against the library's design with and
    # without the same register bound.
    build pf128 all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128" -DTMA -DTMA_DYN=1 -DTMA_PF=128 &
    build pf128m all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128, 9-block bound" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 &
    build ps9 all_192_32.cu ms_persist 24640 192 "persistent 192x32, prefetch 128, 9 blocks/SM" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 -DPERSIST=0 &
    build ps9e all_192_32.cu ms_persist 24640 192 "persistent 192x32, prefetch 128, 9 blocks/SM, early claim" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 -DPERSIST=0 -DPS_EARLY=1 &
    wait
    for d in 64 192; do
      build ps9e_pf$d all_192_32.cu ms_persist 24640 192 "persistent 192x32, prefetch $d, 9 blocks/SM, early claim" -DTMA -DTMA_DYN=1 -DTMA_PF=$d -DTMA_MINB=9 -DPERSIST=0 -DPS_EARLY=1 &
    done
    build ps9e_tr all_192_32.cu ms_persist 24640 192 "persistent 192x32, prefetch 128, 9 blocks/SM, early claim (traced)" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 -DPERSIST=0 -DPS_EARLY=1 -DTRACE -DTRACE_END &
    build ps9e_nolb all_192_32.cu ms_persist 24640 192 "persistent 192x32, prefetch 128, 9 blocks/SM, early claim, without look-back (wrong results; traced)" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 -DPERSIST=0 -DPS_EARLY=1 -DNOLB=1 -DTRACE -DTRACE_END &
    wait
    for x in pf128 pf128m ps9 ps9e ps9e_pf64 ps9e_pf192 pf128 pf128m ps9 ps9e ps9e_pf64 ps9e_pf192; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    for size in 26 27; do for x in pf128m ps9e; do timeout 60 "./$x" "$size" || echo "$x failed: $?"; done; done
    for x in ps9e_tr ps9e_nolb; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    exit 0 ;;
  pipe2)
    # Session 8, third run: two tile buffers per block in a resident grid (variants/pipe2.inc): the
    # next tile's tensor copy overlaps the current tile's look-back, without (and with) the L2
    # prefetch, at four tile sizes; against the library's design.
    build pf128m all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128, 9-block bound" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 &
    build p96 all_96_32.cu ms_pipe2 24640 96 "two buffers 96x32 (12 KiB), 9 blocks/SM" -DTMA -DPERSIST=0 -DTMA_MINB=9 &
    build p96_pf256 all_96_32.cu ms_pipe2 24640 96 "two buffers 96x32, 9 blocks/SM, prefetch 256" -DTMA -DPERSIST=0 -DTMA_MINB=9 -DTMA_PF=256 &
    build p192 all_192_32.cu ms_pipe2 49216 192 "two buffers 192x32 (24 KiB), 4 blocks/SM" -DTMA -DPERSIST=0 -DTMA_MINB=4 &
    wait
    build p192_pf128 all_192_32.cu ms_pipe2 49216 192 "two buffers 192x32, 4 blocks/SM, prefetch 128" -DTMA -DPERSIST=0 -DTMA_MINB=4 -DTMA_PF=128 &
    build p128 all_128_32.cu ms_pipe2 32832 128 "two buffers 128x32 (16 KiB), 6 blocks/SM" -DTMA -DPERSIST=0 -DTMA_MINB=6 &
    build p64 all_64_32.cu ms_pipe2 16448 64 "two buffers 64x32 (8 KiB), 13 blocks/SM" -DTMA -DPERSIST=0 -DTMA_MINB=13 &
    build p96_tr all_96_32.cu ms_pipe2 24640 96 "two buffers 96x32, 9 blocks/SM (traced)" -DTMA -DPERSIST=0 -DTMA_MINB=9 -DTRACE -DTRACE_END &
    build p96_nolb all_96_32.cu ms_pipe2 24640 96 "two buffers 96x32, 9 blocks/SM, without look-back (wrong results; traced)" -DTMA -DPERSIST=0 -DTMA_MINB=9 -DNOLB=1 -DTRACE -DTRACE_END &
    wait
    for x in pf128m p96 p96_pf256 p192 p192_pf128 p128 p64 pf128m p96 p96_pf256 p192 p192_pf128 p128 p64; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    for x in p96_tr p96_nolb; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    exit 0 ;;
  pipe3)
    # Session 8, fourth run: ms_pipe3, the two buffers in session 4's order (fold the next tile and
    # publish its aggregate before looking back for the current one).
    build pf128m all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128, 9-block bound" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 &
    build q96 all_96_32.cu ms_pipe3 24640 96 "pipe3 96x32 (2 x 12 KiB), 9 blocks/SM" -DTMA -DPERSIST=0 -DTMA_MINB=9 &
    build q96_pf256 all_96_32.cu ms_pipe3 24640 96 "pipe3 96x32, 9 blocks/SM, prefetch 256" -DTMA -DPERSIST=0 -DTMA_MINB=9 -DTMA_PF=256 &
    build q192 all_192_32.cu ms_pipe3 49216 192 "pipe3 192x32 (2 x 24 KiB), 4 blocks/SM" -DTMA -DPERSIST=0 -DTMA_MINB=4 &
    wait
    build q128 all_128_32.cu ms_pipe3 32832 128 "pipe3 128x32 (2 x 16 KiB), 6 blocks/SM" -DTMA -DPERSIST=0 -DTMA_MINB=6 &
    build q64 all_64_32.cu ms_pipe3 16448 64 "pipe3 64x32 (2 x 8 KiB), 13 blocks/SM" -DTMA -DPERSIST=0 -DTMA_MINB=13 &
    build q96_tr all_96_32.cu ms_pipe3 24640 96 "pipe3 96x32, 9 blocks/SM (traced)" -DTMA -DPERSIST=0 -DTMA_MINB=9 -DTRACE -DTRACE_END &
    build q96_nolb all_96_32.cu ms_pipe3 24640 96 "pipe3 96x32, without look-back (wrong results)" -DTMA -DPERSIST=0 -DTMA_MINB=9 -DNOLB=1 &
    wait
    for x in pf128m q96 q96_pf256 q192 q128 q64 pf128m q96 q96_pf256 q192 q128 q64 q96_tr q96_nolb; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    exit 0 ;;
  l2)
    # Session 8, fifth run: does the L2 prefetch cap the design? The library's design with and
    # without the prefetch and without the look-back, timed, then L2 and DRAM counters (Nsight
    # Compute) of one launch of each.
    build pf128m all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128, 9-block bound" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 &
    build pf0m all_192_32.cu ms_tma 24640 192 "tma 192x32, no prefetch, 9-block bound" -DTMA -DTMA_DYN=1 -DTMA_MINB=9 &
    build nolb128 all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128, without look-back (wrong results)" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 -DNOLB=1 &
    build nolb0 all_192_32.cu ms_tma 24640 192 "tma 192x32, no prefetch, without look-back (wrong results)" -DTMA -DTMA_DYN=1 -DTMA_MINB=9 -DNOLB=1 &
    wait
    for x in pf128m pf0m nolb128 nolb0 pf128m pf0m nolb128 nolb0; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    counters gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_requests.sum,lts__t_sectors.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct \
      pf128m pf0m nolb128 nolb0
    exit 0 ;;
  ws)
    # Session 8, sixth run: the warp-specialised two-buffer grid (variants/ws.inc): a look-back
    # warp beside the data warps; the next tile's copy and fold overlap the current look-back.
    build pf128m all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128, 9-block bound" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 &
    build w96 all_96_32.cu ms_ws 24640 128 "ws 96x32 + look-back warp, 2 x 12 KiB, 9 blocks/SM" -DTMA -DPERSIST=0 -DWS_MINB=9 &
    build w64 all_64_32.cu ms_ws 16448 96 "ws 64x32 + look-back warp, 2 x 8 KiB, 13 blocks/SM" -DTMA -DPERSIST=0 -DWS_MINB=13 &
    build w128 all_128_32.cu ms_ws 32832 160 "ws 128x32 + look-back warp, 2 x 16 KiB, 6 blocks/SM" -DTMA -DPERSIST=0 -DWS_MINB=6 &
    wait
    build w192 all_192_32.cu ms_ws 49216 224 "ws 192x32 + look-back warp, 2 x 24 KiB, 4 blocks/SM" -DTMA -DPERSIST=0 -DWS_MINB=4 &
    build w96_pf256 all_96_32.cu ms_ws 24640 128 "ws 96x32, 9 blocks/SM, prefetch 256" -DTMA -DPERSIST=0 -DWS_MINB=9 -DTMA_PF=256 &
    build w96_tr all_96_32.cu ms_ws 24640 128 "ws 96x32, 9 blocks/SM (traced)" -DTMA -DPERSIST=0 -DWS_MINB=9 -DTRACE -DTRACE_END &
    build w96_nolb all_96_32.cu ms_ws 24640 128 "ws 96x32, 9 blocks/SM, without look-back (wrong results)" -DTMA -DPERSIST=0 -DWS_MINB=9 -DNOLB=1 &
    wait
    for x in pf128m w96 w64 w128 w192 w96_pf256 pf128m w96 w64 w128 w192 w96_pf256 w96_tr w96_nolb; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    exit 0 ;;
  help)
    # Session 8, seventh run: look-backs that publish the inclusive prefixes of their first
    # window (variants/help.inc, -DHELP), on the library's design and on ws.inc.
    build pf128m all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128, 9-block bound" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 &
    build pf128m_h all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128, 9-block bound, helping look-back" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 -DHELP &
    build pf0m_h all_192_32.cu ms_tma 24640 192 "tma 192x32, no prefetch, 9-block bound, helping look-back" -DTMA -DTMA_DYN=1 -DTMA_MINB=9 -DHELP &
    build w96_h all_96_32.cu ms_ws 24640 128 "ws 96x32, 9 blocks/SM, helping look-back" -DTMA -DPERSIST=0 -DWS_MINB=9 -DHELP -DHELP_PUBLISH_AGG=0 &
    wait
    build w192_h all_192_32.cu ms_ws 49216 224 "ws 192x32, 4 blocks/SM, helping look-back" -DTMA -DPERSIST=0 -DWS_MINB=4 -DHELP -DHELP_PUBLISH_AGG=0 &
    build w128_h all_128_32.cu ms_ws 32832 160 "ws 128x32, 6 blocks/SM, helping look-back" -DTMA -DPERSIST=0 -DWS_MINB=6 -DHELP -DHELP_PUBLISH_AGG=0 &
    build pf128m_h_tr all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128, 9-block bound, helping look-back (traced)" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 -DHELP -DTRACE -DTRACE_END &
    build w96_h_tr all_96_32.cu ms_ws 24640 128 "ws 96x32, 9 blocks/SM, helping look-back (traced)" -DTMA -DPERSIST=0 -DWS_MINB=9 -DHELP -DHELP_PUBLISH_AGG=0 -DTRACE -DTRACE_END &
    wait
    for x in pf128m pf128m_h pf0m_h w96_h w192_h w128_h pf128m pf128m_h pf0m_h w96_h w192_h w128_h pf128m_h_tr w96_h_tr; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    exit 0 ;;
  fabric)
    # Session 8, eighth run: the L2 fabric. Persistent grids that prefetch the tile they claimed
    # early themselves (PS_SELF) against the library's design; time, then fabric counters.
    build pf128m all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128, 9-block bound" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 &
    build pf0m all_192_32.cu ms_tma 24640 192 "tma 192x32, no prefetch, 9-block bound" -DTMA -DTMA_DYN=1 -DTMA_MINB=9 &
    build ps9 all_192_32.cu ms_persist 24640 192 "persistent 192x32, prefetch 128, 9 blocks/SM" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 -DPERSIST=0 &
    build ps9self all_192_32.cu ms_persist 24640 192 "persistent 192x32, 9 blocks/SM, early claim, prefetch of its own next tile" -DTMA -DTMA_DYN=1 -DTMA_MINB=9 -DPERSIST=0 -DPS_EARLY=1 -DPS_SELF=1 &
    wait
    build ps9e0 all_192_32.cu ms_persist 24640 192 "persistent 192x32, 9 blocks/SM, early claim, no prefetch" -DTMA -DTMA_DYN=1 -DTMA_MINB=9 -DPERSIST=0 -DPS_EARLY=1 &
    build ps9self_tr all_192_32.cu ms_persist 24640 192 "persistent 192x32, 9 blocks/SM, early claim, own prefetch (traced)" -DTMA -DTMA_DYN=1 -DTMA_MINB=9 -DPERSIST=0 -DPS_EARLY=1 -DPS_SELF=1 -DTRACE -DTRACE_END &
    wait
    for x in pf128m pf0m ps9 ps9self ps9e0 pf128m pf0m ps9 ps9self ps9e0 ps9self_tr; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    counters gpu__time_duration.sum,lts__ltcfabric2ltc_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_sectors.sum,lts__t_sectors_srcunit_tex.sum,dram__bytes_read.sum \
      pf128m pf0m ps9self ps9e0
    exit 0 ;;
  store)
    # Session 8, tenth run: output by one tensor store per tile (persist.inc PS_STORE, waited on
    # only when the buffer is reused; tma.inc TMA_STORE, waited on before the block exits).
    build pf128m all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128, 9-block bound" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 &
    build pf128m_st all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128, 9-block bound, tensor store" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 -DTMA_STORE=1 &
    build ps9 all_192_32.cu ms_persist 24640 192 "persistent 192x32, prefetch 128, 9 blocks/SM" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 -DPERSIST=0 &
    build ps9st all_192_32.cu ms_persist 24640 192 "persistent 192x32, prefetch 128, 9 blocks/SM, tensor store" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 -DPERSIST=0 -DPS_STORE=1 &
    wait
    for x in pf128m pf128m_st ps9 ps9st pf128m pf128m_st ps9 ps9st; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    counters gpu__time_duration.sum,lts__ltcfabric2ltc_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_sectors.sum \
      ps9 ps9st
    exit 0 ;;
  grow)
    # Session 9: look-back windows that grow (32 predecessors, then 64, 128, ... up to 32 x the
    # shape's look-back; the template of commit 68e44d5, taken out again after this run) against
    # the fixed window of 32, in the library's design, and the
    # library's first-wave prefetch rule (TMA_FW); timed, then traced (windows per tile, fill
    # and drain).
    flags="-DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9"
    build pf128m all_192_32.cu ms_tma 24640 192 "tma 192x32x1, prefetch 128, 9-block bound" $flags &
    build fw all_192_32.cu ms_tma 24640 192 "tma 192x32x1, prefetch 128 past the first wave of 1188" $flags -DTMA_FW=1188 &
    build g2 all_192_32_2.cu ms_tma 24640 192 "tma 192x32x2 (windows 32, 64), prefetch 128" $flags &
    build g4 all_192_32_4.cu ms_tma 24640 192 "tma 192x32x4 (windows 32, 64, 128), prefetch 128" $flags &
    wait
    build pf128m_tr all_192_32.cu ms_tma 24640 192 "pf128m (traced)" $flags -DTRACE -DTRACE_END &
    build fw_tr all_192_32.cu ms_tma 24640 192 "fw (traced)" $flags -DTMA_FW=1188 -DTRACE -DTRACE_END &
    build g2_tr all_192_32_2.cu ms_tma 24640 192 "g2 (traced)" $flags -DTRACE -DTRACE_END &
    build g4_tr all_192_32_4.cu ms_tma 24640 192 "g4 (traced)" $flags -DTRACE -DTRACE_END &
    wait
    for x in pf128m fw g2 g4 pf128m fw g2 g4; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    for x in pf128m_tr fw_tr g2_tr g4_tr; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    exit 0 ;;
  fill)
    # Session 9, second run: the first wave's blocks ask L2 for second-wave tiles once their own
    # copy has landed (TMA_FILL tiles ahead), while the first wave looks back, instead of at
    # their claim; against the library's design (the first-wave rule, TMA_FW) and the old rule.
    flags="-DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 -DTMA_FW=1188"
    build pf128m all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128, old rule" -DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 &
    build fw all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128 past the first wave of 1188" $flags &
    build late128 all_192_32.cu ms_tma 24640 192 "first wave prefetches tile + 128 once loaded" $flags -DTMA_FILL=128 &
    build late512 all_192_32.cu ms_tma 24640 192 "first wave prefetches tile + 512 once loaded" $flags -DTMA_FILL=512 &
    wait
    build late1188 all_192_32.cu ms_tma 24640 192 "first wave prefetches tile + 1188 once loaded" $flags -DTMA_FILL=1188 &
    build fw_tr all_192_32.cu ms_tma 24640 192 "fw (traced)" $flags -DTRACE -DTRACE_END &
    build late512_tr all_192_32.cu ms_tma 24640 192 "late512 (traced)" $flags -DTMA_FILL=512 -DTRACE -DTRACE_END &
    build late1188_tr all_192_32.cu ms_tma 24640 192 "late1188 (traced)" $flags -DTMA_FILL=1188 -DTRACE -DTRACE_END &
    wait
    for x in pf128m fw late128 late512 late1188 pf128m fw late128 late512 late1188 fw late512 late1188; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    for x in fw_tr late512_tr late1188_tr; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    exit 0 ;;
  grow1)
    # Session 9, fourth run: windows that grow only for the first wave's tiles (GROW_BELOW=1188),
    # whose look-backs at the launch's start walk back over up to 37 windows; later tiles keep
    # windows of 32. The sources trace_fg2.cu / trace_fg4.cu come from gen.py of commit 68e44d5
    # (shapes 192x32x2, 192x32x4), with the doubling line made conditional on tile < GROW_BELOW.
    flags="-DTMA -DTMA_DYN=1 -DTMA_PF=128 -DTMA_MINB=9 -DTMA_FW=1188"
    build fw all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128 past the first wave of 1188" $flags &
    build fg2 all_fg2.cu ms_tma 24640 192 "fw, windows growing to 2 per lane for the first wave" $flags -DGROW_BELOW=1188 &
    build fg4 all_fg4.cu ms_tma 24640 192 "fw, windows growing to 4 per lane for the first wave" $flags -DGROW_BELOW=1188 &
    wait
    build fw_tr all_192_32.cu ms_tma 24640 192 "fw (traced)" $flags -DTRACE -DTRACE_END &
    build fg2_tr all_fg2.cu ms_tma 24640 192 "fg2 (traced)" $flags -DGROW_BELOW=1188 -DTRACE -DTRACE_END &
    build fg4_tr all_fg4.cu ms_tma 24640 192 "fg4 (traced)" $flags -DGROW_BELOW=1188 -DTRACE -DTRACE_END &
    wait
    for x in fw fg2 fg4 fw fg2 fg4 fw fg2 fg4; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    for x in fw_tr fg2_tr fg4_tr fw_tr fg2_tr fg4_tr; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    exit 0 ;;
  cluster)
    # Session 10: a thread-block cluster of 2 or 4 blocks scans 2 or 4 consecutive tiles with one
    # look-back (variants/cluster.inc): fewer polls and publications cross the L2 fabric and a
    # window covers 64 or 128 tiles; beside it the library's design, and single blocks with
    # tiles of 288 threads (36 KiB, 6 blocks/SM, two tensor copies) and 576 threads (72 KiB,
    # 3 blocks/SM, three copies), each prefetching 3 MiB ahead past its own first wave.
    flags="-DTMA -DTMA_DYN=1 -DTMA_MINB=9 -DTMA_PF=128 -DTMA_FW=1188"
    build fw all_192_32.cu ms_tma 24640 192 "tma 192x32, prefetch 128 past the first wave (the library's design)" $flags &
    build cl2 all_192_32.cu ms_cl 24704 192 "cluster of 2 x 192x32, one look-back per pair" $flags -DCLUSTER=2 &
    build cl4 all_192_32.cu ms_cl 24704 192 "cluster of 4 x 192x32, one look-back per four" $flags -DCLUSTER=4 &
    wait
    build cl4nolb all_192_32.cu ms_cl 24704 192 "cluster of 4, no look-back (wrong results)" $flags -DCLUSTER=4 -DNOLB=1 &
    build t288 all_288_32.cu ms_tma 36928 288 "tma 288x32 (two copies), prefetch 85 past 792" -DTMA -DTMA_DYN=1 -DTMA_MINB=6 -DTMA_PF=85 -DTMA_FW=792 -DTMA_BOXES=2 &
    build t576 all_576_32.cu ms_tma 73856 576 "tma 576x32 (three copies), prefetch 43 past 396" -DTMA -DTMA_DYN=1 -DTMA_MINB=3 -DTMA_PF=43 -DTMA_FW=396 -DTMA_BOXES=3 &
    wait
    for x in fw cl2 cl4 t288 t576 fw cl2 cl4 t288 t576 cl4nolb; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    for x in fw cl4; do timeout 60 "./$x" 26 || echo "$x failed: $?"; timeout 60 "./$x" 27 || echo "$x failed: $?"; done
    exit 0 ;;
  big)
    # Session 10: the library's new tiles (352x32, two tensor copies, 5 blocks/SM, prefetch 69
    # tiles past the first wave of 660): with the output stored by tensor copies (TMA_STORE),
    # as a resident grid looping over tiles (persist.inc), and traced (fill, drain, slots).
    flags="-DTMA -DTMA_DYN=1 -DTMA_MINB=5 -DTMA_PF=69 -DTMA_FW=660 -DTMA_BOXES=2"
    build b352 all_352_32.cu ms_tma 45120 352 "tma 352x32 (the library's design)" $flags &
    build b352st all_352_32.cu ms_tma 45120 352 "tma 352x32, tensor stores" $flags -DTMA_STORE=1 &
    build b352nolb all_352_32.cu ms_tma 45120 352 "tma 352x32 without the look-back (wrong results)" $flags -DNOLB=1 &
    build b352_tr all_352_32.cu ms_tma 45120 352 "b352 (traced)" $flags -DTRACE -DTRACE_END &
    wait
    for x in b352 b352st b352 b352st b352 b352st b352nolb; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    for x in b352_tr b352_tr; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    exit 0 ;;
  pace)
    # Session 11: the library's pacing of the first wave (13,376 ps per 44 KiB tile, 3,369 GB/s,
    # over the 660 first-wave tiles) against none, timed and traced (fill, drain, slots).
    flags="-DTMA -DTMA_DYN=1 -DTMA_MINB=5 -DTMA_PF=69 -DTMA_FW=660 -DTMA_BOXES=2"
    pace="-DTMA_PACE_PS=13376 -DTMA_PACED=660"
    build b352 all_352_32.cu ms_tma 45120 352 "tma 352x32 (the library's design before session 11)" $flags &
    build p352 all_352_32.cu ms_tma 45120 352 "tma 352x32, first wave paced (the library's design)" $flags $pace &
    build b352_tr all_352_32.cu ms_tma 45120 352 "b352 (traced)" $flags -DTRACE -DTRACE_END &
    build p352_tr all_352_32.cu ms_tma 45120 352 "p352 (traced)" $flags $pace -DTRACE -DTRACE_END &
    wait
    for x in b352 p352 b352 p352 b352 p352; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    for x in b352_tr p352_tr b352_tr p352_tr; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    exit 0 ;;
  pfkind)
    # Session 11: which prefetch instruction loads the L2 fabric least (variants/tma.inc
    # TMA_PF_KIND): bulk (the library's), per-thread lines, per-thread lines with evict_last, tensor
    # boxes, and none; timed, then L2 fabric counters.
    flags="-DTMA -DTMA_DYN=1 -DTMA_MINB=5 -DTMA_PF=69 -DTMA_FW=660 -DTMA_BOXES=2"
    build k0 all_352_32.cu ms_tma 45120 352 "352x32, bulk prefetch (the library's)" $flags &
    build k1 all_352_32.cu ms_tma 45120 352 "352x32, prefetch.global.L2 per thread" $flags -DTMA_PF_KIND=1 &
    build k2 all_352_32.cu ms_tma 45120 352 "352x32, prefetch.global.L2::evict_last per thread" $flags -DTMA_PF_KIND=2 &
    build k3 all_352_32.cu ms_tma 45120 352 "352x32, tensor prefetch per box" $flags -DTMA_PF_KIND=3 &
    wait
    build knone all_352_32.cu ms_tma 45120 352 "352x32, no prefetch" -DTMA -DTMA_DYN=1 -DTMA_MINB=5 -DTMA_FW=660 -DTMA_BOXES=2 &
    wait
    for x in k0 k1 k2 k3 knone k0 k1 k2 k3 knone; do timeout 60 "./$x" "$lg" || echo "$x failed: $?"; done
    counters gpu__time_duration.sum,lts__ltcfabric2ltc_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_sectors.sum,lts__t_requests.sum,dram__bytes_read.sum \
      k0 k1 k2 k3 knone
    exit 0 ;;
  ncu)
    # Session 4: did rescan's second copy miss L2?
    build staged all_128_32.cu "$K" 16384 128 "staged 128x32" &
    build rs2h5 all_128_32.cu ms_rescan2 32768 128 "rescan2 + L2 hints, 5 blocks/SM" -DPERSIST=0 -DRS_HINT=1 -DRS_MINB=5 &
    build sp2_64 all_64_32.cu ms_split 16384 96 "split 64x32, 2 stages" -DPERSIST=0 -DSP_STAGES=2 -DSP_MINB=13 &
    wait
    dram_bytes staged rs2h5 sp2_64
    exit 0 ;;
  *) echo "usage: run.sh gen | run.sh [traces|rescan|pipeline|tma|prefetch2|ahead|lb|stride|fixed|persist|pipe2|pipe3|l2|ws|help|fabric|store|grow|fill|grow1|cluster|big|ncu] [log2 n]"; exit 2 ;;
esac
wait
# 16-byte elements run at a quarter of the count (the same bytes).
for x in $runs; do size=$lg; [[ $x == mm_* ]] && size=$((lg - 2)); timeout 60 "./$x" "$size" || echo "$x failed: $?"; done
