// ---- A reduction in one launch: the last block to finish folds every partial ----
// Each block writes its partial, makes it visible device-wide and counts itself done on
// `done`; the block that counts last (so every other partial is visible to it) folds
// partials[0..parts) in order into *total_out and hands the count back at zero for the next
// launch (the host zeroes it only once, at allocation). With total_out null the launch only
// writes its partials. Order is kept: thread t folds a contiguous run of partials, then the
// block reduces the runs in thread order.
// One element of `p`, read at L2 (relaxed, device scope: written by other blocks of this launch),
// in the widest units its size allows.
__device__ __forceinline__ ms_elem ms_load_relaxed(const ms_elem* p) {
    union {
        ms_elem v;
        ms_u32 w[(sizeof(ms_elem) + 3) / 4];
        unsigned short h[(sizeof(ms_elem) + 1) / 2];
        unsigned char b[sizeof(ms_elem)];
    } u;
    if (sizeof(ms_elem) % 4 == 0) {
#pragma unroll
        for (int k = 0; k < (int)(sizeof(ms_elem) / 4); ++k) {
            asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(u.w[k]) : "l"((const ms_u32*)p + k) : "memory");
        }
    } else if (sizeof(ms_elem) % 2 == 0) {
#pragma unroll
        for (int k = 0; k < (int)(sizeof(ms_elem) / 2); ++k) {
            asm volatile("ld.relaxed.gpu.global.u16 %0, [%1];" : "=h"(u.h[k]) : "l"((const unsigned short*)p + k) : "memory");
        }
    } else {
#pragma unroll
        for (int k = 0; k < (int)sizeof(ms_elem); ++k) {
            ms_u32 x;
            asm volatile("ld.relaxed.gpu.global.u8 %0, [%1];" : "=r"(x) : "l"((const unsigned char*)p + k) : "memory");
            u.b[k] = (unsigned char)x;
        }
    }
    return u.v;
}
// Run by every thread of the block, after thread 0 wrote this block's partial. `sm` (its
// warp sums and its `tile` word) is free for use. Not inlined: inlined, its code changed how
// ptxas allocated the registers of the reduce's main loop (16-byte elements on an H100 then
// reduced at 0.91 of a read pass at 1 GiB, against 0.96).
template <typename Smem>
__device__ __noinline__ void ms_fold_last(const ms_elem* partials, ms_u32 parts, ms_u32* done,
                                             ms_elem* total_out, Smem& sm) {
    if (total_out == 0) return;
    if (threadIdx.x == 0) {
        // Release: this block's partial (written by this thread) is visible to whoever counts
        // after it. Acquire: the block that counts last sees every partial, and the barrier
        // below passes that on to its other threads. One round trip, no separate fences.
        ms_u32 before;
        asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(before) : "l"(done) : "memory");
        sm.tile = before == gridDim.x - 1 ? 1u : 0u;
    }
    __syncthreads();
    if (sm.tile == 0u) return;
    const ms_u32 per = (parts + MS_BLOCK - 1) / MS_BLOCK;
    const ms_u32 lo = threadIdx.x * per < parts ? threadIdx.x * per : parts;
    const ms_u32 hi = lo + per < parts ? lo + per : parts;
    ms_elem acc = MsOp::identity();
    for (ms_u32 i = lo; i < hi; ++i) {
        const ms_elem x = ms_load_relaxed(partials + i);
        acc = i == lo ? x : MsOp::combine(acc, x);
    }
    const ms_elem total = ms_block_reduce(acc, sm);
    if (threadIdx.x == 0) {
        *total_out = total;
        // Every block has counted: the count goes back to zero off the critical path (the
        // launch's end orders it before the next launch reads it).
        asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(done), "r"(0u) : "memory");
    }
}
