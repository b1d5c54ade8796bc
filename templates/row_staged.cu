// Whether positions run from the end (see "Reverse" below); before the includes, where
// lib/staging.cuh would otherwise define it as 0.
#define MS_REVERSE {{ reverse }}
{% include "lib/tile.cuh" %}
{% include "lib/lookback.cuh" %}
{% include "lib/staging.cuh" %}
{% if segments %}{% include "lib/offsets.cuh" %}
{% endif %}{% if tma %}{% include "lib/tma.cuh" %}
{% include "lib/tensor_copy.cuh" %}
{% endif %}// ---- Staged row scans (`row_staged`, sm_80 and newer): independent scans of the contiguous
// rows of `row` values, as one single-pass scan of the whole buffer under the segmented lifting
// of the operator, with each tile of *values* staged in shared memory as the staged scan stages
// its tiles (cp.async, or on sm_90 tensor copies of 128-byte rows with the 128-byte swizzle, an
// L2 prefetch ahead and the first wave paced). The module's operator is the lifting (elements
// ms_elem = {value, flag}); memory and the staged tile hold only values (ms_val). Each thread
// folds its run from shared memory under the lifting, with each value's flag computed from its
// position (a row starts there), so no flag array exists and no lifted item is held in
// registers; the block scan and the look-back run over lifted elements; the scan pass writes the
// results back in place, and the tile leaves by coalesced 16-byte stores. Without an output
// (`out` null: a fold of each row) a tile ends once its rows' totals are written.
//
// Reverse (MS_REVERSE 1; the module's operator is then the lifting of the opposite monoid):
// logical position g is element n - 1 - g. The tile numbered k is physical tile
// num_tiles - 1 - k, so the partial tile, physically last, is logically first. A tile is staged
// physically, exactly as forwards, and logical index i of a tile (0 <= i < MS_TILE) is physical
// offset MS_TILE - 1 - i: thread t's logical run is physical row (of MS_ITEMS values)
// MS_BLOCK - 1 - t read backwards, its chunk j being chunk MS_THREAD_CHUNKS - 1 - j of that row
// and element k of a chunk element MS_CHUNK_ELEMS - 1 - k. A partial tile's valid values are
// physical offsets below `valid`, so its missing ones are the first logical indices: they count
// as the identity, which changes no prefix. The copies and stores are those of the forward form
// (coalesced); each quarter-warp phase of the runs reads 8 consecutive rows, as forwards, so
// the swizzle keeps it conflict-free.
//
// Rows of one length (`row_staged`): row positions come from physical positions x: row x / row,
// column x % row. Forwards a row starts at column 0 and ends at column row - 1; in reverse it
// starts at column row - 1 and ends at column 0. Rows given by CSR offsets (`segment_staged`,
// rendered with `segments`): while the tile's copy is in flight, two warps find the rows of
// its first value and of the position after its last (a 32-way search of the offsets each),
// and the block reads the offsets between them, coalesced, setting a bit of a shared mask for
// each row start in the tile; each thread then takes its run's bits from the mask. Per-row
// initial values and totals are indexed by the physical row; a row of no values gets its
// initial value (or the identity) as its total, written by the thread that reads its offsets.
typedef decltype(((ms_elem*)0)->value) ms_val;
static_assert(sizeof(ms_val) == {{ value_size }}, "monoscan: the staged row scan was rendered for values of another size");
#define MS_CHUNK_ELEMS ((int)(16 / sizeof(ms_val)))
#define MS_TILE_CHUNKS (MS_TILE / MS_CHUNK_ELEMS)
#define MS_THREAD_CHUNKS (MS_ITEMS / MS_CHUNK_ELEMS)
static_assert(16 % sizeof(ms_val) == 0 && MS_ITEMS % (16 / sizeof(ms_val)) == 0,
              "monoscan: staged rows need values whose size divides 16 and whole chunks per thread");
// Rows without an input map read their values as they are.
struct MsRowNoMap {
    typedef ms_val in_t;
    static __device__ __forceinline__ ms_val apply(const ms_val& x) { return x; }
};
template <typename In>
union ms_row_chunk {
    ms_chunk_bits bits;
    In e[MS_CHUNK_ELEMS];
};
// The buffer slot of chunk j (in logical order) of this thread's run.
__device__ __forceinline__ int ms_row_slot(int j) {
    const int r = MS_REVERSE ? MS_BLOCK - 1 - (int)threadIdx.x : (int)threadIdx.x;
    return ms_swz(r * MS_THREAD_CHUNKS + (MS_REVERSE ? MS_THREAD_CHUNKS - 1 - j : j));
}
// The index in its chunk of a chunk's logical element k.
#define MS_ROW_IN_CHUNK(k) (MS_REVERSE ? MS_CHUNK_ELEMS - 1 - (k) : (k))
// a ⊕ b on row values (the lifting's combine on two elements of one segment).
__device__ __forceinline__ ms_val ms_row_combine(const ms_val& a, const ms_val& b) {
    ms_elem x = MsOp::identity(), y = MsOp::identity();
    x.value = a;
    y.value = b;
    return MsOp::combine(x, y).value;
}
// The block's state: the staged scan's, and for rows given by offsets the rows that meet the
// tile and the mask of its row starts (bit i: logical index i of the tile starts a row; bit
// MS_TILE: the position after the tile does; one word more, which the runs' funnel shifts
// read).
struct ms_row_staged_smem {
    ms_elem warp_sums[MS_WARPS];
    ms_elem prefix;
    ms_u32 tile;
{% if segments %}    ms_u64 range[2];
    ms_u32 heads[MS_TILE / 32 + 2];
{% endif %}};
// A walk over a thread's run in logical order, value by value: `enter(i, valid, rows)` moves
// onto value i (`valid`: it is in the data) and says whether it starts a row; then `last(i)`
// says whether it ends its row and, where `rows` asked for it, `row()` is its row in memory.
// Rows of one length walk by counters: `to_head`, values before the next row start (0: this
// one), and `span`, values from one row start to the next; both saturate at MS_ITEMS + 1,
// which no run reaches.
struct MsEachCursor {
    ms_u64 r;
    ms_u32 to_head, span;
    __device__ __forceinline__ bool enter(int i, bool, bool) {
        const bool head = to_head == 0;
        to_head = (head ? span : to_head) - 1;
        if (head && i > 0) r = MS_REVERSE ? r - 1 : r + 1;
        return head;
    }
    __device__ __forceinline__ bool last(int) const { return to_head == 0; }
    __device__ __forceinline__ ms_u64 row() const { return r; }
};
// Rows of `row` values each.
struct MsEachRows {
    ms_u64 n, row;
    // Whether row r (in memory) is one of the rows: every value in the data is in one.
    __device__ __forceinline__ bool holds(ms_u64) const { return true; }
    // Nothing to find: rows follow from positions.
    __device__ __forceinline__ void find_tile(ms_i64, ms_row_staged_smem&) const {}
    // The walk from the run whose first value (in logical order) is at physical position
    // `first_x`, which counts values past the data as positions too.
    __device__ __forceinline__ MsEachCursor at(ms_u64 first_x, ms_i64, const ms_row_staged_smem&, bool) const {
        MsEachCursor c;
        c.r = first_x / row;
        const ms_u64 col = first_x - c.r * row;
        const ms_u64 dist = MS_REVERSE ? (col == row - 1 ? 0 : col + 1) : (col == 0 ? 0 : row - col);
        const ms_u64 cap = (ms_u64)MS_ITEMS + 1;
        c.to_head = (ms_u32)(dist < cap ? dist : cap);
        c.span = (ms_u32)(row < cap ? row : cap);
        return c;
    }
    // Whether the tile at physical `base` starts a row at its first logical value: forwards its
    // first physical value at column 0; in reverse (a full tile) its last, at column row - 1.
    __device__ __forceinline__ bool fresh(ms_u64 base, bool full, ms_i64, const ms_row_staged_smem&) const {
        return MS_REVERSE ? full && (base + MS_TILE) % row == 0 : base % row == 0;
    }
};
{% if segments %}// Rows given by offsets: the run's row starts as a mask taken from the tile's (bit i: value i
// of the run starts a row; bit MS_ITEMS: the value after the run does), so the values' loops
// only test bits and the code per value stays as small as the counters'. The logical row r
// of the current value is kept only where per-row values are read or written.
#define MS_HEAD_WORDS (MS_ITEMS / 32 + 1)
struct MsSegmentCursor {
    ms_offsets o;
    ms_u64 r;
    ms_u32 heads[MS_HEAD_WORDS];
    ms_u32 skip;  // the run's values before the data (a partial tile in reverse)
    __device__ __forceinline__ bool head(int i) const { return (heads[i >> 5] >> (i & 31)) & 1u; }
    // Onto the next row that holds values where value i starts one, unless it is the run's
    // first in the data, whose row the walk starts on.
    __device__ __forceinline__ bool enter(int i, bool valid, bool rows) {
        const bool h = head(i);
        if (rows && valid && h && i > (int)skip) {
            while (++r < o.count && o.off(r + 1) == o.off(r)) {
            }
        }
        return h;
    }
    __device__ __forceinline__ bool last(int i) const { return head(i + 1); }
    // (A row of the offsets for every value in the data where they are well formed; callers
    // check.)
    __device__ __forceinline__ ms_u64 row() const { return o.physical(r); }
};
struct MsSegmentRows {
    ms_offsets o;
    // Whether row r (in memory) is one of the rows (always, for a value in the data, where the
    // offsets are well formed).
    __device__ __forceinline__ bool holds(ms_u64 r) const { return r < o.count; }
    // For the tile whose first logical position is `start` (negative for a partial tile in
    // reverse): warp 0 puts the logical row of its first value in data into sm.range[0], warp
    // 1 the last logical row (or `count`, the end of the data) that starts at or before the
    // position after its last value into sm.range[1]; every thread clears the mask.
    __device__ __forceinline__ void find_tile(ms_i64 start, ms_row_staged_smem& sm) const {
        for (int w = (int)threadIdx.x; w < MS_TILE / 32 + 2; w += MS_BLOCK) sm.heads[w] = 0;
        const ms_u64 lo = start < 0 ? 0 : (ms_u64)start;
        const ms_u64 end = (ms_u64)(start + MS_TILE);
        for (int w = (int)(threadIdx.x >> 5); w < 2; w += MS_WARPS) {
            const ms_u64 r = w == 0 ? o.find_warp(lo, 0, o.count - 1) : o.find_warp(end < o.n ? end : o.n, 0, o.count);
            if ((threadIdx.x & 31) == 0) sm.range[w] = r;
        }
    }
    // Once sm.range is known: the block reads the offsets of the rows from sm.range[0] (from
    // row 0 in the first tile) to sm.range[1], a row a thread, sets the mask's bit of each
    // row start from the tile's first value to the position after it, and calls `empty(r)`
    // for each row r (in memory) of no values among them that starts after the tile's first
    // value (at it too, in the first tile). Every such row is thereby one tile's: those at a
    // tile's first value are the tile before's, whose rows reach the position after it, and
    // the tile's own begin at the last of them, which has values.
    template <typename F>
    __device__ __forceinline__ void mark_tile(ms_i64 start, ms_row_staged_smem& sm, F&& empty) const {
        const ms_u64 lo = start < 0 ? 0 : (ms_u64)start;
        const ms_u64 to = sm.range[1];
        for (ms_u64 q = (lo == 0 ? 0 : sm.range[0]) + threadIdx.x; q <= to; q += MS_BLOCK) {
            const ms_u64 p = o.off(q);
            const ms_u64 i = p - (ms_u64)start;  // logical index in the tile
            if (p >= lo && i <= (ms_u64)MS_TILE) atomicOr(&sm.heads[i >> 5], 1u << (i & 31));
            if (q < o.count && o.off(q + 1) == p && (p > lo || lo == 0)) empty(o.physical(q));
        }
    }
    // The walk of the run whose first logical position is `g0` (its values in the data from
    // g, after a partial tile's missing ones in reverse): its bits of the tile's mask, and
    // where `per_row` asks for it, its first value's row, found among the tile's rows.
    __device__ __forceinline__ MsSegmentCursor at(ms_u64, ms_i64 g0, const ms_row_staged_smem& sm,
                                                  bool per_row) const {
        MsSegmentCursor c;
        c.o = o;
        const int first = (int)threadIdx.x * MS_ITEMS;
        const int word = first >> 5, shift = first & 31;
#pragma unroll
        for (int w = 0; w < MS_HEAD_WORDS; ++w) {
            c.heads[w] = __funnelshift_r(sm.heads[word + w], sm.heads[word + w + 1], shift);
        }
        c.r = 0;
        c.skip = g0 < 0 ? (ms_u32)(-g0 < (ms_i64)MS_ITEMS ? -g0 : (ms_i64)MS_ITEMS) : 0u;
        if (per_row) {
            const ms_u64 g = g0 < 0 ? 0 : (ms_u64)g0;
            const ms_u64 hi = sm.range[1] < o.count ? sm.range[1] : o.count - 1;
            c.r = o.find(g < o.n ? g : o.n - 1, sm.range[0], hi);
        }
        return c;
    }
    __device__ __forceinline__ bool fresh(ms_u64, bool, ms_i64 start, const ms_row_staged_smem& sm) const {
        return start >= 0 && (sm.heads[0] & 1u) != 0;
    }
};
{% endif %}
{% if tma %}// The TMA form: the block's state and its mbarrier follow the tile in dynamic shared memory
// (MS_TMA_STATE bytes); the kernel has no static shared memory, whose alignment padding would
// cost a resident block per SM.
#define MS_TMA_STATE {{ tma_state }}
#define MS_TMA_BAR_OFFSET ((sizeof(ms_row_staged_smem) + 15) / 16 * 16)
static_assert(MS_THREAD_CHUNKS == 8 && MS_SWZ == 3, "monoscan: the TMA form needs one 128-byte row per thread");
static_assert(MS_TMA_BAR_OFFSET + 16 <= MS_TMA_STATE,
              "monoscan: the TMA form's block state does not fit after the tile");
{% endif %}// `tmap` and `bar` (the TMA form's tensor map and mbarrier) are null in the cp.async form;
// `prefetch` is the TMA form's plan (all zero, no prefetching or pacing, in the other). `Rows`
// says where rows start (MsEachRows or MsSegmentRows).
template <typename Map, typename Rows>
__device__ __forceinline__ void ms_row_staged(const typename Map::in_t* in, ms_val* out, ms_u64 n, const Rows& rows,
                                              ms_u32 num_tiles, ms_state* state, ms_elem* aggs, ms_elem* incls,
                                              ms_u32* counter, ms_u32 epoch, int grid_order, int exclusive,
                                              const ms_val* inits,
                                              ms_val init, int has_init, ms_val* totals, ms_chunk_bits* buf,
                                              ms_row_staged_smem& sm, const void* tmap, ms_u64* bar,
                                              const ms_prefetch& prefetch) {
    typedef typename Map::in_t in_t;
    static_assert(sizeof(in_t) == sizeof(ms_val), "monoscan: staged row scans map in place");
    if (threadIdx.x == 0) {
        // In grid order block b takes tile b (see the staged scan).
        sm.tile = grid_order ? blockIdx.x : ms_take_tile(counter, num_tiles);
{% if tma %}        ms_bar_init(ms_shared_addr(bar));
        ms_pace(counter, epoch, sm.tile, prefetch);
{% endif %}    }
    __syncthreads();
    // `claim` orders the look-back; `tile` is where the values are.
    const ms_u32 claim = sm.tile;
    const ms_u32 tile = MS_REVERSE ? num_tiles - 1 - claim : claim;
    const ms_u64 base = (ms_u64)tile * MS_TILE;
    const ms_u64 valid = ms_valid(base, n);
    const bool full = valid == (ms_u64)MS_TILE;
    // The logical position of the tile's first logical value (in reverse, of a partial tile,
    // before the data: its missing values come first).
    const ms_i64 start = MS_REVERSE ? (ms_i64)n - (ms_i64)base - MS_TILE : (ms_i64)base;
    // The total of a row of no values (row r in memory): its initial value, or the identity.
    const auto empty = [&](ms_u64 r) {
        if (totals != 0) totals[r] = inits != 0 ? inits[r] : (has_init ? init : MsOp::identity().value);
    };
{% if tma %}    // A tensor copy for a full tile in a buffer aligned as the swizzle assumes; cp.async
    // (the same layout) for the partial tile. Rows given by offsets are found while it flies.
    const bool tensor = full && (ms_shared_addr(buf) & 1023) == 0;
    if (tensor && threadIdx.x == 0) ms_tma_copy_tile((const ms_tensor_map*)tmap, tile, buf, bar);
    ms_prefetch_rows(in, n, claim, prefetch, MS_REVERSE, num_tiles);
    rows.find_tile(start, sm);
{% if segments %}    __syncthreads();  // the tile's rows
    rows.mark_tile(start, sm, empty);
{% endif %}    if (tensor) {
        ms_bar_wait(ms_shared_addr(bar));
    } else {
        ms_stage_tile<in_t, true>(in, n, tile, buf);
    }
{% else %}    rows.find_tile(start, sm);
{% if segments %}    __syncthreads();  // the tile's rows
    rows.mark_tile(start, sm, empty);
{% endif %}    ms_stage_tile<in_t, true>(in, n, tile, buf);
{% endif %}{% if segments %}    __syncthreads();  // the mask of row starts
{% endif %}    // This thread's run: logical indices first + q of the tile, q = 0 .. MS_ITEMS - 1, at
    // logical positions g0 + q.
    const int first = threadIdx.x * MS_ITEMS;
    const ms_u64 first_x = base + (ms_u64)(MS_REVERSE ? MS_TILE - 1 - first : first);
    const ms_i64 g0 = start + first;
    // Rows are followed only where per-row values are read or written.
    const bool per_row = inits != 0 || totals != 0;
    const auto from = rows.at(first_x, g0, sm, per_row);
    // Fold the run in order under the lifting; values past the data count as the identity.
    ms_elem acc = MsOp::identity();
    {
        auto cursor = from;
#pragma unroll
        for (int j = 0; j < MS_THREAD_CHUNKS; ++j) {
            ms_row_chunk<in_t> ch;
            ch.bits = buf[ms_row_slot(j)];
#pragma unroll
            for (int k = 0; k < MS_CHUNK_ELEMS; ++k) {
                const int i = j * MS_CHUNK_ELEMS + k;  // in the run
                const int q = first + i;
                const int e = MS_REVERSE ? MS_TILE - 1 - q : q;  // physical offset in the tile
                const bool in_data = full || (ms_u64)e < valid;
                const bool head = cursor.enter(i, in_data, false);
                ms_elem x = MsOp::identity();
                if (in_data) {
                    x.value = Map::apply(ch.e[MS_ROW_IN_CHUNK(k)]);
                    x.flag = head ? 1u : 0u;
                }
                acc = (j == 0 && k == 0) ? x : MsOp::combine(acc, x);
            }
        }
    }
    ms_elem aggregate;
    const ms_elem excl = ms_block_exclusive(acc, aggregate, sm);
    if (threadIdx.x < 32) {
        // A tile whose first logical value starts a row needs no prefix.
        const bool fresh = rows.fresh(base, full, start, sm);
        const ms_elem prefix = ms_lookback(claim, aggregate, num_tiles, state, aggs, incls, epoch,
                                           MsOp::identity(), 0, (ms_elem*)0, fresh);
        if (threadIdx.x == 0) sm.prefix = prefix;
    }
    __syncthreads();
    ms_elem run = claim > 0 ? MsOp::combine(sm.prefix, excl) : excl;
    // Scan the run in place (the buffer now holds results), seeding each row. The loop is
    // inlined twice, with constant arguments: once following rows, for per-row initial values
    // or totals, and once not, whose code per value is only the combines and the row-start
    // test.
    const ms_val id = MsOp::identity().value;
    const bool seeded = inits != 0 || has_init;
    const auto scan_run = [&](const bool per_row_values) {
        auto cursor = from;
        ms_val seed = init;
#pragma unroll
        for (int j = 0; j < MS_THREAD_CHUNKS; ++j) {
            const int c = ms_row_slot(j);
            ms_row_chunk<in_t> ch;
            ch.bits = buf[c];
            ms_row_chunk<ms_val> res;
#pragma unroll
            for (int k = 0; k < MS_CHUNK_ELEMS; ++k) {
                const int i = j * MS_CHUNK_ELEMS + k;
                const int q = first + i;
                const int e = MS_REVERSE ? MS_TILE - 1 - q : q;
                const bool in_data = full || (ms_u64)e < valid;
                const bool head = cursor.enter(i, in_data, per_row_values);
                // The row in memory of the value (the check keeps any offsets within the
                // buffers).
                const ms_u64 r = cursor.row();
                const bool known = per_row_values && in_data && rows.holds(r);
                // A row's seed is read where it starts, or where the run does.
                if (known && inits != 0 && (head || (j == 0 && k == 0))) seed = inits[r];
                ms_elem x = MsOp::identity();
                if (in_data) {
                    x.value = Map::apply(ch.e[MS_ROW_IN_CHUNK(k)]);
                    x.flag = head ? 1u : 0u;
                }
                const ms_elem before = run;
                run = MsOp::combine(run, x);
                ms_val v;
                if (exclusive) {
                    const ms_val prev = head ? id : before.value;
                    v = seeded ? ms_row_combine(seed, prev) : prev;
                } else {
                    v = seeded ? ms_row_combine(seed, run.value) : run.value;
                }
                res.e[MS_ROW_IN_CHUNK(k)] = v;
                if (known && totals != 0 && cursor.last(i)) {
                    totals[r] = seeded ? ms_row_combine(seed, run.value) : run.value;
                }
            }
            buf[c] = res.bits;
        }
    };
    if (per_row) {
        scan_run(true);
    } else {
        scan_run(false);
    }
    // Without an output (a fold of each row) the totals are all there is to write.
    if (out == 0) return;
    __syncthreads();
    if (full) {
        ms_chunk_bits* dst = (ms_chunk_bits*)(out + base);
#pragma unroll
        for (int k = 0; k < MS_THREAD_CHUNKS; ++k) {
            const int c = k * MS_BLOCK + threadIdx.x;
            dst[c] = buf[ms_swz(c)];
        }
    } else {
        for (ms_u64 e = threadIdx.x; e < valid; e += MS_BLOCK) {
            const ms_row_chunk<ms_val>* ch = (const ms_row_chunk<ms_val>*)(buf + ms_swz((int)(e / MS_CHUNK_ELEMS)));
            out[base + e] = ch->e[e % MS_CHUNK_ELEMS];
        }
    }
}
{% if tma %}// The TMA form's shared memory: the tile, then the block's state, then the mbarrier.
#define MS_ROW_SMEM \
    extern __shared__ __align__(128) ms_chunk_bits ms_stage_buffers[]; \
    ms_row_staged_smem& sm = *(ms_row_staged_smem*)(ms_stage_buffers + MS_TILE_CHUNKS); \
    ms_u64* bar = (ms_u64*)((char*)&sm + MS_TMA_BAR_OFFSET); \
    const void* tmap = &tin;
#define MS_TMA_PARAM , const __grid_constant__ ms_tensor_map tin, ms_prefetch prefetch
// As many blocks per SM as shared memory allows: registers must never be what lowers it.
#define MS_ROW_BOUNDS __launch_bounds__(MS_BLOCK, {{ min_blocks }})
{% else %}#define MS_ROW_SMEM \
    extern __shared__ ms_chunk_bits ms_stage_buffers[]; \
    __shared__ ms_row_staged_smem sm; \
    ms_u64* bar = 0; \
    const void* tmap = 0; \
    const ms_prefetch prefetch = {0u, 0u, 0u, 0u};
#define MS_TMA_PARAM
#define MS_ROW_BOUNDS __launch_bounds__(MS_BLOCK)
{% endif %}{% if segments %}// Rows given by `rows` + 1 offsets (in memory order, from 0 to n).
extern "C" __global__ void MS_ROW_BOUNDS
{{ prefix }}_segment_staged(const ms_val* in, ms_val* out, ms_u64 n, const ms_u64* offsets, ms_u64 rows,
                            ms_u32 num_tiles, ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter,
                            ms_u32 epoch, int grid_order, int exclusive, const ms_val* inits, ms_val init,
                            int has_init, ms_val* totals MS_TMA_PARAM) {
    MS_ROW_SMEM
    const MsSegmentRows at = { {n, rows, offsets} };
    ms_row_staged<MsRowNoMap>(in, out, n, at, num_tiles, state, aggs, incls, counter, epoch, grid_order, exclusive,
                              inits, init, has_init, totals, ms_stage_buffers, sm, tmap, bar, prefetch);
}
{% if map %}extern "C" __global__ void MS_ROW_BOUNDS
{{ prefix }}_segment_staged_mapped(const MsMap::in_t* in, ms_val* out, ms_u64 n, const ms_u64* offsets,
                                   ms_u64 rows, ms_u32 num_tiles, ms_state* state, ms_elem* aggs, ms_elem* incls,
                                   ms_u32* counter, ms_u32 epoch, int grid_order, int exclusive,
                                   const ms_val* inits, ms_val init, int has_init, ms_val* totals MS_TMA_PARAM) {
    MS_ROW_SMEM
    const MsSegmentRows at = { {n, rows, offsets} };
    ms_row_staged<MsMap>(in, out, n, at, num_tiles, state, aggs, incls, counter, epoch, grid_order, exclusive,
                         inits, init, has_init, totals, ms_stage_buffers, sm, tmap, bar, prefetch);
}
{% endif %}{% else %}// Rows of `row` values each.
extern "C" __global__ void MS_ROW_BOUNDS
{{ prefix }}_row_staged(const ms_val* in, ms_val* out, ms_u64 n, ms_u64 row, ms_u32 num_tiles,
                        ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter, ms_u32 epoch,
                        int grid_order, int exclusive, const ms_val* inits, ms_val init, int has_init,
                        ms_val* totals MS_TMA_PARAM) {
    MS_ROW_SMEM
    const MsEachRows at = {n, row};
    ms_row_staged<MsRowNoMap>(in, out, n, at, num_tiles, state, aggs, incls, counter, epoch, grid_order, exclusive,
                              inits, init, has_init, totals, ms_stage_buffers, sm, tmap, bar, prefetch);
}
{% if map %}extern "C" __global__ void MS_ROW_BOUNDS
{{ prefix }}_row_staged_mapped(const MsMap::in_t* in, ms_val* out, ms_u64 n, ms_u64 row, ms_u32 num_tiles,
                               ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter, ms_u32 epoch,
                               int grid_order, int exclusive, const ms_val* inits, ms_val init, int has_init,
                               ms_val* totals MS_TMA_PARAM) {
    MS_ROW_SMEM
    const MsEachRows at = {n, row};
    ms_row_staged<MsMap>(in, out, n, at, num_tiles, state, aggs, incls, counter, epoch, grid_order, exclusive,
                         inits, init, has_init, totals, ms_stage_buffers, sm, tmap, bar, prefetch);
}
{% endif %}{% endif %}
