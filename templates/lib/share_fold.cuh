// ---- The staged reduce's share form (TMA forms): each thread folds one contiguous share ----
// The per-tile reduce pays a block reduction per tile, a chain of combines most threads wait
// out; for an expensive combine that dominates. Here thread t of block b folds share
// b * MS_BLOCK + t (lib/shares.cuh). A thread's accumulator runs over its whole share, so the
// block reduces once, in thread order, and the partials stay in sequence order: order is kept
// for any operator. The host folds the bytes past the last whole share apart, into
// partials[gridDim.x], before this launch; with total_out, the last block to finish folds
// partials[0..parts) into it.
{% include "lib/shares.cuh" %}
template <typename Map>
__device__ __forceinline__ void ms_reduce_shares(ms_elem* partials, ms_u64 rows, ms_u32 steps, ms_u32 parts,
                                                 ms_u32* done, ms_elem* total_out, char* bufs,
                                                 ms_staged_smem& sm, ms_u64* bars, const ms_tensor_map* tmap) {
{% if shares %}    typedef typename Map::in_t in_t;
    static_assert(sizeof(in_t) == sizeof(ms_elem), "monoscan: share reductions read elements of the element's size");
    const ms_u32 first_row = blockIdx.x * MS_BLOCK;
    ms_share_start(steps, first_row, bufs, bars, tmap);
    __syncthreads();
    ms_elem acc = MsOp::identity();
    for (ms_u32 j = 0; j < steps; ++j) {
        const int stage = (int)(j % MS_SHARE_STAGES);
        char* buf = bufs + stage * MS_SHARE_STAGE_BYTES;
        ms_bar_wait_parity(ms_shared_addr(bars + stage), (j / MS_SHARE_STAGES) & 1);
        acc = ms_share_fold_step<Map>(buf, MS_SHARE_ELEMS, acc);
        // Every thread is done with this buffer before it is refilled.
        __syncthreads();
        if (threadIdx.x == 0 && j + MS_SHARE_STAGES < steps) {
            ms_share_issue(tmap, j + MS_SHARE_STAGES, first_row, buf, bars + stage);
        }
    }
    // Rows past the map's end (the last block's) arrived as zeros: they count as the identity.
    const ms_elem total = ms_block_reduce((ms_u64)first_row + threadIdx.x < rows ? acc : MsOp::identity(), sm);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
    ms_fold_last(partials, parts, done, total_out, sm);
{% else %}    // Elements of this size make steps too wide for shared memory: the host never launches it.
    __trap();
{% endif %}}
// Dynamic shared memory: 1 KiB of slack to start the buffers on 1 KiB, the stages' buffers,
// the block's state, the mbarriers.
#define MS_SHARES_SMEM \
    extern __shared__ __align__(1024) char ms_share_raw[]; \
    char* bufs = ms_share_raw + ((1024 - (ms_shared_addr(ms_share_raw) & 1023)) & 1023); \
    ms_staged_smem& sm = *(ms_staged_smem*)(bufs + MS_SHARE_STAGES * MS_SHARE_STAGE_BYTES); \
    ms_u64* bars = (ms_u64*)((char*)&sm + MS_REDUCE_BAR_OFFSET);
extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_reduce_shares(ms_elem* partials, ms_u64 rows, ms_u32 steps, ms_u32 parts, ms_u32* done,
                           ms_elem* total_out, const __grid_constant__ ms_tensor_map tin) {
    MS_SHARES_SMEM
    ms_reduce_shares<MsNoMap>(partials, rows, steps, parts, done, total_out, bufs, sm, bars, &tin);
}
{% if map %}extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_reduce_shares_mapped(ms_elem* partials, ms_u64 rows, ms_u32 steps, ms_u32 parts, ms_u32* done,
                                  ms_elem* total_out, const __grid_constant__ ms_tensor_map tin) {
    MS_SHARES_SMEM
    ms_reduce_shares<MsMap>(partials, rows, steps, parts, done, total_out, bufs, sm, bars, &tin);
}
{% endif %}