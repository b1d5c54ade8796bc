// ---- The one-tile scan (`tile_scan`): one block scans one tile from a carry ----
// Scans each tile from its carry: carries[tile] when carries is set (they already include
// init), else init (has_init) or nothing. The last tile writes prefix ⊕ total to *total_out.
// A kernel that scans from the end defines MS_REVERSE 1 before it includes this: block b then
// scans physical tile gridDim.x - 1 - b from its end, the carries are in logical order, and
// the last tile is physical tile 0.
#ifndef MS_REVERSE
#define MS_REVERSE 0
#endif
template <typename Map>
__device__ __forceinline__ void ms_tile_scan(const typename Map::in_t* in, ms_elem* out, ms_u64 n,
                                             const ms_elem* carries, int exclusive, ms_elem init,
                                             int has_init, ms_elem* total_out, ms_tile_smem& sm) {
    ms_elem items[MS_ITEMS];
    const ms_u64 tile = blockIdx.x;
    const ms_u64 base = ms_grid_tile_base<MS_REVERSE>();
    const ms_u64 valid = ms_valid(base, n);
    ms_load_tile<Map, MS_REVERSE>(in, base, valid, items, sm);
    ms_elem aggregate;
    const ms_elem excl = ms_block_exclusive(ms_thread_fold(items), aggregate, sm);
    const bool carried = carries != 0 || has_init;
    const ms_elem carry = carries != 0 ? carries[tile] : (has_init ? init : MsOp::identity());
    const ms_elem prefix = carried ? MsOp::combine(carry, excl) : excl;
    ms_thread_scan(items, prefix, exclusive);
    ms_store_tile<MS_REVERSE>(out, base, valid, items, sm);
    if (total_out != 0 && threadIdx.x == 0 && (MS_REVERSE ? base == 0 : base + valid == n)) {
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
{% endif %}
