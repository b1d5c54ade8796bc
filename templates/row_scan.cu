{% include "lib/tile.cuh" %}
{% include "lib/lookback.cuh" %}
// ---- Row scans: independent scans of contiguous rows, as one single-pass scan of the whole
// buffer under the segmented lifting of the operator, with the segment heads computed from each
// element's position (no flag array in memory): rows of one length (`row_scan`), or rows of any
// length given by CSR offsets (`segment_scan`, MS_SEGMENTS 1), each position's row found by a
// binary search of the offsets. The module's operator is that lifting (elements {value, flag});
// rows hold its values. In the reverse form (MS_REVERSE 1) logical position g is element
// n - 1 - g and the operator is the lifting of the opposite monoid, so prefixes run from the end
// of each row in sequence order. Per-row initial values and totals are applied and written as
// each element is stored; a row of no elements gets its initial value (or the identity) as its
// total. Without an output (`out` null: a fold of each row) only the totals are written.
#define MS_REVERSE {{ reverse }}
#define MS_SEGMENTS {{ segments }}
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
// Where rows start, walked by a cursor over logical positions: `at(g)` puts it on position g,
// `head()` and `last()` say whether its row starts or ends there, `step(empty)` moves it to the
// next position, calling `empty(q)` for each row of no elements it passes, and `row()` is the
// logical row of its position (row q of `rows()` is row rows() - 1 - q in memory in reverse).
// `before(empty)`, on position 0, calls `empty(q)` for the rows of no elements before it.
#if MS_SEGMENTS
{% include "lib/offsets.cuh" %}
// Rows of any length: logical row q spans [off(q), off(q + 1)).
struct MsRows {
    ms_offsets o;
    ms_u64 g, r, start, end;
    __device__ __forceinline__ ms_u64 rows() const { return o.count; }
    __device__ __forceinline__ void at(ms_u64 at) {
        g = at;
        r = o.find(at, 0, o.count - 1);
        start = o.off(r);
        end = o.off(r + 1);
    }
    __device__ __forceinline__ bool head() const { return g == start; }
    __device__ __forceinline__ bool last() const { return g + 1 == end; }
    __device__ __forceinline__ ms_u64 row() const { return r; }
    template <typename F>
    __device__ __forceinline__ void step(F&& empty) {
        if (g + 1 == end) {
            start = end;
            while (++r < o.count && (end = o.off(r + 1)) == start) empty(r);
        }
        ++g;
    }
    template <typename F>
    __device__ __forceinline__ void before(F&& empty) const {
        for (ms_u64 q = 0; q < r; ++q) empty(q);
    }
    __device__ __forceinline__ bool starts_row(ms_u64 at) const { return o.off(o.find(at, 0, o.count - 1)) == at; }
};
#else
// Rows of `len` elements each.
struct MsRows {
    ms_u64 n, len;
    ms_u64 pos, r;
    __device__ __forceinline__ ms_u64 rows() const { return n / len; }
    __device__ __forceinline__ void at(ms_u64 at) {
        r = at / len;
        pos = at % len;
    }
    __device__ __forceinline__ bool head() const { return pos == 0; }
    __device__ __forceinline__ bool last() const { return pos + 1 == len; }
    __device__ __forceinline__ ms_u64 row() const { return r; }
    template <typename F>
    __device__ __forceinline__ void step(F&&) {
        if (pos + 1 == len) {
            pos = 0;
            ++r;
        } else {
            ++pos;
        }
    }
    template <typename F>
    __device__ __forceinline__ void before(F&&) const {}
    __device__ __forceinline__ bool starts_row(ms_u64 at) const { return at % len == 0; }
};
#endif
struct MsNoRows {
    __device__ __forceinline__ void operator()(ms_u64) const {}
};
template <typename Map>
__device__ __forceinline__ void ms_row_scan(const typename Map::in_t* in, ms_val* out, ms_u64 n, MsRows rows_at,
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
    // This thread's items: position first + j of the buffer, in the row `cursor` walks.
    const ms_u64 first = base + (ms_u64)threadIdx.x * MS_ITEMS;
    MsRows from = rows_at;
    from.at(first);
    ms_elem items[MS_ITEMS];
    {
        MsRows cursor = from;
#pragma unroll
        for (int j = 0; j < MS_ITEMS; ++j) {
            items[j] = MsOp::identity();
            if (first + j < n) {
                items[j].value = wbuf[MS_PAD(lane * MS_ITEMS + j)];
                items[j].flag = cursor.head() ? 1u : 0u;
            }
            cursor.step(MsNoRows());
        }
    }
    __syncwarp();
    ms_elem aggregate;
    const ms_elem excl = ms_block_exclusive(ms_thread_fold(items), aggregate, sm);
    if (threadIdx.x < 32) {
        // A tile whose first (logical) position starts a row needs no prefix.
        const ms_elem prefix = ms_lookback(tile, aggregate, num_tiles, state, aggs, incls, epoch,
                                           MsOp::identity(), 0, (ms_elem*)0, rows_at.starts_row(base));
        if (threadIdx.x == 0) sm.prefix = prefix;
    }
    __syncthreads();
    ms_elem run = tile > 0 ? MsOp::combine(sm.prefix, excl) : excl;
    const ms_val id = MsOp::identity().value;
    const ms_u64 rows = rows_at.rows();
    const bool seeded = inits != 0 || has_init;
    // The total of a row of no elements (logical row q): its initial value, or the identity.
    const auto empty = [&](ms_u64 q) {
        if (totals != 0) {
            const ms_u64 rq = MS_REVERSE ? rows - 1 - q : q;
            totals[rq] = inits != 0 ? inits[rq] : (has_init ? init : id);
        }
    };
    if (first == 0) from.before(empty);
    {
        MsRows cursor = from;
#pragma unroll
        for (int j = 0; j < MS_ITEMS; ++j) {
            const ms_elem before = run;
            run = MsOp::combine(run, items[j]);
            // The row in memory order (per-row values are indexed so).
            const ms_u64 r = cursor.row();
            const ms_u64 rr = MS_REVERSE ? rows - 1 - r : r;
            // (r < rows for every valid position where the offsets are well formed; the guard
            // keeps any offsets from reading past the initial values.)
            const ms_val seed = inits != 0 ? inits[first + j < n && r < rows ? rr : 0] : init;
            ms_val v;
            if (exclusive) {
                const ms_val prev = items[j].flag ? id : before.value;
                v = seeded ? ms_row_combine(seed, prev) : prev;
            } else {
                v = seeded ? ms_row_combine(seed, run.value) : run.value;
            }
            wbuf[MS_PAD(lane * MS_ITEMS + j)] = v;
            if (first + j < n) {
                if (totals != 0 && cursor.last()) {
                    totals[rr] = seeded ? ms_row_combine(seed, run.value) : run.value;
                }
                cursor.step(empty);
            }
        }
    }
    __syncwarp();
    // Without an output (a fold of each row) the totals are all there is to write.
    if (out == 0) return;
#pragma unroll
    for (int j = 0; j < MS_ITEMS; ++j) {
        const ms_i64 e = j * 32 + lane;
        if (e < wvalid) out[ms_row_at(wbase + e, n)] = wbuf[MS_PAD(e)];
    }
}
{% if segments %}// Rows given by `rows` + 1 offsets (in memory order, from 0 to n).
extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_segment_scan(const ms_val* in, ms_val* out, ms_u64 n, const ms_u64* offsets, ms_u64 rows,
                          ms_u32 num_tiles, ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter,
                          ms_u32 epoch, int exclusive, const ms_val* inits, ms_val init, int has_init,
                          ms_val* totals) {
    __shared__ ms_row_smem sm;
    MsRows at = { {n, rows, offsets} };
    ms_row_scan<MsRowNoMap>(in, out, n, at, num_tiles, state, aggs, incls, counter, epoch, exclusive, inits,
                            init, has_init, totals, sm);
}
{% if map %}extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_segment_scan_mapped(const MsMap::in_t* in, ms_val* out, ms_u64 n, const ms_u64* offsets,
                                 ms_u64 rows, ms_u32 num_tiles, ms_state* state, ms_elem* aggs, ms_elem* incls,
                                 ms_u32* counter, ms_u32 epoch, int exclusive, const ms_val* inits, ms_val init,
                                 int has_init, ms_val* totals) {
    __shared__ ms_row_smem sm;
    MsRows at = { {n, rows, offsets} };
    ms_row_scan<MsMap>(in, out, n, at, num_tiles, state, aggs, incls, counter, epoch, exclusive, inits, init,
                       has_init, totals, sm);
}
{% endif %}{% else %}// Rows of `row` elements each.
extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_row_scan(const ms_val* in, ms_val* out, ms_u64 n, ms_u64 row, ms_u32 num_tiles,
                      ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter, ms_u32 epoch,
                      int exclusive, const ms_val* inits, ms_val init, int has_init, ms_val* totals) {
    __shared__ ms_row_smem sm;
    MsRows at = {n, row};
    ms_row_scan<MsRowNoMap>(in, out, n, at, num_tiles, state, aggs, incls, counter, epoch, exclusive,
                            inits, init, has_init, totals, sm);
}
{% if map %}extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_row_scan_mapped(const MsMap::in_t* in, ms_val* out, ms_u64 n, ms_u64 row, ms_u32 num_tiles,
                             ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter, ms_u32 epoch,
                             int exclusive, const ms_val* inits, ms_val init, int has_init, ms_val* totals) {
    __shared__ ms_row_smem sm;
    MsRows at = {n, row};
    ms_row_scan<MsMap>(in, out, n, at, num_tiles, state, aggs, incls, counter, epoch, exclusive, inits, init,
                       has_init, totals, sm);
}
{% endif %}{% endif %}
