// Reverse (MS_REVERSE 1; the module's operator is then the opposite monoid, so that a forward
// scan of the reversed sequence is the reverse scan): the shares and the tail stay where they
// are in memory, and the threads, blocks and steps take them from the end (lib/shares.cuh), so
// the tail comes first and the launch's first rows last.
#define MS_REVERSE {{ reverse }}
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
// place into the stage buffer and leave it by tensor stores.
// The elements past the last whole share (fewer than a share) are row `rows`: the thread of
// that row brings them into its own row of each stage, a step's worth per step, in both
// launches, and writes its results out itself.
#define MS_SHARE_BAR_OFFSET ((sizeof(ms_staged_smem) + 15) / 16 * 16)
// Where step `j` of the tail (row `rows`) starts: past the whole shares, a step per step.
__device__ __forceinline__ ms_u64 ms_share_tail_base(ms_u64 rows, ms_u32 steps, ms_u32 j) {
    return (rows * steps + j) * (ms_u64)MS_SHARE_ELEMS;
}
// Elements of step `j` in this thread's row: a whole step's for a share, what is left of the
// tail's (row `rows`) below n, none past it.
__device__ __forceinline__ int ms_share_count(ms_u64 row, ms_u64 rows, ms_u64 n, ms_u32 j, ms_u32 steps) {
    if (row < rows) return MS_SHARE_ELEMS;
    const ms_u64 base = ms_share_tail_base(rows, steps, j);
    if (row > rows || base >= n) return 0;
    return n - base < (ms_u64)MS_SHARE_ELEMS ? (int)(n - base) : MS_SHARE_ELEMS;
}
// The tail's thread (row `rows`, past the map's rows, which the tensor copies fill with zeros):
// puts its `count` elements of step `j` into its own row of the stage, where its warp folds
// them with the shares' (one instruction stream: the tail's lane does not hold its warp on a
// path of its own), and asks L2 for the lines of the step it takes next (in reverse, j - 1).
// It loads a batch at a time, each batch's loads issued together; its writes are fenced before
// the tensor copies refill the stage.
template <typename Map>
__device__ __forceinline__ void ms_share_tail_fill(const typename Map::in_t* in, ms_u64 n, ms_u64 rows, ms_u32 j,
                                                   ms_u32 steps, int count, char* buf) {
    typedef typename Map::in_t in_t;
    const ms_u64 base = ms_share_tail_base(rows, steps, j);
    const ms_u64 next = MS_REVERSE ? base - MS_SHARE_ELEMS : base + MS_SHARE_ELEMS;
    if ((!MS_REVERSE || j > 0) && next < n) {
        // The next step's bytes, from any alignment: one more line than its columns.
        const char* first = (const char*)(in + next);
        const char* last = (const char*)(in + n) - 1;
        for (int c = 0; c <= MS_SHARE_COLUMNS; ++c) {
            const char* line = first + c * 128 < last ? first + c * 128 : last;
            asm volatile("prefetch.global.L2 [%0];" ::"l"(line));
        }
    }
    // At most 64 bytes of elements live at once.
    constexpr int BATCH = sizeof(in_t) >= 64 ? 1 : (int)(64 / sizeof(in_t));
    for (int b = 0; b < count; b += BATCH) {
        in_t xs[BATCH];
#pragma unroll
        for (int e = 0; e < BATCH; ++e) {
            if (b + e < count) xs[e] = in[base + b + e];
        }
#pragma unroll
        for (int e = 0; e < BATCH; ++e) {
            if (b + e < count) ms_share_put(buf, b + e, xs[e]);
        }
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
// The first `count` elements of this thread's row of a stage scanned in place from `acc`, in the
// order a thread takes them.
template <typename Map>
__device__ __forceinline__ ms_elem ms_share_scan_step(char* buf, int count, int exclusive, ms_elem acc) {
    MS_STEP_UNROLL
    for (int q = 0; q < MS_SHARE_ELEMS; ++q) {
        const int e = MS_SHARE_IN_STEP(q);
        if (e < count) {
            const ms_elem x = Map::apply(ms_share_get<typename Map::in_t>(buf, e));
            if (exclusive) ms_share_put(buf, e, acc);
            acc = MsOp::combine_ilp(acc, x);
            if (!exclusive) ms_share_put(buf, e, acc);
        }
    }
    return acc;
}
template <typename Map>
__device__ __forceinline__ void ms_share_totals(const typename Map::in_t* in, ms_elem* row_totals, ms_elem* partials,
                                                ms_u64 n, ms_u64 rows, ms_u32 steps, char* bufs,
                                                ms_staged_smem& sm, ms_u64* bars, const ms_tensor_map* tmap) {
{% if shares %}    typedef typename Map::in_t in_t;
    static_assert(sizeof(in_t) == sizeof(ms_elem), "monoscan: share scans read elements of the element's size");
    const ms_u32 first_row = ms_share_first_row();
    const ms_u64 row = (ms_u64)first_row + ms_share_row();
    ms_share_start(steps, first_row, bufs, bars, tmap);
    __syncthreads();
    ms_elem acc = MsOp::identity();
    for (ms_u32 k = 0; k < steps; ++k) {
        const ms_u32 j = ms_share_step(k, steps);
        const int stage = (int)(k % MS_SHARE_STAGES);
        char* buf = bufs + stage * MS_SHARE_STAGE_BYTES;
        ms_bar_wait_parity(ms_shared_addr(bars + stage), (k / MS_SHARE_STAGES) & 1);
        const int count = ms_share_count(row, rows, n, j, steps);
        if (row == rows) ms_share_tail_fill<Map>(in, n, rows, j, steps, count, buf);
        acc = ms_share_fold_step<Map>(buf, count, acc);
        // Every thread is done with this buffer before it is refilled.
        __syncthreads();
        if (threadIdx.x == 0 && k + MS_SHARE_STAGES < steps) {
            ms_share_issue(tmap, ms_share_step(k + MS_SHARE_STAGES, steps), first_row, buf, bars + stage);
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
                                              const ms_tensor_map* tmap, const ms_tensor_map* tout) {
{% if shares %}    const ms_u32 first_row = ms_share_first_row();
    const ms_u64 row = (ms_u64)first_row + ms_share_row();
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
    for (ms_u32 k = 0; k < steps; ++k) {
        const ms_u32 j = ms_share_step(k, steps);
        const int stage = (int)(k % MS_SHARE_STAGES);
        char* buf = bufs + stage * MS_SHARE_STAGE_BYTES;
        ms_bar_wait_parity(ms_shared_addr(bars + stage), (k / MS_SHARE_STAGES) & 1);
        const int count = ms_share_count(row, rows, n, j, steps);
        if (row == rows) ms_share_tail_fill<Map>(in, n, rows, j, steps, count, buf);
        acc = ms_share_scan_step<Map>(buf, count, exclusive, acc);
        if (row == rows) {
            // The tensor stores leave the tail's row out: its thread writes its results.
            const ms_u64 base = ms_share_tail_base(rows, steps, j);
            for (int e = 0; e < count; ++e) out[base + e] = ms_share_get<ms_elem>(buf, e);
        }
        // The stage holds this step's results: made visible to the tensor unit, they leave by
        // tensor stores of the same boxes into the output's rows (rows past the map's end are
        // not written), which have read the buffer before it is refilled.
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        __syncthreads();
        if (threadIdx.x == 0) {
            ms_share_store(tout, j, first_row, buf);
            if (k + MS_SHARE_STAGES < steps) {
                asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
                ms_share_issue(tmap, ms_share_step(k + MS_SHARE_STAGES, steps), first_row, buf, bars + stage);
            }
        }
    }
    // The stores have completed before the block ends.
    if (threadIdx.x == 0) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    // The row taken last (forwards the tail's, where there is one; in reverse row 0) ends on the
    // scan's total.
    const ms_u64 last = MS_REVERSE ? 0 : ms_share_tail_base(rows, steps, 0) < n ? rows : rows - 1;
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
                        ms_elem* total_out, const __grid_constant__ ms_tensor_map tin,
                        const __grid_constant__ ms_tensor_map tout) {
    MS_SHARE_SCAN_SMEM
    ms_share_scan<MsNoMap>(in, out, row_totals, partials, n, rows, steps, exclusive, init, has_init, total_out,
                           bufs, sm, bars, &tin, &tout);
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
                               const __grid_constant__ ms_tensor_map tin,
                               const __grid_constant__ ms_tensor_map tout) {
    MS_SHARE_SCAN_SMEM
    ms_share_scan<MsMap>(in, out, row_totals, partials, n, rows, steps, exclusive, init, has_init, total_out,
                         bufs, sm, bars, &tin, &tout);
}
{% endif %}
