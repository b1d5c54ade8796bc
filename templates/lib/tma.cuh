// ---- The TMA forms (sm_90 and newer): the first wave's pacing, mbarriers, the L2 prefetch ----
// The plan `ms_prefetch` of a launch: the block that claims tile t asks L2 for tile t + `ahead`,
// so that by the time that tile is claimed its copy hits L2 and the DRAM latency (with its long
// tail) has passed while no shared memory was held; too far ahead and L2 evicts it first. Tiles
// below `first_wave` are claimed at once by the launch's resident blocks and loaded directly:
// none of them is prefetched. `ahead` 0: no prefetching.
//
// The plan also paces the launch's first `paced` tiles: the block that claims tile t issues its
// copy (and its prefetch) no earlier than the launch's clock plus t * `pace_ps` picoseconds, so
// that the first waves' copies reach DRAM in tile order and land in that order, instead of all
// landing together several microseconds in, with the whole first wave then looking back at
// once. The launch's clock is the global timer as read by tile 0's claimant, published with the
// launch's epoch in the counter's second sector. `pace_ps` 0: no pacing. Pacing only delays
// copies; a clock that cannot be read in time, or a due time that is implausibly far, means no
// wait.
__device__ __forceinline__ ms_u64 ms_globaltimer() {
    ms_u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
// Run by thread 0 of the block that claimed `tile`, before its copy is issued.
__device__ __forceinline__ void ms_pace(ms_u32* counter, ms_u32 epoch, ms_u32 tile, const ms_prefetch& p) {
    if (p.pace_ps == 0 || tile >= p.paced) return;
    constexpr ms_u64 low = (1ull << 48) - 1;  // the clock word: 16 bits of epoch, 48 of time (ns)
    const ms_u64 tag = (ms_u64)(epoch & 0xffffu) << 48;
    ms_u64* clock = (ms_u64*)(counter + 8);
    if (tile == 0) {
        const ms_u64 word = tag | (ms_globaltimer() & low);
        asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(clock), "l"(word) : "memory");
        return;
    }
    ms_u64 word = 0;
    for (int k = 0; k < 64; ++k) {
        asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(clock) : "memory");
        if ((word & ~low) == tag) break;
        __nanosleep(64);
    }
    if ((word & ~low) != tag) return;
    const ms_u64 due = ((word & low) + (ms_u64)tile * p.pace_ps / 1000u) & low;
    while (true) {
        // Nanoseconds until due, modulo 2^48: past (the top half), or further than 200 us
        // (a stale clock), means go now.
        const ms_u64 left = (due - ms_globaltimer()) & low;
        if (left == 0 || left > 200000u) break;
        __nanosleep(left > 400u ? 200u : (unsigned)(left / 2 + 1));
    }
}
// The TMA forms (sm_90 and newer): one mbarrier per block at shared address `b`, used once
// (phase 0). Thread 0 initialises it before the block's first barrier.
__device__ __forceinline__ void ms_bar_init(ms_u32 b) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n\tfence.mbarrier_init.release.cluster;"
                 ::"r"(b) : "memory");
}
// Thread 0: the barrier completes once `bytes` have arrived (the copy issued next).
__device__ __forceinline__ void ms_bar_expect(ms_u32 b, ms_u32 bytes) {
    asm volatile("{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1; }"
                 ::"r"(b), "r"(bytes) : "memory");
}
// Every thread: waits until the copy has landed.
__device__ __forceinline__ void ms_bar_wait(ms_u32 b) {
    asm volatile("{ .reg .pred p; MS_BAR_WAIT_%=: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0; @!p bra MS_BAR_WAIT_%=; }"
                 ::"r"(b) : "memory");
}
// Every thread: waits until the copies of the barrier's phase `parity` (0 for its first use,
// then alternating) have landed.
__device__ __forceinline__ void ms_bar_wait_parity(ms_u32 b, ms_u32 parity) {
    asm volatile("{ .reg .pred p; MS_BAR_WAITP_%=: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1; @!p bra MS_BAR_WAITP_%=; }"
                 ::"r"(b), "r"(parity) : "memory");
}
// Every thread asks L2 for its share of the plan's target tile, 128-byte rows strided by the
// block (in the staged scan exactly its own row), once the block's own copies are issued. (A
// bulk prefetch by the claiming thread queues the target's requests in the tensor unit ahead of
// the tile's own copies: sum i32 on an H200 runs at 0.899 of copy with it, 0.910 with rows, and
// 0.966 against 0.993 on an H100.) The target is the tile claimed `ahead` after `claim`; a
// launch that scans from the end (`reverse`, of `num_tiles` tiles) claims tile
// num_tiles - 1 - k k-th.
template <typename In>
__device__ __forceinline__ void ms_prefetch_rows(const In* in, ms_u64 n, ms_u32 claim, const ms_prefetch& p,
                                                 bool reverse = false, ms_u32 num_tiles = 0) {
    constexpr ms_u32 rows = (ms_u32)((MS_TILE * sizeof(In) + 127) / 128);
    const ms_u64 target = (ms_u64)claim + p.ahead;
    if (p.ahead == 0 || target < p.first_wave || (reverse && target >= num_tiles)) return;
    const ms_u64 tile = reverse ? num_tiles - 1 - target : target;
    if ((tile + 1) * MS_TILE <= n) {
        const char* t = (const char*)(in + tile * MS_TILE);
        for (ms_u32 r = threadIdx.x; r < rows; r += MS_BLOCK) {
            asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(t + (ms_u64)r * 128) : "memory");
        }
    }
}
// Thread 0: copies `bytes` (a multiple of 16) from `src` (16-byte aligned) to `dst` with one
// bulk copy that completes on the mbarrier at `b` (the TMA without a tensor map: the bytes
// land in order, unswizzled).
__device__ __forceinline__ void ms_bulk_issue(const void* src, ms_u32 bytes, void* dst, ms_u32 b) {
    ms_bar_expect(b, bytes);
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(ms_shared_addr(dst)), "l"(src), "r"(bytes), "r"(b) : "memory");
}
// A 2D tensor map (built by the host, passed as `const __grid_constant__`).
struct alignas(64) ms_tensor_map { ms_u64 opaque[16]; };
// Thread 0: copies the box of `map` at byte column `col` and row `row` to shared address
// `dst`, completing on the mbarrier at `b` (whose expected bytes the caller set).
__device__ __forceinline__ void ms_tma_box(const ms_tensor_map* map, ms_u32 dst, ms_u32 col, ms_u32 row, ms_u32 b) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, { %2, %3 }], [%4];"
                 ::"r"(dst), "l"(map), "r"((int)col), "r"((int)row), "r"(b) : "memory");
}
