{% include "lib/tile.cuh" %}
{% include "lib/staging.cuh" %}
{% include "lib/tma.cuh" %}
{% include "lib/shares.cuh" %}
// ---- The share scan (TMA forms): reduce-then-scan over one contiguous share per thread ----
// For combines that cost more than the bytes they move. A tile-by-tile scan ends every tile
// in a block scan and a look-back, chains of dependent combines that most threads wait out;
// here each resident thread owns one contiguous share of the input (lib/shares.cuh) and runs
// two launches over it: share_totals folds it (its total into row_totals[row], the block's
// total into partials[block]), then share_scan scans it again from its carry: the partials of
// the blocks before its own and the totals of the rows before it in its block, both folded in
// order. Each thread thus combines every element twice, in two long chains that need nothing
// from other threads, and the input is read twice and written once. Results are written in
// place into the stage buffer and copied out by the whole block, whole 128-byte lines.
// The elements past the last whole share (fewer than a share) are row `rows`: the thread of
// that row reads them from global memory, a step's worth per step, in both launches.
#define MS_SHARE_BAR_OFFSET ((sizeof(ms_staged_smem) + 15) / 16 * 16)
// Every thread: the row-th share's part of step `j` folded (or scanned) from `acc`. Rows
// past `rows` (zero-filled by the map) are not touched; row `rows` is the tail, read from
// `in` directly and written (when `out`) to `out` directly.
template <typename Map, bool Scan>
__device__ __forceinline__ ms_elem ms_share_step(const typename Map::in_t* in, ms_elem* out, ms_u64 n,
                                                 ms_u64 row, ms_u64 rows, ms_u32 j, ms_u32 steps,
                                                 char* buf, int exclusive, ms_elem acc) {
    typedef typename Map::in_t in_t;
    if (row < rows) {
        MS_STEP_UNROLL
        for (int e = 0; e < MS_SHARE_ELEMS; ++e) {
            const ms_elem x = Map::apply(ms_share_get<in_t>(buf, e));
            if (Scan && exclusive) ms_share_put(buf, e, acc);
            acc = MsOp::combine_ilp(acc, x);
            if (Scan && !exclusive) ms_share_put(buf, e, acc);
        }
    } else if (row == rows) {
        const ms_u64 base = rows * steps * (ms_u64)MS_SHARE_ELEMS + (ms_u64)j * MS_SHARE_ELEMS;
        for (int e = 0; e < MS_SHARE_ELEMS && base + e < n; ++e) {
            const ms_elem x = Map::apply(in[base + e]);
            if (Scan && exclusive) out[base + e] = acc;
            acc = MsOp::combine_ilp(acc, x);
            if (Scan && !exclusive) out[base + e] = acc;
        }
    }
    return acc;
}
// Thread 0: initialises the stages' barriers and starts the first steps' copies.
__device__ __forceinline__ void ms_share_start(ms_u32 steps, ms_u32 first_row, char* bufs, ms_u64* bars,
                                               const ms_tensor_map* tmap) {
    if (threadIdx.x == 0) {
#pragma unroll
        for (int s = 0; s < MS_SHARE_STAGES; ++s) ms_bar_init(ms_shared_addr(bars + s));
#pragma unroll
        for (int s = 0; s < MS_SHARE_STAGES; ++s) {
            if ((ms_u32)s < steps) ms_share_issue(tmap, (ms_u32)s, first_row, bufs + s * MS_SHARE_STAGE_BYTES, bars + s);
        }
    }
}
template <typename Map>
__device__ __forceinline__ void ms_share_totals(const typename Map::in_t* in, ms_elem* row_totals, ms_elem* partials,
                                                ms_u64 n, ms_u64 rows, ms_u32 steps, char* bufs,
                                                ms_staged_smem& sm, ms_u64* bars, const ms_tensor_map* tmap) {
{% if shares %}    static_assert(sizeof(typename Map::in_t) == sizeof(ms_elem), "monoscan: share scans read elements of the element's size");
    const ms_u32 first_row = blockIdx.x * MS_BLOCK;
    const ms_u64 row = (ms_u64)first_row + threadIdx.x;
    ms_share_start(steps, first_row, bufs, bars, tmap);
    __syncthreads();
    ms_elem acc = MsOp::identity();
    for (ms_u32 j = 0; j < steps; ++j) {
        const int stage = (int)(j % MS_SHARE_STAGES);
        char* buf = bufs + stage * MS_SHARE_STAGE_BYTES;
        ms_bar_wait_parity(ms_shared_addr(bars + stage), (j / MS_SHARE_STAGES) & 1);
        acc = ms_share_step<Map, false>(in, 0, n, row, rows, j, steps, buf, 0, acc);
        // Every thread is done with this buffer before it is refilled.
        __syncthreads();
        if (threadIdx.x == 0 && j + MS_SHARE_STAGES < steps) {
            ms_share_issue(tmap, j + MS_SHARE_STAGES, first_row, buf, bars + stage);
        }
    }
    if (row <= rows) row_totals[row] = acc;
    const ms_elem total = ms_block_reduce(row <= rows ? acc : MsOp::identity(), sm);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
{% else %}    // Elements of this size make steps too wide for shared memory: the host never launches it.
    __trap();
{% endif %}}
template <typename Map>
__device__ __forceinline__ void ms_share_scan(const typename Map::in_t* in, ms_elem* out, const ms_elem* row_totals,
                                              const ms_elem* partials, ms_u64 n, ms_u64 rows, ms_u32 steps,
                                              int exclusive, ms_elem init, int has_init, ms_elem* total_out,
                                              char* bufs, ms_staged_smem& sm, ms_u64* bars,
                                              const ms_tensor_map* tmap) {
{% if shares %}    const ms_u32 first_row = blockIdx.x * MS_BLOCK;
    const ms_u64 row = (ms_u64)first_row + threadIdx.x;
    const ms_u64 share_bytes = (ms_u64)steps * MS_SHARE_COLUMNS * 128;
    ms_share_start(steps, first_row, bufs, bars, tmap);
    // The block's carry: init, then the partials of the blocks before this one, each thread
    // folding a contiguous run of them and the block reducing the runs in thread order.
    const ms_u32 per = (blockIdx.x + MS_BLOCK - 1) / MS_BLOCK;
    const ms_u32 lo = threadIdx.x * per, hi = lo + per < blockIdx.x ? lo + per : blockIdx.x;
    ms_elem part = MsOp::identity();
    for (ms_u32 k = lo; k < hi; ++k) part = k == lo ? partials[k] : MsOp::combine(part, partials[k]);
    const ms_elem before = ms_block_reduce(part, sm);
    if (threadIdx.x == 0) sm.prefix = has_init ? MsOp::combine(init, before) : before;
    __syncthreads();
    const ms_elem block_carry = sm.prefix;
    // The row's carry: the block's, then the totals of the rows before it in the block.
    ms_elem aggregate;
    const ms_elem within = ms_block_exclusive(row <= rows ? row_totals[row] : MsOp::identity(), aggregate, sm);
    ms_elem acc = MsOp::combine(block_carry, within);
    for (ms_u32 j = 0; j < steps; ++j) {
        const int stage = (int)(j % MS_SHARE_STAGES);
        char* buf = bufs + stage * MS_SHARE_STAGE_BYTES;
        ms_bar_wait_parity(ms_shared_addr(bars + stage), (j / MS_SHARE_STAGES) & 1);
        acc = ms_share_step<Map, true>(in, out, n, row, rows, j, steps, buf, exclusive, acc);
        // The stage holds this step's results; the block copies them out, whole lines of the
        // rows that are shares (16-byte chunk k of a row sits at chunk k ^ (row & 7)).
        __syncthreads();
        for (int q = threadIdx.x; q < MS_SHARE_COLUMNS * MS_BLOCK * 8; q += MS_BLOCK) {
            const int c = q / (MS_BLOCK * 8), r = (q >> 3) % MS_BLOCK, k = q & 7;
            if ((ms_u64)first_row + r < rows) {
                const ms_chunk_bits v = *(const ms_chunk_bits*)(buf + (c * MS_BLOCK + r) * 128 + ((k ^ (r & 7)) << 4));
                *(ms_chunk_bits*)((char*)out + ((ms_u64)first_row + r) * share_bytes +
                                  ((ms_u64)j * MS_SHARE_COLUMNS + c) * 128 + k * 16) = v;
            }
        }
        // Generic reads and writes of this buffer come before the tensor copy that refills it.
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        __syncthreads();
        if (threadIdx.x == 0 && j + MS_SHARE_STAGES < steps) {
            ms_share_issue(tmap, j + MS_SHARE_STAGES, first_row, buf, bars + stage);
        }
    }
    // The last row (the tail's, where there is one) ends on the scan's total.
    const ms_u64 last = rows * steps * (ms_u64)MS_SHARE_ELEMS < n ? rows : rows - 1;
    if (total_out && row == last) *total_out = acc;
{% else %}    __trap();
{% endif %}}
// Dynamic shared memory: 1 KiB of slack to start the buffers on 1 KiB, the stages' buffers,
// the block's state, the mbarriers.
#define MS_SHARE_SCAN_SMEM \
    extern __shared__ __align__(1024) char ms_share_raw[]; \
    char* bufs = ms_share_raw + ((1024 - (ms_shared_addr(ms_share_raw) & 1023)) & 1023); \
    ms_staged_smem& sm = *(ms_staged_smem*)(bufs + MS_SHARE_STAGES * MS_SHARE_STAGE_BYTES); \
    ms_u64* bars = (ms_u64*)((char*)&sm + MS_SHARE_BAR_OFFSET);
extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_share_totals(const ms_elem* in, ms_elem* row_totals, ms_elem* partials, ms_u64 n, ms_u64 rows,
                          ms_u32 steps, const __grid_constant__ ms_tensor_map tin) {
    MS_SHARE_SCAN_SMEM
    ms_share_totals<MsNoMap>(in, row_totals, partials, n, rows, steps, bufs, sm, bars, &tin);
}
extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_share_scan(const ms_elem* in, ms_elem* out, const ms_elem* row_totals, const ms_elem* partials,
                        ms_u64 n, ms_u64 rows, ms_u32 steps, int exclusive, ms_elem init, int has_init,
                        ms_elem* total_out, const __grid_constant__ ms_tensor_map tin) {
    MS_SHARE_SCAN_SMEM
    ms_share_scan<MsNoMap>(in, out, row_totals, partials, n, rows, steps, exclusive, init, has_init, total_out,
                           bufs, sm, bars, &tin);
}
{% if map %}extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_share_totals_mapped(const MsMap::in_t* in, ms_elem* row_totals, ms_elem* partials, ms_u64 n,
                                 ms_u64 rows, ms_u32 steps, const __grid_constant__ ms_tensor_map tin) {
    MS_SHARE_SCAN_SMEM
    ms_share_totals<MsMap>(in, row_totals, partials, n, rows, steps, bufs, sm, bars, &tin);
}
extern "C" __global__ void __launch_bounds__(MS_BLOCK)
{{ prefix }}_share_scan_mapped(const MsMap::in_t* in, ms_elem* out, const ms_elem* row_totals,
                               const ms_elem* partials, ms_u64 n, ms_u64 rows, ms_u32 steps, int exclusive,
                               ms_elem init, int has_init, ms_elem* total_out,
                               const __grid_constant__ ms_tensor_map tin) {
    MS_SHARE_SCAN_SMEM
    ms_share_scan<MsMap>(in, out, row_totals, partials, n, rows, steps, exclusive, init, has_init, total_out,
                         bufs, sm, bars, &tin);
}
{% endif %}
