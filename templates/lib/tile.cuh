// ---- Register tiles: MS_BLOCK threads x MS_ITEMS items, the building blocks of every tiled
// kernel family: tile loads and stores, thread folds and scans, warp and block scans and
// reductions ----
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
// Runs of more than this many items fold the last, partial tile of a staged kernel through a
// rolled loop (`run_chains.cuh`, `run_swizzled.cuh`), so that its per-item checks, unrolled
// over the whole run, do not raise the registers every full tile's fold is compiled with
// (1-byte elements in runs of 124 or 128: 255 registers and spills, one block per SM where
// two fit); shorter runs check their items in the unrolled loop, which ran faster there
// (16-byte elements in 384 x 7 tiles capped at 32 registers).
#define MS_FOLD_UNROLLED_TAIL 16

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

// Loads one warp's part of a tile: `valid` elements (any count; at most MS_WARP_TILE are read)
// from `wbase`, read warp-striped and transposed through the warp's buffer `wbuf` into items[],
// blocked order, through `Map`; the rest is the identity. `FromEnd`: the warp tile in reverse
// order (its items from the end of the buffer).
template <typename Map, bool FromEnd = false>
__device__ __forceinline__ void ms_load_warp(const typename Map::in_t* in, ms_u64 wbase, ms_i64 wvalid,
                                             ms_elem (&items)[MS_ITEMS], ms_elem* wbuf) {
    const unsigned lane = threadIdx.x & 31;
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
    for (int j = 0; j < MS_ITEMS; ++j) {
        const int q = lane * MS_ITEMS + j;
        items[j] = wbuf[MS_PAD(FromEnd ? MS_WARP_TILE - 1 - q : q)];
    }
    __syncwarp();
}

// Loads `valid` (<= MS_TILE) elements starting at `base` into items[], blocked order, through
// `Map` (the identity map, or the operator's fused input map); the rest is the identity.
// `FromEnd`: the tile in reverse order (logical item p is the element at base + MS_TILE - 1 - p,
// so a partial tile's missing elements are its first logical items): warp w reads warp
// w's mirror, MS_WARPS - 1 - w, and takes its items from the end of its buffer.
template <typename Map, bool FromEnd = false>
__device__ __forceinline__ void ms_load_tile(const typename Map::in_t* in, ms_u64 base, ms_u64 valid,
                                             ms_elem (&items)[MS_ITEMS], ms_tile_smem& sm) {
    const unsigned warp = threadIdx.x >> 5;
    const unsigned part = FromEnd ? MS_WARPS - 1 - warp : warp;
    const ms_u64 wbase = base + (ms_u64)part * MS_WARP_TILE;
    const ms_i64 wvalid = (ms_i64)valid - (ms_i64)part * MS_WARP_TILE;
    ms_load_warp<Map, FromEnd>(in, wbase, wvalid, items, sm.buf[warp]);
}

// Stores the first `valid` elements of the tile from items[] (blocked order) to out + base;
// `FromEnd`: items in reverse order, as ms_load_tile's `FromEnd` loads them.
template <bool FromEnd = false>
__device__ __forceinline__ void ms_store_tile(ms_elem* out, ms_u64 base, ms_u64 valid,
                                              const ms_elem (&items)[MS_ITEMS], ms_tile_smem& sm) {
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned part = FromEnd ? MS_WARPS - 1 - warp : warp;
    ms_elem* wbuf = sm.buf[warp];
    const ms_u64 wbase = base + (ms_u64)part * MS_WARP_TILE;
    const ms_i64 wvalid = (ms_i64)valid - (ms_i64)part * MS_WARP_TILE;
#pragma unroll
    for (int j = 0; j < MS_ITEMS; ++j) {
        const int q = lane * MS_ITEMS + j;
        wbuf[MS_PAD(FromEnd ? MS_WARP_TILE - 1 - q : q)] = items[j];
    }
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

// Inclusive warp scan (Kogge-Stone over shuffles), exact in the first `Lanes` lanes: the
// steps that would only reach lanes past them are left out (the scan of a block's warp totals
// takes log2 of its warps' steps, not five, each a combine's latency the block waits out).
template <unsigned Lanes = 32>
__device__ __forceinline__ ms_elem ms_warp_inclusive(ms_elem x) {
    const unsigned lane = threadIdx.x & 31;
    MS_STEP_UNROLL
    for (unsigned d = 1; d < Lanes; d <<= 1) {
        const ms_elem y = ms_shfl_up(x, d);
        if (lane >= d) x = MsOp::combine_ilp(y, x);
    }
    return x;
}

// Warp reduction in lane order: lane 0 gets x[0] ⊕ x[1] ⊕ ... ⊕ x[31].
__device__ __forceinline__ ms_elem ms_warp_reduce(ms_elem x) {
    const unsigned lane = threadIdx.x & 31;
    MS_STEP_UNROLL
    for (unsigned d = 1; d < 32; d <<= 1) {
        const ms_elem y = ms_shfl_down(x, d);
        if (lane + d < 32) x = MsOp::combine_ilp(x, y);
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
        s = ms_warp_inclusive<MS_WARPS>(s);
        if (lane < MS_WARPS) sm.warp_sums[lane] = s;
    }
    __syncthreads();
    aggregate = sm.warp_sums[MS_WARPS - 1];
    if (lane == 0) exc = warp > 0 ? sm.warp_sums[warp - 1] : MsOp::identity();
    else if (warp > 0) exc = MsOp::combine_ilp(sm.warp_sums[warp - 1], exc);
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
        MS_STEP_UNROLL
        for (int w = 1; w < MS_WARPS; ++w) x = MsOp::combine_ilp(x, sm.warp_sums[w]);
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

// Where this block's tile starts, in a grid of one block per tile: block b takes tile b, or
// (`FromEnd`) tile gridDim.x - 1 - b.
template <bool FromEnd>
__device__ __forceinline__ ms_u64 ms_grid_tile_base() {
    return (ms_u64)(FromEnd ? gridDim.x - 1 - blockIdx.x : blockIdx.x) * MS_TILE;
}
__device__ __forceinline__ ms_u64 ms_valid(ms_u64 base, ms_u64 n) {
    return n - base < (ms_u64)MS_TILE ? n - base : (ms_u64)MS_TILE;
}
