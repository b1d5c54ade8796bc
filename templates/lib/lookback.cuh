// ---- The decoupled look-back of the single-pass kernels (scans and compaction) ----
// Tiles are numbered by an atomic counter, so a tile only ever waits for tiles that started
// before it, whatever order blocks start in; or by block index (the staged kernels'
// `grid_order`), in a cooperative grid, whose blocks are all resident at once, or in an
// ordinary launch whose blocks the hardware starts in index order. Each tile publishes
// its aggregate (status AGG), looks back over the preceding tiles a warp-wide window at a time
// until it meets an inclusive prefix (status INCL), then publishes its own inclusive prefix.
// Statuses carry the launch's epoch: entries of earlier launches read as "not yet published",
// so the state needs no clearing between launches. The tile that draws the last number resets
// the counter for the next launch. No path returns early: every tile always publishes.
#define MS_LB {{ lookback }}
#define MS_AGG 1u
#define MS_INCL 2u
// Run by one thread: the next tile number. The claimant of the last tile resets the counter,
// so it is zero for the next launch (the host zeroes it only once, at allocation).
__device__ __forceinline__ ms_u32 ms_take_tile(ms_u32* counter, ms_u32 num_tiles) {
    const ms_u32 t = atomicAdd(counter, 1u);
    if (t == num_tiles - 1) atomicExch(counter, 0u);
    return t;
}
// Thread 0 claims the block's tile number; every thread of the block returns it.
template <typename Smem>
__device__ __forceinline__ ms_u32 ms_claim_tile(ms_u32* counter, ms_u32 num_tiles, Smem& sm) {
    if (threadIdx.x == 0) sm.tile = ms_take_tile(counter, num_tiles);
    __syncthreads();
    return sm.tile;
}
// Each tile's state sits in its own slot of MS_SLOT bytes, whole 32-byte L2 sectors: the
// newest tiles publish while their successors poll them, and with 16 tiles to a 128-byte line
// those writes and polls crowd the same lines (on an H200, sum i32 runs at 0.853 of copy with
// states packed side by side, 0.89 with one per sector).
#define MS_SLOT {{ state_slot }}
template <typename T>
__device__ __forceinline__ T* ms_slot(T* st, ms_u32 tile) {
    return (T*)((const char*)st + (ms_u64)tile * MS_SLOT);
}
{% if layout == "packed64" %}
// Status and value in one 64-bit word (elements of at most 4 bytes): status in the high half.
typedef ms_u64 ms_state;
union ms_packed { ms_elem v; ms_u32 w; };
__device__ __forceinline__ void ms_publish(ms_state* st, ms_elem*, ms_elem*, ms_u32 tile, ms_u32 status, const ms_elem& v) {
    ms_packed u;
    u.w = 0;
    u.v = v;
    const ms_u64 word = ((ms_u64)status << 32) | u.w;
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(ms_slot(st, tile)), "l"(word) : "memory");
}
__device__ __forceinline__ ms_u32 ms_peek(const ms_state* st, const ms_elem*, const ms_elem*, ms_u32 tile, ms_elem& v) {
    ms_u64 word;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(ms_slot(st, tile)) : "memory");
    ms_packed u;
    u.w = (ms_u32)word;
    v = u.v;
    return (ms_u32)(word >> 32);
}
{% elif layout == "packed128" %}
// Status and value in one 128-bit word (elements of 5 to 8 bytes), accessed with single 128-bit
// relaxed loads and stores: value in the low 64 bits, status in the high.
struct alignas(16) ms_state { ms_u64 lo, hi; };
union ms_packed { ms_elem v; ms_u64 w; };
__device__ __forceinline__ void ms_publish(ms_state* st, ms_elem*, ms_elem*, ms_u32 tile, ms_u32 status, const ms_elem& v) {
    ms_packed u;
    u.w = 0;
    u.v = v;
    asm volatile("{ .reg .b128 t; mov.b128 t, { %1, %2}; st.relaxed.gpu.global.b128 [%0], t; }"
                 ::"l"(ms_slot(st, tile)), "l"(u.w), "l"((ms_u64)status) : "memory");
}
__device__ __forceinline__ ms_u32 ms_peek(const ms_state* st, const ms_elem*, const ms_elem*, ms_u32 tile, ms_elem& v) {
    ms_u64 lo, hi;
    asm volatile("{ .reg .b128 t; ld.relaxed.gpu.global.b128 t, [%2]; mov.b128 { %0, %1}, t; }"
                 : "=l"(lo), "=l"(hi) : "l"(ms_slot(st, tile)) : "memory");
    ms_packed u;
    u.w = lo;
    v = u.v;
    return (ms_u32)hi;
}
{% elif layout == "paired" %}
// Elements of 9 to 64 bytes: each tile owns MS_PIECES 128-bit words, each holding 8 bytes of the
// value beside a copy of the status, written and read with single 128-bit relaxed accesses.
// A reader accepts a value only when every piece carries the same status: each tile publishes
// AGG once and INCL once per epoch, so equal statuses mean all pieces come from one publish.
// All pieces are loaded independently, in one round trip.
#define MS_PIECES ((int)((sizeof(ms_elem) + 7) / 8))
struct alignas(16) ms_state { ms_u64 lo, hi; };
union ms_pieces { ms_elem v; ms_u64 w[MS_PIECES]; };
__device__ __forceinline__ void ms_publish(ms_state* st, ms_elem*, ms_elem*, ms_u32 tile, ms_u32 status, const ms_elem& v) {
    ms_pieces u;
#pragma unroll
    for (int k = 0; k < MS_PIECES; ++k) u.w[k] = 0;
    u.v = v;
    ms_state* base = ms_slot(st, tile);
#pragma unroll
    for (int k = 0; k < MS_PIECES; ++k) {
        asm volatile("{ .reg .b128 t; mov.b128 t, { %1, %2}; st.relaxed.gpu.global.b128 [%0], t; }"
                     ::"l"(base + k), "l"(u.w[k]), "l"((ms_u64)status) : "memory");
    }
}
__device__ __forceinline__ ms_u32 ms_peek(const ms_state* st, const ms_elem*, const ms_elem*, ms_u32 tile, ms_elem& v) {
    ms_pieces u;
    ms_u64 s[MS_PIECES];
    const ms_state* base = ms_slot(st, tile);
#pragma unroll
    for (int k = 0; k < MS_PIECES; ++k) {
        asm volatile("{ .reg .b128 t; ld.relaxed.gpu.global.b128 t, [%2]; mov.b128 { %0, %1}, t; }"
                     : "=l"(u.w[k]), "=l"(s[k]) : "l"(base + k) : "memory");
    }
    bool same = true;
#pragma unroll
    for (int k = 1; k < MS_PIECES; ++k) same = same && s[k] == s[0];
    v = u.v;
    return same ? (ms_u32)s[0] : 0u;
}
{% else %}
// Larger elements: a status word per tile, and the values in two separate arrays (aggregates,
// inclusive prefixes). The value is written first, then the status with release semantics;
// readers load the status with acquire semantics, then the value bypassing L1.
typedef ms_u32 ms_state;
__device__ __forceinline__ void ms_publish(ms_state* st, ms_elem* aggs, ms_elem* incls, ms_u32 tile, ms_u32 status, const ms_elem& v) {
    if ((status & 3u) == MS_AGG) aggs[tile] = v; else incls[tile] = v;
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(ms_slot(st, tile)), "r"(status) : "memory");
}
__device__ __forceinline__ ms_u32 ms_peek(const ms_state* st, const ms_elem* aggs, const ms_elem* incls, ms_u32 tile, ms_elem& v) {
    ms_u32 status;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(status) : "l"(ms_slot(st, tile)) : "memory");
    const ms_elem* src = (status & 3u) == MS_AGG ? aggs + tile : incls + tile;
    ms_words u;
#pragma unroll
    for (int k = 0; k < MS_WORDS; ++k) {
        asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(u.w[k]) : "l"((const ms_u32*)src + k) : "memory");
    }
    v = u.v;
    return status;
}
{% endif %}
// Run by warp 0 of tile `tile` once its aggregate is known: publishes the aggregate, looks back
// over the preceding tiles a warp-wide window at a time until it meets an inclusive prefix,
// publishes the tile's own inclusive prefix and returns (in lane 0) the tile's exclusive prefix,
// seeded with init. The last tile writes the total to *total_out.
{% if absorbing %}//
// The operator is a segmented lifting (the row kernels), whose elements with the flag set
// absorb whatever precedes them: an aggregate with its flag set (a row starts in the tile) is
// already the tile's inclusive prefix, so the tile publishes it as such at once and its
// successors stop there, and a tile whose first element starts a row (`fresh`) needs no prefix
// and does not look back. A window's lanes wait only for the tiles up to the nearest inclusive
// prefix among them, not for the whole window.
{% endif %}__device__ __forceinline__ ms_elem ms_lookback(ms_u32 tile, const ms_elem& aggregate, ms_u32 num_tiles,
                                              ms_state* state, ms_elem* aggs, ms_elem* incls, ms_u32 epoch,
                                              ms_elem init, int has_init, ms_elem* total_out{% if absorbing %},
                                              bool fresh{% endif %}) {
    const unsigned lane = threadIdx.x & 31;
    ms_elem prefix = has_init ? init : MsOp::identity();
{% if absorbing %}    const bool absorbs = aggregate.flag != 0;
    if (tile > 0 && absorbs && lane == 0) {
        ms_publish(state, aggs, incls, tile, (epoch << 2) | MS_INCL, aggregate);
    }
    if (tile > 0 && !(fresh && absorbs)) {
        if (lane == 0 && !absorbs) ms_publish(state, aggs, incls, tile, (epoch << 2) | MS_AGG, aggregate);
{% else %}    if (tile > 0) {
        if (lane == 0) ms_publish(state, aggs, incls, tile, (epoch << 2) | MS_AGG, aggregate);
{% endif %}        // Each step inspects MS_LB predecessors per lane (a window of 32 * MS_LB tiles):
        // lane l owns tiles end-1-l*MS_LB-p, p = 0 (nearest) .. MS_LB-1, all loaded at once.
        ms_i64 end = tile;
        bool have = false;
        ms_elem acc = prefix;
        while (true) {
            ms_elem v[MS_LB];
            ms_u32 kind[MS_LB];
            bool valid[MS_LB];
#pragma unroll
            for (int p = 0; p < MS_LB; ++p) {
                const ms_i64 pred = end - 1 - (ms_i64)(lane * MS_LB + p);
                v[p] = MsOp::identity();
                kind[p] = MS_INCL;
                valid[p] = pred < 0;
                if (pred >= 0) {
                    const ms_u32 status = ms_peek(state, aggs, incls, (ms_u32)pred, v[p]);
                    valid[p] = (status >> 2) == epoch;
                    kind[p] = status & 3u;
                }
            }
            for (int spins = 0;; ++spins) {
                bool all = true;
#pragma unroll
                for (int p = 0; p < MS_LB; ++p) all = all && valid[p];
{% if absorbing %}                bool incl = false;
#pragma unroll
                for (int p = 0; p < MS_LB; ++p) incl = incl || (valid[p] && kind[p] == MS_INCL);
                // Every lane up to the nearest one holding an inclusive prefix must be ready.
                const unsigned ready = __ballot_sync(MS_FULL, all);
                const unsigned found = __ballot_sync(MS_FULL, incl);
                const unsigned need = found ? (found ^ (found - 1)) : MS_FULL;
                if ((ready & need) == need) break;
{% else %}                if (all) break;
{% endif %}                if (spins > 4) __nanosleep(spins < 64 ? 20 : 200);
#pragma unroll
                for (int p = 0; p < MS_LB; ++p) {
                    if (!valid[p]) {
                        const ms_i64 pred = end - 1 - (ms_i64)(lane * MS_LB + p);
                        const ms_u32 status = ms_peek(state, aggs, incls, (ms_u32)pred, v[p]);
                        valid[p] = (status >> 2) == epoch;
                        kind[p] = status & 3u;
                    }
                }
            }
            int first = MS_LB;  // this lane's nearest inclusive prefix
#pragma unroll
            for (int p = MS_LB - 1; p >= 0; --p) {
                if (kind[p] == MS_INCL) first = p;
            }
            const ms_u32 incl_mask = __ballot_sync(MS_FULL, first < MS_LB);
            const int stop = incl_mask ? __ffs(incl_mask) - 1 : 31;
            // Fold this lane's tiles, earliest first, up to the nearest inclusive prefix (the
            // first one taken as it is, not combined with the identity).
            ms_elem x = MsOp::identity();
            bool any = false;
#pragma unroll
            for (int p = MS_LB - 1; p >= 0; --p) {
                if ((int)lane < stop || ((int)lane == stop && p <= first)) {
                    x = any ? MsOp::combine(x, v[p]) : v[p];
                    any = true;
                }
            }
            // Earlier tiles sit at higher lanes: fold them first. Lanes past `stop` hold the
            // identity, so only the steps that reach lane `stop` from lane 0 run: none where the
            // nearest predecessor holds an inclusive prefix, five for a window without one.
            MS_STEP_UNROLL
            for (unsigned d = 1; d <= (unsigned)stop; d <<= 1) {
                const ms_elem y = ms_shfl_down(x, d);
                if (lane + d < 32) x = MsOp::combine_ilp(y, x);
            }
            acc = have ? MsOp::combine(x, acc) : x;
            have = true;
            if (incl_mask) break;
            end -= 32 * MS_LB;
        }
        // The window that met an inclusive prefix already includes init (via tile 0).
        prefix = acc;
    }
    if (lane == 0) {
        const ms_elem inclusive = (tile > 0 || has_init) ? MsOp::combine(prefix, aggregate) : aggregate;
{% if absorbing %}        if (tile == 0 || !absorbs) ms_publish(state, aggs, incls, tile, (epoch << 2) | MS_INCL, inclusive);
{% else %}        ms_publish(state, aggs, incls, tile, (epoch << 2) | MS_INCL, inclusive);
{% endif %}        if (total_out != 0 && tile == num_tiles - 1) *total_out = inclusive;
    }
    return prefix;
}
