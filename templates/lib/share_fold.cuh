// ---- The staged reduce's share form (TMA forms): each thread folds one contiguous share ----
// The per-tile reduce pays a block reduction per tile, a chain of combines most threads wait
// out; for an expensive combine that dominates. Here thread t of block b folds share
// b * MS_BLOCK + t (lib/shares.cuh). A thread's accumulator runs over its whole share, so the
// block reduces once, in thread order, and the partials stay in sequence order: order is kept
// for any operator. The host folds the bytes past the last whole share apart, into
// partials[gridDim.x], before this launch; with total_out, the last block to finish folds
// partials[0..parts) into it.
//
// The stages hold one 128-byte column of every row each, not a whole step of
// MS_SHARE_COLUMNS: an element may then start in one column and end in the next, and its
// thread keeps the units read so far in registers across the barrier that frees the first
// column's buffer. A step's layout repeats from step to step, so every element's columns are
// known when the kernel is compiled. A thread's bytes in shared memory are the same for every
// element size (MS_SHARE_STAGES x 128), so as many blocks fit an SM for 24- and 48-byte
// elements as for 16-byte ones, with as many chains of combines in flight.
{% include "lib/shares.cuh" %}
// Bytes of one stage of the reduce: one 128-byte column of each of the block's rows.
#define MS_RSHARE_STAGE_BYTES (MS_BLOCK * 128)
{% if shares %}// Thread 0: starts the copy of column `k` (counted over the whole share) of the block's rows
// into `buf`, completing on `bar`.
__device__ __forceinline__ void ms_share_issue_column(const ms_tensor_map* map, ms_u32 k, ms_u32 first_row, char* buf,
                                                      ms_u64* bar) {
    const ms_u32 b = ms_shared_addr(bar);
    ms_bar_expect(b, (ms_u32)MS_RSHARE_STAGE_BYTES);
    ms_share_issue_boxes(map, k, first_row, buf, b);
}
{% endif %}template <typename Map>
__device__ __forceinline__ void ms_reduce_shares(ms_elem* partials, ms_u64 rows, ms_u32 steps, ms_u32 parts,
                                                 ms_u32* done, ms_elem* total_out, char* bufs,
                                                 ms_staged_smem& sm, ms_u64* bars, const ms_tensor_map* tmap) {
{% if shares %}    typedef typename Map::in_t in_t;
    static_assert(sizeof(in_t) == sizeof(ms_elem), "monoscan: share reductions read elements of the element's size");
    const ms_u32 first_row = blockIdx.x * MS_BLOCK;
    const ms_u32 columns = steps * MS_SHARE_COLUMNS;
    if (threadIdx.x == 0) {
#pragma unroll
        for (int s = 0; s < MS_SHARE_STAGES; ++s) ms_bar_init(ms_shared_addr(bars + s));
#pragma unroll
        for (int s = 0; s < MS_SHARE_STAGES; ++s) {
            if ((ms_u32)s < columns) {
                ms_share_issue_column(tmap, (ms_u32)s, first_row, bufs + s * MS_RSHARE_STAGE_BYTES, bars + s);
            }
        }
    }
    __syncthreads();
    ms_elem acc = MsOp::identity();
#if MS_SHARE_COLUMNS > 1
    // The element being gathered: units from one column, then (where it straddles) the next.
    union {
        ms_share_unit u[MS_SHARE_UNITS];
        in_t x;
    } part;
#endif
    for (ms_u32 j = 0; j < steps; ++j) {
#pragma unroll
        for (int c = 0; c < MS_SHARE_COLUMNS; ++c) {
            const ms_u32 k = j * MS_SHARE_COLUMNS + c;
            const int stage = (int)(k % MS_SHARE_STAGES);
            char* buf = bufs + stage * MS_RSHARE_STAGE_BYTES;
            ms_bar_wait_parity(ms_shared_addr(bars + stage), (k / MS_SHARE_STAGES) & 1);
#if MS_SHARE_COLUMNS == 1
            // Whole elements in every column.
            acc = ms_share_fold_step<Map>(buf, MS_SHARE_ELEMS, acc);
#else
            // The elements with a unit in column c, in order (every bound is a constant).
#pragma unroll
            for (int e = 0; e < MS_SHARE_ELEMS; ++e) {
                const int lo = e * (int)sizeof(ms_elem), hi = lo + (int)sizeof(ms_elem) - 1;
                if (lo / 128 > c || hi / 128 < c) continue;
#pragma unroll
                for (int q = 0; q < MS_SHARE_UNITS; ++q) {
                    const int byte = lo + q * MS_SHARE_UNIT;
                    if (byte / 128 == c) part.u[q] = *(const ms_share_unit*)(buf + ms_share_offset(byte & 127));
                }
                if (hi / 128 == c) acc = MsOp::combine_ilp(acc, Map::apply(part.x));
            }
#endif
            // Every thread is done with this buffer before it is refilled.
            __syncthreads();
            if (threadIdx.x == 0 && k + MS_SHARE_STAGES < columns) {
                ms_share_issue_column(tmap, k + MS_SHARE_STAGES, first_row, buf, bars + stage);
            }
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
    ms_staged_smem& sm = *(ms_staged_smem*)(bufs + MS_SHARE_STAGES * MS_RSHARE_STAGE_BYTES); \
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