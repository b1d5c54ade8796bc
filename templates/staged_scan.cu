{% include "lib/tile.cuh" %}
{% include "lib/lookback.cuh" %}
{% include "lib/staging.cuh" %}
{% if tma %}{% include "lib/tma.cuh" %}
{% endif %}// ---- Staged single-pass scan (sm_80 and newer) ----
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
// so the load/store unit carries only the look-back's traffic. The tensor map (built by the host) views the input as rows of 128
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
#define MS_STAGED_BOUNDS __launch_bounds__(MS_BLOCK, {{ min_blocks }})
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
{% endif %}
