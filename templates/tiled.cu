// ---- Tiled kernels: register-blocked tiles of MS_BLOCK threads x MS_ITEMS items ----
// Thread t of a tile owns MS_ITEMS consecutive elements (blocked order); global memory is
// read and written warp-striped (coalesced) and transposed through shared memory.
#define MS_BLOCK {{ block }}
#define MS_ITEMS {{ items }}
#define MS_WARPS (MS_BLOCK / 32)
#define MS_TILE (MS_BLOCK * MS_ITEMS)
#define MS_WARP_TILE (32 * MS_ITEMS)
#define MS_PAD(e) ((e) + (e) / 32)
#define MS_WARP_BUF (MS_WARP_TILE + MS_ITEMS)
#define MS_FULL 0xffffffffu

// Shuffles of any element type, one 32-bit word at a time.
#define MS_WORDS ((int)((sizeof(ms_elem) + 3) / 4))
union ms_words {
    ms_elem v;
    ms_u32 w[MS_WORDS];
};
__device__ __forceinline__ ms_elem ms_shfl_up(const ms_elem& v, unsigned d) {
    ms_words u;
    u.v = v;
#pragma unroll
    for (int k = 0; k < MS_WORDS; ++k) u.w[k] = __shfl_up_sync(MS_FULL, u.w[k], d);
    return u.v;
}
__device__ __forceinline__ ms_elem ms_shfl_down(const ms_elem& v, unsigned d) {
    ms_words u;
    u.v = v;
#pragma unroll
    for (int k = 0; k < MS_WORDS; ++k) u.w[k] = __shfl_down_sync(MS_FULL, u.w[k], d);
    return u.v;
}

// Shared memory of one tile: each warp's transposition buffer, and the warp totals.
struct ms_tile_smem {
    ms_elem buf[MS_WARPS][MS_WARP_BUF];
    ms_elem warp_sums[MS_WARPS];
    ms_elem prefix;
    ms_u32 tile;
};

// Loads `valid` (<= MS_TILE) elements starting at `base` into items[], blocked order, through
// `Map` (the identity map, or the operator's fused input map); the rest is the identity.
template <typename Map>
__device__ __forceinline__ void ms_load_tile(const typename Map::in_t* in, ms_u64 base, ms_u64 valid,
                                             ms_elem (&items)[MS_ITEMS], ms_tile_smem& sm) {
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    ms_elem* wbuf = sm.buf[warp];
    const ms_u64 wbase = base + (ms_u64)warp * MS_WARP_TILE;
    const ms_i64 wvalid = (ms_i64)valid - (ms_i64)warp * MS_WARP_TILE;
    ms_elem tmp[MS_ITEMS];
    if (wvalid >= MS_WARP_TILE) {
#pragma unroll
        for (int j = 0; j < MS_ITEMS; ++j) tmp[j] = Map::apply(in[wbase + j * 32 + lane]);
    } else {
#pragma unroll
        for (int j = 0; j < MS_ITEMS; ++j) {
            const ms_i64 e = j * 32 + lane;
            tmp[j] = e < wvalid ? Map::apply(in[wbase + e]) : MsOp::identity();
        }
    }
#pragma unroll
    for (int j = 0; j < MS_ITEMS; ++j) wbuf[MS_PAD(j * 32 + lane)] = tmp[j];
    __syncwarp();
#pragma unroll
    for (int j = 0; j < MS_ITEMS; ++j) items[j] = wbuf[MS_PAD(lane * MS_ITEMS + j)];
    __syncwarp();
}

// Stores the first `valid` elements of the tile from items[] (blocked order) to out + base.
__device__ __forceinline__ void ms_store_tile(ms_elem* out, ms_u64 base, ms_u64 valid,
                                              const ms_elem (&items)[MS_ITEMS], ms_tile_smem& sm) {
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    ms_elem* wbuf = sm.buf[warp];
    const ms_u64 wbase = base + (ms_u64)warp * MS_WARP_TILE;
    const ms_i64 wvalid = (ms_i64)valid - (ms_i64)warp * MS_WARP_TILE;
#pragma unroll
    for (int j = 0; j < MS_ITEMS; ++j) wbuf[MS_PAD(lane * MS_ITEMS + j)] = items[j];
    __syncwarp();
    if (wvalid >= MS_WARP_TILE) {
#pragma unroll
        for (int j = 0; j < MS_ITEMS; ++j) out[wbase + j * 32 + lane] = wbuf[MS_PAD(j * 32 + lane)];
    } else {
#pragma unroll
        for (int j = 0; j < MS_ITEMS; ++j) {
            const ms_i64 e = j * 32 + lane;
            if (e < wvalid) out[wbase + e] = wbuf[MS_PAD(j * 32 + lane)];
        }
    }
    __syncwarp();
}

// Folds a thread's items in order.
__device__ __forceinline__ ms_elem ms_thread_fold(const ms_elem (&items)[MS_ITEMS]) {
    ms_elem acc = items[0];
#pragma unroll
    for (int j = 1; j < MS_ITEMS; ++j) acc = MsOp::combine(acc, items[j]);
    return acc;
}

// Inclusive warp scan (Kogge-Stone over shuffles).
__device__ __forceinline__ ms_elem ms_warp_inclusive(ms_elem x) {
    const unsigned lane = threadIdx.x & 31;
#pragma unroll
    for (unsigned d = 1; d < 32; d <<= 1) {
        const ms_elem y = ms_shfl_up(x, d);
        if (lane >= d) x = MsOp::combine(y, x);
    }
    return x;
}

// Warp reduction in lane order: lane 0 gets x[0] ⊕ x[1] ⊕ ... ⊕ x[31].
__device__ __forceinline__ ms_elem ms_warp_reduce(ms_elem x) {
    const unsigned lane = threadIdx.x & 31;
#pragma unroll
    for (unsigned d = 1; d < 32; d <<= 1) {
        const ms_elem y = ms_shfl_down(x, d);
        if (lane + d < 32) x = MsOp::combine(x, y);
    }
    return x;
}

// Exclusive scan of one value per thread, in thread order. Returns the thread's exclusive
// prefix within the block (the identity for thread 0); `aggregate` gets the block's total.
template <typename Smem>
__device__ __forceinline__ ms_elem ms_block_exclusive(ms_elem x, ms_elem& aggregate, Smem& sm) {
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const ms_elem inc = ms_warp_inclusive(x);
    ms_elem exc = ms_shfl_up(inc, 1);
    if (lane == 31) sm.warp_sums[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        ms_elem s = lane < MS_WARPS ? sm.warp_sums[lane] : MsOp::identity();
        s = ms_warp_inclusive(s);
        if (lane < MS_WARPS) sm.warp_sums[lane] = s;
    }
    __syncthreads();
    aggregate = sm.warp_sums[MS_WARPS - 1];
    if (lane == 0) exc = warp > 0 ? sm.warp_sums[warp - 1] : MsOp::identity();
    else if (warp > 0) exc = MsOp::combine(sm.warp_sums[warp - 1], exc);
    return exc;
}

// The total of a block's values, in thread order, valid in thread 0.
template <typename Smem>
__device__ __forceinline__ ms_elem ms_block_reduce(ms_elem x, Smem& sm) {
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    x = ms_warp_reduce(x);
    if (lane == 0) sm.warp_sums[warp] = x;
    __syncthreads();
    if (threadIdx.x == 0) {
#pragma unroll
        for (int w = 1; w < MS_WARPS; ++w) x = MsOp::combine(x, sm.warp_sums[w]);
    }
    return x;
}

// Scans a thread's items from `prefix`, in place: inclusive (x0' = prefix ⊕ x0, ...) or
// exclusive (x0' = prefix, x1' = prefix ⊕ x0, ...).
__device__ __forceinline__ void ms_thread_scan(ms_elem (&items)[MS_ITEMS], ms_elem prefix, int exclusive) {
    ms_elem run = prefix;
    if (exclusive) {
#pragma unroll
        for (int j = 0; j < MS_ITEMS; ++j) {
            const ms_elem next = MsOp::combine(run, items[j]);
            items[j] = run;
            run = next;
        }
    } else {
#pragma unroll
        for (int j = 0; j < MS_ITEMS; ++j) {
            run = MsOp::combine(run, items[j]);
            items[j] = run;
        }
    }
}

__device__ __forceinline__ ms_u64 ms_valid(ms_u64 base, ms_u64 n) {
    return n - base < (ms_u64)MS_TILE ? n - base : (ms_u64)MS_TILE;
}

{% if reduce_tiles %}// ---- Reduce: each block folds a contiguous run of tiles, in order, into partials[block] ----
template <typename Map>
__device__ __forceinline__ void ms_reduce_tiles(const typename Map::in_t* in, ms_elem* partials, ms_u64 n,
                                                ms_u64 tiles_per_block, ms_tile_smem& sm) {
    ms_elem items[MS_ITEMS];
    const ms_u64 first = (ms_u64)blockIdx.x * tiles_per_block;
    const ms_u64 num_tiles = (n + MS_TILE - 1) / MS_TILE;
    const ms_u64 last = first + tiles_per_block < num_tiles ? first + tiles_per_block : num_tiles;
    ms_elem acc = MsOp::identity();
    for (ms_u64 t = first; t < last; ++t) {
        const ms_u64 base = t * MS_TILE;
        ms_load_tile<Map>(in, base, ms_valid(base, n), items, sm);
        const ms_elem total = ms_block_reduce(ms_thread_fold(items), sm);
        if (threadIdx.x == 0) acc = t == first ? total : MsOp::combine(acc, total);
        __syncthreads();
    }
    if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}
extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_reduce_tiles(const ms_elem* in, ms_elem* partials, ms_u64 n, ms_u64 tiles_per_block) {
    __shared__ ms_tile_smem sm;
    ms_reduce_tiles<MsNoMap>(in, partials, n, tiles_per_block, sm);
}
{% if map %}extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_reduce_tiles_mapped(const MsMap::in_t* in, ms_elem* partials, ms_u64 n, ms_u64 tiles_per_block) {
    __shared__ ms_tile_smem sm;
    ms_reduce_tiles<MsMap>(in, partials, n, tiles_per_block, sm);
}
{% endif %}{% endif %}

{% if tile_totals %}// ---- Reduce-then-scan (deterministic): tile totals, a scan of them, then the tiles ----
template <typename Map>
__device__ __forceinline__ void ms_tile_totals(const typename Map::in_t* in, ms_elem* totals, ms_u64 n, ms_tile_smem& sm) {
    ms_elem items[MS_ITEMS];
    const ms_u64 base = (ms_u64)blockIdx.x * MS_TILE;
    ms_load_tile<Map>(in, base, ms_valid(base, n), items, sm);
    const ms_elem total = ms_block_reduce(ms_thread_fold(items), sm);
    if (threadIdx.x == 0) totals[blockIdx.x] = total;
}
extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_tile_totals(const ms_elem* in, ms_elem* totals, ms_u64 n) {
    __shared__ ms_tile_smem sm;
    ms_tile_totals<MsNoMap>(in, totals, n, sm);
}
{% if map %}extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_tile_totals_mapped(const MsMap::in_t* in, ms_elem* totals, ms_u64 n) {
    __shared__ ms_tile_smem sm;
    ms_tile_totals<MsMap>(in, totals, n, sm);
}
{% endif %}{% endif %}

{% if tile_scan %}// Scans each tile from its carry: carries[tile] when carries is set (they already include
// init), else init (has_init) or nothing. The last tile writes prefix ⊕ total to *total_out.
template <typename Map>
__device__ __forceinline__ void ms_tile_scan(const typename Map::in_t* in, ms_elem* out, ms_u64 n,
                                             const ms_elem* carries, int exclusive, ms_elem init,
                                             int has_init, ms_elem* total_out, ms_tile_smem& sm) {
    ms_elem items[MS_ITEMS];
    const ms_u64 tile = blockIdx.x;
    const ms_u64 base = tile * MS_TILE;
    const ms_u64 valid = ms_valid(base, n);
    ms_load_tile<Map>(in, base, valid, items, sm);
    ms_elem aggregate;
    const ms_elem excl = ms_block_exclusive(ms_thread_fold(items), aggregate, sm);
    const bool carried = carries != 0 || has_init;
    const ms_elem carry = carries != 0 ? carries[tile] : (has_init ? init : MsOp::identity());
    const ms_elem prefix = carried ? MsOp::combine(carry, excl) : excl;
    ms_thread_scan(items, prefix, exclusive);
    ms_store_tile(out, base, valid, items, sm);
    if (total_out != 0 && threadIdx.x == 0 && base + valid == n) {
        *total_out = carried ? MsOp::combine(carry, aggregate) : aggregate;
    }
}
extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_tile_scan(const ms_elem* in, ms_elem* out, ms_u64 n, const ms_elem* carries,
                       int exclusive, ms_elem init, int has_init, ms_elem* total_out) {
    __shared__ ms_tile_smem sm;
    ms_tile_scan<MsNoMap>(in, out, n, carries, exclusive, init, has_init, total_out, sm);
}
{% if map %}extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_tile_scan_mapped(const MsMap::in_t* in, ms_elem* out, ms_u64 n, const ms_elem* carries,
                              int exclusive, ms_elem init, int has_init, ms_elem* total_out) {
    __shared__ ms_tile_smem sm;
    ms_tile_scan<MsMap>(in, out, n, carries, exclusive, init, has_init, total_out, sm);
}
{% endif %}{% endif %}

{% if single_pass %}// ---- Single-pass scan: chained scan with decoupled look-back ----
// Tiles are numbered by an atomic counter (not blockIdx, whose scheduling order is not
// guaranteed), so a tile only ever waits for tiles that started before it. Each tile publishes
// its aggregate (status AGG), looks back over the preceding tiles a warp-wide window at a time
// until it meets an inclusive prefix (status INCL), then publishes its own inclusive prefix.
// Statuses carry the launch's epoch: entries of earlier launches read as "not yet published",
// so the state needs no clearing between launches. The tile that draws the last number resets
// the counter for the next launch. No path returns early: every tile always publishes.
#define MS_LB {{ lookback }}
#define MS_AGG 1u
#define MS_INCL 2u
// Run by one thread: the next tile number. The claimant of the last tile resets the counter,
// so it is zero for the next launch (the host zeroes it only once, at allocation).
__device__ __forceinline__ ms_u32 ms_take_tile(ms_u32* counter, ms_u32 num_tiles) {
    const ms_u32 t = atomicAdd(counter, 1u);
    if (t == num_tiles - 1) atomicExch(counter, 0u);
    return t;
}
// Thread 0 claims the block's tile number; every thread of the block returns it.
template <typename Smem>
__device__ __forceinline__ ms_u32 ms_claim_tile(ms_u32* counter, ms_u32 num_tiles, Smem& sm) {
    if (threadIdx.x == 0) sm.tile = ms_take_tile(counter, num_tiles);
    __syncthreads();
    return sm.tile;
}
// Each tile's state sits in its own slot of MS_SLOT bytes, whole 32-byte L2 sectors: the
// newest tiles publish while their successors poll them, and with 16 tiles to a 128-byte line
// those writes and polls crowded the same lines (session 7 measured 0.853 -> 0.89 of copy on
// the H200 for Sum i32 with one status per sector).
#define MS_SLOT {{ state_slot }}
template <typename T>
__device__ __forceinline__ T* ms_slot(T* st, ms_u32 tile) {
    return (T*)((const char*)st + (ms_u64)tile * MS_SLOT);
}
{% if layout == "packed64" %}
// Status and value in one 64-bit word (elements of at most 4 bytes): status in the high half.
typedef ms_u64 ms_state;
union ms_packed { ms_elem v; ms_u32 w; };
__device__ __forceinline__ void ms_publish(ms_state* st, ms_elem*, ms_elem*, ms_u32 tile, ms_u32 status, const ms_elem& v) {
    ms_packed u;
    u.w = 0;
    u.v = v;
    const ms_u64 word = ((ms_u64)status << 32) | u.w;
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(ms_slot(st, tile)), "l"(word) : "memory");
}
__device__ __forceinline__ ms_u32 ms_peek(const ms_state* st, const ms_elem*, const ms_elem*, ms_u32 tile, ms_elem& v) {
    ms_u64 word;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(ms_slot(st, tile)) : "memory");
    ms_packed u;
    u.w = (ms_u32)word;
    v = u.v;
    return (ms_u32)(word >> 32);
}
{% elif layout == "packed128" %}
// Status and value in one 128-bit word (elements of 5 to 8 bytes), accessed with single 128-bit
// relaxed loads and stores: value in the low 64 bits, status in the high.
struct alignas(16) ms_state { ms_u64 lo, hi; };
union ms_packed { ms_elem v; ms_u64 w; };
__device__ __forceinline__ void ms_publish(ms_state* st, ms_elem*, ms_elem*, ms_u32 tile, ms_u32 status, const ms_elem& v) {
    ms_packed u;
    u.w = 0;
    u.v = v;
    asm volatile("{ .reg .b128 t; mov.b128 t, { %1, %2}; st.relaxed.gpu.global.b128 [%0], t; }"
                 ::"l"(ms_slot(st, tile)), "l"(u.w), "l"((ms_u64)status) : "memory");
}
__device__ __forceinline__ ms_u32 ms_peek(const ms_state* st, const ms_elem*, const ms_elem*, ms_u32 tile, ms_elem& v) {
    ms_u64 lo, hi;
    asm volatile("{ .reg .b128 t; ld.relaxed.gpu.global.b128 t, [%2]; mov.b128 { %0, %1}, t; }"
                 : "=l"(lo), "=l"(hi) : "l"(ms_slot(st, tile)) : "memory");
    ms_packed u;
    u.w = lo;
    v = u.v;
    return (ms_u32)hi;
}
{% elif layout == "paired" %}
// Elements of 9 to 32 bytes: each tile owns MS_PIECES 128-bit words, each holding 8 bytes of the
// value beside a copy of the status, written and read with single 128-bit relaxed accesses.
// A reader accepts a value only when every piece carries the same status: each tile publishes
// AGG once and INCL once per epoch, so equal statuses mean all pieces come from one publish.
// All pieces are loaded independently, in one round trip.
#define MS_PIECES ((int)((sizeof(ms_elem) + 7) / 8))
struct alignas(16) ms_state { ms_u64 lo, hi; };
union ms_pieces { ms_elem v; ms_u64 w[MS_PIECES]; };
__device__ __forceinline__ void ms_publish(ms_state* st, ms_elem*, ms_elem*, ms_u32 tile, ms_u32 status, const ms_elem& v) {
    ms_pieces u;
#pragma unroll
    for (int k = 0; k < MS_PIECES; ++k) u.w[k] = 0;
    u.v = v;
    ms_state* base = ms_slot(st, tile);
#pragma unroll
    for (int k = 0; k < MS_PIECES; ++k) {
        asm volatile("{ .reg .b128 t; mov.b128 t, { %1, %2}; st.relaxed.gpu.global.b128 [%0], t; }"
                     ::"l"(base + k), "l"(u.w[k]), "l"((ms_u64)status) : "memory");
    }
}
__device__ __forceinline__ ms_u32 ms_peek(const ms_state* st, const ms_elem*, const ms_elem*, ms_u32 tile, ms_elem& v) {
    ms_pieces u;
    ms_u64 s[MS_PIECES];
    const ms_state* base = ms_slot(st, tile);
#pragma unroll
    for (int k = 0; k < MS_PIECES; ++k) {
        asm volatile("{ .reg .b128 t; ld.relaxed.gpu.global.b128 t, [%2]; mov.b128 { %0, %1}, t; }"
                     : "=l"(u.w[k]), "=l"(s[k]) : "l"(base + k) : "memory");
    }
    bool same = true;
#pragma unroll
    for (int k = 1; k < MS_PIECES; ++k) same = same && s[k] == s[0];
    v = u.v;
    return same ? (ms_u32)s[0] : 0u;
}
{% else %}
// Larger elements: a status word per tile, and the values in two separate arrays (aggregates,
// inclusive prefixes). The value is written first, then the status with release semantics;
// readers load the status with acquire semantics, then the value bypassing L1.
typedef ms_u32 ms_state;
__device__ __forceinline__ void ms_publish(ms_state* st, ms_elem* aggs, ms_elem* incls, ms_u32 tile, ms_u32 status, const ms_elem& v) {
    if ((status & 3u) == MS_AGG) aggs[tile] = v; else incls[tile] = v;
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(ms_slot(st, tile)), "r"(status) : "memory");
}
__device__ __forceinline__ ms_u32 ms_peek(const ms_state* st, const ms_elem* aggs, const ms_elem* incls, ms_u32 tile, ms_elem& v) {
    ms_u32 status;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(status) : "l"(ms_slot(st, tile)) : "memory");
    const ms_elem* src = (status & 3u) == MS_AGG ? aggs + tile : incls + tile;
    ms_words u;
#pragma unroll
    for (int k = 0; k < MS_WORDS; ++k) {
        asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(u.w[k]) : "l"((const ms_u32*)src + k) : "memory");
    }
    v = u.v;
    return status;
}
{% endif %}
// Run by warp 0 of tile `tile` once its aggregate is known: publishes the aggregate, looks back
// over the preceding tiles a warp-wide window at a time until it meets an inclusive prefix,
// publishes the tile's own inclusive prefix and returns (in lane 0) the tile's exclusive prefix,
// seeded with init. The last tile writes the total to *total_out.
__device__ __forceinline__ ms_elem ms_lookback(ms_u32 tile, const ms_elem& aggregate, ms_u32 num_tiles,
                                              ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32 epoch,
                                              ms_elem init, int has_init, ms_elem* total_out) {
    const unsigned lane = threadIdx.x & 31;
    ms_elem prefix = has_init ? init : MsOp::identity();
    if (tile > 0) {
        if (lane == 0) ms_publish(state, aggs, incls, tile, (epoch << 2) | MS_AGG, aggregate);
        // Each step inspects MS_LB predecessors per lane (a window of 32 * MS_LB tiles):
        // lane l owns tiles end-1-l*MS_LB-p, p = 0 (nearest) .. MS_LB-1, all loaded at once.
        ms_i64 end = tile;
        bool have = false;
        ms_elem acc = prefix;
        while (true) {
            ms_elem v[MS_LB];
            ms_u32 kind[MS_LB];
            bool valid[MS_LB];
#pragma unroll
            for (int p = 0; p < MS_LB; ++p) {
                const ms_i64 pred = end - 1 - (ms_i64)(lane * MS_LB + p);
                v[p] = MsOp::identity();
                kind[p] = MS_INCL;
                valid[p] = pred < 0;
                if (pred >= 0) {
                    const ms_u32 status = ms_peek(state, aggs, incls, (ms_u32)pred, v[p]);
                    valid[p] = (status >> 2) == epoch;
                    kind[p] = status & 3u;
                }
            }
            for (int spins = 0;; ++spins) {
                bool all = true;
#pragma unroll
                for (int p = 0; p < MS_LB; ++p) all = all && valid[p];
                if (all) break;
                if (spins > 4) __nanosleep(spins < 64 ? 20 : 200);
#pragma unroll
                for (int p = 0; p < MS_LB; ++p) {
                    if (!valid[p]) {
                        const ms_i64 pred = end - 1 - (ms_i64)(lane * MS_LB + p);
                        const ms_u32 status = ms_peek(state, aggs, incls, (ms_u32)pred, v[p]);
                        valid[p] = (status >> 2) == epoch;
                        kind[p] = status & 3u;
                    }
                }
            }
            int first = MS_LB;  // this lane's nearest inclusive prefix
#pragma unroll
            for (int p = MS_LB - 1; p >= 0; --p) {
                if (kind[p] == MS_INCL) first = p;
            }
            const ms_u32 incl_mask = __ballot_sync(MS_FULL, first < MS_LB);
            const int stop = incl_mask ? __ffs(incl_mask) - 1 : 31;
            // Fold this lane's tiles, earliest first, up to the nearest inclusive prefix.
            ms_elem x = MsOp::identity();
#pragma unroll
            for (int p = MS_LB - 1; p >= 0; --p) {
                if ((int)lane < stop || ((int)lane == stop && p <= first)) x = MsOp::combine(x, v[p]);
            }
            // Earlier tiles sit at higher lanes: fold them first.
#pragma unroll
            for (unsigned d = 1; d < 32; d <<= 1) {
                const ms_elem y = ms_shfl_down(x, d);
                if (lane + d < 32) x = MsOp::combine(y, x);
            }
            acc = have ? MsOp::combine(x, acc) : x;
            have = true;
            if (incl_mask) break;
            end -= 32 * MS_LB;
        }
        // The window that met an inclusive prefix already includes init (via tile 0).
        prefix = acc;
    }
    if (lane == 0) {
        const ms_elem inclusive = (tile > 0 || has_init) ? MsOp::combine(prefix, aggregate) : aggregate;
        ms_publish(state, aggs, incls, tile, (epoch << 2) | MS_INCL, inclusive);
        if (total_out != 0 && tile == num_tiles - 1) *total_out = inclusive;
    }
    return prefix;
}

{% if staged or select_staged %}// ---- Tiles staged in shared memory by cp.async (sm_80 and newer) ----
// A swizzled buffer keeps chunk c (16 bytes) at c ^ ((c >> MS_SWZ) & 7), so that striped
// copies and each thread's blocked run both touch every bank group once per phase.
#define MS_SWZ {{ swizzle }}
struct alignas(16) ms_chunk_bits { ms_u32 w[4]; };
struct ms_staged_smem {
    ms_elem warp_sums[MS_WARPS];
    ms_elem prefix;
    ms_u32 tile;
};
__device__ __forceinline__ int ms_swz(int c) { return c ^ ((c >> MS_SWZ) & 7); }
__device__ __forceinline__ ms_u32 ms_shared_addr(const void* p) {
    ms_u32 a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}
// The L2 prefetch plan of a launch (built by the host: `PrefetchPlan` in
// src/codegen/prefetch.rs). The block that claims tile t asks L2 for tile t + `ahead`, so that by
// the time that tile is claimed its copy hits L2 and the DRAM latency (with its long tail) has
// passed while no shared memory was held; too far ahead and L2 evicts it first
// (docs/performance.md). Tiles below `first_wave` are claimed at once by the launch's resident
// blocks and loaded directly: none of them is prefetched. `ahead` 0: no prefetching.
//
// The plan also paces the launch's first `paced` tiles: the block that claims tile t issues its
// copy (and its prefetch) no earlier than the launch's clock plus t * `pace_ps` picoseconds, so
// that the first waves' copies reach DRAM in tile order and land in that order, instead of all
// landing together ~7 us in, with the whole first wave then looking back at once
// (docs/performance.md, session 11). The launch's clock is the global timer as read by tile 0's
// claimant, published with the launch's epoch in the counter's second sector. `pace_ps` 0: no
// pacing. Pacing only delays copies; a clock that cannot be read in time, or a due time that is
// implausibly far, means no wait.
struct ms_prefetch { ms_u32 ahead, first_wave, pace_ps, paced; };
{% if tma or select_tma %}
__device__ __forceinline__ ms_u64 ms_globaltimer() {
    ms_u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
// Run by thread 0 of the block that claimed `tile`, before its copy is issued.
__device__ __forceinline__ void ms_pace(ms_u32* counter, ms_u32 epoch, ms_u32 tile, const ms_prefetch& p) {
    if (p.pace_ps == 0 || tile >= p.paced) return;
    constexpr ms_u64 low = (1ull << 48) - 1;  // the clock word: 16 bits of epoch, 48 of time (ns)
    const ms_u64 tag = (ms_u64)(epoch & 0xffffu) << 48;
    ms_u64* clock = (ms_u64*)(counter + 8);
    if (tile == 0) {
        const ms_u64 word = tag | (ms_globaltimer() & low);
        asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(clock), "l"(word) : "memory");
        return;
    }
    ms_u64 word = 0;
    for (int k = 0; k < 64; ++k) {
        asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(clock) : "memory");
        if ((word & ~low) == tag) break;
        __nanosleep(64);
    }
    if ((word & ~low) != tag) return;
    const ms_u64 due = ((word & low) + (ms_u64)tile * p.pace_ps / 1000u) & low;
    while (true) {
        // Nanoseconds until due, modulo 2^48: past (the top half), or further than 200 us
        // (a stale clock), means go now.
        const ms_u64 left = (due - ms_globaltimer()) & low;
        if (left == 0 || left > 200000u) break;
        __nanosleep(left > 400u ? 200u : (unsigned)(left / 2 + 1));
    }
}
// The TMA forms (sm_90 and newer): one mbarrier per block at shared address `b`, used once
// (phase 0). Thread 0 initialises it before the block's first barrier.
__device__ __forceinline__ void ms_bar_init(ms_u32 b) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n\tfence.mbarrier_init.release.cluster;"
                 ::"r"(b) : "memory");
}
// Thread 0: the barrier completes once `bytes` have arrived (the copy issued next).
__device__ __forceinline__ void ms_bar_expect(ms_u32 b, ms_u32 bytes) {
    asm volatile("{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1; }"
                 ::"r"(b), "r"(bytes) : "memory");
}
// Every thread: waits until the copy has landed.
__device__ __forceinline__ void ms_bar_wait(ms_u32 b) {
    asm volatile("{ .reg .pred p; MS_BAR_WAIT_%=: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0; @!p bra MS_BAR_WAIT_%=; }"
                 ::"r"(b) : "memory");
}
// Every thread asks L2 for its share of the plan's target tile, 128-byte rows strided by the
// block (in the staged scan exactly its own row), once the block's own copies are issued. (A
// bulk prefetch by the claiming thread queued the target's requests in the tensor unit ahead of
// the tile's own copies: session 11 measured sum i32 on an H200 at 0.899 of copy with it, 0.910
// with rows, and 0.966 against 0.993 on an H100.)
template <typename In>
__device__ __forceinline__ void ms_prefetch_rows(const In* in, ms_u64 n, ms_u32 tile, const ms_prefetch& p) {
    constexpr ms_u32 rows = (ms_u32)((MS_TILE * sizeof(In) + 127) / 128);
    const ms_u64 target = (ms_u64)tile + p.ahead;
    if (p.ahead != 0 && target >= p.first_wave && (target + 1) * MS_TILE <= n) {
        const char* t = (const char*)(in + target * MS_TILE);
        for (ms_u32 r = threadIdx.x; r < rows; r += MS_BLOCK) {
            asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(t + (ms_u64)r * 128) : "memory");
        }
    }
}
{% endif %}
// Copies tile `tile` of `in` (MS_TILE elements of In) into `buf` and waits for it: whole
// 16-byte chunks, the one that straddles the end partly (the rest zero-filled); chunks past
// the end are not copied. Chunk c lands in slot ms_swz(c) when Swizzled, else in slot c.
// `in` must be 16-byte aligned (checked before launch).
template <typename In, bool Swizzled>
__device__ __forceinline__ void ms_stage_tile(const In* in, ms_u64 n, ms_u32 tile, ms_chunk_bits* buf) {
    static_assert((MS_TILE * sizeof(In)) % (16 * MS_BLOCK) == 0,
                  "monoscan: a staged tile is a whole number of 16-byte chunks per thread");
    constexpr int chunks = (int)(MS_TILE * sizeof(In) / (16 * MS_BLOCK));
    const char* src = (const char*)(in + (ms_u64)tile * MS_TILE);
    const ms_i64 bytes = (ms_i64)ms_valid((ms_u64)tile * MS_TILE, n) * (ms_i64)sizeof(In);
#pragma unroll
    for (int k = 0; k < chunks; ++k) {
        const int c = k * MS_BLOCK + threadIdx.x;
        const ms_i64 left = bytes - (ms_i64)c * 16;
        if (left > 0) {
            const ms_u32 take = left >= 16 ? 16u : (ms_u32)left;
            ms_chunk_bits* slot = buf + (Swizzled ? ms_swz(c) : c);
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
                         ::"r"(ms_shared_addr(slot)), "l"(src + (ms_u64)c * 16), "r"(take)
                         : "memory");
        }
    }
    asm volatile("cp.async.commit_group;\n\tcp.async.wait_group 0;" ::: "memory");
    __syncthreads();
}
{% endif %}{% if select %}// ---- Stream compaction (select): the single-pass scan of keep counts, fused with the scatter ----
// Each tile loads its elements once (warp-striped, transposed through shared memory), counts
// those the map keeps (any nonzero value), scans the counts across the block and learns from
// the look-back (over u32 counts, this module's operator) how many earlier tiles kept. Each
// warp then gathers its kept elements, in order, in shared memory and writes them as one
// contiguous run. Each element is read once and each kept element written once. No path
// returns early: every tile publishes.
static_assert(sizeof(ms_elem) == 4, "monoscan: select counts in 32 bits");
static_assert(MS_ITEMS <= 32, "monoscan: select keeps one bit per item");
{% if select_staged %}// The staged form (sm_80 and newer, 16-byte aligned input): the tile is copied into shared
// memory by cp.async, unswizzled, so no thread holds elements in registers while the block
// looks back. Each warp owns MS_ITEMS rounds of 32 consecutive elements of the tile; a round's
// keep flags are one ballot, which lane k keeps for round k. After the look-back each warp
// replays its rounds: the kept elements of a round go out as one contiguous run.
{% if select_tma %}// The TMA form (sm_90 and newer) copies a full tile with one bulk copy (the buffer is not
// swizzled, so no tensor map is needed), completed on an mbarrier, and prefetches into L2 the
// tile `prefetch` claims ahead, as the staged scan does.
{% endif %}extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_select_staged(const MsMap::in_t* in, MsMap::in_t* out, ms_u64 n, ms_u32 num_tiles,
                           ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter,
                           ms_u32 epoch, ms_elem* total_out{% if select_tma %}, ms_prefetch prefetch{% endif %}) {
    typedef MsMap::in_t in_t;
    extern __shared__ ms_chunk_bits ms_select_buffer[];
    __shared__ ms_staged_smem sm;
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
{% if select_tma %}    __shared__ alignas(8) ms_u64 bar;
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
{% else %}struct ms_select_smem {
    MsMap::in_t buf[MS_WARPS][MS_WARP_BUF];
    ms_elem warp_sums[MS_WARPS];
    ms_elem prefix;
    ms_u32 tile;
};
extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_select_mapped(const MsMap::in_t* in, MsMap::in_t* out, ms_u64 n, ms_u32 num_tiles,
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
{% endif %}{% endif %}{% if not staged %}template <typename Map>
__device__ __forceinline__ void ms_single_pass(const typename Map::in_t* in, ms_elem* out, ms_u64 n, ms_u32 num_tiles,
                              ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter,
                              ms_u32 epoch, int exclusive, ms_elem init, int has_init,
                              ms_elem* total_out, ms_tile_smem& sm) {
    const ms_u32 tile = ms_claim_tile(counter, num_tiles, sm);
    const ms_u64 base = (ms_u64)tile * MS_TILE;
    const ms_u64 valid = ms_valid(base, n);
    ms_elem items[MS_ITEMS];
    ms_load_tile<Map>(in, base, valid, items, sm);
    ms_elem aggregate;
    const ms_elem excl = ms_block_exclusive(ms_thread_fold(items), aggregate, sm);
    if (threadIdx.x < 32) {
        const ms_elem prefix = ms_lookback(tile, aggregate, num_tiles, state, aggs, incls, epoch, init,
                                           has_init, total_out);
        if (threadIdx.x == 0) sm.prefix = prefix;
    }
    __syncthreads();
    const bool carried = tile > 0 || has_init;
    const ms_elem start = carried ? MsOp::combine(sm.prefix, excl) : excl;
    ms_thread_scan(items, start, exclusive);
    ms_store_tile(out, base, valid, items, sm);
}
extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_scan_single_pass(const ms_elem* in, ms_elem* out, ms_u64 n, ms_u32 num_tiles,
                              ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter,
                              ms_u32 epoch, int exclusive, ms_elem init, int has_init,
                              ms_elem* total_out) {
    __shared__ ms_tile_smem sm;
    ms_single_pass<MsNoMap>(in, out, n, num_tiles, state, aggs, incls, counter, epoch, exclusive,
                            init, has_init, total_out, sm);
}
{% if map %}extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_scan_single_pass_mapped(const MsMap::in_t* in, ms_elem* out, ms_u64 n, ms_u32 num_tiles,
                              ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter,
                              ms_u32 epoch, int exclusive, ms_elem init, int has_init,
                              ms_elem* total_out) {
    __shared__ ms_tile_smem sm;
    ms_single_pass<MsMap>(in, out, n, num_tiles, state, aggs, incls, counter, epoch, exclusive,
                          init, has_init, total_out, sm);
}
{% endif %}{% endif %}
{% if staged %}// ---- Staged single-pass scan (sm_80 and newer) ----
// The same decoupled look-back, with the tile copied into shared memory by cp.async instead
// of through registers: a block holds no items in registers while it looks back, so residency
// is bounded by shared memory alone and more tiles' loads are in flight per SM. Each block
// claims one tile number from the counter, as the register kernel does (a block that held a
// second claimed tile would delay that tile's aggregate behind its own look-back, and every
// later tile's look-back behind it). The buffer is swizzled at 16-byte granularity (chunk c
// lives at c ^ ((c >> MS_SWZ) & 7)), so that the striped copies and each thread's blocked run
// of MS_ITEMS elements both touch every bank group once per phase. Requires 16-byte aligned
// input and output (checked before launch) and elements whose size divides 16.
#define MS_CHUNK_ELEMS ((int)(16 / sizeof(ms_elem)))
#define MS_TILE_CHUNKS (MS_TILE / MS_CHUNK_ELEMS)
#define MS_THREAD_CHUNKS (MS_ITEMS / MS_CHUNK_ELEMS)
static_assert(16 % sizeof(ms_elem) == 0 && MS_ITEMS % (16 / sizeof(ms_elem)) == 0,
              "monoscan: staged tiles need elements whose size divides 16 and whole chunks per thread");
template <typename In>
union ms_chunk {
    ms_chunk_bits bits;
    In e[MS_CHUNK_ELEMS];
};
{% if tma %}// The TMA form (sm_90 and newer): a full tile arrives by MS_TMA_BOXES tensor copies (one for
// tiles of up to 256 threads), issued by one thread, instead of MS_TILE_CHUNKS cp.async copies,
// so the load/store unit carries only the look-back's traffic (measured in
// docs/performance.md). The tensor map (built by the host) views the input as rows of 128
// bytes, one row per thread's run, in boxes of MS_BLOCK / MS_TMA_BOXES rows (a whole number
// of 8-row groups), with the 128-byte swizzle: chunk c of row r lands at c ^ (r & 7) from a
// buffer aligned to 1 KiB, which is ms_swz with MS_SWZ 3, box after box. The block's state
// and its mbarrier follow the tile in dynamic shared memory (MS_TMA_STATE bytes); the kernel
// has no static shared memory.
struct alignas(64) ms_tensor_map { ms_u64 opaque[16]; };
#define MS_TMA_STATE {{ tma_state }}
#define MS_TMA_BOXES {{ tma_boxes }}
#define MS_TMA_ROWS (MS_BLOCK / MS_TMA_BOXES)
static_assert(MS_TMA_ROWS % 8 == 0 && MS_TMA_ROWS <= 256 && MS_TMA_ROWS * MS_TMA_BOXES == MS_BLOCK,
              "monoscan: the TMA form's boxes are whole 8-row groups of at most 256 rows");
// Where the mbarrier sits after the block's state (16-byte aligned, a 16-byte slot).
#define MS_TMA_BAR_OFFSET ((sizeof(ms_staged_smem) + 15) / 16 * 16)
static_assert(MS_THREAD_CHUNKS == 8 && MS_SWZ == 3, "monoscan: the TMA form needs one 128-byte row per thread");
static_assert(MS_TMA_BAR_OFFSET + 16 <= MS_TMA_STATE,
              "monoscan: the TMA form's block state does not fit after the tile");
// Run by thread 0: copies full tile `tile` into `buf` with MS_TMA_BOXES tensor copies that
// complete on `bar` (initialised before the block's first barrier; used once, so phase 0).
__device__ __forceinline__ void ms_tma_issue(const ms_tensor_map* map, ms_u32 tile, ms_chunk_bits* buf, ms_u64* bar) {
    const ms_u32 b = ms_shared_addr(bar);
    ms_bar_expect(b, (ms_u32)(MS_TILE * sizeof(ms_elem)));
#pragma unroll
    for (int k = 0; k < MS_TMA_BOXES; ++k) {
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, { %2, %3 }], [%4];"
                     ::"r"(ms_shared_addr(buf) + (ms_u32)(k * MS_TMA_ROWS * 128)), "l"(map), "r"(0),
                       "r"((int)(tile * MS_BLOCK + k * MS_TMA_ROWS)), "r"(b) : "memory");
    }
}
{% endif %}// `tmap` and `bar` (the TMA form's tensor map and mbarrier) are null in the cp.async form;
// `prefetch` is the TMA form's L2 prefetch plan (all zero, no prefetching, in the other).
template <typename Map>
__device__ __forceinline__ void ms_staged(const typename Map::in_t* in, ms_elem* out, ms_u64 n, ms_u32 num_tiles,
                                          ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter,
                                          ms_u32 epoch, int exclusive, ms_elem init, int has_init,
                                          ms_elem* total_out, ms_chunk_bits* buf, ms_staged_smem& sm,
                                          const void* tmap, ms_u64* bar, const ms_prefetch& prefetch) {
    typedef typename Map::in_t in_t;
    static_assert(sizeof(in_t) == sizeof(ms_elem), "monoscan: staged scans map in place");
    if (threadIdx.x == 0) {
        sm.tile = ms_take_tile(counter, num_tiles);
{% if tma %}        ms_bar_init(ms_shared_addr(bar));
        ms_pace(counter, epoch, sm.tile, prefetch);
{% endif %}    }
    __syncthreads();
    const ms_u32 tile = sm.tile;
    const ms_u64 base = (ms_u64)tile * MS_TILE;
    const ms_u64 valid = ms_valid(base, n);
    const bool full = valid == (ms_u64)MS_TILE;
{% if tma %}    // A tensor copy for a full tile in a buffer aligned as the swizzle assumes; cp.async
    // (the same layout) for the last, partial tile.
    const bool tensor = full && (ms_shared_addr(buf) & 1023) == 0;
    if (tensor && threadIdx.x == 0) ms_tma_issue((const ms_tensor_map*)tmap, tile, buf, bar);
    ms_prefetch_rows(in, n, tile, prefetch);
    if (tensor) {
        ms_bar_wait(ms_shared_addr(bar));
    } else {
        ms_stage_tile<in_t, true>(in, n, tile, buf);
    }
{% else %}    ms_stage_tile<in_t, true>(in, n, tile, buf);
{% endif %}    const int first = threadIdx.x * MS_ITEMS;
    // This thread's run, folded in order; elements past the end count as the identity.
    ms_elem acc = MsOp::identity();
#pragma unroll
    for (int j = 0; j < MS_THREAD_CHUNKS; ++j) {
        ms_chunk<in_t> ch;
        ch.bits = buf[ms_swz(threadIdx.x * MS_THREAD_CHUNKS + j)];
#pragma unroll
        for (int e = 0; e < MS_CHUNK_ELEMS; ++e) {
            const int idx = first + j * MS_CHUNK_ELEMS + e;
            const ms_elem x = (full || (ms_u64)idx < valid) ? Map::apply(ch.e[e]) : MsOp::identity();
            acc = (j == 0 && e == 0) ? x : MsOp::combine(acc, x);
        }
    }
    ms_elem aggregate;
    const ms_elem excl = ms_block_exclusive(acc, aggregate, sm);
    if (threadIdx.x < 32) {
        const ms_elem prefix = ms_lookback(tile, aggregate, num_tiles, state, aggs, incls, epoch, init,
                                           has_init, total_out);
        if (threadIdx.x == 0) sm.prefix = prefix;
    }
    __syncthreads();
    ms_elem run = (tile > 0 || has_init) ? MsOp::combine(sm.prefix, excl) : excl;
    // Scan the run in place (the buffer now holds results, as ms_elem).
#pragma unroll
    for (int j = 0; j < MS_THREAD_CHUNKS; ++j) {
        const int c = ms_swz(threadIdx.x * MS_THREAD_CHUNKS + j);
        ms_chunk<in_t> ch;
        ch.bits = buf[c];
        ms_chunk<ms_elem> res;
#pragma unroll
        for (int e = 0; e < MS_CHUNK_ELEMS; ++e) {
            const ms_elem x = Map::apply(ch.e[e]);
            if (exclusive) {
                res.e[e] = run;
                run = MsOp::combine(run, x);
            } else {
                run = MsOp::combine(run, x);
                res.e[e] = run;
            }
        }
        buf[c] = res.bits;
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
            const ms_chunk<ms_elem>* ch = (const ms_chunk<ms_elem>*)(buf + ms_swz((int)(e / MS_CHUNK_ELEMS)));
            out[base + e] = ch->e[e % MS_CHUNK_ELEMS];
        }
    }
}
{% if tma %}// The TMA form's shared memory: the tile, then the block's state, then the mbarrier.
#define MS_STAGED_SMEM \
    extern __shared__ __align__(128) ms_chunk_bits ms_stage_buffers[]; \
    ms_staged_smem& sm = *(ms_staged_smem*)(ms_stage_buffers + MS_TILE_CHUNKS); \
    ms_u64* bar = (ms_u64*)((char*)&sm + MS_TMA_BAR_OFFSET); \
    const void* tmap = &tin;
#define MS_TMA_PARAM , const __grid_constant__ ms_tensor_map tin, ms_prefetch prefetch
// As many blocks per SM as shared memory allows: registers must never be what lowers it.
#define MS_STAGED_BOUNDS __launch_bounds__(MS_BLOCK, {{ tma_min_blocks }})
{% else %}#define MS_STAGED_SMEM \
    extern __shared__ ms_chunk_bits ms_stage_buffers[]; \
    __shared__ ms_staged_smem sm; \
    ms_u64* bar = 0; \
    const void* tmap = 0; \
    const ms_prefetch prefetch = {0u, 0u, 0u, 0u};
#define MS_TMA_PARAM
#define MS_STAGED_BOUNDS __launch_bounds__(MS_BLOCK)
{% endif %}extern "C" __global__ void MS_STAGED_BOUNDS
{{ prefix }}_scan_staged(const ms_elem* in, ms_elem* out, ms_u64 n, ms_u32 num_tiles,
                         ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter,
                         ms_u32 epoch, int exclusive, ms_elem init, int has_init, ms_elem* total_out MS_TMA_PARAM) {
    MS_STAGED_SMEM
    ms_staged<MsNoMap>(in, out, n, num_tiles, state, aggs, incls, counter, epoch, exclusive, init,
                       has_init, total_out, ms_stage_buffers, sm, tmap, bar, prefetch);
}
{% if map %}extern "C" __global__ void MS_STAGED_BOUNDS
{{ prefix }}_scan_staged_mapped(const MsMap::in_t* in, ms_elem* out, ms_u64 n, ms_u32 num_tiles,
                                ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter,
                                ms_u32 epoch, int exclusive, ms_elem init, int has_init, ms_elem* total_out MS_TMA_PARAM) {
    MS_STAGED_SMEM
    ms_staged<MsMap>(in, out, n, num_tiles, state, aggs, incls, counter, epoch, exclusive, init,
                     has_init, total_out, ms_stage_buffers, sm, tmap, bar, prefetch);
}
{% endif %}{% endif %}{% endif %}
