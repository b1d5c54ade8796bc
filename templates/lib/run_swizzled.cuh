// ---- A staged tile in the swizzled layout: elements of 1 to 128 bytes whose size is a power
// of two; each thread's run a power-of-two number of 16-byte chunks ----
// Chunk c of the tile lives at ms_swz(c). A group is the smallest whole number of chunks that
// holds whole elements: one chunk of MS_GROUP_ELEMS elements of up to 16 bytes, or
// MS_GROUP_CHUNKS chunks of one larger element. Every chunk of a thread's run (and of an
// element) is read and written with one 16-byte access at its swizzled place, so the eight
// threads of a quarter-warp phase touch eight distinct bank groups.
#define MS_TILE_CHUNKS ((int)(MS_TILE * sizeof(ms_elem) / 16))
#define MS_THREAD_CHUNKS ((int)(MS_ITEMS * sizeof(ms_elem) / 16))
#define MS_GROUP_CHUNKS ((int)(sizeof(ms_elem) > 16 ? sizeof(ms_elem) / 16 : 1))
#define MS_GROUP_ELEMS ((int)(sizeof(ms_elem) >= 16 ? 1 : 16 / sizeof(ms_elem)))
#define MS_THREAD_GROUPS (MS_THREAD_CHUNKS / MS_GROUP_CHUNKS)
static_assert((sizeof(ms_elem) & (sizeof(ms_elem) - 1)) == 0 && sizeof(ms_elem) <= 128 &&
                  (MS_ITEMS * sizeof(ms_elem)) % 16 == 0,
              "monoscan: swizzled tiles need elements of a power-of-two size up to 128 bytes and whole chunks per thread");
template <typename In>
union ms_group {
    ms_chunk_bits c[MS_GROUP_CHUNKS];
    In e[MS_GROUP_ELEMS];
};
// Group j of this thread's run (in logical order: see MS_REVERSE).
template <typename In>
__device__ __forceinline__ ms_group<In> ms_group_get(const ms_chunk_bits* buf, int j) {
    ms_group<In> g;
#pragma unroll
    for (int k = 0; k < MS_GROUP_CHUNKS; ++k) {
        g.c[k] = buf[ms_swz(ms_run_owner() * MS_THREAD_CHUNKS + MS_RUN_GROUP(j) * MS_GROUP_CHUNKS + k)];
    }
    return g;
}
__device__ __forceinline__ void ms_group_put(ms_chunk_bits* buf, int j, const ms_group<ms_elem>& g) {
#pragma unroll
    for (int k = 0; k < MS_GROUP_CHUNKS; ++k) {
        buf[ms_swz(ms_run_owner() * MS_THREAD_CHUNKS + MS_RUN_GROUP(j) * MS_GROUP_CHUNKS + k)] = g.c[k];
    }
}
{% if chains == 1 %}#define MS_RUN_PARTS 1
// A widening input map (a staged scan whose map reads In narrower than ms_elem): the tile's
// inputs, MS_TILE of In, are staged at the front of the buffer, chunk c at ms_swz_in(c), and a
// thread's run of inputs is MS_ITEMS * sizeof(In) / 16 chunks of physical run ms_run_owner().
// The results fill the whole buffer in the elements' layout, so the scan pass takes its run's
// inputs into registers, and every thread has done so before any writes results over them.
template <typename In>
struct ms_in_run {
    static constexpr int CHUNKS = (int)(MS_ITEMS * sizeof(In) / 16);
    static_assert(CHUNKS >= 1 && (MS_ITEMS * sizeof(In)) % 16 == 0,
                  "monoscan: a widening map's run of inputs is whole 16-byte chunks");
    union {
        ms_chunk_bits c[CHUNKS];
        In e[MS_ITEMS];
    } v;
    __device__ __forceinline__ void load(const ms_chunk_bits* buf) {
#pragma unroll
        for (int k = 0; k < CHUNKS; ++k) v.c[k] = buf[ms_swz_in(ms_run_owner() * CHUNKS + k)];
    }
    // Logical item i of the run (see MS_REVERSE).
    __device__ __forceinline__ const In& at(int i) const { return v.e[MS_REVERSE ? MS_ITEMS - 1 - i : i]; }
};
// This thread's run (MS_ITEMS elements from item `first` of the tile), folded in order through
// Map; items at or past `valid` count as the identity. parts[0] gets the fold.
template <typename Map>
__device__ __forceinline__ void ms_run_fold(const ms_chunk_bits* buf, bool full, ms_u64 valid, ms_elem (&parts)[1]) {
    typedef typename Map::in_t in_t;
    const int first = threadIdx.x * MS_ITEMS;
    ms_elem acc = MsOp::identity();
    if constexpr (sizeof(in_t) != sizeof(ms_elem)) {
        ms_in_run<in_t> r;
        r.load(buf);
#pragma unroll
        for (int i = 0; i < MS_ITEMS; ++i) {
            const ms_elem x = (full || ms_physical(first + i) < valid) ? Map::apply(r.at(i)) : MsOp::identity();
            acc = i == 0 ? x : MsOp::combine_ilp(acc, x);
        }
        parts[0] = acc;
        return;
    }
#if MS_ITEMS > MS_FOLD_UNROLLED_TAIL && defined(MS_ROLLED_PARTIAL_FOLD)
    // The last, partial tile a group at a time (see MS_FOLD_UNROLLED_TAIL), in kernels that
    // ask for it (MS_ROLLED_PARTIAL_FOLD: the staged reduce, whose registers no residency
    // bound caps; under the staged scan's caps of 32 registers this form spilled); full tiles
    // below.
    if (!full) {
#pragma unroll 1
        for (int j = 0; j < MS_THREAD_GROUPS; ++j) {
            const ms_group<in_t> g = ms_group_get<in_t>(buf, j);
#pragma unroll
            for (int e = 0; e < MS_GROUP_ELEMS; ++e) {
                const int idx = first + j * MS_GROUP_ELEMS + e;
                const ms_elem x = ms_physical(idx) < valid ? Map::apply(g.e[MS_IN_GROUP(e)]) : MsOp::identity();
                acc = (j == 0 && e == 0) ? x : MsOp::combine_ilp(acc, x);
            }
        }
        parts[0] = acc;
        return;
    }
#endif
    // Unrolled for a combine inlined everywhere; rolled, with one inlined copy of the combine
    // per element of a group and no call, for an outlined one.
    MS_STEP_UNROLL
    for (int j = 0; j < MS_THREAD_GROUPS; ++j) {
        const ms_group<in_t> g = ms_group_get<in_t>(buf, j);
#pragma unroll
        for (int e = 0; e < MS_GROUP_ELEMS; ++e) {
            const int idx = first + j * MS_GROUP_ELEMS + e;
            const ms_elem x = (full || ms_physical(idx) < valid) ? Map::apply(g.e[MS_IN_GROUP(e)]) : MsOp::identity();
            acc = (j == 0 && e == 0) ? x : MsOp::combine_ilp(acc, x);
        }
    }
    parts[0] = acc;
}
// One element of a run's scan: `run` before `x` (exclusive) or after it (inclusive) into
// `slot`, and `run` moves past `x`.
__device__ __forceinline__ void ms_run_step(ms_elem& run, const ms_elem& x, int exclusive, ms_elem& slot) {
    if (exclusive) {
        slot = run;
        run = MsOp::combine_ilp(run, x);
    } else {
        run = MsOp::combine_ilp(run, x);
        slot = run;
    }
}
// Scans this thread's run in place from `run` (the buffer then holds results, as ms_elem;
// through a widening map, after the barrier every thread reaches once it holds its inputs).
// Items past the data are the identity in reverse, where they come first; forwards they come
// last and their results are not stored.
template <typename Map>
__device__ __forceinline__ void ms_run_scan(ms_chunk_bits* buf, ms_elem run, const ms_elem (&)[1], int exclusive,
                                            bool full, ms_u64 valid) {
    typedef typename Map::in_t in_t;
    const int first = threadIdx.x * MS_ITEMS;
    if constexpr (sizeof(in_t) != sizeof(ms_elem)) {
        ms_in_run<in_t> r;
        r.load(buf);
        __syncthreads();
#pragma unroll
        for (int j = 0; j < MS_THREAD_GROUPS; ++j) {
            ms_group<ms_elem> res;
#pragma unroll
            for (int e = 0; e < MS_GROUP_ELEMS; ++e) {
                const int i = j * MS_GROUP_ELEMS + e;
                const bool in_data = !MS_REVERSE || full || ms_physical(first + i) < valid;
                const ms_elem x = in_data ? Map::apply(r.at(i)) : MsOp::identity();
                ms_run_step(run, x, exclusive, res.e[MS_IN_GROUP(e)]);
            }
            ms_group_put(buf, j, res);
        }
        return;
    }
    MS_STEP_UNROLL
    for (int j = 0; j < MS_THREAD_GROUPS; ++j) {
        const ms_group<in_t> g = ms_group_get<in_t>(buf, j);
        ms_group<ms_elem> res;
#pragma unroll
        for (int e = 0; e < MS_GROUP_ELEMS; ++e) {
            const int idx = first + j * MS_GROUP_ELEMS + e;
            const bool in_data = !MS_REVERSE || full || ms_physical(idx) < valid;
            const ms_elem x = in_data ? Map::apply(g.e[MS_IN_GROUP(e)]) : MsOp::identity();
            ms_run_step(run, x, exclusive, res.e[MS_IN_GROUP(e)]);
        }
        ms_group_put(buf, j, res);
    }
}
{% else %}{% include "lib/run_chains.cuh" %}
{% endif %}// Stores the first `valid` elements of the tile to `out`: 16-byte chunks, coalesced, for a
// full tile; element by element for the last, partial one.
__device__ __forceinline__ void ms_run_store(ms_elem* out, const ms_chunk_bits* buf, bool full, ms_u64 valid) {
    if (full) {
        ms_chunk_bits* dst = (ms_chunk_bits*)out;
#pragma unroll
        for (int k = 0; k < MS_THREAD_CHUNKS; ++k) {
            const int c = k * MS_BLOCK + threadIdx.x;
            dst[c] = buf[ms_swz(c)];
        }
    } else if (sizeof(ms_elem) <= 16) {
        for (ms_u64 e = threadIdx.x; e < valid; e += MS_BLOCK) {
            const ms_group<ms_elem>* g = (const ms_group<ms_elem>*)(buf + ms_swz((int)(e / MS_GROUP_ELEMS)));
            out[e] = g->e[e % MS_GROUP_ELEMS];
        }
    } else {
        // Each chunk of each element, from its swizzled place.
        ms_chunk_bits* dst = (ms_chunk_bits*)out;
        const ms_u64 chunks = valid * MS_GROUP_CHUNKS;
        for (ms_u64 c = threadIdx.x; c < chunks; c += MS_BLOCK) dst[c] = buf[ms_swz((int)c)];
    }
}
