{% include "lib/tile.cuh" %}
{% include "lib/lookback.cuh" %}
// ---- The single-pass scan with its tile in registers (`scan_single_pass`): one block per
// tile, tiles numbered by claim order, each tile's prefix from the decoupled look-back ----
// Reverse (MS_REVERSE 1; the module's operator is then the opposite monoid, so that a forward
// scan of the reversed sequence is the reverse scan): the k-th tile claimed is physical tile
// num_tiles - 1 - k, so the partial tile, physically last, is scanned first, and each tile is
// loaded and stored from its end (ms_load_tile's `FromEnd`). A partial tile's missing items
// are its first ones in logical order; they count as the identity, which changes no prefix.
#define MS_REVERSE {{ reverse }}
template <typename Map>
__device__ __forceinline__ void ms_single_pass(const typename Map::in_t* in, ms_elem* out, ms_u64 n, ms_u32 num_tiles,
                              ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32* counter,
                              ms_u32 epoch, int exclusive, ms_elem init, int has_init,
                              ms_elem* total_out, ms_tile_smem& sm) {
    // `claim` orders the look-back; `tile` is where the items are.
    const ms_u32 claim = ms_claim_tile(counter, num_tiles, sm);
    const ms_u32 tile = MS_REVERSE ? num_tiles - 1 - claim : claim;
    const ms_u64 base = (ms_u64)tile * MS_TILE;
    const ms_u64 valid = ms_valid(base, n);
    ms_elem items[MS_ITEMS];
    ms_load_tile<Map, MS_REVERSE>(in, base, valid, items, sm);
    ms_elem aggregate;
    const ms_elem excl = ms_block_exclusive(ms_thread_fold(items), aggregate, sm);
    if (threadIdx.x < 32) {
        const ms_elem prefix = ms_lookback(claim, aggregate, num_tiles, state, aggs, incls, epoch, init,
                                           has_init, total_out);
        if (threadIdx.x == 0) sm.prefix = prefix;
    }
    __syncthreads();
    const bool carried = claim > 0 || has_init;
    const ms_elem start = carried ? MsOp::combine(sm.prefix, excl) : excl;
    ms_thread_scan(items, start, exclusive);
    ms_store_tile<MS_REVERSE>(out, base, valid, items, sm);
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
{% endif %}
