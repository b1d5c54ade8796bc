{% include "lib/tile.cuh" %}
// ---- Reduce-then-scan (deterministic): tile totals, a scan of them, then the tiles ----
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
{% endif %}

{% include "lib/tile_scan.cuh" %}
