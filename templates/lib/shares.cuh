// ---- The share form's steps (TMA forms): each thread streams one contiguous share ----
// The host views the input's first `rows` equal shares as the rows of a 2D tensor map
// (128-byte columns, the 128-byte swizzle): thread t of block b owns row b * MS_BLOCK + t,
// MS_SHARE_COLUMNS columns per step (the fewest that hold whole elements), the steps arriving
// by tensor copies through MS_SHARE_STAGES buffers. Used by the share scan (share_scan.cu); the
// staged reduce's share form (lib/share_fold.cuh) takes the same map and swizzle, one column
// per stage.
#define MS_SHARE_STAGES {{ share_stages }}
#define MS_SHARE_COLUMNS {{ share_columns }}
#define MS_SHARE_BOXES ((MS_BLOCK + 255) / 256)
#define MS_SHARE_ROWS (MS_BLOCK / MS_SHARE_BOXES)
#define MS_SHARE_UNIT {{ share_unit }}
#define MS_SHARE_UNITS ((int)(sizeof(ms_elem) / MS_SHARE_UNIT))
#define MS_SHARE_STEP_BYTES (MS_SHARE_COLUMNS * 128)
#define MS_SHARE_ELEMS ((int)(MS_SHARE_STEP_BYTES / sizeof(ms_elem)))
// Bytes of one stage: MS_SHARE_COLUMNS column buffers of MS_BLOCK rows of 128 bytes.
#define MS_SHARE_STAGE_BYTES (MS_SHARE_COLUMNS * MS_BLOCK * 128)
{% if shares %}static_assert(MS_SHARE_ROWS % 8 == 0 && MS_SHARE_ROWS * MS_SHARE_BOXES == MS_BLOCK,
              "monoscan: the share form's boxes are whole 8-row groups of at most 256 rows");
static_assert(MS_SHARE_STEP_BYTES % sizeof(ms_elem) == 0 && sizeof(ms_elem) % MS_SHARE_UNIT == 0,
              "monoscan: a share step holds whole elements, read in whole units");
{% if share_unit == 16 %}typedef ms_chunk_bits ms_share_unit;
{% elif share_unit == 8 %}struct alignas(8) ms_share_unit { ms_u32 w[2]; };
{% elif share_unit == 4 %}typedef ms_u32 ms_share_unit;
{% elif share_unit == 2 %}typedef unsigned short ms_share_unit;
{% else %}typedef unsigned char ms_share_unit;
{% endif %}// Thread 0: starts the copies of 128-byte column `column` (counted over the whole share) of
// the block's rows into the column buffer `buf`, completing on the mbarrier at shared address
// `bar`, which the caller has told to expect them.
__device__ __forceinline__ void ms_share_issue_boxes(const ms_tensor_map* map, ms_u32 column, ms_u32 first_row,
                                                     char* buf, ms_u32 bar) {
#pragma unroll
    for (int k = 0; k < MS_SHARE_BOXES; ++k) {
        ms_tma_box(map, ms_shared_addr(buf + k * MS_SHARE_ROWS * 128), column * 128, first_row + k * MS_SHARE_ROWS,
                   bar);
    }
}
// Thread 0: starts the copies of step `j` of the block's rows into `buf`, completing on `bar`.
__device__ __forceinline__ void ms_share_issue(const ms_tensor_map* map, ms_u32 j, ms_u32 first_row, char* buf, ms_u64* bar) {
    const ms_u32 b = ms_shared_addr(bar);
    ms_bar_expect(b, (ms_u32)MS_SHARE_STAGE_BYTES);
#pragma unroll
    for (int c = 0; c < MS_SHARE_COLUMNS; ++c) {
        ms_share_issue_boxes(map, j * MS_SHARE_COLUMNS + c, first_row, buf + c * MS_BLOCK * 128, b);
    }
}
// Shares taken from the end (MS_REVERSE 1, defined by a kernel that scans from the end before
// it includes this; 0 otherwise): the grid's blocks and each block's threads cover the rows in
// reverse (thread t of block b owns row (gridDim.x - 1 - b) * MS_BLOCK + MS_BLOCK - 1 - t), each
// thread takes its share's steps from the last and each step's elements from its last, so that
// threads, blocks and steps in order cover the sequence read from its end.
#ifndef MS_REVERSE
#define MS_REVERSE 0
#endif
// The row of a stage's column buffers (and of the block's rows) that this thread owns.
__device__ __forceinline__ int ms_share_row() {
    return MS_REVERSE ? MS_BLOCK - 1 - (int)threadIdx.x : (int)threadIdx.x;
}
// The first row of this block's rows.
__device__ __forceinline__ ms_u32 ms_share_first_row() {
    return (MS_REVERSE ? gridDim.x - 1 - blockIdx.x : blockIdx.x) * MS_BLOCK;
}
// The step of its share that a thread takes `k`-th (of `steps`).
__device__ __forceinline__ ms_u32 ms_share_step(ms_u32 k, ms_u32 steps) { return MS_REVERSE ? steps - 1 - k : k; }
// The element of a step that a thread takes `q`-th.
#define MS_SHARE_IN_STEP(q) (MS_REVERSE ? MS_SHARE_ELEMS - 1 - (q) : (q))
// Thread 0: initialises the stages' barriers and starts the copies of the first steps taken.
__device__ __forceinline__ void ms_share_start(ms_u32 steps, ms_u32 first_row, char* bufs, ms_u64* bars,
                                               const ms_tensor_map* tmap) {
    if (threadIdx.x == 0) {
#pragma unroll
        for (int s = 0; s < MS_SHARE_STAGES; ++s) ms_bar_init(ms_shared_addr(bars + s));
#pragma unroll
        for (int s = 0; s < MS_SHARE_STAGES; ++s) {
            if ((ms_u32)s < steps) {
                ms_share_issue(tmap, ms_share_step((ms_u32)s, steps), first_row, bufs + s * MS_SHARE_STAGE_BYTES,
                               bars + s);
            }
        }
    }
}
// Thread 0: starts the tensor stores of step `j` of the block's rows from `buf` into the
// rows of `map` (one bulk group; rows past the map's end are not written).
__device__ __forceinline__ void ms_share_store(const ms_tensor_map* map, ms_u32 j, ms_u32 first_row, const char* buf) {
#pragma unroll
    for (int c = 0; c < MS_SHARE_COLUMNS; ++c) {
#pragma unroll
        for (int k = 0; k < MS_SHARE_BOXES; ++k) {
            asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, { %1, %2 }], [%3];"
                         ::"l"(map), "r"((int)((j * MS_SHARE_COLUMNS + c) * 128)),
                         "r"((int)(first_row + k * MS_SHARE_ROWS)),
                         "r"(ms_shared_addr(buf + (c * MS_BLOCK + k * MS_SHARE_ROWS) * 128)) : "memory");
        }
    }
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
// Where byte `byte` of this thread's step lives in a stage: its column's buffer, the thread's
// row there, and the 16-byte chunk the swizzle moved it to (chunk q of row r of a column
// buffer lives at chunk q ^ (r & 7) of the row).
__device__ __forceinline__ int ms_share_offset(int byte) {
    const int row = ms_share_row();
    const int column = byte >> 7, within = byte & 127;
    return (column * MS_BLOCK + row) * 128 + ((((within >> 4) ^ (row & 7)) << 4) | (within & 15));
}
// Element `e` of this thread's row of a stage: its units from their swizzled places.
template <typename In>
__device__ __forceinline__ In ms_share_get(const char* buf, int e) {
    union {
        ms_share_unit u[MS_SHARE_UNITS];
        In x;
    } v;
#pragma unroll
    for (int k = 0; k < MS_SHARE_UNITS; ++k) {
        v.u[k] = *(const ms_share_unit*)(buf + ms_share_offset((e * MS_SHARE_UNITS + k) * MS_SHARE_UNIT));
    }
    return v.x;
}
// Writes element `e` of this thread's row of a stage in place (the same units as
// ms_share_get): an input or an element of the operator's type, of one size.
template <typename T>
__device__ __forceinline__ void ms_share_put(char* buf, int e, const T& x) {
    static_assert(sizeof(T) == MS_SHARE_UNITS * MS_SHARE_UNIT, "monoscan: a share's element is whole units");
    union {
        ms_share_unit u[MS_SHARE_UNITS];
        T x;
    } v;
    v.x = x;
#pragma unroll
    for (int k = 0; k < MS_SHARE_UNITS; ++k) {
        *(ms_share_unit*)(buf + ms_share_offset((e * MS_SHARE_UNITS + k) * MS_SHARE_UNIT)) = v.u[k];
    }
}
// The first `count` elements of this thread's row of a stage folded into `acc` in the order a
// thread takes them (from the last in reverse): one inlined copy of an outlined combine in a
// rolled loop (no call per element), an inlined one unrolled.
template <typename Map>
__device__ __forceinline__ ms_elem ms_share_fold_step(const char* buf, int count, ms_elem acc) {
    MS_STEP_UNROLL
    for (int q = 0; q < MS_SHARE_ELEMS; ++q) {
        const int e = MS_SHARE_IN_STEP(q);
        if (e < count) acc = MsOp::combine_ilp(acc, Map::apply(ms_share_get<typename Map::in_t>(buf, e)));
    }
    return acc;
}
{% endif %}
