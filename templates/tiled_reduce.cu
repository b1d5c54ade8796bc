{% include "lib/tile.cuh" %}
{% include "lib/fold_last.cuh" %}
// ---- Reduce: each block folds a contiguous run of tiles, in order, into partials[block];
// with total_out, the last block to finish folds partials[0..parts) into it ----
template <typename Map>
__device__ __forceinline__ void ms_reduce_tiles(const typename Map::in_t* in, ms_elem* partials, ms_u64 n,
                                                ms_u64 tiles_per_block, ms_u32 parts, ms_u32* done,
                                                ms_elem* total_out, ms_tile_smem& sm) {
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
    ms_fold_last(partials, parts, done, total_out, sm);
}
extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_reduce_tiles(const ms_elem* in, ms_elem* partials, ms_u64 n, ms_u64 tiles_per_block,
                          ms_u32 parts, ms_u32* done, ms_elem* total_out) {
    __shared__ ms_tile_smem sm;
    ms_reduce_tiles<MsNoMap>(in, partials, n, tiles_per_block, parts, done, total_out, sm);
}
{% if map %}extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_reduce_tiles_mapped(const MsMap::in_t* in, ms_elem* partials, ms_u64 n, ms_u64 tiles_per_block,
                                 ms_u32 parts, ms_u32* done, ms_elem* total_out) {
    __shared__ ms_tile_smem sm;
    ms_reduce_tiles<MsMap>(in, partials, n, tiles_per_block, parts, done, total_out, sm);
}
{% endif %}
