// ---- A thread's run folded and scanned as MS_CHAINS chains ----
// The run of MS_ITEMS items splits into MS_CHAINS consecutive parts of MS_CHAIN_ITEMS items.
// The fold keeps one accumulator per part and steps all parts together, so that MS_CHAINS
// combines without a dependency between them are in flight at once instead of one long chain
// (for an expensive combine, whose latency a chain would wait out combine after combine).
// Order is kept: each part is folded in order, and the parts are combined earliest first. The
// scan starts each part from its own prefix (the run's prefix combined with the totals of the
// parts before it: MS_CHAINS - 1 more combines per thread) and again steps the parts together.
// The stepping loop calls the combine inlined (MsOp::combine_ilp). With more than one chain it
// is not unrolled: MS_CHAINS copies of the combine per loop, which keeps both the code and its
// compile time small while the copies' instructions interleave. With one chain it is unrolled
// for a combine that is inlined everywhere and rolled for an outlined one (MS_STEP_UNROLL):
// one inlined copy, no call per element. Reads and writes go a group (the layout's unit of
// whole elements) at a time through ms_group_get and ms_group_put.
#define MS_CHAINS {{ chains }}
#define MS_RUN_PARTS MS_CHAINS
#define MS_CHAIN_ITEMS (MS_ITEMS / MS_CHAINS)
#define MS_CHAIN_GROUPS (MS_CHAIN_ITEMS / MS_GROUP_ELEMS)
static_assert(MS_CHAINS >= 1 && MS_ITEMS % MS_CHAINS == 0 && MS_CHAIN_ITEMS % MS_GROUP_ELEMS == 0,
              "monoscan: a run splits into whole chains of whole groups");
#define MS_CHAIN_COMBINE MsOp::combine_ilp
{% if chains == 1 %}#define MS_CHAIN_UNROLL MS_STEP_UNROLL
{% else %}#define MS_CHAIN_UNROLL _Pragma("unroll 1")
{% endif %}// Step s of the fold: group s of every part, combined into parts[c]. Where `full` is false,
// items at or past `valid` of the tile count as the identity.
template <typename Map>
__device__ __forceinline__ void ms_run_fold_step(const ms_chunk_bits* buf, int s, bool full, ms_u64 valid,
                                                 ms_elem (&parts)[MS_CHAINS]) {
    typedef typename Map::in_t in_t;
    const ms_u64 first = (ms_u64)threadIdx.x * MS_ITEMS;
#pragma unroll
    for (int c = 0; c < MS_CHAINS; ++c) {
        const int j = c * MS_CHAIN_GROUPS + s;
        const ms_group<in_t> g = ms_group_get<in_t>(buf, j);
#pragma unroll
        for (int e = 0; e < MS_GROUP_ELEMS; ++e) {
            const int i = j * MS_GROUP_ELEMS + e;
            const ms_elem x = (full || ms_physical(first + i) < valid) ? Map::apply(g.e[MS_IN_GROUP(e)])
                                                                      : MsOp::identity();
            parts[c] = (s == 0 && e == 0) ? x : MS_CHAIN_COMBINE(parts[c], x);
        }
    }
}
// Folds this thread's run (items at or past `valid` of the tile count as the identity) into
// parts[c], the total of part c, the last, partial tile a step at a time in runs of more than
// MS_FOLD_UNROLLED_TAIL items.
template <typename Map>
__device__ __forceinline__ void ms_run_fold(const ms_chunk_bits* buf, bool full, ms_u64 valid,
                                            ms_elem (&parts)[MS_CHAINS]) {
#if MS_ITEMS > MS_FOLD_UNROLLED_TAIL
    if (full) {
        MS_CHAIN_UNROLL
        for (int s = 0; s < MS_CHAIN_GROUPS; ++s) ms_run_fold_step<Map>(buf, s, true, valid, parts);
    } else {
#pragma unroll 1
        for (int s = 0; s < MS_CHAIN_GROUPS; ++s) ms_run_fold_step<Map>(buf, s, false, valid, parts);
    }
#else
    // The step written out rather than called as ms_run_fold_step: called, it compiled the
    // capped 16-byte 384 x 7 scan with a spill.
    typedef typename Map::in_t in_t;
    const ms_u64 first = (ms_u64)threadIdx.x * MS_ITEMS;
    MS_CHAIN_UNROLL
    for (int s = 0; s < MS_CHAIN_GROUPS; ++s) {
#pragma unroll
        for (int c = 0; c < MS_CHAINS; ++c) {
            const int j = c * MS_CHAIN_GROUPS + s;
            const ms_group<in_t> g = ms_group_get<in_t>(buf, j);
#pragma unroll
            for (int e = 0; e < MS_GROUP_ELEMS; ++e) {
                const int i = j * MS_GROUP_ELEMS + e;
                const ms_elem x = (full || ms_physical(first + i) < valid) ? Map::apply(g.e[MS_IN_GROUP(e)])
                                                                          : MsOp::identity();
                parts[c] = (s == 0 && e == 0) ? x : MS_CHAIN_COMBINE(parts[c], x);
            }
        }
    }
#endif
}
// Scans this thread's run in place from `run`, given the parts' totals from ms_run_fold (the
// buffer then holds results, as ms_elem). Items past the data are the identity in reverse,
// where they come first; forwards they come last and their results are not stored.
template <typename Map>
__device__ __forceinline__ void ms_run_scan(ms_chunk_bits* buf, ms_elem run, const ms_elem (&parts)[MS_CHAINS],
                                            int exclusive, bool full, ms_u64 valid) {
    typedef typename Map::in_t in_t;
    const ms_u64 first = (ms_u64)threadIdx.x * MS_ITEMS;
    ms_elem runs[MS_CHAINS];
    runs[0] = run;
#pragma unroll
    for (int c = 1; c < MS_CHAINS; ++c) runs[c] = MsOp::combine_ilp(runs[c - 1], parts[c - 1]);
    MS_CHAIN_UNROLL
    for (int s = 0; s < MS_CHAIN_GROUPS; ++s) {
#pragma unroll
        for (int c = 0; c < MS_CHAINS; ++c) {
            const int j = c * MS_CHAIN_GROUPS + s;
            const ms_group<in_t> g = ms_group_get<in_t>(buf, j);
            ms_group<ms_elem> res;
#pragma unroll
            for (int e = 0; e < MS_GROUP_ELEMS; ++e) {
                const bool in_data = !MS_REVERSE || full || ms_physical(first + j * MS_GROUP_ELEMS + e) < valid;
                const ms_elem x = in_data ? Map::apply(g.e[MS_IN_GROUP(e)]) : MsOp::identity();
                if (exclusive) {
                    res.e[MS_IN_GROUP(e)] = runs[c];
                    runs[c] = MS_CHAIN_COMBINE(runs[c], x);
                } else {
                    runs[c] = MS_CHAIN_COMBINE(runs[c], x);
                    res.e[MS_IN_GROUP(e)] = runs[c];
                }
            }
            ms_group_put(buf, j, res);
        }
    }
}
