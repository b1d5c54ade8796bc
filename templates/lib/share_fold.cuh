// ---- The staged reduce's share form (TMA forms): each thread folds one contiguous share ----
// The per-tile reduce pays a block reduction per tile, a chain of combines most threads wait
// out; for an expensive combine that dominates. Here the host views the input's first `rows`
// equal shares as the rows of a 2D tensor map (128-byte columns, the 128-byte swizzle): thread
// t of block b folds row b * MS_BLOCK + t, MS_SHARE_COLUMNS columns per step (the fewest that
// hold whole elements), the steps arriving by tensor copies through MS_SHARE_STAGES buffers.
// A thread's accumulator runs over its whole share, so the block reduces once, in thread
// order, and the partials stay in sequence order: order is kept for any operator. The host
// folds the bytes past the last whole share apart, into partials[gridDim.x], before this
// launch; with total_out, the last block to finish folds partials[0..parts) into it.
#define MS_SHARE_STAGES {{ share_stages }}
#define MS_SHARE_COLUMNS {{ share_columns }}
#define MS_SHARE_BOXES ((MS_BLOCK + 255) / 256)
#define MS_SHARE_ROWS (MS_BLOCK / MS_SHARE_BOXES)
#define MS_SHARE_UNIT {{ share_unit }}
#define MS_SHARE_UNITS ((int)(sizeof(ms_elem) / MS_SHARE_UNIT))
#define MS_SHARE_ELEMS ((int)(MS_SHARE_COLUMNS * 128 / sizeof(ms_elem)))
// Bytes of one stage: MS_SHARE_COLUMNS column buffers of MS_BLOCK rows of 128 bytes.
#define MS_SHARE_STAGE_BYTES (MS_SHARE_COLUMNS * MS_BLOCK * 128)
{% if shares %}static_assert(MS_SHARE_ROWS % 8 == 0 && MS_SHARE_ROWS * MS_SHARE_BOXES == MS_BLOCK,
              "monoscan: the share form's boxes are whole 8-row groups of at most 256 rows");
static_assert((MS_SHARE_COLUMNS * 128) % sizeof(ms_elem) == 0 && sizeof(ms_elem) % MS_SHARE_UNIT == 0,
              "monoscan: a share step holds whole elements, read in whole units");
{% if share_unit == 16 %}typedef ms_chunk_bits ms_share_unit;
{% elif share_unit == 8 %}struct alignas(8) ms_share_unit { ms_u32 w[2]; };
{% elif share_unit == 4 %}typedef ms_u32 ms_share_unit;
{% elif share_unit == 2 %}typedef unsigned short ms_share_unit;
{% else %}typedef unsigned char ms_share_unit;
{% endif %}// Thread 0: starts the copies of step `j` of the block's rows into `buf`, completing on `bar`.
__device__ __forceinline__ void ms_share_issue(const ms_tensor_map* map, ms_u32 j, ms_u32 first_row, char* buf, ms_u64* bar) {
    const ms_u32 b = ms_shared_addr(bar);
    ms_bar_expect(b, (ms_u32)MS_SHARE_STAGE_BYTES);
#pragma unroll
    for (int c = 0; c < MS_SHARE_COLUMNS; ++c) {
#pragma unroll
        for (int k = 0; k < MS_SHARE_BOXES; ++k) {
            ms_tma_box(map, ms_shared_addr(buf + (c * MS_BLOCK + k * MS_SHARE_ROWS) * 128),
                       (j * MS_SHARE_COLUMNS + c) * 128, first_row + k * MS_SHARE_ROWS, b);
        }
    }
}
// Element `e` of this thread's row of a stage: its units from their swizzled places (16-byte
// chunk q of row r of a column buffer lives at chunk q ^ (r & 7) of the row).
template <typename In>
__device__ __forceinline__ In ms_share_get(const char* buf, int e) {
    union {
        ms_share_unit u[MS_SHARE_UNITS];
        In x;
    } v;
    const int row = threadIdx.x;
#pragma unroll
    for (int k = 0; k < MS_SHARE_UNITS; ++k) {
        const int byte = (e * MS_SHARE_UNITS + k) * MS_SHARE_UNIT;
        const int column = byte >> 7, within = byte & 127;
        v.u[k] = *(const ms_share_unit*)(buf + (column * MS_BLOCK + row) * 128 +
                                         ((((within >> 4) ^ (row & 7)) << 4) | (within & 15)));
    }
    return v.x;
}
{% endif %}template <typename Map>
__device__ __forceinline__ void ms_reduce_shares(ms_elem* partials, ms_u64 rows, ms_u32 steps, ms_u32 parts,
                                                 ms_u32* done, ms_elem* total_out, char* bufs,
                                                 ms_staged_smem& sm, ms_u64* bars, const ms_tensor_map* tmap) {
{% if shares %}    typedef typename Map::in_t in_t;
    static_assert(sizeof(in_t) == sizeof(ms_elem), "monoscan: share reductions read elements of the element's size");
    const ms_u32 first_row = blockIdx.x * MS_BLOCK;
    if (threadIdx.x == 0) {
#pragma unroll
        for (int s = 0; s < MS_SHARE_STAGES; ++s) ms_bar_init(ms_shared_addr(bars + s));
#pragma unroll
        for (int s = 0; s < MS_SHARE_STAGES; ++s) {
            if ((ms_u32)s < steps) ms_share_issue(tmap, (ms_u32)s, first_row, bufs + s * MS_SHARE_STAGE_BYTES, bars + s);
        }
    }
    __syncthreads();
    ms_elem acc = MsOp::identity();
    for (ms_u32 j = 0; j < steps; ++j) {
        const int stage = (int)(j % MS_SHARE_STAGES);
        char* buf = bufs + stage * MS_SHARE_STAGE_BYTES;
        ms_bar_wait_parity(ms_shared_addr(bars + stage), (j / MS_SHARE_STAGES) & 1);
        // One inlined copy of an outlined combine in a rolled loop (no call per element);
        // an inlined one unrolled.
        MS_STEP_UNROLL
        for (int e = 0; e < MS_SHARE_ELEMS; ++e) acc = MsOp::combine_ilp(acc, Map::apply(ms_share_get<in_t>(buf, e)));
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