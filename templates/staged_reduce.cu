// The swizzled layout folds a long run's last, partial tile a group at a time
// (MS_FOLD_UNROLLED_TAIL in lib/tile.cuh says why).
#define MS_ROLLED_PARTIAL_FOLD
{% include "lib/tile.cuh" %}
{% include "lib/fold_last.cuh" %}
{% include "lib/staging.cuh" %}
{% if copy != "cp_async" %}{% include "lib/tma.cuh" %}
{% endif %}{% if linear %}{% include "lib/run_linear.cuh" %}{% else %}{% include "lib/run_swizzled.cuh" %}{% endif %}
{% if copy == "tensor" %}{% include "lib/tensor_copy.cuh" %}
{% endif %}// ---- Staged reduce: each block folds a contiguous run of tiles, in order, into partials[block];
// with total_out, the last block to finish folds partials[0..parts) into it ----
// Tiles pass through MS_STAGES buffers of dynamic shared memory: while the block folds one, the
// next ones are being copied in (on sm_90 by the TMA: tensor copies of 128-byte rows for the
// swizzled layout, one bulk copy for the linear one, each stage completing on its own
// mbarrier; by cp.async otherwise, MS_STAGES - 1 tiles ahead, and for the TMA forms' last,
// partial tile). Each thread folds its run of
// the tile from shared memory (in MS_RUN_PARTS chains for expensive combines), the block
// reduces the runs in thread order, and thread 0 folds the tiles' totals in tile order. No
// element is held in registers while it waits, so elements of any size up to the staged
// limit keep the same bytes in flight. A widening input map (rendered with `in_swizzle`: the
// swizzled layout, one chain, cp.async copies) stages its narrower inputs, so a stage holds a
// tile of inputs, and each thread reads its run of them into registers (lib/run_swizzled.cuh).
#define MS_STAGES {{ stages }}
// 16-byte chunks of one stage for inputs of type In: a tile of them.
#define MS_REDUCE_STAGE_CHUNKS(In) ((int)(MS_TILE * sizeof(In) / 16))
// Every stage's buffer starts on 1 KiB (the tensor copies' swizzle period) when the first does.
static_assert((MS_TILE_CHUNKS * 16) % 1024 == 0 || {% if copy == "tensor" %}false{% else %}true{% endif %},
              "monoscan: the tensor form's stages are whole 1 KiB periods");
// Where the stages' mbarriers sit after the block's state (16-byte aligned, 8 bytes each).
#define MS_REDUCE_BAR_OFFSET ((sizeof(ms_staged_smem) + 15) / 16 * 16)
{% if copy != "cp_async" %}// Run by thread 0: starts the copy of full tile `t` into `buf`, completing on barrier `b`.
__device__ __forceinline__ void ms_reduce_issue(const ms_elem* in, const void* tmap, ms_u64 t, ms_chunk_bits* buf, ms_u64* bar) {
{% if copy == "tensor" %}    ms_tma_copy_tile((const ms_tensor_map*)tmap, (ms_u32)t, buf, bar);
{% else %}    ms_bulk_issue(in + t * MS_TILE, (ms_u32)(MS_TILE * sizeof(ms_elem)), buf, ms_shared_addr(bar));
{% endif %}}
{% endif %}template <typename Map>
__device__ __forceinline__ void ms_reduce_staged(const typename Map::in_t* in, ms_elem* partials, ms_u64 n,
                                                 ms_u64 tiles_per_block, ms_u32 parts, ms_u32* done,
                                                 ms_elem* total_out, ms_chunk_bits* bufs,
                                                 ms_staged_smem& sm, ms_u64* bars, const void* tmap) {
    typedef typename Map::in_t in_t;
    static_assert(sizeof(in_t) == sizeof(ms_elem){% if in_swizzle %} || sizeof(in_t) < sizeof(ms_elem){% endif %},
                  "monoscan: staged reductions read elements of the element's size, or widen narrower inputs by cp.async");
    constexpr int STAGE_CHUNKS = MS_REDUCE_STAGE_CHUNKS(in_t);
    const ms_u64 num_tiles = (n + MS_TILE - 1) / MS_TILE;
    const ms_u64 first = (ms_u64)blockIdx.x * tiles_per_block;
    const ms_u64 last = first + tiles_per_block < num_tiles ? first + tiles_per_block : num_tiles;
{% if copy != "cp_async" %}    // Full tiles arrive by the TMA (the tensor form also needs buffers on 1 KiB); the last,
    // partial tile by cp.async.
    const bool aligned = {% if copy == "tensor" %}(ms_shared_addr(bufs) & 1023) == 0{% else %}true{% endif %};
    if (threadIdx.x == 0) {
#pragma unroll
        for (int s = 0; s < MS_STAGES; ++s) ms_bar_init(ms_shared_addr(bars + s));
#pragma unroll
        for (int s = 0; s < MS_STAGES; ++s) {
            const ms_u64 t = first + s;
            if (aligned && t < last && ms_valid(t * MS_TILE, n) == (ms_u64)MS_TILE) {
                ms_reduce_issue((const ms_elem*)in, tmap, t, bufs + s * STAGE_CHUNKS, bars + s);
            }
        }
    }
    __syncthreads();
{% else %}    // One commit group per tile, the first MS_STAGES - 1 tiles now, each later one as the tile
    // MS_STAGES - 1 before it is folded (empty groups past the block's last tile keep the count
    // of groups in flight fixed).
#pragma unroll
    for (int s = 0; s + 1 < MS_STAGES; ++s) {
        if (first + s < last) {
            ms_stage_issue<in_t, {% if linear %}false{% else %}true{% endif %}>(in, n, (ms_u32)(first + s), bufs + s * STAGE_CHUNKS);
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
    }
{% endif %}    ms_elem acc = MsOp::identity();
    for (ms_u64 t = first; t < last; ++t) {
        const int stage = (int)((t - first) % MS_STAGES);
        ms_chunk_bits* buf = bufs + stage * STAGE_CHUNKS;
        const ms_u64 valid = ms_valid(t * MS_TILE, n);
        const bool full = valid == (ms_u64)MS_TILE;
{% if copy != "cp_async" %}        if (aligned && full) {
            ms_bar_wait_parity(ms_shared_addr(bars + stage), (ms_u32)(((t - first) / MS_STAGES) & 1));
        } else {
            ms_stage_tile<in_t, {% if linear %}false{% else %}true{% endif %}>(in, n, (ms_u32)t, buf);
        }
{% else %}        // The buffer folded last iteration takes the tile MS_STAGES - 1 ahead; this tile's group
        // (MS_STAGES - 1 groups back) has landed for every thread after the barrier.
        const ms_u64 ahead = t + MS_STAGES - 1;
        if (ahead < last) {
            ms_stage_issue<in_t, {% if linear %}false{% else %}true{% endif %}>(in, n, (ms_u32)ahead,
                                                                          bufs + (int)((ahead - first) % MS_STAGES) * STAGE_CHUNKS);
        }
        asm volatile("cp.async.commit_group;\n\tcp.async.wait_group %0;" ::"n"(MS_STAGES - 1) : "memory");
        __syncthreads();
{% endif %}        ms_elem parts[MS_RUN_PARTS];
        ms_run_fold<Map>(buf, full, valid, parts);
        ms_elem x = parts[0];
#pragma unroll
        for (int c = 1; c < MS_RUN_PARTS; ++c) x = MsOp::combine(x, parts[c]);
        const ms_elem total = ms_block_reduce(x, sm);
        if (threadIdx.x == 0) acc = t == first ? total : MsOp::combine(acc, total);
        // Every thread is done with this stage's buffer (and the warp sums) before it is
        // refilled.
        __syncthreads();
{% if copy != "cp_async" %}        const ms_u64 next = t + MS_STAGES;
        if (threadIdx.x == 0 && aligned && next < last && ms_valid(next * MS_TILE, n) == (ms_u64)MS_TILE) {
            ms_reduce_issue((const ms_elem*)in, tmap, next, buf, bars + stage);
        }
{% endif %}    }
    if (threadIdx.x == 0) partials[blockIdx.x] = acc;
    ms_fold_last(partials, parts, done, total_out, sm);
}
// Dynamic shared memory: the stages' buffers (tiles of inputs of type In), then the block's
// state, then the mbarriers.
#define MS_REDUCE_SMEM(In) \
    extern __shared__ __align__(1024) ms_chunk_bits ms_reduce_buffers[]; \
    ms_staged_smem& sm = *(ms_staged_smem*)(ms_reduce_buffers + MS_STAGES * MS_REDUCE_STAGE_CHUNKS(In)); \
    ms_u64* bars = (ms_u64*)((char*)&sm + MS_REDUCE_BAR_OFFSET);
#define MS_REDUCE_PARAM{% if copy == "tensor" %} , const __grid_constant__ ms_tensor_map tin{% endif %}
#define MS_REDUCE_TMAP {% if copy == "tensor" %}&tin{% else %}0{% endif %}
extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_reduce_staged(const ms_elem* in, ms_elem* partials, ms_u64 n, ms_u64 tiles_per_block, ms_u32 parts,
                           ms_u32* done, ms_elem* total_out MS_REDUCE_PARAM) {
    MS_REDUCE_SMEM(ms_elem)
    ms_reduce_staged<MsNoMap>(in, partials, n, tiles_per_block, parts, done, total_out, ms_reduce_buffers, sm,
                              bars, MS_REDUCE_TMAP);
}
{% if map %}extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_reduce_staged_mapped(const MsMap::in_t* in, ms_elem* partials, ms_u64 n, ms_u64 tiles_per_block,
                                  ms_u32 parts, ms_u32* done, ms_elem* total_out MS_REDUCE_PARAM) {
    MS_REDUCE_SMEM(MsMap::in_t)
    ms_reduce_staged<MsMap>(in, partials, n, tiles_per_block, parts, done, total_out, ms_reduce_buffers, sm,
                            bars, MS_REDUCE_TMAP);
}
{% endif %}
{% if copy != "cp_async" %}{% include "lib/share_fold.cuh" %}
{% endif %}