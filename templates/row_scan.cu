{% include "lib/tile.cuh" %}
{% include "lib/lookback.cuh" %}
// ---- Row scans (`row_scan`): independent scans of the contiguous rows of MS_ROW-element rows,
// as one single-pass scan of the whole buffer under the segmented lifting of the operator,
// with the segment heads computed from each element's position (no flag array in memory).
// The module's operator is that lifting (elements {value, flag}); rows hold its values. In
// the reverse form (MS_REVERSE 1) logical position g is element n - 1 - g and the operator is
// the lifting of the opposite monoid, so prefixes run from the end of each row in sequence
// order. Per-row initial values and totals are applied and written as each element is stored.
#define MS_REVERSE {{ reverse }}
typedef decltype(((ms_elem*)0)->value) ms_val;
// Rows without an input map read their values as they are.
struct MsRowNoMap {
    typedef ms_val in_t;
    static __device__ __forceinline__ ms_val apply(const ms_val& x) { return x; }
};
struct ms_row_smem {
    ms_val buf[MS_WARPS][MS_WARP_BUF];
    ms_elem warp_sums[MS_WARPS];
    ms_elem prefix;
    ms_u32 tile;
};
// The element at logical position g of n.
__device__ __forceinline__ ms_u64 ms_row_at(ms_u64 g, ms_u64 n) { return MS_REVERSE ? n - 1 - g : g; }
// a ⊕ b on row values (the lifting's combine on two elements of one segment).
__device__ __forceinline__ ms_val ms_row_combine(const ms_val& a, const ms_val& b) {
    ms_elem x = MsOp::identity(), y = MsOp::identity();
    x.value = a;
    y.value = b;
    return MsOp::combine(x, y).value;
}
template <typename Map>
__device__ __forceinline__ void ms_row_scan(const typename Map::in_t* in, ms_val* out, ms_u64 n, ms_u64 row,
                                            ms_u32 num_tiles, ms_state* state, ms_elem* aggs, ms_elem* incls,
                                            ms_u32* counter, ms_u32 epoch, int exclusive, const ms_val* inits,
                                            ms_val init, int has_init, ms_val* totals, ms_row_smem& sm) {
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const ms_u32 tile = ms_claim_tile(counter, num_tiles, sm);
    const ms_u64 base = (ms_u64)tile * MS_TILE;
    const ms_u64 valid = ms_valid(base, n);
    // Load warp-striped (coalesced), transpose through shared memory to blocked order.
    ms_val* wbuf = sm.buf[warp];
    const ms_u64 wbase = base + (ms_u64)warp * MS_WARP_TILE;
    const ms_i64 wvalid = (ms_i64)valid - (ms_i64)warp * MS_WARP_TILE;
#pragma unroll
    for (int j = 0; j < MS_ITEMS; ++j) {
        const ms_i64 e = j * 32 + lane;
        if (e < wvalid) wbuf[MS_PAD(e)] = Map::apply(in[ms_row_at(wbase + e, n)]);
    }
    __syncwarp();
    // This thread's items: position first + j of the buffer, element pos + j of its row.
    const ms_u64 first = base + (ms_u64)threadIdx.x * MS_ITEMS;
    const ms_u64 pos0 = first % row;
    ms_elem items[MS_ITEMS];
    {
        ms_u64 pos = pos0;
#pragma unroll
        for (int j = 0; j < MS_ITEMS; ++j) {
            items[j] = MsOp::identity();
            if (first + j < n) {
                items[j].value = wbuf[MS_PAD(lane * MS_ITEMS + j)];
                items[j].flag = pos == 0 ? 1u : 0u;
            }
            pos = pos + 1 == row ? 0 : pos + 1;
        }
    }
    __syncwarp();
    ms_elem aggregate;
    const ms_elem excl = ms_block_exclusive(ms_thread_fold(items), aggregate, sm);
    if (threadIdx.x < 32) {
        // A tile whose first (logical) position starts a row needs no prefix.
        const ms_elem prefix = ms_lookback(tile, aggregate, num_tiles, state, aggs, incls, epoch,
                                           MsOp::identity(), 0, (ms_elem*)0, base % row == 0);
        if (threadIdx.x == 0) sm.prefix = prefix;
    }
    __syncthreads();
    ms_elem run = tile > 0 ? MsOp::combine(sm.prefix, excl) : excl;
    const ms_val id = MsOp::identity().value;
    const ms_u64 rows = n / row;
    {
        ms_u64 pos = pos0;
        ms_u64 r = first / row;  // the logical row of the thread's first item
#pragma unroll
        for (int j = 0; j < MS_ITEMS; ++j) {
            const ms_elem before = run;
            run = MsOp::combine(run, items[j]);
            // The row in memory order (per-row values are indexed so).
            const ms_u64 rr = MS_REVERSE ? rows - 1 - r : r;
            const ms_val seed = inits != 0 ? inits[first + j < n ? rr : 0] : init;
            const bool seeded = inits != 0 || has_init;
            ms_val v;
            if (exclusive) {
                const ms_val prev = items[j].flag ? id : before.value;
                v = seeded ? ms_row_combine(seed, prev) : prev;
            } else {
                v = seeded ? ms_row_combine(seed, run.value) : run.value;
            }
            wbuf[MS_PAD(lane * MS_ITEMS + j)] = v;
            if (totals != 0 && first + j < n && pos + 1 == row) {
                totals[rr] = seeded ? ms_row_combine(seed, run.value) : run.value;
            }
            if (pos + 1 == row) {
                pos = 0;
                ++r;
            } else {
                ++pos;
            }
        }
    }
    __syncwarp();
#pragma unroll
    for (int j = 0; j < MS_ITEMS; ++j) {
        const ms_i64 e = j * 32 + lane;
        if (e < wvalid) out[ms_row_at(wbase + e, n)] = wbuf[MS_PAD(e)];
    }
}
extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_row_scan(const ms_val* in, ms_val* out, ms_u64 n, ms_u64 row, ms_u32 num_tiles,
                      ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter, ms_u32 epoch,
                      int exclusive, const ms_val* inits, ms_val init, int has_init, ms_val* totals) {
    __shared__ ms_row_smem sm;
    ms_row_scan<MsRowNoMap>(in, out, n, row, num_tiles, state, aggs, incls, counter, epoch, exclusive,
                            inits, init, has_init, totals, sm);
}
{% if map %}extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_row_scan_mapped(const MsMap::in_t* in, ms_val* out, ms_u64 n, ms_u64 row, ms_u32 num_tiles,
                             ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter, ms_u32 epoch,
                             int exclusive, const ms_val* inits, ms_val init, int has_init, ms_val* totals) {
    __shared__ ms_row_smem sm;
    ms_row_scan<MsMap>(in, out, n, row, num_tiles, state, aggs, incls, counter, epoch, exclusive,
                       inits, init, has_init, totals, sm);
}
{% endif %}
