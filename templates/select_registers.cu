{% include "lib/tile.cuh" %}
{% include "lib/lookback.cuh" %}
// ---- Stream compaction (select): the single-pass scan of keep counts, fused with the scatter ----
// Each tile loads its elements once (warp-striped, transposed through shared memory), counts
// those the map keeps (any nonzero value), scans the counts across the block and learns from
// the look-back (over u32 counts, this module's operator) how many earlier tiles kept. Each
// warp then gathers its kept elements, in order, in shared memory and writes them as one
// contiguous run. Each element is read once and each kept element written once. No path
// returns early: every tile publishes.
static_assert(sizeof(ms_elem) == 4, "monoscan: select counts in 32 bits");
static_assert(MS_ITEMS <= 32, "monoscan: select keeps one bit per item");
// The register form (`select_registers`): any element size, any alignment. Each warp loads its
// share of the tile warp-striped into shared memory and each thread takes MS_ITEMS
// consecutive elements into registers, which it holds while the block looks back.
struct ms_select_smem {
    MsMap::in_t buf[MS_WARPS][MS_WARP_BUF];
    ms_elem warp_sums[MS_WARPS];
    ms_elem prefix;
    ms_u32 tile;
};
extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_select_registers(const MsMap::in_t* in, MsMap::in_t* out, ms_u64 n, ms_u32 num_tiles,
                           ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter,
                           ms_u32 epoch, ms_elem* total_out) {
    typedef MsMap::in_t in_t;
    __shared__ ms_select_smem sm;
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const ms_u32 tile = ms_claim_tile(counter, num_tiles, sm);
    const ms_u64 base = (ms_u64)tile * MS_TILE;
    const ms_u64 valid = ms_valid(base, n);
    in_t* wbuf = sm.buf[warp];
    const ms_u64 wbase = base + (ms_u64)warp * MS_WARP_TILE;
    const ms_i64 wvalid = (ms_i64)valid - (ms_i64)warp * MS_WARP_TILE;
#pragma unroll
    for (int j = 0; j < MS_ITEMS; ++j) {
        const ms_i64 e = j * 32 + lane;
        if (e < wvalid) wbuf[MS_PAD(e)] = in[wbase + e];
    }
    __syncwarp();
    // This thread's MS_ITEMS consecutive elements; bit j of `keep`: item j is kept (items past
    // the end are read from unwritten shared memory and never kept).
    in_t raw[MS_ITEMS];
    ms_u32 keep = 0, count = 0;
#pragma unroll
    for (int j = 0; j < MS_ITEMS; ++j) {
        raw[j] = wbuf[MS_PAD(lane * MS_ITEMS + j)];
        if ((ms_i64)(lane * MS_ITEMS + j) < wvalid && MsMap::apply(raw[j]) != 0) {
            keep |= 1u << j;
            ++count;
        }
    }
    __syncwarp();
    ms_elem aggregate;
    const ms_elem excl = ms_block_exclusive(count, aggregate, sm);
    if (threadIdx.x < 32) {
        const ms_elem prefix = ms_lookback(tile, aggregate, num_tiles, state, aggs, incls, epoch,
                                           MsOp::identity(), 0, total_out);
        if (threadIdx.x == 0) sm.prefix = prefix;
    }
    __syncthreads();
    // Gather this warp's kept elements in order, then write them as one coalesced run.
    const ms_u32 warp_first = __shfl_sync(MS_FULL, excl, 0);
    const ms_u32 warp_count = __shfl_sync(MS_FULL, excl + count, 31) - warp_first;
    ms_u32 local = excl - warp_first;
#pragma unroll
    for (int j = 0; j < MS_ITEMS; ++j) {
        if (keep & (1u << j)) {
            wbuf[MS_PAD(local)] = raw[j];  // MS_PAD names its argument twice: no side effects
            ++local;
        }
    }
    __syncwarp();
    in_t* dst = out + (ms_u64)sm.prefix + warp_first;
    for (ms_u32 e = lane; e < warp_count; e += 32) dst[e] = wbuf[MS_PAD(e)];
}
