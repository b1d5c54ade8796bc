// Whether positions run from the end (see "Reverse" below); before the includes, where
// lib/staging.cuh would otherwise define it as 0.
#define MS_REVERSE {{ reverse }}
{% include "lib/tile.cuh" %}
{% include "lib/lookback.cuh" %}
{% include "lib/staging.cuh" %}
{% if tma %}{% include "lib/tma.cuh" %}
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
// results back in place, and the tile leaves by coalesced 16-byte stores.
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
// Row positions come from physical positions x: row x / row, column x % row. Forwards a row
// starts at column 0 and ends at column row - 1; in reverse it starts at column row - 1 and ends
// at column 0. Per-row initial values and totals are indexed by the physical row.
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
// Where this thread's run starts, as counters that step once per value in logical order:
// `to_head`, values before the next row start (0: this one), and `span`, values from one row
// start to the next. Both saturate at MS_ITEMS + 1, which no run reaches. `first_x` is the
// physical position of the run's first value in logical order; `row` the row length.
__device__ __forceinline__ void ms_row_counters(ms_u64 first_x, ms_u64 row, ms_u64& r0, ms_u32& to_head,
                                                ms_u32& span) {
    r0 = first_x / row;
    const ms_u64 col = first_x - r0 * row;
    const ms_u64 dist = MS_REVERSE ? (col == row - 1 ? 0 : col + 1) : (col == 0 ? 0 : row - col);
    const ms_u64 cap = (ms_u64)MS_ITEMS + 1;
    to_head = (ms_u32)(dist < cap ? dist : cap);
    span = (ms_u32)(row < cap ? row : cap);
}
{% if tma %}// The TMA form: the block's state and its mbarrier follow the tile in dynamic shared memory
// (MS_TMA_STATE bytes); the kernel has no static shared memory, whose alignment padding would
// cost a resident block per SM.
#define MS_TMA_STATE {{ tma_state }}
#define MS_TMA_BAR_OFFSET ((sizeof(ms_staged_smem) + 15) / 16 * 16)
static_assert(MS_THREAD_CHUNKS == 8 && MS_SWZ == 3, "monoscan: the TMA form needs one 128-byte row per thread");
static_assert(MS_TMA_BAR_OFFSET + 16 <= MS_TMA_STATE,
              "monoscan: the TMA form's block state does not fit after the tile");
{% endif %}// `tmap` and `bar` (the TMA form's tensor map and mbarrier) are null in the cp.async form;
// `prefetch` is the TMA form's plan (all zero, no prefetching or pacing, in the other).
template <typename Map>
__device__ __forceinline__ void ms_row_staged(const typename Map::in_t* in, ms_val* out, ms_u64 n, ms_u64 row,
                                              ms_u32 num_tiles, ms_state* state, ms_elem* aggs, ms_elem* incls,
                                              ms_u32* counter, ms_u32 epoch, int grid_order, int exclusive,
                                              const ms_val* inits,
                                              ms_val init, int has_init, ms_val* totals, ms_chunk_bits* buf,
                                              ms_staged_smem& sm, const void* tmap, ms_u64* bar,
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
{% if tma %}    // A tensor copy for a full tile in a buffer aligned as the swizzle assumes; cp.async
    // (the same layout) for the partial tile.
    const bool tensor = full && (ms_shared_addr(buf) & 1023) == 0;
    if (tensor && threadIdx.x == 0) ms_tma_copy_tile((const ms_tensor_map*)tmap, tile, buf, bar);
    ms_prefetch_rows(in, n, claim, prefetch, MS_REVERSE, num_tiles);
    if (tensor) {
        ms_bar_wait(ms_shared_addr(bar));
    } else {
        ms_stage_tile<in_t, true>(in, n, tile, buf);
    }
{% else %}    ms_stage_tile<in_t, true>(in, n, tile, buf);
{% endif %}    // This thread's run: logical indices first + q of the tile, q = 0 .. MS_ITEMS - 1.
    const int first = threadIdx.x * MS_ITEMS;
    const ms_u64 first_x = base + (ms_u64)(MS_REVERSE ? MS_TILE - 1 - first : first);
    ms_u64 r0;
    ms_u32 to_head0, span;
    ms_row_counters(first_x, row, r0, to_head0, span);
    // Fold the run in order under the lifting; values past the data count as the identity.
    ms_elem acc = MsOp::identity();
    {
        ms_u32 to_head = to_head0;
#pragma unroll
        for (int j = 0; j < MS_THREAD_CHUNKS; ++j) {
            ms_row_chunk<in_t> ch;
            ch.bits = buf[ms_row_slot(j)];
#pragma unroll
            for (int k = 0; k < MS_CHUNK_ELEMS; ++k) {
                const int q = first + j * MS_CHUNK_ELEMS + k;
                const int e = MS_REVERSE ? MS_TILE - 1 - q : q;  // physical offset in the tile
                const bool head = to_head == 0;
                to_head = (head ? span : to_head) - 1;
                ms_elem x = MsOp::identity();
                if (full || (ms_u64)e < valid) {
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
        // A tile whose first logical value starts a row needs no prefix: forwards its first
        // physical value at column 0; in reverse (a full tile) its last, at column row - 1.
        const bool fresh = MS_REVERSE ? full && (base + MS_TILE) % row == 0 : base % row == 0;
        const ms_elem prefix = ms_lookback(claim, aggregate, num_tiles, state, aggs, incls, epoch,
                                           MsOp::identity(), 0, (ms_elem*)0, fresh);
        if (threadIdx.x == 0) sm.prefix = prefix;
    }
    __syncthreads();
    ms_elem run = claim > 0 ? MsOp::combine(sm.prefix, excl) : excl;
    // Scan the run in place (the buffer now holds results), seeding each row.
    {
        const ms_val id = MsOp::identity().value;
        const bool seeded = inits != 0 || has_init;
        // The physical row of the current value (read only for values in the data).
        ms_u64 r = r0;
        ms_val seed = init;
        if (inits != 0 && (full || (ms_u64)(MS_REVERSE ? MS_TILE - 1 - first : first) < valid)) seed = inits[r];
        ms_u32 to_head = to_head0;
#pragma unroll
        for (int j = 0; j < MS_THREAD_CHUNKS; ++j) {
            const int c = ms_row_slot(j);
            ms_row_chunk<in_t> ch;
            ch.bits = buf[c];
            ms_row_chunk<ms_val> res;
#pragma unroll
            for (int k = 0; k < MS_CHUNK_ELEMS; ++k) {
                const int q = first + j * MS_CHUNK_ELEMS + k;
                const int e = MS_REVERSE ? MS_TILE - 1 - q : q;
                const bool in_data = full || (ms_u64)e < valid;
                const bool head = to_head == 0;
                to_head = (head ? span : to_head) - 1;
                const bool last = to_head == 0;  // the next value starts a row
                if (head && (j > 0 || k > 0)) {
                    r = MS_REVERSE ? r - 1 : r + 1;
                    if (inits != 0 && in_data) seed = inits[r];
                }
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
                if (totals != 0 && in_data && last) {
                    totals[r] = seeded ? ms_row_combine(seed, run.value) : run.value;
                }
            }
            buf[c] = res.bits;
        }
    }
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
    ms_staged_smem& sm = *(ms_staged_smem*)(ms_stage_buffers + MS_TILE_CHUNKS); \
    ms_u64* bar = (ms_u64*)((char*)&sm + MS_TMA_BAR_OFFSET); \
    const void* tmap = &tin;
#define MS_TMA_PARAM , const __grid_constant__ ms_tensor_map tin, ms_prefetch prefetch
// As many blocks per SM as shared memory allows: registers must never be what lowers it.
#define MS_ROW_BOUNDS __launch_bounds__(MS_BLOCK, {{ min_blocks }})
{% else %}#define MS_ROW_SMEM \
    extern __shared__ ms_chunk_bits ms_stage_buffers[]; \
    __shared__ ms_staged_smem sm; \
    ms_u64* bar = 0; \
    const void* tmap = 0; \
    const ms_prefetch prefetch = {0u, 0u, 0u, 0u};
#define MS_TMA_PARAM
#define MS_ROW_BOUNDS __launch_bounds__(MS_BLOCK)
{% endif %}extern "C" __global__ void MS_ROW_BOUNDS
{{ prefix }}_row_staged(const ms_val* in, ms_val* out, ms_u64 n, ms_u64 row, ms_u32 num_tiles,
                        ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter, ms_u32 epoch,
                        int grid_order, int exclusive, const ms_val* inits, ms_val init, int has_init,
                        ms_val* totals MS_TMA_PARAM) {
    MS_ROW_SMEM
    ms_row_staged<MsRowNoMap>(in, out, n, row, num_tiles, state, aggs, incls, counter, epoch, grid_order, exclusive,
                              inits, init, has_init, totals, ms_stage_buffers, sm, tmap, bar, prefetch);
}
{% if map %}extern "C" __global__ void MS_ROW_BOUNDS
{{ prefix }}_row_staged_mapped(const MsMap::in_t* in, ms_val* out, ms_u64 n, ms_u64 row, ms_u32 num_tiles,
                               ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter, ms_u32 epoch,
                               int grid_order, int exclusive, const ms_val* inits, ms_val init, int has_init,
                               ms_val* totals MS_TMA_PARAM) {
    MS_ROW_SMEM
    ms_row_staged<MsMap>(in, out, n, row, num_tiles, state, aggs, incls, counter, epoch, grid_order, exclusive,
                         inits, init, has_init, totals, ms_stage_buffers, sm, tmap, bar, prefetch);
}
{% endif %}
