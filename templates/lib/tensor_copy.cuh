// ---- The tensor copies of staged tiles (sm_90 and newer): one 128-byte row per thread ----
// A full tile arrives by MS_TMA_BOXES tensor copies (one for tiles of up to 256 threads), issued
// by one thread, instead of MS_TILE_CHUNKS cp.async copies, so the load/store unit carries only
// the kernel's own traffic. The tensor map (built by the host) views the input as rows of 128
// bytes, one row per thread's run, in boxes of MS_BLOCK / MS_TMA_BOXES rows (a whole number
// of 8-row groups), with the 128-byte swizzle: chunk c of row r lands at c ^ (r & 7) from a
// buffer aligned to 1 KiB, which is ms_swz with MS_SWZ 3, box after box.
#define MS_TMA_BOXES {{ tma_boxes }}
#define MS_TMA_ROWS (MS_BLOCK / MS_TMA_BOXES)
static_assert(MS_TMA_ROWS % 8 == 0 && MS_TMA_ROWS <= 256 && MS_TMA_ROWS * MS_TMA_BOXES == MS_BLOCK,
              "monoscan: the TMA form's boxes are whole 8-row groups of at most 256 rows");
static_assert(MS_SWZ == 3, "monoscan: the TMA form needs one 128-byte row per thread");
// Run by thread 0: copies rows [tile * MS_BLOCK, (tile + 1) * MS_BLOCK) of the map (full tile
// `tile`) into `buf` (aligned to 1 KiB) with MS_TMA_BOXES tensor copies that complete on the
// mbarrier `bar`. Needs lib/staging.cuh and lib/tma.cuh.
__device__ __forceinline__ void ms_tma_copy_tile(const ms_tensor_map* map, ms_u32 tile, ms_chunk_bits* buf,
                                                 ms_u64* bar) {
    const ms_u32 b = ms_shared_addr(bar);
    ms_bar_expect(b, (ms_u32)(MS_BLOCK * 128));
#pragma unroll
    for (int k = 0; k < MS_TMA_BOXES; ++k) {
        ms_tma_box(map, ms_shared_addr(buf) + (ms_u32)(k * MS_TMA_ROWS * 128), 0,
                   (ms_u32)(tile * MS_BLOCK + k * MS_TMA_ROWS), b);
    }
}
