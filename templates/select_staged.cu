{% include "lib/tile.cuh" %}
{% include "lib/lookback.cuh" %}
{% include "lib/staging.cuh" %}
{% if tma %}{% include "lib/tma.cuh" %}
{% endif %}// ---- Stream compaction (select): the single-pass scan of keep counts, fused with the scatter ----
// Each tile loads its elements once (warp-striped, transposed through shared memory), counts
// those the map keeps (any nonzero value), scans the counts across the block and learns from
// the look-back (over u32 counts, this module's operator) how many earlier tiles kept. Each
// warp then gathers its kept elements, in order, in shared memory and writes them as one
// contiguous run. Each element is read once and each kept element written once. No path
// returns early: every tile publishes.
static_assert(sizeof(ms_elem) == 4, "monoscan: select counts in 32 bits");
static_assert(MS_ITEMS <= 32, "monoscan: select keeps one bit per item");
// The staged form (sm_80 and newer, 16-byte aligned input): the tile is copied into shared
// memory by cp.async, unswizzled, so no thread holds elements in registers while the block
// looks back. Each warp owns MS_ITEMS rounds of 32 consecutive elements of the tile; a round's
// keep flags are one ballot, which lane k keeps for round k. After the look-back each warp
// replays its rounds: the kept elements of a round go out as one contiguous run.
{% if tma %}// The TMA form (sm_90 and newer) copies a full tile with one bulk copy (the buffer is not
// swizzled, so no tensor map is needed), completed on an mbarrier, and prefetches into L2 the
// tile `prefetch` claims ahead, as the staged scan does.
{% endif %}extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_select_staged(const MsMap::in_t* in, MsMap::in_t* out, ms_u64 n, ms_u32 num_tiles,
                           ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter,
                           ms_u32 epoch, ms_elem* total_out{% if tma %}, ms_prefetch prefetch{% endif %}) {
    typedef MsMap::in_t in_t;
    extern __shared__ ms_chunk_bits ms_select_buffer[];
    __shared__ ms_staged_smem sm;
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
{% if tma %}    __shared__ alignas(8) ms_u64 bar;
    const ms_u32 b = ms_shared_addr(&bar);
    if (threadIdx.x == 0) {
        sm.tile = ms_take_tile(counter, num_tiles);
        ms_bar_init(b);
        ms_pace(counter, epoch, sm.tile, prefetch);
    }
    __syncthreads();
    const ms_u32 tile = sm.tile;
    const bool whole = ms_valid((ms_u64)tile * MS_TILE, n) == (ms_u64)MS_TILE;
    if (whole && threadIdx.x == 0) {
        ms_bar_expect(b, (ms_u32)(MS_TILE * sizeof(in_t)));
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     ::"r"(ms_shared_addr(ms_select_buffer)), "l"(in + (ms_u64)tile * MS_TILE),
                       "r"((ms_u32)(MS_TILE * sizeof(in_t))), "r"(b) : "memory");
    }
    ms_prefetch_rows(in, n, tile, prefetch);
    if (whole) {
        ms_bar_wait(b);
    } else {
        ms_stage_tile<in_t, false>(in, n, tile, ms_select_buffer);
    }
{% else %}    const ms_u32 tile = ms_claim_tile(counter, num_tiles, sm);
    ms_stage_tile<in_t, false>(in, n, tile, ms_select_buffer);
{% endif %}    const ms_u64 base = (ms_u64)tile * MS_TILE;
    const ms_i64 wvalid = (ms_i64)ms_valid(base, n) - (ms_i64)warp * MS_WARP_TILE;
    const in_t* wbuf = (const in_t*)ms_select_buffer + warp * MS_WARP_TILE;
    ms_u32 mine = 0, count = 0;  // lane k: the ballot of round k; the warp's kept count
#pragma unroll
    for (int k = 0; k < MS_ITEMS; ++k) {
        const ms_i64 e = k * 32 + lane;
        const bool keep = e < wvalid && MsMap::apply(wbuf[e]) != 0;
        const ms_u32 ballot = __ballot_sync(MS_FULL, keep);
        if (lane == (unsigned)k) mine = ballot;
        count += __popc(ballot);
    }
    if (lane == 0) sm.warp_sums[warp] = count;
    __syncthreads();
    ms_elem before = 0, aggregate = 0;  // kept by earlier warps of this tile; by the whole tile
#pragma unroll
    for (int w = 0; w < MS_WARPS; ++w) {
        const ms_elem c = sm.warp_sums[w];
        if (w < (int)warp) before += c;
        aggregate += c;
    }
    if (threadIdx.x < 32) {
        const ms_elem prefix = ms_lookback(tile, aggregate, num_tiles, state, aggs, incls, epoch,
                                           MsOp::identity(), 0, total_out);
        if (threadIdx.x == 0) sm.prefix = prefix;
    }
    __syncthreads();
    in_t* dst = out + (ms_u64)sm.prefix + before;
    const ms_u32 lower = (1u << lane) - 1u;  // lanes below this one
#pragma unroll
    for (int k = 0; k < MS_ITEMS; ++k) {
        const ms_u32 ballot = __shfl_sync(MS_FULL, mine, k);
        if ((ballot >> lane) & 1u) dst[__popc(ballot & lower)] = wbuf[k * 32 + lane];
        dst += __popc(ballot);
    }
}
