{% include "lib/tile.cuh" %}
// ---- Reduce-then-scan (deterministic): tile totals, a scan of them, then the tiles ----
// Reverse (MS_REVERSE 1; the module's operator is then the opposite monoid, so that a forward
// scan of the reversed sequence is the reverse scan): block b takes physical tile
// gridDim.x - 1 - b, loaded and stored from its end (ms_load_tile's `FromEnd`), so that the
// totals come out in logical order and the levels above them scan forwards (the forward
// module of the same operator). A partial tile's missing items are its first ones in logical
// order; they count as the identity, which changes no total and no prefix.
#define MS_REVERSE {{ reverse }}
template <typename Map>
__device__ __forceinline__ void ms_tile_totals(const typename Map::in_t* in, ms_elem* totals, ms_u64 n, ms_tile_smem& sm) {
    ms_elem items[MS_ITEMS];
    const ms_u64 base = ms_grid_tile_base<MS_REVERSE>();
    ms_load_tile<Map, MS_REVERSE>(in, base, ms_valid(base, n), items, sm);
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
