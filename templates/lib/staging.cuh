// ---- Tiles staged in shared memory (sm_80 and newer): the swizzled buffer, cp.async copies ----
// A swizzled buffer keeps chunk c (16 bytes) at c ^ ((c >> MS_SWZ) & 7), so that striped
// copies and each thread's blocked run both touch every bank group once per phase.
#define MS_SWZ {{ swizzle }}
// The swizzle of the staged input's chunks: MS_SWZ, except in a staged scan whose input map
// reads narrower elements than it scans (a widening map), whose input runs are shorter.
{% if in_swizzle %}#define MS_SWZ_IN {{ in_swizzle }}
{% else %}#define MS_SWZ_IN MS_SWZ
{% endif %}struct alignas(16) ms_chunk_bits { ms_u32 w[4]; };
struct ms_staged_smem {
    ms_elem warp_sums[MS_WARPS];
    ms_elem prefix;
    ms_u32 tile;
};
// Runs in reverse (MS_REVERSE 1, defined by a kernel that scans from the end before it includes
// this; 0 otherwise): logical item i of a tile is physical item MS_TILE - 1 - i, so thread t's run
// is physical run MS_BLOCK - 1 - t read backwards. The run layouts read and write a thread's
// run through these.
#ifndef MS_REVERSE
#define MS_REVERSE 0
#endif
// The physical run that this thread's run is.
__device__ __forceinline__ int ms_run_owner() {
    return MS_REVERSE ? MS_BLOCK - 1 - (int)threadIdx.x : (int)threadIdx.x;
}
// The physical item of logical item i of the tile.
__device__ __forceinline__ ms_u64 ms_physical(ms_u64 i) { return MS_REVERSE ? (ms_u64)MS_TILE - 1 - i : i; }
// Group j of a run, and element e of a group (MS_GROUP_ELEMS, the layout's), in physical order.
#define MS_RUN_GROUP(j) (MS_REVERSE ? MS_THREAD_GROUPS - 1 - (j) : (j))
#define MS_IN_GROUP(e) (MS_REVERSE ? MS_GROUP_ELEMS - 1 - (e) : (e))
__device__ __forceinline__ int ms_swz(int c) { return c ^ ((c >> MS_SWZ) & 7); }
__device__ __forceinline__ int ms_swz_in(int c) { return c ^ ((c >> MS_SWZ_IN) & 7); }
__device__ __forceinline__ ms_u32 ms_shared_addr(const void* p) {
    ms_u32 a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}
// The L2 prefetch and pacing plan of a TMA launch (built by the host: `PrefetchPlan` in
// src/tuning/prefetch.rs; what its fields mean is in lib/tma.cuh). The cp.async forms take it
// all zero: no prefetching, no pacing.
struct ms_prefetch { ms_u32 ahead, first_wave, pace_ps, paced; };
// Starts this thread's cp.async copies of tile `tile` of `in` (MS_TILE elements of In) into
// `buf`, without committing them: whole 16-byte chunks, the one that straddles the end partly
// (the rest zero-filled); chunks past the end are not copied. Chunk c lands in slot c unless
// Swizzled: in slot ms_swz(c) for inputs of the element's size, else ms_swz_in(c) (the same
// but for a widening map's inputs). `in` must be 16-byte aligned (checked before launch).
template <typename In, bool Swizzled>
__device__ __forceinline__ void ms_stage_issue(const In* in, ms_u64 n, ms_u32 tile, ms_chunk_bits* buf) {
    static_assert((MS_TILE * sizeof(In)) % 16 == 0, "monoscan: a staged tile is a whole number of 16-byte chunks");
    constexpr int total = (int)(MS_TILE * sizeof(In) / 16);
    // Rounds of one chunk per thread; a last round only partly used unless the threads divide
    // the chunks.
    constexpr int rounds = (total + MS_BLOCK - 1) / MS_BLOCK;
    const char* src = (const char*)(in + (ms_u64)tile * MS_TILE);
    const ms_i64 bytes = (ms_i64)ms_valid((ms_u64)tile * MS_TILE, n) * (ms_i64)sizeof(In);
#pragma unroll
    for (int k = 0; k < rounds; ++k) {
        const int c = k * MS_BLOCK + threadIdx.x;
        const ms_i64 left = bytes - (ms_i64)c * 16;
        if ((total % MS_BLOCK == 0 || c < total) && left > 0) {
            const ms_u32 take = left >= 16 ? 16u : (ms_u32)left;
            const int at = sizeof(In) == sizeof(ms_elem) ? ms_swz(c) : ms_swz_in(c);
            ms_chunk_bits* slot = buf + (Swizzled ? at : c);
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
                         ::"r"(ms_shared_addr(slot)), "l"(src + (ms_u64)c * 16), "r"(take)
                         : "memory");
        }
    }
}
// Copies tile `tile` of `in` into `buf` (as ms_stage_issue) and waits for it: every
// thread's copies have landed when it returns.
template <typename In, bool Swizzled>
__device__ __forceinline__ void ms_stage_tile(const In* in, ms_u64 n, ms_u32 tile, ms_chunk_bits* buf) {
    ms_stage_issue<In, Swizzled>(in, n, tile, buf);
    asm volatile("cp.async.commit_group;\n\tcp.async.wait_group 0;" ::: "memory");
    __syncthreads();
}
