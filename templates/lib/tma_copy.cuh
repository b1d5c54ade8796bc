// ---- Tensor copies of a staged tile (sm_90 and newer) ----
// A full tile of MS_BLOCK rows of 128 bytes (one row per thread's run) arrives by MS_TMA_BOXES
// tensor copies of MS_TMA_ROWS rows each, issued by one thread and awaited on one mbarrier
// (lib/tma.cuh). The tensor map (built by the host: `TensorMap::rows128`) views the input as
// rows of 128 bytes, in boxes of MS_TMA_ROWS rows, with the 128-byte swizzle: chunk c of row r
// lands at c ^ (r & 7) from a buffer aligned to 1 KiB, which is ms_swz (lib/staging.cuh) with
// MS_SWZ 3, box after box. Needs lib/staging.cuh and lib/tma.cuh.
struct alignas(64) ms_tensor_map { ms_u64 opaque[16]; };
#define MS_TMA_BOXES {{ tma_boxes }}
#define MS_TMA_ROWS (MS_BLOCK / MS_TMA_BOXES)
static_assert(MS_TMA_ROWS % 8 == 0 && MS_TMA_ROWS <= 256 && MS_TMA_ROWS * MS_TMA_BOXES == MS_BLOCK,
              "monoscan: the TMA form's boxes are whole 8-row groups of at most 256 rows");
// Run by thread 0: copies rows [tile * MS_BLOCK, (tile + 1) * MS_BLOCK) of the map (the full
// tile `tile`) into `buf`; the copies complete on `bar` (initialised before the block's first
// barrier, used once: phase 0).
__device__ __forceinline__ void ms_tma_copy_tile(const ms_tensor_map* map, ms_u32 tile, ms_chunk_bits* buf,
                                                 ms_u64* bar) {
    const ms_u32 b = ms_shared_addr(bar);
    ms_bar_expect(b, (ms_u32)(MS_BLOCK * 128));
#pragma unroll
    for (int k = 0; k < MS_TMA_BOXES; ++k) {
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, { %2, %3 }], [%4];"
                     ::"r"(ms_shared_addr(buf) + (ms_u32)(k * MS_TMA_ROWS * 128)), "l"(map), "r"(0),
                       "r"((int)(tile * MS_BLOCK + k * MS_TMA_ROWS)), "r"(b) : "memory");
    }
}
