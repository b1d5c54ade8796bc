// Whether the scan runs from the end (see "Reverse" below); before the includes, whose staged
// runs read it.
#define MS_REVERSE {{ reverse }}
{% include "lib/tile.cuh" %}
{% include "lib/lookback.cuh" %}
{% include "lib/staging.cuh" %}
{% if copy != "cp_async" %}{% include "lib/tma.cuh" %}
{% endif %}{% if linear %}{% include "lib/run_linear.cuh" %}{% else %}{% include "lib/run_swizzled.cuh" %}{% endif %}
// ---- Staged single-pass scan (sm_80 and newer) ----
// The same decoupled look-back, with the tile copied into shared memory instead of through
// registers: a block holds no items in registers while it looks back, so residency is bounded
// by shared memory alone and more tiles' loads are in flight per SM. Each block scans one tile
// (a block that held a second tile would delay that tile's aggregate behind its own look-back,
// and every later tile's look-back behind it). In grid order (`grid_order`) block b scans tile
// b, with no atomic claim before its copy: in a cooperative grid of one wave, whose blocks are
// all resident together, or in an ordinary launch that relies on blocks starting in index
// order (`TileOrder::BlockIndex`). Otherwise each block claims its tile number from the
// counter, as the register kernel does. The tile's layout in shared memory
// (swizzled 16-byte chunks for power-of-two element sizes, or linear for any size) is the
// included run layout's, which also folds, scans and stores each thread's run. Requires 16-byte aligned input and output
// (checked before launch). An input map maps in place, or (rendered with `in_swizzle`: the
// swizzled layout, one chain, cp.async copies) widens narrower inputs staged at the front of
// the tile's buffer (lib/run_swizzled.cuh).
//
// Reverse (MS_REVERSE 1; the module's operator is then the opposite monoid, so that a forward
// scan of the reversed sequence is the reverse scan): the k-th tile claimed is physical tile
// num_tiles - 1 - k, so the partial tile, physically last, is scanned first, and the runs read
// and write each tile from its end (lib/staging.cuh). Copies, prefetches and stores are the
// forward form's, of physical tiles. A partial tile's missing items are its first ones in
// logical order; they count as the identity, which changes no prefix.
{% if copy == "tensor" %}{% include "lib/tensor_copy.cuh" %}
// The tensor form (sm_90 and newer): full tiles arrive by tensor copies. The block's state and
// its mbarrier (used once, so phase 0) follow the tile in dynamic shared memory (MS_TMA_STATE
// bytes); the kernel has no static shared memory.
{% elif copy == "bulk" %}// The bulk form (sm_90 and newer): a full tile arrives by one bulk copy (the TMA without a
// tensor map: the tile's bytes land in order, as the linear layout keeps them), issued by one
// thread and completed on an mbarrier. The block's state and its mbarrier follow the tile in
// dynamic shared memory (MS_TMA_STATE bytes); the kernel has no static shared memory.
{% endif %}{% if copy != "cp_async" %}#define MS_TMA_STATE {{ tma_state }}
// Where the mbarrier sits after the block's state (16-byte aligned, a 16-byte slot).
#define MS_TMA_BAR_OFFSET ((sizeof(ms_staged_smem) + 15) / 16 * 16)
static_assert(MS_TMA_BAR_OFFSET + 16 <= MS_TMA_STATE,
              "monoscan: the TMA form's block state does not fit after the tile");
{% endif %}// `tmap` and `bar` (the tensor map and the mbarrier) are null in the cp.async form, `tmap` also
// in the bulk form; `prefetch` is the L2 prefetch plan of the TMA forms (all zero, no
// prefetching, in the cp.async form).
template <typename Map>
__device__ __forceinline__ void ms_staged(const typename Map::in_t* in, ms_elem* out, ms_u64 n, ms_u32 num_tiles,
                                          ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter,
                                          ms_u32 epoch, int grid_order, int exclusive, ms_elem init,
                                          int has_init, ms_elem* total_out, ms_chunk_bits* buf, ms_staged_smem& sm,
                                          const void* tmap, ms_u64* bar, const ms_prefetch& prefetch) {
    typedef typename Map::in_t in_t;
    static_assert(sizeof(in_t) == sizeof(ms_elem){% if in_swizzle %} || sizeof(in_t) < sizeof(ms_elem){% endif %},
                  "monoscan: staged scans map in place or, where rendered for it, widen");
    if (threadIdx.x == 0) {
        sm.tile = grid_order ? blockIdx.x : ms_take_tile(counter, num_tiles);
{% if copy != "cp_async" %}        ms_bar_init(ms_shared_addr(bar));
        ms_pace(counter, epoch, sm.tile, prefetch);
{% endif %}    }
    __syncthreads();
    // `claim` orders the look-back; `tile` is where the items are.
    const ms_u32 claim = sm.tile;
    const ms_u32 tile = MS_REVERSE ? num_tiles - 1 - claim : claim;
    const ms_u64 base = (ms_u64)tile * MS_TILE;
    const ms_u64 valid = ms_valid(base, n);
    const bool full = valid == (ms_u64)MS_TILE;
{% if copy == "tensor" %}    // A tensor copy for a full tile in a buffer aligned as the swizzle assumes; cp.async
    // (the same layout) for the last, partial tile.
    const bool tensor = full && (ms_shared_addr(buf) & 1023) == 0;
    if (tensor && threadIdx.x == 0) ms_tma_copy_tile((const ms_tensor_map*)tmap, tile, buf, bar);
    ms_prefetch_rows(in, n, claim, prefetch, MS_REVERSE, num_tiles);
    if (tensor) {
        ms_bar_wait(ms_shared_addr(bar));
    } else {
        ms_stage_tile<in_t, true>(in, n, tile, buf);
    }
{% elif copy == "bulk" %}    // One bulk copy for a full tile; cp.async for the last, partial one.
    if (full && threadIdx.x == 0) {
        ms_bulk_issue(in + base, (ms_u32)(MS_TILE * sizeof(in_t)), buf, ms_shared_addr(bar));
    }
    ms_prefetch_rows(in, n, claim, prefetch, MS_REVERSE, num_tiles);
    if (full) {
        ms_bar_wait(ms_shared_addr(bar));
    } else {
        ms_stage_tile<in_t, false>(in, n, tile, buf);
    }
{% else %}    ms_stage_tile<in_t, {% if linear %}false{% else %}true{% endif %}>(in, n, tile, buf);
{% endif %}    // This thread's run, folded in order; elements past the end count as the identity.
    ms_elem parts[MS_RUN_PARTS];
    ms_run_fold<Map>(buf, full, valid, parts);
    ms_elem acc = parts[0];
#pragma unroll
    for (int c = 1; c < MS_RUN_PARTS; ++c) acc = MsOp::combine_ilp(acc, parts[c]);
    ms_elem aggregate;
    const ms_elem excl = ms_block_exclusive(acc, aggregate, sm);
    if (threadIdx.x < 32) {
        const ms_elem prefix = ms_lookback(claim, aggregate, num_tiles, state, aggs, incls, epoch, init,
                                           has_init, total_out);
        if (threadIdx.x == 0) sm.prefix = prefix;
    }
    __syncthreads();
    const ms_elem run = (claim > 0 || has_init) ? MsOp::combine_ilp(sm.prefix, excl) : excl;
    // Scan the run in place (the buffer now holds results, as ms_elem).
    ms_run_scan<Map>(buf, run, parts, exclusive, full, valid);
    __syncthreads();
    ms_run_store(out + base, buf, full, valid);
}
{% if copy != "cp_async" %}// The TMA forms' shared memory: the tile, then the block's state, then the mbarrier.
#define MS_STAGED_SMEM \
    extern __shared__ __align__(128) ms_chunk_bits ms_stage_buffers[]; \
    ms_staged_smem& sm = *(ms_staged_smem*)(ms_stage_buffers + MS_TILE_CHUNKS); \
    ms_u64* bar = (ms_u64*)((char*)&sm + MS_TMA_BAR_OFFSET); \
    const void* tmap = {% if copy == "tensor" %}&tin{% else %}0{% endif %};
#define MS_TMA_PARAM {% if copy == "tensor" %}, const __grid_constant__ ms_tensor_map tin{% endif %}, ms_prefetch prefetch
// As many blocks per SM as the shape policy plans (shared memory, or registers for large
// elements): the compiler must never let registers lower it further.
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
                         ms_u32 epoch, int grid_order, int exclusive, ms_elem init, int has_init,
                         ms_elem* total_out MS_TMA_PARAM) {
    MS_STAGED_SMEM
    ms_staged<MsNoMap>(in, out, n, num_tiles, state, aggs, incls, counter, epoch, grid_order, exclusive, init,
                       has_init, total_out, ms_stage_buffers, sm, tmap, bar, prefetch);
}
{% if map %}extern "C" __global__ void MS_STAGED_BOUNDS
{{ prefix }}_scan_staged_mapped(const MsMap::in_t* in, ms_elem* out, ms_u64 n, ms_u32 num_tiles,
                                ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter,
                                ms_u32 epoch, int grid_order, int exclusive, ms_elem init, int has_init,
                                ms_elem* total_out MS_TMA_PARAM) {
    MS_STAGED_SMEM
    ms_staged<MsMap>(in, out, n, num_tiles, state, aggs, incls, counter, epoch, grid_order, exclusive, init,
                     has_init, total_out, ms_stage_buffers, sm, tmap, bar, prefetch);
}
{% endif %}
